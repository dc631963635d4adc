/*
 * atomic.c — the atomic operations on one word, the only implementation: the origin applies it to
 * a word it has mapped (a member's heap part on this host), the target applies it to its own
 * word when the operation arrives as a frame. Both are C11 atomics on the same memory, so
 * operations from every path on one word are atomic with respect to each other and give the
 * same result. Floating-point types allow fetch, set and swap only (their bits are moved as
 * integers of the same size).
 */
#include <stdatomic.h>
#include <string.h>
#include "rma/rma.h"

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

int wio_amo_check(int op, int type)
{
    if (!wio_amo_size(type) || op < WAITIO_AMO_FETCH || op >= WAITIO_AMO_OP_MAX_)
        return wio_fail(WAITIO_ERR_ARG, "unknown atomic operation %d or type %d", op, type);
    if ((type == WAITIO_AMO_FLOAT || type == WAITIO_AMO_DOUBLE) && op != WAITIO_AMO_FETCH &&
        op != WAITIO_AMO_SET && op != WAITIO_AMO_SWAP)
        return wio_fail(WAITIO_ERR_ARG, "atomic operation %d is not defined on floating-point types "
                        "(fetch, set and swap are)", op);
    return 0;
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
    if (wio_amo_size(type) == 4) {
        uint32_t out;
        APPLY(uint32_t, p, op, operand, compare, out);
        return out;
    }
    uint64_t out;
    APPLY(uint64_t, p, op, operand, compare, out);
    return out;
}
