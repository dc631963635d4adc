/*
 * shmem_sync.c — OpenSHMEM point-to-point synchronisation and locks: wait_until with every
 * comparison (short, int, long, unsigned long long words; heap and globals), wait_until_all /
 * _any / _some and their _vector forms with a status mask, test / test_all / test_any /
 * test_some, put_signal (set and add, heap and globals) with signal_fetch and signal_wait_until,
 * and shmem_set_lock / test_lock / clear_lock protecting a non-atomic read-modify-write of a
 * counter on PE 0 (exact total).
 */
#include <stdint.h>
#include "shmtest.h"

#define ROUNDS 6

static short g_short;
static uint64_t g_sig;
static long g_lock;
static long g_counter;
static int g_data[256];

int main(void)
{
    st_begin("shmem_sync", 90);
    int me = shmem_my_pe(), n = shmem_n_pes(), to = (me + 1) % n, from = (me + n - 1) % n;
    int *hi = shmem_calloc(8, sizeof(int));
    long *ack = shmem_calloc(1, sizeof(long));
    unsigned long long *hu = shmem_calloc(1, sizeof(unsigned long long));
    uint64_t *hsig = shmem_calloc(2, sizeof(uint64_t));
    long *hdata = shmem_calloc(512, sizeof(long));
    g_short = 0;
    g_sig = 0;
    shmem_barrier_all();

    st_phase = "wait_until, each comparison";
    /* the predecessor sets the word to values that alone satisfy each comparison */
    int cmps[ROUNDS] = {SHMEM_CMP_EQ, SHMEM_CMP_NE, SHMEM_CMP_GT, SHMEM_CMP_GE, SHMEM_CMP_LT, SHMEM_CMP_LE};
    int set_to[ROUNDS] = {5, 8, 10, 11, -1, -7};
    int cmp_to[ROUNDS] = {5, 5, 9, 11, 0, -5};
    for (int k = 0; k < ROUNDS; k++) {
        shmem_int_p(&hi[0], set_to[k], to);
        shmem_short_p(&g_short, (short)set_to[k], to);
        shmem_quiet();
        shmem_int_wait_until(&hi[0], cmps[k], cmp_to[k]);
        shmem_wait_until(&g_short, cmps[k], (short)cmp_to[k]); /* generic: short, global */
        ST_CHECK(hi[0] == set_to[k] && g_short == set_to[k], "round %d: %d %d", k, hi[0], g_short);
        ST_CHECK(shmem_int_test(&hi[0], cmps[k], cmp_to[k]), "test false after wait_until (round %d)", k);
        shmem_long_atomic_inc(ack, from);
        shmem_long_wait_until(ack, SHMEM_CMP_GE, k + 1);
    }
    /* unsigned comparison: a large value is greater, not negative */
    shmem_ulonglong_p(hu, 1ull << 63, to);
    shmem_ulonglong_wait_until(hu, SHMEM_CMP_GT, 1ull);
    shmem_barrier_all();

    st_phase = "wait_until_all/any/some";
    /* hi[1..6] on the successor: the predecessor sets 3 of them to 1, masks none */
    int status[6] = {0, 0, 0, 0, 0, 0};
    int ones[3] = {1, 1, 1};
    shmem_int_put(&hi[2], ones, 1, to);
    shmem_int_put(&hi[4], ones, 1, to);
    shmem_int_put(&hi[5], ones, 1, to);
    shmem_quiet();
    size_t any = shmem_int_wait_until_any(&hi[1], 6, status, SHMEM_CMP_EQ, 1);
    ST_CHECK(any == 1 || any == 3 || any == 4, "wait_until_any returned %zu", any);
    size_t idx[6];
    shmem_int_wait_until(&hi[5], SHMEM_CMP_EQ, 1);
    shmem_int_wait_until(&hi[4], SHMEM_CMP_EQ, 1);
    shmem_int_wait_until(&hi[2], SHMEM_CMP_EQ, 1);
    size_t some = shmem_int_wait_until_some(&hi[1], 6, idx, status, SHMEM_CMP_EQ, 1);
    ST_CHECK(some == 3 && idx[0] == 1 && idx[1] == 3 && idx[2] == 4, "wait_until_some: %zu", some);
    int mask[6] = {1, 0, 1, 1, 1, 1}; /* only hi[2] counts */
    shmem_int_wait_until_all(&hi[1], 6, mask, SHMEM_CMP_EQ, 1);
    ST_CHECK(shmem_int_test_all(&hi[1], 6, mask, SHMEM_CMP_EQ, 1) == 1, "test_all with mask");
    ST_CHECK(shmem_int_test_all(&hi[1], 6, status, SHMEM_CMP_EQ, 1) == 0, "test_all without mask");
    ST_CHECK(shmem_int_test_any(&hi[1], 6, status, SHMEM_CMP_EQ, 1) < 6, "test_any");
    int allmask[6] = {1, 1, 1, 1, 1, 1};
    ST_CHECK(shmem_int_test_any(&hi[1], 6, allmask, SHMEM_CMP_EQ, 1) == SIZE_MAX, "test_any, all masked");
    ST_CHECK(shmem_int_test_some(&hi[1], 6, idx, status, SHMEM_CMP_EQ, 0) == 3, "test_some zeros");
    int want[6] = {0, 1, 0, 1, 1, 0};
    shmem_int_wait_until_all_vector(&hi[1], 6, status, SHMEM_CMP_EQ, want);
    size_t v = shmem_int_wait_until_any_vector(&hi[1], 6, status, SHMEM_CMP_EQ, want);
    ST_CHECK(v < 6 && hi[1 + v] == want[v], "wait_until_any_vector returned %zu", v);
    size_t sv = shmem_int_wait_until_some_vector(&hi[1], 6, idx, status, SHMEM_CMP_GE, want);
    ST_CHECK(sv == 6, "wait_until_some_vector >= : %zu of 6", sv);
    ST_CHECK(shmem_int_test_some(&hi[1], 6, idx, status, SHMEM_CMP_GT, 0) == 3, "test_some > 0");
    shmem_barrier_all();

    st_phase = "put_signal";
    for (int r = 1; r <= 4; r++) {
        long src[64];
        for (int i = 0; i < 64; i++)
            src[i] = r * 1000 + me * 100 + i;
        /* heap data, heap signal (add); global data, global signal (set) */
        shmem_long_put_signal(hdata + 64 * (r % 4), src, 64, &hsig[0], 1, SHMEM_SIGNAL_ADD, to);
        shmem_putmem_signal_nbi(g_data, src, 64 * sizeof(int), &g_sig, (uint64_t)r, SHMEM_SIGNAL_SET, to);
        uint64_t got = shmem_signal_wait_until(&hsig[0], SHMEM_CMP_GE, (uint64_t)r);
        ST_CHECK(got >= (uint64_t)r, "signal %llu", (unsigned long long)got);
        for (int i = 0; i < 64; i++)
            ST_CHECK(hdata[64 * (r % 4) + i] == r * 1000 + from * 100 + i, "round %d: data %d before its signal", r, i);
        shmem_signal_wait_until(&g_sig, SHMEM_CMP_EQ, (uint64_t)r);
        long *gl = (long *)(void *)g_data;
        for (int i = 0; i < 32; i++)
            ST_CHECK(gl[i] == r * 1000 + from * 100 + i, "round %d: global data %d before its signal", r, i);
        ST_CHECK(shmem_signal_fetch(&g_sig) == (uint64_t)r, "signal_fetch");
        shmem_quiet();
        shmem_barrier_all();
    }

    st_phase = "locks";
    g_lock = 0;
    g_counter = 0;
    shmem_barrier_all();
    const int M = 15;
    for (int i = 0; i < M; i++) {
        if (i % 3 == 0) {
            while (shmem_test_lock(&g_lock))
                ;
        } else {
            shmem_set_lock(&g_lock);
        }
        /* not atomic: only the lock keeps the total exact */
        long c = shmem_long_g(&g_counter, 0);
        shmem_long_p(&g_counter, c + 1, 0);
        shmem_clear_lock(&g_lock);
    }
    shmem_barrier_all();
    if (me == 0)
        ST_CHECK(g_counter == (long)M * n, "counter under the lock: %ld, expected %ld", g_counter, (long)M * n);
    shmem_free(hi);
    shmem_free(ack);
    shmem_free(hu);
    shmem_free(hsig);
    shmem_free(hdata);
    return st_end();
}
