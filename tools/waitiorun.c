/*
 * waitiorun — starts all PBs of a WaitIO instance from one command line (SPEC §3):
 *
 *   waitiorun [options] -- CMD ARGS... : -- CMD ARGS... [: -- ...]
 *
 * Owns: option and segment parsing, the instance variables each PB gets (WAITIO_PBID, _NPB,
 * _MASTER_HOST, _MASTER_PORT, _KEY), starting every PB in its own process group, forwarding
 * SIGINT/SIGTERM/SIGHUP, stopping the others when one PB fails (SIGTERM, SIGKILL after a grace
 * period), the timeout, and making sure no process outlives it: it is a child subreaper and at the
 * end kills every remaining descendant found through /proc.
 *
 * Plain C11 + POSIX (+ Linux prctl and /proc); it does not link libwaitio.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "waitio_version.h" /* generated from the project's VERSION */
#include "core/settings.h"  /* wio_env: WAITIO_* variables are read through the registry */

#define MAX_PBS 1024
#define KEY_BYTES 32
#define EXIT_USAGE 2
#define EXIT_TIMEOUT 124
#define EXIT_CANNOT_RUN 127
#define TICK_NS (50 * 1000 * 1000)

typedef struct pb {
    char **argv;  /* NULL-terminated command */
    pid_t pid;    /* also its process group id */
    bool running; /* started and not reaped yet: only then is pid (and the group id) ours */
    int status;   /* wait status once reaped */
    bool told_stopped; /* "stopped by SIGTTIN" already reported */
} pb_t;

typedef struct options {
    const char *host;
    int port;       /* 0: pick a free one */
    double timeout; /* seconds, 0: none */
    double grace;   /* seconds between SIGTERM and SIGKILL */
    bool quiet;
} options_t;

static pb_t pbs[MAX_PBS];
static int npbs;
static bool quiet;
static int first_failed_pb = -1;
static volatile sig_atomic_t pending_signal;

/* ---------------------------------------------------------------- messages */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: waitiorun [options] -- CMD [ARGS...] : -- CMD [ARGS...] [: -- ...]\n"
            "Starts one PB per command and couples them into one WaitIO instance.\n"
            "Example: waitiorun -- mpirun -np 4 ./sim : -- python3 learn.py\n\n"
            "options:\n"
            "  -t, --timeout SECONDS  stop everything and exit 124 after this long\n"
            "  -H, --host HOST        master host advertised to the PBs (default 127.0.0.1)\n"
            "  -p, --port PORT        master port (default: a free one)\n"
            "      --grace SECONDS    between SIGTERM and SIGKILL when stopping PBs (default 2)\n"
            "  -q, --quiet            only error messages from waitiorun itself\n"
            "  -h, --help             this text\n"
            "      --version          version\n\n"
            "PB i gets WAITIO_PBID=i, WAITIO_NPB, WAITIO_MASTER_HOST, WAITIO_MASTER_PORT and\n"
            "WAITIO_KEY (a fresh random key unless WAITIO_KEY is already set).\n"
            "SIGINT, SIGTERM and SIGHUP are forwarded to every PB. When a PB fails the others\n"
            "are stopped. Exit status: 0 if every PB exits 0; else the first failing PB's status\n"
            "(128+N for signal N), 124 on timeout, 128+N when waitiorun itself got signal N,\n"
            "2 for a usage error, 127 when a command cannot be run.\n");
}

