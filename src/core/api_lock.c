/* api_lock.c — the public API's lock while a progress thread runs (see api_lock.h).
 *
 * A plain (non-recursive) mutex with the nesting counted per thread: an entry point called from
 * another one (waitio_waitall -> waitio_wait, a remote procedure call handler run by the progress
 * thread calling the API) only counts. The counter is initial-exec TLS (read through %fs, not
 * through __tls_get_addr): a lock/unlock pair costs about 90 instructions (callgrind; 140 with a
 * recursive mutex). */
#include <pthread.h>
#include "core/api_lock.h"

int wio_api_locking;
unsigned long wio_api_epoch;
void (*wio_api_on_enter)(void);

static pthread_mutex_t api_mutex = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local int depth __attribute__((tls_model("initial-exec")));

int wio_api_lock_slow(void)
{
    if (depth++ == 0) {
        pthread_mutex_lock(&api_mutex);
        wio_api_epoch++;
        if (wio_api_on_enter)
            wio_api_on_enter();
    }
    return 1;
}

void wio_api_unlock_slow(void)
{
    if (--depth == 0)
        pthread_mutex_unlock(&api_mutex);
}

/* The progress thread holds the lock as one outermost entry that is not the user's. */
void wio_api_mutex_lock(void)
{
    pthread_mutex_lock(&api_mutex);
    depth = 1;
}

void wio_api_mutex_unlock(void)
{
    depth = 0;
    pthread_mutex_unlock(&api_mutex);
}
