/*
 * shmem_ctx.c — OpenSHMEM 1.5 contexts (section 9.5), checked on every PE: creation with each
 * option, shmem_ctx_get_team, the RMA families on a context (mem, SIZE, typed, _nbi, p/g,
 * iput/iget, put-with-signal; through the C11 generic names with a context argument), every
 * atomic family on a context with exact results, fetching _nbi atomics many in flight at once,
 * a context's quiet completing its own operations (checked by the target), contexts of a split
 * team (team-relative PE numbers), zero-length operations with NULL pointers, SHMEM_CTX_INVALID
 * doing nothing, and, when SHMEM_THREAD_MULTIPLE is granted, threads each on a private context
 * and all together on the default one. Objects are on the symmetric heap (mapped between PEs of
 * a host) and global variables (the data segment: through WaitIO even on one host), so both the
 * direct and the tracked paths are taken. Prints "shmem_ctx ok: N PEs".
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include "shmtest.h"

#define NB 64     /* fetching _nbi atomics in flight per context */
#define NTHR 3    /* threads */
#define TOPS 200  /* operations per thread */

static long g_buf[16];              /* data segment: remote access goes through WaitIO */
static long g_counter, g_bits;
static uint64_t g_sig;
static long g_thr[NTHR][TOPS];
static long g_thr_counter;
static long g_flag;
static long g_big[2048];          /* 16 KiB: a get of it takes a round trip through frames */

static int me, npes, right, left;

/* The value PE `from` writes at index i of family `fam`. */
static long val(int from, int fam, int i) { return 1000000L * (fam + 1) + 1000L * from + i; }

/* ---- creation and queries ----------------------------------------------------------------- */

static void test_create(void)
{
    st_phase = "create";
    long opts[] = {0, SHMEM_CTX_SERIALIZED, SHMEM_CTX_PRIVATE, SHMEM_CTX_NOSTORE,
                   SHMEM_CTX_SERIALIZED | SHMEM_CTX_NOSTORE, SHMEM_CTX_PRIVATE | SHMEM_CTX_NOSTORE};
    for (size_t i = 0; i < sizeof opts / sizeof *opts; i++) {
        shmem_ctx_t c = SHMEM_CTX_INVALID;
        ST_CHECK(shmem_ctx_create(opts[i], &c) == 0 && c != SHMEM_CTX_INVALID, "create options %ld", opts[i]);
        shmem_team_t t = SHMEM_TEAM_INVALID;
        ST_CHECK(shmem_ctx_get_team(c, &t) == 0 && t == SHMEM_TEAM_WORLD, "team of options %ld", opts[i]);
        shmem_ctx_destroy(c);
    }
    shmem_ctx_t bad = SHMEM_CTX_DEFAULT;
    ST_CHECK(shmem_ctx_create(1L << 20, &bad) != 0 && bad == SHMEM_CTX_INVALID, "unknown option accepted");
    shmem_team_t t = SHMEM_TEAM_WORLD;
    ST_CHECK(shmem_ctx_get_team(SHMEM_CTX_INVALID, &t) != 0 && t == SHMEM_TEAM_INVALID, "invalid ctx's team");
    ST_CHECK(shmem_ctx_get_team(SHMEM_CTX_DEFAULT, &t) == 0 && t == SHMEM_TEAM_WORLD, "default ctx's team");
    ST_CHECK(shmem_team_create_ctx(SHMEM_TEAM_INVALID, 0, &bad) != 0 && bad == SHMEM_CTX_INVALID,
             "a context of SHMEM_TEAM_INVALID");
}

/* ---- RMA on a context ------------------------------------------------------------------------ */

/* Every RMA form on ctx from this PE to `right`, into heap (h) and global (g_buf) targets; the
 * receiver checks after a barrier. */
