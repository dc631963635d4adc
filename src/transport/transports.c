/*
 * transports.c — the table of transports built into this library, in the default order of
 * preference (the fastest first). Adding a transport: its file, and one line here.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "waitio.h"
#include "transport/transport.h"
#include "transport/file.h"
#include "transport/shm.h"
#include "transport/tcp.h"
#include "transport/ucx.h"

const wio_transport_ops *const wio_transports[] = {
    &wio_transport_shm,
#ifdef WAITIO_HAVE_UCX
    &wio_transport_ucx,
#endif
    &wio_transport_tcp,
    &wio_transport_file,
    NULL,
};

const wio_transport_ops *wio_transport_find(const char *name)
{
    for (int i = 0; wio_transports[i]; i++)
        if (strcmp(wio_transports[i]->name, name) == 0)
            return wio_transports[i];
    return NULL;
}

static char built_names[64];

static void list_built_names(void)
{
    size_t used = 0;
    for (int i = 0; wio_transports[i]; i++) {
        int n = snprintf(built_names + used, sizeof built_names - used, "%s%s", used ? "," : "",
                         wio_transports[i]->name);
        if (n < 0 || (size_t)n >= sizeof built_names - used)
            break;
        used += (size_t)n;
    }
}

const char *waitio_transports_built(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, list_built_names);
    return built_names;
}
