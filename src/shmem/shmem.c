/*
 * shmem.c — OpenSHMEM set-up and queries, the symmetric heap (a deterministic allocator in
 * WaitIO's heap window, so the same calls on every PE give the same offsets), RMA (memcpy to a
 * mapped heap part, else waitio_put/waitio_get), ordering, barriers and shmem_global_exit.
 * The device symmetric heap (SHMEMX_MALLOC_DEVICE, WAITIO_SHMEM_HEAP=device) is a second heap
 * window in GPU memory (waitio_win_allocate_ex with WAITIO_WIN_DEVICE), made collectively at the
 * first device allocation; blocks are told apart from the host heap's by their address.
 */
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "shmem/shmem_internal.h"
#include "waitio_adapter.h" /* waitio_adapter_getenv: WaitIO's variables through its registry */

#define DEFAULT_HEAP (64u << 20)
#define HEAP_ROUND_MIN 4096u /* the least heap: a page */
#define RPC_GLOBAL_EXIT 0xff00 /* WaitIO's own handler ids start at 0xff00 */

wio_shmem_state wio_shmem;
struct waitio_shmem_team waitio_shmem_team_world, waitio_shmem_team_shared;

/* ---- errors and waiting ------------------------------------------------------------------ */

void wio_shmem_fatal(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fprintf(stderr, "shmem: PE %d: ", S.ready ? S.me : -1);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    _exit(1); /* not exit(): an atexit handler calling shmem_finalize would wait for the others */
}

void wio_shmem_check(int rc, const char *what)
{
    if (rc)
        wio_shmem_fatal("%s failed: %s (%s)", what, waitio_strerror(rc), waitio_error_message());
}

void wio_shmem_need_init(void)
{
    if (!S.ready)
        wio_shmem_fatal("OpenSHMEM routine called before shmem_init (or after shmem_finalize)");
}

void wio_shmem_wait(int (*done)(void *), void *arg)
{
    for (unsigned iter = 0;; iter++) {
        if (done(arg))
            return;
        /* 64 quick looks (a neighbour's store through shared memory needs no progress), then
         * progress and yield; after ~2000 rounds also sleep briefly so that an idle waiter on an
         * oversubscribed host gives its core away */
        if (iter < 64)
            continue;
        wio_shmem_check(waitio_progress(), "progress while waiting");
        if (iter < 2000) {
            sched_yield();
        } else {
            struct timespec ts = {0, 50000};
            nanosleep(&ts, NULL);
        }
    }
}

void wio_shmem_sym(const void *addr, size_t len, int pe, const char *what, waitio_win_t *win, size_t *off)
{
    wio_shmem_need_init();
    if ((unsigned)pe >= (unsigned)S.npes)
        wio_shmem_fatal("%s: PE %d is outside 0..%d", what, pe, S.npes - 1);
    if (wio_shmem_resolve(addr, len, win, off) == WIO_SYM_NONE)
        wio_shmem_fatal("%s: %p (%zu bytes) is not a symmetric object (neither in the symmetric heap "
                        "nor in the executable's global data)", what, addr, len);
}

/* ---- set-up ------------------------------------------------------------------------------- */

/* The heap size, rounded up for shmem_align: to a multiple of 2 MiB, or to a power of two when
 * smaller. The parts of a host's shared segment lie that many bytes apart (window.c aligns the
 * mapping), so every PE's part starts on a multiple of 2 MiB (of the whole heap when smaller). */
static size_t heap_rounded(size_t size)
{
    const size_t big = (size_t)2 << 20;
    if (size >= big)
        return (size + big - 1) & ~(big - 1);
    size_t p = HEAP_ROUND_MIN;
    while (p < size)
        p <<= 1;
    return p;
}

/* A size setting: bytes with an optional K, M or G (and B); 0 when unset. */
static size_t size_setting(const char *name, const char *v)
{
    if (!v || !*v)
        return 0;
    char *end;
    double x = strtod(v, &end);
    double mult = 1;
    switch (*end) {
    case 'k': case 'K': mult = 1024.0; end++; break;
    case 'm': case 'M': mult = 1048576.0; end++; break;
    case 'g': case 'G': mult = 1073741824.0; end++; break;
    default: break;
    }
    if (*end == 'B' || *end == 'b')
        end++;
    if (end == v || *end || !(x > 0) || x * mult > 1e15)
        wio_shmem_fatal("%s=%s is not a size (bytes, with an optional K, M or G)", name, v);
    return (size_t)(x * mult);
}

