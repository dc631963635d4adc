"""gpu_torch_cupy.py — PyTorch and CuPy arrays as WaitIO buffers on a real GPU (run by
tests/gpu/real_python.sh, two PBs of one process: PB 0 holds PyTorch CUDA tensors, PB 1 CuPy
arrays, so each message crosses from one library's allocation to the other's).

Every byte is checked on the GPU against the same pattern computed by both libraries
((i * 2654435761 + seed) mod 251, int64 arithmetic):
  - device -> device both ways, 0 B .. 64 MiB (CUDA IPC between the PBs of one host);
  - PyTorch device -> NumPy host memory and back (device <-> host-memory PB);
  - a tensor written by a kernel on a side stream and sent at once (the binding synchronizes
    the __cuda_array_interface__ stream before the library reads it);
  - a CuPy array seen only through DLPack, sent and received into;
  - Allreduce SUM and Bcast on device arrays of both libraries.
Prints one line per part with the time it took and "gpu_torch_cupy ok" at the end.
"""
import os
import sys
import time

import numpy as np

import waitio

SIZES = [0, 1, 4096 + 3, 1 << 20, 8 << 20, 64 << 20]


class Lib:
    """The operations the test needs, on PyTorch (PB 0) or CuPy (PB 1)."""

    def __init__(self, pb):
        self.pb = pb
        if pb == 0:
            import torch
            self.t = torch
            self.name = f"PyTorch {torch.__version__}"
        else:
            import cupy
            self.cp = cupy
            self.name = f"CuPy {cupy.__version__}"

    def pattern(self, n, seed, dtype="uint8"):
        if self.pb == 0:
            t = self.t
            i = t.arange(n, dtype=t.int64, device="cuda")
            return ((i * 2654435761 + seed) % 251).to(getattr(t, dtype))
        i = self.cp.arange(n, dtype=self.cp.int64)
        return ((i * 2654435761 + seed) % 251).astype(dtype)

    def empty(self, n, dtype="uint8"):
        if self.pb == 0:
            return self.t.empty(n, dtype=getattr(self.t, dtype), device="cuda")
        return self.cp.empty(n, dtype=dtype)

    def same(self, a, b):
        if self.pb == 0:
            return bool(self.t.equal(a, b))
        return bool((a == b).all())


def say(line):
    """One line in one write(2): the two PBs share the launcher's output."""
    sys.stdout.flush()
    os.write(1, (line + "\n").encode())


def check(ok, what):
    if not ok:
        raise SystemExit(f"FAIL {what}")


class DLPackOnly:
    """An array seen only through DLPack (its __cuda_array_interface__ hidden)."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, **kw):
        return self.a.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def main():
    with waitio.session(timeout=120):
        world = waitio.universe()
        me = world.rank
        peer = 1 - me
        lib = Lib(me)
        say(f"rank {me}: {lib.name}")

        t0 = time.perf_counter()
        for i, n in enumerate(SIZES):
            for sender in (0, 1):
                seed = 17 * i + sender
                if me == sender:
                    world.Send(lib.pattern(n, seed), peer, 10 + seed)
                else:
                    buf = lib.empty(n)
                    st = world.Recv(buf, peer, 10 + seed)
                    check(st == (peer, 10 + seed, n), f"status {st}")
                    check(lib.same(buf, lib.pattern(n, seed)), f"device->device {n} B from rank {sender}")
        say(f"rank {me}: device<->device 0 B..64 MiB both ways checked ({time.perf_counter() - t0:.2f} s)")

        t0 = time.perf_counter()
        n = (8 << 20) + 5
        if me == 0:
            world.Send(lib.pattern(n, 99), peer, 50)
            back = lib.empty(n)
            world.Recv(back, peer, 51)
            check(lib.same(back, lib.pattern(n, 98)), "host -> PyTorch device")
        else:
            host = np.empty(n, dtype=np.uint8)
            world.Recv(host, peer, 50)
            want = ((np.arange(n, dtype=np.int64) * 2654435761 + 99) % 251).astype(np.uint8)
            check(np.array_equal(host, want), "PyTorch device -> NumPy host")
            world.Send(((np.arange(n, dtype=np.int64) * 2654435761 + 98) % 251).astype(np.uint8), peer, 51)
        say(f"rank {me}: device<->host 8 MiB both ways checked ({time.perf_counter() - t0:.2f} s)")

        # a kernel on a side stream, sent at once: the binding waits for that stream
        n = 32 << 20
        if me == 0:
            t = lib.t
            side = t.cuda.Stream()
            x = t.empty(n // 4, dtype=t.float32, device="cuda")
            with t.cuda.stream(side):
                x.fill_(1.0)
                for _ in range(50):
                    x.add_(1.0)      # queued, not yet run, when Send is called (exact: 51.0)
                world.Send(x, peer, 60)
            side.synchronize()
        else:
            y = lib.empty(n // 4, "float32")
            world.Recv(y, peer, 60)
            check(bool((y == 51.0).all()), "side-stream tensor: the data of the finished kernels")
        say(f"rank {me}: side-stream kernel output sent without an explicit sync: checked")

        # DLPack only (rank 1's CuPy arrays)
        n = (1 << 20) + 7
        if me == 1:
            world.Send(DLPackOnly(lib.pattern(n, 70)), peer, 70)
            into = lib.empty(n)
            world.Recv(DLPackOnly(into), peer, 71)
            check(lib.same(into, lib.pattern(n, 71)), "received into a DLPack-only CuPy array")
        else:
            got = lib.empty(n)
            world.Recv(got, peer, 70)
            check(lib.same(got, lib.pattern(n, 70)), "a DLPack-only CuPy array's bytes")
            world.Send(lib.pattern(n, 71), peer, 71)
        say(f"rank {me}: DLPack send and receive checked")

        # collectives on device arrays of both libraries
        t0 = time.perf_counter()
        n = 1 << 20
        mine = lib.pattern(n, 5 + me, "float32")
        total = lib.empty(n, "float32")
        world.Allreduce(mine, total, waitio.SUM)
        want = lib.pattern(n, 5, "float32") + lib.pattern(n, 6, "float32")
        check(lib.same(total, want), "Allreduce SUM on device arrays")
        b = lib.pattern(n, 80) if me == 0 else lib.empty(n)
        world.Bcast(b, 0)
        check(lib.same(b, lib.pattern(n, 80)), "Bcast into a device array")
        say(f"rank {me}: Allreduce (4 MiB float32) and Bcast on device checked ({time.perf_counter() - t0:.2f} s)")
        world.Barrier()
        say(f"gpu_torch_cupy ok: rank {me} ({lib.name})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
