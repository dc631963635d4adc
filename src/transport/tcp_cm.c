/*
 * tcp_cm.c — the TCP transport's connection management, the security-critical part: listeners
 * (bound to the advertised address), accepting under caps, the authenticated handshake, and its
 * deadlines. OpenSSH's rule holds here: nothing from a connection that has not authenticated
 * reaches any state beyond its own handshake, and a handshake costs a fixed, capped amount of
 * memory, descriptors and time.
 *
 *   connector                                   acceptor
 *   HELLO(nonce_c, ids, limits)           ->
 *                                         <-    HELLO_ACK(nonce_a, proof_a, id, limits)
 *   AUTH(proof_c)                         ->    verify; only now ask the owner (`incoming`)
 *                                         <-    ACCEPT (flags REJECT / NACK / SHM)
 *   [SHM_OFFER / SHM_READY]                     (docs/protocol.md)
 *
 * - Until AUTH checks out, an accepted connection belongs to this file alone: its owner has no
 *   pointer to it (c->user == NULL), and its failure or close is only logged (rate-limited).
 * - A connection in its handshake is a wio_conn with a fixed handshake buffer (HS_FRAME_MAX
 *   bytes, frames read one at a time); the 64 KiB receive buffer of open connections is
 *   allocated when the connection opens.
 * - At most max_handshakes unauthenticated connections at once (fewer when the owner's
 *   connection cap is near): when full, the one idle the longest (at least HS_IDLE_MIN) is
 *   dropped; if none is, the listener pauses until one is or a slot frees.
 * - An acceptor gives a connection accept_timeout seconds to authenticate.
 * - When accept runs out of descriptors (EMFILE/ENFILE), an idle handshake is dropped if there
 *   is one, else one connection is accepted and closed with the reserve descriptor, and the
 *   listener is taken out of epoll for a pause that doubles from 100 ms to 1 s: nothing spins,
 *   and the log says so at most once per second.
 * - A connector whose connection the acceptor dropped before ACCEPT (overload, a peer that was
 *   not polling for longer than the acceptor's deadline) reconnects a few times.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>
#include "transport/tcp_int.h"
#include "core/common.h"

#define HS_IDLE_MIN 0.25       /* a handshake is dropped for a newer one only after this idle */
#define HS_FLOOR 4             /* handshakes always allowed, even at the connection cap */
#define ACCEPT_BATCH 64        /* accepts per listener event */
#define PAUSE_MIN 0.1          /* listener pause after running out of descriptors, doubling */
#define PAUSE_MAX 1.0
#define CONNECT_RETRIES 5      /* reconnects of a connector dropped in its handshake */
#define RETRY_DELAY 0.05       /* first reconnect delay, doubling */
#define HS_LOG_BURST 20        /* unauthenticated closes logged at once, then HS_LOG_RATE/s */
#define HS_LOG_RATE 1.0

/* ------------------------------------------------------------------------------------ */
/* rate-limited logging of what strangers cause                                          */

static int loglimit_take(wio_loglimit *l, double burst, double rate, unsigned long *suppressed)
{
    double now = wio_now();
    if (l->last == 0)
        l->tokens = burst;
    else
        l->tokens += (now - l->last) * rate;
    if (l->tokens > burst)
        l->tokens = burst;
    l->last = now;
    if (l->tokens < 1) {
        l->suppressed++;
        return 0;
    }
    l->tokens -= 1;
    *suppressed = l->suppressed;
    l->suppressed = 0;
    return 1;
}

void wio_tcp_hs_log_close(wio_conn *c, int err, const char *why)
{
    if (c->state == CS_REJECTING) { /* authenticated, refused by its owner: benign */
        wio_debug("connection %s closed: %s", c->desc, why);
        return;
    }
    if (wio_log_level_current < WIO_LOG_WARN)
        return;
    unsigned long dropped;
    if (!loglimit_take(&c->tcp->hs_log, HS_LOG_BURST, HS_LOG_RATE, &dropped))
        return;
    char more[80] = "";
    if (dropped)
        snprintf(more, sizeof more, " [%lu similar messages suppressed]", dropped);
    if (c->state == CS_WAIT_AUTH && err != WAITIO_ERR_PROTO && err != WAITIO_ERR_AUTH &&
        err != WAITIO_ERR_TIMEOUT) /* it saw our proof and left: it lacks the key */
        wio_warn("connection %s: authentication not completed (%s); a peer without the instance "
                 "key?%s", c->desc, why, more);
    else
        wio_warn("closing connection %s: %s%s", c->desc, why, more);
}

/* ------------------------------------------------------------------------------------ */
/* descriptors                                                                           */

/* One descriptor is kept open (on /dev/null) for when the process runs out: released, it lets
 * our own connect, or an accept-and-close that tells a waiting connector to go away, succeed. */
