/*
 * engine.h — the progress engine's state: the instance (address table, PB layout), peers,
 * requests and their state machine, matching queues, groups. One engine per process.
 */
#ifndef WIO_ENGINE_H
#define WIO_ENGINE_H

#include <stdint.h>
#include "core/auth.h"
#include "core/common.h"
#include "core/frame.h"
#include "core/list.h"
#include "core/poller.h"
#include "transport/transport.h"

/* The process's PB runs an MPI adapter on its whole PB, so it can take part in hierarchical
 * collectives (which are used only when every process of the group can). */
#define WIO_PROC_ADAPTER 0x01
/* The process records a trace (WAITIO_TRACE): the master measures its clock offset with it. */
#define WIO_PROC_TRACE 0x02
/* Its adapter can allreduce (the paired hierarchical allreduce) / broadcast without blocking
 * (the pipelined broadcast). A path is taken only when every process can take it: each
 * process's own adapter decides nothing alone, or separately launched PBs would disagree. */
#define WIO_PROC_ALLREDUCE 0x04
#define WIO_PROC_IBCAST 0x08
#define WIO_PROC_FLAGS (WIO_PROC_ADAPTER | WIO_PROC_TRACE | WIO_PROC_ALLREDUCE | WIO_PROC_IBCAST)

enum wio_peer_state {
    WIO_PEER_IDLE,        /* no connection yet */
    WIO_PEER_CONNECTING,  /* our connection or theirs is being set up */
    WIO_PEER_OPEN,
    WIO_PEER_CLOSING,     /* we or they finalized; BYE exchanged or under way */
    WIO_PEER_IDLE_CLOSING, /* an idle connection is being closed to stay under the cap */
    WIO_PEER_FAILED,      /* connection lost; err says why */
};

/* A transport of this process: its row of the table and the context its open returned. */
typedef struct wio_tp_slot {
    const wio_transport_ops *ops;
    void *ctx;
    struct wio_engine *engine;   /* the ctx of the callbacks this transport makes */
} wio_tp_slot;

#define WIO_MAX_TRANSPORTS 4

struct wio_peer;
struct wio_engine;

/* One connection of a peer: the `user` object its transport calls back with. A peer has a main
 * link (every frame) and, in hybrid mode, a bulk link that carries rendezvous DATA only. Frames
 * of both may interleave, so the payload being received belongs to the link, not the peer. */
typedef struct wio_link {
    struct wio_peer *peer;
    const wio_tp_slot *tp;       /* the transport of conn (NULL while none) */
    void *conn;                  /* the transport's connection object */
    int outgoing;                /* conn is our own connection (not an accepted one) */
    int connecting;              /* inside the transport's connect(): no callback may name us */
    int bulk;
    int open;                    /* bulk: frames may be sent (the main link uses peer->state) */
    unsigned tried;              /* transports tried for this connect (bit per slot) */
    unsigned drops;              /* connects the peer dropped before its verdict, in a row */
    unsigned spin_wins;          /* waits on it in a row that ended while spinning (conn_park) */
    struct wio_req_impl *rx_req; /* where the payload of the frame being received goes */
    struct wio_unexp *rx_unexp;
    uint8_t rx_rdv[WIO_RDV_DESC_MAX]; /* the direct-read descriptor of the RTS being received */
} wio_link;

