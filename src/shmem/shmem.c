/*
 * shmem.c — OpenSHMEM set-up and queries, the symmetric heap (a deterministic allocator in
 * WaitIO's heap window, so the same calls on every PE give the same offsets), RMA (memcpy to a
 * mapped heap part, else waitio_put/waitio_get), ordering, barriers and shmem_global_exit.
 */
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "shmem/shmem_internal.h"

#define DEFAULT_HEAP (64u << 20)
#define RPC_GLOBAL_EXIT 0xff00 /* WaitIO's own handler ids start at 0xff00 */

wio_shmem_state wio_shmem;
struct waitio_shmem_team waitio_shmem_team_world, waitio_shmem_team_shared;
struct waitio_shmem_ctx waitio_shmem_ctx_default = {.options = 0, .team = &waitio_shmem_team_world};

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

static size_t heap_size_from_env(void)
{
    const char *v = getenv("SHMEM_SYMMETRIC_SIZE");
    if (!v || !*v)
        v = getenv("WAITIO_SYMMETRIC_SIZE");
    if (!v || !*v)
        return DEFAULT_HEAP;
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
        wio_shmem_fatal("SHMEM_SYMMETRIC_SIZE=%s is not a size (bytes, with an optional K, M or G)", v);
    return (size_t)(x * mult);
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
    S.shared = calloc((size_t)S.npes, sizeof *S.shared);
    if (!S.heap_ptr || !S.shared)
        wio_shmem_fatal("shmem_init: out of memory");
    for (int pe = 0; pe < S.npes; pe++) {
        S.heap_ptr[pe] = waitio_win_ptr(S.heap, pe, 0);
        if (S.heap_ptr[pe]) {
            if (pe == S.me)
                S.my_shared = S.nshared;
            S.shared[S.nshared++] = pe;
        }
    }
    wio_shmem_check(waitio_rpc_register(RPC_GLOBAL_EXIT, h_global_exit, NULL), "shmem_init");
    S.ready = 1;
    wio_shmem_check(waitio_mpi_barrier(S.world), "shmem_init: barrier");
}

void shmem_init(void) { init_layer(); }

int shmem_init_thread(int requested, int *provided)
{
    init_layer();
    if (provided)
        *provided = requested < SHMEM_THREAD_SERIALIZED ? requested : SHMEM_THREAD_SERIALIZED;
    return 0;
}

void shmem_query_thread(int *provided)
{
    if (provided)
        *provided = SHMEM_THREAD_SERIALIZED;
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
    wio_shmem_check(waitio_win_free(S.heap), "shmem_finalize: the symmetric heap");
    wio_shmem_check(waitio_win_free(S.data), "shmem_finalize: the data segment");
    waitio_rpc_register(RPC_GLOBAL_EXIT, NULL, NULL);
    free(S.heap_ptr);
    free(S.shared);
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
    uint8_t *p = wio_shmem_direct(dest, 1, pe);
    if (p)
        return p;
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

int shmem_team_my_pe(shmem_team_t team)
{
    if (!S.ready)
        return -1;
    if (team == SHMEM_TEAM_WORLD)
        return S.me;
    if (team == SHMEM_TEAM_SHARED)
        return S.my_shared;
    return -1;
}

int shmem_team_n_pes(shmem_team_t team)
{
    if (!S.ready)
        return -1;
    if (team == SHMEM_TEAM_WORLD)
        return S.npes;
    if (team == SHMEM_TEAM_SHARED)
        return S.nshared;
    return -1;
}

int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team)
{
    if (!S.ready || src_pe < 0 || src_pe >= shmem_team_n_pes(src_team))
        return -1;
    int world = src_team == SHMEM_TEAM_WORLD ? src_pe : src_team == SHMEM_TEAM_SHARED ? S.shared[src_pe] : -1;
    if (world < 0 || dest_team == SHMEM_TEAM_WORLD)
        return world;
    if (dest_team == SHMEM_TEAM_SHARED)
        for (int i = 0; i < S.nshared; i++)
            if (S.shared[i] == world)
                return i;
    return -1;
}

