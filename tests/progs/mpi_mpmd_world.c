/*
 * mpi_mpmd_world.c — the C program of tests/scripts/mpmd_world.sh: one application of a one-job
 * MPMD launch (`mpiexec -np 2 mpi_mpmd_world --app 0 --layout 2,1,1 : -np 1 mpmd_world.<mpi> ...
 * : -np 1 python3 mpmd_world.py ...`), checking that MPI_COMM_WORLD is its own processes
 * (docs/launcher.md, "MPMD: what MPI_COMM_WORLD means"), then coupling through WaitIO.
 *
 * Three rounds (the Fortran program makes one per binding, every program the same collectives,
 * so that they also match over the whole job with WAITIO_MPMD_WORLD=0) of: size and rank of the
 * world; MPI_Comm_compare of the world with itself (IDENT), with a split of it and a dup of it
 * (CONGRUENT); MPI_APPNUM read on the world; an allreduce of rank-dependent values over the
 * world. Then, not collective: the world's name, a user attribute set and read on it, and with
 * MPI_ERRORS_RETURN set on it, a send to rank <size>, which exists only in the whole job (an
 * error in the program's world). Then WaitIO: a ring over the universe, every byte checked.
 * --whole: WAITIO_MPMD_WORLD=0, the world must be the whole job. Prints
 * "mpmd_world C app A rank r: ok (world N)".
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "waitio.h"
#include "waitio_mpi.h"

static int app = -1, wrank = -1, errors;

#define ERR(...) do { errors++; fprintf(stderr, "mpmd_world C[app %d rank %d]: ERROR: ", app, wrank); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } while (0)
#define CHECK(call) do { int rc_ = (call); if (rc_) { fprintf(stderr, "mpmd_world C[app %d rank %d]: " \
    "FAIL: %s: %s\n", app, wrank, #call, waitio_strerror(rc_)); exit(1); } } while (0)

/* the ring's messages, the same formulas in mpmd_world.f90 and tests/python/mpmd_world.py */
static int ring_len(int src) { return 1000 + 37 * src; }
static uint8_t ring_byte(int src, int i) { return (uint8_t)((src * 31 + i * 7) % 251); }

static void world_round(int round, int expect_size, int first, int64_t expect_sum)
{
    int size = -1, rank = -1, cmp = -1, flag = 0, *appnum = NULL;
    MPI_Comm split, dup;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    wrank = rank;
    if (size != expect_size || rank < first || rank >= first + expect_size)
        ERR("round %d: world rank %d of %d, expected %d processes from rank %d", round, rank, size,
            expect_size, first);
    MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &cmp);
    if (cmp != MPI_IDENT)
        ERR("round %d: MPI_Comm_compare(world, world) = %d", round, cmp);
    MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &split);
    MPI_Comm_compare(MPI_COMM_WORLD, split, &cmp);
    if (cmp != MPI_CONGRUENT)
        ERR("round %d: MPI_Comm_compare(world, split of world) = %d", round, cmp);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_compare(dup, MPI_COMM_WORLD, &cmp);
    if (cmp != MPI_CONGRUENT)
        ERR("round %d: MPI_Comm_compare(dup of world, world) = %d", round, cmp);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
    if (!flag || *appnum != app)
        ERR("round %d: MPI_APPNUM on the world: flag %d value %d, expected %d", round, flag,
            flag ? *appnum : -1, app);
    int64_t mine[2] = {rank + 1 + 1000 * (int64_t)app, 1}, sums[2] = {0, 0};
    MPI_Allreduce(mine, sums, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (sums[0] != expect_sum || sums[1] != size)
        ERR("round %d: allreduce over the world gave %lld %lld, expected %lld %d", round,
            (long long)sums[0], (long long)sums[1], (long long)expect_sum, size);
    MPI_Comm_free(&split);
    MPI_Comm_free(&dup);
}

