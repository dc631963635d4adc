/*
 * rma_ucx.c — one-sided operations where some go over UCX's RDMA and some cannot (issue 27 item
 * 4; tests/scripts/rma_ucx.sh runs it and reads which path each took from the finalize lines):
 *   P  heap and user windows: put, iput, put_nbi + quiet, get, iget, get_nbi + quiet of a block
 *      per origin to every other member, every byte checked where it lands and where it returns
 *   A  atomics from every member on rank 0's words, mixing operations UCX does (64-bit fetch-add,
 *      32-bit add, compare-and-swap) with operations it cannot (64-bit max, double add: frames):
 *      exact totals, fetched values unique across members, one compare-and-swap winner. Run with
 *      one process on WAITIO_RMA_RDMA=0 (every operation of it as frames), the same words take
 *      RDMA and frame updates at once.
 *   O  order across the paths: a put (RDMA) followed by a max (frames) on a flag, and a put with
 *      an add signal; the target waits for the flag / signal and checks the data behind it
 * Usage: rma_ucx [--iters N] [--alarm S]. Prints "rma_ucx ok: N processes" on rank 0.
 */
#include <stdatomic.h>
#include "testutil.h"
#include "waitio_mpi.h"
#include "waitio_rma.h"

#define HEAP (2u << 20) /* a whole 2 MiB: a part UCX may map for peers on this host (rdma.c) */
#define BLOCK 16384u            /* per origin: [o * BLOCK, (o+1) * BLOCK) */
#define MAXN 8
#define WORDS (MAXN * BLOCK)    /* rank 0's atomic words, then the order phase's flags */
#define W_FADD (WORDS + 0)      /* int64 fetch-add (RDMA) */
#define W_ADD32 (WORDS + 8)     /* uint32 add (RDMA) */
#define W_MAX (WORDS + 16)      /* int64 max (frames) */
#define W_DADD (WORDS + 24)     /* double add (frames) */
#define W_CS (WORDS + 32)       /* int64 compare-and-swap (RDMA) */
#define W_FLAG (WORDS + 64)     /* order phase: flag, then signal, per member */
#define W_SIG (WORDS + 128)
#define ORDER_AT (WORDS + 4096) /* order phase: the data */
#define ORDER_LEN 8192u

static int me, n, iters = 200;
static waitio_group_t world;

static void barrier(void) { TU_CHECK(waitio_mpi_barrier(world)); }

static uint8_t pat(int origin, int target, int round, size_t i)
{
    return (uint8_t)(tu_mix64(((uint64_t)origin << 48) ^ ((uint64_t)target << 32) ^ ((uint64_t)round << 24) ^ i) >> 5);
}

static void fill(uint8_t *b, size_t len, int o, int t, int round)
{
    for (size_t i = 0; i < len; i++)
        b[i] = pat(o, t, round, i);
}

static void expect(const uint8_t *b, size_t len, int o, int t, int round, const char *what)
{
    for (size_t i = 0; i < len; i++)
        if (b[i] != pat(o, t, round, i)) {
            TU_ERR("%s: byte %zu of %zu is %u, expected %u (origin %d, target %d, round %d)", what, i, len,
                   b[i], pat(o, t, round, i), o, t, round);
            return;
        }
}

/* ---- P ---- */

