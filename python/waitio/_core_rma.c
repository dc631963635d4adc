/*
 * _core_rma.c — the one-sided part of the compiled binding (waitio_rma.h), included by _core.c
 * (one translation unit: it shares the lock, the error helpers and the Request type).
 *
 * Window: a window of a group. Its part of this process is exported through the buffer protocol
 * (np.frombuffer(win, dtype)), counted, so that free() refuses while a view exists. put/get are
 * blocking (GIL released while the library may wait), iput/iget return a Request that keeps the
 * buffer exported until completion; atomics take a dtype name; wait_until waits on a word of
 * this process's part. put_nbi/get_nbi leave completion to flush/quiet; put_strided/get_strided
 * take one-dimensional strided buffers.
 *
 * Future: the future of a one-sided operation, call, non-blocking collective or distributed
 * object access (waitio_*_fut, waitio_dobj_*), for futures.py's waitio.Future; wait_any waits for
 * the first of several.
 *
 * Remote procedure calls: handlers are Python callables fn(origin, args: bytes) -> bytes-like or
 * None, registered with WAITIO_RPC_IN_CALLER: they run inside this program's own WaitIO calls
 * (never on the progress thread, which could not take the GIL while a Python thread holding it
 * waits for the library). An exception in a handler fails the caller's request (WAITIO_ERR_RPC)
 * and is printed here.
 */
#include "waitio_rma.h"

/* ---- Future: a future of the C library (waitio_future_t, "futures" in waitio_rma.h) ----
 *
 * The Python futures (futures.py) drive it with test() (one progress round) and wait_any; its
 * value() is the bytes the operation returned (a reply, an old word, a lookup's handle). It keeps
 * the buffers the operation uses exported until it completes; one deallocated while pending keeps
 * them (leaked rather than freed under the library) and hands the handle back to the library,
 * which keeps what it still needs. */
typedef struct {
    PyObject_HEAD
    waitio_future_t f;
    Py_buffer buf[2];
    int nbuf;
    int done;
    int error;
    unsigned long session; /* wio_session when made: finalize frees every handle of the library */
} FutureObject;

static unsigned long wio_session; /* finalizations so far (m_finalize counts them) */

/* Whether O's handle is still the library's (it was made before the last finalize: no). */
static int future_live(const FutureObject *o) { return o->f && o->session == wio_session; }

static PyTypeObject FutureType;

static FutureObject *future_new(void)
{
    FutureObject *o = PyObject_New(FutureObject, &FutureType);
    if (!o)
        return NULL;
    o->f = NULL;
    o->nbuf = 0;
    o->done = 0;
    o->error = 0;
    o->session = wio_session;
    return o;
}

/* Exports OBJ into the future's next buffer slot (kept until completion); DEVICE_OK: a device
 * array too (the operation's C call takes device memory). */
static int future_hold_dev(FutureObject *o, PyObject *obj, int writable, int device_ok)
{
    if (get_buffer_dev(obj, &o->buf[o->nbuf], writable, device_ok) < 0)
        return -1;
    o->nbuf++;
    return 0;
}

static int future_hold(FutureObject *o, PyObject *obj, int writable) { return future_hold_dev(o, obj, writable, 0); }

static void future_release_bufs(FutureObject *o)
{
    while (o->nbuf > 0)
        PyBuffer_Release(&o->buf[--o->nbuf]);
}

/* The operation's start: rc is its result. On failure the future is dropped and rc raised. */
static PyObject *future_started(FutureObject *o, int rc)
{
    if (rc) {
        o->done = 1; /* never started: its buffers are free again */
        Py_DECREF(o);
        return raise_code(rc);
    }
    return (PyObject *)o;
}

static void future_mark(FutureObject *o, int err)
{
    o->done = 1;
    o->error = err;
    future_release_bufs(o);
}

static void future_dealloc(FutureObject *o)
{
    if (o->done || !future_live(o))
        future_release_bufs(o); /* the library no longer uses them */
    if (future_live(o)) {
        lock_gil();
        waitio_future_release(o->f);
        unlock();
    }
    Py_TYPE(o)->tp_free((PyObject *)o);
}

static PyObject *future_test(FutureObject *o, PyObject *noargs)
{
    (void)noargs;
    if (!o->done && !future_live(o))
        future_mark(o, WAITIO_ERR_STATE); /* WaitIO was finalized meanwhile */
    if (!o->done) {
        int flag = 0, rc, err = 0;
        lock_gil();
        rc = waitio_future_test(o->f, &flag);
        if (!rc && flag)
            err = waitio_future_error(o->f);
        unlock();
        if (rc)
            return raise_code(rc);
        if (!flag)
            Py_RETURN_FALSE;
        future_mark(o, err);
    }
    if (o->error)
        return raise_req(o->error);
    Py_RETURN_TRUE;
}

/* ready(): as test(), without the progress round (futures.py makes one for all, then looks). */
static PyObject *future_ready(FutureObject *o, PyObject *noargs)
{
    (void)noargs;
    if (!o->done && !future_live(o))
        future_mark(o, WAITIO_ERR_STATE);
    if (!o->done) {
        int ready, err = 0;
        lock_gil();
        ready = waitio_future_ready(o->f);
        if (ready)
            err = waitio_future_error(o->f);
        unlock();
        if (!ready)
            Py_RETURN_FALSE;
        future_mark(o, err);
    }
    if (o->error)
        return raise_req(o->error);
    Py_RETURN_TRUE;
}

static PyObject *future_value(FutureObject *o, PyObject *noargs)
{
    (void)noargs;
    const void *v = NULL;
    size_t n = 0;
    int rc;
    if (!o->done || o->error || !future_live(o))
        return PyBytes_FromStringAndSize(NULL, 0);
    LOCKED(rc, waitio_future_value(o->f, &v, &n));
    if (rc)
        return raise_code(rc);
    return PyBytes_FromStringAndSize(v, (Py_ssize_t)n);
}

/* (rank, id, size) of a completed waitio_dobj_lookup future's handle */
static PyObject *future_dobj(FutureObject *o, PyObject *noargs)
{
    (void)noargs;
    const void *v = NULL;
    size_t n = 0;
    int rc = 0;
    if (o->done && !o->error && future_live(o))
        LOCKED(rc, waitio_future_value(o->f, &v, &n));
    if (rc)
        return raise_code(rc);
    if (!v || n != sizeof(waitio_dobj_t)) {
        PyErr_SetString(PyExc_ValueError, "not the completed future of a distributed object's lookup");
        return NULL;
    }
    waitio_dobj_t d;
    memcpy(&d, v, sizeof d);
    return Py_BuildValue("(ikK)", d.rank, (unsigned long)d.id, (unsigned long long)d.size);
}

