/*
 * shmem_heap.c — OpenSHMEM 1.5 symmetric heap edges and the deprecated names: shmem_align at
 * 8 KiB, 64 KiB and 2 MiB (aligned on every PE, and in the mapped copies of the PEs sharing
 * memory), an alignment that cannot be met and one that is not a power of two (NULL on every PE,
 * the heap usable after), shmem_malloc_with_hints (atomics and signals on its blocks), calloc
 * (zeroed even over dirty memory; 0 and overflowing counts), realloc (grow and shrink keep the
 * contents, NULL and 0 arguments, a size the heap cannot hold leaves the block unchanged),
 * shmalloc / shrealloc / shmemalign / shfree, the 1.3 atomics (shmem_long_fadd & co., typed and
 * generic) with exact totals, and the no-op cache routines and shmem_pcontrol. Every block is
 * written by another PE and checked byte for byte.
 */
#include <stdint.h>
#include "shmtest.h"

/* the byte a PE writes at offset i of a block in step s */
static unsigned char pat(int pe, int s, size_t i)
{
    return (unsigned char)(pe * 31 + s * 7 + i * 13 + (i >> 8));
}

/* The predecessor writes `len` bytes of its pattern into `blk` here (a put to its successor);
 * every PE then checks the bytes it got. */
static void exchange_check(void *blk, size_t len, int step, const char *what)
{
    int me = shmem_my_pe(), n = shmem_n_pes(), to = (me + 1) % n, from = (me + n - 1) % n;
    unsigned char *src = malloc(len);
    for (size_t i = 0; i < len; i++)
        src[i] = pat(me, step, i);
    shmem_putmem(blk, src, len, to);
    shmem_barrier_all();
    const unsigned char *b = blk;
    size_t bad = 0;
    for (size_t i = 0; i < len; i++)
        bad += b[i] != pat(from, step, i);
    ST_CHECK(bad == 0, "%s: %zu of %zu bytes from PE %d wrong", what, bad, len, from);
    free(src);
    shmem_barrier_all();
}

static void check_aligned(void *p, size_t align, const char *what)
{
    int n = shmem_n_pes();
    ST_CHECK(p != NULL, "%s: NULL", what);
    if (!p)
        return;
    ST_CHECK((uintptr_t)p % align == 0, "%s: %p is not %zu-aligned", what, p, align);
    for (int pe = 0; pe < n; pe++) { /* the copies mapped here, for the PEs sharing memory */
        void *q = shmem_ptr(p, pe);
        ST_CHECK(!q || (uintptr_t)q % align == 0, "%s: shmem_ptr for PE %d %p is not %zu-aligned", what, pe, q,
                 align);
    }
}

static long g_long;
static int g_int;
static long long g_ll;
static unsigned long g_ulong;
static double g_double;
static float g_float;
static long g_sum;

