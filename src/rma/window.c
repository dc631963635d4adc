/*
 * window.c — windows: the table that frames name them by, their collective creation (one
 * exchange of a record per member, then an agreement on success), the shared heap segment of the
 * members of one host, the executable's data segment as a window, the deterministic symmetric
 * allocator, and the one-sided world group.
 *
 * Heap windows (waitio_win_allocate): the members of one host that can share memory (same host
 * id, both offer shm, WAITIO_RMA_DIRECT not 0) keep their parts in one POSIX shared-memory
 * segment, created by the first of them in group order (0600, posix_fallocate'd so that a full
 * /dev/shm fails here and not with SIGBUS later), mapped by the others from the name in its
 * record, and unlinked once everyone agreed that all mapped. The name has the form shm_ring.c
 * sweeps ("/waitio-<uid>-<pid>-n<pid namespace>-..."), so a segment whose creator died before the unlink is
 * removed by the next WaitIO process of the user.
 */
#define WIO_LOG_SUBSYS WIO_SUB_RMA /* this file logs as "rma" (WAITIO_LOG=rma=LEVEL) */
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "coll/coll.h"
#include "coll/datatype.h"
#include "core/api_lock.h"
#include "core/auth.h"
#include "gpu/gpu.h"
#include "rma/rma.h"
#include "transport/shm_ring.h"

#define REC_SIZE 112
#define NAME_MAX_LEN 64
#define REC_HAS_SEGMENT 0x1u
#define REC_DEVICE 0x2u /* the member's part is device memory */
#define REC_IPC 0x4u    /* ... exported through CUDA IPC: handle at 40, offset in it at 32 */
#define MIN_ALIGN 16

/* ---- the table ----------------------------------------------------------------------------- */

static int table_add(wio_rma *r, struct waitio_win *w)
{
    uint32_t slot = 0;
    while (slot < r->nslots && r->wins[slot])
        slot++;
    if (slot == r->nslots) {
        if (r->nslots >= 0xffff)
            return wio_fail(WAITIO_ERR_NOMEM, "too many windows (65535)");
        uint32_t n = r->nslots ? r->nslots * 2 : 8;
        struct waitio_win **wins = realloc(r->wins, n * sizeof *wins);
        if (!wins)
            return wio_fail(WAITIO_ERR_NOMEM, "out of memory for the window table");
        r->wins = wins;
        uint16_t *gens = realloc(r->gens, n * sizeof *gens);
        if (!gens)
            return wio_fail(WAITIO_ERR_NOMEM, "out of memory for the window table");
        r->gens = gens;
        for (uint32_t i = r->nslots; i < n; i++) {
            r->wins[i] = NULL;
            r->gens[i] = 0;
        }
        r->nslots = n;
    }
    if (++r->gens[slot] == 0)
        r->gens[slot] = 1;
    r->wins[slot] = w;
    w->id = slot | ((uint32_t)r->gens[slot] << 16);
    return 0;
}

static void table_remove(wio_rma *r, struct waitio_win *w)
{
    uint32_t slot = w->id & 0xffff;
    if (slot < r->nslots && r->wins[slot] == w)
        r->wins[slot] = NULL;
}

/* The window a frame names, if process pid is one of its members. */
struct waitio_win *wio_win_lookup(wio_rma *r, uint32_t id, uint32_t pid)
{
    uint32_t slot = id & 0xffff;
    if (slot >= r->nslots)
        return NULL;
    struct waitio_win *w = r->wins[slot];
    if (!w || w->id != id || !(w->allowed[pid >> 3] & (1u << (pid & 7))))
        return NULL;
    return w;
}

int wio_win_check_rank(struct waitio_win *w, int rank)
{
    if (rank < 0 || rank >= w->g->size)
        return wio_fail(WAITIO_ERR_GROUP, "rank %d is outside the window's group (size %d)", rank, w->g->size);
    return 0;
}

/* ---- the executable's data segment --------------------------------------------------------- */

/* What the data window exposes: the executable's own .data and .bss (and the small-data sections
 * .sdata/.sbss/.data1 of the ABIs that have them), from the lowest of them to the end of the
 * highest, found in the section headers of /proc/self/exe. Inside that range, holes that no
 * access may touch: every other section lying there (.got.plt when the linker puts it between
 * .data and .bss, .tm_clone_table, a user's named section...), the objects of shared libraries
 * copied into the executable's .bss by copy relocations (the C library's stdout, stderr,
 * environ...: their values are the library's pointers), anything in PT_GNU_RELRO and anything not
 * in a writable PT_LOAD. Computed once; anything unexpected in the file leaves the window empty
 * (fail closed): a window that exposes too much lets a member rewrite a GOT slot. */

#define MAX_HOLES 256
#define MAX_SHNUM 0xff00u               /* extended section numbering is not expected here */
#define MAX_TABLE_BYTES (64u << 20)     /* a string, symbol or relocation table read */

typedef struct data_hole {
    size_t off, len;                    /* from the start of the range */
} data_hole;

typedef struct data_seg {
    uintptr_t start;
    size_t size;
    uint64_t image;
    data_hole holes[MAX_HOLES];
    size_t nholes;
} data_seg;

static data_seg data_layout;
static int data_layout_state;           /* 0: not computed, 1: computed */

#if UINTPTR_MAX > 0xffffffffu
#define WIO_R_TYPE ELF64_R_TYPE
#define WIO_R_SYM ELF64_R_SYM
#define WIO_ST_TYPE ELF64_ST_TYPE
#else
#define WIO_R_TYPE ELF32_R_TYPE
#define WIO_R_SYM ELF32_R_SYM
#define WIO_ST_TYPE ELF32_ST_TYPE
#endif

/* The copy relocation of this architecture (a library's object copied into the executable). */
#if defined(__x86_64__)
#define WIO_R_COPY R_X86_64_COPY
#elif defined(__i386__)
#define WIO_R_COPY R_386_COPY
#elif defined(__aarch64__)
#define WIO_R_COPY R_AARCH64_COPY
#elif defined(__arm__)
#define WIO_R_COPY R_ARM_COPY
#elif defined(__powerpc64__)
#define WIO_R_COPY R_PPC64_COPY
#elif defined(__powerpc__)
#define WIO_R_COPY R_PPC_COPY
#elif defined(__riscv)
#define WIO_R_COPY R_RISCV_COPY
#elif defined(__s390x__) || defined(__s390__)
#define WIO_R_COPY R_390_COPY
#endif

static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* The build id note (NT_GNU_BUILD_ID) of the program, hashed; 0 if it has none. */
static uint64_t build_id(const struct dl_phdr_info *info)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)(const void *)p;
            size_t name = (n->n_namesz + 3) & ~(size_t)3, desc = (n->n_descsz + 3) & ~(size_t)3;
            const uint8_t *d = p + sizeof *n + name;
            if (d + desc > end)
                break;
            if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && !memcmp(p + sizeof *n, "GNU", 4))
                return fnv1a(0xcbf29ce484222325ull, d, n->n_descsz);
            p = d + desc;
        }
    }
    return 0;
}

/* The executable file being parsed and the running image it must describe. */
typedef struct elf_file {
    int fd;
    uint64_t fsize;
    const struct dl_phdr_info *info;
    ElfW(Shdr) *sh;
    size_t shnum;
    char *names;                         /* the section name table, NUL-terminated */
    size_t names_len;
    uintptr_t lo, hi;                    /* the range (run-time addresses) */
    uintptr_t holes[MAX_HOLES][2];       /* [start, end), run-time addresses, unsorted */
    size_t nholes;
    const char *why;                     /* why the window is empty */
} elf_file;

