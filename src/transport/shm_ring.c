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
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "transport/shm_ring.h"
#include "core/common.h"
#include "core/auth.h"

#define SHM_MAGIC 0x3130484d534f4957ull /* "WIOSHM01" */
#define SHM_VERSION 1
#define SHM_PREFIX "waitio-"
#define CACHE_LINE 64

/* Indices only grow; the byte at position i lives at data[i & (size - 1)]. Each index has its
 * own cache line so that the producer and the consumer do not invalidate each other's. */
typedef struct ring_ctl {
    _Alignas(CACHE_LINE) _Atomic uint64_t head;  /* written by the producer */
    _Alignas(CACHE_LINE) _Atomic uint64_t tail;  /* written by the consumer */
    _Alignas(CACHE_LINE) _Atomic uint32_t reader_sleeping;
    _Atomic uint32_t writer_waiting;
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
    uint64_t tx_tail_seen;      /* the consumer's tail when we last looked: saves a cache miss */
    char name[WIO_SHM_NAME_MAX];
    int named;
};

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

int wio_shm_create(size_t ring_size, wio_shm_seg **out, char name[WIO_SHM_NAME_MAX])
{
    if (ring_size < WIO_SHM_RING_MIN || ring_size > WIO_SHM_RING_MAX || (ring_size & (ring_size - 1)))
        return wio_fail(WAITIO_ERR_ARG, "shared-memory ring size %zu is not a power of two in "
                        "[%u, %u]", ring_size, WIO_SHM_RING_MIN, WIO_SHM_RING_MAX);
    static unsigned counter;
    uint32_t rnd = 0;
    if (wio_random_bytes((uint8_t *)&rnd, sizeof rnd) != 0)
        return WAITIO_ERR_SYS;
    char nm[WIO_SHM_NAME_MAX];
    snprintf(nm, sizeof nm, "/" SHM_PREFIX "%u-%ld-%u-%08x", (unsigned)getuid(), (long)getpid(),
             counter++, (unsigned)rnd);
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
    wio_shm_seg *s = base == MAP_FAILED ? NULL : calloc(1, sizeof *s);
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

int wio_shm_attach(const char *name, size_t ring_size, wio_shm_seg **out)
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
    wio_shm_seg *s = calloc(1, sizeof *s);
    if (!s) {
        munmap(base, len);
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory attaching shared-memory segment %s", name);
    }
    s->hdr = h;
    s->map_len = len;
    s->size = ring_size;
    snprintf(s->name, sizeof s->name, "%s", name);
    seg_init_view(s, 0);
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

size_t wio_shm_writev(wio_shm_seg *s, const struct iovec *iov, int iovcnt, int *wake)
{
    ring_ctl *r = &s->hdr->ring[s->tx];
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    size_t want = 0;
    for (int i = 0; i < iovcnt; i++)
        want += iov[i].iov_len;
    uint64_t used = head - s->tx_tail_seen;
    if (used > s->size || s->size - used < want) { /* look at the real tail only when short */
        s->tx_tail_seen = atomic_load_explicit(&r->tail, memory_order_acquire);
        used = head - s->tx_tail_seen;
    }
    *wake = 0;
    if (used >= s->size) /* full (or a corrupt tail: then we never write) */
        return 0;
    size_t room = s->size - (size_t)used, done = 0;
    for (int i = 0; i < iovcnt && room > 0; i++) {
        const uint8_t *src = iov[i].iov_base;
        size_t n = iov[i].iov_len < room ? iov[i].iov_len : room;
        size_t at = (size_t)(head + done) & s->mask;
        size_t first = s->size - at < n ? s->size - at : n;
        memcpy(s->tx_data + at, src, first);
        if (n > first) /* wrapped (rare: skipping the empty call matters for small frames) */
            memcpy(s->tx_data, src + first, n - first);
        done += n;
        room -= n;
    }
    /* Dekker with wio_shm_prepare_sleep (all four accesses sequentially consistent): either the
     * reader sees our data, or we see that it sleeps and ring its doorbell. An exchange is the
     * cheapest full barrier on x86. */
    (void)atomic_exchange_explicit(&r->head, head + done, memory_order_seq_cst);
    *wake = atomic_load_explicit(&r->reader_sleeping, memory_order_seq_cst) != 0;
    return done;
}

ssize_t wio_shm_read(wio_shm_seg *s, void *buf, size_t n, int *wake)
{
    ring_ctl *r = &s->hdr->ring[s->rx];
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
    uint64_t avail = head - tail;
    *wake = 0;
    if (avail > s->size)
        return -1;
    size_t k = avail < n ? (size_t)avail : n;
    if (k == 0)
        return 0;
    size_t at = (size_t)tail & s->mask;
    size_t first = s->size - at < k ? s->size - at : k;
    memcpy(buf, s->rx_data + at, first);
    if (k > first)
        memcpy((uint8_t *)buf + first, s->rx_data, k - first);
    (void)atomic_exchange_explicit(&r->tail, tail + k, memory_order_seq_cst);
    *wake = atomic_load_explicit(&r->writer_waiting, memory_order_seq_cst) != 0;
    return (ssize_t)k;
}

int wio_shm_readable(const wio_shm_seg *s)
{
    const ring_ctl *r = &s->hdr->ring[s->rx];
    return atomic_load_explicit(&r->head, memory_order_acquire) !=
           atomic_load_explicit(&r->tail, memory_order_relaxed);
}

int wio_shm_prepare_sleep(wio_shm_seg *s, int want_space)
{
    atomic_store_explicit(&s->hdr->ring[s->rx].reader_sleeping, 1, memory_order_seq_cst);
    if (want_space)
        atomic_store_explicit(&s->hdr->ring[s->tx].writer_waiting, 1, memory_order_seq_cst);
    const ring_ctl *rx = &s->hdr->ring[s->rx], *tx = &s->hdr->ring[s->tx];
    if (atomic_load_explicit(&rx->head, memory_order_seq_cst) != atomic_load_explicit(&rx->tail, memory_order_relaxed))
        return 1;
    return want_space && atomic_load_explicit(&tx->head, memory_order_relaxed) -
                             atomic_load_explicit(&tx->tail, memory_order_seq_cst) < s->size;
}

void wio_shm_end_sleep(wio_shm_seg *s)
{
    atomic_store_explicit(&s->hdr->ring[s->rx].reader_sleeping, 0, memory_order_relaxed);
    atomic_store_explicit(&s->hdr->ring[s->tx].writer_waiting, 0, memory_order_relaxed);
}

/* ------------------------------------------------------------------------------------ */
/* leftovers                                                                            */

void wio_shm_sweep_stale(void)
{
    DIR *d = opendir("/dev/shm");
    if (!d)
        return;
    struct dirent *de;
    unsigned me = (unsigned)getuid();
    while ((de = readdir(d))) {
        unsigned uid;
        long pid;
        if (strncmp(de->d_name, SHM_PREFIX, sizeof SHM_PREFIX - 1) != 0 ||
            sscanf(de->d_name + sizeof SHM_PREFIX - 1, "%u-%ld-", &uid, &pid) != 2 || uid != me ||
            pid <= 0 || pid == (long)getpid())
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
