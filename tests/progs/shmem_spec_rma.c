/*
 * shmem_spec_rma.c — the scenarios of the OpenSHMEM 1.5 specification's set-up and RMA examples
 * (hello-openshmem, shmem_mype/npes/init/finalize, writing_shmem, shmem_put, shmem_p, shmem_g,
 * shmem_iput, shmem_ptr, shmem_fence, shmem_quiet, shmem_put_signal), rewritten so that every PE
 * checks exact values that crossed processes: each example's transfer runs around the ring
 * (every PE a sender and a receiver) instead of from PE 0 to PE 1 only.
 */
#include <stdint.h>
#include "shmtest.h"

#define FENCE_ROUNDS 40
#define SIG_WORDS 2048

static int g_ids[1024];       /* hello: each PE's number in PE 0's slot for it */
static int g_targ;            /* init example: 33 from PE 0 */
static short g_wdest[16];     /* writing_shmem: 16 shorts from PE 0 */
static long g_dest[10];       /* put example */
static long g_x;              /* g example: 10101 + owner */
static short g_idest[10];     /* iput example */
static int g_pdest[4];        /* ptr example */
static long g_fdata[FENCE_ROUNDS][10];
static int g_fflag;           /* fence: round number after the data */
static long g_qdest[3];       /* quiet example */
static int g_qtarg;
static uint64_t g_sig;        /* put_signal example */

/* hello, mype, npes, init, finalize: every PE reports its number to PE 0, which sees them all */
static void hello(int me, int n)
{
    st_phase = "hello / my_pe / n_pes";
    ST_CHECK(n <= 1024, "too many PEs for the test: %d", n);
    shmem_int_p(&g_ids[me], me + 1, 0);
    shmem_barrier_all();
    if (me == 0)
        for (int pe = 0; pe < n; pe++)
            ST_CHECK(g_ids[pe] == pe + 1, "PE %d reported %d", pe, g_ids[pe] - 1);
    st_phase = "init example";
    int receiver = 1 % n;
    if (me == 0) {
        int src = 33;
        shmem_put(&g_targ, &src, 1, receiver);
    }
    shmem_barrier_all();
    if (me == receiver)
        ST_CHECK(g_targ == 33, "targ = %d, expected 33", g_targ);
}

/* writing_shmem: PE 0 puts 16 shorts into every other PE */
static void writing(int me, int n)
{
    st_phase = "writing_shmem example";
    short source[16];
    for (int i = 0; i < 16; i++)
        source[i] = (short)(i * 7 + 1);
    if (me == 0)
        for (int pe = 1; pe < n; pe++)
            shmem_put(g_wdest, source, 16, pe);
    shmem_barrier_all();
    for (int i = 0; me != 0 && i < 16; i++)
        ST_CHECK(g_wdest[i] == i * 7 + 1, "dest[%d] = %d", i, g_wdest[i]);
}

/* put, p, g, iput: each PE sends to the next one, reads from the previous one */
static void put_p_g_iput(int me, int n)
{
    int to = (me + 1) % n, from = (me + n - 1) % n;
    st_phase = "put example";
    long source[10];
    for (int i = 0; i < 10; i++)
        source[i] = me * 100L + i + 1;
    shmem_put(g_dest, source, 10, to);
    shmem_barrier_all();
    for (int i = 0; i < 10; i++)
        ST_CHECK(g_dest[i] == from * 100L + i + 1, "dest[%d] = %ld from PE %d", i, g_dest[i], from);

    st_phase = "p example";
    double *f = shmem_malloc(sizeof *f);
    ST_CHECK(f != NULL, "shmem_malloc(double)");
    *f = 3.1415927;
    shmem_barrier_all();
    const double e = 2.71828182;
    shmem_p(f, e + me, to);
    shmem_barrier_all();
    ST_CHECK(*f == e + from, "f = %.10f, expected %.10f", *f, e + from);
    shmem_free(f);

    st_phase = "g / finalize example";
    g_x = 10101 + me;
    shmem_barrier_all();
    long y = shmem_g(&g_x, from);
    ST_CHECK(y == 10101 + from, "g from PE %d: %ld", from, y);
    long z = shmem_long_g(&g_x, n - 1);
    ST_CHECK(z == 10101 + n - 1, "g from the last PE: %ld", z);

    st_phase = "iput example";
    short src[10];
    for (int i = 0; i < 10; i++)
        src[i] = (short)(me * 10 + i + 1);
    shmem_iput(g_idest, src, 1, 2, 5, to); /* every other source element into 5 consecutive ones */
    shmem_barrier_all();
    for (int i = 0; i < 5; i++)
        ST_CHECK(g_idest[i] == from * 10 + 2 * i + 1, "idest[%d] = %d", i, g_idest[i]);
    for (int i = 5; i < 10; i++)
        ST_CHECK(g_idest[i] == 0, "idest[%d] = %d written past the 5 elements", i, g_idest[i]);
    short back[10] = {0};
    shmem_short_iget(back, g_idest, 2, 1, 5, to); /* and back, spread out */
    for (int i = 0; i < 5; i++)
        ST_CHECK(back[2 * i] == me * 10 + 2 * i + 1 && back[2 * i + 1] == 0, "iget back[%d] = %d", 2 * i,
                 back[2 * i]);
    shmem_barrier_all();
}

