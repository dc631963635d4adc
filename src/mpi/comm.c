/*
 * comm.c — the conversion layer's communicators beyond the universe: Comm_split, Comm_dup,
 * Comm_create_group, Comm_free, and the group objects Comm_create_group takes (Comm_group,
 * Group_incl, Group_free, Group_size, Group_rank).
 *
 * A communicator is a WaitIO group whose ranks follow MPI's rules (split: by key, then by rank
 * in the parent), so any group of processes of any PBs can be one. Its group id must be the
 * same in every member and new in each: ids come from GID_FIRST up, two per communicator (the
 * second for the hierarchical path's PB heads, comm_hier.c), numbered by a per-process counter
 * that stays above every id the process holds. A creation takes the maximum of its members'
 * counters in the collective it needs anyway (split's allgather, dup's allreduce, an allreduce
 * among create_group's members), and every process that took part moves its counter past it:
 * the new id is then above every id any member holds. Disjoint communicators of one split share
 * an id, which is safe: no process holds two of them, and their members never talk across.
 *
 * Comm_create_group is collective over the new members only, so its agreement runs on a
 * transient group of those members under the parent's id, with tags of a range of their own
 * (bit 62 set, the caller's tag above bit 24) that the parent's collectives, numbered from 0,
 * never reach.
 */
#define WIO_LOG_SUBSYS WIO_SUB_MPI /* this file logs as "mpi" (WAITIO_LOG=mpi=LEVEL) */
#include <stdlib.h>
#include <string.h>
#include "core/api_lock.h"
#include "coll/coll.h"
#include "coll/datatype.h"
#include "mpi/comm.h"
#include "mpi/mpi_internal.h"

#define GID_FIRST (WAITIO_GID_RESERVED + 0x10000) /* below: the PB groups */
#define GID_LAST 0x7ffeffff                          /* above: the library's fixed ids */
#define CREATE_GROUP_TAG_BASE (1ull << 62)

struct wio_mpi_group {
    int size, rank;          /* rank: this process's, or WAITIO_MPI_UNDEFINED */
    uint32_t pids[];         /* group rank -> process id */
};

static int next_cid;             /* communicator numbers from here are new in this process */
static wio_mpi_comm *comms;      /* the communicators made here and not freed */
static wio_engine *comms_engine; /* the engine they belong to */

/* After a finalize and a new init, nothing of the old engine is valid. */
static void forget_old_engine(wio_engine *e)
{
    if (comms_engine == e)
        return;
    while (comms) { /* their groups went with the old engine */
        wio_mpi_comm *c = comms;
        comms = c->next;
        free(c);
    }
    next_cid = 0;
    comms_engine = e;
}

wio_mpi_comm *wio_mpi_comm_of(const wio_group *g)
{
    for (wio_mpi_comm *c = comms; c && comms_engine == wio_engine_current; c = c->next)
        if (c->g == g)
            return c;
    return NULL;
}

static int member_check(wio_engine **e, WAITIO_MPI_Comm comm, WAITIO_MPI_Comm *newcomm)
{
    if (!newcomm)
        return wio_fail(WAITIO_ERR_ARG, "NULL new communicator pointer");
    *newcomm = WAITIO_MPI_COMM_NULL;
    if (!(*e = wio_mpi_engine()))
        return WAITIO_ERR_STATE;
    forget_old_engine(*e);
    wio_group *g = (wio_group *)comm;
    if (!g)
        return wio_fail(WAITIO_ERR_GROUP, "NULL communicator");
    if (g->my_rank == WAITIO_UNDEFINED)
        return wio_fail(WAITIO_ERR_NOT_MEMBER, "this process is not a member of communicator %u",
                        (unsigned)g->gid);
    return 0;
}

static int cid_gid(int cid, uint32_t *gid)
{
    if (cid < 0 || (uint64_t)GID_FIRST + 2 * (uint64_t)cid + 1 > GID_LAST)
        return wio_fail(WAITIO_ERR_GROUP, "out of communicator ids (%d made)", cid);
    *gid = GID_FIRST + 2 * (uint32_t)cid;
    return 0;
}

