/*
 * shm_ring.c — the shm transport's data path: POSIX shared-memory segments, each holding two
 * lock-free single-producer/single-consumer byte rings (one per direction) between two
 * processes on the same host, the sleep/doorbell handshake that lets a reader block instead of
 * spinning, and the removal of segments left behind by killed processes.
 *
 * The rings carry the same frame stream a socket would (stream.c parses it with the same code), so
 * everything above the byte stream — sequence numbers, credit, rendezvous, idle close — is
 * unchanged. A segment's name exists only between its creation and the peer's attach (both
 * sides unlink it then), so a killed process leaves nothing behind unless it dies inside that
 * window; wio_shm_sweep_stale removes such leftovers of dead processes at the next start.
 */
#define WIO_LOG_SUBSYS WIO_SUB_SHM /* this file logs as "shm" (WAITIO_LOG=shm=LEVEL) */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/membarrier.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "transport/shm_ring.h"
#include "core/common.h"
#include "core/auth.h"

#define SHM_MAGIC 0x3130484d534f4957ull /* "WIOSHM01" */
/* 2: records with control words; 3: light publishing, the short EAGER header's line layout;
 * 4: the reader zeroes the word of every record it releases. The record alignment is part of
 * it: builds that differ there refuse each other's segments. */
#define SHM_VERSION (4u | (WIO_SHM_REC_ALIGN << 8))
#define SHM_PREFIX "waitio-"
#define CACHE_LINE 64

/*
 * A ring is a sequence of records, each starting on a multiple of WIO_SHM_REC_ALIGN (a cache
 * line): an 8-byte control word, then `len` bytes of the connection's byte stream. The control
 * word is written last (the record is published by it) and names the record's position, so a
 * reader polls the very line that holds the frame header and a small payload: a small message
 * (the short EAGER header, 24 bytes, and up to 32 payload bytes) is one cache-line transfer,
 * where a separate head index costs a second, dependent one. A record never wraps: when one
 * does not fit before the end of the ring, a PAD record fills the rest of that lap.
 *
 * The word where the next record will start must read zero until that record is published.
 * The reader zeroes the word of every record (and PAD) as it releases it, so a word where an
 * older lap's record started is zero by the time the writer gets the space back; only where an
 * older lap's record had payload (a line inside a record longer than one) may stale bytes lie,
 * and the writer, which remembers which of its lines those are (tx_stale), zeroes that one word
 * before it publishes the record in front of it. It thus keeps one word free beyond its last
 * record. Until version 3 the writer zeroed the next word before every record: x86 makes stores
 * visible in order, so the publishing store waited until the writer owned the next record's
 * line — the one a spinning reader keeps taking back — one more line transfer on every
 * message's path (8-byte half round trip 0.39-0.40 -> 0.31-0.32 us when lines are slow to
 * move). Zeroing every line's word on the reader's side instead gains as much for small
 * messages but costs a store and a line upgrade per 64 bytes of every message (16 KiB half round
 * trip 0.54 -> 0.63 us); zeroing many words ahead on the writer's side delays the publishing
 * store the same way (4 KiB 0.30 -> 0.44 us). Both measured in alternating runs.
 *
 * Why not packed records (several small ones per line, as MPI's "fast boxes" do)? Built with
 * WIO_SHM_REC_ALIGN=8 and measured against this layout, alternating runs: packing gains 0-5% in
 * streaming 8-64 B messages (a reader that keeps up polls the line the writer fills next, so the
 * line moves per message anyway) and loses 15-30% of the 8 B ping-pong when lines are slow to
 * move (a record that straddles two lines costs a second transfer). Packing only during a burst
 * (the next record right after this one when no record came from the peer since our last; a
 * flag in the word told the reader) kept the ping-pong as it is but did not pay either: streaming
 * 64 B 0.96x, 128 B 0.97x of this layout (medians of paired rounds, 8 and 12 rounds).
 *
 * Positions only grow; the byte at position i lives at data[i & (size - 1)]. `tail` (the
 * reader's) has its own cache line so that the producer reads it only when it runs short of
 * space; the writer keeps its position to itself.
 */
