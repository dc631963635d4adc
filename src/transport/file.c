/*
 * file.c — the file transport (the original's WaitIO-File, SPEC §6): processes that share only
 * a file system exchange frames through segment files in the instance directory. Each
 * connection is two streams, one per direction, each a directory of numbered segment files in
 * the reader's inbox:
 *
 *   <instance>/in-<pb>.<rank>/c<id>-<nonce>/   connector <id> -> this process
 *   <instance>/in-<pb>.<rank>/a<id>-<nonce>/   acceptor <id> -> this process (the reply stream)
 *   <instance>/hb/<pb>.<rank>                  heartbeat of each process
 *
 * A writer appends the stream's bytes to a segment (a temporary file made by mkstemp in the
 * stream's directory), then publishes it by rename under its sequence number; the reader opens
 * the next number, checks the segment's header and its HMAC (file key derived from the instance
 * key) before a single byte of it is parsed, serves the bytes to the stream parser (stream.c),
 * and deletes the file: consumed data is reclaimed, and a writer whose published, unread bytes
 * reach WAITIO_MAXFILE_SIZE_PER_PROC waits (back-pressure) until the reader deletes some. The
 * handshake is the same as every stream transport's (handshake.c), so a file written by anyone
 * without the key is rejected with a logged reason, never parsed as data.
 *
 * The reader waits for new segments with inotify where the file system delivers it, and polls
 * with backoff otherwise (shared parallel file systems rarely deliver inotify across nodes):
 * never more than WAITIO_FILE_POLL_MS apart while blocked. A peer that dies is noticed by its
 * heartbeat file standing still for WAITIO_PEER_TIMEOUT seconds. A process removes what a
 * crashed run with the same instance directory left in its inbox when it starts.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include "transport/file.h"
#include "transport/file_dir.h"
#include "transport/stream.h"
#include "core/common.h"
#include "core/frame.h"

#define STAGE_SIZE (64u << 10)       /* small writes are gathered here before write() */
#define SEG_MAX ((size_t)4 << 20)    /* a segment holds at most this many payload bytes */
#define SMALL_SEGMENT (64u << 10)    /* read whole into memory; larger ones are served by pread */
#define POLL_BACKOFF_MAX 4096        /* progress calls between looks at quiet streams */
#define SCAN_PERIOD 0.05             /* seconds between looks at the inbox for new connections */

typedef struct file_tp file_tp;

typedef struct file_conn {
    file_tp *tp;
    wio_stream *s;
    uint32_t peer_id;
    uint64_t nonce;
    int dead;
    /* writing: segments into out_dir (in the peer's inbox) */
    char *out_dir;
    int out_dir_made;
    uint64_t out_seq;
    int out_fd;                      /* the segment being written (a temporary file), or -1 */
    char *out_tmp;
    size_t out_len;                  /* its payload bytes so far */
    wio_mac *out_mac;
    uint8_t *stage;
    size_t stage_len;
    uint64_t *pub_seq;               /* published segments not yet deleted by the reader */
    size_t *pub_len;
    size_t pub_head, pub_count, pub_cap;
    uint64_t unconsumed;             /* their bytes */
    int fin_sent;
    /* reading: segments from in_dir (in our inbox) */
    char *in_dir;
    uint64_t in_seq;
    int in_fd;
    uint64_t in_len, in_off;         /* the current segment's payload, bytes served */
    uint8_t *in_buf;                 /* small segments: the whole payload */
    int in_fin, eof;
    int in_open;                     /* a verified segment is being served */
    wio_mac *in_mac;
    int watched;                     /* in_dir is under inotify */
} file_conn;

typedef struct peer_beat {
    uint64_t counter;
    double changed_at;
} peer_beat;

/* A heartbeat record: a counter that moves every beat, and where the process runs, so that one
 * of this host that is gone is noticed in a few beats rather than WAITIO_PEER_TIMEOUT. */
#define BEAT_LEN 24

struct file_tp {
    wio_stream_ctx *ctx;
    wio_poller *poller;
    const wio_tp_handler *handler;
    void *hctx;
    const wio_config *cfg;
    char dir[WIO_FILE_PATH_MAX];     /* the instance directory */
    char inbox[WIO_FILE_PATH_MAX + 32];
    char hb_dir[WIO_FILE_PATH_MAX + 32];
    char hb_name[32];
    uint8_t key[WIO_PROOF_LEN];
    int started;
    uint32_t self_id, nprocs;
    int npb;
    const uint32_t *pb_offset;
    const wio_proc *table;
    uint64_t host_id;
    file_conn **conns;
    size_t nconns, cap;
    char **ignored;                  /* inbox entries that are not ours to accept */
    size_t nignored;
    int inotify_fd;
    wio_poll_fd ipf;
    int kick;                        /* look at every stream at the next poll */
    unsigned poll_skip, poll_interval;
    double next_scan, next_beat, beat_period;
    uint64_t beat_counter;
    peer_beat *beats;
    wio_poll_source src;
    uint64_t segments_out, segments_in, bytes_out, bytes_in;
};

static const wio_stream_kind file_kind;

/* ------------------------------------------------------------------------------------ */
/* names                                                                                */

