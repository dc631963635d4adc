/*
 * group.c — groups: ordered subsets of the instance's processes, computed locally with no
 * communication. Ranks number members PB by PB in the group's PB order, then by PB-local rank.
 */
#include <stdlib.h>
#include <string.h>
#include "core/engine.h"

wio_group *wio_group_find(wio_engine *e, uint32_t gid)
{
    wio_list *pos, *tmp;
    WIO_LIST_FOREACH_SAFE(pos, tmp, &e->groups) {
        wio_group *g = WIO_CONTAINER_OF(pos, wio_group, link);
        if (g->gid == gid)
            return g;
    }
    return NULL;
}

void wio_groups_free(wio_engine *e)
{
    while (!wio_list_empty(&e->groups)) {
        wio_group *g = WIO_CONTAINER_OF(e->groups.next, wio_group, link);
        wio_list_remove(&g->link);
        free(g->members);
        free(g);
    }
}

/* PB ids sorted by their position in order[]; returns how many PBs take part. */
static int pbs_in_order(const wio_engine *e, const int order[], int *out)
{
    int n = 0;
    for (int pos = 1; pos <= e->npb; pos++)
        for (int p = 0; p < e->npb; p++)
            if (order[p] == pos)
                out[n++] = p;
    return n;
}

static int validate_order(const wio_engine *e, const int order[])
{
    if (!order)
        return wio_fail(WAITIO_ERR_ARG, "order[] is NULL");
    for (int p = 0; p < e->npb; p++) {
        if (order[p] < 0 || order[p] > e->npb)
            return wio_fail(WAITIO_ERR_ARG, "order[%d]=%d is outside 0..%d", p, order[p], e->npb);
        for (int q = 0; q < p; q++)
            if (order[p] && order[p] == order[q])
                return wio_fail(WAITIO_ERR_ARG, "order[%d] and order[%d] are both %d", q, p, order[p]);
    }
    return 0;
}


static int collect(wio_engine *e, uint32_t gid, const int order[], const void *rules,
                   int (*select)(wio_engine *, const void *, int, uint32_t *, int *),
                   wio_group **out)
{
    int rc = validate_order(e, order);
    if (rc)
        return rc;
    if (gid & WIO_CTX_COLL)
        return wio_fail(WAITIO_ERR_ARG, "group id %d is negative", (int)gid);
    if (wio_group_find(e, gid))
        return wio_fail(WAITIO_ERR_GROUP, "group id %u is already in use here", (unsigned)gid);
    int *pbs = malloc(sizeof(int) * (size_t)e->npb);
    uint32_t *members = malloc(sizeof(uint32_t) * (e->nprocs_total ? e->nprocs_total : 1));
    wio_group *g = calloc(1, sizeof *g);
    if (!pbs || !members || !g) {
        free(pbs);
        free(members);
        free(g);
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory creating group %u", (unsigned)gid);
    }
    int n = 0;
    int npbs = pbs_in_order(e, order, pbs);
    for (int i = 0; i < npbs && rc == 0; i++)
        rc = select(e, rules, pbs[i], members, &n);
    free(pbs);
    if (rc) {
        free(members);
        free(g);
        return rc;
    }
    g->gid = gid;
    g->size = n;
    g->members = members;
    g->my_rank = WAITIO_UNDEFINED;
    for (int i = 0; i < n; i++)
        if (members[i] == e->my_id)
            g->my_rank = i;
    wio_list_insert_tail(&e->groups, &g->link);
    *out = g;
    return 0;
}

static int select_by_func(wio_engine *e, const void *rules, int pb, uint32_t *members, int *n)
{
    waitio_filter_func_t const *func = rules;
    if (!func[pb])
        return 0;
    for (int r = 0; r < e->nprocs[pb]; r++)
        if (func[pb](pb, r))
            members[(*n)++] = e->pb_offset[pb] + (uint32_t)r;
    return 0;
}

