/*
 * shmem_rma.c — OpenSHMEM RMA between every pair of PEs, on the symmetric heap and on global and
 * static variables (the symmetric data segment): putmem/getmem, the typed and C11 generic
 * put/get/p/g for several standard types, put8..put128, iput/iget (strides, negative not
 * allowed by the standard: positive ones here), put_nbi/get_nbi completed by quiet, a transfer
 * of 1 MiB + 3 bytes, and shmem_fence ordering puts to one PE (the flag, put after a fence,
 * never arrives before the data; data in global variables, the flag in the heap or not).
 */
#include <stdint.h>
#include "shmtest.h"

#define BIG ((1u << 20) + 3)

static double gd[64];
static int gi[64];
static long gflag;
static uint8_t gbig[BIG];

static uint8_t pat(int a, int b, size_t i) { return (uint8_t)((a * 131 + b * 31 + i * 7 + (i >> 9)) & 0xff); }

int main(void)
{
    st_begin("shmem_rma", 90);
    int me = shmem_my_pe(), n = shmem_n_pes();
    uint8_t *heap = shmem_malloc(BIG + 64);
    short *hs = shmem_malloc(64 * sizeof(short));
    long long *hll = shmem_malloc(64 * sizeof(long long));
    uint8_t *buf = malloc(BIG);

    st_phase = "putmem/getmem every pair";
    for (int t = 0; t < n; t++) {
        for (int i = 0; i < 64; i++)
            buf[i] = pat(me, t, i);
        shmem_putmem(heap + 64 * (me % 16), buf, 64, t);      /* heap */
        shmem_putmem((uint8_t *)gd + 8 * (me % 8), buf, 8, t); /* data segment */
    }
    shmem_barrier_all();
    for (int o = 0; o < n && o < 16; o++)
        for (int i = 0; i < 64; i++)
            if (o % 16 == o)
                ST_CHECK(heap[64 * o + i] == pat(o, me, i) || n > 16, "heap byte %d from PE %d", i, o);
    for (int t = 0; t < n; t++) {
        memset(buf, 0, 64);
        shmem_getmem(buf, heap + 64 * (t % 16), 64, t);
        for (int i = 0; i < 64; i++)
            ST_CHECK(buf[i] == pat(t, t, i), "getmem from PE %d byte %d", t, i);
    }
    shmem_barrier_all();

    st_phase = "typed and generic put/get/p/g";
    int to = (me + 1) % n, from = (me + n - 1) % n;
    double dv[8];
    int iv[8];
    short sv[8];
    long long lv[8];
    for (int i = 0; i < 8; i++) {
        dv[i] = me + i * 0.25;
        iv[i] = me * 100 + i;
        sv[i] = (short)(me - i);
        lv[i] = ((long long)me << 40) + i;
    }
    shmem_double_put(gd + 8, dv, 8, to);
    shmem_put(gi, iv, 8, to);          /* generic: int */
    shmem_put(hs, sv, 8, to);          /* generic: short, heap */
    shmem_longlong_put(hll, lv, 8, to);
    shmem_p(&gi[20], me + 5, to);
    shmem_double_p(&gd[30], 1.5 * me, to);
    shmem_barrier_all();
    for (int i = 0; i < 8; i++) {
        ST_CHECK(gd[8 + i] == from + i * 0.25, "double %d: %g", i, gd[8 + i]);
        ST_CHECK(gi[i] == from * 100 + i, "int %d: %d", i, gi[i]);
        ST_CHECK(hs[i] == (short)(from - i), "short %d: %d", i, hs[i]);
        ST_CHECK(hll[i] == ((long long)from << 40) + i, "long long %d", i);
    }
    ST_CHECK(gi[20] == from + 5 && gd[30] == 1.5 * from, "p: %d %g", gi[20], gd[30]);
    ST_CHECK(shmem_g(&gi[20], to) == me + 5, "g from PE %d: %d", to, shmem_g(&gi[20], to));
    ST_CHECK(shmem_double_g(&gd[30], to) == 1.5 * me, "double g");
    int ib[8] = {0};
    shmem_get(ib, gi, 8, to);
    for (int i = 0; i < 8; i++)
        ST_CHECK(ib[i] == me * 100 + i, "generic get %d: %d", i, ib[i]);
    shmem_barrier_all();

    st_phase = "put8..put128, iput/iget";
    uint8_t b16[32];
    for (int i = 0; i < 32; i++)
        b16[i] = pat(me, 9, i);
    shmem_put8(heap, b16, 32, to);
    shmem_put16(heap + 32, b16, 16, to);
    shmem_put32(heap + 64, b16, 8, to);
    shmem_put64(heap + 96, b16, 4, to);
    shmem_put128(heap + 128, b16, 2, to);
    shmem_barrier_all();
    for (int k = 0; k < 5; k++)
        for (int i = 0; i < 32; i++)
            ST_CHECK(heap[32 * k + i] == pat(from, 9, i), "sized put %d byte %d", k, i);
    int src[20];
    for (int i = 0; i < 20; i++)
        src[i] = me * 1000 + i;
    memset(gi, 0, sizeof gi);
    shmem_barrier_all();
    shmem_int_iput(gi, src, 3, 2, 10, to);  /* every 2nd element to every 3rd */
    shmem_barrier_all();
    for (int i = 0; i < 10; i++)
        ST_CHECK(gi[3 * i] == from * 1000 + 2 * i, "iput element %d: %d", i, gi[3 * i]);
    ST_CHECK(gi[1] == 0 && gi[2] == 0, "iput wrote between the strides");
    int dst[10] = {0};
    shmem_iget(dst, gi, 1, 3, 10, to);
    for (int i = 0; i < 10; i++)
        ST_CHECK(dst[i] == me * 1000 + 2 * i, "iget element %d: %d", i, dst[i]);
    shmem_barrier_all();

    st_phase = "nbi + quiet, 1 MiB";
    for (size_t i = 0; i < BIG; i++)
        buf[i] = pat(me, to, i);
    shmem_putmem_nbi(heap, buf, BIG, to);
    shmem_putmem_nbi(gbig, buf, BIG, to);
    shmem_quiet();
    shmem_barrier_all();
    for (size_t i = 0; i < BIG; i++) {
        if (heap[i] != pat(from, me, i) || gbig[i] != pat(from, me, i)) {
            ST_CHECK(0, "large put byte %zu: heap %u global %u, expected %u", i, heap[i], gbig[i], pat(from, me, i));
            break;
        }
    }
    memset(buf, 0, BIG);
    shmem_getmem_nbi(buf, gbig, BIG, to);
    shmem_quiet();
    for (size_t i = 0; i < BIG; i++)
        if (buf[i] != pat(me, to, i)) {
            ST_CHECK(0, "large get byte %zu", i);
            break;
        }
    shmem_barrier_all();

    st_phase = "fence";
    /* the hard case: data into global variables (frames, or single copy) and the flag into the
     * heap (a store, for PEs of this host) */
    long *hflag = shmem_malloc(sizeof(long));
    *hflag = 0;
    gflag = 0;
    memset(gd, 0, sizeof gd);
    shmem_barrier_all();
    for (int r = 1; r <= 20; r++) {
        double v[16];
        for (int i = 0; i < 16; i++)
            v[i] = r * 100.0 + i;
        shmem_double_put(gd, v, 16, to);
        shmem_fence();
        shmem_long_p(r % 2 ? hflag : &gflag, r, to);
        shmem_long_wait_until(r % 2 ? hflag : &gflag, SHMEM_CMP_GE, r);
        for (int i = 0; i < 16; i++)
            ST_CHECK(gd[i] >= r * 100.0 + i, "fence round %d: element %d is %g, the flag came first", r, i, gd[i]);
        shmem_barrier_all();
    }
    shmem_free(hflag);
    shmem_free(heap);
    shmem_free(hs);
    shmem_free(hll);
    free(buf);
    return st_end();
}
