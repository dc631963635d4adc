/*
 * testutil.h — shared helpers of the multi-process test programs (tests/progs/, the .c files).
 *
 *  - failure reporting: TU_FAIL (fatal: message on stderr, exit 1), TU_ERR (counted, the
 *    program goes on and exits non-zero at the end), TU_CHECK (a WaitIO call that must succeed;
 *    prints waitio_strerror() and waitio_error_message()), every line prefixed with the program
 *    name and "[PB p rank r]" once known;
 *  - a time limit per program (tu_alarm) whose expiry names the phase the program was in;
 *  - a deterministic PRNG (splitmix64) and message contents derived from (src, dst, size, tag,
 *    seq, salt), with a 16-byte header naming the sender, so a receiver checks every byte and,
 *    on a mismatch, says whose message it got instead;
 *  - small helpers: monotonic time, error-code names, the universe group.
 * Header-only (static functions) so every program stays one source file.
 */
#ifndef WAITIO_TESTUTIL_H
#define WAITIO_TESTUTIL_H

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "waitio.h"
#include "waitio_rma.h"

#if defined(__GNUC__)
#define TU_UNUSED __attribute__((unused))
#define TU_NORETURN __attribute__((noreturn))
#define TU_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define TU_UNUSED
#define TU_NORETURN
#define TU_PRINTF(a, b)
#endif

/* ---- identity and failure reporting ------------------------------------------------- */

static char tu_name[64] = "test";
static char tu_who[64] = "";
static const char *volatile tu_phase_text = "start-up";
static char tu_phase_buf[256];
static long tu_errors;             /* counted failures (TU_ERR) */
static long tu_errors_printed;
#define TU_MAX_PRINTED_ERRORS 40

static TU_UNUSED void tu_set_name(const char *argv0)
{
    const char *s = strrchr(argv0, '/');
    snprintf(tu_name, sizeof tu_name, "%s", s ? s + 1 : argv0);
}

static TU_UNUSED void tu_set_who(int pbid, int rank)
{
    snprintf(tu_who, sizeof tu_who, "[PB %d rank %d]", pbid, rank);
}

/* Names the current phase; the time-limit message and TU_FAIL print it. */
static TU_UNUSED TU_PRINTF(1, 2) void tu_phase(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tu_phase_buf, sizeof tu_phase_buf, fmt, ap);
    va_end(ap);
    tu_phase_text = tu_phase_buf;
}

static TU_UNUSED TU_NORETURN TU_PRINTF(3, 4) void tu_fail_at(const char *file, int line,
                                                             const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fprintf(stderr, "%s%s: FAIL (%s:%d, phase: %s): ", tu_name, tu_who, file, line, tu_phase_text);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    _exit(1); /* never hang in atexit handlers (MPI's or ours) */
}

static TU_UNUSED TU_PRINTF(3, 4) void tu_err_at(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    tu_errors++;
    if (tu_errors_printed >= TU_MAX_PRINTED_ERRORS) {
        if (tu_errors_printed++ == TU_MAX_PRINTED_ERRORS)
            fprintf(stderr, "%s%s: ERROR: (further errors not printed)\n", tu_name, tu_who);
        return;
    }
    tu_errors_printed++;
    fflush(stdout);
    fprintf(stderr, "%s%s: ERROR (%s:%d, phase: %s): ", tu_name, tu_who, file, line, tu_phase_text);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
}

#define TU_FAIL(...) tu_fail_at(__FILE__, __LINE__, __VA_ARGS__)
#define TU_ERR(...) tu_err_at(__FILE__, __LINE__, __VA_ARGS__)

