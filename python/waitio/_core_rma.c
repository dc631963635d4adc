/*
 * _core_rma.c — the one-sided part of the compiled binding (waitio_rma.h), included by _core.c
 * (one translation unit: it shares the lock, the error helpers and the Request type).
 *
 * Window: a window of a group. Its part of this process is exported through the buffer protocol
 * (np.frombuffer(win, dtype)), counted, so that free() refuses while a view exists. put/get are
 * blocking (GIL released while the library may wait), iput/iget return a Request that keeps the
 * buffer exported until completion; atomics take a dtype name; wait_until waits on a word of
 * this process's part.
 *
 * Remote procedure calls: handlers are Python callables fn(origin, args: bytes) -> bytes-like or
 * None, registered with WAITIO_RPC_IN_CALLER: they run inside this program's own WaitIO calls
 * (never on the progress thread, which could not take the GIL while a Python thread holding it
 * waits for the library). An exception in a handler fails the caller's request (WAITIO_ERR_RPC)
 * and is printed here.
 */
#include "waitio_rma.h"

typedef struct {
    PyObject_HEAD
    waitio_win_t w;
    PyObject *group;      /* the Group it was created over (kept alive) */
    void *base;
    size_t size;
    Py_buffer user;       /* win_create: the exposed buffer, exported until free */
    int has_user;
    Py_ssize_t exports;   /* views of this part handed out */
} WindowObject;

static PyTypeObject WindowType;

static int window_live(WindowObject *self)
{
    if (self->w)
        return 0;
    PyErr_SetString(PyExc_ValueError, "the window was freed");
    return -1;
}

static PyObject *window_wrap(waitio_win_t w, PyObject *group)
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
    if (!PyArg_ParseTuple(args, "O!n:win_allocate", &GroupType, &g, &size))
        return NULL;
    if (size < 0) {
        PyErr_SetString(PyExc_ValueError, "size must not be negative");
        return NULL;
    }
    waitio_win_t w = NULL;
    void *base = NULL;
    int rc;
    BLOCKING(rc, waitio_win_allocate(g->g, (size_t)size, &w, &base));
    if (rc)
        return raise_code(rc);
    return window_wrap(w, (PyObject *)g);
}

static PyObject *m_win_create(PyObject *mod, PyObject *args)
{
    (void)mod;
    GroupObject *g;
    PyObject *obj;
    if (!PyArg_ParseTuple(args, "O!O:win_create", &GroupType, &g, &obj))
        return NULL;
    Py_buffer b;
    if (get_buffer(obj, &b, 1) < 0)
        return NULL;
    waitio_win_t w = NULL;
    int rc;
    BLOCKING(rc, waitio_win_create(g->g, b.buf, (size_t)b.len, &w));
    if (rc) {
        PyBuffer_Release(&b);
        return raise_code(rc);
    }
    WindowObject *o = (WindowObject *)window_wrap(w, (PyObject *)g);
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
    if (get_buffer(obj, &b, 0) < 0)
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
    if (get_buffer(obj, &b, 1) < 0)
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
    RequestObject *r = new_request(obj, !is_put);
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
    RequestObject *r = new_request(robj, 1);
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

static PyObject *m_rma_world(PyObject *mod, PyObject *noargs)
{
    (void)mod;
    (void)noargs;
    waitio_group_t g = NULL;
    CALL(waitio_rma_world(&g));
    return group_wrap(g);
}
