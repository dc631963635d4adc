/*
 * mpi_groups.c — groups (SPEC §2, §4): waitio_create_group (filter functions) and
 * waitio_create_group_wranks (rank lists ended by WAITIO_RANKS_END), PB order from order[]
 * (order[p] = PB p's position, 0 = excluded), with 3 PBs (the test runs an Open MPI PB, an MPICH
 * PB and a plain process; tests/progs/groups.c is the non-MPI build of this file).
 *
 * For every group the expected member list is computed here from the rule (PB by PB in order[],
 * PB-local rank inside a PB) — and, for the default PB sizes 2,3,1, also compared with lists
 * written out by hand. Then:
 *  - waitio_group_size, waitio_group_rank (WAITIO_UNDEFINED for a non-member) and
 *    waitio_group_member for every rank match the expected list;
 *  - every member sends every other member of every group a message carrying (gid, its group
 *    rank, its PBID, its PB-local rank, the destination rank), all groups with the SAME tag, all
 *    receives posted before any send: each receive must get the message of its own group from the
 *    right sender (status.source and payload identity checked); a second round uses
 *    WAITIO_ANY_SOURCE receives, where the payload's identity must be that of status.source;
 *  - a non-member's isend/irecv returns WAITIO_ERR_NOT_MEMBER; a destination rank out of range
 *    WAITIO_ERR_GROUP; waitio_group_member out of range fails;
 *  - invalid creations return NULL: a gid in use, duplicate positions in order[], a rank list
 *    naming a rank the PB does not have; a freed gid can be used again;
 *  - waitio_get_nprocs, waitio_pb_size/pb_rank, waitio_local_rank/size against the environment,
 *    MPI_COMM_WORLD (MPI builds) and --sizes.
 * Usage: mpi_groups [--sizes 2,3,1] [--alarm S]. Prints "mpi_groups PB p rank r: ok (G groups)"
 * per process; exit status 0 only if every check passed.
 */
#ifndef TU_NO_MPI
#include <mpi.h>
#endif
#include "testutil.h"

#ifdef TU_NO_MPI
#define PROG "groups"
#else
#define PROG "mpi_groups"
#endif

#define NPB_REQ 3
#define TAG_SAME 77UL
#define TAG_ANY 78UL
#define MAXM 256
#define END WAITIO_RANKS_END

static int npb, mypb, mylocal, mysize, sizes[NPB_REQ];

static int f_all(int p, int r) { (void)p; (void)r; return 1; }
static int f_even(int p, int r) { (void)p; return r % 2 == 0; }
static int f_odd(int p, int r) { (void)p; return r % 2 == 1; }
static int f_none(int p, int r) { (void)p; (void)r; return 0; }
static int f_rank0(int p, int r) { (void)p; return r == 0; }
static int f_not0(int p, int r) { (void)p; return r != 0; }

/* rank lists (terminated by WAITIO_RANKS_END) */
static int l_1[] = {1, END}, l_2_0[] = {2, 0, END}, l_0[] = {0, END}, l_0_1[] = {0, 1, END},
           l_empty[] = {END}, l_bad[] = {0, 7, END};

typedef struct spec {
    int gid;
    waitio_filter_func_t f[NPB_REQ]; /* used when lists is 0 */
    int *l[NPB_REQ];
    int lists;
    int order[NPB_REQ];
    const char *expect_default; /* member list "pb.rank ..." for sizes 2,3,1 */
    const char *what;
} spec;

static spec specs[] = {
    {10, {f_all, f_all, f_all}, {0}, 0, {1, 2, 3}, "0.0 0.1 1.0 1.1 1.2 2.0", "everyone, natural order"},
    {11, {f_all, f_all, f_all}, {0}, 0, {3, 1, 2}, "1.0 1.1 1.2 2.0 0.0 0.1", "everyone, order {3,1,2}"},
    {12, {f_even, f_odd, NULL}, {0}, 0, {2, 1, 0}, "1.1 0.0", "even of PB 0, odd of PB 1, order {2,1,0}"},
    {13, {0}, {l_1, l_2_0, l_0}, 1, {3, 1, 2}, "1.0 1.2 2.0 0.1", "lists {1},{2,0},{0}, order {3,1,2}"},
    {14, {0}, {l_0_1, l_empty, NULL}, 1, {1, 2, 0}, "0.0 0.1", "lists {0,1},{},NULL"},
    {15, {NULL, f_all, f_rank0}, {0}, 0, {1, 3, 2}, "2.0 1.0 1.1 1.2", "NULL filter with a position"},
    {16, {f_all, f_all, f_all}, {0}, 0, {0, 1, 0}, "1.0 1.1 1.2", "order 0 excludes despite a filter"},
    {17, {f_none, f_not0, f_none}, {0}, 0, {1, 2, 3}, "1.1 1.2", "filters rejecting ranks"},
    {18, {0}, {NULL, NULL, l_0}, 1, {0, 0, 1}, "2.0", "a single member"},
    {19, {f_all, f_all, NULL}, {0}, 0, {2, 1, 0}, "1.0 1.1 1.2 0.0 0.1", "order {2,1,0} puts PB 1 first"},
};
#define NSPECS ((int)(sizeof specs / sizeof specs[0]))

