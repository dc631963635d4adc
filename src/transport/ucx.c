/*
 * ucx.c — the ucx transport: stream connections (stream.c) over UCX's UCP layer, so that WaitIO
 * runs on whatever fabric UCX drives (InfiniBand and RoCE verbs, shared memory, TCP, vendor
 * transports such as Tofu-D) with the same handshake, framing and failure rules as tcp.
 *
 * Each process has one UCP context and worker. Its worker address travels in the start-up
 * table (wio_proc.ext). Each side of a connection sends on its own endpoint, one per peer
 * process and shared by every connection to it (ep_create): the connector's to the peer's
 * worker address, made at connect, carries HELLO; the acceptor answers the handshake on its
 * endpoint to the process that HELLO names (a member of the table: the acceptor only ever
 * connects to the instance's processes). Nothing of an unauthenticated connection reaches beyond
 * the handshake, which costs one wio_stream and at most UCX_HS_RX_MAX buffered bytes, under the
 * stream layer's handshake cap and deadline.
 *
 * Bytes move as UCP active messages (id UCX_AM_ID) whose 24-byte header names the receiving
 * and the sending connection; the stream layer parses frames out of them as out of a socket.
 * Small writes are sent from the caller's buffers when UCX completes them at once, else copied.
 * Large messages do not pass here: the engine's rendezvous offers the sender's buffer (rdv_pack)
 * and the receiver's rdv_get moves it straight into the user's buffer, zero-copy on both sides:
 * by ucp_get_nbx where the endpoint is shared memory (address and packed remote key from the
 * registration cache), else by UCX's own rendezvous of an active message posted with the RTS
 * ("push", below).
 *
 * UCX calls back only into this file, and those callbacks only queue (data, failures): the
 * dispatcher, run after ucp_worker_progress returns, hands them to the stream layer. The worker's
 * event descriptor joins the poller, so waits sleep and wake as with the other transports.
 */
#define WIO_UCX_INTERNAL
#define WIO_LOG_SUBSYS WIO_SUB_UCX /* this file logs as "ucx" (WAITIO_LOG=ucx=LEVEL) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <uct/api/uct.h>
#include "transport/ucx.h"
#include "core/common.h"
#include "core/settings.h"

#define UCX_AM_ID 23
#define UCX_AMH_LEN 24
#define UCX_AMH_MAGIC 0x5755u     /* "UW": a WaitIO stream chunk */
#define UCX_KIND_DATA 0
#define UCX_KIND_EOF 1
#define UCX_KIND_PUSH 2           /* UCX's rendezvous of a large message's buffer (rdv_pack), seq: its token */
#define UCX_KIND_PUSH_LOST 3      /* UCX failed that rendezvous (seq: the token): do not wait for it */
#define UCX_HS_RX_MAX 1024u       /* bytes an unauthenticated connection may have queued */
#define UCX_TX_MAX (16u << 20)    /* copied bytes in flight per connection before writes wait */
#define UCX_IMM_MAX 8192u         /* writes up to this size try UCX's immediate completion */
/* The most one active message carries: a longer write is taken in part, as by a socket. UCX
 * 1.13 lost eager active messages of several fragments here (over 64 KiB on its tcp transport;
 * a multi-fragment send over shared memory never completed): one message stays within one
 * fragment of either. Large messages do not come this way (rdv_get). */
#define UCX_AM_MAX 8000u
#define UCX_SLOT_BITS 20
#define UCX_SLOT_MASK ((1u << UCX_SLOT_BITS) - 1)
#define UCX_RCACHE_ENTRIES 256
/* A table entry's extension is the process's pid (4 bytes, little-endian) and then its worker
 * address: a connect to a process of this host watches that pid from the start (watch_peer), so
 * a connect to a dead one fails at once instead of at the connect timeout (an endpoint to this
 * host has no UCX error handling). */
#define UCX_EXT_PID_LEN 4u

/* ------------------------------------------------------------------------------------ */
/* the active-message header                                                            */

typedef struct ucx_amh {
    uint32_t dst_conn, src_conn, src_proc, src_pid;
    uint32_t seq;             /* per connection and direction: UCX may deliver out of order */
    uint16_t magic;
    uint8_t kind, flags;
} ucx_amh;

static void amh_encode(const ucx_amh *h, uint8_t out[UCX_AMH_LEN])
{
    wio_put_le32(out, h->dst_conn);
    wio_put_le32(out + 4, h->src_conn);
    wio_put_le32(out + 8, h->src_proc);
    wio_put_le16(out + 12, h->magic);
    out[14] = h->kind;
    out[15] = h->flags;
    wio_put_le32(out + 16, h->src_pid);
    wio_put_le32(out + 20, h->seq);
}

static int amh_decode(const void *in, size_t len, ucx_amh *h)
{
    const uint8_t *p = in;
    if (len != UCX_AMH_LEN)
        return -1;
    h->dst_conn = wio_get_le32(p);
    h->src_conn = wio_get_le32(p + 4);
    h->src_proc = wio_get_le32(p + 8);
    h->magic = wio_get_le16(p + 12);
    h->kind = p[14];
    h->flags = p[15];
    h->src_pid = wio_get_le32(p + 16);
    h->seq = wio_get_le32(p + 20);
    if (h->magic != UCX_AMH_MAGIC || h->kind > UCX_KIND_PUSH_LOST || h->src_conn == 0)
        return -1;
    return 0;
}

/* ------------------------------------------------------------------------------------ */
/* connection table                                                                     */

static ucx_conn *conn_lookup(const ucx_tp *t, uint32_t id)
{
    uint32_t slot = id & UCX_SLOT_MASK;
    if (slot == 0 || slot > t->nconn_slots)
        return NULL;
    ucx_conn *c = t->conns[slot - 1];
    return c && c->id == id ? c : NULL;
}

static ucx_conn *conn_new(ucx_tp *t, uint32_t peer_id, int initiator)
{
    uint32_t slot = 0;
    for (uint32_t i = 0; i < t->nconn_slots; i++)
        if (!t->conns[i]) {
            slot = i + 1;
            break;
        }
    if (!slot) {
        if (t->nconn_slots == UCX_SLOT_MASK)
            return NULL;
        uint32_t n = t->nconn_slots ? 2 * t->nconn_slots : 64;
        if (n > UCX_SLOT_MASK)
            n = UCX_SLOT_MASK;
        ucx_conn **a = realloc(t->conns, n * sizeof *a);
        if (!a)
            return NULL;
        memset(a + t->nconn_slots, 0, (n - t->nconn_slots) * sizeof *a);
        t->conns = a;
        slot = t->nconn_slots + 1;
        t->nconn_slots = n;
    }
    ucx_conn *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    t->generation = (t->generation + 1) & 0xfffu;
    if (t->generation == 0)
        t->generation = 1;
    c->t = t;
    c->id = (t->generation << UCX_SLOT_BITS) | slot;
    c->peer_id = peer_id;
    c->initiator = initiator;
    c->pidfd.fd = -1;
    t->conns[slot - 1] = c;
    wio_poller_polled(t->poller, 1); /* the worker is progressed in every round while connected */
    return c;
}

static void conn_mark(ucx_conn *c)
{
    ucx_tp *t = c->t;
    if (c->queued)
        return;
    c->queued = 1;
    c->next_ready = NULL;
    if (t->ready_tail)
        t->ready_tail->next_ready = c;
    else
        t->ready = c;
    t->ready_tail = c;
}

static void conn_unqueue(ucx_conn *c)
{
    ucx_tp *t = c->t;
    if (!c->queued)
        return;
    ucx_conn **pp = &t->ready, *prev = NULL;
    while (*pp && *pp != c) {
        prev = *pp;
        pp = &(*pp)->next_ready;
    }
    if (*pp)
        *pp = c->next_ready;
    if (t->ready_tail == c)
        t->ready_tail = prev;
    c->queued = 0;
}

/* Receive records of small messages (the common case) are recycled: no allocation per message. */
#define UCX_RX_SMALL 256u
#define UCX_RX_POOL_MAX 256u

static ucx_rx *rx_alloc(ucx_tp *t, size_t copy)
{
    if (copy <= UCX_RX_SMALL && t->rx_pool) {
        ucx_rx *r = t->rx_pool;
        t->rx_pool = r->next;
        t->rx_pooled--;
        return r;
    }
    ucx_rx *r = malloc(sizeof *r + (copy <= UCX_RX_SMALL ? UCX_RX_SMALL : copy));
    if (r)
        r->small = copy <= UCX_RX_SMALL;
    return r;
}

static void rx_free(ucx_tp *t, ucx_rx *r)
{
    if (r->release)
        ucp_am_data_release(t->worker, r->release);
    if (r->small && t->rx_pooled < UCX_RX_POOL_MAX) {
        r->next = t->rx_pool;
        t->rx_pool = r;
        t->rx_pooled++;
        return;
    }
    free(r);
}

/* Endpoints are closed in the background (flushing what was sent); requests still open at the
 * transport's close are waited for, boundedly. */
static void ep_close(ucx_tp *t, ucp_ep_h ep, int force)
{
    if (!ep)
        return;
    ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
                             .flags = force ? UCP_EP_CLOSE_FLAG_FORCE : 0};
    void *req = ucp_ep_close_nbx(ep, &p);
    if (!UCS_PTR_IS_PTR(req))
        return;
    if (t->nclosing == t->closing_cap) {
        size_t cap = t->closing_cap ? 2 * t->closing_cap : 16;
        void **a = realloc(t->closing, cap * sizeof *a);
        if (!a) {
            ucp_request_free(req); /* it completes on its own; we only lose track of it */
            return;
        }
        t->closing = a;
        t->closing_cap = cap;
    }
    t->closing[t->nclosing++] = req;
}

