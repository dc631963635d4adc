/*
 * shm.c — the shm transport: processes of one host (same boot id, same /dev/shm) connect over
 * a local (AF_UNIX) socket in a private directory of /dev/shm, run the same authenticated
 * handshake as tcp, and then move their frame stream into a pair of shared-memory rings
 * (shm_ring.c). The socket stays for liveness (EOF when the peer dies) and for doorbells that
 * wake a peer blocked in epoll_wait. Large messages between such processes may be read in place
 * by the receiver (single copy, cma.c) through this transport's rdv_pack / rdv_get: only from
 * the process the kernel reports at the other end of the socket (SO_PEERCRED), only when it
 * runs as our effective uid.
 *
 * If no segment can be made (a full /dev/shm), the connection stays on the local socket, which
 * carries the frames instead.
 */
#define WIO_LOG_SUBSYS WIO_SUB_SHM /* this file logs as "shm" (WAITIO_LOG=shm=LEVEL) */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "transport/cma.h"
#include "transport/shm.h"
#include "transport/shm_ring.h"
#include "transport/stream.h"
#include "core/common.h"

#define SHM_DIR_ROOT "/dev/shm"
#define RDV_DESC_LEN 16 /* le64 address, le64 length */

enum { CMA_UNKNOWN = 0, CMA_OK = 1, CMA_OFF = -1 };

typedef struct shm_tp shm_tp;

typedef struct shm_conn {
    shm_tp *tp;
    wio_stream *s;
    wio_shm_seg *seg;
    wio_list ring_link;      /* tp->rings while the rings carry the stream */
    int32_t peer_pid;        /* from SO_PEERCRED, in our pid namespace (0: not visible) */
    uint32_t peer_uid;
    int cma;                 /* CMA_*: may we read the peer's memory */
    int rma_cma;             /* CMA_*: one-sided single copy with the peer (rma_copy) */
} shm_conn;

struct shm_tp {
    wio_stream_ctx *ctx;
    wio_listener *listener;
    wio_poller *poller;
    const wio_tp_handler *handler;
    void *hctx;
    const wio_config *cfg;
    const wio_proc *table;
    uint32_t nprocs, self_id;
    uint64_t host_id;
    char dir[64];
    char path[108];          /* our socket */
    char lock_path[108];     /* our liveness lock, held for the process's life */
    int lock_fd;
    size_t ring_size;
    int single_copy;         /* offer and accept single-copy rendezvous */
    int rma_copy;            /* one-sided single copy (rma_copy) allowed */
    wio_list rings;
    wio_stream **snap;       /* iterated copy of rings (callbacks may close some) */
    size_t snap_len, snap_cap;
    int snap_valid;
    wio_poll_source src;
};

static const wio_stream_kind shm_sock_kind;
static const wio_stream_kind shm_ring_kind;

/* ------------------------------------------------------------------------------------ */
/* the private directory and socket names                                               */

static void socket_path(const shm_tp *t, uint64_t token, char *buf, size_t cap)
{
    snprintf(buf, cap, "%.63s/%016" PRIx64 ".sock", t->dir, token);
}

/* /dev/shm/waitio-<euid>: ours, a directory, and nobody else may write into it. */
static int private_dir(shm_tp *t)
{
    snprintf(t->dir, sizeof t->dir, "%s/waitio-%u", SHM_DIR_ROOT, (unsigned)geteuid());
    if (mkdir(t->dir, 0700) != 0 && errno != EEXIST)
        return wio_fail(WAITIO_ERR_SYS, "cannot create %s: %s", t->dir, strerror(errno));
    struct stat st;
    if (lstat(t->dir, &st) != 0)
        return wio_fail(WAITIO_ERR_SYS, "cannot inspect %s: %s", t->dir, strerror(errno));
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 0077))
        return wio_fail(WAITIO_ERR_SYS, "%s is not a private directory of this user (mode %03o, "
                        "owner %u): shared memory not used", t->dir, (unsigned)(st.st_mode & 0777),
                        (unsigned)st.st_uid);
    return 0;
}