#define REC_WORD 8u
#define REC_PAD 0xffffffffu /* len of a PAD record */
#define REC_ALIGN WIO_SHM_REC_ALIGN

/*
 * Sleeping without a fence on the data path. A reader that blocks announces it (reader_sleeping)
 * and looks at the ring once more; a writer publishes a record and then looks at the flag, and
 * rings the doorbell if it is set: a Dekker pair, which needs a full barrier on both sides — one
 * locked instruction per record on the writer's side, which also waits for the record's lines
 * (measured: 63% of a streaming sender's time in that exchange when cache lines are slow to
 * move). Instead, a process that registered for membarrier(2)'s global expedited barrier
 * publishes with plain stores and says so in the ring (light_writer); a reader of such a ring
 * puts the barrier into the writer's program when it goes to sleep, with one membarrier call
 * (0.4 us, only on the way to sleep). The same for space: the reader releases records with a
 * plain store (light_reader) and a writer waiting for space calls membarrier. Without
 * membarrier, both sides use the exchange as before.
 */
typedef struct ring_ctl {
    _Alignas(CACHE_LINE) _Atomic uint64_t tail;  /* written by the consumer: start of its record */
    _Alignas(CACHE_LINE) _Atomic uint32_t reader_sleeping;
    _Atomic uint32_t writer_waiting;
    _Atomic uint32_t light_writer; /* the writer publishes without a barrier (set before it writes) */
    _Atomic uint32_t light_reader; /* the reader releases space without a barrier */
} ring_ctl;

typedef struct seg_hdr {
    uint64_t magic;
    uint32_t version;
    uint32_t ring_size;
    _Alignas(CACHE_LINE) ring_ctl ring[2];
} seg_hdr;

#define DATA_OFFSET ((sizeof(seg_hdr) + 4095) & ~(size_t)4095)

struct wio_shm_seg {
    seg_hdr *hdr;
    size_t map_len;
    size_t size, mask;
    int tx, rx;                 /* ring indices: creator writes 0, reads 1 */
    uint8_t *tx_data, *rx_data;
    uint64_t tx_pos;            /* where our next record goes */
    uint64_t tx_tail_seen;      /* the consumer's tail when we last looked: saves a cache miss */
    uint64_t rx_pos;            /* the record being read */
    size_t rx_len, rx_off;      /* its length (0: not seen yet) and the bytes consumed of it */
    char name[WIO_SHM_NAME_MAX];
    int named;
    int light;                  /* this process publishes and releases without barriers */
    /* bit i: the word of line i of our ring may hold stale bytes (the last record written over
     * it had that line inside, not at its start); clear: it reads zero once released */
    uint64_t tx_stale[];
};

static size_t seg_struct_size(size_t ring_size)
{
    return sizeof(wio_shm_seg) + (ring_size / WIO_SHM_REC_ALIGN + 63) / 64 * sizeof(uint64_t);
}

/* 1 when this process is registered for MEMBARRIER_CMD_GLOBAL_EXPEDITED (and may thus publish
 * without barriers), -1 when it cannot be, 0 not yet tried; light_pid: the process that tried
 * (a forked child does not inherit the registration, which belongs to the address space). */
static _Atomic int light_state;
static _Atomic pid_t light_pid;

static int light_register(void)
{
    int st = atomic_load(&light_state);
    if (st != 0 && atomic_load(&light_pid) == getpid())
        return st > 0;
    atomic_store(&light_pid, getpid());
    long cmds = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    int ok = cmds >= 0 && (cmds & MEMBARRIER_CMD_GLOBAL_EXPEDITED) &&
             (cmds & MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) &&
             syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) == 0;
    atomic_store(&light_state, ok ? 1 : -1);
    return ok;
}

