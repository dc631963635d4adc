/*
 * fortran.c — Fortran bindings of the conversion layer (waitio_mpif.h; SPEC §8). Communicators
 * are default INTEGERs holding a handle the library writes and reads as 4 bytes; requests are
 * INTEGER(4) req(WAITIO_REQUEST_SIZE) holding a waitio_req_t; statuses are
 * INTEGER(4) sta(WAITIO_STATUS_SIZE); every argument is passed by reference.
 *
 * Each entry point is one C function, NAME_f (the original's Fortran-callable C functions,
 * declared in waitio_mpi.h), exported under two more names: NAME_ — what gfortran and compilers
 * with its convention call for `CALL NAME(...)` (the upper-case subroutines) — and NAME_f_ —
 * what they call for `CALL NAME_f(...)`, as the original's own Fortran modules do. The module
 * `waitio` (src/mpi/waitio.F90) binds to the same functions, or to fortran_cdesc.c for buffers.
 * Three differ, where the original's `_f` signature is not MPI's: finalize, gather and allgather
 * (NAME_f and NAME_f_ the original's; NAME_ MPI's, from WAITIO_FINALIZE_f / WAITIO_MPI_*_f).
 */
#define WIO_LOG_SUBSYS WIO_SUB_MPI /* this file logs as "mpi" (WAITIO_LOG=mpi=LEVEL) */
#include <string.h>
#include "mpi/mpi_internal.h"

