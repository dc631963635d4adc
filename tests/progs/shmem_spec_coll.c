/*
 * shmem_spec_coll.c — the scenarios of the OpenSHMEM 1.5 specification's collective examples:
 * shmem_broadcast (team form, and broadcast64 with an active set and pSync), shmem_collect (PE k
 * contributes k+1 elements), shmem_fcollect, shmem_alltoall (team form and alltoall64),
 * shmem_alltoalls (team form and alltoalls64), shmem_reduce (or_reduce over flags and sum_reduce
 * of counts from pseudo-random data every PE can regenerate) and sum_to_all. Every PE checks
 * every element it receives.
 */
#include <stdint.h>
#include "shmtest.h"

#define NELEMS 32
#define BIG 1000

static long g_src[4], g_dst[4];
static long g_psync[SHMEM_BCAST_SYNC_SIZE];
static long g_apsync[SHMEM_ALLTOALL_SYNC_SIZE];
static long g_spsync[SHMEM_ALLTOALLS_SYNC_SIZE];
static long g_rpsync[SHMEM_REDUCE_SYNC_SIZE];
static long g_pwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE + 8];
static int g_big_src[BIG], g_big_dst[BIG];

static void psync_init(long *p, int k)
{
    for (int i = 0; i < k; i++)
        p[i] = SHMEM_SYNC_VALUE;
}

static void broadcast(int me, int n)
{
    st_phase = "broadcast example (team)";
    for (int i = 0; i < 4; i++) {
        g_src[i] = me == 0 ? i : -1;
        g_dst[i] = -7;
    }
    shmem_barrier_all();
    ST_CHECK(shmem_broadcast(SHMEM_TEAM_WORLD, g_dst, g_src, 4, 0) == 0, "broadcast returned nonzero");
    for (int i = 0; me != 0 && i < 4; i++)
        ST_CHECK(g_dst[i] == i, "dest[%d] = %ld", i, g_dst[i]);

    st_phase = "broadcast, 1000 ints from the last PE";
    for (int i = 0; i < BIG; i++) {
        g_big_src[i] = me == n - 1 ? i * 31 + 5 : -1;
        g_big_dst[i] = -7;
    }
    shmem_barrier_all();
    shmem_int_broadcast(SHMEM_TEAM_WORLD, g_big_dst, g_big_src, BIG, n - 1);
    for (int i = 0; me != n - 1 && i < BIG; i++)
        if (g_big_dst[i] != i * 31 + 5) {
            ST_CHECK(0, "dest[%d] = %d", i, g_big_dst[i]);
            break;
        }

    st_phase = "broadcast64 (active set, pSync)";
    psync_init(g_psync, SHMEM_BCAST_SYNC_SIZE);
    for (int i = 0; i < 4; i++) {
        g_src[i] = me == 0 ? 100 + i : -1;
        g_dst[i] = -7;
    }
    shmem_barrier_all();
    shmem_broadcast64(g_dst, g_src, 4, 0, 0, 0, n, g_psync);
    for (int i = 0; me != 0 && i < 4; i++)
        ST_CHECK(g_dst[i] == 100 + i, "dest[%d] = %ld", i, g_dst[i]);
    shmem_barrier_all();
}

static void collect(int me, int n)
{
    st_phase = "collect example";
    int my_nelem = me + 1, total = n * (n + 1) / 2;
    int *source = shmem_malloc(n * sizeof(int));
    int *dest = shmem_malloc((total + 3 * n) * sizeof(int)); /* room for fcollect's 3n too */
    for (int i = 0; i < my_nelem; i++)
        source[i] = me * (me + 1) / 2 + i;
    for (int i = 0; i < total; i++)
        dest[i] = -9999;
    shmem_team_sync(SHMEM_TEAM_WORLD);
    ST_CHECK(shmem_int_collect(SHMEM_TEAM_WORLD, dest, source, my_nelem) == 0, "collect returned nonzero");
    for (int i = 0; i < total; i++)
        ST_CHECK(dest[i] == i, "collect dest[%d] = %d", i, dest[i]);

    st_phase = "fcollect";
    for (int i = 0; i < 3; i++)
        source[i] = me * 3 + i;
    shmem_barrier_all();
    shmem_fcollect(SHMEM_TEAM_WORLD, dest, source, 3);
    for (int i = 0; i < 3 * n; i++)
        ST_CHECK(dest[i] == i, "fcollect dest[%d] = %d", i, dest[i]);
    shmem_barrier_all();
    shmem_free(dest);
    shmem_free(source);
}

