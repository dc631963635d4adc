"""Futures of one-sided operations and remote calls (docs/python.md, "Futures").

A :class:`Future` is modelled on :class:`concurrent.futures.Future` (``result(timeout)``,
``exception()``, ``done()``, ``add_done_callback``) with UPC++'s composition: ``then(fn)`` returns
the future of ``fn``'s result (a callback that returns a future is flattened), :func:`when_all`
combines futures. ``Window.put_async`` / ``get_async`` / ``atomic_async``, ``Comm.rpc_async``,
the non-blocking collectives (``Comm.barrier_async`` / ``bcast_async`` / ``reduce_async``) and
distributed objects (``Comm.lookup_object``, ``RemoteObject``) return them, each over a future of
the C library (``_core.Future``, waitio_rma.h). A failure (a lost peer, a missing or failing
handler) is the future's exception, a :class:`waitio.Error`, and reaches every future derived
from it; what the call itself refuses (an access out of bounds) raises there.

Progress, as in UPC++: nothing runs behind the program's back. Operations complete and callbacks
run inside the binding's progress, in the thread that drives it — ``result()``, ``exception()``,
``done()``, :func:`waitio.progress` and :func:`waitio.quiet`. Completions are queued and run
iteratively, so a chain of any length never deepens the Python stack.
"""
from __future__ import annotations

import collections
import concurrent.futures
import logging
import struct
import threading
import time
from typing import Any, Callable, Deque, Dict, Generic, List, Optional, Tuple, TypeVar, Union

from . import _core

__all__ = ["Future", "when_all", "make_future"]

T = TypeVar("T")
U = TypeVar("U")

_PENDING, _DONE = 0, 1
_SLICE = 0.05  # seconds a wait blocks before it looks again (other threads' completions)

_lock = threading.RLock()
_cond = threading.Condition(_lock)              # notified at every completion
_in_flight: Dict[int, "Future[Any]"] = {}       # futures of started operations, in start order
_queue: Deque[Tuple[Callable[["Future[Any]"], Any], "Future[Any]"]] = collections.deque()
_local = threading.local()                      # .draining: this thread is running callbacks
_log = logging.getLogger("waitio")


