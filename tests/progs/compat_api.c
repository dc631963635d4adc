/*
 * compat_api.c — a program written as the original WaitIO's users write them: it includes only
 * waitio_mpi.h (so fprintf, exit, size_t and uint64_t must come from waitio.h), uses the
 * library's everyone-filter `truef` without defining it (or, built with -DOWN_TRUEF, defines
 * its own), makes the group of each PB with waitio_create_pbgroup, and moves data with the
 * original's Fortran-callable `_f` entry points called from C (arguments by reference, Fortran
 * communicator handles and INTEGER(4) request arrays). Every byte received is checked.
 * tests/scripts/compat_api.sh links it four ways (library/own truef x shared/static).
 * Usage: compat_api [doubles per message]
 */
#include "waitio_mpi.h"

#ifdef OWN_TRUEF
static int own_truef_calls;
int truef(int pbid, int rank)
{
    (void)pbid;
    (void)rank;
    own_truef_calls++;
    return 1;
}
#define TRUEF_KIND "own"
#else
#define TRUEF_KIND "library"
#endif

static int pb = -1, rank = -1, errors;

#define FAIL(...) do { fprintf(stderr, "compat_api[PB %d rank %d]: FAIL: ", pb, rank); \
        fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); exit(1); } while (0)
#define CHECK_IERR(what) do { if (ierr) FAIL("%s: ierr %d (%s)", what, ierr, waitio_error_message()); } while (0)
#define EXPECT(cond, ...) do { if (!(cond)) { errors++; fprintf(stderr, "compat_api[PB %d rank %d]: " \
        "ERROR: ", pb, rank); fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); } } while (0)

/* the value every sender puts at index i of a message from `src` */
static double value(int src, int i) { return (double)((uint64_t)src * 1000003u + (uint64_t)i * 7u % 65521u); }