/* ---- symmetric heap ------------------------------------------------------------------------ */

static void *heap_alloc(size_t size, size_t align, const char *what)
{
    wio_shmem_need_init();
    void *p = NULL;
    if (size) {
        size_t off;
        int rc = waitio_win_alloc(S.heap, size, align, &off);
        if (rc == WAITIO_ERR_NOMEM)
            fprintf(stderr, "shmem: PE %d: %s(%zu): the symmetric heap is full (SHMEM_SYMMETRIC_SIZE=%zu)\n",
                    S.me, what, size, S.heap_size);
        else
            wio_shmem_check(rc, what);
        if (!rc)
            p = (void *)(S.heap_base + off);
    }
    return p;
}

void *shmem_malloc(size_t size)
{
    void *p = heap_alloc(size, 16, "shmem_malloc");
    shmem_barrier_all();
    return p;
}

void *shmem_align(size_t alignment, size_t size)
{
    if (!alignment || (alignment & (alignment - 1)))
        return NULL;
    void *p = heap_alloc(size, alignment, "shmem_align");
    shmem_barrier_all();
    return p;
}

void *shmem_calloc(size_t count, size_t size)
{
    void *p = count && size && count <= SIZE_MAX / size ? heap_alloc(count * size, 16, "shmem_calloc") : NULL;
    if (p)
        memset(p, 0, count * size);
    shmem_barrier_all();
    return p;
}

void shmem_free(void *ptr)
{
    shmem_barrier_all();
    if (ptr)
        wio_shmem_check(waitio_win_dealloc(S.heap, (uintptr_t)ptr - S.heap_base), "shmem_free");
}

void *shmem_realloc(void *ptr, size_t size)
{
    if (!ptr)
        return shmem_malloc(size);
    if (!size) {
        shmem_free(ptr);
        return NULL;
    }
    shmem_barrier_all(); /* nobody still reads or writes the old block */
    size_t off;
    int rc = waitio_win_realloc(S.heap, (uintptr_t)ptr - S.heap_base, size, 16, &off);
    if (rc == WAITIO_ERR_NOMEM)
        fprintf(stderr, "shmem: PE %d: shmem_realloc(%zu): the symmetric heap is full\n", S.me, size);
    else
        wio_shmem_check(rc, "shmem_realloc");
    shmem_barrier_all();
    return rc ? NULL : (void *)(S.heap_base + off);
}

void *shmalloc(size_t size) { return shmem_malloc(size); }
void shfree(void *ptr) { shmem_free(ptr); }

/* ---- ordering and barriers ------------------------------------------------------------------ */

void shmem_quiet(void)
{
    if (S.pending) {
        S.pending = 0;
        wio_shmem_check(waitio_quiet(), "shmem_quiet");
    }
    atomic_thread_fence(memory_order_seq_cst);
}

void shmem_fence(void)
{
    if (S.pending)
        wio_shmem_check(waitio_fence(), "shmem_fence");
    atomic_thread_fence(memory_order_seq_cst);
}

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

int shmem_team_sync(shmem_team_t team)
{
    if (team != SHMEM_TEAM_WORLD)
        return -1;
    shmem_sync_all();
    return 0;
}

/* ---- RMA ------------------------------------------------------------------------------------ */

static void put_slow(void *dest, const void *source, size_t n, int pe, int nbi, const char *what)
{
    waitio_win_t w;
    size_t off;
    wio_shmem_sym(dest, n, pe, what, &w, &off);
    S.pending = 1;
    wio_shmem_check(nbi ? waitio_put_nbi(w, pe, off, source, n) : waitio_put(w, pe, off, source, n), what);
}