typedef struct member { int pb, rank; } member;

/* the expected members from the rule, computed independently of the library */
static int expected(const spec *s, member *m)
{
    int n = 0;
    for (int pos = 1; pos <= npb; pos++)
        for (int p = 0; p < npb; p++) {
            if (s->order[p] != pos)
                continue;
            for (int r = 0; r < sizes[p]; r++) {
                int in = 0;
                if (s->lists) {
                    for (int *q = s->l[p]; q && *q != END; q++)
                        if (*q == r)
                            in = 1;
                } else {
                    in = s->f[p] && s->f[p](p, r);
                }
                if (in)
                    m[n++] = (member){p, r};
            }
        }
    return n;
}

static waitio_group_t create(const spec *s)
{
    if (s->lists) {
        int *l[NPB_REQ];
        int order[NPB_REQ];
        memcpy(l, s->l, sizeof l);
        memcpy(order, s->order, sizeof order);
        return waitio_create_group_wranks(s->gid, l, order);
    }
    waitio_filter_func_t f[NPB_REQ];
    int order[NPB_REQ];
    memcpy(f, s->f, sizeof f);
    memcpy(order, s->order, sizeof order);
    return waitio_create_group(s->gid, f, order);
}

typedef struct payload { int32_t gid, rank, pb, local, dst; } payload;

