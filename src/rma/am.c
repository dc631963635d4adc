/*
 * am.c — one-sided operations as active messages over the engine (docs/protocol.md, "One-sided"):
 * the origin sends an RMA frame on its connection to the target; the target's progress (its own
 * WaitIO calls, or its progress thread) applies it to its memory after checking the window and
 * the bounds, and answers with RMA_REPLY frames where the operation returns something.
 *
 * Origin: an operation is an engine request of kind WIO_REQ_RMA naming the target, so the
 * engine fails it like any request when the target is lost. Its frames are send items (a put
 * longer than the chunk size is several PUT frames, queued at once so that nothing overtakes
 * them). Frames without reply (put, non-fetching atomics) mark the target dirty; a flush is one
 * FLUSH frame whose reply comes once every earlier frame was applied — a connection delivers in
 * order — and carries the first error the target refused such a frame with. Operations waiting
 * for a reply are limited per target (WAITIO_RMA_MAX_INFLIGHT); the target enforces a hard limit.
 *
 * Target: a PUT's payload is read straight into the window (the stream reads large payloads in
 * place); a GET's reply frames are written straight from the window; atomics use atomic.c;
 * calls are queued for rpc.c, which runs them after the progress round.
 *
 * Device memory (gpu.h), which the CPU never loads or stores: a window part in device memory
 * has a PUT read into a per-origin host buffer and copied there by the GPU at the frame's end, a
 * GET answered from a host copy (owned by the reply, counted against WAITIO_RMA_MAX_QUEUED; the
 * origin asks for DEVICE_GET_PIECE bytes per frame), an atomic copied in, applied and copied out.
 * At the origin, a device source is copied to host memory first (the operation owns the copy);
 * a device destination (get, fetched atomic) receives into host memory, copied to it when the
 * operation completes.
 */
#define WIO_LOG_SUBSYS WIO_SUB_RMA /* this file logs as "rma" (WAITIO_LOG=rma=LEVEL) */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "gpu/gpu.h"
#include "rma/rma.h"

#define GET_PIECE (1u << 30)           /* bytes asked for by one GET frame (src is 32 bits) */
#define DEVICE_GET_PIECE (4u << 20)    /* ... of a part in device memory: the target copies each */
/* What one origin may make this process hold: replies queued to it and its calls waiting to
 * run, at most TARGET_MAX_QUEUED of them and r->max_queued bytes (WAITIO_RMA_MAX_QUEUED). Bytes
 * are what the target allocates: each entry's structures and send items, a call's arguments, a
 * reply's own copy, plus ENTRY_OVERHEAD per allocation; a GET reply borrows the window's memory
 * and costs only its items (the window exists anyway; the free waits for it, window.c). An origin
 * that goes over is dropped (logged): a well-behaved one has at most WAITIO_RMA_MAX_INFLIGHT
 * operations waiting per target, far below both (docs/one-sided.md, "Resources"). */
#define TARGET_MAX_QUEUED (1u << 16)
#define ENTRY_OVERHEAD 64u

typedef struct am_op {
    wio_rma *rma;
    int op;
    int implicit;
    int expects_reply;
    int sending;             /* op_send is queueing its frames: completion waits for it */
    int err;                 /* first error of a frame */
    int finished, finish_err; /* completed while op_send was queueing */
    size_t items_left;
    wio_send_item *items;    /* frames beyond the request's own item */
    uint64_t base_off;       /* GET: the target offset of buf[0] */
    void *owned;             /* a copy of the payload (fire-and-forget calls, device sources), or
                              * the host memory a device destination's data lands in first */
    void *dev_dst;           /* the device destination: owned (or result) is copied there at the end */
    uint8_t operands[16];    /* AMO payload */
    uint8_t result[8];       /* a fetched value for a device result */
} am_op;

typedef struct am_reply {
    wio_send_item item;
    wio_send_item *more;
    size_t left;
    wio_rma *rma;
    uint32_t peer;
    void *owned;
    struct waitio_win *borrowed; /* the window whose memory the payload is */
    wio_list blink;              /* on rma->borrowed while it borrows */
    size_t charged;              /* counted against its peer's queue caps */
    uint8_t small[8];
} am_reply;

/* ---- origin: operations ---------------------------------------------------------------------- */

static void op_free_ext(wio_req_impl *q)
{
    am_op *x = q->ext;
    if (!x)
        return;
    free(x->items);
    free(x->owned);
    free(x);
    q->ext = NULL;
}

/* The operation is over (err 0: done). Its target no longer owes it a reply. */
static void op_finish(wio_req_impl *q, int err)
{
    am_op *x = q->ext;
    if (q->state == WIO_RS_DONE || !x)
        return;
    if (x->sending) { /* op_send finishes it */
        if (!x->finished) {
            x->finished = 1;
            x->finish_err = err;
        }
        return;
    }
    if (x->expects_reply) {
        wio_rma_peer *p = x->rma->peers[q->peer_id];
        if (p && p->inflight)
            p->inflight--;
    }
    if (!err && x->dev_dst && q->cap) /* the data is here, in host memory: now to the device */
        err = wio_gpu_copy(x->dev_dst, q->buf, q->cap);
    op_free_ext(q);
    wio_req_complete(q, err);
}

