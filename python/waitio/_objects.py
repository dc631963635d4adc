"""Object messages, the lower-case methods' payload (send, recv, bcast, gather, ...): how an
object becomes bytes, how a peer's bytes become an object again, and what they may become.

A key holder may send any bytes. ``pickle.loads`` of them runs whatever the pickle names (an
``os.system`` reduce runs a command as this process's user), so a peer's pickle is decoded by
a restricted unpickler unless the user opted in to full pickle (:func:`allow_pickle` *and*
``WAITIO_PYTHON_PICKLE=1``). Restricted decoding accepts plain data only:

- builtins: None, bool, int, float, complex, str, bytes, bytearray, tuple, list, dict, set,
  frozenset, slice, range, Ellipsis (and the types int, float, bool, str, complex as values);
- NumPy arrays (any dtype without Python objects, structured ones included, and arrays of
  dtype ``object`` whose items are themselves plain data), NumPy scalars, dtypes and scalar
  types. They travel in this module's own form (``_wire_*`` below: a dtype description as
  ``numpy.save`` writes it, the shape and the raw bytes), checked before anything is built;
  NumPy's own pickle form is refused by default, because its ``__setstate__`` trusts the bytes
  (a hostile state read past an object list's end, or made a dtype claim it holds pointers);
- anything else is refused with ``waitio.Error`` naming the global, e.g. "refused to unpickle
  os.system". The pickle opcodes that set an object's state (BUILD) or use persistent ids or
  out-of-band buffers are refused before decoding starts (``_core.pickle_check``); so are the
  calls of allowed constructors that would turn a small message into a large allocation
  (``bytearray(10**12)``, ``set(range(10**12))``).

On the wire an object is an 8-byte length and then the pickle in chunks of at most CHUNK
bytes, with the same tag (WaitIO's non-overtaking order keeps them together). The receiver
allocates a chunk only once the previous one has arrived, so a peer that announces a huge
length makes it allocate at most CHUNK bytes beyond what the peer actually sent.
"""
from __future__ import annotations

import importlib
import io
import os
import pickle
import struct
import sys
from typing import Any, Callable, Dict, Iterator, List, Tuple

from ._core import Error, pickle_check

ERR_ENV = 4     # WAITIO_ERR_ENV: a malformed variable, or an opt-in without it
ERR_PROTO = 12  # WAITIO_ERR_PROTO: what a peer sent breaks the rules

LEN = struct.Struct("<Q")
CHUNK = 16 << 20  # most bytes a receiver allocates before they arrive
ENV = "WAITIO_PYTHON_PICKLE"
_HINT = ("object messages from peers may hold plain data only (builtins, NumPy arrays, scalars "
         "and dtypes); to accept any class from trusted peers call waitio.allow_pickle(True) "
         f"and set {ENV}=1 (docs/python.md)")

_full_pickle = False


def _env_pickle() -> bool:
    """The value of WAITIO_PYTHON_PICKLE: unset or 0 -> False, 1 -> True, else an error."""
    v = os.environ.get(ENV)
    if v is None or v == "0":
        return False
    if v == "1":
        return True
    raise Error(ERR_ENV, f"{ENV}='{v}' is not 0 or 1" if v else
                f"{ENV} is set but empty: give it a value or unset it")


def allow_pickle(enable: bool = True) -> None:
    """Decode peers' object messages with full pickle (``enable=True``) or only as plain data
    (``False``, the default). Full pickle runs code named by the sender: any process holding the
    instance key can then run commands as this process's user. It needs WAITIO_PYTHON_PICKLE=1
    in the environment as well (raises waitio.Error otherwise)."""
    global _full_pickle
    if enable and not _env_pickle():
        raise Error(ERR_ENV, f"waitio.allow_pickle(True) needs {ENV}=1 in the environment as "
                    "well: full pickle lets every holder of the instance key run code in this "
                    "process (docs/python.md)")
    _full_pickle = bool(enable)


def pickle_allowed() -> bool:
    """Whether peers' object messages are decoded with full pickle (see :func:`allow_pickle`)."""
    return _full_pickle


# ---- encoding ------------------------------------------------------------------------------

def _np() -> Any:
    """NumPy if this process imported it (an object of NumPy's can exist only then), else None."""
    return sys.modules.get("numpy")


def _descr(np: Any, dtype: Any) -> Any:
    """A dtype as plain data (what numpy.save writes into a .npy header)."""
    return np.lib.format.dtype_to_descr(dtype)


