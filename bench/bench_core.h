/*
 * bench_core.h — the measurement that waitio-bench (bench/waitio_bench.c) and its MPI twin
 * (bench/mpi_bench.c) share: sizes and iteration counts, byte patterns, the ping-pong,
 * streaming and all-pairs loops with their warm-up and checked exchanges, the table/CSV output,
 * the options both take and the time limit. Kept in one place so that a WaitIO figure and an
 * MPI figure are measured by the same code, not by two copies that could drift apart.
 *
 * The includer (one translation unit per program):
 *   - defines BENCH_PROGRAM, its name as a string literal (message prefix), before including;
 *   - may define BENCH_TEXT_FOOTER, a line printed under every text (non-CSV) table;
 *   - defines `struct channel` (one end of a pair; opaque here, only pointers are passed) and
 *     the static functions declared under "provided by the includer".
 * Those primitives are static functions the includer defines rather than function pointers
 * passed in: the compiler checks each program's definitions against one set of prototypes, and
 * can inline them into the timed loops, so neither twin pays an indirect call per message that
 * the other does not. Each program stays one file built by a bare compiler command.
 */
#ifndef WAITIO_BENCH_CORE_H
#define WAITIO_BENCH_CORE_H

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef BENCH_PROGRAM
#error "define BENCH_PROGRAM (the program's name) before including bench_core.h"
#endif

#define MAX_SIZES 64
#define TAG_PING 1
#define TAG_PONG 2
#define TAG_STREAM 3
#define TAG_ACK 4

typedef struct channel channel;

/* ---- provided by the includer ---- */

/* Move one whole message of n bytes to / from the partner; a wrong length is a failure. */
static void ch_send(channel *c, uint8_t *b, size_t n, int tag);
static void ch_recv(channel *c, uint8_t *b, size_t n, int tag);
/* Streaming: w messages of `size` bytes at buf, buf + size, ...: all sent or all received, with
 * TAG_STREAM, between ch_open_window(c, w) and ch_close_window(c) (which hold their requests). */
static void ch_open_window(channel *c, int w);
static void ch_window(channel *c, uint8_t *buf, size_t size, int w, int sending);
static void ch_close_window(channel *c);
/* pairs: a barrier over every process, and `value` of every rank into all[] on rank 0. */
static void ch_barrier(channel *c);
static void ch_gather(channel *c, double value, double *all);
/* Prints BENCH_PROGRAM ": msg" and ends the run with a failure (never returns). */
static _Noreturn void bench_fail(const char *msg);

/* ---- options ---- */

/* Who pairs with whom in `pairs`: rank r with r^1 or with r + size/2. AUTO is adjacent unless
 * the program knows better (waitio-bench with 2 PBs: half, so that pairs span the PBs). */
enum pairing { PAIRING_AUTO, PAIRING_ADJACENT, PAIRING_HALF };

typedef struct measure_opts {
    size_t sizes[MAX_SIZES];
    int nsizes;
    long iters;        /* timed iterations per size; 0 = adapted to the size */
    double iter_scale; /* factor on the adapted counts (pairs on few cores: fewer) */
    long warmup;       /* warm-up exchanges per size (>= 1: the first one is verified) */
    int window;        /* streaming: messages in flight */
    int pairing;       /* enum pairing; -1 if malformed */
    int csv;
    int time_limit;    /* seconds before every process stops itself (SIGALRM) */
} measure_opts;

/* How the sizes were asked for: a range, or an explicit list that overrides it. */
typedef struct size_request {
    size_t min, max, factor;
    const char *list;
} size_request;

static measure_opts default_measure_opts(void)
{
    return (measure_opts){.iters = 0, .iter_scale = 1, .warmup = 10, .window = 16,
                          .pairing = PAIRING_AUTO, .time_limit = 600};
}

static size_request default_size_request(void)
{
    return (size_request){.min = 8, .max = 8u << 20, .factor = 2, .list = NULL};
}

