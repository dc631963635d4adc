/*
 * icoll.c — the conversion layer's non-blocking collectives: Ibcast, Iallreduce, Ibarrier.
 *
 * Each is one round of the engine's point-to-point in the communicator's collective context, with
 * the tag of the group's collective sequence (the same sequence as its blocking collectives, so
 * every member must start them in the same order, as MPI requires): the root sends to every
 * member (Ibcast); every member sends its contribution to every other and folds them all in rank
 * order itself, so every member ends with the same bits (Iallreduce); every member sends an empty
 * message to every other (Ibarrier: complete once all have arrived). One round, no forwarding:
 * the messages move with any progress of the engine, so a member that is busy elsewhere — in
 * another wait, or a blocking receive — never holds up the others' completion, which a tree
 * would (its inner nodes forward only when their program calls in).
 *
 * The request handed back is the layer's: `internal` points at the operation, reserved[0] holds
 * an id no engine request has and reserved[1] a magic value; the layer's waits and tests
 * (waitio_mpi_wait, _test, _waitall, completion.c) recognise it through wio_mpi_icoll_owns and
 * finish it here. Operations alive are kept on a list, so a stale copy is never taken for one.
 *
 * Device (GPU) buffers go through host copies (devstage.h): read when the operation starts
 * (Ibcast's root, Iallreduce's operand), written back when the request completes — by the wait
 * or test that sees it complete — and freed then, also when it failed.
 */
#define WIO_LOG_SUBSYS WIO_SUB_MPI /* this file logs as "mpi" (WAITIO_LOG=mpi=LEVEL) */
#include <stdlib.h>
#include <string.h>
#include "core/api_lock.h"
#include "coll/datatype.h"
#include "mpi/devstage.h"
#include "mpi/dtype.h"
#include "mpi/mpi_internal.h"

#define ICOLL_MAGIC 0x5749494e42434f4cul  /* "WIINBCOL" */
#define ICOLL_NO_SLOT 0xfffffffful        /* slot of no engine request (wio_req_lookup fails) */

enum icoll_kind { IC_BCAST = 1, IC_ALLREDUCE, IC_BARRIER };

typedef struct icoll {
    struct icoll *next;          /* the list of operations alive */
    int kind;
    wio_engine *e;
    wio_group *g;
    uint64_t tag;
    int nq;
    wio_req_impl **q;            /* the round's requests; NULL: sent at once, or finished */
    int err;                     /* the first error */
    /* Ibcast: the data, packed (read at the root, written elsewhere) */
    wio_mpi_tbuf data;
    wio_mpi_dev stage;           /* Ibcast's device buffer's host copy (devstage.h) */
    int root;
    /* Iallreduce: every member's packed contribution, by rank; the result goes to recvbuf */
    wio_mpi_reducer red;
    uint8_t *parts;
    void *recvbuf;
    int dtype;
} icoll;

static icoll *alive;

static int is_alive(const icoll *c)
{
    for (const icoll *p = alive; p; p = p->next)
        if (p == c)
            return 1;
    return 0;
}

int wio_mpi_icoll_owns(const WAITIO_MPI_Request *request)
{
    WIO_API_GUARD(); /* the list may change under another thread ("multiple" level) */
    return request && request->internal && request->reserved[1] == ICOLL_MAGIC &&
           request->reserved[0] == ICOLL_NO_SLOT && is_alive(request->internal);
}

static void note_err(icoll *c, int rc)
{
    if (rc && !c->err)
        c->err = rc;
}

static void post_send(icoll *c, int dst, const void *buf, size_t len)
{
    wio_req_impl *r = NULL;
    int rc = wio_engine_isend(c->e, c->g, dst, buf, len, c->tag, WIO_CTX_COLL, &r);
    note_err(c, rc);
    c->q[c->nq++] = rc ? NULL : r;
}

static void post_recv(icoll *c, int src, void *buf, size_t len)
{
    wio_req_impl *r = NULL;
    int rc = wio_engine_irecv(c->e, c->g, src, buf, len, c->tag, WIO_CTX_COLL, &r);
    note_err(c, rc);
    c->q[c->nq++] = rc ? NULL : r;
}

/* Every request of the round is complete (one look: the caller makes the progress). */
static int round_done(void *arg)
{
    const icoll *c = arg;
    for (int i = 0; i < c->nq; i++)
        if (c->q[i] && c->q[i]->state != WIO_RS_DONE)
            return 0;
    return 1;
}

static void unlink_alive(icoll *c)
{
    for (icoll **p = &alive; *p; p = &(*p)->next)
        if (*p == c) {
            *p = c->next;
            return;
        }
}

