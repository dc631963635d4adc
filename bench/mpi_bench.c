/*
 * mpi_bench.c — the MPI twin of waitio-bench: the same ping-pong, all-pairs and streaming loops,
 * sizes, iteration counts, warm-up, byte checks and CSV, over MPI, so that WaitIO's figures can
 * be put beside Open MPI's and MPICH's from the same run (bench/compare builds it with each MPI).
 *
 *   mpirun -np 2 mpi_bench pingpong [opts]   ranks 0 and 1 of one job
 *   mpirun -np 2 mpi_bench stream [opts]     rank 0 keeps a window of isends in flight, rank 1
 *                                            receives the window and acks it
 *   mpirun -np N mpi_bench pairs [opts]      all ranks at once, rank r with r^1 (--pairing
 *                                            adjacent, default) or with r+N/2 (--pairing half)
 *   mpi_bench connect|connect-stream --role accept|connect --port-file F [opts]
 *                                            ping-pong (or streaming) between two separately
 *                                            launched 1-process jobs coupled with MPI_Open_port /
 *                                            MPI_Comm_accept / MPI_Comm_connect; the accepting job
 *                                            writes its port name to F, the other reads it
 *
 * The measurement (pattern bytes, seeds, warm-up, checked first and last exchange, timing
 * around the timed loop only, iteration counts per size) mirrors bench/waitio_bench.c exactly;
 * only the "move one message" primitives are MPI calls. Every MPI call is checked
 * (MPI_ERRORS_RETURN) and any failure, wrong byte or timeout exits non-zero without a figure.
 */
#include <errno.h>
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_SIZES 64
#define TAG_PING 1
#define TAG_PONG 2
#define TAG_STREAM 3
#define TAG_ACK 4

enum kind { KIND_PINGPONG, KIND_STREAM, KIND_PAIRS, KIND_CONNECT, KIND_CONNECT_STREAM };
enum pairing { PAIRING_ADJACENT, PAIRING_HALF };

typedef struct opts {
    size_t sizes[MAX_SIZES];
    int nsizes;
    long iters;        /* timed iterations per size; 0 = adapted to the size */
    double iter_scale; /* factor on the adapted counts */
    long warmup;
    int window;
    int pairing;
    int csv;
    int time_limit;    /* seconds */
    const char *name;  /* the CSV's benchmark column */
    const char *role;  /* connect: "accept" or "connect" */
    const char *port_file;
} opts;

/* One end of a pair: a communicator (intra- or inter-) and the partner's rank in it. */
typedef struct channel {
    MPI_Comm comm;
    int peer;
    MPI_Request *reqs; /* streaming window */
    MPI_Status *stats; /* (not MPI_STATUSES_IGNORE: MPICH's header makes GCC warn about it) */
} channel;

typedef struct result {
    size_t size;
    long count;
    int pairs;
    double half_us, max_us, mbs;
} result;

/* ---- errors ---- */

static void die(const char *what)
{
    fprintf(stderr, "mpi_bench: %s\n", what);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

static void check(int rc, const char *what)
{
    if (rc == MPI_SUCCESS)
        return;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    fprintf(stderr, "mpi_bench: %s: %s\n", what, text);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        die("out of memory");
    return p;
}

/* ---- time and data: identical to waitio_bench.c ---- */

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
            fprintf(stderr, "mpi_bench: %s of %zu bytes: byte %zu is %u, expected %u\n", what, n, i,
                    b[i], pattern_byte(i, seed));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
}

/* ---- primitives ---- */

static int as_count(size_t n)
{
    if (n > (size_t)0x7fffffff)
        die("message larger than an int count");
    return (int)n;
}

static void ch_send(channel *c, uint8_t *b, size_t n, int tag)
{
    check(MPI_Send(b, as_count(n), MPI_BYTE, c->peer, tag, c->comm), "MPI_Send");
}

static void ch_recv(channel *c, uint8_t *b, size_t n, int tag)
{
    MPI_Status st;
    int got = -1;
    check(MPI_Recv(b, as_count(n), MPI_BYTE, c->peer, tag, c->comm, &st), "MPI_Recv");
    check(MPI_Get_count(&st, MPI_BYTE, &got), "MPI_Get_count");
    if ((size_t)got != n)
        die("MPI receive completed with the wrong length");
}

