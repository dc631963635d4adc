/*
 * _core.c — the compiled part of the Python binding (SPEC §11): WaitIO's C API and the
 * conversion layer's collectives on buffer-protocol objects (NumPy arrays, bytearray,
 * memoryview, CPU torch tensors) without copies. The Python-level API (mpi4py style, pickled
 * objects) is in __init__.py.
 *
 * Types: Group (a WaitIO group) and Request (a pending isend/irecv; it keeps the buffer
 * exported until completion, so the memory cannot move or disappear while WaitIO uses it).
 * Errors raise waitio.Error(code, message).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>
#include "waitio.h"
#include "waitio_mpi.h"

static PyObject *WaitioError;

static PyObject *raise_with(int code, const char *msg)
{
    PyObject *args = Py_BuildValue("(is)", code, msg);
    if (args) {
        PyErr_SetObject(WaitioError, args);
        Py_DECREF(args);
    }
    return NULL;
}

/* An API call failed: the library recorded the details. */
static PyObject *raise_code(int code) { return raise_with(code, waitio_error_message()); }

/* A request completed with an error: its code says what happened. */
static PyObject *raise_req(int code)
{
    char msg[256];
    snprintf(msg, sizeof msg, "request failed: %s", waitio_strerror(code));
    return raise_with(code, msg);
}

static PyObject *raise_msg(const char *msg) { return raise_with(WAITIO_ERR_ARG, msg); }

#define CALL(expr) do { int rc_ = (expr); if (rc_) return raise_code(rc_); } while (0)

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

static int get_buffer(PyObject *obj, Py_buffer *b, int writable)
{
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, b, flags) == 0)
        return 0;
    /* say what is wrong in WaitIO's terms, keeping the original error as the cause */
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    raise_msg(writable ? "receive buffer must be a writable, C-contiguous buffer (copy "
                         "non-contiguous arrays with numpy.ascontiguousarray first)"
                       : "buffer must be C-contiguous (copy non-contiguous arrays with "
                         "numpy.ascontiguousarray first)");
    PyObject *t2, *v2, *tb2;
    PyErr_Fetch(&t2, &v2, &tb2);
    PyErr_NormalizeException(&t2, &v2, &tb2);
    if (value)
        PyException_SetCause(v2, value);
    else
        Py_XDECREF(value);
    PyErr_Restore(t2, v2, tb2);
    Py_XDECREF(type);
    Py_XDECREF(tb);
    return -1;
}

/* ---- Group ---- */

typedef struct {
    PyObject_HEAD
    waitio_group_t g;
} GroupObject;

static PyTypeObject GroupType;

static PyObject *group_wrap(waitio_group_t g)
{
    GroupObject *o = PyObject_New(GroupObject, &GroupType);
    if (o)
        o->g = g;
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
    {"rank", (getter)group_rank, NULL, "this process's rank in the group (-1: not a member)", NULL},
    {"size", (getter)group_size, NULL, "number of processes in the group", NULL},
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
} RequestObject;

static PyTypeObject RequestType;

static void request_release(RequestObject *r)
{
    if (r->has_buf) {
        PyBuffer_Release(&r->buf);
        r->has_buf = 0;
    }
}

