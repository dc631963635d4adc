/*
 * p2p_ext.c — the conversion layer's point-to-point beyond the basics: Sendrecv,
 * Sendrecv_replace, Probe, Iprobe, Get_count and Get_elements. They are built on the layer's own
 * isend/irecv/wait (so every datatype those take works here too) and on the core's probe
 * (src/core/probe.c), which leaves the message for the receive that follows.
 */
#define WIO_LOG_SUBSYS WIO_SUB_MPI /* this file logs as "mpi" (WAITIO_LOG=mpi=LEVEL) */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "coll/datatype.h"
#include "mpi/dtype.h"
#include "mpi/mpi_internal.h"

/* Both sides of an exchange with oneself: the core does not send to its own process, so the
 * data is copied as a message would carry it (packed from the send side's datatype, unpacked
 * into the receive side's). */
static int self_exchange(const void *sendbuf, int sendcount, WAITIO_MPI_Datatype sendtype,
                         int sendtag, void *recvbuf, int recvcount, WAITIO_MPI_Datatype recvtype,
                         int recvtag, int me, int *status)
{
    if (sendcount < 0 || recvcount < 0)
        return wio_fail(WAITIO_ERR_ARG, "negative count");
    if (recvtag != WAITIO_MPI_ANY_TAG && recvtag != sendtag)
        return wio_fail(WAITIO_ERR_ARG, "sendrecv with oneself: send tag %d never matches "
                        "receive tag %d", sendtag, recvtag);
    wio_mpi_tbuf s, r;
    int rc = wio_mpi_tbuf_open(&s, sendbuf, (size_t)sendcount, sendtype, 1);
    if (rc)
        return rc;
    if ((rc = wio_mpi_tbuf_open(&r, recvbuf, (size_t)recvcount, recvtype, 0))) {
        wio_mpi_tbuf_close(&s, 0);
        return rc;
    }
    size_t bytes = s.bytes;
    if (bytes > r.bytes)
        rc = wio_fail(WAITIO_ERR_TRUNCATE, "sendrecv with oneself: %zu bytes sent into a "
                      "receive buffer of %zu", bytes, r.bytes);
    else if (bytes)
        memmove(r.data, s.data, bytes);
    if (!rc && r.tmp) /* only the bytes that came: the rest of the buffer stays as it was */
        wio_mpi_dt_unpack(r.t, r.tmp, r.count, bytes, recvbuf);
    wio_mpi_tbuf_close(&s, 0);
    wio_mpi_tbuf_close(&r, 0);
    if (!rc && status) {
        status[WAITIO_MPI_SOURCE] = me;
        status[WAITIO_MPI_TAG] = sendtag;
        status[WAITIO_MPI_ERROR] = 0;
        status[WAITIO_MPI_COUNT] = bytes > INT_MAX ? INT_MAX : (int)bytes;
    }
    return rc;
}

int waitio_mpi_sendrecv(const void *sendbuf, int sendcount, WAITIO_MPI_Datatype sendtype, int dest,
                        int sendtag, void *recvbuf, int recvcount, WAITIO_MPI_Datatype recvtype,
                        int source, int recvtag, WAITIO_MPI_Comm comm, int *status)
{
    int me = WAITIO_UNDEFINED, rc = waitio_group_rank(comm, &me);
    if (rc)
        return rc;
    if (me != WAITIO_UNDEFINED && dest == me && source == me)
        return self_exchange(sendbuf, sendcount, sendtype, sendtag, recvbuf, recvcount, recvtype,
                             recvtag, me, status);
    /* the receive first: the partner's message never waits as unexpected for it */
    WAITIO_MPI_Request rr, sr;
    if ((rc = waitio_mpi_irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &rr)))
        return rc;
    if ((rc = waitio_mpi_isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &sr))) {
        if (waitio_cancel(&rr) == 0)
            waitio_mpi_wait(&rr, NULL);
        return rc;
    }
    int rc_send = waitio_mpi_wait(&sr, NULL);
    int rc_recv = waitio_mpi_wait(&rr, status);
    return rc_recv ? rc_recv : rc_send;
}

/* The message received goes into a copy of the bytes the buffer's count elements span, so that
 * a datatype with gaps leaves the gaps as they were when the copy goes back; the send reads the
 * buffer itself. */
