/*
 * hier.c — hierarchical ("MP") collectives: on a group made of whole PBs in PB order (the
 * universe), with an MPI adapter registered, the work inside each PB goes through the PB's own
 * MPI and only the PB heads talk over WaitIO. Seed 001 measured this 7-20x faster than
 * collectives over sockets alone. Anything else falls back to the flat algorithms of src/coll.
 */
#define WIO_LOG_SUBSYS WIO_SUB_MPI /* this file logs as "mpi" (WAITIO_LOG=mpi=LEVEL) */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "coll/coll.h"
#include "coll/datatype.h"
#include "mpi/mpi_internal.h"
#include "core/settings.h"
#include "core/trace.h"

static wio_group *heads;           /* PB heads, created on first hierarchical use */
static wio_engine *heads_engine;

#define GID_HIER_HEADS 0x7ffffff2


static int rank_zero(int pb, int rank) { (void)pb; return rank == 0; }

/* The group is every process of every PB, PB by PB in PBID order. */
static int is_whole_instance(const wio_engine *e, const wio_group *g)
{
    if ((uint32_t)g->size != e->nprocs_total)
        return 0;
    for (int i = 0; i < g->size; i++)
        if (g->members[i] != (uint32_t)i)
            return 0;
    return 1;
}

static int last_path; /* the path the collective being traced took (WIO_TR_PATH_*) */

/* The collectives whose path (hierarchical or flat) is chosen per call. */
enum hier_op { HIER_BCAST, HIER_REDUCE, HIER_ALLREDUCE, HIER_BARRIER, HIER_NOPS };

/* Where the hierarchical path wins when every process of the group runs on one host (then the
 * flat algorithms also move everything through shared memory): message sizes [min, max).
 * Measured with bench/run-collectives.sh, 2 PBs x 4 Open MPI processes on 2 cores, medians of
 * 5 runs (docs/benchmarks.md, "Collectives"). Overridable with WAITIO_COLL_HIER_<OP>=MIN-MAX. */
static const struct hier_range {
    const char *env;
    size_t min, max;
    int set;                       /* moved by its variable */
} one_host[HIER_NOPS] = {
    [HIER_BCAST] = {"WAITIO_COLL_HIER_BCAST", 16u << 10, 512u << 10},
    [HIER_REDUCE] = {"WAITIO_COLL_HIER_REDUCE", 16u << 10, SIZE_MAX},
    [HIER_ALLREDUCE] = {"WAITIO_COLL_HIER_ALLREDUCE", 0, 1u << 10},
    [HIER_BARRIER] = {"WAITIO_COLL_HIER_BARRIER", 0, SIZE_MAX},
};

/* WAITIO_COLL_HIER: 1 = hierarchical whenever possible, 0 = flat, unset/auto = chosen; read
 * at the first collective, then only waitio_coll_set_path changes it. Not per call: a lookup
 * in the environment of an MPI job (about 90 variables) cost 0.2 µs of a 0.9 µs pipelined
 * 64-byte reduce of 2 PBs x 4 (eight lookups per call on 2 cores). */
static int hier_mode_setting = -2; /* -2: not read yet */

static int hier_mode(void)
{
    if (hier_mode_setting != -2)
        return hier_mode_setting;
    const char *v = wio_setting_str("WAITIO_COLL_HIER", NULL); /* bad: said, auto used */
    if (!v || !*v || !strcmp(v, "auto"))
        hier_mode_setting = WAITIO_COLL_PATH_AUTO;
    else
        hier_mode_setting = strcmp(v, "0") ? WAITIO_COLL_PATH_HIER : WAITIO_COLL_PATH_FLAT;
    return hier_mode_setting;
}

int waitio_coll_set_path(int path)
{
    if (path != WAITIO_COLL_PATH_AUTO && path != WAITIO_COLL_PATH_FLAT && path != WAITIO_COLL_PATH_HIER)
        return wio_fail(WAITIO_ERR_ARG, "collective path %d is not WAITIO_COLL_PATH_AUTO, _FLAT or _HIER", path);
    hier_mode_setting = path;
    return 0;
}

