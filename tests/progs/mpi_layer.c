/*
 * mpi_layer.c — test of the WaitIO-MPI conversion layer and the collectives. Run as several PBs
 * (different MPI implementations). Checks:
 *  - inside this PB, every collective of the conversion layer on a group of this PB's processes
 *    gives exactly what the PB's real MPI gives on MPI_COMM_WORLD for the same inputs;
 *  - across all PBs (the universe), results equal values computed independently here;
 *  - hierarchical (through the MPI adapter) and flat collectives give identical results;
 *  - every rank holds the same bits after a universe allreduce of order-sensitive sums;
 *  - point-to-point isend/irecv/send/recv/waitall with statuses across PBs;
 *  - with "paths SEED": only the universe's collectives, each path forced in turn (flat,
 *    hierarchical, paired, segmented, pipelined, then chosen) at sizes drawn from SEED (the same
 *    in every PB), every datatype and op, every element against values computed here.
 * Inputs are small integers (also in float types), so every reduction order gives the same bits.
 * Usage: mpi_layer [max_count]   (default 1048576)
 *        mpi_layer paths SEED
 */
#include <complex.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "waitio_mpi.h"

static int wrank, wsize, urank, usize, pbid, npb, failures;

#define FAIL(...) do { fprintf(stderr, "mpi_layer[PB %d rank %d]: ", pbid, wrank); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); failures++; } while (0)
#define CHECK_RC(call) do { int rc_ = (call); if (rc_) { fprintf(stderr, \
    "mpi_layer[PB %d rank %d]: %s: %s (%s)\n", pbid, wrank, #call, waitio_strerror(rc_), \
    waitio_error_message()); exit(1); } } while (0)

enum kind { K_INT, K_FLOAT, K_COMPLEX, K_LOGICAL, K_BYTE, K_NONE };

typedef struct dtype_case {
    int w;              /* WAITIO_MPI_* */
    MPI_Datatype m;
    size_t size;
    int kind;
    const char *name;
} dtype_case;

#define D(w, m, T, k) {WAITIO_MPI_##w, m, sizeof(T), k, #w}
/* Every datatype of the conversion layer, with the MPI datatype of the same C layout. */
static dtype_case dtypes[] = {
    D(INT, MPI_INT, int, K_INT), D(LONG, MPI_LONG, long, K_INT),
    D(UNSIGNED, MPI_UNSIGNED, unsigned, K_INT), D(SHORT, MPI_SHORT, short, K_INT),
    D(UNSIGNED_SHORT, MPI_UNSIGNED_SHORT, unsigned short, K_INT),
    D(CHAR, MPI_SIGNED_CHAR, signed char, K_INT), D(SIGNED_CHAR, MPI_SIGNED_CHAR, signed char, K_INT),
    D(UNSIGNED_CHAR, MPI_UNSIGNED_CHAR, unsigned char, K_INT),
    D(UNSIGNED_LONG, MPI_UNSIGNED_LONG, unsigned long, K_INT),
    D(LONG_LONG, MPI_LONG_LONG, long long, K_INT),
    D(UNSIGNED_LONG_LONG, MPI_UNSIGNED_LONG_LONG, unsigned long long, K_INT),
    D(INT8_T, MPI_INT8_T, int8_t, K_INT), D(INT16_T, MPI_INT16_T, int16_t, K_INT),
    D(INT32_T, MPI_INT32_T, int32_t, K_INT), D(INT64_T, MPI_INT64_T, int64_t, K_INT),
    D(UINT8_T, MPI_UINT8_T, uint8_t, K_INT), D(UINT16_T, MPI_UINT16_T, uint16_t, K_INT),
    D(UINT32_T, MPI_UINT32_T, uint32_t, K_INT), D(UINT64_T, MPI_UINT64_T, uint64_t, K_INT),
    D(FLOAT, MPI_FLOAT, float, K_FLOAT), D(DOUBLE, MPI_DOUBLE, double, K_FLOAT),
    D(LONG_DOUBLE, MPI_LONG_DOUBLE, long double, K_FLOAT),
    D(C_BOOL, MPI_C_BOOL, bool, K_LOGICAL), D(BYTE, MPI_BYTE, unsigned char, K_BYTE),
    D(INTEGER, MPI_INT32_T, int32_t, K_INT), D(INTEGER4, MPI_INT32_T, int32_t, K_INT),
    D(INTEGER8, MPI_INT64_T, int64_t, K_INT), D(REAL, MPI_FLOAT, float, K_FLOAT),
    D(REAL4, MPI_FLOAT, float, K_FLOAT), D(REAL8, MPI_DOUBLE, double, K_FLOAT),
    D(DOUBLE_PRECISION, MPI_DOUBLE, double, K_FLOAT),
    D(LOGICAL, MPI_INT32_T, int32_t, K_LOGICAL), D(CHARACTER, MPI_CHAR, char, K_NONE),
    D(COMPLEX, MPI_C_FLOAT_COMPLEX, float _Complex, K_COMPLEX),
    D(DOUBLE_COMPLEX, MPI_C_DOUBLE_COMPLEX, double _Complex, K_COMPLEX),
};
#undef D
#define DT_DOUBLE 20 /* index of DOUBLE above */

