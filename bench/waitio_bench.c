/*
 * waitio-bench — point-to-point benchmarks of WaitIO, and the same loops over a raw TCP socket
 * so that each WaitIO figure can be put beside the raw figure from the same run.
 *
 *   waitio-bench pingpong [opts]     run as 2 PBs (e.g. under waitiorun): PB 0 pings PB 1
 *   waitio-bench stream [opts]       run as 2 PBs: PB 0 streams a window of isends, PB 1 acks
 *   waitio-bench raw-pingpong [opts] one command: forks a peer, ping-pong over loopback TCP
 *   waitio-bench raw-stream [opts]   one command: forks a peer, streaming over loopback TCP
 * options: --min BYTES (8) --max BYTES (8M) --iters N (auto) --window W (16) --csv
 * Ping-pong reports the half round trip (µs) and size / half round trip (MB/s); streaming
 * reports MB/s. The first and last message of every size are checked byte by byte.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "waitio.h"

typedef struct opts {
    size_t min, max;
    long iters;
    int window, csv;
} opts;

/* Moves whole messages: WaitIO over a group, or a raw socket. */
typedef struct channel {
    waitio_group_t g;
    int peer;
    int fd;
} channel;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, int rc)
{
    fprintf(stderr, "waitio-bench: %s: %s (%s)\n", what, rc ? waitio_strerror(rc) : strerror(errno),
            rc ? waitio_error_message() : "");
    exit(1);
}

static long iterations(const opts *o, size_t size)
{
    if (o->iters > 0)
        return o->iters;
    return size <= 4096 ? 20000 : size <= (64u << 10) ? 5000 : size <= (1u << 20) ? 500 : 60;
}

static void fill(uint8_t *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (uint8_t)(i * 131u + seed);
}

static void check(const uint8_t *b, size_t n, unsigned seed, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != (uint8_t)(i * 131u + seed)) {
            fprintf(stderr, "waitio-bench: %s: byte %zu of %zu is wrong\n", what, i, n);
            exit(1);
        }
}

/* ---- channels ---- */

static void raw_all(int fd, uint8_t *b, size_t n, int sending)
{
    size_t done = 0;
    while (done < n) {
        ssize_t k = sending ? send(fd, b + done, n - done, MSG_NOSIGNAL) : recv(fd, b + done, n - done, MSG_DONTWAIT);
        if (k < 0 && (errno == EAGAIN || errno == EINTR))
            continue; /* poll, as WaitIO does while it spins */
        if (k <= 0)
            die(sending ? "raw send" : "raw recv", 0);
        done += (size_t)k;
    }
}

static void ch_send(channel *c, uint8_t *b, size_t n, unsigned long tag)
{
    if (c->fd >= 0) {
        raw_all(c->fd, b, n, 1);
        return;
    }
    waitio_req_t r;
    int rc = waitio_isend(c->g, c->peer, (char *)b, n, tag, &r);
    if (rc || (rc = waitio_wait(&r)))
        die("send", rc);
}

static void ch_recv(channel *c, uint8_t *b, size_t n, unsigned long tag)
{
    if (c->fd >= 0) {
        raw_all(c->fd, b, n, 0);
        return;
    }
    waitio_req_t r;
    int rc = waitio_irecv(c->g, c->peer, (char *)b, n, tag, &r);
    if (rc || (rc = waitio_wait(&r)))
        die("recv", rc);
}

/* ---- the measurements, identical for both channels ---- */

static void header(const opts *o, const char *name, int pingpong)
{
    if (o->csv)
        printf("benchmark,bytes,iterations,%s\n", pingpong ? "half_rtt_us,mb_per_s" : "mb_per_s");
    else
        printf("# %s\n# %10s %10s %12s %12s\n", name, "bytes", "iters", pingpong ? "half-RTT us" : "", "MB/s");
}

static void pingpong(channel *c, int leader, const opts *o, const char *name)
{
    uint8_t *buf = malloc(o->max ? o->max : 1);
    if (leader)
        header(o, name, 1);
    for (size_t size = o->min; size <= o->max; size = size < 8 ? 8 : size * 2) {
        long it = iterations(o, size);
        double t0 = 0;
        for (long i = -10; i < it; i++) {
            if (i == 0)
                t0 = now();
            int verify = i == -10 || i == it - 1;
            if (leader) {
                if (verify)
                    fill(buf, size, (unsigned)size);
                ch_send(c, buf, size, 1);
                ch_recv(c, buf, size, 2);
                if (verify)
                    check(buf, size, (unsigned)size + 1, "ping-pong reply");
            } else {
                ch_recv(c, buf, size, 1);
                if (verify) {
                    check(buf, size, (unsigned)size, "ping-pong message");
                    fill(buf, size, (unsigned)size + 1);
                }
                ch_send(c, buf, size, 2);
            }
            if (leader && i == it - 1) {
                double half = (now() - t0) / (double)it / 2;
                if (o->csv)
                    printf("%s,%zu,%ld,%.3f,%.1f\n", name, size, it, half * 1e6, (double)size / half / 1e6);
                else
                    printf("  %10zu %10ld %12.2f %12.1f\n", size, it, half * 1e6, (double)size / half / 1e6);
                fflush(stdout);
            }
        }
    }
    free(buf);
}

