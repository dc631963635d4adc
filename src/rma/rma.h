/*
 * rma.h — the one-sided layer's internal state (waitio_rma.h is its API; docs/one-sided.md and
 * docs/protocol.md "One-sided" describe the design). Files of src/rma/:
 *   rma.c       the layer's state per engine, its configuration, the engine hooks
 *   window.c    windows: the table, shared heap segments, the executable's data segment, the
 *               symmetric allocator, the one-sided world group
 *   am.c        active messages: operations sent as RMA frames, served by the target, replies
 *   atomic.c    the atomic operations on a word, one implementation for every path
 *   rpc.c       remote procedure call handlers and the calls waiting to run
 *   progress.c  the progress thread
 *   future.c    futures (then, when_all), non-blocking collectives, distributed objects
 *   api.c       the public functions: argument checks and the choice of path per target
 *   rdma.c      one-sided over the transport's RDMA (ucx): registration, key exchange, operations
 */
#ifndef WIO_RMA_H
#define WIO_RMA_H

#include <stdint.h>
#include "waitio_rma.h"
#include "core/engine.h"
#include "gpu/gpu.h"

/* Operations carried in an RMA frame (low byte of the header's tag); see docs/protocol.md. */
enum wio_rma_op {
    WIO_RMA_PUT = 1,   /* gid = window, aux = offset, payload = data; no reply */
    WIO_RMA_GET = 2,   /* gid = window, aux = offset, src = length; reply = the data */
    WIO_RMA_AMO = 3,   /* tag bits 8-15 type, 16-23 op; payload = operand [, compare]; reply if id */
    WIO_RMA_FLUSH = 4, /* reply once every earlier frame of ours was applied (src = first error) */
    WIO_RMA_RPC = 5,   /* gid = caller's group, src = handler id, aux = reply capacity; payload = args */
    WIO_RMA_OP_MAX_
};

enum wio_win_kind { WIO_WIN_HEAP = 1, WIO_WIN_USER = 2, WIO_WIN_DATA = 3 };

/* One member of a window, as this process sees it. */
typedef struct wio_win_member {
    uint32_t pid;            /* its process id */
    uint32_t wid;            /* the window's id in that process (what frames name) */
    uint64_t addr;           /* its part's address in its own process (single copy) */
    uint64_t size;           /* its part's size */
    uint8_t *ptr;            /* its part mapped here (heap on this host; this process), or NULL */
    int same_image;          /* data window: it runs the same executable */
    int same_host;           /* reachable by single copy when allowed */
    int device;              /* its part is device (GPU) memory: frames only (docs/one-sided.md),
                              * unless opened here through CUDA IPC (ipc) for put and get */
    int ipc;                 /* its device part is reachable through CUDA IPC (one host): ipc_h,
                              * ipc_off; looked up per operation (gpu.h's cache may close it) */
    wio_gpu_ipc_handle ipc_h;
    uint64_t ipc_off;
    /* RDMA (rdma.c): its part's address and packed remote key (rkey_len 0: none, frames), our
     * transport's handle for that key (made on first use) */
    uint64_t rdma_addr;
    uint8_t *rkey_packed;
    size_t rkey_len;
    void *rkey;
} wio_win_member;

typedef struct wio_block {
    size_t off, size;
    int used;
} wio_block;

struct waitio_win {
    struct wio_rma *rma;
    wio_group *g;
    uint32_t id;             /* slot | generation << 16 */
    int kind;
    uint8_t *base;           /* this member's part */
    size_t size;
    wio_win_member *m;       /* by group rank */
    uint8_t *allowed;        /* bitmap over process ids: the members (frames from others refused) */
    void *map;               /* heap: the shared segment (or private mapping) */
    size_t map_len;
    int served;              /* some member reaches this one through frames */
    uint32_t replies;        /* replies borrowing this part's memory, not yet written */
    uint32_t writers;        /* PUT frames being read into this part now (at most one per peer) */
    uint64_t progress;       /* reply pieces written and PUTs finished: a free waits while it moves */
    int retired;             /* left the table while a transfer used it: destroyed after the last */
    wio_block *blocks;       /* symmetric allocator: the part cut into blocks, by offset */
    size_t nblocks, cap_blocks;
    void *rdma_reg;          /* this part registered with the RDMA transport (rdma.c), or NULL */
    int map_private;         /* map is fresh anonymous private memory of this window alone (rdma.c) */
    int device;              /* this part is device memory: the CPU never touches it (gpu.h) */
    int device_owned;        /* ... allocated by the window (wio_gpu_free at destroy) */
    int ipc_exported;        /* ... offered to this host's members through CUDA IPC */
    int ipc_imports;         /* some member's device part is reached here through CUDA IPC */
};

