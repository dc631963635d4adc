/*
 * mpi_exchange.c — the generic point-to-point exchange test: every pair of processes of the
 * universe (all processes of all PBs), across and within PBs, exchanges messages, and every byte
 * is checked at the receiver. It depends on nothing but the WaitIO API, so a new transport is
 * tested by running it with another WAITIO_TRANSPORTS (and tuning knobs) in the environment.
 *
 * Built with MPI as mpi_exchange.ompi / mpi_exchange.mpich (MPI_Init before waitio_init, the
 * PB-local rank/size cross-checked against MPI_COMM_WORLD, MPI_Finalize after waitio_finalize);
 * tests/progs/exchange.c includes this file with TU_NO_MPI to build a plain process version,
 * whose PB-local rank/size come from WAITIO_PB_RANK/WAITIO_PB_SIZE.
 *
 * Phases (--phases, default ABCDE), each on its own tags:
 *  A  fixed sizes 0, 1, 127, 128, 129, 65535, 65536, 65537, 1 MiB, 8 MiB, one tag per size,
 *     all pairs at once (waitio_waitall), contents from a PRNG seeded by (src, dst, size, tag).
 *  B  ordering: 8 messages per pair with the same tag, eager and rendezvous sizes mixed, each
 *     carrying its sequence number; once with the receives posted first, once posted late
 *     (the messages are then unexpected). Receive buffers larger than the messages.
 *  C  wildcards on a second group: per pair m1, m2, m3 with distinct tags; the receiver posts
 *     (src, ANY_TAG) which must get m1, (ANY_SOURCE, tag of m2) which must get m2, then
 *     N-1 (ANY_SOURCE, ANY_TAG) which must get every m3 exactly once; completion by
 *     waitio_waitany; status source/tag/len checked.
 *  D  truncation: 1 byte into a 0-byte buffer, 200 into 100, 3 MiB into 1 MiB must complete with
 *     WAITIO_ERR_TRUNCATE and status.len = the sent length, no byte written past the buffer;
 *     follow-up messages on the same pair still arrive intact; senders complete successfully
 *     (MPI semantics). Pre-posted and late-posted. Waited on one by one with waitio_wait.
 *  E  random: per pair 0-5 messages of random sizes (0 .. 3 MiB) and tags from a small set (so
 *     tags repeat and order matters), receives posted in a random order that keeps the order
 *     per (source, tag), completion polled with waitio_test. The seed is printed; rerun with
 *     --seed to reproduce.
 * Finally every process reports its error count to universe rank 0, which prints
 * "mpi_exchange ok: ..." only if every process passed.
 *
 * Options: --seed N  --phases ABCDE  --rounds N (phase E)  --max-size BYTES
 *          --init-timeout S  --op-timeout S  --alarm S  --expect-nprocs a,b,...  --quiet
 *          --world-is-job (MPI builds: MPI_COMM_WORLD is the whole job, as in a Slurm het step
 *          `srun --mpi=pmi2 A : B`; its rank/size must be the universe's, not the PB's)
 * Exit status: 0 all passed; 1 failure (messages on stderr name pair, size, tag, phase);
 *              2 time limit (--alarm) exceeded.
 */
#ifndef TU_NO_MPI
#include <mpi.h>
#endif
#include <inttypes.h>
#include "testutil.h"

#ifdef TU_NO_MPI
#define PROG "exchange"
#else
#define PROG "mpi_exchange"
#endif

#define TAG_SEED 0x5eedUL
#define TAG_SUM  0x50a1UL
#define TAG_A    0xa000000000000000UL
#define TAG_B    0xb000000000000000UL
#define TAG_C    0xc000000000000000UL
#define TAG_D    0xd000000000000000UL
#define TAG_E    0xe000000000000000UL
#define MiB      ((size_t)1 << 20)

static struct {
    uint64_t seed;
    int have_seed;
    const char *phases;
    int rounds;
    size_t max_size;
    int init_timeout;
    double op_timeout;
    unsigned alarm_secs;
    int expect_nprocs[64];
    int n_expect_nprocs;
    int quiet;
    int world_is_job; /* --world-is-job: MPI_COMM_WORLD is the whole job (a Slurm het step) */
} opt = {0, 0, "ABCDE", 3, 8 * MiB, 60, 60.0, 150, {0}, 0, 0, 0};

static int me, N, npb, mypb, mylocal, mysize;
static int *rank_pb, *rank_local;  /* universe rank -> (PBID, PB-local rank) */
static waitio_group_t U, W;

/* "rank 3 (PB 1 local 1)" — rotating static buffers, so several may appear in one printf */
static const char *desc(int r)
{
    static char bufs[8][64];
    static int next;
    char *b = bufs[next++ % 8];
    if (r >= 0 && r < N)
        snprintf(b, 64, "rank %d (PB %d local %d)", r, rank_pb[r], rank_local[r]);
    else
        snprintf(b, 64, "rank %d (invalid)", r);
    return b;
}

static void *xalloc_buf(size_t n)
{
    uint8_t *p = tu_xmalloc(n + TU_CANARY);
    tu_canary_set(p + n);
    return p;
}

/* Waits for one request; a request still pending after the operation timeout is fatal. */
static int wait_one(waitio_req_t *r, const char *what)
{
    int rc = waitio_wait_timeout(r, opt.op_timeout);
    if (rc == WAITIO_ERR_TIMEOUT && r->internal)
        TU_FAIL("%s still pending after %g s (hang?): %s", what, opt.op_timeout,
                waitio_error_message());
    return rc;
}