static size_t heap_size_from_env(void)
{
    const char *v = waitio_adapter_getenv("SHMEM_SYMMETRIC_SIZE");
    if (!v || !*v)
        v = getenv("SMA_SYMMETRIC_SIZE"); /* its name before 1.4, deprecated */
    if (!v || !*v)
        v = waitio_adapter_getenv("WAITIO_SYMMETRIC_SIZE");
    if (!v || !*v)
        return DEFAULT_HEAP;
    return heap_rounded(size_setting("SHMEM_SYMMETRIC_SIZE", v));
}

static int h_global_exit(int origin, const void *args, size_t len, void *reply, size_t *reply_len, void *user)
{
    (void)origin;
    (void)reply;
    (void)reply_len;
    (void)user;
    int status = 1;
    if (len == sizeof status)
        memcpy(&status, args, sizeof status);
    fflush(NULL);
    _exit(status);
}

static void init_layer(void)
{
    if (S.ready)
        return;
    if (!waitio_initialized()) {
        wio_shmem_check(waitio_init(0), "shmem_init: starting WaitIO");
        S.owns_waitio = 1;
    }
    wio_shmem_check(waitio_rma_world(&S.world), "shmem_init");
    wio_shmem_check(waitio_group_rank(S.world, &S.me), "shmem_init");
    wio_shmem_check(waitio_group_size(S.world, &S.npes), "shmem_init");
    void *base = NULL;
    size_t size = heap_size_from_env();
    wio_shmem_check(waitio_win_allocate(S.world, size, &S.heap, &base), "shmem_init: the symmetric heap");
    S.heap_base = (uintptr_t)base;
    S.heap_size = size;
    wio_shmem_check(waitio_win_create_data(S.world, &S.data), "shmem_init: the symmetric data segment");
    void *dbase = NULL;
    waitio_win_base(S.data, &dbase, &S.data_size);
    S.data_base = (uintptr_t)dbase;
    S.heap_ptr = calloc((size_t)S.npes, sizeof *S.heap_ptr);
    S.fast_ptr = calloc((size_t)S.npes, sizeof *S.fast_ptr);
    if (!S.heap_ptr || !S.fast_ptr)
        wio_shmem_fatal("shmem_init: out of memory");
    for (int pe = 0; pe < S.npes; pe++)
        S.heap_ptr[pe] = S.fast_ptr[pe] = waitio_win_ptr(S.heap, pe, 0);
    wio_shmem_teams_init(); /* team.c: SHMEM_TEAM_WORLD and SHMEM_TEAM_SHARED (from heap_ptr) */
    wio_shmem_check(waitio_rpc_register(RPC_GLOBAL_EXIT, h_global_exit, NULL), "shmem_init");
    S.ready = 1;
    wio_shmem_check(waitio_mpi_barrier(S.world), "shmem_init: barrier");
}

void shmem_init(void) { init_layer(); }

/* The level granted: shmem_init's is SERIALIZED (what WaitIO is by default); MULTIPLE switches
 * WaitIO to its "multiple" level first (waitio_thread_multiple: every call takes its lock, and
 * blocking waits give it away between progress rounds), which stays on. */
static int thread_level = SHMEM_THREAD_SERIALIZED;

int shmem_init_thread(int requested, int *provided)
{
    int level = requested < SHMEM_THREAD_MULTIPLE ? requested : SHMEM_THREAD_MULTIPLE;
    if (level == SHMEM_THREAD_MULTIPLE)
        wio_shmem_check(waitio_thread_multiple(), "shmem_init_thread");
    init_layer();
    thread_level = level;
    if (provided)
        *provided = level;
    return 0;
}

void shmem_query_thread(int *provided)
{
    if (provided)
        *provided = thread_level;
}

void start_pes(int npes)
{
    (void)npes;
    init_layer();
}

void shmem_finalize(void)
{
    if (!S.ready)
        return;
    shmem_barrier_all();
    if (S.dheap)
        wio_shmem_check(waitio_win_free(S.dheap), "shmem_finalize: the device symmetric heap");
    wio_shmem_check(waitio_win_free(S.heap), "shmem_finalize: the symmetric heap");
    wio_shmem_check(waitio_win_free(S.data), "shmem_finalize: the data segment");
    waitio_rpc_register(RPC_GLOBAL_EXIT, NULL, NULL);
    wio_shmem_teams_fini();
    free(S.heap_ptr);
    free(S.fast_ptr);
    int owns = S.owns_waitio;
    memset(&S, 0, sizeof S);
    if (owns)
        wio_shmem_check(waitio_finalize(), "shmem_finalize");
}

