/*
 * _core_dev.c — device (GPU) arrays as buffers of the Python binding (issue 31 item 4): any
 * object with __cuda_array_interface__ (versions 2 and 3: PyTorch, CuPy, Numba, JAX) or the
 * DLPack protocol (__dlpack__ / __dlpack_device__, the versioned and the legacy capsule) is
 * exported as a Py_buffer whose `buf` is the array's own memory, so that the C library receives
 * into it in place and sends from it without a host copy in Python (device pointers go to the
 * C API as they are: src/gpu decides how to move them). Included by _core.c (before get_buffer),
 * which owns the rest of the buffer handling.
 *
 * The Py_buffer's `obj` is a DeviceHold: it keeps the array alive and, for DLPack, owns the
 * consumed managed tensor (the capsule is renamed "used_dltensor[_versioned]" as the protocol
 * demands, and the deleter runs when the buffer is released), so PyBuffer_Release and the
 * requests' and futures' bookkeeping work unchanged.
 *
 * Streams: the producer's pending work must be complete before the library touches the memory.
 * DLPack is preferred when an object has both protocols: its producer is asked for the legacy
 * default stream (stream=1: it makes that stream wait for its own), which is then synchronized
 * (cuStreamSynchronize); a __cuda_array_interface__ v3 `stream` is synchronized before use (v2,
 * or v3 with stream None: the producer says the data is ready). The driver is the one the library loaded (WAITIO_CUDA_LIBRARY, default
 * libcuda.so.1): a device array where the library found no CUDA driver raises waitio.Error
 * with WAITIO_ERR_DEVICE.
 */
#include <dlfcn.h>
#include <stdint.h>
#include "waitio_adapter.h" /* waitio_adapter_getenv: the registry's WAITIO_CUDA_LIBRARY */

/* ---- DLPack's ABI (dlpack.h, v1.0; the legacy DLManagedTensor is v0.x) ---- */

enum { DL_CPU = 1, DL_CUDA = 2, DL_CUDA_HOST = 3, DL_CUDA_MANAGED = 13 };
enum { DL_INT = 0, DL_UINT = 1, DL_FLOAT = 2, DL_BFLOAT = 4, DL_COMPLEX = 5, DL_BOOL = 6 };
#define DL_FLAG_READ_ONLY 1ULL
#define DL_FLAG_IS_COPIED 2ULL

typedef struct {
    int32_t device_type;
    int32_t device_id;
} DLDevice_;
typedef struct {
    uint8_t code;
    uint8_t bits;
    uint16_t lanes;
} DLDataType_;
typedef struct {
    void *data;
    DLDevice_ device;
    int32_t ndim;
    DLDataType_ dtype;
    int64_t *shape;
    int64_t *strides; /* elements; NULL: compact row-major */
    uint64_t byte_offset;
} DLTensor_;
typedef struct DLManagedTensor_ {
    DLTensor_ dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensor_ *self);
} DLManagedTensor_;
typedef struct DLManagedTensorVersioned_ {
    struct {
        uint32_t major, minor;
    } version;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensorVersioned_ *self);
    uint64_t flags;
    DLTensor_ dl_tensor;
} DLManagedTensorVersioned_;

/* ---- the holder behind a device array's Py_buffer ---- */

typedef struct {
    PyObject_HEAD
    PyObject *array;                      /* keeps the exporter alive */
    DLManagedTensor_ *legacy;             /* a consumed legacy DLPack tensor, else NULL */
    DLManagedTensorVersioned_ *versioned; /* a consumed versioned DLPack tensor, else NULL */
    Py_ssize_t nelem;                     /* the Py_buffer's one-dimensional shape */
    char format[8];                       /* struct-module format of an element ("f", "Zd") */
} DeviceHoldObject;

static void device_hold_dealloc(DeviceHoldObject *h)
{
    /* the consumer of a DLPack capsule calls the deleter once it is done with the memory; a
     * deleter may run Python code (it releases the producer's array), so an exception being
     * raised (a refused export) waits meanwhile */
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (h->legacy && h->legacy->deleter)
        h->legacy->deleter(h->legacy);
    if (h->versioned && h->versioned->deleter)
        h->versioned->deleter(h->versioned);
    Py_XDECREF(h->array);
    PyErr_Restore(type, value, tb);
    PyObject_Free(h);
}

