/*
 * shmem_spec_pshmem.c — the scenario of the OpenSHMEM 1.5 specification's profiling example
 * (pshmem_example.c): a tool defines shmem_long_put itself, counts the calls and forwards them to
 * the name-shifted pshmem_long_put. The program's calls — typed and through the C11 generic
 * shmem_put — reach the wrapper, a direct pshmem_long_put call does not, and the data arrives
 * either way. shmem_pcontrol is called at each level the specification names.
 */
#include <pshmem.h>
#include "shmtest.h"

static long g_wrapped_calls, g_wrapped_elems;
static long g_dest[64];

/* the tool's wrapper (as the example's, minus its timing) */
void shmem_long_put(long *dest, const long *source, size_t nelems, int pe)
{
    g_wrapped_calls++;
    g_wrapped_elems += (long)nelems;
    pshmem_long_put(dest, source, nelems, pe);
}

int main(void)
{
    st_begin("shmem_spec_pshmem", 60);
    int me = shmem_my_pe(), n = shmem_n_pes(), to = (me + 1) % n, from = (me + n - 1) % n;
    long src[64];
    for (int i = 0; i < 64; i++)
        src[i] = me * 1000L + i;

    st_phase = "calls through the wrapper";
    shmem_pcontrol(1);
    shmem_long_put(g_dest, src, 16, to);          /* typed name */
    shmem_put(&g_dest[16], &src[16], 16, to);      /* the generic one selects shmem_long_put */
    shmem_barrier_all();
    ST_CHECK(g_wrapped_calls == 2 && g_wrapped_elems == 32, "wrapper saw %ld calls, %ld elements",
             g_wrapped_calls, g_wrapped_elems);

    st_phase = "a direct pshmem call bypasses the wrapper";
    shmem_pcontrol(0);
    pshmem_long_put(&g_dest[32], &src[32], 32, to);
    pshmem_barrier_all();
    shmem_pcontrol(2);
    ST_CHECK(g_wrapped_calls == 2, "wrapper saw %ld calls after a pshmem call", g_wrapped_calls);
    for (int i = 0; i < 64; i++)
        ST_CHECK(g_dest[i] == from * 1000L + i, "dest[%d] = %ld", i, g_dest[i]);
    shmem_pcontrol(1);
    return st_end();
}
