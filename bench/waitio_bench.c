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
 *   waitio-bench rawshm-pingpong / rawshm-stream [opts]   one command: forks a peer, the same
 *                                    loops over shared memory with no library at all: per
 *                                    direction a ring of slots, each a sequence word followed
 *                                    by the data in the same cache line; the sender copies the
 *                                    data in and publishes the sequence word, the receiver
 *                                    spins on it and copies the data out. The physical limit
 *                                    that a shared-memory transport is measured against.
 *
 * All channels run the identical measurement code (bench/bench_core.h, shared with the MPI twin
 * bench/mpi_bench.c); only the "move one whole message" primitives differ. Ping-pong reports
 * the half round trip (µs) and size / half round trip (MB/s, 1 MB = 10^6 B); pairs reports the mean and the maximum half round trip
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
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include "waitio.h"
#include "waitio_version.h"

#define BENCH_PROGRAM "waitio-bench"
#define BENCH_TEXT_FOOTER "# data verified on the first and the last exchange of every size"
#include "bench_core.h"

#define TAG_BARRIER 5
#define TAG_RELEASE 6
#define TAG_RESULT 7

typedef struct opts {
    measure_opts measure; /* shared with the MPI twin (pairing: enum pairing, AUTO by the PBs) */
    int raw_block;   /* raw receiver blocks in recv() instead of polling */
    size_t raw_chunk; /* raw sender: bytes per send() call; 0 = the whole message at once */
    int procs;       /* > 0: fork this many processes into this PB (WAITIO_PB_RANK/SIZE) */
} opts;

/* One end's view of one direction of the raw shared-memory channel: a ring of `nslots` slots of
 * `stride` bytes in shared memory, each a sequence word with the data right after it (one cache
 * line for small messages), and the receiver's count of consumed messages on a line of its own.
 * `next` counts this end's messages in this direction (private to the end). */
typedef struct rawshm_dir {
    _Atomic uint64_t *consumed;
    uint8_t *slots;
    size_t stride, nslots;
    uint64_t next;
} rawshm_dir;

/* Moves whole messages between the two ends: WaitIO over a group (fd < 0, no shm), a raw socket
 * (fd >= 0), or raw shared memory (tx/rx). */
struct channel {
    waitio_group_t g;
    int peer;
    int me, size;        /* group rank and size (pairs: barrier and gather to rank 0) */
    int fd;
    int raw_block;
    size_t raw_chunk;
    waitio_req_t *reqs;  /* streaming window (WaitIO) */
    rawshm_dir *tx, *rx; /* raw shared memory */
};

/* ---- errors ---- */

static void die_waitio(const char *what, int rc)
{
    fprintf(stderr, "waitio-bench: %s: %s (%s)\n", what, waitio_strerror(rc), waitio_error_message());
    exit(1);
}

static _Noreturn void bench_fail(const char *msg)
{
    fprintf(stderr, "waitio-bench: %s\n", msg);
    exit(1);
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
            bench_fail_errno("raw send");
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
            bench_fail_errno("raw recv");
        if (k == 0)
            bench_fail("raw recv: the peer closed the connection");
        done += (size_t)k;
    }
}

/* ---- raw shared memory ---- */

#define RAWSHM_WORD 8

static _Atomic uint64_t *rawshm_seq(const rawshm_dir *d, uint64_t k)
{
    return (_Atomic uint64_t *)(void *)(d->slots + (size_t)(k % d->nslots) * d->stride);
}

static void rawshm_send(rawshm_dir *d, const uint8_t *b, size_t n)
{
    uint64_t k = d->next++;
    while (k - atomic_load_explicit(d->consumed, memory_order_acquire) >= d->nslots)
        ; /* the slot is still the receiver's */
    _Atomic uint64_t *seq = rawshm_seq(d, k);
    memcpy((uint8_t *)seq + RAWSHM_WORD, b, n);
    atomic_store_explicit(seq, k + 1, memory_order_release);
}

static void rawshm_recv(rawshm_dir *d, uint8_t *b, size_t n)
{
    uint64_t k = d->next++;
    _Atomic uint64_t *seq = rawshm_seq(d, k);
    while (atomic_load_explicit(seq, memory_order_acquire) != k + 1)
        ;
    memcpy(b, (uint8_t *)seq + RAWSHM_WORD, n);
    atomic_store_explicit(d->consumed, k + 1, memory_order_release);
}

