/*
 * vcoll.c — the conversion layer's collectives on any datatype (predefined or derived), with
 * user-defined operations and MPI_IN_PLACE, and the collectives MPI has beyond the basics:
 * Allgatherv, Alltoallv, Reduce_scatter(_block), Scan, Exscan.
 *
 * Data crosses WaitIO packed (dtype.h): a contiguous type goes straight from and into the
 * caller's buffer, any other is packed into a scratch buffer before and unpacked after. With a
 * predefined operation on a type made of one predefined type, the packed data is an array of
 * that type, and the reduction takes the same path as one of predefined types (hierarchical
 * through each PB's MPI where hier.c chooses it). A user-defined operation cannot run inside
 * the PBs' MPI libraries (they know nothing of the function or of our datatype handles), so it
 * takes the flat path of this file: a binomial tree over the group in rank order, whose every
 * step combines the lower ranks' operand with the higher ranks' one in that order, so that
 * non-commutative operations get x0 op x1 op ... op x(n-1), as MPI requires of them.
 */
#define WIO_LOG_SUBSYS WIO_SUB_MPI /* this file logs as "mpi" (WAITIO_LOG=mpi=LEVEL) */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "coll/coll.h"
#include "coll/datatype.h"
#include "core/api_lock.h"
#include "mpi/devstage.h"
#include "mpi/dtype.h"
#include "mpi/mpi_internal.h"

/* ---- point-to-point in the group's collective context (as src/coll does) ---- */

typedef struct vop {
    wio_engine *e;
    wio_group *g;
    uint64_t tag;
} vop;

static int group_ok(wio_group *g)
{
    if (!g)
        return wio_fail(WAITIO_ERR_GROUP, "NULL communicator");
    if (g->my_rank == WAITIO_UNDEFINED)
        return wio_fail(WAITIO_ERR_NOT_MEMBER, "collective on group %u: not a member",
                        (unsigned)g->gid);
    return 0;
}

static int v_begin(vop *c, wio_engine *e, wio_group *g)
{
    *c = (vop){.e = e, .g = g};
    int rc = group_ok(g);
    if (!rc)
        c->tag = g->coll_seq++;
    return rc;
}

static int v_wait(vop *c, wio_req_impl *r)
{
    if (!r)
        return 0;
    int rc = wio_engine_wait_req(c->e, r, 0);
    if (!rc && (rc = r->status.error) != 0)
        wio_engine_explain(c->e, r);
    if (r->state == WIO_RS_DONE)
        wio_req_release(c->e, r);
    return rc;
}

static int v_waitall(vop *c, wio_req_impl **r, int n)
{
    int first = 0;
    for (int i = 0; i < n; i++) {
        int rc = v_wait(c, r[i]);
        first = first ? first : rc;
    }
    return first;
}

static int v_send(vop *c, int dst, const void *buf, size_t len)
{
    wio_req_impl *r;
    int rc = wio_engine_isend(c->e, c->g, dst, buf, len, c->tag, WIO_CTX_COLL, &r);
    return rc ? rc : v_wait(c, r);
}

static int v_recv(vop *c, int src, void *buf, size_t len)
{
    wio_req_impl *r;
    int rc = wio_engine_irecv(c->e, c->g, src, buf, len, c->tag, WIO_CTX_COLL, &r);
    return rc ? rc : v_wait(c, r);
}

static int v_sendrecv(vop *c, int dst, const void *sbuf, size_t slen, int src, void *rbuf, size_t rlen)
{
    wio_req_impl *r[2] = {NULL, NULL};
    int rc = wio_engine_irecv(c->e, c->g, src, rbuf, rlen, c->tag, WIO_CTX_COLL, &r[0]);
    if (!rc)
        rc = wio_engine_isend(c->e, c->g, dst, sbuf, slen, c->tag, WIO_CTX_COLL, &r[1]);
    int rc2 = v_waitall(c, r, 2);
    return rc ? rc : rc2;
}

/* ---- helpers ---- */

static int check_root(const wio_group *g, int root)
{
    return root >= 0 && root < g->size ? 0
           : wio_fail(WAITIO_ERR_ARG, "root %d outside the group of %d", root, g->size);
}

static int check_count(int count)
{
    return count >= 0 ? 0 : wio_fail(WAITIO_ERR_ARG, "negative count %d", count);
}

/* The widest predefined unit (1, 2, 4, 8 or 16 bytes) dividing both sizes (0: no constraint):
 * collectives of src/coll that take int counts then reach that many times further. */
static int unit_of(size_t a, size_t b, size_t *unit)
{
    size_t u = 16;
    while (u > 1 && ((a % u) || (b % u)))
        u >>= 1;
    *unit = u;
    switch (u) {
    case 16: return WIO_DT_F_DOUBLE_COMPLEX;
    case 8: return WIO_DT_INT64;
    case 4: return WIO_DT_INT32;
    case 2: return WIO_DT_INT16;
    default: return WIO_DT_BYTE;
    }
}

/* bytes / unit as an int count for src/coll, or WAITIO_ERR_ARG when it does not fit. */
static int to_units(size_t bytes, size_t unit, int *out)
{
    if (bytes / unit > (size_t)INT_MAX)
        return wio_fail(WAITIO_ERR_ARG, "%zu bytes: too large for one block of a v-collective",
                        bytes);
    *out = (int)(bytes / unit);
    return 0;
}

