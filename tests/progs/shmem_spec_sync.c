/*
 * shmem_spec_sync.c — the scenarios of the OpenSHMEM 1.5 specification's synchronisation
 * examples: shmem_barrier_all, shmem_barrier (active set of the even PEs, with pSync),
 * shmem_sync_all, shmem_lock (a counter on PE 0 under the lock), shmem_wait (wait_until on a
 * word set by a neighbour), shmem_test (a user wait loop), shmem_test_any, shmem_wait_until_all,
 * the all-to-all sums with shmem_wait_until_any / _any_vector / _some and shmem_test_some, and
 * the shmem_wait_until_some "wait for all" loop. Every index a routine returns is counted: each
 * must come back exactly once (the 1.5 rule for the _any/_some families), and the sums are exact.
 */
#include <stdint.h>
#include "shmtest.h"

#define N 100
#define LOCK_ROUNDS 20

static int g_x;
static long g_psync[SHMEM_BARRIER_SYNC_SIZE];
static long g_lock;
static int g_count;
static int g_ivar;
static long g_tvar;

/* barrier_all, barrier (even PEs), sync_all: a put to the neighbour is visible after it */
static void barriers(int me, int n)
{
    st_phase = "barrier_all example";
    g_x = 1010;
    shmem_barrier_all();
    shmem_int_p(&g_x, 4 + me, (me + 1) % n);
    shmem_barrier_all();
    ST_CHECK(g_x == 4 + (me + n - 1) % n, "x = %d", g_x);

    st_phase = "barrier example (active set)";
    for (int i = 0; i < SHMEM_BARRIER_SYNC_SIZE; i++)
        g_psync[i] = SHMEM_SYNC_VALUE;
    g_x = 10101;
    shmem_barrier_all();
    int evens = n / 2 + n % 2;
    if (me % 2 == 0) {
        shmem_int_p(&g_x, 40 + me, (me + 2) % (2 * evens) % n);
        shmem_barrier(0, 1, evens, g_psync);
        int from = (me + 2 * evens - 2) % (2 * evens);
        ST_CHECK(g_x == 40 + from, "even PE: x = %d, expected %d", g_x, 40 + from);
    }
    shmem_barrier_all();
    if (me % 2)
        ST_CHECK(g_x == 10101, "odd PE: x = %d", g_x);

    st_phase = "sync_all example";
    shmem_barrier_all();
    shmem_int_p(&g_x, 7 * me, (me + 1) % n);
    shmem_quiet();
    shmem_sync_all();
    ST_CHECK(g_x == 7 * ((me + n - 1) % n), "x = %d", g_x);
    shmem_barrier_all();
}

/* lock example: a read-modify-write of a counter on PE 0 under the lock; set_lock and test_lock */
static void lock(int me, int n)
{
    st_phase = "lock example";
    for (int r = 0; r < LOCK_ROUNDS; r++) {
        if (r % 2)
            shmem_set_lock(&g_lock);
        else
            while (shmem_test_lock(&g_lock))
                ;
        int val = shmem_int_g(&g_count, 0);
        shmem_int_p(&g_count, val + 1, 0);
        shmem_clear_lock(&g_lock);
    }
    shmem_barrier_all();
    if (me == 0)
        ST_CHECK(g_count == LOCK_ROUNDS * n, "count = %d, expected %d", g_count, LOCK_ROUNDS * n);
}

/* wait example (wait_until LT 0) and the test example (a loop on shmem_test) */
static void wait_test(int me, int n)
{
    st_phase = "wait example";
    int from = (me + n - 1) % n;
    shmem_int_p(&g_ivar, -(me + 1), (me + 1) % n);
    shmem_int_wait_until(&g_ivar, SHMEM_CMP_LT, 0);
    ST_CHECK(g_ivar == -(from + 1), "ivar = %d", g_ivar);

    st_phase = "test example";
    shmem_long_p(&g_tvar, 1000 + me, (me + 1) % n);
    while (!shmem_long_test(&g_tvar, SHMEM_CMP_EQ, 1000 + from))
        ; /* the user's wait loop of the example */
    ST_CHECK(g_tvar == 1000 + from, "tvar = %ld", g_tvar);
    shmem_barrier_all();
}

/* every PE sets its flag on every PE; the status-masked _any loop must return each index once */
static void any_families(int me, int n)
{
    st_phase = "test_any example";
    int *flags = shmem_calloc(n, sizeof(int));
    int *status = calloc(n, sizeof(int));
    int *seen = calloc(n, sizeof(int));
    ST_CHECK(flags && status && seen, "allocation");
    shmem_barrier_all();
    for (int i = 0; i < n; i++)
        shmem_atomic_set(&flags[me], 1, i);
    int ncompleted = 0;
    while (ncompleted < n) {
        size_t idx = shmem_test_any(flags, n, status, SHMEM_CMP_EQ, 1);
        if (idx == SIZE_MAX)
            continue;
        ST_CHECK(idx < (size_t)n && !status[idx], "test_any returned %zu (masked or out of range)", idx);
        if (idx >= (size_t)n)
            break;
        seen[idx]++;
        status[idx] = 1;
        ncompleted++;
    }
    for (int i = 0; i < n; i++)
        ST_CHECK(seen[i] == 1, "index %d returned %d times", i, seen[i]);
    ST_CHECK(shmem_test_any(flags, n, status, SHMEM_CMP_EQ, 1) == SIZE_MAX, "test_any with all masked");

    st_phase = "wait_until_all example";
    shmem_barrier_all();
    int *flags2 = shmem_calloc(n, sizeof(int));
    shmem_barrier_all();
    for (int i = 0; i < n; i++)
        shmem_atomic_set(&flags2[me], 1, i);
    shmem_wait_until_all(flags2, n, NULL, SHMEM_CMP_EQ, 1);
    for (int i = 0; i < n; i++)
        ST_CHECK(flags2[i] == 1, "flags[%d] = %d after wait_until_all", i, flags2[i]);

    st_phase = "wait_until_any_vector example";
    shmem_barrier_all();
    int *ivars = shmem_calloc(n, sizeof(int));
    int *cmp_values = malloc(n * sizeof(int));
    memset(status, 0, n * sizeof(int));
    shmem_barrier_all();
    for (int i = 0; i < n; i++) { /* odd PEs put 2, even ones 1 */
        shmem_atomic_set(&ivars[me], me % 2 + 1, i);
        cmp_values[i] = i % 2 + 1;
    }
    int total = 0;
    memset(seen, 0, n * sizeof(int));
    for (int i = 0; i < n; i++) {
        size_t idx = shmem_wait_until_any_vector(ivars, n, status, SHMEM_CMP_EQ, cmp_values);
        ST_CHECK(idx < (size_t)n && !status[idx], "wait_until_any_vector returned %zu", idx);
        if (idx >= (size_t)n)
            break;
        seen[idx]++;
        status[idx] = 1;
        total += ivars[idx];
    }
    ST_CHECK(total == n + n / 2, "sum %d, expected %d", total, n + n / 2);
    shmem_barrier_all();
    free(cmp_values);
    free(seen);
    free(status);
    shmem_free(ivars);
    shmem_free(flags2);
    shmem_free(flags);
}

