/*
 * mpi_scale.c — start-up and a ring at scale: every process of every PB (e.g. 2 PBs of 32 MPI
 * processes each, oversubscribed) initialises, then messages travel around the universe ring in
 * both directions (sizes 1 KiB, 100 KiB and 1 MiB + 7, every byte checked), and universe rank 0
 * gathers, through WaitIO messages, each process's time spent in waitio_init and error count.
 * Rank 0 prints
 *   startup_seconds=<max over processes of the time in waitio_init>
 *   mpi_init_seconds=<max over processes of the time in MPI_Init> (issue 29: waitio_init's share)
 *   after_last_mpi_init_seconds=<from the last process's return from MPI_Init to the last
 *     return from waitio_init>: what WaitIO adds to the job's start-up, without the time a
 *     process waits in waitio_init for the other PB's MPI_Init (the clock of the host: one host)
 *   startup_mean_seconds=<mean>  ring_seconds=<time of the ring phase at rank 0>
 *   mpi_scale ok: N processes in P PBs
 * Usage: mpi_scale [--rounds R] [--init-timeout S] [--alarm S] [--expect-procs N]
 */
#ifndef TU_NO_MPI
#include <mpi.h>
#endif
#include <inttypes.h>
#include "testutil.h"

#define TAG_RING 0x4000UL

static double wall_now(void) /* comparable between the processes of one host */
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}
#define TAG_REPORT 0x4100UL

typedef struct report { double init_secs, mpi_init_secs, mpi_end, init_end; int64_t errors; int32_t pb, local; } report;