/* Per-rank blocks of a v-collective: counts[i] (or `count` each when counts is NULL) elements
 * at displacement displs[i] (or i * count) extents. */
typedef struct blocks {
    int n;
    size_t *len, *off;       /* packed bytes, and their offset in the contiguous data */
    size_t total;            /* bytes of all blocks when packed back to back */
} blocks;

static void blocks_free(blocks *b)
{
    free(b->len);
    free(b->off);
    b->len = b->off = NULL;
}

/* direct: the type is contiguous and the data goes where the caller's displacements say (off =
 * displacement * extent from the data's start); else packed back to back (off = prefix sum). */
static int blocks_make(blocks *b, int n, int count, const int *counts, const int *displs,
                       const wio_mpi_dt *t, int direct)
{
    *b = (blocks){.n = n};
    b->len = calloc((size_t)n, sizeof *b->len);
    b->off = calloc((size_t)n, sizeof *b->off);
    if (!b->len || !b->off) {
        blocks_free(b);
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    }
    if (counts && !displs) {
        blocks_free(b);
        return wio_fail(WAITIO_ERR_ARG, "NULL displacements");
    }
    for (int i = 0; i < n; i++) {
        int c = counts ? counts[i] : count, d = counts ? displs[i] : i * count;
        if (c < 0 || d < 0) {
            blocks_free(b);
            return wio_fail(WAITIO_ERR_ARG, "negative count or displacement for rank %d", i);
        }
        b->len[i] = (size_t)c * t->size;
        b->off[i] = direct ? (size_t)d * t->size : b->total;
        b->total += b->len[i];
    }
    return 0;
}

/* Element displacement of rank i's block in the caller's buffer, in bytes. */
static ptrdiff_t user_disp(const int *counts, const int *displs, int count, int i, const wio_mpi_dt *t)
{
    return (ptrdiff_t)(counts ? displs[i] : i * count) * t->extent;
}

static int user_count(const int *counts, int count, int i) { return counts ? counts[i] : count; }

/* ---- reductions in rank order (user operations, and the scans of every operation) ---- */

/* Binomial tree toward rank 0 over group ranks as they are, so that a rank's accumulator
 * always covers a run of consecutive ranks starting at its own: combining it (lower) with the
 * received one (higher) keeps the order. Rank 0 then hands the result to the root. */
static int ordered_reduce(vop *c, const wio_mpi_reducer *r, const void *mine, void *result, int root)
{
    int n = c->g->size, me = c->g->my_rank, rc = 0;
    size_t bytes = r->bytes;
    char *acc = malloc(bytes ? bytes : 1), *tmp = malloc(bytes ? bytes : 1);
    if (!acc || !tmp) {
        free(acc);
        free(tmp);
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory in reduce");
    }
    if (bytes)
        memcpy(acc, mine, bytes);
    for (int mask = 1; mask < n && !rc; mask <<= 1) {
        if (me & mask) {
            rc = v_send(c, me - mask, acc, bytes);
            break;
        }
        if (me + mask < n && !(rc = v_recv(c, me + mask, tmp, bytes)) &&
            !(rc = wio_mpi_reducer_apply(r, acc, tmp))) {
            char *t = acc; /* tmp = acc op tmp is the run's result now */
            acc = tmp;
            tmp = t;
        }
    }
    if (!rc && root != 0 && me == 0)
        rc = v_send(c, root, acc, bytes);
    else if (!rc && root != 0 && me == root)
        rc = v_recv(c, 0, result, bytes);
    else if (!rc && me == root && bytes)
        memcpy(result, acc, bytes);
    free(acc);
    free(tmp);
    return rc;
}

/* Recursive-doubling scan (inclusive, or exclusive: rank 0's result is left alone, *have = 0).
 * At each step a rank's partial covers the aligned run of ranks around it; what comes from a
 * lower partner precedes everything it holds, what comes from a higher one follows it. */
static int scan_core(vop *c, const wio_mpi_reducer *r, const void *mine, void *result,
                     int exclusive, int *have)
{
    int n = c->g->size, me = c->g->my_rank, rc = 0;
    size_t bytes = r->bytes;
    char *partial = malloc(bytes ? bytes : 1), *tmp = malloc(bytes ? bytes : 1);
    if (!partial || !tmp) {
        free(partial);
        free(tmp);
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory in scan");
    }
    if (bytes)
        memcpy(partial, mine, bytes);
    *have = !exclusive;
    if (!exclusive && bytes && result != mine)
        memcpy(result, mine, bytes);
    for (int mask = 1; mask < n && !rc; mask <<= 1) {
        int peer = me ^ mask;
        if (peer >= n)
            continue;
        if ((rc = v_sendrecv(c, peer, partial, bytes, peer, tmp, bytes)))
            break;
        if (peer < me) {
            rc = wio_mpi_reducer_apply(r, tmp, partial);
            if (!rc && *have)
                rc = wio_mpi_reducer_apply(r, tmp, result);
            else if (!rc && bytes)
                memcpy(result, tmp, bytes);
            *have = 1;
        } else if (r->commute) {
            rc = wio_mpi_reducer_apply(r, tmp, partial);
        } else if (!(rc = wio_mpi_reducer_apply(r, partial, tmp))) {
            char *t = partial;
            partial = tmp;
            tmp = t;
        }
    }
    free(partial);
    free(tmp);
    return rc;
}

