/*
 * log.c — leveled logging to stderr with one level per subsystem (WAITIO_LOG=warn,boot=info).
 * Each line names the process (PB id, rank), the seconds since waitio_init began and the
 * subsystem that wrote it. By default only notices are shown: start-up progress and advice
 * that a user needs without asking (failures are returned to the caller, who decides).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "common.h"
#include "settings.h"

/* all off until wio_log_init_from_env: nothing logs before waitio_init reads WAITIO_LOG */
signed char wio_log_levels[WIO_SUB_COUNT];
int wio_log_explicit;
static int log_pbid = -1, log_rank = -1;
static double log_t0; /* wio_now() when waitio_init began; 0 until then */

static const char *const level_names[] = {"off", "notice", "error", "warn", "info", "debug"};
static const char *const level_tags[] = {"", "NOTICE", "ERROR", "WARN", "INFO", "DEBUG"};
static const char *const subsys_names[WIO_SUB_COUNT] = {
    [WIO_SUB_CORE] = "core", [WIO_SUB_BOOT] = "boot", [WIO_SUB_NET] = "net",
    [WIO_SUB_TCP] = "tcp",   [WIO_SUB_SHM] = "shm",   [WIO_SUB_FILE] = "file",
    [WIO_SUB_UCX] = "ucx",   [WIO_SUB_RMA] = "rma",   [WIO_SUB_SHMEM] = "shmem",
    [WIO_SUB_MPI] = "mpi",   [WIO_SUB_COLL] = "coll", [WIO_SUB_TRACE] = "trace",
    [WIO_SUB_GPU] = "gpu",
};
#define NLEVELS ((int)(sizeof level_names / sizeof level_names[0]))
#define LEVEL_LIST "off, notice, error, warn, info, debug"

void wio_log_set_identity(int pbid, int rank)
{
    log_pbid = pbid;
    log_rank = rank;
}

/* index of the name s[0..n) in names[0..count), or -1 */
static int name_index(const char *const names[], int count, const char *s, size_t n)
{
    for (int i = 0; i < count; i++)
        if (strlen(names[i]) == n && strncasecmp(s, names[i], n) == 0)
            return i;
    return -1;
}

static void subsys_list(char *out, size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < WIO_SUB_COUNT && used < cap; i++)
        used += (size_t)snprintf(out + used, cap - used, "%s%s", i ? ", " : "", subsys_names[i]);
}

static void trim(const char **s, size_t *n)
{
    while (*n && (**s == ' ' || **s == '\t')) {
        (*s)++;
        (*n)--;
    }
    while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
        (*n)--;
}

/* One comma-separated entry: LEVEL (the level of every subsystem not named) or SUBSYS=LEVEL. */
static int entry_parse(const char *s, size_t n, int *base, signed char levels[], char *why,
                       size_t cap)
{
    const char *eq = memchr(s, '=', n);
    const char *lv = eq ? eq + 1 : s;
    size_t lvn = eq ? n - (size_t)(eq + 1 - s) : n;
    trim(&lv, &lvn);
    int level = name_index(level_names, NLEVELS, lv, lvn);
    if (level < 0) {
        snprintf(why, cap, "'%.*s' is not a level (%s)", (int)lvn, lv, LEVEL_LIST);
        return -1;
    }
    if (!eq) {
        *base = level;
        return 0;
    }
    size_t ssn = (size_t)(eq - s);
    trim(&s, &ssn);
    int ss = name_index(subsys_names, WIO_SUB_COUNT, s, ssn);
    if (ss < 0) {
        char known[160];
        subsys_list(known, sizeof known);
        snprintf(why, cap, "'%.*s' is not a subsystem (%s)", (int)ssn, s, known);
        return -1;
    }
    levels[ss] = (signed char)level;
    return 0;
}

/* Parses a WAITIO_LOG spec into levels[]; -1 with why set on the first bad entry. */
static int spec_parse(const char *spec, signed char levels[WIO_SUB_COUNT], char *why, size_t cap)
{
    int base = WIO_LOG_NOTICE;
    for (int i = 0; i < WIO_SUB_COUNT; i++)
        levels[i] = -1; /* not named: takes the base level */
    for (const char *p = spec; *p;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        const char *s = p;
        trim(&s, &n);
        if (n && entry_parse(s, n, &base, levels, why, cap) != 0)
            return -1;
        p = end ? end + 1 : p + strlen(p);
    }
    for (int i = 0; i < WIO_SUB_COUNT; i++)
        if (levels[i] < 0)
            levels[i] = (signed char)base;
    return 0;
}

int wio_log_spec_check(const char *spec, char *why, size_t cap)
{
    signed char levels[WIO_SUB_COUNT];
    char scratch[8];
    if (!why || !cap) {
        why = scratch;
        cap = sizeof scratch;
    }
    why[0] = '\0';
    return spec_parse(spec ? spec : "", levels, why, cap);
}

int wio_log_init_from_env(void)
{
    const char *v = wio_env("WAITIO_LOG");
    signed char levels[WIO_SUB_COUNT];
    char why[256];
    log_t0 = wio_now();
    wio_log_explicit = v && *v;
    /* empty: the default, as scripts pass an optional WAITIO_LOG=${WAITIO_LOG:-} */
    if (spec_parse(v ? v : "", levels, why, sizeof why) != 0) {
        for (int i = 0; i < WIO_SUB_COUNT; i++)
            wio_log_levels[i] = WIO_LOG_NOTICE;
        return wio_fail(WAITIO_ERR_ENV, "WAITIO_LOG='%s': %s; expected LEVEL, "
                        "LEVEL,SUBSYSTEM=LEVEL,... or SUBSYSTEM=LEVEL,...", v, why);
    }
    memcpy(wio_log_levels, levels, sizeof levels);
    return 0;
}

double wio_log_elapsed(void)
{
    return log_t0 > 0 ? wio_now() - log_t0 : 0.0;
}

void wio_log_write(int subsys, int level, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (subsys < 0 || subsys >= WIO_SUB_COUNT)
        subsys = WIO_SUB_CORE;
    if (level < 0 || level >= NLEVELS)
        level = WIO_LOG_DEBUG;
    fprintf(stderr, "waitio[PB %d rank %d +%.1fs %s] %s: %s\n", log_pbid, log_rank,
            wio_log_elapsed(), subsys_names[subsys], level_tags[level], line);
}
