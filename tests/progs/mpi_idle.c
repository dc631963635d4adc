/*
 * mpi_idle.c — waiting must not burn the CPU (SPEC §5: "on oversubscribed nodes it must yield
 * instead of starving the peer it waits for"). Every process measures its own CPU time
 * (getrusage, all threads) and wall time
 *   - in waitio_init, while its PB waits for a PB that the test script starts late, and
 *   - in waitio_wait on a receive from the "sleeper" (rank 0 of the last PB), which sleeps
 *     --sleep seconds after start-up before sending to everyone.
 * Universe rank 0 gathers the numbers (WaitIO messages) and, per PB, compares the CPU the PB's
 * processes used together with the time they waited: more than --max-cores (default 0.3) cores
 * busy on average while waiting >= 1 s is a failure. Lines printed by rank 0:
 *   "idle PB p (n processes): init waited W s using C cores; wait waited W s using C cores"
 *   "mpi_idle ok" or "mpi_idle FAILED: ..."
 * tests/progs/idle.c is the plain-process build (used as the late PB).
 * Usage: mpi_idle [--sleep S] [--max-cores X] [--alarm S]
 */
#ifndef TU_NO_MPI
#include <mpi.h>
#endif
#include <sys/resource.h>
#include "testutil.h"

#ifdef TU_NO_MPI
#define PROG "idle"
#else
#define PROG "mpi_idle"
#endif

typedef struct rep { int32_t pb, local; double init_wall, init_cpu, wait_wall, wait_cpu; } rep;

static double cpu_now(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
           (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

int main(int argc, char **argv)
{
    double sleep_secs = 3, max_cores = 0.3;
    unsigned alarm_secs = 60;
    tu_set_name(argv[0]);
#ifndef TU_NO_MPI
    MPI_Init(&argc, &argv);
#endif
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            TU_FAIL("option %s needs a value", a);
        i++;
        if (!strcmp(a, "--sleep")) sleep_secs = atof(v);
        else if (!strcmp(a, "--max-cores")) max_cores = atof(v);
        else if (!strcmp(a, "--alarm")) alarm_secs = (unsigned)atoi(v);
        else TU_FAIL("unknown option %s", a);
    }
    tu_alarm(alarm_secs);
    tu_phase("waitio_init");
    rep mine;
    double w0 = tu_now(), c0 = cpu_now();
    TU_CHECK(waitio_init(60));
    mine.init_wall = tu_now() - w0;
    mine.init_cpu = cpu_now() - c0;
    int pb, local, npb;
    TU_CHECK(waitio_pb_rank(&pb));
    TU_CHECK(waitio_local_rank(&local));
    TU_CHECK(waitio_pb_size(&npb));
    tu_set_who(pb, local);
    mine.pb = pb;
    mine.local = local;
    waitio_group_t u = tu_universe(4);
    int me, n;
    TU_CHECK(waitio_group_rank(u, &me));
    TU_CHECK(waitio_group_size(u, &n));
    int *np = tu_xcalloc((size_t)npb, sizeof *np);
    waitio_get_nprocs(np);
    int sleeper = n - np[npb - 1]; /* rank 0 of the last PB */
    if (sleeper == 0)
        TU_FAIL("the sleeper must not be universe rank 0 (use at least 2 PBs)");
    uint64_t token = 0x70c;
    if (me == sleeper) {
        tu_phase("sleeper");
        tu_sleep(sleep_secs);
        waitio_req_t *r = tu_xcalloc((size_t)n, sizeof *r);
        int k = 0;
        for (int p = 0; p < n; p++)
            if (p != me)
                TU_CHECK(waitio_isend(u, p, (char *)&token, sizeof token, 1, &r[k++]));
        TU_CHECK(waitio_waitall(k, r));
        free(r);
        mine.wait_wall = mine.wait_cpu = 0;
    } else {
        tu_phase("waiting in waitio_wait for the sleeper");
        uint64_t in = 0;
        waitio_req_t r;
        TU_CHECK(waitio_irecv(u, sleeper, (char *)&in, sizeof in, 1, &r));
        double w1 = tu_now(), c1 = cpu_now();
        TU_CHECK(waitio_wait(&r));
        mine.wait_wall = tu_now() - w1;
        mine.wait_cpu = cpu_now() - c1;
        if (in != token)
            TU_FAIL("token from the sleeper is %#lx", (unsigned long)in);
    }
    tu_phase("gathering at rank 0");
    int status = 0;
    if (me == 0) {
        rep *all = tu_xcalloc((size_t)n, sizeof *all);
        waitio_req_t *r = tu_xcalloc((size_t)n, sizeof *r);
        all[0] = mine;
        for (int p = 1; p < n; p++)
            TU_CHECK(waitio_irecv(u, p, (char *)&all[p], sizeof all[p], 2, &r[p]));
        TU_CHECK(waitio_waitall(n - 1, r + 1));
        for (int p = 0; p < npb; p++) {
            double iw = 0, ic = 0, ww = 0, wc = 0;
            int cnt = 0;
            for (int q = 0; q < n; q++) {
                if (all[q].pb != p || q == sleeper)
                    continue;
                cnt++;
                iw = all[q].init_wall > iw ? all[q].init_wall : iw;
                ww = all[q].wait_wall > ww ? all[q].wait_wall : ww;
                ic += all[q].init_cpu;
                wc += all[q].wait_cpu;
            }
            if (!cnt)
                continue;
            double icores = iw > 0 ? ic / iw : 0, wcores = ww > 0 ? wc / ww : 0;
            printf("idle PB %d (%d processes): init waited %.2f s using %.2f cores; wait waited "
                   "%.2f s using %.2f cores\n", p, cnt, iw, icores, ww, wcores);
            if (iw >= 1 && icores > max_cores) {
                printf(PROG " FAILED: PB %d's %d processes kept %.2f cores busy (%.2f CPU-s) "
                       "during the %.2f s they waited in waitio_init for the other PBs (max %.2f)\n",
                       p, cnt, icores, ic, iw, max_cores);
                status = 1;
            }
            if (ww >= 1 && wcores > max_cores) {
                printf(PROG " FAILED: PB %d's %d processes kept %.2f cores busy (%.2f CPU-s) "
                       "during the %.2f s they waited in waitio_wait (max %.2f)\n", p, cnt, wcores,
                       wc, ww, max_cores);
                status = 1;
            }
        }
        if (!status)
            printf(PROG " ok\n");
        fflush(stdout);
        free(all);
        free(r);
    } else {
        waitio_req_t r;
        TU_CHECK(waitio_isend(u, 0, (char *)&mine, sizeof mine, 2, &r));
        TU_CHECK(waitio_wait_timeout(&r, 30));
    }
    tu_phase("waitio_finalize");
    TU_CHECK(waitio_finalize());
#ifndef TU_NO_MPI
    MPI_Finalize();
#endif
    free(np);
    return status;
}
