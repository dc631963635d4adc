/*
 * ctx.c — OpenSHMEM contexts (1.5 section 9.5) and the RMA routines of every context: put/get
 * (bytes, sizes, types), their _nbi forms, p/g, strided iput/iget, put-with-signal, and the
 * per-context ordering calls (fence, quiet). The routines without a context are the same code on
 * SHMEM_CTX_DEFAULT, with the mapped-heap fast path inline (a memcpy, no call into WaitIO).
 *
 * What a context tracks (struct waitio_shmem_ctx, shmem_internal.h): only operations that went
 * through WaitIO and are not complete when their call returns. Every context counts them, so a
 * quiet with nothing started since the last one is two loads and a fence. The default context's
 * quiet is one waitio_quiet (which completes every target at once). Any other context records
 * the world PEs it sent to since its last quiet; its quiet flushes those targets only
 * (waitio_flush), so it does not wait for what other contexts have in flight elsewhere. Both
 * keep the requests of their fetching _nbi atomics (amo.c), waited for by their quiet.
 *
 * Threads: a PRIVATE context is used by one thread and takes no lock. A shared one (the default
 * included) takes its mutex only to add a new target or a request and in its quiet; an
 * operation on a target already recorded costs one fence and the count. The order "start the
 * operation, then look at the mark, then count" here and "read the count, clear the mark, then
 * flush" in quiet (fences between), with `quieted` raised only when a quiet is done, makes any
 * operation either seen by a running quiet's flush or left for the next quiet.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include "shmem/shmem_internal.h"

struct waitio_shmem_ctx waitio_shmem_ctx_default = {
    .options = 0, .team = &waitio_shmem_team_world, .global = 1, .lock = PTHREAD_MUTEX_INITIALIZER};

/* Always through the public symbol (its GOT entry): a program's copy relocation of
 * SHMEM_CTX_DEFAULT must be the very object the context-free calls use. */
#define DEFCTX (&waitio_shmem_ctx_default)
/* The fast paths are inlined into each public name, whatever the compiler's size heuristics. */
#if defined(__GNUC__)
#define HOT static inline __attribute__((always_inline))
#else
#define HOT static inline
#endif

/* ---- context state ---------------------------------------------------------------------------- */

static int is_shared(const struct waitio_shmem_ctx *c) { return !(c->options & SHMEM_CTX_PRIVATE); }

static void ctx_lock(struct waitio_shmem_ctx *c)
{
    if (is_shared(c))
        pthread_mutex_lock(&c->lock);
}

static void ctx_unlock(struct waitio_shmem_ctx *c)
{
    if (is_shared(c))
        pthread_mutex_unlock(&c->lock);
}

int wio_ctx_world_pe_slow(struct waitio_shmem_ctx *c, int pe, const char *what)
{
    int w = wio_shmem_team_world_pe(c->team, pe);
    if (w < 0)
        wio_shmem_fatal("%s: PE %d is outside the context's team (0..%d)", what, pe, c->team->size - 1);
    return w;
}

static void note_target(struct waitio_shmem_ctx *c, int pe)
{
    if (is_shared(c))
        atomic_thread_fence(memory_order_seq_cst); /* the operation started before the mark is read */
    if (atomic_load_explicit(&c->mark[pe], memory_order_relaxed))
        return;
    ctx_lock(c);
    if (!atomic_load_explicit(&c->mark[pe], memory_order_relaxed)) {
        int n = atomic_load_explicit(&c->ntargets, memory_order_relaxed);
        c->targets[n] = pe;
        atomic_store(&c->mark[pe], 1);
        atomic_store(&c->ntargets, n + 1);
    }
    ctx_unlock(c);
}

void wio_ctx_note(struct waitio_shmem_ctx *c, int pe)
{
    if (!c->global)
        note_target(c, pe);
    atomic_fetch_add(&c->issued, 1); /* after: a quiet that reads the count covers the operation */
}

int wio_ctx_clean(struct waitio_shmem_ctx *c, int pe)
{
    if (c->global)
        return atomic_load(&c->issued) == atomic_load(&c->quieted);
    return !atomic_load(&c->mark[pe]);
}

