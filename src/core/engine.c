/*
 * engine.c — the progress engine: peers and their connections, the point-to-point protocol
 * (eager with credit-based flow control, rendezvous RTS/CTS/DATA), matching of arriving
 * messages against posted receives, failure propagation, waiting and finalize.
 * docs/protocol.md describes the frames and the state machines implemented here.
 */
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <sched.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/api_lock.h"
#include "core/engine.h"
#include "core/trace.h"
#include "gpu/gpu.h"
#include "gpu/pipeline.h"

#define EAGER_OVERHEAD 64 /* credit charged per eager message on top of its payload */
#define RTS_COST 128      /* credit charged per rendezvous request (the receiver's queue entry) */
#define RECONNECT_DELAY 2.0
#define DROP_RETRIES 5        /* reconnects after the peer dropped our connect in its handshake */
#define DROP_RETRY_DELAY 0.05 /* the first one's delay, doubling */

wio_engine *wio_engine_current;

static void peer_fail(wio_engine *e, wio_peer *p, int err, const char *why);
static void make_room(wio_engine *e, const wio_peer *keep);

/* ------------------------------------------------------------------------------------ */
/* links: a peer's connections, through the transports' ops only                         */

static void link_init(wio_link *l, wio_peer *p, int bulk)
{
    l->peer = p;
    l->bulk = bulk;
}

static void link_send(wio_link *l, wio_send_item *it) { l->tp->ops->send(l->conn, it); }

static int link_idle(const wio_link *l) { return !l->conn || l->tp->ops->conn_idle(l->conn); }

static const char *link_desc(const wio_link *l) { return l->conn ? l->tp->ops->conn_desc(l->conn) : "-"; }

/* Closes the link's connection now (no closed callback follows). */
static void link_close(wio_link *l, int err)
{
    if (!l->conn)
        return;
    void *c = l->conn;
    l->conn = NULL;
    l->tp->ops->conn_close(c, err);
}

/* Our connection lost a simultaneous connect: the transport winds it down quietly. */
static void link_abandon(wio_link *l)
{
    void *c = l->conn;
    l->conn = NULL;
    if (c)
        l->tp->ops->conn_abandon(c);
}

static void link_shutdown(wio_link *l)
{
    if (l->conn)
        l->tp->ops->conn_shutdown(l->conn);
}

/* The first transport, in WAITIO_TRANSPORTS order, that reaches the peer and was not tried yet
 * for this connect (a transport whose connect failed falls through to the next). */
static const wio_tp_slot *link_choose(const wio_engine *e, const wio_link *l)
{
    if (l->bulk)
        return e->bulk_tp >= 0 && !(l->tried & (1u << e->bulk_tp)) &&
                       e->tps[e->bulk_tp].ops->reachable(e->tps[e->bulk_tp].ctx, l->peer->id)
                   ? &e->tps[e->bulk_tp]
                   : NULL;
    for (int i = 0; i < e->ntps; i++)
        if (i != e->bulk_tp && !(l->tried & (1u << i)) && e->tps[i].ops->reachable(e->tps[i].ctx, l->peer->id))
            return &e->tps[i];
    return NULL;
}

static int link_reachable(const wio_engine *e, uint32_t peer_id)
{
    for (int i = 0; i < e->ntps; i++)
        if (i != e->bulk_tp && e->tps[i].ops->reachable(e->tps[i].ctx, peer_id))
            return 1;
    return 0;
}

/* ------------------------------------------------------------------------------------ */
/* peers                                                                                */

wio_peer *wio_engine_peer(wio_engine *e, uint32_t id)
{
    if (e->peers[id])
        return e->peers[id];
    wio_peer *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->engine = e;
    p->id = id;
    p->state = WIO_PEER_IDLE;
    link_init(&p->main, p, 0);
    link_init(&p->bulk, p, 1);
    wio_list_init(&p->pending);
    wio_list_init(&p->bulk_pending);
    wio_list_init(&p->held);
    p->credit_item.owner = p;
    p->bye_item.owner = p;
    e->peers[id] = p;
    return p;
}

/* Opens the main link with the best transport not tried yet; -1 if none is left. */
static int link_connect(wio_engine *e, wio_link *l)
{
    const wio_tp_slot *tp;
    while ((tp = link_choose(e, l))) {
        l->tried |= 1u << (unsigned)(tp - e->tps);
        void *conn = NULL;
        /* the transport reports a failure only after connect returned (transport.h): a closed
         * callback in between would leave l->conn naming a connection already freed */
        l->connecting = 1;
        int rc = tp->ops->connect(tp->ctx, l->peer->id, l->bulk ? WIO_TPC_BULK : 0, l, &conn);
        l->connecting = 0;
        if (rc == 0) {
            l->tp = tp;
            l->conn = conn;
            l->outgoing = 1;
            return 0;
        }
        wio_debug("connect to process %u over %s failed: %s", (unsigned)l->peer->id, tp->ops->name,
                  waitio_error_message());
    }
    return -1;
}

/* ------------------------------------------------------------------------------------ */
/* hybrid: large messages' DATA through the bulk transport, everything else on the main link */

static void peer_queue(wio_engine *e, wio_peer *p, wio_send_item *it);
static int peer_gone(const wio_peer *p);

/* The bulk transport cannot reach the peer: its DATA goes on the main link after all. */
static void bulk_fall_back(wio_engine *e, wio_peer *p)
{
    while (!wio_list_empty(&p->bulk_pending)) {
        wio_send_item *it = WIO_CONTAINER_OF(p->bulk_pending.next, wio_send_item, link);
        wio_list_remove(&it->link);
        peer_queue(e, p, it);
    }
}

static void bulk_queue(wio_engine *e, wio_peer *p, wio_send_item *it)
{
    wio_link *l = &p->bulk;
    if (l->conn && l->open) {
        e->frames_out++;
        link_send(l, it);
        return;
    }
    wio_list_insert_tail(&p->bulk_pending, &it->link);
    if (l->conn)
        return;
    l->tried = 0;
    if (link_connect(e, l) != 0) {
        wio_info("no bulk connection to process %u (%s); its large messages stay on %s",
                 (unsigned)p->id, waitio_error_message(), p->main.tp ? p->main.tp->ops->name : "the main link");
        bulk_fall_back(e, p);
    }
}

/* A DATA item of a pipelined device message (src/gpu/pipeline.c), handed out once per run of
 * copied chunks: to the link its message's DATA goes on. */
void wio_engine_queue_data(wio_engine *e, wio_peer *p, wio_send_item *it, int bulk)
{
    if (bulk)
        bulk_queue(e, p, it);
    else
        peer_queue(e, p, it);
}

static void bulk_opened(wio_engine *e, wio_peer *p)
{
    wio_link *l = &p->bulk;
    l->open = 1;
    wio_debug("bulk connection to process %u open (%s)", (unsigned)p->id, link_desc(l));
    while (!wio_list_empty(&p->bulk_pending) && l->conn) {
        wio_send_item *it = WIO_CONTAINER_OF(p->bulk_pending.next, wio_send_item, link);
        wio_list_remove(&it->link);
        e->frames_out++;
        link_send(l, it);
    }
}

/* Items that were on the bulk connection completed with the error (their requests fail); the
 * end of a bulk connection alone does not fail the peer: its main link says whether it lives. */
static void bulk_closed(wio_engine *e, wio_peer *p, int err, const char *why, int rejected)
{
    p->bulk.open = 0;
    if (rejected == WIO_TP_REJECTED || peer_gone(p))
        return; /* the peer's own bulk connection wins and opens; or nothing more goes out */
    wio_debug("bulk connection to process %u closed (%s: %s)", (unsigned)p->id, waitio_strerror(err), why);
    if (!wio_list_empty(&p->bulk_pending))
        bulk_fall_back(e, p);
}

