/*
 * trace.c — WAITIO_TRACE and WAITIO_STATS (trace.h): the trace file of this process (created
 * in the trace directory, mapped, written record by record so that a process killed at any
 * moment leaves everything it recorded readable), the clock offset to the master measured with
 * ping exchanges at start-up and at finalize, and the per-peer table printed at finalize.
 *
 * The file (docs/tracing.md): a 4 KiB header, then 48-byte records. The header's record count
 * is stored after each record, so a reader of a killed process's file sees exactly the records
 * that were complete.
 *
 * The file grows as events come, not all at once: the mapping covers WAITIO_TRACE_SIZE (address
 * space only), the file behind it starts at TRACE_FIRST bytes and doubles, by at most TRACE_STEP
 * at a time, whenever its records are used up (trace_grow: blocks allocated and pages faulted in
 * then, once per chunk, so that a record still costs no fault or allocation; nothing waits for
 * another process). Finalize cuts the file to its records. A full disk, or the size reached,
 * drops further events and counts them; what was recorded stays readable.
 */
#define WIO_LOG_SUBSYS WIO_SUB_TRACE /* this file logs as "trace" (WAITIO_LOG=trace=LEVEL) */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "core/engine.h"
#include "core/settings.h"
#include "core/trace.h"

#define TRACE_MAGIC 0x31304352544f4957ull /* "WIOTRC01" */
#define TRACE_VERSION 1
#define TRACE_HDR 4096u
#define TRACE_REC 48u
#define TRACE_MAX_PBS 900u      /* the header lists every PB's process count */
#define TRACE_FIRST (16u << 10) /* the file's first length: header and 256 records */
#define TRACE_STEP (1u << 20)   /* the most it grows by at once (21845 records) */
#define SYNC_PINGS 16           /* exchanges per measurement; the one with the shortest round trip counts */
#define GID_TRACE_SYNC 0x7ffffff3u
#define TAG_SYNC_START 1
#define TAG_SYNC_END 2

/* header offsets */
enum {
    H_MAGIC = 0, H_VERSION = 8, H_RECSIZE = 12, H_ID = 16, H_NPROCS = 20, H_PBID = 24, H_NPB = 28,
    H_RANK = 32, H_PID = 36, H_CAPACITY = 40, H_COUNT = 48, H_DROPPED = 56,
    H_SYNC = 64,          /* 2 x {le64 local ns, le64 offset ns (signed), le64 round trip ns, le64 valid} */
    H_WALL = 128,         /* le64 CLOCK_REALTIME ns at open, le64 trace clock ns at open */
    H_HOST = 144,         /* 64 bytes, NUL-terminated */
    H_FINISHED = 208,     /* le64 1 once waitio_finalize closed the trace (else: killed, running) */
    H_PBSIZES = 256,      /* le32 process count of each PB */
};

int wio_trace_on;

static struct {
    uint8_t *map;
    size_t map_len;   /* the mapping: header and `capacity` records (WAITIO_TRACE_SIZE) */
    size_t file_len;  /* the file's length so far: records below `backed` may be written */
    int fd;           /* kept to grow the file; -1 once it cannot grow */
    uint64_t capacity, backed, count, dropped;
} tr = {.fd = -1};

/* The file extended by its next chunk (see the top of this file); -1 when it cannot grow: the
 * size reached, or the disk full (then it never tries again). */
static int trace_grow(void)
{
    if (tr.fd < 0 || tr.file_len >= tr.map_len)
        return -1;
    size_t step = tr.file_len < TRACE_STEP ? tr.file_len : TRACE_STEP;
    size_t len = tr.map_len - tr.file_len < step ? tr.map_len : tr.file_len + step;
    if (posix_fallocate(tr.fd, (off_t)tr.file_len, (off_t)(len - tr.file_len)) != 0) {
        close(tr.fd);
        tr.fd = -1;
        return -1;
    }
#ifdef MADV_POPULATE_WRITE
    /* best effort: without it (kernels before 5.14) the chunk's pages fault on first use */
    (void)madvise(tr.map + tr.file_len, len - tr.file_len, MADV_POPULATE_WRITE);
#endif
    tr.file_len = len;
    tr.backed = (len - TRACE_HDR) / TRACE_REC;
    return 0;
}

