/*
 * fake_cuda.c — a TEST DOUBLE of the CUDA driver API (libcuda), not CUDA: the test suite loads
 * it through WAITIO_CUDA_LIBRARY so that WaitIO's device-memory paths (src/gpu/cuda.c and its
 * callers) run in CI on machines without a GPU. It implements only the entry points WaitIO and
 * its GPU tests call, with the driver's documented signatures and results.
 *
 * "Device memory" is a memfd per allocation. Its device address lies in a large PROT_NONE
 * reservation made at cuInit (as the real driver reserves its unified address range), so any
 * CPU access to a device pointer crashes the test — the point of the double: WaitIO must only
 * reach device memory through the driver. The driver's copies go through a second, private
 * read-write mapping of the memfd. cuPointerGetAttributes says DEVICE inside an allocation (or
 * an IPC mapping), HOST for cuMemHostAlloc'ed memory and 0 (not a CUDA pointer) elsewhere.
 * An IPC handle carries (pid, memfd descriptor number, size, allocation id); cuIpcOpenMemHandle
 * maps /proc/<pid>/fd/<n> (the same user's process), so two processes share the allocation as
 * two GPUs' processes do.
 *
 * Streams are real: an asynchronous copy on a stream made by cuStreamCreate is done by that
 * stream's worker thread, in order, after cuMemcpy*Async has returned; cuStreamQuery and
 * cuEventQuery answer CUDA_ERROR_NOT_READY until the work before them is done, and
 * cuStreamSynchronize / cuEventSynchronize wait for it. Copies on the legacy default stream
 * (NULL) and the synchronous ones are done before the call returns, so a blocking stream's
 * copies come after them as the driver orders them; the other way (a legacy-stream copy waiting
 * for blocking streams' earlier work) is not modelled. FAKE_CUDA_COPY_US_PER_MIB
 * (a knob of this double, not a WaitIO setting) makes every copy take that many microseconds
 * per MiB more (a slow copy engine), so that a test can tell overlapped copies from serial ones
 * by the clock.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef struct { unsigned char reserved[64]; } CUipcMemHandle;

enum {
    CUDA_SUCCESS = 0, CUDA_ERROR_INVALID_VALUE = 1, CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_NOT_INITIALIZED = 3, CUDA_ERROR_INVALID_DEVICE = 101, CUDA_ERROR_INVALID_CONTEXT = 201,
    CUDA_ERROR_MAP_FAILED = 205, CUDA_ERROR_INVALID_HANDLE = 400,
    CUDA_ERROR_NOT_READY = 600,
};
enum {
    ATTR_CONTEXT = 1, ATTR_MEMORY_TYPE = 2, ATTR_DEVICE_POINTER = 3, ATTR_HOST_POINTER = 4,
    ATTR_BUFFER_ID = 7, ATTR_IS_MANAGED = 8, ATTR_DEVICE_ORDINAL = 9, ATTR_RANGE_START_ADDR = 11, ATTR_RANGE_SIZE = 12,
};
enum { MEMTYPE_HOST = 1, MEMTYPE_DEVICE = 2 };

#define RESERVE_BYTES (256ull << 30) /* the device address range */
#define ALIGN (2ull << 20)
#define MAX_ALLOCS 4096
#define HANDLE_MAGIC 0x41445543454b4146ull /* "FAKECUDA" */

typedef struct fake_alloc {
    uintptr_t dev;     /* device address: inside the PROT_NONE reservation */
    size_t size;
    int fd;            /* the memfd (its number is in exported handles) */
    uint8_t *rw;       /* the driver's own read-write view */
    uint64_t id;
    int ipc;           /* opened from another process's handle */
    int host;          /* cuMemHostAlloc: a host allocation, rw == dev */
} fake_alloc;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *reserve_base;
static uintptr_t reserve_next;
static fake_alloc allocs[MAX_ALLOCS];
static int nallocs;
static uint64_t next_id = 1;
static int inited;
static int ctx_token = 1;
static _Thread_local void *current_ctx;