/* Our ends of the segment's rings: light when this process may publish without barriers. */
static void seg_announce_light(wio_shm_seg *s, int fenced)
{
    s->light = !fenced && light_register();
    atomic_store(&s->hdr->ring[s->tx].light_writer, (uint32_t)s->light);
    atomic_store(&s->hdr->ring[s->rx].light_reader, (uint32_t)s->light);
}

static void seg_init_view(wio_shm_seg *s, int creator)
{
    uint8_t *base = (uint8_t *)s->hdr;
    s->mask = s->size - 1;
    s->tx = creator ? 0 : 1;
    s->rx = creator ? 1 : 0;
    s->tx_data = base + DATA_OFFSET + (size_t)s->tx * s->size;
    s->rx_data = base + DATA_OFFSET + (size_t)s->rx * s->size;
}

/* Maps with the page tables filled in: otherwise the first laps through the rings take a page
 * fault every 4 KiB on both sides, inside the timed path (measured: 477 minor faults per process
 * during 40000 8-byte round trips; none with MAP_POPULATE). */
static void *map_segment(int fd, size_t len)
{
    int flags = MAP_SHARED;
#ifdef MAP_POPULATE
    flags |= MAP_POPULATE;
#endif
    return mmap(NULL, len, PROT_READ | PROT_WRITE, flags, fd, 0);
}

int wio_shm_create(size_t ring_size, int fenced, wio_shm_seg **out, char name[WIO_SHM_NAME_MAX])
{
    if (ring_size < WIO_SHM_RING_MIN || ring_size > WIO_SHM_RING_MAX || (ring_size & (ring_size - 1)))
        return wio_fail(WAITIO_ERR_ARG, "shared-memory ring size %zu is not a power of two in "
                        "[%u, %u]", ring_size, WIO_SHM_RING_MIN, WIO_SHM_RING_MAX);
    static unsigned counter;
    uint32_t rnd = 0;
    if (wio_random_bytes((uint8_t *)&rnd, sizeof rnd) != 0)
        return WAITIO_ERR_SYS;
    char nm[WIO_SHM_NAME_MAX], stem[40];
    wio_shm_name_stem(stem, sizeof stem);
    snprintf(nm, sizeof nm, "%s%u-%08x", stem, counter++, (unsigned)rnd);
    int fd = shm_open(nm, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return wio_fail(WAITIO_ERR_SYS, "shm_open(%s): %s", nm, strerror(errno));
    size_t len = DATA_OFFSET + 2 * ring_size;
    /* The pages are allocated now: a sparse segment on a full /dev/shm would kill us with
     * SIGBUS at the first write instead of failing here, where the connection can stay on the
     * socket. */
    int e = ftruncate(fd, (off_t)len) == 0 ? posix_fallocate(fd, 0, (off_t)len) : errno;
    void *base = e ? MAP_FAILED : map_segment(fd, len);
    if (!e && base == MAP_FAILED)
        e = errno;
    close(fd);
    wio_shm_seg *s = base == MAP_FAILED ? NULL : calloc(1, seg_struct_size(ring_size));
    if (!s) {
        if (base != MAP_FAILED)
            munmap(base, len);
        shm_unlink(nm);
        return wio_fail(WAITIO_ERR_SYS, "cannot allocate a %zu-byte shared-memory segment in "
                        "/dev/shm: %s", len, strerror(base == MAP_FAILED ? e : ENOMEM));
    }
    s->hdr = base;
    s->map_len = len;
    s->size = ring_size;
    /* ftruncate zero-fills: indices and flags start at 0 */
    s->hdr->version = SHM_VERSION;
    s->hdr->ring_size = (uint32_t)ring_size;
    atomic_thread_fence(memory_order_release);
    s->hdr->magic = SHM_MAGIC;
    snprintf(s->name, sizeof s->name, "%s", nm);
    s->named = 1;
    seg_init_view(s, 1);
    seg_announce_light(s, fenced);
    memcpy(name, nm, sizeof nm);
    *out = s;
    return 0;
}

/* Only names this code creates are opened: a peer cannot point us at another object. */
static int valid_name(const char *name)
{
    size_t n = strnlen(name, WIO_SHM_NAME_MAX);
    if (n == WIO_SHM_NAME_MAX || n <= sizeof SHM_PREFIX || strncmp(name, "/" SHM_PREFIX, sizeof SHM_PREFIX) != 0)
        return 0;
    for (size_t i = 1; i < n; i++)
        if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'z') || name[i] == '-'))
            return 0;
    return 1;
}

