/*
 * mpi_types.c — the conversion layer's derived datatypes, user-defined operations, IN_PLACE
 * forms and the collectives beyond the basics (Allgatherv, Alltoallv, Reduce_scatter(_block),
 * Scan, Exscan), run as PBs of different MPIs (tests/scripts/mpi_types.sh). Every process:
 *  - builds the same datatypes in WaitIO and in its real MPI (vector, indexed, struct without
 *    resizing — MPI's alignment rule decides its extent —, resized, contiguous) and checks
 *    size and extent against MPI's;
 *  - across the universe (processes of both PBs), runs every routine on inputs derived from
 *    seeds (counts, roots, displacements random per case, the same on every rank) and checks
 *    every byte of every receive buffer (holes included) against a result computed here with
 *    the real MPI's own datatype engine: MPI_Pack/MPI_Unpack for data movement, rank-ordered
 *    MPI_Reduce_local folds (the same user functions, registered with MPI_Op_create) for
 *    reductions;
 *  - on its own PB's group, runs the same routine and the real MPI routine on MPI_COMM_WORLD
 *    with the same inputs and compares the data (every byte of the typemap);
 *  - point-to-point with derived types across PBs (send and receive types differing, a
 *    type freed while its receive is pending), and the errors (a predefined operation on a
 *    struct of mixed types, an uncommitted type, a freed handle).
 * The user operations: a commutative one on a struct (sum, max, xor of its fields) and a
 * non-commutative one (composition of affine maps x -> a x + b modulo 2^32), so a result
 * folded out of rank order differs.
 * Usage: mpi_types [cases per routine] (default 3)
 */
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "waitio_mpi.h"
#include "testutil.h"

typedef struct rec {
    int a;
    double b[2];
    char c;
} rec;

enum { TY_VEC, TY_IDX, TY_V6, TY_REC, TY_AFF, TY_CONT, TY_INT, NTY };
enum { K_DOUBLE, K_INT, K_REC, K_UNS };
static struct {
    const char *name;
    int kind, w, size;
    MPI_Datatype m;
    MPI_Aint extent;
    MPI_Datatype base; /* the one predefined type of its data (for predefined operations) */
} ty[NTY];

enum { OP_SUM, OP_MAX, OP_REC, OP_AFF, NOP };
static int wop[NOP];
static MPI_Op mop[NOP];
static const char *opname[NOP] = {"SUM", "MAX", "rec-op", "affine-op"};

static int urank, usize, pbid, wrank, wsize;

/* ---- user operations: one body, called by both MPIs' and WaitIO's signatures ---- */

static void rec_core(void *in, void *io, int len)
{
    for (int k = 0; k < len; k++) {
        rec *a = (rec *)in + k, *b = (rec *)io + k;
        b->a += a->a;
        b->b[0] = a->b[0] > b->b[0] ? a->b[0] : b->b[0];
        b->b[1] += a->b[1];
        b->c ^= a->c;
    }
}

/* elements of TY_AFF: (a, b) at the start of each 12-byte element; io = io after in */
static void aff_core(void *in, void *io, int len)
{
    for (int k = 0; k < len; k++) {
        unsigned *x = (unsigned *)((char *)in + 12 * k), *y = (unsigned *)((char *)io + 12 * k);
        unsigned na = x[0] * y[0], nb = y[0] * x[1] + y[1];
        y[0] = na;
        y[1] = nb;
    }
}

static void w_rec(void *in, void *io, int *len, WAITIO_MPI_Datatype *dt) { (void)dt; rec_core(in, io, *len); }
static void w_aff(void *in, void *io, int *len, WAITIO_MPI_Datatype *dt) { (void)dt; aff_core(in, io, *len); }
static void m_rec(void *in, void *io, int *len, MPI_Datatype *dt) { (void)dt; rec_core(in, io, *len); }
static void m_aff(void *in, void *io, int *len, MPI_Datatype *dt) { (void)dt; aff_core(in, io, *len); }

/* ---- types ---- */

static void check_type(int i)
{
    int ws, ms;
    WAITIO_MPI_Aint wlb, wext;
    MPI_Aint mlb, mext;
    TU_CHECK(waitio_mpi_type_commit(&ty[i].w));
    MPI_Type_commit(&ty[i].m);
    TU_CHECK(waitio_mpi_type_size(ty[i].w, &ws));
    TU_CHECK(waitio_mpi_type_get_extent(ty[i].w, &wlb, &wext));
    MPI_Type_size(ty[i].m, &ms);
    MPI_Type_get_extent(ty[i].m, &mlb, &mext);
    if (ws != ms || wlb != (WAITIO_MPI_Aint)mlb || wext != (WAITIO_MPI_Aint)mext)
        TU_ERR("type %s: WaitIO size %d lb %td extent %td, MPI size %d lb %td extent %td",
               ty[i].name, ws, wlb, wext, ms, (ptrdiff_t)mlb, (ptrdiff_t)mext);
    ty[i].size = ms;
    ty[i].extent = mext;
}

