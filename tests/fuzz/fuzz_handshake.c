/* fuzz_handshake.c — libFuzzer harness of a whole accepted connection: the bytes arrive over a
 * socketpair at a stream in the acceptor's handshake state (HELLO expected), and go through the
 * real receive path (buffering, header checks, sequence numbers, handshake, authentication) of
 * transport/stream.c and handshake.c. Without the key the input cannot get past AUTH: nothing
 * may reach the owner's callbacks (checked), crash or leak. fuzz_session.c continues where this
 * one stops. */
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "core/common.h"
#include "core/poller.h"
#include "transport/stream.h"

static uint8_t sink[1 << 16];
static int owner_calls;

static int on_incoming(void *ctx, void *conn, uint32_t id, unsigned flags, void **user)
{
    (void)ctx; (void)conn; (void)id; (void)flags; (void)user;
    owner_calls++;
    return WIO_TP_REFUSE;
}
static int on_begin(void *ctx, void *user, const wio_frame_hdr *h, uint8_t **dest)
{
    (void)ctx; (void)user;
    owner_calls++;
    if (h->len > sizeof sink)
        return -1;
    *dest = sink;
    return 0;
}
static int on_end(void *ctx, void *user, const wio_frame_hdr *h) { (void)ctx; (void)user; (void)h; owner_calls++; return 0; }
static void on_closed(void *ctx, void *user, int err, const char *why, int rejected)
{
    (void)ctx; (void)user; (void)err; (void)why; (void)rejected;
    owner_calls++;
}

static const wio_tp_handler handler = {
    .incoming = on_incoming, .frame_begin = on_begin, .frame_end = on_end, .closed = on_closed,
};
static const wio_stream_kind kind = {.name = "fuzz", .pipe = &wio_socket_pipe};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static wio_key key = {.len = 16, .bytes = "fuzz-key-0123456"};
    wio_poller *poller;
    if (wio_poller_create(&poller) != 0)
        abort();
    wio_stream_params params = {.key = &key, .poller = poller, .eager_limit = 1 << 16,
                                .eager_credit = 1 << 20, .connect_timeout = 5,
                                .handshake_timeout = 5, .max_handshakes = 4};
    wio_stream_ctx *ctx;
    if (wio_stream_ctx_create(&ctx, &params) != 0)
        abort();
    wio_stream_ctx_set_self(ctx, 3, 1 << 20);
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) != 0)
        abort();
    wio_stream *s = wio_stream_new(ctx, &kind, sv[0], &handler, NULL);
    if (!s)
        abort();
    s->my_id = 3;
    owner_calls = 0;
    if (wio_stream_start_accept(s) != 0)
        abort();
    size_t off = 0;
    for (int round = 0; round < 64; round++) {
        if (off < size) {
            ssize_t n = write(sv[1], data + off, size - off);
            if (n > 0)
                off += (size_t)n;
        } else if (off == size) {
            shutdown(sv[1], SHUT_WR);
            off++;
        }
        if (wio_poller_run(poller, 0) < 0)
            break;
    }
    if (owner_calls != 0)
        abort(); /* an unauthenticated connection reached its owner */
    close(sv[1]);
    wio_stream_ctx_destroy(ctx);
    wio_poller_destroy(poller);
    return 0;
}
