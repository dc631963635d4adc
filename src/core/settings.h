/*
 * settings.h — the registry of WaitIO's environment variables (settings.c): one table with each
 * variable's type, default, allowed values, subsystem and one-line description, through which
 * the library and its tools read every WAITIO_* variable. waitio-info --all prints it; unknown
 * WAITIO_* names in the environment are reported at waitio_init with the closest known name.
 */
#ifndef WIO_SETTINGS_H
#define WIO_SETTINGS_H

#include <stddef.h>

typedef enum wio_setting_type {
    WIO_SET_INT,      /* decimal integer in [lo, hi] */
    WIO_SET_SIZE,     /* bytes, K/M/G suffixes (wio_parse_size), in [lo, hi] */
    WIO_SET_NUMBER,   /* decimal number in [lo, hi] */
    WIO_SET_BOOL,     /* 0 or 1 */
    WIO_SET_AUTO01,   /* 0, 1 or auto */
    WIO_SET_ENUM,     /* one of `values` (comma-separated) */
    WIO_SET_LIST,     /* transports: names of `values`, separated by ',', ':' or ' ' */
    WIO_SET_STRING,   /* any text of at most hi characters */
    WIO_SET_PATH,     /* a file or directory name */
    WIO_SET_SECRET,   /* a key: never printed */
    WIO_SET_LOGSPEC,  /* LEVEL[,SUBSYSTEM=LEVEL...] (log.c) */
    WIO_SET_RANGE,    /* MIN-MAX in bytes, either side may be empty */
    WIO_SET_HEAPSIZE, /* OpenSHMEM's heap size: a positive number with K/M/G, fractions allowed */
} wio_setting_type;

enum {
    WIO_SETF_STRICT = 1,   /* a bad value fails waitio_init (config.c); else warned and ignored */
    WIO_SETF_EMPTY_OK = 2, /* "" means the default (else "" is a job script's mistake) */
    WIO_SETF_ICASE = 4,    /* enum values compared without case */
};

typedef struct wio_setting {
    const char *name;
    wio_setting_type type;
    const char *dflt;      /* as a user would write it; NULL: none (what happens is in doc) */
    double lo, hi;         /* INT, SIZE, NUMBER: the allowed range; STRING: hi = the most characters */
    const char *values;    /* ENUM, LIST: the allowed words, comma-separated */
    const char *subsystem; /* core, boot, auth, tcp, shm, file, ucx, rma, shmem, mpi, coll, ... */
    unsigned flags;        /* WIO_SETF_* */
    const char *doc;       /* one line */
} wio_setting;

/* Where a value came from. */
enum wio_setting_source { WIO_FROM_DEFAULT = 0, WIO_FROM_ENV = 1 };

/* The table, in the order waitio-info prints it (grouped by subsystem). */
const wio_setting *wio_settings(size_t *count);
/* The entry of `name`, NULL when no such variable is registered. */
const wio_setting *wio_setting_find(const char *name);

/* The raw value of a variable, as getenv gives it (NULL when unset, "" when set but empty).
 * The one place where WaitIO reads a WAITIO_* variable: the name must be registered (asserted
 * in Debug builds); other names (launchers' OMPI_*, SLURM_*...) pass through. */
const char *wio_env(const char *name);

/* The closest registered WAITIO_* name to `name` by edit distance, NULL when none is close. */
const char *wio_setting_suggest(const char *name);

/* Registered names reserved for WaitIO's tests: variables with this prefix are never reported
 * as unknown (the test suite sets them for its own scripts). */
#define WIO_SETTINGS_TEST_PREFIX "WAITIO_TEST_"

#ifndef WIO_SETTINGS_STANDALONE
/* ---- validation (the library's side; the launcher tools compile the table alone) ---- */

/* 0 when `value` is acceptable for s, else -1 with the library's message in why[cap]
 * ("WAITIO_NPB='abc' is not an integer in [1, 65536]"). An empty value is the default where the
 * library takes it so. */
int wio_setting_check(const wio_setting *s, const char *value, char *why, size_t cap);

/* The value the library uses: the environment's when set and valid; otherwise the default (NULL
 * when there is none). An invalid value is said once per variable and ignored.
 * *source (when not NULL) says whether the value came from the environment. */
const char *wio_setting_str(const char *name, int *source);
/* The same as a number (INT, NUMBER, BOOL; AUTO01: auto is -1), or dflt when there is none. */
double wio_setting_num(const char *name, double dflt);

/* Says once per process, for each WAITIO_* variable in the environment that is not registered,
 * that it is ignored, with the closest known name. Called by waitio_init. Returns how many. */
int wio_settings_warn_unknown(void);
/* Says each bad value of a registered variable that the library ignores (the strict ones fail
 * waitio_init instead), once per variable. Called by waitio_init. */
void wio_settings_say_ignored(void);
#endif

#endif
