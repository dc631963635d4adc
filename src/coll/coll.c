/*
 * coll.c — collective algorithms over the engine's point-to-point: linear ("2L" in the seed),
 * binomial tree ("BT"), and ring reduce-scatter + allgather for large allreduce. Every result
 * that several ranks hold is computed once and copied, so all ranks get identical bits.
 * Messages use the group's collective context and a per-group sequence number as tag.
 */
#define WIO_LOG_SUBSYS WIO_SUB_COLL /* this file logs as "coll" (WAITIO_LOG=coll=LEVEL) */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "coll/coll.h"
#include "coll/datatype.h"
#include "core/settings.h"
#include "core/trace.h"

#define RING_ALLREDUCE_MIN (64u << 10) /* bytes; below it reduce + bcast over the tree */
/* allreduce_all_to_all on one host: at most this many ranks and operand bytes of all ranks
 * (measured, 2 PBs x 4 on 2 cores: ahead of the other algorithms up to 8 x 512 B, behind at
 * 8 x 4 KiB); the operands of all ranks then fit on the stack */
#define ALL_TO_ALL_MAX_BYTES 4096
#define ALL_TO_ALL_MAX_RANKS 16

/* Read once: the environment of an MPI job is long (about 90 variables under mpirun, 25 ns per
 * lookup here), and the flat algorithm is not meant to be switched between collectives. */
int wio_coll_algorithm(void)
{
    static int alg = -1;
    if (alg >= 0)
        return alg;
    const char *v = wio_setting_str("WAITIO_COLL_ALG", NULL); /* a bad value is said, auto used */
    if (!v || !*v || !strcasecmp(v, "auto"))
        alg = WIO_COLL_AUTO;
    else if (!strcasecmp(v, "linear") || !strcasecmp(v, "2L"))
        alg = WIO_COLL_LINEAR;
    else if (!strcasecmp(v, "ring"))
        alg = WIO_COLL_RING;
    else
        alg = WIO_COLL_TREE;
    return alg;
}

/* ---- point-to-point helpers in the collective context ---- */

typedef struct coll_op {
    wio_engine *e;
    wio_group *g;
    uint64_t tag;
} coll_op;

static int op_begin(coll_op *c, wio_engine *e, wio_group *g)
{
    *c = (coll_op){.e = e, .g = g}; /* defined even on failure (gcc -O3 cannot tell) */
    if (!g)
        return wio_fail(WAITIO_ERR_GROUP, "NULL group");
    if (g->my_rank == WAITIO_UNDEFINED)
        return wio_fail(WAITIO_ERR_NOT_MEMBER, "collective on group %u: not a member",
                        (unsigned)g->gid);
    c->tag = g->coll_seq++;
    return 0;
}


/* r NULL: a send that went at once (wio_engine_isend). */
static int req_wait(coll_op *c, wio_req_impl *r)
{
    if (!r)
        return 0;
    int rc = wio_engine_wait_req(c->e, r, 0);
    if (!rc && (rc = r->status.error) != 0)
        wio_engine_explain(c->e, r); /* waitio_error_message() names the peer */
    if (r->state == WIO_RS_DONE)
        wio_req_release(c->e, r);
    return rc;
}

static int xsend(coll_op *c, int dst, const void *buf, size_t len, wio_req_impl **r)
{
    return wio_engine_isend(c->e, c->g, dst, buf, len, c->tag, WIO_CTX_COLL, r);
}

static int xrecv(coll_op *c, int src, void *buf, size_t len, wio_req_impl **r)
{
    return wio_engine_irecv(c->e, c->g, src, buf, len, c->tag, WIO_CTX_COLL, r);
}

static int send_blocking(coll_op *c, int dst, const void *buf, size_t len)
{
    wio_req_impl *r;
    int rc = xsend(c, dst, buf, len, &r);
    return rc ? rc : req_wait(c, r);
}

static int recv_blocking(coll_op *c, int src, void *buf, size_t len)
{
    wio_req_impl *r;
    int rc = xrecv(c, src, buf, len, &r);
    return rc ? rc : req_wait(c, r);
}

/* Waits for all of reqs[0..n) (NULL entries skipped); returns the first error. */
static int wait_all(coll_op *c, wio_req_impl **reqs, int n)
{
    int first = 0;
    for (int i = 0; i < n; i++) {
        if (!reqs[i])
            continue;
        int rc = req_wait(c, reqs[i]);
        if (rc && !first)
            first = rc;
    }
    return first;
}

