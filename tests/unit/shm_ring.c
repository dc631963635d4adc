/*
 * shm_ring.c — unit test of the shared-memory ring (src/transport/shm_ring.c): one process maps
 * a segment twice (creator and attacher, as two processes would) and moves a random byte stream
 * through one direction — records of random sizes from 1 byte to more than the ring, so that
 * partial records, PAD records at the end of a lap and full rings all occur — while reading it
 * back in random pieces; every byte is checked, and a writer that finds the ring full must
 * find room once the reader has consumed everything — with the writer publishing with and without
 * barriers. The doorbell handshake must tell a writer to ring a sleeping reader and a reader to
 * ring a writer waiting for space. Then the reader must refuse control words
 * that no writer of ours writes (a corrupt or hostile segment). The words a reader polls must
 * read zero until published: a reader that does not zero the words it releases, or a writer
 * that leaves an older lap's payload where the next record starts, fails the reads here
 * (checked by taking out each of the two, and the writer's marking of a record's inner lines).
 * Half the small records are written in place (reserve, commit), some after a reservation that
 * was dropped with junk in it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "transport/shm_ring.h"

#define RING (64u << 10)

static uint32_t rng_state = 12345;
static uint32_t rnd(void)
{
    rng_state = rng_state * 1103515245u + 12345u;
    return rng_state >> 8;
}

static uint8_t stream_byte(uint64_t i) { return (uint8_t)(i * 2654435761u >> 13); }

/* Reads up to `budget` bytes in random pieces; returns the bytes read. */
static uint64_t drain(wio_shm_seg *r, uint64_t *rx, uint64_t budget)
{
    uint64_t got = 0;
    while (got < budget) {
        size_t n;
        int wake;
        const uint8_t *p = wio_shm_peek(r, &n, &wake);
        if (!p) {
            CHECK(n == 0);
            break;
        }
        size_t take = 1 + rnd() % n;
        int bad = 0;
        for (size_t i = 0; i < take; i++)
            bad |= p[i] != stream_byte(*rx + i);
        CHECK(!bad);
        *rx += take;
        got += take;
        wio_shm_consume(r, take, &wake);
    }
    return got;
}

/* A ring created by a writer and attached by a reader; 0 if either failed. */
/* A ring created by a writer and attached by a reader; 0 if either failed. `fenced_writer`: the
 * writer publishes with a barrier per record while the reader releases without (when this
 * kernel has membarrier): the mixed case of two processes configured differently. */
static int ring_pair(wio_shm_seg **w, wio_shm_seg **r, int fenced_writer)
{
    char name[WIO_SHM_NAME_MAX];
    CHECK(wio_shm_create(RING, fenced_writer, w, name) == 0);
    CHECK(*w && wio_shm_attach(name, RING, 0, r) == 0);
    return *w && *r;
}

/* A small record written in place (as the stream layer's send_in_place does), after a
 * reservation that was dropped with junk in it half the time: 1 if written. */
static int in_place(wio_shm_seg *w, const uint8_t *bytes, size_t want)
{
    size_t room;
    uint8_t *p = wio_shm_reserve_line(w, &room);
    if (!p)
        return 0;
    CHECK(room > 0 && room <= 56);
    if (rnd() % 2) {
        memset(p, 0xee, room); /* a reservation not committed: nothing of it may be read */
        p = wio_shm_reserve_line(w, &room);
        CHECK(p != NULL);
    }
    if (!p || want > room)
        return 0;
    memcpy(p, bytes, want);
    int wake;
    wio_shm_commit_line(w, want, &wake);
    return 1;
}

static void stream_test(int fenced_writer)
{
    wio_shm_seg *w = NULL, *r = NULL;
    if (!ring_pair(&w, &r, fenced_writer))
        return;
    static uint8_t buf[3 * RING];
    uint64_t tx = 0, rx = 0, total = 64u << 20;
    unsigned fulls = 0;
    while (tx < total) {
        size_t want = rnd() % 4 == 0 ? 1 + rnd() % (2 * RING) : 1 + rnd() % 300;
        for (size_t i = 0; i < want; i++)
            buf[i] = stream_byte(tx + i);
        /* header and payload as two pieces, as the stream layer writes them */
        size_t cut = want > 56 ? 56 : want;
        struct iovec iov[2] = {{buf, cut}, {buf + cut, want - cut}};
        int wake;
        if (rnd() % 2 && in_place(w, buf, want)) {
            tx += want;
            continue;
        }
        size_t n = wio_shm_writev(w, iov, want > cut ? 2 : 1, &wake);
        CHECK(n <= want);
        if (n == 0) {
            fulls++;
            uint64_t before = rx;
            drain(r, &rx, UINT64_MAX);
            CHECK(rx == tx);                 /* everything written was readable */
            CHECK(rx > before || tx == before);
            n = wio_shm_writev(w, iov, want > cut ? 2 : 1, &wake);
            CHECK(n > 0);                    /* an empty ring takes a record */
            if (n == 0)
                break;                       /* (a broken ring: stop instead of looping) */
        }
        tx += n;
        if (rnd() % 3 == 0)
            drain(r, &rx, rnd() % RING);
    }
    drain(r, &rx, UINT64_MAX);
    CHECK(rx == tx);
    CHECK(fulls > 0);
    wio_shm_destroy(r);
    wio_shm_destroy(w);
}

