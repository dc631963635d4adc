/*
 * waitiorun — starts all PBs of a WaitIO instance from one command line (SPEC §3):
 *
 *   waitiorun [options] -- CMD ARGS... : -- CMD ARGS... [: -- ...]
 *
 * Each segment is one PB's command (a plain program, python3, mpirun.openmpi, mpirun.mpich,
 * srun, ...). waitiorun picks a free port, generates a fresh instance key (unless WAITIO_KEY is
 * set), sets WAITIO_PBID/NPB/MASTER_HOST/MASTER_PORT/KEY for each PB, forwards SIGINT, SIGTERM
 * and SIGHUP to every PB, and when one PB fails it stops the others (SIGTERM, then SIGKILL after
 * a grace period) and exits non-zero. As a child subreaper it also collects and kills whatever
 * a PB left behind, so no process outlives it. Plain C11 + POSIX; it does not link libwaitio.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <dirent.h>
#include <unistd.h>

#define MAX_PBS 256

typedef struct pb {
    char **argv;
    pid_t pid;       /* also its process group id */
    int running;
    int status;      /* wait status once exited */
} pb;

static pb pbs[MAX_PBS];
static int npbs;
static volatile sig_atomic_t pending_signal, child_exited;
static int quiet;
static double grace = 2.0;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: waitiorun [options] -- CMD [ARGS...] : -- CMD [ARGS...] [: -- ...]\n"
            "Starts one PB per command and couples them into one WaitIO instance.\n\n"
            "options:\n"
            "  -t, --timeout SECONDS  stop everything and exit 124 after this long\n"
            "  -H, --host HOST        master host advertised to the PBs (default 127.0.0.1)\n"
            "  -p, --port PORT        master port (default: a free one)\n"
            "      --grace SECONDS    between SIGTERM and SIGKILL when stopping PBs (default 2)\n"
            "  -q, --quiet            no messages from waitiorun itself\n"
            "  -h, --help             this text\n"
            "      --version          version\n\n"
            "Each PB gets WAITIO_PBID, WAITIO_NPB, WAITIO_MASTER_HOST, WAITIO_MASTER_PORT and\n"
            "WAITIO_KEY (a fresh random key unless WAITIO_KEY is already set). Exit status: 0 if\n"
            "every PB exits 0; else the first failing PB's status (128+N for signal N), 124 on\n"
            "timeout, 128+N when waitiorun itself got signal N.\n");
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    if (quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("waitiorun: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A free TCP port on host (bound and released: the master binds it right after). */
static int pick_port(const char *host)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res;
    if (getaddrinfo(host, "0", &hints, &res) != 0)
        return -1;
    int port = -1;
    int fd = socket(res->ai_family, SOCK_STREAM, 0);
    if (fd >= 0 && bind(fd, res->ai_addr, res->ai_addrlen) == 0) {
        struct sockaddr_storage ss;
        socklen_t len = sizeof ss;
        if (getsockname(fd, (struct sockaddr *)&ss, &len) == 0)
            port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                                  : ((struct sockaddr_in *)&ss)->sin_port);
    }
    if (fd >= 0)
        close(fd);
    freeaddrinfo(res);
    return port;
}

static int make_key(char out[65])
{
    unsigned char raw[32];
    if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw)
        return -1;
    for (int i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", raw[i]);
    return 0;
}

static void on_signal(int sig) { pending_signal = sig; }
static void on_child(int sig) { (void)sig; child_exited = 1; }

static void install_handlers(void)
{
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sa.sa_handler = on_child;
    sigaction(SIGCHLD, &sa, NULL);
}

/* Splits argv after the options into PB commands; returns the PB count or -1. */
static int parse_segments(int argc, char **argv, int first)
{
    int i = first;
    while (i < argc) {
        if (strcmp(argv[i], "--") == 0)
            i++;
        if (i >= argc || strcmp(argv[i], ":") == 0)
            return -1; /* empty command */
        if (npbs == MAX_PBS)
            return -1;
        pbs[npbs].argv = &argv[i];
        while (i < argc && strcmp(argv[i], ":") != 0)
            i++;
        if (i < argc) {
            argv[i] = NULL; /* terminates this PB's argv */
            i++;
            if (i >= argc)
                return -1; /* trailing ':' */
        }
        npbs++;
    }
    return npbs;
}

static void set_env_int(const char *name, int v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%d", v);
    setenv(name, buf, 1);
}

static pid_t start_pb(int i, const char *host, int port, const char *key)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        setpgid(0, 0);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        signal(SIGCHLD, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        set_env_int("WAITIO_PBID", i);
        set_env_int("WAITIO_NPB", npbs);
        set_env_int("WAITIO_MASTER_PORT", port);
        setenv("WAITIO_MASTER_HOST", host, 1);
        setenv("WAITIO_KEY", key, 1);
        unsetenv("WAITIO_RENDEZVOUS"); /* host/port given here win */
        execvp(pbs[i].argv[0], pbs[i].argv);
        fprintf(stderr, "waitiorun: cannot run '%s': %s\n", pbs[i].argv[0], strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid); /* both sides set it: whichever runs first */
    return pid;
}

static void signal_pbs(int sig)
{
    for (int i = 0; i < npbs; i++)
        if (pbs[i].running)
            kill(-pbs[i].pid, sig);
}

/* Kills every remaining descendant: the PBs' process groups, then any process that was
 * reparented to us (we are a subreaper) and escaped its group. */