static void reserve_refill(wio_tcp *t)
{
    if (t->reserve_fd < 0)
        t->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

static int reserve_release(wio_tcp *t)
{
    if (t->reserve_fd < 0)
        return 0;
    close(t->reserve_fd);
    t->reserve_fd = -1;
    return 1;
}

void wio_tcp_cm_init(wio_tcp *t)
{
    wio_list_init(&t->listeners);
    wio_list_init(&t->handshakes);
    t->reserve_fd = -1;
    reserve_refill(t);
}

void wio_tcp_cm_fini(wio_tcp *t)
{
    reserve_release(t);
}

static int out_of_descriptors(int err) { return err == EMFILE || err == ENFILE; }

/* socket(), using the reserve descriptor if the process has none left. */
static int new_socket(wio_tcp *t, int family)
{
    int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 && out_of_descriptors(errno) && reserve_release(t)) {
        wio_info("out of descriptors: using the reserve one for an outgoing connection");
        fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    }
    return fd;
}

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

/* ------------------------------------------------------------------------------------ */
/* listeners                                                                             */

int wio_tcp_listen(wio_tcp *t, const wio_addr *addr, const wio_conn_handler *h, void *ctx,
                   int armed, wio_tcp_listener **out, uint16_t *port_out)
{
    struct sockaddr_storage ss;
    socklen_t len = wio_addr_to_sockaddr(addr, &ss);
    char where[64];
    wio_addr_format(addr, where, sizeof where);
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return wio_fail(WAITIO_ERR_SYS, "socket: %s", strerror(errno));
    int one = 1;
    (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, 4096) != 0) {
        int e = errno;
        close(fd);
        return wio_fail(e == EADDRINUSE ? WAITIO_ERR_BOOT : e == EADDRNOTAVAIL ? WAITIO_ERR_ENV
                                                                              : WAITIO_ERR_SYS,
                        "cannot listen on %s: %s%s", where, strerror(e),
                        e == EADDRINUSE ? " (another WaitIO instance? set WAITIO_MASTER_PORT)"
                        : e == EADDRNOTAVAIL ? " (not an address of this host: set WAITIO_IFACE "
                                               "or WAITIO_MASTER_HOST to one, or WAITIO_BIND_ALL=1)"
                                             : "");
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
    wio_list_insert_tail(&t->listeners, &l->link);
    if (armed && wio_tcp_listener_arm(t, l) != 0) {
        wio_tcp_listener_close(t, l);
        return WAITIO_ERR_SYS;
    }
    *out = l;
    if (port_out)
        *port_out = ba.port;
    wio_debug("listening on %s (port %u)", where, (unsigned)ba.port);
    return 0;
}

static int listener_register(wio_tcp *t, wio_tcp_listener *l)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = l};
    if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, l->fd, &ev) != 0)
        return wio_fail(WAITIO_ERR_SYS, "epoll_ctl: %s", strerror(errno));
    l->in_epoll = 1;
    return 0;
}

int wio_tcp_listener_arm(wio_tcp *t, wio_tcp_listener *l)
{
    int rc = listener_register(t, l);
    if (!rc)
        l->armed = 1;
    return rc;
}

void wio_tcp_listener_close(wio_tcp *t, wio_tcp_listener *l)
{
    if (!l)
        return;
    if (l->in_epoll)
        epoll_ctl(t->epfd, EPOLL_CTL_DEL, l->fd, NULL);
    else if (l->armed)
        t->npaused--;
    wio_list_remove(&l->link);
    close(l->fd);
    free(l);
}

/* Takes the listener out of epoll until `until` (level-triggered: left in, a listener we do
 * not accept from would wake every epoll_wait at once). */
static void listener_pause(wio_tcp_listener *l, double until, int full)
{
    if (l->in_epoll) {
        epoll_ctl(l->tcp->epfd, EPOLL_CTL_DEL, l->fd, NULL);
        l->in_epoll = 0;
        l->tcp->npaused++;
    }
    l->resume_at = until;
    l->paused_full = full;
}

static void listener_resume(wio_tcp_listener *l)
{
    if (l->in_epoll || !l->armed || listener_register(l->tcp, l) != 0)
        return;
    l->tcp->npaused--;
    l->paused_full = 0;
}

static void resume_listeners(wio_tcp *t, double now, int slot_freed)
{
    wio_list *pos;
    for (pos = t->listeners.next; pos != &t->listeners && t->npaused > 0; pos = pos->next) {
        wio_tcp_listener *l = WIO_CONTAINER_OF(pos, wio_tcp_listener, link);
        if (!l->in_epoll && l->armed && (now >= l->resume_at || (slot_freed && l->paused_full)))
            listener_resume(l);
    }
}