typedef struct wio_peer {
    struct wio_engine *engine;
    uint32_t id;
    int state;
    int err;                     /* WAITIO_ERR_PEER or WAITIO_ERR_PEER_FINALIZED once gone */
    char why[160];               /* and why, for waitio_error_message() */
    wio_link main;
    wio_link bulk;               /* hybrid: large messages' DATA through another transport */
    wio_list pending;            /* items queued before the connection opened */
    wio_list bulk_pending;       /* DATA items queued before the bulk connection opened */
    wio_list held;               /* new messages waiting for credit (in order) */
    int64_t send_credit;         /* eager bytes we may still send to this peer */
    int64_t recv_credit;         /* eager bytes the peer may still send us (checked) */
    uint32_t credit_owed;        /* bytes freed here, not yet returned to the peer */
    uint32_t eager_limit;        /* min(ours, the peer's) */
    int bye_sent, bye_received;
    int credit_item_busy;
    wio_send_item credit_item;
    wio_send_item bye_item;
    double connect_retry_at;     /* after a lost simultaneous-connect race */
    uint64_t last_used;          /* use_tick of the last frame in or out: least recently used closes first */
    int idle_closed;             /* its connection was closed for the cap: it reconnects to send */
    double idle_closed_at;       /* when; a receive waiting on it longer probes it (reconnects) */
    int idle_close_heard;        /* closing it, we read the peer's last frame on it (its IDLE_CLOSE) */
    int connect_back;            /* we refused its connect while closing: we connect once closed */
    wio_send_item close_item;
    /* counted always (message numbers of traces, WAITIO_STATS): messages to and from this peer;
     * the n-th message we send it is its message number n, matched by the receiver's count */
    uint64_t msgs_out, bytes_out, msgs_in, bytes_in;
    uint64_t wait_ns;            /* time waited on requests naming it (while tracing or WAITIO_STATS) */
    const char *tp_name;         /* the transport of its last main connection */
} wio_peer;

/* WIO_REQ_RMA: a one-sided operation (src/rma) waiting for its frames to go out or its reply;
 * it names its target in peer_id, so a lost peer completes it like a send or receive. */
enum wio_req_kind { WIO_REQ_SEND = 1, WIO_REQ_RECV = 2, WIO_REQ_RMA = 3 };

/* Request states; see docs/protocol.md for the transitions. */
enum wio_req_state {
    WIO_RS_FREE = 0,
    WIO_RS_SEND_EAGER,     /* EAGER frame queued or being written */
    WIO_RS_SEND_RTS,       /* RTS queued or written, waiting for CTS */
    WIO_RS_SEND_DATA,      /* DATA frames being written */
    WIO_RS_RECV_POSTED,    /* in the posted queue */
    WIO_RS_RECV_EAGER,     /* matched an arriving EAGER frame; payload streaming in */
    WIO_RS_RECV_UNEXP,     /* matched an unexpected EAGER message still arriving */
    WIO_RS_RECV_RDV,       /* CTS sent; DATA frames streaming in */
    WIO_RS_DONE,
    WIO_RS_RMA,            /* one-sided operation in flight (src/rma) */
};

struct waitio_group;
struct wio_unexp;

typedef struct wio_req_impl {
    uint32_t slot, gen;
    uint8_t kind, state;
    wio_list link;           /* posted queue (match.c) */
    uint64_t post_seq;       /* posted receives: order of posting */
    struct waitio_group *grp;
    uint32_t gid;
    int rank;                /* peer's group rank, or WAITIO_ANY_SOURCE */
    uint32_t peer_id;        /* peer's process id, or WIO_ID_BOOT for any */
    uint64_t tag;
    uint8_t *buf;
    size_t cap;              /* receive buffer size / send length */
    size_t msg_len, received;
    uint64_t remote_id;      /* the peer's request id (rendezvous) */
    struct wio_unexp *unexp; /* WIO_RS_RECV_UNEXP */
    int cts_trunc;
    uint8_t rdv_offered;     /* send: the RTS carries a direct-read descriptor */
    uint8_t rdv_done;        /* receive: the data was read from the sender's memory */
    uint8_t rdv_len;         /* send: that descriptor's length */
    uint8_t rdv_wire[WIO_RDV_DESC_MAX]; /* send: that descriptor, encoded */
    waitio_status_t status;
    uint64_t tr_msg;         /* its message number between the pair (trace.h) */
    wio_send_item item;      /* EAGER / RTS / DATA / CTS frame */
    void *ext;               /* WIO_REQ_RMA: the one-sided layer's state of the operation */
    /* device (GPU) memory (docs/transports.md, "GPU memory"): the user's buffer is gpu_user and
     * buf is a host staging buffer (gpu_bounce) — or, for WIO_GPU_SEND_IPC, the device buffer
     * itself, offered through CUDA IPC and staged only if the receiver cannot map it */
    uint8_t gpu;             /* WIO_GPU_*: 0 for host memory */
    void *gpu_user;
    void *gpu_bounce;
    size_t gpu_bounce_len;
    struct wio_gpu_pipe *gpu_pipe; /* a device message staged chunk by chunk (src/gpu/pipeline.h) */
} wio_req_impl;

