/*
 * future.c — the futures of waitio_rma.h (docs/one-sided.md, "Futures"): one completion object
 * for one-sided operations, calls, non-blocking collectives and distributed objects, chained with
 * then and combined with when_all.
 *
 * A future is a node with a reference count. Its sources are either requests (polled: the
 * pending list) or other futures (edges: a completed future notifies the futures that depend on
 * it). Completion never calls anything: it marks the future and puts it on the ready queue; the
 * queue is drained by the caller's progress (waitio_progress, waitio_future_test / _wait), which
 * runs the then callbacks one after the other. So a chain of any length completes in a loop, not
 * in recursion, and a callback that waits drains the queue only down to a fixed nesting depth.
 *
 * References: the program's handle (one), the pending list while its requests run, the ready
 * queue while it is queued, and one per edge that points at it (a future waiting on another is
 * kept alive by that other). A future with no reference left goes.
 *
 * Non-blocking collectives are small state machines over the engine's point-to-point in the
 * group's collective context (linear: the root exchanges with every member), advanced by the
 * same polling. Distributed objects are a table of named memory in each process, served by an
 * RPC handler of WaitIO's own id range (a second id for objects whose handler runs in-caller).
 */
#define WIO_LOG_SUBSYS WIO_SUB_RMA /* this file logs as "rma" (WAITIO_LOG=rma=LEVEL) */
#include <stdlib.h>
#include <string.h>
#include "core/api_lock.h"
#include "core/frame.h"
#include "coll/datatype.h"
#include "rma/rma.h"

#define RUN_DEPTH_MAX 4     /* nested drains of the ready queue (a callback that waits) */
#define DOBJ_RPC_ID 0xff01  /* WaitIO's own handler ids start at 0xff00 (shmem has 0xff00) */
#define DOBJ_RPC_IN_CALLER 0xff02 /* calls of WAITIO_DOBJ_IN_CALLER objects (WAITIO_RPC_IN_CALLER) */
#define DOBJ_HDR 32         /* op, id, offset, length / gid: four little-endian 64-bit words */

enum fut_kind { FK_READY = 1, FK_OP, FK_REQ, FK_THEN, FK_ALL, FK_COLL };
enum edge_kind { E_THEN = 1, E_ALL, E_FWD };

typedef struct fut_edge {
    struct fut_edge *next;
    struct waitio_future *dst;
    int kind;
} fut_edge;

struct fcoll;

struct waitio_future {
    struct wio_futs *fs;
    int refs;
    int kind;
    int done, err;
    int queued, pending;
    struct waitio_future *qnext;   /* ready queue */
    wio_list plink;                /* pending list */
    wio_list alink;                /* every future (finalize frees them) */
    fut_edge *waiters;             /* futures depending on this one */
    uint8_t *val;                  /* the value: small, or malloc'ed */
    size_t len;
    uint8_t small[16];
    /* FK_OP / FK_REQ: the request, and a flush that completes a put at the target */
    waitio_req_t req;
    int has_req;
    size_t value_len;              /* atomic: bytes of small that are the value */
    int reply_value;               /* rpc: the reply in val is the value */
    wio_req_impl *flush;
    void *owned;                   /* a copy of a call's arguments */
    /* FK_THEN */
    waitio_future_fn fn;
    void *user;
    unsigned flags;
    int in_cb;                     /* its callback runs: set_value / forward allowed */
    int forwarded;                 /* completes when the future it was tied to does */
    int in_failed;                 /* its source failed (WAITIO_THEN_ALWAYS): it fails too */
    /* FK_ALL */
    int left, first_err;
    /* FK_COLL */
    struct fcoll *coll;
};

typedef struct dobj_entry {
    int used;
    uint16_t gen;
    uint32_t gid;
    char name[WAITIO_DOBJ_NAME_MAX + 1];
    uint8_t *ptr;
    size_t size;
    waitio_dobj_fn fn;
    void *user;
    unsigned flags;
} dobj_entry;

typedef struct wio_futs {
    wio_rma *rma;
    wio_list pending, all;
    struct waitio_future *qhead, *qtail;
    int depth;
    int polling;
    dobj_entry *objs;
    size_t nobjs;
    int handler, handler_ic;       /* DOBJ_RPC_ID, DOBJ_RPC_IN_CALLER registered */
} wio_futs;

/* ---- the state ------------------------------------------------------------------------------- */

static wio_futs *futs_get(wio_rma *r)
{
    if (r->futs)
        return r->futs;
    wio_futs *fs = calloc(1, sizeof *fs);
    if (!fs) {
        wio_fail(WAITIO_ERR_NOMEM, "out of memory");
        return NULL;
    }
    fs->rma = r;
    wio_list_init(&fs->pending);
    wio_list_init(&fs->all);
    r->futs = fs;
    return fs;
}

static void fut_free(struct waitio_future *f);

static void fut_unref(struct waitio_future *f)
{
    if (--f->refs == 0)
        fut_free(f);
}

static void fut_free(struct waitio_future *f)
{
    while (f->waiters) { /* only when finalize frees everything, or a bug: the edges go too */
        fut_edge *e = f->waiters;
        f->waiters = e->next;
        fut_unref(e->dst);
        free(e);
    }
    wio_list_remove(&f->alink);
    if (f->val != f->small)
        free(f->val);
    free(f->owned);
    free(f->coll);
    free(f);
}

void wio_fut_free_all(wio_rma *r)
{
    wio_futs *fs = r->futs;
    if (!fs)
        return;
    /* the engine's finalize releases the requests; here the futures' memory goes (handles the
     * program still holds dangle, as documented) */
    while (!wio_list_empty(&fs->all)) {
        struct waitio_future *f = WIO_CONTAINER_OF(fs->all.next, struct waitio_future, alink);
        while (f->waiters) {
            fut_edge *e = f->waiters;
            f->waiters = e->next;
            free(e);
        }
        f->refs = 1;
        fut_unref(f);
    }
    free(fs->objs);
    free(fs);
    r->futs = NULL;
}

