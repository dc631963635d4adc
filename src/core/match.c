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
 *
 * The unexpected side can grow long where the posted side does not: the children of a reduce
 * root run ahead by as many calls as their credit allows (thousands), and every collective call
 * has a tag of its own, so thousands of keys wait at once. Its table therefore grows with it
 * (below), keeping a bucket at about two entries; a fixed 256 buckets made the root scan tens of
 * entries per receive (18% of a pipelined 64-byte reduce's time).
 */
#include <stdlib.h>
#include "core/engine.h"

static unsigned mq_hash(uint32_t peer_id, uint32_t gid, uint64_t tag, unsigned bits)
{
    uint64_t x = (tag ^ ((uint64_t)gid << 32 | peer_id) * 0xc2b2ae3d27d4eb4full) * 0x9e3779b97f4a7c15ull;
    return (unsigned)(x >> (64 - bits));
}

static unsigned mq_bucket(uint32_t peer_id, uint32_t gid, uint64_t tag)
{
    return mq_hash(peer_id, gid, tag, WIO_MQ_BITS);
}

static wio_list *unexp_head(wio_mq *q, uint32_t peer_id, uint32_t gid, uint64_t tag)
{
    wio_list *table = q->unexp_big ? q->unexp_big : q->unexp_bucket;
    return &table[mq_hash(peer_id, gid, tag, q->unexp_bits)];
}

/* Moves every unexpected message into a table of 2^bits buckets (the embedded one for
 * WIO_MQ_BITS). Walking them in arrival order keeps each key's messages in arrival order. When
 * the larger table cannot be allocated, the old one stays: longer scans, the same answers. */
static void unexp_rehash(wio_mq *q, unsigned bits)
{
    wio_list *big = NULL;
    if (bits > WIO_MQ_BITS && !(big = malloc(sizeof *big << bits)))
        return;
    wio_list *table = big ? big : q->unexp_bucket;
    for (size_t i = 0; i < (size_t)1 << bits; i++)
        wio_list_init(&table[i]);
    free(q->unexp_big);
    q->unexp_big = big;
    q->unexp_bits = bits;
    for (wio_list *pos = q->unexpected.next; pos != &q->unexpected; pos = pos->next) {
        wio_unexp *ux = WIO_CONTAINER_OF(pos, wio_unexp, link);
        wio_list_insert_tail(unexp_head(q, ux->peer_id, ux->gid, ux->tag), &ux->blink);
    }
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
    q->unexp_big = NULL;
    q->unexp_bits = WIO_MQ_BITS;
    q->unexp_count = 0;
    q->post_seq = 0;
}

void wio_mq_fini(wio_mq *q)
{
    free(q->unexp_big);
    q->unexp_big = NULL;
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
    wio_list_insert_tail(unexp_head(q, ux->peer_id, ux->gid, ux->tag), &ux->blink);
    if (++q->unexp_count > (size_t)2 << q->unexp_bits && q->unexp_bits < WIO_MQ_BITS_MAX)
        unexp_rehash(q, q->unexp_bits + 2);
}

void wio_mq_remove_unexpected(wio_mq *q, wio_unexp *ux)
{
    if (!wio_list_linked(&ux->link))
        return;
    wio_list_remove(&ux->link);
    wio_list_remove(&ux->blink);
    if (--q->unexp_count == 0 && q->unexp_big)
        unexp_rehash(q, WIO_MQ_BITS); /* empty: back to the embedded table */
}

wio_unexp *wio_mq_peek_unexpected(wio_mq *q, const wio_req_impl *r)
{
    if (wio_list_empty(&q->unexpected))
        return NULL;
    if (has_wildcard(r)) {
        wio_list *pos;
        for (pos = q->unexpected.next; pos != &q->unexpected; pos = pos->next) {
            wio_unexp *ux = WIO_CONTAINER_OF(pos, wio_unexp, link);
            if (wio_match(r, ux->peer_id, ux->gid, ux->src, ux->tag))
                return ux;
        }
        return NULL;
    }
    wio_list *head = unexp_head(q, r->peer_id, r->gid, r->tag);
    for (wio_list *pos = head->next; pos != head; pos = pos->next) {
        wio_unexp *ux = WIO_CONTAINER_OF(pos, wio_unexp, blink);
        if (wio_match(r, ux->peer_id, ux->gid, ux->src, ux->tag))
            return ux;
    }
    return NULL;
}

wio_unexp *wio_mq_take_unexpected(wio_mq *q, const wio_req_impl *r)
{
    wio_unexp *ux = wio_mq_peek_unexpected(q, r);
    if (ux)
        wio_mq_remove_unexpected(q, ux);
    return ux;
}
