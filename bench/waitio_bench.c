/*
 * waitio-bench — point-to-point benchmarks of WaitIO, and the same loops over a raw TCP socket
 * so that each WaitIO figure can be put beside the raw figure from the same run.
 *
 *   waitio-bench pingpong [opts]     run as 2 PBs of 1 process (e.g. under waitiorun): PB 0
 *                                    rank 0 pings PB 1 rank 0 over the universe group
 *   waitio-bench stream [opts]       run as 2 PBs: PB 0 keeps a window of isends in flight,
 *                                    PB 1 receives the window and acks it
 *   waitio-bench pairs [opts]        every process of the instance at once, in pairs: 1 PB of N
 *                                    processes (rank r with r^1) or 2 PBs of N each (rank i of
 *                                    PB 0 with rank i of PB 1); all pairs ping-pong concurrently
 *   waitio-bench raw-pingpong [opts] one command: forks a peer, ping-pong over 127.0.0.1 TCP
 *   waitio-bench raw-stream [opts]   one command: forks a peer, streaming over 127.0.0.1 TCP
 *   (rawtcp-pingpong / rawtcp-stream are accepted as aliases)
 *
 * All channels run the identical measurement code (pingpong_size(), stream()); only the "move
 * one whole message" primitives differ. Ping-pong reports the half round trip (µs) and size /
 * half round trip (MB/s, 1 MB = 10^6 B); pairs reports the mean and the maximum half round trip
 * over the pairs and the aggregate MB/s of all pairs; streaming reports MB/s. Timing:
 * CLOCK_MONOTONIC around the timed iterations only. Every size starts with warm-up exchanges
 * and ends with one exchange after the clock stopped; the first and that last exchange carry a
 * size-specific byte pattern that the receiver checks byte by byte after clearing its buffer,
 * so a benchmark that moved garbage (or nothing) fails instead of printing a figure. Any failure
 * exits non-zero; every process stops itself after --time-limit seconds.
 * bench/mpi_bench.c is the MPI twin: same sizes, counts, patterns and CSV.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "waitio.h"

#define MAX_SIZES 64
#define TAG_PING 1
#define TAG_PONG 2
#define TAG_STREAM 3
#define TAG_ACK 4
#define TAG_BARRIER 5
#define TAG_RELEASE 6
#define TAG_RESULT 7

/* How `pairs` pairs the processes: automatic (adjacent with 1 PB, half with 2 PBs), group rank
 * r with r^1, or rank r with r + size/2. */
enum pairing { PAIRING_AUTO, PAIRING_ADJACENT, PAIRING_HALF };

typedef struct opts {
    size_t sizes[MAX_SIZES];
    int nsizes;
    long iters;      /* timed iterations per size; 0 = adapted to the size */
    double iter_scale; /* factor on the adapted counts (pairs on few cores: fewer) */
    long warmup;     /* warm-up exchanges per size (>= 1: the first one is verified) */
    int window;      /* streaming: messages in flight */
    int raw_block;   /* raw receiver blocks in recv() instead of polling */
    size_t raw_chunk; /* raw sender: bytes per send() call; 0 = the whole message at once */
    int csv;
    int procs;       /* > 0: fork this many processes into this PB (WAITIO_PB_RANK/SIZE) */
    int pairing;     /* enum pairing */
    int time_limit;  /* seconds before every process stops itself (SIGALRM) */
} opts;

/* Moves whole messages between the two ends: WaitIO over a group (fd < 0), or a raw socket. */
typedef struct channel {
    waitio_group_t g;
    int peer;
    int me, size;        /* group rank and size (pairs: barrier and gather to rank 0) */
    int fd;
    int raw_block;
    size_t raw_chunk;
    waitio_req_t *reqs;  /* streaming window (WaitIO) */
} channel;

/* ---- errors ---- */

static void die_waitio(const char *what, int rc)
{
    fprintf(stderr, "waitio-bench: %s: %s (%s)\n", what, waitio_strerror(rc), waitio_error_message());
    exit(1);
}

