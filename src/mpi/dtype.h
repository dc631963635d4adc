/*
 * dtype.h — derived datatypes, user-defined reduction operations and the datatype-aware
 * collectives of the conversion layer (dtype.c, vcoll.c). Every datatype, predefined or derived,
 * is seen through one descriptor: its data as a list of byte blocks in typemap order. Data
 * crosses WaitIO packed (the blocks of each element back to back); a type whose data is one
 * dense block goes straight through without a copy.
 */
#ifndef WIO_MPI_DTYPE_H
#define WIO_MPI_DTYPE_H

#include <stddef.h>
#include "waitio_mpi.h"
#include "core/engine.h"

typedef struct wio_dt_block {
    ptrdiff_t off; /* from the element's start (may be negative) */
    size_t len;
} wio_dt_block;

typedef struct wio_mpi_dt {
    int handle;              /* the WAITIO_MPI_Datatype */
    int committed, freed, refs;
    size_t size;             /* bytes of data in one element */
    ptrdiff_t lb, extent;    /* MPI's lower bound and extent (the stride between elements) */
    ptrdiff_t true_lb, true_ub; /* the first and one past the last byte of data */
    int base;                /* the one predefined type its data is made of; 0 if mixed */
    size_t nbase;            /* elements of base in one element */
    int contig;              /* n elements are n * size dense bytes from buf + true_lb */
    int align;               /* the largest alignment of its predefined types (bytes) */
    int sticky;              /* its bounds were set by Type_create_resized (here or inside) */
    size_t nblocks;
    wio_dt_block *blocks;    /* one element's data in typemap order, adjacent blocks merged */
} wio_mpi_dt;

/* The descriptor of a committed datatype usable for communication (predefined, or derived and
 * committed); WAITIO_ERR_ARG naming the reason otherwise. */
int wio_mpi_dt_get(int dtype, const wio_mpi_dt **out);
int wio_mpi_dt_is_predefined(int dtype);
/* Keeps a descriptor alive past Type_free while an operation uses it. */
void wio_mpi_dt_ref(const wio_mpi_dt *t);
void wio_mpi_dt_unref(const wio_mpi_dt *t);
/* count elements at buf -> count * t->size packed bytes at out */
void wio_mpi_dt_pack(const wio_mpi_dt *t, const void *buf, size_t count, void *out);
/* at most `bytes` packed bytes (count elements' worth) from in -> their places at buf */
void wio_mpi_dt_unpack(const wio_mpi_dt *t, const void *in, size_t count, size_t bytes, void *buf);
/* Bytes from buf's start (lowest data byte at or after buf + lb) that count elements span:
 * *lo (<= 0 possible) and *hi, so that [buf + lo, buf + hi) holds every byte they touch. */
void wio_mpi_dt_span(const wio_mpi_dt *t, size_t count, ptrdiff_t *lo, ptrdiff_t *hi);
/* Bytes from buf up to the last byte count elements touch (what an array passed as buf must
 * hold); WAITIO_ERR_ARG for a bad count or datatype. */
int wio_mpi_span_bytes(int count, int dtype, size_t *bytes);

/* A buffer of count elements of a datatype as contiguous packed bytes: `data` is in the
 * caller's buffer when the type is contiguous, else in tmp (packed from it, or to be unpacked
 * into it). */
typedef struct wio_mpi_tbuf {
    const wio_mpi_dt *t;
    void *user;
    size_t count, bytes;
    void *data, *tmp;
} wio_mpi_tbuf;
/* For data that is read (pack = 1: packed from buf if needed) or written (pack = 0). */
int wio_mpi_tbuf_open(wio_mpi_tbuf *b, const void *buf, size_t count, int dtype, int pack);
/* Unpacks (if unpack and the data lives in tmp) and frees tmp. */
void wio_mpi_tbuf_close(wio_mpi_tbuf *b, int unpack);

/* ---- reduction operations ---- */

typedef struct wio_mpi_reducer {
    const wio_mpi_dt *t;
    int dtype;               /* the caller's handle, passed to a user function */
    int op;                  /* predefined op, or the user op's handle */
    WAITIO_MPI_User_function *fn; /* NULL: predefined op over t->base */
    int commute;
    size_t count, bytes;     /* elements of dtype, packed bytes */
} wio_mpi_reducer;
/* Checks dtype and op for a reduction of count elements: a predefined op needs a type made of
 * one predefined type on which MPI defines it (WAITIO_ERR_ARG otherwise). */
int wio_mpi_reducer_init(wio_mpi_reducer *r, int dtype, int op, size_t count);
/* inout = in op inout, both packed; `in` holds the lower ranks' operand. */
int wio_mpi_reducer_apply(const wio_mpi_reducer *r, const void *in, void *inout);

/* ---- requests with a packing buffer (non-contiguous point-to-point) ---- */

/* Records that req uses tmp (count elements of t, to be unpacked into user when recv). */
int wio_mpi_pending_add(waitio_req_t *req, void *tmp, void *user, size_t count,
                        const wio_mpi_dt *t, int recv);
/* Once req completed: unpacks a receive into the caller's buffer, frees the packing buffer.
 * Returns rc, or the first error of its own. A request without a record: nothing to do. Every
 * wait/test of the layer that sees a request complete calls it. */
int wio_mpi_req_done(waitio_req_t *req, int rc);

/* ---- vcoll.c: the layer's collectives on any datatype ---- */
int wio_mpi_v_bcast(wio_engine *e, wio_group *g, void *buf, int count, int dtype, int root);
int wio_mpi_v_reduce(wio_engine *e, wio_group *g, const void *sbuf, void *rbuf, int count,
                     int dtype, int op, int root);
int wio_mpi_v_allreduce(wio_engine *e, wio_group *g, const void *sbuf, void *rbuf, int count,
                        int dtype, int op);
/* gatherv/scatterv with scount/rcount; counts == NULL: every block holds `count` elements at
 * displacement i * count (gather, scatter). */
int wio_mpi_v_gatherv(wio_engine *e, wio_group *g, const void *sbuf, int scount, int stype,
                      void *rbuf, int rcount, const int *rcounts, const int *displs, int rtype,
                      int root);
int wio_mpi_v_scatterv(wio_engine *e, wio_group *g, const void *sbuf, int scount,
                       const int *scounts, const int *displs, int stype, void *rbuf, int rcount,
                       int rtype, int root);
int wio_mpi_v_allgatherv(wio_engine *e, wio_group *g, const void *sbuf, int scount, int stype,
                         void *rbuf, int rcount, const int *rcounts, const int *displs, int rtype);
int wio_mpi_v_alltoallv(wio_engine *e, wio_group *g, const void *sbuf, int scount,
                        const int *scounts, const int *sdispls, int stype, void *rbuf, int rcount,
                        const int *rcounts, const int *rdispls, int rtype);

/* fortran_dtype.c: a Fortran buffer argument at the module variable WAITIO_MPI_IN_PLACE means
 * WAITIO_MPI_IN_PLACE; any other address is itself. */
const void *wio_fortran_buf(const void *p);

#endif