int wio_shm_attach(const char *name, size_t ring_size, int fenced, wio_shm_seg **out)
{
    if (!valid_name(name))
        return wio_fail(WAITIO_ERR_PROTO, "invalid shared-memory segment name from the peer");
    if (ring_size < WIO_SHM_RING_MIN || ring_size > WIO_SHM_RING_MAX || (ring_size & (ring_size - 1)))
        return wio_fail(WAITIO_ERR_PROTO, "invalid shared-memory ring size %zu from the peer", ring_size);
    int fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
    if (fd < 0)
        return wio_fail(WAITIO_ERR_SYS, "shm_open(%s): %s", name, strerror(errno));
    shm_unlink(name); /* mapped by both from here on; nothing to clean up if either dies */
    size_t len = DATA_OFFSET + 2 * ring_size;
    struct stat st;
    if (fstat(fd, &st) != 0 || (size_t)st.st_size != len) {
        close(fd);
        return wio_fail(WAITIO_ERR_PROTO, "shared-memory segment %s has the wrong size", name);
    }
    void *base = map_segment(fd, len);
    int e = errno;
    close(fd);
    if (base == MAP_FAILED)
        return wio_fail(WAITIO_ERR_SYS, "mmap of %s: %s", name, strerror(e));
    seg_hdr *h = base;
    atomic_thread_fence(memory_order_acquire);
    if (h->magic != SHM_MAGIC || h->version != SHM_VERSION || h->ring_size != ring_size) {
        munmap(base, len);
        return wio_fail(WAITIO_ERR_PROTO, "shared-memory segment %s is not a WaitIO segment", name);
    }
    wio_shm_seg *s = calloc(1, seg_struct_size(ring_size));
    if (!s) {
        munmap(base, len);
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory attaching shared-memory segment %s", name);
    }
    s->hdr = h;
    s->map_len = len;
    s->size = ring_size;
    snprintf(s->name, sizeof s->name, "%s", name);
    seg_init_view(s, 0);
    seg_announce_light(s, fenced);
    *out = s;
    return 0;
}

void wio_shm_unlink(wio_shm_seg *s)
{
    if (s && s->named) {
        shm_unlink(s->name);
        s->named = 0;
    }
}

void wio_shm_destroy(wio_shm_seg *s)
{
    if (!s)
        return;
    wio_shm_unlink(s);
    munmap(s->hdr, s->map_len);
    free(s);
}

/* ------------------------------------------------------------------------------------ */
/* rings                                                                                */

static uint64_t rec_space(size_t n) { return (REC_WORD + n + REC_ALIGN - 1) & ~(uint64_t)(REC_ALIGN - 1); }

/* The control word of a record at position pos holding len bytes: a tag from the position (so
 * that a stale or misplaced word is told from a published one) and the length. Never zero. */
static uint64_t rec_word(uint64_t pos, uint32_t len)
{
    return ((uint64_t)(((uint32_t)(pos / REC_ALIGN) & 0x7fffffffu) | 0x80000000u) << 32) | len;
}

static _Atomic uint64_t *rec_ctl(uint8_t *data, size_t mask, uint64_t pos)
{
    return (_Atomic uint64_t *)(void *)(data + (pos & mask));
}

/* Publishes a record: its control word at pos, then a look at the reader's sleeping flag. Dekker
 * with wio_shm_announce_sleep + wio_shm_sleep_check: either the reader sees the record, or we see
 * that it sleeps and ring its doorbell. Light: a plain store, the barrier comes from the reader's membarrier (ring_ctl);
 * else an exchange, the cheapest full barrier on x86. */
