/*
 * tcp.c — the TCP transport's data path: framed sends written directly and handed to epoll only
 * when the socket would block, the receive state machine that parses the frames of open
 * connections and reads large payloads straight into their destination, closing, and the poll
 * loop (one epoll set, plus the shared-memory rings). Both the engine (peers) and the start-up
 * rendezvous use these connections; the engine's vtable is at the end of the file. Connections
 * are set up and authenticated in tcp_cm.c before anything here sees their bytes.
 *
 * Between two processes on the same host the handshake continues with SHM_OFFER / SHM_READY and
 * the connection's byte stream then moves through a shared-memory ring pair (shm.c) instead of
 * the socket; the socket stays for liveness (EOF when the peer dies) and for doorbells that
 * wake a peer blocked in epoll_wait. Framing, parsing and everything above are the same code.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include "transport/tcp_int.h"
#include "core/common.h"

/* ------------------------------------------------------------------------------------ */
/* setup                                                                                */

int wio_tcp_create(wio_tcp **out, const wio_tcp_params *params)
{
    wio_tcp *t = calloc(1, sizeof *t);
    if (!t)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory creating the TCP transport");
    t->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (t->epfd < 0) {
        free(t);
        return wio_fail(WAITIO_ERR_SYS, "epoll_create1: %s", strerror(errno));
    }
    t->params = *params;
    t->self_id = WIO_ID_BOOT;
    wio_list_init(&t->conns);
    wio_list_init(&t->zombies);
    wio_list_init(&t->shm_conns);
    wio_tcp_cm_init(t);
    *out = t;
    return 0;
}

static void free_zombies(wio_tcp *t)
{
    wio_list *pos, *tmp;
    WIO_LIST_FOREACH_SAFE(pos, tmp, &t->zombies) {
        wio_conn *c = WIO_CONTAINER_OF(pos, wio_conn, link);
        wio_list_remove(pos);
        wio_shm_destroy(c->shm);
        free(c->rbuf);
        free(c);
    }
}

void wio_tcp_destroy(wio_tcp *t)
{
    if (!t)
        return;
    wio_list *pos, *tmp;
    WIO_LIST_FOREACH_SAFE(pos, tmp, &t->conns)
        wio_tcp_conn_close(WIO_CONTAINER_OF(pos, wio_conn, link), WAITIO_ERR_CANCELLED);
    free_zombies(t);
    wio_tcp_cm_fini(t);
    close(t->epfd);
    free(t->shm_snapshot);
    free(t);
}

void wio_tcp_set_self_id(wio_tcp *t, uint32_t id) { t->self_id = id; }
void wio_tcp_set_eager_credit(wio_tcp *t, uint32_t credit) { t->params.eager_credit = credit; }
void wio_tcp_set_max_conns(wio_tcp *t, uint32_t max_conns) { t->params.max_conns = max_conns; }
int wio_tcp_epoll_fd(const wio_tcp *t) { return t->epfd; }
unsigned long wio_tcp_auth_failures(const wio_tcp *t) { return t->auth_failures; }
void *wio_tcp_conn_user(const wio_conn *c) { return c->user; }
void wio_tcp_conn_set_user(wio_conn *c, void *user) { c->user = user; }
const char *wio_tcp_conn_desc(const wio_conn *c) { return c->desc; }
int wio_tcp_conn_idle(const wio_conn *c) { return wio_list_empty(&c->sendq); }
int wio_tcp_conn_is_shm(const wio_conn *c) { return c->shm_active; }

int wio_tcp_conn_update_events(wio_conn *c, int want_out)
{
    if (c->shm_active) { /* ring space is polled (wio_tcp_poll), not signalled by the socket */
        c->epollout = want_out;
        return 0;
    }
    struct epoll_event ev = {.events = EPOLLIN | (want_out ? EPOLLOUT : 0), .data.ptr = c};
    if (epoll_ctl(c->tcp->epfd, EPOLL_CTL_MOD, c->fd, &ev) != 0)
        return -1;
    c->epollout = want_out;
    return 0;
}