/* Reads len bytes at off of the file into a fresh buffer (one extra NUL byte); NULL when the
 * range is not inside the file or too large. */
static void *elf_read(elf_file *f, uint64_t off, uint64_t len)
{
    if (len > MAX_TABLE_BYTES || off > f->fsize || len > f->fsize - off) {
        f->why = "a table lies outside the file or is too large";
        return NULL;
    }
    char *p = malloc((size_t)len + 1);
    if (!p) {
        f->why = "out of memory";
        return NULL;
    }
    size_t got = 0;
    while (got < len) {
        ssize_t n = pread(f->fd, p + got, (size_t)len - got, (off_t)(off + got));
        if (n <= 0) {
            free(p);
            f->why = "cannot read the executable";
            return NULL;
        }
        got += (size_t)n;
    }
    p[len] = 0;
    return p;
}

static const char *sec_name(const elf_file *f, const ElfW(Shdr) *s)
{
    return s->sh_name < f->names_len ? f->names + s->sh_name : "";
}

/* The file's header, its program headers equal to the running image's (so the file is the image
 * that runs, not one put in its place since), its section headers and their names. */
static int elf_open(elf_file *f)
{
    ElfW(Ehdr) eh;
    int cls = sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32;
    if (f->fsize < sizeof eh || pread(f->fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh ||
        memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != cls) {
        f->why = "not an ELF file of this class";
        return -1;
    }
    if (eh.e_phentsize != sizeof(ElfW(Phdr)) || eh.e_phnum != f->info->dlpi_phnum ||
        eh.e_shentsize != sizeof(ElfW(Shdr)) || eh.e_shnum == 0 || eh.e_shnum > MAX_SHNUM ||
        eh.e_shstrndx == SHN_UNDEF || eh.e_shstrndx >= eh.e_shnum) {
        f->why = "unexpected ELF header";
        return -1;
    }
    size_t phlen = (size_t)eh.e_phnum * sizeof(ElfW(Phdr));
    void *ph = elf_read(f, eh.e_phoff, phlen);
    if (!ph)
        return -1;
    int same = memcmp(ph, f->info->dlpi_phdr, phlen) == 0;
    free(ph);
    if (!same) {
        f->why = "the file's program headers differ from the running image's (replaced since exec?)";
        return -1;
    }
    f->shnum = eh.e_shnum;
    f->sh = elf_read(f, eh.e_shoff, (uint64_t)f->shnum * sizeof(ElfW(Shdr)));
    if (!f->sh)
        return -1;
    const ElfW(Shdr) *ns = &f->sh[eh.e_shstrndx];
    if (ns->sh_type != SHT_STRTAB) {
        f->why = "no section name table";
        return -1;
    }
    f->names = elf_read(f, ns->sh_offset, ns->sh_size);
    f->names_len = f->names ? (size_t)ns->sh_size : 0;
    return f->names ? 0 : -1;
}

/* A section of the program's own data: .data, .bss and the small-data variants. */
static int is_data_section(const elf_file *f, const ElfW(Shdr) *s)
{
    static const char *const names[] = {".data", ".bss", ".data1", ".sdata", ".sbss"};
    if ((s->sh_type != SHT_PROGBITS && s->sh_type != SHT_NOBITS) || !s->sh_size ||
        (s->sh_flags & (SHF_ALLOC | SHF_WRITE | SHF_TLS)) != (SHF_ALLOC | SHF_WRITE))
        return 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(sec_name(f, s), names[i]) == 0)
            return 1;
    return 0;
}

/* Run-time address range of a section, 0 if it wraps. */
static int sec_range(const elf_file *f, const ElfW(Shdr) *s, uintptr_t *a, uintptr_t *b)
{
    uintptr_t start = f->info->dlpi_addr + (uintptr_t)s->sh_addr;
    if (s->sh_size > UINTPTR_MAX - start)
        return 0;
    *a = start;
    *b = start + (uintptr_t)s->sh_size;
    return 1;
}

static int add_hole(elf_file *f, uintptr_t a, uintptr_t b)
{
    if (a < f->lo)
        a = f->lo;
    if (b > f->hi)
        b = f->hi;
    if (a >= b)
        return 0;
    if (f->nholes == MAX_HOLES) {
        f->why = "too many holes in the data range";
        return -1;
    }
    f->holes[f->nholes][0] = a;
    f->holes[f->nholes][1] = b;
    f->nholes++;
    return 0;
}

/* The range spans the data sections; every other allocated section inside it is a hole (TLS
 * templates of .tbss take no address space and are skipped). */
static int data_sections(elf_file *f)
{
    f->lo = UINTPTR_MAX;
    f->hi = 0;
    for (size_t i = 1; i < f->shnum; i++) {
        uintptr_t a, b;
        if (!is_data_section(f, &f->sh[i]))
            continue;
        if (!sec_range(f, &f->sh[i], &a, &b)) {
            f->why = "a data section wraps around";
            return -1;
        }
        if (a < f->lo)
            f->lo = a;
        if (b > f->hi)
            f->hi = b;
    }
    if (f->hi <= f->lo) {
        f->why = "the executable has no .data or .bss";
        return -1;
    }
    for (size_t i = 1; i < f->shnum; i++) {
        const ElfW(Shdr) *s = &f->sh[i];
        uintptr_t a, b;
        if (is_data_section(f, s) || !(s->sh_flags & SHF_ALLOC) || !s->sh_size ||
            ((s->sh_flags & SHF_TLS) && s->sh_type == SHT_NOBITS))
            continue;
        if (!sec_range(f, s, &a, &b) || add_hole(f, a, b) != 0)
            return -1;
    }
    return 0;
}

/* The writable PT_LOAD that holds address a, else the lowest one above it: its [start, end),
 * or start = UINTPTR_MAX when there is none. */
static void writable_at(const struct dl_phdr_info *info, uintptr_t a, uintptr_t *start, uintptr_t *end)
{
    *start = UINTPTR_MAX;
    *end = UINTPTR_MAX;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t s = info->dlpi_addr + ph->p_vaddr, e = s + ph->p_memsz;
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W) || e <= a)
            continue;
        if (s <= a) {
            *start = s;
            *end = e;
            return;
        }
        if (s < *start) {
            *start = s;
            *end = e;
        }
    }
}

/* Whatever of the range the loader made read-only after relocation (PT_GNU_RELRO) or did not
 * map writable (outside every writable PT_LOAD) is a hole: a remote access never faults. */
static int segment_holes(elf_file *f)
{
    const struct dl_phdr_info *info = f->info;
    for (uintptr_t cur = f->lo; cur < f->hi;) {
        uintptr_t s, e;
        writable_at(info, cur, &s, &e);
        if (s > cur) { /* not mapped writable up to s */
            if (add_hole(f, cur, s) != 0)
                return -1;
            if (s == UINTPTR_MAX)
                break;
        }
        cur = e;
    }
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_GNU_RELRO) {
            uintptr_t a = info->dlpi_addr + ph->p_vaddr;
            if (add_hole(f, a, a + ph->p_memsz) != 0)
                return -1;
        }
    }
    return 0;
}

#ifdef WIO_R_COPY
/* The objects one dynamic relocation section copies from shared libraries into the executable
 * (copy relocations; its symbols are those of .dynsym). */
