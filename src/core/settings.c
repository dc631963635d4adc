/*
 * settings.c — the registry of WaitIO's environment variables: every WAITIO_* variable the
 * library and its tools read is in the table below, with its type, default, allowed values,
 * subsystem and a one-line description (docs/tuning.md, "Settings"; `waitio-info --all` prints
 * it, tests/scripts/settings_registry.sh checks the docs' tables against it). Every read of a
 * WAITIO_* variable goes through wio_env here, so a name missing from the table is a bug caught
 * in Debug builds; at waitio_init, WAITIO_* names in the environment that the table does not
 * know are reported with the closest known name (a misspelled variable is otherwise silently
 * ignored). The launcher tools (waitiorun, waitio-serv), which do not link the library, compile
 * this file with WIO_SETTINGS_STANDALONE: the table and wio_env alone; the layers that see only
 * the library's exported symbols (OpenSHMEM, the MPI adapters) read through
 * waitio_adapter_getenv (waitio_adapter.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "core/settings.h"
#include "core/frame.h"
#include "transport/shm_ring.h"
#ifndef WIO_SETTINGS_STANDALONE
#include "core/common.h"
#include "transport/transport.h"
#include "waitio_adapter.h"
#endif

#define KiB 1024.0
#define MiB (1024.0 * 1024.0)
#define GiB (1024.0 * 1024.0 * 1024.0)
#define TiB (1024.0 * GiB)

/* S: a bad value fails waitio_init (config.c and log.c read these strictly) */
#define S WIO_SETF_STRICT

