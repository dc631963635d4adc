/*
 * shmem_pshmem_tool.c — a profiling tool built into an OpenSHMEM program, as OpenSHMEM 1.5's
 * section 10 describes: it defines shmem_putmem, shmem_long_atomic_fetch_add and shmem_barrier_all,
 * counts the calls and forwards them to the pshmem_ names. Checks that the tool's definitions win
 * (the counts), that the data still moves (every byte checked on its target), and that the
 * library's own internal calls do not reach the tool (shmem_long_put and shmem_malloc use the
 * put and barrier inside the library: the counts stay exactly what the program called).
 */
#include <pshmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long n_putmem, n_fadd, n_barrier;

void shmem_putmem(void *dest, const void *source, size_t nelems, int pe)
{
    n_putmem++;
    pshmem_putmem(dest, source, nelems, pe);
}

long shmem_long_atomic_fetch_add(long *dest, long value, int pe)
{
    n_fadd++;
    return pshmem_long_atomic_fetch_add(dest, value, pe);
}

void shmem_barrier_all(void)
{
    n_barrier++;
    pshmem_barrier_all();
}

static long counter;

static unsigned char byte_of(int pe, size_t i) { return (unsigned char)(pe * 131 + i * 7 + 1); }

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    enum { LEN = 4096 };
    unsigned char *buf = shmem_malloc(LEN), *buf2 = shmem_malloc(LEN); /* barriers inside: not counted */
    long *lbuf = shmem_malloc(64 * sizeof(long));
    unsigned char src[LEN];
    long lsrc[64];
    for (size_t i = 0; i < LEN; i++)
        src[i] = byte_of(me, i);
    for (int i = 0; i < 64; i++)
        lsrc[i] = me * 1000L + i;
    int right = (me + 1) % n, left = (me + n - 1) % n;
    shmem_putmem(buf, src, LEN, right);                 /* 1 counted put */
    shmem_long_put(lbuf, lsrc, 64, right);              /* the library's own path: not counted */
    shmem_putmem(buf2, src, LEN / 2, right);            /* 2 */
    (void)shmem_long_atomic_fetch_add(&counter, me + 1, 0);
    shmem_barrier_all();                                /* 1 counted barrier */
    int bad = 0;
    for (size_t i = 0; i < LEN; i++)
        bad += buf[i] != byte_of(left, i) || (i < LEN / 2 && buf2[i] != byte_of(left, i));
    for (int i = 0; i < 64; i++)
        bad += lbuf[i] != left * 1000L + i;
    if (me == 0 && counter != (long)n * (n + 1) / 2)
        bad++, fprintf(stderr, "PE 0: counter %ld, expected %ld\n", counter, (long)n * (n + 1) / 2);
    if (n_putmem != 2 || n_fadd != 1 || n_barrier != 1)
        bad++, fprintf(stderr, "PE %d: tool counted putmem %ld (2), fetch_add %ld (1), barrier %ld (1)\n", me,
                       n_putmem, n_fadd, n_barrier);
    if (bad)
        fprintf(stderr, "PE %d: %d wrong\n", me, bad);
    static long all_bad, mine;
    mine = bad;
    shmem_long_sum_reduce(SHMEM_TEAM_WORLD, &all_bad, &mine, 1);
    if (me == 0 && all_bad == 0)
        printf("shmem_pshmem_tool ok: %d PEs\n", n);
    shmem_finalize();
    return all_bad ? 1 : 0;
}