static void closing_reap(ucx_tp *t)
{
    size_t k = 0;
    for (size_t i = 0; i < t->nclosing; i++) {
        if (ucp_request_check_status(t->closing[i]) == UCS_INPROGRESS)
            t->closing[k++] = t->closing[i];
        else
            ucp_request_free(t->closing[i]);
    }
    t->nclosing = k;
}

/* A peer process's endpoint and the connections that use it (ep_create, ep_release). */
typedef struct ucx_peer_ep {
    ucp_ep_h ep;
    unsigned refs;
} ucx_peer_ep;

static int push_conn_end(ucx_conn *c);
static void ep_release(ucx_conn *c, int force);

static void conn_destroy(ucx_conn *c)
{
    ucx_tp *t = c->t;
    conn_unqueue(c);
    while (c->ooo) {
        ucx_rx *r = c->ooo;
        c->ooo = r->next;
        rx_free(t, r);
    }
    if (c->pidfd.fd >= 0 && c->pidfd.ready) {
        wio_poller_del(t->poller, &c->pidfd);
        close(c->pidfd.fd);
    }
    while (c->rx_head) {
        ucx_rx *r = c->rx_head;
        c->rx_head = r->next;
        rx_free(t, r);
    }
    int pushing = push_conn_end(c);
    /* offers in flight on the last connection: the close by force completes them */
    ep_release(c, c->failed || (pushing && t->peer_eps && t->peer_eps[c->peer_id].refs == 1));
    uint32_t slot = c->id & UCX_SLOT_MASK;
    if (slot && slot <= t->nconn_slots && t->conns[slot - 1] == c)
        t->conns[slot - 1] = NULL;
    wio_poller_polled(t->poller, -1);
    /* freed after the poller's round: an event of this round may still name its pidfd */
    c->dead = 1;
    c->next_ready = t->grave;
    t->grave = c;
}

static void grave_free(void *arg)
{
    ucx_tp *t = arg;
    while (t->grave) {
        ucx_conn *c = t->grave;
        t->grave = c->next_ready;
        free(c);
    }
}

/* ------------------------------------------------------------------------------------ */
/* sending                                                                              */

typedef struct ucx_tx {
    ucx_tp *t;
    uint32_t conn_id;         /* looked up at completion: the connection may be gone */
    size_t len;
    uint8_t amh[UCX_AMH_LEN];
    uint8_t data[];
} ucx_tx;

static void tx_done(void *req, ucs_status_t status, void *arg)
{
    ucx_tx *x = arg;
    ucx_conn *c = conn_lookup(x->t, x->conn_id);
    (void)status; /* a failed send is also reported by the endpoint's error handler */
    if (c) {
        c->tx_inflight -= x->len;
        if (c->want_write)
            conn_mark(c);
    }
    free(x);
    ucp_request_free(req);
}

/* Copies the first `total` bytes of iov to out. */
static void gather(uint8_t *out, const struct iovec *iov, int iovcnt, size_t total)
{
    for (int i = 0; i < iovcnt && total; i++) {
        size_t k = iov[i].iov_len < total ? iov[i].iov_len : total;
        memcpy(out, iov[i].iov_base, k);
        out += k;
        total -= k;
    }
}

/* Sends the first `total` bytes of iov as one active message, numbered c->tx_seq. */
static int send_am(ucx_conn *c, uint8_t kind, const struct iovec *iov, int iovcnt, size_t total)
{
    ucx_tp *t = c->t;
    ucp_ep_h ep = c->ep;
    if (!ep || c->failed) {
        errno = EPIPE;
        return -1;
    }
    ucx_amh h = {.dst_conn = c->peer_conn, .src_conn = c->id, .src_proc = t->self_id,
                 .src_pid = t->pid, .seq = c->tx_seq, .magic = UCX_AMH_MAGIC, .kind = kind};
    uint32_t flags = UCP_AM_SEND_FLAG_EAGER; /* large messages go by rdv_get, never AM rendezvous */
    if (total <= UCX_IMM_MAX) {
        uint8_t amh[UCX_AMH_LEN], buf[UCX_IMM_MAX];
        amh_encode(&h, amh);
        gather(buf, iov, iovcnt, total);
        ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS | UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL,
                                 .flags = flags};
        ucs_status_ptr_t r = ucp_am_send_nbx(ep, UCX_AM_ID, amh, UCX_AMH_LEN, buf, total, &p);
        if (r == NULL) {
            t->frames_out++;
            return 0;
        }
        if (UCS_PTR_IS_PTR(r)) { /* should not happen with FORCE_IMM_CMPL; wait it out */
            ucs_status_t st = wio_ucx_wait(t, r);
            if (st == UCS_OK)
                return 0;
            errno = EPIPE;
            return -1;
        }
        if (UCS_PTR_STATUS(r) != UCS_ERR_NO_RESOURCE) {
            errno = EPIPE;
            return -1;
        }
    }
    if (c->tx_inflight >= UCX_TX_MAX) {
        errno = EAGAIN;
        return -1;
    }
    ucx_tx *x = malloc(sizeof *x + total);
    if (!x) {
        errno = ENOMEM;
        return -1;
    }
    x->t = t;
    x->conn_id = c->id;
    x->len = total;
    amh_encode(&h, x->amh);
    gather(x->data, iov, iovcnt, total);
    ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS | UCP_OP_ATTR_FIELD_CALLBACK |
                                             UCP_OP_ATTR_FIELD_USER_DATA,
                             .flags = flags, .cb.send = tx_done, .user_data = x};
    ucs_status_ptr_t r = ucp_am_send_nbx(ep, UCX_AM_ID, x->amh, UCX_AMH_LEN, x->data, total, &p);
    t->copies_out++;
    t->frames_out++;
    if (r == NULL) {
        free(x);
        return 0;
    }
    if (UCS_PTR_IS_ERR(r)) {
        free(x);
        errno = EPIPE;
        return -1;
    }
    c->tx_inflight += total;
    return 0;
}

static int send_chunk(ucx_conn *c, uint8_t kind, const struct iovec *iov, int iovcnt, size_t total)
{
    if (send_am(c, kind, iov, iovcnt, total) != 0)
        return -1;
    c->tx_seq++;
    return 0;
}

/* ------------------------------------------------------------------------------------ */
/* the pipe under the stream layer                                                       */

static ssize_t ucx_sendv(wio_stream *s, struct iovec *iov, int iovcnt)
{
    ucx_conn *c = s->pipe_state;
    size_t total = 0;
    for (int i = 0; i < iovcnt; i++)
        total += iov[i].iov_len;
    if (total == 0)
        return 0;
    if (total > UCX_AM_MAX)
        total = UCX_AM_MAX;
    if (send_chunk(c, UCX_KIND_DATA, iov, iovcnt, total) != 0)
        return -1;
    return (ssize_t)total;
}

static ssize_t ucx_recv(wio_stream *s, void *buf, size_t n)
{
    ucx_conn *c = s->pipe_state;
    size_t got = 0;
    while (got < n && c->rx_head) {
        ucx_rx *r = c->rx_head;
        size_t k = r->len - c->rx_off < n - got ? r->len - c->rx_off : n - got;
        memcpy((uint8_t *)buf + got, r->data + c->rx_off, k);
        got += k;
        c->rx_off += k;
        c->rx_bytes -= k;
        if (c->rx_off == r->len) {
            c->rx_head = r->next;
            if (!c->rx_head)
                c->rx_tail = NULL;
            c->rx_off = 0;
            rx_free(c->t, r);
        }
    }
    if (got)
        return (ssize_t)got;
    if (c->eof)
        return 0;
    errno = EAGAIN;
    return -1;
}

static int ucx_want_write(wio_stream *s, int on)
{
    ucx_conn *c = s->pipe_state;
    c->want_write = on;
    if (on && c->tx_inflight < UCX_TX_MAX)
        conn_mark(c);
    return 0;
}

static void ucx_pipe_shutdown(wio_stream *s)
{
    ucx_conn *c = s->pipe_state;
    c->eof_sent = 1;
    if (send_chunk(c, UCX_KIND_EOF, NULL, 0, 0) != 0)
        wio_debug("ucx: cannot send the end of stream to process %u", (unsigned)c->peer_id);
}

static void ucx_release(wio_stream *s)
{
    ucx_conn *c = s->pipe_state;
    if (!c)
        return;
    s->pipe_state = NULL;
    c->s = NULL;
    /* A socket's close tells the peer; an endpoint's does not: without an end of stream the peer
     * kept a connection we closed (for the connection cap, say) until its endpoint timed out,
     * and refused our next connect as a simultaneous one. The endpoint's close (not forced)
     * flushes it out before the endpoint goes. */
    if (c->ep && c->peer_conn && !c->failed && !c->eof_sent) {
        c->eof_sent = 1;
        if (send_chunk(c, UCX_KIND_EOF, NULL, 0, 0) != 0)
            wio_debug("ucx: cannot send the end of stream to process %u", (unsigned)c->peer_id);
    }
    conn_destroy(c);
}

static const wio_pipe_ops ucx_pipe = {
    .sendv = ucx_sendv,
    .recv = ucx_recv,
    .want_write = ucx_want_write,
    .shutdown = ucx_pipe_shutdown,
    .release = ucx_release,
};

static int ucx_accepted(wio_stream *s);

static const wio_stream_kind ucx_kind = {
    .name = "ucx",
    .pipe = &ucx_pipe,
    .accepted = ucx_accepted,
    .freed = ucx_release,
};

