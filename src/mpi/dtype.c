/*
 * dtype.c — derived datatypes and user-defined reduction operations of the conversion layer
 * (Type_contiguous ... Type_free, Op_create/Op_free), packing and unpacking, and the record that
 * ties a non-contiguous point-to-point request to its packing buffer.
 *
 * A derived type is flattened when it is created: one element's data becomes a list of byte
 * blocks in typemap order (what MPI_Pack would write, in that order), adjacent blocks merged.
 * Nested types therefore cost nothing at communication time, and a type stays valid when the
 * types it was built from are freed (as MPI requires). Handles live in a bounded table; a
 * handle carries its slot's generation, so a freed handle is refused even after the slot is
 * reused. Descriptors are reference-counted: an operation in flight keeps its type alive after
 * Type_free, as MPI allows.
 */
#define WIO_LOG_SUBSYS WIO_SUB_MPI /* this file logs as "mpi" (WAITIO_LOG=mpi=LEVEL) */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "waitio_mpi.h"
#include "coll/datatype.h"
#include "core/api_lock.h"
#include "core/common.h"
#include "mpi/dtype.h"

/* One type's flattened description may not exceed this many blocks (16 bytes each): a vector
 * of a million separate doubles is fine, a type that would need gigabytes of description is
 * refused rather than allocated. */
#define MAX_BLOCKS (1u << 24)

/* ---- the descriptors of the predefined types ---- */

static wio_mpi_dt predefined[WIO_DT_MAX_];
static wio_dt_block predefined_blocks[WIO_DT_MAX_];
static int predefined_ready;

/* What the C compiler aligns each predefined type to: MPI rounds a struct type's extent up to
 * the largest of its members' (the "epsilon" of MPI's extent), so that it matches the C struct. */
static int predefined_align(int d, size_t s)
{
    switch (d) {
    case WIO_DT_LONG_DOUBLE: return (int)_Alignof(long double);
    case WIO_DT_F_COMPLEX: return (int)_Alignof(float);
    case WIO_DT_F_DOUBLE_COMPLEX: return (int)_Alignof(double);
    default: return (int)s;
    }
}

static void predefined_init(void)
{
    if (predefined_ready)
        return;
    for (int d = 1; d < WIO_DT_MAX_; d++) {
        size_t s = wio_dtype_size(d);
        if (!s)
            continue;
        predefined_blocks[d] = (wio_dt_block){.off = 0, .len = s};
        predefined[d] = (wio_mpi_dt){.handle = d, .committed = 1, .refs = 1, .size = s,
                                     .lb = 0, .extent = (ptrdiff_t)s, .true_lb = 0,
                                     .true_ub = (ptrdiff_t)s, .base = d, .nbase = 1, .contig = 1,
                                     .nblocks = 1, .blocks = &predefined_blocks[d],
                                     .align = predefined_align(d, s)};
    }
    predefined_ready = 1;
}

int wio_mpi_dt_is_predefined(int dtype) { return wio_dtype_size(dtype) != 0; }

/* ---- the table of derived types ---- */

static wio_mpi_dt *derived[WAITIO_MPI_MAX_DERIVED_TYPES];
static unsigned derived_gen[WAITIO_MPI_MAX_DERIVED_TYPES];

#define HANDLE_SPAN(max) ((INT32_MAX - WAITIO_MPI_FIRST_DERIVED) / (max))

/* The live derived type of a handle (committed or not), or NULL. */
static wio_mpi_dt *derived_of(int h)
{
    if (h < WAITIO_MPI_FIRST_DERIVED)
        return NULL;
    int slot = (h - WAITIO_MPI_FIRST_DERIVED) % WAITIO_MPI_MAX_DERIVED_TYPES;
    wio_mpi_dt *t = derived[slot];
    return t && t->handle == h && !t->freed ? t : NULL;
}

/* Any live datatype, committed or not (what constructors accept). */
static int dt_any(int dtype, const wio_mpi_dt **out)
{
    predefined_init();
    if (wio_dtype_size(dtype)) {
        *out = &predefined[dtype];
        return 0;
    }
    const wio_mpi_dt *t = derived_of(dtype);
    if (!t)
        return wio_fail(WAITIO_ERR_ARG, "datatype %d is not a predefined type or a derived type "
                        "that exists (freed, or never created)", dtype);
    *out = t;
    return 0;
}

