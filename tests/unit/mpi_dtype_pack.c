/* mpi_dtype_pack.c — unit test of the conversion layer's derived datatypes (src/mpi/dtype.c):
 * nested types (indexed of vector of resized struct; contiguous of a type with a negative lower
 * bound; hvector of indexed) against byte lists written out here by hand from MPI's typemap
 * rules; packing reads exactly those bytes in typemap order, unpacking writes exactly them and
 * leaves every hole alone; sizes, extents, bounds; contiguity detection; handle errors
 * (uncommitted, freed, double free, predefined, stale handle after slot reuse); a type kept
 * alive past Type_free; reductions over derived types: predefined op on one-base types, refused
 * on mixed ones, a non-commutative user op seeing the elements in the type's own layout. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "check.h"
#include "waitio_mpi.h"
#include "mpi/dtype.h"

typedef struct rec {
    int a;
    double b[2];
    char c;
} rec;

typedef struct range {
    ptrdiff_t off;
    size_t len;
} range;

static unsigned char src[8192], dst[8192], packed[8192], expect[8192];

static void fill_random(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (unsigned char)(seed >> 16);
    }
}

/* Packs and unpacks `count` elements of dt at base (an offset into src/dst) and checks them
 * against the byte ranges (relative to base) listed in typemap order. */
static void check_against(int dt, size_t count, ptrdiff_t base, const range *r, size_t nr)
{
    const wio_mpi_dt *t;
    REQUIRE(wio_mpi_dt_get(dt, &t) == 0);
    size_t total = 0;
    for (size_t i = 0; i < nr; i++) {
        memcpy(expect + total, src + base + r[i].off, r[i].len);
        total += r[i].len;
    }
    CHECK(count * t->size == total);
    memset(packed, 0xAB, sizeof packed);
    wio_mpi_dt_pack(t, src + base, count, packed);
    CHECK(memcmp(packed, expect, total) == 0);
    CHECK(packed[total] == 0xAB); /* nothing written past the packed bytes */
    memset(dst, 0xEE, sizeof dst);
    wio_mpi_dt_unpack(t, packed, count, total, dst + base);
    unsigned char want[8192];
    memset(want, 0xEE, sizeof want);
    for (size_t i = 0; i < nr; i++)
        memcpy(want + base + r[i].off, src + base + r[i].off, r[i].len);
    CHECK(memcmp(dst, want, sizeof want) == 0);
}

static int struct_type(void)
{
    int bl[3] = {1, 2, 1}, types[3] = {WAITIO_MPI_INT, WAITIO_MPI_DOUBLE, WAITIO_MPI_CHAR};
    WAITIO_MPI_Aint disp[3] = {offsetof(rec, a), offsetof(rec, b), offsetof(rec, c)};
    int st, rt;
    REQUIRE(waitio_mpi_type_create_struct(3, bl, disp, types, &st) == 0);
    WAITIO_MPI_Aint lb, ext;
    /* MPI rounds a struct's extent up to its most aligned member, as C pads the struct */
    CHECK(waitio_mpi_type_get_extent(st, &lb, &ext) == 0 && lb == 0 &&
          ext == (WAITIO_MPI_Aint)sizeof(rec));
    REQUIRE(waitio_mpi_type_create_resized(st, 0, sizeof(rec), &rt) == 0);
    CHECK(waitio_mpi_type_free(&st) == 0 && st == WAITIO_MPI_DATATYPE_NULL);
    return rt; /* still valid: built from st, which is gone */
}