/* ------------------------------------------------------------------------------------ */
/* closing                                                                              */

static void conn_drop_queue(wio_conn *c, int err)
{
    while (!wio_list_empty(&c->sendq)) {
        wio_send_item *it = WIO_CONTAINER_OF(c->sendq.next, wio_send_item, link);
        wio_list_remove(&it->link);
        it->in_flight = 0;
        if (it->done)
            it->done(it, err);
    }
}

void wio_tcp_conn_close(wio_conn *c, int err)
{
    if (c->state == CS_CLOSED)
        return;
    c->state = CS_CLOSED;
    if (c->shm_active) {
        wio_list_remove(&c->shm_link);
        c->shm_active = 0;
        c->tcp->shm_snapshot_valid = 0;
    }
    if (c->hs_listed)
        wio_tcp_hs_unlist(c);
    if (c->fd >= 0) {
        epoll_ctl(c->tcp->epfd, EPOLL_CTL_DEL, c->fd, NULL);
        close(c->fd);
        c->fd = -1;
    }
    conn_drop_queue(c, err);
    /* freed at the end of the current poll: callers up the stack may still hold c */
    wio_list_remove(&c->link);
    c->tcp->nconns--;
    wio_list_insert_tail(&c->tcp->zombies, &c->link);
}

void wio_tcp_conn_fail(wio_conn *c, int err, const char *why, int rejected)
{
    if (c->state == CS_CLOSED)
        return;
    if (wio_tcp_retry_instead(c, err, why))
        return;
    int was_open = c->state == CS_OPEN || c->state == CS_SHUTDOWN;
    int owned = c->initiator || c->user != NULL; /* someone holds a pointer to c */
    if (!owned && !was_open) {
        c->tcp->auth_failures += c->state == CS_WAIT_AUTH;
        wio_tcp_hs_log_close(c, err, why); /* a stranger's, or a refused one: rate-limited */
    }
    else if (err == WAITIO_ERR_PROTO || err == WAITIO_ERR_AUTH || err == WAITIO_ERR_TIMEOUT)
        wio_warn("closing connection %s: %s", c->desc, why);
    else
        wio_debug("connection %s closed: %s", c->desc, why);
    const wio_conn_handler *h = c->handler;
    void *ctx = c->ctx;
    wio_tcp_conn_close(c, err);
    if (h->closed && (was_open || owned || rejected))
        h->closed(ctx, c, err, why, rejected);
}

/* ------------------------------------------------------------------------------------ */
/* sending                                                                              */

/* Wakes a peer that sleeps in epoll_wait on its end of the socket. A full socket buffer means
 * doorbells are already pending; a dead peer is noticed by reading. */
