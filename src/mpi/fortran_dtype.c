/*
 * fortran_dtype.c — the Fortran-callable `_f` forms of the derived datatypes, user operations,
 * v-collectives and scans (waitio_mpi.h), in the pattern of fortran.c: every argument by
 * reference, communicators as Fortran handles, each function also exported as NAME_ (what
 * gfortran calls for `CALL NAME(...)`) and NAME_f_ (for `CALL NAME_f(...)`).
 *
 * WAITIO_MPI_IN_PLACE in Fortran is the module variable of that name (waitio_module.f90), bound
 * to waitio_mpi_fortran_in_place below: a buffer argument at its address means "in place".
 */
#include "mpi/dtype.h"
#include "mpi/mpi_internal.h"

#define WIO_FORTRAN_ALIASES(name)                                                               \
    WAITIO_API extern __typeof__(name##_f) name##_ __attribute__((alias(#name "_f")));       \
    WAITIO_API extern __typeof__(name##_f) name##_f_ __attribute__((alias(#name "_f")));

WAITIO_API int waitio_mpi_fortran_in_place;

const void *wio_fortran_buf(const void *p)
{
    return p == (const void *)&waitio_mpi_fortran_in_place ? WAITIO_MPI_IN_PLACE : p;
}

#define FBUF(p) ((void *)wio_fortran_buf(p))

void waitio_mpi_type_size_f(const int *datatype, int *size, int *ierr)
{
    *ierr = waitio_mpi_type_size(*datatype, size);
}
WIO_FORTRAN_ALIASES(waitio_mpi_type_size)

void waitio_mpi_type_contiguous_f(const int *count, const int *oldtype, int *newtype, int *ierr)
{
    *ierr = waitio_mpi_type_contiguous(*count, *oldtype, newtype);
}
WIO_FORTRAN_ALIASES(waitio_mpi_type_contiguous)

void waitio_mpi_type_vector_f(const int *count, const int *blocklength, const int *stride,
                              const int *oldtype, int *newtype, int *ierr)
{
    *ierr = waitio_mpi_type_vector(*count, *blocklength, *stride, *oldtype, newtype);
}
WIO_FORTRAN_ALIASES(waitio_mpi_type_vector)

void waitio_mpi_type_create_hvector_f(const int *count, const int *blocklength,
                                      const WAITIO_MPI_Aint *stride, const int *oldtype,
                                      int *newtype, int *ierr)
{
    *ierr = waitio_mpi_type_create_hvector(*count, *blocklength, *stride, *oldtype, newtype);
}
WIO_FORTRAN_ALIASES(waitio_mpi_type_create_hvector)

/* Fortran's displacements are the same numbers as C's (elements of oldtype from the start). */
void waitio_mpi_type_indexed_f(const int *count, const int *blocklengths, const int *displs,
                               const int *oldtype, int *newtype, int *ierr)
{
    *ierr = waitio_mpi_type_indexed(*count, blocklengths, displs, *oldtype, newtype);
}
WIO_FORTRAN_ALIASES(waitio_mpi_type_indexed)

void waitio_mpi_type_create_struct_f(const int *count, const int *blocklengths,
                                     const WAITIO_MPI_Aint *displs, const int *types,
                                     int *newtype, int *ierr)
{
    *ierr = waitio_mpi_type_create_struct(*count, blocklengths, displs, types, newtype);
}
WIO_FORTRAN_ALIASES(waitio_mpi_type_create_struct)

void waitio_mpi_type_create_resized_f(const int *oldtype, const WAITIO_MPI_Aint *lb,
                                      const WAITIO_MPI_Aint *extent, int *newtype, int *ierr)
{
    *ierr = waitio_mpi_type_create_resized(*oldtype, *lb, *extent, newtype);
}
WIO_FORTRAN_ALIASES(waitio_mpi_type_create_resized)

void waitio_mpi_type_commit_f(int *datatype, int *ierr) { *ierr = waitio_mpi_type_commit(datatype); }
WIO_FORTRAN_ALIASES(waitio_mpi_type_commit)

void waitio_mpi_type_free_f(int *datatype, int *ierr) { *ierr = waitio_mpi_type_free(datatype); }
WIO_FORTRAN_ALIASES(waitio_mpi_type_free)

void waitio_mpi_type_get_extent_f(const int *datatype, WAITIO_MPI_Aint *lb,
                                  WAITIO_MPI_Aint *extent, int *ierr)
{
    *ierr = waitio_mpi_type_get_extent(*datatype, lb, extent);
}
WIO_FORTRAN_ALIASES(waitio_mpi_type_get_extent)

/* A Fortran user function has MPI's Fortran interface — SUBROUTINE F(INVEC, INOUTVEC, LEN,
 * DATATYPE), every argument by reference — which is the C signature: it is called as is. commute
 * is a default LOGICAL: nonzero is .TRUE. with gfortran. */
void waitio_mpi_op_create_f(WAITIO_MPI_User_function *function, const int *commute, int *op,
                            int *ierr)
{
    *ierr = waitio_mpi_op_create(function, *commute != 0, op);
}
WIO_FORTRAN_ALIASES(waitio_mpi_op_create)

void waitio_mpi_op_free_f(int *op, int *ierr) { *ierr = waitio_mpi_op_free(op); }
WIO_FORTRAN_ALIASES(waitio_mpi_op_free)

void waitio_mpi_allgatherv_f(const void *sbuf, const int *scount, const int *stype, void *rbuf,
                             const int *rcounts, const int *displs, const int *rtype,
                             const int *comm, int *ierr)
{
    *ierr = waitio_mpi_allgatherv(FBUF(sbuf), *scount, *stype, rbuf, rcounts, displs, *rtype,
                                  wio_fortran_comm(comm));
}
WIO_FORTRAN_ALIASES(waitio_mpi_allgatherv)

void waitio_mpi_alltoallv_f(const void *sbuf, const int *scounts, const int *sdispls,
                            const int *stype, void *rbuf, const int *rcounts, const int *rdispls,
                            const int *rtype, const int *comm, int *ierr)
{
    *ierr = waitio_mpi_alltoallv(FBUF(sbuf), scounts, sdispls, *stype, rbuf, rcounts, rdispls,
                                 *rtype, wio_fortran_comm(comm));
}
WIO_FORTRAN_ALIASES(waitio_mpi_alltoallv)

void waitio_mpi_reduce_scatter_f(const void *sbuf, void *rbuf, const int *rcounts,
                                 const int *datatype, const int *op, const int *comm, int *ierr)
{
    *ierr = waitio_mpi_reduce_scatter(FBUF(sbuf), rbuf, rcounts, *datatype, *op,
                                      wio_fortran_comm(comm));
}
WIO_FORTRAN_ALIASES(waitio_mpi_reduce_scatter)

void waitio_mpi_reduce_scatter_block_f(const void *sbuf, void *rbuf, const int *rcount,
                                       const int *datatype, const int *op, const int *comm,
                                       int *ierr)
{
    *ierr = waitio_mpi_reduce_scatter_block(FBUF(sbuf), rbuf, *rcount, *datatype, *op,
                                            wio_fortran_comm(comm));
}
WIO_FORTRAN_ALIASES(waitio_mpi_reduce_scatter_block)

void waitio_mpi_scan_f(const void *sbuf, void *rbuf, const int *count, const int *datatype,
                       const int *op, const int *comm, int *ierr)
{
    *ierr = waitio_mpi_scan(FBUF(sbuf), rbuf, *count, *datatype, *op, wio_fortran_comm(comm));
}
WIO_FORTRAN_ALIASES(waitio_mpi_scan)

void waitio_mpi_exscan_f(const void *sbuf, void *rbuf, const int *count, const int *datatype,
                         const int *op, const int *comm, int *ierr)
{
    *ierr = waitio_mpi_exscan(FBUF(sbuf), rbuf, *count, *datatype, *op, wio_fortran_comm(comm));
}
WIO_FORTRAN_ALIASES(waitio_mpi_exscan)
