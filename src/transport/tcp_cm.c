/*
 * tcp_cm.c — the TCP transport's connection management: listeners, accepting, connecting, the
 * authenticated handshake (HELLO / HELLO_ACK / AUTH, then SHM_OFFER / SHM_READY between
 * processes of one host) and handshake deadlines. Everything a connection goes through before
 * it is open; tcp.c moves the bytes once it is.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>
#include "transport/tcp_int.h"
#include "core/common.h"

/* A silent peer (host gone, link cut) is declared dead after about `peer_timeout` seconds:
 * keepalive probes when the connection is idle, TCP_USER_TIMEOUT when data is unacknowledged. */
static void tune_socket(int fd, double peer_timeout)
{
    int one = 1, idle = (int)(peer_timeout / 2), intvl = (int)(peer_timeout / 6), cnt = 3;
    if (idle < 1)
        idle = 1;
    if (intvl < 1)
        intvl = 1;
    unsigned int user_timeout_ms = (unsigned int)(peer_timeout * 1000);
    /* Errors are harmless here: these only tune latency and dead-peer detection. */
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    (void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
    (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
    (void)setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout_ms, sizeof user_timeout_ms);
}

int wio_tcp_listen(wio_tcp *t, const char *host, int port, const wio_conn_handler *h, void *ctx,
                   int armed, wio_tcp_listener **out, uint16_t *port_out)
{
    wio_addr a = {0};
    int rc;
    if (host && *host) {
        if ((rc = wio_addr_resolve(host, (uint16_t)port, &a)))
            return rc;
    } else {
        a.family = 4; /* INADDR_ANY */
        a.port = (uint16_t)port;
    }
    struct sockaddr_storage ss;
    socklen_t len = wio_addr_to_sockaddr(&a, &ss);
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return wio_fail(WAITIO_ERR_SYS, "socket: %s", strerror(errno));
    int one = 1;
    (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, 4096) != 0) {
        int e = errno;
        close(fd);
        return wio_fail(e == EADDRINUSE ? WAITIO_ERR_BOOT : WAITIO_ERR_SYS,
                        "cannot listen on port %d: %s%s", port, strerror(e),
                        e == EADDRINUSE ? " (another WaitIO instance? set WAITIO_MASTER_PORT)" : "");
    }
    struct sockaddr_storage bound;
    socklen_t blen = sizeof bound;
    wio_addr ba;
    if (getsockname(fd, (struct sockaddr *)&bound, &blen) != 0 ||
        wio_addr_from_sockaddr((struct sockaddr *)&bound, &ba) != 0) {
        close(fd);
        return wio_fail(WAITIO_ERR_SYS, "getsockname: %s", strerror(errno));
    }
    wio_tcp_listener *l = calloc(1, sizeof *l);
    if (!l) {
        close(fd);
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    }
    l->kind = OBJ_LISTENER;
    l->fd = fd;
    l->handler = h;
    l->ctx = ctx;
    l->tcp = t;
    if (armed && wio_tcp_listener_arm(t, l) != 0) {
        close(fd);
        free(l);
        return WAITIO_ERR_SYS;
    }
    *out = l;
    if (port_out)
        *port_out = ba.port;
    return 0;
}

int wio_tcp_listener_arm(wio_tcp *t, wio_tcp_listener *l)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = l};
    if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, l->fd, &ev) != 0)
        return wio_fail(WAITIO_ERR_SYS, "epoll_ctl: %s", strerror(errno));
    l->armed = 1;
    return 0;
}

void wio_tcp_listener_close(wio_tcp *t, wio_tcp_listener *l)
{
    if (!l)
        return;
    if (l->armed)
        epoll_ctl(t->epfd, EPOLL_CTL_DEL, l->fd, NULL);
    close(l->fd);
    free(l);
}

static wio_conn *conn_new(wio_tcp *t, int fd, const wio_conn_handler *h, void *ctx)
{
    wio_conn *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->rbuf = malloc(RBUF_SIZE);
    if (!c->rbuf) {
        free(c);
        return NULL;
    }
    c->kind = OBJ_CONN;
    c->fd = fd;
    c->tcp = t;
    c->handler = h;
    c->ctx = ctx;
    c->peer_id = WIO_ID_BOOT;
    c->deadline = wio_now() + t->params.handshake_timeout;
    wio_list_init(&c->sendq);
    wio_list_insert_tail(&t->conns, &c->link);
    t->nconns++;
    return c;
}

