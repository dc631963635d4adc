/*
 * api.c — the public one-sided functions of waitio_rma.h: argument and bounds checks at the
 * origin, and the path per target: this process or a member whose part is mapped here (memcpy,
 * CPU atomics), single copy through the shm transport (user and data windows on this host),
 * RDMA through the ucx transport (rdma.c: heap and user windows), else active messages (am.c).
 * Atomics take the mapped path, RDMA (UCX's atomics in its "cpu" mode) or frames, never single
 * copy, so that every update of a word is atomic with respect to every other.
 * Device memory (gpu.h): a member's part in device memory is reached as frames (its owner
 * copies with the GPU) or, for this process's own part and, for put and get, a part of this host
 * opened through CUDA IPC (window.c), by wio_gpu_copy here; atomics on another process's device
 * word always go to its owner, which applies them one at a time. An origin buffer in device
 * memory skips single copy and RDMA, and am.c stages it through host memory.
 */
#define WIO_LOG_SUBSYS WIO_SUB_RMA /* this file logs as "rma" (WAITIO_LOG=rma=LEVEL) */
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include "core/api_lock.h"
#include "gpu/gpu.h"
#include "rma/rma.h"
#include "core/trace.h"

/* ---- requests -------------------------------------------------------------------------------- */

static void req_bind(waitio_req_t *req, wio_req_impl *q)
{
    memset(req, 0, sizeof *req);
    req->internal = q;
    req->reserved[0] = wio_req_id(q);
}

/* An operation that completed at once (a direct path): an inactive request holding its status. */
static void req_done_now(waitio_req_t *req, int rank, size_t len)
{
    memset(req, 0, sizeof *req);
    req->status.source = rank;
    req->status.len = len;
}

/* ---- checks ---------------------------------------------------------------------------------- */

static wio_rma *rma_for(waitio_win_t w)
{
    wio_rma *r = wio_rma_get();
    if (r && !w) {
        wio_fail(WAITIO_ERR_ARG, "NULL window");
        return NULL;
    }
    return r;
}

/* The error rma_for reported. */
static int no_rma(void) { return wio_engine_current ? WAITIO_ERR_ARG : WAITIO_ERR_STATE; }

/* rank, bounds, the data window's image; 0 or the error (message set). */
static int check_access(wio_rma *r, waitio_win_t w, int rank, size_t off, size_t len)
{
    int rc = wio_win_check_rank(w, rank);
    if (rc)
        return rc;
    const wio_win_member *m = &w->m[rank];
    if (r->origin_checks && (off > m->size || len > m->size - off))
        return wio_fail(WAITIO_ERR_BOUNDS, "%zu bytes at offset %zu are outside rank %d's part of the "
                        "window (%llu bytes)", len, off, rank, (unsigned long long)m->size);
    if (r->origin_checks && wio_win_touches_hole(w, off, len))
        return wio_fail(WAITIO_ERR_BOUNDS, "%zu bytes at offset %zu of the data window reach a part that is "
                        "not the executable's .data/.bss (docs/one-sided.md)", len, off);
    if (w->kind == WIO_WIN_DATA && !m->same_image && rank != w->g->my_rank)
        return wio_fail(WAITIO_ERR_ARG, "rank %d runs another executable: its global data is not "
                        "symmetric with this process's", rank);
    if ((m->ptr || m->ipc) && m->pid != r->e->my_id && (rc = wio_engine_peer_error(r->e, m->pid)))
        return wio_fail(rc, "one-sided operation on rank %d: the process is gone", rank);
    return 0;
}

/* A copy on a mapped part (this process's own, or a heap part of this host): memcpy, or the GPU's
 * copy when either side is device memory. */
static int local_copy(void *dst, const void *src, size_t len, int device)
{
    if (!len)
        return 0;
    if (device)
        return wio_gpu_copy(dst, src, len);
    memcpy(dst, src, len);
    return 0;
}

/* The address of a member's part that this process copies to and from itself: mapped (its own
 * part, a heap part of this host) or another process's device part opened through CUDA IPC
 * (looked up per operation: gpu.h's cache may have closed it). NULL: frames (or single copy). */
