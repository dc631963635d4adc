/*
 * ucx_sym.c — loads UCX on demand: dlopen of libucp.so.0 (WAITIO_UCX_LIBRARY names another, e.g.
 * a site's UCX under its own prefix) the first time the ucx transport is opened or waitio-info
 * describes UCX, and fills the table of UCX's functions (ucx_sym.h) with dlsym. A process that
 * uses only shm, tcp or file never maps UCX's libraries, which the dynamic linker would
 * otherwise load, relocate and initialise at every process start (issue 29, docs/scale.md).
 *
 * The library is opened RTLD_GLOBAL, as a link against it would have placed it: UCX loads its
 * own modules (libuct_ib, libucm_cuda, ...) later, and they expect UCX's symbols in the global
 * scope. It is never closed: UCM's memory hooks (ucx_rcache.c) and UCX's global state stay for
 * the process's life, as they did when libwaitio was linked against UCX.
 */
#define WIO_LOG_SUBSYS WIO_SUB_UCX /* this file logs as "ucx" (WAITIO_LOG=ucx=LEVEL) */
#define WIO_UCX_SYM_NO_RENAME      /* the table's members by their own names (offsetof) */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "transport/ucx_sym.h"
#include "core/common.h"
#include "core/settings.h"

#define UCX_DEFAULT_LIBRARY "libucp.so.0"

wio_ucx_syms wio_ucx_sym;

static const struct {
    const char *name;
    size_t off;
} entries[] = {
#define WIO_UCX_ENTRY(name) {#name, offsetof(wio_ucx_syms, name)},
    WIO_UCX_FUNCS(WIO_UCX_ENTRY)
#undef WIO_UCX_ENTRY
};

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int load_failed;
static char load_path[512];
static char load_why[512];
static char load_msg[1100]; /* "UCX library NAME could not be loaded: WHY", made once */

/* Every entry from h, into a local table first: wio_ucx_sym is either complete or untouched. */
static int resolve(void *h)
{
    wio_ucx_syms tab;
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
        dlerror();
        void *f = dlsym(h, entries[i].name);
        if (!f) {
            const char *e = dlerror(); /* "...: undefined symbol: NAME" */
            if (e)
                snprintf(load_why, sizeof load_why, "%s", e);
            else
                snprintf(load_why, sizeof load_why, "it has no %s", entries[i].name);
            return -1;
        }
        memcpy((char *)&tab + entries[i].off, &f, sizeof f);
    }
    wio_ucx_sym = tab;
    return 0;
}

static void try_load(void)
{
    const char *path = wio_setting_str("WAITIO_UCX_LIBRARY", NULL);
    if (!path || !*path)
        path = UCX_DEFAULT_LIBRARY;
    snprintf(load_path, sizeof load_path, "%s", path);
    void *h = dlopen(load_path, RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(load_why, sizeof load_why, "%s", e ? e : "dlopen failed");
        load_failed = 1;
        return;
    }
    if (resolve(h) != 0) {
        /* not closed: the library's constructors ran and may have installed hooks */
        load_failed = 1;
        return;
    }
    wio_debug("UCX loaded from %s", load_path);
}

/* pthread_once's routine: the outcome, and on failure the message every caller reports */
static void load(void)
{
    try_load();
    if (load_failed)
        snprintf(load_msg, sizeof load_msg, "UCX library %s could not be loaded: %s", load_path, load_why);
}

int wio_ucx_load(void)
{
    pthread_once(&load_once, load);
    if (load_failed)
        return wio_fail(WAITIO_ERR_ENV, "%s (WAITIO_UCX_LIBRARY names the library; or leave ucx out "
                        "of WAITIO_TRANSPORTS)", wio_ucx_load_error());
    return 0;
}

const char *wio_ucx_load_error(void)
{
    pthread_once(&load_once, load);
    return load_failed ? load_msg : NULL;
}