static CUresult init_locked(void)
{
    if (inited)
        return CUDA_SUCCESS;
    void *p = mmap(NULL, RESERVE_BYTES, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return CUDA_ERROR_OUT_OF_MEMORY;
    reserve_base = p;
    reserve_next = ((uintptr_t)p + ALIGN - 1) & ~(uintptr_t)(ALIGN - 1);
    inited = 1;
    return CUDA_SUCCESS;
}

CUresult cuInit(unsigned flags)
{
    (void)flags;
    pthread_mutex_lock(&lock);
    CUresult rc = init_locked();
    pthread_mutex_unlock(&lock);
    return rc;
}

CUresult cuDriverGetVersion(int *v) { *v = 13000; return CUDA_SUCCESS; }
CUresult cuDeviceGetCount(int *n) { *n = inited ? 1 : 0; return inited ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED; }
CUresult cuDeviceGet(int *dev, int ordinal)
{
    if (ordinal != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    *dev = 0;
    return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev)
{
    if (dev != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    *ctx = &ctx_token;
    return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRelease_v2(int dev) { return dev == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE; }
CUresult cuCtxGetCurrent(void **ctx) { *ctx = current_ctx; return CUDA_SUCCESS; }
CUresult cuCtxSetCurrent(void *ctx) { current_ctx = ctx; return CUDA_SUCCESS; }
CUresult cuCtxSynchronize(void) { return current_ctx ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT; }

CUresult cuGetErrorString(CUresult rc, const char **s)
{
    switch (rc) {
    case CUDA_SUCCESS: *s = "no error"; break;
    case CUDA_ERROR_INVALID_VALUE: *s = "invalid argument"; break;
    case CUDA_ERROR_OUT_OF_MEMORY: *s = "out of memory"; break;
    case CUDA_ERROR_INVALID_CONTEXT: *s = "invalid device context"; break;
    case CUDA_ERROR_MAP_FAILED: *s = "mapping of buffer object failed"; break;
    case CUDA_ERROR_INVALID_HANDLE: *s = "invalid resource handle"; break;
    default: *s = "unknown error (fake driver)"; break;
    }
    return CUDA_SUCCESS;
}

/* The allocation holding address a (locked), or NULL. */
static fake_alloc *find(uintptr_t a)
{
    for (int i = 0; i < nallocs; i++)
        if (a >= allocs[i].dev && a < allocs[i].dev + (allocs[i].size ? allocs[i].size : 1))
            return &allocs[i];
    return NULL;
}

static void forget(fake_alloc *x)
{
    *x = allocs[--nallocs];
}

/* Maps fd as a new allocation in the reservation (locked). */
static CUresult add_device(int fd, size_t size, uint64_t id, int ipc, CUdeviceptr *out)
{
    if (nallocs == MAX_ALLOCS)
        return CUDA_ERROR_OUT_OF_MEMORY;
    size_t span = (size + ALIGN - 1) & ~(size_t)(ALIGN - 1);
    if (span == 0)
        span = ALIGN;
    if (reserve_next + span + ALIGN > (uintptr_t)reserve_base + RESERVE_BYTES)
        return CUDA_ERROR_OUT_OF_MEMORY;
    uint8_t *rw = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (rw == MAP_FAILED)
        return CUDA_ERROR_MAP_FAILED;
    fake_alloc *x = &allocs[nallocs++];
    *x = (fake_alloc){reserve_next, size, fd, rw, id, ipc, 0};
    reserve_next += span + ALIGN; /* a gap: one allocation never runs into the next */
    *out = x->dev;
    return CUDA_SUCCESS;
}

CUresult cuMemAlloc_v2(CUdeviceptr *out, size_t size)
{
    if (!size)
        return CUDA_ERROR_INVALID_VALUE;
    int fd = memfd_create("fake-cuda-device", MFD_CLOEXEC);
    if (fd < 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (ftruncate(fd, (off_t)size) != 0) {
        close(fd);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    pthread_mutex_lock(&lock);
    CUresult rc = inited ? add_device(fd, size, next_id++, 0, out) : CUDA_ERROR_NOT_INITIALIZED;
    pthread_mutex_unlock(&lock);
    if (rc)
        close(fd);
    return rc;
}

static CUresult release(CUdeviceptr d, int ipc)
{
    pthread_mutex_lock(&lock);
    fake_alloc *x = find((uintptr_t)d);
    if (!x || x->dev != (uintptr_t)d || x->ipc != ipc || x->host) {
        pthread_mutex_unlock(&lock);
        return CUDA_ERROR_INVALID_VALUE;
    }
    munmap(x->rw, x->size);
    close(x->fd);
    forget(x);
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

CUresult cuMemFree_v2(CUdeviceptr d) { return release(d, 0); }

CUresult cuMemHostAlloc(void **p, size_t size, unsigned flags)
{
    (void)flags;
    void *m = mmap(NULL, size ? size : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&lock);
    if (nallocs == MAX_ALLOCS) {
        pthread_mutex_unlock(&lock);
        munmap(m, size ? size : 1);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    allocs[nallocs++] = (fake_alloc){(uintptr_t)m, size ? size : 1, -1, m, next_id++, 0, 1};
    pthread_mutex_unlock(&lock);
    *p = m;
    return CUDA_SUCCESS;
}

CUresult cuMemFreeHost(void *p)
{
    pthread_mutex_lock(&lock);
    fake_alloc *x = find((uintptr_t)p);
    if (!x || !x->host || x->dev != (uintptr_t)p) {
        pthread_mutex_unlock(&lock);
        return CUDA_ERROR_INVALID_VALUE;
    }
    munmap(x->rw, x->size);
    forget(x);
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

/* Registering host memory changes nothing for copies here. */
CUresult cuMemHostRegister_v2(void *p, size_t size, unsigned flags) { (void)p; (void)size; (void)flags; return CUDA_SUCCESS; }
CUresult cuMemHostUnregister(void *p) { (void)p; return CUDA_SUCCESS; }

/* Where the driver itself reads or writes the n bytes at address a (locked): the private view
 * of device memory, host memory as it is. NULL when the range leaves its allocation. */
static uint8_t *view(uintptr_t a, size_t n)
{
    fake_alloc *x = find(a);
    if (!x)
        return (uint8_t *)a;
    if (a + n > x->dev + x->size)
        return NULL;
    return x->rw + (a - x->dev);
}

/* FAKE_CUDA_COPY_US_PER_MIB: the copy engine's slowness, read once (0: as fast as memmove). */
static pthread_once_t delay_once = PTHREAD_ONCE_INIT;
static double delay_ns_per_byte;

static void read_delay(void)
{
    const char *v = getenv("FAKE_CUDA_COPY_US_PER_MIB");
    double us = v && *v ? strtod(v, NULL) : 0;
    delay_ns_per_byte = us > 0 ? us * 1000.0 / (1024.0 * 1024.0) : 0;
}

static void copy_delay(size_t n)
{
    pthread_once(&delay_once, read_delay);
    double ns = delay_ns_per_byte * (double)n;
    if (ns < 1)
        return;
    long long whole = (long long)ns;
    struct timespec ts = {(time_t)(whole / 1000000000), (long)(whole % 1000000000)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    if (!n)
        return CUDA_SUCCESS;
    pthread_mutex_lock(&lock);
    uint8_t *d = view((uintptr_t)dst, n), *s = view((uintptr_t)src, n);
    pthread_mutex_unlock(&lock);
    if (!d || !s)
        return CUDA_ERROR_INVALID_VALUE;
    copy_delay(n);
    memmove(d, s, n); /* the allocation cannot be freed during a copy the program is making */
    return CUDA_SUCCESS;
}

static CUresult copy_async(CUdeviceptr dst, CUdeviceptr src, size_t n, void *stream);
CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, void *stream) { return copy_async(dst, src, n, stream); }
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n) { return cuMemcpy(dst, (CUdeviceptr)(uintptr_t)src, n); }
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n) { return cuMemcpy((CUdeviceptr)(uintptr_t)dst, src, n); }
CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n) { return cuMemcpy(dst, src, n); }
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, void *st) { return copy_async(dst, (CUdeviceptr)(uintptr_t)src, n, st); }
CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, void *st) { return copy_async((CUdeviceptr)(uintptr_t)dst, src, n, st); }
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, void *st) { return copy_async(dst, src, n, st); }

CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char v, size_t n)
{
    pthread_mutex_lock(&lock);
    uint8_t *d = view((uintptr_t)dst, n);
    pthread_mutex_unlock(&lock);
    if (!d)
        return CUDA_ERROR_INVALID_VALUE;
    memset(d, v, n);
    return CUDA_SUCCESS;
}

CUresult cuPointerGetAttributes(unsigned n, int *attrs, void **data, CUdeviceptr ptr)
{
    pthread_mutex_lock(&lock);
    fake_alloc *x = find((uintptr_t)ptr);
    fake_alloc a = x ? *x : (fake_alloc){0};
    pthread_mutex_unlock(&lock);
    for (unsigned i = 0; i < n; i++) {
        switch (attrs[i]) {
        case ATTR_CONTEXT: *(void **)data[i] = x ? &ctx_token : NULL; break;
        case ATTR_MEMORY_TYPE: *(unsigned *)data[i] = !x ? 0 : a.host ? MEMTYPE_HOST : MEMTYPE_DEVICE; break;
        case ATTR_DEVICE_POINTER: *(CUdeviceptr *)data[i] = x ? (CUdeviceptr)ptr : 0; break;
        case ATTR_HOST_POINTER: *(void **)data[i] = x && a.host ? (void *)(uintptr_t)ptr : NULL; break;
        case ATTR_IS_MANAGED: *(unsigned *)data[i] = 0; break;
        case ATTR_BUFFER_ID: *(unsigned long long *)data[i] = x ? a.id : 0; break;
        case ATTR_DEVICE_ORDINAL: *(int *)data[i] = x ? 0 : -2; break;
        case ATTR_RANGE_START_ADDR: *(CUdeviceptr *)data[i] = x ? a.dev : 0; break;
        case ATTR_RANGE_SIZE: *(size_t *)data[i] = x ? a.size : 0; break;
        default: return CUDA_ERROR_INVALID_VALUE;
        }
    }
    return CUDA_SUCCESS;
}

CUresult cuPointerGetAttribute(void *data, int attr, CUdeviceptr ptr)
{
    pthread_mutex_lock(&lock);
    int known = find((uintptr_t)ptr) != NULL;
    pthread_mutex_unlock(&lock);
    if (!known) /* the real driver's answer for memory it does not know */
        return CUDA_ERROR_INVALID_VALUE;
    void *d[1] = {data};
    return cuPointerGetAttributes(1, &attr, d, ptr);
}

/* handle: le64 magic, le64 pid, le64 fd, le64 size, le64 id */
CUresult cuIpcGetMemHandle(CUipcMemHandle *h, CUdeviceptr d)
{
    pthread_mutex_lock(&lock);
    fake_alloc *x = find((uintptr_t)d);
    if (!x || x->host || x->ipc) {
        pthread_mutex_unlock(&lock);
        return CUDA_ERROR_INVALID_VALUE;
    }
    uint64_t w[5] = {HANDLE_MAGIC, (uint64_t)getpid(), (uint64_t)x->fd, x->size, x->id};
    pthread_mutex_unlock(&lock);
    memset(h, 0, sizeof *h);
    memcpy(h->reserved, w, sizeof w);
    return CUDA_SUCCESS;
}

CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *out, CUipcMemHandle h, unsigned flags)
{
    (void)flags;
    uint64_t w[5];
    memcpy(w, h.reserved, sizeof w);
    if (w[0] != HANDLE_MAGIC || w[1] == (uint64_t)getpid()) /* as the driver: not one's own */
        return CUDA_ERROR_INVALID_HANDLE;
    char path[64];
    snprintf(path, sizeof path, "/proc/%llu/fd/%llu", (unsigned long long)w[1], (unsigned long long)w[2]);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return CUDA_ERROR_INVALID_HANDLE;
    off_t end = lseek(fd, 0, SEEK_END);
    if (end < 0 || (uint64_t)end != w[3]) { /* that descriptor is no longer this allocation */
        close(fd);
        return CUDA_ERROR_INVALID_HANDLE;
    }
    pthread_mutex_lock(&lock);
    CUresult rc = inited ? add_device(fd, (size_t)w[3], w[4], 1, out) : CUDA_ERROR_NOT_INITIALIZED;
    pthread_mutex_unlock(&lock);
    if (rc)
        close(fd);
    return rc;
}

CUresult cuIpcCloseMemHandle(CUdeviceptr d) { return release(d, 1); }

/* ---- streams and events ----
 * A stream is a FIFO of copies and a worker thread that does them in order; `queued` and `done`
 * count them, and an event is the stream's `queued` when it was recorded. The legacy default
 * stream (NULL, or the CU_STREAM_LEGACY / PER_THREAD handles 1 and 2) has no worker: its copies
 * are done before the call returns, so it is always idle. */
typedef struct fake_job {
    struct fake_job *next;
    uint8_t *dst;
    const uint8_t *src;
    size_t n;
} fake_job;

typedef struct fake_stream {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    fake_job *head, *tail;
    uint64_t queued, done;
    int stop;
    pthread_t thread;
} fake_stream;

typedef struct fake_event {
    fake_stream *s; /* NULL: recorded on the legacy stream (complete) */
    uint64_t target;
} fake_event;

static int is_default_stream(void *s) { return s == NULL || s == (void *)1 || s == (void *)2; }

static void *stream_worker(void *arg)
{
    fake_stream *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (!s->head && !s->stop)
            pthread_cond_wait(&s->cv, &s->mu);
        if (!s->head)
            break;
        fake_job *j = s->head;
        pthread_mutex_unlock(&s->mu);
        copy_delay(j->n);
        memmove(j->dst, j->src, j->n);
        pthread_mutex_lock(&s->mu);
        s->head = j->next;
        if (!s->head)
            s->tail = NULL;
        s->done++;
        free(j);
        pthread_cond_broadcast(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

static CUresult copy_async(CUdeviceptr dst, CUdeviceptr src, size_t n, void *stream)
{
    if (is_default_stream(stream))
        return cuMemcpy(dst, src, n);
    if (!n)
        return CUDA_SUCCESS;
    pthread_mutex_lock(&lock);
    uint8_t *d = view((uintptr_t)dst, n), *sv = view((uintptr_t)src, n);
    pthread_mutex_unlock(&lock);
    if (!d || !sv)
        return CUDA_ERROR_INVALID_VALUE;
    fake_job *j = malloc(sizeof *j);
    if (!j)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *j = (fake_job){NULL, d, sv, n};
    fake_stream *s = stream;
    pthread_mutex_lock(&s->mu);
    if (s->tail)
        s->tail->next = j;
    else
        s->head = j;
    s->tail = j;
    s->queued++;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return CUDA_SUCCESS;
}

CUresult cuStreamCreate(void **out, unsigned flags)
{
    (void)flags;
    fake_stream *s = calloc(1, sizeof *s);
    if (!s)
        return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    if (pthread_create(&s->thread, NULL, stream_worker, s) != 0) {
        pthread_cond_destroy(&s->cv);
        pthread_mutex_destroy(&s->mu);
        free(s);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *out = s;
    return CUDA_SUCCESS;
}

static uint64_t stream_queued(fake_stream *s)
{
    pthread_mutex_lock(&s->mu);
    uint64_t q = s->queued;
    pthread_mutex_unlock(&s->mu);
    return q;
}

static int stream_reached(fake_stream *s, uint64_t target)
{
    pthread_mutex_lock(&s->mu);
    int r = s->done >= target;
    pthread_mutex_unlock(&s->mu);
    return r;
}

static void stream_wait(fake_stream *s, uint64_t target)
{
    pthread_mutex_lock(&s->mu);
    while (s->done < target)
        pthread_cond_wait(&s->cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
}

/* As the driver, a destroyed stream's queued work is finished before it is released. */
CUresult cuStreamDestroy_v2(void *p)
{
    if (is_default_stream(p))
        return CUDA_ERROR_INVALID_HANDLE;
    fake_stream *s = p;
    pthread_mutex_lock(&s->mu);
    s->stop = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    pthread_join(s->thread, NULL);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s);
    return CUDA_SUCCESS;
}

CUresult cuStreamQuery(void *p)
{
    if (is_default_stream(p))
        return CUDA_SUCCESS;
    return stream_reached(p, stream_queued(p)) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult cuStreamSynchronize(void *p)
{
    if (!is_default_stream(p))
        stream_wait(p, stream_queued(p));
    return CUDA_SUCCESS;
}

CUresult cuEventCreate(void **e, unsigned flags)
{
    (void)flags;
    *e = calloc(1, sizeof(fake_event));
    return *e ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult cuEventDestroy_v2(void *e) { free(e); return CUDA_SUCCESS; }

CUresult cuEventRecord(void *e, void *s)
{
    fake_event *ev = e;
    ev->s = is_default_stream(s) ? NULL : s;
    ev->target = ev->s ? stream_queued(ev->s) : 0;
    return CUDA_SUCCESS;
}

CUresult cuEventQuery(void *e)
{
    fake_event *ev = e;
    return !ev->s || stream_reached(ev->s, ev->target) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult cuEventSynchronize(void *e)
{
    fake_event *ev = e;
    if (ev->s)
        stream_wait(ev->s, ev->target);
    return CUDA_SUCCESS;
}