static uint8_t *direct_ptr(const wio_win_member *m)
{
    return m->ptr ? m->ptr : m->ipc ? wio_win_ipc_ptr(m) : NULL;
}

/* Before a put or get copies straight into another process's device part (CUDA IPC): frames
 * still in flight to it are flushed, so that the two paths do not overtake each other. */
static int ipc_prepare(wio_rma *r, const wio_win_member *m)
{
    if (m->ptr || !m->ipc)
        return 0;
    const wio_rma_peer *p = r->peers[m->pid];
    if (p && (p->dirty || r->nimplicit))
        return wio_am_flush(r, m->pid);
    return 0;
}

/* The word of member m is updated here by CPU atomics or by this process's own GPU copy; not a
 * device word of another process (its owner serialises the atomics on it). */
static int amo_local(const wio_rma *r, const wio_win_member *m)
{
    return m->ptr && !(m->device && m->pid != r->e->my_id);
}

/* Single copy is tried for user and data windows of members of this host (host memory on both
 * sides: process_vm_readv cannot reach device memory); before it, frames still in flight to that
 * target are flushed, so that the two paths do not overtake each other. */
static int try_copy(wio_rma *r, waitio_win_t w, int rank, int write, size_t off, void *buf, size_t len,
                    int dev_buf)
{
    const wio_win_member *m = &w->m[rank];
    if (!m->same_host || w->kind == WIO_WIN_HEAP || !len || m->device || dev_buf)
        return ENOTCONN;
    wio_rma_peer *p = r->peers[m->pid];
    if (p && (p->dirty || r->nimplicit) && wio_am_flush(r, m->pid) != 0)
        return ENOTCONN;
    int rc = wio_engine_rma_copy(r->e, m->pid, write, m->addr + off, buf, len);
    r->ops_copy += rc == 0;
    return rc;
}

/* ---- put and get ----------------------------------------------------------------------------- */

enum { MODE_BLOCKING, MODE_REQ, MODE_NBI };

static int put_common(waitio_win_t w, int rank, size_t off, const void *src, size_t len, int mode,
                      waitio_req_t *req)
{
    wio_rma *r = rma_for(w);
    if (!r)
        return no_rma();
    if ((!src && len) || (mode == MODE_REQ && !req))
        return wio_fail(WAITIO_ERR_ARG, "NULL buffer or request");
    int rc = check_access(r, w, rank, off, len), dev = 0;
    if (rc || (rc = wio_rma_mem_device(src, len, &dev)))
        return rc;
    const wio_win_member *m = &w->m[rank];
    WIO_TRACE(WIO_TR_RMA, 0, m->pid, w->id, WIO_TR_RMA_PUT, len, 0, 0, 0);
    uint8_t *direct = direct_ptr(m);
    if (direct) {
        r->ops_mapped++;
        r->ops_ipc += !m->ptr;
        if ((rc = ipc_prepare(r, m)) || (rc = local_copy(direct + off, src, len, dev || m->device)))
            return rc;
    } else if (try_copy(r, w, rank, 1, off, (void *)src, len, dev) != 0) {
        wio_req_impl *q;
        rc = dev ? WIO_RDMA_NOT_TAKEN : wio_rdma_put(r, w, rank, off, src, len, mode == MODE_NBI ? NULL : &q);
        if (rc == WIO_RDMA_NOT_TAKEN)
            rc = wio_am_put(r, w, rank, off, src, len, mode == MODE_NBI ? NULL : &q);
        if (rc || mode == MODE_NBI)
            return rc;
        if (mode == MODE_BLOCKING)
            return wio_rma_wait(r, q);
        req_bind(req, q);
        q->status.source = rank;
        q->status.len = len;
        return 0;
    }
    if (mode == MODE_REQ)
        req_done_now(req, rank, len);
    return 0;
}

