/*
 * sync.c — point-to-point synchronisation: wait_until / test on local symmetric words (one
 * implementation over 2-, 4- and 8-byte, signed and unsigned words; WaitIO progresses between
 * looks so that updates arriving as frames are applied; the _any forms are fair: every ready index
 * is eventually returned), signal fetch and wait (put-with-signal itself: ctx.c), and the
 * distributed locks (a word on PE 0 taken by compare-and-swap).
 */
#include <sched.h>
#include <stdatomic.h>
#include <time.h>
#include "shmem/shmem_internal.h"

/* ---- comparisons on words of any integer type ---------------------------------------------- */

typedef struct word_set {
    const volatile void *ivars;
    size_t n, size;
    int is_signed;
    const int *status;        /* nonzero: excluded */
    int cmp;
    int64_t value;            /* the comparison value (bits of the type, widened) */
    const void *values;       /* per-element values (vector forms), or NULL */
    size_t *indices;          /* some: where the matches go */
    int mode;                 /* 0 one, 1 all, 2 any, 3 some */
    size_t start;             /* any: the index the scan starts at (fairness, below) */
    size_t result;
} word_set;

/* A word of the device symmetric heap: the CPU may not load it, WaitIO reads it (a get from this
 * PE, copied by the GPU). 1 if p is there (*v set), else 0. */
static int load_device(const volatile void *p, size_t size, uint64_t *v)
{
    uintptr_t a = (uintptr_t)p;
    if (!S.dheap || a - S.dheap_base >= S.dheap_size)
        return 0;
    uint8_t b[8] = {0};
    wio_shmem_check(waitio_get(S.dheap, S.me, a - S.dheap_base, b, size), "reading a word of the device heap");
    atomic_thread_fence(memory_order_acquire);
    if (size == 2) {
        uint16_t x;
        memcpy(&x, b, 2);
        *v = x;
    } else if (size == 4) {
        uint32_t x;
        memcpy(&x, b, 4);
        *v = x;
    } else {
        memcpy(v, b, 8);
    }
    return 1;
}

static int64_t load_word(const volatile void *base, size_t i, size_t size, int is_signed)
{
    const volatile uint8_t *p = (const volatile uint8_t *)base + i * size;
    uint64_t dv;
    if (load_device(p, size, &dv))
        return size == 2 ? (is_signed ? (int64_t)(int16_t)dv : (int64_t)dv)
             : size == 4 ? (is_signed ? (int64_t)(int32_t)dv : (int64_t)dv) : (int64_t)dv;
    switch (size) {
    case 2: { uint16_t v = __atomic_load_n((const volatile uint16_t *)(const volatile void *)p, __ATOMIC_ACQUIRE);
              return is_signed ? (int64_t)(int16_t)v : (int64_t)v; }
    case 4: { uint32_t v = __atomic_load_n((const volatile uint32_t *)(const volatile void *)p, __ATOMIC_ACQUIRE);
              return is_signed ? (int64_t)(int32_t)v : (int64_t)v; }
    default: return (int64_t)__atomic_load_n((const volatile uint64_t *)(const volatile void *)p, __ATOMIC_ACQUIRE);
    }
}

static int64_t value_at(const void *values, size_t i, size_t size, int is_signed)
{
    const uint8_t *p = (const uint8_t *)values + i * size;
    if (size == 2) {
        uint16_t v;
        memcpy(&v, p, 2);
        return is_signed ? (int64_t)(int16_t)v : (int64_t)v;
    }
    if (size == 4) {
        uint32_t v;
        memcpy(&v, p, 4);
        return is_signed ? (int64_t)(int32_t)v : (int64_t)v;
    }
    int64_t v;
    memcpy(&v, p, 8);
    return v;
}

static int holds(int64_t a, int64_t b, int is_unsigned64, int cmp)
{
    int lt = is_unsigned64 ? (uint64_t)a < (uint64_t)b : a < b;
    switch (cmp) {
    case SHMEM_CMP_EQ: return a == b;
    case SHMEM_CMP_NE: return a != b;
    case SHMEM_CMP_GT: return !lt && a != b;
    case SHMEM_CMP_GE: return !lt;
    case SHMEM_CMP_LT: return lt;
    case SHMEM_CMP_LE: return lt || a == b;
    default: wio_shmem_fatal("unknown comparison %d", cmp);
    }
}

