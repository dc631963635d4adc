/*
 * stream.c — framed connections over a byte pipe, shared by the stream transports: contexts,
 * listeners that accept with bounded handshakes, the send queue and frame writer, the receive
 * state machine and frame parser, deadlines, and freeing closed streams at a safe point. The
 * handshake frames themselves are handshake.c's; how bytes move is the pipe's (wio_pipe_ops:
 * wio_socket_pipe below for sockets, rings in shm.c, segment files in file.c).
 *
 * Hot paths (stream_flush, stream_read and parse_buffer) are the measured 8-byte path of every
 * transport: keep them free of clock reads, allocations and avoidable indirect calls.
 */
#define WIO_LOG_SUBSYS WIO_SUB_NET /* this file logs as "net" (WAITIO_LOG=net=LEVEL) */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include "transport/addr.h"
#include "transport/stream.h"
#include "core/common.h"

/* One buffered read takes at most this much: enough to batch many small frames per system
 * call, small enough that a large payload's head is not copied twice (measured: 256 KiB reads
 * made 64-256 KiB eager messages 1.4-1.7x slower than raw TCP). */
#define RECV_BATCH (16u << 10)
#define DIRECT_READ_MIN (4u << 10) /* payload remainder read straight into its destination */
#define SOCKET_COPY_MAX 512        /* frames up to this size are sent from one contiguous copy */
#define FLUSH_BATCH 16             /* queued frames written by one sendv */
#define FLUSH_BATCH_BYTES (64u << 10)
#define ACCEPT_BATCH 64
#define ACCEPT_PAUSE_MIN 0.1       /* seconds a listener rests after EMFILE, doubling ... */
#define ACCEPT_PAUSE_MAX 1.0       /* ... up to this */
#define FD_RESERVE_SLACK 32        /* descriptors left to the program when accepting */
#define HS_IDLE_MIN 0.25           /* a handshake is dropped for a newer one only after this idle */
#define HS_FLOOR 4                 /* handshakes always allowed, even at the connection cap */
#define HS_LOG_BURST 20            /* unauthenticated closes logged at once, then HS_LOG_RATE/s */
#define HS_LOG_RATE 1.0

enum rx_state { RX_HEADER, RX_PAYLOAD };

struct wio_listener {
    wio_stream_ctx *ctx;
    wio_poll_fd pf;
    const wio_stream_kind *kind;
    void (*tune)(int fd);
    const wio_tp_handler *handler;
    void *hctx;
    int armed;                 /* in the poller */
    int paused;                /* out of the poller until resume_at (0: until a slot frees) */
    int paused_full;           /* paused for a full handshake table: a freed slot resumes it */
    double resume_at, pause;
    wio_list link;             /* ctx->listeners */
};

struct wio_stream_ctx {
    wio_stream_params p;
    uint32_t self_id;
    wio_list streams;          /* open, connecting, or owned and in their handshake */
    wio_list handshakes;       /* accepted, not yet authenticated (oldest first) */
    wio_list zombies;          /* closed, freed after the current poll round */
    wio_list listeners;
    size_t nstreams, nhandshakes;
    size_t fd_budget;          /* streams above which listeners stop accepting */
    unsigned long auth_failures;
    double log_tokens, log_last;   /* rate limit of what strangers make us log */
    unsigned long log_suppressed;
    wio_poll_source src;
};

/* ------------------------------------------------------------------------------------ */
/* the reserve descriptor                                                               */
/*
 * One descriptor per process is held back (an open /dev/null) while any stream context exists:
 * when the process runs out of descriptors, it is given back so that a listener can take a
 * connection off its backlog to close it, and so that the process's own connects still work.
 * It is taken again when a stream closes.
 */
static pthread_mutex_t reserve_lock = PTHREAD_MUTEX_INITIALIZER;
static int reserve_fd = -1, reserve_users;

static void reserve_take(void)
{
    pthread_mutex_lock(&reserve_lock);
    if (reserve_users && reserve_fd < 0)
        reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    pthread_mutex_unlock(&reserve_lock);
}

static void reserve_users_add(int delta)
{
    pthread_mutex_lock(&reserve_lock);
    reserve_users += delta;
    if (reserve_users == 0 && reserve_fd >= 0) {
        close(reserve_fd);
        reserve_fd = -1;
    }
    pthread_mutex_unlock(&reserve_lock);
    if (delta > 0)
        reserve_take();
}

int wio_stream_ctx_release_reserve(wio_stream_ctx *ctx)
{
    (void)ctx;
    pthread_mutex_lock(&reserve_lock);
    int had = reserve_fd >= 0;
    if (had)
        close(reserve_fd);
    reserve_fd = -1;
    pthread_mutex_unlock(&reserve_lock);
    return had;
}

/* ------------------------------------------------------------------------------------ */
/* contexts                                                                             */

static void ctx_tick(void *arg, double now);
static void ctx_free_zombies(void *arg);
static void fail_pending(wio_stream *s);

static size_t descriptor_budget(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > (1u << 30))
        return (size_t)1 << 30;
    return rl.rlim_cur > 2 * FD_RESERVE_SLACK ? (size_t)rl.rlim_cur - FD_RESERVE_SLACK : rl.rlim_cur / 2;
}

int wio_stream_ctx_create(wio_stream_ctx **out, const wio_stream_params *p)
{
    wio_stream_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory creating a transport context");
    ctx->p = *p;
    if (!ctx->p.max_handshakes)
        ctx->p.max_handshakes = 64;
    ctx->self_id = WIO_ID_BOOT;
    wio_list_init(&ctx->streams);
    wio_list_init(&ctx->handshakes);
    wio_list_init(&ctx->zombies);
    wio_list_init(&ctx->listeners);
    ctx->fd_budget = descriptor_budget();
    reserve_users_add(1);
    ctx->src.arg = ctx;
    ctx->src.tick = ctx_tick;
    ctx->src.after_epoll = ctx_free_zombies;
    wio_poller_add_source(p->poller, &ctx->src);
    *out = ctx;
    return 0;
}

static void free_stream(wio_stream *s)
{
    if (s->kind->freed)
        s->kind->freed(s);
    if (s->rbuf != s->hs_rbuf)
        free(s->rbuf);
    free(s);
}

static void ctx_free_zombies(void *arg)
{
    wio_stream_ctx *ctx = arg;
    wio_list *pos, *tmp;
    WIO_LIST_FOREACH_SAFE(pos, tmp, &ctx->zombies) {
        wio_list_remove(pos);
        free_stream(WIO_CONTAINER_OF(pos, wio_stream, link));
    }
}

