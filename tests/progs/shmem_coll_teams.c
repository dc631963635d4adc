/*
 * shmem_coll_teams.c — OpenSHMEM 1.5 collectives (section 9.9) on every kind of team: the world,
 * SHMEM_TEAM_SHARED, a stride-2 split, a reversed split (stride -1: its PE order is not the world's)
 * and the x team of a 2-D split with xrange 3 (an incomplete last row). On each: team_sync,
 * broadcast from every root (typed and mem; the root's dest too; zero elements a no-op), collect
 * with different sizes, fcollect, alltoall, alltoalls with strides (typed, mem and the generic
 * macro; the gaps untouched), every reduction of the 1.5 table (every type, every operation,
 * complex sum and product, in place, zero elements), and SHMEM_TEAM_INVALID (nonzero). Then the
 * deprecated active-set forms on the whole world, the even PEs (logPE_stride 1), the odd ones and
 * a single PE: barrier, sync, broadcast32/64 (the root's dest untouched), collect, fcollect,
 * alltoall, alltoalls (32 and 64) and every shmem_TYPE_OP_to_all, with pSync left at
 * SHMEM_SYNC_VALUE. Every element of every result is checked. With the argument "outsider", the
 * last PE calls shmem_barrier on an active set without it (it must exit with a message).
 */
#include <complex.h>
#include "shmtest.h"

#define MAXPE 8
#define NR 5

enum { K_SUM, K_PROD, K_MAX, K_MIN, K_AND, K_OR, K_XOR };

static int me, n;
static unsigned char *sbuf, *dbuf; /* symmetric scratch */
static long *lsrc, *ldst;
#define SCRATCH 4096

/* Element i of team PE p's contribution; every result fits every type (at most 8 PEs). */
static long long val(int kind, int p, int i)
{
    switch (kind) {
    case K_PROD: return (p + i) % 3 == 0 ? 2 : 1;
    case K_AND: return 0x7f & ~(1 << ((p + i) % 7));
    case K_OR: return 1 << ((p + i) % 7);
    case K_XOR: return (p * 5 + i) & 0x7f;
    default: return (p * 7 + i * 3) % 11 + 1;
    }
}

static long long expect(int kind, int size, int i)
{
    long long r = val(kind, 0, i);
    for (int p = 1; p < size; p++) {
        long long v = val(kind, p, i);
        switch (kind) {
        case K_SUM: r += v; break;
        case K_PROD: r *= v; break;
        case K_MAX: r = v > r ? v : r; break;
        case K_MIN: r = v < r ? v : r; break;
        case K_AND: r &= v; break;
        case K_OR: r |= v; break;
        default: r ^= v; break;
        }
    }
    return r;
}

/* REDUCE(T, N, OP, KIND): shmem_N_OP_reduce on `team` (as team PE tp of size), out of place and
 * in place, every element checked. */
#define REDUCE(T, N, OP, KIND)                                                                          \
    do {                                                                                                \
        T *s = (T *)(void *)sbuf, *d = (T *)(void *)dbuf;                                               \
        for (int i = 0; i < NR; i++) {                                                                  \
            s[i] = (T)val(KIND, tp, i);                                                                 \
            d[i] = (T)99;                                                                               \
        }                                                                                               \
        int rc = shmem_##N##_##OP##_reduce(team, d, s, NR);                                             \
        int rc2 = shmem_##N##_##OP##_reduce(team, s, s, NR);                                            \
        for (int i = 0; i < NR; i++)                                                                    \
            ST_CHECK(rc == 0 && rc2 == 0 && d[i] == (T)expect(KIND, size, i) && s[i] == d[i],          \
                     "%s: " #N "_" #OP "_reduce[%d] = %lld / %lld, want %lld", label, i, (long long)d[i], \
                     (long long)s[i], expect(KIND, size, i));                                           \
    } while (0)
#define ARITH(T, N) REDUCE(T, N, sum, K_SUM); REDUCE(T, N, prod, K_PROD); REDUCE(T, N, max, K_MAX); REDUCE(T, N, min, K_MIN);
#define BITWISE(T, N) REDUCE(T, N, and, K_AND); REDUCE(T, N, or, K_OR); REDUCE(T, N, xor, K_XOR);