static PyTypeObject DeviceHoldType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "waitio._core._DeviceHold",
    .tp_basicsize = sizeof(DeviceHoldObject),
    .tp_dealloc = (destructor)device_hold_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Keeps a device array (and its consumed DLPack tensor) while WaitIO uses its memory.",
};

/* ---- the driver's stream synchronisation ---- */

/* The binding uses the library's public API only (it may be linked against libwaitio.so, whose
 * internals are hidden): it asks the CUDA driver itself, the one the program already loaded
 * (dlopen with RTLD_NOLOAD: a device array means its producer loaded it), for the two things
 * the library's API does not do: whether a device exists, and a stream's completion. */
typedef int (*cu_int_fn)(int *);
typedef int (*cu_ptr_fn)(void **);
typedef int (*cu_retain_fn)(void **, int);
typedef int (*cu_set_fn)(void *);
typedef int (*cu_sync_fn)(void *);
static struct {
    int loaded, ndev;
    cu_int_fn device_count;
    cu_ptr_fn ctx_get_current;
    cu_retain_fn primary_retain;
    cu_set_fn ctx_set_current;
    cu_sync_fn stream_sync;
} drv;

static const char *driver_name(void)
{
    const char *lib = waitio_adapter_getenv("WAITIO_CUDA_LIBRARY");
    return lib && *lib ? lib : "libcuda.so.1";
}

/* With the GIL. 1 when the program's CUDA driver is loaded and sees a device. */
static int driver_ready(void)
{
    if (drv.loaded)
        return drv.ndev > 0;
    void *h = dlopen(driver_name(), RTLD_NOW | RTLD_NOLOAD);
    if (!h)
        return 0; /* not loaded yet: asked again next time */
    void *f[5] = {dlsym(h, "cuDeviceGetCount"), dlsym(h, "cuCtxGetCurrent"),
                  dlsym(h, "cuDevicePrimaryCtxRetain"), dlsym(h, "cuCtxSetCurrent"),
                  dlsym(h, "cuStreamSynchronize")};
    for (int i = 0; i < 5; i++)
        if (!f[i])
            return 0;
    /* object pointers to function pointers: POSIX dlsym's contract */
    memcpy(&drv.device_count, &f[0], sizeof f[0]);
    memcpy(&drv.ctx_get_current, &f[1], sizeof f[1]);
    memcpy(&drv.primary_retain, &f[2], sizeof f[2]);
    memcpy(&drv.ctx_set_current, &f[3], sizeof f[3]);
    memcpy(&drv.stream_sync, &f[4], sizeof f[4]);
    if (drv.device_count(&drv.ndev) != 0)
        return drv.ndev = 0; /* not initialised yet (no cuInit): asked again next time */
    drv.loaded = 1;
    return drv.ndev > 0;
}

/* Waits for the device array's stream, without the GIL. A thread of the program may hold no
 * current context (CuPy's did not: CUDA_ERROR_INVALID_CONTEXT): device 0's primary context is
 * made current for the wait. */
static int device_stream_sync(uintptr_t stream)
{
    if (!driver_ready()) {
        raise_with(WAITIO_ERR_DEVICE, "cannot wait for the device array's stream: no CUDA driver loaded");
        return -1;
    }
    int rc;
    Py_BEGIN_ALLOW_THREADS
    void *cur = NULL;
    rc = drv.ctx_get_current(&cur);
    if (!rc && !cur && !(rc = drv.primary_retain(&cur, 0)))
        rc = drv.ctx_set_current(cur);
    if (!rc)
        rc = drv.stream_sync((void *)stream);
    Py_END_ALLOW_THREADS
    if (rc) {
        char msg[128];
        snprintf(msg, sizeof msg, "waiting for the device array's stream %#lx failed with CUDA error %d",
                 (unsigned long)stream, rc);
        raise_with(WAITIO_ERR_DEVICE, msg);
        return -1;
    }
    return 0;
}