static void test_nested(void)
{
    int rt = struct_type(), vec, idx;
    REQUIRE(waitio_mpi_type_vector(3, 2, 3, rt, &vec) == 0); /* 2 recs of every 3, 3 times */
    int bl[2] = {1, 1}, dis[2] = {1, 0};
    REQUIRE(waitio_mpi_type_indexed(2, bl, dis, vec, &idx) == 0);
    /* uncommitted: refused for communication, fine for get_extent */
    const wio_mpi_dt *t;
    CHECK(wio_mpi_dt_get(idx, &t) == WAITIO_ERR_ARG);
    REQUIRE(waitio_mpi_type_commit(&idx) == 0);
    int size;
    CHECK(waitio_mpi_type_size(idx, &size) == 0 && size == 2 * 6 * 21);
    WAITIO_MPI_Aint lb, ext, vext = 8 * (WAITIO_MPI_Aint)sizeof(rec);
    CHECK(waitio_mpi_type_get_extent(vec, &lb, &ext) == 0 && lb == 0 && ext == vext);
    CHECK(waitio_mpi_type_get_extent(idx, &lb, &ext) == 0 && lb == 0 && ext == 2 * vext);
    range r[96];
    size_t nr = 0;
    for (int d = 1; d >= 0; d--) /* typemap order: the indexed type's blocks as listed */
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 2; j++) {
                ptrdiff_t b = d * vext + (ptrdiff_t)(i * 3 + j) * (ptrdiff_t)sizeof(rec);
                r[nr++] = (range){b + (ptrdiff_t)offsetof(rec, a), sizeof(int)};
                r[nr++] = (range){b + (ptrdiff_t)offsetof(rec, b), 2 * sizeof(double)};
                r[nr++] = (range){b + (ptrdiff_t)offsetof(rec, c), 1};
            }
    check_against(idx, 1, 0, r, nr);
    /* two elements: the second one extent bytes further */
    for (size_t i = 0; i < nr; i++)
        r[nr + i] = (range){r[i].off + 2 * vext, r[i].len};
    check_against(idx, 2, 0, r, 2 * nr);
    CHECK(wio_mpi_dt_get(idx, &t) == 0 && !t->contig && t->base == 0);
    CHECK(waitio_mpi_type_free(&vec) == 0 && waitio_mpi_type_free(&rt) == 0);
    CHECK(waitio_mpi_type_free(&idx) == 0);
}

static void test_negative_lb(void)
{
    int r, c;
    REQUIRE(waitio_mpi_type_create_resized(WAITIO_MPI_INT, -4, 12, &r) == 0);
    REQUIRE(waitio_mpi_type_contiguous(3, r, &c) == 0 && waitio_mpi_type_commit(&c) == 0);
    WAITIO_MPI_Aint lb, ext;
    CHECK(waitio_mpi_type_get_extent(c, &lb, &ext) == 0 && lb == -4 && ext == 36);
    const wio_mpi_dt *t;
    REQUIRE(wio_mpi_dt_get(c, &t) == 0);
    CHECK(t->true_lb == 0 && t->true_ub == 28 && t->size == 12 && t->base == WAITIO_MPI_INT);
    range rr[6] = {{0, 4}, {12, 4}, {24, 4}, {36, 4}, {48, 4}, {60, 4}};
    check_against(c, 2, 64, rr, 6);
    /* hvector (byte stride) of an indexed type with a repeated, descending layout */
    int bl[3] = {2, 1, 1}, dis[3] = {5, 0, 5}, ix, hv;
    REQUIRE(waitio_mpi_type_indexed(3, bl, dis, WAITIO_MPI_SHORT, &ix) == 0);
    REQUIRE(waitio_mpi_type_create_hvector(2, 2, 40, ix, &hv) == 0);
    REQUIRE(waitio_mpi_type_commit(&hv) == 0);
    /* ix: shorts 5,6 then 0 then 5; extent 7 shorts = 14 bytes; hv: 2 ix at 0 and 14, at 0 and 40 */
    range hr[12];
    size_t n = 0;
    for (int blk = 0; blk < 2; blk++)
        for (int k = 0; k < 2; k++) {
            ptrdiff_t b = blk * 40 + k * 14;
            hr[n++] = (range){b + 10, 4};
            hr[n++] = (range){b + 0, 2};
            hr[n++] = (range){b + 10, 2};
        }
    check_against(hv, 1, 128, hr, n);
    CHECK(waitio_mpi_type_free(&r) == 0 && waitio_mpi_type_free(&c) == 0);
    CHECK(waitio_mpi_type_free(&ix) == 0 && waitio_mpi_type_free(&hv) == 0);
}