static void test_rma(shmem_ctx_t ctx, long *h, const char *what)
{
    st_phase = what;
    long src[16];
    for (int i = 0; i < 16; i++)
        src[i] = val(me, 0, i);
    memset(h, 0, 64 * sizeof(long));
    memset(g_buf, 0, sizeof g_buf);
    shmem_barrier_all();
    shmem_ctx_putmem(ctx, h, src, 4 * sizeof(long), right);                /* h[0..3] */
    shmem_ctx_put64(ctx, h + 4, src + 4, 2, right);                        /* h[4..5] */
    shmem_ctx_put32(ctx, h + 6, src + 6, 4, right);                        /* h[6..7] as 32-bit halves */
    shmem_ctx_put128(ctx, h + 8, src + 8, 1, right);                       /* h[8..9] */
    shmem_put(ctx, h + 10, src + 10, 2, right);                            /* generic: long */
    shmem_put_nbi(ctx, h + 12, src + 12, 2, right);
    shmem_ctx_long_p(ctx, h + 14, src[14], right);
    shmem_p(ctx, h + 15, src[15], right);
    shmem_iput(ctx, h + 16, src, 2, 1, 8, right);                          /* h[16,18,...,30] = src[0..7] */
    shmem_ctx_putmem_nbi(ctx, g_buf, src, 8 * sizeof(long), right);       /* global: through WaitIO */
    shmem_ctx_long_put(ctx, g_buf + 8, src + 8, 4, right);
    shmem_ctx_iput64(ctx, g_buf + 12, src + 12, 1, 1, 4, right);
    shmem_ctx_quiet(ctx);
    shmem_barrier_all();
    for (int i = 0; i < 16; i++)
        ST_CHECK(h[i] == val(left, 0, i), "%s: heap[%d] = %ld, want %ld", what, i, h[i], val(left, 0, i));
    for (int i = 0; i < 8; i++)
        ST_CHECK(h[16 + 2 * i] == val(left, 0, i), "%s: iput heap[%d] = %ld", what, 16 + 2 * i, h[16 + 2 * i]);
    for (int i = 0; i < 16; i++)
        ST_CHECK(g_buf[i] == val(left, 0, i), "%s: global[%d] = %ld, want %ld", what, i, g_buf[i], val(left, 0, i));

    /* gets from `right` of what it received from me (its h and g_buf hold val(me, 0, i)) */
    long dst[16] = {0}, x[8] = {0};
    shmem_ctx_getmem(ctx, dst, h, 2 * sizeof(long), right);
    shmem_ctx_get64(ctx, dst + 2, h + 2, 2, right);
    shmem_get(ctx, dst + 4, h + 4, 2, right);
    shmem_get_nbi(ctx, dst + 6, g_buf + 6, 2, right);
    shmem_ctx_getmem_nbi(ctx, dst + 8, g_buf + 8, 4 * sizeof(long), right);
    dst[12] = shmem_ctx_long_g(ctx, g_buf + 12, right);
    dst[13] = shmem_g(ctx, h + 13, right);
    shmem_ctx_long_iget(ctx, x, h + 16, 1, 2, 8, right);
    shmem_ctx_quiet(ctx); /* completes the _nbi gets */
    for (int i = 0; i < 14; i++)
        ST_CHECK(dst[i] == val(me, 0, i), "%s: get [%d] = %ld, want %ld", what, i, dst[i], val(me, 0, i));
    for (int i = 0; i < 8; i++)
        ST_CHECK(x[i] == val(me, 0, i), "%s: iget [%d] = %ld", what, i, x[i]);
    shmem_barrier_all();
}

/* put-with-signal on a context: heap and global data, set and add, mem/SIZE/typed/generic */
static void test_signal(shmem_ctx_t ctx, long *h, uint64_t *hsig, const char *what)
{
    st_phase = what;
    long src[8];
    for (int i = 0; i < 8; i++)
        src[i] = val(me, 1, i);
    *hsig = 0;
    g_sig = 0;
    shmem_barrier_all();
    shmem_ctx_putmem_signal(ctx, h, src, 2 * sizeof(long), hsig, 1, SHMEM_SIGNAL_ADD, right);
    shmem_ctx_put64_signal(ctx, h + 2, src + 2, 2, hsig, 10, SHMEM_SIGNAL_ADD, right);
    shmem_put_signal_nbi(ctx, h + 4, src + 4, 2, hsig, 100, SHMEM_SIGNAL_ADD, right);
    shmem_ctx_long_put_signal(ctx, g_buf, src, 4, &g_sig, 7, SHMEM_SIGNAL_SET, right);
    shmem_ctx_fence(ctx); /* the set before the add */
    shmem_ctx_put32_signal_nbi(ctx, g_buf + 4, src + 4, 4, &g_sig, 1000, SHMEM_SIGNAL_ADD, right);
    shmem_ctx_quiet(ctx);
    shmem_uint64_wait_until(hsig, SHMEM_CMP_EQ, 111);
    shmem_uint64_wait_until(&g_sig, SHMEM_CMP_EQ, 1007);
    for (int i = 0; i < 6; i++)
        ST_CHECK(h[i] == val(left, 1, i), "%s: heap[%d] = %ld", what, i, h[i]);
    for (int i = 0; i < 6; i++)
        ST_CHECK(g_buf[i] == val(left, 1, i), "%s: global[%d] = %ld", what, i, g_buf[i]);
    shmem_barrier_all();
}

