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
 * sweeps ("/waitio-<uid>-<pid>-..."), so a segment whose creator died before the unlink is
 * removed by the next WaitIO process of the user.
 */
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
#include "rma/rma.h"

#define REC_SIZE 112
#define NAME_MAX_LEN 64
#define REC_HAS_SEGMENT 0x1u
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

typedef struct data_seg {
    uintptr_t start;
    size_t size;
    uint64_t image;
} data_seg;

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

/* The main program is the first object dl_iterate_phdr reports. Its data window runs from the end
 * of the part made read-only after relocation (PT_GNU_RELRO, rounded down to a page as the
 * loader does) to the end of its last writable PT_LOAD (its bss included). */
static int find_data(struct dl_phdr_info *info, size_t sz, void *arg)
{
    (void)sz;
    data_seg *d = arg;
    long pg = sysconf(_SC_PAGESIZE);
    uintptr_t page = pg > 0 ? (uintptr_t)pg : 4096;
    uintptr_t lo = UINTPTR_MAX, hi = 0, relro_end = 0;
    uint64_t h = 0xcbf29ce484222325ull;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W)) {
            uintptr_t a = info->dlpi_addr + ph->p_vaddr;
            if (a < lo)
                lo = a;
            if (a + ph->p_memsz > hi)
                hi = a + ph->p_memsz;
            h = fnv1a(h, &ph->p_vaddr, sizeof ph->p_vaddr);
            h = fnv1a(h, &ph->p_memsz, sizeof ph->p_memsz);
        } else if (ph->p_type == PT_GNU_RELRO) {
            relro_end = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz) & ~(page - 1);
        }
    }
    if (hi > lo) {
        if (relro_end > lo && relro_end <= hi)
            lo = relro_end;
        d->start = lo;
        d->size = hi - lo;
        uint64_t bid = build_id(info);
        d->image = fnv1a(h, &bid, sizeof bid);
        d->image = fnv1a(d->image, &d->size, sizeof d->size);
    }
    return 1; /* only the main program */
}

/* ---- shared segments ---------------------------------------------------------------------- */

