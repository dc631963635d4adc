/*
 * waitio_mpi.h — the WaitIO-MPI conversion layer: MPI-style functions so that MPI code ports to
 * WaitIO by prefixing WAITIO_ (WAITIO_MPI_Isend, WAITIO_MPI_DOUBLE, ...). Communicators are
 * WaitIO groups and requests are WaitIO requests (the same types).
 *
 * waitio_create_universe() and waitio_create_universe_pbhead() initialise WaitIO themselves
 * (timeout: WAITIO_INIT_TIMEOUT seconds, default 60) and may both be called, in any order, by
 * every process. In the PB-heads communicator a process that is not its PB's rank 0 is not a
 * member: WAITIO_MPI_Comm_rank reports WAITIO_MPI_UNDEFINED (-1) there and WAITIO_MPI_Comm_size the
 * number of PBs; communication on it returns WAITIO_ERR_NOT_MEMBER.
 *
 * Statuses are arrays of WAITIO_STATUS_SIZE ints: [SOURCE, TAG, ERROR, COUNT-in-bytes].
 */
#ifndef WAITIO_MPI_H
#define WAITIO_MPI_H

#include "waitio.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef waitio_group_t WAITIO_MPI_Comm;
typedef waitio_req_t WAITIO_MPI_Request;
typedef int WAITIO_MPI_Datatype;
typedef int WAITIO_MPI_Op;

#define WAITIO_STATUS_SIZE 4
#define WAITIO_REQUEST_SIZE 22
#define WAITIO_MPI_SOURCE 0
#define WAITIO_MPI_TAG 1
#define WAITIO_MPI_ERROR 2
#define WAITIO_MPI_COUNT 3

#define WAITIO_MPI_SUCCESS 0
#define WAITIO_MPI_ANY_SOURCE (-1)
#define WAITIO_MPI_ANY_TAG (-1)
#define WAITIO_MPI_UNDEFINED WAITIO_UNDEFINED
#define WAITIO_MPI_COMM_NULL ((WAITIO_MPI_Comm)0)
#define WAITIO_MPI_IN_PLACE ((void *)1)
#define WAITIO_MPI_STATUS_IGNORE ((int *)0)
#define WAITIO_MPI_STATUSES_IGNORE ((int *)0)

/* datatypes (values shared with waitio_mpif.h) */
#define WAITIO_MPI_CHAR 1
#define WAITIO_MPI_SIGNED_CHAR 2
#define WAITIO_MPI_UNSIGNED_CHAR 3
#define WAITIO_MPI_BYTE 4
#define WAITIO_MPI_SHORT 5
#define WAITIO_MPI_UNSIGNED_SHORT 6
#define WAITIO_MPI_INT 7
#define WAITIO_MPI_UNSIGNED 8
#define WAITIO_MPI_LONG 9
#define WAITIO_MPI_UNSIGNED_LONG 10
#define WAITIO_MPI_LONG_LONG 11
#define WAITIO_MPI_LONG_LONG_INT 11
#define WAITIO_MPI_UNSIGNED_LONG_LONG 12
#define WAITIO_MPI_FLOAT 13
#define WAITIO_MPI_DOUBLE 14
#define WAITIO_MPI_LONG_DOUBLE 15
#define WAITIO_MPI_INT8_T 16
#define WAITIO_MPI_INT16_T 17
#define WAITIO_MPI_INT32_T 18
#define WAITIO_MPI_INT64_T 19
#define WAITIO_MPI_UINT8_T 20
#define WAITIO_MPI_UINT16_T 21
#define WAITIO_MPI_UINT32_T 22
#define WAITIO_MPI_UINT64_T 23
#define WAITIO_MPI_C_BOOL 24
#define WAITIO_MPI_INTEGER 30
#define WAITIO_MPI_REAL 31
#define WAITIO_MPI_DOUBLE_PRECISION 32
#define WAITIO_MPI_LOGICAL 33
#define WAITIO_MPI_CHARACTER 34
#define WAITIO_MPI_COMPLEX 35
#define WAITIO_MPI_DOUBLE_COMPLEX 36
#define WAITIO_MPI_INTEGER8 37
#define WAITIO_MPI_REAL8 38
#define WAITIO_MPI_REAL4 39
#define WAITIO_MPI_INTEGER4 40