static void item_done(wio_send_item *it, int err)
{
    wio_req_impl *q = it->owner;
    am_op *x = q->ext;
    if (!x || q->state == WIO_RS_DONE)
        return;
    if (x->items_left)
        x->items_left--;
    if (err && !x->err)
        x->err = err;
    if (x->err)
        op_finish(q, x->err);
    else if (!x->items_left && !x->expects_reply)
        op_finish(q, 0);
}

typedef struct limit_arg {
    const wio_rma *rma;
    const wio_rma_peer *p;
    uint32_t pid;
} limit_arg;

static int below_limit(void *arg)
{
    limit_arg *a = arg;
    return a->p->inflight < a->rma->max_inflight || wio_engine_peer_error(a->rma->e, a->pid);
}

/* A new operation on process pid (its request, state WIO_RS_RMA). */
static int op_new(wio_rma *r, uint32_t pid, int op, int expects_reply, int implicit, wio_req_impl **out)
{
    wio_engine *e = r->e;
    int err = wio_engine_peer_error(e, pid);
    if (err)
        return wio_fail(err, "one-sided operation on process %u: %s", (unsigned)pid,
                        err == WAITIO_ERR_PEER_FINALIZED ? "it finalized" : "it is lost");
    wio_rma_peer *p = wio_rma_peer_get(r, pid);
    if (!p)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    /* RDMA operations to it not yet known complete there go first: the paths must not overtake */
    if (wio_rdma_pending(r, pid) && (err = wio_rdma_flush(r, pid)) != 0)
        return err;
    if (expects_reply && p->inflight >= r->max_inflight) {
        limit_arg a = {r, p, pid};
        int rc = wio_engine_wait_until(e, below_limit, &a, 0);
        if (rc)
            return rc;
        if ((err = wio_engine_peer_error(e, pid)))
            return wio_fail(err, "one-sided operation on process %u: it is gone", (unsigned)pid);
    }
    wio_req_impl *q = wio_req_alloc(e, WIO_REQ_RMA);
    am_op *x = q ? calloc(1, sizeof *x) : NULL;
    if (!x) {
        if (q)
            wio_req_release(e, q);
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory starting a one-sided operation");
    }
    r->ops_frames++;
    q->state = WIO_RS_RMA;
    q->peer_id = pid;
    q->tag = (uint64_t)op;
    q->ext = x;
    x->rma = r;
    x->op = op;
    x->implicit = implicit;
    x->expects_reply = expects_reply;
    if (expects_reply)
        p->inflight++;
    else
        p->dirty = 1;
    *out = q;
    return 0;
}

static void item_init(wio_send_item *it, wio_req_impl *q, const wio_frame_hdr *h, const void *payload, size_t len)
{
    memset(it, 0, sizeof *it);
    wio_list_init(&it->link);
    it->h = *h;
    it->payload = payload;
    it->total = len;
    it->done = item_done;
    it->owner = q;
}

static int implicit_add(wio_rma *r, wio_req_impl *q);

/* Queues n frames (fill sets frame k's fields and payload piece), then lets the operation
 * complete. Returns the operation's error if it already failed (the request is then complete). */
static int op_send(wio_rma *r, wio_req_impl *q, size_t n,
                   void (*fill)(wio_frame_hdr *h, const void **payload, size_t *len, size_t k, void *arg),
                   void *arg)
{
    am_op *x = q->ext;
    if (n > 1 && !(x->items = calloc(n - 1, sizeof *x->items))) {
        op_finish(q, WAITIO_ERR_NOMEM);
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory queueing a one-sided operation");
    }
    x->items_left = n;
    x->sending = 1;
    for (size_t k = 0; k < n && !x->err && q->state != WIO_RS_DONE; k++) {
        wio_frame_hdr h = {.type = WIO_FT_RMA, .tag = (uint64_t)x->op, .id = x->expects_reply ? wio_req_id(q) : 0};
        const void *payload = NULL;
        size_t len = 0;
        fill(&h, &payload, &len, k, arg);
        wio_send_item *it = k == 0 ? &q->item : &x->items[k - 1];
        item_init(it, q, &h, payload, len);
        wio_engine_send_frame(r->e, q->peer_id, it);
    }
    x->sending = 0;
    if (q->state != WIO_RS_DONE && x->finished)
        op_finish(q, x->finish_err);
    else if (q->state != WIO_RS_DONE && x->err)
        op_finish(q, x->err);
    if (q->state == WIO_RS_DONE) {
        op_free_ext(q); /* if the engine completed it meanwhile (peer lost) */
        if (q->status.error) {
            wio_engine_explain(r->e, q);
            return q->status.error;
        }
    }
    return 0;
}

/* Hands the operation to its caller, or keeps it as implicit (completed by flush / quiet). */
static int op_out(wio_rma *r, wio_req_impl *q, int rc, wio_req_impl **req)
{
    if (rc) {
        wio_req_release(r->e, q);
        return rc;
    }
    if (req) {
        *req = q;
        return 0;
    }
    return implicit_add(r, q);
}

/* ---- origin: put ---- */

typedef struct put_args {
    uint32_t wid;
    uint64_t off;
    const uint8_t *src;
    size_t len, chunk;
} put_args;

static void put_fill(wio_frame_hdr *h, const void **payload, size_t *len, size_t k, void *arg)
{
    put_args *a = arg;
    size_t at = k * a->chunk;
    h->gid = a->wid;
    h->aux = a->off + at;
    *payload = a->src + at;
    *len = a->len - at < a->chunk ? a->len - at : a->chunk;
}

