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
/* gather and allgather: the lower-case names keep the original WaitIO's short lists (one count,
 * one datatype for both sides), as programs written for it call them; MPI's full lists are
 * WAITIO_MPI_Gather and WAITIO_MPI_Allgather (functions, not aliases of the lower-case names). */
WAITIO_API int waitio_mpi_gather(const void *sendbuf, void *recvbuf, int count,
                                 WAITIO_MPI_Datatype datatype, int root, WAITIO_MPI_Comm comm);
WAITIO_API int waitio_mpi_allgather(const void *sendbuf, void *recvbuf, int count,
                                    WAITIO_MPI_Datatype datatype, WAITIO_MPI_Comm comm);
WAITIO_API int WAITIO_MPI_Gather(const void *sendbuf, int sendcount, WAITIO_MPI_Datatype sendtype,
                                 void *recvbuf, int recvcount, WAITIO_MPI_Datatype recvtype,
                                 int root, WAITIO_MPI_Comm comm);
WAITIO_API int WAITIO_MPI_Allgather(const void *sendbuf, int sendcount,
                                    WAITIO_MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                    WAITIO_MPI_Datatype recvtype, WAITIO_MPI_Comm comm);
WAITIO_API int waitio_mpi_gatherv(const void *sendbuf, int sendcount, WAITIO_MPI_Datatype sendtype,
                                  void *recvbuf, const int recvcounts[], const int displs[],
                                  WAITIO_MPI_Datatype recvtype, int root, WAITIO_MPI_Comm comm);
WAITIO_API int waitio_mpi_scatter(const void *sendbuf, int sendcount, WAITIO_MPI_Datatype sendtype,
                                  void *recvbuf, int recvcount, WAITIO_MPI_Datatype recvtype,
                                  int root, WAITIO_MPI_Comm comm);
WAITIO_API int waitio_mpi_scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                                   WAITIO_MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                   WAITIO_MPI_Datatype recvtype, int root, WAITIO_MPI_Comm comm);
WAITIO_API int waitio_mpi_alltoall(const void *sendbuf, int sendcount,
                                   WAITIO_MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                   WAITIO_MPI_Datatype recvtype, WAITIO_MPI_Comm comm);

/* The path of bcast, reduce, allreduce and barrier on the universe when every PB has an MPI
 * adapter (docs/mpi-layer.md, "Collective paths"): chosen per call by operation and size
 * (WAITIO_COLL_PATH_AUTO, the default) or forced — what WAITIO_COLL_HIER=auto|0|1|paired|
 * segmented|pipeline sets; that variable is read once, at the first collective. FLAT: over
 * WaitIO only; HIER: each PB's MPI inside the PB, the PB heads over WaitIO; PAIRED (allreduce):
 * the PB's MPI allreduce, then same-rank processes of the PBs combine; SEGMENTED (allreduce):
 * reduce-scatter in each PB, same-rank processes combine the pieces, allgather in each PB;
 * PIPELINE (bcast): the heads' transfer in segments overlapping the PBs' broadcasts. A forced
 * path that an operation, group or size cannot take falls back to HIER where that is possible,
 * else FLAT. The choice applies to this process's next collectives: every process of the
 * universe must make the same one before the same collective. WAITIO_ERR_ARG for any other value. */
#define WAITIO_COLL_PATH_AUTO (-1)
#define WAITIO_COLL_PATH_FLAT 0
#define WAITIO_COLL_PATH_HIER 1
#define WAITIO_COLL_PATH_PAIRED 2
#define WAITIO_COLL_PATH_SEGMENTED 3
#define WAITIO_COLL_PATH_PIPELINE 4
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
/* The original's finalize: its one argument is an input (its coupler passes the literal 1000,
 * the value it also gives WAITIO_INIT as the timeout) that WaitIO neither reads nor writes; how
 * long finalize waits is WAITIO_FINALIZE_TIMEOUT. It has no ierr: a failure is printed to
 * stderr. WAITIO_FINALIZE_f is WAITIO_FINALIZE(ierr) of waitio_mpif.h and the module (external
 * symbol waitio_finalize_), which does return the status. */