static const struct { int w; MPI_Op m; const char *name; int logical, bitwise; } ops[] = {
    {WAITIO_MPI_SUM, MPI_SUM, "SUM", 0, 0}, {WAITIO_MPI_PROD, MPI_PROD, "PROD", 0, 0},
    {WAITIO_MPI_MAX, MPI_MAX, "MAX", 0, 0}, {WAITIO_MPI_MIN, MPI_MIN, "MIN", 0, 0},
    {WAITIO_MPI_LAND, MPI_LAND, "LAND", 1, 0}, {WAITIO_MPI_LOR, MPI_LOR, "LOR", 1, 0},
    {WAITIO_MPI_LXOR, MPI_LXOR, "LXOR", 1, 0}, {WAITIO_MPI_BAND, MPI_BAND, "BAND", 0, 1},
    {WAITIO_MPI_BOR, MPI_BOR, "BOR", 0, 1}, {WAITIO_MPI_BXOR, MPI_BXOR, "BXOR", 0, 1},
};

/* Input element i of rank r: small values so that sums and products stay exact. */
static long input_value(int r, size_t i, int op)
{
    if (op == WAITIO_MPI_PROD)
        return (long)((r + i) % 3 == 0 ? 2 : 1);
    if (op == WAITIO_MPI_LAND || op == WAITIO_MPI_LOR || op == WAITIO_MPI_LXOR)
        return (long)((r * 5 + i) % 4 != 0);
    return (long)((r * 7 + i * 3) % 29);
}

/* Stores v as element i of a buffer of d (the representation of v in that type). */
static void store(const dtype_case *d, void *buf, size_t i, long v)
{
    switch (d->kind) {
    case K_FLOAT:
        if (d->size == 4) ((float *)buf)[i] = (float)v;
        else if (d->size == 8) ((double *)buf)[i] = (double)v;
        else { memset((long double *)buf + i, 0, sizeof(long double)); ((long double *)buf)[i] = (long double)v; }
        return;
    case K_COMPLEX:
        if (d->size == 8) ((float _Complex *)buf)[i] = (float)v + 0.0f * I;
        else ((double _Complex *)buf)[i] = (double)v + 0.0 * I;
        return;
    case K_LOGICAL:
        if (d->size == 1) ((bool *)buf)[i] = v != 0;
        else ((int32_t *)buf)[i] = v != 0;
        return;
    default:
        switch (d->size) {
        case 1: ((uint8_t *)buf)[i] = (uint8_t)v; return;
        case 2: ((uint16_t *)buf)[i] = (uint16_t)v; return;
        case 4: ((uint32_t *)buf)[i] = (uint32_t)v; return;
        default: ((uint64_t *)buf)[i] = (uint64_t)v; return;
        }
    }
}

static int op_applies(const dtype_case *d, int k)
{
    switch (d->kind) {
    case K_INT: return 1;
    case K_FLOAT: return !ops[k].logical && !ops[k].bitwise;
    case K_COMPLEX: return ops[k].w == WAITIO_MPI_SUM || ops[k].w == WAITIO_MPI_PROD;
    case K_LOGICAL: return ops[k].logical;
    case K_BYTE: return ops[k].bitwise;
    default: return 0;
    }
}

/* long double has padding bytes that MPI and WaitIO may leave different: compare values. */
static int same_values(const dtype_case *d, const void *a, const void *b, size_t n)
{
    if (d->w != WAITIO_MPI_LONG_DOUBLE)
        return memcmp(a, b, n * d->size) == 0;
    for (size_t i = 0; i < n; i++)
        if (((const long double *)a)[i] != ((const long double *)b)[i])
            return 0;
    return 1;
}

/* The reduction of input_value over ranks 0..n-1 for element i, computed independently. */
static long expected_reduce(int n, size_t i, int op)
{
    long acc = input_value(0, i, op);
    for (int r = 1; r < n; r++) {
        long v = input_value(r, i, op);
        switch (op) {
        case WAITIO_MPI_SUM: acc += v; break;
        case WAITIO_MPI_PROD: acc *= v; break;
        case WAITIO_MPI_MAX: acc = v > acc ? v : acc; break;
        case WAITIO_MPI_MIN: acc = v < acc ? v : acc; break;
        case WAITIO_MPI_LAND: acc = acc && v; break;
        case WAITIO_MPI_LOR: acc = acc || v; break;
        case WAITIO_MPI_LXOR: acc = (acc != 0) != (v != 0); break;
        case WAITIO_MPI_BAND: acc &= v; break;
        case WAITIO_MPI_BOR: acc |= v; break;
        case WAITIO_MPI_BXOR: acc ^= v; break;
        }
    }
    return acc;
}

static int everyone(int pb, int rank) { (void)pb; (void)rank; return 1; }

/* A group of this PB's processes only (created by this PB's members alone). */
static WAITIO_MPI_Comm pb_group(void)
{
    waitio_filter_func_t *f = calloc((size_t)npb, sizeof *f);
    int *order = calloc((size_t)npb, sizeof *order);
    f[pbid] = everyone;
    order[pbid] = 1;
    WAITIO_MPI_Comm g = waitio_create_group(100 + pbid, f, order);
    free(f);
    free(order);
    if (!g) {
        fprintf(stderr, "pb group: %s\n", waitio_error_message());
        exit(1);
    }
    return g;
}

