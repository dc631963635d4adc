/*
 * gpu_pipe.c — device messages staged chunk by chunk across a link (src/gpu/pipeline.c), between
 * universe ranks 0 and 1, meant to run over tcp (tests/gpu/ci_pipe.sh, tests/gpu/run.sh):
 *
 *   --check     both ranks send to each other at once, for every buffer-kind pair asked for
 *               (--kinds dd,dh,hd: sender's kind then receiver's; d = cuMemAlloc'ed memory), sizes
 *               0 B to --max around the multiples of --chunk (the pipeline's chunk: k*chunk - 1,
 *               k*chunk, k*chunk + 1 for k up to 5, then random (log-uniform, at most 64 MiB),
 *               --max last), at random offsets;
 *               every byte checked after it crossed, 64 canary bytes after each receive.
 *   --time N    rank 0 sends --max bytes device -> device N times, rank 1 answers each with one
 *               byte; rank 0 prints the median time of a transfer ("gpu_pipe: median N us").
 *   --die WHO   rank 0 sends --max bytes device -> device; WHO (sender or receiver) makes progress
 *               for --die-ms milliseconds, mid-transfer, then kills itself; the survivor's request
 *               must fail with a peer error, and it finalizes cleanly.
 * With the fake driver (WAITIO_CUDA_LIBRARY) or a real GPU.
 */
#include <signal.h>
#include <time.h>
#include "gpu_testdrv.h"
#include "testutil.h"
#include "gpu_side.h"

#define TAG 91

/* Small sizes, then the chunk boundaries, then random sizes, --max in the last round. */
static size_t pick_size(tu_rng *rng, int round, int rounds, size_t chunk, size_t max)
{
    if (round == rounds - 1)
        return max;
    static const size_t small[] = {0, 1, 4096};
    if (round < 3)
        return small[round];
    int b = round - 3; /* k*chunk - 1, k*chunk, k*chunk + 1 for k = 1..5 */
    if (b < 15) {
        size_t n = (size_t)(b / 3 + 1) * chunk + (size_t)(b % 3) - 1;
        return n > max ? max : n;
    }
    int bits = 10 + (int)tu_rng_below(rng, 17); /* up to 64 MiB, most far smaller */
    size_t s = (size_t)tu_rng_below(rng, (1ull << bits) + 1);
    return s > max ? max : s;
}

