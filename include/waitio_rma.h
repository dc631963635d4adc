/*
 * waitio_rma.h — one-sided (PGAS) communication of WaitIO (SPEC §12): memory windows exposed by a
 * group, put/get, remote atomics, put-with-signal and waiting on local words, remote procedure
 * calls with futures, and the completion calls flush / quiet / fence. docs/one-sided.md explains
 * the model; the OpenSHMEM layer (shmem.h, libwaitio_shmem) is built on this API.
 *
 * Addressing: (window, group rank of the target, byte offset in the target's part of the window).
 * Paths, chosen per target and invisible to the caller:
 *   - a member on this host, window from waitio_win_allocate: its part is mapped here, so put/get
 *     are memcpy and atomics are CPU atomics (waitio_win_ptr gives the pointer);
 *   - a member on this host, other windows: single copy (process_vm_readv/writev) where allowed
 *     (WAITIO_SINGLE_COPY), else frames;
 *   - any other member: frames over the engine (tcp, shm rings, files), served by the target's
 *     progress — its own WaitIO calls or its progress thread (WAITIO_PROGRESS_THREAD);
 *   - a part in device memory (WAITIO_WIN_DEVICE): put/get by one GPU copy through CUDA IPC from
 *     a member of this host, else frames; atomics always served by its owner.
 * Every access is checked against the target's part of the window: by the origin, and for
 * frames again by the target before it touches memory (WAITIO_ERR_BOUNDS).
 *
 * Completion: a blocking put returns when the source buffer may be reused (local completion); a
 * non-blocking one completes its request then. waitio_flush(win, rank) returns when every earlier
 * operation of this process on that target (any window) is complete at the target, waitio_quiet
 * when that holds for every target; waitio_fence orders earlier puts, atomics and signals to each
 * target before later ones. Gets, fetching atomics and calls complete when their result is here.
 * An operation on a target that is lost fails with its error (WAITIO_ERR_PEER...) in bounded time.
 *
 * Threading: as waitio.h ("serialized", or "multiple" after waitio_thread_multiple: then any
 * threads at once, and waitio_quiet / waitio_fence cover the operations of every thread of the
 * process issued before the call). With a progress thread running or in "multiple", every entry
 * point takes one process-wide lock; blocking waits in "multiple" give it away between rounds.
 */
#ifndef WAITIO_RMA_H
#define WAITIO_RMA_H

#include "waitio.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct waitio_win *waitio_win_t;

/* ---- windows (collective over the group: every member calls, in the same order) ----------- */

/* Allocates `size` bytes on every member (the same size everywhere); *base is this member's
 * part, zero-filled. On a host, the parts of the members there share one memory segment. A size
 * that overflows (larger than PTRDIFF_MAX once rounded to pages) fails with WAITIO_ERR_ARG on
 * every member, as does a user window (waitio_win_create) whose part wraps around. */
WAITIO_API int waitio_win_allocate(waitio_group_t grp, size_t size, waitio_win_t *win, void **base);
/* The same with flags (every member passes the same). WAITIO_WIN_DEVICE: each member's part is
 * device memory on its current CUDA device (cuMemAlloc, zero-filled; *base is a device pointer);
 * WAITIO_ERR_DEVICE on every member when one has no CUDA driver or device. Put, get and atomics
 * work on it as on host memory, from host or device buffers; the owner applies them with the
 * GPU's copies, never CPU loads (docs/one-sided.md, "Device memory"). A window made with
 * waitio_win_create over device memory is detected and served the same way. */
#define WAITIO_WIN_DEVICE 0x1u
WAITIO_API int waitio_win_allocate_ex(waitio_group_t grp, size_t size, unsigned flags, waitio_win_t *win,
                                      void **base);
