/*
 * devstage.h — device (GPU) buffers in the conversion layer's collectives: one staging helper
 * for every collective of mpi.c, vcoll.c and icoll.c. A buffer argument that is device memory is
 * replaced by a host copy of the bytes its layout spans (a single block of count elements, or n
 * blocks at MPI displacements, as the v-variants lay them out); the collective runs on the host
 * copy (reductions run on the host), and the copy goes back to the device when the collective
 * completes. A host buffer costs one kind check (a branch when no CUDA driver is loaded).
 */
#ifndef WIO_MPI_DEVSTAGE_H
#define WIO_MPI_DEVSTAGE_H

#include <stddef.h>

/* What the collective does with the buffer: reads it (copied in at open), writes it (copied
 * back at close, when it succeeded). A written buffer whose layout leaves bytes untouched
 * (gaps between blocks, a derived type's holes) is copied in too, so that those bytes go back
 * as they were. */
enum { WIO_MPI_DEV_IN = 1, WIO_MPI_DEV_OUT = 2 };

typedef struct wio_mpi_dev {
    char *user;     /* the device buffer's first spanned byte; NULL: nothing staged */
    char *host;     /* its host copy */
    size_t bytes;   /* bytes spanned */
    int out;        /* copy back at close */
} wio_mpi_dev;

/* The layout of a buffer argument: n blocks of dtype; block i holds counts[i] elements at
 * displs[i] extents from buf (counts NULL: count elements at i * count extents). */
typedef struct wio_mpi_layout {
    int n, count;
    const int *counts, *displs;
    int dtype;
} wio_mpi_layout;

/* *use = buf, or — when buf is device memory — where in a host copy the collective finds what
 * buf holds. buf NULL, WAITIO_MPI_IN_PLACE, an empty layout or a bad one (a negative count, a
 * bad datatype: the collective then reports it) pass through. Fails (nothing staged) when the
 * span is not inside one device allocation, on a copy's failure or out of memory. */
int wio_mpi_dev_open(wio_mpi_dev *d, const void *buf, const wio_mpi_layout *l, int flags, void **use);
/* The same for one block of count elements. */
int wio_mpi_dev_open1(wio_mpi_dev *d, const void *buf, int count, int dtype, int flags, void **use);
/* Copies the host copy back (when it was opened WIO_MPI_DEV_OUT and rc is 0), frees it and
 * returns rc, or the copy's error. Idempotent: a closed (or never staged) one returns rc. */
int wio_mpi_dev_close(wio_mpi_dev *d, int rc);
/* The usual pair: a send buffer (read) and a receive buffer (rflags: written, and read too when
 * the operation is in place). A NULL layout passes that buffer through (a buffer that does not
 * count at this rank). On failure nothing stays staged. */
typedef struct wio_mpi_dev2 {
    wio_mpi_dev s, r;
} wio_mpi_dev2;
int wio_mpi_dev_open2(wio_mpi_dev2 *d, const void *sbuf, const wio_mpi_layout *sl, void **sb,
                      void *rbuf, const wio_mpi_layout *rl, int rflags, void **rb);
/* Closes both (the receive buffer copied back when rc is 0); returns rc or the first error. */
int wio_mpi_dev_close2(wio_mpi_dev2 *d, int rc);
/* The receive buffer's flags: written, and read when the send buffer is WAITIO_MPI_IN_PLACE. */
int wio_mpi_dev_out_flags(const void *sbuf);

/* Frees without copying back (the outcome is an error, or the result is not wanted). */
void wio_mpi_dev_drop(wio_mpi_dev *d);

#endif