void wio_stream_ctx_destroy(wio_stream_ctx *ctx)
{
    if (!ctx)
        return;
    wio_list *pos, *tmp;
    WIO_LIST_FOREACH_SAFE(pos, tmp, &ctx->listeners)
        wio_listener_close(WIO_CONTAINER_OF(pos, wio_listener, link));
    WIO_LIST_FOREACH_SAFE(pos, tmp, &ctx->handshakes)
        wio_stream_close(WIO_CONTAINER_OF(pos, wio_stream, link), WAITIO_ERR_CANCELLED);
    WIO_LIST_FOREACH_SAFE(pos, tmp, &ctx->streams)
        wio_stream_close(WIO_CONTAINER_OF(pos, wio_stream, link), WAITIO_ERR_CANCELLED);
    ctx_free_zombies(ctx);
    wio_poller_del_source(ctx->p.poller, &ctx->src);
    reserve_users_add(-1);
    free(ctx);
}

void wio_stream_ctx_set_self(wio_stream_ctx *ctx, uint32_t id, uint32_t eager_credit)
{
    ctx->self_id = id;
    ctx->p.eager_credit = eager_credit;
}

const wio_stream_params *wio_stream_ctx_params(const wio_stream_ctx *ctx) { return &ctx->p; }
void *wio_stream_ctx_owner(const wio_stream_ctx *ctx) { return ctx->p.owner; }
size_t wio_stream_ctx_count(const wio_stream_ctx *ctx) { return ctx->nstreams + ctx->nhandshakes; }
unsigned long wio_stream_ctx_auth_failures(const wio_stream_ctx *ctx) { return ctx->auth_failures; }

/* ------------------------------------------------------------------------------------ */
/* streams                                                                              */

wio_stream *wio_stream_new(wio_stream_ctx *ctx, const wio_stream_kind *kind, int fd,
                           const wio_tp_handler *h, void *hctx)
{
    wio_stream *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->ctx = ctx;
    s->kind = kind;
    s->fd = fd;
    s->pf.fd = -1;
    s->pf.ready = wio_stream_fd_ready;
    s->pf.arg = s;
    s->tp_conn = s;
    s->handler = h;
    s->hctx = hctx;
    s->peer_id = WIO_ID_BOOT;
    s->rbuf = s->hs_rbuf;
    s->rcap = sizeof s->hs_rbuf;
    wio_list_init(&s->sendq);
    wio_list_init(&s->link);
    snprintf(s->desc, sizeof s->desc, "%s", kind->name);
    return s;
}

static int register_fd(wio_stream *s, uint32_t events)
{
    if (s->fd < 0)
        return 0;
    return wio_poller_add(s->ctx->p.poller, &s->pf, s->fd, events);
}

int wio_stream_start_connect(wio_stream *s, uint32_t my_id, uint32_t target_id, unsigned purpose,
                             void *user, int pipe_ready)
{
    wio_stream_ctx *ctx = s->ctx;
    s->initiator = 1;
    s->my_id = my_id;
    s->peer_id = target_id;
    s->purpose = purpose;
    s->user = user;
    s->deadline = wio_now() + ctx->p.connect_timeout;
    wio_list_insert_tail(&ctx->streams, &s->link);
    ctx->nstreams++;
    s->state = WIO_SS_CONNECTING;
    if (register_fd(s, EPOLLIN | (pipe_ready ? 0 : EPOLLOUT)) != 0)
        return WAITIO_ERR_SYS;
    s->want_out = !pipe_ready;
    /* HELLO goes out now on a pipe that is up, and may fail now (a local peer that died after
     * its listener took the connection: EPIPE). The owner gets the connection only when its
     * connect() returns, so it hears of that at the next tick (transport.h: opened or closed
     * follows connect): told now, it would keep a connection that is already closed and freed
     * after this poll round, and close it again later. */
    s->in_connect = 1;
    if (pipe_ready)
        wio_stream_connected(s);
    s->in_connect = 0;
    return 0;
}

/* Accepted connections that have not authenticated: in ctx->handshakes, least recently active
 * first; each costs its stream (a fixed buffer) and a descriptor. */
int wio_stream_start_accept(wio_stream *s)
{
    wio_stream_ctx *ctx = s->ctx;
    s->state = WIO_SS_WAIT_HELLO;
    s->hs_active = wio_now();
    s->deadline = s->hs_active + ctx->p.handshake_timeout;
    s->in_handshake_list = 1;
    wio_list_insert_tail(&ctx->handshakes, &s->link);
    ctx->nhandshakes++;
    if (register_fd(s, EPOLLIN) != 0)
        return WAITIO_ERR_SYS;
    return 0; /* a pipe without a descriptor (files, memory) is polled by its transport */
}

/* A handshake made progress: to the tail of the table (it is not idle). */
static void hs_touch(wio_stream *s)
{
    if (!s->in_handshake_list)
        return;
    s->hs_active = wio_now();
    wio_list_remove(&s->link);
    wio_list_insert_tail(&s->ctx->handshakes, &s->link);
}

/* Handshakes allowed at once: max_handshakes, fewer when the open connections approach the
 * owner's cap (handshakes count against it), never fewer than HS_FLOOR (the owner's cap is
 * soft: it closes idle connections once a new one has authenticated). */
static size_t hs_capacity(const wio_stream_ctx *ctx)
{
    size_t cap = ctx->p.max_handshakes;
    if (ctx->p.max_conns) {
        size_t room = ctx->p.max_conns > ctx->nstreams ? ctx->p.max_conns - ctx->nstreams : 0;
        if (room < HS_FLOOR)
            room = HS_FLOOR;
        if (room < cap)
            cap = room;
    }
    return cap;
}

/* Drops the handshake idle the longest, if it has been idle at least HS_IDLE_MIN (a legitimate
 * peer answers within milliseconds; one that connects and waits is dropped for a newer one).
 * Returns 1 if one left the table, 0 if none may be dropped yet (*when: when one may). */
static int hs_make_room(wio_stream_ctx *ctx, double now, double *when)
{
    while (!wio_list_empty(&ctx->handshakes)) {
        wio_stream *s = WIO_CONTAINER_OF(ctx->handshakes.next, wio_stream, link);
        if (now - s->hs_active < HS_IDLE_MIN) {
            *when = s->hs_active + HS_IDLE_MIN;
            return 0;
        }
        double before = s->hs_active;
        if (s->fd >= 0)
            wio_stream_read(s); /* its bytes may be waiting in this very epoll batch */
        if (s->state == WIO_SS_CLOSED || !s->in_handshake_list)
            return 1;
        if (s->hs_active != before)
            continue; /* it moved to the tail: look at the next one */
        wio_stream_fail(s, WAITIO_ERR_TIMEOUT, "dropped: too many connections in their handshake, "
                        "and this one was idle the longest", 0);
        return 1;
    }
    *when = now + HS_IDLE_MIN;
    return 0;
}

int wio_stream_ctx_hs_room(wio_stream_ctx *ctx)
{
    double when;
    return ctx->nhandshakes < hs_capacity(ctx) || hs_make_room(ctx, wio_now(), &when);
}

