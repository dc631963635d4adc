/*
 * gpu_rma.c — one-sided operations on windows in device (GPU) memory (issue 31, part 1), run by
 * tests/gpu/ci_rma.sh with the fake CUDA driver (device memory is PROT_NONE to the CPU there:
 * any host load or store of it crashes) and by tests/gpu/run.sh with the real one. Every process
 * of the world group takes part; rank r works on the slot r of its neighbour t = (r + 1) % n.
 *   A  heap window W in device memory (waitio_win_allocate_ex, WAITIO_WIN_DEVICE), host buffers:
 *      puts of random sizes and offsets (blocking, nbi + flush, with a request) read back by
 *      gets (blocking, with a request, nbi + quiet), every byte checked; then each target reads
 *      what its neighbour left in its own part (a get from itself: device to host) and rank 0
 *      reads the whole part of rank 1 in one get (more than one reply piece), every byte checked
 *   B  device origin buffers: a second device window L is this process's scratch (its base is a
 *      device pointer): put from it, get into it, its contents read back and checked
 *   C  atomics on device words from every rank: fetch-add (blocking, fetching; and non-fetching
 *      + flush), compare-and-swap increments, a fetched value into device memory; the totals
 *      checked on the owner and by everyone
 *   D  waitio_win_create over device memory the program holds: detected (waitio_win_ptr NULL),
 *      put/get through it checked
 *   E  put-with-signal into device memory, the target waiting on its device signal word
 * Prints "gpu_rma ok: N processes, phases ABCDE". With --expect-nodevice (no CUDA driver):
 * the device window request fails with WAITIO_ERR_DEVICE on every rank, a host window still
 * works; prints "gpu_rma ok: N processes, no device". With --bench BYTES (tests/gpu/real_rma.sh):
 * rank 0 puts and gets BYTES between its device scratch and rank 1's device part, 9 rounds each,
 * the contents of the last ones checked, and prints the medians.
 */
#include <stdint.h>
#include <stddef.h>
#include "testutil.h"
#include "waitio_mpi.h"
#include "waitio_rma.h"

#define PART (6u << 20) /* bytes of each rank's part of W: a whole-part get is two reply pieces */
#define ITERS 24

static waitio_group_t world;
static int me, n;
static uint64_t seed;

static void barrier(void) { TU_CHECK(waitio_mpi_barrier(world)); }

/* The byte pattern rank r writes in iteration i: a function of (r, i, position in its slot). */
static void pattern(uint8_t *b, size_t len, int r, int i, size_t at)
{
    tu_rng g = tu_rng_make(seed, (uint64_t)r, (uint64_t)i, 0);
    uint64_t base = tu_rng_next(&g);
    for (size_t k = 0; k < len; k++)
        b[k] = (uint8_t)(tu_mix64(base + at + k) >> 7);
}

static void compare(const uint8_t *got, const uint8_t *want, size_t len, const char *what)
{
    for (size_t k = 0; k < len; k++)
        if (got[k] != want[k]) {
            TU_ERR("%s: byte %zu of %zu is %#x, expected %#x", what, k, len, got[k], want[k]);
            return;
        }
}

static size_t slot_size(void) { return PART / (size_t)n / 64 * 64; }

/* One iteration's put of phase A: where and how much (a quarter of them small). */
typedef struct a_put {
    size_t off, len;
} a_put;

static a_put plan(tu_rng *g)
{
    size_t slot = slot_size();
    a_put w;
    w.len = (size_t)tu_rng_below(g, 4) == 0 ? (size_t)tu_rng_below(g, 64) : (size_t)tu_rng_below(g, slot + 1);
    w.off = (size_t)tu_rng_below(g, slot - w.len + 1);
    return w;
}

/* The get of the same iteration (drawn after the put). */
static void plan_get(tu_rng *g, size_t *off, size_t *len)
{
    size_t slot = slot_size();
    *off = (size_t)tu_rng_below(g, slot);
    *len = (size_t)tu_rng_below(g, slot - *off + 1);
}