static inline void rec_publish(wio_shm_seg *s, uint64_t pos, uint64_t word, int *wake)
{
    _Atomic uint64_t *w = rec_ctl(s->tx_data, s->mask, pos);
    if (s->light) {
        atomic_store_explicit(w, word, memory_order_release);
        atomic_signal_fence(memory_order_seq_cst); /* the compiler keeps the load after the store */
    } else {
        (void)atomic_exchange_explicit(w, word, memory_order_seq_cst);
    }
    *wake |= atomic_load_explicit(&s->hdr->ring[s->tx].reader_sleeping, memory_order_seq_cst) != 0;
}

static size_t rec_line(const wio_shm_seg *s, uint64_t pos) { return (size_t)((pos & s->mask) / REC_ALIGN); }

/* The next record will start at `next`: its word is zeroed if an older lap left payload there
 * (a relaxed store: the publishing store releases it). */
static inline void clear_next_word(wio_shm_seg *s, uint64_t next)
{
    size_t line = rec_line(s, next);
    uint64_t bit = 1ull << (line % 64);
    if (!(s->tx_stale[line / 64] & bit))
        return;
    atomic_store_explicit(rec_ctl(s->tx_data, s->mask, next), 0, memory_order_relaxed);
    s->tx_stale[line / 64] &= ~bit;
}

/* A record of `space` bytes is written at pos: its first line's word will be zeroed by the
 * reader, the words of its other lines are payload. */
static void mark_record_lines(wio_shm_seg *s, uint64_t pos, uint64_t space)
{
    size_t first = rec_line(s, pos), end = first + (size_t)(space / REC_ALIGN); /* never wraps */
    s->tx_stale[first / 64] &= ~(1ull << (first % 64));
    size_t inner = first + 1;
    if (inner < end && inner / 64 == (end - 1) / 64) { /* the usual case: one word of the map */
        size_t n = end - inner;
        s->tx_stale[inner / 64] |= (n == 64 ? ~0ull : (1ull << n) - 1) << (inner % 64);
        return;
    }
    for (size_t i = inner; i < end;) {
        size_t w = i / 64, lo = i % 64, hi = end - w * 64 < 64 ? end - w * 64 : 64;
        s->tx_stale[w] |= (hi == 64 ? ~0ull : (1ull << hi) - 1) & ~((1ull << lo) - 1);
        i = w * 64 + hi;
    }
}

/* Publishes the PAD record at pos that ends at `next` (the lap's end). The lines it covers keep
 * what they held; only its own word is new. */
static void rec_publish_pad(wio_shm_seg *s, uint64_t pos, uint64_t next, int *wake)
{
    clear_next_word(s, next);
    size_t line = rec_line(s, pos);
    s->tx_stale[line / 64] &= ~(1ull << (line % 64));
    rec_publish(s, pos, rec_word(pos, REC_PAD), wake);
}

/* Copies bytes [from, to) of the concatenation of iov to dst + from. */
static void iov_copy(uint8_t *dst, const struct iovec *iov, int iovcnt, size_t from, size_t to)
{
    size_t base = 0;
    for (int i = 0; i < iovcnt && base < to; i++) {
        size_t lo = from > base ? from - base : 0, hi = to - base < iov[i].iov_len ? to - base : iov[i].iov_len;
        if (lo < hi)
            memcpy(dst + base + lo, (const uint8_t *)iov[i].iov_base + lo, hi - lo);
        base += iov[i].iov_len;
    }
}

/* The record at pos will hold n bytes: the writer moves past it, clears the word where the next
 * one starts if an older lap left payload there, and notes which of its lines are payload. */
static inline void rec_claim(wio_shm_seg *s, uint64_t pos, size_t n)
{
    s->tx_pos = pos + rec_space(n);
    clear_next_word(s, s->tx_pos);
    mark_record_lines(s, pos, rec_space(n));
}

