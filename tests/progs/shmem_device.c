/*
 * shmem_device.c — the OpenSHMEM device symmetric heap (issue 31, part 1): blocks from
 * shmem_malloc_with_hints(..., SHMEMX_MALLOC_DEVICE), or from plain shmem_malloc / shmem_calloc
 * with WAITIO_SHMEM_HEAP=device (argument --env-heap), are GPU memory; run by
 * tests/gpu/ci_rma.sh with the fake CUDA driver (device memory is PROT_NONE to the CPU: a host
 * load or store of it crashes) and by tests/gpu/run.sh with the real one.
 *   1  puts and gets of random sizes to the next PE, host buffers, every byte read back
 *   2  device source and destination buffers (a second device block of this PE)
 *   3  fetch-add on PE 0 and compare-and-swap increments on the last PE from every PE, totals
 *   4  wait_until on a device word that the previous PE increments; shmem_signal_fetch
 *   5  shmem_ptr: the device address on this PE, NULL for the others
 *   6  shmem_calloc (with --env-heap): zeroed device memory; shmem_realloc keeps the contents
 * With --expect-nodevice (no CUDA driver): the device allocation gives NULL on every PE and the
 * host heap still works. Prints "shmem_device ok: N PEs".
 */
#include <stdint.h>
#include "shmtest.h"

#define BLOCK (1u << 20)

static uint8_t byte_at(int pe, int iter, size_t k) { return (uint8_t)((size_t)pe * 131u + (size_t)iter * 17u + k * 7u + (k >> 9)); }

static void *dev_alloc(size_t size, int env_heap)
{
    return env_heap ? shmem_malloc(size) : shmem_malloc_with_hints(size, SHMEMX_MALLOC_DEVICE);
}

