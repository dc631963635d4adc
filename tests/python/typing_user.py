"""A small user program of the binding, checked with mypy --strict against its stubs (python_sdist.sh)."""
from typing import Any, Dict, List, Optional, Tuple

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


def reply_to(origin: int, args: bytes) -> bytes:
    return args[::-1]


def one_sided(world: waitio.Comm) -> None:
    waitio.rpc_register(3, reply_to)
    win = waitio.Window.allocate(world, 1024)
    view: memoryview = win.memory()
    win.Put(b"12345678", 0, 8)
    data = bytearray(8)
    win.Get(data, 0, 8)
    req: waitio.Request = win.Iget(data, 0, 0)
    req.wait()
    old: int = win.fetch_add(0, 16, 1)
    prev = win.atomic(waitio.AMO_SWAP, 0, 24, 1.5, dtype="float64")
    win.put_signal(b"x", 0, 32, 40, 1, waitio.SIGNAL_ADD)
    win.wait_until(40, waitio.CMP_GE, 1)
    reply: bytes = world.rpc(0, 3, b"abc")
    world.rpc_ff(0, 3, b"")
    waitio.quiet()
    waitio.fence()
    size: int = win.target_size(0)
    print(view.nbytes, old, prev, reply, size)
    del view
    win.Free()


class CudaArray:
    """A device array as PyTorch and CuPy expose one (docs/python.md, "GPU arrays")."""

    @property
    def __cuda_array_interface__(self) -> Dict[str, Any]:
        return {"version": 3, "shape": (8,), "typestr": "<f8", "data": (0, False), "strides": None}


class DLPackArray:
    def __dlpack__(self, stream: Optional[int] = None, max_version: Optional[Tuple[int, int]] = None) -> object:
        return object()

    def __dlpack_device__(self) -> Tuple[int, int]:
        return (2, 0)


def device_arrays(world: waitio.Comm) -> None:
    dev, dl = CudaArray(), DLPackArray()
    world.Send(dev, 0, 1)
    st: Tuple[int, int, int] = world.Recv(dl, 0, 1)
    world.Allreduce(dev, dl, waitio.SUM)
    world.Bcast(dl, root=0)
    print(st)


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
        one_sided(waitio.rma_world())
        device_arrays(world)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