/* The one-host range of op, from its variable ("MIN-MAX", either side may be empty) or the
 * table, read and parsed once (not per call: the environment of an MPI job is long). A
 * malformed value is logged and ignored. */
static struct hier_range range_of(enum hier_op op)
{
    static struct hier_range cached[HIER_NOPS];
    static int loaded[HIER_NOPS];
    if (loaded[op])
        return cached[op];
    struct hier_range r = one_host[op];
    const char *v = wio_env(r.env);
    loaded[op] = 1;
    cached[op] = r;
    if (!v || !*v)
        return r;
    char lo[32] = "", hi[32] = "";
    const char *dash = strchr(v, '-');
    size_t a = 0, b = SIZE_MAX;
    if (dash && (size_t)(dash - v) < sizeof lo && strlen(dash + 1) < sizeof hi) {
        memcpy(lo, v, (size_t)(dash - v));
        strcpy(hi, dash + 1);
        if ((!*lo || wio_parse_size(lo, &a) == 0) && (!*hi || wio_parse_size(hi, &b) == 0)) {
            cached[op].min = a;
            cached[op].max = b;
            cached[op].set = 1;
            return cached[op];
        }
    }
    wio_warn("%s='%s' is not MIN-MAX (bytes, e.g. 16K-512K); using %zu-%zu", r.env, v, r.min, r.max);
    return r;
}

/* The group is every process of every PB, PB by PB in PBID order, and every PB has an adapter:
 * the hierarchical path is possible (every process decides the same from the table). */
static int hier_possible(wio_engine *e, wio_group *g)
{
    if (!wio_adapter() || !g || g->my_rank == WAITIO_UNDEFINED)
        return 0;
    if (wio_mpi_comm_hier_possible(e, g)) /* a split/dup/create_group communicator (comm_hier.c) */
        return 1;
    return e->all_adapters && is_whole_instance(e, g);
}

static int one_host_instance(const wio_engine *e) { return e->one_host; }

/* Hierarchical or flat, for op on `bytes` per process. Across hosts the hierarchical path keeps
 * all but the heads' traffic inside each PB's MPI, so it is taken whenever possible; on one host
 * the flat algorithms move data through shared memory too and win at some sizes (one_host). */
static int choose_hier(wio_engine *e, wio_group *g, enum hier_op op, size_t bytes)
{
    int mode = hier_mode();
    if (mode == WAITIO_COLL_PATH_FLAT || !hier_possible(e, g))
        return 0;
    if (mode == WAITIO_COLL_PATH_HIER || !one_host_instance(e))
        return 1;
    struct hier_range r = range_of(op);
    /* a small allreduce in one round over shared memory beats the PBs' MPI and the exchange
     * after it (three turns of the run queue when 2 x 4 processes share 2 cores) */
    if (op == HIER_ALLREDUCE && !r.set && wio_coll_allreduce_in_one_round(e, g, bytes))
        return 0;
    return bytes >= r.min && bytes < r.max;
}

static int use_hier(wio_engine *e, wio_group *g, enum hier_op op, size_t bytes)
{
    int hier = choose_hier(e, g, op, bytes);
    last_path = hier ? WIO_TR_PATH_HIER : WIO_TR_PATH_FLAT;
    return hier;
}

static int heads_group(wio_engine *e, wio_group **out)
{
    if (heads_engine != e) {
        heads = NULL;
        heads_engine = e;
    }
    if (!heads) {
        waitio_filter_func_t *f = malloc(sizeof *f * (size_t)e->npb);
        int *order = malloc(sizeof *order * (size_t)e->npb);
        int rc = f && order ? 0 : wio_fail(WAITIO_ERR_NOMEM, "out of memory");
        for (int p = 0; p < e->npb && !rc; p++) {
            f[p] = rank_zero;
            order[p] = p + 1;
        }
        if (!rc)
            rc = wio_group_create_func(e, GID_HIER_HEADS, f, order, &heads);
        free(f);
        free(order);
        if (rc)
            return rc;
    }
    *out = heads;
    return 0;
}

