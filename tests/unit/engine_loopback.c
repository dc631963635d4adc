/* engine_loopback.c — the progress engine's protocol, tested in one process: several engines
 * talk over the in-process loop transport (loop_transport.h), driven round by round from this
 * thread (or from one thread per engine for finalize). Covered: eager and rendezvous messages of
 * random sizes with every byte checked, ordering, credit (messages held at the sender while the
 * receiver holds too much, released in order), truncation (eager and rendezvous), a peer that
 * crashes (every request bound to it fails with WAITIO_ERR_PEER, fast), a peer that breaks
 * connections inside connect() (reconnected, or failed; the link never keeps a freed connection), idle close under
 * WAITIO_MAX_CONNECTIONS with traffic resuming (also when both ask at once, and when an abandoned
 * connect is accepted while the idle close still ends), a peer with another key (refused, nothing bound),
 * and finalize (BYE: the other side sees WAITIO_ERR_PEER_FINALIZED). */
#include <pthread.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "core/engine.h"
#include "loop_transport.h"

#define MAXE 4
static wio_engine *E[MAXE];
static int NE;
static wio_group *G[MAXE];

static int every_process(int pbid, int rank) { (void)pbid; (void)rank; return 1; }

static wio_engine *make_engine(uint32_t id, uint32_t n, const char *key, long max_conns,
                               size_t eager_limit, size_t credit)
{
    wio_engine *e = calloc(1, sizeof *e);
    if (!e || wio_config_load(&e->cfg) != 0)
        abort();
    wio_list_init(&e->groups);
    wio_mq_init(&e->mq);
    wio_list_init(&e->unexp_free);
    e->cfg.npb = (int)n;
    e->cfg.pbid = (int)id;
    e->cfg.local_rank = 0;
    e->cfg.local_size = 1;
    e->cfg.max_connections = max_conns;
    e->cfg.eager_limit = eager_limit;
    e->cfg.chunk_size = 8192;
    e->cfg.eager_credit = credit;
    e->cfg.finalize_timeout = 5;
    e->key.len = strlen(key);
    memcpy(e->key.bytes, key, e->key.len);
    e->npb = (int)n;
    e->nprocs = calloc(n, sizeof(int));
    e->pb_offset = calloc(n, sizeof(uint32_t));
    e->table = calloc(n, sizeof(wio_proc));
    if (!e->nprocs || !e->pb_offset || !e->table)
        abort();
    for (uint32_t i = 0; i < n; i++) {
        e->nprocs[i] = 1;
        e->pb_offset[i] = i;
        e->table[i].transports = WIO_TP_TCP;
        e->table[i].host_id = 1;
    }
    e->nprocs_total = n;
    e->my_id = id;
    e->tps[0] = (wio_tp_slot){&loop_transport_ops, NULL, e};
    e->ntps = 1;
    e->bulk_tp = -1;
    if (wio_engine_open(e) != 0 || wio_engine_start(e) != 0)
        abort();
    return e;
}

/* n engines, one PB each, and the universe group on each (group rank = process id). */
static void setup(int n, long max_conns, size_t eager_limit, size_t credit)
{
    NE = n;
    waitio_filter_func_t f[MAXE];
    int order[MAXE];
    for (int i = 0; i < n; i++) {
        f[i] = every_process;
        order[i] = i + 1;
    }
    for (int i = 0; i < n; i++) {
        char key[32];
        snprintf(key, sizeof key, "loop-test-key-%s", "same");
        E[i] = make_engine((uint32_t)i, (uint32_t)n, key, max_conns, eager_limit, credit);
        if (wio_group_create_func(E[i], 7, f, order, &G[i]) != 0)
            abort();
    }
}

static void teardown(void)
{
    for (int i = 0; i < NE; i++)
        if (E[i])
            wio_engine_free(E[i]);
    memset(E, 0, sizeof E);
    NE = 0;
}

static void pump(int rounds)
{
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < NE; i++)
            if (E[i])
                wio_engine_progress(E[i], 0);
}

