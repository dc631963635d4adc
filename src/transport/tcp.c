/*
 * tcp.c — the TCP transport: listeners, nonblocking connections driven by one epoll set, the
 * authenticated handshake (HELLO / HELLO_ACK / AUTH), framed sends written directly and handed
 * to epoll only when the socket would block, and the receive state machine that parses frames
 * and reads large payloads straight into their destination. Both the engine (peers) and the
 * start-up rendezvous use these connections; the engine's vtable is at the end of the file.
 *
 * Between two processes on the same host the handshake continues with SHM_OFFER / SHM_READY and
 * the connection's byte stream then moves through a shared-memory ring pair (shm.c) instead of
 * the socket; the socket stays for liveness (EOF when the peer dies) and for doorbells that
 * wake a peer blocked in epoll_wait. Framing, parsing and everything above are the same code.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include "transport/tcp.h"
#include "transport/shm.h"
#include "core/common.h"

#define RBUF_SIZE (64u << 10)
/* One buffered read takes at most this much: enough to batch many small frames per system
 * call, small enough that a large payload's head is not copied twice (measured: 256 KiB reads
 * made 64-256 KiB eager messages 1.4-1.7x slower than raw TCP). */
#define RECV_BATCH (16u << 10)
#define DIRECT_READ_MIN (4u << 10) /* payload remainder read straight into its destination */
#define HELLO_LEN (WIO_NONCE_LEN + 16)
#define ACK_LEN (WIO_NONCE_LEN + WIO_PROOF_LEN + 12)
#define MAX_EVENTS 64
/* While polling shared-memory rings, epoll_wait runs every EPOLL_EVERY polls when some socket
 * carries data, and every EPOLL_EVERY_SHM_ONLY polls when all open connections move their data
 * through shared memory (the sockets then carry only connects, doorbells for sleepers and EOF).
 * An epoll_wait costs ~10 ring checks on a VM; at 32 it took ~12% of an 8-byte round trip. */
#define EPOLL_EVERY 32
#define EPOLL_EVERY_SHM_ONLY 1024
/* Handshake deadlines are checked at most every 50 ms, the clock read only every
 * DEADLINE_CLOCK_EVERY epoll_waits while polling. */
#define DEADLINE_CHECK_PERIOD 0.05
#define DEADLINE_CLOCK_EVERY 16

enum obj_kind { OBJ_LISTENER = 1, OBJ_CONN = 2 };

enum conn_state {
    CS_CONNECTING,  /* connector: TCP connect in progress */
    CS_WAIT_ACK,    /* connector: HELLO sent */
    CS_WAIT_HELLO,  /* acceptor: waiting for HELLO */
    CS_WAIT_AUTH,   /* acceptor: HELLO_ACK sent */
    CS_REJECTING,   /* acceptor: HELLO_ACK(reject) being written, then close */
    CS_WAIT_OFFER,  /* connector: AUTH sent, shared memory agreed; waiting for SHM_OFFER */
    CS_WAIT_READY,  /* acceptor: SHM_OFFER sent; waiting for SHM_READY */
    CS_OPEN,
    CS_SHUTDOWN,    /* we sent our last frame and half-closed; waiting for the peer's EOF */
    CS_CLOSED,
};

enum rx_state { RX_HEADER, RX_PAYLOAD };

struct wio_tcp_listener {
    int kind;
    int fd;
    int armed;
    const wio_conn_handler *handler;
    void *ctx;
    wio_tcp *tcp;
};

struct wio_conn {
    int kind;
    int fd;
    int state;
    int initiator;
    wio_tcp *tcp;
    const wio_conn_handler *handler;
    void *ctx;
    void *user;
    uint32_t my_id, peer_id;
    uint8_t nonce_mine[WIO_NONCE_LEN], nonce_peer[WIO_NONCE_LEN];
    wio_peer_hello hello; /* what the peer announced */
    double deadline;      /* handshake must finish before this */
    char desc[80];
    /* sending */
    wio_list sendq;
    uint32_t tx_seq;
    int epollout;
    int shutdown_pending;
    wio_send_item hs_item;     /* handshake frames */
    uint8_t hs_payload[ACK_LEN];
    /* receiving */
    uint32_t rx_seq;
    uint8_t *rbuf;
    size_t rstart, rend;
    int rx_state;
    wio_frame_hdr rx_hdr;
    uint8_t *rx_dest;          /* NULL: discard */
    size_t rx_got;
    uint8_t rx_small[WIO_HANDSHAKE_MAX]; /* handshake payloads */
    wio_list link;             /* all connections / zombies */
    /* shared memory */
    int shm_wanted;            /* both sides asked for it in HELLO / HELLO_ACK */
    int shm_active;            /* the byte stream moves through c->shm */
    wio_shm_seg *shm;
    wio_list shm_link;         /* wio_tcp.shm_conns */
};