/* ---- bcast, reduce, allreduce ---- */

int wio_mpi_v_bcast(wio_engine *e, wio_group *g, void *buf, int count, int dtype, int root)
{
    int rc;
    if ((rc = check_count(count)) || (rc = group_ok(g)) || (rc = check_root(g, root)))
        return rc;
    if (wio_mpi_dt_is_predefined(dtype))
        return wio_mpi_hier_bcast(e, g, buf, (size_t)count, dtype, root);
    wio_mpi_tbuf b;
    int me = g->my_rank;
    if ((rc = wio_mpi_tbuf_open(&b, buf, (size_t)count, dtype, me == root)))
        return rc;
    rc = wio_mpi_hier_bcast(e, g, b.data, b.bytes, WIO_DT_BYTE, root);
    wio_mpi_tbuf_close(&b, !rc && me != root);
    return rc;
}

/* The operands of a reduction: S (what this rank contributes) and R (where the result goes;
 * opened only where there is one). In place, S is R's packed content. */
typedef struct red_bufs {
    wio_mpi_tbuf s, r;
    int has_s, has_r;
    const void *sdata;       /* S's data, or WIO_IN_PLACE when it is R's */
} red_bufs;

static int red_open(red_bufs *b, const void *sbuf, void *rbuf, size_t count, int dtype, int want_r)
{
    memset(b, 0, sizeof *b);
    int in_place = sbuf == WAITIO_MPI_IN_PLACE, rc = 0;
    if (in_place && !want_r)
        return wio_fail(WAITIO_ERR_ARG, "WAITIO_MPI_IN_PLACE where no result is received");
    if (want_r && !(rc = wio_mpi_tbuf_open(&b->r, rbuf, count, dtype, in_place)))
        b->has_r = 1;
    if (!rc && !in_place && !(rc = wio_mpi_tbuf_open(&b->s, sbuf, count, dtype, 1)))
        b->has_s = 1;
    b->sdata = in_place ? WIO_IN_PLACE : b->s.data;
    if (rc) {
        if (b->has_r)
            wio_mpi_tbuf_close(&b->r, 0);
        b->has_r = 0;
    }
    return rc;
}

static int red_close(red_bufs *b, int rc)
{
    if (b->has_s)
        wio_mpi_tbuf_close(&b->s, 0);
    if (b->has_r)
        wio_mpi_tbuf_close(&b->r, !rc);
    return rc;
}

/* S's packed bytes wherever they are (in place: R's). */
static const void *red_src(const red_bufs *b) { return b->sdata == WIO_IN_PLACE ? b->r.data : b->sdata; }

int wio_mpi_v_reduce(wio_engine *e, wio_group *g, const void *sbuf, void *rbuf, int count,
                     int dtype, int op, int root)
{
    wio_mpi_reducer r;
    int rc;
    if ((rc = check_count(count)) || (rc = group_ok(g)) || (rc = check_root(g, root)) ||
        (rc = wio_mpi_reducer_init(&r, dtype, op, (size_t)count)))
        return rc;
    if (!r.fn && wio_mpi_dt_is_predefined(dtype))
        return wio_mpi_hier_reduce(e, g, sbuf, rbuf, (size_t)count, dtype, op, root);
    int is_root = g->my_rank == root;
    red_bufs b;
    if ((rc = red_open(&b, sbuf, rbuf, (size_t)count, dtype, is_root)))
        return rc;
    if (!r.fn) {
        rc = wio_mpi_hier_reduce(e, g, b.sdata, is_root ? b.r.data : NULL,
                                 (size_t)count * r.t->nbase, r.t->base, op, root);
    } else {
        vop c;
        if (!(rc = v_begin(&c, e, g)))
            rc = ordered_reduce(&c, &r, red_src(&b), is_root ? b.r.data : NULL, root);
    }
    return red_close(&b, rc);
}

int wio_mpi_v_allreduce(wio_engine *e, wio_group *g, const void *sbuf, void *rbuf, int count,
                        int dtype, int op)
{
    wio_mpi_reducer r;
    int rc;
    if ((rc = check_count(count)) || (rc = group_ok(g)) ||
        (rc = wio_mpi_reducer_init(&r, dtype, op, (size_t)count)))
        return rc;
    if (!r.fn && wio_mpi_dt_is_predefined(dtype))
        return wio_mpi_hier_allreduce(e, g, sbuf, rbuf, (size_t)count, dtype, op);
    red_bufs b;
    if ((rc = red_open(&b, sbuf, rbuf, (size_t)count, dtype, 1)))
        return rc;
    if (!r.fn) {
        rc = wio_mpi_hier_allreduce(e, g, b.sdata, b.r.data, (size_t)count * r.t->nbase,
                                    r.t->base, op);
    } else {
        vop c;
        if (!(rc = v_begin(&c, e, g)))
            rc = ordered_reduce(&c, &r, red_src(&b), b.r.data, 0);
        if (!rc)
            rc = wio_coll_bcast(e, g, b.r.data, b.r.bytes, WIO_DT_BYTE, 0);
    }
    return red_close(&b, rc);
}

