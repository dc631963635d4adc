/*
 * stream.h — framed, authenticated connections over a byte pipe: the code that every stream
 * transport shares. tcp runs it over sockets, shm over a local socket whose byte stream then
 * moves into shared-memory rings, file over segment files, the unit tests over memory.
 *
 * A stream owns the send queue (frames written straight from the caller's buffers, chunked
 * items interleaved with later ones), the receive state machine (frames parsed out of one
 * buffered read, large payloads read straight into their destination) and, through
 * handshake.c, the HELLO / HELLO_ACK / AUTH / ACCEPT handshake. A transport supplies the pipe
 * (how bytes move: wio_pipe_ops) and hooks for its own handshake steps (wio_stream_kind).
 *
 * Streams belong to a wio_stream_ctx: one per transport instance (and one for the start-up
 * rendezvous), holding the key, the announced limits, the poller registration, and the caps on
 * connections still in their handshake (stream.c, "listeners").
 */
#ifndef WIO_STREAM_H
#define WIO_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>
#include "core/auth.h"
#include "core/poller.h"
#include "transport/transport.h"

typedef struct wio_stream wio_stream;
typedef struct wio_stream_ctx wio_stream_ctx;

#define WIO_HS_HELLO_LEN (WIO_NONCE_LEN + 16)
#define WIO_HS_TRANSCRIPT_LEN (2 + WIO_HS_HELLO_LEN + WIO_NONCE_LEN + 12)
typedef struct wio_listener wio_listener;

/* How bytes move. Like sendmsg/recv: bytes moved, or -1 with errno (EAGAIN: would block);
 * recv returns 0 at the end of the stream. */
typedef struct wio_pipe_ops {
    ssize_t (*sendv)(wio_stream *s, struct iovec *iov, int iovcnt);
    ssize_t (*recv)(wio_stream *s, void *buf, size_t n);
    /* optional, instead of recv: a pipe whose bytes can be parsed where they lie (shm's rings).
     * peek returns the next run of readable bytes in place and *n > 0; NULL with *n 0 when none
     * is there, NULL with *n (size_t)-1 when the pipe is corrupt. consume(n) after using n of
     * them; the run stays valid until then. */
    const uint8_t *(*peek)(wio_stream *s, size_t *n);
    void (*consume)(wio_stream *s, size_t n);
    /* optional: a small frame written in place (shm's rings). reserve returns where up to *room
     * bytes can be written, or NULL (then sendv); commit(n) sends the first n of them. */
    uint8_t *(*reserve)(wio_stream *s, size_t *room);
    void (*commit)(wio_stream *s, size_t n);
    /* optional: the end of a burst of sendv calls (a file pipe commits a segment here) */
    void (*flush)(wio_stream *s);
    /* ask to be told (wio_stream_writable) when writing may continue; 0 or -1 */
    int (*want_write)(wio_stream *s, int on);
    /* everything queued is written: no more bytes will follow */
    void (*shutdown)(wio_stream *s);
    /* the stream is closed: release the pipe's descriptors and memory */
    void (*release)(wio_stream *s);
} wio_pipe_ops;

/* A transport's kind of stream: its pipe and its own handshake steps. */
typedef struct wio_stream_kind {
    const char *name;
    const wio_pipe_ops *pipe;
    /* acceptor, after ACCEPT was queued: 1 if the transport continues the handshake itself
     * (it then calls wio_stream_open), 0 to open now; may be NULL */
    int (*accepted)(wio_stream *s);
    /* connector, ACCEPT arrived: 1 if more handshake follows, 0 to open now; may be NULL */
    int (*connector_accepted)(wio_stream *s);
    /* a transport handshake frame (SHM_OFFER, SHM_READY): 0, or -1 = malformed; may be NULL */
    int (*handshake_frame)(wio_stream *s, const wio_frame_hdr *h, const uint8_t *payload);
    /* the stream's memory is about to be freed */
    void (*freed)(wio_stream *s);
} wio_stream_kind;

enum wio_stream_state {
    WIO_SS_CONNECTING,  /* connector: the pipe is being set up (TCP connect in progress) */
    WIO_SS_WAIT_ACK,    /* connector: HELLO sent */
    WIO_SS_WAIT_ACCEPT, /* connector: AUTH sent, waiting for the acceptor's verdict */
    WIO_SS_WAIT_HELLO,  /* acceptor: waiting for HELLO */
    WIO_SS_WAIT_AUTH,   /* acceptor: HELLO_ACK sent */
    WIO_SS_REJECTING,   /* acceptor: ACCEPT(REJECT) being written, then close */
    WIO_SS_TP_HANDSHAKE,/* authenticated; the transport's own steps (shm rings) */
    WIO_SS_OPEN,
    WIO_SS_SHUTDOWN,    /* we sent our last frame and half-closed; waiting for the peer's end */
    WIO_SS_CLOSED,
};