/* reduction operations */
#define WAITIO_MPI_SUM 1
#define WAITIO_MPI_PROD 2
#define WAITIO_MPI_MAX 3
#define WAITIO_MPI_MIN 4
#define WAITIO_MPI_LAND 5
#define WAITIO_MPI_LOR 6
#define WAITIO_MPI_LXOR 7
#define WAITIO_MPI_BAND 8
#define WAITIO_MPI_BOR 9
#define WAITIO_MPI_BXOR 10

WAITIO_API int waitio_create_universe(WAITIO_MPI_Comm *commp);
WAITIO_API int waitio_create_universe_pbhead(WAITIO_MPI_Comm *commp);

WAITIO_API int waitio_mpi_comm_rank(WAITIO_MPI_Comm comm, int *rank);
WAITIO_API int waitio_mpi_comm_size(WAITIO_MPI_Comm comm, int *size);
WAITIO_API int waitio_mpi_type_size(WAITIO_MPI_Datatype datatype, int *size);
WAITIO_API double waitio_mpi_wtime(void);

WAITIO_API int waitio_mpi_isend(const void *buf, int count, WAITIO_MPI_Datatype datatype, int dest,
                                int tag, WAITIO_MPI_Comm comm, WAITIO_MPI_Request *request);
WAITIO_API int waitio_mpi_irecv(void *buf, int count, WAITIO_MPI_Datatype datatype, int source,
                                int tag, WAITIO_MPI_Comm comm, WAITIO_MPI_Request *request);
WAITIO_API int waitio_mpi_send(const void *buf, int count, WAITIO_MPI_Datatype datatype, int dest,
                               int tag, WAITIO_MPI_Comm comm);
WAITIO_API int waitio_mpi_recv(void *buf, int count, WAITIO_MPI_Datatype datatype, int source,
                               int tag, WAITIO_MPI_Comm comm);
/* status: WAITIO_STATUS_SIZE ints, or WAITIO_MPI_STATUS_IGNORE */
WAITIO_API int waitio_mpi_wait(WAITIO_MPI_Request *request, int *status);
WAITIO_API int waitio_mpi_test(WAITIO_MPI_Request *request, int *flag, int *status);
WAITIO_API int waitio_mpi_waitall(int count, WAITIO_MPI_Request *array_of_requests,
                                  int *array_of_statuses);

WAITIO_API int waitio_mpi_barrier(WAITIO_MPI_Comm comm);
WAITIO_API int waitio_mpi_bcast(void *buffer, int count, WAITIO_MPI_Datatype datatype, int root,
                                WAITIO_MPI_Comm comm);
WAITIO_API int waitio_mpi_reduce(const void *sendbuf, void *recvbuf, int count,
                                 WAITIO_MPI_Datatype datatype, WAITIO_MPI_Op op, int root,
                                 WAITIO_MPI_Comm comm);
WAITIO_API int waitio_mpi_allreduce(const void *sendbuf, void *recvbuf, int count,
                                    WAITIO_MPI_Datatype datatype, WAITIO_MPI_Op op,
                                    WAITIO_MPI_Comm comm);
WAITIO_API int waitio_mpi_gather(const void *sendbuf, int sendcount, WAITIO_MPI_Datatype sendtype,
                                 void *recvbuf, int recvcount, WAITIO_MPI_Datatype recvtype,
                                 int root, WAITIO_MPI_Comm comm);
WAITIO_API int waitio_mpi_gatherv(const void *sendbuf, int sendcount, WAITIO_MPI_Datatype sendtype,
                                  void *recvbuf, const int recvcounts[], const int displs[],
                                  WAITIO_MPI_Datatype recvtype, int root, WAITIO_MPI_Comm comm);
WAITIO_API int waitio_mpi_scatter(const void *sendbuf, int sendcount, WAITIO_MPI_Datatype sendtype,
                                  void *recvbuf, int recvcount, WAITIO_MPI_Datatype recvtype,
                                  int root, WAITIO_MPI_Comm comm);
