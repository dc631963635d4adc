"""A small user program of the binding, checked with mypy --strict against its stubs (python_sdist.sh)."""
from typing import List, Optional, Tuple

import waitio


def exchange(world: waitio.Comm, payload: bytes) -> Tuple[int, int, int]:
    other = 1 - world.rank
    buf = bytearray(len(payload))
    req: waitio.Request = world.Irecv(buf, source=other, tag=7)
    world.Send(payload, dest=other, tag=7)
    status: Tuple[int, int, int] = req.wait()
    done: bool = req.test()
    assert done and req.status is not None
    return status


def main() -> int:
    with waitio.session(timeout=30):
        world = waitio.universe()
        src, tag, nbytes = exchange(world, b"x" * 64)
        total = bytearray(8)
        world.Allreduce(memoryview(bytearray(8)), total, waitio.SUM)
        got: List[int] = waitio.get_nprocs()
        heads: waitio.Comm = waitio.pbheads()
        g = waitio.create_group(5, [[0], lambda pb, r: r == 0], order=[1, 2])
        back: Optional[List[object]] = world.gather({"rank": world.rank}, root=0)
        waitio.waitall([world.Isend(b"abc", 0, 1)])
        try:
            world.Isend(b"", 9, 1)
        except waitio.Error as e:
            code: int = e.code
            message: str = e.message
            print(code, message)
        print(src, tag, nbytes, got, heads.size, g.rank, back, waitio.pb_rank(), waitio.__version__)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