/* ------------------------------------------------------------------------------------ */
/* handshake                                                                            */

static void send_handshake(wio_conn *c, uint8_t type, uint16_t flags, size_t len)
{
    wio_send_item *it = &c->hs_item;
    memset(&it->h, 0, sizeof it->h);
    it->h.type = type;
    it->h.flags = flags;
    it->h.src = c->my_id;
    it->payload = c->hs_payload;
    it->total = len;
    it->chunk = 0;
    it->done = NULL;
    /* handshake frames go first: nothing else may precede them on the wire */
    it->in_flight = 0;
    wio_list_insert_head(&c->sendq, &it->link);
    if (!c->epollout)
        wio_tcp_conn_flush(c);
}

static void send_hello(wio_conn *c)
{
    uint8_t *p = c->hs_payload;
    memcpy(p, c->nonce_mine, WIO_NONCE_LEN);
    wio_put_le32(p + WIO_NONCE_LEN, c->my_id);
    wio_put_le32(p + WIO_NONCE_LEN + 4, c->peer_id);
    wio_put_le32(p + WIO_NONCE_LEN + 8, c->tcp->params.eager_limit);
    wio_put_le32(p + WIO_NONCE_LEN + 12, c->tcp->params.eager_credit);
    c->state = CS_WAIT_ACK;
    c->shm_wanted = c->tcp->params.shm_ring && c->handler->local_peer &&
                    c->handler->local_peer(c->ctx, c->peer_id);
    send_handshake(c, WIO_FT_HELLO, c->shm_wanted ? WIO_FF_SHM : 0, HELLO_LEN);
}

static int handle_hello(wio_conn *c, const wio_frame_hdr *h)
{
    if (h->len != HELLO_LEN)
        return -1;
    const uint8_t *p = c->rx_small;
    memcpy(c->nonce_peer, p, WIO_NONCE_LEN);
    uint32_t claimed = wio_get_le32(p + WIO_NONCE_LEN);
    uint32_t target = wio_get_le32(p + WIO_NONCE_LEN + 4);
    c->hello.id = claimed;
    c->hello.eager_limit = wio_get_le32(p + WIO_NONCE_LEN + 8);
    c->hello.eager_credit = wio_get_le32(p + WIO_NONCE_LEN + 12);
    c->peer_id = claimed;
    c->my_id = c->tcp->self_id;
    if (target != c->my_id) {
        wio_tcp_conn_fail(c, WAITIO_ERR_PROTO, "HELLO addressed to another process (stale address?)", 0);
        return 1;
    }
    int verdict = c->handler->incoming ? c->handler->incoming(c->ctx, c, claimed) : 0;
    if (verdict == -2) { /* usually a simultaneous-connect loser that raced its own close */
        wio_info("closing connection %s: duplicate connection claiming process %u, which is "
                 "already connected (connect race, or an impostor)", c->desc, (unsigned)claimed);
        wio_tcp_conn_fail(c, WAITIO_ERR_PEER, "duplicate connection", 0);
        return 1;
    }
    if (verdict < 0) {
        wio_tcp_conn_fail(c, WAITIO_ERR_PROTO, "HELLO from an unexpected process id", 0);
        return 1;
    }
    if (wio_random_bytes(c->nonce_mine, WIO_NONCE_LEN) != 0) {
        wio_tcp_conn_fail(c, WAITIO_ERR_SYS, "no random nonce", 0);
        return 1;
    }
    uint8_t *q = c->hs_payload;
    memcpy(q, c->nonce_mine, WIO_NONCE_LEN);
    wio_auth_proof(c->tcp->params.key, WIO_PROOF_ACCEPTOR, c->nonce_peer, c->nonce_mine, claimed,
                   c->my_id, q + WIO_NONCE_LEN);
    wio_put_le32(q + WIO_NONCE_LEN + WIO_PROOF_LEN, c->my_id);
    wio_put_le32(q + WIO_NONCE_LEN + WIO_PROOF_LEN + 4, c->tcp->params.eager_limit);
    wio_put_le32(q + WIO_NONCE_LEN + WIO_PROOF_LEN + 8, c->tcp->params.eager_credit);
    c->state = verdict == 1 ? CS_REJECTING : CS_WAIT_AUTH;
    c->shm_wanted = verdict == 0 && (h->flags & WIO_FF_SHM) && c->tcp->params.shm_ring &&
                    c->handler->local_peer && c->handler->local_peer(c->ctx, claimed);
    send_handshake(c, WIO_FT_HELLO_ACK,
                   (uint16_t)((verdict == 1 ? WIO_FF_REJECT : 0) | (c->shm_wanted ? WIO_FF_SHM : 0)),
                   ACK_LEN);
    return c->state == CS_CLOSED ? 1 : 0;
}