int wio_mpi_dt_get(int dtype, const wio_mpi_dt **out)
{
    int rc = dt_any(dtype, out);
    if (!rc && !(*out)->committed)
        rc = wio_fail(WAITIO_ERR_ARG, "datatype %d is not committed (WAITIO_MPI_Type_commit)",
                      dtype);
    return rc;
}

static void dt_destroy(wio_mpi_dt *t)
{
    int slot = (t->handle - WAITIO_MPI_FIRST_DERIVED) % WAITIO_MPI_MAX_DERIVED_TYPES;
    if (derived[slot] == t)
        derived[slot] = NULL;
    free(t->blocks);
    free(t);
}

void wio_mpi_dt_ref(const wio_mpi_dt *t)
{
    if (t->handle >= WAITIO_MPI_FIRST_DERIVED)
        ((wio_mpi_dt *)t)->refs++;
}

void wio_mpi_dt_unref(const wio_mpi_dt *t)
{
    if (t->handle < WAITIO_MPI_FIRST_DERIVED)
        return;
    wio_mpi_dt *m = (wio_mpi_dt *)t;
    if (--m->refs == 0)
        dt_destroy(m);
}

/* ---- building a flattened type ---- */

typedef struct builder {
    wio_dt_block *b;
    size_t n, cap, size;
    int base, have_base, have_bounds, have_data, align, sticky;
    ptrdiff_t lb, ub, true_lb, true_ub;
} builder;

static int add_block(builder *bd, ptrdiff_t off, size_t len)
{
    if (!len)
        return 0;
    if (bd->n && bd->b[bd->n - 1].off + (ptrdiff_t)bd->b[bd->n - 1].len == off) {
        bd->b[bd->n - 1].len += len;
    } else {
        if (bd->n == MAX_BLOCKS)
            return wio_fail(WAITIO_ERR_ARG, "derived datatype of more than %u separate blocks",
                            MAX_BLOCKS);
        if (bd->n == bd->cap) {
            size_t cap = bd->cap ? 2 * bd->cap : 8;
            wio_dt_block *nb = realloc(bd->b, cap * sizeof *nb);
            if (!nb)
                return wio_fail(WAITIO_ERR_NOMEM, "out of memory for a derived datatype");
            bd->b = nb;
            bd->cap = cap;
        }
        bd->b[bd->n++] = (wio_dt_block){.off = off, .len = len};
    }
    bd->size += len;
    if (!bd->have_data || off < bd->true_lb)
        bd->true_lb = off;
    if (!bd->have_data || off + (ptrdiff_t)len > bd->true_ub)
        bd->true_ub = off + (ptrdiff_t)len;
    bd->have_data = 1;
    return 0;
}

/* Appends `copies` elements of t, the k-th at byte displacement disp + k * t->extent. */
static int add_type(builder *bd, const wio_mpi_dt *t, ptrdiff_t disp, size_t copies)
{
    if (!copies)
        return 0;
    if (t->align > bd->align)
        bd->align = t->align;
    bd->sticky |= t->sticky;
    if (!bd->have_base) {
        bd->base = t->base;
        bd->have_base = 1;
    } else if (bd->base != t->base) {
        bd->base = 0;
    }
    ptrdiff_t first = disp + t->lb, last = disp + (ptrdiff_t)(copies - 1) * t->extent + t->lb;
    ptrdiff_t lo = first < last ? first : last, hi = (first > last ? first : last) + t->extent;
    if (t->extent < 0) { /* a negative extent: the bounds run the other way */
        ptrdiff_t l2 = lo + t->extent, h2 = hi - t->extent;
        lo = l2 < lo ? l2 : lo;
        hi = h2 > hi ? h2 : hi;
    }
    if (!bd->have_bounds || lo < bd->lb)
        bd->lb = lo;
    if (!bd->have_bounds || hi > bd->ub)
        bd->ub = hi;
    bd->have_bounds = 1;
    for (size_t k = 0; k < copies; k++)
        for (size_t i = 0; i < t->nblocks; i++) {
            int rc = add_block(bd, disp + (ptrdiff_t)k * t->extent + t->blocks[i].off,
                               t->blocks[i].len);
            if (rc)
                return rc;
        }
    return 0;
}