class _Pickler(pickle.Pickler):
    """pickle.Pickler that writes NumPy objects in the checked form of the _wire_* functions.
    reducer_override is not called for exact ints, floats, strs, lists, dicts...: plain data
    pickles at full speed."""

    def reducer_override(self, obj: Any) -> Any:
        np = _np()
        if np is None:
            return NotImplemented
        t = type(obj)
        if t is np.ndarray:
            return _reduce_array(np, obj)
        if isinstance(obj, np.dtype):
            return _wire_dtype, (_descr(np, obj),)
        if isinstance(obj, np.generic) and t.__module__ == "numpy" and not obj.dtype.hasobject:
            return _wire_scalar, (_descr(np, obj.dtype), obj.tobytes())
        if isinstance(obj, type) and issubclass(obj, np.generic) and obj.__module__ == "numpy":
            try:
                d = np.dtype(obj)
            except TypeError:  # an abstract type (np.floating): NumPy's own form
                return NotImplemented
            if d.type is obj:
                return _wire_sctype, (_descr(np, d),)
        return NotImplemented


def _reduce_array(np: Any, a: Any) -> Any:
    """An ndarray as (_wire_array, (descr, shape, order, raw bytes)), or for dtype object
    (_wire_objects, (shape, list of items)). Other dtypes holding objects: NumPy's own form."""
    if a.dtype.hasobject:
        if a.dtype != np.dtype(object):
            return NotImplemented
        return _wire_objects, (a.shape, list(a.reshape(-1)))
    order = "F" if a.flags.f_contiguous and not a.flags.c_contiguous else "C"
    if not (a.flags.c_contiguous or a.flags.f_contiguous):
        a = np.ascontiguousarray(a)
    # in-band PickleBuffer: a writable array travels as a bytearray (writable at the receiver)
    try:
        data: Any = pickle.PickleBuffer(a) if a.size else b""
    except (ValueError, BufferError, TypeError):  # dtypes without a buffer format (datetime)
        data = bytearray(a.tobytes(order=order))
    return _wire_array, (_descr(np, a.dtype), a.shape, order, data)


def dumps(obj: Any) -> memoryview:
    """The pickle of OBJ, NumPy objects in their checked form (a writable view, no copy:
    a broadcast's root sends from a writable buffer)."""
    f = io.BytesIO()
    _Pickler(f, protocol=5).dump(obj)
    return f.getbuffer()


# ---- the checked constructors a peer's pickle may call -------------------------------------

class _Malformed(Exception):
    """A peer's pickle that plain data never looks like (args[0]: how, "uses pickle opcode...")."""


class _Refused(Exception):
    """A global or call the restricted unpickler refuses (args[0]: what, e.g. "posix.system")."""


def _refuse(what: str) -> _Refused:
    return _Refused(what)


def _numpy() -> Any:
    """NumPy, imported if need be: a message holds NumPy objects (NumPy is an optional extra,
    hence no static import)."""
    np = _np()
    return np if np is not None else importlib.import_module("numpy")


def _dtype_of(descr: Any) -> Any:
    """The dtype of a .npy-style description; waitio.Error if it is not one."""
    np = _numpy()
    try:
        return np.lib.format.descr_to_dtype(descr)
    except (TypeError, ValueError, KeyError, IndexError, RecursionError) as exc:
        raise Error(ERR_PROTO, f"an object message holds a bad dtype description: {exc}") from None


def _shape_of(shape: Any) -> Tuple[int, ...]:
    if (not isinstance(shape, tuple) or len(shape) > 64 or
            not all(type(n) is int and n >= 0 for n in shape)):
        raise Error(ERR_PROTO, f"an object message holds a bad array shape {shape!r:.80}")
    return shape


