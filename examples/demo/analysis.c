/*
 * analysis.c — the "analysis" PB of the coupled demo, built with MPICH's mpicc.
 *
 * Each step: the head receives the simulation's step header over WaitIO and broadcasts it with
 * MPI; every rank receives the checksummed pieces of its block of the field from whichever
 * simulation ranks hold them (WaitIO), verifies each checksum, and computes local statistics,
 * which MPI_Reduce combines at the head. The head checks the XOR of all piece checksums against
 * the header, then answers the simulation's head with the statistics and a new heat-source
 * strength (a proportional controller holding the peak temperature at --target). At the end the
 * head answers the simulation head's latency/bandwidth ping-pong.
 *
 * Usage: analysis [--target T] [--gain G]
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coupling.h"

static demo_ctx C;
static double target = 0.5, gain = 40.0;

static void parse(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--target")) target = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--gain")) gain = atof(argv[i + 1]);
        else demo_fail(&C, "usage: analysis [--target T] [--gain G]");
    }
}

static step_info receive_header(int step)
{
    step_info info;
    if (C.mpi_rank == 0)
        demo_recv(&C, demo_universe_rank(&C, C.other_pb, 0), &info, sizeof info,
                  STEP_TAG(step, TAG_INFO));
    MPI_Bcast(&info, (int)sizeof info, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (info.step != step || info.nsim != C.other_size || info.n < C.mpi_size)
        demo_fail(&C, "inconsistent step header from the simulation");
    return info;
}

/* This rank's block of the field, assembled from the simulation ranks' pieces. */
typedef struct block {
    long lo, hi;
    double *values;
    int npieces;
    uint64_t xor_hash;
} block;

static void receive_block(block *b, const step_info *info)
{
    long n = info->n;
    int nsim = (int)info->nsim;
    block_range(n, C.mpi_size, C.mpi_rank, &b->lo, &b->hi);
    b->values = malloc(sizeof(double) * (size_t)(b->hi - b->lo));
    char **msgs = calloc((size_t)nsim, sizeof *msgs);
    waitio_req_t *reqs = calloc((size_t)nsim, sizeof *reqs);
    long *from = calloc((size_t)nsim, sizeof *from), *count = calloc((size_t)nsim, sizeof *count);
    if (!b->values || !msgs || !reqs || !from || !count)
        demo_fail(&C, "out of memory for the pieces");
    b->npieces = 0;
    for (int i = 0; i < nsim; i++) {
        long slo, shi;
        block_range(n, nsim, i, &slo, &shi);
        long lo = slo > b->lo ? slo : b->lo, hi = shi < b->hi ? shi : b->hi;
        if (lo >= hi)
            continue;
        int k = b->npieces++;
        from[k] = lo, count[k] = hi - lo;
        if (!(msgs[k] = malloc(piece_bytes(count[k]))))
            demo_fail(&C, "out of memory for a piece");
        int rc = waitio_irecv(C.universe, demo_universe_rank(&C, C.other_pb, i), msgs[k],
                              piece_bytes(count[k]), STEP_TAG(info->step, TAG_PIECE), &reqs[k]);
        if (rc)
            demo_die(&C, "waitio_irecv (piece)", rc);
    }
    int rc = waitio_waitall(b->npieces, reqs);
    if (rc)
        demo_die(&C, "waitio_waitall (pieces)", rc);
    b->xor_hash = 0;
    for (int k = 0; k < b->npieces; k++) {
        if (reqs[k].status.len != piece_bytes(count[k]))
            demo_fail(&C, "a piece arrived with the wrong length");
        b->xor_hash ^= piece_unpack_checked(&C, msgs[k], &b->values[from[k] - b->lo], count[k]);
        free(msgs[k]);
    }
    free(msgs);
    free(reqs);
    free(from);
    free(count);
}

typedef struct stats {
    double min, max, sum;
    long values, pieces;
    uint64_t xor_hash;
} stats;

static stats reduce_stats(const block *b)
{
    double mn = 1e300, mx = -1e300, sum = 0;
    for (long i = 0; i < b->hi - b->lo; i++) {
        mn = fmin(mn, b->values[i]);
        mx = fmax(mx, b->values[i]);
        sum += b->values[i];
    }
    stats s = {0};
    long counts[2] = {b->hi - b->lo, b->npieces}, total[2];
    MPI_Reduce(&mn, &s.min, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&mx, &s.max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&sum, &s.sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(counts, total, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&b->xor_hash, &s.xor_hash, 1, MPI_UINT64_T, MPI_BXOR, 0, MPI_COMM_WORLD);
    s.values = total[0], s.pieces = total[1];
    return s;
}

/* Head: checks the step against the header, picks the new q, answers the simulation's head. */
static void answer(const step_info *info, const stats *s)
{
    if (s->xor_hash != info->xor_hash || s->values != info->n)
        demo_fail(&C, "the received field does not match the simulation's checksums");
    control ctl = {.step = info->step, .min = s->min, .max = s->max,
                   .mean = s->sum / (double)info->n};
    ctl.q_new = fmax(0.0, info->q + gain * (target - s->max));
    printf("[analysis] step %2lld: got %ld values in %ld pieces from %lld sim ranks into %d ranks, "
           "every checksum OK (xor %016llx = sim's)\n", (long long)info->step, s->values, s->pieces,
           (long long)info->nsim, C.mpi_size, (unsigned long long)s->xor_hash);
    printf("[analysis] step %2lld: MPI_Reduce over %d ranks: min %.5f mean %.6f max %.5f; target "
           "peak %.3f -> sends q %.3f\n", (long long)info->step, C.mpi_size, ctl.min, ctl.mean,
           ctl.max, target, ctl.q_new);
    fflush(stdout);
    demo_send(&C, demo_universe_rank(&C, C.other_pb, 0), &ctl, sizeof ctl,
              STEP_TAG(info->step, TAG_CONTROL));
}

/* Ranks other than the head wait here without spinning, so the heads get the cores. */
static void idle_until_heads_done(void)
{
    MPI_Request r;
    int done = 0;
    MPI_Ibarrier(MPI_COMM_WORLD, &r);
    while (!done) {
        MPI_Test(&r, &done, MPI_STATUS_IGNORE);
        if (!done)
            nanosleep(&(struct timespec){0, 200000}, NULL);
    }
}

static void answer_measurement(void)
{
    if (C.mpi_rank == 0) {
        heads_pingpong(&C, 0, 8, 2000);
        heads_pingpong(&C, 0, 8u << 20, 20);
    }
    idle_until_heads_done();
}

static void print_banner(void)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, ",\n")] = 0;
    printf("[analysis] %s, %d ranks, PB %d; statistics of the simulation's field, "
           "controller to peak %.3f\n", lib, C.mpi_size, C.pb, target);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    demo_init(&C, "analysis", 60);
    parse(argc, argv);
    if (C.mpi_rank == 0)
        print_banner();
    int nsteps = 1;
    for (int step = 1; step <= nsteps; step++) {
        step_info info = receive_header(step);
        nsteps = (int)info.nsteps;
        block b;
        receive_block(&b, &info);
        stats s = reduce_stats(&b);
        if (C.mpi_rank == 0)
            answer(&info, &s);
        free(b.values);
    }
    answer_measurement();
    demo_finalize(&C);
    if (C.mpi_rank == 0)
        printf("[analysis] done: %d steps analysed\n", nsteps);
    MPI_Finalize();
    return 0;
}