static void alltoall(int me, int n)
{
    st_phase = "alltoall example (team)";
    const int count = 2;
    int64_t *dest = shmem_malloc(count * n * sizeof(int64_t));
    int64_t *source = shmem_malloc(count * n * sizeof(int64_t));
    for (int pe = 0; pe < n; pe++)
        for (int i = 0; i < count; i++) {
            source[pe * count + i] = me * 1000 + pe * 10 + i;
            dest[pe * count + i] = 9999;
        }
    shmem_team_sync(SHMEM_TEAM_WORLD);
    ST_CHECK(shmem_int64_alltoall(SHMEM_TEAM_WORLD, dest, source, count) == 0, "alltoall returned nonzero");
    for (int pe = 0; pe < n; pe++)
        for (int i = 0; i < count; i++)
            ST_CHECK(dest[pe * count + i] == pe * 1000 + me * 10 + i, "dest[%d] = %lld", pe * count + i,
                     (long long)dest[pe * count + i]);

    st_phase = "alltoall64 (active set)";
    psync_init(g_apsync, SHMEM_ALLTOALL_SYNC_SIZE);
    for (int i = 0; i < count * n; i++)
        dest[i] = 9999;
    shmem_barrier_all();
    shmem_alltoall64(dest, source, count, 0, 0, n, g_apsync);
    for (int pe = 0; pe < n; pe++)
        for (int i = 0; i < count; i++)
            ST_CHECK(dest[pe * count + i] == pe * 1000 + me * 10 + i, "dest[%d] = %lld", pe * count + i,
                     (long long)dest[pe * count + i]);
    shmem_barrier_all();
    shmem_free(dest);
    shmem_free(source);

    st_phase = "alltoalls example (team, strides 1 and 1; then 2 and 3)";
    int64_t *sdest = shmem_malloc(3 * count * n * sizeof(int64_t));
    int64_t *ssrc = shmem_malloc(3 * count * n * sizeof(int64_t));
    for (int i = 0; i < 3 * count * n; i++) {
        ssrc[i] = me * 100000 + i;
        sdest[i] = -1;
    }
    shmem_barrier_all();
    shmem_int64_alltoalls(SHMEM_TEAM_WORLD, sdest, ssrc, 1, 1, count);
    for (int pe = 0; pe < n; pe++)
        for (int i = 0; i < count; i++)
            ST_CHECK(sdest[pe * count + i] == pe * 100000 + me * count + i, "alltoalls dest[%d] = %lld",
                     pe * count + i, (long long)sdest[pe * count + i]);
    for (int i = 0; i < 3 * count * n; i++)
        sdest[i] = -1;
    shmem_barrier_all();
    /* element i of the block for PE j is source[(j * count + i) * 3] there; lands at dest[(k * count + i) * 2] */
    shmem_int64_alltoalls(SHMEM_TEAM_WORLD, sdest, ssrc, 2, 3, count);
    for (int pe = 0; pe < n; pe++)
        for (int i = 0; i < count; i++) {
            int64_t want = pe * 100000 + (int64_t)(me * count + i) * 3;
            ST_CHECK(sdest[(pe * count + i) * 2] == want && sdest[(pe * count + i) * 2 + 1] == -1,
                     "strided alltoalls dest[%d] = %lld, expected %lld", (pe * count + i) * 2,
                     (long long)sdest[(pe * count + i) * 2], (long long)want);
        }

    st_phase = "alltoalls64 (active set)";
    psync_init(g_spsync, SHMEM_ALLTOALLS_SYNC_SIZE);
    for (int i = 0; i < 3 * count * n; i++)
        sdest[i] = -1;
    shmem_barrier_all();
    shmem_alltoalls64(sdest, ssrc, 1, 1, count, 0, 0, n, g_spsync);
    for (int pe = 0; pe < n; pe++)
        for (int i = 0; i < count; i++)
            ST_CHECK(sdest[pe * count + i] == pe * 100000 + me * count + i, "alltoalls64 dest[%d] = %lld",
                     pe * count + i, (long long)sdest[pe * count + i]);
    shmem_barrier_all();
    shmem_free(sdest);
    shmem_free(ssrc);
}

