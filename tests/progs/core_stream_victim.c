/*
 * core_stream_victim.c — senders stream to a receiver that is then killed. PB 0 (one process)
 * receives slowly (one message per 20 ms, each checked byte by byte) and prints READY once a
 * message from every sender arrived; the test script SIGKILLs it. Every other process streams messages of
 * random size (1 B .. 1 MiB, checksummed pattern) to it with 8 in flight until a request fails;
 * it must fail with WAITIO_ERR_PEER within 10 s of the kill, then the process finalizes and
 * exits 0. Usage: core_stream_victim SEED
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "waitio.h"

#define FAIL(...) do { fprintf(stderr, "core_stream_victim: " __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)
#define CK(call) do { int rc_ = (call); if (rc_) FAIL("%s: %s (%s)", #call, waitio_strerror(rc_), waitio_error_message()); } while (0)
#define MAXLEN (1u << 20)
#define WINDOW 8

static int everyone(int pb, int rank) { (void)pb; (void)rank; return 1; }

static void fill(uint8_t *b, size_t n, uint32_t who, uint32_t k)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (uint8_t)(i * 131 + who * 17 + k * 7);
}

int main(int argc, char **argv)
{
    unsigned seed = argc > 1 ? (unsigned)atoi(argv[1]) : 1;
    alarm(60);
    CK(waitio_init(30));
    int npb;
    CK(waitio_pb_size(&npb));
    waitio_filter_func_t *f = calloc((size_t)npb, sizeof *f);
    int *order = calloc((size_t)npb, sizeof *order);
    for (int p = 0; p < npb; p++) {
        f[p] = everyone;
        order[p] = p + 1;
    }
    waitio_group_t g = waitio_create_group(5, f, order);
    if (!g)
        FAIL("group: %s", waitio_error_message());
    int me, n;
    CK(waitio_group_rank(g, &me));
    CK(waitio_group_size(g, &n));
    uint8_t *buf = malloc(MAXLEN + 8), *want = malloc(MAXLEN + 8);
    if (me == 0) {
        int *seen = calloc((size_t)n, sizeof *seen), senders = 0;
        for (uint32_t k = 0;; k++) {
            waitio_req_t r;
            CK(waitio_irecv(g, WAITIO_ANY_SOURCE, (char *)buf, MAXLEN + 8, 1, &r));
            CK(waitio_wait(&r));
            uint32_t hdr[2];
            memcpy(hdr, buf, sizeof hdr);
            size_t len = r.status.len;
            if (len < 8 || hdr[0] != (uint32_t)r.status.source)
                FAIL("message %u: %zu bytes, header says sender %u", k, len, hdr[0]);
            fill(want, len - 8, hdr[0], hdr[1]);
            if (memcmp(buf + 8, want, len - 8) != 0)
                FAIL("message %u from %d: payload corrupt", hdr[1], r.status.source);
            if (!seen[r.status.source]++ && ++senders == n - 1) {
                printf("READY pid=%ld\n", (long)getpid());
                fflush(stdout);
            }
            usleep(20000);
        }
    }
    srand(seed * 1000 + (unsigned)me);
    uint8_t *out[WINDOW];
    waitio_req_t reqs[WINDOW];
    for (int i = 0; i < WINDOW; i++)
        out[i] = malloc(MAXLEN + 8);
    uint32_t sent = 0;
    int err = 0;
    struct timespec t0, t1;
    for (uint32_t k = 0; !err; k++) {
        int slot = (int)(k % WINDOW);
        if (k >= WINDOW) {
            int rc = waitio_wait_timeout(&reqs[slot], 50);
            if (rc == WAITIO_ERR_TIMEOUT)
                FAIL("a send to the killed receiver is still pending after 50 s");
            if (rc) {
                err = rc;
                break;
            }
            sent++;
        }
        size_t len = 8 + (size_t)(rand() % MAXLEN);
        uint32_t hdr[2] = {(uint32_t)me, k};
        memcpy(out[slot], hdr, sizeof hdr);
        fill(out[slot] + 8, len - 8, (uint32_t)me, k);
        int rc = waitio_isend(g, 0, (char *)out[slot], len, 1, &reqs[slot]);
        if (rc) {
            err = rc;
            break;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    /* the remaining requests must end too, with an error or success, not hang */
    for (int i = 0; i < WINDOW; i++)
        (void)waitio_wait_timeout(&reqs[i], 0); /* ignore: may be freed or failed */
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (err != WAITIO_ERR_PEER)
        FAIL("stream ended with %s, expected WAITIO_ERR_PEER", waitio_strerror(err));
    printf("core_stream_victim: process %d: %u messages completed, then %s: %s\n", me, sent,
           waitio_strerror(err), waitio_error_message());
    CK(waitio_finalize());
    for (int i = 0; i < WINDOW; i++)
        free(out[i]);
    free(buf);
    free(want);
    free(f);
    free(order);
    printf("core_stream_victim: process %d done\n", me);
    return 0;
}