static struct waitio_future *fut_new(wio_futs *fs, int kind)
{
    struct waitio_future *f = calloc(1, sizeof *f);
    if (!f) {
        wio_fail(WAITIO_ERR_NOMEM, "out of memory creating a future");
        return NULL;
    }
    f->fs = fs;
    f->refs = 1; /* the caller's handle */
    f->kind = kind;
    wio_list_init(&f->plink);
    wio_list_insert_tail(&fs->all, &f->alink);
    return f;
}

static int set_value(struct waitio_future *f, const void *v, size_t len)
{
    uint8_t *p = f->small;
    if (len > sizeof f->small && !(p = malloc(len)))
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory for a future's value");
    if (len)
        memcpy(p, v, len);
    if (f->val != f->small)
        free(f->val);
    f->val = p;
    f->len = len;
    return 0;
}

static void enqueue(struct waitio_future *f)
{
    if (f->queued)
        return;
    wio_futs *fs = f->fs;
    f->queued = 1;
    f->refs++;
    f->qnext = NULL;
    if (fs->qtail)
        fs->qtail->qnext = f;
    else
        fs->qhead = f;
    fs->qtail = f;
}

static void complete(struct waitio_future *f, int err)
{
    if (f->done)
        return;
    f->done = 1;
    f->err = err;
    if (err)
        f->len = 0;
    if (f->waiters)
        enqueue(f);
}

static void pending_add(struct waitio_future *f)
{
    f->pending = 1;
    f->refs++;
    wio_list_insert_tail(&f->fs->pending, &f->plink);
}

/* ---- edges and the ready queue --------------------------------------------------------------- */

static void run_then(struct waitio_future *src, struct waitio_future *dst)
{
    if (src->err && !(dst->flags & WAITIO_THEN_ALWAYS)) {
        complete(dst, src->err);
        return;
    }
    dst->in_cb = 1;
    dst->in_failed = src->err != 0;
    int rc = dst->fn(src, dst, dst->user);
    dst->in_cb = 0;
    if (src->err)
        complete(dst, src->err);
    else if (rc)
        complete(dst, rc);
    else if (!dst->forwarded)
        complete(dst, 0);
}

static void notify(struct waitio_future *src, struct waitio_future *dst, int kind)
{
    switch (kind) {
    case E_THEN:
        run_then(src, dst);
        break;
    case E_ALL:
        if (src->err && !dst->first_err)
            dst->first_err = src->err;
        if (--dst->left == 0)
            complete(dst, dst->first_err);
        break;
    case E_FWD:
        if (!dst->done && !src->err && set_value(dst, src->val, src->len) != 0) {
            complete(dst, WAITIO_ERR_NOMEM);
            break;
        }
        complete(dst, src->err);
        break;
    default:
        break;
    }
}

/* dst depends on src. Then callbacks always wait for the queue (never run inside the call that
 * made the edge); the other kinds take a completed source at once (they run no user code). */
static int add_edge(struct waitio_future *src, struct waitio_future *dst, int kind)
{
    if (src->done && kind != E_THEN) {
        notify(src, dst, kind);
        return 0;
    }
    fut_edge *e = malloc(sizeof *e);
    if (!e)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory chaining a future");
    e->dst = dst;
    e->kind = kind;
    dst->refs++;
    e->next = src->waiters;
    src->waiters = e;
    if (src->done)
        enqueue(src);
    return 0;
}

/* Drains the ready queue: each completed future notifies its dependents (in the order they were
 * added), which may complete and join the queue. */
static void fut_run(wio_futs *fs)
{
    if (fs->depth >= RUN_DEPTH_MAX)
        return;
    fs->depth++;
    struct waitio_future *f;
    while ((f = fs->qhead)) {
        fs->qhead = f->qnext;
        if (!fs->qhead)
            fs->qtail = NULL;
        f->queued = 0;
        fut_edge *list = f->waiters, *rev = NULL;
        f->waiters = NULL;
        while (list) { /* added newest first: reverse */
            fut_edge *n = list->next;
            list->next = rev;
            rev = list;
            list = n;
        }
        while (rev) {
            fut_edge *e = rev;
            rev = e->next;
            notify(f, e->dst, e->kind);
            fut_unref(e->dst);
            free(e);
        }
        fut_unref(f);
    }
    fs->depth--;
}

/* ---- polling: requests and collectives ------------------------------------------------------- */

static int coll_step(struct waitio_future *f); /* 1 when the collective completed */

/* The request's engine object, or NULL when it has none (done at once, sent at once, inactive).
 * Polling reads states only and never makes progress: nothing here can run a handler that would
 * poll again. */
static wio_req_impl *req_live(wio_engine *e, const waitio_req_t *req)
{
    wio_req_impl *q = req->internal;
    if (!q || !req->reserved[0])
        return NULL;
    return wio_req_lookup(e, req->reserved[0]) == q ? q : NULL;
}

/* Takes the complete request's result into req->status (as waitio_wait would), releases it. */
static int req_take(wio_engine *e, waitio_req_t *req)
{
    wio_req_impl *q = req_live(e, req);
    if (q) {
        if (q->status.error)
            wio_engine_explain(e, q);
        req->status = q->status;
        wio_req_release(e, q);
    }
    req->internal = NULL;
    return req->status.error;
}

static int op_done(const struct waitio_future *f)
{
    if (f->has_req) {
        const wio_req_impl *q = req_live(f->fs->rma->e, &f->req);
        if (q && q->state != WIO_RS_DONE)
            return 0;
    }
    return !f->flush || f->flush->state == WIO_RS_DONE;
}