static int adapter_rc(int rc, const char *what)
{
    return rc ? wio_fail(WAITIO_ERR_SYS, "MPI adapter %s failed (MPI error %d)", what, rc) : 0;
}

/* ---- a broadcast in segments: WaitIO between the heads overlapping the PBs' own MPI ---- */

#define PIPE_SEG (256u << 10) /* bytes per segment */
#define PIPE_MAX_PBS 4       /* the root's head sends every segment to each other head itself */

typedef struct pipe_wait {
    const waitio_adapter_ops *a;
    void **mreq;             /* the MPI broadcasts started, NULL once finished */
    int started, finished, failed;
    wio_req_impl *r;         /* the WaitIO segment waited for */
} pipe_wait;

/* The ready test of the head's wait for a segment: it also gives MPI its progress (it moves
 * non-blocking collectives only inside MPI calls), so that the broadcast of the segments that
 * arrived runs while the next ones come. */
static int pipe_ready(void *arg)
{
    pipe_wait *w = arg;
    for (int i = w->finished; i < w->started && !w->failed; i++) {
        int done = 0;
        if (!w->mreq[i])
            continue;
        if (w->a->test(w->a->ctx, w->mreq[i], &done) != 0) {
            w->mreq[i] = NULL;
            w->failed = 1;
        } else if (done) {
            w->mreq[i] = NULL;
        }
    }
    while (w->finished < w->started && !w->mreq[w->finished])
        w->finished++;
    return w->failed || w->r->state == WIO_RS_DONE;
}

/* Finishes every MPI broadcast still running; returns the first error. */
static int pipe_finish(pipe_wait *w, int rc)
{
    for (int i = 0; i < w->started; i++)
        if (w->mreq[i]) {
            int rc2 = adapter_rc(w->a->wait(w->a->ctx, w->mreq[i]), "broadcast");
            w->mreq[i] = NULL;
            rc = rc ? rc : rc2;
        }
    return rc ? rc : w->failed ? wio_fail(WAITIO_ERR_SYS, "MPI adapter broadcast failed") : 0;
}

/* Sent in place of a segment the head could not receive: the PB's broadcasts must all be
 * posted or its other processes wait for them forever, and MPI must not read a buffer WaitIO
 * may still be writing. Only read. */
static uint8_t pipe_filler[PIPE_SEG];

/* The head waits for a segment's receive r and returns its outcome. */
static int pipe_wait_segment(wio_engine *e, pipe_wait *w, wio_req_impl *r)
{
    w->r = r;
    int rc = wio_engine_wait_until(e, pipe_ready, w, 0);
    if (!rc && w->failed)
        rc = wio_fail(WAITIO_ERR_SYS, "MPI adapter broadcast failed");
    if (!rc && (rc = r->status.error) != 0)
        wio_engine_explain(e, r);
    return rc;
}

/* A PB other than the root's: its head receives the segments from the root's head and starts
 * each one's MPI broadcast as soon as it is in; the other processes take part in those
 * broadcasts, segment by segment. A head whose receive fails still posts every broadcast (from
 * pipe_filler), then all agree on the head's outcome, so that no process hangs and none
 * returns success with data that never came. */