class Future(Generic[T]):
    """The result of an operation that completes later (see the module's documentation)."""

    __slots__ = ("_state", "_result", "_exc", "_callbacks", "_req", "_finish", "__weakref__")

    def __init__(self) -> None:
        """A pending future; the binding's operations, :meth:`then` and :func:`when_all` make them."""
        self._state = _PENDING
        self._result: Optional[T] = None
        self._exc: Optional[BaseException] = None
        self._callbacks: List[Callable[["Future[T]"], Any]] = []
        self._req: Optional[_core.Future] = None
        self._finish: Optional[Callable[[], T]] = None

    # -- concurrent.futures.Future ------------------------------------------------------
    def done(self) -> bool:
        """Whether the future is complete (makes progress once if it is not)."""
        if self._state == _PENDING:
            poll()
        return self._state == _DONE

    def running(self) -> bool:
        """Whether the operation is still in flight (the opposite of :meth:`done`)."""
        return not self.done()

    def cancel(self) -> bool:
        """One-sided operations cannot be cancelled once started: always False."""
        return False

    def cancelled(self) -> bool:
        """Always False (see :meth:`cancel`)."""
        return False

    def result(self, timeout: Optional[float] = None) -> T:
        """The value, waiting (with progress) up to ``timeout`` seconds (None: no limit); raises
        the operation's exception (a :class:`waitio.Error`), or
        :class:`concurrent.futures.TimeoutError` when the time passes first."""
        self._wait(timeout)
        if self._exc is not None:
            raise self._exc
        return self._result  # type: ignore[return-value]

    def exception(self, timeout: Optional[float] = None) -> Optional[BaseException]:
        """The operation's exception (None if it succeeded), waiting as :meth:`result` does."""
        self._wait(timeout)
        return self._exc

    def add_done_callback(self, fn: Callable[["Future[T]"], Any]) -> None:
        """Call ``fn(future)`` once complete — at once if it is. It runs inside the binding's
        progress in the thread driving it; an exception it raises is logged and ignored."""
        with _lock:
            if self._state == _PENDING:
                self._callbacks.append(fn)
                return
            _queue.append((fn, self))
        _drain(nested=False)

    def set_result(self, result: T) -> None:
        """Complete a future made with ``Future()`` (a promise) with ``result``; its callbacks
        run at once. :class:`concurrent.futures.InvalidStateError` if it is complete."""
        self._set(result, None)

    def set_exception(self, exception: BaseException) -> None:
        """Fail a future made with ``Future()`` with ``exception`` (as :meth:`set_result`)."""
        self._set(None, exception)

    # -- composition ----------------------------------------------------------------------
    def then(self, fn: Callable[[T], Union[U, "Future[U]"]]) -> "Future[U]":
        """A future of ``fn(result)``, called once this one succeeds (a future returned by ``fn``
        is waited for: its outcome becomes the new future's). This one's exception, or one that
        ``fn`` raises, becomes the new future's instead."""
        out: Future[U] = Future()

        def step(f: Future[T]) -> None:
            if f._exc is not None:
                out._settle(None, f._exc)
                return
            try:
                value = fn(f._result)  # type: ignore[arg-type]
            except Exception as exc:  # the callback's failure is the derived future's outcome
                out._settle(None, exc)
                return
            if isinstance(value, Future):
                value.add_done_callback(lambda g: out._settle(g._result, g._exc))
            else:
                out._settle(value, None)

        self.add_done_callback(step)
        return out

    # -- internals ------------------------------------------------------------------------
    def _set(self, result: Any, exc: Optional[BaseException]) -> None:
        """set_result / set_exception: only on a pending future of no operation."""
        with _lock:
            if self._state != _PENDING or self._req is not None:
                raise concurrent.futures.InvalidStateError(f"{self!r} is not a pending promise")
        self._settle(result, exc)

    def _settle(self, result: Any, exc: Optional[BaseException]) -> None:
        """Completes the future (once) and queues its callbacks."""
        with _lock:
            if self._state != _PENDING:
                return
            self._state = _DONE
            self._result, self._exc = result, exc
            self._req = self._finish = None
            _in_flight.pop(id(self), None)
            for fn in self._callbacks:
                _queue.append((fn, self))
            self._callbacks = []
            _cond.notify_all()
        _drain(nested=False)

    def _test(self) -> None:
        """Settles the future if its operation has completed (after a progress round)."""
        req, finish = self._req, self._finish
        if req is None or finish is None:
            return
        try:
            if not req.ready():
                return
            value = finish()
        except Exception as exc:  # waitio.Error: the operation failed
            self._settle(None, exc)
            return
        self._settle(value, None)

    def _wait(self, timeout: Optional[float]) -> None:
        """Drives progress until complete or ``timeout`` seconds pass."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            poll(nested=True)
            if self._state == _DONE:
                return
            left = _SLICE if deadline is None else min(_SLICE, deadline - time.monotonic())
            if left <= 0:
                raise concurrent.futures.TimeoutError(f"the future was not complete after {timeout} s")
            with _lock:
                reqs = [f._req for f in _in_flight.values() if f._req is not None]
                if not reqs:  # nothing in flight here: another thread completes what we wait for
                    _cond.wait(left)
                    continue
            _core.wait_any(reqs, left)

    def __repr__(self) -> str:
        if self._state == _PENDING:
            return "<waitio.Future pending>"
        if self._exc is not None:
            return f"<waitio.Future failed: {type(self._exc).__name__}: {self._exc}>"
        return f"<waitio.Future done: {self._result!r}>"


def _drain(nested: bool) -> None:
    """Runs queued callbacks. A completion inside a callback only queues (``nested=False``: the
    loop of the outer call runs it next), which keeps long chains off the stack; a wait inside a
    callback (``nested=True``) runs them itself, so that it can see its own future complete."""
    if getattr(_local, "draining", False) and not nested:
        return
    outer = getattr(_local, "draining", False)
    _local.draining = True
    try:
        while True:
            with _lock:
                if not _queue:
                    return
                fn, fut = _queue.popleft()
            try:
                fn(fut)
            except Exception:  # as concurrent.futures does: a callback cannot fail its future
                _log.exception("waitio: exception in a future's done callback %r", fn)
    finally:
        _local.draining = outer


def poll(nested: bool = False) -> None:
    """One progress round, then settles every future whose operation has completed and runs the
    callbacks that are due (the binding's progress: :func:`waitio.progress` and
    :func:`waitio.quiet` call it)."""
    with _lock:
        futs = list(_in_flight.values())
    if futs:
        try:
            _core.progress()
        except _core.Error:
            pass  # a failure of progress (a lost peer, a finalized library) shows in the futures
    for f in futs:
        f._test()
    _drain(nested=nested)


def from_request(req: _core.Future, finish: Callable[[], T]) -> Future[T]:
    """The future of a started operation (a future of the C library): it completes with
    ``finish()`` once ``req`` has."""
    fut: Future[T] = Future()
    fut._req, fut._finish = req, finish
    with _lock:
        _in_flight[id(fut)] = fut
    return fut


def make_future(value: T) -> Future[T]:
    """A future already complete with ``value`` (to start a chain of :meth:`Future.then`)."""
    fut: Future[T] = Future()
    fut._settle(value, None)
    return fut


def when_all(*futures: Future[Any]) -> Future[Tuple[Any, ...]]:
    """A future of the tuple of every future's result, complete once all are; if any failed, its
    exception (the first in argument order) is the combined future's."""
    for f in futures:
        if not isinstance(f, Future):
            raise TypeError(f"when_all takes waitio futures, not {type(f).__name__}")
    out: Future[Tuple[Any, ...]] = Future()
    left = [len(futures)]

    def one(_: Future[Any]) -> None:
        with _lock:
            left[0] -= 1
            if left[0]:
                return
        for f in futures:
            if f._exc is not None:
                out._settle(None, f._exc)
                return
        out._settle(tuple(f._result for f in futures), None)

    if not futures:
        out._settle((), None)
    for f in futures:
        f.add_done_callback(one)
    return out


