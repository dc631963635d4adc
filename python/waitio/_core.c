/*
 * _core.c — the compiled part of the Python binding (SPEC §11): WaitIO's C API and the
 * conversion layer's collectives on buffer-protocol objects (NumPy arrays, bytearray,
 * memoryview, CPU torch tensors) without copies. The Python-level API (mpi4py style, pickled
 * objects) is in __init__.py; the types are described in _core.pyi.
 *
 * Types: Group (a WaitIO group), Request (a pending isend/irecv or one-sided operation; it keeps
 * the buffer exported until completion, so the memory cannot move or disappear while WaitIO uses
 * it), Window and Future (one-sided, a future of the C library under futures.py's: in
 * _core_rma.c, which this file includes). Device (GPU) arrays — __cuda_array_interface__, DLPack —
 * are buffers of the point-to-point calls and the buffer collectives (_core_dev.c, included).
 * pickle_check walks the
 * opcodes of a peer's object message before _objects.py decodes it (issue 25).
 *
 * Errors, as mpi4py raises them: TypeError for an object that is not a buffer (or a rank/tag
 * that is not an integer), ValueError for a negative or unsendable tag, a rank outside the
 * group, or buffers that do not fit the operation; the buffer exporter's own exception type
 * (ValueError, BufferError) for a non-contiguous or read-only buffer; waitio.Error(code,
 * message) for what the library reports.
 *
 * Threads: the library is "serialized" (one thread in it at a time). Every call into it holds
 * `wio_lock`, a binding-level lock. Whatever may block (a request's wait, waitall, the
 * collectives, init and finalize) runs with the GIL released, so that other Python threads
 * run meanwhile. A request's wait blocks in slices of WAIT_SLICE seconds: between slices it
 * gives up the lock (so other threads' WaitIO calls, e.g. the send that the awaited reply
 * depends on, get through) and takes the GIL back to run pending signal handlers (Ctrl-C
 * raises KeyboardInterrupt in the waiting thread). A collective holds the lock until it ends.
 * Invariant: no Python object is created or released while `wio_lock` is held (that could
 * run a Request's deallocator, which takes the lock).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include "waitio.h"
#include "waitio_mpi.h"

#define WAIT_SLICE 0.02 /* seconds a request's wait holds the library before looking around */

static PyObject *WaitioError;

/* ---- the binding-level lock ---- */

/* A plain mutex: uncontended, a lock/unlock pair costs a few tens of ns on the isend+wait path. */
static pthread_mutex_t wio_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int wio_waiters; /* threads waiting for wio_lock without the GIL */

/* Without the GIL. */
static void lock_nogil(void)
{
    if (pthread_mutex_trylock(&wio_lock) == 0)
        return;
    atomic_fetch_add(&wio_waiters, 1);
    pthread_mutex_lock(&wio_lock);
    atomic_fetch_sub(&wio_waiters, 1);
}

/* With the GIL: gives it up while waiting, so the holder (which may want the GIL) goes on. */
static void lock_gil(void)
{
    if (pthread_mutex_trylock(&wio_lock) == 0)
        return;
    Py_BEGIN_ALLOW_THREADS
    lock_nogil();
    Py_END_ALLOW_THREADS
}

static void unlock(void) { pthread_mutex_unlock(&wio_lock); }

/* rc = EXPR, a non-blocking library call, under the lock (GIL held) */
#define LOCKED(rc, expr) do { lock_gil(); (rc) = (expr); unlock(); } while (0)
/* rc = EXPR, a call that may block: GIL released, lock held */
#define BLOCKING(rc, expr) do { Py_BEGIN_ALLOW_THREADS lock_nogil(); (rc) = (expr); unlock(); Py_END_ALLOW_THREADS } while (0)

/* ---- errors ---- */

static PyObject *raise_with(int code, const char *msg)
{
    PyObject *args = Py_BuildValue("(is)", code, msg);
    if (args) {
        PyErr_SetObject(WaitioError, args);
        Py_DECREF(args);
    }
    return NULL;
}

/* An API call failed in this thread: the library recorded the details (per thread). */
static PyObject *raise_code(int code) { return raise_with(code, waitio_error_message()); }

/* A request completed with an error: its code says what happened. */
static PyObject *raise_req(int code)
{
    char msg[256];
    snprintf(msg, sizeof msg, "request failed: %s", waitio_strerror(code));
    return raise_with(code, msg);
}

#define CALL(expr) do { int rc_; LOCKED(rc_, expr); if (rc_) return raise_code(rc_); } while (0)

/* ---- argument checks ---- */

/* *out = OBJ as a C long; TypeError if it is not an integer; 0 on success */
static int as_long(PyObject *obj, const char *what, long *out, int *overflow)
{
    if (PyLong_CheckExact(obj)) { /* the common case, without a new reference */
        *out = PyLong_AsLongAndOverflow(obj, overflow);
        return *out == -1 && PyErr_Occurred() ? -1 : 0;
    }
    PyObject *i = PyNumber_Index(obj);
    if (!i) {
        PyErr_Format(PyExc_TypeError, "%s must be an integer, not %.100s", what, Py_TYPE(obj)->tp_name);
        return -1;
    }
    *out = PyLong_AsLongAndOverflow(i, overflow);
    Py_DECREF(i);
    return *out == -1 && PyErr_Occurred() ? -1 : 0;
}

/* A rank of a group of N processes: 0 <= rank < N, or ANY_SOURCE where allowed (a receive's
 * source). */
static int parse_rank(int n, PyObject *obj, const char *what, int allow_any, int *rank)
{
    long v;
    int overflow = 0;
    if (as_long(obj, what, &v, &overflow) < 0)
        return -1;
    if (!overflow && allow_any && v == WAITIO_ANY_SOURCE) {
        *rank = WAITIO_ANY_SOURCE;
        return 0;
    }
    if (overflow || v < 0 || v >= n) {
        if (overflow)
            PyErr_Format(PyExc_ValueError, "%s is out of range for a group of %d process%s", what, n, n == 1 ? "" : "es");
        else
            PyErr_Format(PyExc_ValueError, "%s %ld is out of range for a group of %d process%s (valid: 0..%d%s)",
                         what, v, n, n == 1 ? "" : "es", n - 1, allow_any ? " or ANY_SOURCE" : "");
        return -1;
    }
    *rank = (int)v;
    return 0;
}