static int done(const wio_req_impl *r) { return r->state == WIO_RS_DONE; }

/* Pumps until every request in rs is done, or gives up after max rounds. */
static int pump_until(wio_req_impl **rs, int n, int max)
{
    for (int round = 0; round < max; round++) {
        int all = 1;
        for (int i = 0; i < n; i++)
            all &= done(rs[i]);
        if (all)
            return 1;
        pump(1);
    }
    return 0;
}

static void fill(uint8_t *b, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        b[i] = (uint8_t)(seed >> 16);
    }
}

/* Random sizes across the eager limit both ways, posted before and after arrival. */
static void test_exchange(void)
{
    setup(2, 0, 4096, 0);
    srand(12345);
    for (int k = 0; k < 40; k++) {
        size_t len = (size_t)(rand() % 3 == 0 ? rand() % 200000 : rand() % 6000);
        int from = k & 1, to = 1 - from;
        uint64_t tag = (uint64_t)rand() << 20;
        uint8_t *src = malloc(len + 1), *dst = malloc(len + 1);
        fill(src, len, (uint32_t)k);
        memset(dst, 0, len + 1);
        wio_req_impl *rs[2];
        if (k % 3 == 0) { /* receive posted late: the message is unexpected */
            CHECK(wio_engine_isend(E[from], G[from], to, src, len, tag, WIO_CTX_USER, &rs[0]) == 0);
            pump(50);
            CHECK(wio_engine_irecv(E[to], G[to], from, dst, len, tag, WIO_CTX_USER, &rs[1]) == 0);
        } else {
            CHECK(wio_engine_irecv(E[to], G[to], from, dst, len, tag, WIO_CTX_USER, &rs[1]) == 0);
            CHECK(wio_engine_isend(E[from], G[from], to, src, len, tag, WIO_CTX_USER, &rs[0]) == 0);
        }
        CHECK(pump_until(rs, 2, 200000));
        CHECK(rs[0]->status.error == 0 && rs[1]->status.error == 0);
        CHECK(rs[1]->status.len == len && memcmp(src, dst, len) == 0);
        wio_req_release(E[from], rs[0]);
        wio_req_release(E[to], rs[1]);
        free(src);
        free(dst);
    }
    teardown();
}

/* A receiver that posts nothing holds at most its credit; later messages wait at the sender and
 * all arrive, in order, once it posts. */
static void test_credit(void)
{
    enum { N = 64, LEN = 1000 };
    setup(2, 0, 4096, 8 * 1024);
    static uint8_t src[N][LEN], dst[N][LEN];
    wio_req_impl *s[N], *r[N];
    for (int i = 0; i < N; i++) {
        fill(src[i], LEN, (uint32_t)i + 99);
        CHECK(wio_engine_isend(E[0], G[0], 1, src[i], LEN, 5, WIO_CTX_USER, &s[i]) == 0);
    }
    pump(2000);
    int sent = 0, held = 0;
    for (int i = 0; i < N; i++)
        sent += done(s[i]);
    wio_peer *p = E[0]->peers[1];
    for (wio_list *l = p->held.next; l != &p->held; l = l->next)
        held++;
    CHECK(sent < N && held > 0);
    CHECK(E[1]->unexpected_bytes <= 8 * 1024);
    printf("credit: %d of %d sends completed, %d held at the sender, %zu bytes unexpected\n", sent, N,
           held, E[1]->unexpected_bytes);
    for (int i = 0; i < N; i++)
        CHECK(wio_engine_irecv(E[1], G[1], 0, dst[i], LEN, 5, WIO_CTX_USER, &r[i]) == 0);
    CHECK(pump_until(s, N, 200000) && pump_until(r, N, 200000));
    for (int i = 0; i < N; i++) {
        CHECK(r[i]->status.error == 0 && memcmp(src[i], dst[i], LEN) == 0);
        wio_req_release(E[0], s[i]);
        wio_req_release(E[1], r[i]);
    }
    teardown();
}