int main(void)
{
    st_begin("shmem_heap", 60);
    int me = shmem_my_pe(), n = shmem_n_pes(), to = (me + 1) % n;

    st_phase = "shmem_align at 8 KiB, 64 KiB, 2 MiB";
    void *small = shmem_malloc(24); /* so that the aligned blocks do not start at offset 0 */
    size_t aligns[3] = {8192, 65536, 2u << 20};
    void *al[3];
    for (int a = 0; a < 3; a++) {
        al[a] = shmem_align(aligns[a], 3000 + (size_t)a * 1000);
        check_aligned(al[a], aligns[a], "shmem_align");
        if (al[a])
            exchange_check(al[a], 3000 + (size_t)a * 1000, a, "aligned block");
    }
    void *dep = shmemalign(1u << 20, 4096); /* deprecated spelling */
    check_aligned(dep, 1u << 20, "shmemalign");
    if (dep)
        exchange_check(dep, 4096, 5, "shmemalign block");

    st_phase = "alignments that cannot be given";
    ST_CHECK(shmem_align((size_t)1 << 40, 64) == NULL, "a 1 TiB alignment was met");
    ST_CHECK(shmem_align(3 * 4096, 64) == NULL, "a non-power-of-two alignment was accepted");
    ST_CHECK(shmem_align(0, 64) == NULL, "alignment 0 was accepted");
    void *after = shmem_align(4096, 100); /* the heap still works, the same on every PE */
    check_aligned(after, 4096, "shmem_align after the refusals");
    if (after)
        exchange_check(after, 100, 6, "block after the refusals");

    st_phase = "size 0 and NULL: no action";
    ST_CHECK(shmem_malloc(0) == NULL, "shmem_malloc(0)");
    ST_CHECK(shmem_calloc(0, 8) == NULL && shmem_calloc(8, 0) == NULL, "shmem_calloc with a zero");
    ST_CHECK(shmem_align(4096, 0) == NULL, "shmem_align(4096, 0)");
    ST_CHECK(shmem_malloc_with_hints(0, SHMEM_MALLOC_ATOMICS_REMOTE) == NULL, "malloc_with_hints(0)");
    ST_CHECK(shmem_calloc(SIZE_MAX / 4, 8) == NULL, "an overflowing calloc");
    shmem_free(NULL);
    shfree(NULL);

    st_phase = "malloc_with_hints";
    long *ctr = shmem_malloc_with_hints(4 * sizeof(long), SHMEM_MALLOC_ATOMICS_REMOTE);
    uint64_t *sig = shmem_malloc_with_hints(sizeof(uint64_t), SHMEM_MALLOC_SIGNAL_REMOTE);
    char *plain = shmem_malloc_with_hints(1000, 0);
    char *both = shmem_malloc_with_hints(333, SHMEM_MALLOC_ATOMICS_REMOTE | SHMEM_MALLOC_SIGNAL_REMOTE);
    ST_CHECK(ctr && sig && plain && both, "malloc_with_hints gave NULL");
    if (ctr && sig && plain && both) {
        ctr[0] = ctr[1] = 0;
        *sig = 0;
        shmem_barrier_all();
        for (int pe = 0; pe < n; pe++)
            for (int k = 0; k < 10; k++)
                shmem_long_atomic_add(&ctr[0], me + 1, pe);
        shmem_barrier_all();
        ST_CHECK(ctr[0] == 10L * n * (n + 1) / 2, "atomics on a hinted block: %ld", ctr[0]);
        char msg[333];
        for (int i = 0; i < 333; i++)
            msg[i] = (char)pat(me, 7, (size_t)i);
        shmem_putmem_signal(both, msg, 333, sig, 1, SHMEM_SIGNAL_ADD, to);
        shmem_signal_wait_until(sig, SHMEM_CMP_GE, 1);
        int bad = 0;
        for (int i = 0; i < 333; i++)
            bad += (unsigned char)both[i] != pat((me + n - 1) % n, 7, (size_t)i);
        ST_CHECK(bad == 0, "put_signal into a hinted block: %d bytes wrong", bad);
        exchange_check(plain, 1000, 8, "malloc_with_hints(0) block");
    }

    st_phase = "calloc over dirty memory";
    unsigned char *dirty = shmem_malloc(5000);
    memset(dirty, 0xa5, 5000);
    shmem_free(dirty);
    unsigned char *z = shmem_calloc(1250, 4);
    size_t nz = 0;
    for (size_t i = 0; z && i < 5000; i++)
        nz += z[i] != 0;
    ST_CHECK(z && nz == 0, "calloc: %zu nonzero bytes", nz);
    shmem_barrier_all(); /* checked everywhere before the predecessor writes into it */
    if (z)
        exchange_check(z, 5000, 9, "calloc block");

    st_phase = "realloc";
    unsigned char *r = shmem_realloc(NULL, 700); /* like shmem_malloc */
    ST_CHECK(r != NULL, "realloc(NULL, 700)");
    exchange_check(r, 700, 10, "realloc(NULL) block");
    unsigned char *keep = shmem_malloc(64); /* so that growing must move the block */
    r = shmem_realloc(r, 300000);
    ST_CHECK(r != NULL, "realloc grow");
    size_t bad = 0;
    for (size_t i = 0; r && i < 700; i++)
        bad += r[i] != pat((me + n - 1) % n, 10, i);
    ST_CHECK(bad == 0, "realloc grow lost %zu bytes", bad);
    shmem_barrier_all();
    exchange_check(r, 300000, 11, "grown block");
    r = shrealloc(r, 5000); /* deprecated spelling, shrinking */
    bad = 0;
    for (size_t i = 0; r && i < 5000; i++)
        bad += r[i] != pat((me + n - 1) % n, 11, i);
    ST_CHECK(r && bad == 0, "shrealloc shrink lost %zu bytes", bad);
    unsigned char *same = shmem_realloc(r, (size_t)1 << 50); /* cannot be held: NULL, r unchanged */
    ST_CHECK(same == NULL, "a realloc beyond the heap succeeded");
    bad = 0;
    for (size_t i = 0; r && i < 5000; i++)
        bad += r[i] != pat((me + n - 1) % n, 11, i);
    ST_CHECK(bad == 0, "the failed realloc changed %zu bytes", bad);
    ST_CHECK(shmem_realloc(r, 0) == NULL, "realloc(p, 0) is a free");
    shmem_free(keep);
    long *old = shmalloc(8 * sizeof(long));
    ST_CHECK(old != NULL, "shmalloc");
    if (old)
        exchange_check(old, 8 * sizeof(long), 12, "shmalloc block");

    st_phase = "the 1.3 atomics (deprecated names), exact totals on PE 0";
    g_long = g_int = 0;
    g_ll = 0;
    g_ulong = 0;
    g_sum = 0;
    g_double = 0;
    g_float = 0;
    shmem_barrier_all();
    const int M = 25;
    long fsum = 0;
    for (int k = 0; k < M; k++) {
        fsum += shmem_long_fadd(&g_long, 2, 0); /* 2 per call */
        shmem_int_finc(&g_int, 0);
        shmem_int_inc(&g_int, 0);             /* 2 per round in all */
        shmem_longlong_add(&g_ll, 3, 0);
        shmem_fadd(&g_ulong, 5ul, 0);         /* generics */
        if (k % 2)
            shmem_inc(&g_ll, 0);              /* g_ll: 4 per round */
        else
            shmem_add(&g_ll, 1LL, 0);
        (void)shmem_finc(&g_ulong, 0);        /* g_ulong: 6 per round */
        long v = shmem_long_fetch(&g_long, 0);
        ST_CHECK(v % 2 == 0 && v >= 2, "fetch: %ld", v);
    }
    shmem_long_add(&g_sum, fsum, 0);
    shmem_barrier_all();
    if (me == 0) {
        long total = 2L * M * n;
        ST_CHECK(g_long == total, "fadd total %ld, not %ld", g_long, total);
        /* the fetched values are 0, 2, ..., total - 2, each once: their sum is known */
        ST_CHECK(g_sum == (total / 2) * (total / 2 - 1), "fadd returned values sum to %ld", g_sum);
        ST_CHECK(g_int == 2 * M * n, "finc + inc total %d", g_int);
        ST_CHECK(g_ll == 4LL * M * n, "add + inc total %lld", g_ll);
        ST_CHECK(g_ulong == 6ul * M * n, "generic fadd + finc total %lu", g_ulong);
    }
    shmem_barrier_all();
    /* cswap: each PE takes the word from its number to the next one, in PE order */
    g_long = 0;
    shmem_barrier_all();
    if (me % 2)
        while (shmem_long_cswap(&g_long, me, me + 1, 0) != me)
            ;
    else
        while (shmem_cswap(&g_long, (long)me, (long)me + 1, 0) != me) /* generic */
            ;
    shmem_barrier_all();
    if (me == 0)
        ST_CHECK(g_long == n, "cswap chain ended at %ld", g_long);
    /* swap, set and fetch on double and float: each PE swaps its number into PE 0's words */
    if (me == 0) {
        shmem_double_set(&g_double, -1.0, 0);
        shmem_set(&g_float, -1.0f, 0); /* generic */
    }
    shmem_barrier_all();
    double dold = shmem_double_swap(&g_double, (double)me, 0);
    float fold = shmem_swap(&g_float, (float)me, 0); /* generic */
    long dsum = (long)dold, fsum2 = (long)fold;
    shmem_long_atomic_add(&g_long, dsum + 100 * fsum2, 0);
    shmem_barrier_all();
    if (me == 0) {
        /* the old values: -1 and every PE number but the one that stayed in the word */
        double last = shmem_double_fetch(&g_double, 0);
        float flast = shmem_fetch(&g_float, 0); /* generic */
        long expect_d = -1 + (long)n * (n - 1) / 2 - (long)last;
        long expect_f = -1 + (long)n * (n - 1) / 2 - (long)flast;
        ST_CHECK(g_long == n + expect_d + 100 * expect_f, "swap chain: %ld, not %ld", g_long,
                 n + expect_d + 100 * expect_f);
    }

    st_phase = "no-op cache routines and shmem_pcontrol";
    shmem_clear_cache_inv();
    shmem_set_cache_inv();
    shmem_clear_cache_line_inv(&g_long);
    shmem_set_cache_line_inv(&g_long);
    shmem_udcflush();
    shmem_udcflush_line(&g_long);
    shmem_pcontrol(0);
    shmem_pcontrol(2, "extra", 1);
    shmem_pcontrol(1);
    ST_CHECK(_SHMEM_CMP_GE == SHMEM_CMP_GE && _SHMEM_MAJOR_VERSION == 1, "_SHMEM_ constants");

    shmem_barrier_all();
    for (int a = 0; a < 3; a++)
        shmem_free(al[a]);
    shmem_free(dep);
    shmem_free(after);
    shmem_free(small);
    shmem_free(ctr);
    shmem_free(sig);
    shmem_free(plain);
    shmem_free(both);
    shmem_free(z);
    shfree(old);
    return st_end();
}
