/*
 * comm_hier.c — the hierarchical path of collectives on the conversion layer's own communicators
 * (split, dup, create_group), the counterpart of hier.c's path on the universe: the members of
 * each PB (a "part") work through an MPI communicator of their own that the PB's adapter makes
 * (waitio_adapter_ops.sub_create, MPI_Comm_create_group on the PB's communicator), and only the
 * parts' heads (each part's first member) talk over WaitIO. hier.c decides per call between this
 * and the flat algorithms, with the same rules as on the universe (WAITIO_COLL_HIER,
 * waitio_coll_set_path, coll_tune.c's choice); this file runs the chosen path.
 *
 * The parts, the heads' group and the part's MPI communicator are made when the communicator is:
 * every member then says whether its part's communicator exists, and the path is open only if
 * all do (a flat allreduce on the new communicator), so that all members always choose alike.
 */
#define WIO_LOG_SUBSYS WIO_SUB_MPI /* this file logs as "mpi" (WAITIO_LOG=mpi=LEVEL) */
#include <stdlib.h>
#include <string.h>
#include "coll/coll.h"
#include "coll/datatype.h"
#include "mpi/comm.h"
#include "mpi/mpi_internal.h"

static int adapter_rc(int rc, const char *what)
{
    return rc ? wio_fail(WAITIO_ERR_SYS, "MPI adapter %s failed (MPI error %d)", what, rc) : 0;
}

/* Every member's PB runs an adapter that can make part communicators. */
static int parts_possible(const wio_engine *e, const wio_group *g)
{
    const waitio_adapter_ops *a = wio_adapter();
    if (!a || !a->sub_create || !a->sub_bcast || !a->sub_reduce || !a->sub_barrier)
        return 0;
    for (int i = 0; i < g->size; i++)
        if (!(e->table[g->members[i]].flags & WIO_PROC_ADAPTER))
            return 0;
    return 1;
}

/* part_of, sub_rank_of, the heads' process ids, and this process's part (PB-local ranks). */
static int make_parts(wio_engine *e, wio_mpi_comm *c, uint32_t *head_pids, int *nparts,
                      int *my_ranks, int *nmine)
{
    wio_group *g = c->g;
    int *part_pb = malloc(sizeof(int) * (size_t)(g->size ? g->size : 1));
    int *part_n = calloc((size_t)(g->size ? g->size : 1), sizeof(int));
    if (!part_pb || !part_n) {
        free(part_pb);
        free(part_n);
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    }
    int np = 0, mine = 0;
    for (int i = 0; i < g->size; i++) {
        int pb, local, p = 0;
        wio_engine_locate(e, g->members[i], &pb, &local);
        while (p < np && part_pb[p] != pb)
            p++;
        if (p == np) {
            part_pb[np] = pb;
            head_pids[np++] = g->members[i];
        }
        c->part_of[i] = p;
        c->sub_rank_of[i] = part_n[p]++;
        if (pb == e->cfg.pbid)
            my_ranks[mine++] = local;
    }
    free(part_pb);
    free(part_n);
    *nparts = np;
    *nmine = mine;
    return 0;
}

int wio_mpi_comm_hier_setup(wio_engine *e, wio_mpi_comm *c)
{
    wio_group *g = c->g;
    if (g->my_rank == WAITIO_UNDEFINED)
        return 0;
    int possible = parts_possible(e, g), ok = 0, all_ok = 0, rc = 0;
    if (possible) {
        size_t n = (size_t)(g->size ? g->size : 1);
        uint32_t *head_pids = malloc(sizeof *head_pids * n);
        int *my_ranks = malloc(sizeof(int) * n), np = 0, nmine = 0;
        c->part_of = malloc(sizeof(int) * n);
        c->sub_rank_of = malloc(sizeof(int) * n);
        rc = head_pids && my_ranks && c->part_of && c->sub_rank_of
                 ? make_parts(e, c, head_pids, &np, my_ranks, &nmine)
                 : wio_fail(WAITIO_ERR_NOMEM, "out of memory");
        if (!rc)
            rc = wio_group_create_members(e, c->heads_gid, head_pids, np, &c->heads);
        const waitio_adapter_ops *a = wio_adapter();
        /* the tag tells this creation from any other going on in the PB */
        if (!rc)
            ok = a->sub_create(a->ctx, my_ranks, nmine, (int)(c->heads_gid & 0xffffff), &c->sub) == 0;
        free(head_pids);
        free(my_ranks);
    }
    /* all members must choose alike: the path is open only if every part's communicator exists */
    if (!rc)
        rc = wio_coll_allreduce(e, g, &ok, &all_ok, 1, WIO_DT_INT, WIO_OP_MIN);
    c->hier = !rc && possible && all_ok;
    if (rc)
        wio_mpi_comm_hier_teardown(e, c);
    return rc;
}

void wio_mpi_comm_hier_teardown(wio_engine *e, wio_mpi_comm *c)
{
    const waitio_adapter_ops *a = wio_adapter();
    if (c->sub && a && a->sub_free)
        a->sub_free(a->ctx, c->sub);
    if (c->heads)
        wio_group_destroy(e, c->heads);
    free(c->part_of);
    free(c->sub_rank_of);
    c->sub = NULL;
    c->heads = NULL;
    c->part_of = c->sub_rank_of = NULL;
    c->hier = 0;
}