#define WIO_STREAM_RBUF (64u << 10)
#define WIO_STREAM_HS_RBUF 512u /* receive buffer before authentication */

struct wio_stream {
    wio_stream_ctx *ctx;
    const wio_stream_kind *kind;
    int state;
    int initiator;
    int fd;                    /* the pipe's descriptor (socket), -1 if none */
    wio_poll_fd pf;            /* its registration with the poller */
    void *pipe_state;          /* the transport's: ring segment, file stream, ... */
    void *tp_conn;             /* the transport's connection object (the ops' `conn`) */
    const wio_tp_handler *handler;
    void *hctx;
    void *user;                /* the owner's object: NULL until the owner accepted it */
    uint32_t my_id, peer_id;
    unsigned purpose;          /* WIO_TPC_* of the connection (from HELLO) */
    /* what both proofs cover: HELLO's flags and payload, then HELLO_ACK's nonce and fields */
    uint8_t transcript[WIO_HS_TRANSCRIPT_LEN];
    wio_peer_hello hello;      /* what the peer announced */
    double deadline;           /* the handshake must finish before this */
    char desc[96];
    /* sending */
    wio_list sendq;
    uint32_t tx_seq;
    int want_out;              /* waiting for the pipe to take more */
    int shutdown_pending;
    wio_send_item hs_item;     /* handshake frames */
    uint8_t hs_payload[WIO_HANDSHAKE_MAX];
    wio_send_item spill;       /* send_now: the part of a frame the pipe did not take at once */
    uint8_t spill_payload[WIO_SEND_NOW_MAX];
    /* receiving */
    uint32_t rx_seq;
    uint8_t *rbuf;             /* hs_rbuf until authenticated, then WIO_STREAM_RBUF bytes */
    size_t rcap, rstart, rend;
    int rx_state;
    wio_frame_hdr rx_hdr;
    uint8_t *rx_dest;          /* NULL: discard */
    int rx_drop;               /* wio_stream_drop_buffered during parsing */
    size_t rx_got;
    uint8_t rx_small[WIO_HANDSHAKE_MAX]; /* handshake payloads */
    uint8_t hs_rbuf[WIO_STREAM_HS_RBUF];
    wio_list link;             /* ctx->streams, ctx->handshakes, or ctx->zombies */
    int in_handshake_list;
    double hs_active;          /* in the handshake table: when it last made progress */
    int authenticated;         /* the peer proved the key */
    int orphaned;              /* abandoned by its owner: finishes its handshake quietly */
    int data_fd;               /* counted in the poller's data descriptors */
    char fail_why[160];        /* a failure noticed synchronously, reported at the next tick */
    int fail_err, fail_rejected; /* ... with this error (0: WAITIO_ERR_PEER) and `rejected` */
    int in_connect;            /* the owner's connect() is on the stack: failures wait (fail_why) */
};

/* ---- contexts ---- */

typedef struct wio_stream_params {
    const wio_key *key;
    struct wio_poller *poller;
    uint32_t eager_limit;       /* announced in HELLO / HELLO_ACK */
    uint32_t eager_credit;
    double connect_timeout;     /* connector: connect + handshake */
    double handshake_timeout;   /* acceptor: HELLO and AUTH */
    unsigned max_handshakes;    /* accepted connections still in their handshake */
    uint32_t max_conns;         /* the owner's connection cap (0: none), which handshakes count against */
    void *owner;                /* the transport that made the context */
} wio_stream_params;

int wio_stream_ctx_create(wio_stream_ctx **out, const wio_stream_params *p);
/* Closes every stream (their items complete with WAITIO_ERR_CANCELLED) and frees the ctx. */
void wio_stream_ctx_destroy(wio_stream_ctx *ctx);
void wio_stream_ctx_set_self(wio_stream_ctx *ctx, uint32_t id, uint32_t eager_credit);
const wio_stream_params *wio_stream_ctx_params(const wio_stream_ctx *ctx);
void *wio_stream_ctx_owner(const wio_stream_ctx *ctx);
size_t wio_stream_ctx_count(const wio_stream_ctx *ctx); /* streams open or in their handshake */
/* Accepted connections that failed authentication: a wrong proof, or a peer that left after
 * seeing ours (it lacked the key). */
unsigned long wio_stream_ctx_auth_failures(const wio_stream_ctx *ctx);

/* The process's own connect hit EMFILE: give back the descriptor held in reserve (1 if there
 * was one). It is taken again when a stream closes. */
int wio_stream_ctx_release_reserve(wio_stream_ctx *ctx);

/* ---- listeners: accept with bounded handshakes ---- */