WAITIO_API void waitio_finalize_f(const int *timeout);
WAITIO_API void WAITIO_FINALIZE_f(int *ierr);
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
/* The original's short lists (like waitio_mpi_gather/allgather); WAITIO_MPI_Gather_f and
 * WAITIO_MPI_Allgather_f take MPI's, and are what `CALL WAITIO_MPI_Gather(...)` reaches from
 * Fortran (external symbols waitio_mpi_gather_ / waitio_mpi_allgather_). */
WAITIO_API void waitio_mpi_gather_f(const void *sbuf, void *rbuf, const int *count,
                                    const int *datatype, const int *root, const int *comm,
                                    int *ierr);
WAITIO_API void waitio_mpi_allgather_f(const void *sbuf, void *rbuf, const int *count,
                                       const int *datatype, const int *comm, int *ierr);
WAITIO_API void WAITIO_MPI_Gather_f(const void *sbuf, const int *scount, const int *stype,
                                    void *rbuf, const int *rcount, const int *rtype,
                                    const int *root, const int *comm, int *ierr);
WAITIO_API void WAITIO_MPI_Allgather_f(const void *sbuf, const int *scount, const int *stype,
                                       void *rbuf, const int *rcount, const int *rtype,
                                       const int *comm, int *ierr);
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
/* WAITIO_MPI_Gather, WAITIO_MPI_Allgather: functions of their own (MPI's lists; see above) */
#define WAITIO_MPI_Gatherv waitio_mpi_gatherv
#define WAITIO_MPI_Scatter waitio_mpi_scatter
#define WAITIO_MPI_Scatterv waitio_mpi_scatterv
#define WAITIO_MPI_Alltoall waitio_mpi_alltoall
#define WAITIO_CREATE_UNIVERSE waitio_create_universe
#define WAITIO_CREATE_UNIVERSE_PBHEAD waitio_create_universe_pbhead

/* ---- derived datatypes, user-defined operations, v-collectives, scans (docs/mpi-layer.md,
 * "Derived datatypes and user operations") ----
 * Derived datatypes get handles from WAITIO_MPI_FIRST_DERIVED up (at most
 * WAITIO_MPI_MAX_DERIVED_TYPES alive at once), user operations from WAITIO_MPI_FIRST_USER_OP up
 * (at most WAITIO_MPI_MAX_USER_OPS). Every point-to-point and collective call takes a committed
 * derived type wherever it takes a datatype; an uncommitted, freed or unknown handle is
 * WAITIO_ERR_ARG. A request of a non-contiguous type must complete through waitio_mpi_wait,
 * _test, _waitall (or the layer's other waits), which unpack the data and free the packing
 * buffer, not through waitio_wait. */
typedef ptrdiff_t WAITIO_MPI_Aint;
typedef void WAITIO_MPI_User_function(void *invec, void *inoutvec, int *len,
                                      WAITIO_MPI_Datatype *datatype);
#define WAITIO_MPI_DATATYPE_NULL 0
#define WAITIO_MPI_OP_NULL 0
#define WAITIO_MPI_FIRST_DERIVED 65536
#define WAITIO_MPI_MAX_DERIVED_TYPES 4096
#define WAITIO_MPI_FIRST_USER_OP 256
#define WAITIO_MPI_MAX_USER_OPS 256

WAITIO_API int waitio_mpi_type_contiguous(int count, WAITIO_MPI_Datatype oldtype,
                                          WAITIO_MPI_Datatype *newtype);
WAITIO_API int waitio_mpi_type_vector(int count, int blocklength, int stride,
                                      WAITIO_MPI_Datatype oldtype, WAITIO_MPI_Datatype *newtype);
WAITIO_API int waitio_mpi_type_create_hvector(int count, int blocklength, WAITIO_MPI_Aint stride,
                                              WAITIO_MPI_Datatype oldtype,
                                              WAITIO_MPI_Datatype *newtype);
WAITIO_API int waitio_mpi_type_indexed(int count, const int blocklengths[], const int displs[],
                                       WAITIO_MPI_Datatype oldtype, WAITIO_MPI_Datatype *newtype);
WAITIO_API int waitio_mpi_type_create_struct(int count, const int blocklengths[],
                                             const WAITIO_MPI_Aint displs[],
                                             const WAITIO_MPI_Datatype types[],
                                             WAITIO_MPI_Datatype *newtype);
WAITIO_API int waitio_mpi_type_create_resized(WAITIO_MPI_Datatype oldtype, WAITIO_MPI_Aint lb,
                                              WAITIO_MPI_Aint extent,
                                              WAITIO_MPI_Datatype *newtype);