/* The operation's requests are complete: release them, set the value; returns the error. */
static int op_finish(struct waitio_future *f)
{
    wio_rma *r = f->fs->rma;
    int err = 0;
    if (f->has_req) {
        err = req_take(r->e, &f->req);
        f->has_req = 0;
    }
    if (f->flush) {
        int fe = f->flush->status.error;
        if (fe && !err) {
            wio_engine_explain(r->e, f->flush);
            err = fe;
        }
        wio_req_release(r->e, f->flush);
        f->flush = NULL;
    }
    if (!err && f->value_len)
        f->len = f->value_len; /* the fetched word, in small */
    if (!err && f->reply_value)
        f->len = f->req.status.len;
    return err;
}

static void fut_poll(wio_futs *fs)
{
    if (fs->polling)
        return;
    fs->polling = 1;
    wio_list *pos = fs->pending.next;
    while (pos != &fs->pending) {
        struct waitio_future *f = WIO_CONTAINER_OF(pos, struct waitio_future, plink);
        pos = pos->next;
        int err = 0, finished = 0;
        if (f->kind == FK_COLL) {
            finished = coll_step(f);
            err = f->first_err;
        } else if (f->kind == FK_REQ) {
            finished = op_done(f);
            if (finished) {
                err = req_take(fs->rma->e, &f->req);
                f->has_req = 0;
                if (set_value(f, &f->req.status, sizeof f->req.status) && !err)
                    err = WAITIO_ERR_NOMEM;
            }
        } else if (op_done(f)) {
            finished = 1;
            err = op_finish(f);
        }
        if (!finished)
            continue;
        wio_list_remove(&f->plink);
        f->pending = 0;
        complete(f, err);
        fut_unref(f);
    }
    fs->polling = 0;
}

/* One round: what completed is noticed, callbacks that are due run. */
static void fut_round(wio_futs *fs)
{
    fut_poll(fs);
    fut_run(fs);
}

void wio_fut_progress(wio_rma *r)
{
    if (r->futs)
        fut_round(r->futs);
}

/* ---- creating futures of operations ---------------------------------------------------------- */

static wio_futs *futs_cur(void)
{
    wio_rma *r = wio_rma_get();
    return r ? futs_get(r) : NULL;
}

static int no_futs(void) { return wio_engine_current ? WAITIO_ERR_NOMEM : WAITIO_ERR_STATE; }

/* A new operation future (its request in f->req filled by the caller's start). */
static struct waitio_future *op_begin(waitio_future_t *out, int *rc)
{
    *rc = 0;
    if (!out) {
        *rc = wio_fail(WAITIO_ERR_ARG, "NULL future");
        return NULL;
    }
    *out = NULL;
    wio_futs *fs = futs_cur();
    if (!fs) {
        *rc = no_futs();
        return NULL;
    }
    struct waitio_future *f = fut_new(fs, FK_OP);
    if (!f)
        *rc = WAITIO_ERR_NOMEM;
    return f;
}

/* The operation started (rc 0): it is polled, or complete if it was done at once. */
static int op_end(struct waitio_future *f, int rc, waitio_future_t *out)
{
    if (rc) {
        fut_unref(f);
        return rc;
    }
    f->has_req = 1;
    if (op_done(f))
        complete(f, op_finish(f));
    else
        pending_add(f);
    *out = f;
    return 0;
}

int waitio_put_fut(waitio_win_t win, int rank, size_t offset, const void *src, size_t len, waitio_future_t *out)
{
    WIO_API_GUARD();
    int rc;
    struct waitio_future *f = op_begin(out, &rc);
    if (!f)
        return rc;
    rc = waitio_iput(win, rank, offset, src, len, &f->req);
    if (!rc && f->req.internal) {
        /* through frames: a flush behind it answers once the target applied it */
        wio_rma *r = f->fs->rma;
        rc = wio_am_flush_begin(r, win->m[rank].pid, &f->flush);
        if (rc) {
            (void)waitio_wait(&f->req); /* the put's own request, before the future goes */
            f->has_req = 0;
        }
    }
    return op_end(f, rc, out);
}

int waitio_get_fut(waitio_win_t win, int rank, size_t offset, void *dst, size_t len, waitio_future_t *out)
{
    WIO_API_GUARD();
    int rc;
    struct waitio_future *f = op_begin(out, &rc);
    if (!f)
        return rc;
    rc = waitio_iget(win, rank, offset, dst, len, &f->req);
    return op_end(f, rc, out);
}

int waitio_atomic_fut(waitio_win_t win, int rank, size_t offset, int op, int type, const void *operand,
                    const void *compare, waitio_future_t *out)
{
    WIO_API_GUARD();
    int rc;
    struct waitio_future *f = op_begin(out, &rc);
    if (!f)
        return rc;
    f->val = f->small;
    f->value_len = wio_amo_size(type);
    rc = waitio_iatomic(win, rank, offset, op, type, operand, compare, f->small, &f->req);
    return op_end(f, rc, out);
}

/* A call whose arguments `owned` (malloc'ed, or NULL) the future keeps until it completes; the
 * reply goes to `reply` (NULL: a buffer of the future's, which is then the value). */
static int rpc_future(wio_group *g, int rank, int id, void *owned, size_t len, void *reply, size_t cap,
                      waitio_future_t *out)
{
    int rc;
    struct waitio_future *f = op_begin(out, &rc);
    if (!f) {
        free(owned);
        return rc;
    }
    f->owned = owned;
    if (!reply) {
        f->val = cap > sizeof f->small ? malloc(cap) : f->small;
        if (!f->val) {
            f->val = f->small;
            fut_unref(f);
            return wio_fail(WAITIO_ERR_NOMEM, "out of memory for a call's reply");
        }
        reply = f->val;
        f->reply_value = 1;
    }
    rc = waitio_rpc((waitio_group_t)g, rank, id, owned, len, reply, cap, &f->req);
    if (rc == WAITIO_ERR_RPC && g && rank >= 0 && rank < g->size && g->members[rank] == f->fs->rma->e->my_id) {
        /* a call on this process ran at once and its handler failed: the future's error */
        f->has_req = 0;
        complete(f, rc);
        *out = f;
        return 0;
    }
    return op_end(f, rc, out);
}