/* How long shmem_global_exit waits for its calls to reach the other PEs. */
#define GLOBAL_EXIT_WAIT 5.0

/* Every other PE is asked to exit with the status (handled in its progress: at once with a
 * progress thread, else at its next OpenSHMEM call). This one waits, up to GLOBAL_EXIT_WAIT
 * seconds, until each call has ended — the PE exited (its connection ended: a peer error) or the
 * call failed — so that a call still queued behind a connection being set up is not lost when
 * this process exits; then it exits. */
void shmem_global_exit(int status)
{
    fflush(NULL);
    waitio_req_t *reqs = S.ready ? calloc((size_t)S.npes, sizeof *reqs) : NULL;
    if (S.ready) {
        int pending = 0;
        for (int pe = 0; pe < S.npes; pe++) {
            if (pe == S.me)
                continue;
            if (reqs && waitio_rpc(S.world, pe, RPC_GLOBAL_EXIT, &status, sizeof status, NULL, 0, &reqs[pe]) == 0)
                pending++;
            else
                (void)waitio_rpc_ff(S.world, pe, RPC_GLOBAL_EXIT, &status, sizeof status);
        }
        for (double t0 = waitio_mpi_wtime(); pending > 0 && waitio_mpi_wtime() - t0 < GLOBAL_EXIT_WAIT;) {
            for (int pe = 0; pe < S.npes; pe++) {
                int done = 0;
                if (!reqs[pe].internal)
                    continue;
                (void)waitio_test(&reqs[pe], &done); /* its error is the PE's exit: expected */
                pending -= reqs[pe].internal == NULL;  /* ended, with a reply or an error */
            }
            sched_yield();
        }
        for (int i = 0; i < 100; i++)
            (void)waitio_progress();
    }
    free(reqs);
    _exit(status);
}

int shmem_my_pe(void) { return S.ready ? S.me : -1; }
int shmem_n_pes(void) { return S.ready ? S.npes : -1; }
int _my_pe(void) { return shmem_my_pe(); }
int _num_pes(void) { return shmem_n_pes(); }
int shmem_num_pes(void) { return shmem_n_pes(); }

int shmem_pe_accessible(int pe)
{
    if (!S.ready || (unsigned)pe >= (unsigned)S.npes)
        return 0;
    return waitio_get(S.heap, pe, 0, NULL, 0) == 0;
}

int shmem_addr_accessible(const void *addr, int pe)
{
    waitio_win_t w;
    size_t off;
    if (!S.ready || (unsigned)pe >= (unsigned)S.npes || wio_shmem_resolve(addr, 1, &w, &off) == WIO_SYM_NONE)
        return 0;
    return waitio_get(w, pe, off, NULL, 0) == 0; /* the data window refuses another executable */
}

void *shmem_ptr(const void *dest, int pe)
{
    if (!S.ready || (unsigned)pe >= (unsigned)S.npes)
        return NULL;
    /* what was mapped at shmem_init (SHMEM_TEAM_SHARED's rule), not what was mapped since */
    uintptr_t hoff = (uintptr_t)dest - S.heap_base;
    if (hoff < S.heap_size && S.heap_ptr[pe])
        return S.heap_ptr[pe] + hoff;
    waitio_win_t w;
    size_t off;
    if (pe == S.me && wio_shmem_resolve(dest, 1, &w, &off) != WIO_SYM_NONE)
        return (void *)dest;
    return NULL;
}

void shmem_info_get_version(int *major, int *minor)
{
    if (major)
        *major = SHMEM_MAJOR_VERSION;
    if (minor)
        *minor = SHMEM_MINOR_VERSION;
}

void shmem_info_get_name(char *name)
{
    if (name)
        snprintf(name, SHMEM_MAX_NAME_LEN, "%s", SHMEM_VENDOR_STRING);
}

/* ---- symmetric heap ------------------------------------------------------------------------ */

/* Alignments up to a page hold on every PE: heap parts start on pages. Above that, shmem_align
 * can give what every PE's heap base is a multiple of: window.c aligns heap mappings, and
 * heap_size_from_env rounds the size so that each part of a host's shared segment starts on a
 * multiple of 2 MiB (or of the whole heap when it is smaller). The least over the PEs of the
 * largest power of two dividing the base: a collective, which shmem_align is (every PE calls it
 * with the same arguments), so it is asked each time an alignment above a page is. */
#define HEAP_PAGE_ALIGN 4096u