static void vmessage(const char *fmt, va_list ap)
{
    fputs("waitiorun: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

/* Informational message, silenced by -q. */
static void info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void info(const char *fmt, ...)
{
    if (quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    vmessage(fmt, ap);
    va_end(ap);
}

/* Error message, always printed. */
static void error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmessage(fmt, ap);
    va_end(ap);
}

/* "CMD ARGS..." of PB i (arguments with spaces or shell characters in '...'), shortened to
 * fit cap. */
static const char *pb_command_text(int i, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (char **a = pbs[i].argv; *a; a++) {
        bool plain = **a && strspn(*a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                         "0123456789-_./=:,+@%") == strlen(*a);
        const char *quote = plain ? "" : "'";
        int n = snprintf(buf + used, cap - used, "%s%s%s%s", a == pbs[i].argv ? "" : " ", quote,
                         *a, quote);
        if (n < 0 || (size_t)n >= cap - used) {
            if (cap > 4)
                strcpy(buf + cap - 4, "...");
            break;
        }
        used += (size_t)n;
    }
    return buf;
}

/* ---------------------------------------------------------------- command line */

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

static bool parse_port(const char *text, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < 1 || v > 65535)
        return false;
    *out = (int)v;
    return true;
}

/* Options, parsed with getopt_long; "+" stops at the first non-option, so that the programs'
 * own options are never taken for ours, and the "--" before the first command ends them (and is
 * required: a bare word there is a usage error). Long-only options get codes above any char. */
enum { OPT_VERSION = 256, OPT_GRACE };
static const struct option long_options[] = {
    {"help", no_argument, NULL, 'h'},         {"version", no_argument, NULL, OPT_VERSION},
    {"quiet", no_argument, NULL, 'q'},        {"timeout", required_argument, NULL, 't'},
    {"host", required_argument, NULL, 'H'},   {"port", required_argument, NULL, 'p'},
    {"grace", required_argument, NULL, OPT_GRACE}, {NULL, 0, NULL, 0}};

/* Applies one option with a value; false if the value is not valid for it. */
static bool apply_option(int opt, const char *v, options_t *o)
{
    switch (opt) {
    case 'q':
        o->quiet = true;
        return true;
    case 't':
        return parse_seconds(v, &o->timeout);
    case 'H':
        o->host = v;
        return *v != '\0';
    case 'p':
        return parse_port(v, &o->port);
    case OPT_GRACE:
        return parse_seconds(v, &o->grace);
    default:
        return false;
    }
}

/* Parses the options; returns the index of the first PB's command (after the "--", which
 * getopt_long consumed), or -1 after printing an error (exit_code 2), or argc with exit_code 0
 * for --help/--version. */
static int parse_options(int argc, char **argv, options_t *o, int *exit_code)
{
    *exit_code = EXIT_USAGE;
    int opt;
    const char *last_value = NULL; /* so that "-H --" is not taken for the end of the options */
    while ((opt = getopt_long(argc, argv, "+hqt:H:p:", long_options, NULL)) != -1) {
        if (opt == 'h') {
            usage(stdout);
            *exit_code = 0;
            return argc;
        }
        if (opt == OPT_VERSION) {
            printf("waitiorun (WaitIO) %s\n", WAITIO_VERSION_STRING);
            *exit_code = 0;
            return argc;
        }
        if (opt == '?') { /* getopt_long named the unknown option or the missing value */
            usage(stderr);
            return -1;
        }
        if (!apply_option(opt, optarg, o)) {
            error("option '%s' needs a valid value, got '%s' (see waitiorun --help)",
                  argv[optind - 1] == optarg ? argv[optind - 2] : argv[optind - 1], optarg);
            return -1;
        }
        last_value = optarg;
    }
    bool ended_by_dashes = optind > 1 && !strcmp(argv[optind - 1], "--") && argv[optind - 1] != last_value;
    if (optind < argc && !ended_by_dashes) {
        error("expected '--' before the first command, got '%s' (see waitiorun --help)", argv[optind]);
        return -1;
    }
    if (optind >= argc) {
        error("no command: expected '-- CMD ... [: -- CMD ...]' (see waitiorun --help)");
        return -1;
    }
    return optind;
}

/* Splits argv[first..] ("-- CMD... : -- CMD... : ...") into the PB commands, in place: each
 * ':' becomes the NULL ending the previous command. Returns false after printing an error. */
static bool parse_segments(int argc, char **argv, int first)
{
    int i = first;
    while (i <= argc) {
        if (i < argc && strcmp(argv[i], "--") == 0)
            i++;
        if (i >= argc || strcmp(argv[i], ":") == 0) {
            error("PB %d has no command (segments are '-- CMD ARGS...' separated by ':')", npbs);
            return false;
        }
        if (npbs == MAX_PBS) {
            error("too many PBs (at most %d)", MAX_PBS);
            return false;
        }
        pbs[npbs++].argv = &argv[i];
        while (i < argc && strcmp(argv[i], ":") != 0)
            i++;
        if (i == argc)
            return true;
        argv[i++] = NULL; /* the ':' ends this PB's argv */
    }
    return true;
}

/* ---------------------------------------------------------------- instance settings */

/* Binds addr (its port set by the caller; 0 = the kernel chooses) and returns the port bound, or -1. */
static int free_port_at(const struct sockaddr *addr, socklen_t addrlen)
{
    int port = -1;
    int fd = socket(addr->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    if (bind(fd, addr, addrlen) == 0 && getsockname(fd, (struct sockaddr *)&ss, &len) == 0)
        port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                              : ((struct sockaddr_in *)&ss)->sin_port);
    close(fd);
    return port;
}

static void set_port(struct sockaddr *a, int port)
{
    if (a->sa_family == AF_INET6)
        ((struct sockaddr_in6 *)a)->sin6_port = htons((uint16_t)port);
    else
        ((struct sockaddr_in *)a)->sin_port = htons((uint16_t)port);
}

/* The first port of the kernel's ephemeral range (the source ports of outgoing connections). */
static int ephemeral_low(void)
{
    int lo = 32768, hi = 60999;
    FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
    if (f) {
        if (fscanf(f, "%d %d", &lo, &hi) != 2)
            lo = 32768;
        fclose(f);
    }
    return lo;
}

/* A free port at addr, bound and released (the master binds it right after). Drawn at random
 * below the ephemeral range: a port the kernel hands out there may be taken, in between, as
 * the source port of any process's outgoing connection ("Address already in use" at the
 * master). The kernel's choice only when 64 draws found nothing free. */
static int free_port_below_ephemeral(struct sockaddr *addr, socklen_t addrlen)
{
    int lo = 15000, hi = ephemeral_low();
    for (int i = 0; hi - lo > 1000 && i < 64; i++) {
        uint32_t r = 0;
        if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
            break;
        set_port(addr, lo + (int)(r % (uint32_t)(hi - lo)));
        int port = free_port_at(addr, addrlen);
        if (port > 0)
            return port;
    }
    set_port(addr, 0);
    return free_port_at(addr, addrlen);
}

/* A free TCP port on host. When host is not an address of this machine (the master runs
 * elsewhere), a port free here is the best guess. */
static int pick_port(const char *host)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
    int port = -1;
    if (getaddrinfo(host, "0", &hints, &res) == 0) {
        for (struct addrinfo *ai = res; ai && port <= 0; ai = ai->ai_next)
            port = free_port_below_ephemeral(ai->ai_addr, ai->ai_addrlen);
        freeaddrinfo(res);
    }
    if (port <= 0) {
        struct sockaddr_in any = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
        port = free_port_below_ephemeral((struct sockaddr *)&any, sizeof any);
    }
    return port;
}