/* The contents rank r's phase A leaves in its slot: replayed from the same draws. */
static void a_final(int r, uint8_t *out)
{
    size_t slot = slot_size(), goff, glen;
    tu_rng g = tu_rng_make(seed, (uint64_t)r, 1, 0);
    pattern(out, slot, r, -1, 0);
    for (int i = 0; i < ITERS; i++) {
        a_put p = plan(&g);
        pattern(out + p.off, p.len, r, i, p.off);
        plan_get(&g, &goff, &glen);
    }
}

static void phase_a(waitio_win_t w)
{
    tu_phase("A: puts and gets on a device heap window");
    int t = (me + 1) % n;
    size_t slot = slot_size(), base = (size_t)me * slot;
    uint8_t *src = tu_xmalloc(slot), *dst = tu_xmalloc(slot), *want = tu_xmalloc(slot);
    tu_rng g = tu_rng_make(seed, (uint64_t)me, 1, 0);
    /* the whole slot first: every byte of it is then known */
    pattern(src, slot, me, -1, 0);
    TU_CHECK(waitio_put(w, t, base, src, slot));
    memcpy(want, src, slot);
    for (int i = 0; i < ITERS; i++) {
        a_put p = plan(&g);
        pattern(src, p.len, me, i, p.off);
        memcpy(want + p.off, src, p.len);
        waitio_req_t rq;
        switch (i % 3) {
        case 0: TU_CHECK(waitio_put(w, t, base + p.off, src, p.len)); break;
        case 1:
            TU_CHECK(waitio_put_nbi(w, t, base + p.off, src, p.len));
            TU_CHECK(waitio_flush(w, t));
            break;
        default:
            TU_CHECK(waitio_iput(w, t, base + p.off, src, p.len, &rq));
            TU_CHECK(waitio_wait(&rq));
            TU_CHECK(waitio_flush(w, t));
            break;
        }
        memset(dst, 0xa5, slot);
        size_t goff, glen;
        plan_get(&g, &goff, &glen);
        switch (i % 3) {
        case 0: TU_CHECK(waitio_get(w, t, base + goff, dst, glen)); break;
        case 1:
            TU_CHECK(waitio_iget(w, t, base + goff, dst, glen, &rq));
            TU_CHECK(waitio_wait(&rq));
            break;
        default:
            TU_CHECK(waitio_get_nbi(w, t, base + goff, dst, glen));
            TU_CHECK(waitio_quiet());
            break;
        }
        compare(dst, want + goff, glen, "A: get after put");
    }
    barrier();
    /* this part's slot of the previous rank, as it left it: read from itself (device to host) */
    int prev = (me + n - 1) % n;
    uint8_t *exp = tu_xmalloc(slot);
    a_final(prev, exp);
    memset(dst, 0, slot);
    TU_CHECK(waitio_get(w, me, (size_t)prev * slot, dst, slot));
    compare(dst, exp, slot, "A: this part as the previous rank left it");
    free(exp);
    /* rank 0 reads rank 1's whole part in one get (more than one reply piece) */
    if (me == 0 && n > 1) {
        uint8_t *all = tu_xmalloc(PART);
        TU_CHECK(waitio_get(w, 1, 0, all, PART));
        /* slot 0 of rank 1 holds rank 0's `want` */
        compare(all, want, slot, "A: rank 1's part, slot of rank 0, one large get");
        for (size_t k = (size_t)n * slot; k < PART; k++)
            if (all[k]) {
                TU_ERR("A: rank 1's part: byte %zu past the slots is %#x, expected 0 (zero-filled)", k, all[k]);
                break;
            }
        free(all);
    }
    barrier();
    free(src);
    free(dst);
    free(want);
}