/* A message tag: 0 <= tag < ANY_TAG (2**64 - 1); ANY_TAG only where allowed (a receive). */
static int parse_tag(PyObject *obj, int allow_any, unsigned long *tag)
{
    PyObject *i = PyLong_CheckExact(obj) ? (Py_INCREF(obj), obj) : PyNumber_Index(obj);
    if (!i) {
        PyErr_Format(PyExc_TypeError, "tag must be an integer, not %.100s", Py_TYPE(obj)->tp_name);
        return -1;
    }
    int overflow = 0;
    long sv = PyLong_AsLongAndOverflow(i, &overflow);
    int negative = overflow < 0 || (!overflow && sv < 0);
    unsigned long v = negative ? 0 : PyLong_AsUnsignedLong(i);
    Py_DECREF(i);
    if (negative) {
        PyErr_SetString(PyExc_ValueError, "tag must not be negative (tags are 0 .. 2**64-2; ANY_TAG matches any)");
        return -1;
    }
    if (v == (unsigned long)-1 && PyErr_Occurred()) {
        PyErr_Clear();
        PyErr_SetString(PyExc_ValueError, "tag must be below 2**64 - 1");
        return -1;
    }
    if (v == WAITIO_ANY_TAG && !allow_any) {
        PyErr_SetString(PyExc_ValueError, "ANY_TAG (2**64 - 1) matches any tag in a receive; it cannot be sent");
        return -1;
    }
    *tag = v;
    return 0;
}

/* ---- buffers ---- */

/* WaitIO datatype of a buffer's element format ('B' for raw bytes). */
static int dtype_of(const Py_buffer *b)
{
    const char *f = b->format ? b->format : "B";
    if (*f == '@' || *f == '=' || *f == '<')
        f++;
    if (!strcmp(f, "b")) return WAITIO_MPI_INT8_T;
    if (!strcmp(f, "B") || !strcmp(f, "c")) return WAITIO_MPI_UINT8_T;
    if (!strcmp(f, "h")) return WAITIO_MPI_INT16_T;
    if (!strcmp(f, "H")) return WAITIO_MPI_UINT16_T;
    if (!strcmp(f, "i")) return WAITIO_MPI_INT32_T;
    if (!strcmp(f, "I")) return WAITIO_MPI_UINT32_T;
    if (!strcmp(f, "l") || !strcmp(f, "q")) return b->itemsize == 8 ? WAITIO_MPI_INT64_T : WAITIO_MPI_INT32_T;
    if (!strcmp(f, "L") || !strcmp(f, "Q")) return b->itemsize == 8 ? WAITIO_MPI_UINT64_T : WAITIO_MPI_UINT32_T;
    if (!strcmp(f, "f")) return WAITIO_MPI_FLOAT;
    if (!strcmp(f, "d")) return WAITIO_MPI_DOUBLE;
    if (!strcmp(f, "g")) return WAITIO_MPI_LONG_DOUBLE;
    if (!strcmp(f, "?")) return WAITIO_MPI_C_BOOL;
    if (!strcmp(f, "Zf")) return WAITIO_MPI_COMPLEX;
    if (!strcmp(f, "Zd")) return WAITIO_MPI_DOUBLE_COMPLEX;
    return 0;
}

#include "_core_dev.c"

/* Exports OBJ as a C-contiguous buffer (writable for a receive): a buffer-protocol object, or a
 * device array (__cuda_array_interface__, DLPack: _core_dev.c) where DEVICE_OK says the
 * operation takes device memory (a DLPack array of the CPU everywhere). TypeError for a
 * non-buffer; otherwise the exporter's exception type with WaitIO's explanation, the original
 * as cause. */
static int get_buffer_dev(PyObject *obj, Py_buffer *b, int writable, int device_ok)
{
    if (!PyObject_CheckBuffer(obj)) {
        int rc = device_buffer(obj, b, writable, device_ok);
        if (rc != 0)
            return rc < 0 ? -1 : 0;
        PyErr_Format(PyExc_TypeError,
                     "expected a buffer-protocol object (bytes, bytearray, memoryview, NumPy array, "
                     "CPU tensor)%s, not %.100s%s", device_ok ? " or a device array (__cuda_array_interface__, "
                     "DLPack)" : "", Py_TYPE(obj)->tp_name,
                     writable ? "" : " (lower-case send/recv/bcast... move any picklable object)");
        return -1;
    }
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, b, flags) == 0)
        return 0;
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    /* a device array may have a buffer slot that refuses (CuPy's ndarray): then it is one */
    int dev = device_buffer(obj, b, writable, device_ok);
    if (dev != 0) {
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
        return dev < 0 ? -1 : 0;
    }
    PyErr_NormalizeException(&type, &value, &tb);
    PyObject *kind = type && PyExceptionClass_Check(type) ? type : PyExc_BufferError;
    PyErr_SetString(kind, writable ? "receive buffer must be a writable, C-contiguous buffer (copy "
                                     "non-contiguous arrays with numpy.ascontiguousarray first)"
                                   : "buffer must be C-contiguous (copy non-contiguous arrays with "
                                     "numpy.ascontiguousarray first)");
    PyObject *t2, *v2, *tb2;
    PyErr_Fetch(&t2, &v2, &tb2);
    PyErr_NormalizeException(&t2, &v2, &tb2);
    if (value)
        PyException_SetCause(v2, value); /* steals value */
    PyErr_Restore(t2, v2, tb2);
    Py_XDECREF(type);
    Py_XDECREF(tb);
    return -1;
}

/* A buffer of host memory (an operation whose C call copies or reads it on the CPU). */
static int get_buffer(PyObject *obj, Py_buffer *b, int writable) { return get_buffer_dev(obj, b, writable, 0); }

/* ---- Group ---- */

typedef struct {
    PyObject_HEAD
    waitio_group_t g;
    int size; /* a group's size never changes: kept for the rank checks */
} GroupObject;

static PyTypeObject GroupType;

static PyObject *group_wrap(waitio_group_t g)
{
    int n = 0, rc;
    LOCKED(rc, waitio_group_size(g, &n));
    if (rc)
        return raise_code(rc);
    GroupObject *o = PyObject_New(GroupObject, &GroupType);
    if (o) {
        o->g = g;
        o->size = n;
    }
    return (PyObject *)o;
}

static PyObject *group_rank(GroupObject *self, void *closure)
{
    (void)closure;
    int r;
    CALL(waitio_group_rank(self->g, &r));
    return PyLong_FromLong(r);
}

static PyObject *group_size(GroupObject *self, void *closure)
{
    (void)closure;
    int n;
    CALL(waitio_group_size(self->g, &n));
    return PyLong_FromLong(n);
}