static int copy_relocs(elf_file *f, const ElfW(Shdr) *s)
{
    size_t ent = s->sh_type == SHT_RELA ? sizeof(ElfW(Rela)) : sizeof(ElfW(Rel));
    if (s->sh_entsize != ent || s->sh_link == 0 || s->sh_link >= f->shnum) {
        f->why = "unexpected relocation section";
        return -1;
    }
    const ElfW(Shdr) *ss = &f->sh[s->sh_link];
    if (ss->sh_type != SHT_DYNSYM)
        return 0; /* static relocations kept in the file (ld -q): nothing is copied by them */
    if (ss->sh_entsize != sizeof(ElfW(Sym))) {
        f->why = "unexpected symbol table";
        return -1;
    }
    uint8_t *rel = elf_read(f, s->sh_offset, s->sh_size);
    ElfW(Sym) *sym = rel ? elf_read(f, ss->sh_offset, ss->sh_size) : NULL;
    int rc = sym ? 0 : -1;
    size_t nsym = sym ? (size_t)(ss->sh_size / sizeof *sym) : 0;
    for (size_t k = 0; !rc && k < s->sh_size / ent; k++) {
        ElfW(Rela) r = {0};
        memcpy(&r, rel + k * ent, ent); /* a Rel is a Rela without its addend */
        if (WIO_R_TYPE(r.r_info) != WIO_R_COPY)
            continue;
        size_t si = (size_t)WIO_R_SYM(r.r_info);
        uintptr_t a = f->info->dlpi_addr + (uintptr_t)r.r_offset;
        if (si >= nsym || sym[si].st_size > UINTPTR_MAX - a) {
            f->why = "a copy relocation names no valid symbol";
            rc = -1;
        } else {
            rc = add_hole(f, a, a + (uintptr_t)sym[si].st_size);
        }
    }
    free(rel);
    free(sym);
    return rc;
}
#else
/* No copy relocation type known for this architecture: every object .dynsym defines is treated
 * as copied from a library (a program exporting its own globals loses them from the window). */
static int copy_relocs(elf_file *f, const ElfW(Shdr) *s)
{
    if (s->sh_entsize != sizeof(ElfW(Sym))) {
        f->why = "unexpected symbol table";
        return -1;
    }
    ElfW(Sym) *sym = elf_read(f, s->sh_offset, s->sh_size);
    int rc = sym ? 0 : -1;
    for (size_t k = 0; !rc && k < s->sh_size / sizeof *sym; k++) {
        uintptr_t a = f->info->dlpi_addr + (uintptr_t)sym[k].st_value;
        if (sym[k].st_shndx != SHN_UNDEF && WIO_ST_TYPE(sym[k].st_info) == STT_OBJECT &&
            sym[k].st_size <= UINTPTR_MAX - a)
            rc = add_hole(f, a, a + (uintptr_t)sym[k].st_size);
    }
    free(sym);
    return rc;
}
#endif

/* Objects of shared libraries copied into the executable's .bss (the C library's stdout,
 * stderr, environ...) are holes: their values are the library's pointers. */
static int copy_holes(elf_file *f)
{
    for (size_t i = 1; i < f->shnum; i++) {
        const ElfW(Shdr) *s = &f->sh[i];
#ifdef WIO_R_COPY
        int want = s->sh_type == SHT_RELA || s->sh_type == SHT_REL;
#else
        int want = s->sh_type == SHT_DYNSYM;
#endif
        if (want && copy_relocs(f, s) != 0)
            return -1;
    }
    return 0;
}

static int hole_cmp(const void *x, const void *y)
{
    const data_hole *a = x, *b = y;
    return a->off < b->off ? -1 : a->off > b->off;
}

/* The holes as sorted, merged offsets; the image identity covers the layout. */
static void layout_finish(elf_file *f, data_seg *d)
{
    d->start = f->lo;
    d->size = f->hi - f->lo;
    size_t n = 0;
    data_hole tmp[MAX_HOLES];
    for (size_t i = 0; i < f->nholes; i++)
        tmp[i] = (data_hole){f->holes[i][0] - f->lo, f->holes[i][1] - f->holes[i][0]};
    qsort(tmp, f->nholes, sizeof tmp[0], hole_cmp);
    for (size_t i = 0; i < f->nholes; i++) {
        if (n && tmp[i].off <= d->holes[n - 1].off + d->holes[n - 1].len) {
            size_t end = tmp[i].off + tmp[i].len, have = d->holes[n - 1].off + d->holes[n - 1].len;
            if (end > have)
                d->holes[n - 1].len = end - d->holes[n - 1].off;
        } else {
            d->holes[n++] = tmp[i];
        }
    }
    d->nholes = n;
    uint64_t h = 0xcbf29ce484222325ull, rel = (uint64_t)(f->lo - f->info->dlpi_addr);
    for (int i = 0; i < f->info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &f->info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W)) {
            h = fnv1a(h, &ph->p_vaddr, sizeof ph->p_vaddr);
            h = fnv1a(h, &ph->p_memsz, sizeof ph->p_memsz);
        }
    }
    uint64_t bid = build_id(f->info);
    h = fnv1a(h, &bid, sizeof bid);
    h = fnv1a(h, &rel, sizeof rel);
    h = fnv1a(h, &d->size, sizeof d->size);
    d->image = fnv1a(h, d->holes, n * sizeof d->holes[0]);
}

/* The main program is the first object dl_iterate_phdr reports. */
static int find_data(struct dl_phdr_info *info, size_t sz, void *arg)
{
    (void)sz;
    data_seg *d = arg;
    elf_file f = {.fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC), .info = info};
    struct stat st;
    if (f.fd < 0 || fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        f.why = "cannot open /proc/self/exe";
    } else {
        f.fsize = (uint64_t)st.st_size;
        if (elf_open(&f) == 0 && data_sections(&f) == 0 && segment_holes(&f) == 0 && copy_holes(&f) == 0)
            layout_finish(&f, d);
    }
    if (f.fd >= 0)
        close(f.fd);
    free(f.sh);
    free(f.names);
    if (!d->size)
        wio_warn("the executable's data window is empty: %s", f.why ? f.why : "unknown reason");
    size_t hole_bytes = 0;
    for (size_t i = 0; i < d->nholes; i++)
        hole_bytes += d->holes[i].len;
    wio_debug("data window: %zu bytes (.data to .bss end) at image offset %#lx, %zu holes of %zu bytes",
              d->size, d->size ? (unsigned long)(d->start - info->dlpi_addr) : 0ul, d->nholes, hole_bytes);
    return 1; /* only the main program */
}

/* Computed once (the executable does not change); callers hold the API lock. */
static const data_seg *data_layout_get(void)
{
    if (!data_layout_state) {
        dl_iterate_phdr(find_data, &data_layout);
        data_layout_state = 1;
        /* linked statically, libwaitio's own variables are part of the executable's data */
        uintptr_t self = (uintptr_t)&data_layout;
        if (data_layout.size && self - data_layout.start < data_layout.size)
            wio_warn("libwaitio is linked into the executable: its own variables lie in the data "
                     "window that every member may write; link the shared library where members "
                     "are not trusted (docs/one-sided.md)");
    }
    return &data_layout;
}

/* An access [off, off + len) of a data window (inside its part) touches one of its holes. Every
 * member running the same executable has the same holes, so the origin checks its own too. */
