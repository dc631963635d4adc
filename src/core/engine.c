/*
 * engine.c — the progress engine: peers and their connections, the point-to-point protocol
 * (eager with credit-based flow control, rendezvous RTS/CTS/DATA), matching of arriving
 * messages against posted receives, failure propagation, waiting and finalize.
 * docs/protocol.md describes the frames and the state machines implemented here.
 */
#include <errno.h>
#include <sched.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/engine.h"
#include "transport/tcp.h"
#include "transport/shm.h"

#define EAGER_OVERHEAD 64 /* credit charged per eager message on top of its payload */
#define RTS_COST 128      /* credit charged per rendezvous request (the receiver's queue entry) */
#define RECONNECT_DELAY 2.0

wio_engine *wio_engine_current;

static const wio_transport_ops *const transport_table[] = {&wio_transport_tcp};

static void peer_fail(wio_engine *e, wio_peer *p, int err, const char *why);
static int on_local_peer(void *ctx, uint32_t peer_id);
static int reachable(const wio_engine *e, uint32_t peer_id);
static void make_room(wio_engine *e, const wio_peer *keep);

/* ------------------------------------------------------------------------------------ */
/* peers                                                                                */

wio_peer *wio_engine_peer(wio_engine *e, uint32_t id)
{
    if (e->peers[id])
        return e->peers[id];
    wio_peer *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->id = id;
    p->state = WIO_PEER_IDLE;
    p->t = transport_table[0];
    wio_list_init(&p->pending);
    wio_list_init(&p->held);
    p->credit_item.owner = p;
    p->bye_item.owner = p;
    e->peers[id] = p;
    return p;
}

static void peer_connect(wio_engine *e, wio_peer *p)
{
    if (!reachable(e, p->id)) {
        peer_fail(e, p, WAITIO_ERR_UNREACHABLE, "on another host, and WAITIO_TRANSPORTS excludes tcp");
        return;
    }
    make_room(e, p);
    p->state = WIO_PEER_CONNECTING;
    p->connect_retry_at = 0;
    int rc = p->t->connect(e, p);
    p->outgoing = rc == 0;
    if (rc)
        peer_fail(e, p, WAITIO_ERR_PEER, waitio_error_message());
}

static int peer_gone(const wio_peer *p)
{
    return p->state == WIO_PEER_FAILED || p->bye_sent || p->bye_received;
}

/* Hands an item to the peer's connection, queueing it until the connection is open. */
static void peer_queue(wio_engine *e, wio_peer *p, wio_send_item *it)
{
    if (peer_gone(p)) {
        it->done(it, p->err ? p->err : WAITIO_ERR_PEER_FINALIZED);
        return;
    }
    p->last_used = ++e->use_tick;
    if (p->state == WIO_PEER_OPEN) {
        e->frames_out++;
        p->t->send(e, p, it);
        return;
    }
    /* while an idle connection closes, new traffic waits and reconnects afterwards */
    wio_list_insert_tail(&p->pending, &it->link);
    if (p->state == WIO_PEER_IDLE)
        peer_connect(e, p);
}

static void credit_item_done(wio_send_item *it, int err)
{
    (void)err;
    ((wio_peer *)it->owner)->credit_item_busy = 0;
}

static void maybe_return_credit(wio_engine *e, wio_peer *p)
{
    if (p->credit_item_busy || p->state != WIO_PEER_OPEN || peer_gone(p) ||
        p->credit_owed < e->eager_credit / 2)
        return;
    wio_send_item *it = &p->credit_item;
    memset(&it->h, 0, sizeof it->h);
    it->h.type = WIO_FT_CREDIT;
    it->total = 0;
    it->chunk = 0;
    it->done = credit_item_done;
    p->credit_item_busy = 1;
    peer_queue(e, p, it);
}

/* Gives back the credit of an eager message whose buffer is no longer held here. */
static void release_credit(wio_engine *e, uint32_t peer_id, uint64_t len)
{
    wio_peer *p = e->peers[peer_id];
    if (!p)
        return;
    uint32_t cost = (uint32_t)len + EAGER_OVERHEAD;
    p->credit_owed += cost;
    p->recv_credit += cost;
    maybe_return_credit(e, p);
}

static void unexp_free(wio_engine *e, wio_unexp *ux)
{
    if (wio_list_linked(&ux->link))
        wio_list_remove(&ux->link);
    if (ux->kind == WIO_UX_EAGER)
        e->unexpected_bytes -= ux->len;
    free(ux->data);
    free(ux);
}

/* ------------------------------------------------------------------------------------ */
/* sending                                                                              */

static void send_eager_done(wio_send_item *it, int err)
{
    wio_req_impl *r = it->owner;
    wio_req_complete(r, err);
}

static void send_rts_done(wio_send_item *it, int err)
{
    if (err)
        wio_req_complete(it->owner, err);
}

static void send_data_done(wio_send_item *it, int err)
{
    wio_req_complete(it->owner, err);
}

/* A receive never completes while its CTS is still queued (its slot could be reused): a
 * truncated or empty rendezvous receive completes here, the others on their last DATA frame,
 * which the peer can only send after the whole CTS went out. */
static void cts_done(wio_send_item *it, int err)
{
    wio_req_impl *r = it->owner;
    if (err || r->cts_trunc)
        wio_req_complete(r, err ? err : WAITIO_ERR_TRUNCATE);
    else if (r->msg_len == 0 || r->cma_done)
        wio_req_complete(r, 0);
}

/* A large message to a process of this host may be read in place by the receiver (cma.c): the
 * RTS then carries where it is. WAITIO_TRANSPORTS=tcp keeps every byte on the socket path. */
static int offer_single_copy(const wio_engine *e, const wio_peer *p, const wio_req_impl *r)
{
    return e->single_copy && e->use_shm && r->msg_len > 0 && p->cma_token != 0 &&
           on_local_peer((void *)e, p->id);
}

static void prepare_rts(wio_engine *e, wio_peer *p, wio_req_impl *r)
{
    r->state = WIO_RS_SEND_RTS;
    r->item.h.type = WIO_FT_RTS;
    r->item.h.id = wio_req_id(r);
    r->item.h.aux = r->msg_len;
    r->item.h.flags = 0;
    r->item.total = 0;
    r->item.done = send_rts_done;
    r->cma_offered = (uint8_t)offer_single_copy(e, p, r);
    if (r->cma_offered) {
        /* our pid and where our probe token is, until the peer has proven them; then the
         * address alone (it reads from the pid it pinned) */
        wio_cma_desc d = {.full = !p->cma_confirmed, .pid = e->pid, .addr = (uintptr_t)r->buf,
                          .probe_addr = (uintptr_t)&p->cma_token};
        r->item.h.flags = WIO_FF_CMA;
        r->item.payload = r->cma_wire;
        r->item.total = wio_cma_encode(&d, r->cma_wire);
    }
}

