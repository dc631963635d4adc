/*
 * api.c — the public C API of waitio.h: argument checks, the engine's lifetime (init, finalize),
 * and the translation between caller-owned waitio_req_t and the engine's pooled requests.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "boot/boot.h"
#include "core/api_lock.h"
#include "core/engine.h"
#include "core/settings.h"
#include "core/trace.h"
#include "gpu/gpu.h"
#include "rma/rma.h"
#include "waitio_adapter.h"
#include "waitio_version.h"

#define DEFAULT_INIT_TIMEOUT 60

/* Fortran programs hold a request in INTEGER(4) req(22) (SPEC §8). */
_Static_assert(sizeof(waitio_req_t) <= 22 * 4, "waitio_req_t must fit WAITIO_REQUEST_SIZE");

static wio_engine *engine_or_fail(void)
{
    if (!wio_engine_current)
        wio_fail(WAITIO_ERR_STATE, "WaitIO is not initialised (call waitio_init first)");
    return wio_engine_current;
}

static int engine_setup(wio_engine *e, int timeout)
{
    int rc;
    wio_list_init(&e->groups);
    wio_mq_init(&e->mq);
    wio_list_init(&e->unexp_free);
    double boot_timeout = timeout > 0 ? timeout : DEFAULT_INIT_TIMEOUT;
    if ((rc = wio_config_load(&e->cfg)) || (rc = wio_job_configure(&e->cfg)))
        return rc;
    wio_log_set_identity(e->cfg.pbid, e->cfg.local_rank);
    wio_job_notice(&e->cfg);
    e->gpu_ipc = wio_setting_num("WAITIO_GPU_IPC", 1) != 0; /* device messages on one host */
    if ((rc = wio_engine_check_transports(e)) ||
        (rc = e->cfg.job ? wio_job_key(&e->key, boot_timeout) : wio_key_load(&e->key)))
        return rc;
    /* the address to advertise (and bind) is known before the transports open */
    if ((rc = wio_boot_self_address(e)) || (rc = wio_engine_open(e)))
        return rc;
    double t0 = wio_now();
    if ((rc = wio_boot_run(e, boot_timeout)))
        return rc;
    if ((rc = wio_engine_start(e)))
        return rc;
    e->init_seconds = wio_now() - t0;
    wio_info("initialised: process %u of %u, PB %d of %d, local rank %d of %d (from %s), %.3f s",
             (unsigned)e->my_id, (unsigned)e->nprocs_total, e->cfg.pbid, e->npb, e->cfg.local_rank,
             e->cfg.local_size, e->cfg.local_source, e->init_seconds);
    return 0;
}

int waitio_init(int timeout)
{
    if (wio_engine_current)
        return wio_fail(WAITIO_ERR_STATE, "waitio_init called twice");
    int rc = wio_log_init_from_env();
    if (rc)
        return rc;
    wio_settings_warn_unknown(); /* a misspelled WAITIO_* name is said once, with the closest */
    wio_settings_say_ignored();  /* and a bad value that some layer will ignore */
    /* no instance variable: the adapter may find a one-job MPMD launch (boot/boot_job.c) */
    int probe_flags = wio_config_instance_vars_set() ? 0 : WAITIO_PROBE_JOB;
    if ((rc = wio_adapter_probe(probe_flags, timeout > 0 ? timeout : DEFAULT_INIT_TIMEOUT)))
        return rc;
    wio_engine *e = calloc(1, sizeof *e);
    if (!e)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    rc = engine_setup(e, timeout);
    if (rc) {
        wio_engine_free(e);
        return rc;
    }
    wio_trace_start(e); /* before the progress thread wio_rma_attach may start reads wio_trace_on */
    wio_rma_attach(e); /* the one-sided layer answers RMA frames from here on */
    wio_engine_current = e;
    return 0;
}

int waitio_finalize(void)
{
    wio_engine *e = engine_or_fail();
    if (!e)
        return WAITIO_ERR_STATE;
    { /* the clock offset measured again while every peer can still answer; under the API
       * lock, as a progress thread (stopped next) may still run the engine and trace */
        WIO_API_GUARD();
        wio_trace_finish(e);
    }
    wio_rma_finalize(e); /* then: stops the progress thread, so nothing else runs from here on */
    int rc = wio_engine_finalize(e);
    wio_rma_free(e);
    wio_engine_current = NULL;
    wio_engine_free(e);
    wio_gpu_release_all(); /* CUDA IPC mappings and pinned staging buffers */
    wio_adapter_finalize(); /* last: MPI that the adapter initialised goes with WaitIO */
    return rc;
}

int waitio_initialized(void) { return wio_engine_current != NULL; }