/* ---- atomics on a context ------------------------------------------------------------------- */

static void test_amo(shmem_ctx_t ctx, long *hc, const char *what)
{
    st_phase = what;
    *hc = 0;
    g_counter = 0;
    g_bits = 0;
    shmem_barrier_all();
    /* additions on PE 0: heap and global, every adding form; exact totals */
    shmem_ctx_long_atomic_add(ctx, hc, 3, 0);
    shmem_atomic_inc(ctx, hc, 0);
    (void)shmem_ctx_long_atomic_fetch_add(ctx, &g_counter, 5, 0);
    (void)shmem_atomic_fetch_inc(ctx, &g_counter, 0);
    shmem_ctx_long_atomic_add(ctx, &g_counter, 10, 0);
    shmem_ctx_int64_atomic_or(ctx, &g_bits, 1L << me, 0);
    shmem_ctx_quiet(ctx);
    shmem_barrier_all();
    if (me == 0) {
        ST_CHECK(*hc == 4L * npes, "%s: heap counter %ld, want %ld", what, *hc, 4L * npes);
        ST_CHECK(g_counter == 16L * npes, "%s: global counter %ld, want %ld", what, g_counter, 16L * npes);
        ST_CHECK(g_bits == (1L << npes) - 1, "%s: or bits %#lx", what, g_bits);
    }
    shmem_barrier_all();
    /* fetch, set, swap, compare_swap, and/xor on this PE's own word on `right` (global: frames) */
    g_counter = 0;
    shmem_barrier_all();
    shmem_ctx_long_atomic_set(ctx, &g_counter, 40 + me, right);
    shmem_ctx_quiet(ctx);
    ST_CHECK(shmem_ctx_long_atomic_fetch(ctx, &g_counter, right) == 40 + me, "%s: fetch after set", what);
    ST_CHECK(shmem_atomic_swap(ctx, &g_counter, 50L + me, right) == 40 + me, "%s: swap", what);
    ST_CHECK(shmem_atomic_compare_swap(ctx, &g_counter, 0L, 60L, right) == 50 + me, "%s: failing cswap", what);
    ST_CHECK(shmem_ctx_long_atomic_compare_swap(ctx, &g_counter, 50L + me, 0xff0L, right) == 50 + me,
             "%s: cswap", what);
    ST_CHECK(shmem_ctx_int64_atomic_fetch_and(ctx, &g_counter, 0x0f0L, right) == 0xff0L, "%s: fetch_and", what);
    ST_CHECK(shmem_ctx_int64_atomic_fetch_xor(ctx, &g_counter, 0x00fL, right) == 0x0f0L, "%s: fetch_xor", what);
    ST_CHECK(shmem_atomic_fetch_or(ctx, &g_counter, 0x100L, right) == 0x0ffL, "%s: fetch_or", what);
    shmem_ctx_int64_atomic_and(ctx, &g_counter, 0x1f0L, right);
    shmem_ctx_int64_atomic_xor(ctx, &g_counter, 0x001L, right);
    shmem_ctx_quiet(ctx);
    ST_CHECK(shmem_ctx_long_atomic_fetch(ctx, &g_counter, right) == 0x1f1L, "%s: and/xor", what);
    /* floating point: set, fetch, swap on a double in the heap */
    double *hd = (double *)(void *)(hc + 1);
    shmem_ctx_double_atomic_set(ctx, hd, 1.5 + me, right);
    shmem_ctx_quiet(ctx);
    ST_CHECK(shmem_atomic_swap(ctx, hd, 2.25, right) == 1.5 + me, "%s: double swap", what);
    ST_CHECK(shmem_ctx_double_atomic_fetch(ctx, hd, right) == 2.25, "%s: double fetch", what);
    shmem_barrier_all();
}

