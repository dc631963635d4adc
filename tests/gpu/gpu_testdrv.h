/*
 * gpu_testdrv.h — the GPU test programs' and the GPU benchmark's own handle on the CUDA driver:
 * they allocate and fill device memory themselves (as a CUDA application does), independently
 * of WaitIO's loader. The driver is WAITIO_CUDA_LIBRARY when set (the test double
 * tests/gpu/fake_cuda.c in CI), else libcuda.so.1. Header-only; the caller links -ldl.
 */
#ifndef WAITIO_GPU_TESTDRV_H
#define WAITIO_GPU_TESTDRV_H

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct { unsigned char b[64]; } CUipcMemHandle_td;

typedef struct td_driver {
    int (*Init)(unsigned);
    int (*DeviceGet)(int *, int);
    int (*DevicePrimaryCtxRetain)(void **, int);
    int (*CtxSetCurrent)(void *);
    int (*MemAlloc)(unsigned long long *, size_t);
    int (*MemFree)(unsigned long long);
    int (*HtoD)(unsigned long long, const void *, size_t);
    int (*DtoH)(void *, unsigned long long, size_t);
    int (*Memcpy)(unsigned long long, unsigned long long, size_t);
    int (*MemHostAlloc)(void **, size_t, unsigned);
    int (*MemFreeHost)(void *);
    int (*CtxSynchronize)(void);
    int (*IpcGetMemHandle)(void *, unsigned long long);
    int (*IpcOpenMemHandle)(unsigned long long *, CUipcMemHandle_td, unsigned);
    int (*IpcCloseMemHandle)(unsigned long long);
} td_driver;

static td_driver td;

static void *td_sym(void *h, const char *name)
{
    void *f = dlsym(h, name);
    if (!f) {
        fprintf(stderr, "gpu test: the driver has no %s\n", name);
        exit(2);
    }
    return f;
}

/* Loads the driver and makes device 0's primary context current; exits 2 when impossible. */
static __attribute__((unused)) void td_load(void)
{
    const char *path = getenv("WAITIO_CUDA_LIBRARY");
    if (!path || !*path)
        path = "libcuda.so.1";
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "gpu test: cannot load %s: %s\n", path, dlerror());
        exit(2);
    }
#define TD(field, name) *(void **)&td.field = td_sym(h, name)
    TD(Init, "cuInit"); TD(DeviceGet, "cuDeviceGet"); TD(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    TD(CtxSetCurrent, "cuCtxSetCurrent"); TD(MemAlloc, "cuMemAlloc_v2"); TD(MemFree, "cuMemFree_v2");
    TD(HtoD, "cuMemcpyHtoD_v2"); TD(DtoH, "cuMemcpyDtoH_v2"); TD(Memcpy, "cuMemcpy");
    TD(MemHostAlloc, "cuMemHostAlloc"); TD(MemFreeHost, "cuMemFreeHost"); TD(CtxSynchronize, "cuCtxSynchronize");
    TD(IpcGetMemHandle, "cuIpcGetMemHandle"); TD(IpcOpenMemHandle, "cuIpcOpenMemHandle_v2");
    TD(IpcCloseMemHandle, "cuIpcCloseMemHandle");
#undef TD
    int dev;
    void *ctx;
    if (td.Init(0) || td.DeviceGet(&dev, 0) || td.DevicePrimaryCtxRetain(&ctx, dev) || td.CtxSetCurrent(ctx)) {
        fprintf(stderr, "gpu test: no usable device through %s\n", path);
        exit(2);
    }
}

static __attribute__((unused)) void *td_alloc(size_t n)
{
    unsigned long long d = 0;
    if (td.MemAlloc(&d, n ? n : 1)) {
        fprintf(stderr, "gpu test: cuMemAlloc(%zu) failed\n", n);
        exit(2);
    }
    return (void *)(uintptr_t)d;
}

static __attribute__((unused)) void td_free(void *p) { td.MemFree((unsigned long long)(uintptr_t)p); }

static __attribute__((unused)) void td_put(void *dev, const void *host, size_t n)
{
    if (n && td.HtoD((unsigned long long)(uintptr_t)dev, host, n)) {
        fprintf(stderr, "gpu test: cuMemcpyHtoD(%zu) failed\n", n);
        exit(2);
    }
}

static __attribute__((unused)) void td_get(void *host, const void *dev, size_t n)
{
    if (n && td.DtoH(host, (unsigned long long)(uintptr_t)dev, n)) {
        fprintf(stderr, "gpu test: cuMemcpyDtoH(%zu) failed\n", n);
        exit(2);
    }
}

#endif