WAITIO_API int waitio_mpi_scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                                   WAITIO_MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                   WAITIO_MPI_Datatype recvtype, int root, WAITIO_MPI_Comm comm);
WAITIO_API int waitio_mpi_allgather(const void *sendbuf, int sendcount,
                                    WAITIO_MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                    WAITIO_MPI_Datatype recvtype, WAITIO_MPI_Comm comm);
WAITIO_API int waitio_mpi_alltoall(const void *sendbuf, int sendcount,
                                   WAITIO_MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                   WAITIO_MPI_Datatype recvtype, WAITIO_MPI_Comm comm);

/* The path of bcast, reduce, allreduce and barrier on the universe when every PB has an MPI
 * adapter (docs/mpi-layer.md): chosen per call by operation and size (WAITIO_COLL_PATH_AUTO, the
 * default), always flat over WaitIO, or always hierarchical (through each PB's MPI) — what
 * WAITIO_COLL_HIER=auto|0|1 sets; that variable is read once, at the first collective. The
 * choice applies to this process's next collectives: every process of the universe must make
 * the same one before the same collective. WAITIO_ERR_ARG for any other value. */
#define WAITIO_COLL_PATH_AUTO (-1)
#define WAITIO_COLL_PATH_FLAT 0
#define WAITIO_COLL_PATH_HIER 1
WAITIO_API int waitio_coll_set_path(int path);

/*
 * The original's Fortran-callable C entry points: the same operations as the Fortran
 * subroutines of waitio_mpif.h (WAITIO_MPI_ISEND = waitio_mpi_isend_f, ...), every argument by
 * reference. `comm` is a Fortran communicator handle (an int the library writes and reads as
 * 4 bytes: get one from waitio_create_universe_f & co.), `req` an int[WAITIO_REQUEST_SIZE],
 * `status` an int[WAITIO_STATUS_SIZE] with Fortran's 1-based layout (source, tag, error, count)
 * or WAITIO_MPI_STATUS_IGNORE, `ierr` receives the WAITIO_ERR_* code. Fortran calls them as
 * `CALL waitio_mpi_isend_f(...)` (external symbol waitio_mpi_isend_f_, also exported).
 */
WAITIO_API void waitio_init_f(const int *timeout, int *ierr);
WAITIO_API void waitio_finalize_f(int *ierr);
WAITIO_API void waitio_create_universe_f(int *comm, int *ierr);
WAITIO_API void waitio_create_universe_pbhead_f(int *comm, int *ierr);
WAITIO_API void waitio_create_pbgroup_f(int *comm, const int *pbid, int *ierr);
WAITIO_API void waitio_group_rank_f(const int *comm, int *rank, int *ierr);
WAITIO_API void waitio_group_size_f(const int *comm, int *size, int *ierr);
WAITIO_API void waitio_pb_rank_f(int *rank, int *ierr);
WAITIO_API void waitio_pb_size_f(int *size, int *ierr);
WAITIO_API void waitio_wait_f(int *req, int *ierr);
WAITIO_API void waitio_barrier_f(const int *comm, int *ierr);
WAITIO_API void waitio_mpi_comm_rank_f(const int *comm, int *rank, int *ierr);
WAITIO_API void waitio_mpi_comm_size_f(const int *comm, int *size, int *ierr);
WAITIO_API void waitio_mpi_isend_f(const void *buf, const int *count, const int *datatype,
                                   const int *dest, const int *tag, const int *comm, int *req,
                                   int *ierr);
WAITIO_API void waitio_mpi_irecv_f(void *buf, const int *count, const int *datatype,
                                   const int *source, const int *tag, const int *comm, int *req,
                                   int *ierr);
WAITIO_API void waitio_mpi_send_f(const void *buf, const int *count, const int *datatype,
                                  const int *dest, const int *tag, const int *comm, int *ierr);
WAITIO_API void waitio_mpi_recv_f(void *buf, const int *count, const int *datatype,
                                  const int *source, const int *tag, const int *comm, int *status,
                                  int *ierr);