static void conn_opened(wio_conn *c)
{
    c->state = CS_OPEN;
    c->deadline = 0;
    snprintf(c->desc + strlen(c->desc), sizeof c->desc - strlen(c->desc), " id %u",
             (unsigned)c->peer_id);
    if (c->handler->opened)
        c->handler->opened(c->ctx, c, &c->hello);
    if (c->state == CS_OPEN && !wio_list_empty(&c->sendq) && !c->epollout)
        wio_tcp_conn_flush(c);
}

/* Acceptor, after AUTH: create the segment and offer it; without one, stay on TCP. */
static void offer_shm(wio_conn *c)
{
    char name[WIO_SHM_NAME_MAX];
    if (wio_shm_create(c->tcp->params.shm_ring, &c->shm, name) != 0) {
        wio_info("connection %s: no shared memory (%s); staying on TCP", c->desc, waitio_error_message());
        send_handshake(c, WIO_FT_SHM_OFFER, 0, 0);
        if (c->state != CS_CLOSED)
            conn_opened(c);
        return;
    }
    size_t n = strlen(name) + 1;
    wio_put_le32(c->hs_payload, (uint32_t)c->tcp->params.shm_ring);
    memcpy(c->hs_payload + 4, name, n);
    c->state = CS_WAIT_READY;
    send_handshake(c, WIO_FT_SHM_OFFER, 0, 4 + n);
}

static int handle_ack(wio_conn *c, const wio_frame_hdr *h)
{
    if (h->len != ACK_LEN)
        return -1;
    const uint8_t *p = c->rx_small;
    uint8_t expect[WIO_PROOF_LEN];
    memcpy(c->nonce_peer, p, WIO_NONCE_LEN);
    uint32_t acceptor = wio_get_le32(p + WIO_NONCE_LEN + WIO_PROOF_LEN);
    wio_auth_proof(c->tcp->params.key, WIO_PROOF_ACCEPTOR, c->nonce_mine, c->nonce_peer, c->my_id,
                   acceptor, expect);
    if (!wio_auth_proof_equal(expect, p + WIO_NONCE_LEN) || acceptor != c->peer_id) {
        wio_tcp_conn_fail(c, WAITIO_ERR_AUTH, "peer failed authentication (different WAITIO_KEY?)", 0);
        return 1;
    }
    if (h->flags & WIO_FF_REJECT) {
        wio_tcp_conn_fail(c, WAITIO_ERR_PEER, "simultaneous connect resolved in favour of the peer's", 1);
        return 1;
    }
    c->hello.id = acceptor;
    c->hello.eager_limit = wio_get_le32(p + WIO_NONCE_LEN + WIO_PROOF_LEN + 4);
    c->hello.eager_credit = wio_get_le32(p + WIO_NONCE_LEN + WIO_PROOF_LEN + 8);
    wio_auth_proof(c->tcp->params.key, WIO_PROOF_CONNECTOR, c->nonce_mine, c->nonce_peer, c->my_id,
                   acceptor, c->hs_payload);
    send_handshake(c, WIO_FT_AUTH, 0, WIO_PROOF_LEN);
    if (c->state == CS_CLOSED)
        return 1;
    c->shm_wanted = c->shm_wanted && (h->flags & WIO_FF_SHM);
    if (c->shm_wanted) {
        c->state = CS_WAIT_OFFER;
        return 0;
    }
    conn_opened(c);
    return c->state == CS_CLOSED ? 1 : 0;
}

static int handle_auth(wio_conn *c, const wio_frame_hdr *h)
{
    if (h->len != WIO_PROOF_LEN)
        return -1;
    uint8_t expect[WIO_PROOF_LEN];
    wio_auth_proof(c->tcp->params.key, WIO_PROOF_CONNECTOR, c->nonce_peer, c->nonce_mine, c->peer_id,
                   c->my_id, expect);
    if (!wio_auth_proof_equal(expect, c->rx_small)) {
        wio_tcp_conn_fail(c, WAITIO_ERR_AUTH, "authentication failed: peer does not know the instance key", 0);
        return 1;
    }
    if (c->shm_wanted)
        offer_shm(c);
    else
        conn_opened(c);
    return c->state == CS_CLOSED ? 1 : 0;
}

