/*
 * rma_bench.c — an OSU-style one-sided probe written to the OpenSHMEM API, so that the same
 * source measures WaitIO's OpenSHMEM layer (built as waitio-rma-bench) and Open MPI's OpenSHMEM
 * (built by bench/compare-onesided with oshcc). PE 0 times operations on PE 1 while PE 1 waits in
 * shmem_barrier_all (OSU's osu_oshm_get/put/atomics pattern); the target word or buffer is on the
 * symmetric heap. Operations:
 *   get8    shmem_getmem of 8 bytes                     (latency)
 *   putq8   shmem_putmem of 8 bytes + shmem_quiet       (latency of a remotely complete put)
 *   fadd    shmem_long_atomic_fetch_add                  (latency)
 *   get1m   shmem_getmem of 1 MiB                         (bandwidth)
 *   sget8   shmem_getmem of 8 bytes of a global variable  (the symmetric data segment's path)
 *   cputq8  putq8 on a context of its own (shmem_ctx_putmem + shmem_ctx_quiet; not in the default list)
 *   sputq8  putq8 on a global variable, default context (the tracked WaitIO path on one host too)
 *   csputq8 sputq8 on a context of its own
 *   pp8     WaitIO two-sided 8-byte ping-pong, half round trip (waitio-rma-bench only: the
 *           baseline of the one-sided latencies over the same transport)
 * Each operation: a warm-up, then BATCHES batches of N operations; the median batch is
 * reported. CSV on stdout (PE 0): op,bytes,ops_per_batch,usec_per_op,MBps.
 * Usage: rma_bench [--ops get8,putq8,fadd,get1m,sget8,pp8] [--scale F] [--repeat K] [--multiple]
 * (--multiple: shmem_init_thread(SHMEM_THREAD_MULTIPLE) instead of shmem_init — the cost of the
 * thread level with one thread, to compare with a run without it.)
 * (--repeat: the list K times over, one line per pass: figures to compare, e.g. get8 and pp8
 * over tcp, are then measured interleaved and meet the same load.)
 */
#define _POSIX_C_SOURCE 200809L /* strtok_r, clock_gettime under -std=c11 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <shmem.h>
#ifdef RMA_BENCH_WAITIO
#include "waitio_rma.h"
#include "waitio_version.h"
#define RMA_BENCH_VERSION "waitio-rma-bench (WaitIO) " WAITIO_VERSION_STRING
#else
#define RMA_BENCH_VERSION "rma_bench (oshcc twin)"
#endif

static void usage(FILE *f)
{
    fprintf(f, "usage: rma_bench [--ops LIST] [--scale F] [--repeat K] [--multiple]\n"
               "  OpenSHMEM one-sided probe (docs/benchmarks.md): run as PEs of one job, e.g.\n"
               "      waitio-oshrun -np 2 waitio-rma-bench --ops get8,pp8\n"
               "  -h, --help: this text; --version: the version\n");
}

#define BATCHES 7
#define MIB (1u << 20)

static char gdata[64];

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static long *lword;
static char *big, *lbig;
static char local[64];
static shmem_ctx_t ctx; /* cputq8, csputq8 */

/* One batch of n operations of kind op; returns seconds. */
static double batch(const char *op, long n)
{
    double t0 = now();
    if (!strcmp(op, "get8")) {
        for (long i = 0; i < n; i++)
            shmem_getmem(local, big, 8, 1);
    } else if (!strcmp(op, "putq8")) {
        for (long i = 0; i < n; i++) {
            shmem_putmem(big, local, 8, 1);
            shmem_quiet();
        }
    } else if (!strcmp(op, "fadd")) {
        for (long i = 0; i < n; i++)
            (void)shmem_long_atomic_fetch_add(lword, 1, 1);
    } else if (!strcmp(op, "get1m")) {
        for (long i = 0; i < n; i++)
            shmem_getmem(lbig, big, MIB, 1);
    } else if (!strcmp(op, "sget8")) {
        for (long i = 0; i < n; i++)
            shmem_getmem(local, gdata, 8, 1);
    } else if (!strcmp(op, "cputq8")) {
        for (long i = 0; i < n; i++) {
            shmem_ctx_putmem(ctx, big, local, 8, 1);
            shmem_ctx_quiet(ctx);
        }
    } else if (!strcmp(op, "sputq8")) {
        for (long i = 0; i < n; i++) {
            shmem_putmem(gdata, local, 8, 1);
            shmem_quiet();
        }
    } else if (!strcmp(op, "csputq8")) {
        for (long i = 0; i < n; i++) {
            shmem_ctx_putmem(ctx, gdata, local, 8, 1);
            shmem_ctx_quiet(ctx);
        }
    }
    return now() - t0;
}

