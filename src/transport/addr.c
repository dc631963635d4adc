/*
 * addr.c — network addresses (addr.h): formatting, resolution, routes, interfaces.
 */
#define WIO_LOG_SUBSYS WIO_SUB_NET /* this file logs as "net" (WAITIO_LOG=net=LEVEL) */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "transport/addr.h"
#include "core/common.h"

void wio_addr_format(const wio_addr *a, char *buf, size_t cap)
{
    char ip[INET6_ADDRSTRLEN] = "?";
    inet_ntop(a->family == 6 ? AF_INET6 : AF_INET, a->ip, ip, sizeof ip);
    snprintf(buf, cap, a->family == 6 ? "[%s]:%u" : "%s:%u", ip, (unsigned)a->port);
}

socklen_t wio_addr_to_sockaddr(const wio_addr *a, struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof *ss);
    if (a->family == 6) {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons(a->port);
        memcpy(&s6->sin6_addr, a->ip, 16);
        return sizeof *s6;
    }
    struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
    s4->sin_family = AF_INET;
    s4->sin_port = htons(a->port);
    memcpy(&s4->sin_addr, a->ip, 4);
    return sizeof *s4;
}

int wio_addr_from_sockaddr(const struct sockaddr *sa, wio_addr *out)
{
    memset(out, 0, sizeof *out);
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
        out->family = 4;
        memcpy(out->ip, &s4->sin_addr, 4);
        out->port = ntohs(s4->sin_port);
        return 0;
    }
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
        out->family = 6;
        memcpy(out->ip, &s6->sin6_addr, 16);
        out->port = ntohs(s6->sin6_port);
        return 0;
    }
    return -1;
}

int wio_addr_resolve(const char *host, uint16_t port, wio_addr *out)
{
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int rc = getaddrinfo(host, NULL, &hints, &res);
    if (rc != 0)
        return wio_fail(WAITIO_ERR_ENV, "cannot resolve host '%s': %s", host, gai_strerror(rc));
    int found = -1;
    for (struct addrinfo *ai = res; ai && found != 0; ai = ai->ai_next)
        if (ai->ai_family == AF_INET) /* prefer IPv4 when a name has both */
            found = wio_addr_from_sockaddr(ai->ai_addr, out);
    for (struct addrinfo *ai = res; ai && found != 0; ai = ai->ai_next)
        found = wio_addr_from_sockaddr(ai->ai_addr, out);
    freeaddrinfo(res);
    if (found != 0)
        return wio_fail(WAITIO_ERR_ENV, "host '%s' has no IPv4 or IPv6 address", host);
    out->port = port;
    return 0;
}

int wio_addr_route_to(const wio_addr *to, wio_addr *out)
{
    struct sockaddr_storage ss;
    socklen_t len = wio_addr_to_sockaddr(to, &ss);
    int fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return wio_fail(WAITIO_ERR_SYS, "socket: %s", strerror(errno));
    int rc = 0;
    if (connect(fd, (struct sockaddr *)&ss, len) != 0) {
        char where[80];
        wio_addr_format(to, where, sizeof where);
        rc = wio_fail(WAITIO_ERR_SYS, "no route to %s: %s", where, strerror(errno));
    } else {
        struct sockaddr_storage me;
        socklen_t mlen = sizeof me;
        if (getsockname(fd, (struct sockaddr *)&me, &mlen) != 0 ||
            wio_addr_from_sockaddr((struct sockaddr *)&me, out) != 0)
            rc = wio_fail(WAITIO_ERR_SYS, "getsockname: %s", strerror(errno));
    }
    close(fd);
    return rc;
}

int wio_addr_from_iface(const char *iface, const char *var, wio_addr *out)
{
    memset(out, 0, sizeof *out);
    if (inet_pton(AF_INET, iface, out->ip) == 1) {
        out->family = 4;
        return 0;
    }
    if (inet_pton(AF_INET6, iface, out->ip) == 1) {
        out->family = 6;
        return 0;
    }
    struct ifaddrs *ifs;
    if (getifaddrs(&ifs) != 0)
        return wio_fail(WAITIO_ERR_SYS, "getifaddrs: %s", strerror(errno));
    int rc = -1;
    for (int want6 = 0; want6 < 2 && rc != 0; want6++)
        for (struct ifaddrs *i = ifs; i && rc != 0; i = i->ifa_next)
            if (i->ifa_addr && strcmp(i->ifa_name, iface) == 0 &&
                i->ifa_addr->sa_family == (want6 ? AF_INET6 : AF_INET))
                rc = wio_addr_from_sockaddr(i->ifa_addr, out);
    freeifaddrs(ifs);
    if (rc != 0)
        return wio_fail(WAITIO_ERR_ENV, "%s='%s' is neither an address nor an interface "
                        "with an address", var, iface);
    return 0;
}

void wio_addr_first_interface(wio_addr *out)
{
    struct ifaddrs *ifs = NULL;
    memset(out, 0, sizeof *out);
    out->family = 4;
    out->ip[0] = 127;
    out->ip[3] = 1;
    if (getifaddrs(&ifs) != 0)
        return;
    for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
            continue;
        const struct sockaddr_in *s4 = (const struct sockaddr_in *)i->ifa_addr;
        const uint8_t *ip = (const uint8_t *)&s4->sin_addr;
        if (ip[0] == 127)
            continue;
        memcpy(out->ip, ip, 4);
        break;
    }
    freeifaddrs(ifs);
}