int wio_win_touches_hole(const struct waitio_win *w, uint64_t off, uint64_t len)
{
    if (!w || w->kind != WIO_WIN_DATA || !len)
        return 0;
    const data_seg *d = &data_layout;
    for (size_t i = 0; i < d->nholes; i++)
        if (off < d->holes[i].off + d->holes[i].len && (d->holes[i].off < off || d->holes[i].off - off < len))
            return 1;
    return 0;
}

/* Bounds of an access to this process's part, checked where the memory is (the target serving
 * frames): inside the part and clear of the data window's holes. */
int wio_win_in_bounds(const struct waitio_win *w, uint64_t off, uint64_t len)
{
    return w && off <= w->size && len <= w->size - off && !wio_win_touches_hole(w, off, len);
}

/* ---- shared segments ---------------------------------------------------------------------- */

/* The alignment of a heap mapping whose parts are `stride` bytes apart: the next power of two
 * >= stride (at most 1 GiB, at least a page). Every part then starts at a multiple of the largest
 * power of two dividing the stride (and the first, or only, part at the mapping's alignment), so
 * that an offset aligned to such a power is an aligned address on every member: OpenSHMEM's
 * shmem_align needs that for alignments above a page. */
static size_t heap_map_align(size_t stride, size_t page)
{
    size_t a = page;
    while (a < stride && a < ((size_t)1 << 30))
        a <<= 1;
    return a;
}

/* Maps len bytes of fd (MAP_SHARED), or anonymous private memory when fd < 0, at an address that
 * is a multiple of align (a power of two): a PROT_NONE reservation of len + align bytes is made
 * first (address space only), the mapping placed inside it and the rest given back. */
static void *map_aligned(size_t len, size_t align, int fd)
{
    if (len > SIZE_MAX - align) {
        errno = ENOMEM;
        return MAP_FAILED;
    }
    size_t span = len + align;
    uint8_t *res = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (res == MAP_FAILED)
        return MAP_FAILED;
    uint8_t *at = (uint8_t *)(((uintptr_t)res + align - 1) & ~(uintptr_t)(align - 1));
    void *p = fd < 0 ? mmap(at, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0)
                     : mmap(at, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
    if (p == MAP_FAILED) {
        int err = errno;
        munmap(res, span);
        errno = err;
        return MAP_FAILED;
    }
    if (at > res)
        munmap(res, (size_t)(at - res));
    if (res + span > at + len)
        munmap(at + len, (size_t)(res + span - (at + len)));
    return p;
}

static int seg_create(wio_rma *r, size_t len, size_t align, char name[NAME_MAX_LEN], void **map)
{
    uint32_t rnd = 0;
    if (wio_random_bytes((uint8_t *)&rnd, sizeof rnd) != 0)
        return WAITIO_ERR_SYS;
    char stem[40];
    wio_shm_name_stem(stem, sizeof stem);
    snprintf(name, NAME_MAX_LEN, "%sw%llu-%08x", stem, (unsigned long long)r->counter++, (unsigned)rnd);
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return wio_fail(WAITIO_ERR_SYS, "shm_open(%s): %s", name, strerror(errno));
    int err = ftruncate(fd, (off_t)len) == 0 ? posix_fallocate(fd, 0, (off_t)len) : errno;
    void *p = err ? MAP_FAILED : map_aligned(len, align, fd);
    if (!err && p == MAP_FAILED)
        err = errno;
    close(fd);
    if (err) {
        shm_unlink(name);
        return wio_fail(WAITIO_ERR_NOMEM, "cannot make a %zu-byte shared heap segment in /dev/shm: %s",
                        len, strerror(err));
    }
    *map = p;
    return 0;
}

/* Maps a segment another member created: only names of the form we create, only a segment of
 * this user, private to it, of the expected size. */
static int seg_attach(const char *name, size_t len, size_t align, void **map)
{
    size_t n = strnlen(name, NAME_MAX_LEN);
    if (n == NAME_MAX_LEN || n < 10 || strncmp(name, "/waitio-", 8) != 0)
        return wio_fail(WAITIO_ERR_PROTO, "invalid heap segment name from a member");
    for (size_t i = 1; i < n; i++)
        if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'z') || name[i] == '-'))
            return wio_fail(WAITIO_ERR_PROTO, "invalid heap segment name from a member");
    int fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
    if (fd < 0)
        return wio_fail(WAITIO_ERR_SYS, "shm_open(%s): %s", name, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || (size_t)st.st_size != len || st.st_uid != geteuid() || (st.st_mode & 077)) {
        close(fd);
        return wio_fail(WAITIO_ERR_PROTO, "heap segment %s: wrong size, owner or mode", name);
    }
    void *p = map_aligned(len, align, fd);
    int err = errno;
    close(fd);
    if (p == MAP_FAILED)
        return wio_fail(WAITIO_ERR_SYS, "mmap of %s: %s", name, strerror(err));
    *map = p;
    return 0;
}

/* ---- creation ----------------------------------------------------------------------------- */

/* Process pid shares heap memory with this process: same host, both offer shm, direct access on. */
static int shares_memory(const wio_rma *r, uint32_t pid)
{
    const wio_engine *e = r->e;
    const wio_proc *me = &e->table[e->my_id], *p = &e->table[pid];
    return pid == e->my_id ||
           (r->direct && p->host_id == me->host_id && (p->transports & me->transports & WIO_TP_SHM));
}

static void win_destroy(struct waitio_win *w)
{
    if (!w)
        return;
    wio_rdma_win_release(w->rma, w); /* nothing left after win_retire's: the transport may be gone */
    if (w->device_owned && w->base && wio_gpu_free(w->base) != 0)
        wio_warn("freeing a device window's memory failed: %s", waitio_error_message());
    if (w->map)
        munmap(w->map, w->map_len);
    free(w->m);
    free(w->allowed);
    free(w->blocks);
    free(w);
}

static struct waitio_win *win_new(wio_rma *r, wio_group *g, int kind)
{
    struct waitio_win *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->rma = r;
    w->g = g;
    w->kind = kind;
    w->m = calloc((size_t)g->size, sizeof *w->m);
    w->allowed = calloc((r->e->nprocs_total + 7) / 8, 1);
    if (!w->m || !w->allowed) {
        win_destroy(w);
        return NULL;
    }
    for (int i = 0; i < g->size; i++) {
        uint32_t pid = g->members[i];
        w->m[i].pid = pid;
        w->allowed[pid >> 3] |= (uint8_t)(1u << (pid & 7));
    }
    return w;
}

static void rec_encode(uint8_t *p, uint32_t wid, uint32_t flags, uint64_t addr, uint64_t size,
                       uint64_t image, const char *name, uint32_t err)
{
    memset(p, 0, REC_SIZE);
    wio_put_le32(p, wid);
    wio_put_le32(p + 4, flags);
    wio_put_le64(p + 8, addr);
    wio_put_le64(p + 16, size);
    wio_put_le64(p + 24, image);
    if (name)
        memcpy(p + 40, name, strnlen(name, NAME_MAX_LEN - 1));
    wio_put_le32(p + 104, err);
}

/* Every member learns every member's record (one allgather), then all agree on the outcome: a
 * member that failed returns its own error, the others the largest error code. */
static int agree(wio_engine *e, wio_group *g, int local_err)
{
    int in = local_err, out = 0;
    int rc = wio_coll_allreduce(e, g, &in, &out, 1, WIO_DT_INT, WIO_OP_MAX);
    if (rc)
        return rc;
    if (out && !local_err)
        return wio_fail(out, "window creation failed on another member (%s)", waitio_strerror(out));
    return local_err;
}