static const wio_setting table[] = {
    /* ---- boot: the instance and start-up (config.c, boot/) ---- */
    {"WAITIO_NPB", WIO_SET_INT, "1", 1, 65536, NULL, "boot", S, "number of PBs of the instance"},
    {"WAITIO_PBID", WIO_SET_INT, "0", 0, 65536, NULL, "boot", S,
     "this PB's id, 0..NPB-1; PB 0's rank 0 is the rendezvous master"},
    {"WAITIO_MASTER_HOST", WIO_SET_STRING, "127.0.0.1", 0, 255, NULL, "boot", S,
     "host name or address where the master listens"},
    {"WAITIO_MASTER_PORT", WIO_SET_INT, "27182", 1, 65535, NULL, "boot", S, "the master's TCP port"},
    {"WAITIO_RENDEZVOUS", WIO_SET_PATH, NULL, 0, 4095, NULL, "boot", S,
     "a file on a shared file system through which the master publishes its address (replaces host/port)"},
    {"WAITIO_PB_RANK", WIO_SET_INT, NULL, 0, 16777216, NULL, "boot", S,
     "this process's rank in its PB (default: from the launcher's variables)"},
    {"WAITIO_PB_SIZE", WIO_SET_INT, NULL, 1, 16777216, NULL, "boot", S,
     "the number of processes of this PB (default: from the launcher's variables)"},
    {"WAITIO_MAX_PROCS", WIO_SET_INT, "1048576", 1, (double)WIO_PROCS_MAX, NULL, "boot", S,
     "the most processes of all PBs together that start-up admits (the master's setting counts)"},
    {"WAITIO_BOOT_TABLE_SHM", WIO_SET_BOOL, "1", 0, 1, NULL, "boot", 0,
     "1: start-up hands the address table to a host's processes through one shared-memory segment; 0: a copy each from the master"},
    {"WAITIO_INIT_TIMEOUT", WIO_SET_INT, "60", 1, 1e6, NULL, "boot", 0,
     "seconds waitio_create_universe*, the Fortran binding and the MPI adapter wait at start-up"},
    /* ---- auth: the instance key (auth.c) ---- */
    {"WAITIO_KEY", WIO_SET_SECRET, NULL, 0, 4096, NULL, "auth", S,
     "the instance secret itself, at least 16 bytes (wins over WAITIO_KEY_FILE)"},
    {"WAITIO_KEY_FILE", WIO_SET_PATH, "~/.waitio/key", 0, 0, NULL, "auth", S,
     "file holding the instance secret: yours and private (mode 600)"},
    /* ---- core: transports, messages, waits, connections (config.c, engine.c) ---- */
    {"WAITIO_TRANSPORTS", WIO_SET_LIST, "shm,tcp", 0, 63, "shm,tcp,file,ucx", "core", S,
     "transports allowed, in order of preference (wins over WAITIO_COMM_TYPE)"},
    {"WAITIO_COMM_TYPE", WIO_SET_ENUM, "socket", 0, 0, "socket,file,hybrid,verbs", "core", S,
     "the original's modes: socket = shm,tcp; file; hybrid = sockets plus files for large data; verbs = ucx"},
    {"WAITIO_UCX_LIBRARY", WIO_SET_PATH, "libucp.so.0", 0, 511, NULL, "core", 0,
     "the UCX library (libucp) the ucx transport loads when first used: a site's UCX under another prefix"},
    {"WAITIO_UCX_RDV", WIO_SET_ENUM, "auto", 0, 0, "auto,get,push", "core", 0,
     "ucx: how a rendezvous message moves: get (the receiver reads the buffer), push (UCX's own rendezvous), auto (get over shared memory, else push)"},
    {"WAITIO_EAGER_LIMIT", WIO_SET_SIZE, "256K", 0, (double)WIO_EAGER_HARD_MAX, NULL, "core", S,
     "largest message sent eagerly (with its header); larger ones use rendezvous"},
    {"WAITIO_CHUNK_SIZE", WIO_SET_SIZE, "256K", 4096, (double)WIO_CHUNK_HARD_MAX, NULL, "core", S,
     "size of a rendezvous transfer's DATA frames (and of RMA frames)"},
    {"WAITIO_EAGER_CREDIT", WIO_SET_SIZE, "0", 0, 2 * GiB, NULL, "core", S,
     "eager bytes one peer may have buffered here (0: auto, from WAITIO_UNEXPECTED_MAX)"},
    {"WAITIO_UNEXPECTED_MAX", WIO_SET_SIZE, "256M", 0, TiB, NULL, "core", S,
     "bound on memory for unexpected eager messages across all peers (the auto credit)"},
    {"WAITIO_SPIN_US", WIO_SET_NUMBER, "50", 0, 1e7, NULL, "core", S,
     "microseconds a wait polls without yielding"},
    {"WAITIO_YIELD_US", WIO_SET_NUMBER, "2000", 0, 1e7, NULL, "core", S,
     "microseconds a wait then polls with sched_yield before it blocks"},
    {"WAITIO_CONNECT_TIMEOUT", WIO_SET_NUMBER, "30", 0.1, 1e6, NULL, "core", S,
     "seconds our connection may wait at each step of connect and handshake"},
    {"WAITIO_HANDSHAKE_TIMEOUT", WIO_SET_NUMBER, "5", 0.1, 1e6, NULL, "core", S,
     "seconds an incoming connection has to authenticate"},
    {"WAITIO_MAX_HANDSHAKES", WIO_SET_INT, "64", 1, 1 << 20, NULL, "core", S,
     "incoming connections at once that have not authenticated yet"},
    {"WAITIO_FINALIZE_TIMEOUT", WIO_SET_NUMBER, "5", 0, 1e6, NULL, "core", S,
     "seconds finalize waits for peers to close their side"},
    {"WAITIO_PEER_TIMEOUT", WIO_SET_NUMBER, "30", 1, 1e6, NULL, "core", S,
     "seconds of silence after which an unreachable peer is declared dead"},
    {"WAITIO_MAX_CONNECTIONS", WIO_SET_INT, "0", 0, 1 << 24, NULL, "core", S,
     "connections a process keeps open (0: auto, the descriptor limit minus 64)"},
    {"WAITIO_LOG", WIO_SET_LOGSPEC, "notice", 0, 0, NULL, "core", S | WIO_SETF_EMPTY_OK,
     "log levels to stderr: LEVEL[,SUBSYSTEM=LEVEL...], levels off, notice, error, warn, info, debug"},
    /* ---- tcp ---- */
    {"WAITIO_IFACE", WIO_SET_STRING, NULL, 0, 255, NULL, "tcp", S,
     "interface name or address to advertise (default: the one that routes to the master)"},
    {"WAITIO_BIND_ALL", WIO_SET_BOOL, "0", 0, 1, NULL, "tcp", S,
     "1: listen on every interface, not only the advertised address"},
    /* ---- shm ---- */
    {"WAITIO_SHM_RING", WIO_SET_SIZE, "1M", WIO_SHM_RING_MIN, WIO_SHM_RING_MAX, NULL, "shm", S,
     "bytes of each direction's shared-memory ring (a power of two)"},
    {"WAITIO_SHM_FENCED", WIO_SET_BOOL, "0", 0, 1, NULL, "shm", S,
     "1: a barrier per shared-memory record instead of membarrier(2) at sleep"},
    {"WAITIO_SINGLE_COPY", WIO_SET_AUTO01, "auto", 0, 0, NULL, "shm", S,
     "large messages on one host read in place by the receiver (process_vm_readv): auto, 1, 0"},
    /* ---- file: file and hybrid modes (config.c, transport/file*.c) ---- */
    {"WAITIO_SCRATCH_DIR", WIO_SET_PATH, NULL, 0, 2047, NULL, "file", S,
     "the directory every PB shares in file and hybrid modes"},
    {"WAITIO_JOB_ID", WIO_SET_STRING, NULL, 0, 127, NULL, "file", S,
     "names the instance's directory .waitio-file-<ID> (default: COUPLER_JOB_ID, else derived)"},
    {"WAITIO_MAXFILE_SIZE_PER_PROC", WIO_SET_SIZE, "64M", 4096, TiB, NULL, "file", S,
     "bytes a writer may have published into one stream before it waits for the reader"},
    {"WAITIO_HYBRID_THRESHOLD", WIO_SET_SIZE, "524288", 1, TiB, NULL, "file", S | WIO_SETF_EMPTY_OK,
     "hybrid: messages of at least this many bytes send their data through files"},
    {"WAITIO_HYBRID_THRESHOULD", WIO_SET_SIZE, "524288", 1, TiB, NULL, "file", S,
     "the original's spelling of WAITIO_HYBRID_THRESHOLD (used when that is not set)"},
    {"WAITIO_FILE_POLL_MS", WIO_SET_NUMBER, "10", 0.01, 10000, NULL, "file", S,
     "milliseconds between looks at a quiet file stream, at most"},
    {"WAITIO_FILE_FSYNC", WIO_SET_BOOL, "0", 0, 1, NULL, "file", S,
     "1: fsync each segment before publishing it"},
    {"WAITIO_FILE_UNSAFE_DIR", WIO_SET_BOOL, "0", 0, 1, NULL, "file", S,
     "1: accept a scratch directory others may write without the sticky bit (with a warning)"},
    /* ---- rma: one-sided operations (rma/rma.c) ---- */
    {"WAITIO_PROGRESS_THREAD", WIO_SET_AUTO01, "auto", 0, 0, NULL, "rma", 0,
     "a thread serving one-sided requests while the program computes: auto, 1, 0"},
    {"WAITIO_PROGRESS_INTERVAL_US", WIO_SET_NUMBER, "1000", 10, 1e6, NULL, "rma", 0,
     "microseconds between the progress thread's looks while the program is inside WaitIO"},
    {"WAITIO_RMA_MAX_INFLIGHT", WIO_SET_NUMBER, "256", 1, 1 << 20, NULL, "rma", 0,
     "one-sided operations waiting for a reply per target before the caller waits"},
    {"WAITIO_RMA_MAX_QUEUED", WIO_SET_SIZE, NULL, MiB, 1e15, NULL, "rma", 0,
     "bytes one origin may make this process hold as a target (default: 2 x max inflight x (1M + 4K))"},
    {"WAITIO_RMA_DIRECT", WIO_SET_AUTO01, "1", 0, 0, NULL, "rma", 0,
     "0: no shared heap segments and no single copy, every one-sided operation as frames"},
    {"WAITIO_RMA_RDMA", WIO_SET_AUTO01, "1", 0, 0, NULL, "rma", 0,
     "0: windows are not registered with the transport's RDMA (ucx), every operation as frames"},
    {"WAITIO_RMA_TEST_NO_ORIGIN_CHECKS", WIO_SET_AUTO01, "0", 0, 0, NULL, "rma", 0,
     "test hook: 1 lets an origin send what its own checks refuse, to test the target's"},
    /* ---- shmem: the OpenSHMEM layer (shmem/shmem.c) ---- */
    {"SHMEM_SYMMETRIC_SIZE", WIO_SET_HEAPSIZE, "64M", 0, 1e15, NULL, "shmem", 0,
     "OpenSHMEM symmetric heap per PE (SMA_SYMMETRIC_SIZE, its old name, is read next)"},
    {"WAITIO_SYMMETRIC_SIZE", WIO_SET_HEAPSIZE, NULL, 0, 1e15, NULL, "shmem", 0,
     "the symmetric heap size when neither SHMEM_SYMMETRIC_SIZE nor SMA_SYMMETRIC_SIZE is set"},
    {"WAITIO_SHMEM_HEAP", WIO_SET_ENUM, "host", 0, 0, "host,device", "shmem", 0,
     "device: shmem_malloc, shmem_calloc and shmem_align allocate from the device symmetric heap"},
    {"WAITIO_SHMEM_DEVICE_SIZE", WIO_SET_HEAPSIZE, "64M", 0, 1e15, NULL, "shmem", 0,
     "OpenSHMEM device symmetric heap per PE (GPU memory, made at the first device allocation)"},
    /* ---- mpi: the MPI layer and the MPI adapters ---- */
    {"WAITIO_MPMD_WORLD", WIO_SET_ENUM, "1", 0, 0, "0,1", "mpi", 0,
     "one-job MPMD launch: MPI_COMM_WORLD is the program's own processes; 0: the whole job's"},
    /* ---- coll: collectives (coll/coll.c, mpi/hier.c) ---- */
    {"WAITIO_COLL_ALG", WIO_SET_ENUM, "auto", 0, 0, "auto,linear,2L,tree,ring", "coll", WIO_SETF_ICASE,
     "the flat collectives' algorithm"},
    {"WAITIO_COLL_HIER", WIO_SET_ENUM, "auto", 0, 0, "auto,0,1,paired,segmented,pipeline", "coll", 0,
     "collectives over the universe with an MPI adapter: auto, 1 hierarchical, 0 flat, or a path forced"},
    {"WAITIO_COLL_HIER_ALLREDUCE", WIO_SET_RANGE, NULL, 0, 0, NULL, "coll", 0,
     "message sizes MIN-MAX where auto takes a hierarchical allreduce (the best one), flat outside; unset: table or model"},
    {"WAITIO_COLL_HIER_BCAST", WIO_SET_RANGE, NULL, 0, 0, NULL, "coll", 0,
     "message sizes MIN-MAX where auto takes a hierarchical broadcast (the best one), flat outside; unset: table or model"},
    {"WAITIO_COLL_HIER_REDUCE", WIO_SET_RANGE, NULL, 0, 0, NULL, "coll", 0,
     "message sizes MIN-MAX where auto takes the hierarchical reduce, flat outside; unset: table or model"},
    {"WAITIO_COLL_HIER_BARRIER", WIO_SET_RANGE, NULL, 0, 0, NULL, "coll", 0,
     "message sizes MIN-MAX where auto takes the hierarchical barrier (0- always), flat outside; unset: table or model"},
    {"WAITIO_COLL_TABLE", WIO_SET_PATH, NULL, 0, 4095, NULL, "coll", 0,
     "collective table (waitio-tune) or directory of *.tbl; unset: the installed directory; none: the model only"},
    {"WAITIO_COLL_PIPELINE", WIO_SET_ENUM, "auto", 0, 0, "auto,0,1", "coll", 0,
     "the pipelined broadcast: auto (chosen), 1 wherever the hierarchical one would run, 0 only when forced"},
    /* ---- trace: traces and statistics (core/trace.c) ---- */
    {"WAITIO_TRACE", WIO_SET_PATH, NULL, 0, 1023, NULL, "trace", S,
     "a directory: every process records its WaitIO events there (waitio-trace DIR merges them)"},
    {"WAITIO_TRACE_SIZE", WIO_SET_SIZE, "16M", 4096 + 48, 1e15, NULL, "trace", 0,
     "the most each trace file grows to (events past it are dropped and counted)"},
    {"WAITIO_STATS", WIO_SET_BOOL, "0", 0, 1, NULL, "trace", S, "1: per-peer counters at finalize"},
    /* ---- gpu: device memory (gpu/cuda.c, two-sided staging and CUDA IPC) ---- */
    {"WAITIO_CUDA_LIBRARY", WIO_SET_PATH, "libcuda.so.1", 0, 4095, NULL, "gpu", 0,
     "the CUDA driver library to load at run time (a test double in the test suite)"},
    {"WAITIO_GPU_STAGING_SIZE", WIO_SET_SIZE, "2M", 64 * KiB, 256 * MiB, NULL, "gpu", 0,
     "bytes of each pinned host buffer that device messages are staged through, chunk by chunk"},
    {"WAITIO_GPU_STAGING_COUNT", WIO_SET_INT, "4", 2, 64, NULL, "gpu", 0,
     "pinned staging buffers per process (the pipeline's depth; a bound on pinned memory)"},
    {"WAITIO_GPU_PIPELINE_CHUNK", WIO_SET_SIZE, "1M", 64 * KiB, 256 * MiB, NULL, "gpu", 0,
     "bytes per copy of a device message staged across a link chunk by chunk (src/gpu/pipeline.c)"},
    {"WAITIO_GPU_PIPELINE_DEPTH", WIO_SET_INT, "4", 0, 16, NULL, "gpu", 0,
     "device-to-host copies in flight ahead of the wire when staging chunk by chunk; 0: whole messages"},
    {"WAITIO_GPU_IPC", WIO_SET_BOOL, "1", 0, 1, NULL, "gpu", 0,
     "1: device-to-device messages on one host through CUDA IPC; 0: staged through host memory"},
    {"WAITIO_TEST_GPU_FORCE_DEVICE", WIO_SET_BOOL, "0", 0, 1, NULL, "gpu", 0,
     "test hook: every buffer is treated as device memory (fails with WAITIO_ERR_DEVICE without a driver)"},
    /* ---- python ---- */
    {"WAITIO_MPI_ADAPTER", WIO_SET_PATH, NULL, 0, 0, NULL, "python", 0,
     "the MPI adapter library to load when mpi4py initialised MPI"},
    {"WAITIO_PYTHON_PICKLE", WIO_SET_ENUM, "0", 0, 0, "0,1", "python", 0,
     "1: waitio.allow_pickle(True) may decode peers' object messages with full pickle"},
    /* ---- tools: waitio-serv, waitio-oshcc, the test suite's scripts ---- */
    {"WAITIO_SERV_FILE", WIO_SET_PATH, NULL, 0, 0, NULL, "tools", 0,
     "waitio-serv: the file holding the master's host (default: $WAITIO_RENDEZVOUS.host)"},
    {"WAITIO_OSHCC_CC", WIO_SET_STRING, NULL, 0, 4095, NULL, "tools", 0,
     "waitio-oshcc: the C compiler to use (default: $CC, else cc)"},
    {"WAITIO_OSHCC_STATIC", WIO_SET_BOOL, "0", 0, 1, NULL, "tools", 0,
     "waitio-oshcc: 1 links the static libraries"},
    {"WAITIO_BUILD_DIR", WIO_SET_PATH, NULL, 0, 0, NULL, "tools", 0,
     "the test suite and tools/*.sh: the build tree under test"},
    {"WAITIO_SOURCE_DIR", WIO_SET_PATH, NULL, 0, 0, NULL, "tools", 0,
     "the test suite: the source tree"},
    {"WAITIO_ML_TORCH", WIO_SET_BOOL, "0", 0, 1, NULL, "examples", 0,
     "examples/ml: 1 trains the learner with PyTorch"},
    /* ---- tests: hooks of the test suite (names under WAITIO_TEST_ are never reported) ---- */
    {"WAITIO_TEST_PROC_EXT", WIO_SET_STRING, NULL, 0, 4095, NULL, "tests", WIO_SETF_EMPTY_OK,
     "test hook: hex bytes (one item per PB rank, comma-separated) put in this process's address entry"},
    {"WAITIO_TEST_HOST_ID", WIO_SET_STRING, NULL, 0, 16, NULL, "tests", WIO_SETF_EMPTY_OK,
     "test hook: hex host id this process announces instead of its host's (start-up as if on another host)"},
    {"WAITIO_TEST_UCX_EP_PER_CONN", WIO_SET_BOOL, "0", 0, 1, NULL, "tests", 0,
     "test hook: 1 gives every ucx connection an endpoint of its own (UCX then pairs endpoints wrongly after a simultaneous connect)"},
    {"WAITIO_TEST_BOOT_SHM_CORRUPT", WIO_SET_BOOL, "0", 0, 1, NULL, "tests", 0,
     "test hook: 1 makes the process that writes a host's address-table segment spoil its last byte"},
};

