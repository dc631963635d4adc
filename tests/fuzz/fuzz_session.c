/* fuzz_session.c — libFuzzer harness of what follows authentication: a real engine (process 0
 * of a 2-process instance, receives and a rendezvous send posted) accepts a connection over a
 * socketpair; the harness plays process 1, knows the instance key and completes the handshake
 * (HELLO, HELLO_ACK checked, AUTH, ACCEPT), then sends the fuzz input as frames, so that they
 * reach the engine's handlers (eager with credit, RTS, CTS, DATA, CREDIT, BYE, IDLE_CLOSE, and
 * frames that have no business there).
 *
 * The engine's only transport is a small one defined here over the real stream layer
 * (transport/stream.c, handshake.c): it connects to nobody and takes the socketpair as an
 * accepted connection, so that every byte goes through the same receive path as over tcp.
 *
 * Input: byte 0 selects what the harness repairs in each frame header, to get past the checks
 * it is not exploring: bit 0 the sequence number, bit 1 the payload length (at most what is
 * left of the input), bit 2 request ids (an id below 8 becomes the id of one of the posted
 * requests), bit 3 the form: a frame whose first input byte is the short header's mark goes as a
 * short EAGER header; magic (or mark) and version (or the reserved byte) are always right.
 * Then frames: a header (56 bytes of input, 24 for a short one; a frame starts while 56 are
 * left), its payload.
 * The engine must close the connection or keep it; nothing may crash, leak or hang. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "core/engine.h"
#include "core/poller.h"
#include "transport/stream.h"

#define NRECV 4
#define SEND_LEN (300u << 10) /* above the eager limit we announce: goes as RTS */

static wio_key key = {.len = 32, .bytes = "fuzz-session-key-0123456789abcde"};
static uint8_t rbuf[NRECV][64 << 10];
static uint8_t sbuf[SEND_LEN];

static int everyone(int pb, int rank) { (void)pb; (void)rank; return 1; }

/* The harness's transport: a stream context whose only connection is the socketpair. */
static wio_stream_ctx *fuzz_ctx;
static const wio_stream_kind fuzz_kind = {.name = "fuzz", .pipe = &wio_socket_pipe};

static int fuzz_open(const wio_tp_params *p, void **tp, wio_proc *self)
{
    wio_stream_params sp = {.key = p->key, .poller = p->poller, .eager_limit = p->eager_limit,
                            .connect_timeout = 5, .handshake_timeout = 5, .max_handshakes = 4};
    if (wio_stream_ctx_create(&fuzz_ctx, &sp) != 0)
        return -1;
    self->transports |= WIO_TP_TCP;
    *tp = fuzz_ctx;
    return 0;
}
static int fuzz_start(void *tp, const wio_tp_instance *inst)
{
    wio_stream_ctx_set_self(tp, inst->self_id, inst->eager_credit);
    return 0;
}
static int fuzz_reachable(void *tp, uint32_t peer_id) { (void)tp; (void)peer_id; return 1; }
static int fuzz_connect(void *tp, uint32_t peer_id, unsigned flags, void *user, void **conn)
{
    (void)tp; (void)peer_id; (void)flags; (void)user; (void)conn;
    return -1; /* the harness's process 1 connects to us, never the other way */
}
static void fuzz_send(void *conn, wio_send_item *it) { wio_stream_send(conn, it); }
static int fuzz_conn_idle(const void *conn) { return wio_stream_idle(conn); }
static void fuzz_conn_shutdown(void *conn) { wio_stream_shutdown(conn); }
static void fuzz_conn_close(void *conn, int err) { wio_stream_close(conn, err); }
static void fuzz_conn_abandon(void *conn) { wio_stream_abandon(conn); }
static const char *fuzz_conn_desc(const void *conn) { return ((const wio_stream *)conn)->desc; }
static void fuzz_close(void *tp) { wio_stream_ctx_destroy(tp); }

static const wio_transport_ops fuzz_transport = {
    .name = "fuzz", .bit = WIO_TP_TCP, .open = fuzz_open, .start = fuzz_start,
    .reachable = fuzz_reachable, .connect = fuzz_connect, .send = fuzz_send,
    .conn_idle = fuzz_conn_idle, .conn_shutdown = fuzz_conn_shutdown,
    .conn_close = fuzz_conn_close, .conn_abandon = fuzz_conn_abandon,
    .conn_desc = fuzz_conn_desc, .close = fuzz_close,
};