/* Decides eager vs rendezvous once the peer's limits are known: eager if the message fits the
 * limit and the credit, else a rendezvous request, which costs RTS_COST of credit. Returns 0,
 * or -1 when not even that credit is left: the message waits (in order) until the receiver
 * matches some of what it holds and returns credit. So everything a receiver buffers for one
 * peer, payloads and queue entries, stays within the credit it granted. */
static int choose_protocol(wio_engine *e, wio_peer *p, wio_req_impl *r)
{
    int64_t cost = (int64_t)r->msg_len + EAGER_OVERHEAD;
    if (r->msg_len <= p->eager_limit && cost <= p->send_credit) {
        p->send_credit -= cost;
        r->state = WIO_RS_SEND_EAGER;
        r->item.h.type = WIO_FT_EAGER;
        r->item.payload = r->buf;
        r->item.total = r->msg_len;
        r->item.done = send_eager_done;
        return 0;
    }
    if (p->send_credit < RTS_COST)
        return -1;
    p->send_credit -= RTS_COST;
    prepare_rts(e, p, r);
    return 0;
}

/* Sends a new message to an open peer, or holds it behind earlier held ones. */
static void send_or_hold(wio_engine *e, wio_peer *p, wio_req_impl *r)
{
    if (!wio_list_empty(&p->held) || choose_protocol(e, p, r) != 0) {
        wio_list_insert_tail(&p->held, &r->item.link);
        return;
    }
    e->frames_out++;
    p->t->send(e, p, &r->item);
}

/* Credit came back: release held messages in order while it lasts. */
static void release_held(wio_engine *e, wio_peer *p)
{
    while (!wio_list_empty(&p->held) && p->state == WIO_PEER_OPEN) {
        wio_send_item *it = WIO_CONTAINER_OF(p->held.next, wio_send_item, link);
        if (choose_protocol(e, p, it->owner) != 0)
            return;
        wio_list_remove(&it->link);
        e->frames_out++;
        p->t->send(e, p, it);
    }
}

static void send_cts(wio_engine *e, wio_peer *p, wio_req_impl *r, uint64_t sender_id, int trunc)
{
    wio_send_item *it = &r->item;
    memset(&it->h, 0, sizeof it->h);
    it->h.type = WIO_FT_CTS;
    it->h.id = sender_id;
    it->h.aux = wio_req_id(r);
    it->h.flags = (uint16_t)((trunc ? WIO_FF_TRUNC : 0) | (r->cma_done ? WIO_FF_CMA : 0));
    it->total = 0;
    it->chunk = 0;
    it->done = cts_done;
    r->cts_trunc = trunc;
    r->remote_id = sender_id;
    if (!trunc)
        r->state = WIO_RS_RECV_RDV;
    peer_queue(e, p, it);
}

static void cma_refuse_once(wio_peer *p, const char *fmt, unsigned long long a, unsigned long long b)
{
    if (p->cma_warned)
        return;
    p->cma_warned = 1;
    char what[200];
    snprintf(what, sizeof what, fmt, a, b);
    wio_warn("single copy from process %u refused: %s; its data moves through the copy path",
             (unsigned)p->id, what);
}

/* Whether the message that descriptor d describes may be read from p's memory. The first full
 * descriptor on a connection is proven: the probe token of this connection must be at the
 * probe address in that pid (else the pid is not the sender: another pid namespace, or a
 * descriptor naming someone else), and the process must run as our user. Its pid is then
 * pinned for the peer: a descriptor naming another pid is refused (that message moves through
 * the copy path). A kernel refusal (ptrace rules, seccomp) turns single copy off for good. */
static int single_copy_usable(wio_engine *e, wio_peer *p, const wio_cma_desc *d)
{
    if (!e->single_copy || p->cma_state == WIO_CMA_OFF || !on_local_peer(e, p->id))
        return 0;
    if (!d->full)
        return p->cma_state == WIO_CMA_OK;
    if (p->cma_pid && d->pid != p->cma_pid) {
        cma_refuse_once(p, "a descriptor names pid %llu, but pid %llu was proven for it",
                        (unsigned long long)d->pid, (unsigned long long)p->cma_pid);
        return 0;
    }
    if (p->cma_state == WIO_CMA_OK) {
        if (d->probe_addr == p->cma_probe_addr)
            return 1;
        cma_refuse_once(p, "a descriptor moves its probe (0x%llx, proven at 0x%llx)",
                        (unsigned long long)d->probe_addr, (unsigned long long)p->cma_probe_addr);
        return 0;
    }
    int err = wio_cma_read(d->pid, d->probe_addr, p->cma_token, 0, NULL, 0);
    unsigned uid = 0;
    if (!err && (err = wio_cma_same_user(d->pid, &uid)) == EPERM)
        cma_refuse_once(p, "its pid %llu runs as uid %llu, not as ours", (unsigned long long)d->pid, uid);
    if (err) {
        p->cma_state = WIO_CMA_OFF;
        wio_debug("single copy from process %u unavailable (%s); its data moves through the ring",
                  (unsigned)p->id, err == ESTALE ? "its pid names another process here" : strerror(err));
        return 0;
    }
    p->cma_state = WIO_CMA_OK;
    p->cma_pid = d->pid;
    p->cma_probe_addr = d->probe_addr;
    return 1;
}

/* Reads the message straight from the sender's buffer, in the pinned process (the probe is
 * read again in the same call); on failure the CTS asks for DATA frames as usual, which
 * overwrite whatever part was copied before the receive completes. */
static void single_copy(wio_engine *e, wio_peer *p, wio_req_impl *r, const wio_cma_desc *d)
{
    if (!single_copy_usable(e, p, d))
        return;
    int err = wio_cma_read(p->cma_pid, p->cma_probe_addr, p->cma_token, d->addr, r->buf, r->msg_len);
    if (err) {
        p->cma_state = WIO_CMA_OFF;
        wio_debug("single copy of %zu bytes from process %u failed (%s); falling back to the ring",
                  r->msg_len, (unsigned)p->id, strerror(err));
        return;
    }
    r->received = r->msg_len;
    r->cma_done = 1;
    e->single_copies++;
    e->single_copy_bytes += r->msg_len;
}

/* A receive matched an RTS (at arrival or from the unexpected queue); cma is the sender's
 * single-copy descriptor or NULL. */
static void recv_matched_rts(wio_engine *e, wio_peer *p, wio_req_impl *r, uint64_t len,
                             uint64_t sender_id, const wio_cma_desc *cma)
{
    r->msg_len = len;
    r->status.len = len;
    r->peer_id = p->id;
    if (len > r->cap) {
        r->status.error = WAITIO_ERR_TRUNCATE;
        r->state = WIO_RS_RECV_RDV;
        send_cts(e, p, r, sender_id, 1);
        return;
    }
    if (cma && len > 0)
        single_copy(e, p, r, cma);
    send_cts(e, p, r, sender_id, 0);
}


