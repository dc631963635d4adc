/*
 * tcp.c — the tcp transport: stream connections (stream.c) over TCP sockets, one listener per
 * process on the address it advertises, nonblocking connects, and the socket tuning that lets a
 * silent peer be declared dead. Its row of the transport table is at the end of the file; the
 * start-up rendezvous (boot.c) uses wio_tcp_listen / wio_tcp_dial on a context of its own.
 */
#define WIO_LOG_SUBSYS WIO_SUB_TCP /* this file logs as "tcp" (WAITIO_LOG=tcp=LEVEL) */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "transport/tcp.h"
#include "transport/addr.h"
#include "core/common.h"

typedef struct tcp_tp {
    wio_stream_ctx *ctx;
    wio_listener *listener;
    const wio_tp_handler *handler;
    void *hctx;
    const wio_proc *table;
    uint32_t nprocs, self_id;
    double peer_timeout;
} tcp_tp;

static double tune_peer_timeout = 30; /* set by the first context; one value per process */

/* A silent peer (host gone, link cut) is declared dead after about `peer_timeout` seconds:
 * keepalive probes when the connection is idle, TCP_USER_TIMEOUT when data is unacknowledged. */
static void tune_socket(int fd)
{
    double peer_timeout = tune_peer_timeout;
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

static const wio_stream_kind tcp_kind = {.name = "tcp", .pipe = &wio_socket_pipe};

void wio_tcp_set_peer_timeout(double seconds) { tune_peer_timeout = seconds; }

/* socket(), giving back the reserve descriptor once if the process is out of them. */
static int open_socket(wio_stream_ctx *ctx, int family)
{
    int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 && (errno == EMFILE || errno == ENFILE) && wio_stream_ctx_release_reserve(ctx))
        fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        wio_fail(WAITIO_ERR_SYS, "socket: %s", strerror(errno));
    return fd;
}

int wio_tcp_listen(wio_stream_ctx *ctx, const wio_addr *bind_to, int port, const wio_tp_handler *h,
                   void *hctx, int armed, wio_listener **out, uint16_t *port_out)
{
    wio_addr a = {0};
    if (bind_to && bind_to->family)
        a = *bind_to;
    else
        a.family = 4; /* INADDR_ANY */
    a.port = (uint16_t)port;
    struct sockaddr_storage ss;
    socklen_t len = wio_addr_to_sockaddr(&a, &ss);
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return wio_fail(WAITIO_ERR_SYS, "socket: %s", strerror(errno));
    int one = 1;
    (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, 4096) != 0) {
        int e = errno;
        char where[80];
        wio_addr_format(&a, where, sizeof where);
        close(fd);
        return wio_fail(e == EADDRINUSE ? WAITIO_ERR_BOOT : WAITIO_ERR_SYS, "cannot listen on %s: %s%s",
                        where, strerror(e),
                        e == EADDRINUSE ? " (another WaitIO instance? set WAITIO_MASTER_PORT)" : "");
    }
    struct sockaddr_storage bound;
    socklen_t blen = sizeof bound;
    wio_addr ba;
    if (getsockname(fd, (struct sockaddr *)&bound, &blen) != 0 ||
        wio_addr_from_sockaddr((struct sockaddr *)&bound, &ba) != 0) {
        int e = errno;
        close(fd);
        return wio_fail(WAITIO_ERR_SYS, "getsockname: %s", strerror(e));
    }
    int rc = wio_listener_create(ctx, fd, &tcp_kind, tune_socket, h, hctx, armed, out);
    if (rc)
        return rc;
    if (port_out)
        *port_out = ba.port;
    return 0;
}

int wio_tcp_dial(wio_stream_ctx *ctx, const wio_addr *to, uint32_t my_id, uint32_t target_id,
                 unsigned purpose, const wio_tp_handler *h, void *hctx, void *user, wio_stream **out)
{
    struct sockaddr_storage ss;
    socklen_t len = wio_addr_to_sockaddr(to, &ss);
    int fd = open_socket(ctx, ss.ss_family);
    if (fd < 0)
        return WAITIO_ERR_SYS;
    tune_socket(fd);
    wio_stream *s = wio_stream_new(ctx, &tcp_kind, fd, h, hctx);
    if (!s) {
        close(fd);
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    }
    wio_addr_format(to, s->desc, sizeof s->desc);
    if (wio_stream_start_connect(s, my_id, target_id, purpose, user, 0) != 0) {
        wio_stream_close(s, WAITIO_ERR_SYS);
        return wio_fail(WAITIO_ERR_SYS, "cannot start a connection to %s", s->desc);
    }
    *out = s;
    if (connect(fd, (struct sockaddr *)&ss, len) != 0 && errno != EINPROGRESS) {
        char why[160];
        snprintf(why, sizeof why, "connect to %s failed: %s", s->desc, strerror(errno));
        wio_stream_fail_soon(s, why);
    }
    return 0;
}

