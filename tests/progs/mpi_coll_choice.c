/*
 * mpi_coll_choice.c — the universe's collectives on the path WaitIO chooses (auto), for
 * coll_tune.sh: broadcast, reduce and allreduce of 8 B .. MAX bytes (doubles holding small
 * integers, so every path and order of reduction gives the same bits) and a barrier, each result
 * checked element by element against values computed here. With WAITIO_LOG=coll=debug the
 * library logs each choice it makes (what the test compares with the table).
 * Usage: mpi_coll_choice MAX_BYTES
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include "testutil.h"
#include "waitio_mpi.h"

static WAITIO_MPI_Comm U;
static int me, n;

static double value(int rank, size_t i)
{
    return (double)((rank + 1) * (int)(i % 7 + 1));
}

static void check_sum(const double *got, size_t count, const char *what)
{
    for (size_t i = 0; i < count; i++) {
        double want = (double)((i % 7 + 1) * (size_t)n * (size_t)(n + 1) / 2);
        if (got[i] != want) {
            TU_ERR("%s of %zu doubles: element %zu is %g, expected %g", what, count, i, got[i], want);
            return;
        }
    }
}

static void one_size(size_t count, double *a, double *b)
{
    tu_phase("bcast of %zu doubles", count);
    for (size_t i = 0; i < count; i++)
        a[i] = me == 0 ? value(41, i) : -1;
    TU_CHECK(WAITIO_MPI_Bcast(a, (int)count, WAITIO_MPI_DOUBLE, 0, U));
    for (size_t i = 0; i < count; i++)
        if (a[i] != value(41, i)) {
            TU_ERR("bcast of %zu doubles: element %zu is %g, expected %g", count, i, a[i], value(41, i));
            break;
        }
    tu_phase("reduce of %zu doubles", count);
    for (size_t i = 0; i < count; i++) {
        a[i] = value(me, i);
        b[i] = -1;
    }
    TU_CHECK(WAITIO_MPI_Reduce(a, b, (int)count, WAITIO_MPI_DOUBLE, WAITIO_MPI_SUM, 0, U));
    if (me == 0)
        check_sum(b, count, "reduce");
    tu_phase("allreduce of %zu doubles", count);
    TU_CHECK(WAITIO_MPI_Allreduce(a, b, (int)count, WAITIO_MPI_DOUBLE, WAITIO_MPI_SUM, U));
    check_sum(b, count, "allreduce");
    tu_phase("barrier after %zu doubles", count);
    TU_CHECK(WAITIO_MPI_Barrier(U));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tu_set_name(argv[0]);
    tu_alarm(60);
    size_t max = argc > 1 ? (size_t)atol(argv[1]) : 32768;
    TU_CHECK(waitio_create_universe(&U));
    TU_CHECK(WAITIO_MPI_Comm_rank(U, &me));
    TU_CHECK(WAITIO_MPI_Comm_size(U, &n));
    double *a = tu_xcalloc(max / 8 + 1, sizeof *a), *b = tu_xcalloc(max / 8 + 1, sizeof *b);
    for (size_t bytes = 8; bytes <= max; bytes *= 8)
        one_size(bytes / 8, a, b);
    free(a);
    free(b);
    TU_CHECK(waitio_finalize());
    MPI_Finalize();
    if (tu_errors)
        return 1;
    if (me == 0)
        printf("mpi_coll_choice: %d processes, 8 B to %zu B checked\n", n, max);
    return 0;
}
