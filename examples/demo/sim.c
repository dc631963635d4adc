/*
 * sim.c — the "simulation" PB of the coupled demo, built with Open MPI's mpicc.
 *
 * Solves the 1-D heat equation u_t = u_xx + q g(x) on (0, 1), u = 0 at both ends, with explicit
 * finite differences; the grid is split in blocks over the PB's MPI ranks, which exchange halos
 * with MPI every substep. After each coupling step every rank sends the parts of its block that
 * each analysis rank owns (an M x N redistribution, checksummed pieces) over WaitIO; the head
 * sends a step header first. The analysis PB answers with statistics and a new source strength q
 * (a controller holding the peak temperature at a target), which the head broadcasts and every
 * rank applies to the next step. At the end the PB heads measure WaitIO latency and bandwidth.
 *
 * Usage: sim [--steps N] [--n POINTS] [--substeps K] [--q Q0]
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coupling.h"

typedef struct params {
    int steps, substeps;
    long n;
    double q0;
} params;

/* This rank's block [lo, hi) of the global grid, with one ghost cell on each side. */
typedef struct field {
    long lo, hi, nl;
    double dx, dt;
    double *u, *un;
} field;

static demo_ctx C;

static void parse(params *p, int argc, char **argv)
{
    *p = (params){.steps = 12, .substeps = 1000, .n = 240, .q0 = 10.0};
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--steps")) p->steps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--n")) p->n = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--substeps")) p->substeps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--q")) p->q0 = atof(argv[i + 1]);
        else demo_fail(&C, "usage: sim [--steps N] [--n POINTS] [--substeps K] [--q Q0]");
    }
    if (p->steps < 1 || p->substeps < 1 || p->n < C.mpi_size || p->n < C.other_size)
        demo_fail(&C, "bad parameters");
}

/* ---- the solver ---- */

static void field_init(field *f, long n)
{
    block_range(n, C.mpi_size, C.mpi_rank, &f->lo, &f->hi);
    f->nl = f->hi - f->lo;
    f->dx = 1.0 / (double)(n + 1);
    f->dt = 0.4 * f->dx * f->dx; /* stable: dt / dx^2 < 1/2 */
    f->u = calloc((size_t)f->nl + 2, sizeof(double));
    f->un = calloc((size_t)f->nl + 2, sizeof(double));
    if (!f->u || !f->un)
        demo_fail(&C, "out of memory for the field");
}

static double source_shape(double x)
{
    double s = (x - 0.5) / 0.05;
    return exp(-s * s);
}

