/*
 * peer_exit.c — a peer dies while others have requests pending with it (SPEC §10). No MPI; the
 * PB-local rank/size come from WAITIO_PB_RANK/WAITIO_PB_SIZE. One process (--victim PB:RANK,
 * default 1:0) is the victim, every other process a survivor.
 *
 *  1. all processes: waitio_init; unless --no-warmup, every pair exchanges a small message (so
 *     every connection is open before the death);
 *  2. survivors post, towards the victim: a small receive and an 8 MiB receive it will never
 *     satisfy, an 8 MiB send (rendezvous: the victim never receives it) and a 100-byte send;
 *     they tell the coordinator (lowest survivor) they are ready, which sends "go" to the victim;
 *  3. the victim, on "go", per --mode:
 *       exit      _exit(3) without waitio_finalize
 *       kill      prints "READY pid=N" and waits; the test script sends it SIGKILL
 *       finalize  waitio_finalize() (must return promptly and succeed), exits 0
 *       midsend   starts a 64 MiB send to the coordinator (which has a matching receive
 *                 posted), progresses it for a few milliseconds, then _exit(3)
 *     With --no-warmup the victim does not wait for "go": it _exit(3)s right after waitio_init,
 *     before any connection to it was opened.
 *  4. survivors: every pending request must complete within --max-secs (default 10) with
 *     WAITIO_ERR_PEER or WAITIO_ERR_PEER_FINALIZED (--mode finalize: WAITIO_ERR_PEER_FINALIZED);
 *     the 100-byte send may also succeed (eager, buffered); the coordinator's 64 MiB receive in
 *     midsend mode may also succeed, then with every byte checked. New sends/receives to the dead
 *     peer must fail too (at the call or at completion, within the bound). Then survivors exchange
 *     1 MiB and small messages among themselves (other peers keep working), call
 *     waitio_finalize (must succeed within --max-secs), and print "peer_exit survivor ok".
 * Exit status: survivors 0 on success, 1 on failure, 2 on --alarm; victim 3 (exit, midsend),
 * killed (kill), 0 (finalize).
 */
#include <inttypes.h>
#include "testutil.h"

#define MiB ((size_t)1 << 20)
#define T_WARM 0x100UL
#define T_READY 0x101UL
#define T_GO 0x102UL
#define T_R1 0x201UL
#define T_R2 0x202UL
#define T_S1 0x203UL
#define T_S2 0x204UL
#define T_LATE 0x205UL
#define T_ALIVE 0x300UL

static const char *mode = "exit";
static int victim_pb = 1, victim_local = 0, warmup = 1;
static double max_secs = 10;
static waitio_group_t U;
static int me, N, victim, coord;

static int ok_error(int rc)
{
    if (!strcmp(mode, "finalize"))
        return rc == WAITIO_ERR_PEER_FINALIZED;
    return rc == WAITIO_ERR_PEER || rc == WAITIO_ERR_PEER_FINALIZED;
}

static const char *allowed(void)
{
    return !strcmp(mode, "finalize") ? "WAITIO_ERR_PEER_FINALIZED"
                                     : "WAITIO_ERR_PEER or WAITIO_ERR_PEER_FINALIZED";
}

static void victim_main(void)
{
    if (!warmup) {
        printf("peer_exit victim: exiting right after waitio_init (no finalize)\n");
        fflush(stdout);
        _exit(3);
    }
    uint64_t go = 0;
    waitio_req_t r;
    tu_phase("victim waiting for go");
    TU_CHECK(waitio_irecv(U, coord, (char *)&go, sizeof go, T_GO, &r));
    TU_CHECK(waitio_wait_timeout(&r, 30));
    if (!strcmp(mode, "exit")) {
        printf("peer_exit victim: _exit without waitio_finalize\n");
        fflush(stdout);
        _exit(3);
    } else if (!strcmp(mode, "kill")) {
        printf("READY pid=%d\n", (int)getpid());
        fflush(stdout);
        waitio_req_t never;
        char b[8];
        TU_CHECK(waitio_irecv(U, coord, b, sizeof b, 0x999, &never));
        waitio_wait_timeout(&never, 30);
        TU_FAIL("victim: still alive 30 s after READY (the script should have killed it)");
    } else if (!strcmp(mode, "finalize")) {
        tu_phase("victim waitio_finalize with the survivors' requests pending");
        double t0 = tu_now();
        int rc = waitio_finalize();
        double took = tu_now() - t0;
        printf("peer_exit victim: waitio_finalize returned %s after %.2f s\n", tu_code_name(rc), took);
        if (rc != WAITIO_SUCCESS)
            TU_FAIL("victim: waitio_finalize returned %s (%s)", tu_code_name(rc), waitio_error_message());
        if (took > max_secs)
            TU_FAIL("victim: waitio_finalize took %.2f s (> %.1f)", took, max_secs);
        exit(0);
    } else if (!strcmp(mode, "midsend")) {
        size_t len = 64 * MiB;
        uint8_t *big = tu_xmalloc(len);
        tu_msg_fill(big, len, me, coord, T_R2, 0, 0x5e);
        waitio_req_t s;
        TU_CHECK(waitio_isend(U, coord, (char *)big, len, T_R2, &s));
        double end = tu_now() + 0.005;
        int flag = 0;
        while (tu_now() < end && !flag)
            waitio_test(&s, &flag);
        printf("peer_exit victim: _exit in the middle of a 64 MiB send (complete: %d)\n", flag);
        fflush(stdout);
        _exit(3);
    }
    TU_FAIL("unknown --mode %s", mode);
}