static int pipe_receive(wio_engine *e, wio_group *h, int rpb, uint8_t *buf, size_t bytes, uint64_t tag)
{
    const waitio_adapter_ops *a = wio_adapter();
    int nseg = (int)((bytes + PIPE_SEG - 1) / PIPE_SEG), rc = 0;
    void **mreq = calloc((size_t)nseg, sizeof *mreq);
    wio_req_impl **wreq = calloc((size_t)nseg, sizeof *wreq);
    pipe_wait w = {.a = a, .mreq = mreq};
    int head = e->cfg.local_rank == 0;
    if (!mreq || !wreq) {
        free(mreq);
        free(wreq);
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    }
    for (int k = 0; k < nseg && head && !rc; k++) {
        size_t off = (size_t)k * PIPE_SEG, len = bytes - off < PIPE_SEG ? bytes - off : PIPE_SEG;
        rc = wio_engine_irecv(e, h, rpb, buf + off, len, tag, WIO_CTX_COLL, &wreq[k]);
    }
    int mpi_rc = 0;
    for (int k = 0; k < nseg && !mpi_rc && !w.failed; k++) {
        size_t off = (size_t)k * PIPE_SEG, len = bytes - off < PIPE_SEG ? bytes - off : PIPE_SEG;
        if (head && !rc)
            rc = pipe_wait_segment(e, &w, wreq[k]);
        if (w.failed)
            break;
        mpi_rc = adapter_rc(a->ibcast(a->ctx, head && rc ? pipe_filler : buf + off, len, 0, &mreq[k]),
                            "ibcast");
        if (!mpi_rc)
            w.started = k + 1;
    }
    rc = rc ? rc : mpi_rc;
    rc = pipe_finish(&w, rc);
    for (int k = 0; k < nseg; k++)
        if (wreq[k]) {
            if (wreq[k]->state != WIO_RS_DONE)
                wio_engine_cancel(e, wreq[k]);
            wio_engine_wait_req(e, wreq[k], 0);
            if (wreq[k]->state == WIO_RS_DONE) /* else still queued: leave it to finalize */
                wio_req_release(e, wreq[k]);
        }
    free(mreq);
    free(wreq);
    if (w.failed || mpi_rc)
        return rc; /* MPI itself failed: an agreement through it would not help */
    int head_rc = rc;
    int rc2 = adapter_rc(a->bcast(a->ctx, &head_rc, sizeof head_rc, 0), "bcast");
    if (rc || rc2)
        return rc ? rc : rc2;
    return head_rc ? wio_fail(head_rc, "broadcast: the PB's head did not receive the data (%s)",
                              waitio_strerror(head_rc))
                   : 0;
}

/* The root's PB: its head sends every segment to every other head, then broadcasts in its PB
 * while those segments move. */
static int pipe_send(wio_engine *e, wio_group *h, uint8_t *buf, size_t bytes, uint64_t tag, int pb_bcast)
{
    const waitio_adapter_ops *a = wio_adapter();
    int nseg = (int)((bytes + PIPE_SEG - 1) / PIPE_SEG), rc = 0, n = 0;
    wio_req_impl **wreq = NULL;
    if (e->cfg.local_rank == 0) {
        wreq = calloc((size_t)nseg * (size_t)h->size, sizeof *wreq);
        if (!wreq)
            return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
        for (int k = 0; k < nseg && !rc; k++)
            for (int j = 0; j < h->size && !rc; j++) {
                size_t off = (size_t)k * PIPE_SEG, len = bytes - off < PIPE_SEG ? bytes - off : PIPE_SEG;
                if (j != h->my_rank)
                    rc = wio_engine_isend(e, h, j, buf + off, len, tag, WIO_CTX_COLL, &wreq[n++]);
            }
    }
    int rc2 = pb_bcast ? adapter_rc(a->bcast(a->ctx, buf, bytes, 0), "bcast") : 0;
    for (int i = 0; i < n; i++)
        if (wreq[i]) {
            int rc3 = wio_engine_wait_req(e, wreq[i], 0);
            if (!rc3 && (rc3 = wreq[i]->status.error) != 0)
                wio_engine_explain(e, wreq[i]);
            if (wreq[i]->state == WIO_RS_DONE)
                wio_req_release(e, wreq[i]);
            rc = rc ? rc : rc3;
        }
    free(wreq);
    return rc ? rc : rc2;
}

