/*
 * gpu.h — device (CUDA) memory as one more kind of memory: which kind a buffer is, copies
 * between the kinds, device allocations, pinned staging buffers and CUDA IPC handles. The CUDA
 * driver is loaded at run time (dlopen of "libcuda.so.1", or the file WAITIO_CUDA_LIBRARY
 * names), so the library builds and runs without CUDA: then every pointer is host memory, and
 * an operation that needs the driver fails with WAITIO_ERR_DEVICE and a message that says
 * why. Implemented in cuda.c; the other layers call only this header.
 */
#ifndef WAITIO_GPU_H
#define WAITIO_GPU_H
#include <stddef.h>
#include <stdint.h>

typedef enum wio_mem_kind { WIO_MEM_HOST = 0, WIO_MEM_CUDA = 1 } wio_mem_kind;

/* 1 when the driver is loaded and sees at least one device, else 0. Loads it on first call
 * (thread-safe, once per process); never fails. */
int wio_gpu_available(void);

/* The kind of memory of [p, p + len). Host memory (and every pointer when the driver is not
 * loaded) is WIO_MEM_HOST at the cost of a branch once the driver is known absent. Attributes
 * are cached per allocation range, so repeated calls on one buffer ask the driver once. A range
 * that is not inside one allocation of one kind fails with WAITIO_ERR_ARG. `device` (may be
 * NULL) receives the CUDA device ordinal of device memory, -1 for host memory. */
int wio_gpu_mem_kind(const void *p, size_t len, wio_mem_kind *kind, int *device);

/* A synchronous copy of len bytes in any direction between any kinds (the driver's unified
 * addressing). Falls back to memcpy when both sides are host memory. */
int wio_gpu_copy(void *dst, const void *src, size_t len);

/* Device memory on the current device (cuMemAlloc; never managed memory), and its release
 * (which also forgets the cached attributes and closes nothing else). */
int wio_gpu_alloc(size_t len, void **p);
int wio_gpu_free(void *p);

/* Drops the cached attributes of the allocations overlapping [p, p + len): call before memory
 * that the library did not allocate is freed and may be reused as another kind. */
void wio_gpu_forget(const void *p, size_t len);

/* CUDA IPC: the handle of the allocation that holds p, and p's offset in it. */
#define WIO_GPU_IPC_HANDLE_LEN 64 /* sizeof(CUipcMemHandle) */
typedef struct wio_gpu_ipc_handle {
    unsigned char bytes[WIO_GPU_IPC_HANDLE_LEN];
    /* the allocation's buffer id in the exporting process (CU_POINTER_ATTRIBUTE_BUFFER_ID:
     * never reused there), 0 when unknown. The driver may give a new allocation at a freed
     * one's address the same handle bytes: the id tells a stale mapping from a live one. */
    uint64_t id;
} wio_gpu_ipc_handle;
int wio_gpu_ipc_export(const void *p, wio_gpu_ipc_handle *h, size_t *offset);
/* Maps a peer's exported allocation (cached per peer and handle: opened once) and gives its
 * base address in this process. */
int wio_gpu_ipc_open(uint32_t peer, const wio_gpu_ipc_handle *h, void **base);
/* Waits for the work queued on a CUDA stream of the program (its CUstream, or 1 / 2 for the
 * legacy / per-thread default stream, as __cuda_array_interface__ names them), with the device's
 * primary context made current on a thread that has none. */
int wio_gpu_stream_wait(uintptr_t stream);

/* Closes every mapping opened from peer (when the peer is lost or finalizes). */
void wio_gpu_ipc_close_peer(uint32_t peer);

/* ---- additions (gpup2p): staging, test hooks, finalize ---- */

/* A host buffer of at least len bytes to stage device data through: one of the pinned pool's
 * (WAITIO_GPU_STAGING_COUNT buffers of WAITIO_GPU_STAGING_SIZE bytes, allocated on first use)
 * when len fits one and one is free, else ordinary memory (the driver then stages the copy
 * itself). Give it back with wio_gpu_bounce_put and the same len. */
int wio_gpu_bounce_get(size_t len, void **p);
void wio_gpu_bounce_put(void *p, size_t len);

/* Pinned host memory (cuMemHostAlloc): copies to and from it run at the copy engines' speed. */
int wio_gpu_host_alloc(size_t len, void **p);
void wio_gpu_host_free(void *p);

/* Asynchronous copies on a stream of their own (cuStreamCreate, non-blocking); done is set to
 * 1 when every copy queued on s has finished. */
typedef struct wio_gpu_stream wio_gpu_stream;
int wio_gpu_stream_create(wio_gpu_stream **s);
void wio_gpu_stream_destroy(wio_gpu_stream *s);
int wio_gpu_copy_async(void *dst, const void *src, size_t len, wio_gpu_stream *s);
int wio_gpu_stream_done(wio_gpu_stream *s, int *done);
int wio_gpu_stream_sync(wio_gpu_stream *s);
/* A stream from the process's cache of idle ones (else a new one; blocking: ordered with the
 * legacy default stream), and its return: the caller has waited for everything queued on it. wio_gpu_release_all destroys the cached ones. */
int wio_gpu_stream_get(wio_gpu_stream **s);
void wio_gpu_stream_put(wio_gpu_stream *s);

/* Logs the pipelined staging's counters (pipeline.c) at debug level: at finalize. */
void wio_gpu_pipe_report(void);

/* Closes every IPC mapping and releases the staging pool (waitio_finalize). The driver stays
 * loaded and the attribute cache stays valid. */
void wio_gpu_release_all(void);

/* Counters for tests and the benchmark: driver attribute queries made (cache misses), IPC
 * mappings opened, IPC mappings open now. */
typedef struct wio_gpu_counters {
    uint64_t attr_queries, ipc_opens, ipc_open_now;
} wio_gpu_counters;
void wio_gpu_get_counters(wio_gpu_counters *c);

#endif