/* The largest part a window may have: offsets and the address arithmetic of every path stay
 * inside ptrdiff_t. */
#define WIN_SIZE_MAX ((size_t)PTRDIFF_MAX)

/* The stride of a heap part (its size rounded up to a page) and the length of the mapping of
 * nlocal parts, or WAITIO_ERR_ARG (message set) when they overflow. */
static int heap_lengths(const wio_rma *r, size_t size, int nlocal, size_t *stride, size_t *map_len)
{
    if (size > WIN_SIZE_MAX - (r->page - 1))
        return wio_fail(WAITIO_ERR_ARG, "waitio_win_allocate: %zu bytes is larger than any window can be", size);
    *stride = (size + r->page - 1) & ~(r->page - 1);
    if (nlocal > 0 && *stride > WIN_SIZE_MAX / (size_t)nlocal)
        return wio_fail(WAITIO_ERR_ARG, "waitio_win_allocate: %d parts of %zu bytes do not fit the address space",
                        nlocal, size);
    *map_len = *stride * (size_t)nlocal;
    return 0;
}

static int check_group(wio_rma *r, wio_group *g)
{
    (void)r;
    if (!g)
        return wio_fail(WAITIO_ERR_GROUP, "NULL group");
    if (g->my_rank == WAITIO_UNDEFINED)
        return wio_fail(WAITIO_ERR_NOT_MEMBER, "window over group %u: this process is not a member",
                        (unsigned)g->gid);
    return 0;
}

/* A window served through frames by some member (for the progress thread's auto mode); a
 * device part always is (atomics on it go as frames even when it is mapped through CUDA IPC). */
static void mark_served(struct waitio_win *w)
{
    for (int i = 0; i < w->g->size; i++)
        if (i != w->g->my_rank && (!w->m[i].ptr || w->m[i].device))
            w->served = 1;
}

/* ---- device parts through CUDA IPC ---------------------------------------------------------- */

/* This member's device part, offered to the members of its host: the allocation's IPC handle
 * and the part's offset in it go into its record (nothing when the export fails: frames). */
static void device_export(struct waitio_win *w, uint8_t *rec)
{
    wio_gpu_ipc_handle h;
    size_t off = 0;
    if (!w->device || !w->base || !w->size || !w->rma->e->gpu_ipc)
        return;
    if (wio_gpu_ipc_export(w->base, &h, &off) != 0) {
        wio_debug("window %#x: no CUDA IPC handle for this device part (%s): frames reach it",
                  (unsigned)w->id, waitio_error_message());
        return;
    }
    w->ipc_exported = 1;
    wio_put_le32(rec + 4, wio_get_le32(rec + 4) | REC_IPC);
    wio_put_le64(rec + 32, off);
    memcpy(rec + 40, h.bytes, WIO_GPU_IPC_HANDLE_LEN);
}

/* The device parts of the other members of this host, mapped here through CUDA IPC where they
 * were offered (cached per peer and allocation by gpu.h, closed when the peer goes): puts and
 * gets on them become one GPU copy (api.c); atomics still go to their owner as frames. A part
 * that cannot be opened stays reached through frames. */
static void device_map_peers(wio_rma *r, struct waitio_win *w, const uint8_t *recs)
{
    const wio_engine *e = r->e;
    if (!e->gpu_ipc)
        return;
    for (int i = 0; i < w->g->size; i++) {
        const uint8_t *p = recs + (size_t)i * REC_SIZE;
        wio_win_member *m = &w->m[i];
        if (i == w->g->my_rank || !m->device || !m->size || !(wio_get_le32(p + 4) & REC_IPC) ||
            !shares_memory(r, m->pid))
            continue;
        memcpy(m->ipc_h.bytes, p + 40, WIO_GPU_IPC_HANDLE_LEN);
        m->ipc_h.id = 0; /* not sent: the window lives until all close their mappings (win_free) */
        m->ipc_off = wio_get_le64(p + 32);
        if (!wio_win_ipc_ptr(m)) {
            wio_debug("window %#x: rank %d's device part not opened through CUDA IPC (%s): frames reach it",
                      (unsigned)w->id, i, waitio_error_message());
            continue;
        }
        m->ipc = 1;
        w->ipc_imports = 1;
    }
}

uint8_t *wio_win_ipc_ptr(const wio_win_member *m)
{
    void *base = NULL;
    if (wio_gpu_ipc_open(m->pid, &m->ipc_h, &base) != 0)
        return NULL;
    return (uint8_t *)base + m->ipc_off;
}

/* Before a device window's free: the mappings this process opened of the others' parts are
 * closed before anyone frees (the driver forbids freeing an exported allocation that another
 * process still has open). gpu.h closes per peer: other windows and messages open theirs again
 * on their next use (looked up per operation). */
static void ipc_close_imports(struct waitio_win *w)
{
    if (!w->ipc_imports)
        return;
    for (int i = 0; i < w->g->size; i++)
        if (w->m[i].ipc) {
            wio_gpu_ipc_close_peer(w->m[i].pid);
            w->m[i].ipc = 0;
        }
    w->ipc_imports = 0;
}

static void fill_members(struct waitio_win *w, const uint8_t *recs)
{
    const wio_engine *e = w->rma->e;
    uint64_t my_host = e->table[e->my_id].host_id;
    for (int i = 0; i < w->g->size; i++) {
        const uint8_t *p = recs + (size_t)i * REC_SIZE;
        wio_win_member *m = &w->m[i];
        m->wid = wio_get_le32(p);
        m->addr = wio_get_le64(p + 8);
        m->size = wio_get_le64(p + 16);
        m->same_image = wio_get_le64(p + 24) == wio_get_le64(recs + (size_t)w->g->my_rank * REC_SIZE + 24);
        m->same_host = e->table[m->pid].host_id == my_host && w->rma->direct;
        m->device = (wio_get_le32(p + 4) & REC_DEVICE) != 0;
    }
    w->m[w->g->my_rank].ptr = w->base;
}

/* Every member's record asks for the same size (waitio_win_allocate's rule). */
static int check_same_size(const uint8_t *recs, int n, size_t size)
{
    for (int i = 0; i < n; i++) {
        uint64_t theirs = wio_get_le64(recs + (size_t)i * REC_SIZE + 16);
        if (theirs != size)
            return wio_fail(WAITIO_ERR_ARG, "waitio_win_allocate: members asked for different sizes "
                            "(%zu here, %llu at rank %d)", size, (unsigned long long)theirs, i);
    }
    return 0;
}