/* 0 when device memory can be moved; else waitio.Error(WAITIO_ERR_DEVICE). */
static int device_usable(const char *what)
{
    if (driver_ready())
        return 0;
    char msg[512];
    snprintf(msg, sizeof msg, "%s is CUDA device memory, but no CUDA driver with a device is loaded "
             "(%s, WAITIO_CUDA_LIBRARY): copy it to host memory first, or run where the driver is",
             what, driver_name());
    raise_with(WAITIO_ERR_DEVICE, msg);
    return -1;
}

/* ---- shapes, element types ---- */

/* 1 when shape/strides (strides in units of `unit` bytes per step; NULL: C order) describe a
 * C-contiguous array of `itemsize`-byte elements; *nelem receives the element count. 0 for a
 * negative extent or more bytes than a buffer can have. */
static int dims_contiguous(int ndim, const int64_t *shape, const int64_t *strides, int64_t unit, int64_t itemsize,
                           int64_t *nelem)
{
    int64_t n = 1, expect = itemsize;
    int ok = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        if (shape[d] < 0 || (shape[d] > 0 && expect > PY_SSIZE_T_MAX / shape[d]))
            return 0;
        if (strides && shape[d] != 1 && strides[d] * unit != expect)
            ok = 0;
        expect *= shape[d];
        n *= shape[d];
    }
    *nelem = n;
    return ok || n == 0;
}

/* The struct-module format of an element: KIND is the array interface's (i u f c b, else raw
 * bytes), SIZE its bytes, BIG whether it is big-endian (then prefixed '>': the reductions, which
 * take native elements only, refuse it). */
static void element_format(char kind, int64_t size, int big, char out[8])
{
    static const struct {
        char kind;
        int64_t size;
        const char *fmt;
    } map[] = {{'i', 1, "b"}, {'i', 2, "h"}, {'i', 4, "i"}, {'i', 8, "q"}, {'u', 1, "B"},  {'u', 2, "H"},
               {'u', 4, "I"}, {'u', 8, "Q"}, {'f', 2, "e"}, {'f', 4, "f"}, {'f', 8, "d"},  {'c', 8, "Zf"},
               {'c', 16, "Zd"}, {'b', 1, "?"}};
    const char *f = "V"; /* raw bytes of another kind (bfloat16, records): moved, never reduced */
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (map[i].kind == kind && map[i].size == size)
            f = map[i].fmt;
    snprintf(out, 8, "%s%s", big && size > 1 ? ">" : "", f);
}

/* Fills B for the device (or DLPack host) memory [ptr, ptr + nelem * itemsize) held by H (one
 * reference taken over). */
static void hold_fill(Py_buffer *b, DeviceHoldObject *h, void *ptr, int64_t nelem, int64_t itemsize, int readonly)
{
    memset(b, 0, sizeof *b);
    h->nelem = (Py_ssize_t)nelem;
    b->buf = ptr;
    b->obj = (PyObject *)h;
    b->len = (Py_ssize_t)(nelem * itemsize);
    b->itemsize = (Py_ssize_t)itemsize;
    b->readonly = readonly;
    b->ndim = 1;
    b->format = h->format;
    b->shape = &h->nelem;
    b->strides = &b->itemsize;
}

static DeviceHoldObject *hold_new(PyObject *array)
{
    DeviceHoldObject *h = PyObject_New(DeviceHoldObject, &DeviceHoldType);
    if (!h)
        return NULL;
    Py_INCREF(array);
    h->array = array;
    h->legacy = NULL;
    h->versioned = NULL;
    h->nelem = 0;
    h->format[0] = 0;
    return h;
}

static const char NONCONTIG_MSG[] = "device array must be C-contiguous (copy it first: tensor.contiguous(), "
                                    "cupy.ascontiguousarray)";
static const char READONLY_MSG[] = "receive buffer must be writable: the device array is read-only";

/* ---- __cuda_array_interface__ ---- */

