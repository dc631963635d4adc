/*
 * coll.c — OpenSHMEM collectives (1.5 section 9.9) on any team, and the deprecated active-set
 * forms, through WaitIO's collectives (waitio_mpi.h) on the team's WaitIO group (team.c). The
 * group numbers its members in world-PE order; a team in another order (a negative stride) has
 * its blocks permuted through a buffer. Each call first completes this PE's outstanding RMA
 * (shmem_quiet), as the world-only version did. Zero-sized calls return after that, with no
 * communication: every member passes the same size (collect, whose sizes differ, always runs).
 */
#include <limits.h>
#include <stdlib.h>
#include "shmem/shmem_internal.h"

/* 0: go on; -1: SHMEM_TEAM_INVALID (the call returns nonzero); exits for a destroyed team. */
static int enter(shmem_team_t team, const char *what)
{
    wio_shmem_need_init();
    if (team == SHMEM_TEAM_INVALID)
        return -1;
    if (team->size <= 0)
        wio_shmem_fatal("%s: not a team (destroyed, or not made by this library)", what);
    shmem_quiet();
    return 0;
}

static int grank(const struct waitio_shmem_team *t, int pe) { return t->grank ? t->grank[pe] : pe; }
static int tpe(const struct waitio_shmem_team *t, int g) { return t->tpe ? t->tpe[g] : g; }

static void *scratch(size_t n, const char *what)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        wio_shmem_fatal("%s: out of memory (%zu bytes)", what, n);
    return p;
}

static int fits_int(size_t n, size_t per, const char *what)
{
    if (per && n > INT_MAX / per)
        wio_shmem_fatal("%s: %zu bytes per PE and %zu PEs (at most %d bytes in all)", what, n, per, INT_MAX);
    return (int)n;
}

/* ---- the operations, on bytes --------------------------------------------------------------- */

/* buf (on the root: the data) to every member's buf. */
static void bcast_bytes(struct waitio_shmem_team *t, void *buf, size_t n, int root, const char *what)
{
    if (root < 0 || root >= t->size)
        wio_shmem_fatal("%s: root %d is outside the team's PEs 0..%d", what, root, t->size - 1);
    for (size_t at = 0; at < n; at += INT_MAX) {
        size_t k = n - at < INT_MAX ? n - at : INT_MAX;
        wio_shmem_check(waitio_mpi_bcast((uint8_t *)buf + at, (int)k, WAITIO_MPI_BYTE, grank(t, root), t->grp), what);
    }
}

static void fcollect_bytes(struct waitio_shmem_team *t, void *dest, const void *source, size_t n, const char *what)
{
    if (!n)
        return;
    int k = fits_int(n, (size_t)t->size, what);
    if (!t->tpe) {
        wio_shmem_check(WAITIO_MPI_Allgather(source, k, WAITIO_MPI_BYTE, dest, k, WAITIO_MPI_BYTE, t->grp), what);
        return;
    }
    uint8_t *tmp = scratch(n * (size_t)t->size, what);
    wio_shmem_check(WAITIO_MPI_Allgather(source, k, WAITIO_MPI_BYTE, tmp, k, WAITIO_MPI_BYTE, t->grp), what);
    for (int g = 0; g < t->size; g++)
        memcpy((uint8_t *)dest + (size_t)tpe(t, g) * n, tmp + (size_t)g * n, n);
    free(tmp);
}

/* Every member's block, concatenated in team-PE order; the blocks may differ in size. */
static void collect_bytes(struct waitio_shmem_team *t, void *dest, const void *source, size_t n, const char *what)
{
    int np = t->size;
    uint64_t mine = n, *all = scratch(sizeof *all * (size_t)np, what);
    int *counts = scratch(sizeof *counts * (size_t)np, what), *displs = scratch(sizeof *displs * (size_t)np, what);
    int *at = scratch(sizeof *at * (size_t)np, what);
    wio_shmem_check(WAITIO_MPI_Allgather(&mine, 1, WAITIO_MPI_UINT64_T, all, 1, WAITIO_MPI_UINT64_T, t->grp), what);
    uint64_t total = 0;
    for (int pe = 0; pe < np; pe++) { /* offsets in team-PE order */
        uint64_t len = all[grank(t, pe)];
        if (len > INT_MAX || total + len > INT_MAX)
            wio_shmem_fatal("%s: more than %d bytes in all", what, INT_MAX);
        at[pe] = (int)total;
        total += len;
    }
    for (int g = 0; g < np; g++) {
        counts[g] = (int)all[g];
        displs[g] = at[tpe(t, g)];
    }
    if (total) {
        wio_shmem_check(waitio_mpi_gatherv(source, (int)n, WAITIO_MPI_BYTE, dest, counts, displs, WAITIO_MPI_BYTE, 0,
                                           t->grp), what);
        wio_shmem_check(waitio_mpi_bcast(dest, (int)total, WAITIO_MPI_BYTE, 0, t->grp), what);
    }
    free(all);
    free(counts);
    free(displs);
    free(at);
}