WAITIO_API int waitio_mpi_type_commit(WAITIO_MPI_Datatype *datatype);
WAITIO_API int waitio_mpi_type_free(WAITIO_MPI_Datatype *datatype);
WAITIO_API int waitio_mpi_type_get_extent(WAITIO_MPI_Datatype datatype, WAITIO_MPI_Aint *lb,
                                          WAITIO_MPI_Aint *extent);
WAITIO_API int waitio_mpi_op_create(WAITIO_MPI_User_function *function, int commute,
                                    WAITIO_MPI_Op *op);
WAITIO_API int waitio_mpi_op_free(WAITIO_MPI_Op *op);

WAITIO_API int waitio_mpi_allgatherv(const void *sendbuf, int sendcount,
                                     WAITIO_MPI_Datatype sendtype, void *recvbuf,
                                     const int recvcounts[], const int displs[],
                                     WAITIO_MPI_Datatype recvtype, WAITIO_MPI_Comm comm);
WAITIO_API int waitio_mpi_alltoallv(const void *sendbuf, const int sendcounts[],
                                    const int sdispls[], WAITIO_MPI_Datatype sendtype,
                                    void *recvbuf, const int recvcounts[], const int rdispls[],
                                    WAITIO_MPI_Datatype recvtype, WAITIO_MPI_Comm comm);
WAITIO_API int waitio_mpi_reduce_scatter(const void *sendbuf, void *recvbuf,
                                         const int recvcounts[], WAITIO_MPI_Datatype datatype,
                                         WAITIO_MPI_Op op, WAITIO_MPI_Comm comm);
WAITIO_API int waitio_mpi_reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                               WAITIO_MPI_Datatype datatype, WAITIO_MPI_Op op,
                                               WAITIO_MPI_Comm comm);
WAITIO_API int waitio_mpi_scan(const void *sendbuf, void *recvbuf, int count,
                               WAITIO_MPI_Datatype datatype, WAITIO_MPI_Op op,
                               WAITIO_MPI_Comm comm);
WAITIO_API int waitio_mpi_exscan(const void *sendbuf, void *recvbuf, int count,
                                 WAITIO_MPI_Datatype datatype, WAITIO_MPI_Op op,
                                 WAITIO_MPI_Comm comm);

/* Their Fortran-callable forms (src/mpi/fortran_dtype.c; every argument by reference, Aint
 * arguments INTEGER(KIND=WAITIO_MPI_ADDRESS_KIND), commute a default LOGICAL). */
WAITIO_API void waitio_mpi_type_size_f(const int *datatype, int *size, int *ierr);
WAITIO_API void waitio_mpi_type_contiguous_f(const int *count, const int *oldtype, int *newtype,
                                             int *ierr);
WAITIO_API void waitio_mpi_type_vector_f(const int *count, const int *blocklength,
                                         const int *stride, const int *oldtype, int *newtype,
                                         int *ierr);
WAITIO_API void waitio_mpi_type_create_hvector_f(const int *count, const int *blocklength,
                                                 const WAITIO_MPI_Aint *stride,
                                                 const int *oldtype, int *newtype, int *ierr);
WAITIO_API void waitio_mpi_type_indexed_f(const int *count, const int *blocklengths,
                                          const int *displs, const int *oldtype, int *newtype,
                                          int *ierr);
WAITIO_API void waitio_mpi_type_create_struct_f(const int *count, const int *blocklengths,
                                                const WAITIO_MPI_Aint *displs, const int *types,
                                                int *newtype, int *ierr);
WAITIO_API void waitio_mpi_type_create_resized_f(const int *oldtype, const WAITIO_MPI_Aint *lb,
                                                 const WAITIO_MPI_Aint *extent, int *newtype,
                                                 int *ierr);
WAITIO_API void waitio_mpi_type_commit_f(int *datatype, int *ierr);
WAITIO_API void waitio_mpi_type_free_f(int *datatype, int *ierr);
WAITIO_API void waitio_mpi_type_get_extent_f(const int *datatype, WAITIO_MPI_Aint *lb,
                                             WAITIO_MPI_Aint *extent, int *ierr);
WAITIO_API void waitio_mpi_op_create_f(WAITIO_MPI_User_function *function, const int *commute,
                                       int *op, int *ierr);
