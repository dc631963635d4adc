/*
 * coll_bench.c — waitio-bench-coll: collective timings (bcast, reduce, allreduce; 8 B .. 1 MiB)
 * as in seed 001's Table 10. One MPI program, these modes:
 *   mpi        one MPI job of the whole size: MPI_Bcast / MPI_Reduce / MPI_Allreduce
 *   hier       several PBs coupled through WaitIO, collectives on the universe, hierarchical
 *              (inside each PB with its MPI through the adapter, across PBs between the heads)
 *   flat       the same but flat over WaitIO only (WAITIO_COLL_PATH_FLAT)
 *   paired     allreduce only: the PBs' MPI allreduce, then same-rank processes combine
 *   segmented  allreduce only: reduce-scatter in each PB, pieces combined, allgather
 *   pipeline   bcast only: the heads' transfer in segments under the PBs' broadcasts (below the
 *              pipeline's smallest message the library runs the hierarchical broadcast)
 *   auto       the same with WaitIO's own choice per call (WAITIO_COLL_PATH_AUTO)
 * (docs/mpi-layer.md, "Collective paths"). A path is measured only for the operations it has.
 * Prints CSV lines "mode,op,bytes,usec" from global rank 0 (the time is the maximum over ranks
 * of the mean time per call). The WaitIO modes may be given as a list (e.g. auto,hier,flat): one
 * job then measures each operation and size in every mode in turn (waitio_coll_set_path before
 * each), so that the modes compare under the same conditions on a machine whose speed drifts
 * between jobs.
 * Usage: waitio-bench-coll mpi|MODE[,MODE...] [max_bytes] [iterations]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "waitio_mpi.h"

static int use_waitio;
static WAITIO_MPI_Comm U;
static int me, n;

static void check(int rc, const char *what)
{
    if (rc) {
        fprintf(stderr, "waitio-bench-coll: %s: %s (%s)\n", what, waitio_strerror(rc), waitio_error_message());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static void run_op(const char *op, double *buf, double *out, int count)
{
    if (!strcmp(op, "bcast")) {
        if (use_waitio)
            check(WAITIO_MPI_Bcast(buf, count, WAITIO_MPI_DOUBLE, 0, U), "bcast");
        else
            MPI_Bcast(buf, count, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    } else if (!strcmp(op, "reduce")) {
        if (use_waitio)
            check(WAITIO_MPI_Reduce(buf, out, count, WAITIO_MPI_DOUBLE, WAITIO_MPI_SUM, 0, U), "reduce");
        else
            MPI_Reduce(buf, out, count, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    } else {
        if (use_waitio)
            check(WAITIO_MPI_Allreduce(buf, out, count, WAITIO_MPI_DOUBLE, WAITIO_MPI_SUM, U), "allreduce");
        else
            MPI_Allreduce(buf, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
}

static void barrier(void)
{
    if (use_waitio)
        check(WAITIO_MPI_Barrier(U), "barrier");
    else
        MPI_Barrier(MPI_COMM_WORLD);
}

static double max_over_ranks(double v)
{
    double m = v;
    if (use_waitio)
        check(WAITIO_MPI_Allreduce(&v, &m, 1, WAITIO_MPI_DOUBLE, WAITIO_MPI_MAX, U), "allreduce");
    else
        MPI_Allreduce(&v, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

static const char *const ops[] = {"bcast", "reduce", "allreduce"};
#define ALL_OPS 7u /* bit o: ops[o] */

static const struct { const char *name; int path; unsigned ops; } modes_known[] = {
    {"auto", WAITIO_COLL_PATH_AUTO, ALL_OPS},
    {"hier", WAITIO_COLL_PATH_HIER, ALL_OPS},
    {"flat", WAITIO_COLL_PATH_FLAT, ALL_OPS},
    {"paired", WAITIO_COLL_PATH_PAIRED, 4u},
    {"segmented", WAITIO_COLL_PATH_SEGMENTED, 4u},
    {"pipeline", WAITIO_COLL_PATH_PIPELINE, 1u},
};
#define NKNOWN (int)(sizeof modes_known / sizeof modes_known[0])

