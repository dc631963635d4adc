/*
 * atomic.c — the atomic operations on one word, the only implementation: the origin applies it to
 * a word it has mapped (a member's heap part on this host), the target applies it to its own
 * word when the operation arrives as a frame. Both are C11 atomics on the same memory, so
 * operations from every path on one word are atomic with respect to each other and give the
 * same result. Integer ops map to C11 fetch-ops; min, max and floating-point add have no
 * fetch-op, so they are a compare-and-swap loop on the word's bits (atomic with respect to every
 * other path all the same). Floating-point types take fetch, set, swap, add, min and max.
 */
#define WIO_LOG_SUBSYS WIO_SUB_RMA /* this file logs as "rma" (WAITIO_LOG=rma=LEVEL) */
#include <stdatomic.h>
#include <string.h>
#include "rma/rma.h"
#include "gpu/gpu.h"

size_t wio_amo_size(int type)
{
    switch (type) {
    case WAITIO_AMO_INT32:
    case WAITIO_AMO_UINT32:
    case WAITIO_AMO_FLOAT: return 4;
    case WAITIO_AMO_INT64:
    case WAITIO_AMO_UINT64:
    case WAITIO_AMO_DOUBLE: return 8;
    default: return 0;
    }
}

int wio_amo_defined(int op, int type)
{
    if (!wio_amo_size(type) || op < WAITIO_AMO_FETCH || op >= WAITIO_AMO_OP_MAX_)
        return 0;
    return !((type == WAITIO_AMO_FLOAT || type == WAITIO_AMO_DOUBLE) &&
             (op == WAITIO_AMO_CSWAP || op == WAITIO_AMO_AND || op == WAITIO_AMO_OR || op == WAITIO_AMO_XOR));
}

int wio_amo_check(int op, int type)
{
    if (!wio_amo_size(type) || op < WAITIO_AMO_FETCH || op >= WAITIO_AMO_OP_MAX_)
        return wio_fail(WAITIO_ERR_ARG, "unknown atomic operation %d or type %d", op, type);
    if (!wio_amo_defined(op, type))
        return wio_fail(WAITIO_ERR_ARG, "atomic operation %d is not defined on floating-point types "
                        "(fetch, set, swap, add, min and max are)", op);
    return 0;
}

/* The new value of a compare-and-swap op (min, max, fp add) from the old one, both as the
 * word's bits; *keep = the word stays as it is (no store needed). Min and max replace only when
 * the operand is strictly smaller / larger, so a NaN operand never replaces. */
static uint64_t cas_new(int op, int type, uint64_t old, uint64_t v, int *keep)
{
    *keep = 0;
    switch (type) {
    case WAITIO_AMO_FLOAT: {
        float o, x, n;
        uint32_t o32 = (uint32_t)old, v32 = (uint32_t)v, n32;
        memcpy(&o, &o32, 4);
        memcpy(&x, &v32, 4);
        int repl = op == WAITIO_AMO_MIN ? x < o : x > o;
        n = op == WAITIO_AMO_ADD ? o + x : repl ? x : o;
        *keep = op != WAITIO_AMO_ADD && !repl;
        memcpy(&n32, &n, 4);
        return n32;
    }
    case WAITIO_AMO_DOUBLE: {
        double o, x, n;
        memcpy(&o, &old, 8);
        memcpy(&x, &v, 8);
        int repl = op == WAITIO_AMO_MIN ? x < o : x > o;
        n = op == WAITIO_AMO_ADD ? o + x : repl ? x : o;
        *keep = op != WAITIO_AMO_ADD && !repl;
        uint64_t nb;
        memcpy(&nb, &n, 8);
        return nb;
    }
    case WAITIO_AMO_INT32: {
        int32_t o = (int32_t)(uint32_t)old, x = (int32_t)(uint32_t)v;
        *keep = op == WAITIO_AMO_MIN ? !(x < o) : !(x > o);
        return (uint32_t)x;
    }
    case WAITIO_AMO_INT64: {
        int64_t o = (int64_t)old, x = (int64_t)v;
        *keep = op == WAITIO_AMO_MIN ? !(x < o) : !(x > o);
        return (uint64_t)x;
    }
    default: /* unsigned */
        *keep = op == WAITIO_AMO_MIN ? !(v < old) : !(v > old);
        return v;
    }
}

