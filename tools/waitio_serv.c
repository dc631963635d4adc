/*
 * waitio-serv — publishes and looks up the master host for separately submitted batch jobs, so
 * that the original WaitIO job scripts work unchanged (SPEC §3):
 *   PB 0's job:      export WAITIO_MASTER_HOST=$(hostname); waitio-serv -d -m $WAITIO_MASTER_HOST
 *   other PBs' jobs: export WAITIO_MASTER_HOST=`waitio-serv -c`
 *   end of PB 0's job (optional): waitio-serv -x
 *
 * Owns: where the host is published (a file on a file system every job shares:
 * $WAITIO_SERV_FILE, else $WAITIO_RENDEZVOUS.host, else ~/.waitio/master_host), its format (line
 * 1: the host; line 2, only when WAITIO_MASTER_PORT was set in PB 0's job: the port), writing it
 * atomically with mode 0600 (mkstemp + rename), waiting for it, and removing it. "-d" returns at once: the file is
 * the message, no daemon is needed. Plain C11 + POSIX; it does not link libwaitio.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "waitio_version.h" /* generated from the project's VERSION */
#include "core/settings.h"  /* wio_env: WAITIO_* variables are read through the registry */

#define EXIT_USAGE 2
#define DEFAULT_WAIT_SECONDS 600.0
#define POLL_NS (100 * 1000 * 1000)
#define REPORT_FIRST_SECONDS 5.0 /* waiting notices: the first one */
#define REPORT_EVERY_SECONDS 10.0 /* then one at every multiple of this */
#define MAX_PATH 4096
#define MAX_HOST 1024

typedef struct request {
    char mode;        /* 'd' publish, 'c' look up, 'x' remove */
    const char *host; /* -m */
    double timeout;   /* -t, for -c */
    bool want_port;   /* -P, for -c */
} request_t;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: waitio-serv -d -m HOST        publish HOST as this user's WaitIO master host\n"
            "       waitio-serv -c [-t SECS] [-P] wait (default 600 s) for it and print it\n"
            "       waitio-serv -x                remove the published host (end of PB 0's job)\n"
            "\n"
            "  -d -m HOST  writes HOST (and WAITIO_MASTER_PORT, when set) atomically, mode 0600,\n"
            "              and returns at once: the file carries the information, no daemon runs\n"
            "  -c          polls every 0.1 s until the host is published, prints it (one line);\n"
            "              exits 1 after -t SECS without it\n"
            "  -P          with -c: print the published port instead (exit 1 if PB 0's job did\n"
            "              not set WAITIO_MASTER_PORT)\n"
            "  -x          removes the published file, so the next run cannot see a stale host\n"
            "\n"
            "Long names: --publish (-d), --master HOST (-m), --lookup (-c), --timeout SECS (-t),\n"
            "--port (-P), --remove (-x); -h, --help: this text; --version: the version.\n"
            "\n"
            "The file is $WAITIO_SERV_FILE, else $WAITIO_RENDEZVOUS.host, else\n"
            "~/.waitio/master_host: it must be on a file system every job shares.\n"
            "Exit status: 0 done, 1 failed (or -c timed out), 2 usage error.\n");
}

/* ---------------------------------------------------------------- location */

/* The published file's path; with create_dir, ~/.waitio is created (mode 0700) when used. */
static bool location(char *buf, size_t cap, bool create_dir)
{
    const char *v = wio_env("WAITIO_SERV_FILE");
    if (v && *v)
        return snprintf(buf, cap, "%s", v) < (int)cap;
    v = wio_env("WAITIO_RENDEZVOUS");
    if (v && *v)
        return snprintf(buf, cap, "%s.host", v) < (int)cap;
    const char *home = getenv("HOME");
    if (!home || !*home)
        return false;
    char dir[MAX_PATH];
    if (snprintf(dir, sizeof dir, "%s/.waitio", home) >= (int)sizeof dir)
        return false;
    if (create_dir && mkdir(dir, 0700) != 0 && errno != EEXIST) {
        fprintf(stderr, "waitio-serv: cannot create %s: %s\n", dir, strerror(errno));
        return false;
    }
    return snprintf(buf, cap, "%s/master_host", dir) < (int)cap;
}

