/* match_queues.c — unit test of MPI matching over the posted and unexpected queues: order,
 * wildcards, group/tag/source isolation, and wildcard source validation against the group. */
#include <string.h>
#include "check.h"
#include "core/engine.h"

static uint32_t members[4] = {10, 11, 12, 13}; /* group rank -> process id */
static wio_group grp = {.gid = 7, .size = 4, .my_rank = 0, .members = members};

static void post(wio_list *q, wio_req_impl *r, int rank, uint64_t tag)
{
    memset(r, 0, sizeof *r);
    r->kind = WIO_REQ_RECV;
    r->grp = &grp;
    r->gid = grp.gid;
    r->rank = rank;
    r->peer_id = rank == WAITIO_ANY_SOURCE ? WIO_ID_BOOT : members[rank];
    r->tag = tag;
    wio_list_insert_tail(q, &r->link);
}

static void test_posted_order_and_wildcards(void)
{
    wio_list q;
    wio_list_init(&q);
    wio_req_impl a, b, c, d;
    post(&q, &a, 1, 5);                                /* specific */
    post(&q, &b, WAITIO_ANY_SOURCE, 5);                /* any source */
    post(&q, &c, 2, WAITIO_ANY_TAG);                   /* any tag */
    post(&q, &d, WAITIO_ANY_SOURCE, WAITIO_ANY_TAG);   /* both */
    /* a message from rank 2 tag 5 skips a (rank 1) and takes b (first eligible) */
    CHECK(wio_match_take_posted(&q, 12, 7, 2, 5) == &b);
    CHECK(b.status.source == 2 && b.status.tag == 5 && b.peer_id == 12);
    /* wrong group matches nothing */
    CHECK(wio_match_take_posted(&q, 12, 8, 2, 5) == NULL);
    /* rank 2 tag 9 -> c (any tag) */
    CHECK(wio_match_take_posted(&q, 12, 7, 2, 9) == &c);
    /* rank 1 tag 5 -> a */
    CHECK(wio_match_take_posted(&q, 11, 7, 1, 5) == &a);
    /* a forged source rank (process 13 claiming rank 1) does not match the wildcard */
    CHECK(wio_match_take_posted(&q, 13, 7, 1, 5) == NULL);
    /* out-of-range source rank never matches */
    CHECK(wio_match_take_posted(&q, 13, 7, 99, 5) == NULL);
    CHECK(wio_match_take_posted(&q, 13, 7, 3, 1) == &d);
    CHECK(wio_list_empty(&q));
}

static wio_unexp *arrive(wio_list *q, wio_unexp *u, uint32_t peer, uint32_t src, uint64_t tag)
{
    memset(u, 0, sizeof *u);
    u->kind = WIO_UX_EAGER;
    u->peer_id = peer;
    u->gid = grp.gid;
    u->src = src;
    u->tag = tag;
    wio_list_insert_tail(q, &u->link);
    return u;
}

static void test_unexpected_non_overtaking(void)
{
    wio_list q;
    wio_list_init(&q);
    wio_unexp u[5];
    arrive(&q, &u[0], 11, 1, 3);
    arrive(&q, &u[1], 12, 2, 3);
    arrive(&q, &u[2], 11, 1, 3);
    arrive(&q, &u[3], 11, 1, 4);
    arrive(&q, &u[4], 12, 2, 4);
    wio_list posted;
    wio_list_init(&posted);
    wio_req_impl r;
    post(&posted, &r, 1, 3);
    wio_list_remove(&r.link);
    /* two messages from rank 1 tag 3: the older one first */
    CHECK(wio_match_take_unexpected(&q, &r) == &u[0]);
    CHECK(wio_match_take_unexpected(&q, &r) == &u[2]);
    CHECK(wio_match_take_unexpected(&q, &r) == NULL);
    post(&posted, &r, WAITIO_ANY_SOURCE, 4);
    wio_list_remove(&r.link);
    CHECK(wio_match_take_unexpected(&q, &r) == &u[3]);
    post(&posted, &r, WAITIO_ANY_SOURCE, WAITIO_ANY_TAG);
    wio_list_remove(&r.link);
    CHECK(wio_match_take_unexpected(&q, &r) == &u[1]);
    CHECK(wio_match_take_unexpected(&q, &r) == &u[4]);
    CHECK(wio_list_empty(&q));
}

static void test_tags_are_64_bit(void)
{
    wio_list q;
    wio_list_init(&q);
    wio_req_impl a;
    post(&q, &a, 0, 0x100000000ull);
    CHECK(wio_match_take_posted(&q, 10, 7, 0, 0) == NULL);            /* low 32 bits equal */
    CHECK(wio_match_take_posted(&q, 10, 7, 0, 0x100000000ull) == &a);
}

int main(void)
{
    test_posted_order_and_wildcards();
    test_unexpected_non_overtaking();
    test_tags_are_64_bit();
    return check_report("match_queues");
}