/* ------------------------------------------------------------------------------------ */
/* closing idle connections to stay under WAITIO_MAX_CONNECTIONS                          */
/*
 * A connection may be closed when nothing is in flight on it in either direction. The side
 * that wants to close sends IDLE_CLOSE and sends nothing more; the other side answers ACK if it
 * is idle too (then also sends nothing more, half-closes, and waits for the initiator to close)
 * or NACK. Both sides queue new traffic meanwhile and reconnect once the old connection is fully
 * closed, so no frame is lost and none overtakes another. See docs/protocol.md.
 */

/* Nothing of ours or of the peer's is in flight on p's connection. */
static int peer_idle(wio_engine *e, const wio_peer *p)
{
    if (p->state != WIO_PEER_OPEN || !p->tconn || !wio_tcp_conn_idle(p->tconn) ||
        !wio_list_empty(&p->pending) || !wio_list_empty(&p->held) || p->credit_item_busy ||
        p->rx_req || p->rx_unexp)
        return 0;
    for (uint32_t i = 0; i < e->nreqs; i++) {
        const wio_req_impl *r = e->reqs[i];
        if (r && r->peer_id == p->id && r->state != WIO_RS_FREE && r->state != WIO_RS_DONE &&
            r->state != WIO_RS_RECV_POSTED)
            return 0;
    }
    /* Credit owed and unexpected messages held here do not matter: credit accounting belongs to
     * the peer, not the connection, and carries over to the next one (on_opened). */
    return 1;
}

static void send_idle_close(wio_engine *e, wio_peer *p, uint16_t flags, void (*done)(wio_send_item *, int))
{
    wio_send_item *it = &p->close_item;
    memset(&it->h, 0, sizeof it->h);
    it->h.type = WIO_FT_IDLE_CLOSE;
    it->h.flags = flags;
    it->total = 0;
    it->chunk = 0;
    it->done = done;
    it->owner = p;
    e->frames_out++;
    p->t->send(e, p, it);
}

static void ignore_done(wio_send_item *it, int err) { (void)it; (void)err; }

/* After our ACK is out: half-close; the initiator's close ends it (idle_close_finished). */
static void ack_done(wio_send_item *it, int err)
{
    wio_peer *p = it->owner;
    if (!err && wio_engine_current && p->tconn)
        p->t->shutdown_peer(wio_engine_current, p);
}

/* The old connection is gone: queued traffic reconnects. */
static void idle_close_finished(wio_engine *e, wio_peer *p)
{
    p->state = WIO_PEER_IDLE;
    p->idle_closed = 1;
    p->idle_closed_at = wio_now();
    p->connect_retry_at = 0;
    wio_debug("idle connection to process %u closed", (unsigned)p->id);
    if (!wio_list_empty(&p->pending))
        peer_connect(e, p);
}

static void close_now(wio_engine *e, wio_peer *p)
{
    if (p->tconn)
        p->t->close_peer(e, p, WAITIO_ERR_PEER);
    idle_close_finished(e, p);
}

static void reopen_after_nack(wio_engine *e, wio_peer *p)
{
    p->state = WIO_PEER_OPEN;
    while (!wio_list_empty(&p->pending) && p->state == WIO_PEER_OPEN) {
        wio_send_item *it = WIO_CONTAINER_OF(p->pending.next, wio_send_item, link);
        wio_list_remove(&it->link);
        if (it->h.type == WIO_FT_EAGER && it->done == send_eager_done) {
            send_or_hold(e, p, it->owner);
            continue;
        }
        e->frames_out++;
        p->t->send(e, p, it);
    }
}

/* Returns nonzero on a protocol violation. */
static int idle_close_frame(wio_engine *e, wio_peer *p, uint16_t flags)
{
    if (flags & WIO_FF_ACK) {
        if (p->state == WIO_PEER_IDLE_CLOSING)
            close_now(e, p); /* everything the peer sent came before its ACK */
        return 0;
    }
    if (flags & WIO_FF_NACK) {
        if (p->state == WIO_PEER_IDLE_CLOSING)
            reopen_after_nack(e, p);
        return 0;
    }
    if (p->state == WIO_PEER_IDLE_CLOSING) { /* both asked at once: both are done sending */
        close_now(e, p);
        return 0;
    }
    if (wio_list_linked(&p->close_item.link)) {
        /* a peer waits for our answer before it asks again; queueing the one item twice
         * would corrupt the send queue (found by fuzz_session) */
        wio_warn("process %u asked again to close our connection before our answer went out",
                 (unsigned)p->id);
        return -1;
    }
    if (p->state == WIO_PEER_OPEN && peer_idle(e, p)) {
        p->state = WIO_PEER_IDLE_CLOSING;
        send_idle_close(e, p, WIO_FF_ACK, ack_done);
    } else if (p->state == WIO_PEER_OPEN) {
        wio_debug("process %u asked to close our idle connection; busy here", (unsigned)p->id);
        send_idle_close(e, p, WIO_FF_NACK, ignore_done);
    }
    return 0;
}

/* Connections that stay: open ones not already closing. */
static uint32_t staying_connections(const wio_engine *e)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < e->nprocs_total; i++) {
        const wio_peer *p = e->peers[i];
        n += p && p->tconn && p->state != WIO_PEER_IDLE_CLOSING;
    }
    return n;
}

/* Asks least recently used idle peers to close until at most `limit` connections stay. If
 * everything is busy the cap is exceeded for now rather than stall; the periodic check
 * (enforce_connection_cap) closes the surplus once peers fall idle. */
static void close_idle_until(wio_engine *e, const wio_peer *keep, uint32_t limit)
{
    uint32_t staying = staying_connections(e);
    while (staying > limit) {
        wio_peer *victim = NULL;
        for (uint32_t i = 0; i < e->nprocs_total; i++) {
            wio_peer *p = e->peers[i];
            if (p && p != keep && (!victim || p->last_used < victim->last_used) && peer_idle(e, p))
                victim = p;
        }
        if (!victim) {
            wio_debug("%u connections open (cap %u), none idle yet", (unsigned)staying, (unsigned)e->max_conns);
            return;
        }
        victim->state = WIO_PEER_IDLE_CLOSING;
        send_idle_close(e, victim, 0, ignore_done);
        staying--;
    }
}

/* Before a new connection: make room for it under WAITIO_MAX_CONNECTIONS. */
static void make_room(wio_engine *e, const wio_peer *keep)
{
    if (e->max_conns)
        close_idle_until(e, keep, e->max_conns - 1);
}

static void enforce_connection_cap(wio_engine *e)
{
    if (e->max_conns && e->peers)
        close_idle_until(e, NULL, e->max_conns);
}

/* ------------------------------------------------------------------------------------ */
/* connection handler                                                                   */