int waitio_mpi_sendrecv_replace(void *buf, int count, WAITIO_MPI_Datatype datatype, int dest,
                                int sendtag, int source, int recvtag, WAITIO_MPI_Comm comm,
                                int *status)
{
    const wio_mpi_dt *t = NULL;
    int rc = wio_mpi_dt_get(datatype, &t);
    if (rc)
        return rc;
    if (count < 0)
        return wio_fail(WAITIO_ERR_ARG, "negative count %d", count);
    ptrdiff_t lo = 0, hi = 0;
    wio_mpi_dt_span(t, (size_t)count, &lo, &hi);
    size_t span = (size_t)(hi - lo);
    char *copy = malloc(span ? span : 1);
    if (!copy)
        return wio_fail(WAITIO_ERR_NOMEM, "sendrecv_replace: out of memory (%zu bytes)", span);
    if (span)
        memcpy(copy, (char *)buf + lo, span);
    rc = waitio_mpi_sendrecv(buf, count, datatype, dest, sendtag, copy - lo, count, datatype,
                             source, recvtag, comm, status);
    if (!rc && span)
        memcpy((char *)buf + lo, copy, span);
    free(copy);
    return rc;
}

static void status_from_probe(const waitio_status_t *s, int *status)
{
    if (!status)
        return;
    status[WAITIO_MPI_SOURCE] = s->source;
    status[WAITIO_MPI_TAG] = s->tag == WAITIO_ANY_TAG ? -1 : (int)s->tag;
    status[WAITIO_MPI_ERROR] = s->error;
    status[WAITIO_MPI_COUNT] = s->len > INT_MAX ? INT_MAX : (int)s->len;
}

int waitio_mpi_probe(int source, int tag, WAITIO_MPI_Comm comm, int *status)
{
    unsigned long t = 0;
    waitio_status_t s;
    int rc = wio_mpi_tag(tag, 1, &t);
    if (!rc)
        rc = waitio_probe(comm, source, t, &s);
    if (!rc)
        status_from_probe(&s, status);
    return rc;
}

int waitio_mpi_iprobe(int source, int tag, WAITIO_MPI_Comm comm, int *flag, int *status)
{
    unsigned long t = 0;
    waitio_status_t s;
    if (!flag)
        return wio_fail(WAITIO_ERR_ARG, "NULL flag");
    int rc = wio_mpi_tag(tag, 1, &t);
    if (!rc)
        rc = waitio_iprobe(comm, source, t, flag, &s);
    if (!rc && *flag)
        status_from_probe(&s, status);
    return rc;
}

/* Elements of `size` bytes in the status's byte count: WAITIO_MPI_UNDEFINED when it is not a
 * whole number of them (MPI's rule), 0 for a type of size 0. */
static int count_in(const int *status, int size, int *count)
{
    if (!status || !count)
        return wio_fail(WAITIO_ERR_ARG, "NULL status or count");
    int bytes = status[WAITIO_MPI_COUNT];
    if (size == 0)
        *count = 0;
    else
        *count = bytes % size ? WAITIO_MPI_UNDEFINED : bytes / size;
    return 0;
}

int waitio_mpi_get_count(const int *status, WAITIO_MPI_Datatype datatype, int *count)
{
    int size = 0, rc = waitio_mpi_type_size(datatype, &size);
    return rc ? rc : count_in(status, size, count);
}

/* Basic elements the status's bytes hold: for a predefined type the same as get_count; for a
 * derived type made of one predefined type, its bytes over that type's size (a partial element
 * counts its whole basic elements, MPI's rule). A derived type mixing predefined types keeps no
 * per-type map here (dtype.h keeps byte blocks): WAITIO_ERR_ARG says so. */
int waitio_mpi_get_elements(const int *status, WAITIO_MPI_Datatype datatype, int *count)
{
    if (wio_mpi_dt_is_predefined(datatype))
        return waitio_mpi_get_count(status, datatype, count);
    const wio_mpi_dt *t = NULL;
    int rc = wio_mpi_dt_get(datatype, &t);
    if (rc)
        return rc;
    if (!t->size)
        return count_in(status, 0, count);
    if (!t->base)
        return wio_fail(WAITIO_ERR_ARG, "get_elements: datatype %d mixes predefined types "
                        "(only types made of one predefined type are counted)", datatype);
    return count_in(status, (int)wio_dtype_size(t->base), count);
}
