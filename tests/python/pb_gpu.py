"""pb_gpu.py — device arrays as buffers of the Python binding (docs/python.md, "GPU arrays"),
run by tests/scripts/python_gpu.sh as two PBs of one process each, with the CUDA driver that
WAITIO_CUDA_LIBRARY names (the fake driver in CI: its device memory crashes any CPU access, so
a host copy anywhere in the path fails the test).

``all``: rank 0 and rank 1 exchange, both ways, every byte checked (contents read back through
the driver): __cuda_array_interface__ device -> device, device -> host (NumPy), host -> device
at 0 B .. 4 MiB + 1; Isend/Irecv posted before the peer sends; DLPack (versioned and legacy
capsules, a byte offset) sends and receives, each capsule's deleter called exactly once; a CPU
DLPack array received into in place; Allreduce, Reduce, Bcast and Allgather on device arrays;
the errors (non-contiguous, read-only, stream 0, a non-buffer, a host-only operation);
Put/Iput/put_async from and Get/Iget/get_async into device arrays on a host window.
``nodriver``: WAITIO_CUDA_LIBRARY names no library: a device array raises waitio.Error with
WAITIO_ERR_DEVICE (20) in Send, Recv and Allreduce, and host buffers still move.
"""
import hashlib
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_arrays import CpuDLPack, DeviceArray, DLPackArray, Driver  # noqa: E402

import waitio  # noqa: E402

SIZES = [0, 1, 8, 4095, 65536 + 7, (1 << 20) + 3, (4 << 20) + 1]
ERR_DEVICE = 20


def say(line: str) -> None:
    """One line in one write(2): the two PBs share the launcher's output, and a line written in
    pieces could interleave with the other's."""
    sys.stdout.flush()
    os.write(1, (line + "\n").encode())


def pattern(n: int, seed: int) -> bytes:
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8).tobytes()


def expect(got: bytes, want: bytes, what: str) -> None:
    if got != want:
        bad = next((i for i in range(min(len(got), len(want))) if got[i] != want[i]), min(len(got), len(want)))
        raise SystemExit(f"FAIL {what}: {len(got)} bytes, first difference at byte {bad} "
                         f"(sha256 {hashlib.sha256(got).hexdigest()[:12]} != {hashlib.sha256(want).hexdigest()[:12]})")


def raises(exc: type, fn, what: str, code: int = 0) -> None:
    try:
        fn()
    except exc as e:
        if code and getattr(e, "code", None) != code:
            raise SystemExit(f"FAIL {what}: {e!r} has code {getattr(e, 'code', None)}, expected {code}")
        return
    except Exception as e:  # noqa: BLE001
        raise SystemExit(f"FAIL {what}: raised {e!r}, expected {exc.__name__}")
    raise SystemExit(f"FAIL {what}: no {exc.__name__}")


def two_sided(world, drv, me: int, peer: int) -> int:
    """Every size, device<->device, device->host, host->device, both directions."""
    moved = 0
    kinds = [("dev", "dev"), ("dev", "host"), ("host", "dev")]
    for k, (skind, rkind) in enumerate(kinds):
        for i, n in enumerate(SIZES):
            for sender in (0, 1):
                seed = 1000 * k + 10 * i + sender
                tag = 100 + seed
                data = pattern(n, seed)
                if me == sender:
                    if skind == "dev":
                        buf = DeviceArray(drv, [n]).write(data)
                        world.Send(buf, peer, tag)
                        buf.free()
                    else:
                        world.Send(np.frombuffer(data, dtype=np.uint8), peer, tag)
                else:
                    if rkind == "dev":
                        buf = DeviceArray(drv, [n])
                        src, tg, nbytes = world.Recv(buf, peer, tag)
                        got = buf.read()
                        buf.free()
                    else:
                        host = np.zeros(n, dtype=np.uint8)
                        src, tg, nbytes = world.Recv(host, peer, tag)
                        got = host.tobytes()
                    if (src, tg, nbytes) != (peer, tag, n):
                        raise SystemExit(f"FAIL status {(src, tg, nbytes)} != {(peer, tag, n)}")
                    expect(got, data, f"{skind}->{rkind} {n} B from rank {sender}")
                    moved += n
    return moved