struct wio_tcp {
    int epfd;
    wio_tcp_params params;
    uint32_t self_id;
    wio_list conns;
    wio_list zombies;          /* closed, freed at the end of wio_tcp_poll */
    wio_list shm_conns;        /* open connections whose data moves through shared memory */
    wio_conn **shm_snapshot;   /* iterated copy of shm_conns (callbacks may close some) */
    size_t shm_snapshot_len;
    int shm_snapshot_valid;    /* cleared when shm_conns changes; rebuilt before freeing zombies */
    size_t shm_snapshot_cap;
    size_t nconns;             /* connections in `conns` (open or in their handshake) */
    unsigned polls_since_epoll;
    unsigned epolls_since_clock;
    double next_deadline_check;
    int deadline_due;          /* a connection failed synchronously: check at the next poll */
};

/* ------------------------------------------------------------------------------------ */
/* addresses                                                                            */

void wio_addr_format(const wio_addr *a, char *buf, size_t cap)
{
    char ip[INET6_ADDRSTRLEN] = "?";
    inet_ntop(a->family == 6 ? AF_INET6 : AF_INET, a->ip, ip, sizeof ip);
    snprintf(buf, cap, a->family == 6 ? "[%s]:%u" : "%s:%u", ip, (unsigned)a->port);
}

static socklen_t addr_to_sockaddr(const wio_addr *a, struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof *ss);
    if (a->family == 6) {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons(a->port);
        memcpy(&s6->sin6_addr, a->ip, 16);
        return sizeof *s6;
    }
    struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
    s4->sin_family = AF_INET;
    s4->sin_port = htons(a->port);
    memcpy(&s4->sin_addr, a->ip, 4);
    return sizeof *s4;
}

static int sockaddr_to_addr(const struct sockaddr *sa, wio_addr *out)
{
    memset(out, 0, sizeof *out);
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
        out->family = 4;
        memcpy(out->ip, &s4->sin_addr, 4);
        out->port = ntohs(s4->sin_port);
        return 0;
    }
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
        out->family = 6;
        memcpy(out->ip, &s6->sin6_addr, 16);
        out->port = ntohs(s6->sin6_port);
        return 0;
    }
    return -1;
}

int wio_addr_resolve(const char *host, uint16_t port, wio_addr *out)
{
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int rc = getaddrinfo(host, NULL, &hints, &res);
    if (rc != 0)
        return wio_fail(WAITIO_ERR_ENV, "cannot resolve host '%s': %s", host, gai_strerror(rc));
    int found = -1;
    for (struct addrinfo *ai = res; ai && found != 0; ai = ai->ai_next)
        if (ai->ai_family == AF_INET) /* prefer IPv4 when a name has both */
            found = sockaddr_to_addr(ai->ai_addr, out);
    for (struct addrinfo *ai = res; ai && found != 0; ai = ai->ai_next)
        found = sockaddr_to_addr(ai->ai_addr, out);
    freeaddrinfo(res);
    if (found != 0)
        return wio_fail(WAITIO_ERR_ENV, "host '%s' has no IPv4 or IPv6 address", host);
    out->port = port;
    return 0;
}

int wio_addr_route_to(const wio_addr *to, wio_addr *out)
{
    struct sockaddr_storage ss;
    socklen_t len = addr_to_sockaddr(to, &ss);
    int fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return wio_fail(WAITIO_ERR_SYS, "socket: %s", strerror(errno));
    int rc = 0;
    if (connect(fd, (struct sockaddr *)&ss, len) != 0) {
        rc = wio_fail(WAITIO_ERR_SYS, "no route to the master: %s", strerror(errno));
    } else {
        struct sockaddr_storage me;
        socklen_t mlen = sizeof me;
        if (getsockname(fd, (struct sockaddr *)&me, &mlen) != 0 ||
            sockaddr_to_addr((struct sockaddr *)&me, out) != 0)
            rc = wio_fail(WAITIO_ERR_SYS, "getsockname: %s", strerror(errno));
    }
    close(fd);
    return rc;
}