static wio_engine *engine_new(void)
{
    static int logging;
    if (!logging++)
        wio_log_init_from_env(); /* WAITIO_LOG=debug shows what an input does */
    wio_engine *e = calloc(1, sizeof *e);
    if (!e)
        abort();
    wio_list_init(&e->groups);
    wio_mq_init(&e->mq);
    wio_list_init(&e->unexp_free);
    if (wio_config_load(&e->cfg) != 0)
        abort();
    e->cfg.npb = 2;
    e->cfg.local_size = 1;
    e->cfg.eager_limit = 16 << 10;
    e->cfg.chunk_size = 32 << 10;
    e->cfg.finalize_timeout = 1;
    e->key = key;
    e->npb = 2;
    e->nprocs = calloc(2, sizeof *e->nprocs);
    e->pb_offset = calloc(2, sizeof *e->pb_offset);
    e->table = calloc(2, sizeof *e->table);
    if (!e->nprocs || !e->pb_offset || !e->table)
        abort();
    e->nprocs[0] = e->nprocs[1] = 1;
    e->pb_offset[1] = 1;
    e->nprocs_total = 2;
    e->my_id = 0;
    for (int i = 0; i < 2; i++) {
        e->table[i].transports = WIO_TP_TCP;
        e->table[i].host_id = 1000 + (uint64_t)i; /* different hosts */
    }
    e->tps[0] = (wio_tp_slot){&fuzz_transport, NULL, e};
    e->ntps = 1;
    e->bulk_tp = -1;
    if (wio_engine_open(e) != 0 || wio_engine_start(e) != 0)
        abort();
    wio_engine_current = e;
    return e;
}

static void engine_free(wio_engine *e)
{
    wio_engine_current = NULL;
    wio_engine_free(e); /* closes the transport, its streams, the poller */
}

/* Moves bytes both ways until `want` bytes were read from the engine's side into in (NULL:
 * just pump). Returns 0, or -1 if the connection closed or nothing came. */
static int pump(wio_engine *e, int fd, uint8_t *in, size_t want)
{
    size_t got = 0;
    for (int round = 0; round < 200; round++) {
        if (wio_engine_progress(e, 0) < 0)
            return -1;
        uint8_t sink[4096];
        uint8_t *dst = in && got < want ? in + got : sink;
        size_t cap = in && got < want ? want - got : sizeof sink;
        ssize_t n = recv(fd, dst, cap, MSG_DONTWAIT);
        if (n == 0)
            return -1;
        if (n > 0 && dst != sink)
            got += (size_t)n;
        if (!in || got == want)
            return 0;
    }
    return -1;
}

static void put_header(uint8_t *h, uint8_t type, uint32_t seq, uint32_t src, uint64_t len)
{
    wio_frame_hdr f = {.type = type, .seq = seq, .src = src, .len = len};
    wio_frame_encode(&f, h);
}

