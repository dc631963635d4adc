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
 *     progress — its own WaitIO calls or its progress thread (WAITIO_PROGRESS_THREAD).
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
 * Threading: as waitio.h ("serialized"). With a progress thread running, every entry point
 * takes one process-wide lock.
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
 * (a member of this host, window from waitio_win_allocate; or this process), else NULL. */
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
    WAITIO_AMO_FLOAT, WAITIO_AMO_DOUBLE /* fetch, set, swap only */
};
enum waitio_amo_op {
    WAITIO_AMO_FETCH = 1,   /* result = *target */
    WAITIO_AMO_SET,         /* *target = operand */
    WAITIO_AMO_SWAP,        /* result = *target, *target = operand */
    WAITIO_AMO_CSWAP,       /* result = *target, if it equals *compare: *target = operand */
    WAITIO_AMO_ADD,         /* result = *target, *target += operand (inc: operand 1) */
    WAITIO_AMO_AND, WAITIO_AMO_OR, WAITIO_AMO_XOR,
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

#ifdef __cplusplus
}
#endif
#endif /* WAITIO_RMA_H */
