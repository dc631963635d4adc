"""Two Python PBs for the binding's own tests. Usage: pb_pair.py MODE
  objects   pickled objects, every upper-case collective, errors for bad buffers
  stream    PB 0 streams 4 MiB arrays to PB 1 until PB 1 dies; PB 0 must get waitio.Error
"""
import os
import sys
import time

import numpy as np

import waitio


def objects(world):
    me, other = world.rank, 1 - world.rank
    if me == 0:
        world.send({"step": 3, "field": [1.5, 2.5], "name": "sim"}, dest=1, tag=5)
        got = world.recv(source=1, tag=6)
        assert got == ("ack", 3), got
    else:
        got = world.recv(source=0, tag=5)
        assert got == {"step": 3, "field": [1.5, 2.5], "name": "sim"}, got
        world.send(("ack", got["step"]), dest=0, tag=6)
    assert world.bcast({"root": me} if me == 1 else None, root=1) == {"root": 1}
    assert world.allgather(me * 10) == [0, 10]
    assert world.allreduce(me + 1) == 3
    assert world.gather(str(me), root=0) == (["0", "1"] if me == 0 else None)
    assert world.scatter(["a", "b"] if me == 0 else None, root=0) == "ab"[me]
    # buffers of several dtypes, zero-copy
    for dt in (np.int8, np.uint16, np.int32, np.int64, np.float32, np.float64, np.complex128):
        x = (np.arange(10) + me).astype(dt)
        y = np.empty_like(x)
        world.Allreduce(x, y, waitio.SUM)
        assert np.array_equal(y, (2 * np.arange(10) + 1).astype(dt)), (dt, y)
    g = np.empty(8, dtype=np.float64)
    world.Allgather(np.full(4, float(me)), g)
    assert np.array_equal(g, [0, 0, 0, 0, 1, 1, 1, 1])
    s = np.empty(3, dtype=np.int32)
    world.Scatter(np.arange(6, dtype=np.int32) if me == 0 else None, s, root=0)
    assert np.array_equal(s, np.arange(3) + 3 * me)
    ba = bytearray(b"hello" if me == 0 else b"xxxxx")
    world.Bcast(ba, root=0)
    assert ba == b"hello"
    mv = memoryview(bytearray(16))
    if me == 0:
        world.Send(memoryview(bytearray(range(16))), 1, tag=9)
    else:
        src, tag, nbytes = world.Recv(mv, 0, 9)
        assert (src, tag, nbytes) == (0, 9, 16) and bytes(mv) == bytes(range(16))
    # bad buffers are refused with a clear error, nothing is sent
    a = np.zeros((4, 4))
    try:
        world.Isend(a[:, 1], other, 1)
        raise SystemExit("non-contiguous buffer accepted")
    except (ValueError, BufferError) as e:  # the exporter's type, as mpi4py raises it
        assert "contiguous" in str(e), e
    try:
        world.Allreduce(np.zeros(3), np.zeros(4), waitio.SUM)
        raise SystemExit("mismatched buffers accepted")
    except ValueError as e:
        assert "differ" in str(e), e
    try:
        world.Irecv(b"read-only", 0, 1)
        raise SystemExit("read-only receive buffer accepted")
    except (ValueError, BufferError) as e:
        assert "writable" in str(e), e
    # a too-short receive buffer: truncation is an error, never an overflow
    if me == 0:
        world.Send(np.arange(100, dtype=np.float64), 1, tag=11)
    else:
        small = np.zeros(10)
        try:
            world.Recv(small, 0, 11)
            raise SystemExit("truncation not reported")
        except waitio.Error as e:
            assert e.code == 11, e  # WAITIO_ERR_TRUNCATE
    world.Barrier()
    print(f"objects ok on rank {me}")


def stream(world):
    me = world.rank
    big = np.ones(4 << 20 >> 3)
    if me == 1:
        world.Recv(np.empty(1), 0, 1)            # handshake, then stream forever
        print("receiver streaming", flush=True)
        while True:
            world.Recv(big, 0, 2)
    world.Send(np.zeros(1), 1, 1)
    t0 = time.monotonic()
    sent = 0
    try:
        while time.monotonic() - t0 < 60:
            world.Send(big, 1, 2)
            sent += 1
    except waitio.Error as e:
        print(f"sender: peer lost after {sent} messages: {e} (code {e.code})", flush=True)
        sys.exit(0 if e.code in (9, 10) else 3)
    sys.exit("sender: the dead peer was never noticed")


if __name__ == "__main__":
    waitio.init(30)
    comm = waitio.universe()
    {"objects": objects, "stream": stream}[sys.argv[1]](comm)
    if sys.argv[1] == "objects":
        waitio.finalize()
    else:
        os._exit(0)
