/*
 * transport.h — the boundary between the progress engine and its transports (SPEC §6).
 *
 * A transport moves frames (core/frame.h) between this process and a peer over its own kind of
 * connection: tcp (sockets), shm (shared-memory rings between processes of one host), file
 * (segment files in a shared directory), ucx (UCX's UCP layer: RDMA networks, when built with
 * UCX). The engine sees a transport only through its row of
 * the table (struct wio_transport_ops, listed in transports.c) and the opaque objects that row
 * hands out: the transport's context (`void *tp`, from open) and its connections (`void *conn`).
 * A transport reaches its owner only through the callbacks it was given at open
 * (struct wio_tp_handler), each of which receives the owner's own object for the connection
 * (`user`): the transport never includes engine.h and never knows what a peer is.
 *
 * Progress: a transport registers its descriptors and polled sources with the poller it was
 * given (core/poller.h); the engine runs the poller. Handshake, authentication and
 * sequence-number checks are the transport's business (handshake.c for the stream transports),
 * so every transport enforces them, and nothing of a connection reaches the owner before the
 * peer has proven the instance key: `incoming` is the first call the owner sees.
 *
 * Adding a transport: one file implementing struct wio_transport_ops, one line in transports.c.
 */
#ifndef WIO_TRANSPORT_H
#define WIO_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>
#include "core/frame.h"
#include "core/list.h"

#define WIO_ID_BOOT 0xffffffffu /* process id used before the address table is known */

struct wio_poller;
struct wio_key;
struct wio_config;

/* One queued frame (or a chunked series of DATA frames) on its way out. */
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
    size_t wire_len;          /* of wire: the header's form (frame.h) */
    size_t frame_payload, frame_sent;
    int in_flight;
    /* called once: err 0 when fully written, else the error that dropped it */
    void (*done)(wio_send_item *it, int err);
    void *owner;
};

/* Address of a process as advertised in the table (IPv4 or IPv6; family 0: none). */
typedef struct wio_addr {
    uint8_t family; /* 0, 4 or 6 */
    uint8_t ip[16];
    uint16_t port;
} wio_addr;
void wio_addr_format(const wio_addr *a, char *buf, size_t cap);

/* Bits of wio_proc.transports: which transports a process offers. */
#define WIO_TP_TCP 0x01u
#define WIO_TP_SHM 0x02u
#define WIO_TP_FILE 0x04u
#define WIO_TP_UCX 0x08u

/* One process of the instance as the address table describes it (boot.c encodes it). */
typedef struct wio_proc {
    wio_addr addr;       /* tcp: where it listens */
    uint64_t host_id;    /* hash of the boot id: equal means same host */
    uint64_t shm_token;  /* shm: names its local socket */
    uint8_t transports;  /* WIO_TP_* it offers */
    uint8_t flags;       /* WIO_PROC_* (engine.h) */
    uint16_t coll_sig;   /* fingerprint of its collective settings (WAITIO_COLL_*) */
    /* Bytes a transport needs beyond the fixed entry (the ucx transport's worker address);
     * ext_len 0: none. Our own entry: set by a transport's open to memory it owns until its
     * close. The table given to start: memory the engine owns until the transports are closed. */
    const uint8_t *ext;
    uint16_t ext_len;
} wio_proc;
/* The longest extension a table entry carries (longer is refused at open and registration). */
#define WIO_PROC_EXT_MAX 2048u
_Static_assert(WIO_PROC_EXT_MAX == WIO_TABLE_EXT_MAX, "frame.h's entry bound is the extension's");

/* What the other side announced in its handshake. */
typedef struct wio_peer_hello {
    uint32_t id;
    uint32_t eager_limit;
    uint32_t eager_credit;
} wio_peer_hello;

/* Verdicts of wio_tp_handler.incoming. */
enum wio_tp_verdict {
    WIO_TP_ACCEPT = 0,     /* bound to *user */
    WIO_TP_REJECT = 1,     /* simultaneous connect lost: the peer uses our own connection */
    WIO_TP_REFUSE = -1,    /* not a process we talk to (logged) */
    WIO_TP_DUPLICATE = -2, /* already connected: a benign connect race, dropped quietly */
};

/* How a connection ended, for wio_tp_handler.closed's `rejected`. */
enum { WIO_TP_FAILED = 0, WIO_TP_REJECTED = 1, WIO_TP_DROPPED = 2 };

