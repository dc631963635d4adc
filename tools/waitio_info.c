/*
 * waitio-info — prints the library version, build options, transports, this host's network
 * interfaces and the effective settings that waitio_init would use with the current environment;
 * --all lists every variable of the registry (src/core/settings.c) with its value and where it
 * came from, --var NAME one of them. It exits 1 when the environment holds a value the library
 * would refuse or ignore (with the library's message), so a job script can check its settings
 * before it starts anything. It does not start WaitIO (no rendezvous), so it is safe anywhere.
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/common.h"
#include "core/frame.h"
#include "core/settings.h"
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

/* A registered variable's value, or its default, for the summary below (a bad one is said by
 * check_environment at the end). */
static const char *value_or(const char *name, const char *none)
{
    const char *v = wio_env(name);
    const wio_setting *s = wio_setting_find(name);
    return v && *v ? v : s && s->dflt ? s->dflt : none;
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
    printf("  one-sided: WAITIO_PROGRESS_THREAD=%s  WAITIO_RMA_DIRECT=%s  SHMEM_SYMMETRIC_SIZE=%s\n",
           value_or("WAITIO_PROGRESS_THREAD", "auto"), value_or("WAITIO_RMA_DIRECT", "1"),
           value_or("SHMEM_SYMMETRIC_SIZE", "64M"));
    printf("  collectives: WAITIO_COLL_HIER=%s (docs/mpi-layer.md)\n", value_or("WAITIO_COLL_HIER", "auto"));
    printf("  WAITIO_TRACE=%s  WAITIO_TRACE_SIZE=%s  WAITIO_STATS=%d\n",
           c->trace_dir[0] ? c->trace_dir : "(off)", value_or("WAITIO_TRACE_SIZE", "16M"), c->stats);
    const char *key_file = wio_env("WAITIO_KEY_FILE");
    printf("  instance key from: %s\n", wio_env("WAITIO_KEY") ? "WAITIO_KEY"
                                        : key_file ? key_file : "~/.waitio/key");
    printf("  (waitio-info --all lists every variable, its value and where it came from)\n");
}

/* ---- the registry: --all and --var ---- */

/* "int 1..65536", "0|1|auto", "size 4K..64M" — what a variable takes, in a few words. */
static void describe_type(const wio_setting *s, char *out, size_t cap)
{
    switch (s->type) {
    case WIO_SET_INT: snprintf(out, cap, "integer %.0f..%.0f", s->lo, s->hi); break;
    case WIO_SET_SIZE: snprintf(out, cap, "size %.0f..%.0f bytes (K, M, G)", s->lo, s->hi); break;
    case WIO_SET_NUMBER: snprintf(out, cap, "number %.10g..%.10g", s->lo, s->hi); break;
    case WIO_SET_BOOL: snprintf(out, cap, "0|1"); break;
    case WIO_SET_AUTO01: snprintf(out, cap, "auto|0|1"); break;
    case WIO_SET_ENUM: snprintf(out, cap, "one of %s", s->values); break;
    case WIO_SET_LIST: snprintf(out, cap, "list of %s", s->values); break;
    case WIO_SET_STRING: snprintf(out, cap, "text"); break;
    case WIO_SET_PATH: snprintf(out, cap, "path"); break;
    case WIO_SET_SECRET: snprintf(out, cap, "secret (never printed)"); break;
    case WIO_SET_LOGSPEC: snprintf(out, cap, "LEVEL[,SUBSYSTEM=LEVEL...]"); break;
    case WIO_SET_RANGE: snprintf(out, cap, "MIN-MAX bytes"); break;
    case WIO_SET_HEAPSIZE: snprintf(out, cap, "size (K, M, G; fractions allowed)"); break;
    }
}

/* One variable on one line: NAME=VALUE, its source, its doc. Returns -1 for a refused value. */
static int print_one(const wio_setting *s)
{
    const char *v = wio_env(s->name);
    char why[512] = "", shown[64];
    int bad = v && wio_setting_check(s, v, why, sizeof why) != 0;
    int from_env = v && *v;
    const char *value = from_env ? v : s->dflt ? s->dflt : "(unset)";
    if (from_env && s->type == WIO_SET_SECRET)
        value = "(set, not shown)";
    snprintf(shown, sizeof shown, "%s=%s", s->name, value);
    printf("  %-40s %-11s %s\n", shown, from_env ? "environment" : "default", s->doc);
    if (bad)
        printf("  %-40s REFUSED: %s\n", "", why);
    return bad ? -1 : 0;
}