/* A sequence of integers as int64s (at most 32). -1 with TypeError otherwise. */
static int int_tuple(PyObject *seq, const char *what, int64_t *out, int *n)
{
    PyObject *fast = PySequence_Fast(seq, what);
    if (!fast)
        return -1;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(fast);
    if (len > 32) {
        Py_DECREF(fast);
        PyErr_Format(PyExc_ValueError, "%s has more than 32 dimensions", what);
        return -1;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        long long v = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(fast, i));
        if (v == -1 && PyErr_Occurred()) {
            Py_DECREF(fast);
            return -1;
        }
        out[i] = v;
    }
    *n = (int)len;
    Py_DECREF(fast);
    return 0;
}

/* The interface's stream (v3): synchronized before the memory is used. None or absent: the
 * producer says no synchronisation is needed; 0 is ambiguous and forbidden by the protocol. */
static int cai_sync(PyObject *cai)
{
    PyObject *stream = PyDict_GetItemString(cai, "stream"); /* borrowed */
    if (!stream || stream == Py_None)
        return 0;
    unsigned long long s = PyLong_AsUnsignedLongLong(stream);
    if (s == (unsigned long long)-1 && PyErr_Occurred())
        return -1;
    if (s == 0) {
        PyErr_SetString(PyExc_ValueError, "__cuda_array_interface__ stream 0 is not allowed (protocol v3)");
        return -1;
    }
    return device_stream_sync((uintptr_t)s);
}

/* Exports OBJ, whose __cuda_array_interface__ is CAI (a dict), into B. */
static int cai_export(PyObject *obj, PyObject *cai, Py_buffer *b, int writable)
{
    if (!PyDict_Check(cai)) {
        PyErr_SetString(PyExc_TypeError, "__cuda_array_interface__ is not a dict");
        return -1;
    }
    PyObject *data = PyDict_GetItemString(cai, "data"), *shape = PyDict_GetItemString(cai, "shape");
    PyObject *typestr = PyDict_GetItemString(cai, "typestr"), *strides = PyDict_GetItemString(cai, "strides");
    PyObject *mask = PyDict_GetItemString(cai, "mask");
    if (!data || !PyTuple_Check(data) || PyTuple_GET_SIZE(data) != 2 || !shape || !typestr ||
        !PyUnicode_Check(typestr)) {
        PyErr_SetString(PyExc_TypeError, "__cuda_array_interface__ lacks data=(pointer, readonly), shape or typestr");
        return -1;
    }
    if (mask && mask != Py_None) {
        PyErr_SetString(PyExc_TypeError, "masked device arrays are not buffers");
        return -1;
    }
    const char *ts = PyUnicode_AsUTF8(typestr);
    if (!ts)
        return -1;
    char *end;
    long itemsize = strlen(ts) >= 3 ? strtol(ts + 2, &end, 10) : 0;
    if (itemsize <= 0 || *end) {
        PyErr_Format(PyExc_TypeError, "__cuda_array_interface__ typestr '%s' is not understood", ts);
        return -1;
    }
    int64_t dims[32], steps[32];
    int nd = 0, ns = 0;
    if (int_tuple(shape, "__cuda_array_interface__ shape", dims, &nd) < 0)
        return -1;
    if (strides && strides != Py_None) {
        if (int_tuple(strides, "__cuda_array_interface__ strides", steps, &ns) < 0)
            return -1;
        if (ns != nd) {
            PyErr_SetString(PyExc_ValueError, "__cuda_array_interface__ strides and shape differ in length");
            return -1;
        }
    }
    int64_t nelem;
    if (!dims_contiguous(nd, dims, ns ? steps : NULL, 1, itemsize, &nelem)) {
        PyErr_SetString(PyExc_ValueError, NONCONTIG_MSG);
        return -1;
    }
    unsigned long long ptr = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(data, 0));
    if (ptr == (unsigned long long)-1 && PyErr_Occurred())
        return -1;
    int readonly = PyObject_IsTrue(PyTuple_GET_ITEM(data, 1));
    if (readonly < 0)
        return -1;
    if (readonly && writable) {
        PyErr_SetString(PyExc_BufferError, READONLY_MSG);
        return -1;
    }
    if (device_usable("the __cuda_array_interface__ array") < 0 || cai_sync(cai) < 0)
        return -1;
    DeviceHoldObject *h = hold_new(obj);
    if (!h)
        return -1;
    element_format(ts[1], itemsize, ts[0] == '>', h->format);
    hold_fill(b, h, (void *)(uintptr_t)ptr, nelem, itemsize, readonly);
    return 0;
}