static void conn_doorbell(wio_conn *c)
{
    static const char bell = 'D';
    (void)send(c->fd, &bell, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* The connection's byte stream, out: the socket or the shared-memory ring. Like sendmsg:
 * bytes written, or -1 with errno (EAGAIN when full). */
static ssize_t conn_sendv(wio_conn *c, struct iovec *iov, int iovcnt)
{
    if (!c->shm_active) {
        struct msghdr msg = {.msg_iov = iov, .msg_iovlen = (size_t)iovcnt};
        return sendmsg(c->fd, &msg, MSG_NOSIGNAL);
    }
    int wake;
    size_t n = wio_shm_writev(c->shm, iov, iovcnt, &wake);
    if (wake)
        conn_doorbell(c);
    if (n == 0) {
        errno = EAGAIN;
        return -1;
    }
    return (ssize_t)n;
}

/* The byte stream, in. Like recv, except that a shared-memory ring never reports EOF (the
 * socket does) and reports corrupt indices as EPROTO. */
static ssize_t conn_recv(wio_conn *c, void *buf, size_t len)
{
    if (!c->shm_active)
        return recv(c->fd, buf, len, 0);
    int wake;
    ssize_t n = wio_shm_read(c->shm, buf, len, &wake);
    if (wake)
        conn_doorbell(c);
    if (n <= 0) {
        errno = n < 0 ? EPROTO : EAGAIN;
        return -1;
    }
    return n;
}

static void frame_start(wio_conn *c, wio_send_item *it)
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
    it->h.seq = c->tx_seq++;
    it->h.credit = (c->state == CS_OPEN && c->handler->take_credit) ? c->handler->take_credit(c->ctx, c) : 0;
    wio_frame_encode(&it->h, it->wire);
    it->frame_sent = 0;
    it->in_flight = 1;
}

/* Writes queued frames until done or the socket would block. Returns 0 or -1 (conn failed). */
int wio_tcp_conn_flush(wio_conn *c)
{
    while (!wio_list_empty(&c->sendq)) {
        wio_send_item *it = WIO_CONTAINER_OF(c->sendq.next, wio_send_item, link);
        if (!it->in_flight)
            frame_start(c, it);
        struct iovec iov[2];
        int n_iov = 0;
        if (it->frame_sent < WIO_FRAME_HDR_SIZE) {
            iov[n_iov].iov_base = it->wire + it->frame_sent;
            iov[n_iov++].iov_len = WIO_FRAME_HDR_SIZE - it->frame_sent;
        }
        size_t body_done = it->frame_sent > WIO_FRAME_HDR_SIZE ? it->frame_sent - WIO_FRAME_HDR_SIZE : 0;
        if (body_done < it->frame_payload) {
            size_t base = it->chunk ? it->offset : 0;
            iov[n_iov].iov_base = (void *)(it->payload + base + body_done);
            iov[n_iov++].iov_len = it->frame_payload - body_done;
        }
        ssize_t n = conn_sendv(c, iov, n_iov);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                if (!c->epollout && wio_tcp_conn_update_events(c, 1) != 0) {
                    wio_tcp_conn_fail(c, WAITIO_ERR_SYS, "epoll_ctl failed", 0);
                    return -1;
                }
                return 0;
            }
            char why[128];
            snprintf(why, sizeof why, "send failed: %s", strerror(errno));
            wio_tcp_conn_fail(c, WAITIO_ERR_PEER, why, 0);
            return -1;
        }
        it->frame_sent += (size_t)n;
        if (it->frame_sent < WIO_FRAME_HDR_SIZE + it->frame_payload)
            continue;
        it->in_flight = 0;
        if (it->chunk) {
            it->offset += it->frame_payload;
            if (it->offset < it->total) {
                /* let frames queued behind a large transfer through between chunks */
                if (it->link.next != &c->sendq) {
                    wio_list_remove(&it->link);
                    wio_list_insert_tail(&c->sendq, &it->link);
                }
                continue;
            }
        }
        wio_list_remove(&it->link);
        if (it->done)
            it->done(it, 0);
        if (c->state == CS_CLOSED)
            return -1;
    }
    if (c->epollout && wio_tcp_conn_update_events(c, 0) != 0) {
        wio_tcp_conn_fail(c, WAITIO_ERR_SYS, "epoll_ctl failed", 0);
        return -1;
    }
    if (c->shutdown_pending && c->state == CS_OPEN) {
        c->state = CS_SHUTDOWN;
        shutdown(c->fd, SHUT_WR);
    }
    if (c->state == CS_REJECTING) /* ACCEPT(REJECT or NACK) is out: nothing more */
        wio_tcp_conn_fail(c, WAITIO_ERR_PEER, "not taken after authentication (ACCEPT with "
                          "REJECT or NACK sent)", 0);
    return 0;
}