int wio_am_put(wio_rma *r, struct waitio_win *w, int rank, size_t off, const void *src, size_t len,
               wio_req_impl **req)
{
    int dev = 0, rc = wio_rma_mem_device(src, len, &dev);
    void *copy = NULL;
    if (rc)
        return rc;
    if (dev) { /* the frames are written from host memory: a copy the operation owns */
        if (!(copy = malloc(len)))
            return wio_fail(WAITIO_ERR_NOMEM, "out of memory staging a %zu-byte put from device memory", len);
        if ((rc = wio_gpu_copy(copy, src, len))) {
            free(copy);
            return rc;
        }
        src = copy;
    }
    wio_req_impl *q;
    if ((rc = op_new(r, w->m[rank].pid, WIO_RMA_PUT, 0, req == NULL, &q))) {
        free(copy);
        return rc;
    }
    ((am_op *)q->ext)->owned = copy;
    put_args a = {w->m[rank].wid, off, src, len, r->chunk};
    size_t n = len ? (len + r->chunk - 1) / r->chunk : 1;
    rc = op_send(r, q, n, put_fill, &a);
    return op_out(r, q, rc, req);
}

/* ---- origin: get ---- */

typedef struct get_args {
    uint32_t wid;
    uint64_t off;
    size_t len, piece;
} get_args;

static void get_fill(wio_frame_hdr *h, const void **payload, size_t *len, size_t k, void *arg)
{
    get_args *a = arg;
    size_t at = k * a->piece;
    h->gid = a->wid;
    h->aux = a->off + at;
    h->src = (uint32_t)(a->len - at < a->piece ? a->len - at : a->piece);
    *payload = NULL;
    *len = 0;
}

int wio_am_get(wio_rma *r, struct waitio_win *w, int rank, size_t off, void *dst, size_t len,
               wio_req_impl **req)
{
    int dev = 0, rc = wio_rma_mem_device(dst, len, &dev);
    void *stage = NULL;
    if (rc)
        return rc;
    if (dev && !(stage = malloc(len)))
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory staging a %zu-byte get into device memory", len);
    wio_req_impl *q;
    if ((rc = op_new(r, w->m[rank].pid, WIO_RMA_GET, len > 0, req == NULL, &q))) {
        free(stage);
        return rc;
    }
    if (!len) { /* nothing to move: done at once */
        op_finish(q, 0);
        return op_out(r, q, 0, req);
    }
    am_op *x = q->ext;
    x->owned = stage;
    x->dev_dst = stage ? dst : NULL;
    q->buf = stage ? stage : dst;
    q->cap = len;
    q->status.len = len;
    x->base_off = off;
    size_t piece = w->m[rank].device ? DEVICE_GET_PIECE : GET_PIECE;
    get_args a = {w->m[rank].wid, off, len, piece};
    rc = op_send(r, q, (len + piece - 1) / piece, get_fill, &a);
    return op_out(r, q, rc, req);
}

/* ---- origin: atomics ---- */

typedef struct amo_args {
    uint32_t wid;
    uint64_t off;
    int type, op;
    const uint8_t *payload;
    size_t len;
} amo_args;

static void amo_fill(wio_frame_hdr *h, const void **payload, size_t *len, size_t k, void *arg)
{
    (void)k;
    amo_args *a = arg;
    h->gid = a->wid;
    h->aux = a->off;
    h->tag |= (uint64_t)a->type << 8 | (uint64_t)a->op << 16;
    *payload = a->payload;
    *len = a->len;
}

int wio_am_atomic(wio_rma *r, struct waitio_win *w, int rank, size_t off, int op, int type,
                  uint64_t operand, uint64_t compare, void *result, wio_req_impl **req)
{
    int dev = 0, rc = wio_rma_mem_device(result, wio_amo_size(type), &dev);
    if (rc)
        return rc;
    wio_req_impl *q;
    if ((rc = op_new(r, w->m[rank].pid, WIO_RMA_AMO, result != NULL, req == NULL && !result, &q)))
        return rc;
    am_op *x = q->ext;
    wio_put_le64(x->operands, operand);
    wio_put_le64(x->operands + 8, compare);
    x->dev_dst = dev ? result : NULL; /* a device result: fetched here first */
    q->buf = dev ? x->result : result;
    q->cap = wio_amo_size(type);
    q->status.len = q->cap;
    amo_args a = {w->m[rank].wid, off, type, op, x->operands,
                  op == WAITIO_AMO_FETCH ? 0 : op == WAITIO_AMO_CSWAP ? 16 : 8};
    rc = op_send(r, q, 1, amo_fill, &a);
    if (result && !req && !rc) /* blocking fetch */
        return wio_rma_wait(r, q);
    return op_out(r, q, rc, req);
}

/* ---- origin: remote procedure calls ---- */

typedef struct rpc_args {
    uint32_t gid;
    int id;
    const void *args;
    size_t len, reply_cap;
} rpc_args;

static void rpc_fill(wio_frame_hdr *h, const void **payload, size_t *len, size_t k, void *arg)
{
    (void)k;
    rpc_args *a = arg;
    h->gid = a->gid;
    h->src = (uint32_t)a->id;
    h->aux = a->reply_cap;
    *payload = a->args;
    *len = a->len;
}

