/*
 * shmem_p2p.c — OpenSHMEM 1.5 point-to-point synchronisation beyond shmem_sync.c: the fairness
 * rule of the _any forms (a series of calls must return every ready index, even when the caller
 * masks nothing — the specification's shmem_test_any example), the _vector test forms, the
 * _some forms with status masks, every type of the point-to-point table, and the deprecated
 * shmem_wait / shmem_wait_until on long. Every flag is set by another PE (atomic set or put),
 * and each PE checks the indices it is given against the flags the others set for it.
 */
#include <stdint.h>
#include "shmtest.h"

#define K 12 /* flags per array */

/* Which flags the predecessor `from` sets on a PE in round r: a pattern that differs per PE and
 * per round, never empty, never full. */
static int wanted(int from, int r, int i)
{
    return (i * 7 + from * 3 + r) % 5 < 3;
}

static int count_wanted(int from, int r)
{
    int k = 0;
    for (int i = 0; i < K; i++)
        k += wanted(from, r, i);
    return k;
}

/* k calls of an _any routine on flags whose ready set is `ready` (k of them): each returned
 * index must be ready, and the k returned must be the k ready ones (round robin), with no mask. */
#define CHECK_FAIR(what, k, call, ready)                                                               \
    do {                                                                                               \
        int seen_[K] = {0}, distinct_ = 0;                                                             \
        for (int c_ = 0; c_ < (k); c_++) {                                                             \
            size_t i_ = (call);                                                                        \
            if (i_ >= K || !(ready)[i_]) {                                                             \
                ST_CHECK(0, "%s: call %d returned %zu, not a ready index", what, c_, i_);              \
                break;                                                                                 \
            }                                                                                          \
            distinct_ += !seen_[i_]++;                                                                 \
        }                                                                                              \
        ST_CHECK(distinct_ == (k), "%s: %d calls returned %d distinct ready indices of %d", what, (k), \
                 distinct_, (k));                                                                      \
    } while (0)

/* the point-to-point types: each gets the vector test forms on a word the predecessor wrote */
#define P2P_TYPES(X)                                                                                   \
    X(short, short) X(int, int) X(long, long) X(long long, longlong) X(unsigned short, ushort)         \
    X(unsigned int, uint) X(unsigned long, ulong) X(unsigned long long, ulonglong) X(int32_t, int32)   \
    X(int64_t, int64) X(uint32_t, uint32) X(uint64_t, uint64) X(size_t, size) X(ptrdiff_t, ptrdiff)

