/*
 * cuda.c — device memory through the CUDA driver API loaded at run time (gpu.h). The driver is
 * dlopen'ed once (libcuda.so.1, or WAITIO_CUDA_LIBRARY: the test suite points it at a test
 * double, tests/gpu/fake_cuda.c), so the library needs no CUDA headers or libraries to build and
 * runs without them: then every pointer is host memory, at the cost of one branch per check.
 * The few types and constants of the driver API used here are declared below with the values of
 * the driver API's documentation (cuda.h), which a build without CUDA cannot include.
 *
 * Pointer kinds are cached per allocation range (the driver's RANGE_START_ADDR / RANGE_SIZE) in
 * a small table under a mutex, so a buffer used again costs no driver call; host answers are
 * cached too (by the pages they cover), since a message buffer is usually reused. CUDA IPC
 * mappings opened from a peer are cached per (peer, handle) and closed when the peer is lost
 * or at finalize.
 */
#define WIO_LOG_SUBSYS WIO_SUB_GPU
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "core/common.h"
#include "core/settings.h"
#include "gpu/gpu.h"

/* ---- the driver API's types and constants (cuda.h) ---- */
typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef void *CUstream;
typedef unsigned long long CUdeviceptr;
typedef struct { unsigned char reserved[WIO_GPU_IPC_HANDLE_LEN]; } CUipcMemHandle;

enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_INVALID_VALUE = 1,
    CUDA_ERROR_NOT_READY = 600,
};
enum { /* CUpointer_attribute */
    CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
    CU_POINTER_ATTRIBUTE_BUFFER_ID = 7,
    CU_POINTER_ATTRIBUTE_IS_MANAGED = 8,
    CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9,
    CU_POINTER_ATTRIBUTE_RANGE_START_ADDR = 11,
    CU_POINTER_ATTRIBUTE_RANGE_SIZE = 12,
};
enum { CU_MEMORYTYPE_DEVICE = 2 };            /* CUmemorytype (0: not a CUDA pointer) */
enum { CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS = 1 };
enum { CU_STREAM_DEFAULT = 0, CU_STREAM_NON_BLOCKING = 1 };
enum { CU_MEMHOSTALLOC_PORTABLE = 1 };