/* complex: sum of (p + 1) + i*I, product of (1 + I) or 1 */
#define CREDUCE(T, N)                                                                                   \
    do {                                                                                                \
        T *s = (T *)(void *)sbuf, *d = (T *)(void *)dbuf;                                               \
        double _Complex wsum[NR], wprod[NR];                                                            \
        for (int i = 0; i < NR; i++) {                                                                  \
            wsum[i] = 0;                                                                                \
            wprod[i] = 1;                                                                               \
            for (int p = 0; p < size; p++) {                                                            \
                wsum[i] += (double)(p + 1) + (double)i * I;                                             \
                wprod[i] *= (p + i) % 2 ? 1.0 + 1.0 * I : 1.0;                                          \
            }                                                                                           \
            s[i] = (T)((double)(tp + 1) + (double)i * I);                                               \
        }                                                                                               \
        int rc = shmem_##N##_sum_reduce(team, d, s, NR);                                                \
        for (int i = 0; i < NR; i++)                                                                    \
            ST_CHECK(rc == 0 && d[i] == (T)wsum[i], "%s: " #N "_sum_reduce[%d] = %g%+gi", label, i,     \
                     creal(d[i]), cimag(d[i]));                                                         \
        for (int i = 0; i < NR; i++)                                                                    \
            s[i] = (tp + i) % 2 ? (T)(1.0 + 1.0 * I) : (T)1.0;                                          \
        rc = shmem_prod_reduce(team, d, s, NR); /* the generic macro */                                 \
        for (int i = 0; i < NR; i++)                                                                    \
            ST_CHECK(rc == 0 && d[i] == (T)wprod[i], "%s: " #N "_prod_reduce[%d] = %g%+gi", label, i,   \
                     creal(d[i]), cimag(d[i]));                                                         \
    } while (0)

static void reductions(shmem_team_t team, int tp, int size, const char *label)
{
    ARITH(char, char) ARITH(signed char, schar) ARITH(short, short) ARITH(int, int) ARITH(long, long)
    ARITH(long long, longlong) ARITH(ptrdiff_t, ptrdiff) ARITH(unsigned char, uchar)
    ARITH(unsigned short, ushort) ARITH(unsigned int, uint) ARITH(unsigned long, ulong)
    ARITH(unsigned long long, ulonglong) ARITH(int8_t, int8) ARITH(int16_t, int16) ARITH(int32_t, int32)
    ARITH(int64_t, int64) ARITH(uint8_t, uint8) ARITH(uint16_t, uint16) ARITH(uint32_t, uint32)
    ARITH(uint64_t, uint64) ARITH(size_t, size) ARITH(float, float) ARITH(double, double)
    ARITH(long double, longdouble)
    BITWISE(unsigned char, uchar) BITWISE(unsigned short, ushort) BITWISE(unsigned int, uint)
    BITWISE(unsigned long, ulong) BITWISE(unsigned long long, ulonglong) BITWISE(int8_t, int8)
    BITWISE(int16_t, int16) BITWISE(int32_t, int32) BITWISE(int64_t, int64) BITWISE(uint8_t, uint8)
    BITWISE(uint16_t, uint16) BITWISE(uint32_t, uint32) BITWISE(uint64_t, uint64) BITWISE(size_t, size)
    CREDUCE(float _Complex, complexf);
    CREDUCE(double _Complex, complexd);
    long *d = (long *)(void *)dbuf;
    d[0] = 42;
    ST_CHECK(shmem_long_sum_reduce(team, d, lsrc, 0) == 0 && d[0] == 42, "%s: zero-element reduce", label);
}

/* The world PE of team PE p, and the value team PE p puts at element i of what it sends to q. */
static long item(int p, int q, int i) { return p * 10000 + q * 100 + i; }

