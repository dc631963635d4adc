/*
 * shmem_spec_amo.c — the scenarios of the OpenSHMEM 1.5 specification's atomic examples
 * (shmem_atomic_add, _fetch_add, _fetch_inc, _inc, _compare_swap, _swap; the older examples with
 * the deprecated names shmem_fadd, shmem_finc, shmem_inc, shmem_add, shmem_cswap, shmem_swap and
 * their typed forms; and well-defined versions of the memory model's amo_scenario_2..4, whose
 * own text is undefined behaviour). Every PE takes part and the totals are exact: sums, the
 * permutation of fetched values, exactly one compare-and-swap winner.
 */
#include <stdint.h>
#include "shmtest.h"

static int g_dst;
static int g_olds[1024];
static int g_race = -1;
static long g_swap;
static uint64_t g_or64;
static uint32_t g_or32;
static int g_x, g_y;
static long g_psync[SHMEM_REDUCE_SYNC_SIZE];
static int g_pwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static int g_winners;

/* every PE's fetched value, gathered on every PE (they are checked as a set) */
static void gather(int me, int n, int old)
{
    for (int pe = 0; pe < n; pe++)
        shmem_int_p(&g_olds[me], old, pe);
    shmem_barrier_all();
}

static void reset(int value)
{
    shmem_barrier_all();
    g_dst = value;
    shmem_barrier_all();
}

/* add and fetch_add: the final value is exact; the fetched values chain (sorted by value, each
 * is the previous plus the previous adder's increment) */
static void add_fetch_add(int me, int n)
{
    st_phase = "atomic_add example";
    reset(22);
    if (me != 0)
        shmem_atomic_add(&g_dst, 44, 0);
    shmem_barrier_all();
    if (me == 0)
        ST_CHECK(g_dst == 22 + 44 * (n - 1), "dst = %d, expected %d", g_dst, 22 + 44 * (n - 1));
    else
        ST_CHECK(g_dst == 22, "dst on PE %d = %d", me, g_dst);

    st_phase = "atomic_fetch_add example";
    reset(22);
    int old = shmem_atomic_fetch_add(&g_dst, me + 1, 0);
    shmem_barrier_all();
    gather(me, n, old);
    int final = 22 + n * (n + 1) / 2;
    if (me == 0)
        ST_CHECK(g_dst == final, "dst = %d, expected %d", g_dst, final);
    int at = 22, used = 0;
    while (used < n) { /* follow the chain from 22: exactly one PE fetched each link */
        int who = -1;
        for (int pe = 0; pe < n; pe++)
            if (g_olds[pe] == at)
                who = who < 0 ? pe : -2;
        ST_CHECK(who >= 0, "fetched values do not chain at %d (%s)", at, who == -2 ? "twice" : "missing");
        if (who < 0)
            break;
        at += who + 1;
        used++;
    }
    ST_CHECK(used < n || at == final, "chain ends at %d", at);
}

/* fetch_inc and inc: the fetched values are a permutation of 22..22+n-1 */
static void inc_fetch_inc(int me, int n)
{
    st_phase = "atomic_fetch_inc example";
    reset(22);
    int old = shmem_atomic_fetch_inc(&g_dst, 0);
    shmem_barrier_all();
    gather(me, n, old);
    for (int v = 22; v < 22 + n; v++) {
        int k = 0;
        for (int pe = 0; pe < n; pe++)
            k += g_olds[pe] == v;
        ST_CHECK(k == 1, "value %d fetched %d times", v, k);
    }
    if (me == 0)
        ST_CHECK(g_dst == 22 + n, "dst = %d", g_dst);

    st_phase = "atomic_inc example";
    reset(74);
    shmem_atomic_inc(&g_dst, 0);
    shmem_barrier_all();
    if (me == 0)
        ST_CHECK(g_dst == 74 + n, "dst = %d, expected %d", g_dst, 74 + n);
}

/* compare_swap example: all race for -1 -> me; exactly one wins and its number stays */
static void cswap_race(int me, int n, int deprecated)
{
    st_phase = deprecated ? "cswap example (deprecated names)" : "atomic_compare_swap example";
    shmem_barrier_all();
    g_race = -1;
    g_winners = 0;
    shmem_barrier_all();
    int oldval = deprecated ? shmem_cswap(&g_race, -1, me, 0) : shmem_atomic_compare_swap(&g_race, -1, me, 0);
    if (oldval == -1)
        shmem_int_atomic_inc(&g_winners, 0);
    else
        ST_CHECK(oldval >= 0 && oldval < n, "lost to %d", oldval);
    shmem_barrier_all();
    if (me == 0) {
        ST_CHECK(g_winners == 1, "%d winners", g_winners);
        ST_CHECK(g_race >= 0 && g_race < n, "race_winner = %d", g_race);
    }
    int winner = shmem_int_atomic_fetch(&g_race, 0);
    ST_CHECK((oldval == -1) == (winner == me), "PE %d: fetched %d but the winner is %d", me, oldval, winner);
    shmem_barrier_all();
}

