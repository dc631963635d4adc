/*
 * scale_plain.c — start-up at scale with plain processes (no MPI: ensembles, Python workers), the
 * measurement behind docs/scale.md and bench/run-scale.sh.
 *
 *   waitio-scale-plain launch N [timeout-s]   spawns 2 PBs of N worker processes on this host
 *                                             (posix_spawn: the launcher itself costs little per
 *                                             process), reaps them with wait4 and prints one line:
 *   N=... procs=... spawn_s=... (the launcher's spawning alone) total_s=... (first spawn to last
 *   exit) wall_s=... (the gate opened, see launch(), to the last exit) init_max_s=... init_median_s=... master_rss_kb=... median_rss_kb=...
 *   cpu_ms_per_proc=... (user + system time of all workers / their number) master_cpu_s=...
 *   (PB 0 rank 0's) failed=...
 *
 * A worker (WAITIO_PBID, WAITIO_PB_RANK, WAITIO_PB_SIZE set by the launcher) inits, exchanges a
 * 4 KiB message with the same rank of the other PB, checks every byte, finalizes, and writes
 * "init <pb> <rank> <seconds>" to its stdout (the launcher's result file, O_APPEND: one line
 * each). The wall time runs from the moment every worker is there (the gate) to the last exit;
 * total_s from the first spawn; RSS is each child's maximum
 * resident set as wait4 reports it (the master is PB 0 rank 0). SCALE_INIT_ONLY=1: the workers
 * only init and finalize; SCALE_PB1_ENV: variables for PB 1 alone (see pb1_env).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "waitio.h"

#define MSG_LEN 4096

extern char **environ;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, int rc)
{
    fprintf(stderr, "waitio-scale-plain: %s: %s (%s)\n", what, waitio_strerror(rc), waitio_error_message());
    exit(1);
}

static int everyone(int pb, int rank) { (void)pb; (void)rank; return 1; }

/* The byte i of the message PB pb's rank r sends. */
static uint8_t pattern(int pb, int r, size_t i) { return (uint8_t)(i * 131u + (unsigned)r * 7u + (unsigned)pb * 61u + 1u); }

static int worker(int timeout)
{
    if (getenv("SCALE_GATE")) { /* wait, loaded, until every process is there (EOF on fd 3) */
        char c;
        while (read(3, &c, 1) > 0 || errno == EINTR)
            ;
        close(3);
    }
    double t0 = now();
    int rc = waitio_init(timeout);
    if (rc)
        die("waitio_init", rc);
    double t_init = now() - t0;
    if (getenv("SCALE_INIT_ONLY")) { /* start-up alone (a test whose start-up fails for some) */
        if ((rc = waitio_finalize()))
            die("waitio_finalize", rc);
        printf("init %d %d %.6f\n", -1, -1, t_init);
        return 0;
    }
    int npb, pb, rank, size;
    if ((rc = waitio_pb_size(&npb)) || (rc = waitio_pb_rank(&pb)) || (rc = waitio_local_rank(&rank)) ||
        (rc = waitio_local_size(&size)))
        die("query", rc);
    if (npb != 2)
        die("WAITIO_NPB must be 2", WAITIO_ERR_ENV);
    waitio_filter_func_t f[2] = {everyone, everyone};
    int order[2] = {1, 2};
    waitio_group_t g = waitio_create_group(1, f, order);
    if (!g)
        die("waitio_create_group", WAITIO_ERR_ENV);
    int nprocs[2];
    waitio_get_nprocs(nprocs);
    if (nprocs[0] != nprocs[1])
        die("both PBs must have the same size", WAITIO_ERR_ENV);
    int me = pb * nprocs[0] + rank, partner = (me + nprocs[0]) % (2 * nprocs[0]);
    uint8_t out[MSG_LEN], in[MSG_LEN];
    for (size_t i = 0; i < MSG_LEN; i++)
        out[i] = pattern(pb, rank, i);
    waitio_req_t r[2];
    if ((rc = waitio_irecv(g, partner, (char *)in, sizeof in, 5, &r[0])) ||
        (rc = waitio_isend(g, partner, (char *)out, sizeof out, 5, &r[1])) || (rc = waitio_waitall(2, r)))
        die("exchange", rc);
    if (r[0].status.len != MSG_LEN)
        die("the partner's message has the wrong length", WAITIO_ERR_PROTO);
    for (size_t i = 0; i < MSG_LEN; i++)
        if (in[i] != pattern(1 - pb, rank, i))
            die("the partner's message differs", WAITIO_ERR_PROTO);
    if ((rc = waitio_finalize()))
        die("waitio_finalize", rc);
    printf("init %d %d %.6f\n", pb, rank, t_init);
    return 0;
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Reads the workers' "init" lines: the slowest and the median waitio_init; how many lines. */
static int read_inits(const char *path, int want, double *max, double *median)
{
    *max = *median = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    double *t = calloc((size_t)want, sizeof *t);
    int n = 0, pb, rank;
    double s;
    char line[256];
    while (t && fgets(line, sizeof line, f))
        if (sscanf(line, "init %d %d %lf", &pb, &rank, &s) == 3 && n < want)
            t[n++] = s;
    fclose(f);
    *max = *median = 0;
    if (n) {
        qsort(t, (size_t)n, sizeof *t, cmp_double);
        *max = t[n - 1];
        *median = t[n / 2];
    }
    free(t);
    return n;
}

/* SCALE_PB1_ENV="NAME=VALUE ...": set for PB 1's processes only (tests/scripts/boot_shm.sh
 * makes PB 1 look like another host with it). */
static void pb1_env(int pb)
{
    const char *spec = getenv("SCALE_PB1_ENV");
    char buf[1024];
    if (!spec || !*spec || strlen(spec) >= sizeof buf)
        return;
    snprintf(buf, sizeof buf, "%s", spec);
    char *save = NULL;
    for (char *kv = strtok_r(buf, " ", &save); kv; kv = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq)
            continue;
        *eq = '\0';
        if (pb == 1)
            setenv(kv, eq + 1, 1);
        else
            unsetenv(kv);
    }
}