static void ch_window(channel *c, uint8_t *buf, size_t size, int w, int sending)
{
    for (int j = 0; j < w; j++) {
        uint8_t *p = buf + (size_t)j * size;
        int rc = sending ? MPI_Isend(p, as_count(size), MPI_BYTE, c->peer, TAG_STREAM, c->comm, &c->reqs[j])
                         : MPI_Irecv(p, as_count(size), MPI_BYTE, c->peer, TAG_STREAM, c->comm, &c->reqs[j]);
        check(rc, sending ? "MPI_Isend (stream)" : "MPI_Irecv (stream)");
    }
    check(MPI_Waitall(w, c->reqs, c->stats), "MPI_Waitall (stream)");
}

/* ---- output: the CSV of waitio-bench ---- */

static void print_header(const opts *o, int is_pingpong)
{
    if (o->csv)
        printf("benchmark,bytes,iterations,pairs,half_rtt_us,max_half_rtt_us,mb_per_s\n");
    else if (is_pingpong)
        printf("# %s\n# %10s %10s %5s %12s %12s %12s\n", o->name, "bytes", "iters", "pairs",
               "half-RTT us", "max us", "MB/s");
    else
        printf("# %s\n# %10s %10s %12s\n", o->name, "bytes", "messages", "MB/s");
}

static void print_row(const opts *o, const result *r)
{
    if (o->csv && r->half_us >= 0)
        printf("%s,%zu,%ld,%d,%.3f,%.3f,%.3f\n", o->name, r->size, r->count, r->pairs, r->half_us,
               r->max_us, r->mbs);
    else if (o->csv)
        printf("%s,%zu,%ld,%d,,,%.3f\n", o->name, r->size, r->count, r->pairs, r->mbs);
    else if (r->half_us >= 0)
        printf("  %10zu %10ld %5d %12.2f %12.2f %12.1f\n", r->size, r->count, r->pairs, r->half_us,
               r->max_us, r->mbs);
    else
        printf("  %10zu %10ld %12.1f\n", r->size, r->count, r->mbs);
    fflush(stdout);
}

/* ---- the measurements ---- */

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

/* Warm-up, timed loop, checked last exchange; `sync` (MPI_COMM_NULL: none) is barriered on
 * right before the clock starts. Returns the half round trip in seconds. */
static double pingpong_size(channel *c, int leader, const opts *o, int s, uint8_t *buf, MPI_Comm sync)
{
    size_t size = o->sizes[s];
    long it = timed_iterations(o, size);
    for (long i = 0; i < o->warmup; i++)
        pingpong_once(c, leader, buf, size, i == 0 ? (unsigned)(2 * s + 1) : 0);
    if (sync != MPI_COMM_NULL)
        check(MPI_Barrier(sync), "MPI_Barrier");
    double t0 = now();
    for (long i = 0; i < it; i++)
        pingpong_once(c, leader, buf, size, 0);
    double half = (now() - t0) / (double)it / 2;
    pingpong_once(c, leader, buf, size, (unsigned)(2 * s + 101));
    return half;
}

static void pingpong(channel *c, int leader, const opts *o)
{
    uint8_t *buf = xmalloc(o->sizes[o->nsizes - 1]);
    if (leader)
        print_header(o, 1);
    for (int s = 0; s < o->nsizes; s++) {
        double half = pingpong_size(c, leader, o, s, buf, MPI_COMM_NULL);
        result r = {o->sizes[s], timed_iterations(o, o->sizes[s]), 1, half * 1e6, half * 1e6,
                    (double)o->sizes[s] / half / 1e6};
        if (leader)
            print_row(o, &r);
    }
    free(buf);
}

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

static void stream(channel *c, int leader, const opts *o)
{
    int w = o->window;
    uint8_t *buf = xmalloc(o->sizes[o->nsizes - 1] * (size_t)w);
    c->reqs = xmalloc(sizeof *c->reqs * (size_t)w);
    c->stats = xmalloc(sizeof *c->stats * (size_t)w);
    if (leader)
        print_header(o, 0);
    for (int s = 0; s < o->nsizes; s++) {
        size_t size = o->sizes[s];
        long rounds = timed_iterations(o, size) / w + 2;
        stream_once(c, leader, buf, size, w, (unsigned)(3 * s + 1));
        double t0 = now();
        for (long k = 0; k < rounds; k++)
            stream_once(c, leader, buf, size, w, 0);
        double secs = now() - t0;
        stream_once(c, leader, buf, size, w, (unsigned)(3 * s + 111));
        result r = {size, rounds * w, 1, -1, -1, (double)size * (double)w * (double)rounds / secs / 1e6};
        if (leader)
            print_row(o, &r);
    }
    free(c->reqs);
    free(c->stats);
    free(buf);
}