/* The entry points, by their versioned names where the API has them. */
static struct cu_api {
    CUresult (*Init)(unsigned);
    CUresult (*DeviceGetCount)(int *);
    CUresult (*DeviceGet)(CUdevice *, int);
    CUresult (*CtxGetCurrent)(CUcontext *);
    CUresult (*CtxSetCurrent)(CUcontext);
    CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
    CUresult (*PointerGetAttributes)(unsigned, int *, void **, CUdeviceptr);
    CUresult (*MemAlloc)(CUdeviceptr *, size_t);
    CUresult (*MemFree)(CUdeviceptr);
    CUresult (*MemHostAlloc)(void **, size_t, unsigned);
    CUresult (*MemFreeHost)(void *);
    CUresult (*MemcpyAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
    CUresult (*StreamCreate)(CUstream *, unsigned);
    CUresult (*StreamDestroy)(CUstream);
    CUresult (*StreamQuery)(CUstream);
    CUresult (*StreamSynchronize)(CUstream);
    CUresult (*IpcGetMemHandle)(CUipcMemHandle *, CUdeviceptr);
    CUresult (*IpcOpenMemHandle)(CUdeviceptr *, CUipcMemHandle, unsigned);
    CUresult (*IpcCloseMemHandle)(CUdeviceptr);
    CUresult (*GetErrorString)(CUresult, const char **);
} cu;

static const struct { const char *name; size_t off; } cu_syms[] = {
#define SYM(field, name) {name, offsetof(struct cu_api, field)}
    SYM(Init, "cuInit"), SYM(DeviceGetCount, "cuDeviceGetCount"), SYM(DeviceGet, "cuDeviceGet"),
    SYM(CtxGetCurrent, "cuCtxGetCurrent"), SYM(CtxSetCurrent, "cuCtxSetCurrent"),
    SYM(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
    SYM(PointerGetAttributes, "cuPointerGetAttributes"), SYM(MemAlloc, "cuMemAlloc_v2"),
    SYM(MemFree, "cuMemFree_v2"), SYM(MemHostAlloc, "cuMemHostAlloc"), SYM(MemFreeHost, "cuMemFreeHost"),
    SYM(MemcpyAsync, "cuMemcpyAsync"), SYM(StreamCreate, "cuStreamCreate"),
    SYM(StreamDestroy, "cuStreamDestroy_v2"), SYM(StreamQuery, "cuStreamQuery"),
    SYM(StreamSynchronize, "cuStreamSynchronize"), SYM(IpcGetMemHandle, "cuIpcGetMemHandle"),
    SYM(IpcOpenMemHandle, "cuIpcOpenMemHandle_v2"), SYM(IpcCloseMemHandle, "cuIpcCloseMemHandle"),
    SYM(GetErrorString, "cuGetErrorString"),
#undef SYM
};

/* ---- loading ---- */
enum { DRV_UNKNOWN = 0, DRV_ABSENT, DRV_PRESENT };
static atomic_int drv_state;           /* DRV_*: read on every check, set once */
static int force_device;               /* WAITIO_TEST_GPU_FORCE_DEVICE */
static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static void *drv_handle;
static char drv_why[256] = "not loaded yet";
static int ndevices;

static int resolve_symbols(void *h)
{
    for (size_t i = 0; i < sizeof cu_syms / sizeof cu_syms[0]; i++) {
        void *f = dlsym(h, cu_syms[i].name);
        if (!f) {
            snprintf(drv_why, sizeof drv_why, "the driver has no %s", cu_syms[i].name);
            return -1;
        }
        memcpy((char *)&cu + cu_syms[i].off, &f, sizeof f);
    }
    return 0;
}

static void load_driver(void)
{
    force_device = wio_setting_num("WAITIO_TEST_GPU_FORCE_DEVICE", 0) != 0;
    const char *path = wio_setting_str("WAITIO_CUDA_LIBRARY", NULL);
    if (!path || !*path)
        path = "libcuda.so.1";
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(drv_why, sizeof drv_why, "cannot load %s: %s", path, dlerror());
        wio_debug("no CUDA driver: %s", drv_why);
        atomic_store(&drv_state, DRV_ABSENT);
        return;
    }
    int n = 0;
    if (resolve_symbols(h) != 0 || cu.Init(0) != CUDA_SUCCESS || cu.DeviceGetCount(&n) != CUDA_SUCCESS || n <= 0) {
        if (n <= 0 && !strcmp(drv_why, "not loaded yet"))
            snprintf(drv_why, sizeof drv_why, "%s: cuInit failed or no device", path);
        wio_debug("CUDA driver unusable: %s", drv_why);
        dlclose(h);
        memset(&cu, 0, sizeof cu);
        atomic_store(&drv_state, DRV_ABSENT);
        return;
    }
    drv_handle = h;
    ndevices = n;
    snprintf(drv_why, sizeof drv_why, "%s: %d device(s)", path, n);
    wio_debug("CUDA driver loaded: %s", drv_why);
    atomic_store(&drv_state, DRV_PRESENT);
}

static inline int driver_state(void)
{
    int s = atomic_load_explicit(&drv_state, memory_order_acquire);
    if (__builtin_expect(s != DRV_UNKNOWN, 1))
        return s;
    pthread_once(&load_once, load_driver);
    return atomic_load(&drv_state);
}

int wio_gpu_available(void) { return driver_state() == DRV_PRESENT; }

/* The driver state for a buffer check. Device memory can exist in this process only once the
 * program has loaded libcuda itself (its CUDA runtime, PyTorch, CuPy...), so until then a check
 * answers "host" without loading the driver: a process that never uses CUDA (an MPI rank or a
 * plain worker on a GPU node) must not pay cuInit (a tenth of a second or more, and a context's
 * memory on the GPU) nor a driver call per message. Whether libcuda was loaded is asked again
 * at most once per tick of the coarse clock (1-4 ms, a vDSO read of a few ns), and then only
 * when the count of objects the dynamic loader has loaded changed (one call of dl_iterate_phdr
 * stopped at its first object, which takes the loader's lock): a device pointer exists only
 * after cuInit, which takes far longer than a tick after libcuda is loaded. WAITIO_CUDA_LIBRARY
 * or the test hook WAITIO_TEST_GPU_FORCE_DEVICE load the driver at the first check. */
static int loads_seen_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    *(unsigned long long *)arg = info->dlpi_adds;
    return 1;
}

static pthread_once_t eager_once = PTHREAD_ONCE_INIT;
static int load_eagerly; /* WAITIO_CUDA_LIBRARY set, or the force hook */
enum { EAGER_UNKNOWN = 0, EAGER_NO, EAGER_YES };
static atomic_int eagerness; /* load_eagerly, readable without pthread_once's call */