/* What this process knows about one peer (allocated on first use). */
typedef struct wio_rma_peer {
    /* as origin */
    uint32_t inflight;       /* our operations waiting for its reply */
    int dirty;               /* frames without reply sent since the last flush */
    int rdma_dirty;          /* RDMA operations posted since the last RDMA flush (rdma.c) */
    uint32_t rdma_inflight;  /* RDMA operations whose completion has not come yet */
    int rdma_err;            /* first error of an RDMA operation without request, since a flush */
    /* as target: what it makes this process hold (replies queued, calls waiting to run), capped
     * by count (TARGET_MAX_QUEUED) and bytes (WAITIO_RMA_MAX_QUEUED), see am.c */
    uint32_t queued;
    size_t queued_bytes;
    int over;                /* it went over the caps: its connection is being dropped */
    struct waitio_win *rx_win; /* the window the PUT being received from it is read into */
    int err;                 /* first refused operation without reply since its last flush */
    uint64_t err_off, err_len;
    uint32_t err_win;
    /* the frame being received from it */
    uint8_t rx_small[16];    /* atomic operands */
    struct wio_rpc_call *rx_call;
    int rx_skip;             /* the frame's payload is discarded (refused) */
    uint8_t *rx_stage;       /* a PUT into device memory is read here first (chunk bytes), then */
    size_t rx_stage_cap;     /* copied by the GPU at the frame's end (am.c) */
} wio_rma_peer;

typedef struct wio_rpc_entry {
    waitio_rpc_handler_t fn;
    void *user;
    unsigned flags;          /* WAITIO_RPC_IN_CALLER */
} wio_rpc_entry;

typedef struct wio_rpc_call {
    wio_list link;
    uint32_t peer, gid, id;
    uint64_t origin_req;     /* 0: fire and forget (still acknowledged) */
    size_t reply_cap;
    size_t len;
    size_t charged;          /* counted against its origin's queue caps (wio_am_uncharge) */
    uint8_t *args;
} wio_rpc_call;

typedef struct wio_rma {
    wio_engine *e;
    struct waitio_win **wins;   /* by slot */
    uint16_t *gens;
    uint32_t nslots;
    wio_rma_peer **peers;       /* by process id */
    wio_group *world;           /* waitio_rma_world */
    /* origin: operations without a request of the caller's (nbi, ff) */
    wio_req_impl **implicit;
    uint64_t *implicit_ids;
    size_t nimplicit, cap_implicit;
    int implicit_err;           /* first error of a reaped implicit operation (quiet reports it) */
    /* rpc */
    wio_rpc_entry *handlers;    /* WAITIO_RPC_ID_MAX + 1 entries, allocated on first register */
    wio_list calls;             /* waiting to run */
    int in_handler;
    /* configuration */
    size_t chunk;               /* largest payload per frame */
    uint32_t max_inflight;      /* per target */
    size_t max_queued;          /* WAITIO_RMA_MAX_QUEUED: bytes held for one origin (am.c) */
    wio_list borrowed;          /* replies borrowing a window's memory (am.c), to find holders */
    int direct;                 /* WAITIO_RMA_DIRECT: shared heap and single copy on this host */
    int thread_mode;            /* WAITIO_PROGRESS_THREAD: 0, 1, -1 = auto */
    double thread_interval;     /* seconds the thread naps while the user is in the library */
    int origin_checks;          /* 0 only for tests of the target's checks */
    size_t page;
    struct wio_progress_thread *thread;
    uint64_t counter;           /* names of segments */
    /* counters for the finalize log: operations by path, requests served */
    uint64_t ops_mapped, ops_copy, ops_frames, served;
    uint64_t ops_rdma, ops_rdma_fallback; /* posted over RDMA; RDMA-capable but sent as frames */
    uint64_t ops_rdma_direct;             /* ... of ops_rdma: loads/stores on a peer's part UCX mapped here */
    uint64_t ops_ipc;           /* puts and gets copied by the GPU into a device part of this host */
    int rdma_fence_due;         /* RDMA operations posted since the last fence (rdma.c) */
    int rdma;                   /* WAITIO_RMA_RDMA: windows registered for RDMA (default 1) */
    struct wio_futs *futs;      /* futures and distributed objects (future.c), made on first use */
} wio_rma;