/* Checks a completed receive: status fields, canary and (if want_err == 0) every byte. */
static void check_recv(const char *ph, waitio_req_t *r, int rc, int want_err, const uint8_t *buf,
                       size_t cap, int src, uint64_t tag, size_t len, uint32_t seq, uint64_t salt)
{
    char why[256];
    if (rc != want_err || r->status.error != want_err) {
        TU_ERR("%s: recv from %s, size %zu, tag %#" PRIx64 ", seq %u: returned %s, status.error "
               "%s, expected %s (%s)", ph, desc(src), len, tag, seq, tu_code_name(rc),
               tu_code_name(r->status.error), tu_code_name(want_err),
               rc ? waitio_error_message() : "");
        if (r->status.error != WAITIO_SUCCESS && r->status.error != WAITIO_ERR_TRUNCATE)
            return;
    }
    if (r->status.source != src || r->status.tag != tag || r->status.len != len)
        TU_ERR("%s: recv from %s, size %zu, tag %#" PRIx64 ", seq %u: status says source %d, "
               "tag %#lx, len %zu", ph, desc(src), len, tag, seq, r->status.source,
               r->status.tag, r->status.len);
    if (buf && !tu_canary_ok(buf + cap))
        TU_ERR("%s: recv from %s, size %zu into a %zu-byte buffer, tag %#" PRIx64 ": bytes past "
               "the end of the receive buffer were overwritten", ph, desc(src), len, cap, tag);
    if (want_err == WAITIO_SUCCESS && r->status.error == WAITIO_SUCCESS && r->status.len == len &&
        !tu_msg_check(buf, len, src, me, tag, seq, salt, why, sizeof why))
        TU_ERR("%s: recv from %s, size %zu, tag %#" PRIx64 ", seq %u: content wrong: %s", ph,
               desc(src), len, tag, seq, why);
}

static void check_send(const char *ph, waitio_req_t *r, int rc, int dst, uint64_t tag, size_t len)
{
    if (rc != WAITIO_SUCCESS || r->status.error != WAITIO_SUCCESS)
        TU_ERR("%s: send to %s, size %zu, tag %#" PRIx64 ": returned %s, status.error %s (%s)",
               ph, desc(dst), len, tag, tu_code_name(rc), tu_code_name(r->status.error),
               rc ? waitio_error_message() : "");
}

static int phase_on(char p) { return strchr(opt.phases, p) != NULL; }

/* ---- A: fixed sizes, all pairs -------------------------------------------------------- */

static void phase_a(void)
{
    static const size_t sizes[] = {0, 1, 127, 128, 129, 65535, 65536, 65537, 1 * MiB, 8 * MiB};
    const size_t nsizes = sizeof sizes / sizeof sizes[0];
    for (size_t si = 0; si < nsizes; si++) {
        size_t size = sizes[si];
        if (size > opt.max_size)
            continue;
        uint64_t tag = TAG_A | ((uint64_t)si << 32) | si;
        /* peers per batch: bound the buffers to ~128 MiB per process */
        int batch = (int)((128 * MiB) / (2 * size + 1));
        if (batch < 1)
            batch = 1;
        for (int off = 1; off < N; off += batch) {
            int cnt = N - off < batch ? N - off : batch;
            waitio_req_t *reqs = tu_xcalloc((size_t)(2 * cnt), sizeof *reqs);
            uint8_t **rbuf = tu_xcalloc((size_t)cnt, sizeof *rbuf);
            uint8_t **sbuf = tu_xcalloc((size_t)cnt, sizeof *sbuf);
            tu_phase("A: size %zu tag %#" PRIx64 ", peers at distance %d..%d", size, tag, off,
                     off + cnt - 1);
            for (int j = 0; j < cnt; j++) {
                int src = (me - off - j + 2 * N) % N;
                rbuf[j] = size ? xalloc_buf(size) : NULL; /* 0 bytes: a NULL buffer */
                TU_CHECK(waitio_irecv(U, src, (char *)rbuf[j], size, tag, &reqs[j]));
            }
            for (int j = 0; j < cnt; j++) {
                int dst = (me + off + j) % N;
                sbuf[j] = size ? tu_xmalloc(size) : NULL;
                if (size)
                    tu_msg_fill(sbuf[j], size, me, dst, tag, 0, 0);
                TU_CHECK(waitio_isend(U, dst, (char *)sbuf[j], size, tag, &reqs[cnt + j]));
            }
            int rc = waitio_waitall(2 * cnt, reqs);
            int any_err = 0;
            for (int j = 0; j < 2 * cnt; j++)
                if (reqs[j].status.error)
                    any_err = reqs[j].status.error;
            if ((rc != 0) != (any_err != 0))
                TU_ERR("A: waitio_waitall returned %s but a request's status.error is %s",
                       tu_code_name(rc), tu_code_name(any_err));
            for (int j = 0; j < cnt; j++) {
                int src = (me - off - j + 2 * N) % N, dst = (me + off + j) % N;
                check_recv("A", &reqs[j], reqs[j].status.error, 0, rbuf[j], size, src, tag, size,
                           0, 0);
                check_send("A", &reqs[cnt + j], reqs[cnt + j].status.error, dst, tag, size);
                free(rbuf[j]);
                free(sbuf[j]);
            }
            free(reqs);
            free(rbuf);
            free(sbuf);
        }
    }
}

/* ---- B: ordering with one tag --------------------------------------------------------- */

#define B_K 8
static size_t b_size(int q)
{
    static const size_t sizes[B_K] = {16, 100, 300000, 16, 2 * MiB + 3, 17, 70000, 24};
    return sizes[q] < opt.max_size ? sizes[q] : (q % 2 ? 16 : opt.max_size < 16 ? 16 : opt.max_size);
}