/* The connector's half of the handshake (docs/protocol.md): returns 0 once ACCEPT came. */
static int handshake(wio_engine *e, int fd)
{
    uint8_t out[WIO_FRAME_HDR_SIZE + 48], in[WIO_FRAME_HDR_SIZE + 76], transcript[2 + 48 + 44];
    uint8_t *hello = out + WIO_FRAME_HDR_SIZE;
    memset(hello, 0x5a, WIO_NONCE_LEN);
    wio_put_le32(hello + 32, 1);        /* we are process 1 */
    wio_put_le32(hello + 36, 0);        /* to process 0 */
    wio_put_le32(hello + 40, 8 << 10);  /* our eager limit */
    wio_put_le32(hello + 44, 1 << 20);  /* and credit */
    put_header(out, WIO_FT_HELLO, 0, 1, 48);
    if (send(fd, out, sizeof out, MSG_NOSIGNAL) != (ssize_t)sizeof out || pump(e, fd, in, sizeof in) != 0)
        return -1;
    wio_frame_hdr h;
    const char *why;
    if (wio_frame_decode(in, &h, &why) != 0 || h.type != WIO_FT_HELLO_ACK || h.len != 76)
        abort(); /* the engine must answer a good HELLO with a good HELLO_ACK */
    const uint8_t *ack = in + WIO_FRAME_HDR_SIZE;
    memset(transcript, 0, 2);
    memcpy(transcript + 2, hello, 48);
    memcpy(transcript + 50, ack, 32);
    memcpy(transcript + 82, ack + 64, 12);
    uint8_t proof[WIO_PROOF_LEN];
    wio_auth_mac(&key, WIO_AUTH_ACCEPTOR, transcript, sizeof transcript, proof);
    if (!wio_auth_proof_equal(proof, ack + 32))
        abort();
    uint8_t auth[WIO_FRAME_HDR_SIZE + WIO_PROOF_LEN];
    put_header(auth, WIO_FT_AUTH, 1, 1, WIO_PROOF_LEN);
    wio_auth_mac(&key, WIO_AUTH_CONNECTOR, transcript, sizeof transcript, auth + WIO_FRAME_HDR_SIZE);
    if (send(fd, auth, sizeof auth, MSG_NOSIGNAL) != (ssize_t)sizeof auth || pump(e, fd, in, WIO_FRAME_HDR_SIZE) != 0)
        return -1;
    if (wio_frame_decode(in, &h, &why) != 0 || h.type != WIO_FT_ACCEPT || h.flags != 0)
        abort(); /* an authenticated process 1 is taken */
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t fix = data[0];
    data++;
    size--;
    wio_engine *e = engine_new();
    wio_group *g;
    waitio_filter_func_t f[2] = {everyone, everyone};
    int order[2] = {1, 2};
    if (wio_group_create_func(e, 3, f, order, &g) != 0)
        abort();
    uint64_t ids[8] = {0};
    int nids = 0;
    wio_req_impl *r;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) != 0)
        abort();
    wio_stream *s = wio_stream_new(fuzz_ctx, &fuzz_kind, sv[0], &wio_engine_tp_handler, &e->tps[0]);
    if (!s)
        abort();
    snprintf(s->desc, sizeof s->desc, "fuzz peer");
    s->my_id = 0;
    if (wio_stream_start_accept(s) != 0)
        abort();
    if (handshake(e, sv[1]) == 0) {
        /* receives (posted once the peer is open: before, a receive would connect to it) and
         * a rendezvous send, so that EAGER, RTS, DATA and CTS frames have requests to find */
        for (int i = 0; i < NRECV; i++)
            if (wio_engine_irecv(e, g, i == NRECV - 1 ? WAITIO_ANY_SOURCE : 1, rbuf[i],
                                 sizeof rbuf[i], (uint64_t)i, WIO_CTX_USER, &r) == 0)
                ids[nids++] = wio_req_id(r);
        if (wio_engine_isend(e, g, 1, sbuf, SEND_LEN, 7, WIO_CTX_USER, &r) == 0)
            ids[nids++] = wio_req_id(r);
        pump(e, sv[1], NULL, 0);
        uint32_t seq = 2;
        size_t off = 0;
        uint8_t frame[WIO_FRAME_HDR_SIZE];
        while (off + WIO_FRAME_HDR_SIZE <= size) {
            memcpy(frame, data + off, WIO_FRAME_HDR_SIZE);
            uint64_t len;
            size_t hdr_len;
            if ((fix & 8) && frame[0] == WIO_FRAME_SHORT_MARK) { /* a short EAGER header (frame.h) */
                hdr_len = WIO_FRAME_SHORT_SIZE;
                off += hdr_len;
                frame[0] = WIO_FRAME_SHORT_MARK;
                frame[1] = 0;
                if (fix & 1)
                    wio_put_le32(frame + 4, seq);
                len = wio_get_le16(frame + 2);
                if ((fix & 2) && len > size - off)
                    wio_put_le16(frame + 2, (uint16_t)(len = size - off));
            } else {
                hdr_len = WIO_FRAME_HDR_SIZE;
                off += hdr_len;
                wio_put_le32(frame, WIO_FRAME_MAGIC);
                frame[4] = WIO_PROTO_VERSION;
                if (fix & 1)
                    wio_put_le32(frame + 8, seq);
                len = wio_get_le64(frame + 32);
                if ((fix & 2) && len > size - off)
                    wio_put_le64(frame + 32, len = size - off);
                uint64_t id = wio_get_le64(frame + 40);
                if ((fix & 4) && id < 8 && nids > 0)
                    wio_put_le64(frame + 40, ids[id % (uint64_t)nids]);
            }
            seq++;
            size_t body = len < size - off ? (size_t)len : size - off;
            if (send(sv[1], frame, hdr_len, MSG_NOSIGNAL) != (ssize_t)hdr_len)
                break;
            size_t sent = 0;
            while (sent < body) {
                ssize_t n = send(sv[1], data + off + sent, body - sent, MSG_NOSIGNAL);
                if (n < 0 && errno != EAGAIN)
                    break;
                if (n > 0)
                    sent += (size_t)n;
                if (pump(e, sv[1], NULL, 0) != 0)
                    break;
            }
            off += body;
            if (pump(e, sv[1], NULL, 0) != 0)
                break;
        }
        shutdown(sv[1], SHUT_WR);
        for (int round = 0; round < 8; round++)
            if (pump(e, sv[1], NULL, 0) != 0)
                break;
    }
    close(sv[1]);
    engine_free(e);
    return 0;
}