/* ---- gather(v), scatter(v) ---- */

/* The blocks' lengths and offsets in units of `unit` bytes, as the core's v-collectives count
 * (two malloc'd arrays of n, freed by the caller also on failure). */
static int block_units(const blocks *bl, int n, size_t unit, int **uc, int **ud)
{
    *uc = calloc((size_t)n, sizeof **uc);
    *ud = calloc((size_t)n, sizeof **ud);
    if (!*uc || !*ud)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    int rc = 0;
    for (int i = 0; i < n && !rc; i++)
        if (!(rc = to_units(bl->len[i], unit, &(*uc)[i])))
            rc = to_units(bl->off[i], unit, &(*ud)[i]);
    return rc;
}

int wio_mpi_v_gatherv(wio_engine *e, wio_group *g, const void *sbuf, int scount, int stype,
                      void *rbuf, int rcount, const int *rcounts, const int *displs, int rtype,
                      int root)
{
    int rc;
    if ((rc = group_ok(g)) || (rc = check_root(g, root)))
        return rc;
    int me = g->my_rank, n = g->size, in_place = me == root && sbuf == WAITIO_MPI_IN_PLACE;
    wio_mpi_tbuf s = {0};
    if (!in_place && ((rc = check_count(scount)) ||
                      (rc = wio_mpi_tbuf_open(&s, sbuf, (size_t)scount, stype, 1))))
        return rc;
    if (me != root) { /* only sends: bytes, whatever the types */
        rc = wio_coll_gatherv(e, g, s.data, s.bytes, NULL, NULL, NULL, WIO_DT_BYTE, root);
        wio_mpi_tbuf_close(&s, 0);
        return rc;
    }
    const wio_mpi_dt *rt;
    blocks bl = {0};
    if ((rc = (rcounts ? 0 : check_count(rcount))) || (rc = wio_mpi_dt_get(rtype, &rt)) ||
        (rc = blocks_make(&bl, n, rcount, rcounts, displs, rt, rt->contig))) {
        wio_mpi_tbuf_close(&s, 0);
        return rc;
    }
    if (!in_place && s.bytes != bl.len[me])
        rc = wio_fail(WAITIO_ERR_ARG, "the root sends %zu bytes to itself but receives %zu",
                      s.bytes, bl.len[me]);
    size_t unit;
    int udt = unit_of(rt->size, in_place ? 0 : s.t->size, &unit);
    int *uc = NULL, *ud = NULL;
    if (!rc)
        rc = block_units(&bl, n, unit, &uc, &ud);
    char *tmp = NULL, *data = (char *)rbuf + (rt->contig && bl.total ? rt->true_lb : 0);
    if (!rc && !rt->contig && !(data = tmp = malloc(bl.total ? bl.total : 1)))
        rc = wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    if (!rc && in_place && tmp) /* the root's own block is where the caller put it */
        uc[me] = 0;
    if (!rc)
        rc = wio_coll_gatherv(e, g, in_place ? WIO_IN_PLACE : s.data, s.bytes / unit, data, uc, ud,
                              udt, root);
    for (int i = 0; i < n && !rc && tmp; i++)
        if (!(in_place && i == me))
            wio_mpi_dt_unpack(rt, tmp + bl.off[i], (size_t)user_count(rcounts, rcount, i),
                              bl.len[i], (char *)rbuf + user_disp(rcounts, displs, rcount, i, rt));
    free(tmp);
    free(uc);
    free(ud);
    blocks_free(&bl);
    wio_mpi_tbuf_close(&s, 0);
    return rc;
}

int wio_mpi_v_scatterv(wio_engine *e, wio_group *g, const void *sbuf, int scount,
                       const int *scounts, const int *displs, int stype, void *rbuf, int rcount,
                       int rtype, int root)
{
    int rc;
    if ((rc = group_ok(g)) || (rc = check_root(g, root)))
        return rc;
    int me = g->my_rank, n = g->size, in_place = me == root && rbuf == WAITIO_MPI_IN_PLACE;
    wio_mpi_tbuf r = {0};
    if (!in_place && ((rc = check_count(rcount)) ||
                      (rc = wio_mpi_tbuf_open(&r, rbuf, (size_t)rcount, rtype, 0))))
        return rc;
    if (me != root) {
        rc = wio_coll_scatterv(e, g, NULL, NULL, NULL, r.data, r.bytes, WIO_DT_BYTE, root);
        wio_mpi_tbuf_close(&r, !rc);
        return rc;
    }
    const wio_mpi_dt *st;
    blocks bl = {0};
    if ((rc = (scounts ? 0 : check_count(scount))) || (rc = wio_mpi_dt_get(stype, &st)) ||
        (rc = blocks_make(&bl, n, scount, scounts, displs, st, st->contig))) {
        wio_mpi_tbuf_close(&r, 0);
        return rc;
    }
    if (!in_place && r.bytes != bl.len[me])
        rc = wio_fail(WAITIO_ERR_ARG, "the root sends %zu bytes to itself but receives %zu",
                      bl.len[me], r.bytes);
    size_t unit;
    int udt = unit_of(st->size, in_place ? 0 : r.t->size, &unit);
    int *uc = NULL, *ud = NULL;
    if (!rc)
        rc = block_units(&bl, n, unit, &uc, &ud);
    const char *data = (const char *)sbuf + (st->contig && bl.total ? st->true_lb : 0);
    char *tmp = NULL;
    if (!rc && !st->contig && !(tmp = malloc(bl.total ? bl.total : 1)))
        rc = wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    for (int i = 0; i < n && !rc && tmp; i++)
        if (!(in_place && i == me))
            wio_mpi_dt_pack(st, (const char *)sbuf + user_disp(scounts, displs, scount, i, st),
                            (size_t)user_count(scounts, scount, i), tmp + bl.off[i]);
    if (tmp)
        data = tmp;
    if (!rc)
        rc = wio_coll_scatterv(e, g, data, uc, ud, in_place ? WIO_IN_PLACE : r.data,
                               r.bytes / unit, udt, root);
    free(tmp);
    free(uc);
    free(ud);
    blocks_free(&bl);
    wio_mpi_tbuf_close(&r, !rc);
    return rc;
}