/* Takes a bound, listening, nonblocking socket; accepted connections become streams of `kind`
 * (tune: called on each accepted descriptor, may be NULL). Unarmed listeners leave connections
 * in the kernel's backlog until wio_listener_arm. */
int wio_listener_create(wio_stream_ctx *ctx, int fd, const wio_stream_kind *kind,
                        void (*tune)(int fd), const wio_tp_handler *h, void *hctx, int armed,
                        wio_listener **out);
int wio_listener_arm(wio_listener *l);
void wio_listener_close(wio_listener *l);

/* ---- streams ---- */

/* A new stream over descriptor fd (-1: none) of `kind`; the caller sets pipe_state, desc. */
wio_stream *wio_stream_new(wio_stream_ctx *ctx, const wio_stream_kind *kind, int fd,
                           const wio_tp_handler *h, void *hctx);
/* Connector: registers fd with the poller and starts the handshake (now, or when the pipe
 * reports it is connected: wio_stream_connected). */
int wio_stream_start_connect(wio_stream *s, uint32_t my_id, uint32_t target_id, unsigned purpose,
                             void *user, int pipe_ready);
void wio_stream_connected(wio_stream *s);   /* the pipe is up: send HELLO */
/* Acceptor: registers fd and waits for HELLO (counted against the handshake cap). */
int wio_stream_start_accept(wio_stream *s);
/* For a transport without a listener (file): may one more accepted stream start its handshake
 * now? 1 when under the handshake cap (WAITIO_MAX_HANDSHAKES, fewer near the connection cap) or
 * when the handshake idle the longest was dropped to make room; 0: not yet, ask again later. */
int wio_stream_ctx_hs_room(wio_stream_ctx *ctx);

void wio_stream_send(wio_stream *s, wio_send_item *it);
/* The transports' send_now (transport.h): a small frame written at once, or -1. */
int wio_stream_send_now(wio_stream *s, wio_frame_hdr *h, const void *payload);
void wio_stream_shutdown(wio_stream *s);
/* Closes now; queued items complete with err; handler->closed is NOT called. */
void wio_stream_close(wio_stream *s, int err);
/* The owner no longer wants this connection (a simultaneous connect went the other way). A
 * connector still in its handshake finishes it without an owner, so that the peer sees a clean
 * REJECT instead of a connection that vanished mid-handshake; anything else closes now. */
void wio_stream_abandon(wio_stream *s);
/* Closes, logs and tells the owner why (if it has one). Inside wio_stream_start_connect (the
 * owner's connect() has not returned the connection yet) it only records the failure, which the
 * next tick reports: the owner never hears of a connection it does not hold. */
void wio_stream_fail(wio_stream *s, int err, const char *why, int rejected);
int wio_stream_idle(const wio_stream *s);

/* The pipe has bytes (or its end) / room again. */
void wio_stream_read(wio_stream *s);
/* The transports' conn_poll (transport.h): reads what has arrived and writes what waits. */
void wio_stream_poll(wio_stream *s);
/* An open stream's socket leaves the poller's epoll set until the process blocks (poller.h). */
void wio_stream_park(wio_stream *s);
void wio_stream_writable(wio_stream *s);
/* The end of the stream (EOF) was reached by the pipe. */
void wio_stream_eof(wio_stream *s);
/* Default poller callback for socket pipes: read on EPOLLIN/HUP/ERR, write on EPOLLOUT. */
void wio_stream_fd_ready(wio_poll_fd *pf, uint32_t events);

/* The socket pipe (sockets of any family); sets desc from the peer's address. */
extern const wio_pipe_ops wio_socket_pipe;
void wio_socket_describe_peer(wio_stream *s);
/* A connect that failed synchronously: reported as a failure (WAITIO_ERR_PEER) at the next tick. */
void wio_stream_fail_soon(wio_stream *s, const char *why);
/* Authenticated: the full-size receive buffer, out of the handshake cap. 0 or -1 (memory). */
int wio_stream_promote(wio_stream *s);
void wio_stream_listeners_resume(wio_stream_ctx *ctx);

/* Used by transports' handshake steps. */
void wio_stream_send_handshake(wio_stream *s, uint8_t type, uint16_t flags, size_t len);
void wio_stream_open(wio_stream *s);
/* From a handshake frame's handler: bytes already buffered past that frame are dropped (a pipe
 * switch). */
void wio_stream_drop_buffered(wio_stream *s);

/* handshake.c: the authenticated handshake (called by stream.c) */
void wio_hs_send_hello(wio_stream *s);
/* A complete handshake frame: returns nonzero when the stream is gone. */
int wio_hs_frame(wio_stream *s, const wio_frame_hdr *h);
int wio_hs_frame_allowed(int state, unsigned type);

#endif
