/*
 * rdma.c — one-sided operations over the transport's own RDMA (the ucx transport: ucp_put_nbx,
 * ucp_get_nbx, ucp_atomic_op_nbx; transport.h, "one-sided over RDMA"), reached through the
 * engine, so that this layer never sees a UCX type (docs/one-sided.md, "One-sided over UCX").
 *
 * Windows: when some member of the window's group offers ucx, creation ends with one more
 * collective step: each member registers exactly its part [base, base + size) (heap and user
 * windows; never the data window, whose range has holes — GOT slots, the C library's objects —
 * that a key would expose), the packed keys and part addresses are exchanged, and each member
 * keeps every other member's key, unpacked on the endpoint of its connection on first use.
 *
 * Operations: a put, get or atomic on a member with a key, over an open ucx connection, is
 * posted to UCX; its request (or, for an implicit one, the peer's counters) completes from UCX's
 * completion callback. Anything else — no key, no ucx connection yet, an atomic UCX does not do
 * (min, max, floating-point add), a transport on which UCX cannot do RMA (ENOTSUP) — goes as
 * frames (am.c). The two paths to one target must not overtake each other: before an RDMA
 * operation, frames still unacknowledged to that target are flushed (as before single copy), and
 * before a frame, RDMA operations not known complete there are flushed (am.c's op_new).
 *
 * Atomicity: every path applies atomics with the target CPU's atomic instructions — a mapped
 * word, a frame served by the target, and UCX in its "cpu" atomic mode (ucx_rma.c) — so one
 * word's updates add up whichever path each one took.
 */
#define WIO_LOG_SUBSYS WIO_SUB_RMA /* this file logs as "rma" (WAITIO_LOG=rma=LEVEL) */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "coll/coll.h"
#include "coll/datatype.h"
#include "rma/rma.h"

#define KEY_HDR 10 /* a member's record: key length (16 bits), part address (64), then the key */

/* ---- windows --------------------------------------------------------------------------------- */

/* Some member offers ucx: every member takes part in the key exchange (the table is the same
 * everywhere, so all decide alike). */
static int group_has_rdma(const wio_rma *r, const wio_group *g)
{
    for (int i = 0; i < g->size; i++)
        if (r->e->table[g->members[i]].transports & WIO_TP_UCX)
            return 1;
    return 0;
}

/* UCX's segment at the part's address may be made of 2 MiB huge pages (its mm transports' default
 * HUGETLB_MODE): it must not reach past this window's own mapping. */
#define OWNED_ALIGN ((size_t)2 << 20)

static int owned_ok(const struct waitio_win *w)
{
    size_t whole = (w->size + OWNED_ALIGN - 1) & ~(OWNED_ALIGN - 1);
    return w->map_private && w->base == w->map && (uintptr_t)w->base % OWNED_ALIGN == 0 && w->map_len >= whole;
}

/* This part registered; its key in key[0..*len) (0: none — frames reach this part). */
static void register_part(wio_rma *r, struct waitio_win *w, uint8_t *key, size_t *len)
{
    *len = 0;
    /* device memory is not registered (the transport's registration is of host memory here):
     * frames reach a device part, and its owner copies with the GPU (am.c) */
    if (!w->base || !w->size || !r->rdma || w->device)
        return;
    /* a heap part that is fresh private memory (no other member on this host shares it): UCX may
     * put its own shared-memory segment there, which peers on this host then map (ucx_rma.c) */
    unsigned flags = owned_ok(w) ? WIO_RDMA_REG_OWNED : 0;
    int rc = wio_engine_rdma_reg(r->e, w->base, w->size, flags, &w->rdma_reg, key, WIO_RDMA_RKEY_MAX, len);
    if (rc) {
        w->rdma_reg = NULL;
        *len = 0;
        if (rc != ENOTSUP)
            wio_debug("window %#x: RDMA registration of %zu bytes failed (%s): frames reach this part",
                      (unsigned)w->id, w->size, strerror(rc));
    }
}

