/*
 * match.c — MPI matching over hashed queues: a message matches the first posted receive with
 * the same group, an equal or wildcard source and an equal or wildcard tag; a new receive takes
 * the oldest matching unexpected message. Both sides keep arrival/post order, which with
 * in-order delivery per connection gives MPI's non-overtaking rule.
 *
 * The key of a message or of a receive without wildcards is (sending process, group context,
 * tag), hashed once into one of WIO_MQ_BUCKETS lists, so that a receive or an arriving message
 * looks at the entries of its own key rather than at every queued one:
 *   - posted receives without wildcards live in their key's bucket; receives with a wildcard in
 *     one list of their own. An arriving message takes the first match of its bucket or of the
 *     wildcard list, whichever was posted first (post_seq);
 *   - unexpected messages are in one list in arrival order (for wildcard receives and for
 *     failure handling) and in their key's bucket (for receives without wildcards: every
 *     message such a receive can match has its key).
 */
#include "core/engine.h"

static unsigned mq_bucket(uint32_t peer_id, uint32_t gid, uint64_t tag)
{
    uint64_t x = (tag ^ ((uint64_t)gid << 32 | peer_id) * 0xc2b2ae3d27d4eb4full) * 0x9e3779b97f4a7c15ull;
    return (unsigned)(x >> (64 - WIO_MQ_BITS));
}

static int has_wildcard(const wio_req_impl *r)
{
    return r->rank == WAITIO_ANY_SOURCE || r->tag == WAITIO_ANY_TAG;
}

void wio_mq_init(wio_mq *q)
{
    for (unsigned i = 0; i < WIO_MQ_BUCKETS; i++) {
        wio_list_init(&q->posted[i]);
        wio_list_init(&q->unexp_bucket[i]);
    }
    wio_list_init(&q->posted_wild);
    wio_list_init(&q->unexpected);
    q->post_seq = 0;
}

int wio_match(const wio_req_impl *r, uint32_t peer_id, uint32_t gid, uint32_t src, uint64_t tag)
{
    if (r->gid != gid || (r->tag != WAITIO_ANY_TAG && r->tag != tag))
        return 0;
    if (r->rank != WAITIO_ANY_SOURCE)
        return (uint32_t)r->rank == src && r->peer_id == peer_id;
    /* a wildcard still checks that the claimed group rank is really that process */
    return r->grp && src < (uint32_t)r->grp->size && r->grp->members[src] == peer_id;
}

void wio_mq_post(wio_mq *q, wio_req_impl *r)
{
    r->post_seq = ++q->post_seq;
    wio_list *head = has_wildcard(r) ? &q->posted_wild : &q->posted[mq_bucket(r->peer_id, r->gid, r->tag)];
    wio_list_insert_tail(head, &r->link);
}

static wio_req_impl *first_match(wio_list *head, uint32_t peer_id, uint32_t gid, uint32_t src, uint64_t tag)
{
    for (wio_list *pos = head->next; pos != head; pos = pos->next) {
        wio_req_impl *r = WIO_CONTAINER_OF(pos, wio_req_impl, link);
        if (wio_match(r, peer_id, gid, src, tag))
            return r;
    }
    return NULL;
}

wio_req_impl *wio_mq_take_posted(wio_mq *q, uint32_t peer_id, uint32_t gid, uint32_t src, uint64_t tag)
{
    wio_req_impl *r = first_match(&q->posted[mq_bucket(peer_id, gid, tag)], peer_id, gid, src, tag);
    if (!wio_list_empty(&q->posted_wild)) {
        wio_req_impl *w = first_match(&q->posted_wild, peer_id, gid, src, tag);
        if (w && (!r || w->post_seq < r->post_seq))
            r = w;
    }
    if (!r)
        return NULL;
    wio_list_remove(&r->link);
    r->peer_id = peer_id;
    r->status.source = (int)src;
    r->status.tag = tag;
    return r;
}

void wio_mq_foreach_posted(wio_mq *q, int (*fn)(wio_req_impl *r, void *arg), void *arg)
{
    for (unsigned i = 0; i <= WIO_MQ_BUCKETS; i++) {
        wio_list *head = i < WIO_MQ_BUCKETS ? &q->posted[i] : &q->posted_wild;
        wio_list *pos, *tmp;
        WIO_LIST_FOREACH_SAFE(pos, tmp, head)
            if (fn(WIO_CONTAINER_OF(pos, wio_req_impl, link), arg))
                return;
    }
}

void wio_mq_add_unexpected(wio_mq *q, wio_unexp *ux)
{
    wio_list_insert_tail(&q->unexpected, &ux->link);
    wio_list_insert_tail(&q->unexp_bucket[mq_bucket(ux->peer_id, ux->gid, ux->tag)], &ux->blink);
}

void wio_mq_remove_unexpected(wio_unexp *ux)
{
    if (wio_list_linked(&ux->link))
        wio_list_remove(&ux->link);
    if (wio_list_linked(&ux->blink))
        wio_list_remove(&ux->blink);
}

wio_unexp *wio_mq_take_unexpected(wio_mq *q, const wio_req_impl *r)
{
    if (wio_list_empty(&q->unexpected))
        return NULL;
    if (has_wildcard(r)) {
        wio_list *pos;
        for (pos = q->unexpected.next; pos != &q->unexpected; pos = pos->next) {
            wio_unexp *ux = WIO_CONTAINER_OF(pos, wio_unexp, link);
            if (wio_match(r, ux->peer_id, ux->gid, ux->src, ux->tag)) {
                wio_mq_remove_unexpected(ux);
                return ux;
            }
        }
        return NULL;
    }
    wio_list *head = &q->unexp_bucket[mq_bucket(r->peer_id, r->gid, r->tag)];
    for (wio_list *pos = head->next; pos != head; pos = pos->next) {
        wio_unexp *ux = WIO_CONTAINER_OF(pos, wio_unexp, blink);
        if (wio_match(r, ux->peer_id, ux->gid, ux->src, ux->tag)) {
            wio_mq_remove_unexpected(ux);
            return ux;
        }
    }
    return NULL;
}