/* Block j of source (n bytes) to team PE j; block i of dest from team PE i. */
static void alltoall_bytes(struct waitio_shmem_team *t, void *dest, const void *source, size_t n, const char *what)
{
    if (!n)
        return;
    int k = fits_int(n, (size_t)t->size, what);
    if (!t->tpe) {
        wio_shmem_check(waitio_mpi_alltoall(source, k, WAITIO_MPI_BYTE, dest, k, WAITIO_MPI_BYTE, t->grp), what);
        return;
    }
    size_t all = n * (size_t)t->size;
    uint8_t *s = scratch(all, what), *d = scratch(all, what);
    for (int g = 0; g < t->size; g++)
        memcpy(s + (size_t)g * n, (const uint8_t *)source + (size_t)tpe(t, g) * n, n);
    wio_shmem_check(waitio_mpi_alltoall(s, k, WAITIO_MPI_BYTE, d, k, WAITIO_MPI_BYTE, t->grp), what);
    for (int g = 0; g < t->size; g++)
        memcpy((uint8_t *)dest + (size_t)tpe(t, g) * n, d + (size_t)g * n, n);
    free(s);
    free(d);
}

/* alltoall of nelems elements of size bytes per PE pair, element k of block j at
 * source[(j * nelems + k) * sst] and dest[(j * nelems + k) * dst]: packed, exchanged, unpacked. */
static void alltoalls_bytes(struct waitio_shmem_team *t, void *dest, const void *source, ptrdiff_t dst,
                            ptrdiff_t sst, size_t nelems, size_t size, const char *what)
{
    if (dst < 1 || sst < 1)
        wio_shmem_fatal("%s: strides %td and %td (both must be at least 1)", what, dst, sst);
    if (dst == 1 && sst == 1) {
        alltoall_bytes(t, dest, source, nelems * size, what);
        return;
    }
    size_t n = nelems * size, all = n * (size_t)t->size;
    if (!n)
        return;
    int k = fits_int(n, (size_t)t->size, what);
    uint8_t *s = scratch(all, what), *d = scratch(all, what);
    for (int g = 0; g < t->size; g++) /* s in group order: block g for the member with group rank g */
        for (size_t e = 0; e < nelems; e++)
            memcpy(s + (size_t)g * n + e * size,
                   (const uint8_t *)source + ((size_t)tpe(t, g) * nelems + e) * (size_t)sst * size, size);
    wio_shmem_check(waitio_mpi_alltoall(s, k, WAITIO_MPI_BYTE, d, k, WAITIO_MPI_BYTE, t->grp), what);
    for (int g = 0; g < t->size; g++)
        for (size_t e = 0; e < nelems; e++)
            memcpy((uint8_t *)dest + ((size_t)tpe(t, g) * nelems + e) * (size_t)dst * size,
                   d + (size_t)g * n + e * size, size);
    free(s);
    free(d);
}

/* Reductions are commutative: the group's order does not matter. dest == source: in place. */
static void reduce(struct waitio_shmem_team *t, void *dest, const void *source, size_t nreduce, size_t size,
                   int dtype, int op, const char *what)
{
    for (size_t at = 0; at < nreduce; at += INT_MAX) {
        size_t n = nreduce - at < INT_MAX ? nreduce - at : INT_MAX;
        const uint8_t *s = (const uint8_t *)source + at * size;
        uint8_t *d = (uint8_t *)dest + at * size;
        wio_shmem_check(waitio_mpi_allreduce(s == d ? WAITIO_MPI_IN_PLACE : s, d, (int)n, dtype, op, t->grp), what);
    }
}

