/*
 * gpu_vcoll.c — the conversion layer's remaining collectives on device buffers (cuMemAlloc):
 * gatherv, scatterv, allgatherv (also with a derived receive type that has holes), alltoallv,
 * reduce_scatter, reduce_scatter_block, scan, exscan — each also in place — and the
 * non-blocking Ibcast, Iallreduce (in place too) and Ibarrier, completed by wait, test and
 * waitall. Block sizes and the gaps between blocks are random (one seed, drawn by rank 0 and
 * printed: WAITIO_TEST_SEED replays it); every buffer is on the device or on the host by a rule
 * that mixes the kinds across ranks and within a call. Every byte of every buffer a call may
 * write — the gaps and holes it must leave alone included — is compared after the call with a
 * model computed on the host. Runs with the fake driver (tests/gpu/ci_vcoll.sh) or a real GPU.
 */
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "gpu_testdrv.h"
#include "testutil.h"
#include "waitio_mpi.h"

#define MAXC 700   /* elements per block at most */
#define ROUNDS 3

static int me, np;
static unsigned seed;
static int round_no;

/* ---- deterministic randomness: the same on every rank, no shared state ---- */

static unsigned mix(unsigned a, unsigned b, unsigned c, unsigned d)
{
    unsigned h = seed * 0x9e3779b9u ^ (unsigned)round_no * 0x85ebca6bu;
    unsigned v[4] = {a, b, c, d};
    for (int i = 0; i < 4; i++) {
        h ^= v[i] + 0x7f4a7c15u + (h << 6) + (h >> 2);
        h *= 0xc2b2ae35u;
        h ^= h >> 15;
    }
    return h;
}

/* a count in [0, MAXC] (0 one time in 8) for (what, i, j) */
static int rcount(unsigned what, int i, int j)
{
    unsigned h = mix(what, (unsigned)i, (unsigned)j, 1);
    return h % 8 == 0 ? 0 : (int)(h >> 3) % (MAXC + 1);
}
static int rgap(unsigned what, int i) { return (int)(mix(what, (unsigned)i, 7, 2) % 4); }

/* Device or host for buffer `k` of the current case: mixed across ranks and buffers, never all
 * host (rank 0's first buffer of every case is on the device). */
static unsigned case_no;
static int on_dev(int k) { return (me == 0 && k == 0) || mix(case_no, (unsigned)me, (unsigned)k, 3) % 3 != 0; }

static int value(int rank, int i, int salt) { return (rank + 1) * 100003 + i * 7 + salt * 13; }
#define SENTINEL(i) (-1000 - (i))

/* ---- buffers of ints on the device or the host ---- */

typedef struct ibuf {
    int *p;   /* what the call gets */
    size_t n;
    int dev;
} ibuf;

static ibuf ib_make(size_t n, int dev, const int *init)
{
    ibuf b = {.n = n, .dev = dev};
    if (dev) {
        b.p = td_alloc(n * sizeof(int));
        td_put(b.p, init, n * sizeof(int));
    } else {
        b.p = tu_xmalloc((n ? n : 1) * sizeof(int));
        memcpy(b.p, init, n * sizeof(int));
    }
    return b;
}

static void ib_free(ibuf *b)
{
    if (b->dev)
        td_free(b->p);
    else
        free(b->p);
}

/* every element of b against want */
static void ib_check(const char *what, const ibuf *b, const int *want)
{
    int *h = tu_xmalloc((b->n ? b->n : 1) * sizeof(int));
    if (b->dev)
        td_get(h, b->p, b->n * sizeof(int));
    else
        memcpy(h, b->p, b->n * sizeof(int));
    for (size_t i = 0; i < b->n; i++)
        if (h[i] != want[i]) {
            TU_ERR("%s (seed %u round %d, %s buffer): element %zu is %d, expected %d", what, seed,
                   round_no, b->dev ? "device" : "host", i, h[i], want[i]);
            break;
        }
    free(h);
}

static int *sentinels(size_t n)
{
    int *a = tu_xmalloc((n ? n : 1) * sizeof(int));
    for (size_t i = 0; i < n; i++)
        a[i] = SENTINEL((int)i);
    return a;
}

/* Displacements of n blocks of counts[] with random gaps between them; returns the span. */
static size_t layout(unsigned what, const int *counts, int *displs, int n)
{
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        at += (size_t)rgap(what, i);
        displs[i] = (int)at;
        at += (size_t)counts[i];
    }
    return at + (size_t)rgap(what, n);
}

/* ---- gatherv, allgatherv ---- */