static void data_collectives(shmem_team_t team, int tp, int size, const char *label)
{
    /* broadcast from every root; the root's dest gets the data too */
    for (int root = 0; root < size; root++) {
        for (int i = 0; i < 7; i++) {
            lsrc[i] = item(tp, root, i);
            ldst[i] = -1;
        }
        ST_CHECK(shmem_long_broadcast(team, ldst, lsrc, 7, root) == 0, "%s: broadcast", label);
        for (int i = 0; i < 7; i++)
            ST_CHECK(ldst[i] == item(root, root, i), "%s: root %d element %d: %ld", label, root, i, ldst[i]);
        ldst[0] = -5;
        ST_CHECK(shmem_broadcastmem(team, ldst, lsrc, 0, root) == 0 && ldst[0] == -5, "%s: zero broadcast", label);
    }
    char *cs = (char *)sbuf, *cd = (char *)dbuf;
    snprintf(cs, 32, "from team PE %d", tp);
    ST_CHECK(shmem_broadcastmem(team, cd, cs, 32, size - 1) == 0, "%s: broadcastmem", label);
    char want[32];
    snprintf(want, sizeof want, "from team PE %d", size - 1);
    ST_CHECK(!strcmp(cd, want), "%s: broadcastmem '%s'", label, cd);

    /* collect: team PE p contributes p + 1 elements */
    for (int i = 0; i <= tp; i++)
        lsrc[i] = item(tp, 0, i);
    for (int i = 0; i < MAXPE * MAXPE; i++)
        ldst[i] = -1;
    ST_CHECK(shmem_long_collect(team, ldst, lsrc, (size_t)tp + 1) == 0, "%s: collect", label);
    for (int p = 0, at = 0; p < size; p++)
        for (int i = 0; i <= p; i++, at++)
            ST_CHECK(ldst[at] == item(p, 0, i), "%s: collect element %d: %ld", label, at, ldst[at]);
    ST_CHECK(ldst[size * (size + 1) / 2] == -1, "%s: collect wrote past its end", label);

    /* fcollect */
    int *is = (int *)(void *)sbuf, *id = (int *)(void *)dbuf;
    for (int i = 0; i < 3; i++)
        is[i] = (int)item(tp, 1, i);
    ST_CHECK(shmem_fcollect(team, id, is, 3) == 0, "%s: fcollect", label);
    for (int p = 0; p < size; p++)
        for (int i = 0; i < 3; i++)
            ST_CHECK(id[3 * p + i] == item(p, 1, i), "%s: fcollect from %d [%d]: %d", label, p, i, id[3 * p + i]);

    /* alltoall: block q to team PE q */
    for (int q = 0; q < size; q++)
        for (int i = 0; i < 2; i++)
            lsrc[2 * q + i] = item(tp, q, i);
    ST_CHECK(shmem_alltoall(team, ldst, lsrc, 2) == 0, "%s: alltoall", label);
    for (int p = 0; p < size; p++)
        for (int i = 0; i < 2; i++)
            ST_CHECK(ldst[2 * p + i] == item(p, tp, i), "%s: alltoall from %d [%d]: %ld", label, p, i, ldst[2 * p + i]);

    /* alltoalls: 2 elements per pair, source stride 3, dest stride 2; gaps keep their value */
    double *ds = (double *)(void *)sbuf, *dd = (double *)(void *)dbuf;
    for (int k = 0; k < 3 * 2 * size; k++)
        ds[k] = -1;
    for (int k = 0; k < 2 * 2 * size; k++)
        dd[k] = -2;
    for (int q = 0; q < size; q++)
        for (int i = 0; i < 2; i++)
            ds[(q * 2 + i) * 3] = (double)item(tp, q, i);
    ST_CHECK(shmem_alltoalls(team, dd, ds, 2, 3, 2) == 0, "%s: alltoalls", label);
    for (int p = 0; p < size; p++)
        for (int i = 0; i < 2; i++) {
            ST_CHECK(dd[(p * 2 + i) * 2] == (double)item(p, tp, i), "%s: alltoalls from %d [%d]: %g", label, p, i,
                     dd[(p * 2 + i) * 2]);
            ST_CHECK(dd[(p * 2 + i) * 2 + 1] == -2, "%s: alltoalls wrote a gap", label);
        }
    /* alltoallsmem: 3 bytes per pair, strides 2 (dest) and 1 (source) */
    for (int q = 0; q < size; q++)
        for (int i = 0; i < 3; i++)
            cs[q * 3 + i] = (char)(tp * 16 + q * 4 + i);
    memset(cd, 0x55, (size_t)(6 * size));
    ST_CHECK(shmem_alltoallsmem(team, cd, cs, 2, 1, 3) == 0, "%s: alltoallsmem", label);
    for (int p = 0; p < size; p++)
        for (int i = 0; i < 3; i++)
            ST_CHECK(cd[(p * 3 + i) * 2] == (char)(p * 16 + tp * 4 + i) && cd[(p * 3 + i) * 2 + 1] == 0x55,
                     "%s: alltoallsmem from %d [%d]", label, p, i);
    ST_CHECK(shmem_team_sync(team) == 0, "%s: team_sync", label);
}