static int on_incoming(void *ctx, wio_conn *c, uint32_t peer_id)
{
    wio_engine *e = ctx;
    if (peer_id >= e->nprocs_total || peer_id == e->my_id || !reachable(e, peer_id))
        return -1;
    wio_peer *p = wio_engine_peer(e, peer_id);
    if (!p || peer_gone(p))
        return -1;
    if (p->state == WIO_PEER_OPEN)
        return -2;
    if (p->state == WIO_PEER_IDLE_CLOSING)
        return 1; /* our old connection still drains: the peer retries or we connect */
    if (p->state == WIO_PEER_CONNECTING && p->tconn) {
        if (!p->outgoing)
            return -2;                      /* a second incoming connection */
        if (e->my_id < peer_id)
            return 1;                       /* our connection wins; the peer drops its own */
        wio_conn *ours = p->tconn;          /* theirs wins: drop ours, keep the pending items */
        wio_tcp_conn_set_user(ours, NULL);
        wio_tcp_conn_close(ours, WAITIO_ERR_PEER);
    }
    make_room(e, p);
    p->state = WIO_PEER_CONNECTING;
    p->tconn = c;
    p->outgoing = 0;
    wio_tcp_conn_set_user(c, p);
    return 0;
}

static void on_opened(void *ctx, wio_conn *c, const wio_peer_hello *hello)
{
    wio_engine *e = ctx;
    wio_peer *p = wio_tcp_conn_user(c);
    if (!p)
        return;
    p->state = WIO_PEER_OPEN;
    p->eager_limit = (uint32_t)(hello->eager_limit < e->cfg.eager_limit ? hello->eager_limit
                                                                      : e->cfg.eager_limit);
    /* After an idle close both sides keep counting where they were: every frame of the old
     * connection, with the credit it carried, was read before it closed. */
    if (!p->idle_closed) {
        p->send_credit = hello->eager_credit;
        p->recv_credit = (int64_t)e->eager_credit;
    }
    /* single copy is proven again on each connection, with its own probe token */
    uint8_t secret[WIO_PROOF_LEN];
    wio_tcp_conn_secret(c, WIO_AUTH_CMA, secret);
    p->cma_token = wio_get_le64(secret);
    p->cma_confirmed = 0;
    if (p->cma_state == WIO_CMA_OK)
        p->cma_state = WIO_CMA_UNKNOWN;
    wio_debug("connection to process %u open (%s)", (unsigned)p->id, wio_tcp_conn_desc(c));
    while (!wio_list_empty(&p->pending) && p->state == WIO_PEER_OPEN) {
        wio_send_item *it = WIO_CONTAINER_OF(p->pending.next, wio_send_item, link);
        wio_list_remove(&it->link);
        if (it->h.type == WIO_FT_EAGER && it->done == send_eager_done) {
            send_or_hold(e, p, it->owner); /* a new message, decided now */
            continue;
        }
        e->frames_out++;
        p->t->send(e, p, it);
    }
}

static uint32_t on_take_credit(void *ctx, wio_conn *c)
{
    (void)ctx;
    wio_peer *p = wio_tcp_conn_user(c);
    if (!p)
        return 0;
    uint32_t v = p->credit_owed;
    p->credit_owed = 0;
    return v;
}

static int begin_eager(wio_engine *e, wio_peer *p, const wio_frame_hdr *h, uint8_t **dest)
{
    int64_t cost = (int64_t)h->len + EAGER_OVERHEAD;
    if (h->len > e->cfg.eager_limit || cost > p->recv_credit) {
        wio_warn("process %u exceeded its eager limit or credit", (unsigned)p->id);
        return -1;
    }
    p->recv_credit -= cost;
    wio_req_impl *r = wio_match_take_posted(&e->posted, p->id, h->gid, h->src, h->tag);
    if (r) {
        r->status.len = h->len;
        r->msg_len = h->len;
        r->state = WIO_RS_RECV_EAGER;
        if (h->len > r->cap)
            r->status.error = WAITIO_ERR_TRUNCATE;
        else
            *dest = r->buf;
        p->rx_req = r;
        return 0;
    }
    wio_unexp *ux = calloc(1, sizeof *ux);
    uint8_t *data = malloc(h->len ? h->len : 1);
    if (!ux || !data) {
        free(ux);
        free(data);
        wio_error("out of memory buffering an unexpected message");
        return -1;
    }
    ux->kind = WIO_UX_EAGER;
    ux->peer_id = p->id;
    ux->gid = h->gid;
    ux->src = h->src;
    ux->tag = h->tag;
    ux->len = h->len;
    ux->data = data;
    e->unexpected_bytes += h->len;
    wio_list_insert_tail(&e->unexpected, &ux->link);
    *dest = data;
    p->rx_unexp = ux;
    return 0;
}

/* An RTS costs RTS_COST of credit; its optional payload is the single-copy descriptor, so it is
 * matched once that has arrived (rts_arrived). */
static int begin_rts(wio_engine *e, wio_peer *p, const wio_frame_hdr *h, uint8_t **dest)
{
    (void)e;
    if (p->recv_credit < RTS_COST) {
        wio_warn("process %u sent a rendezvous request without credit", (unsigned)p->id);
        return -1;
    }
    int with_cma = (h->flags & WIO_FF_CMA) != 0;
    if ((with_cma ? h->len != WIO_CMA_DESC_FULL && h->len != WIO_CMA_DESC_SHORT : h->len != 0) ||
        (with_cma && h->aux == 0)) {
        wio_warn("process %u sent a malformed rendezvous request", (unsigned)p->id);
        return -1;
    }
    p->recv_credit -= RTS_COST;
    *dest = with_cma ? p->rx_cma : NULL;
    return 0;
}

static int rts_arrived(wio_engine *e, wio_peer *p, const wio_frame_hdr *h)
{
    wio_cma_desc cma;
    int with_cma = (h->flags & WIO_FF_CMA) != 0;
    if (with_cma && (wio_cma_decode(p->rx_cma, h->len, &cma) != 0 ||
                     (!cma.full && p->cma_state == WIO_CMA_UNKNOWN))) {
        /* the address alone is sent only once we have proven the sender's pid */
        wio_warn("process %u sent a single-copy descriptor that nothing here has proven", (unsigned)p->id);
        return -1;
    }
    wio_req_impl *r = wio_match_take_posted(&e->posted, p->id, h->gid, h->src, h->tag);
    if (r) {
        release_credit(e, p->id, RTS_COST - EAGER_OVERHEAD);
        recv_matched_rts(e, p, r, h->aux, h->id, with_cma ? &cma : NULL);
        return 0;
    }
    wio_unexp *ux = calloc(1, sizeof *ux);
    if (!ux)
        return -1;
    ux->kind = WIO_UX_RTS;
    ux->peer_id = p->id;
    ux->gid = h->gid;
    ux->src = h->src;
    ux->tag = h->tag;
    ux->len = h->aux;
    ux->remote_id = h->id;
    ux->has_cma = with_cma;
    if (with_cma)
        ux->cma = cma;
    wio_list_insert_tail(&e->unexpected, &ux->link);
    return 0;
}

