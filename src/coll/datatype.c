/*
 * datatype.c — element sizes and the reduction kernels for every (operation, datatype) pair
 * that MPI defines. Kernels are generated per C type; each loops over plain arrays so the
 * compiler vectorises them.
 */
#include <complex.h>
#include <stdbool.h>
#include <stdint.h>
#include "coll/datatype.h"

enum type_class { TC_NONE, TC_INT, TC_FLOAT, TC_COMPLEX, TC_BYTE, TC_LOGICAL };

static const struct { size_t size; int cls; } dtypes[WIO_DT_MAX_] = {
    [WIO_DT_CHAR] = {1, TC_INT}, [WIO_DT_SIGNED_CHAR] = {1, TC_INT},
    [WIO_DT_UNSIGNED_CHAR] = {1, TC_INT}, [WIO_DT_BYTE] = {1, TC_BYTE},
    [WIO_DT_SHORT] = {sizeof(short), TC_INT}, [WIO_DT_UNSIGNED_SHORT] = {sizeof(short), TC_INT},
    [WIO_DT_INT] = {sizeof(int), TC_INT}, [WIO_DT_UNSIGNED] = {sizeof(int), TC_INT},
    [WIO_DT_LONG] = {sizeof(long), TC_INT}, [WIO_DT_UNSIGNED_LONG] = {sizeof(long), TC_INT},
    [WIO_DT_LONG_LONG] = {8, TC_INT}, [WIO_DT_UNSIGNED_LONG_LONG] = {8, TC_INT},
    [WIO_DT_FLOAT] = {4, TC_FLOAT}, [WIO_DT_DOUBLE] = {8, TC_FLOAT},
    [WIO_DT_LONG_DOUBLE] = {sizeof(long double), TC_FLOAT},
    [WIO_DT_INT8] = {1, TC_INT}, [WIO_DT_INT16] = {2, TC_INT}, [WIO_DT_INT32] = {4, TC_INT},
    [WIO_DT_INT64] = {8, TC_INT}, [WIO_DT_UINT8] = {1, TC_INT}, [WIO_DT_UINT16] = {2, TC_INT},
    [WIO_DT_UINT32] = {4, TC_INT}, [WIO_DT_UINT64] = {8, TC_INT},
    [WIO_DT_C_BOOL] = {sizeof(bool), TC_LOGICAL},
    [WIO_DT_F_INTEGER] = {4, TC_INT}, [WIO_DT_F_REAL] = {4, TC_FLOAT},
    [WIO_DT_F_DOUBLE_PRECISION] = {8, TC_FLOAT}, [WIO_DT_F_LOGICAL] = {4, TC_LOGICAL},
    [WIO_DT_F_CHARACTER] = {1, TC_NONE}, [WIO_DT_F_COMPLEX] = {8, TC_COMPLEX},
    [WIO_DT_F_DOUBLE_COMPLEX] = {16, TC_COMPLEX}, [WIO_DT_F_INTEGER8] = {8, TC_INT},
    [WIO_DT_F_REAL8] = {8, TC_FLOAT}, [WIO_DT_F_REAL4] = {4, TC_FLOAT},
    [WIO_DT_F_INTEGER4] = {4, TC_INT},
};

size_t wio_dtype_size(int dtype)
{
    return dtype > 0 && dtype < WIO_DT_MAX_ ? dtypes[dtype].size : 0;
}

int wio_op_valid(int op, int dtype)
{
    if (!wio_dtype_size(dtype) || op <= 0 || op >= WIO_OP_MAX_)
        return 0;
    switch (dtypes[dtype].cls) {
    case TC_INT: return 1;
    case TC_FLOAT: return op <= WIO_OP_MIN;
    case TC_COMPLEX: return op <= WIO_OP_PROD;
    case TC_BYTE: return op >= WIO_OP_BAND;
    case TC_LOGICAL: return op >= WIO_OP_LAND && op <= WIO_OP_LXOR;
    default: return 0;
    }
}

#define ARITH_LOOP(T, EXPR)                                   \
    do {                                                      \
        const T *a = in;                                      \
        T *b = inout;                                         \
        for (size_t i = 0; i < count; i++)                    \
            b[i] = (T)(EXPR);                                 \
    } while (0)

#define INT_KERNEL(name, T)                                                        \
    static void name(int op, const void *in, void *inout, size_t count)           \
    {                                                                              \
        switch (op) {                                                              \
        case WIO_OP_SUM: ARITH_LOOP(T, b[i] + a[i]); break;                        \
        case WIO_OP_PROD: ARITH_LOOP(T, b[i] * a[i]); break;                       \
        case WIO_OP_MAX: ARITH_LOOP(T, a[i] > b[i] ? a[i] : b[i]); break;          \
        case WIO_OP_MIN: ARITH_LOOP(T, a[i] < b[i] ? a[i] : b[i]); break;          \
        case WIO_OP_LAND: ARITH_LOOP(T, (b[i] != 0) && (a[i] != 0)); break;        \
        case WIO_OP_LOR: ARITH_LOOP(T, (b[i] != 0) || (a[i] != 0)); break;         \
        case WIO_OP_LXOR: ARITH_LOOP(T, (b[i] != 0) != (a[i] != 0)); break;        \
        case WIO_OP_BAND: ARITH_LOOP(T, b[i] & a[i]); break;                       \
        case WIO_OP_BOR: ARITH_LOOP(T, b[i] | a[i]); break;                        \
        case WIO_OP_BXOR: ARITH_LOOP(T, b[i] ^ a[i]); break;                       \
        }                                                                          \
    }