static void test_gatherv(WAITIO_MPI_Comm c, int all, int in_place)
{
    case_no++;
    int counts[64], displs[64], root = (int)(mix(case_no, 0, 0, 4) % (unsigned)np);
    for (int i = 0; i < np; i++)
        counts[i] = rcount(case_no, i, 0);
    size_t span = layout(case_no, counts, displs, np);
    int salt = (int)case_no;
    int *sv = tu_xmalloc(((size_t)counts[me] + 1) * sizeof(int));
    for (int j = 0; j < counts[me]; j++)
        sv[j] = value(me, j, salt);
    ibuf s = ib_make((size_t)counts[me], on_dev(0), sv);
    int gets = all || me == root, ip = in_place && gets;
    int *init = sentinels(span), *want = sentinels(span);
    for (int i = 0; i < np; i++)
        for (int j = 0; j < counts[i]; j++)
            want[displs[i] + j] = value(i, j, salt);
    if (ip) /* the own block is where the result goes */
        memcpy(init + displs[me], want + displs[me], (size_t)counts[me] * sizeof(int));
    ibuf r = ib_make(span, on_dev(1), init);
    const void *sb = ip ? WAITIO_MPI_IN_PLACE : s.p;
    char what[64];
    snprintf(what, sizeof what, "%sgatherv%s", all ? "all" : "", ip ? " in place" : "");
    tu_phase("%s", what);
    if (all)
        TU_CHECK(waitio_mpi_allgatherv(sb, counts[me], WAITIO_MPI_INT, r.p, counts, displs,
                                       WAITIO_MPI_INT, c));
    else
        TU_CHECK(waitio_mpi_gatherv(sb, counts[me], WAITIO_MPI_INT, gets ? r.p : NULL, counts,
                                    displs, WAITIO_MPI_INT, root, c));
    ib_check(what, &r, gets ? want : init);
    ib_check("gatherv's send buffer", &s, sv);
    ib_free(&s);
    ib_free(&r);
    free(sv);
    free(init);
    free(want);
}

/* allgatherv into elements of a vector type (ints 0 and 2 of every 3): the holes stay */
static void test_allgatherv_holes(WAITIO_MPI_Comm c)
{
    case_no++;
    WAITIO_MPI_Datatype vec;
    TU_CHECK(waitio_mpi_type_vector(2, 1, 2, WAITIO_MPI_INT, &vec));
    TU_CHECK(waitio_mpi_type_commit(&vec));
    int counts[64], displs[64], salt = (int)case_no;
    for (int i = 0; i < np; i++)
        counts[i] = rcount(case_no, i, 0) / 2; /* elements of vec: 2 ints each */
    size_t span = 3 * layout(case_no, counts, displs, np); /* extent: 3 ints */
    int *sv = tu_xmalloc(((size_t)counts[me] * 2 + 1) * sizeof(int));
    for (int j = 0; j < 2 * counts[me]; j++)
        sv[j] = value(me, j, salt);
    ibuf s = ib_make(2 * (size_t)counts[me], on_dev(0), sv);
    int *init = sentinels(span), *want = sentinels(span);
    for (int i = 0; i < np; i++)
        for (int e = 0; e < counts[i]; e++) {
            want[3 * (displs[i] + e)] = value(i, 2 * e, salt);
            want[3 * (displs[i] + e) + 2] = value(i, 2 * e + 1, salt);
        }
    ibuf r = ib_make(span, on_dev(1), init);
    tu_phase("allgatherv into a vector type");
    TU_CHECK(waitio_mpi_allgatherv(s.p, 2 * counts[me], WAITIO_MPI_INT, r.p, counts, displs, vec, c));
    ib_check("allgatherv into a vector type", &r, want);
    TU_CHECK(waitio_mpi_type_free(&vec));
    ib_free(&s);
    ib_free(&r);
    free(sv);
    free(init);
    free(want);
}

/* ---- scatterv ---- */

