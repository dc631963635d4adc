/*
 * shmem_coll.c — OpenSHMEM collectives on SHMEM_TEAM_WORLD: broadcast from every root (typed,
 * generic and mem forms; the root's dest updated too), fcollect and collect (blocks of different
 * sizes per PE), alltoall, and the reductions sum/prod/max/min (int, long, double, unsigned char)
 * and and/or/xor (unsigned, uint64), in place and not; barrier_all / sync_all / team_sync.
 */
#include <stdint.h>
#include "shmtest.h"

int main(void)
{
    st_begin("shmem_coll", 90);
    int me = shmem_my_pe(), n = shmem_n_pes();
    long *src = shmem_malloc(64 * sizeof(long));
    long *dst = shmem_malloc(64 * (size_t)n * sizeof(long));

    st_phase = "broadcast";
    for (int root = 0; root < n; root++) {
        for (int i = 0; i < 64; i++) {
            src[i] = root * 1000 + i;
            dst[i] = -1;
        }
        int rc = root % 2 ? shmem_long_broadcast(SHMEM_TEAM_WORLD, dst, src, 64, root)
                          : shmem_broadcast(SHMEM_TEAM_WORLD, dst, src, 64, root);
        ST_CHECK(rc == 0, "broadcast returned %d", rc);
        for (int i = 0; i < 64; i++)
            ST_CHECK(dst[i] == root * 1000 + i, "root %d element %d: %ld", root, i, dst[i]);
    }
    char *cs = shmem_malloc(32), *cd = shmem_malloc(32);
    snprintf(cs, 32, "hello %d", me);
    shmem_broadcastmem(SHMEM_TEAM_WORLD, cd, cs, 32, n - 1);
    char want[32];
    snprintf(want, sizeof want, "hello %d", n - 1);
    ST_CHECK(!strcmp(cd, want), "broadcastmem: '%s'", cd);

    st_phase = "fcollect, collect";
    for (int i = 0; i < 4; i++)
        src[i] = me * 10 + i;
    ST_CHECK(shmem_fcollect(SHMEM_TEAM_WORLD, dst, src, 4) == 0, "fcollect");
    for (int pe = 0; pe < n; pe++)
        for (int i = 0; i < 4; i++)
            ST_CHECK(dst[4 * pe + i] == pe * 10 + i, "fcollect from PE %d element %d: %ld", pe, i, dst[4 * pe + i]);
    /* PE p contributes p + 1 elements */
    for (int i = 0; i <= me; i++)
        src[i] = me * 100 + i;
    ST_CHECK(shmem_long_collect(SHMEM_TEAM_WORLD, dst, src, (size_t)me + 1) == 0, "collect");
    int at = 0;
    for (int pe = 0; pe < n; pe++)
        for (int i = 0; i <= pe; i++, at++)
            ST_CHECK(dst[at] == pe * 100 + i, "collect element %d: %ld", at, dst[at]);

    st_phase = "alltoall";
    for (int pe = 0; pe < n; pe++)
        for (int i = 0; i < 2; i++)
            dst[2 * pe + i] = me * 1000 + pe * 10 + i;   /* send buffer laid out per destination */
    long *a2a = shmem_malloc(2 * (size_t)n * sizeof(long));
    ST_CHECK(shmem_alltoall(SHMEM_TEAM_WORLD, a2a, dst, 2) == 0, "alltoall");
    for (int pe = 0; pe < n; pe++)
        for (int i = 0; i < 2; i++)
            ST_CHECK(a2a[2 * pe + i] == pe * 1000 + me * 10 + i, "alltoall from PE %d: %ld", pe, a2a[2 * pe + i]);

    st_phase = "reductions";
    int *is = shmem_malloc(4 * sizeof(int)), *id = shmem_malloc(4 * sizeof(int));
    double *ds = shmem_malloc(4 * sizeof(double)), *dd = shmem_malloc(4 * sizeof(double));
    unsigned char *us = shmem_malloc(4), *ud = shmem_malloc(4);
    uint64_t *bs = shmem_malloc(2 * sizeof(uint64_t)), *bd = shmem_malloc(2 * sizeof(uint64_t));
    for (int i = 0; i < 4; i++) {
        is[i] = me + i;
        ds[i] = 0.5 * (me + 1) * (i + 1);
        us[i] = (unsigned char)(me + 1);
    }
    shmem_int_sum_reduce(SHMEM_TEAM_WORLD, id, is, 4);
    for (int i = 0; i < 4; i++)
        ST_CHECK(id[i] == n * (n - 1) / 2 + n * i, "int sum %d: %d", i, id[i]);
    shmem_max_reduce(SHMEM_TEAM_WORLD, id, is, 4);   /* generic: int */
    ST_CHECK(id[0] == n - 1 && id[3] == n + 2, "int max: %d %d", id[0], id[3]);
    shmem_int_min_reduce(SHMEM_TEAM_WORLD, id, is, 4);
    ST_CHECK(id[0] == 0 && id[3] == 3, "int min: %d %d", id[0], id[3]);
    shmem_double_sum_reduce(SHMEM_TEAM_WORLD, dd, ds, 4);
    ST_CHECK(dd[0] == 0.5 * n * (n + 1) / 2, "double sum: %g", dd[0]);
    shmem_double_prod_reduce(SHMEM_TEAM_WORLD, dd, ds, 1);
    double p = 1;
    for (int pe = 0; pe < n; pe++)
        p *= 0.5 * (pe + 1);
    ST_CHECK(dd[0] == p, "double prod: %g, expected %g", dd[0], p);
    shmem_uchar_max_reduce(SHMEM_TEAM_WORLD, ud, us, 4);
    ST_CHECK(ud[2] == n, "uchar max: %u", ud[2]);
    bs[0] = 1ull << me;
    bs[1] = ~(1ull << me);
    shmem_uint64_or_reduce(SHMEM_TEAM_WORLD, bd, bs, 1);
    ST_CHECK(bd[0] == (n == 64 ? ~0ull : (1ull << n) - 1), "or: %llx", (unsigned long long)bd[0]);
    shmem_uint64_and_reduce(SHMEM_TEAM_WORLD, &bd[1], &bs[1], 1);
    ST_CHECK(bd[1] == ~((n == 64 ? ~0ull : (1ull << n) - 1)), "and: %llx", (unsigned long long)bd[1]);
    shmem_uint64_xor_reduce(SHMEM_TEAM_WORLD, bs, bs, 1);  /* in place */
    ST_CHECK(bs[0] == (n == 64 ? ~0ull : (1ull << n) - 1), "xor in place: %llx", (unsigned long long)bs[0]);
    long ls = me + 1, lp = 0;
    long *lsrc = shmem_malloc(sizeof(long)), *ldst = shmem_malloc(sizeof(long));
    *lsrc = ls;
    shmem_long_prod_reduce(SHMEM_TEAM_WORLD, ldst, lsrc, 1);
    lp = 1;
    for (int pe = 1; pe <= n; pe++)
        lp *= pe;
    ST_CHECK(*ldst == lp, "long prod: %ld, expected %ld", *ldst, lp);

    st_phase = "barriers";
    for (int i = 0; i < 10; i++) {
        shmem_barrier_all();
        shmem_sync_all();
        ST_CHECK(shmem_team_sync(SHMEM_TEAM_WORLD) == 0, "team_sync");
    }
    shmem_free(src);
    shmem_free(dst);
    shmem_free(cs);
    shmem_free(cd);
    shmem_free(a2a);
    shmem_free(is);
    shmem_free(id);
    shmem_free(ds);
    shmem_free(dd);
    shmem_free(us);
    shmem_free(ud);
    shmem_free(bs);
    shmem_free(bd);
    shmem_free(lsrc);
    shmem_free(ldst);
    return st_end();
}