/* ---- DLPack ---- */

/* obj.__dlpack__(stream=..., max_version=(1, 0)); a producer that predates max_version (a
 * TypeError for the keyword) is asked again without it. */
static PyObject *dlpack_capsule(PyObject *obj, int cuda)
{
    PyObject *fn = PyObject_GetAttrString(obj, "__dlpack__");
    if (!fn)
        return NULL;
    /* the CUDA legacy default stream (1) is the one synchronized after the export; the CPU has none */
    PyObject *kw = cuda ? Py_BuildValue("{s:i,s:(ii)}", "stream", 1, "max_version", 1, 0)
                        : Py_BuildValue("{s:O,s:(ii)}", "stream", Py_None, "max_version", 1, 0);
    PyObject *empty = PyTuple_New(0), *cap = NULL;
    if (kw && empty) {
        cap = PyObject_Call(fn, empty, kw);
        if (!cap && PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyDict_DelItemString(kw, "max_version");
            cap = PyObject_Call(fn, empty, kw);
        }
    }
    Py_XDECREF(empty);
    Py_XDECREF(kw);
    Py_DECREF(fn);
    return cap;
}

/* Checks the tensor T of a consumed capsule and fills B from it (H takes the tensor). */
static int dlpack_fill(Py_buffer *b, DeviceHoldObject *h, const DLTensor_ *t, int readonly)
{
    static const char kinds[] = {[DL_INT] = 'i', [DL_UINT] = 'u', [DL_FLOAT] = 'f', [DL_BFLOAT] = 'V',
                                 [DL_COMPLEX] = 'c', [DL_BOOL] = 'b'};
    if (t->dtype.lanes != 1 || t->dtype.bits % 8 || t->dtype.bits == 0 || t->ndim < 0 || t->ndim > 32) {
        PyErr_Format(PyExc_TypeError, "DLPack tensor of %u-bit x%u elements, %d dimensions is not a buffer",
                     t->dtype.bits, t->dtype.lanes, t->ndim);
        return -1;
    }
    int64_t itemsize = t->dtype.bits / 8, nelem;
    if (!dims_contiguous(t->ndim, t->shape, t->strides, itemsize, itemsize, &nelem)) {
        PyErr_SetString(PyExc_ValueError, NONCONTIG_MSG);
        return -1;
    }
    char kind = t->dtype.code < sizeof kinds && kinds[t->dtype.code] ? kinds[t->dtype.code] : 'V';
    element_format(kind, itemsize, 0, h->format);
    char *data = t->data ? (char *)t->data + t->byte_offset : NULL; /* an empty tensor may have none */
    hold_fill(b, h, data, nelem, itemsize, readonly);
    return 0;
}

/* The DLPack device type of OBJ (its __dlpack_device__()[0]); -1 with an exception set. */
static long dlpack_device_type(PyObject *obj)
{
    PyObject *dev = PyObject_CallMethod(obj, "__dlpack_device__", NULL);
    if (!dev)
        return -1;
    long type = -1;
    if (PyTuple_Check(dev) && PyTuple_GET_SIZE(dev) == 2)
        type = PyLong_AsLong(PyTuple_GET_ITEM(dev, 0)); /* an IntEnum (PyTorch) is an int */
    else
        PyErr_SetString(PyExc_TypeError, "__dlpack_device__() did not return (device_type, device_id)");
    Py_DECREF(dev);
    return type == -1 && !PyErr_Occurred() ? -2 : type;
}

/* Exports OBJ, a DLPack array of device TYPE, into B: the capsule is consumed whatever happens
 * next. */
