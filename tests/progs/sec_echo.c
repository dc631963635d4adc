/*
 * sec_echo.c — the victim of the forged single-copy test (sec_single_copy_forge.sh): PB 0, one
 * process, echoes COUNT messages of up to SIZE bytes from PB 1 rank 0 back to it, in a group of
 * gid 5 of both PBs (so the attacker knows the frames' group, rank and tags: tag i for the i-th).
 * It trusts nothing about the messages; what it must never do is put another process's memory
 * into one. Usage: sec_echo COUNT SIZE
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "waitio.h"

#define CK(call) do { int rc_ = (call); if (rc_) { fprintf(stderr, "sec_echo: %s: %s (%s)\n", \
    #call, waitio_strerror(rc_), waitio_error_message()); exit(1); } } while (0)

static int everyone(int pb, int rank) { (void)pb; (void)rank; return 1; }

int main(int argc, char **argv)
{
    int count = argc > 1 ? atoi(argv[1]) : 3;
    size_t size = argc > 2 ? (size_t)atol(argv[2]) : 4096;
    alarm(60);
    CK(waitio_init(30));
    waitio_filter_func_t f[2] = {everyone, everyone};
    int order[2] = {1, 2};
    waitio_group_t g = waitio_create_group(5, f, order);
    if (!g) {
        fprintf(stderr, "sec_echo: group: %s\n", waitio_error_message());
        return 1;
    }
    char *buf = calloc(1, size);
    for (int i = 0; i < count; i++) {
        waitio_req_t r;
        CK(waitio_irecv(g, 1, buf, size, (unsigned long)i, &r));
        CK(waitio_wait(&r));
        CK(waitio_isend(g, 1, buf, r.status.len, (unsigned long)i, &r));
        CK(waitio_wait(&r));
        printf("sec_echo: message %d: %zu bytes echoed\n", i, r.status.len);
        fflush(stdout);
    }
    CK(waitio_finalize());
    free(buf);
    printf("sec_echo ok: %d messages\n", count);
    return 0;
}