int wio_mpi_comm_hier_possible(wio_engine *e, wio_group *g)
{
    (void)e;
    const wio_mpi_comm *c = g ? wio_mpi_comm_of(g) : NULL;
    return c && c->hier && wio_adapter();
}

static int is_head(const wio_mpi_comm *c) { return c->sub_rank_of[c->g->my_rank] == 0; }

int wio_mpi_comm_hier_bcast(wio_engine *e, wio_group *g, void *buf, size_t count, int dtype,
                            int root)
{
    const waitio_adapter_ops *a = wio_adapter();
    wio_mpi_comm *c = wio_mpi_comm_of(g);
    size_t bytes = count * wio_dtype_size(dtype);
    if (!wio_dtype_size(dtype))
        return wio_fail(WAITIO_ERR_ARG, "unknown datatype %d", dtype);
    if (root < 0 || root >= g->size)
        return wio_fail(WAITIO_ERR_ARG, "root %d outside the communicator", root);
    int rpart = c->part_of[root], rsub = c->sub_rank_of[root], mine = c->part_of[g->my_rank] == rpart;
    int rc = 0;
    if (mine && rsub != 0) /* the root hands the data to its part's head (and the part) */
        rc = adapter_rc(a->sub_bcast(a->ctx, c->sub, buf, bytes, rsub), "bcast");
    if (!rc && is_head(c))
        rc = wio_coll_bcast(e, c->heads, buf, count, dtype, rpart);
    if (!rc && (!mine || rsub == 0))
        rc = adapter_rc(a->sub_bcast(a->ctx, c->sub, buf, bytes, 0), "bcast");
    return rc;
}

int wio_mpi_comm_hier_reduce(wio_engine *e, wio_group *g, const void *sbuf, void *rbuf,
                             size_t count, int dtype, int op, int root)
{
    const waitio_adapter_ops *a = wio_adapter();
    wio_mpi_comm *c = wio_mpi_comm_of(g);
    size_t bytes = count * wio_dtype_size(dtype);
    if (!wio_op_valid(op, dtype))
        return wio_fail(WAITIO_ERR_ARG, "operation %d is not defined on datatype %d", op, dtype);
    if (root < 0 || root >= g->size)
        return wio_fail(WAITIO_ERR_ARG, "root %d outside the communicator", root);
    int rpart = c->part_of[root], rsub = c->sub_rank_of[root];
    const void *src = sbuf == WIO_IN_PLACE ? rbuf : sbuf;
    uint8_t *part = malloc(bytes ? bytes : 1);
    if (!part)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    int rc = adapter_rc(a->sub_reduce(a->ctx, c->sub, src, part, count, dtype, op, 0), "reduce");
    if (!rc && is_head(c))
        rc = wio_coll_reduce(e, c->heads, WIO_IN_PLACE, part, count, dtype, op, rpart);
    if (!rc && c->part_of[g->my_rank] == rpart && rsub != 0) /* the head hands it to the root */
        rc = adapter_rc(a->sub_bcast(a->ctx, c->sub, part, bytes, 0), "bcast");
    if (!rc && g->my_rank == root && bytes)
        memcpy(rbuf, part, bytes);
    free(part);
    return rc;
}

int wio_mpi_comm_hier_allreduce(wio_engine *e, wio_group *g, const void *sbuf, void *rbuf,
                                size_t count, int dtype, int op)
{
    const waitio_adapter_ops *a = wio_adapter();
    wio_mpi_comm *c = wio_mpi_comm_of(g);
    size_t bytes = count * wio_dtype_size(dtype);
    if (!wio_op_valid(op, dtype))
        return wio_fail(WAITIO_ERR_ARG, "operation %d is not defined on datatype %d", op, dtype);
    const void *src = sbuf == WIO_IN_PLACE ? rbuf : sbuf;
    uint8_t *part = malloc(bytes ? bytes : 1);
    if (!part)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    int rc = adapter_rc(a->sub_reduce(a->ctx, c->sub, src, part, count, dtype, op, 0), "reduce");
    if (!rc && is_head(c))
        rc = wio_coll_allreduce(e, c->heads, WIO_IN_PLACE, part, count, dtype, op);
    if (!rc)
        rc = adapter_rc(a->sub_bcast(a->ctx, c->sub, part, bytes, 0), "bcast");
    if (!rc && bytes)
        memcpy(rbuf, part, bytes);
    free(part);
    return rc;
}

int wio_mpi_comm_hier_barrier(wio_engine *e, wio_group *g)
{
    const waitio_adapter_ops *a = wio_adapter();
    wio_mpi_comm *c = wio_mpi_comm_of(g);
    int rc = adapter_rc(a->sub_barrier(a->ctx, c->sub), "barrier");
    if (!rc && is_head(c))
        rc = wio_coll_barrier(e, c->heads);
    if (!rc)
        rc = adapter_rc(a->sub_barrier(a->ctx, c->sub), "barrier");
    return rc;
}
