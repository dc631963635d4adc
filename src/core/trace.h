/*
 * trace.h — what a run did, seen from each process: WAITIO_TRACE=<dir> records every WaitIO
 * event of this process (sends, receives, waits, collectives, one-sided operations, connections,
 * errors) into a file in that directory that grows with them up to WAITIO_TRACE_SIZE, with the
 * clock offset to the master measured at start-up and at finalize, for tools/waitio-trace to
 * merge into one timeline;
 * WAITIO_STATS=1 prints per-peer counters at finalize. docs/tracing.md describes the file.
 *
 * Off, an event costs one load and a predictable branch (WIO_TRACE). On, it costs a clock read
 * and a 48-byte store into a mapped file (once per chunk of the file, its growth: trace.c); a
 * full file or disk drops events and counts them.
 */
#ifndef WIO_TRACE_H
#define WIO_TRACE_H

#include <stdint.h>

struct wio_engine;

enum wio_trace_kind {
    WIO_TR_SEND = 1,      /* isend: peer, gid, tag, bytes, msg (the n-th message to that peer); flag AT_ONCE */
    WIO_TR_SEND_DONE,     /* a send's request completed: msg, err */
    WIO_TR_RECV,          /* irecv: peer (WIO_TR_ANY), gid, tag, bytes = buffer size */
    WIO_TR_RECV_DONE,     /* a receive completed: peer, tag, bytes, msg (the peer's number of it), err */
    WIO_TR_WAIT_BEGIN,    /* a wait that has to wait: peer (WIO_TR_ANY: several or any) */
    WIO_TR_WAIT_END,      /* err */
    WIO_TR_COLL_BEGIN,    /* a collective: gid, tag = operation (WIO_TR_OP_*), bytes per process */
    WIO_TR_COLL_END,      /* aux = the path taken (WIO_TR_PATH_*), err */
    WIO_TR_RMA,           /* a one-sided operation: peer, gid = window (group for calls), tag =
                           * WIO_TR_RMA_*, bytes, aux = atomic operation or handler id */
    WIO_TR_CONN_OPEN,     /* a connection to peer opened: aux = its transport (WIO_TP_* bit) */
    WIO_TR_CONN_CLOSE,    /* it closed (err: why, 0 for an orderly close) */
    WIO_TR_ERROR,         /* peer lost: err */
    WIO_TR_MATCH,         /* a receive matched a message whose data is still to come (rendezvous,
                           * or an unexpected message still arriving): peer, tag, bytes, msg */
    WIO_TR_TEST,          /* waitio_test found its request complete: peer */
    WIO_TR_KINDS_
};

#define WIO_TR_ANY 0xffffffffu
#define WIO_TR_AT_ONCE 0x01u /* SEND: written at once (the small-message fast path) */

enum wio_trace_op {
    WIO_TR_OP_BARRIER = 1, WIO_TR_OP_BCAST, WIO_TR_OP_REDUCE, WIO_TR_OP_ALLREDUCE, WIO_TR_OP_GATHER,
    WIO_TR_OP_SCATTER, WIO_TR_OP_ALLGATHER, WIO_TR_OP_ALLTOALL,
};
enum wio_trace_rma { WIO_TR_RMA_PUT = 1, WIO_TR_RMA_GET, WIO_TR_RMA_ATOMIC, WIO_TR_RMA_RPC };
enum wio_trace_path { WIO_TR_PATH_FLAT = 0, WIO_TR_PATH_HIER, WIO_TR_PATH_PAIRED, WIO_TR_PATH_PIPELINE,
                      WIO_TR_PATH_SEGMENTED };

/* hidden: read PC-relative (one load when tracing is off) */
extern int wio_trace_on __attribute__((visibility("hidden")));

/* Records an event now; returns its record (NULL when the file was full), whose flags
 * wio_trace_flag may still add to. */
uint8_t *wio_trace_event(unsigned kind, unsigned flags, uint32_t peer, uint32_t gid, uint64_t tag,
                         uint64_t bytes, uint64_t msg, uint32_t aux, int err);
static inline void wio_trace_flag(uint8_t *rec, unsigned flag)
{
    if (rec)
        rec[9] |= (uint8_t)flag;
}

#define WIO_TRACE(kind, flags, peer, gid, tag, bytes, msg, aux, err)                              \
    do {                                                                                          \
        if (__builtin_expect(wio_trace_on, 0))                                                    \
            wio_trace_event((kind), (flags), (peer), (gid), (tag), (bytes), (msg), (aux), (err)); \
    } while (0)

/* After start-up: opens the trace file (WAITIO_TRACE) and measures the clock offset to the
 * master; the master serves the other tracing processes' measurements. Failing to trace is
 * logged, never fatal. */
void wio_trace_start(struct wio_engine *e);
/* At the start of finalize: the second offset measurement (drift), the file closed; the
 * WAITIO_STATS table printed. */
void wio_trace_finish(struct wio_engine *e);
/* The nanoseconds of the clock that traces use (CLOCK_MONOTONIC). */
uint64_t wio_trace_now(void);

#endif