static void fill(const dtype_case *d, void *buf, int r, size_t count, int op)
{
    for (size_t i = 0; i < count; i++)
        store(d, buf, i, input_value(r, i, op));
}

/* Reductions: this PB against its MPI; the universe against the independent values; hierarchical
 * against flat. */
/* The path of the universe's collectives, as WAITIO_COLL_HIER spells it: "0" flat, "1"
 * hierarchical, "paired", "segmented", "pipeline", "auto" chosen per call
 * (waitio_coll_set_path: the variable is read once). */
static const char *const path_names[] = {"0", "1", "paired", "segmented", "pipeline"};

static void set_path(const char *mode)
{
    int path = WAITIO_COLL_PATH_AUTO;
    for (int p = 0; p < (int)(sizeof path_names / sizeof path_names[0]); p++)
        if (!strcmp(mode, path_names[p]))
            path = p;
    if (path == WAITIO_COLL_PATH_AUTO && strcmp(mode, "auto")) {
        fprintf(stderr, "mpi_layer: unknown path '%s'\n", mode);
        exit(1);
    }
    CHECK_RC(waitio_coll_set_path(path));
}

static void test_reductions(WAITIO_MPI_Comm U, WAITIO_MPI_Comm P, size_t maxcount)
{
    static const size_t counts[] = {0, 1, 7, 1000, 20000};
    size_t cap = maxcount > 20000 ? maxcount : 20000;
    size_t maxbytes = cap * 16;
    uint8_t *in = malloc(maxbytes), *a = malloc(maxbytes), *b = malloc(maxbytes), *want = malloc(maxbytes);
    for (size_t di = 0; di < sizeof dtypes / sizeof dtypes[0]; di++) {
        const dtype_case *d = &dtypes[di];
        for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
            if (!op_applies(d, (int)k))
                continue;
            for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
                size_t n = counts[ci];
                int op = ops[k].w;
                /* inside the PB: WaitIO vs the PB's MPI */
                fill(d, in, wrank, n, op);
                memset(a, 0xa5, n * d->size);
                memset(b, 0x5a, n * d->size);
                CHECK_RC(WAITIO_MPI_Allreduce(in, a, (int)n, d->w, op, P));
                MPI_Allreduce(in, b, (int)n, d->m, ops[k].m, MPI_COMM_WORLD);
                if (!same_values(d, a, b, n))
                    FAIL("Allreduce %s %s count %zu: WaitIO differs from MPI", d->name, ops[k].name, n);
                int root = (int)(ci % (size_t)wsize);
                memset(a, 0xa5, n * d->size);
                memset(b, 0x5a, n * d->size);
                CHECK_RC(WAITIO_MPI_Reduce(in, a, (int)n, d->w, op, root, P));
                MPI_Reduce(in, b, (int)n, d->m, ops[k].m, root, MPI_COMM_WORLD);
                if (wrank == root && !same_values(d, a, b, n))
                    FAIL("Reduce %s %s count %zu root %d: WaitIO differs from MPI", d->name,
                         ops[k].name, n, root);
                /* across PBs: hierarchical and flat against independent values */
                fill(d, in, urank, n, op);
                for (size_t i = 0; i < n; i++)
                    store(d, want, i, expected_reduce(usize, i, op));
                for (int flat = 0; flat < 2; flat++) {
                    set_path(flat ? "0" : "1");
                    memset(a, 0xa5, n * d->size);
                    CHECK_RC(WAITIO_MPI_Allreduce(in, a, (int)n, d->w, op, U));
                    if (!same_values(d, a, want, n))
                        FAIL("universe Allreduce %s %s count %zu (%s) wrong", d->name,
                             ops[k].name, n, flat ? "flat" : "hierarchical");
                    int uroot = (int)((ci * 3 + k) % (size_t)usize);
                    memset(a, 0xa5, n * d->size);
                    CHECK_RC(WAITIO_MPI_Reduce(in, a, (int)n, d->w, op, uroot, U));
                    if (urank == uroot && !same_values(d, a, want, n))
                        FAIL("universe Reduce %s %s count %zu root %d (%s) wrong", d->name,
                             ops[k].name, n, uroot, flat ? "flat" : "hierarchical");
                }
                set_path("auto");
            }
        }
    }
    /* one large vector: ring reduce-scatter + allgather, flat and hierarchical */
    const dtype_case *d = &dtypes[DT_DOUBLE];
    fill(d, in, urank, maxcount, WAITIO_MPI_SUM);
    for (int flat = 0; flat < 2; flat++) {
        set_path(flat ? "0" : "1");
        CHECK_RC(WAITIO_MPI_Allreduce(in, a, (int)maxcount, d->w, WAITIO_MPI_SUM, U));
        for (size_t i = 0; i < maxcount; i++)
            if (((double *)a)[i] != (double)expected_reduce(usize, i, WAITIO_MPI_SUM)) {
                FAIL("large Allreduce (%s) wrong at %zu", flat ? "flat" : "hierarchical", i);
                break;
            }
    }
    set_path("auto");
    free(in);
    free(a);
    free(b);
    free(want);
}

