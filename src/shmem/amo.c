/*
 * amo.c — OpenSHMEM atomics. A word in a mapped heap part takes CPU atomics right here; any other
 * goes through waitio_atomic (served by the target with C11 atomics on the same word, so the two
 * paths mix). Integers move as 32/64-bit patterns (two's complement: signed and unsigned adds
 * are the same operation); float and double as their bits (fetch, set, swap only).
 *
 * Every atomic has a context form (shmem_ctx_*, ctx.c tracks what a context has in flight): a
 * non-fetching one through WaitIO is completed by the context's quiet; a fetching _nbi one never
 * blocks — it starts a waitio_iatomic whose request the context keeps, and the old value lands
 * in *fetch when that completes (at the latest in the context's quiet).
 */
#include <stdatomic.h>
#include "shmem/shmem_internal.h"

/* Inlined into every routine with its op and size constant: the mapped path is then one CPU
 * atomic and a mask test, without a division or a jump table (the WaitIO path stays out of line). */
#define AMO_INLINE static inline __attribute__((always_inline))

AMO_INLINE uint64_t apply32(uint32_t *p, int op, uint32_t v, uint32_t c)
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

AMO_INLINE uint64_t apply64(uint64_t *p, int op, uint64_t v, uint64_t c)
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

/* The atomic op on the word of `size` bytes at symmetric address dest on world PE pe; returns
 * the old value when fetch (else 0 and the update completes by the context's quiet). */
static __attribute__((noinline)) uint64_t amo_waitio(shmem_ctx_t c, const void *dest, int pe, int op, int fp,
                                                     size_t size, uint64_t v, uint64_t cmp, int fetch,
                                                     const char *what)
{
    waitio_win_t w;
    size_t off;
    wio_shmem_sym(dest, size, pe, what, &w, &off);
    int type = size == 4 ? (fp ? WAITIO_AMO_FLOAT : WAITIO_AMO_UINT32) : (fp ? WAITIO_AMO_DOUBLE : WAITIO_AMO_UINT64);
    int rc;
    uint64_t r = 0;
    if (size == 4) {
        uint32_t v32 = (uint32_t)v, c32 = (uint32_t)cmp, r32 = 0;
        rc = waitio_atomic(w, pe, off, op, type, &v32, &c32, fetch ? &r32 : NULL);
        r = r32;
    } else {
        rc = waitio_atomic(w, pe, off, op, type, &v, &cmp, fetch ? &r : NULL);
    }
    wio_shmem_check(rc, what);
    if (!fetch)
        wio_ctx_note(c, pe);
    return r;
}

static __attribute__((noinline, noreturn)) void amo_misaligned(const char *what, const void *dest, size_t size)
{
    wio_shmem_fatal("%s: %p is not aligned to %zu bytes", what, dest, size);
}

AMO_INLINE uint64_t amo(shmem_ctx_t c, const void *dest, int pe, int op, int fp, size_t size, uint64_t v,
                        uint64_t cmp, int fetch, const char *what)
{
    uint8_t *p = wio_shmem_direct(dest, size, pe);
    if (WIO_SH_LIKELY(p != NULL)) {
        if ((uintptr_t)p & (size - 1)) /* size is 4 or 8 */
            amo_misaligned(what, dest, size);
        return size == 4 ? apply32((uint32_t *)(void *)p, op, (uint32_t)v, (uint32_t)cmp)
                         : apply64((uint64_t *)(void *)p, op, v, cmp);
    }
    return amo_waitio(c, dest, pe, op, fp, size, v, cmp, fetch, what);
}

/* The fetching op without blocking: the old value is stored in *fetch (size bytes) at once on a
 * mapped word, else when the request, kept on the context, completes. */
