/*
 * team.c — OpenSHMEM teams (1.5 section 9.4): SHMEM_TEAM_WORLD, SHMEM_TEAM_SHARED (the PEs whose
 * heap parts are mapped here: one host's), strided and 2-D splits, PE translation, configuration
 * and destruction; and the teams behind the deprecated active-set collectives. Every team has a
 * WaitIO group, on which coll.c runs its collectives.
 *
 * Group ids. Every member must create a team's group with the same id, and no process may hold
 * two groups with one id (their messages would mix). The layer uses the ids WIO_SHMEM_GID_BASE ..
 * WAITIO_GID_RESERVED - 1 (applications must leave them alone): SHMEM_TEAM_SHARED has
 * WIO_SHMEM_GID_BASE (the shared teams of two hosts have no member in common); every other group
 * has WIO_SHMEM_GID_BASE + 1 + n, n taken from a per-process counter that stays above every id
 * the process holds. A split takes the maximum of its parent's counters (one allreduce on the
 * parent's group) and every parent member moves its counter past the ids it hands out, so the
 * new id is above every id any member holds. An active set agrees the same way, by messages to
 * its first PE on the world group (tags of WIO_TAG_ACTIVE_SET), once: its team is then cached.
 */
#include <limits.h>
#include <stdlib.h>
#include "shmem/shmem_internal.h"

#define WIO_SHMEM_GID_BASE 0x7f000000
#define GID_SHARED WIO_SHMEM_GID_BASE
#define GID_FIRST (WIO_SHMEM_GID_BASE + 1)
#define GID_COUNT (WAITIO_GID_RESERVED - GID_FIRST)
/* 0x5 in the top bits, then logPE_stride (10 bits), PE_start and PE_size (25 bits each) */
#define WIO_TAG_ACTIVE_SET (0x5ULL << 60)
#define AS_LIMIT (1 << 25)

static int next_gid;                           /* ids from GID_FIRST + next_gid are new here */
static int npb, *pb_first;                     /* world PE of each PB's first process; [npb]: npes */
static struct waitio_shmem_team *split_teams;  /* created by splits, not destroyed yet */
static struct waitio_shmem_team *active_sets;  /* cached active-set teams */

static int world_pe(const struct waitio_shmem_team *t, int pe) { return t->pes ? t->pes[pe] : pe; }

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The group rank of every team PE when the team's world PEs are not increasing. */
static void set_permutation(struct waitio_shmem_team *t, const int *sorted)
{
    int increasing = 1;
    for (int i = 1; i < t->size && increasing; i++)
        increasing = world_pe(t, i) > world_pe(t, i - 1);
    if (increasing)
        return;
    t->grank = malloc(sizeof *t->grank * (size_t)t->size);
    t->tpe = malloc(sizeof *t->tpe * (size_t)t->size);
    if (!t->grank || !t->tpe)
        wio_shmem_fatal("teams: out of memory");
    for (int i = 0; i < t->size; i++) {
        int w = world_pe(t, i);
        const int *at = bsearch(&w, sorted, (size_t)t->size, sizeof *sorted, cmp_int);
        t->grank[i] = (int)(at - sorted);
        t->tpe[t->grank[i]] = i;
    }
}

/* Creates t's WaitIO group (no communication): its members PB by PB, by PB-local rank, so group
 * ranks follow world PEs. */
static void team_group(struct waitio_shmem_team *t, int gid, const char *what)
{
    int n = t->size;
    int *sorted = malloc(sizeof *sorted * (size_t)n), *lists = malloc(sizeof *lists * (size_t)(n + npb));
    int **rankap = calloc((size_t)npb, sizeof *rankap), *order = calloc((size_t)npb, sizeof *order);
    if (!sorted || !lists || !rankap || !order)
        wio_shmem_fatal("%s: out of memory", what);
    for (int i = 0; i < n; i++)
        sorted[i] = world_pe(t, i);
    qsort(sorted, (size_t)n, sizeof *sorted, cmp_int);
    int pos = 0, k = 0, place = 0;
    for (int p = 0; p < npb; p++) {
        int first = pos;
        while (k < n && sorted[k] < pb_first[p + 1])
            lists[pos++] = sorted[k++] - pb_first[p];
        if (pos == first)
            continue;
        lists[pos++] = WAITIO_RANKS_END;
        rankap[p] = lists + first;
        order[p] = ++place;
    }
    t->grp = waitio_create_group_wranks(gid, rankap, order);
    if (!t->grp)
        wio_shmem_fatal("%s: creating the team's WaitIO group %#x: %s", what, (unsigned)gid, waitio_error_message());
    set_permutation(t, sorted);
    int grank = -1;
    wio_shmem_check(waitio_group_rank(t->grp, &grank), what);
    if (grank != (t->grank ? t->grank[t->my_pe] : t->my_pe))
        wio_shmem_fatal("%s: group rank %d for team PE %d", what, grank, t->my_pe);
    free(sorted);
    free(lists);
    free(rankap);
    free(order);
}