static void phase_b(void)
{
    const uint64_t tag = TAG_B | 7, flush_tag = TAG_B | 8;
    for (int late = 0; late < 2; late++) {
        const uint64_t salt = 0xb0 + (uint64_t)late;
        const char *ph = late ? "B (late-posted receives)" : "B (pre-posted receives)";
        int np = N - 1;
        waitio_req_t *rr = tu_xcalloc((size_t)(np * B_K), sizeof *rr);
        waitio_req_t *sr = tu_xcalloc((size_t)(np * B_K), sizeof *sr);
        waitio_req_t *fr = tu_xcalloc((size_t)(2 * np), sizeof *fr);
        uint8_t **rb = tu_xcalloc((size_t)(np * B_K), sizeof *rb);
        uint8_t **sb = tu_xcalloc((size_t)(np * B_K), sizeof *sb);
        uint64_t fout = 0xf1u, *fin = tu_xcalloc((size_t)np, sizeof *fin);
        size_t extra = 1000;
        tu_phase("%s", ph);
        if (!late)
            for (int j = 0; j < np; j++) {
                int src = (me - 1 - j + N) % N;
                for (int q = 0; q < B_K; q++) {
                    rb[j * B_K + q] = xalloc_buf(b_size(q) + extra);
                    TU_CHECK(waitio_irecv(U, src, (char *)rb[j * B_K + q], b_size(q) + extra, tag,
                                          &rr[j * B_K + q]));
                }
            }
        for (int j = 0; j < np; j++) {
            int dst = (me + 1 + j) % N;
            for (int q = 0; q < B_K; q++) {
                sb[j * B_K + q] = tu_xmalloc(b_size(q));
                tu_msg_fill(sb[j * B_K + q], b_size(q), me, dst, tag, (uint32_t)q, salt);
                TU_CHECK(waitio_isend(U, dst, (char *)sb[j * B_K + q], b_size(q), tag,
                                      &sr[j * B_K + q]));
            }
            if (late) /* after the data, so the data is (mostly) there when the flush is */
                TU_CHECK(waitio_isend(U, dst, (char *)&fout, sizeof fout, flush_tag, &fr[np + j]));
        }
        if (late) {
            for (int j = 0; j < np; j++)
                TU_CHECK(waitio_irecv(U, (me - 1 - j + N) % N, (char *)&fin[j], sizeof fin[j],
                                      flush_tag, &fr[j]));
            for (int j = 0; j < np; j++) {
                int rc = wait_one(&fr[j], "B flush receive");
                if (rc || fin[j] != fout)
                    TU_ERR("%s: flush message from %s: %s, value %#" PRIx64, ph,
                           desc((me - 1 - j + N) % N), tu_code_name(rc), fin[j]);
            }
            tu_sleep(0.05); /* let the eager data land before the receives exist */
            for (int j = 0; j < np; j++) {
                int src = (me - 1 - j + N) % N;
                for (int q = 0; q < B_K; q++) {
                    rb[j * B_K + q] = xalloc_buf(b_size(q) + extra);
                    TU_CHECK(waitio_irecv(U, src, (char *)rb[j * B_K + q], b_size(q) + extra, tag,
                                          &rr[j * B_K + q]));
                }
            }
        }
        waitio_waitall(np * B_K, rr); /* statuses checked one by one below */
        waitio_waitall(np * B_K, sr);
        if (late)
            waitio_waitall(np, fr + np);
        for (int j = 0; j < np; j++) {
            int src = (me - 1 - j + N) % N, dst = (me + 1 + j) % N;
            for (int q = 0; q < B_K; q++) {
                waitio_req_t *r = &rr[j * B_K + q];
                check_recv(ph, r, r->status.error, 0, rb[j * B_K + q], b_size(q) + extra, src,
                           tag, b_size(q), (uint32_t)q, salt);
                check_send(ph, &sr[j * B_K + q], sr[j * B_K + q].status.error, dst, tag, b_size(q));
                free(rb[j * B_K + q]);
                free(sb[j * B_K + q]);
            }
            if (late)
                check_send(ph, &fr[np + j], fr[np + j].status.error, dst, flush_tag, sizeof fout);
        }
        free(rr); free(sr); free(fr); free(rb); free(sb); free(fin);
    }
}

/* ---- C: wildcards ----------------------------------------------------------------------- */

static size_t c_max;
static uint64_t c_tag(int s, int d, int k) { return TAG_C | ((uint64_t)s << 32) | ((uint64_t)d << 8) | (uint64_t)k; }
static size_t c_size(int s, int d, int k)
{
    tu_rng r = tu_rng_make(0xc0c0, (uint64_t)s, (uint64_t)d, (uint64_t)k);
    uint64_t v = tu_rng_next(&r);
    switch (k) {
    case 1: return v % 300;                            /* small */
    case 2: return v % 2 || c_max < 64 ? v % (c_max < 70000 ? c_max + 1 : 70000)
                                       : c_max - v % 64;  /* mid or large */
    default: return v % (c_max + 1);                   /* anything up to the cap */
    }
}