/* Connection purposes, from the connector's HELLO (flags of wio_transport_ops.connect). */
#define WIO_TPC_BULK 0x1u /* carries only rendezvous DATA beside the peer's main connection */
/* incoming only: a connection of ours that its owner abandoned (conn_abandon) was accepted by the
 * peer after all — it was decided there after the connection the owner kept had gone again. The
 * owner takes it back (ACCEPT) or it is closed. */
#define WIO_TPC_ADOPT 0x2u

/* Callbacks of the layer that owns the connections (the engine, the start-up rendezvous, a
 * test). `user` is the owner's object for a connection: what connect() was given, or what
 * incoming() returned. */
typedef struct wio_tp_handler {
    /* An accepted connection authenticated as process peer_id (its HELLO said `flags`). */
    int (*incoming)(void *ctx, void *conn, uint32_t peer_id, unsigned flags, void **user);
    /* Open in both directions: frames may flow. */
    void (*opened)(void *ctx, void *user, const wio_peer_hello *hello);
    /* A header arrived: set *dest for its payload (NULL discards it); nonzero = protocol error */
    int (*frame_begin)(void *ctx, void *user, const wio_frame_hdr *h, uint8_t **dest);
    int (*frame_end)(void *ctx, void *user, const wio_frame_hdr *h);
    /* Optional: a whole frame at once, its h->len payload bytes at `payload` (valid during the
     * call only), instead of frame_begin + frame_end; nonzero = protocol error. Small frames
     * arrive this way when their payload is already at hand (the small-message fast path). */
    int (*frame_whole)(void *ctx, void *user, const wio_frame_hdr *h, const uint8_t *payload);
    /* The connection is gone: err a WAITIO_ERR_* code, why a human reason; rejected =
     * WIO_TP_REJECTED when the peer chose its own connection in a simultaneous connect,
     * WIO_TP_DROPPED when the peer dropped our connection before its verdict (overloaded, or we
     * did not answer within its deadline: connecting again may work). Not called after
     * conn_close. */
    void (*closed)(void *ctx, void *user, int err, const char *why, int rejected);
    /* Credit bytes to piggyback on the next frame to this connection's peer. */
    uint32_t (*take_credit)(void *ctx, void *user);
} wio_tp_handler;

/* Given to open. */
typedef struct wio_tp_params {
    const struct wio_config *cfg;
    const struct wio_key *key;
    struct wio_poller *poller;
    const wio_tp_handler *handler;
    void *ctx;
    uint32_t eager_limit;      /* announced in HELLO: the largest EAGER payload we accept */
} wio_tp_params;

/* Given to start, once the address table is known. */
typedef struct wio_tp_instance {
    uint32_t self_id;
    uint32_t nprocs;
    const wio_proc *table;     /* indexed by process id; valid until close */
    int npb;
    const uint32_t *pb_offset; /* first process id of each PB (process id -> PB, rank) */
    uint32_t eager_credit;     /* announced in HELLO: eager bytes a peer may have in flight */
    int oversubscribed;        /* more processes than cores on this host */
} wio_tp_instance;

/* The largest payload of a frame that send_now takes. */
#define WIO_SEND_NOW_MAX 1024u

/* The largest direct-read descriptor an RTS carries (WIO_RTS_PAYLOAD_MAX), and the largest a
 * transport's rdv_pack may produce: below WIO_GPU_DESC_LEN, so that the engine tells a CUDA IPC
 * descriptor (core/frame.h) from a transport's by its length. */
#define WIO_RDV_DESC_MAX WIO_RTS_PAYLOAD_MAX
#define WIO_RDV_TP_DESC_MAX 24u
_Static_assert(WIO_RDV_TP_DESC_MAX < WIO_GPU_DESC_LEN && WIO_GPU_DESC_LEN <= WIO_RDV_DESC_MAX,
               "transport and CUDA IPC descriptors are told apart by length");

/* ---- one-sided over RDMA (issue 27 item 4; ucx_rma.c implements it, src/rma/rdma.c uses it
 * through the engine): a transport that can read, write and update a peer's registered memory
 * on its own (UCX's ucp_put_nbx / ucp_get_nbx / ucp_atomic_op_nbx) offers the optional rdma_*
 * ops of its row. The one-sided layer registers a window's part (rdma_reg), exchanges the packed
 * remote key when the window is made, turns a member's packed key into a handle (rdma_rkey) and
 * posts operations on the connection to that member (rdma_post); rdma_flush completes them
 * remotely. Any ENOTSUP (or other errno) means: use frames instead. ---- */