static void on_team(shmem_team_t team, const char *label)
{
    if (team == SHMEM_TEAM_INVALID)
        return;
    st_phase = label;
    int tp = shmem_team_my_pe(team), size = shmem_team_n_pes(team);
    data_collectives(team, tp, size, label);
    reductions(team, tp, size, label);
}

static void invalid_team(void)
{
    st_phase = "SHMEM_TEAM_INVALID";
    shmem_team_t t = SHMEM_TEAM_INVALID;
    ST_CHECK(shmem_long_broadcast(t, ldst, lsrc, 1, 0) != 0 && shmem_long_collect(t, ldst, lsrc, 1) != 0 &&
             shmem_long_fcollect(t, ldst, lsrc, 1) != 0 && shmem_long_alltoall(t, ldst, lsrc, 1) != 0 &&
             shmem_long_alltoalls(t, ldst, lsrc, 1, 1, 1) != 0 && shmem_long_sum_reduce(t, ldst, lsrc, 1) != 0 &&
             shmem_complexd_prod_reduce(t, (double _Complex *)(void *)dbuf, (double _Complex *)(void *)sbuf, 1) != 0 &&
             shmem_team_sync(t) != 0 && shmem_alltoallsmem(t, dbuf, sbuf, 1, 1, 1) != 0,
             "a collective on SHMEM_TEAM_INVALID returned 0");
}

/* ---- deprecated active sets --------------------------------------------------------------------- */

static long psync[SHMEM_REDUCE_SYNC_SIZE];
static long double _Complex pwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE + NR]; /* aligned for every type */

#define TO_ALL(T, N, OP, KIND)                                                                          \
    do {                                                                                                \
        T *s = (T *)(void *)sbuf, *d = (T *)(void *)dbuf;                                               \
        for (int i = 0; i < NR; i++) {                                                                  \
            s[i] = (T)val(KIND, ap, i);                                                                 \
            d[i] = (T)99;                                                                               \
        }                                                                                               \
        shmem_##N##_##OP##_to_all(d, s, NR, start, logs, size, (T *)(void *)pwrk, psync);               \
        for (int i = 0; i < NR; i++)                                                                    \
            ST_CHECK(d[i] == (T)expect(KIND, size, i), "%s: " #N "_" #OP "_to_all[%d] = %lld, want %lld",  \
                     label, i, (long long)d[i], expect(KIND, size, i));                                 \
    } while (0)
#define TO_ALL_ARITH(T, N) TO_ALL(T, N, sum, K_SUM); TO_ALL(T, N, prod, K_PROD); TO_ALL(T, N, max, K_MAX); TO_ALL(T, N, min, K_MIN);
#define TO_ALL_BIT(T, N) TO_ALL(T, N, and, K_AND); TO_ALL(T, N, or, K_OR); TO_ALL(T, N, xor, K_XOR);