/* ---- on teams ------------------------------------------------------------------------------ */

int shmem_broadcastmem(shmem_team_t team, void *dest, const void *source, size_t nelems, int PE_root)
{
    if (enter(team, "shmem_broadcast"))
        return -1;
    if (team->my_pe == PE_root && dest != source && nelems)
        memmove(dest, source, nelems); /* 1.5: the root's dest gets the data too */
    bcast_bytes(team, dest, nelems, PE_root, "shmem_broadcast");
    return 0;
}

int shmem_fcollectmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
    if (enter(team, "shmem_fcollect"))
        return -1;
    fcollect_bytes(team, dest, source, nelems, "shmem_fcollect");
    return 0;
}

int shmem_collectmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
    if (enter(team, "shmem_collect"))
        return -1;
    collect_bytes(team, dest, source, nelems, "shmem_collect");
    return 0;
}

int shmem_alltoallmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
    if (enter(team, "shmem_alltoall"))
        return -1;
    alltoall_bytes(team, dest, source, nelems, "shmem_alltoall");
    return 0;
}

int shmem_alltoallsmem(shmem_team_t team, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,
                       size_t nelems)
{
    if (enter(team, "shmem_alltoalls"))
        return -1;
    alltoalls_bytes(team, dest, source, dst, sst, nelems, 1, "shmem_alltoalls");
    return 0;
}

#define DEF_COLL(T, N)                                                                                  \
    int shmem_##N##_broadcast(shmem_team_t team, T *dest, const T *source, size_t nelems, int PE_root)  \
    {                                                                                                   \
        return shmem_broadcastmem(team, dest, source, nelems * sizeof(T), PE_root);                     \
    }                                                                                                   \
    int shmem_##N##_collect(shmem_team_t team, T *dest, const T *source, size_t nelems)                 \
    {                                                                                                   \
        return shmem_collectmem(team, dest, source, nelems * sizeof(T));                                \
    }                                                                                                   \
    int shmem_##N##_fcollect(shmem_team_t team, T *dest, const T *source, size_t nelems)                \
    {                                                                                                   \
        return shmem_fcollectmem(team, dest, source, nelems * sizeof(T));                               \
    }                                                                                                   \
    int shmem_##N##_alltoall(shmem_team_t team, T *dest, const T *source, size_t nelems)                \
    {                                                                                                   \
        return shmem_alltoallmem(team, dest, source, nelems * sizeof(T));                               \
    }                                                                                                   \
    int shmem_##N##_alltoalls(shmem_team_t team, T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, \
                              size_t nelems)                                                            \
    {                                                                                                   \
        if (enter(team, "shmem_alltoalls"))                                                             \
            return -1;                                                                                  \
        alltoalls_bytes(team, dest, source, dst, sst, nelems, sizeof(T), "shmem_alltoalls");            \
        return 0;                                                                                       \
    }
WAITIO_SHMEM_RMA_TYPES(DEF_COLL)

/* ---- reductions ----------------------------------------------------------------------------- */

/* The WaitIO datatype of an element: integers by size and signedness, real types by
 * size. */
static int dtype_of(size_t size, int is_signed, int is_fp)
{
    if (is_fp)
        return size == sizeof(float) ? WAITIO_MPI_FLOAT : size == sizeof(double) ? WAITIO_MPI_DOUBLE
                                                                                 : WAITIO_MPI_LONG_DOUBLE;
    switch (size) {
    case 1: return is_signed ? WAITIO_MPI_INT8_T : WAITIO_MPI_UINT8_T;
    case 2: return is_signed ? WAITIO_MPI_INT16_T : WAITIO_MPI_UINT16_T;
    case 4: return is_signed ? WAITIO_MPI_INT32_T : WAITIO_MPI_UINT32_T;
    default: return is_signed ? WAITIO_MPI_INT64_T : WAITIO_MPI_UINT64_T;
    }
}

static int team_reduce(shmem_team_t team, void *dest, const void *source, size_t nreduce, size_t size, int dtype,
                       int op, const char *what)
{
    if (enter(team, what))
        return -1;
    reduce(team, dest, source, nreduce, size, dtype, op, what);
    return 0;
}

