/*
 * loop_transport.h — an in-process transport for the engine's unit tests: every engine of the
 * test process registers its context under its process id, and a connection is a pair of
 * bounded in-memory byte queues between two stream contexts. It is a real row of the transport
 * table (struct wio_transport_ops over stream.c, with its own pipe), so the engine above it and
 * the handshake below it run exactly as over tcp or shm; tests can make a process "crash"
 * (loop_crash: every queue of it ends with no BYE), break connects to a process at once
 * (loop_reset_connects: it died after its listener took them), shrink the queues to exercise back-pressure,
 * hold one connection's reads to order events across connections (a slow link), and drive
 * engines from one thread or several (the queues have a lock).
 */
#ifndef WIO_TEST_LOOP_TRANSPORT_H
#define WIO_TEST_LOOP_TRANSPORT_H

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "core/common.h"
#include "core/poller.h"
#include "transport/stream.h"

#define LOOP_MAX_PROCS 16
#define LOOP_QUEUE_MAX (256u << 10)

typedef struct loop_queue {
    uint8_t *buf;
    size_t cap, rd, wr;          /* monotonic counters */
    int closed;                  /* the writer ended: EOF after the data */
    int reset;                   /* the reader is gone: writes fail with EPIPE */
} loop_queue;

typedef struct loop_pair {
    pthread_mutex_t lock;
    loop_queue q[2];             /* q[0]: connector -> acceptor, q[1]: back */
    int refs;
} loop_pair;

typedef struct loop_tp loop_tp;

typedef struct loop_end {
    loop_tp *tp;
    wio_stream *s;
    loop_pair *pair;
    int side;                    /* 0 connector, 1 acceptor: writes q[side], reads q[1 - side] */
    int dead;
    int hold_reads;              /* set by a test: what arrives stays unread (a slow connection) */
} loop_end;

struct loop_tp {
    wio_stream_ctx *ctx;
    wio_poller *poller;
    const wio_tp_handler *handler;
    void *hctx;
    uint32_t self_id;
    int started;
    loop_end **ends;
    size_t nends, cap;
    wio_poll_source src;
};

static loop_tp *loop_registry[LOOP_MAX_PROCS];
static size_t loop_queue_cap = LOOP_QUEUE_MAX;
/* Set by a test: how many of the next connects to process id break at once (-1: all of them),
 * as a local socket does when the peer dies after its listener took the connection: the
 * acceptor closes its end before reading, so the connector's first write (HELLO, written
 * inside connect) fails with EPIPE. */
static int loop_reset_connects[LOOP_MAX_PROCS];

static size_t loop_queue_used(const loop_queue *q) { return q->wr - q->rd; }

static ssize_t loop_sendv(wio_stream *s, struct iovec *iov, int iovcnt)
{
    loop_end *e = s->pipe_state;
    loop_queue *q = &e->pair->q[e->side];
    pthread_mutex_lock(&e->pair->lock);
    if (q->reset) {
        pthread_mutex_unlock(&e->pair->lock);
        errno = EPIPE;
        return -1;
    }
    size_t done = 0;
    for (int i = 0; i < iovcnt; i++) {
        const uint8_t *src = iov[i].iov_base;
        for (size_t k = 0; k < iov[i].iov_len && loop_queue_used(q) < q->cap; k++, done++)
            q->buf[q->wr++ % q->cap] = src[k];
    }
    pthread_mutex_unlock(&e->pair->lock);
    if (done == 0) {
        errno = EAGAIN;
        return -1;
    }
    return (ssize_t)done;
}

static ssize_t loop_recv(wio_stream *s, void *buf, size_t n)
{
    loop_end *e = s->pipe_state;
    loop_queue *q = &e->pair->q[1 - e->side];
    pthread_mutex_lock(&e->pair->lock);
    size_t k = 0;
    while (k < n && q->rd < q->wr)
        ((uint8_t *)buf)[k++] = q->buf[q->rd++ % q->cap];
    int eof = k == 0 && q->closed;
    pthread_mutex_unlock(&e->pair->lock);
    if (k)
        return (ssize_t)k;
    if (eof)
        return 0;
    errno = EAGAIN;
    return -1;
}

static int loop_want_write(wio_stream *s, int on)
{
    (void)s;
    (void)on;
    return 0; /* room is polled */
}

static void loop_end_output(loop_end *e)
{
    pthread_mutex_lock(&e->pair->lock);
    e->pair->q[e->side].closed = 1;
    pthread_mutex_unlock(&e->pair->lock);
}