#ifdef RMA_BENCH_WAITIO
/* Two-sided 8-byte ping-pong over WaitIO between the same two processes: PE 0 measures, PE 1
 * echoes; returns seconds for n round trips. */
static double pingpong(long n, int me)
{
    waitio_group_t g;
    waitio_rma_world(&g);
    char b[8] = {0};
    waitio_req_t r;
    double t0 = now();
    for (long i = 0; i < n; i++) {
        if (me == 0) {
            waitio_isend(g, 1, b, 8, 1, &r);
            waitio_wait(&r);
            waitio_irecv(g, 1, b, 8, 2, &r);
            waitio_wait(&r);
        } else {
            waitio_irecv(g, 0, b, 8, 1, &r);
            waitio_wait(&r);
            waitio_isend(g, 0, b, 8, 2, &r);
            waitio_wait(&r);
        }
    }
    return now() - t0;
}
#endif

int main(int argc, char **argv)
{
    const char *ops = "get8,putq8,fadd,get1m,sget8,pp8";
    double scale = 1;
    int repeat = 1, multiple = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--ops") && i + 1 < argc)
            ops = argv[++i];
        else if (!strcmp(argv[i], "--scale") && i + 1 < argc)
            scale = atof(argv[++i]);
        else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
            repeat = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--multiple"))
            multiple = 1;
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--version")) {
            printf("%s\n", RMA_BENCH_VERSION);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }
    int provided = 0;
    if (multiple && (shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided) || provided != SHMEM_THREAD_MULTIPLE)) {
        fprintf(stderr, "rma_bench: SHMEM_THREAD_MULTIPLE not granted\n");
        return 2;
    }
    if (!multiple)
        shmem_init();
    int me = shmem_my_pe();
    if (shmem_n_pes() != 2) {
        if (me == 0)
            fprintf(stderr, "rma_bench: run it on 2 PEs\n");
        shmem_finalize();
        return 2;
    }
    if (shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx))
        ctx = SHMEM_CTX_DEFAULT;
    lword = shmem_calloc(1, sizeof(long));
    big = shmem_malloc(MIB);
    lbig = malloc(MIB);
    memset(big, me + 1, MIB);
    memset(lbig, 0, MIB);
    if (me == 0)
        printf("op,bytes,ops_per_batch,usec_per_op,MBps\n");
    char list[256];
    for (int pass = 0; pass < repeat; pass++) {
    snprintf(list, sizeof list, "%s", ops);
    for (char *save = NULL, *op = strtok_r(list, ",", &save); op; op = strtok_r(NULL, ",", &save)) {
        size_t bytes = !strcmp(op, "get1m") ? MIB : 8;
        long n = (long)((!strcmp(op, "get1m") ? 200 : !strcmp(op, "pp8") ? 4000 : 20000) * scale);
        if (n < 1)
            n = 1;
        double t[BATCHES];
        shmem_barrier_all();
        if (!strcmp(op, "pp8")) {
#ifdef RMA_BENCH_WAITIO
            pingpong(n / 10, me); /* warm-up */
            for (int k = 0; k < BATCHES; k++)
                t[k] = pingpong(n, me) / 2; /* half round trips */
#else
            shmem_barrier_all();
            continue;
#endif
        } else if (me == 0) {
            batch(op, n / 10 + 1); /* warm-up: connections, page faults */
            for (int k = 0; k < BATCHES; k++)
                t[k] = batch(op, n);
        }
        shmem_barrier_all();
        if (me == 0) {
            qsort(t, BATCHES, sizeof t[0], cmp_double);
            double per = t[BATCHES / 2] / (double)n;
            printf("%s,%zu,%ld,%.4f,%.1f\n", op, bytes, n, per * 1e6, (double)bytes / per / 1e6);
            fflush(stdout);
        }
    }
    }
    shmem_barrier_all();
    if (ctx != SHMEM_CTX_DEFAULT)
        shmem_ctx_destroy(ctx);
    shmem_free(big);
    shmem_free(lword);
    free(lbig);
    shmem_finalize();
    return 0;
}