/* ---- allgather(v) ---- */

/* Ring over blocks of any sizes: at step k every rank passes block (me - k) to its right and
 * takes block (me - k - 1) from its left. */
static int allgatherv_ring(vop *c, char *data, const blocks *bl)
{
    int n = c->g->size, me = c->g->my_rank, rc = 0;
    for (int step = 0; step < n - 1 && !rc; step++) {
        int s = (me - step + n) % n, r = (me - step - 1 + n) % n;
        rc = v_sendrecv(c, (me + 1) % n, data + bl->off[s], bl->len[s], (me + n - 1) % n,
                        data + bl->off[r], bl->len[r]);
    }
    return rc;
}

int wio_mpi_v_allgatherv(wio_engine *e, wio_group *g, const void *sbuf, int scount, int stype,
                         void *rbuf, int rcount, const int *rcounts, const int *displs, int rtype)
{
    int rc;
    if ((rc = group_ok(g)))
        return rc;
    int me = g->my_rank, n = g->size, in_place = sbuf == WAITIO_MPI_IN_PLACE;
    const wio_mpi_dt *rt;
    blocks bl = {0};
    if ((rc = (rcounts ? 0 : check_count(rcount))) || (rc = wio_mpi_dt_get(rtype, &rt)) ||
        (rc = blocks_make(&bl, n, rcount, rcounts, displs, rt, rt->contig)))
        return rc;
    wio_mpi_tbuf s = {0};
    if (!in_place && !(rc = check_count(scount)) &&
        !(rc = wio_mpi_tbuf_open(&s, sbuf, (size_t)scount, stype, 1)) && s.bytes != bl.len[me])
        rc = wio_fail(WAITIO_ERR_ARG, "sends %zu bytes but receives %zu from itself", s.bytes,
                      bl.len[me]);
    char *tmp = NULL, *data = (char *)rbuf + (rt->contig && bl.total ? rt->true_lb : 0);
    if (!rc && !rt->contig && !(data = tmp = malloc(bl.total ? bl.total : 1)))
        rc = wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    if (!rc && !in_place && bl.len[me])
        memmove(data + bl.off[me], s.data, bl.len[me]);
    else if (!rc && in_place && tmp) /* the own block is in the caller's buffer: pack it */
        wio_mpi_dt_pack(rt, (char *)rbuf + user_disp(rcounts, displs, rcount, me, rt),
                        (size_t)user_count(rcounts, rcount, me), tmp + bl.off[me]);
    wio_mpi_tbuf_close(&s, 0);
    if (!rc && !rcounts) { /* equal blocks back to back: the traced ring of src/coll */
        size_t unit;
        int udt = unit_of(rt->size, 0, &unit);
        rc = wio_coll_allgather(e, g, WIO_IN_PLACE, data, bl.len[0] / unit, udt);
    } else if (!rc) {
        vop c;
        if (!(rc = v_begin(&c, e, g)))
            rc = allgatherv_ring(&c, data, &bl);
    }
    for (int i = 0; i < n && !rc && tmp; i++)
        wio_mpi_dt_unpack(rt, tmp + bl.off[i], (size_t)user_count(rcounts, rcount, i), bl.len[i],
                          (char *)rbuf + user_disp(rcounts, displs, rcount, i, rt));
    free(tmp);
    blocks_free(&bl);
    return rc;
}

/* ---- alltoall(v) ---- */

/* Every pair at once, staggered so that not everyone starts with rank 0. */
static int alltoallv_bytes(vop *c, const char *s, const blocks *sb, char *r, const blocks *rb)
{
    int n = c->g->size, me = c->g->my_rank, rc = 0;
    wio_req_impl **q = calloc(2 * (size_t)n, sizeof *q);
    if (!q)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory in alltoallv");
    for (int k = 1; k < n && !rc; k++) {
        int src = (me - k + n) % n, dst = (me + k) % n;
        rc = wio_engine_irecv(c->e, c->g, src, r + rb->off[src], rb->len[src], c->tag,
                              WIO_CTX_COLL, &q[2 * k]);
        if (!rc)
            rc = wio_engine_isend(c->e, c->g, dst, s + sb->off[dst], sb->len[dst], c->tag,
                                  WIO_CTX_COLL, &q[2 * k + 1]);
    }
    if (!rc && sb->len[me] != rb->len[me])
        rc = wio_fail(WAITIO_ERR_ARG, "sends %zu bytes to itself but receives %zu", sb->len[me],
                      rb->len[me]);
    else if (!rc && rb->len[me])
        memmove(r + rb->off[me], s + sb->off[me], rb->len[me]);
    int rc2 = v_waitall(c, q, 2 * n);
    free(q);
    return rc ? rc : rc2;
}

