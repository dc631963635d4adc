/* api_lock.c — the public API's lock while a progress thread runs (see api_lock.h).
 *
 * A plain (non-recursive) mutex, with the owner and the nesting kept beside it: an entry point
 * called from another one (waitio_waitall -> waitio_wait, a remote procedure call handler run by
 * the progress thread calling the API) only counts. The owner is read without the lock: only the
 * owning thread ever stores its own id there, so a thread that reads its own id holds the lock.
 * No thread-local storage: initial-exec TLS cannot be relied on in a library that is dlopen'ed
 * (the Python binding's adapter loading ran out of static TLS), and general-dynamic TLS costs a
 * call per access. Callgrind: about 100 instructions per lock/unlock pair (140 with a recursive
 * pthread mutex). */
#include <pthread.h>
#include <stdatomic.h>
#include "core/api_lock.h"

_Static_assert(sizeof(pthread_t) <= sizeof(unsigned long), "pthread_t fits an unsigned long");

int wio_api_locking;
unsigned long wio_api_epoch;
void (*wio_api_on_enter)(void);

static pthread_mutex_t api_mutex = PTHREAD_MUTEX_INITIALIZER;
static _Atomic unsigned long owner; /* the holder's pthread_self(), 0 when free */
static int depth;                   /* the holder's nesting (written by the holder only) */

static unsigned long self_id(void) { return (unsigned long)pthread_self(); }

int wio_api_lock_slow(void)
{
    unsigned long me = self_id();
    if (atomic_load_explicit(&owner, memory_order_relaxed) == me) {
        depth++;
        return 1;
    }
    pthread_mutex_lock(&api_mutex);
    atomic_store_explicit(&owner, me, memory_order_relaxed);
    depth = 1;
    /* read without the lock by the progress thread while it naps */
    __atomic_store_n(&wio_api_epoch, wio_api_epoch + 1, __ATOMIC_RELAXED);
    if (wio_api_on_enter)
        wio_api_on_enter();
    return 1;
}

void wio_api_unlock_slow(void)
{
    if (--depth > 0)
        return;
    atomic_store_explicit(&owner, 0, memory_order_relaxed);
    pthread_mutex_unlock(&api_mutex);
}

/* The progress thread holds the lock as one outermost entry that is not the user's. */
void wio_api_mutex_lock(void)
{
    pthread_mutex_lock(&api_mutex);
    atomic_store_explicit(&owner, self_id(), memory_order_relaxed);
    depth = 1;
}

void wio_api_mutex_unlock(void)
{
    depth = 0;
    atomic_store_explicit(&owner, 0, memory_order_relaxed);
    pthread_mutex_unlock(&api_mutex);
}
