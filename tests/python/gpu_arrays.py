"""gpu_arrays.py — device arrays for the binding's GPU-buffer tests, without PyTorch or CuPy:
memory of the CUDA driver that WAITIO_CUDA_LIBRARY names (the test suite's fake driver, whose
device memory the CPU cannot touch, or a real libcuda), exposed the two ways the binding takes
device arrays:

- DeviceArray: ``__cuda_array_interface__`` version 3 (data, shape, typestr, strides, stream);
- DLPackArray: ``__dlpack__`` / ``__dlpack_device__`` over a DeviceArray, with a versioned
  (DLPack 1.0) or legacy capsule built with ctypes; it counts the deleter's calls, which the
  consumer (the binding) must make exactly once per export.

Contents are written and read back through the driver's copies (cuMemcpyHtoD/DtoH), so a test
checks what crossed process boundaries byte for byte. CpuDLPack hides a NumPy array's buffer
protocol so that only its DLPack export (kDLCPU) is left.
"""
import ctypes
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple

CUdeviceptr = ctypes.c_ulonglong


class Driver:
    """The CUDA driver library (the one the WaitIO library loads), with a current context."""

    def __init__(self, path: Optional[str] = None) -> None:
        self.path = path or os.environ.get("WAITIO_CUDA_LIBRARY") or "libcuda.so.1"
        lib = self.lib = ctypes.CDLL(self.path)
        lib.cuMemAlloc_v2.argtypes = [ctypes.POINTER(CUdeviceptr), ctypes.c_size_t]
        lib.cuMemFree_v2.argtypes = [CUdeviceptr]
        lib.cuMemcpyHtoD_v2.argtypes = [CUdeviceptr, ctypes.c_void_p, ctypes.c_size_t]
        lib.cuMemcpyDtoH_v2.argtypes = [ctypes.c_void_p, CUdeviceptr, ctypes.c_size_t]
        self.check(lib.cuInit(0), "cuInit")
        dev, ctx = ctypes.c_int(), ctypes.c_void_p()
        self.check(lib.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
        self.check(lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
        self.check(lib.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")

    @staticmethod
    def check(rc: int, what: str) -> None:
        if rc != 0:
            raise RuntimeError(f"{what} failed: CUDA error {rc}")

    def alloc(self, nbytes: int) -> int:
        if nbytes == 0:
            return 0  # a zero-size array may have a null pointer (the interface allows it)
        p = CUdeviceptr()
        self.check(self.lib.cuMemAlloc_v2(ctypes.byref(p), nbytes), "cuMemAlloc")
        return p.value

    def free(self, ptr: int) -> None:
        if ptr:
            self.check(self.lib.cuMemFree_v2(ptr), "cuMemFree")

    def upload(self, ptr: int, data: bytes) -> None:
        if data:
            self.check(self.lib.cuMemcpyHtoD_v2(ptr, data, len(data)), "cuMemcpyHtoD")

    def download(self, ptr: int, nbytes: int) -> bytes:
        out = ctypes.create_string_buffer(nbytes)
        if nbytes:
            self.check(self.lib.cuMemcpyDtoH_v2(out, ptr, nbytes), "cuMemcpyDtoH")
        return out.raw


class DeviceArray:
    """A device allocation with ``__cuda_array_interface__`` (v3). ``stream`` is what the
    interface reports (None: no synchronisation needed; 2: the per-thread default stream, which
    the consumer must synchronize); ``strides`` in bytes (None: C order)."""

    def __init__(self, driver: Driver, shape: Sequence[int], typestr: str = "|u1", readonly: bool = False,
                 strides: Optional[Sequence[int]] = None, stream: Optional[int] = 2) -> None:
        self.driver, self.shape, self.typestr = driver, tuple(shape), typestr
        self.readonly, self.strides, self.stream = readonly, strides, stream
        n = 1
        for d in self.shape:
            n *= d
        self.nbytes = n * int(typestr[2:])
        self.ptr = driver.alloc(self.nbytes)

    @property
    def __cuda_array_interface__(self) -> Dict[str, Any]:
        return {"version": 3, "shape": self.shape, "typestr": self.typestr,
                "data": (self.ptr, self.readonly), "strides": self.strides, "stream": self.stream}

    def write(self, data: bytes) -> "DeviceArray":
        assert len(data) == self.nbytes
        self.driver.upload(self.ptr, data)
        return self

    def read(self) -> bytes:
        return self.driver.download(self.ptr, self.nbytes)

    def free(self) -> None:
        self.driver.free(self.ptr)
        self.ptr = 0


# ---- DLPack's ABI (dlpack.h) ----
class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


class DLManagedTensorVersioned(ctypes.Structure):
    pass


LEGACY_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
VERSIONED_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensorVersioned))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                            ("deleter", LEGACY_DELETER)]
DLManagedTensorVersioned._fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
                                     ("manager_ctx", ctypes.c_void_p), ("deleter", VERSIONED_DELETER),
                                     ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]
