"""WaitIO for Python: couple this process with separately launched parallel programs.

The API follows mpi4py: upper-case methods (``Isend``, ``Recv``, ``Allreduce``, ...) move
buffer-protocol objects (NumPy arrays of any dtype, bytearray, memoryview, CPU torch tensors)
and device arrays (PyTorch CUDA tensors, CuPy: ``__cuda_array_interface__`` or DLPack) without
copies; lower-case methods (``send``, ``recv``, ``bcast``, ...) move Python objects: a
peer's object is decoded as plain data (builtins, NumPy arrays and dtypes) unless
:func:`allow_pickle` (with ``WAITIO_PYTHON_PICKLE=1``) opts in to full pickle, which lets any
holder of the instance key run code in this process.

Example::

    import numpy as np, waitio
    with waitio.session(timeout=60):
        world = waitio.universe()
        field = np.empty(1000)
        world.Recv(field, source=0, tag=1)

Errors are raised as mpi4py raises them: ``TypeError`` for an object that is not a buffer,
``ValueError`` for a negative tag, a rank outside the group or buffers that do not fit; failures
reported by the library raise :class:`waitio.Error` (``.code`` is the WaitIO error code,
``.message`` the text).

Threads: calls into WaitIO are serialized by a lock of the binding; whatever may block (waits,
collectives, init, finalize) releases the GIL, so other Python threads run meanwhile.
"""
from __future__ import annotations

import atexit
import contextlib
import ctypes
import importlib
import operator
import os
import struct
import sys
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union, cast

from . import _core, _objects, futures as _futures
from ._core import (AMO_ADD, AMO_AND, AMO_CSWAP, AMO_FETCH, AMO_MAX, AMO_MIN, AMO_OR, AMO_SET, AMO_SWAP, AMO_XOR,
                    ANY_SOURCE, ANY_TAG, CMP_EQ, CMP_GE, CMP_GT, CMP_LE, CMP_LT,
                    CMP_NE, SIGNAL_ADD, SIGNAL_SET, Error,
                    Request, get_nprocs, initialized, local_rank, local_size, pb_rank, pb_size)
from ._objects import allow_pickle, pickle_allowed
from .futures import Future, make_future, when_all

__all__ = [
    "Error", "Comm", "Request", "init", "finalize", "initialized", "session", "universe",
    "pbheads", "create_group", "waitall", "pb_rank", "pb_size", "local_rank", "local_size",
    "get_nprocs", "allow_pickle", "pickle_allowed", "ANY_SOURCE", "ANY_TAG", "Op", "SUM", "PROD", "MAX",
    "MIN", "LAND", "LOR", "LXOR",
    "BAND", "BOR", "BXOR", "__version__",
    "Window", "rma_world", "quiet", "fence", "progress", "rpc_register", "AMO_FETCH", "AMO_SET",
    "AMO_SWAP", "AMO_CSWAP", "AMO_ADD", "AMO_AND", "AMO_OR", "AMO_XOR", "CMP_EQ", "CMP_NE",
    "CMP_GT", "CMP_GE", "CMP_LT", "CMP_LE", "SIGNAL_SET", "SIGNAL_ADD",
    "Future", "when_all", "make_future", "RemoteObject", "AMO_MIN", "AMO_MAX",
]


# Error, a failure reported by the library (raised by the extension): ``code`` is the
# library's error code, ``message`` its explanation (declared in _core.pyi).
setattr(Error, "code", property(lambda self: self.args[0], doc="The WAITIO_ERR_* code."))
setattr(Error, "message", property(lambda self: self.args[1] if len(self.args) > 1 else "",
                                   doc="What went wrong, in words."))
setattr(Error, "__str__", lambda self: f"{self.args[1]} (WaitIO error {self.args[0]})")

__version__: str = _core.build_info()["version"]

if TYPE_CHECKING:
    # PEP 688 buffers (bytes, bytearray, memoryview...) and NumPy arrays, whose stubs declare
    # the buffer protocol only for Python 3.12 and later (_core.pyi)
    from ._core import _Buffer as Buffer
    # ...and device arrays (__cuda_array_interface__, DLPack), which the point-to-point calls
    # and the buffer collectives take too
    from ._core import _DeviceBuffer as DeviceBuffer
    from typing_extensions import Buffer as _BufferProtocol  # what memoryview() is typed to take

#: (source, tag, nbytes) of a completed receive (or send)
Status = Tuple[int, int, int]


class Op(int):
    """A reduction operation, usable as mpi4py's ``MPI.SUM`` and the others are: its integer
    value names it to the buffer collectives (:meth:`Comm.Reduce`, :meth:`Comm.Allreduce`,
    :meth:`Comm.reduce_async`, the C library's ``WAITIO_SUM`` ...), and calling it combines
    two Python objects, which is how the object collectives (:meth:`Comm.reduce`,
    :meth:`Comm.allreduce`) apply it: ``comm.reduce(x, op=waitio.SUM)``."""

    __slots__ = ()  # an int's layout: the name and the function are kept by value (_OP_DEFS)

    def __new__(cls, value: int, name: str, fn: Callable[[Any, Any], Any]) -> "Op":
        _OP_DEFS[value] = (name, fn)
        return super().__new__(cls, value)

    def __call__(self, a: Any, b: Any) -> Any:
        """``a`` combined with ``b`` (mpi4py's semantics for Python objects)."""
        return _OP_DEFS[int(self)][1](a, b)

    def __repr__(self) -> str:
        return f"waitio.{_OP_DEFS[int(self)][0]}"

    def __reduce__(self) -> str:
        return _OP_DEFS[int(self)][0]  # pickled as the module's global of that name: waitio.SUM itself