uint64_t wio_trace_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint8_t *wio_trace_event(unsigned kind, unsigned flags, uint32_t peer, uint32_t gid, uint64_t tag,
                         uint64_t bytes, uint64_t msg, uint32_t aux, int err)
{
    if (tr.count >= tr.backed && trace_grow() != 0) {
        __atomic_store_n((uint64_t *)(void *)(tr.map + H_DROPPED), ++tr.dropped, __ATOMIC_RELAXED);
        return NULL;
    }
    uint8_t *p = tr.map + TRACE_HDR + tr.count * TRACE_REC;
    /* the lines of later records fetched ahead: a record is written into memory not touched
     * since the file was mapped */
    __builtin_prefetch(p + 8 * TRACE_REC, 1, 0);
    wio_put_le64(p, wio_trace_now());
    p[8] = (uint8_t)kind;
    p[9] = (uint8_t)flags;
    wio_put_le16(p + 10, (uint16_t)(err < 0 ? -err : err));
    wio_put_le32(p + 12, peer);
    wio_put_le32(p + 16, gid);
    wio_put_le32(p + 20, aux);
    wio_put_le64(p + 24, tag);
    wio_put_le64(p + 32, bytes);
    wio_put_le64(p + 40, msg);
    /* the record is complete before the count says so */
    __atomic_store_n((uint64_t *)(void *)(tr.map + H_COUNT), ++tr.count, __ATOMIC_RELEASE);
    return p;
}

/* ---- the file ---- */

static size_t trace_capacity(void)
{
    size_t bytes = 16u << 20;
    const char *v = wio_env("WAITIO_TRACE_SIZE");
    if (v && *v && (wio_parse_size(v, &bytes) != 0 || bytes < TRACE_HDR + TRACE_REC)) {
        wio_warn("WAITIO_TRACE_SIZE='%s' is not a size of at least %u bytes; using 16M", v,
                 TRACE_HDR + TRACE_REC);
        bytes = 16u << 20;
    }
    return (bytes - TRACE_HDR) / TRACE_REC;
}

/* The trace directory, opened once: created 0700 if missing; an existing one must be ours and
 * writable by nobody else, since whoever may write there can remove, replace or watch grow the
 * traces (and plant files that waitio-trace then reads). The file is created relative to the
 * descriptor checked, so a directory swapped in after the check is never written. */