static void *copy_args(const void *args, size_t len, size_t head)
{
    uint8_t *p = malloc(head + len ? head + len : 1);
    if (p && len)
        memcpy(p + head, args, len);
    return p;
}

int waitio_rpc_fut(waitio_group_t grp, int rank, int id, const void *args, size_t len, size_t reply_cap,
                 waitio_future_t *out)
{
    WIO_API_GUARD();
    if (len > WAITIO_RPC_ARGS_MAX || (!args && len))
        return wio_fail(WAITIO_ERR_ARG, "call arguments: NULL or over %u bytes", WAITIO_RPC_ARGS_MAX);
    void *copy = copy_args(args, len, 0);
    if (!copy)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    return rpc_future((wio_group *)grp, rank, id, copy, len, NULL, reply_cap, out);
}

int waitio_future_from_req(waitio_req_t *req, waitio_future_t *out)
{
    WIO_API_GUARD();
    if (!req)
        return wio_fail(WAITIO_ERR_ARG, "NULL request");
    int rc;
    struct waitio_future *f = op_begin(out, &rc);
    if (!f)
        return rc;
    f->kind = FK_REQ;
    f->req = *req;
    f->has_req = 1;
    req->internal = NULL; /* the caller's copy is inactive from now on */
    pending_add(f);
    *out = f;
    return 0;
}

int waitio_future_make(const void *value, size_t len, waitio_future_t *out)
{
    WIO_API_GUARD();
    if (!value && len)
        return wio_fail(WAITIO_ERR_ARG, "NULL value");
    int rc;
    struct waitio_future *f = op_begin(out, &rc);
    if (!f)
        return rc;
    f->kind = FK_READY;
    if ((rc = set_value(f, value, len))) {
        fut_unref(f);
        return rc;
    }
    complete(f, 0);
    *out = f;
    return 0;
}

/* ---- combining ------------------------------------------------------------------------------- */

int waitio_future_then(waitio_future_t src, waitio_future_fn fn, void *user, unsigned flags, waitio_future_t *out)
{
    WIO_API_GUARD();
    if (!src || !fn || !out || (flags & ~WAITIO_THEN_ALWAYS))
        return wio_fail(WAITIO_ERR_ARG, "NULL future, callback or result, or unknown flags 0x%x", flags);
    *out = NULL;
    struct waitio_future *f = fut_new(src->fs, FK_THEN);
    if (!f)
        return WAITIO_ERR_NOMEM;
    f->fn = fn;
    f->user = user;
    f->flags = flags;
    int rc = add_edge(src, f, E_THEN);
    if (rc) {
        fut_unref(f);
        return rc;
    }
    *out = f;
    return 0;
}

int waitio_future_when_all(int n, const waitio_future_t fs[], waitio_future_t *out)
{
    WIO_API_GUARD();
    if (n < 0 || (n && !fs) || !out)
        return wio_fail(WAITIO_ERR_ARG, "when_all: bad count %d or NULL array / result", n);
    for (int i = 0; i < n; i++)
        if (!fs[i])
            return wio_fail(WAITIO_ERR_ARG, "when_all: future %d is NULL", i);
    int rc;
    struct waitio_future *f = op_begin(out, &rc);
    if (!f)
        return rc;
    f->kind = FK_ALL;
    f->left = n + 1; /* one for the setup itself: nothing completes it while edges are added */
    for (int i = 0; i < n; i++) {
        if ((rc = add_edge(fs[i], f, E_ALL))) {
            /* out of memory: the edges made stay (harmless later), the future fails now */
            f->first_err = rc;
            break;
        }
    }
    if (--f->left == 0 || rc)
        complete(f, f->first_err);
    *out = f;
    return 0;
}

int waitio_future_set_value(waitio_future_t out, const void *value, size_t len)
{
    WIO_API_GUARD();
    if (!out || !out->in_cb || (!value && len))
        return wio_fail(WAITIO_ERR_ARG, "set_value: only on a then callback's `out`, during the callback");
    return set_value(out, value, len);
}

int waitio_future_forward(waitio_future_t out, waitio_future_t next)
{
    WIO_API_GUARD();
    if (!out || !next || !out->in_cb || out->forwarded || next == out)
        return wio_fail(WAITIO_ERR_ARG, "forward: only once, on a then callback's `out`, during the callback");
    if (out->in_failed)
        return 0; /* out fails with its source's error whatever it is tied to */
    int rc = add_edge(next, out, E_FWD);
    if (!rc)
        out->forwarded = 1;
    return rc;
}

/* ---- waiting and results --------------------------------------------------------------------- */

/* ready / error / value take the lock too: with a progress thread, a handler running there may
 * complete futures. */
int waitio_future_ready(waitio_future_t f)
{
    WIO_API_GUARD();
    return f && f->done;
}

int waitio_future_test(waitio_future_t f, int *flag)
{
    WIO_API_GUARD();
    if (!f || !flag)
        return wio_fail(WAITIO_ERR_ARG, "NULL future or flag");
    wio_rma *r = f->fs->rma;
    int rc = wio_engine_progress(r->e, 0);
    f->refs++; /* a callback run here may release the program's handle */
    fut_round(f->fs);
    *flag = f->done;
    fut_unref(f);
    return rc;
}

/* Spins (not when the host is oversubscribed), then yields, then sleeps in the poller 1 ms at a
 * time, as waitio_wait_until: a completion on a mapped path makes no event to wake on. */
