/*
 * waitio_adapter_mpi.c — the MPI adapter, compiled once per MPI implementation (SPEC §9). It
 * gives WaitIO the PB's own MPI for what MPI does best inside a PB: the intra-PB steps of the
 * hierarchical collectives, and the start-up in which the PB's rank 0 registers the whole PB and
 * broadcasts the address table. In a one-job MPMD launch (`mpiexec -np 2 ./A : -np 1 ./B`, no
 * instance variables) it also describes the job — each application (MPI_APPNUM) a PB, its PB
 * communicator the application's part of MPI_COMM_WORLD — and lends the core two collectives
 * over the whole job for the key and the address table (src/boot/boot_job.c). It refuses to run
 * under another MPI than the one it was compiled for. The core library never links MPI; this
 * file does. It calls PMPI_ only: in an MPMD job the program's MPI_COMM_WORLD is its own part
 * of the job (mpi_world.c), the adapter's is the real one.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "waitio_adapter_mpi.h"
#include "waitio_mpi.h"
#include "mpi_world.h"

static MPI_Comm pb_comm = MPI_COMM_NULL;  /* the PB's processes */
static MPI_Comm job_comm = MPI_COMM_NULL; /* one-job launch: a private copy of MPI_COMM_WORLD */
static int own_mpi;                       /* we called MPI_Init, so we call MPI_Finalize */
static waitio_adapter_ops ops;
static char name[MPI_MAX_LIBRARY_VERSION_STRING + 32];

/* The MPI this file was compiled against, checked against the library the program runs. */
#define STR2(x) #x
#define STR(x) STR2(x)
#if defined(OPEN_MPI)
#define BUILT_FAMILY "Open MPI"
#define BUILT_FOR "Open MPI " STR(OMPI_MAJOR_VERSION) "." STR(OMPI_MINOR_VERSION) "." STR(OMPI_RELEASE_VERSION)
#elif defined(MPICH_VERSION)
#define BUILT_FAMILY "MPICH"
#define BUILT_FOR "MPICH " MPICH_VERSION
#else
#define BUILT_FAMILY ""
#define BUILT_FOR "an unidentified MPI"
#endif

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
    return PMPI_Barrier(pb_comm);
}

static int a_bcast(void *ctx, void *buf, size_t bytes, int root)
{
    (void)ctx;
    for (size_t off = 0; off < bytes || off == 0; off += PIECE) {
        size_t n = bytes - off < PIECE ? bytes - off : PIECE;
        int rc = PMPI_Bcast((char *)buf + off, (int)n, MPI_BYTE, root, pb_comm);
        if (rc != MPI_SUCCESS || bytes == 0)
            return rc;
    }
    return 0;
}

static int a_bcast_idle(void *ctx, void *buf, size_t bytes, int root)
{
    (void)ctx;
    if (bytes > (size_t)1 << 30)
        return a_bcast(ctx, buf, bytes, root);
    MPI_Request req;
    int rc = PMPI_Ibcast(buf, (int)bytes, MPI_BYTE, root, pb_comm, &req);
    return rc != MPI_SUCCESS ? rc : wio_wait_idle(&req, 0);
}

/* A reduction in pieces of at most PIECE bytes (MPI counts are ints): MPI_Reduce to root, or
 * MPI_Allreduce when root < 0. Every rank passes a real receive buffer, so the result is
 * defined on all of them. The same buffer on both sides (WaitIO's in-place collectives) goes
 * to MPI as MPI_IN_PLACE: MPI forbids aliased send and receive buffers. */