static int get_common(waitio_win_t w, int rank, size_t off, void *dst, size_t len, int mode,
                      waitio_req_t *req)
{
    wio_rma *r = rma_for(w);
    if (!r)
        return no_rma();
    if ((!dst && len) || (mode == MODE_REQ && !req))
        return wio_fail(WAITIO_ERR_ARG, "NULL buffer or request");
    int rc = check_access(r, w, rank, off, len), dev = 0;
    if (rc || (rc = wio_rma_mem_device(dst, len, &dev)))
        return rc;
    const wio_win_member *m = &w->m[rank];
    WIO_TRACE(WIO_TR_RMA, 0, m->pid, w->id, WIO_TR_RMA_GET, len, 0, 0, 0);
    uint8_t *direct = direct_ptr(m);
    if (direct) {
        r->ops_mapped++;
        r->ops_ipc += !m->ptr;
        if ((rc = ipc_prepare(r, m)) || (rc = local_copy(dst, direct + off, len, dev || m->device)))
            return rc;
    } else if (try_copy(r, w, rank, 0, off, dst, len, dev) != 0) {
        wio_req_impl *q;
        rc = dev ? WIO_RDMA_NOT_TAKEN : wio_rdma_get(r, w, rank, off, dst, len, mode == MODE_NBI ? NULL : &q);
        if (rc == WIO_RDMA_NOT_TAKEN)
            rc = wio_am_get(r, w, rank, off, dst, len, mode == MODE_NBI ? NULL : &q);
        if (rc || mode == MODE_NBI)
            return rc;
        if (mode == MODE_BLOCKING)
            return wio_rma_wait(r, q);
        req_bind(req, q);
        q->status.source = rank;
        return 0;
    }
    if (mode == MODE_REQ)
        req_done_now(req, rank, len);
    return 0;
}

int waitio_put(waitio_win_t win, int rank, size_t offset, const void *src, size_t len)
{
    WIO_API_GUARD();
    return put_common(win, rank, offset, src, len, MODE_BLOCKING, NULL);
}

int waitio_get(waitio_win_t win, int rank, size_t offset, void *dst, size_t len)
{
    WIO_API_GUARD();
    return get_common(win, rank, offset, dst, len, MODE_BLOCKING, NULL);
}

int waitio_iput(waitio_win_t win, int rank, size_t offset, const void *src, size_t len, waitio_req_t *req)
{
    WIO_API_GUARD();
    return put_common(win, rank, offset, src, len, MODE_REQ, req);
}

int waitio_iget(waitio_win_t win, int rank, size_t offset, void *dst, size_t len, waitio_req_t *req)
{
    WIO_API_GUARD();
    return get_common(win, rank, offset, dst, len, MODE_REQ, req);
}

int waitio_put_nbi(waitio_win_t win, int rank, size_t offset, const void *src, size_t len)
{
    WIO_API_GUARD();
    return put_common(win, rank, offset, src, len, MODE_NBI, NULL);
}

int waitio_get_nbi(waitio_win_t win, int rank, size_t offset, void *dst, size_t len)
{
    WIO_API_GUARD();
    return get_common(win, rank, offset, dst, len, MODE_NBI, NULL);
}

/* Strided: mapped targets element by element; otherwise every element as its own operation,
 * at most BATCH in flight, all complete (locally for puts) before returning. */
#define BATCH 64