/* Authenticated and owned: out of the handshake list, into the streams, full-size buffer. */
int wio_stream_promote(wio_stream *s)
{
    wio_stream_ctx *ctx = s->ctx;
    WIO_ASSERT(s->authenticated && s->rbuf == s->hs_rbuf);
    uint8_t *big = malloc(WIO_STREAM_RBUF);
    if (!big)
        return -1;
    size_t n = s->rend - s->rstart;
    memcpy(big, s->rbuf + s->rstart, n);
    s->rbuf = big;
    s->rcap = WIO_STREAM_RBUF;
    s->rstart = 0;
    s->rend = n;
    if (s->in_handshake_list) {
        wio_list_remove(&s->link);
        ctx->nhandshakes--;
        s->in_handshake_list = 0;
        wio_list_insert_tail(&ctx->streams, &s->link);
        ctx->nstreams++;
        wio_stream_listeners_resume(ctx);
    }
    return 0;
}

static void drop_queue(wio_stream *s, int err)
{
    while (!wio_list_empty(&s->sendq)) {
        wio_send_item *it = WIO_CONTAINER_OF(s->sendq.next, wio_send_item, link);
        wio_list_remove(&it->link);
        it->in_flight = 0;
        if (it->done)
            it->done(it, err);
    }
}

void wio_stream_close(wio_stream *s, int err)
{
    if (s->state == WIO_SS_CLOSED)
        return;
    wio_stream_ctx *ctx = s->ctx;
    s->state = WIO_SS_CLOSED;
    if (s->data_fd)
        wio_poller_data_fds(ctx->p.poller, -1);
    if (s->pf.fd >= 0 && s->fd >= 0)
        wio_poller_del(ctx->p.poller, &s->pf);
    s->kind->pipe->release(s);
    s->fd = -1;
    drop_queue(s, err);
    if (s->in_handshake_list) {
        ctx->nhandshakes--;
        s->in_handshake_list = 0;
    } else if (wio_list_linked(&s->link)) {
        ctx->nstreams--;
    }
    /* freed after the current poll round: callers up the stack may still hold s */
    if (wio_list_linked(&s->link))
        wio_list_remove(&s->link);
    wio_list_insert_tail(&ctx->zombies, &s->link);
    reserve_take();
    wio_stream_listeners_resume(ctx);
}

/* Strangers can make us log as fast as they connect: at most HS_LOG_BURST lines at once, then
 * HS_LOG_RATE a second, with the count of what was left out. 1 if this line may be written. */
static int log_take(wio_stream_ctx *ctx, unsigned long *suppressed)
{
    double now = wio_now();
    ctx->log_tokens = ctx->log_last == 0 ? HS_LOG_BURST : ctx->log_tokens + (now - ctx->log_last) * HS_LOG_RATE;
    if (ctx->log_tokens > HS_LOG_BURST)
        ctx->log_tokens = HS_LOG_BURST;
    ctx->log_last = now;
    if (ctx->log_tokens < 1) {
        ctx->log_suppressed++;
        return 0;
    }
    ctx->log_tokens -= 1;
    *suppressed = ctx->log_suppressed;
    ctx->log_suppressed = 0;
    return 1;
}

/* An accepted connection that never authenticated: logged (rate-limited), nothing else. */
static void log_unauthenticated(wio_stream *s, int err, const char *why)
{
    if ((s->state == WIO_SS_WAIT_AUTH && err == WAITIO_ERR_PEER) || err == WAITIO_ERR_AUTH)
        s->ctx->auth_failures++;
    int level = err == WAITIO_ERR_PEER && s->state != WIO_SS_WAIT_AUTH ? WIO_LOG_INFO : WIO_LOG_WARN;
    unsigned long dropped;
    if (!wio_log_on(level) || !log_take(s->ctx, &dropped))
        return;
    char more[80] = "";
    if (dropped)
        snprintf(more, sizeof more, " [%lu similar messages suppressed]", dropped);
    /* one that saw our proof and left lacks the key (or finalized mid-handshake); one that
     * leaves before it even said HELLO is not worth a warning */
    if (s->state == WIO_SS_WAIT_AUTH && err == WAITIO_ERR_PEER)
        wio_warn("connection %s: authentication not completed (%s); a peer without the instance "
                 "key?%s", s->desc, why, more);
    else if (level == WIO_LOG_INFO)
        wio_info("closing connection %s before authentication: %s%s", s->desc, why, more);
    else
        wio_warn("closing connection %s before authentication: %s%s", s->desc, why, more);
}

/* The pipe broke (EOF, reset) while we, the connector, waited for HELLO_ACK or ACCEPT: the
 * acceptor dropped us before its verdict (overloaded, or we did not poll within its deadline),
 * and its owner may connect again. A peer found dead by other means is not "dropped". */
static int dropped_in_handshake(const wio_stream *s)
{
    return s->initiator && (s->state == WIO_SS_WAIT_ACK || s->state == WIO_SS_WAIT_ACCEPT)
               ? WIO_TP_DROPPED : 0;
}

void wio_stream_fail(wio_stream *s, int err, const char *why, int rejected)
{
    if (s->state == WIO_SS_CLOSED)
        return;
    if (s->in_connect) { /* see wio_stream_start_connect; the first failure is the one reported */
        if (!s->fail_why[0]) {
            s->fail_err = err;
            s->fail_rejected = rejected;
            wio_stream_fail_soon(s, why);
        }
        return;
    }
    int owned = s->user != NULL;
    if (s->orphaned || s->state == WIO_SS_REJECTING)
        wio_debug("connection %s closed: %s", s->desc, why);
    else if (!s->authenticated && !s->initiator)
        log_unauthenticated(s, err, why);
    else if (err == WAITIO_ERR_PROTO || err == WAITIO_ERR_AUTH || err == WAITIO_ERR_TIMEOUT)
        wio_warn("closing connection %s: %s", s->desc, why);
    else
        wio_debug("connection %s closed: %s", s->desc, why);
    const wio_tp_handler *h = s->handler;
    void *hctx = s->hctx, *user = s->user;
    wio_stream_close(s, err);
    /* only an owner hears of it: an unauthenticated connection changes nothing else */
    if (h->closed && owned)
        h->closed(hctx, user, err, why, rejected);
}

int wio_stream_idle(const wio_stream *s) { return wio_list_empty(&s->sendq); }

void wio_stream_abandon(wio_stream *s)
{
    int connecting = s->state == WIO_SS_CONNECTING || s->state == WIO_SS_WAIT_ACK ||
                     s->state == WIO_SS_WAIT_ACCEPT;
    if (!s->initiator || !connecting) {
        wio_stream_close(s, WAITIO_ERR_PEER);
        return;
    }
    s->user = NULL;
    s->orphaned = 1;
    wio_list *pos, *tmp;
    WIO_LIST_FOREACH_SAFE(pos, tmp, &s->sendq) { /* the owner's items fail now; the handshake goes on */
        wio_send_item *it = WIO_CONTAINER_OF(pos, wio_send_item, link);
        if (it == &s->hs_item)
            continue;
        wio_list_remove(&it->link);
        it->in_flight = 0;
        if (it->done)
            it->done(it, WAITIO_ERR_PEER);
    }
}

/* ------------------------------------------------------------------------------------ */
/* sending                                                                              */