/* Every process holds an exclusive flock on <token>.lock beside its <token>.sock for as long as
 * it lives (the kernel drops it when the process dies, in any pid or network namespace). The lock
 * is taken before the socket exists and the socket removed before the lock, so a .lock nobody
 * holds marks a process that died without cleaning up. Probing liveness by connecting to every
 * socket instead would cost each live process an accept per starting process, O(n^2) at start. */
static void lock_path_of(const shm_tp *t, const char *token_hex, char *buf, size_t cap)
{
    snprintf(buf, cap, "%.63s/%.16s.lock", t->dir, token_hex);
}

static int hold_liveness_lock(shm_tp *t, uint64_t token)
{
    char hex[17];
    snprintf(hex, sizeof hex, "%016" PRIx64, token);
    lock_path_of(t, hex, t->lock_path, sizeof t->lock_path);
    int fd = open(t->lock_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        int e = errno;
        t->lock_path[0] = 0; /* not ours: never remove it */
        return wio_fail(WAITIO_ERR_SYS, "cannot create a lock file in %s: %s", t->dir, strerror(e));
    }
    t->lock_fd = fd;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0)
        return wio_fail(WAITIO_ERR_SYS, "cannot lock %s: %s", t->lock_path, strerror(errno));
    return 0;
}

/* Removes the socket and lock of every process that died without removing them. */
static void sweep_dead_sockets(const shm_tp *t)
{
    DIR *d = opendir(t->dir);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t n = strlen(de->d_name);
        if (n != 16 + 5 || strcmp(de->d_name + 16, ".lock") != 0)
            continue;
        char lock[108], sock[108];
        lock_path_of(t, de->d_name, lock, sizeof lock);
        int fd = open(lock, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
            continue;
        if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
            snprintf(sock, sizeof sock, "%.63s/%.16s.sock", t->dir, de->d_name);
            if ((unlink(sock) == 0 || errno == ENOENT) && unlink(lock) == 0)
                wio_debug("removed the socket %s of a process that is gone", sock);
        }
        close(fd);
    }
    closedir(d);
}

/* ------------------------------------------------------------------------------------ */
/* the ring pipe                                                                        */

/* Wakes a peer that sleeps in epoll_wait on its end of the socket. A full socket buffer means
 * doorbells are already pending; a dead peer is noticed by reading. */
