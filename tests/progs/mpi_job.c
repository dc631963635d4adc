/*
 * mpi_job.c — one application of a one-job MPMD launch (`mpiexec -np 2 ./A : -np 1 ./B`, no
 * WAITIO_* variables): each application is a PB. Checks that the PB layout is MPI's
 * (PBID = MPI_APPNUM, PB rank/size = rank/size in the application's part of MPI_COMM_WORLD),
 * then every pair of processes exchanges a message of a pair-specific size (eager and rendezvous)
 * whose every byte is checked, then collectives on the universe (hierarchical through the
 * adapter) and a broadcast inside each PB's group. tests/python/pb_job.py is the same exchange
 * in Python, so a Python PB (mpi4py) can join. With --no-mpi the program never calls MPI itself:
 * the adapter initialises and finalizes MPI for it.
 * Prints "mpi_job PB p rank r: ok (N processes, NPB PBs)".
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "waitio_mpi.h"

static int pb = -1, rank = -1, errors;

#define CHECK(call) do { int rc_ = (call); if (rc_) { fprintf(stderr, "mpi_job[PB %d rank %d]: " \
    "FAIL: %s: %s (%s)\n", pb, rank, #call, waitio_strerror(rc_), waitio_error_message()); exit(1); } } while (0)
#define ERR(...) do { errors++; fprintf(stderr, "mpi_job[PB %d rank %d]: ERROR: ", pb, rank); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } while (0)

/* the same formulas as tests/python/pb_job.py */
static size_t msg_len(int src, int dst) { return 1 + ((size_t)src * 7919 + (size_t)dst * 104729) % 400000; }
static uint8_t msg_byte(int src, int dst, size_t i)
{
    return (uint8_t)((unsigned)src * 131u + (unsigned)dst * 31u + (unsigned)(i * 7) + (unsigned)(i >> 8));
}

static void exchange(WAITIO_MPI_Comm U, int me, int n)
{
    uint8_t **in = calloc((size_t)n, sizeof *in), **out = calloc((size_t)n, sizeof *out);
    waitio_req_t *reqs = calloc(2 * (size_t)n, sizeof *reqs);
    int nreq = 0;
    for (int q = 0; q < n; q++) {
        if (q == me)
            continue;
        size_t lin = msg_len(q, me), lout = msg_len(me, q);
        in[q] = malloc(lin);
        out[q] = malloc(lout);
        for (size_t i = 0; i < lout; i++)
            out[q][i] = msg_byte(me, q, i);
        CHECK(waitio_irecv(U, q, (char *)in[q], lin, 11, &reqs[nreq++]));
        CHECK(waitio_isend(U, q, (char *)out[q], lout, 11, &reqs[nreq++]));
    }
    CHECK(waitio_waitall(nreq, reqs));
    for (int q = 0; q < n; q++) {
        if (q == me)
            continue;
        size_t bad = 0, lin = msg_len(q, me);
        for (size_t i = 0; i < lin; i++)
            bad += in[q][i] != msg_byte(q, me, i);
        if (bad)
            ERR("%zu of %zu bytes from universe rank %d differ", bad, lin, q);
        free(in[q]);
        free(out[q]);
    }
    free(in);
    free(out);
    free(reqs);
}

int main(int argc, char **argv)
{
    int use_mpi = !(argc > 1 && !strcmp(argv[1], "--no-mpi"));
    alarm(100);
    int app = -1, wrank = -1, wsize = -1;
    if (use_mpi) { /* no collective here: a --no-mpi application would not take part */
        MPI_Init(&argc, &argv);
        int *appnum = NULL, flag = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
        MPI_Comm_size(MPI_COMM_WORLD, &wsize);
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
        app = flag ? *appnum : 0;
    }
    WAITIO_MPI_Comm U, P;
    int npb = 0, lsize = 0, me = -1, n = 0;
    CHECK(waitio_create_universe(&U));
    CHECK(waitio_pb_rank(&pb));
    CHECK(waitio_pb_size(&npb));
    CHECK(waitio_local_rank(&rank));
    CHECK(waitio_local_size(&lsize));
    CHECK(waitio_group_rank(U, &me));
    CHECK(waitio_group_size(U, &n));
    int *nprocs = calloc((size_t)npb, sizeof(int)), first = 0, total = 0;
    if (waitio_get_nprocs(nprocs) != npb || nprocs[pb] != lsize)
        ERR("waitio_get_nprocs disagrees with waitio_local_size");
    for (int p = 0; p < npb; p++) {
        first += p < pb ? nprocs[p] : 0;
        total += nprocs[p];
    }
    free(nprocs);
    /* MPI_COMM_WORLD is this application's processes unless WAITIO_MPMD_WORLD=0 (docs/launcher.md,
     * "MPMD: what MPI_COMM_WORLD means", tested by mpmd_world.sh) */
    const char *mpmd_world = getenv("WAITIO_MPMD_WORLD");
    if (npb > 1 && !(mpmd_world && !strcmp(mpmd_world, "0"))) {
        first = 0;
        total = lsize;
    }
    if (use_mpi && (pb != app || wrank != first + rank || wsize != total))
        ERR("WaitIO says PB %d rank %d (world rank %d of %d), MPI says application %d, world rank "
            "%d of %d", pb, rank, first + rank, total, app, wrank, wsize);
    exchange(U, me, n);
    int mine[2] = {me, 1}, sums[2] = {-1, -1};
    CHECK(waitio_mpi_allreduce(mine, sums, 2, WAITIO_MPI_INT, WAITIO_MPI_SUM, U));
    if (sums[0] != n * (n - 1) / 2 || sums[1] != n)
        ERR("allreduce gave %d %d, expected %d %d", sums[0], sums[1], n * (n - 1) / 2, n);
    int word = me == n - 1 ? 4242 + n : -1;
    CHECK(waitio_mpi_bcast(&word, 1, WAITIO_MPI_INT, n - 1, U));
    if (word != 4242 + n)
        ERR("bcast from universe rank %d gave %d", n - 1, word);
    CHECK(waitio_mpi_barrier(U));
    CHECK(waitio_create_pbgroup(&P, pb));
    int pbword = rank == 0 ? 100 + pb : -1;
    CHECK(waitio_mpi_bcast(&pbword, 1, WAITIO_MPI_INT, 0, P));
    if (pbword != 100 + pb)
        ERR("bcast in PB %d's group gave %d", pb, pbword);
    printf("mpi_job PB %d rank %d: %s (%d processes, %d PBs%s)\n", pb, rank, errors ? "FAILED" : "ok",
           n, npb, use_mpi ? "" : ", MPI initialised by the adapter");
    fflush(stdout);
    CHECK(waitio_finalize());
    if (use_mpi)
        MPI_Finalize();
    return errors ? 1 : 0;
}
