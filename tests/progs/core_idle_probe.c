/*
 * core_idle_probe.c — a peer that dies after its connection was closed for the descriptor cap
 * still fails the receives waiting on it. Three PBs of one process, WAITIO_MAX_CONNECTIONS=1:
 * PB 0 exchanges with PB 1, then with PB 2 (which closes the idle 0-1 connection; PB 2 uses
 * wildcard receives so that it does not connect before), then posts a receive from PB 1. PB 1 waits until its side of that connection is gone, then kills itself
 * (SIGKILL: no finalize, no EOF on an open connection). PB 0's receive must end with
 * WAITIO_ERR_PEER within 10 s rather than hang. Usage: core_idle_probe
 */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "waitio.h"

#define FAIL(...) do { fprintf(stderr, "core_idle_probe: " __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)
#define CK(call) do { int rc_ = (call); if (rc_) FAIL("%s: %s (%s)", #call, waitio_strerror(rc_), waitio_error_message()); } while (0)

static int everyone(int pb, int rank) { (void)pb; (void)rank; return 1; }

static int open_fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n - 1;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* send our rank to peer, receive its rank back, check it */
static void exchange(waitio_group_t g, int me, int peer)
{
    int out = 1000 + me, in = -1;
    waitio_req_t r[2];
    CK(waitio_irecv(g, peer, (char *)&in, sizeof in, 5, &r[0]));
    CK(waitio_isend(g, peer, (char *)&out, sizeof out, 5, &r[1]));
    CK(waitio_waitall(2, r));
    if (in != 1000 + peer)
        FAIL("from %d got %d, expected %d", peer, in, 1000 + peer);
}

int main(void)
{
    alarm(60);
    CK(waitio_init(30));
    int npb;
    CK(waitio_pb_size(&npb));
    if (npb != 3)
        FAIL("needs 3 PBs, got %d", npb);
    waitio_filter_func_t f[3] = {everyone, everyone, everyone};
    int order[3] = {1, 2, 3};
    waitio_group_t g = waitio_create_group(4, f, order);
    if (!g)
        FAIL("group: %s", waitio_error_message());
    int me;
    CK(waitio_group_rank(g, &me));
    int base = open_fds();
    if (me == 1) {
        exchange(g, me, 0);
        /* drive progress (a wildcard receive does not reconnect) until the 0-1 connection is
         * closed on our side, then die without a word. Closed: back to the descriptors before
         * it (its socket over tcp; over file it may be closed by the time the exchange returns),
         * or one fewer than with it (its pidfd over ucx, whose own sockets may outlive it). */
        int open = open_fds();
        int dummy;
        waitio_req_t r;
        CK(waitio_irecv(g, WAITIO_ANY_SOURCE, (char *)&dummy, sizeof dummy, 77, &r));
        double t0 = now();
        while (open_fds() > base && open_fds() >= open && now() - t0 < 20)
            (void)waitio_wait_timeout(&r, 0.05);
        if (open_fds() > base && open_fds() >= open)
            FAIL("the idle connection to PB 0 was never closed (%d descriptors, %d before it, %d with it)",
                 open_fds(), base, open);
        printf("core_idle_probe: PB 1: idle connection closed, dying\n");
        fflush(stdout);
        raise(SIGKILL);
    }
    if (me == 2) {
        /* wildcard receives: they do not open a connection to PB 0 before PB 0 wants one */
        int go = -1, done = -1;
        waitio_req_t r;
        CK(waitio_irecv(g, WAITIO_ANY_SOURCE, (char *)&go, sizeof go, 8, &r));
        CK(waitio_wait(&r));
        int out = 2000;
        CK(waitio_isend(g, 0, (char *)&out, sizeof out, 9, &r));
        CK(waitio_wait(&r));
        CK(waitio_irecv(g, WAITIO_ANY_SOURCE, (char *)&done, sizeof done, 10, &r));
        CK(waitio_wait(&r)); /* keeps the 0-2 connection open while PB 0 probes */
        if (go != 1000 || done != 1001)
            FAIL("PB 2 got %d and %d from PB 0", go, done);
        CK(waitio_finalize());
        printf("core_idle_probe: PB 2 done\n");
        return 0;
    }
    exchange(g, me, 1);
    /* talking to PB 2 needs a connection: at the cap of 1, the idle one to PB 1 is closed */
    int go = 1000, reply = -1;
    waitio_req_t rr[2];
    CK(waitio_irecv(g, 2, (char *)&reply, sizeof reply, 9, &rr[0]));
    CK(waitio_isend(g, 2, (char *)&go, sizeof go, 8, &rr[1]));
    CK(waitio_waitall(2, rr));
    if (reply != 2000)
        FAIL("PB 0 got %d from PB 2", reply);
    int dummy;
    waitio_req_t r;
    CK(waitio_irecv(g, 1, (char *)&dummy, sizeof dummy, 6, &r));
    double t0 = now();
    int rc = waitio_wait_timeout(&r, 10);
    double took = now() - t0;
    if (rc == WAITIO_ERR_TIMEOUT)
        FAIL("receive from the dead PB 1 still pending after %.1f s", took);
    if (rc != WAITIO_ERR_PEER)
        FAIL("receive from the dead PB 1 ended with %s, expected WAITIO_ERR_PEER", waitio_strerror(rc));
    printf("core_idle_probe: PB 0: receive from the dead PB 1 failed after %.2f s: %s\n", took,
           waitio_error_message());
    int done = 1001;
    CK(waitio_isend(g, 2, (char *)&done, sizeof done, 10, &r));
    CK(waitio_wait(&r));
    CK(waitio_finalize());
    printf("core_idle_probe: PB 0 done\n");
    return 0;
}