/* Exposes memory the caller owns (base, size may differ per member; size 0 exposes nothing). */
WAITIO_API int waitio_win_create(waitio_group_t grp, void *base, size_t size, waitio_win_t *win);
/* Exposes the executable's own global and static data — its .data and .bss, never the GOT or
 * other loader data, nor objects copied from shared libraries (docs/one-sided.md gives the exact
 * range) — readable and writable by every member: a local address of such a variable, as an
 * offset (waitio_win_offset), names the same variable on every member running the same
 * executable (PIE or not). Members running another executable refuse it. */
WAITIO_API int waitio_win_create_data(waitio_group_t grp, waitio_win_t *win);
/* Completes this process's operations on the window, synchronises, releases (collective). */
WAITIO_API int waitio_win_free(waitio_win_t win);
/* This member's part: its address and size. */
WAITIO_API int waitio_win_base(waitio_win_t win, void **base, size_t *size);
/* The size of member `rank`'s part. */
WAITIO_API int waitio_win_size(waitio_win_t win, int rank, size_t *size);
/* The offset of a local address in this member's part (WAITIO_ERR_BOUNDS if outside). */
WAITIO_API int waitio_win_offset(waitio_win_t win, const void *addr, size_t *offset);
/* A pointer to member `rank`'s byte `offset` usable with plain loads, stores and C11 atomics
 * (a member of this host, window from waitio_win_allocate; or this process), else NULL (always
 * NULL where that part is device memory). */
WAITIO_API void *waitio_win_ptr(waitio_win_t win, int rank, size_t offset);
/* The group the window was created over. */
WAITIO_API waitio_group_t waitio_win_group(waitio_win_t win);

/* Symmetric allocation inside a window: a deterministic allocator, so members that call it in
 * the same order with the same arguments get the same offset (no communication; callers that
 * need everyone to have allocated before use add a barrier). WAITIO_ERR_NOMEM when full. */
WAITIO_API int waitio_win_alloc(waitio_win_t win, size_t size, size_t align, size_t *offset);
WAITIO_API int waitio_win_dealloc(waitio_win_t win, size_t offset);
/* Moves the block at offset to a new one of `size` bytes (this member's contents copied, as much
 * as fits) and frees the old one; deterministic like waitio_win_alloc. */
WAITIO_API int waitio_win_realloc(waitio_win_t win, size_t offset, size_t size, size_t align, size_t *new_offset);

/* The group of every process of the instance in universe order, for one-sided use (its group
 * id is WAITIO_GID_RMA_WORLD; created on first call, then returned again). */
#define WAITIO_GID_RMA_WORLD 0x7ffffff8
WAITIO_API int waitio_rma_world(waitio_group_t *grp);

/* ---- put and get ------------------------------------------------------------------------ */

WAITIO_API int waitio_put(waitio_win_t win, int rank, size_t offset, const void *src, size_t len);
WAITIO_API int waitio_get(waitio_win_t win, int rank, size_t offset, void *dst, size_t len);
/* Non-blocking with a request (waitio_wait / waitio_test): a put's completes when src may be
 * reused, a get's when dst holds the data. */
WAITIO_API int waitio_iput(waitio_win_t win, int rank, size_t offset, const void *src, size_t len,
                           waitio_req_t *req);
WAITIO_API int waitio_iget(waitio_win_t win, int rank, size_t offset, void *dst, size_t len,
                           waitio_req_t *req);
/* Non-blocking without a request: completed by waitio_flush / waitio_quiet (a put's source
 * buffer, a get's destination, may be touched only after that). */
WAITIO_API int waitio_put_nbi(waitio_win_t win, int rank, size_t offset, const void *src, size_t len);
WAITIO_API int waitio_get_nbi(waitio_win_t win, int rank, size_t offset, void *dst, size_t len);
/* Strided: nelems elements of elem_size bytes, element i at offset + i*target_stride on the
 * target and at local + i*local_stride here (strides in bytes, may be negative). Blocking. */
WAITIO_API int waitio_put_strided(waitio_win_t win, int rank, size_t offset, ptrdiff_t target_stride,
                                  const void *src, ptrdiff_t src_stride, size_t elem_size, size_t nelems);