/* ------------------------------------------------------------------------------------ */
/* connections                                                                           */

static wio_conn *conn_new(wio_tcp *t, int fd, const wio_conn_handler *h, void *ctx)
{
    wio_conn *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->kind = OBJ_CONN;
    c->fd = fd;
    c->tcp = t;
    c->handler = h;
    c->ctx = ctx;
    c->peer_id = WIO_ID_BOOT;
    wio_list_init(&c->sendq);
    wio_list_insert_tail(&t->conns, &c->link);
    t->nconns++;
    return c;
}

/* The table of accepted connections that have not authenticated, least recently active first. */
static void hs_list(wio_conn *c, double now)
{
    c->hs_active = now;
    wio_list_insert_tail(&c->tcp->handshakes, &c->hs_link);
    c->hs_listed = 1;
    c->tcp->nhandshakes++;
}

void wio_tcp_hs_unlist(wio_conn *c)
{
    wio_tcp *t = c->tcp;
    wio_list_remove(&c->hs_link);
    c->hs_listed = 0;
    t->nhandshakes--;
    if (t->npaused > 0)
        resume_listeners(t, 0, 1);
}

static void hs_touch(wio_conn *c)
{
    if (!c->hs_listed)
        return;
    c->hs_active = wio_now();
    wio_list_remove(&c->hs_link);
    wio_list_insert_tail(&c->tcp->handshakes, &c->hs_link);
}

/* Unauthenticated connections allowed now: max_handshakes, fewer when the open connections
 * approach the owner's cap (handshakes count against it), never fewer than HS_FLOOR (the
 * owner's cap is soft: it closes idle connections once a new one has authenticated). */
static size_t hs_capacity(const wio_tcp *t)
{
    size_t cap = t->params.max_handshakes ? t->params.max_handshakes : 64;
    if (t->params.max_conns) {
        size_t open = t->nconns - t->nhandshakes;
        size_t room = t->params.max_conns > open ? t->params.max_conns - open : 0;
        if (room < HS_FLOOR)
            room = HS_FLOOR;
        if (room < cap)
            cap = room;
    }
    return cap;
}

/* Drops the handshake idle the longest if it has been idle at least HS_IDLE_MIN (read once
 * more first: its bytes may be waiting in this very epoll batch). Returns 1 if one was dropped
 * or left the table, 0 if none may be dropped yet (*wait_until: when one may). */
static int hs_make_room(wio_tcp *t, double now, double *wait_until)
{
    while (!wio_list_empty(&t->handshakes)) {
        wio_conn *c = WIO_CONTAINER_OF(t->handshakes.next, wio_conn, hs_link);
        if (now - c->hs_active < HS_IDLE_MIN) {
            *wait_until = c->hs_active + HS_IDLE_MIN;
            return 0;
        }
        double before = c->hs_active;
        wio_tcp_hs_readable(c);
        if (c->state == CS_CLOSED || !c->hs_listed)
            return 1;
        if (c->hs_active != before)
            continue; /* it moved to the tail: look at the next oldest */
        wio_tcp_conn_fail(c, WAITIO_ERR_TIMEOUT, "dropped: too many connections in their "
                          "handshake, and this one was idle the longest", 0);
        return 1;
    }
    *wait_until = now + HS_IDLE_MIN;
    return 0;
}

static void accept_log(wio_tcp *t, const char *what, int err, double pause)
{
    unsigned long dropped;
    if (!loglimit_take(&t->accept_log, 1, 1, &dropped))
        return;
    char more[64] = "";
    if (dropped)
        snprintf(more, sizeof more, " (%lu more since the last message)", dropped);
    wio_warn("accepting connections: %s (%s)%s; pausing accepts for %.0f ms", strerror(err), what,
             more, pause * 1000);
}

/* accept() ran out of descriptors: free one, or shed one waiting connector and pause. */
static int accept_out_of_fds(wio_tcp_listener *l, int err, double now)
{
    wio_tcp *t = l->tcp;
    double unused;
    if (hs_make_room(t, now, &unused))
        return 1; /* a descriptor is free again: accept on */
    const char *what = "no descriptor to spare";
    if (reserve_release(t)) {
        int fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd >= 0) {
            close(fd); /* the connector sees the close at once instead of waiting in the backlog */
            what = "closed one waiting connection with the reserve descriptor";
        }
        reserve_refill(t);
    }
    l->backoff = l->backoff > 0 ? l->backoff * 2 : PAUSE_MIN;
    if (l->backoff > PAUSE_MAX)
        l->backoff = PAUSE_MAX;
    accept_log(t, what, err, l->backoff);
    listener_pause(l, now + l->backoff, 0);
    return 0;
}

