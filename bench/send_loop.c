/* send_loop.c — the C twin of bench/py_overhead.py: PB 0 times N isend+wait of 8 bytes to PB 1,
 * which receives them; prints ns per isend+wait. Usage: send_loop [N] */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "waitio_mpi.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 200000;
    WAITIO_MPI_Comm w;
    if (waitio_create_universe(&w)) {
        fprintf(stderr, "send_loop: %s\n", waitio_error_message());
        return 1;
    }
    int me;
    waitio_group_rank(w, &me);
    double buf = 0;
    waitio_req_t r;
    if (me == 0) {
        for (long i = 0; i < n + 1000; i++) {
            if (i == 1000) {
                double t0 = now();
                for (long k = 0; k < n; k++) {
                    waitio_isend(w, 1, (char *)&buf, 8, 1, &r);
                    waitio_wait(&r);
                }
                printf("C isend+wait 8 B: %.0f ns per call\n", (now() - t0) / (double)n * 1e9);
                break;
            }
            waitio_isend(w, 1, (char *)&buf, 8, 1, &r);
            waitio_wait(&r);
        }
        waitio_irecv(w, 1, (char *)&buf, 8, 2, &r);
        waitio_wait(&r);
    } else {
        for (long i = 0; i < n + 1000; i++) {
            waitio_irecv(w, 0, (char *)&buf, 8, 1, &r);
            waitio_wait(&r);
        }
        waitio_isend(w, 0, (char *)&buf, 8, 2, &r);
        waitio_wait(&r);
    }
    waitio_finalize();
    return 0;
}