static void request_dealloc(RequestObject *r)
{
    if (!r->done && r->req.internal) {
        /* still in flight: WaitIO may still touch the memory, so keep it exported (leak the
         * view rather than risk a use-after-free); cancel a receive if we can */
        waitio_cancel(&r->req);
        int flag = 0;
        if (waitio_test(&r->req, &flag) == 0 && flag)
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

/* Waits in slices so that Ctrl-C reaches Python. */
static int request_wait_inner(RequestObject *r)
{
    if (r->done)
        return 0;
    for (;;) {
        int rc = waitio_wait_timeout(&r->req, 0.2);
        if (rc == WAITIO_ERR_TIMEOUT && r->req.internal) {
            if (PyErr_CheckSignals() < 0)
                return -1;
            continue;
        }
        r->done = 1;
        r->error = rc;
        request_release(r);
        return 0;
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
        int flag = 0, rc = waitio_test(&r->req, &flag);
        if (!flag && !rc)
            Py_RETURN_FALSE;
        r->done = 1;
        r->error = rc;
        request_release(r);
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
     "wait() -> (source, tag, nbytes): block until complete; raises waitio.Error on failure"},
    {"test", (PyCFunction)request_test, METH_NOARGS, "test() -> bool: complete yet?"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef request_getset[] = {
    {"status", (getter)request_status, NULL, "(source, tag, nbytes) once complete, else None", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyObject *new_request(PyObject *obj, int writable, Py_buffer **bufp, RequestObject **out)
{
    RequestObject *r = PyObject_New(RequestObject, &RequestType);
    if (!r)
        return NULL;
    memset(&r->req, 0, sizeof r->req);
    r->has_buf = 0;
    r->done = 0;
    r->error = 0;
    if (get_buffer(obj, &r->buf, writable) < 0) {
        Py_DECREF(r);
        return NULL;
    }
    r->has_buf = 1;
    *bufp = &r->buf;
    *out = r;
    return (PyObject *)r;
}

/* ---- point-to-point ---- */

static PyObject *group_isend(GroupObject *self, PyObject *args)
{
    PyObject *obj;
    int dest;
    unsigned long tag;
    if (!PyArg_ParseTuple(args, "Oik", &obj, &dest, &tag))
        return NULL;
    Py_buffer *b;
    RequestObject *r;
    if (!new_request(obj, 0, &b, &r))
        return NULL;
    int rc = waitio_isend(self->g, dest, b->buf, (size_t)b->len, tag, &r->req);
    if (rc) {
        Py_DECREF(r);
        return raise_code(rc);
    }
    return (PyObject *)r;
}

static PyObject *group_irecv(GroupObject *self, PyObject *args)
{
    PyObject *obj;
    int source = WAITIO_ANY_SOURCE;
    unsigned long tag = WAITIO_ANY_TAG;
    if (!PyArg_ParseTuple(args, "O|ik", &obj, &source, &tag))
        return NULL;
    Py_buffer *b;
    RequestObject *r;
    if (!new_request(obj, 1, &b, &r))
        return NULL;
    int rc = waitio_irecv(self->g, source, b->buf, (size_t)b->len, tag, &r->req);
    if (rc) {
        Py_DECREF(r);
        return raise_code(rc);
    }
    return (PyObject *)r;
}

/* ---- collectives ---- */

/* Element count and datatype of a pair of buffers that must agree. */
static int coll_type(const Py_buffer *b, int *dtype, int *count)
{
    *dtype = dtype_of(b);
    if (!*dtype) {
        raise_msg("unsupported buffer element format for a reduction");
        return -1;
    }
    if (b->len / b->itemsize > 0x7fffffff) {
        raise_msg("buffer has more than 2^31-1 elements");
        return -1;
    }
    *count = (int)(b->len / b->itemsize);
    return 0;
}

static PyObject *group_barrier(GroupObject *self, PyObject *noargs)
{
    (void)noargs;
    CALL(waitio_mpi_barrier(self->g));
    Py_RETURN_NONE;
}

static PyObject *group_bcast(GroupObject *self, PyObject *args)
{
    PyObject *obj;
    int root;
    if (!PyArg_ParseTuple(args, "Oi", &obj, &root))
        return NULL;
    Py_buffer b;
    if (get_buffer(obj, &b, 1) < 0)
        return NULL;
    int rc = b.len > 0x7fffffff ? WAITIO_ERR_ARG
                                : waitio_mpi_bcast(b.buf, (int)b.len, WAITIO_MPI_BYTE, root, self->g);
    PyBuffer_Release(&b);
    if (rc)
        return raise_code(rc);
    Py_RETURN_NONE;
}

/* reduce / allreduce: (sendbuf, recvbuf, op[, root]); recvbuf may be None off the root */
static PyObject *reduce_common(GroupObject *self, PyObject *args, int all)
{
    PyObject *sobj, *robj;
    int op, root = 0;
    if (!PyArg_ParseTuple(args, all ? "OOi" : "OOi|i", &sobj, &robj, &op, &root))
        return NULL;
    Py_buffer s, r;
    int have_r = robj != Py_None;
    if (get_buffer(sobj, &s, 0) < 0)
        return NULL;
    if (have_r && get_buffer(robj, &r, 1) < 0) {
        PyBuffer_Release(&s);
        return NULL;
    }
    int dtype, count, rc = 0;
    if (coll_type(&s, &dtype, &count) < 0) {
        rc = -1;
    } else if (have_r && (r.len != s.len || dtype_of(&r) != dtype)) {
        raise_msg("send and receive buffers differ in size or element type");
        rc = -1;
    } else if (!have_r && all) {
        raise_msg("allreduce needs a receive buffer");
        rc = -1;
    } else {
        void *rbuf = have_r ? r.buf : NULL;
        int wrc = all ? waitio_mpi_allreduce(s.buf, rbuf, count, dtype, op, self->g)
                      : waitio_mpi_reduce(s.buf, rbuf, count, dtype, op, root, self->g);
        if (wrc) {
            raise_code(wrc);
            rc = -1;
        }
    }
    PyBuffer_Release(&s);
    if (have_r)
        PyBuffer_Release(&r);
    if (rc)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *group_reduce(GroupObject *self, PyObject *args) { return reduce_common(self, args, 0); }
static PyObject *group_allreduce(GroupObject *self, PyObject *args) { return reduce_common(self, args, 1); }

/* gather / scatter / allgather / alltoall on raw bytes: (sendbuf, recvbuf[, root]) */
enum { K_GATHER, K_SCATTER, K_ALLGATHER, K_ALLTOALL };

static PyObject *move_common(GroupObject *self, PyObject *args, int kind)
{
    PyObject *sobj, *robj;
    int root = 0;
    int rooted = kind == K_GATHER || kind == K_SCATTER;
    if (!PyArg_ParseTuple(args, rooted ? "OO|i" : "OO", &sobj, &robj, &root))
        return NULL;
    int n = 0, me = -1;
    CALL(waitio_group_size(self->g, &n));
    CALL(waitio_group_rank(self->g, &me));
    Py_buffer s = {0}, r = {0};
    int have_s = sobj != Py_None, have_r = robj != Py_None, rc = 0;
    if (have_s && get_buffer(sobj, &s, 0) < 0)
        return NULL;
    if (have_r && get_buffer(robj, &r, 1) < 0) {
        if (have_s)
            PyBuffer_Release(&s);
        return NULL;
    }
    /* per-process block size in bytes */
    Py_ssize_t blk = kind == K_SCATTER ? r.len : s.len;
    int at_root = me == root;
    if ((kind != K_SCATTER && !have_s) || (kind == K_SCATTER && !have_r) ||
        ((kind == K_ALLGATHER || kind == K_ALLTOALL || (kind == K_GATHER && at_root)) && !have_r) ||
        (kind == K_SCATTER && at_root && !have_s)) {
        raise_msg("missing send or receive buffer");
        rc = -1;
    } else if (kind == K_ALLTOALL && (s.len % n || r.len != s.len)) {
        raise_msg("alltoall buffers must be equal and divisible by the group size");
        rc = -1;
    } else if (((kind == K_GATHER && at_root) || kind == K_ALLGATHER) && r.len != blk * n) {
        raise_msg("receive buffer must hold one block per process");
        rc = -1;
    } else if (kind == K_SCATTER && at_root && s.len != blk * n) {
        raise_msg("send buffer must hold one block per process");
        rc = -1;
    } else if (blk > 0x7fffffff) {
        raise_msg("block larger than 2^31-1 bytes");
        rc = -1;
    } else {
        int b = (int)blk, wrc;
        switch (kind) {
        case K_GATHER: wrc = waitio_mpi_gather(s.buf, b, WAITIO_MPI_BYTE, r.buf, b, WAITIO_MPI_BYTE, root, self->g); break;
        case K_SCATTER: wrc = waitio_mpi_scatter(s.buf, b, WAITIO_MPI_BYTE, r.buf, b, WAITIO_MPI_BYTE, root, self->g); break;
        case K_ALLGATHER: wrc = waitio_mpi_allgather(s.buf, b, WAITIO_MPI_BYTE, r.buf, b, WAITIO_MPI_BYTE, self->g); break;
        default: b = (int)(s.len / n); wrc = waitio_mpi_alltoall(s.buf, b, WAITIO_MPI_BYTE, r.buf, b, WAITIO_MPI_BYTE, self->g); break;
        }
        if (wrc) {
            raise_code(wrc);
            rc = -1;
        }
    }
    if (have_s)
        PyBuffer_Release(&s);
    if (have_r)
        PyBuffer_Release(&r);
    if (rc)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *group_gather(GroupObject *self, PyObject *args) { return move_common(self, args, K_GATHER); }
static PyObject *group_scatter(GroupObject *self, PyObject *args) { return move_common(self, args, K_SCATTER); }
static PyObject *group_allgather(GroupObject *self, PyObject *args) { return move_common(self, args, K_ALLGATHER); }
static PyObject *group_alltoall(GroupObject *self, PyObject *args) { return move_common(self, args, K_ALLTOALL); }

static PyObject *grp_member(GroupObject *self, PyObject *args)
{
    int rank, pb, local;
    if (!PyArg_ParseTuple(args, "i", &rank))
        return NULL;
    CALL(waitio_group_member(self->g, rank, &pb, &local));
    return Py_BuildValue("(ii)", pb, local);
}

static PyMethodDef group_methods[] = {
    {"isend", (PyCFunction)group_isend, METH_VARARGS, "isend(buf, dest, tag) -> Request"},
    {"irecv", (PyCFunction)group_irecv, METH_VARARGS, "irecv(buf, source=ANY_SOURCE, tag=ANY_TAG) -> Request"},
    {"barrier", (PyCFunction)group_barrier, METH_NOARGS, "barrier()"},
    {"bcast", (PyCFunction)group_bcast, METH_VARARGS, "bcast(buf, root)"},
    {"reduce", (PyCFunction)group_reduce, METH_VARARGS, "reduce(sendbuf, recvbuf, op, root)"},
    {"allreduce", (PyCFunction)group_allreduce, METH_VARARGS, "allreduce(sendbuf, recvbuf, op)"},
    {"gather", (PyCFunction)group_gather, METH_VARARGS, "gather(sendbuf, recvbuf, root)"},
    {"scatter", (PyCFunction)group_scatter, METH_VARARGS, "scatter(sendbuf, recvbuf, root)"},
    {"allgather", (PyCFunction)group_allgather, METH_VARARGS, "allgather(sendbuf, recvbuf)"},
    {"alltoall", (PyCFunction)group_alltoall, METH_VARARGS, "alltoall(sendbuf, recvbuf)"},
    {"member", (PyCFunction)grp_member, METH_VARARGS, "member(rank) -> (pbid, local_rank)"},
    {NULL, NULL, 0, NULL},
};

/* ---- module functions ---- */

static PyObject *m_init(PyObject *mod, PyObject *args)
{
    (void)mod;
    int timeout = 60;
    if (!PyArg_ParseTuple(args, "|i", &timeout))
        return NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = waitio_init(timeout);
    Py_END_ALLOW_THREADS
    if (rc)
        return raise_code(rc);
    Py_RETURN_NONE;
}

static PyObject *m_finalize(PyObject *mod, PyObject *noargs)
{
    (void)mod; (void)noargs;
    if (!waitio_initialized())
        Py_RETURN_NONE;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = waitio_finalize();
    Py_END_ALLOW_THREADS
    if (rc)
        return raise_code(rc);
    Py_RETURN_NONE;
}

static PyObject *m_initialized(PyObject *mod, PyObject *noargs)
{
    (void)mod; (void)noargs;
    return PyBool_FromLong(waitio_initialized());
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

static PyObject *m_get_nprocs(PyObject *mod, PyObject *noargs)
{
    (void)mod; (void)noargs;
    int npb = waitio_get_nprocs(NULL);
    if (npb < 0)
        return raise_code(WAITIO_ERR_STATE);
    int *a = PyMem_Malloc(sizeof(int) * (size_t)npb);
    if (!a)
        return PyErr_NoMemory();
    waitio_get_nprocs(a);
    PyObject *l = PyList_New(npb);
    for (int i = 0; l && i < npb; i++)
        PyList_SET_ITEM(l, i, PyLong_FromLong(a[i]));
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
    if (!PyArg_ParseTuple(args, "iOO", &gid, &members, &order))
        return NULL;
    int npb = waitio_get_nprocs(NULL);
    if (npb < 0)
        return raise_code(WAITIO_ERR_STATE);
    if (!PySequence_Check(members) || !PySequence_Check(order) || PySequence_Size(members) != npb ||
        PySequence_Size(order) != npb)
        return raise_msg("members and order must be sequences with one entry per PB");
    int **lists = PyMem_Calloc((size_t)npb, sizeof(int *));
    int *ord = PyMem_Calloc((size_t)npb, sizeof(int));
    PyObject *result = NULL;
    if (!lists || !ord) {
        PyErr_NoMemory();
        goto out;
    }
    for (int p = 0; p < npb; p++) {
        PyObject *o = PySequence_GetItem(order, p);
        ord[p] = o ? (int)PyLong_AsLong(o) : -1;
        Py_XDECREF(o);
        PyObject *m = PySequence_GetItem(members, p);
        if (!m)
            goto out;
        if (m != Py_None) {
            Py_ssize_t n = PySequence_Size(m);
            lists[p] = n >= 0 ? PyMem_Malloc(sizeof(int) * (size_t)(n + 1)) : NULL;
            for (Py_ssize_t i = 0; lists[p] && i < n; i++) {
                PyObject *x = PySequence_GetItem(m, i);
                lists[p][i] = x ? (int)PyLong_AsLong(x) : -2;
                Py_XDECREF(x);
            }
            if (lists[p])
                lists[p][n] = WAITIO_RANKS_END;
        }
        Py_DECREF(m);
        if (PyErr_Occurred())
            goto out;
    }
    waitio_group_t g = waitio_create_group_wranks(gid, lists, ord);
    result = g ? group_wrap(g) : raise_code(WAITIO_ERR_GROUP);
out:
    for (int p = 0; lists && p < npb; p++)
        PyMem_Free(lists[p]);
    PyMem_Free(lists);
    PyMem_Free(ord);
    return result;
}

static PyObject *m_waitall(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *seq;
    if (!PyArg_ParseTuple(args, "O", &seq))
        return NULL;
    PyObject *fast = PySequence_Fast(seq, "waitall needs a sequence of requests");
    if (!fast)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    int first = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PySequence_Fast_GET_ITEM(fast, i);
        if (!PyObject_TypeCheck(o, &RequestType)) {
            Py_DECREF(fast);
            return raise_msg("waitall: not a Request");
        }
        RequestObject *r = (RequestObject *)o;
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

static PyObject *m_info(PyObject *mod, PyObject *noargs)
{
    (void)mod; (void)noargs;
    return Py_BuildValue("{s:s,s:s}", "version", waitio_version(), "transports", "shm,tcp");
}

static PyMethodDef module_methods[] = {
    {"init", m_init, METH_VARARGS, "init(timeout=60)"},
    {"finalize", m_finalize, METH_NOARGS, "finalize()"},
    {"initialized", m_initialized, METH_NOARGS, "initialized() -> bool"},
    {"pb_rank", m_pb_rank, METH_NOARGS, "this process's PB id"},
    {"pb_size", m_pb_size, METH_NOARGS, "number of PBs"},
    {"local_rank", m_local_rank, METH_NOARGS, "rank inside this PB"},
    {"local_size", m_local_size, METH_NOARGS, "processes of this PB"},
    {"get_nprocs", m_get_nprocs, METH_NOARGS, "process count of every PB"},
    {"universe", m_universe, METH_NOARGS, "the group of all processes"},
    {"pbheads", m_pbheads, METH_NOARGS, "the group of the PB heads (rank 0 of each PB)"},
    {"create_group", m_create_group, METH_VARARGS, "create_group(gid, members, order) -> Group"},
    {"waitall", m_waitall, METH_VARARGS, "waitall(requests)"},
    {"build_info", m_info, METH_NOARGS, "library version and transports"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject GroupType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "waitio._core.Group",
    .tp_basicsize = sizeof(GroupObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "A WaitIO group (communicator): buffer-level operations",
    .tp_methods = group_methods,
    .tp_getset = group_getset,
};

static PyTypeObject RequestType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "waitio._core.Request",
    .tp_basicsize = sizeof(RequestObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A pending isend/irecv; keeps its buffer exported until complete",
    .tp_dealloc = (destructor)request_dealloc,
    .tp_methods = request_methods,
    .tp_getset = request_getset,
};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "waitio._core", "WaitIO's compiled core", -1, module_methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__core(void)
{
    if (PyType_Ready(&GroupType) < 0 || PyType_Ready(&RequestType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&moduledef);
    if (!m)
        return NULL;
    WaitioError = PyErr_NewExceptionWithDoc("waitio.Error",
                                            "A WaitIO failure: args = (code, message); .code, .message",
                                            PyExc_RuntimeError, NULL);
    Py_INCREF(&GroupType);
    Py_INCREF(&RequestType);
    PyModule_AddObject(m, "Group", (PyObject *)&GroupType);
    PyModule_AddObject(m, "Request", (PyObject *)&RequestType);
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