/* From here on the byte stream moves through the rings; the socket carries doorbells. */
static void shm_activate(wio_conn *c)
{
    if (c->epollout)
        wio_tcp_conn_update_events(c, 0);
    c->shm_active = 1;
    c->rstart = c->rend; /* nothing but doorbells can follow the last handshake frame */
    wio_list_insert_tail(&c->tcp->shm_conns, &c->shm_link);
    c->tcp->shm_snapshot_valid = 0;
    snprintf(c->desc + strlen(c->desc), sizeof c->desc - strlen(c->desc), " shm");
}

/* SHM_READY from the connector: attached (ACK) or not (NACK, it logged why). */
static int handle_ready(wio_conn *c, const wio_frame_hdr *h)
{
    if (h->len != 0)
        return -1;
    if (h->flags & WIO_FF_ACK) {
        wio_shm_unlink(c->shm);
        shm_activate(c);
    } else {
        wio_shm_destroy(c->shm);
        c->shm = NULL;
    }
    conn_opened(c);
    return c->state == CS_CLOSED ? 1 : 0;
}

/* SHM_OFFER from the acceptor: le32 ring size, segment name, NUL; or empty (no segment). */
static int handle_offer(wio_conn *c, const wio_frame_hdr *h)
{
    if (h->len == 0) {
        conn_opened(c);
        return c->state == CS_CLOSED ? 1 : 0;
    }
    if (h->len < 6 || h->len > 4 + WIO_SHM_NAME_MAX || c->rx_small[h->len - 1] != 0)
        return -1;
    size_t ring = wio_get_le32(c->rx_small);
    int rc = wio_shm_attach((const char *)c->rx_small + 4, ring, &c->shm);
    if (rc == WAITIO_ERR_PROTO)
        return -1;
    if (rc)
        wio_info("connection %s: cannot attach shared memory (%s); staying on TCP", c->desc,
                 waitio_error_message());
    send_handshake(c, WIO_FT_SHM_READY, rc ? WIO_FF_NACK : WIO_FF_ACK, 0);
    if (c->state == CS_CLOSED)
        return 1;
    if (!rc) {
        if (!wio_list_empty(&c->sendq)) { /* a fresh socket takes a header at once */
            wio_tcp_conn_fail(c, WAITIO_ERR_SYS, "could not write SHM_READY", 0);
            return 1;
        }
        shm_activate(c);
    }
    conn_opened(c);
    return c->state == CS_CLOSED ? 1 : 0;
}

/* Which frame types each state accepts. */
int wio_tcp_frame_allowed(int state, unsigned type)
{
    switch (state) {
    case CS_WAIT_HELLO: return type == WIO_FT_HELLO;
    case CS_WAIT_ACK: return type == WIO_FT_HELLO_ACK;
    case CS_WAIT_AUTH: return type == WIO_FT_AUTH;
    case CS_WAIT_OFFER: return type == WIO_FT_SHM_OFFER;
    case CS_WAIT_READY: return type == WIO_FT_SHM_READY;
    case CS_OPEN:
    case CS_SHUTDOWN: return !wio_frame_is_handshake(type);
    default: return 0;
    }
}

int wio_tcp_hs_frame(wio_conn *c, const wio_frame_hdr *h)
{
    int rc = 0;
    switch (h->type) {
    case WIO_FT_HELLO: rc = handle_hello(c, h); break;
    case WIO_FT_HELLO_ACK: rc = handle_ack(c, h); break;
    case WIO_FT_AUTH: rc = handle_auth(c, h); break;
    case WIO_FT_SHM_OFFER: rc = handle_offer(c, h); break;
    case WIO_FT_SHM_READY: rc = handle_ready(c, h); break;
    default: rc = -1; break;
    }
    if (rc < 0) {
        wio_tcp_conn_fail(c, WAITIO_ERR_PROTO, "malformed handshake frame", 0);
        return 1;
    }
    return rc;
}

/* ------------------------------------------------------------------------------------ */
/* connecting and accepting                                                             */