static void read_eagerness(void)
{
    const char *path = wio_env("WAITIO_CUDA_LIBRARY");
    load_eagerly = (path && *path) || wio_setting_num("WAITIO_TEST_GPU_FORCE_DEVICE", 0) != 0;
    atomic_store(&eagerness, load_eagerly ? EAGER_YES : EAGER_NO);
}

/* The per-message part in a process without CUDA is the coarse clock's read and one compare,
 * no call of pthread_once and no locked exchange: measured on the 2-core test VM, a check costs
 * 16 ns over the call where the first version cost 22 (13 of them the clock's vDSO read there;
 * a few ns on bare metal). Two threads that both see a new tick both look at the loader, which
 * is harmless, so the tick is a plain relaxed store. */
static int driver_state_for_check(void)
{
    static _Atomic unsigned long long loads_checked;
    static _Atomic long tick_checked = -1;
    int s = atomic_load_explicit(&drv_state, memory_order_acquire);
    if (__builtin_expect(s != DRV_UNKNOWN, 1))
        return s;
    int eager = atomic_load_explicit(&eagerness, memory_order_acquire);
    if (__builtin_expect(eager == EAGER_UNKNOWN, 0)) {
        pthread_once(&eager_once, read_eagerness);
        eager = load_eagerly ? EAGER_YES : EAGER_NO;
    }
    if (eager == EAGER_NO) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
        long tick = (long)ts.tv_sec * 1000000000L + ts.tv_nsec; /* changes once per tick */
        if (atomic_load_explicit(&tick_checked, memory_order_relaxed) == tick)
            return DRV_UNKNOWN;
        atomic_store_explicit(&tick_checked, tick, memory_order_relaxed);
        unsigned long long adds = 0;
        dl_iterate_phdr(loads_seen_cb, &adds);
        if (adds == atomic_load_explicit(&loads_checked, memory_order_relaxed))
            return DRV_UNKNOWN;
        atomic_store_explicit(&loads_checked, adds, memory_order_relaxed);
        void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
        if (!h)
            return DRV_UNKNOWN;
        dlclose(h);
    }
    pthread_once(&load_once, load_driver);
    return atomic_load(&drv_state);
}

static int no_driver(const char *what)
{
    return wio_fail(WAITIO_ERR_DEVICE, "%s needs the CUDA driver, which is not usable (%s)", what, drv_why);
}

static int cu_fail(CUresult rc, const char *what)
{
    const char *s = NULL;
    if (!cu.GetErrorString || cu.GetErrorString(rc, &s) != CUDA_SUCCESS || !s)
        s = "unknown CUDA error";
    return wio_fail(WAITIO_ERR_DEVICE, "%s failed: CUDA error %d (%s)", what, rc, s);
}

/* ---- contexts: a thread with no current context gets the device's primary one ---- */
#define MAX_DEVICES 64
static CUcontext primary[MAX_DEVICES];
static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local int ctx_ready;

static int ensure_context(int device)
{
    if (ctx_ready)
        return 0;
    CUcontext cur = NULL;
    CUresult rc = cu.CtxGetCurrent(&cur);
    if (rc != CUDA_SUCCESS)
        return cu_fail(rc, "cuCtxGetCurrent");
    if (!cur) {
        if (device < 0 || device >= ndevices || device >= MAX_DEVICES)
            device = 0;
        pthread_mutex_lock(&ctx_lock);
        if (!primary[device]) {
            CUdevice dev;
            rc = cu.DeviceGet(&dev, device);
            if (rc == CUDA_SUCCESS)
                rc = cu.DevicePrimaryCtxRetain(&primary[device], dev);
        }
        cur = primary[device];
        pthread_mutex_unlock(&ctx_lock);
        if (rc != CUDA_SUCCESS)
            return cu_fail(rc, "cuDevicePrimaryCtxRetain");
        if ((rc = cu.CtxSetCurrent(cur)) != CUDA_SUCCESS)
            return cu_fail(rc, "cuCtxSetCurrent");
    }
    ctx_ready = 1;
    return 0;
}

/* 0 with the driver loaded and a context current on this thread; else why not. */
static int driver_in_context(const char *what)
{
    if (driver_state() != DRV_PRESENT)
        return no_driver(what);
    return ensure_context(-1);
}

/* ---- the attribute cache ---- */
#define CACHE_SLOTS 64
#define PAGE 4096u
typedef struct range_entry {
    uintptr_t start, end;   /* [start, end); end == 0: empty slot */
    uint64_t used;          /* last use, for replacement */
    int8_t kind, device;
} range_entry;
static range_entry cache[CACHE_SLOTS];
static uint64_t cache_clock;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_uint_fast64_t n_attr_queries, n_ipc_opens, n_ipc_open_now;