int wio_mpi_v_alltoallv(wio_engine *e, wio_group *g, const void *sbuf, int scount,
                        const int *scounts, const int *sdispls, int stype, void *rbuf, int rcount,
                        const int *rcounts, const int *rdispls, int rtype)
{
    int rc;
    if ((rc = group_ok(g)))
        return rc;
    int n = g->size, in_place = sbuf == WAITIO_MPI_IN_PLACE;
    if (in_place) { /* the data to send is what the receive buffer holds, laid out as received */
        sbuf = rbuf;
        scount = rcount;
        scounts = rcounts;
        sdispls = rdispls;
        stype = rtype;
    }
    const wio_mpi_dt *st, *rt;
    blocks sb = {0}, rb = {0};
    if ((rc = (scounts ? 0 : check_count(scount))) || (rc = (rcounts ? 0 : check_count(rcount))) ||
        (rc = wio_mpi_dt_get(stype, &st)) || (rc = wio_mpi_dt_get(rtype, &rt)))
        return rc;
    if (!scounts && !rcounts && st->contig && rt->contig && !in_place) {
        /* equal contiguous blocks: the traced alltoall of src/coll */
        size_t unit;
        int udt = unit_of(st->size, rt->size, &unit);
        if ((size_t)scount * st->size != (size_t)rcount * rt->size)
            return wio_fail(WAITIO_ERR_ARG, "send and receive sizes differ (%zu vs %zu bytes)",
                            (size_t)scount * st->size, (size_t)rcount * rt->size);
        size_t bytes = (size_t)rcount * rt->size;
        return wio_coll_alltoall(e, g, (const char *)sbuf + (bytes ? st->true_lb : 0),
                                 (char *)rbuf + (bytes ? rt->true_lb : 0), bytes / unit, udt);
    }
    /* in place, the send data must be copied out before receives overwrite it */
    int spack = !st->contig || in_place;
    if ((rc = blocks_make(&sb, n, scount, scounts, sdispls, st, !spack)) ||
        (rc = blocks_make(&rb, n, rcount, rcounts, rdispls, rt, rt->contig))) {
        blocks_free(&sb);
        return rc;
    }
    char *stmp = NULL, *rtmp = NULL;
    const char *sdata = (const char *)sbuf + (!spack && sb.total ? st->true_lb : 0);
    char *rdata = (char *)rbuf + (rt->contig && rb.total ? rt->true_lb : 0);
    if (spack && !(stmp = malloc(sb.total ? sb.total : 1)))
        rc = wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    if (!rc && !rt->contig && !(rdata = rtmp = malloc(rb.total ? rb.total : 1)))
        rc = wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    for (int i = 0; i < n && !rc && stmp; i++)
        wio_mpi_dt_pack(st, (const char *)sbuf + user_disp(scounts, sdispls, scount, i, st),
                        (size_t)user_count(scounts, scount, i), stmp + sb.off[i]);
    if (stmp)
        sdata = stmp;
    vop c;
    if (!rc && !(rc = v_begin(&c, e, g)))
        rc = alltoallv_bytes(&c, sdata, &sb, rdata, &rb);
    for (int i = 0; i < n && !rc && rtmp; i++)
        wio_mpi_dt_unpack(rt, rtmp + rb.off[i], (size_t)user_count(rcounts, rcount, i), rb.len[i],
                          (char *)rbuf + user_disp(rcounts, rdispls, rcount, i, rt));
    free(stmp);
    free(rtmp);
    blocks_free(&sb);
    blocks_free(&rb);
    return rc;
}

/* ---- reduce_scatter(_block), scan, exscan ---- */

/* Rank 0 holds `full`, the packed elements of every rank's part back to back; each rank gets
 * its part (count, or counts[i], elements of t) unpacked into rbuf. */
static int scatter_packed(wio_engine *e, wio_group *g, const char *full, int count,
                          const int *counts, const wio_mpi_dt *t, void *rbuf, int dtype)
{
    int n = g->size, me = g->my_rank, rc = 0;
    size_t unit;
    int udt = unit_of(t->size, 0, &unit);
    int *uc = NULL, *ud = NULL;
    if (me == 0) {
        uc = calloc((size_t)n, sizeof *uc);
        ud = calloc((size_t)n, sizeof *ud);
        if (!uc || !ud)
            rc = wio_fail(WAITIO_ERR_NOMEM, "out of memory");
        size_t off = 0;
        for (int i = 0; i < n && !rc; i++) {
            size_t len = (size_t)user_count(counts, count, i) * t->size;
            if (!(rc = to_units(len, unit, &uc[i])))
                rc = to_units(off, unit, &ud[i]);
            off += len;
        }
    }
    wio_mpi_tbuf r = {0};
    if (!rc)
        rc = wio_mpi_tbuf_open(&r, rbuf, (size_t)user_count(counts, count, me), dtype, 0);
    if (!rc) {
        rc = wio_coll_scatterv(e, g, full, uc, ud, r.data, r.bytes / unit, udt, 0);
        wio_mpi_tbuf_close(&r, !rc);
    }
    free(uc);
    free(ud);
    return rc;
}