static void exchange_halos(field *f)
{
    int left = C.mpi_rank > 0 ? C.mpi_rank - 1 : MPI_PROC_NULL;
    int right = C.mpi_rank + 1 < C.mpi_size ? C.mpi_rank + 1 : MPI_PROC_NULL;
    f->u[0] = f->u[f->nl + 1] = 0.0; /* the walls, where there is no neighbour */
    MPI_Sendrecv(&f->u[f->nl], 1, MPI_DOUBLE, right, 0, &f->u[0], 1, MPI_DOUBLE, left, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(&f->u[1], 1, MPI_DOUBLE, left, 1, &f->u[f->nl + 1], 1, MPI_DOUBLE, right, 1,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void advance(field *f, double q, int substeps)
{
    double r = f->dt / (f->dx * f->dx);
    for (int k = 0; k < substeps; k++) {
        exchange_halos(f);
        for (long i = 1; i <= f->nl; i++) {
            double x = (double)(f->lo + i) * f->dx;
            f->un[i] = f->u[i] + r * (f->u[i - 1] - 2 * f->u[i] + f->u[i + 1]) + f->dt * q * source_shape(x);
        }
        double *t = f->u;
        f->u = f->un;
        f->un = t;
    }
}

/* ---- coupling: pieces out, control back ---- */

typedef struct outbox {
    char **msgs;
    waitio_req_t *reqs;
    int npieces;
    long nvalues;
    uint64_t xor_hash;
} outbox;

/* Posts one checksummed piece to every analysis rank whose block overlaps this rank's block. */
static void post_pieces(outbox *o, const field *f, long n, int step)
{
    int nana = C.other_size;
    o->msgs = calloc((size_t)nana, sizeof *o->msgs);
    o->reqs = calloc((size_t)nana, sizeof *o->reqs);
    if (!o->msgs || !o->reqs)
        demo_fail(&C, "out of memory for the pieces");
    o->npieces = 0, o->nvalues = 0, o->xor_hash = 0;
    for (int j = 0; j < nana; j++) {
        long alo, ahi;
        block_range(n, nana, j, &alo, &ahi);
        long lo = alo > f->lo ? alo : f->lo, hi = ahi < f->hi ? ahi : f->hi;
        if (lo >= hi)
            continue;
        size_t bytes = piece_bytes(hi - lo);
        char *msg = o->msgs[o->npieces] = malloc(bytes);
        if (!msg)
            demo_fail(&C, "out of memory for a piece");
        piece_pack(msg, &f->u[1 + lo - f->lo], hi - lo);
        o->xor_hash ^= fnv1a64(&f->u[1 + lo - f->lo], (size_t)(hi - lo) * sizeof(double));
        int rc = waitio_isend(C.universe, demo_universe_rank(&C, C.other_pb, j), msg, bytes,
                              STEP_TAG(step, TAG_PIECE), &o->reqs[o->npieces]);
        if (rc)
            demo_die(&C, "waitio_isend (piece)", rc);
        o->npieces++;
        o->nvalues += hi - lo;
    }
}

static void complete_pieces(outbox *o)
{
    int rc = waitio_waitall(o->npieces, o->reqs);
    if (rc)
        demo_die(&C, "waitio_waitall (pieces)", rc);
    for (int i = 0; i < o->npieces; i++)
        free(o->msgs[i]);
    free(o->msgs);
    free(o->reqs);
}

typedef struct step_totals {
    double min, max, sum;
    long values, pieces;
    uint64_t xor_hash;
} step_totals;

/* Sums this step's figures over the PB's ranks, at the head. */
static step_totals reduce_totals(const field *f, const outbox *o)
{
    double mn = 1e300, mx = -1e300, sum = 0;
    for (long i = 1; i <= f->nl; i++) {
        mn = fmin(mn, f->u[i]);
        mx = fmax(mx, f->u[i]);
        sum += f->u[i];
    }
    step_totals t = {0};
    long counts[2] = {o->nvalues, o->npieces}, total[2];
    MPI_Reduce(&mn, &t.min, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&mx, &t.max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&sum, &t.sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(counts, total, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&o->xor_hash, &t.xor_hash, 1, MPI_UINT64_T, MPI_BXOR, 0, MPI_COMM_WORLD);
    t.values = total[0], t.pieces = total[1];
    return t;
}

/* Head: the step header to the analysis head, then its answer. Returns the new q. */
static double head_exchange(const params *p, int step, double q, const step_totals *t)
{
    int ana_head = demo_universe_rank(&C, C.other_pb, 0);
    step_info info = {.step = step, .nsteps = p->steps, .n = p->n, .nsim = C.mpi_size,
                      .xor_hash = t->xor_hash, .q = q};
    demo_send(&C, ana_head, &info, sizeof info, STEP_TAG(step, TAG_INFO));
    control ctl;
    demo_recv(&C, ana_head, &ctl, sizeof ctl, STEP_TAG(step, TAG_CONTROL));
    double mean = t->sum / (double)p->n;
    int same = ctl.step == step && ctl.min == t->min && ctl.max == t->max &&
               fabs(ctl.mean - mean) <= 1e-12 * fabs(mean) + 1e-300;
    printf("[sim]      step %2d: q %7.3f, peak %.5f; sent %ld values in %ld pieces over WaitIO "
           "(xor of checksums %016llx)\n", step, q, t->max, t->values, t->pieces,
           (unsigned long long)t->xor_hash);
    printf("[sim]      step %2d: analysis answered min %.5f mean %.6f max %.5f (%s) -> new q %.3f\n",
           step, ctl.min, ctl.mean, ctl.max, same ? "= the simulation's own figures" : "MISMATCH",
           ctl.q_new);
    fflush(stdout);
    if (!same)
        demo_fail(&C, "the analysis's statistics differ from the simulation's field");
    return ctl.q_new;
}

static double couple_step(const params *p, field *f, int step, double q)
{
    outbox o;
    post_pieces(&o, f, p->n, step);
    step_totals t = reduce_totals(f, &o);
    double q_new = 0;
    if (C.mpi_rank == 0)
        q_new = head_exchange(p, step, q, &t);
    complete_pieces(&o);
    MPI_Bcast(&q_new, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return q_new;
}

/* ---- the end: latency and bandwidth between the PB heads ---- */

/* Ranks other than the head wait here without spinning, so the heads get the cores. */
static void idle_until_heads_done(void)
{
    MPI_Request r;
    int done = 0;
    MPI_Ibarrier(MPI_COMM_WORLD, &r);
    while (!done) {
        MPI_Test(&r, &done, MPI_STATUS_IGNORE);
        if (!done)
            nanosleep(&(struct timespec){0, 200000}, NULL);
    }
}

static void measure_heads(void)
{
    if (C.mpi_rank != 0) {
        idle_until_heads_done();
        return;
    }
    double lat = heads_pingpong(&C, 1, 8, 2000);
    double big = heads_pingpong(&C, 1, 8u << 20, 20);
    printf("[demo]     WaitIO between the PB heads (Open MPI rank 0 <-> MPICH rank 0), data checked:\n"
           "[demo]       8 B ping-pong:   %.2f us half round trip (2000 iterations)\n"
           "[demo]       8 MiB ping-pong: %.1f us half round trip = %.0f MB/s (20 iterations)\n",
           lat * 1e6, big * 1e6, (double)(8u << 20) / big / 1e6);
    fflush(stdout);
    idle_until_heads_done();
}

static void print_banner(const params *p)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, ",\n")] = 0;
    printf("[sim]      %s, %d ranks, PB %d; 1-D heat equation on %ld points, %d steps of %d "
           "substeps; coupled to %d analysis ranks\n", lib, C.mpi_size, C.pb, p->n, p->steps,
           p->substeps, C.other_size);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    demo_init(&C, "sim", 60);
    params p;
    parse(&p, argc, argv);
    if (C.mpi_rank == 0)
        print_banner(&p);
    field f;
    field_init(&f, p.n);
    double q = p.q0;
    for (int step = 1; step <= p.steps; step++) {
        advance(&f, q, p.substeps);
        q = couple_step(&p, &f, step, q);
    }
    measure_heads();
    free(f.u);
    free(f.un);
    demo_finalize(&C);
    if (C.mpi_rank == 0)
        printf("[sim]      done: %d steps coupled, every piece and statistic verified\n", p.steps);
    MPI_Finalize();
    return 0;
}