/* ------------------------------------------------------------------------------------ */
/* the transport's row                                                                  */

static int tcp_open(const wio_tp_params *p, void **out, wio_proc *self)
{
    tcp_tp *t = calloc(1, sizeof *t);
    if (!t)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory creating the tcp transport");
    const wio_config *cfg = p->cfg;
    t->handler = p->handler;
    t->hctx = p->ctx;
    t->peer_timeout = cfg->peer_timeout;
    wio_tcp_set_peer_timeout(cfg->peer_timeout);
    wio_stream_params sp = {
        .key = p->key, .poller = p->poller, .eager_limit = p->eager_limit,
        .connect_timeout = cfg->connect_timeout, .handshake_timeout = cfg->handshake_timeout,
        .max_handshakes = cfg->max_handshakes, .max_conns = wio_config_max_conns(cfg),
    };
    int rc = wio_stream_ctx_create(&t->ctx, &sp);
    if (rc) {
        free(t);
        return rc;
    }
    /* Listens before the start-up rendezvous (peers learn the port from the table) but accepts
     * only once the engine has the table: early connections wait in the kernel's backlog. */
    wio_addr bind_to = cfg->bind_all ? (wio_addr){0} : self->addr;
    uint16_t port = 0;
    rc = wio_tcp_listen(t->ctx, &bind_to, 0, t->handler, t->hctx, 0, &t->listener, &port);
    if (rc) {
        wio_stream_ctx_destroy(t->ctx);
        free(t);
        return rc;
    }
    self->addr.port = port;
    self->transports |= WIO_TP_TCP;
    *out = t;
    return 0;
}

static int tcp_start(void *tp, const wio_tp_instance *inst)
{
    tcp_tp *t = tp;
    t->table = inst->table;
    t->nprocs = inst->nprocs;
    t->self_id = inst->self_id;
    wio_stream_ctx_set_self(t->ctx, inst->self_id, inst->eager_credit);
    return wio_listener_arm(t->listener);
}

static int tcp_reachable(void *tp, uint32_t peer_id)
{
    const tcp_tp *t = tp;
    return peer_id < t->nprocs && (t->table[peer_id].transports & WIO_TP_TCP) &&
           t->table[peer_id].addr.family != 0;
}

static int tcp_connect(void *tp, uint32_t peer_id, unsigned flags, void *user, void **conn)
{
    tcp_tp *t = tp;
    wio_stream *s;
    int rc = wio_tcp_dial(t->ctx, &t->table[peer_id].addr, t->self_id, peer_id, flags, t->handler,
                          t->hctx, user, &s);
    if (rc)
        return rc;
    *conn = s;
    return 0;
}

static void tcp_send(void *conn, wio_send_item *it) { wio_stream_send(conn, it); }
static void tcp_conn_poll(void *conn) { wio_stream_poll(conn); }
static void tcp_conn_park(void *conn) { wio_stream_park(conn); }
static int tcp_send_now(void *conn, wio_frame_hdr *h, const void *payload)
{
    return wio_stream_send_now(conn, h, payload);
}
static int tcp_conn_idle(const void *conn) { return wio_stream_idle(conn); }
static void tcp_conn_shutdown(void *conn) { wio_stream_shutdown(conn); }
static void tcp_conn_close(void *conn, int err) { wio_stream_close(conn, err); }
static void tcp_conn_abandon(void *conn) { wio_stream_abandon(conn); }
static const char *tcp_conn_desc(const void *conn) { return ((const wio_stream *)conn)->desc; }

static void tcp_close(void *tp)
{
    tcp_tp *t = tp;
    if (!t)
        return;
    wio_stream_ctx_destroy(t->ctx); /* and its listener */
    free(t);
}

const wio_transport_ops wio_transport_tcp = {
    .name = "tcp",
    .bit = WIO_TP_TCP,
    .open = tcp_open,
    .start = tcp_start,
    .reachable = tcp_reachable,
    .connect = tcp_connect,
    .send = tcp_send,
    .send_now = tcp_send_now,
    .conn_poll = tcp_conn_poll,
    .conn_park = tcp_conn_park,
    .conn_idle = tcp_conn_idle,
    .conn_shutdown = tcp_conn_shutdown,
    .conn_close = tcp_conn_close,
    .conn_abandon = tcp_conn_abandon,
    .conn_desc = tcp_conn_desc,
    .close = tcp_close,
};