/* Messages held at the sender for lack of credit when the receiver dies complete with
 * WAITIO_ERR_PEER like every other queued message (they once had no completion callback). */
static void test_held_then_crash(void)
{
    enum { N = 32, LEN = 1000 };
    setup(2, 0, 4096, 4 * 1024);
    static uint8_t src[N][LEN];
    wio_req_impl *s[N];
    for (int i = 0; i < N; i++)
        CHECK(wio_engine_isend(E[0], G[0], 1, src[i], LEN, 6, WIO_CTX_USER, &s[i]) == 0);
    pump(2000);
    int held = 0;
    for (wio_list *l = E[0]->peers[1]->held.next; l != &E[0]->peers[1]->held; l = l->next)
        held++;
    CHECK(held > 1);
    loop_crash(1);
    wio_engine *dead = E[1];
    E[1] = NULL;
    CHECK(pump_until(s, N, 20000));
    int failed = 0;
    for (int i = 0; i < N; i++)
        failed += s[i]->status.error == WAITIO_ERR_PEER;
    CHECK(failed >= held);
    printf("held then crash: %d held, %d sends failed with WAITIO_ERR_PEER\n", held, failed);
    wio_engine_free(dead);
    teardown();
}

/* A buffer too short: the receive fails with WAITIO_ERR_TRUNCATE (status len = sent length),
 * the send succeeds, and the connection carries on. */
static void test_truncate(void)
{
    setup(2, 0, 4096, 0);
    size_t sizes[2] = {3000, 100000}; /* eager, rendezvous */
    for (int k = 0; k < 2; k++) {
        uint8_t *src = malloc(sizes[k]), dst[64];
        fill(src, sizes[k], 7);
        wio_req_impl *rs[2];
        CHECK(wio_engine_irecv(E[1], G[1], 0, dst, sizeof dst, 9, WIO_CTX_USER, &rs[1]) == 0);
        CHECK(wio_engine_isend(E[0], G[0], 1, src, sizes[k], 9, WIO_CTX_USER, &rs[0]) == 0);
        CHECK(pump_until(rs, 2, 100000));
        CHECK(rs[0]->status.error == 0);
        CHECK(rs[1]->status.error == WAITIO_ERR_TRUNCATE && rs[1]->status.len == sizes[k]);
        wio_req_release(E[0], rs[0]);
        wio_req_release(E[1], rs[1]);
        free(src);
    }
    uint8_t a[10] = "after", b[10] = {0};
    wio_req_impl *rs[2];
    CHECK(wio_engine_irecv(E[1], G[1], 0, b, sizeof b, 10, WIO_CTX_USER, &rs[1]) == 0);
    CHECK(wio_engine_isend(E[0], G[0], 1, a, sizeof a, 10, WIO_CTX_USER, &rs[0]) == 0);
    CHECK(pump_until(rs, 2, 100000) && memcmp(a, b, sizeof a) == 0);
    teardown();
}

/* A peer dies mid-transfer (no BYE): a rendezvous send to it, a receive naming it and a new send
 * all fail with WAITIO_ERR_PEER; a wildcard receive stays posted. */
