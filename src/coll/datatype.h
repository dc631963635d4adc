/*
 * datatype.h — the basic datatypes and reduction operations shared by the collectives and the
 * MPI conversion layer. The numeric values are ABI: waitio_mpi.h and waitio_mpif.h expose them.
 */
#ifndef WIO_DATATYPE_H
#define WIO_DATATYPE_H

#include <stddef.h>

enum wio_dtype {
    WIO_DT_CHAR = 1, WIO_DT_SIGNED_CHAR, WIO_DT_UNSIGNED_CHAR, WIO_DT_BYTE, WIO_DT_SHORT,
    WIO_DT_UNSIGNED_SHORT, WIO_DT_INT, WIO_DT_UNSIGNED, WIO_DT_LONG, WIO_DT_UNSIGNED_LONG,
    WIO_DT_LONG_LONG, WIO_DT_UNSIGNED_LONG_LONG, WIO_DT_FLOAT, WIO_DT_DOUBLE, WIO_DT_LONG_DOUBLE,
    WIO_DT_INT8, WIO_DT_INT16, WIO_DT_INT32, WIO_DT_INT64, WIO_DT_UINT8, WIO_DT_UINT16,
    WIO_DT_UINT32, WIO_DT_UINT64, WIO_DT_C_BOOL,
    /* Fortran */
    WIO_DT_F_INTEGER = 30, WIO_DT_F_REAL, WIO_DT_F_DOUBLE_PRECISION, WIO_DT_F_LOGICAL,
    WIO_DT_F_CHARACTER, WIO_DT_F_COMPLEX, WIO_DT_F_DOUBLE_COMPLEX, WIO_DT_F_INTEGER8,
    WIO_DT_F_REAL8, WIO_DT_F_REAL4, WIO_DT_F_INTEGER4,
    WIO_DT_MAX_
};

enum wio_op {
    WIO_OP_SUM = 1, WIO_OP_PROD, WIO_OP_MAX, WIO_OP_MIN, WIO_OP_LAND, WIO_OP_LOR, WIO_OP_LXOR,
    WIO_OP_BAND, WIO_OP_BOR, WIO_OP_BXOR, WIO_OP_MAX_
};

/* Size in bytes of one element, or 0 for an unknown datatype. */
size_t wio_dtype_size(int dtype);
/* Whether op is defined on dtype (MPI's rules). */
int wio_op_valid(int op, int dtype);
/* inout[i] = inout[i] op in[i] for i < count. Requires wio_op_valid. */
void wio_op_apply(int op, int dtype, const void *in, void *inout, size_t count);

#endif
