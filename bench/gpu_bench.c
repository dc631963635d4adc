/*
 * gpu_bench.c — waitio-gpu-bench: device-memory messages between 2 PBs of one process each
 * (issue 31's goals), every figure a median of paired rounds, the WaitIO figure and its baseline
 * measured alternately in the same run. Cases (--cases, comma-separated):
 *   ipc     device->device 64 MiB (--ipc-size) vs a CUDA IPC copy of another process's allocation
 *           (cuIpcOpenMemHandle + cuMemcpy, what WaitIO's one-host path does at best);
 *   lat     8 B half round trip device->device, and host->host for reference;
 *   dh      device -> host-memory PB 8 MiB vs pinned cuMemcpyDtoH and WaitIO host->host;
 *   staged  device->device 8 MiB vs WaitIO host->host 8 MiB over the transport in use (run it with
 *           WAITIO_TRANSPORTS=tcp: staging through host memory).
 * A bandwidth is timed at the receiver: the sender posts its send and then a small "posted"
 * message; the receiver, having received that, posts its receive and waits (match, copy,
 * completion: what a program waiting for data sees). Every received message's bytes are checked
 * after the timed rounds of each case (a check inside would time the check).
 * Runs with a real GPU (libcuda) or the CUDA driver's test double (WAITIO_CUDA_LIBRARY, whose
 * figures mean nothing). Output: one line per figure, "gpu_bench: ..." (docs/transports.md).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "waitio.h"
#include "gpu_testdrv.h"

#define TAG_DATA 10
#define TAG_POSTED 11
#define TAG_CTL 12
#define MAXR 256

static waitio_group_t g;
static int me;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const char *what, int rc)
{
    fprintf(stderr, "gpu_bench: %s: %s (%s)\n", what, waitio_strerror(rc), waitio_error_message());
    exit(1);
}
#define W(call) do { int rc_ = (call); if (rc_) die(#call, rc_); } while (0)

static int waitio_send(waitio_group_t gr, int dst, char *b, size_t n, unsigned long tag)
{
    waitio_req_t req;
    int rc = waitio_isend(gr, dst, b, n, tag, &req);
    return rc ? rc : waitio_wait(&req);
}

static int waitio_recv(waitio_group_t gr, int src, char *b, size_t n, unsigned long tag)
{
    waitio_req_t req;
    int rc = waitio_irecv(gr, src, b, n, tag, &req);
    return rc ? rc : waitio_wait(&req);
}

static void ctl_send(const void *b, size_t n) { W(waitio_send(g, 1 - me, (char *)b, n, TAG_CTL)); }
static void ctl_recv(void *b, size_t n) { W(waitio_recv(g, 1 - me, (char *)b, n, TAG_CTL)); }

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One timed transfer of n bytes from rank 0's src to rank 1's dst; seconds, at rank 1 (0 at rank 0). */
static double transfer(void *src, void *dst, size_t n)
{
    char token = 1;
    if (me == 0) {
        waitio_req_t req;
        W(waitio_isend(g, 1, (char *)src, n, TAG_DATA, &req));
        W(waitio_send(g, 1, &token, 1, TAG_POSTED));
        W(waitio_wait(&req));
        return 0;
    }
    W(waitio_recv(g, 0, &token, 1, TAG_POSTED));
    double t0 = now();
    W(waitio_recv(g, 0, (char *)dst, n, TAG_DATA));
    return now() - t0;
}

/* Fills rank 0's buffer with a pattern (host or device) and checks what rank 1 got. */
static void pattern(uint8_t *h, size_t n, unsigned salt)
{
    for (size_t i = 0; i < n; i++)
        h[i] = (uint8_t)(i * 131 + salt + (i >> 12));
}

static void fill(void *buf, int dev, size_t n, unsigned salt)
{
    uint8_t *h = malloc(n);
    pattern(h, n, salt);
    if (dev)
        td_put(buf, h, n);
    else
        memcpy(buf, h, n);
    free(h);
}

static void verify(const void *buf, int dev, size_t n, unsigned salt, const char *what)
{
    uint8_t *h = malloc(n), *w = malloc(n);
    if (dev)
        td_get(h, buf, n);
    else
        memcpy(h, buf, n);
    pattern(w, n, salt);
    if (memcmp(h, w, n)) {
        fprintf(stderr, "gpu_bench: %s: received data differs\n", what);
        exit(1);
    }
    free(h);
    free(w);
}

static void report(const char *name, size_t n, double t_wio, double t_base, const char *base_name, double goal)
{
    if (me != 1)
        return;
    double bw = n / t_wio / 1e9, bb = t_base > 0 ? n / t_base / 1e9 : 0;
    if (goal <= 0) { /* a reference figure, no goal */
        printf("gpu_bench: %-28s %9zu B  waitio %8.2f GB/s  %-22s %8.2f GB/s  (reference)\n", name, n, bw,
               base_name, bb);
    } else {
        printf("gpu_bench: %-28s %9zu B  waitio %8.2f GB/s  %-22s %8.2f GB/s  ratio %.2f  goal >= %.1f: %s\n", name,
               n, bw, base_name, bb, bb > 0 ? bw / bb : 0, goal, bb > 0 && bw / bb >= goal ? "met" : "NOT met");
    }
    fflush(stdout);
}

