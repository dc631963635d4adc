/*
 * fortran_cdesc.c — the buffer-taking routines of the Fortran module `waitio` (waitio_module.f90).
 * Its explicit interfaces declare buffers TYPE(*), DIMENSION(..) with BIND(C), so any type and
 * rank (a scalar too) passes without -fallow-argument-mismatch, and the compiler hands over a
 * CFI descriptor (ISO_Fortran_binding.h). Here the descriptor becomes an address: the array must
 * be contiguous (an array section with a stride is refused with WAITIO_ERR_ARG, never silently
 * copied: a nonblocking operation would outlive the copy), and where the count alone decides how
 * many bytes are read or written, the array must hold them. Then the `_f` entry point of
 * fortran.c does the work: one implementation per operation.
 *
 * The descriptor's layout is the Fortran compiler's: this file is compiled with the header of
 * the compiler the module is built for (gfortran's; see src/mpi/fortran_module.cmake). Without
 * that header it compiles to nothing, and no module is built.
 */
#if defined(__has_include)
#if __has_include(<ISO_Fortran_binding.h>)
#define WIO_HAVE_CFI 1
#endif
#endif

#ifdef WIO_HAVE_CFI
#define WIO_LOG_SUBSYS WIO_SUB_MPI /* this file logs as "mpi" (WAITIO_LOG=mpi=LEVEL) */
#include <ISO_Fortran_binding.h>
#include "mpi/mpi_internal.h"
#include "mpi/dtype.h"

/* The elements follow each other in memory. (CFI_is_contiguous lives in the Fortran runtime
 * library, which libwaitio does not link: the strides tell.) */
static int cdesc_contiguous(const CFI_cdesc_t *d)
{
    CFI_index_t stride = (CFI_index_t)d->elem_len;
    for (CFI_rank_t r = 0; r < d->rank; r++) {
        if (d->dim[r].extent == 0)
            return 1; /* no elements */
        if (d->dim[r].extent > 1 && d->dim[r].sm != stride)
            return 0;
        if (d->dim[r].extent < 0) /* assumed-size: its last dimension, contiguous */
            return 1;
        stride *= d->dim[r].extent;
    }
    return 1;
}

/* *addr = the buffer's address once it is contiguous and (count >= 0) holds count elements of
 * dtype; count < 0: the size is not checked (buffers significant only at a root, v-variants). */
static int cdesc_buffer(const CFI_cdesc_t *d, int count, int dtype, const char *what, void **addr)
{
    if (!d)
        return wio_fail(WAITIO_ERR_ARG, "%s: no array descriptor", what);
    *addr = (void *)wio_fortran_buf(d->base_addr); /* the module's WAITIO_MPI_IN_PLACE */
    if (*addr == WAITIO_MPI_IN_PLACE)
        return 0;
    if (!cdesc_contiguous(d))
        return wio_fail(WAITIO_ERR_ARG, "%s is not contiguous (an array section with a stride?): "
                        "pass a contiguous array, or copy the section into one", what);
    *addr = d->base_addr;
    if (count < 0)
        return 0;
    size_t need = 0; /* up to the last byte the elements touch (a derived type's holes too) */
    int rc = wio_mpi_span_bytes(count, dtype, &need);
    if (rc)
        return rc;
    size_t have = d->elem_len;
    for (CFI_rank_t r = 0; r < d->rank; r++) {
        if (d->dim[r].extent < 0) /* assumed-size: the size is unknown (and it is contiguous) */
            return 0;
        have *= (size_t)d->dim[r].extent;
    }
    if (need > have)
        return wio_fail(WAITIO_ERR_ARG, "%s holds %zu bytes but count %d of datatype %d needs %zu",
                        what, have, count, dtype, need);
    return 0;
}

#define BUF(d, count, dtype, what, p) \
    void *p = NULL;                    \
    if ((*ierr = cdesc_buffer(d, count, dtype, what, &p)) != 0) \
        return

WAITIO_API void waitio_mpi_isend_cdesc(const CFI_cdesc_t *buf, const int *count, const int *dtype,
                                       const int *dest, const int *tag, const int *comm, int *req,
                                       int *ierr)
{
    BUF(buf, *count, *dtype, "the send buffer", p);
    waitio_mpi_isend_f(p, count, dtype, dest, tag, comm, req, ierr);
}