static void die_sys(const char *what)
{
    fprintf(stderr, "waitio-bench: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void die_msg(const char *what)
{
    fprintf(stderr, "waitio-bench: %s\n", what);
    exit(1);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        die_sys("malloc");
    return p;
}

/* ---- time and data ---- */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long timed_iterations(const opts *o, size_t size)
{
    if (o->iters > 0)
        return o->iters;
    long base = size <= 4096 ? 20000 : size <= (64u << 10) ? 5000 : size <= (1u << 20) ? 500 : 60;
    long scaled = (long)((double)base * o->iter_scale);
    return scaled < 5 ? 5 : scaled;
}

static uint8_t pattern_byte(size_t i, unsigned seed)
{
    return (uint8_t)(i * 131u + (i >> 8) * 7u + seed);
}

static void fill_pattern(uint8_t *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = pattern_byte(i, seed);
}

static void check_pattern(const uint8_t *b, size_t n, unsigned seed, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != pattern_byte(i, seed)) {
            fprintf(stderr, "waitio-bench: %s of %zu bytes: byte %zu is %u, expected %u\n", what, n,
                    i, b[i], pattern_byte(i, seed));
            exit(1);
        }
}

/* ---- the two channels' primitives ---- */

/* Blocking send() calls of at most `chunk` bytes (0: as much as the kernel takes). */
static void raw_send_all(int fd, const uint8_t *b, size_t n, size_t chunk)
{
    size_t done = 0;
    while (done < n) {
        size_t want = chunk && n - done > chunk ? chunk : n - done;
        ssize_t k = send(fd, b + done, want, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            die_sys("raw send");
        done += (size_t)k;
    }
}

/* Polls with MSG_DONTWAIT (as WaitIO's wait spins) unless `block`. */
static void raw_recv_all(int fd, uint8_t *b, size_t n, int block)
{
    size_t done = 0;
    while (done < n) {
        ssize_t k = recv(fd, b + done, n - done, block ? 0 : MSG_DONTWAIT);
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            continue;
        if (k < 0)
            die_sys("raw recv");
        if (k == 0)
            die_msg("raw recv: the peer closed the connection");
        done += (size_t)k;
    }
}

static void ch_send(channel *c, uint8_t *b, size_t n, unsigned long tag)
{
    if (c->fd >= 0) {
        raw_send_all(c->fd, b, n, c->raw_chunk);
        return;
    }
    waitio_req_t r;
    int rc = waitio_isend(c->g, c->peer, (char *)b, n, tag, &r);
    if (rc)
        die_waitio("waitio_isend", rc);
    if ((rc = waitio_wait(&r)))
        die_waitio("waitio_wait (send)", rc);
}

static void ch_recv(channel *c, uint8_t *b, size_t n, unsigned long tag)
{
    if (c->fd >= 0) {
        raw_recv_all(c->fd, b, n, c->raw_block);
        return;
    }
    waitio_req_t r;
    int rc = waitio_irecv(c->g, c->peer, (char *)b, n, tag, &r);
    if (rc)
        die_waitio("waitio_irecv", rc);
    if ((rc = waitio_wait(&r)))
        die_waitio("waitio_wait (recv)", rc);
    if (r.status.len != n)
        die_msg("waitio receive completed with the wrong length");
}

/* One window of `w` messages of `size` bytes at buf, buf + size, ...: sent or received. */
static void ch_window(channel *c, uint8_t *buf, size_t size, int w, int sending)
{
    if (c->fd >= 0) {
        for (int j = 0; j < w; j++) {
            if (sending)
                raw_send_all(c->fd, buf + (size_t)j * size, size, c->raw_chunk);
            else
                raw_recv_all(c->fd, buf + (size_t)j * size, size, c->raw_block);
        }
        return;
    }
    for (int j = 0; j < w; j++) {
        char *p = (char *)buf + (size_t)j * size;
        int rc = sending ? waitio_isend(c->g, c->peer, p, size, TAG_STREAM, &c->reqs[j])
                         : waitio_irecv(c->g, c->peer, p, size, TAG_STREAM, &c->reqs[j]);
        if (rc)
            die_waitio(sending ? "waitio_isend (stream)" : "waitio_irecv (stream)", rc);
    }
    int rc = waitio_waitall(w, c->reqs);
    if (rc)
        die_waitio("waitio_waitall (stream)", rc);
}

/* ---- output ---- */

/* One printed figure: ping-pong (half_us >= 0) or streaming (half_us < 0: no latency). */
typedef struct result {
    const char *name;
    size_t size;
    long count;      /* timed iterations (ping-pong, per pair) or messages (streaming) */
    int pairs;
    double half_us;  /* mean half round trip over the pairs */
    double max_us;   /* slowest pair's half round trip */
    double mbs;      /* aggregate over the pairs */
} result;

/* The CSV columns are the same for every benchmark (and for bench/mpi_bench.c): streaming rows
 * leave the two latency columns empty. */
static void print_header(const opts *o, const char *name, int is_pingpong)
{
    if (o->csv)
        printf("benchmark,bytes,iterations,pairs,half_rtt_us,max_half_rtt_us,mb_per_s\n");
    else if (is_pingpong)
        printf("# %s\n# %10s %10s %5s %12s %12s %12s\n", name, "bytes", "iters", "pairs",
               "half-RTT us", "max us", "MB/s");
    else
        printf("# %s\n# %10s %10s %12s\n", name, "bytes", "messages", "MB/s");
}

static void print_row(const opts *o, const result *r)
{
    if (o->csv && r->half_us >= 0)
        printf("%s,%zu,%ld,%d,%.3f,%.3f,%.3f\n", r->name, r->size, r->count, r->pairs, r->half_us,
               r->max_us, r->mbs);
    else if (o->csv)
        printf("%s,%zu,%ld,%d,,,%.3f\n", r->name, r->size, r->count, r->pairs, r->mbs);
    else if (r->half_us >= 0)
        printf("  %10zu %10ld %5d %12.2f %12.2f %12.1f\n", r->size, r->count, r->pairs, r->half_us,
               r->max_us, r->mbs);
    else
        printf("  %10zu %10ld %12.1f\n", r->size, r->count, r->mbs);
    fflush(stdout);
}

static void print_footer(const opts *o)
{
    if (!o->csv)
        printf("# data verified on the first and the last exchange of every size\n");
}

/* ---- the measurements, identical for both channels ---- */

/* One ping-pong exchange; if `seed` is non-zero the data carries and is checked against it. */
static void pingpong_once(channel *c, int leader, uint8_t *buf, size_t size, unsigned seed)
{
    if (leader) {
        if (seed)
            fill_pattern(buf, size, seed);
        ch_send(c, buf, size, TAG_PING);
        if (seed)
            memset(buf, 0, size);
        ch_recv(c, buf, size, TAG_PONG);
        if (seed)
            check_pattern(buf, size, seed + 1, "ping-pong reply");
    } else {
        if (seed)
            memset(buf, 0, size);
        ch_recv(c, buf, size, TAG_PING);
        if (seed) {
            check_pattern(buf, size, seed, "ping-pong message");
            fill_pattern(buf, size, seed + 1);
        }
        ch_send(c, buf, size, TAG_PONG);
    }
}

/* Warm-up, timed loop and checked final exchange of size index s; returns the half round trip
 * in seconds. `sync` (may be NULL) runs right before the clock starts. */
static double pingpong_size(channel *c, int leader, const opts *o, int s, uint8_t *buf,
                            void (*sync)(channel *))
{
    size_t size = o->sizes[s];
    long it = timed_iterations(o, size);
    for (long i = 0; i < o->warmup; i++)
        pingpong_once(c, leader, buf, size, i == 0 ? (unsigned)(2 * s + 1) : 0);
    if (sync)
        sync(c);
    double t0 = now();
    for (long i = 0; i < it; i++)
        pingpong_once(c, leader, buf, size, 0);
    double half = (now() - t0) / (double)it / 2;
    pingpong_once(c, leader, buf, size, (unsigned)(2 * s + 101));
    return half;
}

static void pingpong(channel *c, int leader, const opts *o, const char *name)
{
    uint8_t *buf = xmalloc(o->sizes[o->nsizes - 1]);
    if (leader)
        print_header(o, name, 1);
    for (int s = 0; s < o->nsizes; s++) {
        double half = pingpong_size(c, leader, o, s, buf, NULL);
        result r = {name, o->sizes[s], timed_iterations(o, o->sizes[s]), 1, half * 1e6, half * 1e6,
                    (double)o->sizes[s] / half / 1e6};
        if (leader)
            print_row(o, &r);
    }
    if (leader)
        print_footer(o);
    free(buf);
}

/* One streaming round: the leader sends a window, the follower receives it and acks. */
static void stream_once(channel *c, int leader, uint8_t *buf, size_t size, int w, unsigned seed)
{
    uint8_t ack = 0;
    if (seed) {
        for (int j = 0; j < w; j++) {
            uint8_t *slot = buf + (size_t)j * size;
            if (leader)
                fill_pattern(slot, size, seed + (unsigned)j);
            else
                memset(slot, 0, size);
        }
    }
    ch_window(c, buf, size, w, leader);
    if (seed && !leader)
        for (int j = 0; j < w; j++)
            check_pattern(buf + (size_t)j * size, size, seed + (unsigned)j, "streamed message");
    if (leader)
        ch_recv(c, &ack, 1, TAG_ACK);
    else
        ch_send(c, &ack, 1, TAG_ACK);
}

static void stream(channel *c, int leader, const opts *o, const char *name)
{
    int w = o->window;
    uint8_t *buf = xmalloc(o->sizes[o->nsizes - 1] * (size_t)w);
    c->reqs = xmalloc(sizeof *c->reqs * (size_t)w);
    if (leader)
        print_header(o, name, 0);
    for (int s = 0; s < o->nsizes; s++) {
        size_t size = o->sizes[s];
        long rounds = timed_iterations(o, size) / w + 2;
        stream_once(c, leader, buf, size, w, (unsigned)(3 * s + 1));
        double t0 = now();
        for (long k = 0; k < rounds; k++)
            stream_once(c, leader, buf, size, w, 0);
        double secs = now() - t0;
        stream_once(c, leader, buf, size, w, (unsigned)(3 * s + 111));
        result r = {name, size, rounds * w, 1, -1, -1,
                    (double)size * (double)w * (double)rounds / secs / 1e6};
        if (leader)
            print_row(o, &r);
    }
    if (leader)
        print_footer(o);
    free(c->reqs);
    c->reqs = NULL;
    free(buf);
}

/* ---- pairs: every process of the group at once; tiny collectives over WaitIO messages ---- */

/* Posts one message per rank 1..size-1 (or receives one from each) and waits for all. */
static void root_exchange_all(channel *c, void *buf, size_t len, unsigned long tag, int sending)
{
    waitio_req_t *r = xmalloc(sizeof *r * (size_t)c->size);
    for (int k = 1; k < c->size; k++) {
        char *p = (char *)buf + (size_t)k * len;
        int rc = sending ? waitio_isend(c->g, k, p, len, tag, &r[k - 1])
                         : waitio_irecv(c->g, k, p, len, tag, &r[k - 1]);
        if (rc)
            die_waitio(sending ? "waitio_isend (collective)" : "waitio_irecv (collective)", rc);
    }
    int rc = waitio_waitall(c->size - 1, r);
    if (rc)
        die_waitio("waitio_waitall (collective)", rc);
    free(r);
}

static void send_to(channel *c, int dst, void *b, size_t n, unsigned long tag)
{
    channel to = *c;
    to.peer = dst;
    ch_send(&to, b, n, tag);
}

static void recv_from(channel *c, int src, void *b, size_t n, unsigned long tag)
{
    channel from = *c;
    from.peer = src;
    ch_recv(&from, b, n, tag);
}

/* Everyone reports to rank 0, which then releases everyone: all pairs start their clocks
 * within one release message of each other. */
static void group_barrier(channel *c)
{
    uint8_t *flags = xmalloc((size_t)c->size);
    memset(flags, 0, (size_t)c->size);
    if (c->me == 0) {
        root_exchange_all(c, flags, 1, TAG_BARRIER, 0);
        root_exchange_all(c, flags, 1, TAG_RELEASE, 1);
    } else {
        send_to(c, 0, flags, 1, TAG_BARRIER);
        recv_from(c, 0, flags, 1, TAG_RELEASE);
    }
    free(flags);
}

/* Rank 0 gets every rank's `value` in all[] (size entries); the others get nothing. */
static void gather_to_root(channel *c, double value, double *all)
{
    if (c->me != 0) {
        send_to(c, 0, &value, sizeof value, TAG_RESULT);
        return;
    }
    all[0] = value;
    root_exchange_all(c, all, sizeof *all, TAG_RESULT, 0);
}

/* Mean and maximum half round trip (leaders report >= 0, followers -1) and the sum of the
 * pairs' size / half round trip. */
static result summarise_pairs(const char *name, size_t size, long it, const double *half, int n)
{
    result r = {name, size, it, 0, 0, 0, 0};
    for (int k = 0; k < n; k++) {
        if (half[k] < 0)
            continue;
        r.pairs++;
        r.half_us += half[k] * 1e6;
        if (half[k] * 1e6 > r.max_us)
            r.max_us = half[k] * 1e6;
        r.mbs += (double)size / half[k] / 1e6;
    }
    if (!r.pairs)
        die_msg("pairs: no pair reported a figure");
    r.half_us /= r.pairs;
    return r;
}

static void pairs(channel *c, int leader, const opts *o, const char *name)
{
    uint8_t *buf = xmalloc(o->sizes[o->nsizes - 1]);
    double *all = xmalloc(sizeof *all * (size_t)c->size);
    if (c->me == 0)
        print_header(o, name, 1);
    for (int s = 0; s < o->nsizes; s++) {
        group_barrier(c); /* the warm-up of one pair must not overlap the timing of another */
        double half = pingpong_size(c, leader, o, s, buf, group_barrier);
        gather_to_root(c, leader ? half : -1, all);
        if (c->me == 0) {
            result r = summarise_pairs(name, o->sizes[s], timed_iterations(o, o->sizes[s]), all, c->size);
            print_row(o, &r);
        }
    }
    if (c->me == 0)
        print_footer(o);
    free(all);
    free(buf);
}

enum kind { KIND_PINGPONG, KIND_STREAM, KIND_PAIRS };

static void run_benchmark(channel *c, int leader, const opts *o, int kind, const char *name)
{
    if (kind == KIND_STREAM)
        stream(c, leader, o, name);
    else if (kind == KIND_PAIRS)
        pairs(c, leader, o, name);
    else
        pingpong(c, leader, o, name);
}

/* ---- set-up: WaitIO ---- */

static int everyone(int pbid, int rank)
{
    (void)pbid;
    (void)rank;
    return 1;
}

/* Number of PBs and each one's process count (ary of at least 2 entries). */
static int *instance_shape(int *npb)
{
    int rc = waitio_pb_size(npb);
    if (rc)
        die_waitio("waitio_pb_size", rc);
    int *nprocs = xmalloc(sizeof(int) * (size_t)(*npb < 2 ? 2 : *npb));
    nprocs[0] = nprocs[1] = 0;
    if (waitio_get_nprocs(nprocs) != *npb)
        die_msg("waitio_get_nprocs disagrees with waitio_pb_size");
    return nprocs;
}

static void require_two_single_process_pbs(void)
{
    int npb = 0, *nprocs = instance_shape(&npb);
    if (npb == 2 && nprocs[0] == 1 && nprocs[1] == 1) {
        free(nprocs);
        return;
    }
    fprintf(stderr, "waitio-bench: run as 2 PBs of 1 process each (this instance: %d PBs, the "
            "first two of %d and %d processes), e.g.\n"
            "  waitiorun -- waitio-bench pingpong : -- waitio-bench pingpong\n", npb, nprocs[0], nprocs[1]);
    exit(2);
}

/* pairs: 1 PB of an even number of processes, or 2 PBs of the same number each. Returns the
 * number of PBs. */
static int require_pairable_instance(void)
{
    int npb = 0, *nprocs = instance_shape(&npb);
    int ok = (npb == 1 && nprocs[0] % 2 == 0) || (npb == 2 && nprocs[0] == nprocs[1]);
    if (!ok) {
        fprintf(stderr, "waitio-bench pairs: run as 1 PB of an even number of processes or 2 PBs "
                "of the same number (this instance: %d PBs, the first two of %d and %d processes), e.g.\n"
                "  waitiorun -- waitio-bench pairs --procs 2 : -- waitio-bench pairs --procs 2\n",
                npb, nprocs[0], nprocs[1]);
        exit(2);
    }
    free(nprocs);
    return npb;
}

/* The partner of group rank `me` in a group of `size` (even). */
static int pair_peer(int pairing, int me, int size)
{
    if (pairing == PAIRING_ADJACENT)
        return me ^ 1;
    return me < size / 2 ? me + size / 2 : me - size / 2;
}

static const char *waitio_name(int kind)
{
    return kind == KIND_STREAM ? "waitio-stream" : kind == KIND_PAIRS ? "waitio-pairs" : "waitio-pingpong";
}

static void run_waitio(const opts *o, int kind)
{
    int rc = waitio_init(60), npb = 2;
    if (rc)
        die_waitio("waitio_init", rc);
    if (kind == KIND_PAIRS)
        npb = require_pairable_instance();
    else
        require_two_single_process_pbs();
    waitio_filter_func_t filters[2] = {everyone, everyone};
    int order[2] = {1, 2};
    channel c = {.fd = -1};
    c.g = waitio_create_group(1, filters, order);
    if (!c.g)
        die_waitio("waitio_create_group", WAITIO_ERR_GROUP);
    if ((rc = waitio_group_rank(c.g, &c.me)) || (rc = waitio_group_size(c.g, &c.size)))
        die_waitio("waitio_group_rank/size", rc);
    int pairing = o->pairing != PAIRING_AUTO ? o->pairing : npb == 1 ? PAIRING_ADJACENT : PAIRING_HALF;
    c.peer = pair_peer(pairing, c.me, c.size);
    run_benchmark(&c, c.me < c.peer, o, kind, waitio_name(kind));
    if ((rc = waitio_group_free(c.g)))
        die_waitio("waitio_group_free", rc);
    if ((rc = waitio_finalize()))
        die_waitio("waitio_finalize", rc);
}

/* ---- --procs N: this command becomes N processes of its PB, without an MPI launcher ---- */

static int launcher_sets_ranks(void)
{
    return getenv("WAITIO_PB_RANK") || getenv("OMPI_COMM_WORLD_RANK") || getenv("PMI_RANK") ||
           getenv("PMIX_RANK") || getenv("SLURM_PROCID");
}

static void set_pb_rank(int rank, int size)
{
    char r[16], n[16];
    snprintf(r, sizeof r, "%d", rank);
    snprintf(n, sizeof n, "%d", size);
    if (setenv("WAITIO_PB_RANK", r, 1) || setenv("WAITIO_PB_SIZE", n, 1))
        die_sys("setenv WAITIO_PB_RANK/WAITIO_PB_SIZE");
}

/* Forks ranks 1..n-1 (they die with their parent); returns this process's PB rank. */
static int fork_pb_processes(int n, pid_t *children)
{
    if (launcher_sets_ranks())
        die_msg("--procs: the PB's ranks are already set by the environment (WAITIO_PB_RANK or an "
                "MPI launcher's variables); drop --procs or the launcher");
    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid();
    for (int r = 1; r < n; r++) {
        pid_t pid = fork();
        if (pid < 0)
            die_sys("fork");
        if (pid == 0) {
            if (prctl(PR_SET_PDEATHSIG, SIGKILL))
                die_sys("prctl(PR_SET_PDEATHSIG)");
            if (getppid() != parent) /* the parent died before the line above took effect */
                die_msg("--procs: the PB's first process is gone");
            set_pb_rank(r, n);
            return r;
        }
        children[r] = pid;
    }
    set_pb_rank(0, n);
    return 0;
}

/* Rank 0 of a --procs PB: 0 if every forked process exited 0. */
static int wait_pb_processes(int n, const pid_t *children)
{
    int failed = 0;
    for (int r = 1; r < n; r++) {
        int st;
        while (waitpid(children[r], &st, 0) < 0)
            if (errno != EINTR)
                die_sys("waitpid");
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "waitio-bench: PB process %d failed (%s %d)\n", r,
                    WIFEXITED(st) ? "exit status" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
            failed = 1;
        }
    }
    return failed;
}

/* ---- set-up: raw TCP over 127.0.0.1, a forked peer; both ends TCP_NODELAY ---- */

static int raw_listen(struct sockaddr_in *addr)
{
    socklen_t alen = sizeof *addr;
    *addr = (struct sockaddr_in){.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    if (lfd < 0)
        die_sys("raw socket");
    if (bind(lfd, (struct sockaddr *)addr, sizeof *addr) || listen(lfd, 1) ||
        getsockname(lfd, (struct sockaddr *)addr, &alen))
        die_sys("raw listen");
    return lfd;
}

static int raw_connect(const struct sockaddr_in *addr)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        die_sys("raw socket");
    if (connect(fd, (const struct sockaddr *)addr, sizeof *addr))
        die_sys("raw connect");
    return fd;
}

static void raw_nodelay(int fd)
{
    int one = 1;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one))
        die_sys("setsockopt TCP_NODELAY");
}