const char *waitio_version(void)
{
    return WAITIO_VERSION_STRING; /* include/waitio_version.h, where the version is written */
}

int waitio_get_nprocs(int ary[])
{
    wio_engine *e = engine_or_fail();
    if (!e)
        return -1;
    if (ary)
        for (int p = 0; p < e->npb; p++)
            ary[p] = e->nprocs[p];
    return e->npb;
}

int waitio_pb_size(int *sizep)
{
    wio_engine *e = engine_or_fail();
    if (!e)
        return WAITIO_ERR_STATE;
    if (!sizep)
        return wio_fail(WAITIO_ERR_ARG, "NULL pointer");
    *sizep = e->npb;
    return 0;
}

int waitio_pb_rank(int *rankp)
{
    wio_engine *e = engine_or_fail();
    if (!e)
        return WAITIO_ERR_STATE;
    if (!rankp)
        return wio_fail(WAITIO_ERR_ARG, "NULL pointer");
    *rankp = e->cfg.pbid;
    return 0;
}

int waitio_local_rank(int *rankp)
{
    wio_engine *e = engine_or_fail();
    if (!e)
        return WAITIO_ERR_STATE;
    if (!rankp)
        return wio_fail(WAITIO_ERR_ARG, "NULL pointer");
    *rankp = e->cfg.local_rank;
    return 0;
}

int waitio_local_size(int *sizep)
{
    wio_engine *e = engine_or_fail();
    if (!e)
        return WAITIO_ERR_STATE;
    if (!sizep)
        return wio_fail(WAITIO_ERR_ARG, "NULL pointer");
    *sizep = e->cfg.local_size;
    return 0;
}

/* ---- groups ---- */

/* Ids from WAITIO_GID_RESERVED up belong to the library's own groups (waitio.h). */
static int user_gid_ok(int gid)
{
    if (gid >= WAITIO_GID_RESERVED)
        return wio_fail(WAITIO_ERR_ARG, "group id %d (0x%x) is reserved for the library's groups "
                        "(ids from 0x%x up)", gid, (unsigned)gid, (unsigned)WAITIO_GID_RESERVED);
    return 0;
}

waitio_group_t waitio_create_group(int gid, waitio_filter_func_t func[], int order[])
{
    WIO_API_GUARD();
    wio_engine *e = engine_or_fail();
    wio_group *g = NULL;
    if (e && (user_gid_ok(gid) != 0 || wio_group_create_func(e, gid, func, order, &g) != 0))
        return NULL;
    return (waitio_group_t)g;
}

waitio_group_t waitio_create_group_wranks(int gid, int *rankap[], int order[])
{
    WIO_API_GUARD();
    wio_engine *e = engine_or_fail();
    wio_group *g = NULL;
    if (e && (user_gid_ok(gid) != 0 || wio_group_create_list(e, gid, rankap, order, &g) != 0))
        return NULL;
    return (waitio_group_t)g;
}

int waitio_group_rank(waitio_group_t grp, int *rankp)
{
    if (!engine_or_fail())
        return WAITIO_ERR_STATE;
    if (!grp || !rankp)
        return wio_fail(WAITIO_ERR_ARG, "NULL group or pointer");
    *rankp = ((wio_group *)grp)->my_rank;
    return 0;
}

int waitio_group_size(waitio_group_t grp, int *sizep)
{
    if (!engine_or_fail())
        return WAITIO_ERR_STATE;
    if (!grp || !sizep)
        return wio_fail(WAITIO_ERR_ARG, "NULL group or pointer");
    *sizep = ((wio_group *)grp)->size;
    return 0;
}

int waitio_group_member(waitio_group_t grp, int rank, int *pbid, int *local_rank)
{
    wio_engine *e = engine_or_fail();
    if (!e)
        return WAITIO_ERR_STATE;
    wio_group *g = (wio_group *)grp;
    if (!g || rank < 0 || rank >= g->size)
        return wio_fail(WAITIO_ERR_GROUP, "rank %d is not in the group", rank);
    int pb, local;
    wio_engine_locate(e, g->members[rank], &pb, &local);
    if (pbid)
        *pbid = pb;
    if (local_rank)
        *local_rank = local;
    return 0;
}

int waitio_group_free(waitio_group_t grp)
{
    WIO_API_GUARD();
    wio_engine *e = engine_or_fail();
    if (!e)
        return WAITIO_ERR_STATE;
    if (!grp)
        return wio_fail(WAITIO_ERR_ARG, "NULL group");
    for (uint32_t i = 0; i < e->nreqs; i++) {
        wio_req_impl *r = e->reqs[i];
        if (r && r->grp == (wio_group *)grp && r->state != WIO_RS_FREE && r->state != WIO_RS_DONE)
            return wio_fail(WAITIO_ERR_STATE, "group %u still has pending requests",
                            (unsigned)((wio_group *)grp)->gid);
    }
    wio_group_destroy(e, (wio_group *)grp);
    return 0;
}

