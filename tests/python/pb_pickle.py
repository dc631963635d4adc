"""The two PBs of tests/scripts/sec_python_pickle.sh (issue 25 item 2): a key holder sends a
Python PB object messages that would run a command if unpickled. Usage:
  pb_pickle.py victim FILE     PB 0: every object message call, attacked; prints one line per case
  pb_pickle.py attacker FILE   PB 1: the key holder; its pickles would `touch FILE`
  pb_pickle.py optin FILE      PB 0 with WAITIO_PYTHON_PICKLE=1 and waitio.allow_pickle(True)
  pb_pickle.py peer FILE       PB 1 of the opt-in run: sends a custom class's object
The attacker writes its messages with the binding's upper-case calls (an 8-byte length, then
the pickle, as the lower-case calls do), so it attacks an old binding as well as this one.
The victim goes on after a failed case (each case shows on its own), exits 1 if any failed."""
import hashlib
import os
import pickle
import struct
import sys

import numpy as np

import waitio

OBJ_TAG = (1 << 62) + 7  # the binding's tag of the pickled collectives' messages
FILE = sys.argv[2]
failures = []


class Evil:
    """Unpickling it runs a command (what the attack sends)."""

    def __reduce__(self):
        return (os.system, (f"touch {FILE}",))


class Point:
    """A benign custom class: refused by default, round trips with the opt-in."""

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __eq__(self, other):
        return type(other) is Point and (other.x, other.y) == (self.x, self.y)


def evil_pickle():
    return pickle.dumps(Evil(), protocol=pickle.HIGHEST_PROTOCOL)


def raw_send(world, data, dest, tag):
    """An object message as the binding frames it: the length, then the pickle."""
    world.Send(bytearray(struct.pack("<Q", len(data))), dest, tag)
    world.Send(bytearray(data), dest, tag)


def raw_bcast(world, data, root):
    world.Bcast(bytearray(struct.pack("<Q", len(data))), root)
    world.Bcast(bytearray(data), root)


def arrays():
    """NumPy arrays of many dtypes (structured, Fortran-ordered, non-contiguous, 0-d, empty,
    object, one of 40 MB: several chunks) and nested builtins."""
    rng = np.random.default_rng(25)
    out = {f"a_{dt}": (rng.standard_normal(257) * 1000).astype(dt)
           for dt in ("i1", "u2", "<i4", ">i8", "f2", "f4", "f8", "c8", "c16", "?", "g")}
    out["datetime"] = np.arange(5).astype("M8[s]")
    out["strings"] = np.array(["ab", "", "xyz\u00e9"])
    out["bytes"] = np.array([b"ab", b"\x00\x01"])
    rec = np.zeros(7, dtype=[("id", "<i4"), ("pos", "<f8", (3,)), ("name", "S5")])
    rec["id"] = np.arange(7)
    rec["pos"] = rng.standard_normal((7, 3))
    rec["name"] = [b"p%d" % i for i in range(7)]
    out["structured"] = rec
    aligned = np.zeros(3, dtype=np.dtype([("a", "u1"), ("b", "<f8")], align=True))  # padded
    aligned["a"], aligned["b"] = 1, 2.5
    out["aligned"] = aligned
    out["fortran"] = np.asfortranarray(rng.standard_normal((30, 40)))
    out["strided"] = np.arange(100.0).reshape(10, 10)[::2, 1::3]
    out["zero_d"] = np.array(3.25)
    out["empty"] = np.zeros((0, 5), dtype=np.int16)
    out["objects"] = np.array([1, "two", None, (3, 4.5)], dtype=object)
    out["big"] = rng.standard_normal(5 << 20)  # 40 MB
    out["scalars"] = [np.float32(1.5), np.int64(-7), np.datetime64("2025-01-02"), np.bool_(True)]
    out["dtypes"] = [np.dtype("<f4"), rec.dtype, np.float64]
    out["builtins"] = {"n": None, "t": (True, False), "i": -(1 << 100), "f": 2.5, "c": 1 - 2j,
                       "s": "text", "b": b"\x00\xff", "ba": bytearray(b"xy"), "l": [1, [2, [3]]],
                       "set": {1, 2, 3}, "fs": frozenset({"a"}), "sl": slice(1, 9, 2),
                       "r": range(3, 30, 3), 7: {"deep": [{"x": (1, 2)}]}, "e": Ellipsis}
    return out