static void frame_start(wio_stream *s, wio_send_item *it)
{
    if (it->chunk) {
        size_t left = it->total - it->offset;
        it->frame_payload = left < it->chunk ? left : it->chunk;
        it->h.type = WIO_FT_DATA;
        it->h.aux = it->offset;
    } else {
        it->frame_payload = it->total;
    }
    it->h.len = it->frame_payload;
    it->h.seq = s->tx_seq++;
    it->h.credit = (s->state == WIO_SS_OPEN && s->handler->take_credit) ? s->handler->take_credit(s->hctx, s->user) : 0;
    it->wire_len = wio_frame_encode(&it->h, it->wire);
    it->frame_sent = 0;
    it->in_flight = 1;
}

static int set_want_out(wio_stream *s, int on)
{
    if (s->kind->pipe->want_write(s, on) != 0) {
        wio_stream_fail(s, WAITIO_ERR_SYS, "cannot watch the connection for writing", 0);
        return -1;
    }
    s->want_out = on;
    return 0;
}

/* The unwritten part of item it's current frame as at most two iovecs; returns how many. */
static int item_iov(wio_stream *s, wio_send_item *it, struct iovec *iov)
{
    if (!it->in_flight)
        frame_start(s, it);
    int n_iov = 0;
    if (it->frame_sent < it->wire_len) {
        iov[n_iov].iov_base = it->wire + it->frame_sent;
        iov[n_iov++].iov_len = it->wire_len - it->frame_sent;
    }
    size_t body_done = it->frame_sent > it->wire_len ? it->frame_sent - it->wire_len : 0;
    if (body_done < it->frame_payload) {
        size_t base = it->chunk ? it->offset : 0;
        iov[n_iov].iov_base = (void *)(it->payload + base + body_done);
        iov[n_iov++].iov_len = it->frame_payload - body_done;
    }
    return n_iov;
}

/* An item's current frame is written: the next chunk of a chunked transfer goes behind the
 * frames queued meanwhile; anything else is done. Returns -1 when the stream closed. */
static int item_frame_sent(wio_stream *s, wio_send_item *it)
{
    it->in_flight = 0;
    if (it->chunk) {
        it->offset += it->frame_payload;
        if (it->offset < it->total) {
            /* let frames queued behind a large transfer through between chunks */
            if (it->link.next != &s->sendq) {
                wio_list_remove(&it->link);
                wio_list_insert_tail(&s->sendq, &it->link);
            }
            return 0;
        }
    }
    wio_list_remove(&it->link);
    if (it->done)
        it->done(it, 0);
    return s->state == WIO_SS_CLOSED ? -1 : 0;
}

/* Writes queued frames until done or the pipe would block. Frames that queued up behind each
 * other (the pipe was full, or the connection not yet open) go out together, up to
 * FLUSH_BATCH of them in one sendv; a chunk of a large transfer goes alone. Returns 0 or -1
 * (stream failed). */
static int stream_flush(wio_stream *s)
{
    const wio_pipe_ops *pipe = s->kind->pipe;
    while (!wio_list_empty(&s->sendq)) {
        struct iovec iov[2 * FLUSH_BATCH];
        wio_send_item *items[FLUSH_BATCH];
        int n_iov = 0, n_items = 0;
        size_t bytes = 0;
        for (wio_list *pos = s->sendq.next; pos != &s->sendq && n_items < FLUSH_BATCH; pos = pos->next) {
            wio_send_item *it = WIO_CONTAINER_OF(pos, wio_send_item, link);
            if (it->chunk && n_items)
                break;
            int k = item_iov(s, it, iov + n_iov);
            for (int i = 0; i < k; i++)
                bytes += iov[n_iov + i].iov_len;
            n_iov += k;
            items[n_items++] = it;
            if (it->chunk || bytes >= FLUSH_BATCH_BYTES)
                break;
        }
        ssize_t n = pipe->sendv(s, iov, n_iov);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                if (pipe->flush)
                    pipe->flush(s);
                if (!s->want_out && set_want_out(s, 1) != 0)
                    return -1;
                return 0;
            }
            char why[128];
            snprintf(why, sizeof why, "send failed: %s", strerror(errno));
            wio_stream_fail(s, WAITIO_ERR_PEER, why, dropped_in_handshake(s));
            return -1;
        }
        /* credit the written bytes to the items in order; the first one not finished waits */
        size_t left = (size_t)n;
        for (int i = 0; i < n_items; i++) {
            wio_send_item *it = items[i];
            size_t need = it->wire_len + it->frame_payload - it->frame_sent;
            size_t take = left < need ? left : need;
            it->frame_sent += take;
            left -= take;
            if (take < need)
                break;
            if (item_frame_sent(s, it) != 0)
                return -1;
        }
    }
    if (pipe->flush)
        pipe->flush(s);
    if (s->state == WIO_SS_CLOSED)
        return -1;
    if (s->want_out && set_want_out(s, 0) != 0)
        return -1;
    if (s->shutdown_pending && s->state == WIO_SS_OPEN) {
        s->state = WIO_SS_SHUTDOWN;
        pipe->shutdown(s);
    }
    if (s->state == WIO_SS_REJECTING)
        wio_stream_fail(s, WAITIO_ERR_PEER, "closed after our verdict (ACCEPT with REJECT or NACK)", 0);
    return 0;
}

void wio_stream_send(wio_stream *s, wio_send_item *it)
{
    it->in_flight = 0;
    if (s->state == WIO_SS_CLOSED) {
        if (it->done)
            it->done(it, WAITIO_ERR_PEER);
        return;
    }
    int was_empty = wio_list_empty(&s->sendq);
    wio_list_insert_tail(&s->sendq, &it->link);
    /* Before the handshake completes only handshake frames go out; the rest wait. */
    if (was_empty && !s->want_out && s->state != WIO_SS_CONNECTING &&
        (s->state == WIO_SS_OPEN || wio_frame_is_handshake(it->h.type)))
        stream_flush(s);
}

/* A frame that fits the pipe's reserved space is encoded and copied straight into it: no staged
 * header, no iovec, one copy of the payload (the 8-32 B message's path over shm). 1 if sent.
 * The size is checked before anything is written there: a shm pipe's space is the line its
 * reader polls, and a store into it that is not followed by the record costs a line transfer. */
static int send_in_place(wio_stream *s, const wio_pipe_ops *pipe, const wio_frame_hdr *h, const void *payload)
{
    size_t hdr_len = wio_frame_encoded_size(h), room;
    if (h->len > WIO_FRAME_HDR_SIZE) /* more than any pipe reserves (a line) */
        return 0;
    uint8_t *dst = pipe->reserve(s, &room);
    if (!dst || room < WIO_FRAME_HDR_SIZE || hdr_len + (size_t)h->len > room) /* the encoder's out[] */
        return 0;
    (void)wio_frame_encode(h, dst);
    if (h->len)
        memcpy(dst + hdr_len, payload, (size_t)h->len);
    pipe->commit(s, hdr_len + (size_t)h->len);
    s->tx_seq++;
    if (pipe->flush)
        pipe->flush(s);
    return 1;
}