/* Releases the round's requests (keeping the first error) and finishes the operation's data. */
static int finish(icoll *c)
{
    for (int i = 0; i < c->nq; i++) {
        wio_req_impl *r = c->q[i];
        if (!r)
            continue;
        if (r->status.error && !c->err) {
            wio_engine_explain(c->e, r);
            c->err = r->status.error;
        }
        wio_req_release(c->e, r);
        c->q[i] = NULL;
    }
    if (c->kind == IC_BCAST) {
        wio_mpi_tbuf_close(&c->data, !c->err && c->g->my_rank != c->root);
        c->err = wio_mpi_dev_close(&c->stage, c->err); /* back to the device (non-roots) */
    }
    if (c->kind == IC_ALLREDUCE && !c->err) {
        /* in rank order, as every member does it: part[i] = part[i-1] op part[i] */
        size_t n = (size_t)c->g->size, b = c->red.bytes;
        for (size_t i = 1; i < n && !c->err; i++)
            note_err(c, wio_mpi_reducer_apply(&c->red, c->parts + (i - 1) * b, c->parts + i * b));
        wio_mpi_tbuf out;
        wio_mpi_dev dev;
        void *rbuf;
        if (!c->err && !(c->err = wio_mpi_dev_open1(&dev, c->recvbuf, (int)c->red.count, c->dtype,
                                                      WIO_MPI_DEV_OUT, &rbuf))) {
            if (!(c->err = wio_mpi_tbuf_open(&out, rbuf, c->red.count, c->dtype, 0))) {
                if (b)
                    memcpy(out.data, c->parts + (n - 1) * b, b);
                wio_mpi_tbuf_close(&out, 1);
            }
            c->err = wio_mpi_dev_close(&dev, c->err); /* the result on the device */
        }
    }
    return c->err;
}

static void icoll_free(icoll *c)
{
    unlink_alive(c);
    wio_mpi_dev_drop(&c->stage); /* a host copy not closed by finish (a failed start) */
    if (c->red.t)
        wio_mpi_dt_unref(c->red.t);
    free(c->parts);
    free(c->q);
    free(c);
}

/* The request becomes inactive with the operation's outcome; the status (if any) says so. */
static int complete(WAITIO_MPI_Request *request, icoll *c, int *status)
{
    int rc = finish(c);
    icoll_free(c);
    memset(request, 0, sizeof *request);
    request->status.source = WAITIO_MPI_ANY_SOURCE;
    request->status.tag = WAITIO_ANY_TAG;
    request->status.error = rc;
    wio_mpi_fill_status(request, status);
    return rc;
}

int wio_mpi_icoll_wait(WAITIO_MPI_Request *request, int *status)
{
    WIO_API_GUARD();
    icoll *c = request->internal;
    int rc = round_done(c) ? 0 : wio_engine_wait_until(c->e, round_done, c, 0);
    note_err(c, rc);
    return complete(request, c, status);
}

int wio_mpi_icoll_test(WAITIO_MPI_Request *request, int *flag, int *status)
{
    WIO_API_GUARD();
    icoll *c = request->internal;
    *flag = 0;
    int rc = wio_engine_progress(c->e, 0);
    if (rc)
        return rc;
    if (!round_done(c))
        return 0;
    *flag = 1;
    return complete(request, c, status);
}

int wio_mpi_icoll_done(WAITIO_MPI_Request *request) { return round_done(request->internal); }

/* A new operation on comm with room for `nq` requests; its tag is the group's next. */
static int icoll_new(WAITIO_MPI_Comm comm, int kind, int nq, WAITIO_MPI_Request *request,
                     icoll **out)
{
    wio_engine *e = wio_mpi_engine();
    wio_group *g = (wio_group *)comm;
    if (!e)
        return WAITIO_ERR_STATE;
    if (!request)
        return wio_fail(WAITIO_ERR_ARG, "NULL request");
    if (!g)
        return wio_fail(WAITIO_ERR_GROUP, "NULL communicator");
    if (g->my_rank == WAITIO_UNDEFINED)
        return wio_fail(WAITIO_ERR_NOT_MEMBER, "collective on group %u: not a member",
                        (unsigned)g->gid);
    icoll *c = calloc(1, sizeof *c);
    wio_req_impl **q = calloc((size_t)(nq ? nq : 1), sizeof *q);
    if (!c || !q) {
        free(c);
        free(q);
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    }
    c->kind = kind;
    c->e = e;
    c->g = g;
    c->q = q;
    *out = c;
    return 0;
}

/* Starts the round (tag first: every member takes the same one) and hands out the request. */
static int icoll_start(icoll *c, WAITIO_MPI_Request *request, void (*post)(icoll *))
{
    c->tag = c->g->coll_seq++;
    c->next = alive;
    alive = c;
    post(c);
    memset(request, 0, sizeof *request);
    request->internal = c;
    request->reserved[0] = ICOLL_NO_SLOT;
    request->reserved[1] = ICOLL_MAGIC;
    if (c->err) { /* a post failed: what was posted still completes, then the error is kept */
        int rc = c->err;
        wio_mpi_icoll_wait(request, NULL);
        return rc;
    }
    return 0;
}