DLPACK_READ_ONLY = 1
KDLCUDA = 2

_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_NAME_VERSIONED = b"dltensor_versioned"  # module constants: a capsule keeps a pointer to its name
_NAME_LEGACY = b"dltensor"


class DLPackArray:
    """DLPack export of ``nbytes`` bytes at ``offset`` of a DeviceArray (kDLCUDA, uint8, 1-D;
    ``offset`` travels as the tensor's byte_offset). ``legacy``: a producer from before DLPack
    1.0 (``__dlpack__`` without max_version, a "dltensor" capsule). ``deleted`` counts the
    deleter's calls; ``exports`` the capsules handed out."""

    _live: Dict[int, Tuple[Any, Any, "DLPackArray"]] = {}  # keeps a capsule's structures until deleted

    def __init__(self, base: DeviceArray, offset: int = 0, nbytes: Optional[int] = None,
                 legacy: bool = False, readonly: bool = False) -> None:
        self.base, self.offset = base, offset
        self.nbytes = base.nbytes - offset if nbytes is None else nbytes
        self.legacy, self.readonly = legacy, readonly
        self.exports = self.deleted = 0
        self.streams: List[Optional[int]] = []

    def __dlpack_device__(self) -> Tuple[int, int]:
        return (KDLCUDA, 0)

    def __dlpack__(self, stream: Optional[int] = None, **kwargs: Any) -> Any:
        if self.legacy and kwargs:
            raise TypeError(f"__dlpack__() got unexpected keyword arguments {sorted(kwargs)}")
        self.streams.append(stream)
        versioned = not self.legacy and kwargs.get("max_version") is not None and kwargs["max_version"][0] >= 1
        m: Any = DLManagedTensorVersioned() if versioned else DLManagedTensor()
        shape = (ctypes.c_int64 * 1)(self.nbytes)
        t = m.dl_tensor
        t.data, t.byte_offset = self.base.ptr or None, self.offset
        t.device, t.ndim, t.dtype = DLDevice(KDLCUDA, 0), 1, DLDataType(1, 8, 1)  # kDLUInt, 8 bits
        t.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
        if versioned:
            m.major, m.minor, m.deleter = 1, 0, _versioned_deleter
            m.flags = DLPACK_READ_ONLY if self.readonly else 0
        else:
            m.deleter = _legacy_deleter
        addr = ctypes.addressof(m)
        DLPackArray._live[addr] = (m, shape, self)
        self.exports += 1
        # no capsule destructor: a consumed capsule's tensor is the consumer's to delete, and
        # an unconsumed one is a bug the deleted count shows
        return _capsule_new(addr, _NAME_VERSIONED if versioned else _NAME_LEGACY, None)

    def read(self) -> bytes:
        return self.base.driver.download(self.base.ptr + self.offset, self.nbytes)


def _deleted(addr: int) -> None:
    entry = DLPackArray._live.pop(addr, None)
    if entry is None:
        raise RuntimeError("DLPack deleter called twice (or on an unknown tensor)")
    entry[2].deleted += 1


@LEGACY_DELETER
def _legacy_deleter(p: Any) -> None:
    _deleted(ctypes.addressof(p.contents))


@VERSIONED_DELETER
def _versioned_deleter(p: Any) -> None:
    _deleted(ctypes.addressof(p.contents))


class CpuDLPack:
    """A NumPy array seen only through DLPack (kDLCPU): its buffer protocol hidden."""

    def __init__(self, array: Any) -> None:
        self.array = array

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> Tuple[int, int]:
        return tuple(self.array.__dlpack_device__())  # type: ignore[return-value]