def digest(obj):
    """A checksum of OBJ's contents that sees dtypes, shapes and every byte."""
    h = hashlib.sha256()

    def walk(x):
        if isinstance(x, np.ndarray):
            h.update(f"{x.dtype.str}{x.dtype.descr}{x.shape}".encode())
            if x.dtype.hasobject:
                h.update(repr(x.tolist()).encode())
            elif x.dtype.type is np.longdouble:  # 10 bytes of value, 6 of undefined padding
                h.update(" ".join(map(str, x.ravel())).encode())
            else:
                h.update(x.tobytes())
        elif isinstance(x, dict):
            for k in sorted(x, key=repr):
                walk(k)
                walk(x[k])
        elif isinstance(x, (list, tuple)):
            h.update(type(x).__name__.encode())
            for y in x:
                walk(y)
        else:
            h.update(f"{type(x).__name__}:{x!r}".encode())

    walk(obj)
    return h.hexdigest()


def same_digests(name, data, sums):
    """Every object of DATA has the checksum the sender computed and the one of arrays()."""
    local = {k: digest(v) for k, v in arrays().items()}
    bad = sorted(k for k in local if sums.get(k) != local[k] or digest(data.get(k)) != local[k])
    if bad:
        print(f"{name}: checksums differ for {bad}", flush=True)
    return not bad and sorted(data) == sorted(local)


def case(name, fn):
    """Runs one attacked call; it must raise waitio.Error naming the class, run nothing."""
    try:
        got = fn()
    except waitio.Error as e:
        text = str(e)
        named = "refused to unpickle" in text and "system" in text
        print(f"case {name}: waitio.Error: {text[:150]}", flush=True)
        if not named:
            failures.append(f"{name}: the error does not name the refused class")
    except Exception as e:  # noqa: BLE001 (an old binding raises whatever pickle raised)
        print(f"case {name}: {type(e).__name__}: {e}", flush=True)
        failures.append(f"{name}: {type(e).__name__}, not waitio.Error")
    else:
        print(f"case {name}: returned {got!r:.60} without an error", flush=True)
        failures.append(f"{name}: no error")
    ran = os.path.exists(FILE)
    print(f"case {name}: command ran: {'YES' if ran else 'no'}", flush=True)
    if ran:
        failures.append(f"{name}: the pickle ran a command")
        os.unlink(FILE)


def check(name, cond):
    print(f"check {name}: {'ok' if cond else 'FAILED'}", flush=True)
    if not cond:
        failures.append(name)


def hwm_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def victim(world):
    # a length of 1 GiB announced, 100 bytes sent: nothing near 1 GiB may be allocated
    before = hwm_mb()
    try:
        world.recv(1, 9)
        print("case length: no error", flush=True)
    except Exception as e:  # noqa: BLE001
        print(f"case length: {type(e).__name__}: {str(e)[:120]}", flush=True)
    grew = hwm_mb() - before
    print(f"case length: peak memory grew {grew:.0f} MB for a 1 GiB announcement", flush=True)
    check("length: under 64 MB allocated", grew < 64)
    check("length: then a legit recv", world.recv(1, 9) == "after length")

    case("recv", lambda: world.recv(1, 1))
    check("recv: then a legit recv", world.recv(1, 1) == {"legit": 1})
    case("recv-any-source", lambda: world.recv(waitio.ANY_SOURCE, waitio.ANY_TAG))
    check("recv-any-source: then a legit recv", world.recv(1, 2) == ["legit", 2])
    case("bcast", lambda: world.bcast(None, root=1))
    check("bcast: then a legit bcast", world.bcast(None, root=1) == ("legit", 3))
    case("gather", lambda: world.gather("mine", root=0))
    check("gather: then a legit gather", world.gather("mine", root=0) == ["mine", "legit"])
    case("scatter", lambda: world.scatter(None, root=1))
    check("scatter: then a legit scatter", world.scatter(None, root=1) == "for 0")
    case("allgather", lambda: world.allgather("mine"))
    check("allgather: then a legit allgather", world.allgather("mine") == ["mine", "legit"])
    case("allreduce", lambda: world.allreduce(5))
    check("allreduce: then a legit allreduce", world.allreduce(5) == 12)
    case("reduce", lambda: world.reduce(5, root=0))
    check("reduce: then a legit reduce", world.reduce(5, root=0) == 12)

    # plain data round trips by default, checksummed; a custom class is refused by its name
    if hasattr(waitio, "allow_pickle"):
        try:
            waitio.allow_pickle(True)
            check("allow_pickle(True) without WAITIO_PYTHON_PICKLE=1 refused", False)
        except waitio.Error as e:
            check("allow_pickle(True) without WAITIO_PYTHON_PICKLE=1 refused",
                  "WAITIO_PYTHON_PICKLE" in str(e))
    data, sums = world.recv(1, 5)
    check("numpy and builtins by recv, checksummed", same_digests("recv", data, sums))
    check("numpy arrays writable", data["a_f8"].flags.writeable and data["big"].flags.writeable)
    data, sums = world.bcast(None, root=1)
    check("numpy and builtins by bcast, checksummed", same_digests("bcast", data, sums))
    try:
        world.recv(1, 6)
        check("a custom class refused by default", False)
    except waitio.Error as e:
        print(f"custom class: {e}", flush=True)
        check("a custom class refused by default, named", "__main__.Point" in str(e))
    check("then a legit recv", world.recv(1, 6) == "end")
    # last (the old binding loses the stream here): 2**62 announced, refused as it ends early,
    # in bounded time and memory
    try:
        world.recv(1, 9)
        check("length 2**62: waitio.Error", False)
    except waitio.Error as e:
        check("length 2**62: waitio.Error", "ended early" in str(e))
    except Exception as e:  # noqa: BLE001 (the old binding: MemoryError)
        print(f"case length 2**62: {type(e).__name__}: {e}", flush=True)
        check("length 2**62: waitio.Error", False)
        return
    check("length 2**62: then a legit recv", world.recv(1, 9) == "after length")
    world.barrier()