#define TYPE_ROUND(T, N)                                                                               \
    {                                                                                                  \
        st_phase = "every type: " #T;                                                                  \
        T *v = shmem_calloc(4, sizeof(T));                                                             \
        T src[4] = {(T)(me + 1), (T)2, (T)(me + 3), (T)4}; /* what `to` waits for */                 \
        shmem_barrier_all();                                                                           \
        shmem_##N##_put(v, src, 4, to);                                                                \
        shmem_quiet();                                                                                 \
        T theirs[4] = {(T)(from + 1), (T)2, (T)(from + 3), (T)4};                                      \
        shmem_##N##_wait_until_all_vector(v, 4, NULL, SHMEM_CMP_EQ, theirs);                           \
        ST_CHECK(shmem_##N##_test_all_vector(v, 4, NULL, SHMEM_CMP_EQ, theirs) == 1, "test_all_vector"); \
        T other[4] = {(T)(from + 1), (T)9, (T)(from + 3), (T)9};                                       \
        ST_CHECK(shmem_##N##_test_all_vector(v, 4, NULL, SHMEM_CMP_EQ, other) == 0, "test_all_vector false"); \
        int skip[4] = {0, 1, 0, 1};                                                                    \
        ST_CHECK(shmem_##N##_test_all_vector(v, 4, skip, SHMEM_CMP_EQ, other) == 1, "test_all_vector mask"); \
        size_t ix[4];                                                                                  \
        ST_CHECK(shmem_##N##_test_some_vector(v, 4, ix, NULL, SHMEM_CMP_EQ, other) == 2 && ix[0] == 0 && \
                 ix[1] == 2, "test_some_vector");                                                      \
        size_t a = shmem_##N##_test_any_vector(v, 4, NULL, SHMEM_CMP_EQ, other);                       \
        ST_CHECK(a == 0 || a == 2, "test_any_vector returned %zu", a);                                 \
        int all[4] = {1, 1, 1, 1};                                                                     \
        ST_CHECK(shmem_##N##_test_any_vector(v, 4, all, SHMEM_CMP_EQ, other) == SIZE_MAX,              \
                 "test_any_vector, all masked");                                                       \
        ST_CHECK(shmem_##N##_test_any(v, 4, NULL, SHMEM_CMP_GT, (T)100) == SIZE_MAX, "test_any none"); \
        shmem_barrier_all();                                                                           \
        shmem_free(v);                                                                                 \
    }

static long g_word;
static long g_flags[K];

int main(void)
{
    st_begin("shmem_p2p", 60);
    int me = shmem_my_pe(), n = shmem_n_pes(), to = (me + 1) % n, from = (me + n - 1) % n;
    int *flags = shmem_calloc(K, sizeof(int));
    uint64_t *uflags = shmem_calloc(K, sizeof(uint64_t));

    for (int r = 0; r < 3; r++) {
        st_phase = "test_any fairness, no mask";
        /* the predecessor sets, by atomic set, the flags wanted(me -> to) on `to` */
        for (int i = 0; i < K; i++) {
            if (wanted(me, r, i)) {
                shmem_int_atomic_set(&flags[i], r + 1, to);
                shmem_uint64_atomic_set(&uflags[i], (uint64_t)(r + 1) << 40, to);
                shmem_long_atomic_set(&g_flags[i], r + 1, to);
            }
        }
        shmem_quiet();
        shmem_barrier_all();
        int ready[K], k = count_wanted(from, r);
        for (int i = 0; i < K; i++) {
            ready[i] = wanted(from, r, i);
            ST_CHECK(flags[i] == (ready[i] ? r + 1 : 0) || (!ready[i] && flags[i] <= r), "round %d: flag %d is %d",
                     r, i, flags[i]);
        }
        CHECK_FAIR("test_any", k, shmem_int_test_any(flags, K, NULL, SHMEM_CMP_EQ, r + 1), ready);
        CHECK_FAIR("wait_until_any", k, shmem_int_wait_until_any(flags, K, NULL, SHMEM_CMP_EQ, r + 1), ready);
        CHECK_FAIR("generic test_any (uint64)", k, shmem_test_any(uflags, K, NULL, SHMEM_CMP_EQ, (uint64_t)(r + 1) << 40),
                   ready);
        CHECK_FAIR("wait_until_any on a global", k, shmem_long_wait_until_any(g_flags, K, NULL, SHMEM_CMP_EQ, r + 1),
                   ready);

        st_phase = "vector _any fairness";
        int cmpv[K];
        for (int i = 0; i < K; i++)
            cmpv[i] = ready[i] ? r + 1 : 1000; /* the not-ready ones never match */
        int vready[K];
        for (int i = 0; i < K; i++)
            vready[i] = ready[i];
        CHECK_FAIR("test_any_vector", k, shmem_int_test_any_vector(flags, K, NULL, SHMEM_CMP_EQ, cmpv), vready);
        CHECK_FAIR("wait_until_any_vector", k, shmem_int_wait_until_any_vector(flags, K, NULL, SHMEM_CMP_EQ, cmpv),
                   vready);
        CHECK_FAIR("generic test_any_vector", k, shmem_test_any_vector(flags, K, NULL, SHMEM_CMP_EQ, cmpv), vready);

        st_phase = "_any with a mask: the masked ready ones never come back";
        int mask[K], mready[K], mk = 0;
        for (int i = 0; i < K; i++) {
            mask[i] = i % 2;
            mready[i] = ready[i] && !mask[i];
            mk += mready[i];
        }
        if (mk > 0)
            CHECK_FAIR("test_any, odd indices masked", mk, shmem_int_test_any(flags, K, mask, SHMEM_CMP_EQ, r + 1),
                       mready);

        st_phase = "_some with masks";
        size_t idx[K];
        size_t got = shmem_int_test_some(flags, K, idx, mask, SHMEM_CMP_EQ, r + 1);
        ST_CHECK(got == (size_t)mk, "test_some: %zu of %d", got, mk);
        for (size_t j = 0; j < got && j < K; j++)
            ST_CHECK(idx[j] < K && mready[idx[j]] && (j == 0 || idx[j] > idx[j - 1]), "test_some index %zu", idx[j]);
        got = shmem_int_wait_until_some(flags, K, idx, NULL, SHMEM_CMP_EQ, r + 1);
        ST_CHECK(got == (size_t)k, "wait_until_some: %zu of %d", got, k);
        got = shmem_int_test_some_vector(flags, K, idx, mask, SHMEM_CMP_EQ, cmpv);
        ST_CHECK(got == (size_t)mk, "test_some_vector: %zu of %d", got, mk);
        got = shmem_test_some_vector(flags, K, idx, NULL, SHMEM_CMP_EQ, cmpv); /* generic */
        ST_CHECK(got == (size_t)k, "generic test_some_vector: %zu of %d", got, k);
        for (size_t j = 0; j < got && j < K; j++)
            ST_CHECK(idx[j] < K && ready[idx[j]], "test_some_vector index %zu", idx[j]);
        int allmask[K];
        for (int i = 0; i < K; i++)
            allmask[i] = 1;
        ST_CHECK(shmem_int_wait_until_some(flags, K, idx, allmask, SHMEM_CMP_EQ, r + 1) == 0, "some, all masked");
        ST_CHECK(shmem_int_wait_until_any(flags, K, allmask, SHMEM_CMP_EQ, r + 1) == SIZE_MAX, "any, all masked");
        ST_CHECK(shmem_int_test_all_vector(flags, K, NULL, SHMEM_CMP_EQ, cmpv) == 0, "test_all_vector, not all");
        ST_CHECK(shmem_test_all_vector(flags, K, allmask, SHMEM_CMP_EQ, cmpv) == 1, "test_all_vector, empty set");
        shmem_barrier_all();
    }

    st_phase = "the specification's test_any example (processed[], no mask)";
    {
        int *f = shmem_calloc(n, sizeof(int));
        int *processed = calloc((size_t)n, sizeof(int));
        int *status = calloc((size_t)n, sizeof(int));
        for (int i = 0; i < n; i++)
            shmem_int_atomic_set(&f[me], 1, i);
        int done = 0;
        for (long calls = 0; done < n && calls < 2000000; calls++) {
            size_t c = shmem_test_any(f, n, status, SHMEM_CMP_EQ, 1);
            if (c != SIZE_MAX && !processed[c]) {
                processed[c] = 1;
                done++;
            }
        }
        ST_CHECK(done == n, "test_any returned %d of %d ready indices in 2000000 calls", done, n);
        shmem_barrier_all();
        shmem_free(f);
        free(processed);
        free(status);
    }

    P2P_TYPES(TYPE_ROUND)

    st_phase = "deprecated shmem_wait / shmem_wait_until (long)";
    g_word = 0;
    shmem_barrier_all();
    shmem_long_atomic_set(&g_word, 40 + me, to); /* this PE's word gets 40 + from */
    /* the parentheses call the long-only functions, not the C11 generic macros of their names */
    (shmem_wait)(&g_word, 0); /* until it is not 0 */
    (shmem_wait_until)(&g_word, SHMEM_CMP_GE, 40);
    ST_CHECK(g_word == 40 + from, "g_word %ld, not %d", g_word, 40 + from);
    shmem_barrier_all();
    shmem_long_atomic_add(&g_word, 100, to);
    shmem_wait_until(&g_word, SHMEM_CMP_GE, 100); /* the C11 generic */
    ST_CHECK(g_word == 140 + from, "g_word after the add %ld", g_word);

    shmem_barrier_all();
    shmem_free(flags);
    shmem_free(uflags);
    return st_end();
}