/* Many fetching _nbi atomics in flight on one context: every value distinct, the total exact. */
static void test_amo_nbi(shmem_ctx_t ctx, long *hc, const char *what)
{
    st_phase = what;
    static long fetched[2 * NB];
    static long sum, total;
    g_counter = 0;
    *hc = 0;
    shmem_barrier_all();
    for (int k = 0; k < NB; k++) {
        shmem_ctx_long_atomic_fetch_add_nbi(ctx, &fetched[k], &g_counter, 1, 0);     /* global: requests */
        shmem_atomic_fetch_inc_nbi(ctx, &fetched[NB + k], hc, 0);                   /* heap: direct on a host */
    }
    shmem_ctx_quiet(ctx);
    sum = 0;
    for (int k = 0; k < 2 * NB; k++)
        sum += fetched[k];
    long n = (long)NB * npes;
    for (int k = 0; k < 2 * NB; k++) /* in range, and (with the exact total) each value once */
        ST_CHECK(fetched[k] >= 0 && fetched[k] < n, "%s: fetched value %ld out of range", what, fetched[k]);
    for (int k = 0; k < NB; k++)
        for (int j = 0; j < k; j++)
            ST_CHECK(fetched[k] != fetched[j] && fetched[NB + k] != fetched[NB + j],
                     "%s: a value fetched twice (%d, %d)", what, j, k);
    shmem_long_sum_reduce(SHMEM_TEAM_WORLD, &total, &sum, 1);
    ST_CHECK(total == n * (n - 1), "%s: sum of the fetched values %ld, want %ld", what, total, n * (n - 1));
    /* the other fetching _nbi forms, checked one by one */
    long f[8] = {0};
    shmem_barrier_all();
    g_bits = 0;
    shmem_barrier_all();
    shmem_ctx_long_atomic_swap_nbi(ctx, &f[0], &g_bits, 0x30L, right);
    shmem_ctx_quiet(ctx);
    shmem_ctx_long_atomic_compare_swap_nbi(ctx, &f[1], &g_bits, 0x30L, 0x3cL, right);
    shmem_ctx_quiet(ctx);
    shmem_ctx_int64_atomic_fetch_and_nbi(ctx, &f[2], &g_bits, 0x0cL, right);
    shmem_ctx_quiet(ctx);
    shmem_atomic_fetch_or_nbi(ctx, &f[3], &g_bits, 0x01L, right);
    shmem_ctx_quiet(ctx);
    shmem_ctx_int64_atomic_fetch_xor_nbi(ctx, &f[4], &g_bits, 0x0fL, right);
    shmem_ctx_quiet(ctx);
    shmem_ctx_long_atomic_fetch_nbi(ctx, &f[5], &g_bits, right);
    shmem_ctx_quiet(ctx);
    shmem_ctx_long_atomic_fetch_add_nbi(ctx, &f[6], &g_bits, 5, right);
    shmem_ctx_quiet(ctx);
    long want[7] = {0, 0x30, 0x3c, 0x0c, 0x0d, 0x02, 0x02};
    for (int i = 0; i < 7; i++)
        ST_CHECK(f[i] == want[i], "%s: fetching nbi form %d gave %#lx, want %#lx", what, i, f[i], want[i]);
    float ff = 0;
    static float gf;
    gf = 0;
    shmem_barrier_all();
    shmem_ctx_float_atomic_swap_nbi(ctx, &ff, &gf, 3.5f, right);
    shmem_ctx_quiet(ctx);
    ST_CHECK(ff == 0.0f && shmem_ctx_float_atomic_fetch(ctx, &gf, right) == 3.5f, "%s: float swap_nbi", what);
    shmem_barrier_all();
}

/* ---- a context's quiet completes its own operations ------------------------------------------ */

/* Two contexts with operations outstanding on the global buffer of `right`: quieting the first
 * makes its half visible there (checked by `right` after a flag from the default context). */