static int strided(waitio_win_t w, int rank, size_t offset, ptrdiff_t tstride, uint8_t *local,
                   ptrdiff_t lstride, size_t elem, size_t n, int is_put)
{
    wio_rma *r = rma_for(w);
    if (!r)
        return no_rma();
    if (!n || !elem)
        return 0;
    if (!local)
        return wio_fail(WAITIO_ERR_ARG, "NULL buffer");
    /* every element's target range must be inside: check the first and the last */
    int64_t last = (int64_t)offset + (int64_t)(n - 1) * (int64_t)tstride;
    if (last < 0)
        return wio_fail(WAITIO_ERR_BOUNDS, "strided access reaches below offset 0");
    int rc = check_access(r, w, rank, offset, elem);
    if (!rc)
        rc = check_access(r, w, rank, (size_t)last, elem);
    if (rc)
        return rc;
    const wio_win_member *m = &w->m[rank];
    int dev = 0; /* the local elements are taken to be of the first one's kind */
    if ((rc = wio_rma_mem_device(local, elem, &dev)))
        return rc;
    uint8_t *direct = direct_ptr(m);
    if (direct) {
        rc = ipc_prepare(r, m);
        for (size_t i = 0; i < n && !rc; i++) {
            uint8_t *t = direct + offset + (ptrdiff_t)i * tstride, *l = local + (ptrdiff_t)i * lstride;
            rc = local_copy(is_put ? t : l, is_put ? l : t, elem, dev || m->device);
        }
        return rc;
    }
    wio_req_impl *q[BATCH];
    size_t k = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        size_t off = (size_t)((int64_t)offset + (int64_t)i * tstride);
        uint8_t *l = local + (ptrdiff_t)i * lstride;
        if (try_copy(r, w, rank, is_put, off, l, elem, dev) == 0)
            continue;
        rc = dev ? WIO_RDMA_NOT_TAKEN : is_put ? wio_rdma_put(r, w, rank, off, l, elem, &q[k])
                                              : wio_rdma_get(r, w, rank, off, l, elem, &q[k]);
        if (rc == WIO_RDMA_NOT_TAKEN)
            rc = is_put ? wio_am_put(r, w, rank, off, l, elem, &q[k]) : wio_am_get(r, w, rank, off, l, elem, &q[k]);
        if (rc)
            break;
        if (++k == BATCH) {
            for (size_t j = 0; j < k; j++) {
                int e = wio_rma_wait(r, q[j]);
                if (e && !rc)
                    rc = e;
            }
            k = 0;
        }
    }
    for (size_t j = 0; j < k; j++) {
        int e = wio_rma_wait(r, q[j]);
        if (e && !rc)
            rc = e;
    }
    return rc;
}

int waitio_put_strided(waitio_win_t win, int rank, size_t offset, ptrdiff_t target_stride, const void *src,
                       ptrdiff_t src_stride, size_t elem_size, size_t nelems)
{
    WIO_API_GUARD();
    return strided(win, rank, offset, target_stride, (uint8_t *)src, src_stride, elem_size, nelems, 1);
}

int waitio_get_strided(waitio_win_t win, int rank, size_t offset, ptrdiff_t target_stride, void *dst,
                       ptrdiff_t dst_stride, size_t elem_size, size_t nelems)
{
    WIO_API_GUARD();
    return strided(win, rank, offset, target_stride, dst, dst_stride, elem_size, nelems, 0);
}

/* ---- completion ------------------------------------------------------------------------------ */

int waitio_flush(waitio_win_t win, int rank)
{
    WIO_API_GUARD();
    wio_rma *r = rma_for(win);
    if (!r)
        return no_rma();
    int rc = wio_win_check_rank(win, rank);
    if (rc)
        return rc;
    uint32_t pid = win->m[rank].pid;
    rc = pid == r->e->my_id ? 0 : wio_am_flush(r, pid);
    atomic_thread_fence(memory_order_seq_cst);
    return rc;
}

int waitio_quiet(void)
{
    WIO_API_GUARD();
    wio_rma *r = wio_rma_get();
    return r ? wio_am_quiet(r) : WAITIO_ERR_STATE;
}

int waitio_fence(void)
{
    WIO_API_GUARD();
    wio_rma *r = wio_rma_get();
    return r ? wio_am_fence(r) : WAITIO_ERR_STATE;
}

int waitio_progress(void)
{
    WIO_API_GUARD();
    wio_rma *r = wio_rma_get();
    if (!r)
        return WAITIO_ERR_STATE;
    int rc = wio_engine_progress(r->e, 0);
    wio_fut_progress(r); /* futures: completions noticed, due callbacks run (future.c) */
    return rc;
}

int waitio_rma_world(waitio_group_t *grp)
{
    WIO_API_GUARD();
    wio_rma *r = wio_rma_get();
    if (!r)
        return WAITIO_ERR_STATE;
    if (!grp)
        return wio_fail(WAITIO_ERR_ARG, "NULL pointer");
    wio_group *g;
    int rc = wio_rma_world_group(r, &g);
    if (!rc)
        *grp = (waitio_group_t)g;
    return rc;
}

/* ---- atomics --------------------------------------------------------------------------------- */