static int print_all(void)
{
    size_t n;
    const wio_setting *t = wio_settings(&n);
    int bad = 0;
    printf("WaitIO %s settings (the registry, src/core/settings.c): value, where it came from, meaning\n",
           waitio_version());
    for (size_t i = 0; i < n; i++) {
        /* subsystems are contiguous in the table: a heading where one begins */
        if (i == 0 || strcmp(t[i].subsystem, t[i - 1].subsystem))
            printf("%s:\n", t[i].subsystem);
        bad |= print_one(&t[i]) != 0;
    }
    printf("(WAITIO_* names under %s are the test suite's and never reported)\n", WIO_SETTINGS_TEST_PREFIX);
    return bad ? 1 : 0;
}

static int print_var(const char *name)
{
    const wio_setting *s = wio_setting_find(name);
    if (!s) {
        const char *near = wio_setting_suggest(name);
        fprintf(stderr, "waitio-info: %s is not a WaitIO setting%s%s%s\n", name, near ? "; did you mean " : "",
                near ? near : "", near ? "?" : " (waitio-info --all lists them)");
        return 1;
    }
    char type[160];
    describe_type(s, type, sizeof type);
    printf("%s (subsystem %s)\n", s->name, s->subsystem);
    int rc = print_one(s);
    printf("  type: %s\n  default: %s\n", type, s->dflt ? s->dflt : "(none: see above)");
    printf("  a bad value: %s\n", s->flags & WIO_SETF_STRICT ? "waitio_init fails" : "said and ignored");
    return rc ? 1 : 0;
}

/* Whether the library's message already named variable `name` (not one it prefixes). */
static int names(const char *message, const char *name)
{
    size_t n = strlen(name);
    for (const char *at = message; (at = strstr(at, name)) != NULL; at += n) {
        char next = at[n];
        if (!(next == '_' || (next >= 'A' && next <= 'Z') || (next >= '0' && next <= '9')))
            return 1;
    }
    return 0;
}

/* Every registered variable set in the environment, checked as the library would: the refused
 * ones are said (the library's message) and make the exit status 1. */
static int check_environment(const char *already_said)
{
    size_t n;
    const wio_setting *t = wio_settings(&n);
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        const char *v = wio_env(t[i].name);
        char why[512];
        if (v && wio_setting_check(&t[i], v, why, sizeof why) != 0) {
            if (!already_said || !names(already_said, t[i].name))
                fprintf(stderr, "waitio-info: %s\n", why);
            bad = 1;
        }
    }
    return bad;
}

static void usage(FILE *to)
{
    fprintf(to, "usage: waitio-info [--all | --var NAME]\n"
                "Prints WaitIO's version, build options, transports, network interfaces and the effective\n"
                "settings for the current environment; exits 1 when a WaitIO variable has a value the\n"
                "library would refuse or ignore.\n"
                "  -a, --all        every WaitIO variable: its value, default or environment, and meaning\n"
                "  -v, --var NAME   one variable, with its type and default\n"
                "  -h, --help       this text\n"
                "  -V, --version    the version\n");
}

static void print_build(void)
{
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
}

int main(int argc, char **argv)
{
    static const struct option options[] = {
        {"all", no_argument, NULL, 'a'},      {"var", required_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},     {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    int all = 0, opt;
    const char *var = NULL;
    while ((opt = getopt_long(argc, argv, "av:hV", options, NULL)) != -1) {
        switch (opt) {
        case 'a': all = 1; break;
        case 'v': var = optarg; break;
        case 'h': usage(stdout); return 0;
        case 'V': printf("waitio-info (WaitIO) %s\n", waitio_version()); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc || (all && var)) {
        usage(stderr);
        return 2;
    }
    if (var)
        return print_var(var);
    /* as waitio_init: WAITIO_LOG first (a bad one is reported below), then unknown names */
    int log_rc = wio_log_init_from_env();
    char log_error[512];
    snprintf(log_error, sizeof log_error, "%s", log_rc ? waitio_error_message() : "");
    wio_settings_warn_unknown();
    if (all)
        return print_all();
    print_build();
    print_interfaces();
    wio_config c;
    if (log_rc != 0 || wio_config_load(&c) != 0) {
        const char *said = log_rc ? log_error : waitio_error_message();
        fprintf(stderr, "waitio-info: %s\n", said);
        check_environment(said); /* the others too, so that one run names every mistake */
        return 1;
    }
    print_settings(&c);
    return check_environment(NULL);
}
