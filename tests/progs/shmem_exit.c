/*
 * shmem_exit.c — shmem_global_exit: the last PE calls shmem_global_exit(3) while the others wait
 * in shmem_wait_until for a word nobody sets; every PE must end with status 3 (the waiting ones
 * through the exit request their progress serves), none may report the time limit.
 */
#include "shmtest.h"

static long never;

int main(void)
{
    st_begin("shmem_exit", 30);
    int me = shmem_my_pe(), n = shmem_n_pes();
    shmem_barrier_all();
    if (me == n - 1) {
        printf("PE %d calls shmem_global_exit(3)\n", me);
        fflush(stdout);
        shmem_global_exit(3);
    }
    st_phase = "waiting for a word nobody sets";
    shmem_long_wait_until(&never, SHMEM_CMP_NE, 0);
    fprintf(stderr, "shmem_exit: PE %d: FAIL: the wait ended\n", me);
    return 1;
}