static int begin_cts(wio_engine *e, wio_peer *p, const wio_frame_hdr *h)
{
    wio_req_impl *s = wio_req_lookup(e, h->id);
    if (!s || s->kind != WIO_REQ_SEND || s->state != WIO_RS_SEND_RTS || s->peer_id != p->id)
        return -1;
    if (h->flags & WIO_FF_TRUNC) { /* the receiver reports the truncation; the send succeeded */
        wio_req_complete(s, 0);
        return 0;
    }
    if (h->flags & WIO_FF_CMA) { /* the receiver read the message from our buffer */
        if (!s->cma_offered)
            return -1;
        p->cma_confirmed = 1; /* it proved our pid: later descriptors carry the address alone */
        wio_req_complete(s, 0);
        return 0;
    }
    if (s->msg_len == 0) {
        wio_req_complete(s, 0);
        return 0;
    }
    s->state = WIO_RS_SEND_DATA;
    wio_send_item *it = &s->item;
    memset(&it->h, 0, sizeof it->h);
    it->h.type = WIO_FT_DATA;
    it->h.id = h->aux;
    it->payload = s->buf;
    it->total = s->msg_len;
    it->chunk = e->cfg.chunk_size;
    it->offset = 0;
    it->done = send_data_done;
    peer_queue(e, p, it);
    return 0;
}

static int begin_data(wio_engine *e, wio_peer *p, const wio_frame_hdr *h, uint8_t **dest)
{
    wio_req_impl *r = wio_req_lookup(e, h->id);
    if (!r || r->kind != WIO_REQ_RECV || r->state != WIO_RS_RECV_RDV || r->peer_id != p->id ||
        r->cts_trunc || h->aux != r->received || h->len > r->msg_len - r->received || h->len == 0)
        return -1;
    *dest = r->buf + h->aux;
    p->rx_req = r;
    return 0;
}

static int on_frame_begin(void *ctx, wio_conn *c, const wio_frame_hdr *h, uint8_t **dest)
{
    wio_engine *e = ctx;
    wio_peer *p = wio_tcp_conn_user(c);
    if (!p)
        return -1;
    e->frames_in++;
    p->last_used = ++e->use_tick;
    p->send_credit += h->credit;
    if (h->credit && !wio_list_empty(&p->held))
        release_held(e, p);
    p->rx_req = NULL;
    p->rx_unexp = NULL;
    *dest = NULL;
    switch (h->type) {
    case WIO_FT_EAGER: return begin_eager(e, p, h, dest);
    case WIO_FT_RTS: return begin_rts(e, p, h, dest);
    case WIO_FT_CTS: return begin_cts(e, p, h);
    case WIO_FT_DATA: return begin_data(e, p, h, dest);
    case WIO_FT_CREDIT:
    case WIO_FT_BYE:
    case WIO_FT_IDLE_CLOSE: return 0;
    default: return -1; /* start-up frames have no business on a peer connection */
    }
}

/* Copies a completed unexpected eager message into the receive that matched it. */
static void deliver_unexpected(wio_engine *e, wio_req_impl *r, wio_unexp *ux)
{
    r->status.len = ux->len;
    if (ux->len > r->cap)
        r->status.error = WAITIO_ERR_TRUNCATE;
    else if (ux->len)
        memcpy(r->buf, ux->data, ux->len);
    release_credit(e, ux->peer_id, ux->len);
    unexp_free(e, ux);
    wio_req_complete(r, 0);
}

static void peer_bye_received(wio_engine *e, wio_peer *p);

static int on_frame_end(void *ctx, wio_conn *c, const wio_frame_hdr *h)
{
    wio_engine *e = ctx;
    wio_peer *p = wio_tcp_conn_user(c);
    if (!p)
        return -1;
    switch (h->type) {
    case WIO_FT_EAGER:
        if (p->rx_req) {
            release_credit(e, p->id, h->len);
            wio_req_complete(p->rx_req, 0);
        } else if (p->rx_unexp) {
            wio_unexp *ux = p->rx_unexp;
            ux->complete = 1;
            if (ux->waiting)
                deliver_unexpected(e, ux->waiting, ux);
        }
        break;
    case WIO_FT_RTS:
        p->rx_req = NULL;
        p->rx_unexp = NULL;
        return rts_arrived(e, p, h);
    case WIO_FT_DATA:
        if (p->rx_req) {
            p->rx_req->received += h->len;
            if (p->rx_req->received == p->rx_req->msg_len)
                wio_req_complete(p->rx_req, 0);
        }
        break;
    case WIO_FT_BYE:
        p->rx_req = NULL;
        p->rx_unexp = NULL;
        peer_bye_received(e, p);
        return 0;
    case WIO_FT_IDLE_CLOSE:
        return idle_close_frame(e, p, h->flags);
    default:
        break;
    }
    p->rx_req = NULL;
    p->rx_unexp = NULL;
    return 0;
}

static void on_closed(void *ctx, wio_conn *c, int err, const char *why, int rejected)
{
    wio_engine *e = ctx;
    wio_peer *p = wio_tcp_conn_user(c);
    if (!p || p->tconn != c)
        return;
    p->tconn = NULL;
    if (p->state == WIO_PEER_IDLE_CLOSING && !rejected) {
        idle_close_finished(e, p);
        return;
    }
    if (rejected) {
        /* the peer's own connection to us wins; if it never comes, connect again */
        p->connect_retry_at = wio_now() + RECONNECT_DELAY;
        return;
    }
    if (p->bye_received) {
        p->state = WIO_PEER_FAILED;
        p->err = WAITIO_ERR_PEER_FINALIZED;
        return;
    }
    peer_fail(e, p, err == WAITIO_ERR_AUTH ? WAITIO_ERR_AUTH : WAITIO_ERR_PEER, why);
}

const wio_conn_handler wio_engine_conn_handler = {
    .local_peer = on_local_peer,
    .incoming = on_incoming,
    .opened = on_opened,
    .frame_begin = on_frame_begin,
    .frame_end = on_frame_end,
    .closed = on_closed,
    .take_credit = on_take_credit,
};

/* ------------------------------------------------------------------------------------ */
/* failures and finalize                                                                */

/* Completes with `err` every request that can no longer finish because peer p is gone. */
static void fail_requests_of_peer(wio_engine *e, wio_peer *p, int err)
{
    for (uint32_t i = 0; i < e->nreqs; i++) {
        wio_req_impl *r = e->reqs[i];
        if (!r || r->state == WIO_RS_FREE || r->state == WIO_RS_DONE || r->peer_id != p->id)
            continue;
        if (r->kind == WIO_REQ_RECV && r->state == WIO_RS_RECV_POSTED && r->rank == WAITIO_ANY_SOURCE)
            continue;
        if (r->state == WIO_RS_RECV_UNEXP && r->unexp) {
            unexp_free(e, r->unexp);
            r->unexp = NULL;
        }
        wio_req_complete(r, err);
    }
    /* messages that can never finish arriving are dropped; complete ones stay receivable */
    wio_list *pos, *tmp;
    WIO_LIST_FOREACH_SAFE(pos, tmp, &e->unexpected) {
        wio_unexp *ux = WIO_CONTAINER_OF(pos, wio_unexp, link);
        if (ux->peer_id == p->id && (ux->kind == WIO_UX_RTS || !ux->complete))
            unexp_free(e, ux);
    }
    p->rx_req = NULL;
    p->rx_unexp = NULL;
}

