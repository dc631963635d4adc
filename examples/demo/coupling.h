/*
 * coupling.h — what the two programs of the coupled demo (sim.c: Open MPI, analysis.c: MPICH)
 * share: the WaitIO universe group, the block partition of the field, the checksummed "piece"
 * message format, the per-step messages between the PB heads, and the final latency/bandwidth
 * measurement between the PB heads. Compiled into each program with that program's mpicc.
 */
#ifndef DEMO_COUPLING_H
#define DEMO_COUPLING_H

#include <stddef.h>
#include <stdint.h>
#include "waitio.h"

/* Message tags: kind in the low 8 bits, the step above them. */
enum { TAG_PIECE = 1, TAG_INFO = 2, TAG_CONTROL = 3, TAG_PING = 4, TAG_PONG = 5 };
#define STEP_TAG(step, kind) (((unsigned long)(step) << 8) | (unsigned long)(kind))

/* Sim head -> analysis head, once per step, before the pieces. */
typedef struct step_info {
    int64_t step, nsteps;
    int64_t n, nsim;        /* global field length and number of simulation ranks */
    uint64_t xor_hash;      /* XOR of the hashes of all pieces of this step */
    double q;               /* heat-source strength used for this step */
} step_info;

/* Analysis head -> sim head, once per step: the statistics and the new source strength. */
typedef struct control {
    int64_t step;
    double min, mean, max;
    double q_new;
} control;

/* This process's view of the coupled instance. */
typedef struct demo_ctx {
    const char *who;        /* "sim" or "analysis", for messages */
    waitio_group_t universe;
    int pb, other_pb;       /* PBIDs */
    int mpi_rank, mpi_size; /* inside this PB (MPI_COMM_WORLD) */
    int other_size;         /* process count of the other PB */
    int pb_sizes[2];        /* process count of each PB */
    int base[2];            /* universe rank of each PB's local rank 0 */
} demo_ctx;

/* Prints "[who rank r] what: <WaitIO error and detail>" and aborts the PB's MPI job. */
void demo_die(const demo_ctx *c, const char *what, int rc);
void demo_fail(const demo_ctx *c, const char *what);

/* waitio_init, checks (2 PBs, PB-local rank/size = MPI's), universe group with order {1,2}. */
void demo_init(demo_ctx *c, const char *who, int timeout_s);
void demo_finalize(demo_ctx *c);

int demo_universe_rank(const demo_ctx *c, int pb, int local_rank);

/* Block partition of n items over `parts`: part i holds [*lo, *hi). */
void block_range(long n, int parts, int i, long *lo, long *hi);

/* 64-bit FNV-1a hash of bytes. */
uint64_t fnv1a64(const void *p, size_t n);

/* A piece: `count` doubles followed by the FNV-1a hash of their bytes. */
size_t piece_bytes(long count);
void piece_pack(char *msg, const double *values, long count);
/* Unpacks into values; returns the hash if it matches the data, else aborts with a message. */
uint64_t piece_unpack_checked(const demo_ctx *c, const char *msg, double *values, long count);

/* Blocking WaitIO helpers over the universe group (abort on any error). */
void demo_send(const demo_ctx *c, int dst, const void *buf, size_t len, unsigned long tag);
void demo_recv(const demo_ctx *c, int src, void *buf, size_t len, unsigned long tag);

/* Ping-pong between the two PB heads; the leader returns the half round trip in seconds
 * (the follower returns 0). The first and last exchange are checked byte by byte. */
double heads_pingpong(const demo_ctx *c, int leader, size_t bytes, int iters);

#endif
