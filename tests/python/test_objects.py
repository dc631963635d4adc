"""pytest for the decoding of object messages (waitio/_objects.py), in one process: what a
peer's pickle may become by default, what is refused and how (issue 25 item 2). The
multi-process attack is tests/scripts/sec_python_pickle.sh."""
import os
import pickle

import numpy as np
import pytest

import waitio
from waitio import _core, _objects


def roundtrip(obj):
    return _objects.loads(bytearray(_objects.dumps(obj)), "rank 1")


def refused(data, *words):
    with pytest.raises(waitio.Error) as info:
        _objects.loads(data, "rank 1")
    assert info.value.code == 12, info.value  # WAITIO_ERR_PROTO
    for w in words:
        assert w in str(info.value), str(info.value)
    return str(info.value)


class Evil:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (os.system, (f"touch {self.path}",))


class Point:
    def __init__(self, x):
        self.x = x

    def __eq__(self, other):
        return type(other) is Point and other.x == self.x


@pytest.mark.parametrize("obj", [
    None, True, -(1 << 100), 2.5, 1 - 2j, "é", b"\x00", bytearray(b"xy"), (1, [2, {3: "4"}]),
    {1, 2}, frozenset("ab"), slice(1, 9, 2), range(3, 30, 3), Ellipsis, int, {"k": [None] * 3}])
def test_builtins_roundtrip(obj):
    got = roundtrip(obj)
    assert got == obj and type(got) is type(obj)


@pytest.mark.parametrize("arr", [
    np.arange(10, dtype=np.int8), np.arange(10.0).astype(">f8"), np.arange(6).astype("c16"),
    np.array([True, False]), np.arange(3).astype("M8[s]"), np.array(["ab", "é"]),
    np.zeros(3, dtype=[("a", "<i4"), ("b", "<f8", (2,)), ("c", "S3")]),
    np.zeros(2, dtype=np.dtype([("a", "u1"), ("b", "<f8")], align=True)),
    np.asfortranarray(np.arange(12.0).reshape(3, 4)), np.arange(100.0).reshape(10, 10)[::3, 1::2],
    np.array(2.5), np.zeros((0, 4)), np.array([1, "x", None, (2, 3)], dtype=object)])
def test_numpy_arrays_roundtrip(arr):
    got = roundtrip(arr)
    assert type(got) is np.ndarray and got.dtype == arr.dtype and got.shape == arr.shape
    if arr.dtype.hasobject:
        assert got.tolist() == arr.tolist()
    else:
        assert got.tobytes() == np.ascontiguousarray(arr).tobytes()
        assert got.flags.writeable or arr.size == 0


def test_numpy_scalars_dtypes_and_types_roundtrip():
    for obj in (np.float32(1.5), np.int64(-3), np.datetime64("2025-01-02"), np.bool_(True),
                np.dtype(">i2"), np.dtype([("x", "<f4")]), np.float64, np.uint8):
        got = roundtrip(obj)
        assert got == obj and type(got) is type(obj), (obj, got)


def test_a_command_in_a_pickle_is_refused_by_name(tmp_path):
    target = tmp_path / "ran"
    refused(pickle.dumps(Evil(target)), "refused to unpickle posix.system", "rank 1",
            "allow_pickle", "WAITIO_PYTHON_PICKLE")
    refused(pickle.dumps(Evil(target), protocol=0), "posix.system")
    assert not target.exists()


def test_classes_and_arbitrary_builtins_are_refused_by_name():
    refused(pickle.dumps(Point(1)), "refused to unpickle", "Point")
    refused(pickle.dumps(eval), "builtins.eval")
    refused(pickle.dumps(getattr), "builtins.getattr")
    refused(pickle.dumps(np.ma.masked_array([1, 2])), "numpy.ma")


def test_numpy_own_pickle_form_is_refused():
    # its __setstate__ trusts the bytes: a short object list is read past its end
    refused(pickle.dumps(np.arange(3)), "refused to unpickle numpy")
    refused(pickle.dumps(np.float64(1.0)), "refused to unpickle numpy")
    refused(pickle.dumps(np.dtype("f8")), "refused to unpickle numpy.dtype")


class Plain:
    pass