/* ---------------------------------------------------------------- -d: publish */

static bool valid_host(const char *host)
{
    return host && *host && strlen(host) < MAX_HOST && !strpbrk(host, " \t\r\n");
}

static bool write_all(int fd, const char *text)
{
    size_t left = strlen(text);
    while (left > 0) {
        ssize_t n = write(fd, text, left);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        text += n;
        left -= (size_t)n;
    }
    return true;
}

/* Writes "HOST\n[PORT\n]" to a temporary file beside path and renames it over path, so that a
 * reader sees either nothing or the whole content. The temporary file gets an unpredictable
 * name from mkstemp (created exclusively, mode 0600): a symlink another user planted in a
 * shared directory is never followed. */
static int publish(const char *path, const char *host)
{
    char tmp[MAX_PATH + 16], content[MAX_HOST + 32];
    if (snprintf(tmp, sizeof tmp, "%s.XXXXXX", path) >= (int)sizeof tmp) {
        fprintf(stderr, "waitio-serv: path too long: %s\n", path);
        return 1;
    }
    const char *port = wio_env("WAITIO_MASTER_PORT");
    if (port && *port && strspn(port, "0123456789") == strlen(port))
        snprintf(content, sizeof content, "%s\n%s\n", host, port);
    else
        snprintf(content, sizeof content, "%s\n", host);

    int fd = mkstemp(tmp);
    if (fd < 0) {
        fprintf(stderr, "waitio-serv: cannot create a temporary file beside %s: %s\n", path,
                strerror(errno));
        return 1;
    }
    bool ok = fchmod(fd, 0600) == 0 && write_all(fd, content) && fsync(fd) == 0;
    int err = errno;
    ok = close(fd) == 0 && ok;
    if (ok && rename(tmp, path) == 0)
        return 0;
    if (ok)
        err = errno;
    fprintf(stderr, "waitio-serv: cannot publish the host in %s: %s\n", path, strerror(err));
    unlink(tmp);
    return 1;
}

/* ---------------------------------------------------------------- -c: wait and print */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Reads the published host and port (port "" when none); false while nothing is published. */
static bool read_published(const char *path, char *host, size_t host_cap, char *port,
                           size_t port_cap)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool got = fgets(host, (int)host_cap, f) != NULL;
    if (!fgets(port, (int)port_cap, f))
        port[0] = '\0';
    fclose(f);
    host[strcspn(host, "\r\n")] = '\0';
    port[strcspn(port, "\r\n")] = '\0';
    return got && host[0];
}

/* Say what -c waits for as the library's start-up does (a notice, shown by default: after 5 s
 * of waiting, then at every 10 s), unless WAITIO_LOG=off; on stderr: job scripts capture stdout
 * with backquotes. */
static bool log_notices(void)
{
    const char *v = wio_env("WAITIO_LOG");
    return !(v && !strcasecmp(v, "off"));
}

static int wait_and_print(const char *path, const request_t *r)
{
    char host[MAX_HOST + 2], port[32];
    struct timespec pause = {0, POLL_NS};
    double start = now(), deadline = start + r->timeout, next_report = start + REPORT_FIRST_SECONDS;
    bool verbose = log_notices();
    for (;;) {
        if (read_published(path, host, sizeof host, port, sizeof port))
            break;
        if (verbose && now() >= next_report) {
            fprintf(stderr, "waitio-serv: NOTICE: waiting for PB 0's job to publish the master host "
                    "in %s ('waitio-serv -d -m HOST'); %.0f s of %g s\n", path, now() - start,
                    r->timeout);
            int done = (int)((now() - start) / REPORT_EVERY_SECONDS);
            next_report = start + REPORT_EVERY_SECONDS * (done + 1);
        }
        if (now() >= deadline) {
            fprintf(stderr,
                    "waitio-serv: no master host published in %s after %g s (has PB 0's job run "
                    "'waitio-serv -d -m HOST' with the same HOME/WAITIO_RENDEZVOUS/"
                    "WAITIO_SERV_FILE?)\n",
                    path, r->timeout);
            return 1;
        }
        nanosleep(&pause, NULL);
    }
    if (!r->want_port) {
        printf("%s\n", host);
        return 0;
    }
    if (!port[0]) {
        fprintf(stderr, "waitio-serv: %s has no port (PB 0's job did not set "
                "WAITIO_MASTER_PORT; the default applies)\n", path);
        return 1;
    }
    printf("%s\n", port);
    return 0;
}