static int reduce_scatter(wio_engine *e, wio_group *g, const void *sbuf, void *rbuf, int rcount,
                          const int *rcounts, int dtype, int op)
{
    int rc;
    if ((rc = group_ok(g)))
        return rc;
    if (!rcounts && (rc = check_count(rcount)))
        return rc;
    int n = g->size, me = g->my_rank;
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        int ci = rcounts ? rcounts[i] : rcount;
        if (ci < 0)
            return wio_fail(WAITIO_ERR_ARG, "negative count %d for rank %d", ci, i);
        total += (size_t)ci;
    }
    if (total > (size_t)INT_MAX)
        return wio_fail(WAITIO_ERR_ARG, "%zu elements in all: too many", total);
    wio_mpi_reducer r;
    if ((rc = wio_mpi_reducer_init(&r, dtype, op, total)))
        return rc;
    /* in place, the operand is the receive buffer (all `total` elements) */
    wio_mpi_tbuf s;
    const void *src = sbuf == WAITIO_MPI_IN_PLACE ? rbuf : sbuf;
    if ((rc = wio_mpi_tbuf_open(&s, src, total, dtype, 1)))
        return rc;
    char *full = me == 0 ? malloc(r.bytes ? r.bytes : 1) : NULL;
    if (me == 0 && !full)
        rc = wio_fail(WAITIO_ERR_NOMEM, "out of memory in reduce_scatter");
    if (!rc && !r.fn) {
        rc = wio_mpi_hier_reduce(e, g, s.data, full, total * r.t->nbase, r.t->base, op, 0);
    } else if (!rc) {
        vop c;
        if (!(rc = v_begin(&c, e, g)))
            rc = ordered_reduce(&c, &r, s.data, full, 0);
    }
    wio_mpi_tbuf_close(&s, 0);
    if (!rc) /* then rank 0 hands every rank its part */
        rc = scatter_packed(e, g, full, rcount, rcounts, r.t, rbuf, dtype);
    free(full);
    return rc;
}

/* reduce_scatter(_block) with device buffers staged (devstage.h): the operand is `total`
 * elements (the receive buffer's, in place), the result this rank's part. */
static int reduce_scatter_dev(wio_engine *e, wio_group *g, const void *sbuf, void *rbuf,
                              int rcount, const int *rcounts, int dtype, int op)
{
    int staged = g && g->my_rank != WAITIO_UNDEFINED;
    long long total = 0;
    for (int i = 0; staged && i < g->size; i++) {
        int ci = rcounts ? rcounts[i] : rcount;
        staged = ci >= 0; /* else not staged: reduce_scatter says what is wrong */
        total += ci;
    }
    staged = staged && total <= INT_MAX;
    int in_place = sbuf == WAITIO_MPI_IN_PLACE, mine = staged ? (rcounts ? rcounts[g->my_rank] : rcount) : 0;
    wio_mpi_layout all = {.n = 1, .count = (int)total, .dtype = dtype};
    wio_mpi_layout part = {.n = 1, .count = mine, .dtype = dtype};
    wio_mpi_dev2 d;
    void *sb, *rb;
    int rc = wio_mpi_dev_open2(&d, sbuf, staged ? &all : NULL, &sb, rbuf,
                               staged ? (in_place ? &all : &part) : NULL,
                               wio_mpi_dev_out_flags(sbuf), &rb);
    if (rc)
        return rc;
    rc = reduce_scatter(e, g, sb, rb, rcount, rcounts, dtype, op);
    return wio_mpi_dev_close2(&d, rc);
}

int waitio_mpi_reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                              WAITIO_MPI_Datatype datatype, WAITIO_MPI_Op op, WAITIO_MPI_Comm comm)
{
    WIO_API_GUARD();
    wio_engine *e = wio_mpi_engine();
    if (!e)
        return WAITIO_ERR_STATE;
    if (!recvcounts)
        return wio_fail(WAITIO_ERR_ARG, "NULL receive counts");
    return reduce_scatter_dev(e, (wio_group *)comm, sendbuf, recvbuf, 0, recvcounts, datatype, op);
}

int waitio_mpi_reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                    WAITIO_MPI_Datatype datatype, WAITIO_MPI_Op op,
                                    WAITIO_MPI_Comm comm)
{
    WIO_API_GUARD();
    wio_engine *e = wio_mpi_engine();
    if (!e)
        return WAITIO_ERR_STATE;
    return reduce_scatter_dev(e, (wio_group *)comm, sendbuf, recvbuf, recvcount, NULL, datatype, op);
}

