/*
 * amo.c — OpenSHMEM atomics. A word in a mapped heap part takes CPU atomics right here; any other
 * goes through waitio_atomic (served by the target with C11 atomics on the same word, so the two
 * paths mix). Integers move as 32/64-bit patterns (two's complement: signed and unsigned adds
 * are the same operation); float and double as their bits (fetch, set, swap only).
 */
#include <stdatomic.h>
#include "shmem/shmem_internal.h"

static uint64_t apply32(uint32_t *p, int op, uint32_t v, uint32_t c)
{
    switch (op) {
    case WAITIO_AMO_FETCH: return __atomic_load_n(p, __ATOMIC_ACQUIRE);
    case WAITIO_AMO_SET: __atomic_store_n(p, v, __ATOMIC_RELEASE); return 0;
    case WAITIO_AMO_SWAP: return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);
    case WAITIO_AMO_CSWAP: __atomic_compare_exchange_n(p, &c, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); return c;
    case WAITIO_AMO_ADD: return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
    case WAITIO_AMO_AND: return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST);
    case WAITIO_AMO_OR: return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST);
    default: return __atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST);
    }
}

static uint64_t apply64(uint64_t *p, int op, uint64_t v, uint64_t c)
{
    switch (op) {
    case WAITIO_AMO_FETCH: return __atomic_load_n(p, __ATOMIC_ACQUIRE);
    case WAITIO_AMO_SET: __atomic_store_n(p, v, __ATOMIC_RELEASE); return 0;
    case WAITIO_AMO_SWAP: return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);
    case WAITIO_AMO_CSWAP: __atomic_compare_exchange_n(p, &c, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); return c;
    case WAITIO_AMO_ADD: return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
    case WAITIO_AMO_AND: return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST);
    case WAITIO_AMO_OR: return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST);
    default: return __atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST);
    }
}

/* The atomic op on the word of `size` bytes at symmetric address dest on pe; returns the old
 * value when fetch (else 0 and the update completes by shmem_quiet). */
static uint64_t amo(const void *dest, int pe, int op, int fp, size_t size, uint64_t v, uint64_t c, int fetch,
                    const char *what)
{
    uint8_t *p = wio_shmem_direct(dest, size, pe);
    if (WIO_SH_LIKELY(p != NULL)) {
        if ((uintptr_t)p % size)
            wio_shmem_fatal("%s: %p is not aligned to %zu bytes", what, dest, size);
        return size == 4 ? apply32((uint32_t *)(void *)p, op, (uint32_t)v, (uint32_t)c)
                         : apply64((uint64_t *)(void *)p, op, v, c);
    }
    waitio_win_t w;
    size_t off;
    wio_shmem_sym(dest, size, pe, what, &w, &off);
    int type = size == 4 ? (fp ? WAITIO_AMO_FLOAT : WAITIO_AMO_UINT32) : (fp ? WAITIO_AMO_DOUBLE : WAITIO_AMO_UINT64);
    int rc;
    uint64_t r = 0;
    if (!fetch)
        S.pending = 1;
    if (size == 4) {
        uint32_t v32 = (uint32_t)v, c32 = (uint32_t)c, r32 = 0;
        rc = waitio_atomic(w, pe, off, op, type, &v32, &c32, fetch ? &r32 : NULL);
        r = r32;
    } else {
        rc = waitio_atomic(w, pe, off, op, type, &v, &c, fetch ? &r : NULL);
    }
    wio_shmem_check(rc, what);
    return r;
}

/* Integer T <-> its bit pattern; float and double by memcpy. */
#define BITS_OF(T, x, out)                                                                              \
    do {                                                                                                \
        if (sizeof(T) == 4) {                                                                           \
            uint32_t b_;                                                                                \
            memcpy(&b_, &(x), 4);                                                                       \
            out = b_;                                                                                   \
        } else {                                                                                        \
            memcpy(&(out), &(x), 8);                                                                    \
        }                                                                                               \
    } while (0)
#define OF_BITS(T, b, out)                                                                              \
    do {                                                                                                \
        if (sizeof(T) == 4) {                                                                           \
            uint32_t b_ = (uint32_t)(b);                                                                \
            memcpy(&(out), &b_, 4);                                                                     \
        } else {                                                                                        \
            uint64_t b_ = (b);                                                                          \
            memcpy(&(out), &b_, 8);                                                                     \
        }                                                                                               \
    } while (0)
#define IS_FP(T) ((T)0.5 != (T)0)

