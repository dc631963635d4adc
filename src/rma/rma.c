/*
 * rma.c — the one-sided layer's state per engine: created at waitio_init (so that RMA frames from
 * peers are answered even before this process made a window), its configuration from the
 * environment, the per-peer records, the engine hooks, and its end at finalize.
 */
#define WIO_LOG_SUBSYS WIO_SUB_RMA /* this file logs as "rma" (WAITIO_LOG=rma=LEVEL) */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/settings.h"
#include "gpu/gpu.h"
#include "rma/rma.h"

#define DEFAULT_MAX_INFLIGHT 256
#define DEFAULT_INTERVAL_US 1000.0

static void hook_peer_lost(void *ctx, uint32_t peer, int err) { wio_am_peer_lost(ctx, peer, err); }

static const wio_engine_ext rma_hooks = {
    .frame_begin = wio_am_frame_begin,
    .frame_end = wio_am_frame_end,
    .peer_lost = hook_peer_lost,
    .deferred = wio_rpc_deferred,
};

/* Reads a variable the way config.c does: unset is the default, set but malformed is logged and
 * ignored (the layer is created inside waitio_init, which has succeeded by then). */
static double env_number(const char *name, double lo, double hi, double dflt)
{
    const char *v = wio_env(name);
    if (!v || !*v)
        return dflt;
    char *end;
    double x = strtod(v, &end);
    if (end == v || *end || !(x >= lo && x <= hi)) {
        wio_warn("%s=%s is not a number in [%g, %g]; using %g", name, v, lo, hi, dflt);
        return dflt;
    }
    return x;
}

/* A size in bytes (suffixes as config.c takes them: 64M, 1G), the same way. */
static size_t env_bytes(const char *name, size_t lo, size_t dflt)
{
    const char *v = wio_env(name);
    size_t x;
    if (!v || !*v)
        return dflt;
    if (wio_parse_size(v, &x) != 0 || x < lo) {
        wio_warn("%s=%s is not a size of at least %zu bytes; using %zu", name, v, lo, dflt);
        return dflt;
    }
    return x;
}

static int env_mode(const char *name, int dflt)
{
    const char *v = wio_env(name);
    if (!v || !*v)
        return dflt;
    if (!strcmp(v, "auto"))
        return -1;
    if (!strcmp(v, "0") || !strcmp(v, "1"))
        return v[0] - '0';
    wio_warn("%s=%s: expected 0, 1 or auto; using %s", name, v, dflt < 0 ? "auto" : dflt ? "1" : "0");
    return dflt;
}

void wio_rma_attach(wio_engine *e)
{
    wio_rma *r = calloc(1, sizeof *r);
    wio_rma_peer **peers = calloc(e->nprocs_total ? e->nprocs_total : 1, sizeof *peers);
    if (!r || !peers) {
        free(r);
        free(peers);
        wio_warn("out of memory: one-sided operations unavailable");
        return;
    }
    r->e = e;
    r->peers = peers;
    wio_list_init(&r->calls);
    r->chunk = e->cfg.chunk_size;
    r->max_inflight = (uint32_t)env_number("WAITIO_RMA_MAX_INFLIGHT", 1, 1 << 20, DEFAULT_MAX_INFLIGHT);
    /* what one origin may make us hold (am.c): twice what max_inflight calls with the largest
     * arguments or replies can, so that an origin within the limit set for the job never trips it */
    r->max_queued = env_bytes("WAITIO_RMA_MAX_QUEUED", 1u << 20,
                              (size_t)2 * r->max_inflight * (WAITIO_RPC_REPLY_MAX + 4096));
    wio_list_init(&r->borrowed);
    r->direct = env_mode("WAITIO_RMA_DIRECT", 1) != 0;
    /* WAITIO_RMA_RDMA=0: no window registered with the transport's RDMA (rdma.c), every
     * operation as frames (for comparing, and a way out should a fabric's RDMA misbehave) */
    r->rdma = env_mode("WAITIO_RMA_RDMA", 1) != 0;
    r->thread_mode = env_mode("WAITIO_PROGRESS_THREAD", -1);
    r->thread_interval = env_number("WAITIO_PROGRESS_INTERVAL_US", 10, 1e6, DEFAULT_INTERVAL_US) * 1e-6;
    r->origin_checks = env_mode("WAITIO_RMA_TEST_NO_ORIGIN_CHECKS", 0) != 1;
    long page = sysconf(_SC_PAGESIZE);
    r->page = page > 0 ? (size_t)page : 4096;
    e->ext = &rma_hooks;
    e->ext_ctx = r;
    if (r->thread_mode == 1 && wio_progress_thread_start(r) != 0)
        wio_warn("WAITIO_PROGRESS_THREAD=1: %s", waitio_error_message());
}