static void drop_pending(wio_peer *p, int err)
{
    wio_list *queues[2] = {&p->pending, &p->held};
    for (int q = 0; q < 2; q++)
        while (!wio_list_empty(queues[q])) {
            wio_send_item *it = WIO_CONTAINER_OF(queues[q]->next, wio_send_item, link);
            wio_list_remove(&it->link);
            it->done(it, err);
        }
}

static void peer_fail(wio_engine *e, wio_peer *p, int err, const char *why)
{
    if (p->state == WIO_PEER_FAILED)
        return;
    if (!e->finalizing)
        wio_warn("lost process %u: %s", (unsigned)p->id, why);
    p->state = WIO_PEER_FAILED;
    p->err = err;
    snprintf(p->why, sizeof p->why, "%s", why);
    if (p->tconn)
        p->t->close_peer(e, p, err);
    drop_pending(p, err);
    fail_requests_of_peer(e, p, err);
}

static void bye_done(wio_send_item *it, int err)
{
    wio_peer *p = it->owner;
    if (!err && wio_engine_current)
        p->t->shutdown_peer(wio_engine_current, p);
}

static void send_bye(wio_engine *e, wio_peer *p)
{
    if (p->bye_sent || p->state == WIO_PEER_FAILED)
        return;
    wio_send_item *it = &p->bye_item;
    memset(&it->h, 0, sizeof it->h);
    it->h.type = WIO_FT_BYE;
    it->total = 0;
    it->chunk = 0;
    it->done = bye_done;
    if (p->state == WIO_PEER_OPEN) {
        e->frames_out++;
        p->t->send(e, p, it);
    }
    p->bye_sent = 1;
    p->state = WIO_PEER_CLOSING;
}

/* The peer finalized: it reads nothing more, so close now. Frames still queued to it are
 * dropped (their requests fail with WAITIO_ERR_PEER_FINALIZED); our close is the EOF the
 * finalizing peer waits for. Everything it sent before BYE has been processed. */
static void peer_bye_received(wio_engine *e, wio_peer *p)
{
    p->bye_received = 1;
    p->state = WIO_PEER_FAILED;
    p->err = WAITIO_ERR_PEER_FINALIZED;
    snprintf(p->why, sizeof p->why, "it called waitio_finalize");
    if (p->tconn)
        p->t->close_peer(e, p, WAITIO_ERR_PEER_FINALIZED);
    drop_pending(p, WAITIO_ERR_PEER_FINALIZED);
    fail_requests_of_peer(e, p, WAITIO_ERR_PEER_FINALIZED);
}

/* ------------------------------------------------------------------------------------ */
/* progress and waiting                                                                 */

static void retry_lost_races(wio_engine *e, double now)
{
    for (uint32_t i = 0; i < e->nprocs_total; i++) {
        wio_peer *p = e->peers[i];
        if (p && p->connect_retry_at > 0 && now >= p->connect_retry_at &&
            p->state == WIO_PEER_CONNECTING && !p->tconn)
            peer_connect(e, p);
    }
}

/* A receive naming a peer whose connection was closed for the cap does not reconnect at once
 * (all-to-all patterns would defeat the cap); if it is still waiting after IDLE_PROBE_DELAY,
 * reconnect, so that a peer that died meanwhile fails the receive instead of hanging it. */
#define IDLE_PROBE_DELAY 1.0
static void probe_idle_closed_peers(wio_engine *e, double now)
{
    for (;;) { /* a failed connect removes receives from the list: rescan after each */
        wio_peer *probe = NULL;
        wio_list *pos, *tmp;
        WIO_LIST_FOREACH_SAFE(pos, tmp, &e->posted) {
            wio_req_impl *r = WIO_CONTAINER_OF(pos, wio_req_impl, link);
            if (r->peer_id == WIO_ID_BOOT || r->peer_id >= e->nprocs_total)
                continue;
            wio_peer *p = e->peers[r->peer_id];
            if (p && p->state == WIO_PEER_IDLE && p->idle_closed &&
                now - p->idle_closed_at >= IDLE_PROBE_DELAY) {
                probe = p;
                break;
            }
        }
        if (!probe)
            return;
        peer_connect(e, probe);
    }
}

int wio_engine_progress(wio_engine *e, int timeout_ms)
{
    int n = transport_table[0]->progress(e, timeout_ms);
    if (n < 0)
        return -n;
    /* the periodic checks need the clock, which costs as much as a ring poll: when polling,
     * read it only every 64th call */
    if (timeout_ms == 0 && (++e->progress_calls & 63) != 0)
        return 0;
    double now = wio_now();
    if (now >= e->next_check) {
        e->next_check = now + 0.1;
        retry_lost_races(e, now);
        probe_idle_closed_peers(e, now);
        enforce_connection_cap(e);
    }
    return 0;
}

int wio_engine_wait_until(wio_engine *e, int (*ready)(void *), void *arg, double deadline)
{
    double t0 = -1;
    double spin = e->oversubscribed ? 0 : e->cfg.spin_us * 1e-6;
    double yield = spin + e->cfg.yield_us * 1e-6;
    for (unsigned iter = 0;; iter++) {
        int rc = wio_engine_progress(e, 0);
        if (rc)
            return rc;
        if (ready(arg))
            return 0;
        if (spin > 0 && (iter & 15) != 15)
            continue; /* spinning: the clock is read every 16th round only */
        double now = wio_now();
        if (t0 < 0)
            t0 = now;
        if (deadline > 0 && now >= deadline)
            return WAITIO_ERR_TIMEOUT;
        double waited = now - t0;
        if (waited < spin)
            continue;
        if (waited < yield) {
            sched_yield();
            continue;
        }
        int ms = 100;
        if (deadline > 0 && (deadline - now) * 1000 < ms)
            ms = (int)((deadline - now) * 1000) + 1;
        if ((rc = wio_engine_progress(e, ms)))
            return rc;
        if (ready(arg))
            return 0;
    }
}

/* ------------------------------------------------------------------------------------ */
/* point-to-point                                                                       */

static int check_group_rank(wio_engine *e, wio_group *g, int rank, int allow_any)
{
    (void)e;
    if (!g)
        return wio_fail(WAITIO_ERR_GROUP, "NULL group");
    if (g->my_rank == WAITIO_UNDEFINED)
        return wio_fail(WAITIO_ERR_NOT_MEMBER, "this process is not a member of group %u",
                        (unsigned)g->gid);
    if (allow_any && rank == WAITIO_ANY_SOURCE)
        return 0;
    if (rank < 0 || rank >= g->size)
        return wio_fail(WAITIO_ERR_GROUP, "rank %d is outside group %u of size %d", rank,
                        (unsigned)g->gid, g->size);
    return 0;
}