/* Round 0 put, 1 iput, 2 put_nbi; each origin's block lands in [me * BLOCK, ...) of every other. */
static void put_round(waitio_win_t w, const uint8_t *base, int round)
{
    uint8_t *src = tu_xmalloc(BLOCK);
    for (int t = 0; t < n; t++) {
        if (t == me)
            continue;
        fill(src, BLOCK, me, t, round);
        size_t off = (size_t)me * BLOCK;
        if (round == 0) {
            TU_CHECK(waitio_put(w, t, off, src, BLOCK));
        } else if (round == 1) {
            waitio_req_t rq;
            TU_CHECK(waitio_iput(w, t, off, src, BLOCK, &rq));
            TU_CHECK(waitio_wait(&rq));
        } else {
            TU_CHECK(waitio_put_nbi(w, t, off, src, BLOCK));
            TU_CHECK(waitio_quiet()); /* before src changes */
        }
    }
    TU_CHECK(waitio_quiet());
    barrier();
    for (int o = 0; o < n; o++)
        if (o != me)
            expect(base + (size_t)o * BLOCK, BLOCK, o, me, round, "put landed");
    barrier();
    /* and back: get what we put into every other member, in the round's form */
    uint8_t *dst = tu_xmalloc(BLOCK);
    for (int t = 0; t < n; t++) {
        if (t == me)
            continue;
        memset(dst, 0, BLOCK);
        size_t off = (size_t)me * BLOCK;
        if (round == 0) {
            TU_CHECK(waitio_get(w, t, off, dst, BLOCK));
        } else if (round == 1) {
            waitio_req_t rq;
            TU_CHECK(waitio_iget(w, t, off, dst, BLOCK, &rq));
            TU_CHECK(waitio_wait(&rq));
        } else {
            TU_CHECK(waitio_get_nbi(w, t, off, dst, BLOCK));
            TU_CHECK(waitio_quiet());
        }
        expect(dst, BLOCK, me, t, round, "get returned");
        uint64_t word = 0; /* the 8-byte get of the latency figures */
        TU_CHECK(waitio_get(w, t, off + 8, &word, 8));
        if (memcmp(&word, dst + 8, 8))
            TU_ERR("8-byte get from %d differs from the block's bytes 8..15", t);
    }
    free(src);
    free(dst);
    barrier();
}

static void phase_put_get(waitio_win_t heap, uint8_t *hbase)
{
    tu_phase("P: put/get, heap window");
    for (int round = 0; round < 3; round++)
        put_round(heap, hbase, round);
    tu_phase("P: put/get, user window");
    uint8_t *mem = tu_xmalloc(MAXN * BLOCK);
    memset(mem, 0, MAXN * BLOCK);
    waitio_win_t uw;
    TU_CHECK(waitio_win_create(world, mem, MAXN * BLOCK, &uw));
    put_round(uw, mem, 1);
    TU_CHECK(waitio_win_free(uw));
    free(mem);
}

/* ---- A ---- */

static void phase_atomics(waitio_win_t w, uint8_t *base)
{
    tu_phase("A: atomics on rank 0's words");
    long long sum_fetched = 0, prev = -1;
    int cs_won = 0;
    for (int i = 0; i < iters; i++) {
        int64_t one = 1, old = 0, mx = (int64_t)me * iters + i;
        TU_CHECK(waitio_atomic(w, 0, W_FADD, WAITIO_AMO_ADD, WAITIO_AMO_INT64, &one, NULL, &old));
        if (old <= prev)
            TU_ERR("fetch-add %d returned %lld after %lld", i, (long long)old, prev);
        prev = old;
        sum_fetched += old;
        uint32_t three = 3;
        TU_CHECK(waitio_atomic(w, 0, W_ADD32, WAITIO_AMO_ADD, WAITIO_AMO_UINT32, &three, NULL, NULL));
        TU_CHECK(waitio_atomic(w, 0, W_MAX, WAITIO_AMO_MAX, WAITIO_AMO_INT64, &mx, NULL, NULL));
        double half = 0.5;
        TU_CHECK(waitio_atomic(w, 0, W_DADD, WAITIO_AMO_ADD, WAITIO_AMO_DOUBLE, &half, NULL, NULL));
        if (i == iters / 2) {
            int64_t zero = 0, mine = me + 1, was = -1;
            TU_CHECK(waitio_atomic(w, 0, W_CS, WAITIO_AMO_CSWAP, WAITIO_AMO_INT64, &mine, &zero, &was));
            cs_won = was == 0;
        }
    }
    TU_CHECK(waitio_quiet());
    long long tot[2] = {sum_fetched, cs_won}, all[2] = {0, 0};
    TU_CHECK(waitio_mpi_allreduce(tot, all, 2, WAITIO_MPI_LONG_LONG, WAITIO_MPI_SUM, world));
    long long total = (long long)n * iters;
    if (all[0] != total * (total - 1) / 2)
        TU_ERR("fetched values sum to %lld, expected %lld: not every fetch-add saw its own value", all[0],
               total * (total - 1) / 2);
    if (all[1] != 1)
        TU_ERR("%lld compare-and-swap winners", all[1]);
    if (me == 0) {
        int64_t fadd, mx, cs;
        uint32_t a32;
        double d;
        memcpy(&fadd, base + W_FADD, 8);
        memcpy(&a32, base + W_ADD32, 4);
        memcpy(&mx, base + W_MAX, 8);
        memcpy(&d, base + W_DADD, 8);
        memcpy(&cs, base + W_CS, 8);
        if (fadd != total || a32 != (uint32_t)(3 * total) || mx != total - 1 || d != 0.5 * (double)total ||
            cs < 1 || cs > n)
            TU_ERR("totals: fetch-add %lld (want %lld), add32 %u (want %u), max %lld (want %lld), double add %g "
                   "(want %g), cswap %lld", (long long)fadd, total, a32, (unsigned)(3 * total), (long long)mx,
                   total - 1, d, 0.5 * (double)total, (long long)cs);
    }
    barrier();
}