/* B: the origin buffers are device memory (the scratch window L's own part). */
static void phase_b(waitio_win_t w, waitio_win_t l, uint8_t *ldev)
{
    tu_phase("B: device origin buffers");
    int t = (me + 1) % n;
    size_t slot = slot_size(), base = (size_t)me * slot, half = slot / 2;
    uint8_t *host = tu_xmalloc(slot), *back = tu_xmalloc(slot);
    tu_rng g = tu_rng_make(seed, (uint64_t)me, 2, 0);
    for (int i = 0; i < 8; i++) {
        size_t len = (size_t)tu_rng_below(&g, half + 1), off = (size_t)tu_rng_below(&g, slot - len + 1);
        pattern(host, len, me, 100 + i, off);
        TU_CHECK(waitio_put(l, me, 0, host, len));                  /* host -> own device part */
        if (i % 2)
            TU_CHECK(waitio_put(w, t, base + off, ldev, len));      /* device origin -> target */
        else {
            TU_CHECK(waitio_put_nbi(w, t, base + off, ldev, len));
            TU_CHECK(waitio_quiet());
        }
        TU_CHECK(waitio_get(w, t, base + off, ldev + half, len));   /* target -> device dst */
        memset(back, 0x5a, len);
        TU_CHECK(waitio_get(l, me, half, back, len));               /* own device part -> host */
        compare(back, host, len, "B: device to device round trip");
        memset(back, 0x5a, len);
        TU_CHECK(waitio_get(w, t, base + off, back, len));          /* and straight to host */
        compare(back, host, len, "B: host get of a device-origin put");
    }
    barrier();
    free(host);
    free(back);
}

static void phase_c(waitio_win_t a, waitio_win_t l, uint8_t *ldev)
{
    tu_phase("C: atomics on device words");
    const int k = 40;
    int64_t one = me + 1, old = 0;
    for (int i = 0; i < k; i++) {
        if (i % 2)
            TU_CHECK(waitio_atomic(a, 0, 0, WAITIO_AMO_ADD, WAITIO_AMO_INT64, &one, NULL, &old));
        else
            TU_CHECK(waitio_atomic(a, 0, 0, WAITIO_AMO_ADD, WAITIO_AMO_INT64, &one, NULL, NULL));
        /* compare-and-swap increment of the word on the last rank */
        uint64_t cur = 0, next, got;
        TU_CHECK(waitio_atomic(a, n - 1, 8, WAITIO_AMO_FETCH, WAITIO_AMO_UINT64, NULL, NULL, &cur));
        for (;;) {
            next = cur + 1;
            TU_CHECK(waitio_atomic(a, n - 1, 8, WAITIO_AMO_CSWAP, WAITIO_AMO_UINT64, &next, &cur, &got));
            if (got == cur)
                break;
            cur = got;
        }
    }
    /* 32-bit adds whose fetched value lands in device memory */
    int32_t add32 = 3;
    for (int i = 0; i < 5; i++)
        TU_CHECK(waitio_atomic(a, (me + 1) % n, 16, WAITIO_AMO_ADD, WAITIO_AMO_INT32, &add32, NULL, ldev));
    TU_CHECK(waitio_quiet());
    barrier();
    int64_t sum = 0, w0 = 0;
    for (int r = 0; r < n; r++)
        sum += (int64_t)(r + 1) * k;
    uint64_t w1 = 0;
    int32_t w2 = 0, last = 0;
    TU_CHECK(waitio_get(a, 0, 0, &w0, 8));
    TU_CHECK(waitio_get(a, n - 1, 8, &w1, 8));
    TU_CHECK(waitio_get(a, me, 16, &w2, 4));
    TU_CHECK(waitio_get(l, me, 0, &last, 4)); /* the last value fetched into device memory */
    if (w0 != sum)
        TU_ERR("C: fetch-add total on rank 0 is %lld, expected %lld", (long long)w0, (long long)sum);
    if (w1 != (uint64_t)k * (uint64_t)n)
        TU_ERR("C: compare-and-swap total on rank %d is %llu, expected %llu", n - 1, (unsigned long long)w1,
               (unsigned long long)k * (unsigned long long)n);
    if (w2 != 15)
        TU_ERR("C: 32-bit adds into this rank's word: %d, expected 15", (int)w2);
    if (last != 12) /* the word before this rank's fifth add on its neighbour's word */
        TU_ERR("C: the value fetched into device memory is %d, expected 12", (int)last);
    barrier();
}