/* rma.c */
void wio_rma_attach(wio_engine *e);     /* at init (api.c) */
void wio_rma_finalize(wio_engine *e);   /* at finalize, before the engine's (api.c) */
void wio_rma_free(wio_engine *e);       /* after the engine's finalize (api.c) */
wio_rma *wio_rma_get(void);             /* the current engine's layer, or NULL (message set) */
wio_rma_peer *wio_rma_peer_get(wio_rma *r, uint32_t pid); /* NULL only on out-of-memory */
int wio_rma_wait(wio_rma *r, wio_req_impl *q);            /* waits, releases; its error */

/* window.c */
struct waitio_win *wio_win_lookup(wio_rma *r, uint32_t id, uint32_t pid);
/* A reply borrowing the window's memory was written (or dropped), a PUT read into it finished
 * (or was cut off): a retired window goes when its last transfer does. */
void wio_win_reply_done(struct waitio_win *w);
void wio_win_write_done(struct waitio_win *w);
/* Finalize: every window leaves the table (frames naming them are refused); memory that replies
 * still borrow stays mapped until wio_win_destroy_all, after the engine's finalize. */
void wio_win_retire_all(wio_rma *r);
void wio_win_destroy_all(wio_rma *r);
/* The address here of member m's device part opened through CUDA IPC (NULL: it cannot be opened
 * now, e.g. its process is gone; the operation then goes as frames). */
uint8_t *wio_win_ipc_ptr(const wio_win_member *m);
int wio_win_check_rank(struct waitio_win *w, int rank);
/* An access [off, off + len) of this process's part: inside it and, for the data window, clear
 * of the holes inside its range (sections that are not .data/.bss, objects copied from shared
 * libraries); the target checks every frame with it. touches_hole: the holes only. */
int wio_win_in_bounds(const struct waitio_win *w, uint64_t off, uint64_t len);
int wio_win_touches_hole(const struct waitio_win *w, uint64_t off, uint64_t len);
int wio_rma_world_group(wio_rma *r, wio_group **out);

/* am.c: origin side. Every function returns 0 or an error; with req, the operation's request
 * (kind WIO_REQ_RMA) is returned for the caller to wait on; without, the operation is implicit
 * (completed by flush / quiet). */
int wio_am_put(wio_rma *r, struct waitio_win *w, int rank, size_t off, const void *src, size_t len,
               wio_req_impl **req);
int wio_am_get(wio_rma *r, struct waitio_win *w, int rank, size_t off, void *dst, size_t len,
               wio_req_impl **req);
int wio_am_atomic(wio_rma *r, struct waitio_win *w, int rank, size_t off, int op, int type,
                  uint64_t operand, uint64_t compare, void *result, wio_req_impl **req);
int wio_am_rpc(wio_rma *r, wio_group *g, int rank, int id, const void *args, size_t len,
               void *reply, size_t reply_cap, wio_req_impl **req);
int wio_am_flush(wio_rma *r, uint32_t pid);     /* blocking round trip if pid is dirty */
int wio_am_quiet(wio_rma *r);                   /* every dirty target, every implicit operation */
int wio_am_fence(wio_rma *r);
/* Starts a FLUSH to pid if it is dirty (*out = its request, else NULL): it completes once every
 * earlier frame of ours was applied there (a put future's remote completion, future.c). */
int wio_am_flush_begin(wio_rma *r, uint32_t pid, wio_req_impl **out);
/* engine hooks */
int wio_am_frame_begin(void *ctx, uint32_t peer, const wio_frame_hdr *h, uint8_t **dest);
int wio_am_frame_end(void *ctx, uint32_t peer, const wio_frame_hdr *h);
void wio_am_peer_lost(wio_rma *r, uint32_t peer, int err);
/* Drops the connection of every process whose transfer still reads or writes w (a free that
 * waited WAITIO_PEER_TIMEOUT without any of them moving); each is logged. */
