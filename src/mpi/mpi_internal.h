/* mpi_internal.h — shared by the conversion layer, its hierarchical collectives and Fortran. */
#ifndef WIO_MPI_INTERNAL_H
#define WIO_MPI_INTERNAL_H

#include "waitio_adapter.h"
#include "waitio_mpi.h"
#include "core/engine.h"

wio_engine *wio_mpi_engine(void);
int wio_mpi_bytes(int count, WAITIO_MPI_Datatype datatype, size_t *bytes);
int wio_mpi_tag(int tag, int allow_any, unsigned long *out);
void wio_mpi_fill_status(const waitio_req_t *r, int *status);

/* fortran.c: Fortran communicator handles (default INTEGERs, read and written as 4 bytes) */
int wio_fortran_comm_handle(waitio_group_t g, int *comm);
waitio_group_t wio_fortran_comm(const int *comm);


/* Collectives that go hierarchical on the universe when an adapter is registered
 * (WAITIO_COLL_HIER=0 forces the flat algorithms). */
int wio_mpi_hier_bcast(wio_engine *e, wio_group *g, void *buf, size_t count, int dtype, int root);
int wio_mpi_hier_reduce(wio_engine *e, wio_group *g, const void *sbuf, void *rbuf, size_t count,
                        int dtype, int op, int root);
int wio_mpi_hier_allreduce(wio_engine *e, wio_group *g, const void *sbuf, void *rbuf, size_t count,
                           int dtype, int op);
int wio_mpi_hier_barrier(wio_engine *e, wio_group *g);

/* icoll.c: the requests of Ibcast, Iallreduce and Ibarrier, which waitio_wait does not know;
 * the layer's waits and tests hand them here first. */
int wio_mpi_icoll_owns(const WAITIO_MPI_Request *request);
int wio_mpi_icoll_wait(WAITIO_MPI_Request *request, int *status);
int wio_mpi_icoll_test(WAITIO_MPI_Request *request, int *flag, int *status);
/* Where it stands, changing nothing: 1 complete, 0 pending (one look, no progress). */
int wio_mpi_icoll_done(WAITIO_MPI_Request *request);
/* Waitall's part: finishes the non-blocking collectives of the array (they become inactive,
 * their outcome in their status), so that the rest of waitall treats them as done. */
void wio_mpi_icoll_waitall(int count, WAITIO_MPI_Request *requests);

/* comm.c: the PB parts of communicators made by split/dup/create_group, for the hierarchical
 * path (hier.c): possible when every member's PB has an adapter that made the part's MPI
 * communicator; then the collective runs through comm_hier.c. */
int wio_mpi_comm_hier_possible(wio_engine *e, wio_group *g);
int wio_mpi_comm_hier_bcast(wio_engine *e, wio_group *g, void *buf, size_t count, int dtype,
                            int root);
int wio_mpi_comm_hier_reduce(wio_engine *e, wio_group *g, const void *sbuf, void *rbuf,
                             size_t count, int dtype, int op, int root);
int wio_mpi_comm_hier_allreduce(wio_engine *e, wio_group *g, const void *sbuf, void *rbuf,
                                size_t count, int dtype, int op);
int wio_mpi_comm_hier_barrier(wio_engine *e, wio_group *g);

#endif