/* D: a window over device memory the program holds (the scratch window's part). */
static void phase_d(uint8_t *ldev)
{
    tu_phase("D: waitio_win_create over device memory");
    size_t size = 4096;
    waitio_win_t u;
    TU_CHECK(waitio_win_create(world, ldev, size, &u));
    if (waitio_win_ptr(u, me, 0) != NULL)
        TU_ERR("D: waitio_win_ptr of device memory is not NULL");
    int t = (me + 1) % n;
    uint8_t src[512], dst[512];
    pattern(src, sizeof src, me, 200, 0);
    TU_CHECK(waitio_put(u, t, 1024, src, sizeof src));
    TU_CHECK(waitio_flush(u, t));
    memset(dst, 0, sizeof dst);
    TU_CHECK(waitio_get(u, t, 1024, dst, sizeof dst));
    compare(dst, src, sizeof dst, "D: user device window");
    barrier();
    int prev = (me + n - 1) % n;
    pattern(src, sizeof src, prev, 200, 0);
    TU_CHECK(waitio_get(u, me, 1024, dst, sizeof dst));
    compare(dst, src, sizeof dst, "D: what the previous rank put into this device memory");
    TU_CHECK(waitio_win_free(u));
}

/* E: put-with-signal into device memory; the target waits on its device signal word. */
static void phase_e(waitio_win_t w, waitio_win_t a, uint8_t *abase)
{
    tu_phase("E: put-with-signal into device memory");
    int t = (me + 1) % n, prev = (me + n - 1) % n;
    uint8_t src[256], dst[256];
    pattern(src, sizeof src, me, 300, 0);
    TU_CHECK(waitio_put_signal(w, t, 0 + (size_t)me * 256, src, sizeof src, a, 24, 7, WAITIO_SIGNAL_ADD));
    uint64_t want = 7;
    TU_CHECK(waitio_wait_until(abase + 24, WAITIO_AMO_UINT64, WAITIO_CMP_GE, &want, 20.0));
    if (waitio_signal_fetch((const uint64_t *)(const void *)(abase + 24)) != 7)
        TU_ERR("E: waitio_signal_fetch of the device signal word is not 7");
    pattern(src, sizeof src, prev, 300, 0);
    TU_CHECK(waitio_get(w, me, (size_t)prev * 256, dst, sizeof dst));
    compare(dst, src, sizeof dst, "E: the data before the signal");
    barrier();
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#define BENCH_ROUNDS 9

/* Rank 0: BENCH_ROUNDS timed puts, then gets, of len bytes device to device with rank 1. */
static void bench(size_t len)
{
    tu_phase("bench: %zu bytes device to device", len);
    waitio_win_t w, l;
    void *wbase, *lbase;
    TU_CHECK(waitio_win_allocate_ex(world, len, WAITIO_WIN_DEVICE, &w, &wbase));
    TU_CHECK(waitio_win_allocate_ex(world, len, WAITIO_WIN_DEVICE, &l, &lbase));
    if (me == 0) {
        uint8_t *host = tu_xmalloc(len), *back = tu_xmalloc(len);
        pattern(host, len, 0, 500, 0);
        TU_CHECK(waitio_put(l, 0, 0, host, len));
        double put[BENCH_ROUNDS], get[BENCH_ROUNDS];
        for (int i = 0; i < BENCH_ROUNDS; i++) {
            double t = tu_now();
            TU_CHECK(waitio_put(w, 1, 0, lbase, len));
            TU_CHECK(waitio_flush(w, 1));
            put[i] = tu_now() - t;
        }
        for (int i = 0; i < BENCH_ROUNDS; i++) {
            double t = tu_now();
            TU_CHECK(waitio_get(w, 1, 0, lbase, len));
            get[i] = tu_now() - t;
        }
        TU_CHECK(waitio_get(l, 0, 0, back, len));
        compare(back, host, len, "bench: device data after the rounds");
        qsort(put, BENCH_ROUNDS, sizeof put[0], cmp_double);
        qsort(get, BENCH_ROUNDS, sizeof get[0], cmp_double);
        printf("gpu_rma bench: %zu B device->device: put+flush %.2f GB/s (%.1f us), get %.2f GB/s (%.1f us), "
               "medians of %d\n", len, (double)len / put[BENCH_ROUNDS / 2] * 1e-9, put[BENCH_ROUNDS / 2] * 1e6,
               (double)len / get[BENCH_ROUNDS / 2] * 1e-9, get[BENCH_ROUNDS / 2] * 1e6, BENCH_ROUNDS);
        free(host);
        free(back);
    }
    barrier();
    TU_CHECK(waitio_win_free(l));
    TU_CHECK(waitio_win_free(w));
}

static void nodevice(void)
{
    tu_phase("no device: a device window must fail cleanly");
    waitio_win_t w = NULL;
    void *base = NULL;
    TU_CHECK_RC(waitio_win_allocate_ex(world, 4096, WAITIO_WIN_DEVICE, &w, &base), WAITIO_ERR_DEVICE);
    TU_CHECK_RC(waitio_win_allocate_ex(world, 4096, 0x80, &w, &base), WAITIO_ERR_ARG);
    /* a host window still works afterwards */
    TU_CHECK(waitio_win_allocate_ex(world, 4096, 0, &w, &base));
    int t = (me + 1) % n;
    uint8_t src[100], dst[100];
    pattern(src, sizeof src, me, 400, 0);
    TU_CHECK(waitio_put(w, t, 0, src, sizeof src));
    TU_CHECK(waitio_get(w, t, 0, dst, sizeof dst));
    compare(dst, src, sizeof dst, "host window after a refused device one");
    TU_CHECK(waitio_win_free(w));
}

int main(int argc, char **argv)
{
    tu_set_name(argv[0]);
    int expect_nodevice = 0;
    size_t bench_len = 0;
    seed = 12345;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--expect-nodevice"))
            expect_nodevice = 1;
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--bench") && i + 1 < argc)
            bench_len = (size_t)strtoull(argv[++i], NULL, 10);
    }
    tu_alarm(60);
    tu_rma_start(&world, &me, &n);
    if (bench_len) {
        if (n < 2)
            TU_FAIL("--bench needs 2 processes");
        bench(bench_len);
        if (tu_errors)
            TU_FAIL("%ld errors", tu_errors);
        TU_CHECK(waitio_finalize());
        return 0;
    }
    if (expect_nodevice) {
        nodevice();
        barrier();
        if (tu_errors)
            TU_FAIL("%ld errors", tu_errors);
        if (me == 0)
            printf("gpu_rma ok: %d processes, no device\n", n);
        TU_CHECK(waitio_finalize());
        return 0;
    }
    waitio_win_t w, l, a;
    void *wbase, *lbase, *abase;
    TU_CHECK(waitio_win_allocate_ex(world, PART, WAITIO_WIN_DEVICE, &w, &wbase));
    TU_CHECK(waitio_win_allocate_ex(world, slot_size(), WAITIO_WIN_DEVICE, &l, &lbase));
    TU_CHECK(waitio_win_allocate_ex(world, 64, WAITIO_WIN_DEVICE, &a, &abase));
    if (waitio_win_ptr(w, me, 0) != NULL)
        TU_ERR("waitio_win_ptr of a device window is not NULL");
    phase_a(w);
    phase_b(w, l, lbase);
    phase_c(a, l, lbase);
    phase_d(lbase);
    phase_e(w, a, abase);
    TU_CHECK(waitio_win_free(a));
    TU_CHECK(waitio_win_free(l));
    TU_CHECK(waitio_win_free(w));
    if (tu_errors)
        TU_FAIL("%ld errors", tu_errors);
    if (me == 0)
        printf("gpu_rma ok: %d processes, phases ABCDE\n", n);
    TU_CHECK(waitio_finalize());
    return 0;
}
