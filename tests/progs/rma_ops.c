/*
 * rma_ops.c — every one-sided operation of waitio_rma.h between all processes of the instance
 * (any number of PBs and processes), every byte checked where it lands:
 *   A  heap window: get of every member's part, put into a slot per origin, random iput/iget
 *   B  large transfers crossing the chunk size (put_nbi + quiet, iget back)
 *   C  atomics from every member on every member's words: exact totals of fetch-add/add (64 and
 *      32 bit), one winner per compare-swap, or/xor/and bits, swap/set/fetch of integers and
 *      doubles
 *   D  put-with-signal (add and set) to the next member, which waits for the signal
 *   E  remote procedure calls: replies checked, fire-and-forget counts exact, unknown handler
 *   F  user windows of different sizes: put/get, refused accesses beyond a member's part
 *      (with WAITIO_RMA_TEST_NO_ORIGIN_CHECKS=1 the target refuses them: flush/get/atomic report
 *      WAITIO_ERR_BOUNDS)
 *   G  the executable's data segment: put/get/atomics on a global array by its address
 *   H  strided put/get (heap and data window)
 *   I  wait_until / test_until with every comparison
 *   J  rank 0 computes without calling WaitIO while rank 1 gets from it, adds to it and calls a
 *      handler on it that itself gets from rank 1: served by rank 0's progress thread (unless
 *      WAITIO_PROGRESS_THREAD=0, when they complete once rank 0 calls WaitIO again)
 * Usage: rma_ops [--phases ABCDEFGHIJ] [--seed N] [--alarm S] [--expect-nprocs N]
 * Prints "rma_ops ok: N processes, phases ..." on group rank 0.
 */
#include <stdatomic.h>
#include "testutil.h"
#include "waitio_mpi.h"
#include "waitio_rma.h"

#define HEAP (4u << 20)
#define OWN 65536u             /* [0, OWN): filled by the owner */
#define SLOT 16384u            /* [OWN + o*SLOT, ...): written by origin o (at most 16 members) */
#define LARGE_AT (1u << 20)    /* [LARGE_AT, HEAP): large transfers */
#define CTR_AT (OWN + 16 * SLOT) /* counters and words of phase C, D, I */

static int me, n;
static waitio_group_t world;
static uint64_t seed = 1;
static long gdata[4096];                 /* phase G: global data */
static atomic_long rpc_ff_bytes;         /* phase E */

static void barrier(void) { TU_CHECK(waitio_mpi_barrier(world)); }

static uint8_t pat(int owner, int other, size_t i) { return (uint8_t)(tu_mix64(seed ^ ((uint64_t)owner << 40) ^ ((uint64_t)other << 20) ^ i) >> 7); }

static void fill(uint8_t *b, size_t len, int a, int c, size_t base)
{
    for (size_t i = 0; i < len; i++)
        b[i] = pat(a, c, base + i);
}

static void expect(const uint8_t *b, size_t len, int a, int c, size_t base, const char *what)
{
    for (size_t i = 0; i < len; i++)
        if (b[i] != pat(a, c, base + i)) {
            TU_ERR("%s: byte %zu of %zu is %u, expected %u (owner %d, other %d)", what, i, len, b[i],
                   pat(a, c, base + i), a, c);
            return;
        }
}

/* ---- A, B: heap put/get ---- */