/* waits for a request that must fail because the victim is gone (or, if may_succeed, succeed) */
static void expect_failure(waitio_req_t *r, const char *what, int may_succeed, double t_go)
{
    int rc = waitio_wait_timeout(r, max_secs + 5);
    double at = tu_now() - t_go;
    if (rc == WAITIO_ERR_TIMEOUT && r->internal)
        TU_FAIL("%s still pending %.1f s after the victim's death (hang)", what, at);
    printf("peer_exit survivor: %s completed with %s after %.2f s%s%s\n", what, tu_code_name(rc),
           at, rc ? ": " : "", rc ? waitio_error_message() : "");
    if (rc != r->status.error)
        TU_ERR("%s: waitio_wait returned %s but status.error is %s", what, tu_code_name(rc),
               tu_code_name(r->status.error));
    if (rc != WAITIO_SUCCESS && (!strcmp(waitio_error_message(), "no error") || !*waitio_error_message()))
        TU_ERR("%s: waitio_wait_timeout returned %s but waitio_error_message() says \"%s\" (it "
               "should say which peer was lost and why)", what, tu_code_name(rc), waitio_error_message());
    if (rc == WAITIO_SUCCESS && !may_succeed)
        TU_ERR("%s completed successfully, but the victim never matched it", what);
    else if (rc != WAITIO_SUCCESS && !ok_error(rc))
        TU_ERR("%s completed with %s, expected %s", what, tu_code_name(rc), allowed());
    if (at > max_secs)
        TU_ERR("%s took %.2f s after the victim's death to complete (bound %.1f s)", what, at,
               max_secs);
}