WAITIO_API int waitio_get_strided(waitio_win_t win, int rank, size_t offset, ptrdiff_t target_stride,
                                  void *dst, ptrdiff_t dst_stride, size_t elem_size, size_t nelems);

/* ---- completion ------------------------------------------------------------------------- */

WAITIO_API int waitio_flush(waitio_win_t win, int rank);
WAITIO_API int waitio_quiet(void);
WAITIO_API int waitio_fence(void);
/* Serves incoming one-sided requests and advances every request once (UPC++'s progress()). */
WAITIO_API int waitio_progress(void);

/* ---- atomics ---------------------------------------------------------------------------- */

enum waitio_amo_type {
    WAITIO_AMO_INT32 = 1, WAITIO_AMO_INT64, WAITIO_AMO_UINT32, WAITIO_AMO_UINT64,
    WAITIO_AMO_FLOAT, WAITIO_AMO_DOUBLE /* fetch, set, swap, add, min, max */
};
enum waitio_amo_op {
    WAITIO_AMO_FETCH = 1,   /* result = *target */
    WAITIO_AMO_SET,         /* *target = operand */
    WAITIO_AMO_SWAP,        /* result = *target, *target = operand */
    WAITIO_AMO_CSWAP,       /* result = *target, if it equals *compare: *target = operand */
    WAITIO_AMO_ADD,         /* result = *target, *target += operand (inc: operand 1) */
    WAITIO_AMO_AND, WAITIO_AMO_OR, WAITIO_AMO_XOR, /* result = *target, *target &= |= ^= operand
                                                    (integer types) */
    WAITIO_AMO_MIN,         /* result = *target, *target = min(*target, operand) (signed for INT*) */
    WAITIO_AMO_MAX,         /* result = *target, *target = max(*target, operand) */
    WAITIO_AMO_OP_MAX_
};
/* The target word is `offset` in member `rank`'s part, naturally aligned. `operand` and `compare`
 * point to values of the type (NULL where the op has none). With `result` the call is fetching
 * and blocks until the old value is in *result; without, it returns at once and the update is
 * complete at the target after waitio_flush / waitio_quiet. Every path (CPU atomic here, atomic
 * served by the target) updates the same word atomically, so they mix freely. */
WAITIO_API int waitio_atomic(waitio_win_t win, int rank, size_t offset, int op, int type,
                             const void *operand, const void *compare, void *result);
/* Non-blocking fetching form: *result is written when req completes. */
WAITIO_API int waitio_iatomic(waitio_win_t win, int rank, size_t offset, int op, int type,
                              const void *operand, const void *compare, void *result, waitio_req_t *req);

/* ---- signals and waiting ------------------------------------------------------------------ */

#define WAITIO_SIGNAL_SET 0
#define WAITIO_SIGNAL_ADD 1
/* Puts len bytes, then updates the 64-bit signal word at sig_offset of sig_win on the same target
 * (set or add) so that a target that sees the signal sees the data. Blocking: local completion. */
WAITIO_API int waitio_put_signal(waitio_win_t win, int rank, size_t offset, const void *src, size_t len,
                                 waitio_win_t sig_win, size_t sig_offset, uint64_t signal, int sig_op);
WAITIO_API int waitio_put_signal_nbi(waitio_win_t win, int rank, size_t offset, const void *src,
                                     size_t len, waitio_win_t sig_win, size_t sig_offset,
                                     uint64_t signal, int sig_op);
/* Reads a local signal word atomically. */
WAITIO_API uint64_t waitio_signal_fetch(const uint64_t *sig_addr);

enum waitio_cmp { WAITIO_CMP_EQ = 1, WAITIO_CMP_NE, WAITIO_CMP_GT, WAITIO_CMP_GE, WAITIO_CMP_LT, WAITIO_CMP_LE };
/* Waits (serving one-sided requests meanwhile) until `*addr cmp *value` holds for the local word
 * addr of the type (integer types), or `seconds` pass (< 0: no limit; WAITIO_ERR_TIMEOUT). */
