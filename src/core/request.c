/*
 * request.c — the request pool. Requests are referenced on the wire by (generation, slot) ids,
 * never by pointers, so a stale or forged id from a peer is detected by lookup, not trusted.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "core/engine.h"
#include "core/trace.h"
#include "gpu/gpu.h"
#include "gpu/pipeline.h"

uint64_t wio_req_id(const wio_req_impl *r) { return ((uint64_t)r->gen << 32) | r->slot; }

static int pool_grow(wio_engine *e)
{
    uint32_t cap = e->reqs_cap ? e->reqs_cap * 2 : 64;
    wio_req_impl **reqs = realloc(e->reqs, cap * sizeof *reqs);
    if (!reqs)
        return -1;
    e->reqs = reqs;
    uint32_t *slots = realloc(e->free_slots, cap * sizeof *slots);
    if (!slots)
        return -1;
    e->free_slots = slots;
    for (uint32_t i = e->reqs_cap; i < cap; i++)
        reqs[i] = NULL;
    e->reqs_cap = cap;
    return 0;
}

/* Resets every field a fresh request reads, one by one rather than with a memset of the
 * whole 376-byte struct: GCC inlines that as `rep stos`, whose start-up cost took 9-11% of an
 * 8-byte round trip over shared memory. The two wire buffers are always encoded before they
 * are sent. tests/unit/request_pool.c checks that a recycled request reads like a new one. */
static void req_reset(wio_req_impl *r, uint32_t slot, uint32_t gen, int kind)
{
    r->slot = slot;
    r->gen = gen;
    r->kind = (uint8_t)kind;
    r->state = 0;
    wio_list_init(&r->link);
    r->post_seq = 0;
    r->tr_msg = 0;
    r->grp = NULL;
    r->gid = 0;
    r->rank = 0;
    r->peer_id = 0;
    r->tag = 0;
    r->buf = NULL;
    r->cap = r->msg_len = r->received = 0;
    r->remote_id = 0;
    r->unexp = NULL;
    r->cts_trunc = 0;
    r->rdv_offered = r->rdv_done = 0;
    r->rdv_len = 0;
    r->status = (waitio_status_t){0};
    r->ext = NULL;
    r->gpu = WIO_GPU_NONE;
    r->gpu_user = r->gpu_bounce = NULL;
    r->gpu_bounce_len = 0;
    r->gpu_pipe = NULL;
    wio_send_item *it = &r->item;
    wio_list_init(&it->link);
    it->h = (wio_frame_hdr){0};
    it->payload = NULL;
    it->total = it->chunk = it->offset = 0;
    it->frame_payload = it->frame_sent = it->wire_len = 0;
    it->in_flight = 0;
    it->done = NULL;
    it->owner = r;
}

wio_req_impl *wio_req_alloc(wio_engine *e, int kind)
{
    uint32_t slot;
    if (e->nfree > 0) {
        slot = e->free_slots[--e->nfree];
    } else {
        if (e->nreqs == e->reqs_cap && pool_grow(e) != 0)
            return NULL;
        slot = e->nreqs;
        e->reqs[slot] = calloc(1, sizeof(wio_req_impl));
        if (!e->reqs[slot])
            return NULL;
        e->nreqs++;
    }
    wio_req_impl *r = e->reqs[slot];
    uint32_t gen = r->gen + 1;
    req_reset(r, slot, gen ? gen : 1, kind);
    return r;
}

void wio_req_release(wio_engine *e, wio_req_impl *r)
{
    wio_gpu_pipe_free(r); /* its copies end before its staging buffer is reused */
    if (r->gpu_bounce) { /* a device message's staging buffer */
        wio_gpu_bounce_put(r->gpu_bounce, r->gpu_bounce_len);
        r->gpu_bounce = NULL;
    }
    r->state = WIO_RS_FREE;
    r->gen++;                        /* stale ids stop matching at once */
    e->free_slots[e->nfree++] = r->slot;
}

wio_req_impl *wio_req_lookup(wio_engine *e, uint64_t id)
{
    uint32_t slot = (uint32_t)id, gen = (uint32_t)(id >> 32);
    if (slot >= e->nreqs)
        return NULL;
    wio_req_impl *r = e->reqs[slot];
    if (!r || r->gen != gen || r->state == WIO_RS_FREE)
        return NULL;
    return r;
}

void wio_req_complete(wio_req_impl *r, int err)
{
    WIO_ASSERT(r->state != WIO_RS_FREE); /* a released request is never completed */
    if (r->state == WIO_RS_DONE)
        return;
    if (wio_list_linked(&r->link))
        wio_list_remove(&r->link);
    r->state = WIO_RS_DONE;
    if (!r->status.error)
        r->status.error = err;
    if (r->gpu == WIO_GPU_RECV)
        wio_req_gpu_finish(r);
    if (r->kind != WIO_REQ_RMA)
        WIO_TRACE(r->kind == WIO_REQ_SEND ? WIO_TR_SEND_DONE : WIO_TR_RECV_DONE, 0,
                  r->peer_id == WIO_ID_BOOT ? WIO_TR_ANY : r->peer_id, r->gid, r->status.tag, r->status.len,
                  r->tr_msg, 0, r->status.error);
}

/* What arrived in the staging buffer goes to the user's device buffer; a failed copy fails the
 * receive. */
void wio_req_gpu_finish(wio_req_impl *r)
{
    r->gpu = WIO_GPU_RECV_DIRECT;
    size_t n = r->status.len < r->cap ? r->status.len : r->cap, done = 0;
    /* the chunks the pipeline copied already (src/gpu/pipeline.c); waited for even when the
     * receive failed, since the staging buffer is released after this */
    int pipe_rc = wio_gpu_recv_pipe_finish(r, &done);
    if (r->status.error) /* nothing is copied from a failed (or truncated) receive */
        return;
    if (pipe_rc) {
        r->status.error = WAITIO_ERR_DEVICE;
        return;
    }
    if (n > done && wio_gpu_copy((uint8_t *)r->gpu_user + done, r->buf + done, n - done) != 0 && !r->status.error)
        r->status.error = WAITIO_ERR_DEVICE;
}

void wio_req_pool_free(wio_engine *e)
{
    for (uint32_t i = 0; i < e->nreqs; i++) {
        if (e->reqs[i])
            wio_gpu_pipe_free(e->reqs[i]);
        if (e->reqs[i] && e->reqs[i]->gpu_bounce) /* a device message never waited for */
            wio_gpu_bounce_put(e->reqs[i]->gpu_bounce, e->reqs[i]->gpu_bounce_len);
        free(e->reqs[i]);
    }
    free(e->reqs);
    free(e->free_slots);
    e->reqs = NULL;
    e->free_slots = NULL;
    e->nreqs = e->reqs_cap = e->nfree = 0;
}