static int self_send_unsupported(void)
{
    return wio_fail(WAITIO_ERR_ARG, "sending to oneself is not supported");
}

int wio_engine_isend(wio_engine *e, wio_group *g, int dst, const void *buf, size_t len,
                     uint64_t tag, uint32_t ctx, wio_req_impl **out)
{
    int rc = check_group_rank(e, g, dst, 0);
    if (rc)
        return rc;
    if (tag == WAITIO_ANY_TAG)
        return wio_fail(WAITIO_ERR_ARG, "WAITIO_ANY_TAG cannot be sent");
    if (!buf && len)
        return wio_fail(WAITIO_ERR_ARG, "NULL buffer with length %zu", len);
    uint32_t pid = g->members[dst];
    if (pid == e->my_id)
        return self_send_unsupported();
    wio_peer *p = wio_engine_peer(e, pid);
    wio_req_impl *r = p ? wio_req_alloc(e, WIO_REQ_SEND) : NULL;
    if (!r)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory posting a send");
    r->grp = g;
    r->gid = g->gid | ctx;
    r->rank = dst;
    r->peer_id = pid;
    r->tag = tag;
    r->buf = (uint8_t *)buf;
    r->cap = r->msg_len = len;
    r->status.source = dst;
    r->status.tag = tag;
    r->status.len = len;
    r->item.h.gid = g->gid | ctx;
    r->item.h.src = (uint32_t)g->my_rank;
    r->item.h.tag = tag;
    *out = r;
    if (p->state == WIO_PEER_OPEN && !peer_gone(p)) {
        send_or_hold(e, p, r);
        return 0;
    }
    /* tentatively eager; decided for real when the connection opens */
    r->state = WIO_RS_SEND_EAGER;
    r->item.h.type = WIO_FT_EAGER;
    r->item.payload = r->buf;
    r->item.total = len;
    r->item.done = send_eager_done;
    peer_queue(e, p, &r->item);
    return 0;
}

int wio_engine_irecv(wio_engine *e, wio_group *g, int src, void *buf, size_t len, uint64_t tag,
                     uint32_t ctx, wio_req_impl **out)
{
    int rc = check_group_rank(e, g, src, 1);
    if (rc)
        return rc;
    if (!buf && len)
        return wio_fail(WAITIO_ERR_ARG, "NULL buffer with length %zu", len);
    uint32_t pid = src == WAITIO_ANY_SOURCE ? WIO_ID_BOOT : g->members[src];
    if (pid == e->my_id)
        return self_send_unsupported();
    wio_req_impl *r = wio_req_alloc(e, WIO_REQ_RECV);
    if (!r)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory posting a receive");
    r->grp = g;
    r->gid = g->gid | ctx;
    r->rank = src;
    r->peer_id = pid;
    r->tag = tag;
    r->buf = buf;
    r->cap = len;
    r->state = WIO_RS_RECV_POSTED;
    *out = r;
    wio_unexp *ux = wio_match_take_unexpected(&e->unexpected, r);
    if (ux) {
        r->peer_id = ux->peer_id;
        r->status.source = (int)ux->src;
        r->status.tag = ux->tag;
        if (ux->kind == WIO_UX_RTS) {
            wio_peer *p = e->peers[ux->peer_id];
            uint64_t len_total = ux->len, sender = ux->remote_id;
            wio_cma_desc cma = ux->cma;
            int has_cma = ux->has_cma;
            unexp_free(e, ux);
            release_credit(e, p->id, RTS_COST - EAGER_OVERHEAD);
            recv_matched_rts(e, p, r, len_total, sender, has_cma ? &cma : NULL);
        } else if (ux->complete) {
            deliver_unexpected(e, r, ux);
        } else {
            r->state = WIO_RS_RECV_UNEXP;
            r->unexp = ux;
            ux->waiting = r;
        }
        return 0;
    }
    if (pid != WIO_ID_BOOT) {
        wio_peer *p = wio_engine_peer(e, pid);
        if (!p) {
            wio_req_complete(r, WAITIO_ERR_NOMEM);
            return 0;
        }
        if (peer_gone(p)) {
            wio_req_complete(r, p->err ? p->err : WAITIO_ERR_PEER_FINALIZED);
            return 0;
        }
        /* connect now so that a dead peer is noticed, unless its connection was closed to stay
         * under the cap: then it reconnects when it has something to send */
        if (p->state == WIO_PEER_IDLE && !p->idle_closed)
            peer_connect(e, p);
        if (peer_gone(p)) {
            wio_req_complete(r, p->err);
            return 0;
        }
    }
    wio_list_insert_tail(&e->posted, &r->link);
    return 0;
}

/* "PB 1 rank 0 (process 3)" */
static void describe_process(const wio_engine *e, uint32_t id, char *buf, size_t cap)
{
    int pb = 0;
    while (pb + 1 < e->npb && e->pb_offset[pb + 1] <= id)
        pb++;
    snprintf(buf, cap, "PB %d rank %u (process %u)", pb, (unsigned)(id - e->pb_offset[pb]), (unsigned)id);
}

void wio_engine_explain(wio_engine *e, const wio_req_impl *r)
{
    const char *dir = r->kind == WIO_REQ_SEND ? "send to" : "receive from";
    char who[64] = "any source";
    if (r->peer_id != WIO_ID_BOOT && r->peer_id < e->nprocs_total)
        describe_process(e, r->peer_id, who, sizeof who);
    const wio_peer *p = r->peer_id < e->nprocs_total ? e->peers[r->peer_id] : NULL;
    switch (r->status.error) {
    case WAITIO_ERR_PEER:
    case WAITIO_ERR_PEER_FINALIZED:
        wio_set_message("%s %s (group %u rank %d, tag %lu) failed: %s %s%s", dir, who,
                        (unsigned)(r->gid & ~WIO_CTX_COLL), r->rank, (unsigned long)r->tag,
                        r->status.error == WAITIO_ERR_PEER ? "connection lost:" : "the peer finalized:",
                        p && p->why[0] ? p->why : "gone", "");
        break;
    case WAITIO_ERR_TRUNCATE:
        wio_set_message("receive from %s (tag %lu): the message has %zu bytes, the buffer %zu",
                        who, (unsigned long)r->status.tag, r->status.len, r->cap);
        break;
    case WAITIO_ERR_CANCELLED:
        wio_set_message("%s %s was cancelled", dir, who);
        break;
    default:
        wio_set_message("%s %s failed: %s", dir, who, waitio_strerror(r->status.error));
        break;
    }
}