WAITIO_API int waitio_wait_until(const volatile void *addr, int type, int cmp, const void *value,
                                 double seconds);
/* *flag = whether `*addr cmp *value` holds now (after one progress round). */
WAITIO_API int waitio_test_until(const volatile void *addr, int type, int cmp, const void *value, int *flag);

/* ---- remote procedure calls --------------------------------------------------------------- */

/* A handler runs on the target inside its progress (a WaitIO call or the progress thread), one at
 * a time, never inside another handler. It receives the caller's rank in the call's group
 * (WAITIO_UNDEFINED if that group does not exist here) and its arguments, and writes at most
 * *reply_len bytes of reply (the capacity the caller gave, at most WAITIO_RPC_REPLY_MAX), setting
 * *reply_len to what it wrote. Nonzero return: the caller's request fails with WAITIO_ERR_RPC.
 * A handler may start one-sided operations and wait for them, but not call itself recursively. */
typedef int (*waitio_rpc_handler_t)(int origin, const void *args, size_t len, void *reply,
                                    size_t *reply_len, void *user);
#define WAITIO_RPC_ID_MAX 0xffff        /* ids 0 .. WAITIO_RPC_ID_MAX; 0xff00 up are WaitIO's own */
#define WAITIO_RPC_ARGS_MAX (1u << 20)   /* bytes of arguments per call */
#define WAITIO_RPC_REPLY_MAX (1u << 20)  /* bytes of reply per call */
/* Registers (or, with NULL, removes) the handler of `id` in this process. */
WAITIO_API int waitio_rpc_register(int id, waitio_rpc_handler_t fn, void *user);
/* The same with flags. WAITIO_RPC_IN_CALLER: the handler runs only inside the program's own
 * WaitIO calls, never on the progress thread — for handlers that need a lock the program holds
 * around its WaitIO calls (an interpreter's, as the Python binding's handlers do). */
#define WAITIO_RPC_IN_CALLER 0x1u
WAITIO_API int waitio_rpc_register_ex(int id, waitio_rpc_handler_t fn, void *user, unsigned flags);
/* Calls handler `id` on member `rank`: the request completes when its reply is in
 * reply[0 .. reply_cap) with req->status.len = its length (WAITIO_ERR_RPC: no such handler, or it
 * failed). The future is the request: waitio_wait / waitio_test / waitio_waitall. */
WAITIO_API int waitio_rpc(waitio_group_t grp, int rank, int id, const void *args, size_t len,
                          void *reply, size_t reply_cap, waitio_req_t *req);
/* Fire and forget: returns once args may be reused; completed at the target by waitio_quiet. */
WAITIO_API int waitio_rpc_ff(waitio_group_t grp, int rank, int id, const void *args, size_t len);

/* ---- futures (docs/one-sided.md, "Futures") ---------------------------------------------- */

/* A future is the completion of one operation (put, get, atomic, call, collective, distributed
 * object access) or of a combination of others (then, when_all). It completes once, either with
 * success and a value (bytes the operation returned: a call's reply, a fetched old value; empty
 * for put and get) or with an error (WAITIO_ERR_PEER... when a process it depends on is lost; a
 * dependent future takes the error of what it depends on). Every handle a function returns is
 * the caller's to waitio_future_release once, in any state: the library keeps what it still
 * needs. Functions that fail return the error and set *f to NULL.
 *
 * Callbacks (then) run only inside the caller's own calls to waitio_progress,
 * waitio_future_test and waitio_future_wait — so never on the progress thread unless a handler
 * running there waits on a future — never nested inside another callback deeper than a small
 * fixed depth, and a chain of any length completes without growing the stack. A callback may start operations, wait on futures and chain new ones. */
typedef struct waitio_future *waitio_future_t;

