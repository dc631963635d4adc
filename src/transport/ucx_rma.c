/*
 * ucx_rma.c — the ucx transport's one-sided operations over RDMA (transport.h, "one-sided over
 * RDMA"): a window's part registered with ucp_mem_map and its packed remote key, a member's key
 * unpacked on the endpoint of our connection to it, puts, gets and atomics as ucp_put_nbx,
 * ucp_get_nbx and ucp_atomic_op_nbx, remote completion as ucp_ep_flush_nbx, ordering as
 * ucp_worker_fence. The one-sided layer (src/rma/rdma.c) reaches these only through the engine
 * and never sees a UCX type.
 *
 * Atomicity: the other paths of one-sided atomics (a mapped word, a frame served by the target)
 * use the CPU's atomic instructions. UCX's atomics are atomic with respect to those only in its
 * "cpu" atomic mode (a transport whose atomics the CPU sees atomically — shared memory — or UCX's
 * own emulation executed by the target's CPU); a NIC's device atomics are not. ucx.c therefore
 * opens UCX with UCX_ATOMIC_MODE=cpu unless the user set it, and atomics go through UCX here only
 * in that mode (ucx_rma_amo_ok): with any other mode every atomic takes frames, so that updates
 * of one word never mix device atomics with CPU ones.
 *
 * Callbacks run inside ucp_worker_progress: they only copy a fetched value out and report the
 * outcome to the one-sided layer, which records it.
 *
 * Direct access: registered ordinary memory is reached over UCX's shared-memory transports
 * through cma or a software protocol served by the target (a round trip). A part the library
 * mapped itself (WIO_RDMA_REG_OWNED: a heap window's fresh private memory) is replaced in place
 * by memory UCX allocates (ucp_mem_map ALLOCATE|FIXED, a posix/sysv segment): a peer on this
 * host then maps it (ucp_rkey_ptr) and a put, get or atomic is a memcpy or the CPU's atomic on
 * that mapping, complete at once (rdma_post's 2). The one-sided layer has checked the range
 * against the member's part before any operation reaches this file, as for ucp_*_nbx. Where
 * ucp_rkey_ptr fails (tcp, another host) operations stay on ucp_*_nbx.
 */
#define WIO_UCX_INTERNAL
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "transport/ucx.h"
#include "core/common.h"

/* A member's packed key and its unpacked form on the endpoint it was unpacked for: a later
 * connection to the same peer (after an idle close) has a new endpoint, so it is unpacked again. */
typedef struct ucx_rkey {
    ucp_ep_h ep;
    ucp_rkey_h h;
    int direct;        /* on h: 0 not tried, 1 the part is mapped here (delta), -1 not mappable */
    ucp_rkey_h kept;   /* a handle whose mapping was handed out (rdma_post's mapped): kept to the end */
    intptr_t delta;    /* local address minus remote address in that mapping */
    size_t len;
    uint8_t packed[];
} ucx_rkey;

static ucx_conn *conn_of(void *conn)
{
    wio_stream *s = conn;
    return s ? s->pipe_state : NULL;
}

/* UCX's "can't do that here" is ENOTSUP (the caller takes frames); the rest EIO. */
static int status_errno(ucs_status_t st)
{
    return st == UCS_ERR_UNSUPPORTED ? ENOTSUP : st == UCS_ERR_NO_MEMORY ? ENOMEM : EIO;
}

/* What a failed operation means to its request: the endpoint's failures are the peer's. */
static int status_error(ucs_status_t st)
{
    switch (st) {
    case UCS_OK: return 0;
    case UCS_ERR_CANCELED: return WAITIO_ERR_CANCELLED;
    case UCS_ERR_NO_MEMORY: return WAITIO_ERR_NOMEM;
    default: return WAITIO_ERR_PEER;
    }
}

int wio_ucx_rma_amo_ok(void)
{
    const char *mode = getenv("UCX_ATOMIC_MODE");
    return !mode || !*mode || strcmp(mode, "cpu") == 0;
}

/* ---- registration ---- */

/* A registration: UCX's handle and, when UCX allocated the range in place, the range. */
typedef struct ucx_reg {
    ucp_mem_h mh;
    void *owned;      /* UCX's memory at this address (its unmap unmaps it); NULL: registered */
    size_t owned_len;
} ucx_reg;

/* UCX's own memory at [addr, addr + len) in place of the library's (WIO_RDMA_REG_OWNED): 0, or
 * nonzero with the range untouched (UCX placed nothing there). */