static int sendrecv(coll_op *c, int dst, const void *sbuf, size_t slen, int src, void *rbuf, size_t rlen)
{
    wio_req_impl *r[2] = {NULL, NULL};
    int rc = xrecv(c, src, rbuf, rlen, &r[0]);
    if (!rc)
        rc = xsend(c, dst, sbuf, slen, &r[1]);
    int rc2 = wait_all(c, r, 2);
    return rc ? rc : rc2;
}

int wio_coll_exchange(wio_engine *e, wio_group *g, int peer, const void *sbuf, void *rbuf, size_t len)
{
    coll_op c;
    int rc = op_begin(&c, e, g);
    return rc ? rc : sendrecv(&c, peer, sbuf, len, peer, rbuf, len);
}

static int check_dtype(int dtype, size_t *esize)
{
    *esize = wio_dtype_size(dtype);
    if (!*esize)
        return wio_fail(WAITIO_ERR_ARG, "unknown datatype %d", dtype);
    return 0;
}

static int check_root(const wio_group *g, int root)
{
    if (root < 0 || root >= g->size)
        return wio_fail(WAITIO_ERR_ARG, "root %d outside group of size %d", root, g->size);
    return 0;
}

/* ---- bcast ---- */

static int bcast_linear(coll_op *c, void *buf, size_t len, int root)
{
    wio_group *g = c->g;
    if (g->my_rank != root)
        return recv_blocking(c, root, buf, len);
    wio_req_impl **r = calloc((size_t)g->size, sizeof *r);
    if (!r)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory in bcast");
    int rc = 0;
    for (int i = 0; i < g->size && !rc; i++)
        if (i != root)
            rc = xsend(c, i, buf, len, &r[i]);
    int rc2 = wait_all(c, r, g->size);
    free(r);
    return rc ? rc : rc2;
}

static int bcast_tree(coll_op *c, void *buf, size_t len, int root)
{
    int n = c->g->size, vr = (c->g->my_rank - root + n) % n, mask = 1, rc = 0;
    while (mask < n) {
        if (vr & mask) {
            if ((rc = recv_blocking(c, (vr - mask + root) % n, buf, len)))
                return rc;
            break;
        }
        mask <<= 1;
    }
    wio_req_impl *r[32] = {0};
    int nr = 0;
    for (mask >>= 1; mask > 0 && !rc; mask >>= 1)
        if (vr + mask < n)
            rc = xsend(c, (vr + mask + root) % n, buf, len, &r[nr++]);
    int rc2 = wait_all(c, r, nr);
    return rc ? rc : rc2;
}

int wio_coll_bcast(wio_engine *e, wio_group *g, void *buf, size_t count, int dtype, int root)
{
    coll_op c;
    size_t es;
    int rc;
    if ((rc = op_begin(&c, e, g)) || (rc = check_dtype(dtype, &es)) || (rc = check_root(g, root)))
        return rc;
    if (g->size == 1)
        return 0;
    if (wio_coll_algorithm() == WIO_COLL_LINEAR)
        return bcast_linear(&c, buf, count * es, root);
    return bcast_tree(&c, buf, count * es, root);
}

/* ---- scratch space ---- */

/* One operand's scratch space: on the caller's stack up to SCRATCH_STACK_BYTES (the small
 * collectives that run back to back, where a malloc and free per call per rank shows), else
 * allocated. Aligned for any datatype the operations fold. */
#define SCRATCH_STACK_BYTES 1024
typedef struct coll_scratch {
    _Alignas(max_align_t) uint8_t small[SCRATCH_STACK_BYTES];
} coll_scratch;

static void *scratch_get(coll_scratch *s, size_t bytes)
{
    return bytes <= sizeof s->small ? s->small : malloc(bytes);
}

static void scratch_put(coll_scratch *s, void *p)
{
    if (p != s->small)
        free(p);
}

/* ---- reduce ---- */

/* Binomial-tree reduction of acc (count elements) toward root; the root's acc is the result. */
static int reduce_tree(coll_op *c, void *acc, size_t count, int dtype, int op, int root)
{
    size_t bytes = count * wio_dtype_size(dtype);
    int n = c->g->size, vr = (c->g->my_rank - root + n) % n, rc = 0;
    coll_scratch scratch;
    void *tmp = scratch_get(&scratch, bytes);
    if (!tmp)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory in reduce");
    for (int mask = 1; mask < n && !rc; mask <<= 1) {
        if (vr & mask) {
            rc = send_blocking(c, ((vr & ~mask) + root) % n, acc, bytes);
            break;
        }
        if ((vr | mask) < n) {
            rc = recv_blocking(c, ((vr | mask) + root) % n, tmp, bytes);
            if (!rc)
                wio_op_apply(op, dtype, tmp, acc, count);
        }
    }
    scratch_put(&scratch, tmp);
    return rc;
}