static void phase_heap(waitio_win_t w, uint8_t *base)
{
    tu_phase("A: heap get of every part");
    fill(base, OWN, me, me, 0);
    barrier();
    uint8_t *buf = tu_xmalloc(OWN);
    for (int t = 0; t < n; t++) {
        memset(buf, 0, OWN);
        TU_CHECK(waitio_get(w, t, 0, buf, OWN));
        expect(buf, OWN, t, t, 0, "get of a member's part");
    }
    tu_phase("A: heap put into slots");
    for (int t = 0; t < n; t++) {
        fill(buf, SLOT, t, me, 0);
        TU_CHECK(waitio_put(w, t, OWN + (size_t)me * SLOT, buf, SLOT));
    }
    TU_CHECK(waitio_quiet());
    barrier();
    for (int o = 0; o < n; o++)
        expect(base + OWN + (size_t)o * SLOT, SLOT, me, o, 0, "slot written by put");
    barrier();
    tu_phase("A: random iput/iget");
    tu_rng rng = tu_rng_make(seed, (uint64_t)me, 11, 0);
    for (int k = 0; k < 24; k++) {
        int t = (int)tu_rng_below(&rng, (uint64_t)n);
        size_t len = 1 + tu_rng_below(&rng, SLOT - 1), off = tu_rng_below(&rng, SLOT - len + 1);
        size_t at = OWN + (size_t)me * SLOT + off;
        uint8_t *src = tu_xmalloc(len), *back = tu_xmalloc(len);
        fill(src, len, k, me, off);
        waitio_req_t rq[2];
        TU_CHECK(waitio_iput(w, t, at, src, len, &rq[0]));
        TU_CHECK(waitio_wait(&rq[0]));
        TU_CHECK(waitio_flush(w, t));
        TU_CHECK(waitio_iget(w, t, at, back, len, &rq[1]));
        TU_CHECK(waitio_wait(&rq[1]));
        if (rq[1].status.error || memcmp(src, back, len))
            TU_ERR("random iput/iget of %zu bytes at %zu on rank %d: read back differs", len, at, t);
        free(src);
        free(back);
    }
    barrier();
    tu_phase("B: large put_nbi / iget across the chunk size");
    size_t big = (3u << 19) + 13; /* 1.5 MiB + 13 */
    int to = (me + 1) % n, from = (me + n - 1) % n;
    uint8_t *src = tu_xmalloc(big), *back = tu_xmalloc(big);
    fill(src, big, me, to, 0);
    TU_CHECK(waitio_put_nbi(w, to, LARGE_AT, src, big));
    TU_CHECK(waitio_quiet());
    barrier();
    expect(base + LARGE_AT, big, from, me, 0, "large put");
    waitio_req_t rq;
    TU_CHECK(waitio_iget(w, to, LARGE_AT + 7, back, big - 7, &rq));
    TU_CHECK(waitio_wait(&rq));
    if (memcmp(back, src + 7, big - 7))
        TU_ERR("large iget at offset 7 differs");
    TU_CHECK(waitio_get_nbi(w, to, LARGE_AT, back, big));
    TU_CHECK(waitio_quiet());
    if (memcmp(back, src, big))
        TU_ERR("large get_nbi differs");
    free(src);
    free(back);
    free(buf);
    barrier();
}

/* ---- C: atomics ---- */