int waitio_future_wait(waitio_future_t f, double seconds)
{
    WIO_API_GUARD();
    if (!f)
        return wio_fail(WAITIO_ERR_ARG, "NULL future");
    wio_futs *fs = f->fs;
    wio_engine *e = fs->rma->e;
    double t0 = wio_now(), spin = e->oversubscribed ? 0 : e->cfg.spin_us * 1e-6;
    double yield = spin + e->cfg.yield_us * 1e-6;
    f->refs++; /* a callback run here may release the program's handle */
    int rc = 0;
    for (unsigned iter = 0;; iter++) {
        fut_round(fs);
        if (f->done) {
            rc = f->err;
            break;
        }
        double waited = (iter & 15) == 0 || spin == 0 ? wio_now() - t0 : 0;
        if (seconds >= 0 && waited > seconds) {
            rc = wio_fail(WAITIO_ERR_TIMEOUT, "waitio_future_wait: not complete within %.3f s", seconds);
            break;
        }
        if (waited < spin) {
            rc = wio_engine_progress(e, 0);
        } else if (waited < yield) {
            rc = wio_engine_progress(e, 0);
            wio_engine_yield(e); /* the "multiple" thread level: without the lock meanwhile */
        } else {
            rc = wio_engine_pause(e, 1);
        }
        if (rc)
            break;
    }
    fut_unref(f);
    return rc;
}

int waitio_future_error(waitio_future_t f)
{
    WIO_API_GUARD();
    return f && f->done ? f->err : 0;
}

int waitio_future_value(waitio_future_t f, const void **value, size_t *len)
{
    WIO_API_GUARD();
    if (!f || !value || !len)
        return wio_fail(WAITIO_ERR_ARG, "NULL future or result pointer");
    int ok = f->done && !f->err && f->len;
    *value = ok ? f->val : NULL;
    *len = ok ? f->len : 0;
    return 0;
}

int waitio_future_release(waitio_future_t f)
{
    WIO_API_GUARD();
    if (!f)
        return wio_fail(WAITIO_ERR_ARG, "NULL future");
    fut_unref(f);
    return 0;
}

/* ---- non-blocking collectives ---------------------------------------------------------------- */

enum { C_BARRIER = 1, C_BCAST, C_REDUCE };

typedef struct fcoll {
    int kind, phase;
    wio_group *g;
    uint64_t tag;
    int root;
    int nq;
    wio_req_impl **q;              /* this phase's requests (NULL: done at once) */
    uint8_t *buf;                  /* bcast: the data; reduce: the result at root */
    const uint8_t *src;
    size_t len;                    /* bytes per member */
    size_t count;
    int dtype, op;
    int32_t status;                /* barrier: the root's verdict, sent to every member */
    uint8_t *tmp;                  /* reduce at root: every member's contribution; barrier: verdicts */
} fcoll;

static void coll_fail(struct waitio_future *f, int err)
{
    if (err && !f->first_err)
        f->first_err = err;
}

static void coll_send(struct waitio_future *f, int dst, const void *buf, size_t len)
{
    fcoll *c = f->coll;
    wio_req_impl *q = NULL;
    int rc = wio_engine_isend(f->fs->rma->e, c->g, dst, buf, len, c->tag, WIO_CTX_COLL, &q);
    coll_fail(f, rc);
    c->q[c->nq++] = rc ? NULL : q;
}

static void coll_recv(struct waitio_future *f, int src, void *buf, size_t len)
{
    fcoll *c = f->coll;
    wio_req_impl *q = NULL;
    int rc = wio_engine_irecv(f->fs->rma->e, c->g, src, buf, len, c->tag, WIO_CTX_COLL, &q);
    coll_fail(f, rc);
    c->q[c->nq++] = rc ? NULL : q;
}

/* Starts phase c->phase; 0 when there is none left. */
static int coll_start(struct waitio_future *f)
{
    fcoll *c = f->coll;
    wio_group *g = c->g;
    int me = g->my_rank, n = g->size;
    c->nq = 0;
    switch (c->kind) {
    case C_BARRIER:
        if (c->phase == 0) {
            if (me == c->root) {
                for (int i = 0; i < n; i++)
                    if (i != me)
                        coll_recv(f, i, NULL, 0);
            } else {
                coll_recv(f, c->root, c->tmp, sizeof c->status);
                coll_send(f, c->root, NULL, 0);
            }
            return 1;
        }
        if (c->phase == 1 && me == c->root) {
            /* every arrival (or its failure) is in: the verdict releases the others, so that a
             * lost member fails the barrier everywhere instead of leaving them waiting */
            c->status = f->first_err;
            for (int i = 0; i < n; i++)
                if (i != me)
                    coll_send(f, i, &c->status, sizeof c->status);
            return 1;
        }
        if (c->phase == 1 && me != c->root) {
            int32_t v;
            memcpy(&v, c->tmp, sizeof v);
            coll_fail(f, v);
        }
        return 0;
    case C_BCAST:
        if (c->phase > 0)
            return 0;
        for (int i = 0; i < n; i++)
            if (i != me && me == c->root)
                coll_send(f, i, c->buf, c->len);
        if (me != c->root)
            coll_recv(f, c->root, c->buf, c->len);
        return 1;
    case C_REDUCE:
        if (c->phase == 0) {
            if (me != c->root) {
                coll_send(f, c->root, c->src, c->len);
                return 1;
            }
            for (int i = 0; i < n; i++)
                if (i != me)
                    coll_recv(f, i, c->tmp + (size_t)i * c->len, c->len);
            if (c->len)
                memcpy(c->tmp + (size_t)me * c->len, c->src, c->len);
            return 1;
        }
        if (c->phase == 1 && me == c->root && !f->first_err && c->len) {
            /* in rank order, the same on every run: rank 0's contribution op rank 1's ... */
            memcpy(c->buf, c->tmp, c->len);
            for (int i = 1; i < n; i++)
                wio_op_apply(c->op, c->dtype, c->tmp + (size_t)i * c->len, c->buf, c->count);
        }
        return 0;
    default:
        return 0;
    }
}