int main(int argc, char **argv)
{
    int env_heap = 0, nodevice = 0;
    for (int i = 1; i < argc; i++) {
        env_heap |= !strcmp(argv[i], "--env-heap");
        nodevice |= !strcmp(argv[i], "--expect-nodevice");
    }
    st_begin("shmem_device", 60);
    int me = shmem_my_pe(), n = shmem_n_pes(), t = (me + 1) % n, prev = (me + n - 1) % n;
    uint8_t *host = malloc(BLOCK), *back = malloc(BLOCK);
    if (!host || !back)
        return 1;
    if (nodevice) {
        st_phase = "no device";
        void *d = shmem_malloc_with_hints(4096, SHMEMX_MALLOC_DEVICE);
        ST_CHECK(d == NULL, "a device block without a CUDA driver: %p, expected NULL", d);
        uint8_t *h = shmem_malloc(4096);
        ST_CHECK(h != NULL, "the host heap after a refused device block");
        if (h) {
            for (size_t k = 0; k < 4096; k++)
                host[k] = byte_at(me, 0, k);
            shmem_putmem(h, host, 4096, t);
            shmem_getmem(back, h, 4096, t);
            ST_CHECK(!memcmp(back, host, 4096), "host heap put/get after a refused device block");
            shmem_free(h);
        }
        free(host);
        free(back);
        return st_end();
    }
    uint8_t *dev = dev_alloc(BLOCK, env_heap), *scratch = dev_alloc(BLOCK, env_heap);
    int64_t *ctr = dev_alloc(64, env_heap);
    if (!dev || !scratch || !ctr) {
        ST_CHECK(0, "device blocks: %p %p %p", (void *)dev, (void *)scratch, (void *)ctr);
        return st_end();
    }

    st_phase = "1: host buffers";
    unsigned rnd = 777u + (unsigned)me;
    for (int it = 0; it < 12; it++) {
        rnd = rnd * 1103515245u + 12345u;
        size_t len = it % 4 == 0 ? rnd % 64 : rnd % BLOCK;
        rnd = rnd * 1103515245u + 12345u;
        size_t off = rnd % (BLOCK - len + 1);
        for (size_t k = 0; k < len; k++)
            host[k] = byte_at(me, it, k);
        if (it % 2)
            shmem_putmem(dev + off, host, len, t);
        else {
            shmem_putmem_nbi(dev + off, host, len, t);
            shmem_quiet();
        }
        memset(back, 0, len);
        shmem_getmem(back, dev + off, len, t);
        ST_CHECK(!memcmp(back, host, len), "iteration %d: %zu bytes at %zu read back differ", it, len, off);
    }
    shmem_barrier_all();

    st_phase = "2: device source and destination";
    for (size_t k = 0; k < BLOCK / 2; k++)
        host[k] = byte_at(me, 50, k);
    shmem_putmem(scratch, host, BLOCK / 2, me);                  /* host -> own device block */
    shmem_putmem(dev, scratch, BLOCK / 2, t);                    /* device source -> next PE */
    shmem_getmem(scratch + BLOCK / 2, dev, BLOCK / 2, t);        /* next PE -> device dest */
    shmem_getmem(back, scratch + BLOCK / 2, BLOCK / 2, me);      /* own device block -> host */
    ST_CHECK(!memcmp(back, host, BLOCK / 2), "device to device round trip differs");
    shmem_barrier_all();
    for (size_t k = 0; k < BLOCK / 2; k++)
        host[k] = byte_at(prev, 50, k);
    shmem_getmem(back, dev, BLOCK / 2, me);                      /* what the previous PE left here */
    ST_CHECK(!memcmp(back, host, BLOCK / 2), "the previous PE's device-source put differs here");

    st_phase = "3: atomics";
    const int k = 30;
    for (int i = 0; i < k; i++) {
        (void)shmem_int64_atomic_fetch_add(&ctr[0], me + 1, 0);
        uint64_t *cw = (uint64_t *)(void *)&ctr[1];
        uint64_t cur = shmem_uint64_atomic_fetch(cw, n - 1);
        for (;;) {
            uint64_t got = shmem_uint64_atomic_compare_swap(cw, cur, cur + 1, n - 1);
            if (got == cur)
                break;
            cur = got;
        }
    }
    shmem_barrier_all();
    int64_t want = 0;
    for (int r = 0; r < n; r++)
        want += (int64_t)(r + 1) * k;
    int64_t v0 = shmem_int64_g(&ctr[0], 0), v1 = shmem_int64_g(&ctr[1], n - 1);
    ST_CHECK(v0 == want, "fetch-add total %lld, expected %lld", (long long)v0, (long long)want);
    ST_CHECK(v1 == (int64_t)k * n, "compare-and-swap total %lld, expected %lld", (long long)v1, (long long)k * n);

    st_phase = "4: wait_until on a device word";
    shmem_int64_atomic_add(&ctr[2], 5, t);
    shmem_int64_wait_until(&ctr[2], SHMEM_CMP_GE, 5);
    shmem_putmem_signal(dev, host, 64, (uint64_t *)(void *)&ctr[3], 9, SHMEM_SIGNAL_SET, t);
    uint64_t sig = shmem_signal_wait_until((uint64_t *)(void *)&ctr[3], SHMEM_CMP_EQ, 9);
    ST_CHECK(sig == 9, "signal %llu, expected 9", (unsigned long long)sig);
    ST_CHECK(shmem_signal_fetch((uint64_t *)(void *)&ctr[3]) == 9, "shmem_signal_fetch of a device word");
    shmem_barrier_all();

    st_phase = "5: shmem_ptr";
    ST_CHECK(shmem_ptr(dev, me) == dev, "shmem_ptr on this PE is not the device address");
    if (n > 1)
        ST_CHECK(shmem_ptr(dev, t) == NULL, "shmem_ptr of another PE's device block is not NULL");

    if (env_heap) {
        st_phase = "6: shmem_calloc and shmem_realloc";
        uint8_t *z = shmem_calloc(1000, 3);
        ST_CHECK(z != NULL, "shmem_calloc on the device heap");
        if (z) {
            memset(host, 1, 3000);
            shmem_getmem(host, z, 3000, t);
            size_t nz = 0;
            for (size_t i = 0; i < 3000; i++)
                nz += host[i] != 0;
            ST_CHECK(nz == 0, "shmem_calloc: %zu bytes of the next PE's block are not zero", nz);
            shmem_barrier_all(); /* every PE looked before any writes its own */
            for (size_t i = 0; i < 3000; i++)
                host[i] = byte_at(me, 60, i);
            shmem_putmem(z, host, 3000, me);
            uint8_t *z2 = shmem_realloc(z, 6000);
            ST_CHECK(z2 != NULL, "shmem_realloc on the device heap");
            if (z2) {
                shmem_getmem(back, z2, 3000, me);
                ST_CHECK(!memcmp(back, host, 3000), "shmem_realloc lost the contents");
                shmem_free(z2);
            }
        }
    }
    shmem_free(ctr);
    shmem_free(scratch);
    shmem_free(dev);
    free(host);
    free(back);
    return st_end();
}
