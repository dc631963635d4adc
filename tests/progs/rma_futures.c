/*
 * rma_futures.c — the futures of waitio_rma.h between every process of the instance, every value
 * that crossed processes checked:
 *   A  a chain of 1,000 then callbacks on a call's future (every 100th callback makes a new call
 *      and forwards to it), the value carried through and checked exactly; the same on a ready
 *      future (no stack growth either way)
 *   B  when_all over put / get / call / atomic futures on every member: gets and call replies
 *      (checksums) checked, and, with no quiet, the puts visible at the targets after a barrier
 *   C  the new atomics: min / max (signed, unsigned, float, double) and floating-point add from
 *      every member on every member's words, blocking and as futures: exact totals
 *   D  non-blocking broadcast, reduce (int64 sum, double max) and barrier, several outstanding
 *      at once, results checked; then 20 barriers in a row
 *   E  distributed objects: lookup, get (checked), put into a slot per origin, a call bound to the
 *      object (a counter: exact total), refused accesses (origin bounds, a forged handle refused by
 *      the target, an unknown name)
 *   F  edges: an empty when_all, set_value outside a callback refused, a failed call (no such
 *      handler) failing its then (callback not run) and running a WAITIO_THEN_ALWAYS one, a
 *      wrapped receive that times out until its sender sends (value: its status)
 *   K  (--kill V) member V dies while the others' futures depend on it: a call, a chain of then on
 *      it, a when_all mixing it with a live operation, a barrier and a broadcast rooted at V —
 *      every one fails with WAITIO_ERR_PEER... within --limit seconds; a then without
 *      WAITIO_THEN_ALWAYS never runs its callback, one with it runs and sees the error
 * Usage: rma_futures [--phases ABCDEF] [--kill V] [--limit S] [--alarm S] [--expect-nprocs N]
 * Prints "rma_futures ok: N processes, phases ..." on rank 0 (or "rma_futures kill ok: R ..." per
 * survivor).
 */
#include <math.h>
#include <signal.h>
#include "testutil.h"
#include "waitio_mpi.h"
#include "waitio_rma.h"

#define HEAP (1u << 20)
#define OWN 32768u                 /* [0, OWN): the owner's pattern */
#define SLOT 8192u                 /* [OWN + o*SLOT, ...): written by origin o (at most 16) */
#define CT (OWN + 16 * SLOT)       /* atomic words */
#define ID_INC 1                   /* call: int64 v -> v + 1 */
#define ID_SUM 2                   /* call: bytes -> their checksum (uint64) */
#define ID_DIE 3                   /* kill phase: the victim dies inside it */
#define CHAIN 1000
#define K_ATOMIC 40                /* atomics per origin per word */
#define BLOB 4096u
#define BLOB_OWN 2048u

static int me, n;
static waitio_group_t world;
static waitio_win_t win;
static uint8_t *heap;

static void barrier(void) { TU_CHECK(waitio_mpi_barrier(world)); }

static uint8_t pat(int owner, int other, size_t i) { return (uint8_t)(tu_mix64(((uint64_t)owner << 40) ^ ((uint64_t)other << 20) ^ i) >> 9); }