/* ------------------------------------------------------------------------------------ */
/* endpoints                                                                            */

/* arg is the transport, not the connection: UCX may report an endpoint that is already
 * closing, whose connection is gone. */
static void ep_failed(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    ucx_tp *t = arg;
    for (uint32_t i = 0; i < t->nconn_slots; i++) {
        ucx_conn *c = t->conns[i];
        if (!c || c->ep != ep || c->failed)
            continue;
        c->failed = 1;
        snprintf(c->fail_why, sizeof c->fail_why, "ucx: %s", ucs_status_string(status));
        conn_mark(c);
    }
}

/* One endpoint per peer process, shared by every connection to it (the connection ids in the
 * header tell them apart) and closed with the last. UCX pairs each endpoint with one of the
 * peer's, in the order both sides created theirs, and its rendezvous answers through that
 * pair: with an endpoint per connection, a simultaneous connect left the survivor paired with
 * the loser's closed endpoint, and UCX cancelled every rendezvous on it. (ucx_peer_ep: above) */

/* Lets go of c's hold on its endpoint; force (a dead peer, a failed endpoint) closes it now
 * for every connection that shares it. */
static void ep_release(ucx_conn *c, int force)
{
    ucx_tp *t = c->t;
    ucp_ep_h ep = c->ep;
    if (!ep)
        return;
    c->ep = NULL;
    ucx_peer_ep *pe = t->peer_eps ? &t->peer_eps[c->peer_id] : NULL;
    if (!pe || pe->ep != ep) {
        if (t->ep_per_conn)
            ep_close(t, ep, force);
        return; /* else closed already, by force */
    }
    if (!force && --pe->refs > 0)
        return;
    if (force)
        for (uint32_t i = 0; i < t->nconn_slots; i++) {
            ucx_conn *o = t->conns[i];
            if (!o || o->ep != ep)
                continue;
            o->ep = NULL;
            if (!o->failed) {
                o->failed = 1;
                snprintf(o->fail_why, sizeof o->fail_why, "ucx: the endpoint to process %u failed",
                         (unsigned)o->peer_id);
                conn_mark(o);
            }
        }
    pe->ep = NULL;
    pe->refs = 0;
    ep_close(t, ep, force);
}

static int same_host(const ucx_tp *t, uint32_t peer_id)
{
    return t->table[peer_id].host_id == t->table[t->self_id].host_id;
}

/* UCX (1.13) refuses its shared-memory transports to an endpoint that must report a failed
 * peer: an endpoint to a process of this host asks for no error handling, and the process is
 * watched through a pidfd instead (watch_peer); one to another host reports failures itself. */
static int ep_create(ucx_tp *t, uint32_t peer_id, ucp_ep_h *out)
{
    if (!t->peer_eps && !(t->peer_eps = calloc(t->nprocs, sizeof *t->peer_eps)))
        return wio_fail(WAITIO_ERR_NOMEM, "ucx: out of memory for the endpoint table");
    ucx_peer_ep *pe = &t->peer_eps[peer_id];
    if (pe->ep) {
        pe->refs++;
        *out = pe->ep;
        return 0;
    }
    const wio_proc *p = &t->table[peer_id];
    ucp_ep_params_t ep = {
        .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                      UCP_EP_PARAM_FIELD_ERR_HANDLER | UCP_EP_PARAM_FIELD_USER_DATA,
        .address = (const ucp_address_t *)(p->ext + UCX_EXT_PID_LEN),
        .err_mode = same_host(t, peer_id) ? UCP_ERR_HANDLING_MODE_NONE : UCP_ERR_HANDLING_MODE_PEER,
        .err_handler = {.cb = ep_failed, .arg = t},
        .user_data = t, /* UCX gives the error handler the endpoint's user data */
    };
    ucs_status_t st = ucp_ep_create(t->worker, &ep, out);
    if (st != UCS_OK)
        return wio_fail(WAITIO_ERR_SYS, "ucx: cannot create an endpoint to process %u: %s",
                        (unsigned)peer_id, ucs_status_string(st));
    if (t->ep_per_conn) /* test hook: the endpoint is this connection's alone (ep_release closes it) */
        return 0;
    pe->ep = *out;
    pe->refs = 1;
    return 0;
}