/* ---- requests ---- */

static void req_bind(waitio_req_t *req, wio_req_impl *r)
{
    memset(req, 0, sizeof *req);
    req->internal = r;
    req->reserved[0] = wio_req_id(r);
}

/* A send that went at once (the small-message fast path, wio_engine_isend): no engine request
 * behind it; it is complete and holds its status until it is waited on or tested, like any
 * completed request (waitany returns it, a second wait sees an inactive request). */
static const char sent_at_once_marker;
#define REQ_SENT_AT_ONCE ((void *)(uintptr_t)&sent_at_once_marker)

static void req_sent_at_once(waitio_req_t *req, int dst, uint64_t tag, size_t len)
{
    req->status = (waitio_status_t){.source = dst, .tag = tag, .len = len, .error = 0};
    req->internal = REQ_SENT_AT_ONCE;
    req->reserved[0] = 0;
}

/* The engine request behind req, or NULL if req is inactive or stale. */
static wio_req_impl *req_impl(wio_engine *e, const waitio_req_t *req)
{
    wio_req_impl *r = req->internal;
    if (!r)
        return NULL;
    wio_req_impl *live = wio_req_lookup(e, req->reserved[0]);
    return live == r ? r : NULL;
}

int wio_req_user_state(wio_engine *e, const waitio_req_t *req)
{
    if (req->internal == REQ_SENT_AT_ONCE)
        return 1;
    wio_req_impl *r = req_impl(e, req);
    if (!r)
        return -1;
    return r->state == WIO_RS_DONE;
}

static int req_finish(wio_engine *e, waitio_req_t *req, wio_req_impl *r)
{
    if (r->status.error)
        wio_engine_explain(e, r);
    req->status = r->status;
    req->internal = NULL;
    wio_req_release(e, r);
    return req->status.error;
}

int waitio_isend(waitio_group_t grp, int dst, char *buf, size_t len, unsigned long tag,
                 waitio_req_t *req)
{
    WIO_API_GUARD();
    wio_engine *e = engine_or_fail();
    if (!e)
        return WAITIO_ERR_STATE;
    if (!req)
        return wio_fail(WAITIO_ERR_ARG, "NULL request");
    wio_req_impl *r;
    int rc = wio_engine_isend(e, (wio_group *)grp, dst, buf, len, tag, WIO_CTX_USER, &r);
    if (rc)
        return rc;
    if (r)
        req_bind(req, r);
    else
        req_sent_at_once(req, dst, tag, len);
    return 0;
}

int waitio_irecv(waitio_group_t grp, int src, char *buf, size_t len, unsigned long tag,
                 waitio_req_t *req)
{
    WIO_API_GUARD();
    wio_engine *e = engine_or_fail();
    if (!e)
        return WAITIO_ERR_STATE;
    if (!req)
        return wio_fail(WAITIO_ERR_ARG, "NULL request");
    wio_req_impl *r;
    int rc = wio_engine_irecv(e, (wio_group *)grp, src, buf, len, tag, WIO_CTX_USER, &r);
    if (rc)
        return rc;
    req_bind(req, r);
    return 0;
}


/* Every 16th wait on an already complete request polls (a poll costs less than reading the
 * clock to pace it). */
static int progress_now_and_then(wio_engine *e)
{
    if ((++e->idle_waits & 15) != 0)
        return 0;
    return wio_engine_progress(e, 0);
}

int waitio_wait_timeout(waitio_req_t *req, double seconds)
{
    WIO_API_GUARD();
    wio_engine *e = engine_or_fail();
    if (!e)
        return WAITIO_ERR_STATE;
    if (!req)
        return wio_fail(WAITIO_ERR_ARG, "NULL request");
    if (req->internal == REQ_SENT_AT_ONCE) {
        req->internal = NULL;
        int rc = progress_now_and_then(e);
        return rc ? rc : req->status.error;
    }
    wio_req_impl *r = req_impl(e, req);
    if (!r)
        return req->internal ? wio_fail(WAITIO_ERR_ARG, "stale request (already completed "
                                        "through a copy?)") : req->status.error;
    if (r->state == WIO_RS_DONE) {
        /* Already complete (an eager send): still look at incoming traffic now and then, so
         * that a program that only sends notices a finalized or dead peer. */
        int rc = progress_now_and_then(e);
        if (rc)
            return rc;
    } else {
        int rc = wio_engine_wait_req(e, r, seconds >= 0 ? wio_now() + seconds : 0);
        if (rc == WAITIO_ERR_TIMEOUT)
            return WAITIO_ERR_TIMEOUT;
        if (rc)
            return rc;
    }
    return req_finish(e, req, r);
}