void wio_tcp_conn_send(wio_conn *c, wio_send_item *it)
{
    it->in_flight = 0;
    if (c->state == CS_CLOSED) {
        if (it->done)
            it->done(it, WAITIO_ERR_PEER);
        return;
    }
    int was_empty = wio_list_empty(&c->sendq);
    wio_list_insert_tail(&c->sendq, &it->link);
    /* Before the handshake completes nothing but its own frames (send_handshake) goes out:
     * the rest waits for ACCEPT, so nothing is written into a connection that is refused. */
    if (was_empty && !c->epollout && c->state == CS_OPEN)
        wio_tcp_conn_flush(c);
}

void wio_tcp_conn_shutdown(wio_conn *c)
{
    if (c->state != CS_OPEN)
        return;
    c->shutdown_pending = 1;
    if (wio_list_empty(&c->sendq))
        wio_tcp_conn_flush(c);
}

/* ------------------------------------------------------------------------------------ */
/* receiving                                                                            */

/* Only open connections come here: their handshake was read by tcp_cm.c, frame by frame. */

/* A whole frame (header + payload) arrived. Returns nonzero when the connection is gone. */
static int frame_complete(wio_conn *c)
{
    const wio_frame_hdr *h = &c->rx_hdr;
    c->rx_state = RX_HEADER;
    if (c->handler->frame_end && c->handler->frame_end(c->ctx, c, h) != 0) {
        wio_tcp_conn_fail(c, WAITIO_ERR_PROTO, "invalid frame content", 0);
        return 1;
    }
    return c->state == CS_CLOSED;
}

static int header_arrived(wio_conn *c, const uint8_t *raw)
{
    const char *why = NULL;
    wio_frame_hdr *h = &c->rx_hdr;
    char msg[160];
    if (wio_frame_decode(raw, h, &why) != 0) {
        snprintf(msg, sizeof msg, "bad frame header: %s", why);
        wio_tcp_conn_fail(c, WAITIO_ERR_PROTO, msg, 0);
        return 1;
    }
    if (h->seq != c->rx_seq) {
        snprintf(msg, sizeof msg, "sequence number %u, expected %u", (unsigned)h->seq, (unsigned)c->rx_seq);
        wio_tcp_conn_fail(c, WAITIO_ERR_PROTO, msg, 0);
        return 1;
    }
    c->rx_seq++;
    if (wio_frame_is_handshake(h->type)) {
        snprintf(msg, sizeof msg, "%s frame not allowed in this connection state",
                 wio_frame_type_name(h->type));
        wio_tcp_conn_fail(c, WAITIO_ERR_PROTO, msg, 0);
        return 1;
    }
    c->rx_got = 0;
    c->rx_dest = NULL;
    if (c->handler->frame_begin && c->handler->frame_begin(c->ctx, c, h, &c->rx_dest) != 0) {
        snprintf(msg, sizeof msg, "rejected %s frame", wio_frame_type_name(h->type));
        wio_tcp_conn_fail(c, WAITIO_ERR_PROTO, msg, 0);
        return 1;
    }
    if (c->state == CS_CLOSED)
        return 1;
    if (h->len == 0)
        return frame_complete(c);
    c->rx_state = RX_PAYLOAD;
    return 0;
}

/* Consumes buffered bytes. Returns nonzero when the connection is gone. */
static int parse_buffer(wio_conn *c)
{
    for (;;) {
        size_t avail = c->rend - c->rstart;
        if (c->rx_state == RX_HEADER) {
            if (avail < WIO_FRAME_HDR_SIZE)
                return 0;
            const uint8_t *raw = c->rbuf + c->rstart;
            c->rstart += WIO_FRAME_HDR_SIZE;
            if (header_arrived(c, raw))
                return 1;
            continue;
        }
        if (avail == 0)
            return 0;
        size_t need = c->rx_hdr.len - c->rx_got;
        size_t take = avail < need ? avail : need;
        if (c->rx_dest)
            memcpy(c->rx_dest + c->rx_got, c->rbuf + c->rstart, take);
        c->rstart += take;
        c->rx_got += take;
        if (c->rx_got == c->rx_hdr.len && frame_complete(c))
            return 1;
    }
}