int main(int argc, char **argv)
{
    unsigned alarm_secs = 60;
    tu_set_name(argv[0]);
#ifndef TU_NO_MPI
    MPI_Init(&argc, &argv);
#endif
    int want_sizes[NPB_REQ] = {2, 3, 1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            TU_FAIL("option %s needs a value", a);
        i++;
        if (!strcmp(a, "--sizes")) {
            if (tu_parse_ints(v, want_sizes, NPB_REQ) != NPB_REQ)
                TU_FAIL("--sizes wants %d numbers", NPB_REQ);
        } else if (!strcmp(a, "--alarm"))
            alarm_secs = (unsigned)atoi(v);
        else
            TU_FAIL("unknown option %s", a);
    }
    tu_alarm(alarm_secs);
    tu_phase("waitio_init");
    TU_CHECK(waitio_init(60));
    tu_phase("PB-level queries");
    TU_CHECK(waitio_pb_size(&npb));
    TU_CHECK(waitio_pb_rank(&mypb));
    TU_CHECK(waitio_local_rank(&mylocal));
    TU_CHECK(waitio_local_size(&mysize));
    tu_set_who(mypb, mylocal);
    if (npb != NPB_REQ)
        TU_FAIL("this test needs %d PBs, waitio_pb_size says %d", NPB_REQ, npb);
    long env;
    if ((env = tu_env_long("WAITIO_PBID")) >= 0 && env != mypb)
        TU_ERR("waitio_pb_rank = %d but WAITIO_PBID=%ld", mypb, env);
    if ((env = tu_env_long("WAITIO_NPB")) >= 0 && env != npb)
        TU_ERR("waitio_pb_size = %d but WAITIO_NPB=%ld", npb, env);
#ifndef TU_NO_MPI
    int wr, ws;
    MPI_Comm_rank(MPI_COMM_WORLD, &wr);
    MPI_Comm_size(MPI_COMM_WORLD, &ws);
    if (wr != mylocal || ws != mysize)
        TU_ERR("waitio_local_rank/size = %d/%d, MPI_COMM_WORLD says %d/%d", mylocal, mysize, wr, ws);
#else
    if ((env = tu_env_long("WAITIO_PB_RANK")) >= 0 && env != mylocal)
        TU_ERR("waitio_local_rank = %d but WAITIO_PB_RANK=%ld", mylocal, env);
    if ((env = tu_env_long("WAITIO_PB_SIZE")) >= 0 && env != mysize)
        TU_ERR("waitio_local_size = %d but WAITIO_PB_SIZE=%ld", mysize, env);
#endif
    int rc = waitio_get_nprocs(sizes);
    if (rc != npb)
        TU_FAIL("waitio_get_nprocs returned %d, expected %d", rc, npb);
    for (int p = 0; p < npb; p++)
        if (sizes[p] != want_sizes[p])
            TU_ERR("waitio_get_nprocs: PB %d has %d processes, expected %d", p, sizes[p], want_sizes[p]);
    if (sizes[mypb] != mysize)
        TU_ERR("waitio_get_nprocs says PB %d has %d processes, waitio_local_size says %d", mypb,
               sizes[mypb], mysize);
    int defaults = sizes[0] == 2 && sizes[1] == 3 && sizes[2] == 1;

    /* create every group and check its table */
    waitio_group_t g[NSPECS];
    member m[NSPECS][MAXM];
    int n[NSPECS], myrank[NSPECS];
    for (int i = 0; i < NSPECS; i++) {
        const spec *s = &specs[i];
        tu_phase("group %d (%s): creation and table", s->gid, s->what);
        n[i] = expected(s, m[i]);
        if (defaults) {
            char buf[512] = "";
            size_t used = 0;
            for (int k = 0; k < n[i]; k++)
                used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%d.%d", k ? " " : "",
                                         m[i][k].pb, m[i][k].rank);
            if (strcmp(buf, s->expect_default))
                TU_FAIL("test bug: the rule gives \"%s\" for group %d, the table \"%s\"", buf,
                        s->gid, s->expect_default);
        }
        myrank[i] = WAITIO_UNDEFINED;
        for (int k = 0; k < n[i]; k++)
            if (m[i][k].pb == mypb && m[i][k].rank == mylocal)
                myrank[i] = k;
        int valid = 1;
        for (int p = 0; s->lists && p < npb; p++)
            for (int *q = s->l[p]; q && *q != END; q++)
                if (*q >= sizes[p])
                    valid = 0;
        g[i] = create(s);
        if (!valid) { /* a rank list naming a rank its PB does not have (with other --sizes) */
            if (g[i])
                TU_ERR("group %d (%s) names a rank beyond its PB's size but was created", s->gid,
                       s->what);
            n[i] = 0;
            myrank[i] = WAITIO_UNDEFINED;
            continue;
        }
        if (!g[i])
            TU_FAIL("creating group %d (%s) failed: %s", s->gid, s->what, waitio_error_message());
        int sz = -1, rk = -2;
        TU_CHECK(waitio_group_size(g[i], &sz));
        TU_CHECK(waitio_group_rank(g[i], &rk));
        if (sz != n[i])
            TU_ERR("group %d (%s): waitio_group_size = %d, expected %d", s->gid, s->what, sz, n[i]);
        if (rk != myrank[i])
            TU_ERR("group %d (%s): waitio_group_rank = %d, expected %d", s->gid, s->what, rk, myrank[i]);
        for (int k = 0; k < n[i] && k < sz; k++) {
            int pb = -1, lr = -1;
            int mrc = waitio_group_member(g[i], k, &pb, &lr);
            if (mrc || pb != m[i][k].pb || lr != m[i][k].rank)
                TU_ERR("group %d (%s): waitio_group_member(%d) = %s, PB %d rank %d; expected PB %d "
                       "rank %d", s->gid, s->what, k, tu_code_name(mrc), pb, lr, m[i][k].pb,
                       m[i][k].rank);
        }
        int pb, lr;
        if (waitio_group_member(g[i], n[i], &pb, &lr) == WAITIO_SUCCESS)
            TU_ERR("group %d: waitio_group_member(%d) (out of range) succeeded", s->gid, n[i]);
    }

    /* API errors */
    tu_phase("errors of non-members and bad ranks");
    for (int i = 0; i < NSPECS; i++) {
        char b[8] = {0};
        waitio_req_t r;
        if (!g[i])
            continue;
        if (myrank[i] == WAITIO_UNDEFINED) {
            int e1 = waitio_isend(g[i], 0, b, sizeof b, TAG_SAME, &r);
            int e2 = waitio_irecv(g[i], WAITIO_ANY_SOURCE, b, sizeof b, TAG_SAME, &r);
            if (e1 != WAITIO_ERR_NOT_MEMBER || e2 != WAITIO_ERR_NOT_MEMBER)
                TU_ERR("group %d: a non-member's isend/irecv returned %s/%s, expected "
                       "WAITIO_ERR_NOT_MEMBER", specs[i].gid, tu_code_name(e1), tu_code_name(e2));
        } else {
            int e1 = waitio_isend(g[i], n[i], b, sizeof b, TAG_SAME, &r);
            int e2 = waitio_irecv(g[i], n[i] + 3, b, sizeof b, TAG_SAME, &r);
            if (e1 != WAITIO_ERR_GROUP || e2 != WAITIO_ERR_GROUP)
                TU_ERR("group %d of size %d: isend to / irecv from an out-of-range rank returned "
                       "%s/%s, expected WAITIO_ERR_GROUP", specs[i].gid, n[i], tu_code_name(e1),
                       tu_code_name(e2));
        }
    }
    {
        spec dup = specs[0];
        if (create(&dup))
            TU_ERR("creating a second group with gid %d (in use) succeeded", dup.gid);
        spec badorder = {40, {f_all, f_all, f_all}, {0}, 0, {1, 1, 0}, "", "duplicate positions"};
        if (create(&badorder))
            TU_ERR("a group with order {1,1,0} (two PBs in position 1) was created");
        spec badrank = {41, {0}, {l_bad, NULL, NULL}, 1, {1, 0, 0}, "", "rank 7 in a 2-process PB"};
        if (sizes[0] <= 7 && create(&badrank))
            TU_ERR("a group naming rank 7 of PB 0 (which has %d processes) was created", sizes[0]);
    }

    /* messages: every group, every ordered pair of members, one tag for all groups */
    tu_phase("messages in every group (same tag everywhere)");
    int total = 0;
    for (int i = 0; i < NSPECS; i++)
        if (myrank[i] != WAITIO_UNDEFINED)
            total += 2 * (n[i] - 1);
    waitio_req_t *reqs = tu_xcalloc((size_t)total + 1, sizeof *reqs);
    payload *in = tu_xcalloc((size_t)total + 1, sizeof *in), *out = tu_xcalloc((size_t)total + 1, sizeof *out);
    int *rgroup = tu_xcalloc((size_t)total + 1, sizeof *rgroup), *rpeer = tu_xcalloc((size_t)total + 1, sizeof *rpeer);
    for (int round = 0; round < 2; round++) {
        uint64_t tag = round ? TAG_ANY : TAG_SAME;
        int k = 0;
        for (int i = 0; i < NSPECS; i++) {
            if (myrank[i] == WAITIO_UNDEFINED)
                continue;
            for (int j = 0; j < n[i]; j++) {
                if (j == myrank[i])
                    continue;
                rgroup[k] = i;
                rpeer[k] = j;
                TU_CHECK(waitio_irecv(g[i], round ? WAITIO_ANY_SOURCE : j, (char *)&in[k],
                                      sizeof in[k], tag, &reqs[k]));
                k++;
            }
        }
        int nrecv = k;
        for (int i = 0; i < NSPECS; i++) {
            if (myrank[i] == WAITIO_UNDEFINED)
                continue;
            for (int j = 0; j < n[i]; j++) {
                if (j == myrank[i])
                    continue;
                out[k] = (payload){specs[i].gid, myrank[i], mypb, mylocal, j};
                TU_CHECK(waitio_isend(g[i], j, (char *)&out[k], sizeof out[k], tag, &reqs[k]));
                k++;
            }
        }
        rc = waitio_waitall(k, reqs);
        if (rc)
            TU_ERR("round %d: waitio_waitall returned %s (%s)", round, tu_code_name(rc),
                   waitio_error_message());
        int *seen = tu_xcalloc(MAXM * NSPECS, sizeof *seen);
        for (int q = 0; q < nrecv; q++) {
            int i = rgroup[q], src = round ? reqs[q].status.source : rpeer[q];
            const payload *p = &in[q];
            if (reqs[q].status.error) {
                TU_ERR("group %d: receive %s %d failed: %s", specs[i].gid, round ? "(ANY_SOURCE) #" : "from rank",
                       rpeer[q], tu_code_name(reqs[q].status.error));
                continue;
            }
            if (src < 0 || src >= n[i] || src == myrank[i]) {
                TU_ERR("group %d: ANY_SOURCE receive reports source %d (group of %d, I am %d)",
                       specs[i].gid, src, n[i], myrank[i]);
                continue;
            }
            if (round && seen[i * MAXM + src]++)
                TU_ERR("group %d: two ANY_SOURCE receives report source %d", specs[i].gid, src);
            if (reqs[q].status.source != src || reqs[q].status.tag != tag ||
                reqs[q].status.len != sizeof *p)
                TU_ERR("group %d: receive from rank %d: status source %d tag %lu len %zu",
                       specs[i].gid, src, reqs[q].status.source, reqs[q].status.tag,
                       reqs[q].status.len);
            if (p->gid != specs[i].gid || p->rank != src || p->pb != m[i][src].pb ||
                p->local != m[i][src].rank || p->dst != myrank[i])
                TU_ERR("group %d (%s), %s receive from rank %d = PB %d rank %d: got the message of "
                       "group %d, sender rank %d = PB %d rank %d, for rank %d (I am %d)",
                       specs[i].gid, specs[i].what, round ? "ANY_SOURCE" : "a", src, m[i][src].pb,
                       m[i][src].rank, p->gid, p->rank, p->pb, p->local, p->dst, myrank[i]);
        }
        for (int q = nrecv; q < k; q++)
            if (reqs[q].status.error)
                TU_ERR("round %d: a send failed: %s", round, tu_code_name(reqs[q].status.error));
        free(seen);
    }

    /* free and re-create */
    tu_phase("group free and gid reuse");
    int last = NSPECS - 2; /* gid 18, the single-member group */
    if (!g[last])
        TU_FAIL("test bug: group %d must exist", specs[last].gid);
    TU_CHECK(waitio_group_free(g[last]));
    waitio_group_t again = create(&specs[last]);
    if (!again) {
        TU_ERR("re-creating group %d after waitio_group_free failed: %s", specs[last].gid,
               waitio_error_message());
    } else {
        int sz = -1, rk = -2;
        TU_CHECK(waitio_group_size(again, &sz));
        TU_CHECK(waitio_group_rank(again, &rk));
        if (sz != n[last] || rk != myrank[last])
            TU_ERR("re-created group %d: size %d rank %d, expected %d and %d", specs[last].gid,
                   sz, rk, n[last], myrank[last]);
    }
    /* everyone must be done with the groups before anyone finalizes: a last exchange on the
     * universe group (rank 0 collects a token from all and answers) */
    tu_phase("final synchronisation");
    {
        int u = 0, un = n[0];
        waitio_group_rank(g[0], &u);
        int32_t tok = (int32_t)tu_errors, *all = tu_xcalloc((size_t)un, sizeof *all);
        if (u == 0) {
            waitio_req_t *r = tu_xcalloc((size_t)un, sizeof *r);
            for (int p = 1; p < un; p++)
                TU_CHECK(waitio_irecv(g[0], p, (char *)&all[p], sizeof all[p], 99, &r[p]));
            TU_CHECK(waitio_waitall(un - 1, r + 1));
            for (int p = 1; p < un; p++)
                if (all[p])
                    fprintf(stderr, PROG ": universe rank %d reported %d errors\n", p, all[p]);
            free(r);
        } else {
            waitio_req_t r;
            TU_CHECK(waitio_isend(g[0], 0, (char *)&tok, sizeof tok, 99, &r));
            TU_CHECK(waitio_wait_timeout(&r, 30));
        }
        free(all);
    }
    tu_phase("waitio_finalize");
    TU_CHECK(waitio_finalize());
#ifndef TU_NO_MPI
    MPI_Finalize();
#endif
    if (tu_errors) {
        fprintf(stderr, PROG "%s: FAILED with %ld errors\n", tu_who, tu_errors);
        return 1;
    }
    int member_of = 0;
    for (int i = 0; i < NSPECS; i++)
        member_of += myrank[i] != WAITIO_UNDEFINED;
    printf(PROG " PB %d rank %d: ok (%d groups, member of %d)\n", mypb, mylocal, NSPECS, member_of);
    return 0;
}