static void make_types(void)
{
    int bl3[3] = {2, 1, 3}, dis3[3] = {5, 0, 9};
    TU_CHECK(waitio_mpi_type_vector(3, 2, 4, WAITIO_MPI_DOUBLE, &ty[TY_VEC].w));
    MPI_Type_vector(3, 2, 4, MPI_DOUBLE, &ty[TY_VEC].m);
    TU_CHECK(waitio_mpi_type_indexed(3, bl3, dis3, WAITIO_MPI_INT, &ty[TY_IDX].w));
    MPI_Type_indexed(3, bl3, dis3, MPI_INT, &ty[TY_IDX].m);
    TU_CHECK(waitio_mpi_type_vector(3, 2, 3, WAITIO_MPI_INT, &ty[TY_V6].w));
    MPI_Type_vector(3, 2, 3, MPI_INT, &ty[TY_V6].m);
    int blr[3] = {1, 2, 1}, wtr[3] = {WAITIO_MPI_INT, WAITIO_MPI_DOUBLE, WAITIO_MPI_CHAR};
    WAITIO_MPI_Aint wdr[3] = {offsetof(rec, a), offsetof(rec, b), offsetof(rec, c)};
    MPI_Aint mdr[3] = {offsetof(rec, a), offsetof(rec, b), offsetof(rec, c)};
    MPI_Datatype mtr[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
    TU_CHECK(waitio_mpi_type_create_struct(3, blr, wdr, wtr, &ty[TY_REC].w));
    MPI_Type_create_struct(3, blr, mdr, mtr, &ty[TY_REC].m);
    int wpair;
    MPI_Datatype mpair;
    TU_CHECK(waitio_mpi_type_contiguous(2, WAITIO_MPI_UNSIGNED, &wpair));
    MPI_Type_contiguous(2, MPI_UNSIGNED, &mpair);
    TU_CHECK(waitio_mpi_type_create_resized(wpair, 0, 12, &ty[TY_AFF].w));
    MPI_Type_create_resized(mpair, 0, 12, &ty[TY_AFF].m);
    TU_CHECK(waitio_mpi_type_free(&wpair)); /* the resized type outlives what it was made of */
    MPI_Type_free(&mpair);
    TU_CHECK(waitio_mpi_type_contiguous(5, WAITIO_MPI_INT, &ty[TY_CONT].w));
    MPI_Type_contiguous(5, MPI_INT, &ty[TY_CONT].m);
    const char *names[NTY] = {"vector(3,2,4,DOUBLE)", "indexed({2,1,3},{5,0,9},INT)",
                              "vector(3,2,3,INT)", "struct{int,double[2],char}",
                              "resized(contiguous(2,UNSIGNED),0,12)", "contiguous(5,INT)", "INT"};
    int kinds[NTY] = {K_DOUBLE, K_INT, K_INT, K_REC, K_UNS, K_INT, K_INT};
    for (int i = 0; i < NTY; i++) {
        ty[i].name = names[i];
        ty[i].kind = kinds[i];
        ty[i].base = kinds[i] == K_DOUBLE ? MPI_DOUBLE : kinds[i] == K_UNS ? MPI_UNSIGNED : MPI_INT;
        if (i == TY_INT) {
            ty[i].w = WAITIO_MPI_INT;
            ty[i].m = MPI_INT;
            ty[i].size = ty[i].extent = sizeof(int);
        } else {
            check_type(i);
        }
    }
    if (ty[TY_REC].extent != (MPI_Aint)sizeof(rec))
        TU_FAIL("the struct type's extent is %td, not sizeof(rec) %zu", (ptrdiff_t)ty[TY_REC].extent,
                sizeof(rec));
    TU_CHECK(waitio_mpi_op_create(w_rec, 1, &wop[OP_REC]));
    TU_CHECK(waitio_mpi_op_create(w_aff, 0, &wop[OP_AFF]));
    MPI_Op_create(m_rec, 1, &mop[OP_REC]);
    MPI_Op_create(m_aff, 0, &mop[OP_AFF]);
    wop[OP_SUM] = WAITIO_MPI_SUM;
    mop[OP_SUM] = MPI_SUM;
    wop[OP_MAX] = WAITIO_MPI_MAX;
    mop[OP_MAX] = MPI_MAX;
}

/* ---- buffers: contents from seeds, sane for each type's arithmetic ---- */

static size_t bufbytes(int t, int count) { return (size_t)(count + 1) * (size_t)ty[t].extent + 16; }

static uint64_t seed_of(uint64_t salt, int rank, int what) { return tu_mix64(salt * 1000003u + (uint64_t)rank * 17u + (uint64_t)what); }

static void fill(int t, void *buf, size_t bytes, uint64_t seed)
{
    tu_rng r = {seed};
    unsigned char *p = buf;
    memset(p, 0x5a, bytes);
    switch (ty[t].kind) {
    case K_DOUBLE:
        for (size_t i = 0; i + 8 <= bytes; i += 8) {
            double v = (double)tu_rng_below(&r, 16);
            memcpy(p + i, &v, 8);
        }
        break;
    case K_REC:
        for (size_t i = 0; i + sizeof(rec) <= bytes; i += sizeof(rec)) {
            rec v;
            memcpy(&v, p + i, sizeof v);
            v.a = (int)tu_rng_below(&r, 1000);
            v.b[0] = (double)tu_rng_below(&r, 64);
            v.b[1] = (double)tu_rng_below(&r, 64);
            v.c = (char)tu_rng_below(&r, 128);
            memcpy(p + i, &v, sizeof v);
        }
        break;
    default: /* ints small enough to add without overflow; unsigned anything */
        for (size_t i = 0; i + 4 <= bytes; i += 4) {
            unsigned v = ty[t].kind == K_UNS ? (unsigned)tu_rng_next(&r) : (unsigned)tu_rng_below(&r, 1000);
            memcpy(p + i, &v, 4);
        }
    }
}

static void *filled(int t, int count, uint64_t seed)
{
    size_t n = bufbytes(t, count);
    void *b = tu_xmalloc(n);
    fill(t, b, n, seed);
    return b;
}

/* What MPI does with count elements of type s at src received as count_r elements of type r at
 * dst: its own pack and unpack. */
static void place(int s, const void *src, int count, int r, void *dst, int count_r)
{
    int cap = count * ty[s].size + 16, pos = 0;
    void *tmp = tu_xmalloc((size_t)cap);
    MPI_Pack(src, count, ty[s].m, tmp, cap, &pos, MPI_COMM_SELF);
    int in = 0;
    MPI_Unpack(tmp, cap, &in, dst, count_r, ty[r].m, MPI_COMM_SELF);
    free(tmp);
}

static void compare(const void *got, const void *want, size_t n, const char *what)
{
    const unsigned char *g = got, *w = want;
    for (size_t i = 0; i < n; i++)
        if (g[i] != w[i]) {
            TU_ERR("%s: byte %zu of %zu is 0x%02x, expected 0x%02x", what, i, n, g[i], w[i]);
            return;
        }
}

/* The data of count elements of t at a and b (MPI's pack of each) must be equal. */
static void compare_data(int t, const void *a, const void *b, int count, const char *what)
{
    int cap = count * ty[t].size + 16, pa = 0, pb = 0;
    void *x = tu_xcalloc(1, (size_t)cap), *y = tu_xcalloc(1, (size_t)cap);
    MPI_Pack(a, count, ty[t].m, x, cap, &pa, MPI_COMM_SELF);
    MPI_Pack(b, count, ty[t].m, y, cap, &pb, MPI_COMM_SELF);
    compare(x, y, (size_t)pa, what);
    free(x);
    free(y);
}

/* ---- point-to-point ---- */

static void test_p2p(WAITIO_MPI_Comm u, uint64_t salt)
{
    tu_phase("point-to-point, derived types");
    int right = (urank + 1) % usize, left = (urank + usize - 1) % usize;
    tu_rng r = tu_rng_make(salt, 1, 2, 3);
    int c1 = 1 + (int)tu_rng_below(&r, 9), c2 = (int)tu_rng_below(&r, 7), c3 = 1 + (int)tu_rng_below(&r, 5);
    /* vector -> vector with Isend/Irecv/Waitall; indexed -> vector(3,2,3) (6 ints each) */
    void *s1 = filled(TY_VEC, c1, seed_of(salt, urank, 1)), *r1 = filled(TY_VEC, c1, seed_of(salt, urank, 2));
    void *s2 = filled(TY_IDX, c2, seed_of(salt, urank, 3)), *r2 = filled(TY_V6, c2, seed_of(salt, urank, 4));
    WAITIO_MPI_Request q[4];
    int st[4 * WAITIO_STATUS_SIZE];
    TU_CHECK(WAITIO_MPI_Irecv(r1, c1, ty[TY_VEC].w, left, 5, u, &q[0]));
    TU_CHECK(WAITIO_MPI_Irecv(r2, c2, ty[TY_V6].w, left, 6, u, &q[1]));
    TU_CHECK(WAITIO_MPI_Isend(s1, c1, ty[TY_VEC].w, right, 5, u, &q[2]));
    TU_CHECK(WAITIO_MPI_Isend(s2, c2, ty[TY_IDX].w, right, 6, u, &q[3]));
    TU_CHECK(WAITIO_MPI_Waitall(4, q, st));
    if (st[WAITIO_MPI_COUNT] != c1 * ty[TY_VEC].size || st[WAITIO_MPI_SOURCE] != left)
        TU_ERR("Irecv vector: status count %d source %d", st[WAITIO_MPI_COUNT], st[WAITIO_MPI_SOURCE]);
    void *w1 = filled(TY_VEC, c1, seed_of(salt, urank, 2)), *in1 = filled(TY_VEC, c1, seed_of(salt, left, 1));
    place(TY_VEC, in1, c1, TY_VEC, w1, c1);
    compare(r1, w1, bufbytes(TY_VEC, c1), "Isend/Irecv vector");
    void *w2 = filled(TY_V6, c2, seed_of(salt, urank, 4)), *in2 = filled(TY_IDX, c2, seed_of(salt, left, 3));
    place(TY_IDX, in2, c2, TY_V6, w2, c2);
    compare(r2, w2, bufbytes(TY_V6, c2), "Isend indexed / Irecv vector");
    /* blocking Send/Recv of the struct, ordered so that nobody waits on a cycle */
    void *s3 = filled(TY_REC, c3, seed_of(salt, urank, 5)), *r3 = filled(TY_REC, c3, seed_of(salt, urank, 6));
    if (urank % 2 == 0) {
        TU_CHECK(WAITIO_MPI_Send(s3, c3, ty[TY_REC].w, right, 7, u));
        TU_CHECK(WAITIO_MPI_Recv(r3, c3, ty[TY_REC].w, left, 7, u));
    } else {
        TU_CHECK(WAITIO_MPI_Recv(r3, c3, ty[TY_REC].w, left, 7, u));
        TU_CHECK(WAITIO_MPI_Send(s3, c3, ty[TY_REC].w, right, 7, u));
    }
    void *w3 = filled(TY_REC, c3, seed_of(salt, urank, 6)), *in3 = filled(TY_REC, c3, seed_of(salt, left, 5));
    place(TY_REC, in3, c3, TY_REC, w3, c3);
    compare(r3, w3, bufbytes(TY_REC, c3), "Send/Recv struct");
    /* a receive whose type is freed while it is pending, completed by Test */
    int dup;
    TU_CHECK(waitio_mpi_type_create_resized(ty[TY_AFF].w, 0, 12, &dup));
    TU_CHECK(waitio_mpi_type_commit(&dup));
    void *s4 = filled(TY_AFF, c3, seed_of(salt, urank, 7)), *r4 = filled(TY_AFF, c3, seed_of(salt, urank, 8));
    TU_CHECK(WAITIO_MPI_Irecv(r4, c3, dup, left, 8, u, &q[0]));
    TU_CHECK(waitio_mpi_type_free(&dup));
    TU_CHECK(WAITIO_MPI_Isend(s4, c3, ty[TY_AFF].w, right, 8, u, &q[1]));
    int flag = 0, spins = 0;
    while (!flag) {
        TU_CHECK(WAITIO_MPI_Test(&q[0], &flag, st));
        if (!flag && ++spins % 64 == 0)
            tu_sleep(0.0005);
    }
    TU_CHECK(WAITIO_MPI_Wait(&q[1], WAITIO_MPI_STATUS_IGNORE));
    void *w4 = filled(TY_AFF, c3, seed_of(salt, urank, 8)), *in4 = filled(TY_AFF, c3, seed_of(salt, left, 7));
    place(TY_AFF, in4, c3, TY_AFF, w4, c3);
    compare(r4, w4, bufbytes(TY_AFF, c3), "Irecv with a freed type, Test");
    void *all[] = {s1, r1, s2, r2, w1, in1, w2, in2, s3, r3, w3, in3, s4, r4, w4, in4};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        free(all[i]);
}

/* ---- reductions ---- */

enum { R_REDUCE, R_ALLREDUCE, R_SCAN, R_EXSCAN, R_RS, R_RSB };
static const char *rname[] = {"Reduce", "Allreduce", "Scan", "Exscan", "Reduce_scatter",
                              "Reduce_scatter_block"};

/* Ranks lo..hi's inputs folded in rank order with MPI_Reduce_local, into out (layout of t).
 * A rank's operand is its receive buffer's content (seed 2) when it reduced in place: every
 * rank (all_in_place), or the root only (in_place_root >= 0); else its send buffer (seed 1). */
static void fold(int t, int op, int count, int lo, int hi, uint64_t salt, int all_in_place,
                 int in_place_root, void *out)
{
    size_t n = bufbytes(t, count);
    void *tmp = tu_xmalloc(n);
    for (int r = lo; r <= hi; r++) {
        fill(t, r == lo ? out : tmp, n, seed_of(salt, r, all_in_place || r == in_place_root ? 2 : 1));
        if (r > lo && (op == OP_REC || op == OP_AFF)) {
            MPI_Reduce_local(out, tmp, count, ty[t].m, mop[op]);
            memcpy(out, tmp, n);
        } else if (r > lo) { /* MPICH's Reduce_local takes predefined ops on predefined types
                              * only: fold the packed data as its base type, unpack */
            int cap = count * ty[t].size, pa = 0, pb = 0, in = 0;
            void *x = tu_xmalloc((size_t)cap), *y = tu_xmalloc((size_t)cap);
            MPI_Pack(out, count, ty[t].m, x, cap, &pa, MPI_COMM_SELF);
            MPI_Pack(tmp, count, ty[t].m, y, cap, &pb, MPI_COMM_SELF);
            MPI_Reduce_local(x, y, cap / 4 / (ty[t].base == MPI_DOUBLE ? 2 : 1), ty[t].base, mop[op]);
            MPI_Unpack(y, cap, &in, out, count, ty[t].m, MPI_COMM_SELF);
            free(x);
            free(y);
        }
    }
    free(tmp);
}

static int run_w(int kind, const void *s, void *r, int count, const int *rc, int t, int op, int root,
                 WAITIO_MPI_Comm c)
{
    switch (kind) {
    case R_REDUCE: return WAITIO_MPI_Reduce(s, r, count, ty[t].w, wop[op], root, c);
    case R_ALLREDUCE: return WAITIO_MPI_Allreduce(s, r, count, ty[t].w, wop[op], c);
    case R_SCAN: return WAITIO_MPI_Scan(s, r, count, ty[t].w, wop[op], c);
    case R_EXSCAN: return WAITIO_MPI_Exscan(s, r, count, ty[t].w, wop[op], c);
    case R_RS: return WAITIO_MPI_Reduce_scatter(s, r, rc, ty[t].w, wop[op], c);
    default: return WAITIO_MPI_Reduce_scatter_block(s, r, rc[0], ty[t].w, wop[op], c);
    }
}

static void run_mpi(int kind, const void *s, void *r, int count, const int *rc, MPI_Datatype t,
                    MPI_Op op, int root)
{
    const void *ms = s == WAITIO_MPI_IN_PLACE ? MPI_IN_PLACE : s;
    switch (kind) {
    case R_REDUCE: MPI_Reduce(ms, r, count, t, op, root, MPI_COMM_WORLD); break;
    case R_ALLREDUCE: MPI_Allreduce(ms, r, count, t, op, MPI_COMM_WORLD); break;
    case R_SCAN: MPI_Scan(ms, r, count, t, op, MPI_COMM_WORLD); break;
    case R_EXSCAN: MPI_Exscan(ms, r, count, t, op, MPI_COMM_WORLD); break;
    case R_RS: MPI_Reduce_scatter(ms, r, rc, t, op, MPI_COMM_WORLD); break;
    default: MPI_Reduce_scatter_block(ms, r, rc[0], t, op, MPI_COMM_WORLD); break;
    }
}

/* The real MPI's routine on the same inputs. Open MPI 4.1 and MPICH 4.0 refuse predefined
 * operations on derived types (WaitIO takes them on types of one predefined type, as on their
 * packed elements): for those, MPI runs on the packed elements, and the result is unpacked. */
static void run_m(int kind, const void *s, void *r, int count, const int *rc, int t, int op,
                  int root, int n, int mine)
{
    if (op == OP_REC || op == OP_AFF || t == TY_INT) {
        run_mpi(kind, s, r, count, rc, ty[t].m, mop[op], root);
        return;
    }
    int nb = ty[t].size / (ty[t].base == MPI_DOUBLE ? 8 : 4), cap = count * ty[t].size, pos = 0;
    void *ps = tu_xmalloc((size_t)cap + 1), *pr = tu_xmalloc((size_t)cap + 1);
    int *rc2 = tu_xcalloc((size_t)n, sizeof *rc2);
    for (int i = 0; i < n; i++)
        rc2[i] = rc[i] * nb;
    if (s != WAITIO_MPI_IN_PLACE)
        MPI_Pack(s, count, ty[t].m, ps, cap, &pos, MPI_COMM_SELF);
    pos = 0;
    MPI_Pack(r, count, ty[t].m, pr, cap, &pos, MPI_COMM_SELF);
    run_mpi(kind, s == WAITIO_MPI_IN_PLACE ? s : ps, pr, count * nb, rc2, ty[t].base, mop[op], root);
    pos = 0;
    MPI_Unpack(pr, cap, &pos, r, mine, ty[t].m, MPI_COMM_SELF);
    free(ps);
    free(pr);
    free(rc2);
}

static void test_reduction(WAITIO_MPI_Comm c, int is_pb, int kind, int t, int op, int in_place,
                           uint64_t salt)
{
    int n, me;
    TU_CHECK(WAITIO_MPI_Comm_size(c, &n));
    TU_CHECK(WAITIO_MPI_Comm_rank(c, &me));
    tu_rng r = tu_rng_make(salt, 11, 12, 13);
    int count = 1 + (int)tu_rng_below(&r, 6), root = (int)tu_rng_below(&r, (uint64_t)n);
    int *rc = tu_xcalloc((size_t)n, sizeof *rc), total = 0, mine = count, off = 0;
    if (kind == R_RS || kind == R_RSB) {
        int blk = 1 + (int)tu_rng_below(&r, 3);
        for (int i = 0; i < n; i++) {
            rc[i] = kind == R_RSB ? blk : (int)tu_rng_below(&r, 4);
            if (i < me)
                off += rc[i];
            total += rc[i];
        }
        count = total;
        mine = rc[me];
    }
    char what[160];
    snprintf(what, sizeof what, "%s %s %s count %d root %d%s (%s)", is_pb ? "PB" : "universe",
             rname[kind], opname[op], count, root, in_place ? " in place" : "", ty[t].name);
    tu_phase("%s", what);
    /* in place: the operand lives in the receive buffer (seed 2), else in its own (seed 1) */
    int ip = in_place && (kind != R_REDUCE || me == root);
    void *s = filled(t, count, seed_of(salt, me, 1)), *rb = filled(t, count, seed_of(salt, me, 2));
    void *init = filled(t, count, seed_of(salt, me, 2)), *want = filled(t, count, seed_of(salt, me, 2));
    if (ip)
        fill(t, rb, bufbytes(t, count), seed_of(salt, me, 2));
    int rcode = run_w(kind, ip ? WAITIO_MPI_IN_PLACE : s, rb, count, rc, t, op, root, c);
    if (rcode)
        TU_FAIL("%s: %s (%s)", what, waitio_strerror(rcode), waitio_error_message());
    /* the expected result: MPI's fold of the inputs, placed into the initial receive buffer */
    void *acc = tu_xmalloc(bufbytes(t, count));
    int check = 1, all_ip = in_place && kind != R_REDUCE;
    switch (kind) {
    case R_REDUCE:
        check = me == root;
        fold(t, op, count, 0, n - 1, salt, 0, in_place ? root : -1, acc);
        break;
    case R_EXSCAN:
        check = me > 0;
        if (check)
            fold(t, op, count, 0, me - 1, salt, all_ip, -1, acc);
        break;
    case R_SCAN: fold(t, op, count, 0, me, salt, all_ip, -1, acc); break;
    default: fold(t, op, count, 0, n - 1, salt, all_ip, -1, acc); break;
    }
    if (check) {
        const char *src = (const char *)acc + (ptrdiff_t)off * ty[t].extent;
        place(t, src, mine, t, want, mine);
        compare(rb, want, bufbytes(t, count), what);
    } else if (kind == R_REDUCE) {
        compare(rb, init, bufbytes(t, count), what); /* a non-root's receive buffer untouched */
    }
    if (is_pb) { /* the real MPI's routine on the same inputs */
        void *mb = filled(t, count, seed_of(salt, me, 2));
        run_m(kind, ip ? WAITIO_MPI_IN_PLACE : s, mb, count, rc, t, op, root, n, mine);
        if (check) {
            char w2[200];
            snprintf(w2, sizeof w2, "%s vs MPI", what);
            compare_data(t, rb, mb, mine, w2);
        }
        free(mb);
    }
    free(s);
    free(rb);
    free(init);
    free(want);
    free(acc);
    free(rc);
}

/* ---- data movement ---- */

/* Rank r's blocks: counts[i] elements at displs[i], with random gaps between blocks (seeded by
 * salt, side and r, so every rank can work out every other's); returns the elements spanned. */
static int layout(uint64_t salt, int side, int r, int n, const int *counts, int *displs)
{
    tu_rng g = tu_rng_make(salt, 21, (uint64_t)side, (uint64_t)r);
    int d = 0;
    for (int i = 0; i < n; i++) {
        d += (int)tu_rng_below(&g, 3);
        displs[i] = d;
        d += counts[i];
    }
    return d;
}

static void *at(void *buf, int t, int displ) { return (char *)buf + (ptrdiff_t)displ * ty[t].extent; }

static void test_bcast(WAITIO_MPI_Comm c, int is_pb, int t, uint64_t salt)
{
    int n, me;
    TU_CHECK(WAITIO_MPI_Comm_size(c, &n));
    TU_CHECK(WAITIO_MPI_Comm_rank(c, &me));
    tu_rng r = tu_rng_make(salt, 31, (uint64_t)t, 0);
    int count = 1 + (int)tu_rng_below(&r, 8), root = (int)tu_rng_below(&r, (uint64_t)n);
    tu_phase("%s Bcast %s count %d root %d", is_pb ? "PB" : "universe", ty[t].name, count, root);
    void *b = filled(t, count, seed_of(salt, me, 1)), *want = filled(t, count, seed_of(salt, me, 1));
    TU_CHECK(WAITIO_MPI_Bcast(b, count, ty[t].w, root, c));
    void *in = filled(t, count, seed_of(salt, root, 1));
    place(t, in, count, t, want, count);
    compare(b, want, bufbytes(t, count), "Bcast");
    if (is_pb) {
        void *mb = filled(t, count, seed_of(salt, me, 1));
        MPI_Bcast(mb, count, ty[t].m, root, MPI_COMM_WORLD);
        compare_data(t, b, mb, count, "Bcast vs MPI");
        free(mb);
    }
    free(b);
    free(want);
    free(in);
}

/* Gather (v = 0: count each) or Gatherv (v = 1: random counts, gaps), send type st, receive
 * type rt; in place at the root when asked. */
static void test_gatherv(WAITIO_MPI_Comm c, int is_pb, int st, int rt, int v, int in_place, uint64_t salt)
{
    int n, me;
    TU_CHECK(WAITIO_MPI_Comm_size(c, &n));
    TU_CHECK(WAITIO_MPI_Comm_rank(c, &me));
    tu_rng r = tu_rng_make(salt, 41, (uint64_t)v, (uint64_t)in_place);
    int k = 1 + (int)tu_rng_below(&r, 4), root = (int)tu_rng_below(&r, (uint64_t)n);
    int *cnt = tu_xcalloc((size_t)n, sizeof *cnt), *dis = tu_xcalloc((size_t)n, sizeof *dis);
    for (int i = 0; i < n; i++)
        cnt[i] = v ? (int)tu_rng_below(&r, 4) : k;
    int total = n * k;
    if (v)
        total = layout(salt, 1, root, n, cnt, dis);
    else
        for (int i = 0; i < n; i++)
            dis[i] = i * k;
    char what[160];
    snprintf(what, sizeof what, "%s %s root %d%s (%s -> %s)", is_pb ? "PB" : "universe",
             v ? "Gatherv" : "Gather", root, in_place ? " in place" : "", ty[st].name, ty[rt].name);
    tu_phase("%s", what);
    int ip = in_place && me == root;
    void *s = filled(st, cnt[me], seed_of(salt, me, 1)), *rb = filled(rt, total, seed_of(salt, me, 2));
    const void *sarg = ip ? WAITIO_MPI_IN_PLACE : s;
    if (v)
        TU_CHECK(WAITIO_MPI_Gatherv(sarg, cnt[me], ty[st].w, rb, cnt, dis, ty[rt].w, root, c));
    else
        TU_CHECK(WAITIO_MPI_Gather(sarg, k, ty[st].w, rb, k, ty[rt].w, root, c));
    void *want = filled(rt, total, seed_of(salt, me, 2));
    for (int i = 0; i < n && me == root; i++) {
        if (ip && i == me)
            continue; /* the root's block is where it was */
        void *in = filled(st, cnt[i], seed_of(salt, i, 1));
        place(st, in, cnt[i], rt, at(want, rt, dis[i]), cnt[i]);
        free(in);
    }
    compare(rb, want, bufbytes(rt, total), what);
    if (is_pb) {
        void *mb = filled(rt, total, seed_of(salt, me, 2));
        const void *ms = ip ? MPI_IN_PLACE : s;
        if (v)
            MPI_Gatherv(ms, cnt[me], ty[st].m, mb, cnt, dis, ty[rt].m, root, MPI_COMM_WORLD);
        else
            MPI_Gather(ms, k, ty[st].m, mb, k, ty[rt].m, root, MPI_COMM_WORLD);
        for (int i = 0; i < n && me == root; i++)
            compare_data(rt, at(rb, rt, dis[i]), at(mb, rt, dis[i]), cnt[i], "Gather(v) vs MPI");
        free(mb);
    }
    free(s);
    free(rb);
    free(want);
    free(cnt);
    free(dis);
}

static void test_scatterv(WAITIO_MPI_Comm c, int is_pb, int st, int rt, int v, int in_place, uint64_t salt)
{
    int n, me;
    TU_CHECK(WAITIO_MPI_Comm_size(c, &n));
    TU_CHECK(WAITIO_MPI_Comm_rank(c, &me));
    tu_rng r = tu_rng_make(salt, 51, (uint64_t)v, (uint64_t)in_place);
    int k = 1 + (int)tu_rng_below(&r, 4), root = (int)tu_rng_below(&r, (uint64_t)n);
    int *cnt = tu_xcalloc((size_t)n, sizeof *cnt), *dis = tu_xcalloc((size_t)n, sizeof *dis);
    for (int i = 0; i < n; i++)
        cnt[i] = v ? (int)tu_rng_below(&r, 4) : k;
    int total = n * k;
    if (v)
        total = layout(salt, 2, root, n, cnt, dis);
    else
        for (int i = 0; i < n; i++)
            dis[i] = i * k;
    char what[160];
    snprintf(what, sizeof what, "%s %s root %d%s (%s -> %s)", is_pb ? "PB" : "universe",
             v ? "Scatterv" : "Scatter", root, in_place ? " in place" : "", ty[st].name, ty[rt].name);
    tu_phase("%s", what);
    int ip = in_place && me == root;
    void *s = filled(st, total, seed_of(salt, me, 1)), *rb = filled(rt, cnt[me], seed_of(salt, me, 2));
    void *rarg = ip ? WAITIO_MPI_IN_PLACE : rb;
    if (v)
        TU_CHECK(WAITIO_MPI_Scatterv(s, cnt, dis, ty[st].w, rarg, cnt[me], ty[rt].w, root, c));
    else
        TU_CHECK(WAITIO_MPI_Scatter(s, k, ty[st].w, rarg, k, ty[rt].w, root, c));
    void *want = filled(rt, cnt[me], seed_of(salt, me, 2)), *in = filled(st, total, seed_of(salt, root, 1));
    if (!ip)
        place(st, at(in, st, dis[me]), cnt[me], rt, want, cnt[me]);
    compare(rb, want, bufbytes(rt, cnt[me]), what);
    compare(s, ip ? in : s, bufbytes(st, total), "Scatter(v): the root's send buffer");
    if (is_pb && !ip) {
        void *mb = filled(rt, cnt[me], seed_of(salt, me, 2));
        if (v)
            MPI_Scatterv(s, cnt, dis, ty[st].m, mb, cnt[me], ty[rt].m, root, MPI_COMM_WORLD);
        else
            MPI_Scatter(s, k, ty[st].m, mb, k, ty[rt].m, root, MPI_COMM_WORLD);
        compare_data(rt, rb, mb, cnt[me], "Scatter(v) vs MPI");
        free(mb);
    } else if (is_pb) {
        if (v)
            MPI_Scatterv(s, cnt, dis, ty[st].m, MPI_IN_PLACE, cnt[me], ty[rt].m, root, MPI_COMM_WORLD);
        else
            MPI_Scatter(s, k, ty[st].m, MPI_IN_PLACE, k, ty[rt].m, root, MPI_COMM_WORLD);
    }
    free(s);
    free(rb);
    free(want);
    free(in);
    free(cnt);
    free(dis);
}

/* Allgather (v = 0) or Allgatherv (v = 1: random counts, each rank its own gaps). In place:
 * every rank's block is in its receive buffer (type rt). */
static void test_allgatherv(WAITIO_MPI_Comm c, int is_pb, int st, int rt, int v, int in_place, uint64_t salt)
{
    int n, me;
    TU_CHECK(WAITIO_MPI_Comm_size(c, &n));
    TU_CHECK(WAITIO_MPI_Comm_rank(c, &me));
    tu_rng r = tu_rng_make(salt, 61, (uint64_t)v, (uint64_t)in_place * 7 + (uint64_t)st);
    int k = 1 + (int)tu_rng_below(&r, 4);
    int *cnt = tu_xcalloc((size_t)n, sizeof *cnt), *dis = tu_xcalloc((size_t)n, sizeof *dis);
    int *odis = tu_xcalloc((size_t)n, sizeof *odis);
    for (int i = 0; i < n; i++)
        cnt[i] = v ? (int)tu_rng_below(&r, 4) : k;
    int total = v ? layout(salt, 3, me, n, cnt, dis) : n * k;
    for (int i = 0; i < n && !v; i++)
        dis[i] = i * k;
    char what[160];
    snprintf(what, sizeof what, "%s %s%s (%s -> %s)", is_pb ? "PB" : "universe",
             v ? "Allgatherv" : "Allgather", in_place ? " in place" : "", ty[st].name, ty[rt].name);
    tu_phase("%s", what);
    void *s = filled(st, cnt[me], seed_of(salt, me, 1)), *rb = filled(rt, total, seed_of(salt, me, 2));
    const void *sarg = in_place ? WAITIO_MPI_IN_PLACE : s;
    if (v)
        TU_CHECK(WAITIO_MPI_Allgatherv(sarg, cnt[me], ty[st].w, rb, cnt, dis, ty[rt].w, c));
    else
        TU_CHECK(WAITIO_MPI_Allgather(sarg, k, ty[st].w, rb, k, ty[rt].w, c));
    void *want = filled(rt, total, seed_of(salt, me, 2));
    for (int i = 0; i < n; i++) {
        if (in_place && i == me)
            continue;
        if (in_place) { /* rank i's block, from its receive buffer at its own displacement */
            int ot = v ? layout(salt, 3, i, n, cnt, odis) : n * k;
            for (int j = 0; j < n && !v; j++)
                odis[j] = j * k;
            void *in = filled(rt, ot, seed_of(salt, i, 2));
            place(rt, at(in, rt, odis[i]), cnt[i], rt, at(want, rt, dis[i]), cnt[i]);
            free(in);
        } else {
            void *in = filled(st, cnt[i], seed_of(salt, i, 1));
            place(st, in, cnt[i], rt, at(want, rt, dis[i]), cnt[i]);
            free(in);
        }
    }
    compare(rb, want, bufbytes(rt, total), what);
    if (is_pb) {
        void *mb = filled(rt, total, seed_of(salt, me, 2));
        const void *ms = in_place ? MPI_IN_PLACE : s;
        if (v)
            MPI_Allgatherv(ms, cnt[me], ty[st].m, mb, cnt, dis, ty[rt].m, MPI_COMM_WORLD);
        else
            MPI_Allgather(ms, k, ty[st].m, mb, k, ty[rt].m, MPI_COMM_WORLD);
        for (int i = 0; i < n; i++)
            compare_data(rt, at(rb, rt, dis[i]), at(mb, rt, dis[i]), cnt[i], "Allgather(v) vs MPI");
        free(mb);
    }
    free(s);
    free(rb);
    free(want);
    free(cnt);
    free(dis);
    free(odis);
}

/* Elements rank i sends rank j in an Alltoall(v) case (symmetric when in place, as MPI needs). */
static int a2a_count(uint64_t salt, int v, int k, int in_place, int i, int j)
{
    if (!v)
        return k;
    int a = in_place && j < i ? j : i, b = in_place && j < i ? i : j;
    return (int)(tu_mix64(salt * 31u + (uint64_t)a * 1009u + (uint64_t)b) % 4);
}

/* Rank r's send (side 4) or receive (side 5) layout of an Alltoall(v) case. */
static int a2a_layout(uint64_t salt, int v, int k, int in_place, int side, int r, int n, int *cnt, int *dis)
{
    for (int j = 0; j < n; j++)
        cnt[j] = side == 4 ? a2a_count(salt, v, k, in_place, r, j) : a2a_count(salt, v, k, in_place, j, r);
    if (!v) {
        for (int j = 0; j < n; j++)
            dis[j] = j * k;
        return n * k;
    }
    return layout(salt, in_place ? 5 : side, r, n, cnt, dis);
}

static void test_alltoallv(WAITIO_MPI_Comm c, int is_pb, int st, int rt, int v, int in_place, uint64_t salt)
{
    int n, me;
    TU_CHECK(WAITIO_MPI_Comm_size(c, &n));
    TU_CHECK(WAITIO_MPI_Comm_rank(c, &me));
    tu_rng r = tu_rng_make(salt, 71, (uint64_t)v, (uint64_t)in_place);
    int k = 1 + (int)tu_rng_below(&r, 3);
    if (in_place)
        st = rt;
    int *sc = tu_xcalloc((size_t)n, sizeof *sc), *sd = tu_xcalloc((size_t)n, sizeof *sd);
    int *rc = tu_xcalloc((size_t)n, sizeof *rc), *rd = tu_xcalloc((size_t)n, sizeof *rd);
    int *oc = tu_xcalloc((size_t)n, sizeof *oc), *od = tu_xcalloc((size_t)n, sizeof *od);
    int stot = a2a_layout(salt, v, k, in_place, 4, me, n, sc, sd);
    int rtot = a2a_layout(salt, v, k, in_place, 5, me, n, rc, rd);
    char what[160];
    snprintf(what, sizeof what, "%s %s%s (%s -> %s)", is_pb ? "PB" : "universe",
             v ? "Alltoallv" : "Alltoall", in_place ? " in place" : "", ty[st].name, ty[rt].name);
    tu_phase("%s", what);
    void *s = filled(st, stot, seed_of(salt, me, 1)), *rb = filled(rt, rtot, seed_of(salt, me, 2));
    const void *sarg = in_place ? WAITIO_MPI_IN_PLACE : s;
    if (v)
        TU_CHECK(WAITIO_MPI_Alltoallv(sarg, sc, sd, ty[st].w, rb, rc, rd, ty[rt].w, c));
    else
        TU_CHECK(WAITIO_MPI_Alltoall(sarg, k, ty[st].w, rb, k, ty[rt].w, c));
    void *want = filled(rt, rtot, seed_of(salt, me, 2));
    for (int i = 0; i < n; i++) { /* what rank i sent me, from where its layout put it */
        int side = in_place ? 5 : 4, t = in_place ? rt : st;
        int ot = a2a_layout(salt, v, k, in_place, side, i, n, oc, od);
        void *in = filled(t, ot, seed_of(salt, i, in_place ? 2 : 1));
        place(t, at(in, t, od[me]), rc[i], rt, at(want, rt, rd[i]), rc[i]);
        free(in);
    }
    compare(rb, want, bufbytes(rt, rtot), what);
    if (is_pb) {
        void *mb = filled(rt, rtot, seed_of(salt, me, 2));
        const void *ms = in_place ? MPI_IN_PLACE : s;
        if (v)
            MPI_Alltoallv(ms, sc, sd, ty[st].m, mb, rc, rd, ty[rt].m, MPI_COMM_WORLD);
        else
            MPI_Alltoall(ms, k, ty[st].m, mb, k, ty[rt].m, MPI_COMM_WORLD);
        for (int i = 0; i < n; i++)
            compare_data(rt, at(rb, rt, rd[i]), at(mb, rt, rd[i]), rc[i], "Alltoall(v) vs MPI");
        free(mb);
    }
    void *all[] = {s, rb, want, sc, sd, rc, rd, oc, od};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        free(all[i]);
}

/* ---- errors: refused where they are made, before any communication ---- */

static void test_errors(WAITIO_MPI_Comm u)
{
    tu_phase("errors");
    rec x[2] = {{0}}, y[2];
    TU_CHECK_RC(WAITIO_MPI_Allreduce(x, y, 2, ty[TY_REC].w, WAITIO_MPI_SUM, u), WAITIO_ERR_ARG);
    int v, old;
    TU_CHECK(waitio_mpi_type_vector(2, 1, 2, WAITIO_MPI_INT, &v));
    TU_CHECK_RC(WAITIO_MPI_Bcast(x, 1, v, 0, u), WAITIO_ERR_ARG); /* not committed */
    TU_CHECK(waitio_mpi_type_commit(&v));
    old = v;
    TU_CHECK(waitio_mpi_type_free(&v));
    if (v != WAITIO_MPI_DATATYPE_NULL)
        TU_ERR("Type_free left the handle %d", v);
    WAITIO_MPI_Request q;
    TU_CHECK_RC(WAITIO_MPI_Isend(x, 1, old, (urank + 1) % usize, 9, u, &q), WAITIO_ERR_ARG);
    TU_CHECK_RC(waitio_mpi_type_free(&old), WAITIO_ERR_ARG);
    int pre = WAITIO_MPI_INT, sum = WAITIO_MPI_SUM, op;
    TU_CHECK_RC(waitio_mpi_type_free(&pre), WAITIO_ERR_ARG);
    TU_CHECK_RC(waitio_mpi_op_free(&sum), WAITIO_ERR_ARG);
    TU_CHECK(waitio_mpi_op_create(w_rec, 1, &op));
    int stale = op;
    TU_CHECK(waitio_mpi_op_free(&op));
    TU_CHECK_RC(WAITIO_MPI_Reduce(x, y, 2, ty[TY_REC].w, stale, 0, u), WAITIO_ERR_ARG);
    TU_CHECK_RC(WAITIO_MPI_Scan(x, y, -1, ty[TY_REC].w, wop[OP_REC], u), WAITIO_ERR_ARG);
}

int main(int argc, char **argv)
{
    tu_set_name(argv[0]);
    tu_alarm(150);
    int cases = argc > 1 ? atoi(argv[1]) : 3;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    WAITIO_MPI_Comm u, p;
    TU_CHECK(waitio_create_universe(&u));
    TU_CHECK(waitio_pb_rank(&pbid));
    tu_set_who(pbid, wrank);
    TU_CHECK(waitio_create_pbgroup(&p, pbid));
    TU_CHECK(WAITIO_MPI_Comm_rank(u, &urank));
    TU_CHECK(WAITIO_MPI_Comm_size(u, &usize));
    make_types();
    static const struct { int t, op; } red[] = {
        {TY_VEC, OP_SUM}, {TY_IDX, OP_MAX}, {TY_REC, OP_REC}, {TY_AFF, OP_AFF}, {TY_CONT, OP_SUM},
        {TY_INT, OP_MAX}};
    long done = 0;
    for (int k = 0; k < cases; k++) {
        uint64_t salt = 1000 + (uint64_t)k;
        test_p2p(u, salt);
        for (int pb = 0; pb < 2; pb++) {
            WAITIO_MPI_Comm c = pb ? p : u;
            test_bcast(c, pb, k % 2 ? TY_REC : TY_VEC, salt);
            for (int ip = 0; ip < 2; ip++) {
                test_gatherv(c, pb, TY_REC, TY_REC, 0, ip, salt);
                test_gatherv(c, pb, TY_IDX, TY_V6, 1, ip, salt);
                test_scatterv(c, pb, TY_REC, TY_REC, 0, ip, salt);
                test_scatterv(c, pb, TY_V6, TY_IDX, 1, ip, salt);
                test_allgatherv(c, pb, TY_VEC, TY_VEC, 0, ip, salt);
                test_allgatherv(c, pb, TY_IDX, TY_V6, 1, ip, salt);
                test_allgatherv(c, pb, TY_INT, TY_INT, 1, ip, salt);
                test_alltoallv(c, pb, TY_REC, TY_REC, 0, ip, salt);
                test_alltoallv(c, pb, TY_V6, TY_IDX, 1, ip, salt);
                test_alltoallv(c, pb, TY_INT, TY_INT, 1, ip, salt);
                for (size_t j = 0; j < sizeof red / sizeof red[0]; j++)
                    for (int kind = R_REDUCE; kind <= R_RSB; kind++)
                        test_reduction(c, pb, kind, red[j].t, red[j].op, ip, salt + j);
                done += 10 + 6 * (long)(sizeof red / sizeof red[0]);
            }
        }
    }
    test_errors(u);
    tu_phase("finish");
    for (int i = 0; i < NTY; i++)
        if (i != TY_INT) {
            TU_CHECK(waitio_mpi_type_free(&ty[i].w));
            MPI_Type_free(&ty[i].m);
        }
    for (int i = OP_REC; i <= OP_AFF; i++) {
        TU_CHECK(waitio_mpi_op_free(&wop[i]));
        MPI_Op_free(&mop[i]);
    }
    long errs = tu_errors, all = 0;
    MPI_Allreduce(&errs, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    TU_CHECK(waitio_finalize());
    if (wrank == 0)
        printf("mpi_types PB %d: %s (%d universe processes, %ld collective cases per process, "
               "%ld failures in this PB)\n", pbid, all ? "FAILED" : "ok", usize, done, all);
    MPI_Finalize();
    return errs ? 1 : 0;
}