static void ch_send(channel *c, uint8_t *b, size_t n, int tag)
{
    if (c->tx) {
        rawshm_send(c->tx, b, n);
        return;
    }
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

static void ch_recv(channel *c, uint8_t *b, size_t n, int tag)
{
    if (c->rx) {
        rawshm_recv(c->rx, b, n);
        return;
    }
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
        bench_fail("waitio receive completed with the wrong length");
}

static void ch_open_window(channel *c, int w)
{
    c->reqs = xmalloc(sizeof *c->reqs * (size_t)w);
}

static void ch_close_window(channel *c)
{
    free(c->reqs);
    c->reqs = NULL;
}

/* One window of `w` messages of `size` bytes at buf, buf + size, ...: sent or received. */
static void ch_window(channel *c, uint8_t *buf, size_t size, int w, int sending)
{
    if (c->tx) {
        for (int j = 0; j < w; j++) {
            if (sending)
                rawshm_send(c->tx, buf + (size_t)j * size, size);
            else
                rawshm_recv(c->rx, buf + (size_t)j * size, size);
        }
        return;
    }
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

/* ---- pairs: every process of the group at once; tiny collectives over WaitIO messages ---- */

/* Posts one message per rank 1..size-1 (or receives one from each) and waits for all. */
static void root_exchange_all(channel *c, void *buf, size_t len, int tag, int sending)
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

static void send_to(channel *c, int dst, void *b, size_t n, int tag)
{
    channel to = *c;
    to.peer = dst;
    ch_send(&to, b, n, tag);
}

static void recv_from(channel *c, int src, void *b, size_t n, int tag)
{
    channel from = *c;
    from.peer = src;
    ch_recv(&from, b, n, tag);
}

/* Everyone reports to rank 0, which then releases everyone: all pairs start their clocks
 * within one release message of each other. */
static void ch_barrier(channel *c)
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
static void ch_gather(channel *c, double value, double *all)
{
    if (c->me != 0) {
        send_to(c, 0, &value, sizeof value, TAG_RESULT);
        return;
    }
    all[0] = value;
    root_exchange_all(c, all, sizeof *all, TAG_RESULT, 0);
}

enum kind { KIND_PINGPONG, KIND_STREAM, KIND_PAIRS };

static void run_benchmark(channel *c, int leader, const opts *o, int kind, const char *name)
{
    if (kind == KIND_STREAM)
        stream(c, leader, &o->measure, name);
    else if (kind == KIND_PAIRS)
        pairs(c, leader, c->me, c->size, &o->measure, name);
    else
        pingpong(c, leader, &o->measure, name);
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
        bench_fail("waitio_get_nprocs disagrees with waitio_pb_size");
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
    int pairing = o->measure.pairing != PAIRING_AUTO ? o->measure.pairing : npb == 1 ? PAIRING_ADJACENT : PAIRING_HALF;
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
        bench_fail_errno("setenv WAITIO_PB_RANK/WAITIO_PB_SIZE");
}

/* Forks ranks 1..n-1 (they die with their parent); returns this process's PB rank. */
static int fork_pb_processes(int n, pid_t *children)
{
    if (launcher_sets_ranks())
        bench_fail("--procs: the PB's ranks are already set by the environment (WAITIO_PB_RANK or an "
                "MPI launcher's variables); drop --procs or the launcher");
    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid();
    for (int r = 1; r < n; r++) {
        pid_t pid = fork();
        if (pid < 0)
            bench_fail_errno("fork");
        if (pid == 0) {
            if (prctl(PR_SET_PDEATHSIG, SIGKILL))
                bench_fail_errno("prctl(PR_SET_PDEATHSIG)");
            if (getppid() != parent) /* the parent died before the line above took effect */
                bench_fail("--procs: the PB's first process is gone");
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
                bench_fail_errno("waitpid");
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
        bench_fail_errno("raw socket");
    if (bind(lfd, (struct sockaddr *)addr, sizeof *addr) || listen(lfd, 1) ||
        getsockname(lfd, (struct sockaddr *)addr, &alen))
        bench_fail_errno("raw listen");
    return lfd;
}

static int raw_connect(const struct sockaddr_in *addr)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        bench_fail_errno("raw socket");
    if (connect(fd, (const struct sockaddr *)addr, sizeof *addr))
        bench_fail_errno("raw connect");
    return fd;
}

static void raw_nodelay(int fd)
{
    int one = 1;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one))
        bench_fail_errno("setsockopt TCP_NODELAY");
}

static void wait_for_child(pid_t pid)
{
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            bench_fail_errno("waitpid");
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        bench_fail("the raw-TCP peer process failed");
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
        bench_fail_errno("fork");
    channel c = {.fd = -1, .raw_block = o->raw_block, .raw_chunk = o->raw_chunk};
    if (pid == 0) {
        close(lfd);
        c.fd = raw_connect(&addr);
    } else {
        c.fd = accept(lfd, NULL, NULL);
        if (c.fd < 0)
            bench_fail_errno("raw accept");
        close(lfd);
    }
    raw_nodelay(c.fd);
    run_benchmark(&c, pid != 0, o, is_stream ? KIND_STREAM : KIND_PINGPONG, raw_name(o, is_stream));
    close(c.fd);
    if (pid == 0)
        _exit(0);
    wait_for_child(pid);
}

/* ---- set-up: raw shared memory between this process and a forked peer ---- */

static void run_rawshm(const opts *o, int is_stream)
{
    size_t max = o->measure.sizes[o->measure.nsizes - 1];
    size_t stride = (RAWSHM_WORD + max + 63) & ~(size_t)63;
    size_t nslots = is_stream ? (size_t)o->measure.window : 1;
    size_t ring = stride * nslots;
    /* two consumed counters on lines of their own, then the two rings; zero-filled: nothing
     * sent, nothing consumed */
    size_t len = 2 * 64 + 2 * ring;
    uint8_t *base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED)
        bench_fail_errno("mmap (raw shared memory)");
    rawshm_dir dirs[2];
    for (int i = 0; i < 2; i++)
        dirs[i] = (rawshm_dir){.consumed = (_Atomic uint64_t *)(void *)(base + 64 * i),
                               .slots = base + 2 * 64 + (size_t)i * ring, .stride = stride, .nslots = nslots};
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        bench_fail_errno("fork");
    if (pid == 0 && prctl(PR_SET_PDEATHSIG, SIGKILL))
        bench_fail_errno("prctl(PR_SET_PDEATHSIG)");
    /* the parent sends on direction 0, the child on direction 1 */
    channel c = {.fd = -1, .tx = &dirs[pid == 0], .rx = &dirs[pid != 0]};
    run_benchmark(&c, pid != 0, o, is_stream ? KIND_STREAM : KIND_PINGPONG,
                  is_stream ? "rawshm-stream" : "rawshm-pingpong");
    if (pid == 0)
        _exit(0);
    wait_for_child(pid);
    munmap(base, len);
}