/* ---- ipc: device->device vs a CUDA IPC copy ---- */
static void case_ipc(size_t n, int rounds)
{
    void *src = me == 0 ? td_alloc(n) : NULL, *base_src = me == 0 ? td_alloc(n) : NULL;
    void *dst = me == 1 ? td_alloc(n) : NULL;
    unsigned char handle[64];
    void *mapped = NULL;
    if (me == 0) {
        fill(src, 1, n, 1);
        if (td.IpcGetMemHandle(handle, (unsigned long long)(uintptr_t)base_src)) {
            fprintf(stderr, "gpu_bench: cuIpcGetMemHandle failed\n");
            exit(1);
        }
        ctl_send(handle, sizeof handle);
    } else {
        ctl_recv(handle, sizeof handle);
        unsigned long long d = 0;
        CUipcMemHandle_td h;
        memcpy(h.b, handle, sizeof h.b);
        if (td.IpcOpenMemHandle(&d, h, 1)) {
            fprintf(stderr, "gpu_bench: cuIpcOpenMemHandle failed\n");
            exit(1);
        }
        mapped = (void *)(uintptr_t)d;
    }
    double tw[MAXR], tb[MAXR];
    for (int r = -1; r < rounds; r++) { /* round -1: warm-up (maps, caches) */
        double a = 0, b = 0;
        for (int k = 0; k < 2; k++) {
            if ((k ^ r) & 1) {
                a = transfer(src, dst, n);
            } else if (me == 1) {
                double t0 = now();
                td.Memcpy((unsigned long long)(uintptr_t)dst, (unsigned long long)(uintptr_t)mapped, n);
                td.CtxSynchronize();
                b = now() - t0;
            }
            char t = 0;
            if (me == 0) ctl_recv(&t, 1); else ctl_send(&t, 1);
        }
        if (r >= 0) {
            tw[r] = a;
            tb[r] = b;
        }
    }
    transfer(src, dst, n);
    if (me == 1)
        verify(dst, 1, n, 1, "ipc");
    report("device->device (one host)", n, median(tw, rounds), median(tb, rounds), "CUDA IPC copy", 0.8);
    if (mapped)
        td.IpcCloseMemHandle((unsigned long long)(uintptr_t)mapped);
    if (src) td_free(src);
    if (base_src) td_free(base_src);
    if (dst) td_free(dst);
}

/* ---- lat: 8 B half round trip ---- */
static double pingpong(void *buf, int iters)
{
    double t0 = now();
    for (int i = 0; i < iters; i++) {
        if (me == 0) {
            W(waitio_send(g, 1, (char *)buf, 8, TAG_DATA));
            W(waitio_recv(g, 1, (char *)buf, 8, TAG_DATA));
        } else {
            W(waitio_recv(g, 0, (char *)buf, 8, TAG_DATA));
            W(waitio_send(g, 0, (char *)buf, 8, TAG_DATA));
        }
    }
    return (now() - t0) / (2.0 * iters);
}

static void case_lat(int iters)
{
    void *d = td_alloc(64), *h = calloc(1, 64);
    fill(d, 1, 8, 3);
    pingpong(d, iters / 10 + 1);
    pingpong(h, iters / 10 + 1);
    double td_[9], th[9];
    for (int r = 0; r < 9; r++) {
        td_[r] = pingpong(d, iters / 9 + 1);
        th[r] = pingpong(h, iters / 9 + 1);
    }
    verify(d, 1, 8, 3, "lat");
    /* where the time goes: the driver's own 8-byte copies (pageable host memory), and a round
     * trip with the device buffer on one side only (rank 0 device, rank 1 host) */
    double tput[9], tget[9], tone[9];
    uint8_t tmp[8];
    for (int r = 0; r < 9; r++) {
        int n = iters / 9 + 1;
        double t0 = now();
        for (int i = 0; i < n; i++)
            td_put(d, tmp, 8);
        tput[r] = (now() - t0) / n;
        t0 = now();
        for (int i = 0; i < n; i++)
            td_get(tmp, d, 8);
        tget[r] = (now() - t0) / n;
        tone[r] = pingpong(me == 0 ? d : h, n);
    }
    if (me == 0)
        printf("gpu_bench:   (8 B breakdown: driver H2D copy %.2f us, D2H copy %.2f us; half RTT with the "
               "device buffer on one side only %.2f us)\n", median(tput, 9) * 1e6, median(tget, 9) * 1e6,
               median(tone, 9) * 1e6);
    if (me == 0) {
        double a = median(td_, 9) * 1e6, b = median(th, 9) * 1e6;
        printf("gpu_bench: %-28s %9d B  waitio %8.2f us    host->host %8.2f us  goal <= 20 us: %s\n",
               "device->device half RTT", 8, a, b, a <= 20 ? "met" : "NOT met");
        fflush(stdout);
    }
    td_free(d);
    free(h);
}