static int atomic_common(waitio_win_t w, int rank, size_t off, int op, int type, const void *operand,
                         const void *compare, void *result, waitio_req_t *req)
{
    wio_rma *r = rma_for(w);
    if (!r)
        return no_rma();
    int rc = wio_amo_check(op, type);
    if (rc)
        return rc;
    size_t size = wio_amo_size(type);
    if ((op != WAITIO_AMO_FETCH && !operand) || (op == WAITIO_AMO_CSWAP && !compare) ||
        ((op == WAITIO_AMO_FETCH || req) && !result))
        return wio_fail(WAITIO_ERR_ARG, "atomic operation %d: missing operand, compare or result", op);
    if ((rc = check_access(r, w, rank, off, size)))
        return rc;
    uint64_t v = 0, c = 0;
    int rdev = 0; /* operands and result may be device memory too: read and written by the GPU's copy */
    if ((operand && (rc = wio_gpu_copy(&v, operand, size))) || (compare && (rc = wio_gpu_copy(&c, compare, size))) ||
        (rc = wio_rma_mem_device(result, size, &rdev)))
        return rc;
    const wio_win_member *m = &w->m[rank];
    WIO_TRACE(WIO_TR_RMA, 0, m->pid, w->id, WIO_TR_RMA_ATOMIC, size, 0, (uint32_t)op, 0);
    if (amo_local(r, m)) {
        uint8_t *p = m->ptr + off;
        if ((uintptr_t)p % size)
            return wio_fail(WAITIO_ERR_ARG, "atomic operation at offset %zu: not aligned to %zu bytes", off, size);
        r->ops_mapped++;
        uint64_t old = 0;
        if (m->device)
            rc = wio_amo_apply_device(p, op, type, v, c, &old);
        else
            old = wio_amo_apply(p, op, type, v, c);
        /* little- or big-endian alike: the low `size` bytes */
        if (!rc && result)
            rc = local_copy(result, &old, size, rdev);
        if (rc)
            return rc;
        if (req)
            req_done_now(req, rank, size);
        return 0;
    }
    if (r->origin_checks && (off + (uintptr_t)m->addr) % size && w->kind != WIO_WIN_HEAP)
        return wio_fail(WAITIO_ERR_ARG, "atomic operation at offset %zu: not aligned to %zu bytes", off, size);
    wio_req_impl *q;
    rc = rdev ? WIO_RDMA_NOT_TAKEN : wio_rdma_atomic(r, w, rank, off, op, type, v, c, result, req ? &q : NULL);
    if (rc == WIO_RDMA_NOT_TAKEN)
        rc = wio_am_atomic(r, w, rank, off, op, type, v, c, result, req ? &q : NULL);
    if (!rc && req) {
        req_bind(req, q);
        q->status.source = rank;
    }
    return rc;
}

int waitio_atomic(waitio_win_t win, int rank, size_t offset, int op, int type, const void *operand,
                  const void *compare, void *result)
{
    WIO_API_GUARD();
    return atomic_common(win, rank, offset, op, type, operand, compare, result, NULL);
}

int waitio_iatomic(waitio_win_t win, int rank, size_t offset, int op, int type, const void *operand,
                   const void *compare, void *result, waitio_req_t *req)
{
    WIO_API_GUARD();
    if (!req)
        return wio_fail(WAITIO_ERR_ARG, "NULL request");
    return atomic_common(win, rank, offset, op, type, operand, compare, result, req);
}

/* ---- signals --------------------------------------------------------------------------------- */

