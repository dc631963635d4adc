/*
 * api_lock.h — the process-wide lock of the public API, taken only while a progress thread runs
 * (WAITIO_PROGRESS_THREAD, src/rma/progress.c). The library is "serialized": one user thread at a
 * time. A progress thread makes a second one, so then every entry point that touches the engine
 * takes this lock (nested calls only count); with no thread the cost is one load and a predictable branch.
 *
 *   int waitio_something(...) { WIO_API_GUARD(); ... every return unlocks ... }
 *
 * The thread is started as the last action of an API call and stopped before finalize runs, so
 * a call never sees the switch change under it.
 */
#ifndef WIO_API_LOCK_H
#define WIO_API_LOCK_H

/* hidden: read PC-relative, not through the GOT (one load on the unlocked path) */
extern int wio_api_locking __attribute__((visibility("hidden"))); /* nonzero while a progress thread runs */
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