static PyMethodDef future_methods[] = {
    {"test", (PyCFunction)future_test, METH_NOARGS,
     "test($self, /)\n--\n\nOne progress round; True once complete. Raises waitio.Error if it failed."},
    {"ready", (PyCFunction)future_ready, METH_NOARGS,
     "ready($self, /)\n--\n\nAs test(), without a progress round."},
    {"value", (PyCFunction)future_value, METH_NOARGS,
     "value($self, /)\n--\n\nThe bytes the completed operation returned (b'' if none, pending or failed)."},
    {"dobj", (PyCFunction)future_dobj, METH_NOARGS,
     "dobj($self, /)\n--\n\n(rank, id, size) of the object a completed lookup found."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject FutureType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "waitio._core.Future",
    .tp_basicsize = sizeof(FutureObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A future of the C library; keeps the buffers of its operation exported until it completes.",
    .tp_dealloc = (destructor)future_dealloc,
    .tp_methods = future_methods,
};

typedef struct {
    PyObject_HEAD
    waitio_win_t w;
    PyObject *group;      /* the Group it was created over (kept alive) */
    void *base;
    size_t size;
    Py_buffer user;       /* win_create: the exposed buffer, exported until free */
    int has_user;
    Py_ssize_t exports;   /* views of this part handed out */
    int device;           /* this part is device memory: no host views, a CUDA array interface */
} WindowObject;

static PyTypeObject WindowType;

static int window_live(WindowObject *self)
{
    if (self->w)
        return 0;
    PyErr_SetString(PyExc_ValueError, "the window was freed");
    return -1;
}

static PyObject *window_wrap(waitio_win_t w, PyObject *group, int device)
{
    WindowObject *o = PyObject_New(WindowObject, &WindowType);
    if (!o)
        return NULL;
    o->w = w;
    o->group = group;
    Py_INCREF(group);
    o->base = NULL;
    o->size = 0;
    o->has_user = 0;
    o->exports = 0;
    o->device = device;
    int rc;
    LOCKED(rc, waitio_win_base(w, &o->base, &o->size));
    (void)rc;
    return (PyObject *)o;
}

static PyObject *m_win_allocate(PyObject *mod, PyObject *args)
{
    (void)mod;
    GroupObject *g;
    Py_ssize_t size;
    int device = 0;
    if (!PyArg_ParseTuple(args, "O!n|p:win_allocate", &GroupType, &g, &size, &device))
        return NULL;
    if (size < 0) {
        PyErr_SetString(PyExc_ValueError, "size must not be negative");
        return NULL;
    }
    waitio_win_t w = NULL;
    void *base = NULL;
    int rc;
    /* device: each member's part is cuMemAlloc'ed (WAITIO_ERR_DEVICE on all without a driver) */
    BLOCKING(rc, waitio_win_allocate_ex(g->g, (size_t)size, device ? WAITIO_WIN_DEVICE : 0, &w, &base));
    if (rc)
        return raise_code(rc);
    return window_wrap(w, (PyObject *)g, device);
}

static PyObject *m_win_create(PyObject *mod, PyObject *args)
{
    (void)mod;
    GroupObject *g;
    PyObject *obj;
    if (!PyArg_ParseTuple(args, "O!O:win_create", &GroupType, &g, &obj))
        return NULL;
    Py_buffer b;
    if (get_buffer_dev(obj, &b, 1, 1) < 0) /* a device array too: the library detects it */
        return NULL;
    int device = b.obj && Py_TYPE(b.obj) == &DeviceHoldType; /* exported by _core_dev.c */
    waitio_win_t w = NULL;
    int rc;
    BLOCKING(rc, waitio_win_create(g->g, b.buf, (size_t)b.len, &w));
    if (rc) {
        PyBuffer_Release(&b);
        return raise_code(rc);
    }
    WindowObject *o = (WindowObject *)window_wrap(w, (PyObject *)g, device);
    if (!o) {
        PyBuffer_Release(&b);
        return NULL;
    }
    o->user = b;
    o->has_user = 1;
    return (PyObject *)o;
}

static int window_getbuffer(WindowObject *self, Py_buffer *view, int flags)
{
    if (window_live(self) < 0)
        return -1;
    if (self->device) { /* a host view of device memory would crash at its first read */
        PyErr_SetString(PyExc_BufferError, "the window's part is device memory: view it through its "
                        "__cuda_array_interface__ (CuPy, PyTorch, Numba) or move it with put/get");
        return -1;
    }
    if (PyBuffer_FillInfo(view, (PyObject *)self, self->base, (Py_ssize_t)self->size, 0, flags) < 0)
        return -1;
    self->exports++;
    return 0;
}

static void window_releasebuffer(WindowObject *self, Py_buffer *view)
{
    (void)view;
    self->exports--;
}

static PyBufferProcs window_as_buffer = {
    (getbufferproc)window_getbuffer,
    (releasebufferproc)window_releasebuffer,
};

static PyObject *window_free(WindowObject *self, PyObject *noargs)
{
    (void)noargs;
    if (window_live(self) < 0)
        return NULL;
    if (self->exports > 0) {
        PyErr_Format(PyExc_BufferError, "the window's memory is still exported (%zd views, e.g. NumPy "
                     "arrays over it): release them before free()", self->exports);
        return NULL;
    }
    int rc;
    BLOCKING(rc, waitio_win_free(self->w));
    self->w = NULL;
    if (self->has_user) {
        PyBuffer_Release(&self->user);
        self->has_user = 0;
    }
    if (rc)
        return raise_code(rc);
    Py_RETURN_NONE;
}

static void window_dealloc(WindowObject *self)
{
    /* a window not freed stays in the library (freeing is collective); its memory too */
    if (self->has_user && !self->w)
        PyBuffer_Release(&self->user);
    Py_XDECREF(self->group);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int parse_win_rank(WindowObject *self, PyObject *obj, int *rank)
{
    return parse_rank(((GroupObject *)self->group)->size, obj, "target", 0, rank);
}

static int parse_offset(Py_ssize_t off)
{
    if (off < 0) {
        PyErr_SetString(PyExc_ValueError, "offset must not be negative");
        return -1;
    }
    return 0;
}

static PyObject *window_put(WindowObject *self, PyObject *args)
{
    PyObject *tobj, *obj;
    Py_ssize_t off;
    int rank, rc;
    if (!PyArg_ParseTuple(args, "OnO:put", &tobj, &off, &obj) || window_live(self) < 0 ||
        parse_win_rank(self, tobj, &rank) < 0 || parse_offset(off) < 0)
        return NULL;
    Py_buffer b;
    if (get_buffer_dev(obj, &b, 0, 1) < 0) /* device memory too: the library copies with the GPU */
        return NULL;
    BLOCKING(rc, waitio_put(self->w, rank, (size_t)off, b.buf, (size_t)b.len));
    PyBuffer_Release(&b);
    if (rc)
        return raise_code(rc);
    Py_RETURN_NONE;
}

static PyObject *window_get(WindowObject *self, PyObject *args)
{
    PyObject *tobj, *obj;
    Py_ssize_t off;
    int rank, rc;
    if (!PyArg_ParseTuple(args, "OnO:get", &tobj, &off, &obj) || window_live(self) < 0 ||
        parse_win_rank(self, tobj, &rank) < 0 || parse_offset(off) < 0)
        return NULL;
    Py_buffer b;
    if (get_buffer_dev(obj, &b, 1, 1) < 0)
        return NULL;
    BLOCKING(rc, waitio_get(self->w, rank, (size_t)off, b.buf, (size_t)b.len));
    PyBuffer_Release(&b);
    if (rc)
        return raise_code(rc);
    Py_RETURN_NONE;
}

static PyObject *window_inonblocking(WindowObject *self, PyObject *args, int is_put)
{
    PyObject *tobj, *obj;
    Py_ssize_t off;
    int rank, rc;
    if (!PyArg_ParseTuple(args, is_put ? "OnO:iput" : "OnO:iget", &tobj, &off, &obj) || window_live(self) < 0 ||
        parse_win_rank(self, tobj, &rank) < 0 || parse_offset(off) < 0)
        return NULL;
    RequestObject *r = new_request(obj, !is_put, 1);
    if (!r)
        return NULL;
    LOCKED(rc, is_put ? waitio_iput(self->w, rank, (size_t)off, r->buf.buf, (size_t)r->buf.len, &r->req)
                      : waitio_iget(self->w, rank, (size_t)off, r->buf.buf, (size_t)r->buf.len, &r->req));
    if (rc) {
        request_complete(r, rc); /* never started: the buffer is free again */
        Py_DECREF(r);
        return raise_code(rc);
    }
    return (PyObject *)r;
}

static PyObject *window_iput(WindowObject *self, PyObject *args) { return window_inonblocking(self, args, 1); }
static PyObject *window_iget(WindowObject *self, PyObject *args) { return window_inonblocking(self, args, 0); }

/* dtype names of the atomics: the library's type and the size of a value */
static int amo_type(const char *name, int *type)
{
    static const struct { const char *n; int t; } types[] = {
        {"int32", WAITIO_AMO_INT32}, {"int64", WAITIO_AMO_INT64}, {"uint32", WAITIO_AMO_UINT32},
        {"uint64", WAITIO_AMO_UINT64}, {"float32", WAITIO_AMO_FLOAT}, {"float64", WAITIO_AMO_DOUBLE},
    };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (!strcmp(name, types[i].n)) {
            *type = types[i].t;
            return 0;
        }
    PyErr_Format(PyExc_ValueError, "dtype must be int32, int64, uint32, uint64, float32 or float64, not '%s'", name);
    return -1;
}

/* A Python number as the value of an atomic of `type` (8 bytes, the low `size` ones used). */
static int amo_value(PyObject *obj, int type, uint64_t *out)
{
    *out = 0;
    if (!obj || obj == Py_None)
        return 0;
    if (type == WAITIO_AMO_FLOAT || type == WAITIO_AMO_DOUBLE) {
        double d = PyFloat_AsDouble(obj);
        if (d == -1.0 && PyErr_Occurred())
            return -1;
        if (type == WAITIO_AMO_FLOAT) {
            float f = (float)d;
            memcpy(out, &f, 4);
        } else {
            memcpy(out, &d, 8);
        }
        return 0;
    }
    PyObject *i = PyNumber_Index(obj);
    if (!i)
        return -1;
    int overflow = 0;
    long long sv = PyLong_AsLongLongAndOverflow(i, &overflow);
    uint64_t v = overflow > 0 ? PyLong_AsUnsignedLongLong(i) : (uint64_t)sv;
    Py_DECREF(i);
    if (overflow < 0)
        PyErr_SetString(PyExc_OverflowError, "value does not fit 64 bits");
    if (PyErr_Occurred())
        return -1;
    if (type == WAITIO_AMO_INT32 || type == WAITIO_AMO_UINT32) {
        uint32_t v32 = (uint32_t)v;
        memcpy(out, &v32, 4);
    } else {
        memcpy(out, &v, 8);
    }
    return 0;
}

static PyObject *amo_result(const void *p, int type)
{
    switch (type) {
    case WAITIO_AMO_INT32: { int32_t v; memcpy(&v, p, 4); return PyLong_FromLong(v); }
    case WAITIO_AMO_UINT32: { uint32_t v; memcpy(&v, p, 4); return PyLong_FromUnsignedLong(v); }
    case WAITIO_AMO_INT64: { int64_t v; memcpy(&v, p, 8); return PyLong_FromLongLong(v); }
    case WAITIO_AMO_UINT64: { uint64_t v; memcpy(&v, p, 8); return PyLong_FromUnsignedLongLong(v); }
    case WAITIO_AMO_FLOAT: { float v; memcpy(&v, p, 4); return PyFloat_FromDouble(v); }
    default: { double v; memcpy(&v, p, 8); return PyFloat_FromDouble(v); }
    }
}

static PyObject *window_atomic(WindowObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"op", "target", "offset", "value", "compare", "dtype", "fetch", NULL};
    int op, rank, type, fetch = 1;
    PyObject *tobj, *vobj = Py_None, *cobj = Py_None;
    Py_ssize_t off;
    const char *dtype = "int64";
    if (!PyArg_ParseTupleAndKeywords(args, kw, "iOn|OOsp:atomic", names, &op, &tobj, &off, &vobj, &cobj, &dtype,
                                     &fetch) ||
        window_live(self) < 0 || parse_win_rank(self, tobj, &rank) < 0 || parse_offset(off) < 0 ||
        amo_type(dtype, &type) < 0)
        return NULL;
    uint64_t v, c, result = 0;
    if (amo_value(vobj, type, &v) < 0 || amo_value(cobj, type, &c) < 0)
        return NULL;
    if (op == WAITIO_AMO_FETCH)
        fetch = 1;
    int rc;
    BLOCKING(rc, waitio_atomic(self->w, rank, (size_t)off, op, type, &v, &c, fetch ? &result : NULL));
    if (rc)
        return raise_code(rc);
    if (!fetch)
        Py_RETURN_NONE;
    return amo_result(&result, type);
}

/* put_nbi / get_nbi (target, offset, buf): started and left to waitio_flush / waitio_quiet. The
 * buffer is released here at once: the Python layer keeps a memoryview of it (an export) until
 * that completion, so its memory can neither move nor be freed meanwhile. */
static PyObject *window_nbi(WindowObject *self, PyObject *args, int is_put)
{
    PyObject *tobj, *obj;
    Py_ssize_t off;
    int rank, rc;
    if (!PyArg_ParseTuple(args, is_put ? "OnO:put_nbi" : "OnO:get_nbi", &tobj, &off, &obj) ||
        window_live(self) < 0 || parse_win_rank(self, tobj, &rank) < 0 || parse_offset(off) < 0)
        return NULL;
    Py_buffer b;
    if (get_buffer(obj, &b, !is_put) < 0)
        return NULL;
    LOCKED(rc, is_put ? waitio_put_nbi(self->w, rank, (size_t)off, b.buf, (size_t)b.len)
                      : waitio_get_nbi(self->w, rank, (size_t)off, b.buf, (size_t)b.len));
    PyBuffer_Release(&b);
    if (rc)
        return raise_code(rc);
    Py_RETURN_NONE;
}

static PyObject *window_put_nbi(WindowObject *self, PyObject *args) { return window_nbi(self, args, 1); }
static PyObject *window_get_nbi(WindowObject *self, PyObject *args) { return window_nbi(self, args, 0); }

/* put_strided / get_strided (target, offset, target_stride, buf): the elements of the
 * one-dimensional, possibly strided buffer `buf` (a NumPy slice like a[::3], a memoryview cast),
 * element i at offset + i*target_stride on the target (waitio_put_strided / get_strided; blocking). */
static PyObject *window_strided(WindowObject *self, PyObject *args, int is_put)
{
    PyObject *tobj, *obj;
    Py_ssize_t off, tstride;
    int rank, rc;
    if (!PyArg_ParseTuple(args, is_put ? "OnnO:put_strided" : "OnnO:get_strided", &tobj, &off, &tstride, &obj) ||
        window_live(self) < 0 || parse_win_rank(self, tobj, &rank) < 0 || parse_offset(off) < 0)
        return NULL;
    if (!PyObject_CheckBuffer(obj)) {
        PyErr_Format(PyExc_TypeError, "expected a buffer-protocol object, not %.100s", Py_TYPE(obj)->tp_name);
        return NULL;
    }
    Py_buffer b;
    if (PyObject_GetBuffer(obj, &b, is_put ? PyBUF_STRIDED_RO : PyBUF_STRIDED) < 0)
        return NULL;
    if (b.ndim > 1) {
        PyBuffer_Release(&b);
        PyErr_SetString(PyExc_ValueError, "a strided transfer takes a one-dimensional buffer (one stride)");
        return NULL;
    }
    size_t n = b.ndim == 1 ? (size_t)b.shape[0] : 1;
    ptrdiff_t lstride = b.ndim == 1 ? (ptrdiff_t)b.strides[0] : b.itemsize;
    BLOCKING(rc, is_put ? waitio_put_strided(self->w, rank, (size_t)off, (ptrdiff_t)tstride, b.buf, lstride,
                                             (size_t)b.itemsize, n)
                        : waitio_get_strided(self->w, rank, (size_t)off, (ptrdiff_t)tstride, b.buf, lstride,
                                             (size_t)b.itemsize, n));
    PyBuffer_Release(&b);
    if (rc)
        return raise_code(rc);
    Py_RETURN_NONE;
}

static PyObject *window_put_strided(WindowObject *self, PyObject *args) { return window_strided(self, args, 1); }
static PyObject *window_get_strided(WindowObject *self, PyObject *args) { return window_strided(self, args, 0); }

/* ---- futures of one-sided operations (waitio_put_fut, _get_fut, _atomic_fut) ---- */

static PyObject *window_xfer_f(WindowObject *self, PyObject *args, int is_put)
{
    PyObject *tobj, *obj;
    Py_ssize_t off;
    int rank, rc;
    if (!PyArg_ParseTuple(args, is_put ? "OnO:put_f" : "OnO:get_f", &tobj, &off, &obj) || window_live(self) < 0 ||
        parse_win_rank(self, tobj, &rank) < 0 || parse_offset(off) < 0)
        return NULL;
    FutureObject *o = future_new();
    if (!o)
        return NULL;
    if (future_hold_dev(o, obj, !is_put, 1) < 0) {
        Py_DECREF(o);
        return NULL;
    }
    void *p = o->buf[0].buf;
    size_t n = (size_t)o->buf[0].len;
    LOCKED(rc, is_put ? waitio_put_fut(self->w, rank, (size_t)off, p, n, &o->f)
                      : waitio_get_fut(self->w, rank, (size_t)off, p, n, &o->f));
    return future_started(o, rc);
}

static PyObject *window_put_f(WindowObject *self, PyObject *args) { return window_xfer_f(self, args, 1); }
static PyObject *window_get_f(WindowObject *self, PyObject *args) { return window_xfer_f(self, args, 0); }

static PyObject *window_atomic_f(WindowObject *self, PyObject *args)
{
    int op, rank, type, rc;
    PyObject *tobj, *vobj, *cobj;
    Py_ssize_t off;
    const char *dtype;
    if (!PyArg_ParseTuple(args, "iOnOOs:atomic_f", &op, &tobj, &off, &vobj, &cobj, &dtype) ||
        window_live(self) < 0 || parse_win_rank(self, tobj, &rank) < 0 || parse_offset(off) < 0 ||
        amo_type(dtype, &type) < 0)
        return NULL;
    uint64_t v, c;
    if (amo_value(vobj, type, &v) < 0 || amo_value(cobj, type, &c) < 0)
        return NULL;
    FutureObject *o = future_new();
    if (!o)
        return NULL;
    LOCKED(rc, waitio_atomic_fut(self->w, rank, (size_t)off, op, type, &v, &c, &o->f));
    return future_started(o, rc);
}

static PyObject *window_flush(WindowObject *self, PyObject *args)
{
    PyObject *tobj;
    int rank, rc;
    if (!PyArg_ParseTuple(args, "O:flush", &tobj) || window_live(self) < 0 || parse_win_rank(self, tobj, &rank) < 0)
        return NULL;
    BLOCKING(rc, waitio_flush(self->w, rank));
    if (rc)
        return raise_code(rc);
    Py_RETURN_NONE;
}

static PyObject *window_put_signal(WindowObject *self, PyObject *args)
{
    PyObject *tobj, *obj;
    Py_ssize_t off, soff;
    unsigned long long signal;
    int rank, sig_op, rc;
    if (!PyArg_ParseTuple(args, "OnOnKi:put_signal", &tobj, &off, &obj, &soff, &signal, &sig_op) ||
        window_live(self) < 0 || parse_win_rank(self, tobj, &rank) < 0 || parse_offset(off) < 0 ||
        parse_offset(soff) < 0)
        return NULL;
    Py_buffer b;
    if (get_buffer(obj, &b, 0) < 0)
        return NULL;
    BLOCKING(rc, waitio_put_signal(self->w, rank, (size_t)off, b.buf, (size_t)b.len, self->w, (size_t)soff,
                                   (uint64_t)signal, sig_op));
    PyBuffer_Release(&b);
    if (rc)
        return raise_code(rc);
    Py_RETURN_NONE;
}

static PyObject *window_wait_until(WindowObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"offset", "cmp", "value", "dtype", "timeout", NULL};
    Py_ssize_t off;
    int cmp, type;
    PyObject *vobj;
    const char *dtype = "int64";
    double timeout = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "niO|sd:wait_until", names, &off, &cmp, &vobj, &dtype, &timeout) ||
        window_live(self) < 0 || parse_offset(off) < 0 || amo_type(dtype, &type) < 0)
        return NULL;
    size_t size = type == WAITIO_AMO_INT32 || type == WAITIO_AMO_UINT32 ? 4 : 8;
    if (type == WAITIO_AMO_FLOAT || type == WAITIO_AMO_DOUBLE) {
        PyErr_SetString(PyExc_ValueError, "wait_until waits on integer words");
        return NULL;
    }
    if ((size_t)off > self->size || size > self->size - (size_t)off || (size_t)off % size) {
        PyErr_Format(PyExc_ValueError, "offset %zd is not an aligned %zu-byte word of this part (%zu bytes)", off,
                     size, self->size);
        return NULL;
    }
    uint64_t v;
    if (amo_value(vobj, type, &v) < 0)
        return NULL;
    const uint8_t *word = (const uint8_t *)self->base + off;
    /* in slices, so that Ctrl-C is seen */
    for (;;) {
        int rc;
        double slice = timeout < 0 || timeout > 0.05 ? 0.05 : timeout;
        BLOCKING(rc, waitio_wait_until(word, type, cmp, &v, slice));
        if (rc == 0)
            Py_RETURN_NONE;
        if (rc != WAITIO_ERR_TIMEOUT)
            return raise_code(rc);
        if (timeout >= 0 && (timeout -= slice) <= 0)
            return raise_code(rc);
        if (PyErr_CheckSignals() < 0)
            return NULL;
    }
}