static int put_signal_common(waitio_win_t w, int rank, size_t off, const void *src, size_t len,
                             waitio_win_t sw, size_t soff, uint64_t signal, int sig_op, int mode)
{
    wio_rma *r = rma_for(w);
    if (!r)
        return no_rma();
    if (!sw || (sig_op != WAITIO_SIGNAL_SET && sig_op != WAITIO_SIGNAL_ADD))
        return wio_fail(WAITIO_ERR_ARG, "NULL signal window or unknown signal operation %d", sig_op);
    int rc = wio_win_check_rank(sw, rank);
    if (rc)
        return rc;
    if (sw->m[rank].pid != w->m[rank].pid)
        return wio_fail(WAITIO_ERR_ARG, "the data and signal windows name different processes for rank %d", rank);
    if ((rc = check_access(r, sw, rank, soff, 8)))
        return rc;
    int amo = sig_op == WAITIO_SIGNAL_SET ? WAITIO_AMO_SET : WAITIO_AMO_ADD;
    const wio_win_member *m = &w->m[rank], *sm = &sw->m[rank];
    /* data on a mapped part: stored before the signal's release. Data through frames: the signal
     * follows it through frames on the same connection, so it is applied after the data. */
    uint8_t *direct = direct_ptr(m);
    if (direct) {
        int dev = 0;
        if ((rc = check_access(r, w, rank, off, len)) || (rc = wio_rma_mem_device(src, len, &dev)) ||
            (rc = ipc_prepare(r, m)) || (rc = local_copy(direct + off, src, len, dev || m->device)))
            return rc;
    } else if ((rc = put_common(w, rank, off, src, len, mode == MODE_NBI ? MODE_NBI : MODE_BLOCKING, NULL))) {
        return rc;
    }
    const wio_rma_peer *p = r->peers[m->pid];
    if (amo_local(r, sm) && !(p && p->dirty) && !wio_rdma_pending(r, m->pid)) {
        /* nothing of ours in flight to it: the signal directly */
        if ((uintptr_t)(sm->ptr + soff) % 8)
            return wio_fail(WAITIO_ERR_ARG, "signal at offset %zu: not aligned to 8 bytes", soff);
        atomic_thread_fence(memory_order_release);
        uint64_t old;
        if (sm->device)
            return wio_amo_apply_device(sm->ptr + soff, amo, WAITIO_AMO_UINT64, signal, 0, &old);
        wio_amo_apply(sm->ptr + soff, amo, WAITIO_AMO_UINT64, signal, 0);
        return 0;
    }
    /* data that went over RDMA: UCX's fence keeps the signal behind it (over frames, am.c
     * flushes it first) */
    if (wio_rdma_pending(r, m->pid) && (rc = wio_rdma_fence(r)) != 0)
        return rc;
    rc = wio_rdma_atomic(r, sw, rank, soff, amo, WAITIO_AMO_UINT64, signal, 0, NULL, NULL);
    if (rc == WIO_RDMA_NOT_TAKEN)
        rc = wio_am_atomic(r, sw, rank, soff, amo, WAITIO_AMO_UINT64, signal, 0, NULL, NULL);
    return rc;
}

int waitio_put_signal(waitio_win_t win, int rank, size_t offset, const void *src, size_t len,
                      waitio_win_t sig_win, size_t sig_offset, uint64_t signal, int sig_op)
{
    WIO_API_GUARD();
    return put_signal_common(win, rank, offset, src, len, sig_win, sig_offset, signal, sig_op, MODE_BLOCKING);
}

int waitio_put_signal_nbi(waitio_win_t win, int rank, size_t offset, const void *src, size_t len,
                          waitio_win_t sig_win, size_t sig_offset, uint64_t signal, int sig_op)
{
    WIO_API_GUARD();
    return put_signal_common(win, rank, offset, src, len, sig_win, sig_offset, signal, sig_op, MODE_NBI);
}

uint64_t waitio_signal_fetch(const uint64_t *sig_addr)
{
    int dev = 0;
    uint64_t v = 0;
    /* a signal word in device memory is read with the GPU's copy (0 if that fails: logged) */
    if (wio_rma_mem_device(sig_addr, sizeof *sig_addr, &dev) == 0 && dev) {
        if (wio_gpu_copy(&v, sig_addr, sizeof v) != 0)
            wio_warn("waitio_signal_fetch: %s", waitio_error_message());
        atomic_thread_fence(memory_order_acquire);
        return v;
    }
    return atomic_load_explicit((const _Atomic uint64_t *)sig_addr, memory_order_acquire);
}

/* ---- waiting on local words ------------------------------------------------------------------ */

