/* log.c — leveled logging to stderr, tagged with the process's PB id and rank. Off by default. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "common.h"

int wio_log_level_current = WIO_LOG_OFF;
int wio_log_explicit;
static int log_pbid = -1, log_rank = -1;

void wio_log_set_identity(int pbid, int rank)
{
    log_pbid = pbid;
    log_rank = rank;
}

int wio_log_init_from_env(void)
{
    static const char *const names[] = {"off", "error", "warn", "info", "debug"};
    const char *v = getenv("WAITIO_LOG");
    wio_log_level_current = WIO_LOG_OFF;
    wio_log_explicit = v && *v;
    if (!v || !*v) /* empty: the default, as scripts pass an optional WAITIO_LOG=${WAITIO_LOG:-} */
        return 0;
    for (int i = 0; i < 5; i++)
        if (strcasecmp(v, names[i]) == 0) {
            wio_log_level_current = i;
            return 0;
        }
    return wio_fail(WAITIO_ERR_ENV, "WAITIO_LOG='%s' is not one of off, error, warn, info, debug", v);
}

void wio_log_write(int level, const char *fmt, ...)
{
    static const char *const tags[] = {"", "ERROR", "WARN", "INFO", "DEBUG"};
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "waitio[PB %d rank %d] %s: %s\n", log_pbid, log_rank, tags[level], line);
}