/* Not collective: the name, a user attribute, the error handler and a rank outside the world. */
static void world_local(int whole, int size)
{
    char name[MPI_MAX_OBJECT_NAME] = "";
    int len = 0, key = MPI_KEYVAL_INVALID, flag = 0, *got = NULL;
    static int value = 4242;
    MPI_Comm_get_name(MPI_COMM_WORLD, name, &len);
    if (strcmp(name, "MPI_COMM_WORLD") != 0)
        ERR("MPI_Comm_get_name(world) = \"%s\"", name);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &key, NULL);
    MPI_Comm_set_attr(MPI_COMM_WORLD, key, &value);
    MPI_Comm_get_attr(MPI_COMM_WORLD, key, &got, &flag);
    if (!flag || got != &value)
        ERR("a user attribute set on the world reads back as flag %d", flag);
    MPI_Comm_delete_attr(MPI_COMM_WORLD, key);
    MPI_Comm_free_keyval(&key);
    int tag_ub_flag = 0, *tag_ub = NULL;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &tag_ub_flag);
    if (!tag_ub_flag || *tag_ub < 32767)
        ERR("MPI_TAG_UB on the world: flag %d", tag_ub_flag);
    if (whole)
        return;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int x = 1, rc = MPI_Send(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD);
    if (rc == MPI_SUCCESS)
        ERR("a send to rank %d (outside the program's world of %d) succeeded", size, size);
    MPI_Errhandler eh;
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
    if (eh != MPI_ERRORS_RETURN)
        ERR("MPI_Comm_get_errhandler(world) is not the MPI_ERRORS_RETURN just set");
    MPI_Errhandler_free(&eh);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void ring(void)
{
    WAITIO_MPI_Comm U;
    int me = -1, n = 0;
    CHECK(waitio_create_universe(&U));
    CHECK(waitio_group_rank(U, &me));
    CHECK(waitio_group_size(U, &n));
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    int lout = ring_len(me), lin = ring_len(prev);
    uint8_t *out = malloc((size_t)lout), *in = malloc((size_t)lin);
    for (int i = 0; i < lout; i++)
        out[i] = ring_byte(me, i);
    memset(in, 0, (size_t)lin);
    waitio_req_t reqs[2];
    CHECK(waitio_irecv(U, prev, (char *)in, (size_t)lin, 21, &reqs[0]));
    CHECK(waitio_isend(U, next, (char *)out, (size_t)lout, 21, &reqs[1]));
    CHECK(waitio_waitall(2, reqs));
    int bad = 0;
    for (int i = 0; i < lin; i++)
        bad += in[i] != ring_byte(prev, i);
    if (bad)
        ERR("%d of %d bytes from universe rank %d differ", bad, lin, prev);
    free(in);
    free(out);
}

int main(int argc, char **argv)
{
    int whole = 0, layout[16], napps = 0;
    alarm(60);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--app") && i + 1 < argc)
            app = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--layout") && i + 1 < argc)
            for (char *p = argv[++i]; *p && napps < 16; p += strcspn(p, ","), p += *p == ',')
                layout[napps++] = atoi(p);
        else if (!strcmp(argv[i], "--whole"))
            whole = 1;
    }
    if (app < 0 || app >= napps) {
        fprintf(stderr, "usage: mpi_mpmd_world --app A --layout N0,N1,... [--whole]\n");
        return 2;
    }
    int total = 0, first = 0;
    int64_t app_weight = 0;
    for (int a = 0; a < napps; a++) {
        first += a < app ? layout[a] : 0;
        total += layout[a];
        app_weight += 1000 * (int64_t)a * layout[a];
    }
    int n = layout[app];
    int expect_size = whole ? total : n, expect_first = whole ? first : 0;
    int64_t expect_sum = whole ? (int64_t)total * (total + 1) / 2 + app_weight
                               : (int64_t)n * (n + 1) / 2 + 1000 * (int64_t)app * n;
    MPI_Init(&argc, &argv);
    for (int round = 1; round <= 3; round++)
        world_round(round, expect_size, expect_first, expect_sum);
    world_local(whole, expect_size);
    CHECK(waitio_init(60));
    int pb = -1, local = -1;
    CHECK(waitio_pb_rank(&pb));
    CHECK(waitio_local_rank(&local));
    if (pb != app || wrank != expect_first + local)
        ERR("WaitIO says PB %d rank %d, the world says application %d rank %d", pb, local, app, wrank);
    ring();
    int wsize = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    printf("mpmd_world C app %d rank %d: %s (world %d)\n", app, wrank, errors ? "FAILED" : "ok", wsize);
    fflush(stdout);
    CHECK(waitio_finalize());
    MPI_Finalize();
    return errors ? 1 : 0;
}