_OP_DEFS: Dict[int, Tuple[str, Callable[[Any, Any], Any]]] = {}


def _elementwise(numpy_name: str, scalar: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """NumPy arrays element by element (numpy.maximum ...: ``max`` of two arrays is
    ambiguous), anything else as mpi4py combines objects."""
    def combine(a: Any, b: Any) -> Any:
        np = sys.modules.get("numpy")
        if np is not None and (isinstance(a, np.ndarray) or isinstance(b, np.ndarray)):
            return getattr(np, numpy_name)(a, b)
        return scalar(a, b)
    return combine


SUM = Op(_core.SUM, "SUM", operator.add)
PROD = Op(_core.PROD, "PROD", operator.mul)
MAX = Op(_core.MAX, "MAX", _elementwise("maximum", lambda a, b: b if b > a else a))
MIN = Op(_core.MIN, "MIN", _elementwise("minimum", lambda a, b: b if b < a else a))
LAND = Op(_core.LAND, "LAND", _elementwise("logical_and", lambda a, b: a and b))
LOR = Op(_core.LOR, "LOR", _elementwise("logical_or", lambda a, b: a or b))
LXOR = Op(_core.LXOR, "LXOR", _elementwise("logical_xor", lambda a, b: (a or b) and not (a and b)))
BAND = Op(_core.BAND, "BAND", operator.and_)
BOR = Op(_core.BOR, "BOR", operator.or_)
BXOR = Op(_core.BXOR, "BXOR", operator.xor)

_finalize_registered = False


_INSTANCE_VARS = ("WAITIO_NPB", "WAITIO_PBID", "WAITIO_MASTER_HOST", "WAITIO_MASTER_PORT",
                  "WAITIO_RENDEZVOUS")
_adapter: Any = None


def _load_mpi_adapter() -> None:
    """A Python PB of a one-job MPMD launch (``mpiexec -np 2 ./a : -np 1 python3 b.py``, see
    docs/mpi-layer.md) joins the job's start-up through MPI, so it needs MPI: when this process
    initialised MPI through mpi4py, load the WaitIO MPI adapter built for mpi4py's MPI
    (``$WAITIO_MPI_ADAPTER``, else ``libwaitio_adapter_<mpi>.so`` from the dynamic linker's
    path), exactly as a C program links it. The adapter must register with this extension's
    copy of the library, so the extension's symbols are made global first."""
    global _adapter
    mpi = sys.modules.get("mpi4py.MPI")
    if _adapter is not None or mpi is None or not mpi.Is_initialized() or mpi.Is_finalized():
        return
    version = mpi.Get_library_version()
    flavor = "openmpi" if "Open MPI" in version else "mpich" if any(
        k in version for k in ("MPICH", "Intel(R) MPI", "MVAPICH")) else None
    wanted = not any(v in os.environ for v in _INSTANCE_VARS)  # a one-job launch needs it
    path = os.environ.get("WAITIO_MPI_ADAPTER") or (flavor and f"libwaitio_adapter_{flavor}.so")
    if not path:
        if wanted:
            raise Error(4, f"mpi4py runs an MPI WaitIO has no adapter for ({version.splitlines()[0]})")
        return
    try:
        ctypes.CDLL(_core.__file__, mode=os.RTLD_NOW | os.RTLD_GLOBAL | os.RTLD_NOLOAD)
        _adapter = ctypes.CDLL(path, mode=os.RTLD_NOW | os.RTLD_GLOBAL)
    except OSError as exc:
        if wanted:
            raise Error(4, f"mpi4py initialised MPI but the WaitIO MPI adapter {path} cannot be "
                        f"loaded ({exc}): set WAITIO_MPI_ADAPTER to its path or put its directory "
                        f"on LD_LIBRARY_PATH") from None


_mpmd_world_done = False
_LAUNCHER_VARS = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK")  # as the adapter's
#: mpi4py's original MPI.COMM_WORLD (the whole job) once :func:`_mpmd_world` replaced it, else None
mpmd_job_world: Any = None


def _mpmd_world() -> None:
    """MPMD: what MPI_COMM_WORLD means (docs/launcher.md). In a one-job MPMD launch a C or
    Fortran program's MPI_COMM_WORLD is its own processes (the adapter's wrappers); mpi4py
    called MPI before the adapter was loaded, so here ``MPI.COMM_WORLD`` is replaced by this
    program's communicator, which the adapter builds (the first collective over the job's world:
    import waitio before communicating). The predefined attributes (``MPI.APPNUM``, ...) are read
    on the whole job's world, error handlers set on both, ``Abort`` ends the whole job.
    ``WAITIO_MPMD_WORLD=0`` (the same in every program) leaves the world alone."""
    global _mpmd_world_done, mpmd_job_world
    mpi = sys.modules.get("mpi4py.MPI")
    if _mpmd_world_done or mpi is None or not mpi.Is_initialized() or mpi.Is_finalized():
        return
    if os.environ.get("WAITIO_MPMD_WORLD") == "0" or any(v in os.environ for v in _INSTANCE_VARS) \
            or not any(v in os.environ for v in _LAUNCHER_VARS) or mpi.COMM_WORLD.Get_size() < 2:
        _mpmd_world_done = True
        return
    _load_mpi_adapter()
    _mpmd_world_done = True
    if _adapter is None:
        return
    start = _adapter.waitio_mpi_adapter_mpmd_world_f
    start.restype = ctypes.c_int
    handle = start()
    if handle < 0:
        return  # one application: the world is the world
    job = mpi.COMM_WORLD
    predefined = {mpi.TAG_UB, mpi.HOST, mpi.IO, mpi.WTIME_IS_GLOBAL, mpi.APPNUM,
                  mpi.UNIVERSE_SIZE, mpi.LASTUSEDCODE}

    base = mpi.Intracomm

    def get_attr(self: Any, keyval: int) -> Any:
        return job.Get_attr(keyval) if keyval in predefined else base.Get_attr(self, keyval)

    def set_errhandler(self: Any, errhandler: Any) -> None:
        job.Set_errhandler(errhandler)
        base.Set_errhandler(self, errhandler)

    def abort(self: Any, errorcode: int = 0) -> None:
        job.Abort(errorcode)

    # made with type(): a class statement here would read as a module export to the stub checker
    program_world = type("ProgramWorld", (base,), {"Get_attr": get_attr, "Set_errhandler": set_errhandler,
                                                   "Abort": abort})
    mpmd_job_world = job
    setattr(mpi, "COMM_WORLD", program_world(base.f2py(handle)))


def init(timeout: int = 60) -> None:
    """Start WaitIO: register with the instance's master and wait up to ``timeout`` seconds for
    every PB. Reads WAITIO_* environment variables as the C library does. Finalized at exit.
    If mpi4py initialised MPI, the matching MPI adapter is loaded first, so that a Python PB
    can be one application of a one-job MPMD launch (docs/mpi-layer.md)."""
    global _finalize_registered
    if _core.initialized():
        return
    _load_mpi_adapter()
    _mpmd_world()
    _core.init(timeout)
    if not _finalize_registered:
        atexit.register(finalize)
        _finalize_registered = True


def finalize() -> None:
    """Flush, say goodbye to every peer, and release everything. Idempotent."""
    _core.finalize()



@contextlib.contextmanager
def session(timeout: int = 60) -> Iterator[None]:
    """``with waitio.session():`` initialises WaitIO and finalizes it on exit."""
    init(timeout)
    try:
        yield
    finally:
        finalize()


def waitall(requests: Sequence[Request]) -> None:
    """Wait for every request; raises the first error after all have completed."""
    _core.waitall(list(requests))


_LEN = struct.Struct("<Q")


class Comm:
    """A WaitIO group with mpi4py-style methods."""

    def __init__(self, group: _core.Group) -> None:
        """Wraps a group of the compiled core; use universe(), pbheads() or create_group()."""
        self._g = group

    # -- identity -----------------------------------------------------------------------
    @property
    def rank(self) -> int:
        """This process's rank, or -1 if it is not a member."""
        return self._g.rank

    @property
    def size(self) -> int:
        """Number of processes in the group."""
        return self._g.size

    def Get_rank(self) -> int:
        """This process's rank, or -1 if it is not a member (mpi4py's name)."""
        return self._g.rank

    def Get_size(self) -> int:
        """Number of processes in the group (mpi4py's name)."""
        return self._g.size

    def member(self, rank: int) -> Tuple[int, int]:
        """(pbid, PB-local rank) of group rank ``rank``."""
        return self._g.member(rank)

    # -- buffers (host memory, or device arrays: docs/python.md, "GPU arrays") ------------
    def Isend(self, buf: DeviceBuffer, dest: int, tag: int = 0) -> Request:
        """Start sending ``buf`` (zero-copy: leave it unchanged until the request completes) to
        rank ``dest`` with ``tag`` (0 .. 2**64-2); returns a :class:`Request`."""
        return self._g.isend(buf, dest, tag)

    def Irecv(self, buf: DeviceBuffer, source: int = ANY_SOURCE, tag: int = ANY_TAG) -> Request:
        """Start receiving into the writable buffer ``buf`` from ``source`` (``ANY_SOURCE``: any)
        with ``tag`` (``ANY_TAG``: any); returns a :class:`Request`."""
        return self._g.irecv(buf, source, tag)

    def Send(self, buf: DeviceBuffer, dest: int, tag: int = 0) -> None:
        """Send ``buf`` to rank ``dest`` with ``tag`` and wait until the buffer may be reused."""
        self._g.isend(buf, dest, tag).wait()

    def Recv(self, buf: DeviceBuffer, source: int = ANY_SOURCE, tag: int = ANY_TAG) -> Status:
        """Receive into ``buf``; returns (source, tag, nbytes). Other threads run meanwhile."""
        return self._g.irecv(buf, source, tag).wait()

    def Barrier(self) -> None:
        """Block until every member has entered the barrier."""
        self._g.barrier()

    def Bcast(self, buf: DeviceBuffer, root: int = 0) -> None:
        """Broadcast ``buf`` from ``root`` into every member's ``buf`` (same size everywhere)."""
        self._g.bcast(buf, root)

    def Reduce(self, sendbuf: DeviceBuffer, recvbuf: Optional[DeviceBuffer], op: int = SUM, root: int = 0) -> None:
        """Combine every member's ``sendbuf`` element-wise with ``op`` into ``recvbuf`` at
        ``root`` (``recvbuf`` may be None elsewhere); element type from the buffer's format."""
        self._g.reduce(sendbuf, recvbuf, op, root)

    def Allreduce(self, sendbuf: DeviceBuffer, recvbuf: DeviceBuffer, op: int = SUM) -> None:
        """As :meth:`Reduce`, with the result in every member's ``recvbuf``."""
        self._g.allreduce(sendbuf, recvbuf, op)

    def Gather(self, sendbuf: DeviceBuffer, recvbuf: Optional[DeviceBuffer], root: int = 0) -> None:
        """Concatenate every member's ``sendbuf`` in rank order into ``recvbuf`` at ``root``."""
        self._g.gather(sendbuf, recvbuf, root)

    def Scatter(self, sendbuf: Optional[DeviceBuffer], recvbuf: DeviceBuffer, root: int = 0) -> None:
        """Split ``sendbuf`` at ``root`` into equal blocks; block i lands in rank i's ``recvbuf``."""
        self._g.scatter(sendbuf, recvbuf, root)

    def Allgather(self, sendbuf: DeviceBuffer, recvbuf: DeviceBuffer) -> None:
        """As :meth:`Gather`, with the result in every member's ``recvbuf``."""
        self._g.allgather(sendbuf, recvbuf)

    def Alltoall(self, sendbuf: DeviceBuffer, recvbuf: DeviceBuffer) -> None:
        """Block j of rank i's ``sendbuf`` goes to block i of rank j's ``recvbuf``."""
        self._g.alltoall(sendbuf, recvbuf)

    # -- pickled objects (docs/python.md, "Object messages"; _objects.py) -------------------
    # An object travels as an 8-byte length and then its pickle in chunks of at most
    # _objects.CHUNK bytes, with the same tag; WaitIO's non-overtaking order keeps them
    # together. A peer's pickle is decoded as plain data only, unless allow_pickle() opted in.
    def _send_raw(self, data: memoryview, dest: int, tag: int) -> None:
        reqs = [self._g.isend(_LEN.pack(len(data)), dest, tag)]
        view = memoryview(data)
        off = 0
        for n in _objects.chunk_sizes(len(data)):
            reqs.append(self._g.isend(view[off:off + n], dest, tag))
            off += n
        _core.waitall(reqs)

    def _recv_raw(self, source: int, tag: int) -> Tuple[Any, int]:
        """A peer's pickle and its rank. Each chunk is allocated only once the one before it
        has arrived: a peer that announces a huge length gets us to allocate one chunk."""
        head = bytearray(_LEN.size)
        src, tg, nbytes = self._g.irecv(head, source, tag).wait()
        total = _objects.check_length(head, nbytes, f"rank {src}")
        chunks: List[Any] = []
        for n in _objects.chunk_sizes(total):
            chunk = bytearray(n)
            _, _, got = self._g.irecv(chunk, src, tg).wait()
            if got != n:
                raise Error(_objects.ERR_PROTO, f"the object message from rank {src} ended "
                            f"early: a chunk of {got} bytes, not {n}")
            chunks.append(chunk)
        return _objects.join(chunks), src

    def _bcast_raw(self, data: Optional[memoryview], root: int) -> Any:
        """ROOT's pickle DATA on every member, chunk by chunk as in _recv_raw."""
        head = bytearray(_LEN.pack(len(data)) if self.rank == root and data is not None else _LEN.size)
        self._g.bcast(head, root)
        total = _objects.check_length(head, _LEN.size, f"rank {root}")
        chunks: List[Any] = []
        view = memoryview(data) if self.rank == root and data is not None else None
        off = 0
        for n in _objects.chunk_sizes(total):
            chunk = view[off:off + n] if view is not None else bytearray(n)
            self._g.bcast(chunk, root)
            off += n
            chunks.append(chunk)
        return data if view is not None else _objects.join(chunks)

    def _bcast_result(self, make: Callable[[], Any], root: int) -> Any:
        """``make()``'s result at ``root``, on every member; an exception of ``make`` at the
        root is raised on every member (which would otherwise wait for the result forever)."""
        if self.rank == root:
            try:
                obj = make()
                payload = _objects.dumps((None, obj))
            except Exception as exc:  # every member must leave the bcast
                why = f"rank {root}: {type(exc).__name__}: {exc}"
                self._bcast_raw(_objects.dumps((why, None)), root)
                raise
            self._bcast_raw(payload, root)
            return obj
        msg, obj = _objects.loads(self._bcast_raw(None, root), f"rank {root}")
        if msg is not None:
            raise Error(_objects.ERR_PROTO, f"the collective failed at {msg}")
        return obj

    def send(self, obj: Any, dest: int, tag: int = 0) -> None:
        """Send a picklable object to rank ``dest`` with ``tag``."""
        self._send_raw(_objects.dumps(obj), dest, tag)

    def recv(self, source: int = ANY_SOURCE, tag: int = ANY_TAG) -> Any:
        """Receive an object from ``source`` with ``tag`` (wildcards allowed). It is decoded as
        plain data (builtins, NumPy arrays and dtypes) unless :func:`allow_pickle` opted in;
        anything else raises :class:`waitio.Error` naming the class."""
        data, src = self._recv_raw(source, tag)
        return _objects.loads(data, f"rank {src}")

    def bcast(self, obj: Any = None, root: int = 0) -> Any:
        """Return ``root``'s object on every member (the others pass anything, e.g. None)."""
        if self.rank == root:
            self._bcast_raw(_objects.dumps(obj), root)
            return obj
        return _objects.loads(self._bcast_raw(None, root), f"rank {root}")

    def gather(self, obj: Any, root: int = 0) -> Optional[List[Any]]:
        """At ``root``: the list of every member's object in rank order; None elsewhere. The
        root receives every member's object before it raises for one it refuses."""
        if self.rank != root:
            self.send(obj, root, tag=_OBJ_TAG)
            return None
        raw = [self._recv_raw(r, _OBJ_TAG)[0] if r != root else None for r in range(self.size)]
        return [obj if r == root else _objects.loads(raw[r], f"rank {r}") for r in range(self.size)]

    def scatter(self, objs: Optional[Sequence[Any]] = None, root: int = 0) -> Any:
        """Object i of ``root``'s sequence goes to rank i (others pass None)."""
        if self.rank == root:
            if objs is None or len(objs) != self.size:
                raise ValueError(f"scatter needs one object per process ({self.size}) at the root")
            for r in range(self.size):
                if r != root:
                    self.send(objs[r], r, tag=_OBJ_TAG)
            return objs[root]
        return self.recv(root, tag=_OBJ_TAG)

    def allgather(self, obj: Any) -> List[Any]:
        """The list of every member's object in rank order, on every member."""
        if self.rank != 0:
            self.send(obj, 0, tag=_OBJ_TAG)
        items: List[Any] = self._bcast_result(lambda: self.gather(obj, 0), 0)
        return items

    def reduce(self, obj: Any, op: Callable[[Any, Any], Any] = operator.add, root: int = 0) -> Any:
        """Reduce objects with a Python function (applied in rank order at ``root``)."""
        items = self.gather(obj, root)
        if items is None:
            return None
        acc = items[0]
        for x in items[1:]:
            acc = op(acc, x)
        return acc

    def allreduce(self, obj: Any, op: Callable[[Any, Any], Any] = operator.add) -> Any:
        """As :meth:`reduce`, with the result on every member (an error at the root, e.g. a
        refused object, raises on every member)."""
        if self.rank != 0:
            self.send(obj, 0, tag=_OBJ_TAG)
        return self._bcast_result(lambda: self.reduce(obj, op, 0), 0)

    def barrier(self) -> None:
        """Block until every member has entered the barrier (as :meth:`Barrier`)."""
        self._g.barrier()

    # -- remote procedure calls (one-sided; docs/one-sided.md) ----------------------------
    def Irpc(self, target: int, handler: int, args: Buffer, reply: Buffer) -> Request:
        """Call handler ``handler`` on ``target`` with ``args``; the request completes when the
        reply is in the writable buffer ``reply`` (its status's nbytes: the reply's length)."""
        return self._g.irpc(target, handler, args, reply)

    def rpc(self, target: int, handler: int, args: Buffer = b"", reply_max: int = 65536) -> bytes:
        """Call handler ``handler`` on ``target`` and return its reply (at most ``reply_max``
        bytes). Handlers are registered with :func:`rpc_register`."""
        reply = bytearray(reply_max)
        _, _, n = self._g.irpc(target, handler, args, reply).wait()
        return bytes(reply[:n])

    def rpc_async(self, target: int, handler: int, args: Buffer = b"",
                  reply_max: int = 65536) -> Future[bytes]:
        """As :meth:`rpc`, returning at once a :class:`Future` of the reply (``args`` is
        copied: it may change at once)."""
        cf = self._g.rpc_f(target, handler, args, reply_max)
        return _futures.from_request(cf, cf.value)

    # -- non-blocking collectives (futures; every member calls them in the same order) ----
    def barrier_async(self) -> Future[None]:
        """A :class:`Future` that completes once every member has entered the barrier."""
        cf = self._g.barrier_f()
        return _futures.from_request(cf, lambda: None)

    def bcast_async(self, buf: Buffer, root: int = 0) -> Future[Any]:
        """Broadcast ``buf`` from ``root`` into every member's ``buf``; the :class:`Future`'s
        result is ``buf`` (leave it alone until then)."""
        cf = self._g.bcast_f(root, buf)
        return _futures.from_request(cf, lambda: buf)

    def reduce_async(self, sendbuf: Buffer, recvbuf: Optional[Buffer], op: int = SUM,
                     root: int = 0) -> Future[Any]:
        """Combine every member's ``sendbuf`` (int32, int64, uint32, uint64, float32 or float64
        elements) with ``op`` (SUM, MIN, MAX, BAND, BOR, BXOR) into ``recvbuf`` at ``root``
        (None elsewhere allowed); the :class:`Future`'s result is ``recvbuf``."""
        amo = _REDUCE_OPS.get(op)
        if amo is None:
            raise ValueError("reduce_async takes SUM, MIN, MAX, BAND, BOR or BXOR")
        cf = self._g.reduce_f(root, sendbuf, recvbuf, amo)
        return _futures.from_request(cf, lambda: recvbuf)

    # -- distributed objects (docs/python.md, "Futures") ----------------------------------
    def register_object(self, name: str, buf: Buffer) -> None:
        """Expose the writable ``buf`` as this process's object ``name`` of the group: any
        member reads and writes it through :meth:`lookup_object`. ``buf`` stays exported until
        :meth:`unregister_object` (called on this same Comm)."""
        # pins buf's memory while the object exists (NumPy arrays are buffers at run time,
        # whatever NumPy's stubs declare before Python 3.12)
        view = memoryview(cast("_BufferProtocol", buf))
        _core.dobj_register(self._g, name, view)
        _objects_held[(id(self._g), name)] = view

    def unregister_object(self, name: str) -> None:
        """Withdraw this process's object ``name``."""
        _core.dobj_unregister(self._g, name)
        view = _objects_held.pop((id(self._g), name), None)
        if view is not None:
            view.release()

    def lookup_object(self, rank: int, name: str) -> Future["RemoteObject"]:
        """A :class:`Future` of a handle to member ``rank``'s object ``name`` (fails with
        ``WAITIO_ERR_RPC`` if there is none)."""
        cf = self._g.dobj_lookup(rank, name)
        return _futures.from_request(cf, lambda: RemoteObject(self, *cf.dobj()))

    def rpc_ff(self, target: int, handler: int, args: Buffer = b"") -> None:
        """Call a handler without waiting for it; :func:`quiet` returns once it has run."""
        self._g.rpc_ff(target, handler, args)

    def __repr__(self) -> str:
        return f"<waitio.Comm rank {self.rank} of {self.size}>"


_OBJ_TAG = (1 << 62) + 7  # tag of the pickled collectives' messages
_REDUCE_OPS: Dict[int, int] = {SUM: AMO_ADD, MIN: AMO_MIN, MAX: AMO_MAX, BAND: AMO_AND, BOR: AMO_OR,
               BXOR: AMO_XOR}
_objects_held: "dict[Tuple[int, str], memoryview]" = {}


class RemoteObject:
    """A handle to a member's distributed object (:meth:`Comm.lookup_object`): read, write or
    call it with futures."""

    def __init__(self, comm: Comm, rank: int, oid: int, size: int) -> None:
        """Made by :meth:`Comm.lookup_object`."""
        self.comm, self.rank, self.size = comm, rank, size
        self._id = oid

    def get_async(self, buf: Union[Buffer, int], offset: int = 0) -> Future[Any]:
        """Read into the writable ``buf`` (or a new bytearray of that many bytes) from byte
        ``offset`` of the object; the :class:`Future`'s result is the buffer."""
        dst: Any = bytearray(buf) if isinstance(buf, int) else buf
        cf = self.comm._g.dobj_get(self.rank, self._id, self.size, offset, dst)
        return _futures.from_request(cf, lambda: dst)

    def put_async(self, buf: Buffer, offset: int = 0) -> Future[None]:
        """Write ``buf`` (copied: it may change at once) at byte ``offset`` of the object; the
        :class:`Future` completes once it is written at the owner."""
        cf = self.comm._g.dobj_put(self.rank, self._id, self.size, offset, buf)
        return _futures.from_request(cf, lambda: None)

    def call_async(self, args: Buffer = b"", reply_max: int = 65536) -> Future[bytes]:
        """Run the object's handler (objects of C programs registered with one) with ``args``;
        the :class:`Future`'s result is its reply."""
        cf = self.comm._g.dobj_call(self.rank, self._id, self.size, args, reply_max)
        return _futures.from_request(cf, cf.value)

    def __repr__(self) -> str:
        return f"<waitio.RemoteObject of {self.size} bytes on rank {self.rank}>"


def universe() -> Comm:
    """All processes of all PBs, PB by PB (initialises WaitIO if needed)."""
    if not _core.initialized():
        init()
    return Comm(_core.universe())


def pbheads() -> Comm:
    """Rank 0 of each PB; other processes get a Comm whose rank is -1."""
    if not _core.initialized():
        init()
    return Comm(_core.pbheads())


Member = Union[None, Sequence[int], Callable[[int, int], bool]]


def create_group(gid: int, members: Sequence[Member], order: Optional[Sequence[int]] = None) -> Comm:
    """A group from one entry per PB: None (no member), a list of PB-local ranks, or a
    predicate ``f(pbid, rank) -> bool``. ``order[p]`` is PB p's position (1, 2, ...; 0 to
    exclude); default: PB order. Every member must call it with the same arguments."""
    nprocs = _core.get_nprocs()
    if len(members) != len(nprocs):
        raise ValueError(f"members needs one entry per PB ({len(nprocs)}), got {len(members)}")
    lists: List[Optional[List[int]]] = []
    for p, m in enumerate(members):
        if m is None:
            lists.append(None)
        elif callable(m):
            lists.append([r for r in range(nprocs[p]) if m(p, r)])
        else:
            lists.append(sorted(int(r) for r in m))
    if order is None:
        order = [p + 1 for p in range(len(nprocs))]
    return Comm(_core.create_group(gid, lists, list(order)))


# ---- one-sided communication (waitio_rma.h; docs/one-sided.md) ---------------------------


class Window:
    """Memory of every member of a group that the others read and write directly.

    ``Window.allocate(comm, size)`` gives each member ``size`` zeroed bytes (members of one host
    share them through shared memory); ``Window.create(comm, buf)`` exposes a writable buffer of
    each member's own. This member's part is a buffer: ``np.frombuffer(win, dtype)`` views it.
    Offsets are in bytes. Every creation and :meth:`Free` is collective over the group.

    A *device window* (``Window.allocate(comm, size, device=True)``, or ``Window.create`` over a
    device array) keeps each member's part in GPU memory: put/get/atomics work on it as on host
    memory, from host or device buffers; its part is no host buffer but a CUDA array
    (``__cuda_array_interface__``: ``cupy.asarray(win)``, ``torch.as_tensor(win, device="cuda")``).
    """

    def __init__(self, win: _core.Window, comm: Comm) -> None:
        """Wraps a window of the compiled core; use :meth:`allocate` or :meth:`create`."""
        self._w = win
        self.comm = comm

    @classmethod
    def allocate(cls, comm: Comm, size: int, device: bool = False) -> "Window":
        """``size`` bytes on every member (the same size everywhere), zero-filled; ``device``:
        in GPU memory (``cuMemAlloc`` on each member's current device; every member passes the
        same, and without a CUDA driver every member raises :class:`Error` WAITIO_ERR_DEVICE)."""
        return cls(_core.win_allocate(comm._g, size, device), comm)

    @classmethod
    def create(cls, comm: Comm, buf: DeviceBuffer) -> "Window":
        """Expose the writable, C-contiguous ``buf`` (kept exported until :meth:`Free`); a device
        array (``__cuda_array_interface__``, DLPack) makes a device window."""
        return cls(_core.win_create(comm._g, buf), comm)

    @property
    def device(self) -> bool:
        """Whether this member's part is device (GPU) memory."""
        return self._w.device

    @property
    def __cuda_array_interface__(self) -> Dict[str, Any]:
        """A device window's part as a CUDA array of bytes (AttributeError for a host window)."""
        return self._w.__cuda_array_interface__

    @property
    def size(self) -> int:
        """Bytes of this member's part."""
        return self._w.size

    def target_size(self, target: int) -> int:
        """Bytes of ``target``'s part."""
        return self._w.target_size(target)

    def __buffer__(self, flags: int) -> memoryview:
        """This member's part (PEP 688)."""
        return self._w.memory()

    def memory(self) -> memoryview:
        """A writable view of this member's part (free() is refused while one exists)."""
        return self._w.memory()

    def numpy(self, dtype: Any = "u1") -> Any:
        """This member's part as a NumPy array of ``dtype`` (NumPy must be installed)."""
        numpy = importlib.import_module("numpy")
        return numpy.frombuffer(self._w.memory(), dtype=dtype)

    def Put(self, buf: DeviceBuffer, target: int, offset: int = 0) -> None:
        """Copy ``buf`` to byte ``offset`` of ``target``'s part (returns when ``buf`` may change)."""
        self._w.put(target, offset, buf)

    def Get(self, buf: DeviceBuffer, target: int, offset: int = 0) -> None:
        """Fill the writable ``buf`` from byte ``offset`` of ``target``'s part."""
        self._w.get(target, offset, buf)

    def Iput(self, buf: DeviceBuffer, target: int, offset: int = 0) -> Request:
        """Start a put; the request completes when ``buf`` may change."""
        return self._w.iput(target, offset, buf)

    def Iget(self, buf: DeviceBuffer, target: int, offset: int = 0) -> Request:
        """Start a get; the request completes when ``buf`` holds the data."""
        return self._w.iget(target, offset, buf)

    def Flush(self, target: int) -> None:
        """Complete, at ``target``, every earlier operation of this process on it."""
        try:
            self._w.flush(target)
        finally:
            _futures.release(self, target)

    # -- non-blocking forms: nbi (completed by Flush / quiet) and futures (waitio.futures) ----
    def put_nbi(self, buf: Buffer, target: int, offset: int = 0) -> None:
        """Start a put and return at once: complete (and ``buf`` free to change) after
        :meth:`Flush` of ``target`` or :func:`quiet`; ``buf`` stays exported until then."""
        self._w.put_nbi(target, offset, _futures.hold(self, target, buf))

    def get_nbi(self, buf: Buffer, target: int, offset: int = 0) -> None:
        """Start a get into the writable ``buf``; it holds the data after :meth:`Flush` of
        ``target`` or :func:`quiet`."""
        self._w.get_nbi(target, offset, _futures.hold(self, target, buf))

    def put_async(self, buf: DeviceBuffer, target: int, offset: int = 0) -> Future[None]:
        """Start a put; the :class:`Future` completes (with None) once the data is in the
        target's memory (``buf`` may change then)."""
        cf = self._w.put_f(target, offset, buf)
        return _futures.from_request(cf, lambda: None)

    def get_async(self, buf: Union[DeviceBuffer, int], target: int, offset: int = 0) -> Future[Any]:
        """Start a get into the writable ``buf`` (or, given a byte count, a new bytearray); the
        :class:`Future`'s result is that buffer, holding the data."""
        dst: Any = bytearray(buf) if isinstance(buf, int) else buf
        cf = self._w.get_f(target, offset, dst)
        return _futures.from_request(cf, lambda: dst)

    def atomic_async(self, op: int, target: int, offset: int, value: Union[int, float, None] = None,
                     compare: Union[int, float, None] = None,
                     dtype: str = "int64") -> Future[Union[int, float]]:
        """Start a fetching atomic (as :meth:`atomic`, and ``AMO_MIN``/``AMO_MAX``; ADD, MIN and
        MAX on float32/float64 too); the :class:`Future`'s result is the old value."""
        decode = _futures.amo_decoder(dtype)
        cf = self._w.atomic_f(op, target, offset, value, compare, dtype)
        return _futures.from_request(cf, lambda: decode(cf.value()))

    def fetch_add_async(self, target: int, offset: int, value: Union[int, float],
                        dtype: str = "int64") -> Future[Union[int, float]]:
        """Start an atomic add; the :class:`Future`'s result is the old value."""
        return self.atomic_async(AMO_ADD, target, offset, value, None, dtype)

    def put_strided(self, buf: Buffer, target: int, offset: int, target_stride: int) -> None:
        """Put the elements of the one-dimensional ``buf`` (strided allowed: ``a[::2]``), element
        i at byte ``offset + i * target_stride`` of ``target``'s part (blocking, as :meth:`Put`)."""
        self._w.put_strided(target, offset, target_stride, buf)

    def get_strided(self, buf: Buffer, target: int, offset: int, target_stride: int) -> None:
        """Fill the elements of the writable one-dimensional ``buf`` (strided allowed), element i
        from byte ``offset + i * target_stride`` of ``target``'s part (blocking)."""
        self._w.get_strided(target, offset, target_stride, buf)

    def atomic(self, op: int, target: int, offset: int, value: Union[int, float, None] = None,
               compare: Union[int, float, None] = None, dtype: str = "int64",
               fetch: bool = True) -> Union[int, float, None]:
        """Atomic ``op`` (``AMO_*``) on the word at ``offset`` of ``target``'s part; ``dtype``
        is int32, int64, uint32, uint64 (every op), float32 or float64 (fetch, set, swap).
        Returns the old value, or None with ``fetch=False`` (complete after :meth:`Flush`)."""
        return self._w.atomic(op, target, offset, value, compare, dtype, fetch)

    def fetch_add(self, target: int, offset: int, value: int, dtype: str = "int64") -> int:
        """Add ``value`` to the word and return its old value."""
        old = self._w.atomic(AMO_ADD, target, offset, value, None, dtype, True)
        assert isinstance(old, int)
        return old

    def compare_swap(self, target: int, offset: int, compare: int, value: int, dtype: str = "int64") -> int:
        """Store ``value`` if the word equals ``compare``; return the old value."""
        old = self._w.atomic(AMO_CSWAP, target, offset, value, compare, dtype, True)
        assert isinstance(old, int)
        return old

    def put_signal(self, buf: Buffer, target: int, offset: int, sig_offset: int, signal: int,
                   sig_op: int = SIGNAL_ADD) -> None:
        """Put ``buf``, then set or add (``SIGNAL_SET``/``SIGNAL_ADD``) the 64-bit word at
        ``sig_offset``: a target that sees the signal sees the data."""
        self._w.put_signal(target, offset, buf, sig_offset, signal, sig_op)

    def wait_until(self, offset: int, cmp: int, value: int, dtype: str = "int64",
                   timeout: float = -1.0) -> None:
        """Wait until this member's word at ``offset`` compares (``CMP_*``) with ``value``."""
        self._w.wait_until(offset, cmp, value, dtype, timeout)

    def Free(self) -> None:
        """Release the window (collective). No view of its memory may remain."""
        self._w.free()
        _futures.release_window(self)  # its put_nbi/get_nbi are complete

    def __repr__(self) -> str:
        where = " of device memory" if self.device else ""
        return f"<waitio.Window of {self.size} bytes{where} on rank {self.comm.rank}>"


def rma_world() -> Comm:
    """All processes, in universe order, for one-sided use (its own group: its collectives
    never meet the universe's)."""
    if not _core.initialized():
        init()
    return Comm(_core.rma_world())


def quiet() -> None:
    """Complete every one-sided operation this process started (puts, atomics, calls, the
    ``*_nbi`` ones), then run the callbacks of the futures that completed."""
    try:
        _core.quiet()
    finally:
        _futures.release_all()
    _futures.poll()


def fence() -> None:
    """Order this process's earlier puts, atomics and signals to each target before later ones."""
    _core.fence()


def progress() -> None:
    """Serve one-sided requests and remote calls once (handlers run inside WaitIO calls), and
    complete the futures whose operations have ended (their callbacks run here)."""
    _core.progress()
    _futures.poll()


def rpc_register(handler: int, fn: Optional[Callable[[int, bytes], Optional[Buffer]]]) -> None:
    """Register ``fn(origin, args) -> reply`` (bytes-like or None) as handler ``handler``
    (0 .. 65279), or remove it with None. It runs inside this program's own WaitIO calls; an
    exception fails the caller's request."""
    _core.rpc_register(handler, fn)


# imported after mpi4py in a one-job MPMD launch: MPI.COMM_WORLD is this program's from here on
# (an adapter that cannot be loaded is reported by init())
try:
    _mpmd_world()
except Error:
    pass
