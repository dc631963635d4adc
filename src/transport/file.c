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
 * without the key is rejected with a logged reason, never parsed as data; a stream directory that
 * appears in the inbox starts its handshake only under WAITIO_MAX_HANDSHAKES, as a TCP accept.
 *
 * Every file is reached relative to descriptors opened once (the instance directory, the inbox,
 * the heartbeats) — a stream's directory below them, one checked component at a time, held only
 * while used so that an idle connection costs no descriptor — never through a path rebuilt from
 * strings: another
 * user who renames the instance directory away and puts a tree of links in its place reaches
 * nothing (file_dir.h). A segment is opened non-blocking without following links, must be a
 * regular file, is read once into memory (no larger than the file), MAC-checked and parsed from
 * that one copy; its MAC binds the stream's direction, writer and reader.
 *
 * The reader waits for new segments with inotify where the file system delivers it, and polls
 * with backoff otherwise (shared parallel file systems rarely deliver inotify across nodes):
 * never more than WAITIO_FILE_POLL_MS apart while blocked. A peer that dies is noticed by its
 * heartbeat file standing still for WAITIO_PEER_TIMEOUT seconds. A process removes what a
 * crashed run with the same instance directory left in its inbox when it starts.
 */
#define WIO_LOG_SUBSYS WIO_SUB_FILE /* this file logs as "file" (WAITIO_LOG=file=LEVEL) */
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
#define POLL_BACKOFF_MAX 4096        /* progress calls between looks at quiet streams */
#define SCAN_PERIOD 0.05             /* seconds between looks at the inbox for new connections */

typedef struct file_tp file_tp;