static uint64_t heap_align_limit(uintptr_t heap_base)
{
    uint64_t base = (uint64_t)heap_base, mine = base & (~base + 1), least = 0;
    wio_shmem_check(waitio_mpi_allreduce(&mine, &least, 1, WAITIO_MPI_UINT64_T, WAITIO_MPI_MIN, S.world),
                    "shmem_align: agreeing on the heap's alignment");
    return least;
}

/* ---- the device symmetric heap ---- */

/* WAITIO_SHMEM_HEAP=device: every allocation from the device heap (read once). */
static int default_device(void)
{
    static int kind = -1;
    if (kind < 0) {
        const char *v = waitio_adapter_getenv("WAITIO_SHMEM_HEAP");
        if (v && *v && strcmp(v, "host") != 0 && strcmp(v, "device") != 0)
            wio_shmem_fatal("WAITIO_SHMEM_HEAP=%s: host or device", v);
        kind = v && strcmp(v, "device") == 0;
    }
    return kind;
}

/* Makes the device heap at the first device allocation: a collective, as every allocation is,
 * so every PE makes it in the same call. 0, or -1 with a message when this system has no CUDA
 * device (every PE agrees: waitio_win_allocate_ex fails on all of them). */
static int dheap_open(const char *what)
{
    if (S.dheap)
        return 0;
    size_t size = size_setting("WAITIO_SHMEM_DEVICE_SIZE", waitio_adapter_getenv("WAITIO_SHMEM_DEVICE_SIZE"));
    size = heap_rounded(size ? size : DEFAULT_HEAP);
    void *base = NULL;
    int rc = waitio_win_allocate_ex(S.world, size, WAITIO_WIN_DEVICE, &S.dheap, &base);
    if (rc) {
        S.dheap = NULL;
        fprintf(stderr, "shmem: PE %d: %s: no device symmetric heap: %s (%s)\n", S.me, what, waitio_strerror(rc),
                waitio_error_message());
        return -1;
    }
    S.dheap_base = (uintptr_t)base;
    S.dheap_size = size;
    return 0;
}

/* The heap a block is in: the device heap's window and base when ptr is there (else unchanged). */
static void heap_of(const void *ptr, waitio_win_t *w, uintptr_t *base)
{
    uintptr_t a = (uintptr_t)ptr;
    if (S.dheap && a - S.dheap_base < S.dheap_size) {
        *w = S.dheap;
        *base = S.dheap_base;
    }
}

/* A block of the heap (size > 0), or NULL with a message when it is full: the allocator is
 * deterministic, so every PE gets the same answer. */
static void *heap_alloc(size_t size, size_t align, int device, const char *what)
{
    size_t off;
    if (device && dheap_open(what) != 0)
        return NULL;
    int rc = waitio_win_alloc(device ? S.dheap : S.heap, size, align, &off);
    if (rc == WAITIO_ERR_NOMEM) {
        fprintf(stderr, "shmem: PE %d: %s(%zu): the %s symmetric heap is full (%s=%zu)\n", S.me, what, size,
                device ? "device" : "host", device ? "WAITIO_SHMEM_DEVICE_SIZE" : "SHMEM_SYMMETRIC_SIZE",
                device ? S.dheap_size : S.heap_size);
        return NULL;
    }
    wio_shmem_check(rc, what);
    return (void *)((device ? S.dheap_base : S.heap_base) + off);
}

/* OpenSHMEM 1.5: a size of 0 is no action — NULL, and no barrier. Otherwise a barrier on exit,
 * also when the heap is full (every PE returns NULL then). */
static void *heap_collective_alloc(size_t size, size_t align, int device, const char *what)
{
    wio_shmem_need_init();
    if (!size)
        return NULL;
    void *p = heap_alloc(size, align, device, what);
    shmem_barrier_all();
    return p;
}

void *shmem_malloc(size_t size)
{
    return heap_collective_alloc(size, 16, default_device(), "shmem_malloc");
}

/* The standard hints (SHMEM_MALLOC_ATOMICS_REMOTE, SHMEM_MALLOC_SIGNAL_REMOTE, or any other bits)
 * are advice that changes nothing here: atomics and signals work on every heap block alike,
 * through CPU atomics on a host and WaitIO's atomics otherwise. SHMEMX_MALLOC_DEVICE is not
 * advice: the block is in the device heap. */
void *shmem_malloc_with_hints(size_t size, long hints)
{
    int device = (hints & SHMEMX_MALLOC_DEVICE) || default_device();
    return heap_collective_alloc(size, 16, device, "shmem_malloc_with_hints");
}