static int coll_step(struct waitio_future *f)
{
    fcoll *c = f->coll;
    wio_engine *e = f->fs->rma->e;
    for (int i = 0; i < c->nq; i++)
        if (c->q[i] && c->q[i]->state != WIO_RS_DONE)
            return 0;
    for (int i = 0; i < c->nq; i++) {
        wio_req_impl *q = c->q[i];
        if (!q)
            continue;
        if (q->status.error && !f->first_err) {
            wio_engine_explain(e, q);
            f->first_err = q->status.error;
        }
        wio_req_release(e, q);
        c->q[i] = NULL;
    }
    c->phase++;
    return !coll_start(f);
}

static int coll_begin(waitio_group_t grp, int kind, int root, waitio_future_t *out, struct waitio_future **fp)
{
    int rc;
    wio_group *g = (wio_group *)grp;
    if (out)
        *out = NULL;
    if (!g)
        return wio_fail(WAITIO_ERR_GROUP, "NULL group");
    if (g->my_rank == WAITIO_UNDEFINED)
        return wio_fail(WAITIO_ERR_NOT_MEMBER, "collective on group %u: not a member", (unsigned)g->gid);
    if (root < 0 || root >= g->size)
        return wio_fail(WAITIO_ERR_ARG, "root %d outside group %u of size %d", root, (unsigned)g->gid, g->size);
    struct waitio_future *f = op_begin(out, &rc);
    if (!f)
        return rc;
    f->kind = FK_COLL;
    fcoll *c = calloc(1, sizeof *c + (size_t)g->size * sizeof(wio_req_impl *));
    if (!c) {
        fut_unref(f);
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    }
    c->q = (wio_req_impl **)(c + 1);
    c->kind = kind;
    c->g = g;
    c->root = root;
    f->coll = c;
    *fp = f;
    return 0;
}

static int coll_go(struct waitio_future *f, waitio_future_t *out)
{
    fcoll *c = f->coll;
    c->tag = c->g->coll_seq++; /* the same sequence as the group's blocking collectives */
    pending_add(f);
    coll_start(f);
    *out = f;
    return 0;
}

int waitio_barrier_fut(waitio_group_t grp, waitio_future_t *out)
{
    WIO_API_GUARD();
    struct waitio_future *f;
    int rc = coll_begin(grp, C_BARRIER, 0, out, &f);
    if (rc)
        return rc;
    f->coll->tmp = (uint8_t *)&f->coll->status;
    return coll_go(f, out);
}

int waitio_bcast_fut(waitio_group_t grp, int root, void *buf, size_t len, waitio_future_t *out)
{
    WIO_API_GUARD();
    if (!buf && len)
        return wio_fail(WAITIO_ERR_ARG, "NULL buffer");
    struct waitio_future *f;
    int rc = coll_begin(grp, C_BCAST, root, out, &f);
    if (rc)
        return rc;
    f->coll->buf = buf;
    f->coll->len = len;
    return coll_go(f, out);
}

static int reduce_types(int type, int op, int *dtype, int *wop)
{
    static const int dt[] = {0, WIO_DT_INT32, WIO_DT_INT64, WIO_DT_UINT32, WIO_DT_UINT64, WIO_DT_FLOAT, WIO_DT_DOUBLE};
    *dtype = type >= WAITIO_AMO_INT32 && type <= WAITIO_AMO_DOUBLE ? dt[type] : 0;
    switch (op) {
    case WAITIO_AMO_ADD: *wop = WIO_OP_SUM; break;
    case WAITIO_AMO_MIN: *wop = WIO_OP_MIN; break;
    case WAITIO_AMO_MAX: *wop = WIO_OP_MAX; break;
    case WAITIO_AMO_AND: *wop = WIO_OP_BAND; break;
    case WAITIO_AMO_OR: *wop = WIO_OP_BOR; break;
    case WAITIO_AMO_XOR: *wop = WIO_OP_BXOR; break;
    default: *wop = 0; break;
    }
    if (!*dtype || !*wop || !wio_op_valid(*wop, *dtype))
        return wio_fail(WAITIO_ERR_ARG, "reduce: operation %d is not defined on type %d", op, type);
    return 0;
}

int waitio_reduce_fut(waitio_group_t grp, int root, const void *src, void *dst, size_t count, int type, int op,
                    waitio_future_t *out)
{
    WIO_API_GUARD();
    int dtype, wop, rc = reduce_types(type, op, &dtype, &wop);
    if (rc)
        return rc;
    size_t size = wio_amo_size(type);
    if (count > WAITIO_RPC_ARGS_MAX * (size_t)64 / size)
        return wio_fail(WAITIO_ERR_ARG, "reduce: %zu elements is too many", count);
    struct waitio_future *f;
    if ((rc = coll_begin(grp, C_REDUCE, root, out, &f)))
        return rc;
    fcoll *c = f->coll;
    int is_root = c->g->my_rank == root;
    if ((count && !src) || (count && is_root && !dst)) {
        fut_unref(f);
        return wio_fail(WAITIO_ERR_ARG, "NULL buffer");
    }
    c->src = src;
    c->buf = dst;
    c->count = count;
    c->len = count * size;
    c->dtype = dtype;
    c->op = wop;
    if (is_root && c->len && !(f->owned = c->tmp = malloc((size_t)c->g->size * c->len))) {
        fut_unref(f);
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    }
    return coll_go(f, out);
}

/* ---- distributed objects --------------------------------------------------------------------- */

enum { DOBJ_LOOKUP = 1, DOBJ_GET, DOBJ_PUT, DOBJ_CALL };

static dobj_entry *dobj_find(wio_futs *fs, uint64_t id)
{
    size_t slot = (size_t)(id & 0xffff);
    if (slot >= fs->nobjs || !fs->objs[slot].used || fs->objs[slot].gen != (uint16_t)(id >> 16))
        return NULL;
    return &fs->objs[slot];
}