#undef S
#define NSETTINGS (sizeof table / sizeof table[0])

const wio_setting *wio_settings(size_t *count)
{
    *count = NSETTINGS;
    return table;
}

const wio_setting *wio_setting_find(const char *name)
{
    for (size_t i = 0; i < NSETTINGS; i++)
        if (strcmp(table[i].name, name) == 0)
            return &table[i];
    return NULL;
}

const char *wio_env(const char *name)
{
#ifdef WIO_ENABLE_ASSERTS
    if (!strncmp(name, "WAITIO_", 7) && !wio_setting_find(name)) {
        fprintf(stderr, "WaitIO bug: %s is read but not registered in src/core/settings.c\n", name);
        abort();
    }
#endif
    return getenv(name);
}

/* Levenshtein distance, with two rows (names are short). */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return (size_t)-1;
    size_t prev[64], cur[64];
    for (size_t j = 0; j <= lb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
            size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
            cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
        memcpy(prev, cur, (lb + 1) * sizeof prev[0]);
    }
    return prev[lb];
}

/* How far `name` is from the registered `known`: edit distance, except that a known name
 * followed by a suffix of its own words (WAITIO_TRACE_DIR for WAITIO_TRACE) counts as 1. */
static size_t distance_to(const char *name, const char *known)
{
    size_t n = strlen(known);
    if (!strncmp(name, known, n) && name[n] == '_')
        return 1;
    return edit_distance(name, known);
}