/* WAITIO_COLL_PIPELINE: 1 = large hierarchical broadcasts in segments, 0 = in one piece,
 * unset/auto = in segments when the PBs run on different hosts. On one host (2 PBs x 4 on 2
 * cores) the segments measured slower: 547 vs 313-456 us for 1 MiB, 181 vs 96 us for 256 KiB with
 * 64 KiB segments — the overlap needs cores to overlap on; across hosts the heads' network
 * transfer is what the PBs' broadcasts hide behind. */
static int pipeline_wanted(const wio_engine *e)
{
    const char *v = wio_setting_str("WAITIO_COLL_PIPELINE", NULL); /* bad: said, auto */
    if (v && *v && strcmp(v, "auto"))
        return strcmp(v, "0") != 0;
    return !one_host_instance(e);
}

static int hier_bcast(wio_engine *e, wio_group *g, void *buf, size_t count, int dtype, int root)
{
    const waitio_adapter_ops *adapter = wio_adapter();
    if (!use_hier(e, g, HIER_BCAST, count * wio_dtype_size(dtype)))
        return wio_coll_bcast(e, g, buf, count, dtype, root);
    if (!is_whole_instance(e, g))
        return wio_mpi_comm_hier_bcast(e, g, buf, count, dtype, root);
    size_t bytes = count * wio_dtype_size(dtype);
    if (!wio_dtype_size(dtype))
        return wio_fail(WAITIO_ERR_ARG, "unknown datatype %d", dtype);
    if (root < 0 || root >= g->size)
        return wio_fail(WAITIO_ERR_ARG, "root %d outside the group", root);
    int rpb, rlocal, rc;
    wio_engine_locate(e, (uint32_t)root, &rpb, &rlocal); /* universe rank = process id */
    int mine = e->cfg.pbid == rpb;
    if (mine && rlocal != 0 &&
        (rc = adapter_rc(adapter->bcast(adapter->ctx, buf, bytes, rlocal), "bcast")))
        return rc;
    wio_group *h;
    if ((rc = heads_group(e, &h)))
        return rc;
    if (bytes >= 2 * PIPE_SEG && e->npb <= PIPE_MAX_PBS && e->all_ibcast && pipeline_wanted(e)) {
        /* every head takes the same tag from the heads' group; the others never use it */
        uint64_t tag = e->cfg.local_rank == 0 ? h->coll_seq++ : 0;
        last_path = WIO_TR_PATH_PIPELINE;
        return mine ? pipe_send(e, h, buf, bytes, tag, rlocal == 0)
                    : pipe_receive(e, h, rpb, buf, bytes, tag);
    }
    if (e->cfg.local_rank == 0 && (rc = wio_coll_bcast(e, h, buf, count, dtype, rpb)))
        return rc;
    if (!mine || rlocal == 0)
        rc = adapter_rc(adapter->bcast(adapter->ctx, buf, bytes, 0), "bcast");
    return rc;
}

