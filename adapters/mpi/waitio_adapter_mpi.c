/*
 * waitio_adapter_mpi.c — the MPI adapter, compiled once per MPI implementation (SPEC §9). It
 * gives WaitIO the PB's own MPI for what MPI does best inside a PB: the intra-PB steps of the
 * hierarchical collectives, and the start-up in which the PB's rank 0 registers the whole PB and
 * broadcasts the address table. The core library never links MPI; this file does.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "waitio_adapter_mpi.h"
#include "waitio_mpi.h"

static MPI_Comm pb_comm = MPI_COMM_NULL;
static waitio_adapter_ops ops;
static char name[MPI_MAX_LIBRARY_VERSION_STRING + 32];

static MPI_Datatype to_mpi_type(int dtype)
{
    switch (dtype) {
    case WAITIO_MPI_CHAR: return MPI_CHAR;
    case WAITIO_MPI_SIGNED_CHAR: return MPI_SIGNED_CHAR;
    case WAITIO_MPI_UNSIGNED_CHAR: return MPI_UNSIGNED_CHAR;
    case WAITIO_MPI_BYTE: return MPI_BYTE;
    case WAITIO_MPI_SHORT: return MPI_SHORT;
    case WAITIO_MPI_UNSIGNED_SHORT: return MPI_UNSIGNED_SHORT;
    case WAITIO_MPI_INT: return MPI_INT;
    case WAITIO_MPI_UNSIGNED: return MPI_UNSIGNED;
    case WAITIO_MPI_LONG: return MPI_LONG;
    case WAITIO_MPI_UNSIGNED_LONG: return MPI_UNSIGNED_LONG;
    case WAITIO_MPI_LONG_LONG: return MPI_LONG_LONG;
    case WAITIO_MPI_UNSIGNED_LONG_LONG: return MPI_UNSIGNED_LONG_LONG;
    case WAITIO_MPI_FLOAT: return MPI_FLOAT;
    case WAITIO_MPI_DOUBLE: return MPI_DOUBLE;
    case WAITIO_MPI_LONG_DOUBLE: return MPI_LONG_DOUBLE;
    case WAITIO_MPI_INT8_T: return MPI_INT8_T;
    case WAITIO_MPI_INT16_T: return MPI_INT16_T;
    case WAITIO_MPI_INT32_T: return MPI_INT32_T;
    case WAITIO_MPI_INT64_T: return MPI_INT64_T;
    case WAITIO_MPI_UINT8_T: return MPI_UINT8_T;
    case WAITIO_MPI_UINT16_T: return MPI_UINT16_T;
    case WAITIO_MPI_UINT32_T: return MPI_UINT32_T;
    case WAITIO_MPI_UINT64_T: return MPI_UINT64_T;
    case WAITIO_MPI_C_BOOL: return MPI_C_BOOL;
    case WAITIO_MPI_INTEGER: case WAITIO_MPI_INTEGER4: return MPI_INT32_T;
    case WAITIO_MPI_LOGICAL: return MPI_INT32_T; /* combined as integers, see to_mpi_op */
    case WAITIO_MPI_REAL: case WAITIO_MPI_REAL4: return MPI_FLOAT;
    case WAITIO_MPI_DOUBLE_PRECISION: case WAITIO_MPI_REAL8: return MPI_DOUBLE;
    case WAITIO_MPI_CHARACTER: return MPI_CHAR;
    case WAITIO_MPI_COMPLEX: return MPI_C_FLOAT_COMPLEX;
    case WAITIO_MPI_DOUBLE_COMPLEX: return MPI_C_DOUBLE_COMPLEX;
    case WAITIO_MPI_INTEGER8: return MPI_INT64_T;
    default: return MPI_DATATYPE_NULL;
    }
}

static MPI_Op to_mpi_op(int op)
{
    switch (op) {
    case WAITIO_MPI_SUM: return MPI_SUM;
    case WAITIO_MPI_PROD: return MPI_PROD;
    case WAITIO_MPI_MAX: return MPI_MAX;
    case WAITIO_MPI_MIN: return MPI_MIN;
    case WAITIO_MPI_LAND: return MPI_LAND;
    case WAITIO_MPI_LOR: return MPI_LOR;
    case WAITIO_MPI_LXOR: return MPI_LXOR;
    case WAITIO_MPI_BAND: return MPI_BAND;
    case WAITIO_MPI_BOR: return MPI_BOR;
    case WAITIO_MPI_BXOR: return MPI_BXOR;
    default: return MPI_OP_NULL;
    }
}

/* MPI counts are ints: large buffers go in pieces of at most 1 GiB. */
#define PIECE ((size_t)1 << 30)

