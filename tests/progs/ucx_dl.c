/*
 * ucx_dl.c — UCX loaded on demand (issue 29; src/transport/ucx_sym.c), for
 * tests/scripts/ucx_dlopen.sh. Two processes (the universe: one PB of 2 or two PBs of 1); no MPI.
 *
 * Usage: ucx_dl --maps [--alarm S]
 *          after waitio_init, and again after a checked exchange of 1 MiB + 3 bytes each way,
 *          prints "ucx_dl: UCX libraries mapped: NAMES" (or "none") from /proc/self/maps;
 *        ucx_dl --reuse ROUNDS [--alarm S]
 *          rank 0 sends ROUNDS messages of 1 MiB + 3 bytes to rank 1, each from a buffer it maps
 *          afresh AT THE SAME ADDRESS as the first (the previous one unmapped): a registration
 *          cache that missed the unmap would offer the old pages' registration. Rank 1 checks
 *          every byte and acknowledges, so rank 0 unmaps only what was read. Prints
 *          "ucx_dl: round R from ADDR" per round.
 * Prints "ucx_dl: ok" when every check passed; exit status 0, else 1 (2 on --alarm).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* MAP_FIXED_NOREPLACE */
#endif
#include <sys/mman.h>
#include "testutil.h"

#define LEN ((size_t)(1u << 20) + 3)
#define TAG_DATA 71
#define TAG_ACK 72

/* The UCX libraries (libucp, libuct, libucs, libucm and UCX's modules) this process has mapped,
 * by file name, into out (comma-separated; "none"). */
static void ucx_mapped(char *out, size_t cap)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        TU_FAIL("cannot read /proc/self/maps");
    out[0] = '\0';
    size_t used = 0;
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        char *path = strchr(line, '/');
        if (!path)
            continue;
        path[strcspn(path, "\n")] = '\0';
        const char *base = strrchr(path, '/') + 1;
        if (strncmp(base, "libuc", 5) != 0 || !strchr("pstm", base[5]) || strstr(out, base))
            continue;
        int n = snprintf(out + used, cap - used, "%s%s", used ? "," : "", base);
        if (n < 0 || (size_t)n >= cap - used)
            break;
        used += (size_t)n;
    }
    fclose(f);
    if (!used)
        snprintf(out, cap, "none");
}

static void say_mapped(const char *when)
{
    char names[1024];
    ucx_mapped(names, sizeof names);
    printf("ucx_dl: UCX libraries mapped %s: %s\n", when, names);
    fflush(stdout);
}

static void exchange(waitio_group_t u, int me)
{
    int peer = 1 - me;
    uint8_t *out = tu_xmalloc(LEN), *in = tu_xmalloc(LEN);
    tu_msg_fill(out, LEN, me, peer, TAG_DATA, 0, 0x5d);
    waitio_req_t r[2];
    tu_phase("exchange of %zu bytes", LEN);
    TU_CHECK(waitio_irecv(u, peer, (char *)in, LEN, TAG_DATA, &r[0]));
    TU_CHECK(waitio_isend(u, peer, (char *)out, LEN, TAG_DATA, &r[1]));
    TU_CHECK(waitio_waitall(2, r));
    char why[256];
    if (!tu_msg_check(in, LEN, peer, me, TAG_DATA, 0, 0x5d, why, sizeof why))
        TU_ERR("exchange: from %d: %s", peer, why);
    free(out);
    free(in);
}

/* A fresh mapping of LEN bytes, at want when want is not NULL (fails if it is taken). */
static uint8_t *map_at(void *want)
{
    int flags = MAP_PRIVATE | MAP_ANONYMOUS;
#ifdef MAP_FIXED_NOREPLACE
    if (want)
        flags |= MAP_FIXED_NOREPLACE;
#endif
    void *p = mmap(want, LEN, PROT_READ | PROT_WRITE, flags, -1, 0);
    if (p == MAP_FAILED)
        TU_FAIL("mmap of %zu bytes at %p: %s", LEN, want, strerror(errno));
    if (want && p != want)
        TU_FAIL("mmap gave %p, not the address %p just unmapped", p, want);
    return p;
}

static void reuse_send(waitio_group_t u, int rounds)
{
    void *first = NULL;
    for (int i = 0; i < rounds; i++) {
        uint8_t *buf = map_at(first);
        first = buf;
        tu_msg_fill(buf, LEN, 0, 1, TAG_DATA, (uint32_t)i, 0x3e);
        printf("ucx_dl: round %d from %p\n", i, (void *)buf);
        tu_phase("round %d: send from %p", i, (void *)buf);
        waitio_req_t r;
        TU_CHECK(waitio_isend(u, 1, (char *)buf, LEN, TAG_DATA, &r));
        TU_CHECK(waitio_wait(&r));
        char ack;
        TU_CHECK(waitio_irecv(u, 1, &ack, 1, TAG_ACK, &r));
        TU_CHECK(waitio_wait(&r));
        if (munmap(buf, LEN) != 0)
            TU_FAIL("munmap: %s", strerror(errno));
    }
}

static void reuse_recv(waitio_group_t u, int rounds)
{
    uint8_t *in = tu_xmalloc(LEN);
    for (int i = 0; i < rounds; i++) {
        tu_phase("round %d: receive", i);
        memset(in, 0, LEN);
        waitio_req_t r;
        TU_CHECK(waitio_irecv(u, 0, (char *)in, LEN, TAG_DATA, &r));
        TU_CHECK(waitio_wait(&r));
        char why[256];
        if (!tu_msg_check(in, LEN, 0, 1, TAG_DATA, (uint32_t)i, 0x3e, why, sizeof why))
            TU_ERR("round %d: %s", i, why);
        char ack = 1;
        TU_CHECK(waitio_isend(u, 0, &ack, 1, TAG_ACK, &r));
        TU_CHECK(waitio_wait(&r));
    }
    free(in);
}

int main(int argc, char **argv)
{
    int maps = 0, rounds = 0;
    unsigned alarm_secs = 60;
    tu_set_name(argv[0]);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--maps"))
            maps = 1;
        else if (!strcmp(argv[i], "--reuse") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--alarm") && i + 1 < argc)
            alarm_secs = (unsigned)atoi(argv[++i]);
        else
            TU_FAIL("usage: ucx_dl --maps | --reuse ROUNDS [--alarm S]");
    }
    if (!maps && rounds <= 0)
        TU_FAIL("usage: ucx_dl --maps | --reuse ROUNDS [--alarm S]");
    tu_alarm(alarm_secs);
    TU_CHECK(waitio_init(30));
    waitio_group_t u = tu_universe(12);
    int me, n, pb;
    TU_CHECK(waitio_group_rank(u, &me));
    TU_CHECK(waitio_group_size(u, &n));
    TU_CHECK(waitio_pb_rank(&pb));
    tu_set_who(pb, me);
    if (n != 2)
        TU_FAIL("needs 2 processes, has %d", n);
    if (maps) {
        say_mapped("after waitio_init");
        exchange(u, me);
        say_mapped("after the exchange");
    } else if (me == 0) {
        reuse_send(u, rounds);
    } else {
        reuse_recv(u, rounds);
    }
    tu_phase("waitio_finalize");
    TU_CHECK(waitio_finalize());
    if (tu_errors)
        return 1;
    printf("ucx_dl: ok\n");
    return 0;
}