#define FLOAT_KERNEL(name, T)                                                      \
    static void name(int op, const void *in, void *inout, size_t count)           \
    {                                                                              \
        switch (op) {                                                              \
        case WIO_OP_SUM: ARITH_LOOP(T, b[i] + a[i]); break;                        \
        case WIO_OP_PROD: ARITH_LOOP(T, b[i] * a[i]); break;                       \
        case WIO_OP_MAX: ARITH_LOOP(T, a[i] > b[i] ? a[i] : b[i]); break;          \
        case WIO_OP_MIN: ARITH_LOOP(T, a[i] < b[i] ? a[i] : b[i]); break;          \
        }                                                                          \
    }

#define LOGICAL_KERNEL(name, T)                                                    \
    static void name(int op, const void *in, void *inout, size_t count)           \
    {                                                                              \
        switch (op) {                                                              \
        case WIO_OP_LAND: ARITH_LOOP(T, b[i] && a[i]); break;                      \
        case WIO_OP_LOR: ARITH_LOOP(T, b[i] || a[i]); break;                       \
        case WIO_OP_LXOR: ARITH_LOOP(T, b[i] != a[i]); break;                      \
        }                                                                          \
    }

#define COMPLEX_KERNEL(name, T)                                                    \
    static void name(int op, const void *in, void *inout, size_t count)           \
    {                                                                              \
        switch (op) {                                                              \
        case WIO_OP_SUM: ARITH_LOOP(T, b[i] + a[i]); break;                        \
        case WIO_OP_PROD: ARITH_LOOP(T, b[i] * a[i]); break;                       \
        }                                                                          \
    }

INT_KERNEL(k_i8, int8_t)
INT_KERNEL(k_u8, uint8_t)
INT_KERNEL(k_i16, int16_t)
INT_KERNEL(k_u16, uint16_t)
INT_KERNEL(k_i32, int32_t)
INT_KERNEL(k_u32, uint32_t)
INT_KERNEL(k_i64, int64_t)
INT_KERNEL(k_u64, uint64_t)
LOGICAL_KERNEL(k_bool, bool)
FLOAT_KERNEL(k_f32, float)
FLOAT_KERNEL(k_f64, double)
FLOAT_KERNEL(k_f80, long double)
COMPLEX_KERNEL(k_c32, float _Complex)
COMPLEX_KERNEL(k_c64, double _Complex)

typedef void (*kernel_fn)(int op, const void *in, void *inout, size_t count);

static kernel_fn kernel_for(int dtype)
{
    switch (dtype) {
    case WIO_DT_CHAR: case WIO_DT_SIGNED_CHAR: case WIO_DT_INT8: return k_i8;
    case WIO_DT_UNSIGNED_CHAR: case WIO_DT_BYTE: case WIO_DT_UINT8: return k_u8;
    case WIO_DT_SHORT: case WIO_DT_INT16: return k_i16;
    case WIO_DT_UNSIGNED_SHORT: case WIO_DT_UINT16: return k_u16;
    case WIO_DT_INT: case WIO_DT_INT32: case WIO_DT_F_INTEGER: case WIO_DT_F_INTEGER4:
    case WIO_DT_F_LOGICAL: return k_i32;
    case WIO_DT_UNSIGNED: case WIO_DT_UINT32: return k_u32;
    case WIO_DT_LONG: return sizeof(long) == 8 ? k_i64 : k_i32;
    case WIO_DT_UNSIGNED_LONG: return sizeof(long) == 8 ? k_u64 : k_u32;
    case WIO_DT_LONG_LONG: case WIO_DT_INT64: case WIO_DT_F_INTEGER8: return k_i64;
    case WIO_DT_UNSIGNED_LONG_LONG: case WIO_DT_UINT64: return k_u64;
    case WIO_DT_C_BOOL: return k_bool;
    case WIO_DT_FLOAT: case WIO_DT_F_REAL: case WIO_DT_F_REAL4: return k_f32;
    case WIO_DT_DOUBLE: case WIO_DT_F_DOUBLE_PRECISION: case WIO_DT_F_REAL8: return k_f64;
    case WIO_DT_LONG_DOUBLE: return k_f80;
    case WIO_DT_F_COMPLEX: return k_c32;
    case WIO_DT_F_DOUBLE_COMPLEX: return k_c64;
    default: return NULL;
    }
}

void wio_op_apply(int op, int dtype, const void *in, void *inout, size_t count)
{
    kernel_fn k = kernel_for(dtype);
    if (k)
        k(op, in, inout, count);
}