static void wait_for_child(pid_t pid)
{
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            die_sys("waitpid");
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        die_msg("the raw-TCP peer process failed");
}

static const char *raw_name(const opts *o, int is_stream)
{
    if (is_stream)
        return o->raw_block ? "raw-stream-blocking" : "raw-stream";
    return o->raw_block ? "raw-pingpong-blocking" : "raw-pingpong";
}

static void run_raw(const opts *o, int is_stream)
{
    struct sockaddr_in addr;
    int lfd = raw_listen(&addr);
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        die_sys("fork");
    channel c = {.fd = -1, .raw_block = o->raw_block, .raw_chunk = o->raw_chunk};
    if (pid == 0) {
        close(lfd);
        c.fd = raw_connect(&addr);
    } else {
        c.fd = accept(lfd, NULL, NULL);
        if (c.fd < 0)
            die_sys("raw accept");
        close(lfd);
    }
    raw_nodelay(c.fd);
    run_benchmark(&c, pid != 0, o, is_stream ? KIND_STREAM : KIND_PINGPONG, raw_name(o, is_stream));
    close(c.fd);
    if (pid == 0)
        _exit(0);
    wait_for_child(pid);
}

/* ---- options ---- */

/* "8", "64K", "8M", "1.5k", "8MB": bytes (K/M/G = powers of 1024). Returns 0 if malformed. */
static size_t parse_size(const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || v < 1)
        return 0;
    if (*end == 'K' || *end == 'k')
        v *= 1024, end++;
    else if (*end == 'M' || *end == 'm')
        v *= 1024.0 * 1024, end++;
    else if (*end == 'G' || *end == 'g')
        v *= 1024.0 * 1024 * 1024, end++;
    if (*end == 'B' || *end == 'b')
        end++;
    return *end ? 0 : (size_t)v;
}