static int seg_create(wio_rma *r, size_t len, char name[NAME_MAX_LEN], void **map)
{
    uint32_t rnd = 0;
    if (wio_random_bytes((uint8_t *)&rnd, sizeof rnd) != 0)
        return WAITIO_ERR_SYS;
    snprintf(name, NAME_MAX_LEN, "/waitio-%u-%ld-w%llu-%08x", (unsigned)getuid(), (long)getpid(),
             (unsigned long long)r->counter++, (unsigned)rnd);
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return wio_fail(WAITIO_ERR_SYS, "shm_open(%s): %s", name, strerror(errno));
    int err = ftruncate(fd, (off_t)len) == 0 ? posix_fallocate(fd, 0, (off_t)len) : errno;
    void *p = err ? MAP_FAILED : mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
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
static int seg_attach(const char *name, size_t len, void **map)
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
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
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

/* Every member learns every member's record (one allgather), then all agree on the outcome. */
static int agree(wio_engine *e, wio_group *g, int local_err)
{
    int in = local_err, out = 0;
    int rc = wio_coll_allreduce(e, g, &in, &out, 1, WIO_DT_INT, WIO_OP_MAX);
    if (rc)
        return rc;
    if (out && !local_err)
        return wio_fail(out, "window creation failed on another member (%s)", waitio_strerror(out));
    return out;
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

/* A window served through frames by some member (for the progress thread's auto mode). */
static void mark_served(struct waitio_win *w)
{
    for (int i = 0; i < w->g->size; i++)
        if (i != w->g->my_rank && !w->m[i].ptr)
            w->served = 1;
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
    }
    w->m[w->g->my_rank].ptr = w->base;
}

/* Heap window: the members sharing memory with this one are in `local` (group ranks, in order). */
static int heap_create(wio_rma *r, struct waitio_win *w, size_t size)
{
    wio_engine *e = r->e;
    wio_group *g = w->g;
    int me = g->my_rank, nlocal = 0, idx = 0, leader = -1, rc = 0;
    size_t stride = (size + r->page - 1) & ~(r->page - 1);
    for (int i = 0; i < g->size; i++)
        if (shares_memory(r, g->members[i])) {
            if (leader < 0)
                leader = i;
            if (i == me)
                idx = nlocal;
            nlocal++;
        }
    char name[NAME_MAX_LEN] = "";
    int local_err = 0;
    if (stride && (nlocal == 1 || leader == me)) {
        w->map_len = stride * (size_t)nlocal;
        if (nlocal == 1) {
            w->map = mmap(NULL, w->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (w->map == MAP_FAILED) {
                w->map = NULL;
                local_err = wio_fail(WAITIO_ERR_NOMEM, "cannot map a %zu-byte window", w->map_len);
            }
        } else if ((local_err = seg_create(r, w->map_len, name, &w->map))) {
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
    for (int i = 0; i < g->size && !local_err; i++)
        if (wio_get_le64(recs + (size_t)i * REC_SIZE + 16) != size)
            local_err = wio_fail(WAITIO_ERR_ARG, "waitio_win_allocate: members asked for different sizes "
                                 "(%zu here, %llu at rank %d)", size,
                                 (unsigned long long)wio_get_le64(recs + (size_t)i * REC_SIZE + 16), i);
    if (!local_err && stride && nlocal > 1 && leader != me) {
        const uint8_t *lr = recs + (size_t)leader * REC_SIZE;
        char lname[NAME_MAX_LEN];
        memcpy(lname, lr + 40, NAME_MAX_LEN);
        lname[NAME_MAX_LEN - 1] = 0;
        if (wio_get_le32(lr + 104) || !(wio_get_le32(lr + 4) & REC_HAS_SEGMENT))
            local_err = WAITIO_ERR_SYS; /* the leader failed; it reports why */
        else if ((local_err = seg_attach(lname, stride * (size_t)nlocal, &w->map)) == 0)
            w->map_len = stride * (size_t)nlocal;
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
    struct waitio_win *w = win_new(r, g, WIO_WIN_HEAP);
    if (!w)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory creating a window");
    if ((rc = table_add(r, w)) || (rc = heap_create(r, w, size))) {
        table_remove(r, w);
        win_destroy(w);
        return rc;
    }
    if (base)
        *base = w->base;
    return finish_create(r, w, win);
}

/* User memory and the data segment: one exchange of (address, size, image). */
static int exposed_create(wio_rma *r, wio_group *g, int kind, void *base, size_t size, uint64_t image,
                          waitio_win_t *win)
{
    struct waitio_win *w = win_new(r, g, kind);
    if (!w)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory creating a window");
    /* the part is ready before anyone can learn the window's id: a member that finishes the
     * exchange first may use the window at once */
    w->base = base;
    w->size = size;
    int rc = table_add(r, w);
    uint8_t *recs = rc ? NULL : malloc((size_t)g->size * REC_SIZE);
    if (!rc && !recs)
        rc = wio_fail(WAITIO_ERR_NOMEM, "out of memory creating a window");
    if (!rc) {
        uint8_t mine[REC_SIZE];
        rec_encode(mine, w->id, 0, (uint64_t)(uintptr_t)base, size, image, NULL, 0);
        rc = wio_coll_allgather(r->e, g, mine, recs, REC_SIZE, WIO_DT_BYTE);
    }
    if (!rc)
        fill_members(w, recs);
    free(recs);
    if (rc) {
        table_remove(r, w);
        win_destroy(w);
        return rc;
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
    if (!win || (!base && size))
        return wio_fail(WAITIO_ERR_ARG, "NULL window pointer, or NULL base with size %zu", size);
    return exposed_create(r, (wio_group *)grp, WIO_WIN_USER, base, size, 0, win);
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
    data_seg d = {0};
    dl_iterate_phdr(find_data, &d);
    if (!d.size)
        wio_info("the executable has no writable data segment: its data window is empty");
    return exposed_create(r, (wio_group *)grp, WIO_WIN_DATA, (void *)d.start, d.size, d.image, win);
}

/* Out of the table; destroyed now, or after the last reply that borrows its memory. */
static void win_retire(wio_rma *r, struct waitio_win *w)
{
    table_remove(r, w);
    if (w->replies) {
        w->retired = 1;
        /* kept on the list of retired windows until then */
        w->g = NULL;
        return;
    }
    win_destroy(w);
}

void wio_win_reply_done(struct waitio_win *w)
{
    if (w->replies && --w->replies == 0 && w->retired)
        win_destroy(w);
}

int waitio_win_free(waitio_win_t win)
{
    WIO_API_GUARD();
    wio_rma *r = wio_rma_get();
    if (!r)
        return WAITIO_ERR_STATE;
    if (!win)
        return wio_fail(WAITIO_ERR_ARG, "NULL window");
    /* our operations complete, then nobody's are in flight: the members leave the barrier only
     * after every member's quiet, so no frame naming the window can still arrive */
    int rc = wio_am_quiet(r);
    int rc2 = wio_coll_barrier(r->e, win->g);
    win_retire(r, win);
    return rc ? rc : rc2;
}

void wio_win_retire_all(wio_rma *r)
{
    for (uint32_t i = 0; i < r->nslots; i++)
        if (r->wins[i])
            win_retire(r, r->wins[i]);
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
    if (!win || rank < 0 || rank >= win->g->size || !win->m[rank].ptr || offset > win->m[rank].size)
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
    if (w->base)
        memmove(w->base + off, w->base + offset, old_size < size ? old_size : size);
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
