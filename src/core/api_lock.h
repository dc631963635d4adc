/*
 * api_lock.h — the process-wide lock of the public API. It is taken while a progress thread runs
 * (WAITIO_PROGRESS_THREAD, src/rma/progress.c) and, once the program asked for it, in the
 * "multiple" thread level (waitio_thread_multiple): then every entry point that touches the
 * engine takes this lock (nested calls only count); with neither, the cost is one load and a
 * predictable branch.
 *
 *   int waitio_something(...) { WIO_API_GUARD(); ... every return unlocks ... }
 *
 * The progress thread is started as the last action of an API call and stopped before finalize
 * runs, so a call never sees the switch change under it; "multiple" is switched on before the
 * program's threads call WaitIO concurrently and stays on.
 *
 * A blocking wait in the "multiple" level gives the lock away between its progress rounds
 * (wio_api_yield_begin / _end, core/engine.c wait_loop), so that a thread that waits for
 * another process never keeps the others of its process from making the progress that process
 * waits for.
 */
#ifndef WIO_API_LOCK_H
#define WIO_API_LOCK_H

/* hidden: read PC-relative, not through the GOT (one load on the unlocked path) */
extern int wio_api_locking __attribute__((visibility("hidden"))); /* nonzero: entries take the lock */
extern int wio_api_multiple __attribute__((visibility("hidden"))); /* the "multiple" level is on */
extern unsigned long wio_api_epoch;     /* outermost user entries so far (written under the lock,
                                           read with __atomic_load_n by the napping thread) */
/* Set by the progress thread: called under the lock at a user thread's outermost entry. */
extern void (*wio_api_on_enter)(void);

int wio_api_lock_slow(void);
void wio_api_unlock_slow(void);
/* The progress thread's own use of the lock (no epoch, no hook); its nested API calls (handlers)
 * only count. */
void wio_api_mutex_lock(void);
void wio_api_mutex_unlock(void);

/* Switches the "multiple" level on (idempotent; it stays on). */
void wio_api_set_multiple(void);
/* The calling thread holds the lock in the "multiple" level. */
int wio_api_held(void);
/* Threads blocked on the lock now (a waiter gives the lock away while spinning only then). */
int wio_api_contended(void);
/* Releases the lock wholly if the calling thread holds it (in the "multiple" level only);
 * returns the nesting to give wio_api_yield_end, 0 when nothing was released. */
int wio_api_yield_begin(void);
/* Takes the lock back with that nesting, as an outermost entry (0: nothing to do). */
void wio_api_yield_end(int depth);
/* Where a thread waiting without the lock sleeps beside the poller (engine.c): a descriptor
 * readable after wio_api_bell_ring, -1 if it could not be made. */
int wio_api_bell_fd(void);
void wio_api_bell_ring(void);
void wio_api_bell_drain(void);

static inline int wio_api_enter(void)
{
    return __builtin_expect(__atomic_load_n(&wio_api_locking, __ATOMIC_RELAXED), 0) ? wio_api_lock_slow() : 0;
}

static inline void wio_api_leave(int *locked)
{
    if (*locked)
        wio_api_unlock_slow();
}

#define WIO_API_GUARD() \
    int wio_api_guard_ __attribute__((cleanup(wio_api_leave), unused)) = wio_api_enter()

#endif
