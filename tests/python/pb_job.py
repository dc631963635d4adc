"""A Python PB of a one-job MPMD launch (tests/scripts/mpmd_job.sh):

    mpiexec -np 2 mpi_job : -np 1 mpi_job --no-mpi : -np 1 python3 pb_job.py

with no WAITIO_* variables. mpi4py initialises MPI, ``waitio.init`` loads the MPI adapter of
mpi4py's MPI, and this process is the last application's PB. It runs tests/progs/mpi_job.c's
exchange (every pair, pair-specific sizes, every byte checked) and collectives, and prints
"pb_job PB p rank r: ok (N processes, NPB PBs)".
"""
import sys

from mpi4py import MPI  # initialises MPI: this process joins the job's start-up
import waitio
from array import array


def msg_len(src: int, dst: int) -> int:
    return 1 + (src * 7919 + dst * 104729) % 400000


def msg(src: int, dst: int) -> bytes:
    n = msg_len(src, dst)
    return bytes((src * 131 + dst * 31 + i * 7 + (i >> 8)) & 0xFF for i in range(n))


def main() -> int:
    waitio.init(60)
    u = waitio.universe()
    me, n = u.rank, u.size
    pb, npb = waitio.pb_rank(), waitio.pb_size()
    appnum = MPI.COMM_WORLD.Get_attr(MPI.APPNUM)
    errors = 0
    if pb != appnum or npb - 1 != pb:
        print(f"pb_job: PB {pb} of {npb} but MPI_APPNUM {appnum}", file=sys.stderr)
        errors += 1
    bufs, reqs = {}, []
    for q in range(n):
        if q == me:
            continue
        bufs[q] = bytearray(msg_len(q, me))
        reqs.append(u.Irecv(bufs[q], q, 11))
        reqs.append(u.Isend(msg(me, q), q, 11))
    waitio.waitall(reqs)
    for q, b in bufs.items():
        if bytes(b) != msg(q, me):
            print(f"pb_job: the message from universe rank {q} differs", file=sys.stderr)
            errors += 1
    sums = array("i", [0, 0])
    u.Allreduce(array("i", [me, 1]), sums)
    if list(sums) != [n * (n - 1) // 2, n]:
        print(f"pb_job: allreduce gave {list(sums)}", file=sys.stderr)
        errors += 1
    word = array("i", [4242 + n if me == n - 1 else -1])
    u.Bcast(word, n - 1)
    if word[0] != 4242 + n:
        print(f"pb_job: bcast gave {word[0]}", file=sys.stderr)
        errors += 1
    u.Barrier()
    print(f"pb_job PB {pb} rank {waitio.local_rank()}: {'FAILED' if errors else 'ok'} "
          f"({n} processes, {npb} PBs)", flush=True)
    waitio.finalize()
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