static const char *const tu_code_names[] = {
    "WAITIO_SUCCESS", "WAITIO_ERR_ARG", "WAITIO_ERR_NOMEM", "WAITIO_ERR_STATE",
    "WAITIO_ERR_ENV", "WAITIO_ERR_TIMEOUT", "WAITIO_ERR_BOOT", "WAITIO_ERR_AUTH",
    "WAITIO_ERR_KEY", "WAITIO_ERR_PEER", "WAITIO_ERR_PEER_FINALIZED", "WAITIO_ERR_TRUNCATE",
    "WAITIO_ERR_PROTO", "WAITIO_ERR_SYS", "WAITIO_ERR_GROUP", "WAITIO_ERR_NOT_MEMBER",
    "WAITIO_ERR_CANCELLED", "WAITIO_ERR_UNREACHABLE", "WAITIO_ERR_BOUNDS", "WAITIO_ERR_RPC",
    "WAITIO_ERR_DEVICE",
};
#define TU_NCODES ((int)(sizeof tu_code_names / sizeof tu_code_names[0]))

/* "WAITIO_ERR_TIMEOUT" for 5, "code 99" for unknown codes (static buffer for those). */
static TU_UNUSED const char *tu_code_name(int rc)
{
    static char other[32];
    if (rc >= 0 && rc < TU_NCODES)
        return tu_code_names[rc];
    snprintf(other, sizeof other, "code %d", rc);
    return other;
}

/* Parses "TIMEOUT", "ERR_TIMEOUT", "WAITIO_ERR_TIMEOUT", "SUCCESS" or a number; -1 if unknown. */
static TU_UNUSED int tu_code_parse(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s && !*end)
        return (int)v;
    for (int i = 0; i < TU_NCODES; i++) {
        const char *n = tu_code_names[i];
        if (!strcmp(s, n) || !strcmp(s, n + 7) || (i > 0 && !strcmp(s, n + 11)) ||
            (i == 0 && !strcmp(s, "SUCCESS")))
            return i;
    }
    return -1;
}

/* A WaitIO call that must succeed. */
#define TU_CHECK(call) do { \
        int tu_rc_ = (call); \
        if (tu_rc_ != WAITIO_SUCCESS) \
            TU_FAIL("%s returned %s (%s): %s", #call, tu_code_name(tu_rc_), \
                    waitio_strerror(tu_rc_), waitio_error_message()); \
    } while (0)

/* A WaitIO call that must return `want`. */
#define TU_CHECK_RC(call, want) do { \
        int tu_rc_ = (call); \
        if (tu_rc_ != (want)) \
            TU_FAIL("%s returned %s (%s: %s), expected %s", #call, tu_code_name(tu_rc_), \
                    waitio_strerror(tu_rc_), waitio_error_message(), tu_code_name(want)); \
    } while (0)

/* ---- time ----------------------------------------------------------------------------- */