static void team_free(struct waitio_shmem_team *t)
{
    if (t->grp && t->grp != S.world)
        wio_shmem_check(waitio_group_free(t->grp), "teams: freeing a team's group");
    free(t->pes);
    free(t->grank);
    free(t->tpe);
    memset(t, 0, sizeof *t);
}

/* The config fields that mask selects, else the defaults. */
static shmem_team_config_t config_of(const shmem_team_config_t *config, long mask)
{
    shmem_team_config_t c = {.num_contexts = 0};
    if (config && (mask & SHMEM_TEAM_NUM_CONTEXTS))
        c.num_contexts = config->num_contexts;
    return c;
}

/* A team of parent's PEs start + i * stride (i < size) in which this PE is number my_pe. */
static struct waitio_shmem_team *build_team(const struct waitio_shmem_team *parent, int start, int stride,
                                            int size, int my_pe, int gid, const char *what)
{
    struct waitio_shmem_team *t = calloc(1, sizeof *t);
    int *pes = malloc(sizeof *pes * (size_t)size);
    if (!t || !pes)
        wio_shmem_fatal("%s: out of memory", what);
    int identity = size == S.npes;
    for (int i = 0; i < size; i++) {
        pes[i] = world_pe(parent, start + i * stride);
        identity = identity && pes[i] == i;
    }
    t->size = size;
    t->my_pe = my_pe;
    t->pes = identity ? NULL : pes; /* the world's PEs in order: contexts take their fast path */
    if (identity)
        free(pes);
    team_group(t, gid, what);
    return t;
}

/* count new group ids, agreed over parent (collective on it); returns the first. */
static int agree_gids(const struct waitio_shmem_team *parent, int count, const char *what)
{
    int mine = next_gid, max = 0;
    wio_shmem_check(waitio_mpi_allreduce(&mine, &max, 1, WAITIO_MPI_INT, WAITIO_MPI_MAX, parent->grp), what);
    if (max > GID_COUNT - count)
        wio_shmem_fatal("%s: the %d team ids of the OpenSHMEM layer are used up", what, GID_COUNT);
    next_gid = max + count;
    return GID_FIRST + max;
}

/* ---- set-up ----------------------------------------------------------------------------- */

void wio_shmem_teams_init(void)
{
    wio_shmem_check(waitio_pb_size(&npb), "shmem_init: teams");
    int *nprocs = malloc(sizeof *nprocs * (size_t)npb);
    pb_first = malloc(sizeof *pb_first * (size_t)(npb + 1));
    if (!nprocs || !pb_first)
        wio_shmem_fatal("shmem_init: out of memory");
    waitio_get_nprocs(nprocs);
    pb_first[0] = 0;
    for (int p = 0; p < npb; p++)
        pb_first[p + 1] = pb_first[p] + nprocs[p];
    free(nprocs);
    if (pb_first[npb] != S.npes)
        wio_shmem_fatal("shmem_init: %d processes in the PBs, %d PEs", pb_first[npb], S.npes);
    next_gid = 0;

    struct waitio_shmem_team *w = &waitio_shmem_team_world, *sh = &waitio_shmem_team_shared;
    memset(w, 0, sizeof *w);
    w->size = S.npes;
    w->my_pe = S.me;
    w->grp = S.world;

    memset(sh, 0, sizeof *sh);
    sh->pes = malloc(sizeof *sh->pes * (size_t)S.npes);
    if (!sh->pes)
        wio_shmem_fatal("shmem_init: out of memory");
    for (int pe = 0; pe < S.npes; pe++) {
        if (!S.heap_ptr[pe])
            continue;
        if (pe == S.me)
            sh->my_pe = sh->size;
        sh->pes[sh->size++] = pe;
    }
    team_group(sh, GID_SHARED, "shmem_init: SHMEM_TEAM_SHARED");
}

void wio_shmem_teams_fini(void)
{
    for (struct waitio_shmem_team **list = &split_teams; list; list = list == &split_teams ? &active_sets : NULL)
        while (*list) {
            struct waitio_shmem_team *t = *list;
            *list = t->next;
            team_free(t);
            free(t);
        }
    team_free(&waitio_shmem_team_shared);
    memset(&waitio_shmem_team_world, 0, sizeof waitio_shmem_team_world);
    free(pb_first);
    pb_first = NULL;
    npb = 0;
    next_gid = 0;
}

/* ---- queries ------------------------------------------------------------------------------ */