void wio_tcp_accept_ready(wio_tcp_listener *l)
{
    wio_tcp *t = l->tcp;
    double now = wio_now();
    for (int i = 0; i < ACCEPT_BATCH; i++) {
        double wait_until;
        /* the reserve descriptor first: without it our own next connect could fail */
        if (t->reserve_fd < 0 && (reserve_refill(t), t->reserve_fd < 0)) {
            if (!hs_make_room(t, now, &wait_until)) {
                l->backoff = l->backoff > 0 ? l->backoff * 2 : PAUSE_MIN;
                if (l->backoff > PAUSE_MAX)
                    l->backoff = PAUSE_MAX;
                accept_log(t, "none left beside the reserve one", EMFILE, l->backoff);
                listener_pause(l, now + l->backoff, 0);
                return;
            }
            continue;
        }
        if (t->nhandshakes >= hs_capacity(t) && !hs_make_room(t, now, &wait_until)) {
            listener_pause(l, wait_until, 1);
            return;
        }
        int fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            int err = errno;
            if (err == EAGAIN || err == EWOULDBLOCK) {
                l->backoff = 0;
                return;
            }
            if (err == EINTR || err == ECONNABORTED || err == EPROTO || err == EPERM)
                continue;
            if (out_of_descriptors(err) || err == ENOBUFS || err == ENOMEM) {
                if (accept_out_of_fds(l, err, now))
                    continue;
                return;
            }
            l->backoff = PAUSE_MIN;
            accept_log(t, "unexpected error", err, l->backoff);
            listener_pause(l, now + l->backoff, 0);
            return;
        }
        l->backoff = 0;
        if (wio_tcp_adopt(t, fd, l->handler, l->ctx, NULL) != 0)
            return;
    }
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
    double now = wio_now();
    c->deadline = now + t->params.accept_timeout;
    hs_list(c, now);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
    if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
        int e = errno;
        wio_tcp_conn_close(c, WAITIO_ERR_SYS);
        return wio_fail(WAITIO_ERR_SYS, "epoll_ctl: %s", strerror(e));
    }
    if (out)
        *out = c;
    return 0;
}

/* Opens the connector's socket and starts connecting. 0, or an errno value. */
static int connector_start(wio_conn *c)
{
    wio_tcp *t = c->tcp;
    struct sockaddr_storage ss;
    socklen_t len = wio_addr_to_sockaddr(&c->addr, &ss);
    int fd = new_socket(t, ss.ss_family);
    if (fd < 0)
        return errno;
    tune_socket(fd, t->params.peer_timeout);
    c->fd = fd;
    c->state = CS_CONNECTING;
    c->tx_seq = c->rx_seq = 0;
    c->hs_got = 0;
    c->deadline = wio_now() + t->params.connect_timeout;
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.ptr = c};
    c->epollout = 1;
    if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, fd, &ev) != 0)
        return errno;
    if (connect(fd, (struct sockaddr *)&ss, len) != 0 && errno != EINPROGRESS)
        return errno;
    return 0;
}

int wio_tcp_connect(wio_tcp *t, const wio_addr *addr, uint32_t my_id, uint32_t target_id,
                    const wio_conn_handler *h, void *ctx, wio_conn **out)
{
    wio_conn *c = conn_new(t, -1, h, ctx);
    if (!c)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    c->initiator = 1;
    c->my_id = my_id;
    c->peer_id = target_id;
    c->addr = *addr;
    wio_addr_format(addr, c->desc, sizeof c->desc);
    int err = connector_start(c);
    if (err == EMFILE || err == ENFILE || err == ENOMEM || err == ENOBUFS ||
        (err && c->fd < 0)) {
        wio_tcp_conn_close(c, WAITIO_ERR_SYS);
        return wio_fail(WAITIO_ERR_SYS, "cannot connect to %s: %s", c->desc, strerror(err));
    }
    *out = c;
    if (err) {
        /* report through the handler like an asynchronous failure, after the caller has *out */
        wio_debug("connect to %s failed: %s", c->desc, strerror(err));
        c->deadline = wio_now(); /* handled as a failure at the next poll */
        t->deadline_due = 1;
        snprintf(c->desc + strlen(c->desc), sizeof c->desc - strlen(c->desc), "!");
    }
    return 0;
}

/* The acceptor dropped our connection before ACCEPT (it was overloaded, or we did not answer
 * within its deadline): reconnect a few times, with growing delays, before giving up. */