static void conn_eof(wio_conn *c);

/* Reads and parses the byte stream (socket or ring) until it is drained or 16 reads were made. */
static void conn_read_stream(wio_conn *c)
{
    for (int rounds = 0; rounds < 16 && c->state != CS_CLOSED; rounds++) {
        ssize_t n;
        size_t want;
        size_t buffered = c->rend - c->rstart;
        int direct = c->rx_state == RX_PAYLOAD && buffered == 0 && c->rx_dest &&
                     c->rx_hdr.len - c->rx_got >= DIRECT_READ_MIN;
        if (direct) {
            want = c->rx_hdr.len - c->rx_got;
            n = conn_recv(c, c->rx_dest + c->rx_got, want);
        } else {
            if (c->rstart == c->rend) {
                c->rstart = c->rend = 0;
            } else if (c->rstart > RBUF_SIZE / 2) {
                memmove(c->rbuf, c->rbuf + c->rstart, buffered);
                c->rstart = 0;
                c->rend = buffered;
            }
            want = RBUF_SIZE - c->rend < RECV_BATCH ? RBUF_SIZE - c->rend : RECV_BATCH;
            n = conn_recv(c, c->rbuf + c->rend, want);
        }
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return;
            if (c->shm_active) {
                wio_tcp_conn_fail(c, WAITIO_ERR_PROTO, "corrupt shared-memory ring indices", 0);
                return;
            }
            char why[128];
            snprintf(why, sizeof why, "receive failed: %s", strerror(errno));
            wio_tcp_conn_fail(c, WAITIO_ERR_PEER, why, 0);
            return;
        }
        if (n == 0) {
            conn_eof(c);
            return;
        }
        if (direct) {
            c->rx_got += (size_t)n;
            if (c->rx_got == c->rx_hdr.len && frame_complete(c))
                return;
        } else {
            c->rend += (size_t)n;
            if (parse_buffer(c))
                return;
        }
        if ((size_t)n < want)
            return; /* drained; level-triggered epoll brings us back */
    }
}

static void conn_eof(wio_conn *c)
{
    wio_tcp_conn_fail(c, WAITIO_ERR_PEER, c->state == CS_SHUTDOWN ? "closed after our half-close (finalize or idle close)"
                                                          : "peer closed the connection", 0);
}

/* The socket of a shared-memory connection is readable: doorbells, or EOF. On EOF, first
 * everything the peer put into the ring before closing is read. */
static void shm_socket_readable(wio_conn *c)
{
    char bells[64];
    for (;;) {
        ssize_t n = recv(c->fd, bells, sizeof bells, 0);
        if (n > 0)
            continue;
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        for (int i = 0; i < (1 << 20) && c->state != CS_CLOSED && wio_shm_readable(c->shm); i++)
            conn_read_stream(c);
        if (c->state == CS_CLOSED)
            return;
        if (n == 0) {
            conn_eof(c);
        } else {
            char why[128];
            snprintf(why, sizeof why, "receive failed: %s", strerror(errno));
            wio_tcp_conn_fail(c, WAITIO_ERR_PEER, why, 0);
        }
        return;
    }
    conn_read_stream(c);
    if (c->state != CS_CLOSED && c->epollout)
        wio_tcp_conn_flush(c);
}

static void conn_readable(wio_conn *c)
{
    if (c->shm_active)
        shm_socket_readable(c);
    else if (c->state == CS_OPEN || c->state == CS_SHUTDOWN)
        conn_read_stream(c);
    else
        wio_tcp_hs_readable(c); /* in its handshake: tcp_cm.c reads it frame by frame */
}

static void conn_writable(wio_conn *c)
{
    if (c->state == CS_CONNECTING) {
        wio_tcp_conn_connected(c);
        return;
    }
    wio_tcp_conn_flush(c);
}

