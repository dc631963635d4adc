/*
 * waitio-info — prints the library version, build options, transports, this host's network
 * interfaces and the effective settings that waitio_init would use with the current environment.
 * It does not start WaitIO (no rendezvous), so it is safe to run anywhere.
 */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/common.h"
#include "core/frame.h"
#include "transport/transport.h"
#include "transport/ucx.h"
#include "waitio.h"

static void print_interfaces(void)
{
    struct ifaddrs *ifs;
    if (getifaddrs(&ifs) != 0) {
        perror("getifaddrs");
        return;
    }
    printf("interfaces:\n");
    for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
        if (!i->ifa_addr || (i->ifa_addr->sa_family != AF_INET && i->ifa_addr->sa_family != AF_INET6))
            continue;
        char ip[INET6_ADDRSTRLEN];
        const void *a = i->ifa_addr->sa_family == AF_INET
                            ? (const void *)&((struct sockaddr_in *)i->ifa_addr)->sin_addr
                            : (const void *)&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr;
        inet_ntop(i->ifa_addr->sa_family, a, ip, sizeof ip);
        printf("  %-12s %s\n", i->ifa_name, ip);
    }
    freeifaddrs(ifs);
}

static void print_settings(const wio_config *c)
{
    printf("settings (from the environment):\n");
    printf("  WAITIO_NPB=%d WAITIO_PBID=%d\n", c->npb, c->pbid);
    printf("  PB-local rank %d of %d (from %s)\n", c->local_rank, c->local_size, c->local_source);
    if (c->rendezvous[0])
        printf("  rendezvous file: %s\n", c->rendezvous);
    else
        printf("  master: %s:%d\n", c->master_host, c->master_port);
    printf("  WAITIO_IFACE=%s\n", c->iface[0] ? c->iface : "(route to the master)");
    static const char *const modes[] = {"socket", "file", "hybrid", "verbs"};
    printf("  WAITIO_COMM_TYPE=%s -> transports %s%s%s\n", modes[c->comm_type], c->transports,
           c->transports_set ? " (WAITIO_TRANSPORTS, which wins)" : "",
           c->comm_type == WIO_COMM_HYBRID && !c->transports_set ? ", and file for large messages' data" : "");
    if (c->comm_type == WIO_COMM_HYBRID && !c->transports_set)
        printf("  WAITIO_HYBRID_THRESHOLD=%zu bytes\n", c->hybrid_threshold);
    if (strstr(c->transports, "file") ||
        ((c->comm_type == WIO_COMM_FILE || c->comm_type == WIO_COMM_HYBRID) && !c->transports_set)) {
        printf("  WAITIO_SCRATCH_DIR=%s  job id: %s\n", c->scratch_dir[0] ? c->scratch_dir : "(not set!)",
               c->job_id[0] ? c->job_id : "(derived from the key and the master's address)");
        printf("  WAITIO_MAXFILE_SIZE_PER_PROC=%zu  WAITIO_FILE_POLL_MS=%g  WAITIO_FILE_FSYNC=%d"
               "  WAITIO_FILE_UNSAFE_DIR=%d\n", c->maxfile, c->file_poll_max * 1e3, c->file_fsync,
               c->file_unsafe_dir);
        printf("  start-up: %s\n", c->comm_type == WIO_COMM_FILE && !c->master_set && !c->rendezvous[0]
                                      ? "through the directory (no WAITIO_MASTER_HOST)" : "through the master");
    }
    printf("  WAITIO_SHM_RING=%zu\n", c->shm_ring);
    printf("  WAITIO_EAGER_LIMIT=%zu  WAITIO_CHUNK_SIZE=%zu\n", c->eager_limit, c->chunk_size);
    if (c->eager_credit)
        printf("  WAITIO_EAGER_CREDIT=%zu per peer\n", c->eager_credit);
    else
        printf("  eager credit: auto, WAITIO_UNEXPECTED_MAX=%zu shared by all peers, at most 4 MiB each\n",
               c->unexpected_max);
    printf("  WAITIO_SPIN_US=%g  WAITIO_YIELD_US=%g\n", c->spin_us, c->yield_us);
    printf("  WAITIO_CONNECT_TIMEOUT=%g s  WAITIO_FINALIZE_TIMEOUT=%g s  WAITIO_PEER_TIMEOUT=%g s\n",
           c->connect_timeout, c->finalize_timeout, c->peer_timeout);
    printf("  WAITIO_HANDSHAKE_TIMEOUT=%g s  WAITIO_MAX_HANDSHAKES=%u  WAITIO_BIND_ALL=%d%s\n",
           c->handshake_timeout, c->max_handshakes, c->bind_all,
           c->bind_all ? " (listening on every interface)" : " (listening on the advertised address)");
    printf("  WAITIO_MAX_PROCS=%d (processes of all PBs together that start-up admits)\n", c->max_procs);
    /* one-sided (src/rma reads these at waitio_init; docs/one-sided.md) */
    const char *pt = getenv("WAITIO_PROGRESS_THREAD"), *heap = getenv("SHMEM_SYMMETRIC_SIZE");
    printf("  one-sided: WAITIO_PROGRESS_THREAD=%s  WAITIO_RMA_DIRECT=%s  SHMEM_SYMMETRIC_SIZE=%s\n",
           pt && *pt ? pt : "auto", getenv("WAITIO_RMA_DIRECT") ? getenv("WAITIO_RMA_DIRECT") : "1",
           heap && *heap ? heap : "64M");
    const char *hier = getenv("WAITIO_COLL_HIER"), *tsize = getenv("WAITIO_TRACE_SIZE");
    printf("  collectives: WAITIO_COLL_HIER=%s (docs/mpi-layer.md)\n", hier && *hier ? hier : "auto");
    printf("  WAITIO_TRACE=%s  WAITIO_TRACE_SIZE=%s  WAITIO_STATS=%d\n",
           c->trace_dir[0] ? c->trace_dir : "(off)", tsize && *tsize ? tsize : "16M", c->stats);
    const char *key = getenv("WAITIO_KEY") ? "WAITIO_KEY"
                      : getenv("WAITIO_KEY_FILE") ? getenv("WAITIO_KEY_FILE") : "~/.waitio/key";
    printf("  instance key from: %s\n", key);
}

int main(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        printf("usage: waitio-info\nPrints WaitIO's version, build options, transports, network "
               "interfaces and the effective settings for the current environment.\n");
        return 0;
    }
    printf("WaitIO %s (protocol version %d)\n", waitio_version(), WIO_PROTO_VERSION);
    printf("build: C11, OpenSSL libcrypto (HMAC-SHA256 authentication)%s\n",
#ifdef __SANITIZE_ADDRESS__
           ", AddressSanitizer"
#else
           ""
#endif
    );
#ifdef WAITIO_HAVE_UCX
    char ucx[2048];
    wio_ucx_describe(ucx, sizeof ucx);
    printf("ucx transport: %s\n", ucx);
#else
    printf("ucx transport: not built (UCX was not found at build time: WAITIO_COMM_TYPE=verbs "
           "and WAITIO_TRANSPORTS=ucx are refused)\n");
#endif
    printf("transports:");
    for (int i = 0; wio_transports[i]; i++)
        printf(" %s", wio_transports[i]->name);
    printf("  (shm: processes of one host; tcp: any; file: a directory the PBs share)\n");
    print_interfaces();
    wio_log_init_from_env();
    wio_config c;
    if (wio_config_load(&c) != 0) {
        fprintf(stderr, "waitio-info: %s\n", waitio_error_message());
        return 1;
    }
    print_settings(&c);
    return 0;
}
