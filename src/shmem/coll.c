/*
 * coll.c — OpenSHMEM collectives on SHMEM_TEAM_WORLD, through WaitIO's collectives on the
 * one-sided world group (waitio_mpi.h: the same algorithms, hierarchical over an MPI adapter
 * where there is one). Sizes beyond INT_MAX elements go in pieces.
 */
#include <limits.h>
#include <stdlib.h>
#include "shmem/shmem_internal.h"

static int world_only(shmem_team_t team, const char *what)
{
    wio_shmem_need_init();
    if (team != SHMEM_TEAM_WORLD) {
        if (team != SHMEM_TEAM_SHARED)
            wio_shmem_fatal("%s: invalid team", what);
        return -1; /* only the world team's collectives are implemented */
    }
    shmem_quiet();
    return 0;
}

int shmem_broadcastmem(shmem_team_t team, void *dest, const void *source, size_t nelems, int PE_root)
{
    if (world_only(team, "shmem_broadcast"))
        return -1;
    if (PE_root < 0 || PE_root >= S.npes)
        wio_shmem_fatal("shmem_broadcast: root %d is outside 0..%d", PE_root, S.npes - 1);
    if (S.me == PE_root && dest != source)
        memmove(dest, source, nelems);
    for (size_t at = 0; at < nelems; at += INT_MAX) {
        size_t n = nelems - at < INT_MAX ? nelems - at : INT_MAX;
        wio_shmem_check(waitio_mpi_bcast((uint8_t *)dest + at, (int)n, WAITIO_MPI_BYTE, PE_root, S.world),
                        "shmem_broadcast");
    }
    return 0;
}

int shmem_fcollectmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
    if (world_only(team, "shmem_fcollect"))
        return -1;
    if (nelems > INT_MAX)
        wio_shmem_fatal("shmem_fcollect: %zu bytes per PE (at most %d)", nelems, INT_MAX);
    wio_shmem_check(waitio_mpi_allgather(source, (int)nelems, WAITIO_MPI_BYTE, dest, (int)nelems, WAITIO_MPI_BYTE,
                                         S.world), "shmem_fcollect");
    return 0;
}

/* Every PE's block, concatenated in PE order; the blocks may differ in size. */
int shmem_collectmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
    if (world_only(team, "shmem_collect"))
        return -1;
    uint64_t mine = nelems, *all = malloc(sizeof *all * (size_t)S.npes);
    int *counts = malloc(sizeof *counts * (size_t)S.npes), *displs = malloc(sizeof *displs * (size_t)S.npes);
    if (!all || !counts || !displs)
        wio_shmem_fatal("shmem_collect: out of memory");
    wio_shmem_check(waitio_mpi_allgather(&mine, 1, WAITIO_MPI_UINT64_T, all, 1, WAITIO_MPI_UINT64_T, S.world),
                    "shmem_collect");
    uint64_t total = 0;
    for (int pe = 0; pe < S.npes; pe++) {
        if (total + all[pe] > INT_MAX)
            wio_shmem_fatal("shmem_collect: more than %d bytes in all", INT_MAX);
        counts[pe] = (int)all[pe];
        displs[pe] = (int)total;
        total += all[pe];
    }
    wio_shmem_check(waitio_mpi_gatherv(source, (int)nelems, WAITIO_MPI_BYTE, dest, counts, displs, WAITIO_MPI_BYTE,
                                       0, S.world), "shmem_collect");
    wio_shmem_check(waitio_mpi_bcast(dest, (int)total, WAITIO_MPI_BYTE, 0, S.world), "shmem_collect");
    free(all);
    free(counts);
    free(displs);
    return 0;
}

int shmem_alltoallmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
    if (world_only(team, "shmem_alltoall"))
        return -1;
    if (nelems > INT_MAX)
        wio_shmem_fatal("shmem_alltoall: %zu bytes per PE pair (at most %d)", nelems, INT_MAX);
    wio_shmem_check(waitio_mpi_alltoall(source, (int)nelems, WAITIO_MPI_BYTE, dest, (int)nelems, WAITIO_MPI_BYTE,
                                        S.world), "shmem_alltoall");
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
    }
WAITIO_SHMEM_RMA_TYPES(DEF_COLL)

/* ---- reductions ----------------------------------------------------------------------------- */

/* The WaitIO datatype of an element: integers by size and signedness, floating point by size. */
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

static int reduce(shmem_team_t team, void *dest, const void *source, size_t nreduce, size_t size, int is_signed,
                  int is_fp, int op, const char *what)
{
    if (world_only(team, what))
        return -1;
    int dt = dtype_of(size, is_signed, is_fp);
    for (size_t at = 0; at < nreduce; at += INT_MAX) {
        size_t n = nreduce - at < INT_MAX ? nreduce - at : INT_MAX;
        const uint8_t *s = (const uint8_t *)source + at * size;
        uint8_t *d = (uint8_t *)dest + at * size;
        wio_shmem_check(waitio_mpi_allreduce(s == d ? WAITIO_MPI_IN_PLACE : s, d, (int)n, dt, op, S.world), what);
    }
    return 0;
}

#define IS_SIGNED(T) ((T)-1 < (T)1) /* not "< 0": -Wtype-limits */
#define IS_FP(T) ((T)0.5 != (T)0)
#define DEF_RED(T, N, OP, CODE)                                                                         \
    int shmem_##N##_##OP##_reduce(shmem_team_t team, T *dest, const T *source, size_t nreduce)          \
    {                                                                                                   \
        return reduce(team, dest, source, nreduce, sizeof(T), IS_SIGNED(T), IS_FP(T), CODE,             \
                      "shmem_" #OP "_reduce");                                                          \
    }
#define DEF_BITWISE_RED(T, N)                                                                           \
    DEF_RED(T, N, and, WAITIO_MPI_BAND) DEF_RED(T, N, or, WAITIO_MPI_BOR) DEF_RED(T, N, xor, WAITIO_MPI_BXOR)
#define DEF_ARITH_RED(T, N)                                                                             \
    DEF_RED(T, N, max, WAITIO_MPI_MAX) DEF_RED(T, N, min, WAITIO_MPI_MIN)                               \
    DEF_RED(T, N, sum, WAITIO_MPI_SUM) DEF_RED(T, N, prod, WAITIO_MPI_PROD)
WAITIO_SHMEM_BITWISE_RED_TYPES(DEF_BITWISE_RED)
WAITIO_SHMEM_ARITH_RED_TYPES(DEF_ARITH_RED)
