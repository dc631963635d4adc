/*
 * compat_signatures.c — the original WaitIO's own signatures where they differ from MPI's, called
 * as a coupler written for the original calls them: waitio_mpi_gather(sendbuf, recvbuf, count,
 * datatype, root, comm) and waitio_mpi_allgather(sendbuf, recvbuf, count, datatype, comm), their
 * by-reference `_f` forms on a Fortran handle, and waitio_finalize_f with its argument in
 * read-only memory (as a Fortran literal is: a write through it would crash). Next to them the
 * MPI-style forms, WAITIO_MPI_Gather / WAITIO_MPI_Allgather (and their _f), with different send
 * and receive datatypes of the same size, so the full lists are really read.
 * Every received byte is compared with what its sender put there.
 * Usage: compat_signatures SEED   (every process of the job gets the same SEED)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "waitio_mpi.h"

#ifdef waitio_mpi_gather
#error "waitio_mpi_gather must be a function with the original's list, not a macro"
#endif

#define ROUNDS 6
#define MAX_COUNT 3000

static int me = -1, nprocs, errors;
static long bytes_checked;

#define FAIL(...) do { fprintf(stderr, "compat_signatures[%d]: FAIL: ", me); \
        fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); exit(1); } while (0)
#define CHECK(call) do { int rc_ = (call); if (rc_) FAIL("%s: %d (%s)", #call, rc_, waitio_error_message()); } while (0)

static unsigned next_random(unsigned *state)
{
    *state = *state * 1103515245u + 12345u;
    return *state >> 8;
}

/* byte j of what process src sends in step `step` */
static unsigned char pattern(int src, size_t j, int step)
{
    return (unsigned char)(src * 131 + (int)(j * 7u) + (int)(j >> 8) + step * 29 + 1);
}

static void fill(unsigned char *buf, size_t len, int step)
{
    for (size_t j = 0; j < len; j++)
        buf[j] = pattern(me, j, step);
}

/* rbuf holds nprocs blocks of len bytes, block s from process s */
static void check_blocks(const unsigned char *rbuf, size_t len, int step, const char *what)
{
    for (int s = 0; s < nprocs; s++)
        for (size_t j = 0; j < len; j++)
            if (rbuf[(size_t)s * len + j] != pattern(s, j, step)) {
                errors++;
                fprintf(stderr, "compat_signatures[%d]: %s (step %d): byte %zu from %d is %u, "
                        "expected %u\n", me, what, step, j, s, rbuf[(size_t)s * len + j],
                        pattern(s, j, step));
                return;
            }
    bytes_checked += (long)len * nprocs;
}

static void reset(unsigned char *rbuf, size_t len) { memset(rbuf, 0xee, len * (size_t)nprocs); }

int main(int argc, char **argv)
{
    if (argc != 2)
        FAIL("usage: compat_signatures SEED");
    unsigned state = (unsigned)strtoul(argv[1], NULL, 10);
    int fcomm = 0, ierr = 0;
    waitio_create_universe_f(&fcomm, &ierr); /* initialises; the same universe as in C below */
    if (ierr)
        FAIL("waitio_create_universe_f: %d", ierr);
    WAITIO_MPI_Comm u;
    CHECK(waitio_create_universe(&u));
    CHECK(waitio_group_rank(u, &me));
    CHECK(waitio_group_size(u, &nprocs));
    const WAITIO_MPI_Datatype types[] = {WAITIO_MPI_INT, WAITIO_MPI_DOUBLE, WAITIO_MPI_BYTE};
    const int sizes[] = {4, 8, 1};
    unsigned char *sbuf = malloc(MAX_COUNT * 8), *rbuf = malloc((size_t)MAX_COUNT * 8 * (size_t)nprocs);
    if (!sbuf || !rbuf)
        FAIL("out of memory");

    for (int r = 0; r < ROUNDS; r++) {
        int count = r == 0 ? 1 : 1 + (int)(next_random(&state) % MAX_COUNT);
        int t = r % 3, root = r % nprocs, step = r * 8;
        WAITIO_MPI_Datatype dt = types[t];
        size_t len = (size_t)count * (size_t)sizes[t];
        int dti = dt, bytes = (int)len, byte = WAITIO_MPI_BYTE;

        /* the original's short lists, C */
        fill(sbuf, len, step); reset(rbuf, len);
        CHECK(waitio_mpi_gather(sbuf, rbuf, count, dt, root, u));
        if (me == root)
            check_blocks(rbuf, len, step, "waitio_mpi_gather");
        fill(sbuf, len, ++step); reset(rbuf, len);
        CHECK(waitio_mpi_allgather(sbuf, rbuf, count, dt, u));
        check_blocks(rbuf, len, step, "waitio_mpi_allgather");

        /* MPI's full lists: bytes sent, typed elements received */
        fill(sbuf, len, ++step); reset(rbuf, len);
        CHECK(WAITIO_MPI_Gather(sbuf, bytes, WAITIO_MPI_BYTE, rbuf, count, dt, root, u));
        if (me == root)
            check_blocks(rbuf, len, step, "WAITIO_MPI_Gather");
        fill(sbuf, len, ++step); reset(rbuf, len);
        CHECK(WAITIO_MPI_Allgather(sbuf, count, dt, rbuf, bytes, WAITIO_MPI_BYTE, u));
        check_blocks(rbuf, len, step, "WAITIO_MPI_Allgather");

        /* the `_f` forms on the Fortran handle: the original's short lists, then MPI's */
        fill(sbuf, len, ++step); reset(rbuf, len);
        waitio_mpi_gather_f(sbuf, rbuf, &count, &dti, &root, &fcomm, &ierr);
        if (ierr)
            FAIL("waitio_mpi_gather_f: %d (%s)", ierr, waitio_error_message());
        if (me == root)
            check_blocks(rbuf, len, step, "waitio_mpi_gather_f");
        fill(sbuf, len, ++step); reset(rbuf, len);
        waitio_mpi_allgather_f(sbuf, rbuf, &count, &dti, &fcomm, &ierr);
        if (ierr)
            FAIL("waitio_mpi_allgather_f: %d (%s)", ierr, waitio_error_message());
        check_blocks(rbuf, len, step, "waitio_mpi_allgather_f");
        fill(sbuf, len, ++step); reset(rbuf, len);
        WAITIO_MPI_Gather_f(sbuf, &count, &dti, rbuf, &bytes, &byte, &root, &fcomm, &ierr);
        if (ierr)
            FAIL("WAITIO_MPI_Gather_f: %d (%s)", ierr, waitio_error_message());
        if (me == root)
            check_blocks(rbuf, len, step, "WAITIO_MPI_Gather_f");
        fill(sbuf, len, ++step); reset(rbuf, len);
        WAITIO_MPI_Allgather_f(sbuf, &bytes, &byte, rbuf, &count, &dti, &fcomm, &ierr);
        if (ierr)
            FAIL("WAITIO_MPI_Allgather_f: %d (%s)", ierr, waitio_error_message());
        check_blocks(rbuf, len, step, "WAITIO_MPI_Allgather_f");
    }
    printf("compat_signatures %d: %s (%d processes, %d rounds, %ld bytes checked)\n", me,
           errors ? "FAILED" : "ok", nprocs, ROUNDS, bytes_checked);
    fflush(stdout);
    free(sbuf);
    free(rbuf);
    /* read-only memory: the original's `CALL waitio_finalize_f(1000)` passes a literal */
    static const int finalize_timeout = 1000;
    waitio_finalize_f(&finalize_timeout);
    return errors ? 1 : 0;
}