static int compare_word(const volatile void *addr, int type, int cmp, const void *value, int *holds, int dev)
{
    _Alignas(8) uint8_t copy[8];
    if (dev) { /* a word in device memory: read by the GPU's copy, then compared here */
        size_t size = type == WAITIO_AMO_INT32 || type == WAITIO_AMO_UINT32 ? 4 : 8;
        int rc = wio_gpu_copy(copy, (const void *)addr, size);
        if (rc)
            return rc;
        atomic_thread_fence(memory_order_acquire);
        addr = copy;
    }
    int64_t a = 0, b = 0;
    uint64_t ua = 0, ub = 0;
    int is_signed;
    switch (type) {
    case WAITIO_AMO_INT32: {
        int32_t x = atomic_load_explicit((const _Atomic int32_t *)addr, memory_order_acquire), y;
        memcpy(&y, value, 4);
        a = x, b = y, is_signed = 1;
        break;
    }
    case WAITIO_AMO_INT64: {
        int64_t x = atomic_load_explicit((const _Atomic int64_t *)addr, memory_order_acquire), y;
        memcpy(&y, value, 8);
        a = x, b = y, is_signed = 1;
        break;
    }
    case WAITIO_AMO_UINT32: {
        uint32_t x = atomic_load_explicit((const _Atomic uint32_t *)addr, memory_order_acquire), y;
        memcpy(&y, value, 4);
        ua = x, ub = y, is_signed = 0;
        break;
    }
    case WAITIO_AMO_UINT64: {
        uint64_t x = atomic_load_explicit((const _Atomic uint64_t *)addr, memory_order_acquire), y;
        memcpy(&y, value, 8);
        ua = x, ub = y, is_signed = 0;
        break;
    }
    default:
        return wio_fail(WAITIO_ERR_ARG, "waiting on type %d: integer types only", type);
    }
    int lt = is_signed ? a < b : ua < ub, eq = is_signed ? a == b : ua == ub;
    switch (cmp) {
    case WAITIO_CMP_EQ: *holds = eq; break;
    case WAITIO_CMP_NE: *holds = !eq; break;
    case WAITIO_CMP_GT: *holds = !lt && !eq; break;
    case WAITIO_CMP_GE: *holds = !lt; break;
    case WAITIO_CMP_LT: *holds = lt; break;
    case WAITIO_CMP_LE: *holds = lt || eq; break;
    default: return wio_fail(WAITIO_ERR_ARG, "unknown comparison %d", cmp);
    }
    return 0;
}

int waitio_test_until(const volatile void *addr, int type, int cmp, const void *value, int *flag)
{
    WIO_API_GUARD();
    wio_rma *r = wio_rma_get();
    if (!r)
        return WAITIO_ERR_STATE;
    if (!addr || !value || !flag)
        return wio_fail(WAITIO_ERR_ARG, "NULL pointer");
    int dev = 0, rc = wio_rma_mem_device((const void *)addr, 4, &dev);
    if (!rc)
        rc = wio_engine_progress(r->e, 0);
    return rc ? rc : compare_word(addr, type, cmp, value, flag, dev);
}

/* Spins (not when the host is oversubscribed), then yields, then sleeps in the poller 1 ms at a
 * time: an update by a member of this host through shared memory makes no event to wake on. */
int waitio_wait_until(const volatile void *addr, int type, int cmp, const void *value, double seconds)
{
    WIO_API_GUARD();
    wio_rma *r = wio_rma_get();
    if (!r)
        return WAITIO_ERR_STATE;
    if (!addr || !value)
        return wio_fail(WAITIO_ERR_ARG, "NULL pointer");
    wio_engine *e = r->e;
    int dev = 0, drc = wio_rma_mem_device((const void *)addr, 4, &dev);
    if (drc)
        return drc;
    double t0 = wio_now(), spin = e->oversubscribed ? 0 : e->cfg.spin_us * 1e-6;
    double yield = spin + e->cfg.yield_us * 1e-6;
    for (unsigned iter = 0;; iter++) {
        int holds = 0, rc = compare_word(addr, type, cmp, value, &holds, dev);
        if (rc || holds)
            return rc;
        double waited = (iter & 15) == 0 || spin == 0 ? wio_now() - t0 : 0;
        if (seconds >= 0 && waited > seconds)
            return wio_fail(WAITIO_ERR_TIMEOUT, "waitio_wait_until: no match within %.3f s", seconds);
        if (waited < spin) {
            rc = wio_engine_progress(e, 0);
        } else if (waited < yield) {
            rc = wio_engine_progress(e, 0);
            wio_engine_yield(e); /* the "multiple" level: without the lock */
        } else {
            rc = wio_engine_pause(e, 1);
        }
        if (rc)
            return rc;
    }
}