static void phase_c(void)
{
    int np = N - 1;
    /* receives: [0, np) (src, ANY_TAG); [np, 2np) (ANY_SOURCE, tag of m2); [2np, 3np) any/any;
     * sends: [3np, 6np) */
    waitio_req_t *reqs = tu_xcalloc((size_t)(6 * np), sizeof *reqs);
    uint8_t **bufs = tu_xcalloc((size_t)(6 * np), sizeof *bufs);
    int *seen = tu_xcalloc((size_t)N, sizeof *seen);
    const size_t cap = c_max + 16;
    tu_phase("C: wildcard receives (posting)");
    for (int j = 0; j < np; j++) {
        int s = (me + 1 + j) % N;
        bufs[j] = xalloc_buf(cap);
        TU_CHECK(waitio_irecv(W, s, (char *)bufs[j], cap, WAITIO_ANY_TAG, &reqs[j]));
    }
    for (int j = 0; j < np; j++) {
        int s = (me + 1 + j) % N;
        bufs[np + j] = xalloc_buf(cap);
        TU_CHECK(waitio_irecv(W, WAITIO_ANY_SOURCE, (char *)bufs[np + j], cap, c_tag(s, me, 2),
                              &reqs[np + j]));
    }
    for (int j = 0; j < np; j++) {
        bufs[2 * np + j] = xalloc_buf(cap);
        TU_CHECK(waitio_irecv(W, WAITIO_ANY_SOURCE, (char *)bufs[2 * np + j], cap, WAITIO_ANY_TAG,
                              &reqs[2 * np + j]));
    }
    for (int j = 0; j < np; j++) {
        int d = (me + N - 1 - j) % N;
        for (int k = 1; k <= 3; k++) {
            int i = 3 * np + 3 * j + (k - 1);
            size_t len = c_size(me, d, k);
            bufs[i] = tu_xmalloc(len);
            tu_msg_fill(bufs[i], len, me, d, c_tag(me, d, k), (uint32_t)k, 0xc);
            TU_CHECK(waitio_isend(W, d, (char *)bufs[i], len, c_tag(me, d, k), &reqs[i]));
        }
    }
    tu_phase("C: wildcard receives (waitio_waitany)");
    int done = 0;
    double deadline = tu_now() + opt.op_timeout;
    for (;;) {
        int idx = -2;
        int rc = waitio_waitany(6 * np, reqs, &idx);
        if (idx == WAITIO_UNDEFINED)
            break;
        if (idx < 0 || idx >= 6 * np)
            TU_FAIL("C: waitio_waitany returned index %d (rc %s)", idx, tu_code_name(rc));
        if (reqs[idx].internal)
            TU_ERR("C: waitio_waitany returned index %d but the request is still active", idx);
        if (rc != reqs[idx].status.error)
            TU_ERR("C: waitio_waitany returned %s but request %d's status.error is %s",
                   tu_code_name(rc), idx, tu_code_name(reqs[idx].status.error));
        done++;
        if (done > 6 * np)
            TU_FAIL("C: waitio_waitany completed more requests (%d) than were posted (%d)", done, 6 * np);
        if (tu_now() > deadline)
            TU_FAIL("C: waitany loop exceeded %g s", opt.op_timeout);
        waitio_req_t *r = &reqs[idx];
        int j = idx % np;
        if (idx < np) {
            int s = (me + 1 + j) % N;
            check_recv("C (src, ANY_TAG) must get the first message m1", r, rc, 0, bufs[idx], cap,
                       s, c_tag(s, me, 1), c_size(s, me, 1), 1, 0xc);
        } else if (idx < 2 * np) {
            int s = (me + 1 + j) % N;
            check_recv("C (ANY_SOURCE, tag of m2)", r, rc, 0, bufs[idx], cap, s, c_tag(s, me, 2),
                       c_size(s, me, 2), 2, 0xc);
        } else if (idx < 3 * np) {
            int s = r->status.source;
            if (rc != WAITIO_SUCCESS) {
                TU_ERR("C (ANY_SOURCE, ANY_TAG): completed with %s (%s)", tu_code_name(rc),
                       waitio_error_message());
            } else if (s < 0 || s >= N || s == me) {
                TU_ERR("C (ANY_SOURCE, ANY_TAG): status.source %d is not a valid peer", s);
            } else if (seen[s]++) {
                TU_ERR("C (ANY_SOURCE, ANY_TAG): a second message from %s (tag %#lx len %zu)",
                       desc(s), r->status.tag, r->status.len);
            } else {
                check_recv("C (ANY_SOURCE, ANY_TAG) must get the m3s", r, rc, 0, bufs[idx], cap,
                           s, c_tag(s, me, 3), c_size(s, me, 3), 3, 0xc);
            }
        } else {
            int i = idx - 3 * np, jj = i / 3, k = i % 3 + 1, d = (me + N - 1 - jj) % N;
            check_send("C", r, rc, d, c_tag(me, d, k), c_size(me, d, k));
        }
    }
    if (done != 6 * np)
        TU_ERR("C: waitio_waitany reported %d completions, expected %d", done, 6 * np);
    for (int i = 0; i < 6 * np; i++)
        free(bufs[i]);
    free(bufs);
    free(reqs);
    free(seen);
}

/* ---- D: truncation ---------------------------------------------------------------------- */

#define D_K 5
static void d_sizes(int k, size_t *len, size_t *cap)
{
    static const size_t lens[D_K] = {1, 200, 3 * MiB, 1000, 2 * MiB};
    static const size_t caps[D_K] = {0, 100, 1 * MiB, 1000, 2 * MiB};
    *len = lens[k];
    *cap = caps[k];
}