static void phase_atomics(waitio_win_t w, uint8_t *base)
{
    tu_phase("C: atomics");
    memset(base + CTR_AT, 0, 256);
    barrier();
    const int K = 50;
    int64_t sum_ranks = (int64_t)n * (n + 1) / 2;
    for (int k = 0; k < K; k++)
        for (int t = 0; t < n; t++) {
            int64_t add = me + 1, old = -1;
            TU_CHECK(waitio_atomic(w, t, CTR_AT, WAITIO_AMO_ADD, WAITIO_AMO_INT64, &add, NULL, &old));
            if (old < 0 || old >= K * sum_ranks)
                TU_ERR("fetch-add returned %lld", (long long)old);
            TU_CHECK(waitio_atomic(w, t, CTR_AT + 8, WAITIO_AMO_ADD, WAITIO_AMO_INT64, &add, NULL, NULL));
            int32_t one = 1;
            TU_CHECK(waitio_atomic(w, t, CTR_AT + 16, WAITIO_AMO_ADD, WAITIO_AMO_INT32, &one, NULL, NULL));
        }
    /* compare-swap: one winner per word */
    int64_t zero = 0, mine = me + 1, got = -1;
    TU_CHECK(waitio_atomic(w, 0, CTR_AT + 24, WAITIO_AMO_CSWAP, WAITIO_AMO_INT64, &mine, &zero, &got));
    if (got == 0) {
        int64_t one = 1;
        TU_CHECK(waitio_atomic(w, 0, CTR_AT + 32, WAITIO_AMO_ADD, WAITIO_AMO_INT64, &one, NULL, NULL));
    }
    /* bits: or sets bit me on every member, xor twice leaves nothing, and clears */
    uint64_t bit = 1ull << me, all = ~0ull;
    for (int t = 0; t < n; t++) {
        uint64_t old;
        TU_CHECK(waitio_atomic(w, t, CTR_AT + 40, WAITIO_AMO_OR, WAITIO_AMO_UINT64, &bit, NULL, &old));
        TU_CHECK(waitio_atomic(w, t, CTR_AT + 48, WAITIO_AMO_XOR, WAITIO_AMO_UINT64, &bit, NULL, NULL));
        TU_CHECK(waitio_atomic(w, t, CTR_AT + 48, WAITIO_AMO_XOR, WAITIO_AMO_UINT64, &bit, NULL, NULL));
        TU_CHECK(waitio_atomic(w, t, CTR_AT + 56, WAITIO_AMO_XOR, WAITIO_AMO_UINT64, &bit, NULL, NULL));
        uint32_t keep = ~(1u << me);
        TU_CHECK(waitio_atomic(w, t, CTR_AT + 64, WAITIO_AMO_OR, WAITIO_AMO_UINT32, (uint32_t[]){~0u}, NULL, NULL));
        TU_CHECK(waitio_quiet());
        (void)all;
        TU_CHECK(waitio_atomic(w, t, CTR_AT + 68, WAITIO_AMO_AND, WAITIO_AMO_UINT32, &keep, NULL, NULL));
    }
    TU_CHECK(waitio_quiet());
    barrier();
    int64_t *c64 = (int64_t *)(void *)(base + CTR_AT);
    if (c64[0] != K * sum_ranks || c64[1] != K * sum_ranks)
        TU_ERR("fetch-add total %lld, add total %lld, expected %lld", (long long)c64[0], (long long)c64[1],
               (long long)(K * sum_ranks));
    if (*(int32_t *)(void *)(base + CTR_AT + 16) != K * n)
        TU_ERR("32-bit add total %d, expected %d", *(int32_t *)(void *)(base + CTR_AT + 16), K * n);
    uint64_t want_bits = n == 64 ? ~0ull : (1ull << n) - 1;
    if (*(uint64_t *)(void *)(base + CTR_AT + 40) != want_bits || *(uint64_t *)(void *)(base + CTR_AT + 48) != 0 ||
        *(uint64_t *)(void *)(base + CTR_AT + 56) != want_bits)
        TU_ERR("bit words %llx %llx %llx, expected %llx 0 %llx",
               (unsigned long long)*(uint64_t *)(void *)(base + CTR_AT + 40),
               (unsigned long long)*(uint64_t *)(void *)(base + CTR_AT + 48),
               (unsigned long long)*(uint64_t *)(void *)(base + CTR_AT + 56), (unsigned long long)want_bits,
               (unsigned long long)want_bits);
    if (*(uint32_t *)(void *)(base + CTR_AT + 68) != 0)
        TU_ERR("and cleared word is %x", *(uint32_t *)(void *)(base + CTR_AT + 68));
    if (me == 0 && (c64[4] != 1 || c64[3] < 1 || c64[3] > n))
        TU_ERR("compare-swap: %lld winners, word %lld", (long long)c64[4], (long long)c64[3]);
    barrier();
    /* swap / set / fetch, integers and doubles, on the next member */
    int t = (me + 1) % n;
    int64_t v = 1000 + me, old = 0, f = 0;
    TU_CHECK(waitio_atomic(w, t, CTR_AT + 80, WAITIO_AMO_SET, WAITIO_AMO_INT64, &v, NULL, NULL));
    TU_CHECK(waitio_quiet());
    int64_t v2 = 2000 + me;
    TU_CHECK(waitio_atomic(w, t, CTR_AT + 80, WAITIO_AMO_SWAP, WAITIO_AMO_INT64, &v2, NULL, &old));
    TU_CHECK(waitio_atomic(w, t, CTR_AT + 80, WAITIO_AMO_FETCH, WAITIO_AMO_INT64, NULL, NULL, &f));
    if (old != v || f != v2)
        TU_ERR("swap returned %lld (want %lld), fetch %lld (want %lld)", (long long)old, (long long)v,
               (long long)f, (long long)v2);
    double d = 3.25 * me, dold = -1, d2 = 0.5;
    TU_CHECK(waitio_atomic(w, t, CTR_AT + 88, WAITIO_AMO_SET, WAITIO_AMO_DOUBLE, &d, NULL, NULL));
    TU_CHECK(waitio_quiet());
    TU_CHECK(waitio_atomic(w, t, CTR_AT + 88, WAITIO_AMO_SWAP, WAITIO_AMO_DOUBLE, &d2, NULL, &dold));
    if (dold != d)
        TU_ERR("double swap returned %g, want %g", dold, d);
    TU_CHECK_RC(waitio_atomic(w, t, CTR_AT + 88, WAITIO_AMO_XOR, WAITIO_AMO_DOUBLE, &d2, NULL, &dold),
                WAITIO_ERR_ARG); /* bitwise ops are not defined on floating-point types */
    TU_CHECK_RC(waitio_atomic(w, t, CTR_AT + 81, WAITIO_AMO_FETCH, WAITIO_AMO_INT64, NULL, NULL, &f),
                WAITIO_ERR_ARG); /* misaligned */
    waitio_req_t rq;
    int32_t r32 = -1, inc = 1;
    TU_CHECK(waitio_iatomic(w, t, CTR_AT + 96, WAITIO_AMO_ADD, WAITIO_AMO_INT32, &inc, NULL, &r32, &rq));
    TU_CHECK(waitio_wait(&rq));
    if (r32 != 0)
        TU_ERR("iatomic fetch-add returned %d, expected 0", r32);
    barrier();
}