static void peer_connect(wio_engine *e, wio_peer *p)
{
    if (!link_reachable(e, p->id)) {
        peer_fail(e, p, WAITIO_ERR_UNREACHABLE, "no transport of WAITIO_TRANSPORTS reaches it "
                  "(on another host, without tcp?)");
        return;
    }
    make_room(e, p);
    p->state = WIO_PEER_CONNECTING;
    p->connect_retry_at = 0;
    p->main.tried = 0;
    if (link_connect(e, &p->main) != 0)
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
        link_send(&p->main, it);
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

/* A zeroed entry for an unexpected message, from the free list when it has one. An eager
 * payload of at most WIO_UNEXP_INLINE bytes goes into the entry itself. */
static wio_unexp *unexp_new(wio_engine *e, int kind, uint32_t peer_id, const wio_frame_hdr *h)
{
    wio_unexp *ux;
    if (e->unexp_nfree) {
        ux = WIO_CONTAINER_OF(e->unexp_free.next, wio_unexp, link);
        wio_list_remove(&ux->link);
        e->unexp_nfree--;
    } else if (!(ux = malloc(sizeof *ux))) {
        return NULL;
    }
    memset(ux, 0, offsetof(wio_unexp, small));
    ux->kind = kind;
    ux->peer_id = peer_id;
    ux->gid = h->gid;
    ux->src = h->src;
    ux->tag = h->tag;
    return ux;
}

static void unexp_release(wio_engine *e, wio_unexp *ux)
{
    if (ux->data != ux->small)
        free(ux->data);
    if (e->unexp_nfree < WIO_UNEXP_FREE_MAX) {
        wio_list_insert_tail(&e->unexp_free, &ux->link);
        e->unexp_nfree++;
    } else {
        free(ux);
    }
}

static void unexp_free(wio_engine *e, wio_unexp *ux)
{
    wio_mq_remove_unexpected(&e->mq, ux);
    if (ux->kind == WIO_UX_EAGER)
        e->unexpected_bytes -= ux->len;
    unexp_release(e, ux);
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
    else if (r->msg_len == 0 || r->rdv_done)
        wio_req_complete(r, 0);
}

/* A large message may be read in place by the receiver when the peer's transport can (shm's
 * single copy): the RTS then carries the transport's descriptor of the buffer. */
static void prepare_rts(wio_engine *e, wio_peer *p, wio_req_impl *r)
{
    (void)e;
    r->state = WIO_RS_SEND_RTS;
    r->item.h.type = WIO_FT_RTS;
    r->item.h.id = wio_req_id(r);
    r->item.h.aux = r->msg_len;
    r->item.h.flags = 0;
    r->item.total = 0;
    r->item.done = send_rts_done;
    const wio_link *l = &p->main;
    size_t n;
    if (r->gpu == WIO_GPU_SEND_IPC) /* a device buffer: the CUDA IPC descriptor, to a peer of this host */
        n = l->tp->ops->rdv_pack == NULL || strcmp(l->tp->ops->name, "shm") ? 0 : WIO_GPU_DESC_LEN;
    else if (r->gpu_pipe) /* staging still being filled chunk by chunk: DATA frames only */
        n = 0;
    else
        n = r->msg_len > 0 && l->tp->ops->rdv_pack ? l->tp->ops->rdv_pack(l->conn, r->buf, r->msg_len, r->rdv_wire) : 0;
    r->rdv_offered = n > 0;
    r->rdv_len = (uint8_t)n;
    if (n) {
        r->item.h.flags = WIO_FF_CMA;
        r->item.payload = r->rdv_wire;
        r->item.total = n;
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
    if (r->msg_len <= p->eager_limit && cost <= p->send_credit && r->gpu != WIO_GPU_SEND_IPC) {
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
        /* held: tentatively eager until credit decides (release_held), so that a peer that
         * fails meanwhile completes it like any queued message (drop_pending calls done) */
        r->state = WIO_RS_SEND_EAGER;
        r->item.h.type = WIO_FT_EAGER;
        r->item.payload = r->buf;
        r->item.total = r->msg_len;
        r->item.done = send_eager_done;
        wio_list_insert_tail(&p->held, &r->item.link);
        return;
    }
    e->frames_out++;
    link_send(&p->main, &r->item);
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
        link_send(&p->main, it);
    }
}

static void send_cts(wio_engine *e, wio_peer *p, wio_req_impl *r, uint64_t sender_id, int trunc)
{
    wio_send_item *it = &r->item;
    memset(&it->h, 0, sizeof it->h);
    it->h.type = WIO_FT_CTS;
    it->h.id = sender_id;
    it->h.aux = wio_req_id(r);
    it->h.flags = (uint16_t)((trunc ? WIO_FF_TRUNC : 0) | (r->rdv_done ? WIO_FF_CMA : 0));
    it->total = 0;
    it->chunk = 0;
    it->done = cts_done;
    r->cts_trunc = trunc;
    r->remote_id = sender_id;
    if (!trunc)
        r->state = WIO_RS_RECV_RDV;
    peer_queue(e, p, it);
}

/* A CUDA IPC descriptor (gpu_isend): maps the sender's allocation (cached per peer) and copies
 * the message with the GPU's copy engines, to the user's device buffer or host memory alike.
 * The message must lie inside the mapped allocation (the driver's range of it). Any failure
 * leaves the message to DATA frames, which the sender then stages. */
static void gpu_read_in_place(wio_engine *e, wio_peer *p, wio_req_impl *r, const uint8_t *desc)
{
    wio_gpu_ipc_handle h;
    memcpy(h.bytes, desc + 1, WIO_GPU_IPC_HANDLE_LEN);
    uint64_t off = wio_get_le64(desc + 1 + WIO_GPU_IPC_HANDLE_LEN);
    uint64_t len = wio_get_le64(desc + 9 + WIO_GPU_IPC_HANDLE_LEN);
    h.id = wio_get_le64(desc + 17 + WIO_GPU_IPC_HANDLE_LEN);
    void *base;
    wio_mem_kind kind;
    if (len != r->msg_len || off > UINT64_MAX - len || wio_gpu_ipc_open(p->id, &h, &base) != 0 ||
        wio_gpu_mem_kind((const uint8_t *)base + off, (size_t)len, &kind, NULL) != 0 || kind != WIO_MEM_CUDA)
        return;
    void *dst = r->gpu == WIO_GPU_RECV ? r->gpu_user : r->buf;
    if (wio_gpu_copy(dst, (const uint8_t *)base + off, r->msg_len) != 0)
        return;
    if (r->gpu == WIO_GPU_RECV)
        r->gpu = WIO_GPU_RECV_DIRECT;
    r->received = r->msg_len;
    r->rdv_done = 1;
    e->gpu_ipc_copies++;
}

/* Reads the message straight from the sender's buffer through the transport (shm's single
 * copy) or CUDA IPC; on failure the CTS asks for DATA frames as usual, which overwrite whatever
 * part was copied. */
static void read_in_place(wio_engine *e, wio_peer *p, wio_req_impl *r, const uint8_t *desc, size_t desc_len)
{
    if (desc_len == WIO_GPU_DESC_LEN && desc[0] == WIO_GPU_DESC_MARK) {
        gpu_read_in_place(e, p, r, desc);
        return;
    }
    const wio_link *l = &p->main;
    if (!l->conn || !l->tp->ops->rdv_get || l->tp->ops->rdv_get(l->conn, desc, desc_len, r->buf, r->msg_len) != 0)
        return;
    r->received = r->msg_len;
    r->rdv_done = 1;
    e->single_copies++;
    e->single_copy_bytes += r->msg_len;
}

/* A receive matched an RTS (at arrival or from the unexpected queue); desc is the sender's
 * direct-read descriptor (desc_len 0: none). */
static void recv_matched_rts(wio_engine *e, wio_peer *p, wio_req_impl *r, uint64_t len,
                             uint64_t sender_id, const uint8_t *desc, size_t desc_len)
{
    r->msg_len = len;
    r->status.len = len;
    r->peer_id = p->id;
    WIO_TRACE(WIO_TR_MATCH, 0, p->id, r->gid, r->status.tag, len, r->tr_msg, 0, 0);
    if (len > r->cap) {
        r->status.error = WAITIO_ERR_TRUNCATE;
        r->state = WIO_RS_RECV_RDV;
        if (desc_len && p->main.conn && p->main.tp->ops->rdv_decline)
            p->main.tp->ops->rdv_decline(p->main.conn, desc, desc_len);
        send_cts(e, p, r, sender_id, 1);
        return;
    }
    if (desc_len && len > 0)
        read_in_place(e, p, r, desc, desc_len);
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
    if (p->state != WIO_PEER_OPEN || !p->main.conn || !link_idle(&p->main) || !link_idle(&p->bulk) ||
        !wio_list_empty(&p->pending) || !wio_list_empty(&p->held) || p->credit_item_busy ||
        p->main.rx_req || p->main.rx_unexp || p->bulk.rx_req)
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
    link_send(&p->main, it);
}

static void ignore_done(wio_send_item *it, int err) { (void)it; (void)err; }

/* After our ACK is out: half-close; the initiator's close ends it (idle_close_finished). */
static void ack_done(wio_send_item *it, int err)
{
    wio_peer *p = it->owner;
    if (!err)
        link_shutdown(&p->main);
}

static void mark_idle_closed(wio_peer *p)
{
    WIO_ASSERT(p->state == WIO_PEER_IDLE_CLOSING);
    p->state = WIO_PEER_IDLE;
    p->idle_closed = 1;
    p->idle_closed_at = wio_now();
    p->idle_close_heard = 0;
    p->connect_back = 0;
    p->connect_retry_at = 0;
    wio_debug("idle connection to process %u closed", (unsigned)p->id);
}

/* The old connection is gone: queued traffic reconnects, ours or the peer's (it connected while
 * we were closing and was told to retry: connecting now spares it the retry delay). */
static void idle_close_finished(wio_engine *e, wio_peer *p)
{
    int back = p->connect_back;
    mark_idle_closed(p);
    if (!wio_list_empty(&p->pending) || back)
        peer_connect(e, p);
}

static void close_now(wio_engine *e, wio_peer *p)
{
    link_close(&p->main, WAITIO_ERR_PEER);
    idle_close_finished(e, p);
}

static void reopen_after_nack(wio_engine *e, wio_peer *p)
{
    p->state = WIO_PEER_OPEN;
    p->connect_back = 0; /* the connection stays: nothing to connect back to */
    while (!wio_list_empty(&p->pending) && p->state == WIO_PEER_OPEN) {
        wio_send_item *it = WIO_CONTAINER_OF(p->pending.next, wio_send_item, link);
        wio_list_remove(&it->link);
        if (it->h.type == WIO_FT_EAGER && it->done == send_eager_done) {
            send_or_hold(e, p, it->owner);
            continue;
        }
        e->frames_out++;
        link_send(&p->main, it);
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
    if (p->state == WIO_PEER_IDLE_CLOSING) {
        /* both asked at once: both are done sending. Each half-closes and waits for the other's
         * close, so that neither is IDLE (free to accept a new connection from the other) before
         * the other has read its IDLE_CLOSE; see adopt_abandoned. */
        p->idle_close_heard = 1;
        link_shutdown(&p->main);
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
        p->idle_close_heard = 1;
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
        n += p && p->main.conn && p->state != WIO_PEER_IDLE_CLOSING;
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
        victim->idle_close_heard = 0;
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

static const char *peer_state_name(int state)
{
    static const char *const names[] = {"idle", "connecting", "open", "closing", "idle-closing", "failed"};
    return state >= 0 && state <= WIO_PEER_FAILED ? names[state] : "?";
}

/* Our connection that lost a simultaneous connect was accepted by the peer after all (it decided
 * after the connection we kept had gone, e.g. closed for the cap): the peer has bound it, so it
 * becomes ours again, replacing whatever we have in progress. Refusing it would close a
 * connection the peer holds open, which fails us there.
 *
 * The peer accepted it while it was IDLE, i.e. done with the kept connection's idle close. We may
 * still be waiting for that connection's end; if we read the peer's last frame on it (its
 * IDLE_CLOSE, which we answered or which crossed ours), nothing more comes on it and it ends here.
 * A peer answers ACK, or half-closes after both asked, only after reading our IDLE_CLOSE, and
 * becomes IDLE only when we answered or closed, so an adoption finds us IDLE_CLOSING only after
 * we read its last frame. */
static int adopt_abandoned(wio_engine *e, wio_peer *p, wio_link *l, const wio_tp_slot *tp, void *conn, void **user)
{
    if (!l->bulk && p->state == WIO_PEER_IDLE_CLOSING && p->idle_close_heard) {
        link_close(&p->main, WAITIO_ERR_PEER);
        mark_idle_closed(p);
    }
    if (l->bulk ? l->open : (p->state == WIO_PEER_OPEN || p->state == WIO_PEER_IDLE_CLOSING)) {
        /* a connect race of a good run, settled here: information, not a warning */
        wio_info("process %u accepted a connection of ours that lost a simultaneous connect, "
                 "while ours is %s: refusing it (the peer will see it close)",
                 (unsigned)p->id, peer_state_name(p->state));
        return WIO_TP_REFUSE;
    }
    if (l->conn)
        link_abandon(l);
    if (!l->bulk) {
        make_room(e, p);
        p->state = WIO_PEER_CONNECTING;
    }
    l->tp = tp;
    l->conn = conn;
    l->outgoing = 1;
    *user = l;
    return WIO_TP_ACCEPT;
}

static int on_incoming(void *ctx, void *conn, uint32_t peer_id, unsigned flags, void **user)
{
    const wio_tp_slot *tp = ctx;
    wio_engine *e = tp->engine;
    if (peer_id >= e->nprocs_total || peer_id == e->my_id)
        return WIO_TP_REFUSE;
    wio_peer *p = wio_engine_peer(e, peer_id);
    if (!p || peer_gone(p))
        return WIO_TP_REFUSE;
    wio_link *l = (flags & WIO_TPC_BULK) ? &p->bulk : &p->main;
    wio_debug("%s connection %s process %u over %s: peer %s, ours %s",
              (flags & WIO_TPC_ADOPT) ? "abandoned" : "incoming", (flags & WIO_TPC_ADOPT) ? "accepted by" : "from",
              (unsigned)peer_id, tp->ops->name, peer_state_name(p->state),
              l->conn ? (l->outgoing ? "outgoing" : "incoming") : "none");
    if (flags & WIO_TPC_ADOPT)
        return adopt_abandoned(e, p, l, tp, conn, user);
    if (!l->bulk) {
        if (p->state == WIO_PEER_OPEN)
            return WIO_TP_DUPLICATE;
        if (p->state == WIO_PEER_IDLE_CLOSING) {
            p->connect_back = 1;
            return WIO_TP_REJECT; /* our old connection still drains: we connect once it is gone */
        }
    }
    if (l->conn) {
        if (!l->outgoing)
            return WIO_TP_DUPLICATE;        /* a second incoming connection */
        if (e->my_id < peer_id)
            return WIO_TP_REJECT;           /* our connection wins; the peer drops its own */
        link_abandon(l);                    /* theirs wins: drop ours, keep the pending items */
    }
    if (!l->bulk) {
        make_room(e, p);
        p->state = WIO_PEER_CONNECTING;
    }
    l->tp = tp;
    l->conn = conn;
    l->outgoing = 0;
    *user = l;
    return WIO_TP_ACCEPT;
}

static void on_opened(void *ctx, void *user, const wio_peer_hello *hello)
{
    (void)ctx;
    wio_link *l = user;
    wio_peer *p = l->peer;
    wio_engine *e = p->engine;
    WIO_ASSERT(l->conn && (l->bulk || p->state == WIO_PEER_CONNECTING));
    l->drops = 0;
    if (l->bulk) {
        bulk_opened(e, p);
        return;
    }
    p->state = WIO_PEER_OPEN;
    p->eager_limit = (uint32_t)(hello->eager_limit < e->cfg.eager_limit ? hello->eager_limit
                                                                      : e->cfg.eager_limit);
    if (e->bulk_tp >= 0 && p->eager_limit >= e->bulk_threshold)
        p->eager_limit = (uint32_t)(e->bulk_threshold ? e->bulk_threshold - 1 : 0);
    /* After an idle close both sides keep counting where they were: every frame of the old
     * connection, with the credit it carried, was read before it closed. */
    if (!p->idle_closed) {
        p->send_credit = hello->eager_credit;
        p->recv_credit = (int64_t)e->eager_credit;
    }
    wio_debug("connection to process %u open (%s)", (unsigned)p->id, link_desc(l));
    p->tp_name = l->tp->ops->name;
    WIO_TRACE(WIO_TR_CONN_OPEN, 0, p->id, 0, 0, 0, 0, l->tp->ops->bit, 0);
    while (!wio_list_empty(&p->pending) && p->state == WIO_PEER_OPEN) {
        wio_send_item *it = WIO_CONTAINER_OF(p->pending.next, wio_send_item, link);
        wio_list_remove(&it->link);
        if (it->h.type == WIO_FT_EAGER && it->done == send_eager_done) {
            send_or_hold(e, p, it->owner); /* a new message, decided now */
            continue;
        }
        e->frames_out++;
        link_send(&p->main, it);
    }
}

static uint32_t on_take_credit(void *ctx, void *user)
{
    (void)ctx;
    wio_peer *p = ((wio_link *)user)->peer;
    uint32_t v = p->credit_owed;
    p->credit_owed = 0;
    return v;
}

/* An eager message must fit the limit and the credit we granted its sender. */
static int eager_charge(wio_engine *e, wio_peer *p, const wio_frame_hdr *h)
{
    int64_t cost = (int64_t)h->len + EAGER_OVERHEAD;
    if (h->len > e->cfg.eager_limit || cost > p->recv_credit) {
        wio_warn("process %u exceeded its eager limit or credit", (unsigned)p->id);
        return -1;
    }
    p->recv_credit -= cost;
    p->msgs_in++;
    p->bytes_in += h->len;
    return 0;
}

/* An eager message no receive was waiting for: queued with room for its payload. */
static wio_unexp *unexp_eager(wio_engine *e, wio_peer *p, const wio_frame_hdr *h)
{
    wio_unexp *ux = unexp_new(e, WIO_UX_EAGER, p->id, h);
    uint8_t *data = !ux ? NULL : h->len <= WIO_UNEXP_INLINE ? ux->small : malloc(h->len);
    if (!data) {
        if (ux)
            unexp_release(e, ux);
        wio_error("out of memory buffering an unexpected message");
        return NULL;
    }
    ux->len = h->len;
    ux->data = data;
    ux->msg = p->msgs_in;
    e->unexpected_bytes += h->len;
    wio_mq_add_unexpected(&e->mq, ux);
    return ux;
}

/* The posted receive an arriving eager message matches, with its status set, or NULL. */
static wio_req_impl *eager_match(wio_engine *e, wio_peer *p, const wio_frame_hdr *h)
{
    wio_req_impl *r = wio_mq_take_posted(&e->mq, p->id, h->gid, h->src, h->tag);
    if (r) {
        r->tr_msg = p->msgs_in;
        r->status.len = h->len;
        r->msg_len = h->len;
        if (h->len > r->cap)
            r->status.error = WAITIO_ERR_TRUNCATE;
    }
    return r;
}

static int begin_eager(wio_engine *e, wio_link *l, const wio_frame_hdr *h, uint8_t **dest)
{
    wio_peer *p = l->peer;
    if (eager_charge(e, p, h))
        return -1;
    wio_req_impl *r = eager_match(e, p, h);
    if (r) {
        r->state = WIO_RS_RECV_EAGER;
        if (!r->status.error)
            *dest = r->buf;
        l->rx_req = r;
        return 0;
    }
    wio_unexp *ux = unexp_eager(e, p, h);
    if (!ux)
        return -1;
    *dest = ux->data;
    l->rx_unexp = ux;
    return 0;
}

/* A whole eager message at hand (frame_whole): matched, copied and completed in one step. */
static int eager_whole(wio_engine *e, wio_peer *p, const wio_frame_hdr *h, const uint8_t *payload)
{
    if (eager_charge(e, p, h))
        return -1;
    wio_req_impl *r = eager_match(e, p, h);
    if (r) {
        if (!r->status.error && h->len)
            memcpy(r->buf, payload, h->len);
        release_credit(e, p->id, h->len);
        wio_req_complete(r, 0);
        return 0;
    }
    wio_unexp *ux = unexp_eager(e, p, h);
    if (!ux)
        return -1;
    if (h->len)
        memcpy(ux->data, payload, h->len);
    ux->complete = 1;
    return 0;
}

/* An RTS costs RTS_COST of credit; its optional payload is the transport's direct-read
 * descriptor, so it is matched once that has arrived (rts_arrived). */
static int begin_rts(wio_engine *e, wio_link *l, const wio_frame_hdr *h, uint8_t **dest)
{
    (void)e;
    wio_peer *p = l->peer;
    if (p->recv_credit < RTS_COST) {
        wio_warn("process %u sent a rendezvous request without credit", (unsigned)p->id);
        return -1;
    }
    int with_desc = (h->flags & WIO_FF_CMA) != 0;
    if ((with_desc ? (h->len == 0 || h->len > WIO_RDV_DESC_MAX || h->aux == 0) : h->len != 0)) {
        wio_warn("process %u sent a malformed rendezvous request", (unsigned)p->id);
        return -1;
    }
    p->recv_credit -= RTS_COST;
    p->msgs_in++;
    p->bytes_in += h->aux;
    *dest = with_desc ? l->rx_rdv : NULL;
    return 0;
}

static int rts_arrived(wio_engine *e, wio_link *l, const wio_frame_hdr *h)
{
    wio_peer *p = l->peer;
    size_t desc_len = (h->flags & WIO_FF_CMA) ? (size_t)h->len : 0;
    wio_req_impl *r = wio_mq_take_posted(&e->mq, p->id, h->gid, h->src, h->tag);
    if (r) {
        r->tr_msg = p->msgs_in;
        release_credit(e, p->id, RTS_COST - EAGER_OVERHEAD);
        recv_matched_rts(e, p, r, h->aux, h->id, l->rx_rdv, desc_len);
        return 0;
    }
    wio_unexp *ux = unexp_new(e, WIO_UX_RTS, p->id, h);
    if (!ux)
        return -1;
    ux->len = h->aux;
    ux->msg = p->msgs_in;
    ux->remote_id = h->id;
    ux->rdv_len = (uint8_t)desc_len;
    memcpy(ux->rdv, l->rx_rdv, desc_len);
    wio_mq_add_unexpected(&e->mq, ux);
    return 0;
}

/* An IPC offer the receiver could not take: the device buffer is copied to host staging now and
 * the DATA frames go from there. */
static int gpu_stage_late(wio_engine *e, wio_req_impl *s)
{
    void *bounce;
    int rc = wio_gpu_bounce_get(s->msg_len, &bounce);
    if (rc)
        return rc;
    /* chunk by chunk while earlier chunks are on the wire (src/gpu/pipeline.c), else whole */
    if (!wio_gpu_pipe_wanted(s->msg_len) || wio_gpu_send_pipe_new(s->gpu_user, bounce, s->msg_len, &s->gpu_pipe) != 0) {
        s->gpu_pipe = NULL;
        if ((rc = wio_gpu_copy(bounce, s->gpu_user, s->msg_len)) != 0) {
            wio_gpu_bounce_put(bounce, s->msg_len);
            return rc;
        }
    }
    s->gpu = WIO_GPU_SEND_STAGED;
    s->buf = bounce;
    s->gpu_bounce = bounce;
    s->gpu_bounce_len = s->msg_len;
    e->gpu_staged++;
    return 0;
}

static int begin_cts(wio_engine *e, wio_link *l, const wio_frame_hdr *h)
{
    wio_peer *p = l->peer;
    wio_req_impl *s = wio_req_lookup(e, h->id);
    if (!s || s->kind != WIO_REQ_SEND || s->state != WIO_RS_SEND_RTS || s->peer_id != p->id)
        return -1;
    /* whatever the transport started for its descriptor (ucx: UCX's rendezvous of the buffer)
     * ends before the send completes or DATA frames take over */
    const wio_link *m = &p->main;
    if (s->rdv_offered && s->gpu != WIO_GPU_SEND_IPC && m->conn && m->tp->ops->rdv_finish &&
        m->tp->ops->rdv_finish(m->conn, s->rdv_wire, s->rdv_len) != 0) {
        wio_req_complete(s, WAITIO_ERR_PEER);
        return -1;
    }
    if (h->flags & WIO_FF_TRUNC) { /* the receiver reports the truncation; the send succeeded */
        wio_req_complete(s, 0);
        return 0;
    }
    if (h->flags & WIO_FF_CMA) { /* the receiver read the message from our buffer */
        if (!s->rdv_offered)
            return -1;
        wio_req_complete(s, 0);
        return 0;
    }
    if (s->msg_len == 0) {
        wio_req_complete(s, 0);
        return 0;
    }
    if (s->gpu == WIO_GPU_SEND_IPC && gpu_stage_late(e, s) != 0) {
        /* the receiver waits for DATA we cannot produce: the connection fails (both sides
         * report it), the send with the device error */
        wio_req_complete(s, WAITIO_ERR_DEVICE);
        return -1;
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
    int bulk = e->bulk_tp >= 0 && s->msg_len >= e->bulk_threshold;
    if (bulk)
        e->rdv_bulk++;
    else
        e->rdv_main++;
    if (s->gpu_pipe) /* a device message copied to host memory chunk by chunk (src/gpu/pipeline.c) */
        wio_gpu_send_pipe_data(e, p, s, h->aux, bulk);
    else if (bulk)
        bulk_queue(e, p, it);
    else
        peer_queue(e, p, it);
    return 0;
}

static int begin_data(wio_engine *e, wio_link *l, const wio_frame_hdr *h, uint8_t **dest)
{
    wio_peer *p = l->peer;
    wio_req_impl *r = wio_req_lookup(e, h->id);
    if (!r || r->kind != WIO_REQ_RECV || r->state != WIO_RS_RECV_RDV || r->peer_id != p->id ||
        r->cts_trunc || h->aux != r->received || h->len > r->msg_len - r->received || h->len == 0)
        return -1;
    *dest = r->buf + h->aux;
    l->rx_req = r;
    return 0;
}

/* What every arriving frame does: counts, use for the connection cap, credit it brings back. */
static void frame_arrived(wio_engine *e, wio_peer *p, const wio_frame_hdr *h)
{
    e->frames_in++;
    p->last_used = ++e->use_tick;
    p->send_credit += h->credit;
    if (h->credit && !wio_list_empty(&p->held))
        release_held(e, p);
}

static int on_frame_begin(void *ctx, void *user, const wio_frame_hdr *h, uint8_t **dest)
{
    (void)ctx;
    wio_link *l = user;
    wio_peer *p = l->peer;
    wio_engine *e = p->engine;
    frame_arrived(e, p, h);
    l->rx_req = NULL;
    l->rx_unexp = NULL;
    *dest = NULL;
    if (l->bulk) /* a bulk connection carries rendezvous data, credit and its own end only */
        return h->type == WIO_FT_DATA ? begin_data(e, l, h, dest) : h->type == WIO_FT_CREDIT ? 0 : -1;
    switch (h->type) {
    case WIO_FT_EAGER: return begin_eager(e, l, h, dest);
    case WIO_FT_RTS: return begin_rts(e, l, h, dest);
    case WIO_FT_CTS: return begin_cts(e, l, h);
    case WIO_FT_DATA: return begin_data(e, l, h, dest);
    case WIO_FT_CREDIT:
    case WIO_FT_BYE:
    case WIO_FT_IDLE_CLOSE: return 0;
    case WIO_FT_RMA: /* one-sided layer (src/rma) */
    case WIO_FT_RMA_REPLY: return e->ext ? e->ext->frame_begin(e->ext_ctx, p->id, h, dest) : -1;
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

static int on_frame_end(void *ctx, void *user, const wio_frame_hdr *h)
{
    (void)ctx;
    wio_link *l = user;
    wio_peer *p = l->peer;
    wio_engine *e = p->engine;
    switch (h->type) {
    case WIO_FT_EAGER:
        if (l->rx_req) {
            release_credit(e, p->id, h->len);
            wio_req_complete(l->rx_req, 0);
        } else if (l->rx_unexp) {
            wio_unexp *ux = l->rx_unexp;
            ux->complete = 1;
            if (ux->waiting)
                deliver_unexpected(e, ux->waiting, ux);
        }
        break;
    case WIO_FT_RTS:
        l->rx_req = NULL;
        l->rx_unexp = NULL;
        return rts_arrived(e, l, h);
    case WIO_FT_DATA:
        if (l->rx_req) {
            l->rx_req->received += h->len;
            if (l->rx_req->gpu == WIO_GPU_RECV) /* into device memory: arrived chunks go on (src/gpu/pipeline.c) */
                wio_gpu_recv_pipe_progress(l->rx_req);
            if (l->rx_req->received == l->rx_req->msg_len)
                wio_req_complete(l->rx_req, 0);
        }
        break;
    case WIO_FT_BYE:
        l->rx_req = NULL;
        l->rx_unexp = NULL;
        peer_bye_received(e, p);
        return 0;
    case WIO_FT_IDLE_CLOSE:
        return idle_close_frame(e, p, h->flags);
    case WIO_FT_RMA: /* one-sided layer (src/rma) */
    case WIO_FT_RMA_REPLY:
        return e->ext ? e->ext->frame_end(e->ext_ctx, p->id, h) : -1;
    default:
        break;
    }
    l->rx_req = NULL;
    l->rx_unexp = NULL;
    return 0;
}

/* A whole frame at hand: an eager message on the main link (the small-message fast path) is
 * delivered in one step; any other frame takes the way of frame_begin and frame_end. */
static int on_frame_whole(void *ctx, void *user, const wio_frame_hdr *h, const uint8_t *payload)
{
    wio_link *l = user;
    if (h->type == WIO_FT_EAGER && !l->bulk) {
        wio_peer *p = l->peer;
        frame_arrived(p->engine, p, h);
        l->rx_req = NULL;
        l->rx_unexp = NULL;
        return eager_whole(p->engine, p, h, payload);
    }
    uint8_t *dest = NULL;
    if (on_frame_begin(ctx, user, h, &dest) != 0)
        return -1;
    if (dest && h->len)
        memcpy(dest, payload, h->len);
    return on_frame_end(ctx, user, h);
}

static void on_closed(void *ctx, void *user, int err, const char *why, int rejected)
{
    (void)ctx;
    wio_link *l = user;
    wio_peer *p = l->peer;
    wio_engine *e = p->engine;
    WIO_ASSERT(!l->connecting);
    l->conn = NULL;
    l->rx_req = NULL;
    l->rx_unexp = NULL;
    if (l->bulk) {
        bulk_closed(e, p, err, why, rejected);
        return;
    }
    if (p->state == WIO_PEER_IDLE_CLOSING && rejected != WIO_TP_REJECTED) {
        idle_close_finished(e, p);
        return;
    }
    if (rejected == WIO_TP_REJECTED) {
        /* the peer's own connection to us wins; if it never comes, connect again */
        p->connect_retry_at = wio_now() + RECONNECT_DELAY;
        return;
    }
    if (rejected == WIO_TP_DROPPED && p->state == WIO_PEER_CONNECTING && l->outgoing &&
        l->drops < DROP_RETRIES) {
        /* dropped before its verdict: overloaded, or we did not answer within its deadline */
        double delay = DROP_RETRY_DELAY * (double)(1u << l->drops++);
        wio_info("connection to process %u closed in its handshake (%s): the peer may be "
                 "overloaded; reconnecting in %.0f ms", (unsigned)p->id, why, delay * 1000);
        p->connect_retry_at = wio_now() + delay;
        return;
    }
    if (p->bye_received) {
        p->state = WIO_PEER_FAILED;
        p->err = WAITIO_ERR_PEER_FINALIZED;
        return;
    }
    /* our connect never opened: the next transport that reaches the peer, if any */
    if (p->state == WIO_PEER_CONNECTING && l->outgoing && err != WAITIO_ERR_AUTH) {
        wio_debug("connect to process %u over %s failed (%s); trying the next transport",
                  (unsigned)p->id, l->tp->ops->name, why);
        if (link_connect(e, l) == 0)
            return;
    }
    peer_fail(e, p, err == WAITIO_ERR_AUTH ? WAITIO_ERR_AUTH : WAITIO_ERR_PEER, why);
}

const wio_tp_handler wio_engine_tp_handler = {
    .incoming = on_incoming,
    .opened = on_opened,
    .frame_begin = on_frame_begin,
    .frame_end = on_frame_end,
    .frame_whole = on_frame_whole,
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
    WIO_LIST_FOREACH_SAFE(pos, tmp, &e->mq.unexpected) {
        wio_unexp *ux = WIO_CONTAINER_OF(pos, wio_unexp, link);
        if (ux->peer_id == p->id && (ux->kind == WIO_UX_RTS || !ux->complete))
            unexp_free(e, ux);
    }
    p->main.rx_req = p->bulk.rx_req = NULL;
    p->main.rx_unexp = p->bulk.rx_unexp = NULL;
}

static void drop_pending(wio_peer *p, int err)
{
    /* every queued item has its done callback: the requests complete with err */
    wio_list *queues[3] = {&p->pending, &p->held, &p->bulk_pending};
    for (int q = 0; q < 3; q++)
        while (!wio_list_empty(queues[q])) {
            wio_send_item *it = WIO_CONTAINER_OF(queues[q]->next, wio_send_item, link);
            wio_list_remove(&it->link);
            WIO_ASSERT(it->done != NULL);
            it->done(it, err);
        }
}

static void peer_fail(wio_engine *e, wio_peer *p, int err, const char *why)
{
    if (p->state == WIO_PEER_FAILED)
        return;
    if (!e->finalizing)
        wio_warn("lost process %u: %s", (unsigned)p->id, why);
    WIO_TRACE(WIO_TR_ERROR, 0, p->id, 0, 0, 0, 0, 0, err);
    WIO_TRACE(WIO_TR_CONN_CLOSE, 0, p->id, 0, 0, 0, 0, 0, err);
    p->state = WIO_PEER_FAILED;
    p->err = err;
    snprintf(p->why, sizeof p->why, "%s", why);
    link_close(&p->main, err);
    link_close(&p->bulk, err);
    drop_pending(p, err);
    fail_requests_of_peer(e, p, err);
    wio_gpu_ipc_close_peer(p->id); /* its device memory we mapped (CUDA IPC) */
    if (e->ext) /* one-sided layer: what it holds for the peer */
        e->ext->peer_lost(e->ext_ctx, p->id, err);
}

static void bye_done(wio_send_item *it, int err)
{
    wio_peer *p = it->owner;
    if (!err) {
        link_shutdown(&p->main);
        link_shutdown(&p->bulk);
    }
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
        link_send(&p->main, it);
    }
    p->bye_sent = 1;
    p->state = WIO_PEER_CLOSING;
}

/* The peer finalized: it reads nothing more, so close now. Frames still queued to it are
 * dropped (their requests fail with WAITIO_ERR_PEER_FINALIZED); our close is the EOF the
 * finalizing peer waits for. Everything it sent before BYE has been processed. */
static void peer_bye_received(wio_engine *e, wio_peer *p)
{
    WIO_TRACE(WIO_TR_CONN_CLOSE, 0, p->id, 0, 0, 0, 0, 0, 0);
    p->bye_received = 1;
    p->state = WIO_PEER_FAILED;
    p->err = WAITIO_ERR_PEER_FINALIZED;
    snprintf(p->why, sizeof p->why, "it called waitio_finalize");
    link_close(&p->main, WAITIO_ERR_PEER_FINALIZED);
    link_close(&p->bulk, WAITIO_ERR_PEER_FINALIZED);
    drop_pending(p, WAITIO_ERR_PEER_FINALIZED);
    fail_requests_of_peer(e, p, WAITIO_ERR_PEER_FINALIZED);
    wio_gpu_ipc_close_peer(p->id);
    if (e->ext) /* one-sided layer: what it holds for the peer */
        e->ext->peer_lost(e->ext_ctx, p->id, WAITIO_ERR_PEER_FINALIZED);
}

/* ------------------------------------------------------------------------------------ */
/* progress and waiting                                                                 */

static void retry_lost_races(wio_engine *e, double now)
{
    for (uint32_t i = 0; i < e->nprocs_total; i++) {
        wio_peer *p = e->peers[i];
        if (p && p->connect_retry_at > 0 && now >= p->connect_retry_at &&
            p->state == WIO_PEER_CONNECTING && !p->main.conn)
            peer_connect(e, p);
    }
}

/* A receive naming a peer whose connection was closed for the cap does not reconnect at once
 * (all-to-all patterns would defeat the cap); if it is still waiting after IDLE_PROBE_DELAY,
 * reconnect, so that a peer that died meanwhile fails the receive instead of hanging it. */
#define IDLE_PROBE_DELAY 1.0
typedef struct probe_scan {
    wio_engine *e;
    double now;
    wio_peer *probe;
} probe_scan;

static int find_idle_closed_peer(wio_req_impl *r, void *arg)
{
    probe_scan *ps = arg;
    if (r->peer_id == WIO_ID_BOOT || r->peer_id >= ps->e->nprocs_total)
        return 0;
    wio_peer *p = ps->e->peers[r->peer_id];
    if (p && p->state == WIO_PEER_IDLE && p->idle_closed && ps->now - p->idle_closed_at >= IDLE_PROBE_DELAY) {
        ps->probe = p;
        return 1;
    }
    return 0;
}

static void probe_idle_closed_peers(wio_engine *e, double now)
{
    for (;;) { /* a failed connect removes receives from the queues: rescan after each */
        probe_scan ps = {e, now, NULL};
        wio_mq_foreach_posted(&e->mq, find_idle_closed_peer, &ps);
        if (!ps.probe)
            return;
        peer_connect(e, ps.probe);
    }
}

/* ---- waiting in the "multiple" thread level (waitio_thread_multiple, core/api_lock.h) ----
 * A blocking wait gives the API lock away between its progress rounds, where the engine's state
 * is consistent: never inside a round (a handler run by progress may wait; the round's caller
 * keeps state across it), so a wait nested in a round keeps the lock. What a waiter keeps across
 * rounds stays valid while another thread runs: requests are allocated one by one (the pool's
 * array of pointers may grow, the requests do not move) and released only by their owner's
 * wait/test; connections are looked up again every round (hot_link). The statics below are
 * read and written under the lock only (there is one engine per process). */
static int progress_depth; /* a progress round runs: its handlers' waits keep the lock */
static int mt_sleepers;    /* threads asleep without the lock in mt_sleep */
static int mt_bell_rung;   /* the bell was rung since the last sleeper left */

/* Armed sleeper: the doorbells of the rings are armed while it sleeps, but another thread's
 * blocking poller round or the progress thread's wake-up may disarm them: look again after
 * this long. Any other sleeper looks again after MT_NAP_MS. */
#define MT_ARMED_MS 10
#define MT_NAP_MS 1

/* The calling thread holds the API lock in the "multiple" level, outside any progress round. */
static int mt_waiter(void)
{
    return __atomic_load_n(&wio_api_multiple, __ATOMIC_RELAXED) && !progress_depth && wio_api_held();
}

/* A round that handled something while threads sleep without the lock: the event one of them
 * waits for may have been consumed here, so they look again. */
static void mt_wake_sleepers(void)
{
    if (mt_sleepers && !mt_bell_rung) {
        mt_bell_rung = 1;
        wio_api_bell_ring();
    }
}

/* The blocking step of a wait, the lock given away (mt_waiter() holds): the first sleeper
 * arms the doorbells and sleeps on the poller's descriptor like the progress thread; a sleeper
 * beside it naps briefly; both wake on the bell. The caller runs a progress round after. */
static void mt_sleep(wio_engine *e, int ms)
{
    int armed = mt_sleepers == 0;
    int timeout = ms;
    if (armed) {
        timeout = wio_poller_sleep_begin(e->poller, ms < MT_ARMED_MS ? ms : MT_ARMED_MS);
        if (timeout == 0) { /* something is waiting already */
            wio_poller_sleep_end(e->poller);
            return;
        }
    } else if (timeout > MT_NAP_MS) {
        timeout = MT_NAP_MS;
    }
    struct pollfd pf[2] = {{.fd = wio_poller_fd(e->poller), .events = POLLIN},
                           {.fd = wio_api_bell_fd(), .events = POLLIN}};
    /* a bell rung for the sleepers before this one stays readable until they have all left */
    nfds_t n = !mt_bell_rung && pf[1].fd >= 0 ? 2 : 1;
    mt_sleepers++;
    int d = wio_api_yield_begin();
    (void)poll(pf, n, timeout);
    wio_api_yield_end(d);
    if (--mt_sleepers == 0 && mt_bell_rung) {
        wio_api_bell_drain();
        mt_bell_rung = 0;
    }
    if (armed)
        wio_poller_sleep_end(e->poller);
}

/* Gives the lock to a thread blocked on it (mt_waiter() holds). */
static void mt_handoff(void)
{
    if (wio_api_contended())
        wio_api_yield_end(wio_api_yield_begin());
}

void wio_engine_yield(wio_engine *e)
{
    (void)e;
    int d = mt_waiter() ? wio_api_yield_begin() : 0;
    sched_yield();
    wio_api_yield_end(d);
}

int wio_engine_pause(wio_engine *e, int timeout_ms)
{
    if (!mt_waiter())
        return wio_engine_progress(e, timeout_ms);
    mt_sleep(e, timeout_ms);
    return wio_engine_progress(e, 0);
}

int wio_engine_progress(wio_engine *e, int timeout_ms)
{
    progress_depth++;
    if (wio_gpu_pipes_parked && timeout_ms != 0) /* device sends wait for a copy (src/gpu/pipeline.c), */
        timeout_ms = 1;                           /* which no descriptor announces */
    int n = wio_poller_run(e->poller, timeout_ms);
    if (n >= 0 && e->ext_work) /* one-sided layer: remote procedure calls run outside the poller */
        e->ext->deferred(e->ext_ctx);
    if (n >= 0 && wio_gpu_pipes_parked)
        wio_gpu_pipe_poll();
    progress_depth--;
    if (n < 0)
        return -n;
    if (n > 0)
        mt_wake_sleepers();
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

/* The connection a wait may spin on directly: the open main link to process peer_id, if its
 * transport can be looked at outside the poller (conn_poll: tcp's socket, shm's ring). */
static wio_link *hot_link(wio_engine *e, uint32_t peer_id)
{
    wio_peer *p = peer_id < e->nprocs_total && e->peers ? e->peers[peer_id] : NULL;
    if (!p || p->state != WIO_PEER_OPEN || !p->main.conn || !p->main.tp->ops->conn_poll)
        return NULL;
    return &p->main;
}

/* Waits in a row on one connection that ended while spinning before it may be parked. */
#define PARK_AFTER_WINS 4

/* A wait spinning on hot ended: after PARK_AFTER_WINS of them in a row the connection may
 * leave the epoll set (conn_park) until the process blocks — a ping-pong, where epoll's
 * wake-up callback in every send costs the sender 5% of a loopback round trip. */
static void hot_link_won(wio_link *hot)
{
    if (++hot->spin_wins >= PARK_AFTER_WINS && hot->tp->ops->conn_park)
        hot->tp->ops->conn_park(hot->conn);
}

/* Progresses until ready(arg): spin, yield, block (wio_engine_wait_until). While spinning on a
 * wait for process hot_peer (WIO_ID_BOOT: none) whose connection can be read directly, that
 * connection is read every round and the whole poller runs every 32nd: one system call per
 * round, as a bare polling recv() costs, instead of an epoll_wait and then the read. */
static int wait_loop(wio_engine *e, int (*ready)(void *), void *arg, double deadline, uint32_t hot_peer)
{
    double t0 = -1;
    double spin = e->oversubscribed ? 0 : e->cfg.spin_us * 1e-6;
    double yield = spin + e->cfg.yield_us * 1e-6;
    uint64_t frames = e->frames_in;
    int spinning = spin > 0;
    int mt = mt_waiter(); /* "multiple": the lock is given away between rounds */
    int rc;
    for (unsigned iter = 0;; iter++) {
        if (mt && iter)
            mt_handoff();
        wio_link *hot = spinning && hot_peer != WIO_ID_BOOT && (iter & 31) != 31 ? hot_link(e, hot_peer) : NULL;
        if (hot) {
            uint64_t before = e->frames_in;
            hot->tp->ops->conn_poll(hot->conn);
            if (mt && e->frames_in != before)
                mt_wake_sleepers(); /* it may have been another thread's frame */
        } else if ((rc = wio_engine_progress(e, 0)))
            return rc;
        if (ready(arg)) {
            /* looked up again: the poll may have read the peer's close and dropped the link's
             * connection (a peer that finalized right after its last frame) */
            if (hot && (hot = hot_link(e, hot_peer)) != NULL)
                hot_link_won(hot);
            return 0;
        }
        /* a frame arrived (e.g. a one-sided request this wait served): the phases start over, so
         * a process that serves traffic while it waits keeps answering at polling speed — unless
         * the host is oversubscribed (no spin phase), where a waiter must give its core away */
        if (e->frames_in != frames && spin > 0) {
            frames = e->frames_in;
            t0 = -1;
            spinning = 1;
        }
        if (spinning && (iter & 15) != 15)
            continue; /* spinning: the clock is read every 16th round only */
        double now = wio_now();
        if (t0 < 0)
            t0 = now;
        if (deadline > 0 && now >= deadline)
            return WAITIO_ERR_TIMEOUT;
        double waited = now - t0;
        spinning = waited < spin;
        if (spinning)
            continue;
        if (waited < yield) {
            wio_poller_yielding(e->poller, now);
            if (mt)
                wio_engine_yield(e);
            else
                sched_yield();
            continue;
        }
        int ms = 100;
        if (deadline > 0 && (deadline - now) * 1000 < ms)
            ms = (int)((deadline - now) * 1000) + 1;
        wio_link *cold = hot_peer != WIO_ID_BOOT ? hot_link(e, hot_peer) : NULL;
        if (cold)
            cold->spin_wins = 0; /* it had to block: not a ping-pong (the poller unparks it) */
        if ((rc = mt ? wio_engine_pause(e, ms) : wio_engine_progress(e, ms)))
            return rc;
        if (ready(arg))
            return 0;
    }
}

int wio_engine_wait_until(wio_engine *e, int (*ready)(void *), void *arg, double deadline)
{
    return wait_loop(e, ready, arg, deadline, WIO_ID_BOOT);
}

static int req_is_done(void *arg) { return ((wio_req_impl *)arg)->state == WIO_RS_DONE; }

int wio_engine_wait_req(wio_engine *e, wio_req_impl *r, double deadline)
{
    if (r->state == WIO_RS_DONE)
        return 0;
    if (!wio_trace_on && !e->cfg.stats)
        return wait_loop(e, req_is_done, r, deadline, r->peer_id);
    uint32_t peer = r->peer_id < e->nprocs_total ? r->peer_id : WIO_TR_ANY;
    WIO_TRACE(WIO_TR_WAIT_BEGIN, 0, peer, r->gid, r->tag, 0, 0, 0, 0);
    uint64_t t0 = e->cfg.stats ? wio_trace_now() : 0; /* the trace has the wait's times itself */
    int rc = wait_loop(e, req_is_done, r, deadline, r->peer_id);
    if (e->cfg.stats && peer != WIO_TR_ANY && e->peers[peer])
        e->peers[peer]->wait_ns += wio_trace_now() - t0;
    WIO_TRACE(WIO_TR_WAIT_END, 0, peer, r->gid, r->tag, 0, 0, 0, rc);
    return rc;
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

/* The small-message fast path: a message to an open peer with nothing held before it, within
 * the eager limit and the credit, is handed to the transport's send_now, which writes it at once
 * (or copies what its pipe did not take): no request, nothing to wait for. Returns 1 if it went. */
static int send_at_once(wio_engine *e, wio_peer *p, uint32_t gid, uint32_t src, uint64_t tag,
                        const void *buf, size_t len)
{
    int64_t cost = (int64_t)len + EAGER_OVERHEAD;
    const wio_link *l = &p->main;
    if (p->state != WIO_PEER_OPEN || p->bye_sent || len > WIO_SEND_NOW_MAX || len > p->eager_limit ||
        cost > p->send_credit || !wio_list_empty(&p->held) || !l->tp->ops->send_now)
        return 0;
    wio_frame_hdr h = {.type = WIO_FT_EAGER, .gid = gid, .src = src, .tag = tag, .len = len,
                       .credit = p->credit_owed};
    if (l->tp->ops->send_now(l->conn, &h, buf) != 0)
        return 0;
    p->credit_owed = 0;
    p->send_credit -= cost;
    p->last_used = ++e->use_tick;
    e->frames_out++;
    return 1;
}

/* A send from device memory (docs/transports.md, "GPU memory"): a large message is offered
 * through CUDA IPC (its RTS carries the descriptor, which a receiver on this host maps and
 * copies from; any other receiver's CTS makes us stage it then, begin_cts); a small one, or
 * any when the export fails or WAITIO_GPU_IPC=0, is copied to a host staging buffer now and
 * sent from there. */
static int engine_isend(wio_engine *e, wio_group *g, wio_peer *p, int dst, const void *buf, size_t len,
                        uint64_t tag, uint32_t ctx, uint8_t gpu, const uint8_t *gpu_desc, wio_req_impl **out);

/* A large device message to a peer behind a link that reads nothing in place (tcp): DATA frames
 * from host staging filled chunk by chunk, the first copies running while the RTS and CTS
 * travel (src/gpu/pipeline.c). Without a pipeline it is staged whole, as below. */
static int gpu_isend_pipelined(wio_engine *e, wio_group *g, wio_peer *p, int dst, const void *buf, size_t len,
                               uint64_t tag, uint32_t ctx, wio_req_impl **out)
{
    void *bounce;
    wio_gpu_pipe *pipe = NULL;
    int rc = wio_gpu_bounce_get(len, &bounce);
    if (rc)
        return rc;
    if (wio_gpu_send_pipe_new(buf, bounce, len, &pipe) != 0 && (rc = wio_gpu_copy(bounce, buf, len)) != 0) {
        wio_gpu_bounce_put(bounce, len);
        return rc;
    }
    if ((rc = engine_isend(e, g, p, dst, bounce, len, tag, ctx, WIO_GPU_SEND_STAGED, NULL, out)) != 0 || !*out) {
        wio_gpu_pipe_destroy(pipe); /* waits for its copies: the buffer goes back to the pool */
        wio_gpu_bounce_put(bounce, len);
        return rc;
    }
    e->gpu_staged++;
    (*out)->gpu_user = (void *)buf;
    (*out)->gpu_bounce = bounce;
    (*out)->gpu_bounce_len = len;
    (*out)->gpu_pipe = pipe;
    return 0;
}

static int gpu_isend(wio_engine *e, wio_group *g, wio_peer *p, int dst, const void *buf, size_t len,
                     uint64_t tag, uint32_t ctx, wio_req_impl **out)
{
    uint8_t desc[WIO_GPU_DESC_LEN];
    wio_gpu_ipc_handle h;
    size_t off;
    if (len > e->cfg.eager_limit && len > WIO_SEND_NOW_MAX && p->state == WIO_PEER_OPEN && p->main.tp &&
        !p->main.tp->ops->rdv_pack && wio_gpu_pipe_wanted(len))
        return gpu_isend_pipelined(e, g, p, dst, buf, len, tag, ctx, out);
    if (e->gpu_ipc && len > e->cfg.eager_limit && len > WIO_SEND_NOW_MAX &&
        wio_gpu_ipc_export(buf, &h, &off) == 0) {
        desc[0] = WIO_GPU_DESC_MARK;
        memcpy(desc + 1, h.bytes, WIO_GPU_IPC_HANDLE_LEN);
        wio_put_le64(desc + 1 + WIO_GPU_IPC_HANDLE_LEN, (uint64_t)off);
        wio_put_le64(desc + 9 + WIO_GPU_IPC_HANDLE_LEN, (uint64_t)len);
        wio_put_le64(desc + 17 + WIO_GPU_IPC_HANDLE_LEN, h.id);
        return engine_isend(e, g, p, dst, buf, len, tag, ctx, WIO_GPU_SEND_IPC, desc, out);
    }
    void *bounce;
    int rc = wio_gpu_bounce_get(len, &bounce);
    if (rc)
        return rc;
    if ((rc = wio_gpu_copy(bounce, buf, len)) != 0 ||
        (rc = engine_isend(e, g, p, dst, bounce, len, tag, ctx, WIO_GPU_SEND_STAGED, NULL, out)) != 0 || !*out) {
        wio_gpu_bounce_put(bounce, len); /* failed, or sent at once: the copy is no longer needed */
        return rc;
    }
    e->gpu_staged++;
    (*out)->gpu_user = (void *)buf;
    (*out)->gpu_bounce = bounce;
    (*out)->gpu_bounce_len = len;
    return 0;
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
    if (!p)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory posting a send");
    wio_mem_kind kind = WIO_MEM_HOST;
    if (len && (rc = wio_gpu_mem_kind(buf, len, &kind, NULL)) != 0)
        return rc;
    if (kind == WIO_MEM_CUDA)
        return gpu_isend(e, g, p, dst, buf, len, tag, ctx, out);
    return engine_isend(e, g, p, dst, buf, len, tag, ctx, WIO_GPU_NONE, NULL, out);
}

static int engine_isend(wio_engine *e, wio_group *g, wio_peer *p, int dst, const void *buf, size_t len,
                        uint64_t tag, uint32_t ctx, uint8_t gpu, const uint8_t *gpu_desc, wio_req_impl **out)
{
    uint32_t pid = p->id;
    /* recorded before the message can leave: a receiver must never see it first */
    uint64_t msg = p->msgs_out + 1;
    uint8_t *rec = NULL;
    if (wio_trace_on)
        rec = wio_trace_event(WIO_TR_SEND, 0, pid, g->gid | ctx, tag, len, msg, 0, 0);
    if (gpu != WIO_GPU_SEND_IPC && send_at_once(e, p, g->gid | ctx, (uint32_t)g->my_rank, tag, buf, len)) {
        wio_trace_flag(rec, WIO_TR_AT_ONCE);
        p->msgs_out = msg;
        p->bytes_out += len;
        *out = NULL;
        return 0;
    }
    wio_req_impl *r = wio_req_alloc(e, WIO_REQ_SEND);
    if (!r)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory posting a send");
    p->msgs_out = msg; /* committed: the receiver counts it too */
    p->bytes_out += len;
    r->gpu = gpu; /* before the message can leave: choose_protocol and prepare_rts read these */
    if (gpu == WIO_GPU_SEND_IPC) {
        r->gpu_user = (void *)buf;
        memcpy(r->rdv_wire, gpu_desc, WIO_GPU_DESC_LEN);
    }
    r->tr_msg = msg;
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
    wio_mem_kind kind = WIO_MEM_HOST;
    if (len && (rc = wio_gpu_mem_kind(buf, len, &kind, NULL)) != 0)
        return rc;
    void *bounce = NULL;
    if (kind == WIO_MEM_CUDA && (rc = wio_gpu_bounce_get(len, &bounce)) != 0)
        return rc;
    wio_req_impl *r = wio_req_alloc(e, WIO_REQ_RECV);
    if (!r) {
        wio_gpu_bounce_put(bounce, len);
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory posting a receive");
    }
    WIO_TRACE(WIO_TR_RECV, 0, pid == WIO_ID_BOOT ? WIO_TR_ANY : pid, g->gid | ctx, tag, len, 0, 0, 0);
    r->grp = g;
    r->gid = g->gid | ctx;
    r->rank = src;
    r->peer_id = pid;
    r->tag = tag;
    r->buf = buf;
    r->cap = len;
    if (bounce) { /* a device buffer: data lands in host staging (or comes by CUDA IPC) */
        r->gpu = WIO_GPU_RECV;
        r->gpu_user = buf;
        r->buf = bounce;
        r->gpu_bounce = bounce;
        r->gpu_bounce_len = len;
    }
    r->state = WIO_RS_RECV_POSTED;
    *out = r;
    wio_unexp *ux = wio_mq_take_unexpected(&e->mq, r);
    if (ux) {
        r->peer_id = ux->peer_id;
        r->tr_msg = ux->msg;
        r->status.source = (int)ux->src;
        r->status.tag = ux->tag;
        if (ux->kind == WIO_UX_RTS) {
            wio_peer *p = e->peers[ux->peer_id];
            uint64_t len_total = ux->len, sender = ux->remote_id;
            uint8_t desc[WIO_RDV_DESC_MAX];
            size_t desc_len = ux->rdv_len;
            memcpy(desc, ux->rdv, desc_len);
            unexp_free(e, ux);
            release_credit(e, p->id, RTS_COST - EAGER_OVERHEAD);
            recv_matched_rts(e, p, r, len_total, sender, desc, desc_len);
        } else if (ux->complete) {
            deliver_unexpected(e, r, ux);
        } else {
            WIO_TRACE(WIO_TR_MATCH, 0, ux->peer_id, r->gid, ux->tag, ux->len, ux->msg, 0, 0);
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
    wio_mq_post(&e->mq, r);
    return 0;
}

void wio_engine_locate(const wio_engine *e, uint32_t id, int *pb, int *rank)
{
    int p = 0;
    while (p + 1 < e->npb && e->pb_offset[p + 1] <= id)
        p++;
    *pb = p;
    *rank = (int)(id - e->pb_offset[p]);
}

/* "PB 1 rank 0 (process 3)" */
void wio_describe_process(const wio_engine *e, uint32_t id, char *buf, size_t cap)
{
    int pb, rank;
    wio_engine_locate(e, id, &pb, &rank);
    snprintf(buf, cap, "PB %d rank %d (process %u)", pb, rank, (unsigned)id);
}

void wio_engine_explain(wio_engine *e, const wio_req_impl *r)
{
    const char *dir = r->kind == WIO_REQ_SEND ? "send to" : r->kind == WIO_REQ_RMA ? "one-sided operation on" : "receive from";
    char who[64] = "any source";
    if (r->peer_id != WIO_ID_BOOT && r->peer_id < e->nprocs_total)
        wio_describe_process(e, r->peer_id, who, sizeof who);
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
/* for the one-sided layer (src/rma)                                                    */

void wio_engine_send_frame(wio_engine *e, uint32_t peer_id, wio_send_item *it)
{
    wio_peer *p = peer_id < e->nprocs_total && peer_id != e->my_id ? wio_engine_peer(e, peer_id) : NULL;
    if (!p) {
        it->done(it, peer_id < e->nprocs_total ? WAITIO_ERR_NOMEM : WAITIO_ERR_ARG);
        return;
    }
    peer_queue(e, p, it);
}

void wio_engine_drop_peer(wio_engine *e, uint32_t peer_id, const char *why)
{
    wio_peer *p = peer_id < e->nprocs_total ? e->peers[peer_id] : NULL;
    if (p && p->state != WIO_PEER_FAILED)
        peer_fail(e, p, WAITIO_ERR_PEER, why); /* logged there ("lost process N: why") */
}

int wio_engine_peer_error(const wio_engine *e, uint32_t peer_id)
{
    const wio_peer *p = peer_id < e->nprocs_total ? e->peers[peer_id] : NULL;
    if (!p || !peer_gone(p))
        return 0;
    return p->err ? p->err : WAITIO_ERR_PEER_FINALIZED;
}

int wio_engine_rma_copy(wio_engine *e, uint32_t peer_id, int write, uint64_t addr, void *local, size_t len)
{
    wio_peer *p = peer_id < e->nprocs_total ? e->peers[peer_id] : NULL;
    if (!p || p->state != WIO_PEER_OPEN || !p->main.conn || !p->main.tp->ops->rma_copy)
        return ENOTCONN;
    return p->main.tp->ops->rma_copy(p->main.conn, write, addr, local, len);
}

/* ---- one-sided over RDMA (src/rma/rdma.c): the transport that offers rdma_* ops ---- */

static const wio_tp_slot *rdma_slot(const wio_engine *e)
{
    for (int i = 0; i < e->ntps; i++)
        if (e->tps[i].ops->rdma_reg && e->tps[i].ctx)
            return &e->tps[i];
    return NULL;
}

int wio_engine_rdma_reg(wio_engine *e, void *addr, size_t len, unsigned flags, void **reg, uint8_t *key,
                        size_t cap, size_t *key_len)
{
    const wio_tp_slot *s = rdma_slot(e);
    return s ? s->ops->rdma_reg(s->ctx, addr, len, flags, reg, key, cap, key_len) : ENOTSUP;
}

void wio_engine_rdma_dereg(wio_engine *e, void *reg)
{
    const wio_tp_slot *s = rdma_slot(e);
    if (s && reg)
        s->ops->rdma_dereg(s->ctx, reg);
}

void wio_engine_rdma_rkey_free(wio_engine *e, void *rkey)
{
    const wio_tp_slot *s = rdma_slot(e);
    if (s && rkey)
        s->ops->rdma_rkey_free(s->ctx, rkey);
}

/* The open main connection to peer_id, when its transport does RDMA. */
static wio_peer *rdma_peer(wio_engine *e, uint32_t peer_id)
{
    wio_peer *p = peer_id < e->nprocs_total ? e->peers[peer_id] : NULL;
    if (!p || p->state != WIO_PEER_OPEN || !p->main.conn || !p->main.tp->ops->rdma_post)
        return NULL;
    return p;
}

int wio_engine_rdma_post(wio_engine *e, uint32_t peer_id, const uint8_t *key, size_t key_len, void **rkey,
                         wio_rdma_op *op)
{
    wio_peer *p = rdma_peer(e, peer_id);
    if (!p)
        return ENOTCONN;
    if (!*rkey) {
        int rc = p->main.tp->ops->rdma_rkey(p->main.conn, key, key_len, rkey);
        if (rc)
            return rc;
    }
    op->rkey = *rkey;
    return p->main.tp->ops->rdma_post(p->main.conn, op);
}

int wio_engine_rdma_flush(wio_engine *e, uint32_t peer_id, void (*done)(void *arg, int err), void *arg)
{
    wio_peer *p = rdma_peer(e, peer_id);
    return p ? p->main.tp->ops->rdma_flush(p->main.conn, done, arg) : ENOTCONN;
}

int wio_engine_rdma_fence(wio_engine *e)
{
    const wio_tp_slot *s = rdma_slot(e);
    return s ? s->ops->rdma_fence(s->ctx) : ENOTSUP;
}

/* ------------------------------------------------------------------------------------ */
/* start and finalize                                                                   */

static int all_peers_closed(void *arg)
{
    wio_engine *e = arg;
    for (uint32_t i = 0; i < e->nprocs_total; i++) {
        wio_peer *p = e->peers[i];
        if (p && (p->main.conn || p->bulk.conn))
            return 0;
    }
    return 1;
}

static int all_sends_flushed(void *arg)
{
    wio_engine *e = arg;
    for (uint32_t i = 0; i < e->nprocs_total; i++) {
        wio_peer *p = e->peers[i];
        if (p && p->state == WIO_PEER_OPEN && (!link_idle(&p->main) || !link_idle(&p->bulk) ||
                                                !wio_list_empty(&p->bulk_pending)))
            return 0;
    }
    return 1;
}

int wio_engine_finalize(wio_engine *e)
{
    e->finalizing = 1;
    wio_debug("finalize: %llu frames in, %llu out; %llu messages (%llu bytes) read by single copy; "
              "rendezvous data sent: %llu on the main connection, %llu on the bulk one",
              (unsigned long long)e->frames_in, (unsigned long long)e->frames_out,
              (unsigned long long)e->single_copies, (unsigned long long)e->single_copy_bytes,
              (unsigned long long)e->rdv_main, (unsigned long long)e->rdv_bulk);
    for (int i = 0; i < e->ntps; i++)
        if (e->tps[i].ops->stats) {
            char line[256];
            e->tps[i].ops->stats(e->tps[i].ctx, line, sizeof line);
            wio_debug("finalize: %s", line);
        }
    if (e->gpu_ipc_copies || e->gpu_staged)
        wio_debug("finalize: device messages: %llu received through CUDA IPC, %llu sent staged through host memory",
                  (unsigned long long)e->gpu_ipc_copies, (unsigned long long)e->gpu_staged);
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
        else if (p->main.conn && p->state != WIO_PEER_CLOSING)
            link_close(&p->main, WAITIO_ERR_CANCELLED);
        drop_pending(p, WAITIO_ERR_CANCELLED);
    }
    int rc2 = wio_engine_wait_until(e, all_peers_closed, e, deadline);
    if (rc2 == WAITIO_ERR_TIMEOUT)
        wio_info("finalize: some peers did not close within %.1f s", e->cfg.finalize_timeout);
    for (uint32_t i = 0; i < e->nprocs_total; i++) {
        wio_peer *p = e->peers[i];
        if (p) {
            link_close(&p->main, WAITIO_ERR_CANCELLED);
            link_close(&p->bulk, WAITIO_ERR_CANCELLED);
        }
    }
    wio_engine_close(e);
    return rc == WAITIO_ERR_TIMEOUT ? 0 : rc;
}

/* WAITIO_TRANSPORTS names the transports a process may use, in order of preference (SPEC §6).
 * Hybrid (WAITIO_COMM_TYPE=hybrid) adds the file transport for large messages' data. */
static int add_transport(wio_engine *e, const char *name)
{
    const wio_transport_ops *ops = wio_transport_find(name);
#ifndef WAITIO_HAVE_UCX
    if (!ops && strcmp(name, "ucx") == 0)
        return wio_fail(WAITIO_ERR_ENV, "WAITIO_TRANSPORTS: this WaitIO was built without UCX, so "
                        "it has no ucx transport (install UCX, e.g. libucx-dev, and rebuild)");
#endif
    if (!ops) {
        char avail[128] = "";
        for (int i = 0; wio_transports[i]; i++)
            snprintf(avail + strlen(avail), sizeof avail - strlen(avail), "%s%s", i ? ", " : "",
                     wio_transports[i]->name);
        return wio_fail(WAITIO_ERR_ENV, "WAITIO_TRANSPORTS: unknown transport '%s' (available: %s)",
                        name, avail);
    }
    for (int i = 0; i < e->ntps; i++)
        if (e->tps[i].ops == ops)
            return 0;
    if (e->ntps == WIO_MAX_TRANSPORTS)
        return wio_fail(WAITIO_ERR_ENV, "WAITIO_TRANSPORTS names too many transports");
    e->tps[e->ntps].ops = ops;
    e->tps[e->ntps].engine = e;
    e->ntps++;
    return 0;
}

static int parse_transports(wio_engine *e)
{
    char list[sizeof e->cfg.transports];
    memcpy(list, e->cfg.transports, sizeof list);
    e->ntps = 0;
    e->bulk_tp = -1;
    char *save = NULL;
    int rc;
    for (char *tok = strtok_r(list, ",: ", &save); tok; tok = strtok_r(NULL, ",: ", &save))
        if ((rc = add_transport(e, tok)))
            return rc;
    if (e->ntps == 0)
        return wio_fail(WAITIO_ERR_ENV, "WAITIO_TRANSPORTS='%s' names no transport", e->cfg.transports);
    /* hybrid: large messages' data through files, unless WAITIO_TRANSPORTS chose for itself */
    if (e->cfg.comm_type == WIO_COMM_HYBRID && !e->cfg.transports_set) {
        if ((rc = add_transport(e, "file")))
            return rc;
        e->bulk_tp = e->ntps - 1;
        e->bulk_threshold = e->cfg.hybrid_threshold;
    }
    return 0;
}

int wio_engine_check_transports(wio_engine *e) { return parse_transports(e); }

/* Opens every transport of the list; one that cannot open is dropped (logged) as long as
 * another remains, so that e.g. a missing /dev/shm leaves tcp. */
int wio_engine_open(wio_engine *e)
{
    int rc = wio_poller_create(&e->poller);
    if (rc)
        return rc;
    wio_tp_params params = {
        .cfg = &e->cfg, .key = &e->key, .poller = e->poller, .handler = &wio_engine_tp_handler,
        .eager_limit = (uint32_t)e->cfg.eager_limit,
    };
    int kept = 0, first_err = 0;
    char first_msg[512] = "";
    for (int i = 0; i < e->ntps; i++) {
        wio_tp_slot *tp = &e->tps[i];
        params.ctx = tp;
        rc = tp->ops->open(&params, &tp->ctx, &e->self);
        if (rc) {
            if (!first_err) {
                first_err = rc;
                snprintf(first_msg, sizeof first_msg, "%s", waitio_error_message());
            }
            wio_info("transport %s not available: %s", tp->ops->name, waitio_error_message());
            tp->ctx = NULL;
            continue;
        }
        if (kept != i) {
            e->tps[kept] = *tp;
            if (e->bulk_tp == i)
                e->bulk_tp = kept;
        }
        kept++;
    }
    if (e->bulk_tp >= kept)
        e->bulk_tp = -1;
    e->ntps = kept;
    if (kept == 0)
        return wio_fail(first_err, "no transport could be opened: %s", first_msg);
    if (e->self.ext_len > WIO_PROC_EXT_MAX) /* a transport's extension: the table cannot carry it */
        return wio_fail(WAITIO_ERR_SYS, "a transport's address-table extension of %u bytes is over "
                        "the %u bytes start-up carries (WIO_PROC_EXT_MAX)", (unsigned)e->self.ext_len,
                        WIO_PROC_EXT_MAX);
    return 0;
}

void wio_engine_close(wio_engine *e)
{
    for (int i = 0; i < e->ntps; i++) {
        if (e->tps[i].ctx)
            e->tps[i].ops->close(e->tps[i].ctx);
        e->tps[i].ctx = NULL;
    }
    e->ntps = 0;
    wio_poller_destroy(e->poller);
    e->poller = NULL;
}

/* Collectives on a group hang or mix messages up when its processes choose different
 * algorithms: say so at start-up (once per PB, from its first process) if the WAITIO_COLL_*
 * settings of another process differ from ours. A notice, shown by default as the single-PB
 * notice is: a hang later would otherwise come without a word. */
static void check_coll_settings(wio_engine *e)
{
    if (e->cfg.local_rank != 0 || !wio_log_on(WIO_LOG_NOTICE))
        return;
    uint16_t mine = e->table[e->my_id].coll_sig;
    for (uint32_t i = 0; i < e->nprocs_total; i++) {
        if (e->table[i].coll_sig == mine)
            continue;
        int pb, rank;
        wio_engine_locate(e, i, &pb, &rank);
        wio_notice("the collective settings (WAITIO_COLL_*) of PB %d rank %d differ from this "
                   "PB's: collectives across PBs may hang; give every PB the same values", pb, rank);
        return;
    }
}

int wio_engine_start(wio_engine *e)
{
    e->peers = calloc(e->nprocs_total, sizeof *e->peers);
    if (!e->peers)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory for %u peers", (unsigned)e->nprocs_total);
    wio_mq_init(&e->mq);
    wio_list_init(&e->unexp_free);
    uint32_t local = 0, all_transports = ~0u;
    uint8_t all_flags = WIO_PROC_FLAGS;
    for (uint32_t i = 0; i < e->nprocs_total; i++) {
        if (e->table[i].host_id == e->table[e->my_id].host_id)
            local++;
        all_flags &= e->table[i].flags;
        all_transports &= e->table[i].transports;
    }
    e->all_shm = (all_transports & WIO_TP_SHM) != 0;
    e->all_adapters = (all_flags & WIO_PROC_ADAPTER) != 0;
    e->all_allreduce = (all_flags & WIO_PROC_ALLREDUCE) != 0;
    e->all_ibcast = (all_flags & WIO_PROC_IBCAST) != 0;
    check_coll_settings(e);
    e->one_host = local == e->nprocs_total;
    e->eager_credit = wio_config_credit_per_peer(&e->cfg, e->nprocs_total - 1);
    e->max_conns = wio_config_max_conns(&e->cfg);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    e->oversubscribed = cores > 0 && local > (uint32_t)cores;
    wio_tp_instance inst = {
        .self_id = e->my_id, .nprocs = e->nprocs_total, .table = e->table, .npb = e->npb,
        .pb_offset = e->pb_offset,
        .eager_credit = (uint32_t)e->eager_credit, .oversubscribed = e->oversubscribed,
    };
    for (int i = 0; i < e->ntps; i++) {
        int rc = e->tps[i].ops->start(e->tps[i].ctx, &inst);
        if (rc)
            return rc;
    }
    wio_debug("%u processes on this host, %ld cores%s", (unsigned)local, cores,
              e->oversubscribed ? ": oversubscribed, waiting yields at once" : "");
    return 0;
}

/* Everything an engine holds, after finalize or a failed start-up. */
void wio_engine_free(wio_engine *e)
{
    if (!e)
        return;
    if (e->peers) {
        for (uint32_t i = 0; i < e->nprocs_total; i++)
            free(e->peers[i]);
        free(e->peers);
    }
    while (!wio_list_empty(&e->mq.unexpected)) {
        wio_unexp *ux = WIO_CONTAINER_OF(e->mq.unexpected.next, wio_unexp, link);
        wio_mq_remove_unexpected(&e->mq, ux);
        if (ux->data != ux->small)
            free(ux->data);
        free(ux);
    }
    wio_mq_fini(&e->mq);
    while (!wio_list_empty(&e->unexp_free)) {
        wio_unexp *ux = WIO_CONTAINER_OF(e->unexp_free.next, wio_unexp, link);
        wio_list_remove(&ux->link);
        free(ux);
    }
    wio_groups_free(e);
    wio_req_pool_free(e);
    wio_engine_close(e); /* a failed start-up leaves the transports open */
    free(e->table);
    free(e->nprocs);
    free(e->pb_offset);
    memset(&e->key, 0, sizeof e->key);
    free(e);
}
