/*
 * rpc.c — remote procedure calls: the handlers registered by id in this process, and the calls
 * that arrived (am.c queues them) waiting to run. They run after a progress round, outside the
 * poller (engine hook `deferred`), one at a time, so a handler may itself start one-sided
 * operations and wait for them; a handler's reply goes back as RMA_REPLY frames.
 */
#define WIO_LOG_SUBSYS WIO_SUB_RMA /* this file logs as "rma" (WAITIO_LOG=rma=LEVEL) */
#include <stdlib.h>
#include <string.h>
#include "core/api_lock.h"
#include "rma/rma.h"

int wio_rpc_has_handlers(const wio_rma *r) { return r->handlers != NULL; }

int waitio_rpc_register(int id, waitio_rpc_handler_t fn, void *user)
{
    return waitio_rpc_register_ex(id, fn, user, 0);
}

int waitio_rpc_register_ex(int id, waitio_rpc_handler_t fn, void *user, unsigned flags)
{
    WIO_API_GUARD();
    wio_rma *r = wio_rma_get();
    if (!r)
        return WAITIO_ERR_STATE;
    if (id < 0 || id > WAITIO_RPC_ID_MAX)
        return wio_fail(WAITIO_ERR_ARG, "handler id %d is outside 0..%d", id, WAITIO_RPC_ID_MAX);
    if (!r->handlers && !(r->handlers = calloc(WAITIO_RPC_ID_MAX + 1, sizeof *r->handlers)))
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    if (flags & ~WAITIO_RPC_IN_CALLER)
        return wio_fail(WAITIO_ERR_ARG, "unknown handler flags 0x%x", flags);
    r->handlers[id].fn = fn;
    r->handlers[id].user = user;
    r->handlers[id].flags = flags;
    if (fn)
        wio_progress_thread_auto(r); /* last: a process that serves calls may need the thread */
    return 0;
}

/* The caller's rank in the group the call named, if that group exists here. */
static int origin_rank(wio_engine *e, uint32_t gid, uint32_t pid)
{
    wio_group *g = wio_group_find(e, gid);
    for (int i = 0; g && i < g->size; i++)
        if (g->members[i] == pid)
            return i;
    return WAITIO_UNDEFINED;
}

static void run_call(wio_rma *r, wio_rpc_call *c)
{
    wio_engine *e = r->e;
    const wio_rpc_entry *h = r->handlers && c->id <= WAITIO_RPC_ID_MAX ? &r->handlers[c->id] : NULL;
    uint8_t *reply = malloc(c->reply_cap ? c->reply_cap : 1);
    size_t rlen = c->reply_cap;
    int err = 0;
    if (!h || !h->fn) {
        wio_debug("call of handler %u from process %u: none registered", (unsigned)c->id, (unsigned)c->peer);
        err = WAITIO_ERR_RPC;
    } else if (!reply) {
        err = WAITIO_ERR_NOMEM;
    } else {
        int rc = h->fn(origin_rank(e, c->gid, c->peer), c->args, c->len, reply, &rlen, h->user);
        if (rc || rlen > c->reply_cap) {
            wio_debug("handler %u failed for process %u (returned %d, reply %zu of %zu bytes)",
                      (unsigned)c->id, (unsigned)c->peer, rc, rlen, c->reply_cap);
            err = WAITIO_ERR_RPC;
        }
    }
    if (err) {
        free(reply);
        reply = NULL;
        rlen = 0;
    } else if (rlen < c->reply_cap) {
        /* the reply waits in the queue at its own size: that is what counts against the caps */
        uint8_t *fit = realloc(reply, rlen ? rlen : 1);
        if (fit)
            reply = fit;
    }
    if (wio_engine_peer_error(e, c->peer)) {
        free(reply);
        return;
    }
    if (wio_am_reply(r, c->peer, c->origin_req, WIO_RMA_RPC, err, reply, rlen, 0, reply != NULL, NULL) != 0 &&
        r->peers[c->peer] && r->peers[c->peer]->over) /* over its queue caps (logged): it goes */
        wio_engine_drop_peer(e, c->peer, "it exceeded the one-sided queue limit");
}

/* Runs the waiting calls in arrival order; on the progress thread, those of IN_CALLER handlers
 * stay for the program's next WaitIO call (e->ext_work stays set for it). */
void wio_rpc_deferred(void *ctx)
{
    wio_rma *r = ctx;
    r->e->ext_work = 0;
    if (r->in_handler)
        return;
    r->in_handler = 1;
    int on_thread = wio_progress_thread_self(r), kept = 0;
    wio_list *pos = r->calls.next;
    while (pos != &r->calls) {
        wio_rpc_call *c = WIO_CONTAINER_OF(pos, wio_rpc_call, link);
        const wio_rpc_entry *h = r->handlers && c->id <= WAITIO_RPC_ID_MAX ? &r->handlers[c->id] : NULL;
        if (on_thread && h && h->fn && (h->flags & WAITIO_RPC_IN_CALLER)) {
            kept = 1;
            pos = pos->next;
            continue;
        }
        wio_list_remove(&c->link);
        wio_am_uncharge(r, c->peer, c->charged); /* before its reply is charged */
        run_call(r, c);
        free(c);
        pos = r->calls.next; /* a handler may have changed the list (nested progress) */
    }
    r->in_handler = 0;
    if (kept)
        r->e->ext_work = 1;
}

void wio_rpc_free_all(wio_rma *r)
{
    while (!wio_list_empty(&r->calls)) {
        wio_rpc_call *c = WIO_CONTAINER_OF(r->calls.next, wio_rpc_call, link);
        wio_list_remove(&c->link);
        free(c);
    }
    free(r->handlers);
    r->handlers = NULL;
}