/* The acceptor checks that the process that proved the key is the one its messages named. */
static int ucx_accepted(wio_stream *s)
{
    ucx_conn *c = s->pipe_state;
    if (s->peer_id != c->peer_id) {
        wio_stream_fail(s, WAITIO_ERR_PROTO, "ucx: authenticated as another process than its messages name", 0);
        return 1;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------ */
/* large messages through UCX's own rendezvous ("push")                                 */
/*
 * Where the peer cannot read our memory in place cheaply (UCX's tcp has no zero-copy get: its
 * ucp_get_nbx is 8 KiB active-message replies; an InfiniBand key does not fit the engine's
 * descriptor), rdv_pack hands the buffer to UCX's rendezvous at once: an active message of kind
 * PUSH with the UCP_AM_SEND_FLAG_RNDV flag, numbered by a token that the RTS's descriptor names.
 * UCX sends only its announcement; the receiver's transport holds it (ucx_held) until the engine
 * matches the RTS and rdv_get asks UCX for the data straight into the user's buffer
 * (ucp_am_recv_data_nbx), moved by whatever UCX picks for the fabric (put or get zero-copy, several
 * lanes). rdv_decline or the connection's end gives the announcement back, which completes the
 * sender's request without the data. The sender keeps its request (ucx_push) until the engine's
 * CTS and rdv_finish, which waits until UCX completed it: after that nothing reads the buffer.
 */
#define UCX_RDV_GET 1
#define UCX_RDV_PUSH 2
#define UCX_DESC_GET 'G'          /* descriptor: 'G', the address (8), the packed remote key */
#define UCX_DESC_PUSH 'P'         /* 'P', the sender's connection id (4), token (4), length (8) */
#define UCX_PUSH_DESC_LEN 17u
#define UCX_PUSH_MAX 256u         /* our offers in flight per connection; more are offered for get */
#define UCX_HELD_MAX 256u         /* a peer's announcements held per connection; more are dropped */
#define UCX_PUSH_WAIT_S 5.0       /* how long rdv_get waits for an announcement, rdv_finish for UCX */

typedef struct ucx_push {
    struct ucx_push *next;
    ucx_conn *c;              /* while not orphan */
    void *req;                /* UCX's send request, NULL once complete */
    uint32_t token;
    int done;
    int lost;                 /* UCX completed it with an error: the receiver never saw it */
    int told;                 /* ... and it was told so (PUSH_LOST) */
    int orphan;               /* its connection is gone: UCX's completion frees it */
    uint8_t amh[UCX_AMH_LEN]; /* the header must outlive the request */
} ucx_push;

typedef struct ucx_held {
    struct ucx_held *next;
    void *desc;               /* UCX's data descriptor of the announcement */
    size_t len;
    uint32_t token;
} ucx_held;

/* UCX completes the request once the receiver took the data or let the announcement go (UCS_OK),
 * or with an error: the endpoint failed (the connection fails too), or UCX cancelled the
 * rendezvous because it could not resolve its endpoint pair at the receiver (left over from
 * endpoints closed on one side only: the receiver's transport never saw the announcement and
 * is told by PUSH_LOST, push_tell_lost). */
static void push_sent(void *req, ucs_status_t status, void *arg)
{
    ucx_push *x = arg;
    ucp_request_free(req);
    x->req = NULL;
    x->done = 1;
    if (x->orphan) {
        free(x);
        return;
    }
    if (status != UCS_OK && !x->c->failed) {
        x->lost = 1;
        x->c->push_lost = 1;
        x->c->t->push_lost = 1;
        conn_mark(x->c);
    }
}

/* From the dispatcher: the receiver is told of offers UCX lost, so that its rdv_get falls back
 * to DATA frames at once; UCX's rendezvous is not offered on this connection again. */
static void push_tell_lost(ucx_conn *c)
{
    ucx_tp *t = c->t;
    c->push_lost = 0;
    c->rdv_mode = UCX_RDV_GET;
    for (ucx_push *x = c->push; x; x = x->next) {
        if (!x->lost || x->told || !c->ep)
            continue;
        ucx_amh h = {.dst_conn = c->peer_conn, .src_conn = c->id, .src_proc = t->self_id, .src_pid = t->pid,
                     .seq = x->token, .magic = UCX_AMH_MAGIC, .kind = UCX_KIND_PUSH_LOST};
        uint8_t amh[UCX_AMH_LEN];
        amh_encode(&h, amh);
        ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS | UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL,
                                 .flags = UCP_AM_SEND_FLAG_EAGER};
        ucs_status_ptr_t r = ucp_am_send_nbx(c->ep, UCX_AM_ID, amh, UCX_AMH_LEN, NULL, 0, &p);
        if (r == NULL) {
            x->told = 1;
            t->pushes_lost++;
        } else if (UCS_PTR_IS_ERR(r) && UCS_PTR_STATUS(r) == UCS_ERR_NO_RESOURCE) {
            c->push_lost = 1; /* the next round tries again */
            conn_mark(c);
        } else {
            x->told = 1; /* the endpoint failed: so does the connection */
        }
    }
}

/* Is token at or below the connection's watermark of dropped announcements? */
static int held_gone(const ucx_conn *c, uint32_t token)
{
    return c->held_gone_set && (int32_t)(token - c->held_gone) <= 0;
}

static void held_mark_gone(ucx_conn *c, uint32_t token)
{
    if (!c->held_gone_set || (int32_t)(token - c->held_gone) > 0)
        c->held_gone = token;
    c->held_gone_set = 1;
}

static ucx_held *held_take(ucx_conn *c, uint32_t token)
{
    for (ucx_held **pp = &c->held; *pp; pp = &(*pp)->next)
        if ((*pp)->token == token) {
            ucx_held *h = *pp;
            *pp = h->next;
            c->nheld--;
            return h;
        }
    return NULL;
}

/* UCX's announcement of a peer's pushed buffer (from inside ucp_worker_progress): held for
 * rdv_get when it comes from an authenticated connection and fits; UCS_OK drops it (UCX then
 * completes the sender's request without the data: the engine falls back to DATA frames). */
static ucs_status_t push_arrived(ucx_tp *t, const ucx_amh *h, void *data, size_t length, uint64_t attr)
{
    ucx_conn *c = conn_lookup(t, h->dst_conn);
    int rndv = (attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0;
    if (!rndv || h->kind != UCX_KIND_PUSH || !c || c->failed || !c->s || !c->s->authenticated ||
        c->peer_id != h->src_proc || c->peer_conn != h->src_conn) {
        t->dropped++;
        return UCS_OK;
    }
    ucx_held *e = NULL;
    if (held_gone(c, h->seq) || c->nheld >= UCX_HELD_MAX || !(e = malloc(sizeof *e))) {
        held_mark_gone(c, h->seq);
        t->pushes_dropped++;
        return UCS_OK;
    }
    e->desc = data;
    e->len = length;
    e->token = h->seq;
    e->next = c->held;
    c->held = e;
    c->nheld++;
    t->pushes_in++;
    return UCS_INPROGRESS;
}

/* Tells every connection's peer of its lost offers: from the waits of rdv_get and rdv_finish
 * too, where the dispatcher does not run (two processes each waiting there for the other's
 * lost announcement would otherwise wait out UCX_PUSH_WAIT_S). */
static void push_tell_all_lost(ucx_tp *t)
{
    t->push_lost = 0;
    for (uint32_t i = 0; i < t->nconn_slots; i++)
        if (t->conns[i] && t->conns[i]->push_lost)
            push_tell_lost(t->conns[i]);
}

/* PUSH_LOST from the peer: the announcement of that offer will not come. */
static ucs_status_t push_lost_arrived(ucx_tp *t, const ucx_amh *h)
{
    ucx_conn *c = conn_lookup(t, h->dst_conn);
    if (!c || !c->s || !c->s->authenticated || c->peer_id != h->src_proc || c->peer_conn != h->src_conn) {
        t->dropped++;
        return UCS_OK;
    }
    held_mark_gone(c, h->seq);
    return UCS_OK;
}

/* The connection ends: announcements go back to UCX, offers still in flight are left to UCX's
 * completion (the endpoint is then closed by force, which completes them). Returns whether any
 * offer was still in flight. */
static int push_conn_end(ucx_conn *c)
{
    ucx_tp *t = c->t;
    while (c->held) {
        ucx_held *h = c->held;
        c->held = h->next;
        ucp_am_data_release(t->worker, h->desc);
        free(h);
    }
    c->nheld = 0;
    int inflight = 0;
    while (c->push) {
        ucx_push *x = c->push;
        c->push = x->next;
        if (x->done) {
            free(x);
        } else {
            x->orphan = 1;
            inflight = 1;
        }
    }
    c->npush = 0;
    return inflight;
}

/* ------------------------------------------------------------------------------------ */
/* receiving: UCX's callback queues, the dispatcher delivers                             */

/* In sequence, a chunk joins what the stream reads (and the end of stream ends it); ahead of
 * it, the chunk waits in seq order until the gap fills. */
static void rx_deliver(ucx_conn *c, ucx_rx *r)
{
    c->rx_seq++;
    if (r->eof) {
        c->eof = 1;
        rx_free(c->t, r);
        return;
    }
    if (r->len == 0) {
        rx_free(c->t, r);
        return;
    }
    r->next = NULL;
    if (c->rx_tail)
        c->rx_tail->next = r;
    else
        c->rx_head = r;
    c->rx_tail = r;
    c->rx_bytes += r->len;
}

static void rx_arrived(ucx_conn *c, ucx_rx *r)
{
    if (r->seq != c->rx_seq) {
        ucx_rx **pp = &c->ooo;
        while (*pp && (int32_t)((*pp)->seq - r->seq) < 0)
            pp = &(*pp)->next;
        r->next = *pp;
        *pp = r;
        c->ooo_bytes += r->len;
        c->t->reordered++;
        return;
    }
    rx_deliver(c, r);
    while (c->ooo && c->ooo->seq == c->rx_seq) {
        ucx_rx *n = c->ooo;
        c->ooo = n->next;
        c->ooo_bytes -= n->len;
        rx_deliver(c, n);
    }
}

static ucs_status_t am_recv(void *arg, const void *header, size_t header_length, void *data,
                            size_t length, const ucp_am_recv_param_t *param)
{
    ucx_tp *t = arg;
    ucx_amh h;
    /* before start the table is not known: the process ids are checked at start */
    if (amh_decode(header, header_length, &h) != 0 ||
        (t->started && (h.src_proc >= t->nprocs || h.src_proc == t->self_id))) {
        t->dropped++;
        return UCS_OK;
    }
    if ((param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) || h.kind == UCX_KIND_PUSH)
        return push_arrived(t, &h, data, length, param->recv_attr);
    if (h.kind == UCX_KIND_PUSH_LOST)
        return push_lost_arrived(t, &h);
    ucx_conn *c;
    if (h.dst_conn == 0) {
        /* a connector's first message (HELLO): a new accepted connection, in its handshake once
         * the dispatcher makes its stream (within the handshake cap) */
        if (h.kind != UCX_KIND_DATA || t->unborn >= t->max_unborn || !(c = conn_new(t, h.src_proc, 0))) {
            t->dropped++;
            return UCS_OK;
        }
        t->unborn++;
        c->peer_conn = h.src_conn;
    } else {
        c = conn_lookup(t, h.dst_conn);
        if (!c || c->peer_id != h.src_proc || (c->peer_conn && c->peer_conn != h.src_conn)) {
            t->dropped++;
            return UCS_OK;
        }
        c->peer_conn = h.src_conn; /* the connector learns the acceptor's id from HELLO_ACK */
    }
    if (!c->peer_pid)
        c->peer_pid = h.src_pid;
    int authenticated = c->s && c->s->authenticated;
    if (!authenticated && c->rx_bytes + c->ooo_bytes + length > UCX_HS_RX_MAX) {
        if (!c->failed) {
            c->failed = 1;
            snprintf(c->fail_why, sizeof c->fail_why, "ucx: more handshake bytes than a handshake has");
        }
        conn_mark(c);
        return UCS_OK;
    }
    /* a small message is copied into a recycled record: holding UCX's descriptor instead
     * costs a ucp_am_data_release and a new receive buffer in UCX per message */
    int keep = length > UCX_RX_SMALL && (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_DATA) != 0;
    ucx_rx *r = rx_alloc(t, keep ? 0 : length);
    if (!r) {
        c->failed = 1;
        snprintf(c->fail_why, sizeof c->fail_why, "ucx: out of memory receiving");
        conn_mark(c);
        return UCS_OK;
    }
    r->next = NULL;
    r->len = length;
    r->seq = h.seq;
    r->eof = h.kind == UCX_KIND_EOF;
    if (keep) {
        r->data = data;
        r->release = data;
    } else {
        if (length)
            memcpy(r->copy, data, length);
        r->data = r->copy;
        r->release = NULL;
    }
    t->frames_in++;
    rx_arrived(c, r);
    conn_mark(c);
    return keep ? UCS_INPROGRESS : UCS_OK;
}

/* An accepted connection's stream and its own endpoint to the process its HELLO names (a member
 * of the table: the acceptor only ever connects to the instance's processes). Until the peer
 * proves it is that process, the endpoint carries handshake frames only. */
static wio_stream *accepted_stream(ucx_tp *t, ucx_conn *c)
{
    t->unborn--;
    if (!wio_stream_ctx_hs_room(t->ctx)) {
        t->dropped++;
        return NULL;
    }
    if (!t->table[c->peer_id].ext_len || ep_create(t, c->peer_id, &c->ep) != 0)
        return NULL;
    wio_stream *s = wio_stream_new(t->ctx, &ucx_kind, -1, t->handler, t->hctx);
    if (!s)
        return NULL;
    s->pipe_state = c;
    c->s = s;
    s->my_id = t->self_id;
    snprintf(s->desc, sizeof s->desc, "ucx %u<-%u", (unsigned)t->self_id, (unsigned)c->peer_id);
    if (wio_stream_start_accept(s) != 0)
        wio_stream_fail(s, WAITIO_ERR_SYS, "cannot start the handshake", 0);
    return s;
}

/* A peer on this host: its exit fails the connection (its endpoint cannot report it). The pid
 * came with its messages; it is trusted once the peer proved the key. */
static void pidfd_ready(wio_poll_fd *pf, uint32_t events)
{
    ucx_conn *c = pf->arg;
    (void)events;
    if (c->dead)
        return;
    wio_poller_del(c->t->poller, &c->pidfd);
    close(c->pidfd.fd);
    c->pidfd.fd = -1;
    if (!c->failed) {
        c->failed = 1;
        snprintf(c->fail_why, sizeof c->fail_why, "ucx: process %u (pid %u) on this host exited",
                 (unsigned)c->peer_id, (unsigned)c->peer_pid);
    }
    conn_mark(c);
}

static void watch_peer(ucx_conn *c)
{
    ucx_tp *t = c->t;
    c->watched = 1;
    if (!same_host(t, c->peer_id) || c->peer_pid == 0)
        return;
    int fd = (int)syscall(SYS_pidfd_open, (pid_t)c->peer_pid, 0);
    if (fd < 0) {
        if (errno == ESRCH && !c->failed) {
            c->failed = 1;
            snprintf(c->fail_why, sizeof c->fail_why, "ucx: process %u (pid %u) on this host is gone",
                     (unsigned)c->peer_id, (unsigned)c->peer_pid);
            conn_mark(c);
        } else {
            wio_debug("ucx: cannot watch process %u (pid %u): %s; its exit is noticed at the next write",
                      (unsigned)c->peer_id, (unsigned)c->peer_pid, strerror(errno));
        }
        return;
    }
    c->pidfd.arg = c;
    c->pidfd.ready = pidfd_ready;
    if (wio_poller_add(t->poller, &c->pidfd, fd, EPOLLIN) != 0) {
        close(fd);
        return;
    }
}

/* Hands what UCX's callbacks queued to the streams: data first, then an end or a failure. */
static int dispatch(ucx_tp *t)
{
    int n = 0;
    t->round++;
    while (t->ready && t->started) {
        ucx_conn *c = t->ready;
        if (c->s && c->read_round == t->round)
            break; /* read once this round and queued again: the next round reads on */
        t->ready = c->next_ready;
        if (!t->ready)
            t->ready_tail = NULL;
        c->queued = 0;
        n++;
        t->delivered++;
        if (!c->s && !accepted_stream(t, c)) {
            conn_destroy(c);
            continue;
        }
        if (c->push_lost)
            push_tell_lost(c);
        uint32_t id = c->id;
        wio_stream *s = c->s;
        size_t unread = c->rx_bytes;
        if (c->rx_head || c->eof)
            wio_stream_read(s);
        if (!(c = conn_lookup(t, id)) || !c->s)
            continue;
        /* The stream reads a bounded amount per call (fairness) and expects to be called again
         * while bytes remain, as level-triggered epoll does for a socket: here nothing would
         * (the chunks have all arrived), so a connection it left bytes on stays queued. Without
         * this a flood or a large eager burst stalled until some other chunk arrived. */
        c->read_round = t->round;
        if (c->rx_head && c->rx_bytes < unread)
            conn_mark(c);
        if (!c->watched && c->s->authenticated)
            watch_peer(c);
        if (c->failed && !c->rx_head) {
            char why[sizeof c->fail_why];
            memcpy(why, c->fail_why, sizeof why);
            wio_stream_fail(s, WAITIO_ERR_PEER, why, 0);
            continue;
        }
        if (c->want_write && c->tx_inflight < UCX_TX_MAX)
            wio_stream_writable(s);
    }
    return n;
}

/* One pass of the worker, or (drain) passes until one finds nothing. A wait spinning on a
 * connection (ucx_conn_poll) takes one pass per round: with UCX's tcp every pass is an
 * epoll_wait, and the pass that confirms "nothing more" after each arrival was one system call
 * per received message on the ping-pong path (the next round polls again anyway). */
static int progress_passes(ucx_tp *t, int drain)
{
    WIO_ASSERT(!t->in_progress);
    t->in_progress = 1;
    int n = 0;
    while (ucp_worker_progress(t->worker)) {
        n++;
        if (!drain)
            break;
    }
    t->in_progress = 0;
    if (t->nclosing)
        closing_reap(t);
    return n + dispatch(t);
}

static int progress(ucx_tp *t) { return progress_passes(t, 1); }

ucs_status_t wio_ucx_wait(ucx_tp *t, void *req)
{
    if (req == NULL)
        return UCS_OK;
    if (UCS_PTR_IS_ERR(req))
        return UCS_PTR_STATUS(req);
    ucs_status_t st;
    WIO_ASSERT(!t->in_progress);
    t->in_progress = 1;
    while ((st = ucp_request_check_status(req)) == UCS_INPROGRESS)
        ucp_worker_progress(t->worker);
    t->in_progress = 0;
    ucp_request_free(req);
    return st;
}

/* ---- the poller's hooks ---- */

/* Has the peer of c died? Its endpoint says so (another host), or its process is gone (this
 * host: the pidfd is readable, or there is no such process). */
static int conn_peer_dead(ucx_conn *c)
{
    if (c->failed)
        return 1;
    if (c->pidfd.fd >= 0) {
        struct pollfd pfd = {.fd = c->pidfd.fd, .events = POLLIN};
        return poll(&pfd, 1, 0) > 0;
    }
    return c->peer_pid && same_host(c->t, c->peer_id) && kill((pid_t)c->peer_pid, 0) != 0 && errno == ESRCH;
}

ucs_status_t wio_ucx_wait_conn(ucx_conn *c, void *req)
{
    if (req == NULL)
        return UCS_OK;
    if (UCS_PTR_IS_ERR(req))
        return UCS_PTR_STATUS(req);
    ucx_tp *t = c->t;
    ucs_status_t st;
    WIO_ASSERT(!t->in_progress);
    t->in_progress = 1;
    double give_up = 0;
    for (unsigned n = 1; (st = ucp_request_check_status(req)) == UCS_INPROGRESS; n++) {
        ucp_worker_progress(t->worker);
        if (t->push_lost) /* as in conn_progress_until: a peer may wait for it meanwhile */
            push_tell_all_lost(t);
        if ((n & 255) != 0)
            continue;
        /* an endpoint to a process of this host cannot fail by itself: a dead peer's endpoint
         * is closed by force and the request cancelled; what UCX still does not complete
         * within a second is left to it (freed when it completes, if ever) */
        if (give_up == 0 && conn_peer_dead(c)) {
            if (!c->failed) {
                c->failed = 1;
                snprintf(c->fail_why, sizeof c->fail_why, "ucx: process %u exited", (unsigned)c->peer_id);
                conn_mark(c);
            }
            ep_release(c, 1);
            ucp_request_cancel(t->worker, req);
            give_up = wio_now() + 1.0;
        } else if (give_up > 0 && wio_now() > give_up) {
            st = UCS_ERR_ENDPOINT_TIMEOUT;
            break;
        }
    }
    t->in_progress = 0;
    ucp_request_free(req);
    return st;
}

/* UCX's event descriptor can stay readable with nothing for WaitIO (seen with UCX 1.13's tcp
 * between several processes of a PB: arm succeeds and the descriptor fires at once, hundreds of
 * thousands of times a second). After UCX_SPURIOUS_MAX such wake-ups in a row the descriptor
 * leaves the poller and the worker is polled every millisecond while the process waits; it is
 * tried again every UCX_TIMED_ROUNDS sleeps. */
#define UCX_SPURIOUS_MAX 64
#define UCX_TIMED_ROUNDS 256

static void efd_ready(wio_poll_fd *pf, uint32_t events)
{
    ucx_tp *t = pf->arg;
    (void)events;
    unsigned long before = t->delivered;
    progress(t);
    t->spurious = t->delivered == before ? t->spurious + 1 : 0;
    if (t->spurious >= UCX_SPURIOUS_MAX && !t->efd_off) {
        wio_poller_del(t->poller, &t->efd);
        t->efd_off = 1;
        t->timed_rounds = 0;
        /* The poller calls the sources' poll and prepare_sleep only while some connection needs
         * polling: without this, a process with no UCX connection yet (an acceptor that never
         * connected, or one whose idle connections were all closed) never progressed its worker
         * again, and every HELLO to it waited in its socket until the connect timeout (mp_scale,
         * core_idle_probe, core_fd_cap over ucx: "handshake ... did not complete in time"). */
        wio_poller_polled(t->poller, 1);
        wio_debug("ucx: the worker's event descriptor keeps firing with nothing to do: polling it "
                  "every millisecond while waiting");
    }
}

static int src_poll(void *arg) { return progress(arg); }

/* Before the process blocks: arm the worker's event descriptor, unless work is pending. */
static int src_prepare_sleep(void *arg, int *timeout_ms)
{
    ucx_tp *t = arg;
    if (t->efd_off) {
        progress(t);
        if (t->delivered) {
            t->delivered = 0;
            return 1;
        }
        if (++t->timed_rounds < UCX_TIMED_ROUNDS) {
            if (*timeout_ms < 0 || *timeout_ms > 1)
                *timeout_ms = 1;
            return 0;
        }
        if (wio_poller_add(t->poller, &t->efd, t->efd_fd, EPOLLIN) == 0) {
            t->efd_off = 0;
            t->spurious = 0;
            wio_poller_polled(t->poller, -1); /* efd_ready's +1 */
        }
    }
    for (int i = 0; i < 8; i++) {
        /* work is what reached the streams: UCX's own progress (keepalives, wire-up) is not */
        progress(t);
        if (t->delivered) {
            t->delivered = 0;
            return 1;
        }
        ucs_status_t st = ucp_worker_arm(t->worker);
        if (st == UCS_OK)
            return t->ready != NULL;
        if (st != UCS_ERR_BUSY)
            return 0;
    }
    return 1;
}

/* ------------------------------------------------------------------------------------ */
/* the transport's row                                                                  */

/* WAITIO_COMM_TYPE=verbs: UCX restricted to RDMA (InfiniBand/RoCE verbs) and shared memory. */
#define UCX_RDMA_TLS "rc,ud,dc,sm,self"

static int rdma_device_present(char *seen, size_t cap);

/* UCX's own variables (UCX_TLS, UCX_NET_DEVICES, ...) apply as usual; verbs mode restricts the
 * transports unless UCX_TLS says otherwise. */
static int config_ucx(const wio_config *cfg, ucp_config_t **out)
{
    ucs_status_t st = ucp_config_read(NULL, NULL, out);
    if (st != UCS_OK)
        return wio_fail(WAITIO_ERR_SYS, "ucx: cannot read UCX's configuration: %s", ucs_status_string(st));
    if (cfg->comm_type == WIO_COMM_VERBS && !getenv("UCX_TLS") &&
        (st = ucp_config_modify(*out, "TLS", UCX_RDMA_TLS)) != UCS_OK) {
        ucp_config_release(*out);
        return wio_fail(WAITIO_ERR_SYS, "ucx: cannot restrict UCX to RDMA transports: %s", ucs_status_string(st));
    }
    /* one-sided atomics through UCX must be atomic with the CPU atomics of the other paths
     * (ucx_rma.c); a user's own UCX_ATOMIC_MODE wins, and then atomics take frames */
    if (!getenv("UCX_ATOMIC_MODE") && (st = ucp_config_modify(*out, "ATOMIC_MODE", "cpu")) != UCS_OK) {
        ucp_config_release(*out);
        return wio_fail(WAITIO_ERR_SYS, "ucx: cannot set UCX's atomic mode: %s", ucs_status_string(st));
    }
    return 0;
}

static int ucx_open(const wio_tp_params *p, void **out, wio_proc *self)
{
    const wio_config *cfg = p->cfg;
    int loaded = wio_ucx_load(); /* UCX is loaded only now (ucx_sym.c) */
    if (loaded)
        return loaded;
    if (cfg->comm_type == WIO_COMM_VERBS) {
        char seen[512];
        if (!rdma_device_present(seen, sizeof seen))
            return wio_fail(WAITIO_ERR_ENV, "WAITIO_COMM_TYPE=verbs: UCX found no RDMA device (no "
                            "InfiniBand or RoCE port); UCX sees: %s. Use WAITIO_COMM_TYPE=socket "
                            "(TCP) or hybrid here", seen[0] ? seen : "no device at all");
    }
    ucx_tp *t = calloc(1, sizeof *t);
    if (!t)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory creating the ucx transport");
    t->handler = p->handler;
    t->hctx = p->ctx;
    t->poller = p->poller;
    t->self_id = WIO_ID_BOOT;
    t->pid = (uint32_t)getpid();
    const char *rdv = wio_setting_str("WAITIO_UCX_RDV", NULL);
    t->rdv_setting = !strcmp(rdv, "get") ? UCX_RDV_GET : !strcmp(rdv, "push") ? UCX_RDV_PUSH : 0;
    t->ep_per_conn = wio_setting_num("WAITIO_TEST_UCX_EP_PER_CONN", 0) != 0;
    t->max_unborn = cfg->max_handshakes > 0 ? (uint32_t)cfg->max_handshakes : 64;
    ucp_config_t *uc;
    int rc = config_ucx(cfg, &uc);
    if (rc) {
        free(t);
        return rc;
    }
    ucp_params_t up = {
        .field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_NAME,
        .features = UCP_FEATURE_AM | UCP_FEATURE_RMA | UCP_FEATURE_AMO32 | UCP_FEATURE_AMO64 |
                    UCP_FEATURE_WAKEUP,
        .name = "waitio",
    };
    ucs_status_t st = ucp_init(&up, uc, &t->context);
    ucp_config_release(uc);
    if (st != UCS_OK) {
        free(t);
        return wio_fail(WAITIO_ERR_SYS, "ucx: ucp_init failed: %s", ucs_status_string(st));
    }
    ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                              .thread_mode = UCS_THREAD_MODE_SERIALIZED};
    if ((st = ucp_worker_create(t->context, &wp, &t->worker)) != UCS_OK) {
        ucp_cleanup(t->context);
        free(t);
        return wio_fail(WAITIO_ERR_SYS, "ucx: cannot create a worker: %s", ucs_status_string(st));
    }
    *out = t; /* from here on ucx_close undoes what was made */
    ucp_am_handler_param_t ap = {
        .field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                      UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS,
        .id = UCX_AM_ID, .cb = am_recv, .arg = t, .flags = UCP_AM_FLAG_PERSISTENT_DATA,
    };
    int fd = -1;
    if ((st = ucp_worker_set_am_recv_handler(t->worker, &ap)) != UCS_OK ||
        (st = ucp_worker_get_address(t->worker, &t->address, &t->address_len)) != UCS_OK ||
        (st = ucp_worker_get_efd(t->worker, &fd)) != UCS_OK) {
        wio_transport_ucx.close(t);
        *out = NULL;
        return wio_fail(WAITIO_ERR_SYS, "ucx: cannot set up the worker: %s", ucs_status_string(st));
    }
    if (t->address_len > WIO_PROC_EXT_MAX - UCX_EXT_PID_LEN) {
        size_t len = t->address_len;
        wio_transport_ucx.close(t);
        *out = NULL;
        return wio_fail(WAITIO_ERR_SYS, "ucx: the worker address is %zu bytes, over the %u the "
                        "start-up table carries (restrict UCX_TLS / UCX_NET_DEVICES)", len,
                        (unsigned)(WIO_PROC_EXT_MAX - UCX_EXT_PID_LEN));
    }
    if (!(t->ext = malloc(UCX_EXT_PID_LEN + t->address_len))) {
        wio_transport_ucx.close(t);
        *out = NULL;
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    }
    uint32_t pid = (uint32_t)getpid();
    for (unsigned i = 0; i < UCX_EXT_PID_LEN; i++)
        t->ext[i] = (uint8_t)(pid >> (8 * i));
    memcpy(t->ext + UCX_EXT_PID_LEN, t->address, t->address_len);
    wio_stream_params sp = {
        .key = p->key, .poller = p->poller, .eager_limit = p->eager_limit,
        .connect_timeout = cfg->connect_timeout, .handshake_timeout = cfg->handshake_timeout,
        .max_handshakes = cfg->max_handshakes, .max_conns = wio_config_max_conns(cfg), .owner = t,
    };
    if ((rc = wio_stream_ctx_create(&t->ctx, &sp)) != 0 ||
        (rc = wio_ucx_rcache_create(t, UCX_RCACHE_ENTRIES, &t->rcache)) != 0) {
        wio_transport_ucx.close(t);
        *out = NULL;
        return rc ? rc : WAITIO_ERR_NOMEM;
    }
    t->efd.arg = t;
    t->efd.ready = efd_ready;
    t->efd_fd = fd;
    if (wio_poller_add(t->poller, &t->efd, fd, EPOLLIN) != 0) {
        wio_transport_ucx.close(t);
        *out = NULL;
        return wio_fail(WAITIO_ERR_SYS, "ucx: cannot watch the worker's event descriptor");
    }
    t->src.arg = t;
    t->src.poll = src_poll;
    t->src.prepare_sleep = src_prepare_sleep;
    t->src.after_epoll = grave_free;
    wio_poller_add_source(t->poller, &t->src);
    self->ext = t->ext;
    self->ext_len = (uint16_t)(UCX_EXT_PID_LEN + t->address_len);
    self->transports |= WIO_TP_UCX;
    return 0;
}

static int ucx_start(void *tp, const wio_tp_instance *inst)
{
    ucx_tp *t = tp;
    t->table = inst->table;
    t->nprocs = inst->nprocs;
    t->self_id = inst->self_id;
    /* connections that arrived before the table: only those that name another process of it stay */
    for (uint32_t i = 0; i < t->nconn_slots; i++) {
        ucx_conn *c = t->conns[i];
        if (c && !c->s && (c->peer_id >= t->nprocs || c->peer_id == t->self_id)) {
            t->unborn--;
            t->dropped++;
            conn_destroy(c);
        }
    }
    t->started = 1;
    wio_stream_ctx_set_self(t->ctx, inst->self_id, inst->eager_credit);
    return 0;
}

static int ucx_reachable(void *tp, uint32_t peer_id)
{
    const ucx_tp *t = tp;
    return peer_id < t->nprocs && peer_id != t->self_id && (t->table[peer_id].transports & WIO_TP_UCX) &&
           t->table[peer_id].ext_len > UCX_EXT_PID_LEN;
}

static int ucx_connect(void *tp, uint32_t peer_id, unsigned flags, void *user, void **conn)
{
    ucx_tp *t = tp;
    ucx_conn *c = conn_new(t, peer_id, 1);
    if (!c)
        return wio_fail(WAITIO_ERR_NOMEM, "ucx: out of connection slots");
    wio_stream *s = wio_stream_new(t->ctx, &ucx_kind, -1, t->handler, t->hctx);
    if (!s) {
        conn_destroy(c);
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    }
    s->pipe_state = c;
    c->s = s;
    snprintf(s->desc, sizeof s->desc, "ucx %u->%u", (unsigned)t->self_id, (unsigned)peer_id);
    if (ep_create(t, peer_id, &c->ep) != 0) {
        char why[160];
        snprintf(why, sizeof why, "%s", waitio_error_message());
        if (wio_stream_start_connect(s, t->self_id, peer_id, flags, user, 0) != 0) {
            wio_stream_close(s, WAITIO_ERR_SYS);
            return WAITIO_ERR_SYS;
        }
        wio_stream_fail_soon(s, why);
        *conn = s;
        return 0;
    }
    if (wio_stream_start_connect(s, t->self_id, peer_id, flags, user, 1) != 0) {
        wio_stream_close(s, WAITIO_ERR_SYS);
        return wio_fail(WAITIO_ERR_SYS, "cannot start a connection to %s", s->desc);
    }
    if (same_host(t, peer_id) && t->table[peer_id].ext_len > UCX_EXT_PID_LEN) { /* a dead peer fails now */
        const uint8_t *e = t->table[peer_id].ext;
        c->peer_pid = (uint32_t)e[0] | (uint32_t)e[1] << 8 | (uint32_t)e[2] << 16 | (uint32_t)e[3] << 24;
        watch_peer(c);
    }
    *conn = s;
    return 0;
}

static void ucx_send(void *conn, wio_send_item *it) { wio_stream_send(conn, it); }
static int ucx_send_now(void *conn, wio_frame_hdr *h, const void *payload)
{
    return wio_stream_send_now(conn, h, payload);
}
static int ucx_conn_idle(const void *conn) { return wio_stream_idle(conn); }
static void ucx_conn_poll(void *conn)
{
    wio_stream *s = conn;
    ucx_conn *c = s->pipe_state;
    if (c && !c->t->in_progress)
        progress_passes(c->t, 0);
}
static void ucx_conn_shutdown(void *conn) { wio_stream_shutdown(conn); }
static void ucx_conn_close(void *conn, int err) { wio_stream_close(conn, err); }
static void ucx_conn_abandon(void *conn) { wio_stream_abandon(conn); }
static const char *ucx_conn_desc(const void *conn) { return ((const wio_stream *)conn)->desc; }

/* ---- zero-copy rendezvous ---- */

/* Does ep reach the peer through shared memory, so that its ucp_get_nbx of our buffer is one
 * copy (cma, xpmem, knem)? UCX does not say which transports an endpoint uses (1.13), but its
 * shared-memory transports alone can map a key of memory UCX allocated (ucp_rkey_ptr): our own
 * such key, unpacked for ep, tells. */
static int ep_reaches_by_shm(ucx_tp *t, ucp_ep_h ep)
{
    if (t->probe_state == 0) {
        t->probe_state = -1;
        ucp_mem_map_params_t mp = {.field_mask = UCP_MEM_MAP_PARAM_FIELD_LENGTH | UCP_MEM_MAP_PARAM_FIELD_FLAGS,
                                   .length = 4096, .flags = UCP_MEM_MAP_ALLOCATE};
        ucp_mem_attr_t ma = {.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS};
        size_t len;
        if (ucp_mem_map(t->context, &mp, &t->probe_mh) != UCS_OK)
            return 0;
        if (ucp_mem_query(t->probe_mh, &ma) != UCS_OK || ucp_rkey_pack(t->context, t->probe_mh, &t->probe_rkey, &len) != UCS_OK) {
            ucp_mem_unmap(t->context, t->probe_mh);
            t->probe_mh = NULL;
            return 0;
        }
        t->probe_addr = (uint64_t)(uintptr_t)ma.address;
        t->probe_state = 1;
    }
    ucp_rkey_h rk;
    void *mapped;
    if (t->probe_state < 0 || ucp_ep_rkey_unpack(ep, t->probe_rkey, &rk) != UCS_OK)
        return 0;
    int ok = ucp_rkey_ptr(rk, t->probe_addr, &mapped) == UCS_OK;
    ucp_rkey_destroy(rk);
    return ok;
}

/* WAITIO_UCX_RDV=auto: the peer reads our buffer (get) where the endpoint is shared memory,
 * else UCX's own rendezvous moves it (push): measured, get is 2x UCX's rendezvous over shared
 * memory, and 3-4x slower over UCX's tcp (docs/transports.md). */
static int rdv_mode_for(ucx_conn *c)
{
    if (c->t->rdv_setting)
        return c->t->rdv_setting;
    return ep_reaches_by_shm(c->t, c->ep) ? UCX_RDV_GET : UCX_RDV_PUSH;
}

static size_t push_offer(ucx_conn *c, const void *buf, size_t len, uint8_t *out)
{
    ucx_tp *t = c->t;
    ucx_push *x = calloc(1, sizeof *x);
    if (!x)
        return 0;
    x->token = ++t->push_token;
    x->c = c;
    ucx_amh h = {.dst_conn = c->peer_conn, .src_conn = c->id, .src_proc = t->self_id, .src_pid = t->pid,
                 .seq = x->token, .magic = UCX_AMH_MAGIC, .kind = UCX_KIND_PUSH};
    amh_encode(&h, x->amh);
    ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS | UCP_OP_ATTR_FIELD_CALLBACK |
                                             UCP_OP_ATTR_FIELD_USER_DATA,
                             .flags = UCP_AM_SEND_FLAG_RNDV, .cb.send = push_sent, .user_data = x};
    ucs_status_ptr_t r = ucp_am_send_nbx(c->ep, UCX_AM_ID, x->amh, UCX_AMH_LEN, buf, len, &p);
    if (UCS_PTR_IS_ERR(r)) {
        wio_debug("ucx: UCX's rendezvous refused %zu bytes to process %u: %s", len, (unsigned)c->peer_id,
                  ucs_status_string(UCS_PTR_STATUS(r)));
        free(x);
        return 0;
    }
    x->req = r;
    x->done = r == NULL;
    x->next = c->push;
    c->push = x;
    c->npush++;
    t->pushes_out++;
    out[0] = UCX_DESC_PUSH;
    wio_put_le32(out + 1, c->id);
    wio_put_le32(out + 5, x->token);
    wio_put_le64(out + 9, len);
    return UCX_PUSH_DESC_LEN;
}