static int map_owned(ucx_tp *t, void *addr, size_t len, ucx_reg *r)
{
    long pg = sysconf(_SC_PAGESIZE);
    size_t page = pg > 0 ? (size_t)pg : 4096;
    size_t whole = (len + page - 1) & ~(page - 1);
    ucp_mem_map_params_t mp = {
        .field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                      UCP_MEM_MAP_PARAM_FIELD_FLAGS,
        .address = addr,
        .length = whole,
        .flags = UCP_MEM_MAP_ALLOCATE | UCP_MEM_MAP_FIXED,
    };
    ucp_mem_h mh;
    if (ucp_mem_map(t->context, &mp, &mh) != UCS_OK)
        return EIO;
    ucp_mem_attr_t at = {.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS | UCP_MEM_ATTR_FIELD_LENGTH};
    if (ucp_mem_query(mh, &at) != UCS_OK || at.address != addr) { /* placed elsewhere: not ours */
        ucp_mem_unmap(t->context, mh);
        return EIO;
    }
    r->mh = mh;
    r->owned = addr;
    r->owned_len = at.length > whole ? at.length : whole;
    return 0;
}

int wio_ucx_rdma_reg(void *tp, void *addr, size_t len, unsigned flags, void **reg, uint8_t *key, size_t cap,
                     size_t *key_len)
{
    ucx_tp *t = tp;
    if (!t || !addr || !len)
        return EINVAL;
    ucx_reg *r = calloc(1, sizeof *r);
    if (!r)
        return ENOMEM;
    if (!(flags & WIO_RDMA_REG_OWNED) || map_owned(t, addr, len, r) != 0) {
        /* exactly the part: UCX pins whole pages, but a key reaches [addr, addr + len) only */
        ucp_mem_map_params_t mp = {
            .field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH,
            .address = addr,
            .length = len,
        };
        ucs_status_t st = ucp_mem_map(t->context, &mp, &r->mh);
        if (st != UCS_OK) {
            free(r);
            return status_errno(st);
        }
    }
    ucp_mem_h mh = r->mh;
    ucs_status_t st;
    void *rb = NULL;
    size_t rl = 0;
    st = ucp_rkey_pack(t->context, mh, &rb, &rl);
    if (st != UCS_OK || rl > cap) {
        if (st == UCS_OK)
            ucp_rkey_buffer_release(rb);
        wio_ucx_rdma_dereg(t, r);
        return st != UCS_OK ? status_errno(st) : ENOSPC;
    }
    memcpy(key, rb, rl);
    ucp_rkey_buffer_release(rb);
    *reg = r;
    *key_len = rl;
    return 0;
}

void wio_ucx_rdma_dereg(void *tp, void *reg)
{
    ucx_tp *t = tp;
    ucx_reg *r = reg;
    if (!t || !r)
        return;
    ucp_mem_unmap(t->context, r->mh);
    /* UCX unmapped its memory: private memory again at that range, which the window unmaps as
     * its own (MAP_FIXED_NOREPLACE: never over a mapping someone made there meanwhile) */
    if (r->owned && mmap(r->owned, r->owned_len, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) == MAP_FAILED)
        wio_warn("ucx: a window's range %p could not be mapped again after UCX's memory: %s", r->owned,
                 strerror(errno));
    free(r);
}

int wio_ucx_rdma_rkey(void *conn, const uint8_t *key, size_t key_len, void **out)
{
    (void)conn; /* unpacked on first use, on the endpoint then current */
    if (!key || !key_len || key_len > WIO_RDMA_RKEY_MAX)
        return EINVAL;
    ucx_rkey *k = calloc(1, sizeof *k + key_len);
    if (!k)
        return ENOMEM;
    k->len = key_len;
    memcpy(k->packed, key, key_len);
    *out = k;
    return 0;
}

void wio_ucx_rdma_rkey_free(void *tp, void *rkey)
{
    (void)tp;
    ucx_rkey *k = rkey;
    if (!k)
        return;
    if (k->h)
        ucp_rkey_destroy(k->h);
    if (k->kept)
        ucp_rkey_destroy(k->kept);
    free(k);
}

/* The key's handle on c's endpoint (unpacked again when the connection changed). */
static int rkey_on(ucx_conn *c, ucx_rkey *k, ucp_rkey_h *out)
{
    if (k->h && k->ep == c->ep) {
        *out = k->h;
        return 0;
    }
    if (k->h && k->direct > 0 && !k->kept)
        k->kept = k->h; /* its mapping may be in use (rdma_post's mapped): it lives to the end */
    else if (k->h)
        ucp_rkey_destroy(k->h);
    k->h = NULL;
    k->direct = 0; /* a mapping belongs to the handle it came from */
    ucs_status_t st = ucp_ep_rkey_unpack(c->ep, k->packed, &k->h);
    if (st != UCS_OK) {
        k->h = NULL;
        return status_errno(st);
    }
    k->ep = c->ep;
    *out = k->h;
    return 0;
}