int wio_am_rpc(wio_rma *r, wio_group *g, int rank, int id, const void *args, size_t len,
               void *reply, size_t reply_cap, wio_req_impl **req)
{
    wio_req_impl *q;
    int rc = op_new(r, g->members[rank], WIO_RMA_RPC, 1, req == NULL, &q);
    if (rc)
        return rc;
    am_op *x = q->ext;
    if (!req && len) { /* fire and forget: the arguments are the operation's own copy */
        if (!(x->owned = malloc(len))) {
            op_finish(q, WAITIO_ERR_NOMEM);
            wio_req_release(r->e, q);
            return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
        }
        memcpy(x->owned, args, len);
        args = x->owned;
    }
    q->buf = reply;
    q->cap = reply_cap;
    q->grp = g;
    q->gid = g->gid;
    q->rank = rank;
    rpc_args a = {g->gid, id, args, len, reply_cap};
    rc = op_send(r, q, 1, rpc_fill, &a);
    return op_out(r, q, rc, req);
}

/* ---- origin: flush, quiet, fence ---- */

static void flush_fill(wio_frame_hdr *h, const void **payload, size_t *len, size_t k, void *arg)
{
    (void)h;
    (void)k;
    (void)arg;
    *payload = NULL;
    *len = 0;
}

/* Starts a FLUSH to pid (which must be dirty); the request completes with the target's verdict. */
static int flush_start(wio_rma *r, uint32_t pid, wio_req_impl **out)
{
    wio_rma_peer *p = r->peers[pid];
    p->dirty = 0;
    wio_req_impl *q;
    int rc = op_new(r, pid, WIO_RMA_FLUSH, 1, 0, &q);
    if (rc)
        return rc;
    rc = op_send(r, q, 1, flush_fill, NULL);
    if (rc) {
        wio_req_release(r->e, q);
        return rc;
    }
    *out = q;
    return 0;
}

int wio_am_flush_begin(wio_rma *r, uint32_t pid, wio_req_impl **out)
{
    *out = NULL;
    const wio_rma_peer *p = r->peers[pid];
    if (p && p->dirty)
        return flush_start(r, pid, out);
    return wio_rdma_flush_begin(r, pid, out); /* a put that went over RDMA */
}

static int implicit_add(wio_rma *r, wio_req_impl *q)
{
    if (r->nimplicit == r->cap_implicit) {
        /* reap what has completed before growing */
        size_t k = 0;
        for (size_t i = 0; i < r->nimplicit; i++) {
            wio_req_impl *o = r->implicit[i];
            if (o->state == WIO_RS_DONE && !o->ext) {
                if (o->status.error && !r->implicit_err) {
                    wio_engine_explain(r->e, o);
                    r->implicit_err = o->status.error;
                }
                wio_req_release(r->e, o);
                continue;
            }
            r->implicit[k] = o;
            r->implicit_ids[k++] = r->implicit_ids[i];
        }
        r->nimplicit = k;
    }
    if (r->nimplicit == r->cap_implicit) {
        size_t n = r->cap_implicit ? r->cap_implicit * 2 : 64;
        wio_req_impl **a = realloc(r->implicit, n * sizeof *a);
        if (a)
            r->implicit = a;
        uint64_t *ids = a ? realloc(r->implicit_ids, n * sizeof *ids) : NULL;
        if (!ids) {
            /* cannot track it: wait for it now */
            return wio_rma_wait(r, q);
        }
        r->implicit_ids = ids;
        r->cap_implicit = n;
    }
    r->implicit[r->nimplicit] = q;
    r->implicit_ids[r->nimplicit++] = wio_req_id(q);
    return 0;
}

typedef struct implicit_arg {
    const wio_rma *rma;
    uint32_t pid;
} implicit_arg;

static int implicit_done(void *arg)
{
    const implicit_arg *a = arg;
    for (size_t i = 0; i < a->rma->nimplicit; i++) {
        const wio_req_impl *o = a->rma->implicit[i];
        if (o->state != WIO_RS_DONE && (a->pid == WIO_ID_BOOT || o->peer_id == a->pid))
            return 0;
    }
    return 1;
}

/* Waits for every implicit operation (on pid, or all with pid = WIO_ID_BOOT), releases them. */
static int implicit_complete(wio_rma *r, uint32_t pid)
{
    implicit_arg a = {r, pid};
    int rc = wio_engine_wait_until(r->e, implicit_done, &a, 0);
    if (rc)
        return rc;
    size_t k = 0;
    for (size_t i = 0; i < r->nimplicit; i++) {
        wio_req_impl *o = r->implicit[i];
        if (pid != WIO_ID_BOOT && o->peer_id != pid) {
            r->implicit[k] = o;
            r->implicit_ids[k++] = r->implicit_ids[i];
            continue;
        }
        op_free_ext(o);
        if (o->status.error && !rc) {
            wio_engine_explain(r->e, o);
            rc = o->status.error;
        }
        wio_req_release(r->e, o);
    }
    r->nimplicit = k;
    if (!rc && r->implicit_err)
        rc = r->implicit_err;
    r->implicit_err = 0;
    return rc;
}

int wio_am_flush(wio_rma *r, uint32_t pid)
{
    wio_rma_peer *p = r->peers[pid];
    int rc = 0;
    if (p && p->dirty) {
        wio_req_impl *q;
        rc = flush_start(r, pid, &q);
        if (!rc)
            rc = wio_rma_wait(r, q);
    }
    int rc2 = r->nimplicit ? implicit_complete(r, pid) : 0;
    int rc3 = wio_rdma_flush(r, pid);
    return rc ? rc : rc2 ? rc2 : rc3;
}