#define IS_SIGNED(T) ((T)-1 < (T)1) /* not "< 0": -Wtype-limits */
#define IS_FP(T) ((T)0.5 != (T)0)
#define DTYPE(T) dtype_of(sizeof(T), IS_SIGNED(T), IS_FP(T))
#define CDTYPE(T) (sizeof(T) == sizeof(float _Complex) ? WAITIO_MPI_COMPLEX : WAITIO_MPI_DOUBLE_COMPLEX)
#define DEF_RED(T, N, OP, CODE, DT)                                                                     \
    int shmem_##N##_##OP##_reduce(shmem_team_t team, T *dest, const T *source, size_t nreduce)          \
    {                                                                                                   \
        return team_reduce(team, dest, source, nreduce, sizeof(T), DT, CODE,                            \
                           "shmem_" #N "_" #OP "_reduce");                                              \
    }
#define DEF_BITWISE_RED(T, N)                                                                           \
    DEF_RED(T, N, and, WAITIO_MPI_BAND, DTYPE(T))                                                       \
    DEF_RED(T, N, or, WAITIO_MPI_BOR, DTYPE(T)) DEF_RED(T, N, xor, WAITIO_MPI_BXOR, DTYPE(T))
#define DEF_ARITH_RED(T, N)                                                                             \
    DEF_RED(T, N, max, WAITIO_MPI_MAX, DTYPE(T)) DEF_RED(T, N, min, WAITIO_MPI_MIN, DTYPE(T))          \
    DEF_RED(T, N, sum, WAITIO_MPI_SUM, DTYPE(T)) DEF_RED(T, N, prod, WAITIO_MPI_PROD, DTYPE(T))
#define DEF_COMPLEX_RED(T, N)                                                                           \
    DEF_RED(T, N, sum, WAITIO_MPI_SUM, CDTYPE(T)) DEF_RED(T, N, prod, WAITIO_MPI_PROD, CDTYPE(T))
WAITIO_SHMEM_BITWISE_RED_TYPES(DEF_BITWISE_RED)
WAITIO_SHMEM_ARITH_RED_TYPES(DEF_ARITH_RED)
WAITIO_SHMEM_COMPLEX_RED_TYPES(DEF_COMPLEX_RED)

/* ---- deprecated active-set collectives ------------------------------------------------------- */

/* The active set's team, after this PE's RMA completed. pSync is left as it is (SHMEM_SYNC_VALUE). */
static struct waitio_shmem_team *active(int PE_start, int logPE_stride, int PE_size, const char *what)
{
    struct waitio_shmem_team *t = wio_shmem_active_set(PE_start, logPE_stride, PE_size, what);
    shmem_quiet();
    return t;
}

void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long *pSync)
{
    (void)pSync;
    struct waitio_shmem_team *t = active(PE_start, logPE_stride, PE_size, "shmem_barrier");
    wio_shmem_check(waitio_mpi_barrier(t->grp), "shmem_barrier");
}

void shmem_sync(int PE_start, int logPE_stride, int PE_size, long *pSync)
{
    (void)pSync;
    struct waitio_shmem_team *t = wio_shmem_active_set(PE_start, logPE_stride, PE_size, "shmem_sync");
    wio_shmem_check(waitio_mpi_barrier(t->grp), "shmem_sync");
}

