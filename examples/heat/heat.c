/*
 * heat.c — Code-2 and Code-3 of the heat-coupling example (seed 000): a 3-D unsteady heat
 * conduction solver (explicit finite differences on an NX x NY x NZ grid, slabs in z over the
 * PB's MPI ranks, halo exchange with MPI).
 *
 *   Code-2: adds Code-1's point source at the grid centre every step, and passes the plane
 *           just below its z = Zmax face to Code-3.
 *   Code-3: the same solver and source; its z = Zmax plane is held at Code-2's values (fixed-
 *           temperature boundary).
 *
 * Coupling, chosen at run time:
 *   --coupling waitio  Code-1's (time, source) and Code-2's plane arrive through WaitIO over the
 *                      PB-heads communicator (WAITIO_CREATE_UNIVERSE_PBHEAD: Code-1 = 0,
 *                      Code-2 = 1, Code-3 = 2) and are broadcast inside the PB with MPI.
 *   --coupling file    the original way: s1.out (text, from Code-1) and s2.out (binary planes,
 *                      from Code-2), read by polling until the data is there.
 * Each step, rank 0 appends "step time source Tmax Tsum" to t2.lst / t3.lst with full precision,
 * so the two couplings can be compared digit for digit.
 *
 * Usage: heat --code 2|3 --coupling waitio|file [--steps N] [--nx N] [--nz N] [--sub N]
 */
#include <errno.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "waitio_mpi.h"

typedef struct params {
    int code;          /* 2 or 3 */
    int use_waitio;
    int steps, nx, ny, nz, sub;
    double alpha, dt;
} params;

static int rank, nranks;
static params P;

