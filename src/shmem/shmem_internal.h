/*
 * shmem_internal.h — the OpenSHMEM layer's state and its address resolution. The layer uses only
 * WaitIO's public API (waitio.h, waitio_mpi.h, waitio_rma.h): libwaitio_shmem is a library of
 * its own on top of libwaitio. Files of src/shmem/:
 *   shmem.c   set-up, queries, the symmetric heap, barriers, global exit
 *   ctx.c     contexts, RMA and put-with-signal of every context, fence and quiet
 *   amo.c     atomics
 *   sync.c    wait_until / test, signals, locks
 *   team.c    teams (world, shared, splits), their WaitIO groups, active sets
 *   coll.c    collectives on any team and the deprecated active-set collectives
 *
 * A symmetric address is in the heap window (one offset names the object on every PE) or in the
 * executable's data window (global and static variables). For a PE whose heap part is mapped
 * here (S.heap_ptr[pe]), heap RMA is memcpy and atomics are CPU atomics, with no call into
 * WaitIO at all; everything else goes through waitio_put / waitio_get / waitio_atomic. A part
 * that WaitIO maps later (the ucx transport maps a PE's part of this host through UCX's shared
 * memory at the first operation: waitio_win_ptr then gives it) joins that fast path
 * (S.fast_ptr), while shmem_ptr and SHMEM_TEAM_SHARED keep what was mapped at shmem_init.
 */
#ifndef WIO_SHMEM_INTERNAL_H
#define WIO_SHMEM_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
/* first: the library defines and calls the pshmem_ names (tools/gen-pshmem.py) */
#include "shmem/pshmem_rename.h"
#include "shmem.h"
#include "waitio_mpi.h"
#include "waitio_rma.h"

#if defined(__GNUC__)
#define WIO_SH_HIDDEN __attribute__((visibility("hidden")))
#define WIO_SH_LIKELY(x) __builtin_expect(!!(x), 1)
#else
#define WIO_SH_HIDDEN
#define WIO_SH_LIKELY(x) (x)
#endif

/* A team (team.c owns it): team PE t is world PE pes[t]; its collectives run on grp. The world
 * team has pes == NULL (identity). A WaitIO group numbers its members in world-PE order; a team
 * whose PEs are not increasing (a negative stride) has grank/tpe to translate (else NULL). The
 * deprecated active-set collectives use teams too (key: their PE_start, logPE_stride, PE_size). */
struct waitio_shmem_team {
    int size;                  /* PEs in the team (0: not set up yet) */
    int my_pe;                 /* this PE's number in it */
    int *pes;                  /* team PE -> world PE; NULL: the identity (world team) */
    waitio_group_t grp;        /* its WaitIO group, for collectives */
    int *grank;                /* team PE -> group rank; NULL: the same number */
    int *tpe;                  /* group rank -> team PE; NULL: the same number */
    shmem_team_config_t config;
    int as_start, as_log, as_size; /* an active set's key (as_size 0: a team) */
    struct waitio_shmem_team *next; /* team.c's list of the teams it created */
};

/* team.c: the predefined teams (from init_layer, no communication) and their end (finalize). */
void wio_shmem_teams_init(void) WIO_SH_HIDDEN;
void wio_shmem_teams_fini(void) WIO_SH_HIDDEN;
/* The team of an active set (created on first use, cached); exits when this PE is not in it. */
struct waitio_shmem_team *wio_shmem_active_set(int PE_start, int logPE_stride, int PE_size,
                                               const char *what) WIO_SH_HIDDEN;

/* A context (ctx.c owns it): operations through WaitIO since its last quiet are tracked per
 * context, so its quiet completes only what it started. Every context counts them (a quiet with
 * nothing counted since the last one is a fence); the default context (global) completes them
 * with waitio_quiet, any other one keeps the set of targets it sent to (flushed one by one by its
 * quiet). Both keep the requests of their fetching _nbi atomics. Operations that completed at
 * once (a mapped heap part) are not tracked at all. */
struct waitio_shmem_ctx {
    long options;              /* SHMEM_CTX_SERIALIZED | PRIVATE | NOSTORE */
    struct waitio_shmem_team *team; /* PE numbers of its operations are this team's */
    const int *pes;            /* team->pes, copied: one load less on every call (NULL: world) */
    int global;                /* the default context */
    atomic_ulong issued;       /* operations (and requests) started through WaitIO */
    atomic_ulong quieted;      /* how many of them the last finished quiet covered */
    pthread_mutex_t lock;      /* targets and requests of a shared context (PRIVATE: unused) */
    atomic_uchar *mark;        /* per world PE: 1 while in targets[] */
    int *targets;              /* world PEs sent to since the last quiet */
    atomic_int ntargets;
    waitio_req_t *reqs;        /* fetching _nbi atomics not yet waited for */
    atomic_size_t nreqs;
    size_t reqcap;
};

/* Team PE -> world PE; -1 when pe is outside the team. */
static inline int wio_shmem_team_world_pe(const struct waitio_shmem_team *t, int pe)
{
    if ((unsigned)pe >= (unsigned)t->size)
        return -1;
    return t->pes ? t->pes[pe] : pe;
}