static void test_peer_crash(void)
{
    setup(3, 0, 4096, 0);
    static uint8_t big[1 << 20], small[16];
    wio_req_impl *hello[2];
    CHECK(wio_engine_irecv(E[2], G[2], 0, small, sizeof small, 1, WIO_CTX_USER, &hello[1]) == 0);
    CHECK(wio_engine_isend(E[0], G[0], 2, small, sizeof small, 1, WIO_CTX_USER, &hello[0]) == 0);
    CHECK(pump_until(hello, 2, 100000)); /* connected */
    wio_req_impl *s, *r, *any;
    CHECK(wio_engine_isend(E[0], G[0], 2, big, sizeof big, 2, WIO_CTX_USER, &s) == 0);
    CHECK(wio_engine_irecv(E[0], G[0], 2, small, sizeof small, 3, WIO_CTX_USER, &r) == 0);
    CHECK(wio_engine_irecv(E[0], G[0], WAITIO_ANY_SOURCE, small, sizeof small, 4, WIO_CTX_USER, &any) == 0);
    pump(20);
    loop_crash(2);
    wio_engine *dead = E[2];
    E[2] = NULL;
    wio_req_impl *both[2] = {s, r};
    CHECK(pump_until(both, 2, 10000));
    CHECK(s->status.error == WAITIO_ERR_PEER && r->status.error == WAITIO_ERR_PEER);
    CHECK(!done(any));
    wio_req_impl *late;
    CHECK(wio_engine_isend(E[0], G[0], 2, small, 1, 5, WIO_CTX_USER, &late) == 0);
    CHECK(done(late) && late->status.error == WAITIO_ERR_PEER);
    wio_engine_free(dead);
    teardown();
}

/* Pumps every engine for about `secs` seconds, or until every request in rs is done (the
 * engine's reconnect delays are in wall time). */
static int pump_for(wio_req_impl **rs, int n, double secs)
{
    double end = wio_now() + secs;
    do {
        int all = 1;
        for (int i = 0; i < n; i++)
            all &= done(rs[i]);
        if (all)
            return 1;
        pump(1);
    } while (wio_now() < end);
    return 0;
}

/* A connect whose first write fails inside the transport's connect() (a local peer that died
 * after its listener took the connection: HELLO gets EPIPE). The owner must hear of it only after
 * connect returned the connection, never inside it: the engine would otherwise keep, as its
 * link, a connection already closed and freed after the poll round, and close it again at
 * finalize (mp_peer_exit's no-warmup case crashed there, 1 run in 40). A peer that broke one
 * connect is reconnected and the message arrives; one that breaks all of them fails the
 * requests with WAITIO_ERR_PEER, the link holds nothing, and finalize is clean. */
static void test_connect_reset(void)
{
    setup(2, 0, 4096, 0);
    uint8_t a[100], b[100];
    fill(a, sizeof a, 5);
    wio_req_impl *rs[2];
    loop_reset_connects[1] = 1;
    CHECK(wio_engine_irecv(E[1], G[1], 0, b, sizeof b, 1, WIO_CTX_USER, &rs[1]) == 0);
    CHECK(wio_engine_isend(E[0], G[0], 1, a, sizeof a, 1, WIO_CTX_USER, &rs[0]) == 0);
    CHECK(!done(rs[0])); /* nothing is decided inside the call */
    CHECK(pump_for(rs, 2, 10) && rs[0]->status.error == 0 && rs[1]->status.error == 0 &&
          memcmp(a, b, sizeof a) == 0);
    CHECK(loop_reset_connects[1] == 0);
    teardown();

    setup(2, 0, 4096, 0);
    loop_reset_connects[1] = -1;
    wio_req_impl *s, *r;
    CHECK(wio_engine_isend(E[0], G[0], 1, a, sizeof a, 2, WIO_CTX_USER, &s) == 0);
    CHECK(wio_engine_irecv(E[0], G[0], 1, b, sizeof b, 3, WIO_CTX_USER, &r) == 0);
    wio_req_impl *both[2] = {s, r};
    CHECK(pump_for(both, 2, 10));
    CHECK(s->status.error == WAITIO_ERR_PEER && r->status.error == WAITIO_ERR_PEER);
    REQUIRE(E[0]->peers[1] != NULL);
    CHECK(E[0]->peers[1]->state == WIO_PEER_FAILED && E[0]->peers[1]->main.conn == NULL);
    pump(10); /* the poll rounds after which closed connections are freed */
    loop_reset_connects[1] = 0;
    CHECK(wio_engine_finalize(E[0]) == 0); /* closed the freed connection again (ASan: use after free) */
    teardown();
}

/* With WAITIO_MAX_CONNECTIONS=1, a process talking to two peers in turn closes the idle
 * connection each time (IDLE_CLOSE handshake) and nothing is lost or reordered. */