static int elem_holds(const word_set *w, size_t i)
{
    int64_t b = w->values ? value_at(w->values, i, w->size, w->is_signed) : w->value;
    return holds(load_word(w->ivars, i, w->size, w->is_signed), b, w->size == 8 && !w->is_signed, w->cmp);
}

/* ---- fairness of the _any forms ------------------------------------------------------------
 * OpenSHMEM 1.5: if element i stays ready, a series of calls of wait_until_any / test_any on the
 * array must eventually return i — even when the caller never masks what it was given (the
 * specification's own shmem_test_any example). So the scan of an _any call starts just after
 * the index the previous call on the same array returned (round robin: with k ready elements,
 * each is returned within k calls). That position is kept per thread in a small table keyed by
 * the array's address and length; when another array took the slot since (two arrays hashing
 * alike, used alternately), the start is random instead, which still returns every ready index
 * with probability one. The _some forms return every ready index and need no such state. */

#define FAIR_SLOTS 64

typedef struct fair_slot {
    const volatile void *ivars;
    size_t n;
    size_t next;              /* where the next scan of this array starts */
} fair_slot;

static _Thread_local fair_slot fair_table[FAIR_SLOTS];
static _Thread_local uint64_t fair_rng;

static fair_slot *fair_lookup(const volatile void *ivars)
{
    uint64_t h = (uint64_t)(uintptr_t)ivars * 0x9e3779b97f4a7c15ull; /* Fibonacci hashing */
    return &fair_table[h >> 58];                                      /* top 6 bits: 64 slots */
}

static size_t fair_random(size_t n)
{
    if (!fair_rng) /* a per-thread seed: the table's address differs between threads */
        fair_rng = (uint64_t)(uintptr_t)fair_table ^ 0x2545f4914f6cdd1dull;
    fair_rng ^= fair_rng << 13; /* xorshift64 */
    fair_rng ^= fair_rng >> 7;
    fair_rng ^= fair_rng << 17;
    return (size_t)(fair_rng % n);
}

/* The index where the scan of an _any call on ivars[0..n) starts. */
static size_t fair_start(const volatile void *ivars, size_t n)
{
    if (n < 2)
        return 0;
    fair_slot *s = fair_lookup(ivars);
    if (s->ivars == ivars && s->n == n)
        return s->next % n;
    s->ivars = ivars;
    s->n = n;
    s->next = fair_random(n);
    return s->next;
}

/* An _any call returned index i: the next one on the array starts after it. */
static void fair_returned(const volatile void *ivars, size_t n, size_t i)
{
    fair_slot *s = fair_lookup(ivars);
    if (n >= 2 && s->ivars == ivars && s->n == n)
        s->next = (i + 1) % n;
}

/* Evaluates the set once; 1 when its condition is met (result set for any / some). The _any
 * mode scans from w->start round the array; the others in index order. */
static int evaluate(void *arg)
{
    word_set *w = arg;
    size_t active = 0, found = 0;
    for (size_t k = 0; k < w->n; k++) {
        size_t i = k;
        if (w->mode == 2 && (i = w->start + k) >= w->n) /* start < n: one wrap at most */
            i -= w->n;
        if (w->status && w->status[i])
            continue;
        active++;
        int h = elem_holds(w, i);
        if (w->mode <= 1 && !h)
            return 0;
        if (w->mode == 2 && h) {
            w->result = i;
            return 1;
        }
        if (w->mode == 3 && h)
            w->indices[found++] = i;
    }
    if (w->mode == 2) {
        w->result = SIZE_MAX;
        return active == 0; /* every element excluded: nothing to wait for */
    }
    if (w->mode == 3) {
        w->result = found;
        return found > 0 || active == 0;
    }
    return 1;
}

/* An _any call starts where fairness says and records what it returned. */
static void any_begin(word_set *w)
{
    if (w->mode == 2)
        w->start = fair_start(w->ivars, w->n);
}

static void any_end(const word_set *w)
{
    if (w->mode == 2 && w->result != SIZE_MAX)
        fair_returned(w->ivars, w->n, w->result);
}

