/*
 * rma_kill.c — a member dies in the middle of one-sided traffic: every member exposes a user
 * window (served through frames, or read by single copy where allowed) and a heap window; the
 * victim (--victim R, default the last) computes for a moment after the start and then kills
 * itself with SIGKILL, while every other member reads from it in a loop (blocking gets,
 * non-blocking gets, fetching atomics). Each survivor must see its operations on the victim
 * fail with a peer error within --limit seconds (default 10) of the victim's death — none may
 * hang — and must then still complete one-sided operations with the other survivors. The
 * victim's last act is a fire-and-forget call to every survivor, right before SIGKILL: the call
 * arrives together with the end of the connection and must still run (it is how
 * shmem_global_exit reaches the others).
 * Prints "rma_kill ok: <survivor> saw <error> after <s> s" per survivor.
 */
#include <signal.h>
#include <stdatomic.h>
#include "testutil.h"
#include "waitio_mpi.h"
#include "waitio_rma.h"

#define PART 65536
#define LAST_WORDS 5 /* the handler id of the victim's last call */

static atomic_int last_words = -1; /* the origin of the victim's last call, once it ran */

static int on_last_words(int origin, const void *args, size_t len, void *reply, size_t *reply_len, void *user)
{
    (void)args;
    (void)len;
    (void)reply;
    (void)reply_len;
    (void)user;
    atomic_store(&last_words, origin);
    return 0;
}

int main(int argc, char **argv)
{
    tu_set_name(argv[0]);
    int victim = -1;
    double limit = 10;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--victim") && i + 1 < argc)
            victim = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--limit") && i + 1 < argc)
            limit = atof(argv[++i]);
        else
            TU_FAIL("unknown argument %s", argv[i]);
    }
    tu_alarm(60);
    TU_CHECK(waitio_init(30));
    waitio_group_t world;
    int me, n;
    TU_CHECK(waitio_rma_world(&world));
    TU_CHECK(waitio_group_rank(world, &me));
    TU_CHECK(waitio_group_size(world, &n));
    if (n < 3)
        TU_FAIL("needs 3 or more processes (the survivors talk afterwards)");
    if (victim < 0)
        victim = n - 1;
    int pb = 0, lr = 0;
    waitio_pb_rank(&pb);
    waitio_local_rank(&lr);
    tu_set_who(pb, lr);
    uint8_t *mem = tu_xcalloc(PART, 1);
    waitio_win_t uw, hw;
    void *hb;
    TU_CHECK(waitio_win_create(world, mem, PART, &uw));
    TU_CHECK(waitio_win_allocate(world, PART, &hw, &hb));
    TU_CHECK(waitio_rpc_register(LAST_WORDS, on_last_words, NULL));
    memset(mem, 0x5a, PART);
    TU_CHECK(waitio_mpi_barrier(world));
    if (me == victim) {
        tu_phase("victim computing");
        double t0 = tu_now();
        while (tu_now() - t0 < 0.3) /* busy, not in the library: served by its progress thread or not at all */
            ;
        for (int t = 0; t < n; t++)
            if (t != me)
                TU_CHECK(waitio_rpc_ff(world, t, LAST_WORDS, &me, sizeof me));
        printf("victim %d: killing myself\n", me);
        fflush(stdout);
        raise(SIGKILL);
    }
    tu_phase("reading from the victim until it fails");
    uint8_t buf[4096];
    int64_t old;
    double t_fail = 0, t_start = tu_now();
    int err = 0;
    unsigned long ops = 0;
    for (;;) {
        waitio_req_t rq;
        switch (ops % 3) {
        case 0: err = waitio_get(uw, victim, (ops * 64) % (PART - 4096), buf, sizeof buf); break;
        case 1:
            err = waitio_iget(uw, victim, 0, buf, 512, &rq);
            if (!err)
                err = waitio_wait(&rq);
            break;
        default: err = waitio_atomic(uw, victim, 8, WAITIO_AMO_FETCH, WAITIO_AMO_INT64, NULL, NULL, &old); break;
        }
        ops++;
        if (err) {
            t_fail = tu_now();
            break;
        }
        if (tu_now() - t_start > limit + 5)
            TU_FAIL("%lu operations on the dead member still succeed after %.1f s", ops, tu_now() - t_start);
    }
    if (err != WAITIO_ERR_PEER && err != WAITIO_ERR_PEER_FINALIZED)
        TU_FAIL("operation on the victim failed with %s, expected WAITIO_ERR_PEER: %s", tu_code_name(err),
                waitio_error_message());
    /* the victim died ~0.3 s after the barrier; the failure must follow within the limit */
    double after = t_fail - t_start - 0.3;
    if (after > limit)
        TU_FAIL("the failure came %.2f s after the victim's death (limit %.1f s)", after, limit);
    /* and every later operation on it fails at once */
    double t1 = tu_now();
    int again = waitio_get(uw, victim, 0, buf, 16);
    if (again == 0 || tu_now() - t1 > 1)
        TU_FAIL("a later get on the dead member returned %s after %.2f s", tu_code_name(again), tu_now() - t1);
    tu_phase("survivors among themselves");
    for (int t = 0; t < n; t++) {
        if (t == victim || t == me)
            continue;
        uint8_t v[64];
        TU_CHECK(waitio_get(uw, t, 100, v, sizeof v));
        if (v[0] != 0x5a || v[63] != 0x5a)
            TU_FAIL("survivor %d's memory reads %02x", t, v[0]);
    }
    /* done with everyone: each survivor counts up on every other one, and leaves when all have
     * counted on it (no barrier: the world group has a dead member) */
    for (int t = 0; t < n; t++) {
        int64_t one = 1;
        if (t != victim && t != me)
            TU_CHECK(waitio_atomic(hw, t, 0, WAITIO_AMO_ADD, WAITIO_AMO_INT64, &one, NULL, &old));
    }
    int64_t others = n - 2;
    TU_CHECK(waitio_wait_until(hb, WAITIO_AMO_INT64, WAITIO_CMP_EQ, &others, 20));
    tu_phase("waiting for the victim's last call to have run");
    for (double t2 = tu_now(); atomic_load(&last_words) < 0 && tu_now() - t2 < 10;)
        TU_CHECK(waitio_progress());
    if (atomic_load(&last_words) != victim)
        TU_FAIL("the victim's last call (sent right before it died) %s", atomic_load(&last_words) < 0
                ? "never ran here: lost with the connection" : "ran with the wrong origin");
    printf("rma_kill ok: %d saw %s after %.2f s (%lu operations before)\n", me, tu_code_name(err),
           after < 0 ? 0 : after, ops);
    fflush(stdout);
    /* no barrier with a dead member: finalize on our own (it releases the windows) */
    waitio_finalize();
    free(mem);
    return 0;
}