static int dlpack_export(PyObject *obj, long type, Py_buffer *b, int writable)
{
    int cuda = type == DL_CUDA || type == DL_CUDA_MANAGED;
    if (!cuda && type != DL_CPU && type != DL_CUDA_HOST) {
        PyErr_Format(PyExc_TypeError, "DLPack device type %ld is neither the CPU nor CUDA (a %.100s)", type,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    if (cuda && device_usable("the DLPack array") < 0)
        return -1;
    PyObject *cap = dlpack_capsule(obj, cuda);
    if (!cap)
        return -1;
    DeviceHoldObject *h = hold_new(obj);
    if (!h) {
        Py_DECREF(cap);
        return -1;
    }
    int rc = -1;
    if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
        DLManagedTensorVersioned_ *m = PyCapsule_GetPointer(cap, "dltensor_versioned");
        if (m && PyCapsule_SetName(cap, "used_dltensor_versioned") == 0) {
            h->versioned = m; /* ours now: the deleter runs when the buffer is released */
            if (m->version.major != 1)
                PyErr_Format(PyExc_TypeError, "DLPack version %u.%u is not understood (1.x is)", m->version.major,
                             m->version.minor);
            else if (writable && (m->flags & DL_FLAG_READ_ONLY))
                PyErr_SetString(PyExc_BufferError, READONLY_MSG);
            else if (writable && (m->flags & DL_FLAG_IS_COPIED))
                PyErr_SetString(PyExc_BufferError, "receive buffer must be the array's own memory: its DLPack "
                                                   "export is a copy");
            else
                rc = dlpack_fill(b, h, &m->dl_tensor, (m->flags & DL_FLAG_READ_ONLY) != 0);
        }
    } else if (PyCapsule_IsValid(cap, "dltensor")) {
        DLManagedTensor_ *m = PyCapsule_GetPointer(cap, "dltensor");
        if (m && PyCapsule_SetName(cap, "used_dltensor") == 0) {
            h->legacy = m;
            rc = dlpack_fill(b, h, &m->dl_tensor, 0);
        }
    } else {
        PyErr_SetString(PyExc_TypeError, "__dlpack__ returned no unused \"dltensor\" capsule");
    }
    Py_DECREF(cap);
    if (rc == 0 && cuda && device_stream_sync(1) < 0) /* the stream the producer was told of */
        rc = -1;
    if (rc < 0) {
        if (b->obj == (PyObject *)h)
            b->obj = NULL;
        Py_DECREF(h);
    }
    return rc;
}

/* ---- the entry point for get_buffer ---- */

/* Exports OBJ if it is a device array (or a DLPack array of the CPU): 1 done (B filled), 0 not
 * such an array (no error set), -1 error. ALLOW_DEVICE: whether the operation takes device
 * memory (else a CUDA array is a TypeError that says what to do). B is zeroed first.
 * DLPack first: its producer orders its own stream's pending work before the stream the
 * consumer names, which PyTorch's __cuda_array_interface__ (version 2, no stream) cannot say. */
static int device_buffer(PyObject *obj, Py_buffer *b, int writable, int allow_device)
{
    memset(b, 0, sizeof *b);
    if (PyObject_HasAttrString(obj, "__dlpack_device__") && PyObject_HasAttrString(obj, "__dlpack__")) {
        long type = dlpack_device_type(obj);
        if (type == -1)
            return -1;
        if (!allow_device && type != DL_CPU && type != DL_CUDA_HOST) {
            PyErr_Format(PyExc_TypeError, "this operation takes host memory only, not a device array (%.100s, "
                         "DLPack device type %ld): copy it to the host first", Py_TYPE(obj)->tp_name, type);
            return -1;
        }
        return dlpack_export(obj, type, b, writable) < 0 ? -1 : 1;
    }
    PyObject *cai = PyObject_GetAttrString(obj, "__cuda_array_interface__");
    if (!cai) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return -1; /* e.g. PyTorch's "requires grad: use detach()" */
        PyErr_Clear();
        return 0;
    }
    int rc = -1;
    if (!allow_device)
        PyErr_Format(PyExc_TypeError, "this operation takes host memory only, not a CUDA device array "
                     "(%.100s): copy it to the host first", Py_TYPE(obj)->tp_name);
    else
        rc = cai_export(obj, cai, b, writable);
    Py_DECREF(cai);
    return rc < 0 ? -1 : 1;
}