/* Turns the builder into a new (uncommitted) derived type in the table: *newtype its handle.
 * epsilon: round the extent up to the alignment, as MPI does for a struct type (unless bounds
 * set by Type_create_resized are inside: then they rule, as in MPICH and Open MPI). */
static int builder_finish(builder *bd, WAITIO_MPI_Datatype *newtype, int epsilon)
{
    if (epsilon && !bd->sticky && bd->align > 1 && bd->have_bounds) {
        ptrdiff_t ext = bd->ub - bd->lb, a = bd->align;
        bd->ub += (a - ext % a) % a;
    }
    int slot = -1;
    for (int i = 0; i < WAITIO_MPI_MAX_DERIVED_TYPES && slot < 0; i++)
        if (!derived[i])
            slot = i;
    wio_mpi_dt *t = slot >= 0 ? calloc(1, sizeof *t) : NULL;
    if (!t) {
        free(bd->b);
        return slot < 0 ? wio_fail(WAITIO_ERR_NOMEM, "more than %d derived datatypes exist at "
                                   "once (WAITIO_MPI_Type_free those no longer needed)",
                                   WAITIO_MPI_MAX_DERIVED_TYPES)
                        : wio_fail(WAITIO_ERR_NOMEM, "out of memory for a derived datatype");
    }
    unsigned gen = derived_gen[slot]++ % (unsigned)HANDLE_SPAN(WAITIO_MPI_MAX_DERIVED_TYPES);
    t->handle = WAITIO_MPI_FIRST_DERIVED + slot + (int)gen * WAITIO_MPI_MAX_DERIVED_TYPES;
    t->refs = 1;
    t->size = bd->size;
    t->lb = bd->have_bounds ? bd->lb : 0;
    t->extent = bd->have_bounds ? bd->ub - bd->lb : 0;
    t->true_lb = bd->have_data ? bd->true_lb : 0;
    t->true_ub = bd->have_data ? bd->true_ub : 0;
    t->base = bd->have_base ? bd->base : 0;
    size_t bs = t->base ? wio_dtype_size(t->base) : 0;
    t->nbase = bs ? t->size / bs : 0;
    t->nblocks = bd->n;
    t->blocks = bd->b;
    t->contig = t->nblocks <= 1 && t->extent == (ptrdiff_t)t->size;
    t->align = bd->align ? bd->align : 1;
    t->sticky = bd->sticky;
    derived[slot] = t;
    *newtype = t->handle;
    return 0;
}

static int check_out(WAITIO_MPI_Datatype *newtype)
{
    return newtype ? 0 : wio_fail(WAITIO_ERR_ARG, "NULL pointer for the new datatype");
}

static int check_count(int count, const char *what)
{
    return count >= 0 ? 0 : wio_fail(WAITIO_ERR_ARG, "negative %s %d", what, count);
}

int waitio_mpi_type_contiguous(int count, WAITIO_MPI_Datatype oldtype, WAITIO_MPI_Datatype *newtype)
{
    WIO_API_GUARD();
    const wio_mpi_dt *old;
    int rc;
    if ((rc = check_out(newtype)) || (rc = check_count(count, "count")) || (rc = dt_any(oldtype, &old)))
        return rc;
    builder bd = {0};
    rc = add_type(&bd, old, 0, (size_t)count);
    if (rc) {
        free(bd.b);
        return rc;
    }
    return builder_finish(&bd, newtype, 0);
}

/* count blocks of blocklength elements of old, block i at byte displacement i * stride. */
static int hvector(int count, int blocklength, ptrdiff_t stride, int oldtype, int *newtype)
{
    const wio_mpi_dt *old;
    int rc;
    if ((rc = check_out(newtype)) || (rc = check_count(count, "count")) ||
        (rc = check_count(blocklength, "block length")) || (rc = dt_any(oldtype, &old)))
        return rc;
    builder bd = {0};
    for (int i = 0; i < count && !rc; i++)
        rc = add_type(&bd, old, (ptrdiff_t)i * stride, (size_t)blocklength);
    if (rc) {
        free(bd.b);
        return rc;
    }
    return builder_finish(&bd, newtype, 0);
}