enum {
    WIO_GPU_NONE = 0,
    WIO_GPU_SEND_STAGED,     /* the message was copied to gpu_bounce at isend */
    WIO_GPU_SEND_IPC,        /* rendezvous offering a CUDA IPC descriptor (rdv_wire) */
    WIO_GPU_RECV,            /* received into gpu_bounce, copied to gpu_user at completion */
    WIO_GPU_RECV_DIRECT,     /* copied by CUDA IPC straight into gpu_user: nothing left to copy */
};
/* Completes a receive into device memory: copies what arrived in its staging buffer to the
 * user's device buffer (request.c; engine.c's CUDA IPC path). */
void wio_req_gpu_finish(wio_req_impl *r);

enum wio_unexp_kind { WIO_UX_EAGER = 1, WIO_UX_RTS = 2 };

/* Unexpected eager messages of at most this many bytes are held in their entry itself; entries
 * are recycled through a free list (at most WIO_UNEXP_FREE_MAX kept), so that small unexpected
 * messages cost no allocation on the data path. */
#define WIO_UNEXP_INLINE 256u
#define WIO_UNEXP_FREE_MAX 1024u

/* A message that arrived before a matching receive was posted. */
typedef struct wio_unexp {
    wio_list link;           /* all unexpected messages, in arrival order */
    wio_list blink;          /* its key's bucket (match.c) */
    int kind;
    uint32_t peer_id, gid, src;
    uint64_t tag;
    uint64_t len;
    uint64_t remote_id;      /* RTS: the sender's request id */
    uint64_t msg;            /* its message number from that peer (trace.h) */
    uint8_t rdv_len;         /* RTS: the sender's direct-read descriptor (0: none) */
    uint8_t rdv[WIO_RDV_DESC_MAX];
    uint8_t *data;           /* EAGER: `small`, or allocated for a larger payload */
    int complete;            /* EAGER payload fully arrived */
    wio_req_impl *waiting;   /* receive matched while the payload was still arriving */
    uint8_t small[WIO_UNEXP_INLINE];
} wio_unexp;

/* The matching queues (match.c): posted receives and unexpected messages, hashed by key. The
 * unexpected messages' table grows (4x) past two entries per bucket, up to 2^WIO_MQ_BITS_MAX
 * buckets, and returns to the embedded one when the queue empties. */
#define WIO_MQ_BITS 8
#define WIO_MQ_BUCKETS (1u << WIO_MQ_BITS)
#define WIO_MQ_BITS_MAX 20
typedef struct wio_mq {
    wio_list posted[WIO_MQ_BUCKETS];       /* receives without wildcards, by key */
    wio_list posted_wild;                  /* receives with WAITIO_ANY_SOURCE or WAITIO_ANY_TAG */
    wio_list unexpected;                   /* every unexpected message, in arrival order */
    wio_list unexp_bucket[WIO_MQ_BUCKETS]; /* the same, by key (while unexp_big is NULL) */
    wio_list *unexp_big;                   /* the grown table of 2^unexp_bits buckets, or NULL */
    unsigned unexp_bits;
    size_t unexp_count;
    uint64_t post_seq;
} wio_mq;

typedef struct waitio_group {
    wio_list link;
    uint32_t gid;
    int size;
    int my_rank;             /* WAITIO_UNDEFINED if not a member */
    uint32_t *members;       /* group rank -> process id */
    uint64_t coll_seq;       /* collectives started on this group: their tag */
} wio_group;

/* ---- one-sided layer hooks (src/rma) ----
 * The engine hands the one-sided layer the frames of types WIO_FT_RMA and WIO_FT_RMA_REPLY
 * (their headers are validated like every frame's; everything else in them is the layer's to
 * check), tells it when a peer is lost, and runs its deferred work after a progress round. */