static int select_by_list(wio_engine *e, const void *rules, int pb, uint32_t *members, int *n)
{
    int *const *lists = rules;
    const int *list = lists[pb];
    if (!list)
        return 0;
    int first = *n;
    for (int i = 0; list[i] != WAITIO_RANKS_END; i++) {
        if (i >= e->nprocs[pb])
            return wio_fail(WAITIO_ERR_ARG, "rankap[%d] has more than %d entries: missing "
                            "WAITIO_RANKS_END (-1) terminator?", pb, e->nprocs[pb]);
        int r = list[i];
        if (r < 0 || r >= e->nprocs[pb])
            return wio_fail(WAITIO_ERR_ARG, "rankap[%d][%d]=%d but PB %d has %d processes", pb, i,
                            r, pb, e->nprocs[pb]);
        for (int j = first; j < *n; j++)
            if (members[j] == e->pb_offset[pb] + (uint32_t)r)
                return wio_fail(WAITIO_ERR_ARG, "rankap[%d] lists rank %d twice", pb, r);
        members[(*n)++] = e->pb_offset[pb] + (uint32_t)r;
    }
    /* rank lists may be in any order; group ranks follow PB-local rank order */
    for (int i = first + 1; i < *n; i++)
        for (int j = i; j > first && members[j - 1] > members[j]; j--) {
            uint32_t t = members[j];
            members[j] = members[j - 1];
            members[j - 1] = t;
        }
    return 0;
}

int wio_group_create_func(wio_engine *e, int gid, waitio_filter_func_t func[], const int order[],
                          wio_group **out)
{
    if (!func)
        return wio_fail(WAITIO_ERR_ARG, "func[] is NULL");
    return collect(e, (uint32_t)gid, order, func, select_by_func, out);
}

int wio_group_create_list(wio_engine *e, int gid, int *rankap[], const int order[], wio_group **out)
{
    if (!rankap)
        return wio_fail(WAITIO_ERR_ARG, "rankap[] is NULL");
    return collect(e, (uint32_t)gid, order, rankap, select_by_list, out);
}

int wio_group_create_members(wio_engine *e, uint32_t gid, const uint32_t *members, int n,
                             wio_group **out)
{
    if (gid & WIO_CTX_COLL)
        return wio_fail(WAITIO_ERR_ARG, "group id %d is negative", (int)gid);
    if (wio_group_find(e, gid))
        return wio_fail(WAITIO_ERR_GROUP, "group id %u is already in use here", (unsigned)gid);
    if (n < 0 || (uint32_t)n > e->nprocs_total)
        return wio_fail(WAITIO_ERR_ARG, "%d members but the instance has %u processes", n,
                        (unsigned)e->nprocs_total);
    for (int i = 0; i < n; i++)
        if (members[i] >= e->nprocs_total)
            return wio_fail(WAITIO_ERR_ARG, "member %d: no process %u", i, (unsigned)members[i]);
    wio_group *g = calloc(1, sizeof *g);
    uint32_t *m = malloc(sizeof *m * (size_t)(n ? n : 1));
    if (!g || !m) {
        free(g);
        free(m);
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory creating group %u", (unsigned)gid);
    }
    if (n)
        memcpy(m, members, sizeof *m * (size_t)n);
    g->gid = gid;
    g->size = n;
    g->members = m;
    g->my_rank = WAITIO_UNDEFINED;
    for (int i = 0; i < n; i++)
        if (m[i] == e->my_id)
            g->my_rank = i;
    wio_list_insert_tail(&e->groups, &g->link);
    *out = g;
    return 0;
}

int wio_group_create_heads(wio_engine *e, uint32_t gid, wio_group **out)
{
    uint32_t *heads = malloc(sizeof *heads * (size_t)e->npb);
    if (!heads)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory creating group %u", (unsigned)gid);
    for (int p = 0; p < e->npb; p++)
        heads[p] = e->pb_offset[p];
    int rc = wio_group_create_members(e, gid, heads, e->npb, out);
    free(heads);
    return rc;
}

int wio_group_is_universe(const wio_engine *e, const wio_group *g)
{
    if ((uint32_t)g->size != e->nprocs_total)
        return 0;
    for (int i = 0; i < g->size; i++)
        if (g->members[i] != (uint32_t)i)
            return 0;
    return 1;
}

void wio_group_destroy(wio_engine *e, wio_group *g)
{
    (void)e;
    wio_list_remove(&g->link);
    free(g->members);
    free(g);
}