const char *wio_setting_suggest(const char *name)
{
    const char *best = NULL;
    size_t best_d = (size_t)-1;
    for (size_t i = 0; i < NSETTINGS; i++) {
        if (strncmp(table[i].name, "WAITIO_", 7))
            continue;
        size_t d = distance_to(name, table[i].name);
        if (d < best_d) {
            best_d = d;
            best = table[i].name;
        }
    }
    /* beyond a third of the name's own letters the guess says nothing */
    size_t tail = strlen(name) > 7 ? strlen(name) - 7 : 1;
    return best_d <= (tail / 3 > 2 ? tail / 3 : 2) ? best : NULL;
}

#ifndef WIO_SETTINGS_STANDALONE

const char *waitio_adapter_getenv(const char *name)
{
    return wio_env(name);
}

static int check_int(const wio_setting *s, const char *v, char *why, size_t cap)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || end == v || *end != '\0' || x < s->lo || x > s->hi) {
        snprintf(why, cap, "%s='%s' is not an integer in [%.0f, %.0f]", s->name, v, s->lo, s->hi);
        return -1;
    }
    return 0;
}

static int check_size(const wio_setting *s, const char *v, char *why, size_t cap)
{
    size_t x;
    if (wio_parse_size(v, &x) != 0 || (double)x < s->lo || (double)x > s->hi) {
        snprintf(why, cap, "%s='%s' is not a size in [%.0f, %.0f]", s->name, v, s->lo, s->hi);
        return -1;
    }
    if (!strcmp(s->name, "WAITIO_SHM_RING") && (x & (x - 1))) {
        snprintf(why, cap, "%s=%zu is not a power of two", s->name, x);
        return -1;
    }
    return 0;
}