static void test_quiet_own(void)
{
    st_phase = "ctx quiet";
    shmem_ctx_t a, b;
    ST_CHECK(shmem_ctx_create(SHMEM_CTX_PRIVATE, &a) == 0 && shmem_ctx_create(0, &b) == 0, "create");
    long src[16];
    memset(g_buf, 0, sizeof g_buf);
    g_flag = 0;
    shmem_barrier_all();
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 16; i++)
            src[i] = val(me, 10 + round, i);
        shmem_ctx_putmem_nbi(a, g_buf, src, 8 * sizeof(long), right);
        shmem_ctx_putmem_nbi(b, g_buf + 8, src + 8, 8 * sizeof(long), right);
        shmem_ctx_quiet(a);
        shmem_long_atomic_set(&g_flag, round + 1, right);   /* default context */
        shmem_long_wait_until(&g_flag, SHMEM_CMP_EQ, round + 1);
        for (int i = 0; i < 8; i++)
            ST_CHECK(g_buf[i] == val(left, 10 + round, i), "round %d: [%d] = %ld after the ctx quiet", round, i, g_buf[i]);
        shmem_ctx_quiet(b);
        shmem_barrier_all();
        for (int i = 8; i < 16; i++)
            ST_CHECK(g_buf[i] == val(left, 10 + round, i), "round %d: [%d] = %ld", round, i, g_buf[i]);
        shmem_barrier_all();
    }
    /* gets: the data is here once the context's own quiet returns (not before: a round trip) */
    for (int i = 0; i < 2048; i++)
        g_big[i] = val(me, 20, i);
    shmem_barrier_all();
    static long got[2048], got2[2048];
    for (int round = 0; round < 3; round++) {
        memset(got, 0, sizeof got);
        memset(got2, 0, sizeof got2);
        shmem_ctx_getmem_nbi(b, got2, g_big, sizeof g_big, right);
        shmem_ctx_getmem_nbi(a, got, g_big, sizeof g_big, right);
        shmem_ctx_quiet(a);
        long bad = 0;
        for (int i = 0; i < 2048; i++)
            bad += got[i] != val(right, 20, i);
        ST_CHECK(bad == 0, "round %d: %ld words of the get_nbi missing after the ctx quiet", round, bad);
        shmem_ctx_quiet(b);
        bad = 0;
        for (int i = 0; i < 2048; i++)
            bad += got2[i] != val(right, 20, i);
        ST_CHECK(bad == 0, "round %d: %ld words of the other ctx's get_nbi missing after its quiet", round, bad);
    }
    shmem_barrier_all();
    shmem_ctx_destroy(a);
    shmem_ctx_destroy(b);
}

/* ---- team contexts --------------------------------------------------------------------------- */

/* The even PEs as a team; a context on it addresses them by team PE number. */
static void test_team_ctx(long *h)
{
    st_phase = "team ctx";
    shmem_team_t even = SHMEM_TEAM_INVALID;
    int tsize = (npes + 1) / 2;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, tsize, NULL, 0, &even);
    memset(h, 0, 8 * sizeof(long));
    shmem_barrier_all();
    if (even != SHMEM_TEAM_INVALID) {
        shmem_ctx_t c = SHMEM_CTX_INVALID;
        ST_CHECK(shmem_team_create_ctx(even, SHMEM_CTX_PRIVATE, &c) == 0, "team_create_ctx");
        shmem_team_t t;
        ST_CHECK(shmem_ctx_get_team(c, &t) == 0 && t == even, "the ctx's team");
        int tme = shmem_team_my_pe(even), tr = (tme + 1) % tsize;
        long v = val(me, 3, 0);
        shmem_ctx_long_put(c, h, &v, 1, tr);                 /* world PE 2*tr */
        shmem_ctx_quiet(c);
        ST_CHECK(shmem_ctx_long_g(c, h, tr) == v, "team ctx: read back from team PE %d", tr);
        shmem_ctx_destroy(c);
    }
    shmem_barrier_all();
    if (me % 2 == 0) {
        int from = (me - 2 + 2 * tsize) % (2 * tsize);
        ST_CHECK(h[0] == val(from, 3, 0), "team ctx: got %ld, want %ld (from world PE %d)", h[0], val(from, 3, 0), from);
    }
    if (even != SHMEM_TEAM_INVALID)
        shmem_team_destroy(even);
    shmem_barrier_all();
}

