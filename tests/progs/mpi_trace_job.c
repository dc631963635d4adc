/*
 * mpi_trace_job.c — the MPI side of the tracing test (tests/scripts/trace_run.sh; the Python side is
 * tests/python/trace_job.py, which follows the same schedule). Every universe rank, in each of
 * ROUNDS rounds, sends one message to another rank chosen by a schedule that every process
 * computes alike (splitmix64 of seed, round and sender): sizes from 0 B to 300000 B (eager and
 * rendezvous), tags 1000..1049, every byte a function of round and sender, checked on arrival.
 * Every 5th round an Allreduce over the universe checks the round's sum. At the end each process
 * prints what it sent to every PB ("trace_job sent: PB 0 -> PB 2: 7 messages 123456 bytes"),
 * which the test compares with waitio-trace's summary.
 * Usage: trace_job SEED ROUNDS [PAUSE_MS]   (PAUSE_MS: sleep between rounds, for kill tests)
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "waitio_mpi.h"

#define DIE(...) do { fprintf(stderr, "trace_job: " __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)
#define CK(x) do { int rc_ = (x); if (rc_) DIE("%s: %s (%s)", #x, waitio_strerror(rc_), waitio_error_message()); } while (0)
#define MAXSIZE 300000

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

typedef struct { int dest; size_t size; int tag; } plan;

static plan schedule(uint64_t seed, int round, int sender, int n)
{
    uint64_t r = mix(seed * 1000003u + (uint64_t)round * 1009u + (uint64_t)sender);
    plan p = {(int)((uint64_t)(sender + 1) + r % (uint64_t)(n - 1)) % n, (size_t)((r >> 20) % MAXSIZE),
              1000 + (int)((r >> 40) % 50)};
    return p;
}

static uint8_t byte_of(size_t i, int round, int sender) { return (uint8_t)(i * 31u + (unsigned)round * 7u + (unsigned)sender); }

int main(int argc, char **argv)
{
    alarm(150);
    MPI_Init(&argc, &argv);
    if (argc < 3)
        DIE("usage: trace_job SEED ROUNDS [PAUSE_MS]");
    uint64_t seed = strtoull(argv[1], NULL, 10);
    int rounds = atoi(argv[2]), pause_ms = argc > 3 ? atoi(argv[3]) : 0;
    WAITIO_MPI_Comm U;
    CK(waitio_create_universe(&U));
    int me, n, npb;
    CK(WAITIO_MPI_Comm_rank(U, &me));
    CK(WAITIO_MPI_Comm_size(U, &n));
    CK(waitio_pb_size(&npb));
    int *pb_of = malloc(sizeof(int) * (size_t)n);
    for (int r = 0; r < n; r++)
        CK(waitio_group_member(U, r, &pb_of[r], NULL));
    long *msgs = calloc((size_t)npb, sizeof(long));
    unsigned long long *bytes = calloc((size_t)npb, sizeof(unsigned long long));
    uint8_t *out = malloc(MAXSIZE), **in = malloc(sizeof(uint8_t *) * (size_t)n);
    WAITIO_MPI_Request *req = malloc(sizeof(WAITIO_MPI_Request) * (size_t)(n + 1));
    for (int s = 0; s < n; s++)
        in[s] = malloc(MAXSIZE);
    for (int round = 0; round < rounds; round++) {
        int k = 0;
        for (int s = 0; s < n; s++) {
            plan p = schedule(seed, round, s, n);
            if (p.dest == me && s != me)
                CK(WAITIO_MPI_Irecv(in[s], (int)p.size, WAITIO_MPI_BYTE, s, p.tag, U, &req[k++]));
        }
        plan mine = schedule(seed, round, me, n);
        for (size_t i = 0; i < mine.size; i++)
            out[i] = byte_of(i, round, me);
        CK(WAITIO_MPI_Isend(out, (int)mine.size, WAITIO_MPI_BYTE, mine.dest, mine.tag, U, &req[k++]));
        msgs[pb_of[mine.dest]]++;
        bytes[pb_of[mine.dest]] += mine.size;
        CK(WAITIO_MPI_Waitall(k, req, WAITIO_MPI_STATUSES_IGNORE));
        for (int s = 0; s < n; s++) {
            plan p = schedule(seed, round, s, n);
            if (p.dest != me || s == me)
                continue;
            for (size_t i = 0; i < p.size; i++)
                if (in[s][i] != byte_of(i, round, s))
                    DIE("round %d: byte %zu from rank %d is %u", round, i, s, in[s][i]);
        }
        if (round % 5 == 4) {
            int64_t v = round + me, sum = -1;
            CK(WAITIO_MPI_Allreduce(&v, &sum, 1, WAITIO_MPI_INT64_T, WAITIO_MPI_SUM, U));
            if (sum != (int64_t)round * n + (int64_t)n * (n - 1) / 2)
                DIE("round %d: allreduce gave %lld", round, (long long)sum);
        }
        if (pause_ms)
            nanosleep(&(struct timespec){pause_ms / 1000, (long)(pause_ms % 1000) * 1000000L}, NULL);
    }
    int mypb;
    CK(waitio_pb_rank(&mypb));
    for (int pb = 0; pb < npb; pb++)
        printf("trace_job sent: PB %d -> PB %d: %ld messages %llu bytes\n", mypb, pb, msgs[pb], bytes[pb]);
    fflush(stdout);
    CK(waitio_finalize());
    MPI_Finalize();
    return 0;
}