typedef struct wio_engine_ext {
    int (*frame_begin)(void *ctx, uint32_t peer_id, const wio_frame_hdr *h, uint8_t **dest);
    int (*frame_end)(void *ctx, uint32_t peer_id, const wio_frame_hdr *h);
    void (*peer_lost)(void *ctx, uint32_t peer_id, int err);
    void (*deferred)(void *ctx);  /* runs after a progress round while e->ext_work is set */
} wio_engine_ext;

typedef struct wio_engine {
    wio_config cfg;
    wio_key key;
    uint32_t my_id;
    int npb;
    int *nprocs;             /* per PB */
    uint32_t *pb_offset;     /* first process id of each PB */
    uint32_t nprocs_total;
    wio_proc *table;         /* indexed by process id */
    wio_peer **peers;        /* created on first use */
    int oversubscribed;
    int one_host;            /* every process of the instance runs on this host */
    int all_shm;             /* every process offers shared memory (from the table: all agree) */
    int all_adapters;        /* every process's PB runs an MPI adapter (WIO_PROC_ADAPTER) */
    int all_allreduce;       /* ... whose adapter has allreduce (WIO_PROC_ALLREDUCE) */
    int all_ibcast;          /* ... and ibcast/test/wait (WIO_PROC_IBCAST) */
    size_t eager_credit;     /* granted to each peer (wio_config_credit_per_peer) */
    uint32_t max_conns;      /* open connections above which idle ones are closed */
    wio_poller *poller;
    wio_tp_slot tps[WIO_MAX_TRANSPORTS]; /* WAITIO_TRANSPORTS, in order of preference */
    int ntps;
    int bulk_tp;             /* hybrid: the slot for large messages' DATA, -1: none */
    size_t bulk_threshold;   /* hybrid: messages of at least this size use it */
    uint64_t use_tick;       /* counts frames, orders peers by last use */
    unsigned progress_calls; /* polling progress calls: the periodic checks run every 64th */
    double next_check;       /* when the periodic checks are due next */
    unsigned idle_waits;     /* waits on requests already complete (see waitio_wait) */
    int finalizing;
    double init_seconds;
    wio_proc self;           /* our own entry before the table arrives */
    struct wio_stream_ctx *boot_streams; /* the start-up rendezvous's connections (boot.c) */
    /* requests */
    wio_req_impl **reqs;
    uint32_t nreqs, reqs_cap;
    uint32_t *free_slots;
    uint32_t nfree;
    /* matching */
    wio_mq mq;
    size_t unexpected_bytes;
    wio_list unexp_free;     /* recycled entries (WIO_UNEXP_FREE_MAX at most) */
    unsigned unexp_nfree;
    /* groups */
    wio_list groups;
    /* counters */
    uint64_t frames_in, frames_out;
    uint64_t single_copies, single_copy_bytes;
    uint64_t gpu_ipc_copies, gpu_staged; /* device messages: through CUDA IPC / host staging */
    int gpu_ipc;             /* WAITIO_GPU_IPC: offer device buffers through CUDA IPC on one host */
    uint64_t rdv_main, rdv_bulk;     /* rendezvous data sent on the main link / the bulk link */
    /* one-sided layer (src/rma), attached at init */
    const wio_engine_ext *ext;
    void *ext_ctx;
    int ext_work;                    /* ext->deferred has work (not while it runs) */
} wio_engine;

/* The engine of the public API (waitio_init's); the engine itself never uses it. */
extern wio_engine *wio_engine_current;
extern const wio_tp_handler wio_engine_tp_handler;

/* engine.c */
int wio_engine_start(wio_engine *e);   /* after the table is known */
int wio_engine_progress(wio_engine *e, int timeout_ms);
/* Progresses until ready(arg) is nonzero or the deadline (<= 0: none) passes: spins for
 * cfg.spin_us, then yields for cfg.yield_us, then blocks in the transport's poll. */
int wio_engine_wait_until(wio_engine *e, int (*ready)(void *), void *arg, double deadline);
/* The same for one request: while spinning, the connection to its peer is read directly when
 * its transport allows (conn_poll). */