/* ---- operations ---- */

/* A fetched value lands in op->compare (the reply buffer: CSWAP's new value goes in there and
 * the old value comes back in its place) and is copied to the caller's result. */
static void amo_result(wio_rdma_op *op)
{
    if (op->kind != WIO_RDMA_AMO || !op->local)
        return;
    memcpy(op->local, &op->compare, op->len); /* stored in its width at the start (amo_post) */
}

static void op_done(void *req, ucs_status_t st, void *user)
{
    wio_rdma_op *op = user;
    if (st == UCS_OK)
        amo_result(op);
    ucp_request_free(req);
    op->done(op->arg, status_error(st));
}

static ucp_atomic_op_t amo_opcode(int amo)
{
    switch (amo) {
    case WIO_RDMA_AMO_ADD: return UCP_ATOMIC_OP_ADD;
    case WIO_RDMA_AMO_AND: return UCP_ATOMIC_OP_AND;
    case WIO_RDMA_AMO_OR: return UCP_ATOMIC_OP_OR;
    case WIO_RDMA_AMO_XOR: return UCP_ATOMIC_OP_XOR;
    case WIO_RDMA_AMO_SWAP: return UCP_ATOMIC_OP_SWAP;
    default: return UCP_ATOMIC_OP_CSWAP;
    }
}

/* Stores v in its width at p (the operand and reply buffers UCX reads len bytes from). */
static void store_width(uint64_t *p, uint64_t v, size_t len)
{
    if (len == 4) {
        uint32_t v32 = (uint32_t)v;
        memcpy(p, &v32, 4);
    } else {
        *p = v;
    }
}

static void *amo_post(ucp_ep_h ep, wio_rdma_op *op, ucp_rkey_h rk, ucp_request_param_t *p)
{
    /* swap and compare-and-swap always fetch in UCP: their old value goes to the reply buffer */
    int fetch = op->local || op->amo == WIO_RDMA_AMO_SWAP || op->amo == WIO_RDMA_AMO_CSWAP;
    /* UCP's compare-and-swap compares the word with `buffer` and swaps in the reply buffer */
    int cswap = op->amo == WIO_RDMA_AMO_CSWAP;
    uint64_t in = cswap ? op->compare : op->operand, reply = cswap ? op->operand : 0;
    store_width(&op->operand, in, op->len);
    store_width(&op->compare, reply, op->len);
    p->op_attr_mask |= UCP_OP_ATTR_FIELD_DATATYPE;
    p->datatype = ucp_dt_make_contig(op->len);
    if (fetch) {
        p->op_attr_mask |= UCP_OP_ATTR_FIELD_REPLY_BUFFER;
        p->reply_buffer = &op->compare;
    }
    return ucp_atomic_op_nbx(ep, amo_opcode(op->amo), &op->operand, 1, op->remote_addr, rk, p);
}

/* The operation's target as a local address when the peer's part is mapped here, else NULL. */
static void *direct_addr(ucx_rkey *k, ucp_rkey_h rk, const wio_rdma_op *op)
{
    if (k->direct == 0) {
        void *p = NULL;
        ucs_status_t st = ucp_rkey_ptr(rk, op->remote_addr, &p);
        k->direct = st == UCS_OK && p ? 1 : -1;
        k->delta = st == UCS_OK && p ? (intptr_t)((uintptr_t)p - (uintptr_t)op->remote_addr) : 0;
    }
    if (k->direct < 0)
        return NULL;
    return (void *)(uintptr_t)(op->remote_addr + (uintptr_t)k->delta);
}

/* An atomic on the mapped word w, in the width the operation has (4 or 8, aligned), with the
 * CPU's atomic instructions: the same as the owner's and the frames' (UCX_ATOMIC_MODE=cpu). */