static int parse_size_list(opts *o, const char *list)
{
    char *copy = strdup(list), *save = NULL;
    if (!copy)
        die_sys("strdup");
    o->nsizes = 0;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        size_t v = parse_size(t);
        if (!v || o->nsizes == MAX_SIZES || (o->nsizes && v <= o->sizes[o->nsizes - 1])) {
            free(copy);
            return -1;
        }
        o->sizes[o->nsizes++] = v;
    }
    free(copy);
    return o->nsizes ? 0 : -1;
}

static int make_size_range(opts *o, size_t min, size_t max, size_t factor)
{
    o->nsizes = 0;
    if (!min || max < min || factor < 2)
        return -1;
    for (size_t s = min; s <= max && o->nsizes < MAX_SIZES; s *= factor)
        o->sizes[o->nsizes++] = s;
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f,
        "usage: waitio-bench pingpong|stream|pairs|raw-pingpong|raw-stream [options]\n"
        "  pingpong, stream: run as 2 PBs of 1 process each:\n"
        "      waitiorun -- waitio-bench pingpong : -- waitio-bench pingpong\n"
        "  pairs: every process at once, in pairs; 1 PB of N processes (N even) or 2 PBs of N each:\n"
        "      waitiorun -- waitio-bench pairs --procs 4\n"
        "      waitiorun -- waitio-bench pairs --procs 2 : -- waitio-bench pairs --procs 2\n"
        "      (or each PB through an MPI launcher: waitiorun -- mpirun -np 2 waitio-bench pairs : ...)\n"
        "  raw-pingpong, raw-stream (alias rawtcp-*): the same loops over a 127.0.0.1 TCP socket\n"
        "      between this process and a forked peer (TCP_NODELAY, whole-message send/recv loops)\n"
        "options:\n"
        "  --min B, --max B   size range, default 8 .. 8M (suffixes K, M, G = 1024^n)\n"
        "  --factor F         step of the range, default 2 (powers of two)\n"
        "  --sizes LIST       explicit increasing sizes instead, e.g. 8,1K,64K,8M\n"
        "  --iters N          timed iterations per size (default: adapted to the size)\n"
        "  --iter-scale F     multiply the adapted counts by F (at least 5 iterations), e.g. 0.1\n"
        "  --warmup N         warm-up exchanges per size (default 10, at least 1)\n"
        "  --window W         streaming: messages in flight per window (default 16)\n"
        "  --procs N          pairs: fork N processes into this PB (sets WAITIO_PB_RANK/SIZE)\n"
        "  --pairing P        pairs: adjacent (r<->r^1, default with 1 PB) or half (r<->r+size/2,\n"
        "                     default with 2 PBs: rank i of PB 0 with rank i of PB 1)\n"
        "  --time-limit S     every process stops itself after S seconds (default 600)\n"
        "  --block            raw-*: the receiver blocks in recv() instead of polling\n"
        "  --chunk B          raw-*: the sender sends at most B bytes per send() call\n"
        "  --csv              CSV: benchmark,bytes,iterations,pairs,half_rtt_us,max_half_rtt_us,mb_per_s\n"
        "                     (streaming rows leave the two latency columns empty)\n");
}