/* A fresh random key, hex encoded. */
static bool make_key(char out[2 * KEY_BYTES + 1])
{
    unsigned char raw[KEY_BYTES];
    size_t got = 0;
    while (got < sizeof raw) {
        ssize_t n = getrandom(raw + got, sizeof raw - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        got += (size_t)n;
    }
    for (int i = 0; i < KEY_BYTES; i++)
        snprintf(out + 2 * i, 3, "%02x", raw[i]);
    return true;
}

static void set_env_int(const char *name, int v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%d", v);
    setenv(name, buf, 1);
}

/* ---------------------------------------------------------------- signals */

static void on_forwarded_signal(int sig) { pending_signal = sig; }
static void on_child(int sig) { (void)sig; /* only wakes pselect */ }

static const int forwarded_signals[] = {SIGINT, SIGTERM, SIGHUP};
#define NFORWARDED (int)(sizeof forwarded_signals / sizeof forwarded_signals[0])

/* Blocks the signals we handle (they are taken only inside pselect), installs the handlers, and
 * returns the previous mask in *unblocked. */
static void install_signal_handlers(sigset_t *unblocked)
{
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGCHLD);
    for (int k = 0; k < NFORWARDED; k++)
        sigaddset(&block, forwarded_signals[k]);
    sigprocmask(SIG_BLOCK, &block, unblocked);
    for (int k = 0; k < NFORWARDED; k++)
        sigdelset(unblocked, forwarded_signals[k]);
    sigdelset(unblocked, SIGCHLD);

    struct sigaction sa = {0};
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_forwarded_signal;
    for (int k = 0; k < NFORWARDED; k++)
        sigaction(forwarded_signals[k], &sa, NULL);
    sa.sa_handler = on_child;
    sigaction(SIGCHLD, &sa, NULL);
}