void *shmem_align(size_t alignment, size_t size)
{
    wio_shmem_need_init();
    if (!size)
        return NULL;
    if (!alignment || (alignment & (alignment - 1))) {
        fprintf(stderr, "shmem: PE %d: shmem_align(%zu, %zu): the alignment is not a power of two\n", S.me,
                alignment, size);
        return NULL;
    }
    int device = default_device();
    if (device && dheap_open("shmem_align") != 0) {
        shmem_barrier_all();
        return NULL;
    }
    if (alignment > HEAP_PAGE_ALIGN) {
        uint64_t limit = heap_align_limit(device ? S.dheap_base : S.heap_base);
        if (alignment > limit) {
            fprintf(stderr, "shmem: PE %d: shmem_align(%zu, %zu): the symmetric heap serves alignments up to "
                    "%llu bytes on every PE\n", S.me, alignment, size, (unsigned long long)limit);
            return NULL;
        }
    }
    return heap_collective_alloc(size, alignment, device, "shmem_align");
}

static void calloc_device_zero(void *p, size_t n)
{
    size_t step = n < ((size_t)1 << 20) ? n : (size_t)1 << 20;
    void *zeros = calloc(1, step);
    if (!zeros)
        wio_shmem_fatal("shmem_calloc: out of memory");
    for (size_t at = 0; at < n; at += step)
        wio_shmem_check(waitio_put(S.dheap, S.me, (uintptr_t)p - S.dheap_base + at, zeros,
                                   n - at < step ? n - at : step), "shmem_calloc (device heap)");
    free(zeros);
}

void *shmem_calloc(size_t count, size_t size)
{
    wio_shmem_need_init();
    if (!count || !size)
        return NULL;
    if (count > SIZE_MAX / size) {
        fprintf(stderr, "shmem: PE %d: shmem_calloc(%zu, %zu): the size overflows\n", S.me, count, size);
        return NULL;
    }
    int device = default_device();
    void *p = heap_alloc(count * size, 16, device, "shmem_calloc");
    if (p && device) /* GPU memory: zeroed by a put to this PE (WaitIO copies it with the GPU) */
        calloc_device_zero(p, count * size);
    else if (p)
        memset(p, 0, count * size);
    shmem_barrier_all();
    return p;
}

void shmem_free(void *ptr)
{
    if (!ptr) /* no action, no barrier */
        return;
    shmem_barrier_all();
    waitio_win_t w = S.heap;
    uintptr_t base = S.heap_base;
    heap_of(ptr, &w, &base);
    wio_shmem_check(waitio_win_dealloc(w, (uintptr_t)ptr - base), "shmem_free");
}

/* NULL: shmem_malloc; size 0: shmem_free. Otherwise barriers on entry (nobody still uses the old
 * block) and exit; when the heap cannot hold the new size, NULL and the old block unchanged. */
void *shmem_realloc(void *ptr, size_t size)
{
    if (!ptr)
        return shmem_malloc(size);
    if (!size) {
        shmem_free(ptr);
        return NULL;
    }
    shmem_barrier_all();
    size_t off;
    waitio_win_t w = S.heap;
    uintptr_t base = S.heap_base;
    heap_of(ptr, &w, &base);
    int rc = waitio_win_realloc(w, (uintptr_t)ptr - base, size, 16, &off);
    if (rc == WAITIO_ERR_NOMEM)
        fprintf(stderr, "shmem: PE %d: shmem_realloc(%zu): the symmetric heap is full\n", S.me, size);
    else
        wio_shmem_check(rc, "shmem_realloc");
    shmem_barrier_all();
    return rc ? NULL : (void *)(base + off);
}

/* the deprecated (1.2) names */
void *shmalloc(size_t size) { return shmem_malloc(size); }
void shfree(void *ptr) { shmem_free(ptr); }
void *shrealloc(void *ptr, size_t size) { return shmem_realloc(ptr, size); }
void *shmemalign(size_t alignment, size_t size) { return shmem_align(alignment, size); }

/* ---- ordering and barriers (shmem_quiet and shmem_fence: ctx.c, per context) ------------------- */

void shmem_barrier_all(void)
{
    wio_shmem_need_init();
    shmem_quiet();
    wio_shmem_check(waitio_mpi_barrier(S.world), "shmem_barrier_all");
}

void shmem_sync_all(void)
{
    wio_shmem_need_init();
    wio_shmem_check(waitio_mpi_barrier(S.world), "shmem_sync_all");
}

/* ---- RMA: ctx.c (every context, the default one included) -------------------------------- */
