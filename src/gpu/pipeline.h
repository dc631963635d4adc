/*
 * pipeline.h — pipelined staging of device messages that travel as DATA frames (tcp, and any
 * transport that does not read the sender's memory in place): the sender copies the message
 * device → pinned host chunk by chunk on CUDA streams, and hands each chunk to the wire as soon
 * as its copy is done, while the copies of the next chunks run; the receiver copies each chunk
 * that has arrived pinned → device on a stream while the next ones arrive. Settings:
 * WAITIO_GPU_PIPELINE_CHUNK (bytes per copy) and WAITIO_GPU_PIPELINE_DEPTH (copies in flight
 * ahead of the wire; 0: whole messages staged at once). Implemented in pipeline.c; called by the
 * engine (engine.c, request.c). docs/transports.md, "GPU memory", tells the whole path.
 */
#ifndef WAITIO_GPU_PIPELINE_H
#define WAITIO_GPU_PIPELINE_H
#include "core/engine.h"

typedef struct wio_gpu_pipe wio_gpu_pipe;

/* 1 when a device message of len bytes is worth pipelining (the driver is loaded, the pipeline
 * is on and the message is longer than one chunk). */
int wio_gpu_pipe_wanted(size_t len);

/* Sender: a pipeline that fills host[0, len) from the device message dev[0, len), its first
 * copies started. Attach it to the send as r->gpu_pipe (host is the request's staging buffer). */
int wio_gpu_send_pipe_new(const void *dev, void *host, size_t len, wio_gpu_pipe **out);

/* Sender, at the CTS: DATA frames for receive request receiver_id, chunk by chunk as the copies
 * finish, on the peer's bulk link (bulk) or main link. The send completes when the last frame is
 * written; a copy that fails ends the transfer with a frame the receiver refuses (so both sides
 * see the connection fail) and the send with WAITIO_ERR_DEVICE. */
void wio_gpu_send_pipe_data(wio_engine *e, wio_peer *p, wio_req_impl *s, uint64_t receiver_id, int bulk);

/* Sender pipes parked until a chunk's copy is done (or out of the transport's callback), and
 * what hands them back: called by the engine's progress, which meanwhile blocks for at most a
 * millisecond (no descriptor wakes it when a copy ends). */
extern int wio_gpu_pipes_parked;
void wio_gpu_pipe_poll(void);

/* Receiver into device memory (r->gpu == WIO_GPU_RECV): DATA arrived (r->received grew); whole
 * chunks that arrived are queued for their copy to the device. */
void wio_gpu_recv_pipe_progress(wio_req_impl *r);

/* Receiver at completion: waits for the copies queued (also of a failed receive: its staging
 * buffer is about to be reused) and says how many bytes from the start are on the device now
 * (0 when there was no pipeline or one of its copies failed: the caller copies the rest). */
int wio_gpu_recv_pipe_finish(wio_req_impl *r, size_t *on_device);

/* Waits for every copy of a pipeline and releases it (NULL: nothing). */
void wio_gpu_pipe_destroy(wio_gpu_pipe *x);

/* Drops a request's pipeline (waits for its copies first); nothing when it has none. */
void wio_gpu_pipe_free(wio_req_impl *r);

/* engine.c: hands a DATA item of a rendezvous send to the peer's bulk link or main link. */
void wio_engine_queue_data(wio_engine *e, wio_peer *p, wio_send_item *it, int bulk);

#endif
