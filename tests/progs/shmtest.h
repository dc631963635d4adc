/*
 * shmtest.h — helpers of the OpenSHMEM test programs (tests/progs/shmem_*.c, written from the
 * OpenSHMEM 1.5 specification): a failure counter with messages naming the PE, a time limit, and
 * the verdict line printed by PE 0 after every PE agreed (a sum reduction of the failure counts).
 */
#ifndef SHMTEST_H
#define SHMTEST_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <shmem.h>

static long st_errors;
static const char *st_name = "shmem test";
static const char *volatile st_phase = "start";

#define ST_CHECK(cond, ...)                                                                          \
    do {                                                                                             \
        if (!(cond)) {                                                                               \
            if (st_errors++ < 30) {                                                                  \
                fprintf(stderr, "%s: PE %d: FAIL (%s:%d, %s): ", st_name, shmem_my_pe(), __FILE__,  \
                        __LINE__, st_phase);                                                         \
                fprintf(stderr, __VA_ARGS__);                                                        \
                fputc('\n', stderr);                                                                 \
            }                                                                                        \
        }                                                                                            \
    } while (0)

static void st_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "shmem test: FAIL: time limit exceeded in phase ";
    ssize_t w = write(2, msg, sizeof msg - 1);
    w = write(2, st_phase, strlen(st_phase));
    w = write(2, "\n", 1);
    (void)w;
    _exit(2);
}

static void st_begin(const char *name, unsigned seconds)
{
    st_name = name;
    signal(SIGALRM, st_alarm);
    alarm(seconds);
    shmem_init();
}

/* Every PE's failures are summed; PE 0 prints the verdict; the exit status says it on every PE. */
static __attribute__((unused)) int st_end(void)
{
    static long mine, total;
    mine = st_errors;
    shmem_long_sum_reduce(SHMEM_TEAM_WORLD, &total, &mine, 1);
    int me = shmem_my_pe(), n = shmem_n_pes();
    long t = total;
    shmem_finalize();
    if (me == 0) {
        if (t)
            printf("%s FAILED: %ld failures on %d PEs\n", st_name, t, n);
        else
            printf("%s ok: %d PEs\n", st_name, n);
    }
    return t ? 1 : 0;
}

#endif