void wio_am_drop_holders(wio_rma *r, struct waitio_win *w);
/* A queued call left the queue (ran or was dropped): its bytes leave its origin's account. */
void wio_am_uncharge(wio_rma *r, uint32_t peer, size_t bytes);
/* target side, for rpc.c: sends a reply (payload copied if copy, else borrowed until written;
 * a malloc'ed payload given with owned = 1 is freed after) */
int wio_am_reply(wio_rma *r, uint32_t peer, uint64_t req_id, int op, int err, const void *payload,
                 size_t len, uint64_t aux0, int owned, struct waitio_win *borrow);

/* rdma.c: one-sided over the transport's RDMA (docs/one-sided.md, "One-sided over UCX").
 * Window creation (collective, after the window is made): registers this part, exchanges the
 * packed keys; 0 or a collective's error. Release: keys and registration go (idempotent). */
int wio_rdma_win_setup(wio_rma *r, struct waitio_win *w);
void wio_rdma_win_release(wio_rma *r, struct waitio_win *w);
/* Operations: WIO_RDMA_NOT_TAKEN when this one goes as frames (no key, no RDMA connection, an
 * atomic UCX cannot do), else as wio_am_*: 0 or an error, *req (NULL: implicit). */
#define WIO_RDMA_NOT_TAKEN (-1)
int wio_rdma_put(wio_rma *r, struct waitio_win *w, int rank, size_t off, const void *src, size_t len,
                 wio_req_impl **req);
int wio_rdma_get(wio_rma *r, struct waitio_win *w, int rank, size_t off, void *dst, size_t len,
                 wio_req_impl **req);
int wio_rdma_atomic(wio_rma *r, struct waitio_win *w, int rank, size_t off, int op, int type,
                    uint64_t operand, uint64_t compare, void *result, wio_req_impl **req);
/* Remote completion of our RDMA operations on pid (blocking), on every target (quiet); fence
 * orders them; flush_begin: a request completing at pid's flush (NULL: nothing to flush). */
int wio_rdma_flush(wio_rma *r, uint32_t pid);
int wio_rdma_quiet(wio_rma *r);
int wio_rdma_fence(wio_rma *r);
int wio_rdma_flush_begin(wio_rma *r, uint32_t pid, wio_req_impl **out);
/* pid has RDMA operations not known complete at the target (the paths must not overtake) */
int wio_rdma_pending(const wio_rma *r, uint32_t pid);

/* atomic.c */
size_t wio_amo_size(int type);
/* 0 or WAITIO_ERR_ARG when the op is not defined on the type */
int wio_amo_check(int op, int type);
int wio_amo_defined(int op, int type);  /* the same without a message (the target's check) */
/* Applies op atomically to the word at p; returns the old value (zero-extended). */
uint64_t wio_amo_apply(void *p, int op, int type, uint64_t operand, uint64_t compare);
/* The same on a word of device memory: copied in, applied, copied out (wio_gpu_copy). Atomic
 * with respect to every other WaitIO atomic on the word (they are all applied by its owner,
 * serialised by its progress), not to GPU kernels. 0 or WAITIO_ERR_DEVICE (message set). */
int wio_amo_apply_device(void *p, int op, int type, uint64_t operand, uint64_t compare, uint64_t *old);

/* rma.c: *device = whether [p, p+len) is device memory (len 0 or NULL: host); 0 or the error of
 * wio_gpu_mem_kind (a range across allocations: WAITIO_ERR_ARG, message set). */
int wio_rma_mem_device(const void *p, size_t len, int *device);

/* rpc.c */
void wio_rpc_deferred(void *ctx);            /* engine hook: runs waiting calls */
void wio_rpc_free_all(wio_rma *r);
int wio_rpc_has_handlers(const wio_rma *r);

/* future.c */
void wio_fut_progress(wio_rma *r);  /* notices completions, runs the callbacks that are due */
void wio_fut_free_all(wio_rma *r);  /* finalize: every future and object record goes */

/* progress.c */
int wio_progress_thread_start(wio_rma *r);
void wio_progress_thread_stop(wio_rma *r);
int wio_progress_thread_running(const wio_rma *r);
int wio_progress_thread_self(const wio_rma *r); /* the caller is the progress thread */
/* auto mode: a window that is served through frames, or a registered handler, starts it */
void wio_progress_thread_auto(wio_rma *r);

#endif