/* Bcast, gather(v), scatter(v), allgather, alltoall, barrier: PB vs MPI, and universe values. */
static void test_data_movement(WAITIO_MPI_Comm U, WAITIO_MPI_Comm P)
{
    enum { N = 1000 };
    int *a = calloc((size_t)N * 64, sizeof(int)), *b = calloc((size_t)N * 64, sizeof(int));
    int *in = calloc((size_t)N * 64, sizeof(int));
    for (int root = 0; root < usize; root += (usize > 3 ? usize / 3 : 1)) {
        for (int flat = 0; flat < 2; flat++) {
            set_path(flat ? "0" : "1");
            for (int i = 0; i < N; i++)
                a[i] = urank == root ? root * 100000 + i : -1;
            CHECK_RC(WAITIO_MPI_Bcast(a, N, WAITIO_MPI_INT, root, U));
            for (int i = 0; i < N; i++)
                if (a[i] != root * 100000 + i) {
                    FAIL("universe Bcast root %d (%s) wrong at %d", root, flat ? "flat" : "hier", i);
                    break;
                }
        }
    }
    set_path("auto");
    /* a large broadcast (1.2 MiB, not a whole number of segments): flat, hierarchical in one
     * piece, hierarchical in segments (the PBs' MPI overlapping the heads' WaitIO), and chosen */
    enum { BIG = 300 * 1024 + 17 };
    int *big = malloc(sizeof(int) * BIG);
    static const char *const hier_modes[][2] = {{"0", "0"}, {"1", "0"}, {"1", "1"}, {"auto", "auto"}};
    for (int m = 0; big && m < 4; m++) {
        set_path(hier_modes[m][0]);
        setenv("WAITIO_COLL_PIPELINE", hier_modes[m][1], 1);
        int broot = (m * 2 + 1) % usize;
        for (int i = 0; i < BIG; i++)
            big[i] = urank == broot ? i * 7 + m : -1;
        CHECK_RC(WAITIO_MPI_Bcast(big, BIG, WAITIO_MPI_INT, broot, U));
        for (int i = 0; i < BIG; i++)
            if (big[i] != i * 7 + m) {
                FAIL("large universe Bcast (hier %s, pipeline %s) wrong at %d", hier_modes[m][0],
                     hier_modes[m][1], i);
                break;
            }
    }
    free(big);
    set_path("auto");
    unsetenv("WAITIO_COLL_PIPELINE");
    /* inside the PB against MPI */
    for (int i = 0; i < N; i++)
        in[i] = wrank * 1000 + i;
    int root = wsize - 1;
    memcpy(a, in, sizeof(int) * N);
    memcpy(b, in, sizeof(int) * N);
    CHECK_RC(WAITIO_MPI_Bcast(a, N, WAITIO_MPI_INT, root, P));
    MPI_Bcast(b, N, MPI_INT, root, MPI_COMM_WORLD);
    if (memcmp(a, b, sizeof(int) * N))
        FAIL("PB Bcast differs from MPI");
    memset(a, 0, sizeof(int) * N * (size_t)wsize);
    memset(b, 0, sizeof(int) * N * (size_t)wsize);
    CHECK_RC(WAITIO_MPI_Gather(in, N, WAITIO_MPI_INT, a, N, WAITIO_MPI_INT, 0, P));
    MPI_Gather(in, N, MPI_INT, b, N, MPI_INT, 0, MPI_COMM_WORLD);
    if (wrank == 0 && memcmp(a, b, sizeof(int) * N * (size_t)wsize))
        FAIL("PB Gather differs from MPI");
    CHECK_RC(WAITIO_MPI_Allgather(in, N, WAITIO_MPI_INT, a, N, WAITIO_MPI_INT, P));
    MPI_Allgather(in, N, MPI_INT, b, N, MPI_INT, MPI_COMM_WORLD);
    if (memcmp(a, b, sizeof(int) * N * (size_t)wsize))
        FAIL("PB Allgather differs from MPI");
    int *counts = calloc((size_t)wsize, sizeof(int)), *displs = calloc((size_t)wsize, sizeof(int));
    for (int r = 0, off = 0; r < wsize; r++) {
        counts[r] = r + 3;
        displs[r] = off;
        off += counts[r] + 2;
    }
    memset(a, 0, sizeof(int) * N * 4);
    memset(b, 0, sizeof(int) * N * 4);
    CHECK_RC(WAITIO_MPI_Gatherv(in, wrank + 3, WAITIO_MPI_INT, a, counts, displs, WAITIO_MPI_INT, root, P));
    MPI_Gatherv(in, wrank + 3, MPI_INT, b, counts, displs, MPI_INT, root, MPI_COMM_WORLD);
    if (wrank == root && memcmp(a, b, sizeof(int) * N * 4))
        FAIL("PB Gatherv differs from MPI");
    int *sv = calloc((size_t)N * 4, sizeof(int));
    for (int i = 0; i < N * 4; i++)
        sv[i] = i * 3 + 1;
    memset(a, 0, sizeof(int) * N);
    memset(b, 0, sizeof(int) * N);
    CHECK_RC(WAITIO_MPI_Scatterv(sv, counts, displs, WAITIO_MPI_INT, a, wrank + 3, WAITIO_MPI_INT, 0, P));
    MPI_Scatterv(sv, counts, displs, MPI_INT, b, wrank + 3, MPI_INT, 0, MPI_COMM_WORLD);
    if (memcmp(a, b, sizeof(int) * N))
        FAIL("PB Scatterv differs from MPI");
    CHECK_RC(WAITIO_MPI_Scatter(sv, 7, WAITIO_MPI_INT, a, 7, WAITIO_MPI_INT, 0, P));
    MPI_Scatter(sv, 7, MPI_INT, b, 7, MPI_INT, 0, MPI_COMM_WORLD);
    if (memcmp(a, b, sizeof(int) * 7))
        FAIL("PB Scatter differs from MPI");
    for (int i = 0; i < 5 * wsize; i++)
        in[i] = wrank * 100 + i;
    CHECK_RC(WAITIO_MPI_Alltoall(in, 5, WAITIO_MPI_INT, a, 5, WAITIO_MPI_INT, P));
    MPI_Alltoall(in, 5, MPI_INT, b, 5, MPI_INT, MPI_COMM_WORLD);
    if (memcmp(a, b, sizeof(int) * 5 * (size_t)wsize))
        FAIL("PB Alltoall differs from MPI");
    /* universe allgather / alltoall against computed values */
    for (int i = 0; i < 3; i++)
        in[i] = urank * 10 + i;
    CHECK_RC(WAITIO_MPI_Allgather(in, 3, WAITIO_MPI_INT, a, 3, WAITIO_MPI_INT, U));
    for (int r = 0; r < usize; r++)
        for (int i = 0; i < 3; i++)
            if (a[r * 3 + i] != r * 10 + i)
                FAIL("universe Allgather wrong at %d/%d", r, i);
    for (int r = 0; r < usize; r++)
        in[r] = urank * 1000 + r;
    CHECK_RC(WAITIO_MPI_Alltoall(in, 1, WAITIO_MPI_INT, a, 1, WAITIO_MPI_INT, U));
    for (int r = 0; r < usize; r++)
        if (a[r] != r * 1000 + urank)
            FAIL("universe Alltoall wrong from %d", r);
    CHECK_RC(WAITIO_MPI_Barrier(U));
    CHECK_RC(WAITIO_MPI_Barrier(P));
    free(counts);
    free(displs);
    free(sv);
    free(a);
    free(b);
    free(in);
}

