"""The Python program of tests/scripts/mpmd_world.sh: one application of a one-job MPMD launch
under mpi4py. ``import waitio`` (after mpi4py) makes ``MPI.COMM_WORLD`` this program's processes
(docs/launcher.md, "MPMD: what MPI_COMM_WORLD means"); the same three rounds as
tests/progs/mpi_mpmd_world.c check it (size, rank, Compare with itself, a split and a dup,
APPNUM, an allreduce of rank-dependent values), and unless --whole a send to rank <size> with
ERRORS_RETURN must fail. Then a ring over the WaitIO universe, every byte checked.
Arguments: --app A --layout N0,N1,... [--whole]. Prints "mpmd_world Python app A rank r: ok".
"""
import sys
from array import array

from mpi4py import MPI  # initialises MPI
import waitio  # noqa: E402  (after mpi4py: the world is replaced here)

errors = 0
world_rank = -1


def err(app: int, what: str) -> None:
    global errors
    errors += 1
    print(f"mpmd_world Python[app {app} rank {world_rank}]: ERROR: {what}", file=sys.stderr, flush=True)


def ring_msg(src: int) -> bytes:
    return bytes((src * 31 + i * 7) % 251 for i in range(1000 + 37 * src))


def world_round(rnd: int, app: int, size: int, first: int, total: int) -> None:
    global world_rank
    w = MPI.COMM_WORLD
    world_rank = rank = w.Get_rank()
    if w.Get_size() != size or not first <= rank < first + size:
        err(app, f"round {rnd}: world rank {rank} of {w.Get_size()}, expected {size} from {first}")
    if MPI.Comm.Compare(w, w) != MPI.IDENT:
        err(app, f"round {rnd}: Compare(world, world)")
    split = w.Split(0, rank)
    if MPI.Comm.Compare(w, split) != MPI.CONGRUENT:
        err(app, f"round {rnd}: Compare(world, split of world) = {MPI.Comm.Compare(w, split)}")
    dup = w.Dup()
    if MPI.Comm.Compare(dup, w) != MPI.CONGRUENT:
        err(app, f"round {rnd}: Compare(dup of world, world)")
    if w.Get_attr(MPI.APPNUM) != app:
        err(app, f"round {rnd}: APPNUM on the world is {w.Get_attr(MPI.APPNUM)}")
    sums = array("q", [0, 0])
    w.Allreduce([array("q", [rank + 1 + 1000 * app, 1]), MPI.INT64_T], [sums, MPI.INT64_T], MPI.SUM)
    if list(sums) != [total, w.Get_size()]:
        err(app, f"round {rnd}: allreduce over the world gave {list(sums)}, expected {[total, size]}")
    split.Free()
    dup.Free()


def main() -> int:
    args = sys.argv[1:]
    app = int(args[args.index("--app") + 1])
    layout = [int(x) for x in args[args.index("--layout") + 1].split(",")]
    whole = "--whole" in args
    n, total, first = layout[app], sum(layout), sum(layout[:app])
    weight = sum(1000 * a * k for a, k in enumerate(layout))
    size, start = (total, first) if whole else (n, 0)
    expect = total * (total + 1) // 2 + weight if whole else n * (n + 1) // 2 + 1000 * app * n
    if whole != (waitio.mpmd_job_world is None):
        err(app, f"waitio.mpmd_job_world is {waitio.mpmd_job_world} (WAITIO_MPMD_WORLD=0: {whole})")
    for rnd in (1, 2, 3):
        world_round(rnd, app, size, start, expect)
    if not whole:
        MPI.COMM_WORLD.Set_errhandler(MPI.ERRORS_RETURN)
        try:
            MPI.COMM_WORLD.Send(array("i", [1]), dest=size, tag=0)
            err(app, f"a send to rank {size} (outside the program's world) succeeded")
        except MPI.Exception:
            pass
        MPI.COMM_WORLD.Set_errhandler(MPI.ERRORS_ARE_FATAL)

    waitio.init(60)
    if waitio.pb_rank() != app or world_rank != start + waitio.local_rank():
        err(app, f"WaitIO says PB {waitio.pb_rank()} rank {waitio.local_rank()}, the world "
                 f"application {app} rank {world_rank}")
    u = waitio.universe()
    me, nu = u.rank, u.size
    nxt, prv = (me + 1) % nu, (me + nu - 1) % nu
    inbuf = bytearray(1000 + 37 * prv)
    reqs = [u.Irecv(inbuf, prv, 21), u.Isend(ring_msg(me), nxt, 21)]
    waitio.waitall(reqs)
    if bytes(inbuf) != ring_msg(prv):
        bad = sum(a != b for a, b in zip(inbuf, ring_msg(prv)))
        err(app, f"{bad} of {len(inbuf)} bytes from universe rank {prv} differ")
    print(f"mpmd_world Python app {app} rank {world_rank}: {'FAILED' if errors else 'ok'} "
          f"(world {MPI.COMM_WORLD.Get_size()})", flush=True)
    waitio.finalize()
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