WAITIO_API void waitio_mpi_irecv_cdesc(const CFI_cdesc_t *buf, const int *count, const int *dtype,
                                       const int *source, const int *tag, const int *comm,
                                       int *req, int *ierr)
{
    BUF(buf, *count, *dtype, "the receive buffer", p);
    waitio_mpi_irecv_f(p, count, dtype, source, tag, comm, req, ierr);
}

WAITIO_API void waitio_mpi_send_cdesc(const CFI_cdesc_t *buf, const int *count, const int *dtype,
                                      const int *dest, const int *tag, const int *comm, int *ierr)
{
    BUF(buf, *count, *dtype, "the send buffer", p);
    waitio_mpi_send_f(p, count, dtype, dest, tag, comm, ierr);
}

WAITIO_API void waitio_mpi_recv_cdesc(const CFI_cdesc_t *buf, const int *count, const int *dtype,
                                      const int *source, const int *tag, const int *comm,
                                      int *status, int *ierr)
{
    BUF(buf, *count, *dtype, "the receive buffer", p);
    waitio_mpi_recv_f(p, count, dtype, source, tag, comm, status, ierr);
}

WAITIO_API void waitio_mpi_bcast_cdesc(const CFI_cdesc_t *buf, const int *count, const int *dtype,
                                       const int *root, const int *comm, int *ierr)
{
    BUF(buf, *count, *dtype, "the broadcast buffer", p);
    waitio_mpi_bcast_f(p, count, dtype, root, comm, ierr);
}

/* reduce: the receive buffer matters at the root only (elsewhere any dummy may be passed) */
WAITIO_API void waitio_mpi_reduce_cdesc(const CFI_cdesc_t *sbuf, const CFI_cdesc_t *rbuf,
                                        const int *count, const int *dtype, const int *op,
                                        const int *root, const int *comm, int *ierr)
{
    BUF(sbuf, *count, *dtype, "the send buffer", s);
    BUF(rbuf, -1, *dtype, "the receive buffer", r);
    waitio_mpi_reduce_f(s, r, count, dtype, op, root, comm, ierr);
}

WAITIO_API void waitio_mpi_allreduce_cdesc(const CFI_cdesc_t *sbuf, const CFI_cdesc_t *rbuf,
                                           const int *count, const int *dtype, const int *op,
                                           const int *comm, int *ierr)
{
    BUF(sbuf, *count, *dtype, "the send buffer", s);
    BUF(rbuf, *count, *dtype, "the receive buffer", r);
    waitio_mpi_allreduce_f(s, r, count, dtype, op, comm, ierr);
}

WAITIO_API void waitio_mpi_gather_cdesc(const CFI_cdesc_t *sbuf, const int *scount, const int *stype,
                                        const CFI_cdesc_t *rbuf, const int *rcount,
                                        const int *rtype, const int *root, const int *comm,
                                        int *ierr)
{
    BUF(sbuf, *scount, *stype, "the send buffer", s);
    BUF(rbuf, -1, *rtype, "the receive buffer", r);
    WAITIO_MPI_Gather_f(s, scount, stype, r, rcount, rtype, root, comm, ierr);
}

/* the original's short lists: the module's waitio_mpi_gather_f and waitio_mpi_allgather_f */
WAITIO_API void waitio_mpi_gather_f_cdesc(const CFI_cdesc_t *sbuf, const CFI_cdesc_t *rbuf,
                                          const int *count, const int *dtype, const int *root,
                                          const int *comm, int *ierr)
{
    BUF(sbuf, *count, *dtype, "the send buffer", s);
    BUF(rbuf, -1, *dtype, "the receive buffer", r);
    waitio_mpi_gather_f(s, r, count, dtype, root, comm, ierr);
}

WAITIO_API void waitio_mpi_allgather_f_cdesc(const CFI_cdesc_t *sbuf, const CFI_cdesc_t *rbuf,
                                             const int *count, const int *dtype, const int *comm,
                                             int *ierr)
{
    BUF(sbuf, *count, *dtype, "the send buffer", s);
    BUF(rbuf, -1, *dtype, "the receive buffer", r);
    waitio_mpi_allgather_f(s, r, count, dtype, comm, ierr);
}