static size_t do_wait(word_set *w)
{
    wio_shmem_need_init();
    any_begin(w);
    wio_shmem_wait(evaluate, w);
    any_end(w);
    return w->result;
}

static size_t do_test(word_set *w)
{
    wio_shmem_need_init();
    wio_shmem_check(waitio_progress(), "shmem_test");
    any_begin(w);
    int ok = evaluate(w);
    if (w->mode <= 1)
        return (size_t)ok;
    if (!ok)
        return w->mode == 2 ? SIZE_MAX : 0;
    any_end(w);
    return w->result;
}

#define IS_SIGNED(T) ((T)-1 < (T)1) /* not "< 0": -Wtype-limits */
#define SET(T, iv, nn, st, c, v, vs, idx, md)                                                           \
    word_set w = {.ivars = (iv), .n = (nn), .size = sizeof(T), .is_signed = IS_SIGNED(T), .status = (st), \
                  .cmp = (c), .values = (vs), .indices = (idx), .mode = (md)};                          \
    {                                                                                                   \
        T v_ = (v);                                                                                     \
        w.value = IS_SIGNED(T) ? (int64_t)v_ : (int64_t)(uint64_t)v_;                                   \
    }

#define DEF_P2P(T, N)                                                                                   \
    void shmem_##N##_wait_until(T *ivar, int cmp, T cmp_value)                                          \
    {                                                                                                   \
        SET(T, ivar, 1, NULL, cmp, cmp_value, NULL, NULL, 0);                                           \
        do_wait(&w);                                                                                    \
    }                                                                                                   \
    void shmem_##N##_wait_until_all(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value)   \
    {                                                                                                   \
        SET(T, ivars, nelems, status, cmp, cmp_value, NULL, NULL, 1);                                   \
        do_wait(&w);                                                                                    \
    }                                                                                                   \
    size_t shmem_##N##_wait_until_any(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value) \
    {                                                                                                   \
        SET(T, ivars, nelems, status, cmp, cmp_value, NULL, NULL, 2);                                   \
        return do_wait(&w);                                                                             \
    }                                                                                                   \
    size_t shmem_##N##_wait_until_some(T *ivars, size_t nelems, size_t *indices, const int *status,     \
                                       int cmp, T cmp_value)                                            \
    {                                                                                                   \
        SET(T, ivars, nelems, status, cmp, cmp_value, NULL, indices, 3);                                \
        return do_wait(&w);                                                                             \
    }                                                                                                   \
    void shmem_##N##_wait_until_all_vector(T *ivars, size_t nelems, const int *status, int cmp, T *cmp_values) \
    {                                                                                                   \
        SET(T, ivars, nelems, status, cmp, 0, cmp_values, NULL, 1);                                     \
        do_wait(&w);                                                                                    \
    }                                                                                                   \
    size_t shmem_##N##_wait_until_any_vector(T *ivars, size_t nelems, const int *status, int cmp,       \
                                             T *cmp_values)                                             \
    {                                                                                                   \
        SET(T, ivars, nelems, status, cmp, 0, cmp_values, NULL, 2);                                     \
        return do_wait(&w);                                                                             \
    }                                                                                                   \
    size_t shmem_##N##_wait_until_some_vector(T *ivars, size_t nelems, size_t *indices, const int *status, \
                                              int cmp, T *cmp_values)                                   \
    {                                                                                                   \
        SET(T, ivars, nelems, status, cmp, 0, cmp_values, indices, 3);                                  \
        return do_wait(&w);                                                                             \
    }                                                                                                   \
    int shmem_##N##_test(T *ivar, int cmp, T cmp_value)                                                 \
    {                                                                                                   \
        SET(T, ivar, 1, NULL, cmp, cmp_value, NULL, NULL, 0);                                           \
        return (int)do_test(&w);                                                                        \
    }                                                                                                   \
    int shmem_##N##_test_all(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value)          \
    {                                                                                                   \
        SET(T, ivars, nelems, status, cmp, cmp_value, NULL, NULL, 1);                                   \
        return (int)do_test(&w);                                                                        \
    }                                                                                                   \
    size_t shmem_##N##_test_any(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value)       \
    {                                                                                                   \
        SET(T, ivars, nelems, status, cmp, cmp_value, NULL, NULL, 2);                                   \
        return do_test(&w);                                                                             \
    }                                                                                                   \
    size_t shmem_##N##_test_some(T *ivars, size_t nelems, size_t *indices, const int *status, int cmp,  \
                                 T cmp_value)                                                           \
    {                                                                                                   \
        SET(T, ivars, nelems, status, cmp, cmp_value, NULL, indices, 3);                                \
        return do_test(&w);                                                                             \
    }                                                                                                   \
    int shmem_##N##_test_all_vector(T *ivars, size_t nelems, const int *status, int cmp, T *cmp_values) \
    {                                                                                                   \
        SET(T, ivars, nelems, status, cmp, 0, cmp_values, NULL, 1);                                     \
        return (int)do_test(&w);                                                                        \
    }                                                                                                   \
    size_t shmem_##N##_test_any_vector(T *ivars, size_t nelems, const int *status, int cmp, T *cmp_values) \
    {                                                                                                   \
        SET(T, ivars, nelems, status, cmp, 0, cmp_values, NULL, 2);                                     \
        return do_test(&w);                                                                             \
    }                                                                                                   \
    size_t shmem_##N##_test_some_vector(T *ivars, size_t nelems, size_t *indices, const int *status,    \
                                        int cmp, T *cmp_values)                                         \
    {                                                                                                   \
        SET(T, ivars, nelems, status, cmp, 0, cmp_values, indices, 3);                                  \
        return do_test(&w);                                                                             \
    }                                                                                                   \
    void shmem_##N##_wait(T *ivar, T cmp_value)                                                         \
    {                                                                                                   \
        shmem_##N##_wait_until(ivar, SHMEM_CMP_NE, cmp_value);                                          \
    }