/* MPI_IN_PLACE on every collective that takes it, on the universe (each path) and in the PB.
 * The paired hierarchical allreduce hands the PB's MPI one buffer for both sides, which MPI
 * forbids unless it is passed as MPI_IN_PLACE. */
/* Sums whose bits depend on the order of the additions (values 1e16 apart in magnitude): every
 * rank must hold the same bits after a universe allreduce, on each path (flat, whichever flat
 * algorithm the size picks; hierarchical; chosen). Checked with a second allreduce of the bit
 * patterns (MAX and MIN of the 64-bit words agree only if every rank has the same). */
static void test_same_bits(WAITIO_MPI_Comm U)
{
    enum { MAXN = 600 };
    static const int counts[] = {1, 3, 100, MAXN};
    static const char *const modes[] = {"0", "1", "auto", "paired", "segmented"};
    double in[MAXN], out[MAXN];
    uint64_t bits[MAXN], hi[MAXN], lo[MAXN];
    for (int m = 0; m < 5; m++) {
        set_path(modes[m]);
        for (int c = 0; c < 4; c++) {
            int n = counts[c];
            for (int i = 0; i < n; i++)
                in[i] = (urank % 3 == 0 ? 1e16 : urank % 3 == 1 ? -1e16 : 1.0) * (1.0 + 0.37 * urank) + i * 0.1;
            CHECK_RC(WAITIO_MPI_Allreduce(in, out, n, WAITIO_MPI_DOUBLE, WAITIO_MPI_SUM, U));
            memcpy(bits, out, sizeof(double) * (size_t)n);
            CHECK_RC(WAITIO_MPI_Allreduce(bits, hi, n, WAITIO_MPI_UINT64_T, WAITIO_MPI_MAX, U));
            CHECK_RC(WAITIO_MPI_Allreduce(bits, lo, n, WAITIO_MPI_UINT64_T, WAITIO_MPI_MIN, U));
            for (int i = 0; i < n; i++)
                if (hi[i] != bits[i] || lo[i] != bits[i]) {
                    FAIL("universe Allreduce of %d doubles (hier %s): ranks hold different bits at %d",
                         n, modes[m], i);
                    break;
                }
        }
    }
    set_path("auto");
}

