"""A Python process of tests/scripts/python_futures.sh: the futures of the one-sided API
(waitio.futures) between two processes. Usage: pb_futures.py MODE
  all    every case below, checked on both sides; prints "pb_futures ok: rank R of 2, ..."
         chain     1,000 then() callbacks carrying a value, every 100th through an RPC to the
                   peer (the handler adds 1), on a stack that stays shallow
         when_all  put/get/atomic/RPC futures combined; sha256 of every byte that crossed
         nbi       put_nbi/get_nbi completed by quiet, every byte compared
         atomics   fetch-add futures from both processes: exact totals, and the old values of
                   both processes (exchanged) chain without a gap; cswap/swap futures
         strided   put_strided/get_strided of NumPy slices, element by element
         collectives  bcast/reduce/barrier futures; objects  distributed objects
         errors    bounds (raised at the call), an RPC without a handler failing its future,
                   then() and when_all() carrying that error, a failing callback, a promise
                   completed by another thread, a timeout
  kill   rank 1 dies (SIGKILL, inside the handler of rank 0's first call) while rank 0 has RPC
         futures, a then() chain and a when_all() pending on it: every one must raise
         waitio.Error (peer lost) within the deadline
"""
import concurrent.futures
import hashlib
import os
import random
import signal
import struct
import sys
import threading
import time

import numpy as np

import waitio

MB = 1 << 20
PUT_OFF, PUB_OFF, NBI_OFF, AMO_OFF, STR_OFF = 0, 2 * 65536, 4 * 65536, 6 * 65536, 7 * 65536
SZ = 60000  # bytes of each patterned transfer


def say(line):
    """One write(2) per line: the two processes share the launcher's output, and a print's text
    and newline may reach it in two pieces, with the other process's line between them."""
    sys.stdout.flush()
    os.write(1, (line + "\n").encode())


def pattern(rank, salt, n=SZ):
    return random.Random(rank * 1000 + salt).randbytes(n)


def depth():
    f, d = sys._getframe(1), 0
    while f is not None:
        f, d = f.f_back, d + 1
    return d


def case_chain(world, me, peer):
    deepest = [0]

    def step(k):
        def fn(v):
            deepest[0] = max(deepest[0], depth())
            if k % 100 == 0:  # through the peer: its handler 13 returns v + 1
                return world.rpc_async(peer, 13, struct.pack("<q", v)).then(lambda r: struct.unpack("<q", r)[0])
            return v + 1
        return fn

    start = me * 1_000_000 + 7
    root = world.rpc_async(peer, 13, struct.pack("<q", start - 1)).then(lambda r: struct.unpack("<q", r)[0])
    f = root
    for k in range(1, 1001):
        f = f.then(step(k))
    got = f.result(timeout=20)
    assert got == start + 1000, (got, start)
    assert deepest[0] < 150, f"the chain deepened the stack to {deepest[0]} frames"
    # a chain on a future already complete runs at once, in this thread
    g = waitio.make_future(5)
    for _ in range(1000):
        g = g.then(lambda v: v + 1)
    assert g.done() and g.result() == 1005
    return f"chain 1000 ({deepest[0]} frames)"


