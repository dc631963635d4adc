/*
 * coupling.c — the demo's shared coupling code (see coupling.h): WaitIO set-up and checks, the
 * field partition, checksummed pieces, blocking send/receive wrappers, and the PB-head ping-pong.
 */
#include "coupling.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void demo_die(const demo_ctx *c, const char *what, int rc)
{
    fprintf(stderr, "[%s rank %d] %s: %s (%s)\n", c->who, c->mpi_rank, what, waitio_strerror(rc),
            waitio_error_message());
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

void demo_fail(const demo_ctx *c, const char *what)
{
    fprintf(stderr, "[%s rank %d] %s\n", c->who, c->mpi_rank, what);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static int everyone(int pbid, int rank)
{
    (void)pbid;
    (void)rank;
    return 1;
}

/* WaitIO's idea of this process's place in its PB must be MPI's. */
static void check_local_rank(demo_ctx *c)
{
    int rank = -1, size = -1, rc;
    if ((rc = waitio_local_rank(&rank)) || (rc = waitio_local_size(&size)))
        demo_die(c, "waitio_local_rank/size", rc);
    if (rank != c->mpi_rank || size != c->mpi_size) {
        char msg[160];
        snprintf(msg, sizeof msg, "WaitIO sees PB-local rank %d of %d, MPI says %d of %d", rank,
                 size, c->mpi_rank, c->mpi_size);
        demo_fail(c, msg);
    }
}

static void read_pb_sizes(demo_ctx *c)
{
    int npb = 0, rc, nprocs[2];
    if ((rc = waitio_pb_size(&npb)))
        demo_die(c, "waitio_pb_size", rc);
    if (npb != 2)
        demo_fail(c, "this demo couples exactly 2 PBs (run it through examples/demo/run.sh)");
    if (waitio_get_nprocs(nprocs) != 2)
        demo_fail(c, "waitio_get_nprocs did not return 2 PBs");
    if ((rc = waitio_pb_rank(&c->pb)))
        demo_die(c, "waitio_pb_rank", rc);
    c->other_pb = 1 - c->pb;
    c->other_size = nprocs[c->other_pb];
    c->pb_sizes[0] = nprocs[0];
    c->pb_sizes[1] = nprocs[1];
    c->base[0] = 0;              /* order {1, 2}: PB 0's processes first */
    c->base[1] = nprocs[0];
}

void demo_init(demo_ctx *c, const char *who, int timeout_s)
{
    memset(c, 0, sizeof *c);
    c->who = who;
    MPI_Comm_rank(MPI_COMM_WORLD, &c->mpi_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c->mpi_size);
    int rc = waitio_init(timeout_s);
    if (rc)
        demo_die(c, "waitio_init", rc);
    read_pb_sizes(c);
    check_local_rank(c);
    waitio_filter_func_t filters[2] = {everyone, everyone};
    int order[2] = {1, 2};
    c->universe = waitio_create_group(1, filters, order);
    if (!c->universe)
        demo_die(c, "waitio_create_group (universe)", WAITIO_ERR_GROUP);
    int me = -1, size = -1;
    if ((rc = waitio_group_rank(c->universe, &me)) || (rc = waitio_group_size(c->universe, &size)))
        demo_die(c, "waitio_group_rank/size", rc);
    if (me != demo_universe_rank(c, c->pb, c->mpi_rank) || size != c->base[1] + c->pb_sizes[1])
        demo_fail(c, "the universe group's numbering is not PB 0's ranks, then PB 1's");
}

void demo_finalize(demo_ctx *c)
{
    int rc = waitio_group_free(c->universe);
    if (rc)
        demo_die(c, "waitio_group_free", rc);
    if ((rc = waitio_finalize()))
        demo_die(c, "waitio_finalize", rc);
}

int demo_universe_rank(const demo_ctx *c, int pb, int local_rank)
{
    return c->base[pb] + local_rank;
}

void block_range(long n, int parts, int i, long *lo, long *hi)
{
    long base = n / parts, extra = n % parts;
    *lo = i * base + (i < extra ? i : extra);
    *hi = *lo + base + (i < extra ? 1 : 0);
}

uint64_t fnv1a64(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

size_t piece_bytes(long count)
{
    return (size_t)count * sizeof(double) + sizeof(uint64_t);
}

void piece_pack(char *msg, const double *values, long count)
{
    size_t data = (size_t)count * sizeof(double);
    uint64_t h = fnv1a64(values, data);
    memcpy(msg, values, data);
    memcpy(msg + data, &h, sizeof h);
}

uint64_t piece_unpack_checked(const demo_ctx *c, const char *msg, double *values, long count)
{
    size_t data = (size_t)count * sizeof(double);
    uint64_t sent, got = fnv1a64(msg, data);
    memcpy(&sent, msg + data, sizeof sent);
    if (sent != got) {
        char m[128];
        snprintf(m, sizeof m, "piece of %ld values: checksum %016llx, sender said %016llx", count,
                 (unsigned long long)got, (unsigned long long)sent);
        demo_fail(c, m);
    }
    memcpy(values, msg, data);
    return got;
}

void demo_send(const demo_ctx *c, int dst, const void *buf, size_t len, unsigned long tag)
{
    waitio_req_t r;
    int rc = waitio_isend(c->universe, dst, (char *)buf, len, tag, &r);
    if (rc)
        demo_die(c, "waitio_isend", rc);
    if ((rc = waitio_wait(&r)))
        demo_die(c, "waitio_wait (send)", rc);
}

void demo_recv(const demo_ctx *c, int src, void *buf, size_t len, unsigned long tag)
{
    waitio_req_t r;
    int rc = waitio_irecv(c->universe, src, buf, len, tag, &r);
    if (rc)
        demo_die(c, "waitio_irecv", rc);
    if ((rc = waitio_wait(&r)))
        demo_die(c, "waitio_wait (recv)", rc);
    if (r.status.len != len)
        demo_fail(c, "a WaitIO message arrived with an unexpected length");
}

/* ---- the PB-head ping-pong ---- */

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void fill(unsigned char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(i * 131u + (i >> 8) + seed);
}

static void expect(const demo_ctx *c, const unsigned char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != (unsigned char)(i * 131u + (i >> 8) + seed))
            demo_fail(c, "ping-pong data arrived corrupted");
}

/* One exchange; seed != 0: the data is patterned, the receiver clears and checks. */
static void exchange(const demo_ctx *c, int leader, unsigned char *buf, size_t n, unsigned seed)
{
    int peer = demo_universe_rank(c, c->other_pb, 0);
    if (leader) {
        if (seed)
            fill(buf, n, seed);
        demo_send(c, peer, buf, n, TAG_PING);
        if (seed)
            memset(buf, 0, n);
        demo_recv(c, peer, buf, n, TAG_PONG);
        if (seed)
            expect(c, buf, n, seed + 1);
    } else {
        if (seed)
            memset(buf, 0, n);
        demo_recv(c, peer, buf, n, TAG_PING);
        if (seed) {
            expect(c, buf, n, seed);
            fill(buf, n, seed + 1);
        }
        demo_send(c, peer, buf, n, TAG_PONG);
    }
}

double heads_pingpong(const demo_ctx *c, int leader, size_t bytes, int iters)
{
    unsigned char *buf = malloc(bytes);
    if (!buf)
        demo_fail(c, "out of memory for the ping-pong buffer");
    exchange(c, leader, buf, bytes, 11);
    for (int i = 0; i < 5; i++)
        exchange(c, leader, buf, bytes, 0);
    double t0 = seconds_now();
    for (int i = 0; i < iters; i++)
        exchange(c, leader, buf, bytes, 0);
    double half = (seconds_now() - t0) / iters / 2;
    exchange(c, leader, buf, bytes, 77);
    free(buf);
    return leader ? half : 0;
}