static void test_idle_close(void)
{
    setup(3, 1, 4096, 0);
    int closes = 0;
    for (int round = 0; round < 12; round++) {
        int to = 1 + (round & 1);
        uint8_t msg[3][300], got[3][300];
        wio_req_impl *rs[6];
        for (int m = 0; m < 3; m++) {
            fill(msg[m], sizeof msg[m], (uint32_t)(round * 3 + m));
            CHECK(wio_engine_irecv(E[to], G[to], 0, got[m], sizeof got[m], (uint64_t)m, WIO_CTX_USER, &rs[3 + m]) == 0);
            CHECK(wio_engine_isend(E[0], G[0], to, msg[m], sizeof msg[m], (uint64_t)m, WIO_CTX_USER, &rs[m]) == 0);
        }
        CHECK(pump_until(rs, 6, 200000));
        for (int m = 0; m < 3; m++) {
            CHECK(rs[3 + m]->status.error == 0 && memcmp(msg[m], got[m], sizeof got[m]) == 0);
            wio_req_release(E[0], rs[m]);
            wio_req_release(E[to], rs[3 + m]);
        }
        for (int i = 1; i < 3; i++)
            closes += E[0]->peers[i] && E[0]->peers[i]->idle_closed;
    }
    CHECK(closes > 0);
    printf("idle close: peers found idle-closed after %d of 24 checks\n", closes);
    teardown();
}

/* Sends one message each way between processes a and b and checks it arrived whole. */
static void exchange_once(int a, int b, uint32_t seed)
{
    uint8_t msg[2][200], got[2][200];
    wio_req_impl *rs[4];
    fill(msg[0], sizeof msg[0], seed);
    fill(msg[1], sizeof msg[1], seed + 1);
    CHECK(wio_engine_irecv(E[b], G[b], a, got[0], sizeof got[0], 3, WIO_CTX_USER, &rs[0]) == 0);
    CHECK(wio_engine_irecv(E[a], G[a], b, got[1], sizeof got[1], 3, WIO_CTX_USER, &rs[1]) == 0);
    CHECK(wio_engine_isend(E[a], G[a], b, msg[0], sizeof msg[0], 3, WIO_CTX_USER, &rs[2]) == 0);
    CHECK(wio_engine_isend(E[b], G[b], a, msg[1], sizeof msg[1], 3, WIO_CTX_USER, &rs[3]) == 0);
    REQUIRE(pump_until(rs, 4, 200000));
    for (int i = 0; i < 4; i++)
        CHECK(rs[i]->status.error == 0);
    CHECK(memcmp(msg[0], got[0], sizeof got[0]) == 0 && memcmp(msg[1], got[1], sizeof got[1]) == 0);
    wio_req_release(E[b], rs[0]);
    wio_req_release(E[a], rs[1]);
    wio_req_release(E[a], rs[2]);
    wio_req_release(E[b], rs[3]);
}

/* Under the cap of 1, `closer` sends to process 2 and so asks `responder` to close their idle
 * connection; once responder has answered ACK (IDLE_CLOSING), its end `held` reads no more, so
 * closer ends up IDLE while responder still waits for the connection's end. */
static void idle_close_half_seen(int closer, int responder, loop_end *held)
{
    uint8_t m[16] = "to 2", got[16];
    wio_req_impl *rs[2];
    CHECK(wio_engine_irecv(E[2], G[2], closer, got, sizeof got, 2, WIO_CTX_USER, &rs[0]) == 0);
    CHECK(wio_engine_isend(E[closer], G[closer], 2, m, sizeof m, 2, WIO_CTX_USER, &rs[1]) == 0);
    for (int round = 0; round < 100000 && E[responder]->peers[closer]->state != WIO_PEER_IDLE_CLOSING; round++) {
        wio_engine_progress(E[closer], 0);
        wio_engine_progress(E[2], 0);
        wio_engine_progress(E[responder], 0);
    }
    CHECK(E[responder]->peers[closer]->state == WIO_PEER_IDLE_CLOSING);
    held->hold_reads = 1;
    for (int round = 0; round < 100000 && E[closer]->peers[responder]->state != WIO_PEER_IDLE; round++)
        pump(1);
    CHECK(E[closer]->peers[responder]->state == WIO_PEER_IDLE &&
          E[responder]->peers[closer]->state == WIO_PEER_IDLE_CLOSING);
    REQUIRE(pump_until(rs, 2, 200000) && rs[1]->status.error == 0 && memcmp(m, got, sizeof m) == 0);
    wio_req_release(E[2], rs[0]);
    wio_req_release(E[closer], rs[1]);
}