def attacker(world):
    world.Send(bytearray(struct.pack("<Q", 1 << 30)), 0, 9)  # a length of 1 GiB...
    world.Send(bytearray(100), 0, 9)                            # ...and 100 bytes
    world.send("after length", 0, 9)
    raw_send(world, evil_pickle(), 0, 1)
    world.send({"legit": 1}, 0, 1)
    raw_send(world, evil_pickle(), 0, 77)
    world.send(["legit", 2], 0, 2)
    raw_bcast(world, evil_pickle(), 1)
    world.bcast(("legit", 3), root=1)
    raw_send(world, evil_pickle(), 0, OBJ_TAG)        # gather
    world.gather("legit", root=0)
    raw_send(world, evil_pickle(), 0, OBJ_TAG)        # scatter from root 1
    world.scatter(["for 0", "for 1"], root=1)
    for legit in ("legit", 7):                        # allgather, then allreduce
        raw_send(world, evil_pickle(), 0, OBJ_TAG)
        try:
            world.bcast(None, root=0)                 # the root's result (or its error)
        except waitio.Error as e:
            print(f"attacker: the root reported: {str(e)[:100]}", flush=True)
        if legit == "legit":
            world.allgather(legit)
        else:
            world.allreduce(legit)
    raw_send(world, evil_pickle(), 0, OBJ_TAG)        # reduce
    world.reduce(7, root=0)
    data = arrays()
    world.send((data, {k: digest(v) for k, v in data.items()}), 0, 5)
    world.bcast((data, {k: digest(v) for k, v in data.items()}), root=1)
    world.send(Point(3, 4), 0, 6)
    world.send("end", 0, 6)
    world.Send(bytearray(struct.pack("<Q", 1 << 62)), 0, 9)
    world.Send(bytearray(100), 0, 9)
    world.send("after length", 0, 9)
    world.barrier()


def optin(world):
    waitio.allow_pickle(True)
    check("pickle_allowed()", waitio.pickle_allowed())
    check("a custom class by recv with the opt-in", world.recv(1, 1) == Point(3, 4))
    check("a custom class by bcast with the opt-in", world.bcast(None, root=1) == [Point(5, 6)])
    data, sums = world.recv(1, 2)
    check("numpy and builtins with the opt-in, checksummed", same_digests("opt-in", data, sums))
    waitio.allow_pickle(False)
    try:
        world.recv(1, 3)
        check("refused again after allow_pickle(False)", False)
    except waitio.Error as e:
        check("refused again after allow_pickle(False)", "__main__.Point" in str(e))
    world.barrier()


def peer(world):
    world.send(Point(3, 4), 0, 1)
    world.bcast([Point(5, 6)], root=1)
    data = arrays()
    world.send((data, {k: digest(v) for k, v in data.items()}), 0, 2)
    world.send(Point(7, 8), 0, 3)
    world.barrier()


if __name__ == "__main__":
    with waitio.session(timeout=60):
        w = waitio.universe()
        {"victim": victim, "attacker": attacker, "optin": optin, "peer": peer}[sys.argv[1]](w)
    if failures:
        print(f"pb_pickle {sys.argv[1]} FAILED: {'; '.join(failures)}", flush=True)
        sys.exit(1)
    print(f"pb_pickle {sys.argv[1]} ok", flush=True)