/* swap example: odd PEs swap their number into the next PE's word (which holds its owner's) */
static void swap(int me, int n, int deprecated)
{
    st_phase = deprecated ? "swap example (deprecated names)" : "atomic_swap example";
    shmem_barrier_all();
    g_swap = me;
    shmem_barrier_all();
    int to = (me + 1) % n, from = (me + n - 1) % n;
    if (me & 1) {
        long swapped = deprecated ? shmem_swap(&g_swap, (long)me, to) : shmem_atomic_swap(&g_swap, (long)me, to);
        ST_CHECK(swapped == to, "swapped = %ld, expected %d", swapped, to);
    }
    shmem_barrier_all();
    long expect = (from & 1) && from != me ? from : me;
    ST_CHECK(g_swap == expect, "dest = %ld, expected %ld", g_swap, expect);
}

/* the older examples, with the names deprecated in 1.4 (generic and typed) */
static void deprecated_names(int me, int n)
{
    st_phase = "fadd / add examples (deprecated)";
    reset(22);
    int old = -1;
    if (me == 1 % n)
        old = shmem_fadd(&g_dst, 44, 0);
    shmem_barrier_all();
    if (me == 1 % n)
        ST_CHECK(old == 22, "fadd old = %d", old);
    if (me == 0)
        ST_CHECK(g_dst == 66, "after fadd dst = %d", g_dst);
    shmem_barrier_all();
    shmem_int_add(&g_dst, 1, 0);
    shmem_add(&g_dst, 2, 0);
    shmem_barrier_all();
    if (me == 0)
        ST_CHECK(g_dst == 66 + 3 * n, "after add dst = %d", g_dst);

    st_phase = "finc / inc examples (deprecated)";
    reset(22);
    old = shmem_finc(&g_dst, 0);
    ST_CHECK(old >= 22 && old < 22 + n, "finc old = %d", old);
    shmem_barrier_all();
    shmem_inc(&g_dst, 0);
    shmem_int_inc(&g_dst, 0);
    shmem_barrier_all();
    if (me == 0)
        ST_CHECK(g_dst == 22 + 3 * n, "after finc/inc dst = %d", g_dst);
    int f = shmem_int_fetch(&g_dst, 0);
    ST_CHECK(f == 22 + 3 * n, "fetch = %d", f);
    shmem_barrier_all();
    if (me == 0)
        shmem_int_set(&g_dst, 5, n - 1);
    shmem_barrier_all();
    if (me == n - 1)
        ST_CHECK(g_dst == 5, "set: dst = %d", g_dst);
    long l = shmem_long_fadd(&g_swap, 0, me);
    ST_CHECK(l == g_swap, "long_fadd of 0 = %ld", l);
    cswap_race(me, n, 1);
    swap(me, n, 1);
}

/* amo_scenario_2..4 made well-defined: one type per location, no local access while atomics are
 * in flight, the reduction after a barrier */
static void scenarios(int me, int n)
{
    st_phase = "amo scenario 2 (one type per word)";
    shmem_barrier_all();
    g_or64 = 0;
    g_or32 = 0;
    shmem_barrier_all();
    shmem_uint64_atomic_or(&g_or64, (uint64_t)1 << (me % 64), 0);
    shmem_uint32_atomic_or(&g_or32, (uint32_t)1 << (me % 32), 0);
    shmem_barrier_all();
    if (me == 0 && n <= 32) {
        ST_CHECK(g_or64 == ((uint64_t)1 << n) - 1, "or64 = %llx", (unsigned long long)g_or64);
        ST_CHECK(g_or32 == (uint32_t)(((uint64_t)1 << n) - 1), "or32 = %x", g_or32);
    }

    st_phase = "amo scenario 3 (increments, then a reduction)";
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++)
        g_psync[i] = SHMEM_SYNC_VALUE;
    g_x = 0;
    g_y = -1;
    shmem_barrier_all();
    shmem_int_atomic_inc(&g_x, (me + 1) % n);
    shmem_barrier_all();
    shmem_int_sum_to_all(&g_y, &g_x, 1, 0, 0, n, g_pwrk, g_psync);
    ST_CHECK(g_x == 1 && g_y == n, "x = %d, sum = %d, expected 1 and %d", g_x, g_y, n);

    st_phase = "amo scenario 4 (local update after the atomics)";
    shmem_barrier_all();
    g_x = 0;
    shmem_barrier_all();
    if (me > 0)
        shmem_int_atomic_inc(&g_x, 0);
    shmem_barrier_all();
    if (me == 0) {
        g_x++;
        ST_CHECK(g_x == n, "x = %d, expected %d", g_x, n);
    }
    shmem_barrier_all();
}

int main(void)
{
    st_begin("shmem_spec_amo", 60);
    int me = shmem_my_pe(), n = shmem_n_pes();
    ST_CHECK(n <= 1024, "too many PEs: %d", n);
    add_fetch_add(me, n);
    inc_fetch_inc(me, n);
    cswap_race(me, n, 0);
    swap(me, n, 0);
    deprecated_names(me, n);
    scenarios(me, n);
    return st_end();
}
