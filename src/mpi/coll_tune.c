/*
 * coll_tune.c — which path a collective on the universe takes (coll_tune.h, docs/tuning.md,
 * "Collective paths"). The per-call choice is a lookup in a ranking of the paths per operation
 * and size class that every process holds identically: process 0 makes it once, at the first
 * collective on the whole instance, from the table a site wrote with waitio-tune for the
 * instance's shape, or from a cost model whose parameters the processes measure right then
 * (their PB's MPI, the heads' WaitIO link); it sends the ranking to the PB heads, which broadcast
 * it in their PB. One reader, no disagreement possible: every process gets process 0's bytes.
 */
#define WIO_LOG_SUBSYS WIO_SUB_COLL /* this file logs as "coll" (WAITIO_LOG=coll=LEVEL) */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h> /* INFINITY only */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "coll/coll.h"
#include "core/settings.h"
#include "mpi/coll_tune.h"
#include "waitio_adapter.h"
#include "waitio_mpi.h"

#ifndef WIO_COLL_TABLE_DIR
#define WIO_COLL_TABLE_DIR "/usr/local/share/waitio/coll-tables"
#endif

#define PATH_BIT(p) (1u << (p))

/* ---- names, size classes, rankings ---- */

static const char *const op_names[WIO_COLL_OP_COUNT] = {"bcast", "reduce", "allreduce", "barrier"};
static const char *const path_names[WIO_COLL_PATH_COUNT_] = {"flat", "hier", "paired", "segmented",
                                                             "pipeline"};

const char *wio_coll_op_name(int op)
{
    return op >= 0 && op < WIO_COLL_OP_COUNT ? op_names[op] : NULL;
}

const char *wio_coll_path_name(int path)
{
    return path >= 0 && path < WIO_COLL_PATH_COUNT_ ? path_names[path] : NULL;
}

int wio_coll_size_class(size_t bytes)
{
    if (bytes <= 1)
        return 0;
    int k = 63 - __builtin_clzll((unsigned long long)bytes);
    return k < WIO_COLL_CLASSES ? k : WIO_COLL_CLASSES - 1;
}

/* The size a class stands for in rankings: its lower bound (the sizes waitio-tune measures
 * are powers of two, so a measured size is its class's own). */
static size_t class_bytes(int k)
{
    return k == 0 ? 0 : (size_t)1 << k;
}

int wio_coll_order_pick(const wio_coll_order *o, enum wio_coll_op op, size_t bytes, unsigned allowed)
{
    const unsigned char *rank = o->path[op][wio_coll_size_class(bytes)];
    for (int i = 0; i < WIO_COLL_PATH_COUNT_; i++)
        if (allowed & PATH_BIT(rank[i]))
            return rank[i];
    return WIO_COLL_PATH_FLAT_;
}

/* Sorts the paths of one ranking by cost, cheapest first; equal costs keep path order. */
static void rank_by_cost(unsigned char *rank, const double *cost)
{
    for (int i = 0; i < WIO_COLL_PATH_COUNT_; i++)
        rank[i] = (unsigned char)i;
    for (int i = 1; i < WIO_COLL_PATH_COUNT_; i++)
        for (int j = i; j > 0 && cost[rank[j]] < cost[rank[j - 1]]; j--) {
            unsigned char t = rank[j];
            rank[j] = rank[j - 1];
            rank[j - 1] = t;
        }
}

/* ---- the table ---- */

static int fail_at(char *why, size_t cap, const char *name, int line, const char *what, const char *tok)
{
    if (tok)
        snprintf(why, cap, "%s:%d: %s '%.40s'", name, line, what, tok);
    else
        snprintf(why, cap, "%s:%d: %s", name, line, what);
    return -1;
}

