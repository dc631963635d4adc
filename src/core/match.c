/*
 * match.c — MPI matching over the two queues: a message matches the first posted receive with
 * the same group, an equal or wildcard source and an equal or wildcard tag; a new receive takes
 * the oldest matching unexpected message. Both queues are kept in arrival/post order, which
 * with in-order delivery per connection gives MPI's non-overtaking rule.
 */
#include "core/engine.h"

int wio_match(const wio_req_impl *r, uint32_t peer_id, uint32_t gid, uint32_t src, uint64_t tag)
{
    if (r->gid != gid || (r->tag != WAITIO_ANY_TAG && r->tag != tag))
        return 0;
    if (r->rank != WAITIO_ANY_SOURCE)
        return (uint32_t)r->rank == src && r->peer_id == peer_id;
    /* a wildcard still checks that the claimed group rank is really that process */
    return r->grp && src < (uint32_t)r->grp->size && r->grp->members[src] == peer_id;
}

wio_req_impl *wio_match_take_posted(wio_list *posted, uint32_t peer_id, uint32_t gid, uint32_t src,
                                    uint64_t tag)
{
    wio_list *pos, *tmp;
    WIO_LIST_FOREACH_SAFE(pos, tmp, posted) {
        wio_req_impl *r = WIO_CONTAINER_OF(pos, wio_req_impl, link);
        if (!wio_match(r, peer_id, gid, src, tag))
            continue;
        wio_list_remove(&r->link);
        r->peer_id = peer_id;
        r->status.source = (int)src;
        r->status.tag = tag;
        return r;
    }
    return NULL;
}

wio_unexp *wio_match_take_unexpected(wio_list *unexpected, const wio_req_impl *r)
{
    wio_list *pos, *tmp;
    WIO_LIST_FOREACH_SAFE(pos, tmp, unexpected) {
        wio_unexp *ux = WIO_CONTAINER_OF(pos, wio_unexp, link);
        if (wio_match(r, ux->peer_id, ux->gid, ux->src, ux->tag)) {
            wio_list_remove(&ux->link);
            return ux;
        }
    }
    return NULL;
}