/* Flushes every dirty target at once (the round trips overlap), then the implicit operations;
 * only_local: the targets of this host only (fence). */
static int flush_many(wio_rma *r, int only_local)
{
    wio_engine *e = r->e;
    int rc = 0;
    wio_req_impl *stack[16], **qs = stack;
    size_t n = 0, cap = 16;
    for (uint32_t pid = 0; pid < e->nprocs_total; pid++) {
        wio_rma_peer *p = r->peers[pid];
        if (!p || !p->dirty)
            continue;
        if (only_local && e->table[pid].host_id != e->table[e->my_id].host_id)
            continue;
        if (n == cap) {
            wio_req_impl **a = malloc(cap * 2 * sizeof *a);
            if (!a) {
                rc = wio_fail(WAITIO_ERR_NOMEM, "out of memory");
                break;
            }
            memcpy(a, qs, n * sizeof *a);
            if (qs != stack)
                free(qs);
            qs = a;
            cap *= 2;
        }
        int f = flush_start(r, pid, &qs[n]);
        if (f) {
            if (!rc)
                rc = f;
            continue;
        }
        n++;
    }
    for (size_t i = 0; i < n; i++) {
        int f = wio_rma_wait(r, qs[i]);
        if (f && !rc)
            rc = f;
    }
    if (qs != stack)
        free(qs);
    return rc;
}

int wio_am_quiet(wio_rma *r)
{
    int rc = flush_many(r, 0);
    int rc2 = r->nimplicit || r->implicit_err ? implicit_complete(r, WIO_ID_BOOT) : 0;
    int rc3 = wio_rdma_quiet(r);
    atomic_thread_fence(memory_order_seq_cst);
    return rc ? rc : rc2 ? rc2 : rc3;
}

/* Frames to one target are applied in order; only a target of this host can also be reached
 * directly (its heap mapped, single copy), so only those are flushed to order the two paths. */
int wio_am_fence(wio_rma *r)
{
    int rc = r->direct ? flush_many(r, 1) : 0;
    int rc2 = wio_rdma_fence(r); /* UCX itself orders nothing */
    atomic_thread_fence(memory_order_seq_cst);
    return rc ? rc : rc2;
}

/* ---- target: serving ------------------------------------------------------------------------- */

static void refuse(wio_rma_peer *p, int err, uint32_t wid, uint64_t off, uint64_t len)
{
    if (p->err)
        return;
    p->err = err;
    p->err_win = wid;
    p->err_off = off;
    p->err_len = len;
}

/* The window part [off, off+len) of w, or an error. */
static int in_bounds(const struct waitio_win *w, uint64_t off, uint64_t len)
{
    return wio_win_in_bounds(w, off, len); /* the data window's holes too (window.c) */
}

/* Counts an entry of `bytes` that origin `peer` makes us hold. 0, or -1 when that would take it
 * over the caps: logged once, and the caller drops the connection (a frame hook's -1). */
static int charge(wio_rma *r, uint32_t peer, size_t bytes)
{
    wio_rma_peer *p = r->peers[peer];
    if (!p)
        return 0;
    if (!p->over && p->queued < TARGET_MAX_QUEUED && bytes <= r->max_queued &&
        p->queued_bytes <= r->max_queued - bytes) {
        p->queued++;
        p->queued_bytes += bytes;
        return 0;
    }
    if (!p->over)
        wio_warn("process %u exceeded the one-sided queue limit (%u replies and calls, %zu bytes held "
                 "for it; at most %u and WAITIO_RMA_MAX_QUEUED=%zu): dropping its connection",
                 (unsigned)peer, (unsigned)p->queued, p->queued_bytes, TARGET_MAX_QUEUED, r->max_queued);
    p->over = 1;
    return -1;
}

void wio_am_uncharge(wio_rma *r, uint32_t peer, size_t bytes)
{
    wio_rma_peer *p = r->peers[peer];
    if (!p || !bytes)
        return;
    if (p->queued)
        p->queued--;
    p->queued_bytes = p->queued_bytes >= bytes ? p->queued_bytes - bytes : 0;
}

static void reply_done(wio_send_item *it, int err)
{
    (void)err;
    am_reply *a = it->owner;
    if (a->borrowed)
        a->borrowed->progress++; /* a piece less that reads the window: a free waiting sees it move */
    if (--a->left)
        return;
    wio_am_uncharge(a->rma, a->peer, a->charged);
    if (a->borrowed) {
        wio_list_remove(&a->blink);
        wio_win_reply_done(a->borrowed);
    }
    free(a->owned);
    free(a->more);
    free(a);
}

/* Sends a reply: gid = its total length, aux = aux0 + the piece's offset. Small payloads are
 * copied; others are borrowed until written (a window's memory: its free waits until then, and
 * the mapping stays until then if it is retired at finalize) or, with owned, freed after. -1
 * (payload freed if owned) when out of memory or over the peer's queue caps (charge). */
