/*
 * gpu_p2p.c — two-sided messages between device and host buffers of two processes (universe
 * ranks 0 and 1), every byte checked after it crossed the process boundary. Each round both
 * processes send to each other at once, for every buffer-kind pair asked for (--kinds dd,dh,hd,hh:
 * sender's kind then receiver's, d = device memory from cuMemAlloc, h = host memory), with sizes
 * from 0 B to --max (the edges first, then random), at random offsets in the buffers; the 64
 * bytes after each receive are a canary that must stay intact.
 *
 *   --die       rank 0 sends rank 1 one large device message (rank 1 maps it through CUDA IPC
 *               when on one host), waits for its acknowledgement, then kills itself; rank 1 must
 *               see a receive from it fail with a peer error, and finalize cleanly.
 *   --no-device expect every send to fail with WAITIO_ERR_DEVICE (the forced-device hook without
 *               a driver), using host buffers.
 * Runs with the fake driver (WAITIO_CUDA_LIBRARY, tests/gpu/ci_p2p.sh) or a real GPU (run.sh).
 */
#include <signal.h>
#include "gpu_testdrv.h"
#include "testutil.h"
#include "gpu_side.h"

#define TAG 77

/* The edges first, the largest size in the last round, random sizes between. */
static size_t pick_size(tu_rng *rng, int round, int rounds, size_t max)
{
    if (round == rounds - 1 && round > 0)
        return max;
    static const size_t edges[] = {0, 1, 7, 8, 16, 1000, 1024, 1025, 65536, 262144, 262145, 1 << 20, 8 << 20};
    size_t n = sizeof edges / sizeof edges[0];
    if ((size_t)round < n && edges[round] <= max)
        return edges[round];
    int bits = (int)tu_rng_below(rng, 24);
    size_t s = (size_t)tu_rng_below(rng, (1ull << bits) + 1);
    return s > max ? max : s;
}

static void run_die(waitio_group_t g, int me, size_t len)
{
    side s;
    side_alloc(&s, 1, len);
    uint8_t *host = tu_xmalloc(len);
    char ack = 0;
    waitio_req_t req;
    if (me == 0) {
        tu_msg_fill(host, len, 0, 1, TAG, 0, 9);
        side_put(&s, 0, host, len);
        TU_CHECK(waitio_isend(g, 1, (char *)s.mem, len, TAG, &req));
        TU_CHECK(waitio_wait(&req));
        TU_CHECK(waitio_irecv(g, 1, &ack, 1, TAG + 1, &req));
        TU_CHECK(waitio_wait(&req));
        printf("gpu_p2p: rank 0 dies holding its exported device memory\n");
        fflush(stdout);
        raise(SIGKILL);
    }
    TU_CHECK(waitio_irecv(g, 0, (char *)s.mem, len, TAG, &req));
    TU_CHECK(waitio_wait(&req));
    side_get(&s, 0, host, len);
    char why[256];
    if (!tu_msg_check(host, len, 0, 1, TAG, 0, 9, why, sizeof why))
        TU_ERR("the message before the death: %s", why);
    TU_CHECK(waitio_isend(g, 0, &ack, 1, TAG + 1, &req));
    TU_CHECK(waitio_wait(&req));
    TU_CHECK(waitio_irecv(g, 0, (char *)s.mem, len, TAG, &req));
    int rc = waitio_wait(&req);
    if (rc != WAITIO_ERR_PEER && rc != WAITIO_ERR_PEER_FINALIZED)
        TU_ERR("a receive from the killed peer returned %s, expected WAITIO_ERR_PEER", tu_code_name(rc));
    else
        printf("gpu_p2p: rank 1 saw the peer's death: %s\n", tu_code_name(rc));
    side_free(&s);
    free(host);
}

static void run_no_device(waitio_group_t g, int peer)
{
    char buf[64] = {0};
    waitio_req_t req;
    int rc = waitio_isend(g, peer, buf, sizeof buf, TAG, &req);
    if (rc != WAITIO_ERR_DEVICE)
        TU_ERR("isend with the forced device flag and no driver returned %s, expected WAITIO_ERR_DEVICE",
               tu_code_name(rc));
    else if (!strstr(waitio_error_message(), "no CUDA driver") && !strstr(waitio_error_message(), "CUDA"))
        TU_ERR("the error message does not say why: %s", waitio_error_message());
    rc = waitio_irecv(g, peer, buf, sizeof buf, TAG, &req);
    if (rc != WAITIO_ERR_DEVICE)
        TU_ERR("irecv with the forced device flag and no driver returned %s", tu_code_name(rc));
    printf("gpu_p2p: no driver: %s (%s)\n", waitio_strerror(WAITIO_ERR_DEVICE), waitio_error_message());
}

int main(int argc, char **argv)
{
    tu_set_name(argv[0]);
    const char *kinds = "dd,dh,hd";
    int rounds = 20, die = 0, no_device = 0;
    size_t max = 8u << 20;
    uint64_t seed = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--kinds") && i + 1 < argc)
            kinds = argv[++i];
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--max") && i + 1 < argc)
            max = (size_t)strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--die"))
            die = 1;
        else if (!strcmp(argv[i], "--no-device"))
            no_device = 1;
        else
            TU_FAIL("usage: gpu_p2p [--kinds dd,dh,hd,hh] [--rounds N] [--max BYTES] [--seed S] [--die] [--no-device]");
    }
    tu_alarm(60);
    if (!no_device)
        td_load();
    TU_CHECK(waitio_init(30));
    waitio_group_t g = tu_universe(1);
    int me = -1, size = 0;
    TU_CHECK(waitio_group_rank(g, &me));
    TU_CHECK(waitio_group_size(g, &size));
    if (size != 2)
        TU_FAIL("needs exactly 2 processes, has %d", size);
    tu_set_who(me, 0);
    int peer = 1 - me;
    if (no_device) {
        run_no_device(g, peer);
    } else if (die) {
        run_die(g, me, max);
    } else {
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
            size_t len = pick_size(&rng, r, rounds, max);
            for (const char *k = kinds; k[0] && k[1]; k += k[2] == ',' ? 3 : 2) {
                tu_phase("round %d, %zu bytes, kinds %c%c", r, len, k[0], k[1]);
                exchange(g, me, peer, k[0] == 'd' ? &dsnd : &hsnd, k[1] == 'd' ? &drcv : &hrcv, len, TAG, seq++,
                         seed, host, check, &offs);
                if (!k[2])
                    break;
            }
        }
        printf("gpu_p2p: rank %d: %u exchanges checked (kinds %s, up to %zu bytes)\n", me, seq, kinds, max);
        side_free(&dsnd);
        side_free(&drcv);
        side_free(&hsnd);
        side_free(&hrcv);
        free(host);
        free(check);
    }
    TU_CHECK(waitio_finalize());
    if (tu_errors)
        return 1;
    printf("gpu_p2p ok: rank %d\n", me);
    return 0;
}