static void phase_d(void)
{
    int np = N - 1;
    for (int late = 0; late < 2; late++) {
        const char *ph = late ? "D (truncation, late-posted)" : "D (truncation, pre-posted)";
        const uint64_t salt = 0xd0 + (uint64_t)late;
        waitio_req_t *rr = tu_xcalloc((size_t)(np * D_K), sizeof *rr);
        waitio_req_t *sr = tu_xcalloc((size_t)(np * D_K), sizeof *sr);
        waitio_req_t fr[2];
        uint8_t **rb = tu_xcalloc((size_t)(np * D_K), sizeof *rb);
        uint8_t **sb = tu_xcalloc((size_t)(np * D_K), sizeof *sb);
        tu_phase("%s", ph);
        for (int pass = 0; pass < 2; pass++) {
            if (pass == (late ? 1 : 0)) /* post receives */
                for (int j = 0; j < np; j++) {
                    int src = (me - 1 - j + N) % N;
                    for (int k = 0; k < D_K; k++) {
                        size_t len, cap;
                        d_sizes(k, &len, &cap);
                        rb[j * D_K + k] = xalloc_buf(cap);
                        TU_CHECK(waitio_irecv(U, src, (char *)rb[j * D_K + k], cap,
                                              TAG_D | ((uint64_t)late << 8) | (uint64_t)k,
                                              &rr[j * D_K + k]));
                    }
                }
            else { /* post sends */
                for (int j = 0; j < np; j++) {
                    int dst = (me + 1 + j) % N;
                    for (int k = 0; k < D_K; k++) {
                        size_t len, cap;
                        d_sizes(k, &len, &cap);
                        uint64_t tag = TAG_D | ((uint64_t)late << 8) | (uint64_t)k;
                        sb[j * D_K + k] = tu_xmalloc(len);
                        tu_msg_fill(sb[j * D_K + k], len, me, dst, tag, (uint32_t)k, salt);
                        TU_CHECK(waitio_isend(U, dst, (char *)sb[j * D_K + k], len, tag,
                                              &sr[j * D_K + k]));
                    }
                }
                if (late) {
                    /* a ring token after the sends, so that most data is unexpected when the
                     * receives are posted */
                    uint64_t tok = 1, in = 0;
                    TU_CHECK(waitio_irecv(U, (me - 1 + N) % N, (char *)&in, sizeof in,
                                          TAG_D | 0xff, &fr[0]));
                    TU_CHECK(waitio_isend(U, (me + 1) % N, (char *)&tok, sizeof tok,
                                          TAG_D | 0xff, &fr[1]));
                    if (wait_one(&fr[0], "D token receive") || wait_one(&fr[1], "D token send"))
                        TU_ERR("%s: token exchange failed: %s", ph, waitio_error_message());
                    tu_sleep(0.05);
                }
            }
        }
        for (int j = 0; j < np; j++) {
            int src = (me - 1 - j + N) % N;
            for (int k = 0; k < D_K; k++) {
                size_t len, cap;
                d_sizes(k, &len, &cap);
                uint64_t tag = TAG_D | ((uint64_t)late << 8) | (uint64_t)k;
                char what[128];
                snprintf(what, sizeof what, "D recv from %s, size %zu into %zu", desc(src), len, cap);
                int rc = wait_one(&rr[j * D_K + k], what);
                check_recv(ph, &rr[j * D_K + k], rc, len > cap ? WAITIO_ERR_TRUNCATE : 0,
                           rb[j * D_K + k], cap, src, tag, len, (uint32_t)k, salt);
                rc = waitio_wait(&rr[j * D_K + k]); /* completed: returns status.error again */
                if (rc != rr[j * D_K + k].status.error)
                    TU_ERR("%s: waitio_wait on a completed request returned %s, status.error is %s",
                           ph, tu_code_name(rc), tu_code_name(rr[j * D_K + k].status.error));
            }
        }
        for (int j = 0; j < np; j++) {
            int dst = (me + 1 + j) % N;
            for (int k = 0; k < D_K; k++) {
                size_t len, cap;
                d_sizes(k, &len, &cap);
                uint64_t tag = TAG_D | ((uint64_t)late << 8) | (uint64_t)k;
                char what[128];
                snprintf(what, sizeof what, "D send to %s, size %zu", desc(dst), len);
                int rc = wait_one(&sr[j * D_K + k], what);
                if (rc != WAITIO_SUCCESS)
                    TU_ERR("%s: send to %s of %zu bytes (tag %#" PRIx64 ") that the receiver "
                           "truncated to %zu completed with %s; under MPI semantics a send "
                           "succeeds, truncation is the receiver's error", ph, desc(dst), len, tag,
                           cap, tu_code_name(rc));
                free(rb[j * D_K + k]);
                free(sb[j * D_K + k]);
            }
        }
        free(rr); free(sr); free(rb); free(sb);
    }
}

/* ---- E: random sizes and tags ------------------------------------------------------------ */

#define E_MAXC 5
typedef struct e_item { size_t len; uint64_t tag; } e_item;

static int e_schedule(int round, int s, int d, e_item *it)
{
    tu_rng r = tu_rng_make(opt.seed, 0xe000u + (uint64_t)round, (uint64_t)s, (uint64_t)d);
    int c = (int)tu_rng_below(&r, E_MAXC + 1);
    for (int i = 0; i < c; i++) {
        uint64_t v = tu_rng_next(&r);
        size_t len;
        switch (tu_rng_below(&r, 4)) {
        case 0: len = v % 200; break;
        case 1: len = v % 70000; break;
        case 2: len = 200000 + v % 200000; break;      /* around the default eager limit */
        default: len = v % (3 * MiB) + 1; break;
        }
        if (len > opt.max_size)
            len = v % (opt.max_size + 1);
        it[i].len = len;
        it[i].tag = TAG_E | ((uint64_t)round << 16) | tu_rng_below(&r, 3);
    }
    return c;
}

typedef struct e_post { int peer, i; } e_post;