/* The race core_fd_cap.file found (stop 19): 0 and 1 connect at once; 1 keeps 0's connection
 * and abandons its own (C1), whose handshake 0 has not read yet (a slow link). 0 then closes the
 * idle connection for the cap; 1 answers ACK, but is slow to see the connection end. Only then
 * does 0 read C1's handshake: being IDLE, it accepts C1 and holds it open. 1 must take C1 back
 * although it still waits for the old connection's end (it read 0's last frame on it), not
 * close it: 0 would lose process 1 ("peer closed the connection"). */
static void test_adopt_while_idle_closing(void)
{
    setup(3, 1, 4096, 0);
    uint8_t a[64] = "from 1", b[64] = "from 0", got_a[64], got_b[64];
    wio_req_impl *rs[4];
    CHECK(wio_engine_isend(E[1], G[1], 0, a, sizeof a, 1, WIO_CTX_USER, &rs[2]) == 0);
    loop_end *c1_at_0 = loop_newest_end(0); /* 1's connect: 0 reads it late */
    CHECK(c1_at_0 && c1_at_0->side == 1);
    c1_at_0->hold_reads = 1;
    CHECK(wio_engine_isend(E[0], G[0], 1, b, sizeof b, 1, WIO_CTX_USER, &rs[3]) == 0);
    loop_end *c0_at_1 = loop_newest_end(1);
    CHECK(c0_at_1 && c0_at_1->side == 1);
    /* the receives come after both connects (a receive naming a peer connects too) */
    CHECK(wio_engine_irecv(E[0], G[0], 1, got_a, sizeof got_a, 1, WIO_CTX_USER, &rs[0]) == 0);
    CHECK(wio_engine_irecv(E[1], G[1], 0, got_b, sizeof got_b, 1, WIO_CTX_USER, &rs[1]) == 0);
    REQUIRE(pump_until(rs, 4, 200000));
    for (int i = 0; i < 4; i++)
        CHECK(rs[i]->status.error == 0);
    CHECK(memcmp(a, got_a, sizeof a) == 0 && memcmp(b, got_b, sizeof b) == 0);
    for (int i = 0; i < 4; i++)
        wio_req_release(E[i < 2 ? i : 3 - i], rs[i]);
    CHECK(E[0]->peers[1]->state == WIO_PEER_OPEN && E[1]->peers[0]->state == WIO_PEER_OPEN);

    /* 0 closes the connection with 1 for the cap; 1 answers, then reads no more */
    idle_close_half_seen(0, 1, c0_at_1);
    int round;

    /* now 0 reads 1's abandoned connect, accepts it; 1 adopts it */
    loop_release_holds(0);
    for (round = 0; round < 100000 && E[0]->peers[1]->state != WIO_PEER_OPEN; round++)
        pump(1);
    pump(100);
    printf("adopt while idle-closing: 0 sees 1 %s, 1 sees 0 %s\n",
           E[0]->peers[1]->state == WIO_PEER_OPEN ? "open" : "not open",
           E[1]->peers[0]->state == WIO_PEER_OPEN ? "open" : "not open");
    CHECK(E[0]->peers[1]->state == WIO_PEER_OPEN && E[1]->peers[0]->state == WIO_PEER_OPEN);
    loop_release_holds(1);
    for (int k = 0; k < 3; k++)
        exchange_once(0, 1, 77u + (uint32_t)k);
    CHECK(E[0]->peers[1]->state != WIO_PEER_FAILED && E[1]->peers[0]->state != WIO_PEER_FAILED);
    teardown();
}