/* Mean and maximum over the leaders' half round trips (followers report -1), aggregate MB/s. */
static result summarise_pairs(size_t size, long it, const double *half, int n)
{
    result r = {size, it, 0, 0, 0, 0};
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
        die("pairs: no pair reported a figure");
    r.half_us /= r.pairs;
    return r;
}

static void pairs(channel *c, int me, int np, const opts *o)
{
    int leader = me < c->peer;
    uint8_t *buf = xmalloc(o->sizes[o->nsizes - 1]);
    double *all = xmalloc(sizeof *all * (size_t)np);
    if (me == 0)
        print_header(o, 1);
    for (int s = 0; s < o->nsizes; s++) {
        check(MPI_Barrier(c->comm), "MPI_Barrier");
        double half = pingpong_size(c, leader, o, s, buf, c->comm);
        double mine = leader ? half : -1;
        check(MPI_Gather(&mine, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, 0, c->comm), "MPI_Gather");
        if (me == 0) {
            result r = summarise_pairs(o->sizes[s], timed_iterations(o, o->sizes[s]), all, np);
            print_row(o, &r);
        }
    }
    free(all);
    free(buf);
}

/* ---- set-up ---- */

static void run_in_job(const opts *o, int kind)
{
    int me, np;
    check(MPI_Comm_rank(MPI_COMM_WORLD, &me), "MPI_Comm_rank");
    check(MPI_Comm_size(MPI_COMM_WORLD, &np), "MPI_Comm_size");
    channel c = {MPI_COMM_WORLD, 0, NULL, NULL};
    if (kind == KIND_PAIRS) {
        if (np < 2 || np % 2)
            die("pairs needs an even number of ranks");
        c.peer = o->pairing == PAIRING_HALF ? (me < np / 2 ? me + np / 2 : me - np / 2) : me ^ 1;
        pairs(&c, me, np, o);
        return;
    }
    if (np != 2)
        die("pingpong and stream need exactly 2 ranks (mpirun -np 2)");
    c.peer = 1 - me;
    if (kind == KIND_STREAM)
        stream(&c, me == 0, o);
    else
        pingpong(&c, me == 0, o);
}