static void keep_keys(struct waitio_win *w, const uint8_t *all, size_t rec)
{
    int n = 0;
    for (int i = 0; i < w->g->size; i++) {
        const uint8_t *p = all + (size_t)i * rec;
        size_t len = wio_get_le16(p);
        wio_win_member *m = &w->m[i];
        if (i == w->g->my_rank || !len || len > rec - KEY_HDR)
            continue;
        m->rkey_packed = malloc(len);
        if (!m->rkey_packed)
            continue; /* that member is reached through frames */
        memcpy(m->rkey_packed, p + KEY_HDR, len);
        m->rkey_len = len;
        m->rdma_addr = wio_get_le64(p + 2);
        n++;
    }
    wio_debug("window %#x: RDMA keys of %d of %d members", (unsigned)w->id, n, w->g->size - 1);
}

int wio_rdma_win_setup(wio_rma *r, struct waitio_win *w)
{
    wio_group *g = w->g;
    if (w->kind == WIO_WIN_DATA || g->size < 2 || !group_has_rdma(r, g))
        return 0;
    size_t rec_max = KEY_HDR + WIO_RDMA_RKEY_MAX;
    uint8_t *mine = calloc(1, rec_max), *all = malloc(rec_max * (size_t)g->size);
    size_t klen = 0;
    if (mine && all)
        register_part(r, w, mine + KEY_HDR, &klen);
    /* the longest key sets the record size; a member out of memory makes everyone fail alike */
    int in[2] = {(int)klen, !mine || !all}, out[2] = {0, 0};
    int rc = wio_coll_allreduce(r->e, g, in, out, 2, WIO_DT_INT, WIO_OP_MAX);
    if (!rc && out[1])
        rc = wio_fail(WAITIO_ERR_NOMEM, "out of memory exchanging a window's RDMA keys");
    if (!rc && out[0] > 0) {
        size_t rec = KEY_HDR + (size_t)out[0];
        wio_put_le16(mine, (uint16_t)klen);
        wio_put_le64(mine + 2, (uint64_t)(uintptr_t)w->base);
        rc = wio_coll_allgather(r->e, g, mine, all, rec, WIO_DT_BYTE);
        if (!rc && r->rdma) /* WAITIO_RMA_RDMA=0: our own operations take frames too */
            keep_keys(w, all, rec);
    }
    free(mine);
    free(all);
    if (rc)
        wio_rdma_win_release(r, w);
    return rc;
}

void wio_rdma_win_release(wio_rma *r, struct waitio_win *w)
{
    for (int i = 0; w->g && i < w->g->size; i++) {
        wio_win_member *m = &w->m[i];
        if (m->rkey)
            wio_engine_rdma_rkey_free(r->e, m->rkey);
        free(m->rkey_packed);
        m->rkey = NULL;
        m->rkey_packed = NULL;
        m->rkey_len = 0;
    }
    if (w->rdma_reg)
        wio_engine_rdma_dereg(r->e, w->rdma_reg);
    w->rdma_reg = NULL;
}

/* ---- operations ------------------------------------------------------------------------------ */

/* One posted operation: lives until UCX's completion (rec_done). */
typedef struct rdma_rec {
    wio_rdma_op op;
    wio_rma *rma;
    uint64_t req_id; /* its request; 0: implicit */
    uint32_t pid;
} rdma_rec;

/* From the transport's progress: only records (a request completes, counters move). */
static void rec_done(void *arg, int err)
{
    rdma_rec *x = arg;
    wio_rma *r = x->rma;
    wio_rma_peer *p = r->peers[x->pid];
    if (p && p->rdma_inflight)
        p->rdma_inflight--;
    if (x->req_id) {
        wio_req_impl *q = wio_req_lookup(r->e, x->req_id);
        if (q && q->state != WIO_RS_DONE)
            wio_req_complete(q, err);
    } else if (err && p && !p->rdma_err) {
        p->rdma_err = err;
    }
    free(x);
}

