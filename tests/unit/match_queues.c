/* match_queues.c — unit test of MPI matching over the hashed posted and unexpected queues
 * (src/core/match.c): order, wildcards against receives without them (whichever was posted
 * first wins), group/tag/source isolation, wildcard source validation against the group, 64-bit
 * tags, a randomized comparison with a plain list scan (the definition of MPI matching) over
 * many keys, so that bucket collisions and the wildcard list are exercised together, and the
 * same comparison while the unexpected table grows and shrinks (thousands of keys waiting, as
 * at a reduce root whose children ran ahead). */
#include <string.h>
#include "check.h"
#include "core/engine.h"

static uint32_t members[4] = {10, 11, 12, 13}; /* group rank -> process id */
static wio_group grp = {.gid = 7, .size = 4, .my_rank = 0, .members = members};

static void req_init(wio_req_impl *r, int rank, uint64_t tag)
{
    memset(r, 0, sizeof *r);
    r->kind = WIO_REQ_RECV;
    r->grp = &grp;
    r->gid = grp.gid;
    r->rank = rank;
    r->peer_id = rank == WAITIO_ANY_SOURCE ? WIO_ID_BOOT : members[rank];
    r->tag = tag;
}

static void post(wio_mq *q, wio_req_impl *r, int rank, uint64_t tag)
{
    req_init(r, rank, tag);
    wio_mq_post(q, r);
}

static void test_posted_order_and_wildcards(void)
{
    static wio_mq q;
    wio_mq_init(&q);
    wio_req_impl a, b, c, d, e;
    post(&q, &a, 1, 5);                                /* specific */
    post(&q, &b, WAITIO_ANY_SOURCE, 5);                /* any source */
    post(&q, &c, 2, WAITIO_ANY_TAG);                   /* any tag */
    post(&q, &d, WAITIO_ANY_SOURCE, WAITIO_ANY_TAG);   /* both */
    post(&q, &e, 2, 5);                                /* specific, posted after the wildcards */
    /* a message from rank 2 tag 5 skips a (rank 1) and takes b (first eligible, before e) */
    CHECK(wio_mq_take_posted(&q, 12, 7, 2, 5) == &b);
    CHECK(b.status.source == 2 && b.status.tag == 5 && b.peer_id == 12);
    /* wrong group matches nothing */
    CHECK(wio_mq_take_posted(&q, 12, 8, 2, 5) == NULL);
    /* rank 2 tag 5 again: c (any tag) was posted before e */
    CHECK(wio_mq_take_posted(&q, 12, 7, 2, 5) == &c);
    /* rank 1 tag 5 -> a */
    CHECK(wio_mq_take_posted(&q, 11, 7, 1, 5) == &a);
    /* a forged source rank (process 13 claiming rank 1) does not match the wildcard */
    CHECK(wio_mq_take_posted(&q, 13, 7, 1, 5) == NULL);
    /* out-of-range source rank never matches */
    CHECK(wio_mq_take_posted(&q, 13, 7, 99, 5) == NULL);
    CHECK(wio_mq_take_posted(&q, 13, 7, 3, 1) == &d);
    /* only e is left: the wildcard list is empty and the specific one still matches */
    CHECK(wio_mq_take_posted(&q, 12, 7, 2, 9) == NULL);
    CHECK(wio_mq_take_posted(&q, 12, 7, 2, 5) == &e);
    CHECK(wio_mq_take_posted(&q, 12, 7, 2, 5) == NULL);
}

static wio_unexp *arrive(wio_mq *q, wio_unexp *u, uint32_t peer, uint32_t src, uint64_t tag)
{
    memset(u, 0, sizeof *u);
    u->kind = WIO_UX_EAGER;
    u->peer_id = peer;
    u->gid = grp.gid;
    u->src = src;
    u->tag = tag;
    wio_mq_add_unexpected(q, u);
    return u;
}

