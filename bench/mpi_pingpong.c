/*
 * mpi_pingpong.c — the ping-pong loop of waitio-bench, over MPI between ranks 0 and 1 of one
 * job, so that WaitIO's figures can be put beside Open MPI's and MPICH's from the same run.
 * Same sizes, iteration counts (waitio_bench.c: iterations_for) and warm-up; the first warm-up
 * exchange and one exchange after the clock stopped carry a pattern checked byte by byte.
 * Output: CSV like `waitio-bench --csv` (benchmark,bytes,iterations,half_rtt_us,mb_per_s).
 * Usage: mpirun -np 2 mpi_pingpong NAME SIZE[,SIZE...]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long iterations_for(size_t size)
{
    return size <= 4096 ? 20000 : size <= (64u << 10) ? 5000 : size <= (1u << 20) ? 500 : 60;
}

static void fill(unsigned char *b, size_t n, size_t size) { for (size_t i = 0; i < n; i++) b[i] = (unsigned char)(i * 29 + size); }

static int exchange(unsigned char *b, size_t n, int me, int check, size_t size)
{
    if (me == 0) {
        if (check)
            fill(b, n, size);
        MPI_Send(b, (int)n, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
        if (check)
            memset(b, 0, n);
        MPI_Recv(b, (int)n, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        if (check)
            memset(b, 0, n);
        MPI_Recv(b, (int)n, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(b, (int)n, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
    }
    if (!check)
        return 0;
    unsigned char *w = malloc(n ? n : 1);
    fill(w, n, size);
    int bad = memcmp(w, b, n) != 0;
    free(w);
    return bad;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc < 3 || np != 2) {
        if (me == 0)
            fprintf(stderr, "usage: mpirun -np 2 mpi_pingpong NAME SIZE[,SIZE...]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char *list = strdup(argv[2]);
    if (me == 0)
        printf("benchmark,bytes,iterations,half_rtt_us,mb_per_s\n");
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        char *end;
        double v = strtod(tok, &end);
        size_t size = (size_t)(v * (*end == 'K' ? 1024 : *end == 'M' ? 1048576 : 1));
        unsigned char *b = malloc(size ? size : 1);
        long iters = iterations_for(size);
        if (exchange(b, size, me, 1, size)) {
            fprintf(stderr, "mpi_pingpong: rank %d: data corrupt at %zu bytes\n", me, size);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        for (int i = 0; i < 9; i++)
            exchange(b, size, me, 0, size);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (long i = 0; i < iters; i++)
            exchange(b, size, me, 0, size);
        double us = (MPI_Wtime() - t0) / (double)iters / 2 * 1e6;
        if (exchange(b, size, me, 1, size)) {
            fprintf(stderr, "mpi_pingpong: rank %d: data corrupt at %zu bytes\n", me, size);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (me == 0)
            printf("%s,%zu,%ld,%.3f,%.3f\n", argv[1], size, iters, us, (double)size / us);
        free(b);
    }
    free(list);
    MPI_Finalize();
    return 0;
}