static int check_number(const wio_setting *s, const char *v, char *why, size_t cap)
{
    char *end;
    double x = strtod(v, &end);
    if (end == v || *end != '\0' || !(x >= s->lo && x <= s->hi)) {
        /* %g, as config.c and rma.c write it: the same message whoever says it */
        snprintf(why, cap, "%s='%s' is not a number in [%g, %g]", s->name, v, s->lo, s->hi);
        return -1;
    }
    return 0;
}

/* Whether v is one of the comma-separated words of list (n: v's length). */
static int word_in(const char *list, const char *v, size_t n, int icase)
{
    for (const char *w = list; *w;) {
        size_t len = strcspn(w, ",");
        if (len == n && (icase ? !strncasecmp(w, v, n) : !strncmp(w, v, n)))
            return 1;
        w += len + (w[len] == ',');
    }
    return 0;
}

static int check_enum(const wio_setting *s, const char *v, char *why, size_t cap)
{
    if (word_in(s->values, v, strlen(v), s->flags & WIO_SETF_ICASE))
        return 0;
    if (!strcmp(s->name, "WAITIO_COMM_TYPE")) /* config.c's words */
        snprintf(why, cap, "WAITIO_COMM_TYPE='%s' is not socket, file, hybrid or verbs", v);
    else
        snprintf(why, cap, "%s='%s' is not one of %s", s->name, v, s->values);
    return -1;
}