int waitio_mpi_type_vector(int count, int blocklength, int stride, WAITIO_MPI_Datatype oldtype,
                           WAITIO_MPI_Datatype *newtype)
{
    WIO_API_GUARD();
    const wio_mpi_dt *old;
    int rc = dt_any(oldtype, &old);
    return rc ? rc : hvector(count, blocklength, (ptrdiff_t)stride * old->extent, oldtype, newtype);
}

int waitio_mpi_type_create_hvector(int count, int blocklength, WAITIO_MPI_Aint stride,
                                   WAITIO_MPI_Datatype oldtype, WAITIO_MPI_Datatype *newtype)
{
    WIO_API_GUARD();
    return hvector(count, blocklength, stride, oldtype, newtype);
}

int waitio_mpi_type_indexed(int count, const int blocklengths[], const int displs[],
                            WAITIO_MPI_Datatype oldtype, WAITIO_MPI_Datatype *newtype)
{
    WIO_API_GUARD();
    const wio_mpi_dt *old;
    int rc;
    if ((rc = check_out(newtype)) || (rc = check_count(count, "count")) || (rc = dt_any(oldtype, &old)))
        return rc;
    if (count && (!blocklengths || !displs))
        return wio_fail(WAITIO_ERR_ARG, "NULL block lengths or displacements");
    builder bd = {0};
    for (int i = 0; i < count && !rc; i++)
        if (!(rc = check_count(blocklengths[i], "block length")))
            rc = add_type(&bd, old, (ptrdiff_t)displs[i] * old->extent, (size_t)blocklengths[i]);
    if (rc) {
        free(bd.b);
        return rc;
    }
    return builder_finish(&bd, newtype, 0);
}

int waitio_mpi_type_create_struct(int count, const int blocklengths[], const WAITIO_MPI_Aint displs[],
                                  const WAITIO_MPI_Datatype types[], WAITIO_MPI_Datatype *newtype)
{
    WIO_API_GUARD();
    int rc;
    if ((rc = check_out(newtype)) || (rc = check_count(count, "count")))
        return rc;
    if (count && (!blocklengths || !displs || !types))
        return wio_fail(WAITIO_ERR_ARG, "NULL block lengths, displacements or types");
    builder bd = {0};
    for (int i = 0; i < count && !rc; i++) {
        const wio_mpi_dt *old;
        if (!(rc = check_count(blocklengths[i], "block length")) && !(rc = dt_any(types[i], &old)))
            rc = add_type(&bd, old, displs[i], (size_t)blocklengths[i]);
    }
    if (rc) {
        free(bd.b);
        return rc;
    }
    return builder_finish(&bd, newtype, 1);
}

int waitio_mpi_type_create_resized(WAITIO_MPI_Datatype oldtype, WAITIO_MPI_Aint lb,
                                   WAITIO_MPI_Aint extent, WAITIO_MPI_Datatype *newtype)
{
    WIO_API_GUARD();
    const wio_mpi_dt *old;
    int rc;
    if ((rc = check_out(newtype)) || (rc = dt_any(oldtype, &old)))
        return rc;
    builder bd = {0};
    if ((rc = add_type(&bd, old, 0, 1))) {
        free(bd.b);
        return rc;
    }
    bd.lb = lb;
    bd.ub = lb + extent;
    bd.have_bounds = 1;
    bd.sticky = 1;
    return builder_finish(&bd, newtype, 0);
}

int waitio_mpi_type_commit(WAITIO_MPI_Datatype *datatype)
{
    WIO_API_GUARD();
    if (!datatype)
        return wio_fail(WAITIO_ERR_ARG, "NULL datatype pointer");
    const wio_mpi_dt *t;
    int rc = dt_any(*datatype, &t);
    if (!rc && t->handle >= WAITIO_MPI_FIRST_DERIVED)
        ((wio_mpi_dt *)t)->committed = 1;
    return rc;
}