static void amo_nbi(shmem_ctx_t c, void *fetch, const void *dest, int pe, int op, int fp, size_t size, uint64_t v,
                    uint64_t cmp, const char *what)
{
    uint8_t *p = wio_shmem_direct(dest, size, pe);
    if (WIO_SH_LIKELY(p != NULL)) {
        if ((uintptr_t)p & (size - 1))
            wio_shmem_fatal("%s: %p is not aligned to %zu bytes", what, dest, size);
        if (size == 4) {
            uint32_t r32 = (uint32_t)apply32((uint32_t *)(void *)p, op, (uint32_t)v, (uint32_t)cmp);
            memcpy(fetch, &r32, 4);
        } else {
            uint64_t r = apply64((uint64_t *)(void *)p, op, v, cmp);
            memcpy(fetch, &r, 8);
        }
        return;
    }
    waitio_win_t w;
    size_t off;
    wio_shmem_sym(dest, size, pe, what, &w, &off);
    int type = size == 4 ? (fp ? WAITIO_AMO_FLOAT : WAITIO_AMO_UINT32) : (fp ? WAITIO_AMO_DOUBLE : WAITIO_AMO_UINT64);
    uint32_t v32 = (uint32_t)v, c32 = (uint32_t)cmp;
    waitio_req_t req;
    int rc = size == 4 ? waitio_iatomic(w, pe, off, op, type, &v32, &c32, fetch, &req)
                       : waitio_iatomic(w, pe, off, op, type, &v, &cmp, fetch, &req);
    wio_shmem_check(rc, what);
    wio_ctx_add_req(c, &req);
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

#define DEFCTX (&waitio_shmem_ctx_default)
#define UNP(...) __VA_ARGS__
/* The public pair of an operation NAME##_##N(ctx, ...): the plain name on the default context and
 * the shmem_ctx_ name (SHMEM_CTX_INVALID: nothing done, 0 returned; PE numbers of its team). */
#define PUB_R(T, N, NAME, DECL, CALL)                                                                   \
    T shmem_##N##_atomic_##NAME(UNP DECL) { return NAME##_##N(DEFCTX, UNP CALL); }                      \
    T shmem_ctx_##N##_atomic_##NAME(shmem_ctx_t ctx, UNP DECL)                                          \
    {                                                                                                   \
        if (!ctx)                                                                                       \
            return (T)0;                                                                                \
        pe = wio_ctx_pe(ctx, pe, "shmem_ctx_atomic_" #NAME);                                            \
        return NAME##_##N(ctx, UNP CALL);                                                               \
    }
#define PUB_V(T, N, NAME, DECL, CALL)                                                                   \
    void shmem_##N##_atomic_##NAME(UNP DECL) { NAME##_##N(DEFCTX, UNP CALL); }                          \
    void shmem_ctx_##N##_atomic_##NAME(shmem_ctx_t ctx, UNP DECL)                                       \
    {                                                                                                   \
        if (!ctx)                                                                                       \
            return;                                                                                     \
        pe = wio_ctx_pe(ctx, pe, "shmem_ctx_atomic_" #NAME);                                            \
        NAME##_##N(ctx, UNP CALL);                                                                      \
    }

#define DEF_EXT(T, N)                                                                                   \
    static inline T fetch_##N(shmem_ctx_t c, const T *source, int pe)                                   \
    {                                                                                                   \
        T out;                                                                                          \
        OF_BITS(T, amo(c, source, pe, WAITIO_AMO_FETCH, IS_FP(T), sizeof(T), 0, 0, 1, "shmem_atomic_fetch"), out); \
        return out;                                                                                     \
    }                                                                                                   \
    static inline void set_##N(shmem_ctx_t c, T *dest, T value, int pe)                                 \
    {                                                                                                   \
        uint64_t b = 0;                                                                                 \
        BITS_OF(T, value, b);                                                                           \
        amo(c, dest, pe, WAITIO_AMO_SET, IS_FP(T), sizeof(T), b, 0, 0, "shmem_atomic_set");             \
    }                                                                                                   \
    static inline T swap_##N(shmem_ctx_t c, T *dest, T value, int pe)                                   \
    {                                                                                                   \
        uint64_t b = 0;                                                                                 \
        T out;                                                                                          \
        BITS_OF(T, value, b);                                                                           \
        OF_BITS(T, amo(c, dest, pe, WAITIO_AMO_SWAP, IS_FP(T), sizeof(T), b, 0, 1, "shmem_atomic_swap"), out); \
        return out;                                                                                     \
    }                                                                                                   \
    static inline void fetch_nbi_##N(shmem_ctx_t c, T *fetch, const T *source, int pe)                  \
    {                                                                                                   \
        amo_nbi(c, fetch, source, pe, WAITIO_AMO_FETCH, IS_FP(T), sizeof(T), 0, 0, "shmem_atomic_fetch_nbi"); \
    }                                                                                                   \
    static inline void swap_nbi_##N(shmem_ctx_t c, T *fetch, T *dest, T value, int pe)                  \
    {                                                                                                   \
        uint64_t b = 0;                                                                                 \
        BITS_OF(T, value, b);                                                                           \
        amo_nbi(c, fetch, dest, pe, WAITIO_AMO_SWAP, IS_FP(T), sizeof(T), b, 0, "shmem_atomic_swap_nbi"); \
    }                                                                                                   \
    PUB_R(T, N, fetch, (const T *source, int pe), (source, pe))                                         \
    PUB_V(T, N, set, (T *dest, T value, int pe), (dest, value, pe))                                     \
    PUB_R(T, N, swap, (T *dest, T value, int pe), (dest, value, pe))                                    \
    PUB_V(T, N, fetch_nbi, (T *fetch, const T *source, int pe), (fetch, source, pe))                    \
    PUB_V(T, N, swap_nbi, (T *fetch, T *dest, T value, int pe), (fetch, dest, value, pe))
WAITIO_SHMEM_EXT_AMO_TYPES(DEF_EXT)

#define DEF_AMO(T, N)                                                                                   \
    static inline T compare_swap_##N(shmem_ctx_t c, T *dest, T cond, T value, int pe)                   \
    {                                                                                                   \
        return (T)amo(c, dest, pe, WAITIO_AMO_CSWAP, 0, sizeof(T), (uint64_t)value, (uint64_t)cond, 1,  \
                      "shmem_atomic_compare_swap");                                                     \
    }                                                                                                   \
    static inline T fetch_inc_##N(shmem_ctx_t c, T *dest, int pe)                                       \
    {                                                                                                   \
        return (T)amo(c, dest, pe, WAITIO_AMO_ADD, 0, sizeof(T), 1, 0, 1, "shmem_atomic_fetch_inc");    \
    }                                                                                                   \
    static inline void inc_##N(shmem_ctx_t c, T *dest, int pe)                                          \
    {                                                                                                   \
        amo(c, dest, pe, WAITIO_AMO_ADD, 0, sizeof(T), 1, 0, 0, "shmem_atomic_inc");                    \
    }                                                                                                   \
    static inline T fetch_add_##N(shmem_ctx_t c, T *dest, T value, int pe)                              \
    {                                                                                                   \
        return (T)amo(c, dest, pe, WAITIO_AMO_ADD, 0, sizeof(T), (uint64_t)value, 0, 1, "shmem_atomic_fetch_add"); \
    }                                                                                                   \
    static inline void add_##N(shmem_ctx_t c, T *dest, T value, int pe)                                 \
    {                                                                                                   \
        amo(c, dest, pe, WAITIO_AMO_ADD, 0, sizeof(T), (uint64_t)value, 0, 0, "shmem_atomic_add");      \
    }                                                                                                   \
    static inline void compare_swap_nbi_##N(shmem_ctx_t c, T *fetch, T *dest, T cond, T value, int pe)  \
    {                                                                                                   \
        amo_nbi(c, fetch, dest, pe, WAITIO_AMO_CSWAP, 0, sizeof(T), (uint64_t)value, (uint64_t)cond,    \
                "shmem_atomic_compare_swap_nbi");                                                       \
    }                                                                                                   \
    static inline void fetch_inc_nbi_##N(shmem_ctx_t c, T *fetch, T *dest, int pe)                      \
    {                                                                                                   \
        amo_nbi(c, fetch, dest, pe, WAITIO_AMO_ADD, 0, sizeof(T), 1, 0, "shmem_atomic_fetch_inc_nbi");  \
    }                                                                                                   \
    static inline void fetch_add_nbi_##N(shmem_ctx_t c, T *fetch, T *dest, T value, int pe)             \
    {                                                                                                   \
        amo_nbi(c, fetch, dest, pe, WAITIO_AMO_ADD, 0, sizeof(T), (uint64_t)value, 0,                   \
                "shmem_atomic_fetch_add_nbi");                                                          \
    }                                                                                                   \
    PUB_R(T, N, compare_swap, (T *dest, T cond, T value, int pe), (dest, cond, value, pe))              \
    PUB_R(T, N, fetch_inc, (T *dest, int pe), (dest, pe))                                               \
    PUB_V(T, N, inc, (T *dest, int pe), (dest, pe))                                                     \
    PUB_R(T, N, fetch_add, (T *dest, T value, int pe), (dest, value, pe))                               \
    PUB_V(T, N, add, (T *dest, T value, int pe), (dest, value, pe))                                     \
    PUB_V(T, N, compare_swap_nbi, (T *fetch, T *dest, T cond, T value, int pe), (fetch, dest, cond, value, pe)) \
    PUB_V(T, N, fetch_inc_nbi, (T *fetch, T *dest, int pe), (fetch, dest, pe))                          \
    PUB_V(T, N, fetch_add_nbi, (T *fetch, T *dest, T value, int pe), (fetch, dest, value, pe))
WAITIO_SHMEM_AMO_TYPES(DEF_AMO)

#define DEF_BIT_OP(T, N, OP, CODE)                                                                      \
    static inline T fetch_##OP##_##N(shmem_ctx_t c, T *dest, T value, int pe)                           \
    {                                                                                                   \
        return (T)amo(c, dest, pe, CODE, 0, sizeof(T), (uint64_t)value, 0, 1, "shmem_atomic_fetch_" #OP); \
    }                                                                                                   \
    static inline void OP##_##N(shmem_ctx_t c, T *dest, T value, int pe)                                \
    {                                                                                                   \
        amo(c, dest, pe, CODE, 0, sizeof(T), (uint64_t)value, 0, 0, "shmem_atomic_" #OP);               \
    }                                                                                                   \
    static inline void fetch_##OP##_nbi_##N(shmem_ctx_t c, T *fetch, T *dest, T value, int pe)          \
    {                                                                                                   \
        amo_nbi(c, fetch, dest, pe, CODE, 0, sizeof(T), (uint64_t)value, 0, "shmem_atomic_fetch_" #OP "_nbi"); \
    }                                                                                                   \
    PUB_R(T, N, fetch_##OP, (T *dest, T value, int pe), (dest, value, pe))                              \
    PUB_V(T, N, OP, (T *dest, T value, int pe), (dest, value, pe))                                      \
    PUB_V(T, N, fetch_##OP##_nbi, (T *fetch, T *dest, T value, int pe), (fetch, dest, value, pe))
#define DEF_BITWISE(T, N)                                                                               \
    DEF_BIT_OP(T, N, and, WAITIO_AMO_AND) DEF_BIT_OP(T, N, or, WAITIO_AMO_OR) DEF_BIT_OP(T, N, xor, WAITIO_AMO_XOR)
WAITIO_SHMEM_BITWISE_AMO_TYPES(DEF_BITWISE)
