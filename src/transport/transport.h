/*
 * transport.h — the interface between the progress engine and a transport.
 *
 * A transport moves frames (frame.h) between this process and a peer. The engine hands it
 * send items; the transport writes them in order (a chunked item becomes a series of DATA
 * frames, interleaved with later items) and calls item->done when the last byte is out. In the
 * other direction the transport parses frames and asks its handler where each payload goes
 * (frame_begin), then reports it complete (frame_end). Handshake, authentication and
 * sequence-number checks are the transport's business, so every transport enforces them.
 *
 * Adding a transport: one file implementing struct wio_transport_ops, one line in the table of
 * engine.c.
 */
#ifndef WIO_TRANSPORT_H
#define WIO_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>
#include "core/frame.h"
#include "core/list.h"

#define WIO_ID_BOOT 0xffffffffu /* process id used before the address table is known */

struct wio_engine;
struct wio_peer;

typedef struct wio_send_item wio_send_item;
struct wio_send_item {
    wio_list link;
    wio_frame_hdr h;          /* type, flags, gid, src, tag, id, aux (seq/credit set on write) */
    const uint8_t *payload;   /* payload (EAGER, handshake) or the whole message (chunked) */
    size_t total;             /* payload bytes (chunked: the whole message) */
    size_t chunk;             /* > 0: send as DATA frames of at most this size, aux = offset */
    size_t offset;            /* chunked: bytes already put into frames */
    /* transport-private: the frame currently being written */
    uint8_t wire[WIO_FRAME_HDR_SIZE];
    size_t frame_payload, frame_sent;
    int in_flight;
    /* called once: err 0 when fully written, else the error that dropped it */
    void (*done)(wio_send_item *it, int err);
    void *owner;
};

/* Address of a process as advertised in the table (IPv4 or IPv6). */
typedef struct wio_addr {
    uint8_t family; /* 4 or 6 */
    uint8_t ip[16];
    uint16_t port;
} wio_addr;
void wio_addr_format(const wio_addr *a, char *buf, size_t cap);

/* What the other side announced in its handshake. */
typedef struct wio_peer_hello {
    uint32_t id;
    uint32_t eager_limit;
    uint32_t eager_credit;
} wio_peer_hello;

typedef struct wio_conn wio_conn;

/* Callbacks of the layer that owns a connection (the engine, or the start-up rendezvous). */
typedef struct wio_conn_handler {
    /* acceptor side, HELLO received from `peer_id`: 0 accept, 1 reject (simultaneous connect
     * lost: the peer will use our own connection), -1 refuse (logged), -2 drop a benign
     * duplicate quietly */
    int (*incoming)(void *ctx, wio_conn *c, uint32_t peer_id);
    void (*opened)(void *ctx, wio_conn *c, const wio_peer_hello *hello);
    /* a header arrived: set *dest for its payload (NULL discards it); nonzero = protocol error */
    int (*frame_begin)(void *ctx, wio_conn *c, const wio_frame_hdr *h, uint8_t **dest);
    int (*frame_end)(void *ctx, wio_conn *c, const wio_frame_hdr *h);
    /* connection gone: err is a WAITIO_ERR_* code, why a human reason; rejected = 1 when it
     * was closed because the simultaneous-connect resolution chose the other connection */
    void (*closed)(void *ctx, wio_conn *c, int err, const char *why, int rejected);
    /* credit bytes to piggyback on the next frame to this connection's peer */
    uint32_t (*take_credit)(void *ctx, wio_conn *c);
    /* 1 if data to `peer_id` may move through shared memory (same host, shm allowed); NULL: never */
    int (*local_peer)(void *ctx, uint32_t peer_id);
} wio_conn_handler;

/* The engine-facing operations of a transport. */
typedef struct wio_transport_ops {
    const char *name;
    /* Start listening; fill *self with the address peers should use. */
    int (*open)(struct wio_engine *e, wio_addr *self);
    /* The address table is known (e->my_id set): start accepting peers. */
    int (*start)(struct wio_engine *e);
    /* Begin connecting to p (asynchronously); completion arrives through the handler. */
    int (*connect)(struct wio_engine *e, struct wio_peer *p);
    /* Queue an item on p's connection and write what can be written now. */
    void (*send)(struct wio_engine *e, struct wio_peer *p, wio_send_item *it);
    /* Make progress; block up to timeout_ms (0: poll). Returns events handled or -errcode. */
    int (*progress)(struct wio_engine *e, int timeout_ms);
    /* After the last frame (BYE) is written: half-close, then close when the peer closes. */
    void (*shutdown_peer)(struct wio_engine *e, struct wio_peer *p);
    /* Closes p's connection now; items still queued complete with err. */
    int (*close_peer)(struct wio_engine *e, struct wio_peer *p, int err);
    void (*close)(struct wio_engine *e);
} wio_transport_ops;

extern const wio_transport_ops wio_transport_tcp;

#endif