/* Streaming: the leader keeps `window` messages in flight, the follower acks each window. */
static void stream(channel *c, int leader, const opts *o, const char *name)
{
    int w = o->window;
    uint8_t *buf = malloc((o->max ? o->max : 1) * (size_t)w), ack = 0;
    if (leader)
        header(o, name, 0);
    for (size_t size = o->min < 8 ? 8 : o->min; size <= o->max; size *= 2) {
        long rounds = iterations(o, size) / w + 2;
        double t0 = 0;
        for (long k = -1; k < rounds; k++) {
            if (k == 0)
                t0 = now();
            if (c->fd >= 0) {
                for (int j = 0; j < w; j++)
                    leader ? raw_all(c->fd, buf + (size_t)j * size, size, 1)
                           : raw_all(c->fd, buf + (size_t)j * size, size, 0);
            } else {
                waitio_req_t *r = malloc(sizeof *r * (size_t)w);
                for (int j = 0; j < w; j++) {
                    int rc = leader ? waitio_isend(c->g, c->peer, (char *)buf + (size_t)j * size, size, 3, &r[j])
                                    : waitio_irecv(c->g, c->peer, (char *)buf + (size_t)j * size, size, 3, &r[j]);
                    if (rc)
                        die("stream post", rc);
                }
                int rc = waitio_waitall(w, r);
                free(r);
                if (rc)
                    die("stream wait", rc);
            }
            if (leader)
                ch_recv(c, &ack, 1, 4);
            else
                ch_send(c, &ack, 1, 4);
        }
        if (leader) {
            double mbs = (double)size * (double)w * (double)rounds / (now() - t0) / 1e6;
            if (o->csv)
                printf("%s,%zu,%ld,%.1f\n", name, size, rounds * w, mbs);
            else
                printf("  %10zu %10ld %12s %12.1f\n", size, rounds * w, "", mbs);
            fflush(stdout);
        }
    }
    free(buf);
}

/* ---- set-up ---- */

static int everyone(int pb, int rank) { (void)pb; (void)rank; return 1; }

static void run_waitio(const opts *o, int is_stream)
{
    int rc = waitio_init(60);
    if (rc)
        die("waitio_init", rc);
    int npb, me;
    waitio_pb_size(&npb);
    if (npb != 2) {
        fprintf(stderr, "waitio-bench: run as 2 PBs, e.g. waitiorun -- waitio-bench pingpong : "
                "-- waitio-bench pingpong\n");
        exit(2);
    }
    waitio_filter_func_t f[2] = {everyone, everyone};
    int order[2] = {1, 2};
    channel c = {.fd = -1};
    c.g = waitio_create_group(1, f, order);
    if (!c.g)
        die("create_group", WAITIO_ERR_GROUP);
    waitio_group_rank(c.g, &me);
    c.peer = 1 - me;
    if (is_stream)
        stream(&c, me == 0, o, "waitio-stream");
    else
        pingpong(&c, me == 0, o, "waitio-pingpong");
    if ((rc = waitio_finalize()))
        die("waitio_finalize", rc);
}

/* Raw TCP over loopback: fork a peer; both ends TCP_NODELAY, the receiver polls. */
static void run_raw(const opts *o, int is_stream)
{
    int lfd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof a) || listen(lfd, 1) ||
        getsockname(lfd, (struct sockaddr *)&a, &alen))
        die("raw listen", 0);
    pid_t pid = fork();
    if (pid < 0)
        die("fork", 0);
    channel c = {.fd = -1};
    if (pid == 0) {
        close(lfd);
        c.fd = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(c.fd, (struct sockaddr *)&a, sizeof a))
            die("raw connect", 0);
    } else {
        c.fd = accept(lfd, NULL, NULL);
        close(lfd);
        if (c.fd < 0)
            die("raw accept", 0);
    }
    setsockopt(c.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    int leader = pid != 0;
    if (is_stream)
        stream(&c, leader, o, "raw-stream");
    else
        pingpong(&c, leader, o, "raw-pingpong");
    close(c.fd);
    if (pid == 0)
        _exit(0);
    int st;
    waitpid(pid, &st, 0);
}

static size_t parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (*end == 'K' || *end == 'k')
        v *= 1024;
    else if (*end == 'M' || *end == 'm')
        v *= 1024 * 1024;
    return (size_t)v;
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        printf("usage: waitio-bench pingpong|stream|raw-pingpong|raw-stream [--min B] [--max B] "
               "[--iters N] [--window W] [--csv]\n"
               "  pingpong/stream: run as 2 PBs: waitiorun -- waitio-bench pingpong : -- waitio-bench pingpong\n"
               "  raw-*: the same loops over a loopback TCP socket (forks its own peer)\n");
        return argc < 2;
    }
    opts o = {.min = 8, .max = 8u << 20, .iters = 0, .window = 16, .csv = 0};
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--min") && i + 1 < argc) o.min = parse_size(argv[++i]);
        else if (!strcmp(argv[i], "--max") && i + 1 < argc) o.max = parse_size(argv[++i]);
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc) o.iters = atol(argv[++i]);
        else if (!strcmp(argv[i], "--window") && i + 1 < argc) o.window = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--csv")) o.csv = 1;
        else {
            fprintf(stderr, "waitio-bench: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (o.window < 1 || o.max < o.min) {
        fprintf(stderr, "waitio-bench: bad options\n");
        return 2;
    }
    const char *mode = argv[1];
    if (!strcmp(mode, "pingpong") || !strcmp(mode, "stream"))
        run_waitio(&o, !strcmp(mode, "stream"));
    else if (!strcmp(mode, "raw-pingpong") || !strcmp(mode, "raw-stream"))
        run_raw(&o, !strcmp(mode, "raw-stream"));
    else {
        fprintf(stderr, "waitio-bench: unknown benchmark %s\n", mode);
        return 2;
    }
    return 0;
}
