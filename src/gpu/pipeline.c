/*
 * pipeline.c — pipelined staging of device messages across a link that carries DATA frames
 * (pipeline.h). Why: staging a whole message first costs the copy time plus the wire time; cut
 * into chunks, the copy of chunk k+1 runs on a stream while chunk k is on the wire, and the
 * receiver's copy of chunk k to the device while chunk k+1 arrives, so a large message costs
 * about the slower of the two plus one chunk.
 *
 * Sender: the staging buffer holds the whole message (the pinned pool's buffer, gpu.h), so a
 * chunk's bytes sit at their message offset and the request's one DATA item sends any prefix of
 * it: the item's `total` is the part copied so far, and each time the transport has written it
 * all (the item's done callback) it is handed back with `total` moved on. Chunk i is copied on
 * stream i % depth, and at most `depth` copies are in flight, so a stream being idle means the
 * oldest chunk in flight is done. Nothing here waits for a copy: where the next chunk is not
 * copied yet, or where handing the item back would run inside the transport's write of the
 * previous hand-off (a recursion as deep as the message has chunks), the pipe is parked on a
 * list that the engine's progress polls (wio_gpu_pipe_poll); while a pipe is parked the engine
 * does not block for longer than a millisecond, since no descriptor wakes it for a copy.
 * Receiver: whole chunks that have arrived are copied to the device on one stream, in order;
 * the tail is copied at completion.
 */
#define WIO_LOG_SUBSYS WIO_SUB_GPU
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "core/common.h"
#include "core/settings.h"
#include "gpu/gpu.h"
#include "gpu/pipeline.h"

#define PIPE_MAX_DEPTH 16

struct wio_gpu_pipe {
    uint8_t *dev;        /* sender: the device message; receiver: the user's device buffer */
    uint8_t *host;       /* the staging buffer: byte i of the message at host[i] */
    size_t len, chunk;
    int depth;           /* streams (sender: copies in flight at most; receiver: 1) */
    wio_gpu_stream *streams[PIPE_MAX_DEPTH];
    size_t nchunks;      /* sender: chunks of the message */
    size_t queued;       /* sender: chunks whose copies are queued */
    size_t ready;        /* sender: chunks known copied (a prefix) */
    size_t on_device;    /* receiver: bytes whose copies to the device are queued */
    int err;             /* a copy failed (WAITIO_ERR_DEVICE, message set) */
    wio_engine *e;       /* sender, once its DATA goes: where the item is handed */
    wio_peer *p;
    int bulk;
    wio_req_impl *req;   /* sender: the send, while the pipe is parked */
    wio_list parked;     /* sender: on the parked list (waiting for a copy or a hand-off) */
};

/* Sender pipes whose item waits to be handed back (engine progress: wio_gpu_pipe_poll). */
static wio_list parked_pipes = {&parked_pipes, &parked_pipes};
int wio_gpu_pipes_parked;
static int handing_out; /* inside a hand-off: a nested done callback parks instead */

/* ---- settings and counters ---- */
static pthread_once_t settings_once = PTHREAD_ONCE_INIT;
static size_t set_chunk = 1u << 20;
static int set_depth = 4;

static void read_settings(void)
{
    const char *v = wio_setting_str("WAITIO_GPU_PIPELINE_CHUNK", NULL);
    size_t chunk = 1u << 20;
    if (v && *v && wio_parse_size(v, &chunk) == 0 && chunk >= 4096)
        set_chunk = chunk;
    int depth = (int)wio_setting_num("WAITIO_GPU_PIPELINE_DEPTH", 4);
    set_depth = depth < 0 ? 0 : depth > PIPE_MAX_DEPTH ? PIPE_MAX_DEPTH : depth;
}

/* what the test of the overlap (tests/gpu/ci_pipe.sh) reads in the finalize log line */
static atomic_ullong n_sent_msgs, n_sent_chunks, n_sent_overlapped, n_recv_msgs, n_recv_early;

void wio_gpu_pipe_report(void)
{
    if (!atomic_load(&n_sent_msgs) && !atomic_load(&n_recv_msgs))
        return;
    wio_debug("finalize: pipelined staging: %llu message(s) sent in %llu chunk(s), %llu of them handed to "
              "the wire while a later chunk's copy was running; %llu message(s) received, %llu chunk(s) "
              "copied to the device while later ones arrived",
              atomic_load(&n_sent_msgs), atomic_load(&n_sent_chunks), atomic_load(&n_sent_overlapped),
              atomic_load(&n_recv_msgs), atomic_load(&n_recv_early));
}

