/* fuzz_handshake.c — libFuzzer harness of a whole accepted connection from a stranger: the bytes
 * arrive over a socketpair at a connection in the acceptor's handshake state (HELLO expected),
 * and go through the real receive path (header checks, sequence numbers, the handshake reader,
 * authentication). Without the key nothing gets past AUTH: the owner's `incoming` must never be
 * called (it aborts), and the connection must end up closed or waiting; nothing may crash or
 * leak. fuzz_session.c continues where this one stops. */
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "core/common.h"
#include "transport/tcp.h"

static uint8_t sink[1 << 16];

/* Only an authenticated connection reaches its owner: the fuzzer does not know the key. */
static int on_incoming(void *ctx, wio_conn *c, uint32_t id) { (void)ctx; (void)c; (void)id; abort(); }
static int on_begin(void *ctx, wio_conn *c, const wio_frame_hdr *h, uint8_t **dest)
{
    (void)ctx; (void)c;
    if (h->len > sizeof sink)
        return -1;
    *dest = sink;
    return 0;
}
static int on_end(void *ctx, wio_conn *c, const wio_frame_hdr *h) { (void)ctx; (void)c; return h->type == WIO_FT_ERROR; }
static void on_closed(void *ctx, wio_conn *c, int err, const char *why, int rejected)
{
    (void)c; (void)err; (void)why; (void)rejected;
    *(int *)ctx = 1;
}

static const wio_conn_handler handler = {
    .incoming = on_incoming, .frame_begin = on_begin, .frame_end = on_end, .closed = on_closed,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static wio_key key = {.len = 32, .bytes = "fuzz-handshake-key-0123456789abc"};
    wio_tcp_params params = {.key = &key, .eager_limit = 1 << 16, .eager_credit = 1 << 20,
                             .connect_timeout = 5, .accept_timeout = 5, .peer_timeout = 30,
                             .max_handshakes = 64};
    wio_tcp *t;
    if (wio_tcp_create(&t, &params) != 0)
        abort();
    wio_tcp_set_self_id(t, 3);
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) != 0)
        abort();
    int closed = 0;
    wio_conn *c;
    if (wio_tcp_adopt(t, sv[0], &handler, &closed, &c) != 0)
        abort();
    size_t off = 0;
    for (int round = 0; round < 64 && !closed; round++) {
        if (off < size) {
            ssize_t n = send(sv[1], data + off, size - off, MSG_NOSIGNAL);
            if (n > 0)
                off += (size_t)n;
        } else if (off == size) {
            shutdown(sv[1], SHUT_WR);
            off++;
        }
        if (wio_tcp_poll(t, 0) < 0)
            break;
    }
    close(sv[1]);
    wio_tcp_destroy(t);
    return 0;
}
