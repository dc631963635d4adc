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
 * around the timed loop only, iteration counts per size, CSV) is bench/bench_core.h, the same
 * code as bench/waitio_bench.c runs; only the "move one message" primitives are MPI calls.
 * Every MPI call is checked (MPI_ERRORS_RETURN) and any failure, wrong byte or timeout exits
 * non-zero without a figure.
 */
#include <errno.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BENCH_PROGRAM "mpi_bench"
#include "bench_core.h"

enum kind { KIND_PINGPONG, KIND_STREAM, KIND_PAIRS, KIND_CONNECT, KIND_CONNECT_STREAM };

typedef struct opts {
    measure_opts measure; /* shared with waitio-bench (pairing: AUTO is adjacent here) */
    const char *name;  /* the CSV's benchmark column */
    const char *role;  /* connect: "accept" or "connect" */
    const char *port_file;
} opts;

/* One end of a pair: a communicator (intra- or inter-) and the partner's rank in it. */
struct channel {
    MPI_Comm comm;
    int peer;
    MPI_Request *reqs; /* streaming window */
    MPI_Status *stats; /* (not MPI_STATUSES_IGNORE: MPICH's header makes GCC warn about it) */
};

/* ---- errors ---- */

static _Noreturn void bench_fail(const char *msg)
{
    fprintf(stderr, "mpi_bench: %s\n", msg);
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

/* ---- primitives ---- */

static int as_count(size_t n)
{
    if (n > (size_t)0x7fffffff)
        bench_fail("message larger than an int count");
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
        bench_fail("MPI receive completed with the wrong length");
}

static void ch_open_window(channel *c, int w)
{
    c->reqs = xmalloc(sizeof *c->reqs * (size_t)w);
    c->stats = xmalloc(sizeof *c->stats * (size_t)w);
}

static void ch_close_window(channel *c)
{
    free(c->reqs);
    free(c->stats);
    c->reqs = NULL;
    c->stats = NULL;
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

/* pairs: MPI's own collectives where waitio-bench sends messages to and from rank 0. */
static void ch_barrier(channel *c)
{
    check(MPI_Barrier(c->comm), "MPI_Barrier");
}

static void ch_gather(channel *c, double value, double *all)
{
    check(MPI_Gather(&value, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, 0, c->comm), "MPI_Gather");
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
            bench_fail("pairs needs an even number of ranks");
        c.peer = pair_peer(o->measure.pairing, me, np);
        pairs(&c, me < c.peer, me, np, &o->measure, o->name);
        return;
    }
    if (np != 2)
        bench_fail("pingpong and stream need exactly 2 ranks (mpirun -np 2)");
    c.peer = 1 - me;
    if (kind == KIND_STREAM)
        stream(&c, me == 0, &o->measure, o->name);
    else
        pingpong(&c, me == 0, &o->measure, o->name);
}

/* The port name, written to a temporary file renamed into place so the reader never sees half
 * (mkstemp: an unpredictable name, created exclusively, so no planted symlink is followed). */
static void publish_port(const char *file, const char *port)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.XXXXXX", file);
    int fd = mkstemp(tmp);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
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
        bench_fail("the port file is empty");
    fclose(f);
    port[strcspn(port, "\n")] = '\0';
}

static void run_connected(const opts *o, int kind)
{
    int np;
    check(MPI_Comm_size(MPI_COMM_WORLD, &np), "MPI_Comm_size");
    if (np != 1)
        bench_fail("connect needs 1 rank per job (mpirun -np 1), two jobs");
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
        stream(&c, accepting, &o->measure, o->name);
    else
        pingpong(&c, accepting, &o->measure, o->name);
    check(MPI_Comm_disconnect(&c.comm), "MPI_Comm_disconnect");
    if (accepting)
        check(MPI_Close_port(port), "MPI_Close_port");
}

/* ---- options ---- */

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
    size_request sizes = default_size_request();
    *o = (opts){.measure = default_measure_opts(), .name = argv[1]};
    for (int i = 2; i < argc; i++) {
        if (take_measure_option(&o->measure, &sizes, argc, argv, &i))
            continue;
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) return -1;
        if (!strcmp(a, "--name")) o->name = v, i++;
        else if (!strcmp(a, "--role")) o->role = v, i++;
        else if (!strcmp(a, "--port-file")) o->port_file = v, i++;
        else return -1;
    }
    int connecting = kind == KIND_CONNECT || kind == KIND_CONNECT_STREAM;
    if (connecting && (!o->role || !o->port_file || (strcmp(o->role, "accept") && strcmp(o->role, "connect"))))
        return -1;
    return finish_measure_opts(&o->measure, &sizes);
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

int main(int argc, char **argv)
{
    int kind = argc > 1 ? parse_kind(argv[1]) : -1;
    opts o;
    if (kind < 0 || parse_options(&o, kind, argc, argv)) {
        usage();
        return 2;
    }
    arm_time_limit(o.measure.time_limit);
    check(MPI_Init(&argc, &argv), "MPI_Init");
    check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    if (kind == KIND_CONNECT || kind == KIND_CONNECT_STREAM)
        run_connected(&o, kind);
    else
        run_in_job(&o, kind);
    check(MPI_Finalize(), "MPI_Finalize");
    return 0;
}