WAITIO_API void waitio_mpi_wait_f(int *req, int *status, int *ierr);
WAITIO_API void waitio_mpi_waitall_f(const int *count, int *reqs, int *statuses, int *ierr);
WAITIO_API void waitio_mpi_barrier_f(const int *comm, int *ierr);
WAITIO_API void waitio_mpi_bcast_f(void *buf, const int *count, const int *datatype,
                                   const int *root, const int *comm, int *ierr);
WAITIO_API void waitio_mpi_reduce_f(const void *sbuf, void *rbuf, const int *count,
                                    const int *datatype, const int *op, const int *root,
                                    const int *comm, int *ierr);
WAITIO_API void waitio_mpi_allreduce_f(const void *sbuf, void *rbuf, const int *count,
                                       const int *datatype, const int *op, const int *comm,
                                       int *ierr);
WAITIO_API void waitio_mpi_gather_f(const void *sbuf, const int *scount, const int *stype,
                                    void *rbuf, const int *rcount, const int *rtype,
                                    const int *root, const int *comm, int *ierr);
WAITIO_API void waitio_mpi_gatherv_f(const void *sbuf, const int *scount, const int *stype,
                                     void *rbuf, const int *rcounts, const int *displs,
                                     const int *rtype, const int *root, const int *comm,
                                     int *ierr);
WAITIO_API void waitio_mpi_scatter_f(const void *sbuf, const int *scount, const int *stype,
                                     void *rbuf, const int *rcount, const int *rtype,
                                     const int *root, const int *comm, int *ierr);
WAITIO_API void waitio_mpi_scatterv_f(const void *sbuf, const int *scounts, const int *displs,
                                      const int *stype, void *rbuf, const int *rcount,
                                      const int *rtype, const int *root, const int *comm,
                                      int *ierr);
WAITIO_API void waitio_mpi_allgather_f(const void *sbuf, const int *scount, const int *stype,
                                       void *rbuf, const int *rcount, const int *rtype,
                                       const int *comm, int *ierr);
WAITIO_API void waitio_mpi_alltoall_f(const void *sbuf, const int *scount, const int *stype,
                                      void *rbuf, const int *rcount, const int *rtype,
                                      const int *comm, int *ierr);

/* MPI's capitalisation: WAITIO_ + the MPI name */
#define WAITIO_MPI_Comm_rank waitio_mpi_comm_rank
#define WAITIO_MPI_Comm_size waitio_mpi_comm_size
#define WAITIO_MPI_Type_size waitio_mpi_type_size
#define WAITIO_MPI_Wtime waitio_mpi_wtime
#define WAITIO_MPI_Isend waitio_mpi_isend
#define WAITIO_MPI_Irecv waitio_mpi_irecv
#define WAITIO_MPI_Send waitio_mpi_send
#define WAITIO_MPI_Recv waitio_mpi_recv
#define WAITIO_MPI_Wait waitio_mpi_wait
#define WAITIO_MPI_Test waitio_mpi_test
#define WAITIO_MPI_Waitall waitio_mpi_waitall
#define WAITIO_MPI_Barrier waitio_mpi_barrier
#define WAITIO_MPI_Bcast waitio_mpi_bcast
#define WAITIO_MPI_Reduce waitio_mpi_reduce
#define WAITIO_MPI_Allreduce waitio_mpi_allreduce
#define WAITIO_MPI_Gather waitio_mpi_gather
#define WAITIO_MPI_Gatherv waitio_mpi_gatherv
#define WAITIO_MPI_Scatter waitio_mpi_scatter
#define WAITIO_MPI_Scatterv waitio_mpi_scatterv
#define WAITIO_MPI_Allgather waitio_mpi_allgather
#define WAITIO_MPI_Alltoall waitio_mpi_alltoall
#define WAITIO_CREATE_UNIVERSE waitio_create_universe
#define WAITIO_CREATE_UNIVERSE_PBHEAD waitio_create_universe_pbhead

#ifdef __cplusplus
}
#endif
#endif /* WAITIO_MPI_H */