/* the reduce example's data: a small generator every PE can run for every other PE */
static int value_of(int pe, int i, int n)
{
    uint32_t s = (uint32_t)pe * 2654435761u + (uint32_t)i * 40503u + 12345u;
    s ^= s >> 13;
    s *= 0x5bd1e995u;
    s ^= s >> 15;
    return (int)(s % (uint32_t)n);
}

static void reduce(int me, int n)
{
    st_phase = "reduce example";
    unsigned char *is_max = shmem_malloc(NELEMS);
    unsigned char *is_max_all = shmem_malloc(NELEMS);
    int *count = shmem_malloc(sizeof(int));
    int *total = shmem_malloc(sizeof(int));
    *count = 0;
    for (int i = 0; i < NELEMS; i++) {
        is_max[i] = value_of(me, i, n) == n - 1;
        *count += is_max[i];
    }
    shmem_team_sync(SHMEM_TEAM_WORLD);
    ST_CHECK(shmem_or_reduce(SHMEM_TEAM_WORLD, is_max_all, is_max, NELEMS) == 0, "or_reduce");
    ST_CHECK(shmem_sum_reduce(SHMEM_TEAM_WORLD, total, count, 1) == 0, "sum_reduce");
    int want_total = 0;
    for (int i = 0; i < NELEMS; i++) {
        int any = 0;
        for (int pe = 0; pe < n; pe++) {
            int m = value_of(pe, i, n) == n - 1;
            any |= m;
            want_total += m;
        }
        ST_CHECK(is_max_all[i] == any, "or_reduce[%d] = %d, expected %d", i, is_max_all[i], any);
    }
    ST_CHECK(*total == want_total, "sum_reduce = %d, expected %d", *total, want_total);

    st_phase = "sum_to_all / max_to_all (active set)";
    static long src[2], dst[2];
    src[0] = me + 1;
    src[1] = 3 * me;
    psync_init(g_rpsync, SHMEM_REDUCE_SYNC_SIZE);
    shmem_barrier_all();
    shmem_long_sum_to_all(dst, src, 2, 0, 0, n, g_pwrk, g_rpsync);
    ST_CHECK(dst[0] == (long)n * (n + 1) / 2 && dst[1] == 3L * n * (n - 1) / 2, "sum_to_all %ld %ld", dst[0],
             dst[1]);
    shmem_barrier_all();
    shmem_long_max_to_all(dst, src, 2, 0, 0, n, g_pwrk, g_rpsync);
    ST_CHECK(dst[0] == n && dst[1] == 3L * (n - 1), "max_to_all %ld %ld", dst[0], dst[1]);
    shmem_barrier_all();
    shmem_free(total);
    shmem_free(count);
    shmem_free(is_max_all);
    shmem_free(is_max);
}

int main(void)
{
    st_begin("shmem_spec_coll", 60);
    int me = shmem_my_pe(), n = shmem_n_pes();
    broadcast(me, n);
    collect(me, n);
    alltoall(me, n);
    reduce(me, n);
    return st_end();
}