static void doorbell(wio_stream *s)
{
    static const char bell = 'D';
    (void)send(s->fd, &bell, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
}

static ssize_t ring_sendv(wio_stream *s, struct iovec *iov, int iovcnt)
{
    shm_conn *c = s->pipe_state;
    int wake;
    size_t n = wio_shm_writev(c->seg, iov, iovcnt, &wake);
    if (wake)
        doorbell(s);
    if (n == 0) {
        errno = EAGAIN;
        return -1;
    }
    return (ssize_t)n;
}

static uint8_t *ring_reserve(wio_stream *s, size_t *room)
{
    shm_conn *c = s->pipe_state;
    return wio_shm_reserve_line(c->seg, room);
}

static void ring_commit(wio_stream *s, size_t n)
{
    shm_conn *c = s->pipe_state;
    int wake;
    wio_shm_commit_line(c->seg, n, &wake);
    if (wake)
        doorbell(s);
}

/* The ring's bytes are parsed in place; a ring never reports its end (the socket does). */
static const uint8_t *ring_peek(wio_stream *s, size_t *len)
{
    shm_conn *c = s->pipe_state;
    int wake;
    const uint8_t *p = wio_shm_peek(c->seg, len, &wake);
    if (wake)
        doorbell(s);
    return p;
}

static void ring_consume(wio_stream *s, size_t n)
{
    shm_conn *c = s->pipe_state;
    int wake;
    wio_shm_consume(c->seg, n, &wake);
    if (wake)
        doorbell(s);
}

/* Ring space is polled (shm_poll), not signalled. */
static int ring_want_write(wio_stream *s, int on)
{
    (void)s;
    (void)on;
    return 0;
}

static void ring_shutdown(wio_stream *s) { shutdown(s->fd, SHUT_WR); }

static void ring_release(wio_stream *s)
{
    shm_conn *c = s->pipe_state;
    if (wio_list_linked(&c->ring_link)) {
        wio_list_remove(&c->ring_link);
        c->tp->snap_valid = 0;
        wio_poller_polled(c->tp->poller, -1);
    }
    if (s->fd >= 0)
        close(s->fd);
}

static const wio_pipe_ops ring_pipe = {
    .sendv = ring_sendv,
    .reserve = ring_reserve,
    .commit = ring_commit,
    .peek = ring_peek,
    .consume = ring_consume,
    .want_write = ring_want_write,
    .shutdown = ring_shutdown,
    .release = ring_release,
};

/* The socket of a ring connection is readable: doorbells, or its end. On EOF, first everything
 * the peer put into the ring before closing is read. */
static void doorbell_ready(wio_poll_fd *pf, uint32_t events)
{
    (void)events;
    wio_stream *s = pf->arg;
    shm_conn *c = s->pipe_state;
    char bells[64];
    if (s->state == WIO_SS_CLOSED)
        return;
    for (;;) {
        ssize_t n = recv(s->fd, bells, sizeof bells, 0);
        if (n > 0)
            continue;
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        for (int i = 0; i < (1 << 20) && s->state != WIO_SS_CLOSED && wio_shm_readable(c->seg); i++)
            wio_stream_read(s);
        if (s->state == WIO_SS_CLOSED)
            return;
        if (n == 0) {
            wio_stream_eof(s);
        } else {
            char why[128];
            snprintf(why, sizeof why, "receive failed: %s", strerror(errno));
            wio_stream_fail(s, WAITIO_ERR_PEER, why, 0);
        }
        return;
    }
    wio_stream_read(s);
    if (s->state != WIO_SS_CLOSED && s->want_out)
        wio_stream_writable(s);
}

/* From here on the byte stream moves through the rings; the socket carries doorbells. */
static void ring_activate(wio_stream *s)
{
    shm_conn *c = s->pipe_state;
    if (s->want_out)
        (void)wio_poller_mod(c->tp->poller, &s->pf, EPOLLIN);
    s->kind = &shm_ring_kind;
    s->pf.ready = doorbell_ready;
    wio_stream_drop_buffered(s); /* nothing but doorbells can follow the last handshake frame */
    wio_list_insert_tail(&c->tp->rings, &c->ring_link);
    c->tp->snap_valid = 0;
    wio_poller_polled(c->tp->poller, 1);
    snprintf(s->desc + strlen(s->desc), sizeof s->desc - strlen(s->desc), " shm");
}

/* ------------------------------------------------------------------------------------ */
/* polling the rings                                                                    */

/* Copies the ring connections into snap; returns how many. Callbacks may close connections
 * while we iterate; closed ones stay allocated until the stream context frees its zombies,
 * after the poll round. */
static size_t ring_snapshot(shm_tp *t)
{
    if (t->snap_valid)
        return t->snap_len;
    size_t n = 0;
    wio_list *pos;
    for (pos = t->rings.next; pos != &t->rings; pos = pos->next)
        n++;
    if (n > t->snap_cap) {
        wio_stream **a = realloc(t->snap, n * sizeof *a);
        if (!a)
            return 0; /* retried at the next poll */
        t->snap = a;
        t->snap_cap = n;
    }
    size_t i = 0;
    for (pos = t->rings.next; pos != &t->rings; pos = pos->next)
        t->snap[i++] = WIO_CONTAINER_OF(pos, shm_conn, ring_link)->s;
    t->snap_len = n;
    t->snap_valid = 1;
    return n;
}

/* One ring connection: reads what its ring holds and writes what waited for ring space.
 * Returns the progress made: 1 for data read, 1 for everything queued written (a ring that is
 * still full does not count, or a sender stuck on a dead reader would spin without ever looking
 * at the socket that reports the death). */
static int ring_conn_poll(wio_stream *s)
{
    int busy = 0;
    if (s->state == WIO_SS_CLOSED)
        return 0;
    if (wio_shm_readable(((shm_conn *)s->pipe_state)->seg)) {
        busy++;
        wio_stream_read(s);
    }
    if (s->state != WIO_SS_CLOSED && s->want_out) {
        wio_stream_writable(s);
        busy += s->state != WIO_SS_CLOSED && !s->want_out;
    }
    return busy;
}

/* Reads every ring that has data and writes what waited for ring space. Returns how many
 * connections made progress. */
static int shm_poll(void *arg)
{
    shm_tp *t = arg;
    size_t n = ring_snapshot(t);
    int busy = 0;
    for (size_t i = 0; i < n; i++)
        busy += ring_conn_poll(t->snap[i]);
    return busy;
}

/* Announce that we sleep, so that writers ring the doorbell; then look once more (after one
 * barrier in the peers that publish without one: shm_ring.c, ring_ctl). */
static int shm_prepare_sleep(void *arg, int *timeout_ms)
{
    (void)timeout_ms;
    shm_tp *t = arg;
    size_t n = ring_snapshot(t);
    int fence = 0, work = 0;
    for (size_t i = 0; i < n; i++) {
        wio_stream *s = t->snap[i];
        if (s->state != WIO_SS_CLOSED)
            fence |= wio_shm_announce_sleep(((shm_conn *)s->pipe_state)->seg, s->want_out);
    }
    if (fence && wio_shm_fence_peers() != 0)
        work = 1; /* cannot be sure a doorbell comes: poll instead of blocking */
    for (size_t i = 0; i < n; i++) {
        wio_stream *s = t->snap[i];
        if (s->state != WIO_SS_CLOSED && wio_shm_sleep_check(((shm_conn *)s->pipe_state)->seg, s->want_out))
            work = 1;
    }
    return work;
}

static void shm_end_sleep(void *arg)
{
    shm_tp *t = arg;
    for (size_t i = 0; i < t->snap_len && t->snap_valid; i++)
        if (t->snap[i]->state != WIO_SS_CLOSED)
            wio_shm_end_sleep(((shm_conn *)t->snap[i]->pipe_state)->seg);
}

/* ------------------------------------------------------------------------------------ */
/* the handshake's shared-memory steps                                                  */

/* Who is at the other end of the socket, as the kernel says (pid in our namespace). */
static void read_peer_credentials(wio_stream *s)
{
    shm_conn *c = s->pipe_state;
    struct ucred cr;
    socklen_t len = sizeof cr;
    if (getsockopt(s->fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0 && len == sizeof cr) {
        c->peer_pid = (int32_t)cr.pid;
        c->peer_uid = (uint32_t)cr.uid;
    } else {
        c->peer_pid = 0;
    }
}

/* Acceptor, after ACCEPT: create the segment and offer it; without one, stay on the socket. */
static int attach_conn(shm_tp *t, wio_stream *s);

static int shm_accepted(wio_stream *s)
{
    shm_tp *t = wio_stream_ctx_owner(s->ctx);
    if (!s->pipe_state && attach_conn(t, s) != 0) {
        wio_stream_fail(s, WAITIO_ERR_NOMEM, "out of memory", 0);
        return 1;
    }
    shm_conn *c = s->pipe_state;
    read_peer_credentials(s);
    char name[WIO_SHM_NAME_MAX];
    if (wio_shm_create(c->tp->ring_size, c->tp->cfg->shm_fenced, &c->seg, name) != 0) {
        wio_info("connection %s: no shared memory (%s); staying on the local socket", s->desc,
                 waitio_error_message());
        wio_stream_send_handshake(s, WIO_FT_SHM_OFFER, 0, 0);
        return 0;
    }
    size_t n = strlen(name) + 1;
    wio_put_le32(s->hs_payload, (uint32_t)c->tp->ring_size);
    memcpy(s->hs_payload + 4, name, n);
    s->state = WIO_SS_TP_HANDSHAKE;
    wio_stream_send_handshake(s, WIO_FT_SHM_OFFER, 0, 4 + n);
    return 1;
}

static int shm_connector_accepted(wio_stream *s)
{
    read_peer_credentials(s);
    return 1; /* SHM_OFFER follows */
}

/* SHM_OFFER from the acceptor: le32 ring size, segment name, NUL; or empty (no segment). */
static int handle_offer(wio_stream *s, const wio_frame_hdr *h, const uint8_t *p)
{
    shm_conn *c = s->pipe_state;
    if (!s->initiator)
        return -1;
    if (h->len == 0) {
        wio_stream_open(s);
        return 0;
    }
    if (h->len < 6 || h->len > 4 + WIO_SHM_NAME_MAX || p[h->len - 1] != 0)
        return -1;
    size_t ring = wio_get_le32(p);
    int rc = wio_shm_attach((const char *)p + 4, ring, c->tp->cfg->shm_fenced, &c->seg);
    if (rc == WAITIO_ERR_PROTO)
        return -1;
    if (rc)
        wio_info("connection %s: cannot attach shared memory (%s); staying on the local socket",
                 s->desc, waitio_error_message());
    wio_stream_send_handshake(s, WIO_FT_SHM_READY, rc ? WIO_FF_NACK : WIO_FF_ACK, 0);
    if (s->state == WIO_SS_CLOSED)
        return 0;
    if (!rc) {
        if (!wio_list_empty(&s->sendq)) { /* a fresh socket takes a header at once */
            wio_stream_fail(s, WAITIO_ERR_SYS, "could not write SHM_READY", 0);
            return 0;
        }
        ring_activate(s);
    }
    wio_stream_open(s);
    return 0;
}

/* SHM_READY from the connector: attached (ACK) or not (NACK, it logged why). */
static int handle_ready(wio_stream *s, const wio_frame_hdr *h)
{
    shm_conn *c = s->pipe_state;
    if (s->initiator || h->len != 0 || !c->seg)
        return -1;
    if (h->flags & WIO_FF_ACK) {
        wio_shm_unlink(c->seg);
        ring_activate(s);
    } else {
        wio_shm_destroy(c->seg);
        c->seg = NULL;
    }
    wio_stream_open(s);
    return 0;
}

static int shm_handshake_frame(wio_stream *s, const wio_frame_hdr *h, const uint8_t *payload)
{
    switch (h->type) {
    case WIO_FT_SHM_OFFER: return handle_offer(s, h, payload);
    case WIO_FT_SHM_READY: return handle_ready(s, h);
    default: return -1;
    }
}

static void shm_conn_freed(wio_stream *s)
{
    shm_conn *c = s->pipe_state;
    if (!c)
        return;
    wio_shm_destroy(c->seg);
    free(c);
    s->pipe_state = NULL;
}

static const wio_stream_kind shm_sock_kind = {
    .name = "shm",
    .pipe = &wio_socket_pipe,
    .accepted = shm_accepted,
    .connector_accepted = shm_connector_accepted,
    .handshake_frame = shm_handshake_frame,
    .freed = shm_conn_freed,
};

static const wio_stream_kind shm_ring_kind = {
    .name = "shm",
    .pipe = &ring_pipe,
    .handshake_frame = shm_handshake_frame,
    .freed = shm_conn_freed,
};

/* Every stream of this transport carries a shm_conn; accepted ones get it here. */
static int attach_conn(shm_tp *t, wio_stream *s)
{
    shm_conn *c = calloc(1, sizeof *c);
    if (!c)
        return -1;
    c->tp = t;
    c->s = s;
    wio_list_init(&c->ring_link);
    s->pipe_state = c;
    return 0;
}

/* ------------------------------------------------------------------------------------ */
/* single copy                                                                          */

static size_t shm_rdv_pack(void *conn, const void *buf, size_t len, uint8_t *out)
{
    wio_stream *s = conn;
    shm_conn *c = s->pipe_state;
    if (!c || !c->tp->single_copy || c->cma == CMA_OFF || len == 0)
        return 0;
    wio_put_le64(out, (uint64_t)(uintptr_t)buf);
    wio_put_le64(out + 8, (uint64_t)len);
    return RDV_DESC_LEN;
}

static void cma_off(wio_stream *s, shm_conn *c, const char *why)
{
    c->cma = CMA_OFF;
    wio_debug("single copy from process %u unavailable (%s); its data moves through the ring",
              (unsigned)s->peer_id, why);
}

/* Reads the sender's buffer in place, only from the process at the other end of our socket and
 * only if it runs as our effective uid; on any failure that peer's data moves through the ring
 * for good (DATA frames overwrite whatever part was copied). */
static int shm_rdv_get(void *conn, const uint8_t *desc, size_t desc_len, void *dst, size_t len)
{
    wio_stream *s = conn;
    shm_conn *c = s->pipe_state;
    if (!c || !c->tp->single_copy || c->cma == CMA_OFF)
        return EPERM;
    if (desc_len != RDV_DESC_LEN || wio_get_le64(desc + 8) != (uint64_t)len)
        return EINVAL;
    if (c->cma == CMA_UNKNOWN) {
        if (c->peer_pid <= 0) {
            cma_off(s, c, "its pid is not visible from this pid namespace");
            return EPERM;
        }
        if (c->peer_uid != (uint32_t)geteuid()) {
            cma_off(s, c, "it runs as another user");
            return EPERM;
        }
    }
    int err = wio_cma_read(c->peer_pid, wio_get_le64(desc), dst, len);
    if (err) {
        char why[96];
        snprintf(why, sizeof why, "reading its memory failed: %s", strerror(err));
        cma_off(s, c, why);
        return err;
    }
    c->cma = CMA_OK;
    return 0;
}

/* One-sided single copy (src/rma): the same rules as shm_rdv_get — only the process at the other
 * end of our socket, only when it runs as our effective uid; any failure turns it off for that
 * peer, whose one-sided operations then travel as frames. */
static int shm_rma_copy(void *conn, int write, uint64_t remote_addr, void *local, size_t len)
{
    wio_stream *s = conn;
    shm_conn *c = s->pipe_state;
    if (!c || !c->tp->rma_copy || c->rma_cma == CMA_OFF || s->state != WIO_SS_OPEN)
        return EPERM;
    if (c->rma_cma == CMA_UNKNOWN && (c->peer_pid <= 0 || c->peer_uid != (uint32_t)geteuid())) {
        c->rma_cma = CMA_OFF;
        wio_debug("one-sided single copy with process %u unavailable (%s)", (unsigned)s->peer_id,
                  c->peer_pid <= 0 ? "its pid is not visible from this pid namespace" : "it runs as another user");
        return EPERM;
    }
    int err = write ? wio_cma_write(c->peer_pid, remote_addr, local, len)
                    : wio_cma_read(c->peer_pid, remote_addr, local, len);
    if (err) {
        c->rma_cma = CMA_OFF;
        wio_debug("one-sided single copy with process %u failed (%s); frames from now on",
                  (unsigned)s->peer_id, strerror(err));
        return err;
    }
    c->rma_cma = CMA_OK;
    return 0;
}

/* ------------------------------------------------------------------------------------ */
/* the transport's row                                                                  */

static int open_listener(shm_tp *t, uint64_t token)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    socket_path(t, token, sa.sun_path, sizeof sa.sun_path);
    memcpy(t->path, sa.sun_path, sizeof t->path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return wio_fail(WAITIO_ERR_SYS, "socket(AF_UNIX): %s", strerror(errno));
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 4096) != 0) {
        int e = errno;
        close(fd);
        return wio_fail(WAITIO_ERR_SYS, "cannot listen on %s: %s", t->path, strerror(e));
    }
    return wio_listener_create(t->ctx, fd, &shm_sock_kind, NULL, t->handler, t->hctx, 0, &t->listener);
}