/* Called locked: drops the requests that completed; the survivors keep their order. */
static void sweep_reqs(struct waitio_shmem_ctx *c)
{
    size_t n = atomic_load_explicit(&c->nreqs, memory_order_relaxed), k = 0;
    for (size_t i = 0; i < n; i++) {
        int done = 0;
        wio_shmem_check(waitio_test(&c->reqs[i], &done), "fetching non-blocking atomic");
        if (!done)
            c->reqs[k++] = c->reqs[i];
    }
    atomic_store(&c->nreqs, k);
}

void wio_ctx_add_req(struct waitio_shmem_ctx *c, const waitio_req_t *req)
{
    if (!req->internal) /* completed at once (its result is already written) */
        return;
    ctx_lock(c);
    size_t n = atomic_load_explicit(&c->nreqs, memory_order_relaxed);
    if (n == c->reqcap) {
        if (n >= 64) { /* full: drop those complete first */
            sweep_reqs(c);
            n = atomic_load_explicit(&c->nreqs, memory_order_relaxed);
        }
        if (n > c->reqcap / 2 || !c->reqcap) { /* over half still pending: grow (sweeps amortised) */
            size_t cap = c->reqcap ? 2 * c->reqcap : 16;
            waitio_req_t *r = realloc(c->reqs, cap * sizeof *r);
            if (!r)
                wio_shmem_fatal("fetching non-blocking atomic: out of memory");
            c->reqs = r;
            c->reqcap = cap;
        }
    }
    c->reqs[n] = *req;
    atomic_store(&c->nreqs, n + 1);
    ctx_unlock(c);
    atomic_fetch_add(&c->issued, 1);
}

/* Called locked: waits for every request kept. */
static void wait_reqs(struct waitio_shmem_ctx *c, const char *what)
{
    size_t n = atomic_load_explicit(&c->nreqs, memory_order_relaxed);
    for (size_t i = 0; i < n; i++)
        wio_shmem_check(waitio_wait(&c->reqs[i]), what);
    atomic_store(&c->nreqs, 0);
}

/* The targets of a non-default context: each flushed, its mark cleared first. */
static void flush_targets(struct waitio_shmem_ctx *c, const char *what)
{
    ctx_lock(c); /* held throughout: a concurrent quiet returns only after these flushes */
    int n = atomic_load_explicit(&c->ntargets, memory_order_relaxed);
    for (int i = 0; i < n; i++) {
        int pe = c->targets[i];
        atomic_store(&c->mark[pe], 0);
        atomic_thread_fence(memory_order_seq_cst); /* cleared before the flush looks */
        wio_shmem_check(waitio_flush(S.heap, pe), what);
    }
    atomic_store(&c->ntargets, 0);
    ctx_unlock(c);
}

/* Completes what c started before `issued` read s; then no later quiet needs to look again
 * unless something was started since. */
static void quiet_slow(struct waitio_shmem_ctx *c, unsigned long s, const char *what)
{
    if (c->global)
        wio_shmem_check(waitio_quiet(), what);
    else
        flush_targets(c, what);
    if (atomic_load(&c->nreqs)) {
        ctx_lock(c);
        wait_reqs(c, what);
        ctx_unlock(c);
    }
    /* raise quieted to s (another thread's quiet may have raised it further meanwhile) */
    unsigned long q = atomic_load(&c->quieted);
    while ((long)(s - q) > 0 && !atomic_compare_exchange_weak(&c->quieted, &q, s)) {
    }
}

/* The fast path: nothing started since the last quiet (the common case) costs two loads. */
HOT void ctx_quiet(struct waitio_shmem_ctx *c, const char *what)
{
    unsigned long s = atomic_load(&c->issued);
    if (s != atomic_load(&c->quieted))
        quiet_slow(c, s, what);
    atomic_thread_fence(memory_order_seq_cst);
}

HOT void ctx_fence(struct waitio_shmem_ctx *c, const char *what)
{
    if (atomic_load(&c->issued) != atomic_load(&c->quieted))
        wio_shmem_check(waitio_fence(), what);
    atomic_thread_fence(memory_order_seq_cst);
}

void shmem_quiet(void) { ctx_quiet(DEFCTX, "shmem_quiet"); }
void shmem_fence(void) { ctx_fence(DEFCTX, "shmem_fence"); }

void shmem_ctx_quiet(shmem_ctx_t ctx)
{
    if (ctx)
        ctx_quiet(ctx, "shmem_ctx_quiet");
}

void shmem_ctx_fence(shmem_ctx_t ctx)
{
    if (ctx)
        ctx_fence(ctx, "shmem_ctx_fence");
}

/* ---- creation and destruction ------------------------------------------------------------------ */