static int hier_reduce(wio_engine *e, wio_group *g, const void *sbuf, void *rbuf, size_t count,
                        int dtype, int op, int root)
{
    const waitio_adapter_ops *adapter = wio_adapter();
    if (!use_hier(e, g, HIER_REDUCE, count * wio_dtype_size(dtype)))
        return wio_coll_reduce(e, g, sbuf, rbuf, count, dtype, op, root);
    if (!is_whole_instance(e, g))
        return wio_mpi_comm_hier_reduce(e, g, sbuf, rbuf, count, dtype, op, root);
    size_t es = wio_dtype_size(dtype), bytes = count * es;
    if (!wio_op_valid(op, dtype))
        return wio_fail(WAITIO_ERR_ARG, "operation %d is not defined on datatype %d", op, dtype);
    if (root < 0 || root >= g->size)
        return wio_fail(WAITIO_ERR_ARG, "root %d outside the group", root);
    int rpb, rlocal, rc;
    wio_engine_locate(e, (uint32_t)root, &rpb, &rlocal); /* universe rank = process id */
    const void *src = sbuf == WIO_IN_PLACE ? rbuf : sbuf;
    /* a root that is its PB's head folds straight into its receive buffer (not in place: the
     * PB's reduce reads src while it writes there) */
    int into_rbuf = g->my_rank == root && rlocal == 0 && sbuf != WIO_IN_PLACE && bytes;
    uint8_t *part = into_rbuf ? rbuf : malloc(bytes ? bytes : 1);
    if (!part)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    rc = adapter_rc(adapter->reduce(adapter->ctx, src, part, count, dtype, op, 0), "reduce");
    wio_group *h;
    if (!rc && e->cfg.local_rank == 0 && !(rc = heads_group(e, &h)))
        rc = wio_coll_reduce(e, h, WIO_IN_PLACE, part, count, dtype, op, rpb);
    if (!rc && e->cfg.pbid == rpb && rlocal != 0) /* the head hands the result to the root */
        rc = adapter_rc(adapter->bcast(adapter->ctx, part, bytes, 0), "bcast");
    if (!into_rbuf) {
        if (!rc && g->my_rank == root && bytes)
            memcpy(rbuf, part, bytes);
        free(part);
    }
    return rc;
}

/* Every PB has the same number of processes and there is a power of two of PBs: each process
 * can pair with the process of the same PB-local rank in another PB. */
static int pairable(const wio_engine *e)
{
    if (!e->all_allreduce || (e->npb & (e->npb - 1)))
        return 0;
    for (int p = 1; p < e->npb; p++)
        if (e->nprocs[p] != e->nprocs[0])
            return 0;
    return 1;
}

/* Allreduce without a head: the PB's MPI allreduce gives every process its PB's part, then each
 * process combines parts with its counterparts (same local rank) of the other PBs by recursive
 * doubling over WaitIO — log2(NPB) exchanges that all pairs make at once, and no broadcast at
 * the end. Every process combines the two halves in PB order, so all hold the same bits. */
static int allreduce_paired(wio_engine *e, wio_group *g, const void *src, void *rbuf, size_t count,
                            int dtype, int op)
{
    const waitio_adapter_ops *adapter = wio_adapter();
    size_t bytes = count * wio_dtype_size(dtype);
    uint8_t *other = malloc(bytes ? bytes : 1);
    if (!other)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    int rc = adapter_rc(adapter->allreduce(adapter->ctx, src, rbuf, count, dtype, op), "allreduce");
    int me = e->cfg.pbid, local = e->cfg.local_rank;
    for (int mask = 1; !rc && mask < e->npb; mask <<= 1) {
        int pb = me ^ mask;
        rc = wio_coll_exchange(e, g, (int)e->pb_offset[pb] + local, rbuf, other, bytes);
        if (rc)
            break;
        if (pb < me) { /* the lower PBs' part first */
            wio_op_apply(op, dtype, rbuf, other, count);
            memcpy(rbuf, other, bytes);
        } else {
            wio_op_apply(op, dtype, other, rbuf, count);
        }
    }
    free(other);
    return rc;
}