static PyObject *window_memory(WindowObject *self, PyObject *noargs)
{
    (void)noargs;
    if (window_live(self) < 0)
        return NULL;
    return PyMemoryView_FromObject((PyObject *)self); /* holds an export of the window */
}

static PyObject *window_target_size(WindowObject *self, PyObject *args)
{
    PyObject *tobj;
    int rank, rc;
    size_t size = 0;
    if (!PyArg_ParseTuple(args, "O:target_size", &tobj) || window_live(self) < 0 ||
        parse_win_rank(self, tobj, &rank) < 0)
        return NULL;
    LOCKED(rc, waitio_win_size(self->w, rank, &size));
    if (rc)
        return raise_code(rc);
    return PyLong_FromSize_t(size);
}

static PyObject *window_size(WindowObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromSize_t(self->size);
}

static PyObject *window_device(WindowObject *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(self->device);
}

/* A device part as a CUDA array of bytes (version 3, no stream: the library's copies are
 * synchronous); AttributeError for a host part, so that consumers see no such interface. */
static PyObject *window_cuda_array_interface(WindowObject *self, void *closure)
{
    (void)closure;
    if (!self->device) {
        PyErr_SetString(PyExc_AttributeError, "a host window has no __cuda_array_interface__");
        return NULL;
    }
    if (window_live(self) < 0)
        return NULL;
    return Py_BuildValue("{s:i,s:(n),s:s,s:(Ni),s:O,s:O}", "version", 3, "shape", (Py_ssize_t)self->size,
                         "typestr", "|u1", "data", PyLong_FromVoidPtr(self->base), 0, "strides",
                         Py_None, "stream", Py_None);
}