int wio_engine_wait_req(wio_engine *e, wio_req_impl *r, double deadline);
/* For waits that poll their own condition (waitio_wait_until): sched_yield, and a blocking
 * progress round of up to timeout_ms; in the "multiple" thread level both give the API lock
 * away meanwhile (core/api_lock.h), as wio_engine_wait_until does between its rounds. */
void wio_engine_yield(wio_engine *e);
int wio_engine_pause(wio_engine *e, int timeout_ms);
/* Parses WAITIO_TRANSPORTS / WAITIO_COMM_TYPE into the list of transports to open. */
int wio_engine_check_transports(wio_engine *e);
/* Creates the poller and opens the transports (their listeners) before start-up; fills their
 * parts of e->self (port, token, transports). */
int wio_engine_open(wio_engine *e);
/* Closes the transports and the poller (also after a failed start-up). */
void wio_engine_close(wio_engine *e);
int wio_engine_finalize(wio_engine *e);
void wio_engine_free(wio_engine *e);
wio_peer *wio_engine_peer(wio_engine *e, uint32_t id);  /* NULL only on out-of-memory */
/* ctx selects a matching context on the group: WIO_CTX_USER for the API's point-to-point,
 * WIO_CTX_COLL for collectives, so that the two never match each other's messages. */
#define WIO_CTX_USER 0u
#define WIO_CTX_COLL 0x80000000u
/* *out is the request to wait for, or NULL when the message went at once (a small message
 * written by the transport's send_now): then nothing is left to wait for and buf is free. */
int wio_engine_isend(wio_engine *e, wio_group *g, int dst, const void *buf, size_t len,
                     uint64_t tag, uint32_t ctx, wio_req_impl **out);
int wio_engine_irecv(wio_engine *e, wio_group *g, int src, void *buf, size_t len, uint64_t tag,
                     uint32_t ctx, wio_req_impl **out);
int wio_engine_cancel(wio_engine *e, wio_req_impl *r);
/* For the one-sided layer (src/rma): queues a frame for process peer_id on its main connection,
 * connecting first if needed; the item's done callback reports its fate. */
void wio_engine_send_frame(wio_engine *e, uint32_t peer_id, wio_send_item *it);
/* Closes the connections to process peer_id now, as if it were lost (its requests fail, its
 * queued frames are dropped): the one-sided layer's answer to a peer that abuses it. */
void wio_engine_drop_peer(wio_engine *e, uint32_t peer_id, const char *why);
/* 0 while process peer_id can be talked to, else the error its requests fail with. */
int wio_engine_peer_error(const wio_engine *e, uint32_t peer_id);
/* Direct access to process peer_id's memory through its open connection's transport (shm's
 * rma_copy); 0, or an errno value (ENOTCONN: no open connection that can) — then use frames. */
int wio_engine_rma_copy(wio_engine *e, uint32_t peer_id, int write, uint64_t addr, void *local, size_t len);
/* One-sided over RDMA (transport.h's rdma_* ops; src/rma/rdma.c): registration and keys through
 * the first transport of this process that offers them (ENOTSUP: none); an operation or flush on
 * process peer_id's open main connection when its transport offers them (*rkey: the handle for
 * that member's packed key, made on first use), else ENOTCONN — then frames. */
int wio_engine_rdma_reg(wio_engine *e, void *addr, size_t len, unsigned flags, void **reg, uint8_t *key,
                        size_t cap, size_t *key_len);
void wio_engine_rdma_dereg(wio_engine *e, void *reg);
void wio_engine_rdma_rkey_free(wio_engine *e, void *rkey);
int wio_engine_rdma_post(wio_engine *e, uint32_t peer_id, const uint8_t *key, size_t key_len, void **rkey,
                         wio_rdma_op *op);
int wio_engine_rdma_flush(wio_engine *e, uint32_t peer_id, void (*done)(void *arg, int err), void *arg);
int wio_engine_rdma_fence(wio_engine *e);
/* "PB 1 rank 0 (process 3)" */
void wio_describe_process(const wio_engine *e, uint32_t id, char *buf, size_t cap);
/* The PB of process id and its rank in that PB. */
void wio_engine_locate(const wio_engine *e, uint32_t id, int *pb, int *rank);
/* Sets waitio_error_message() to explain why request r completed with its error. */
void wio_engine_explain(wio_engine *e, const wio_req_impl *r);