/* ---- options ---- */

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
        "  rawshm-pingpong, rawshm-stream: the same loops over shared memory with a forked peer and\n"
        "      no library (a sequence word beside the data, spinning): the physical limit\n"
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
        "                     (streaming rows leave the two latency columns empty)\n"
        "  -h, --help         this text; --version: the version (alone)\n");
}

static int parse_options(opts *o, int argc, char **argv)
{
    size_request sizes = default_size_request();
    const char *chunk = NULL;
    *o = (opts){.measure = default_measure_opts()};
    for (int i = 2; i < argc; i++) {
        if (take_measure_option(&o->measure, &sizes, argc, argv, &i))
            continue;
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--block")) o->raw_block = 1;
        else if (!v) return -1;
        else if (!strcmp(a, "--chunk")) chunk = v, i++;
        else if (!strcmp(a, "--procs")) o->procs = atoi(v), i++;
        else return -1;
    }
    if (o->procs < 0 || o->procs > 1024)
        return -1;
    if (chunk && !(o->raw_chunk = parse_size(chunk)))
        return -1;
    return finish_measure_opts(&o->measure, &sizes);
}

enum raw_kind { RAW_NONE, RAW_TCP, RAW_SHM };

/* "pingpong", "stream", "pairs", "raw-pingpong", "raw-stream" (or "rawtcp-..."), "rawshm-...". */
static int parse_benchmark(const char *name, int *is_raw, int *kind)
{
    *is_raw = !strncmp(name, "raw-", 4) || !strncmp(name, "rawtcp-", 7) ? RAW_TCP
            : !strncmp(name, "rawshm-", 7) ? RAW_SHM : RAW_NONE;
    if (*is_raw)
        name = strchr(name, '-') + 1;
    *kind = !strcmp(name, "stream") ? KIND_STREAM : !strcmp(name, "pairs") ? KIND_PAIRS
          : !strcmp(name, "pingpong") ? KIND_PINGPONG : -1;
    return *kind < 0 || (*is_raw && *kind == KIND_PAIRS) ? -1 : 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("waitio-bench (WaitIO) %s\n", WAITIO_VERSION_STRING);
        return 0;
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
    arm_time_limit(o.measure.time_limit);
    if (is_raw == RAW_SHM) {
        run_rawshm(&o, kind == KIND_STREAM);
        return 0;
    }
    if (is_raw) {
        run_raw(&o, kind == KIND_STREAM);
        return 0;
    }
    pid_t children[1024];
    int rank = o.procs > 1 ? fork_pb_processes(o.procs, children) : 0;
    run_waitio(&o, kind);
    return rank == 0 && o.procs > 1 ? wait_pb_processes(o.procs, children) : 0;
}