WAITIO_API void waitio_mpi_op_free_f(int *op, int *ierr);
WAITIO_API void waitio_mpi_allgatherv_f(const void *sbuf, const int *scount, const int *stype,
                                        void *rbuf, const int *rcounts, const int *displs,
                                        const int *rtype, const int *comm, int *ierr);
WAITIO_API void waitio_mpi_alltoallv_f(const void *sbuf, const int *scounts, const int *sdispls,
                                       const int *stype, void *rbuf, const int *rcounts,
                                       const int *rdispls, const int *rtype, const int *comm,
                                       int *ierr);
WAITIO_API void waitio_mpi_reduce_scatter_f(const void *sbuf, void *rbuf, const int *rcounts,
                                            const int *datatype, const int *op, const int *comm,
                                            int *ierr);
WAITIO_API void waitio_mpi_reduce_scatter_block_f(const void *sbuf, void *rbuf,
                                                  const int *rcount, const int *datatype,
                                                  const int *op, const int *comm, int *ierr);
WAITIO_API void waitio_mpi_scan_f(const void *sbuf, void *rbuf, const int *count,
                                  const int *datatype, const int *op, const int *comm, int *ierr);
WAITIO_API void waitio_mpi_exscan_f(const void *sbuf, void *rbuf, const int *count,
                                    const int *datatype, const int *op, const int *comm,
                                    int *ierr);

#define WAITIO_MPI_Type_contiguous waitio_mpi_type_contiguous
#define WAITIO_MPI_Type_vector waitio_mpi_type_vector
#define WAITIO_MPI_Type_create_hvector waitio_mpi_type_create_hvector
#define WAITIO_MPI_Type_indexed waitio_mpi_type_indexed
#define WAITIO_MPI_Type_create_struct waitio_mpi_type_create_struct
#define WAITIO_MPI_Type_create_resized waitio_mpi_type_create_resized
#define WAITIO_MPI_Type_commit waitio_mpi_type_commit
#define WAITIO_MPI_Type_free waitio_mpi_type_free
#define WAITIO_MPI_Type_get_extent waitio_mpi_type_get_extent
#define WAITIO_MPI_Op_create waitio_mpi_op_create
#define WAITIO_MPI_Op_free waitio_mpi_op_free
#define WAITIO_MPI_Allgatherv waitio_mpi_allgatherv
#define WAITIO_MPI_Alltoallv waitio_mpi_alltoallv
#define WAITIO_MPI_Reduce_scatter waitio_mpi_reduce_scatter
#define WAITIO_MPI_Reduce_scatter_block waitio_mpi_reduce_scatter_block
#define WAITIO_MPI_Scan waitio_mpi_scan
#define WAITIO_MPI_Exscan waitio_mpi_exscan

/* ---- Sendrecv, more completions, probes, communicators and groups, non-blocking collectives
 * (docs/mpi-layer.md, "Communicators, probes, completions"; src/mpi/p2p_ext.c, completion.c,
 * comm.c, icoll.c) ----
 * Communicators made by split, dup and create_group are WaitIO groups like the universe (ids
 * of the library's range, agreed among their members); collectives on them take the
 * hierarchical path through each PB's MPI when every member PB has an adapter, like on the
 * universe. Groups (WAITIO_MPI_Group) are ordered sets of processes, independent of
 * communicators. The requests of Ibcast, Iallreduce and Ibarrier complete through the layer's
 * waits and tests (waitio_mpi_wait, _test, _waitall, _waitany, ...), not waitio_wait; their
 * status has source and tag WAITIO_MPI_ANY_SOURCE / _ANY_TAG and count 0. */
typedef struct wio_mpi_group *WAITIO_MPI_Group;
#define WAITIO_MPI_GROUP_NULL ((WAITIO_MPI_Group)0)

WAITIO_API int waitio_mpi_sendrecv(const void *sendbuf, int sendcount,
                                   WAITIO_MPI_Datatype sendtype, int dest, int sendtag,
                                   void *recvbuf, int recvcount, WAITIO_MPI_Datatype recvtype,
                                   int source, int recvtag, WAITIO_MPI_Comm comm, int *status);
WAITIO_API int waitio_mpi_sendrecv_replace(void *buf, int count, WAITIO_MPI_Datatype datatype,
                                           int dest, int sendtag, int source, int recvtag,
                                           WAITIO_MPI_Comm comm, int *status);