static void active_set(int start, int logs, int size, const char *label)
{
    int d = me - start;
    if (size < 1 || d < 0 || d % (1 << logs) || d >> logs >= size)
        return; /* not in the set: the members' calls must not need this PE */
    st_phase = label;
    int ap = d >> logs;
    shmem_barrier(start, logs, size, psync);
    shmem_sync(start, logs, size, psync);
    int32_t *s32 = (int32_t *)(void *)sbuf, *d32 = (int32_t *)(void *)dbuf;
    int64_t *s64 = (int64_t *)(void *)sbuf, *d64 = (int64_t *)(void *)dbuf;
    for (int root = 0; root < size; root++) {
        for (int i = 0; i < 4; i++) {
            s32[i] = (int32_t)item(ap, root, i);
            d32[i] = -1;
        }
        shmem_broadcast32(d32, s32, 4, root, start, logs, size, psync);
        for (int i = 0; i < 4; i++)
            ST_CHECK(d32[i] == (ap == root ? -1 : item(root, root, i)), "%s: broadcast32 root %d [%d]: %d", label,
                     root, i, d32[i]);
        for (int i = 0; i < 3; i++) {
            s64[i] = item(ap, root, i) + (1LL << 40);
            d64[i] = -1;
        }
        shmem_broadcast64(d64, s64, 3, root, start, logs, size, psync);
        for (int i = 0; i < 3; i++)
            ST_CHECK(d64[i] == (ap == root ? -1 : item(root, root, i) + (1LL << 40)), "%s: broadcast64 root %d",
                     label, root);
    }
    /* collect64: ap + 1 elements; fcollect32: 2 */
    for (int i = 0; i <= ap; i++)
        s64[i] = item(ap, 2, i);
    shmem_collect64(d64, s64, (size_t)ap + 1, start, logs, size, psync);
    for (int p = 0, at = 0; p < size; p++)
        for (int i = 0; i <= p; i++, at++)
            ST_CHECK(d64[at] == item(p, 2, i), "%s: collect64 element %d", label, at);
    for (int i = 0; i <= ap; i++)
        s32[i] = (int32_t)item(ap, 3, i);
    shmem_collect32(d32, s32, (size_t)ap + 1, start, logs, size, psync);
    for (int p = 0, at = 0; p < size; p++)
        for (int i = 0; i <= p; i++, at++)
            ST_CHECK(d32[at] == item(p, 3, i), "%s: collect32 element %d", label, at);
    for (int i = 0; i < 2; i++)
        s32[i] = (int32_t)item(ap, 4, i);
    shmem_fcollect32(d32, s32, 2, start, logs, size, psync);
    for (int p = 0; p < size; p++)
        for (int i = 0; i < 2; i++)
            ST_CHECK(d32[2 * p + i] == item(p, 4, i), "%s: fcollect32", label);
    for (int i = 0; i < 2; i++)
        s64[i] = item(ap, 5, i);
    shmem_fcollect64(d64, s64, 2, start, logs, size, psync);
    for (int p = 0; p < size; p++)
        for (int i = 0; i < 2; i++)
            ST_CHECK(d64[2 * p + i] == item(p, 5, i), "%s: fcollect64", label);
    /* alltoall32/64 and alltoalls32/64 (strides 2 and 3) */
    for (int q = 0; q < size; q++)
        s32[q] = (int32_t)item(ap, q, 6);
    shmem_alltoall32(d32, s32, 1, start, logs, size, psync);
    for (int p = 0; p < size; p++)
        ST_CHECK(d32[p] == item(p, ap, 6), "%s: alltoall32 from %d", label, p);
    for (int q = 0; q < size; q++)
        s64[2 * q] = item(ap, q, 7), s64[2 * q + 1] = item(ap, q, 8);
    shmem_alltoall64(d64, s64, 2, start, logs, size, psync);
    for (int p = 0; p < size; p++)
        ST_CHECK(d64[2 * p] == item(p, ap, 7) && d64[2 * p + 1] == item(p, ap, 8), "%s: alltoall64 from %d", label, p);
    for (int k = 0; k < 3 * size; k++)
        s64[k] = -1, d64[k] = -2;
    for (int q = 0; q < size; q++)
        s64[q * 3] = item(ap, q, 9);
    shmem_alltoalls64(d64, s64, 2, 3, 1, start, logs, size, psync);
    for (int p = 0; p < size; p++)
        ST_CHECK(d64[p * 2] == item(p, ap, 9) && d64[p * 2 + 1] == -2, "%s: alltoalls64 from %d", label, p);
    for (int k = 0; k < 4 * size; k++)
        s32[k] = -1, d32[k] = -2;
    for (int q = 0; q < size; q++)
        for (int i = 0; i < 2; i++)
            s32[(q * 2 + i) * 2] = (int32_t)item(ap, q, i);
    shmem_alltoalls32(d32, s32, 1, 2, 2, start, logs, size, psync);
    for (int p = 0; p < size; p++)
        for (int i = 0; i < 2; i++)
            ST_CHECK(d32[p * 2 + i] == item(p, ap, i), "%s: alltoalls32 from %d [%d]", label, p, i);
    /* every shmem_TYPE_OP_to_all of 1.5 */
    TO_ALL_BIT(short, short) TO_ALL_BIT(int, int) TO_ALL_BIT(long, long) TO_ALL_BIT(long long, longlong)
    TO_ALL_ARITH(short, short) TO_ALL_ARITH(int, int) TO_ALL_ARITH(long, long) TO_ALL_ARITH(long long, longlong)
    TO_ALL_ARITH(float, float) TO_ALL_ARITH(double, double) TO_ALL_ARITH(long double, longdouble)
    double _Complex *cs = (double _Complex *)(void *)sbuf, *cd = (double _Complex *)(void *)dbuf;
    float _Complex *fs = (float _Complex *)(void *)sbuf, *fd = (float _Complex *)(void *)dbuf;
    cs[0] = (double)ap + 1.0 * I;
    shmem_complexd_sum_to_all(cd, cs, 1, start, logs, size, (double _Complex *)(void *)pwrk, psync);
    ST_CHECK(cd[0] == (double)(size * (size - 1) / 2) + (double)size * I, "%s: complexd_sum_to_all", label);
    cs[0] = 1.0 * I;
    shmem_complexd_prod_to_all(cd, cs, 1, start, logs, size, (double _Complex *)(void *)pwrk, psync);
    double _Complex w = 1;
    for (int p = 0; p < size; p++)
        w *= 1.0 * I;
    ST_CHECK(cd[0] == w, "%s: complexd_prod_to_all %g%+gi", label, creal(cd[0]), cimag(cd[0]));
    fs[0] = (float)ap + 2.0f * I;
    shmem_complexf_sum_to_all(fd, fs, 1, start, logs, size, (float _Complex *)(void *)pwrk, psync);
    ST_CHECK(fd[0] == (float)(size * (size - 1) / 2) + 2.0f * (float)size * I, "%s: complexf_sum_to_all", label);
    fs[0] = 2.0f;
    shmem_complexf_prod_to_all(fd, fs, 1, start, logs, size, (float _Complex *)(void *)pwrk, psync);
    ST_CHECK(fd[0] == (float)(1 << size), "%s: complexf_prod_to_all", label);
    for (size_t i = 0; i < sizeof psync / sizeof psync[0]; i++)
        ST_CHECK(psync[i] == SHMEM_SYNC_VALUE, "%s: pSync[%zu] changed", label, i);
    shmem_barrier(start, logs, size, psync);
}

