/*
 * core_ring.c — test program without MPI: every process of the universe sends ROUNDS messages of
 * pseudo-random sizes (0 .. 2 MiB, so both eager and rendezvous) to its right neighbour and
 * receives from its left one; every byte is checked. PB-local rank/size come from the
 * environment (WAITIO_PB_RANK/SIZE). Prints "core_ring ok" from group rank 0 at the end.
 * Usage: core_ring [rounds] [init-timeout] [pause-ms-per-round]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include "waitio.h"

#define FAIL(...) do { fprintf(stderr, "core_ring: " __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)
#define CHECK_RC(call) do { int rc_ = (call); if (rc_) FAIL("%s: %s (%s)", #call, \
    waitio_strerror(rc_), waitio_error_message()); } while (0)

static int everyone(int pb, int rank) { (void)pb; (void)rank; return 1; }

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33; x *= 0xff51afd7ed558ccdull; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ull; x ^= x >> 33;
    return x;
}

static size_t message_size(int sender, int round)
{
    uint64_t r = mix((uint64_t)sender * 1000003u + (uint64_t)round);
    switch (r % 4) {
    case 0: return r % 200;                  /* small eager */
    case 1: return r % (300u << 10);         /* around the eager limit */
    case 2: return (r % (2u << 20)) + 1;     /* rendezvous */
    default: return 0;
    }
}

static void fill(uint8_t *b, size_t n, int sender, int round)
{
    uint64_t s = mix((uint64_t)sender << 32 | (uint64_t)round);
    for (size_t i = 0; i < n; i++) {
        if (i % 8 == 0)
            s = mix(s + i);
        b[i] = (uint8_t)(s >> (8 * (i % 8)));
    }
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 20;
    int timeout = argc > 2 ? atoi(argv[2]) : 30;
    int pause_ms = argc > 3 ? atoi(argv[3]) : 0;
    alarm(120);
    CHECK_RC(waitio_init(timeout));
    int npb;
    CHECK_RC(waitio_pb_size(&npb));
    waitio_filter_func_t *f = calloc((size_t)npb, sizeof *f);
    int *order = calloc((size_t)npb, sizeof *order);
    for (int p = 0; p < npb; p++) {
        f[p] = everyone;
        order[p] = p + 1;
    }
    waitio_group_t g = waitio_create_group(7, f, order);
    if (!g)
        FAIL("create_group: %s", waitio_error_message());
    int me, n;
    CHECK_RC(waitio_group_rank(g, &me));
    CHECK_RC(waitio_group_size(g, &n));
    int right = (me + 1) % n, left = (me + n - 1) % n;
    uint8_t *out = malloc(2u << 20), *in = malloc(2u << 20), *want = malloc(2u << 20);
    for (int round = 0; round < rounds; round++) {
        size_t sn = message_size(me, round), rn = message_size(left, round);
        fill(out, sn, me, round);
        fill(want, rn, left, round);
        waitio_req_t r[2];
        CHECK_RC(waitio_irecv(g, left, (char *)in, 2u << 20, (unsigned long)round << 33, &r[0]));
        CHECK_RC(waitio_isend(g, right, (char *)out, sn, (unsigned long)round << 33, &r[1]));
        CHECK_RC(waitio_waitall(2, r));
        if (r[0].status.len != rn || r[0].status.source != left ||
            r[0].status.tag != (unsigned long)round << 33)
            FAIL("round %d: status len %zu src %d, expected %zu from %d", round, r[0].status.len,
                 r[0].status.source, rn, left);
        if (memcmp(in, want, rn) != 0)
            FAIL("round %d: %zu bytes from rank %d differ", round, rn, left);
        if (pause_ms > 0)
            usleep((useconds_t)pause_ms * 1000);
    }
    /* how many descriptors this process holds now, for the tests' leak checks */
    if (getenv("CORE_RING_REPORT_FDS")) {
        int fds = 0;
        for (int fd = 0; fd < 4096; fd++)
            fds += fcntl(fd, F_GETFD) != -1;
        fprintf(stderr, "core_ring rank %d: %d open descriptors before finalize\n", me, fds);
    }
    CHECK_RC(waitio_finalize());
    if (me == 0)
        printf("core_ring ok: %d processes, %d rounds\n", n, rounds);
    free(out);
    free(in);
    free(want);
    free(f);
    free(order);
    return 0;
}