/* The fast path of a small frame (transport.h, send_now): no item, no queue, one sendv (or
 * written in place). What the pipe does not take at once (a full socket buffer or ring) is
 * copied to the stream's spill item, which then goes out first, like any partly written frame. */
int wio_stream_send_now(wio_stream *s, wio_frame_hdr *h, const void *payload)
{
    if (s->state != WIO_SS_OPEN || !wio_list_empty(&s->sendq) || h->len > WIO_SEND_NOW_MAX)
        return -1;
    const wio_pipe_ops *pipe = s->kind->pipe;
    wio_send_item *it = &s->spill;
    h->seq = s->tx_seq;
    if (pipe->reserve && send_in_place(s, pipe, h, payload))
        return 0;
    size_t hdr_len = wio_frame_encode(h, it->wire);
    struct iovec iov[2] = {{it->wire, hdr_len}, {(void *)(uintptr_t)payload, (size_t)h->len}};
    ssize_t n;
    do
        n = pipe->sendv(s, iov, h->len ? 2 : 1);
    while (n < 0 && errno == EINTR);
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
        char why[128];
        snprintf(why, sizeof why, "send failed: %s", strerror(errno));
        wio_stream_fail(s, WAITIO_ERR_PEER, why, 0);
        return -1;
    }
    s->tx_seq++;
    size_t sent = n < 0 ? 0 : (size_t)n, total = hdr_len + (size_t)h->len;
    if (sent < total) {
        memcpy(s->spill_payload, payload, (size_t)h->len);
        it->h = *h;
        it->payload = s->spill_payload;
        it->total = it->frame_payload = (size_t)h->len;
        it->chunk = it->offset = 0;
        it->frame_sent = sent;
        it->wire_len = hdr_len;
        it->in_flight = 1;
        it->done = NULL;
        wio_list_insert_tail(&s->sendq, &it->link);
        if (!s->want_out && set_want_out(s, 1) != 0)
            return -1; /* the stream failed: the caller's slow path reports it on a request */
    }
    if (pipe->flush)
        pipe->flush(s);
    return 0;
}

void wio_stream_writable(wio_stream *s)
{
    if (s->state == WIO_SS_CONNECTING) {
        wio_stream_connected(s);
        return;
    }
    stream_flush(s);
}

void wio_stream_shutdown(wio_stream *s)
{
    if (s->state != WIO_SS_OPEN)
        return;
    s->shutdown_pending = 1;
    if (wio_list_empty(&s->sendq))
        stream_flush(s);
}

void wio_stream_send_handshake(wio_stream *s, uint8_t type, uint16_t flags, size_t len)
{
    wio_send_item *it = &s->hs_item;
    memset(&it->h, 0, sizeof it->h);
    it->h.type = type;
    it->h.flags = flags;
    it->h.src = s->my_id;
    it->payload = s->hs_payload;
    it->total = len;
    it->chunk = 0;
    it->done = NULL;
    /* handshake frames go first: nothing else may precede them on the wire */
    it->in_flight = 0;
    wio_list_insert_head(&s->sendq, &it->link);
    if (!s->want_out)
        stream_flush(s);
}

void wio_stream_open(wio_stream *s)
{
    /* only an authenticated stream opens, and only once */
    WIO_ASSERT(s->authenticated && s->state != WIO_SS_OPEN && s->state != WIO_SS_CLOSED);
    s->state = WIO_SS_OPEN;
    s->deadline = 0;
    if (s->kind->pipe == &wio_socket_pipe) { /* its descriptor carries data: epoll more often */
        s->data_fd = 1;
        wio_poller_data_fds(s->ctx->p.poller, 1);
    }
    snprintf(s->desc + strlen(s->desc), sizeof s->desc - strlen(s->desc), " id %u",
             (unsigned)s->peer_id);
    if (s->handler->opened)
        s->handler->opened(s->hctx, s->user, &s->hello);
    if (s->state == WIO_SS_OPEN && !wio_list_empty(&s->sendq) && !s->want_out)
        stream_flush(s);
}

void wio_stream_drop_buffered(wio_stream *s)
{
    s->rx_drop = 1; /* parse_bytes stops after the frame being handled and takes the rest */
}

/* ------------------------------------------------------------------------------------ */
/* receiving                                                                            */

/* A whole frame (header + payload) arrived. Returns nonzero when the stream is gone. */
static int frame_complete(wio_stream *s)
{
    const wio_frame_hdr *h = &s->rx_hdr;
    s->rx_state = RX_HEADER;
    if (wio_frame_is_handshake(h->type))
        return wio_hs_frame(s, h);
    if (s->handler->frame_end && s->handler->frame_end(s->hctx, s->user, h) != 0) {
        wio_stream_fail(s, WAITIO_ERR_PROTO, "invalid frame content", 0);
        return 1;
    }
    return s->state == WIO_SS_CLOSED;
}

/* Decodes and checks a header (magic, version, bounds, sequence number, allowed in this state)
 * into s->rx_hdr. Returns nonzero when the stream failed. */
static int header_check(wio_stream *s, const uint8_t *raw)
{
    const char *why = NULL;
    wio_frame_hdr *h = &s->rx_hdr;
    char msg[160];
    if (wio_frame_decode(raw, h, &why) != 0) {
        snprintf(msg, sizeof msg, "bad frame header: %s", why);
        wio_stream_fail(s, WAITIO_ERR_PROTO, msg, 0);
        return 1;
    }
    if (h->seq != s->rx_seq) {
        snprintf(msg, sizeof msg, "sequence number %u, expected %u", (unsigned)h->seq, (unsigned)s->rx_seq);
        wio_stream_fail(s, WAITIO_ERR_PROTO, msg, 0);
        return 1;
    }
    s->rx_seq++;
    if (!wio_hs_frame_allowed(s->state, h->type)) {
        snprintf(msg, sizeof msg, "%s frame not allowed in this connection state",
                 wio_frame_type_name(h->type));
        wio_stream_fail(s, WAITIO_ERR_PROTO, msg, 0);
        return 1;
    }
    return 0;
}

static void fail_rejected(wio_stream *s, const wio_frame_hdr *h)
{
    char msg[160];
    snprintf(msg, sizeof msg, "rejected %s frame", wio_frame_type_name(h->type));
    wio_stream_fail(s, WAITIO_ERR_PROTO, msg, 0);
}

/* A checked header: its payload will stream in (frame_begin chose where). */
static int header_arrived(wio_stream *s)
{
    const wio_frame_hdr *h = &s->rx_hdr;
    s->rx_got = 0;
    s->rx_dest = NULL;
    if (wio_frame_is_handshake(h->type)) {
        s->rx_dest = s->rx_small;
    } else if (s->handler->frame_begin && s->handler->frame_begin(s->hctx, s->user, h, &s->rx_dest) != 0) {
        fail_rejected(s, h);
        return 1;
    }
    if (s->state == WIO_SS_CLOSED)
        return 1;
    if (h->len == 0)
        return frame_complete(s);
    s->rx_state = RX_PAYLOAD;
    return 0;
}