static size_t get_offer(ucx_conn *c, const void *buf, size_t len, uint8_t *out)
{
    const void *rkey;
    size_t rkey_len;
    if (wio_ucx_rcache_get(c->t->rcache, buf, len, &rkey, &rkey_len) != 0 || 9 + rkey_len > WIO_RDV_TP_DESC_MAX)
        return 0;
    out[0] = UCX_DESC_GET;
    wio_put_le64(out + 1, (uint64_t)(uintptr_t)buf);
    memcpy(out + 9, rkey, rkey_len);
    return 9 + rkey_len;
}

static size_t ucx_rdv_pack(void *conn, const void *buf, size_t len, uint8_t *out)
{
    wio_stream *s = conn;
    ucx_conn *c = s->pipe_state;
    if (!c || c->failed || !c->ep || c->t->in_progress)
        return 0;
    if (!c->rdv_mode)
        c->rdv_mode = rdv_mode_for(c);
    size_t n = 0;
    if (c->rdv_mode == UCX_RDV_PUSH && c->npush < UCX_PUSH_MAX)
        n = push_offer(c, buf, len, out);
    return n ? n : get_offer(c, buf, len, out);
}

/* Progresses the worker until ready(c, arg), c's peer dies or fails, or timeout seconds pass:
 * 0, EPIPE or ETIMEDOUT. Not from inside UCX's callbacks. */