static int ctx_new(struct waitio_shmem_team *team, long options, shmem_ctx_t *ctx)
{
    if (!ctx)
        return -1;
    *ctx = SHMEM_CTX_INVALID;
    wio_shmem_need_init();
    if (!team || (options & ~(SHMEM_CTX_SERIALIZED | SHMEM_CTX_PRIVATE | SHMEM_CTX_NOSTORE)))
        return -1;
    struct waitio_shmem_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return -1;
    c->options = options;
    c->team = team;
    c->pes = team->pes;
    c->mark = calloc((size_t)S.npes, sizeof *c->mark);
    c->targets = malloc((size_t)S.npes * sizeof *c->targets);
    if (!c->mark || !c->targets || pthread_mutex_init(&c->lock, NULL)) {
        free(c->mark);
        free(c->targets);
        free(c);
        return -1;
    }
    *ctx = c;
    return 0;
}

int shmem_ctx_create(long options, shmem_ctx_t *ctx) { return ctx_new(SHMEM_TEAM_WORLD, options, ctx); }

int shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t *ctx)
{
    return ctx_new(team, options, ctx);
}

void shmem_ctx_destroy(shmem_ctx_t ctx)
{
    if (!ctx)
        return;
    ctx_quiet(ctx, "shmem_ctx_destroy");
    if (ctx == DEFCTX) /* not the user's to destroy: completing it is all that is done */
        return;
    pthread_mutex_destroy(&ctx->lock);
    free(ctx->mark);
    free(ctx->targets);
    free(ctx->reqs);
    free(ctx);
}

int shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t *team)
{
    if (!team)
        return -1;
    *team = ctx ? ctx->team : SHMEM_TEAM_INVALID;
    return ctx ? 0 : -1;
}

/* ---- RMA ------------------------------------------------------------------------------------ */

static void put_slow(shmem_ctx_t c, void *dest, const void *source, size_t n, int pe, int nbi, const char *what)
{
    if (!n) /* whatever the pointers */
        return;
    waitio_win_t w;
    size_t off;
    wio_shmem_sym(dest, n, pe, what, &w, &off);
    wio_shmem_check(nbi ? waitio_put_nbi(w, pe, off, source, n) : waitio_put(w, pe, off, source, n), what);
    wio_ctx_note(c, pe);
    wio_shmem_learn(w, pe);
}

static void get_slow(shmem_ctx_t c, void *dest, const void *source, size_t n, int pe, int nbi, const char *what)
{
    if (!n)
        return;
    waitio_win_t w;
    size_t off;
    wio_shmem_sym(source, n, pe, what, &w, &off);
    wio_shmem_check(nbi ? waitio_get_nbi(w, pe, off, dest, n) : waitio_get(w, pe, off, dest, n), what);
    if (nbi)
        wio_ctx_note(c, pe);
    wio_shmem_learn(w, pe);
}

/* pe: a world PE. A mapped heap part: memcpy, complete at once. */
HOT void putmem(shmem_ctx_t c, void *dest, const void *source, size_t n, int pe, int nbi,
                          const char *what)
{
    uint8_t *p = wio_shmem_direct(dest, n, pe);
    if (WIO_SH_LIKELY(p != NULL)) {
        if (n)
            memcpy(p, source, n);
        return;
    }
    put_slow(c, dest, source, n, pe, nbi, what);
}

HOT void getmem(shmem_ctx_t c, void *dest, const void *source, size_t n, int pe, int nbi,
                          const char *what)
{
    const uint8_t *p = wio_shmem_direct(source, n, pe);
    if (WIO_SH_LIKELY(p != NULL)) {
        if (n)
            memcpy(dest, p, n);
        return;
    }
    get_slow(c, dest, source, n, pe, nbi, what);
}

/* Strided, strides in elements of `size` bytes. */
static void strided(shmem_ctx_t c, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,
                    size_t size, int pe, int is_put)
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
    int rc = is_put ? waitio_put_strided(w, pe, off, rstride * (ptrdiff_t)size, local, lstride * (ptrdiff_t)size, size, nelems)
                    : waitio_get_strided(w, pe, off, rstride * (ptrdiff_t)size, local, lstride * (ptrdiff_t)size, size, nelems);
    wio_shmem_check(rc, is_put ? "shmem_iput" : "shmem_iget");
    if (is_put)
        wio_ctx_note(c, pe);
}