def nonblocking(world, drv, me: int, peer: int) -> None:
    """Irecv into device memory posted before the peer's Isend; both ways at once."""
    n = 300000
    out = DeviceArray(drv, [n // 8], "<f8").write(pattern(n, 7 + me))
    inp = DeviceArray(drv, [n // 8], "<f8")
    r = world.Irecv(inp, peer, 77)
    world.Barrier()
    s = world.Isend(out, peer, 77)
    waitio.waitall([r, s])
    expect(inp.read(), pattern(n, 7 + peer), "Isend/Irecv device arrays")
    out.free()
    inp.free()


def dlpack(world, drv, me: int, peer: int) -> int:
    """DLPack exports (versioned and legacy, byte offset) as send and receive buffers."""
    n, off, exports = 200003, 4096, []
    for legacy in (False, True):
        tag = 200 + legacy
        base = DeviceArray(drv, [n + off])
        arr = DLPackArray(base, offset=off, legacy=legacy)
        exports.append(arr)
        if me == 0:
            base.write(bytes(off) + pattern(n, tag))
            world.Send(arr, peer, tag)
            world.Recv(arr, peer, tag)   # the peer sends it back
            expect(arr.read(), pattern(n, tag + 50), f"DLPack {'legacy' if legacy else 'v1'} echo")
        else:
            world.Recv(arr, peer, tag)
            expect(arr.read(), pattern(n, tag), f"DLPack {'legacy' if legacy else 'v1'} receive")
            base.write(bytes(off) + pattern(n, tag + 50))
            world.Send(arr, peer, tag)
        base.free()
    for arr in exports:
        if arr.exports != 2 or arr.deleted != 2:
            raise SystemExit(f"FAIL DLPack: {arr.exports} exports, {arr.deleted} deleter calls (expected 2, 2)")
        if any(s != 1 for s in arr.streams):
            raise SystemExit(f"FAIL DLPack: the consumer asked for streams {arr.streams}, expected 1 (legacy default)")
    # a CPU array through DLPack only: received into in place
    host = np.zeros(1000, dtype=np.int32)
    if me == 0:
        world.Send(np.arange(1000, dtype=np.int32) * 3, peer, 210)
    else:
        world.Recv(CpuDLPack(host), peer, 210)
        if not np.array_equal(host, np.arange(1000, dtype=np.int32) * 3):
            raise SystemExit("FAIL CPU DLPack receive")
    return sum(a.deleted for a in exports)


def collectives(world, drv, me: int, size: int) -> None:
    n = 100000
    vals = np.arange(n, dtype=np.float64) * (me + 1)
    send = DeviceArray(drv, [n], "<f8").write(vals.tobytes())
    recv = DeviceArray(drv, [n], "<f8")
    world.Allreduce(send, recv, waitio.SUM)
    want = np.arange(n, dtype=np.float64) * (size * (size + 1) / 2)
    expect(recv.read(), want.tobytes(), "Allreduce SUM on device arrays")
    root_recv = DeviceArray(drv, [n], "<f8") if me == 1 else None
    world.Reduce(send, root_recv, waitio.MAX, 1)
    if root_recv is not None:
        expect(root_recv.read(), (np.arange(n, dtype=np.float64) * size).tobytes(), "Reduce MAX to root 1")
        root_recv.free()
    b = DeviceArray(drv, [n * 8 + 5])
    if me == 0:
        b.write(pattern(n * 8 + 5, 31))
    world.Bcast(b, 0)
    expect(b.read(), pattern(n * 8 + 5, 31), "Bcast into a device array")
    blk = 70001
    mine = DeviceArray(drv, [blk]).write(pattern(blk, 40 + me))
    allb = DeviceArray(drv, [blk * size])
    world.Allgather(mine, allb)
    expect(allb.read(), b"".join(pattern(blk, 40 + r) for r in range(size)), "Allgather device arrays")
    for a in (send, recv, b, mine, allb):
        a.free()


def one_sided(drv) -> None:
    """Put/Iput/put_async from device arrays into the peer's (host) window part, Get/Iget/get_async
    back into device arrays."""
    rw = waitio.rma_world()
    me, peer, n = rw.rank, 1 - rw.rank, 300001
    offsets = (0, 400000, 700002)
    win = waitio.Window.allocate(rw, 1 << 20)
    part = win.numpy(np.uint8)
    src = DeviceArray(drv, [n]).write(pattern(n, 500 + me))
    rw.Barrier()
    win.Put(src, peer, offsets[0])
    win.Iput(src, peer, offsets[1]).wait()
    win.put_async(src, peer, offsets[2]).result()
    win.Flush(peer)
    rw.Barrier()
    for off in offsets:
        expect(part[off:off + n].tobytes(), pattern(n, 500 + peer), f"Put/Iput/put_async from a device array at {off}")
    dst = [DeviceArray(drv, [n]) for _ in offsets]
    win.Get(dst[0], peer, offsets[0])
    win.Iget(dst[1], peer, offsets[1]).wait()
    win.get_async(dst[2], peer, offsets[2]).result()
    for d, off in zip(dst, offsets):
        expect(d.read(), pattern(n, 500 + me), f"Get/Iget/get_async into a device array from {off}")
        d.free()
    src.free()
    rw.Barrier()
    del part
    win.Free()


def errors(world, drv) -> None:
    a = DeviceArray(drv, [4, 4], "<f4", strides=(4, 16))  # column-major: not C-contiguous
    raises(ValueError, lambda: world.Isend(a, 0, 1), "a non-contiguous device array")
    ro = DeviceArray(drv, [16], readonly=True)
    raises(BufferError, lambda: world.Irecv(ro, 0, 1), "receiving into a read-only device array")
    ro_dl = DLPackArray(DeviceArray(drv, [16]), readonly=True)
    raises(BufferError, lambda: world.Irecv(ro_dl, 0, 1), "receiving into a read-only DLPack array")
    if ro_dl.deleted != ro_dl.exports:
        raise SystemExit("FAIL a refused DLPack export was not deleted")
    s0 = DeviceArray(drv, [16], stream=0)
    raises(ValueError, lambda: world.Isend(s0, 0, 1), "__cuda_array_interface__ stream 0")
    raises(TypeError, lambda: world.Send(object(), 0, 1), "a non-buffer")
    raises(TypeError, lambda: world.rpc_ff(0, 1, DeviceArray(drv, [8])), "a device array to a host-only call")
    for x in (a, ro, s0):
        x.free()


def nodriver(world, me: int, peer: int) -> None:
    fake = {"version": 3, "shape": (64,), "typestr": "|u1", "data": (0x7f0000000000, False), "strides": None}
    dev = type("Dev", (), {"__cuda_array_interface__": fake})()
    raises(waitio.Error, lambda: world.Send(dev, peer, 1), "Send of a device array without a driver", ERR_DEVICE)
    raises(waitio.Error, lambda: world.Recv(dev, peer, 1), "Recv into a device array without a driver", ERR_DEVICE)
    raises(waitio.Error, lambda: world.Allreduce(dev, dev, waitio.SUM), "Allreduce without a driver", ERR_DEVICE)
    host = np.full(64, me, dtype=np.uint8)
    got = np.zeros(64, dtype=np.uint8)
    r = world.Irecv(got, peer, 2)
    world.Send(host, peer, 2)
    r.wait()
    if not (got == peer).all():
        raise SystemExit("FAIL host buffers after the device errors")


def main() -> int:
    mode = sys.argv[1]
    with waitio.session(timeout=60):
        world = waitio.universe()
        me, size = world.rank, world.size
        peer = 1 - me
        if mode == "nodriver":
            nodriver(world, me, peer)
            say(f"pb_gpu nodriver ok: rank {me}: device arrays raise WAITIO_ERR_DEVICE, host buffers move")
            return 0
        drv = Driver()
        moved = two_sided(world, drv, me, peer)
        nonblocking(world, drv, me, peer)
        deleted = dlpack(world, drv, me, peer)
        errors(world, drv)
        collectives(world, drv, me, size)
        one_sided(drv)
        world.Barrier()
        say(f"pb_gpu ok: rank {me} of {size}: two-sided {moved} bytes received and checked "
            f"(dev/host, 0 B..4 MiB); Isend/Irecv; DLPack v1+legacy ({deleted} deleter calls), CPU DLPack; "
            f"Allreduce/Reduce/Bcast/Allgather on device; errors; one-sided")
    return 0


if __name__ == "__main__":
    sys.exit(main())