static _Noreturn void bench_fail_errno(const char *what)
{
    char msg[256];
    snprintf(msg, sizeof msg, "%s: %s", what, strerror(errno));
    bench_fail(msg);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        bench_fail_errno("malloc");
    return p;
}

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

static int parse_size_list(measure_opts *o, const char *list)
{
    char *copy = strdup(list), *save = NULL;
    if (!copy)
        bench_fail_errno("strdup");
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

static int make_size_range(measure_opts *o, size_t min, size_t max, size_t factor)
{
    o->nsizes = 0;
    if (!min || max < min || factor < 2)
        return -1;
    for (size_t s = min; s <= max && o->nsizes < MAX_SIZES; s *= factor)
        o->sizes[o->nsizes++] = s;
    return 0;
}

static int parse_pairing(const char *v)
{
    return !strcmp(v, "adjacent") ? PAIRING_ADJACENT : !strcmp(v, "half") ? PAIRING_HALF : -1;
}

/* Takes the shared option at argv[*i], and its value if it has one (*i then moves onto it).
 * Returns 0 if argv[*i] is not a shared option or lacks its value: that is for the program's
 * own options to judge. */
static int take_measure_option(measure_opts *o, size_request *sizes, int argc, char **argv, int *i)
{
    const char *a = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
    if (!strcmp(a, "--csv")) {
        o->csv = 1;
        return 1;
    }
    if (!v) return 0;
    if (!strcmp(a, "--min")) sizes->min = parse_size(v);
    else if (!strcmp(a, "--max")) sizes->max = parse_size(v);
    else if (!strcmp(a, "--factor")) sizes->factor = (size_t)atol(v);
    else if (!strcmp(a, "--sizes")) sizes->list = v;
    else if (!strcmp(a, "--iters")) o->iters = atol(v);
    else if (!strcmp(a, "--iter-scale")) o->iter_scale = atof(v);
    else if (!strcmp(a, "--warmup")) o->warmup = atol(v);
    else if (!strcmp(a, "--window")) o->window = atoi(v);
    else if (!strcmp(a, "--pairing")) o->pairing = parse_pairing(v);
    else if (!strcmp(a, "--time-limit")) o->time_limit = atoi(v);
    else return 0;
    ++*i;
    return 1;
}

/* After the last option: 0 if the shared ones are valid, with o->sizes filled in. */
static int finish_measure_opts(measure_opts *o, const size_request *sizes)
{
    if (o->window < 1 || o->iters < 0 || o->warmup < 1 || !(o->iter_scale > 0) ||
        o->pairing < 0 || o->time_limit < 1)
        return -1;
    return sizes->list ? parse_size_list(o, sizes->list)
                       : make_size_range(o, sizes->min, sizes->max, sizes->factor);
}

/* The partner of rank `me` in a group of `size` (even). */
static int pair_peer(int pairing, int me, int size)
{
    if (pairing == PAIRING_HALF)
        return me < size / 2 ? me + size / 2 : me - size / 2;
    return me ^ 1;
}

/* ---- time limit ---- */

static void on_time_limit(int sig)
{
    static const char msg[] = BENCH_PROGRAM ": time limit reached (--time-limit), stopping\n";
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
        bench_fail_errno("signal(SIGALRM)");
    alarm((unsigned)seconds);
}

/* ---- time and data ---- */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long timed_iterations(const measure_opts *o, size_t size)
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
            char msg[256];
            snprintf(msg, sizeof msg, "%s of %zu bytes: byte %zu is %u, expected %u", what, n, i,
                     b[i], pattern_byte(i, seed));
            bench_fail(msg);
        }
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

/* The CSV columns are the same for every benchmark of both programs: streaming rows leave the
 * two latency columns empty. */
static void print_header(const measure_opts *o, const char *name, int is_pingpong)
{
    if (o->csv)
        printf("benchmark,bytes,iterations,pairs,half_rtt_us,max_half_rtt_us,mb_per_s\n");
    else if (is_pingpong)
        printf("# %s\n# %10s %10s %5s %12s %12s %12s\n", name, "bytes", "iters", "pairs",
               "half-RTT us", "max us", "MB/s");
    else
        printf("# %s\n# %10s %10s %12s\n", name, "bytes", "messages", "MB/s");
}