int wio_rdma_pending(const wio_rma *r, uint32_t pid)
{
    const wio_rma_peer *p = pid < r->e->nprocs_total ? r->peers[pid] : NULL;
    return p && (p->rdma_dirty || p->rdma_inflight);
}

/* The member has a key: the operation may go over RDMA. */
static int rdma_usable(const struct waitio_win *w, int rank)
{
    const wio_win_member *m = &w->m[rank];
    return m->rkey_len && !m->ptr && rank != w->g->my_rank;
}

/* Posts x->op on the member's connection. WIO_RDMA_NOT_TAKEN: nothing was started (x freed). */
static int post(wio_rma *r, struct waitio_win *w, int rank, rdma_rec *x, int remote_effect, wio_req_impl **req)
{
    wio_engine *e = r->e;
    wio_win_member *m = &w->m[rank];
    wio_rma_peer *p = wio_rma_peer_get(r, m->pid);
    int rc = p ? wio_engine_peer_error(e, m->pid) : 0;
    if (!p || rc) {
        free(x);
        return p ? wio_fail(rc, "one-sided operation on process %u: it is gone", (unsigned)m->pid)
                 : wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    }
    /* frames to it not yet known applied there go first: the paths must not overtake */
    if ((p->dirty || (p->inflight && r->nimplicit)) && (rc = wio_am_flush(r, m->pid)) != 0) {
        free(x);
        return rc;
    }
    wio_req_impl *q = NULL;
    if (req) {
        if (!(q = wio_req_alloc(e, WIO_REQ_RMA))) {
            free(x);
            return wio_fail(WAITIO_ERR_NOMEM, "out of memory starting a one-sided operation");
        }
        q->state = WIO_RS_RMA;
        q->peer_id = m->pid;
        q->tag = (uint64_t)x->op.kind;
        x->req_id = wio_req_id(q);
    }
    x->rma = r;
    x->pid = m->pid;
    x->op.done = rec_done;
    x->op.arg = x;
    int kind = x->op.kind;
    rc = wio_engine_rdma_post(e, m->pid, m->rkey_packed, m->rkey_len, &m->rkey, &x->op);
    if (rc < 0 || rc > 2) {
        if (rc == ENOTSUP && kind != WIO_RDMA_AMO) { /* UCX cannot do RMA to it here: stop trying */
            wio_debug("one-sided: no RDMA to process %u on this transport: frames", (unsigned)m->pid);
            free(m->rkey_packed);
            m->rkey_packed = NULL;
            m->rkey_len = 0;
        }
        if (q)
            wio_req_release(e, q);
        free(x);
        r->ops_rdma_fallback++;
        return WIO_RDMA_NOT_TAKEN;
    }
    r->ops_rdma++;
    r->ops_rdma_direct += rc == 2;
    r->rdma_fence_due = 1;
    if (remote_effect)
        p->rdma_dirty = 1;
    /* a part the transport maps here (2) is from now on reached like a part of this host's
     * shared window: the API's mapped path, a memcpy or CPU atomic without the transport */
    if (rc == 2 && x->op.mapped && !m->device && !m->ptr)
        m->ptr = (uint8_t *)x->op.mapped - (x->op.remote_addr - m->rdma_addr);
    if (rc == 1 || rc == 2) { /* complete at once (2: a load/store on the mapped part): no callback */
        if (q)
            wio_req_complete(q, 0);
        free(x);
    } else {
        p->rdma_inflight++;
    }
    if (req)
        *req = q;
    return 0;
}

static rdma_rec *rec_new(int kind, const wio_win_member *m, size_t off, void *local, size_t len)
{
    rdma_rec *x = calloc(1, sizeof *x);
    if (x) {
        x->op.kind = kind;
        x->op.remote_addr = m->rdma_addr + off;
        x->op.local = local;
        x->op.len = len;
    }
    return x;
}

