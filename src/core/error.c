/* error.c — the error type: code names (waitio_strerror) and the per-thread detail message. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "common.h"

static _Thread_local char last_message[1024] = "no error";

const char *waitio_strerror(int err)
{
    static const char *const names[WAITIO_ERR_MAX_] = {
        [WAITIO_SUCCESS] = "success",
        [WAITIO_ERR_ARG] = "invalid argument",
        [WAITIO_ERR_NOMEM] = "out of memory",
        [WAITIO_ERR_STATE] = "WaitIO not initialised, already initialised, or finalized",
        [WAITIO_ERR_ENV] = "missing or malformed environment setting",
        [WAITIO_ERR_TIMEOUT] = "timed out",
        [WAITIO_ERR_BOOT] = "start-up rendezvous failed",
        [WAITIO_ERR_AUTH] = "authentication failed (different instance key?)",
        [WAITIO_ERR_KEY] = "instance key missing, unreadable or unsafe",
        [WAITIO_ERR_PEER] = "connection to the peer lost",
        [WAITIO_ERR_PEER_FINALIZED] = "peer finalized",
        [WAITIO_ERR_TRUNCATE] = "message truncated: receive buffer too short",
        [WAITIO_ERR_PROTO] = "protocol violation by the peer",
        [WAITIO_ERR_SYS] = "system call failed",
        [WAITIO_ERR_GROUP] = "invalid group or rank",
        [WAITIO_ERR_NOT_MEMBER] = "not a member of the group",
        [WAITIO_ERR_CANCELLED] = "request cancelled",
        [WAITIO_ERR_UNREACHABLE] = "no transport reaches the peer",
        [WAITIO_ERR_BOUNDS] = "one-sided access outside the target's window",
        [WAITIO_ERR_RPC] = "remote procedure call failed (no such handler, or the handler failed)",
        [WAITIO_ERR_DEVICE] = "device (GPU) memory operation failed or no CUDA driver",
    };
    if (err < 0 || err >= WAITIO_ERR_MAX_)
        return "unknown error code";
    return names[err];
}

const char *waitio_error_message(void) { return last_message; }

int wio_fail_in(int subsys, int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_message, sizeof last_message, fmt, ap);
    va_end(ap);
    if (subsys >= 0 && subsys < WIO_SUB_COUNT && WIO_LOG_ERROR <= wio_log_levels[subsys])
        wio_log_write(subsys, WIO_LOG_ERROR, "%s (%s)", last_message, waitio_strerror(err));
    return err;
}

void wio_set_message(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_message, sizeof last_message, fmt, ap);
    va_end(ap);
}

double wio_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#ifdef WIO_ENABLE_ASSERTS
void wio_assert_fail(const char *cond, const char *file, int line)
{
    fprintf(stderr, "waitio: assertion failed: %s (%s:%d)\n", cond, file, line);
    abort();
}
#endif