def case_when_all(world, win, me, peer):
    mine = pattern(me, 1)
    win.memory()[PUB_OFF:PUB_OFF + SZ] = pattern(me, 2)  # published for the peer's get
    world.Barrier()
    args = pattern(me, 3, 5000)
    fput = win.put_async(mine, peer, PUT_OFF)
    fget = win.get_async(SZ, peer, PUB_OFF)
    frpc = world.rpc_async(peer, 11, args)
    famo = win.fetch_add_async(peer, AMO_OFF + 8, 5)
    digest = fget.then(lambda b: hashlib.sha256(b).hexdigest())
    put_done, got, reply, old, dig = waitio.when_all(fput, fget, frpc, famo, digest).result(timeout=20)
    assert put_done is None
    assert hashlib.sha256(got).digest() == hashlib.sha256(pattern(peer, 2)).digest(), "get differs"
    assert dig == hashlib.sha256(pattern(peer, 2)).hexdigest()
    assert reply == hashlib.sha256(args).digest() + bytes([peer]), reply[:8]
    assert old in (0, 5), old
    waitio.quiet()
    world.Barrier()
    assert hashlib.sha256(win.memory()[PUT_OFF:PUT_OFF + SZ]).digest() == hashlib.sha256(pattern(peer, 1)).digest()
    assert win.numpy(np.int64)[(AMO_OFF + 8) // 8] == 5
    return "when_all put/get/rpc/amo"


def case_nbi(world, win, me, peer):
    data = bytearray(pattern(me, 4))
    got = np.zeros(SZ, dtype=np.uint8)
    win.memory()[PUB_OFF:PUB_OFF + SZ] = pattern(me, 5)
    world.Barrier()
    chunk = 4096
    for off in range(0, SZ, chunk):
        win.put_nbi(memoryview(data)[off:off + chunk], peer, NBI_OFF + off)
    win.get_nbi(got, peer, PUB_OFF)
    try:
        data.append(0)  # exported until quiet: it cannot move
        raise AssertionError("a put_nbi buffer was resized before quiet")
    except BufferError:
        pass
    waitio.quiet()
    data.append(0)  # released by quiet
    assert got.tobytes() == pattern(peer, 5), "get_nbi differs"
    world.Barrier()
    assert bytes(win.memory()[NBI_OFF:NBI_OFF + SZ]) == pattern(peer, 4), "put_nbi differs"
    return "nbi+quiet"


def case_atomics(world, win, me, peer):
    k, inc = 200, me + 1
    futs = [win.fetch_add_async(t, AMO_OFF, inc) for _ in range(k) for t in (0, 1)]
    olds = waitio.when_all(*futs).result(timeout=20)
    pairs = {0: [], 1: []}
    for i, old in enumerate(olds):
        pairs[i % 2].append((old, inc))
    everyone = world.allgather(pairs)
    waitio.quiet()
    world.Barrier()
    total = k * (1 + 2)
    assert win.numpy(np.int64)[AMO_OFF // 8] == total, win.numpy(np.int64)[AMO_OFF // 8]
    for t in (0, 1):  # old values of both processes on target t: 0, then each old + its inc
        seq = sorted(p for e in everyone for p in e[t])
        nxt = 0
        for old, i in seq:
            assert old == nxt, (t, old, nxt)
            nxt = old + i
        assert nxt == total
    # compare-swap: exactly one process wins word AMO_OFF+16 of rank 0; swap of a float64
    won = win.atomic_async(waitio.AMO_CSWAP, 0, AMO_OFF + 16, me + 1, 0).result(timeout=10)
    fl = win.atomic_async(waitio.AMO_SWAP, peer, AMO_OFF + 24, 1.5 + me, dtype="float64").result(timeout=10)
    assert fl == 0.0, fl
    results = world.allgather(won)
    assert sorted(results)[0] == 0 and sorted(results)[1] in (1, 2), results
    # min / max (int64, float64) and floating-point add, on rank 0's words, from both processes
    fs = [win.atomic_async(waitio.AMO_MAX, 0, AMO_OFF + 32, 40 + me),
          win.atomic_async(waitio.AMO_MIN, 0, AMO_OFF + 40, -3 - me),
          win.atomic_async(waitio.AMO_MAX, 0, AMO_OFF + 48, 2.25 * (me + 1), dtype="float64")]
    fs += [win.atomic_async(waitio.AMO_ADD, 0, AMO_OFF + 56, 0.5 * (me + 1), dtype="float64") for _ in range(50)]
    fs += [win.atomic_async(waitio.AMO_ADD, 0, AMO_OFF + 64, 0.25, dtype="float32") for _ in range(20)]
    waitio.when_all(*fs).result(timeout=20)
    waitio.quiet()
    world.Barrier()
    if me == 0:
        w64, f64 = win.numpy(np.int64), win.numpy(np.float64)
        assert w64[(AMO_OFF + 32) // 8] == 41 and w64[(AMO_OFF + 40) // 8] == -4, w64[(AMO_OFF + 32) // 8:][:2]
        assert f64[(AMO_OFF + 48) // 8] == 4.5, f64[(AMO_OFF + 48) // 8]
        assert f64[(AMO_OFF + 56) // 8] == 50 * 1.5, f64[(AMO_OFF + 56) // 8]
        assert win.numpy(np.float32)[(AMO_OFF + 64) // 4] == 40 * 0.25, win.numpy(np.float32)[(AMO_OFF + 64) // 4]
    assert win.numpy(np.float64)[(AMO_OFF + 24) // 8] == 1.5 + peer
    return f"atomics {total} exact, min/max/fp-add"


def case_strided(world, win, me, peer):
    src = np.arange(100, dtype=np.int64) * 3 + me * 1000
    win.put_strided(src[::2], peer, STR_OFF, 24)  # 50 elements, every 3rd word at the target
    waitio.quiet()
    world.Barrier()
    words = win.numpy(np.int64)[STR_OFF // 8:STR_OFF // 8 + 150]
    assert np.array_equal(words[::3], np.arange(0, 100, 2) * 3 + peer * 1000), words[:9]
    dst = np.full(90, -1, dtype=np.int64)
    win.get_strided(dst[::3], peer, STR_OFF, 16)  # 30 elements, every 2nd word there
    assert np.array_equal(dst[::3], words_at(peer, me)[::2][:30]), dst[:9]
    assert (dst.reshape(30, 3)[:, 1:] == -1).all(), "get_strided wrote between the elements"
    world.Barrier()
    return "strided"


def words_at(owner, reader):
    """The 150 words of STR_OFF on `owner` after case_strided's put from `reader`'s peer
    (`owner`'s peer wrote every 3rd; the rest are still 0)."""
    w = np.zeros(150, dtype=np.int64)
    w[::3] = np.arange(0, 100, 2) * 3 + reader * 1000
    return w


def case_collectives(world, me, peer):
    data = bytearray(pattern(0, 6) if me == 0 else SZ)
    fb = world.bcast_async(data, root=0)
    src = np.arange(1000, dtype=np.int64) * (me + 1)
    dst = np.zeros(1000, dtype=np.int64)
    fr = world.reduce_async(src, dst if me == 1 else None, waitio.SUM, root=1)
    fmax = world.reduce_async(np.full(10, me + 0.5), np.zeros(10) if me == 0 else None, waitio.MAX, root=0)
    fbar = world.barrier_async()
    got, red, mx, _ = waitio.when_all(fb, fr, fmax, fbar).result(timeout=20)
    assert hashlib.sha256(got).digest() == hashlib.sha256(pattern(0, 6)).digest(), "bcast differs"
    if me == 1:
        assert np.array_equal(red, np.arange(1000) * 3), red[:4]
    else:
        assert red is None and np.array_equal(mx, np.full(10, 1.5)), mx
    return "bcast/reduce/barrier futures"


def case_objects(world, me, peer):
    mine = bytearray(pattern(me, 7, 4096))
    world.register_object("blob", mine)
    world.Barrier()
    obj = world.lookup_object(peer, "blob").result(timeout=10)
    assert obj.size == 4096 and obj.rank == peer, obj
    got = obj.get_async(4096).result(timeout=10)
    assert bytes(got) == pattern(peer, 7, 4096), "object read differs"
    obj.put_async(b"W" * 100 + bytes([me]), 1000).result(timeout=10)
    missing = world.lookup_object(peer, "no-such-object").exception(timeout=10)
    assert isinstance(missing, waitio.Error), missing
    world.Barrier()
    assert mine[1000:1101] == b"W" * 100 + bytes([peer]), mine[1000:1101]
    world.unregister_object("blob")
    world.Barrier()
    return "objects"


def case_errors(world, win, me, peer):
    try:
        win.get_async(16, peer, win.size - 8)
        raise AssertionError("a get past the window's end started")
    except waitio.Error as e:
        assert e.code == 18, e  # WAITIO_ERR_BOUNDS
    bad = world.rpc_async(peer, 999, b"x")
    chained = bad.then(lambda r: r + b"never")
    both = waitio.when_all(win.get_async(8, peer, 0), chained)
    for f in (bad, chained, both):
        exc = f.exception(timeout=10)
        assert isinstance(exc, waitio.Error) and exc.code == 19, (f, exc)  # WAITIO_ERR_RPC
        try:
            f.result()
            raise AssertionError("result() of a failed future returned")
        except waitio.Error:
            pass
    p = waitio.Future()  # a promise, completed by another thread
    q = p.then(lambda v: v * 2)
    threading.Timer(0.05, p.set_result, args=(21,)).start()
    assert q.result(timeout=10) == 42
    try:
        p.set_result(1)
        raise AssertionError("a complete promise was set again")
    except concurrent.futures.InvalidStateError:
        pass
    try:
        waitio.Future().result(timeout=0.05)
        raise AssertionError("result() of a pending promise returned")
    except concurrent.futures.TimeoutError:
        pass
    ok = waitio.make_future(1).then(lambda v: v / 0)
    assert isinstance(ok.exception(), ZeroDivisionError)
    seen = []
    f = win.get_async(8, peer, 0)
    f.add_done_callback(lambda _: 1 / 0)  # logged, ignored
    f.add_done_callback(lambda g: seen.append(g.result()))
    f.result(timeout=10)
    assert len(seen) == 1, seen
    world.Barrier()
    return "errors"


def run_all():
    with waitio.session(timeout=30):
        world = waitio.rma_world()
        me, n = world.rank, world.size
        assert n == 2, n
        peer = 1 - me
        waitio.rpc_register(11, lambda origin, a: hashlib.sha256(a).digest() + bytes([me]))
        waitio.rpc_register(13, lambda origin, a: struct.pack("<q", struct.unpack("<q", a)[0] + 1))
        win = waitio.Window.allocate(world, MB)
        t0 = time.monotonic()
        cases = {"chain": lambda: case_chain(world, me, peer), "when_all": lambda: case_when_all(world, win, me, peer),
                 "nbi": lambda: case_nbi(world, win, me, peer), "atomics": lambda: case_atomics(world, win, me, peer),
                 "strided": lambda: case_strided(world, win, me, peer),
                 "collectives": lambda: case_collectives(world, me, peer),
                 "objects": lambda: case_objects(world, me, peer), "errors": lambda: case_errors(world, win, me, peer)}
        only = sys.argv[2].split(",") if len(sys.argv) > 2 else list(cases)  # a subset, to debug
        done = [cases[c]() for c in only]
        world.Barrier()
        say(f"pb_futures ok: rank {me} of {n}, {'; '.join(done)} in {time.monotonic() - t0:.2f} s")
        win.Free()


def run_kill():
    waitio.init(30)
    world = waitio.rma_world()
    me = world.rank
    peer = 1 - me
    win = waitio.Window.allocate(world, 65536)
    if me == 1:  # the first call kills it inside its handler: no call is ever answered
        def die(origin, a):
            say("victim: dying")
            os.kill(os.getpid(), signal.SIGKILL)
        waitio.rpc_register(21, die)
        world.Barrier()
        t0 = time.monotonic()
        while time.monotonic() - t0 < 20:
            waitio.progress()
            time.sleep(0.005)
        sys.exit("victim: no call came")
    world.Barrier()
    rpcs = [world.rpc_async(peer, 21, bytes([i]) * 100) for i in range(3)]
    chain = rpcs[0]
    for _ in range(10):
        chain = chain.then(lambda r: r)
    both = waitio.when_all(*rpcs, win.get_async(8, me, 0))
    t0 = time.monotonic()
    for f in rpcs + [chain, both]:
        exc = f.exception(timeout=20)
        assert isinstance(exc, waitio.Error) and exc.code in (9, 10), (f, exc)
    took = time.monotonic() - t0
    say(f"survivor: {len(rpcs) + 2} futures failed after {took:.2f} s: {exc} (code {exc.code})")
    os._exit(0)  # the peer is gone: no collective finalize


if __name__ == "__main__":
    {"all": run_all, "kill": run_kill}[sys.argv[1]]()