int waitio_mpi_type_free(WAITIO_MPI_Datatype *datatype)
{
    WIO_API_GUARD();
    if (!datatype)
        return wio_fail(WAITIO_ERR_ARG, "NULL datatype pointer");
    if (wio_dtype_size(*datatype))
        return wio_fail(WAITIO_ERR_ARG, "datatype %d is predefined: it cannot be freed", *datatype);
    wio_mpi_dt *t = derived_of(*datatype);
    if (!t)
        return wio_fail(WAITIO_ERR_ARG, "datatype %d does not exist (freed twice?)", *datatype);
    t->freed = 1;
    int slot = (t->handle - WAITIO_MPI_FIRST_DERIVED) % WAITIO_MPI_MAX_DERIVED_TYPES;
    derived[slot] = NULL; /* the slot is free again; operations in flight still hold t */
    wio_mpi_dt_unref(t);
    *datatype = WAITIO_MPI_DATATYPE_NULL;
    return 0;
}

int waitio_mpi_type_size(WAITIO_MPI_Datatype datatype, int *size)
{
    WIO_API_GUARD();
    const wio_mpi_dt *t;
    if (!size)
        return wio_fail(WAITIO_ERR_ARG, "NULL size pointer");
    int rc = dt_any(datatype, &t);
    if (rc)
        return rc;
    *size = t->size > INT32_MAX ? WAITIO_MPI_UNDEFINED : (int)t->size;
    return 0;
}

int waitio_mpi_type_get_extent(WAITIO_MPI_Datatype datatype, WAITIO_MPI_Aint *lb,
                               WAITIO_MPI_Aint *extent)
{
    WIO_API_GUARD();
    const wio_mpi_dt *t;
    if (!lb || !extent)
        return wio_fail(WAITIO_ERR_ARG, "NULL lb or extent pointer");
    int rc = dt_any(datatype, &t);
    if (rc)
        return rc;
    *lb = t->lb;
    *extent = t->extent;
    return 0;
}

/* ---- packing ---- */

void wio_mpi_dt_pack(const wio_mpi_dt *t, const void *buf, size_t count, void *out)
{
    const char *in = buf;
    char *o = out;
    if (!count || !t->size)
        return;
    if (t->contig) {
        memcpy(o, in + t->true_lb, count * t->size);
        return;
    }
    for (size_t k = 0; k < count; k++) {
        const char *el = in + (ptrdiff_t)k * t->extent;
        for (size_t i = 0; i < t->nblocks; i++) {
            memcpy(o, el + t->blocks[i].off, t->blocks[i].len);
            o += t->blocks[i].len;
        }
    }
}

void wio_mpi_dt_unpack(const wio_mpi_dt *t, const void *in, size_t count, size_t bytes, void *buf)
{
    const char *p = in;
    char *out = buf;
    size_t total = count * t->size;
    if (bytes > total)
        bytes = total;
    if (!bytes)
        return;
    if (t->contig) {
        memcpy(out + t->true_lb, p, bytes);
        return;
    }
    for (size_t k = 0; k < count && bytes; k++) {
        char *el = out + (ptrdiff_t)k * t->extent;
        for (size_t i = 0; i < t->nblocks && bytes; i++) {
            size_t n = t->blocks[i].len < bytes ? t->blocks[i].len : bytes;
            memcpy(el + t->blocks[i].off, p, n);
            p += n;
            bytes -= n;
        }
    }
}

void wio_mpi_dt_span(const wio_mpi_dt *t, size_t count, ptrdiff_t *lo, ptrdiff_t *hi)
{
    if (!count || !t->size) {
        *lo = *hi = 0;
        return;
    }
    ptrdiff_t last = (ptrdiff_t)(count - 1) * t->extent;
    *lo = t->true_lb + (last < 0 ? last : 0);
    *hi = t->true_ub + (last > 0 ? last : 0);
}

int wio_mpi_span_bytes(int count, int dtype, size_t *bytes)
{
    const wio_mpi_dt *t;
    int rc = wio_mpi_dt_get(dtype, &t);
    if (rc)
        return rc;
    if (count < 0)
        return wio_fail(WAITIO_ERR_ARG, "negative count %d", count);
    ptrdiff_t lo, hi;
    wio_mpi_dt_span(t, (size_t)count, &lo, &hi);
    *bytes = hi > 0 ? (size_t)hi : 0;
    return 0;
}