static int reduce_linear(coll_op *c, void *acc, size_t count, int dtype, int op, int root)
{
    size_t bytes = count * wio_dtype_size(dtype);
    wio_group *g = c->g;
    if (g->my_rank != root)
        return send_blocking(c, root, acc, bytes);
    uint8_t *all = malloc(bytes * (size_t)g->size + 1);
    wio_req_impl **r = calloc((size_t)g->size, sizeof *r);
    int rc = all && r ? 0 : wio_fail(WAITIO_ERR_NOMEM, "out of memory in reduce");
    for (int i = 0; i < g->size && !rc; i++)
        if (i != root)
            rc = xrecv(c, i, all + bytes * (size_t)i, bytes, &r[i]);
    int rc2 = r ? wait_all(c, r, g->size) : 0;
    if (!rc && !rc2) { /* combine in rank order, whoever the root is */
        memcpy(all + bytes * (size_t)root, acc, bytes);
        memcpy(acc, all, bytes);
        for (int i = 1; i < g->size; i++)
            wio_op_apply(op, dtype, all + bytes * (size_t)i, acc, count);
    }
    free(all);
    free(r);
    return rc ? rc : rc2;
}

static int check_reduce(int dtype, int op, size_t *es)
{
    int rc = check_dtype(dtype, es);
    if (rc)
        return rc;
    if (!wio_op_valid(op, dtype))
        return wio_fail(WAITIO_ERR_ARG, "operation %d is not defined on datatype %d", op, dtype);
    return 0;
}

int wio_coll_reduce(wio_engine *e, wio_group *g, const void *sbuf, void *rbuf, size_t count,
                    int dtype, int op, int root)
{
    coll_op c;
    size_t es;
    int rc;
    if ((rc = op_begin(&c, e, g)) || (rc = check_reduce(dtype, op, &es)) || (rc = check_root(g, root)))
        return rc;
    size_t bytes = count * es;
    int is_root = g->my_rank == root, linear = wio_coll_algorithm() == WIO_COLL_LINEAR;
    int vr = (g->my_rank - root + g->size) % g->size;
    const void *src = sbuf == WIO_IN_PLACE ? rbuf : sbuf;
    /* a rank that only sends (every one but the root in the linear algorithm, the odd ones in
     * the tree, to the parent reduce_tree would send to) sends its operand where it is: no copy */
    if (!is_root && (linear || (vr & 1)))
        return send_blocking(&c, linear ? root : ((vr & ~1) + root) % g->size, src, bytes);
    coll_scratch scratch;
    void *acc = is_root ? rbuf : scratch_get(&scratch, bytes);
    if (!acc)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory in reduce");
    if (acc != src && bytes)
        memmove(acc, src, bytes);
    if (linear)
        rc = reduce_linear(&c, acc, count, dtype, op, root);
    else
        rc = reduce_tree(&c, acc, count, dtype, op, root);
    if (!is_root)
        scratch_put(&scratch, acc);
    return rc;
}

/* ---- allreduce ---- */

/* Ring reduce-scatter then ring allgather: bandwidth-optimal for large vectors. */
static int allreduce_ring(coll_op *c, void *buf, size_t count, int dtype, int op)
{
    int n = c->g->size, me = c->g->my_rank, rc = 0;
    size_t es = wio_dtype_size(dtype);
    int right = (me + 1) % n, left = (me + n - 1) % n;
#define SEG_START(i) ((size_t)(i) * count / (size_t)n)
#define SEG_LEN(i) (SEG_START((i) + 1) - SEG_START(i))
    uint8_t *b = buf;
    uint8_t *tmp = malloc((count / (size_t)n + 1) * es);
    if (!tmp)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory in allreduce");
    for (int step = 0; step < n - 1 && !rc; step++) {
        int s = (me - step + n) % n, r = (me - step - 1 + 2 * n) % n;
        rc = sendrecv(c, right, b + SEG_START(s) * es, SEG_LEN(s) * es, left, tmp, SEG_LEN(r) * es);
        if (!rc)
            wio_op_apply(op, dtype, tmp, b + SEG_START(r) * es, SEG_LEN(r));
    }
    for (int step = 0; step < n - 1 && !rc; step++) {
        int s = (me - step + 1 + n) % n, r = (me - step + n) % n;
        rc = sendrecv(c, right, b + SEG_START(s) * es, SEG_LEN(s) * es, left,
                      b + SEG_START(r) * es, SEG_LEN(r) * es);
    }
#undef SEG_START
#undef SEG_LEN
    free(tmp);
    return rc;
}