int wio_tcp_retry_instead(wio_conn *c, int err, const char *why)
{
    if (!c->initiator || err != WAITIO_ERR_PEER || c->attempts >= CONNECT_RETRIES ||
        (c->state != CS_WAIT_ACK && c->state != CS_WAIT_ACCEPT))
        return 0;
    double delay = RETRY_DELAY * (double)(1 << c->attempts);
    c->attempts++;
    wio_info("connection %s closed in its handshake (%s): the peer may be overloaded; "
             "reconnecting in %.0f ms", c->desc, why, delay * 1000);
    epoll_ctl(c->tcp->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    c->fd = -1;
    c->epollout = 0;
    if (wio_list_linked(&c->hs_item.link)) {
        wio_list_remove(&c->hs_item.link);
        c->hs_item.in_flight = 0;
    }
    c->state = CS_RETRY;
    c->deadline = 0;
    c->retry_at = wio_now() + delay;
    return 1;
}

static void connector_retry(wio_conn *c)
{
    int err = connector_start(c);
    if (err) {
        char why[160];
        snprintf(why, sizeof why, "reconnect to %s failed: %s", c->desc, strerror(err));
        wio_tcp_conn_fail(c, WAITIO_ERR_PEER, why, 0);
    }
}

/* Handshakes that take too long (slow or silent peers) are abandoned; connectors waiting to
 * reconnect reconnect; paused listeners resume. */
void wio_tcp_check_deadlines(wio_tcp *t, double now)
{
    wio_list *pos, *tmp;
    WIO_LIST_FOREACH_SAFE(pos, tmp, &t->conns) {
        wio_conn *c = WIO_CONTAINER_OF(pos, wio_conn, link);
        if (c->state == CS_RETRY) {
            if (now >= c->retry_at)
                connector_retry(c);
            continue;
        }
        if (c->deadline > 0 && now >= c->deadline && c->state != CS_OPEN && c->state != CS_SHUTDOWN) {
            char why[160];
            snprintf(why, sizeof why, "%s %s did not complete in time",
                     c->state == CS_CONNECTING ? "connect to" : "handshake with", c->desc);
            wio_tcp_conn_fail(c, c->state == CS_CONNECTING ? WAITIO_ERR_PEER : WAITIO_ERR_TIMEOUT, why, 0);
        }
    }
    if (t->npaused > 0)
        resume_listeners(t, now, 0);
    if (t->reserve_fd < 0)
        reserve_refill(t);
}

/* ------------------------------------------------------------------------------------ */
/* the handshake                                                                         */

static int conn_gone(const wio_conn *c) { return c->state == CS_CLOSED || c->state == CS_RETRY; }

static void send_handshake(wio_conn *c, uint8_t type, uint16_t flags, size_t len)
{
    wio_send_item *it = &c->hs_item;
    if (wio_list_linked(&it->link)) { /* a fresh socket takes a handshake frame at once */
        wio_tcp_conn_fail(c, WAITIO_ERR_PEER, "the peer does not read its handshake", 0);
        return;
    }
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

static void fail_proto(wio_conn *c, const char *why) { wio_tcp_conn_fail(c, WAITIO_ERR_PROTO, why, 0); }

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
    /* HELLO: nonce, our id, the id we expect, our limits; it opens the transcript */
    uint8_t *p = c->hs_payload;
    if (wio_random_bytes(p, WIO_NONCE_LEN) != 0) {
        wio_tcp_conn_fail(c, WAITIO_ERR_SYS, "no random nonce", 0);
        return;
    }
    wio_put_le32(p + WIO_NONCE_LEN, c->my_id);
    wio_put_le32(p + WIO_NONCE_LEN + 4, c->peer_id);
    wio_put_le32(p + WIO_NONCE_LEN + 8, c->tcp->params.eager_limit);
    wio_put_le32(p + WIO_NONCE_LEN + 12, c->tcp->params.eager_credit);
    c->shm_wanted = c->tcp->params.shm_ring && c->handler->local_peer &&
                    c->handler->local_peer(c->ctx, c->peer_id);
    uint16_t flags = c->shm_wanted ? WIO_FF_SHM : 0;
    wio_put_le16(c->transcript, flags);
    memcpy(c->transcript + 2, p, HELLO_LEN);
    c->state = CS_WAIT_ACK;
    c->deadline = wio_now() + c->tcp->params.connect_timeout;
    send_handshake(c, WIO_FT_HELLO, flags, HELLO_LEN);
}

/* Acceptor: HELLO. Nothing is trusted yet and nobody else is told: answer with our nonce and
 * proof, and wait for AUTH. */
static void handle_hello(wio_conn *c, const wio_frame_hdr *h, const uint8_t *p)
{
    if (h->len != HELLO_LEN) {
        fail_proto(c, "malformed HELLO");
        return;
    }
    uint32_t claimed = wio_get_le32(p + WIO_NONCE_LEN);
    uint32_t target = wio_get_le32(p + WIO_NONCE_LEN + 4);
    c->my_id = c->tcp->self_id;
    if (target != c->my_id) {
        fail_proto(c, "HELLO addressed to another process (stale address?)");
        return;
    }
    c->peer_id = claimed; /* a claim until AUTH proves it */
    c->hello.id = claimed;
    c->hello.eager_limit = wio_get_le32(p + WIO_NONCE_LEN + 8);
    c->hello.eager_credit = wio_get_le32(p + WIO_NONCE_LEN + 12);
    wio_put_le16(c->transcript, h->flags);
    memcpy(c->transcript + 2, p, HELLO_LEN);
    uint8_t *q = c->hs_payload, *fields = c->transcript + 2 + HELLO_LEN;
    if (wio_random_bytes(fields, WIO_NONCE_LEN) != 0) {
        wio_tcp_conn_fail(c, WAITIO_ERR_SYS, "no random nonce", 0);
        return;
    }
    wio_put_le32(fields + WIO_NONCE_LEN, c->my_id);
    wio_put_le32(fields + WIO_NONCE_LEN + 4, c->tcp->params.eager_limit);
    wio_put_le32(fields + WIO_NONCE_LEN + 8, c->tcp->params.eager_credit);
    memcpy(q, fields, WIO_NONCE_LEN);
    wio_auth_mac(c->tcp->params.key, WIO_AUTH_ACCEPTOR, c->transcript, TRANSCRIPT_LEN,
                 q + WIO_NONCE_LEN);
    memcpy(q + WIO_NONCE_LEN + WIO_PROOF_LEN, fields + WIO_NONCE_LEN, 12);
    c->state = CS_WAIT_AUTH;
    send_handshake(c, WIO_FT_HELLO_ACK, 0, ACK_LEN);
}

/* Connector: HELLO_ACK. Check the acceptor's proof, then prove ourselves. */
static void handle_ack(wio_conn *c, const wio_frame_hdr *h, const uint8_t *p)
{
    if (h->len != ACK_LEN || h->flags != 0) {
        fail_proto(c, "malformed HELLO_ACK");
        return;
    }
    uint8_t *fields = c->transcript + 2 + HELLO_LEN, expect[WIO_PROOF_LEN];
    memcpy(fields, p, WIO_NONCE_LEN);
    memcpy(fields + WIO_NONCE_LEN, p + WIO_NONCE_LEN + WIO_PROOF_LEN, 12);
    uint32_t acceptor = wio_get_le32(fields + WIO_NONCE_LEN);
    wio_auth_mac(c->tcp->params.key, WIO_AUTH_ACCEPTOR, c->transcript, TRANSCRIPT_LEN, expect);
    if (!wio_auth_proof_equal(expect, p + WIO_NONCE_LEN) || acceptor != c->peer_id) {
        wio_tcp_conn_fail(c, WAITIO_ERR_AUTH, "peer failed authentication (different WAITIO_KEY?)", 0);
        return;
    }
    c->hello.id = acceptor;
    c->hello.eager_limit = wio_get_le32(fields + WIO_NONCE_LEN + 4);
    c->hello.eager_credit = wio_get_le32(fields + WIO_NONCE_LEN + 8);
    wio_auth_mac(c->tcp->params.key, WIO_AUTH_CONNECTOR, c->transcript, TRANSCRIPT_LEN, c->hs_payload);
    c->state = CS_WAIT_ACCEPT;
    c->deadline = wio_now() + c->tcp->params.connect_timeout;
    send_handshake(c, WIO_FT_AUTH, 0, WIO_PROOF_LEN);
}

static void conn_opened(wio_conn *c)
{
    if (!c->rbuf && !(c->rbuf = malloc(RBUF_SIZE))) {
        wio_tcp_conn_fail(c, WAITIO_ERR_NOMEM, "out of memory for the receive buffer", 0);
        return;
    }
    c->state = CS_OPEN;
    c->deadline = 0;
    c->attempts = 0;
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
        if (!conn_gone(c))
            conn_opened(c);
        return;
    }
    size_t n = strlen(name) + 1;
    wio_put_le32(c->hs_payload, (uint32_t)c->tcp->params.shm_ring);
    memcpy(c->hs_payload + 4, name, n);
    c->state = CS_WAIT_READY;
    send_handshake(c, WIO_FT_SHM_OFFER, 0, 4 + n);
}

