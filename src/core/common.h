/*
 * common.h — what every internal file needs: logging, error recording, clocks, the
 * configuration read from the environment.
 */
#ifndef WIO_COMMON_H
#define WIO_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include "waitio.h"

/* ---- logging (log.c) ---- */
/* Levels by importance: a notice (start-up progress, advice) is shown at every level but off,
 * and is the default; error, warn, info and debug add more. */
enum wio_log_level {
    WIO_LOG_OFF = 0, WIO_LOG_NOTICE, WIO_LOG_ERROR, WIO_LOG_WARN, WIO_LOG_INFO, WIO_LOG_DEBUG
};
/* Subsystems, each with its own level (WAITIO_LOG=warn,boot=info). A .c file names its own by
 * defining WIO_LOG_SUBSYS before its first #include; core otherwise. */
enum wio_log_subsys {
    WIO_SUB_CORE = 0, WIO_SUB_BOOT, WIO_SUB_NET, WIO_SUB_TCP, WIO_SUB_SHM, WIO_SUB_FILE,
    WIO_SUB_UCX, WIO_SUB_RMA, WIO_SUB_SHMEM, WIO_SUB_MPI, WIO_SUB_COLL, WIO_SUB_TRACE,
    WIO_SUB_GPU, WIO_SUB_COUNT
};
#ifndef WIO_LOG_SUBSYS
#define WIO_LOG_SUBSYS WIO_SUB_CORE
#endif
extern signed char wio_log_levels[WIO_SUB_COUNT];
void wio_log_set_identity(int pbid, int rank);
/* Reads WAITIO_LOG; WAITIO_ERR_ENV (message naming the bad entry) for a bad spec. */
int wio_log_init_from_env(void);
/* 0 when spec is a valid WAITIO_LOG value ("" included), -1 with the reason in why[cap]. */
int wio_log_spec_check(const char *spec, char *why, size_t cap);
/* WAITIO_LOG was set to a non-empty value. */
extern int wio_log_explicit;
/* Seconds since waitio_init began (what log lines show). */
double wio_log_elapsed(void);
void wio_log_write(int subsys, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The level test comes first: a filtered-out line costs one load and compare. */
#define wio_log_on(level) ((level) <= wio_log_levels[WIO_LOG_SUBSYS])
#define WIO_LOG(level, ...) \
    do { if (wio_log_on(level)) wio_log_write(WIO_LOG_SUBSYS, (level), __VA_ARGS__); } while (0)
#define wio_notice(...) WIO_LOG(WIO_LOG_NOTICE, __VA_ARGS__)
#define wio_error(...) WIO_LOG(WIO_LOG_ERROR, __VA_ARGS__)
#define wio_warn(...) WIO_LOG(WIO_LOG_WARN, __VA_ARGS__)
#define wio_info(...) WIO_LOG(WIO_LOG_INFO, __VA_ARGS__)
#define wio_debug(...) WIO_LOG(WIO_LOG_DEBUG, __VA_ARGS__)

/* ---- errors (error.c) ---- */
/* Records the detailed message of a failure for waitio_error_message(), logs it at error
 * level (as the calling file's subsystem), and returns err so that callers can write
 * `return wio_fail(ERR, "...")`. */
int wio_fail_in(int subsys, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#define wio_fail(...) wio_fail_in(WIO_LOG_SUBSYS, __VA_ARGS__)
/* Records the detail message only (no log): for requests that complete with an error. */
void wio_set_message(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- assertions ---- */
/* On in Debug and sanitizer builds (WIO_ENABLE_ASSERTS): state transitions, no re-entry into
 * progress. Off in release builds, where nothing may abort the caller's process. */
#ifdef WIO_ENABLE_ASSERTS
void wio_assert_fail(const char *cond, const char *file, int line) __attribute__((noreturn));
#define WIO_ASSERT(cond) ((cond) ? (void)0 : wio_assert_fail(#cond, __FILE__, __LINE__))
#else
#define WIO_ASSERT(cond) ((void)0)
#endif

/* ---- time ---- */
double wio_now(void);          /* monotonic seconds */

/* ---- configuration (config.c) ---- */
typedef struct wio_config {
    int npb, pbid;
    int local_rank, local_size;
    const char *local_source;      /* which variable gave local rank/size */
    char master_host[256];
    int master_port;
    char rendezvous[4096];         /* "" when not used */
    char iface[256];
    char transports[64];
    size_t shm_ring;               /* bytes per direction of a shared-memory connection */
    int shm_fenced;                /* WAITIO_SHM_FENCED: publish ring records with a barrier each */
    size_t eager_limit;            /* largest eager message we send and accept */
    size_t chunk_size;             /* rendezvous DATA chunk */
    size_t eager_credit;           /* unexpected eager bytes one peer may have here; 0 = auto */
    size_t unexpected_max;         /* auto credit: this total shared by all peers, <= 4 MiB each */
    double spin_us, yield_us;      /* wait phases before blocking */
    double connect_timeout;        /* seconds: our connect + handshake */
    double handshake_timeout;      /* seconds an incoming connection has to authenticate */
    int max_handshakes;            /* incoming connections at once that have not authenticated */
    int bind_all;                  /* WAITIO_BIND_ALL: listen on every interface */
    double finalize_timeout;       /* seconds */
    double peer_timeout;           /* seconds of silence before a peer is declared dead */
    int transports_set;            /* WAITIO_TRANSPORTS was given (it wins over COMM_TYPE) */
    int master_set;                /* WAITIO_MASTER_HOST was given */
    int comm_type;                 /* WAITIO_COMM_TYPE: WIO_COMM_* */
    char scratch_dir[2048];        /* WAITIO_SCRATCH_DIR: the shared directory of file mode */
    char job_id[128];              /* WAITIO_JOB_ID, else COUPLER_JOB_ID ("" = derived) */
    size_t maxfile;                /* WAITIO_MAXFILE_SIZE_PER_PROC: unconsumed bytes per stream */
    size_t hybrid_threshold;       /* WAITIO_HYBRID_THRESHOLD: hybrid's large-message size */
    double file_poll_max;          /* seconds between looks at a quiet file stream, at most */
    int file_fsync;                /* WAITIO_FILE_FSYNC: fsync each segment before publishing */
    int file_unsafe_dir;           /* WAITIO_FILE_UNSAFE_DIR: accept a scratch directory others may
                                      write without the sticky bit (docs/transports.md) */
    long max_connections;          /* 0: auto (from the descriptor limit) */
    int single_copy;               /* WAITIO_SINGLE_COPY: 1, 0, -1 = auto (when oversubscribed) */
    int npb_explicit;              /* WAITIO_NPB was set (WAITIO_NPB=1: a deliberate single PB) */
    int job;                       /* one-job MPMD launch: layout, key and table from MPI */
    char trace_dir[1024];          /* WAITIO_TRACE: where this process's trace goes ("" = none) */
    int stats;                     /* WAITIO_STATS: per-peer table at finalize */
    int max_procs;                 /* WAITIO_MAX_PROCS: the processes of all PBs together, at most */
} wio_config;

enum { WIO_COMM_SOCKET = 0, WIO_COMM_FILE = 1, WIO_COMM_HYBRID = 2, WIO_COMM_VERBS = 3 };

int wio_config_load(wio_config *c);   /* WAITIO_SUCCESS or WAITIO_ERR_ENV */
/* How many of the instance variables (WAITIO_NPB, _PBID, _MASTER_HOST, _MASTER_PORT,
 * _RENDEZVOUS) are set. */
int wio_config_instance_vars_set(void);
/* Connections a process keeps open (WAITIO_MAX_CONNECTIONS; 0 there: from the descriptor
 * limit, keeping some for the program; 0 here: no cap). */
uint32_t wio_config_max_conns(const wio_config *c);
/* The eager credit granted to each peer once the number of peers is known. */
size_t wio_config_credit_per_peer(const wio_config *c, uint32_t npeers);
/* Parses a size with optional K/M/G suffix; returns -1 on malformed input. */
int wio_parse_size(const char *s, size_t *out);

#endif