/* A then callback: `in` has completed (successfully, unless WAITIO_THEN_ALWAYS). It gives the
 * result of `out` (the future waitio_future_then returned): return 0 and, optionally, set out's
 * value (waitio_future_set_value) or tie out to another future (waitio_future_forward); a
 * nonzero return fails out with that error. If `in` failed, out fails with in's error whatever
 * the callback does. `in` and `out` are borrowed: valid during the call only (unless the
 * program holds its own handles). */
typedef int (*waitio_future_fn)(waitio_future_t in, waitio_future_t out, void *user);
#define WAITIO_THEN_ALWAYS 0x1u  /* run the callback when `in` failed too (to release `user`) */

/* ---- futures of one-sided operations ---- */
/* Completes when the data is in the target's memory (src may be reused then). */
WAITIO_API int waitio_put_fut(waitio_win_t win, int rank, size_t offset, const void *src, size_t len,
                            waitio_future_t *f);
/* Completes when dst holds the data. */
WAITIO_API int waitio_get_fut(waitio_win_t win, int rank, size_t offset, void *dst, size_t len,
                            waitio_future_t *f);
/* Any op and type of waitio_atomic; always fetching: the value is the old word (4 or 8 bytes). */
WAITIO_API int waitio_atomic_fut(waitio_win_t win, int rank, size_t offset, int op, int type,
                               const void *operand, const void *compare, waitio_future_t *f);
/* Calls handler `id` on member `rank` (args are copied: reusable at return); the value is the
 * reply, at most reply_cap bytes (<= WAITIO_RPC_REPLY_MAX). */
WAITIO_API int waitio_rpc_fut(waitio_group_t grp, int rank, int id, const void *args, size_t len,
                            size_t reply_cap, waitio_future_t *f);
/* Takes over a request of any kind (point-to-point or one-sided; the caller's copy becomes
 * inactive and must not be waited on); completes with the request's error; the value is the
 * request's final waitio_status_t (its data is in the buffers the request named). */
WAITIO_API int waitio_future_from_req(waitio_req_t *req, waitio_future_t *f);
/* A future already complete with a copy of value[0 .. len) (len 0: empty). */
WAITIO_API int waitio_future_make(const void *value, size_t len, waitio_future_t *f);

/* ---- combining ---- */
/* out completes after fn ran on f's completion (see waitio_future_fn); flags: WAITIO_THEN_*. */
WAITIO_API int waitio_future_then(waitio_future_t f, waitio_future_fn fn, void *user, unsigned flags,
                                  waitio_future_t *out);
/* out completes when all of fs[0 .. n) have (n 0: at once); its error is the first error among
 * them (in the order they completed), its value empty. Waits for all even after an error, so
 * every buffer they use is free when out completes. */
WAITIO_API int waitio_future_when_all(int n, const waitio_future_t fs[], waitio_future_t *out);
/* Inside a then callback, on its `out`: the value out completes with (copied). */
WAITIO_API int waitio_future_set_value(waitio_future_t out, const void *value, size_t len);
/* Inside a then callback, on its `out`: out completes when `next` does, with next's value or
 * error (the caller still releases its own handle to next). */
WAITIO_API int waitio_future_forward(waitio_future_t out, waitio_future_t next);

/* ---- waiting and results ---- */
/* 1 if complete (success or error), 0 if not; no progress is made. */
WAITIO_API int waitio_future_ready(waitio_future_t f);
/* One progress round (callbacks that are due run), then *flag = waitio_future_ready(f). */
WAITIO_API int waitio_future_test(waitio_future_t f, int *flag);
/* Progresses (running callbacks) until f completes: returns its error (0: success), or
 * WAITIO_ERR_TIMEOUT after `seconds` (< 0: no limit; f stays pending). */
WAITIO_API int waitio_future_wait(waitio_future_t f, double seconds);
/* The error f completed with; 0 while pending or after success. */
WAITIO_API int waitio_future_error(waitio_future_t f);
/* f's value: a pointer valid until f is released, and its length (NULL, 0 while pending or when
 * empty or failed). */