static int parse_pairing(const char *v)
{
    return !strcmp(v, "adjacent") ? PAIRING_ADJACENT : !strcmp(v, "half") ? PAIRING_HALF : -1;
}

static int parse_options(opts *o, int argc, char **argv)
{
    size_t min = 8, max = 8u << 20, factor = 2;
    const char *list = NULL, *chunk = NULL;
    *o = (opts){.iters = 0, .iter_scale = 1, .warmup = 10, .window = 16, .time_limit = 600};
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--csv")) o->csv = 1;
        else if (!strcmp(a, "--block")) o->raw_block = 1;
        else if (!v) return -1;
        else if (!strcmp(a, "--min")) min = parse_size(v), i++;
        else if (!strcmp(a, "--max")) max = parse_size(v), i++;
        else if (!strcmp(a, "--factor")) factor = (size_t)atol(v), i++;
        else if (!strcmp(a, "--sizes")) list = v, i++;
        else if (!strcmp(a, "--iters")) o->iters = atol(v), i++;
        else if (!strcmp(a, "--iter-scale")) o->iter_scale = atof(v), i++;
        else if (!strcmp(a, "--warmup")) o->warmup = atol(v), i++;
        else if (!strcmp(a, "--window")) o->window = atoi(v), i++;
        else if (!strcmp(a, "--chunk")) chunk = v, i++;
        else if (!strcmp(a, "--procs")) o->procs = atoi(v), i++;
        else if (!strcmp(a, "--pairing")) o->pairing = parse_pairing(v), i++;
        else if (!strcmp(a, "--time-limit")) o->time_limit = atoi(v), i++;
        else return -1;
    }
    if (o->window < 1 || o->iters < 0 || o->warmup < 1 || !(o->iter_scale > 0) || o->procs < 0 ||
        o->procs > 1024 || o->pairing < 0 || o->time_limit < 1)
        return -1;
    if (chunk && !(o->raw_chunk = parse_size(chunk)))
        return -1;
    return list ? parse_size_list(o, list) : make_size_range(o, min, max, factor);
}