/* ptr example: a direct store through shmem_ptr where the PE shares memory, a put elsewhere */
static void ptr(int me, int n)
{
    st_phase = "ptr example";
    int to = (me + 1) % n, from = (me + n - 1) % n;
    int *p = shmem_ptr(g_pdest, to);
    int vals[4];
    for (int i = 0; i < 4; i++)
        vals[i] = me * 4 + i + 1;
    if (p)
        for (int i = 0; i < 4; i++)
            p[i] = vals[i];
    else
        shmem_put(g_pdest, vals, 4, to);
    shmem_barrier_all();
    for (int i = 0; i < 4; i++)
        ST_CHECK(g_pdest[i] == from * 4 + i + 1, "dest[%d] = %d (through %s)", i, g_pdest[i],
                 p ? "a pointer" : "a put");
}

/* fence example: data then (fence) a flag to the next PE, round after round; whoever sees the
 * flag of a round must see that round's data complete */
static void fence(int me, int n)
{
    st_phase = "fence example";
    int to = (me + 1) % n, from = (me + n - 1) % n;
    for (int r = 1; r <= FENCE_ROUNDS; r++) {
        long source[10];
        for (int i = 0; i < 10; i++)
            source[i] = (long)me * 100000 + r * 100 + i;
        shmem_put(g_fdata[r - 1], source, 10, to);
        shmem_fence();
        shmem_int_p(&g_fflag, r, to);
        shmem_int_wait_until(&g_fflag, SHMEM_CMP_GE, r);
        for (int i = 0; i < 10; i++)
            ST_CHECK(g_fdata[r - 1][i] == (long)from * 100000 + r * 100 + i,
                     "round %d: data[%d] = %ld after the flag", r, i, g_fdata[r - 1][i]);
    }
    shmem_barrier_all();
}

/* quiet example: puts to two PEs, quiet, then gets read the updated values back */
static void quiet(int me, int n)
{
    st_phase = "quiet example";
    int a = (me + 1) % n, b = (me + 2) % n;
    shmem_barrier_all();
    if (me == 0) {
        long source[3] = {1, 2, 3};
        int src = 90;
        shmem_long_put(g_qdest, source, 3, a);
        shmem_int_put(&g_qtarg, &src, 1, b);
        shmem_quiet();
        long x[3] = {0};
        int y = 0;
        shmem_long_get(x, g_qdest, 3, a);
        shmem_int_get(&y, &g_qtarg, 1, b);
        ST_CHECK(x[0] == 1 && x[1] == 2 && x[2] == 3, "x = {%ld,%ld,%ld}", x[0], x[1], x[2]);
        ST_CHECK(y == 90, "y = %d", y);
    }
    shmem_barrier_all();
}

/* put_signal example: a broadcast along the ring, each PE forwarding what it got with a signal */
static void put_signal(int me, int n)
{
    st_phase = "put_signal example";
    uint64_t *message = malloc(SIG_WORDS * sizeof(uint64_t));
    uint64_t *data = shmem_malloc(SIG_WORDS * sizeof(uint64_t));
    ST_CHECK(message && data, "allocation");
    if (!message || !data)
        return;
    for (int i = 0; i < SIG_WORDS; i++) {
        message[i] = 0x5151000000ull + (uint64_t)i * 3;
        data[i] = 0;
    }
    g_sig = 0;
    shmem_barrier_all();
    int to = (me + 1) % n;
    if (me != 0) { /* wait for the previous PE, then pass its data on */
        shmem_uint64_wait_until(&g_sig, SHMEM_CMP_EQ, 1);
        for (int i = 0; i < SIG_WORDS; i++)
            message[i] = data[i] + 1;
    }
    shmem_putmem_signal(data, message, SIG_WORDS * sizeof(uint64_t), &g_sig, 1, SHMEM_SIGNAL_SET, to);
    if (me == 0)
        shmem_uint64_wait_until(&g_sig, SHMEM_CMP_EQ, 1);
    /* PE k got the message after k-1 increments (PE 0: after n-1) */
    uint64_t hops = me == 0 ? (uint64_t)(n - 1) : (uint64_t)(me - 1);
    for (int i = 0; i < SIG_WORDS; i++)
        if (data[i] != 0x5151000000ull + (uint64_t)i * 3 + hops) {
            ST_CHECK(0, "data[%d] = %llx after %llu hops", i, (unsigned long long)data[i],
                     (unsigned long long)hops);
            break;
        }
    ST_CHECK(shmem_signal_fetch(&g_sig) == 1, "signal %llu", (unsigned long long)shmem_signal_fetch(&g_sig));
    shmem_barrier_all();
    free(message);
    shmem_free(data);
}

int main(void)
{
    st_begin("shmem_spec_rma", 60);
    int me = shmem_my_pe(), n = shmem_n_pes();
    hello(me, n);
    writing(me, n);
    put_p_g_iput(me, n);
    ptr(me, n);
    fence(me, n);
    quiet(me, n);
    put_signal(me, n);
    return st_end();
}