static int hier_allreduce(wio_engine *e, wio_group *g, const void *sbuf, void *rbuf, size_t count,
                           int dtype, int op)
{
    const waitio_adapter_ops *adapter = wio_adapter();
    size_t bytes = count * wio_dtype_size(dtype);
    if (!use_hier(e, g, HIER_ALLREDUCE, bytes))
        return wio_coll_allreduce(e, g, sbuf, rbuf, count, dtype, op);
    if (!is_whole_instance(e, g))
        return wio_mpi_comm_hier_allreduce(e, g, sbuf, rbuf, count, dtype, op);
    if (!wio_op_valid(op, dtype))
        return wio_fail(WAITIO_ERR_ARG, "operation %d is not defined on datatype %d", op, dtype);
    int rc;
    const void *src = sbuf == WIO_IN_PLACE ? rbuf : sbuf;
    if (pairable(e)) {
        last_path = WIO_TR_PATH_PAIRED;
        return allreduce_paired(e, g, src, rbuf, count, dtype, op);
    }
    uint8_t *part = malloc(bytes ? bytes : 1);
    if (!part)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    rc = adapter_rc(adapter->reduce(adapter->ctx, src, part, count, dtype, op, 0), "reduce");
    wio_group *h;
    if (!rc && e->cfg.local_rank == 0 && !(rc = heads_group(e, &h)))
        rc = wio_coll_allreduce(e, h, WIO_IN_PLACE, part, count, dtype, op);
    if (!rc)
        rc = adapter_rc(adapter->bcast(adapter->ctx, part, bytes, 0), "bcast");
    if (!rc && bytes)
        memcpy(rbuf, part, bytes);
    free(part);
    return rc;
}

static int hier_barrier(wio_engine *e, wio_group *g)
{
    const waitio_adapter_ops *adapter = wio_adapter();
    if (!use_hier(e, g, HIER_BARRIER, 0))
        return wio_coll_barrier(e, g);
    if (!is_whole_instance(e, g))
        return wio_mpi_comm_hier_barrier(e, g);
    int rc = adapter_rc(adapter->barrier(adapter->ctx), "barrier");
    wio_group *h;
    if (!rc && e->cfg.local_rank == 0 && !(rc = heads_group(e, &h)))
        rc = wio_coll_barrier(e, h);
    if (!rc)
        rc = adapter_rc(adapter->barrier(adapter->ctx), "barrier");
    return rc;
}

/* ---- the entry points, traced (WAITIO_TRACE: the collective as one slice, with its path) ---- */

static void coll_begin(const wio_group *g, int op, size_t bytes)
{
    last_path = WIO_TR_PATH_FLAT;
    WIO_TRACE(WIO_TR_COLL_BEGIN, 0, WIO_TR_ANY, g ? g->gid : 0, (uint64_t)op, bytes, 0, 0, 0);
}

static int coll_end(const wio_group *g, int op, int rc)
{
    WIO_TRACE(WIO_TR_COLL_END, 0, WIO_TR_ANY, g ? g->gid : 0, (uint64_t)op, 0, 0, (uint32_t)last_path, rc);
    return rc;
}

int wio_mpi_hier_bcast(wio_engine *e, wio_group *g, void *buf, size_t count, int dtype, int root)
{
    coll_begin(g, WIO_TR_OP_BCAST, count * wio_dtype_size(dtype));
    return coll_end(g, WIO_TR_OP_BCAST, hier_bcast(e, g, buf, count, dtype, root));
}

int wio_mpi_hier_reduce(wio_engine *e, wio_group *g, const void *sbuf, void *rbuf, size_t count,
                        int dtype, int op, int root)
{
    coll_begin(g, WIO_TR_OP_REDUCE, count * wio_dtype_size(dtype));
    return coll_end(g, WIO_TR_OP_REDUCE, hier_reduce(e, g, sbuf, rbuf, count, dtype, op, root));
}

int wio_mpi_hier_allreduce(wio_engine *e, wio_group *g, const void *sbuf, void *rbuf, size_t count,
                           int dtype, int op)
{
    coll_begin(g, WIO_TR_OP_ALLREDUCE, count * wio_dtype_size(dtype));
    return coll_end(g, WIO_TR_OP_ALLREDUCE, hier_allreduce(e, g, sbuf, rbuf, count, dtype, op));
}

int wio_mpi_hier_barrier(wio_engine *e, wio_group *g)
{
    coll_begin(g, WIO_TR_OP_BARRIER, 0);
    return coll_end(g, WIO_TR_OP_BARRIER, hier_barrier(e, g));
}