/* The deprecated broadcast leaves the root's dest alone: the root sends from source. */
#define DEF_ACTIVE(BITS)                                                                                \
    void shmem_broadcast##BITS(void *dest, const void *source, size_t nelems, int PE_root, int PE_start, \
                               int logPE_stride, int PE_size, long *pSync)                              \
    {                                                                                                   \
        (void)pSync;                                                                                    \
        struct waitio_shmem_team *t = active(PE_start, logPE_stride, PE_size, "shmem_broadcast" #BITS); \
        void *buf = t->my_pe == PE_root ? (void *)(uintptr_t)source : dest;                             \
        bcast_bytes(t, buf, nelems * (BITS / 8), PE_root, "shmem_broadcast" #BITS);                     \
    }                                                                                                   \
    void shmem_collect##BITS(void *dest, const void *source, size_t nelems, int PE_start, int logPE_stride, \
                             int PE_size, long *pSync)                                                  \
    {                                                                                                   \
        (void)pSync;                                                                                    \
        struct waitio_shmem_team *t = active(PE_start, logPE_stride, PE_size, "shmem_collect" #BITS);   \
        collect_bytes(t, dest, source, nelems * (BITS / 8), "shmem_collect" #BITS);                     \
    }                                                                                                   \
    void shmem_fcollect##BITS(void *dest, const void *source, size_t nelems, int PE_start, int logPE_stride, \
                              int PE_size, long *pSync)                                                 \
    {                                                                                                   \
        (void)pSync;                                                                                    \
        struct waitio_shmem_team *t = active(PE_start, logPE_stride, PE_size, "shmem_fcollect" #BITS);  \
        fcollect_bytes(t, dest, source, nelems * (BITS / 8), "shmem_fcollect" #BITS);                   \
    }                                                                                                   \
    void shmem_alltoall##BITS(void *dest, const void *source, size_t nelems, int PE_start, int logPE_stride, \
                              int PE_size, long *pSync)                                                 \
    {                                                                                                   \
        (void)pSync;                                                                                    \
        struct waitio_shmem_team *t = active(PE_start, logPE_stride, PE_size, "shmem_alltoall" #BITS);  \
        alltoall_bytes(t, dest, source, nelems * (BITS / 8), "shmem_alltoall" #BITS);                   \
    }                                                                                                   \
    void shmem_alltoalls##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, \
                               int PE_start, int logPE_stride, int PE_size, long *pSync)                \
    {                                                                                                   \
        (void)pSync;                                                                                    \
        struct waitio_shmem_team *t = active(PE_start, logPE_stride, PE_size, "shmem_alltoalls" #BITS); \
        alltoalls_bytes(t, dest, source, dst, sst, nelems, BITS / 8, "shmem_alltoalls" #BITS);          \
    }
DEF_ACTIVE(32)
DEF_ACTIVE(64)

#define DEF_TO_ALL(T, N, OP, CODE, DT)                                                                  \
    void shmem_##N##_##OP##_to_all(T *dest, const T *source, int nreduce, int PE_start, int logPE_stride, \
                                   int PE_size, T *pWrk, long *pSync)                                   \
    {                                                                                                   \
        (void)pWrk;                                                                                     \
        (void)pSync;                                                                                    \
        const char *what = "shmem_" #N "_" #OP "_to_all";                                               \
        struct waitio_shmem_team *t = active(PE_start, logPE_stride, PE_size, what);                    \
        if (nreduce < 0)                                                                                \
            wio_shmem_fatal("%s: nreduce %d", what, nreduce);                                           \
        reduce(t, dest, source, (size_t)nreduce, sizeof(T), DT, CODE, what);                            \
    }
#define DEF_TO_ALL_BIT(T, N)                                                                            \
    DEF_TO_ALL(T, N, and, WAITIO_MPI_BAND, DTYPE(T))                                                    \
    DEF_TO_ALL(T, N, or, WAITIO_MPI_BOR, DTYPE(T)) DEF_TO_ALL(T, N, xor, WAITIO_MPI_BXOR, DTYPE(T))
#define DEF_TO_ALL_ARITH(T, N)                                                                          \
    DEF_TO_ALL(T, N, max, WAITIO_MPI_MAX, DTYPE(T)) DEF_TO_ALL(T, N, min, WAITIO_MPI_MIN, DTYPE(T))    \
    DEF_TO_ALL(T, N, sum, WAITIO_MPI_SUM, DTYPE(T)) DEF_TO_ALL(T, N, prod, WAITIO_MPI_PROD, DTYPE(T))
#define DEF_TO_ALL_COMPLEX(T, N)                                                                        \
    DEF_TO_ALL(T, N, sum, WAITIO_MPI_SUM, CDTYPE(T)) DEF_TO_ALL(T, N, prod, WAITIO_MPI_PROD, CDTYPE(T))
WAITIO_SHMEM_TO_ALL_INT_TYPES(DEF_TO_ALL_BIT)
WAITIO_SHMEM_TO_ALL_INT_TYPES(DEF_TO_ALL_ARITH)
WAITIO_SHMEM_TO_ALL_REAL_TYPES(DEF_TO_ALL_ARITH)
WAITIO_SHMEM_COMPLEX_RED_TYPES(DEF_TO_ALL_COMPLEX)