static void phase_e_round(int round)
{
    char ph[64];
    snprintf(ph, sizeof ph, "E (random, seed %" PRIu64 ", round %d)", opt.seed, round);
    tu_phase("%s", ph);
    e_item (*rin)[E_MAXC] = tu_xcalloc((size_t)N, sizeof *rin);
    e_item (*sout)[E_MAXC] = tu_xcalloc((size_t)N, sizeof *sout);
    int *rc_n = tu_xcalloc((size_t)N, sizeof *rc_n), *sc_n = tu_xcalloc((size_t)N, sizeof *sc_n);
    int nr = 0, ns = 0;
    for (int p = 0; p < N; p++) {
        if (p == me)
            continue;
        nr += rc_n[p] = e_schedule(round, p, me, rin[p]);
        ns += sc_n[p] = e_schedule(round, me, p, sout[p]);
    }
    tu_rng rng = tu_rng_make(opt.seed, 0xe1e1u + (uint64_t)round, (uint64_t)me, 0);
    /* receive posting order: shuffled, then per (source, tag) put back in sequence order */
    e_post *post = tu_xcalloc((size_t)nr, sizeof *post);
    int k = 0;
    for (int p = 0; p < N; p++)
        for (int i = 0; i < rc_n[p]; i++)
            post[k++] = (e_post){p, i};
    for (int i = nr - 1; i > 0; i--) {
        int j = (int)tu_rng_below(&rng, (uint64_t)i + 1);
        e_post t = post[i]; post[i] = post[j]; post[j] = t;
    }
    for (int a = 0; a < nr; a++)       /* selection sort within each (peer, tag) class */
        for (int b = a + 1; b < nr; b++)
            if (post[a].peer == post[b].peer &&
                rin[post[a].peer][post[a].i].tag == rin[post[b].peer][post[b].i].tag &&
                post[b].i < post[a].i) {
                int t = post[a].i; post[a].i = post[b].i; post[b].i = t;
            }
    waitio_req_t *rr = tu_xcalloc((size_t)nr, sizeof *rr), *sr = tu_xcalloc((size_t)ns, sizeof *sr);
    uint8_t **rb = tu_xcalloc((size_t)nr, sizeof *rb), **sb = tu_xcalloc((size_t)ns, sizeof *sb);
    size_t *caps = tu_xcalloc((size_t)nr, sizeof *caps);
    int *sdst = tu_xcalloc((size_t)ns, sizeof *sdst), *si = tu_xcalloc((size_t)ns, sizeof *si);
    int posted_r = 0, posted_s = 0;
    /* interleave: receives posted before or after sends at random */
    int *next = tu_xcalloc((size_t)N, sizeof *next);
    while (posted_r < nr || posted_s < ns) {
        if (posted_r < nr && (posted_s == ns || tu_rng_below(&rng, 2))) {
            e_post *pp = &post[posted_r];
            e_item *it = &rin[pp->peer][pp->i];
            caps[posted_r] = it->len + (tu_rng_below(&rng, 2) ? tu_rng_below(&rng, 100) : 0);
            rb[posted_r] = xalloc_buf(caps[posted_r]);
            TU_CHECK(waitio_irecv(U, pp->peer, (char *)rb[posted_r], caps[posted_r], it->tag,
                                  &rr[posted_r]));
            posted_r++;
        } else {
            int d;
            do
                d = (int)tu_rng_below(&rng, (uint64_t)N);
            while (d == me || next[d] >= sc_n[d]);
            e_item *it = &sout[d][next[d]];
            sb[posted_s] = tu_xmalloc(it->len);
            tu_msg_fill(sb[posted_s], it->len, me, d, it->tag, (uint32_t)next[d], opt.seed);
            sdst[posted_s] = d;
            si[posted_s] = next[d]++;
            TU_CHECK(waitio_isend(U, d, (char *)sb[posted_s], it->len, it->tag, &sr[posted_s]));
            posted_s++;
        }
    }
    /* completion by waitio_test polling */
    char *done = tu_xcalloc((size_t)(nr + ns), 1);
    int pending = nr + ns;
    double deadline = tu_now() + opt.op_timeout;
    while (pending) {
        for (int i = 0; i < nr + ns; i++) {
            if (done[i])
                continue;
            waitio_req_t *r = i < nr ? &rr[i] : &sr[i - nr];
            int flag = 0;
            int rc = waitio_test(r, &flag);
            if (!flag) {
                if (rc)
                    TU_FAIL("%s: waitio_test on a pending request returned %s (%s)", ph,
                            tu_code_name(rc), waitio_error_message());
                continue;
            }
            done[i] = 1;
            pending--;
            if (i < nr) {
                e_item *it = &rin[post[i].peer][post[i].i];
                check_recv(ph, r, rc, 0, rb[i], caps[i], post[i].peer, it->tag, it->len,
                           (uint32_t)post[i].i, opt.seed);
            } else {
                int j = i - nr;
                check_send(ph, r, rc, sdst[j], sout[sdst[j]][si[j]].tag, sout[sdst[j]][si[j]].len);
            }
        }
        if (pending && tu_now() > deadline) {
            int shown = 0;
            for (int i = 0; i < nr + ns && shown < 10; i++)
                if (!done[i]) {
                    shown++;
                    if (i < nr)
                        fprintf(stderr, "  pending: recv from %s, size %zu, tag %#lx, seq %d\n",
                                desc(post[i].peer), rin[post[i].peer][post[i].i].len,
                                rin[post[i].peer][post[i].i].tag, post[i].i);
                    else
                        fprintf(stderr, "  pending: send to %s, size %zu, tag %#lx, seq %d\n",
                                desc(sdst[i - nr]), sout[sdst[i - nr]][si[i - nr]].len,
                                sout[sdst[i - nr]][si[i - nr]].tag, si[i - nr]);
                }
            TU_FAIL("%s: %d requests still pending after %g s (see above); rerun with --seed %"
                    PRIu64, ph, pending, opt.op_timeout, opt.seed);
        }
    }
    for (int i = 0; i < nr; i++)
        free(rb[i]);
    for (int i = 0; i < ns; i++)
        free(sb[i]);
    free(rin); free(sout); free(rc_n); free(sc_n); free(post); free(rr); free(sr); free(rb);
    free(sb); free(caps); free(sdst); free(si); free(next); free(done);
}

/* ---- set-up checks ---------------------------------------------------------------------- */