#define AMO_DIRECT(T, w, op, old)                                                                  \
    do {                                                                                           \
        T *a = (T *)(w), v = (T)(op)->operand, c = (T)(op)->compare;                               \
        switch ((op)->amo) {                                                                       \
        case WIO_RDMA_AMO_ADD: (old) = __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST); break;           \
        case WIO_RDMA_AMO_AND: (old) = __atomic_fetch_and(a, v, __ATOMIC_SEQ_CST); break;           \
        case WIO_RDMA_AMO_OR: (old) = __atomic_fetch_or(a, v, __ATOMIC_SEQ_CST); break;             \
        case WIO_RDMA_AMO_XOR: (old) = __atomic_fetch_xor(a, v, __ATOMIC_SEQ_CST); break;           \
        case WIO_RDMA_AMO_SWAP: (old) = __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST); break;         \
        default:                                                                                   \
            __atomic_compare_exchange_n(a, &c, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);          \
            (old) = c; /* the word's value before: equal to compare when it swapped */             \
        }                                                                                          \
    } while (0)

/* A put, get or atomic as loads and stores on the mapping: complete when it returns. */
static int post_direct(void *w, wio_rdma_op *op)
{
    switch (op->kind) {
    case WIO_RDMA_PUT:
        memcpy(w, op->local, op->len);
        __atomic_thread_fence(__ATOMIC_RELEASE); /* visible before anything posted after it */
        return 2;
    case WIO_RDMA_GET:
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        memcpy(op->local, w, op->len);
        return 2;
    default: break;
    }
    if ((uintptr_t)w % op->len)
        return ENOTSUP; /* unaligned: the caller's ucp_atomic_op_nbx path decides */
    if (op->len == 4) {
        uint32_t old;
        AMO_DIRECT(uint32_t, w, op, old);
        if (op->local)
            memcpy(op->local, &old, 4);
    } else {
        uint64_t old;
        AMO_DIRECT(uint64_t, w, op, old);
        if (op->local)
            memcpy(op->local, &old, 8);
    }
    return 2;
}

int wio_ucx_rdma_post(void *conn, wio_rdma_op *op)
{
    ucx_conn *c = conn_of(conn);
    if (!c || c->failed || !c->ep)
        return ENOTCONN;
    if (c->t->in_progress)
        return EBUSY; /* never re-enter UCX from its own callbacks */
    if (op->kind == WIO_RDMA_AMO && ((op->len != 4 && op->len != 8) || !wio_ucx_rma_amo_ok()))
        return ENOTSUP;
    ucp_rkey_h rk;
    int rc = rkey_on(c, op->rkey, &rk);
    if (rc)
        return rc;
    void *w = direct_addr(op->rkey, rk, op);
    if (w && (rc = post_direct(w, op)) == 2) {
        op->mapped = w;
        return 2;
    }
    ucp_request_param_t p = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
        .cb = {.send = op_done},
        .user_data = op,
    };
    void *req;
    switch (op->kind) {
    case WIO_RDMA_PUT: req = ucp_put_nbx(c->ep, op->local, op->len, op->remote_addr, rk, &p); break;
    case WIO_RDMA_GET: req = ucp_get_nbx(c->ep, op->local, op->len, op->remote_addr, rk, &p); break;
    case WIO_RDMA_AMO: req = amo_post(c->ep, op, rk, &p); break;
    default: return EINVAL;
    }
    if (UCS_PTR_IS_ERR(req))
        return status_errno(UCS_PTR_STATUS(req));
    if (req == NULL) { /* complete at once: no callback comes */
        amo_result(op);
        return 1;
    }
    return 0;
}

/* ---- completion and order ---- */

typedef struct flush_ctx {
    void (*done)(void *arg, int err);
    void *arg;
} flush_ctx;

static void flush_done(void *req, ucs_status_t st, void *user)
{
    flush_ctx *f = user;
    ucp_request_free(req);
    f->done(f->arg, status_error(st));
    free(f);
}

int wio_ucx_rdma_flush(void *conn, void (*done)(void *arg, int err), void *arg)
{
    ucx_conn *c = conn_of(conn);
    if (!c || !c->ep)
        return ENOTCONN;
    if (c->t->in_progress)
        return EBUSY;
    flush_ctx *f = malloc(sizeof *f);
    if (!f)
        return ENOMEM;
    f->done = done;
    f->arg = arg;
    ucp_request_param_t p = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
        .cb = {.send = flush_done},
        .user_data = f,
    };
    void *req = ucp_ep_flush_nbx(c->ep, &p);
    if (req == NULL || UCS_PTR_IS_ERR(req)) {
        free(f);
        return req == NULL ? 1 : status_errno(UCS_PTR_STATUS(req));
    }
    return 0;
}

int wio_ucx_rdma_fence(void *tp)
{
    ucx_tp *t = tp;
    if (!t || t->in_progress)
        return EBUSY;
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* the direct path's loads and stores too */
    ucs_status_t st = ucp_worker_fence(t->worker);
    return st == UCS_OK ? 0 : status_errno(st);
}