static void run_check(waitio_group_t g, int me, const char *kinds, int rounds, size_t chunk, size_t max,
                      uint64_t seed)
{
    uint8_t *host = tu_xmalloc(max + CANARY), *check = tu_xmalloc(max + CANARY);
    side dsnd, drcv, hsnd, hrcv;
    side_alloc(&dsnd, 1, max + 128);
    side_alloc(&drcv, 1, max + 128 + CANARY);
    side_alloc(&hsnd, 0, max + 128);
    side_alloc(&hrcv, 0, max + 128 + CANARY);
    tu_rng rng = tu_rng_make(seed, 0, 0, 0); /* the same sizes in both processes */
    tu_rng offs = tu_rng_make(seed, (uint64_t)me, 1, 0);
    uint32_t seq = 0;
    for (int r = 0; r < rounds; r++) {
        size_t len = pick_size(&rng, r, rounds, chunk, max);
        for (const char *k = kinds; k[0] && k[1]; k += k[2] == ',' ? 3 : 2) {
            tu_phase("round %d, %zu bytes, kinds %c%c", r, len, k[0], k[1]);
            exchange(g, me, 1 - me, k[0] == 'd' ? &dsnd : &hsnd, k[1] == 'd' ? &drcv : &hrcv, len, TAG, seq++,
                     seed, host, check, &offs);
            if (!k[2])
                break;
        }
    }
    printf("gpu_pipe: rank %d: %u exchanges checked (kinds %s, up to %zu bytes, chunk %zu)\n", me, seq, kinds,
           max, chunk);
    side_free(&dsnd);
    side_free(&drcv);
    side_free(&hsnd);
    side_free(&hrcv);
    free(host);
    free(check);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One-way device -> device transfers of len bytes, each answered by one byte, timed at rank 0.
 * The first transfer opens the connection and is not counted. */
static void run_time(waitio_group_t g, int me, int n, size_t len, uint64_t seed)
{
    side d;
    side_alloc(&d, 1, len);
    uint8_t *host = tu_xmalloc(len);
    double *t = calloc((size_t)n, sizeof *t);
    char ack = 0;
    waitio_req_t req;
    if (me == 0) {
        tu_msg_fill(host, len, 0, 1, TAG, 0, seed);
        side_put(&d, 0, host, len);
    }
    for (int i = -1; i < n; i++) {
        tu_phase("timed transfer %d", i);
        if (me == 0) {
            double t0 = tu_now();
            TU_CHECK(waitio_isend(g, 1, (char *)d.mem, len, TAG, &req));
            TU_CHECK(waitio_wait(&req));
            TU_CHECK(waitio_irecv(g, 1, &ack, 1, TAG + 1, &req));
            TU_CHECK(waitio_wait(&req));
            if (i >= 0)
                t[i] = tu_now() - t0;
        } else {
            TU_CHECK(waitio_irecv(g, 0, (char *)d.mem, len, TAG, &req));
            TU_CHECK(waitio_wait(&req));
            TU_CHECK(waitio_isend(g, 0, &ack, 1, TAG + 1, &req));
            TU_CHECK(waitio_wait(&req));
        }
    }
    if (me == 1) { /* the last transfer's bytes, checked */
        side_get(&d, 0, host, len);
        char why[256];
        if (!tu_msg_check(host, len, 0, 1, TAG, 0, seed, why, sizeof why))
            TU_ERR("timed transfer: %s", why);
    } else {
        qsort(t, (size_t)n, sizeof *t, cmp_double);
        printf("gpu_pipe: median %.0f us for %zu bytes device -> device (%d transfers)\n", t[n / 2] * 1e6, len, n);
    }
    free(t);
    free(host);
    side_free(&d);
}

/* Progress for ms milliseconds (the transfer is under way), then SIGKILL. */
static void progress_then_die(waitio_req_t *req, int ms, const char *who)
{
    double end = tu_now() + ms / 1000.0;
    int done = 0;
    while (tu_now() < end && !done) {
        TU_CHECK(waitio_test(req, &done));
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
    printf("gpu_pipe: the %s dies %s\n", who, done ? "AFTER the transfer (too late)" : "mid-transfer");
    fflush(stdout);
    raise(SIGKILL);
}

static void run_die(waitio_group_t g, int me, const char *who, int ms, size_t len)
{
    side d;
    side_alloc(&d, 1, len);
    waitio_req_t req;
    int dying = (!strcmp(who, "sender") && me == 0) || (!strcmp(who, "receiver") && me == 1);
    /* both ranks are connected (and warm) before the large transfer */
    char b = 0;
    if (me == 0)
        TU_CHECK(waitio_isend(g, 1, &b, 1, TAG + 2, &req));
    else
        TU_CHECK(waitio_irecv(g, 0, &b, 1, TAG + 2, &req));
    TU_CHECK(waitio_wait(&req));
    if (me == 0)
        TU_CHECK(waitio_isend(g, 1, (char *)d.mem, len, TAG, &req));
    else
        TU_CHECK(waitio_irecv(g, 0, (char *)d.mem, len, TAG, &req));
    if (dying)
        progress_then_die(&req, ms, who);
    int rc = waitio_wait(&req);
    if (rc != WAITIO_ERR_PEER && rc != WAITIO_ERR_PEER_FINALIZED)
        TU_ERR("the %s's request with the killed peer returned %s, expected WAITIO_ERR_PEER",
               me == 0 ? "send" : "receive", tu_code_name(rc));
    else
        printf("gpu_pipe: rank %d saw the peer's death mid-transfer: %s\n", me, tu_code_name(rc));
    side_free(&d);
}

int main(int argc, char **argv)
{
    tu_set_name(argv[0]);
    const char *kinds = "dd,dh,hd", *die = NULL;
    int rounds = 24, time_n = 0, check = 0, die_ms = 60;
    size_t max = 8u << 20, chunk = 1u << 20;
    uint64_t seed = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--kinds") && i + 1 < argc)
            kinds = argv[++i];
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--max") && i + 1 < argc)
            max = (size_t)strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--chunk") && i + 1 < argc)
            chunk = (size_t)strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--check"))
            check = 1;
        else if (!strcmp(argv[i], "--time") && i + 1 < argc)
            time_n = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--die") && i + 1 < argc)
            die = argv[++i];
        else if (!strcmp(argv[i], "--die-ms") && i + 1 < argc)
            die_ms = atoi(argv[++i]);
        else
            TU_FAIL("usage: gpu_pipe --check [--kinds dd,dh,hd] [--rounds N] | --time N | --die sender|receiver "
                    "[--die-ms MS]; [--max BYTES] [--chunk BYTES] [--seed S]");
    }
    if (check + (time_n > 0) + (die != NULL) != 1 || chunk == 0 || (die && strcmp(die, "sender") && strcmp(die, "receiver")))
        TU_FAIL("give exactly one of --check, --time N, --die sender|receiver (and a chunk > 0)");
    tu_alarm(90);
    td_load();
    TU_CHECK(waitio_init(30));
    waitio_group_t g = tu_universe(1);
    int me = -1, size = 0;
    TU_CHECK(waitio_group_rank(g, &me));
    TU_CHECK(waitio_group_size(g, &size));
    if (size != 2)
        TU_FAIL("needs exactly 2 processes, has %d", size);
    tu_set_who(me, 0);
    if (check)
        run_check(g, me, kinds, rounds, chunk, max, seed);
    else if (time_n > 0)
        run_time(g, me, time_n, max, seed);
    else
        run_die(g, me, die, die_ms, max);
    TU_CHECK(waitio_finalize());
    if (tu_errors)
        return 1;
    printf("gpu_pipe ok: rank %d\n", me);
    return 0;
}