static PyObject *window_group(WindowObject *self, void *closure)
{
    (void)closure;
    Py_INCREF(self->group);
    return self->group;
}

static PyMethodDef window_methods[] = {
    {"put", (PyCFunction)window_put, METH_VARARGS,
     "put($self, target, offset, buf, /)\n--\n\nCopy buf to byte offset of target's part; returns when buf may be reused."},
    {"get", (PyCFunction)window_get, METH_VARARGS,
     "get($self, target, offset, buf, /)\n--\n\nCopy len(buf) bytes from offset of target's part into the writable buf."},
    {"iput", (PyCFunction)window_iput, METH_VARARGS,
     "iput($self, target, offset, buf, /)\n--\n\nStart a put; the Request completes when buf may be reused."},
    {"iget", (PyCFunction)window_iget, METH_VARARGS,
     "iget($self, target, offset, buf, /)\n--\n\nStart a get; the Request completes when buf holds the data."},
    {"atomic", (PyCFunction)(void (*)(void))window_atomic, METH_VARARGS | METH_KEYWORDS,
     "atomic($self, /, op, target, offset, value=None, compare=None, dtype='int64', fetch=True)\n--\n\n"
     "Atomic op (AMO_*) on the word at offset of target's part; returns the old value when fetch."},
    {"put_nbi", (PyCFunction)window_put_nbi, METH_VARARGS,
     "put_nbi($self, target, offset, buf, /)\n--\n\nStart a put completed by flush/quiet (buf unchanged until then)."},
    {"get_nbi", (PyCFunction)window_get_nbi, METH_VARARGS,
     "get_nbi($self, target, offset, buf, /)\n--\n\nStart a get completed by flush/quiet (buf filled then)."},
    {"put_strided", (PyCFunction)window_put_strided, METH_VARARGS,
     "put_strided($self, target, offset, target_stride, buf, /)\n--\n\n"
     "Put the elements of the 1-D strided buf, element i to offset + i*target_stride (blocking)."},
    {"get_strided", (PyCFunction)window_get_strided, METH_VARARGS,
     "get_strided($self, target, offset, target_stride, buf, /)\n--\n\n"
     "Fill the elements of the writable 1-D strided buf from offset + i*target_stride (blocking)."},
    {"put_f", (PyCFunction)window_put_f, METH_VARARGS,
     "put_f($self, target, offset, buf, /)\n--\n\nA Future of a put, complete once the data is in the target's memory."},
    {"get_f", (PyCFunction)window_get_f, METH_VARARGS,
     "get_f($self, target, offset, buf, /)\n--\n\nA Future of a get, complete once buf holds the data."},
    {"atomic_f", (PyCFunction)window_atomic_f, METH_VARARGS,
     "atomic_f($self, op, target, offset, value, compare, dtype, /)\n--\n\n"
     "A Future of a fetching atomic; its value() is the old word."},
    {"flush", (PyCFunction)window_flush, METH_VARARGS,
     "flush($self, target, /)\n--\n\nComplete every earlier operation of this process on target."},
    {"put_signal", (PyCFunction)window_put_signal, METH_VARARGS,
     "put_signal($self, target, offset, buf, sig_offset, signal, sig_op, /)\n--\n\n"
     "Put buf, then set or add (SIGNAL_SET / SIGNAL_ADD) the 64-bit word at sig_offset on target."},
    {"wait_until", (PyCFunction)(void (*)(void))window_wait_until, METH_VARARGS | METH_KEYWORDS,
     "wait_until($self, /, offset, cmp, value, dtype='int64', timeout=-1.0)\n--\n\n"
     "Wait until the word at offset of this process's part compares (CMP_*) with value."},
    {"memory", (PyCFunction)window_memory, METH_NOARGS,
     "memory($self, /)\n--\n\nA writable memoryview of this process's part (free() is refused while one exists)."},
    {"target_size", (PyCFunction)window_target_size, METH_VARARGS,
     "target_size($self, target, /)\n--\n\nThe size of target's part."},
    {"free", (PyCFunction)window_free, METH_NOARGS,
     "free($self, /)\n--\n\nRelease the window (collective; no view of its memory may remain)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef window_getset[] = {
    {"size", (getter)window_size, NULL, "Bytes of this process's part.", NULL},
    {"group", (getter)window_group, NULL, "The Group the window was created over.", NULL},
    {"device", (getter)window_device, NULL, "Whether this process's part is device (GPU) memory.", NULL},
    {"__cuda_array_interface__", (getter)window_cuda_array_interface, NULL,
     "A device part as a CUDA array of bytes (device windows only).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject WindowType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "waitio._core.Window",
    .tp_basicsize = sizeof(WindowObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A WaitIO window; its part of this process is a buffer (np.frombuffer(win, dtype)).",
    .tp_dealloc = (destructor)window_dealloc,
    .tp_as_buffer = &window_as_buffer,
    .tp_methods = window_methods,
    .tp_getset = window_getset,
};

/* ---- completion and progress ---- */

static PyObject *m_quiet(PyObject *mod, PyObject *noargs)
{
    (void)mod;
    (void)noargs;
    int rc;
    BLOCKING(rc, waitio_quiet());
    if (rc)
        return raise_code(rc);
    Py_RETURN_NONE;
}

static PyObject *m_fence(PyObject *mod, PyObject *noargs)
{
    (void)mod;
    (void)noargs;
    int rc;
    BLOCKING(rc, waitio_fence());
    if (rc)
        return raise_code(rc);
    Py_RETURN_NONE;
}

static PyObject *m_progress(PyObject *mod, PyObject *noargs)
{
    (void)mod;
    (void)noargs;
    int rc;
    BLOCKING(rc, waitio_progress());
    if (rc)
        return raise_code(rc);
    Py_RETURN_NONE;
}

/* wait_any(futures, timeout): waits until one of the Futures is complete or `timeout` seconds
 * pass (< 0: no limit); returns whether one is. The Python futures (futures.py) wait with it for
 * whichever of their operations ends first. Without the GIL, in slices (the library lock given up
 * between them, signals handled); each slice makes one progress round and looks at every future,
 * then waits on the first for a moment — shorter when there are others, which it would miss. */
static PyObject *m_wait_any(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *seq;
    double timeout;
    if (!PyArg_ParseTuple(args, "Od:wait_any", &seq, &timeout))
        return NULL;
    PyObject *fast = PySequence_Fast(seq, "wait_any needs a sequence of futures");
    if (!fast)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    FutureObject **fs = PyMem_Calloc((size_t)n + 1, sizeof *fs);
    int *errs = PyMem_Calloc((size_t)n + 1, sizeof *errs), *flags = PyMem_Calloc((size_t)n + 1, sizeof *flags);
    PyObject *ret = NULL;
    int any = 0;
    if (!fs || !errs || !flags) {
        PyErr_NoMemory();
        goto out;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PySequence_Fast_GET_ITEM(fast, i);
        if (!PyObject_TypeCheck(o, &FutureType)) {
            PyErr_Format(PyExc_TypeError, "wait_any: item %zd is a %.100s, not a Future", i, Py_TYPE(o)->tp_name);
            goto out;
        }
        fs[i] = (FutureObject *)o;
        if (!fs[i]->done && !future_live(fs[i]))
            future_mark(fs[i], WAITIO_ERR_STATE); /* WaitIO was finalized meanwhile */
        any |= fs[i]->done;
    }
    double slice = n > 1 ? 0.001 : WAIT_SLICE;
    while (!any && n > 0) {
        double s = timeout >= 0 && timeout < slice ? timeout : slice;
        Py_BEGIN_ALLOW_THREADS
        lock_nogil();
        (void)waitio_progress(); /* a failure shows in the futures */
        for (Py_ssize_t i = 0; i < n; i++)
            if ((flags[i] = waitio_future_ready(fs[i]->f)))
                errs[i] = waitio_future_error(fs[i]->f), any = 1;
        if (!any && s > 0) {
            int rc = waitio_future_wait(fs[0]->f, s);
            if (rc != WAITIO_ERR_TIMEOUT || waitio_future_ready(fs[0]->f))
                flags[0] = 1, errs[0] = rc, any = 1;
        }
        unlock();
        if (!any && atomic_load(&wio_waiters) > 0)
            sched_yield();
        Py_END_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < n; i++)
            if (flags[i])
                future_mark(fs[i], errs[i]);
        if (any || (timeout >= 0 && (timeout -= s) <= 0))
            break;
        if (PyErr_CheckSignals() < 0)
            goto out;
    }
    ret = PyBool_FromLong(any);
out:
    PyMem_Free(fs);
    PyMem_Free(errs);
    PyMem_Free(flags);
    Py_DECREF(fast);
    return ret;
}

/* ---- remote procedure calls ---- */

static PyObject *rpc_handlers; /* id -> callable */

static int rpc_trampoline(int origin, const void *args, size_t len, void *reply, size_t *reply_len, void *user)
{
    PyGILState_STATE st = PyGILState_Ensure();
    int rc = 1;
    PyObject *fn = user, *res = PyObject_CallFunction(fn, "iy#", origin, (const char *)args, (Py_ssize_t)len);
    if (!res) {
        PyErr_Print();
    } else if (res == Py_None) {
        *reply_len = 0;
        rc = 0;
    } else {
        Py_buffer b;
        if (PyObject_GetBuffer(res, &b, PyBUF_C_CONTIGUOUS) == 0) {
            if ((size_t)b.len <= *reply_len) {
                memcpy(reply, b.buf, (size_t)b.len);
                *reply_len = (size_t)b.len;
                rc = 0;
            } else {
                fprintf(stderr, "waitio: remote procedure call handler returned %zd bytes, the caller takes %zu\n",
                        b.len, *reply_len);
            }
            PyBuffer_Release(&b);
        } else {
            PyErr_Print();
        }
        Py_DECREF(res);
    }
    PyGILState_Release(st);
    return rc;
}

static PyObject *m_rpc_register(PyObject *mod, PyObject *args)
{
    (void)mod;
    int id, rc;
    PyObject *fn;
    if (!PyArg_ParseTuple(args, "iO:rpc_register", &id, &fn))
        return NULL;
    if (fn != Py_None && !PyCallable_Check(fn)) {
        PyErr_SetString(PyExc_TypeError, "the handler must be callable (or None to remove it)");
        return NULL;
    }
    if (id < 0 || id > WAITIO_RPC_ID_MAX) {
        PyErr_Format(PyExc_ValueError, "handler id must be in 0..%d", WAITIO_RPC_ID_MAX);
        return NULL;
    }
    if (!rpc_handlers && !(rpc_handlers = PyDict_New()))
        return NULL;
    PyObject *key = PyLong_FromLong(id);
    if (!key)
        return NULL;
    /* the dict keeps the callable alive while the library holds a pointer to it */
    if ((fn == Py_None ? (PyDict_GetItem(rpc_handlers, key) ? PyDict_DelItem(rpc_handlers, key) : 0)
                       : PyDict_SetItem(rpc_handlers, key, fn)) < 0) {
        Py_DECREF(key);
        return NULL;
    }
    Py_DECREF(key);
    LOCKED(rc, waitio_rpc_register_ex(id, fn == Py_None ? NULL : rpc_trampoline, fn == Py_None ? NULL : fn,
                                      WAITIO_RPC_IN_CALLER));
    if (rc)
        return raise_code(rc);
    Py_RETURN_NONE;
}

static PyObject *group_irpc(GroupObject *self, PyObject *args)
{
    PyObject *tobj, *aobj, *robj;
    int rank, id, rc;
    if (!PyArg_ParseTuple(args, "OiOO:irpc", &tobj, &id, &aobj, &robj) ||
        parse_rank(self->size, tobj, "target", 0, &rank) < 0)
        return NULL;
    RequestObject *r = new_request(robj, 1, 0);
    if (!r)
        return NULL;
    if (get_buffer(aobj, &r->buf2, 0) < 0) {
        Py_DECREF(r);
        return NULL;
    }
    r->has_buf2 = 1;
    LOCKED(rc, waitio_rpc(self->g, rank, id, r->buf2.buf, (size_t)r->buf2.len, r->buf.buf, (size_t)r->buf.len, &r->req));
    if (rc) {
        request_complete(r, rc);
        Py_DECREF(r);
        return raise_code(rc);
    }
    return (PyObject *)r;
}

static PyObject *group_rpc_ff(GroupObject *self, PyObject *args)
{
    PyObject *tobj, *aobj;
    int rank, id, rc;
    if (!PyArg_ParseTuple(args, "OiO:rpc_ff", &tobj, &id, &aobj) || parse_rank(self->size, tobj, "target", 0, &rank) < 0)
        return NULL;
    Py_buffer b;
    if (get_buffer(aobj, &b, 0) < 0)
        return NULL;
    BLOCKING(rc, waitio_rpc_ff(self->g, rank, id, b.buf, (size_t)b.len));
    PyBuffer_Release(&b);
    if (rc)
        return raise_code(rc);
    Py_RETURN_NONE;
}

/* ---- futures of remote calls, collectives and distributed objects (group methods) ---- */

static PyObject *group_rpc_f(GroupObject *self, PyObject *args)
{
    PyObject *tobj;
    Py_buffer a;
    int rank, id, rc;
    Py_ssize_t cap;
    if (!PyArg_ParseTuple(args, "Oiy*n:rpc_f", &tobj, &id, &a, &cap))
        return NULL;
    FutureObject *o = NULL;
    if (parse_rank(self->size, tobj, "target", 0, &rank) < 0 || !(o = future_new())) {
        PyBuffer_Release(&a);
        return NULL;
    }
    if (cap < 0)
        cap = 0;
    LOCKED(rc, waitio_rpc_fut(self->g, rank, id, a.buf, (size_t)a.len, (size_t)cap, &o->f)); /* args copied */
    PyBuffer_Release(&a);
    return future_started(o, rc);
}

static PyObject *group_barrier_f(GroupObject *self, PyObject *noargs)
{
    (void)noargs;
    int rc;
    FutureObject *o = future_new();
    if (!o)
        return NULL;
    LOCKED(rc, waitio_barrier_fut(self->g, &o->f));
    return future_started(o, rc);
}

static PyObject *group_bcast_f(GroupObject *self, PyObject *args)
{
    PyObject *robj, *obj;
    int root, rc;
    if (!PyArg_ParseTuple(args, "OO:bcast_f", &robj, &obj) || parse_rank(self->size, robj, "root", 0, &root) < 0)
        return NULL;
    FutureObject *o = future_new();
    if (!o)
        return NULL;
    if (future_hold(o, obj, 1) < 0) {
        Py_DECREF(o);
        return NULL;
    }
    LOCKED(rc, waitio_bcast_fut(self->g, root, o->buf[0].buf, (size_t)o->buf[0].len, &o->f));
    return future_started(o, rc);
}

/* The atomic type (WAITIO_AMO_*) of a buffer's elements, for reduce_f. */
static int amo_type_of(const Py_buffer *b, int *type)
{
    switch (dtype_of(b)) {
    case WAITIO_MPI_INT32_T: *type = WAITIO_AMO_INT32; return 0;
    case WAITIO_MPI_INT64_T: *type = WAITIO_AMO_INT64; return 0;
    case WAITIO_MPI_UINT32_T: *type = WAITIO_AMO_UINT32; return 0;
    case WAITIO_MPI_UINT64_T: *type = WAITIO_AMO_UINT64; return 0;
    case WAITIO_MPI_FLOAT: *type = WAITIO_AMO_FLOAT; return 0;
    case WAITIO_MPI_DOUBLE: *type = WAITIO_AMO_DOUBLE; return 0;
    default:
        PyErr_Format(PyExc_TypeError, "reduce_async takes elements of int32, int64, uint32, uint64, float32 or "
                     "float64, not '%s'", b->format ? b->format : "B");
        return -1;
    }
}

static PyObject *group_reduce_f(GroupObject *self, PyObject *args)
{
    PyObject *robj, *sobj, *dobj;
    int root, op, type, rc;
    if (!PyArg_ParseTuple(args, "OOOi:reduce_f", &robj, &sobj, &dobj, &op) ||
        parse_rank(self->size, robj, "root", 0, &root) < 0)
        return NULL;
    FutureObject *o = future_new();
    if (!o)
        return NULL;
    if (future_hold(o, sobj, 0) < 0 || amo_type_of(&o->buf[0], &type) < 0 ||
        (dobj != Py_None && future_hold(o, dobj, 1) < 0)) {
        o->done = 1;
        Py_DECREF(o);
        return NULL;
    }
    if (o->nbuf == 2 && o->buf[1].len != o->buf[0].len) {
        o->done = 1;
        Py_DECREF(o);
        PyErr_SetString(PyExc_ValueError, "reduce_async: the buffers' sizes differ");
        return NULL;
    }
    size_t count = (size_t)(o->buf[0].len / o->buf[0].itemsize);
    LOCKED(rc, waitio_reduce_fut(self->g, root, o->buf[0].buf, o->nbuf == 2 ? o->buf[1].buf : NULL, count, type, op,
                               &o->f));
    return future_started(o, rc);
}

static PyObject *group_dobj_lookup(GroupObject *self, PyObject *args)
{
    PyObject *tobj;
    const char *name;
    int rank, rc;
    if (!PyArg_ParseTuple(args, "Os:dobj_lookup", &tobj, &name) || parse_rank(self->size, tobj, "rank", 0, &rank) < 0)
        return NULL;
    FutureObject *o = future_new();
    if (!o)
        return NULL;
    LOCKED(rc, waitio_dobj_lookup(self->g, rank, name, &o->f));
    return future_started(o, rc);
}

/* dobj_get / dobj_put (rank, id, size, offset, buf): the handle a lookup gave, rebuilt on this
 * group (so that no pointer ever travels through Python). */
static PyObject *group_dobj_xfer(GroupObject *self, PyObject *args, int is_put)
{
    PyObject *tobj, *obj;
    unsigned long id;
    unsigned long long size;
    Py_ssize_t off;
    int rank, rc;
    if (!PyArg_ParseTuple(args, is_put ? "OkKnO:dobj_put" : "OkKnO:dobj_get", &tobj, &id, &size, &off, &obj) ||
        parse_rank(self->size, tobj, "rank", 0, &rank) < 0 || parse_offset(off) < 0)
        return NULL;
    waitio_dobj_t d = {self->g, rank, (uint32_t)id, (uint64_t)size};
    FutureObject *o = future_new();
    if (!o)
        return NULL;
    if (future_hold(o, obj, !is_put) < 0) {
        Py_DECREF(o);
        return NULL;
    }
    LOCKED(rc, is_put ? waitio_dobj_put(&d, (size_t)off, o->buf[0].buf, (size_t)o->buf[0].len, &o->f)
                      : waitio_dobj_get(&d, (size_t)off, o->buf[0].buf, (size_t)o->buf[0].len, &o->f));
    return future_started(o, rc);
}

static PyObject *group_dobj_get(GroupObject *self, PyObject *args) { return group_dobj_xfer(self, args, 0); }
static PyObject *group_dobj_put(GroupObject *self, PyObject *args) { return group_dobj_xfer(self, args, 1); }

static PyObject *group_dobj_call(GroupObject *self, PyObject *args)
{
    PyObject *tobj;
    unsigned long id;
    unsigned long long size;
    Py_buffer a;
    Py_ssize_t cap;
    int rank, rc;
    if (!PyArg_ParseTuple(args, "OkKy*n:dobj_call", &tobj, &id, &size, &a, &cap))
        return NULL;
    FutureObject *o = NULL;
    if (parse_rank(self->size, tobj, "rank", 0, &rank) < 0 || !(o = future_new())) {
        PyBuffer_Release(&a);
        return NULL;
    }
    waitio_dobj_t d = {self->g, rank, (uint32_t)id, (uint64_t)size};
    LOCKED(rc, waitio_dobj_call(&d, a.buf, (size_t)a.len, cap < 0 ? 0 : (size_t)cap, &o->f)); /* args copied */
    PyBuffer_Release(&a);
    return future_started(o, rc);
}

/* dobj_register(group, name, buf): buf's memory as this process's object `name` (no handler: a
 * Python one would have to run on the progress thread, which cannot take the GIL safely). The
 * Python layer keeps buf exported until dobj_unregister. */
static PyObject *m_dobj_register(PyObject *mod, PyObject *args)
{
    (void)mod;
    GroupObject *g;
    const char *name;
    PyObject *obj;
    int rc;
    if (!PyArg_ParseTuple(args, "O!sO:dobj_register", &GroupType, &g, &name, &obj))
        return NULL;
    Py_buffer b;
    if (get_buffer(obj, &b, 1) < 0)
        return NULL;
    LOCKED(rc, waitio_dobj_register(g->g, name, b.buf, (size_t)b.len, NULL, NULL));
    PyBuffer_Release(&b);
    if (rc)
        return raise_code(rc);
    Py_RETURN_NONE;
}

static PyObject *m_dobj_unregister(PyObject *mod, PyObject *args)
{
    (void)mod;
    GroupObject *g;
    const char *name;
    if (!PyArg_ParseTuple(args, "O!s:dobj_unregister", &GroupType, &g, &name))
        return NULL;
    CALL(waitio_dobj_unregister(g->g, name));
    Py_RETURN_NONE;
}

#define RMA_GROUP_METHODS \
    {"rpc_f", (PyCFunction)group_rpc_f, METH_VARARGS, \
     "rpc_f($self, target, id, args, reply_cap, /)\n--\n\nA Future of a remote call; its value() is the reply."}, \
    {"barrier_f", (PyCFunction)group_barrier_f, METH_NOARGS, \
     "barrier_f($self, /)\n--\n\nA Future of a barrier (collective)."}, \
    {"bcast_f", (PyCFunction)group_bcast_f, METH_VARARGS, \
     "bcast_f($self, root, buf, /)\n--\n\nA Future of a broadcast of root's buf into every member's buf."}, \
    {"reduce_f", (PyCFunction)group_reduce_f, METH_VARARGS, \
     "reduce_f($self, root, src, dst, op, /)\n--\n\nA Future of a reduction (AMO_ADD/MIN/MAX/AND/OR/XOR) into root's dst."}, \
    {"dobj_lookup", (PyCFunction)group_dobj_lookup, METH_VARARGS, \
     "dobj_lookup($self, rank, name, /)\n--\n\nA Future of the lookup of rank's object name; its dobj() is (rank, id, size)."}, \
    {"dobj_get", (PyCFunction)group_dobj_get, METH_VARARGS, \
     "dobj_get($self, rank, id, size, offset, buf, /)\n--\n\nA Future of a read of a distributed object into buf."}, \
    {"dobj_put", (PyCFunction)group_dobj_put, METH_VARARGS, \
     "dobj_put($self, rank, id, size, offset, buf, /)\n--\n\nA Future of a write of buf into a distributed object."}, \
    {"dobj_call", (PyCFunction)group_dobj_call, METH_VARARGS, \
     "dobj_call($self, rank, id, size, args, reply_cap, /)\n--\n\nA Future of a call of a distributed object's handler."},

#define RMA_MODULE_METHODS \
    {"wait_any", m_wait_any, METH_VARARGS, \
     "wait_any(futures, timeout, /)\n--\n\nWait until one Future is complete or timeout s pass " \
     "(< 0: no limit); return whether one is."}, \
    {"dobj_register", m_dobj_register, METH_VARARGS, \
     "dobj_register(group, name, buf, /)\n--\n\nRegister the writable buf as this process's object name."}, \
    {"dobj_unregister", m_dobj_unregister, METH_VARARGS, \
     "dobj_unregister(group, name, /)\n--\n\nRemove this process's object name."},

static PyObject *m_rma_world(PyObject *mod, PyObject *noargs)
{
    (void)mod;
    (void)noargs;
    waitio_group_t g = NULL;
    CALL(waitio_rma_world(&g));
    return group_wrap(g);
}