static void shm_close(void *tp);

static int shm_open(const wio_tp_params *p, void **out, wio_proc *self)
{
    shm_tp *t = calloc(1, sizeof *t);
    if (!t)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory creating the shm transport");
    t->handler = p->handler;
    t->hctx = p->ctx;
    t->cfg = p->cfg;
    t->poller = p->poller;
    t->ring_size = p->cfg->shm_ring;
    t->host_id = self->host_id;
    t->lock_fd = -1;
    wio_list_init(&t->rings);
    t->src.arg = t;
    t->src.poll = shm_poll;
    t->src.prepare_sleep = shm_prepare_sleep;
    t->src.end_sleep = shm_end_sleep;
    wio_stream_params sp = {
        .key = p->key, .poller = p->poller, .eager_limit = p->eager_limit,
        .connect_timeout = p->cfg->connect_timeout, .handshake_timeout = p->cfg->handshake_timeout,
        .max_handshakes = p->cfg->max_handshakes, .max_conns = wio_config_max_conns(p->cfg), .owner = t,
    };
    uint64_t token = 0;
    int rc = private_dir(t);
    if (!rc)
        rc = wio_random_bytes((uint8_t *)&token, sizeof token);
    if (!rc)
        rc = wio_stream_ctx_create(&t->ctx, &sp);
    if (!rc) {
        wio_poller_add_source(p->poller, &t->src);
        sweep_dead_sockets(t);
        wio_shm_sweep_stale();
        rc = hold_liveness_lock(t, token | 1);
    }
    if (!rc)
        rc = open_listener(t, token | 1);
    if (rc) {
        shm_close(t);
        return rc;
    }
    self->shm_token = token | 1;
    self->transports |= WIO_TP_SHM;
    *out = t;
    return 0;
}