/* A checked header whose whole payload is at hand (in the read buffer or in place in the pipe):
 * one call hands the frame to the owner. Returns nonzero when the stream is gone. */
static int whole_frame(wio_stream *s, const uint8_t *payload)
{
    if (s->handler->frame_whole(s->hctx, s->user, &s->rx_hdr, payload) != 0) {
        fail_rejected(s, &s->rx_hdr);
        return 1;
    }
    return s->state == WIO_SS_CLOSED;
}

/* Parses frames out of n bytes at p (the read buffer, or a pipe's bytes in place): whole
 * headers and as much payload as there is. Returns the bytes used; fewer than n only when a
 * header is incomplete (the caller keeps those bytes) or when the stream is gone (*gone). */
static size_t parse_bytes(wio_stream *s, const uint8_t *p, size_t n, int *gone)
{
    size_t used = 0;
    *gone = 0;
    for (;;) {
        if (s->rx_state == RX_HEADER) {
            size_t hdr_len = used < n ? wio_frame_hdr_len(p[used]) : WIO_FRAME_HDR_SIZE;
            if (n - used < hdr_len)
                return used;
            used += hdr_len;
            if (header_check(s, p + used - hdr_len)) {
                *gone = 1;
                return used;
            }
            const wio_frame_hdr *h = &s->rx_hdr;
            if (h->len <= n - used && s->handler->frame_whole && !wio_frame_is_handshake(h->type)) {
                used += (size_t)h->len;
                if (whole_frame(s, p + used - h->len)) {
                    *gone = 1;
                    return used;
                }
                continue;
            }
            if (header_arrived(s)) {
                *gone = 1;
                return used;
            }
            if (s->rx_drop) /* a handshake frame switched pipes: the rest is not ours */
                break;
            continue;
        }
        size_t avail = n - used;
        if (avail == 0)
            return used;
        size_t need = s->rx_hdr.len - s->rx_got;
        size_t take = avail < need ? avail : need;
        if (s->rx_dest)
            memcpy(s->rx_dest + s->rx_got, p + used, take);
        used += take;
        s->rx_got += take;
        if (s->rx_got == s->rx_hdr.len && frame_complete(s)) {
            *gone = 1;
            return used;
        }
        if (s->rx_drop)
            break;
    }
    s->rx_drop = 0;
    return n;
}

/* Consumes buffered bytes. Returns nonzero when the stream is gone. */
static int parse_buffer(wio_stream *s)
{
    int gone;
    s->rstart += parse_bytes(s, s->rbuf + s->rstart, s->rend - s->rstart, &gone);
    return gone;
}

static void fail_corrupt_pipe(wio_stream *s)
{
    char why[128];
    snprintf(why, sizeof why, "corrupt data in the %s pipe", s->kind->name);
    wio_stream_fail(s, WAITIO_ERR_PROTO, why, 0);
}

/* A pipe that lends its bytes (peek/consume): frames are parsed where they lie, payloads copied
 * once, straight to their destination. Only a header split between two runs goes through the
 * read buffer. At most 64 runs per call, so that one busy peer does not starve the others. */
static void stream_read_in_place(wio_stream *s)
{
    for (int rounds = 0; rounds < 64 && s->state != WIO_SS_CLOSED; rounds++) {
        const wio_pipe_ops *pipe = s->kind->pipe;
        size_t n, used;
        int gone;
        const uint8_t *p = pipe->peek(s, &n);
        if (!p) {
            if (n == (size_t)-1)
                fail_corrupt_pipe(s);
            return;
        }
        if (s->rend > s->rstart) {
            /* the rest of a header that began in the previous run */
            size_t have = s->rend - s->rstart, hdr_len = wio_frame_hdr_len(s->rbuf[s->rstart]);
            used = hdr_len - have < n ? hdr_len - have : n;
            memcpy(s->rbuf + s->rend, p, used);
            s->rend += used;
            gone = parse_buffer(s);
        } else {
            used = parse_bytes(s, p, n, &gone);
            if (!gone && used < n) { /* a header's beginning: keep it */
                memcpy(s->rbuf, p + used, n - used);
                s->rstart = 0;
                s->rend = n - used;
                used = n;
            }
        }
        if (gone)
            return; /* closed: its pipe is released, nothing more to consume */
        if (s->rstart == s->rend)
            s->rstart = s->rend = 0;
        pipe->consume(s, used);
    }
}

/* Reads and parses the byte stream until it is drained or 16 reads were made. */
void wio_stream_read(wio_stream *s)
{
    if (s->kind->pipe->peek) {
        stream_read_in_place(s);
        return;
    }
    for (int rounds = 0; rounds < 16 && s->state != WIO_SS_CLOSED; rounds++) {
        const wio_pipe_ops *pipe = s->kind->pipe;
        if (pipe->peek) { /* the transport switched pipes in a handshake frame just parsed */
            stream_read_in_place(s);
            return;
        }
        ssize_t n;
        size_t want;
        size_t buffered = s->rend - s->rstart;
        int direct = s->rx_state == RX_PAYLOAD && buffered == 0 && s->rx_dest &&
                     s->rx_hdr.len - s->rx_got >= DIRECT_READ_MIN;
        if (direct) {
            want = s->rx_hdr.len - s->rx_got;
            n = pipe->recv(s, s->rx_dest + s->rx_got, want);
        } else {
            if (s->rstart == s->rend) {
                s->rstart = s->rend = 0;
            } else if (s->rstart > s->rcap / 2) {
                memmove(s->rbuf, s->rbuf + s->rstart, buffered);
                s->rstart = 0;
                s->rend = buffered;
            }
            want = s->rcap - s->rend < RECV_BATCH ? s->rcap - s->rend : RECV_BATCH;
            n = pipe->recv(s, s->rbuf + s->rend, want);
        }
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return;
            if (errno == EPROTO) {
                fail_corrupt_pipe(s);
                return;
            }
            char why[128];
            snprintf(why, sizeof why, "receive failed: %s", strerror(errno));
            wio_stream_fail(s, WAITIO_ERR_PEER, why, dropped_in_handshake(s));
            return;
        }
        if (n == 0) {
            wio_stream_eof(s);
            return;
        }
        if (s->in_handshake_list)
            hs_touch(s);
        if (direct) {
            s->rx_got += (size_t)n;
            if (s->rx_got == s->rx_hdr.len && frame_complete(s))
                return;
        } else {
            s->rend += (size_t)n;
            if (parse_buffer(s))
                return;
        }
        if ((size_t)n < want)
            return; /* drained; level-triggered epoll (or the next poll) brings us back */
    }
}

void wio_stream_poll(wio_stream *s)
{
    if (s->state != WIO_SS_OPEN && s->state != WIO_SS_SHUTDOWN)
        return;
    wio_stream_read(s);
    if (s->state != WIO_SS_CLOSED && s->want_out)
        stream_flush(s);
}