static void test_in_place(WAITIO_MPI_Comm U, WAITIO_MPI_Comm P)
{
    enum { N = 777 };
    double *a = calloc((size_t)N * (size_t)usize, sizeof(double));
    static const char *const modes[] = {"0", "1", "auto"};
    for (int m = 0; m < 3; m++) {
        set_path(modes[m]);
        for (int i = 0; i < N; i++)
            a[i] = (double)input_value(urank, (size_t)i, WAITIO_MPI_SUM);
        CHECK_RC(WAITIO_MPI_Allreduce(WAITIO_MPI_IN_PLACE, a, N, WAITIO_MPI_DOUBLE, WAITIO_MPI_SUM, U));
        for (int i = 0; i < N; i++)
            if (a[i] != (double)expected_reduce(usize, (size_t)i, WAITIO_MPI_SUM)) {
                FAIL("universe in-place Allreduce (hier %s) wrong at %d", modes[m], i);
                break;
            }
        int root = (m * 2 + 1) % usize;
        for (int i = 0; i < N; i++)
            a[i] = (double)input_value(urank, (size_t)i, WAITIO_MPI_SUM);
        CHECK_RC(WAITIO_MPI_Reduce(urank == root ? WAITIO_MPI_IN_PLACE : a, a, N, WAITIO_MPI_DOUBLE,
                                   WAITIO_MPI_SUM, root, U));
        for (int i = 0; urank == root && i < N; i++)
            if (a[i] != (double)expected_reduce(usize, (size_t)i, WAITIO_MPI_SUM)) {
                FAIL("universe in-place Reduce (hier %s) root %d wrong at %d", modes[m], root, i);
                break;
            }
    }
    set_path("auto");
    for (int i = 0; i < N; i++)
        a[i] = wrank + i;
    CHECK_RC(WAITIO_MPI_Allreduce(WAITIO_MPI_IN_PLACE, a, N, WAITIO_MPI_DOUBLE, WAITIO_MPI_MAX, P));
    for (int i = 0; i < N; i++)
        if (a[i] != (double)(wsize - 1 + i)) {
            FAIL("PB in-place Allreduce wrong at %d", i);
            break;
        }
    /* gather / scatter / allgather: the root's (or everyone's) own block stays where it is */
    int *g = calloc((size_t)N * (size_t)usize, sizeof(int));
    int root = usize - 1;
    for (int i = 0; i < N * usize; i++)
        g[i] = urank == root ? (i / N == root ? root * 10000 + i % N : -1) : urank * 10000 + i;
    CHECK_RC(WAITIO_MPI_Gather(urank == root ? WAITIO_MPI_IN_PLACE : g, N, WAITIO_MPI_INT, g, N,
                               WAITIO_MPI_INT, root, U));
    for (int i = 0; urank == root && i < N * usize; i++)
        if (g[i] != (i / N) * 10000 + i % N) {
            FAIL("universe in-place Gather wrong at %d", i);
            break;
        }
    for (int i = 0; i < N * usize; i++)
        g[i] = urank == 0 ? i * 3 : -1;
    CHECK_RC(WAITIO_MPI_Scatter(g, N, WAITIO_MPI_INT, urank == 0 ? WAITIO_MPI_IN_PLACE : g, N,
                                WAITIO_MPI_INT, 0, U));
    for (int i = 0; i < N; i++)
        if (g[i] != (urank * N + i) * 3) {
            FAIL("universe in-place Scatter wrong at %d", i);
            break;
        }
    for (int i = 0; i < N * usize; i++)
        g[i] = i / N == urank ? urank * 10000 + i % N : -1;
    CHECK_RC(WAITIO_MPI_Allgather(WAITIO_MPI_IN_PLACE, 0, WAITIO_MPI_INT, g, N, WAITIO_MPI_INT, U));
    for (int i = 0; i < N * usize; i++)
        if (g[i] != (i / N) * 10000 + i % N) {
            FAIL("universe in-place Allgather wrong at %d", i);
            break;
        }
    free(g);
    free(a);
}

/* Point-to-point through the conversion layer, with statuses. */
static void test_p2p(WAITIO_MPI_Comm U)
{
    int right = (urank + 1) % usize, left = (urank + usize - 1) % usize;
    double out[3] = {urank + 0.5, urank * 2.0, -1.0}, got[3] = {0};
    WAITIO_MPI_Request req[2];
    int sta[2 * WAITIO_STATUS_SIZE];
    CHECK_RC(WAITIO_MPI_Irecv(got, 3, WAITIO_MPI_DOUBLE, WAITIO_MPI_ANY_SOURCE, WAITIO_MPI_ANY_TAG, U, &req[0]));
    CHECK_RC(WAITIO_MPI_Isend(out, 3, WAITIO_MPI_DOUBLE, right, 77, U, &req[1]));
    CHECK_RC(WAITIO_MPI_Waitall(2, req, sta));
    if (got[0] != left + 0.5 || got[1] != left * 2.0 || sta[WAITIO_MPI_SOURCE] != left ||
        sta[WAITIO_MPI_TAG] != 77 || sta[WAITIO_MPI_COUNT] != 24 || sta[WAITIO_MPI_ERROR] != 0)
        FAIL("Isend/Irecv/Waitall wrong: got %g %g from %d tag %d count %d", got[0], got[1],
             sta[WAITIO_MPI_SOURCE], sta[WAITIO_MPI_TAG], sta[WAITIO_MPI_COUNT]);
    long v = urank, w = -1;
    if (urank % 2 == 0) {
        CHECK_RC(WAITIO_MPI_Send(&v, 1, WAITIO_MPI_LONG, right, 5, U));
        CHECK_RC(WAITIO_MPI_Recv(&w, 1, WAITIO_MPI_LONG, left, 5, U));
    } else {
        CHECK_RC(WAITIO_MPI_Recv(&w, 1, WAITIO_MPI_LONG, left, 5, U));
        CHECK_RC(WAITIO_MPI_Send(&v, 1, WAITIO_MPI_LONG, right, 5, U));
    }
    if (w != left)
        FAIL("Send/Recv wrong: %ld from %d", w, left);
    int sz = 0;
    CHECK_RC(WAITIO_MPI_Type_size(WAITIO_MPI_DOUBLE_PRECISION, &sz));
    if (sz != 8)
        FAIL("Type_size(DOUBLE_PRECISION) = %d", sz);
    /* truncation is reported, never overflows */
    char small[4];
    if (urank == 0) {
        CHECK_RC(WAITIO_MPI_Send(out, 3, WAITIO_MPI_DOUBLE, 1, 9, U));
    } else if (urank == 1) {
        int rc = WAITIO_MPI_Recv(small, 4, WAITIO_MPI_CHAR, 0, 9, U);
        if (rc != WAITIO_ERR_TRUNCATE)
            FAIL("truncated Recv returned %d, expected WAITIO_ERR_TRUNCATE", rc);
    }
}