static void pb_rank_of(const file_tp *t, uint32_t id, int *pb, int *rank)
{
    int p = 0;
    while (p + 1 < t->npb && t->pb_offset[p + 1] <= id)
        p++;
    *pb = p;
    *rank = (int)(id - t->pb_offset[p]);
}

static char *inbox_stream_path(const file_tp *t, uint32_t reader, char kind, uint32_t writer, uint64_t nonce)
{
    int pb, rank;
    pb_rank_of(t, reader, &pb, &rank);
    char buf[WIO_FILE_PATH_MAX];
    int n = snprintf(buf, sizeof buf, "%s/in-%d.%d/%c%u-%016" PRIx64, t->dir, pb, rank, kind,
                     (unsigned)writer, nonce);
    if (n < 0 || (size_t)n >= sizeof buf)
        return NULL;
    return strdup(buf);
}

static void seg_name(uint64_t seq, char out[17]) { snprintf(out, 17, "%016" PRIx64, seq); }

/* ------------------------------------------------------------------------------------ */
/* writing segments                                                                     */

static int write_all(int fd, const void *p, size_t n)
{
    const uint8_t *b = p;
    while (n) {
        ssize_t k = write(fd, b, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        b += k;
        n -= (size_t)k;
    }
    return 0;
}

static int out_begin(file_conn *c)
{
    if (!c->out_dir_made) {
        if (mkdir(c->out_dir, 0700) != 0 && errno != EEXIST)
            return -1; /* the reader's inbox is gone: it finalized or died */
        c->out_dir_made = 1;
    }
    size_t n = strlen(c->out_dir) + 16;
    if (!c->out_tmp && !(c->out_tmp = malloc(n)))
        return -1;
    snprintf(c->out_tmp, n, "%s/.t-XXXXXX", c->out_dir);
    c->out_fd = mkostemp(c->out_tmp, O_CLOEXEC);
    if (c->out_fd < 0)
        return -1;
    static const uint8_t zeros[WIO_SEG_HDR_SIZE];
    if (write_all(c->out_fd, zeros, sizeof zeros) != 0 || wio_mac_restart(c->out_mac) != 0) {
        close(c->out_fd);
        unlink(c->out_tmp);
        c->out_fd = -1;
        return -1;
    }
    c->out_len = 0;
    c->stage_len = 0;
    return 0;
}

static int stage_flush(file_conn *c)
{
    if (c->stage_len && write_all(c->out_fd, c->stage, c->stage_len) != 0)
        return -1;
    c->stage_len = 0;
    return 0;
}

static int pub_push(file_conn *c, uint64_t seq, size_t len)
{
    if (c->pub_count == c->pub_cap) {
        size_t cap = c->pub_cap ? 2 * c->pub_cap : 16;
        uint64_t *s = malloc(cap * sizeof *s);
        size_t *l = malloc(cap * sizeof *l);
        if (!s || !l) {
            free(s);
            free(l);
            return -1;
        }
        for (size_t i = 0; i < c->pub_count; i++) {
            s[i] = c->pub_seq[(c->pub_head + i) % c->pub_cap];
            l[i] = c->pub_len[(c->pub_head + i) % c->pub_cap];
        }
        free(c->pub_seq);
        free(c->pub_len);
        c->pub_seq = s;
        c->pub_len = l;
        c->pub_head = 0;
        c->pub_cap = cap;
    }
    size_t at = (c->pub_head + c->pub_count++) % c->pub_cap;
    c->pub_seq[at] = seq;
    c->pub_len[at] = len;
    c->unconsumed += len;
    return 0;
}

/* Seals the segment being written (header, MAC) and publishes it under its number. */
static int out_commit(file_conn *c, uint16_t flags)
{
    if (c->out_fd < 0 && out_begin(c) != 0)
        return -1;
    wio_seg_hdr h = {.flags = flags, .stream = c->nonce, .seq = c->out_seq, .len = c->out_len};
    uint8_t hdr[WIO_SEG_HDR_SIZE], mac[WIO_SEG_MAC_SIZE];
    wio_seg_encode(&h, hdr);
    wio_mac_update(c->out_mac, c->stage, c->stage_len);
    wio_mac_update(c->out_mac, hdr, sizeof hdr);
    int ok = stage_flush(c) == 0 && wio_mac_final(c->out_mac, mac) == 0 &&
             write_all(c->out_fd, mac, sizeof mac) == 0 &&
             pwrite(c->out_fd, hdr, sizeof hdr, 0) == (ssize_t)sizeof hdr &&
             (!c->tp->cfg->file_fsync || fsync(c->out_fd) == 0);
    ok = close(c->out_fd) == 0 && ok;
    c->out_fd = -1;
    char name[17], path[WIO_FILE_PATH_MAX];
    seg_name(c->out_seq, name);
    snprintf(path, sizeof path, "%s/%s", c->out_dir, name);
    if (!ok || rename(c->out_tmp, path) != 0) {
        unlink(c->out_tmp);
        return -1;
    }
    c->tp->segments_out++;
    c->tp->bytes_out += c->out_len;
    if (pub_push(c, c->out_seq, c->out_len) != 0)
        return -1;
    c->out_seq++;
    c->out_len = 0;
    return 0;
}

/* Published segments the reader deleted no longer count against the budget. */
static void reclaim_consumed(file_conn *c)
{
    char name[17], path[WIO_FILE_PATH_MAX];
    while (c->pub_count) {
        seg_name(c->pub_seq[c->pub_head], name);
        snprintf(path, sizeof path, "%s/%s", c->out_dir, name);
        if (access(path, F_OK) == 0 || errno != ENOENT)
            return;
        c->unconsumed -= c->pub_len[c->pub_head];
        c->pub_head = (c->pub_head + 1) % c->pub_cap;
        c->pub_count--;
    }
}

static size_t out_room(file_conn *c)
{
    size_t budget = c->tp->cfg->maxfile;
    uint64_t used = c->unconsumed + c->out_len;
    size_t room = used >= budget ? 0 : budget - (size_t)used;
    size_t seg = SEG_MAX - c->out_len;
    return room < seg ? room : seg;
}

static ssize_t file_sendv(wio_stream *s, struct iovec *iov, int iovcnt)
{
    file_conn *c = s->pipe_state;
    size_t want = 0;
    for (int i = 0; i < iovcnt; i++)
        want += iov[i].iov_len;
    size_t room = out_room(c);
    if (room == 0 && c->out_len) { /* this segment is full, or the budget is: publish it */
        if (out_commit(c, 0) != 0)
            goto failed;
        reclaim_consumed(c);
        room = out_room(c);
    }
    if (room == 0) {
        reclaim_consumed(c);
        room = out_room(c);
    }
    if (room == 0) {
        errno = EAGAIN;
        return -1;
    }
    if (c->out_fd < 0 && out_begin(c) != 0)
        goto failed;
    size_t take = want < room ? want : room, left = take;
    for (int i = 0; i < iovcnt && left; i++) {
        const uint8_t *p = iov[i].iov_base;
        size_t n = iov[i].iov_len < left ? iov[i].iov_len : left;
        left -= n;
        /* Every byte passes through the stage: what is MACed must be what was written, and a
         * payload may be memory another process writes meanwhile (a one-sided reply from a
         * shared heap window), so the caller's buffer is read once. */
        while (n) {
            size_t k = STAGE_SIZE - c->stage_len < n ? STAGE_SIZE - c->stage_len : n;
            memcpy(c->stage + c->stage_len, p, k);
            c->stage_len += k;
            p += k;
            n -= k;
            if (c->stage_len == STAGE_SIZE) {
                wio_mac_update(c->out_mac, c->stage, c->stage_len);
                if (stage_flush(c) != 0)
                    goto failed;
            }
        }
    }
    c->out_len += take;
    return (ssize_t)take;
failed:
    errno = errno ? errno : EIO;
    if (errno == EAGAIN)
        errno = EIO;
    return -1;
}

/* The end of a burst of writes: publish what was written, so the reader sees it now. */
static void file_flush(wio_stream *s)
{
    file_conn *c = s->pipe_state;
    if (c->out_len && out_commit(c, 0) != 0)
        wio_stream_fail(s, WAITIO_ERR_PEER, "cannot publish a segment (the peer's inbox is gone?)", 0);
}

static int file_want_write(wio_stream *s, int on)
{
    (void)s;
    (void)on;
    return 0; /* the budget is polled (file_poll) */
}

static void send_fin(file_conn *c)
{
    if (c->fin_sent || !c->out_dir_made)
        return;
    c->fin_sent = 1;
    if (c->out_fd >= 0 || c->out_len == 0)
        (void)out_commit(c, WIO_SEG_FIN);
}

static void file_shutdown(wio_stream *s) { send_fin(s->pipe_state); }

/* Closed: what was being written is dropped, the reader gets its end, our inbox stream goes. */
static void file_release(wio_stream *s)
{
    file_conn *c = s->pipe_state;
    if (c->out_fd >= 0) {
        close(c->out_fd);
        unlink(c->out_tmp);
        c->out_fd = -1;
        c->out_len = 0;
    }
    send_fin(c);
    if (c->in_fd >= 0)
        close(c->in_fd);
    c->in_fd = -1;
    if (c->in_dir)
        wio_file_rm_tree(c->in_dir);
    c->dead = 1;
    wio_poller_polled(c->tp->poller, -1);
}

/* ------------------------------------------------------------------------------------ */
/* reading segments                                                                     */

static int seg_invalid(file_conn *c, const char *why)
{
    wio_warn("file stream %s: segment %" PRIu64 " rejected: %s", c->in_dir, c->in_seq, why);
    errno = EPROTO;
    return -1;
}

int wio_file_seg_verify(int fd, uint64_t nonce, uint64_t seq, wio_mac *m, uint8_t **small,
                        wio_seg_hdr *h, const char **why)
{
    uint8_t hdr[WIO_SEG_HDR_SIZE], mac[WIO_SEG_MAC_SIZE], want[WIO_SEG_MAC_SIZE];
    struct stat st;
    *small = NULL;
    *why = NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        *why = "not a regular file";
    else if (pread(fd, hdr, sizeof hdr, 0) != (ssize_t)sizeof hdr)
        *why = "truncated header";
    else if (wio_seg_decode(hdr, SEG_MAX, h, why) != 0)
        ;
    else if (h->stream != nonce || h->seq != seq)
        *why = "belongs to another stream or position (replayed?)";
    else if ((uint64_t)st.st_size != WIO_SEG_HDR_SIZE + h->len + WIO_SEG_MAC_SIZE)
        *why = "its size does not match its header (torn or truncated)";
    if (*why)
        return -1;
    /* the MAC first: nothing of a segment is parsed before it checks out */
    uint8_t bounce[16384];
    uint8_t *buf = h->len <= SMALL_SEGMENT ? malloc(h->len ? h->len : 1) : NULL;
    if (h->len <= SMALL_SEGMENT && !buf) {
        *why = "out of memory";
        return -1;
    }
    int bad = wio_mac_restart(m) != 0;
    for (uint64_t off = 0; off < h->len && !bad;) {
        uint8_t *dst = buf ? buf + off : bounce;
        size_t n = buf ? (size_t)(h->len - off) : (h->len - off < sizeof bounce ? (size_t)(h->len - off) : sizeof bounce);
        ssize_t k = pread(fd, dst, n, (off_t)(WIO_SEG_HDR_SIZE + off));
        if (k <= 0) {
            bad = 1;
            break;
        }
        wio_mac_update(m, dst, (size_t)k);
        off += (uint64_t)k;
    }
    wio_mac_update(m, hdr, sizeof hdr);
    if (!bad)
        bad = wio_mac_final(m, want) != 0 ||
              pread(fd, mac, sizeof mac, (off_t)(WIO_SEG_HDR_SIZE + h->len)) != (ssize_t)sizeof mac ||
              !wio_auth_proof_equal(mac, want);
    if (bad) {
        free(buf);
        *why = "its MAC does not match (written without the instance key, or damaged)";
        return -1;
    }
    *small = buf;
    return 0;
}

/* Opens and verifies the next segment: 1 ready, 0 not there yet, -1 invalid (errno EPROTO). */
static int seg_open_next(file_conn *c)
{
    char name[17], path[WIO_FILE_PATH_MAX];
    seg_name(c->in_seq, name);
    snprintf(path, sizeof path, "%s/%s", c->in_dir, name);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return errno == ENOENT ? 0 : seg_invalid(c, strerror(errno));
    wio_seg_hdr h;
    uint8_t *buf;
    const char *why;
    if (wio_file_seg_verify(fd, c->nonce, c->in_seq, c->in_mac, &buf, &h, &why) != 0) {
        close(fd);
        return seg_invalid(c, why);
    }
    c->in_buf = buf;
    if (buf) {
        close(fd);
        c->in_fd = -1;
    } else {
        c->in_fd = fd;
    }
    c->in_len = h.len;
    c->in_off = 0;
    c->in_fin = (h.flags & WIO_SEG_FIN) != 0;
    c->in_open = 1;
    c->tp->segments_in++;
    c->tp->bytes_in += h.len;
    return 1;
}

/* The current segment is served: delete it (the writer's budget frees up), go to the next. */
static void seg_done(file_conn *c)
{
    char name[17], path[WIO_FILE_PATH_MAX];
    seg_name(c->in_seq, name);
    snprintf(path, sizeof path, "%s/%s", c->in_dir, name);
    (void)unlink(path);
    if (c->in_fd >= 0)
        close(c->in_fd);
    c->in_fd = -1;
    free(c->in_buf);
    c->in_buf = NULL;
    c->in_open = 0;
    c->in_seq++;
    if (c->in_fin)
        c->eof = 1;
}

static ssize_t file_recv(wio_stream *s, void *buf, size_t n)
{
    file_conn *c = s->pipe_state;
    for (;;) {
        if (c->in_open && c->in_off < c->in_len) {
            size_t k = c->in_len - c->in_off < n ? (size_t)(c->in_len - c->in_off) : n;
            if (c->in_buf) {
                memcpy(buf, c->in_buf + c->in_off, k);
            } else {
                ssize_t r = pread(c->in_fd, buf, k, (off_t)(WIO_SEG_HDR_SIZE + c->in_off));
                if (r <= 0) {
                    errno = EIO;
                    return -1;
                }
                k = (size_t)r;
            }
            c->in_off += k;
            if (c->in_off == c->in_len)
                seg_done(c);
            return (ssize_t)k;
        }
        if (c->in_open)
            seg_done(c);
        if (c->eof)
            return 0;
        int rc = seg_open_next(c);
        if (rc < 0)
            return -1;
        if (rc == 0) {
            errno = EAGAIN;
            return -1;
        }
    }
}

static const wio_pipe_ops file_pipe = {
    .sendv = file_sendv,
    .recv = file_recv,
    .flush = file_flush,
    .want_write = file_want_write,
    .shutdown = file_shutdown,
    .release = file_release,
};

/* ------------------------------------------------------------------------------------ */
/* connections                                                                          */

static void conn_free(wio_stream *s)
{
    file_conn *c = s->pipe_state;
    if (!c)
        return;
    file_tp *t = c->tp;
    for (size_t i = 0; i < t->nconns; i++)
        if (t->conns[i] == c) {
            t->conns[i] = t->conns[--t->nconns];
            break;
        }
    wio_mac_free(c->out_mac);
    wio_mac_free(c->in_mac);
    free(c->stage);
    free(c->out_dir);
    free(c->out_tmp);
    free(c->in_dir);
    free(c->in_buf);
    free(c->pub_seq);
    free(c->pub_len);
    free(c);
    s->pipe_state = NULL;
}

/* The acceptor checks that the process that proved the key is the one the stream's name says. */
static int file_accepted(wio_stream *s)
{
    file_conn *c = s->pipe_state;
    if (s->peer_id != c->peer_id) {
        wio_stream_fail(s, WAITIO_ERR_PROTO, "authenticated as another process than its directory names", 0);
        return 1;
    }
    return 0;
}

static const wio_stream_kind file_kind = {
    .name = "file",
    .pipe = &file_pipe,
    .accepted = file_accepted,
    .freed = conn_free,
};

static file_conn *conn_new(file_tp *t, uint32_t peer_id, uint64_t nonce, int initiator)
{
    file_conn *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->tp = t;
    c->peer_id = peer_id;
    c->nonce = nonce;
    c->out_fd = c->in_fd = -1;
    /* the connector writes c<me> into the acceptor's inbox and reads a<peer> in its own */
    c->out_dir = inbox_stream_path(t, peer_id, initiator ? 'c' : 'a', t->self_id, nonce);
    c->in_dir = inbox_stream_path(t, t->self_id, initiator ? 'a' : 'c', peer_id, nonce);
    c->stage = malloc(STAGE_SIZE);
    if (!c->out_dir || !c->in_dir || !c->stage || wio_mac_new(&c->out_mac, t->key) != 0 ||
        wio_mac_new(&c->in_mac, t->key) != 0) {
        wio_mac_free(c->out_mac);
        wio_mac_free(c->in_mac);
        free(c->out_dir);
        free(c->in_dir);
        free(c->stage);
        free(c);
        return NULL;
    }
    if (t->nconns == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 16;
        file_conn **a = realloc(t->conns, cap * sizeof *a);
        if (!a) {
            wio_mac_free(c->out_mac);
            wio_mac_free(c->in_mac);
            free(c->out_dir);
            free(c->in_dir);
            free(c->stage);
            free(c);
            return NULL;
        }
        t->conns = a;
        t->cap = cap;
    }
    t->conns[t->nconns++] = c;
    wio_poller_polled(t->poller, 1);
    return c;
}

static wio_stream *stream_for(file_tp *t, file_conn *c)
{
    wio_stream *s = wio_stream_new(t->ctx, &file_kind, -1, t->handler, t->hctx);
    if (!s)
        return NULL;
    s->pipe_state = c;
    c->s = s;
    snprintf(s->desc, sizeof s->desc, "file %u%s%u", (unsigned)t->self_id, "<->", (unsigned)c->peer_id);
    return s;
}

static int ignored(const file_tp *t, const char *name)
{
    for (size_t i = 0; i < t->nignored; i++)
        if (strcmp(t->ignored[i], name) == 0)
            return 1;
    return 0;
}

static void ignore(file_tp *t, const char *name, const char *why)
{
    wio_warn("file transport: ignoring %s/%s: %s", t->inbox, name, why);
    if (t->nignored >= 1024)
        return;
    char **a = realloc(t->ignored, (t->nignored + 1) * sizeof *a);
    if (!a)
        return;
    t->ignored = a;
    if ((a[t->nignored] = strdup(name)))
        t->nignored++;
}

static int known_stream(const file_tp *t, const char *path)
{
    for (size_t i = 0; i < t->nconns; i++)
        if (!t->conns[i]->dead && strcmp(t->conns[i]->in_dir, path) == 0)
            return 1;
    return 0;
}

/* A connector's stream appeared in our inbox: it becomes an accepted connection, in its
 * handshake (counted against the handshake cap) until it proves the key. */
static void accept_stream(file_tp *t, const char *name)
{
    unsigned id = 0;
    uint64_t nonce = 0;
    int used = 0;
    if (sscanf(name, "c%u-%16" SCNx64 "%n", &id, &nonce, &used) != 2 || (size_t)used != strlen(name) ||
        strlen(name) < 18) {
        if (name[0] != 'a' && name[0] != '.')
            ignore(t, name, "not a stream of this instance");
        return;
    }
    if (id >= t->nprocs || id == t->self_id) {
        ignore(t, name, "names a process that is not in this instance");
        return;
    }
    char path[WIO_FILE_PATH_MAX + 128];
    snprintf(path, sizeof path, "%s/%.64s", t->inbox, name);
    if (known_stream(t, path))
        return;
    file_conn *c = conn_new(t, id, nonce, 0);
    wio_stream *s = c ? stream_for(t, c) : NULL;
    if (!s) {
        wio_warn("file transport: out of memory accepting %s", name);
        return;
    }
    s->my_id = t->self_id;
    if (wio_stream_start_accept(s) != 0)
        wio_stream_fail(s, WAITIO_ERR_SYS, "cannot start the handshake", 0);
}

static void scan_inbox(file_tp *t)
{
    DIR *d = opendir(t->inbox);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] != 'c' || ignored(t, de->d_name)) {
            if (de->d_name[0] != '.' && de->d_name[0] != 'a' && !ignored(t, de->d_name))
                ignore(t, de->d_name, "not a stream of this instance");
            continue;
        }
        accept_stream(t, de->d_name);
    }
    closedir(d);
}