/* In a new PB process: default dispositions and an empty mask, as a freshly started program
 * expects. */
static void reset_signals_in_child(void)
{
    for (int k = 0; k < NFORWARDED; k++)
        signal(forwarded_signals[k], SIG_DFL);
    signal(SIGCHLD, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

/* Sends sig to the process group of every PB not reaped yet (a reaped PB's id may be reused). */
static void signal_pbs(int sig)
{
    for (int i = 0; i < npbs; i++)
        if (pbs[i].running && kill(-pbs[i].pid, sig) != 0 && errno == ESRCH)
            kill(pbs[i].pid, sig);
}

/* ---------------------------------------------------------------- starting PBs */

/* Forks PB i into its own process group and execs its command. Returns its pid, or -1 after
 * printing why (fork failed, or the command could not be run: reported through a close-on-exec
 * pipe that stays silent when exec succeeds). */
static pid_t start_pb(int i, const char *host, int port, const char *key)
{
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) {
        error("pipe: %s", strerror(errno));
        return -1;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        error("fork: %s", strerror(errno));
        close(report[0]);
        close(report[1]);
        return -1;
    }
    if (pid == 0) {
        close(report[0]);
        setpgid(0, 0);
        reset_signals_in_child();
        /* if waitiorun itself is SIGKILLed, the PB's command gets SIGTERM and can clean up */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent)
            _exit(EXIT_CANNOT_RUN);
        set_env_int("WAITIO_PBID", i);
        set_env_int("WAITIO_NPB", npbs);
        set_env_int("WAITIO_MASTER_PORT", port);
        setenv("WAITIO_MASTER_HOST", host, 1);
        setenv("WAITIO_KEY", key, 1);
        unsetenv("WAITIO_RENDEZVOUS"); /* the host/port given here win over a rendezvous file */
        execvp(pbs[i].argv[0], pbs[i].argv);
        int err = errno;
        ssize_t ignored = write(report[1], &err, sizeof err);
        (void)ignored;
        _exit(EXIT_CANNOT_RUN);
    }
    setpgid(pid, pid); /* both sides set it: whichever runs first */
    close(report[1]);
    int child_errno = 0;
    ssize_t n;
    while ((n = read(report[0], &child_errno, sizeof child_errno)) < 0 && errno == EINTR)
        ;
    close(report[0]);
    if (n > 0) {
        error("PB %d: cannot run '%s': %s", i, pbs[i].argv[0], strerror(child_errno));
        waitpid(pid, NULL, 0);
        return -1;
    }
    return pid;
}

/* ---------------------------------------------------------------- no orphans */

typedef struct proc_entry {
    pid_t pid, ppid;
} proc_entry_t;

/* Reads (pid, ppid) of every process from /proc into a growing array; returns the count. */
static size_t read_process_table(proc_entry_t **table, size_t *cap)
{
    size_t n = 0;
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL) {
        char *end;
        long pid = strtol(ent->d_name, &end, 10);
        if (*end || pid <= 0)
            continue;
        char path[64], line[512];
        snprintf(path, sizeof path, "/proc/%ld/stat", pid);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        int ppid = -1;
        if (fgets(line, sizeof line, f)) {
            char *after_name = strrchr(line, ')'); /* the name may contain spaces and ')' */
            if (after_name)
                sscanf(after_name + 1, " %*c %d", &ppid);
        }
        fclose(f);
        if (ppid < 0)
            continue;
        if (n == *cap) {
            size_t grown = *cap ? 2 * *cap : 256;
            proc_entry_t *t = realloc(*table, grown * sizeof **table);
            if (!t)
                break;
            *table = t;
            *cap = grown;
        }
        (*table)[n++] = (proc_entry_t){(pid_t)pid, (pid_t)ppid};
    }
    closedir(d);
    return n;
}