static int launch(int n, int timeout)
{
    int total = 2 * n;
    char results[] = "/tmp/waitio-scale-XXXXXX";
    int out = mkstemp(results);
    if (out < 0) {
        perror("mkstemp");
        return 1;
    }
    int flags = fcntl(out, F_GETFL);
    fcntl(out, F_SETFL, flags | O_APPEND);
    pid_t *pids = calloc((size_t)total, sizeof *pids);
    long *rss = calloc((size_t)total, sizeof *rss);
    if (!pids || !rss)
        return 1;
    char self[4096];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sl <= 0)
        return 1;
    self[sl] = '\0';
    char sizebuf[16], tbuf[16];
    snprintf(sizebuf, sizeof sizebuf, "%d", n);
    snprintf(tbuf, sizeof tbuf, "%d", timeout);
    setenv("WAITIO_PB_SIZE", sizebuf, 1);
    /* The gate: every worker waits on a pipe until all are spawned, so that the wall time is
     * WaitIO's start-up with every process there, not this launcher's spawning (timed apart). */
    int gate[2];
    if (pipe(gate) != 0)
        return 1;
    setenv("SCALE_GATE", "1", 1);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out, 1);
    posix_spawn_file_actions_adddup2(&fa, gate[0], 3);
    posix_spawn_file_actions_addclose(&fa, gate[1]);
    char *args[] = {self, "worker", tbuf, NULL};
    double t0 = now();
    int failed = 0, spawned = 0;
    for (int i = 0; i < total; i++) { /* PB 0 rank 0 (the master) first */
        char pbid[16], rank[16];
        snprintf(pbid, sizeof pbid, "%d", i % 2);
        snprintf(rank, sizeof rank, "%d", i / 2);
        setenv("WAITIO_PBID", pbid, 1);
        setenv("WAITIO_PB_RANK", rank, 1);
        pb1_env(i % 2);
        int rc = posix_spawn(&pids[i], self, &fa, NULL, args, environ);
        if (rc) {
            fprintf(stderr, "waitio-scale-plain: spawn %d of %d: %s\n", i, total, strerror(rc));
            failed = 1;
            break;
        }
        spawned++;
    }
    posix_spawn_file_actions_destroy(&fa);
    double spawn_s = now() - t0; /* the launcher's own share */
    double t_open = now(); /* before: the woken workers may keep this launcher off the CPU */
    close(gate[0]);
    close(gate[1]); /* open the gate */
    int bad = 0;
    double master_cpu = 0;
    for (int left = spawned; left > 0; left--) {
        int st;
        struct rusage ru;
        pid_t p = wait4(-1, &st, 0, &ru);
        if (p < 0)
            break;
        for (int i = 0; i < spawned; i++)
            if (pids[i] == p) {
                rss[i] = ru.ru_maxrss;
                if (i == 0) /* the master's CPU: registrations and the table's distribution */
                    master_cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
                                 (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
                break;
            }
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            bad++;
    }
    double wall = now() - t_open, total_s = now() - t0;
    double init_max, init_median;
    int reported = read_inits(results, total, &init_max, &init_median);
    long master_rss = rss[0];
    struct rusage kids; /* every worker's CPU time together: the per-process cost */
    getrusage(RUSAGE_CHILDREN, &kids);
    double cpu = (double)kids.ru_utime.tv_sec + (double)kids.ru_utime.tv_usec * 1e-6 +
                 (double)kids.ru_stime.tv_sec + (double)kids.ru_stime.tv_usec * 1e-6;
    qsort(rss, (size_t)spawned, sizeof *rss, cmp_long);
    printf("N=%d procs=%d spawn_s=%.3f total_s=%.3f wall_s=%.3f init_max_s=%.3f init_median_s=%.3f master_rss_kb=%ld median_rss_kb=%ld "
           "cpu_ms_per_proc=%.1f master_cpu_s=%.3f failed=%d\n", n, total, spawn_s, total_s, wall, init_max, init_median, master_rss,
           spawned ? rss[spawned / 2] : 0L, spawned ? 1e3 * cpu / spawned : 0.0, master_cpu, bad + (total - spawned));
    unlink(results);
    close(out);
    free(pids);
    free(rss);
    return failed || bad || reported != total;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "launch") == 0)
        return launch(atoi(argv[2]), argc > 3 ? atoi(argv[3]) : 60);
    if (argc >= 2 && strcmp(argv[1], "worker") == 0)
        return worker(argc > 2 ? atoi(argv[2]) : 60);
    fprintf(stderr, "usage: %s launch N [timeout-s]  (2 PBs of N plain processes; WAITIO_MASTER_PORT, "
            "WAITIO_KEY from the environment)\n", argv[0]);
    return 2;
}