def _count(shape: Tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _wire_array(descr: Any, shape: Any, order: Any, data: Any) -> Any:
    """An ndarray from a peer: dtype, shape and byte count checked before it is built."""
    np = _numpy()
    dtype = _dtype_of(descr)
    shape = _shape_of(shape)
    if dtype.hasobject:
        raise _refuse(f"an array of dtype {dtype} from raw bytes")
    if order not in ("C", "F") or not isinstance(data, (bytes, bytearray)):
        raise Error(ERR_PROTO, "an object message holds a malformed array")
    if len(data) != _count(shape) * dtype.itemsize:
        raise Error(ERR_PROTO, f"an object message holds an array of shape {shape} and dtype "
                    f"{dtype} with {len(data)} bytes of data")
    if not data:
        return np.empty(shape, dtype=dtype)
    return np.frombuffer(data, dtype=dtype).reshape(shape, order=order)


def _wire_objects(shape: Any, items: Any) -> Any:
    """An ndarray of dtype object from a peer (its items were decoded under the same rules)."""
    np = _numpy()
    shape = _shape_of(shape)
    if not isinstance(items, list) or len(items) != _count(shape):
        raise Error(ERR_PROTO, "an object message holds an object array whose items do not "
                    "match its shape")
    out = np.empty(len(items), dtype=object)
    for i, x in enumerate(items):
        out[i] = x
    return out.reshape(shape)


def _wire_scalar(descr: Any, data: Any) -> Any:
    """A NumPy scalar from a peer."""
    np = _numpy()
    dtype = _dtype_of(descr)
    if dtype.hasobject or not isinstance(data, bytes) or len(data) != dtype.itemsize:
        raise Error(ERR_PROTO, f"an object message holds a malformed NumPy scalar of {dtype}")
    if not data:
        return np.zeros((), dtype=dtype)[()]
    return np.frombuffer(data, dtype=dtype)[0]


def _wire_dtype(descr: Any) -> Any:
    """A dtype from a peer."""
    return _dtype_of(descr)


def _wire_sctype(descr: Any) -> Any:
    """A NumPy scalar type (np.float32, ...) from a peer."""
    return _dtype_of(descr).type


_MATERIAL = (list, tuple, set, frozenset, dict, str, bytes, bytearray)


def _materialized(cls: type) -> Callable[..., Any]:
    """CLS (set, frozenset) made from data that is in the message: never from a range or
    another lazy iterable, which would turn a few bytes into an unbounded allocation."""
    def make(*args: Any) -> Any:
        if len(args) > 1 or (args and not isinstance(args[0], _MATERIAL)):
            raise _refuse(f"builtins.{cls.__name__} of {type(args[-1]).__name__}")
        return cls(*args)
    make.__name__ = cls.__name__
    return make


def _bytearray(*args: Any) -> bytearray:
    """bytearray() as pickle writes it (from bytes; or text + 'latin-1' in protocol 2), never
    bytearray(n) (n bytes from a number in the message)."""
    if not args or (len(args) == 1 and isinstance(args[0], (bytes, bytearray, list))):
        return bytearray(*args)
    if len(args) == 2 and isinstance(args[0], str) and args[1] in ("latin1", "latin-1"):
        return bytearray(args[0], "latin-1")
    raise _refuse(f"builtins.bytearray of {type(args[0]).__name__}")


def _codecs_encode(text: Any, encoding: Any = "utf-8", errors: str = "strict") -> bytes:
    """_codecs.encode as protocol 2 writes bytes: text + 'latin1', no other codec."""
    if isinstance(text, str) and encoding in ("latin1", "latin-1") and errors == "strict":
        return text.encode("latin-1")
    raise _refuse(f"_codecs.encode with {encoding!r:.40}")


_BUILTINS: Dict[str, Any] = {
    "int": int, "float": float, "bool": bool, "str": str, "complex": complex,
    "slice": slice, "range": range, "Ellipsis": Ellipsis, "NotImplemented": NotImplemented,
    "set": _materialized(set), "frozenset": _materialized(frozenset), "bytearray": _bytearray,
    # protocol 2 names of Python 2 (what pickle.dumps(..., protocol=2) writes)
    "xrange": range, "unicode": str, "long": int,
}
_WAITIO: Dict[str, Any] = {
    "_wire_array": _wire_array, "_wire_objects": _wire_objects, "_wire_scalar": _wire_scalar,
    "_wire_dtype": _wire_dtype, "_wire_sctype": _wire_sctype,
}


class _Reader:
    """The received pickle as a file for pickle.Unpickler, without the copy io.BytesIO makes
    of a bytearray: a large bytes or array argument is copied once, straight into its object
    (readinto), as pickle.loads does; peek lets the unpickler take the rest in blocks."""

    __slots__ = ("data", "view", "pos")

    def __init__(self, data: Any) -> None:
        self.data = data if isinstance(data, (bytes, bytearray)) else bytes(data)
        self.view = memoryview(self.data)
        self.pos = 0

    def read(self, n: int = -1) -> bytes:
        start = self.pos
        self.pos = len(self.view) if n < 0 else min(len(self.view), start + n)
        return self.view[start:self.pos].tobytes()

    def readinto(self, buf: Any) -> int:
        out = memoryview(buf).cast("B")
        n = min(len(out), len(self.view) - self.pos)
        out[:n] = self.view[self.pos:self.pos + n]
        self.pos += n
        return n

    def readline(self) -> bytes:
        end = self.data.find(b"\n", self.pos)
        return self.read(-1 if end < 0 else end + 1 - self.pos)

    def peek(self, n: int = 1) -> bytes:
        return self.view[self.pos:self.pos + max(n, 1)].tobytes()


def _source(data: Any) -> Any:
    """A file over DATA for the unpickler: io.BytesIO for a small pickle (its copy costs less
    than _Reader's Python-level calls), _Reader for a large one."""
    return io.BytesIO(data) if len(data) < (64 << 10) else _Reader(data)


class _DataUnpickler(pickle.Unpickler):
    """The restricted unpickler: globals from the allow-list above only."""

    def find_class(self, module: str, name: str) -> Any:
        if module in ("builtins", "__builtin__") and name in _BUILTINS:
            return _BUILTINS[name]
        if module in ("waitio", "waitio._objects") and name in _WAITIO:
            return _WAITIO[name]
        if module == "_codecs" and name == "encode":
            return _codecs_encode
        raise _refuse(f"{module}.{name}")


class _FullUnpickler(pickle.Unpickler):
    """Full pickle (opted in): any global; this module's own names resolve here."""

    def find_class(self, module: str, name: str) -> Any:
        if module == "waitio" and name in _WAITIO:
            return _WAITIO[name]
        return super().find_class(module, name)


def _check_opcodes(data: Any) -> bool:
    """Refuses a pickle with an opcode plain data never uses (_core.pickle_check); else returns
    whether it names a global. For the message, the part before a refused opcode is decoded
    first (checked, and with a STOP in the opcode's place, so that it never runs): a custom
    class's instance is then refused by the name of its class."""
    try:
        return bool(pickle_check(data))
    except ValueError as exc:
        why, where = exc.args
        head = bytearray(data)
        if where < len(head):
            head[where] = ord(".")
        try:
            _DataUnpickler(io.BytesIO(head)).load()
        except _Refused:
            raise
        except Exception:  # the prefix ends before its STOP: nothing refused in it
            pass
        raise _Malformed(f"{why} (byte {where})") from None


def loads(data: Any, origin: str) -> Any:
    """The object of a peer's pickle DATA (from ORIGIN, e.g. "rank 1"), decoded as plain data
    unless full pickle was allowed. Every failure is a waitio.Error with code
    WAITIO_ERR_PROTO that says which peer sent it."""
    try:
        if _full_pickle:
            return _FullUnpickler(_source(data)).load()
        if not _check_opcodes(data):  # no global: only containers and scalars can come out
            return pickle.loads(data)
        return _DataUnpickler(_source(data)).load()
    except _Refused as exc:
        raise Error(ERR_PROTO, f"refused to unpickle {exc.args[0]} in the object message from "
                    f"{origin}: {_HINT}") from None
    except _Malformed as exc:
        raise Error(ERR_PROTO, f"refused the object message from {origin}: it {exc.args[0]}") from None
    except Error as exc:
        raise Error(exc.args[0], f"{exc.args[1]} (object message from {origin})") from None
    except Exception as exc:  # a malformed pickle: whatever the unpickler tripped on
        raise Error(ERR_PROTO, f"could not decode the object message from {origin}: "
                    f"{type(exc).__name__}: {exc}") from None


# ---- chunks on the wire ----------------------------------------------------------------------

def chunk_sizes(total: int) -> Iterator[int]:
    """The sizes of the chunks of a TOTAL-byte pickle (none for 0), one at a time: TOTAL comes
    from the peer, a list of them could be the large allocation."""
    for off in range(0, total, CHUNK):
        yield min(CHUNK, total - off)


def check_length(head: Any, nbytes: int, origin: str) -> int:
    """The pickle length of an 8-byte header that arrived with NBYTES bytes."""
    if nbytes != LEN.size:
        raise Error(ERR_PROTO, f"the object message from {origin} starts with {nbytes} bytes, "
                    f"not the {LEN.size}-byte length")
    n: int = LEN.unpack(head)[0]
    if n > sys.maxsize:
        raise Error(ERR_PROTO, f"the object message from {origin} announces {n} bytes")
    return n


def join(chunks: List[Any]) -> Any:
    """The pickle of received CHUNKS (no copy for the usual single chunk)."""
    if len(chunks) == 1:
        return chunks[0]
    return b"".join(chunks)