/* the all-to-all sums: data with put_nbi, fence, a flag; the receiver sums each PE's block when
 * its flag is seen (by wait_until_any, wait_until_some or test_some), each block exactly once */
static void all2all_sum(int me, int n, int how)
{
    static const char *names[] = {"wait_until_any all2all sum", "wait_until_some all2all sum",
                                  "test_some all2all sum"};
    st_phase = names[how];
    int *my_data = malloc(N * sizeof(int));
    int *all_data = shmem_malloc(N * n * sizeof(int));
    int *flags = shmem_calloc(n, sizeof(int));
    int *status = calloc(n, sizeof(int));
    size_t *indices = calloc(n, sizeof(size_t));
    ST_CHECK(my_data && all_data && flags && status && indices, "allocation");
    for (int i = 0; i < N; i++)
        my_data[i] = me * N + i;
    shmem_barrier_all();
    for (int i = 0; i < n; i++)
        shmem_put_nbi(&all_data[me * N], my_data, N, i);
    shmem_fence();
    for (int i = 0; i < n; i++)
        shmem_atomic_set(&flags[me], 1, i);
    long total = 0;
    int done = 0;
    while (done < n) { /* bounded by the test's alarm */
        size_t k = 0;
        if (how == 0) {
            indices[0] = shmem_wait_until_any(flags, n, status, SHMEM_CMP_NE, 0);
            k = 1;
        } else if (how == 1) {
            k = shmem_wait_until_some(flags, n, indices, status, SHMEM_CMP_NE, 0);
            ST_CHECK(k >= 1, "wait_until_some returned 0 with %d left", n - done);
        } else {
            k = shmem_test_some(flags, n, indices, status, SHMEM_CMP_NE, 0);
        }
        for (size_t j = 0; j < k; j++) {
            size_t idx = indices[j];
            ST_CHECK(idx < (size_t)n && !status[idx], "returned index %zu (masked or out of range)", idx);
            if (idx >= (size_t)n || status[idx])
                continue;
            for (int x = 0; x < N; x++)
                total += all_data[idx * N + x];
            status[idx] = 1;
            done++;
        }
        if (how == 1 && k == 0)
            break;
    }
    long m = (long)N * n - 1;
    ST_CHECK(done == n && total == m * (m + 1) / 2, "%d blocks, sum %ld, expected %ld", done, total,
             m * (m + 1) / 2);
    ST_CHECK(shmem_wait_until_some(flags, n, indices, status, SHMEM_CMP_NE, 0) == 0,
             "wait_until_some with everything masked must return 0");
    shmem_barrier_all();
    free(indices);
    free(status);
    free(my_data);
    shmem_free(flags);
    shmem_free(all_data);
}

/* wait_until_some example: PE 0 waits until every other PE has put its number */
static void user_wait_all(int me, int n)
{
    st_phase = "wait_until_some example (user_wait_all)";
    int *ivars = shmem_calloc(n, sizeof(int));
    size_t *indices = malloc(n * sizeof(size_t));
    int *status = calloc(n, sizeof(int));
    shmem_barrier_all();
    if (me == 0) {
        status[0] = 1; /* PE 0 puts nothing */
        size_t got = 0;
        while (got < (size_t)n - 1) {
            size_t k = shmem_wait_until_some(ivars, n, indices, status, SHMEM_CMP_NE, 0);
            for (size_t j = 0; j < k; j++)
                status[indices[j]] = 1;
            got += k;
        }
        ST_CHECK(got == (size_t)n - 1, "%zu PEs seen", got);
        for (int i = 1; i < n; i++)
            ST_CHECK(ivars[i] == i, "ivars[%d] = %d", i, ivars[i]);
    } else {
        shmem_int_p(&ivars[me], me, 0);
    }
    shmem_barrier_all();
    free(status);
    free(indices);
    shmem_free(ivars);
}

int main(void)
{
    st_begin("shmem_spec_sync", 60);
    int me = shmem_my_pe(), n = shmem_n_pes();
    barriers(me, n);
    lock(me, n);
    wait_test(me, n);
    any_families(me, n);
    for (int how = 0; how < 3; how++)
        all2all_sum(me, n, how);
    user_wait_all(me, n);
    return st_end();
}