#define WIO_FORTRAN_ALIASES(name)                                                               \
    WAITIO_API extern __typeof__(name##_f) name##_ __attribute__((alias(#name "_f")));       \
    WAITIO_API extern __typeof__(name##_f) name##_f_ __attribute__((alias(#name "_f")));

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

int wio_fortran_comm_handle(waitio_group_t g, int *comm)
{
    int h = handle_of(g);
    if (!h)
        return wio_fail(WAITIO_ERR_NOMEM, "more than %d Fortran communicators", MAX_HANDLES);
    memcpy(comm, &h, sizeof h);
    return 0;
}

waitio_group_t wio_fortran_comm(const int *comm) { return group_of(comm); }

void waitio_init_f(const int *timeout, int *ierr) { *ierr = waitio_init(*timeout); }
WIO_FORTRAN_ALIASES(waitio_init)

static int finalize_and_forget_handles(void)
{
    int rc = waitio_finalize();
    nhandles = 0;
    return rc;
}

/* WAITIO_FINALIZE(ierr): waitio_mpif.h's subroutine and the module's, which return the status. */
void WAITIO_FINALIZE_f(int *ierr) { *ierr = finalize_and_forget_handles(); }
WAITIO_API extern __typeof__(WAITIO_FINALIZE_f) waitio_finalize_
    __attribute__((alias("WAITIO_FINALIZE_f")));

/* The original's `CALL waitio_finalize_f(1000)`: the argument is an input, often a literal (which
 * compilers place in read-only memory), so nothing is written through it; its value, a timeout
 * whose unit the original leaves unsaid, is not read either (WAITIO_FINALIZE_TIMEOUT bounds the
 * wait). With no ierr to return, a failure is reported on stderr. */
void waitio_finalize_f(const int *timeout)
{
    (void)timeout;
    int rc = finalize_and_forget_handles();
    if (rc)
        fprintf(stderr, "waitio_finalize_f: %s (%d)\n", waitio_error_message(), rc);
}
WAITIO_API extern __typeof__(waitio_finalize_f) waitio_finalize_f_
    __attribute__((alias("waitio_finalize_f")));

static void universe(int (*create)(WAITIO_MPI_Comm *), int *comm, int *ierr)
{
    WAITIO_MPI_Comm g;
    *ierr = create(&g);
    if (!*ierr)
        *ierr = wio_fortran_comm_handle(g, comm);
}

void waitio_create_universe_f(int *comm, int *ierr) { universe(waitio_create_universe, comm, ierr); }
WIO_FORTRAN_ALIASES(waitio_create_universe)

void waitio_create_universe_pbhead_f(int *comm, int *ierr)
{
    universe(waitio_create_universe_pbhead, comm, ierr);
}
WIO_FORTRAN_ALIASES(waitio_create_universe_pbhead)

void waitio_create_pbgroup_f(int *comm, const int *pbid, int *ierr)
{
    waitio_group_t g;
    *ierr = waitio_create_pbgroup(&g, *pbid);
    if (!*ierr)
        *ierr = wio_fortran_comm_handle(g, comm);
}
WIO_FORTRAN_ALIASES(waitio_create_pbgroup)

void waitio_group_rank_f(const int *comm, int *rank, int *ierr) { *ierr = waitio_group_rank(group_of(comm), rank); }
WIO_FORTRAN_ALIASES(waitio_group_rank)
void waitio_group_size_f(const int *comm, int *size, int *ierr) { *ierr = waitio_group_size(group_of(comm), size); }
WIO_FORTRAN_ALIASES(waitio_group_size)
void waitio_mpi_comm_rank_f(const int *comm, int *rank, int *ierr) { waitio_group_rank_f(comm, rank, ierr); }
WIO_FORTRAN_ALIASES(waitio_mpi_comm_rank)
void waitio_mpi_comm_size_f(const int *comm, int *size, int *ierr) { waitio_group_size_f(comm, size, ierr); }
WIO_FORTRAN_ALIASES(waitio_mpi_comm_size)
void waitio_pb_rank_f(int *rank, int *ierr) { *ierr = waitio_pb_rank(rank); }
WIO_FORTRAN_ALIASES(waitio_pb_rank)
void waitio_pb_size_f(int *size, int *ierr) { *ierr = waitio_pb_size(size); }
WIO_FORTRAN_ALIASES(waitio_pb_size)

void waitio_mpi_isend_f(const void *buf, const int *count, const int *dtype, const int *dest,
                        const int *tag, const int *comm, int *req, int *ierr)
{
    waitio_req_t r;
    *ierr = waitio_mpi_isend(buf, *count, *dtype, *dest, *tag, group_of(comm), &r);
    if (!*ierr)
        req_store(req, &r);
}
WIO_FORTRAN_ALIASES(waitio_mpi_isend)

void waitio_mpi_irecv_f(void *buf, const int *count, const int *dtype, const int *source,
                        const int *tag, const int *comm, int *req, int *ierr)
{
    waitio_req_t r;
    *ierr = waitio_mpi_irecv(buf, *count, *dtype, *source, *tag, group_of(comm), &r);
    if (!*ierr)
        req_store(req, &r);
}
WIO_FORTRAN_ALIASES(waitio_mpi_irecv)

void waitio_mpi_send_f(const void *buf, const int *count, const int *dtype, const int *dest,
                       const int *tag, const int *comm, int *ierr)
{
    *ierr = waitio_mpi_send(buf, *count, *dtype, *dest, *tag, group_of(comm));
}
WIO_FORTRAN_ALIASES(waitio_mpi_send)

void waitio_mpi_recv_f(void *buf, const int *count, const int *dtype, const int *source,
                       const int *tag, const int *comm, int *status, int *ierr)
{
    waitio_req_t r;
    *ierr = waitio_mpi_irecv(buf, *count, *dtype, *source, *tag, group_of(comm), &r);
    if (!*ierr)
        *ierr = waitio_mpi_wait(&r, status);
}
WIO_FORTRAN_ALIASES(waitio_mpi_recv)

void waitio_mpi_wait_f(int *req, int *status, int *ierr)
{
    waitio_req_t r;
    req_load(req, &r);
    *ierr = waitio_mpi_wait(&r, status);
    req_store(req, &r);
}
WIO_FORTRAN_ALIASES(waitio_mpi_wait)

/* WAITIO_WAIT(req, ierr): the original's wait, without a status */
void waitio_wait_f(int *req, int *ierr) { waitio_mpi_wait_f(req, NULL, ierr); }
WIO_FORTRAN_ALIASES(waitio_wait)

void waitio_mpi_waitall_f(const int *count, int *reqs, int *statuses, int *ierr)
{
    int first = 0;
    for (int i = 0; i < *count; i++) {
        waitio_req_t r;
        req_load(reqs + FREQ_INTS * i, &r);
        int rc = waitio_mpi_wait(&r, statuses ? statuses + WAITIO_STATUS_SIZE * i : NULL);
        req_store(reqs + FREQ_INTS * i, &r);
        if (rc && !first)
            first = rc;
    }
    *ierr = first;
}
WIO_FORTRAN_ALIASES(waitio_mpi_waitall)

void waitio_mpi_barrier_f(const int *comm, int *ierr) { *ierr = waitio_mpi_barrier(group_of(comm)); }
WIO_FORTRAN_ALIASES(waitio_mpi_barrier)
/* WAITIO_BARRIER(comm, ierr): the original's name for the same barrier */
void waitio_barrier_f(const int *comm, int *ierr) { waitio_mpi_barrier_f(comm, ierr); }
WIO_FORTRAN_ALIASES(waitio_barrier)

void waitio_mpi_bcast_f(void *buf, const int *count, const int *dtype, const int *root,
                        const int *comm, int *ierr)
{
    *ierr = waitio_mpi_bcast(buf, *count, *dtype, *root, group_of(comm));
}
WIO_FORTRAN_ALIASES(waitio_mpi_bcast)

void waitio_mpi_reduce_f(const void *sbuf, void *rbuf, const int *count, const int *dtype,
                         const int *op, const int *root, const int *comm, int *ierr)
{
    *ierr = waitio_mpi_reduce(sbuf, rbuf, *count, *dtype, *op, *root, group_of(comm));
}
WIO_FORTRAN_ALIASES(waitio_mpi_reduce)

void waitio_mpi_allreduce_f(const void *sbuf, void *rbuf, const int *count, const int *dtype,
                            const int *op, const int *comm, int *ierr)
{
    *ierr = waitio_mpi_allreduce(sbuf, rbuf, *count, *dtype, *op, group_of(comm));
}
WIO_FORTRAN_ALIASES(waitio_mpi_allreduce)

/* gather and allgather: `CALL waitio_mpi_gather_f(sbuf, rbuf, count, datatype, root, comm, ierr)`
 * is the original's short list; `CALL WAITIO_MPI_Gather(...)` (symbol waitio_mpi_gather_) MPI's. */
void waitio_mpi_gather_f(const void *sbuf, void *rbuf, const int *count, const int *dtype,
                         const int *root, const int *comm, int *ierr)
{
    *ierr = waitio_mpi_gather(sbuf, rbuf, *count, *dtype, *root, group_of(comm));
}
WAITIO_API extern __typeof__(waitio_mpi_gather_f) waitio_mpi_gather_f_
    __attribute__((alias("waitio_mpi_gather_f")));

void WAITIO_MPI_Gather_f(const void *sbuf, const int *scount, const int *stype, void *rbuf,
                         const int *rcount, const int *rtype, const int *root, const int *comm,
                         int *ierr)
{
    *ierr = WAITIO_MPI_Gather(sbuf, *scount, *stype, rbuf, *rcount, *rtype, *root, group_of(comm));
}
WAITIO_API extern __typeof__(WAITIO_MPI_Gather_f) waitio_mpi_gather_
    __attribute__((alias("WAITIO_MPI_Gather_f")));

void waitio_mpi_gatherv_f(const void *sbuf, const int *scount, const int *stype, void *rbuf,
                          const int *rcounts, const int *displs, const int *rtype, const int *root,
                          const int *comm, int *ierr)
{
    *ierr = waitio_mpi_gatherv(sbuf, *scount, *stype, rbuf, rcounts, displs, *rtype, *root,
                               group_of(comm));
}
WIO_FORTRAN_ALIASES(waitio_mpi_gatherv)

void waitio_mpi_scatter_f(const void *sbuf, const int *scount, const int *stype, void *rbuf,
                          const int *rcount, const int *rtype, const int *root, const int *comm,
                          int *ierr)
{
    *ierr = waitio_mpi_scatter(sbuf, *scount, *stype, rbuf, *rcount, *rtype, *root, group_of(comm));
}
WIO_FORTRAN_ALIASES(waitio_mpi_scatter)

void waitio_mpi_scatterv_f(const void *sbuf, const int *scounts, const int *displs,
                           const int *stype, void *rbuf, const int *rcount, const int *rtype,
                           const int *root, const int *comm, int *ierr)
{
    *ierr = waitio_mpi_scatterv(sbuf, scounts, displs, *stype, rbuf, *rcount, *rtype, *root,
                                group_of(comm));
}
WIO_FORTRAN_ALIASES(waitio_mpi_scatterv)

void waitio_mpi_allgather_f(const void *sbuf, void *rbuf, const int *count, const int *dtype,
                            const int *comm, int *ierr)
{
    *ierr = waitio_mpi_allgather(sbuf, rbuf, *count, *dtype, group_of(comm));
}
WAITIO_API extern __typeof__(waitio_mpi_allgather_f) waitio_mpi_allgather_f_
    __attribute__((alias("waitio_mpi_allgather_f")));

void WAITIO_MPI_Allgather_f(const void *sbuf, const int *scount, const int *stype, void *rbuf,
                            const int *rcount, const int *rtype, const int *comm, int *ierr)
{
    *ierr = WAITIO_MPI_Allgather(sbuf, *scount, *stype, rbuf, *rcount, *rtype, group_of(comm));
}
WAITIO_API extern __typeof__(WAITIO_MPI_Allgather_f) waitio_mpi_allgather_
    __attribute__((alias("WAITIO_MPI_Allgather_f")));

void waitio_mpi_alltoall_f(const void *sbuf, const int *scount, const int *stype, void *rbuf,
                           const int *rcount, const int *rtype, const int *comm, int *ierr)
{
    *ierr = waitio_mpi_alltoall(sbuf, *scount, *stype, rbuf, *rcount, *rtype, group_of(comm));
}
WIO_FORTRAN_ALIASES(waitio_mpi_alltoall)
