/*
 * devstage.c — host copies of device (GPU) buffers for the conversion layer's collectives
 * (devstage.h). The copy covers the bytes the buffer's layout spans, from its lowest to its
 * highest byte, in one device-to-host and one host-to-device copy whatever the number of
 * blocks; it comes from the pinned staging pool when one fits (the copy engines' speed), else
 * from ordinary memory.
 */
#define WIO_LOG_SUBSYS WIO_SUB_MPI /* this file logs as "mpi" (WAITIO_LOG=mpi=LEVEL) */
#include <limits.h>
#include <stdint.h>
#include "waitio_mpi.h"
#include "core/common.h"
#include "gpu/gpu.h"
#include "mpi/devstage.h"
#include "mpi/dtype.h"

static int block_count(const wio_mpi_layout *l, int i) { return l->counts ? l->counts[i] : l->count; }

static ptrdiff_t block_disp(const wio_mpi_layout *l, int i)
{
    return l->counts ? (ptrdiff_t)l->displs[i] : (ptrdiff_t)i * l->count;
}

/* The bytes [lo, hi) from buf that the layout's data touches, and whether its data fills them
 * (no gap for a written buffer to keep). 0 with hi == lo: nothing to stage, or a bad layout
 * that the collective itself reports. */
static void layout_span(const wio_mpi_layout *l, const wio_mpi_dt *t, ptrdiff_t *lo, ptrdiff_t *hi,
                        int *dense)
{
    *lo = *hi = 0;
    *dense = 0;
    if (l->n <= 0 || (l->counts && !l->displs))
        return;
    size_t data = 0;
    int any = 0;
    for (int i = 0; i < l->n; i++) {
        int c = block_count(l, i);
        if (c < 0) {
            *lo = *hi = 0;
            return;
        }
        if (!c || !t->size)
            continue;
        ptrdiff_t blo, bhi, at = block_disp(l, i) * t->extent;
        wio_mpi_dt_span(t, (size_t)c, &blo, &bhi);
        blo += at;
        bhi += at;
        *lo = any && *lo < blo ? *lo : blo;
        *hi = any && *hi > bhi ? *hi : bhi;
        any = 1;
        data += (size_t)c * t->size;
    }
    /* blocks of a written buffer do not overlap (MPI): their data fills the span iff it adds
     * up to it */
    *dense = any && t->contig && data == (size_t)(*hi - *lo);
}

int wio_mpi_dev_open(wio_mpi_dev *d, const void *buf, const wio_mpi_layout *l, int flags, void **use)
{
    *d = (wio_mpi_dev){0};
    *use = (void *)buf;
    if (!buf || buf == WAITIO_MPI_IN_PLACE)
        return 0;
    const wio_mpi_dt *t;
    if (wio_mpi_dt_get(l->dtype, &t) != 0)
        return 0; /* the collective checks the datatype again and fails saying why */
    ptrdiff_t lo, hi;
    int dense;
    layout_span(l, t, &lo, &hi, &dense);
    if (hi <= lo)
        return 0;
    char *first = (char *)buf + lo;
    size_t bytes = (size_t)(hi - lo);
    wio_mem_kind kind;
    int rc = wio_gpu_mem_kind(first, 1, &kind, NULL);
    if (rc || kind == WIO_MEM_HOST)
        return rc;
    if ((rc = wio_gpu_mem_kind(first, bytes, &kind, NULL)) != 0) /* the whole span, one allocation */
        return rc;
    void *host;
    if ((rc = wio_gpu_bounce_get(bytes, &host)) != 0)
        return rc;
    int in = (flags & WIO_MPI_DEV_IN) || ((flags & WIO_MPI_DEV_OUT) && !dense);
    if (in && (rc = wio_gpu_copy(host, first, bytes)) != 0) {
        wio_gpu_bounce_put(host, bytes);
        return rc;
    }
    *d = (wio_mpi_dev){.user = first, .host = host, .bytes = bytes, .out = !!(flags & WIO_MPI_DEV_OUT)};
    *use = (char *)host - lo;
    return 0;
}

int wio_mpi_dev_open1(wio_mpi_dev *d, const void *buf, int count, int dtype, int flags, void **use)
{
    wio_mpi_layout l = {.n = 1, .count = count, .dtype = dtype};
    return wio_mpi_dev_open(d, buf, &l, flags, use);
}

void wio_mpi_dev_drop(wio_mpi_dev *d)
{
    if (d->host)
        wio_gpu_bounce_put(d->host, d->bytes);
    *d = (wio_mpi_dev){0};
}

int wio_mpi_dev_close(wio_mpi_dev *d, int rc)
{
    if (!d->host)
        return rc;
    if (!rc && d->out)
        rc = wio_gpu_copy(d->user, d->host, d->bytes);
    wio_mpi_dev_drop(d);
    return rc;
}

int wio_mpi_dev_open2(wio_mpi_dev2 *d, const void *sbuf, const wio_mpi_layout *sl, void **sb,
                      void *rbuf, const wio_mpi_layout *rl, int rflags, void **rb)
{
    *d = (wio_mpi_dev2){0};
    *sb = (void *)sbuf;
    *rb = rbuf;
    int rc = sl ? wio_mpi_dev_open(&d->s, sbuf, sl, WIO_MPI_DEV_IN, sb) : 0;
    if (!rc && rl && (rc = wio_mpi_dev_open(&d->r, rbuf, rl, rflags, rb)) != 0)
        wio_mpi_dev_drop(&d->s);
    return rc;
}

int wio_mpi_dev_close2(wio_mpi_dev2 *d, int rc)
{
    rc = wio_mpi_dev_close(&d->r, rc);
    wio_mpi_dev_drop(&d->s); /* read only: nothing goes back */
    return rc;
}

int wio_mpi_dev_out_flags(const void *sbuf)
{
    return WIO_MPI_DEV_OUT | (sbuf == WAITIO_MPI_IN_PLACE ? WIO_MPI_DEV_IN : 0);
}