typedef struct file_conn {
    file_tp *tp;
    wio_stream *s;
    uint32_t peer_id;
    uint64_t nonce;
    int dead;
    /* writing: segments into out_name in the peer's inbox (in-<pb>.<rank>) */
    char out_inbox[32], out_name[48];
    int out_made;                    /* the stream's directory was made */
    int out_dfd;                     /* it, open while a segment is written or looked for */
    uint8_t out_bind[WIO_SEG_BIND_SIZE];
    uint64_t out_seq;
    int out_fd;                      /* the segment being written (a temporary file), or -1 */
    char out_tmp[16];
    size_t out_len;                  /* its payload bytes so far */
    wio_mac *out_mac;
    uint8_t *stage;
    size_t stage_len;
    uint64_t *pub_seq;               /* published segments not yet deleted by the reader */
    size_t *pub_len;
    size_t pub_head, pub_count, pub_cap;
    uint64_t unconsumed;             /* their bytes */
    int fin_sent;
    /* reading: segments from in_name in our inbox */
    char in_name[48];
    char *in_dir;                    /* its path, for messages */
    uint8_t in_bind[WIO_SEG_BIND_SIZE];
    uint64_t in_seq;
    uint64_t in_len, in_off;         /* the current segment's payload, bytes served */
    uint8_t *in_buf;                 /* its payload: read once, MAC-checked, served from here */
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
    char dir[WIO_FILE_PATH_MAX];     /* the instance directory's path: messages only */
    char inbox[WIO_FILE_PATH_MAX + 32];
    char inbox_name[32], hb_name[32];
    int dir_fd, inbox_fd, hb_fd;     /* opened once; every file is reached relative to them */
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

static void inbox_name(const file_tp *t, uint32_t reader, char out[32])
{
    int pb, rank;
    pb_rank_of(t, reader, &pb, &rank);
    snprintf(out, 32, "in-%d.%d", pb, rank);
}

static void stream_name(char kind, uint32_t writer, uint64_t nonce, char out[48])
{
    snprintf(out, 48, "%c%u-%016" PRIx64, kind, (unsigned)writer, nonce);
}

void wio_file_seg_bind(char dir, uint32_t writer, uint32_t reader, uint8_t out[WIO_SEG_BIND_SIZE])
{
    memset(out, 0, WIO_SEG_BIND_SIZE);
    out[0] = (uint8_t)dir;
    wio_put_le32(out + 4, writer);
    wio_put_le32(out + 8, reader);
}

static void seg_name(uint64_t seq, char out[17]) { snprintf(out, 17, "%016" PRIx64, seq); }

/* ------------------------------------------------------------------------------------ */
/* writing segments                                                                     */

/* The stream's directory in the reader's inbox (made the first time), reached from the
 * instance directory's descriptor one checked component at a time and held only while it is
 * used: a connection costs no descriptor while it idles, as before. 0 open, 1 gone (the reader
 * finalized or died, or removed the stream), -1 refused or failed (errno). */
static int out_dir_open(file_conn *c)
{
    if (c->out_dfd >= 0)
        return 0;
    int ifd;
    int rc = wio_file_subdir_at(c->tp->dir_fd, c->out_inbox, 0, &ifd);
    if (rc != 0)
        return rc > 0 ? (errno = ENOENT, 1) : -1;
    rc = wio_file_subdir_at(ifd, c->out_name, !c->out_made, &c->out_dfd);
    int e = errno;
    close(ifd);
    errno = e;
    if (rc == 0)
        c->out_made = 1;
    return rc > 0 ? (errno = ENOENT, 1) : rc;
}

static void out_dir_close(file_conn *c)
{
    if (c->out_dfd >= 0)
        close(c->out_dfd);
    c->out_dfd = -1;
}

static int out_begin(file_conn *c)
{
    if (out_dir_open(c) != 0)
        return -1;
    if (!c->stage && !(c->stage = malloc(STAGE_SIZE))) { /* not before the first write: a
                                                             stream in its handshake costs little */
        out_dir_close(c);
        return -1;
    }
    c->out_fd = wio_file_create_tmp(c->out_dfd, ".t-", c->out_tmp, sizeof c->out_tmp);
    if (c->out_fd < 0) {
        out_dir_close(c);
        return -1;
    }
    static const uint8_t zeros[WIO_SEG_HDR_SIZE];
    if (wio_file_write_all(c->out_fd, zeros, sizeof zeros) != 0 || wio_mac_restart(c->out_mac) != 0) {
        close(c->out_fd);
        unlinkat(c->out_dfd, c->out_tmp, 0);
        c->out_fd = -1;
        out_dir_close(c);
        return -1;
    }
    wio_mac_update(c->out_mac, c->out_bind, sizeof c->out_bind);
    c->out_len = 0;
    c->stage_len = 0;
    return 0;
}

static int stage_flush(file_conn *c)
{
    if (c->stage_len && wio_file_write_all(c->out_fd, c->stage, c->stage_len) != 0)
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
             wio_file_write_all(c->out_fd, mac, sizeof mac) == 0 &&
             pwrite(c->out_fd, hdr, sizeof hdr, 0) == (ssize_t)sizeof hdr &&
             (!c->tp->cfg->file_fsync || fsync(c->out_fd) == 0);
    ok = close(c->out_fd) == 0 && ok;
    c->out_fd = -1;
    char name[17];
    seg_name(c->out_seq, name);
    ok = ok && renameat(c->out_dfd, c->out_tmp, c->out_dfd, name) == 0;
    if (!ok)
        unlinkat(c->out_dfd, c->out_tmp, 0);
    out_dir_close(c);
    if (!ok)
        return -1;
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
    if (!c->pub_count)
        return;
    char name[17];
    struct stat st;
    int held = c->out_dfd >= 0;
    int rc = out_dir_open(c); /* gone (1): the reader removed the stream, everything is consumed */
    while (rc >= 0 && c->pub_count) {
        seg_name(c->pub_seq[c->pub_head], name);
        if (rc == 0 && (fstatat(c->out_dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT))
            break;
        c->unconsumed -= c->pub_len[c->pub_head];
        c->pub_head = (c->pub_head + 1) % c->pub_cap;
        c->pub_count--;
    }
    if (!held)
        out_dir_close(c);
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
    if (c->fin_sent || !c->out_made)
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
        unlinkat(c->out_dfd, c->out_tmp, 0);
        c->out_fd = -1;
        c->out_len = 0;
        out_dir_close(c);
    }
    send_fin(c);
    wio_file_rm_tree_at(c->tp->inbox_fd, c->in_name); /* never follows a link */
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

int wio_file_seg_verify(int fd, uint64_t nonce, uint64_t seq, const uint8_t bind[WIO_SEG_BIND_SIZE],
                        wio_mac *m, uint8_t **payload, wio_seg_hdr *h, const char **why)
{
    uint8_t hdr[WIO_SEG_HDR_SIZE], want[WIO_SEG_MAC_SIZE];
    struct stat st;
    *payload = NULL;
    *why = NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        *why = "not a regular file";
    else if (wio_file_read_full(fd, hdr, sizeof hdr, 0) != 0)
        *why = "truncated header";
    else if (wio_seg_decode(hdr, SEG_MAX, h, why) != 0)
        ;
    else if (h->stream != nonce || h->seq != seq)
        *why = "belongs to another stream or position (replayed?)";
    else if ((uint64_t)st.st_size != WIO_SEG_HDR_SIZE + h->len + WIO_SEG_MAC_SIZE)
        *why = "its size does not match its header (torn or truncated)";
    if (*why)
        return -1;
    /* Read once, payload and MAC together, into a buffer no larger than the file (whose size
     * was just checked against the header's bound); the MAC is checked over this copy and the
     * parser gets this copy, so a file rewritten in between changes nothing that is used. */
    uint8_t *buf = malloc(h->len + WIO_SEG_MAC_SIZE);
    if (!buf) {
        *why = "out of memory";
        return -1;
    }
    int bad = wio_file_read_full(fd, buf, h->len + WIO_SEG_MAC_SIZE, WIO_SEG_HDR_SIZE) != 0;
    if (bad) {
        *why = "short read (truncated while read?)";
    } else {
        bad = wio_mac_restart(m) != 0;
        wio_mac_update(m, bind, WIO_SEG_BIND_SIZE);
        wio_mac_update(m, buf, h->len);
        wio_mac_update(m, hdr, sizeof hdr);
        bad = bad || wio_mac_final(m, want) != 0 || !wio_auth_proof_equal(buf + h->len, want);
        if (bad)
            *why = "its MAC does not match (written without the instance key, for the other "
                   "direction, or damaged)";
    }
    if (bad) {
        free(buf);
        return -1;
    }
    *payload = buf;
    return 0;
}

/* Opens and verifies the next segment: 1 ready, 0 not there yet, -1 invalid (errno EPROTO). */
static int seg_open_next(file_conn *c)
{
    char rel[80];
    snprintf(rel, sizeof rel, "%s/%016" PRIx64, c->in_name, c->in_seq);
    int fd;
    uint64_t size;
    wio_seg_hdr h;
    uint8_t *buf;
    const char *why;
    /* below our inbox's descriptor, no link followed at either level */
    int rc = wio_file_open_regular(c->tp->inbox_fd, rel, &fd, &size, &why);
    if (rc != 0)
        return rc > 0 ? 0 : seg_invalid(c, why);
    rc = wio_file_seg_verify(fd, c->nonce, c->in_seq, c->in_bind, c->in_mac, &buf, &h, &why);
    close(fd);
    if (rc != 0)
        return seg_invalid(c, why);
    c->in_buf = buf;
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
    char name[17];
    seg_name(c->in_seq, name);
    int dfd;
    if (wio_file_subdir_at(c->tp->inbox_fd, c->in_name, 0, &dfd) == 0) {
        (void)unlinkat(dfd, name, 0);
        close(dfd);
    }
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
            memcpy(buf, c->in_buf + c->in_off, k);
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

static void conn_destroy(file_conn *c)
{
    out_dir_close(c);
    wio_mac_free(c->out_mac);
    wio_mac_free(c->in_mac);
    free(c->stage);
    free(c->in_dir);
    free(c->in_buf);
    free(c->pub_seq);
    free(c->pub_len);
    free(c);
}

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
    conn_destroy(c);
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
    c->out_fd = c->out_dfd = -1;
    /* the connector writes c<me> into the acceptor's inbox and reads a<peer> in its own; each
     * direction's MACs bind it, so neither stream's segments are valid in the other */
    char out_kind = initiator ? 'c' : 'a', in_kind = initiator ? 'a' : 'c';
    inbox_name(t, peer_id, c->out_inbox);
    stream_name(out_kind, t->self_id, nonce, c->out_name);
    stream_name(in_kind, peer_id, nonce, c->in_name);
    wio_file_seg_bind(out_kind, t->self_id, peer_id, c->out_bind);
    wio_file_seg_bind(in_kind, peer_id, t->self_id, c->in_bind);
    size_t n = strlen(t->inbox) + strlen(c->in_name) + 2;
    if ((c->in_dir = malloc(n)))
        snprintf(c->in_dir, n, "%s/%s", t->inbox, c->in_name);
    if (!c->in_dir || wio_mac_new(&c->out_mac, t->key) != 0 || wio_mac_new(&c->in_mac, t->key) != 0) {
        conn_destroy(c);
        return NULL;
    }
    if (t->nconns == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 16;
        file_conn **a = realloc(t->conns, cap * sizeof *a);
        if (!a) {
            conn_destroy(c);
            return NULL;
        }
        t->conns = a;
        t->cap = cap;
    }
    t->conns[t->nconns++] = c;
    wio_poller_polled(t->poller, 1);
    return c;
}

/* A connection that never got its stream. */
static void conn_drop(file_tp *t, file_conn *c)
{
    for (size_t i = 0; i < t->nconns; i++)
        if (t->conns[i] == c) {
            t->conns[i] = t->conns[--t->nconns];
            break;
        }
    wio_poller_polled(t->poller, -1);
    conn_destroy(c);
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

static int known_stream(const file_tp *t, const char *name)
{
    for (size_t i = 0; i < t->nconns; i++)
        if (!t->conns[i]->dead && strcmp(t->conns[i]->in_name, name) == 0)
            return 1;
    return 0;
}

/* A connector's stream appeared in our inbox: it becomes an accepted connection, in its
 * handshake until it proves the key, and counted against the handshake cap as a TCP accept is:
 * while the cap is reached (and no handshake has idled long enough to be dropped for it) the
 * directory waits in the inbox for a later scan. Returns 0 when the scan should stop there. */
static int accept_stream(file_tp *t, const char *name)
{
    unsigned id = 0;
    uint64_t nonce = 0;
    int used = 0;
    char canon[48];
    if (sscanf(name, "c%u-%16" SCNx64 "%n", &id, &nonce, &used) != 2 || (size_t)used != strlen(name) ||
        (stream_name('c', id, nonce, canon), strcmp(canon, name) != 0)) {
        ignore(t, name, "not a stream of this instance");
        return 1;
    }
    if (id >= t->nprocs || id == t->self_id) {
        ignore(t, name, "names a process that is not in this instance");
        return 1;
    }
    if (known_stream(t, name))
        return 1;
    struct stat st;
    if (fstatat(t->inbox_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return 1;
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
        ignore(t, name, "not a directory of this user (a link or a file?)");
        return 1;
    }
    if (!wio_stream_ctx_hs_room(t->ctx))
        return 0;
    file_conn *c = conn_new(t, id, nonce, 0);
    wio_stream *s = c ? stream_for(t, c) : NULL;
    if (!s) {
        if (c)
            conn_drop(t, c);
        wio_warn("file transport: out of memory accepting %s", name);
        return 0;
    }
    s->my_id = t->self_id;
    if (wio_stream_start_accept(s) != 0)
        wio_stream_fail(s, WAITIO_ERR_SYS, "cannot start the handshake", 0);
    else
        wio_debug("file transport: accepted %s (%zu connections open or in their handshake)", name,
                  wio_stream_ctx_count(t->ctx));
    return 1;
}

static void scan_inbox(file_tp *t)
{
    int fd = openat(t->inbox_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC); /* its own offset */
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.' || de->d_name[0] == 'a' || ignored(t, de->d_name))
            continue;
        if (!accept_stream(t, de->d_name))
            break;
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
    if (wio_file_publish_at(t->hb_fd, t->hb_name, b, sizeof b, t->key, 0) != 0)
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
        if (wio_file_read_record_at(t->hb_fd, name, BEAT_LEN, t->key, &data, &len, &why) == 0 && len == BEAT_LEN) {
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
    char proc[64];
    for (size_t i = 0; i < t->nconns; i++) {
        file_conn *c = t->conns[i];
        int dfd;
        if (c->dead || c->watched || wio_file_subdir_at(t->inbox_fd, c->in_name, 0, &dfd) != 0)
            continue;
        /* the directory just opened below our inbox, not a path that may name another one */
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", dfd);
        if (inotify_add_watch(t->inotify_fd, proc, IN_MOVED_TO) >= 0)
            c->watched = 1;
        close(dfd);
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

static void close_dirs(file_tp *t)
{
    if (t->hb_fd >= 0)
        close(t->hb_fd);
    if (t->inbox_fd >= 0)
        close(t->inbox_fd);
    if (t->dir_fd >= 0)
        close(t->dir_fd);
    t->hb_fd = t->inbox_fd = t->dir_fd = -1;
}

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
    t->dir_fd = t->inbox_fd = t->hb_fd = -1;
    wio_file_key(p->key, t->key);
    int rc = wio_file_instance_open(p->cfg, p->key, t->dir, sizeof t->dir, &t->dir_fd);
    snprintf(t->inbox_name, sizeof t->inbox_name, "in-%d.%d", p->cfg->pbid, p->cfg->local_rank);
    snprintf(t->inbox, sizeof t->inbox, "%s/%s", t->dir, t->inbox_name);
    snprintf(t->hb_name, sizeof t->hb_name, "%d.%d", p->cfg->pbid, p->cfg->local_rank);
    if (!rc) {
        /* what a crashed run of ours left: our inbox and heartbeat (peers sweep theirs) */
        wio_file_rm_tree_at(t->dir_fd, t->inbox_name);
        if (wio_file_subdir_at(t->dir_fd, t->inbox_name, 1, &t->inbox_fd) != 0 ||
            wio_file_subdir_at(t->dir_fd, "hb", 1, &t->hb_fd) != 0)
            rc = wio_fail(WAITIO_ERR_ENV, "cannot make %s and %s/hb private directories of this user: %s",
                          t->inbox, t->dir, strerror(errno));
        else
            (void)unlinkat(t->hb_fd, t->hb_name, 0);
    }
    if (rc) {
        close_dirs(t);
        free(t);
        return rc;
    }
    wio_stream_params sp = {
        .key = p->key, .poller = p->poller, .eager_limit = p->eager_limit,
        .connect_timeout = p->cfg->connect_timeout, .handshake_timeout = p->cfg->handshake_timeout,
        .max_handshakes = p->cfg->max_handshakes, .max_conns = wio_config_max_conns(p->cfg), .owner = t,
    };
    if ((rc = wio_stream_ctx_create(&t->ctx, &sp))) {
        close_dirs(t);
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
        char proc[64];
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", t->inbox_fd);
        if (inotify_add_watch(t->inotify_fd, proc, IN_CREATE | IN_MOVED_TO) < 0 ||
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
    if (!s) {
        if (c)
            conn_drop(t, c);
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    }
    if (out_dir_open(c) != 0) {
        int e = errno;
        char why[200];
        snprintf(why, sizeof why, "cannot create its stream in %.80s: %s (does the peer share the directory?)",
                 t->dir, strerror(e));
        wio_stream_start_connect(s, t->self_id, peer_id, flags, user, 0);
        *conn = s;
        wio_stream_fail_soon(s, why);
        return 0;
    }
    out_dir_close(c); /* made; opened again for each segment */
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
    /* relative to the directories opened at the start, whatever their names lead to now */
    (void)unlinkat(t->hb_fd, t->hb_name, 0);
    wio_file_rm_tree_at(t->dir_fd, t->inbox_name);
    (void)unlinkat(t->dir_fd, "hb", AT_REMOVEDIR); /* the last process out leaves only the start-up records */
    close_dirs(t);
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