int main(int argc, char **argv)
{
    int count = argc > 1 ? atoi(argv[1]) : 100000;
    int timeout = 60, ierr = 0, npb = 0;
    waitio_init_f(&timeout, &ierr);
    CHECK_IERR("waitio_init_f");
    waitio_pb_rank_f(&pb, &ierr);
    CHECK_IERR("waitio_pb_rank_f");
    waitio_pb_size_f(&npb, &ierr);
    CHECK_IERR("waitio_pb_size_f");
    waitio_local_rank(&rank);
    int *nprocs = malloc(sizeof(int) * (size_t)npb);
    if (!nprocs || waitio_get_nprocs(nprocs) != npb)
        FAIL("waitio_get_nprocs");
    int total = 0;
    for (int p = 0; p < npb; p++)
        total += nprocs[p];

    /* truef in a filter array: every process of every PB, PB 0's first */
    waitio_filter_func_t *f = malloc(sizeof *f * (size_t)npb);
    int *order = malloc(sizeof(int) * (size_t)npb);
    for (int p = 0; p < npb; p++) {
        f[p] = truef;
        order[p] = p + 1;
    }
    waitio_group_t all = waitio_create_group(5, f, order);
    int size = 0;
    if (!all || waitio_group_size(all, &size) || size != total)
        FAIL("group of truef: size %d, expected %d (%s)", size, total, waitio_error_message());
#ifdef OWN_TRUEF
    EXPECT(own_truef_calls == total, "our own truef was called %d times, expected %d",
           own_truef_calls, total);
#endif
    /* the library's group ids are refused */
    EXPECT(waitio_create_group(WAITIO_GID_PBGROUP(0), f, order) == NULL,
           "group id WAITIO_GID_PBGROUP(0) was accepted");

    /* waitio_create_pbgroup: each PB, PB-rank order; only its own processes are members */
    for (int p = 0; p < npb; p++) {
        waitio_group_t g, again;
        int r = -2, s = -2;
        if (waitio_create_pbgroup(&g, p) || waitio_create_pbgroup(&again, p) ||
            waitio_group_rank(g, &r) || waitio_group_size(g, &s))
            FAIL("waitio_create_pbgroup(%d): %s", p, waitio_error_message());
        EXPECT(again == g, "a second waitio_create_pbgroup(%d) gave another group", p);
        EXPECT(s == nprocs[p], "PB group %d has size %d, expected %d", p, s, nprocs[p]);
        EXPECT(r == (p == pb ? rank : WAITIO_UNDEFINED), "rank %d in PB group %d", r, p);
        for (int k = 0; k < s; k++) {
            int mpb = -1, mrank = -1;
            waitio_group_member(g, k, &mpb, &mrank);
            EXPECT(mpb == p && mrank == k, "PB group %d rank %d is PB %d rank %d", p, k, mpb, mrank);
        }
    }
    waitio_group_t dummy;
    EXPECT(waitio_create_pbgroup(&dummy, npb) == WAITIO_ERR_ARG, "PB group of PB %d accepted", npb);

    /* the _f entry points: a ring over the universe, checked value by value */
    int univ = 0, mypb = 0, me = -1, n = 0;
    waitio_create_universe_f(&univ, &ierr);
    CHECK_IERR("waitio_create_universe_f");
    waitio_create_pbgroup_f(&mypb, &pb, &ierr);
    CHECK_IERR("waitio_create_pbgroup_f");
    waitio_group_rank_f(&univ, &me, &ierr);
    waitio_group_size_f(&univ, &n, &ierr);
    double *out = malloc(sizeof(double) * (size_t)count), *in = malloc(sizeof(double) * (size_t)count);
    if (!out || !in)
        FAIL("out of memory");
    for (int i = 0; i < count; i++)
        out[i] = value(me, i);
    int req[2][WAITIO_REQUEST_SIZE], sta[2][WAITIO_STATUS_SIZE];
    int next = (me + 1) % n, prev = (me + n - 1) % n, tag = 7, dt = WAITIO_MPI_DOUBLE_PRECISION;
    waitio_mpi_irecv_f(in, &count, &dt, &prev, &tag, &univ, req[0], &ierr);
    CHECK_IERR("waitio_mpi_irecv_f");
    waitio_mpi_isend_f(out, &count, &dt, &next, &tag, &univ, req[1], &ierr);
    CHECK_IERR("waitio_mpi_isend_f");
    int two = 2;
    waitio_mpi_waitall_f(&two, &req[0][0], &sta[0][0], &ierr);
    CHECK_IERR("waitio_mpi_waitall_f");
    EXPECT(sta[0][WAITIO_MPI_SOURCE] == prev && sta[0][WAITIO_MPI_COUNT] == count * 8,
           "status: source %d count %d", sta[0][WAITIO_MPI_SOURCE], sta[0][WAITIO_MPI_COUNT]);
    int bad = 0;
    for (int i = 0; i < count; i++)
        bad += in[i] != value(prev, i);
    EXPECT(bad == 0, "%d of %d values from %d differ", bad, count, prev);

    /* blocking pair, wait without status (waitio_wait_f), send/recv */
    int one = 1, it = WAITIO_MPI_INTEGER, got = -1, st[WAITIO_STATUS_SIZE];
    waitio_mpi_irecv_f(&got, &one, &it, &prev, &tag, &univ, req[0], &ierr);
    waitio_mpi_send_f(&me, &one, &it, &next, &tag, &univ, &ierr);
    CHECK_IERR("waitio_mpi_send_f");
    waitio_wait_f(req[0], &ierr);
    CHECK_IERR("waitio_wait_f");
    EXPECT(got == prev, "waitio_wait_f: got %d, expected %d", got, prev);
    waitio_mpi_isend_f(&me, &one, &it, &prev, &tag, &univ, req[1], &ierr);
    waitio_mpi_recv_f(&got, &one, &it, &next, &tag, &univ, st, &ierr);
    CHECK_IERR("waitio_mpi_recv_f");
    waitio_mpi_wait_f(req[1], st + 0, &ierr);
    CHECK_IERR("waitio_mpi_wait_f");
    EXPECT(got == next, "waitio_mpi_recv_f: got %d, expected %d", got, next);

    /* collectives through the _f entry points, on the universe and on this PB's group */
    int sum = -1, sumop = WAITIO_MPI_SUM, maxop = WAITIO_MPI_MAX, root = 0, big = -1;
    waitio_mpi_allreduce_f(&me, &sum, &one, &it, &sumop, &univ, &ierr);
    CHECK_IERR("waitio_mpi_allreduce_f");
    EXPECT(sum == n * (n - 1) / 2, "allreduce sum %d, expected %d", sum, n * (n - 1) / 2);
    int last = n - 1;
    waitio_mpi_reduce_f(&me, &big, &one, &it, &maxop, &last, &univ, &ierr);
    CHECK_IERR("waitio_mpi_reduce_f");
    EXPECT(me != last || big == n - 1, "reduce max %d at the root", big);
    int word = me == 0 ? 4242 : -1;
    waitio_mpi_bcast_f(&word, &one, &it, &root, &univ, &ierr);
    CHECK_IERR("waitio_mpi_bcast_f");
    EXPECT(word == 4242, "bcast gave %d", word);
    int *ranks = malloc(sizeof(int) * (size_t)n), *displs = malloc(sizeof(int) * (size_t)n);
    int *counts = malloc(sizeof(int) * (size_t)n);
    for (int k = 0; k < n; k++) {
        ranks[k] = -1;
        counts[k] = 1;
        displs[k] = n - 1 - k; /* reversed, so displacements are really used */
    }
    waitio_mpi_allgather_f(&me, ranks, &one, &it, &univ, &ierr); /* the original's short list */
    CHECK_IERR("waitio_mpi_allgather_f");
    for (int k = 0; k < n; k++)
        EXPECT(ranks[k] == k, "allgather[%d] = %d", k, ranks[k]);
    waitio_mpi_gather_f(&me, ranks, &one, &it, &last, &univ, &ierr);
    CHECK_IERR("waitio_mpi_gather_f");
    waitio_mpi_gatherv_f(&me, &one, &it, ranks, counts, displs, &it, &root, &univ, &ierr);
    CHECK_IERR("waitio_mpi_gatherv_f");
    for (int k = 0; me == 0 && k < n; k++)
        EXPECT(ranks[n - 1 - k] == k, "gatherv: slot %d holds %d", n - 1 - k, ranks[n - 1 - k]);
    int piece = -1;
    for (int k = 0; k < n; k++)
        ranks[k] = 100 + k;
    waitio_mpi_scatter_f(ranks, &one, &it, &piece, &one, &it, &root, &univ, &ierr);
    CHECK_IERR("waitio_mpi_scatter_f");
    EXPECT(piece == 100 + me, "scatter gave %d", piece);
    waitio_mpi_scatterv_f(ranks, counts, displs, &it, &piece, &one, &it, &root, &univ, &ierr);
    CHECK_IERR("waitio_mpi_scatterv_f");
    EXPECT(piece == 100 + (n - 1 - me), "scatterv gave %d", piece);
    /* this PB's group: its rank 0 broadcasts the PB's id */
    int pbword = rank == 0 ? 1000 + pb : -1;
    waitio_mpi_bcast_f(&pbword, &one, &it, &root, &mypb, &ierr);
    CHECK_IERR("waitio_mpi_bcast_f (PB group)");
    EXPECT(pbword == 1000 + pb, "PB group bcast gave %d", pbword);
    waitio_mpi_barrier_f(&mypb, &ierr);
    CHECK_IERR("waitio_mpi_barrier_f");
    waitio_barrier_f(&univ, &ierr);
    CHECK_IERR("waitio_barrier_f");

    printf("compat_api PB %d rank %d: %s (%d processes, %d doubles, truef: %s)\n", pb, rank,
           errors ? "FAILED" : "ok", n, count, TRUEF_KIND);
    fflush(stdout);
    static const int finalize_timeout = 1000; /* read-only memory, like a Fortran literal */
    waitio_finalize_f(&finalize_timeout);
    free(in);
    free(out);
    free(ranks);
    free(displs);
    free(counts);
    free(f);
    free(order);
    free(nprocs);
    return errors ? 1 : 0;
}