/* Acceptor: AUTH. Only a connection that proves the key is shown to the owner, which binds it
 * to the peer it claimed (or refuses it, or lets the simultaneous-connect rule choose). */
static void handle_auth(wio_conn *c, const wio_frame_hdr *h, const uint8_t *p)
{
    if (h->len != WIO_PROOF_LEN) {
        fail_proto(c, "malformed AUTH");
        return;
    }
    uint8_t expect[WIO_PROOF_LEN];
    wio_auth_mac(c->tcp->params.key, WIO_AUTH_CONNECTOR, c->transcript, TRANSCRIPT_LEN, expect);
    if (!wio_auth_proof_equal(expect, p)) {
        wio_tcp_conn_fail(c, WAITIO_ERR_AUTH, "authentication failed: peer does not know the instance key", 0);
        return;
    }
    wio_tcp_hs_unlist(c); /* authenticated: no longer a stranger's handshake */
    c->deadline = wio_now() + c->tcp->params.connect_timeout;
    int verdict = c->handler->incoming ? c->handler->incoming(c->ctx, c, c->peer_id) : 0;
    if (c->state == CS_CLOSED)
        return;
    if (verdict != 0) {
        if (verdict == -2) /* usually a simultaneous-connect loser that raced its own close */
            wio_info("refusing connection %s: process %u is already connected", c->desc,
                     (unsigned)c->peer_id);
        else if (verdict < 0)
            wio_warn("refusing connection %s: process %u is not a peer we can accept now",
                     c->desc, (unsigned)c->peer_id);
        c->state = CS_REJECTING; /* closes once ACCEPT is written (wio_tcp_conn_flush) */
        send_handshake(c, WIO_FT_ACCEPT, verdict == 1 ? WIO_FF_REJECT : WIO_FF_NACK, 0);
        return;
    }
    c->shm_wanted = (c->transcript[0] & WIO_FF_SHM) && c->tcp->params.shm_ring &&
                    c->handler->local_peer && c->handler->local_peer(c->ctx, c->peer_id);
    send_handshake(c, WIO_FT_ACCEPT, c->shm_wanted ? WIO_FF_SHM : 0, 0);
    if (conn_gone(c))
        return;
    if (c->shm_wanted)
        offer_shm(c);
    else
        conn_opened(c);
}