int wio_gpu_pipe_wanted(size_t len)
{
    pthread_once(&settings_once, read_settings);
    return set_depth > 0 && len > set_chunk && wio_gpu_available();
}

/* ---- the pipeline object ---- */

void wio_gpu_pipe_destroy(wio_gpu_pipe *x)
{
    if (!x)
        return;
    if (wio_list_linked(&x->parked)) { /* a send dropped at finalize while parked */
        wio_list_remove(&x->parked);
        wio_gpu_pipes_parked--;
    }
    for (int i = 0; i < x->depth; i++) {
        if (!x->streams[i])
            continue;
        /* the staging buffer goes back to the pool after this: no copy may still touch it */
        if (wio_gpu_stream_sync(x->streams[i]) != 0) {
            wio_warn("a pipelined copy failed at the end: %s", waitio_error_message());
            wio_gpu_stream_destroy(x->streams[i]);
        } else {
            wio_gpu_stream_put(x->streams[i]);
        }
    }
    free(x);
}

static int pipe_new(uint8_t *dev, uint8_t *host, size_t len, int nstreams, wio_gpu_pipe **out)
{
    *out = NULL;
    wio_gpu_pipe *x = calloc(1, sizeof *x);
    if (!x)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory for a device message's pipeline");
    pthread_once(&settings_once, read_settings);
    x->dev = dev;
    x->host = host;
    x->len = len;
    x->chunk = set_chunk;
    x->nchunks = (len + set_chunk - 1) / set_chunk;
    x->depth = nstreams;
    wio_list_init(&x->parked);
    for (int i = 0; i < nstreams; i++) {
        int rc = wio_gpu_stream_get(&x->streams[i]);
        if (rc) {
            wio_gpu_pipe_destroy(x);
            return rc;
        }
    }
    *out = x;
    return 0;
}

void wio_gpu_pipe_free(wio_req_impl *r)
{
    wio_gpu_pipe_destroy(r->gpu_pipe);
    r->gpu_pipe = NULL;
}

/* ---- sender ---- */

static size_t chunk_end(const wio_gpu_pipe *x, size_t i)
{
    size_t end = (i + 1) * x->chunk;
    return end > x->len ? x->len : end;
}

/* Queues device → host copies while fewer than depth are in flight. */
static int queue_copies(wio_gpu_pipe *x)
{
    while (x->queued < x->nchunks && x->queued - x->ready < (size_t)x->depth) {
        size_t i = x->queued, off = i * x->chunk;
        int rc = wio_gpu_copy_async(x->host + off, x->dev + off, chunk_end(x, i) - off, x->streams[i % x->depth]);
        if (rc)
            return rc;
        x->queued++;
    }
    return 0;
}

/* Moves `ready` over the chunks whose copies are done, queueing the next copies. */
static int advance(wio_gpu_pipe *x)
{
    while (x->ready < x->queued) {
        int done = 0, rc = wio_gpu_stream_done(x->streams[x->ready % x->depth], &done);
        if (rc)
            return rc;
        if (!done)
            break;
        x->ready++;
        if ((rc = queue_copies(x)) != 0)
            return rc;
    }
    return 0;
}

int wio_gpu_send_pipe_new(const void *dev, void *host, size_t len, wio_gpu_pipe **out)
{
    pthread_once(&settings_once, read_settings);
    int rc = pipe_new((uint8_t *)(uintptr_t)dev, host, len, set_depth, out);
    if (rc)
        return rc;
    if ((rc = queue_copies(*out)) != 0) {
        wio_gpu_pipe_destroy(*out);
        *out = NULL;
        return rc;
    }
    atomic_fetch_add(&n_sent_msgs, 1);
    return 0;
}

static void pipe_item_done(wio_send_item *it, int err);

/* Hands the item back to the link with every byte copied so far, or parks the pipe when no new
 * chunk is copied yet. A copy that failed ends the transfer: an empty DATA frame, which the
 * receiver refuses (begin_data), so that both sides see the connection fail; the send then
 * fails with WAITIO_ERR_DEVICE. */