static uint64_t checksum(const uint8_t *b, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

static int h_inc(int origin, const void *args, size_t len, void *reply, size_t *reply_len, void *user)
{
    (void)origin;
    (void)user;
    int64_t v;
    if (len != 8 || *reply_len < 8)
        return 1;
    memcpy(&v, args, 8);
    v++;
    memcpy(reply, &v, 8);
    *reply_len = 8;
    return 0;
}

static int h_sum(int origin, const void *args, size_t len, void *reply, size_t *reply_len, void *user)
{
    (void)origin;
    (void)user;
    if (*reply_len < 8)
        return 1;
    uint64_t c = checksum(args, len);
    memcpy(reply, &c, 8);
    *reply_len = 8;
    return 0;
}

static int64_t value64(waitio_future_t f)
{
    const void *v;
    size_t len;
    int64_t x = 0;
    TU_CHECK(waitio_future_value(f, &v, &len));
    if (len != 8)
        TU_FAIL("future value of %zu bytes, expected 8 (error %s)", len, tu_code_name(waitio_future_error(f)));
    memcpy(&x, v, 8);
    return x;
}

static void wait_ok(waitio_future_t f, const char *what)
{
    int rc = waitio_future_wait(f, 30);
    if (rc)
        TU_FAIL("%s: %s (%s)", what, tu_code_name(rc), waitio_error_message());
}

/* ---- A: chains ---- */

static int chained; /* callbacks that ran */

static int chain_step(waitio_future_t in, waitio_future_t out, void *user)
{
    intptr_t k = (intptr_t)user;
    chained++;
    const void *v;
    size_t len;
    int64_t x;
    if (waitio_future_value(in, &v, &len) || len != 8)
        return WAITIO_ERR_ARG;
    memcpy(&x, v, 8);
    if (k > 0 && k % 100 == 0) { /* a new call, and out takes its result */
        waitio_future_t g;
        int rc = waitio_rpc_fut(world, (me + 1) % n, ID_INC, &x, 8, 8, &g);
        if (rc)
            return rc;
        rc = waitio_future_forward(out, g);
        waitio_future_release(g);
        return rc;
    }
    x++;
    return waitio_future_set_value(out, &x, 8);
}

static void phase_chain(void)
{
    tu_phase("A: chain of %d then on a call", CHAIN);
    int64_t x0 = 1000 * me + 7;
    waitio_future_t f;
    TU_CHECK(waitio_rpc_fut(world, (me + 1) % n, ID_INC, &x0, 8, 8, &f));
    chained = 0;
    for (intptr_t k = 1; k <= CHAIN; k++) {
        waitio_future_t g;
        TU_CHECK(waitio_future_then(f, chain_step, (void *)k, 0, &g));
        TU_CHECK(waitio_future_release(f)); /* the chain holds itself together */
        f = g;
    }
    wait_ok(f, "chain on a call");
    int64_t got = value64(f), want = x0 + 1 + CHAIN;
    if (got != want || chained != CHAIN)
        TU_ERR("chain: value %lld (want %lld), %d callbacks ran (want %d)", (long long)got, (long long)want,
               chained, CHAIN);
    TU_CHECK(waitio_future_release(f));

    tu_phase("A: chain of %d then on a ready future", CHAIN);
    TU_CHECK(waitio_future_make(&x0, 8, &f));
    waitio_future_t head = f;
    TU_CHECK(waitio_future_then(head, chain_step, (void *)(intptr_t)1, 0, &f));
    for (intptr_t k = 2; k <= CHAIN; k++) {
        waitio_future_t g;
        TU_CHECK(waitio_future_then(f, chain_step, (void *)(k * 100 + 1), 0, &g)); /* never a multiple of 100 */
        TU_CHECK(waitio_future_release(f));
        f = g;
    }
    TU_CHECK(waitio_future_release(head));
    wait_ok(f, "chain on a ready future");
    if ((got = value64(f)) != x0 + CHAIN)
        TU_ERR("ready chain: value %lld, want %lld", (long long)got, (long long)(x0 + CHAIN));
    TU_CHECK(waitio_future_release(f));
}

/* ---- B: when_all over mixed operations ---- */

#define ARGLEN 3000u

static void phase_mixed(void)
{
    tu_phase("B: when_all over put/get/call/atomic on every member");
    for (size_t i = 0; i < OWN; i++)
        heap[i] = pat(me, me, i);
    memset(heap + OWN, 0, 16 * SLOT);
    memset(heap + CT, 0, 64);
    barrier();
    uint8_t *putb = tu_xmalloc((size_t)n * SLOT), *getb = tu_xcalloc((size_t)n, OWN), *argb = tu_xmalloc((size_t)n * ARGLEN);
    waitio_future_t *fs = tu_xcalloc((size_t)n * 4, sizeof *fs);
    int64_t one = 1;
    for (int t = 0; t < n; t++) {
        for (size_t i = 0; i < SLOT; i++)
            putb[(size_t)t * SLOT + i] = pat(t, me, i);
        for (size_t i = 0; i < ARGLEN; i++)
            argb[(size_t)t * ARGLEN + i] = pat(me, t + 100, i);
        TU_CHECK(waitio_put_fut(win, t, OWN + (size_t)me * SLOT, putb + (size_t)t * SLOT, SLOT, &fs[4 * t]));
        TU_CHECK(waitio_get_fut(win, t, 0, getb + (size_t)t * OWN, OWN, &fs[4 * t + 1]));
        TU_CHECK(waitio_rpc_fut(world, t, ID_SUM, argb + (size_t)t * ARGLEN, ARGLEN, 8, &fs[4 * t + 2]));
        TU_CHECK(waitio_atomic_fut(win, t, CT, WAITIO_AMO_ADD, WAITIO_AMO_INT64, &one, NULL, &fs[4 * t + 3]));
    }
    memset(argb, 0, (size_t)n * ARGLEN); /* the calls copied their arguments */
    waitio_future_t all;
    TU_CHECK(waitio_future_when_all(4 * n, fs, &all));
    wait_ok(all, "when_all");
    for (int t = 0; t < n; t++) {
        for (size_t i = 0; i < OWN; i++)
            if (getb[(size_t)t * OWN + i] != pat(t, t, i)) {
                TU_ERR("get from %d: byte %zu wrong", t, i);
                break;
            }
        uint8_t expect_args[ARGLEN];
        for (size_t i = 0; i < ARGLEN; i++)
            expect_args[i] = pat(me, t + 100, i);
        if ((uint64_t)value64(fs[4 * t + 2]) != checksum(expect_args, ARGLEN))
            TU_ERR("call on %d: checksum reply wrong", t);
        int64_t old = value64(fs[4 * t + 3]);
        if (old < 0 || old >= n)
            TU_ERR("fetch-add on %d returned %lld", t, (long long)old);
    }
    for (int i = 0; i < 4 * n; i++)
        TU_CHECK(waitio_future_release(fs[i]));
    TU_CHECK(waitio_future_release(all));
    barrier(); /* no quiet: a put future completes once the data is at the target */
    for (int o = 0; o < n; o++)
        for (size_t i = 0; i < SLOT; i++)
            if (heap[OWN + (size_t)o * SLOT + i] != pat(me, o, i)) {
                TU_ERR("slot of origin %d: byte %zu is %u, want %u", o, i, heap[OWN + (size_t)o * SLOT + i], pat(me, o, i));
                break;
            }
    int64_t adds;
    memcpy(&adds, heap + CT, 8);
    if (adds != n)
        TU_ERR("fetch-add total %lld, want %d", (long long)adds, n);
    free(putb);
    free(getb);
    free(argb);
    free(fs);
    barrier();
}

/* ---- C: new atomics ---- */

enum { W_IMIN = 0, W_IMAX = 8, W_UMAX = 16, W_I32MIN = 24, W_DADD = 32, W_FADD = 40, W_DMIN = 48, W_DMAX = 56, W_FMAX = 64 };

static void phase_atomics(void)
{
    tu_phase("C: min/max/fp add from every member");
    uint8_t *c = heap + CT;
    int64_t imin = INT64_MAX, imax = INT64_MIN;
    int32_t i32min = INT32_MAX;
    double dinf = INFINITY, dninf = -INFINITY, zero = 0;
    float fzero = 0, fninf = -INFINITY;
    memset(c, 0, 128);
    memcpy(c + W_IMIN, &imin, 8);
    memcpy(c + W_IMAX, &imax, 8);
    memcpy(c + W_I32MIN, &i32min, 4);
    memcpy(c + W_DADD, &zero, 8);
    memcpy(c + W_FADD, &fzero, 4);
    memcpy(c + W_DMIN, &dinf, 8);
    memcpy(c + W_DMAX, &dninf, 8);
    memcpy(c + W_FMAX, &fninf, 4);
    barrier();
    waitio_future_t *fs = tu_xcalloc((size_t)n * K_ATOMIC, sizeof *fs);
    for (int t = 0; t < n; t++) {
        for (int i = 0; i < K_ATOMIC; i++) {
            int64_t a = -((int64_t)me * 1000 + i), b = (int64_t)me * 1000 + i;
            uint64_t u = (uint64_t)me * 7 + (uint64_t)i;
            int32_t s = 100 - me * 10 - i;
            double dq = 0.25 * (me + 1), dm = (me + 1) * 1.5 + i;
            float fh = 0.5f, fm = (float)(me * 3 + i);
            /* blocking non-fetching forms (completed by quiet) and futures (fetching) alternate */
            if (i % 2) {
                TU_CHECK(waitio_atomic(win, t, CT + W_IMIN, WAITIO_AMO_MIN, WAITIO_AMO_INT64, &a, NULL, NULL));
                TU_CHECK(waitio_atomic(win, t, CT + W_IMAX, WAITIO_AMO_MAX, WAITIO_AMO_INT64, &b, NULL, NULL));
                TU_CHECK(waitio_atomic(win, t, CT + W_UMAX, WAITIO_AMO_MAX, WAITIO_AMO_UINT64, &u, NULL, NULL));
                TU_CHECK(waitio_atomic(win, t, CT + W_DADD, WAITIO_AMO_ADD, WAITIO_AMO_DOUBLE, &dq, NULL, NULL));
                TU_CHECK(waitio_atomic(win, t, CT + W_DMIN, WAITIO_AMO_MIN, WAITIO_AMO_DOUBLE, &dm, NULL, NULL));
            } else {
                waitio_future_t g[5];
                TU_CHECK(waitio_atomic_fut(win, t, CT + W_IMIN, WAITIO_AMO_MIN, WAITIO_AMO_INT64, &a, NULL, &g[0]));
                TU_CHECK(waitio_atomic_fut(win, t, CT + W_IMAX, WAITIO_AMO_MAX, WAITIO_AMO_INT64, &b, NULL, &g[1]));
                TU_CHECK(waitio_atomic_fut(win, t, CT + W_UMAX, WAITIO_AMO_MAX, WAITIO_AMO_UINT64, &u, NULL, &g[2]));
                TU_CHECK(waitio_atomic_fut(win, t, CT + W_DADD, WAITIO_AMO_ADD, WAITIO_AMO_DOUBLE, &dq, NULL, &g[3]));
                TU_CHECK(waitio_atomic_fut(win, t, CT + W_DMIN, WAITIO_AMO_MIN, WAITIO_AMO_DOUBLE, &dm, NULL, &g[4]));
                TU_CHECK(waitio_future_when_all(5, g, &fs[(size_t)t * K_ATOMIC + (size_t)i]));
                for (int k = 0; k < 5; k++)
                    TU_CHECK(waitio_future_release(g[k]));
            }
            TU_CHECK(waitio_atomic(win, t, CT + W_I32MIN, WAITIO_AMO_MIN, WAITIO_AMO_INT32, &s, NULL, NULL));
            TU_CHECK(waitio_atomic(win, t, CT + W_FADD, WAITIO_AMO_ADD, WAITIO_AMO_FLOAT, &fh, NULL, NULL));
            TU_CHECK(waitio_atomic(win, t, CT + W_DMAX, WAITIO_AMO_MAX, WAITIO_AMO_DOUBLE, &dm, NULL, NULL));
            float fold = -1;
            TU_CHECK(waitio_atomic(win, t, CT + W_FMAX, WAITIO_AMO_MAX, WAITIO_AMO_FLOAT, &fm, NULL, &fold));
            if (!(fold == -INFINITY || (fold >= 0 && fold == (float)(int)fold)))
                TU_ERR("float max fetched %g", (double)fold);
        }
    }
    for (size_t i = 0; i < (size_t)n * K_ATOMIC; i++)
        if (fs[i]) {
            wait_ok(fs[i], "atomic futures");
            TU_CHECK(waitio_future_release(fs[i]));
        }
    free(fs);
    /* bitwise ops stay integer-only */
    double d = 1;
    TU_CHECK_RC(waitio_atomic(win, (me + 1) % n, CT + W_DADD, WAITIO_AMO_OR, WAITIO_AMO_DOUBLE, &d, NULL, NULL), WAITIO_ERR_ARG);
    TU_CHECK(waitio_quiet());
    barrier();
    int64_t g64;
    uint64_t gu;
    int32_t g32;
    double gd;
    float gf;
    memcpy(&g64, c + W_IMIN, 8);
    if (g64 != -((int64_t)(n - 1) * 1000 + K_ATOMIC - 1))
        TU_ERR("int64 min %lld", (long long)g64);
    memcpy(&g64, c + W_IMAX, 8);
    if (g64 != (int64_t)(n - 1) * 1000 + K_ATOMIC - 1)
        TU_ERR("int64 max %lld", (long long)g64);
    memcpy(&gu, c + W_UMAX, 8);
    if (gu != (uint64_t)(n - 1) * 7 + K_ATOMIC - 1)
        TU_ERR("uint64 max %llu", (unsigned long long)gu);
    memcpy(&g32, c + W_I32MIN, 4);
    if (g32 != 100 - (n - 1) * 10 - (K_ATOMIC - 1))
        TU_ERR("int32 min %d", g32);
    memcpy(&gd, c + W_DADD, 8);
    if (gd != 0.25 * K_ATOMIC * n * (n + 1) / 2)
        TU_ERR("double add %.17g, want %.17g", gd, 0.25 * K_ATOMIC * n * (n + 1) / 2);
    memcpy(&gf, c + W_FADD, 4);
    if (gf != 0.5f * K_ATOMIC * n)
        TU_ERR("float add %.9g, want %.9g", (double)gf, (double)(0.5f * K_ATOMIC * n));
    memcpy(&gd, c + W_DMIN, 8);
    if (gd != 1.5)
        TU_ERR("double min %.17g", gd);
    memcpy(&gd, c + W_DMAX, 8);
    if (gd != n * 1.5 + K_ATOMIC - 1)
        TU_ERR("double max %.17g", gd);
    memcpy(&gf, c + W_FMAX, 4);
    if (gf != (float)((n - 1) * 3 + K_ATOMIC - 1))
        TU_ERR("float max %g", (double)gf);
    barrier();
}

/* ---- D: non-blocking collectives ---- */

#define BC 4096u
#define RC 256u

static void phase_coll(void)
{
    tu_phase("D: non-blocking bcast, reduce, barrier");
    int root = 1 % n;
    uint8_t *bc = tu_xcalloc(BC, 1);
    if (me == root)
        for (size_t i = 0; i < BC; i++)
            bc[i] = pat(root, 77, i);
    int64_t src[RC], sum[RC];
    double dsrc[RC], dmax[RC];
    for (size_t i = 0; i < RC; i++) {
        src[i] = (int64_t)me * 1000 + (int64_t)i;
        dsrc[i] = me + 0.5 * (double)i;
    }
    waitio_future_t f[4], all;
    TU_CHECK(waitio_bcast_fut(world, root, bc, BC, &f[0]));
    TU_CHECK(waitio_reduce_fut(world, 0, src, sum, RC, WAITIO_AMO_INT64, WAITIO_AMO_ADD, &f[1]));
    TU_CHECK(waitio_reduce_fut(world, n - 1, dsrc, dmax, RC, WAITIO_AMO_DOUBLE, WAITIO_AMO_MAX, &f[2]));
    TU_CHECK(waitio_barrier_fut(world, &f[3]));
    TU_CHECK(waitio_future_when_all(4, f, &all));
    wait_ok(all, "collectives");
    for (size_t i = 0; i < BC; i++)
        if (bc[i] != pat(root, 77, i)) {
            TU_ERR("bcast: byte %zu wrong", i);
            break;
        }
    for (size_t i = 0; me == 0 && i < RC; i++)
        if (sum[i] != 1000LL * n * (n - 1) / 2 + (int64_t)n * (int64_t)i) {
            TU_ERR("reduce sum[%zu] = %lld", i, (long long)sum[i]);
            break;
        }
    for (size_t i = 0; me == n - 1 && i < RC; i++)
        if (dmax[i] != (n - 1) + 0.5 * (double)i) {
            TU_ERR("reduce max[%zu] = %g", i, dmax[i]);
            break;
        }
    for (int i = 0; i < 4; i++)
        TU_CHECK(waitio_future_release(f[i]));
    TU_CHECK(waitio_future_release(all));
    TU_CHECK_RC(waitio_reduce_fut(world, 0, src, sum, RC, WAITIO_AMO_DOUBLE, WAITIO_AMO_XOR, &f[0]), WAITIO_ERR_ARG);
    /* 20 barriers in a row; the count at each must include everyone's previous increments */
    for (int k = 0; k < 20; k++) {
        int64_t one = 1, seen;
        TU_CHECK(waitio_atomic(win, 0, CT + 96, WAITIO_AMO_ADD, WAITIO_AMO_INT64, &one, NULL, &seen));
        waitio_future_t b;
        TU_CHECK(waitio_barrier_fut(world, &b));
        wait_ok(b, "barrier");
        TU_CHECK(waitio_future_release(b));
        TU_CHECK(waitio_atomic(win, 0, CT + 96, WAITIO_AMO_FETCH, WAITIO_AMO_INT64, NULL, NULL, &seen));
        if (seen < (int64_t)(k + 1) * n)
            TU_ERR("after barrier %d the counter is %lld, want at least %lld", k, (long long)seen, (long long)(k + 1) * n);
        TU_CHECK(waitio_mpi_barrier(world)); /* nobody starts the next round early */
    }
    free(bc);
    barrier();
}

/* ---- E: distributed objects ---- */

static uint8_t blob[BLOB];
static int64_t counter, counter_ic;

static int counter_add(int origin, void *obj, size_t size, const void *args, size_t len, void *reply,
                       size_t *reply_len, void *user)
{
    (void)origin;
    (void)user;
    if (size != 8 || len != 8 || *reply_len < 8)
        return 1;
    int64_t v, *o = obj;
    memcpy(&v, args, 8);
    *o += v;
    memcpy(reply, o, 8);
    *reply_len = 8;
    return 0;
}

static waitio_dobj_t lookup(int t, const char *name)
{
    waitio_future_t f;
    TU_CHECK(waitio_dobj_lookup(world, t, name, &f));
    wait_ok(f, "lookup");
    const void *v;
    size_t len;
    waitio_dobj_t o;
    TU_CHECK(waitio_future_value(f, &v, &len));
    if (len != sizeof o)
        TU_FAIL("lookup value of %zu bytes", len);
    memcpy(&o, v, sizeof o);
    TU_CHECK(waitio_future_release(f));
    return o;
}

static void phase_dobj(void)
{
    tu_phase("E: distributed objects");
    for (size_t i = 0; i < BLOB_OWN; i++)
        blob[i] = pat(me, 55, i);
    memset(blob + BLOB_OWN, 0, BLOB - BLOB_OWN);
    counter = 0;
    TU_CHECK(waitio_dobj_register(world, "blob", blob, BLOB, NULL, NULL));
    TU_CHECK(waitio_dobj_register(world, "counter", &counter, sizeof counter, counter_add, NULL));
    counter_ic = 0;
    TU_CHECK(waitio_dobj_register_ex(world, "counter-ic", &counter_ic, sizeof counter_ic, counter_add, NULL,
                                     WAITIO_DOBJ_IN_CALLER));
    TU_CHECK_RC(waitio_dobj_register(world, "blob", blob, 1, NULL, NULL), WAITIO_ERR_ARG);
    barrier();
    uint8_t *got = tu_xcalloc((size_t)n, BLOB_OWN);
    uint8_t mine[64];
    for (size_t i = 0; i < sizeof mine; i++)
        mine[i] = pat(me, 66, i);
    waitio_future_t *fs = tu_xcalloc((size_t)n * 4, sizeof *fs);
    for (int t = 0; t < n; t++) {
        waitio_dobj_t b = lookup(t, "blob"), c = lookup(t, "counter"), ic = lookup(t, "counter-ic");
        if (b.size != BLOB || c.size != 8 || b.rank != t || c.flags || ic.flags != WAITIO_DOBJ_IN_CALLER)
            TU_ERR("lookup on %d: sizes %llu, %llu, flags %u, %u", t, (unsigned long long)b.size,
                   (unsigned long long)c.size, c.flags, ic.flags);
        int64_t add = me + 1;
        TU_CHECK(waitio_dobj_get(&b, 0, got + (size_t)t * BLOB_OWN, BLOB_OWN, &fs[4 * t]));
        TU_CHECK(waitio_dobj_put(&b, BLOB_OWN + (size_t)me * 64, mine, sizeof mine, &fs[4 * t + 1]));
        TU_CHECK(waitio_dobj_call(&c, &add, 8, 8, &fs[4 * t + 2]));
        TU_CHECK(waitio_dobj_call(&ic, &add, 8, 8, &fs[4 * t + 3]));
        uint8_t x[16];
        waitio_future_t bad;
        TU_CHECK_RC(waitio_dobj_get(&b, BLOB - 8, x, 16, &bad), WAITIO_ERR_BOUNDS);
        waitio_dobj_t forged = b;
        forged.size = 1u << 20;
        TU_CHECK(waitio_dobj_get(&forged, BLOB + 64, x, 16, &bad)); /* the owner refuses it */
        if (waitio_future_wait(bad, 30) != WAITIO_ERR_RPC)
            TU_ERR("forged access on %d: %s, want WAITIO_ERR_RPC", t, tu_code_name(waitio_future_error(bad)));
        TU_CHECK(waitio_future_release(bad));
        waitio_dobj_t forged_ic = c; /* a plain object's handler is never run as an in-caller one */
        forged_ic.flags = WAITIO_DOBJ_IN_CALLER;
        TU_CHECK(waitio_dobj_call(&forged_ic, &add, 8, 8, &bad));
        if (waitio_future_wait(bad, 30) != WAITIO_ERR_RPC)
            TU_ERR("forged in-caller call on %d: %s, want WAITIO_ERR_RPC", t, tu_code_name(waitio_future_error(bad)));
        TU_CHECK(waitio_future_release(bad));
        TU_CHECK(waitio_dobj_lookup(world, t, "nope", &bad));
        if (waitio_future_wait(bad, 30) != WAITIO_ERR_RPC)
            TU_ERR("unknown name on %d: %s, want WAITIO_ERR_RPC", t, tu_code_name(waitio_future_error(bad)));
        TU_CHECK(waitio_future_release(bad));
    }
    waitio_future_t all;
    TU_CHECK(waitio_future_when_all(4 * n, fs, &all));
    wait_ok(all, "object accesses");
    for (int t = 0; t < n; t++) {
        for (size_t i = 0; i < BLOB_OWN; i++)
            if (got[(size_t)t * BLOB_OWN + i] != pat(t, 55, i)) {
                TU_ERR("object get from %d: byte %zu wrong", t, i);
                break;
            }
        for (int k = 2; k < 4; k++) {
            int64_t now = value64(fs[4 * t + k]);
            if (now < me + 1 || now > (int64_t)n * (n + 1) / 2)
                TU_ERR("counter call %d on %d returned %lld", k, t, (long long)now);
        }
    }
    for (int i = 0; i < 4 * n; i++)
        TU_CHECK(waitio_future_release(fs[i]));
    TU_CHECK(waitio_future_release(all));
    barrier();
    for (int o = 0; o < n; o++)
        for (size_t i = 0; i < 64; i++)
            if (blob[BLOB_OWN + (size_t)o * 64 + i] != pat(o, 66, i)) {
                TU_ERR("object put from %d: byte %zu wrong", o, i);
                break;
            }
    if (counter != (int64_t)n * (n + 1) / 2 || counter_ic != counter)
        TU_ERR("counters %lld and %lld, want %d", (long long)counter, (long long)counter_ic, n * (n + 1) / 2);
    barrier();
    TU_CHECK(waitio_dobj_unregister(world, "blob"));
    TU_CHECK(waitio_dobj_unregister(world, "counter"));
    TU_CHECK(waitio_dobj_unregister(world, "counter-ic"));
    free(got);
    free(fs);
}

/* ---- F: edges ---- */

static int ran_plain, ran_always, always_err;

static int never(waitio_future_t in, waitio_future_t out, void *user)
{
    (void)in;
    (void)out;
    (void)user;
    ran_plain++;
    return 0;
}

static int always(waitio_future_t in, waitio_future_t out, void *user)
{
    (void)out;
    (void)user;
    ran_always++;
    always_err = waitio_future_error(in);
    return 0;
}

static void phase_edges(void)
{
    tu_phase("F: edges (empty when_all, failed sources, timeouts, wrapped requests)");
    waitio_future_t f, g, h;
    TU_CHECK(waitio_future_when_all(0, NULL, &f));
    wait_ok(f, "empty when_all");
    TU_CHECK_RC(waitio_future_set_value(f, "x", 1), WAITIO_ERR_ARG); /* only inside its callback */
    TU_CHECK(waitio_future_release(f));
    /* a call to a handler nobody registered fails; a plain then never runs, an ALWAYS one does */
    ran_plain = ran_always = 0;
    TU_CHECK(waitio_rpc_fut(world, (me + 1) % n, 77, NULL, 0, 8, &f));
    TU_CHECK(waitio_future_then(f, never, NULL, 0, &g));
    TU_CHECK(waitio_future_then(f, always, NULL, WAITIO_THEN_ALWAYS, &h));
    if (waitio_future_wait(g, 30) != WAITIO_ERR_RPC || waitio_future_wait(h, 30) != WAITIO_ERR_RPC ||
        ran_plain || ran_always != 1 || always_err != WAITIO_ERR_RPC)
        TU_ERR("failed call: then %s, always-then %s, callbacks %d/%d", tu_code_name(waitio_future_error(g)),
               tu_code_name(waitio_future_error(h)), ran_plain, ran_always);
    TU_CHECK(waitio_future_release(f));
    TU_CHECK(waitio_future_release(g));
    TU_CHECK(waitio_future_release(h));
    /* a receive wrapped in a future: pending (timeout) until the predecessor sends */
    int64_t in = -1, outv = 4242 + me;
    waitio_req_t rq, sq;
    TU_CHECK(waitio_irecv(world, (me + 1) % n, (char *)&in, sizeof in, 12345, &rq));
    TU_CHECK(waitio_future_from_req(&rq, &f));
    TU_CHECK_RC(waitio_future_wait(f, 0.05), WAITIO_ERR_TIMEOUT);
    if (waitio_future_ready(f))
        TU_ERR("a receive nobody sent to is complete");
    barrier(); /* nobody sends before every receive timed out once */
    TU_CHECK(waitio_isend(world, (me + n - 1) % n, (char *)&outv, sizeof outv, 12345, &sq));
    TU_CHECK(waitio_future_from_req(&sq, &g));
    waitio_future_t both[2] = {f, g};
    TU_CHECK(waitio_future_when_all(2, both, &h));
    wait_ok(h, "wrapped send and receive");
    const void *v;
    size_t len;
    waitio_status_t st;
    TU_CHECK(waitio_future_value(f, &v, &len));
    if (len != sizeof st)
        TU_FAIL("wrapped request's value: %zu bytes", len);
    memcpy(&st, v, sizeof st);
    if (in != 4242 + (me + 1) % n || st.len != sizeof in || st.source != (me + 1) % n)
        TU_ERR("wrapped receive: %lld from %d (%zu bytes)", (long long)in, st.source, st.len);
    TU_CHECK(waitio_future_release(f));
    TU_CHECK(waitio_future_release(g));
    TU_CHECK(waitio_future_release(h));
    barrier();
}

/* ---- K: a member dies ---- */

/* The victim dies inside the first call made on it, a second after it arrived: the caller's
 * futures on it are pending by then (it never replies). */
static int h_die(int origin, const void *args, size_t len, void *reply, size_t *reply_len, void *user)
{
    (void)origin;
    (void)args;
    (void)len;
    (void)reply;
    (void)reply_len;
    (void)user;
    tu_sleep(1.0);
    printf("victim %d: killing myself inside a call\n", me);
    fflush(stdout);
    raise(SIGKILL);
    return 1;
}

static int is_peer_err(int rc) { return rc == WAITIO_ERR_PEER || rc == WAITIO_ERR_PEER_FINALIZED; }

static void phase_kill(int victim, double limit)
{
    waitio_win_t uw;
    uint8_t *mem = tu_xcalloc(65536, 1);
    TU_CHECK(waitio_win_create(world, mem, 65536, &uw));
    if (me == victim)
        TU_CHECK(waitio_rpc_register(ID_DIE, h_die, NULL));
    barrier();
    if (me == victim) {
        tu_phase("victim serving until a call kills it");
        for (;;)
            TU_CHECK(waitio_progress());
    }
    tu_phase("futures depending on the victim");
    int64_t x = 5;
    int live = (victim + 1) % n == me ? (victim + 2) % n : (victim + 1) % n;
    enum { CALL, THEN_PLAIN, THEN_ALWAYS, CHAIN_END, ALL, BARRIER, BCAST, NF };
    waitio_future_t f[NF], g[2];
    uint8_t bbuf[256];
    ran_plain = ran_always = 0;
    always_err = 0;
    TU_CHECK(waitio_rpc_fut(world, victim, ID_DIE, &x, 8, 8, &f[CALL]));
    TU_CHECK(waitio_future_then(f[CALL], never, NULL, 0, &f[THEN_PLAIN]));
    TU_CHECK(waitio_future_then(f[CALL], always, NULL, WAITIO_THEN_ALWAYS, &f[THEN_ALWAYS]));
    waitio_future_t c = f[THEN_PLAIN];
    TU_CHECK(waitio_future_then(c, never, NULL, 0, &f[CHAIN_END]));
    for (int k = 0; k < 9; k++) {
        TU_CHECK(waitio_future_then(f[CHAIN_END], never, NULL, 0, &c));
        TU_CHECK(waitio_future_release(f[CHAIN_END]));
        f[CHAIN_END] = c;
    }
    TU_CHECK(waitio_rpc_fut(world, live, ID_INC, &x, 8, 8, &g[0]));
    g[1] = f[CALL];
    TU_CHECK(waitio_future_when_all(2, g, &f[ALL]));
    TU_CHECK(waitio_barrier_fut(world, &f[BARRIER]));
    TU_CHECK(waitio_bcast_fut(world, victim, bbuf, sizeof bbuf, &f[BCAST]));
    double t0 = tu_now();
    const char *names[NF] = {"call", "then", "then-always", "chain of 10 then", "when_all", "barrier", "bcast"};
    for (int i = 0; i < NF; i++) {
        int rc = waitio_future_wait(f[i], limit + 2);
        if (!is_peer_err(rc))
            TU_ERR("%s future: %s, want WAITIO_ERR_PEER", names[i], tu_code_name(rc));
    }
    double took = tu_now() - t0;
    if (took > limit)
        TU_ERR("the futures failed after %.2f s (limit %.1f s)", took, limit);
    wait_ok(g[0], "the live call");
    if (value64(g[0]) != x + 1)
        TU_ERR("the live call's reply is wrong");
    if (ran_plain || ran_always != 1 || !is_peer_err(always_err))
        TU_ERR("callbacks: plain ran %d times (want 0), always %d (want 1) with %s", ran_plain, ran_always,
               tu_code_name(always_err));
    waitio_future_t late;
    int rc = waitio_get_fut(uw, victim, 0, bbuf, 16, &late);
    if (rc == 0) { /* single copy may still have worked before the loss was noticed: then it fails now */
        rc = waitio_future_wait(late, limit);
        TU_CHECK(waitio_future_release(late));
    }
    for (int i = 0; i < NF; i++)
        TU_CHECK(waitio_future_release(f[i]));
    TU_CHECK(waitio_future_release(g[0]));
    printf("rma_futures kill ok: %d saw %s on %d futures after %.2f s (a later get: %s)\n", me,
           tu_code_name(WAITIO_ERR_PEER), NF, took, tu_code_name(rc));
    fflush(stdout);
    waitio_finalize(); /* no barrier with a dead member */
    free(mem);
    exit(tu_errors ? 1 : 0);
}

int main(int argc, char **argv)
{
    tu_set_name(argv[0]);
    const char *phases = "ABCDEF";
    int victim = -1, expect = 0;
    double limit = 10;
    unsigned alarm_s = 60;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--phases") && i + 1 < argc)
            phases = argv[++i];
        else if (!strcmp(argv[i], "--kill") && i + 1 < argc)
            victim = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--limit") && i + 1 < argc)
            limit = atof(argv[++i]);
        else if (!strcmp(argv[i], "--alarm") && i + 1 < argc)
            alarm_s = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--expect-nprocs") && i + 1 < argc)
            expect = atoi(argv[++i]);
        else
            TU_FAIL("unknown argument %s", argv[i]);
    }
    tu_alarm(alarm_s);
    tu_rma_start(&world, &me, &n);
    if (expect && n != expect)
        TU_FAIL("%d processes, expected %d", n, expect);
    if (n > 16 || (victim >= 0 && (n < 3 || victim == 0 || victim >= n)))
        TU_FAIL("at most 16 processes; --kill needs 3 or more and a victim other than rank 0");
    void *base;
    TU_CHECK(waitio_win_allocate(world, HEAP, &win, &base));
    heap = base;
    TU_CHECK(waitio_rpc_register(ID_INC, h_inc, NULL));
    TU_CHECK(waitio_rpc_register(ID_SUM, h_sum, NULL));
    barrier();
    if (victim >= 0)
        phase_kill(victim, limit);
    for (const char *p = phases; *p; p++) {
        switch (*p) {
        case 'A': phase_chain(); break;
        case 'B': phase_mixed(); break;
        case 'C': phase_atomics(); break;
        case 'D': phase_coll(); break;
        case 'E': phase_dobj(); break;
        case 'F': phase_edges(); break;
        default: TU_FAIL("unknown phase %c", *p);
        }
    }
    barrier();
    TU_CHECK(waitio_win_free(win));
    if (tu_errors)
        TU_FAIL("%ld errors", tu_errors);
    if (me == 0)
        printf("rma_futures ok: %d processes, phases %s\n", n, phases);
    fflush(stdout);
    TU_CHECK(waitio_finalize());
    return 0;
}
