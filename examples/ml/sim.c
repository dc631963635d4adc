/*
 * sim.c — the simulation PB of the ML-coupling example (SPEC §11, seed: NICAM + PyTorch):
 * 1-D heat equation with a moving heat source, solved implicitly each step (backward Euler) by
 * Jacobi iterations distributed over MPI ranks. Each step, rank 0 streams the state to a Python
 * PB over WaitIO; the Python PB learns to predict the next state and sends its prediction back,
 * which the solver uses as its initial guess. For comparison the solver also counts the
 * iterations it needs from the usual guess (the previous state). Prints both.
 * Usage: sim [steps]   (WaitIO universe: the simulation's ranks first, the learner last)
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "waitio_mpi.h"

#define N 512            /* global grid points */
#define R 4.0            /* alpha * dt / h^2: implicit, so any value is stable */
#define TOL 1e-8

static int rank, nranks, n0, nl;

static void die(const char *what, int rc)
{
    fprintf(stderr, "sim: %s: %s (%s)\n", what, waitio_strerror(rc), waitio_error_message());
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Solves (1 + 2R) u_i - R (u_{i-1} + u_{i+1}) = rhs_i, u = 0 outside, from the guess in u.
 * Returns the number of Jacobi iterations. u has nl + 2 entries (halos). */
static int jacobi(double *u, const double *rhs)
{
    double *v = malloc(sizeof(double) * (size_t)(nl + 2));
    int up = rank + 1 < nranks ? rank + 1 : MPI_PROC_NULL, down = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    int it = 0;
    for (;;) {
        u[0] = u[nl + 1] = 0.0;
        MPI_Sendrecv(&u[nl], 1, MPI_DOUBLE, up, 0, &u[0], 1, MPI_DOUBLE, down, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(&u[1], 1, MPI_DOUBLE, down, 1, &u[nl + 1], 1, MPI_DOUBLE, up, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        double local = 0, global;
        for (int i = 1; i <= nl; i++) {
            double res = rhs[i] - ((1 + 2 * R) * u[i] - R * (u[i - 1] + u[i + 1]));
            local += res * res;
            v[i] = (rhs[i] + R * (u[i - 1] + u[i + 1])) / (1 + 2 * R);
        }
        MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        if (sqrt(global) < TOL || it >= 100000)
            break;
        memcpy(&u[1], &v[1], sizeof(double) * (size_t)nl);
        it++;
    }
    free(v);
    return it;
}

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 40;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    WAITIO_MPI_Comm U;
    int rc, urank, usize;
    if ((rc = waitio_create_universe(&U)) || (rc = WAITIO_MPI_Comm_rank(U, &urank)) ||
        (rc = WAITIO_MPI_Comm_size(U, &usize)))
        die("universe", rc);
    int learner = usize - 1;
    n0 = rank * N / nranks;
    nl = (rank + 1) * N / nranks - n0;
    int *counts = malloc(sizeof(int) * (size_t)nranks), *displs = malloc(sizeof(int) * (size_t)nranks);
    for (int r = 0; r < nranks; r++) {
        displs[r] = r * N / nranks;
        counts[r] = (r + 1) * N / nranks - displs[r];
    }
    double *u = calloc((size_t)nl + 2, sizeof(double)), *rhs = calloc((size_t)nl + 2, sizeof(double));
    double *guess = calloc((size_t)nl + 2, sizeof(double)), *full = calloc(N, sizeof(double));
    long it_plain = 0, it_pred = 0, it_plain_late = 0, it_pred_late = 0;
    for (int n = 1; n <= steps; n++) {
        /* the state goes to the learner; its prediction of the next state comes back */
        MPI_Gatherv(&u[1], nl, MPI_DOUBLE, full, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            if ((rc = WAITIO_MPI_Send(full, N, WAITIO_MPI_DOUBLE, learner, 1, U)))
                die("send state", rc);
            if ((rc = WAITIO_MPI_Recv(full, N, WAITIO_MPI_DOUBLE, learner, 2, U)))
                die("receive prediction", rc);
        }
        MPI_Scatterv(full, counts, displs, MPI_DOUBLE, &guess[1], nl, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        double t = 0.05 * n;
        for (int i = 1; i <= nl; i++) {
            double x = (double)(n0 + i - 1) / N;
            rhs[i] = u[i] + 0.5 * exp(-200 * (x - 0.5 - 0.3 * sin(t)) * (x - 0.5 - 0.3 * sin(t)));
        }
        /* the usual guess (previous state) and the learned one: same equation, same answer */
        double *plain = malloc(sizeof(double) * (size_t)(nl + 2));
        memcpy(plain, u, sizeof(double) * (size_t)(nl + 2));
        int a = jacobi(plain, rhs);
        int b = jacobi(guess, rhs);
        it_plain += a;
        it_pred += b;
        if (n > steps / 2) {
            it_plain_late += a;
            it_pred_late += b;
        }
        memcpy(u, guess, sizeof(double) * (size_t)(nl + 2));
        double diff = 0;
        for (int i = 1; i <= nl; i++)
            diff = fmax(diff, fabs(plain[i] - guess[i]));
        free(plain);
        if (rank == 0 && (n % 10 == 0 || n == 1))
            printf("sim step %3d: Jacobi iterations %5d from the previous state, %5d from the "
                   "learner's prediction (solutions differ by %.1e)\n", n, a, b, diff);
    }
    if (rank == 0) {
        if ((rc = WAITIO_MPI_Send(full, 0, WAITIO_MPI_DOUBLE, learner, 3, U)))
            die("send stop", rc);
        int late = steps - steps / 2;
        printf("sim: %d steps, mean iterations per step %.1f -> %.1f with the learned initial guess "
               "(last %d steps: %.1f -> %.1f, %.0f%% fewer)\n", steps, (double)it_plain / steps,
               (double)it_pred / steps, late, (double)it_plain_late / late, (double)it_pred_late / late,
               100.0 * (1.0 - (double)it_pred_late / (double)it_plain_late));
    }
    if ((rc = waitio_finalize()))
        die("finalize", rc);
    free(u); free(rhs); free(guess); free(full); free(counts); free(displs);
    MPI_Finalize();
    return 0;
}
