/*
 * waitio_adapter.h — how a per-MPI adapter plugs the PB's own MPI into WaitIO (SPEC §9).
 *
 * The core library depends on no MPI. An adapter, compiled against one MPI implementation
 * (libwaitio_mpi_openmpi, libwaitio_mpi_mpich, ...), registers these operations on the PB's
 * communicator. With them WaitIO runs collectives on the universe hierarchically (inside a PB
 * with MPI, across PBs between the PB heads only) and starts up with one registration per PB.
 * Applications do not call this directly: they call waitio_mpi_adapter_init(MPI_Comm) from the
 * adapter (waitio_adapter_mpi.h) after MPI_Init and before waitio_init.
 *
 * Not a stable ABI: the struct grows at its end between versions, so an adapter library must
 * come from the same WaitIO build as libwaitio (both are installed together). Every process
 * publishes which optional operations its adapter has (docs/protocol.md, table entry flags),
 * so a path is taken only when every PB's adapter can take it.
 */
#ifndef WAITIO_ADAPTER_H
#define WAITIO_ADAPTER_H

#include <stddef.h>
#include "waitio.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct waitio_adapter_ops {
    const char *name;          /* e.g. "Open MPI 4.1.4" */
    int rank, size;            /* this process in the PB's communicator */
    void *ctx;
    /* All return 0 on success. Datatypes and ops are WAITIO_MPI_* values; roots are PB-local. */
    int (*barrier)(void *ctx);
    int (*bcast)(void *ctx, void *buf, size_t bytes, int root);
    /* The same, for broadcasts that may wait long (start-up): waiting must not burn a core. */
    int (*bcast_idle)(void *ctx, void *buf, size_t bytes, int root);
    int (*reduce)(void *ctx, const void *sbuf, void *rbuf, size_t count, int dtype, int op, int root);
    int (*gather_bytes)(void *ctx, const void *sbuf, size_t bytes, void *rbuf, int root);

    /* One-job MPMD launch (`mpiexec -np 2 ./A : -np 1 ./B`, no instance variables; see
     * docs/mpi-layer.md): the MPI job is the whole instance, each of its applications a PB.
     * Set only when the probe was told there are no instance variables; job_npb = 0 otherwise.
     * rank/size/ctx above then describe the application's own sub-communicator. */
    int job_npb;               /* applications in MPI_COMM_WORLD */
    int job_pbid;              /* this process's application (MPI_APPNUM) */
    int job_rank, job_size;    /* this process in MPI_COMM_WORLD */
    /* Over MPI_COMM_WORLD; both wait without burning a core and give up after `timeout`
     * seconds (return -1) when some process of the job never joins. */
    int (*job_bcast)(void *ctx, void *buf, size_t bytes, int root, double timeout);
    int (*job_allgather)(void *ctx, const void *sbuf, size_t bytes, void *rbuf, double timeout);
    /* waitio_finalize calls it last: the adapter finalizes MPI if it initialised it. May be NULL. */
    void (*finalize)(void *ctx);
    /* May be NULL (then hierarchical allreduce reduces to the head and broadcasts): the result
     * must be the same bits on every rank, as MPI_Allreduce gives with the predefined ops. */
    int (*allreduce)(void *ctx, const void *sbuf, void *rbuf, size_t count, int dtype, int op);
    /* May be NULL: a non-blocking broadcast (MPI_Ibcast), so that WaitIO traffic overlaps the
     * PB's own collective. *req is the adapter's handle, given back to test (which sets *done
     * and frees it once the broadcast is over) or wait (which frees it). MPI progresses it only
     * inside MPI calls: WaitIO calls test while it waits. */
    int (*ibcast)(void *ctx, void *buf, size_t bytes, int root, void **req);
    int (*test)(void *ctx, void *req, int *done);
    int (*wait)(void *ctx, void *req);
    /* May be NULL (then collectives on the conversion layer's split, dup and create_group
     * communicators stay flat): communicators of part of the PB. sub_create makes one of the
     * PB-local ranks ranks[0..n) (sub-rank i = ranks[i]), called by exactly those processes with
     * the same `tag` (MPI_Comm_create_group); *sub is the adapter's handle, given back to the
     * collectives below and to sub_free (called by all its members). Roots are sub-ranks. */
    int (*sub_create)(void *ctx, const int *ranks, int n, int tag, void **sub);
    void (*sub_free)(void *ctx, void *sub);
    int (*sub_barrier)(void *ctx, void *sub);
    int (*sub_bcast)(void *ctx, void *sub, void *buf, size_t bytes, int root);
    int (*sub_reduce)(void *ctx, void *sub, const void *sbuf, void *rbuf, size_t count, int dtype,
                      int op, int root);
    /* Both may be NULL (then the segmented allreduce across PBs is not taken; every process
     * learns whether all adapters have them at the first allreduce that could take it).
     * reduce_scatter_block: MPI_Reduce_scatter_block over the PB, `count` elements per rank
     * (sbuf holds size * count, rank i gets block i in rbuf); allgather: MPI_Allgather of
     * `bytes` per rank. sbuf and rbuf never overlap; count * type size and bytes <= 1 GiB. */
    int (*reduce_scatter_block)(void *ctx, const void *sbuf, void *rbuf, size_t count, int dtype, int op);
    int (*allgather)(void *ctx, const void *sbuf, void *rbuf, size_t bytes);
} waitio_adapter_ops;

/* Registers (or with NULL, removes) the adapter; the ops must outlive WaitIO's use of them. */
WAITIO_API int waitio_adapter_register(const waitio_adapter_ops *ops);

/* An adapter library linked into the program installs a probe from a constructor; waitio_init
 * calls it, and the probe registers the adapter when MPI is initialised (MPI_COMM_WORLD), so
 * linking the adapter is enough: programs need no extra call.
 * flags: WAITIO_PROBE_JOB when none of the instance variables is set: the probe may then
 * initialise MPI itself (under an MPI launcher) and reports the job's layout (job_* above),
 * waiting at most `timeout` seconds for the job's other processes. Returns 0, or a WAITIO_ERR_*
 * code with `why` explaining (e.g. the adapter was built for another MPI than the program's):
 * waitio_init then fails with that code and text. */
#define WAITIO_PROBE_JOB 1
typedef int (*waitio_adapter_probe_fn)(int flags, double timeout, char *why, size_t cap);
WAITIO_API void waitio_adapter_set_probe(waitio_adapter_probe_fn probe);

/* For the layers built over WaitIO (the MPI adapters, OpenSHMEM): the value of one of WaitIO's
 * environment variables, read through the library's registry of settings (src/core/settings.c,
 * docs/tuning.md "Settings"), as getenv gives it: NULL when unset. */
WAITIO_API const char *waitio_adapter_getenv(const char *name);

#ifdef __cplusplus
}
#endif
#endif