/* 1 closes the idle connection with 0 for the cap; 0 answers ACK but is slow to see the end, and
 * 1, with a message for 0, connects again meanwhile: 0 refuses (its old connection still ends),
 * then connects back itself as soon as the old one is gone, instead of leaving 1 to retry after
 * 2 s: the message arrives over a connection 0 opened. */
static void test_connect_back(void)
{
    setup(3, 1, 4096, 0);
    exchange_once(0, 1, 21);
    loop_end *c_at_0 = NULL; /* 0's end of the 0-1 connection, whichever side opened it */
    for (size_t i = 0; i < loop_registry[0]->nends; i++)
        if (loop_registry[0]->ends[i]->s->state == WIO_SS_OPEN)
            c_at_0 = loop_registry[0]->ends[i];
    CHECK(c_at_0 != NULL);
    uint8_t m0[16] = "1 to 0 again", g0[16];
    wio_req_impl *rs[4];
    idle_close_half_seen(1, 0, c_at_0);
    int round;
    /* 1 sends to 0 again: its new connect is refused while 0 still waits for the old end */
    CHECK(wio_engine_irecv(E[0], G[0], 1, g0, sizeof g0, 5, WIO_CTX_USER, &rs[2]) == 0);
    CHECK(wio_engine_isend(E[1], G[1], 0, m0, sizeof m0, 5, WIO_CTX_USER, &rs[3]) == 0);
    for (round = 0; round < 100000 && !E[0]->peers[1]->connect_back; round++)
        pump(1);
    CHECK(E[0]->peers[1]->connect_back && E[0]->peers[1]->state == WIO_PEER_IDLE_CLOSING);
    loop_release_holds(0);
    REQUIRE(pump_until(&rs[2], 2, 200000));
    CHECK(rs[2]->status.error == 0 && rs[3]->status.error == 0 && memcmp(m0, g0, sizeof g0) == 0);
    CHECK(E[0]->peers[1]->state == WIO_PEER_OPEN && E[0]->peers[1]->main.outgoing);
    wio_req_release(E[0], rs[2]);
    wio_req_release(E[1], rs[3]);
    exchange_once(0, 1, 23);
    teardown();
}

/* Both ask to close the idle connection at once: each half-closes and waits for the other's
 * close; nothing is lost and traffic resumes on a new connection. */
static void test_idle_close_crossing(void)
{
    setup(3, 1, 4096, 0);
    exchange_once(0, 1, 5);
    CHECK(E[0]->peers[1]->state == WIO_PEER_OPEN && E[1]->peers[0]->state == WIO_PEER_OPEN);
    /* 0 talks to 2 and 1 talks to 2 in the same round: both ask the other to close 0-1 */
    uint8_t m[2][32] = {"0 to 2", "1 to 2"}, got[2][32];
    wio_req_impl *rs[4];
    for (int i = 0; i < 2; i++) {
        CHECK(wio_engine_irecv(E[2], G[2], i, got[i], sizeof got[i], 9, WIO_CTX_USER, &rs[2 + i]) == 0);
        CHECK(wio_engine_isend(E[i], G[i], 2, m[i], sizeof m[i], 9, WIO_CTX_USER, &rs[i]) == 0);
    }
    CHECK(E[0]->peers[1]->state == WIO_PEER_IDLE_CLOSING && E[1]->peers[0]->state == WIO_PEER_IDLE_CLOSING);
    REQUIRE(pump_until(rs, 4, 200000));
    for (int i = 0; i < 4; i++)
        CHECK(rs[i]->status.error == 0);
    CHECK(memcmp(m[0], got[0], 32) == 0 && memcmp(m[1], got[1], 32) == 0);
    for (int i = 0; i < 2; i++) {
        wio_req_release(E[i], rs[i]);
        wio_req_release(E[2], rs[2 + i]);
    }
    for (int round = 0; round < 100000 && (E[0]->peers[1]->state != WIO_PEER_IDLE ||
                                           E[1]->peers[0]->state != WIO_PEER_IDLE); round++)
        pump(1);
    CHECK(E[0]->peers[1]->state == WIO_PEER_IDLE && E[1]->peers[0]->state == WIO_PEER_IDLE);
    exchange_once(0, 1, 11);
    exchange_once(1, 0, 13);
    teardown();
}