/* Copies bytes [from, to) of a frame in two pieces (p0 of a bytes, then p1) to dst + from: the
 * stream layer's header and payload, without iov_copy's loop. */
static void copy_two(uint8_t *dst, const uint8_t *p0, size_t a, const uint8_t *p1, size_t from, size_t to)
{
    if (from < a && from < to) {
        size_t end = to < a ? to : a;
        memcpy(dst + from, p0 + from, end - from);
        from = end;
    }
    if (from < to)
        memcpy(dst + from, p1 + (from - a), to - from);
}

/* Writes n bytes of iov as the record at pos and publishes it. The bytes in the line the reader
 * polls (the word's line) are written last, right before the word: the reader keeps taking that
 * line back while it spins, and a line written early would be taken from us again before the
 * word goes in (measured: 8 B half round trip 0.15 -> 0.12 us). */
static void rec_write(wio_shm_seg *s, uint64_t pos, const struct iovec *iov, int iovcnt, size_t n, int *wake)
{
    uint8_t *dst = s->tx_data + (pos & s->mask) + REC_WORD;
    size_t line_left = CACHE_LINE - REC_WORD - (size_t)(pos & (CACHE_LINE - 1));
    size_t head = n < line_left ? n : line_left;
    rec_claim(s, pos, n);
    if (n == head && iovcnt <= 2 && n == iov[0].iov_len + (iovcnt > 1 ? iov[1].iov_len : 0)) {
        /* a small frame and its payload: the whole record is in the polled line */
        memcpy(dst, iov[0].iov_base, iov[0].iov_len);
        if (iovcnt > 1)
            memcpy(dst + iov[0].iov_len, iov[1].iov_base, iov[1].iov_len);
    } else if (iovcnt <= 2) {
        const uint8_t *p0 = iov[0].iov_base, *p1 = iovcnt > 1 ? iov[1].iov_base : NULL;
        copy_two(dst, p0, iov[0].iov_len, p1, head, n);
        copy_two(dst, p0, iov[0].iov_len, p1, 0, head);
    } else {
        iov_copy(dst, iov, iovcnt, head, n);
        iov_copy(dst, iov, iovcnt, 0, head);
    }
    rec_publish(s, pos, rec_word(pos, (uint32_t)n), wake);
}

/* A ring holding `used` bytes of records has room for another record of at least one byte and
 * the word kept clear after it. */
static int ring_has_room(const wio_shm_seg *s, uint64_t used)
{
    return used <= s->size - rec_space(1) - REC_ALIGN;
}

/* Short of space for a record in one piece: the tail looked at again, a PAD when more fits after
 * the end of the lap, else as much as fits here. */
static size_t writev_short(wio_shm_seg *s, const struct iovec *iov, int iovcnt, size_t want, int *wake)
{
    uint64_t pos = s->tx_pos;
    size_t cont = s->size - (size_t)(pos & s->mask);
    uint64_t need = rec_space(want);
    s->tx_tail_seen = atomic_load_explicit(&s->hdr->ring[s->tx].tail, memory_order_acquire);
    uint64_t used = pos - s->tx_tail_seen;
    if (!ring_has_room(s, used)) /* full (or a corrupt tail: then we never write) */
        return 0;
    /* free bytes, a multiple of REC_ALIGN, less the word kept clear after the last record */
    size_t room = s->size - (size_t)used - REC_ALIGN;
    size_t avail = room < cont ? room : cont;
    if (need > avail && room > cont && room - cont > avail) {
        /* more fits after the end of this lap: pad the lap's rest */
        rec_publish_pad(s, pos, pos + cont, wake);
        pos += cont;
        room -= cont;
        avail = room;
    }
    if (avail < rec_space(1)) /* not even one byte fits before the end of the lap */
        return 0;
    if (need > avail)
        need = avail;
    size_t n = (size_t)need - REC_WORD < want ? (size_t)need - REC_WORD : want;
    rec_write(s, pos, iov, iovcnt, n, wake);
    return n;
}