/* ---------------------------------------------------------------- -x: remove */

static int remove_published(const char *path)
{
    if (unlink(path) == 0 || errno == ENOENT)
        return 0;
    fprintf(stderr, "waitio-serv: cannot remove %s: %s\n", path, strerror(errno));
    return 1;
}

/* ---------------------------------------------------------------- command line */

static bool set_mode(request_t *r, char mode)
{
    if (r->mode && r->mode != mode) {
        fprintf(stderr, "waitio-serv: -%c and -%c cannot be combined\n", r->mode, mode);
        return false;
    }
    r->mode = mode;
    return true;
}

static bool parse_seconds(const char *text, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end || v < 0)
        return false;
    *out = v;
    return true;
}

/* Options, parsed with getopt_long: the original's one-letter options, a long name for each. */
enum { OPT_VERSION = 256 };
static const struct option long_options[] = {
    {"publish", no_argument, NULL, 'd'},    {"lookup", no_argument, NULL, 'c'},
    {"remove", no_argument, NULL, 'x'},     {"master", required_argument, NULL, 'm'},
    {"timeout", required_argument, NULL, 't'}, {"port", no_argument, NULL, 'P'},
    {"help", no_argument, NULL, 'h'},       {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0}};

/* Applies one parsed option; returns -1 to go on, else the exit status to return at once. */
static int apply_option(int opt, request_t *r)
{
    switch (opt) {
    case 'd':
    case 'c':
    case 'x':
        return set_mode(r, (char)opt) ? -1 : EXIT_USAGE;
    case 'm':
        r->host = optarg;
        return -1;
    case 't':
        if (parse_seconds(optarg, &r->timeout))
            return -1;
        fprintf(stderr, "waitio-serv: -t needs a number of seconds, got '%s'\n", optarg);
        return EXIT_USAGE;
    case 'P':
        r->want_port = true;
        return -1;
    case 'h':
        usage(stdout);
        return 0;
    case OPT_VERSION:
        printf("waitio-serv (WaitIO) %s\n", WAITIO_VERSION_STRING);
        return 0;
    default: /* '?': getopt_long named the unknown option or the missing value */
        usage(stderr);
        return EXIT_USAGE;
    }
}

/* Returns -1 when parsed, else the exit status to return at once. */
static int parse_args(int argc, char **argv, request_t *r)
{
    int opt;
    while ((opt = getopt_long(argc, argv, "dcxm:t:Ph", long_options, NULL)) != -1) {
        int code = apply_option(opt, r);
        if (code >= 0)
            return code;
    }
    if (optind < argc) {
        fprintf(stderr, "waitio-serv: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return EXIT_USAGE;
    }
    if (!r->mode && r->host)
        r->mode = 'd'; /* "-m HOST" alone publishes too */
    if (!r->mode) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (r->mode == 'd' && !valid_host(r->host)) {
        fprintf(stderr, "waitio-serv: -d needs -m HOST (a host name or address, no spaces)\n");
        return EXIT_USAGE;
    }
    return -1;
}

int main(int argc, char **argv)
{
    request_t r = {.timeout = DEFAULT_WAIT_SECONDS};
    int code = parse_args(argc, argv, &r);
    if (code >= 0)
        return code;
    char path[MAX_PATH];
    if (!location(path, sizeof path, r.mode == 'd')) {
        fprintf(stderr, "waitio-serv: no place to publish the master host (set HOME, "
                "WAITIO_RENDEZVOUS or WAITIO_SERV_FILE)\n");
        return 1;
    }
    switch (r.mode) {
    case 'd':
        return publish(path, r.host);
    case 'x':
        return remove_published(path);
    default:
        return wait_and_print(path, &r);
    }
}