/* ---- D: signals ---- */

static void phase_signals(waitio_win_t w, uint8_t *base)
{
    tu_phase("D: put with signal");
    uint64_t *sig = (uint64_t *)(void *)(base + CTR_AT + 128);
    sig[0] = sig[1] = 0;
    barrier();
    int to = (me + 1) % n, from = (me + n - 1) % n;
    size_t len = 4096 + 3;
    uint8_t *src = tu_xmalloc(len * 2);
    fill(src, len * 2, me, to, 99);
    for (int k = 0; k < 3; k++)
        TU_CHECK(waitio_put_signal(w, to, LARGE_AT + (size_t)k * len, src, len, w, CTR_AT + 128, 1, WAITIO_SIGNAL_ADD));
    TU_CHECK(waitio_put_signal_nbi(w, to, LARGE_AT + 3 * len, src + len, len, w, CTR_AT + 136, 77, WAITIO_SIGNAL_SET));
    uint64_t three = 3, seventy_seven = 77;
    TU_CHECK(waitio_wait_until(&sig[0], WAITIO_AMO_UINT64, WAITIO_CMP_EQ, &three, 20));
    TU_CHECK(waitio_wait_until(&sig[1], WAITIO_AMO_UINT64, WAITIO_CMP_EQ, &seventy_seven, 20));
    if (waitio_signal_fetch(&sig[0]) != 3)
        TU_ERR("signal fetch %llu", (unsigned long long)waitio_signal_fetch(&sig[0]));
    for (int k = 0; k < 3; k++)
        expect(base + LARGE_AT + (size_t)k * len, len, from, me, 99, "data before its signal");
    expect(base + LARGE_AT + 3 * len, len, from, me, 99 + len, "data before its set signal");
    TU_CHECK(waitio_quiet());
    free(src);
    barrier();
}

/* ---- E: remote procedure calls ---- */

static int h_reverse(int origin, const void *args, size_t len, void *reply, size_t *reply_len, void *user)
{
    (void)user;
    if (len + 1 > *reply_len)
        return 1;
    const uint8_t *a = args;
    uint8_t *r = reply;
    for (size_t i = 0; i < len; i++)
        r[i] = a[len - 1 - i];
    r[len] = (uint8_t)(origin * 16 + me);
    *reply_len = len + 1;
    return 0;
}