static TU_UNUSED double tu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static TU_UNUSED void tu_sleep(double seconds)
{
    struct timespec ts;
    ts.tv_sec = (time_t)seconds;
    ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static unsigned tu_alarm_secs;

static void tu_alarm_handler(int sig)
{
    (void)sig;
    /* async-signal-safe: write() only */
    char buf[600];
    size_t n = 0;
    const char *parts[] = {tu_name, tu_who, ": FAIL: time limit exceeded (phase: ",
                           (const char *)tu_phase_text, ")\n"};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        for (const char *p = parts[i]; *p && n < sizeof buf - 1; p++)
            buf[n++] = *p;
    ssize_t w = write(2, buf, n);
    (void)w;
    _exit(2);
}

/* Bounds the whole program: after `secs` seconds it prints the phase and exits with status 2.
 * The environment variable TU_ALARM overrides the default given here. */
static TU_UNUSED void tu_alarm(unsigned secs)
{
    const char *e = getenv("TU_ALARM");
    if (e && atoi(e) > 0)
        secs = (unsigned)atoi(e);
    tu_alarm_secs = secs;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = tu_alarm_handler;
    sigaction(SIGALRM, &sa, NULL);
    alarm(secs);
}

/* ---- PRNG and message contents -------------------------------------------------------- */

static inline TU_UNUSED uint64_t tu_mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

typedef struct tu_rng { uint64_t s; } tu_rng;

static inline TU_UNUSED uint64_t tu_rng_next(tu_rng *r)
{
    r->s += 0x9e3779b97f4a7c15ULL;
    return tu_mix64(r->s);
}

/* uniform in [0, n) (n > 0; the tiny modulo bias does not matter here) */
static inline TU_UNUSED uint64_t tu_rng_below(tu_rng *r, uint64_t n)
{
    return tu_rng_next(r) % n;
}

static inline TU_UNUSED tu_rng tu_rng_make(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    tu_rng r = {tu_mix64(a ^ 0x5851f42d4c957f2dULL)};
    r.s = tu_mix64(r.s ^ b) + 0x14057b7ef767814fULL;
    r.s = tu_mix64(r.s ^ c) + 0x2545f4914f6cdd1dULL;
    r.s = tu_mix64(r.s ^ d);
    return r;
}

#define TU_MSG_MAGIC 0x57494f54u /* "TOIW" */
#define TU_MSG_HDR 16

/* Seed of a message's bytes: (src, dst, size, tag, seq, salt). */
static inline TU_UNUSED uint64_t tu_msg_seed(int src, int dst, size_t len, uint64_t tag,
                                            uint32_t seq, uint64_t salt)
{
    tu_rng r = tu_rng_make(((uint64_t)(uint32_t)src << 32) | (uint32_t)dst, (uint64_t)len, tag,
                           ((uint64_t)seq << 40) ^ salt);
    return tu_rng_next(&r);
}

static TU_UNUSED void tu_fill_seed(uint8_t *b, size_t n, uint64_t seed)
{
    tu_rng r = {seed};
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v = tu_rng_next(&r);
        memcpy(b + i, &v, 8);
    }
    if (i < n) {
        uint64_t v = tu_rng_next(&r);
        memcpy(b + i, &v, n - i);
    }
}

static TU_UNUSED void tu_put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}

static TU_UNUSED uint32_t tu_get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Fills a message: PRNG bytes from its seed; messages of >= 16 bytes start with a header
 * {magic, src, dst, seq} (little-endian) so a receiver can tell whose message it got. */
static TU_UNUSED void tu_msg_fill(uint8_t *b, size_t n, int src, int dst, uint64_t tag,
                                  uint32_t seq, uint64_t salt)
{
    tu_fill_seed(b, n, tu_msg_seed(src, dst, n, tag, seq, salt));
    if (n >= TU_MSG_HDR) {
        tu_put32(b, TU_MSG_MAGIC);
        tu_put32(b + 4, (uint32_t)src);
        tu_put32(b + 8, (uint32_t)dst);
        tu_put32(b + 12, seq);
    }
}

/* Checks a received message byte by byte against what tu_msg_fill(src, dst, n, tag, seq, salt)
 * produced. Returns 1 if identical; else 0 with a description in why. */
static TU_UNUSED int tu_msg_check(const uint8_t *b, size_t n, int src, int dst, uint64_t tag,
                                  uint32_t seq, uint64_t salt, char *why, size_t cap)
{
    size_t start = 0;
    why[0] = '\0';
    if (n >= TU_MSG_HDR) {
        uint32_t m = tu_get32(b), s = tu_get32(b + 4), d = tu_get32(b + 8), q = tu_get32(b + 12);
        if (m != TU_MSG_MAGIC) {
            snprintf(why, cap, "bad header magic 0x%08x (expected 0x%08x): not a test message "
                     "or corrupted", m, TU_MSG_MAGIC);
            return 0;
        }
        if (s != (uint32_t)src || d != (uint32_t)dst || q != seq) {
            snprintf(why, cap, "got the message of src %u dst %u seq %u, expected src %d dst %d "
                     "seq %u (wrong match or reordering)", s, d, q, src, dst, seq);
            return 0;
        }
        start = TU_MSG_HDR;
    }
    tu_rng r = {tu_msg_seed(src, dst, n, tag, seq, salt)};
    size_t bad = 0, first = (size_t)-1;
    uint8_t want_first = 0, got_first = 0;
    for (size_t i = 0; i < n; i += 8) {
        uint64_t v = tu_rng_next(&r);
        uint8_t w[8];
        memcpy(w, &v, 8);
        size_t lim = n - i < 8 ? n - i : 8;
        for (size_t k = 0; k < lim; k++) {
            if (i + k < start)
                continue;
            if (b[i + k] != w[k]) {
                if (first == (size_t)-1) {
                    first = i + k;
                    want_first = w[k];
                    got_first = b[i + k];
                }
                bad++;
            }
        }
    }
    if (bad) {
        snprintf(why, cap, "%zu of %zu bytes differ, first at offset %zu (got 0x%02x, expected "
                 "0x%02x)", bad, n, first, got_first, want_first);
        return 0;
    }
    return 1;
}

