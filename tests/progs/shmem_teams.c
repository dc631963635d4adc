/*
 * shmem_teams.c — OpenSHMEM 1.5 team management (section 9.4): SHMEM_TEAM_WORLD and
 * SHMEM_TEAM_SHARED (its members are exactly the PEs shmem_ptr reaches), strided splits (stride 1,
 * stride > 1 from 0 and from 1, a negative stride, stride 0), invalid triplets and an invalid
 * parent (nonzero on every PE, SHMEM_TEAM_INVALID), nested splits, 2-D splits with xrange 1, 2, 3,
 * n and n + 1 (incomplete last row), configurations, translation between every pair of teams,
 * team_sync, destruction, and 40 create/destroy rounds. Every team's membership and order are
 * also checked across processes: an fcollect of the members' world PE numbers over the team must
 * give the expected list, and a sum over it their total.
 */
#include "shmtest.h"

#define MAXPE 64

static int me, n;
static int *gather_src, *gather_dst; /* symmetric: one int, and MAXPE ints */

/* The team must hold world PEs want[0..size) in that order (or not contain this PE: INVALID). */
static void check_team(shmem_team_t t, const int *want, int size, const char *label)
{
    int idx = -1;
    for (int i = 0; i < size; i++)
        if (want[i] == me)
            idx = i;
    if (idx < 0) {
        ST_CHECK(t == SHMEM_TEAM_INVALID, "%s: not a member, got a team", label);
        return;
    }
    ST_CHECK(t != SHMEM_TEAM_INVALID, "%s: member %d got SHMEM_TEAM_INVALID", label, idx);
    if (t == SHMEM_TEAM_INVALID)
        return;
    ST_CHECK(shmem_team_my_pe(t) == idx && shmem_team_n_pes(t) == size, "%s: PE %d of %d, want %d of %d", label,
             shmem_team_my_pe(t), shmem_team_n_pes(t), idx, size);
    for (int i = 0; i < size; i++) {
        ST_CHECK(shmem_team_translate_pe(t, i, SHMEM_TEAM_WORLD) == want[i], "%s: team PE %d -> world %d, want %d",
                 label, i, shmem_team_translate_pe(t, i, SHMEM_TEAM_WORLD), want[i]);
        ST_CHECK(shmem_team_translate_pe(SHMEM_TEAM_WORLD, want[i], t) == i, "%s: world %d -> %d, want %d", label,
                 want[i], shmem_team_translate_pe(SHMEM_TEAM_WORLD, want[i], t), i);
    }
    for (int w = 0; w < n; w++) {
        int in = 0;
        for (int i = 0; i < size; i++)
            in |= want[i] == w;
        if (!in)
            ST_CHECK(shmem_team_translate_pe(SHMEM_TEAM_WORLD, w, t) == -1, "%s: world %d is not a member", label, w);
    }
    ST_CHECK(shmem_team_translate_pe(t, size, SHMEM_TEAM_WORLD) == -1 &&
             shmem_team_translate_pe(t, -1, SHMEM_TEAM_WORLD) == -1, "%s: outside PEs translate", label);
    /* across processes: every member sees the same list, in team order */
    *gather_src = me;
    memset(gather_dst, 0xff, sizeof(int) * (MAXPE + 1));
    ST_CHECK(shmem_int_fcollect(t, gather_dst, gather_src, 1) == 0, "%s: fcollect", label);
    for (int i = 0; i < size; i++)
        ST_CHECK(gather_dst[i] == want[i], "%s: fcollect[%d] = %d, want %d", label, i, gather_dst[i], want[i]);
    ST_CHECK(gather_dst[size] == -1, "%s: fcollect wrote past %d elements", label, size);
    int sum = 0, total = 0;
    for (int i = 0; i < size; i++)
        total += want[i] + 1;
    *gather_src = me + 1;
    ST_CHECK(shmem_int_sum_reduce(t, &gather_dst[0], gather_src, 1) == 0, "%s: sum", label);
    sum = gather_dst[0];
    ST_CHECK(sum == total, "%s: sum of world PEs + 1 = %d, want %d", label, sum, total);
    ST_CHECK(shmem_team_sync(t) == 0, "%s: team_sync", label);
}