/* Reads the clock only every DEADLINE_CLOCK_EVERY polls (it costs as much as a ring check)
 * unless the caller was ready to block anyway or a connection failed synchronously. */
static void check_deadlines_sometimes(wio_tcp *t, int timeout_ms)
{
    if (timeout_ms == 0 && !t->deadline_due && ++t->epolls_since_clock < DEADLINE_CLOCK_EVERY)
        return;
    t->epolls_since_clock = 0;
    double now = wio_now();
    if (!t->deadline_due && now < t->next_deadline_check)
        return;
    t->deadline_due = 0;
    t->next_deadline_check = now + DEADLINE_CHECK_PERIOD;
    wio_tcp_check_deadlines(t, now);
}

/* Copies the shared-memory connections into t->shm_snapshot; returns how many. Callbacks may
 * close connections while we iterate; closed ones stay allocated until free_zombies. */
static size_t shm_snapshot(wio_tcp *t)
{
    if (t->shm_snapshot_valid)
        return t->shm_snapshot_len;
    size_t n = 0;
    wio_list *pos;
    for (pos = t->shm_conns.next; pos != &t->shm_conns; pos = pos->next)
        n++;
    if (n > t->shm_snapshot_cap) {
        wio_conn **a = realloc(t->shm_snapshot, n * sizeof *a);
        if (!a)
            return 0; /* retried at the next poll */
        t->shm_snapshot = a;
        t->shm_snapshot_cap = n;
    }
    size_t i = 0;
    for (pos = t->shm_conns.next; pos != &t->shm_conns; pos = pos->next)
        t->shm_snapshot[i++] = WIO_CONTAINER_OF(pos, wio_conn, shm_link);
    t->shm_snapshot_len = n;
    t->shm_snapshot_valid = 1;
    return n;
}

/* Reads every ring that has data and writes what waited for ring space. Returns how many
 * connections made progress (a ring that is still full does not count, or a sender stuck on a
 * dead reader would spin without ever looking at the socket that reports the death). */
static int shm_poll(wio_tcp *t, size_t n)
{
    int busy = 0;
    for (size_t i = 0; i < n; i++) {
        wio_conn *c = t->shm_snapshot[i];
        if (c->state == CS_CLOSED)
            continue;
        if (wio_shm_readable(c->shm)) {
            busy++;
            conn_read_stream(c);
        }
        if (c->state != CS_CLOSED && c->epollout) {
            wio_tcp_conn_flush(c);
            busy += c->state != CS_CLOSED && !c->epollout; /* all written; a full ring is not progress */
        }
    }
    return busy;
}