/* The common case: a record of `need` bytes at the writer's position fits before the end of the
 * lap, in space known to be free (the tail as last seen; it is read again only when short,
 * saving a cache miss). */
static int fits_as_seen(const wio_shm_seg *s, uint64_t need)
{
    uint64_t pos = s->tx_pos;
    return need <= s->size - (size_t)(pos & s->mask) && pos + need + REC_ALIGN - s->tx_tail_seen <= s->size;
}

size_t wio_shm_writev(wio_shm_seg *s, const struct iovec *iov, int iovcnt, int *wake)
{
    size_t want = 0;
    for (int i = 0; i < iovcnt; i++)
        want += iov[i].iov_len;
    WIO_ASSERT(want > 0);
    *wake = 0;
    if (!fits_as_seen(s, rec_space(want)))
        return writev_short(s, iov, iovcnt, want, wake);
    rec_write(s, s->tx_pos, iov, iovcnt, want, wake);
    return want;
}

uint8_t *wio_shm_reserve_line(wio_shm_seg *s, size_t *room)
{
    uint64_t pos = s->tx_pos;
    size_t left = CACHE_LINE - REC_WORD - (size_t)(pos & (CACHE_LINE - 1));
    if (left == 0 || !fits_as_seen(s, rec_space(left))) /* anything else goes through writev */
        return NULL;
    *room = left;
    return s->tx_data + (pos & s->mask) + REC_WORD;
}

void wio_shm_commit_line(wio_shm_seg *s, size_t n, int *wake)
{
    WIO_ASSERT(n > 0 && n <= CACHE_LINE - REC_WORD - (size_t)(s->tx_pos & (CACHE_LINE - 1)));
    uint64_t pos = s->tx_pos;
    *wake = 0;
    rec_claim(s, pos, n);
    rec_publish(s, pos, rec_word(pos, (uint32_t)n), wake);
}

/* The control word at the reader's position: 1 and *len for a data record, 2 for a PAD, 0 for
 * nothing published, -1 for a word that cannot be there (a corrupt ring). */
static int rec_examine(const wio_shm_seg *s, uint64_t pos, uint32_t *len)
{
    uint64_t w = atomic_load_explicit(rec_ctl(s->rx_data, s->mask, pos), memory_order_acquire);
    if (w == 0)
        return 0;
    uint32_t l = (uint32_t)w;
    if (w != rec_word(pos, l))
        return -1;
    if (l == REC_PAD)
        return 2;
    if (l == 0 || (pos & s->mask) + rec_space(l) > s->size)
        return -1;
    *len = l;
    return 1;
}

/* The record (or PAD) is read: its word zeroed (the writer counts on it: see the ring's layout
 * above), move on and let the writer have the space (Dekker with the want_space of
 * wio_shm_announce_sleep + wio_shm_sleep_check; light as in rec_publish). The tail's store
 * releases the zero: a writer that sees the space free sees it too. */
static void rec_release(wio_shm_seg *s, uint64_t next, int *wake)
{
    ring_ctl *r = &s->hdr->ring[s->rx];
    atomic_store_explicit(rec_ctl(s->rx_data, s->mask, s->rx_pos), 0, memory_order_relaxed);
    s->rx_pos = next;
    s->rx_len = s->rx_off = 0;
    if (s->light) {
        atomic_store_explicit(&r->tail, next, memory_order_release);
        atomic_signal_fence(memory_order_seq_cst);
    } else {
        (void)atomic_exchange_explicit(&r->tail, next, memory_order_seq_cst);
    }
    *wake = atomic_load_explicit(&r->writer_waiting, memory_order_seq_cst) != 0;
}