static int scan(WAITIO_MPI_Comm comm, const void *sbuf, void *rbuf, int count, int dtype, int op,
                int exclusive)
{
    wio_engine *e = wio_mpi_engine();
    if (!e)
        return WAITIO_ERR_STATE;
    wio_group *g = (wio_group *)comm;
    wio_mpi_reducer r;
    int rc;
    if ((rc = check_count(count)) || (rc = group_ok(g)) ||
        (rc = wio_mpi_reducer_init(&r, dtype, op, (size_t)count)))
        return rc;
    red_bufs b;
    if ((rc = red_open(&b, sbuf, rbuf, (size_t)count, dtype, 1)))
        return rc;
    vop c;
    int have = 0;
    if (!(rc = v_begin(&c, e, g)))
        rc = scan_core(&c, &r, red_src(&b), b.r.data, exclusive, &have);
    if (!have && b.has_r) { /* exscan's rank 0: its receive buffer stays as it was */
        wio_mpi_tbuf_close(&b.r, 0);
        b.has_r = 0;
    }
    return red_close(&b, rc);
}

/* scan and exscan with device buffers staged (devstage.h); exscan's rank 0 gets no result: its
 * receive buffer is not copied back (in place it is read), its host copy only scratch. */
static int scan_dev(WAITIO_MPI_Comm comm, const void *sbuf, void *rbuf, int count, int dtype, int op,
                    int exclusive)
{
    const wio_group *g = (const wio_group *)comm;
    int rflags = wio_mpi_dev_out_flags(sbuf);
    if (exclusive && g && g->my_rank == 0)
        rflags &= ~WIO_MPI_DEV_OUT;
    wio_mpi_layout l = {.n = 1, .count = count, .dtype = dtype};
    wio_mpi_dev2 d;
    void *sb, *rb;
    int rc = wio_mpi_dev_open2(&d, sbuf, &l, &sb, rbuf, &l, rflags, &rb);
    if (rc)
        return rc;
    rc = scan(comm, sb, rb, count, dtype, op, exclusive);
    return wio_mpi_dev_close2(&d, rc);
}

int waitio_mpi_scan(const void *sendbuf, void *recvbuf, int count, WAITIO_MPI_Datatype datatype,
                    WAITIO_MPI_Op op, WAITIO_MPI_Comm comm)
{
    WIO_API_GUARD();
    return scan_dev(comm, sendbuf, recvbuf, count, datatype, op, 0);
}

int waitio_mpi_exscan(const void *sendbuf, void *recvbuf, int count, WAITIO_MPI_Datatype datatype,
                      WAITIO_MPI_Op op, WAITIO_MPI_Comm comm)
{
    WIO_API_GUARD();
    return scan_dev(comm, sendbuf, recvbuf, count, datatype, op, 1);
}

/* ---- the new v-collectives' entry points ---- */

int waitio_mpi_allgatherv(const void *sendbuf, int sendcount, WAITIO_MPI_Datatype sendtype,
                          void *recvbuf, const int recvcounts[], const int displs[],
                          WAITIO_MPI_Datatype recvtype, WAITIO_MPI_Comm comm)
{
    WIO_API_GUARD();
    wio_engine *e = wio_mpi_engine();
    if (!e)
        return WAITIO_ERR_STATE;
    if (!recvcounts || !displs)
        return wio_fail(WAITIO_ERR_ARG, "NULL receive counts or displacements");
    wio_group *g = (wio_group *)comm;
    wio_mpi_layout sl = {.n = 1, .count = sendcount, .dtype = sendtype};
    wio_mpi_layout rl = {.n = g ? g->size : 0, .counts = recvcounts, .displs = displs, .dtype = recvtype};
    wio_mpi_dev2 d; /* device buffers: staged (devstage.h) */
    void *sb, *rb;
    int rc = wio_mpi_dev_open2(&d, sendbuf, &sl, &sb, recvbuf, &rl, wio_mpi_dev_out_flags(sendbuf), &rb);
    if (rc)
        return rc;
    rc = wio_mpi_v_allgatherv(e, g, sb, sendcount, sendtype, rb, 0, recvcounts, displs, recvtype);
    return wio_mpi_dev_close2(&d, rc);
}

int waitio_mpi_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                         WAITIO_MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                         const int rdispls[], WAITIO_MPI_Datatype recvtype, WAITIO_MPI_Comm comm)
{
    WIO_API_GUARD();
    wio_engine *e = wio_mpi_engine();
    if (!e)
        return WAITIO_ERR_STATE;
    if (!recvcounts || !rdispls || (sendbuf != WAITIO_MPI_IN_PLACE && (!sendcounts || !sdispls)))
        return wio_fail(WAITIO_ERR_ARG, "NULL counts or displacements");
    wio_group *g = (wio_group *)comm;
    int n = g ? g->size : 0;
    wio_mpi_layout sl = {.n = n, .counts = sendcounts, .displs = sdispls, .dtype = sendtype};
    wio_mpi_layout rl = {.n = n, .counts = recvcounts, .displs = rdispls, .dtype = recvtype};
    wio_mpi_dev2 d; /* device buffers: staged (devstage.h) */
    void *sb, *rb;
    int rc = wio_mpi_dev_open2(&d, sendbuf, &sl, &sb, recvbuf, &rl, wio_mpi_dev_out_flags(sendbuf), &rb);
    if (rc)
        return rc;
    rc = wio_mpi_v_alltoallv(e, g, sb, 0, sendcounts, sdispls, sendtype, rb, 0, recvcounts, rdispls,
                             recvtype);
    return wio_mpi_dev_close2(&d, rc);
}
