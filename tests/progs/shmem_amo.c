/*
 * shmem_amo.c — OpenSHMEM atomics from every PE on every PE, on the heap and on global variables:
 * exact totals of concurrent fetch_add/add/inc/fetch_inc for int, long, long long, unsigned,
 * int32/int64/uint32/uint64, size_t, ptrdiff_t; exactly one winner per compare_swap; bitwise
 * fetch_and/and/or/xor leaving the expected bits; fetch/set/swap for integers, float and double;
 * the C11 generic forms; and the _nbi fetching forms.
 */
#include <stdint.h>
#include "shmtest.h"

#define K 40

static long g_long;
static unsigned long long g_ull;
static int g_winners;
static double g_d;

int main(void)
{
    st_begin("shmem_amo", 90);
    int me = shmem_my_pe(), n = shmem_n_pes();
    int *h_int = shmem_calloc(4, sizeof(int));
    long long *h_ll = shmem_calloc(4, sizeof(long long));
    unsigned *h_u = shmem_calloc(4, sizeof(unsigned));
    int32_t *h_i32 = shmem_calloc(2, sizeof(int32_t));
    int64_t *h_i64 = shmem_calloc(2, sizeof(int64_t));
    uint32_t *h_u32 = shmem_calloc(2, sizeof(uint32_t));
    uint64_t *h_u64 = shmem_calloc(4, sizeof(uint64_t));
    size_t *h_sz = shmem_calloc(1, sizeof(size_t));
    ptrdiff_t *h_pd = shmem_calloc(1, sizeof(ptrdiff_t));
    float *h_f = shmem_calloc(1, sizeof(float));
    g_long = 0;
    g_ull = 0;
    g_winners = 0;
    shmem_barrier_all();

    st_phase = "concurrent adds";
    long sum = (long)n * (n + 1) / 2; /* sum of (pe + 1) */
    for (int k = 0; k < K; k++)
        for (int t = 0; t < n; t++) {
            int old = shmem_int_atomic_fetch_add(&h_int[0], me + 1, t);
            ST_CHECK(old >= 0 && old < K * sum, "fetch_add returned %d", old);
            shmem_int_atomic_add(&h_int[1], 1, t);
            shmem_int_atomic_inc(&h_int[2], t);
            (void)shmem_int_atomic_fetch_inc(&h_int[3], t);
            shmem_atomic_add(&h_ll[0], (long long)me + 1, t);        /* generic: long long */
            shmem_long_atomic_add(&g_long, me + 1, t);               /* global variable */
            shmem_atomic_fetch_add(&g_ull, 2ull, t);                 /* generic: unsigned long long, global */
            shmem_uint_atomic_add(&h_u[0], 3u, t);
            shmem_int32_atomic_add(&h_i32[0], -1, t);
            shmem_int64_atomic_fetch_add(&h_i64[0], -2, t);
            shmem_uint32_atomic_inc(&h_u32[0], t);
            shmem_uint64_atomic_fetch_inc(&h_u64[0], t);
            shmem_size_atomic_add(h_sz, 5, t);
            shmem_ptrdiff_atomic_add(h_pd, -5, t);
        }
    shmem_barrier_all();
    ST_CHECK(h_int[0] == K * sum, "int fetch_add total %d, expected %ld", h_int[0], K * sum);
    ST_CHECK(h_int[1] == K * n && h_int[2] == K * n && h_int[3] == K * n, "int add/inc/fetch_inc %d %d %d",
             h_int[1], h_int[2], h_int[3]);
    ST_CHECK(h_ll[0] == K * sum, "long long add %lld", h_ll[0]);
    ST_CHECK(g_long == K * sum, "global long add %ld", g_long);
    ST_CHECK(g_ull == 2ull * K * (unsigned long long)n, "global ull fetch_add %llu", g_ull);
    ST_CHECK(h_u[0] == 3u * K * (unsigned)n, "uint add %u", h_u[0]);
    ST_CHECK(h_i32[0] == -K * n && h_i64[0] == -2L * K * n, "int32/int64 %d %lld", h_i32[0], (long long)h_i64[0]);
    ST_CHECK(h_u32[0] == (uint32_t)(K * n) && h_u64[0] == (uint64_t)(K * n), "uint32/uint64");
    ST_CHECK(*h_sz == (size_t)(5 * K * n) && *h_pd == -5 * K * n, "size_t/ptrdiff_t %zu %td", *h_sz, *h_pd);

    shmem_barrier_all(); /* everyone checked before the words change again */
    st_phase = "compare_swap";
    int won = shmem_int_atomic_compare_swap(&h_int[0], K * (int)sum, -100 - me, 0) == K * (int)sum;
    if (won)
        shmem_int_atomic_inc(&g_winners, 0);
    long long prev = shmem_atomic_compare_swap(&h_ll[1], 0LL, (long long)me + 1, n - 1);
    ST_CHECK(prev >= 0 && prev <= n, "long long compare_swap returned %lld", prev);
    shmem_barrier_all();
    if (me == 0) {
        ST_CHECK(g_winners == 1, "%d compare_swap winners", g_winners);
        ST_CHECK(h_int[0] <= -100 && h_int[0] > -100 - n, "swapped word %d", h_int[0]);
    }

    st_phase = "bitwise";
    uint64_t bit = 1ull << (me % 64);
    for (int t = 0; t < n; t++) {
        shmem_uint64_atomic_or(&h_u64[1], bit, t);
        (void)shmem_uint64_atomic_fetch_xor(&h_u64[2], bit, t);
        shmem_atomic_xor(&h_u[1], 1u << (me % 32), t);  /* generic: unsigned int */
        shmem_atomic_xor(&h_u[1], 1u << (me % 32), t);
        shmem_uint32_atomic_or(&h_u32[1], 0xffffffffu, t);
    }
    shmem_barrier_all();
    for (int t = 0; t < n; t++)
        shmem_uint32_atomic_and(&h_u32[1], ~(1u << (me % 32)), t);
    shmem_barrier_all();
    uint64_t all = 0;
    for (int pe = 0; pe < n; pe++)
        all |= 1ull << (pe % 64);
    uint64_t xr = 0;
    for (int pe = 0; pe < n; pe++)
        xr ^= 1ull << (pe % 64);
    ST_CHECK(h_u64[1] == all, "or: %llx, expected %llx", (unsigned long long)h_u64[1], (unsigned long long)all);
    ST_CHECK(h_u64[2] == xr, "xor: %llx, expected %llx", (unsigned long long)h_u64[2], (unsigned long long)xr);
    ST_CHECK(h_u[1] == 0, "xor twice: %x", h_u[1]);
    uint32_t cleared = 0xffffffffu;
    for (int pe = 0; pe < n; pe++)
        cleared &= ~(1u << (pe % 32));
    ST_CHECK(h_u32[1] == cleared, "and: %x, expected %x", h_u32[1], cleared);
    shmem_barrier_all(); /* everyone checked before the words change again */
    uint64_t f = shmem_uint64_atomic_fetch_and(&h_u64[1], 0, (me + 1) % n);
    ST_CHECK((f & bit) || f == 0, "fetch_and returned %llx", (unsigned long long)f);
    shmem_barrier_all();

    st_phase = "fetch/set/swap";
    int to = (me + 1) % n, from = (me + n - 1) % n;
    shmem_double_atomic_set(&g_d, 2.5 * me, to);
    shmem_float_atomic_set(h_f, 0.5f * me, to);
    shmem_long_atomic_set(&g_long, 7L * me, to);
    shmem_barrier_all();
    ST_CHECK(g_d == 2.5 * from && *h_f == 0.5f * from && g_long == 7L * from, "set: %g %g %ld", g_d, *h_f, g_long);
    ST_CHECK(shmem_atomic_fetch(&g_d, to) == 2.5 * me, "double fetch");
    ST_CHECK(shmem_float_atomic_fetch(h_f, to) == 0.5f * me, "float fetch");
    ST_CHECK(shmem_atomic_fetch(&g_long, to) == 7L * me, "generic long fetch");
    shmem_barrier_all();
    double od = shmem_double_atomic_swap(&g_d, -1.0, to);
    float of = shmem_atomic_swap(h_f, -2.0f, to);   /* generic: float */
    long ol = shmem_atomic_swap(&g_long, -3L, to);
    ST_CHECK(od == 2.5 * me && of == 0.5f * me && ol == 7L * me, "swap returned %g %g %ld", od, of, ol);
    shmem_barrier_all();
    ST_CHECK(g_d == -1.0 && *h_f == -2.0f && g_long == -3L, "after swap: %g %g %ld", g_d, *h_f, g_long);

    st_phase = "nbi fetching forms";
    int fi = -1;
    shmem_barrier_all();
    shmem_int_atomic_fetch_inc_nbi(&fi, &h_int[2], to);
    long long fll = -1;
    shmem_longlong_atomic_fetch_add_nbi(&fll, &h_ll[0], 0, to);
    shmem_quiet();
    ST_CHECK(fi >= K * n && fi < K * n + n, "fetch_inc_nbi returned %d", fi);
    ST_CHECK(fll == K * sum, "fetch_add_nbi of 0 returned %lld", fll);
    shmem_barrier_all();
    shmem_free(h_int);
    shmem_free(h_ll);
    shmem_free(h_u);
    shmem_free(h_i32);
    shmem_free(h_i64);
    shmem_free(h_u32);
    shmem_free(h_u64);
    shmem_free(h_sz);
    shmem_free(h_pd);
    shmem_free(h_f);
    return st_end();
}