typedef struct wio_shmem_state {
    int ready;
    int owns_waitio;           /* shmem_init initialised WaitIO: shmem_finalize finalizes it */
    int me, npes;
    waitio_group_t world;
    waitio_win_t heap, data;
    uintptr_t heap_base;
    size_t heap_size;
    uintptr_t data_base;
    size_t data_size;
    uint8_t **heap_ptr;        /* per PE: its heap part mapped here at shmem_init, or NULL */
    uint8_t **fast_ptr;        /* heap_ptr and the parts mapped since (wio_shmem_learn) */
    waitio_win_t dheap;        /* the device symmetric heap (SHMEMX_MALLOC_DEVICE), or NULL until
                                * the first device allocation: GPU memory, never mapped here */
    uintptr_t dheap_base;
    size_t dheap_size;
} wio_shmem_state;

extern wio_shmem_state wio_shmem WIO_SH_HIDDEN;
#define S wio_shmem

enum { WIO_SYM_NONE = 0, WIO_SYM_HEAP, WIO_SYM_DATA };

/* Prints "shmem: PE n: ..." with WaitIO's detail and exits with status 1. */
void wio_shmem_fatal(const char *fmt, ...) WIO_SH_HIDDEN __attribute__((noreturn, format(printf, 1, 2)));
void wio_shmem_check(int rc, const char *what) WIO_SH_HIDDEN;
void wio_shmem_need_init(void) WIO_SH_HIDDEN;
/* Spins, yields, then sleeps in short steps until done(arg): between looks, WaitIO progresses. */
void wio_shmem_wait(int (*done)(void *), void *arg) WIO_SH_HIDDEN;

/* The window and offset of [addr, addr+len) (len bytes must fit); WIO_SYM_NONE if not symmetric. */
static inline int wio_shmem_resolve(const void *addr, size_t len, waitio_win_t *win, size_t *off)
{
    uintptr_t a = (uintptr_t)addr;
    if (a - S.heap_base < S.heap_size && len <= S.heap_size - (a - S.heap_base)) {
        *win = S.heap;
        *off = a - S.heap_base;
        return WIO_SYM_HEAP;
    }
    if (a - S.data_base < S.data_size && len <= S.data_size - (a - S.data_base)) {
        *win = S.data;
        *off = a - S.data_base;
        return WIO_SYM_DATA;
    }
    if (a - S.dheap_base < S.dheap_size && len <= S.dheap_size - (a - S.dheap_base)) {
        *win = S.dheap; /* device memory: every access through WaitIO (its owner copies by GPU) */
        *off = a - S.dheap_base;
        return WIO_SYM_HEAP;
    }
    return WIO_SYM_NONE;
}

/* The mapped address of addr's heap object on pe, or NULL (not mapped, not heap, out of range). */
#if defined(__GNUC__)
__attribute__((always_inline)) /* the fast path of every RMA and atomic call */
#endif
static inline uint8_t *wio_shmem_direct(const void *addr, size_t len, int pe)
{
    uintptr_t off = (uintptr_t)addr - S.heap_base;
    if (WIO_SH_LIKELY((unsigned)pe < (unsigned)S.npes && off < S.heap_size && len <= S.heap_size - off) &&
        S.fast_ptr[pe])
        return S.fast_ptr[pe] + off;
    return NULL;
}

/* After an operation on PE pe's heap part through WaitIO: the part may be mapped here now. */
static inline void wio_shmem_learn(waitio_win_t w, int pe)
{
    if (w == S.heap && (unsigned)pe < (unsigned)S.npes && !S.fast_ptr[pe])
        __atomic_store_n(&S.fast_ptr[pe], (uint8_t *)waitio_win_ptr(S.heap, pe, 0), __ATOMIC_RELAXED);
}

/* Resolves or exits: the window and offset of a symmetric object, the PE checked. */
void wio_shmem_sym(const void *addr, size_t len, int pe, const char *what, waitio_win_t *win,
                   size_t *off) WIO_SH_HIDDEN;

/* ---- contexts (ctx.c) ---- */

/* The world PE of a context's PE number pe (its team's); exits when pe is outside the team. */
int wio_ctx_world_pe_slow(struct waitio_shmem_ctx *c, int pe, const char *what) WIO_SH_HIDDEN;
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline int wio_ctx_pe(struct waitio_shmem_ctx *c, int pe, const char *what)
{
    return WIO_SH_LIKELY(c->pes == NULL) ? pe : wio_ctx_world_pe_slow(c, pe, what);
}
/* Records that c started an operation through WaitIO on world PE pe (call it after starting). */
void wio_ctx_note(struct waitio_shmem_ctx *c, int pe) WIO_SH_HIDDEN;
/* Keeps the request of a fetching _nbi atomic on c (copied): its quiet waits for it. */
void wio_ctx_add_req(struct waitio_shmem_ctx *c, const waitio_req_t *req) WIO_SH_HIDDEN;
/* Nothing of c through WaitIO to world PE pe since its last quiet. */
int wio_ctx_clean(struct waitio_shmem_ctx *c, int pe) WIO_SH_HIDDEN;

#endif