int wio_addr_from_iface(const char *iface, wio_addr *out)
{
    memset(out, 0, sizeof *out);
    if (inet_pton(AF_INET, iface, out->ip) == 1) {
        out->family = 4;
        return 0;
    }
    if (inet_pton(AF_INET6, iface, out->ip) == 1) {
        out->family = 6;
        return 0;
    }
    struct ifaddrs *ifs;
    if (getifaddrs(&ifs) != 0)
        return wio_fail(WAITIO_ERR_SYS, "getifaddrs: %s", strerror(errno));
    int rc = -1;
    for (int want6 = 0; want6 < 2 && rc != 0; want6++)
        for (struct ifaddrs *i = ifs; i && rc != 0; i = i->ifa_next)
            if (i->ifa_addr && strcmp(i->ifa_name, iface) == 0 &&
                i->ifa_addr->sa_family == (want6 ? AF_INET6 : AF_INET))
                rc = sockaddr_to_addr(i->ifa_addr, out);
    freeifaddrs(ifs);
    if (rc != 0)
        return wio_fail(WAITIO_ERR_ENV, "WAITIO_IFACE='%s' is neither an address nor an interface "
                        "with an address", iface);
    return 0;
}

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
    close(t->epfd);
    free(t->shm_snapshot);
    free(t);
}

void wio_tcp_set_self_id(wio_tcp *t, uint32_t id) { t->self_id = id; }
void wio_tcp_set_eager_credit(wio_tcp *t, uint32_t credit) { t->params.eager_credit = credit; }
int wio_tcp_epoll_fd(const wio_tcp *t) { return t->epfd; }
void *wio_tcp_conn_user(const wio_conn *c) { return c->user; }
void wio_tcp_conn_set_user(wio_conn *c, void *user) { c->user = user; }
const char *wio_tcp_conn_desc(const wio_conn *c) { return c->desc; }
int wio_tcp_conn_idle(const wio_conn *c) { return wio_list_empty(&c->sendq); }
int wio_tcp_conn_is_shm(const wio_conn *c) { return c->shm_active; }

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
    socklen_t len = addr_to_sockaddr(&a, &ss);
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
        sockaddr_to_addr((struct sockaddr *)&bound, &ba) != 0) {
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

static int conn_update_events(wio_conn *c, int want_out)
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
    epoll_ctl(c->tcp->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    c->fd = -1;
    conn_drop_queue(c, err);
    /* freed at the end of the current poll: callers up the stack may still hold c */
    wio_list_remove(&c->link);
    c->tcp->nconns--;
    wio_list_insert_tail(&c->tcp->zombies, &c->link);
}

/* Closes the connection and tells its owner why. */
static void conn_fail(wio_conn *c, int err, const char *why, int rejected)
{
    if (c->state == CS_CLOSED)
        return;
    int was_open = c->state == CS_OPEN || c->state == CS_SHUTDOWN;
    int owned = c->initiator || c->user != NULL; /* someone holds a pointer to c */
    if (err == WAITIO_ERR_PROTO || err == WAITIO_ERR_AUTH || err == WAITIO_ERR_TIMEOUT)
        wio_warn("closing connection %s: %s", c->desc, why);
    else if (c->state == CS_WAIT_AUTH) /* it saw our proof and left: it lacks the key */
        wio_warn("connection %s: authentication not completed (%s); a peer without the instance "
                 "key?", c->desc, why);
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
static int conn_flush(wio_conn *c)
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
                if (!c->epollout && conn_update_events(c, 1) != 0) {
                    conn_fail(c, WAITIO_ERR_SYS, "epoll_ctl failed", 0);
                    return -1;
                }
                return 0;
            }
            char why[128];
            snprintf(why, sizeof why, "send failed: %s", strerror(errno));
            conn_fail(c, WAITIO_ERR_PEER, why, 0);
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
    if (c->epollout && conn_update_events(c, 0) != 0) {
        conn_fail(c, WAITIO_ERR_SYS, "epoll_ctl failed", 0);
        return -1;
    }
    if (c->shutdown_pending && c->state == CS_OPEN) {
        c->state = CS_SHUTDOWN;
        shutdown(c->fd, SHUT_WR);
    }
    if (c->state == CS_REJECTING)
        conn_fail(c, WAITIO_ERR_PEER, "simultaneous connect resolved in favour of ours", 0);
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
    /* Before the handshake completes only handshake frames go out; the rest wait. */
    if (was_empty && !c->epollout && c->state != CS_CONNECTING &&
        (c->state == CS_OPEN || wio_frame_is_handshake(it->h.type)))
        conn_flush(c);
}