/* ---- zero length and SHMEM_CTX_INVALID ------------------------------------------------------- */

static void test_edges(long *h, uint64_t *hsig)
{
    st_phase = "zero length";
    shmem_ctx_t c;
    ST_CHECK(shmem_ctx_create(0, &c) == 0, "create");
    *hsig = 0;
    g_sig = 0;
    h[0] = 77;
    shmem_barrier_all();
    shmem_putmem(NULL, NULL, 0, right);
    shmem_getmem(NULL, NULL, 0, right);
    shmem_putmem_nbi(NULL, NULL, 0, right);
    shmem_getmem_nbi(NULL, NULL, 0, right);
    shmem_putmem(h, NULL, 0, right);
    shmem_long_put(NULL, NULL, 0, right);
    shmem_long_iput(NULL, NULL, 1, 1, 0, right);
    shmem_long_iget(NULL, NULL, 1, 1, 0, right);
    shmem_put64_nbi(NULL, NULL, 0, right);
    shmem_ctx_putmem(c, NULL, NULL, 0, right);
    shmem_ctx_getmem_nbi(c, NULL, NULL, 0, right);
    shmem_ctx_long_get(c, NULL, NULL, 0, right);
    shmem_ctx_iget32(c, NULL, NULL, 1, 1, 0, right);
    /* zero bytes with a signal: the signal is still updated */
    shmem_putmem_signal(NULL, NULL, 0, hsig, 5, SHMEM_SIGNAL_ADD, right);
    shmem_ctx_putmem_signal_nbi(c, NULL, NULL, 0, &g_sig, 9, SHMEM_SIGNAL_SET, right);
    shmem_ctx_long_put_signal(c, NULL, NULL, 0, hsig, 2, SHMEM_SIGNAL_ADD, right);
    shmem_ctx_quiet(c);
    shmem_quiet();
    shmem_barrier_all();
    ST_CHECK(*hsig == 7 && g_sig == 9, "zero-length put_signal: signals %lu and %lu, want 7 and 9",
             (unsigned long)*hsig, (unsigned long)g_sig);
    ST_CHECK(h[0] == 77, "zero-length put changed the target");
    shmem_ctx_destroy(c);

    st_phase = "SHMEM_CTX_INVALID";
    long src[4] = {1, 2, 3, 4}, dst[4] = {0};
    g_counter = 5;
    shmem_barrier_all();
    shmem_ctx_putmem(SHMEM_CTX_INVALID, h, src, sizeof src, right);
    shmem_ctx_long_put_nbi(SHMEM_CTX_INVALID, g_buf, src, 4, right);
    shmem_ctx_long_p(SHMEM_CTX_INVALID, h, 9, right);
    shmem_ctx_long_iput(SHMEM_CTX_INVALID, h, src, 1, 1, 4, right);
    shmem_ctx_long_get(SHMEM_CTX_INVALID, dst, h, 4, right);
    shmem_ctx_long_atomic_add(SHMEM_CTX_INVALID, &g_counter, 1, right);
    ST_CHECK(shmem_ctx_long_atomic_fetch_inc(SHMEM_CTX_INVALID, &g_counter, right) == 0, "invalid fetch_inc");
    ST_CHECK(shmem_ctx_long_g(SHMEM_CTX_INVALID, h, right) == 0, "invalid g");
    shmem_ctx_putmem_signal(SHMEM_CTX_INVALID, h, src, 8, hsig, 1, SHMEM_SIGNAL_ADD, right);
    shmem_ctx_quiet(SHMEM_CTX_INVALID);
    shmem_ctx_fence(SHMEM_CTX_INVALID);
    shmem_ctx_destroy(SHMEM_CTX_INVALID);
    shmem_barrier_all();
    ST_CHECK(h[0] == 77 && g_counter == 5 && *hsig == 7 && dst[0] == 0, "SHMEM_CTX_INVALID changed something");
    shmem_barrier_all();
}

/* ---- threads ------------------------------------------------------------------------------- */

struct thr {
    int id;
    shmem_ctx_t ctx; /* private context, or SHMEM_CTX_DEFAULT shared by all */
};

