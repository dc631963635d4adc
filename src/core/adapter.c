/*
 * adapter.c — the registry of the per-MPI adapter (waitio_adapter.h). The core calls through it
 * and never links MPI itself.
 */
#include "waitio_adapter.h"
#include "core/engine.h"

static const waitio_adapter_ops *adapter;
static waitio_adapter_probe_fn probe;

int waitio_adapter_register(const waitio_adapter_ops *ops)
{
    adapter = ops;
    return 0;
}

void waitio_adapter_set_probe(waitio_adapter_probe_fn fn) { probe = fn; }

const waitio_adapter_ops *wio_adapter(void) { return adapter; }

int wio_adapter_probe(int flags, double timeout)
{
    if (!probe || adapter)
        return 0;
    char why[512] = "";
    int rc = probe(flags, timeout, why, sizeof why);
    if (rc)
        return wio_fail(rc, "%s", why[0] ? why : "the MPI adapter refused to start");
    return 0;
}

void wio_adapter_finalize(void)
{
    if (adapter && adapter->finalize)
        adapter->finalize(adapter->ctx); /* unregisters itself if it finalized MPI */
}
