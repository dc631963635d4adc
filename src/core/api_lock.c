/* api_lock.c — the public API's lock while a progress thread runs or in the "multiple" thread
 * level (see api_lock.h).
 *
 * A plain (non-recursive) mutex, with the owner and the nesting kept beside it: an entry point
 * called from another one (waitio_waitall -> waitio_wait, a remote procedure call handler run by
 * the progress thread calling the API) only counts. The owner is read without the lock: only the
 * owning thread ever stores its own id there, so a thread that reads its own id holds the lock.
 * No thread-local storage: initial-exec TLS cannot be relied on in a library that is dlopen'ed
 * (the Python binding's adapter loading ran out of static TLS), and general-dynamic TLS costs a
 * call per access. Callgrind: about 100 instructions per lock/unlock pair (140 with a recursive
 * pthread mutex).
 *
 * The count of threads blocked on the mutex (taken with a trylock first, so an uncontended entry
 * pays nothing for it) tells a spinning waiter whether to give the lock away at all; a glibc
 * mutex is not fair, so a waiter that releases it and takes it back at once would mostly win
 * again: it yields until one of the blocked threads got in (bounded). */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include "waitio.h"
#include "core/api_lock.h"

_Static_assert(sizeof(pthread_t) <= sizeof(unsigned long), "pthread_t fits an unsigned long");

int wio_api_locking;
int wio_api_multiple;
unsigned long wio_api_epoch;
void (*wio_api_on_enter)(void);

static pthread_mutex_t api_mutex = PTHREAD_MUTEX_INITIALIZER;
static _Atomic unsigned long owner; /* the holder's pthread_self(), 0 when free */
static int depth;                   /* the holder's nesting (written by the holder only) */
static atomic_int blocked;          /* threads blocked in pthread_mutex_lock on api_mutex */

static unsigned long self_id(void) { return (unsigned long)pthread_self(); }

static void mutex_take(void)
{
    if (pthread_mutex_trylock(&api_mutex) == 0)
        return;
    atomic_fetch_add_explicit(&blocked, 1, memory_order_relaxed);
    pthread_mutex_lock(&api_mutex);
    atomic_fetch_sub_explicit(&blocked, 1, memory_order_relaxed);
}

/* The outermost entry of a user thread, the mutex just taken. */
static void entered(int nesting)
{
    atomic_store_explicit(&owner, self_id(), memory_order_relaxed);
    depth = nesting;
    /* read without the lock by the progress thread while it naps */
    __atomic_store_n(&wio_api_epoch, wio_api_epoch + 1, __ATOMIC_RELAXED);
    if (wio_api_on_enter)
        wio_api_on_enter();
}

int wio_api_lock_slow(void)
{
    if (atomic_load_explicit(&owner, memory_order_relaxed) == self_id()) {
        depth++;
        return 1;
    }
    mutex_take();
    entered(1);
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
    mutex_take();
    atomic_store_explicit(&owner, self_id(), memory_order_relaxed);
    depth = 1;
}

void wio_api_mutex_unlock(void)
{
    depth = 0;
    atomic_store_explicit(&owner, 0, memory_order_relaxed);
    pthread_mutex_unlock(&api_mutex);
}

void wio_api_set_multiple(void)
{
    __atomic_store_n(&wio_api_multiple, 1, __ATOMIC_SEQ_CST);
    __atomic_store_n(&wio_api_locking, 1, __ATOMIC_SEQ_CST);
}

int waitio_thread_multiple(void)
{
    wio_api_set_multiple();
    return WAITIO_SUCCESS;
}

int wio_api_held(void)
{
    return __atomic_load_n(&wio_api_multiple, __ATOMIC_RELAXED) &&
           atomic_load_explicit(&owner, memory_order_relaxed) == self_id();
}

int wio_api_contended(void) { return atomic_load_explicit(&blocked, memory_order_relaxed) > 0; }

/* How many times a yielding waiter lets the scheduler run a blocked thread before it takes the
 * lock back anyway (the blocked one may not be runnable yet: woken, not scheduled). */
#define HANDOFF_YIELDS 8

int wio_api_yield_begin(void)
{
    if (!__atomic_load_n(&wio_api_multiple, __ATOMIC_RELAXED) ||
        atomic_load_explicit(&owner, memory_order_relaxed) != self_id())
        return 0;
    int d = depth;
    unsigned long epoch = wio_api_epoch;
    int waiting = atomic_load_explicit(&blocked, memory_order_relaxed);
    depth = 0;
    atomic_store_explicit(&owner, 0, memory_order_relaxed);
    pthread_mutex_unlock(&api_mutex);
    /* a blocked thread was woken by the unlock: let it in before taking the lock back */
    for (int i = 0; waiting > 0 && i < HANDOFF_YIELDS; i++) {
        if (__atomic_load_n(&wio_api_epoch, __ATOMIC_RELAXED) != epoch ||
            atomic_load_explicit(&blocked, memory_order_relaxed) < waiting)
            break;
        sched_yield();
    }
    return d;
}

void wio_api_yield_end(int d)
{
    if (!d)
        return;
    mutex_take();
    entered(d);
}

/* ---- the bell of the threads that wait without the lock ---- */

static int bell = -1;
static pthread_once_t bell_once = PTHREAD_ONCE_INIT;

static void bell_make(void) { bell = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

int wio_api_bell_fd(void)
{
    pthread_once(&bell_once, bell_make);
    return bell;
}

void wio_api_bell_ring(void)
{
    uint64_t one = 1;
    if (wio_api_bell_fd() >= 0) {
        ssize_t n = write(bell, &one, sizeof one);
        (void)n;
    }
}

void wio_api_bell_drain(void)
{
    uint64_t v;
    if (wio_api_bell_fd() >= 0) {
        ssize_t n = read(bell, &v, sizeof v);
        (void)n;
    }
}