static void print_row(const measure_opts *o, const result *r)
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

static void print_footer(const measure_opts *o)
{
#ifdef BENCH_TEXT_FOOTER
    if (!o->csv)
        printf("%s\n", BENCH_TEXT_FOOTER);
#else
    (void)o;
#endif
}

/* ---- the measurements ---- */

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
 * in seconds. With `barrier_first` every process waits in ch_barrier() right before its clock
 * starts, so that all pairs are timed together. */
static double pingpong_size(channel *c, int leader, const measure_opts *o, int s, uint8_t *buf,
                            int barrier_first)
{
    size_t size = o->sizes[s];
    long it = timed_iterations(o, size);
    for (long i = 0; i < o->warmup; i++)
        pingpong_once(c, leader, buf, size, i == 0 ? (unsigned)(2 * s + 1) : 0);
    if (barrier_first)
        ch_barrier(c);
    double t0 = now();
    for (long i = 0; i < it; i++)
        pingpong_once(c, leader, buf, size, 0);
    double half = (now() - t0) / (double)it / 2;
    pingpong_once(c, leader, buf, size, (unsigned)(2 * s + 101));
    return half;
}

/* Before the first size: 0.2 s of 1-byte round trips, the same for every library and transport.
 * The kernel may start two spinning processes on one core and take a few milliseconds to move one
 * away: an unpinned pair (WaitIO under waitiorun, the raw loops) then measured its first size
 * 3-10x slow now and then, while MPI launchers, which pin ranks, never showed it. The leader says
 * when to stop in the message itself. */
#define SETTLE_SECONDS 0.2
static void settle(channel *c, int leader)
{
    uint8_t go = 1;
    double t0 = now();
    while (go) {
        if (leader) {
            go = now() - t0 < SETTLE_SECONDS;
            ch_send(c, &go, 1, TAG_PING);
            ch_recv(c, &go, 1, TAG_PONG);
        } else {
            ch_recv(c, &go, 1, TAG_PING);
            ch_send(c, &go, 1, TAG_PONG);
        }
    }
}

static void pingpong(channel *c, int leader, const measure_opts *o, const char *name)
{
    uint8_t *buf = xmalloc(o->sizes[o->nsizes - 1]);
    settle(c, leader);
    if (leader)
        print_header(o, name, 1);
    for (int s = 0; s < o->nsizes; s++) {
        double half = pingpong_size(c, leader, o, s, buf, 0);
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

static void stream(channel *c, int leader, const measure_opts *o, const char *name)
{
    int w = o->window;
    uint8_t *buf = xmalloc(o->sizes[o->nsizes - 1] * (size_t)w);
    ch_open_window(c, w);
    settle(c, leader);
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
    ch_close_window(c);
    free(buf);
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
        bench_fail("pairs: no pair reported a figure");
    r.half_us /= r.pairs;
    return r;
}

/* Every process of the group at once, `me` of `np`, each pinging its partner; rank 0 prints. */
static void pairs(channel *c, int leader, int me, int np, const measure_opts *o, const char *name)
{
    uint8_t *buf = xmalloc(o->sizes[o->nsizes - 1]);
    double *all = xmalloc(sizeof *all * (size_t)np);
    if (me == 0)
        print_header(o, name, 1);
    for (int s = 0; s < o->nsizes; s++) {
        ch_barrier(c); /* the warm-up of one pair must not overlap the timing of another */
        double half = pingpong_size(c, leader, o, s, buf, 1);
        ch_gather(c, leader ? half : -1, all);
        if (me == 0) {
            result r = summarise_pairs(name, o->sizes[s], timed_iterations(o, o->sizes[s]), all, np);
            print_row(o, &r);
        }
    }
    if (me == 0)
        print_footer(o);
    free(all);
    free(buf);
}

#endif
