/*
 * mpi_bcast_kill.c — a large broadcast on the universe whose root dies: every other process
 * must get an error, none a hang and none a success. Run with WAITIO_COLL_HIER=1 and
 * WAITIO_COLL_PIPELINE=1 (the pipelined broadcast: the other PBs' heads receive 256 KiB
 * segments over WaitIO while their PBs broadcast the ones in with MPI_Ibcast). Universe rank 0
 * (alone in PB 0) takes part in a barrier and then SIGKILLs itself instead of broadcasting; the
 * other PBs' heads see the peer fail, and their PBs' other processes must learn it from them.
 * Each survivor prints "bcast_kill PB p rank r: <code name>" and exits 0 if the broadcast failed
 * with WAITIO_ERR_PEER (the head) or any error naming the head (the others).
 * With "allreduce" instead of a size, the survivors call a small allreduce (8 bytes each) with
 * the path WaitIO chooses itself (on one host: one round, every rank sending to every other):
 * each needs the dead rank's operand, so each must fail with WAITIO_ERR_PEER.
 * Usage: mpi_bcast_kill [bytes | allreduce]   (default 1.5 MiB)
 */
#include <mpi.h>
#include <signal.h>
#include "testutil.h"
#include "waitio_mpi.h"

int main(int argc, char **argv)
{
    int allreduce = argc > 1 && !strcmp(argv[1], "allreduce");
    size_t bytes = argc > 1 && !allreduce ? (size_t)atol(argv[1]) : (3u << 19);
    tu_set_name(argv[0]);
    tu_alarm(90);
    MPI_Init(&argc, &argv);
    WAITIO_MPI_Comm U;
    int urank = -1, pbid = -1, wrank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    TU_CHECK(waitio_create_universe(&U));
    TU_CHECK(waitio_pb_rank(&pbid));
    TU_CHECK(WAITIO_MPI_Comm_rank(U, &urank));
    tu_set_who(pbid, wrank);
    uint8_t *buf = malloc(bytes);
    if (!buf)
        TU_FAIL("out of memory");
    memset(buf, 0xee, bytes);
    tu_phase("barrier");
    TU_CHECK(WAITIO_MPI_Barrier(U));
    if (urank == 0) {
        raise(SIGKILL);
        return 1;
    }
    tu_phase(allreduce ? "allreduce without the dead rank" : "broadcast from the dead root");
    double t0 = tu_now();
    double one = 1.0, sum = 0;
    int rc = allreduce ? WAITIO_MPI_Allreduce(&one, &sum, 1, WAITIO_MPI_DOUBLE, WAITIO_MPI_SUM, U)
                       : WAITIO_MPI_Bcast(buf, (int)bytes, WAITIO_MPI_BYTE, 0, U);
    printf("bcast_kill PB %d rank %d: %s after %.2f s (%s)\n", pbid, wrank, tu_code_name(rc),
           tu_now() - t0, rc ? waitio_error_message() : "no error");
    fflush(stdout);
    /* allreduce: everyone needs the dead rank's operand; bcast: the head sees the root fail */
    int ok = allreduce ? rc == WAITIO_ERR_PEER : rc != 0 && (wrank != 0 || rc == WAITIO_ERR_PEER);
    free(buf);
    waitio_finalize();
    MPI_Finalize();
    return ok ? 0 : 1;
}