/* The communicator of processes pids[0..n) with the id of number cid: its group and record. */
static int comm_make(wio_engine *e, int cid, const uint32_t *pids, int n, WAITIO_MPI_Comm *newcomm)
{
    uint32_t gid = 0;
    int rc = cid_gid(cid, &gid);
    if (rc)
        return rc;
    wio_mpi_comm *c = calloc(1, sizeof *c);
    if (!c)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    if ((rc = wio_group_create_members(e, gid, pids, n, &c->g))) {
        free(c);
        return rc;
    }
    c->heads_gid = gid + 1;
    if ((rc = wio_mpi_comm_hier_setup(e, c))) {
        wio_group_destroy(e, c->g);
        free(c);
        return rc;
    }
    c->next = comms;
    comms = c;
    *newcomm = (WAITIO_MPI_Comm)c->g;
    return 0;
}

typedef struct split_entry {
    int color, key, rank;
} split_entry;

static int by_key_then_rank(const void *a, const void *b)
{
    const split_entry *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

int waitio_mpi_comm_split(WAITIO_MPI_Comm comm, int color, int key, WAITIO_MPI_Comm *newcomm)
{
    WIO_API_GUARD();
    wio_engine *e;
    int rc = member_check(&e, comm, newcomm);
    if (rc)
        return rc;
    if (color < 0 && color != WAITIO_MPI_UNDEFINED)
        return wio_fail(WAITIO_ERR_ARG, "color %d is negative (and not WAITIO_MPI_UNDEFINED)", color);
    wio_group *g = (wio_group *)comm;
    int n = g->size, mine[3] = {color, key, next_cid};
    int *all = malloc(sizeof(int) * 3 * (size_t)n);
    split_entry *sel = malloc(sizeof *sel * (size_t)n);
    uint32_t *pids = malloc(sizeof *pids * (size_t)n);
    rc = all && sel && pids ? 0 : wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    if (!rc)
        rc = wio_coll_allgather(e, g, mine, all, 3, WIO_DT_INT);
    int cid = 0, m = 0;
    for (int i = 0; !rc && i < n; i++) {
        cid = all[3 * i + 2] > cid ? all[3 * i + 2] : cid;
        if (color != WAITIO_MPI_UNDEFINED && all[3 * i] == color)
            sel[m++] = (split_entry){all[3 * i], all[3 * i + 1], i};
    }
    if (!rc) {
        next_cid = cid + 1; /* every member of the parent, whatever its color */
        qsort(sel, (size_t)m, sizeof *sel, by_key_then_rank);
        for (int i = 0; i < m; i++)
            pids[i] = g->members[sel[i].rank];
        if (color != WAITIO_MPI_UNDEFINED)
            rc = comm_make(e, cid, pids, m, newcomm);
    }
    free(all);
    free(sel);
    free(pids);
    return rc;
}

int waitio_mpi_comm_dup(WAITIO_MPI_Comm comm, WAITIO_MPI_Comm *newcomm)
{
    WIO_API_GUARD();
    wio_engine *e;
    int rc = member_check(&e, comm, newcomm);
    if (rc)
        return rc;
    wio_group *g = (wio_group *)comm;
    int cid = 0;
    if ((rc = wio_coll_allreduce(e, g, &next_cid, &cid, 1, WIO_DT_INT, WIO_OP_MAX)))
        return rc;
    next_cid = cid + 1;
    return comm_make(e, cid, g->members, g->size, newcomm);
}

int waitio_mpi_comm_create_group(WAITIO_MPI_Comm comm, WAITIO_MPI_Group group, int tag,
                                 WAITIO_MPI_Comm *newcomm)
{
    WIO_API_GUARD();
    wio_engine *e;
    int rc = member_check(&e, comm, newcomm);
    if (rc)
        return rc;
    if (!group)
        return wio_fail(WAITIO_ERR_ARG, "NULL group");
    if (tag < 0)
        return wio_fail(WAITIO_ERR_ARG, "tag %d is negative", tag);
    if (group->rank == WAITIO_MPI_UNDEFINED)
        return 0; /* not in the group: WAITIO_MPI_COMM_NULL, as MPI gives */
    wio_group *g = (wio_group *)comm;
    for (int i = 0; i < group->size; i++) {
        int found = 0;
        for (int j = 0; j < g->size && !found; j++)
            found = g->members[j] == group->pids[i];
        if (!found)
            return wio_fail(WAITIO_ERR_GROUP, "group rank %d is not in the communicator", i);
    }
    /* the agreement among the new members: a transient group, never registered */
    wio_group tmp = {.gid = g->gid, .size = group->size, .my_rank = group->rank,
                     .members = group->pids,
                     .coll_seq = CREATE_GROUP_TAG_BASE | ((uint64_t)(unsigned)tag << 24)};
    int cid = 0;
    if ((rc = wio_coll_allreduce(e, &tmp, &next_cid, &cid, 1, WIO_DT_INT, WIO_OP_MAX)))
        return rc;
    next_cid = cid + 1;
    return comm_make(e, cid, group->pids, group->size, newcomm);
}

int waitio_mpi_comm_free(WAITIO_MPI_Comm *comm)
{
    WIO_API_GUARD();
    if (!comm)
        return wio_fail(WAITIO_ERR_ARG, "NULL communicator pointer");
    wio_mpi_comm *c = wio_mpi_comm_of((wio_group *)*comm);
    if (!c)
        return wio_fail(WAITIO_ERR_ARG, "only communicators made by comm_split, comm_dup or "
                        "comm_create_group can be freed");
    int rc = waitio_group_free(*comm); /* refuses while requests on it are pending */
    if (rc)
        return rc;
    wio_mpi_comm_hier_teardown(wio_engine_current, c);
    for (wio_mpi_comm **p = &comms; *p; p = &(*p)->next)
        if (*p == c) {
            *p = c->next;
            break;
        }
    free(c);
    *comm = WAITIO_MPI_COMM_NULL;
    return 0;
}

/* ---- groups ---- */

static struct wio_mpi_group *group_new(int size)
{
    struct wio_mpi_group *grp = malloc(sizeof *grp + sizeof(uint32_t) * (size_t)size);
    if (!grp) {
        wio_fail(WAITIO_ERR_NOMEM, "out of memory");
        return NULL;
    }
    grp->size = size;
    grp->rank = WAITIO_MPI_UNDEFINED;
    return grp;
}

int waitio_mpi_comm_group(WAITIO_MPI_Comm comm, WAITIO_MPI_Group *group)
{
    wio_engine *e = wio_mpi_engine();
    wio_group *g = (wio_group *)comm;
    if (!e)
        return WAITIO_ERR_STATE;
    if (!g || !group)
        return wio_fail(WAITIO_ERR_ARG, "NULL communicator or group pointer");
    struct wio_mpi_group *grp = group_new(g->size);
    if (!grp)
        return WAITIO_ERR_NOMEM;
    if (g->size)
        memcpy(grp->pids, g->members, sizeof(uint32_t) * (size_t)g->size);
    grp->rank = g->my_rank;
    *group = grp;
    return 0;
}

int waitio_mpi_group_incl(WAITIO_MPI_Group group, int n, const int ranks[],
                          WAITIO_MPI_Group *newgroup)
{
    wio_engine *e = wio_mpi_engine();
    if (!e)
        return WAITIO_ERR_STATE;
    if (!group || !newgroup || n < 0 || n > group->size || (n > 0 && !ranks))
        return wio_fail(WAITIO_ERR_ARG, "bad group, count %d or ranks", n);
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= group->size)
            return wio_fail(WAITIO_ERR_ARG, "ranks[%d] = %d is outside the group of %d", i,
                            ranks[i], group->size);
        for (int j = 0; j < i; j++)
            if (ranks[j] == ranks[i])
                return wio_fail(WAITIO_ERR_ARG, "rank %d is listed twice", ranks[i]);
    }
    struct wio_mpi_group *grp = group_new(n);
    if (!grp)
        return WAITIO_ERR_NOMEM;
    for (int i = 0; i < n; i++) {
        grp->pids[i] = group->pids[ranks[i]];
        if (grp->pids[i] == e->my_id)
            grp->rank = i;
    }
    *newgroup = grp;
    return 0;
}

int waitio_mpi_group_free(WAITIO_MPI_Group *group)
{
    if (!group || !*group)
        return wio_fail(WAITIO_ERR_ARG, "NULL group");
    free(*group);
    *group = WAITIO_MPI_GROUP_NULL;
    return 0;
}

int waitio_mpi_group_size(WAITIO_MPI_Group group, int *size)
{
    if (!group || !size)
        return wio_fail(WAITIO_ERR_ARG, "NULL group or size pointer");
    *size = group->size;
    return 0;
}

int waitio_mpi_group_rank(WAITIO_MPI_Group group, int *rank)
{
    if (!group || !rank)
        return wio_fail(WAITIO_ERR_ARG, "NULL group or rank pointer");
    *rank = group->rank;
    return 0;
}