static int h_count(int origin, const void *args, size_t len, void *reply, size_t *reply_len, void *user)
{
    (void)origin;
    (void)args;
    (void)reply;
    (void)user;
    atomic_fetch_add(&rpc_ff_bytes, (long)len);
    *reply_len = 0;
    return 0;
}

static void phase_rpc(void)
{
    tu_phase("E: remote procedure calls");
    atomic_store(&rpc_ff_bytes, 0);
    TU_CHECK(waitio_rpc_register(7, h_reverse, NULL));
    TU_CHECK(waitio_rpc_register(8, h_count, NULL));
    barrier();
    tu_rng rng = tu_rng_make(seed, (uint64_t)me, 77, 0);
    for (int t = 0; t < n; t++)
        for (int k = 0; k < 4; k++) {
            size_t len = k == 3 ? 200000 : tu_rng_below(&rng, 300);
            uint8_t *args = tu_xmalloc(len + 1), *reply = tu_xmalloc(len + 2);
            fill(args, len, me, t, (size_t)k);
            waitio_req_t rq;
            TU_CHECK(waitio_rpc(world, t, 7, args, len, reply, len + 2, &rq));
            TU_CHECK(waitio_wait(&rq));
            if (rq.status.len != len + 1)
                TU_ERR("call on %d: reply of %zu bytes, expected %zu", t, rq.status.len, len + 1);
            for (size_t i = 0; i < len; i++)
                if (reply[i] != args[len - 1 - i]) {
                    TU_ERR("call on %d: reply byte %zu wrong", t, i);
                    break;
                }
            if (reply[len] != (uint8_t)(me * 16 + t))
                TU_ERR("call on %d: handler saw origin/target %u, expected %u", t, reply[len], me * 16 + t);
            free(args);
            free(reply);
        }
    const int M = 20;
    uint8_t blob[100] = {0};
    for (int t = 0; t < n; t++)
        for (int k = 0; k < M; k++)
            if (t != me)
                TU_CHECK(waitio_rpc_ff(world, t, 8, blob, sizeof blob));
    uint8_t small[4];
    waitio_req_t rq;
    int other = (me + 1) % n;
    TU_CHECK(waitio_rpc(world, other, 9, "x", 1, small, sizeof small, &rq));
    int rc = waitio_wait(&rq);
    if (rc != WAITIO_ERR_RPC)
        TU_ERR("call of an unregistered handler returned %s, expected WAITIO_ERR_RPC", tu_code_name(rc));
    TU_CHECK(waitio_quiet());
    barrier();
    if (atomic_load(&rpc_ff_bytes) != (long)(n - 1) * M * (long)sizeof blob)
        TU_ERR("fire-and-forget calls delivered %ld bytes, expected %ld", atomic_load(&rpc_ff_bytes),
               (long)(n - 1) * M * (long)sizeof blob);
    barrier();
}

/* ---- F: user windows and bounds ---- */