static void loop_shutdown(wio_stream *s) { loop_end_output(s->pipe_state); }

static void loop_release(wio_stream *s)
{
    loop_end *e = s->pipe_state;
    loop_end_output(e);
    e->dead = 1;
    wio_poller_polled(e->tp->poller, -1);
}

static void loop_pair_put(loop_pair *p)
{
    pthread_mutex_lock(&p->lock);
    int last = --p->refs == 0;
    pthread_mutex_unlock(&p->lock);
    if (!last)
        return;
    free(p->q[0].buf);
    free(p->q[1].buf);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

static void loop_freed(wio_stream *s)
{
    loop_end *e = s->pipe_state;
    loop_tp *t = e->tp;
    for (size_t i = 0; i < t->nends; i++)
        if (t->ends[i] == e)
            t->ends[i] = t->ends[--t->nends];
    loop_pair_put(e->pair);
    free(e);
}

static const wio_pipe_ops loop_pipe = {
    .sendv = loop_sendv,
    .recv = loop_recv,
    .want_write = loop_want_write,
    .shutdown = loop_shutdown,
    .release = loop_release,
};

static const wio_stream_kind loop_kind = {.name = "loop", .pipe = &loop_pipe, .freed = loop_freed};

static loop_end *loop_end_new(loop_tp *t, wio_stream *s, loop_pair *p, int side)
{
    loop_end *e = calloc(1, sizeof *e);
    if (t->nends == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 8;
        t->ends = realloc(t->ends, t->cap * sizeof *t->ends);
    }
    if (!e || !t->ends)
        abort();
    e->tp = t;
    e->s = s;
    e->pair = p;
    e->side = side;
    s->pipe_state = e;
    t->ends[t->nends++] = e;
    wio_poller_polled(t->poller, 1);
    return e;
}

/* Reads what arrived and writes what waited for room, on every end of this process. */
static int loop_poll(void *arg)
{
    loop_tp *t = arg;
    int busy = 0;
    for (size_t i = 0; i < t->nends; i++) {
        loop_end *e = t->ends[i];
        if (e->dead || e->s->state == WIO_SS_CLOSED)
            continue;
        pthread_mutex_lock(&e->pair->lock);
        const loop_queue *in = &e->pair->q[1 - e->side], *out = &e->pair->q[e->side];
        int readable = in->rd < in->wr || in->closed;
        int room = loop_queue_used(out) < out->cap;
        pthread_mutex_unlock(&e->pair->lock);
        wio_stream *s = e->s;
        if (readable && !e->hold_reads) {
            busy++;
            wio_stream_read(s);
        }
        if (s->state != WIO_SS_CLOSED && s->want_out && room) {
            busy++;
            wio_stream_writable(s);
        }
    }
    return busy;
}

/* The end of this process's newest connection (the one a connect just made, on either side). */
static loop_end *loop_newest_end(uint32_t id)
{
    loop_tp *t = loop_registry[id];
    return t && t->nends ? t->ends[t->nends - 1] : NULL;
}

/* Lets every held connection end of process id read again. */
static void loop_release_holds(uint32_t id)
{
    loop_tp *t = loop_registry[id];
    for (size_t i = 0; t && i < t->nends; i++)
        t->ends[i]->hold_reads = 0;
}

static int loop_prepare_sleep(void *arg, int *timeout_ms)
{
    loop_tp *t = arg;
    if (*timeout_ms > 1)
        *timeout_ms = 1; /* nothing rings a doorbell: look again soon */
    for (size_t i = 0; i < t->nends; i++) {
        loop_end *e = t->ends[i];
        if (e->dead)
            continue;
        pthread_mutex_lock(&e->pair->lock);
        int ready = e->pair->q[1 - e->side].rd < e->pair->q[1 - e->side].wr;
        pthread_mutex_unlock(&e->pair->lock);
        if (ready)
            return 1;
    }
    return 0;
}

static int loop_open(const wio_tp_params *p, void **out, wio_proc *self)
{
    loop_tp *t = calloc(1, sizeof *t);
    if (!t)
        return WAITIO_ERR_NOMEM;
    t->poller = p->poller;
    t->handler = p->handler;
    t->hctx = p->ctx;
    wio_stream_params sp = {.key = p->key, .poller = p->poller, .eager_limit = p->eager_limit,
                            .connect_timeout = 10, .handshake_timeout = 10, .max_handshakes = 64,
                            .owner = t};
    if (wio_stream_ctx_create(&t->ctx, &sp) != 0)
        abort();
    t->src.arg = t;
    t->src.poll = loop_poll;
    t->src.prepare_sleep = loop_prepare_sleep;
    wio_poller_add_source(p->poller, &t->src);
    self->transports |= WIO_TP_TCP; /* any bit: the table only has to say "reachable" */
    *out = t;
    return 0;
}

static int loop_start(void *tp, const wio_tp_instance *inst)
{
    loop_tp *t = tp;
    t->self_id = inst->self_id;
    wio_stream_ctx_set_self(t->ctx, inst->self_id, inst->eager_credit);
    loop_registry[inst->self_id] = t;
    t->started = 1;
    return 0;
}

static int loop_reachable(void *tp, uint32_t peer_id)
{
    loop_tp *t = tp;
    return peer_id < LOOP_MAX_PROCS && peer_id != t->self_id && loop_registry[peer_id];
}

static int loop_connect(void *tp, uint32_t peer_id, unsigned flags, void *user, void **conn)
{
    loop_tp *t = tp, *peer = loop_registry[peer_id];
    if (!peer)
        return WAITIO_ERR_PEER;
    loop_pair *p = calloc(1, sizeof *p);
    if (!p)
        return WAITIO_ERR_NOMEM;
    pthread_mutex_init(&p->lock, NULL);
    for (int i = 0; i < 2; i++) {
        p->q[i].cap = loop_queue_cap;
        p->q[i].buf = malloc(loop_queue_cap);
        if (!p->q[i].buf)
            abort();
    }
    p->refs = 2;
    wio_stream *mine = wio_stream_new(t->ctx, &loop_kind, -1, t->handler, t->hctx);
    wio_stream *theirs = wio_stream_new(peer->ctx, &loop_kind, -1, peer->handler, peer->hctx);
    if (!mine || !theirs)
        abort();
    loop_end_new(t, mine, p, 0);
    loop_end_new(peer, theirs, p, 1);
    snprintf(mine->desc, sizeof mine->desc, "loop %u->%u", (unsigned)t->self_id, (unsigned)peer_id);
    snprintf(theirs->desc, sizeof theirs->desc, "loop %u<-%u", (unsigned)peer_id, (unsigned)t->self_id);
    theirs->my_id = peer->self_id;
    if (wio_stream_start_accept(theirs) != 0)
        abort();
    if (loop_reset_connects[peer_id]) {
        if (loop_reset_connects[peer_id] > 0)
            loop_reset_connects[peer_id]--;
        p->q[0].reset = 1;
        wio_stream_close(theirs, WAITIO_ERR_PEER); /* not yet authenticated: nobody is told */
    }
    if (wio_stream_start_connect(mine, t->self_id, peer_id, flags, user, 1) != 0)
        abort();
    *conn = mine;
    return 0;
}

static void loop_send(void *conn, wio_send_item *it) { wio_stream_send(conn, it); }
static int loop_conn_idle(const void *conn) { return wio_stream_idle(conn); }
static void loop_conn_shutdown(void *conn) { wio_stream_shutdown(conn); }
static void loop_conn_close(void *conn, int err) { wio_stream_close(conn, err); }
static void loop_conn_abandon(void *conn) { wio_stream_abandon(conn); }
static const char *loop_conn_desc(const void *conn) { return ((const wio_stream *)conn)->desc; }

static void loop_close(void *tp)
{
    loop_tp *t = tp;
    if (loop_registry[t->self_id] == t)
        loop_registry[t->self_id] = NULL;
    wio_stream_ctx_destroy(t->ctx);
    wio_poller_del_source(t->poller, &t->src);
    free(t->ends);
    free(t);
}

/* The process dies: every queue it writes ends without BYE; it accepts nothing more. */
static void loop_crash(uint32_t id)
{
    loop_tp *t = loop_registry[id];
    loop_registry[id] = NULL;
    for (size_t i = 0; t && i < t->nends; i++)
        loop_end_output(t->ends[i]);
}

static const wio_transport_ops loop_transport_ops = {
    .name = "loop",
    .bit = WIO_TP_TCP,
    .open = loop_open,
    .start = loop_start,
    .reachable = loop_reachable,
    .connect = loop_connect,
    .send = loop_send,
    .conn_idle = loop_conn_idle,
    .conn_shutdown = loop_conn_shutdown,
    .conn_close = loop_conn_close,
    .conn_abandon = loop_conn_abandon,
    .conn_desc = loop_conn_desc,
    .close = loop_close,
};

#endif