void wio_tcp_conn_shutdown(wio_conn *c)
{
    if (c->state != CS_OPEN)
        return;
    c->shutdown_pending = 1;
    if (wio_list_empty(&c->sendq))
        conn_flush(c);
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
        conn_flush(c);
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
        conn_fail(c, WAITIO_ERR_PROTO, "HELLO addressed to another process (stale address?)", 0);
        return 1;
    }
    int verdict = c->handler->incoming ? c->handler->incoming(c->ctx, c, claimed) : 0;
    if (verdict == -2) { /* usually a simultaneous-connect loser that raced its own close */
        wio_info("closing connection %s: duplicate connection claiming process %u, which is "
                 "already connected (connect race, or an impostor)", c->desc, (unsigned)claimed);
        conn_fail(c, WAITIO_ERR_PEER, "duplicate connection", 0);
        return 1;
    }
    if (verdict < 0) {
        conn_fail(c, WAITIO_ERR_PROTO, "HELLO from an unexpected process id", 0);
        return 1;
    }
    if (wio_random_bytes(c->nonce_mine, WIO_NONCE_LEN) != 0) {
        conn_fail(c, WAITIO_ERR_SYS, "no random nonce", 0);
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
        conn_flush(c);
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
        conn_fail(c, WAITIO_ERR_AUTH, "peer failed authentication (different WAITIO_KEY?)", 0);
        return 1;
    }
    if (h->flags & WIO_FF_REJECT) {
        conn_fail(c, WAITIO_ERR_PEER, "simultaneous connect resolved in favour of the peer's", 1);
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
        conn_fail(c, WAITIO_ERR_AUTH, "authentication failed: peer does not know the instance key", 0);
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
        conn_update_events(c, 0);
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
            conn_fail(c, WAITIO_ERR_SYS, "could not write SHM_READY", 0);
            return 1;
        }
        shm_activate(c);
    }
    conn_opened(c);
    return c->state == CS_CLOSED ? 1 : 0;
}

/* Which frame types each state accepts. */
static int frame_allowed(int state, unsigned type)
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

/* ------------------------------------------------------------------------------------ */
/* receiving                                                                            */

/* A whole frame (header + payload) arrived. Returns nonzero when the connection is gone. */
static int frame_complete(wio_conn *c)
{
    const wio_frame_hdr *h = &c->rx_hdr;
    c->rx_state = RX_HEADER;
    int rc = 0;
    switch (h->type) {
    case WIO_FT_HELLO: rc = handle_hello(c, h); break;
    case WIO_FT_HELLO_ACK: rc = handle_ack(c, h); break;
    case WIO_FT_AUTH: rc = handle_auth(c, h); break;
    case WIO_FT_SHM_OFFER: rc = handle_offer(c, h); break;
    case WIO_FT_SHM_READY: rc = handle_ready(c, h); break;
    default:
        rc = c->handler->frame_end ? c->handler->frame_end(c->ctx, c, h) : 0;
        if (rc) {
            conn_fail(c, WAITIO_ERR_PROTO, "invalid frame content", 0);
            return 1;
        }
        return c->state == CS_CLOSED;
    }
    if (rc < 0) {
        conn_fail(c, WAITIO_ERR_PROTO, "malformed handshake frame", 0);
        return 1;
    }
    return rc;
}

