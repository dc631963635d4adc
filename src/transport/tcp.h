/*
 * tcp.h — TCP connections with the WaitIO handshake, used by the engine (through
 * wio_transport_tcp) and by the start-up rendezvous (directly, before any peer exists).
 * Connection setup, listeners and the handshake live in tcp_cm.c, the data path in tcp.c,
 * addresses in addr.c.
 */
#ifndef WIO_TCP_H
#define WIO_TCP_H

#include "transport/transport.h"
#include "core/auth.h"

typedef struct wio_tcp wio_tcp;
typedef struct wio_tcp_listener wio_tcp_listener;

typedef struct wio_tcp_params {
    const wio_key *key;
    uint32_t eager_limit;   /* announced in HELLO: the largest EAGER payload we accept */
    uint32_t eager_credit;  /* announced in HELLO: eager bytes the peer may have in flight */
    double connect_timeout; /* seconds our own connection may go without handshake progress */
    double accept_timeout;  /* seconds an incoming connection has to authenticate */
    double peer_timeout;    /* seconds of silence before a peer is declared dead */
    size_t shm_ring;        /* > 0: offer shared-memory rings of this size to local peers */
    uint32_t max_handshakes; /* incoming connections at once that have not authenticated */
    uint32_t max_conns;     /* connections the owner aims to keep (0: no cap): handshakes count */
} wio_tcp_params;

int wio_tcp_create(wio_tcp **out, const wio_tcp_params *params);
void wio_tcp_destroy(wio_tcp *t);
void wio_tcp_set_self_id(wio_tcp *t, uint32_t id);
void wio_tcp_set_eager_credit(wio_tcp *t, uint32_t credit);
void wio_tcp_set_max_conns(wio_tcp *t, uint32_t max_conns);
/* Listens on addr (its ip all zero: every interface of its family; port 0: any port);
 * *port_out gets the port. An unarmed listener queues connections in the kernel backlog
 * until wio_tcp_listener_arm. */
int wio_tcp_listen(wio_tcp *t, const wio_addr *addr, const wio_conn_handler *h, void *ctx,
                   int armed, wio_tcp_listener **out, uint16_t *port_out);
int wio_tcp_listener_arm(wio_tcp *t, wio_tcp_listener *l);
void wio_tcp_listener_close(wio_tcp *t, wio_tcp_listener *l);
/* Starts a connection as `my_id` to the process `target_id` (WIO_ID_BOOT: the master). */
int wio_tcp_connect(wio_tcp *t, const wio_addr *addr, uint32_t my_id, uint32_t target_id,
                    const wio_conn_handler *h, void *ctx, wio_conn **out);
/* Takes a connected nonblocking socket as an accepted connection (acceptor side of the
 * handshake). Used by listeners, and by the fuzz harnesses with one end of a socketpair. */
int wio_tcp_adopt(wio_tcp *t, int fd, const wio_conn_handler *h, void *ctx, wio_conn **out);
void wio_tcp_conn_send(wio_conn *c, wio_send_item *it);
/* Half-closes after everything queued is written; the conn closes when the peer closes. */
void wio_tcp_conn_shutdown(wio_conn *c);
/* Closes now; queued items complete with err; handler->closed is NOT called. */
void wio_tcp_conn_close(wio_conn *c, int err);
int wio_tcp_conn_idle(const wio_conn *c);     /* nothing queued to send */
int wio_tcp_conn_is_shm(const wio_conn *c);   /* data moves through shared memory */
void *wio_tcp_conn_user(const wio_conn *c);
void wio_tcp_conn_set_user(wio_conn *c, void *user);
const char *wio_tcp_conn_desc(const wio_conn *c);
/* A value only the two ends of this authenticated connection can compute: HMAC(key, label,
 * the handshake transcript). label is a WIO_AUTH_* (auth.h) other than the proofs'. */
void wio_tcp_conn_secret(const wio_conn *c, int label, uint8_t out[WIO_PROOF_LEN]);
/* Waits up to timeout_ms for events and handles them. Returns events handled, or -errcode. */
int wio_tcp_poll(wio_tcp *t, int timeout_ms);
int wio_tcp_epoll_fd(const wio_tcp *t);
/* Incoming connections that got our HELLO_ACK and closed without a valid AUTH (another key,
 * or a stranger), for the start-up master's diagnostics: their owner never hears of them. */
unsigned long wio_tcp_auth_failures(const wio_tcp *t);

/* Name resolution used by the rendezvous: host name or literal to an address. */
int wio_addr_resolve(const char *host, uint16_t port, wio_addr *out);
/* The local address this host uses to reach `to` (no packet is sent). */
int wio_addr_route_to(const wio_addr *to, wio_addr *out);
/* The address of an interface given by name (e.g. "eth0") or a literal address. */
int wio_addr_from_iface(const char *iface, wio_addr *out);
/* 1 if a's address is the wildcard (all zero). */
int wio_addr_is_any(const wio_addr *a);

#endif