/* ---- canaries: detect writes beyond a receive buffer ------------------------------------ */

#define TU_CANARY 64
static TU_UNUSED void tu_canary_set(uint8_t *p)
{
    for (int i = 0; i < TU_CANARY; i++)
        p[i] = (uint8_t)(0xa5 ^ i);
}
static TU_UNUSED int tu_canary_ok(const uint8_t *p)
{
    for (int i = 0; i < TU_CANARY; i++)
        if (p[i] != (uint8_t)(0xa5 ^ i))
            return 0;
    return 1;
}

/* ---- groups --------------------------------------------------------------------------- */

static TU_UNUSED int tu_everyone(int pbid, int rank)
{
    (void)pbid;
    (void)rank;
    return 1;
}

/* Every process of every PB, PB 0's first. */
static TU_UNUSED waitio_group_t tu_universe(int gid)
{
    int npb = 0;
    TU_CHECK(waitio_pb_size(&npb));
    waitio_filter_func_t *f = calloc((size_t)npb, sizeof *f);
    int *order = calloc((size_t)npb, sizeof *order);
    if (!f || !order)
        TU_FAIL("out of memory");
    for (int p = 0; p < npb; p++) {
        f[p] = tu_everyone;
        order[p] = p + 1;
    }
    waitio_group_t g = waitio_create_group(gid, f, order);
    if (!g)
        TU_FAIL("waitio_create_group(%d, everyone) failed: %s", gid, waitio_error_message());
    free(f);
    free(order);
    return g;
}

/* ---- misc ------------------------------------------------------------------------------ */

static TU_UNUSED void *tu_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        TU_FAIL("out of memory (%zu bytes)", n);
    return p;
}

static TU_UNUSED void *tu_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        TU_FAIL("out of memory (%zu x %zu bytes)", n, size);
    return p;
}

/* Integer environment variable, or -1 when unset/empty. */
static TU_UNUSED long tu_env_long(const char *name)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return -1;
    return strtol(v, NULL, 10);
}

/* Parses "a,b,c" into up to max ints; returns the count. */
static TU_UNUSED int tu_parse_ints(const char *s, int *out, int max)
{
    int n = 0;
    while (s && *s && n < max) {
        char *end;
        long v = strtol(s, &end, 0);
        if (end == s)
            break;
        out[n++] = (int)v;
        s = *end == ',' ? end + 1 : end;
    }
    return n;
}

/* The start of a one-sided test: waitio_init, the one-sided world group, this process's rank and
 * the group's size, and the PB/rank tag of its messages. */
static TU_UNUSED void tu_rma_start(waitio_group_t *world, int *me, int *n)
{
    TU_CHECK(waitio_init(30));
    TU_CHECK(waitio_rma_world(world));
    TU_CHECK(waitio_group_rank(*world, me));
    TU_CHECK(waitio_group_size(*world, n));
    int pb = 0, lr = 0;
    waitio_pb_rank(&pb);
    waitio_local_rank(&lr);
    tu_set_who(pb, lr);
}

#endif /* WAITIO_TESTUTIL_H */