int wio_tcp_poll(wio_tcp *t, int timeout_ms)
{
    struct epoll_event ev[MAX_EVENTS];
    size_t nshm = wio_list_empty(&t->shm_conns) ? 0 : shm_snapshot(t);
    int busy = nshm ? shm_poll(t, nshm) : 0;
    int sleeping = 0;
    if (busy) {
        timeout_ms = 0;
    } else if (timeout_ms != 0 && nshm) {
        /* announce that we sleep, so that writers ring the doorbell; then look once more */
        sleeping = 1;
        for (size_t i = 0; i < nshm; i++) {
            wio_conn *c = t->shm_snapshot[i];
            if (c->state != CS_CLOSED && wio_shm_prepare_sleep(c->shm, c->epollout))
                timeout_ms = 0;
        }
    }
    unsigned every = t->nconns > nshm ? EPOLL_EVERY : EPOLL_EVERY_SHM_ONLY;
    if (timeout_ms == 0 && nshm && ++t->polls_since_epoll < every)
        return busy;
    t->polls_since_epoll = 0;
    int n = epoll_wait(t->epfd, ev, MAX_EVENTS, timeout_ms);
    if (sleeping)
        for (size_t i = 0; i < nshm; i++)
            if (t->shm_snapshot[i]->state != CS_CLOSED)
                wio_shm_end_sleep(t->shm_snapshot[i]->shm);
    if (n < 0) {
        if (errno == EINTR)
            return busy;
        return -wio_fail(WAITIO_ERR_SYS, "epoll_wait: %s", strerror(errno));
    }
    for (int i = 0; i < n; i++) {
        int kind = *(int *)ev[i].data.ptr;
        if (kind == OBJ_LISTENER) {
            wio_tcp_accept_ready(ev[i].data.ptr);
            continue;
        }
        wio_conn *c = ev[i].data.ptr;
        if (c->state == CS_CLOSED || c->fd < 0) /* closed, or waiting to reconnect (CS_RETRY) */
            continue;
        if (ev[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
            if (c->state != CS_CONNECTING)
                conn_readable(c);
        if (c->state != CS_CLOSED && (ev[i].events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) &&
            (c->epollout || c->state == CS_CONNECTING))
            conn_writable(c);
    }
    check_deadlines_sometimes(t, timeout_ms);
    free_zombies(t);
    return n + busy;
}

/* ------------------------------------------------------------------------------------ */
/* the engine's vtable                                                                   */

#include "core/engine.h"

/* Listens before the start-up rendezvous (peers learn the port from the table) but accepts
 * only once the engine has the table: early connections wait in the kernel's backlog. */
static int tcp_open(wio_engine *e, wio_addr *self)
{
    /* the advertised address (wio_boot_choose_address), unless WAITIO_BIND_ALL */
    wio_addr at = *self;
    at.port = 0;
    if (e->cfg.bind_all)
        memset(at.ip, 0, sizeof at.ip);
    uint16_t port;
    int rc = wio_tcp_listen(e->tcp, &at, &wio_engine_conn_handler, e, 0, &e->tcp_listener, &port);
    if (rc)
        return rc;
    self->port = port;
    return 0;
}

static int tcp_start(wio_engine *e)
{
    wio_tcp_set_self_id(e->tcp, e->my_id);
    wio_tcp_set_eager_credit(e->tcp, (uint32_t)e->eager_credit);
    wio_tcp_set_max_conns(e->tcp, e->max_conns);
    return wio_tcp_listener_arm(e->tcp, e->tcp_listener);
}

static int tcp_connect(wio_engine *e, wio_peer *p)
{
    wio_conn *c;
    int rc = wio_tcp_connect(e->tcp, &e->table[p->id].addr, e->my_id, p->id,
                             &wio_engine_conn_handler, e, &c);
    if (rc)
        return rc;
    wio_tcp_conn_set_user(c, p);
    p->tconn = c;
    return 0;
}

static void tcp_send(wio_engine *e, wio_peer *p, wio_send_item *it)
{
    (void)e;
    wio_tcp_conn_send(p->tconn, it);
}

static int tcp_progress(wio_engine *e, int timeout_ms) { return wio_tcp_poll(e->tcp, timeout_ms); }

static void tcp_shutdown_peer(wio_engine *e, wio_peer *p)
{
    (void)e;
    if (p->tconn)
        wio_tcp_conn_shutdown(p->tconn);
}

static int tcp_close_peer(wio_engine *e, wio_peer *p, int err)
{
    (void)e;
    if (p->tconn) {
        wio_conn *c = p->tconn;
        p->tconn = NULL;
        wio_tcp_conn_set_user(c, NULL);
        wio_tcp_conn_close(c, err);
    }
    return 0;
}

static void tcp_close(wio_engine *e)
{
    wio_tcp_listener_close(e->tcp, e->tcp_listener);
    e->tcp_listener = NULL;
}

const wio_transport_ops wio_transport_tcp = {
    .name = "tcp",
    .open = tcp_open,
    .start = tcp_start,
    .connect = tcp_connect,
    .send = tcp_send,
    .progress = tcp_progress,
    .shutdown_peer = tcp_shutdown_peer,
    .close_peer = tcp_close_peer,
    .close = tcp_close,
};