static int reduce_pieces(const void *sbuf, void *rbuf, size_t count, int dtype, int op, int root)
{
    MPI_Datatype t = to_mpi_type(dtype);
    MPI_Op o = to_mpi_op(op);
    if (t == MPI_DATATYPE_NULL || o == MPI_OP_NULL)
        return MPI_ERR_TYPE;
    int size = 0;
    waitio_mpi_type_size(dtype, &size);
    size_t per = PIECE / (size_t)(size ? size : 1);
    int me = 0;
    if (root >= 0)
        PMPI_Comm_rank(pb_comm, &me);
    int in_place = sbuf == rbuf && (root < 0 || me == root);
    for (size_t off = 0; off < count || off == 0; off += per) {
        size_t n = count - off < per ? count - off : per;
        const char *s = in_place ? MPI_IN_PLACE : (const char *)sbuf + off * (size_t)size;
        char *r = (char *)rbuf + off * (size_t)size;
        int rc = root >= 0 ? PMPI_Reduce(s, r, (int)n, t, o, root, pb_comm)
                           : PMPI_Allreduce(s, r, (int)n, t, o, pb_comm);
        if (rc != MPI_SUCCESS || count == 0)
            return rc;
    }
    return 0;
}

static int a_reduce(void *ctx, const void *sbuf, void *rbuf, size_t count, int dtype, int op, int root)
{
    (void)ctx;
    return reduce_pieces(sbuf, rbuf, count, dtype, op, root);
}

static int a_allreduce(void *ctx, const void *sbuf, void *rbuf, size_t count, int dtype, int op)
{
    (void)ctx;
    return reduce_pieces(sbuf, rbuf, count, dtype, op, -1);
}

static int a_ibcast(void *ctx, void *buf, size_t bytes, int root, void **req)
{
    (void)ctx;
    if (bytes > PIECE)
        return MPI_ERR_COUNT;
    MPI_Request *r = malloc(sizeof *r);
    if (!r)
        return MPI_ERR_NO_MEM;
    int rc = PMPI_Ibcast(buf, (int)bytes, MPI_BYTE, root, pb_comm, r);
    if (rc != MPI_SUCCESS) {
        free(r);
        return rc;
    }
    *req = r;
    return 0;
}

static int a_test(void *ctx, void *req, int *done)
{
    (void)ctx;
    int rc = PMPI_Test(req, done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS || *done)
        free(req);
    return rc;
}

static int a_wait(void *ctx, void *req)
{
    (void)ctx;
    int rc = PMPI_Wait(req, MPI_STATUS_IGNORE);
    free(req);
    return rc;
}

/* ---- the segmented allreduce's steps inside the PB ---- */

/* MPI_Reduce_scatter_block on the PB: `count` elements of each rank's block (an int count; the
 * caller keeps blocks within 1 GiB). */
static int a_reduce_scatter_block(void *ctx, const void *sbuf, void *rbuf, size_t count, int dtype, int op)
{
    (void)ctx;
    MPI_Datatype t = to_mpi_type(dtype);
    MPI_Op o = to_mpi_op(op);
    if (t == MPI_DATATYPE_NULL || o == MPI_OP_NULL)
        return MPI_ERR_TYPE;
    if (count > (size_t)INT_MAX)
        return MPI_ERR_COUNT;
    return PMPI_Reduce_scatter_block(sbuf, rbuf, (int)count, t, o, pb_comm);
}

/* MPI_Allgather on the PB of `bytes` per rank (within 1 GiB, the caller's bound). */
static int a_allgather(void *ctx, const void *sbuf, void *rbuf, size_t bytes)
{
    (void)ctx;
    if (bytes > PIECE)
        return MPI_ERR_COUNT;
    return PMPI_Allgather(sbuf, (int)bytes, MPI_BYTE, rbuf, (int)bytes, MPI_BYTE, pb_comm);
}

/* ---- communicators of part of the PB (the conversion layer's split communicators) ---- */

static int a_sub_create(void *ctx, const int *ranks, int n, int tag, void **sub)
{
    (void)ctx;
    MPI_Group all, part;
    MPI_Comm *c = malloc(sizeof *c);
    if (!c)
        return MPI_ERR_NO_MEM;
    int rc = MPI_Comm_group(pb_comm, &all);
    if (rc == MPI_SUCCESS) {
        rc = MPI_Group_incl(all, n, ranks, &part);
        MPI_Group_free(&all);
    }
    if (rc == MPI_SUCCESS) {
        rc = MPI_Comm_create_group(pb_comm, part, tag, c);
        MPI_Group_free(&part);
    }
    if (rc != MPI_SUCCESS) {
        free(c);
        return rc;
    }
    *sub = c;
    return 0;
}