void wio_tcp_conn_connected(wio_conn *c)
{
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
        err = errno;
    if (err) {
        char why[160];
        snprintf(why, sizeof why, "connect to %s failed: %s", c->desc, strerror(err));
        wio_tcp_conn_fail(c, WAITIO_ERR_PEER, why, 0);
        return;
    }
    send_hello(c);
}

int wio_tcp_connect(wio_tcp *t, const wio_addr *addr, uint32_t my_id, uint32_t target_id,
                    const wio_conn_handler *h, void *ctx, wio_conn **out)
{
    struct sockaddr_storage ss;
    socklen_t len = wio_addr_to_sockaddr(addr, &ss);
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return wio_fail(WAITIO_ERR_SYS, "socket: %s", strerror(errno));
    tune_socket(fd, t->params.peer_timeout);
    wio_conn *c = conn_new(t, fd, h, ctx);
    if (!c) {
        close(fd);
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    }
    c->initiator = 1;
    c->my_id = my_id;
    c->peer_id = target_id;
    wio_addr_format(addr, c->desc, sizeof c->desc);
    if (wio_random_bytes(c->nonce_mine, WIO_NONCE_LEN) != 0) {
        wio_tcp_conn_close(c, WAITIO_ERR_SYS);
        return WAITIO_ERR_SYS;
    }
    c->state = CS_CONNECTING;
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.ptr = c};
    c->epollout = 1;
    if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
        int e = errno;
        wio_tcp_conn_close(c, WAITIO_ERR_SYS);
        return wio_fail(WAITIO_ERR_SYS, "epoll_ctl: %s", strerror(e));
    }
    *out = c;
    if (connect(fd, (struct sockaddr *)&ss, len) != 0 && errno != EINPROGRESS) {
        /* report through the handler like an asynchronous failure, after the caller has *out */
        char why[160];
        snprintf(why, sizeof why, "connect to %s failed: %s", c->desc, strerror(errno));
        c->deadline = wio_now(); /* handled as a failure at the next poll */
        t->deadline_due = 1;
        snprintf(c->desc + strlen(c->desc), sizeof c->desc - strlen(c->desc), "!");
        wio_debug("%s", why);
    }
    return 0;
}

int wio_tcp_adopt(wio_tcp *t, int fd, const wio_conn_handler *h, void *ctx, wio_conn **out)
{
    tune_socket(fd, t->params.peer_timeout);
    wio_conn *c = conn_new(t, fd, h, ctx);
    if (!c) {
        close(fd);
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory accepting a connection");
    }
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    wio_addr a;
    if (getpeername(fd, (struct sockaddr *)&ss, &len) == 0 &&
        wio_addr_from_sockaddr((struct sockaddr *)&ss, &a) == 0)
        wio_addr_format(&a, c->desc, sizeof c->desc);
    else
        snprintf(c->desc, sizeof c->desc, "fd %d", fd);
    c->state = CS_WAIT_HELLO;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
    if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
        wio_tcp_conn_close(c, WAITIO_ERR_SYS);
        return wio_fail(WAITIO_ERR_SYS, "epoll_ctl: %s", strerror(errno));
    }
    if (out)
        *out = c;
    return 0;
}

void wio_tcp_accept_ready(wio_tcp_listener *l)
{
    for (int i = 0; i < 64; i++) {
        int fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED)
                wio_warn("accept failed: %s", strerror(errno));
            return;
        }
        if (wio_tcp_adopt(l->tcp, fd, l->handler, l->ctx, NULL) != 0)
            return;
    }
}

/* Handshakes that take too long (slow or silent peers) are abandoned. */
void wio_tcp_check_deadlines(wio_tcp *t, double now)
{
    wio_list *pos, *tmp;
    WIO_LIST_FOREACH_SAFE(pos, tmp, &t->conns) {
        wio_conn *c = WIO_CONTAINER_OF(pos, wio_conn, link);
        if (c->deadline > 0 && now >= c->deadline && c->state != CS_OPEN && c->state != CS_SHUTDOWN) {
            char why[160];
            snprintf(why, sizeof why, "%s to %s did not complete in time",
                     c->state == CS_CONNECTING ? "connect" : "handshake", c->desc);
            wio_tcp_conn_fail(c, c->state == CS_CONNECTING ? WAITIO_ERR_PEER : WAITIO_ERR_TIMEOUT, why, 0);
        }
    }
}