# ---- buffers of non-blocking operations completed by flush / quiet -----------------------------

_held: Dict[Tuple[int, int], List[memoryview]] = {}


def hold(win: object, target: int, buf: Any) -> memoryview:
    """A view of ``buf`` kept (so its memory stays put) until ``release`` for this window and
    target, or ``release_all``: the buffer of a put_nbi / get_nbi."""
    view = memoryview(buf)
    with _lock:
        _held.setdefault((id(win), target), []).append(view)
    return view


def release(win: object, target: int) -> None:
    """Drops the views of ``win``'s operations on ``target`` (after its flush)."""
    with _lock:
        views = _held.pop((id(win), target), [])
    for v in views:
        v.release()


def release_window(win: object) -> None:
    """Drops the views of every operation on ``win`` (after its free)."""
    with _lock:
        keys = [k for k in _held if k[0] == id(win)]
        views = [v for k in keys for v in _held.pop(k)]
    for v in views:
        v.release()


def release_all() -> None:
    """Drops every held view (after quiet)."""
    with _lock:
        views = [v for vs in _held.values() for v in vs]
        _held.clear()
    for v in views:
        v.release()


# ---- atomics' results ---------------------------------------------------------------------------

_AMO_FORMATS = {"int32": "=i", "int64": "=q", "uint32": "=I", "uint64": "=Q", "float32": "=f",
                "float64": "=d"}


def amo_decoder(dtype: str) -> Callable[[bytes], Union[int, float]]:
    """The function that reads an atomic's old value of ``dtype`` from the bytes it returned."""
    fmt = _AMO_FORMATS.get(dtype)
    if fmt is None:
        raise ValueError(f"dtype must be one of {', '.join(_AMO_FORMATS)}, not {dtype!r}")
    return lambda raw: struct.unpack_from(fmt, raw, 0)[0]