static void die(const char *msg, int rc)
{
    fprintf(stderr, "Code-%d rank %d: %s", P.code, rank, msg);
    if (rc)
        fprintf(stderr, ": %s (%s)", waitio_strerror(rc), waitio_error_message());
    fputc('\n', stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void parse(int argc, char **argv)
{
    P = (params){.code = 2, .use_waitio = 1, .steps = 20, .nx = 16, .ny = 16, .nz = 24,
                 .sub = 10, .alpha = 1.0, .dt = 0.1};
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (!strcmp(k, "--code")) P.code = atoi(v);
        else if (!strcmp(k, "--coupling")) P.use_waitio = strcmp(v, "file") != 0;
        else if (!strcmp(k, "--steps")) P.steps = atoi(v);
        else if (!strcmp(k, "--nx")) P.nx = P.ny = atoi(v);
        else if (!strcmp(k, "--nz")) P.nz = atoi(v);
        else if (!strcmp(k, "--sub")) P.sub = atoi(v);
        else die("unknown option", 0);
    }
    if ((P.code != 2 && P.code != 3) || P.steps < 1 || P.nx < 3 || P.nz < 2 * nranks)
        die("bad parameters", 0);
}

/* ---- the solver ---- */

typedef struct grid {
    int z0, nzl;        /* first global plane and number of planes held here */
    double *t, *tn;     /* (nzl + 2) planes incl. halos */
} grid;

#define IDX(g, x, y, z) ((size_t)(z) * (size_t)(P.nx * P.ny) + (size_t)(y) * (size_t)P.nx + (size_t)(x))

static void grid_init(grid *g)
{
    int base = P.nz / nranks, extra = P.nz % nranks;
    g->nzl = base + (rank < extra);
    g->z0 = rank * base + (rank < extra ? rank : extra);
    size_t n = (size_t)(g->nzl + 2) * (size_t)(P.nx * P.ny);
    g->t = calloc(n, sizeof(double));
    g->tn = calloc(n, sizeof(double));
    if (!g->t || !g->tn)
        die("out of memory", 0);
}

static void halo_exchange(grid *g)
{
    int plane = P.nx * P.ny;
    int up = rank + 1 < nranks ? rank + 1 : MPI_PROC_NULL, down = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    MPI_Sendrecv(&g->t[IDX(g, 0, 0, g->nzl)], plane, MPI_DOUBLE, up, 1, &g->t[IDX(g, 0, 0, 0)], plane,
                 MPI_DOUBLE, down, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(&g->t[IDX(g, 0, 0, 1)], plane, MPI_DOUBLE, down, 2, &g->t[IDX(g, 0, 0, g->nzl + 1)],
                 plane, MPI_DOUBLE, up, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

/* One explicit step; outer faces held at 0 except (Code-3) z = Zmax held at `top`. */
static void step(grid *g, double source, const double *top)
{
    halo_exchange(g);
    double r = P.alpha * P.dt;
    int cx = P.nx / 2, cy = P.ny / 2, cz = P.nz / 2;
    for (int zl = 1; zl <= g->nzl; zl++) {
        int z = g->z0 + zl - 1;
        for (int y = 0; y < P.ny; y++)
            for (int x = 0; x < P.nx; x++) {
                size_t i = IDX(g, x, y, zl);
                if (z == P.nz - 1 && top) {
                    g->tn[i] = top[(size_t)y * (size_t)P.nx + (size_t)x];
                    continue;
                }
                if (x == 0 || y == 0 || z == 0 || x == P.nx - 1 || y == P.ny - 1 || z == P.nz - 1) {
                    g->tn[i] = 0.0;
                    continue;
                }
                double lap = g->t[i - 1] + g->t[i + 1] + g->t[i - (size_t)P.nx] + g->t[i + (size_t)P.nx] +
                             g->t[i - (size_t)(P.nx * P.ny)] + g->t[i + (size_t)(P.nx * P.ny)] - 6.0 * g->t[i];
                g->tn[i] = g->t[i] + r * lap;
                if (x == cx && y == cy && z == cz)
                    g->tn[i] += P.dt * source;
            }
    }
    double *s = g->t;
    g->t = g->tn;
    g->tn = s;
}

/* What Code-3 needs: Code-2's last interior plane below Z = Zmax (z = NZ-2), assembled on
 * rank 0. It lives on the last rank, which holds at least two planes. */
static void top_plane(grid *g, double *out)
{
    int plane = P.nx * P.ny;
    if (nranks == 1) {
        memcpy(out, &g->t[IDX(g, 0, 0, g->nzl - 1)], sizeof(double) * (size_t)plane);
        return;
    }
    if (rank == nranks - 1)
        MPI_Send(&g->t[IDX(g, 0, 0, g->nzl - 1)], plane, MPI_DOUBLE, 0, 3, MPI_COMM_WORLD);
    if (rank == 0)
        MPI_Recv(out, plane, MPI_DOUBLE, nranks - 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void summary(grid *g, double *tmax, double *tsum)
{
    double m = 0, s = 0;
    for (int zl = 1; zl <= g->nzl; zl++)
        for (int y = 0; y < P.ny; y++)
            for (int x = 0; x < P.nx; x++) {
                double v = g->t[IDX(g, x, y, zl)];
                m = v > m ? v : m;
                s += v;
            }
    MPI_Reduce(&m, tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&s, tsum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
}

/* ---- coupling through files (the original way) ---- */

static void pause_10ms(void)
{
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

static FILE *open_when_present(const char *path)
{
    for (int tries = 0; tries < 6000; tries++) { /* the writer may not have started: poll */
        FILE *f = fopen(path, "r");
        if (f)
            return f;
        pause_10ms();
    }
    die("timed out waiting for an input file", 0);
    return NULL;
}

static void file_read_source(FILE *f, double *ts)
{
    if (fscanf(f, "%lf %lf", &ts[0], &ts[1]) != 2)
        die("s1.out ended early", 0);
}

static void file_read_plane(FILE *f, double *plane, int stepno)
{
    long long tag = -1;
    size_t n = (size_t)(P.nx * P.ny);
    for (int tries = 0; tries < 6000; tries++) {
        long pos = ftell(f);
        if (fread(&tag, sizeof tag, 1, f) == 1 && fread(plane, sizeof(double), n, f) == n) {
            if (tag != stepno)
                die("s2.out out of step", 0);
            return;
        }
        clearerr(f); /* not all there yet: poll, as file-coupled codes do */
        fseek(f, pos, SEEK_SET);
        pause_10ms();
    }
    die("timed out waiting for s2.out", 0);
}

static double plane_max(const double *p, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++)
        m = p[i] > m ? p[i] : m;
    return m;
}

/* ---- main ---- */

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    parse(argc, argv);
    grid g;
    grid_init(&g);
    size_t plane = (size_t)(P.nx * P.ny);
    double *top = calloc(plane, sizeof(double));
    WAITIO_MPI_Comm heads = WAITIO_MPI_COMM_NULL;
    FILE *s1 = NULL, *s2 = NULL, *lst = NULL;
    int rc;
    if (P.use_waitio && (rc = WAITIO_CREATE_UNIVERSE_PBHEAD(&heads)))
        die("WAITIO_CREATE_UNIVERSE_PBHEAD", rc);
    if (rank == 0) {
        lst = fopen(P.code == 2 ? "t2.lst" : "t3.lst", "w");
        if (!P.use_waitio) {
            s1 = open_when_present("s1.out");
            s2 = fopen("s2.out", P.code == 2 ? "w" : "r");
            if (!s2 && P.code == 3)
                s2 = open_when_present("s2.out");
        }
        if (!lst || (!P.use_waitio && !s2))
            die("cannot open output files", 0);
    }
    double t0 = MPI_Wtime();
    for (int n = 1; n <= P.steps; n++) {
        double ts[2] = {0, 0}; /* Code-1's time and source */
        if (rank == 0) {
            if (P.use_waitio) {
                if ((rc = WAITIO_MPI_Recv(&ts[0], 1, WAITIO_MPI_DOUBLE, 0, 0, heads)) ||
                    (rc = WAITIO_MPI_Recv(&ts[1], 1, WAITIO_MPI_DOUBLE, 0, 0, heads)))
                    die("receiving from Code-1", rc);
                if (P.code == 3 && (rc = WAITIO_MPI_Recv(top, (int)plane, WAITIO_MPI_DOUBLE, 1, 1, heads)))
                    die("receiving Code-2's plane", rc);
            } else {
                file_read_source(s1, ts);
                if (P.code == 3)
                    file_read_plane(s2, top, n);
            }
        }
        MPI_Bcast(ts, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        if (P.code == 3) /* the fixed-temperature plane lives on the last rank */
            MPI_Bcast(top, (int)plane, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        for (int k = 0; k < P.sub; k++)
            step(&g, ts[1], P.code == 3 ? top : NULL);
        if (P.code == 2) {
            top_plane(&g, top);
            if (rank == 0 && P.use_waitio &&
                (rc = WAITIO_MPI_Send(top, (int)plane, WAITIO_MPI_DOUBLE, 2, 1, heads)))
                die("sending the plane to Code-3", rc);
            if (rank == 0 && !P.use_waitio) {
                long long tag = n;
                if (fwrite(&tag, sizeof tag, 1, s2) != 1 || fwrite(top, sizeof(double), plane, s2) != plane)
                    die("writing s2.out", 0);
                fflush(s2);
            }
        }
        double tmax, tsum;
        summary(&g, &tmax, &tsum);
        if (rank == 0)
            fprintf(lst, "%4d %.17g %.17g %.17g %.17g\n", n, ts[0], ts[1], tmax, tsum);
        if (rank == 0 && P.use_waitio && n % 5 == 0) {
            if (P.code == 2)
                printf("Code-2 step %3d: got (%.2f, %.4f) from Code-1; sends its %dx%d top plane to "
                       "Code-3; Tmax %.5f\n", n, ts[0], ts[1], P.nx, P.ny, tmax);
            else
                printf("Code-3 step %3d: got (%.2f, %.4f) from Code-1 and Code-2's plane (max %.5f); "
                       "Tmax %.5f\n", n, ts[0], ts[1], plane_max(top, plane), tmax);
            fflush(stdout);
        }
    }
    if (rank == 0) {
        printf("Code-%d (%s coupling, %d MPI ranks): %d steps in %.3f s, see %s\n", P.code,
               P.use_waitio ? "WaitIO" : "file", nranks, P.steps, MPI_Wtime() - t0,
               P.code == 2 ? "t2.lst" : "t3.lst");
        fclose(lst);
        if (s1)
            fclose(s1);
        if (s2)
            fclose(s2);
    }
    if (P.use_waitio && (rc = waitio_finalize()))
        die("waitio_finalize", rc);
    free(top);
    free(g.t);
    free(g.tn);
    MPI_Finalize();
    return 0;
}
