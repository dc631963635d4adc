/*
 * shmem_internal.h — the OpenSHMEM layer's state and its address resolution. The layer uses only
 * WaitIO's public API (waitio.h, waitio_mpi.h, waitio_rma.h): libwaitio_shmem is a library of
 * its own on top of libwaitio. Files of src/shmem/:
 *   shmem.c   set-up, queries, the symmetric heap, RMA, ordering, barriers, global exit
 *   amo.c     atomics
 *   sync.c    wait_until / test, signals, locks
 *   coll.c    broadcast, collect, fcollect, alltoall, reductions
 *
 * A symmetric address is in the heap window (one offset names the object on every PE) or in the
 * executable's data window (global and static variables). For a PE whose heap part is mapped
 * here (S.heap_ptr[pe]), heap RMA is memcpy and atomics are CPU atomics, with no call into
 * WaitIO at all; everything else goes through waitio_put / waitio_get / waitio_atomic.
 */
#ifndef WIO_SHMEM_INTERNAL_H
#define WIO_SHMEM_INTERNAL_H

#include <stdint.h>
#include <string.h>
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
 * team has pes == NULL (identity). */
struct waitio_shmem_team {
    int size;                  /* PEs in the team (0: not set up yet) */
    int my_pe;                 /* this PE's number in it */
    int *pes;                  /* team PE -> world PE; NULL: the identity (world team) */
    waitio_group_t grp;        /* its WaitIO group, for collectives */
};

/* A context (ctx.c owns it): operations through WaitIO since its last quiet are tracked per
 * context, so its quiet completes only what it started. */
struct waitio_shmem_ctx {
    long options;              /* SHMEM_CTX_SERIALIZED | PRIVATE | NOSTORE */
    struct waitio_shmem_team *team; /* PE numbers of its operations are this team's */
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
    uint8_t **heap_ptr;        /* per PE: its heap part mapped here, or NULL */
    int *shared;               /* PEs of SHMEM_TEAM_SHARED, in PE order */
    int nshared, my_shared;
    int pending;               /* operations through WaitIO since the last quiet */
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
    return WIO_SYM_NONE;
}

/* The mapped address of addr's heap object on pe, or NULL (not mapped, not heap, out of range). */
static inline uint8_t *wio_shmem_direct(const void *addr, size_t len, int pe)
{
    uintptr_t off = (uintptr_t)addr - S.heap_base;
    if (WIO_SH_LIKELY((unsigned)pe < (unsigned)S.npes && off < S.heap_size && len <= S.heap_size - off) &&
        S.heap_ptr[pe])
        return S.heap_ptr[pe] + off;
    return NULL;
}

/* Resolves or exits: the window and offset of a symmetric object, the PE checked. */
void wio_shmem_sym(const void *addr, size_t len, int pe, const char *what, waitio_win_t *win,
                   size_t *off) WIO_SH_HIDDEN;

#endif