WAITIO_API int waitio_mpi_probe(int source, int tag, WAITIO_MPI_Comm comm, int *status);
WAITIO_API int waitio_mpi_iprobe(int source, int tag, WAITIO_MPI_Comm comm, int *flag,
                                 int *status);
WAITIO_API int waitio_mpi_get_count(const int *status, WAITIO_MPI_Datatype datatype, int *count);
WAITIO_API int waitio_mpi_get_elements(const int *status, WAITIO_MPI_Datatype datatype,
                                       int *count);

WAITIO_API int waitio_mpi_waitany(int count, WAITIO_MPI_Request array_of_requests[], int *index,
                                  int *status);
WAITIO_API int waitio_mpi_waitsome(int incount, WAITIO_MPI_Request array_of_requests[],
                                   int *outcount, int array_of_indices[],
                                   int *array_of_statuses);
WAITIO_API int waitio_mpi_testany(int count, WAITIO_MPI_Request array_of_requests[], int *index,
                                  int *flag, int *status);
WAITIO_API int waitio_mpi_testall(int count, WAITIO_MPI_Request array_of_requests[], int *flag,
                                  int *array_of_statuses);
WAITIO_API int waitio_mpi_testsome(int incount, WAITIO_MPI_Request array_of_requests[],
                                   int *outcount, int array_of_indices[],
                                   int *array_of_statuses);

WAITIO_API int waitio_mpi_comm_split(WAITIO_MPI_Comm comm, int color, int key,
                                     WAITIO_MPI_Comm *newcomm);
WAITIO_API int waitio_mpi_comm_dup(WAITIO_MPI_Comm comm, WAITIO_MPI_Comm *newcomm);
WAITIO_API int waitio_mpi_comm_create_group(WAITIO_MPI_Comm comm, WAITIO_MPI_Group group, int tag,
                                            WAITIO_MPI_Comm *newcomm);
WAITIO_API int waitio_mpi_comm_free(WAITIO_MPI_Comm *comm);
WAITIO_API int waitio_mpi_comm_group(WAITIO_MPI_Comm comm, WAITIO_MPI_Group *group);
WAITIO_API int waitio_mpi_group_incl(WAITIO_MPI_Group group, int n, const int ranks[],
                                     WAITIO_MPI_Group *newgroup);
WAITIO_API int waitio_mpi_group_free(WAITIO_MPI_Group *group);
WAITIO_API int waitio_mpi_group_size(WAITIO_MPI_Group group, int *size);
WAITIO_API int waitio_mpi_group_rank(WAITIO_MPI_Group group, int *rank);

WAITIO_API int waitio_mpi_ibcast(void *buffer, int count, WAITIO_MPI_Datatype datatype, int root,
                                 WAITIO_MPI_Comm comm, WAITIO_MPI_Request *request);
WAITIO_API int waitio_mpi_iallreduce(const void *sendbuf, void *recvbuf, int count,
                                     WAITIO_MPI_Datatype datatype, WAITIO_MPI_Op op,
                                     WAITIO_MPI_Comm comm, WAITIO_MPI_Request *request);
WAITIO_API int waitio_mpi_ibarrier(WAITIO_MPI_Comm comm, WAITIO_MPI_Request *request);

/* Their Fortran-callable forms (src/mpi/fortran_ext.c): indices are 1-based as in MPI's
 * Fortran binding (WAITIO_MPI_UNDEFINED stays -1), flags are default LOGICALs, groups are
 * default INTEGER handles like communicators, comm_free and group_free set theirs to 0. */
WAITIO_API void waitio_mpi_sendrecv_f(const void *sbuf, const int *scount, const int *stype,
                                      const int *dest, const int *stag, void *rbuf,
                                      const int *rcount, const int *rtype, const int *source,
                                      const int *rtag, const int *comm, int *status, int *ierr);
WAITIO_API void waitio_mpi_sendrecv_replace_f(void *buf, const int *count, const int *datatype,
                                              const int *dest, const int *stag,
                                              const int *source, const int *rtag,
                                              const int *comm, int *status, int *ierr);
WAITIO_API void waitio_mpi_probe_f(const int *source, const int *tag, const int *comm,
                                   int *status, int *ierr);
WAITIO_API void waitio_mpi_iprobe_f(const int *source, const int *tag, const int *comm,
                                    int *flag, int *status, int *ierr);