int shmem_team_my_pe(shmem_team_t team)
{
    return S.ready && team != SHMEM_TEAM_INVALID && team->size > 0 ? team->my_pe : -1;
}

int shmem_team_n_pes(shmem_team_t team)
{
    return S.ready && team != SHMEM_TEAM_INVALID && team->size > 0 ? team->size : -1;
}

int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team)
{
    if (shmem_team_n_pes(src_team) <= 0 || shmem_team_n_pes(dest_team) <= 0)
        return -1;
    int w = wio_shmem_team_world_pe(src_team, src_pe);
    if (w < 0 || !dest_team->pes)
        return w < dest_team->size ? w : -1;
    for (int i = 0; i < dest_team->size; i++)
        if (dest_team->pes[i] == w)
            return i;
    return -1;
}

int shmem_team_get_config(shmem_team_t team, long config_mask, shmem_team_config_t *config)
{
    if (shmem_team_n_pes(team) <= 0 || !config)
        return -1;
    if (config_mask & SHMEM_TEAM_NUM_CONTEXTS)
        config->num_contexts = team->config.num_contexts;
    return 0;
}

int shmem_team_sync(shmem_team_t team)
{
    wio_shmem_need_init();
    if (team == SHMEM_TEAM_INVALID)
        return -1;
    if (team->size <= 0)
        wio_shmem_fatal("shmem_team_sync: not a team (destroyed, or not from shmem_team_split_*)");
    wio_shmem_check(waitio_mpi_barrier(team->grp), "shmem_team_sync");
    return 0;
}

/* ---- splits and destruction ----------------------------------------------------------------- */

static void keep(struct waitio_shmem_team *t, struct waitio_shmem_team **list)
{
    t->next = *list;
    *list = t;
}

int shmem_team_split_strided(shmem_team_t parent_team, int start, int stride, int size,
                             const shmem_team_config_t *config, long config_mask, shmem_team_t *new_team)
{
    const char *what = "shmem_team_split_strided";
    wio_shmem_need_init();
    if (!new_team)
        wio_shmem_fatal("%s: new_team is NULL", what);
    *new_team = SHMEM_TEAM_INVALID;
    if (parent_team == SHMEM_TEAM_INVALID)
        return -1;
    if (parent_team->size <= 0)
        wio_shmem_fatal("%s: the parent is not a team (destroyed?)", what);
    /* the same arguments on every parent PE: every one returns here, before any communication */
    long long n = parent_team->size, last = (long long)start + (long long)stride * (size - 1);
    if (size < 1 || start < 0 || start >= n || last < 0 || last >= n || (stride == 0 && size != 1))
        return -1;
    int gid = agree_gids(parent_team, 1, what);
    long long d = parent_team->my_pe - start;
    int member = stride == 0 ? d == 0 : d % stride == 0 && d / stride >= 0 && d / stride < size;
    if (!member)
        return 0;
    struct waitio_shmem_team *t =
        build_team(parent_team, start, stride, size, stride == 0 ? 0 : (int)(d / stride), gid, what);
    t->config = config_of(config, config_mask);
    keep(t, &split_teams);
    *new_team = t;
    return 0;
}

int shmem_team_split_2d(shmem_team_t parent_team, int xrange, const shmem_team_config_t *xaxis_config,
                        long xaxis_mask, shmem_team_t *xaxis_team, const shmem_team_config_t *yaxis_config,
                        long yaxis_mask, shmem_team_t *yaxis_team)
{
    const char *what = "shmem_team_split_2d";
    wio_shmem_need_init();
    if (!xaxis_team || !yaxis_team)
        wio_shmem_fatal("%s: xaxis_team or yaxis_team is NULL", what);
    *xaxis_team = *yaxis_team = SHMEM_TEAM_INVALID;
    if (parent_team == SHMEM_TEAM_INVALID || xrange <= 0)
        return -1;
    if (parent_team->size <= 0)
        wio_shmem_fatal("%s: the parent is not a team (destroyed?)", what);
    int n = parent_team->size, me = parent_team->my_pe;
    if (xrange > n)
        xrange = n; /* one row: the x team is the parent's PEs, every y team one PE */
    int gid = agree_gids(parent_team, 2, what);
    int x = me % xrange, y = me / xrange;
    int xsize = n - y * xrange < xrange ? n - y * xrange : xrange;
    int ysize = (n - x + xrange - 1) / xrange;
    /* x teams (rows) are disjoint, and so are y teams (columns): one id for all rows, one for all columns */
    struct waitio_shmem_team *xt = build_team(parent_team, y * xrange, 1, xsize, x, gid, what);
    struct waitio_shmem_team *yt = build_team(parent_team, x, xrange, ysize, y, gid + 1, what);
    xt->config = config_of(xaxis_config, xaxis_mask);
    yt->config = config_of(yaxis_config, yaxis_mask);
    keep(xt, &split_teams);
    keep(yt, &split_teams);
    *xaxis_team = xt;
    *yaxis_team = yt;
    return 0;
}