static int a_barrier(void *ctx)
{
    (void)ctx;
    return MPI_Barrier(pb_comm);
}

static int a_bcast(void *ctx, void *buf, size_t bytes, int root)
{
    (void)ctx;
    for (size_t off = 0; off < bytes || off == 0; off += PIECE) {
        size_t n = bytes - off < PIECE ? bytes - off : PIECE;
        int rc = MPI_Bcast((char *)buf + off, (int)n, MPI_BYTE, root, pb_comm);
        if (rc != MPI_SUCCESS || bytes == 0)
            return rc;
    }
    return 0;
}

/* Start-up waits for other jobs, possibly minutes: test the broadcast with growing sleeps
 * instead of letting MPI spin on every core of the PB. */
static int a_bcast_idle(void *ctx, void *buf, size_t bytes, int root)
{
    (void)ctx;
    if (bytes > (size_t)1 << 30)
        return a_bcast(ctx, buf, bytes, root);
    MPI_Request req;
    int rc = MPI_Ibcast(buf, (int)bytes, MPI_BYTE, root, pb_comm, &req);
    if (rc != MPI_SUCCESS)
        return rc;
    long pause_ns = 1000;
    for (;;) {
        int done = 0;
        if ((rc = MPI_Test(&req, &done, MPI_STATUS_IGNORE)) != MPI_SUCCESS || done)
            return rc;
        struct timespec ts = {0, pause_ns};
        nanosleep(&ts, NULL);
        if (pause_ns < 2000000)
            pause_ns *= 2;
    }
}

static int a_reduce(void *ctx, const void *sbuf, void *rbuf, size_t count, int dtype, int op, int root)
{
    (void)ctx;
    MPI_Datatype t = to_mpi_type(dtype);
    MPI_Op o = to_mpi_op(op);
    if (t == MPI_DATATYPE_NULL || o == MPI_OP_NULL)
        return MPI_ERR_TYPE;
    int size = 0;
    waitio_mpi_type_size(dtype, &size);
    size_t per = PIECE / (size_t)(size ? size : 1);
    /* every rank passes a real receive buffer, so the result is defined on all of them */
    for (size_t off = 0; off < count || off == 0; off += per) {
        size_t n = count - off < per ? count - off : per;
        int rc = MPI_Reduce((const char *)sbuf + off * (size_t)size, (char *)rbuf + off * (size_t)size,
                            (int)n, t, o, root, pb_comm);
        if (rc != MPI_SUCCESS || count == 0)
            return rc;
    }
    return 0;
}

static int a_gather_bytes(void *ctx, const void *sbuf, size_t bytes, void *rbuf, int root)
{
    (void)ctx;
    return MPI_Gather(sbuf, (int)bytes, MPI_BYTE, rbuf, (int)bytes, MPI_BYTE, root, pb_comm);
}

int waitio_mpi_adapter_init(MPI_Comm comm)
{
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized)
        return WAITIO_ERR_STATE;
    if (pb_comm != MPI_COMM_NULL && pb_comm != MPI_COMM_WORLD)
        MPI_Comm_free(&pb_comm);
    if (comm == MPI_COMM_WORLD)
        pb_comm = MPI_COMM_WORLD;
    else if (MPI_Comm_dup(comm, &pb_comm) != MPI_SUCCESS)
        return WAITIO_ERR_SYS;
    char version[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0;
    MPI_Get_library_version(version, &len);
    version[strcspn(version, "\n,")] = '\0';
    for (char *c = version; *c; c++)
        if (*c == '\t')
            *c = ' ';
    snprintf(name, sizeof name, "%s", version);
    memset(&ops, 0, sizeof ops);
    ops.name = name;
    MPI_Comm_rank(pb_comm, &ops.rank);
    MPI_Comm_size(pb_comm, &ops.size);
    ops.barrier = a_barrier;
    ops.bcast = a_bcast;
    ops.bcast_idle = a_bcast_idle;
    ops.reduce = a_reduce;
    ops.gather_bytes = a_gather_bytes;
    return waitio_adapter_register(&ops);
}

const char *waitio_mpi_adapter_name(void) { return name; }

/* Called by waitio_init: adopt MPI_COMM_WORLD if the program initialised MPI and did not pick a
 * communicator itself. */
static void adapter_probe(void)
{
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (initialized && !finalized && pb_comm == MPI_COMM_NULL)
        waitio_mpi_adapter_init(MPI_COMM_WORLD);
}

__attribute__((constructor)) static void adapter_install_probe(void)
{
    waitio_adapter_set_probe(adapter_probe);
}