static void test_scatterv(WAITIO_MPI_Comm c, int in_place)
{
    case_no++;
    int counts[64], displs[64], root = (int)(mix(case_no, 0, 0, 4) % (unsigned)np), salt = (int)case_no;
    for (int i = 0; i < np; i++)
        counts[i] = rcount(case_no, i, 0);
    size_t span = layout(case_no, counts, displs, np);
    int ip = in_place && me == root;
    int *sv = tu_xmalloc(span * sizeof(int) + 1);
    for (size_t i = 0; i < span; i++)
        sv[i] = value(root, (int)i, salt);
    ibuf s = ib_make(me == root ? span : 0, on_dev(0), sv);
    size_t rn = (size_t)counts[me] + 2; /* two more: not to be written */
    int *init = sentinels(rn), *want = sentinels(rn);
    for (int j = 0; j < counts[me]; j++)
        want[j] = value(root, displs[me] + j, salt);
    ibuf r = ib_make(rn, on_dev(1), init);
    tu_phase("scatterv%s", ip ? " in place" : "");
    TU_CHECK(waitio_mpi_scatterv(me == root ? s.p : NULL, counts, displs, WAITIO_MPI_INT,
                                 ip ? WAITIO_MPI_IN_PLACE : r.p, counts[me], WAITIO_MPI_INT, root, c));
    ib_check(ip ? "scatterv in place" : "scatterv", &r, ip ? init : want);
    if (me == root)
        ib_check("scatterv's send buffer", &s, sv);
    ib_free(&s);
    ib_free(&r);
    free(sv);
    free(init);
    free(want);
}

/* ---- alltoallv ---- */

/* elements rank i sends to rank j; symmetric in place (MPI requires it of IN_PLACE) */
static int a2a_count(int i, int j, int sym)
{
    return sym && i > j ? rcount(case_no, j, i) : rcount(case_no, i, j);
}

static void test_alltoallv(WAITIO_MPI_Comm c, int in_place)
{
    case_no++;
    int sc[64], sd[64], rc[64], rd[64], salt = (int)case_no;
    for (int k = 0; k < np; k++) {
        sc[k] = a2a_count(me, k, in_place);
        rc[k] = a2a_count(k, me, in_place);
    }
    size_t sspan = layout(case_no * 2 + (unsigned)me, sc, sd, np);
    size_t rspan = layout(case_no * 3 + (unsigned)me, rc, rd, np);
    /* element j of the block for rank k: value(me, j, salt + k) */
    int *sv = tu_xmalloc(sspan * sizeof(int) + 1);
    for (size_t i = 0; i < sspan; i++)
        sv[i] = SENTINEL((int)i);
    for (int k = 0; k < np; k++)
        for (int j = 0; j < sc[k]; j++)
            sv[sd[k] + j] = value(me, j, salt + k);
    int *init = sentinels(rspan), *want = sentinels(rspan);
    for (int k = 0; k < np; k++)
        for (int j = 0; j < rc[k]; j++) {
            want[rd[k] + j] = value(k, j, salt + me);
            if (in_place) /* what goes to rank k, laid out as what comes from it */
                init[rd[k] + j] = value(me, j, salt + k);
        }
    ibuf s = ib_make(in_place ? 0 : sspan, on_dev(0), sv), r = ib_make(rspan, on_dev(1), init);
    tu_phase("alltoallv%s", in_place ? " in place" : "");
    if (in_place)
        TU_CHECK(waitio_mpi_alltoallv(WAITIO_MPI_IN_PLACE, NULL, NULL, WAITIO_MPI_INT, r.p, rc, rd,
                                      WAITIO_MPI_INT, c));
    else
        TU_CHECK(waitio_mpi_alltoallv(s.p, sc, sd, WAITIO_MPI_INT, r.p, rc, rd, WAITIO_MPI_INT, c));
    ib_check(in_place ? "alltoallv in place" : "alltoallv", &r, want);
    if (!in_place)
        ib_check("alltoallv's send buffer", &s, sv);
    ib_free(&s);
    ib_free(&r);
    free(sv);
    free(init);
    free(want);
}

/* ---- reduce_scatter(_block) ---- */

static void test_reduce_scatter(WAITIO_MPI_Comm c, int block, int in_place)
{
    case_no++;
    int counts[64], salt = (int)case_no, off = 0;
    size_t total = 0;
    for (int i = 0; i < np; i++) {
        counts[i] = block ? rcount(case_no, 0, 0) : rcount(case_no, i, 0);
        if (i < me)
            off += counts[i];
        total += (size_t)counts[i];
    }
    int *sv = tu_xmalloc(total * sizeof(int) + 1);
    for (size_t i = 0; i < total; i++)
        sv[i] = value(me, (int)i, salt);
    size_t rn = in_place ? total : (size_t)counts[me] + 2;
    int *init = in_place ? tu_xmalloc(total * sizeof(int) + 1) : sentinels(rn);
    if (in_place)
        memcpy(init, sv, total * sizeof(int));
    int *want = tu_xmalloc(rn * sizeof(int));
    memcpy(want, init, rn * sizeof(int)); /* what is not the result stays */
    for (int j = 0; j < counts[me]; j++) {
        want[j] = 0;
        for (int k = 0; k < np; k++)
            want[j] += value(k, off + j, salt);
    }
    ibuf s = ib_make(in_place ? 0 : total, on_dev(0), sv), r = ib_make(rn, on_dev(1), init);
    const void *sb = in_place ? WAITIO_MPI_IN_PLACE : s.p;
    char what[64];
    snprintf(what, sizeof what, "reduce_scatter%s%s", block ? "_block" : "", in_place ? " in place" : "");
    tu_phase("%s", what);
    if (block)
        TU_CHECK(waitio_mpi_reduce_scatter_block(sb, r.p, counts[0], WAITIO_MPI_INT, WAITIO_MPI_SUM, c));
    else
        TU_CHECK(waitio_mpi_reduce_scatter(sb, r.p, counts, WAITIO_MPI_INT, WAITIO_MPI_SUM, c));
    ib_check(what, &r, want);
    ib_free(&s);
    ib_free(&r);
    free(sv);
    free(init);
    free(want);
}