static int compare_pid(const void *a, const void *b)
{
    pid_t x = ((const proc_entry_t *)a)->pid, y = ((const proc_entry_t *)b)->pid;
    return (x > y) - (x < y);
}

/* SIGKILLs every process whose parent chain leads to us; returns how many were found. */
static int kill_descendants_once(proc_entry_t **table, size_t *cap)
{
    size_t n = read_process_table(table, cap);
    proc_entry_t *t = *table;
    qsort(t, n, sizeof *t, compare_pid);
    bool *mine = calloc(n ? n : 1, sizeof *mine);
    long *parent = calloc(n ? n : 1, sizeof *parent); /* index of the parent in t, or -1 */
    int found = 0;
    if (!mine || !parent)
        goto out;
    pid_t self = getpid();
    for (size_t k = 0; k < n; k++) {
        proc_entry_t key = {.pid = t[k].ppid};
        proc_entry_t *p = bsearch(&key, t, n, sizeof *t, compare_pid);
        parent[k] = p ? p - t : -1;
    }
    for (bool grew = true; grew;) { /* mark our children, then children of marked ones */
        grew = false;
        for (size_t k = 0; k < n; k++) {
            if (mine[k] || !(t[k].ppid == self || (parent[k] >= 0 && mine[parent[k]])))
                continue;
            mine[k] = grew = true;
            kill(t[k].pid, SIGKILL);
            found++;
        }
    }
out:
    free(mine);
    free(parent);
    return found;
}

static int exit_code_of(int wait_status)
{
    if (WIFEXITED(wait_status))
        return WEXITSTATUS(wait_status);
    if (WIFSIGNALED(wait_status))
        return 128 + WTERMSIG(wait_status);
    return 1;
}

/* A PB stopped by SIGTTIN/SIGTTOU tried to use the terminal from its background process group:
 * says so once, since otherwise the instance just hangs. */
static void note_stopped_pb(int i, int sig)
{
    if (pbs[i].told_stopped || (sig != SIGTTIN && sig != SIGTTOU))
        return;
    pbs[i].told_stopped = true;
    error("PB %d is stopped (%s): it %s the terminal, but PBs run in background process groups; "
          "redirect its input (< file) or output, or interrupt waitiorun (Ctrl-C)", i,
          sig == SIGTTIN ? "SIGTTIN" : "SIGTTOU",
          sig == SIGTTIN ? "reads from" : "changes or writes to");
}

/* Reaps every exited child (PBs and orphans reparented to us) without blocking; records each
 * PB's status and the first PB that failed. */
static void reap_children(void)
{
    int st;
    pid_t p;
    while ((p = waitpid(-1, &st, WNOHANG | WUNTRACED)) > 0) {
        for (int i = 0; i < npbs; i++) {
            if (!pbs[i].running || pbs[i].pid != p)
                continue;
            if (WIFSTOPPED(st)) {
                note_stopped_pb(i, WSTOPSIG(st));
                continue;
            }
            pbs[i].running = false;
            pbs[i].status = st;
            if (exit_code_of(st) != 0 && first_failed_pb < 0)
                first_failed_pb = i;
        }
    }
}

static int running_pbs(void)
{
    int n = 0;
    for (int i = 0; i < npbs; i++)
        n += pbs[i].running;
    return n;
}

/* Kills everything still running below us: the PBs' groups and every descendant, including
 * processes that left their PB's group or session (reparented to us as the subreaper), until
 * none is left (bounded: about 5 s for processes stuck in the kernel). */
static void kill_all_descendants(void)
{
    signal_pbs(SIGKILL);
    proc_entry_t *table = NULL;
    size_t cap = 0;
    struct timespec pause = {0, 10 * 1000 * 1000};
    for (int round = 0; round < 500; round++) {
        int found = kill_descendants_once(&table, &cap);
        reap_children();
        if (found == 0)
            break;
        if (round == 499)
            error("%d descendant processes could not be killed", found);
        nanosleep(&pause, NULL);
    }
    free(table);
}