static int shm_start(void *tp, const wio_tp_instance *inst)
{
    shm_tp *t = tp;
    t->table = inst->table;
    t->nprocs = inst->nprocs;
    t->self_id = inst->self_id;
    wio_stream_ctx_set_self(t->ctx, inst->self_id, inst->eager_credit);
    /* Two copies through a ring overlap when both ends have a core (and then beat the kernel's
     * page pinning on the machines measured); one copy wins when they must take turns. A
     * privileged process (root, CAP_SYS_PTRACE) could read processes it should not: only when
     * asked for explicitly. */
    int want = t->cfg->single_copy;
    if (want == -1)
        want = inst->oversubscribed && !wio_cma_privileged();
    t->single_copy = want && wio_cma_supported();
    /* One-sided single copy replaces frames served by the target (not a second copy through a
     * ring), so automatic mode wants it whenever it is safe: not for a privileged process. */
    t->rma_copy = (t->cfg->single_copy == 1 || (t->cfg->single_copy == -1 && !wio_cma_privileged())) &&
                  wio_cma_supported();
    return wio_listener_arm(t->listener);
}

static int shm_reachable(void *tp, uint32_t peer_id)
{
    const shm_tp *t = tp;
    if (peer_id >= t->nprocs || peer_id == t->self_id)
        return 0;
    const wio_proc *p = &t->table[peer_id];
    return (p->transports & WIO_TP_SHM) && p->shm_token && p->host_id == t->host_id;
}

