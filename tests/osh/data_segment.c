/*
 * data_segment.c — OpenSHMEM's symmetric data segment: global and static variables (initialised
 * data, bss, a function's static) are remote addresses on every PE running the same executable,
 * whatever its load address. Built by tests/scripts/shmem_oshcc.sh as PIE (addresses differ per
 * process under ASLR: the layer translates by offset), as a non-PIE executable, and statically
 * linked. Prints "data_segment ok: N PEs, global addresses differ|equal".
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <shmem.h>

long initialised[32] = {1, 2, 3};   /* .data */
static double zeroed[1000];          /* .bss */
static int flags[64];

static long *counter(void)
{
    static long calls;                /* a function's static */
    return &calls;
}

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes(), to = (me + 1) % n, from = (me + n - 1) % n, bad = 0;
    long v[32];
    for (int i = 0; i < 32; i++)
        v[i] = 1000L * me + i;
    shmem_long_put(initialised, v, 32, to);
    shmem_double_p(&zeroed[999], 0.5 * me, to);
    shmem_long_atomic_add(counter(), me + 1, 0);
    shmem_int_p(&flags[me % 64], 1, 0);
    shmem_barrier_all();
    for (int i = 0; i < 32; i++)
        bad += initialised[i] != 1000L * from + i;
    bad += zeroed[999] != 0.5 * from;
    if (me == 0) {
        bad += *counter() != (long)n * (n + 1) / 2;
        for (int pe = 0; pe < n && pe < 64; pe++)
            bad += flags[pe] != 1;
    }
    bad += shmem_long_g(&initialised[5], to) != 1000L * me + 5;
    /* where each PE has its globals: different under ASLR for PIE, equal otherwise */
    static uint64_t addr, all[4096];
    addr = (uint64_t)(uintptr_t)&zeroed[0];
    shmem_uint64_fcollect(SHMEM_TEAM_WORLD, all, &addr, 1);
    int differ = 0;
    for (int pe = 1; pe < n && pe < 4096; pe++)
        differ |= all[pe] != all[0];
    static long errors, total;
    errors = bad;
    shmem_long_sum_reduce(SHMEM_TEAM_WORLD, &total, &errors, 1);
    if (me == 0 && total)
        printf("data_segment FAILED: %ld wrong values\n", total);
    else if (me == 0)
        printf("data_segment ok: %d PEs, global addresses %s\n", n, differ ? "differ" : "equal");
    shmem_finalize();
    return total ? 1 : 0;
}