/* ---------------------------------------------------------------- supervision */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct supervisor {
    bool stopping;  /* the PBs are being stopped */
    double kill_at; /* when the grace period ends (0: not pending) */
    int exit_code;
} supervisor_t;

static void begin_stop(supervisor_t *s, int code, int sig, double grace)
{
    s->stopping = true;
    s->exit_code = code;
    signal_pbs(sig);
    signal_pbs(SIGCONT); /* a stopped PB acts on the signal only once continued */
    s->kill_at = now() + grace;
}

static void handle_forwarded_signal(supervisor_t *s, double grace)
{
    int sig = pending_signal;
    if (!sig)
        return;
    pending_signal = 0;
    info("got signal %d (%s): forwarding it to every PB", sig, strsignal(sig));
    if (s->stopping)
        signal_pbs(sig);
    else
        begin_stop(s, 128 + sig, sig, grace);
}

static void handle_failure(supervisor_t *s, double grace)
{
    if (first_failed_pb < 0 || s->stopping)
        return;
    int i = first_failed_pb;
    int code = exit_code_of(pbs[i].status);
    char text[256];
    if (WIFSIGNALED(pbs[i].status))
        error("PB %d (%s) was killed by signal %d (%s), status %d; stopping the others", i,
              pb_command_text(i, text, sizeof text), WTERMSIG(pbs[i].status),
              strsignal(WTERMSIG(pbs[i].status)), code);
    else
        error("PB %d (%s) exited with status %d; stopping the others", i,
              pb_command_text(i, text, sizeof text), code);
    begin_stop(s, code, SIGTERM, grace);
}

/* Runs until every PB has been reaped; returns waitiorun's exit status. */
static int supervise(const options_t *o, const sigset_t *unblocked)
{
    supervisor_t s = {0};
    double deadline = o->timeout > 0 ? now() + o->timeout : 0;
    while (running_pbs() > 0) {
        struct timespec tick = {0, TICK_NS};
        pselect(0, NULL, NULL, NULL, &tick, unblocked); /* wakes on our signals and SIGCHLD */
        handle_forwarded_signal(&s, o->grace);
        reap_children();
        handle_failure(&s, o->grace);
        if (deadline > 0 && !s.stopping && now() >= deadline) {
            error("timeout after %g s: stopping every PB", o->timeout);
            begin_stop(&s, EXIT_TIMEOUT, SIGTERM, o->grace);
        }
        if (s.stopping && s.kill_at > 0 && now() >= s.kill_at) {
            info("grace period over: killing what is left");
            kill_all_descendants();
            s.kill_at = 0;
        }
    }
    return s.exit_code;
}

int main(int argc, char **argv)
{
    options_t o = {.host = "127.0.0.1", .grace = 2.0};
    int code;
    int first = parse_options(argc, argv, &o, &code);
    if (first < 0 || first >= argc)
        return code;
    quiet = o.quiet;
    if (!parse_segments(argc, argv, first))
        return EXIT_USAGE;

    int port = o.port;
    if (port == 0 && (port = pick_port(o.host)) <= 0) {
        error("cannot find a free port for the master on %s", o.host);
        return 1;
    }
    char fresh_key[2 * KEY_BYTES + 1];
    const char *key = wio_env("WAITIO_KEY"); /* an instance key given by the user passes through */
    if (!key || !*key) {
        if (!make_key(fresh_key)) {
            error("cannot generate a key: %s", strerror(errno));
            return 1;
        }
        key = fresh_key;
    }

    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
        error("cannot become a child subreaper (%s): escaped grandchildren may survive",
              strerror(errno));
    sigset_t unblocked;
    install_signal_handlers(&unblocked);
    for (int i = 0; i < npbs; i++) {
        pbs[i].pid = start_pb(i, o.host, port, key);
        if (pbs[i].pid < 0) {
            kill_all_descendants();
            return EXIT_CANNOT_RUN;
        }
        pbs[i].running = true;
    }
    info("started %d PB%s, master at %s:%d", npbs, npbs == 1 ? "" : "s", o.host, port);
    code = supervise(&o, &unblocked);
    kill_all_descendants();
    return code;
}