/* Before the engine's finalize: the thread stops, this process's operations complete, windows
 * and handlers go. The layer stays attached while the engine says goodbye, so that frames still
 * arriving are answered (with errors) instead of breaking the connection; wio_rma_free follows. */
void wio_rma_finalize(wio_engine *e)
{
    wio_rma *r = e->ext_ctx;
    if (!r)
        return;
    wio_progress_thread_stop(r); /* first: from here on only the caller's thread runs */
    wio_debug("finalize: one-sided: %llu operations on mapped memory, %llu by single copy, %llu as "
              "frames, %llu over RDMA (%llu of them direct, %llu refused by it: as frames); %llu requests served; "
              "%llu through CUDA IPC",
              (unsigned long long)r->ops_mapped, (unsigned long long)r->ops_copy, (unsigned long long)r->ops_frames,
              (unsigned long long)r->ops_rdma, (unsigned long long)r->ops_rdma_direct,
              (unsigned long long)r->ops_rdma_fallback,
              (unsigned long long)r->served, (unsigned long long)r->ops_ipc);
    (void)wio_am_quiet(r);
    wio_fut_free_all(r);
    wio_win_retire_all(r);
    wio_rpc_free_all(r);
}

void wio_rma_free(wio_engine *e)
{
    wio_rma *r = e->ext_ctx;
    if (!r)
        return;
    wio_rpc_free_all(r); /* calls that arrived during the engine's finalize */
    wio_win_destroy_all(r);
    for (size_t i = 0; i < r->nimplicit; i++)
        if (wio_req_lookup(e, r->implicit_ids[i]) == r->implicit[i])
            wio_req_release(e, r->implicit[i]);
    free(r->implicit);
    free(r->implicit_ids);
    for (uint32_t i = 0; i < e->nprocs_total; i++) {
        if (r->peers[i])
            free(r->peers[i]->rx_stage);
        free(r->peers[i]);
    }
    free(r->peers);
    e->ext = NULL;
    e->ext_ctx = NULL;
    e->ext_work = 0;
    free(r);
}

wio_rma *wio_rma_get(void)
{
    wio_engine *e = wio_engine_current;
    if (!e) {
        wio_fail(WAITIO_ERR_STATE, "WaitIO is not initialised (call waitio_init first)");
        return NULL;
    }
    if (!e->ext_ctx)
        wio_fail(WAITIO_ERR_NOMEM, "one-sided operations unavailable (out of memory at init)");
    return e->ext_ctx;
}

wio_rma_peer *wio_rma_peer_get(wio_rma *r, uint32_t pid)
{
    if (!r->peers[pid])
        r->peers[pid] = calloc(1, sizeof(wio_rma_peer));
    return r->peers[pid];
}

static int req_done(void *arg) { return ((wio_req_impl *)arg)->state == WIO_RS_DONE; }

int wio_rma_wait(wio_rma *r, wio_req_impl *q)
{
    int rc = q->state == WIO_RS_DONE ? 0 : wio_engine_wait_until(r->e, req_done, q, 0);
    if (rc)
        return rc; /* a progress failure: the request stays (finalize releases the pool) */
    rc = q->status.error;
    if (rc)
        wio_engine_explain(r->e, q);
    wio_req_release(r->e, q);
    return rc;
}

int wio_rma_mem_device(const void *p, size_t len, int *device)
{
    *device = 0;
    if (!p || !len)
        return 0;
    wio_mem_kind kind = WIO_MEM_HOST;
    int rc = wio_gpu_mem_kind(p, len, &kind, NULL);
    if (rc)
        return rc;
    *device = kind == WIO_MEM_CUDA;
    return 0;
}