WAITIO_API void waitio_mpi_get_count_f(const int *status, const int *datatype, int *count,
                                       int *ierr);
WAITIO_API void waitio_mpi_get_elements_f(const int *status, const int *datatype, int *count,
                                          int *ierr);
WAITIO_API void waitio_mpi_test_f(int *req, int *flag, int *status, int *ierr);
WAITIO_API void waitio_mpi_waitany_f(const int *count, int *reqs, int *index, int *status,
                                     int *ierr);
WAITIO_API void waitio_mpi_waitsome_f(const int *incount, int *reqs, int *outcount,
                                      int *indices, int *statuses, int *ierr);
WAITIO_API void waitio_mpi_testany_f(const int *count, int *reqs, int *index, int *flag,
                                     int *status, int *ierr);
WAITIO_API void waitio_mpi_testall_f(const int *count, int *reqs, int *flag, int *statuses,
                                     int *ierr);
WAITIO_API void waitio_mpi_testsome_f(const int *incount, int *reqs, int *outcount,
                                      int *indices, int *statuses, int *ierr);
WAITIO_API void waitio_mpi_comm_split_f(const int *comm, const int *color, const int *key,
                                        int *newcomm, int *ierr);
WAITIO_API void waitio_mpi_comm_dup_f(const int *comm, int *newcomm, int *ierr);
WAITIO_API void waitio_mpi_comm_create_group_f(const int *comm, const int *group, const int *tag,
                                               int *newcomm, int *ierr);
WAITIO_API void waitio_mpi_comm_free_f(int *comm, int *ierr);
WAITIO_API void waitio_mpi_comm_group_f(const int *comm, int *group, int *ierr);
WAITIO_API void waitio_mpi_group_incl_f(const int *group, const int *n, const int *ranks,
                                        int *newgroup, int *ierr);
WAITIO_API void waitio_mpi_group_free_f(int *group, int *ierr);
WAITIO_API void waitio_mpi_group_size_f(const int *group, int *size, int *ierr);
WAITIO_API void waitio_mpi_group_rank_f(const int *group, int *rank, int *ierr);
WAITIO_API void waitio_mpi_ibcast_f(void *buf, const int *count, const int *datatype,
                                    const int *root, const int *comm, int *req, int *ierr);
WAITIO_API void waitio_mpi_iallreduce_f(const void *sbuf, void *rbuf, const int *count,
                                        const int *datatype, const int *op, const int *comm,
                                        int *req, int *ierr);
WAITIO_API void waitio_mpi_ibarrier_f(const int *comm, int *req, int *ierr);

#define WAITIO_MPI_Sendrecv waitio_mpi_sendrecv
#define WAITIO_MPI_Sendrecv_replace waitio_mpi_sendrecv_replace
#define WAITIO_MPI_Probe waitio_mpi_probe
#define WAITIO_MPI_Iprobe waitio_mpi_iprobe
#define WAITIO_MPI_Get_count waitio_mpi_get_count
#define WAITIO_MPI_Get_elements waitio_mpi_get_elements
#define WAITIO_MPI_Waitany waitio_mpi_waitany
#define WAITIO_MPI_Waitsome waitio_mpi_waitsome
#define WAITIO_MPI_Testany waitio_mpi_testany
#define WAITIO_MPI_Testall waitio_mpi_testall
#define WAITIO_MPI_Testsome waitio_mpi_testsome
#define WAITIO_MPI_Comm_split waitio_mpi_comm_split
#define WAITIO_MPI_Comm_dup waitio_mpi_comm_dup
#define WAITIO_MPI_Comm_create_group waitio_mpi_comm_create_group
#define WAITIO_MPI_Comm_free waitio_mpi_comm_free
#define WAITIO_MPI_Comm_group waitio_mpi_comm_group
#define WAITIO_MPI_Group_incl waitio_mpi_group_incl
#define WAITIO_MPI_Group_free waitio_mpi_group_free
#define WAITIO_MPI_Group_size waitio_mpi_group_size
#define WAITIO_MPI_Group_rank waitio_mpi_group_rank
#define WAITIO_MPI_Ibcast waitio_mpi_ibcast
#define WAITIO_MPI_Iallreduce waitio_mpi_iallreduce
#define WAITIO_MPI_Ibarrier waitio_mpi_ibarrier

#ifdef __cplusplus
}
#endif
#endif /* WAITIO_MPI_H */