/* The port name, written to a temporary file renamed into place so the reader never sees half. */
static void publish_port(const char *file, const char *port)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", file);
    FILE *f = fopen(tmp, "w");
    if (!f || fprintf(f, "%s\n", port) < 0 || fclose(f) || rename(tmp, file)) {
        fprintf(stderr, "mpi_bench: cannot write the port file %s: %s\n", file, strerror(errno));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* Waits (at most the time limit, through SIGALRM) for the accepting job's port file. */
static void read_port(const char *file, char *port, size_t cap)
{
    FILE *f;
    while (!(f = fopen(file, "r"))) {
        if (errno != ENOENT) {
            fprintf(stderr, "mpi_bench: cannot read the port file %s: %s\n", file, strerror(errno));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        usleep(20000);
    }
    if (!fgets(port, (int)cap, f))
        die("the port file is empty");
    fclose(f);
    port[strcspn(port, "\n")] = '\0';
}

static void run_connected(const opts *o, int kind)
{
    int np;
    check(MPI_Comm_size(MPI_COMM_WORLD, &np), "MPI_Comm_size");
    if (np != 1)
        die("connect needs 1 rank per job (mpirun -np 1), two jobs");
    char port[MPI_MAX_PORT_NAME + 1];
    int accepting = !strcmp(o->role, "accept");
    channel c = {MPI_COMM_NULL, 0, NULL, NULL};
    if (accepting) {
        check(MPI_Open_port(MPI_INFO_NULL, port), "MPI_Open_port");
        publish_port(o->port_file, port);
        check(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &c.comm), "MPI_Comm_accept");
    } else {
        read_port(o->port_file, port, sizeof port);
        check(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &c.comm), "MPI_Comm_connect");
    }
    check(MPI_Comm_set_errhandler(c.comm, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    if (kind == KIND_CONNECT_STREAM)
        stream(&c, accepting, o);
    else
        pingpong(&c, accepting, o);
    check(MPI_Comm_disconnect(&c.comm), "MPI_Comm_disconnect");
    if (accepting)
        check(MPI_Close_port(port), "MPI_Close_port");
}

/* ---- options ---- */

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
        die("out of memory");
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

static int parse_kind(const char *name)
{
    static const char *names[] = {"pingpong", "stream", "pairs", "connect", "connect-stream"};
    for (int k = 0; k < 5; k++)
        if (!strcmp(name, names[k]))
            return k;
    return -1;
}

static int parse_options(opts *o, int kind, int argc, char **argv)
{
    size_t min = 8, max = 8u << 20, factor = 2;
    const char *list = NULL, *pairing = "adjacent";
    *o = (opts){.iter_scale = 1, .warmup = 10, .window = 16, .time_limit = 600, .name = argv[1]};
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--csv")) o->csv = 1;
        else if (!v) return -1;
        else if (!strcmp(a, "--min")) min = parse_size(v), i++;
        else if (!strcmp(a, "--max")) max = parse_size(v), i++;
        else if (!strcmp(a, "--factor")) factor = (size_t)atol(v), i++;
        else if (!strcmp(a, "--sizes")) list = v, i++;
        else if (!strcmp(a, "--iters")) o->iters = atol(v), i++;
        else if (!strcmp(a, "--iter-scale")) o->iter_scale = atof(v), i++;
        else if (!strcmp(a, "--warmup")) o->warmup = atol(v), i++;
        else if (!strcmp(a, "--window")) o->window = atoi(v), i++;
        else if (!strcmp(a, "--pairing")) pairing = v, i++;
        else if (!strcmp(a, "--time-limit")) o->time_limit = atoi(v), i++;
        else if (!strcmp(a, "--name")) o->name = v, i++;
        else if (!strcmp(a, "--role")) o->role = v, i++;
        else if (!strcmp(a, "--port-file")) o->port_file = v, i++;
        else return -1;
    }
    o->pairing = !strcmp(pairing, "half") ? PAIRING_HALF : !strcmp(pairing, "adjacent") ? PAIRING_ADJACENT : -1;
    if (o->window < 1 || o->iters < 0 || o->warmup < 1 || !(o->iter_scale > 0) || o->pairing < 0 ||
        o->time_limit < 1)
        return -1;
    int connecting = kind == KIND_CONNECT || kind == KIND_CONNECT_STREAM;
    if (connecting && (!o->role || !o->port_file || (strcmp(o->role, "accept") && strcmp(o->role, "connect"))))
        return -1;
    return list ? parse_size_list(o, list) : make_size_range(o, min, max, factor);
}

static void usage(void)
{
    fprintf(stderr,
        "usage: mpirun -np 2 mpi_bench pingpong|stream [options]\n"
        "       mpirun -np N mpi_bench pairs [--pairing adjacent|half] [options]\n"
        "       mpirun -np 1 mpi_bench connect|connect-stream --role accept|connect --port-file F [options]\n"
        "options (as waitio-bench): --sizes LIST | --min B --max B --factor F, --iters N,\n"
        "  --iter-scale F, --warmup N, --window W, --csv, --time-limit S (default 600),\n"
        "  --name NAME (the CSV's benchmark column; default: the mode)\n");
}

static void on_time_limit(int sig)
{
    static const char msg[] = "mpi_bench: time limit reached (--time-limit), stopping\n";
    (void)sig;
    if (write(STDERR_FILENO, msg, sizeof msg - 1) < 0) {
        /* nothing more can be reported from a signal handler */
    }
    _exit(124);
}

int main(int argc, char **argv)
{
    int kind = argc > 1 ? parse_kind(argv[1]) : -1;
    opts o;
    if (kind < 0 || parse_options(&o, kind, argc, argv)) {
        usage();
        return 2;
    }
    signal(SIGALRM, on_time_limit);
    alarm((unsigned)o.time_limit);
    check(MPI_Init(&argc, &argv), "MPI_Init");
    check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    if (kind == KIND_CONNECT || kind == KIND_CONNECT_STREAM)
        run_connected(&o, kind);
    else
        run_in_job(&o, kind);
    check(MPI_Finalize(), "MPI_Finalize");
    return 0;
}