static int trace_open_dir(const char *dir, int *out)
{
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        return wio_fail(WAITIO_ERR_SYS, "WAITIO_TRACE: cannot create %s: %s", dir, strerror(errno));
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return wio_fail(WAITIO_ERR_SYS, "WAITIO_TRACE: cannot open the directory %s: %s", dir, strerror(errno));
    struct stat st;
    if (fstat(dfd, &st) != 0) {
        int err = errno;
        close(dfd);
        return wio_fail(WAITIO_ERR_SYS, "WAITIO_TRACE: %s: %s", dir, strerror(err));
    }
    if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
        close(dfd);
        return wio_fail(WAITIO_ERR_ENV, "WAITIO_TRACE: %s is %s (owner uid %u, mode %04o): a trace "
                        "directory must be yours and writable by you alone", dir,
                        st.st_uid != geteuid() ? "another user's directory" : "writable by others",
                        (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
    }
    *out = dfd;
    return 0;
}

static int trace_open_file(wio_engine *e)
{
    const char *dir = e->cfg.trace_dir;
    int dfd = -1, rc = trace_open_dir(dir, &dfd);
    if (rc)
        return rc;
    char name[64], path[sizeof e->cfg.trace_dir + 64];
    snprintf(name, sizeof name, "pb%d.r%d.p%u.%ld.wtr", e->cfg.pbid, e->cfg.local_rank,
             (unsigned)e->my_id, (long)getpid());
    snprintf(path, sizeof path, "%s/%s", dir, name);
    /* a new name of our own: O_EXCL | O_NOFOLLOW, so nothing planted there is followed */
    int fd = openat(dfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        int err = errno;
        close(dfd);
        return wio_fail(WAITIO_ERR_SYS, "WAITIO_TRACE: cannot create %s: %s", path, strerror(err));
    }
    tr.capacity = trace_capacity();
    tr.map_len = TRACE_HDR + (size_t)tr.capacity * TRACE_REC;
    tr.file_len = tr.map_len < TRACE_FIRST ? tr.map_len : TRACE_FIRST;
    /* the first chunk's blocks and pages up front: no page fault or block allocation inside a
     * traced operation (measured: 40% off the cost of an event), and a full disk fails here.
     * The mapping spans the whole size; only the part the file backs is ever touched. */
    rc = posix_fallocate(fd, 0, (off_t)tr.file_len);
    void *map = rc ? MAP_FAILED : mmap(NULL, tr.map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (!rc && map == MAP_FAILED)
        rc = errno;
#ifdef MADV_POPULATE_WRITE
    if (!rc)
        (void)madvise(map, tr.file_len, MADV_POPULATE_WRITE); /* best effort, as in trace_grow */
#endif
    if (rc) {
        close(fd);
        unlinkat(dfd, name, 0);
    }
    close(dfd);
    if (rc)
        return wio_fail(WAITIO_ERR_SYS, "WAITIO_TRACE: cannot map %s: %s", path, strerror(rc));
    tr.map = map;
    tr.fd = fd;
    tr.backed = (tr.file_len - TRACE_HDR) / TRACE_REC;
    tr.count = tr.dropped = 0;
    uint8_t *h = tr.map;
    wio_put_le64(h + H_MAGIC, TRACE_MAGIC);
    wio_put_le32(h + H_VERSION, TRACE_VERSION);
    wio_put_le32(h + H_RECSIZE, TRACE_REC);
    wio_put_le32(h + H_ID, e->my_id);
    wio_put_le32(h + H_NPROCS, e->nprocs_total);
    wio_put_le32(h + H_PBID, (uint32_t)e->cfg.pbid);
    wio_put_le32(h + H_NPB, (uint32_t)e->npb);
    wio_put_le32(h + H_RANK, (uint32_t)e->cfg.local_rank);
    wio_put_le32(h + H_PID, (uint32_t)getpid());
    wio_put_le64(h + H_CAPACITY, tr.capacity);
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    wio_put_le64(h + H_WALL, (uint64_t)wall.tv_sec * 1000000000u + (uint64_t)wall.tv_nsec);
    wio_put_le64(h + H_WALL + 8, wio_trace_now());
    gethostname((char *)h + H_HOST, 63);
    for (int p = 0; p < e->npb && (unsigned)p < TRACE_MAX_PBS; p++)
        wio_put_le32(h + H_PBSIZES + 4 * (unsigned)p, (uint32_t)e->nprocs[p]);
    wio_info("tracing into %s (%llu records at most)", path, (unsigned long long)tr.capacity);
    return 0;
}

/* ---- the clock offset to the master ---- */

static int yes(int pb, int rank)
{
    (void)pb;
    (void)rank;
    return 1;
}

/* The group of every process, in process-id order, for the measurements. */
static wio_group *sync_group(wio_engine *e)
{
    wio_group *g = wio_group_find(e, GID_TRACE_SYNC);
    if (g)
        return g;
    waitio_filter_func_t *f = malloc(sizeof *f * (size_t)e->npb);
    int *order = malloc(sizeof *order * (size_t)e->npb);
    if (f && order) {
        for (int p = 0; p < e->npb; p++) {
            f[p] = yes;
            order[p] = p + 1;
        }
        if (wio_group_create_func(e, (int)GID_TRACE_SYNC, f, order, &g) != 0)
            g = NULL;
    }
    free(f);
    free(order);
    return g;
}

/* One message each way, waited for with a deadline; the request is released. A request that
 * timed out and cannot be cancelled any more (matched, or a send on its way) stays with the
 * engine, so its buffer must outlive the call: callers pass static ones (sync_buf). */
static int sync_xfer(wio_engine *e, wio_group *g, int send, int peer, void *buf, uint64_t tag, double deadline,
                     waitio_status_t *st)
{
    wio_req_impl *r;
    int rc = send ? wio_engine_isend(e, g, peer, buf, 8, tag, WIO_CTX_COLL, &r)
                  : wio_engine_irecv(e, g, peer, buf, 8, tag, WIO_CTX_COLL, &r);
    if (rc || !r)
        return rc;
    rc = wio_engine_wait_req(e, r, deadline);
    if (rc == WAITIO_ERR_TIMEOUT && r->state != WIO_RS_DONE) {
        if (wio_engine_cancel(e, r) == 0 || r->state == WIO_RS_DONE)
            wio_req_release(e, r);
        return rc;
    }
    if (!rc)
        rc = r->status.error;
    if (st)
        *st = r->status;
    wio_req_release(e, r);
    return rc;
}

static uint8_t sync_buf[2][8]; /* ping, pong (see sync_xfer) */

/* The master answers SYNC_PINGS pings of every other tracing process with its clock. A pong
 * that cannot be delivered (that tracer gave up or died) does not stop the others' answers; a
 * ping that does not come by the deadline does. */
static void sync_serve(wio_engine *e, wio_group *g, uint64_t tag, double deadline)
{
    unsigned want = 0, served = 0;
    for (uint32_t i = 1; i < e->nprocs_total; i++)
        want += (e->table[i].flags & WIO_PROC_TRACE) ? SYNC_PINGS : 0;
    for (unsigned pings = 0; pings < want; pings++) {
        waitio_status_t st;
        if (sync_xfer(e, g, 0, WAITIO_ANY_SOURCE, sync_buf[0], tag, deadline, &st) != 0)
            break;
        wio_put_le64(sync_buf[1], wio_trace_now());
        if (sync_xfer(e, g, 1, st.source, sync_buf[1], tag, deadline, NULL) == 0)
            served++;
    }
    if (served < want)
        wio_info("trace clock: %u of %u measurements of the other processes answered", served, want);
}

/* A tracing process other than the master: the offset to its clock from the exchange with the
 * shortest round trip, into header slot `slot` (if its file opened: the master counts on the
 * pings of every process that asked to trace). */
static void sync_measure(wio_engine *e, wio_group *g, uint64_t tag, double deadline, int slot)
{
    uint64_t best_rtt = UINT64_MAX, at = 0;
    int64_t best_off = 0;
    for (int k = 0; k < SYNC_PINGS; k++) {
        uint64_t t0 = wio_trace_now();
        if (sync_xfer(e, g, 1, 0, sync_buf[0], tag, deadline, NULL) != 0 ||
            sync_xfer(e, g, 0, 0, sync_buf[1], tag, deadline, NULL) != 0) {
            wio_info("trace clock: the master did not answer (%s); %s", waitio_error_message(),
                     slot ? "no drift correction" : "offset taken as 0");
            return;
        }
        uint64_t t1 = wio_trace_now(), tm = wio_get_le64(sync_buf[1]);
        if (t1 - t0 < best_rtt) {
            best_rtt = t1 - t0;
            at = t0 + (t1 - t0) / 2;
            best_off = (int64_t)(tm - at);
        }
    }
    if (!tr.map)
        return;
    uint8_t *s = tr.map + H_SYNC + 32 * (unsigned)slot;
    wio_put_le64(s, at);
    wio_put_le64(s + 8, (uint64_t)best_off);
    wio_put_le64(s + 16, best_rtt);
    wio_put_le64(s + 24, 1);
    wio_debug("trace clock: offset to the master %lld ns (round trip %llu ns)", (long long)best_off,
              (unsigned long long)best_rtt);
}

/* Slot 0 at start-up, slot 1 at finalize. The master's offset is 0 by definition. */
static void sync_clocks(wio_engine *e, uint64_t tag, double wait, int slot)
{
    int anyone = 0;
    for (uint32_t i = 1; i < e->nprocs_total; i++)
        anyone |= (e->table[i].flags & WIO_PROC_TRACE) != 0;
    if (!anyone && e->my_id == 0) {
        if (tr.map) {
            uint8_t *s = tr.map + H_SYNC + 32 * (unsigned)slot;
            wio_put_le64(s, wio_trace_now());
            wio_put_le64(s + 24, 1);
        }
        return;
    }
    wio_group *g = sync_group(e);
    if (!g)
        return;
    double deadline = wio_now() + wait;
    if (e->my_id == 0) {
        if (tr.map) {
            uint8_t *s = tr.map + H_SYNC + 32 * (unsigned)slot;
            wio_put_le64(s, wio_trace_now());
            wio_put_le64(s + 24, 1);
        }
        sync_serve(e, g, tag, deadline);
    } else if (e->cfg.trace_dir[0]) {
        sync_measure(e, g, tag, deadline, slot);
    }
}

void wio_trace_start(wio_engine *e)
{
    /* asked for and refused: a notice, shown by default (off only with WAITIO_LOG=off) */
    if (e->cfg.trace_dir[0] && trace_open_file(e) != 0)
        wio_notice("%s; not tracing", waitio_error_message());
    /* every process takes part whether it traces or not: the master serves who does */
    if (e->my_id == 0 || e->cfg.trace_dir[0])
        sync_clocks(e, TAG_SYNC_START, 30, 0);
    wio_trace_on = tr.map != NULL;
}

/* ---- WAITIO_STATS ---- */

static void print_stats(wio_engine *e)
{
    char me[64];
    wio_describe_process(e, e->my_id, me, sizeof me);
    fprintf(stderr, "WaitIO stats of %s:\n  %-26s %-5s %10s %14s %10s %14s %10s\n", me, "peer", "via",
            "msgs out", "bytes out", "msgs in", "bytes in", "waited s");
    for (uint32_t i = 0; i < e->nprocs_total; i++) {
        const wio_peer *p = e->peers ? e->peers[i] : NULL;
        if (!p || (!p->msgs_out && !p->msgs_in && !p->wait_ns))
            continue;
        char who[64];
        wio_describe_process(e, i, who, sizeof who);
        fprintf(stderr, "  %-26s %-5s %10llu %14llu %10llu %14llu %10.6f\n", who,
                p->tp_name ? p->tp_name : "-", (unsigned long long)p->msgs_out,
                (unsigned long long)p->bytes_out, (unsigned long long)p->msgs_in,
                (unsigned long long)p->bytes_in, (double)p->wait_ns * 1e-9);
    }
}

void wio_trace_finish(wio_engine *e)
{
    if (e->cfg.stats)
        print_stats(e);
    wio_trace_on = 0; /* the measurement's own messages are not part of the run */
    if (e->my_id == 0 || e->cfg.trace_dir[0])
        sync_clocks(e, TAG_SYNC_END, e->cfg.finalize_timeout, 1);
    if (!tr.map)
        return;
    if (tr.dropped)
        wio_warn("trace: %llu events dropped (%s after %llu; raise WAITIO_TRACE_SIZE or free disk space)",
                 (unsigned long long)tr.dropped, tr.count >= tr.capacity ? "the file was full" :
                 "the disk was full", (unsigned long long)tr.count);
    wio_put_le64(tr.map + H_FINISHED, 1);
    msync(tr.map, tr.file_len, MS_ASYNC);
    munmap(tr.map, tr.map_len);
    tr.map = NULL;
    if (tr.fd >= 0) {
        /* the unused rest of the last chunk given back; failing to is harmless (it reads as
         * records beyond the count) */
        if (ftruncate(tr.fd, (off_t)(TRACE_HDR + tr.count * TRACE_REC)) != 0)
            wio_debug("trace: cannot shorten the file to its records: %s", strerror(errno));
        close(tr.fd);
        tr.fd = -1;
    }
}
