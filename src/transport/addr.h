/*
 * addr.h — network addresses: formatting, name resolution, the local address that routes to a
 * host, interface addresses, and conversion to and from socket addresses. Used by the tcp
 * transport and by the start-up rendezvous.
 */
#ifndef WIO_ADDR_H
#define WIO_ADDR_H

#include <sys/socket.h>
#include "transport/transport.h"

/* Host name or literal to an address (IPv4 preferred when a name has both). */
int wio_addr_resolve(const char *host, uint16_t port, wio_addr *out);
/* The local address this host uses to reach `to` (no packet is sent). */
int wio_addr_route_to(const wio_addr *to, wio_addr *out);
/* The address of an interface given by name (e.g. "eth0") or a literal address; `var` names
 * the setting it came from, for the error message. */
int wio_addr_from_iface(const char *iface, const char *var, wio_addr *out);
/* Any non-loopback IPv4 address of this host, else 127.0.0.1. */
void wio_addr_first_interface(wio_addr *out);
socklen_t wio_addr_to_sockaddr(const wio_addr *a, struct sockaddr_storage *ss);
int wio_addr_from_sockaddr(const struct sockaddr *sa, wio_addr *out);

#endif