/* Recursive doubling for power-of-two groups: log2(n) exchange steps instead of a reduce and a
 * bcast (2 log2(n)). Partners combine the same two operands with a commutative operation, so
 * they hold identical bits after every step, and so does every rank at the end. */
static int allreduce_doubling(coll_op *c, void *buf, size_t count, int dtype, int op)
{
    size_t bytes = count * wio_dtype_size(dtype);
    int n = c->g->size, me = c->g->my_rank, rc = 0;
    coll_scratch scratch;
    void *tmp = scratch_get(&scratch, bytes);
    if (!tmp)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory in allreduce");
    for (int mask = 1; mask < n && !rc; mask <<= 1) {
        int partner = me ^ mask;
        rc = sendrecv(c, partner, buf, bytes, partner, tmp, bytes);
        if (!rc)
            wio_op_apply(op, dtype, tmp, buf, count);
    }
    scratch_put(&scratch, tmp);
    return rc;
}

/* Every rank sends its operand to every other and folds all n in rank order: one round of
 * messages instead of log2(n) steps that each wait for the one before. On one host each step
 * costs a turn of the run queue when the cores are shared (see docs/benchmarks.md,
 * "Collectives"), so for small operands in small groups the n-1 ring writes win; every rank folds
 * the same operands in the same order, so all hold the same bits. */
int wio_coll_allreduce_in_one_round(const wio_engine *e, const wio_group *g, size_t bytes)
{
    /* over shared memory a message costs a ring write, not a system call or a file; every
     * rank decides alike from the table */
    return wio_coll_algorithm() == WIO_COLL_AUTO && e->one_host && e->all_shm &&
           g->size <= ALL_TO_ALL_MAX_RANKS && bytes * (size_t)g->size <= ALL_TO_ALL_MAX_BYTES;
}

/* Only where wio_coll_allreduce_in_one_round holds: the operands of all ranks fit here. */
static int allreduce_all_to_all(coll_op *c, void *buf, size_t count, int dtype, int op)
{
    size_t bytes = count * wio_dtype_size(dtype);
    int n = c->g->size, me = c->g->my_rank, rc = 0;
    _Alignas(max_align_t) uint8_t all[ALL_TO_ALL_MAX_BYTES]; /* folded as any datatype */
    wio_req_impl *r[2 * ALL_TO_ALL_MAX_RANKS] = {NULL};
    WIO_ASSERT(n <= ALL_TO_ALL_MAX_RANKS && bytes * (size_t)n <= sizeof all);
    memcpy(all + (size_t)me * bytes, buf, bytes);
    /* every post is tried even after one failed (a lost peer): the others still get our operand
     * instead of waiting for it */
    for (int k = 1; k < n; k++) {
        int from = (me - k + n) % n;
        int err = xrecv(c, from, all + (size_t)from * bytes, bytes, &r[from]);
        rc = rc ? rc : err;
    }
    for (int k = 1; k < n; k++) { /* the next rank first: the sends spread over the ranks */
        int err = xsend(c, (me + k) % n, buf, bytes, &r[n + (me + k) % n]);
        rc = rc ? rc : err;
    }
    int rc2 = wait_all(c, r, 2 * n); /* also after a failed post: nothing may point here later */
    if (!rc && !(rc = rc2)) {
        memcpy(buf, all, bytes);
        for (int i = 1; i < n; i++)
            wio_op_apply(op, dtype, all + (size_t)i * bytes, buf, count);
    }
    return rc;
}