/* Put-with-signal. The data and the signal both in mapped heap parts, with nothing of this
 * context in flight to pe that a later signal could overtake: stores here. Zero bytes: the
 * signal alone (an atomic set or add on the signal word). */
static void put_signal(shmem_ctx_t c, void *dest, const void *source, size_t n, uint64_t *sig_addr,
                       uint64_t signal, int sig_op, int pe, int nbi)
{
    if (sig_op != SHMEM_SIGNAL_SET && sig_op != SHMEM_SIGNAL_ADD)
        wio_shmem_fatal("shmem_put_signal: unknown signal operation %d", sig_op);
    uint8_t *s = wio_shmem_direct(sig_addr, 8, pe);
    uint8_t *d = n ? wio_shmem_direct(dest, n, pe) : NULL;
    if (s && (d || !n) && wio_ctx_clean(c, pe)) {
        if (n)
            memcpy(d, source, n);
        if (sig_op == SHMEM_SIGNAL_SET)
            __atomic_store_n((uint64_t *)(void *)s, signal, __ATOMIC_RELEASE);
        else
            __atomic_fetch_add((uint64_t *)(void *)s, signal, __ATOMIC_RELEASE);
        return;
    }
    waitio_win_t w, sw;
    size_t off, soff;
    wio_shmem_sym(sig_addr, 8, pe, "shmem_put_signal (signal)", &sw, &soff);
    if (!n) {
        int op = sig_op == SHMEM_SIGNAL_SET ? WAITIO_AMO_SET : WAITIO_AMO_ADD;
        wio_shmem_check(waitio_atomic(sw, pe, soff, op, WAITIO_AMO_UINT64, &signal, NULL, NULL), "shmem_put_signal");
        wio_ctx_note(c, pe);
        return;
    }
    wio_shmem_sym(dest, n, pe, "shmem_put_signal", &w, &off);
    int op = sig_op == SHMEM_SIGNAL_SET ? WAITIO_SIGNAL_SET : WAITIO_SIGNAL_ADD;
    wio_shmem_check(nbi ? waitio_put_signal_nbi(w, pe, off, source, n, sw, soff, signal, op)
                        : waitio_put_signal(w, pe, off, source, n, sw, soff, signal, op),
                    "shmem_put_signal");
    wio_ctx_note(c, pe);
}

/* ---- the public RMA names ---------------------------------------------------------------------- */

/* A context call: SHMEM_CTX_INVALID does nothing; PE numbers are the context team's. */
#define CTX_ENTER(ctx, pe, what)                                                                        \
    if (!(ctx))                                                                                         \
        return;                                                                                         \
    pe = wio_ctx_pe(ctx, pe, what)

void shmem_putmem(void *dest, const void *source, size_t nelems, int pe)
{
    putmem(DEFCTX, dest, source, nelems, pe, 0, "shmem_putmem");
}

void shmem_getmem(void *dest, const void *source, size_t nelems, int pe)
{
    getmem(DEFCTX, dest, source, nelems, pe, 0, "shmem_getmem");
}

void shmem_putmem_nbi(void *dest, const void *source, size_t nelems, int pe)
{
    putmem(DEFCTX, dest, source, nelems, pe, 1, "shmem_putmem_nbi");
}

void shmem_getmem_nbi(void *dest, const void *source, size_t nelems, int pe)
{
    getmem(DEFCTX, dest, source, nelems, pe, 1, "shmem_getmem_nbi");
}

void shmem_ctx_putmem(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe)
{
    CTX_ENTER(ctx, pe, "shmem_ctx_putmem");
    putmem(ctx, dest, source, nelems, pe, 0, "shmem_ctx_putmem");
}

void shmem_ctx_getmem(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe)
{
    CTX_ENTER(ctx, pe, "shmem_ctx_getmem");
    getmem(ctx, dest, source, nelems, pe, 0, "shmem_ctx_getmem");
}

void shmem_ctx_putmem_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe)
{
    CTX_ENTER(ctx, pe, "shmem_ctx_putmem_nbi");
    putmem(ctx, dest, source, nelems, pe, 1, "shmem_ctx_putmem_nbi");
}

void shmem_ctx_getmem_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe)
{
    CTX_ENTER(ctx, pe, "shmem_ctx_getmem_nbi");
    getmem(ctx, dest, source, nelems, pe, 1, "shmem_ctx_getmem_nbi");
}

