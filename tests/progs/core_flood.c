/*
 * core_flood.c — bounded unexpected-message memory (SPEC §10). Two PBs of one process:
 * PB 0 floods PB 1 with MSGS messages of SIZE bytes (1 GiB by default, 64 KiB each: eager size)
 * while PB 1 posts no receive for HOLD + 3 seconds, only progressing. PB 1's resident memory must
 * grow by less than CAP MiB (the credit it grants plus its queue entries), and PB 0's sends must
 * be held back (not all complete). Then PB 1 receives everything, in order, checking every byte.
 * Prints peak memory figures. Usage: core_flood [msgs] [size] [hold_s] [cap_mib]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "waitio.h"

#define FAIL(...) do { fprintf(stderr, "core_flood: " __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)
#define CK(call) do { int rc_ = (call); if (rc_) FAIL("%s: %s (%s)", #call, waitio_strerror(rc_), waitio_error_message()); } while (0)

#define POOL (64u << 20) /* the sender's messages are slices of this buffer */

static long status_kib(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    size_t n = strlen(field);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, field, n))
            v = atol(line + n + 1);
    if (f)
        fclose(f);
    return v;
}

static uint8_t pattern(size_t pos) { return (uint8_t)(pos * 7 + (pos >> 13)); }

static int everyone(int pb, int rank) { (void)pb; (void)rank; return 1; }

int main(int argc, char **argv)
{
    long msgs = argc > 1 ? atol(argv[1]) : 16384;
    size_t size = argc > 2 ? (size_t)atol(argv[2]) : (64u << 10);
    double hold = argc > 3 ? atof(argv[3]) : 4.0;
    long cap_mib = argc > 4 ? atol(argv[4]) : 24;
    alarm(240);
    CK(waitio_init(30));
    waitio_filter_func_t f[2] = {everyone, everyone};
    int order[2] = {1, 2}, me;
    waitio_group_t g = waitio_create_group(3, f, order);
    if (!g)
        FAIL("group: %s", waitio_error_message());
    CK(waitio_group_rank(g, &me));
    size_t slots = POOL / size;
    if (me == 0) {
        uint8_t *pool = malloc(POOL);
        for (size_t i = 0; i < POOL; i++)
            pool[i] = pattern(i);
        waitio_req_t *r = malloc(sizeof *r * (size_t)msgs);
        for (long i = 0; i < msgs; i++)
            CK(waitio_isend(g, 1, (char *)pool + (size_t)(i % (long)slots) * size, size, 5, &r[i]));
        /* while the receiver holds off, most sends cannot complete: they are held, not buffered */
        long done = 0;
        for (int k = 0; k < (int)(hold * 10); k++) {
            waitio_req_t dummy;
            char c;
            CK(waitio_irecv(g, 1, &c, 1, 99, &dummy));
            if (waitio_wait_timeout(&dummy, 0.1) != WAITIO_ERR_TIMEOUT)
                FAIL("unexpected message");
            CK(waitio_cancel(&dummy));
            waitio_wait(&dummy);
        }
        for (long i = 0; i < msgs; i++) {
            int flag = 0;
            if (r[i].internal == NULL)
                done++;
            else if (waitio_test(&r[i], &flag) == 0 && flag)
                done++;
        }
        printf("core_flood sender: %ld of %ld sends complete while the receiver held off\n", done, msgs);
        if (done * size > (size_t)cap_mib << 20)
            FAIL("%ld sends (%zu MiB) completed: the flood was buffered, not throttled", done,
                 (size_t)done * size >> 20);
        CK(waitio_waitall((int)msgs, r));
        free(r);
        free(pool);
    } else {
        long rss0 = status_kib("VmRSS");
        double end_hold = hold + 3; /* outlasts the sender's check, which starts a bit later */
        for (int k = 0; k < (int)(end_hold * 10); k++) { /* progress, post nothing */
            waitio_req_t dummy;
            char c;
            CK(waitio_irecv(g, 0, &c, 1, 98, &dummy));
            if (waitio_wait_timeout(&dummy, 0.1) != WAITIO_ERR_TIMEOUT)
                FAIL("unexpected message");
            CK(waitio_cancel(&dummy));
            waitio_wait(&dummy);
        }
        long rss1 = status_kib("VmRSS"), hwm = status_kib("VmHWM");
        long grown = (rss1 - rss0) / 1024;
        printf("core_flood receiver: %ld MiB flooded at it, resident memory grew by %ld MiB "
               "(peak %ld MiB) while it posted nothing; cap %ld MiB\n",
               (long)((size_t)msgs * size >> 20), grown, hwm / 1024, cap_mib);
        if (grown > cap_mib)
            FAIL("unexpected-message memory grew by %ld MiB, above the %ld MiB cap", grown, cap_mib);
        uint8_t *buf = malloc(size);
        for (long i = 0; i < msgs; i++) {
            waitio_req_t r;
            CK(waitio_irecv(g, 0, (char *)buf, size, 5, &r));
            CK(waitio_wait(&r));
            size_t base = (size_t)(i % (long)slots) * size;
            for (size_t j = 0; j < size; j++)
                if (buf[j] != pattern(base + j))
                    FAIL("message %ld byte %zu is wrong", i, j);
        }
        printf("core_flood ok: %ld messages of %zu bytes received in order, every byte checked\n",
               msgs, size);
        free(buf);
    }
    CK(waitio_finalize());
    return 0;
}
