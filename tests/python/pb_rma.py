"""A Python PB of the one-sided test (test_binding.py: two of these and the C peer
tests/progs/rma_pypeer.c, which does the same steps in C): windows over NumPy memory, Put/Get
into NumPy arrays, atomics with exact totals, put_signal + wait_until, remote procedure calls
between Python and C handlers (replies checked), fire-and-forget calls counted."""
import sys

import numpy as np

import waitio

calls = 0


def reverse(origin: int, args: bytes) -> bytes:
    return args[::-1] + b"P"


def count(origin: int, args: bytes) -> None:
    global calls
    calls += 1


def main() -> None:
    with waitio.session(timeout=30):
        world = waitio.rma_world()
        me, n = world.rank, world.size
        waitio.rpc_register(5, reverse)
        waitio.rpc_register(7, count)
        win = waitio.Window.allocate(world, 4096)
        a = win.numpy(np.int64)
        a[:64] = me * 1000 + np.arange(64)
        world.Barrier()
        buf = np.zeros(64, dtype=np.int64)
        for t in range(n):
            win.Get(buf, t, 0)
            assert np.array_equal(buf, t * 1000 + np.arange(64)), (t, buf[:4])
        for _ in range(10):
            for t in range(n):
                old = win.fetch_add(t, 64 * 8, me + 1)
                assert 0 <= old < 10 * n * (n + 1) // 2, old
        waitio.quiet()
        world.Barrier()
        assert a[64] == 10 * n * (n + 1) // 2, a[64]
        to, frm = (me + 1) % n, (me + n - 1) % n
        win.put_signal(np.arange(8, dtype=np.int64) + me * 10, to, (100 + 8 * me) * 8, 65 * 8, 1, waitio.SIGNAL_ADD)
        win.wait_until(65 * 8, waitio.CMP_GE, 1)
        assert np.array_equal(a[100 + 8 * frm:108 + 8 * frm], np.arange(8) + frm * 10), a[100 + 8 * frm:108 + 8 * frm]
        kinds = ""
        for t in range(n):
            args = bytes([me, t]) * (50 + t)
            reply = world.rpc(t, 5, args)
            assert reply[:-1] == args[::-1], (t, reply[:8])
            kinds += reply[-1:].decode()
        assert kinds.count("C") == 1 and kinds.count("P") == n - 1, kinds
        for t in range(n):
            if t != me:
                world.rpc_ff(t, 7, b"x")
        old = win.atomic(waitio.AMO_SWAP, to, 66 * 8, 2.5, dtype="float64")
        assert old == 0.0, old
        waitio.quiet()
        world.Barrier()
        assert calls == n - 1, calls
        assert a[66:67].view(np.float64)[0] == 2.5
        mine = np.zeros(16 + me, dtype=np.int64)
        uw = waitio.Window.create(world, mine)
        assert uw.target_size(to) == (16 + to) * 8
        uw.Put(np.array([me + 100], dtype=np.int64), to, (15 + to) * 8)
        r = uw.Iget(buf[:2], to, 0)
        r.wait()
        uw.Flush(to)
        world.Barrier()
        assert mine[-1] == frm + 100, mine
        try:  # refused locally while a NumPy view of the part exists
            win.Free()
            raise AssertionError("Free() with a view alive")
        except BufferError:
            pass
        del a
        world.Barrier()
        uw.Free()
        win.Free()
        print(f"pb_rma ok: rank {me} of {n}, replies {kinds}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
