/*
 * mpi_shmem_hybrid.c — MPI and OpenSHMEM in one program, and one OpenSHMEM job over several
 * separately launched MPI jobs of different implementations (tests/scripts/shmem_mpi.sh builds
 * it with waitio-oshcc over mpicc.openmpi and over mpicc.mpich and runs an Open MPI PB and an
 * MPICH PB together): PE = universe rank, so a PB's PEs are contiguous and in MPI rank order;
 * MPI collectives inside each PB, OpenSHMEM RMA, atomics, signals and collectives across all.
 * Globals are symmetric only between PEs running the same executable: checked with
 * shmem_addr_accessible, used within the PB. Prints "hybrid ok: N PEs" from PE 0.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <shmem.h>

static int gslot[1024];
static long errors;

#define CHECK(c, ...) do { if (!(c)) { errors++; fprintf(stderr, "hybrid: PE %d: FAIL: ", me); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int mrank, msize;
    MPI_Comm_rank(MPI_COMM_WORLD, &mrank);
    MPI_Comm_size(MPI_COMM_WORLD, &msize);
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    int base = me - mrank, lo, hi;
    MPI_Allreduce(&base, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&base, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK(lo == hi && base >= 0, "the PB's PEs are not contiguous in MPI rank order (base %d..%d)", lo, hi);
    int sum = 0;
    MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum == msize * base + msize * (msize - 1) / 2, "MPI sum of PE numbers %d", sum);

    long *ctr = shmem_calloc(2, sizeof(long));
    int *slots = shmem_calloc((size_t)n, sizeof(int));
    uint64_t *sig = shmem_calloc(1, sizeof(uint64_t));
    for (int t = 0; t < n; t++) {
        shmem_int_p(&slots[me], me * 10, t);
        shmem_long_atomic_add(&ctr[0], me + 1, t);
    }
    shmem_barrier_all();
    for (int pe = 0; pe < n; pe++)
        CHECK(slots[pe] == pe * 10, "slot of PE %d: %d", pe, slots[pe]);
    CHECK(ctr[0] == (long)n * (n + 1) / 2, "atomic total %ld", ctr[0]);

    /* globals: within the PB (same executable) only */
    for (int pe = 0; pe < n; pe++) {
        int same_pb = pe >= base && pe < base + msize;
        CHECK(shmem_addr_accessible(gslot, pe) == same_pb, "addr_accessible(global, PE %d) = %d", pe,
              shmem_addr_accessible(gslot, pe));
    }
    int next = base + (mrank + 1) % msize;
    shmem_int_p(&gslot[mrank], me + 7, next);
    shmem_barrier_all();
    int prev_rank = (mrank + msize - 1) % msize;
    CHECK(gslot[prev_rank] == base + prev_rank + 7, "global slot %d: %d", prev_rank, gslot[prev_rank]);

    /* signals around the whole ring, crossing the PB boundary */
    int to = (me + 1) % n;
    long payload[8];
    for (int i = 0; i < 8; i++)
        payload[i] = me * 100 + i;
    shmem_long_put_signal(&ctr[1], payload, 1, sig, 1, SHMEM_SIGNAL_ADD, to);
    shmem_signal_wait_until(sig, SHMEM_CMP_EQ, 1);
    CHECK(ctr[1] == ((me + n - 1) % n) * 100, "signalled data %ld", ctr[1]);

    /* OpenSHMEM collectives over every PE */
    static long src[4], dst[4];
    for (int i = 0; i < 4; i++)
        src[i] = me + i;
    shmem_long_sum_reduce(SHMEM_TEAM_WORLD, dst, src, 4);
    CHECK(dst[2] == (long)n * (n - 1) / 2 + 2L * n, "reduction %ld", dst[2]);
    shmem_long_broadcast(SHMEM_TEAM_WORLD, dst, src, 4, n - 1);
    CHECK(dst[0] == n - 1, "broadcast %ld", dst[0]);

    static long all_errors;
    shmem_long_sum_reduce(SHMEM_TEAM_WORLD, &all_errors, &errors, 1);
    if (me == 0 && all_errors)
        printf("hybrid FAILED: %ld failures\n", all_errors);
    else if (me == 0)
        printf("hybrid ok: %d PEs\n", n);
    shmem_free(ctr);
    shmem_free(slots);
    shmem_free(sig);
    shmem_finalize();
    MPI_Finalize();
    return all_errors ? 1 : 0;
}