enum wio_rdma_kind { WIO_RDMA_PUT = 1, WIO_RDMA_GET = 2, WIO_RDMA_AMO = 3 };
#define WIO_RDMA_REG_OWNED 1u /* rdma_reg's flags, below */
/* The atomic operations a transport may do in hardware (or emulate atomically against the
 * target CPU's own atomic instructions: see ucx_rma.c); anything else goes as frames. */
enum wio_rdma_amo {
    WIO_RDMA_AMO_ADD = 1, WIO_RDMA_AMO_AND, WIO_RDMA_AMO_OR, WIO_RDMA_AMO_XOR,
    WIO_RDMA_AMO_SWAP, WIO_RDMA_AMO_CSWAP
};
/* The largest packed remote key exchanged per member (UCX's are tens to a few hundred bytes). */
#define WIO_RDMA_RKEY_MAX 1024u

typedef struct wio_rdma_op {
    int kind;                 /* WIO_RDMA_* */
    uint64_t remote_addr;     /* in the peer's address space, inside its registered part */
    void *rkey;               /* rdma_rkey's handle for that part */
    void *local;              /* put: source; get: destination; AMO: the old value (NULL: none) */
    size_t len;               /* bytes; AMO: 4 or 8 */
    int amo;                  /* WIO_RDMA_AMO_* */
    uint64_t operand, compare;
    /* rdma_post's 2: where remote_addr is mapped here; the whole registered part stays mapped
     * at that offset until rdma_rkey_free, so the caller may reach it directly from now on */
    void *mapped;
    /* called once when rdma_post returned 0: from the transport's progress (inside it: only
     * record the outcome), err 0 or a WAITIO_ERR_* code */
    void (*done)(void *arg, int err);
    void *arg;
} wio_rdma_op;

