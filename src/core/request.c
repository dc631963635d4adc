/*
 * request.c — the request pool. Requests are referenced on the wire by (generation, slot) ids,
 * never by pointers, so a stale or forged id from a peer is detected by lookup, not trusted.
 */
#include <stdlib.h>
#include <string.h>
#include "core/engine.h"

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
    memset(r, 0, sizeof *r);
    r->slot = slot;
    r->gen = gen ? gen : 1;
    r->kind = (uint8_t)kind;
    wio_list_init(&r->link);
    r->item.owner = r;
    return r;
}

void wio_req_release(wio_engine *e, wio_req_impl *r)
{
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
    if (r->state == WIO_RS_DONE)
        return;
    if (wio_list_linked(&r->link))
        wio_list_remove(&r->link);
    r->state = WIO_RS_DONE;
    if (!r->status.error)
        r->status.error = err;
}

void wio_req_pool_free(wio_engine *e)
{
    for (uint32_t i = 0; i < e->nreqs; i++)
        free(e->reqs[i]);
    free(e->reqs);
    free(e->free_slots);
    e->reqs = NULL;
    e->free_slots = NULL;
    e->nreqs = e->reqs_cap = e->nfree = 0;
}