/* The transports this library has (transports.c), as engine.c refuses the others. */
static int check_transports(const wio_setting *s, const char *v, char *why, size_t cap)
{
    char avail[128] = "";
    for (int i = 0; wio_transports[i]; i++)
        snprintf(avail + strlen(avail), sizeof avail - strlen(avail), "%s%s", i ? ", " : "",
                 wio_transports[i]->name);
    if (strlen(v) > s->hi) {
        snprintf(why, cap, "%s is too long (at most %.0f characters)", s->name, s->hi);
        return -1;
    }
    int named = 0;
    for (const char *t = v; *t;) {
        size_t n = strcspn(t, ",: ");
        char word[64];
        snprintf(word, sizeof word, "%.*s", (int)n, t);
        if (n && !wio_transport_find(word)) {
            if (!strcmp(word, "ucx"))
                snprintf(why, cap, "WAITIO_TRANSPORTS: this WaitIO was built without UCX, so it has "
                         "no ucx transport (install UCX, e.g. libucx-dev, and rebuild)");
            else
                snprintf(why, cap, "WAITIO_TRANSPORTS: unknown transport '%s' (available: %s)", word, avail);
            return -1;
        }
        named += n > 0;
        t += n + (t[n] != '\0');
    }
    if (!named) {
        snprintf(why, cap, "WAITIO_TRANSPORTS='%s' names no transport", v);
        return -1;
    }
    return 0;
}