static void phase_user(int target_checks)
{
    tu_phase("F: user windows and refused accesses");
    size_t size = 1000 + 100 * (size_t)me;
    uint8_t *mem = tu_xcalloc(size, 1);
    waitio_win_t w;
    TU_CHECK(waitio_win_create(world, mem, size, &w));
    for (int t = 0; t < n; t++) {
        size_t ts;
        TU_CHECK(waitio_win_size(w, t, &ts));
        if (ts != 1000 + 100 * (size_t)t)
            TU_ERR("rank %d's part has %zu bytes, expected %zu", t, ts, 1000 + 100 * (size_t)t);
    }
    int to = (me + 1) % n, from = (me + n - 1) % n;
    uint8_t src[64], back[64];
    fill(src, sizeof src, me, to, 5);
    size_t tsize = 1000 + 100 * (size_t)to;
    TU_CHECK(waitio_put(w, to, tsize - 64, src, 64));
    TU_CHECK(waitio_flush(w, to));
    TU_CHECK(waitio_get(w, to, tsize - 64, back, 64));
    if (memcmp(src, back, 64))
        TU_ERR("user window put/get at the end of the part differs");
    if (!target_checks) {
        TU_CHECK_RC(waitio_put(w, to, tsize - 10, src, 20), WAITIO_ERR_BOUNDS);
        TU_CHECK_RC(waitio_get(w, to, tsize + 1, back, 1), WAITIO_ERR_BOUNDS);
        TU_CHECK_RC(waitio_put(w, n, 0, src, 1), WAITIO_ERR_GROUP);
    } else if (to != me) {
        /* the target refuses: a put reports at the next flush, a get and an atomic at once */
        TU_CHECK(waitio_put(w, to, tsize - 10, src, 20));
        TU_CHECK_RC(waitio_flush(w, to), WAITIO_ERR_BOUNDS);
        TU_CHECK_RC(waitio_get(w, to, tsize + 1, back, 1), WAITIO_ERR_BOUNDS);
        int64_t x;
        TU_CHECK_RC(waitio_atomic(w, to, (tsize + 64) & ~(size_t)7, WAITIO_AMO_FETCH, WAITIO_AMO_INT64, NULL, NULL, &x),
                    WAITIO_ERR_BOUNDS);
        TU_CHECK(waitio_flush(w, to)); /* the error was reported once */
    }
    barrier();
    expect(mem + size - 64, 64, from, me, 5, "user window written at its end");
    for (size_t i = 0; i + 64 < size; i++)
        if (mem[i] != 0) {
            TU_ERR("user window byte %zu of %zu changed by a refused access", i, size);
            break;
        }
    TU_CHECK(waitio_win_free(w));
    free(mem);
}

/* ---- G: the data segment ---- */

static void phase_data(void)
{
    tu_phase("G: global data");
    waitio_win_t dw;
    TU_CHECK(waitio_win_create_data(world, &dw));
    size_t off;
    TU_CHECK(waitio_win_offset(dw, &gdata[0], &off));
    for (int i = 0; i < 4096; i++)
        gdata[i] = 0;
    barrier();
    int to = (me + 1) % n, from = (me + n - 1) % n;
    long v[64];
    for (int i = 0; i < 64; i++)
        v[i] = 1000000L * me + i;
    TU_CHECK(waitio_put(dw, to, off + 64 * sizeof(long) * (size_t)me, v, sizeof v));
    for (int t = 0; t < n; t++) {
        long one = 1;
        TU_CHECK(waitio_atomic(dw, t, off + 4000 * sizeof(long), WAITIO_AMO_ADD, WAITIO_AMO_INT64, &one, NULL, NULL));
    }
    TU_CHECK(waitio_quiet());
    barrier();
    for (int i = 0; i < 64; i++)
        if (gdata[64 * from + i] != 1000000L * from + i) {
            TU_ERR("global data word %d from %d is %ld", i, from, gdata[64 * from + i]);
            break;
        }
    if (gdata[4000] != n)
        TU_ERR("global counter is %ld, expected %d", gdata[4000], n);
    long back[64];
    TU_CHECK(waitio_get(dw, to, off + 64 * sizeof(long) * (size_t)me, back, sizeof back));
    if (memcmp(back, v, sizeof v))
        TU_ERR("global data read back differs");
    long fetched = -1;
    TU_CHECK(waitio_atomic(dw, to, off + 4000 * sizeof(long), WAITIO_AMO_FETCH, WAITIO_AMO_INT64, NULL, NULL, &fetched));
    if (fetched != n)
        TU_ERR("global counter fetched %ld, expected %d", fetched, n);
    barrier();
    TU_CHECK(waitio_win_free(dw));
}

/* ---- H: strided ---- */

static void phase_strided(waitio_win_t w, uint8_t *base)
{
    tu_phase("H: strided");
    int to = (me + 1) % n, from = (me + n - 1) % n;
    int32_t src[40], back[20];
    for (int i = 0; i < 40; i++)
        src[i] = me * 1000 + i;
    memset(base + LARGE_AT, 0, 4096);
    barrier();
    /* every other element of src to every third int of the target */
    TU_CHECK(waitio_put_strided(w, to, LARGE_AT, 12, src, 8, 4, 20));
    TU_CHECK(waitio_quiet());
    barrier();
    const int32_t *t = (const int32_t *)(const void *)(base + LARGE_AT);
    for (int i = 0; i < 20; i++)
        if (t[3 * i] != from * 1000 + 2 * i || t[3 * i + 1] != 0)
            TU_ERR("strided put element %d is %d", i, t[3 * i]);
    TU_CHECK(waitio_get_strided(w, to, LARGE_AT, 12, back, 4, 4, 20));
    for (int i = 0; i < 20; i++)
        if (back[i] != me * 1000 + 2 * i)
            TU_ERR("strided get element %d is %d", i, back[i]);
    barrier();
}