WAITIO_API void waitio_mpi_gatherv_cdesc(const CFI_cdesc_t *sbuf, const int *scount,
                                         const int *stype, const CFI_cdesc_t *rbuf,
                                         const int *rcounts, const int *displs, const int *rtype,
                                         const int *root, const int *comm, int *ierr)
{
    BUF(sbuf, *scount, *stype, "the send buffer", s);
    BUF(rbuf, -1, *rtype, "the receive buffer", r);
    waitio_mpi_gatherv_f(s, scount, stype, r, rcounts, displs, rtype, root, comm, ierr);
}

WAITIO_API void waitio_mpi_scatter_cdesc(const CFI_cdesc_t *sbuf, const int *scount,
                                         const int *stype, const CFI_cdesc_t *rbuf,
                                         const int *rcount, const int *rtype, const int *root,
                                         const int *comm, int *ierr)
{
    BUF(sbuf, -1, *stype, "the send buffer", s);
    BUF(rbuf, *rcount, *rtype, "the receive buffer", r);
    waitio_mpi_scatter_f(s, scount, stype, r, rcount, rtype, root, comm, ierr);
}

WAITIO_API void waitio_mpi_scatterv_cdesc(const CFI_cdesc_t *sbuf, const int *scounts,
                                          const int *displs, const int *stype,
                                          const CFI_cdesc_t *rbuf, const int *rcount,
                                          const int *rtype, const int *root, const int *comm,
                                          int *ierr)
{
    BUF(sbuf, -1, *stype, "the send buffer", s);
    BUF(rbuf, *rcount, *rtype, "the receive buffer", r);
    waitio_mpi_scatterv_f(s, scounts, displs, stype, r, rcount, rtype, root, comm, ierr);
}

WAITIO_API void waitio_mpi_allgather_cdesc(const CFI_cdesc_t *sbuf, const int *scount,
                                           const int *stype, const CFI_cdesc_t *rbuf,
                                           const int *rcount, const int *rtype, const int *comm,
                                           int *ierr)
{
    BUF(sbuf, *scount, *stype, "the send buffer", s);
    BUF(rbuf, -1, *rtype, "the receive buffer", r);
    WAITIO_MPI_Allgather_f(s, scount, stype, r, rcount, rtype, comm, ierr);
}

WAITIO_API void waitio_mpi_alltoall_cdesc(const CFI_cdesc_t *sbuf, const int *scount,
                                          const int *stype, const CFI_cdesc_t *rbuf,
                                          const int *rcount, const int *rtype, const int *comm,
                                          int *ierr)
{
    BUF(sbuf, -1, *stype, "the send buffer", s);
    BUF(rbuf, -1, *rtype, "the receive buffer", r);
    waitio_mpi_alltoall_f(s, scount, stype, r, rcount, rtype, comm, ierr);
}
/* ---- Sendrecv, Sendrecv_replace, Ibcast, Iallreduce (fortran_ext.c does the work) ---- */

WAITIO_API void waitio_mpi_sendrecv_cdesc(const CFI_cdesc_t *sbuf, const int *scount,
                                          const int *stype, const int *dest, const int *stag,
                                          const CFI_cdesc_t *rbuf, const int *rcount,
                                          const int *rtype, const int *source, const int *rtag,
                                          const int *comm, int *status, int *ierr)
{
    BUF(sbuf, -1, *stype, "the send buffer", s);
    BUF(rbuf, -1, *rtype, "the receive buffer", r);
    waitio_mpi_sendrecv_f(s, scount, stype, dest, stag, r, rcount, rtype, source, rtag, comm,
                          status, ierr);
}

WAITIO_API void waitio_mpi_sendrecv_replace_cdesc(const CFI_cdesc_t *buf, const int *count,
                                                  const int *dtype, const int *dest,
                                                  const int *stag, const int *source,
                                                  const int *rtag, const int *comm, int *status,
                                                  int *ierr)
{
    BUF(buf, -1, *dtype, "the buffer", p);
    waitio_mpi_sendrecv_replace_f(p, count, dtype, dest, stag, source, rtag, comm, status, ierr);
}

