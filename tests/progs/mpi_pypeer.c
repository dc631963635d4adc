/*
 * mpi_pypeer.c — the C side of the Python binding's cross-language test. Runs as an MPI PB next
 * to a Python PB (tests/python/pb_peer.py, which must be the last PB). Every C rank r:
 *   - sends the Python rank (the last universe rank) 1000 + 37 r doubles v[i] = r * 1e6 + i
 *     with tag 100 + r, and receives them back doubled with tag 200 + r;
 *   - joins an Allreduce (SUM of int64: each rank contributes its universe rank) and a Bcast of
 *     64 int32 from the Python rank (values 7 * i).
 * Exits non-zero with a message on any mismatch.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "waitio_mpi.h"

#define DIE(...) do { fprintf(stderr, "mpi_pypeer: " __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)
#define CK(x) do { int rc_ = (x); if (rc_) DIE("%s: %s (%s)", #x, waitio_strerror(rc_), waitio_error_message()); } while (0)

int main(int argc, char **argv)
{
    alarm(100);
    MPI_Init(&argc, &argv);
    WAITIO_MPI_Comm U;
    CK(waitio_create_universe(&U));
    int me, n;
    CK(WAITIO_MPI_Comm_rank(U, &me));
    CK(WAITIO_MPI_Comm_size(U, &n));
    int py = n - 1, count = 1000 + 37 * me;
    double *out = malloc(sizeof(double) * (size_t)count), *back = malloc(sizeof(double) * (size_t)count);
    for (int i = 0; i < count; i++)
        out[i] = me * 1e6 + i;
    WAITIO_MPI_Request r[2];
    CK(WAITIO_MPI_Irecv(back, count, WAITIO_MPI_DOUBLE, py, 200 + me, U, &r[0]));
    CK(WAITIO_MPI_Isend(out, count, WAITIO_MPI_DOUBLE, py, 100 + me, U, &r[1]));
    CK(WAITIO_MPI_Waitall(2, r, WAITIO_MPI_STATUSES_IGNORE));
    for (int i = 0; i < count; i++)
        if (back[i] != 2 * out[i])
            DIE("rank %d: element %d came back as %g", me, i, back[i]);
    int64_t mine = me, total = -1;
    CK(WAITIO_MPI_Allreduce(&mine, &total, 1, WAITIO_MPI_INT64_T, WAITIO_MPI_SUM, U));
    if (total != (int64_t)n * (n - 1) / 2)
        DIE("allreduce gave %lld", (long long)total);
    int32_t b[64] = {0};
    CK(WAITIO_MPI_Bcast(b, 64, WAITIO_MPI_INT32_T, py, U));
    for (int i = 0; i < 64; i++)
        if (b[i] != 7 * i)
            DIE("bcast element %d is %d", i, b[i]);
    CK(waitio_finalize());
    printf("mpi_pypeer rank %d of %d ok\n", me, n);
    free(out);
    free(back);
    MPI_Finalize();
    return 0;
}