/* "MIN-MAX" in bytes, either side empty, as mpi/hier.c reads it. */
static int check_range(const wio_setting *s, const char *v, char *why, size_t cap)
{
    const char *dash = strchr(v, '-');
    size_t x;
    if (dash && dash - v < 32 && strlen(dash + 1) < 32) {
        char lo[32], hi[32];
        snprintf(lo, sizeof lo, "%.*s", (int)(dash - v), v);
        snprintf(hi, sizeof hi, "%s", dash + 1);
        if ((!*lo || wio_parse_size(lo, &x) == 0) && (!*hi || wio_parse_size(hi, &x) == 0))
            return 0;
    }
    snprintf(why, cap, "%s='%s' is not MIN-MAX (bytes, e.g. 16K-512K)", s->name, v);
    return -1;
}

/* OpenSHMEM's heap size as shmem/shmem.c reads it: fractions allowed, K/M/G, an optional B. */
static int check_heapsize(const wio_setting *s, const char *v, char *why, size_t cap)
{
    char *end;
    double x = strtod(v, &end), mult = 1;
    switch (*end) {
    case 'k': case 'K': mult = KiB; end++; break;
    case 'm': case 'M': mult = MiB; end++; break;
    case 'g': case 'G': mult = GiB; end++; break;
    default: break;
    }
    if (*end == 'B' || *end == 'b')
        end++;
    if (end == v || *end || !(x > 0) || x * mult > s->hi) {
        snprintf(why, cap, "%s=%s is not a size (bytes, with an optional K, M or G)", s->name, v);
        return -1;
    }
    return 0;
}

/* Text and paths: config.c's length caps; WAITIO_JOB_ID names a directory; a key is long enough. */
static int check_string(const wio_setting *s, const char *v, char *why, size_t cap)
{
    if (!strcmp(s->name, "WAITIO_JOB_ID") &&
        (strlen(v) > s->hi || strchr(v, '/') || !strcmp(v, ".") || !strcmp(v, ".."))) {
        snprintf(why, cap, "the job id '%s' (WAITIO_JOB_ID or COUPLER_JOB_ID) must be a file name of "
                 "at most %.0f characters", v, s->hi);
        return -1;
    }
    if (s->hi > 0 && strlen(v) > s->hi) {
        if (s->type == WIO_SET_SECRET) /* auth.c's words */
            snprintf(why, cap, "%s is longer than %.0f bytes", s->name, s->hi);
        else
            snprintf(why, cap, "%s is too long (at most %.0f characters)", s->name, s->hi);
        return -1;
    }
    if (s->type == WIO_SET_SECRET && strlen(v) < 16) { /* auth.c's check and words */
        snprintf(why, cap, "%s holds a key of %zu bytes; at least 16 are required (a short key can be "
                 "guessed offline from one recorded handshake): use e.g. 64 hex digits from "
                 "'openssl rand -hex 32'", s->name, strlen(v));
        return -1;
    }
    return 0;
}