static int mode_index(const char *mode)
{
    for (int i = 0; i < NKNOWN; i++)
        if (!strcmp(mode, modes_known[i].name))
            return i;
    return -1;
}

/* The mode has the operation (a path of one operation is not measured on the others, where
 * the library would run another path in its place). */
static int mode_has(const char *mode, int op)
{
    int i = mode_index(mode);
    return i < 0 || (modes_known[i].ops >> op & 1u); /* mpi: every op */
}

static void select_mode(const char *mode)
{
    if (!use_waitio)
        return;
    check(waitio_coll_set_path(modes_known[mode_index(mode)].path), "coll_set_path");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    char modes[256];
    snprintf(modes, sizeof modes, "%s", argc > 1 ? argv[1] : "hier");
    size_t maxbytes = argc > 2 ? (size_t)atol(argv[2]) : (1u << 20);
    int iters = argc > 3 ? atoi(argv[3]) : 50;
    const char *mode_list[NKNOWN];
    int nmodes = 0;
    for (char *save = NULL, *m = strtok_r(modes, ",", &save); m && nmodes < NKNOWN; m = strtok_r(NULL, ",", &save))
        mode_list[nmodes++] = m;
    int has_mpi = 0;
    for (int i = 0; i < nmodes; i++) {
        has_mpi |= !strcmp(mode_list[i], "mpi");
        if (strcmp(mode_list[i], "mpi") && mode_index(mode_list[i]) < 0) {
            fprintf(stderr, "waitio-bench-coll: unknown mode '%s' (mpi, auto, hier, flat, paired, "
                    "segmented, pipeline)\n", mode_list[i]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (nmodes == 0 || (has_mpi && nmodes > 1)) {
        fprintf(stderr, "waitio-bench-coll: give mpi alone, or a list of auto, hier, flat, paired, "
                "segmented, pipeline\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    use_waitio = !has_mpi;
    if (use_waitio) {
        select_mode(mode_list[0]);
        check(waitio_create_universe(&U), "create_universe");
        check(WAITIO_MPI_Comm_rank(U, &me), "rank");
        check(WAITIO_MPI_Comm_size(U, &n), "size");
    } else {
        MPI_Comm_rank(MPI_COMM_WORLD, &me);
        MPI_Comm_size(MPI_COMM_WORLD, &n);
    }
    double *buf = calloc(maxbytes / 8 + 1, 8), *out = calloc(maxbytes / 8 + 1, 8);
    /* settle before the first figure: the first thousand calls of a fresh job ran up to 5x slow
     * (connections opening, pages faulting in, processes finding their cores), and took it out
     * on whichever mode came first */
    for (int i = 0; i < 2000; i++)
        run_op("allreduce", buf, out, 1);
    barrier();
    static const size_t sizes[] = {8, 64, 512, 4096, 32768, 262144, 1048576};
    for (int o = 0; o < 3; o++)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0] && sizes[si] <= maxbytes; si++) {
            size_t bytes = sizes[si];
            /* small collectives take a few µs: more of them, so that the skew with which the
             * processes leave the barrier before the clock starts weighs less */
            int count = (int)(bytes / 8),
                it = bytes >= (256u << 10) ? iters / 5 + 1 : bytes <= 4096 ? 4 * iters : iters;
            /* the mode measured first after a change of size ran a few percent slow: each size
             * starts with another mode, so that no mode always comes first */
            for (int k = 0; k < nmodes; k++) {
                int m = (k + (int)si + o) % nmodes;
                if (!mode_has(mode_list[m], o))
                    continue;
                select_mode(mode_list[m]);
                for (int w = 0; w < 3; w++)
                    run_op(ops[o], buf, out, count);
                barrier();
                double t0 = MPI_Wtime();
                for (int i = 0; i < it; i++)
                    run_op(ops[o], buf, out, count);
                double per = (MPI_Wtime() - t0) / it;
                double worst = max_over_ranks(per);
                if (me == 0)
                    printf("%s,%s,%zu,%.2f\n", mode_list[m], ops[o], bytes, worst * 1e6);
                fflush(stdout);
            }
        }
    if (use_waitio)
        check(waitio_finalize(), "finalize");
    MPI_Finalize();
    return 0;
}