WAITIO_API void waitio_mpi_ibcast_cdesc(const CFI_cdesc_t *buf, const int *count,
                                        const int *dtype, const int *root, const int *comm,
                                        int *req, int *ierr)
{
    BUF(buf, -1, *dtype, "the broadcast buffer", p);
    waitio_mpi_ibcast_f(p, count, dtype, root, comm, req, ierr);
}

WAITIO_API void waitio_mpi_iallreduce_cdesc(const CFI_cdesc_t *sbuf, const CFI_cdesc_t *rbuf,
                                            const int *count, const int *dtype, const int *op,
                                            const int *comm, int *req, int *ierr)
{
    BUF(sbuf, -1, *dtype, "the send buffer", s);
    BUF(rbuf, -1, *dtype, "the receive buffer", r);
    waitio_mpi_iallreduce_f(s, r, count, dtype, op, comm, req, ierr);
}

/* ---- v-collectives, reduce_scatter, scans (fortran_dtype.c's _f forms) ---- */

WAITIO_API void waitio_mpi_allgatherv_cdesc(const CFI_cdesc_t *sbuf, const int *scount,
                                            const int *stype, const CFI_cdesc_t *rbuf,
                                            const int *rcounts, const int *displs,
                                            const int *rtype, const int *comm, int *ierr)
{
    BUF(sbuf, *scount, *stype, "the send buffer", s);
    BUF(rbuf, -1, *rtype, "the receive buffer", r);
    waitio_mpi_allgatherv_f(s, scount, stype, r, rcounts, displs, rtype, comm, ierr);
}

WAITIO_API void waitio_mpi_alltoallv_cdesc(const CFI_cdesc_t *sbuf, const int *scounts,
                                           const int *sdispls, const int *stype,
                                           const CFI_cdesc_t *rbuf, const int *rcounts,
                                           const int *rdispls, const int *rtype, const int *comm,
                                           int *ierr)
{
    BUF(sbuf, -1, *stype, "the send buffer", s);
    BUF(rbuf, -1, *rtype, "the receive buffer", r);
    waitio_mpi_alltoallv_f(s, scounts, sdispls, stype, r, rcounts, rdispls, rtype, comm, ierr);
}

WAITIO_API void waitio_mpi_reduce_scatter_cdesc(const CFI_cdesc_t *sbuf, const CFI_cdesc_t *rbuf,
                                                const int *rcounts, const int *dtype,
                                                const int *op, const int *comm, int *ierr)
{
    BUF(sbuf, -1, *dtype, "the send buffer", s);
    BUF(rbuf, -1, *dtype, "the receive buffer", r);
    waitio_mpi_reduce_scatter_f(s, r, rcounts, dtype, op, comm, ierr);
}

WAITIO_API void waitio_mpi_reduce_scatter_block_cdesc(const CFI_cdesc_t *sbuf,
                                                      const CFI_cdesc_t *rbuf, const int *rcount,
                                                      const int *dtype, const int *op,
                                                      const int *comm, int *ierr)
{
    BUF(sbuf, -1, *dtype, "the send buffer", s);
    BUF(rbuf, *rcount, *dtype, "the receive buffer", r);
    waitio_mpi_reduce_scatter_block_f(s, r, rcount, dtype, op, comm, ierr);
}

WAITIO_API void waitio_mpi_scan_cdesc(const CFI_cdesc_t *sbuf, const CFI_cdesc_t *rbuf,
                                      const int *count, const int *dtype, const int *op,
                                      const int *comm, int *ierr)
{
    BUF(sbuf, *count, *dtype, "the send buffer", s);
    BUF(rbuf, *count, *dtype, "the receive buffer", r);
    waitio_mpi_scan_f(s, r, count, dtype, op, comm, ierr);
}

WAITIO_API void waitio_mpi_exscan_cdesc(const CFI_cdesc_t *sbuf, const CFI_cdesc_t *rbuf,
                                        const int *count, const int *dtype, const int *op,
                                        const int *comm, int *ierr)
{
    BUF(sbuf, *count, *dtype, "the send buffer", s);
    BUF(rbuf, *count, *dtype, "the receive buffer", r);
    waitio_mpi_exscan_f(s, r, count, dtype, op, comm, ierr);
}
#endif /* WIO_HAVE_CFI */

typedef int wio_fortran_cdesc_nonempty; /* ISO C: a translation unit declares something */