/* ---- every path forced in turn, at sizes drawn from a seed the PBs share ---- */

static uint64_t rng_state;

static uint64_t rnd(void) /* splitmix64: the same sequence in every process for the same seed */
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static size_t rnd_in(size_t lo, size_t hi) { return lo + (size_t)(rnd() % (hi - lo + 1)); }

/* An element count around the PB sizes: 0, 1, and counts that do not divide into the PBs'
 * processes (the segmented allreduce's uneven last piece). */
static size_t small_count(void)
{
    static const size_t fixed[] = {0, 1, 2, 3};
    size_t k = (size_t)(rnd() % 8);
    return k < 4 ? fixed[k] : rnd_in(4, (size_t)usize * 7 + 5);
}

/* One allreduce (in place or not) of n elements of d under op, every element checked. */
static void check_allreduce(WAITIO_MPI_Comm U, const dtype_case *d, int k, size_t n, int in_place,
                            const char *path, uint8_t *in, uint8_t *out, uint8_t *want)
{
    int op = ops[k].w;
    fill(d, in, urank, n, op);
    for (size_t i = 0; i < n; i++)
        store(d, want, i, expected_reduce(usize, i, op));
    memset(out, 0xa5, n * d->size + 1);
    if (in_place)
        memcpy(out, in, n * d->size);
    CHECK_RC(WAITIO_MPI_Allreduce(in_place ? WAITIO_MPI_IN_PLACE : in, out, (int)n, d->w, op, U));
    if (!same_values(d, out, want, n))
        FAIL("path %s: %sAllreduce %s %s count %zu wrong", path, in_place ? "in-place " : "", d->name,
             ops[k].name, n);
    if (out[n * d->size] != 0xa5)
        FAIL("path %s: Allreduce %s count %zu wrote past its buffer", path, d->name, n);
}

/* Op number `pick` (modulo their count) among those that apply to d. */
static int applicable_op(const dtype_case *d, uint64_t pick)
{
    int n = 0, k;
    for (k = 0; k < (int)(sizeof ops / sizeof ops[0]); k++)
        n += op_applies(d, k);
    pick %= (uint64_t)(n ? n : 1);
    for (k = 0; k < (int)(sizeof ops / sizeof ops[0]); k++)
        if (op_applies(d, k) && pick-- == 0)
            break;
    return k;
}

/* sweep: every datatype (under an op drawn among those that apply to it) and every op (on
 * 64-bit integers), for the paths that reduce with code of their own besides the PBs' MPI
 * (paired, segmented: the flat and hierarchical ones get every pair in test_reductions);
 * otherwise a few drawn pairs. Then large vectors. */
static void paths_allreduce(WAITIO_MPI_Comm U, const char *path, int sweep, uint8_t *in, uint8_t *out,
                            uint8_t *want)
{
    size_t ndt = sizeof dtypes / sizeof dtypes[0], di;
    for (size_t c = 0; c < (sweep ? ndt : 4); c++) {
        di = sweep ? c : (size_t)(rnd() % ndt);
        if (dtypes[di].kind != K_NONE)
            check_allreduce(U, &dtypes[di], applicable_op(&dtypes[di], rnd()), small_count(),
                            (int)(rnd() % 4 == 0), path, in, out, want);
    }
    for (di = 0; sweep && di < ndt; di++)
        if (dtypes[di].w == WAITIO_MPI_INT64_T)
            for (int k = 0; k < (int)(sizeof ops / sizeof ops[0]); k++)
                check_allreduce(U, &dtypes[di], k, small_count(), 0, path, in, out, want);
    /* large vectors, where the segmented path is meant to win: doubles (about 1 MiB, and in
     * place), 16-byte long doubles with a count that leaves the last piece short */
    check_allreduce(U, &dtypes[DT_DOUBLE], 0, rnd_in(90000, 140000), 0, path, in, out, want);
    check_allreduce(U, &dtypes[DT_DOUBLE], 0, rnd_in(20000, 40000) | 1, 1, path, in, out, want);
    for (di = 0; di < ndt; di++)
        if (dtypes[di].w == WAITIO_MPI_LONG_DOUBLE)
            check_allreduce(U, &dtypes[di], 2 /* MAX */, rnd_in(3000, 9000) | 1, 0, path, in, out, want);
}

/* Broadcasts of 0 B to about 1.1 MiB from random roots (the pipeline's range, sizes that are
 * no whole number of segments), every byte checked. */
