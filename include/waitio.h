/*
 * waitio.h — public C API of WaitIO.
 *
 * WaitIO couples separately launched parallel programs ("parallel blocks", PBs) with an
 * MPI-style point-to-point API. The first block of declarations is the original
 * h3-Open-SYS/WaitIO API, kept exactly so that existing programs compile unchanged; the
 * second block holds the extensions (wildcards, status, test/waitall/waitany, timeouts,
 * error strings, PB-local rank/size).
 *
 * Error handling: every int-returning function returns WAITIO_SUCCESS (0) or a positive
 * WAITIO_ERR_* code; waitio_strerror() names the code and waitio_error_message() gives the
 * detailed text of the calling thread's last failure. Nothing is printed unless logging is
 * enabled (WAITIO_LOG=error|warn|info|debug) and nothing aborts the process.
 *
 * Threading: "serialized" — any thread may call WaitIO, but not two at the same time — unless
 * the program switched to "multiple" with waitio_thread_multiple (any threads, concurrently).
 *
 * Like the original's header, this one brings in <stdio.h>, <stdlib.h>, <stddef.h> and
 * <stdint.h>: programs written for it call fprintf, exit, size_t and uint64_t with no include
 * of their own.
 */
#ifndef WAITIO_H
#define WAITIO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define WAITIO_API __attribute__((visibility("default")))
#else
#define WAITIO_API
#endif

/* The version macros (WAITIO_VERSION_MAJOR, _MINOR, _PATCH, _STRING) are in <waitio_version.h>,
 * where the version is written once, installed beside this header; at run time,
 * waitio_version() gives the library's. */

/* ---- types -------------------------------------------------------------------------- */

/* Membership predicate of one PB: returns 1 if process `rank` of PB `pbid` is a member. */
typedef int (*waitio_filter_func_t)(int pbid, int rank);

/* A group: an ordered subset of the instance's processes. NULL on failure. */
typedef struct waitio_group *waitio_group_t;

/* Message tags are 64-bit. */
typedef unsigned long waitio_tag_t;

/* Completion information of a request (valid once the request has completed). */
typedef struct waitio_status {
    int source;          /* group rank of the sender (receives); destination rank (sends) */
    int error;           /* WAITIO_SUCCESS or the WAITIO_ERR_* the request completed with */
    unsigned long tag;   /* the message's tag */
    size_t len;          /* bytes of the message (for a truncated receive: the sent length) */
} waitio_status_t;

/*
 * A request, allocated by the caller (`waitio_req_t req;` on the stack is fine). It may be
 * copied by value while pending; only one copy may be waited on. After completion `status`
 * holds the result and the request is inactive: waiting on it again returns status.error.
 * Its size (64 bytes) fits the Fortran binding's INTEGER(4) req(22).
 */
typedef struct waitio_req {
    waitio_status_t status;
    void *internal;             /* library-private; NULL when inactive */
    unsigned long reserved[4];
} waitio_req_t;

/* ---- the original API --------------------------------------------------------------- */

WAITIO_API int waitio_init(int timeout);          /* seconds to wait for all PBs; <= 0 means 60 */
WAITIO_API int waitio_finalize(void);
WAITIO_API int waitio_get_nprocs(int ary[]);      /* fills ary[p] = process count of PB p; returns NPB */
/*
 * Groups. func[p] / rankap[p] select PB p's members (NULL: none from PB p); rankap[p] is a
 * list of PB-local ranks terminated by WAITIO_RANKS_END (-1). order[p] is PB p's position
 * (1, 2, ...) in the group's rank numbering, 0 to exclude PB p. Arrays have NPB entries.
 * Group ranks number the members PB by PB in `order`, by PB-local rank inside a PB. Creating
 * a group needs no communication; every member must create it with the same arguments.
 * A process that is not a member still gets a group: its rank is WAITIO_UNDEFINED.
 */
WAITIO_API waitio_group_t waitio_create_group(int gid, waitio_filter_func_t func[], int order[]);
WAITIO_API waitio_group_t waitio_create_group_wranks(int gid, int *rankap[], int order[]);
WAITIO_API int waitio_group_rank(waitio_group_t grp, int *rankp);
WAITIO_API int waitio_group_size(waitio_group_t grp, int *sizep);
WAITIO_API int waitio_pb_size(int *sizep);        /* number of PBs (= WAITIO_NPB) */
WAITIO_API int waitio_pb_rank(int *rankp);        /* this process's PBID */
WAITIO_API int waitio_isend(waitio_group_t grp, int dst, char *buf, size_t len, unsigned long tag,
                 waitio_req_t *req);
WAITIO_API int waitio_irecv(waitio_group_t grp, int src, char *buf, size_t len, unsigned long tag,
                 waitio_req_t *req);
WAITIO_API int waitio_wait(waitio_req_t *req);    /* 0 on success, else the request's error */

/* The everyone-filter of the original library: returns 1. Defined in an object file of its own
 * (src/core/truef.c), so a program that defines its own truef links too, shared or static. */
WAITIO_API int truef(int pbid, int rank);

/*
 * The group of every process of PB `pbid`, in PB-rank order (group rank = PB-local rank).
 * Initialises WaitIO if needed, like waitio_create_universe (waitio_mpi.h). Every process may
 * call it; a process of another PB gets a group it is not a member of (rank WAITIO_UNDEFINED).
 * Calling it again returns the same group. Its group id is WAITIO_GID_PBGROUP(pbid).
 */
WAITIO_API int waitio_create_pbgroup(waitio_group_t *grpp, int pbid);

/*
 * Group ids from WAITIO_GID_RESERVED (0x7ff00000) up are the library's: the universe
 * (0x7ffffff0), the PB heads (0x7ffffff1, 0x7ffffff2) and the PB groups (0x7ff00000 + PBID).
 * waitio_create_group* refuses them (WAITIO_ERR_ARG), so a user's group never matches their
 * messages. User group ids are 0 .. 0x7fefffff.
 */
