/*
 * hier.c — hierarchical ("MP") collectives: on a group made of whole PBs in PB order (the
 * universe), with an MPI adapter registered, the work inside each PB goes through the PB's own
 * MPI and only the PB heads (or the same-rank processes of the PBs) talk over WaitIO. Seed 001
 * measured this 7-20x faster than collectives over sockets alone. Per call, this file works out
 * which paths are possible (flat, hierarchical, paired, segmented, pipelined: docs/mpi-layer.md,
 * "Collective paths"), takes a forced one or asks coll_tune.c to choose, and runs it; the flat
 * algorithms are src/coll's.
 */
#define WIO_LOG_SUBSYS WIO_SUB_MPI /* this file logs as "mpi" (WAITIO_LOG=mpi=LEVEL) */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "coll/coll.h"
#include "coll/datatype.h"
#include "mpi/coll_tune.h"
#include "mpi/mpi_internal.h"
#include "core/settings.h"
#include "core/trace.h"

static wio_group *heads;           /* PB heads, created on first hierarchical use */
static wio_engine *heads_engine;

#define GID_HIER_HEADS 0x7ffffff2

static int last_path; /* the path the collective being traced took (WIO_TR_PATH_*) */

_Static_assert(WAITIO_COLL_PATH_FLAT == WIO_COLL_PATH_FLAT_ && WAITIO_COLL_PATH_HIER == WIO_COLL_PATH_HIER_ &&
                   WAITIO_COLL_PATH_PAIRED == WIO_COLL_PATH_PAIRED_ &&
                   WAITIO_COLL_PATH_SEGMENTED == WIO_COLL_PATH_SEGMENTED_ &&
                   WAITIO_COLL_PATH_PIPELINE == WIO_COLL_PATH_PIPELINE_ && WIO_COLL_PATH_COUNT_ == 5,
               "waitio_mpi.h's WAITIO_COLL_PATH_* are coll_tune.h's enum wio_coll_path");

#define PATH_BIT(p) (1u << (p))

/* WAITIO_COLL_HIER: auto = chosen per call, 0 = flat, 1 = hierarchical, or a path by name; read
 * at the first collective, then only waitio_coll_set_path changes it. Not per call: a lookup
 * in the environment of an MPI job (about 90 variables) cost 0.2 µs of a 0.9 µs pipelined
 * 64-byte reduce of 2 PBs x 4 (eight lookups per call on 2 cores). */
static int path_setting = -2; /* -2: not read yet */

static int path_mode(void)
{
    static const char *const names[WIO_COLL_PATH_COUNT_] = {"0", "1", "paired", "segmented", "pipeline"};
    if (path_setting != -2)
        return path_setting;
    const char *v = wio_setting_str("WAITIO_COLL_HIER", NULL); /* bad: said, auto used */
    path_setting = WAITIO_COLL_PATH_AUTO;
    for (int p = 0; v && p < WIO_COLL_PATH_COUNT_; p++)
        if (!strcmp(v, names[p]))
            path_setting = p;
    return path_setting;
}

int waitio_coll_set_path(int path)
{
    if (path < WAITIO_COLL_PATH_AUTO || path > WAITIO_COLL_PATH_PIPELINE)
        return wio_fail(WAITIO_ERR_ARG, "collective path %d is not WAITIO_COLL_PATH_AUTO, _FLAT, _HIER, "
                        "_PAIRED, _SEGMENTED or _PIPELINE", path);
    path_setting = path;
    return 0;
}

/* The group is every process of every PB, PB by PB in PBID order, and every PB has an adapter:
 * the hierarchical path is possible (every process decides the same from the table). */