/* request.c */
wio_req_impl *wio_req_alloc(wio_engine *e, int kind);
void wio_req_release(wio_engine *e, wio_req_impl *r);
wio_req_impl *wio_req_lookup(wio_engine *e, uint64_t id);
uint64_t wio_req_id(const wio_req_impl *r);
void wio_req_complete(wio_req_impl *r, int err);
void wio_req_pool_free(wio_engine *e);
/* api.c: where a user request stands, changing nothing (the MPI layer's Testall must leave
 * every request alone unless all are complete): 1 complete, 0 pending, -1 inactive. */
int wio_req_user_state(wio_engine *e, const waitio_req_t *req);

/* match.c: MPI matching rules over the posted and unexpected queues */
void wio_mq_init(wio_mq *q);
void wio_mq_fini(wio_mq *q);                    /* frees a grown table; the entries are the caller's */
int wio_match(const wio_req_impl *r, uint32_t peer_id, uint32_t gid, uint32_t src, uint64_t tag);
void wio_mq_post(wio_mq *q, wio_req_impl *r);   /* a posted receive leaves by wio_list_remove(&r->link) */
/* Removes and returns the first posted receive that matches (sets its peer and status). */
wio_req_impl *wio_mq_take_posted(wio_mq *q, uint32_t peer_id, uint32_t gid, uint32_t src, uint64_t tag);
/* Calls fn on every posted receive until it returns nonzero (fn may remove r). */
void wio_mq_foreach_posted(wio_mq *q, int (*fn)(wio_req_impl *r, void *arg), void *arg);
void wio_mq_add_unexpected(wio_mq *q, wio_unexp *ux);
void wio_mq_remove_unexpected(wio_mq *q, wio_unexp *ux);
/* Removes and returns the oldest unexpected message that r matches. */
wio_unexp *wio_mq_take_unexpected(wio_mq *q, const wio_req_impl *r);
/* The oldest unexpected message that r matches, left in the queue (probe.c). */
wio_unexp *wio_mq_peek_unexpected(wio_mq *q, const wio_req_impl *r);

/* group.c */
wio_group *wio_group_find(wio_engine *e, uint32_t gid);
void wio_groups_free(wio_engine *e);
int wio_group_create_func(wio_engine *e, int gid, waitio_filter_func_t func[], const int order[],
                          wio_group **out);
int wio_group_create_list(wio_engine *e, int gid, int *rankap[], const int order[], wio_group **out);
void wio_group_destroy(wio_engine *e, wio_group *g);
/* A group of the processes members[0..n) in that order (group rank i = members[i]); for the
 * MPI layer's communicators, whose ranks follow MPI's split keys rather than PB order. */
int wio_group_create_members(wio_engine *e, uint32_t gid, const uint32_t *members, int n,
                             wio_group **out);
/* The group of the PB heads (each PB's process of local rank 0), in PB order: the hierarchical
 * collectives' and the collective tuner's exchanges between PBs. */
int wio_group_create_heads(wio_engine *e, uint32_t gid, wio_group **out);
/* 1 when g is every process of every PB, PB by PB in PBID order (the universe's layout). */
int wio_group_is_universe(const wio_engine *e, const wio_group *g);

/* adapter.c: the registered MPI adapter (waitio_adapter.h), or NULL */
struct waitio_adapter_ops;
const struct waitio_adapter_ops *wio_adapter(void);
/* Lets a linked adapter library register itself; waitio_init calls this first (flags:
 * WAITIO_PROBE_JOB when no instance variable is set). Fails when the adapter refuses. */
int wio_adapter_probe(int flags, double timeout);
/* waitio_finalize: lets an adapter that initialised MPI finalize it. */
void wio_adapter_finalize(void);

/* boot/boot.c: start-up rendezvous; fills npb, nprocs, pb_offset, table, my_id */
int wio_boot_run(wio_engine *e, double timeout);
/* The address and host identity this process advertises (e->self), before transports open. */
int wio_boot_self_address(wio_engine *e);

#endif