static void check_identity(void)
{
    int v = -1;
    long env;
    TU_CHECK(waitio_pb_size(&npb));
    TU_CHECK(waitio_pb_rank(&mypb));
    TU_CHECK(waitio_local_rank(&mylocal));
    TU_CHECK(waitio_local_size(&mysize));
    tu_set_who(mypb, mylocal);
    if ((env = tu_env_long("WAITIO_NPB")) >= 0 && env != npb)
        TU_ERR("waitio_pb_size = %d but WAITIO_NPB=%ld", npb, env);
    if ((env = tu_env_long("WAITIO_PBID")) >= 0 && env != mypb)
        TU_ERR("waitio_pb_rank = %d but WAITIO_PBID=%ld", mypb, env);
    if ((env = tu_env_long("WAITIO_PB_RANK")) >= 0 && env != mylocal)
        TU_ERR("waitio_local_rank = %d but WAITIO_PB_RANK=%ld", mylocal, env);
    if ((env = tu_env_long("WAITIO_PB_SIZE")) >= 0 && env != mysize)
        TU_ERR("waitio_local_size = %d but WAITIO_PB_SIZE=%ld", mysize, env);
#ifndef TU_NO_MPI
    int wr, ws;
    MPI_Comm_rank(MPI_COMM_WORLD, &wr);
    MPI_Comm_size(MPI_COMM_WORLD, &ws);
    if (!opt.world_is_job && (wr != mylocal || ws != mysize))
        TU_ERR("waitio_local_rank/size = %d/%d but MPI_COMM_WORLD rank/size = %d/%d", mylocal,
               mysize, wr, ws);
#endif
    if (!waitio_initialized())
        TU_ERR("waitio_initialized() = 0 after a successful waitio_init");
    int *np = tu_xcalloc((size_t)npb, sizeof *np);
    v = waitio_get_nprocs(np);
    if (v != npb)
        TU_FAIL("waitio_get_nprocs returned %d, waitio_pb_size says %d", v, npb);
    if (np[mypb] != mysize)
        TU_ERR("waitio_get_nprocs: PB %d has %d processes, waitio_local_size says %d", mypb,
               np[mypb], mysize);
    if (opt.n_expect_nprocs) {
        if (opt.n_expect_nprocs != npb)
            TU_ERR("expected %d PBs (--expect-nprocs), the instance has %d", opt.n_expect_nprocs, npb);
        for (int p = 0; p < npb && p < opt.n_expect_nprocs; p++)
            if (np[p] != opt.expect_nprocs[p])
                TU_ERR("waitio_get_nprocs: PB %d has %d processes, expected %d", p, np[p],
                       opt.expect_nprocs[p]);
    }
    int total = 0, offset = 0;
    for (int p = 0; p < npb; p++) {
        if (p == mypb)
            offset = total;
        total += np[p];
    }
    U = tu_universe(1);
    W = tu_universe(2);
    TU_CHECK(waitio_group_rank(U, &me));
    TU_CHECK(waitio_group_size(U, &N));
    if (N != total)
        TU_FAIL("universe group has %d processes, waitio_get_nprocs adds up to %d", N, total);
    if (me != offset + mylocal)
        TU_FAIL("universe rank is %d, expected %d (PB offset %d + local rank %d)", me,
                offset + mylocal, offset, mylocal);
#ifndef TU_NO_MPI
    if (opt.world_is_job && (wr != me || ws != N))
        TU_ERR("--world-is-job: MPI_COMM_WORLD rank/size = %d/%d, universe rank/size = %d/%d", wr,
               ws, me, N);
#endif
    int wme = -1;
    TU_CHECK(waitio_group_rank(W, &wme));
    if (wme != me)
        TU_FAIL("second universe group gives rank %d, the first %d", wme, me);
    rank_pb = tu_xcalloc((size_t)N, sizeof *rank_pb);
    rank_local = tu_xcalloc((size_t)N, sizeof *rank_local);
    for (int p = 0, r = 0; p < npb; p++)
        for (int l = 0; l < np[p]; l++, r++) {
            int pb = -1, lr = -1;
            TU_CHECK(waitio_group_member(U, r, &pb, &lr));
            if (pb != p || lr != l)
                TU_ERR("waitio_group_member(universe, %d) = PB %d rank %d, expected PB %d rank %d",
                       r, pb, lr, p, l);
            rank_pb[r] = p;
            rank_local[r] = l;
        }
    free(np);
    if (N < 2)
        TU_FAIL("needs at least 2 processes in the universe, has %d", N);
}

static void usage(void)
{
    fprintf(stderr, "usage: " PROG " [--seed N] [--phases ABCDE] [--rounds N] [--max-size BYTES]\n"
            "       [--init-timeout S] [--op-timeout S] [--alarm S] [--expect-nprocs a,b,...] [--quiet]\n"
            "       [--world-is-job]\n");
    exit(1);
}