/* A decimal integer of digits only, at most max. */
static int parse_count(const char *s, unsigned long long max, unsigned long long *out)
{
    unsigned long long v = 0;
    if (!*s)
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        unsigned d = (unsigned)(*s - '0');
        if (v > (max - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

/* Microseconds: a plain decimal number (digits, '.', an exponent), > 0 and < 1e9. */
static int parse_usec(const char *s, double *out)
{
    if (*s < '0' || *s > '9')
        return -1;
    for (const char *c = s; *c; c++)
        if (!strchr("0123456789.eE+-", *c))
            return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end || errno || !(v > 0 && v < 1e9)) /* NaN fails both */
        return -1;
    *out = v;
    return 0;
}

static int find_name(const char *const *names, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(names[i], s))
            return i;
    return -1;
}

#define MAX_FIELDS 16

/* Splits line (modified) at spaces and tabs; -1 when it has more than MAX_FIELDS fields. */
static int split_fields(char *line, char **f)
{
    int n = 0;
    for (char *save = NULL, *tok = strtok_r(line, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
        if (n == MAX_FIELDS)
            return -1;
        f[n++] = tok;
    }
    return n;
}

/* "waitio-coll-table 1 npb=N ppb=N host=one|several [mpi=NAME]" */
static int parse_header(char **f, int n, const char *name, int ln, wio_coll_table *t, char *why, size_t cap)
{
    if (strcmp(f[0], "waitio-coll-table"))
        return fail_at(why, cap, name, ln, "the first line must be the header 'waitio-coll-table 1 ...', not", f[0]);
    if (n < 2 || strcmp(f[1], "1"))
        return fail_at(why, cap, name, ln, "unsupported table version", n < 2 ? "" : f[1]);
    int have_npb = 0, have_ppb = 0, have_host = 0, have_mpi = 0;
    for (int i = 2; i < n; i++) {
        char *eq = strchr(f[i], '=');
        unsigned long long v;
        if (!eq)
            return fail_at(why, cap, name, ln, "expected KEY=VALUE, got", f[i]);
        *eq = '\0';
        const char *val = eq + 1;
        if (!strcmp(f[i], "npb") && !have_npb++) {
            if (parse_count(val, 65536, &v) || v < 1)
                return fail_at(why, cap, name, ln, "npb is not an integer in [1, 65536]:", val);
            t->shape.npb = (int)v;
        } else if (!strcmp(f[i], "ppb") && !have_ppb++) {
            if (parse_count(val, 1u << 20, &v) || v < 1)
                return fail_at(why, cap, name, ln, "ppb is not an integer in [1, 1048576]:", val);
            t->shape.ppb = (int)v;
        } else if (!strcmp(f[i], "host") && !have_host++) {
            if (strcmp(val, "one") && strcmp(val, "several"))
                return fail_at(why, cap, name, ln, "host is not 'one' or 'several':", val);
            t->shape.one_host = !strcmp(val, "one");
        } else if (!strcmp(f[i], "mpi") && !have_mpi++) {
            if (!*val || strlen(val) >= sizeof t->mpi || strspn(val, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._+-") != strlen(val))
                return fail_at(why, cap, name, ln, "mpi is not a name of at most 31 letters, digits, '._+-':", val);
            snprintf(t->mpi, sizeof t->mpi, "%s", val);
        } else {
            return fail_at(why, cap, name, ln, "unknown or repeated header key", f[i]);
        }
    }
    if (!have_npb || !have_ppb || !have_host)
        return fail_at(why, cap, name, ln, "the header needs npb=, ppb= and host=", NULL);
    return 0;
}

/* "OP BYTES PATH=USEC..." with flat among the paths. */
static int parse_entry(char **f, int n, const char *name, int ln, wio_coll_table *t, char *why, size_t cap)
{
    int op = find_name(op_names, WIO_COLL_OP_COUNT, f[0]);
    unsigned long long bytes;
    if (op < 0)
        return fail_at(why, cap, name, ln, "unknown operation (bcast, reduce, allreduce, barrier)", f[0]);
    if (n < 3)
        return fail_at(why, cap, name, ln, "expected OP BYTES PATH=USEC...", NULL);
    if (parse_count(f[1], WIO_COLL_TABLE_MAX_BYTES, &bytes))
        return fail_at(why, cap, name, ln, "bytes is not an integer in [0, 2^40]:", f[1]);
    if (op == WIO_COLL_OP_BARRIER && bytes)
        return fail_at(why, cap, name, ln, "a barrier moves 0 bytes, not", f[1]);
    int k = t->nsizes[op];
    if (k == WIO_COLL_TABLE_SIZES)
        return fail_at(why, cap, name, ln, "more than 64 sizes for", f[0]);
    if (k && bytes <= t->bytes[op][k - 1])
        return fail_at(why, cap, name, ln, "sizes of an operation must ascend:", f[1]);
    double *usec = t->usec[op][k];
    for (int i = 2; i < n; i++) {
        char *eq = strchr(f[i], '=');
        if (!eq)
            return fail_at(why, cap, name, ln, "expected PATH=USEC, got", f[i]);
        *eq = '\0';
        int p = find_name(path_names, WIO_COLL_PATH_COUNT_, f[i]);
        if (p < 0)
            return fail_at(why, cap, name, ln, "unknown path (flat, hier, paired, segmented, pipeline)", f[i]);
        if (usec[p] > 0)
            return fail_at(why, cap, name, ln, "path given twice:", f[i]);
        if (parse_usec(eq + 1, &usec[p]))
            return fail_at(why, cap, name, ln, "not a time in microseconds (> 0, < 1e9):", eq + 1);
    }
    if (!(usec[WIO_COLL_PATH_FLAT_] > 0))
        return fail_at(why, cap, name, ln, "every line needs flat=USEC", NULL);
    t->bytes[op][k] = (size_t)bytes;
    t->nsizes[op] = k + 1;
    return 0;
}

int wio_coll_table_parse(const char *text, size_t len, const char *name, wio_coll_table *t, char *why,
                         size_t cap)
{
    memset(t, 0, sizeof *t);
    int header = 0, entries = 0, ln = 0;
    if (len > WIO_COLL_TABLE_FILE_MAX)
        return fail_at(why, cap, name, 0, "larger than 64 KiB", NULL);
    for (size_t pos = 0; pos < len;) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len, n = end - pos;
        char line[WIO_COLL_TABLE_LINE_MAX + 2], *f[MAX_FIELDS];
        ln++;
        if (n && text[pos + n - 1] == '\r')
            n--; /* written on Windows */
        if (n > WIO_COLL_TABLE_LINE_MAX)
            return fail_at(why, cap, name, ln, "line longer than 255 characters", NULL);
        memcpy(line, text + pos, n);
        line[n] = '\0';
        pos = end + 1;
        if (strlen(line) != n)
            return fail_at(why, cap, name, ln, "NUL byte in the line", NULL);
        if (line[strspn(line, " \t")] == '#')
            continue; /* a comment: any text */
        int nf = split_fields(line, f);
        if (nf < 0)
            return fail_at(why, cap, name, ln, "more than 16 fields", NULL);
        if (nf == 0)
            continue;
        int rc = header ? parse_entry(f, nf, name, ln, t, why, cap) : parse_header(f, nf, name, ln, t, why, cap);
        if (rc)
            return rc;
        entries += header;
        header = 1;
    }
    if (!header)
        return fail_at(why, cap, name, ln, "no header line", NULL);
    if (!entries)
        return fail_at(why, cap, name, ln, "no measurements", NULL);
    return 0;
}

int wio_coll_table_load(const char *path, wio_coll_table *t, char *why, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0) {
        snprintf(why, cap, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > (off_t)WIO_COLL_TABLE_FILE_MAX) {
        snprintf(why, cap, "%s: not a regular file of at most 64 KiB", path);
        close(fd);
        return -1;
    }
    char *buf = malloc((size_t)st.st_size + 1);
    size_t got = 0;
    while (buf && got < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    if (!buf || got != (size_t)st.st_size) {
        snprintf(why, cap, "%s: %s", path, buf ? "short read" : "out of memory");
        free(buf);
        return -1;
    }
    int rc = wio_coll_table_parse(buf, got, path, t, why, cap);
    free(buf);
    return rc;
}

int wio_coll_table_matches(const wio_coll_table *t, const wio_coll_shape *s)
{
    return t->shape.npb == s->npb && s->ppb > 0 && t->shape.ppb == s->ppb && t->shape.one_host == s->one_host;
}

/* The measured size of op nearest to `bytes` on a log scale (the smaller one on a tie): the
 * smallest ratio of the larger to the smaller (+1, for 0 bytes). No libm: static users link none. */
static int nearest_size(const wio_coll_table *t, int op, size_t bytes)
{
    int best = 0;
    double want = (double)bytes + 1, dist = INFINITY;
    for (int i = 0; i < t->nsizes[op]; i++) {
        double have = (double)t->bytes[op][i] + 1, d = have > want ? have / want : want / have;
        if (d < dist) {
            dist = d;
            best = i;
        }
    }
    return best;
}

void wio_coll_table_order(const wio_coll_table *t, wio_coll_order *o)
{
    for (int op = 0; op < WIO_COLL_OP_COUNT; op++) {
        if (!t->nsizes[op])
            continue;
        o->from_table[op] = 1;
        for (int k = 0; k < WIO_COLL_CLASSES; k++) {
            const double *us = t->usec[op][nearest_size(t, op, class_bytes(k))];
            double cost[WIO_COLL_PATH_COUNT_];
            for (int p = 0; p < WIO_COLL_PATH_COUNT_; p++)
                cost[p] = us[p] > 0 ? us[p] : INFINITY;
            rank_by_cost(o->path[op][k], cost);
        }
    }
}

/* ---- the model ---- */

static double lg(int n) /* rounds of a binomial tree or recursive doubling among n */
{
    int r = 0;
    while ((1 << r) < n)
        r++;
    return r;
}

/* a + s*b through the small and large measurements */
static double linear(double small, double large, size_t bytes)
{
    double per_byte = large > small ? (large - small) / (double)(WIO_COLL_M_LARGE - WIO_COLL_M_SMALL) : 0;
    double extra = bytes > WIO_COLL_M_SMALL ? (double)(bytes - WIO_COLL_M_SMALL) * per_byte : 0;
    return small + extra;
}

static double pb_op(const wio_coll_params *p, int small_idx, size_t bytes)
{
    return linear(p->pb[small_idx], p->pb[small_idx + 1], bytes);
}

static double link_t(const wio_coll_params *p, size_t bytes)
{
    return linear(p->link_small, p->link_large, bytes);
}

/* src/coll's allreduce on all processes: ring for large vectors, one round for small ones on
 * one host, recursive doubling (power of two) or reduce + broadcast over a tree. */
static double flat_allreduce(const wio_coll_params *p, size_t bytes)
{
    int n = p->nprocs;
    if (bytes >= (64u << 10))
        return 2.0 * (n - 1) * link_t(p, bytes / (size_t)n);
    if (p->one_host && n <= 16 && bytes * (size_t)n <= 4096) {
        /* one round: every process sends and receives n - 1 messages. With a core each, the
         * per-message work at both ends adds up (16 processes of a 16-core node: 8.9 us for
         * 8 B where one message takes 0.4 us); sharing cores, the round's cost is the turns
         * of the run queue it saves, about one message's latency (2 x 4 on 2 cores) */
        if (p->oversubscribed)
            return p->link_small + (double)(n - 1) * (link_t(p, bytes) - p->link_small);
        return (double)(n - 1) * link_t(p, bytes);
    }
    if (!(n & (n - 1)))
        return lg(n) * link_t(p, bytes);
    return 2 * lg(n) * link_t(p, bytes);
}

/* The pipelined broadcast's segment (hier.c): bytes/8 rounded up to 4 KiB, in [8 KiB, 256 KiB]. */
static size_t pipe_segment(size_t bytes)
{
    size_t seg = (bytes / 8 + 4095) & ~(size_t)4095;
    return seg < (8u << 10) ? (8u << 10) : seg > (256u << 10) ? (256u << 10) : seg;
}

static double pipeline_bcast(const wio_coll_params *p, size_t bytes)
{
    size_t seg = pipe_segment(bytes);
    double nseg = bytes > seg ? (double)((bytes + seg - 1) / seg) : 1;
    double out = (p->npb - 1) * link_t(p, seg), in = pb_op(p, WIO_COLL_M_BCAST_S, seg);
    if (p->oversubscribed) /* no cores to overlap on: one after the other */
        return nseg * (out + in);
    return out + (nseg - 1) * (out > in ? out : in) + in;
}

double wio_coll_model_cost(const wio_coll_params *p, enum wio_coll_op op, int path, size_t bytes)
{
    double heads = lg(p->npb), pairs_share = p->one_host && !p->oversubscribed ? 1.0 : p->ppb;
    double exch_whole = p->link_small + (link_t(p, bytes) - p->link_small) * pairs_share;
    double exch_piece = p->link_small + (link_t(p, bytes / (size_t)p->ppb) - p->link_small) * pairs_share;
    if (p->npb < 2 && path == WIO_COLL_PATH_FLAT_)
        return INFINITY; /* one PB: its MPI alone is the hierarchical path; no link was measured */
    switch (op * WIO_COLL_PATH_COUNT_ + path) {
    case WIO_COLL_OP_BCAST * WIO_COLL_PATH_COUNT_ + WIO_COLL_PATH_FLAT_:
        return p->have_flat ? linear(p->flat_bcast[0], p->flat_bcast[1], bytes) : lg(p->nprocs) * link_t(p, bytes);
    case WIO_COLL_OP_REDUCE * WIO_COLL_PATH_COUNT_ + WIO_COLL_PATH_FLAT_:
        return p->have_flat ? linear(p->flat_reduce[0], p->flat_reduce[1], bytes) : lg(p->nprocs) * link_t(p, bytes);
    case WIO_COLL_OP_BCAST * WIO_COLL_PATH_COUNT_ + WIO_COLL_PATH_HIER_:
        return heads * link_t(p, bytes) + pb_op(p, WIO_COLL_M_BCAST_S, bytes);
    case WIO_COLL_OP_BCAST * WIO_COLL_PATH_COUNT_ + WIO_COLL_PATH_PIPELINE_:
        return pipeline_bcast(p, bytes);
    case WIO_COLL_OP_REDUCE * WIO_COLL_PATH_COUNT_ + WIO_COLL_PATH_HIER_:
        return pb_op(p, WIO_COLL_M_REDUCE_S, bytes) + heads * link_t(p, bytes);
    case WIO_COLL_OP_ALLREDUCE * WIO_COLL_PATH_COUNT_ + WIO_COLL_PATH_FLAT_:
        return flat_allreduce(p, bytes);
    case WIO_COLL_OP_ALLREDUCE * WIO_COLL_PATH_COUNT_ + WIO_COLL_PATH_HIER_:
        return pb_op(p, WIO_COLL_M_REDUCE_S, bytes) + heads * link_t(p, bytes) + pb_op(p, WIO_COLL_M_BCAST_S, bytes);
    case WIO_COLL_OP_ALLREDUCE * WIO_COLL_PATH_COUNT_ + WIO_COLL_PATH_PAIRED_:
        return pb_op(p, WIO_COLL_M_ALLREDUCE_S, bytes) + heads * exch_whole;
    case WIO_COLL_OP_ALLREDUCE * WIO_COLL_PATH_COUNT_ + WIO_COLL_PATH_SEGMENTED_:
        /* reduce-scatter + allgather cost about an allreduce, plus one more PB collective */
        return pb_op(p, WIO_COLL_M_ALLREDUCE_S, bytes) + p->pb[WIO_COLL_M_BCAST_S] + heads * exch_piece;
    case WIO_COLL_OP_BARRIER * WIO_COLL_PATH_COUNT_ + WIO_COLL_PATH_FLAT_:
        return lg(p->nprocs) * p->link_small;
    case WIO_COLL_OP_BARRIER * WIO_COLL_PATH_COUNT_ + WIO_COLL_PATH_HIER_:
        return 2 * p->pb[WIO_COLL_M_BARRIER] + heads * p->link_small;
    default:
        return INFINITY; /* the path does not do this operation */
    }
}

void wio_coll_model_order(const wio_coll_params *p, wio_coll_order *o)
{
    for (int op = 0; op < WIO_COLL_OP_COUNT; op++) {
        if (o->from_table[op])
            continue;
        for (int k = 0; k < WIO_COLL_CLASSES; k++) {
            double cost[WIO_COLL_PATH_COUNT_];
            for (int path = 0; path < WIO_COLL_PATH_COUNT_; path++)
                cost[path] = wio_coll_model_cost(p, (enum wio_coll_op)op, path, class_bytes(k));
            rank_by_cost(o->path[op][k], cost);
        }
    }
}

/* ---- agreeing the ranking: the first collective on the whole instance ---- */

#define GID_TUNE_HEADS 0x7ffffff5
#define LINK_PEERS 8 /* head 0 measures its link to at most this many other heads */
enum { TAG_FIRST = 1, TAG_PING, TAG_PONG, TAG_PB, TAG_FINAL };

typedef struct agree_msg {
    uint32_t need_model; /* the table left some operation to the model */
    wio_coll_order order;
} agree_msg;

static struct {
    wio_engine *e;   /* the engine the ranking is for */
    int tried;       /* the agreement ran (once: a retry could wait for processes that gave up) */
    int agreed;      /* and gave `order` */
    wio_coll_order order;
    unsigned char said[WIO_COLL_OP_COUNT][WIO_COLL_CLASSES]; /* debug lines given: 1 << path */
} tuned;

static int adapter_rc(int rc, const char *what)
{
    return rc ? wio_fail(WAITIO_ERR_SYS, "tuning: MPI adapter %s failed (MPI error %d)", what, rc) : 0;
}

static int req_done(wio_engine *e, wio_req_impl *r)
{
    if (!r)
        return 0; /* a send that went at once */
    int rc = wio_engine_wait_req(e, r, 0);
    if (!rc && (rc = r->status.error) != 0)
        wio_engine_explain(e, r);
    if (r->state == WIO_RS_DONE)
        wio_req_release(e, r);
    return rc;
}

static int send_to(wio_engine *e, wio_group *h, int dst, const void *buf, size_t len, int tag)
{
    wio_req_impl *r = NULL;
    int rc = wio_engine_isend(e, h, dst, buf, len, (uint64_t)tag, WIO_CTX_COLL, &r);
    return rc ? rc : req_done(e, r);
}

static int recv_from(wio_engine *e, wio_group *h, int src, void *buf, size_t len, int tag)
{
    wio_req_impl *r = NULL;
    int rc = wio_engine_irecv(e, h, src, buf, len, (uint64_t)tag, WIO_CTX_COLL, &r);
    return rc ? rc : req_done(e, r);
}

/* Process 0's message to every head, which each broadcasts in its PB. */
static int spread(wio_engine *e, wio_group *h, agree_msg *m, int tag)
{
    const waitio_adapter_ops *a = wio_adapter();
    int rc = 0;
    if (e->cfg.local_rank == 0) {
        for (int p = 1; p < h->size && !rc && h->my_rank == 0; p++)
            rc = send_to(e, h, p, m, sizeof *m, tag);
        if (!rc && h->my_rank > 0)
            rc = recv_from(e, h, 0, m, sizeof *m, tag);
    }
    int rc2 = adapter_rc(a->bcast(a->ctx, m, sizeof *m, 0), "bcast");
    return rc ? rc : rc2;
}

static int heads_create(wio_engine *e, wio_group **out)
{
    return wio_group_create_heads(e, GID_TUNE_HEADS, out);
}

static int measure_one(const waitio_adapter_ops *a, int m, double *buf, double *out)
{
    size_t bytes = m == WIO_COLL_M_BARRIER ? 0 : (m % 2) ? WIO_COLL_M_SMALL : WIO_COLL_M_LARGE;
    size_t count = bytes / sizeof(double);
    switch (m) {
    case WIO_COLL_M_BARRIER:
        return a->barrier(a->ctx);
    case WIO_COLL_M_BCAST_S:
    case WIO_COLL_M_BCAST_L:
        return a->bcast(a->ctx, buf, bytes, 0);
    case WIO_COLL_M_REDUCE_S:
    case WIO_COLL_M_REDUCE_L:
        return a->reduce(a->ctx, buf, out, count, WAITIO_MPI_DOUBLE, WAITIO_MPI_SUM, 0);
    default:
        if (a->allreduce)
            return a->allreduce(a->ctx, buf, out, count, WAITIO_MPI_DOUBLE, WAITIO_MPI_SUM);
        int rc = a->reduce(a->ctx, buf, out, count, WAITIO_MPI_DOUBLE, WAITIO_MPI_SUM, 0);
        return rc ? rc : a->bcast(a->ctx, out, bytes, 0);
    }
}

/* Each PB times its MPI at its head: a few calls back to back, then a barrier (so that every
 * process has finished), less the barrier's own share; the best of two such rounds. Loops rather
 * than single calls after a barrier: the skew with which processes leave a barrier (a time slice
 * when processes share cores) would otherwise be most of a small collective's figure. */
static int measure_pb(double v[WIO_COLL_M_COUNT])
{
    const waitio_adapter_ops *a = wio_adapter();
    double *buf = calloc(2 * WIO_COLL_M_LARGE / sizeof(double), sizeof(double));
    int rc = buf ? 0 : wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    for (int m = 0; m < WIO_COLL_M_COUNT && !rc; m++) {
        int calls = m != WIO_COLL_M_BARRIER && m % 2 == 0 ? 2 : 4;
        v[m] = INFINITY;
        for (int round = 0; round < 2 && !rc; round++) {
            rc = adapter_rc(a->barrier(a->ctx), "barrier");
            double t0 = wio_now();
            for (int c = 0; c < calls && !rc; c++)
                rc = adapter_rc(measure_one(a, m, buf, buf + WIO_COLL_M_LARGE / sizeof(double)), "collective");
            if (!rc && m != WIO_COLL_M_BARRIER)
                rc = adapter_rc(a->barrier(a->ctx), "barrier");
            double per = (wio_now() - t0) / calls - (m != WIO_COLL_M_BARRIER ? v[WIO_COLL_M_BARRIER] / calls : 0);
            v[m] = per < v[m] ? per : v[m];
        }
        if (v[m] < 1e-7)
            v[m] = 1e-7; /* a figure below the clock's resolution: keep costs positive */
    }
    free(buf);
    return rc;
}

/* The flat bcast and reduce (src/coll over WaitIO, every process of the instance) timed as they
 * run, the way measure_pb times the PBs' MPI: a few calls back to back closed by a barrier, less
 * the barrier's share, the better of two rounds; process 0's figure. lg N link hops, what the model
 * assumed before, missed by 4-12x on 2 x 4 processes sharing 2 cores (a tree of waits over
 * shared cores, not one link in isolation) and ranked flat first where hier was 2-4x faster. */
static int measure_flat(wio_engine *e, wio_group *g, wio_coll_params *p)
{
    double *buf = calloc(2 * WIO_COLL_M_LARGE / sizeof(double), sizeof(double));
    double *out = buf + WIO_COLL_M_LARGE / sizeof(double), barrier = INFINITY;
    int rc = buf ? 0 : wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    double *figure[5] = {&barrier, &p->flat_bcast[0], &p->flat_bcast[1], &p->flat_reduce[0], &p->flat_reduce[1]};
    for (int m = 0; m < 5 && !rc; m++) {
        size_t count = m == 0 ? 0 : (m % 2 ? WIO_COLL_M_SMALL : WIO_COLL_M_LARGE) / sizeof(double);
        int calls = m && m % 2 == 0 ? 2 : 4;
        *figure[m] = INFINITY;
        for (int round = 0; round < 2 && !rc; round++) {
            rc = wio_coll_barrier(e, g);
            double t0 = wio_now();
            for (int c = 0; c < calls && !rc; c++)
                rc = m == 0 ? wio_coll_barrier(e, g)
                     : m < 3 ? wio_coll_bcast(e, g, buf, count, WAITIO_MPI_DOUBLE, 0)
                             : wio_coll_reduce(e, g, buf, out, count, WAITIO_MPI_DOUBLE, WAITIO_MPI_SUM, 0);
            if (!rc && m)
                rc = wio_coll_barrier(e, g);
            double per = (wio_now() - t0) / calls - (m ? barrier / calls : 0);
            *figure[m] = per < *figure[m] ? per : *figure[m];
        }
        if (*figure[m] < 1e-7)
            *figure[m] = 1e-7;
    }
    free(buf);
    p->have_flat = !rc;
    return rc;
}

/* Head 0 and head `peer`: the best round trip of a few of `bytes`, halved (head 0's figure). */
static int ping_pong(wio_engine *e, wio_group *h, int peer, size_t bytes, int reps, char *buf, double *one_way)
{
    double best = INFINITY;
    int rc = 0;
    for (int r = 0; r < reps && !rc; r++) {
        if (h->my_rank == 0) {
            double t0 = wio_now();
            if (!(rc = send_to(e, h, peer, buf, bytes, TAG_PING)))
                rc = recv_from(e, h, peer, buf, bytes, TAG_PONG);
            double dt = wio_now() - t0;
            best = dt < best ? dt : best;
        } else if (!(rc = recv_from(e, h, 0, buf, bytes, TAG_PING))) {
            rc = send_to(e, h, 0, buf, bytes, TAG_PONG);
        }
    }
    *one_way = best / 2;
    return rc;
}

/* The heads: head 0 measures its link to the others, gathers the PBs' figures, and keeps the
 * worst of each. Only heads call it. */
static int measure_heads(wio_engine *e, wio_group *h, wio_coll_params *p)
{
    char *buf = calloc(1, WIO_COLL_M_LARGE);
    int rc = buf ? 0 : wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    for (int peer = 1; peer < h->size && peer <= LINK_PEERS && !rc; peer++) {
        double s = 0, l = 0;
        if (h->my_rank != 0 && h->my_rank != peer)
            continue;
        if (!(rc = ping_pong(e, h, peer, WIO_COLL_M_SMALL, 5, buf, &s)))
            rc = ping_pong(e, h, peer, WIO_COLL_M_LARGE, 2, buf, &l);
        p->link_small = s > p->link_small ? s : p->link_small;
        p->link_large = l > p->link_large ? l : p->link_large;
    }
    free(buf);
    for (int peer = 1; peer < h->size && !rc; peer++) {
        double v[WIO_COLL_M_COUNT];
        if (h->my_rank == peer)
            rc = send_to(e, h, 0, p->pb, sizeof p->pb, TAG_PB);
        if (h->my_rank != 0)
            continue;
        if (!(rc = recv_from(e, h, peer, v, sizeof v, TAG_PB)))
            for (int m = 0; m < WIO_COLL_M_COUNT; m++)
                p->pb[m] = v[m] > p->pb[m] ? v[m] : p->pb[m];
    }
    return rc;
}

static wio_coll_shape instance_shape(const wio_engine *e)
{
    wio_coll_shape s = {.npb = e->npb, .ppb = e->nprocs[0], .one_host = e->one_host};
    for (int p = 1; p < e->npb; p++)
        if (e->nprocs[p] != s.ppb)
            s.ppb = 0;
    return s;
}

/* Every *.tbl of dir in name order; the first that parses and fits s. Says what it skips. */
static int table_from_dir(const char *dir, const wio_coll_shape *s, wio_coll_table *t, char *found, size_t cap)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    char best[256] = "";
    for (struct dirent *de; (de = readdir(d));) {
        size_t n = strlen(de->d_name);
        char path[4096], why[320];
        if (n < 5 || strcmp(de->d_name + n - 4, ".tbl") || n >= sizeof best || (*best && strcmp(de->d_name, best) >= 0))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        if (wio_coll_table_load(path, t, why, sizeof why))
            wio_warn("collective table ignored: %s", why);
        else if (wio_coll_table_matches(t, s))
            snprintf(best, sizeof best, "%s", de->d_name);
    }
    closedir(d);
    if (!*best)
        return -1;
    snprintf(found, cap, "%s/%s", dir, best);
    char why[320];
    return wio_coll_table_load(found, t, why, sizeof why);
}

/* Process 0: the table for the instance's shape, from WAITIO_COLL_TABLE (a file or a directory
 * of *.tbl; "none": the model only) or the installed directory. 0 when one fits. */
static int find_table(const wio_engine *e, wio_coll_table *t, char *found, size_t cap)
{
    wio_coll_shape s = instance_shape(e);
    const char *v = wio_env("WAITIO_COLL_TABLE");
    struct stat st;
    char why[320];
    if (v && !strcmp(v, "none"))
        return -1;
    if (!v || !*v)
        return table_from_dir(WIO_COLL_TABLE_DIR, &s, t, found, cap);
    if (stat(v, &st) == 0 && S_ISDIR(st.st_mode)) {
        if (table_from_dir(v, &s, t, found, cap) == 0)
            return 0;
        wio_info("no table in %s fits %d PBs x %d, %s host: the model decides", v, s.npb, s.ppb,
                 s.one_host ? "one" : "several");
        return -1;
    }
    if (wio_coll_table_load(v, t, why, sizeof why)) {
        wio_warn("WAITIO_COLL_TABLE: %s; the model decides", why);
        return -1;
    }
    if (!wio_coll_table_matches(t, &s)) {
        wio_warn("WAITIO_COLL_TABLE=%s was measured on %d PBs x %d, %s host, not %d x %d, %s: the model decides",
                 v, t->shape.npb, t->shape.ppb, t->shape.one_host ? "one" : "several", s.npb, s.ppb,
                 s.one_host ? "one" : "several");
        return -1;
    }
    snprintf(found, cap, "%s", v);
    return 0;
}

/* "allreduce: paired 0-1K, hier 1K-64K, flat 64K-" with every path allowed. */
static void log_ranking(const wio_coll_order *o)
{
    for (int op = 0; op < WIO_COLL_OP_COUNT; op++) {
        char line[512];
        size_t n = (size_t)snprintf(line, sizeof line, "paths for %s (%s):", op_names[op],
                                    o->from_table[op] ? "table" : "model");
        int classes = op == WIO_COLL_OP_BARRIER ? 1 : WIO_COLL_CLASSES;
        for (int k = 0; k < classes && n < sizeof line; k++) {
            int p = o->path[op][k][0];
            if (k > 0 && p == o->path[op][k - 1][0])
                continue;
            int end = k + 1;
            while (end < classes && o->path[op][end][0] == p)
                end++;
            if (end < classes)
                n += (size_t)snprintf(line + n, sizeof line - n, " %s %zu-%zu", path_names[p], class_bytes(k),
                                      class_bytes(end));
            else
                n += (size_t)snprintf(line + n, sizeof line - n, " %s %zu-", path_names[p], class_bytes(k));
        }
        wio_info("%s", line);
    }
}

static void log_params(const wio_coll_params *p)
{
    wio_info("model: %d PBs x %d, %s host%s; PB MPI (us, 8 B / 64 KiB): barrier %.1f, bcast %.1f / %.1f, "
             "reduce %.1f / %.1f, allreduce %.1f / %.1f; heads over WaitIO one way %.1f / %.1f us; "
             "flat over WaitIO: bcast %.1f / %.1f, reduce %.1f / %.1f",
             p->npb, p->ppb, p->one_host ? "one" : "several", p->oversubscribed ? ", oversubscribed" : "",
             p->pb[0] * 1e6, p->pb[1] * 1e6, p->pb[2] * 1e6, p->pb[3] * 1e6, p->pb[4] * 1e6, p->pb[5] * 1e6,
             p->pb[6] * 1e6, p->link_small * 1e6, p->link_large * 1e6, p->flat_bcast[0] * 1e6,
             p->flat_bcast[1] * 1e6, p->flat_reduce[0] * 1e6, p->flat_reduce[1] * 1e6);
}

static int agree(wio_engine *e, wio_group *g)
{
    agree_msg m;
    wio_coll_table t;
    wio_group *h = NULL;
    char found[4096];
    double t0 = wio_now();
    int head = e->cfg.local_rank == 0, zero = head && e->cfg.pbid == 0;
    memset(&m, 0, sizeof m);
    if (zero) {
        if (find_table(e, &t, found, sizeof found) == 0) {
            wio_coll_table_order(&t, &m.order);
            wio_info("collective paths from the table %s", found);
        }
        for (int op = 0; op < WIO_COLL_OP_COUNT; op++)
            m.need_model |= !m.order.from_table[op];
    }
    int rc = head ? heads_create(e, &h) : 0;
    if (!rc)
        rc = spread(e, h, &m, TAG_FIRST);
    if (!rc && m.need_model) {
        wio_coll_params p = {.npb = e->npb, .ppb = 0, .nprocs = (int)e->nprocs_total, .one_host = e->one_host,
                             .oversubscribed = e->oversubscribed};
        for (int pb = 0; pb < e->npb; pb++)
            p.ppb = e->nprocs[pb] > p.ppb ? e->nprocs[pb] : p.ppb;
        double t1 = wio_now();
        rc = measure_pb(p.pb);
        if (!rc)
            rc = measure_flat(e, g, &p);
        double t2 = wio_now();
        if (!rc && head)
            rc = measure_heads(e, h, &p);
        if (zero)
            wio_debug("tuning: first exchange %.2f ms, PB and flat measurements %.2f ms, heads %.2f ms", (t1 - t0) * 1e3,
                      (t2 - t1) * 1e3, (wio_now() - t2) * 1e3);
        if (!rc && zero) {
            wio_coll_model_order(&p, &m.order);
            log_params(&p);
        }
        if (!rc)
            rc = spread(e, h, &m, TAG_FINAL);
    }
    if (h)
        wio_group_destroy(e, h);
    if (rc)
        return rc;
    tuned.order = m.order;
    if (zero) {
        log_ranking(&m.order);
        wio_info("collective paths agreed in %.2f ms", (wio_now() - t0) * 1e3);
    }
    return 0;
}

/* ---- the choice ---- */

/* WAITIO_COLL_HIER_<OP>=MIN-MAX: the user's own crossovers (read once). */
static const char *const override_names[WIO_COLL_OP_COUNT] = {
    "WAITIO_COLL_HIER_BCAST", "WAITIO_COLL_HIER_REDUCE", "WAITIO_COLL_HIER_ALLREDUCE", "WAITIO_COLL_HIER_BARRIER"};

static int override_of(enum wio_coll_op op, size_t *min, size_t *max)
{
    static size_t lo[WIO_COLL_OP_COUNT], hi[WIO_COLL_OP_COUNT];
    static int state[WIO_COLL_OP_COUNT]; /* 0 unread, 1 none, 2 set */
    if (!state[op]) {
        const char *v = wio_setting_str(override_names[op], NULL); /* bad: said, NULL */
        char a[32] = "", b[32] = "";
        const char *dash = v ? strchr(v, '-') : NULL;
        state[op] = 1;
        lo[op] = 0;
        hi[op] = SIZE_MAX;
        if (dash && (size_t)(dash - v) < sizeof a && strlen(dash + 1) < sizeof b) {
            memcpy(a, v, (size_t)(dash - v));
            strcpy(b, dash + 1);
            if ((!*a || wio_parse_size(a, &lo[op]) == 0) && (!*b || wio_parse_size(b, &hi[op]) == 0))
                state[op] = 2;
        }
    }
    *min = lo[op];
    *max = hi[op];
    return state[op] == 2;
}

/* Before the ranking is agreed (a communicator of part of the instance used first): the
 * hierarchical path when open, which needs no figures and is the same on every process. */
static int unagreed_pick(unsigned allowed)
{
    return allowed & PATH_BIT(WIO_COLL_PATH_HIER_) ? WIO_COLL_PATH_HIER_ : WIO_COLL_PATH_FLAT_;
}

int wio_coll_tune_choose(wio_engine *e, wio_group *g, enum wio_coll_op op, size_t bytes, unsigned allowed)
{
    if ((unsigned)op >= WIO_COLL_OP_COUNT || !(allowed & ~PATH_BIT(WIO_COLL_PATH_FLAT_)))
        return WIO_COLL_PATH_FLAT_;
    if (tuned.e != e) {
        tuned.e = e;
        tuned.tried = tuned.agreed = 0;
        memset(tuned.said, 0, sizeof tuned.said);
    }
    if (!tuned.tried && wio_group_is_universe(e, g)) {
        tuned.tried = 1;
        tuned.agreed = agree(e, g) == 0;
        if (!tuned.agreed)
            wio_warn("collective paths: agreeing on a ranking failed (%s); hierarchical where open",
                     waitio_error_message());
    }
    size_t min, max;
    int over = override_of(op, &min, &max), path;
    if (over && (bytes < min || bytes >= max))
        path = WIO_COLL_PATH_FLAT_;
    else if (!tuned.agreed)
        path = unagreed_pick(allowed);
    else
        path = wio_coll_order_pick(&tuned.order, op, bytes, over ? allowed & ~PATH_BIT(WIO_COLL_PATH_FLAT_) : allowed);
    if (wio_log_on(WIO_LOG_DEBUG)) {
        unsigned char *said = &tuned.said[op][wio_coll_size_class(bytes)];
        if (!(*said & PATH_BIT(path))) {
            *said |= (unsigned char)PATH_BIT(path);
            wio_debug("choice: %s %zu B -> %s (%s)", op_names[op], bytes, path_names[path],
                      over ? "WAITIO_COLL_HIER_*" : !tuned.agreed ? "not agreed yet"
                                                  : tuned.order.from_table[op] ? "table" : "model");
        }
    }
    return path;
}