static void kill_leftovers(void)
{
    for (int i = 0; i < npbs; i++)
        kill(-pbs[i].pid, SIGKILL);
    pid_t self = getpid();
    for (int round = 0; round < 50; round++) {
        int found = 0;
        DIR *d = opendir("/proc");
        struct dirent *ent;
        while (d && (ent = readdir(d))) {
            pid_t p = (pid_t)atoi(ent->d_name);
            if (p <= 0)
                continue;
            char path[64], line[512];
            snprintf(path, sizeof path, "/proc/%d/stat", (int)p);
            FILE *f = fopen(path, "r");
            if (!f)
                continue;
            int ppid = -1;
            if (fgets(line, sizeof line, f)) {
                char *close_paren = strrchr(line, ')');
                if (close_paren)
                    sscanf(close_paren + 2, "%*c %d", &ppid);
            }
            fclose(f);
            if (ppid == self) {
                kill(p, SIGKILL);
                found = 1;
            }
        }
        if (d)
            closedir(d);
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        if (!found)
            break;
        usleep(20000);
    }
}

static int status_code(int st)
{
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return 1;
}

static const char *pb_name(int i, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s", pbs[i].argv[0]);
    for (char **a = pbs[i].argv + 1; *a && strlen(buf) + strlen(*a) + 2 < cap; a++) {
        strcat(buf, " ");
        strcat(buf, *a);
    }
    return buf;
}

/* Reaps exited children; returns the index of a PB that failed, or -1. */
static int reap(int *alive)
{
    int failed = -1, st;
    pid_t p;
    while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
        for (int i = 0; i < npbs; i++) {
            if (pbs[i].pid != p || !pbs[i].running)
                continue;
            pbs[i].running = 0;
            pbs[i].status = st;
            (*alive)--;
            if (status_code(st) != 0 && failed < 0)
                failed = i;
        }
    }
    return failed;
}

int main(int argc, char **argv)
{
    const char *host = "127.0.0.1";
    int port = 0;
    double timeout = 0;
    int i = 1;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--version")) {
            printf("waitiorun (WaitIO) 0.1.0\n");
            return 0;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = 1;
        } else if ((!strcmp(a, "-t") || !strcmp(a, "--timeout")) && i + 1 < argc) {
            timeout = atof(argv[++i]);
        } else if ((!strcmp(a, "-H") || !strcmp(a, "--host")) && i + 1 < argc) {
            host = argv[++i];
        } else if ((!strcmp(a, "-p") || !strcmp(a, "--port")) && i + 1 < argc) {
            port = atoi(argv[++i]);
        } else if (!strcmp(a, "--grace") && i + 1 < argc) {
            grace = atof(argv[++i]);
        } else {
            fprintf(stderr, "waitiorun: unknown option '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (i >= argc || parse_segments(argc, argv, i) < 1) {
        fprintf(stderr, "waitiorun: expected '-- CMD ... [: -- CMD ...]'\n");
        usage(stderr);
        return 2;
    }
    if (port <= 0 && (port = pick_port(host)) <= 0) {
        fprintf(stderr, "waitiorun: cannot find a free port on %s\n", host);
        return 1;
    }
    char fresh[65];
    const char *key = getenv("WAITIO_KEY"); /* an instance key given by the user passes through */
    if (!key || !*key) {
        if (make_key(fresh) != 0) {
            fprintf(stderr, "waitiorun: cannot generate a key: %s\n", strerror(errno));
            return 1;
        }
        key = fresh;
    }
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGCHLD);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    sigprocmask(SIG_BLOCK, &block, &old);
    install_handlers();
    int alive = 0;
    for (int k = 0; k < npbs; k++) {
        pbs[k].pid = start_pb(k, host, port, key);
        if (pbs[k].pid < 0) {
            fprintf(stderr, "waitiorun: fork failed: %s\n", strerror(errno));
            signal_pbs(SIGKILL);
            kill_leftovers();
            return 1;
        }
        pbs[k].running = 1;
        alive++;
    }
    say("started %d PBs, master at %s:%d", npbs, host, port);
    double start = now(), kill_at = 0;
    int exit_code = 0, stopping = 0;
    char name[256];
    while (alive > 0) {
        struct timespec tick = {0, 50 * 1000 * 1000};
        sigset_t waitset = old;
        pselect(0, NULL, NULL, NULL, &tick, &waitset); /* wakes on signals and SIGCHLD */
        if (pending_signal) {
            int sig = pending_signal;
            pending_signal = 0;
            say("got signal %d: forwarding it to every PB", sig);
            signal_pbs(sig);
            if (!stopping) {
                stopping = 1;
                exit_code = 128 + sig;
                kill_at = now() + grace;
            }
        }
        child_exited = 0;
        int failed = reap(&alive);
        if (failed >= 0 && !stopping) {
            exit_code = status_code(pbs[failed].status);
            say("PB %d (%s) exited with status %d; stopping the others", failed,
                pb_name(failed, name, sizeof name), exit_code);
            stopping = 1;
            signal_pbs(SIGTERM);
            kill_at = now() + grace;
        }
        if (timeout > 0 && !stopping && now() - start > timeout) {
            say("timeout after %g s: stopping every PB", timeout);
            exit_code = 124;
            stopping = 1;
            signal_pbs(SIGTERM);
            kill_at = now() + grace;
        }
        if (stopping && kill_at > 0 && now() > kill_at) {
            signal_pbs(SIGKILL);
            kill_at = 0;
        }
    }
    kill_leftovers();
    return exit_code;
}