static void survivor_main(void)
{
    int nsurv = N - 1;
    size_t big = 8 * MiB;
    uint8_t *r1 = tu_xmalloc(64), *r2 = tu_xmalloc(64 * MiB), *s1 = tu_xmalloc(big), *s2 = tu_xmalloc(100);
    tu_msg_fill(s1, big, me, victim, T_S1, 0, 0);
    tu_msg_fill(s2, 100, me, victim, T_S2, 0, 0);
    waitio_req_t rq[4];
    tu_phase("survivor posting requests towards the victim");
    double t_go = tu_now();
    /* posting may already fail when the victim is known dead (no-warmup): that is fine */
    int prc[4];
    prc[0] = waitio_irecv(U, victim, (char *)r1, 64, T_R1, &rq[0]);
    prc[1] = waitio_irecv(U, victim, (char *)r2, me == coord && !strcmp(mode, "midsend") ? 64 * MiB : big,
                          T_R2, &rq[1]);
    prc[2] = waitio_isend(U, victim, (char *)s1, big, T_S1, &rq[2]);
    prc[3] = waitio_isend(U, victim, (char *)s2, 100, T_S2, &rq[3]);
    for (int i = 0; i < 4; i++)
        if (prc[i] != WAITIO_SUCCESS && !ok_error(prc[i]))
            TU_ERR("posting request %d towards the victim returned %s (%s), expected success or %s",
                   i, tu_code_name(prc[i]), waitio_error_message(), allowed());
    if (warmup) {
        tu_phase("survivors ready, go to the victim");
        uint64_t one = 1;
        if (me == coord) {
            uint64_t *in = tu_xcalloc((size_t)N, sizeof *in);
            waitio_req_t *rr = tu_xcalloc((size_t)N, sizeof *rr);
            int k = 0;
            for (int p = 0; p < N; p++)
                if (p != victim && p != me)
                    TU_CHECK(waitio_irecv(U, p, (char *)&in[p], sizeof in[p], T_READY, &rr[k++]));
            TU_CHECK(waitio_waitall(k, rr));
            waitio_req_t g;
            TU_CHECK(waitio_isend(U, victim, (char *)&one, sizeof one, T_GO, &g));
            TU_CHECK(waitio_wait_timeout(&g, 20));
            free(in);
            free(rr);
        } else {
            waitio_req_t g;
            TU_CHECK(waitio_isend(U, coord, (char *)&one, sizeof one, T_READY, &g));
            TU_CHECK(waitio_wait_timeout(&g, 20));
        }
        t_go = tu_now();
    }
    tu_phase("survivor waiting for the requests towards the dead victim");
    const char *names[4] = {"small receive from the victim", "large receive from the victim",
                            "8 MiB send to the victim", "100-byte send to the victim"};
    int midsend_target = me == coord && !strcmp(mode, "midsend");
    for (int i = 0; i < 4; i++) {
        if (prc[i] != WAITIO_SUCCESS)
            continue;
        expect_failure(&rq[i], names[i], i == 3 || (i == 1 && midsend_target), t_go);
        if (i == 1 && midsend_target && rq[1].status.error == WAITIO_SUCCESS) {
            char why[256];
            if (rq[1].status.len != 64 * MiB ||
                !tu_msg_check(r2, 64 * MiB, victim, me, T_R2, 0, 0x5e, why, sizeof why))
                TU_ERR("the victim's 64 MiB message completed but is wrong: len %zu, %s",
                       rq[1].status.len, why);
        }
    }
    /* new requests towards the dead peer fail too (at the call or on completion) */
    tu_phase("survivor: new requests to the dead victim");
    for (int i = 0; i < 2; i++) {
        waitio_req_t r;
        int rc = i == 0 ? waitio_isend(U, victim, (char *)s1, big, T_LATE, &r)
                        : waitio_irecv(U, victim, (char *)r1, 64, T_LATE, &r);
        const char *what = i == 0 ? "a new 8 MiB send to the dead victim"
                                  : "a new receive from the dead victim";
        if (rc == WAITIO_SUCCESS)
            expect_failure(&r, what, 0, tu_now());
        else if (!ok_error(rc))
            TU_ERR("%s: the call returned %s (%s), expected success or %s", what, tu_code_name(rc),
                   waitio_error_message(), allowed());
        else
            printf("peer_exit survivor: %s refused at the call with %s\n", what, tu_code_name(rc));
    }
    /* the other survivors still work: all pairs, 1 MiB + 10 bytes, checked */
    tu_phase("survivors exchanging among themselves");
    if (nsurv > 1) {
        size_t lens[2] = {10, MiB};
        int n = 0;
        waitio_req_t *rr = tu_xcalloc((size_t)(4 * N), sizeof *rr);
        uint8_t **bufs = tu_xcalloc((size_t)(4 * N), sizeof *bufs);
        int *peer = tu_xcalloc((size_t)(4 * N), sizeof *peer), *kind = tu_xcalloc((size_t)(4 * N), sizeof *kind);
        for (int p = 0; p < N; p++) {
            if (p == me || p == victim)
                continue;
            for (int k = 0; k < 2; k++) {
                bufs[n] = tu_xmalloc(lens[k]);
                peer[n] = p;
                kind[n] = k;
                TU_CHECK(waitio_irecv(U, p, (char *)bufs[n], lens[k], T_ALIVE + (uint64_t)k, &rr[n]));
                n++;
                bufs[n] = tu_xmalloc(lens[k]);
                tu_msg_fill(bufs[n], lens[k], me, p, T_ALIVE + (uint64_t)k, 0, 0xa1);
                peer[n] = p;
                kind[n] = 2 + k;
                TU_CHECK(waitio_isend(U, p, (char *)bufs[n], lens[k], T_ALIVE + (uint64_t)k, &rr[n]));
                n++;
            }
        }
        for (int i = 0; i < n; i++) {
            int rc = waitio_wait_timeout(&rr[i], 20);
            if (rc)
                TU_FAIL("exchange with surviving %d (kind %d) failed: %s (%s)", peer[i], kind[i],
                        tu_code_name(rc), waitio_error_message());
            char why[256];
            if (kind[i] < 2 && !tu_msg_check(bufs[i], lens[kind[i]], peer[i], me,
                                             T_ALIVE + (uint64_t)kind[i], 0, 0xa1, why, sizeof why))
                TU_ERR("message from surviving rank %d wrong: %s", peer[i], why);
            free(bufs[i]);
        }
        printf("peer_exit survivor: exchange with the %d other survivors ok\n", nsurv - 1);
        free(rr); free(bufs); free(peer); free(kind);
    }
    tu_phase("survivor waitio_finalize");
    double t0 = tu_now();
    int rc = waitio_finalize();
    double took = tu_now() - t0;
    printf("peer_exit survivor: waitio_finalize returned %s after %.2f s\n", tu_code_name(rc), took);
    if (rc != WAITIO_SUCCESS)
        TU_ERR("waitio_finalize returned %s (%s)", tu_code_name(rc), waitio_error_message());
    if (took > max_secs)
        TU_ERR("waitio_finalize took %.2f s (> %.1f s)", took, max_secs);
    free(r1); free(r2); free(s1); free(s2);
}