WAITIO_API int waitio_future_value(waitio_future_t f, const void **value, size_t *len);
WAITIO_API int waitio_future_release(waitio_future_t f);

/* ---- non-blocking collectives on a group (every member calls them in the same order, in the
 * same order as the group's blocking collectives) ---- */
WAITIO_API int waitio_barrier_fut(waitio_group_t grp, waitio_future_t *f);
/* len bytes of buf from rank root to every member's buf. */
WAITIO_API int waitio_bcast_fut(waitio_group_t grp, int root, void *buf, size_t len, waitio_future_t *f);
/* dst at root = src of rank 0 op src of rank 1 op ... (count elements of WAITIO_AMO_<type>;
 * op WAITIO_AMO_ADD, MIN, MAX, or AND / OR / XOR on integer types); dst is used at root only. */
WAITIO_API int waitio_reduce_fut(waitio_group_t grp, int root, const void *src, void *dst, size_t count,
                               int type, int op, waitio_future_t *f);

/* ---- distributed objects ---- */
#define WAITIO_DOBJ_NAME_MAX 63                     /* bytes of a name, without its NUL */
#define WAITIO_DOBJ_XFER_MAX (WAITIO_RPC_ARGS_MAX - 64) /* bytes per get / put / call argument */
/* A handler bound to an object: runs on the owner like an RPC handler (waitio_rpc_handler_t),
 * with the object's memory. */
typedef int (*waitio_dobj_fn)(int origin, void *obj, size_t size, const void *args, size_t len,
                              void *reply, size_t *reply_len, void *user);
/* A handle to member `rank`'s object, the value of a waitio_dobj_lookup future. */
typedef struct waitio_dobj {
    waitio_group_t grp;
    int rank;
    uint32_t id;        /* the owner's registration */
    uint64_t size;      /* bytes of the object */
    uint32_t flags;     /* the owner's registration flags (WAITIO_DOBJ_IN_CALLER) */
} waitio_dobj_t;
/* Registers ptr[0 .. size) under `name` in this process for group grp (fn may be NULL: no
 * calls). The memory must stay valid until unregistered; accesses run in this process's
 * progress, checked against size. WAITIO_ERR_ARG if the name is taken. */
WAITIO_API int waitio_dobj_register(waitio_group_t grp, const char *name, void *ptr, size_t size,
                                    waitio_dobj_fn fn, void *user);
/* The same with flags. WAITIO_DOBJ_IN_CALLER: the object's handler runs only inside the owner's
 * own WaitIO calls, never on the progress thread (as WAITIO_RPC_IN_CALLER; for handlers that
 * need an interpreter's lock). Gets and puts on it are served as usual. */
#define WAITIO_DOBJ_IN_CALLER WAITIO_RPC_IN_CALLER
WAITIO_API int waitio_dobj_register_ex(waitio_group_t grp, const char *name, void *ptr, size_t size,
                                       waitio_dobj_fn fn, void *user, unsigned flags);
WAITIO_API int waitio_dobj_unregister(waitio_group_t grp, const char *name);
/* The value is a waitio_dobj_t (WAITIO_ERR_RPC: no such object there). */
WAITIO_API int waitio_dobj_lookup(waitio_group_t grp, int rank, const char *name, waitio_future_t *f);
WAITIO_API int waitio_dobj_get(const waitio_dobj_t *o, size_t offset, void *dst, size_t len,
                               waitio_future_t *f);
/* src is copied (reusable at return); completes once written at the owner. */
WAITIO_API int waitio_dobj_put(const waitio_dobj_t *o, size_t offset, const void *src, size_t len,
                               waitio_future_t *f);
/* Runs the object's handler with args (copied); the value is its reply (<= reply_cap bytes). */
WAITIO_API int waitio_dobj_call(const waitio_dobj_t *o, const void *args, size_t len, size_t reply_cap,
                                waitio_future_t *f);

#ifdef __cplusplus
}
#endif
#endif /* WAITIO_RMA_H */