int main(int argc, char **argv)
{
    st_begin("shmem_coll_teams", 60);
    me = shmem_my_pe();
    n = shmem_n_pes();
    if (argc > 1 && !strcmp(argv[1], "outsider")) {
        /* the last PE calls a collective of an active set it is not in: it must exit with a
         * message (the others wait in a barrier until the launcher stops them) */
        if (me == n - 1)
            shmem_barrier(0, 0, n - 1, psync);
        shmem_barrier_all();
        printf("shmem_coll_teams: the outsider's call returned\n");
        return 1;
    }
    if (n > MAXPE) {
        fprintf(stderr, "shmem_coll_teams: at most %d PEs\n", MAXPE);
        return 1;
    }
    for (size_t i = 0; i < sizeof psync / sizeof psync[0]; i++)
        psync[i] = SHMEM_SYNC_VALUE;
    sbuf = shmem_malloc(SCRATCH);
    dbuf = shmem_malloc(SCRATCH);
    lsrc = shmem_malloc(sizeof(long) * MAXPE * MAXPE);
    ldst = shmem_malloc(sizeof(long) * MAXPE * MAXPE);
    shmem_team_t evens, rev, xt, yt;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (n + 1) / 2, NULL, 0, &evens);
    shmem_team_split_strided(SHMEM_TEAM_WORLD, n - 1, -1, n, NULL, 0, &rev);
    shmem_team_split_2d(SHMEM_TEAM_WORLD, 3, NULL, 0, &xt, NULL, 0, &yt);
    on_team(SHMEM_TEAM_WORLD, "world");
    on_team(SHMEM_TEAM_SHARED, "shared");
    on_team(evens, "evens");
    on_team(rev, "reversed");
    on_team(xt, "2-D x team");
    invalid_team();
    shmem_team_destroy(xt);
    shmem_team_destroy(yt);
    shmem_team_destroy(rev);
    shmem_team_destroy(evens);
    shmem_barrier_all();
    active_set(0, 0, n, "active set: world");
    active_set(0, 1, (n + 1) / 2, "active set: evens");
    active_set(1, 1, n / 2, "active set: odds");
    active_set(me, 3, 1, "active set: this PE");
    active_set(0, 1, (n + 1) / 2, "active set: evens again (cached)");
    shmem_barrier_all();
    shmem_free(ldst);
    shmem_free(lsrc);
    shmem_free(dbuf);
    shmem_free(sbuf);
    return st_end();
}
