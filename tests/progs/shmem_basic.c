/*
 * shmem_basic.c — OpenSHMEM 1.5 set-up, queries and the symmetric heap: my_pe/n_pes and their
 * 1.x spellings, info_get_*, pe_accessible and addr_accessible (heap, globals, a stack address
 * that is not symmetric), shmem_ptr (usable pointers for PEs sharing memory, NULL otherwise),
 * team queries, shmem_malloc/calloc/align/realloc/free (NULL for size 0; zero-filled calloc;
 * alignment; realloc keeps the contents; every allocation is symmetric: a put to another PE's
 * copy lands in the object it names there).
 */
#include <stdint.h>
#include "shmtest.h"

static int gvar[16];

int main(void)
{
    st_begin("shmem_basic", 60);
    int me = shmem_my_pe(), n = shmem_n_pes();
    st_phase = "queries";
    ST_CHECK(n >= 1 && me >= 0 && me < n, "my_pe %d n_pes %d", me, n);
    ST_CHECK(_my_pe() == me && _num_pes() == n, "1.x spellings disagree");
    int major = 0, minor = 0;
    char name[SHMEM_MAX_NAME_LEN];
    shmem_info_get_version(&major, &minor);
    shmem_info_get_name(name);
    ST_CHECK(major == 1 && minor == 5, "version %d.%d", major, minor);
    ST_CHECK(strlen(name) > 0 && strlen(name) < SHMEM_MAX_NAME_LEN, "name '%s'", name);
    for (int pe = 0; pe < n; pe++)
        ST_CHECK(shmem_pe_accessible(pe), "PE %d not accessible", pe);
    ST_CHECK(!shmem_pe_accessible(n) && !shmem_pe_accessible(-1), "PE %d / -1 accessible", n);
    int local = 0;
    for (int pe = 0; pe < n; pe++) {
        ST_CHECK(shmem_addr_accessible(gvar, pe), "global not accessible on PE %d", pe);
        ST_CHECK(!shmem_addr_accessible(&local, pe), "a stack address is accessible on PE %d", pe);
    }
    ST_CHECK(shmem_team_my_pe(SHMEM_TEAM_WORLD) == me && shmem_team_n_pes(SHMEM_TEAM_WORLD) == n, "world team");
    int ns = shmem_team_n_pes(SHMEM_TEAM_SHARED), ms = shmem_team_my_pe(SHMEM_TEAM_SHARED);
    ST_CHECK(ns >= 1 && ns <= n && ms >= 0 && ms < ns, "shared team %d of %d", ms, ns);
    ST_CHECK(shmem_team_translate_pe(SHMEM_TEAM_SHARED, ms, SHMEM_TEAM_WORLD) == me, "translate");
    int provided = -1;
    shmem_query_thread(&provided);
    ST_CHECK(provided >= SHMEM_THREAD_SINGLE, "thread level %d", provided);

    st_phase = "malloc";
    ST_CHECK(shmem_malloc(0) == NULL, "shmem_malloc(0) is not NULL");
    long *a = shmem_malloc(100 * sizeof(long));
    ST_CHECK(a != NULL, "shmem_malloc(800) failed");
    ST_CHECK(shmem_addr_accessible(a, (me + 1) % n), "heap object not accessible");
    for (int i = 0; i < 100; i++)
        a[i] = -1;
    shmem_barrier_all();
    long mine[100];
    for (int i = 0; i < 100; i++)
        mine[i] = me * 1000 + i;
    shmem_long_put(a, mine, 100, (me + 1) % n);
    shmem_barrier_all();
    int from = (me + n - 1) % n;
    for (int i = 0; i < 100; i++)
        ST_CHECK(a[i] == from * 1000 + i, "a[%d] = %ld, expected %d", i, a[i], from * 1000 + i);

    st_phase = "shmem_ptr";
    for (int pe = 0; pe < n; pe++) {
        long *p = shmem_ptr(a, pe);
        if (pe == me)
            ST_CHECK(p == a, "shmem_ptr to myself is %p, not %p", (void *)p, (void *)a);
        if (p) /* usable: read what the put left there */
            ST_CHECK(p[5] == ((pe + n - 1) % n) * 1000 + 5, "through shmem_ptr PE %d: %ld", pe, p[5]);
    }
    ST_CHECK(shmem_ptr(&local, me) == NULL, "shmem_ptr of a stack address");

    st_phase = "calloc, align, realloc";
    int *z = shmem_calloc(1000, sizeof(int));
    ST_CHECK(z != NULL, "calloc failed");
    for (int i = 0; z && i < 1000; i++)
        if (z[i]) {
            ST_CHECK(0, "calloc'ed element %d is %d", i, z[i]);
            break;
        }
    double *al = shmem_align(4096, 3 * sizeof(double));
    ST_CHECK(al && ((uintptr_t)al % 4096) == 0, "shmem_align(4096): %p", (void *)al);
    ST_CHECK(shmem_align(3, 8) == NULL, "alignment 3 accepted");
    for (int i = 0; i < 100; i++)
        a[i] = me + i;
    long *b = shmem_realloc(a, 5000 * sizeof(long));
    ST_CHECK(b != NULL, "realloc failed");
    for (int i = 0; b && i < 100; i++)
        ST_CHECK(b[i] == me + i, "realloc lost element %d: %ld", i, b[i]);
    b[4999] = me;
    shmem_barrier_all();
    long got = shmem_long_g(&b[4999], (me + 1) % n);
    ST_CHECK(got == (me + 1) % n, "element 4999 of the moved block on PE %d: %ld", (me + 1) % n, got);
    shmem_free(b);
    shmem_free(z);
    shmem_free(al);
    shmem_free(NULL);
    /* freed space is reused: the heap does not run out over many rounds */
    for (int r = 0; r < 40; r++) {
        char *big = shmem_malloc(1u << 20);
        ST_CHECK(big != NULL, "round %d: 1 MiB not allocated", r);
        shmem_free(big);
    }
    return st_end();
}