#define DEF_EXT(T, N)                                                                                   \
    T shmem_##N##_atomic_fetch(const T *source, int pe)                                                 \
    {                                                                                                   \
        T out;                                                                                          \
        OF_BITS(T, amo(source, pe, WAITIO_AMO_FETCH, IS_FP(T), sizeof(T), 0, 0, 1, "shmem_atomic_fetch"), out); \
        return out;                                                                                     \
    }                                                                                                   \
    void shmem_##N##_atomic_set(T *dest, T value, int pe)                                               \
    {                                                                                                   \
        uint64_t b = 0;                                                                                 \
        BITS_OF(T, value, b);                                                                           \
        amo(dest, pe, WAITIO_AMO_SET, IS_FP(T), sizeof(T), b, 0, 0, "shmem_atomic_set");                \
    }                                                                                                   \
    T shmem_##N##_atomic_swap(T *dest, T value, int pe)                                                 \
    {                                                                                                   \
        uint64_t b = 0;                                                                                 \
        T out;                                                                                          \
        BITS_OF(T, value, b);                                                                           \
        OF_BITS(T, amo(dest, pe, WAITIO_AMO_SWAP, IS_FP(T), sizeof(T), b, 0, 1, "shmem_atomic_swap"), out); \
        return out;                                                                                     \
    }                                                                                                   \
    void shmem_##N##_atomic_fetch_nbi(T *fetch, const T *source, int pe)                                \
    {                                                                                                   \
        *fetch = shmem_##N##_atomic_fetch(source, pe);                                                  \
    }                                                                                                   \
    void shmem_##N##_atomic_swap_nbi(T *fetch, T *dest, T value, int pe)                                \
    {                                                                                                   \
        *fetch = shmem_##N##_atomic_swap(dest, value, pe);                                              \
    }
WAITIO_SHMEM_EXT_AMO_TYPES(DEF_EXT)

#define DEF_AMO(T, N)                                                                                   \
    T shmem_##N##_atomic_compare_swap(T *dest, T cond, T value, int pe)                                 \
    {                                                                                                   \
        return (T)amo(dest, pe, WAITIO_AMO_CSWAP, 0, sizeof(T), (uint64_t)value, (uint64_t)cond, 1,     \
                      "shmem_atomic_compare_swap");                                                     \
    }                                                                                                   \
    T shmem_##N##_atomic_fetch_inc(T *dest, int pe)                                                     \
    {                                                                                                   \
        return (T)amo(dest, pe, WAITIO_AMO_ADD, 0, sizeof(T), 1, 0, 1, "shmem_atomic_fetch_inc");       \
    }                                                                                                   \
    void shmem_##N##_atomic_inc(T *dest, int pe)                                                        \
    {                                                                                                   \
        amo(dest, pe, WAITIO_AMO_ADD, 0, sizeof(T), 1, 0, 0, "shmem_atomic_inc");                       \
    }                                                                                                   \
    T shmem_##N##_atomic_fetch_add(T *dest, T value, int pe)                                            \
    {                                                                                                   \
        return (T)amo(dest, pe, WAITIO_AMO_ADD, 0, sizeof(T), (uint64_t)value, 0, 1, "shmem_atomic_fetch_add"); \
    }                                                                                                   \
    void shmem_##N##_atomic_add(T *dest, T value, int pe)                                               \
    {                                                                                                   \
        amo(dest, pe, WAITIO_AMO_ADD, 0, sizeof(T), (uint64_t)value, 0, 0, "shmem_atomic_add");         \
    }                                                                                                   \
    void shmem_##N##_atomic_compare_swap_nbi(T *fetch, T *dest, T cond, T value, int pe)                \
    {                                                                                                   \
        *fetch = shmem_##N##_atomic_compare_swap(dest, cond, value, pe);                                \
    }                                                                                                   \
    void shmem_##N##_atomic_fetch_inc_nbi(T *fetch, T *dest, int pe)                                    \
    {                                                                                                   \
        *fetch = shmem_##N##_atomic_fetch_inc(dest, pe);                                                \
    }                                                                                                   \
    void shmem_##N##_atomic_fetch_add_nbi(T *fetch, T *dest, T value, int pe)                           \
    {                                                                                                   \
        *fetch = shmem_##N##_atomic_fetch_add(dest, value, pe);                                         \
    }
WAITIO_SHMEM_AMO_TYPES(DEF_AMO)

#define DEF_BIT_OP(T, N, OP, CODE)                                                                      \
    T shmem_##N##_atomic_fetch_##OP(T *dest, T value, int pe)                                           \
    {                                                                                                   \
        return (T)amo(dest, pe, CODE, 0, sizeof(T), (uint64_t)value, 0, 1, "shmem_atomic_fetch_" #OP);  \
    }                                                                                                   \
    void shmem_##N##_atomic_##OP(T *dest, T value, int pe)                                              \
    {                                                                                                   \
        amo(dest, pe, CODE, 0, sizeof(T), (uint64_t)value, 0, 0, "shmem_atomic_" #OP);                  \
    }                                                                                                   \
    void shmem_##N##_atomic_fetch_##OP##_nbi(T *fetch, T *dest, T value, int pe)                        \
    {                                                                                                   \
        *fetch = shmem_##N##_atomic_fetch_##OP(dest, value, pe);                                        \
    }
#define DEF_BITWISE(T, N)                                                                               \
    DEF_BIT_OP(T, N, and, WAITIO_AMO_AND) DEF_BIT_OP(T, N, or, WAITIO_AMO_OR) DEF_BIT_OP(T, N, xor, WAITIO_AMO_XOR)
WAITIO_SHMEM_BITWISE_AMO_TYPES(DEF_BITWISE)