static void get_slow(void *dest, const void *source, size_t n, int pe, int nbi, const char *what)
{
    waitio_win_t w;
    size_t off;
    wio_shmem_sym(source, n, pe, what, &w, &off);
    if (nbi)
        S.pending = 1;
    wio_shmem_check(nbi ? waitio_get_nbi(w, pe, off, dest, n) : waitio_get(w, pe, off, dest, n), what);
}

void shmem_putmem(void *dest, const void *source, size_t nelems, int pe)
{
    uint8_t *p = wio_shmem_direct(dest, nelems, pe);
    if (WIO_SH_LIKELY(p != NULL)) {
        memcpy(p, source, nelems);
        return;
    }
    put_slow(dest, source, nelems, pe, 0, "shmem_putmem");
}

void shmem_getmem(void *dest, const void *source, size_t nelems, int pe)
{
    const uint8_t *p = wio_shmem_direct(source, nelems, pe);
    if (WIO_SH_LIKELY(p != NULL)) {
        memcpy(dest, p, nelems);
        return;
    }
    get_slow(dest, source, nelems, pe, 0, "shmem_getmem");
}

void shmem_putmem_nbi(void *dest, const void *source, size_t nelems, int pe)
{
    uint8_t *p = wio_shmem_direct(dest, nelems, pe);
    if (p) {
        memcpy(p, source, nelems);
        return;
    }
    put_slow(dest, source, nelems, pe, 1, "shmem_putmem_nbi");
}

void shmem_getmem_nbi(void *dest, const void *source, size_t nelems, int pe)
{
    const uint8_t *p = wio_shmem_direct(source, nelems, pe);
    if (p) {
        memcpy(dest, p, nelems);
        return;
    }
    get_slow(dest, source, nelems, pe, 1, "shmem_getmem_nbi");
}

/* Strided, strides in elements of `size` bytes. */
static void strided(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, size_t size,
                    int pe, int is_put)
{
    if (!nelems)
        return;
    const void *remote = is_put ? dest : source;
    ptrdiff_t rstride = is_put ? dst : sst, lstride = is_put ? sst : dst;
    const uint8_t *first = remote, *last = (const uint8_t *)remote + (ptrdiff_t)(nelems - 1) * rstride * (ptrdiff_t)size;
    const uint8_t *lo = first < last ? first : last;
    size_t span = (size_t)((first < last ? last : first) - lo) + size;
    uint8_t *p = wio_shmem_direct(lo, span, pe);
    uint8_t *local = is_put ? (uint8_t *)source : (uint8_t *)dest;
    if (p) {
        uint8_t *r = p + (first - lo);
        for (size_t i = 0; i < nelems; i++) {
            uint8_t *rr = r + (ptrdiff_t)i * rstride * (ptrdiff_t)size, *ll = local + (ptrdiff_t)i * lstride * (ptrdiff_t)size;
            memcpy(is_put ? rr : ll, is_put ? ll : rr, size);
        }
        return;
    }
    waitio_win_t w;
    size_t off;
    wio_shmem_sym(lo, span, pe, is_put ? "shmem_iput" : "shmem_iget", &w, &off);
    off += (size_t)(first - lo);
    if (is_put)
        S.pending = 1;
    int rc = is_put ? waitio_put_strided(w, pe, off, rstride * (ptrdiff_t)size, local, lstride * (ptrdiff_t)size, size, nelems)
                    : waitio_get_strided(w, pe, off, rstride * (ptrdiff_t)size, local, lstride * (ptrdiff_t)size, size, nelems);
    wio_shmem_check(rc, is_put ? "shmem_iput" : "shmem_iget");
}