static void a_sub_free(void *ctx, void *sub)
{
    (void)ctx;
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized)
        MPI_Comm_free(sub);
    free(sub);
}

static int a_sub_barrier(void *ctx, void *sub)
{
    (void)ctx;
    return MPI_Barrier(*(MPI_Comm *)sub);
}

static int a_sub_bcast(void *ctx, void *sub, void *buf, size_t bytes, int root)
{
    (void)ctx;
    for (size_t off = 0; off < bytes || off == 0; off += PIECE) {
        size_t n = bytes - off < PIECE ? bytes - off : PIECE;
        int rc = MPI_Bcast((char *)buf + off, (int)n, MPI_BYTE, root, *(MPI_Comm *)sub);
        if (rc != MPI_SUCCESS || bytes == 0)
            return rc;
    }
    return 0;
}

/* MPI_Reduce in pieces of at most PIECE bytes; the same buffer on both sides goes as
 * MPI_IN_PLACE at the root (MPI forbids aliased buffers). */
static int a_sub_reduce(void *ctx, void *sub, const void *sbuf, void *rbuf, size_t count,
                        int dtype, int op, int root)
{
    (void)ctx;
    MPI_Comm comm = *(MPI_Comm *)sub;
    MPI_Datatype t = to_mpi_type(dtype);
    MPI_Op o = to_mpi_op(op);
    int size = 0, me = 0;
    if (t == MPI_DATATYPE_NULL || o == MPI_OP_NULL)
        return MPI_ERR_TYPE;
    waitio_mpi_type_size(dtype, &size);
    MPI_Comm_rank(comm, &me);
    size_t per = PIECE / (size_t)(size ? size : 1);
    int in_place = sbuf == rbuf && me == root;
    for (size_t off = 0; off < count || off == 0; off += per) {
        size_t n = count - off < per ? count - off : per;
        const char *s = in_place ? MPI_IN_PLACE : (const char *)sbuf + off * (size_t)size;
        int rc = MPI_Reduce(s, (char *)rbuf + off * (size_t)size, (int)n, t, o, root, comm);
        if (rc != MPI_SUCCESS || count == 0)
            return rc;
    }
    return 0;
}

static int a_gather_bytes(void *ctx, const void *sbuf, size_t bytes, void *rbuf, int root)
{
    (void)ctx;
    return PMPI_Gather(sbuf, (int)bytes, MPI_BYTE, rbuf, (int)bytes, MPI_BYTE, root, pb_comm);
}

static int a_job_bcast(void *ctx, void *buf, size_t bytes, int root, double timeout)
{
    (void)ctx;
    MPI_Request req;
    if (bytes > (size_t)1 << 30)
        return MPI_ERR_COUNT;
    int rc = PMPI_Ibcast(buf, (int)bytes, MPI_BYTE, root, job_comm, &req);
    return rc != MPI_SUCCESS ? rc : wio_wait_idle(&req, timeout);
}

static int a_job_allgather(void *ctx, const void *sbuf, size_t bytes, void *rbuf, double timeout)
{
    (void)ctx;
    MPI_Request req;
    if (bytes > (size_t)1 << 20)
        return MPI_ERR_COUNT;
    int rc = PMPI_Iallgather(sbuf, (int)bytes, MPI_BYTE, rbuf, (int)bytes, MPI_BYTE, job_comm, &req);
    return rc != MPI_SUCCESS ? rc : wio_wait_idle(&req, timeout);
}

static void free_comms(void)
{
    if (pb_comm != MPI_COMM_NULL && pb_comm != MPI_COMM_WORLD)
        PMPI_Comm_free(&pb_comm);
    if (job_comm != MPI_COMM_NULL)
        PMPI_Comm_free(&job_comm);
    pb_comm = job_comm = MPI_COMM_NULL;
}