int waitio_wait(waitio_req_t *req) { return waitio_wait_timeout(req, -1); }

int waitio_test(waitio_req_t *req, int *flag)
{
    WIO_API_GUARD();
    wio_engine *e = engine_or_fail();
    if (!e)
        return WAITIO_ERR_STATE;
    if (!req || !flag)
        return wio_fail(WAITIO_ERR_ARG, "NULL request or flag");
    *flag = 1;
    if (req->internal == REQ_SENT_AT_ONCE) {
        req->internal = NULL;
        int rc = progress_now_and_then(e);
        return rc ? rc : req->status.error;
    }
    wio_req_impl *r = req_impl(e, req);
    if (!r)
        return req->internal ? wio_fail(WAITIO_ERR_ARG, "stale request") : req->status.error;
    int rc = wio_engine_progress(e, 0);
    if (rc)
        return rc;
    if (r->state != WIO_RS_DONE) {
        *flag = 0;
        return 0;
    }
    WIO_TRACE(WIO_TR_TEST, 0, r->peer_id == WIO_ID_BOOT ? WIO_TR_ANY : r->peer_id, r->gid, r->status.tag,
              r->status.len, r->tr_msg, 0, r->status.error);
    return req_finish(e, req, r);
}

int waitio_waitall(int count, waitio_req_t reqs[])
{
    if (count < 0 || (count > 0 && !reqs))
        return wio_fail(WAITIO_ERR_ARG, "bad request array");
    int first = 0;
    for (int i = 0; i < count; i++) {
        int rc = waitio_wait(&reqs[i]);
        if (rc && !first)
            first = rc;
    }
    return first;
}

typedef struct any_ctx {
    wio_engine *e;
    waitio_req_t *reqs;
    int count;
} any_ctx;

static int any_done(void *arg)
{
    any_ctx *a = arg;
    for (int i = 0; i < a->count; i++) {
        if (a->reqs[i].internal == REQ_SENT_AT_ONCE)
            return 1;
        wio_req_impl *r = req_impl(a->e, &a->reqs[i]);
        if (r && r->state == WIO_RS_DONE)
            return 1;
    }
    return 0;
}

int waitio_waitany(int count, waitio_req_t reqs[], int *index)
{
    WIO_API_GUARD();
    wio_engine *e = engine_or_fail();
    if (!e)
        return WAITIO_ERR_STATE;
    if (count < 0 || (count > 0 && !reqs) || !index)
        return wio_fail(WAITIO_ERR_ARG, "bad request array or index pointer");
    *index = WAITIO_UNDEFINED;
    int active = 0;
    for (int i = 0; i < count; i++)
        active += reqs[i].internal == REQ_SENT_AT_ONCE || req_impl(e, &reqs[i]) != NULL;
    if (!active)
        return 0;
    any_ctx a = {e, reqs, count};
    int rc = 0;
    if (!any_done(&a)) {
        WIO_TRACE(WIO_TR_WAIT_BEGIN, 0, WIO_TR_ANY, 0, 0, 0, 0, (uint32_t)count, 0);
        rc = wio_engine_wait_until(e, any_done, &a, 0);
        WIO_TRACE(WIO_TR_WAIT_END, 0, WIO_TR_ANY, 0, 0, 0, 0, (uint32_t)count, rc);
    }
    if (rc)
        return rc;
    for (int i = 0; i < count; i++) {
        if (reqs[i].internal == REQ_SENT_AT_ONCE) {
            *index = i;
            reqs[i].internal = NULL;
            return reqs[i].status.error;
        }
        wio_req_impl *r = req_impl(e, &reqs[i]);
        if (r && r->state == WIO_RS_DONE) {
            *index = i;
            return req_finish(e, &reqs[i], r);
        }
    }
    return 0;
}

int waitio_cancel(waitio_req_t *req)
{
    WIO_API_GUARD();
    wio_engine *e = engine_or_fail();
    if (!e)
        return WAITIO_ERR_STATE;
    if (!req)
        return wio_fail(WAITIO_ERR_ARG, "NULL request");
    if (req->internal == REQ_SENT_AT_ONCE)
        return wio_fail(WAITIO_ERR_ARG, "only receives that have not matched can be cancelled");
    wio_req_impl *r = req_impl(e, req);
    if (!r)
        return wio_fail(WAITIO_ERR_ARG, "inactive request");
    return wio_engine_cancel(e, r);
}