void shmem_putmem_signal(void *dest, const void *source, size_t nelems, uint64_t *sig_addr, uint64_t signal,
                         int sig_op, int pe)
{
    put_signal(DEFCTX, dest, source, nelems, sig_addr, signal, sig_op, pe, 0);
}

void shmem_putmem_signal_nbi(void *dest, const void *source, size_t nelems, uint64_t *sig_addr,
                             uint64_t signal, int sig_op, int pe)
{
    put_signal(DEFCTX, dest, source, nelems, sig_addr, signal, sig_op, pe, 1);
}

void shmem_ctx_putmem_signal(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, uint64_t *sig_addr,
                             uint64_t signal, int sig_op, int pe)
{
    CTX_ENTER(ctx, pe, "shmem_ctx_putmem_signal");
    put_signal(ctx, dest, source, nelems, sig_addr, signal, sig_op, pe, 0);
}

void shmem_ctx_putmem_signal_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems,
                                 uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)
{
    CTX_ENTER(ctx, pe, "shmem_ctx_putmem_signal_nbi");
    put_signal(ctx, dest, source, nelems, sig_addr, signal, sig_op, pe, 1);
}

/* Sized forms: elements of BYTES bytes. */
#define DEF_SIZE(BITS, BYTES)                                                                           \
    void shmem_put##BITS(void *dest, const void *source, size_t nelems, int pe)                         \
    {                                                                                                   \
        putmem(DEFCTX, dest, source, nelems * BYTES, pe, 0, "shmem_put" #BITS);                          \
    }                                                                                                   \
    void shmem_get##BITS(void *dest, const void *source, size_t nelems, int pe)                         \
    {                                                                                                   \
        getmem(DEFCTX, dest, source, nelems * BYTES, pe, 0, "shmem_get" #BITS);                          \
    }                                                                                                   \
    void shmem_put##BITS##_nbi(void *dest, const void *source, size_t nelems, int pe)                   \
    {                                                                                                   \
        putmem(DEFCTX, dest, source, nelems * BYTES, pe, 1, "shmem_put" #BITS "_nbi");                   \
    }                                                                                                   \
    void shmem_get##BITS##_nbi(void *dest, const void *source, size_t nelems, int pe)                   \
    {                                                                                                   \
        getmem(DEFCTX, dest, source, nelems * BYTES, pe, 1, "shmem_get" #BITS "_nbi");                   \
    }                                                                                                   \
    void shmem_iput##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe) \
    {                                                                                                   \
        strided(DEFCTX, dest, source, dst, sst, nelems, BYTES, pe, 1);                                  \
    }                                                                                                   \
    void shmem_iget##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe) \
    {                                                                                                   \
        strided(DEFCTX, dest, source, dst, sst, nelems, BYTES, pe, 0);                                  \
    }                                                                                                   \
    void shmem_put##BITS##_signal(void *dest, const void *source, size_t nelems, uint64_t *sig_addr,    \
                                  uint64_t signal, int sig_op, int pe)                                  \
    {                                                                                                   \
        put_signal(DEFCTX, dest, source, nelems * BYTES, sig_addr, signal, sig_op, pe, 0);              \
    }                                                                                                   \
    void shmem_put##BITS##_signal_nbi(void *dest, const void *source, size_t nelems, uint64_t *sig_addr, \
                                      uint64_t signal, int sig_op, int pe)                              \
    {                                                                                                   \
        put_signal(DEFCTX, dest, source, nelems * BYTES, sig_addr, signal, sig_op, pe, 1);              \
    }                                                                                                   \
    void shmem_ctx_put##BITS(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe)    \
    {                                                                                                   \
        CTX_ENTER(ctx, pe, "shmem_ctx_put" #BITS);                                                      \
        putmem(ctx, dest, source, nelems * BYTES, pe, 0, "shmem_ctx_put" #BITS);                        \
    }                                                                                                   \
    void shmem_ctx_get##BITS(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe)    \
    {                                                                                                   \
        CTX_ENTER(ctx, pe, "shmem_ctx_get" #BITS);                                                      \
        getmem(ctx, dest, source, nelems * BYTES, pe, 0, "shmem_ctx_get" #BITS);                        \
    }                                                                                                   \
    void shmem_ctx_put##BITS##_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe) \
    {                                                                                                   \
        CTX_ENTER(ctx, pe, "shmem_ctx_put" #BITS "_nbi");                                               \
        putmem(ctx, dest, source, nelems * BYTES, pe, 1, "shmem_ctx_put" #BITS "_nbi");                 \
    }                                                                                                   \
    void shmem_ctx_get##BITS##_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe) \
    {                                                                                                   \
        CTX_ENTER(ctx, pe, "shmem_ctx_get" #BITS "_nbi");                                               \
        getmem(ctx, dest, source, nelems * BYTES, pe, 1, "shmem_ctx_get" #BITS "_nbi");                 \
    }                                                                                                   \
    void shmem_ctx_iput##BITS(shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, \
                              size_t nelems, int pe)                                                    \
    {                                                                                                   \
        CTX_ENTER(ctx, pe, "shmem_ctx_iput" #BITS);                                                     \
        strided(ctx, dest, source, dst, sst, nelems, BYTES, pe, 1);                                     \
    }                                                                                                   \
    void shmem_ctx_iget##BITS(shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, \
                              size_t nelems, int pe)                                                    \
    {                                                                                                   \
        CTX_ENTER(ctx, pe, "shmem_ctx_iget" #BITS);                                                     \
        strided(ctx, dest, source, dst, sst, nelems, BYTES, pe, 0);                                     \
    }                                                                                                   \
    void shmem_ctx_put##BITS##_signal(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems,   \
                                      uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)          \
    {                                                                                                   \
        CTX_ENTER(ctx, pe, "shmem_ctx_put" #BITS "_signal");                                            \
        put_signal(ctx, dest, source, nelems * BYTES, sig_addr, signal, sig_op, pe, 0);                 \
    }                                                                                                   \
    void shmem_ctx_put##BITS##_signal_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, \
                                          uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)      \
    {                                                                                                   \
        CTX_ENTER(ctx, pe, "shmem_ctx_put" #BITS "_signal_nbi");                                        \
        put_signal(ctx, dest, source, nelems * BYTES, sig_addr, signal, sig_op, pe, 1);                 \
    }
WAITIO_SHMEM_SIZES(DEF_SIZE)

/* Typed forms. */
#define DEF_RMA(T, N)                                                                                   \
    HOT void p_##N(shmem_ctx_t c, T *dest, T value, int pe)                                   \
    {                                                                                                   \
        T *p = (T *)(void *)wio_shmem_direct(dest, sizeof(T), pe);                                      \
        if (p)                                                                                          \
            *p = value;                                                                                 \
        else                                                                                            \
            put_slow(c, dest, &value, sizeof(T), pe, 0, "shmem_p");                                     \
    }                                                                                                   \
    HOT T g_##N(shmem_ctx_t c, const T *source, int pe)                                       \
    {                                                                                                   \
        const T *p = (const T *)(const void *)wio_shmem_direct(source, sizeof(T), pe);                  \
        if (p)                                                                                          \
            return *p;                                                                                  \
        T v;                                                                                            \
        get_slow(c, &v, source, sizeof(T), pe, 0, "shmem_g");                                           \
        return v;                                                                                       \
    }                                                                                                   \
    void shmem_##N##_put(T *dest, const T *source, size_t nelems, int pe)                               \
    {                                                                                                   \
        putmem(DEFCTX, dest, source, nelems * sizeof(T), pe, 0, "shmem_put");                           \
    }                                                                                                   \
    void shmem_##N##_get(T *dest, const T *source, size_t nelems, int pe)                               \
    {                                                                                                   \
        getmem(DEFCTX, dest, source, nelems * sizeof(T), pe, 0, "shmem_get");                           \
    }                                                                                                   \
    void shmem_##N##_put_nbi(T *dest, const T *source, size_t nelems, int pe)                           \
    {                                                                                                   \
        putmem(DEFCTX, dest, source, nelems * sizeof(T), pe, 1, "shmem_put_nbi");                       \
    }                                                                                                   \
    void shmem_##N##_get_nbi(T *dest, const T *source, size_t nelems, int pe)                           \
    {                                                                                                   \
        getmem(DEFCTX, dest, source, nelems * sizeof(T), pe, 1, "shmem_get_nbi");                       \
    }                                                                                                   \
    void shmem_##N##_p(T *dest, T value, int pe) { p_##N(DEFCTX, dest, value, pe); }                    \
    T shmem_##N##_g(const T *source, int pe) { return g_##N(DEFCTX, source, pe); }                      \
    void shmem_##N##_iput(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe) \
    {                                                                                                   \
        strided(DEFCTX, dest, source, dst, sst, nelems, sizeof(T), pe, 1);                              \
    }                                                                                                   \
    void shmem_##N##_iget(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe) \
    {                                                                                                   \
        strided(DEFCTX, dest, source, dst, sst, nelems, sizeof(T), pe, 0);                              \
    }                                                                                                   \
    void shmem_##N##_put_signal(T *dest, const T *source, size_t nelems, uint64_t *sig_addr,            \
                                uint64_t signal, int sig_op, int pe)                                    \
    {                                                                                                   \
        put_signal(DEFCTX, dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe, 0);          \
    }                                                                                                   \
    void shmem_##N##_put_signal_nbi(T *dest, const T *source, size_t nelems, uint64_t *sig_addr,        \
                                    uint64_t signal, int sig_op, int pe)                                \
    {                                                                                                   \
        put_signal(DEFCTX, dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe, 1);          \
    }                                                                                                   \
    void shmem_ctx_##N##_put(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, int pe)          \
    {                                                                                                   \
        CTX_ENTER(ctx, pe, "shmem_ctx_put");                                                            \
        putmem(ctx, dest, source, nelems * sizeof(T), pe, 0, "shmem_ctx_put");                          \
    }                                                                                                   \
    void shmem_ctx_##N##_get(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, int pe)          \
    {                                                                                                   \
        CTX_ENTER(ctx, pe, "shmem_ctx_get");                                                            \
        getmem(ctx, dest, source, nelems * sizeof(T), pe, 0, "shmem_ctx_get");                          \
    }                                                                                                   \
    void shmem_ctx_##N##_put_nbi(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, int pe)      \
    {                                                                                                   \
        CTX_ENTER(ctx, pe, "shmem_ctx_put_nbi");                                                        \
        putmem(ctx, dest, source, nelems * sizeof(T), pe, 1, "shmem_ctx_put_nbi");                      \
    }                                                                                                   \
    void shmem_ctx_##N##_get_nbi(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, int pe)      \
    {                                                                                                   \
        CTX_ENTER(ctx, pe, "shmem_ctx_get_nbi");                                                        \
        getmem(ctx, dest, source, nelems * sizeof(T), pe, 1, "shmem_ctx_get_nbi");                      \
    }                                                                                                   \
    void shmem_ctx_##N##_p(shmem_ctx_t ctx, T *dest, T value, int pe)                                   \
    {                                                                                                   \
        CTX_ENTER(ctx, pe, "shmem_ctx_p");                                                              \
        p_##N(ctx, dest, value, pe);                                                                    \
    }                                                                                                   \
    T shmem_ctx_##N##_g(shmem_ctx_t ctx, const T *source, int pe)                                       \
    {                                                                                                   \
        if (!ctx)                                                                                       \
            return (T)0;                                                                                \
        return g_##N(ctx, source, wio_ctx_pe(ctx, pe, "shmem_ctx_g"));                                  \
    }                                                                                                   \
    void shmem_ctx_##N##_iput(shmem_ctx_t ctx, T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst,  \
                              size_t nelems, int pe)                                                    \
    {                                                                                                   \
        CTX_ENTER(ctx, pe, "shmem_ctx_iput");                                                           \
        strided(ctx, dest, source, dst, sst, nelems, sizeof(T), pe, 1);                                 \
    }                                                                                                   \
    void shmem_ctx_##N##_iget(shmem_ctx_t ctx, T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst,  \
                              size_t nelems, int pe)                                                    \
    {                                                                                                   \
        CTX_ENTER(ctx, pe, "shmem_ctx_iget");                                                           \
        strided(ctx, dest, source, dst, sst, nelems, sizeof(T), pe, 0);                                 \
    }                                                                                                   \
    void shmem_ctx_##N##_put_signal(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems,           \
                                    uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)            \
    {                                                                                                   \
        CTX_ENTER(ctx, pe, "shmem_ctx_put_signal");                                                     \
        put_signal(ctx, dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe, 0);             \
    }                                                                                                   \
    void shmem_ctx_##N##_put_signal_nbi(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems,       \
                                        uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)        \
    {                                                                                                   \
        CTX_ENTER(ctx, pe, "shmem_ctx_put_signal_nbi");                                                 \
        put_signal(ctx, dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe, 1);             \
    }
WAITIO_SHMEM_RMA_TYPES(DEF_RMA)