static int check_logspec(const wio_setting *s, const char *v, char *why, size_t cap)
{
    char reason[256];
    if (wio_log_spec_check(v, reason, sizeof reason) == 0)
        return 0;
    snprintf(why, cap, "%s='%s': %s", s->name, v, reason);
    return -1;
}

int wio_setting_check(const wio_setting *s, const char *v, char *why, size_t cap)
{
    if (!*v) {
        if (s->flags & WIO_SETF_EMPTY_OK || !(s->flags & WIO_SETF_STRICT))
            return 0; /* the default */
        snprintf(why, cap, "%s is set but empty: give it a value or unset it", s->name);
        return -1;
    }
    switch (s->type) {
    case WIO_SET_INT: return check_int(s, v, why, cap);
    case WIO_SET_BOOL: return check_int(s, v, why, cap);
    case WIO_SET_SIZE: return check_size(s, v, why, cap);
    case WIO_SET_NUMBER: return check_number(s, v, why, cap);
    case WIO_SET_AUTO01:
        if (!strcmp(v, "auto") || !strcmp(v, "0") || !strcmp(v, "1"))
            return 0;
        snprintf(why, cap, "%s='%s' is not 0, 1 or auto", s->name, v);
        return -1;
    case WIO_SET_ENUM: return check_enum(s, v, why, cap);
    case WIO_SET_LIST: return check_transports(s, v, why, cap);
    case WIO_SET_RANGE: return check_range(s, v, why, cap);
    case WIO_SET_HEAPSIZE: return check_heapsize(s, v, why, cap);
    case WIO_SET_LOGSPEC: return check_logspec(s, v, why, cap);
    case WIO_SET_STRING:
    case WIO_SET_PATH:
    case WIO_SET_SECRET: return check_string(s, v, why, cap);
    }
    return 0;
}

/* Each variable's bad value is said once per process: several layers may ask for it. */
static unsigned char said_invalid[NSETTINGS];

const char *wio_setting_str(const char *name, int *source)
{
    const wio_setting *s = wio_setting_find(name);
    const char *v = wio_env(name);
    char why[512];
    if (source)
        *source = WIO_FROM_DEFAULT;
    if (!s)
        return v;
    if (!v || !*v)
        return s->dflt;
    if (wio_setting_check(s, v, why, sizeof why) != 0) {
        size_t i = (size_t)(s - table);
        /* before waitio_init has set the log levels nothing is shown: say it later then */
        if (wio_log_on(WIO_LOG_NOTICE) && !__atomic_exchange_n(&said_invalid[i], 1, __ATOMIC_RELAXED))
            wio_notice("%s; using %s", why, s->dflt ? s->dflt : "the default");
        return s->dflt;
    }
    if (source)
        *source = WIO_FROM_ENV;
    return v;
}

double wio_setting_num(const char *name, double dflt)
{
    const char *v = wio_setting_str(name, NULL);
    if (!v)
        return dflt;
    if (!strcmp(v, "auto"))
        return -1;
    char *end;
    double x = strtod(v, &end);
    return end == v ? dflt : x;
}

/* Said at waitio_init whoever reads them later (some only at their first collective, or before
 * logging is set up). */
void wio_settings_say_ignored(void)
{
    for (size_t i = 0; i < NSETTINGS; i++)
        if (!(table[i].flags & WIO_SETF_STRICT) && !strncmp(table[i].name, "WAITIO_", 7))
            (void)wio_setting_str(table[i].name, NULL);
}

int wio_settings_warn_unknown(void)
{
    static int done;
    extern char **environ;
    int n = 0;
    if (__atomic_exchange_n(&done, 1, __ATOMIC_RELAXED))
        return 0;
    for (char **e = environ; e && *e; e++) {
        const char *eq = strchr(*e, '=');
        char name[128];
        if (strncmp(*e, "WAITIO_", 7) || !eq || (size_t)(eq - *e) >= sizeof name)
            continue;
        snprintf(name, sizeof name, "%.*s", (int)(eq - *e), *e);
        if (wio_setting_find(name) || !strncmp(name, WIO_SETTINGS_TEST_PREFIX, strlen(WIO_SETTINGS_TEST_PREFIX)))
            continue;
        const char *near = wio_setting_suggest(name);
        if (near)
            wio_notice("%s is not a WaitIO setting (ignored); did you mean %s?", name, near);
        else
            wio_notice("%s is not a WaitIO setting (ignored); waitio-info --all lists them", name);
        n++;
    }
    return n;
}

#endif