#define DEF_SIZE(BITS, BYTES)                                                                           \
    void shmem_put##BITS(void *dest, const void *source, size_t nelems, int pe)                         \
    {                                                                                                   \
        shmem_putmem(dest, source, nelems * BYTES, pe);                                                 \
    }                                                                                                   \
    void shmem_get##BITS(void *dest, const void *source, size_t nelems, int pe)                         \
    {                                                                                                   \
        shmem_getmem(dest, source, nelems * BYTES, pe);                                                 \
    }                                                                                                   \
    void shmem_put##BITS##_nbi(void *dest, const void *source, size_t nelems, int pe)                   \
    {                                                                                                   \
        shmem_putmem_nbi(dest, source, nelems * BYTES, pe);                                             \
    }                                                                                                   \
    void shmem_get##BITS##_nbi(void *dest, const void *source, size_t nelems, int pe)                   \
    {                                                                                                   \
        shmem_getmem_nbi(dest, source, nelems * BYTES, pe);                                             \
    }                                                                                                   \
    void shmem_iput##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe) \
    {                                                                                                   \
        strided(dest, source, dst, sst, nelems, BYTES, pe, 1);                                          \
    }                                                                                                   \
    void shmem_iget##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe) \
    {                                                                                                   \
        strided(dest, source, dst, sst, nelems, BYTES, pe, 0);                                          \
    }
WAITIO_SHMEM_SIZES(DEF_SIZE)

#define DEF_RMA(T, N)                                                                                   \
    void shmem_##N##_put(T *dest, const T *source, size_t nelems, int pe)                               \
    {                                                                                                   \
        shmem_putmem(dest, source, nelems * sizeof(T), pe);                                             \
    }                                                                                                   \
    void shmem_##N##_get(T *dest, const T *source, size_t nelems, int pe)                               \
    {                                                                                                   \
        shmem_getmem(dest, source, nelems * sizeof(T), pe);                                             \
    }                                                                                                   \
    void shmem_##N##_put_nbi(T *dest, const T *source, size_t nelems, int pe)                           \
    {                                                                                                   \
        shmem_putmem_nbi(dest, source, nelems * sizeof(T), pe);                                         \
    }                                                                                                   \
    void shmem_##N##_get_nbi(T *dest, const T *source, size_t nelems, int pe)                           \
    {                                                                                                   \
        shmem_getmem_nbi(dest, source, nelems * sizeof(T), pe);                                         \
    }                                                                                                   \
    void shmem_##N##_p(T *dest, T value, int pe)                                                        \
    {                                                                                                   \
        T *p = (T *)(void *)wio_shmem_direct(dest, sizeof(T), pe);                                      \
        if (p)                                                                                          \
            *p = value;                                                                                 \
        else                                                                                            \
            put_slow(dest, &value, sizeof(T), pe, 0, "shmem_p");                                        \
    }                                                                                                   \
    T shmem_##N##_g(const T *source, int pe)                                                            \
    {                                                                                                   \
        const T *p = (const T *)(const void *)wio_shmem_direct(source, sizeof(T), pe);                  \
        if (p)                                                                                          \
            return *p;                                                                                  \
        T v;                                                                                            \
        get_slow(&v, source, sizeof(T), pe, 0, "shmem_g");                                              \
        return v;                                                                                       \
    }                                                                                                   \
    void shmem_##N##_iput(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe) \
    {                                                                                                   \
        strided(dest, source, dst, sst, nelems, sizeof(T), pe, 1);                                      \
    }                                                                                                   \
    void shmem_##N##_iget(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe) \
    {                                                                                                   \
        strided(dest, source, dst, sst, nelems, sizeof(T), pe, 0);                                      \
    }                                                                                                   \
    void shmem_##N##_put_signal(T *dest, const T *source, size_t nelems, uint64_t *sig_addr,            \
                                uint64_t signal, int sig_op, int pe)                                    \
    {                                                                                                   \
        shmem_putmem_signal(dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe);            \
    }                                                                                                   \
    void shmem_##N##_put_signal_nbi(T *dest, const T *source, size_t nelems, uint64_t *sig_addr,        \
                                    uint64_t signal, int sig_op, int pe)                                \
    {                                                                                                   \
        shmem_putmem_signal_nbi(dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe);        \
    }
WAITIO_SHMEM_RMA_TYPES(DEF_RMA)