int main(int argc, char **argv)
{
    int rounds = 2, init_timeout = 150, expect_procs = 0;
    unsigned alarm_secs = 170;
    tu_set_name(argv[0]);
    double mpi_init_secs = 0;
#ifndef TU_NO_MPI
    double m0 = tu_now();
    MPI_Init(&argc, &argv);
    mpi_init_secs = tu_now() - m0;
#endif
    double mpi_end = wall_now();
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            TU_FAIL("option %s needs a value", a);
        i++;
        if (!strcmp(a, "--rounds")) rounds = atoi(v);
        else if (!strcmp(a, "--init-timeout")) init_timeout = atoi(v);
        else if (!strcmp(a, "--alarm")) alarm_secs = (unsigned)atoi(v);
        else if (!strcmp(a, "--expect-procs")) expect_procs = atoi(v);
        else TU_FAIL("unknown option %s", a);
    }
    tu_alarm(alarm_secs);
    tu_phase("waitio_init");
    double t0 = tu_now();
    TU_CHECK(waitio_init(init_timeout));
    double init_secs = tu_now() - t0, init_end = wall_now();
    int pb, local, npb;
    TU_CHECK(waitio_pb_rank(&pb));
    TU_CHECK(waitio_local_rank(&local));
    TU_CHECK(waitio_pb_size(&npb));
    tu_set_who(pb, local);
    waitio_group_t u = tu_universe(3);
    int me, n;
    TU_CHECK(waitio_group_rank(u, &me));
    TU_CHECK(waitio_group_size(u, &n));
    if (expect_procs && n != expect_procs)
        TU_ERR("the universe has %d processes, expected %d", n, expect_procs);
    if (n < 2)
        TU_FAIL("needs at least 2 processes");

    tu_phase("ring");
    static const size_t sizes[] = {1024, 100 * 1024, (1u << 20) + 7};
    const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
    size_t maxlen = sizes[nsizes - 1];
    uint8_t *out[2], *in[2];
    for (int d = 0; d < 2; d++) {
        out[d] = tu_xmalloc(maxlen);
        in[d] = tu_xmalloc(maxlen + TU_CANARY);
    }
    double ring0 = tu_now();
    for (int round = 0; round < rounds; round++)
        for (int si = 0; si < nsizes; si++) {
            size_t len = sizes[si];
            uint64_t tag = TAG_RING | ((uint64_t)round << 8) | (uint64_t)si;
            waitio_req_t r[4];
            int to[2] = {(me + 1) % n, (me + n - 1) % n};   /* d=0 clockwise, d=1 back */
            int from[2] = {(me + n - 1) % n, (me + 1) % n};
            tu_phase("ring round %d, %zu bytes", round, len);
            for (int d = 0; d < 2; d++) {
                tu_canary_set(in[d] + len);
                TU_CHECK(waitio_irecv(u, from[d], (char *)in[d], len, tag + ((uint64_t)d << 16), &r[d]));
            }
            for (int d = 0; d < 2; d++) {
                tu_msg_fill(out[d], len, me, to[d], tag + ((uint64_t)d << 16), (uint32_t)round, 0x5ca1e);
                TU_CHECK(waitio_isend(u, to[d], (char *)out[d], len, tag + ((uint64_t)d << 16), &r[2 + d]));
            }
            int rc = waitio_waitall(4, r);
            if (rc)
                TU_FAIL("ring round %d, %zu bytes: waitio_waitall returned %s (%s); statuses %s %s "
                        "%s %s", round, len, tu_code_name(rc), waitio_error_message(),
                        tu_code_name(r[0].status.error), tu_code_name(r[1].status.error),
                        tu_code_name(r[2].status.error), tu_code_name(r[3].status.error));
            for (int d = 0; d < 2; d++) {
                char why[256];
                if (r[d].status.len != len || r[d].status.source != from[d])
                    TU_ERR("ring round %d: message from rank %d: status len %zu source %d", round,
                           from[d], r[d].status.len, r[d].status.source);
                else if (!tu_msg_check(in[d], len, from[d], me, tag + ((uint64_t)d << 16),
                                       (uint32_t)round, 0x5ca1e, why, sizeof why))
                    TU_ERR("ring round %d: %zu bytes from rank %d: %s", round, len, from[d], why);
                if (!tu_canary_ok(in[d] + len))
                    TU_ERR("ring round %d: write past the receive buffer (from rank %d)", round, from[d]);
            }
        }
    double ring_secs = tu_now() - ring0;
    for (int d = 0; d < 2; d++) {
        free(out[d]);
        free(in[d]);
    }

    tu_phase("gathering reports at rank 0");
    report mine = {init_secs, mpi_init_secs, mpi_end, init_end, tu_errors, pb, local};
    int status = tu_errors ? 1 : 0;
    if (me == 0) {
        report *all = tu_xcalloc((size_t)n, sizeof *all);
        waitio_req_t *r = tu_xcalloc((size_t)n, sizeof *r);
        all[0] = mine;
        for (int p = 1; p < n; p++)
            TU_CHECK(waitio_irecv(u, WAITIO_ANY_SOURCE, (char *)&all[p], sizeof all[p], TAG_REPORT, &r[p]));
        for (int p = 1; p < n; p++) {
            int rc = waitio_wait_timeout(&r[p], 60);
            if (rc)
                TU_FAIL("report %d of %d: %s (%s)", p, n - 1, tu_code_name(rc), waitio_error_message());
        }
        double max = 0, sum = 0, mpi_max = 0, mpi_sum = 0, last_mpi = 0, last_init = 0;
        int argmax = 0, bad = 0;
        for (int p = 0; p < n; p++) {
            sum += all[p].init_secs;
            mpi_sum += all[p].mpi_init_secs;
            if (all[p].mpi_init_secs > mpi_max)
                mpi_max = all[p].mpi_init_secs;
            last_mpi = all[p].mpi_end > last_mpi ? all[p].mpi_end : last_mpi;
            last_init = all[p].init_end > last_init ? all[p].init_end : last_init;
            if (all[p].init_secs > max) {
                max = all[p].init_secs;
                argmax = p;
            }
            if (all[p].errors) {
                bad++;
                fprintf(stderr, "mpi_scale: PB %d rank %d reported %" PRId64 " errors\n", all[p].pb,
                        all[p].local, all[p].errors);
            }
        }
        printf("startup_seconds=%.3f\n", max);
        printf("mpi_init_seconds=%.3f mpi_init_mean_seconds=%.3f\n", mpi_max, mpi_sum / n);
        printf("after_last_mpi_init_seconds=%.4f\n", last_init - last_mpi);
        printf("startup_mean_seconds=%.3f (slowest: PB %d rank %d) ring_seconds=%.3f\n", sum / n,
               all[argmax].pb, all[argmax].local, ring_secs);
        if (bad) {
            printf("mpi_scale FAILED: %d of %d processes reported errors\n", bad, n);
            status = 1;
        } else {
            printf("mpi_scale ok: %d processes in %d PBs, %d ring rounds\n", n, npb, rounds);
        }
        fflush(stdout);
        free(all);
        free(r);
    } else {
        waitio_req_t r;
        TU_CHECK(waitio_isend(u, 0, (char *)&mine, sizeof mine, TAG_REPORT, &r));
        TU_CHECK(waitio_wait_timeout(&r, 60));
    }
    tu_phase("waitio_finalize");
    TU_CHECK(waitio_finalize());
#ifndef TU_NO_MPI
    tu_phase("MPI_Finalize");
    MPI_Finalize();
#endif
    return status;
}
