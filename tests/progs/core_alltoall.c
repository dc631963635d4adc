/*
 * core_alltoall.c — many peers, few descriptors: every process exchanges with every other one
 * in ROUNDS rounds (sizes 100 B, 100 KiB, 300 KiB: eager and rendezvous), each message carrying
 * (sender, receiver, round, pair index) and a pattern checked byte by byte; the round number
 * proves that nothing is reordered across connections being closed and reopened. Meant to run
 * with WAITIO_MAX_CONNECTIONS small. Reports the most descriptors the process held. The
 * security tests start it late and slow (connections are opened lazily, while an attack runs).
 * Usage: core_alltoall [rounds] [max_fds] [pause_ms_per_round] [start_delay_ms]
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "waitio.h"

#define FAIL(...) do { fprintf(stderr, "core_alltoall: " __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)
#define CK(call) do { int rc_ = (call); if (rc_) FAIL("%s: %s (%s)", #call, waitio_strerror(rc_), waitio_error_message()); } while (0)

static int open_fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n - 1; /* the directory's own descriptor */
}

static size_t size_of(int round, int k) { static const size_t s[] = {100, 100 << 10, 300 << 10}; return s[(round + k) % 3]; }

static void fill(uint8_t *b, size_t n, uint32_t a, uint32_t c, uint32_t round, uint32_t k)
{
    uint32_t hdr[4] = {a, c, round, k};
    memcpy(b, hdr, sizeof hdr);
    for (size_t i = sizeof hdr; i < n; i++)
        b[i] = (uint8_t)(i * 31 + a * 7 + c * 13 + round);
}

static int everyone(int pb, int rank) { (void)pb; (void)rank; return 1; }

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 4;
    int max_fds = argc > 2 ? atoi(argv[2]) : 0;
    int pause_ms = argc > 3 ? atoi(argv[3]) : 0;
    int delay_ms = argc > 4 ? atoi(argv[4]) : 0;
    alarm(200);
    CK(waitio_init(60));
    int npb;
    CK(waitio_pb_size(&npb));
    waitio_filter_func_t *f = calloc((size_t)npb, sizeof *f);
    int *order = calloc((size_t)npb, sizeof *order);
    for (int p = 0; p < npb; p++) {
        f[p] = everyone;
        order[p] = p + 1;
    }
    waitio_group_t g = waitio_create_group(9, f, order);
    if (!g)
        FAIL("group: %s", waitio_error_message());
    int me, n, peak = 0;
    CK(waitio_group_rank(g, &me));
    CK(waitio_group_size(g, &n));
    uint8_t *out = malloc(300 << 10), *in = malloc(300 << 10), *want = malloc(300 << 10);
    if (delay_ms > 0)
        usleep((useconds_t)delay_ms * 1000);
    for (int round = 0; round < rounds; round++) {
        if (round > 0 && pause_ms > 0)
            usleep((useconds_t)pause_ms * 1000);
        for (int k = 1; k < n; k++) {
            int dst = (me + k) % n, src = (me - k + n) % n;
            size_t so = size_of(round, k), si = size_of(round, k);
            fill(out, so, (uint32_t)me, (uint32_t)dst, (uint32_t)round, (uint32_t)k);
            fill(want, si, (uint32_t)src, (uint32_t)me, (uint32_t)round, (uint32_t)k);
            waitio_req_t r[2];
            CK(waitio_irecv(g, src, (char *)in, 300 << 10, 1, &r[0]));
            CK(waitio_isend(g, dst, (char *)out, so, 1, &r[1]));
            CK(waitio_waitall(2, r));
            if (r[0].status.len != si || memcmp(in, want, si) != 0) {
                uint32_t got[4];
                memcpy(got, in, sizeof got);
                FAIL("round %d from %d: got (from %u, to %u, round %u, k %u), %zu bytes; expected "
                     "round %d, %zu bytes", round, src, got[0], got[1], got[2], got[3],
                     r[0].status.len, round, si);
            }
            int fds = open_fds();
            peak = fds > peak ? fds : peak;
        }
    }
    CK(waitio_finalize());
    printf("core_alltoall rank %d: %d rounds with %d peers ok, at most %d descriptors open\n", me,
           rounds, n - 1, peak);
    if (max_fds && peak > max_fds)
        FAIL("held %d descriptors, more than %d", peak, max_fds);
    free(out); free(in); free(want); free(f); free(order);
    return 0;
}