int wio_engine_cancel(wio_engine *e, wio_req_impl *r)
{
    (void)e;
    if (r->kind != WIO_REQ_RECV || r->state != WIO_RS_RECV_POSTED)
        return wio_fail(WAITIO_ERR_ARG, "only receives that have not matched can be cancelled");
    wio_req_complete(r, WAITIO_ERR_CANCELLED);
    return 0;
}

/* ------------------------------------------------------------------------------------ */
/* start and finalize                                                                   */

static int all_peers_closed(void *arg)
{
    wio_engine *e = arg;
    for (uint32_t i = 0; i < e->nprocs_total; i++) {
        wio_peer *p = e->peers[i];
        if (p && p->tconn)
            return 0;
    }
    return 1;
}

static int all_sends_flushed(void *arg)
{
    wio_engine *e = arg;
    for (uint32_t i = 0; i < e->nprocs_total; i++) {
        wio_peer *p = e->peers[i];
        if (p && p->state == WIO_PEER_OPEN && p->tconn && !wio_tcp_conn_idle(p->tconn))
            return 0;
    }
    return 1;
}

int wio_engine_finalize(wio_engine *e)
{
    e->finalizing = 1;
    wio_debug("finalize: %llu frames in, %llu out; %llu messages (%llu bytes) read by single copy",
              (unsigned long long)e->frames_in, (unsigned long long)e->frames_out,
              (unsigned long long)e->single_copies, (unsigned long long)e->single_copy_bytes);
    double deadline = wio_now() + e->cfg.finalize_timeout;
    /* frames already handed to the kernel-side queues go out first, then BYE, then we wait
     * for each peer to close its side, so no data in flight is cut off by a reset */
    int rc = wio_engine_wait_until(e, all_sends_flushed, e, deadline);
    for (uint32_t i = 0; i < e->nprocs_total; i++) {
        wio_peer *p = e->peers[i];
        if (!p)
            continue;
        if (p->state == WIO_PEER_OPEN)
            send_bye(e, p);
        else if (p->tconn && p->state != WIO_PEER_CLOSING)
            p->t->close_peer(e, p, WAITIO_ERR_CANCELLED);
        drop_pending(p, WAITIO_ERR_CANCELLED);
    }
    int rc2 = wio_engine_wait_until(e, all_peers_closed, e, deadline);
    if (rc2 == WAITIO_ERR_TIMEOUT)
        wio_info("finalize: some peers did not close within %.1f s", e->cfg.finalize_timeout);
    for (uint32_t i = 0; i < e->nprocs_total; i++) {
        wio_peer *p = e->peers[i];
        if (p && p->tconn)
            p->t->close_peer(e, p, WAITIO_ERR_CANCELLED);
    }
    transport_table[0]->close(e);
    return rc == WAITIO_ERR_TIMEOUT ? 0 : rc;
}

/* shm moves data between processes of one host through shared memory (connections are set up,
 * watched and woken through a local socket); tcp reaches every process. */
static int parse_transports(wio_engine *e)
{
    char list[sizeof e->cfg.transports];
    memcpy(list, e->cfg.transports, sizeof list);
    e->use_tcp = e->use_shm = 0;
    char *save = NULL;
    for (char *tok = strtok_r(list, ",: ", &save); tok; tok = strtok_r(NULL, ",: ", &save)) {
        if (strcmp(tok, "tcp") == 0)
            e->use_tcp = 1;
        else if (strcmp(tok, "shm") == 0)
            e->use_shm = 1;
        else if (strcmp(tok, "file") == 0)
            wio_info("transport 'file' is not available in this build; skipped");
        else
            return wio_fail(WAITIO_ERR_ENV, "WAITIO_TRANSPORTS: unknown transport '%s'", tok);
    }
    if (!e->use_tcp && !e->use_shm)
        return wio_fail(WAITIO_ERR_ENV, "WAITIO_TRANSPORTS='%s' names no available transport "
                        "(available: shm, tcp)", e->cfg.transports);
    return 0;
}

static int same_host(const wio_engine *e, uint32_t peer_id)
{
    return e->table && peer_id < e->nprocs_total &&
           e->table[peer_id].host_id == e->table[e->my_id].host_id;
}

static int on_local_peer(void *ctx, uint32_t peer_id)
{
    wio_engine *e = ctx;
    return e->use_shm && same_host(e, peer_id);
}

/* With WAITIO_TRANSPORTS=shm only, processes on other hosts cannot be reached. */
static int reachable(const wio_engine *e, uint32_t peer_id)
{
    return e->use_tcp || same_host(e, peer_id);
}

int wio_engine_check_transports(wio_engine *e) { return parse_transports(e); }

uint32_t wio_engine_max_conns(const wio_config *cfg)
{
    uint32_t n = (uint32_t)cfg->max_connections;
    struct rlimit rl;
    if (!n && getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        /* keep some for the program */
        n = rl.rlim_cur > 128 ? (uint32_t)(rl.rlim_cur - 64) : rl.rlim_cur > 16 ? (uint32_t)(rl.rlim_cur / 2) : 8;
    return n;
}

int wio_engine_open(wio_engine *e, wio_addr *self) { return transport_table[0]->open(e, self); }

int wio_engine_start(wio_engine *e)
{
    e->peers = calloc(e->nprocs_total, sizeof *e->peers);
    if (!e->peers)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory for %u peers", (unsigned)e->nprocs_total);
    wio_list_init(&e->posted);
    wio_list_init(&e->unexpected);
    if (e->use_shm)
        wio_shm_sweep_stale();
    uint32_t local = 0;
    for (uint32_t i = 0; i < e->nprocs_total; i++)
        if (e->table[i].host_id == e->table[e->my_id].host_id)
            local++;
    e->eager_credit = wio_config_credit_per_peer(&e->cfg, e->nprocs_total - 1);
    e->max_conns = wio_engine_max_conns(&e->cfg);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    e->oversubscribed = cores > 0 && local > (uint32_t)cores;
    /* Two copies through a ring overlap when both ends have a core (and then beat the kernel's
     * page pinning on the machines measured); one copy wins when they must take turns. */
    /* auto: not for root or CAP_SYS_PTRACE, whose reads the kernel never refuses (explicit 1
     * still works: docs/protocol.md, "Single copy") */
    int privileged = wio_cma_privileged();
    e->single_copy = wio_cma_supported() &&
                     (e->cfg.single_copy == -1 ? e->oversubscribed && !privileged : e->cfg.single_copy);
    e->pid = (uint64_t)getpid();
    if (e->cfg.single_copy == -1 && e->oversubscribed && privileged)
        wio_debug("single copy (WAITIO_SINGLE_COPY=auto) off: this process is privileged (root or "
                  "CAP_SYS_PTRACE)");
    int rc = transport_table[0]->start(e);
    if (rc)
        return rc;
    wio_debug("%u processes on this host, %ld cores%s", (unsigned)local, cores,
              e->oversubscribed ? ": oversubscribed, waiting yields at once" : "");
    return 0;
}