static int hier_possible(wio_engine *e, wio_group *g)
{
    if (!wio_adapter() || !g || g->my_rank == WAITIO_UNDEFINED)
        return 0;
    if (wio_mpi_comm_hier_possible(e, g)) /* a split/dup/create_group communicator (comm_hier.c) */
        return 1;
    return e->all_adapters && wio_group_is_universe(e, g);
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

/* Whether every process's adapter has reduce_scatter_block and allgather (the segmented
 * allreduce). Start-up publishes no flag for them, so the universe agrees once, by a flat
 * allreduce, at the first allreduce that could take the path: every process gets there at the
 * same call (the conditions before it are the same everywhere). A failed agreement closes the
 * path on this process; the job is broken then anyway. */
static wio_engine *segment_engine;
static int segment_everywhere;

static int segment_ops_everywhere(wio_engine *e, wio_group *g)
{
    if (segment_engine == e)
        return segment_everywhere;
    const waitio_adapter_ops *a = wio_adapter();
    int mine = a && a->reduce_scatter_block && a->allgather, all = 0;
    if (wio_coll_allreduce(e, g, &mine, &all, 1, WIO_DT_INT, WIO_OP_MIN) != 0) {
        wio_warn("the agreement on the segmented allreduce failed: not taking it");
        all = 0;
    }
    segment_engine = e;
    segment_everywhere = all;
    return all;
}

/* ---- the pipelined broadcast's shape (used by the choice and by the broadcast) ---- */

#define PIPE_MIN (32u << 10)      /* smaller messages: the segments' latencies outweigh overlap */
#define PIPE_SEG_MIN (8u << 10)   /* bytes per segment: at least, ... */
#define PIPE_SEG_MAX (256u << 10) /* ... at most, ... */
#define PIPE_NSEG 8               /* ... and about this many segments between those */
#define PIPE_MAX_PBS 4            /* the root's head sends every segment to each other head itself */

/* The segment size for a broadcast of `bytes`, the same on every process: about PIPE_NSEG
 * segments, so that a PB's broadcast of one overlaps the heads' transfer of the next at any
 * size — fixed 256 KiB segments left a 512 KiB message two, and nothing to overlap below it
 * (on one host, 2 PBs x 4 on 2 cores, they measured slower than one piece). */
static size_t pipe_seg(size_t bytes)
{
    size_t seg = (bytes / PIPE_NSEG + 4095) & ~(size_t)4095;
    return seg < PIPE_SEG_MIN ? PIPE_SEG_MIN : seg > PIPE_SEG_MAX ? PIPE_SEG_MAX : seg;
}

/* The paths op can take on `bytes` per process in g (PATH_BIT mask), the same on every process
 * (every input is agreed: the table's flags, the group, the call's arguments). */
static unsigned paths_possible(wio_engine *e, wio_group *g, enum wio_coll_op op, size_t bytes)
{
    unsigned mask = PATH_BIT(WIO_COLL_PATH_FLAT_);
    if (!hier_possible(e, g))
        return mask;
    mask |= PATH_BIT(WIO_COLL_PATH_HIER_);
    if (!wio_group_is_universe(e, g))
        return mask; /* comm_hier.c runs the head-based path only */
    if (op == WIO_COLL_OP_ALLREDUCE && pairable(e)) {
        mask |= PATH_BIT(WIO_COLL_PATH_PAIRED_);
        /* each piece within the adapter's limit (1 GiB); asked after the size so that all agree */
        if (bytes / (size_t)e->nprocs[0] < ((size_t)1 << 30) - 64 && segment_ops_everywhere(e, g))
            mask |= PATH_BIT(WIO_COLL_PATH_SEGMENTED_);
    }
    if (op == WIO_COLL_OP_BCAST && e->all_ibcast && e->npb <= PIPE_MAX_PBS && bytes >= PIPE_MIN)
        mask |= PATH_BIT(WIO_COLL_PATH_PIPELINE_);
    return mask;
}

/* WAITIO_COLL_PIPELINE (read per call, and only for broadcasts that could be pipelined): 0
 * keeps the choice off the pipeline, 1 puts the pipeline in place of the hierarchical broadcast
 * wherever it is possible (what the variable meant before the choice knew the pipeline),
 * auto/unset leaves it to the choice. */
static int pipeline_setting(void)
{
    const char *v = wio_setting_str("WAITIO_COLL_PIPELINE", NULL); /* bad: said, auto */
    return !v || !*v || !strcmp(v, "auto") ? -1 : strcmp(v, "0") != 0;
}

/* The path op takes on `bytes` per process in g: a forced one where possible (else HIER where
 * that is, else FLAT), otherwise coll_tune.c's choice among the possible ones. */
static int choose_path(wio_engine *e, wio_group *g, enum wio_coll_op op, size_t bytes)
{
    static const int trace_path[WIO_COLL_PATH_COUNT_] = {WIO_TR_PATH_FLAT, WIO_TR_PATH_HIER, WIO_TR_PATH_PAIRED,
                                                         WIO_TR_PATH_SEGMENTED, WIO_TR_PATH_PIPELINE};
    int mode = path_mode(), path = WIO_COLL_PATH_FLAT_, pipe = -1;
    unsigned mask = mode == WIO_COLL_PATH_FLAT_ ? PATH_BIT(WIO_COLL_PATH_FLAT_) : paths_possible(e, g, op, bytes);
    if (mask & PATH_BIT(WIO_COLL_PATH_PIPELINE_) && (pipe = pipeline_setting()) == 0 && mode == WAITIO_COLL_PATH_AUTO)
        mask &= ~PATH_BIT(WIO_COLL_PATH_PIPELINE_);
    if (mode != WAITIO_COLL_PATH_AUTO)
        path = mask & PATH_BIT(mode) ? mode : mask & PATH_BIT(WIO_COLL_PATH_HIER_) ? WIO_COLL_PATH_HIER_ : WIO_COLL_PATH_FLAT_;
    else if (mask != PATH_BIT(WIO_COLL_PATH_FLAT_))
        path = wio_coll_tune_choose(e, g, op, bytes, mask);
    if (path < 0 || path >= WIO_COLL_PATH_COUNT_ || !(mask & PATH_BIT(path)))
        path = WIO_COLL_PATH_FLAT_;
    if (path == WIO_COLL_PATH_HIER_ && pipe == 1)
        path = WIO_COLL_PATH_PIPELINE_;
    last_path = trace_path[path];
    /* tests/scripts/mpi_coll_paths.sh reads these lines to see each forced path taken */
    wio_debug("%s of %zu bytes: path %s (%s; possible 0x%x)", wio_coll_op_name(op), bytes,
              wio_coll_path_name(path), mode == WAITIO_COLL_PATH_AUTO ? "chosen" : "forced", mask);
    return path;
}

static int heads_group(wio_engine *e, wio_group **out)
{
    if (heads_engine != e) {
        heads = NULL;
        heads_engine = e;
    }
    if (!heads) {
        int rc = wio_group_create_heads(e, GID_HIER_HEADS, &heads);
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
static uint8_t pipe_filler[PIPE_SEG_MAX];

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
    size_t seg = pipe_seg(bytes);
    int nseg = (int)((bytes + seg - 1) / seg), rc = 0;
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
        size_t off = (size_t)k * seg, len = bytes - off < seg ? bytes - off : seg;
        rc = wio_engine_irecv(e, h, rpb, buf + off, len, tag, WIO_CTX_COLL, &wreq[k]);
    }
    int mpi_rc = 0;
    for (int k = 0; k < nseg && !mpi_rc && !w.failed; k++) {
        size_t off = (size_t)k * seg, len = bytes - off < seg ? bytes - off : seg;
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
    size_t seg = pipe_seg(bytes);
    int nseg = (int)((bytes + seg - 1) / seg), rc = 0, n = 0;
    wio_req_impl **wreq = NULL;
    if (e->cfg.local_rank == 0) {
        wreq = calloc((size_t)nseg * (size_t)h->size, sizeof *wreq);
        if (!wreq)
            return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
        for (int k = 0; k < nseg && !rc; k++)
            for (int j = 0; j < h->size && !rc; j++) {
                size_t off = (size_t)k * seg, len = bytes - off < seg ? bytes - off : seg;
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

static int hier_bcast(wio_engine *e, wio_group *g, void *buf, size_t count, int dtype, int root)
{
    const waitio_adapter_ops *adapter = wio_adapter();
    int path = choose_path(e, g, WIO_COLL_OP_BCAST, count * wio_dtype_size(dtype));
    if (path == WIO_COLL_PATH_FLAT_)
        return wio_coll_bcast(e, g, buf, count, dtype, root);
    if (!wio_group_is_universe(e, g))
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
    if (path == WIO_COLL_PATH_PIPELINE_) {
        /* every head takes the same tag from the heads' group; the others never use it */
        uint64_t tag = e->cfg.local_rank == 0 ? h->coll_seq++ : 0;
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
    if (choose_path(e, g, WIO_COLL_OP_REDUCE, count * wio_dtype_size(dtype)) == WIO_COLL_PATH_FLAT_)
        return wio_coll_reduce(e, g, sbuf, rbuf, count, dtype, op, root);
    if (!wio_group_is_universe(e, g))
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

/* Combines buf (count elements, this process's PB's part) with the parts of the processes of
 * the same PB-local rank in the other PBs, by recursive doubling over WaitIO: log2(NPB)
 * exchanges that all pairs make at once. Both sides put the lower PBs' part first, so every
 * process ends with the same bits. `other` holds count elements. */
static int combine_across_pbs(wio_engine *e, wio_group *g, void *buf, uint8_t *other, size_t count,
                              int dtype, int op)
{
    size_t bytes = count * wio_dtype_size(dtype);
    int me = e->cfg.pbid, local = e->cfg.local_rank;
    for (int mask = 1; mask < e->npb; mask <<= 1) {
        int pb = me ^ mask;
        int rc = wio_coll_exchange(e, g, (int)e->pb_offset[pb] + local, buf, other, bytes);
        if (rc)
            return rc;
        if (pb < me) { /* the lower PBs' part first */
            wio_op_apply(op, dtype, buf, other, count);
            memcpy(buf, other, bytes);
        } else {
            wio_op_apply(op, dtype, other, buf, count);
        }
    }
    return 0;
}

/* Allreduce without a head: the PB's MPI allreduce gives every process its PB's part, then each
 * process combines parts with its counterparts (same local rank) of the other PBs — no
 * broadcast at the end. */
static int allreduce_paired(wio_engine *e, wio_group *g, const void *src, void *rbuf, size_t count,
                            int dtype, int op)
{
    const waitio_adapter_ops *adapter = wio_adapter();
    size_t bytes = count * wio_dtype_size(dtype);
    uint8_t *other = malloc(bytes ? bytes : 1);
    if (!other)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    int rc = adapter_rc(adapter->allreduce(adapter->ctx, src, rbuf, count, dtype, op), "allreduce");
    if (!rc)
        rc = combine_across_pbs(e, g, rbuf, other, count, dtype, op);
    free(other);
    return rc;
}

/* Allreduce in pieces, for large messages: the PB's MPI reduce-scatter leaves each of the L
 * processes of a PB one piece (ceil(count / L) elements, the vector padded to L pieces) of its
 * PB's part; each process combines its piece with its counterparts' in the other PBs (as the
 * paired allreduce does with the whole vector: WaitIO then carries 1/L of it per process, all
 * pairs at once); the PB's MPI allgather puts the pieces together. Each piece is computed once
 * and copied, so every process holds the same bits. */
static int allreduce_segmented(wio_engine *e, wio_group *g, const void *src, void *rbuf, size_t count,
                               int dtype, int op)
{
    const waitio_adapter_ops *a = wio_adapter();
    if (!count)
        return 0; /* every process has count 0: nothing to move */
    size_t es = wio_dtype_size(dtype), l = (size_t)e->cfg.local_size;
    size_t blk = (count + l - 1) / l, pbytes = blk * es, bytes = count * es, padded = blk * l * es;
    uint8_t *piece = malloc(2 * pbytes), *full = padded != bytes ? malloc(padded) : NULL;
    if (!piece || (padded != bytes && !full)) {
        free(piece);
        free(full);
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    }
    if (full) { /* the padding is reduced too, and dropped: zeros, so that no op sees garbage */
        memcpy(full, src, bytes);
        memset(full + bytes, 0, padded - bytes);
    }
    int rc = adapter_rc(a->reduce_scatter_block(a->ctx, full ? full : src, piece, blk, dtype, op),
                        "reduce_scatter_block");
    if (!rc)
        rc = combine_across_pbs(e, g, piece, piece + pbytes, blk, dtype, op);
    if (!rc) /* rbuf may be src (in place): the reduce-scatter is over with it */
        rc = adapter_rc(a->allgather(a->ctx, piece, full ? full : rbuf, pbytes), "allgather");
    if (!rc && full)
        memcpy(rbuf, full, bytes);
    free(piece);
    free(full);
    return rc;
}

static int hier_allreduce(wio_engine *e, wio_group *g, const void *sbuf, void *rbuf, size_t count,
                           int dtype, int op)
{
    const waitio_adapter_ops *adapter = wio_adapter();
    size_t bytes = count * wio_dtype_size(dtype);
    int path = choose_path(e, g, WIO_COLL_OP_ALLREDUCE, bytes);
    if (path == WIO_COLL_PATH_FLAT_)
        return wio_coll_allreduce(e, g, sbuf, rbuf, count, dtype, op);
    if (!wio_group_is_universe(e, g))
        return wio_mpi_comm_hier_allreduce(e, g, sbuf, rbuf, count, dtype, op);
    if (!wio_op_valid(op, dtype))
        return wio_fail(WAITIO_ERR_ARG, "operation %d is not defined on datatype %d", op, dtype);
    int rc;
    const void *src = sbuf == WIO_IN_PLACE ? rbuf : sbuf;
    if (path == WIO_COLL_PATH_PAIRED_)
        return allreduce_paired(e, g, src, rbuf, count, dtype, op);
    if (path == WIO_COLL_PATH_SEGMENTED_)
        return allreduce_segmented(e, g, src, rbuf, count, dtype, op);
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
    if (choose_path(e, g, WIO_COLL_OP_BARRIER, 0) == WIO_COLL_PATH_FLAT_)
        return wio_coll_barrier(e, g);
    if (!wio_group_is_universe(e, g))
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
