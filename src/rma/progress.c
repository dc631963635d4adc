/*
 * progress.c — the progress thread (WAITIO_PROGRESS_THREAD): serves one-sided requests, calls
 * and two-sided protocol steps while the user's thread computes, so a target need not call
 * WaitIO for a get, an atomic or a call on it to complete. docs/one-sided.md, "Progress".
 *
 * While it runs, every API entry point takes the process-wide lock (core/api_lock.h; in the
 * "multiple" thread level they take it anyway, and stopping the thread leaves it on). The
 * thread never spins and never competes with a user thread that is making progress itself:
 *   - it takes the lock, runs one progress round (a forced epoll included) and looks at the
 *     count of user entries; if the user entered the library since its last look, it naps for
 *     WAITIO_PROGRESS_INTERVAL_US (default 1 ms) at a time, looking at the count without the
 *     lock, until a whole interval passes with no entry — the user's own calls progress, and a
 *     busy user never meets the thread at the lock;
 *   - otherwise it arms the doorbells of the shared-memory rings (the poller's sleep
 *     handshake), releases the lock and sleeps in poll() on the poller's epoll descriptor and
 *     its own eventfd; a frame on a socket, a doorbell or a wake-up ends the sleep.
 * A user entering while the thread sleeps armed disarms the doorbells (so that its own
 * traffic does not ring them) and wakes the thread once, which then naps until the user has
 * been away for an interval. The cost while the user is in the library is one uncontended
 * lock per call and a wake-up of the thread per interval.
 */
#define WIO_LOG_SUBSYS WIO_SUB_RMA /* this file logs as "rma" (WAITIO_LOG=rma=LEVEL) */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include "core/api_lock.h"
#include "rma/rma.h"

#define SLEEP_MS 100 /* longest sleep in poll() (the stop flag is also signalled) */

typedef struct wio_progress_thread {
    wio_rma *r;
    pthread_t tid;
    int evfd;
    atomic_int stop;
    int armed;               /* doorbells armed for the thread's sleep (under the lock) */
} wio_progress_thread;

static wio_progress_thread *running_thread; /* the one the entry hook disarms */

static void wake(wio_progress_thread *t)
{
    uint64_t one = 1;
    ssize_t n = write(t->evfd, &one, sizeof one);
    (void)n;
}

static void drain(wio_progress_thread *t)
{
    uint64_t v;
    ssize_t n = read(t->evfd, &v, sizeof v);
    (void)n;
}

/* A user thread's outermost entry, under the lock. */
static void on_user_enter(void)
{
    wio_progress_thread *t = running_thread;
    if (t && t->armed) {
        wio_poller_sleep_end(t->r->e->poller);
        t->armed = 0;
        wake(t);
    }
}

static void nap(wio_progress_thread *t, double seconds)
{
    struct pollfd pf = {.fd = t->evfd, .events = POLLIN};
    struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    if (ppoll(&pf, 1, &ts, NULL) > 0)
        drain(t);
}

static void *thread_main(void *arg)
{
    wio_progress_thread *t = arg;
    wio_engine *e = t->r->e;
    int logged = 0;
    wio_api_mutex_lock();
    unsigned long seen = wio_api_epoch;
    while (!atomic_load(&t->stop)) {
        wio_poller_epoll_soon(e->poller);
        int rc = wio_engine_progress(e, 0);
        if (rc) {
            if (!logged++)
                wio_warn("progress thread: %s", waitio_error_message());
            wio_api_mutex_unlock();
            nap(t, 0.1);
            wio_api_mutex_lock();
            continue;
        }
        if (wio_api_epoch != seen) { /* the user was in the library: its calls progress */
            seen = wio_api_epoch;
            wio_api_mutex_unlock();
            /* nap until a whole interval passes without a user entry, looking at the count
             * without the lock: a busy user never meets this thread at the lock */
            do {
                nap(t, t->r->thread_interval);
                unsigned long now = __atomic_load_n(&wio_api_epoch, __ATOMIC_RELAXED);
                if (now == seen)
                    break;
                seen = now;
            } while (!atomic_load(&t->stop));
            wio_api_mutex_lock();
            continue;
        }
        int timeout = wio_poller_sleep_begin(e->poller, SLEEP_MS);
        if (timeout == 0) { /* something is waiting already */
            wio_poller_sleep_end(e->poller);
            continue;
        }
        t->armed = 1;
        int epfd = wio_poller_fd(e->poller);
        wio_api_mutex_unlock();
        struct pollfd pf[2] = {{.fd = epfd, .events = POLLIN}, {.fd = t->evfd, .events = POLLIN}};
        if (poll(pf, 2, timeout) > 0 && (pf[1].revents & POLLIN))
            drain(t);
        wio_api_mutex_lock();
        if (t->armed) {
            wio_poller_sleep_end(e->poller);
            t->armed = 0;
        }
    }
    wio_api_mutex_unlock();
    return NULL;
}

int wio_progress_thread_start(wio_rma *r)
{
    if (r->thread)
        return 0;
    wio_progress_thread *t = calloc(1, sizeof *t);
    if (!t)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory starting the progress thread");
    t->r = r;
    t->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (t->evfd < 0) {
        int err = errno;
        free(t);
        return wio_fail(WAITIO_ERR_SYS, "eventfd: %s", strerror(err));
    }
    running_thread = t;
    wio_api_on_enter = on_user_enter;
    __atomic_store_n(&wio_api_locking, 1, __ATOMIC_SEQ_CST);
    /* signals stay with the user's threads */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&t->tid, NULL, thread_main, t);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc) {
        /* the "multiple" thread level keeps the lock on */
        __atomic_store_n(&wio_api_locking, __atomic_load_n(&wio_api_multiple, __ATOMIC_SEQ_CST), __ATOMIC_SEQ_CST);
        wio_api_on_enter = NULL;
        running_thread = NULL;
        close(t->evfd);
        free(t);
        return wio_fail(WAITIO_ERR_SYS, "cannot start the progress thread: %s", strerror(rc));
    }
    r->thread = t;
    wio_debug("progress thread started (%s)", r->thread_mode == 1 ? "WAITIO_PROGRESS_THREAD=1" : "auto");
    return 0;
}

void wio_progress_thread_stop(wio_rma *r)
{
    wio_progress_thread *t = r->thread;
    if (!t)
        return;
    atomic_store(&t->stop, 1);
    wake(t);
    pthread_join(t->tid, NULL);
    __atomic_store_n(&wio_api_locking, __atomic_load_n(&wio_api_multiple, __ATOMIC_SEQ_CST), __ATOMIC_SEQ_CST);
    wio_api_on_enter = NULL;
    running_thread = NULL;
    if (t->armed)
        wio_poller_sleep_end(r->e->poller);
    close(t->evfd);
    free(t);
    r->thread = NULL;
}

int wio_progress_thread_running(const wio_rma *r) { return r->thread != NULL; }

int wio_progress_thread_self(const wio_rma *r) { return r->thread && pthread_equal(pthread_self(), r->thread->tid); }

void wio_progress_thread_auto(wio_rma *r)
{
    if (r->thread_mode != -1 || r->thread)
        return;
    if (wio_progress_thread_start(r) != 0)
        wio_warn("could not start the progress thread (%s): one-sided requests are served only "
                 "inside WaitIO calls", waitio_error_message());
}