/* ---- remote procedure calls ------------------------------------------------------------------ */

static int rpc_check(wio_group *g, int rank, int id, const void *args, size_t len, size_t reply_cap)
{
    if (!g)
        return wio_fail(WAITIO_ERR_GROUP, "NULL group");
    if (g->my_rank == WAITIO_UNDEFINED)
        return wio_fail(WAITIO_ERR_NOT_MEMBER, "call on group %u: this process is not a member", (unsigned)g->gid);
    if (rank < 0 || rank >= g->size)
        return wio_fail(WAITIO_ERR_GROUP, "rank %d is outside group %u of size %d", rank, (unsigned)g->gid, g->size);
    if (id < 0 || id > WAITIO_RPC_ID_MAX)
        return wio_fail(WAITIO_ERR_ARG, "handler id %d is outside 0..%d", id, WAITIO_RPC_ID_MAX);
    if ((!args && len) || len > WAITIO_RPC_ARGS_MAX || reply_cap > WAITIO_RPC_REPLY_MAX)
        return wio_fail(WAITIO_ERR_ARG, "call arguments (%zu bytes, at most %u) or reply capacity (%zu, "
                        "at most %u) out of range", len, WAITIO_RPC_ARGS_MAX, reply_cap, WAITIO_RPC_REPLY_MAX);
    return 0;
}

/* A call on this process itself runs at once. */
static int rpc_self(wio_rma *r, int rank, int id, const void *args, size_t len, void *reply,
                    size_t reply_cap, size_t *reply_len)
{
    const wio_rpc_entry *h = r->handlers ? &r->handlers[id] : NULL;
    size_t rl = reply_cap;
    if (!h || !h->fn)
        return wio_fail(WAITIO_ERR_RPC, "no handler %d registered here", id);
    if (h->fn(rank, args, len, reply, &rl, h->user) || rl > reply_cap)
        return wio_fail(WAITIO_ERR_RPC, "handler %d failed", id);
    *reply_len = rl;
    return 0;
}

int waitio_rpc(waitio_group_t grp, int rank, int id, const void *args, size_t len, void *reply,
               size_t reply_cap, waitio_req_t *req)
{
    WIO_API_GUARD();
    wio_rma *r = wio_rma_get();
    if (!r)
        return WAITIO_ERR_STATE;
    wio_group *g = (wio_group *)grp;
    int rc = rpc_check(g, rank, id, args, len, reply_cap);
    if (rc)
        return rc;
    if (!req || (!reply && reply_cap))
        return wio_fail(WAITIO_ERR_ARG, "NULL request or reply buffer");
    WIO_TRACE(WIO_TR_RMA, 0, g->members[rank], g->gid, WIO_TR_RMA_RPC, len, 0, (uint32_t)id, 0);
    if (g->members[rank] == r->e->my_id) {
        size_t rl = 0;
        rc = rpc_self(r, rank, id, args, len, reply, reply_cap, &rl);
        req_done_now(req, rank, rl);
        req->status.error = rc;
        return rc;
    }
    wio_req_impl *q;
    rc = wio_am_rpc(r, g, rank, id, args, len, reply, reply_cap, &q);
    if (!rc) {
        req_bind(req, q);
        q->status.source = rank;
    }
    return rc;
}

int waitio_rpc_ff(waitio_group_t grp, int rank, int id, const void *args, size_t len)
{
    WIO_API_GUARD();
    wio_rma *r = wio_rma_get();
    if (!r)
        return WAITIO_ERR_STATE;
    wio_group *g = (wio_group *)grp;
    int rc = rpc_check(g, rank, id, args, len, 0);
    if (rc)
        return rc;
    WIO_TRACE(WIO_TR_RMA, 0, g->members[rank], g->gid, WIO_TR_RMA_RPC, len, 0, (uint32_t)id, 0);
    if (g->members[rank] == r->e->my_id) {
        size_t rl = 0;
        return rpc_self(r, rank, id, args, len, NULL, 0, &rl);
    }
    return wio_am_rpc(r, g, rank, id, args, len, NULL, 0, NULL);
}