void shmem_team_destroy(shmem_team_t team)
{
    wio_shmem_need_init();
    if (team == SHMEM_TEAM_INVALID)
        return;
    if (team == SHMEM_TEAM_WORLD || team == SHMEM_TEAM_SHARED)
        wio_shmem_fatal("shmem_team_destroy: SHMEM_TEAM_WORLD and SHMEM_TEAM_SHARED cannot be destroyed");
    struct waitio_shmem_team **at = &split_teams;
    while (*at && *at != team)
        at = &(*at)->next;
    if (!*at)
        wio_shmem_fatal("shmem_team_destroy: not a team of shmem_team_split_* (destroyed twice?)");
    /* every member is done with the group (no message of it still coming here) before it goes */
    wio_shmem_check(waitio_mpi_barrier(team->grp), "shmem_team_destroy");
    *at = team->next;
    team_free(team);
    free(team);
}

/* ---- active sets of the deprecated collectives ---------------------------------------------- */

/* The first group id for an active set, agreed through its first PE: each other member sends
 * its counter there, gets the maximum back. */
static int agree_active_set(int start, int logstride, int size, const char *what)
{
    uint64_t tag = WIO_TAG_ACTIVE_SET | (uint64_t)logstride << 50 | (uint64_t)start << 25 | (uint64_t)size;
    int mine = next_gid, max = next_gid;
    waitio_req_t req;
    if (S.me != start) {
        wio_shmem_check(waitio_isend(S.world, start, (char *)&mine, sizeof mine, tag, &req), what);
        wio_shmem_check(waitio_wait(&req), what);
        wio_shmem_check(waitio_irecv(S.world, start, (char *)&max, sizeof max, tag, &req), what);
        wio_shmem_check(waitio_wait(&req), what);
    } else {
        for (int i = 1; i < size; i++) {
            int theirs = 0;
            wio_shmem_check(waitio_irecv(S.world, start + (i << logstride), (char *)&theirs, sizeof theirs, tag, &req),
                            what);
            wio_shmem_check(waitio_wait(&req), what);
            max = theirs > max ? theirs : max;
        }
        for (int i = 1; i < size; i++) {
            wio_shmem_check(waitio_isend(S.world, start + (i << logstride), (char *)&max, sizeof max, tag, &req), what);
            wio_shmem_check(waitio_wait(&req), what);
        }
    }
    if (max > GID_COUNT - 1)
        wio_shmem_fatal("%s: the %d team ids of the OpenSHMEM layer are used up", what, GID_COUNT);
    next_gid = max + 1;
    return GID_FIRST + max;
}

struct waitio_shmem_team *wio_shmem_active_set(int PE_start, int logPE_stride, int PE_size, const char *what)
{
    wio_shmem_need_init();
    long long last = PE_start + ((long long)(PE_size - 1) << (logPE_stride & 31));
    if (PE_size < 1 || PE_start < 0 || logPE_stride < 0 || logPE_stride > 30 || last >= S.npes)
        wio_shmem_fatal("%s: no such active set (PE_start %d, logPE_stride %d, PE_size %d; %d PEs)", what, PE_start,
                        logPE_stride, PE_size, S.npes);
    int d = S.me - PE_start;
    if (d < 0 || (d & ((1 << logPE_stride) - 1)) || (d >> logPE_stride) >= PE_size)
        wio_shmem_fatal("%s: PE %d is not in the active set (PE_start %d, logPE_stride %d, PE_size %d)", what, S.me,
                        PE_start, logPE_stride, PE_size);
    if (PE_start == 0 && PE_size == S.npes)
        return &waitio_shmem_team_world;
    for (struct waitio_shmem_team *t = active_sets; t; t = t->next)
        if (t->as_start == PE_start && t->as_size == PE_size && (t->as_log == logPE_stride || PE_size == 1))
            return t;
    if (S.npes >= AS_LIMIT)
        wio_shmem_fatal("%s: active sets need fewer than %d PEs", what, AS_LIMIT);
    int gid = agree_active_set(PE_start, PE_size == 1 ? 0 : logPE_stride, PE_size, what);
    struct waitio_shmem_team *t = build_team(&waitio_shmem_team_world, PE_start, 1 << logPE_stride, PE_size,
                                             d >> logPE_stride, gid, what);
    t->as_start = PE_start;
    t->as_log = PE_size == 1 ? 0 : logPE_stride;
    t->as_size = PE_size;
    keep(t, &active_sets);
    return t;
}