WAITIO_SHMEM_P2P_TYPES(DEF_P2P)

/* ---- signals -------------------------------------------------------------------------------- */

/* put-with-signal (every context): ctx.c */

uint64_t shmem_signal_fetch(const uint64_t *sig_addr)
{
    /* like shmem_test: a loop polling the signal must also see one that arrives as a frame
     * (over tcp, with no progress thread), so WaitIO progresses first */
    wio_shmem_need_init();
    wio_shmem_check(waitio_progress(), "shmem_signal_fetch");
    uint64_t dv;
    if (load_device(sig_addr, 8, &dv))
        return dv;
    return __atomic_load_n(sig_addr, __ATOMIC_ACQUIRE);
}

uint64_t shmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value)
{
    shmem_uint64_wait_until(sig_addr, cmp, cmp_value);
    uint64_t dv;
    if (load_device(sig_addr, 8, &dv))
        return dv;
    return __atomic_load_n(sig_addr, __ATOMIC_ACQUIRE);
}

/* ---- locks ---------------------------------------------------------------------------------- */

/* The lock word lives on PE 0: it holds 0 (free) or the holder's PE + 1. */
static int try_lock(long *lock)
{
    return shmem_long_atomic_compare_swap(lock, 0, (long)S.me + 1, 0) == 0;
}

void shmem_set_lock(long *lock)
{
    wio_shmem_need_init();
    for (unsigned spins = 0; !try_lock(lock); spins++) {
        /* back off: the holder needs the core (and, without a progress thread, PE 0 must progress) */
        wio_shmem_check(waitio_progress(), "shmem_set_lock");
        if (spins < 16) {
            sched_yield();
        } else {
            struct timespec ts = {0, 1000L * (spins < 64 ? spins : 64)};
            nanosleep(&ts, NULL);
        }
    }
    atomic_thread_fence(memory_order_acquire);
}

int shmem_test_lock(long *lock)
{
    wio_shmem_need_init();
    int got = try_lock(lock);
    if (got)
        atomic_thread_fence(memory_order_acquire);
    return got ? 0 : 1;
}

void shmem_clear_lock(long *lock)
{
    wio_shmem_need_init();
    shmem_quiet(); /* what was written under the lock is complete before it is released */
    long old = shmem_long_atomic_swap(lock, 0, 0);
    if (old != (long)S.me + 1)
        wio_shmem_fatal("shmem_clear_lock: the lock was held by %s, not by this PE",
                        old ? "another PE" : "nobody");
}