void wio_stream_park(wio_stream *s)
{
    if (s->state != WIO_SS_OPEN || s->pf.fd < 0 || s->pf.parked)
        return;
    if (wio_poller_park(s->ctx->p.poller, &s->pf) == 0) /* else epoll keeps it, as before */
        wio_debug("%s: parked (read directly until this process blocks)", s->desc);
}

void wio_stream_eof(wio_stream *s)
{
    wio_stream_fail(s, WAITIO_ERR_PEER, s->state == WIO_SS_SHUTDOWN ? "closed after our half-close (finalize or idle close)"
                                                                    : "peer closed the connection",
                    dropped_in_handshake(s));
}

/* A socket pipe finished connecting (EPOLLOUT while CONNECTING). */
static void socket_connected(wio_stream *s)
{
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
        err = errno;
    if (err) {
        char why[160];
        snprintf(why, sizeof why, "connect to %s failed: %s", s->desc, strerror(err));
        wio_stream_fail(s, WAITIO_ERR_PEER, why, 0);
        return;
    }
    wio_stream_connected(s);
}

void wio_stream_connected(wio_stream *s)
{
    if (s->want_out && set_want_out(s, 0) != 0)
        return;
    wio_hs_send_hello(s);
}

void wio_stream_fd_ready(wio_poll_fd *pf, uint32_t events)
{
    wio_stream *s = pf->arg;
    if (s->state == WIO_SS_CLOSED)
        return;
    if (s->fail_why[0]) {
        /* it failed in connect (e.g. ECONNREFUSED from a local peer that died): the socket
         * reports writable before the tick, and must not be taken for connected (HELLO would
         * fail with ENOTCONN, which reads as "dropped in the handshake" and is retried) */
        fail_pending(s);
        return;
    }
    if (s->state == WIO_SS_CONNECTING) {
        if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))
            socket_connected(s);
        return;
    }
    if (events & (EPOLLIN | EPOLLHUP | EPOLLERR))
        wio_stream_read(s);
    if (s->state != WIO_SS_CLOSED && (events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) && s->want_out)
        stream_flush(s);
}

/* ------------------------------------------------------------------------------------ */
/* the socket pipe (tcp, and shm's local socket before its rings take over)            */

static ssize_t socket_sendv(wio_stream *s, struct iovec *iov, int iovcnt)
{
    /* a small frame: one contiguous send, which costs the kernel less than gathering iovecs */
    if (iovcnt == 2 && iov[0].iov_len + iov[1].iov_len <= SOCKET_COPY_MAX) {
        uint8_t buf[SOCKET_COPY_MAX];
        memcpy(buf, iov[0].iov_base, iov[0].iov_len);
        memcpy(buf + iov[0].iov_len, iov[1].iov_base, iov[1].iov_len);
        return send(s->fd, buf, iov[0].iov_len + iov[1].iov_len, MSG_NOSIGNAL);
    }
    struct msghdr msg = {.msg_iov = iov, .msg_iovlen = (size_t)iovcnt};
    return sendmsg(s->fd, &msg, MSG_NOSIGNAL);
}

static ssize_t socket_recv(wio_stream *s, void *buf, size_t n) { return recv(s->fd, buf, n, 0); }

static int socket_want_write(wio_stream *s, int on)
{
    return wio_poller_mod(s->ctx->p.poller, &s->pf, EPOLLIN | (on ? EPOLLOUT : 0)) ? -1 : 0;
}

static void socket_shutdown(wio_stream *s) { shutdown(s->fd, SHUT_WR); }

static void socket_release(wio_stream *s)
{
    if (s->fd >= 0)
        close(s->fd);
}

void wio_socket_describe_peer(wio_stream *s)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    wio_addr a;
    if (getpeername(s->fd, (struct sockaddr *)&ss, &len) == 0 && wio_addr_from_sockaddr((struct sockaddr *)&ss, &a) == 0)
        wio_addr_format(&a, s->desc, sizeof s->desc);
    else if (len > 0 && ss.ss_family == AF_UNIX)
        snprintf(s->desc, sizeof s->desc, "%s local", s->kind->name);
    else
        snprintf(s->desc, sizeof s->desc, "%s fd %d", s->kind->name, s->fd);
}

const wio_pipe_ops wio_socket_pipe = {
    .sendv = socket_sendv,
    .recv = socket_recv,
    .want_write = socket_want_write,
    .shutdown = socket_shutdown,
    .release = socket_release,
};

/* ------------------------------------------------------------------------------------ */
/* deadlines                                                                            */

/* A failure recorded by wio_stream_fail_soon (or inside wio_stream_start_connect) is reported. */
static void fail_pending(wio_stream *s)
{
    char why[sizeof s->fail_why];
    snprintf(why, sizeof why, "%s", s->fail_why);
    wio_stream_fail(s, s->fail_err ? s->fail_err : WAITIO_ERR_PEER, why, s->fail_rejected);
}

static void fail_expired(wio_list *list, double now)
{
    wio_list *pos, *tmp;
    WIO_LIST_FOREACH_SAFE(pos, tmp, list) {
        wio_stream *s = WIO_CONTAINER_OF(pos, wio_stream, link);
        if (s->deadline > 0 && now >= s->deadline && s->state != WIO_SS_OPEN && s->state != WIO_SS_SHUTDOWN) {
            char why[200];
            if (s->fail_why[0]) {
                fail_pending(s);
            } else {
                snprintf(why, sizeof why, "%s to %s did not complete in time",
                         s->state == WIO_SS_CONNECTING ? "connect" : "handshake", s->desc);
                wio_stream_fail(s, s->state == WIO_SS_CONNECTING ? WAITIO_ERR_PEER : WAITIO_ERR_TIMEOUT, why, 0);
            }
            /* the owner's callback may have closed the next one too (it is a zombie now): the
             * rest of this list is walked again from its head */
            if (tmp != list && WIO_CONTAINER_OF(tmp, wio_stream, link)->state == WIO_SS_CLOSED)
                tmp = list->next;
        }
    }
}

static void listeners_tick(wio_stream_ctx *ctx, double now);

static void ctx_tick(void *arg, double now)
{
    wio_stream_ctx *ctx = arg;
    fail_expired(&ctx->handshakes, now);
    fail_expired(&ctx->streams, now);
    listeners_tick(ctx, now);
}

/* A connect that failed synchronously is reported at the next tick (or the socket's next poller
 * event, whichever comes first), as if asynchronously, after the caller has its connection object. */
void wio_stream_fail_soon(wio_stream *s, const char *why)
{
    s->deadline = wio_now();
    snprintf(s->fail_why, sizeof s->fail_why, "%s", why);
    snprintf(s->desc + strlen(s->desc), sizeof s->desc - strlen(s->desc), "!");
    wio_debug("%s", why);
    wio_poller_tick_soon(s->ctx->p.poller);
}

/* ------------------------------------------------------------------------------------ */
/* listeners                                                                            */

static void listener_ready(wio_poll_fd *pf, uint32_t events);