typedef struct wio_transport_ops {
    const char *name;
    unsigned bit;              /* its WIO_TP_* bit */
    /* Creates the transport's context (listener included) and fills its part of our own table
     * entry (address, token, its bit in `transports`). Connections that arrive before start
     * wait (in the kernel's backlog, or as files). */
    int (*open)(const wio_tp_params *p, void **tp, wio_proc *self);
    int (*start)(void *tp, const wio_tp_instance *inst);
    /* 1 if this transport can reach process `peer_id` (both offer it, same host for shm). */
    int (*reachable)(void *tp, uint32_t peer_id);
    /* Starts connecting (asynchronously: opened or closed follows, never inside this call: a
     * failure found here is reported at the next tick, once the owner holds *conn). */
    int (*connect)(void *tp, uint32_t peer_id, unsigned flags, void *user, void **conn);
    /* Queues an item and writes what can be written now. */
    void (*send)(void *conn, wio_send_item *it);
    /* Optional fast path for a small frame (payload of at most WIO_SEND_NOW_MAX bytes): writes
     * it at once if the connection is open with nothing queued before it. 0: the frame is gone
     * (what the pipe did not take at once was copied: the caller's buffer is free); -1: not
     * taken, queue it with send. h is complete but for its sequence number. */
    int (*send_now)(void *conn, wio_frame_hdr *h, const void *payload);
    int (*conn_idle)(const void *conn);      /* nothing queued to send */
    /* Optional: looks at the connection now, outside the poller — reads what has arrived and
     * writes what waits — so that a wait for this very peer can spin on it without a system
     * call for the poller (tcp: a recv instead of an epoll_wait and then the recv; shm: its ring
     * only, not every ring). */
    void (*conn_poll)(void *conn);
    /* Optional, with conn_poll: waits keep spinning on this connection, one after the other (a
     * ping-pong); it may leave the poller's epoll set (wio_poller_park: the wake-up callback
     * costs the sender's system call) until the process next blocks. */
    void (*conn_park)(void *conn);
    /* After the last frame (BYE, IDLE_CLOSE ACK) is written: half-close; closed follows when
     * the peer closes too. */
    void (*conn_shutdown)(void *conn);
    /* Closes now; queued items complete with err; `closed` is not called. */
    void (*conn_close)(void *conn, int err);
    /* Like conn_close, for a connection that lost a simultaneous connect: queued items complete
     * with WAITIO_ERR_PEER at once, but the transport may finish the handshake quietly so that
     * the peer is not disturbed. */
    void (*conn_abandon)(void *conn);
    const char *(*conn_desc)(const void *conn);
    /* Optional zero-copy rendezvous (UCX's rkey + get): the sender describes a buffer in at
     * most WIO_RDV_DESC_MAX bytes (0: not offered for this message), the receiver reads it
     * through its connection (0 on success, else an errno value: DATA frames follow instead). */
    size_t (*rdv_pack)(void *conn, const void *buf, size_t len, uint8_t *out);
    int (*rdv_get)(void *conn, const uint8_t *desc, size_t desc_len, void *dst, size_t len);
    /* Optional, with rdv_pack: what the transport started for a descriptor it packed (ucx:
     * UCX's own rendezvous of the buffer, posted at once) ends. rdv_finish: the sender got the
     * CTS; when it returns, nothing the transport started can still read the buffer (0), or the
     * connection must fail (an errno value). rdv_decline: the receiver will not read desc
     * (truncation): the transport lets go of what it holds for it. */
    int (*rdv_finish)(void *conn, const uint8_t *desc, size_t desc_len);
    void (*rdv_decline)(void *conn, const uint8_t *desc, size_t desc_len);
    /* Optional one-sided single copy (src/rma): reads (write = 0) or writes len bytes at addr in
     * the peer's memory, under the same rules as rdv_get. 0, or an errno value: the one-sided
     * layer then sends frames instead. */
    int (*rma_copy)(void *conn, int write, uint64_t remote_addr, void *local, size_t len);
    /* Optional one-sided over RDMA (see wio_rdma_op above). rdma_reg: registers exactly
     * [addr, addr + len) for remote access by the peers, *reg its handle, its packed remote key
     * written to key (at most cap bytes, *key_len); 0 or an errno value. rdma_rkey: a peer's
     * packed key as a handle for operations on conn (and on later connections to that same
     * peer); rdma_rkey_free and rdma_dereg take the transport's context because the connection
     * may be gone. rdma_post: 0 posted (op->done follows), 1 complete at once (done is not
     * called), 2 complete at once by a load/store on the peer's part mapped here, else an errno
     * value (ENOTSUP: not on this connection) and nothing was started.
     * rdma_flush: every operation posted on conn before it is complete at the target (0:
     * done(arg, err) follows; 1: nothing to wait for; else an errno value). rdma_fence: operations
     * posted after it are applied after those posted before, on every connection (0, or an errno
     * value: then flush instead). */
    /* rdma_reg's flags: WIO_RDMA_REG_OWNED — [addr, addr + len) is fresh (all zero, untouched by
     * any peer), page-aligned, anonymous private memory the library mapped itself: the transport
     * may put memory of its own at that address (peers on this host then map it and reach it
     * with loads and stores, rdma_post's 2); after rdma_dereg the range is again private memory
     * (its contents lost), so that its owner unmaps it as before. */
    int (*rdma_reg)(void *tp, void *addr, size_t len, unsigned flags, void **reg, uint8_t *key, size_t cap,
                    size_t *key_len);
    void (*rdma_dereg)(void *tp, void *reg);
    int (*rdma_rkey)(void *conn, const uint8_t *key, size_t key_len, void **rkey);
    void (*rdma_rkey_free)(void *tp, void *rkey);
    int (*rdma_post)(void *conn, wio_rdma_op *op);
    int (*rdma_flush)(void *conn, void (*done)(void *arg, int err), void *arg);
    int (*rdma_fence)(void *tp);
    /* Counters for waitio-info and finalize's debug line, may be NULL. */
    void (*stats)(void *tp, char *buf, size_t cap);
    void (*close)(void *tp);
} wio_transport_ops;

/* transports.c: every transport of this build, in the default order of preference. */
extern const wio_transport_ops *const wio_transports[];
const wio_transport_ops *wio_transport_find(const char *name);
#ifdef WAITIO_HAVE_UCX
/* ucx_sym.c: NULL when UCX's library loads (loading it), else why not. WAITIO_COMM_TYPE=hybrid
 * asks before it lists ucx: UCX is used there when it is available, not required. */
const char *wio_ucx_load_error(void);
#endif

#endif