static void test_contiguity(void)
{
    int a, b, c;
    const wio_mpi_dt *t;
    REQUIRE(waitio_mpi_type_contiguous(4, WAITIO_MPI_DOUBLE, &a) == 0 && waitio_mpi_type_commit(&a) == 0);
    REQUIRE(waitio_mpi_type_vector(2, 2, 2, WAITIO_MPI_INT, &b) == 0 && waitio_mpi_type_commit(&b) == 0);
    REQUIRE(waitio_mpi_type_vector(2, 1, 2, WAITIO_MPI_INT, &c) == 0 && waitio_mpi_type_commit(&c) == 0);
    CHECK(wio_mpi_dt_get(a, &t) == 0 && t->contig && t->nbase == 4 && t->base == WAITIO_MPI_DOUBLE);
    CHECK(wio_mpi_dt_get(b, &t) == 0 && t->contig && t->size == 16);
    CHECK(wio_mpi_dt_get(c, &t) == 0 && !t->contig && t->size == 8 && t->extent == 12);
    range rr[2] = {{0, 4}, {8, 4}};
    check_against(c, 1, 8, rr, 2);
    CHECK(waitio_mpi_type_free(&a) == 0 && waitio_mpi_type_free(&b) == 0 && waitio_mpi_type_free(&c) == 0);
}

static void test_handles(void)
{
    int v, old;
    const wio_mpi_dt *t;
    CHECK(wio_mpi_dt_get(12345678, &t) == WAITIO_ERR_ARG);
    int pre = WAITIO_MPI_DOUBLE;
    CHECK(waitio_mpi_type_free(&pre) == WAITIO_ERR_ARG && pre == WAITIO_MPI_DOUBLE);
    REQUIRE(waitio_mpi_type_vector(2, 1, 3, WAITIO_MPI_INT, &v) == 0 && waitio_mpi_type_commit(&v) == 0);
    CHECK(v >= WAITIO_MPI_FIRST_DERIVED);
    REQUIRE(wio_mpi_dt_get(v, &t) == 0);
    wio_mpi_dt_ref(t); /* an operation in flight */
    const wio_mpi_dt *held = t;
    old = v;
    CHECK(waitio_mpi_type_free(&v) == 0 && v == WAITIO_MPI_DATATYPE_NULL);
    CHECK(waitio_mpi_type_free(&old) == WAITIO_ERR_ARG);          /* freed twice */
    CHECK(wio_mpi_dt_get(old, &t) == WAITIO_ERR_ARG);
    int again;
    REQUIRE(waitio_mpi_type_contiguous(2, WAITIO_MPI_INT, &again) == 0); /* may reuse the slot */
    CHECK(again != old && wio_mpi_dt_get(old, &t) == WAITIO_ERR_ARG);
    /* the descriptor held by the operation still packs */
    memset(packed, 0, 8);
    wio_mpi_dt_pack(held, src, 1, packed);
    CHECK(held->size == 8 && memcmp(packed, src, 4) == 0 && memcmp(packed + 4, src + 12, 4) == 0);
    wio_mpi_dt_unref(held);
    CHECK(waitio_mpi_type_free(&again) == 0);
    int n = 0, h[WAITIO_MPI_MAX_DERIVED_TYPES + 1], rc = 0;
    while (n <= WAITIO_MPI_MAX_DERIVED_TYPES && !(rc = waitio_mpi_type_contiguous(1, WAITIO_MPI_INT, &h[n])))
        n++;
    CHECK(rc == WAITIO_ERR_NOMEM && n == WAITIO_MPI_MAX_DERIVED_TYPES); /* bounded table */
    for (int i = 0; i < n; i++)
        CHECK(waitio_mpi_type_free(&h[i]) == 0);
}