/* ---- O ---- */

static void phase_order(waitio_win_t w, uint8_t *base)
{
    tu_phase("O: order across paths");
    int to = (me + 1) % n, from = (me + n - 1) % n;
    uint8_t *src = tu_xmalloc(ORDER_LEN);
    for (int round = 0; round < 20; round++) {
        fill(src, ORDER_LEN, me, to, 100 + round);
        /* data over RDMA, then the flag by frames (max: UCX has none) */
        TU_CHECK(waitio_put(w, to, ORDER_AT, src, ORDER_LEN));
        int64_t flag = 2 * round + 1;
        TU_CHECK(waitio_atomic(w, to, W_FLAG, WAITIO_AMO_MAX, WAITIO_AMO_INT64, &flag, NULL, NULL));
        TU_CHECK(waitio_wait_until(base + W_FLAG, WAITIO_AMO_INT64, WAITIO_CMP_GE, &flag, 20.0));
        expect(base + ORDER_AT, ORDER_LEN, from, me, 100 + round, "data behind a max flag");
        barrier();
        /* data and an add signal over RDMA */
        fill(src, ORDER_LEN, me, to, 200 + round);
        TU_CHECK(waitio_put_signal(w, to, ORDER_AT, src, ORDER_LEN, w, W_SIG, 1, WAITIO_SIGNAL_ADD));
        uint64_t want = (uint64_t)round + 1;
        TU_CHECK(waitio_wait_until(base + W_SIG, WAITIO_AMO_UINT64, WAITIO_CMP_GE, &want, 20.0));
        expect(base + ORDER_AT, ORDER_LEN, from, me, 200 + round, "data behind a signal");
        barrier();
    }
    free(src);
}

int main(int argc, char **argv)
{
    tu_set_name(argv[0]);
    unsigned alarm_s = 60;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--alarm") && i + 1 < argc)
            alarm_s = (unsigned)atoi(argv[++i]);
        else
            TU_FAIL("unknown argument %s", argv[i]);
    }
    tu_alarm(alarm_s);
    tu_rma_start(&world, &me, &n);
    if (n < 2 || n > MAXN)
        TU_FAIL("2 to %d processes, not %d", MAXN, n);
    waitio_win_t w;
    void *vb;
    TU_CHECK(waitio_win_allocate(world, HEAP, &w, &vb));
    phase_put_get(w, vb);
    phase_atomics(w, vb);
    phase_order(w, vb);
    tu_phase("finish");
    TU_CHECK(waitio_win_free(w));
    barrier();
    if (tu_errors)
        TU_FAIL("%ld errors", tu_errors);
    if (me == 0)
        printf("rma_ucx ok: %d processes\n", n);
    TU_CHECK(waitio_finalize());
    return 0;
}