static int shm_connect(void *tp, uint32_t peer_id, unsigned flags, void *user, void **conn)
{
    shm_tp *t = tp;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    socket_path(t, t->table[peer_id].shm_token, sa.sun_path, sizeof sa.sun_path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 && (errno == EMFILE || errno == ENFILE) && wio_stream_ctx_release_reserve(t->ctx))
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return wio_fail(WAITIO_ERR_SYS, "socket(AF_UNIX): %s", strerror(errno));
    wio_stream *s = wio_stream_new(t->ctx, &shm_sock_kind, fd, t->handler, t->hctx);
    if (!s || attach_conn(t, s) != 0) {
        if (s)
            wio_stream_close(s, WAITIO_ERR_NOMEM);
        else
            close(fd);
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    }
    snprintf(s->desc, sizeof s->desc, "local process %u", (unsigned)peer_id);
    /* A local connect completes at once, or fails at once (EAGAIN: the peer's backlog is full;
     * ECONNREFUSED: nobody listens there any more). A failure is reported like an asynchronous
     * one, once the caller has the connection: the engine then tries its next transport. */
    int connected = connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
    int err = connected ? 0 : errno;
    if (wio_stream_start_connect(s, t->self_id, peer_id, flags, user, connected) != 0) {
        wio_stream_close(s, WAITIO_ERR_SYS);
        return wio_fail(WAITIO_ERR_SYS, "cannot start a local connection");
    }
    *conn = s;
    if (!connected && err != EINPROGRESS) {
        char why[200];
        snprintf(why, sizeof why, "connect to %s failed: %s", sa.sun_path, strerror(err));
        wio_stream_fail_soon(s, why);
    }
    return 0;
}