/* Connector: ACCEPT. The connection is ours to use (or it was refused). */
static void handle_accept(wio_conn *c, const wio_frame_hdr *h)
{
    if (h->flags & WIO_FF_REJECT) {
        wio_tcp_conn_fail(c, WAITIO_ERR_PEER, "simultaneous connect resolved in favour of the peer's", 1);
        return;
    }
    if (h->flags & WIO_FF_NACK) {
        wio_tcp_conn_fail(c, WAITIO_ERR_PEER, "the peer refused the connection (it does not expect "
                          "us, or already has a connection from us)", 0);
        return;
    }
    if ((h->flags & ~WIO_FF_SHM) || ((h->flags & WIO_FF_SHM) && !c->shm_wanted)) {
        fail_proto(c, "malformed ACCEPT");
        return;
    }
    c->shm_wanted = (h->flags & WIO_FF_SHM) != 0;
    if (c->shm_wanted) {
        c->state = CS_WAIT_OFFER;
        return;
    }
    conn_opened(c);
}

/* From here on the byte stream moves through the rings; the socket carries doorbells. */
static void shm_activate(wio_conn *c)
{
    if (c->epollout)
        wio_tcp_conn_update_events(c, 0);
    c->shm_active = 1;
    wio_list_insert_tail(&c->tcp->shm_conns, &c->shm_link);
    c->tcp->shm_snapshot_valid = 0;
    snprintf(c->desc + strlen(c->desc), sizeof c->desc - strlen(c->desc), " shm");
}

/* SHM_READY from the connector: attached (ACK) or not (NACK, it logged why). */
static void handle_ready(wio_conn *c, const wio_frame_hdr *h)
{
    if (h->len != 0) {
        fail_proto(c, "malformed SHM_READY");
        return;
    }
    if (h->flags & WIO_FF_ACK) {
        wio_shm_unlink(c->shm);
        shm_activate(c);
    } else {
        wio_shm_destroy(c->shm);
        c->shm = NULL;
    }
    conn_opened(c);
}

/* SHM_OFFER from the acceptor: le32 ring size, segment name, NUL; or empty (no segment). */
static void handle_offer(wio_conn *c, const wio_frame_hdr *h, const uint8_t *p)
{
    if (h->len == 0) {
        conn_opened(c);
        return;
    }
    if (h->len < 6 || h->len > 4 + WIO_SHM_NAME_MAX || p[h->len - 1] != 0) {
        fail_proto(c, "malformed SHM_OFFER");
        return;
    }
    size_t ring = wio_get_le32(p);
    int rc = wio_shm_attach((const char *)p + 4, ring, &c->shm);
    if (rc == WAITIO_ERR_PROTO) {
        fail_proto(c, "SHM_OFFER names no valid segment");
        return;
    }
    if (rc)
        wio_info("connection %s: cannot attach shared memory (%s); staying on TCP", c->desc,
                 waitio_error_message());
    send_handshake(c, WIO_FT_SHM_READY, rc ? WIO_FF_NACK : WIO_FF_ACK, 0);
    if (conn_gone(c))
        return;
    if (!rc) {
        if (!wio_list_empty(&c->sendq)) { /* a fresh socket takes a header at once */
            wio_tcp_conn_fail(c, WAITIO_ERR_SYS, "could not write SHM_READY", 0);
            return;
        }
        shm_activate(c);
    }
    conn_opened(c);
}