#define WAITIO_GID_RESERVED 0x7ff00000
#define WAITIO_GID_PBGROUP(pbid) (WAITIO_GID_RESERVED + (pbid))

/* ---- extensions --------------------------------------------------------------------- */

#define WAITIO_ANY_SOURCE (-1)
#define WAITIO_ANY_TAG    (~0UL)       /* so tag ~0UL itself cannot be sent */
#define WAITIO_UNDEFINED  (-1)
#define WAITIO_RANKS_END  (-1)

enum waitio_error {
    WAITIO_SUCCESS = 0,
    WAITIO_ERR_ARG = 1,          /* invalid argument */
    WAITIO_ERR_NOMEM = 2,        /* out of memory */
    WAITIO_ERR_STATE = 3,        /* not initialised, already initialised, or finalized */
    WAITIO_ERR_ENV = 4,          /* missing or malformed environment/configuration */
    WAITIO_ERR_TIMEOUT = 5,      /* a wait or the start-up exceeded its time limit */
    WAITIO_ERR_BOOT = 6,         /* rendezvous failed (inconsistent PBs, master refused) */
    WAITIO_ERR_AUTH = 7,         /* peer failed authentication (different key?) */
    WAITIO_ERR_KEY = 8,          /* key missing, unreadable, or readable by others */
    WAITIO_ERR_PEER = 9,         /* connection to the peer lost (peer died or link broke) */
    WAITIO_ERR_PEER_FINALIZED = 10, /* the peer finalized before the message could flow */
    WAITIO_ERR_TRUNCATE = 11,    /* message longer than the receive buffer */
    WAITIO_ERR_PROTO = 12,       /* protocol violation by the peer */
    WAITIO_ERR_SYS = 13,         /* an operating-system call failed */
    WAITIO_ERR_GROUP = 14,       /* bad group, group id in use, or rank out of range */
    WAITIO_ERR_NOT_MEMBER = 15,  /* this process is not a member of the group */
    WAITIO_ERR_CANCELLED = 16,   /* request cancelled (waitio_cancel or finalize) */
    WAITIO_ERR_UNREACHABLE = 17, /* no transport can reach the peer */
    WAITIO_ERR_BOUNDS = 18,      /* one-sided access outside the target's window (waitio_rma.h) */
    WAITIO_ERR_RPC = 19,         /* remote procedure call: no handler with that id, or it failed */
    WAITIO_ERR_DEVICE = 20,      /* device (GPU) memory: no CUDA driver, or a driver call failed */
    WAITIO_ERR_MAX_
};

WAITIO_API const char *waitio_strerror(int err);
/* Detailed text of the calling thread's most recent failure (never NULL). */
WAITIO_API const char *waitio_error_message(void);

WAITIO_API int waitio_test(waitio_req_t *req, int *flag);          /* *flag = 1 once complete */
WAITIO_API int waitio_wait_timeout(waitio_req_t *req, double seconds); /* WAITIO_ERR_TIMEOUT: still pending */
/* Waits for all; returns WAITIO_SUCCESS or the first error (each status holds its own). */
WAITIO_API int waitio_waitall(int count, waitio_req_t reqs[]);
/* Waits for one active request; *index = its position, or WAITIO_UNDEFINED if none active. */
WAITIO_API int waitio_waitany(int count, waitio_req_t reqs[], int *index);
WAITIO_API int waitio_cancel(waitio_req_t *req);                    /* receives not yet matched only */
/* Probes for a message a receive with (grp, src, tag) would take — WAITIO_ANY_SOURCE and
 * WAITIO_ANY_TAG allowed — without receiving it: it stays queued, and the next matching receive
 * takes it. *status gets its source (group rank), tag and length (len; error 0). iprobe makes one
 * progress round and sets *flag; probe waits until such a message is there (or the named source
 * is lost: its error). status may be NULL. */
WAITIO_API int waitio_iprobe(waitio_group_t grp, int src, unsigned long tag, int *flag,
                             waitio_status_t *status);
WAITIO_API int waitio_probe(waitio_group_t grp, int src, unsigned long tag, waitio_status_t *status);

WAITIO_API int waitio_local_rank(int *rankp);     /* rank of this process inside its PB */
WAITIO_API int waitio_local_size(int *sizep);     /* number of processes of this PB */
WAITIO_API int waitio_group_free(waitio_group_t grp);
/* Global process index of `rank` of `grp` (PB offsets + PB-local rank); for tools. */
WAITIO_API int waitio_group_member(waitio_group_t grp, int rank, int *pbid, int *local_rank);
WAITIO_API int waitio_initialized(void);          /* 1 between successful init and finalize */
WAITIO_API const char *waitio_version(void);
/* The transports built into this library, comma-separated in the default order of preference
 * (e.g. "shm,ucx,tcp,file"): what WAITIO_TRANSPORTS may name. */
WAITIO_API const char *waitio_transports_built(void);
/* Switches to the "multiple" thread level: from now on any number of threads may call WaitIO
 * at the same time (every entry point takes one process-wide lock; a blocking wait gives it away
 * between its progress rounds, so a thread waiting for another process never keeps this
 * process's other threads from making the progress that process waits for). Call it before, or
 * after, waitio_init, but before a second thread calls WaitIO; it stays on (finalize included).
 * Requests are each owned by one thread: two threads must not wait on or test the same request,
 * and collectives on one group are not run by two threads at once. Returns WAITIO_SUCCESS. */
WAITIO_API int waitio_thread_multiple(void);

#ifdef __cplusplus
}
#endif
#endif /* WAITIO_H */