static void test_unexpected_non_overtaking(void)
{
    static wio_mq q;
    wio_mq_init(&q);
    wio_unexp u[5];
    arrive(&q, &u[0], 11, 1, 3);
    arrive(&q, &u[1], 12, 2, 3);
    arrive(&q, &u[2], 11, 1, 3);
    arrive(&q, &u[3], 11, 1, 4);
    arrive(&q, &u[4], 12, 2, 4);
    wio_req_impl r;
    req_init(&r, 1, 3);
    /* two messages from rank 1 tag 3: the older one first */
    CHECK(wio_mq_take_unexpected(&q, &r) == &u[0]);
    CHECK(wio_mq_take_unexpected(&q, &r) == &u[2]);
    CHECK(wio_mq_take_unexpected(&q, &r) == NULL);
    req_init(&r, WAITIO_ANY_SOURCE, 4);
    CHECK(wio_mq_take_unexpected(&q, &r) == &u[3]);
    req_init(&r, WAITIO_ANY_SOURCE, WAITIO_ANY_TAG);
    CHECK(wio_mq_take_unexpected(&q, &r) == &u[1]);
    CHECK(wio_mq_take_unexpected(&q, &r) == &u[4]);
    CHECK(wio_list_empty(&q.unexpected));
    for (unsigned i = 0; i < WIO_MQ_BUCKETS; i++)
        CHECK(wio_list_empty(&q.unexp_bucket[i]));
}

static void test_tags_are_64_bit(void)
{
    static wio_mq q;
    wio_mq_init(&q);
    wio_req_impl a;
    post(&q, &a, 0, 0x100000000ull);
    CHECK(wio_mq_take_posted(&q, 10, 7, 0, 0) == NULL);            /* low 32 bits equal */
    CHECK(wio_mq_take_posted(&q, 10, 7, 0, 0x100000000ull) == &a);
}

/* ---- randomized: the hashed queues against one list scanned in order ---- */

#define NREQ 600
#define NMSG 600
static uint32_t rng = 99;
static uint32_t rnd(void)
{
    rng = rng * 1103515245u + 12345u;
    return rng >> 8;
}

static int rand_rank(void) { return rnd() % 5 == 0 ? WAITIO_ANY_SOURCE : (int)(rnd() % 4); }
static uint64_t rand_tag(void) { return rnd() % 7 == 0 ? WAITIO_ANY_TAG : rnd() % 40; }

static void test_random_against_linear(void)
{
    static wio_mq q;
    static wio_req_impl reqs[NREQ];
    static int taken[NREQ];
    static wio_unexp msgs[NMSG];
    static int used[NMSG];
    wio_mq_init(&q);
    memset(taken, 0, sizeof taken);
    /* posted side: every message is offered to the queue and to the linear reference */
    for (int i = 0; i < NREQ; i++)
        post(&q, &reqs[i], rand_rank(), rand_tag());
    int mismatches = 0;
    for (int m = 0; m < 3 * NREQ; m++) {
        uint32_t src = rnd() % 4;
        uint64_t tag = rnd() % 40;
        int want = -1;
        for (int i = 0; i < NREQ && want < 0; i++)
            if (!taken[i] && wio_match(&reqs[i], members[src], grp.gid, src, tag))
                want = i;
        wio_req_impl *got = wio_mq_take_posted(&q, members[src], grp.gid, src, tag);
        mismatches += got != (want < 0 ? NULL : &reqs[want]);
        if (want >= 0)
            taken[want] = 1;
    }
    CHECK(mismatches == 0);
    /* unexpected side: receives take the oldest matching message */
    wio_mq_init(&q);
    memset(used, 0, sizeof used);
    for (int i = 0; i < NMSG; i++) {
        uint32_t src = rnd() % 4;
        arrive(&q, &msgs[i], members[src], src, rnd() % 40);
    }
    mismatches = 0;
    for (int k = 0; k < 2 * NMSG; k++) {
        wio_req_impl r;
        req_init(&r, rand_rank(), rand_tag());
        int want = -1;
        for (int i = 0; i < NMSG && want < 0; i++)
            if (!used[i] && wio_match(&r, msgs[i].peer_id, msgs[i].gid, msgs[i].src, msgs[i].tag))
                want = i;
        wio_unexp *got = wio_mq_take_unexpected(&q, &r);
        mismatches += got != (want < 0 ? NULL : &msgs[want]);
        if (want >= 0)
            used[want] = 1;
    }
    CHECK(mismatches == 0);
    wio_mq_fini(&q);
}

