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
Put/Iput/put_async from and Get/Iget/get_async into device arrays on a host window;
device windows (Window.allocate(device=True) and Window.create over a device array): no host
view, their parts read through their __cuda_array_interface__, Put/Get from and into device
(CAI, DLPack) and host buffers, fetch_add on a device word.
``nodriver``: WAITIO_CUDA_LIBRARY names no library: a device array raises waitio.Error with
WAITIO_ERR_DEVICE (20) in Send, Recv, Allreduce and a device window's allocation, and host
buffers still move.
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


def own_part(drv, win) -> bytes:
    """This process's part of a device window, read through the driver at the address its
    __cuda_array_interface__ gives."""
    cai = win.__cuda_array_interface__
    if cai["shape"] != (win.size,) or cai["typestr"] != "|u1" or cai["version"] != 3:
        raise SystemExit(f"FAIL a device window's __cuda_array_interface__: {cai}")
    return drv.download(cai["data"][0], win.size)


def device_windows(drv) -> int:
    """Device windows: allocated (device=True) and created over a device array; Put/Get from and
    into device arrays (CAI, DLPack) and NumPy arrays; a fetch_add on a device word. Returns
    the bytes checked."""
    rw = waitio.rma_world()
    me, peer, n, size = rw.rank, 1 - rw.rank, 100003, 1 << 20
    word = (3 * n + 7) // 8 * 8
    checked = 0
    base = DeviceArray(drv, [size])
    base.write(bytes(size))
    for how in ("allocate", "create"):
        win = waitio.Window.allocate(rw, size, device=True) if how == "allocate" else waitio.Window.create(rw, base)
        if not win.device or win.size != size or "device memory" not in repr(win):
            raise SystemExit(f"FAIL Window.{how} made no device window: {win!r}")
        raises(BufferError, win.memory, f"a host view of a {how}d device window")
        raises(BufferError, lambda: np.frombuffer(win._w, np.uint8), f"np.frombuffer over a {how}d device window")
        expect(own_part(drv, win), bytes(size), f"a new {how}d device window's part")
        seed = 600 + 10 * me + (how == "create")
        dsrc = DeviceArray(drv, [n]).write(pattern(n, seed))
        dl = DLPackArray(DeviceArray(drv, [n]).write(pattern(n, seed + 1)))
        hsrc = np.frombuffer(pattern(n, seed + 2), dtype=np.uint8)
        rw.Barrier()
        win.Put(dsrc, peer, 0)           # device -> device
        win.Put(dl, peer, n)             # DLPack -> device
        win.Iput(hsrc, peer, 2 * n).wait()  # host -> device
        old = [win.fetch_add(peer, word, 1) for _ in range(3)]  # an int64 past the data
        win.Flush(peer)
        rw.Barrier()
        want = b"".join(pattern(n, 600 + 10 * peer + (how == "create") + k) for k in range(3))
        part = own_part(drv, win)
        expect(part[:3 * n], want, f"Put device/DLPack/host into a {how}d device window")
        got_dev, got_host = DeviceArray(drv, [3 * n]), np.zeros(3 * n, dtype=np.uint8)
        win.Get(got_dev, peer, 0)                     # device -> device
        win.get_async(got_host, peer, 0).result()     # device -> host
        mine = b"".join(pattern(n, seed + k) for k in range(3))
        expect(got_dev.read(), mine, f"Get from a {how}d device window into a device array")
        expect(got_host.tobytes(), mine, f"Get from a {how}d device window into a NumPy array")
        if old != [0, 1, 2]:
            raise SystemExit(f"FAIL fetch_add on a {how}d device window: old values {old}")
        checked += 6 * n
        rw.Barrier()
        value = int.from_bytes(own_part(drv, win)[word:word + 8], "little")
        if value != 3:
            raise SystemExit(f"FAIL the device word after 3 fetch_adds of the peer holds {value}")
        for a in (dsrc, dl.base, got_dev):
            a.free()
        win.Free()
    base.free()
    return checked


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
    raises(waitio.Error, lambda: waitio.Window.allocate(waitio.rma_world(), 4096, device=True),
           "a device window without a driver", ERR_DEVICE)
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
        win_checked = device_windows(drv)
        world.Barrier()
        say(f"pb_gpu ok: rank {me} of {size}: two-sided {moved} bytes received and checked "
            f"(dev/host, 0 B..4 MiB); Isend/Irecv; DLPack v1+legacy ({deleted} deleter calls), CPU DLPack; "
            f"Allreduce/Reduce/Bcast/Allgather on device; errors; one-sided; "
            f"device windows {win_checked} bytes checked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