/* inoutvec = invec * 10 + inoutvec, on the ints of vector(2,1,2,INT) elements in their layout
 * (at 0 and 8 of each 12-byte element): not commutative */
static int saw_hole_zero = 1;
static void shift_op(void *in, void *inout, int *len, WAITIO_MPI_Datatype *dt)
{
    (void)dt;
    for (int k = 0; k < *len; k++) {
        int *a = (int *)((char *)in + 12 * k), *b = (int *)((char *)inout + 12 * k);
        b[0] = a[0] * 10 + b[0];
        b[2] = a[2] * 10 + b[2];
        if (a[1] != 0 || b[1] != 0) /* the hole: not part of the type */
            saw_hole_zero = 0;
    }
}

static void test_reductions(void)
{
    int vd, mixed, vi, op;
    int bl[2] = {1, 1}, types[2] = {WAITIO_MPI_INT, WAITIO_MPI_DOUBLE};
    WAITIO_MPI_Aint disp[2] = {0, 8};
    REQUIRE(waitio_mpi_type_vector(3, 1, 2, WAITIO_MPI_DOUBLE, &vd) == 0 && waitio_mpi_type_commit(&vd) == 0);
    REQUIRE(waitio_mpi_type_create_struct(2, bl, disp, types, &mixed) == 0 && waitio_mpi_type_commit(&mixed) == 0);
    REQUIRE(waitio_mpi_type_vector(2, 1, 2, WAITIO_MPI_INT, &vi) == 0 && waitio_mpi_type_commit(&vi) == 0);
    wio_mpi_reducer r;
    CHECK(wio_mpi_reducer_init(&r, mixed, WAITIO_MPI_SUM, 2) == WAITIO_ERR_ARG);
    CHECK(wio_mpi_reducer_init(&r, vd, WAITIO_MPI_BAND, 1) == WAITIO_ERR_ARG); /* no BAND on double */
    REQUIRE(wio_mpi_reducer_init(&r, vd, WAITIO_MPI_SUM, 2) == 0 && r.bytes == 48);
    double a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {10, 20, 30, 40, 50, 60};
    CHECK(wio_mpi_reducer_apply(&r, a, b) == 0 && b[0] == 11 && b[5] == 66);
    CHECK(wio_mpi_reducer_init(&r, vi, 999, 1) == WAITIO_ERR_ARG); /* no such op */
    REQUIRE(waitio_mpi_op_create(shift_op, 0, &op) == 0 && op >= WAITIO_MPI_FIRST_USER_OP);
    REQUIRE(wio_mpi_reducer_init(&r, vi, op, 2) == 0 && !r.commute && r.bytes == 16);
    int in[4] = {1, 2, 3, 4}, io[4] = {5, 6, 7, 8}; /* packed: element k = ints 2k, 2k+1 */
    CHECK(wio_mpi_reducer_apply(&r, in, io) == 0);
    CHECK(io[0] == 15 && io[1] == 26 && io[2] == 37 && io[3] == 48 && saw_hole_zero);
    int stale = op;
    CHECK(waitio_mpi_op_free(&op) == 0 && op == WAITIO_MPI_OP_NULL);
    CHECK(waitio_mpi_op_free(&stale) == WAITIO_ERR_ARG);
    CHECK(wio_mpi_reducer_init(&r, vi, stale, 1) == WAITIO_ERR_ARG);
    CHECK(waitio_mpi_type_free(&vd) == 0 && waitio_mpi_type_free(&mixed) == 0 && waitio_mpi_type_free(&vi) == 0);
}

int main(void)
{
    fill_random(src, sizeof src, 7);
    test_nested();
    test_negative_lb();
    test_contiguity();
    test_handles();
    test_reductions();
    return check_report("mpi_dtype_pack");
}