static int header_arrived(wio_conn *c, const uint8_t *raw)
{
    const char *why = NULL;
    wio_frame_hdr *h = &c->rx_hdr;
    char msg[160];
    if (wio_frame_decode(raw, h, &why) != 0) {
        snprintf(msg, sizeof msg, "bad frame header: %s", why);
        conn_fail(c, WAITIO_ERR_PROTO, msg, 0);
        return 1;
    }
    if (h->seq != c->rx_seq) {
        snprintf(msg, sizeof msg, "sequence number %u, expected %u", (unsigned)h->seq, (unsigned)c->rx_seq);
        conn_fail(c, WAITIO_ERR_PROTO, msg, 0);
        return 1;
    }
    c->rx_seq++;
    if (!frame_allowed(c->state, h->type)) {
        snprintf(msg, sizeof msg, "%s frame not allowed in this connection state",
                 wio_frame_type_name(h->type));
        conn_fail(c, WAITIO_ERR_PROTO, msg, 0);
        return 1;
    }
    c->rx_got = 0;
    c->rx_dest = NULL;
    if (wio_frame_is_handshake(h->type)) {
        c->rx_dest = c->rx_small;
    } else if (c->handler->frame_begin && c->handler->frame_begin(c->ctx, c, h, &c->rx_dest) != 0) {
        snprintf(msg, sizeof msg, "rejected %s frame", wio_frame_type_name(h->type));
        conn_fail(c, WAITIO_ERR_PROTO, msg, 0);
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
                conn_fail(c, WAITIO_ERR_PROTO, "corrupt shared-memory ring indices", 0);
                return;
            }
            char why[128];
            snprintf(why, sizeof why, "receive failed: %s", strerror(errno));
            conn_fail(c, WAITIO_ERR_PEER, why, 0);
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
    conn_fail(c, WAITIO_ERR_PEER, c->state == CS_SHUTDOWN ? "closed after our half-close (finalize or idle close)"
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
            conn_fail(c, WAITIO_ERR_PEER, why, 0);
        }
        return;
    }
    conn_read_stream(c);
    if (c->state != CS_CLOSED && c->epollout)
        conn_flush(c);
}

static void conn_readable(wio_conn *c)
{
    if (c->shm_active)
        shm_socket_readable(c);
    else
        conn_read_stream(c);
}

static void conn_connected(wio_conn *c)
{
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
        err = errno;
    if (err) {
        char why[160];
        snprintf(why, sizeof why, "connect to %s failed: %s", c->desc, strerror(err));
        conn_fail(c, WAITIO_ERR_PEER, why, 0);
        return;
    }
    send_hello(c);
}

static void conn_writable(wio_conn *c)
{
    if (c->state == CS_CONNECTING) {
        conn_connected(c);
        return;
    }
    conn_flush(c);
}

int wio_tcp_connect(wio_tcp *t, const wio_addr *addr, uint32_t my_id, uint32_t target_id,
                    const wio_conn_handler *h, void *ctx, wio_conn **out)
{
    struct sockaddr_storage ss;
    socklen_t len = addr_to_sockaddr(addr, &ss);
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
        sockaddr_to_addr((struct sockaddr *)&ss, &a) == 0)
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

static void accept_ready(wio_tcp_listener *l)
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
static void check_deadlines(wio_tcp *t, double now)
{
    wio_list *pos, *tmp;
    WIO_LIST_FOREACH_SAFE(pos, tmp, &t->conns) {
        wio_conn *c = WIO_CONTAINER_OF(pos, wio_conn, link);
        if (c->deadline > 0 && now >= c->deadline && c->state != CS_OPEN && c->state != CS_SHUTDOWN) {
            char why[160];
            snprintf(why, sizeof why, "%s to %s did not complete in time",
                     c->state == CS_CONNECTING ? "connect" : "handshake", c->desc);
            conn_fail(c, c->state == CS_CONNECTING ? WAITIO_ERR_PEER : WAITIO_ERR_TIMEOUT, why, 0);
        }
    }
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
    check_deadlines(t, now);
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
            conn_flush(c);
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
            accept_ready(ev[i].data.ptr);
            continue;
        }
        wio_conn *c = ev[i].data.ptr;
        if (c->state == CS_CLOSED)
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
    uint16_t port;
    int rc = wio_tcp_listen(e->tcp, "", 0, &wio_engine_conn_handler, e, 0, &e->tcp_listener, &port);
    if (rc)
        return rc;
    self->port = port;
    return 0;
}

static int tcp_start(wio_engine *e)
{
    wio_tcp_set_self_id(e->tcp, e->my_id);
    wio_tcp_set_eager_credit(e->tcp, (uint32_t)e->eager_credit);
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