int wio_am_reply(wio_rma *r, uint32_t peer, uint64_t req_id, int op, int err, const void *payload,
                 size_t len, uint64_t aux0, int owned, struct waitio_win *borrow)
{
    size_t n = len ? (len + r->chunk - 1) / r->chunk : 1;
    size_t cost = sizeof(am_reply) + ENTRY_OVERHEAD + (n - 1) * (sizeof(wio_send_item) + 1) +
                  (owned ? len : 0);
    if (charge(r, peer, cost) != 0) {
        if (owned)
            free((void *)payload);
        return -1;
    }
    am_reply *a = calloc(1, sizeof *a);
    wio_send_item *more = n > 1 ? calloc(n - 1, sizeof *more) : NULL;
    if (!a || (n > 1 && !more)) {
        free(a);
        free(more);
        if (owned)
            free((void *)payload);
        wio_am_uncharge(r, peer, cost);
        wio_error("out of memory answering process %u", (unsigned)peer);
        return -1;
    }
    a->charged = cost;
    wio_list_init(&a->blink);
    a->more = more;
    a->left = n;
    a->rma = r;
    a->peer = peer;
    a->owned = owned ? (void *)payload : NULL;
    if (len <= sizeof a->small && payload && !owned) {
        memcpy(a->small, payload, len);
        payload = a->small;
    } else if (borrow && len) {
        a->borrowed = borrow;
        borrow->replies++;
        wio_list_insert_tail(&r->borrowed, &a->blink);
    }
    for (size_t k = 0; k < n; k++) {
        wio_send_item *it = k == 0 ? &a->item : &more[k - 1];
        size_t at = k * r->chunk;
        wio_list_init(&it->link);
        it->h.type = WIO_FT_RMA_REPLY;
        it->h.tag = (uint64_t)op;
        it->h.id = req_id;
        it->h.src = (uint32_t)err;
        it->h.gid = (uint32_t)len;
        it->h.aux = aux0 + at;
        it->payload = len ? (const uint8_t *)payload + at : NULL;
        it->total = len ? (len - at < r->chunk ? len - at : r->chunk) : 0;
        it->done = reply_done;
        it->owner = a;
    }
    for (size_t k = 0; k < n; k++)
        wio_engine_send_frame(r->e, peer, k == 0 ? &a->item : &more[k - 1]);
    return 0;
}

static int begin_request(wio_rma *r, uint32_t peer, const wio_frame_hdr *h, uint8_t **dest)
{
    wio_rma_peer *p = wio_rma_peer_get(r, peer);
    if (!p || p->over)
        return -1; /* over its caps: every further frame drops the connection */
    p->rx_call = NULL;
    r->served++;
    int op = (int)(h->tag & 0xff);
    switch (op) {
    case WIO_RMA_PUT: {
        if (h->id)
            return -1;
        struct waitio_win *w = wio_win_lookup(r, h->gid, peer);
        if (!w || !in_bounds(w, h->aux, h->len)) {
            refuse(p, w ? WAITIO_ERR_BOUNDS : WAITIO_ERR_ARG, h->gid, h->aux, h->len);
            wio_debug("refused a put of %llu bytes at offset %llu of window %u from process %u",
                      (unsigned long long)h->len, (unsigned long long)h->aux, (unsigned)h->gid, (unsigned)peer);
            return 0; /* the payload is read and dropped */
        }
        if (w->device && h->len) { /* read into host memory; end_request copies it to the device */
            if (p->rx_stage_cap < h->len) {
                uint8_t *b = realloc(p->rx_stage, h->len);
                if (!b) {
                    wio_error("out of memory receiving a put into device memory from process %u", (unsigned)peer);
                    return -1;
                }
                p->rx_stage = b;
                p->rx_stage_cap = h->len;
            }
            *dest = p->rx_stage;
        } else {
            *dest = w->base + h->aux;
        }
        p->rx_win = w; /* read into it until end_request: a free of w waits for that */
        w->writers++;
        return 0;
    }
    case WIO_RMA_GET:
    case WIO_RMA_FLUSH:
        return h->len == 0 && (h->id || op == WIO_RMA_GET) ? 0 : -1;
    case WIO_RMA_AMO:
        if (h->len > sizeof p->rx_small || (h->len != 0 && h->len != 8 && h->len != 16))
            return -1;
        *dest = p->rx_small;
        return 0;
    case WIO_RMA_RPC: {
        if (!h->id || h->len > WAITIO_RPC_ARGS_MAX)
            return -1;
        /* counted from here: the arguments are allocated now, the call waits, and then its reply
         * (charged on its own when the call has run) */
        size_t cost = sizeof(wio_rpc_call) + ENTRY_OVERHEAD + (size_t)h->len;
        if (charge(r, peer, cost) != 0)
            return -1;
        wio_rpc_call *c = malloc(sizeof *c + (h->len ? h->len : 1));
        if (!c) {
            wio_am_uncharge(r, peer, cost);
            return -1;
        }
        memset(c, 0, sizeof *c);
        c->args = (uint8_t *)(c + 1);
        c->len = h->len;
        c->charged = cost;
        p->rx_call = c;
        *dest = c->args;
        return 0;
    }
    default:
        return -1;
    }
}