/* ---- I: wait_until ---- */

static void phase_wait(waitio_win_t w, uint8_t *base)
{
    tu_phase("I: wait_until / test_until");
    int64_t *word = (int64_t *)(void *)(base + CTR_AT + 192);
    *word = 0;
    barrier();
    int to = (me + 1) % n;
    int cmps[] = {WAITIO_CMP_EQ, WAITIO_CMP_NE, WAITIO_CMP_GT, WAITIO_CMP_GE, WAITIO_CMP_LT, WAITIO_CMP_LE};
    /* the predecessor sets the word in turn to values that alone satisfy each comparison; the
     * waiter acknowledges each step with an add on the predecessor's next word */
    int64_t set_to[] = {5, 8, 10, 11, -1, -7};
    int64_t cmp_to[] = {5, 5, 9, 11, 0, -5};
    int64_t *ack = word + 1;
    *ack = 0;
    barrier();
    for (int k = 0; k < 6; k++) {
        TU_CHECK(waitio_atomic(w, to, CTR_AT + 192, WAITIO_AMO_SET, WAITIO_AMO_INT64, &set_to[k], NULL, NULL));
        TU_CHECK(waitio_quiet());
        TU_CHECK(waitio_wait_until(word, WAITIO_AMO_INT64, cmps[k], &cmp_to[k], 20));
        if (*word != set_to[k])
            TU_ERR("step %d: word is %lld, expected %lld", k, (long long)*word, (long long)set_to[k]);
        int flag = 0;
        TU_CHECK(waitio_test_until(word, WAITIO_AMO_INT64, cmps[k], &cmp_to[k], &flag));
        if (!flag)
            TU_ERR("test_until false right after wait_until (cmp %d)", cmps[k]);
        int64_t one = 1, target = k + 1;
        TU_CHECK(waitio_atomic(w, (me + n - 1) % n, CTR_AT + 200, WAITIO_AMO_ADD, WAITIO_AMO_INT64, &one, NULL, NULL));
        TU_CHECK(waitio_quiet());
        TU_CHECK(waitio_wait_until(ack, WAITIO_AMO_INT64, WAITIO_CMP_GE, &target, 20));
    }
    int64_t big = 100;
    TU_CHECK_RC(waitio_wait_until(word, WAITIO_AMO_INT64, WAITIO_CMP_GT, &big, 0.05), WAITIO_ERR_TIMEOUT);
    barrier();
}

/* ---- J: served while the target computes (progress thread) ---- */

static waitio_win_t j_user;
static int64_t j_mem[8];

/* Runs on the target: a nested one-sided get from the caller's user window. */
static int h_nested(int origin, const void *args, size_t len, void *reply, size_t *reply_len, void *user)
{
    (void)args;
    (void)len;
    (void)user;
    if (*reply_len < 8 || waitio_get(j_user, origin, 0, reply, 8) != 0)
        return 1;
    *reply_len = 8;
    return 0;
}

