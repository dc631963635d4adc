/* api_lock.c — the public API's lock while a progress thread runs (see api_lock.h). */
#include <pthread.h>
#include "core/api_lock.h"

int wio_api_locking;
unsigned long wio_api_epoch;
void (*wio_api_on_enter)(void);

static pthread_mutex_t api_mutex = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static _Thread_local int depth;

int wio_api_lock_slow(void)
{
    pthread_mutex_lock(&api_mutex);
    if (depth++ == 0) {
        wio_api_epoch++;
        if (wio_api_on_enter)
            wio_api_on_enter();
    }
    return 1;
}

void wio_api_unlock_slow(void)
{
    depth--;
    pthread_mutex_unlock(&api_mutex);
}

void wio_api_mutex_lock(void) { pthread_mutex_lock(&api_mutex); }
void wio_api_mutex_unlock(void) { pthread_mutex_unlock(&api_mutex); }