static int conn_progress_until(ucx_conn *c, int (*ready)(ucx_conn *, void *), void *arg, double timeout)
{
    ucx_tp *t = c->t;
    WIO_ASSERT(!t->in_progress);
    double until = 0;
    int rc = 0;
    t->in_progress = 1;
    for (unsigned n = 1; !ready(c, arg); n++) {
        ucp_worker_progress(t->worker);
        if (t->push_lost)
            push_tell_all_lost(t);
        if ((n & 255) != 0)
            continue;
        if (conn_peer_dead(c)) {
            rc = EPIPE;
            break;
        }
        double now = wio_now();
        if (until == 0)
            until = now + timeout;
        else if (now > until) {
            rc = ETIMEDOUT;
            break;
        }
    }
    t->in_progress = 0;
    return rc;
}

static int push_done(ucx_conn *c, void *arg) { (void)c; return ((ucx_push *)arg)->done; }

static int held_arrived(ucx_conn *c, void *arg)
{
    uint32_t token = *(uint32_t *)arg;
    if (held_gone(c, token))
        return 1;
    for (const ucx_held *h = c->held; h; h = h->next)
        if (h->token == token)
            return 1;
    return 0;
}

/* The sender's CTS came: its offer through UCX's rendezvous ends once UCX completed it. */
static int ucx_rdv_finish(void *conn, const uint8_t *desc, size_t desc_len)
{
    wio_stream *s = conn;
    ucx_conn *c = s->pipe_state;
    if (!c || desc_len != UCX_PUSH_DESC_LEN || desc[0] != UCX_DESC_PUSH)
        return 0;
    uint32_t token = wio_get_le32(desc + 5);
    ucx_push **pp = &c->push;
    while (*pp && (*pp)->token != token)
        pp = &(*pp)->next;
    ucx_push *x = *pp;
    if (!x)
        return 0;
    int rc = x->done ? 0 : conn_progress_until(c, push_done, x, UCX_PUSH_WAIT_S);
    if (rc) {
        wio_debug("ucx: UCX's rendezvous to process %u did not complete after the receiver's CTS (%s)",
                  (unsigned)c->peer_id, strerror(rc));
        return rc; /* the engine fails the connection: its close by force completes the request */
    }
    *pp = x->next;
    c->npush--;
    free(x);
    return 0;
}