static void phase_thread(waitio_win_t w, uint8_t *base)
{
    tu_phase("J: served while the target computes");
    const char *mode = getenv("WAITIO_PROGRESS_THREAD");
    int thread = !mode || strcmp(mode, "0") != 0; /* auto starts it: user windows are served */
    int64_t *flag = (int64_t *)(void *)(base + CTR_AT + 224);
    *flag = 0;
    for (int i = 0; i < 8; i++)
        j_mem[i] = 100 * me + i;
    TU_CHECK(waitio_win_create(world, j_mem, sizeof j_mem, &j_user));
    TU_CHECK(waitio_rpc_register(10, h_nested, NULL));
    barrier();
    if (n >= 2 && me == 0) {
        /* no WaitIO call until rank 1 says it is done (or the limit passes: without a thread,
         * rank 1's operations complete only once this rank calls WaitIO again) */
        double t0 = tu_now(), limit = thread ? 10 : 0.2;
        while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE) && tu_now() - t0 < limit)
            ;
        double waited = tu_now() - t0;
        if (thread && waited >= limit)
            TU_ERR("rank 1's operations were not served while this rank computed");
        printf("rma_ops: rank 0 computed %.3f s %s\n", waited,
               thread ? "while rank 1's operations were served" : "(no progress thread)");
    } else if (n >= 2 && me == 1) {
        int64_t v[2], one = 1, old;
        uint8_t reply[8];
        waitio_req_t rq;
        TU_CHECK(waitio_get(j_user, 0, 8, v, sizeof v));
        if (v[0] != 1 || v[1] != 2)
            TU_ERR("get from the computing rank: %lld %lld", (long long)v[0], (long long)v[1]);
        TU_CHECK(waitio_atomic(j_user, 0, 56, WAITIO_AMO_ADD, WAITIO_AMO_INT64, &one, NULL, &old));
        TU_CHECK(waitio_rpc(world, 0, 10, NULL, 0, reply, sizeof reply, &rq));
        TU_CHECK(waitio_wait(&rq));
        int64_t got;
        memcpy(&got, reply, 8);
        if (got != 100)
            TU_ERR("the nested get of the handler returned %lld, expected 100", (long long)got);
        TU_CHECK(waitio_atomic(w, 0, CTR_AT + 224, WAITIO_AMO_SET, WAITIO_AMO_INT64, &one, NULL, NULL));
        TU_CHECK(waitio_quiet());
    }
    barrier();
    TU_CHECK(waitio_win_free(j_user));
}

int main(int argc, char **argv)
{
    tu_set_name(argv[0]);
    const char *phases = "ABCDEFGHIJ";
    int expect_n = 0;
    unsigned alarm_s = 60;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--phases") && i + 1 < argc)
            phases = argv[++i];
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--alarm") && i + 1 < argc)
            alarm_s = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--expect-nprocs") && i + 1 < argc)
            expect_n = atoi(argv[++i]);
        else
            TU_FAIL("unknown argument %s", argv[i]);
    }
    tu_alarm(alarm_s);
    tu_rma_start(&world, &me, &n);
    if (expect_n && n != expect_n)
        TU_FAIL("%d processes, expected %d", n, expect_n);
    if (n > 16)
        TU_FAIL("at most 16 processes");
    const char *nc = getenv("WAITIO_RMA_TEST_NO_ORIGIN_CHECKS");
    int target_checks = nc && !strcmp(nc, "1");
    waitio_win_t w;
    void *vb;
    TU_CHECK(waitio_win_allocate(world, HEAP, &w, &vb));
    uint8_t *base = vb;
    for (size_t i = 0; i < HEAP; i += 4096)
        if (base[i])
            TU_FAIL("a new window is not zero-filled");
    if (strchr(phases, 'A') || strchr(phases, 'B'))
        phase_heap(w, base);
    if (strchr(phases, 'C'))
        phase_atomics(w, base);
    if (strchr(phases, 'D'))
        phase_signals(w, base);
    if (strchr(phases, 'E'))
        phase_rpc();
    if (strchr(phases, 'F'))
        phase_user(target_checks);
    if (strchr(phases, 'G'))
        phase_data();
    if (strchr(phases, 'H'))
        phase_strided(w, base);
    if (strchr(phases, 'I'))
        phase_wait(w, base);
    if (strchr(phases, 'J'))
        phase_thread(w, base);
    tu_phase("finish");
    TU_CHECK(waitio_win_free(w));
    barrier();
    if (tu_errors)
        TU_FAIL("%ld errors", tu_errors);
    if (me == 0)
        printf("rma_ops ok: %d processes, phases %s\n", n, phases);
    TU_CHECK(waitio_finalize());
    return 0;
}