int wio_mpi_tbuf_open(wio_mpi_tbuf *b, const void *buf, size_t count, int dtype, int pack)
{
    *b = (wio_mpi_tbuf){.user = (void *)buf, .count = count};
    int rc = wio_mpi_dt_get(dtype, &b->t);
    if (rc)
        return rc;
    b->bytes = count * b->t->size;
    if (b->t->contig) {
        b->data = b->bytes ? (char *)buf + b->t->true_lb : (void *)buf;
        return 0;
    }
    b->tmp = malloc(b->bytes ? b->bytes : 1);
    if (!b->tmp)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory packing %zu bytes", b->bytes);
    b->data = b->tmp;
    if (pack)
        wio_mpi_dt_pack(b->t, buf, count, b->tmp);
    return 0;
}

void wio_mpi_tbuf_close(wio_mpi_tbuf *b, int unpack)
{
    if (b->tmp && unpack)
        wio_mpi_dt_unpack(b->t, b->tmp, b->count, b->bytes, b->user);
    free(b->tmp);
    b->tmp = NULL;
}

/* ---- user-defined operations ---- */

typedef struct user_op {
    int handle;
    WAITIO_MPI_User_function *fn;
    int commute;
} user_op;

static user_op user_ops[WAITIO_MPI_MAX_USER_OPS];
static unsigned user_op_gen[WAITIO_MPI_MAX_USER_OPS];

static user_op *user_op_of(int h)
{
    if (h < WAITIO_MPI_FIRST_USER_OP)
        return NULL;
    int slot = (h - WAITIO_MPI_FIRST_USER_OP) % WAITIO_MPI_MAX_USER_OPS;
    return user_ops[slot].fn && user_ops[slot].handle == h ? &user_ops[slot] : NULL;
}

int waitio_mpi_op_create(WAITIO_MPI_User_function *function, int commute, WAITIO_MPI_Op *op)
{
    WIO_API_GUARD();
    if (!function || !op)
        return wio_fail(WAITIO_ERR_ARG, "NULL function or operation pointer");
    for (int slot = 0; slot < WAITIO_MPI_MAX_USER_OPS; slot++) {
        if (user_ops[slot].fn)
            continue;
        unsigned span = (unsigned)((INT32_MAX - WAITIO_MPI_FIRST_USER_OP) / WAITIO_MPI_MAX_USER_OPS);
        unsigned gen = user_op_gen[slot]++ % span;
        user_ops[slot] = (user_op){.handle = WAITIO_MPI_FIRST_USER_OP + slot +
                                             (int)gen * WAITIO_MPI_MAX_USER_OPS,
                                   .fn = function, .commute = commute != 0};
        *op = user_ops[slot].handle;
        return 0;
    }
    return wio_fail(WAITIO_ERR_NOMEM, "more than %d user operations exist at once",
                    WAITIO_MPI_MAX_USER_OPS);
}

int waitio_mpi_op_free(WAITIO_MPI_Op *op)
{
    WIO_API_GUARD();
    if (!op)
        return wio_fail(WAITIO_ERR_ARG, "NULL operation pointer");
    user_op *u = user_op_of(*op);
    if (!u)
        return wio_fail(WAITIO_ERR_ARG, "operation %d is not a user operation that exists", *op);
    u->fn = NULL;
    *op = WAITIO_MPI_OP_NULL;
    return 0;
}

int wio_mpi_reducer_init(wio_mpi_reducer *r, int dtype, int op, size_t count)
{
    *r = (wio_mpi_reducer){.dtype = dtype, .op = op, .count = count, .commute = 1};
    int rc = wio_mpi_dt_get(dtype, &r->t);
    if (rc)
        return rc;
    r->bytes = count * r->t->size;
    if (op > 0 && op < WIO_OP_MAX_) {
        if (!r->t->base || !wio_op_valid(op, r->t->base))
            return wio_fail(WAITIO_ERR_ARG, "operation %d is not defined on datatype %d%s", op,
                            dtype, r->t->base ? "" : " (a derived type of more than one "
                            "predefined type: only user operations apply)");
        return 0;
    }
    user_op *u = user_op_of(op);
    if (!u)
        return wio_fail(WAITIO_ERR_ARG, "operation %d is not predefined or a user operation "
                        "that exists", op);
    r->fn = u->fn;
    r->commute = u->commute;
    if (count > INT32_MAX)
        return wio_fail(WAITIO_ERR_ARG, "count %zu too large for a user operation", count);
    return 0;
}