/* 1 and the entry's kind when [a, b) lies in a cached range. */
static int cache_find(uintptr_t a, uintptr_t b, wio_mem_kind *kind, int *device)
{
    int hit = 0;
    pthread_mutex_lock(&cache_lock);
    for (int i = 0; i < CACHE_SLOTS; i++) {
        range_entry *c = &cache[i];
        if (c->end && c->start <= a && b <= c->end) {
            c->used = ++cache_clock;
            *kind = (wio_mem_kind)c->kind;
            *device = c->device;
            hit = 1;
            break;
        }
    }
    pthread_mutex_unlock(&cache_lock);
    return hit;
}

static void cache_insert(uintptr_t start, uintptr_t end, wio_mem_kind kind, int device)
{
    pthread_mutex_lock(&cache_lock);
    /* what overlaps the new range is stale (memory freed and allocated again as another range) */
    for (int i = 0; i < CACHE_SLOTS; i++)
        if (cache[i].end && cache[i].start < end && start < cache[i].end)
            cache[i] = (range_entry){0};
    range_entry *victim = &cache[0];
    for (int i = 0; i < CACHE_SLOTS; i++) {
        if (!cache[i].end) {
            victim = &cache[i];
            break;
        }
        if (cache[i].used < victim->used)
            victim = &cache[i];
    }
    *victim = (range_entry){start, end, ++cache_clock, (int8_t)kind, (int8_t)device};
    pthread_mutex_unlock(&cache_lock);
}

void wio_gpu_forget(const void *p, size_t len)
{
    uintptr_t a = (uintptr_t)p, b = a + (len ? len : 1);
    pthread_mutex_lock(&cache_lock);
    for (int i = 0; i < CACHE_SLOTS; i++)
        if (cache[i].end && cache[i].start < b && a < cache[i].end)
            cache[i] = (range_entry){0};
    pthread_mutex_unlock(&cache_lock);
}

/* Asks the driver about p: its kind and, for device memory, its allocation range. */
static int query_pointer(const void *p, wio_mem_kind *kind, int *device, uintptr_t *start, uintptr_t *end)
{
    unsigned memtype = 0, managed = 0;
    int ordinal = -1;
    CUdeviceptr base = 0;
    size_t size = 0;
    int attrs[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                   CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                   CU_POINTER_ATTRIBUTE_RANGE_SIZE};
    void *data[] = {&memtype, &managed, &ordinal, &base, &size};
    atomic_fetch_add(&n_attr_queries, 1);
    CUresult rc = cu.PointerGetAttributes(5, attrs, data, (CUdeviceptr)(uintptr_t)p);
    if (rc == CUDA_ERROR_INVALID_VALUE) /* some drivers' answer for memory they do not know */
        memtype = 0;
    else if (rc != CUDA_SUCCESS)
        return cu_fail(rc, "cuPointerGetAttributes");
    /* managed memory is reachable from the CPU: it is host memory for our copies */
    if (memtype == CU_MEMORYTYPE_DEVICE && !managed && size > 0) {
        *kind = WIO_MEM_CUDA;
        *device = ordinal;
        *start = (uintptr_t)base;
        *end = (uintptr_t)base + size;
    } else {
        *kind = WIO_MEM_HOST;
        *device = -1;
        *start = (uintptr_t)p & ~(uintptr_t)(PAGE - 1);
        *end = *start + PAGE;
    }
    return 0;
}

int wio_gpu_mem_kind(const void *p, size_t len, wio_mem_kind *kind, int *device)
{
    int dev = -1;
    *kind = WIO_MEM_HOST;
    if (device)
        *device = -1;
    int st = driver_state_for_check();
    if (__builtin_expect(st != DRV_PRESENT, 1)) {
        if (force_device)
            return wio_fail(WAITIO_ERR_DEVICE, "buffer %p is device memory (WAITIO_TEST_GPU_FORCE_DEVICE) "
                            "but there is no CUDA driver: %s", p, drv_why);
        return 0;
    }
    if (!p)
        return 0;
    uintptr_t a = (uintptr_t)p, b = a + (len ? len : 1);
    if (b < a)
        return wio_fail(WAITIO_ERR_ARG, "buffer %p + %zu wraps around", p, len);
    if (cache_find(a, b, kind, &dev)) {
        if (device)
            *device = dev;
        return 0;
    }
    uintptr_t start, end;
    int rc = query_pointer(p, kind, &dev, &start, &end);
    if (rc)
        return rc;
    if (*kind == WIO_MEM_CUDA) {
        if (b > end)
            return wio_fail(WAITIO_ERR_ARG, "buffer %p + %zu runs past its device allocation "
                            "[%#lx, %#lx)", p, len, (unsigned long)start, (unsigned long)end);
        cache_insert(start, end, WIO_MEM_CUDA, dev);
    } else {
        /* a host buffer: no driver range; the pages it covers are host memory when its last
         * byte is too (a device allocation is never part of a host buffer) */
        wio_mem_kind k2 = WIO_MEM_HOST;
        int d2;
        uintptr_t s2, e2;
        if (b - 1 >= end && (rc = query_pointer((const void *)(b - 1), &k2, &d2, &s2, &e2)) != 0)
            return rc;
        if (k2 != WIO_MEM_HOST)
            return wio_fail(WAITIO_ERR_ARG, "buffer %p + %zu is part host, part device memory", p, len);
        cache_insert(start, (b + PAGE - 1) & ~(uintptr_t)(PAGE - 1), WIO_MEM_HOST, -1);
    }
    if (device)
        *device = dev;
    return 0;
}