static void ucx_rdv_decline(void *conn, const uint8_t *desc, size_t desc_len);

/* Reads the sender's buffer: by a get (desc 'G') or UCX's rendezvous of it (desc 'P'). */
static int ucx_rdv_get(void *conn, const uint8_t *desc, size_t desc_len, void *dst, size_t len)
{
    wio_stream *s = conn;
    ucx_conn *c = s->pipe_state;
    int push = desc_len == UCX_PUSH_DESC_LEN && desc[0] == UCX_DESC_PUSH;
    if (!c || desc_len < 1 || c->failed || c->t->in_progress || !c->ep ||
        (push && (wio_get_le32(desc + 1) != c->peer_conn || wio_get_le64(desc + 9) != len))) {
        if (push)
            ucx_rdv_decline(conn, desc, desc_len); /* DATA frames follow: let the announcement go */
        return EINVAL;
    }
    ucx_tp *t = c->t;
    if (push) {
        uint32_t token = wio_get_le32(desc + 5);
        int rc = conn_progress_until(c, held_arrived, &token, UCX_PUSH_WAIT_S);
        ucx_held *h = held_take(c, token);
        if (!h) {
            held_mark_gone(c, token); /* should it still come, it is dropped */
            if (rc == ETIMEDOUT)
                wio_debug("ucx: offer %u of process %u was not announced within %.0f s: DATA frames instead",
                          (unsigned)token, (unsigned)c->peer_id, UCX_PUSH_WAIT_S);
            return rc ? rc : ENOENT;
        }
        void *udesc = h->desc;
        size_t hlen = h->len;
        free(h);
        if (hlen != len) {
            ucp_am_data_release(t->worker, udesc);
            return EPROTO;
        }
        ucp_request_param_t p = {0};
        void *req = ucp_am_recv_data_nbx(t->worker, udesc, dst, len, &p);
        return wio_ucx_wait_conn(c, req) == UCS_OK ? 0 : EIO;
    }
    if (desc[0] != UCX_DESC_GET || desc_len <= 9)
        return EINVAL;
    ucp_rkey_h rkey;
    if (ucp_ep_rkey_unpack(c->ep, desc + 9, &rkey) != UCS_OK)
        return EPROTO;
    ucp_request_param_t p = {0};
    void *req = ucp_get_nbx(c->ep, dst, len, wio_get_le64(desc + 1), rkey, &p);
    ucs_status_t st = wio_ucx_wait_conn(c, req);
    ucp_rkey_destroy(rkey);
    return st == UCS_OK ? 0 : EIO;
}