static void paths_bcast(WAITIO_MPI_Comm U, const char *path, uint8_t *buf)
{
    size_t sizes[] = {0, 1, rnd_in(2, 4096), rnd_in(4097, 32767), rnd_in(32768, 300000),
                      rnd_in(300001, 1100000)};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int root = (int)(rnd() % (uint64_t)usize);
        uint8_t salt = (uint8_t)rnd();
        for (size_t i = 0; i < sizes[s]; i++)
            buf[i] = urank == root ? (uint8_t)(i * 131 + (i >> 8) + salt) : 0x5a;
        CHECK_RC(WAITIO_MPI_Bcast(buf, (int)sizes[s], WAITIO_MPI_BYTE, root, U));
        for (size_t i = 0; i < sizes[s]; i++)
            if (buf[i] != (uint8_t)(i * 131 + (i >> 8) + salt)) {
                FAIL("path %s: Bcast of %zu bytes from %d wrong at %zu", path, sizes[s], root, i);
                break;
            }
    }
}

static void paths_reduce(WAITIO_MPI_Comm U, const char *path, uint8_t *in, uint8_t *out, uint8_t *want)
{
    static const int cases[][2] = {{DT_DOUBLE, 0}, {0 /* INT */, 2 /* MAX */}, {DT_DOUBLE, 3 /* MIN */}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const dtype_case *d = &dtypes[cases[c][0]];
        int k = cases[c][1], op = ops[k].w, root = (int)(rnd() % (uint64_t)usize);
        size_t n = c == 0 ? rnd_in(30000, 70000) : small_count();
        fill(d, in, urank, n, op);
        for (size_t i = 0; i < n; i++)
            store(d, want, i, expected_reduce(usize, i, op));
        memset(out, 0xa5, n * d->size);
        CHECK_RC(WAITIO_MPI_Reduce(in, out, (int)n, d->w, op, root, U));
        if (urank == root && !same_values(d, out, want, n))
            FAIL("path %s: Reduce %s %s count %zu root %d wrong", path, d->name, ops[k].name, n, root);
    }
}

static void test_paths(WAITIO_MPI_Comm U, uint64_t seed)
{
    static const char *const order[] = {"0", "1", "paired", "segmented", "pipeline", "auto"};
    size_t cap = 1200000 * 2;
    uint8_t *in = malloc(cap), *out = malloc(cap), *want = malloc(cap);
    if (!in || !out || !want) {
        FAIL("out of memory");
        exit(1);
    }
    rng_state = seed;
    for (size_t p = 0; p < sizeof order / sizeof order[0]; p++) {
        set_path(order[p]);
        /* the sweep where those paths can run (a power of two of PBs); elsewhere they are the
         * hierarchical path, which test_reductions sweeps */
        int sweep = (!strcmp(order[p], "paired") || !strcmp(order[p], "segmented")) && !(npb & (npb - 1));
        paths_allreduce(U, order[p], sweep, in, out, want);
        paths_bcast(U, order[p], out);
        paths_reduce(U, order[p], in, out, want);
        CHECK_RC(WAITIO_MPI_Barrier(U));
    }
    set_path("auto");
    free(in);
    free(out);
    free(want);
}

int main(int argc, char **argv)
{
    int paths = argc > 2 && !strcmp(argv[1], "paths");
    size_t maxcount = argc > 1 && !paths ? (size_t)atol(argv[1]) : (1u << 20);
    alarm(240);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    WAITIO_MPI_Comm U, H;
    CHECK_RC(waitio_create_universe(&U));
    CHECK_RC(waitio_create_universe_pbhead(&H));
    CHECK_RC(waitio_pb_rank(&pbid));
    CHECK_RC(waitio_pb_size(&npb));
    CHECK_RC(WAITIO_MPI_Comm_rank(U, &urank));
    CHECK_RC(WAITIO_MPI_Comm_size(U, &usize));
    int hrank, hsize;
    CHECK_RC(WAITIO_MPI_Comm_rank(H, &hrank));
    CHECK_RC(WAITIO_MPI_Comm_size(H, &hsize));
    if (hsize != npb || (wrank == 0 ? hrank != pbid : hrank != WAITIO_MPI_UNDEFINED))
        FAIL("PB-heads communicator: rank %d size %d", hrank, hsize);
    WAITIO_MPI_Comm P = pb_group();
    if (paths) {
        test_paths(U, strtoull(argv[2], NULL, 0));
        test_same_bits(U);
    } else {
        test_p2p(U);
        test_data_movement(U, P);
        test_in_place(U, P);
        if (waitio_coll_set_path(5) != WAITIO_ERR_ARG || waitio_coll_set_path(-2) != WAITIO_ERR_ARG)
            FAIL("waitio_coll_set_path(5) or (-2), not paths, was not refused");
        test_same_bits(U);
        test_reductions(U, P, maxcount);
    }
    if (wrank == 0) { /* PB heads reduce over their own communicator */
        int one = 1, total = 0;
        CHECK_RC(WAITIO_MPI_Allreduce(&one, &total, 1, WAITIO_MPI_INT, WAITIO_MPI_SUM, H));
        if (total != npb)
            FAIL("PB-heads Allreduce gave %d, expected %d", total, npb);
    }
    int all_failures = 0;
    MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK_RC(waitio_finalize());
    if (wrank == 0)
        printf("mpi_layer PB %d: %s (%d universe processes, %d failures in this PB)\n", pbid,
               all_failures ? "FAILED" : "ok", usize, all_failures);
    MPI_Finalize();
    return failures ? 1 : 0;
}