int wio_mpi_reducer_apply(const wio_mpi_reducer *r, const void *in, void *inout)
{
    if (!r->count)
        return 0;
    if (!r->fn) {
        wio_op_apply(r->op, r->t->base, in, inout, r->count * r->t->nbase);
        return 0;
    }
    int len = (int)r->count;
    WAITIO_MPI_Datatype dt = r->dtype;
    if (r->t->contig && r->t->true_lb == 0) { /* the packed bytes are the elements themselves */
        r->fn((void *)in, inout, &len, &dt);
        return 0;
    }
    /* the function wants the elements laid out as the type says: unpack both operands into
     * scratch spans, apply, pack the result back */
    ptrdiff_t lo, hi;
    wio_mpi_dt_span(r->t, r->count, &lo, &hi);
    size_t span = (size_t)(hi - lo);
    char *a = calloc(1, span), *b = calloc(1, span);
    if (!a || !b) {
        free(a);
        free(b);
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory for a user operation");
    }
    wio_mpi_dt_unpack(r->t, in, r->count, r->bytes, a - lo);
    wio_mpi_dt_unpack(r->t, inout, r->count, r->bytes, b - lo);
    r->fn(a - lo, b - lo, &len, &dt);
    wio_mpi_dt_pack(r->t, b - lo, r->count, inout);
    free(a);
    free(b);
    return 0;
}

/* ---- point-to-point requests with a packing buffer ---- */

/* The record's slot lives in the request's spare words (waitio.h: reserved[1..3] are not used
 * by the core), checked against a magic value and a generation so that a request that never
 * had a record, or a stale copy, is never taken for one. */
#define PENDING_MAGIC 0x5741495444547970ul /* "WAITDTyp" */

typedef struct pending {
    unsigned gen;
    int used, recv;
    void *tmp, *user;
    size_t count;
    const wio_mpi_dt *t;
} pending;

static pending *pend;
static size_t npend;

int wio_mpi_pending_add(waitio_req_t *req, void *tmp, void *user, size_t count,
                        const wio_mpi_dt *t, int recv)
{
    size_t slot = 0;
    while (slot < npend && pend[slot].used)
        slot++;
    if (slot == npend) {
        size_t n = npend ? 2 * npend : 16;
        pending *np = realloc(pend, n * sizeof *np);
        if (!np)
            return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
        memset(np + npend, 0, (n - npend) * sizeof *np);
        pend = np;
        npend = n;
    }
    pending *p = &pend[slot];
    p->gen++;
    p->used = 1;
    p->recv = recv;
    p->tmp = tmp;
    p->user = user;
    p->count = count;
    p->t = t;
    wio_mpi_dt_ref(t);
    req->reserved[2] = PENDING_MAGIC;
    req->reserved[3] = ((unsigned long)p->gen << 32) | (unsigned long)(slot + 1);
    return 0;
}

int wio_mpi_req_done(waitio_req_t *req, int rc)
{
    if (!req || req->reserved[2] != PENDING_MAGIC)
        return rc;
    size_t slot = (size_t)(req->reserved[3] & 0xffffffffu);
    unsigned gen = (unsigned)(req->reserved[3] >> 32);
    req->reserved[2] = req->reserved[3] = 0;
    if (!slot || slot > npend || !pend[slot - 1].used || pend[slot - 1].gen != gen)
        return rc;
    pending *p = &pend[slot - 1];
    if (p->recv && !req->status.error)
        wio_mpi_dt_unpack(p->t, p->tmp, p->count, req->status.len, p->user);
    free(p->tmp);
    wio_mpi_dt_unref(p->t);
    p->used = 0;
    p->tmp = p->user = NULL;
    return rc;
}
