/*
 * fortran.c — Fortran bindings of the conversion layer (waitio_mpif.h; SPEC §8), callable from
 * gfortran and compilers with the same convention (lower case + trailing underscore, arguments
 * by reference). Communicators are default INTEGERs holding a handle the library writes and
 * reads as 4 bytes; requests are INTEGER(4) req(WAITIO_REQUEST_SIZE) holding a waitio_req_t;
 * statuses are INTEGER(4) sta(WAITIO_STATUS_SIZE).
 */
#include <string.h>
#include "mpi/mpi_internal.h"

#define MAX_HANDLES 1024

static waitio_group_t handles[MAX_HANDLES]; /* handle h (1-based) -> group */
static int nhandles;

static int handle_of(waitio_group_t g)
{
    for (int i = 0; i < nhandles; i++)
        if (handles[i] == g)
            return i + 1;
    if (nhandles == MAX_HANDLES)
        return 0;
    handles[nhandles++] = g;
    return nhandles;
}

static waitio_group_t group_of(const int *comm)
{
    int h = *comm; /* 4 bytes, whatever the variable's declared type */
    return h >= 1 && h <= nhandles ? handles[h - 1] : NULL;
}

/* Requests live in the caller's INTEGER(4) arrays, which need not be 8-byte aligned. */
static void req_load(const int *freq, waitio_req_t *r) { memcpy(r, freq, sizeof *r); }
static void req_store(int *freq, const waitio_req_t *r) { memcpy(freq, r, sizeof *r); }

#define FREQ_INTS WAITIO_REQUEST_SIZE

WAITIO_API void waitio_init_(const int *timeout, int *ierr) { *ierr = waitio_init(*timeout); }
WAITIO_API void waitio_finalize_(int *ierr)
{
    *ierr = waitio_finalize();
    nhandles = 0;
}

static void universe(int (*create)(WAITIO_MPI_Comm *), int *comm, int *ierr)
{
    WAITIO_MPI_Comm g;
    *ierr = create(&g);
    if (*ierr)
        return;
    int h = handle_of(g);
    if (!h) {
        *ierr = WAITIO_ERR_NOMEM;
        return;
    }
    memcpy(comm, &h, sizeof h);
}

WAITIO_API void waitio_create_universe_(int *comm, int *ierr) { universe(waitio_create_universe, comm, ierr); }
WAITIO_API void waitio_create_universe_pbhead_(int *comm, int *ierr)
{
    universe(waitio_create_universe_pbhead, comm, ierr);
}

WAITIO_API void waitio_group_rank_(const int *comm, int *rank, int *ierr) { *ierr = waitio_group_rank(group_of(comm), rank); }
WAITIO_API void waitio_group_size_(const int *comm, int *size, int *ierr) { *ierr = waitio_group_size(group_of(comm), size); }
WAITIO_API void waitio_mpi_comm_rank_(const int *comm, int *rank, int *ierr) { waitio_group_rank_(comm, rank, ierr); }
WAITIO_API void waitio_mpi_comm_size_(const int *comm, int *size, int *ierr) { waitio_group_size_(comm, size, ierr); }
WAITIO_API void waitio_pb_rank_(int *rank, int *ierr) { *ierr = waitio_pb_rank(rank); }
WAITIO_API void waitio_pb_size_(int *size, int *ierr) { *ierr = waitio_pb_size(size); }

WAITIO_API void waitio_mpi_isend_(const void *buf, const int *count, const int *dtype, const int *dest,
                       const int *tag, const int *comm, int *req, int *ierr)
{
    waitio_req_t r;
    *ierr = waitio_mpi_isend(buf, *count, *dtype, *dest, *tag, group_of(comm), &r);
    if (!*ierr)
        req_store(req, &r);
}

WAITIO_API void waitio_mpi_irecv_(void *buf, const int *count, const int *dtype, const int *source,
                       const int *tag, const int *comm, int *req, int *ierr)
{
    waitio_req_t r;
    *ierr = waitio_mpi_irecv(buf, *count, *dtype, *source, *tag, group_of(comm), &r);
    if (!*ierr)
        req_store(req, &r);
}

WAITIO_API void waitio_mpi_send_(const void *buf, const int *count, const int *dtype, const int *dest,
                      const int *tag, const int *comm, int *ierr)
{
    *ierr = waitio_mpi_send(buf, *count, *dtype, *dest, *tag, group_of(comm));
}