static dobj_entry *dobj_named(wio_futs *fs, uint32_t gid, const char *name, size_t nlen)
{
    for (size_t i = 0; i < fs->nobjs; i++) {
        dobj_entry *o = &fs->objs[i];
        if (o->used && o->gid == gid && strlen(o->name) == nlen && memcmp(o->name, name, nlen) == 0)
            return o;
    }
    return NULL;
}

/* Serves every access to this process's objects; every field is checked here (the target). */
static int dobj_handler(int origin, const void *args, size_t len, void *reply, size_t *reply_len, void *user)
{
    int in_caller = user != NULL; /* DOBJ_RPC_IN_CALLER's registration */
    wio_rma *r = wio_rma_get();
    wio_futs *fs = r ? r->futs : NULL;
    const uint8_t *a = args;
    if (!fs || len < DOBJ_HDR)
        return -1;
    uint64_t op = wio_get_le64(a), id = wio_get_le64(a + 8), off = wio_get_le64(a + 16), n = wio_get_le64(a + 24);
    const uint8_t *payload = a + DOBJ_HDR;
    size_t plen = len - DOBJ_HDR;
    if (op == DOBJ_LOOKUP) {
        dobj_entry *o = plen <= WAITIO_DOBJ_NAME_MAX ? dobj_named(fs, (uint32_t)n, (const char *)payload, plen) : NULL;
        if (!o || *reply_len < 24)
            return -1;
        wio_put_le64(reply, (uint64_t)(o - fs->objs) | (uint64_t)o->gen << 16);
        wio_put_le64((uint8_t *)reply + 8, o->size);
        wio_put_le64((uint8_t *)reply + 16, o->flags);
        *reply_len = 24;
        return 0;
    }
    dobj_entry *o = dobj_find(fs, id);
    if (!o)
        return -1;
    switch (op) {
    case DOBJ_GET:
        if (off > o->size || n > o->size - off || n > *reply_len)
            return -1;
        if (n)
            memcpy(reply, o->ptr + off, n);
        *reply_len = n;
        return 0;
    case DOBJ_PUT:
        if (off > o->size || plen > o->size - off)
            return -1;
        if (plen)
            memcpy(o->ptr + off, payload, plen);
        *reply_len = 0;
        return 0;
    case DOBJ_CALL:
        /* an in-caller object's handler never runs here from the other id (a forged handle) */
        if (!o->fn || in_caller != !!(o->flags & WAITIO_DOBJ_IN_CALLER))
            return -1;
        return o->fn(origin, o->ptr, o->size, payload, plen, reply, reply_len, o->user);
    default:
        return -1;
    }
}

int waitio_dobj_register(waitio_group_t grp, const char *name, void *ptr, size_t size, waitio_dobj_fn fn, void *user)
{
    return waitio_dobj_register_ex(grp, name, ptr, size, fn, user, 0);
}

int waitio_dobj_register_ex(waitio_group_t grp, const char *name, void *ptr, size_t size, waitio_dobj_fn fn,
                            void *user, unsigned flags)
{
    WIO_API_GUARD();
    wio_futs *fs = futs_cur();
    if (!fs)
        return no_futs();
    wio_group *g = (wio_group *)grp;
    size_t nlen = name ? strlen(name) : 0;
    if (!g || !name || !nlen || nlen > WAITIO_DOBJ_NAME_MAX || (!ptr && size))
        return wio_fail(WAITIO_ERR_ARG, "dobj_register: NULL group, name or memory, or a name of 0 or over %d bytes",
                        WAITIO_DOBJ_NAME_MAX);
    if (flags & ~WAITIO_DOBJ_IN_CALLER)
        return wio_fail(WAITIO_ERR_ARG, "dobj_register: unknown flags 0x%x", flags);
    if (dobj_named(fs, g->gid, name, nlen))
        return wio_fail(WAITIO_ERR_ARG, "dobj_register: \"%s\" is registered already on group %u", name,
                        (unsigned)g->gid);
    if (!fs->handler) {
        int rc = waitio_rpc_register(DOBJ_RPC_ID, dobj_handler, NULL);
        if (rc)
            return rc;
        fs->handler = 1;
    }
    if ((flags & WAITIO_DOBJ_IN_CALLER) && !fs->handler_ic) {
        static char marker; /* the in-caller registration's user pointer: non-NULL */
        int rc = waitio_rpc_register_ex(DOBJ_RPC_IN_CALLER, dobj_handler, &marker, WAITIO_RPC_IN_CALLER);
        if (rc)
            return rc;
        fs->handler_ic = 1;
    }
    size_t slot = 0;
    while (slot < fs->nobjs && fs->objs[slot].used)
        slot++;
    if (slot == fs->nobjs) {
        if (slot > 0xffff)
            return wio_fail(WAITIO_ERR_NOMEM, "dobj_register: %zu objects is the limit", slot);
        dobj_entry *a = realloc(fs->objs, (slot + 1) * sizeof *a);
        if (!a)
            return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
        memset(&a[slot], 0, sizeof *a);
        fs->objs = a;
        fs->nobjs++;
    }
    dobj_entry *o = &fs->objs[slot];
    o->used = 1;
    o->gen++;
    o->gid = g->gid;
    memcpy(o->name, name, nlen + 1);
    o->ptr = ptr;
    o->size = size;
    o->fn = fn;
    o->user = user;
    o->flags = flags;
    return 0;
}

int waitio_dobj_unregister(waitio_group_t grp, const char *name)
{
    WIO_API_GUARD();
    wio_futs *fs = futs_cur();
    if (!fs)
        return no_futs();
    wio_group *g = (wio_group *)grp;
    dobj_entry *o = g && name ? dobj_named(fs, g->gid, name, strlen(name)) : NULL;
    if (!o)
        return wio_fail(WAITIO_ERR_ARG, "dobj_unregister: no object \"%s\" here", name ? name : "(null)");
    o->used = 0; /* its id goes stale: a later registration in the slot has another generation */
    return 0;
}