/* ---- scan, exscan ---- */

static void test_scan(WAITIO_MPI_Comm c, int exclusive, int in_place)
{
    case_no++;
    int n = rcount(case_no, 0, 0), salt = (int)case_no;
    int *sv = tu_xmalloc((size_t)n * sizeof(int) + 1), *init = sentinels((size_t)n + 2);
    for (int j = 0; j < n; j++)
        sv[j] = value(me, j, salt);
    if (in_place)
        memcpy(init, sv, (size_t)n * sizeof(int));
    int *want = tu_xmalloc(((size_t)n + 2) * sizeof(int));
    memcpy(want, init, ((size_t)n + 2) * sizeof(int));
    if (!(exclusive && me == 0)) /* exscan's rank 0: its receive buffer is left alone */
        for (int j = 0; j < n; j++) {
            want[j] = 0;
            for (int k = 0; k < me + !exclusive; k++)
                want[j] += value(k, j, salt);
        }
    ibuf s = ib_make(in_place ? 0 : (size_t)n, on_dev(0), sv), r = ib_make((size_t)n + 2, on_dev(1), init);
    const void *sb = in_place ? WAITIO_MPI_IN_PLACE : s.p;
    char what[32];
    snprintf(what, sizeof what, "%sscan%s", exclusive ? "ex" : "", in_place ? " in place" : "");
    tu_phase("%s", what);
    if (exclusive)
        TU_CHECK(waitio_mpi_exscan(sb, r.p, n, WAITIO_MPI_INT, WAITIO_MPI_SUM, c));
    else
        TU_CHECK(waitio_mpi_scan(sb, r.p, n, WAITIO_MPI_INT, WAITIO_MPI_SUM, c));
    ib_check(what, &r, want);
    ib_free(&s);
    ib_free(&r);
    free(sv);
    free(init);
    free(want);
}

/* ---- non-blocking ---- */

/* Ibcast and Iallreduce (in place or not) at once, with an Ibarrier; completed by test, wait or
 * waitall (`how`). A non-root's device buffer keeps its old content until its request
 * completes: the result is written then. */
static void test_nonblocking(WAITIO_MPI_Comm c, int how, int in_place)
{
    case_no++;
    int n = rcount(case_no, 0, 0) + 1, salt = (int)case_no;
    int root = (int)(mix(case_no, 0, 0, 4) % (unsigned)np);
    int *bv = tu_xmalloc((size_t)n * sizeof(int)), *sv = tu_xmalloc((size_t)n * sizeof(int));
    int *old = sentinels((size_t)n), *bwant = tu_xmalloc((size_t)n * sizeof(int));
    int *awant = tu_xmalloc((size_t)n * sizeof(int));
    for (int j = 0; j < n; j++) {
        bv[j] = bwant[j] = value(root, j, salt);
        sv[j] = value(me, j, salt + 1);
        awant[j] = 0;
        for (int k = 0; k < np; k++)
            awant[j] += value(k, j, salt + 1);
    }
    ibuf b = ib_make((size_t)n, on_dev(0), me == root ? bv : old);
    ibuf s = ib_make(in_place ? 0 : (size_t)n, on_dev(1), sv);
    ibuf r = ib_make((size_t)n, on_dev(2), in_place ? sv : old);
    WAITIO_MPI_Request q[3];
    tu_phase("ibcast, iallreduce%s, ibarrier (completed by %s)", in_place ? " in place" : "",
             how == 0 ? "wait" : how == 1 ? "test" : "waitall");
    TU_CHECK(waitio_mpi_ibcast(b.p, n, WAITIO_MPI_INT, root, c, &q[0]));
    TU_CHECK(waitio_mpi_iallreduce(in_place ? WAITIO_MPI_IN_PLACE : s.p, r.p, n, WAITIO_MPI_INT,
                                   WAITIO_MPI_SUM, c, &q[1]));
    TU_CHECK(waitio_mpi_ibarrier(c, &q[2]));
    if (me != root && b.dev) /* not complete yet: the device buffer is as it was */
        ib_check("ibcast's device buffer before completion", &b, old);
    if (how == 0) {
        for (int i = 0; i < 3; i++)
            TU_CHECK(waitio_mpi_wait(&q[i], NULL));
    } else if (how == 1) {
        double until = waitio_mpi_wtime() + 30;
        for (int i = 0; i < 3; i++)
            for (int flag = 0; !flag;) {
                TU_CHECK(waitio_mpi_test(&q[i], &flag, NULL));
                if (!flag && waitio_mpi_wtime() > until)
                    TU_FAIL("request %d of the non-blocking round not complete after 30 s", i);
            }
    } else {
        TU_CHECK(waitio_mpi_waitall(3, q, NULL));
    }
    ib_check("ibcast", &b, bwant);
    ib_check(in_place ? "iallreduce in place" : "iallreduce", &r, awant);
    ib_free(&b);
    ib_free(&s);
    ib_free(&r);
    free(bv);
    free(sv);
    free(old);
    free(bwant);
    free(awant);
}