int wio_listener_create(wio_stream_ctx *ctx, int fd, const wio_stream_kind *kind,
                        void (*tune)(int fd), const wio_tp_handler *h, void *hctx, int armed,
                        wio_listener **out)
{
    wio_listener *l = calloc(1, sizeof *l);
    if (!l) {
        close(fd);
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    }
    l->ctx = ctx;
    l->pf.fd = fd;
    l->pf.ready = listener_ready;
    l->pf.arg = l;
    l->kind = kind;
    l->tune = tune;
    l->handler = h;
    l->hctx = hctx;
    l->pause = ACCEPT_PAUSE_MIN;
    wio_list_insert_tail(&ctx->listeners, &l->link);
    if (armed && wio_listener_arm(l) != 0) {
        wio_listener_close(l);
        return WAITIO_ERR_SYS;
    }
    *out = l;
    return 0;
}

int wio_listener_arm(wio_listener *l)
{
    if (l->armed)
        return 0;
    if (wio_poller_add(l->ctx->p.poller, &l->pf, l->pf.fd, EPOLLIN) != 0)
        return WAITIO_ERR_SYS;
    l->armed = 1;
    return 0;
}

void wio_listener_close(wio_listener *l)
{
    if (!l)
        return;
    if (l->armed && !l->paused)
        wio_poller_del(l->ctx->p.poller, &l->pf);
    close(l->pf.fd);
    wio_list_remove(&l->link);
    free(l);
}

/* Takes the listener out of the poller until `until` (0: until a handshake slot frees): left in,
 * a level-triggered listener we do not accept from would wake every epoll_wait at once. */
static void listener_pause(wio_listener *l, double until, int full)
{
    if (!l->armed)
        return;
    if (!l->paused)
        wio_poller_del(l->ctx->p.poller, &l->pf);
    l->paused = 1;
    l->resume_at = until;
    l->paused_full = full;
}

static void listener_resume(wio_listener *l)
{
    if (!l->paused)
        return;
    if (wio_poller_add(l->ctx->p.poller, &l->pf, l->pf.fd, EPOLLIN) == 0)
        l->paused = l->paused_full = 0;
}

/* A stream closed or authenticated: listeners waiting for a slot may accept again. */
void wio_stream_listeners_resume(wio_stream_ctx *ctx)
{
    if (wio_stream_ctx_count(ctx) >= ctx->fd_budget)
        return;
    for (wio_list *pos = ctx->listeners.next; pos != &ctx->listeners; pos = pos->next) {
        wio_listener *l = WIO_CONTAINER_OF(pos, wio_listener, link);
        if (l->paused && (l->resume_at == 0 || l->paused_full))
            listener_resume(l);
    }
}

static void listeners_tick(wio_stream_ctx *ctx, double now)
{
    for (wio_list *pos = ctx->listeners.next; pos != &ctx->listeners; pos = pos->next) {
        wio_listener *l = WIO_CONTAINER_OF(pos, wio_listener, link);
        if (l->paused && l->resume_at > 0 && now >= l->resume_at)
            listener_resume(l);
    }
    reserve_take();
}

static void accept_log(wio_stream_ctx *ctx, const char *what, int err, double pause)
{
    unsigned long dropped;
    if (!log_take(ctx, &dropped))
        return;
    char more[64] = "";
    if (dropped)
        snprintf(more, sizeof more, " (%lu more since the last message)", dropped);
    wio_warn("accepting connections: %s (%s)%s; pausing accepts for %.0f ms", strerror(err), what, more,
             pause * 1000);
}

static double next_pause(wio_listener *l)
{
    double p = l->pause;
    l->pause = p * 2 > ACCEPT_PAUSE_MAX ? ACCEPT_PAUSE_MAX : p * 2;
    return p;
}

/* Out of descriptors: free one by dropping an idle handshake, else take one connection off the
 * backlog with the reserve descriptor and close it (the connector learns at once instead of
 * waiting), and rest. Returns 1 if accepting may go on now. */
static int accept_out_of_fds(wio_listener *l, int err, double now)
{
    wio_stream_ctx *ctx = l->ctx;
    double unused;
    if (hs_make_room(ctx, now, &unused))
        return 1;
    const char *what = "no descriptor to spare";
    if (wio_stream_ctx_release_reserve(ctx)) {
        int fd = accept4(l->pf.fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd >= 0) {
            close(fd);
            what = "closed one waiting connection with the reserve descriptor";
        }
        reserve_take();
    }
    double pause = next_pause(l);
    accept_log(ctx, what, err, pause);
    listener_pause(l, now + pause, 0);
    return 0;
}

static void accept_one(wio_listener *l, int fd)
{
    if (l->tune)
        l->tune(fd);
    wio_stream *s = wio_stream_new(l->ctx, l->kind, fd, l->handler, l->hctx);
    if (!s) {
        close(fd);
        wio_warn("accept: out of memory for a new connection");
        return;
    }
    s->my_id = l->ctx->self_id;
    if (l->kind->pipe == &wio_socket_pipe)
        wio_socket_describe_peer(s);
    if (wio_stream_start_accept(s) != 0)
        wio_stream_fail(s, WAITIO_ERR_SYS, "cannot watch the accepted connection", 0);
}

static void listener_ready(wio_poll_fd *pf, uint32_t events)
{
    (void)events;
    wio_listener *l = pf->arg;
    wio_stream_ctx *ctx = l->ctx;
    double now = wio_now();
    for (int i = 0; i < ACCEPT_BATCH; i++) {
        double when;
        /* At the descriptor budget the same policy as at EMFILE: the handshake idle the
         * longest makes room, else the listener rests (until a stream closes, at the latest
         * when a handshake may be dropped) */
        if (wio_stream_ctx_count(ctx) >= ctx->fd_budget && !hs_make_room(ctx, now, &when)) {
            accept_log(ctx, "at the descriptor limit (ulimit -n) less those kept for the program",
                       EMFILE, when - now);
            listener_pause(l, when, 1);
            return;
        }
        /* the reserve descriptor first: without it our own next connect could fail */
        reserve_take();
        if (reserve_fd < 0 && !hs_make_room(ctx, now, &when)) {
            double pause = next_pause(l);
            accept_log(ctx, "none left beside the reserve one", EMFILE, pause);
            listener_pause(l, now + pause, 0);
            return;
        }
        if (ctx->nhandshakes >= hs_capacity(ctx) && !hs_make_room(ctx, now, &when)) {
            listener_pause(l, when, 1); /* or sooner, when a handshake ends */
            return;
        }
        int fd = accept4(pf->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            int err = errno;
            if (err == EAGAIN || err == EWOULDBLOCK) {
                l->pause = ACCEPT_PAUSE_MIN;
                return;
            }
            if (err == EINTR || err == ECONNABORTED || err == EPROTO || err == EPERM)
                continue;
            if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
                if (accept_out_of_fds(l, err, now))
                    continue;
                return;
            }
            double pause = next_pause(l);
            accept_log(ctx, "unexpected error", err, pause);
            listener_pause(l, now + pause, 0);
            return;
        }
        accept_one(l, fd);
    }
}