static PyGetSetDef group_getset[] = {
    {"rank", (getter)group_rank, NULL, "This process's rank in the group (-1: not a member).", NULL},
    {"size", (getter)group_size, NULL, "Number of processes in the group.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* ---- Request ---- */

typedef struct {
    PyObject_HEAD
    waitio_req_t req;
    Py_buffer buf;
    int has_buf;
    int done;
    int error;
    Py_buffer buf2;   /* a remote call's arguments (the reply is buf) */
    int has_buf2;
} RequestObject;

static PyTypeObject RequestType;

static void request_release(RequestObject *r)
{
    if (r->has_buf) {
        PyBuffer_Release(&r->buf);
        r->has_buf = 0;
    }
    if (r->has_buf2) {
        PyBuffer_Release(&r->buf2);
        r->has_buf2 = 0;
    }
}

static void request_dealloc(RequestObject *r)
{
    if (!r->done && r->req.internal) {
        /* still in flight: WaitIO may still touch the memory, so keep it exported (leak the
         * view rather than risk a use-after-free); cancel a receive if we can */
        int flag = 0, rc;
        lock_gil();
        waitio_cancel(&r->req);
        rc = waitio_test(&r->req, &flag);
        unlock();
        if (rc == 0 && flag)
            request_release(r);
    } else {
        request_release(r);
    }
    Py_TYPE(r)->tp_free((PyObject *)r);
}

static PyObject *status_tuple(const RequestObject *r)
{
    return Py_BuildValue("(ikn)", r->req.status.source, r->req.status.tag, (Py_ssize_t)r->req.status.len);
}

static void request_complete(RequestObject *r, int rc)
{
    r->done = 1;
    r->error = rc;
    request_release(r);
}

/* Waits for R. A completed request costs one zero-timeout wait with the GIL held; otherwise slices of
 * WAIT_SLICE seconds without the GIL, each holding the library lock, with pending signal
 * handlers run between them (-1: one raised, e.g. KeyboardInterrupt; R stays pending). */
static int request_wait_inner(RequestObject *r)
{
    if (r->done)
        return 0;
    int rc; /* a zero timeout: the library's cheap path for a complete request (an eager send) */
    LOCKED(rc, waitio_wait_timeout(&r->req, 0));
    if (rc != WAITIO_ERR_TIMEOUT || !r->req.internal) {
        request_complete(r, rc);
        return 0;
    }
    for (;;) {
        Py_BEGIN_ALLOW_THREADS
        lock_nogil();
        rc = waitio_wait_timeout(&r->req, WAIT_SLICE);
        unlock();
        if (rc == WAITIO_ERR_TIMEOUT && atomic_load(&wio_waiters) > 0)
            sched_yield(); /* let a thread waiting for the library in first */
        Py_END_ALLOW_THREADS
        if (rc != WAITIO_ERR_TIMEOUT || !r->req.internal) {
            request_complete(r, rc);
            return 0;
        }
        if (PyErr_CheckSignals() < 0)
            return -1;
    }
}

static PyObject *request_wait(RequestObject *r, PyObject *noargs)
{
    (void)noargs;
    if (request_wait_inner(r) < 0)
        return NULL;
    if (r->error)
        return raise_req(r->error);
    return status_tuple(r);
}

static PyObject *request_test(RequestObject *r, PyObject *noargs)
{
    (void)noargs;
    if (!r->done) {
        int flag = 0, rc;
        LOCKED(rc, waitio_test(&r->req, &flag));
        if (!flag && !rc)
            Py_RETURN_FALSE;
        request_complete(r, rc);
    }
    if (r->error)
        return raise_req(r->error);
    Py_RETURN_TRUE;
}

static PyObject *request_status(RequestObject *r, void *closure)
{
    (void)closure;
    if (!r->done)
        Py_RETURN_NONE;
    return status_tuple(r);
}

static PyMethodDef request_methods[] = {
    {"wait", (PyCFunction)request_wait, METH_NOARGS,
     "wait($self, /)\n--\n\n"
     "Block until the request completes; return (source, tag, nbytes). Other Python threads run\n"
     "meanwhile (the GIL is released) and signals are handled (Ctrl-C raises KeyboardInterrupt\n"
     "and leaves the request pending). Raises waitio.Error if the request failed."},
    {"test", (PyCFunction)request_test, METH_NOARGS,
     "test($self, /)\n--\n\n"
     "Make progress without blocking; return True once the request is complete (then .status\n"
     "holds (source, tag, nbytes)). Raises waitio.Error if the request failed."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef request_getset[] = {
    {"status", (getter)request_status, NULL, "(source, tag, nbytes) once complete, else None.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static RequestObject *new_request(PyObject *obj, int writable, int device_ok)
{
    RequestObject *r = PyObject_New(RequestObject, &RequestType);
    if (!r)
        return NULL;
    memset(&r->req, 0, sizeof r->req);
    r->has_buf = 0;
    r->has_buf2 = 0;
    r->done = 0;
    r->error = 0;
    if (get_buffer_dev(obj, &r->buf, writable, device_ok) < 0) {
        Py_DECREF(r);
        return NULL;
    }
    r->has_buf = 1;
    return r;
}

/* ---- point-to-point ---- */

static PyObject *group_isend(GroupObject *self, PyObject *args)
{
    PyObject *obj, *dobj, *tobj;
    int dest;
    unsigned long tag;
    if (!PyArg_ParseTuple(args, "OOO:isend", &obj, &dobj, &tobj))
        return NULL;
    if (parse_rank(self->size, dobj, "dest", 0, &dest) < 0 || parse_tag(tobj, 0, &tag) < 0)
        return NULL;
    RequestObject *r = new_request(obj, 0, 1);
    if (!r)
        return NULL;
    int rc;
    LOCKED(rc, waitio_isend(self->g, dest, r->buf.buf, (size_t)r->buf.len, tag, &r->req));
    if (rc) {
        r->done = 1;
        Py_DECREF(r);
        return raise_code(rc);
    }
    return (PyObject *)r;
}

static PyObject *group_irecv(GroupObject *self, PyObject *args)
{
    PyObject *obj, *sobj = NULL, *tobj = NULL;
    int source = WAITIO_ANY_SOURCE;
    unsigned long tag = WAITIO_ANY_TAG;
    if (!PyArg_ParseTuple(args, "O|OO:irecv", &obj, &sobj, &tobj))
        return NULL;
    if ((sobj && parse_rank(self->size, sobj, "source", 1, &source) < 0) || (tobj && parse_tag(tobj, 1, &tag) < 0))
        return NULL;
    RequestObject *r = new_request(obj, 1, 1);
    if (!r)
        return NULL;
    int rc;
    LOCKED(rc, waitio_irecv(self->g, source, r->buf.buf, (size_t)r->buf.len, tag, &r->req));
    if (rc) {
        r->done = 1;
        Py_DECREF(r);
        return raise_code(rc);
    }
    return (PyObject *)r;
}

/* ---- collectives (they block: the GIL is released, the library lock held throughout) ---- */

/* Element count and datatype of a buffer for a reduction. */
static int coll_type(const Py_buffer *b, int *dtype, int *count)
{
    *dtype = dtype_of(b);
    if (!*dtype) {
        PyErr_Format(PyExc_TypeError, "unsupported buffer element format '%s' for a reduction",
                     b->format ? b->format : "B");
        return -1;
    }
    if (b->len / b->itemsize > 0x7fffffff) {
        PyErr_SetString(PyExc_ValueError, "buffer has more than 2**31-1 elements");
        return -1;
    }
    *count = (int)(b->len / b->itemsize);
    return 0;
}

static PyObject *group_barrier(GroupObject *self, PyObject *noargs)
{
    (void)noargs;
    int rc;
    BLOCKING(rc, waitio_mpi_barrier(self->g));
    if (rc)
        return raise_code(rc);
    Py_RETURN_NONE;
}

static PyObject *group_bcast(GroupObject *self, PyObject *args)
{
    PyObject *obj, *robj;
    int root;
    if (!PyArg_ParseTuple(args, "OO:bcast", &obj, &robj) || parse_rank(self->size, robj, "root", 0, &root) < 0)
        return NULL;
    Py_buffer b;
    if (get_buffer_dev(obj, &b, 1, 1) < 0)
        return NULL;
    if (b.len > 0x7fffffff) {
        PyBuffer_Release(&b);
        PyErr_SetString(PyExc_ValueError, "bcast buffer larger than 2**31-1 bytes");
        return NULL;
    }
    int rc;
    BLOCKING(rc, waitio_mpi_bcast(b.buf, (int)b.len, WAITIO_MPI_BYTE, root, self->g));
    PyBuffer_Release(&b);
    if (rc)
        return raise_code(rc);
    Py_RETURN_NONE;
}

/* reduce / allreduce: (sendbuf, recvbuf, op[, root]); recvbuf may be None off the root */
static PyObject *reduce_common(GroupObject *self, PyObject *args, int all)
{
    PyObject *sobj, *robj, *rootobj = NULL;
    int op, root = 0;
    if (!PyArg_ParseTuple(args, all ? "OOi:allreduce" : "OOi|O:reduce", &sobj, &robj, &op, &rootobj))
        return NULL;
    if (rootobj && parse_rank(self->size, rootobj, "root", 0, &root) < 0)
        return NULL;
    Py_buffer s, r;
    int have_r = robj != Py_None;
    if (get_buffer_dev(sobj, &s, 0, 1) < 0)
        return NULL;
    if (have_r && get_buffer_dev(robj, &r, 1, 1) < 0) {
        PyBuffer_Release(&s);
        return NULL;
    }
    int dtype, count, failed = 0;
    if (coll_type(&s, &dtype, &count) < 0) {
        failed = 1;
    } else if (have_r && (r.len != s.len || dtype_of(&r) != dtype)) {
        PyErr_SetString(PyExc_ValueError, "send and receive buffers differ in size or element type");
        failed = 1;
    } else if (!have_r && all) {
        PyErr_SetString(PyExc_ValueError, "allreduce needs a receive buffer");
        failed = 1;
    } else {
        void *rbuf = have_r ? r.buf : NULL;
        int wrc;
        if (all)
            BLOCKING(wrc, waitio_mpi_allreduce(s.buf, rbuf, count, dtype, op, self->g));
        else
            BLOCKING(wrc, waitio_mpi_reduce(s.buf, rbuf, count, dtype, op, root, self->g));
        if (wrc) {
            raise_code(wrc);
            failed = 1;
        }
    }
    PyBuffer_Release(&s);
    if (have_r)
        PyBuffer_Release(&r);
    if (failed)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *group_reduce(GroupObject *self, PyObject *args) { return reduce_common(self, args, 0); }
static PyObject *group_allreduce(GroupObject *self, PyObject *args) { return reduce_common(self, args, 1); }

/* gather / scatter / allgather / alltoall on raw bytes: (sendbuf, recvbuf[, root]) */
enum { K_GATHER, K_SCATTER, K_ALLGATHER, K_ALLTOALL };

static const char *check_move(int kind, int n, int at_root, int have_s, int have_r, const Py_buffer *s,
                              const Py_buffer *r, Py_ssize_t blk)
{
    if ((kind != K_SCATTER && !have_s) || (kind == K_SCATTER && !have_r) ||
        ((kind == K_ALLGATHER || kind == K_ALLTOALL || (kind == K_GATHER && at_root)) && !have_r) ||
        (kind == K_SCATTER && at_root && !have_s))
        return "missing send or receive buffer";
    if (kind == K_ALLTOALL && (s->len % n || r->len != s->len))
        return "alltoall buffers must be equal and divisible by the group size";
    if (((kind == K_GATHER && at_root) || kind == K_ALLGATHER) && r->len != blk * n)
        return "receive buffer must hold one block per process";
    if (kind == K_SCATTER && at_root && s->len != blk * n)
        return "send buffer must hold one block per process";
    if (blk > 0x7fffffff)
        return "block larger than 2**31-1 bytes";
    return NULL;
}

static PyObject *move_common(GroupObject *self, PyObject *args, int kind)
{
    static const char *fmt[] = {"OO|O:gather", "OO|O:scatter", "OO:allgather", "OO:alltoall"};
    PyObject *sobj, *robj, *rootobj = NULL;
    int root = 0;
    if (!PyArg_ParseTuple(args, fmt[kind], &sobj, &robj, &rootobj))
        return NULL;
    if (rootobj && parse_rank(self->size, rootobj, "root", 0, &root) < 0)
        return NULL;
    int n = 0, me = -1;
    CALL(waitio_group_size(self->g, &n));
    CALL(waitio_group_rank(self->g, &me));
    Py_buffer s = {0}, r = {0};
    int have_s = sobj != Py_None, have_r = robj != Py_None, failed = 0;
    if (have_s && get_buffer_dev(sobj, &s, 0, 1) < 0)
        return NULL;
    if (have_r && get_buffer_dev(robj, &r, 1, 1) < 0) {
        if (have_s)
            PyBuffer_Release(&s);
        return NULL;
    }
    Py_ssize_t blk = kind == K_SCATTER ? r.len : s.len; /* per-process block, bytes */
    const char *bad = check_move(kind, n, me == root, have_s, have_r, &s, &r, blk);
    if (bad) {
        PyErr_SetString(PyExc_ValueError, bad);
        failed = 1;
    } else {
        int b = (int)blk, wrc;
        switch (kind) {
        case K_GATHER:
            BLOCKING(wrc, WAITIO_MPI_Gather(s.buf, b, WAITIO_MPI_BYTE, r.buf, b, WAITIO_MPI_BYTE, root, self->g));
            break;
        case K_SCATTER:
            BLOCKING(wrc, waitio_mpi_scatter(s.buf, b, WAITIO_MPI_BYTE, r.buf, b, WAITIO_MPI_BYTE, root, self->g));
            break;
        case K_ALLGATHER:
            BLOCKING(wrc, WAITIO_MPI_Allgather(s.buf, b, WAITIO_MPI_BYTE, r.buf, b, WAITIO_MPI_BYTE, self->g));
            break;
        default:
            b = (int)(s.len / n);
            BLOCKING(wrc, waitio_mpi_alltoall(s.buf, b, WAITIO_MPI_BYTE, r.buf, b, WAITIO_MPI_BYTE, self->g));
            break;
        }
        if (wrc) {
            raise_code(wrc);
            failed = 1;
        }
    }
    if (have_s)
        PyBuffer_Release(&s);
    if (have_r)
        PyBuffer_Release(&r);
    if (failed)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *group_gather(GroupObject *self, PyObject *args) { return move_common(self, args, K_GATHER); }
static PyObject *group_scatter(GroupObject *self, PyObject *args) { return move_common(self, args, K_SCATTER); }
static PyObject *group_allgather(GroupObject *self, PyObject *args) { return move_common(self, args, K_ALLGATHER); }
static PyObject *group_alltoall(GroupObject *self, PyObject *args) { return move_common(self, args, K_ALLTOALL); }

static PyObject *grp_member(GroupObject *self, PyObject *args)
{
    PyObject *robj;
    int rank, pb, local;
    if (!PyArg_ParseTuple(args, "O:member", &robj) || parse_rank(self->size, robj, "rank", 0, &rank) < 0)
        return NULL;
    CALL(waitio_group_member(self->g, rank, &pb, &local));
    return Py_BuildValue("(ii)", pb, local);
}

/* one-sided: windows, atomics, remote procedure calls (waitio_rma.h) */
#include "_core_rma.c"

static PyMethodDef group_methods[] = {
    {"isend", (PyCFunction)group_isend, METH_VARARGS,
     "isend($self, buf, dest, tag, /)\n--\n\n"
     "Start sending buffer `buf` (not copied: keep it unchanged until complete) to group rank\n"
     "`dest` with `tag` (0 .. 2**64-2); return a Request."},
    {"irecv", (PyCFunction)group_irecv, METH_VARARGS,
     "irecv($self, buf, source=-1, tag=18446744073709551615, /)\n--\n\n"
     "Start receiving into writable buffer `buf` from group rank `source` (ANY_SOURCE: any) with\n"
     "`tag` (ANY_TAG: any); return a Request."},
    {"barrier", (PyCFunction)group_barrier, METH_NOARGS,
     "barrier($self, /)\n--\n\nBlock until every member has entered the barrier."},
    {"bcast", (PyCFunction)group_bcast, METH_VARARGS,
     "bcast($self, buf, root, /)\n--\n\nBroadcast `buf` (as bytes) from group rank `root` into every member's `buf`."},
    {"reduce", (PyCFunction)group_reduce, METH_VARARGS,
     "reduce($self, sendbuf, recvbuf, op, root=0, /)\n--\n\n"
     "Combine every member's `sendbuf` element-wise with `op` (SUM, MAX, ...) into `recvbuf` at\n"
     "`root` (None elsewhere); the element type comes from the buffer's format."},
    {"allreduce", (PyCFunction)group_allreduce, METH_VARARGS,
     "allreduce($self, sendbuf, recvbuf, op, /)\n--\n\nAs reduce, with the result in every member's `recvbuf`."},
    {"gather", (PyCFunction)group_gather, METH_VARARGS,
     "gather($self, sendbuf, recvbuf, root=0, /)\n--\n\n"
     "Concatenate every member's `sendbuf` (equal sizes) in rank order into `recvbuf` at `root`."},
    {"scatter", (PyCFunction)group_scatter, METH_VARARGS,
     "scatter($self, sendbuf, recvbuf, root=0, /)\n--\n\n"
     "Split `sendbuf` at `root` into equal blocks, block i into member i's `recvbuf`."},
    {"allgather", (PyCFunction)group_allgather, METH_VARARGS,
     "allgather($self, sendbuf, recvbuf, /)\n--\n\nAs gather, with the result in every member's `recvbuf`."},
    {"alltoall", (PyCFunction)group_alltoall, METH_VARARGS,
     "alltoall($self, sendbuf, recvbuf, /)\n--\n\n"
     "Block j of member i's `sendbuf` goes to block i of member j's `recvbuf` (size/group size each)."},
    {"irpc", (PyCFunction)group_irpc, METH_VARARGS,
     "irpc($self, target, id, args, reply, /)\n--\n\nCall handler id on target with args; the Request "
     "completes when the reply is in the writable buffer reply (its status's nbytes: the reply length)."},
    {"rpc_ff", (PyCFunction)group_rpc_ff, METH_VARARGS,
     "rpc_ff($self, target, id, args, /)\n--\n\nCall handler id on target without waiting for it (quiet() completes it)."},
    RMA_GROUP_METHODS
    {"member", (PyCFunction)grp_member, METH_VARARGS,
     "member($self, rank, /)\n--\n\nReturn (pbid, PB-local rank) of group rank `rank`."},
    {NULL, NULL, 0, NULL},
};

/* ---- module functions ---- */

static PyObject *m_init(PyObject *mod, PyObject *args)
{
    (void)mod;
    int timeout = 60, rc;
    if (!PyArg_ParseTuple(args, "|i:init", &timeout))
        return NULL;
    BLOCKING(rc, waitio_init(timeout));
    if (rc)
        return raise_code(rc);
    Py_RETURN_NONE;
}

static PyObject *m_finalize(PyObject *mod, PyObject *noargs)
{
    (void)mod; (void)noargs;
    int rc, on;
    LOCKED(on, waitio_initialized());
    if (!on)
        Py_RETURN_NONE;
    BLOCKING(rc, waitio_finalize());
    wio_session++; /* the library's futures are gone: _core_rma.c's Future objects must not touch them */
    if (rc)
        return raise_code(rc);
    Py_RETURN_NONE;
}

static PyObject *m_initialized(PyObject *mod, PyObject *noargs)
{
    (void)mod; (void)noargs;
    int on;
    LOCKED(on, waitio_initialized());
    return PyBool_FromLong(on);
}

#define INT_GETTER(name, fn)                                           \
    static PyObject *name(PyObject *mod, PyObject *noargs)             \
    {                                                                  \
        (void)mod; (void)noargs;                                       \
        int v;                                                         \
        CALL(fn(&v));                                                  \
        return PyLong_FromLong(v);                                     \
    }
INT_GETTER(m_pb_rank, waitio_pb_rank)
INT_GETTER(m_pb_size, waitio_pb_size)
INT_GETTER(m_local_rank, waitio_local_rank)
INT_GETTER(m_local_size, waitio_local_size)

/* The process count of every PB, or NULL with waitio.Error. */
static int *nprocs_array(int *npb)
{
    int n;
    LOCKED(n, waitio_get_nprocs(NULL));
    if (n < 0) {
        raise_with(WAITIO_ERR_STATE, "WaitIO is not initialised (call waitio.init first)");
        return NULL;
    }
    int *a = PyMem_Malloc(sizeof(int) * (size_t)(n ? n : 1));
    if (!a) {
        PyErr_NoMemory();
        return NULL;
    }
    int m;
    LOCKED(m, waitio_get_nprocs(a));
    (void)m;
    *npb = n;
    return a;
}

static PyObject *m_get_nprocs(PyObject *mod, PyObject *noargs)
{
    (void)mod; (void)noargs;
    int npb;
    int *a = nprocs_array(&npb);
    if (!a)
        return NULL;
    PyObject *l = PyList_New(npb);
    for (int i = 0; l && i < npb; i++) {
        PyObject *v = PyLong_FromLong(a[i]);
        if (!v) {
            Py_CLEAR(l);
            break;
        }
        PyList_SET_ITEM(l, i, v);
    }
    PyMem_Free(a);
    return l;
}

static PyObject *m_universe(PyObject *mod, PyObject *noargs)
{
    (void)mod; (void)noargs;
    WAITIO_MPI_Comm c;
    CALL(waitio_create_universe(&c));
    return group_wrap(c);
}

static PyObject *m_pbheads(PyObject *mod, PyObject *noargs)
{
    (void)mod; (void)noargs;
    WAITIO_MPI_Comm c;
    CALL(waitio_create_universe_pbhead(&c));
    return group_wrap(c);
}

/* create_group(gid, members, order): members[p] is None or a list of PB-local ranks of PB p */
static PyObject *m_create_group(PyObject *mod, PyObject *args)
{
    (void)mod;
    int gid;
    PyObject *members, *order;
    if (!PyArg_ParseTuple(args, "iOO:create_group", &gid, &members, &order))
        return NULL;
    int npb;
    int *counts = nprocs_array(&npb);
    if (!counts)
        return NULL;
    PyObject *result = NULL;
    int **lists = NULL, *ord = NULL;
    if (!PySequence_Check(members) || !PySequence_Check(order) || PySequence_Size(members) != npb ||
        PySequence_Size(order) != npb) {
        PyErr_Format(PyExc_ValueError, "members and order must be sequences with one entry per PB (%d)", npb);
        goto out;
    }
    lists = PyMem_Calloc((size_t)npb, sizeof(int *));
    ord = PyMem_Calloc((size_t)npb, sizeof(int));
    if (!lists || !ord) {
        PyErr_NoMemory();
        goto out;
    }
    for (int p = 0; p < npb; p++) {
        long v;
        int overflow = 0;
        PyObject *o = PySequence_GetItem(order, p);
        int bad = !o || as_long(o, "order entry", &v, &overflow) < 0;
        Py_XDECREF(o);
        if (bad)
            goto out;
        if (overflow || v < 0 || v > npb) {
            PyErr_Format(PyExc_ValueError, "order[%d] must be 0 (PB left out) or a position 1..%d", p, npb);
            goto out;
        }
        ord[p] = (int)v;
        PyObject *m = PySequence_GetItem(members, p);
        if (!m)
            goto out;
        if (m != Py_None) {
            Py_ssize_t n = PySequence_Size(m);
            lists[p] = n >= 0 ? PyMem_Malloc(sizeof(int) * (size_t)(n + 1)) : NULL;
            for (Py_ssize_t i = 0; lists[p] && i < n && !PyErr_Occurred(); i++) {
                PyObject *x = PySequence_GetItem(m, i);
                if (x && as_long(x, "PB-local rank", &v, &overflow) == 0) {
                    if (overflow || v < 0 || v >= counts[p])
                        PyErr_Format(PyExc_ValueError, "rank in members[%d] is out of range for PB %d of %d processes",
                                     p, p, counts[p]);
                    lists[p][i] = (int)v;
                }
                Py_XDECREF(x);
            }
            if (lists[p])
                lists[p][n] = WAITIO_RANKS_END;
            else if (!PyErr_Occurred())
                PyErr_NoMemory();
        }
        Py_DECREF(m);
        if (PyErr_Occurred())
            goto out;
    }
    waitio_group_t g;
    LOCKED(g, waitio_create_group_wranks(gid, lists, ord));
    if (g)
        result = group_wrap(g);
    else
        raise_code(WAITIO_ERR_GROUP);
out:
    for (int p = 0; lists && p < npb; p++)
        PyMem_Free(lists[p]);
    PyMem_Free(lists);
    PyMem_Free(ord);
    PyMem_Free(counts);
    return result;
}

static PyObject *m_waitall(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *seq;
    if (!PyArg_ParseTuple(args, "O:waitall", &seq))
        return NULL;
    PyObject *fast = PySequence_Fast(seq, "waitall needs a sequence of requests");
    if (!fast)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PySequence_Fast_GET_ITEM(fast, i);
        if (!PyObject_TypeCheck(o, &RequestType)) {
            Py_DECREF(fast);
            return PyErr_Format(PyExc_TypeError, "waitall: item %zd is a %.100s, not a Request", i, Py_TYPE(o)->tp_name);
        }
    }
    int first = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        RequestObject *r = (RequestObject *)PySequence_Fast_GET_ITEM(fast, i);
        if (request_wait_inner(r) < 0) {
            Py_DECREF(fast);
            return NULL;
        }
        if (r->error && !first)
            first = r->error;
    }
    Py_DECREF(fast);
    if (first)
        return raise_req(first);
    Py_RETURN_NONE;
}

/* The transports compiled into this extension (the library's table, in its order of preference),
 * comma-separated: what python -m waitio.info reports. */
static PyObject *m_info(PyObject *mod, PyObject *noargs)
{
    (void)mod; (void)noargs;
    return Py_BuildValue("{s:s,s:s}", "version", waitio_version(), "transports", waitio_transports_built());
}

/* ---- the opcode check of a peer's pickle (_objects.py decodes object messages) ----
 *
 * A peer's pickle is decoded by a restricted unpickler (_objects.py): only allowed globals. That
 * is not enough: the BUILD opcode calls __setstate__ of whatever object is on the stack, and
 * NumPy's ndarray and dtype __setstate__ trust their input (a short object list reads past its
 * end; a dtype's flags can claim it holds object pointers). Plain data never uses BUILD, nor
 * persistent ids or out-of-band buffers, so a peer's pickle that contains one is refused before
 * it is decoded. The walk follows each opcode's argument exactly as CPython's unpickler reads
 * it (pickletools' table), so that no opcode can hide inside another's argument; every length
 * is checked against what arrived. C, not Python: a dict of 10,000 items is 30,000 opcodes.
 * A pickle that names no global can only build plain containers and scalars: it is decoded by
 * pickle.loads itself, the restricted unpickler's find_class would never run anyway. */

enum { ARG_NONE, ARG_FIXED, ARG_LINE, ARG_2LINES, ARG_LEN1, ARG_LEN4, ARG_LEN8, ARG_BAD };

/* How opcode OP's argument is laid out; *fixed: its size for ARG_FIXED. */
static int pickle_arg(unsigned char op, size_t *fixed)
{
    *fixed = 0;
    switch (op) {
    case '(': case '.': case '0': case '1': case '2': case 'N': case 'R': case 'a': case 'd':
    case '}': case 'e': case 'l': case ']': case 'o': case 's': case 't': case ')': case 'u':
    case 0x81: case 0x85: case 0x86: case 0x87: case 0x88: case 0x89: case 0x8f: case 0x90:
    case 0x91: case 0x92: case 0x93: case 0x94:
        return ARG_NONE;
    case 'K': case 'h': case 'q': case 0x80: case 0x82: *fixed = 1; return ARG_FIXED;
    case 'M': case 0x83: *fixed = 2; return ARG_FIXED;
    case 'J': case 'j': case 'r': case 0x84: *fixed = 4; return ARG_FIXED;
    case 'G': case 0x95: *fixed = 8; return ARG_FIXED; /* FRAME: its length; the frame is opcodes */
    case 'F': case 'I': case 'L': case 'S': case 'V': case 'g': case 'p': return ARG_LINE;
    case 'c': case 'i': return ARG_2LINES;
    case 'U': case 'C': case 0x8a: case 0x8c: return ARG_LEN1;
    case 'T': case 'X': case 0x8b: case 'B': return ARG_LEN4;
    case 0x8d: case 0x8e: case 0x96: return ARG_LEN8;
    default: return ARG_BAD;
    }
}

/* Why opcode OP is refused in a peer's pickle, or NULL. */
static const char *pickle_refused(unsigned char op)
{
    switch (op) {
    case 'b': return "uses pickle opcode BUILD, which sets an object's state (plain data never does)";
    case 'P': case 'Q': return "uses a persistent id (pickle opcode PERSID)";
    case 0x97: case 0x98: return "uses an out-of-band buffer (pickle opcode NEXT_BUFFER)";
    default: return NULL;
    }
}

/* Skips one line ending in '\n' from *at; 0, or -1 if none ends before n. */
static int pickle_skip_line(const unsigned char *p, size_t n, size_t *at)
{
    const unsigned char *nl = memchr(p + *at, '\n', n - *at);
    if (!nl)
        return -1;
    *at = (size_t)(nl - p) + 1;
    return 0;
}

/* Skips a counted argument whose little-endian length has W bytes; 0, or -1 if it overruns. */
static int pickle_skip_counted(const unsigned char *p, size_t n, size_t *at, size_t w)
{
    if (n - *at < w)
        return -1;
    uint64_t len = 0;
    for (size_t i = 0; i < w; i++)
        len |= (uint64_t)p[*at + i] << (8 * i);
    *at += w;
    if (len > n - *at)
        return -1;
    *at += (size_t)len;
    return 0;
}

/* Whether opcode OP names a global (GLOBAL, INST, STACK_GLOBAL, EXT*): find_class runs. */
static int pickle_names_global(unsigned char op)
{
    return op == 'c' || op == 'i' || op == 0x93 || op == 0x82 || op == 0x83 || op == 0x84;
}

/* The memo index a PUT, BINPUT or LONG_BINPUT at P[op] stores to (its argument, already
 * known to lie within the pickle, ends at P[end]); -1 if it is not a plain decimal number. */
static int64_t pickle_put_index(const unsigned char *p, size_t op, size_t end)
{
    if (p[op] == 'q')
        return p[op + 1];
    if (p[op] == 'r')
        return (int64_t)((uint32_t)p[op + 1] | (uint32_t)p[op + 2] << 8 | (uint32_t)p[op + 3] << 16 |
                         (uint32_t)p[op + 4] << 24);
    int64_t v = 0; /* 'p': decimal digits, then the newline at end - 1 */
    if (end - op < 3)
        return -1;
    for (size_t i = op + 1; i + 1 < end; i++) {
        if (p[i] < '0' || p[i] > '9' || v > (INT64_C(1) << 40))
            return -1;
        v = v * 10 + (p[i] - '0');
    }
    return v;
}

/* Walks the pickle P[0..n) to its STOP. 0 if every opcode is allowed (*globals: whether one
 * names a global); -1 with *why and *where (the opcode's offset) otherwise. A memo index may
 * only be the next one or one in use, as pickle writes them: CPython's unpickler grows its memo
 * to twice the index it is given, so a 5-byte LONG_BINPUT of 2^31 would allocate 32 GiB. */
static int pickle_walk(const unsigned char *p, size_t n, const char **why, size_t *where, int *globals)
{
    size_t at = 0;
    int64_t memo = 0; /* memo entries so far */
    *globals = 0;
    while (at < n) {
        unsigned char op = p[at];
        size_t fixed;
        int kind = pickle_arg(op, &fixed), bad = 0;
        *where = at++;
        if ((*why = pickle_refused(op)) != NULL)
            return -1;
        *globals |= pickle_names_global(op);
        switch (kind) {
        case ARG_NONE: break;
        case ARG_FIXED: bad = n - at < fixed; at += bad ? 0 : fixed; break;
        case ARG_LINE: bad = pickle_skip_line(p, n, &at); break;
        case ARG_2LINES: bad = pickle_skip_line(p, n, &at) || pickle_skip_line(p, n, &at); break;
        case ARG_LEN1: bad = pickle_skip_counted(p, n, &at, 1); break;
        case ARG_LEN4: bad = pickle_skip_counted(p, n, &at, 4); break;
        case ARG_LEN8: bad = pickle_skip_counted(p, n, &at, 8); break;
        default: *why = "has an unknown pickle opcode"; return -1;
        }
        if (bad) {
            *why = "has a pickle opcode whose argument runs past the end";
            return -1;
        }
        if (op == 0x94) /* MEMOIZE: the next index */
            memo++;
        if (op == 'p' || op == 'q' || op == 'r') {
            int64_t idx = pickle_put_index(p, *where, at);
            if (idx < 0 || idx > memo) {
                *why = "stores to a memo index out of sequence (pickle opcode PUT)";
                return -1;
            }
            memo += idx == memo;
        }
        if (op == '.')
            return 0;
    }
    *where = n;
    *why = "ends inside the pickle (no STOP)";
    return -1;
}

static PyObject *m_pickle_check(PyObject *mod, PyObject *args)
{
    (void)mod;
    Py_buffer b;
    if (!PyArg_ParseTuple(args, "y*:pickle_check", &b))
        return NULL;
    const char *why = NULL;
    size_t where = 0;
    int globals = 0;
    int rc = pickle_walk(b.buf, (size_t)b.len, &why, &where, &globals);
    PyBuffer_Release(&b);
    if (rc < 0) { /* args: (text, offset of the opcode) */
        PyObject *e = Py_BuildValue("(s n)", why, (Py_ssize_t)where);
        if (e)
            PyErr_SetObject(PyExc_ValueError, e);
        Py_XDECREF(e);
        return NULL;
    }
    return PyBool_FromLong(globals);
}

static PyMethodDef module_methods[] = {
    {"init", m_init, METH_VARARGS,
     "init(timeout=60, /)\n--\n\nStart WaitIO: register with the instance and wait up to `timeout` s for every PB."},
    {"finalize", m_finalize, METH_NOARGS,
     "finalize()\n--\n\nFlush, say goodbye to every peer and release everything (no-op if not initialised)."},
    {"initialized", m_initialized, METH_NOARGS,
     "initialized()\n--\n\nReturn True between a successful init and finalize."},
    {"pb_rank", m_pb_rank, METH_NOARGS, "pb_rank()\n--\n\nReturn this process's PB id (0 .. pb_size()-1)."},
    {"pb_size", m_pb_size, METH_NOARGS, "pb_size()\n--\n\nReturn the number of PBs of the instance."},
    {"local_rank", m_local_rank, METH_NOARGS, "local_rank()\n--\n\nReturn this process's rank inside its PB."},
    {"local_size", m_local_size, METH_NOARGS, "local_size()\n--\n\nReturn the number of processes of this PB."},
    {"get_nprocs", m_get_nprocs, METH_NOARGS, "get_nprocs()\n--\n\nReturn the process count of every PB, as a list."},
    {"universe", m_universe, METH_NOARGS, "universe()\n--\n\nReturn the Group of all processes, PB by PB."},
    {"pbheads", m_pbheads, METH_NOARGS, "pbheads()\n--\n\nReturn the Group of the PB heads (rank 0 of each PB)."},
    {"create_group", m_create_group, METH_VARARGS,
     "create_group(gid, members, order, /)\n--\n\n"
     "Return a Group from per-PB lists of PB-local ranks (None: no member) and order[p] = PB p's\n"
     "position (1, 2, ...; 0 leaves it out)."},
    {"waitall", m_waitall, METH_VARARGS,
     "waitall(requests, /)\n--\n\nWait for every request; raise the first failure once all have completed."},
    {"build_info", m_info, METH_NOARGS, "build_info()\n--\n\nReturn {'version': ..., 'transports': ...}."},
    {"pickle_check", m_pickle_check, METH_VARARGS,
     "pickle_check(data, /)\n--\n\nRaise ValueError(why, offset) if the pickle data sets an object's state (BUILD), uses\n"
     "persistent ids or out-of-band buffers, or is malformed; else return whether it names a global."},
    {"win_allocate", m_win_allocate, METH_VARARGS,
     "win_allocate(group, size, device=False, /)\n--\n\nAllocate a window of size bytes on every member (collective);\n"
     "device: in device (GPU) memory (WAITIO_WIN_DEVICE)."},
    {"win_create", m_win_create, METH_VARARGS,
     "win_create(group, buf, /)\n--\n\nExpose the writable buffer buf (host, or a device array) as this member's part (collective)."},
    {"rma_world", m_rma_world, METH_NOARGS, "rma_world()\n--\n\nReturn the Group of every process for one-sided use."},
    {"quiet", m_quiet, METH_NOARGS, "quiet()\n--\n\nComplete every one-sided operation of this process."},
    {"fence", m_fence, METH_NOARGS, "fence()\n--\n\nOrder earlier puts, atomics and signals before later ones."},
    {"progress", m_progress, METH_NOARGS, "progress()\n--\n\nServe one-sided requests and calls once."},
    RMA_MODULE_METHODS
    {"rpc_register", m_rpc_register, METH_VARARGS,
     "rpc_register(id, fn, /)\n--\n\nRegister fn(origin, args) -> bytes | None as handler id (None removes it)."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject GroupType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "waitio._core.Group",
    .tp_basicsize = sizeof(GroupObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A WaitIO group (communicator) with buffer-level operations; waitio.Comm wraps it.",
    .tp_methods = group_methods,
    .tp_getset = group_getset,
};

static PyTypeObject RequestType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "waitio._core.Request",
    .tp_basicsize = sizeof(RequestObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A pending isend/irecv; keeps its buffer exported until it completes.",
    .tp_dealloc = (destructor)request_dealloc,
    .tp_methods = request_methods,
    .tp_getset = request_getset,
};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "waitio._core", "WaitIO's compiled core (see the waitio package).", -1,
    module_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__core(void)
{
    if (PyType_Ready(&GroupType) < 0 || PyType_Ready(&RequestType) < 0 || PyType_Ready(&WindowType) < 0 ||
        PyType_Ready(&FutureType) < 0 || PyType_Ready(&DeviceHoldType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&moduledef);
    if (!m)
        return NULL;
    WaitioError = PyErr_NewExceptionWithDoc("waitio.Error",
                                            "A failure reported by the WaitIO library: args = (code, message); "
                                            ".code is the WAITIO_ERR_* number, .message the explanation.",
                                            PyExc_RuntimeError, NULL);
    Py_INCREF(&GroupType);
    Py_INCREF(&RequestType);
    PyModule_AddObject(m, "Group", (PyObject *)&GroupType);
    PyModule_AddObject(m, "Request", (PyObject *)&RequestType);
    Py_INCREF(&WindowType);
    PyModule_AddObject(m, "Window", (PyObject *)&WindowType);
    Py_INCREF(&FutureType);
    PyModule_AddObject(m, "Future", (PyObject *)&FutureType);
    static const struct { const char *name; int v; } rma[] = {
        {"AMO_FETCH", WAITIO_AMO_FETCH}, {"AMO_SET", WAITIO_AMO_SET}, {"AMO_SWAP", WAITIO_AMO_SWAP},
        {"AMO_CSWAP", WAITIO_AMO_CSWAP}, {"AMO_ADD", WAITIO_AMO_ADD}, {"AMO_AND", WAITIO_AMO_AND},
        {"AMO_OR", WAITIO_AMO_OR}, {"AMO_XOR", WAITIO_AMO_XOR}, {"AMO_MIN", WAITIO_AMO_MIN},
        {"AMO_MAX", WAITIO_AMO_MAX}, {"CMP_EQ", WAITIO_CMP_EQ},
        {"CMP_NE", WAITIO_CMP_NE}, {"CMP_GT", WAITIO_CMP_GT}, {"CMP_GE", WAITIO_CMP_GE},
        {"CMP_LT", WAITIO_CMP_LT}, {"CMP_LE", WAITIO_CMP_LE}, {"SIGNAL_SET", WAITIO_SIGNAL_SET},
        {"SIGNAL_ADD", WAITIO_SIGNAL_ADD},
    };
    for (size_t i = 0; i < sizeof rma / sizeof rma[0]; i++)
        PyModule_AddIntConstant(m, rma[i].name, rma[i].v);
    PyModule_AddObject(m, "Error", WaitioError);
    PyModule_AddIntConstant(m, "ANY_SOURCE", WAITIO_ANY_SOURCE);
    PyModule_AddObject(m, "ANY_TAG", PyLong_FromUnsignedLong(WAITIO_ANY_TAG));
    static const struct { const char *name; int v; } ops[] = {
        {"SUM", WAITIO_MPI_SUM}, {"PROD", WAITIO_MPI_PROD}, {"MAX", WAITIO_MPI_MAX},
        {"MIN", WAITIO_MPI_MIN}, {"LAND", WAITIO_MPI_LAND}, {"LOR", WAITIO_MPI_LOR},
        {"LXOR", WAITIO_MPI_LXOR}, {"BAND", WAITIO_MPI_BAND}, {"BOR", WAITIO_MPI_BOR},
        {"BXOR", WAITIO_MPI_BXOR},
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        PyModule_AddIntConstant(m, ops[i].name, ops[i].v);
    return m;
}