typedef struct lookup_ctx {
    waitio_group_t grp;
    int rank;
} lookup_ctx;

/* The call's reply (id, size) becomes the handle. */
static int lookup_done(waitio_future_t in, waitio_future_t out, void *user)
{
    lookup_ctx *lc = user;
    waitio_dobj_t o = {.grp = lc->grp, .rank = lc->rank};
    int rc = 0;
    if (!in->err && in->len == 24) {
        o.id = (uint32_t)wio_get_le64(in->val);
        o.size = wio_get_le64(in->val + 8);
        o.flags = (uint32_t)wio_get_le64(in->val + 16);
        rc = set_value(out, &o, sizeof o);
    } else if (!in->err) {
        rc = WAITIO_ERR_RPC;
    }
    free(lc);
    return rc;
}

static uint8_t *dobj_args(uint64_t op, uint64_t id, uint64_t off, uint64_t n, const void *payload, size_t plen)
{
    uint8_t *a = copy_args(payload, plen, DOBJ_HDR);
    if (!a) {
        wio_fail(WAITIO_ERR_NOMEM, "out of memory");
        return NULL;
    }
    wio_put_le64(a, op);
    wio_put_le64(a + 8, id);
    wio_put_le64(a + 16, off);
    wio_put_le64(a + 24, n);
    return a;
}

int waitio_dobj_lookup(waitio_group_t grp, int rank, const char *name, waitio_future_t *out)
{
    WIO_API_GUARD();
    wio_group *g = (wio_group *)grp;
    size_t nlen = name ? strlen(name) : 0;
    if (!out || !g || !nlen || nlen > WAITIO_DOBJ_NAME_MAX)
        return wio_fail(WAITIO_ERR_ARG, "dobj_lookup: NULL result or group, or a bad name");
    *out = NULL;
    lookup_ctx *lc = malloc(sizeof *lc);
    uint8_t *a = lc ? dobj_args(DOBJ_LOOKUP, 0, 0, g->gid, name, nlen) : NULL;
    if (!a) {
        free(lc);
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    }
    lc->grp = grp;
    lc->rank = rank;
    waitio_future_t call;
    int rc = rpc_future(g, rank, DOBJ_RPC_ID, a, DOBJ_HDR + nlen, NULL, 24, &call);
    if (rc) {
        free(lc);
        return rc;
    }
    rc = waitio_future_then(call, lookup_done, lc, WAITIO_THEN_ALWAYS, out);
    if (rc)
        free(lc);
    fut_unref(call);
    return rc;
}

static int dobj_check(const waitio_dobj_t *o, size_t off, size_t len, waitio_future_t *out)
{
    if (out)
        *out = NULL;
    if (!o || !out || !o->grp)
        return wio_fail(WAITIO_ERR_ARG, "NULL object handle or result");
    if (len > WAITIO_DOBJ_XFER_MAX)
        return wio_fail(WAITIO_ERR_ARG, "%zu bytes: at most %u per access", len, (unsigned)WAITIO_DOBJ_XFER_MAX);
    if (off > o->size || len > o->size - off)
        return wio_fail(WAITIO_ERR_BOUNDS, "%zu bytes at offset %zu are outside the object (%llu bytes)", len, off,
                        (unsigned long long)o->size);
    return 0;
}

int waitio_dobj_get(const waitio_dobj_t *o, size_t offset, void *dst, size_t len, waitio_future_t *out)
{
    WIO_API_GUARD();
    int rc = dobj_check(o, offset, len, out);
    if (rc)
        return rc;
    if (!dst && len)
        return wio_fail(WAITIO_ERR_ARG, "NULL buffer");
    uint8_t *a = dobj_args(DOBJ_GET, o->id, offset, len, NULL, 0);
    if (!a)
        return WAITIO_ERR_NOMEM;
    uint8_t dummy;
    return rpc_future((wio_group *)o->grp, o->rank, DOBJ_RPC_ID, a, DOBJ_HDR, len ? dst : &dummy, len, out);
}

int waitio_dobj_put(const waitio_dobj_t *o, size_t offset, const void *src, size_t len, waitio_future_t *out)
{
    WIO_API_GUARD();
    int rc = dobj_check(o, offset, len, out);
    if (rc)
        return rc;
    if (!src && len)
        return wio_fail(WAITIO_ERR_ARG, "NULL buffer");
    uint8_t *a = dobj_args(DOBJ_PUT, o->id, offset, 0, src, len);
    if (!a)
        return WAITIO_ERR_NOMEM;
    uint8_t dummy;
    return rpc_future((wio_group *)o->grp, o->rank, DOBJ_RPC_ID, a, DOBJ_HDR + len, &dummy, 0, out);
}

int waitio_dobj_call(const waitio_dobj_t *o, const void *args, size_t len, size_t reply_cap, waitio_future_t *out)
{
    WIO_API_GUARD();
    int rc = dobj_check(o, 0, 0, out);
    if (rc)
        return rc;
    if ((!args && len) || len > WAITIO_DOBJ_XFER_MAX || reply_cap > WAITIO_RPC_REPLY_MAX)
        return wio_fail(WAITIO_ERR_ARG, "dobj_call: NULL or too long arguments, or reply capacity over %u",
                        WAITIO_RPC_REPLY_MAX);
    uint8_t *a = dobj_args(DOBJ_CALL, o->id, 0, 0, args, len);
    if (!a)
        return WAITIO_ERR_NOMEM;
    int id = o->flags & WAITIO_DOBJ_IN_CALLER ? DOBJ_RPC_IN_CALLER : DOBJ_RPC_ID;
    return rpc_future((wio_group *)o->grp, o->rank, id, a, DOBJ_HDR + len, NULL, reply_cap, out);
}