/* An Iallreduce whose device receive buffer is too small for the result fails at the wait that
 * completes it (where the result would be copied back); the other ranks' succeed, and nothing
 * leaks (the sanitizer build checks). */
static void test_nonblocking_error(WAITIO_MPI_Comm c)
{
    case_no++;
    int n = 64, bad = np - 1, sv[64];
    size_t whole = 4u << 20; /* the bad buffer: its last 128 bytes, where 256 are needed */
    for (int j = 0; j < n; j++)
        sv[j] = value(me, j, 5);
    int *s = td_alloc(sizeof sv), *r = td_alloc(me == bad ? whole : sizeof sv);
    int *rp = me == bad ? (int *)((char *)r + whole - sizeof sv / 2) : r;
    td_put(s, sv, sizeof sv);
    WAITIO_MPI_Request q;
    tu_phase("iallreduce into a too small device buffer at rank %d", bad);
    TU_CHECK(waitio_mpi_iallreduce(s, rp, n, WAITIO_MPI_INT, WAITIO_MPI_SUM, c, &q));
    int rc = waitio_mpi_wait(&q, NULL);
    if (me == bad && rc != WAITIO_ERR_ARG)
        TU_ERR("the wait of an iallreduce into a too small device buffer gave %d, expected %d", rc,
               WAITIO_ERR_ARG);
    if (me != bad && rc)
        TU_ERR("iallreduce failed (%d) at rank %d: only rank %d's buffer is too small", rc, me, bad);
    td_free(s);
    td_free(r);
    TU_CHECK(waitio_mpi_barrier(c));
}

int main(int argc, char **argv)
{
    (void)argc;
    tu_set_name(argv[0]);
    tu_alarm(90);
    td_load();
    TU_CHECK(waitio_init(30));
    WAITIO_MPI_Comm c;
    TU_CHECK(waitio_create_universe(&c));
    TU_CHECK(waitio_mpi_comm_rank(c, &me));
    TU_CHECK(waitio_mpi_comm_size(c, &np));
    tu_set_who(me, 0);
    if (np > 64)
        TU_FAIL("at most 64 processes");
    if (me == 0) {
        const char *s = getenv("WAITIO_TEST_SEED");
        seed = s && *s ? (unsigned)strtoul(s, NULL, 0) : (unsigned)time(NULL) ^ (unsigned)getpid();
        printf("gpu_vcoll: seed %u (WAITIO_TEST_SEED replays it)\n", seed);
        fflush(stdout);
    }
    TU_CHECK(waitio_mpi_bcast(&seed, 1, WAITIO_MPI_UNSIGNED, 0, c));
    for (round_no = 0; round_no < ROUNDS; round_no++) {
        for (int ip = 0; ip < 2; ip++) {
            test_gatherv(c, 0, ip);
            test_gatherv(c, 1, ip);
            test_scatterv(c, ip);
            test_alltoallv(c, ip);
            test_reduce_scatter(c, 0, ip);
            test_reduce_scatter(c, 1, ip);
            test_scan(c, 0, ip);
            test_scan(c, 1, ip);
            test_nonblocking(c, (round_no + ip) % 3, ip);
        }
        test_allgatherv_holes(c);
    }
    test_nonblocking_error(c);
    TU_CHECK(waitio_finalize());
    if (tu_errors)
        return 1;
    printf("gpu_vcoll ok: rank %d of %d\n", me, np);
    return 0;
}