static void *thr_main(void *arg)
{
    struct thr *t = arg;
    if (!t->ctx && shmem_ctx_create(SHMEM_CTX_PRIVATE, &t->ctx)) /* created concurrently */
        return "shmem_ctx_create failed";
    for (int i = 0; i < TOPS; i++) {
        long v = val(me, 4 + t->id, i);
        shmem_ctx_long_p(t->ctx, &g_thr[t->id][i], v, right);
        shmem_ctx_long_atomic_inc(t->ctx, &g_thr_counter, 0);
        if (i % 50 == 49)
            shmem_ctx_quiet(t->ctx);
    }
    if (t->ctx != SHMEM_CTX_DEFAULT)
        shmem_ctx_destroy(t->ctx); /* quiets it; destroyed concurrently */
    else
        shmem_ctx_quiet(t->ctx);
    return NULL;
}

static void test_threads(int shared)
{
    st_phase = shared ? "threads on the default context" : "threads on private contexts";
    memset(g_thr, 0, sizeof g_thr);
    g_thr_counter = 0;
    shmem_barrier_all();
    pthread_t th[NTHR];
    struct thr t[NTHR];
    for (int k = 0; k < NTHR; k++) {
        t[k].id = k;
        t[k].ctx = shared ? SHMEM_CTX_DEFAULT : SHMEM_CTX_INVALID;
        ST_CHECK(pthread_create(&th[k], NULL, thr_main, &t[k]) == 0, "pthread_create");
    }
    for (int k = 0; k < NTHR; k++) {
        void *err = NULL;
        pthread_join(th[k], &err);
        ST_CHECK(err == NULL, "thread %d: %s", k, (const char *)err);
    }
    shmem_barrier_all();
    for (int k = 0; k < NTHR; k++)
        for (int i = 0; i < TOPS; i++)
            ST_CHECK(g_thr[k][i] == val(left, 4 + k, i), "thread %d op %d: %ld", k, i, g_thr[k][i]);
    if (me == 0)
        ST_CHECK(g_thr_counter == (long)NTHR * TOPS * npes, "thread counter %ld", g_thr_counter);
    shmem_barrier_all();
}

int main(void)
{
    (void)st_begin; /* its shmem_init would not ask for SHMEM_THREAD_MULTIPLE */
    st_name = "shmem_ctx";
    signal(SIGALRM, st_alarm);
    alarm(60);
    int provided = -1;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    right = (me + 1) % npes;
    left = (me + npes - 1) % npes;
    long *h = shmem_calloc(64, sizeof(long));
    uint64_t *hsig = shmem_calloc(1, sizeof(uint64_t));

    test_create();
    shmem_ctx_t ser, prv, nst;
    ST_CHECK(shmem_ctx_create(SHMEM_CTX_SERIALIZED, &ser) == 0, "create serialized");
    ST_CHECK(shmem_ctx_create(SHMEM_CTX_PRIVATE, &prv) == 0, "create private");
    ST_CHECK(shmem_ctx_create(SHMEM_CTX_NOSTORE, &nst) == 0, "create nostore");
    shmem_ctx_t all[] = {SHMEM_CTX_DEFAULT, ser, prv, nst};
    const char *names[] = {"default", "serialized", "private", "nostore"};
    char what[64];
    for (int i = 0; i < 4; i++) {
        snprintf(what, sizeof what, "rma on %s", names[i]);
        test_rma(all[i], h, what);
        snprintf(what, sizeof what, "signal on %s", names[i]);
        test_signal(all[i], h + 32, hsig, what);
        snprintf(what, sizeof what, "amo on %s", names[i]);
        test_amo(all[i], h + 48, what);
        snprintf(what, sizeof what, "nbi amo on %s", names[i]);
        test_amo_nbi(all[i], h + 48, what);
    }
    shmem_ctx_destroy(ser);
    shmem_ctx_destroy(prv);
    shmem_ctx_destroy(nst);
    test_quiet_own();
    test_team_ctx(h);
    test_edges(h, hsig);
    if (provided == SHMEM_THREAD_MULTIPLE) {
        test_threads(0);
        test_threads(1);
    } else if (me == 0) {
        printf("shmem_ctx: thread level %d granted, not SHMEM_THREAD_MULTIPLE: thread cases not run\n", provided);
    }
    shmem_free(hsig);
    shmem_free(h);
    return st_end();
}