/* The receiver will not read the message (truncated): its announcement goes back to UCX. */
static void ucx_rdv_decline(void *conn, const uint8_t *desc, size_t desc_len)
{
    wio_stream *s = conn;
    ucx_conn *c = s->pipe_state;
    if (!c || desc_len != UCX_PUSH_DESC_LEN || desc[0] != UCX_DESC_PUSH)
        return;
    uint32_t token = wio_get_le32(desc + 5);
    ucx_held *h = c->t->in_progress ? NULL : held_take(c, token); /* else released at the end */
    if (h) {
        ucp_am_data_release(c->t->worker, h->desc);
        free(h);
    }
    held_mark_gone(c, token);
}

static void ucx_stats(void *tp, char *buf, size_t cap)
{
    const ucx_tp *t = tp;
    snprintf(buf, cap, "ucx: %lu chunks in (%lu out of order), %lu out (%lu copied), %lu dropped; "
             "UCX rendezvous: %lu offered (%lu lost by UCX), %lu announced to us (%lu dropped)",
             t->frames_in, t->reordered, t->frames_out, t->copies_out, t->dropped, t->pushes_out,
             t->pushes_lost, t->pushes_in, t->pushes_dropped);
}

static void ucx_close(void *tp)
{
    ucx_tp *t = tp;
    if (!t)
        return;
    if (t->ctx)
        wio_stream_ctx_destroy(t->ctx); /* closes every stream: their endpoints start closing */
    for (uint32_t i = 0; i < t->nconn_slots; i++)
        if (t->conns[i]) /* accepted, but no stream was made yet */
            conn_destroy(t->conns[i]);
    double until = wio_now() + 2.0;
    while (t->nclosing && wio_now() < until) {
        while (ucp_worker_progress(t->worker))
            ;
        closing_reap(t);
    }
    for (size_t i = 0; i < t->nclosing; i++)
        ucp_request_free(t->closing[i]);
    grave_free(t);
    while (t->rx_pool) {
        ucx_rx *r = t->rx_pool;
        t->rx_pool = r->next;
        free(r);
    }
    if (t->efd.ready && !t->efd_off)
        wio_poller_del(t->poller, &t->efd);
    if (t->efd_off)
        wio_poller_polled(t->poller, -1); /* efd_ready's +1 */
    if (t->src.poll)
        wio_poller_del_source(t->poller, &t->src);
    wio_ucx_rcache_destroy(t->rcache);
    if (t->probe_rkey)
        ucp_rkey_buffer_release(t->probe_rkey);
    if (t->probe_mh)
        ucp_mem_unmap(t->context, t->probe_mh);
    if (t->address)
        ucp_worker_release_address(t->worker, t->address);
    free(t->ext);
    ucp_worker_destroy(t->worker);
    ucp_cleanup(t->context);
    free(t->closing);
    free(t->conns);
    free(t->peer_eps);
    free(t);
}

const wio_transport_ops wio_transport_ucx = {
    .name = "ucx",
    .bit = WIO_TP_UCX,
    .open = ucx_open,
    .start = ucx_start,
    .reachable = ucx_reachable,
    .connect = ucx_connect,
    .send = ucx_send,
    .send_now = ucx_send_now,
    .conn_poll = ucx_conn_poll,
    .conn_idle = ucx_conn_idle,
    .conn_shutdown = ucx_conn_shutdown,
    .conn_close = ucx_conn_close,
    .conn_abandon = ucx_conn_abandon,
    .conn_desc = ucx_conn_desc,
    .rdv_pack = ucx_rdv_pack,
    .rdv_get = ucx_rdv_get,
    .rdv_finish = ucx_rdv_finish,
    .rdv_decline = ucx_rdv_decline,
    .rdma_reg = wio_ucx_rdma_reg,         /* one-sided over RDMA: ucx_rma.c */
    .rdma_dereg = wio_ucx_rdma_dereg,
    .rdma_rkey = wio_ucx_rdma_rkey,
    .rdma_rkey_free = wio_ucx_rdma_rkey_free,
    .rdma_post = wio_ucx_rdma_post,
    .rdma_flush = wio_ucx_rdma_flush,
    .rdma_fence = wio_ucx_rdma_fence,
    .stats = ucx_stats,
    .close = ucx_close,
};

/* ------------------------------------------------------------------------------------ */
/* what UCX sees (waitio-info, and the verbs check)                                      */

typedef void (*ucx_tl_visit)(void *arg, const char *component, const char *md, const char *tl,
                             const char *dev, int type);

static void visit_transports(ucx_tl_visit visit, void *arg)
{
    uct_component_h *comps;
    unsigned ncomps;
    if (uct_query_components(&comps, &ncomps) != UCS_OK)
        return;
    for (unsigned i = 0; i < ncomps; i++) {
        uct_component_attr_t ca = {.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME |
                                                 UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT};
        if (uct_component_query(comps[i], &ca) != UCS_OK || ca.md_resource_count == 0)
            continue;
        uct_md_resource_desc_t *mds = calloc(ca.md_resource_count, sizeof *mds);
        if (!mds)
            continue;
        ca.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
        ca.md_resources = mds;
        if (uct_component_query(comps[i], &ca) == UCS_OK)
            for (unsigned m = 0; m < ca.md_resource_count; m++) {
                uct_md_config_t *mc;
                uct_md_h md;
                if (uct_md_config_read(comps[i], NULL, NULL, &mc) != UCS_OK)
                    continue;
                ucs_status_t st = uct_md_open(comps[i], mds[m].md_name, mc, &md);
                uct_config_release(mc);
                if (st != UCS_OK)
                    continue;
                uct_tl_resource_desc_t *tls;
                unsigned ntls;
                if (uct_md_query_tl_resources(md, &tls, &ntls) == UCS_OK) {
                    for (unsigned k = 0; k < ntls; k++)
                        visit(arg, ca.name, mds[m].md_name, tls[k].tl_name, tls[k].dev_name,
                              (int)tls[k].dev_type);
                    uct_release_tl_resource_list(tls);
                }
                uct_md_close(md);
            }
        free(mds);
    }
    uct_release_component_list(comps);
}

typedef struct ucx_seen {
    char *buf;
    size_t cap;
    int rdma;
} ucx_seen;

static void note_transport(void *arg, const char *component, const char *md, const char *tl,
                           const char *dev, int type)
{
    ucx_seen *s = arg;
    (void)md;
    if (strcmp(component, "ib") == 0 && type == UCT_DEVICE_TYPE_NET)
        s->rdma = 1;
    size_t n = strlen(s->buf);
    if (n + 2 < s->cap)
        snprintf(s->buf + n, s->cap - n, "%s%s/%s", n ? ", " : "", tl, dev);
}

static int rdma_device_present(char *seen, size_t cap)
{
    seen[0] = '\0';
    ucx_seen s = {.buf = seen, .cap = cap};
    visit_transports(note_transport, &s);
    return s.rdma;
}

void wio_ucx_describe(char *buf, size_t cap)
{
    const char *unloadable = wio_ucx_load_error(); /* loads UCX (ucx_sym.c) */
    if (unloadable) {
        snprintf(buf, cap, "%s", unloadable);
        return;
    }
    unsigned major, minor, release;
    ucp_get_version(&major, &minor, &release);
    char seen[1024];
    int rdma = rdma_device_present(seen, sizeof seen);
    snprintf(buf, cap, "UCX %u.%u.%u; RDMA devices: %s; transports/devices: %s", major, minor,
             release, rdma ? "yes" : "none", seen[0] ? seen : "none");
}
