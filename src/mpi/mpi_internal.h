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

#endif