const uint8_t *wio_shm_peek(wio_shm_seg *s, size_t *len, int *wake)
{
    *wake = 0;
    while (!s->rx_len) {
        uint32_t l = 0;
        int k = rec_examine(s, s->rx_pos, &l);
        if (k <= 0) {
            *len = k < 0 ? (size_t)-1 : 0;
            return NULL;
        }
        if (k == 1)
            s->rx_len = l;
        else /* PAD: the next lap */
            rec_release(s, s->rx_pos + (s->size - (s->rx_pos & s->mask)), wake);
    }
    *len = s->rx_len - s->rx_off;
    return s->rx_data + (s->rx_pos & s->mask) + REC_WORD + s->rx_off;
}

void wio_shm_consume(wio_shm_seg *s, size_t n, int *wake)
{
    *wake = 0;
    s->rx_off += n;
    if (s->rx_off >= s->rx_len)
        rec_release(s, s->rx_pos + rec_space(s->rx_len), wake);
}

int wio_shm_readable(const wio_shm_seg *s)
{
    return s->rx_len || atomic_load_explicit(rec_ctl(s->rx_data, s->mask, s->rx_pos), memory_order_acquire) != 0;
}

int wio_shm_announce_sleep(wio_shm_seg *s, int want_space)
{
    atomic_store_explicit(&s->hdr->ring[s->rx].reader_sleeping, 1, memory_order_seq_cst);
    int fence = atomic_load_explicit(&s->hdr->ring[s->rx].light_writer, memory_order_relaxed) != 0;
    if (want_space) {
        atomic_store_explicit(&s->hdr->ring[s->tx].writer_waiting, 1, memory_order_seq_cst);
        fence |= atomic_load_explicit(&s->hdr->ring[s->tx].light_reader, memory_order_relaxed) != 0;
    }
    return fence;
}

int wio_shm_fence_peers(void)
{
    /* a full barrier in every running thread of every registered process: a light peer's
     * store before it is seen by our looks below, or its look after it sees our flag */
    return syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0) == 0 ? 0 : -1;
}

int wio_shm_sleep_check(wio_shm_seg *s, int want_space)
{
    if (s->rx_len || atomic_load_explicit(rec_ctl(s->rx_data, s->mask, s->rx_pos), memory_order_seq_cst) != 0)
        return 1;
    return want_space && ring_has_room(s, s->tx_pos - atomic_load_explicit(&s->hdr->ring[s->tx].tail,
                                                                            memory_order_seq_cst));
}

void wio_shm_end_sleep(wio_shm_seg *s)
{
    atomic_store_explicit(&s->hdr->ring[s->rx].reader_sleeping, 0, memory_order_relaxed);
    atomic_store_explicit(&s->hdr->ring[s->tx].writer_waiting, 0, memory_order_relaxed);
}

/* ------------------------------------------------------------------------------------ */
/* leftovers                                                                            */

static unsigned long pid_namespace_id(void)
{
    struct stat st;
    return stat("/proc/self/ns/pid", &st) == 0 ? (unsigned long)st.st_ino : 0;
}

void wio_shm_name_stem(char *buf, size_t cap)
{
    snprintf(buf, cap, "/" SHM_PREFIX "%u-%ld-n%lx-", (unsigned)getuid(), (long)getpid(),
             pid_namespace_id());
}

void wio_shm_sweep_stale(void)
{
    DIR *d = opendir("/dev/shm");
    if (!d)
        return;
    struct dirent *de;
    unsigned me = (unsigned)getuid();
    unsigned long my_ns = pid_namespace_id();
    while ((de = readdir(d))) {
        unsigned uid;
        long pid;
        unsigned long ns;
        if (strncmp(de->d_name, SHM_PREFIX, sizeof SHM_PREFIX - 1) != 0 ||
            sscanf(de->d_name + sizeof SHM_PREFIX - 1, "%u-%ld-n%lx-", &uid, &pid, &ns) != 3 ||
            uid != me || ns != my_ns || pid <= 0 || pid == (long)getpid())
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        char nm[300];
        snprintf(nm, sizeof nm, "/%s", de->d_name);
        if (shm_unlink(nm) == 0)
            wio_debug("removed shared-memory segment %s left by dead process %ld", nm, pid);
    }
    closedir(d);
}