/* ------------------------------------------------------------------------------------ */
/* heartbeats                                                                           */

static void beat(file_tp *t)
{
    uint8_t b[BEAT_LEN];
    wio_put_le64(b, ++t->beat_counter);
    wio_put_le64(b + 8, t->host_id);
    wio_put_le64(b + 16, (uint64_t)getpid());
    if (wio_file_publish(t->hb_dir, t->hb_name, b, sizeof b, t->key, 0) != 0)
        wio_debug("file transport: heartbeat not written: %s", waitio_error_message());
}

/* Its heartbeat stood still for a few beats and it ran on this host under a pid that is gone.
 * (A process of another pid namespace keeps beating, so a pid that names nobody here never
 * condemns a live one.) */
static int gone_from_this_host(const file_tp *t, const uint8_t *rec, double still)
{
    if (still < 2.5 * t->beat_period || wio_get_le64(rec + 8) != t->host_id)
        return 0;
    uint64_t pid = wio_get_le64(rec + 16);
    return pid > 0 && pid < (1u << 31) && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* A peer whose heartbeat stood still for WAITIO_PEER_TIMEOUT is dead: its streams fail. */
static void check_peers(file_tp *t, double now)
{
    for (size_t i = 0; i < t->nconns; i++) {
        file_conn *c = t->conns[i];
        if (c->dead || c->s->state == WIO_SS_CLOSED)
            continue;
        peer_beat *pb = &t->beats[c->peer_id];
        int pbid, rank;
        pb_rank_of(t, c->peer_id, &pbid, &rank);
        char name[32];
        snprintf(name, sizeof name, "%d.%d", pbid, rank);
        uint8_t *data = NULL;
        size_t len = 0;
        const char *why;
        int gone = 0;
        if (wio_file_read_record(t->hb_dir, name, BEAT_LEN, t->key, &data, &len, &why) == 0 && len == BEAT_LEN) {
            uint64_t v = wio_get_le64(data);
            if (v != pb->counter || pb->changed_at == 0) {
                pb->counter = v;
                pb->changed_at = now;
            }
            gone = gone_from_this_host(t, data, now - pb->changed_at);
        } else if (pb->changed_at == 0) {
            pb->changed_at = now;
        }
        free(data);
        if (gone || now - pb->changed_at > t->cfg->peer_timeout) {
            /* what it published before it died (or finalized in a hurry) is read first, as a
             * socket's buffered data would be: its BYE may be in there */
            for (int k = 0; k < 1 << 20 && c->s->state != WIO_SS_CLOSED; k++) {
                uint64_t before = c->in_seq + c->in_off;
                wio_stream_read(c->s);
                if (c->s->state == WIO_SS_CLOSED || (c->in_seq + c->in_off == before && !c->in_open))
                    break;
            }
            if (c->s->state == WIO_SS_CLOSED)
                continue;
            char msg[128];
            snprintf(msg, sizeof msg, gone ? "process %u has exited (its heartbeat stopped %.1f s ago)"
                                           : "no heartbeat from process %u for %.0f s",
                     (unsigned)c->peer_id, now - pb->changed_at);
            wio_stream_fail(c->s, WAITIO_ERR_PEER, msg, 0);
        }
    }
}

/* ------------------------------------------------------------------------------------ */
/* polling                                                                              */

/* Reads what was published and writes what waited for budget, on every stream. */
static int poll_streams(file_tp *t)
{
    int busy = 0;
    for (size_t i = 0; i < t->nconns; i++) {
        file_conn *c = t->conns[i];
        wio_stream *s = c->s;
        if (c->dead || !s || s->state == WIO_SS_CLOSED)
            continue;
        uint64_t before = c->in_seq + c->in_off;
        wio_stream_read(s);
        busy += s->state != WIO_SS_CLOSED && c->in_seq + c->in_off != before;
        if (s->state != WIO_SS_CLOSED && s->want_out) {
            reclaim_consumed(c);
            if (out_room(c) > 0) {
                busy++;
                wio_stream_writable(s);
            }
        }
    }
    return busy;
}

static int file_poll(void *arg)
{
    file_tp *t = arg;
    if (!t->kick && ++t->poll_skip < t->poll_interval)
        return 0;
    t->poll_skip = 0;
    t->kick = 0;
    int busy = poll_streams(t);
    if (busy)
        t->poll_interval = 1;
    else if (t->poll_interval < POLL_BACKOFF_MAX)
        t->poll_interval *= 2;
    return busy;
}

/* Blocking is bounded by the polling interval: shared file systems may never wake us. */
static int file_prepare_sleep(void *arg, int *timeout_ms)
{
    file_tp *t = arg;
    int ms = (int)(t->cfg->file_poll_max * 1000);
    if (ms < 1)
        ms = 1;
    if (*timeout_ms < 0 || *timeout_ms > ms)
        *timeout_ms = ms;
    for (size_t i = 0; i < t->nconns; i++) /* a segment half served: no sleeping */
        if (!t->conns[i]->dead && t->conns[i]->in_open)
            return 1;
    return 0;
}

static void file_end_sleep(void *arg) { ((file_tp *)arg)->kick = 1; }

static void watch_streams(file_tp *t);

static void file_tick(void *arg, double now)
{
    file_tp *t = arg;
    t->kick = 1;
    if (!t->started)
        return;
    if (now >= t->next_scan) {
        t->next_scan = now + SCAN_PERIOD;
        scan_inbox(t);
        watch_streams(t);
    }
    if (now >= t->next_beat) {
        t->next_beat = now + t->beat_period;
        beat(t);
        check_peers(t, now);
    }
}

/* Stream directories that exist now are watched, so a published segment wakes the reader. */
static void watch_streams(file_tp *t)
{
    if (t->inotify_fd < 0)
        return;
    for (size_t i = 0; i < t->nconns; i++) {
        file_conn *c = t->conns[i];
        if (!c->dead && !c->watched && inotify_add_watch(t->inotify_fd, c->in_dir, IN_MOVED_TO) >= 0)
            c->watched = 1;
    }
}

static void inotify_ready(wio_poll_fd *pf, uint32_t events)
{
    (void)events;
    file_tp *t = pf->arg;
    char buf[4096] __attribute__((aligned(8)));
    int dirs = 0;
    for (;;) {
        ssize_t n = read(t->inotify_fd, buf, sizeof buf);
        if (n <= 0)
            break;
        for (char *p = buf; p < buf + n;) {
            const struct inotify_event *ev = (const struct inotify_event *)p;
            dirs |= (ev->mask & IN_ISDIR) != 0;
            p += sizeof *ev + ev->len;
        }
    }
    t->kick = 1;
    t->poll_interval = 1;
    if (dirs && t->started)
        scan_inbox(t); /* a new stream: a connection, or the reply to ours */
    watch_streams(t);
}

/* ------------------------------------------------------------------------------------ */
/* the transport's row                                                                  */

static void file_close(void *tp);

static int file_open(const wio_tp_params *p, void **out, wio_proc *self)
{
    file_tp *t = calloc(1, sizeof *t);
    if (!t)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory creating the file transport");
    t->poller = p->poller;
    t->handler = p->handler;
    t->hctx = p->ctx;
    t->cfg = p->cfg;
    t->inotify_fd = -1;
    t->poll_interval = 1;
    t->host_id = self->host_id;
    wio_list_init(&t->src.link);
    wio_file_key(p->key, t->key);
    int rc = wio_file_instance_dir(p->cfg, p->key, t->dir, sizeof t->dir);
    if (rc) {
        free(t);
        return rc;
    }
    snprintf(t->inbox, sizeof t->inbox, "%s/in-%d.%d", t->dir, p->cfg->pbid, p->cfg->local_rank);
    snprintf(t->hb_dir, sizeof t->hb_dir, "%s/hb", t->dir);
    snprintf(t->hb_name, sizeof t->hb_name, "%d.%d", p->cfg->pbid, p->cfg->local_rank);
    /* what a crashed run of ours left: our inbox and heartbeat (peers sweep theirs) */
    wio_file_rm_tree(t->inbox);
    char hb[WIO_FILE_PATH_MAX + 80];
    snprintf(hb, sizeof hb, "%s/%s", t->hb_dir, t->hb_name);
    unlink(hb);
    if ((rc = wio_file_mkdir_private(t->inbox)) || (rc = wio_file_mkdir_private(t->hb_dir))) {
        free(t);
        return rc;
    }
    wio_stream_params sp = {
        .key = p->key, .poller = p->poller, .eager_limit = p->eager_limit,
        .connect_timeout = p->cfg->connect_timeout, .handshake_timeout = p->cfg->handshake_timeout,
        .max_handshakes = p->cfg->max_handshakes, .max_conns = wio_config_max_conns(p->cfg), .owner = t,
    };
    if ((rc = wio_stream_ctx_create(&t->ctx, &sp))) {
        free(t);
        return rc;
    }
    t->src.arg = t;
    t->src.poll = file_poll;
    t->src.prepare_sleep = file_prepare_sleep;
    t->src.end_sleep = file_end_sleep;
    t->src.tick = file_tick;
    wio_poller_add_source(p->poller, &t->src);
    t->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (t->inotify_fd >= 0) {
        t->ipf.ready = inotify_ready;
        t->ipf.arg = t;
        if (inotify_add_watch(t->inotify_fd, t->inbox, IN_CREATE | IN_MOVED_TO) < 0 ||
            wio_poller_add(p->poller, &t->ipf, t->inotify_fd, EPOLLIN) != 0) {
            close(t->inotify_fd);
            t->inotify_fd = -1; /* polling alone still works */
        }
    }
    self->transports |= WIO_TP_FILE;
    *out = t;
    return 0;
}

static int file_start(void *tp, const wio_tp_instance *inst)
{
    file_tp *t = tp;
    t->self_id = inst->self_id;
    t->nprocs = inst->nprocs;
    t->npb = inst->npb;
    t->pb_offset = inst->pb_offset;
    t->table = inst->table;
    t->beats = calloc(inst->nprocs, sizeof *t->beats);
    if (!t->beats)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    wio_stream_ctx_set_self(t->ctx, inst->self_id, inst->eager_credit);
    t->beat_period = t->cfg->peer_timeout / 6;
    if (t->beat_period < 0.2)
        t->beat_period = 0.2;
    if (t->beat_period > 1)
        t->beat_period = 1;
    beat(t);
    t->started = 1;
    scan_inbox(t);
    return 0;
}

/* Every process that offers files shares our directory: that is what file mode assumes. */
static int file_reachable(void *tp, uint32_t peer_id)
{
    const file_tp *t = tp;
    return peer_id < t->nprocs && peer_id != t->self_id && (t->table[peer_id].transports & WIO_TP_FILE);
}

static int file_connect(void *tp, uint32_t peer_id, unsigned flags, void *user, void **conn)
{
    file_tp *t = tp;
    uint64_t nonce;
    if (wio_random_bytes((uint8_t *)&nonce, sizeof nonce) != 0)
        return WAITIO_ERR_SYS;
    file_conn *c = conn_new(t, peer_id, nonce, 1);
    wio_stream *s = c ? stream_for(t, c) : NULL;
    if (!s)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    if (mkdir(c->out_dir, 0700) != 0) {
        int e = errno;
        char why[200];
        snprintf(why, sizeof why, "cannot create its stream in %.80s: %s (does the peer share the directory?)",
                 t->dir, strerror(e));
        wio_stream_start_connect(s, t->self_id, peer_id, flags, user, 0);
        *conn = s;
        wio_stream_fail_soon(s, why);
        return 0;
    }
    c->out_dir_made = 1;
    if (wio_stream_start_connect(s, t->self_id, peer_id, flags, user, 1) != 0) {
        wio_stream_close(s, WAITIO_ERR_SYS);
        return wio_fail(WAITIO_ERR_SYS, "cannot start a file connection");
    }
    *conn = s;
    return 0;
}

static void file_send(void *conn, wio_send_item *it) { wio_stream_send(conn, it); }
static int file_send_now(void *conn, wio_frame_hdr *h, const void *payload)
{
    return wio_stream_send_now(conn, h, payload);
}

/* Idle means nothing queued and nothing published that the reader has not consumed: what a
 * finalizing process must wait for before it says BYE on another connection (hybrid). */
static int file_conn_idle(const void *conn)
{
    const wio_stream *s = conn;
    file_conn *c = s->pipe_state;
    if (!wio_stream_idle(s))
        return 0;
    if (!c || c->pub_count == 0)
        return 1;
    reclaim_consumed(c);
    return c->pub_count == 0;
}

static void file_conn_shutdown(void *conn) { wio_stream_shutdown(conn); }
static void file_conn_close(void *conn, int err) { wio_stream_close(conn, err); }
static void file_conn_abandon(void *conn) { wio_stream_abandon(conn); }
static const char *file_conn_desc(const void *conn) { return ((const wio_stream *)conn)->desc; }

static void file_stats(void *tp, char *buf, size_t cap)
{
    const file_tp *t = tp;
    snprintf(buf, cap, "file: %" PRIu64 " segments (%" PRIu64 " bytes) written, %" PRIu64 " (%" PRIu64
             " bytes) read", t->segments_out, t->bytes_out, t->segments_in, t->bytes_in);
}

static void file_close(void *tp)
{
    file_tp *t = tp;
    if (!t)
        return;
    wio_stream_ctx_destroy(t->ctx);
    wio_poller_del_source(t->poller, &t->src);
    if (t->inotify_fd >= 0) {
        wio_poller_del(t->poller, &t->ipf);
        close(t->inotify_fd);
    }
    char hb[WIO_FILE_PATH_MAX + 80];
    snprintf(hb, sizeof hb, "%s/%s", t->hb_dir, t->hb_name);
    unlink(hb);
    wio_file_rm_tree(t->inbox);
    (void)rmdir(t->hb_dir); /* the last process out leaves only the start-up records */
    for (size_t i = 0; i < t->nignored; i++)
        free(t->ignored[i]);
    free(t->ignored);
    free(t->conns);
    free(t->beats);
    free(t);
}

const wio_transport_ops wio_transport_file = {
    .name = "file",
    .bit = WIO_TP_FILE,
    .open = file_open,
    .start = file_start,
    .reachable = file_reachable,
    .connect = file_connect,
    .send = file_send,
    .send_now = file_send_now,
    .conn_idle = file_conn_idle,
    .conn_shutdown = file_conn_shutdown,
    .conn_close = file_conn_close,
    .conn_abandon = file_conn_abandon,
    .conn_desc = file_conn_desc,
    .stats = file_stats,
    .close = file_close,
};