int wio_rdma_put(wio_rma *r, struct waitio_win *w, int rank, size_t off, const void *src, size_t len,
                 wio_req_impl **req)
{
    if (!len || !rdma_usable(w, rank))
        return WIO_RDMA_NOT_TAKEN;
    rdma_rec *x = rec_new(WIO_RDMA_PUT, &w->m[rank], off, (void *)src, len);
    if (!x)
        return WIO_RDMA_NOT_TAKEN;
    return post(r, w, rank, x, 1, req);
}

int wio_rdma_get(wio_rma *r, struct waitio_win *w, int rank, size_t off, void *dst, size_t len,
                 wio_req_impl **req)
{
    if (!len || !rdma_usable(w, rank))
        return WIO_RDMA_NOT_TAKEN;
    rdma_rec *x = rec_new(WIO_RDMA_GET, &w->m[rank], off, dst, len);
    if (!x)
        return WIO_RDMA_NOT_TAKEN;
    int rc = post(r, w, rank, x, 0, req);
    if (!rc && req && *req)
        (*req)->status.len = len;
    return rc;
}

/* WaitIO's atomic as one UCX does (32/64-bit add, and, or, xor, swap, compare-and-swap and
 * their fetching forms; fetch is a fetching add of 0, set a swap whose old value is dropped),
 * or 0: frames (min, max, floating-point add). */
static int amo_map(int op, int type)
{
    int is_float = type == WAITIO_AMO_FLOAT || type == WAITIO_AMO_DOUBLE;
    switch (op) {
    case WAITIO_AMO_FETCH: return WIO_RDMA_AMO_ADD;
    case WAITIO_AMO_SET:
    case WAITIO_AMO_SWAP: return WIO_RDMA_AMO_SWAP;
    case WAITIO_AMO_CSWAP: return is_float ? 0 : WIO_RDMA_AMO_CSWAP;
    case WAITIO_AMO_ADD: return is_float ? 0 : WIO_RDMA_AMO_ADD;
    case WAITIO_AMO_AND: return is_float ? 0 : WIO_RDMA_AMO_AND;
    case WAITIO_AMO_OR: return is_float ? 0 : WIO_RDMA_AMO_OR;
    case WAITIO_AMO_XOR: return is_float ? 0 : WIO_RDMA_AMO_XOR;
    default: return 0;
    }
}

int wio_rdma_atomic(wio_rma *r, struct waitio_win *w, int rank, size_t off, int op, int type,
                    uint64_t operand, uint64_t compare, void *result, wio_req_impl **req)
{
    int amo = amo_map(op, type);
    size_t size = wio_amo_size(type);
    if (!amo || !rdma_usable(w, rank) || (w->m[rank].rdma_addr + off) % size)
        return WIO_RDMA_NOT_TAKEN;
    rdma_rec *x = rec_new(WIO_RDMA_AMO, &w->m[rank], off, result, size);
    if (!x)
        return WIO_RDMA_NOT_TAKEN;
    x->op.amo = amo;
    x->op.operand = op == WAITIO_AMO_FETCH ? 0 : operand;
    x->op.compare = compare;
    /* a fetch without a request of the caller's is blocking (as am.c's) */
    wio_req_impl *q = NULL, **qp = req ? req : result ? &q : NULL;
    int rc = post(r, w, rank, x, !result, qp);
    if (rc || !qp)
        return rc;
    (*qp)->status.len = size;
    return req ? 0 : wio_rma_wait(r, q);
}

/* ---- completion and order -------------------------------------------------------------------- */

typedef struct flush_wait {
    int done, err;
} flush_wait;

static void flush_cb(void *arg, int err)
{
    flush_wait *f = arg;
    f->err = err;
    f->done = 1;
}

static int flush_over(void *arg)
{
    const flush_wait *f = arg;
    return f->done;
}

typedef struct drain_arg {
    const wio_rma *rma;
    const wio_rma_peer *p;
    uint32_t pid;
} drain_arg;