int wio_coll_allreduce(wio_engine *e, wio_group *g, const void *sbuf, void *rbuf, size_t count,
                       int dtype, int op)
{
    coll_op c;
    size_t es;
    int rc;
    if ((rc = op_begin(&c, e, g)) || (rc = check_reduce(dtype, op, &es)))
        return rc;
    if (sbuf != WIO_IN_PLACE && sbuf != rbuf && count)
        memmove(rbuf, sbuf, count * es);
    if (g->size == 1)
        return 0;
    int alg = wio_coll_algorithm();
    if (alg == WIO_COLL_RING || (alg == WIO_COLL_AUTO && count * es >= RING_ALLREDUCE_MIN &&
                                 count >= (size_t)g->size))
        return allreduce_ring(&c, rbuf, count, dtype, op);
    if (wio_coll_allreduce_in_one_round(e, g, count * es))
        return allreduce_all_to_all(&c, rbuf, count, dtype, op);
    if (alg == WIO_COLL_AUTO && (g->size & (g->size - 1)) == 0 && (g->size <= 4 || !e->oversubscribed))
        return allreduce_doubling(&c, rbuf, count, dtype, op);
    rc = alg == WIO_COLL_LINEAR ? reduce_linear(&c, rbuf, count, dtype, op, 0)
                                : reduce_tree(&c, rbuf, count, dtype, op, 0);
    if (rc)
        return rc;
    return alg == WIO_COLL_LINEAR ? bcast_linear(&c, rbuf, count * es, 0)
                                  : bcast_tree(&c, rbuf, count * es, 0);
}

/* ---- barrier ---- */

int wio_coll_barrier(wio_engine *e, wio_group *g)
{
    coll_op c;
    int rc = op_begin(&c, e, g);
    if (rc || g->size == 1)
        return rc;
    char token = 0;
    if ((rc = reduce_tree(&c, &token, 0, WIO_DT_BYTE, WIO_OP_BOR, 0)))
        return rc;
    return bcast_tree(&c, &token, 0, 0);
}

/* ---- gather / scatter ---- */

static int coll_gatherv(wio_engine *e, wio_group *g, const void *sbuf, size_t scount, void *rbuf,
                     const int *rcounts, const int *displs, int dtype, int root)
{
    coll_op c;
    size_t es;
    int rc;
    if ((rc = op_begin(&c, e, g)) || (rc = check_dtype(dtype, &es)) || (rc = check_root(g, root)))
        return rc;
    if (g->my_rank != root)
        return send_blocking(&c, root, sbuf, scount * es);
    if (!rcounts || !displs)
        return wio_fail(WAITIO_ERR_ARG, "gatherv at the root needs counts and displacements");
    wio_req_impl **r = calloc((size_t)g->size, sizeof *r);
    if (!r)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory in gather");
    uint8_t *out = rbuf;
    for (int i = 0; i < g->size && !rc; i++) {
        if (rcounts[i] < 0 || displs[i] < 0)
            rc = wio_fail(WAITIO_ERR_ARG, "negative count or displacement for rank %d", i);
        else if (i == root && sbuf != WIO_IN_PLACE)
            memmove(out + (size_t)displs[i] * es, sbuf, (size_t)rcounts[i] * es);
        else if (i != root)
            rc = xrecv(&c, i, out + (size_t)displs[i] * es, (size_t)rcounts[i] * es, &r[i]);
    }
    int rc2 = wait_all(&c, r, g->size);
    free(r);
    return rc ? rc : rc2;
}

static int coll_scatterv(wio_engine *e, wio_group *g, const void *sbuf, const int *scounts,
                      const int *displs, void *rbuf, size_t rcount, int dtype, int root)
{
    coll_op c;
    size_t es;
    int rc;
    if ((rc = op_begin(&c, e, g)) || (rc = check_dtype(dtype, &es)) || (rc = check_root(g, root)))
        return rc;
    if (g->my_rank != root)
        return recv_blocking(&c, root, rbuf, rcount * es);
    if (!scounts || !displs)
        return wio_fail(WAITIO_ERR_ARG, "scatterv at the root needs counts and displacements");
    wio_req_impl **r = calloc((size_t)g->size, sizeof *r);
    if (!r)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory in scatter");
    const uint8_t *in = sbuf;
    for (int i = 0; i < g->size && !rc; i++) {
        if (scounts[i] < 0 || displs[i] < 0)
            rc = wio_fail(WAITIO_ERR_ARG, "negative count or displacement for rank %d", i);
        else if (i == root && rbuf != WIO_IN_PLACE)
            memmove(rbuf, in + (size_t)displs[i] * es, (size_t)scounts[i] * es);
        else if (i != root)
            rc = xsend(&c, i, in + (size_t)displs[i] * es, (size_t)scounts[i] * es, &r[i]);
    }
    int rc2 = wait_all(&c, r, g->size);
    free(r);
    return rc ? rc : rc2;
}