/* waitio_finalize: MPI initialised by us is finalized by us, and the adapter leaves with it. */
static void a_finalize(void *ctx)
{
    (void)ctx;
    if (!own_mpi)
        return;
    int finalized = 0;
    PMPI_Finalized(&finalized);
    if (!finalized) {
        free_comms();
        PMPI_Finalize();
    }
    own_mpi = 0;
    pb_comm = job_comm = MPI_COMM_NULL;
    waitio_adapter_register(NULL);
}

/* Registers comm (owned from now on) as the PB's communicator. */
static int adopt(MPI_Comm comm)
{
    pb_comm = comm;
    char version[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0;
    PMPI_Get_library_version(version, &len);
    version[strcspn(version, "\n,")] = '\0';
    for (char *c = version; *c; c++)
        if (*c == '\t')
            *c = ' ';
    snprintf(name, sizeof name, "%s", version);
    memset(&ops, 0, sizeof ops);
    ops.name = name;
    PMPI_Comm_rank(pb_comm, &ops.rank);
    PMPI_Comm_size(pb_comm, &ops.size);
    ops.barrier = a_barrier;
    ops.bcast = a_bcast;
    ops.bcast_idle = a_bcast_idle;
    ops.reduce = a_reduce;
    ops.allreduce = a_allreduce;
    ops.ibcast = a_ibcast;
    ops.test = a_test;
    ops.wait = a_wait;
    ops.gather_bytes = a_gather_bytes;
    ops.finalize = a_finalize;
    ops.sub_create = a_sub_create;
    ops.sub_free = a_sub_free;
    ops.sub_barrier = a_sub_barrier;
    ops.sub_bcast = a_sub_bcast;
    ops.sub_reduce = a_sub_reduce;
    ops.reduce_scatter_block = a_reduce_scatter_block;
    ops.allgather = a_allgather;
    return 0;
}

int waitio_mpi_adapter_init(MPI_Comm comm)
{
    int initialized = 0;
    PMPI_Initialized(&initialized);
    if (!initialized)
        return WAITIO_ERR_STATE;
    free_comms();
    WIO_WORLD_C(comm); /* the program's world, in a one-job MPMD launch */
    MPI_Comm mine = MPI_COMM_WORLD;
    if (comm != MPI_COMM_WORLD && PMPI_Comm_dup(comm, &mine) != MPI_SUCCESS)
        return WAITIO_ERR_SYS;
    adopt(mine);
    return waitio_adapter_register(&ops);
}

const char *waitio_mpi_adapter_name(void) { return name; }

/* "Open MPI", "MPICH" (and the MPIs that share its ABI), or NULL when not recognised. */
static const char *family_of(const char *version)
{
    if (strstr(version, "Open MPI"))
        return "Open MPI";
    if (strstr(version, "MPICH") || strstr(version, "Intel(R) MPI") || strstr(version, "MVAPICH"))
        return "MPICH";
    return NULL;
}

/* An adapter compiled for one MPI and run with another dies at its first MPI handle (different
 * ABIs: MPI_COMM_WORLD is a pointer in Open MPI, an int in MPICH). MPI_Get_library_version
 * takes no handle and may be called before MPI_Init: compare the families, and Open MPI's
 * major version. Also checked at load time (mpi_world.c): the MPMD world wrappers stand
 * between the program and its MPI from the first call. */
int wio_check_library(char *why, size_t cap)
{
    /* the running library may be another MPI, with a larger MPI_MAX_LIBRARY_VERSION_STRING than
     * our header's (Open MPI: 256, MPICH: 8192): leave room for any */
    static char version[65536];
    int len = 0;
    PMPI_Get_library_version(version, &len);
    version[strcspn(version, "\n,")] = '\0';
    for (char *c = version; *c; c++)
        if (*c == '\t')
            *c = ' ';
    const char *running = family_of(version);
    int mismatch = running && BUILT_FAMILY[0] && strcmp(running, BUILT_FAMILY) != 0;
#if defined(OPEN_MPI)
    int major = 0;
    const char *v = strstr(version, "Open MPI v");
    if (!mismatch && v && sscanf(v, "Open MPI v%d", &major) == 1 && major != OMPI_MAJOR_VERSION)
        mismatch = 1;
#endif
    if (!mismatch)
        return 0;
    Dl_info self;
    const char *file = dladdr((void *)wio_check_library, &self) && self.dli_fname ? self.dli_fname : "adapter";
    const char *base = strrchr(file, '/');
    snprintf(why, cap, "the WaitIO MPI adapter %s was built for %s, but this program runs %s: "
             "link the adapter built for the program's MPI instead", base ? base + 1 : file,
             BUILT_FOR, version);
    return WAITIO_ERR_ENV;
}

/* Started by an MPI launcher: its per-process variables (Open MPI, Hydra/PMI, PMIx). */
static int under_mpi_launcher(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (getenv(vars[i]))
            return 1;
    return 0;
}

/* One-job launch: every application of MPI_COMM_WORLD is a PB (no MPI_APPNUM: one PB). */
static int job_init(double timeout, char *why, size_t cap)
{
    int *appnum = NULL, flag = 0, wrank = 0, wsize = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    PMPI_Comm_size(MPI_COMM_WORLD, &wsize);
    PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
    int app = flag && appnum && *appnum >= 0 ? *appnum : 0, napps = 0, apps = app + 1;
    /* the first collective of the job's start-up: wait idle, and not forever */
    MPI_Request req;
    int rc = PMPI_Iallreduce(&apps, &napps, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &req);
    if (rc == MPI_SUCCESS && (rc = wio_wait_idle(&req, timeout)) == -1) {
        snprintf(why, cap, "start-up timed out after %g s: not every process of the MPI job (%d "
                 "processes) called waitio_init (in a one-job launch every application of the "
                 "mpiexec command line must be a WaitIO program)", timeout, wsize);
        return WAITIO_ERR_TIMEOUT;
    }
    MPI_Comm app_comm = MPI_COMM_NULL;
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_split(MPI_COMM_WORLD, app, wrank, &app_comm);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_dup(MPI_COMM_WORLD, &job_comm);
    if (rc != MPI_SUCCESS) {
        snprintf(why, cap, "MPI adapter: splitting MPI_COMM_WORLD by application failed (MPI error %d)", rc);
        return WAITIO_ERR_SYS;
    }
    adopt(app_comm);
    ops.job_npb = napps;
    ops.job_pbid = app;
    ops.job_rank = wrank;
    ops.job_size = wsize;
    ops.job_bcast = a_job_bcast;
    ops.job_allgather = a_job_allgather;
    return waitio_adapter_register(&ops);
}

/* Called by waitio_init. With instance variables: adopt MPI_COMM_WORLD if the program initialised
 * MPI and did not pick a communicator itself. Without: the one-job launch, initialising MPI
 * ourselves when an MPI launcher started us and the program did not. */
static int adapter_probe(int flags, double timeout, char *why, size_t cap)
{
    int rc = wio_check_library(why, cap);
    if (rc)
        return rc;
    int initialized = 0, finalized = 0;
    PMPI_Initialized(&initialized);
    PMPI_Finalized(&finalized);
    if (finalized || pb_comm != MPI_COMM_NULL)
        return 0;
    if (!initialized) {
        if (!(flags & WAITIO_PROBE_JOB) || !under_mpi_launcher())
            return 0;
        if ((rc = PMPI_Init(NULL, NULL)) != MPI_SUCCESS) {
            snprintf(why, cap, "MPI adapter: MPI_Init failed (MPI error %d)", rc);
            return WAITIO_ERR_SYS;
        }
        own_mpi = 1;
    }
    wio_world_start(); /* MPI initialised here, or by a program that reached MPI before the
                        * adapter's MPI_Init (Python): the program's world first */
    if (flags & WAITIO_PROBE_JOB)
        return job_init(timeout, why, cap);
    return waitio_mpi_adapter_init(MPI_COMM_WORLD);
}

__attribute__((constructor)) static void adapter_install_probe(void)
{
    waitio_adapter_set_probe(adapter_probe);
}