def test_opcodes_plain_data_never_uses_are_refused():
    p = Plain()
    p.a = 1
    refused(pickle.dumps(p), "Plain")  # named by its class although BUILD comes after it
    state = bytearray(_objects.dumps(np.arange(2)))
    assert state[-1:] == b"."
    forged = state[:-1] + b"(K\x01\x85NK\x00tb."  # BUILD: a hostile __setstate__ of the array
    refused(bytes(forged), "BUILD")
    refused(b"\x80\x05N}b.", "BUILD")
    refused(b"\x80\x05P1\n.", "persistent id")
    refused(b"\x80\x05\x97.", "out-of-band")
    # CPython's unpickler grows its memo to twice a PUT's index: 2**30 would be 16 GiB
    refused(b"\x80\x05Nr\x00\x00\x00\x40.", "memo index")
    refused(b"(lp1073741824\n.", "memo index")
    assert _objects.loads(b"(lp0\nI1\nap1\n.", "x") == [1]  # protocol 0's own indices


@pytest.mark.parametrize("data", [
    b"\x80\x05", b"\x80\x05X\xff\xff\xff\x7fab.", b"\x80\x05\x8e" + (1 << 63).to_bytes(8, "little"),
    b"\x80\x05\x95\xff\xff\xff\xff\xff\xff\xff\x7fN.", b"\x80\x05\xff.", b"cbuiltins\nint"])
def test_malformed_pickles_are_refused(data):
    refused(data, "rank 1")


def test_small_messages_are_not_amplified():
    refused(b"\x80\x04\x8c\x08builtins\x8c\tbytearray\x93J\x00\x00\x00@\x85R.", "bytearray of int")

    class R:
        def __reduce__(self):
            return (set, (range(10 ** 12),))
    refused(pickle.dumps(R(), protocol=4), "builtins.set of range")
    big = (1 << 40,)
    with pytest.raises(waitio.Error, match="bytes of data"):
        _objects._wire_array("<f8", big, "C", b"")
    with pytest.raises(waitio.Error, match="do not match its shape"):
        _objects._wire_objects((1 << 40,), [None])


def test_python2_protocol_forms_of_plain_data():
    for obj in (bytearray(b"ab"), {1, 2}, frozenset([3]), b"xy", range(4), 1 + 2j, ["é", 1.5]):
        for proto in (0, 1, 2):
            assert _objects.loads(pickle.dumps(obj, protocol=proto), "x") == obj, (obj, proto)


def test_the_opt_in_needs_the_call_and_the_variable(monkeypatch):
    monkeypatch.delenv("WAITIO_PYTHON_PICKLE", raising=False)
    with pytest.raises(waitio.Error, match="WAITIO_PYTHON_PICKLE=1"):
        waitio.allow_pickle(True)
    assert not waitio.pickle_allowed()
    monkeypatch.setenv("WAITIO_PYTHON_PICKLE", "1")
    refused(pickle.dumps(Point(2)), "Point")  # the variable alone changes nothing
    monkeypatch.setenv("WAITIO_PYTHON_PICKLE", "yes")
    with pytest.raises(waitio.Error, match="not 0 or 1"):
        waitio.allow_pickle(True)
    monkeypatch.setenv("WAITIO_PYTHON_PICKLE", "1")
    waitio.allow_pickle(True)
    try:
        assert waitio.pickle_allowed()
        assert roundtrip(Point(2)) == Point(2)
        assert roundtrip(np.arange(3)).tolist() == [0, 1, 2]
    finally:
        waitio.allow_pickle(False)
    refused(pickle.dumps(Point(2)), "Point")


def test_opcode_check_walks_every_protocol_and_reports_globals():
    for proto in range(6):
        assert _core.pickle_check(pickle.dumps({"a": [1, 2.5, "x", b"y" if proto >= 3 else None]},
                                               protocol=proto)) is False
        assert _core.pickle_check(pickle.dumps({1, 2} if proto >= 4 else 1, protocol=proto)) is False
        assert _core.pickle_check(pickle.dumps(slice(1, 2), protocol=proto)) is True


def test_chunks_of_a_huge_announced_length_come_one_at_a_time():
    sizes = _objects.chunk_sizes(1 << 62)  # a generator: nothing proportional to the length
    assert next(sizes) == _objects.CHUNK
    assert list(_objects.chunk_sizes(_objects.CHUNK * 2 + 5)) == [_objects.CHUNK] * 2 + [5]
    assert list(_objects.chunk_sizes(0)) == []