int main(int argc, char **argv)
{
    tu_set_name(argv[0]);
#ifndef TU_NO_MPI
    MPI_Init(&argc, &argv);
#endif
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--quiet")) { opt.quiet = 1; continue; }
        if (!strcmp(a, "--world-is-job")) { opt.world_is_job = 1; continue; }
        if (!v)
            usage();
        i++;
        if (!strcmp(a, "--seed")) { opt.seed = strtoull(v, NULL, 0); opt.have_seed = 1; }
        else if (!strcmp(a, "--phases")) opt.phases = v;
        else if (!strcmp(a, "--rounds")) opt.rounds = atoi(v);
        else if (!strcmp(a, "--max-size")) opt.max_size = strtoull(v, NULL, 0);
        else if (!strcmp(a, "--init-timeout")) opt.init_timeout = atoi(v);
        else if (!strcmp(a, "--op-timeout")) opt.op_timeout = atof(v);
        else if (!strcmp(a, "--alarm")) opt.alarm_secs = (unsigned)atoi(v);
        else if (!strcmp(a, "--expect-nprocs"))
            opt.n_expect_nprocs = tu_parse_ints(v, opt.expect_nprocs, 64);
        else usage();
    }
    tu_alarm(opt.alarm_secs);
    tu_phase("waitio_init");
    double t0 = tu_now();
    TU_CHECK(waitio_init(opt.init_timeout));
    double t_init = tu_now() - t0;
    tu_phase("identity checks");
    check_identity();
    c_max = N > 16 ? 64 * 1024 : MiB;
    if (c_max > opt.max_size)
        c_max = opt.max_size;

    /* the seed of phase E: given, or chosen by universe rank 0 and sent to everyone */
    tu_phase("seed distribution");
    if (!opt.have_seed) {
        if (me == 0) {
            opt.seed = tu_mix64((uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32) ^
                                (uint64_t)(tu_now() * 1e9)) % 1000000000000ULL;
            waitio_req_t *r = tu_xcalloc((size_t)N, sizeof *r);
            for (int p = 1; p < N; p++)
                TU_CHECK(waitio_isend(U, p, (char *)&opt.seed, sizeof opt.seed, TAG_SEED, &r[p]));
            TU_CHECK(waitio_waitall(N - 1, r + 1));
            free(r);
        } else {
            waitio_req_t r;
            TU_CHECK(waitio_irecv(U, 0, (char *)&opt.seed, sizeof opt.seed, TAG_SEED, &r));
            TU_CHECK(wait_one(&r, "seed receive from rank 0"));
        }
    }
    if (me == 0) {
        const char *tr = getenv("WAITIO_TRANSPORTS");
        printf(PROG ": %d processes in %d PBs, phases %s, seed=%" PRIu64 " (rerun with --seed %"
               PRIu64 "), WAITIO_TRANSPORTS=%s, init %.3f s\n", N, npb, opt.phases, opt.seed,
               opt.seed, tr ? tr : "(unset)", t_init);
        fflush(stdout);
    }
    struct { char p; void (*fn)(void); const char *name; } phases[] = {
        {'A', phase_a, "fixed sizes"}, {'B', phase_b, "ordering"}, {'C', phase_c, "wildcards"},
        {'D', phase_d, "truncation"},
    };
    for (size_t i = 0; i < sizeof phases / sizeof phases[0]; i++) {
        if (!phase_on(phases[i].p))
            continue;
        double ts = tu_now();
        long before = tu_errors;
        phases[i].fn();
        if (me == 0 && !opt.quiet)
            printf(PROG ": phase %c (%s) done in %.2f s at rank 0%s\n", phases[i].p,
                   phases[i].name, tu_now() - ts, tu_errors > before ? " WITH ERRORS" : "");
        fflush(stdout);
    }
    if (phase_on('E')) {
        double ts = tu_now();
        long before = tu_errors;
        for (int round = 0; round < opt.rounds; round++)
            phase_e_round(round);
        if (me == 0 && !opt.quiet)
            printf(PROG ": phase E (random, %d rounds) done in %.2f s at rank 0%s\n", opt.rounds,
                   tu_now() - ts, tu_errors > before ? " WITH ERRORS" : "");
    }

    /* every process reports its error count to rank 0 (ANY_SOURCE receives) */
    tu_phase("summary");
    int64_t mine = tu_errors, bad_total = mine;
    int bad_ranks = mine ? 1 : 0;
    if (me == 0) {
        waitio_req_t *r = tu_xcalloc((size_t)N, sizeof *r);
        int64_t *cnt = tu_xcalloc((size_t)N, sizeof *cnt);
        for (int p = 1; p < N; p++)
            TU_CHECK(waitio_irecv(U, WAITIO_ANY_SOURCE, (char *)&cnt[p], sizeof cnt[p], TAG_SUM, &r[p]));
        for (int p = 1; p < N; p++) {
            int rc = wait_one(&r[p], "error-count report");
            if (rc) {
                TU_ERR("summary: a report failed: %s (%s)", tu_code_name(rc), waitio_error_message());
                bad_ranks++;
            } else if (cnt[p]) {
                bad_ranks++;
                bad_total += cnt[p];
                fprintf(stderr, PROG ": %s reported %" PRId64 " errors\n", desc(r[p].status.source),
                        cnt[p]);
            }
        }
        free(r);
        free(cnt);
    } else {
        waitio_req_t r;
        TU_CHECK(waitio_isend(U, 0, (char *)&mine, sizeof mine, TAG_SUM, &r));
        TU_CHECK(wait_one(&r, "error-count report to rank 0"));
    }
    tu_phase("waitio_finalize");
    TU_CHECK(waitio_finalize());
    if (waitio_initialized())
        TU_ERR("waitio_initialized() = 1 after waitio_finalize");
#ifndef TU_NO_MPI
    tu_phase("MPI_Finalize");
    MPI_Finalize();
#endif
    if (me == 0) {
        if (bad_ranks)
            printf(PROG " FAILED: %d processes reported %" PRId64 " errors (seed=%" PRIu64 ")\n",
                   bad_ranks, bad_total, opt.seed);
        else
            printf(PROG " ok: %d processes, %d PBs, phases %s, seed=%" PRIu64 "\n", N, npb,
                   opt.phases, opt.seed);
    }
    if (tu_errors)
        fprintf(stderr, PROG "%s: FAILED with %ld errors (seed=%" PRIu64 ")\n", tu_who, tu_errors,
                opt.seed);
    fflush(stdout);
    return (tu_errors || bad_ranks) ? 1 : 0;
}
