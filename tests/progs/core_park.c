/*
 * core_park.c — a connection that waits spin on, wait after wait, leaves the poller's epoll set
 * (poller.h, "Parking": tcp) and must lose nothing. Two PBs of one process (not oversubscribed
 * on 2 cores, so waits spin), A (universe rank 0) and B (rank 1):
 *   1. ping-pong: --rounds round trips of random sizes (1 B .. 2 KiB) and tags, every byte
 *      checked (enough waits in a row for A's and B's connection to be parked);
 *   2. B sleeps 0.3 s before its message: A's wait must block (the poller puts the connection
 *      back into the epoll set first) and still be woken by it; ping-pong again;
 *   3. A does not wait but polls with waitio_test while B's message arrives 50 ms later: the
 *      poller must read the parked connection itself; ping-pong again;
 *   4. --kill: B SIGKILLs itself in the middle of a ping-pong; A's pending receive must fail
 *      with a peer error within 10 s, not hang.
 * A prints "core_park ok: N round trips" (or "core_park ok: peer loss seen").
 * Usage: core_park [--rounds N] [--kill]
 */
#include "testutil.h"

#define T_LATE 0x7001UL
#define T_POLLED 0x7002UL
#define MAXLEN 2048

static waitio_group_t U;
static int me, other;
static long total_round_trips;

static size_t pp_len(uint64_t round) { tu_rng r = tu_rng_make(0xbadc0ffee, round, 1, 2); return 1 + tu_rng_next(&r) % MAXLEN; }
static uint64_t pp_tag(uint64_t round) { tu_rng r = tu_rng_make(0x7a9, round, 3, 4); return 100 + tu_rng_next(&r) % 5000; }

static void send_msg(size_t len, uint64_t tag, uint32_t seq)
{
    static uint8_t buf[MAXLEN];
    tu_msg_fill(buf, len, me, other, tag, seq, 0x5a17);
    waitio_req_t r;
    TU_CHECK(waitio_isend(U, other, (char *)buf, len, tag, &r));
    TU_CHECK(waitio_wait(&r));
}

static void check_msg(const uint8_t *buf, size_t len, uint64_t tag, uint32_t seq, const waitio_status_t *st)
{
    char why[256];
    if (st->len != len)
        TU_FAIL("message %u: %zu bytes, expected %zu", (unsigned)seq, (size_t)st->len, len);
    if (!tu_msg_check(buf, len, other, me, tag, seq, 0x5a17, why, sizeof why))
        TU_FAIL("message %u (tag %lu, %zu bytes): %s", (unsigned)seq, (unsigned long)tag, len, why);
}

/* Returns the wait's error (only --kill expects one). */
static int recv_msg(size_t len, uint64_t tag, uint32_t seq)
{
    static uint8_t buf[MAXLEN];
    waitio_req_t r;
    TU_CHECK(waitio_irecv(U, other, (char *)buf, MAXLEN, tag, &r));
    int rc = waitio_wait(&r);
    if (rc)
        return rc;
    check_msg(buf, len, tag, seq, &r.status);
    return 0;
}

/* n round trips starting at round `first`: A sends first. */
static void ping_pong(uint64_t first, long n)
{
    for (uint64_t i = first; i < first + (uint64_t)n; i++) {
        size_t len = pp_len(i);
        uint64_t tag = pp_tag(i);
        if (me == 0) {
            send_msg(len, tag, (uint32_t)i);
            TU_CHECK(recv_msg(len, tag, (uint32_t)i));
        } else {
            TU_CHECK(recv_msg(len, tag, (uint32_t)i));
            send_msg(len, tag, (uint32_t)i);
        }
    }
    total_round_trips += n;
}

int main(int argc, char **argv)
{
    long rounds = 3000;
    int kill_mode = 0;
    tu_set_name(argv[0]);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atol(argv[++i]);
        else if (!strcmp(argv[i], "--kill"))
            kill_mode = 1;
        else
            TU_FAIL("unknown option %s", argv[i]);
    }
    tu_alarm(60);
    tu_phase("waitio_init");
    TU_CHECK(waitio_init(30));
    int pb, local;
    TU_CHECK(waitio_pb_rank(&pb));
    TU_CHECK(waitio_local_rank(&local));
    tu_set_who(pb, local);
    U = tu_universe(4);
    int n;
    TU_CHECK(waitio_group_rank(U, &me));
    TU_CHECK(waitio_group_size(U, &n));
    if (n != 2)
        TU_FAIL("run as 2 PBs of one process (universe of %d)", n);
    other = 1 - me;

    tu_phase("1: ping-pong");
    ping_pong(0, rounds);

    tu_phase("2: a wait that blocks");
    if (me == 1) {
        tu_sleep(0.3);
        send_msg(100, T_LATE, 1);
    } else {
        double t0 = tu_now();
        TU_CHECK(recv_msg(100, T_LATE, 1));
        if (tu_now() - t0 < 0.2)
            TU_FAIL("the late message came after %.3f s, before it was sent", tu_now() - t0);
    }
    ping_pong((uint64_t)rounds, rounds / 2);

    tu_phase("3: polling without a wait");
    if (me == 1) {
        tu_sleep(0.05);
        send_msg(64, T_POLLED, 2);
    } else {
        static uint8_t buf[MAXLEN];
        waitio_req_t r;
        TU_CHECK(waitio_irecv(U, other, (char *)buf, MAXLEN, T_POLLED, &r));
        int flag = 0;
        double deadline = tu_now() + 10;
        while (!flag && tu_now() < deadline)
            TU_CHECK(waitio_test(&r, &flag));
        if (!flag)
            TU_FAIL("polling with waitio_test for 10 s did not see a message sent 50 ms in");
        check_msg(buf, 64, T_POLLED, 2, &r.status);
    }
    ping_pong((uint64_t)rounds * 2, rounds / 2);

    if (kill_mode) {
        tu_phase("4: the peer is killed mid ping-pong");
        if (me == 1) {
            ping_pong((uint64_t)rounds * 3, rounds / 4);
            size_t len = pp_len(0);
            TU_CHECK(recv_msg(len, pp_tag(0), 0xfffffff0u)); /* A's last ping, then die unanswered */
            raise(SIGKILL);
        }
        ping_pong((uint64_t)rounds * 3, rounds / 4);
        send_msg(pp_len(0), pp_tag(0), 0xfffffff0u);
        double t0 = tu_now();
        int rc = recv_msg(1, pp_tag(1), 0xfffffff1u);
        if (rc != WAITIO_ERR_PEER && rc != WAITIO_ERR_PEER_FINALIZED)
            TU_FAIL("the receive from the killed peer ended with %s, not a peer error", tu_code_name(rc));
        double lost = tu_now() - t0;
        tu_phase("waitio_finalize after the loss");
        TU_CHECK(waitio_finalize());
        printf("core_park ok: peer loss seen after %.2f s (%s)\n", lost, tu_code_name(rc));
        return 0;
    }

    tu_phase("waitio_finalize");
    TU_CHECK(waitio_finalize());
    if (me == 0)
        printf("core_park ok: %ld round trips\n", total_round_trips);
    return 0;
}