/* The world PEs of parent's PEs start + i * stride. */
static int strided(shmem_team_t parent, int start, int stride, int size, int *out)
{
    for (int i = 0; i < size; i++)
        out[i] = shmem_team_translate_pe(parent, start + i * stride, SHMEM_TEAM_WORLD);
    return size;
}

static shmem_team_t split_checked(shmem_team_t parent, int start, int stride, int size, const char *label)
{
    int want[MAXPE];
    shmem_team_t t = (shmem_team_t)&want; /* must be overwritten */
    int in_parent = parent != SHMEM_TEAM_INVALID;
    int rc = shmem_team_split_strided(parent, start, stride, size, NULL, 0, &t);
    ST_CHECK(rc == 0, "%s: split returned %d", label, rc);
    if (in_parent)
        check_team(t, want, strided(parent, start, stride, size, want), label);
    return t;
}

static void worlds_and_shared(void)
{
    st_phase = "world and shared";
    int want[MAXPE], ns = 0;
    for (int i = 0; i < n; i++)
        want[i] = i;
    check_team(SHMEM_TEAM_WORLD, want, n, "world");
    int *probe = gather_dst;
    for (int pe = 0; pe < n; pe++)
        if (shmem_ptr(probe, pe))
            want[ns++] = pe;
    ST_CHECK(ns >= 1, "shmem_ptr reaches no PE, not even this one");
    check_team(SHMEM_TEAM_SHARED, want, ns, "shared");
    for (int i = 0; i < ns; i++) /* shared -> world -> shared */
        ST_CHECK(shmem_team_translate_pe(SHMEM_TEAM_SHARED, i, SHMEM_TEAM_WORLD) == want[i], "shared translate");
    ST_CHECK(shmem_team_my_pe(SHMEM_TEAM_INVALID) == -1 && shmem_team_n_pes(SHMEM_TEAM_INVALID) == -1,
             "INVALID queries");
    ST_CHECK(shmem_team_translate_pe(SHMEM_TEAM_INVALID, 0, SHMEM_TEAM_WORLD) == -1 &&
             shmem_team_translate_pe(SHMEM_TEAM_WORLD, 0, SHMEM_TEAM_INVALID) == -1, "INVALID translate");
    ST_CHECK(shmem_team_sync(SHMEM_TEAM_INVALID) != 0, "team_sync(INVALID) returned 0");
    shmem_team_config_t c = {.num_contexts = 99};
    ST_CHECK(shmem_team_get_config(SHMEM_TEAM_WORLD, SHMEM_TEAM_NUM_CONTEXTS, &c) == 0 && c.num_contexts == 0,
             "world config %d", c.num_contexts);
    ST_CHECK(shmem_team_get_config(SHMEM_TEAM_INVALID, SHMEM_TEAM_NUM_CONTEXTS, &c) != 0, "INVALID config");
}

