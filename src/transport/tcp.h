/*
 * tcp.h — the tcp transport's row (wio_transport_tcp) and the two calls the start-up
 * rendezvous makes on a stream context of its own: listen on the master's port, dial the master.
 */
#ifndef WIO_TCP_H
#define WIO_TCP_H

#include "transport/stream.h"
#include "transport/transport.h"

extern const wio_transport_ops wio_transport_tcp;

/* Listens on bind_to (family 0: all interfaces) and `port` (0: any); *port_out gets the port.
 * Accepted connections run the handshake on ctx and reach h once authenticated. */
int wio_tcp_listen(wio_stream_ctx *ctx, const wio_addr *bind_to, int port, const wio_tp_handler *h,
                   void *hctx, int armed, wio_listener **out, uint16_t *port_out);
/* Connects as `my_id` to process `target_id` (WIO_ID_BOOT: the master) at `to`. */
int wio_tcp_dial(wio_stream_ctx *ctx, const wio_addr *to, uint32_t my_id, uint32_t target_id,
                 unsigned purpose, const wio_tp_handler *h, void *hctx, void *user, wio_stream **out);
/* Seconds of silence after which a peer is declared dead (keepalive, TCP_USER_TIMEOUT). */
void wio_tcp_set_peer_timeout(double seconds);

#endif