/* Which handshake frame each state accepts. */
static int hs_frame_allowed(int state, unsigned type)
{
    switch (state) {
    case CS_WAIT_HELLO: return type == WIO_FT_HELLO;
    case CS_WAIT_ACK: return type == WIO_FT_HELLO_ACK;
    case CS_WAIT_AUTH: return type == WIO_FT_AUTH;
    case CS_WAIT_ACCEPT: return type == WIO_FT_ACCEPT;
    case CS_WAIT_OFFER: return type == WIO_FT_SHM_OFFER;
    case CS_WAIT_READY: return type == WIO_FT_SHM_READY;
    default: return 0;
    }
}

static void hs_frame_complete(wio_conn *c)
{
    const wio_frame_hdr *h = &c->hs_hdr;
    const uint8_t *p = c->hs_buf + WIO_FRAME_HDR_SIZE;
    c->hs_got = 0;
    switch (h->type) {
    case WIO_FT_HELLO: handle_hello(c, h, p); break;
    case WIO_FT_HELLO_ACK: handle_ack(c, h, p); break;
    case WIO_FT_AUTH: handle_auth(c, h, p); break;
    case WIO_FT_ACCEPT: handle_accept(c, h); break;
    case WIO_FT_SHM_OFFER: handle_offer(c, h, p); break;
    case WIO_FT_SHM_READY: handle_ready(c, h); break;
    default: fail_proto(c, "unexpected handshake frame"); break;
    }
}

/* A whole header is in hs_buf: check it like the data path does, and the state on top. */
static int hs_header_arrived(wio_conn *c)
{
    const char *why = NULL;
    char msg[160];
    wio_frame_hdr *h = &c->hs_hdr;
    if (wio_frame_decode(c->hs_buf, h, &why) != 0) {
        snprintf(msg, sizeof msg, "bad frame header: %s", why);
        fail_proto(c, msg);
        return -1;
    }
    if (h->seq != c->rx_seq) {
        snprintf(msg, sizeof msg, "sequence number %u, expected %u", (unsigned)h->seq, (unsigned)c->rx_seq);
        fail_proto(c, msg);
        return -1;
    }
    c->rx_seq++;
    if (!hs_frame_allowed(c->state, h->type) || h->len > WIO_HANDSHAKE_MAX) {
        snprintf(msg, sizeof msg, "%s frame not allowed in this connection state",
                 wio_frame_type_name(h->type));
        fail_proto(c, msg);
        return -1;
    }
    return 0;
}

/* Reads handshake frames one at a time and exactly: nothing beyond the current frame is
 * consumed, so whatever follows the last one stays in the socket for the open connection's
 * reader (tcp.c), which level-triggered epoll calls next. */
void wio_tcp_hs_readable(wio_conn *c)
{
    for (int reads = 0; reads < 16 && !conn_gone(c) && c->state != CS_OPEN &&
                        c->state != CS_SHUTDOWN; reads++) {
        size_t want = c->hs_got < WIO_FRAME_HDR_SIZE ? WIO_FRAME_HDR_SIZE - c->hs_got
                                                     : WIO_FRAME_HDR_SIZE + c->hs_hdr.len - c->hs_got;
        ssize_t n = recv(c->fd, c->hs_buf + c->hs_got, want, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return;
            char why[128];
            snprintf(why, sizeof why, "receive failed: %s", strerror(errno));
            wio_tcp_conn_fail(c, WAITIO_ERR_PEER, why, 0);
            return;
        }
        if (n == 0) {
            wio_tcp_conn_fail(c, WAITIO_ERR_PEER, "peer closed the connection", 0);
            return;
        }
        hs_touch(c);
        c->hs_got += (size_t)n;
        if (c->hs_got == WIO_FRAME_HDR_SIZE && hs_header_arrived(c) != 0)
            return;
        if (c->hs_got >= WIO_FRAME_HDR_SIZE && c->hs_got == WIO_FRAME_HDR_SIZE + c->hs_hdr.len)
            hs_frame_complete(c);
    }
}

void wio_tcp_conn_secret(const wio_conn *c, int label, uint8_t out[WIO_PROOF_LEN])
{
    if (label == WIO_AUTH_ACCEPTOR || label == WIO_AUTH_CONNECTOR || c->state != CS_OPEN) {
        memset(out, 0, WIO_PROOF_LEN); /* never a proof, never before authentication */
        return;
    }
    wio_auth_mac(c->tcp->params.key, label, c->transcript, TRANSCRIPT_LEN, out);
}