static void strided_splits(void)
{
    st_phase = "strided splits";
    shmem_team_t all = split_checked(SHMEM_TEAM_WORLD, 0, 1, n, "all");
    shmem_team_t evens = split_checked(SHMEM_TEAM_WORLD, 0, 2, (n + 1) / 2, "evens");
    shmem_team_t odds = n >= 2 ? split_checked(SHMEM_TEAM_WORLD, 1, 2, n / 2, "odds") : SHMEM_TEAM_INVALID;
    shmem_team_t rev = split_checked(SHMEM_TEAM_WORLD, n - 1, -1, n, "reversed");
    shmem_team_t last = split_checked(SHMEM_TEAM_WORLD, n - 1, 0, 1, "stride 0");
    shmem_team_t three = n >= 4 ? split_checked(SHMEM_TEAM_WORLD, 1, 3, (n - 2) / 3 + 1, "stride 3")
                                : SHMEM_TEAM_INVALID;

    st_phase = "nested splits";
    /* members of evens split it again; the others pass SHMEM_TEAM_INVALID as the parent */
    shmem_team_t quarter = SHMEM_TEAM_INVALID;
    int rc = shmem_team_split_strided(evens, 0, 2, (shmem_team_n_pes(evens) + 1) / 2, NULL, 0, &quarter);
    int want[MAXPE], nq = 0;
    for (int w = 0; w < n; w += 4)
        want[nq++] = w;
    if (evens != SHMEM_TEAM_INVALID) {
        ST_CHECK(rc == 0, "nested split returned %d", rc);
        check_team(quarter, want, nq, "quarter");
        if (quarter != SHMEM_TEAM_INVALID) /* nested -> its parent -> world, and back */
            for (int i = 0; i < nq; i++) {
                ST_CHECK(shmem_team_translate_pe(quarter, i, evens) == 2 * i, "quarter %d -> evens", i);
                ST_CHECK(shmem_team_translate_pe(evens, 2 * i, quarter) == i, "evens -> quarter %d", i);
            }
    } else {
        ST_CHECK(rc != 0 && quarter == SHMEM_TEAM_INVALID, "split of INVALID: rc %d", rc);
    }
    if (rev != SHMEM_TEAM_INVALID) { /* a reversed team split forwards: reversed order persists */
        shmem_team_t rev_evens = split_checked(rev, 0, 2, (n + 1) / 2, "reversed evens");
        shmem_team_destroy(rev_evens);
        if (evens != SHMEM_TEAM_INVALID && odds != SHMEM_TEAM_INVALID)
            ST_CHECK(shmem_team_translate_pe(evens, 0, odds) == -1, "evens and odds are disjoint");
    }

    st_phase = "invalid triplets";
    struct { int start, stride, size; } bad[] = {
        {0, 1, 0}, {0, 1, n + 1}, {-1, 1, 1}, {n, 1, 1}, {0, 0, 2}, {0, -1, 2}, {n - 1, 1, 2}, {0, 2, n + 1},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        shmem_team_t t = SHMEM_TEAM_WORLD;
        rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, bad[i].start, bad[i].stride, bad[i].size, NULL, 0, &t);
        ST_CHECK(rc != 0 && t == SHMEM_TEAM_INVALID, "triplet (%d, %d, %d): rc %d", bad[i].start, bad[i].stride,
                 bad[i].size, rc);
    }
    shmem_team_t t = SHMEM_TEAM_WORLD;
    ST_CHECK(shmem_team_split_strided(SHMEM_TEAM_INVALID, 0, 1, 1, NULL, 0, &t) != 0 && t == SHMEM_TEAM_INVALID,
             "INVALID parent");

    st_phase = "destroy";
    shmem_team_destroy(quarter);
    shmem_team_destroy(three);
    shmem_team_destroy(last);
    shmem_team_destroy(rev);
    shmem_team_destroy(odds);
    shmem_team_destroy(evens);
    shmem_team_destroy(all);
    shmem_team_destroy(SHMEM_TEAM_INVALID); /* a no-op */
}