/* Heap window: the members sharing memory with this one are in `local` (group ranks, in order). */
static int heap_create(wio_rma *r, struct waitio_win *w, size_t size)
{
    wio_engine *e = r->e;
    wio_group *g = w->g;
    int me = g->my_rank, nlocal = 0, idx = 0, leader = -1, rc = 0;
    size_t stride = 0, map_len = 0;
    for (int i = 0; i < g->size; i++)
        if (shares_memory(r, g->members[i])) {
            if (leader < 0)
                leader = i;
            if (i == me)
                idx = nlocal;
            nlocal++;
        }
    char name[NAME_MAX_LEN] = "";
    /* a size that overflows is an error of this member, agreed on like any other: nobody hangs */
    int local_err = heap_lengths(r, size, nlocal, &stride, &map_len);
    if (!local_err && stride && (nlocal == 1 || leader == me)) {
        w->map_len = map_len;
        if (nlocal == 1) {
            w->map = map_aligned(w->map_len, heap_map_align(stride, r->page), -1);
            if (w->map == MAP_FAILED) {
                w->map = NULL;
                local_err = wio_fail(WAITIO_ERR_NOMEM, "cannot map a %zu-byte window", w->map_len);
            }
            w->map_private = w->map != NULL; /* rdma.c may let UCX map this range instead */
        } else if ((local_err = seg_create(r, w->map_len, heap_map_align(stride, r->page), name, &w->map))) {
            w->map = NULL;
        }
    }
    uint8_t *recs = malloc((size_t)g->size * REC_SIZE);
    uint8_t mine[REC_SIZE];
    if (!recs)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory creating a window");
    rec_encode(mine, w->id, name[0] ? REC_HAS_SEGMENT : 0, 0, size, 0, name, (uint32_t)local_err);
    rc = wio_coll_allgather(e, g, mine, recs, REC_SIZE, WIO_DT_BYTE);
    if (rc) {
        free(recs);
        return rc;
    }
    if (!local_err)
        local_err = check_same_size(recs, g->size, size);
    if (!local_err && stride && nlocal > 1 && leader != me) {
        const uint8_t *lr = recs + (size_t)leader * REC_SIZE;
        char lname[NAME_MAX_LEN];
        memcpy(lname, lr + 40, NAME_MAX_LEN);
        lname[NAME_MAX_LEN - 1] = 0;
        uint32_t lerr = wio_get_le32(lr + 104);
        if (lerr || !(wio_get_le32(lr + 4) & REC_HAS_SEGMENT)) /* the leader failed; it says why */
            local_err = wio_fail(lerr && lerr < 0x10000 ? (int)lerr : WAITIO_ERR_PROTO, "the member that makes "
                                 "this host's heap segment (rank %d) failed: %s", leader,
                                 waitio_strerror(lerr && lerr < 0x10000 ? (int)lerr : WAITIO_ERR_PROTO));
        else if ((local_err = seg_attach(lname, map_len, heap_map_align(stride, r->page), &w->map)) == 0)
            w->map_len = map_len;
        else
            w->map = NULL;
    }
    if (w->map)
        w->base = (uint8_t *)w->map + (size_t)idx * stride;
    w->size = size;
    fill_members(w, recs);
    free(recs);
    rc = agree(e, g, local_err);
    if (name[0])
        shm_unlink(name); /* everyone mapped it (or gave up): no name left behind */
    if (rc)
        return rc;
    /* the parts of the members sharing memory with us, in the same order */
    int k = 0;
    for (int i = 0; i < g->size; i++)
        if (shares_memory(r, g->members[i]))
            w->m[i].ptr = stride ? (uint8_t *)w->map + (size_t)(k++) * stride : NULL;
    w->m[me].ptr = w->base;
    return 0;
}

/* Zero-fills n bytes of device memory from a host page of zeros (the CPU may not store there). */
static int device_zero(uint8_t *p, size_t n)
{
    size_t step = n < ((size_t)1 << 20) ? n : (size_t)1 << 20;
    void *zeros = calloc(1, step);
    int rc = zeros ? 0 : wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    for (size_t at = 0; !rc && at < n; at += step)
        rc = wio_gpu_copy(p + at, zeros, n - at < step ? n - at : step);
    free(zeros);
    return rc;
}

/* Heap window in device memory (WAITIO_WIN_DEVICE): every member allocates its own part on its
 * current device (wio_gpu_alloc, never managed memory); no member maps another's, so every
 * access to another member's part goes as frames and is applied by its owner with wio_gpu_copy.
 * A member without a CUDA driver fails with WAITIO_ERR_DEVICE, and every member agrees on it. */
static int device_heap_create(wio_rma *r, struct waitio_win *w, size_t size)
{
    wio_engine *e = r->e;
    wio_group *g = w->g;
    int local_err = 0;
    if (size > WIN_SIZE_MAX)
        local_err = wio_fail(WAITIO_ERR_ARG, "waitio_win_allocate: %zu bytes is larger than any window can be", size);
    void *p = NULL;
    if (!local_err && size && (local_err = wio_gpu_alloc(size, &p)) == 0) {
        w->base = p;
        w->device_owned = 1;
        local_err = device_zero(w->base, size);
    }
    w->device = 1;
    w->size = local_err ? 0 : size;
    uint8_t *recs = malloc((size_t)g->size * REC_SIZE);
    uint8_t mine[REC_SIZE];
    if (!recs)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory creating a window");
    rec_encode(mine, w->id, REC_DEVICE, (uint64_t)(uintptr_t)w->base, size, 0, NULL, (uint32_t)local_err);
    if (!local_err)
        device_export(w, mine);
    int rc = wio_coll_allgather(e, g, mine, recs, REC_SIZE, WIO_DT_BYTE);
    if (rc) {
        free(recs);
        return rc;
    }
    if (!local_err)
        local_err = check_same_size(recs, g->size, size);
    fill_members(w, recs);
    if (!local_err)
        device_map_peers(r, w, recs);
    free(recs);
    return agree(e, g, local_err);
}

static int finish_create(wio_rma *r, struct waitio_win *w, waitio_win_t *out)
{
    mark_served(w);
    *out = w;
    if (w->served)
        wio_progress_thread_auto(r); /* last: a thread started here runs from now on */
    return 0;
}

int waitio_win_allocate(waitio_group_t grp, size_t size, waitio_win_t *win, void **base)
{
    return waitio_win_allocate_ex(grp, size, 0, win, base);
}

int waitio_win_allocate_ex(waitio_group_t grp, size_t size, unsigned flags, waitio_win_t *win, void **base)
{
    WIO_API_GUARD();
    wio_rma *r = wio_rma_get();
    if (!r)
        return WAITIO_ERR_STATE;
    wio_group *g = (wio_group *)grp;
    int rc = check_group(r, g);
    if (rc)
        return rc;
    if (!win)
        return wio_fail(WAITIO_ERR_ARG, "NULL window pointer");
    /* an unknown flag is refused by every member alike (the same arguments everywhere) */
    if (flags & ~(unsigned)WAITIO_WIN_DEVICE)
        return wio_fail(WAITIO_ERR_ARG, "waitio_win_allocate_ex: unknown flags %#x", flags);
    struct waitio_win *w = win_new(r, g, WIO_WIN_HEAP);
    if (!w)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory creating a window");
    if ((rc = table_add(r, w)) ||
        (rc = (flags & WAITIO_WIN_DEVICE) ? device_heap_create(r, w, size) : heap_create(r, w, size)) ||
        (rc = wio_rdma_win_setup(r, w))) {
        table_remove(r, w);
        win_destroy(w);
        return rc;
    }
    if (base)
        *base = w->base;
    return finish_create(r, w, win);
}

/* The first error a member reported in its record (0: none), with its rank. */
static int records_error(const wio_group *g, const uint8_t *recs, int *rank)
{
    for (int i = 0; i < g->size; i++) {
        uint32_t err = wio_get_le32(recs + (size_t)i * REC_SIZE + 104);
        if (err) {
            *rank = i;
            return err < 0x10000 ? (int)err : WAITIO_ERR_PROTO;
        }
    }
    return 0;
}