static int drained(void *arg)
{
    const drain_arg *a = arg;
    return !a->p->rdma_inflight || wio_engine_peer_error(a->rma->e, a->pid);
}

int wio_rdma_flush(wio_rma *r, uint32_t pid)
{
    wio_rma_peer *p = pid < r->e->nprocs_total ? r->peers[pid] : NULL;
    if (!p || (!p->rdma_dirty && !p->rdma_inflight && !p->rdma_err))
        return 0;
    int rc = 0;
    if (p->rdma_dirty || p->rdma_inflight) {
        flush_wait f = {0, 0};
        rc = wio_engine_rdma_flush(r->e, pid, flush_cb, &f);
        if (rc == 0)
            rc = wio_engine_wait_until(r->e, flush_over, &f, 0);
        else if (rc == 1)
            rc = 0;
        else /* no connection to flush: a lost peer says so; else its endpoint closed, flushing */
            rc = wio_engine_peer_error(r->e, pid);
        if (!rc)
            rc = f.err;
        /* completions come in the same progress as the flush; wait for their records too */
        drain_arg a = {r, p, pid};
        int rc2 = wio_engine_wait_until(r->e, drained, &a, 0);
        if (!rc)
            rc = rc2 ? rc2 : wio_engine_peer_error(r->e, pid);
        p->rdma_dirty = 0;
    }
    if (!rc && p->rdma_err)
        rc = p->rdma_err;
    p->rdma_err = 0;
    if (rc)
        return wio_fail(rc, "one-sided operations over RDMA on process %u failed (%s)", (unsigned)pid,
                        waitio_strerror(rc));
    return 0;
}

int wio_rdma_quiet(wio_rma *r)
{
    int rc = 0;
    for (uint32_t pid = 0; pid < r->e->nprocs_total; pid++) {
        int f = wio_rdma_flush(r, pid);
        if (f && !rc)
            rc = f;
    }
    r->rdma_fence_due = 0;
    return rc;
}

/* UCX orders nothing by itself: a fence after RDMA operations is UCX's worker fence (or, where
 * that fails, a quiet). */
int wio_rdma_fence(wio_rma *r)
{
    if (!r->rdma_fence_due)
        return 0;
    r->rdma_fence_due = 0;
    return wio_engine_rdma_fence(r->e) == 0 ? 0 : wio_rdma_quiet(r);
}

/* A put future's remote completion: a request that completes at the flush's callback. */
typedef struct flush_req {
    wio_rma *rma;
    uint64_t req_id;
} flush_req;

static void flush_req_done(void *arg, int err)
{
    flush_req *f = arg;
    wio_req_impl *q = wio_req_lookup(f->rma->e, f->req_id);
    if (q && q->state != WIO_RS_DONE)
        wio_req_complete(q, err);
    free(f);
}

int wio_rdma_flush_begin(wio_rma *r, uint32_t pid, wio_req_impl **out)
{
    *out = NULL;
    wio_rma_peer *p = pid < r->e->nprocs_total ? r->peers[pid] : NULL;
    if (!p || !p->rdma_dirty)
        return 0;
    wio_req_impl *q = wio_req_alloc(r->e, WIO_REQ_RMA);
    flush_req *f = q ? malloc(sizeof *f) : NULL;
    if (!f) {
        if (q)
            wio_req_release(r->e, q);
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    }
    q->state = WIO_RS_RMA;
    q->peer_id = pid;
    q->tag = WIO_RMA_FLUSH;
    *f = (flush_req){r, wio_req_id(q)};
    int rc = wio_engine_rdma_flush(r->e, pid, flush_req_done, f);
    if (rc != 0) { /* nothing outstanding on the endpoint, or it is gone (its close flushes) */
        free(f);
        wio_req_complete(q, rc == 1 ? 0 : wio_engine_peer_error(r->e, pid));
    }
    *out = q;
    return 0;
}