static void post_bcast(icoll *c)
{
    int me = c->g->my_rank;
    if (me != c->root) {
        post_recv(c, c->root, c->data.data, c->data.bytes);
        return;
    }
    for (int i = 0; i < c->g->size; i++)
        if (i != me)
            post_send(c, i, c->data.data, c->data.bytes);
}

int waitio_mpi_ibcast(void *buffer, int count, WAITIO_MPI_Datatype datatype, int root,
                      WAITIO_MPI_Comm comm, WAITIO_MPI_Request *request)
{
    WIO_API_GUARD();
    if (count < 0)
        return wio_fail(WAITIO_ERR_ARG, "negative count %d", count);
    wio_group *g = (wio_group *)comm;
    icoll *c;
    int rc = icoll_new(comm, IC_BCAST, g ? g->size : 0, request, &c);
    if (rc)
        return rc;
    if (root < 0 || root >= g->size)
        rc = wio_fail(WAITIO_ERR_ARG, "root %d outside the communicator of size %d", root, g->size);
    void *buf = buffer;
    if (!rc)
        rc = wio_mpi_dev_open1(&c->stage, buffer, count, datatype,
                               g->my_rank == root ? WIO_MPI_DEV_IN : WIO_MPI_DEV_OUT, &buf);
    if (!rc && (rc = wio_mpi_tbuf_open(&c->data, buf, (size_t)count, datatype, g->my_rank == root)))
        wio_mpi_dev_drop(&c->stage);
    if (rc) {
        icoll_free(c);
        return rc;
    }
    c->root = root;
    return icoll_start(c, request, post_bcast);
}

static void post_allreduce(icoll *c)
{
    int me = c->g->my_rank;
    size_t b = c->red.bytes;
    for (int i = 0; i < c->g->size; i++)
        if (i != me)
            post_recv(c, i, c->parts + (size_t)i * b, b);
    for (int i = 0; i < c->g->size; i++)
        if (i != me)
            post_send(c, i, c->parts + (size_t)me * b, b);
}

int waitio_mpi_iallreduce(const void *sendbuf, void *recvbuf, int count,
                          WAITIO_MPI_Datatype datatype, WAITIO_MPI_Op op, WAITIO_MPI_Comm comm,
                          WAITIO_MPI_Request *request)
{
    WIO_API_GUARD();
    if (count < 0)
        return wio_fail(WAITIO_ERR_ARG, "negative count %d", count);
    wio_group *g = (wio_group *)comm;
    icoll *c;
    int rc = icoll_new(comm, IC_ALLREDUCE, g ? 2 * g->size : 0, request, &c);
    if (rc)
        return rc;
    if ((rc = wio_mpi_reducer_init(&c->red, datatype, op, (size_t)count))) {
        c->red.t = NULL;
        icoll_free(c);
        return rc;
    }
    wio_mpi_dt_ref(c->red.t);
    size_t b = c->red.bytes;
    c->parts = malloc(b * (size_t)g->size + 1);
    wio_mpi_tbuf mine;
    wio_mpi_dev dev; /* a device operand: read now, through a host copy */
    const void *src = sendbuf == WAITIO_MPI_IN_PLACE ? recvbuf : sendbuf;
    void *host_src;
    if (!c->parts)
        rc = wio_fail(WAITIO_ERR_NOMEM, "out of memory (%zu bytes)", b * (size_t)g->size);
    if (!rc && !(rc = wio_mpi_dev_open1(&dev, src, count, datatype, WIO_MPI_DEV_IN, &host_src))) {
        if (!(rc = wio_mpi_tbuf_open(&mine, host_src, (size_t)count, datatype, 1))) {
            if (b)
                memcpy(c->parts + (size_t)g->my_rank * b, mine.data, b);
            wio_mpi_tbuf_close(&mine, 0);
        }
        wio_mpi_dev_drop(&dev);
    }
    if (rc) {
        icoll_free(c);
        return rc;
    }
    c->recvbuf = recvbuf;
    c->dtype = datatype;
    return icoll_start(c, request, post_allreduce);
}

static void post_barrier(icoll *c)
{
    int me = c->g->my_rank;
    for (int i = 0; i < c->g->size; i++)
        if (i != me)
            post_recv(c, i, NULL, 0);
    for (int i = 0; i < c->g->size; i++)
        if (i != me)
            post_send(c, i, NULL, 0);
}

int waitio_mpi_ibarrier(WAITIO_MPI_Comm comm, WAITIO_MPI_Request *request)
{
    WIO_API_GUARD();
    wio_group *g = (wio_group *)comm;
    icoll *c;
    int rc = icoll_new(comm, IC_BARRIER, g ? 2 * g->size : 0, request, &c);
    return rc ? rc : icoll_start(c, request, post_barrier);
}

void wio_mpi_icoll_waitall(int count, WAITIO_MPI_Request *requests)
{
    for (int i = 0; requests && i < count; i++)
        if (wio_mpi_icoll_owns(&requests[i]))
            wio_mpi_icoll_wait(&requests[i], NULL);
}