/* ---- copies and allocations ---- */

int wio_gpu_copy(void *dst, const void *src, size_t len)
{
    if (!len)
        return 0;
    if (driver_state() != DRV_PRESENT) {
        memcpy(dst, src, len);
        return 0;
    }
    int rc = ensure_context(-1);
    if (rc)
        return rc;
    /* on the legacy default stream: ordered after the program's work there, and waited for
     * (a device-to-device cuMemcpy alone would return before the copy is done) */
    CUresult c = cu.MemcpyAsync((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src, len, NULL);
    if (c == CUDA_SUCCESS)
        c = cu.StreamSynchronize(NULL);
    return c == CUDA_SUCCESS ? 0 : cu_fail(c, "cuMemcpyAsync");
}

int wio_gpu_alloc(size_t len, void **p)
{
    *p = NULL;
    int rc = driver_in_context("allocating device memory");
    if (rc)
        return rc;
    CUdeviceptr d = 0;
    CUresult c = cu.MemAlloc(&d, len ? len : 1);
    if (c != CUDA_SUCCESS)
        return cu_fail(c, "cuMemAlloc");
    *p = (void *)(uintptr_t)d;
    return 0;
}

int wio_gpu_free(void *p)
{
    if (!p)
        return 0;
    if (driver_state() != DRV_PRESENT)
        return no_driver("freeing device memory");
    wio_gpu_forget(p, 1);
    int rc = ensure_context(-1);
    if (rc)
        return rc;
    CUresult c = cu.MemFree((CUdeviceptr)(uintptr_t)p);
    return c == CUDA_SUCCESS ? 0 : cu_fail(c, "cuMemFree");
}

int wio_gpu_host_alloc(size_t len, void **p)
{
    *p = NULL;
    int rc = driver_in_context("allocating pinned memory");
    if (rc)
        return rc;
    CUresult c = cu.MemHostAlloc(p, len ? len : 1, CU_MEMHOSTALLOC_PORTABLE);
    return c == CUDA_SUCCESS ? 0 : cu_fail(c, "cuMemHostAlloc");
}

void wio_gpu_host_free(void *p)
{
    if (p && driver_state() == DRV_PRESENT && cu.MemFreeHost(p) != CUDA_SUCCESS)
        wio_warn("cuMemFreeHost(%p) failed", p);
}

/* ---- streams ---- */
struct wio_gpu_stream { CUstream s; };

static int stream_create_flags(wio_gpu_stream **out, unsigned flags);

int wio_gpu_stream_create(wio_gpu_stream **out) { return stream_create_flags(out, CU_STREAM_NON_BLOCKING); }

static int stream_create_flags(wio_gpu_stream **out, unsigned flags)
{
    *out = NULL;
    int rc = driver_in_context("a copy stream");
    if (rc)
        return rc;
    wio_gpu_stream *s = calloc(1, sizeof *s);
    if (!s)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory for a copy stream");
    CUresult c = cu.StreamCreate(&s->s, flags);
    if (c != CUDA_SUCCESS) {
        free(s);
        return cu_fail(c, "cuStreamCreate");
    }
    *out = s;
    return 0;
}

void wio_gpu_stream_destroy(wio_gpu_stream *s)
{
    if (!s)
        return;
    if (cu.StreamDestroy && cu.StreamDestroy(s->s) != CUDA_SUCCESS)
        wio_warn("cuStreamDestroy failed");
    free(s);
}

int wio_gpu_copy_async(void *dst, const void *src, size_t len, wio_gpu_stream *s)
{
    if (!len)
        return 0;
    int rc = ensure_context(-1);
    if (rc)
        return rc;
    CUresult c = cu.MemcpyAsync((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src, len, s->s);
    return c == CUDA_SUCCESS ? 0 : cu_fail(c, "cuMemcpyAsync");
}

int wio_gpu_stream_done(wio_gpu_stream *s, int *done)
{
    CUresult c = cu.StreamQuery(s->s);
    *done = c == CUDA_SUCCESS;
    return c == CUDA_SUCCESS || c == CUDA_ERROR_NOT_READY ? 0 : cu_fail(c, "cuStreamQuery");
}

int wio_gpu_stream_sync(wio_gpu_stream *s)
{
    CUresult c = cu.StreamSynchronize(s->s);
    return c == CUDA_SUCCESS ? 0 : cu_fail(c, "cuStreamSynchronize");
}

/* Streams kept for the next pipelined message (pipeline.c): creating one per message would
 * cost a driver call each. At most STREAM_CACHE_MAX are kept; all are destroyed at finalize. */
#define STREAM_CACHE_MAX 64
static struct {
    pthread_mutex_t lock;
    int n;
    wio_gpu_stream *s[STREAM_CACHE_MAX];
} stream_cache = {.lock = PTHREAD_MUTEX_INITIALIZER};

int wio_gpu_stream_get(wio_gpu_stream **s)
{
    *s = NULL;
    pthread_mutex_lock(&stream_cache.lock);
    if (stream_cache.n > 0)
        *s = stream_cache.s[--stream_cache.n];
    pthread_mutex_unlock(&stream_cache.lock);
    /* a blocking stream (CU_STREAM_DEFAULT): its copies are ordered after the program's work on
     * the legacy default stream, as the whole-message copies there were */
    return *s ? 0 : stream_create_flags(s, CU_STREAM_DEFAULT);
}

void wio_gpu_stream_put(wio_gpu_stream *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&stream_cache.lock);
    if (stream_cache.n < STREAM_CACHE_MAX) {
        stream_cache.s[stream_cache.n++] = s;
        s = NULL;
    }
    pthread_mutex_unlock(&stream_cache.lock);
    wio_gpu_stream_destroy(s);
}

static void stream_cache_release(void)
{
    pthread_mutex_lock(&stream_cache.lock);
    while (stream_cache.n > 0)
        wio_gpu_stream_destroy(stream_cache.s[--stream_cache.n]);
    pthread_mutex_unlock(&stream_cache.lock);
}

/* ---- the pinned staging pool ---- */
#define POOL_MAX 64
static struct {
    pthread_mutex_t lock;
    int ready, count;
    size_t size;
    void *buf[POOL_MAX];
    unsigned char busy[POOL_MAX];
    /* one pinned buffer for messages larger than a slot, kept and grown to the largest seen
     * (up to LARGE_MAX): a fresh pageable buffer per message cost its page faults and the
     * driver's slower copies from pageable memory (8 MiB over tcp: 2.2 GB/s staged against
     * 4.7 GB/s from host memory, measured on an H200 node) */
    void *large;
    size_t large_size;
    int large_busy;
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER};
#define LARGE_MAX (256u << 20)

/* The large pinned buffer for len bytes (pool.lock held), or NULL. */
static void *pool_large_get(size_t len)
{
    if (pool.large_busy || len > LARGE_MAX)
        return NULL;
    if (pool.large_size < len) {
        wio_gpu_host_free(pool.large);
        pool.large = NULL;
        pool.large_size = 0;
        size_t size = (len + (1u << 20) - 1) & ~(size_t)((1u << 20) - 1);
        if (wio_gpu_host_alloc(size, &pool.large) != 0)
            return NULL; /* pinned memory refused: ordinary memory still works */
        pool.large_size = size;
    }
    pool.large_busy = 1;
    return pool.large;
}

static void pool_setup(void)
{
    pool.ready = 1;
    size_t size = 2u << 20;
    const char *v = wio_setting_str("WAITIO_GPU_STAGING_SIZE", NULL);
    if (v && wio_parse_size(v, &size) != 0)
        size = 2u << 20;
    int count = (int)wio_setting_num("WAITIO_GPU_STAGING_COUNT", 4);
    pool.size = size;
    pool.count = count < 1 ? 1 : count > POOL_MAX ? POOL_MAX : count;
}

int wio_gpu_bounce_get(size_t len, void **p)
{
    *p = NULL;
    if (driver_state() == DRV_PRESENT) {
        pthread_mutex_lock(&pool.lock);
        if (!pool.ready)
            pool_setup();
        int slot = -1;
        if (len <= pool.size)
            for (int i = 0; i < pool.count && slot < 0; i++)
                if (!pool.busy[i])
                    slot = i;
        if (slot >= 0 && !pool.buf[slot] && wio_gpu_host_alloc(pool.size, &pool.buf[slot]) != 0)
            slot = -1; /* pinned memory refused: ordinary memory still works */
        if (slot >= 0) {
            pool.busy[slot] = 1;
            *p = pool.buf[slot];
        } else if (len > pool.size) {
            *p = pool_large_get(len);
        }
        pthread_mutex_unlock(&pool.lock);
        if (*p)
            return 0;
    }
    *p = malloc(len ? len : 1);
    return *p ? 0 : wio_fail(WAITIO_ERR_NOMEM, "out of memory for a %zu-byte staging buffer", len);
}

void wio_gpu_bounce_put(void *p, size_t len)
{
    (void)len;
    if (!p)
        return;
    pthread_mutex_lock(&pool.lock);
    if (p == pool.large) {
        pool.large_busy = 0;
        pthread_mutex_unlock(&pool.lock);
        return;
    }
    for (int i = 0; i < pool.count; i++) {
        if (pool.buf[i] == p) {
            pool.busy[i] = 0;
            pthread_mutex_unlock(&pool.lock);
            return;
        }
    }
    pthread_mutex_unlock(&pool.lock);
    free(p);
}

/* ---- CUDA IPC ---- */

int wio_gpu_stream_wait(uintptr_t stream)
{
    if (driver_state() != DRV_PRESENT)
        return no_driver("waiting for a CUDA stream");
    /* a thread of the program may hold no current context (CuPy and PyTorch make theirs current
     * on the threads they use): without one the driver answers CUDA_ERROR_INVALID_CONTEXT */
    int rc = ensure_context(-1);
    if (rc)
        return rc;
    CUresult c = cu.StreamSynchronize((CUstream)stream);
    return c == CUDA_SUCCESS ? 0 : cu_fail(c, "cuStreamSynchronize");
}

int wio_gpu_ipc_export(const void *p, wio_gpu_ipc_handle *h, size_t *offset)
{
    int rc = driver_in_context("exporting device memory");
    if (rc)
        return rc;
    wio_mem_kind kind;
    int dev;
    uintptr_t start, end;
    if ((rc = query_pointer(p, &kind, &dev, &start, &end)) != 0)
        return rc;
    if (kind != WIO_MEM_CUDA)
        return wio_fail(WAITIO_ERR_ARG, "%p is not device memory: no IPC handle", p);
    CUipcMemHandle ch;
    CUresult c = cu.IpcGetMemHandle(&ch, (CUdeviceptr)start);
    if (c != CUDA_SUCCESS)
        return cu_fail(c, "cuIpcGetMemHandle");
    memcpy(h->bytes, ch.reserved, sizeof h->bytes);
    unsigned long long id = 0;
    int attr = CU_POINTER_ATTRIBUTE_BUFFER_ID;
    void *data = &id;
    if (cu.PointerGetAttributes(1, &attr, &data, (CUdeviceptr)start) != CUDA_SUCCESS)
        id = 0; /* an older driver: the handle bytes alone identify the allocation */
    h->id = id;
    *offset = (size_t)((uintptr_t)p - start);
    /* Another process is about to read the allocation, unordered with this process's streams:
     * what the program queued on the legacy default stream must be done first. A "blocking"
     * cuMemcpy from pageable memory returns before its DMA has landed (the driver's documented
     * behaviour): a 1 MiB + 3 B device-to-host message read through IPC lacked its last 3 bytes
     * on the H200 node. Work on the program's own streams is its to finish, as with any
     * CUDA-aware MPI. */
    if ((c = cu.StreamSynchronize(NULL)) != CUDA_SUCCESS)
        return cu_fail(c, "cuStreamSynchronize");
    return 0;
}

#define IPC_SLOTS 128
typedef struct ipc_entry {
    int used;
    uint32_t peer;
    uint64_t stamp;
    wio_gpu_ipc_handle h;
    CUdeviceptr base;
} ipc_entry;
static ipc_entry ipc_cache[IPC_SLOTS];
static uint64_t ipc_clock;
static pthread_mutex_t ipc_lock = PTHREAD_MUTEX_INITIALIZER;

static void ipc_close_entry(ipc_entry *x)
{
    wio_gpu_forget((const void *)(uintptr_t)x->base, 1); /* its cached range goes with it */
    CUresult c = cu.IpcCloseMemHandle(x->base);
    if (c != CUDA_SUCCESS)
        wio_warn("cuIpcCloseMemHandle of process %u's memory failed (CUDA error %d)", (unsigned)x->peer, c);
    atomic_fetch_sub(&n_ipc_open_now, 1);
    x->used = 0;
}

int wio_gpu_ipc_open(uint32_t peer, const wio_gpu_ipc_handle *h, void **base)
{
    *base = NULL;
    int rc = driver_in_context("opening a peer's device memory");
    if (rc)
        return rc;
    pthread_mutex_lock(&ipc_lock);
    ipc_entry *victim = &ipc_cache[0];
    for (int i = 0; i < IPC_SLOTS; i++) {
        ipc_entry *x = &ipc_cache[i];
        if (x->used && x->peer == peer && !memcmp(x->h.bytes, h->bytes, sizeof h->bytes) &&
            x->h.id && h->id && x->h.id != h->id) {
            ipc_close_entry(x); /* the same bytes for a new allocation at a freed one's address */
            victim = x;
            break;
        }
        if (x->used && x->peer == peer && !memcmp(x->h.bytes, h->bytes, sizeof h->bytes)) {
            x->stamp = ++ipc_clock;
            *base = (void *)(uintptr_t)x->base;
            pthread_mutex_unlock(&ipc_lock);
            return 0;
        }
        if (victim->used && (!x->used || x->stamp < victim->stamp))
            victim = x;
    }
    /* the least recently used mapping makes room: every copy through it has finished (our
     * copies are synchronous), and the peer's allocation stays valid on its side */
    if (victim->used)
        ipc_close_entry(victim);
    CUipcMemHandle ch;
    memcpy(ch.reserved, h->bytes, sizeof ch.reserved);
    CUdeviceptr d = 0;
    CUresult c = cu.IpcOpenMemHandle(&d, ch, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
    if (c == CUDA_SUCCESS) {
        *victim = (ipc_entry){1, peer, ++ipc_clock, *h, d};
        atomic_fetch_add(&n_ipc_opens, 1);
        atomic_fetch_add(&n_ipc_open_now, 1);
        *base = (void *)(uintptr_t)d;
    }
    pthread_mutex_unlock(&ipc_lock);
    return c == CUDA_SUCCESS ? 0 : cu_fail(c, "cuIpcOpenMemHandle");
}

void wio_gpu_ipc_close_peer(uint32_t peer)
{
    if (atomic_load(&drv_state) != DRV_PRESENT)
        return;
    int n = 0;
    pthread_mutex_lock(&ipc_lock);
    for (int i = 0; i < IPC_SLOTS; i++)
        if (ipc_cache[i].used && ipc_cache[i].peer == peer) {
            ipc_close_entry(&ipc_cache[i]);
            n++;
        }
    pthread_mutex_unlock(&ipc_lock);
    if (n)
        wio_info("closed %d CUDA IPC mapping(s) of process %u's device memory", n, (unsigned)peer);
}

void wio_gpu_release_all(void)
{
    if (atomic_load(&drv_state) != DRV_PRESENT)
        return;
    pthread_mutex_lock(&ipc_lock);
    for (int i = 0; i < IPC_SLOTS; i++)
        if (ipc_cache[i].used)
            ipc_close_entry(&ipc_cache[i]);
    pthread_mutex_unlock(&ipc_lock);
    pthread_mutex_lock(&pool.lock);
    int busy = pool.large_busy; /* a request that was never released holds it: said, since a
                                   failed transfer must give its staging back (ci_pipe.sh) */
    for (int i = 0; i < pool.count; i++)
        busy += pool.busy[i];
    if (busy)
        wio_warn("finalize: %d pinned staging buffer(s) still in use", busy);
    for (int i = 0; i < pool.count; i++) {
        if (pool.buf[i] && !pool.busy[i]) {
            wio_gpu_host_free(pool.buf[i]);
            pool.buf[i] = NULL;
        }
    }
    if (pool.large && !pool.large_busy) {
        wio_gpu_host_free(pool.large);
        pool.large = NULL;
        pool.large_size = 0;
    }
    pthread_mutex_unlock(&pool.lock);
    stream_cache_release();
    wio_gpu_pipe_report();
}

void wio_gpu_get_counters(wio_gpu_counters *c)
{
    c->attr_queries = atomic_load(&n_attr_queries);
    c->ipc_opens = atomic_load(&n_ipc_opens);
    c->ipc_open_now = atomic_load(&n_ipc_open_now);
}
