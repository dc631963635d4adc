/*
 * gpu_coll.c — the conversion layer's collectives and point-to-point calls on device buffers
 * (cuMemAlloc), over the universe communicator of any number of processes: bcast, reduce,
 * allreduce (also in place), gather, allgather, scatter, alltoall and a send/recv ring, each
 * result copied back to the host and checked element by element against what every rank
 * contributed. Runs with the fake driver (tests/gpu/ci_coll.sh) or a real GPU (run.sh).
 */
#include "gpu_testdrv.h"
#include "testutil.h"
#include "waitio_mpi.h"

#define N 3001 /* elements per rank: not a multiple of anything */

static int me, np;

static int value(int rank, int i, int salt) { return (rank + 1) * 1000003 + i * 7 + salt; }

static int *dev_ints(size_t n, int rank, int salt)
{
    int *h = tu_xmalloc(n * sizeof *h);
    for (size_t i = 0; i < n; i++)
        h[i] = value(rank, (int)i, salt);
    int *d = td_alloc(n * sizeof *h);
    td_put(d, h, n * sizeof *h);
    free(h);
    return d;
}

static int *to_host(const int *d, size_t n)
{
    int *h = tu_xmalloc(n * sizeof *h);
    td_get(h, d, n * sizeof *h);
    return h;
}

static void expect(const char *what, const int *got, size_t i, int want)
{
    if (got[i] != want)
        TU_ERR("%s: element %zu is %d, expected %d", what, i, got[i], want);
}

static void test_bcast(WAITIO_MPI_Comm c)
{
    int root = np - 1;
    int *d = dev_ints(N, me, 1);
    TU_CHECK(waitio_mpi_bcast(d, N, WAITIO_MPI_INT, root, c));
    int *h = to_host(d, N);
    for (size_t i = 0; i < N; i++)
        expect("bcast", h, i, value(root, (int)i, 1));
    free(h);
    td_free(d);
}

static void test_reductions(WAITIO_MPI_Comm c)
{
    int *s = dev_ints(N, me, 2), *r = dev_ints(N, me, 99);
    TU_CHECK(waitio_mpi_allreduce(s, r, N, WAITIO_MPI_INT, WAITIO_MPI_SUM, c));
    int *h = to_host(r, N);
    for (size_t i = 0; i < N; i++) {
        int want = 0;
        for (int k = 0; k < np; k++)
            want += value(k, (int)i, 2);
        expect("allreduce sum", h, i, want);
    }
    free(h);
    /* in place, max */
    TU_CHECK(waitio_mpi_allreduce(WAITIO_MPI_IN_PLACE, s, N, WAITIO_MPI_INT, WAITIO_MPI_MAX, c));
    h = to_host(s, N);
    for (size_t i = 0; i < N; i++)
        expect("allreduce in place max", h, i, value(np - 1, (int)i, 2));
    free(h);
    /* reduce to rank 0, min, the send buffer on the device and the receive buffer on the host */
    int *hs = dev_ints(N, me, 3), hr[N];
    TU_CHECK(waitio_mpi_reduce(hs, me == 0 ? hr : NULL, N, WAITIO_MPI_INT, WAITIO_MPI_MIN, 0, c));
    if (me == 0)
        for (size_t i = 0; i < N; i++)
            expect("reduce min", hr, i, value(0, (int)i, 3));
    td_free(hs);
    td_free(s);
    td_free(r);
}

static void test_gathers(WAITIO_MPI_Comm c)
{
    size_t all = (size_t)np * N;
    int *s = dev_ints(N, me, 4), *r = td_alloc(all * sizeof(int));
    TU_CHECK(waitio_mpi_gather(s, r, N, WAITIO_MPI_INT, 0, c));
    if (me == 0) {
        int *h = to_host(r, all);
        for (size_t i = 0; i < all; i++)
            expect("gather", h, i, value((int)(i / N), (int)(i % N), 4));
        free(h);
    }
    TU_CHECK(waitio_mpi_allgather(s, r, N, WAITIO_MPI_INT, c));
    int *h = to_host(r, all);
    for (size_t i = 0; i < all; i++)
        expect("allgather", h, i, value((int)(i / N), (int)(i % N), 4));
    free(h);
    /* scatter from rank 1 % np: its whole buffer, rank k gets block k */
    int root = 1 % np, *src = dev_ints(all, root, 5);
    TU_CHECK(waitio_mpi_scatter(src, N, WAITIO_MPI_INT, s, N, WAITIO_MPI_INT, root, c));
    h = to_host(s, N);
    for (size_t i = 0; i < N; i++)
        expect("scatter", h, i, value(root, (int)(me * N + i), 5));
    free(h);
    /* alltoall: block k of rank j's buffer goes to rank k's block j */
    int *a = dev_ints(all, me, 6);
    TU_CHECK(waitio_mpi_alltoall(a, N, WAITIO_MPI_INT, r, N, WAITIO_MPI_INT, c));
    h = to_host(r, all);
    for (size_t i = 0; i < all; i++)
        expect("alltoall", h, i, value((int)(i / N), (int)(me * N + i % N), 6));
    free(h);
    td_free(a);
    td_free(src);
    td_free(s);
    td_free(r);
}

static void test_ring(WAITIO_MPI_Comm c)
{
    int *s = dev_ints(N, me, 7), *r = td_alloc(N * sizeof(int));
    int next = (me + 1) % np, prev = (me + np - 1) % np;
    WAITIO_MPI_Request req;
    TU_CHECK(waitio_mpi_irecv(r, N, WAITIO_MPI_INT, prev, 5, c, &req));
    TU_CHECK(waitio_mpi_send(s, N, WAITIO_MPI_INT, next, 5, c));
    TU_CHECK(waitio_mpi_wait(&req, NULL));
    int *h = to_host(r, N);
    for (size_t i = 0; i < N; i++)
        expect("send/recv ring", h, i, value(prev, (int)i, 7));
    free(h);
    td_free(s);
    td_free(r);
}

int main(int argc, char **argv)
{
    (void)argc;
    tu_set_name(argv[0]);
    tu_alarm(60);
    td_load();
    TU_CHECK(waitio_init(30));
    WAITIO_MPI_Comm c;
    TU_CHECK(waitio_create_universe(&c));
    TU_CHECK(waitio_mpi_comm_rank(c, &me));
    TU_CHECK(waitio_mpi_comm_size(c, &np));
    tu_set_who(me, 0);
    tu_phase("bcast");
    test_bcast(c);
    tu_phase("reductions");
    test_reductions(c);
    tu_phase("gathers");
    test_gathers(c);
    tu_phase("ring");
    test_ring(c);
    TU_CHECK(waitio_finalize());
    if (tu_errors)
        return 1;
    printf("gpu_coll ok: rank %d of %d\n", me, np);
    return 0;
}