WAITIO_API void waitio_mpi_recv_(void *buf, const int *count, const int *dtype, const int *source,
                      const int *tag, const int *comm, int *status, int *ierr)
{
    waitio_req_t r;
    *ierr = waitio_mpi_irecv(buf, *count, *dtype, *source, *tag, group_of(comm), &r);
    if (!*ierr)
        *ierr = waitio_mpi_wait(&r, status);
}

WAITIO_API void waitio_mpi_wait_(int *req, int *status, int *ierr)
{
    waitio_req_t r;
    req_load(req, &r);
    *ierr = waitio_mpi_wait(&r, status);
    req_store(req, &r);
}

WAITIO_API void waitio_mpi_waitall_(const int *count, int *reqs, int *statuses, int *ierr)
{
    int first = 0;
    for (int i = 0; i < *count; i++) {
        waitio_req_t r;
        req_load(reqs + FREQ_INTS * i, &r);
        int rc = waitio_mpi_wait(&r, statuses + WAITIO_STATUS_SIZE * i);
        req_store(reqs + FREQ_INTS * i, &r);
        if (rc && !first)
            first = rc;
    }
    *ierr = first;
}

WAITIO_API void waitio_mpi_barrier_(const int *comm, int *ierr) { *ierr = waitio_mpi_barrier(group_of(comm)); }

WAITIO_API void waitio_mpi_bcast_(void *buf, const int *count, const int *dtype, const int *root,
                       const int *comm, int *ierr)
{
    *ierr = waitio_mpi_bcast(buf, *count, *dtype, *root, group_of(comm));
}

WAITIO_API void waitio_mpi_reduce_(const void *sbuf, void *rbuf, const int *count, const int *dtype,
                        const int *op, const int *root, const int *comm, int *ierr)
{
    *ierr = waitio_mpi_reduce(sbuf, rbuf, *count, *dtype, *op, *root, group_of(comm));
}

WAITIO_API void waitio_mpi_allreduce_(const void *sbuf, void *rbuf, const int *count, const int *dtype,
                           const int *op, const int *comm, int *ierr)
{
    *ierr = waitio_mpi_allreduce(sbuf, rbuf, *count, *dtype, *op, group_of(comm));
}

WAITIO_API void waitio_mpi_gather_(const void *sbuf, const int *scount, const int *stype, void *rbuf,
                        const int *rcount, const int *rtype, const int *root, const int *comm, int *ierr)
{
    *ierr = waitio_mpi_gather(sbuf, *scount, *stype, rbuf, *rcount, *rtype, *root, group_of(comm));
}

WAITIO_API void waitio_mpi_gatherv_(const void *sbuf, const int *scount, const int *stype, void *rbuf,
                         const int *rcounts, const int *displs, const int *rtype, const int *root,
                         const int *comm, int *ierr)
{
    *ierr = waitio_mpi_gatherv(sbuf, *scount, *stype, rbuf, rcounts, displs, *rtype, *root,
                               group_of(comm));
}

WAITIO_API void waitio_mpi_scatter_(const void *sbuf, const int *scount, const int *stype, void *rbuf,
                         const int *rcount, const int *rtype, const int *root, const int *comm, int *ierr)
{
    *ierr = waitio_mpi_scatter(sbuf, *scount, *stype, rbuf, *rcount, *rtype, *root, group_of(comm));
}

WAITIO_API void waitio_mpi_scatterv_(const void *sbuf, const int *scounts, const int *displs, const int *stype,
                          void *rbuf, const int *rcount, const int *rtype, const int *root,
                          const int *comm, int *ierr)
{
    *ierr = waitio_mpi_scatterv(sbuf, scounts, displs, *stype, rbuf, *rcount, *rtype, *root,
                                group_of(comm));
}

WAITIO_API void waitio_mpi_allgather_(const void *sbuf, const int *scount, const int *stype, void *rbuf,
                           const int *rcount, const int *rtype, const int *comm, int *ierr)
{
    *ierr = waitio_mpi_allgather(sbuf, *scount, *stype, rbuf, *rcount, *rtype, group_of(comm));
}

WAITIO_API void waitio_mpi_alltoall_(const void *sbuf, const int *scount, const int *stype, void *rbuf,
                          const int *rcount, const int *rtype, const int *comm, int *ierr)
{
    *ierr = waitio_mpi_alltoall(sbuf, *scount, *stype, rbuf, *rcount, *rtype, group_of(comm));
}