static void splits_2d(void)
{
    st_phase = "2-D splits";
    int xr[] = {1, 2, 3, n, n + 1};
    for (size_t k = 0; k < sizeof xr / sizeof xr[0]; k++) {
        int xrange = xr[k], xeff = xrange > n ? n : xrange;
        shmem_team_t xt = SHMEM_TEAM_INVALID, yt = SHMEM_TEAM_INVALID;
        shmem_team_config_t xc = {.num_contexts = 2}, yc = {.num_contexts = 5};
        int rc = shmem_team_split_2d(SHMEM_TEAM_WORLD, xrange, &xc, SHMEM_TEAM_NUM_CONTEXTS, &xt, &yc, 0, &yt);
        ST_CHECK(rc == 0, "xrange %d: rc %d", xrange, rc);
        int x = me % xeff, y = me / xeff, want[MAXPE], nx = 0, ny = 0;
        for (int w = y * xeff; w < n && w < (y + 1) * xeff; w++)
            want[nx++] = w;
        char label[64];
        snprintf(label, sizeof label, "x team, xrange %d", xrange);
        check_team(xt, want, nx, label);
        for (int w = x; w < n; w += xeff)
            want[ny++] = w;
        snprintf(label, sizeof label, "y team, xrange %d", xrange);
        check_team(yt, want, ny, label);
        ST_CHECK(shmem_team_my_pe(xt) == x && shmem_team_my_pe(yt) == y, "xrange %d: coordinates (%d, %d)", xrange,
                 shmem_team_my_pe(xt), shmem_team_my_pe(yt));
        shmem_team_config_t c = {.num_contexts = -1};
        ST_CHECK(shmem_team_get_config(xt, SHMEM_TEAM_NUM_CONTEXTS, &c) == 0 && c.num_contexts == 2,
                 "x config %d", c.num_contexts);
        ST_CHECK(shmem_team_get_config(yt, SHMEM_TEAM_NUM_CONTEXTS, &c) == 0 && c.num_contexts == 0,
                 "y config (mask 0) %d", c.num_contexts);
        c.num_contexts = 7;
        ST_CHECK(shmem_team_get_config(xt, 0, &c) == 0 && c.num_contexts == 7, "mask 0 changed the config");
        /* x and y teams intersect in this PE only */
        ST_CHECK(shmem_team_translate_pe(xt, x, yt) == y, "x team PE %d -> y team: %d", x,
                 shmem_team_translate_pe(xt, x, yt));
        shmem_team_destroy(xt);
        shmem_team_destroy(yt);
    }
    shmem_team_t xt = SHMEM_TEAM_WORLD, yt = SHMEM_TEAM_WORLD;
    ST_CHECK(shmem_team_split_2d(SHMEM_TEAM_WORLD, 0, NULL, 0, &xt, NULL, 0, &yt) != 0 && xt == SHMEM_TEAM_INVALID &&
             yt == SHMEM_TEAM_INVALID, "xrange 0");
    ST_CHECK(shmem_team_split_2d(SHMEM_TEAM_INVALID, 1, NULL, 0, &xt, NULL, 0, &yt) != 0 &&
             xt == SHMEM_TEAM_INVALID && yt == SHMEM_TEAM_INVALID, "2-D split of INVALID");
}

/* Teams that overlap and live together keep distinct groups: a sum over each is its own. */
static void many(void)
{
    st_phase = "create/destroy rounds";
    for (int r = 0; r < 40; r++) {
        shmem_team_t a = SHMEM_TEAM_INVALID, b = SHMEM_TEAM_INVALID;
        int sa = n - r % n, sb = (n + 1) / 2;
        ST_CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, sa, NULL, 0, &a) == 0, "round %d a", r);
        ST_CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, n - 1, -2, sb, NULL, 0, &b) == 0, "round %d b", r);
        if (a != SHMEM_TEAM_INVALID) {
            *gather_src = r + me;
            ST_CHECK(shmem_int_sum_reduce(a, gather_dst, gather_src, 1) == 0, "round %d sum a", r);
            ST_CHECK(gather_dst[0] == sa * r + sa * (sa - 1) / 2, "round %d sum a: %d", r, gather_dst[0]);
        }
        if (b != SHMEM_TEAM_INVALID) {
            *gather_src = 1;
            ST_CHECK(shmem_int_sum_reduce(b, gather_dst, gather_src, 1) == 0, "round %d sum b", r);
            ST_CHECK(gather_dst[0] == sb, "round %d sum b: %d", r, gather_dst[0]);
        }
        if (r % 2)
            shmem_team_destroy(a), shmem_team_destroy(b);
        else
            shmem_team_destroy(b), shmem_team_destroy(a);
    }
}

int main(void)
{
    st_begin("shmem_teams", 60);
    me = shmem_my_pe();
    n = shmem_n_pes();
    if (n > MAXPE) {
        fprintf(stderr, "shmem_teams: at most %d PEs\n", MAXPE);
        return 1;
    }
    gather_src = shmem_malloc(sizeof(int));
    gather_dst = shmem_malloc(sizeof(int) * (MAXPE + 1));
    worlds_and_shared();
    strided_splits();
    splits_2d();
    many();
    shmem_free(gather_dst);
    shmem_free(gather_src);
    return st_end();
}