/* Collective-like traffic: every call has a tag of its own and 3 peers run up to thousands of
 * calls ahead, so thousands of keys wait at once. Messages arrive in random interleavings,
 * receives (some with wildcards) take them in between; every answer is checked against the
 * linear scan while the table grows, and it must be back to the embedded one once empty. */
#define NGROW 6000
static void test_growing_table_against_linear(void)
{
    static wio_mq q;
    static wio_unexp msgs[NGROW];
    static int used[NGROW];
    wio_mq_init(&q);
    memset(used, 0, sizeof used);
    uint64_t next_tag[3] = {0, 0, 0};
    int arrived = 0, mismatches = 0, taken = 0;
    unsigned max_bits = q.unexp_bits;
    uint64_t want_tag = 0; /* the receiver's next call */
    while (taken < NGROW) {
        /* bursts of arrivals: a peer sends a message of its current call, and a third of the
         * time another one of the same call (same key: their order must survive a rehash) */
        for (int k = rnd() % 64; k > 0 && arrived < NGROW; k--) {
            uint32_t src = 1 + rnd() % 3;
            arrive(&q, &msgs[arrived++], members[src], src, next_tag[src - 1]);
            if (rnd() % 3)
                next_tag[src - 1]++;
        }
        if (q.unexp_bits > max_bits)
            max_bits = q.unexp_bits;
        for (int k = rnd() % 48; k > 0; k--) {
            wio_req_impl r;
            int wild = rnd() % 10 == 0;
            uint32_t src = 1 + rnd() % 3;
            req_init(&r, wild ? WAITIO_ANY_SOURCE : (int)src, wild && rnd() % 2 ? WAITIO_ANY_TAG : want_tag);
            int want = -1;
            for (int i = 0; i < arrived && want < 0; i++)
                if (!used[i] && wio_match(&r, msgs[i].peer_id, msgs[i].gid, msgs[i].src, msgs[i].tag))
                    want = i;
            wio_unexp *got = wio_mq_take_unexpected(&q, &r);
            mismatches += got != (want < 0 ? NULL : &msgs[want]);
            if (want >= 0) {
                used[want] = 1;
                taken++;
            }
            if (rnd() % 3 == 0)
                want_tag++;
        }
        if (arrived == NGROW && taken < NGROW) /* drain what the random receives left */
            for (int i = 0; i < NGROW; i++)
                if (!used[i]) {
                    wio_req_impl r;
                    req_init(&r, (int)msgs[i].src, msgs[i].tag);
                    mismatches += wio_mq_take_unexpected(&q, &r) != &msgs[i];
                    used[i] = 1;
                    taken++;
                }
    }
    CHECK(mismatches == 0);
    CHECK(max_bits > WIO_MQ_BITS); /* it did grow */
    CHECK(q.unexp_count == 0 && q.unexp_big == NULL && q.unexp_bits == WIO_MQ_BITS);
    CHECK(wio_list_empty(&q.unexpected));
    for (unsigned i = 0; i < WIO_MQ_BUCKETS; i++)
        CHECK(wio_list_empty(&q.unexp_bucket[i]));
    wio_mq_fini(&q);
}

int main(void)
{
    test_posted_order_and_wildcards();
    test_unexpected_non_overtaking();
    test_tags_are_64_bit();
    test_random_against_linear();
    test_growing_table_against_linear();
    return check_report("match_queues");
}