int main(int argc, char **argv)
{
    unsigned alarm_secs = 60;
    tu_set_name(argv[0]);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--no-warmup")) { warmup = 0; continue; }
        if (!v)
            TU_FAIL("option %s needs a value", a);
        i++;
        if (!strcmp(a, "--mode")) mode = v;
        else if (!strcmp(a, "--victim")) {
            if (sscanf(v, "%d:%d", &victim_pb, &victim_local) != 2)
                TU_FAIL("--victim wants PB:RANK, got %s", v);
        } else if (!strcmp(a, "--max-secs")) max_secs = atof(v);
        else if (!strcmp(a, "--alarm")) alarm_secs = (unsigned)atoi(v);
        else
            TU_FAIL("unknown option %s", a);
    }
    if (strcmp(mode, "exit") && strcmp(mode, "kill") && strcmp(mode, "finalize") &&
        strcmp(mode, "midsend"))
        TU_FAIL("unknown --mode %s (exit, kill, finalize, midsend)", mode);
    tu_alarm(alarm_secs);
    tu_phase("waitio_init");
    TU_CHECK(waitio_init(20));
    int pb, lr;
    TU_CHECK(waitio_pb_rank(&pb));
    TU_CHECK(waitio_local_rank(&lr));
    tu_set_who(pb, lr);
    U = tu_universe(5);
    TU_CHECK(waitio_group_rank(U, &me));
    TU_CHECK(waitio_group_size(U, &N));
    victim = -1;
    for (int r = 0; r < N; r++) {
        int p, l;
        TU_CHECK(waitio_group_member(U, r, &p, &l));
        if (p == victim_pb && l == victim_local)
            victim = r;
    }
    if (victim < 0)
        TU_FAIL("the victim PB %d rank %d is not in the instance", victim_pb, victim_local);
    if (N < 2)
        TU_FAIL("needs at least 2 processes");
    coord = victim == 0 ? 1 : 0;
    if (warmup) {
        tu_phase("warm-up: all pairs");
        uint64_t *in = tu_xcalloc((size_t)N, sizeof *in), out = (uint64_t)me;
        waitio_req_t *r = tu_xcalloc((size_t)(2 * N), sizeof *r);
        int k = 0;
        for (int p = 0; p < N; p++) {
            if (p == me)
                continue;
            TU_CHECK(waitio_irecv(U, p, (char *)&in[p], sizeof in[p], T_WARM, &r[k++]));
            TU_CHECK(waitio_isend(U, p, (char *)&out, sizeof out, T_WARM, &r[k++]));
        }
        TU_CHECK(waitio_waitall(k, r));
        for (int p = 0; p < N; p++)
            if (p != me && in[p] != (uint64_t)p)
                TU_FAIL("warm-up message from rank %d carries %" PRIu64, p, in[p]);
        free(in);
        free(r);
    }
    if (me == victim) {
        printf("peer_exit: victim is universe rank %d (PB %d rank %d), mode %s%s\n", me, pb, lr,
               mode, warmup ? "" : ", no warm-up");
        fflush(stdout);
        victim_main();
        return 0;
    }
    survivor_main();
    if (tu_errors) {
        fprintf(stderr, "peer_exit%s: FAILED with %ld errors (mode %s)\n", tu_who, tu_errors, mode);
        return 1;
    }
    printf("peer_exit survivor ok (mode %s)\n", mode);
    return 0;
}