/* User memory and the data segment: one exchange of (address, size, image, error). A member
 * whose arguments are wrong (local_err) still takes part, so that the others learn it from its
 * record and fail too instead of waiting; the exchange is then the agreement. */
static int exposed_create(wio_rma *r, wio_group *g, int kind, void *base, size_t size, uint64_t image,
                          int local_err, waitio_win_t *win)
{
    struct waitio_win *w = win_new(r, g, kind);
    uint8_t *recs = w ? malloc((size_t)g->size * REC_SIZE) : NULL;
    if (!recs) {
        win_destroy(w);
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory creating a window");
    }
    /* the part is ready before anyone can learn the window's id: a member that finishes the
     * exchange first may use the window at once */
    w->base = local_err ? NULL : base;
    w->size = local_err ? 0 : size;
    if (!local_err && kind == WIO_WIN_USER) {
        /* memory of the caller's may be a device allocation: then only frames reach it */
        wio_mem_kind mk = WIO_MEM_HOST;
        if (size && (local_err = wio_gpu_mem_kind(base, size, &mk, NULL)) != 0) {
            w->base = NULL;
            w->size = 0;
        }
        w->device = mk == WIO_MEM_CUDA;
    }
    int rc = local_err ? 0 : table_add(r, w);
    uint8_t mine[REC_SIZE];
    rec_encode(mine, w->id, w->device ? REC_DEVICE : 0, (uint64_t)(uintptr_t)w->base, w->size, image, NULL,
               (uint32_t)(local_err ? local_err : rc));
    if (!local_err && !rc)
        device_export(w, mine);
    int xrc = wio_coll_allgather(r->e, g, mine, recs, REC_SIZE, WIO_DT_BYTE);
    int bad = 0, err = xrc ? xrc : local_err ? local_err : rc ? rc : records_error(g, recs, &bad);
    if (!xrc && !local_err && !rc && err)
        wio_fail(err, "window creation failed on rank %d (%s)", bad, waitio_strerror(err));
    if (!err) {
        fill_members(w, recs);
        device_map_peers(r, w, recs);
    }
    free(recs);
    if (!err)
        err = wio_rdma_win_setup(r, w); /* collective too: every member got here */
    if (err) {
        table_remove(r, w);
        win_destroy(w);
        return err;
    }
    return finish_create(r, w, win);
}

int waitio_win_create(waitio_group_t grp, void *base, size_t size, waitio_win_t *win)
{
    WIO_API_GUARD();
    wio_rma *r = wio_rma_get();
    if (!r)
        return WAITIO_ERR_STATE;
    int rc = check_group(r, (wio_group *)grp);
    if (rc)
        return rc;
    if (!win)
        return wio_fail(WAITIO_ERR_ARG, "NULL window pointer");
    /* a part that wraps around the address space would let members reach any address */
    int local_err = 0;
    if ((!base && size) || size > WIN_SIZE_MAX || (uintptr_t)base > UINTPTR_MAX - size)
        local_err = wio_fail(WAITIO_ERR_ARG, "waitio_win_create: %zu bytes at %p are not memory a window "
                             "can expose", size, base);
    return exposed_create(r, (wio_group *)grp, WIO_WIN_USER, base, size, 0, local_err, win);
}

int waitio_win_create_data(waitio_group_t grp, waitio_win_t *win)
{
    WIO_API_GUARD();
    wio_rma *r = wio_rma_get();
    if (!r)
        return WAITIO_ERR_STATE;
    int rc = check_group(r, (wio_group *)grp);
    if (rc)
        return rc;
    if (!win)
        return wio_fail(WAITIO_ERR_ARG, "NULL window pointer");
    const data_seg *d = data_layout_get();
    return exposed_create(r, (wio_group *)grp, WIO_WIN_DATA, (void *)d->start, d->size, d->image, 0, win);
}

/* Out of the table (frames naming it are refused from now on); destroyed now, or after the last
 * transfer that reads or writes its memory (finalize only: a free waits for them first). */
static void win_retire(wio_rma *r, struct waitio_win *w)
{
    table_remove(r, w);
    wio_rdma_win_release(r, w); /* now, while the transport is open (finalize closes it next) */
    if (w->replies || w->writers) {
        w->retired = 1;
        w->g = NULL;
        return;
    }
    win_destroy(w);
}

void wio_win_reply_done(struct waitio_win *w)
{
    if (w->replies && --w->replies == 0 && !w->writers && w->retired)
        win_destroy(w);
}

void wio_win_write_done(struct waitio_win *w)
{
    w->progress++;
    if (w->writers && --w->writers == 0 && !w->replies && w->retired)
        win_destroy(w);
}

static int win_idle(void *arg)
{
    const struct waitio_win *w = arg;
    return !w->replies && !w->writers;
}

/* The window left the table, so no new transfer starts on it: waits until those under way are
 * over — GET replies written from its memory, PUTs being read into it. Those are a member's that
 * did not wait for its own operations (or a hostile one's): a well-behaved member's are complete
 * when it enters the free. Bounded: a lost peer's transfers end with its connection, and when
 * none of them moves for WAITIO_PEER_TIMEOUT the processes that hold them are dropped. */
static void win_drain(wio_rma *r, struct waitio_win *w)
{
    wio_engine *e = r->e;
    while (!win_idle(w)) {
        uint64_t seen = w->progress;
        int rc = wio_engine_wait_until(e, win_idle, w, wio_now() + e->cfg.peer_timeout);
        if (!rc)
            return;
        if (rc == WAITIO_ERR_TIMEOUT && w->progress != seen)
            continue; /* moving, however slowly */
        wio_am_drop_holders(r, w);
        if (!win_idle(w)) { /* cannot happen: dropping a peer ends its transfers */
            wio_error("freeing a window: %u replies and %u writes still use its memory", (unsigned)w->replies,
                      (unsigned)w->writers);
            return;
        }
    }
}

int waitio_win_free(waitio_win_t win)
{
    WIO_API_GUARD();
    wio_rma *r = wio_rma_get();
    if (!r)
        return WAITIO_ERR_STATE;
    if (!win)
        return wio_fail(WAITIO_ERR_ARG, "NULL window");
    /* our operations complete; the members leave the barrier only after every member's quiet,
     * so every frame of a well-behaved member naming the window has been served */
    int rc = wio_am_quiet(r);
    ipc_close_imports(win); /* before the barrier: owners free their parts after it */
    int rc2 = wio_coll_barrier(r->e, win->g);
    /* a member that did not wait for its own operations (or a hostile one) may still have
     * transfers on the window: none is left when this returns, so the caller may reuse or unmap
     * the memory (docs/one-sided.md, "Freeing a window") */
    table_remove(r, win);
    win_drain(r, win);
    win_retire(r, win);
    return rc ? rc : rc2;
}

void wio_win_retire_all(wio_rma *r)
{
    for (uint32_t i = 0; i < r->nslots; i++) {
        struct waitio_win *w = r->wins[i];
        if (!w)
            continue;
        /* not freed by the program: without the free's barrier another process may still have
         * this device part open, so it is left to the driver, which releases it at exit */
        if (w->device_owned && w->ipc_exported) {
            wio_debug("finalize: window %#x's device part (exported through CUDA IPC) is left to the "
                      "driver", (unsigned)w->id);
            w->device_owned = 0;
        }
        win_retire(r, w);
    }
}

/* After the engine's finalize every reply item is done (written or dropped): nothing is left to
 * borrow the retired windows' memory. */