/* ---- dh: device -> host-memory PB ---- */
static void case_dh(size_t n, int rounds)
{
    void *dsrc = me == 0 ? td_alloc(n) : NULL, *hsrc = me == 0 ? malloc(n) : NULL;
    void *hdst = me == 1 ? malloc(n) : NULL, *pinned = NULL;
    if (me == 0) {
        fill(dsrc, 1, n, 5);
        fill(hsrc, 0, n, 6);
    } else if (td.MemHostAlloc(&pinned, n, 0)) {
        fprintf(stderr, "gpu_bench: cuMemHostAlloc failed\n");
        exit(1);
    }
    void *dloc = me == 1 ? td_alloc(n) : NULL; /* the pinned D2H baseline's device side */
    double tw[MAXR], th[MAXR], tp[MAXR];
    for (int r = -1; r < rounds; r++) {
        double a = transfer(dsrc, hdst, n);
        double b = transfer(hsrc, hdst, n);
        double c = 0;
        if (me == 1) {
            double t0 = now();
            td.DtoH(pinned, (unsigned long long)(uintptr_t)dloc, n);
            c = now() - t0;
        }
        if (r >= 0) {
            tw[r] = a;
            th[r] = b;
            tp[r] = c;
        }
    }
    transfer(dsrc, hdst, n);
    if (me == 1)
        verify(hdst, 0, n, 5, "dh");
    double mw = median(tw, rounds), mh = median(th, rounds), mp = median(tp, rounds);
    report("device->host PB", n, mw, mh > mp ? mh : mp, mh > mp ? "min: host->host" : "min: pinned D2H", 0.8);
    report("  (host->host alone)", n, mh, mp, "pinned D2H", 0);
    if (dsrc) td_free(dsrc);
    if (dloc) td_free(dloc);
    if (pinned) td.MemFreeHost(pinned);
    free(hsrc);
    free(hdst);
}

/* ---- staged: device->device vs host->host over the transport in use ---- */
static void case_staged(size_t n, int rounds)
{
    void *dsrc = me == 0 ? td_alloc(n) : NULL, *ddst = me == 1 ? td_alloc(n) : NULL;
    void *hsrc = me == 0 ? malloc(n) : NULL, *hdst = me == 1 ? malloc(n) : NULL;
    if (me == 0) {
        fill(dsrc, 1, n, 7);
        fill(hsrc, 0, n, 8);
    }
    double tw[MAXR], th[MAXR];
    for (int r = -1; r < rounds; r++) {
        double a, b;
        if (r & 1) {
            a = transfer(dsrc, ddst, n);
            b = transfer(hsrc, hdst, n);
        } else {
            b = transfer(hsrc, hdst, n);
            a = transfer(dsrc, ddst, n);
        }
        if (r >= 0) {
            tw[r] = a;
            th[r] = b;
        }
    }
    transfer(dsrc, ddst, n);
    if (me == 1)
        verify(ddst, 1, n, 7, "staged");
    const char *tp = getenv("WAITIO_TRANSPORTS");
    const char *depth = getenv("WAITIO_GPU_PIPELINE_DEPTH"); /* 0: staged whole, not pipelined */
    char name[96];
    snprintf(name, sizeof name, "device->device over %s%s%s", tp && *tp ? tp : "shm,tcp",
             depth && *depth ? ", pipeline depth " : "", depth && *depth ? depth : "");
    report(name, n, median(tw, rounds), median(th, rounds), "host->host", 0.8);
    if (dsrc) td_free(dsrc);
    if (ddst) td_free(ddst);
    free(hsrc);
    free(hdst);
}

int main(int argc, char **argv)
{
    const char *cases = "ipc,lat,dh,staged";
    int rounds = 15, iters = 2000;
    size_t ipc_size = 64u << 20, size = 8u << 20;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--cases") && i + 1 < argc) cases = argv[++i];
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ipc-size") && i + 1 < argc) ipc_size = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--size") && i + 1 < argc) size = strtoull(argv[++i], NULL, 0);
        else {
            fprintf(stderr, "usage: waitio-gpu-bench [--cases ipc,lat,dh,staged] [--rounds N] [--iters N] "
                            "[--ipc-size B] [--size B]\n");
            return 2;
        }
    }
    if (rounds < 1 || rounds > MAXR || iters < 1)
        return 2;
    td_load();
    W(waitio_init(60));
    int npb = 0;
    W(waitio_pb_size(&npb));
    W(waitio_pb_rank(&me));
    if (npb != 2) {
        fprintf(stderr, "gpu_bench: needs 2 PBs of one process each\n");
        return 2;
    }
    g = waitio_create_group_wranks(5, (int *[]){(int[]){0, -1}, (int[]){0, -1}}, (int[]){1, 2});
    if (!g)
        die("waitio_create_group_wranks", WAITIO_ERR_GROUP);
    if (strstr(cases, "ipc")) case_ipc(ipc_size, rounds);
    if (strstr(cases, "lat")) case_lat(iters);
    if (strstr(cases, "dh")) case_dh(size, rounds);
    if (strstr(cases, "staged")) case_staged(size, rounds);
    W(waitio_finalize());
    return 0;
}