static void shm_send(void *conn, wio_send_item *it) { wio_stream_send(conn, it); }
static int shm_send_now(void *conn, wio_frame_hdr *h, const void *payload)
{
    return wio_stream_send_now(conn, h, payload);
}
/* A wait for this one peer spins here instead of in shm_poll (engine.c, hot_link): its ring only,
 * no walk over every ring. A connection still on its socket is read like a tcp one. */
static void shm_conn_poll(void *conn)
{
    wio_stream *s = conn;
    shm_conn *c = s->pipe_state;
    if (!wio_list_linked(&c->ring_link)) {
        wio_stream_poll(s);
        return;
    }
    (void)ring_conn_poll(s);
}
static int shm_conn_idle(const void *conn) { return wio_stream_idle(conn); }
static void shm_conn_shutdown(void *conn) { wio_stream_shutdown(conn); }
static void shm_conn_close(void *conn, int err) { wio_stream_close(conn, err); }
static void shm_conn_abandon(void *conn) { wio_stream_abandon(conn); }
static const char *shm_conn_desc(const void *conn) { return ((const wio_stream *)conn)->desc; }

static void shm_close(void *tp)
{
    shm_tp *t = tp;
    if (!t)
        return;
    wio_stream_ctx_destroy(t->ctx);
    if (t->path[0])
        unlink(t->path);
    if (t->lock_path[0])
        unlink(t->lock_path); /* after the socket: see hold_liveness_lock */
    if (t->lock_fd >= 0)
        close(t->lock_fd);
    if (t->dir[0])
        (void)rmdir(t->dir); /* only when no other process of ours uses it */
    if (wio_list_linked(&t->src.link))
        wio_poller_del_source(t->poller, &t->src);
    free(t->snap);
    free(t);
}

const wio_transport_ops wio_transport_shm = {
    .name = "shm",
    .bit = WIO_TP_SHM,
    .open = shm_open,
    .start = shm_start,
    .reachable = shm_reachable,
    .connect = shm_connect,
    .send = shm_send,
    .send_now = shm_send_now,
    .conn_poll = shm_conn_poll,
    .conn_idle = shm_conn_idle,
    .conn_shutdown = shm_conn_shutdown,
    .conn_close = shm_conn_close,
    .conn_abandon = shm_conn_abandon,
    .conn_desc = shm_conn_desc,
    .rdv_pack = shm_rdv_pack,
    .rdv_get = shm_rdv_get,
    .rma_copy = shm_rma_copy,
    .close = shm_close,
};