/* The doorbell handshake: a reader that announced its sleep is told to wait for nothing once a
 * record is there, and the writer of that record is told to ring; a writer that waits for space
 * is told to ring... by the reader that frees it. */
static void sleep_test(int fenced_writer)
{
    wio_shm_seg *w = NULL, *r = NULL;
    if (!ring_pair(&w, &r, fenced_writer))
        return;
    uint8_t msg[40];
    memset(msg, 3, sizeof msg);
    struct iovec iov = {msg, sizeof msg};
    int wake, fence = wio_shm_announce_sleep(r, 0);
    CHECK(!fence || wio_shm_fence_peers() == 0);
    CHECK(wio_shm_sleep_check(r, 0) == 0);    /* nothing there: may block */
    CHECK(wio_shm_writev(w, &iov, 1, &wake) == sizeof msg);
    CHECK(wake == 1);                          /* the reader sleeps: ring */
    CHECK(wio_shm_sleep_check(r, 0) == 1);
    wio_shm_end_sleep(r);
    CHECK(wio_shm_writev(w, &iov, 1, &wake) == sizeof msg);
    CHECK(wake == 0);                          /* awake: no doorbell */
    /* fill the ring, then wait for space */
    size_t n;
    while (wio_shm_writev(w, &iov, 1, &wake) == sizeof msg)
        ;
    fence = wio_shm_announce_sleep(w, 1);
    CHECK(!fence || wio_shm_fence_peers() == 0);
    CHECK(wio_shm_sleep_check(w, 1) == 0);
    const uint8_t *p = wio_shm_peek(r, &n, &wake);
    CHECK(p && n == sizeof msg && wake == 0);
    wio_shm_consume(r, n, &wake);
    CHECK(wake == 1);                          /* the writer waits for space: ring */
    CHECK(wio_shm_sleep_check(w, 1) == 1);
    wio_shm_end_sleep(w);
    wio_shm_destroy(r);
    wio_shm_destroy(w);
}

/* A control word must name its position and a length that fits before the end of the lap. */
static void hostile_test(void)
{
    wio_shm_seg *w = NULL, *r = NULL;
    if (!ring_pair(&w, &r, 0))
        return;
    uint8_t msg[100];
    memset(msg, 7, sizeof msg);
    struct iovec iov = {msg, sizeof msg};
    int wake;
    CHECK(wio_shm_writev(w, &iov, 1, &wake) == sizeof msg);
    size_t n;
    const uint8_t *p = wio_shm_peek(r, &n, &wake);
    CHECK(p && n == sizeof msg);
    /* the record's word is the 8 bytes before its data: forge a length past the end */
    uint64_t *word = (uint64_t *)(void *)(p - 8);
    uint64_t good = *word;
    wio_shm_consume(r, n, &wake);
    /* the next record position (records start on multiples of WIO_SHM_REC_ALIGN, the word's tag
     * is the position / WIO_SHM_REC_ALIGN): write a word with the wrong position tag */
    uint64_t at = (8 + sizeof msg + WIO_SHM_REC_ALIGN - 1) & ~(uint64_t)(WIO_SHM_REC_ALIGN - 1);
    uint64_t *next = (uint64_t *)(void *)(p - 8 + at);
    *next = good; /* the tag of position 0, not `at` */
    CHECK(wio_shm_peek(r, &n, &wake) == NULL && n == (size_t)-1);
    uint64_t tag_at = (good & 0xffffffff00000000ull) + ((at / WIO_SHM_REC_ALIGN) << 32);
    *next = tag_at + RING; /* right tag, too long */
    CHECK(wio_shm_peek(r, &n, &wake) == NULL && n == (size_t)-1);
    *next = tag_at; /* right tag, length 0 */
    CHECK(wio_shm_peek(r, &n, &wake) == NULL && n == (size_t)-1);
    *next = 0;
    CHECK(wio_shm_peek(r, &n, &wake) == NULL && n == 0);
    *next = tag_at + 5; /* right tag and length: a record */
    CHECK(wio_shm_peek(r, &n, &wake) != NULL && n == 5);
    wio_shm_destroy(r);
    wio_shm_destroy(w);
}

int main(void)
{
    stream_test(0);
    stream_test(1);
    sleep_test(0);
    sleep_test(1);
    hostile_test();
    return check_report("shm_ring");
}