static int end_get(wio_rma *r, uint32_t peer, const wio_frame_hdr *h)
{
    if (!h->id)
        return -1;
    struct waitio_win *w = wio_win_lookup(r, h->gid, peer);
    if (!w || !in_bounds(w, h->aux, h->src))
        return wio_am_reply(r, peer, h->id, WIO_RMA_GET, w ? WAITIO_ERR_BOUNDS : WAITIO_ERR_ARG, NULL, 0, 0, 0, NULL);
    if (w->device && h->src) { /* device memory: the reply owns a host copy */
        void *copy = malloc(h->src);
        int err = copy ? wio_gpu_copy(copy, w->base + h->aux, h->src) : WAITIO_ERR_NOMEM;
        if (err) {
            free(copy);
            wio_warn("answering a get from device memory of process %u: %s", (unsigned)peer,
                     copy ? waitio_error_message() : "out of memory");
            return wio_am_reply(r, peer, h->id, WIO_RMA_GET, err, NULL, 0, 0, 0, NULL);
        }
        return wio_am_reply(r, peer, h->id, WIO_RMA_GET, 0, copy, h->src, h->aux, 1, NULL);
    }
    /* straight from the window; the offsets are target offsets, so pieces land where they belong */
    return wio_am_reply(r, peer, h->id, WIO_RMA_GET, 0, w->base + h->aux, h->src, h->aux, 0, w);
}

static int end_amo(wio_rma *r, wio_rma_peer *p, uint32_t peer, const wio_frame_hdr *h)
{
    int type = (int)((h->tag >> 8) & 0xff), op = (int)((h->tag >> 16) & 0xff);
    size_t want = op == WAITIO_AMO_FETCH ? 0 : op == WAITIO_AMO_CSWAP ? 16 : 8;
    if (!wio_amo_size(type) || op < WAITIO_AMO_FETCH || op >= WAITIO_AMO_OP_MAX_ || h->len != want)
        return -1;
    struct waitio_win *w = wio_win_lookup(r, h->gid, peer);
    size_t size = wio_amo_size(type);
    int err = !w ? WAITIO_ERR_ARG : !in_bounds(w, h->aux, size) ? WAITIO_ERR_BOUNDS :
              ((uintptr_t)(w->base + h->aux) % size) ? WAITIO_ERR_ARG : 0;
    if (!err && !wio_amo_defined(op, type)) /* e.g. bitwise ops on floating-point types */
        err = WAITIO_ERR_ARG;
    if (err) {
        if (h->id)
            return wio_am_reply(r, peer, h->id, WIO_RMA_AMO, err, NULL, 0, 0, 0, NULL);
        refuse(p, err, h->gid, h->aux, size);
        return 0;
    }
    uint64_t old = 0;
    if (w->device) {
        err = wio_amo_apply_device(w->base + h->aux, op, type, wio_get_le64(p->rx_small),
                                   wio_get_le64(p->rx_small + 8), &old);
        if (err) {
            wio_warn("an atomic on device memory for process %u: %s", (unsigned)peer, waitio_error_message());
            if (h->id)
                return wio_am_reply(r, peer, h->id, WIO_RMA_AMO, err, NULL, 0, 0, 0, NULL);
            refuse(p, err, h->gid, h->aux, size);
            return 0;
        }
    } else {
        old = wio_amo_apply(w->base + h->aux, op, type, wio_get_le64(p->rx_small), wio_get_le64(p->rx_small + 8));
    }
    if (h->id) {
        uint8_t v[8];
        if (size == 4) {
            uint32_t o32 = (uint32_t)old;
            memcpy(v, &o32, 4);
        } else {
            memcpy(v, &old, 8);
        }
        return wio_am_reply(r, peer, h->id, WIO_RMA_AMO, 0, v, size, 0, 0, NULL);
    }
    return 0;
}

/* The PUT being received from p was read into its window (or cut off): the window is free to go. */
static void put_finished(wio_rma_peer *p)
{
    struct waitio_win *w = p->rx_win;
    p->rx_win = NULL;
    if (w)
        wio_win_write_done(w);
}

static int end_request(wio_rma *r, uint32_t peer, const wio_frame_hdr *h)
{
    wio_rma_peer *p = r->peers[peer];
    if (!p)
        return -1;
    switch ((int)(h->tag & 0xff)) {
    case WIO_RMA_PUT: {
        struct waitio_win *w = p->rx_win;
        int err = w && w->device && h->len ? wio_gpu_copy(w->base + h->aux, p->rx_stage, h->len) : 0;
        if (err) { /* reported by the origin's next flush */
            wio_warn("a put into device memory from process %u: %s", (unsigned)peer, waitio_error_message());
            refuse(p, err, h->gid, h->aux, h->len);
        }
        put_finished(p);
        return 0;
    }
    case WIO_RMA_GET:
        return end_get(r, peer, h);
    case WIO_RMA_AMO:
        return end_amo(r, p, peer, h);
    case WIO_RMA_FLUSH: {
        int err = p->err;
        if (err)
            wio_info("flush from process %u: reporting a refused operation (window %u, offset %llu, "
                     "%llu bytes: %s)", (unsigned)peer, (unsigned)p->err_win, (unsigned long long)p->err_off,
                     (unsigned long long)p->err_len, waitio_strerror(err));
        p->err = 0;
        return wio_am_reply(r, peer, h->id, WIO_RMA_FLUSH, err, NULL, 0, 0, 0, NULL);
    }
    case WIO_RMA_RPC: {
        wio_rpc_call *c = p->rx_call;
        p->rx_call = NULL;
        if (!c)
            return -1;
        c->peer = peer;
        c->gid = h->gid;
        c->id = h->src;
        c->origin_req = h->id;
        c->reply_cap = h->aux < WAITIO_RPC_REPLY_MAX ? (size_t)h->aux : WAITIO_RPC_REPLY_MAX;
        wio_list_insert_tail(&r->calls, &c->link);
        if (!r->in_handler)
            r->e->ext_work = 1;
        return 0;
    }
    default:
        return -1;
    }
}