void wio_win_destroy_all(wio_rma *r)
{
    free(r->wins);
    free(r->gens);
    r->wins = NULL;
    r->gens = NULL;
    r->nslots = 0;
}

/* ---- queries --------------------------------------------------------------------------------- */

int waitio_win_base(waitio_win_t win, void **base, size_t *size)
{
    if (!win)
        return wio_fail(WAITIO_ERR_ARG, "NULL window");
    if (base)
        *base = win->base;
    if (size)
        *size = win->size;
    return 0;
}

int waitio_win_size(waitio_win_t win, int rank, size_t *size)
{
    if (!win || !size)
        return wio_fail(WAITIO_ERR_ARG, "NULL window or pointer");
    int rc = wio_win_check_rank(win, rank);
    if (!rc)
        *size = win->m[rank].size;
    return rc;
}

int waitio_win_offset(waitio_win_t win, const void *addr, size_t *offset)
{
    if (!win || !offset)
        return wio_fail(WAITIO_ERR_ARG, "NULL window or pointer");
    uintptr_t a = (uintptr_t)addr, b = (uintptr_t)win->base;
    if (a < b || a - b > win->size)
        return wio_fail(WAITIO_ERR_BOUNDS, "address %p is outside this member's part of the window", addr);
    *offset = a - b;
    return 0;
}

void *waitio_win_ptr(waitio_win_t win, int rank, size_t offset)
{
    /* device memory takes no plain loads and stores: NULL, as for a part not mapped here */
    if (!win || rank < 0 || rank >= win->g->size || !win->m[rank].ptr || offset > win->m[rank].size ||
        win->m[rank].device)
        return NULL;
    return win->m[rank].ptr + offset;
}

waitio_group_t waitio_win_group(waitio_win_t win) { return win ? (waitio_group_t)win->g : NULL; }

/* ---- the symmetric allocator -------------------------------------------------------------- */

static int blocks_insert(struct waitio_win *w, size_t at, wio_block b)
{
    if (w->nblocks == w->cap_blocks) {
        size_t n = w->cap_blocks ? w->cap_blocks * 2 : 16;
        wio_block *a = realloc(w->blocks, n * sizeof *a);
        if (!a)
            return -1;
        w->blocks = a;
        w->cap_blocks = n;
    }
    memmove(w->blocks + at + 1, w->blocks + at, (w->nblocks - at) * sizeof *w->blocks);
    w->blocks[at] = b;
    w->nblocks++;
    return 0;
}

static void blocks_erase(struct waitio_win *w, size_t at)
{
    memmove(w->blocks + at, w->blocks + at + 1, (w->nblocks - at - 1) * sizeof *w->blocks);
    w->nblocks--;
}

/* First fit over the blocks in offset order: the same calls give the same offsets everywhere. */
int waitio_win_alloc(waitio_win_t w, size_t size, size_t align, size_t *offset)
{
    WIO_API_GUARD();
    if (!w || !offset || (align & (align - 1)))
        return wio_fail(WAITIO_ERR_ARG, "NULL window or pointer, or alignment %zu not a power of two", align);
    if (!w->blocks && w->size && blocks_insert(w, 0, (wio_block){0, w->size, 0}) != 0)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    if (align < MIN_ALIGN)
        align = MIN_ALIGN;
    if (size > SIZE_MAX - MIN_ALIGN)
        return wio_fail(WAITIO_ERR_NOMEM, "%zu bytes do not fit the window", size);
    size = size ? (size + MIN_ALIGN - 1) & ~(size_t)(MIN_ALIGN - 1) : MIN_ALIGN;
    for (size_t i = 0; i < w->nblocks; i++) {
        wio_block *b = &w->blocks[i];
        if (b->used)
            continue;
        size_t start = (b->off + align - 1) & ~(align - 1);
        if (start < b->off || start - b->off > b->size || b->size - (start - b->off) < size)
            continue;
        size_t pad = start - b->off, rest = b->size - pad - size;
        wio_block used = {start, size, 1};
        if (pad) {
            b->size = pad;
            if (blocks_insert(w, ++i, used) != 0)
                return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
        } else {
            *b = used;
        }
        if (rest && blocks_insert(w, i + 1, (wio_block){start + size, rest, 0}) != 0)
            return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
        *offset = start;
        return 0;
    }
    return wio_fail(WAITIO_ERR_NOMEM, "the window (%zu bytes) has no free block of %zu bytes aligned to %zu",
                    w->size, size, align);
}

int waitio_win_dealloc(waitio_win_t w, size_t offset)
{
    WIO_API_GUARD();
    if (!w)
        return wio_fail(WAITIO_ERR_ARG, "NULL window");
    for (size_t i = 0; i < w->nblocks; i++) {
        if (w->blocks[i].off != offset || !w->blocks[i].used)
            continue;
        w->blocks[i].used = 0;
        if (i + 1 < w->nblocks && !w->blocks[i + 1].used) {
            w->blocks[i].size += w->blocks[i + 1].size;
            blocks_erase(w, i + 1);
        }
        if (i > 0 && !w->blocks[i - 1].used) {
            w->blocks[i - 1].size += w->blocks[i].size;
            blocks_erase(w, i);
        }
        return 0;
    }
    return wio_fail(WAITIO_ERR_ARG, "offset %zu is not an allocated block of the window", offset);
}

int waitio_win_realloc(waitio_win_t w, size_t offset, size_t size, size_t align, size_t *new_offset)
{
    WIO_API_GUARD();
    if (!w || !new_offset)
        return wio_fail(WAITIO_ERR_ARG, "NULL window or pointer");
    size_t i = 0;
    while (i < w->nblocks && (w->blocks[i].off != offset || !w->blocks[i].used))
        i++;
    if (i == w->nblocks)
        return wio_fail(WAITIO_ERR_ARG, "offset %zu is not an allocated block of the window", offset);
    size_t old_size = w->blocks[i].size, off;
    int rc = waitio_win_alloc(w, size, align, &off);
    if (rc)
        return rc;
    if (w->base && w->device) /* the blocks do not overlap: the old one is still allocated */
        rc = wio_gpu_copy(w->base + off, w->base + offset, old_size < size ? old_size : size);
    else if (w->base)
        memmove(w->base + off, w->base + offset, old_size < size ? old_size : size);
    if (rc) {
        waitio_win_dealloc(w, off);
        return rc;
    }
    *new_offset = off;
    return waitio_win_dealloc(w, offset);
}

/* ---- the world group ---------------------------------------------------------------------- */

static int everyone(int pb, int rank)
{
    (void)pb;
    (void)rank;
    return 1;
}

int wio_rma_world_group(wio_rma *r, wio_group **out)
{
    wio_engine *e = r->e;
    if (!r->world)
        r->world = wio_group_find(e, WAITIO_GID_RMA_WORLD);
    if (r->world) {
        *out = r->world;
        return 0;
    }
    waitio_filter_func_t *f = malloc(sizeof *f * (size_t)e->npb);
    int *order = malloc(sizeof *order * (size_t)e->npb);
    int rc = 0;
    if (!f || !order)
        rc = wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    for (int p = 0; !rc && p < e->npb; p++) {
        f[p] = everyone;
        order[p] = p + 1;
    }
    if (!rc)
        rc = wio_group_create_func(e, WAITIO_GID_RMA_WORLD, f, order, &r->world);
    free(f);
    free(order);
    if (!rc)
        *out = r->world;
    return rc;
}