#define CAS_LOOP(T, p, op, type, operand, out)                                                     \
    do {                                                                                           \
        _Atomic T *a = (_Atomic T *)(p);                                                           \
        T o = atomic_load_explicit(a, memory_order_acquire);                                       \
        for (;;) {                                                                                 \
            int keep;                                                                              \
            T n = (T)cas_new(op, type, o, operand, &keep);                                         \
            if (keep || atomic_compare_exchange_weak(a, &o, n))                                    \
                break;                                                                             \
        }                                                                                          \
        out = o;                                                                                   \
    } while (0)

static int needs_cas(int op, int type)
{
    return op == WAITIO_AMO_MIN || op == WAITIO_AMO_MAX ||
           (op == WAITIO_AMO_ADD && (type == WAITIO_AMO_FLOAT || type == WAITIO_AMO_DOUBLE));
}

#define APPLY(T, p, op, operand, compare, out)                                                     \
    do {                                                                                           \
        _Atomic T *a = (_Atomic T *)(p);                                                           \
        T v = (T)(operand), c = (T)(compare);                                                      \
        switch (op) {                                                                              \
        case WAITIO_AMO_FETCH: out = atomic_load_explicit(a, memory_order_acquire); break;         \
        case WAITIO_AMO_SET: atomic_store_explicit(a, v, memory_order_release); out = 0; break;    \
        case WAITIO_AMO_SWAP: out = atomic_exchange(a, v); break;                                  \
        case WAITIO_AMO_CSWAP:                                                                     \
            atomic_compare_exchange_strong(a, &c, v);                                              \
            out = c; /* the old value, whether or not it was replaced */                           \
            break;                                                                                 \
        case WAITIO_AMO_ADD: out = atomic_fetch_add(a, v); break;                                  \
        case WAITIO_AMO_AND: out = atomic_fetch_and(a, v); break;                                  \
        case WAITIO_AMO_OR: out = atomic_fetch_or(a, v); break;                                    \
        case WAITIO_AMO_XOR: out = atomic_fetch_xor(a, v); break;                                  \
        default: out = 0; break;                                                                   \
        }                                                                                          \
    } while (0)

uint64_t wio_amo_apply(void *p, int op, int type, uint64_t operand, uint64_t compare)
{
    if (needs_cas(op, type)) {
        if (wio_amo_size(type) == 4) {
            uint32_t out;
            CAS_LOOP(uint32_t, p, op, type, (uint32_t)operand, out);
            return out;
        }
        uint64_t out;
        CAS_LOOP(uint64_t, p, op, type, operand, out);
        return out;
    }
    if (wio_amo_size(type) == 4) {
        uint32_t out;
        APPLY(uint32_t, p, op, operand, compare, out);
        return out;
    }
    uint64_t out;
    APPLY(uint64_t, p, op, operand, compare, out);
    return out;
}

/* A device word: the CPU may not load it, so it is brought here, updated and written back. Every
 * WaitIO atomic on a device window is applied by this one function in the owner's progress (or
 * its own calls), one at a time under the engine's serialisation: atomic with respect to each
 * other, not to kernels running on the GPU (docs/one-sided.md, "Device memory"). */
int wio_amo_apply_device(void *p, int op, int type, uint64_t operand, uint64_t compare, uint64_t *old)
{
    size_t size = wio_amo_size(type);
    _Alignas(8) uint8_t word[8] = {0};
    int rc = wio_gpu_copy(word, p, size);
    if (rc)
        return rc;
    *old = wio_amo_apply(word, op, type, operand, compare);
    if (op == WAITIO_AMO_FETCH)
        return 0;
    return wio_gpu_copy(p, word, size);
}