/* Ring allgather: each block travels n-1 hops to the right. */
static int coll_allgather(wio_engine *e, wio_group *g, const void *sbuf, void *rbuf, size_t count,
                       int dtype)
{
    coll_op c;
    size_t es;
    int rc;
    if ((rc = op_begin(&c, e, g)) || (rc = check_dtype(dtype, &es)))
        return rc;
    int n = g->size, me = g->my_rank;
    size_t blk = count * es;
    uint8_t *out = rbuf;
    if (sbuf != WIO_IN_PLACE)
        memmove(out + blk * (size_t)me, sbuf, blk);
    for (int step = 0; step < n - 1 && !rc; step++) {
        int s = (me - step + n) % n, r = (me - step - 1 + n) % n;
        rc = sendrecv(&c, (me + 1) % n, out + blk * (size_t)s, blk, (me + n - 1) % n,
                      out + blk * (size_t)r, blk);
    }
    return rc;
}

static int coll_alltoall(wio_engine *e, wio_group *g, const void *sbuf, void *rbuf, size_t count,
                      int dtype)
{
    coll_op c;
    size_t es;
    int rc;
    if ((rc = op_begin(&c, e, g)) || (rc = check_dtype(dtype, &es)))
        return rc;
    int n = g->size, me = g->my_rank;
    size_t blk = count * es;
    const uint8_t *in = sbuf;
    uint8_t *out = rbuf;
    wio_req_impl **r = calloc(2 * (size_t)n, sizeof *r);
    if (!r)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory in alltoall");
    for (int k = 1; k < n && !rc; k++) { /* staggered so that not everyone hits rank 0 first */
        int src = (me - k + n) % n, dst = (me + k) % n;
        rc = xrecv(&c, src, out + blk * (size_t)src, blk, &r[2 * k]);
        if (!rc)
            rc = xsend(&c, dst, in + blk * (size_t)dst, blk, &r[2 * k + 1]);
    }
    memmove(out + blk * (size_t)me, in + blk * (size_t)me, blk);
    int rc2 = wait_all(&c, r, 2 * n);
    free(r);
    return rc ? rc : rc2;
}

/* ---- the entry points of the collectives only the conversion layer calls, traced ---- */

static int traced_end(const wio_group *g, int op, int rc)
{
    WIO_TRACE(WIO_TR_COLL_END, 0, WIO_TR_ANY, g ? g->gid : 0, (uint64_t)op, 0, 0, WIO_TR_PATH_FLAT, rc);
    return rc;
}

int wio_coll_gatherv(wio_engine *e, wio_group *g, const void *sbuf, size_t scount, void *rbuf,
                     const int *rcounts, const int *displs, int dtype, int root)
{
    WIO_TRACE(WIO_TR_COLL_BEGIN, 0, WIO_TR_ANY, g ? g->gid : 0, WIO_TR_OP_GATHER, scount * wio_dtype_size(dtype), 0, 0, 0);
    return traced_end(g, WIO_TR_OP_GATHER, coll_gatherv(e, g, sbuf, scount, rbuf, rcounts, displs, dtype, root));
}

int wio_coll_scatterv(wio_engine *e, wio_group *g, const void *sbuf, const int *scounts,
                      const int *displs, void *rbuf, size_t rcount, int dtype, int root)
{
    WIO_TRACE(WIO_TR_COLL_BEGIN, 0, WIO_TR_ANY, g ? g->gid : 0, WIO_TR_OP_SCATTER, rcount * wio_dtype_size(dtype), 0, 0, 0);
    return traced_end(g, WIO_TR_OP_SCATTER, coll_scatterv(e, g, sbuf, scounts, displs, rbuf, rcount, dtype, root));
}

int wio_coll_allgather(wio_engine *e, wio_group *g, const void *sbuf, void *rbuf, size_t count, int dtype)
{
    WIO_TRACE(WIO_TR_COLL_BEGIN, 0, WIO_TR_ANY, g ? g->gid : 0, WIO_TR_OP_ALLGATHER, count * wio_dtype_size(dtype), 0, 0, 0);
    return traced_end(g, WIO_TR_OP_ALLGATHER, coll_allgather(e, g, sbuf, rbuf, count, dtype));
}

int wio_coll_alltoall(wio_engine *e, wio_group *g, const void *sbuf, void *rbuf, size_t count, int dtype)
{
    WIO_TRACE(WIO_TR_COLL_BEGIN, 0, WIO_TR_ANY, g ? g->gid : 0, WIO_TR_OP_ALLTOALL, count * wio_dtype_size(dtype), 0, 0, 0);
    return traced_end(g, WIO_TR_OP_ALLTOALL, coll_alltoall(e, g, sbuf, rbuf, count, dtype));
}