/* Another instance key: the connection is refused during the handshake and the send fails with
 * WAITIO_ERR_AUTH; the acceptor's engine never bound the stranger to a peer. */
static void test_wrong_key(void)
{
    NE = 2;
    E[0] = make_engine(0, 2, "the-right-key-0123", 0, 4096, 0);
    E[1] = make_engine(1, 2, "another-key-456789", 0, 4096, 0);
    waitio_filter_func_t f[2] = {every_process, every_process};
    int order[2] = {1, 2};
    for (int i = 0; i < 2; i++)
        CHECK(wio_group_create_func(E[i], 7, f, order, &G[i]) == 0);
    uint8_t b[8] = "x";
    wio_req_impl *s;
    CHECK(wio_engine_isend(E[0], G[0], 1, b, sizeof b, 1, WIO_CTX_USER, &s) == 0);
    CHECK(pump_until(&s, 1, 10000));
    CHECK(s->status.error == WAITIO_ERR_AUTH);
    CHECK(E[1]->peers[0] == NULL || E[1]->peers[0]->main.conn == NULL);
    teardown();
}

static void *finalize_thread(void *arg)
{
    wio_engine *e = arg;
    return (void *)(intptr_t)wio_engine_finalize(e);
}

/* Finalize sends BYE: the other side's receive naming it fails with WAITIO_ERR_PEER_FINALIZED,
 * and everything sent before arrives. Each engine is driven by its own thread here. */
static void test_finalize(void)
{
    setup(2, 0, 4096, 0);
    uint8_t a[100], b[100];
    fill(a, sizeof a, 3);
    wio_req_impl *rs[2], *r2;
    CHECK(wio_engine_irecv(E[1], G[1], 0, b, sizeof b, 1, WIO_CTX_USER, &rs[1]) == 0);
    CHECK(wio_engine_isend(E[0], G[0], 1, a, sizeof a, 1, WIO_CTX_USER, &rs[0]) == 0);
    CHECK(pump_until(rs, 2, 100000) && memcmp(a, b, sizeof a) == 0);
    CHECK(wio_engine_irecv(E[1], G[1], 0, b, sizeof b, 2, WIO_CTX_USER, &r2) == 0);
    pthread_t th;
    pthread_create(&th, NULL, finalize_thread, E[0]);
    /* bounded in time, not in rounds: on 2 busy cores the finalizing thread may wait long
     * for a core */
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rounds = 0;
    do {
        wio_engine_progress(E[1], 0);
        clock_gettime(CLOCK_MONOTONIC, &t);
        rounds++;
    } while (!done(r2) && (t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 20000000000L);
    if (!done(r2))
        fprintf(stderr, "finalize: no BYE after %d rounds in 20 s\n", rounds);
    CHECK(done(r2) && r2->status.error == WAITIO_ERR_PEER_FINALIZED);
    void *ret;
    pthread_join(th, &ret);
    CHECK((intptr_t)ret == 0);
    teardown();
}

int main(void)
{
    test_exchange();
    test_credit();
    test_held_then_crash();
    test_truncate();
    test_peer_crash();
    test_connect_reset();
    test_idle_close();
    test_adopt_while_idle_closing();
    test_idle_close_crossing();
    test_connect_back();
    test_wrong_key();
    test_finalize();
    return check_report("engine_loopback");
}