/* "pingpong", "stream", "pairs", "raw-pingpong", "raw-stream" (or "rawtcp-..."). */
static int parse_benchmark(const char *name, int *is_raw, int *kind)
{
    *is_raw = !strncmp(name, "raw-", 4) || !strncmp(name, "rawtcp-", 7);
    if (*is_raw)
        name = strchr(name, '-') + 1;
    *kind = !strcmp(name, "stream") ? KIND_STREAM : !strcmp(name, "pairs") ? KIND_PAIRS
          : !strcmp(name, "pingpong") ? KIND_PINGPONG : -1;
    return *kind < 0 || (*is_raw && *kind == KIND_PAIRS) ? -1 : 0;
}

static void on_time_limit(int sig)
{
    static const char msg[] = "waitio-bench: time limit reached (--time-limit), stopping\n";
    (void)sig;
    if (write(STDERR_FILENO, msg, sizeof msg - 1) < 0) {
        /* nothing more can be reported from a signal handler */
    }
    _exit(124);
}

/* A peer that stops answering must not leave this process waiting forever. */
static void arm_time_limit(int seconds)
{
    if (signal(SIGALRM, on_time_limit) == SIG_ERR)
        die_sys("signal(SIGALRM)");
    alarm((unsigned)seconds);
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    int is_raw, kind;
    if (parse_benchmark(argv[1], &is_raw, &kind)) {
        fprintf(stderr, "waitio-bench: unknown benchmark %s\n", argv[1]);
        usage(stderr);
        return 2;
    }
    opts o;
    if (parse_options(&o, argc, argv) || (o.procs && kind != KIND_PAIRS)) {
        fprintf(stderr, "waitio-bench: bad options\n");
        usage(stderr);
        return 2;
    }
    arm_time_limit(o.time_limit);
    if (is_raw) {
        run_raw(&o, kind == KIND_STREAM);
        return 0;
    }
    pid_t children[1024];
    int rank = o.procs > 1 ? fork_pb_processes(o.procs, children) : 0;
    run_waitio(&o, kind);
    return rank == 0 && o.procs > 1 ? wait_pb_processes(o.procs, children) : 0;
}