static void hand_out(wio_req_impl *s)
{
    wio_gpu_pipe *x = s->gpu_pipe;
    wio_send_item *it = &s->item;
    size_t sent = it->total, sent_chunks = sent / x->chunk;
    int rc = x->err ? 0 : advance(x);
    if (rc) {
        wio_warn("a device message's copy to host memory failed after %zu of %zu bytes: %s", sent, x->len,
                 waitio_error_message());
        x->err = WAITIO_ERR_DEVICE;
    }
    int gone = x->p->state == WIO_PEER_FAILED; /* handed back at once: the link fails it */
    if (!x->err && !gone && (x->ready <= sent_chunks || handing_out)) {
        x->req = s;
        wio_list_insert_tail(&parked_pipes, &x->parked);
        wio_gpu_pipes_parked++;
        return;
    }
    if (x->err) {
        it->offset = it->total = sent;
    } else if (x->ready > sent_chunks) {
        size_t ready = x->ready == x->nchunks ? x->len : x->ready * x->chunk;
        size_t handed = x->ready - sent_chunks;
        atomic_fetch_add(&n_sent_chunks, handed);
        if (x->queued > x->ready) /* the next copies run while these bytes are written */
            atomic_fetch_add(&n_sent_overlapped, handed);
        WIO_ASSERT(ready > sent && it->offset == sent);
        it->total = ready;
    }
    handing_out = 1;
    wio_engine_queue_data(x->e, x->p, it, x->bulk && !gone); /* the main link fails it at once */
    handing_out = 0;
}

static void pipe_item_done(wio_send_item *it, int err)
{
    wio_req_impl *s = it->owner;
    wio_gpu_pipe *x = s->gpu_pipe;
    if (err || x->err) {
        wio_req_complete(s, err ? err : x->err);
        return;
    }
    if (it->offset >= x->len) {
        wio_req_complete(s, 0);
        return;
    }
    hand_out(s);
}

void wio_gpu_pipe_poll(void)
{
    /* each parked pipe once: one parked again during its hand-off waits for the next poll */
    for (int n = wio_gpu_pipes_parked; n > 0 && !wio_list_empty(&parked_pipes); n--) {
        wio_gpu_pipe *x = WIO_CONTAINER_OF(parked_pipes.next, wio_gpu_pipe, parked);
        wio_list_remove(&x->parked);
        wio_gpu_pipes_parked--;
        hand_out(x->req);
    }
}

void wio_gpu_send_pipe_data(wio_engine *e, wio_peer *p, wio_req_impl *s, uint64_t receiver_id, int bulk)
{
    wio_gpu_pipe *x = s->gpu_pipe;
    x->e = e;
    x->p = p;
    x->bulk = bulk;
    wio_send_item *it = &s->item;
    memset(&it->h, 0, sizeof it->h);
    it->h.type = WIO_FT_DATA;
    it->h.id = receiver_id;
    it->payload = x->host;
    it->total = 0;
    it->offset = 0;
    it->chunk = e->cfg.chunk_size;
    it->done = pipe_item_done;
    hand_out(s);
}

/* ---- receiver ---- */

void wio_gpu_recv_pipe_progress(wio_req_impl *r)
{
    wio_gpu_pipe *x = r->gpu_pipe;
    if (!x) {
        /* a message that arrived whole in one frame is copied at completion, as without pipeline */
        if (r->received >= r->msg_len || !wio_gpu_pipe_wanted(r->msg_len))
            return;
        if (pipe_new(r->gpu_user, r->buf, r->msg_len, 1, &x) != 0) {
            wio_debug("no pipeline for a device receive (%s): copied whole at completion", waitio_error_message());
            return;
        }
        r->gpu_pipe = x;
        atomic_fetch_add(&n_recv_msgs, 1);
    }
    /* the last part is copied at completion; a failed copy leaves everything to it */
    if (x->err || r->received >= r->msg_len || r->received - x->on_device < x->chunk)
        return;
    size_t n = (r->received - x->on_device) / x->chunk * x->chunk;
    if (wio_gpu_copy_async(x->dev + x->on_device, x->host + x->on_device, n, x->streams[0]) != 0) {
        wio_warn("a pipelined copy to the device failed (%s): copied whole at completion", waitio_error_message());
        x->err = WAITIO_ERR_DEVICE;
        return;
    }
    x->on_device += n;
    atomic_fetch_add(&n_recv_early, n / x->chunk);
}

int wio_gpu_recv_pipe_finish(wio_req_impl *r, size_t *on_device)
{
    *on_device = 0;
    wio_gpu_pipe *x = r->gpu_pipe;
    if (!x)
        return 0;
    int rc = wio_gpu_stream_sync(x->streams[0]);
    if (!rc && !x->err)
        *on_device = x->on_device;
    wio_gpu_pipe_free(r);
    return rc;
}