/* ---- origin: replies ------------------------------------------------------------------------- */

static wio_req_impl *reply_op(wio_rma *r, uint32_t peer, const wio_frame_hdr *h)
{
    wio_req_impl *q = wio_req_lookup(r->e, h->id);
    if (!q || q->kind != WIO_REQ_RMA || q->state != WIO_RS_RMA || q->peer_id != peer || !q->ext)
        return NULL;
    am_op *x = q->ext;
    if (!x->expects_reply || (uint64_t)x->op != (h->tag & 0xff))
        return NULL;
    return q;
}

static int begin_reply(wio_rma *r, uint32_t peer, const wio_frame_hdr *h, uint8_t **dest)
{
    wio_req_impl *q = reply_op(r, peer, h);
    if (!q)
        return -1;
    am_op *x = q->ext;
    if (h->src) /* an error: no payload */
        return h->len == 0 && h->src < WAITIO_ERR_MAX_ ? 0 : -1;
    switch (x->op) {
    case WIO_RMA_GET:
        if (h->aux < x->base_off || h->aux - x->base_off > q->cap || h->len > q->cap - (h->aux - x->base_off))
            return -1;
        *dest = q->buf + (h->aux - x->base_off);
        return 0;
    case WIO_RMA_AMO:
        if (h->len != q->cap)
            return -1;
        *dest = q->buf;
        return 0;
    case WIO_RMA_RPC: /* gid: the whole reply's length, aux: this piece's offset */
        if (h->gid > q->cap || h->aux > h->gid || h->len > h->gid - h->aux)
            return -1;
        q->status.len = h->gid;
        *dest = q->buf + h->aux;
        return 0;
    case WIO_RMA_FLUSH:
        return h->len == 0 ? 0 : -1;
    default:
        return -1;
    }
}

static int end_reply(wio_rma *r, uint32_t peer, const wio_frame_hdr *h)
{
    wio_req_impl *q = reply_op(r, peer, h);
    if (!q)
        return -1;
    if (h->src) {
        op_finish(q, (int)h->src);
        return 0;
    }
    int op = ((am_op *)q->ext)->op;
    if (op == WIO_RMA_GET || op == WIO_RMA_RPC) {
        q->received += h->len;
        if (q->received < (op == WIO_RMA_GET ? q->cap : q->status.len))
            return 0;
    }
    op_finish(q, 0);
    return 0;
}

/* ---- engine hooks ---------------------------------------------------------------------------- */

int wio_am_frame_begin(void *ctx, uint32_t peer, const wio_frame_hdr *h, uint8_t **dest)
{
    wio_rma *r = ctx;
    return h->type == WIO_FT_RMA ? begin_request(r, peer, h, dest) : begin_reply(r, peer, h, dest);
}

int wio_am_frame_end(void *ctx, uint32_t peer, const wio_frame_hdr *h)
{
    wio_rma *r = ctx;
    return h->type == WIO_FT_RMA ? end_request(r, peer, h) : end_reply(r, peer, h);
}

void wio_am_peer_lost(wio_rma *r, uint32_t peer, int err)
{
    (void)err;
    wio_engine *e = r->e;
    wio_rma_peer *p = r->peers[peer];
    if (p) {
        p->inflight = 0;
        p->dirty = 0;
        p->rdma_dirty = 0;    /* nothing left to flush there: its RDMA operations fail with it */
        p->rdma_inflight = 0;
        put_finished(p); /* its connection is closed: nothing more is read into the window */
        if (p->rx_call) {
            wio_am_uncharge(r, peer, p->rx_call->charged);
            free(p->rx_call);
            p->rx_call = NULL;
        }
    }
    /* its operations were completed by the engine: their state goes (unless op_send runs) */
    for (uint32_t i = 0; i < e->nreqs; i++) {
        wio_req_impl *q = e->reqs[i];
        if (q && q->kind == WIO_REQ_RMA && q->peer_id == peer && q->state == WIO_RS_DONE && q->ext &&
            !((am_op *)q->ext)->sending)
            op_free_ext(q);
    }
    /* Calls that arrived whole stay queued and run (without a reply): the last thing a process
     * sends before it exits may be a call — shmem_global_exit's — and its end of the connection
     * is often read in the same progress round as the call; dropping them here lost it. */
}

void wio_am_drop_holders(wio_rma *r, struct waitio_win *w)
{
    wio_engine *e = r->e;
    /* each process's holding is decided before it is dropped: dropping completes its replies,
     * which leave the list */
    for (uint32_t pid = 0; pid < e->nprocs_total; pid++) {
        wio_rma_peer *p = r->peers[pid];
        int holds = p && p->rx_win == w;
        wio_list *pos;
        for (pos = r->borrowed.next; !holds && pos != &r->borrowed; pos = pos->next) {
            const am_reply *a = WIO_CONTAINER_OF(pos, am_reply, blink);
            holds = a->borrowed == w && a->peer == pid;
        }
        if (!holds)
            continue;
        wio_warn("freeing a window: process %u moved none of its transfers on the window's memory in "
                 "WAITIO_PEER_TIMEOUT (%g s); dropping its connection", (unsigned)pid, e->cfg.peer_timeout);
        wio_engine_drop_peer(e, pid, "it held a freed window's memory (no progress in WAITIO_PEER_TIMEOUT)");
    }
}
