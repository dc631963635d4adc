/*
 * boot.c — start-up rendezvous (SPEC §3). PB 0's rank 0 is the master: it listens on
 * WAITIO_MASTER_PORT (or publishes its address in the WAITIO_RENDEZVOUS file), collects one
 * REGISTER per process over authenticated connections, checks that the PBs agree with each
 * other, and sends every process the address table. Everyone else registers with the master.
 * On timeout the master tells the waiting processes which PBs never arrived.
 */
#define WIO_LOG_SUBSYS WIO_SUB_BOOT /* this file logs as "boot" (WAITIO_LOG=boot=LEVEL) */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "core/engine.h"
#include "core/settings.h"
#include "boot/boot.h"
#include "transport/addr.h"
#include "transport/file_dir.h"
#include "transport/tcp.h"
#include "waitio_adapter.h"

#define ENTRY_LEN WIO_BOOT_ENTRY_LEN
#define REGISTER_HDR WIO_BOOT_REGISTER_HDR
_Static_assert(WIO_REGISTER_MAX >= REGISTER_HDR + ENTRY_LEN + WIO_PROC_EXT_MAX,
               "frame.h's REGISTER bound must hold one entry with the largest extension");
_Static_assert(WIO_BOOT_ENTRY_EXT_AT + 4 == ENTRY_LEN, "the extension's length ends the fixed part");
_Static_assert(WIO_PROC_EXT_MAX == 2048u, "entry_why names the limit");
/* A process that finds no master (not listening yet, or the rendezvous file not written)
 * tries again after a pause that starts at RETRY_FIRST and doubles up to a cap, each drawn
 * within +-25 % so that thousands of processes started together do not retry in step: a master
 * that comes up a millisecond late costs about a millisecond, not a fixed interval. The cap
 * grows with the PB's size (RETRY_PER_PROC each, between RETRY_CAP_MIN and RETRY_MAX), so that
 * the attempts reaching a master that is not up yet stay near 1 / RETRY_PER_PROC per second
 * for each PB: with a fixed 0.1 s cap, 2 PBs of 16 MPI processes on a 16-core node still spent
 * 54-105 ms in waitio_init after the last MPI_Init (the pause a process was in when its master
 * came up). */
#define RETRY_FIRST 0.001
#define RETRY_CAP_MIN 0.002
#define RETRY_PER_PROC 0.0001
#define RETRY_MAX 0.1
/* Start-up progress notices (shown by default): nothing when start-up is quick, a first line
 * after REPORT_FIRST seconds of waiting, then one at every REPORT_EVERY seconds of waiting
 * (5, 10, 20, 30 s...), each saying what is still missing. */
#define REPORT_FIRST 5.0
#define REPORT_EVERY 10.0

typedef struct progress {
    double since; /* when start-up began waiting */
    double next;  /* when the next line is due */
} progress;

static void progress_init(progress *p, double since)
{
    p->since = since;
    p->next = since + REPORT_FIRST;
}

/* 1 when a line is due now; schedules the one after (on the next multiple of REPORT_EVERY). */
static int progress_due(progress *p)
{
    double now = wio_now();
    if (now < p->next)
        return 0;
    while (p->next <= now)
        p->next = p->since + REPORT_EVERY * ((int)((p->next - p->since) / REPORT_EVERY) + 1);
    return 1;
}

/* wio_engine_wait_until in slices: between them, report(arg, seconds waited) says as a notice
 * what is still missing, on p's schedule. */
static int wait_reporting(wio_engine *e, int (*ready)(void *), void *arg, double deadline,
                          progress *p, void (*report)(void *, double))
{
    for (;;) {
        int rc = wio_engine_wait_until(e, ready, arg, p->next < deadline ? p->next : deadline);
        if (rc != WAITIO_ERR_TIMEOUT || wio_now() >= deadline)
            return rc;
        if (progress_due(p))
            report(arg, wio_now() - p->since);
    }
}

static wio_stream_ctx *boot_ctx(const wio_engine *e) { return e->boot_streams; }

typedef struct backoff {
    double pause, max;
    unsigned seed;
} backoff;

static void backoff_init(backoff *b, double first, double max)
{
    b->pause = first;
    b->max = max;
    b->seed = (unsigned)getpid() * 2654435761u ^ (unsigned)(wio_now() * 1e6);
}

/* The next pause: the current one +-25 %, then doubled up to the cap. */
static double backoff_next(backoff *b)
{
    double jitter = 0.75 + 0.5 * ((double)rand_r(&b->seed) / ((double)RAND_MAX + 1.0));
    double p = b->pause * jitter;
    b->pause = b->pause * 2 > b->max ? b->max : b->pause * 2;
    return p;
}
static int boot_run(wio_engine *e, double deadline, double timeout);

/* ------------------------------------------------------------------------------------ */
/* table entries on the wire                                                             */

/* The fixed part's last four bytes: the extension's length, then two reserved zero bytes. */
#define ENTRY_EXT_LEN_AT WIO_BOOT_ENTRY_EXT_AT

/* Writes p's entry: ENTRY_LEN + p->ext_len bytes (ext_len was checked against
 * WIO_PROC_EXT_MAX before anything is encoded: self_ext_check, the parsers). */
static void entry_encode(const wio_proc *p, uint8_t *out)
{
    wio_boot_entry_encode(p, out);
}

size_t wio_boot_entry_encode(const wio_proc *p, uint8_t *out)
{
    memset(out, 0, ENTRY_LEN);
    out[0] = (p->transports & WIO_TP_TCP) ? p->addr.family : 0;
    out[1] = p->flags;
    wio_put_le16(out + 2, (p->transports & WIO_TP_TCP) ? p->addr.port : 0);
    memcpy(out + 4, p->addr.ip, 16);
    wio_put_le64(out + 20, p->host_id);
    out[28] = p->transports;
    wio_put_le16(out + 29, p->coll_sig);
    wio_put_le64(out + 32, p->shm_token);
    wio_put_le16(out + ENTRY_EXT_LEN_AT, p->ext_len);
    if (p->ext_len)
        memcpy(out + ENTRY_LEN, p->ext, p->ext_len);
    return ENTRY_LEN + p->ext_len;
}

static size_t entry_size(const wio_proc *p) { return ENTRY_LEN + p->ext_len; }

/* Decodes the entry at in, with avail bytes left in its payload: returns the entry's length
 * (fixed part and extension), or 0 when it is malformed or runs past avail. p->ext points into
 * in. Every length is checked against what remains before it is used, and every transport an
 * entry offers must come with its address. */
static size_t entry_decode(const uint8_t *in, size_t avail, wio_proc *p)
{
    memset(p, 0, sizeof *p);
    if (avail < ENTRY_LEN)
        return 0;
    uint16_t ext_len = wio_get_le16(in + ENTRY_EXT_LEN_AT);
    if (in[ENTRY_EXT_LEN_AT + 2] || in[ENTRY_EXT_LEN_AT + 3] || ext_len > WIO_PROC_EXT_MAX ||
        ext_len > avail - ENTRY_LEN)
        return 0;
    p->addr.family = in[0];
    p->flags = in[1] & WIO_PROC_FLAGS;
    p->addr.port = wio_get_le16(in + 2);
    memcpy(p->addr.ip, in + 4, 16);
    p->host_id = wio_get_le64(in + 20);
    p->transports = in[28] & (WIO_TP_TCP | WIO_TP_SHM | WIO_TP_FILE | WIO_TP_UCX);
    p->coll_sig = wio_get_le16(in + 29);
    p->shm_token = wio_get_le64(in + 32);
    p->ext_len = ext_len;
    p->ext = ext_len ? in + ENTRY_LEN : NULL;
    if (p->transports == 0)
        return 0;
    if ((p->transports & WIO_TP_TCP) && ((p->addr.family != 4 && p->addr.family != 6) || p->addr.port == 0))
        return 0;
    if (!(p->transports & WIO_TP_TCP) && p->addr.family != 0)
        return 0;
    if ((p->transports & WIO_TP_SHM) && p->shm_token == 0)
        return 0;
    if ((p->transports & WIO_TP_UCX) && ext_len == 0) /* ucx: its worker address */
        return 0;
    return ENTRY_LEN + ext_len;
}

/* Why entry_decode refused the entry at in (avail bytes left). */
static const char *entry_why(const uint8_t *in, size_t avail)
{
    if (avail < ENTRY_LEN)
        return "an address entry runs past the end of the message";
    size_t ext_len = wio_get_le16(in + ENTRY_EXT_LEN_AT);
    if (ext_len > WIO_PROC_EXT_MAX)
        return "an address entry's extension is longer than WIO_PROC_EXT_MAX (2048 bytes)";
    if (ext_len > avail - ENTRY_LEN)
        return "an address entry's extension runs past the end of the message";
    return "malformed address entry";
}

/* Decodes the entries that fill the len bytes at in exactly: `want` of them (0: as many as
 * there are, at most WIO_REGISTER_BLOCK). The structure is walked first, so that nothing is
 * allocated for entries that are not there; then *out gets one allocation holding the *n
 * entries followed by their extensions, which the entries point to (free(*out) frees both). */
static const char *entries_decode(const uint8_t *in, size_t len, size_t want, size_t *n, wio_proc **out)
{
    *out = NULL;
    size_t at = 0, count = 0, ext_total = 0;
    while (want ? count < want : at < len) {
        wio_proc p;
        size_t used = entry_decode(in + at, len - at, &p);
        if (!used)
            return entry_why(in + at, len - at);
        at += used;
        ext_total += p.ext_len;
        if (++count > WIO_REGISTER_BLOCK && !want)
            return "more entries than one registration block holds";
    }
    if (at != len)
        return "bytes left over after the address entries";
    wio_proc *procs = malloc(count * sizeof *procs + ext_total);
    if (!procs)
        return "out of memory";
    uint8_t *ext = (uint8_t *)(procs + count);
    at = 0;
    for (size_t i = 0; i < count; i++) {
        at += entry_decode(in + at, len - at, &procs[i]); /* valid: walked above */
        if (procs[i].ext_len) {
            memcpy(ext, procs[i].ext, procs[i].ext_len);
            procs[i].ext = ext;
            ext += procs[i].ext_len;
        }
    }
    *n = count;
    *out = procs;
    return NULL;
}

const char *wio_boot_parse_register(const uint8_t *p, size_t len, wio_boot_reg *out)
{
    memset(out, 0, sizeof *out);
    if (len < REGISTER_HDR + ENTRY_LEN || len > WIO_REGISTER_MAX)
        return "registration length is not a header plus at least one entry within the bound";
    int64_t npb = wio_get_le32(p), pb = wio_get_le32(p + 4), first = wio_get_le32(p + 8);
    int64_t size = wio_get_le32(p + 12);
    if (npb < 1 || npb > (1 << 16) || pb >= npb || size < 1 || size > (1 << 24) || first >= size)
        return "registration fields out of range";
    size_t k = 0;
    wio_proc *entries;
    const char *why = entries_decode(p + REGISTER_HDR, len - REGISTER_HDR, 0, &k, &entries);
    if (why)
        return why;
    if ((int64_t)k > size - first) {
        free(entries);
        return "registration fields out of range";
    }
    out->entries = entries;
    out->npb = (int)npb;
    out->pb = (int)pb;
    out->first = (int)first;
    out->size = (int)size;
    out->k = (int)k;
    return NULL;
}

void wio_boot_table_free(wio_boot_table *t)
{
    free(t->nprocs);
    free(t->pb_offset);
    free(t->procs);
    memset(t, 0, sizeof *t);
}

const char *wio_boot_parse_table(const uint8_t *t, size_t len, int npb, wio_boot_table *out)
{
    memset(out, 0, sizeof *out);
    if (npb < 1 || len < 4 + 4 * (size_t)npb || wio_get_le32(t) != (uint32_t)npb)
        return "table header does not match WAITIO_NPB";
    uint64_t total = 0;
    for (int p = 0; p < npb; p++) {
        uint32_t n = wio_get_le32(t + 4 + 4 * (size_t)p);
        if (n == 0 || n > (1u << 24))
            return "table gives a PB an impossible size";
        total += n;
    }
    size_t head = 4 + 4 * (size_t)npb;
    if (total >= WIO_ID_BOOT || len > WIO_TABLE_MAX || (len - head) / ENTRY_LEN < total)
        return "table length does not match its PB sizes";
    size_t n = 0;
    const char *why = entries_decode(t + head, len - head, (size_t)total, &n, &out->procs);
    if (why)
        return why;
    out->nprocs = calloc((size_t)npb, sizeof(int));
    out->pb_offset = calloc((size_t)npb, sizeof(uint32_t));
    if (!out->nprocs || !out->pb_offset) {
        wio_boot_table_free(out);
        return "out of memory for the address table";
    }
    uint32_t off = 0;
    for (int p = 0; p < npb; p++) {
        out->nprocs[p] = (int)wio_get_le32(t + 4 + 4 * (size_t)p);
        out->pb_offset[p] = off;
        off += (uint32_t)out->nprocs[p];
    }
    out->total = (uint32_t)total;
    return NULL;
}

/* ------------------------------------------------------------------------------------ */
/* the master's roster                                                                   */

int wio_boot_roster_init(wio_boot_roster *r, int npb, uint32_t max_procs)
{
    memset(r, 0, sizeof *r);
    r->npb = npb;
    r->max_procs = max_procs < WIO_PROCS_MAX ? max_procs : WIO_PROCS_MAX;
    r->size = malloc(sizeof(int) * (size_t)npb);
    r->count = calloc((size_t)npb, sizeof(int));
    r->seen = calloc((size_t)npb, sizeof(uint8_t *));
    r->blocks = calloc((size_t)npb, sizeof(wio_boot_block *));
    if (!r->size || !r->count || !r->seen || !r->blocks) {
        wio_boot_roster_free(r);
        return WAITIO_ERR_NOMEM;
    }
    for (int p = 0; p < npb; p++)
        r->size[p] = -1;
    return 0;
}

void wio_boot_roster_free(wio_boot_roster *r)
{
    for (int p = 0; r->seen && p < r->npb; p++)
        free(r->seen[p]);
    for (int p = 0; r->blocks && p < r->npb; p++)
        while (r->blocks[p]) {
            wio_boot_block *b = r->blocks[p];
            r->blocks[p] = b->next;
            free(b);
        }
    free(r->size);
    free(r->count);
    free(r->seen);
    free(r->blocks);
    memset(r, 0, sizeof *r);
}

static int roster_seen(const wio_boot_roster *r, int pb, int rank)
{
    return (r->seen[pb][rank >> 3] >> (rank & 7)) & 1;
}

/* A PB's first registration fixes its size: the claims of all PBs together must fit
 * max_procs, checked before anything is allocated for the PB (its bits: size / 8 bytes). */
static const char *roster_claim_check(const wio_boot_roster *r, int size)
{
    static char why[160];
    if (r->claimed + (uint64_t)size > r->max_procs) {
        snprintf(why, sizeof why, "PB size %d: the instance would have %llu processes or more, over "
                 "the limit of %u (WAITIO_MAX_PROCS)", size,
                 (unsigned long long)(r->claimed + (uint64_t)size), (unsigned)r->max_procs);
        return why;
    }
    return NULL;
}

static const char *roster_claim(wio_boot_roster *r, int pb, int size)
{
    const char *why = roster_claim_check(r, size);
    if (why)
        return why;
    size_t bytes = ((size_t)size + 7) / 8;
    r->seen[pb] = calloc(bytes, 1);
    if (!r->seen[pb])
        return "master out of memory";
    r->held += bytes;
    r->claimed += (uint64_t)size;
    r->size[pb] = size;
    return NULL;
}

/* The encoded table's length if the claims were `claimed` processes with ext_bytes of
 * extensions: the roster keeps it within WIO_TABLE_MAX, so that every table it makes can be
 * sent and parsed. */
static uint64_t roster_table_len(const wio_boot_roster *r, uint64_t claimed, uint64_t ext_bytes)
{
    return 4 + 4 * (uint64_t)r->npb + ENTRY_LEN * claimed + ext_bytes;
}

const char *wio_boot_roster_add(wio_boot_roster *r, int pb, int first, int size, int k,
                                const wio_proc *entries)
{
    if (pb < 0 || pb >= r->npb || size < 1 || first < 0 || k < 1 || k > size - first)
        return "registration fields out of range";
    if (r->size[pb] >= 0 && r->size[pb] != size)
        return "PB size differs from the size other processes of that PB registered";
    for (int i = 0; r->size[pb] >= 0 && i < k; i++)
        if (roster_seen(r, pb, first + i))
            return "this PB rank is already registered (two processes with the same WAITIO_PBID and rank?)";
    uint64_t ext_bytes = 0;
    for (int i = 0; i < k; i++) {
        if (entries[i].ext_len > WIO_PROC_EXT_MAX)
            return "an address entry's extension is longer than WIO_PROC_EXT_MAX";
        ext_bytes += entries[i].ext_len;
    }
    const char *why = r->size[pb] < 0 ? roster_claim_check(r, size) : NULL; /* the limit first */
    if (why)
        return why;
    uint64_t claimed = r->claimed + (r->size[pb] < 0 ? (uint64_t)size : 0);
    if (roster_table_len(r, claimed, r->ext_bytes + ext_bytes) > WIO_TABLE_MAX)
        return "the address table would exceed its bound of 256 MiB (extensions too long for so many processes)";
    why = r->size[pb] < 0 ? roster_claim(r, pb, size) : NULL;
    if (why)
        return why;
    size_t bytes = sizeof(wio_boot_block) + sizeof(wio_proc) * (size_t)k + (size_t)ext_bytes;
    wio_boot_block *b = malloc(bytes);
    if (!b)
        return "master out of memory";
    b->first = first;
    b->k = k;
    memcpy(b->entries, entries, sizeof(wio_proc) * (size_t)k);
    uint8_t *ext = (uint8_t *)(b->entries + k); /* the extensions, copied: entries' are the caller's */
    for (int i = 0; i < k; i++)
        if (b->entries[i].ext_len) {
            memcpy(ext, b->entries[i].ext, b->entries[i].ext_len);
            b->entries[i].ext = ext;
            ext += b->entries[i].ext_len;
        }
    b->next = r->blocks[pb];
    r->blocks[pb] = b;
    r->held += bytes;
    r->ext_bytes += ext_bytes;
    for (int i = 0; i < k; i++)
        r->seen[pb][(first + i) >> 3] |= (uint8_t)(1u << ((first + i) & 7));
    r->count[pb] += k;
    if (r->count[pb] == size)
        r->complete++;
    return NULL;
}

static int cmp_block_first(const void *a, const void *b)
{
    const wio_boot_block *x = *(const wio_boot_block *const *)a, *y = *(const wio_boot_block *const *)b;
    return (x->first > y->first) - (x->first < y->first);
}

/* Writes PB pb's entries in rank order at q; returns the bytes written, or 0 out of memory.
 * Every rank arrived exactly once (the bits): the blocks, sorted by first rank, tile the PB. */
static size_t roster_encode_pb(const wio_boot_roster *r, int pb, uint8_t *q)
{
    size_t n = 0, at = 0;
    for (const wio_boot_block *b = r->blocks[pb]; b; b = b->next)
        n++;
    const wio_boot_block **sorted = malloc(n * sizeof *sorted);
    if (!sorted)
        return 0;
    n = 0;
    for (const wio_boot_block *b = r->blocks[pb]; b; b = b->next)
        sorted[n++] = b;
    qsort(sorted, n, sizeof *sorted, cmp_block_first);
    for (size_t j = 0; j < n; j++)
        for (int i = 0; i < sorted[j]->k; i++) {
            entry_encode(&sorted[j]->entries[i], q + at);
            at += entry_size(&sorted[j]->entries[i]);
        }
    free(sorted);
    return at;
}

uint8_t *wio_boot_roster_table(const wio_boot_roster *r, size_t *len, const char **why)
{
    if (r->complete != r->npb) {
        *why = "not every PB registered";
        return NULL;
    }
    /* within WIO_TABLE_MAX: checked as each block arrived (roster_table_len) */
    *len = (size_t)roster_table_len(r, r->claimed, r->ext_bytes);
    uint8_t *t = malloc(*len);
    if (!t) {
        *why = "out of memory for the address table";
        return NULL;
    }
    wio_put_le32(t, (uint32_t)r->npb);
    uint8_t *q = t + 4 + 4 * (size_t)r->npb;
    for (int p = 0; p < r->npb; p++) {
        wio_put_le32(t + 4 + 4 * (size_t)p, (uint32_t)r->size[p]);
        size_t n = roster_encode_pb(r, p, q);
        if (!n) {
            free(t);
            *why = "out of memory for the address table";
            return NULL;
        }
        q += n;
    }
    return t;
}

/* ------------------------------------------------------------------------------------ */
/* who am I                                                                              */

static uint64_t host_identity(void)
{
    char id[128] = "";
    int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, id, sizeof id - 1);
        id[n > 0 ? n : 0] = '\0';
        close(fd);
    }
    size_t used = strlen(id);
    gethostname(id + used, sizeof id - used - 1);
    id[sizeof id - 1] = '\0';
    uint8_t md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (!EVP_Digest(id, strlen(id), md, &mdlen, EVP_sha256(), NULL) || mdlen < 8)
        return 0;
    return wio_get_le64(md);
}

extern char **environ;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A 16-bit fingerprint of the WAITIO_COLL_* variables (algorithms and paths of collectives),
 * taken from the environment in sorted order: every process of a collective must choose alike,
 * and PBs launched by separate job scripts may not have been given the same ones (engine.c
 * warns). 0 when none is set. */
static uint16_t coll_settings_sig(void)
{
    static const char prefix[] = "WAITIO_COLL_";
    const char *vars[64];
    size_t n = 0;
    for (char **v = environ; *v && n < sizeof vars / sizeof vars[0]; v++) {
        const char *eq = strchr(*v, '=');
        if (!strncmp(*v, prefix, sizeof prefix - 1) && eq && eq[1]) /* set and not empty */
            vars[n++] = *v;
    }
    if (n == 0)
        return 0;
    qsort(vars, n, sizeof vars[0], cmp_str);
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    int ok = md && EVP_DigestInit_ex(md, EVP_sha256(), NULL);
    for (size_t i = 0; ok && i < n; i++)
        ok = EVP_DigestUpdate(md, vars[i], strlen(vars[i]) + 1);
    uint8_t out[EVP_MAX_MD_SIZE];
    unsigned len = 0;
    ok = ok && EVP_DigestFinal_ex(md, out, &len) && len >= 2;
    EVP_MD_CTX_free(md);
    if (!ok)
        return 0;
    uint16_t sig = wio_get_le16(out);
    return sig ? sig : 1;
}

/* The address peers should use for us: WAITIO_IFACE, else the one that routes to the master. */
static int advertised_address(const wio_engine *e, const wio_addr *master, wio_addr *out)
{
    if (e->cfg.iface[0])
        return wio_addr_from_iface(e->cfg.iface, "WAITIO_IFACE", out);
    if (!master) {
        wio_addr_first_interface(out);
        return 0;
    }
    return wio_addr_route_to(master, out);
}

/* ------------------------------------------------------------------------------------ */
/* the rendezvous file                                                                   */

/* Publishes "host port" at path: written to a temporary file with an unpredictable name in the
 * same directory (mkstemp: created exclusively, so a symlink planted there is never followed),
 * then renamed over path, so a reader sees nothing or the whole line. */
static int rdvfile_write(const char *path, const wio_addr *a)
{
    char tmp[4200], line[128], ip[64];
    wio_addr_format(a, ip, sizeof ip);
    char *colon = strrchr(ip, ':');
    if (colon)
        *colon = '\0';
    const char *host = ip;
    if (host[0] == '[') { /* IPv6 literal "[addr]" */
        host++;
        ip[strlen(ip) - 1] = '\0';
    }
    snprintf(line, sizeof line, "%s %u\n", host, (unsigned)a->port);
    if (snprintf(tmp, sizeof tmp, "%s.XXXXXX", path) >= (int)sizeof tmp)
        return wio_fail(WAITIO_ERR_ENV, "rendezvous file path too long: %s", path);
    int fd = mkstemp(tmp);
    if (fd < 0)
        return wio_fail(WAITIO_ERR_ENV, "cannot create a temporary file beside rendezvous file %s: %s",
                        path, strerror(errno));
    ssize_t n = write(fd, line, strlen(line));
    int ok = n == (ssize_t)strlen(line) && fsync(fd) == 0;
    int err = errno;
    close(fd);
    if (!ok || rename(tmp, path) != 0) {
        if (ok)
            err = errno;
        unlink(tmp);
        return wio_fail(WAITIO_ERR_ENV, "cannot publish rendezvous file %s: %s", path, strerror(err));
    }
    return 0;
}

/* Returns 0 with *out set, 1 if the file does not exist (yet), or an error. */
static int rdvfile_read(const char *path, wio_addr *out)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return 1;
    char host[256];
    unsigned port = 0;
    int n = fscanf(f, "%255s %u", host, &port);
    fclose(f);
    if (n != 2 || port == 0 || port > 65535)
        return 1; /* being replaced, or garbage: keep waiting, the deadline bounds it */
    int rc = wio_addr_resolve(host, (uint16_t)port, out);
    if (!rc)
        return 0;
    char why[256]; /* copied: wio_fail writes the buffer waitio_error_message() reads */
    snprintf(why, sizeof why, "%s", waitio_error_message());
    return wio_fail(rc, "WAITIO_RENDEZVOUS=%s: %s", path, why);
}

/* ------------------------------------------------------------------------------------ */
/* master                                                                                */

/* The processes of one host, once the table is out: they read it from one segment (ours, or
 * the one its leader made), else each gets the TABLE. */
typedef struct host_group {
    uint64_t host_id;
    struct master_conn **members; /* into the master's sorted array; the leader among them */
    size_t nmembers;
    struct master_conn *leader;   /* another host's process that makes the segment, or NULL */
    int open;                     /* members (the leader aside) whose connection is open */
    int ready;                    /* the segment exists: ref holds TABLE_REF's payload */
    int full;                     /* no segment: members get the TABLE itself */
    int released;                 /* the segment was removed (ours) or RELEASE sent (leader's) */
    char own[WIO_TABLE_SHM_NAME_MAX + 1]; /* our segment, to remove */
    uint8_t ref[WIO_TABLE_REF_MAX];
    size_t ref_len;
    uint8_t in_ref[WIO_TABLE_REF_MAX]; /* the leader's TABLE_REF as it arrives */
} host_group;

/* What the master holds per connection is small and fixed: the payloads it sends are the one
 * table, the one TABLE_REF of the connection's host, or an ERROR text allocated on refusal. */
typedef struct master_conn {
    int pb, rank;             /* -1 until registered (rank: the first one it registered) */
    int refused;              /* an ERROR was sent: later blocks are ignored */
    uint8_t *reg;             /* REGISTER payload being received (one block at a time) */
    uint64_t host_id;         /* of the first entry it registered: where its process runs */
    host_group *hg;           /* set when the table goes out */
    int served;               /* TABLE or TABLE_REF queued for it */
    wio_send_item item;
    char *text;               /* an ERROR's text, while it is sent */
    int sending;
    struct {                  /* one frame waiting for the one in flight */
        int type;             /* 0: none */
        uint16_t flags;
        const uint8_t *payload;
        size_t len;
    } queued;
    struct master *m;
    wio_stream *conn;
    struct master_conn *next;
} master_conn;

typedef struct master {
    wio_engine *e;
    wio_boot_roster r;        /* who registered */
    master_conn *conns;
    int in_flight;
    int nqueued;              /* connections with a frame queued behind the one in flight */
    int open;                 /* registered connections still open after the table went out */
    double timeout;
    uint8_t *table;
    size_t table_len;
    uint8_t digest[WIO_BOOT_DIGEST_LEN];
    int shm;                  /* WAITIO_BOOT_TABLE_SHM */
    master_conn **sorted;     /* registered connections by host id (the groups' members) */
    host_group *groups;
    size_t ngroups;
} master;

static void master_item_done(wio_send_item *it, int err)
{
    (void)err;
    master_conn *mc = it->owner;
    mc->sending = 0;
    mc->m->in_flight--;
}

static void master_send(master *m, master_conn *mc, uint8_t type, uint16_t flags,
                        const uint8_t *payload, size_t len)
{
    if (!mc->conn)
        return;
    if (mc->sending) { /* sent once the one in flight is out (master_send_queued) */
        if (!mc->queued.type)
            m->nqueued++;
        mc->queued.type = type;
        mc->queued.flags = flags;
        mc->queued.payload = payload;
        mc->queued.len = len;
        return;
    }
    wio_send_item *it = &mc->item;
    memset(&it->h, 0, sizeof it->h);
    it->h.type = type;
    it->h.flags = flags;
    it->payload = payload;
    it->total = len;
    it->chunk = 0;
    it->owner = mc;
    it->done = master_item_done;
    mc->sending = 1;
    m->in_flight++;
    wio_stream_send(mc->conn, it);
}

static void master_reply_error(master *m, master_conn *mc, uint16_t flags, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void master_reply_error(master *m, master_conn *mc, uint16_t flags, const char *fmt, ...)
{
    char text[WIO_ERROR_TEXT_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    wio_warn("rendezvous: refusing a registration: %s", text);
    if (mc->text || mc->sending) /* one ERROR per connection */
        return;
    if (!(mc->text = strdup(text)))
        return;
    master_send(m, mc, WIO_FT_ERROR, flags, (const uint8_t *)mc->text, strlen(mc->text));
}

/* Frames queued behind one in flight go out once it is (checked as the master waits). */
static void master_send_queued(master *m)
{
    if (!m->nqueued)
        return;
    for (master_conn *mc = m->conns; mc; mc = mc->next)
        if (mc->queued.type && (!mc->sending || !mc->conn)) {
            int type = mc->queued.type;
            mc->queued.type = 0;
            m->nqueued--;
            master_send(m, mc, (uint8_t)type, mc->queued.flags, mc->queued.payload, mc->queued.len);
        }
}

static int master_on_frame_begin(void *ctx, void *user, const wio_frame_hdr *h, uint8_t **dest)
{
    (void)ctx;
    master_conn *mc = user;
    if (h->type == WIO_FT_TABLE_REF) { /* a leader's segment: only from a leader, only once */
        host_group *g = mc->hg;
        if (!g || g->leader != mc || g->ready || g->full || h->len > sizeof g->in_ref)
            return -1;
        *dest = g->in_ref;
        return 0;
    }
    if (h->type == WIO_FT_TABLE_FETCH) /* no payload (frame.h's bound) */
        return mc->served ? 0 : -1;
    if (h->type != WIO_FT_REGISTER || mc->reg || mc->hg || h->len < REGISTER_HDR + ENTRY_LEN)
        return -1; /* the entries' lengths are checked as the payload is parsed */
    if (mc->refused)
        return 0; /* discarded: the process already has its ERROR */
    mc->reg = malloc(h->len); /* <= WIO_REGISTER_MAX, after authentication */
    if (!mc->reg)
        return -1;
    *dest = mc->reg;
    return 0;
}

/* Records k consecutive ranks of one PB; returns NULL or why they were refused. */
static const char *master_record_block(master *m, int pb, int first, int size, int k,
                                       const wio_proc *entries)
{
    return wio_boot_roster_add(&m->r, pb, first, size, k, entries);
}

static void master_on_ref(master *m, master_conn *mc, size_t len);
static void master_on_fetch(master *m, master_conn *mc);
static void master_conn_gone(master *m, master_conn *mc);

static int master_on_frame_end(void *ctx, void *user, const wio_frame_hdr *h)
{
    master *m = ctx;
    master_conn *mc = user;
    if (h->type == WIO_FT_TABLE_REF) {
        master_on_ref(m, mc, h->len);
        return 0;
    }
    if (h->type == WIO_FT_TABLE_FETCH) {
        master_on_fetch(m, mc);
        return 0;
    }
    if (!mc->reg)
        return 0; /* a block after a refusal */
    wio_boot_reg reg;
    const char *why = wio_boot_parse_register(mc->reg, h->len, &reg);
    free(mc->reg);
    mc->reg = NULL;
    mc->refused = 1; /* unless recorded below */
    if (why) {
        master_reply_error(m, mc, 0, "malformed registration: %s", why);
        return 0;
    }
    if (reg.npb != m->e->npb)
        master_reply_error(m, mc, 0, "WAITIO_NPB=%d but the master has WAITIO_NPB=%d", reg.npb, m->e->npb);
    else if (mc->pb >= 0 && reg.pb != mc->pb) /* a connection registers blocks of one PB */
        master_reply_error(m, mc, 0, "PB %d rank %d: registered on the connection of PB %d",
                           reg.pb, reg.first, mc->pb);
    else if ((why = master_record_block(m, reg.pb, reg.first, reg.size, reg.k, reg.entries)))
        master_reply_error(m, mc, 0, "PB %d rank %d: %s", reg.pb, reg.first, why);
    else {
        mc->refused = 0;
        if (mc->pb < 0) {
            mc->rank = reg.first;
            mc->host_id = reg.entries[0].host_id;
        }
        mc->pb = reg.pb;
        wio_debug("rendezvous: PB %d ranks %d..%d of %d registered", reg.pb, reg.first,
                  reg.first + reg.k - 1, reg.size);
    }
    free(reg.entries);
    return 0;
}

/* Runs only once the connection proved the instance key: what a registration costs (its
 * master_conn, its REGISTER buffer) is never spent on a stranger. */
static int master_on_incoming(void *ctx, void *conn, uint32_t peer_id, unsigned flags, void **user)
{
    master *m = ctx;
    (void)flags;
    if (peer_id != WIO_ID_BOOT)
        return WIO_TP_REFUSE;
    master_conn *mc = calloc(1, sizeof *mc);
    if (!mc)
        return WIO_TP_REFUSE;
    mc->pb = mc->rank = -1;
    mc->m = m;
    mc->conn = conn;
    mc->next = m->conns;
    m->conns = mc;
    *user = mc;
    return WIO_TP_ACCEPT;
}

/* Connections to the master that began a handshake and did not authenticate (a PB with another
 * key, or strangers): the transport counts them, since nothing of theirs reaches the master. */
static unsigned long master_unauthenticated(const master *m)
{
    return wio_stream_ctx_auth_failures(boot_ctx(m->e));
}

static void master_on_closed(void *ctx, void *user, int err, const char *why, int rejected)
{
    master *m = ctx;
    (void)err; (void)rejected;
    master_conn *mc = user;
    if (!mc)
        return;
    mc->conn = NULL;
    if (mc->hg) { /* the table is out: its process has it, or is gone */
        master_conn_gone(m, mc);
        return;
    }
    if (mc->pb >= 0) {
        wio_debug("rendezvous: PB %d rank %d disconnected: %s", mc->pb, mc->rank, why);
        return;
    }
    /* registered nothing: forget it, so that connections that come and go cost nothing */
    for (master_conn **pp = &m->conns; *pp; pp = &(*pp)->next)
        if (*pp == mc) {
            *pp = mc->next;
            break;
        }
    free(mc->reg);
    free(mc->text);
    free(mc);
}

static const wio_tp_handler master_handler = {
    .incoming = master_on_incoming,
    .frame_begin = master_on_frame_begin,
    .frame_end = master_on_frame_end,
    .closed = master_on_closed,
};

static int master_build_table(master *m)
{
    const char *why = NULL;
    m->table = wio_boot_roster_table(&m->r, &m->table_len, &why);
    return m->table ? 0 : wio_fail(WAITIO_ERR_NOMEM, "rendezvous master: %s", why);
}

/* "PB 1 (none of its processes registered), PB 2 (3 of 4 processes registered)" */
static void master_describe_missing(const master *m, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int p = 0; p < m->e->npb && used < cap; p++) {
        int n;
        if (m->r.size[p] < 0)
            n = snprintf(buf + used, cap - used, "%sPB %d (none of its processes registered)",
                         used ? ", " : "", p);
        else if (m->r.count[p] < m->r.size[p])
            n = snprintf(buf + used, cap - used, "%sPB %d (%d of %d processes registered)",
                         used ? ", " : "", p, m->r.count[p], m->r.size[p]);
        else
            continue;
        used += n > 0 ? (size_t)n : 0;
    }
}

static void master_report(void *arg, double waited)
{
    const master *m = arg;
    char missing[1024];
    master_describe_missing(m, missing, sizeof missing);
    wio_notice("rendezvous master: waiting for %s; %.0f s of %g s%s", missing, waited, m->timeout,
             master_unauthenticated(m) ? " (some connections failed authentication)" : "");
}

static int master_done(void *arg)
{
    const master *m = arg;
    return m->r.complete == m->e->npb;
}

static int master_flushed(void *arg) { return ((const master *)arg)->in_flight == 0; }

static void master_free(master *m)
{
    while (m->conns) {
        master_conn *mc = m->conns;
        m->conns = mc->next;
        if (mc->conn)
            wio_stream_close(mc->conn, WAITIO_ERR_CANCELLED);
        free(mc->reg);
        free(mc->text);
        free(mc);
    }
    for (size_t i = 0; i < m->ngroups; i++) /* ours, if a process never took it */
        wio_boot_shm_unlink(m->groups[i].own);
    free(m->groups);
    free(m->sorted);
    wio_boot_roster_free(&m->r);
    free(m->table);
}

/* Our registration: ranks first..first+k-1 of our PB, k encoded entries in len bytes. */
typedef struct boot_block {
    int first, k;
    const uint8_t *entries;
    size_t len;
} boot_block;

/* The master's own block (PB 0, its ranks b->first..): NULL or why it cannot be recorded. */
static const char *master_record_own(master *m, const boot_block *b)
{
    wio_proc *entries;
    size_t k = 0;
    const char *why = entries_decode(b->entries, b->len, (size_t)b->k, &k, &entries);
    if (why)
        return why;
    why = master_record_block(m, 0, b->first, m->e->cfg.local_size, b->k, entries);
    free(entries);
    return why;
}

/* Where the REGISTER block that begins at byte `at` of b's entries ends: after at most
 * WIO_REGISTER_BLOCK entries and, with its header, at most WIO_REGISTER_MAX bytes (always at
 * least one entry: one with the largest extension fits). *k gets its entries. */
static size_t block_end(const boot_block *b, size_t at, size_t *k)
{
    size_t end = at;
    *k = 0;
    while (end < b->len && *k < WIO_REGISTER_BLOCK) {
        size_t n = ENTRY_LEN + wio_get_le16(b->entries + end + ENTRY_EXT_LEN_AT);
        if (*k > 0 && REGISTER_HDR + (end - at) + n > WIO_REGISTER_MAX)
            break;
        end += n;
        (*k)++;
    }
    return end;
}

int wio_boot_encode_blocks(int npb, int pbid, int pb_size, int first_rank, const uint8_t *entries,
                           size_t entries_len, int nentries, uint8_t **out, size_t *out_len, size_t **lens,
                           size_t *nblocks)
{
    const boot_block bb = {first_rank, nentries, entries, entries_len}, *b = &bb;
    size_t n = 0, k;
    for (size_t at = 0; at < b->len; n++)
        at = block_end(b, at, &k);
    *out_len = n * REGISTER_HDR + b->len;
    *out = malloc(*out_len);
    *lens = malloc((n ? n : 1) * sizeof **lens);
    if (!*out || !*lens) {
        free(*out);
        free(*lens);
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    }
    uint8_t *q = *out;
    size_t first = 0, at = 0;
    for (size_t i = 0; i < n; i++) {
        size_t end = block_end(b, at, &k);
        wio_put_le32(q, (uint32_t)npb);
        wio_put_le32(q + 4, (uint32_t)pbid);
        wio_put_le32(q + 8, (uint32_t)(b->first + (int)first));
        wio_put_le32(q + 12, (uint32_t)pb_size);
        memcpy(q + REGISTER_HDR, b->entries + at, end - at);
        (*lens)[i] = REGISTER_HDR + end - at;
        q += (*lens)[i];
        first += k;
        at = end;
    }
    *nblocks = n;
    return 0;
}

/* Our block b as REGISTER payloads (wio_boot_encode_blocks). */
static int encode_blocks(const wio_engine *e, const boot_block *b, uint8_t **out, size_t *out_len,
                         size_t **lens, size_t *nblocks)
{
    return wio_boot_encode_blocks(e->npb, e->cfg.pbid, e->cfg.local_size, b->first, b->entries, b->len,
                                  b->k, out, out_len, lens, nblocks);
}

/* The master's port listens where the others are told to connect: the rendezvous file's
 * address (ours), else WAITIO_MASTER_HOST as resolved here; every interface only with
 * WAITIO_BIND_ALL. */
static wio_addr master_bind_address(const wio_engine *e, const wio_addr *master_host, int port)
{
    wio_addr a = e->cfg.rendezvous[0] ? e->self.addr : *master_host;
    a.port = (uint16_t)port;
    if (e->cfg.bind_all)
        memset(a.ip, 0, sizeof a.ip);
    return a;
}

/* ------------------------------------------------------------------------------------ */
/* the table to every process: one segment per host (docs/protocol.md, "Start-up")        */

/* Sends mc its table the way its host gets it: the TABLE with PUBLISH to a leader, TABLE_REF
 * once the host's segment exists, the TABLE itself when there is none; nothing yet while the
 * leader makes it. */
static void master_serve(master *m, master_conn *mc)
{
    host_group *g = mc->hg;
    if (mc->served || !mc->conn)
        return;
    if (g->leader == mc)
        master_send(m, mc, WIO_FT_TABLE, WIO_FF_PUBLISH, m->table, m->table_len);
    else if (g->ready)
        master_send(m, mc, WIO_FT_TABLE_REF, 0, g->ref, g->ref_len);
    else if (g->full)
        master_send(m, mc, WIO_FT_TABLE, 0, m->table, m->table_len);
    else
        return;
    mc->served = 1;
}

static void group_serve(master *m, host_group *g)
{
    for (size_t i = 0; i < g->nmembers; i++)
        master_serve(m, g->members[i]);
}

/* Every member that was open took the table or left: the segment goes. */
static void group_release_if_done(master *m, host_group *g)
{
    if (g->released || g->open > 0 || !(g->ready || g->full))
        return;
    g->released = 1;
    if (g->own[0]) {
        wio_boot_shm_unlink(g->own);
        g->own[0] = '\0';
    } else if (g->leader && g->leader->conn) {
        master_send(m, g->leader, WIO_FT_TABLE_RELEASE, 0, NULL, 0);
    }
}

/* No segment for g after all (the leader could not make one, sent a bad reference or left):
 * its members get the TABLE. */
static void group_fall_back(master *m, host_group *g, const char *why)
{
    wio_debug("rendezvous: host %016llx: %s; its %zu processes get the table each",
              (unsigned long long)g->host_id, why, g->nmembers);
    g->full = 1;
    group_serve(m, g);
    group_release_if_done(m, g);
}

/* A leader's TABLE_REF: its segment must hold our table (length, digest) under one of our names. */
static void master_on_ref(master *m, master_conn *mc, size_t len)
{
    host_group *g = mc->hg; /* checked at frame_begin: mc leads g, which waits for it */
    wio_boot_ref r;
    const char *why = wio_boot_parse_ref(g->in_ref, len, &r);
    if (!why && (r.table_len != m->table_len || memcmp(r.digest, m->digest, sizeof r.digest) != 0))
        why = "the leader's segment is not of this table";
    if (why) {
        wio_warn("rendezvous: PB %d rank %d: %s", mc->pb, mc->rank, why);
        group_fall_back(m, g, why);
        return;
    }
    g->ref_len = wio_boot_ref_encode(&r, g->ref);
    g->ready = 1;
    group_serve(m, g);
    group_release_if_done(m, g);
}

/* TABLE_FETCH: a member could not open its host's segment, or a leader could not make it. */
static void master_on_fetch(master *m, master_conn *mc)
{
    host_group *g = mc->hg;
    if (g && g->leader == mc) {
        if (!g->ready && !g->full)
            group_fall_back(m, g, "its leader could not make the segment");
        return;
    }
    master_send(m, mc, WIO_FT_TABLE, 0, m->table, m->table_len);
}

static void master_conn_gone(master *m, master_conn *mc)
{
    host_group *g = mc->hg;
    m->open--;
    if (g->leader == mc) {
        if (!g->ready && !g->full)
            group_fall_back(m, g, "its leader left before making the segment");
        return;
    }
    g->open--;
    group_release_if_done(m, g);
}

static int cmp_conn_host(const void *a, const void *b)
{
    uint64_t x = (*(master_conn *const *)a)->host_id, y = (*(master_conn *const *)b)->host_id;
    return (x > y) - (x < y);
}

/* Groups the registered connections by host and starts each group's way to the table: our
 * host reads our segment; another host of two or more processes gets it through its first
 * process (the leader); a lone process, or all without WAITIO_BOOT_TABLE_SHM, the TABLE. The
 * table itself is one buffer that every connection's send refers to. */
static int master_distribute(master *m)
{
    size_t n = 0;
    for (master_conn *mc = m->conns; mc; mc = mc->next)
        n += mc->pb >= 0 && mc->conn;
    if (wio_boot_table_digest(m->table, m->table_len, m->digest) != 0)
        return wio_fail(WAITIO_ERR_SYS, "SHA-256 of the address table failed");
    m->sorted = malloc((n ? n : 1) * sizeof *m->sorted);
    m->groups = calloc(n ? n : 1, sizeof *m->groups);
    if (!m->sorted || !m->groups)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory for the table's distribution");
    n = 0;
    for (master_conn *mc = m->conns; mc; mc = mc->next)
        if (mc->pb >= 0 && mc->conn)
            m->sorted[n++] = mc;
    qsort(m->sorted, n, sizeof *m->sorted, cmp_conn_host);
    for (size_t i = 0; i < n;) {
        host_group *g = &m->groups[m->ngroups++];
        g->host_id = m->sorted[i]->host_id;
        g->members = &m->sorted[i];
        while (i < n && m->sorted[i]->host_id == g->host_id)
            m->sorted[i++]->hg = g;
        g->nmembers = (size_t)(&m->sorted[i] - g->members);
        int ours = g->host_id == m->e->self.host_id;
        wio_boot_ref r;
        if (!m->shm || g->nmembers < 2) {
            g->full = 1;
        } else if (!ours) {
            g->leader = g->members[0];
        } else if (wio_boot_shm_publish(m->table, m->table_len, m->digest, &r) == 0) {
            snprintf(g->own, sizeof g->own, "%s", r.name);
            g->ref_len = wio_boot_ref_encode(&r, g->ref);
            g->ready = 1;
        } else {
            wio_debug("rendezvous: %s; the processes of this host get the table each", waitio_error_message());
            g->full = 1;
        }
        g->open = (int)g->nmembers - (g->leader != NULL);
    }
    m->open = (int)n;
    for (size_t i = 0; i < n; i++)
        master_serve(m, m->sorted[i]);
    wio_debug("rendezvous: table of %zu bytes to %zu processes on %zu hosts", m->table_len, n, m->ngroups);
    return 0;
}

/* Every process took the table (its connection closed) and everything queued went out. */
static int master_delivered(void *arg)
{
    master *m = arg;
    master_send_queued(m);
    return m->open == 0 && m->in_flight == 0;
}

static int master_run(wio_engine *e, double deadline, double timeout, const boot_block *b,
                      const wio_addr *master_host, uint8_t **table, size_t *table_len)
{
    master m = {.e = e, .timeout = timeout, .shm = wio_setting_num("WAITIO_BOOT_TABLE_SHM", 1) != 0};
    if (wio_boot_roster_init(&m.r, e->npb, (uint32_t)e->cfg.max_procs) != 0)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory in the rendezvous master");
    const char *port_env = wio_env("WAITIO_MASTER_PORT");
    int port = e->cfg.rendezvous[0] && !(port_env && *port_env) ? 0 : e->cfg.master_port;
    wio_listener *l = NULL;
    uint16_t bound_port = 0;
    wio_addr at = master_bind_address(e, master_host, port);
    int rc = wio_tcp_listen(boot_ctx(e), &at, port, &master_handler, &m, 1, &l, &bound_port);
    if (rc) {
        master_free(&m);
        return rc;
    }
    if (e->cfg.rendezvous[0]) {
        wio_addr pub = e->self.addr;
        pub.port = bound_port;
        if ((rc = rdvfile_write(e->cfg.rendezvous, &pub))) {
            wio_listener_close(l);
            master_free(&m);
            return rc;
        }
    }
    wio_info("rendezvous master listening on port %u", (unsigned)bound_port);
    const char *why = master_record_own(&m, b);
    if (why)
        rc = wio_fail(WAITIO_ERR_BOOT, "master cannot register itself: %s", why);
    progress prog;
    progress_init(&prog, deadline - timeout);
    if (!rc)
        rc = wait_reporting(e, master_done, &m, deadline, &prog, master_report);
    wio_listener_close(l);
    if (e->cfg.rendezvous[0])
        unlink(e->cfg.rendezvous);
    if (rc == WAITIO_ERR_TIMEOUT) {
        char missing[2048], text[WIO_ERROR_TEXT_MAX];
        master_describe_missing(&m, missing, sizeof missing);
        int n = snprintf(text, sizeof text, "start-up timed out after %g s waiting for %s", timeout, missing);
        unsigned long unauth = master_unauthenticated(&m);
        if (unauth && n > 0 && (size_t)n < sizeof text)
            snprintf(text + n, sizeof text - (size_t)n, "; %lu connection%s to the master failed "
                     "authentication (a PB with another instance key?)", unauth,
                     unauth > 1 ? "s" : "");
        for (master_conn *mc = m.conns; mc; mc = mc->next)
            master_reply_error(&m, mc, WIO_FF_TIMEOUT, "%s", text);
        wio_engine_wait_until(e, master_flushed, &m, wio_now() + 1.0);
        rc = wio_fail(WAITIO_ERR_TIMEOUT, "%s", text);
    } else if (!rc && !(rc = master_build_table(&m)) && !(rc = master_distribute(&m))) {
        rc = wio_engine_wait_until(e, master_delivered, &m, wio_now() + 30.0);
        if (rc == WAITIO_ERR_TIMEOUT)
            rc = wio_fail(WAITIO_ERR_BOOT, "could not deliver the address table to every process");
        if (!rc) {
            *table = m.table;
            *table_len = m.table_len;
            m.table = NULL;
        }
    }
    master_free(&m);
    return rc;
}

/* ------------------------------------------------------------------------------------ */
/* client                                                                                */

typedef struct client {
    wio_engine *e;
    wio_stream *conn;
    uint8_t *reg;              /* the REGISTER payloads, one per block, back to back */
    size_t reg_len;
    size_t nblocks;
    size_t *block_len;         /* of each REGISTER payload */
    wio_send_item *items;      /* one per block */
    uint8_t *payload;          /* TABLE or ERROR being received */
    uint8_t ref[WIO_TABLE_REF_MAX]; /* TABLE_REF being received, or the one we send as leader */
    wio_send_item ctl;         /* our TABLE_REF or TABLE_FETCH */
    char made[WIO_TABLE_SHM_NAME_MAX + 1]; /* leader: our host's segment, until RELEASE */
    int outcome;               /* 0 waiting, 1 table, 2 error, 3 connection lost */
    int error_code;
    int registered;
    char text[WIO_ERROR_TEXT_MAX + 1];
    char last_failure[4200];
    char where[128];           /* the master we try, for the waiting reports */
    double since, timeout;
    uint8_t *table;
    size_t table_len;
} client;

/* Registers in blocks of at most WIO_REGISTER_BLOCK ranks and WIO_REGISTER_MAX bytes
 * (frame.h): one REGISTER each. */
static void client_on_opened(void *ctx, void *user, const wio_peer_hello *hello)
{
    client *cl = ctx;
    (void)hello;
    (void)user;
    const uint8_t *p = cl->reg;
    for (size_t i = 0; i < cl->nblocks; i++) {
        wio_send_item *it = &cl->items[i];
        memset(it, 0, sizeof *it);
        it->h.type = WIO_FT_REGISTER;
        it->payload = p;
        it->total = cl->block_len[i];
        p += it->total;
        wio_stream_send(cl->conn, it);
    }
    cl->registered = 1;
}

static int client_on_frame_begin(void *ctx, void *user, const wio_frame_hdr *h, uint8_t **dest)
{
    client *cl = ctx;
    (void)user;
    if (h->type == WIO_FT_TABLE_REF) { /* bounded by frame.h's WIO_TABLE_REF_MAX */
        if (cl->table || h->len > sizeof cl->ref)
            return -1;
        *dest = cl->ref;
        return 0;
    }
    if (h->type == WIO_FT_TABLE_RELEASE)
        return cl->made[0] ? 0 : -1;
    if ((h->type != WIO_FT_TABLE && h->type != WIO_FT_ERROR) || cl->payload || cl->table)
        return -1;
    cl->payload = malloc(h->len + 1);
    if (!cl->payload)
        return -1;
    *dest = cl->payload;
    return 0;
}

static void client_send_ctl(client *cl, uint8_t type, size_t len)
{
    wio_send_item *it = &cl->ctl;
    memset(it, 0, sizeof *it);
    it->h.type = type;
    it->payload = len ? cl->ref : NULL;
    it->total = len;
    if (cl->conn)
        wio_stream_send(cl->conn, it);
}

/* The leader of a host: writes the table it got to a fresh segment and names it to the master
 * (TABLE_REF), which sends the reference to the host's other processes and RELEASE once they
 * all have it; the table is ours already. Without a segment, TABLE_FETCH says so. */
static void client_publish(client *cl)
{
    wio_boot_ref r;
    uint8_t md[WIO_BOOT_DIGEST_LEN];
    if (wio_boot_table_digest(cl->table, cl->table_len, md) != 0 ||
        wio_boot_shm_publish(cl->table, cl->table_len, md, &r) != 0) {
        wio_debug("rendezvous: cannot publish the table for this host: %s", waitio_error_message());
        client_send_ctl(cl, WIO_FT_TABLE_FETCH, 0);
        cl->outcome = 1;
        return;
    }
    snprintf(cl->made, sizeof cl->made, "%s", r.name);
    client_send_ctl(cl, WIO_FT_TABLE_REF, wio_boot_ref_encode(&r, cl->ref));
}

/* A TABLE_REF: the table from our host's segment, or TABLE_FETCH when it cannot be opened. */
static void client_take_ref(client *cl, size_t len)
{
    wio_boot_ref r;
    const char *why = wio_boot_parse_ref(cl->ref, len, &r);
    int rc = why ? wio_fail(WAITIO_ERR_PROTO, "address table reference from the master: %s", why)
                 : wio_boot_shm_take(&r, &cl->table);
    if (rc == 1) {
        client_send_ctl(cl, WIO_FT_TABLE_FETCH, 0);
        return;
    }
    if (rc) {
        snprintf(cl->text, sizeof cl->text, "%s", waitio_error_message());
        cl->error_code = rc;
        cl->outcome = 2;
        return;
    }
    cl->table_len = (size_t)r.table_len;
    cl->outcome = 1;
}

static int client_on_frame_end(void *ctx, void *user, const wio_frame_hdr *h)
{
    client *cl = ctx;
    (void)user;
    if (h->type == WIO_FT_TABLE_REF) {
        client_take_ref(cl, h->len);
        return 0;
    }
    if (h->type == WIO_FT_TABLE_RELEASE) { /* every process of our host has the table */
        wio_boot_shm_unlink(cl->made);
        cl->made[0] = '\0';
        cl->outcome = 1;
        return 0;
    }
    if (h->type == WIO_FT_TABLE) {
        cl->table = cl->payload;
        cl->table_len = h->len;
        cl->payload = NULL;
        if (h->flags & WIO_FF_PUBLISH)
            client_publish(cl);
        else
            cl->outcome = 1;
        return 0;
    }
    memcpy(cl->text, cl->payload, h->len);
    cl->text[h->len] = '\0';
    for (size_t i = 0; i < h->len; i++)
        if (cl->text[i] < 32 || cl->text[i] > 126)
            cl->text[i] = '?'; /* the master's text goes into our messages: keep it printable */
    free(cl->payload);
    cl->payload = NULL;
    cl->error_code = (h->flags & WIO_FF_TIMEOUT) ? WAITIO_ERR_TIMEOUT : WAITIO_ERR_BOOT;
    cl->outcome = 2;
    return 0;
}

static void client_on_closed(void *ctx, void *user, int err, const char *why, int rejected)
{
    client *cl = ctx;
    (void)user; (void)rejected;
    cl->conn = NULL;
    if (cl->outcome)
        return;
    if (cl->table) { /* a leader whose master is gone: the table is ours, the segment goes */
        wio_boot_shm_unlink(cl->made);
        cl->made[0] = '\0';
        cl->outcome = 1;
        return;
    }
    snprintf(cl->last_failure, sizeof cl->last_failure, "%s", why);
    if (err == WAITIO_ERR_AUTH) {
        cl->error_code = WAITIO_ERR_AUTH;
        cl->outcome = 2;
        snprintf(cl->text, sizeof cl->text, "the master failed authentication: it does not use "
                 "our instance key (from %s)", cl->e->key.source);
        return;
    }
    cl->outcome = 3;
}

static const wio_tp_handler client_handler = {
    .opened = client_on_opened,
    .frame_begin = client_on_frame_begin,
    .frame_end = client_on_frame_end,
    .closed = client_on_closed,
};

static int client_outcome(void *arg) { return ((const client *)arg)->outcome != 0; }

static void client_report(void *arg, double waited)
{
    const client *cl = arg;
    if (cl->registered)
        wio_notice("registered with the master at %s; it waits for the other PBs; %.0f s of %g s",
                   cl->where, waited, cl->timeout);
    else
        wio_notice("waiting for the master (PB 0 rank 0) at %s: %s; %.0f s of %g s",
                 cl->where[0] ? cl->where : cl->e->cfg.rendezvous, cl->last_failure, waited, cl->timeout);
}

/* Progresses the engine until t, never blocking past it (pauses of a millisecond are meant). */
static int sleep_until(wio_engine *e, double t)
{
    for (double now = wio_now(); now < t; now = wio_now()) {
        int ms = (int)((t - now) * 1000.0 + 0.999);
        int rc = wio_engine_progress(e, ms < 1 ? 1 : ms > 20 ? 20 : ms);
        if (rc)
            return rc;
    }
    return 0;
}

static int master_address(const wio_engine *e, wio_addr *out, int *waiting_for_file)
{
    *waiting_for_file = 0;
    if (!e->cfg.rendezvous[0])
    {
        int rc = wio_addr_resolve(e->cfg.master_host, (uint16_t)e->cfg.master_port, out);
        if (!rc)
            return 0;
        char why[256]; /* copied: wio_fail writes the buffer waitio_error_message() reads */
        snprintf(why, sizeof why, "%s", waitio_error_message());
        return wio_fail(rc, "WAITIO_MASTER_HOST='%s': %s", e->cfg.master_host, why);
    }
    int rc = rdvfile_read(e->cfg.rendezvous, out);
    if (rc == 1)
        *waiting_for_file = 1;
    return rc == 1 ? 0 : rc;
}

static int client_run(wio_engine *e, double deadline, double timeout, const wio_addr *first_master,
                      const boot_block *b, uint8_t **table, size_t *table_len)
{
    client cl = {.e = e, .since = deadline - timeout, .timeout = timeout};
    progress prog;
    progress_init(&prog, cl.since);
    int rc = encode_blocks(e, b, &cl.reg, &cl.reg_len, &cl.block_len, &cl.nblocks);
    if (rc)
        return rc;
    cl.items = calloc(cl.nblocks, sizeof *cl.items);
    if (!cl.items) {
        free(cl.reg);
        free(cl.block_len);
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    }
    wio_addr master = *first_master;
    int have_master = first_master->family != 0;
    backoff retry;
    double cap = RETRY_PER_PROC * (e->cfg.local_size > 0 ? e->cfg.local_size : 1);
    backoff_init(&retry, RETRY_FIRST, cap < RETRY_CAP_MIN ? RETRY_CAP_MIN : cap > RETRY_MAX ? RETRY_MAX : cap);
    char where[128] = "";
    snprintf(cl.last_failure, sizeof cl.last_failure, "no answer");
    while (!rc) {
        if (wio_now() >= deadline) {
            rc = WAITIO_ERR_TIMEOUT;
            break;
        }
        if (progress_due(&prog)) /* retrying: the master is not there yet */
            client_report(&cl, wio_now() - cl.since);
        if (!have_master) {
            int waiting = 0;
            if ((rc = master_address(e, &master, &waiting)))
                break;
            if (waiting) {
                snprintf(cl.last_failure, sizeof cl.last_failure, "rendezvous file %.4000s not written yet",
                         e->cfg.rendezvous);
                rc = sleep_until(e, wio_now() + backoff_next(&retry));
                continue;
            }
            have_master = 1;
        }
        wio_addr_format(&master, where, sizeof where);
        snprintf(cl.where, sizeof cl.where, "%s", where);
        cl.outcome = 0;
        cl.registered = 0;
        if ((rc = wio_tcp_dial(boot_ctx(e), &master, WIO_ID_BOOT, WIO_ID_BOOT, 0, &client_handler, &cl,
                               &cl, &cl.conn)))
            break;
        rc = wait_reporting(e, client_outcome, &cl, deadline, &prog, client_report);
        if (rc == WAITIO_ERR_TIMEOUT)
            break;
        if (rc)
            break;
        if (cl.outcome != 3)
            break;
        /* master not there yet (or restarting): try again; the file may name a new one */
        have_master = !e->cfg.rendezvous[0];
        rc = sleep_until(e, wio_now() + backoff_next(&retry));
    }
    if (cl.conn) {
        wio_stream_close(cl.conn, WAITIO_ERR_CANCELLED);
        cl.conn = NULL;
    }
    wio_boot_shm_unlink(cl.made); /* a leader that stopped waiting for RELEASE */
    free(cl.payload);
    if (rc == WAITIO_ERR_TIMEOUT) {
        if (cl.registered)
            rc = wio_fail(WAITIO_ERR_TIMEOUT, "start-up timed out after %g s: registered with the "
                          "master at %s, which is still waiting for other PBs", timeout, where);
        else
            rc = wio_fail(WAITIO_ERR_TIMEOUT, "start-up timed out after %g s: the master (PB 0 "
                          "rank 0) at %s never answered (%s)", timeout,
                          where[0] ? where : e->cfg.rendezvous, cl.last_failure);
    } else if (!rc && cl.outcome == 2) {
        rc = wio_fail(cl.error_code, "%s", cl.text);
    } else if (!rc && cl.outcome == 1) {
        wio_debug("rendezvous: the address table (%zu bytes) from the master at %s after %.3f s",
                  cl.table_len, where, wio_now() - cl.since);
        *table = cl.table;
        *table_len = cl.table_len;
        cl.table = NULL;
    }
    free(cl.table);
    free(cl.reg);
    free(cl.block_len);
    free(cl.items);
    return rc;
}


/* ------------------------------------------------------------------------------------ */
/* start-up through the shared directory                                                */
/*
 * <instance>/boot/ holds authenticated records (file_dir.c): "master" (a fresh epoch and NPB,
 * written by PB 0 rank 0 after it removed everything a previous run left there), one
 * "reg-<pb>.<first rank>" per registration (the epoch it answers, the registrant's own nonce,
 * a REGISTER payload), "table" or "error" (the epoch, then the address table or the reason
 * start-up failed), and "ack-<pb>.<first rank>" (the epoch and the registrant's nonce: its
 * registration is in that table). A registration that answers an older epoch is ignored; a
 * process that sees a new epoch registers again; and a process takes a table only with the ack
 * of its own nonce, so a crashed run's files never mix with this run's.
 */

#define DIR_EPOCH_LEN 16
#define DIR_NONCE_LEN 16
#define DIR_POLL_MIN 0.005
#define DIR_POLL_MAX 0.2

typedef struct dir_boot {
    char dir[WIO_FILE_PATH_MAX + 16]; /* for messages: records are reached through fd */
    int fd;                    /* boot/, opened once below the instance directory (file_dir.h) */
    uint8_t key[WIO_PROOF_LEN];
    char warned[8][64];        /* records already reported as invalid (once each) */
} dir_boot;

/* Reports an invalid record once, not at every look. */
static void dir_warn_once(dir_boot *d, const char *name, const char *why)
{
    for (size_t i = 0; i < sizeof d->warned / sizeof d->warned[0]; i++) {
        if (strcmp(d->warned[i], name) == 0)
            return;
        if (!d->warned[i][0]) {
            snprintf(d->warned[i], sizeof d->warned[i], "%s", name);
            break;
        }
    }
    wio_warn("start-up directory: %s/%s ignored: %s", d->dir, name, why);
}

static int dir_open(wio_engine *e, dir_boot *d)
{
    char inst[WIO_FILE_PATH_MAX];
    int inst_fd;
    d->fd = -1;
    int rc = wio_file_instance_open(&e->cfg, &e->key, inst, sizeof inst, &inst_fd);
    if (rc)
        return rc;
    snprintf(d->dir, sizeof d->dir, "%s/boot", inst);
    wio_file_key(&e->key, d->key);
    if (wio_file_subdir_at(inst_fd, "boot", 1, &d->fd) != 0)
        rc = wio_fail(WAITIO_ERR_ENV, "%s must be a directory of this user that nobody else can write: %s",
                      d->dir, strerror(errno));
    close(inst_fd);
    return rc;
}

/* Sleeps a little longer each time nothing changed (jittered), progressing the engine meanwhile. */
static int dir_wait(wio_engine *e, backoff *pause)
{
    return sleep_until(e, wio_now() + backoff_next(pause));
}

static void dir_clear(const dir_boot *d) { wio_file_clear_at(d->fd); } /* never follows a link */

/* Publishes epoch || body under name. */
static int dir_publish(const dir_boot *d, const char *name, const uint8_t *epoch, const void *body, size_t len)
{
    uint8_t *buf = malloc(DIR_EPOCH_LEN + len);
    if (!buf)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    memcpy(buf, epoch, DIR_EPOCH_LEN);
    memcpy(buf + DIR_EPOCH_LEN, body, len);
    int rc = wio_file_publish_at(d->fd, name, buf, DIR_EPOCH_LEN + len, d->key, 0);
    free(buf);
    return rc;
}

/* Reads name if it is a record of epoch `want` (NULL: any; its epoch goes to `got`): 0 with
 * *body, 1 absent or of another epoch. */
static int dir_read(dir_boot *d, const char *name, const uint8_t *want, uint8_t *got, size_t max,
                    uint8_t **body, size_t *len)
{
    uint8_t *data = NULL;
    size_t n = 0;
    const char *why;
    int rc = wio_file_read_record_at(d->fd, name, max + DIR_EPOCH_LEN, d->key, &data, &n, &why);
    if (rc < 0)
        dir_warn_once(d, name, why);
    if (rc != 0)
        return 1;
    if (n < DIR_EPOCH_LEN || (want && memcmp(data, want, DIR_EPOCH_LEN) != 0)) {
        free(data);
        return 1;
    }
    if (got)
        memcpy(got, data, DIR_EPOCH_LEN);
    memmove(data, data + DIR_EPOCH_LEN, n - DIR_EPOCH_LEN);
    *body = data;
    *len = n - DIR_EPOCH_LEN;
    return 0;
}

typedef struct dir_ack {
    char name[64];
    uint8_t nonce[DIR_NONCE_LEN];
} dir_ack;

/* Master: takes every registration of this epoch that arrived (at most max_acks - *nacks of
 * them: the others wait for the next scan); acks[] gets who to answer. A registration of this
 * epoch that does not parse came from a process of this instance (it is authenticated), of
 * another WaitIO version or broken: *fatal gets why, and start-up fails for everyone. */
static void dir_collect(master *m, dir_boot *d, const uint8_t *epoch, dir_ack *acks, int *nacks, int max_acks,
                        char *fatal, size_t fatal_cap)
{
    int fd = openat(d->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC); /* a listing of its own */
    DIR *dp = fd >= 0 ? fdopendir(fd) : NULL;
    if (!dp) {
        if (fd >= 0)
            close(fd);
        return;
    }
    struct dirent *de;
    while (*nacks < max_acks && !fatal[0] && (de = readdir(dp))) {
        if (strncmp(de->d_name, "reg-", 4) != 0)
            continue;
        uint8_t *body = NULL;
        size_t len = 0;
        if (dir_read(d, de->d_name, epoch, NULL, DIR_NONCE_LEN + WIO_REGISTER_MAX, &body, &len) != 0)
            continue;
        unlinkat(d->fd, de->d_name, 0); /* taken: each registration is counted once */
        wio_boot_reg reg;
        const char *why = len < DIR_NONCE_LEN ? "too short"
                                              : wio_boot_parse_register(body + DIR_NONCE_LEN, len - DIR_NONCE_LEN, &reg);
        if (why) {
            free(body);
            snprintf(fatal, fatal_cap, "start-up directory: malformed registration %s: %s (a process "
                     "of another WaitIO version, whose start-up format differs?)", de->d_name, why);
            break;
        }
        if (reg.npb != m->e->npb) {
            wio_warn("start-up directory: %s says WAITIO_NPB=%d, the master has %d", de->d_name, reg.npb, m->e->npb);
        } else if ((why = master_record_block(m, reg.pb, reg.first, reg.size, reg.k, reg.entries))) {
            wio_warn("start-up directory: PB %d rank %d refused: %s", reg.pb, reg.first, why);
        } else {
            wio_debug("start-up directory: PB %d ranks %d..%d of %d registered", reg.pb, reg.first,
                      reg.first + reg.k - 1, reg.size);
            snprintf(acks[*nacks].name, sizeof acks[*nacks].name, "ack-%d.%d", reg.pb, reg.first);
            memcpy(acks[*nacks].nonce, body, DIR_NONCE_LEN);
            (*nacks)++;
        }
        free(body);
        free(reg.entries);
    }
    closedir(dp);
}

static int dir_master(wio_engine *e, dir_boot *d, double deadline, double timeout, const boot_block *b,
                      uint8_t **table, size_t *table_len)
{
    master m = {.e = e};
    if (wio_boot_roster_init(&m.r, e->npb, (uint32_t)e->cfg.max_procs) != 0)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory in the rendezvous master");
    uint8_t epoch[DIR_EPOCH_LEN], npb[4];
    wio_put_le32(npb, (uint32_t)e->npb);
    dir_clear(d); /* a previous run's records go before this run's epoch exists */
    int rc = wio_random_bytes(epoch, sizeof epoch);
    if (!rc)
        rc = dir_publish(d, "master", epoch, npb, sizeof npb);
    const char *why = rc ? NULL : master_record_own(&m, b);
    if (why)
        rc = wio_fail(WAITIO_ERR_BOOT, "master cannot register itself: %s", why);
    wio_info("start-up through the directory %s", d->dir);
    int nacks = 0, max_acks = 0;
    dir_ack *acks = NULL;
    backoff pause;
    backoff_init(&pause, DIR_POLL_MIN, DIR_POLL_MAX);
    progress prog;
    progress_init(&prog, deadline - timeout);
    while (!rc && !master_done(&m)) {
        if (wio_now() >= deadline) {
            char missing[2048], text[WIO_ERROR_TEXT_MAX];
            master_describe_missing(&m, missing, sizeof missing);
            snprintf(text, sizeof text, "start-up timed out after %g s waiting for %s", timeout, missing);
            (void)dir_publish(d, "error", epoch, text, strlen(text));
            rc = wio_fail(WAITIO_ERR_TIMEOUT, "%s", text);
            break;
        }
        if (progress_due(&prog)) {
            char missing[1024];
            master_describe_missing(&m, missing, sizeof missing);
            wio_notice("start-up directory master: waiting for %s; %.0f s of %g s", missing,
                       wio_now() - prog.since, timeout);
        }
        int before = m.r.complete;
        if (nacks + 64 > max_acks) { /* room for what may arrive in one scan */
            dir_ack *a = realloc(acks, (size_t)(max_acks + 256) * sizeof *a);
            if (!a) {
                rc = wio_fail(WAITIO_ERR_NOMEM, "out of memory");
                break;
            }
            acks = a;
            max_acks += 256;
        }
        char fatal[WIO_ERROR_TEXT_MAX] = "";
        dir_collect(&m, d, epoch, acks, &nacks, nacks + 64, fatal, sizeof fatal);
        if (fatal[0]) {
            (void)dir_publish(d, "error", epoch, fatal, strlen(fatal));
            rc = wio_fail(WAITIO_ERR_BOOT, "%s", fatal);
            break;
        }
        if (!master_done(&m) && (rc = m.r.complete != before ? 0 : dir_wait(e, &pause)))
            break;
    }
    if (!rc && !(rc = master_build_table(&m)) && !(rc = dir_publish(d, "table", epoch, m.table, m.table_len))) {
        for (int i = 0; i < nacks && !rc; i++)
            rc = dir_publish(d, acks[i].name, epoch, acks[i].nonce, DIR_NONCE_LEN);
        *table = m.table;
        *table_len = m.table_len;
        m.table = NULL;
    }
    free(acks);
    master_free(&m);
    return rc;
}

/* A process's registration in the directory: one record per REGISTER block (its own nonce,
 * then the payload), named by the block's first rank, each answered by an ack of that name. */
typedef struct dir_regs {
    uint8_t nonce[DIR_NONCE_LEN];
    uint8_t *payloads;         /* the REGISTER payloads back to back (encode_blocks) */
    size_t payloads_len, nblocks;
    size_t *len;               /* of each payload */
    int *first;                /* each block's first rank */
    uint8_t *acked;            /* per block: its ack with our nonce was seen (this epoch) */
} dir_regs;

static void dir_regs_free(dir_regs *r)
{
    free(r->payloads);
    free(r->len);
    free(r->first);
    free(r->acked);
}

static int dir_regs_make(const wio_engine *e, const boot_block *b, dir_regs *r)
{
    memset(r, 0, sizeof *r);
    int rc = encode_blocks(e, b, &r->payloads, &r->payloads_len, &r->len, &r->nblocks);
    if (rc)
        return rc;
    r->first = malloc(r->nblocks * sizeof *r->first);
    r->acked = calloc(r->nblocks, 1);
    if (!r->first || !r->acked) {
        dir_regs_free(r);
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    }
    const uint8_t *q = r->payloads;
    for (size_t i = 0; i < r->nblocks; q += r->len[i++])
        r->first[i] = (int)wio_get_le32(q + 8);
    return wio_random_bytes(r->nonce, DIR_NONCE_LEN) ? WAITIO_ERR_SYS : 0;
}

/* Publishes every block of ours as a registration of epoch. */
static int dir_regs_publish(const wio_engine *e, const dir_boot *d, dir_regs *r, const uint8_t *epoch)
{
    const uint8_t *q = r->payloads;
    int rc = 0;
    for (size_t i = 0; i < r->nblocks && !rc; q += r->len[i++]) {
        uint8_t *rec = malloc(DIR_NONCE_LEN + r->len[i]);
        if (!rec)
            return wio_fail(WAITIO_ERR_NOMEM, "out of memory");
        memcpy(rec, r->nonce, DIR_NONCE_LEN);
        memcpy(rec + DIR_NONCE_LEN, q, r->len[i]);
        char name[64];
        snprintf(name, sizeof name, "reg-%d.%d", e->cfg.pbid, r->first[i]);
        rc = dir_publish(d, name, epoch, rec, DIR_NONCE_LEN + r->len[i]);
        free(rec);
        r->acked[i] = 0;
    }
    return rc;
}

/* 1 once the master acked every block of ours in epoch `registered`. */
static int dir_regs_acked(const wio_engine *e, dir_boot *d, dir_regs *r, const uint8_t *registered)
{
    int all = 1;
    for (size_t i = 0; i < r->nblocks; i++) {
        uint8_t *body = NULL;
        size_t len = 0;
        char ack[64];
        snprintf(ack, sizeof ack, "ack-%d.%d", e->cfg.pbid, r->first[i]);
        if (!r->acked[i] && dir_read(d, ack, registered, NULL, DIR_NONCE_LEN, &body, &len) == 0) {
            r->acked[i] = len == DIR_NONCE_LEN && memcmp(body, r->nonce, DIR_NONCE_LEN) == 0;
            free(body);
        }
        all &= r->acked[i];
    }
    return all;
}

static int dir_client(wio_engine *e, dir_boot *d, double deadline, double timeout, const boot_block *b,
                      uint8_t **table, size_t *table_len)
{
    dir_regs regs;
    int rc = dir_regs_make(e, b, &regs);
    if (rc)
        return rc;
    uint8_t registered[DIR_EPOCH_LEN] = {0}, epoch[DIR_EPOCH_LEN];
    int have_registered = 0;
    backoff pause;
    backoff_init(&pause, DIR_POLL_MIN, DIR_POLL_MAX);
    progress prog;
    progress_init(&prog, deadline - timeout);
    for (;;) {
        uint8_t *body = NULL;
        size_t len = 0;
        if (progress_due(&prog))
            wio_notice("start-up directory %s: %s; %.0f s of %g s", d->dir,
                       have_registered ? "registered, the master waits for the other PBs"
                                       : "waiting for PB 0 rank 0 (the master) to start",
                       wio_now() - prog.since, timeout);
        if (wio_now() >= deadline) {
            rc = wio_fail(WAITIO_ERR_TIMEOUT, "start-up timed out after %g s: %s in %s", timeout,
                          have_registered ? "registered, the master still waits for other PBs"
                                          : "PB 0 rank 0 (the master) never started", d->dir);
            break;
        }
        if (dir_read(d, "master", NULL, epoch, 64, &body, &len) == 0) {
            free(body);
            if (!have_registered || memcmp(epoch, registered, DIR_EPOCH_LEN) != 0) { /* a new run */
                if ((rc = dir_regs_publish(e, d, &regs, epoch)))
                    break;
                memcpy(registered, epoch, DIR_EPOCH_LEN);
                have_registered = 1;
                backoff_init(&pause, DIR_POLL_MIN, DIR_POLL_MAX);
            }
        }
        if (have_registered && dir_regs_acked(e, d, &regs, registered) &&
            dir_read(d, "table", registered, NULL, WIO_TABLE_MAX, &body, &len) == 0) {
            *table = body;
            *table_len = len;
            break;
        }
        if (have_registered && dir_read(d, "error", registered, NULL, WIO_ERROR_TEXT_MAX, &body, &len) == 0) {
            for (size_t i = 0; i < len; i++)
                if (body[i] < 32 || body[i] > 126)
                    body[i] = '?';
            int timed_out = len >= 18 && memcmp(body, "start-up timed out", 18) == 0;
            rc = wio_fail(timed_out ? WAITIO_ERR_TIMEOUT : WAITIO_ERR_BOOT, "%.*s", (int)len, (const char *)body);
            free(body);
            break;
        }
        if ((rc = dir_wait(e, &pause)))
            break;
    }
    dir_regs_free(&regs);
    return rc;
}

static int dir_register(wio_engine *e, double deadline, double timeout, const boot_block *b,
                        uint8_t **table, size_t *table_len)
{
    dir_boot d = {0};
    int rc = dir_open(e, &d);
    if (!rc)
        rc = e->cfg.pbid == 0 && b->first == 0 ? dir_master(e, &d, deadline, timeout, b, table, table_len)
                                               : dir_client(e, &d, deadline, timeout, b, table, table_len);
    if (d.fd >= 0)
        close(d.fd);
    return rc;
}

/* ------------------------------------------------------------------------------------ */
/* the table                                                                             */

static int boot_adopt_table(wio_engine *e, const uint8_t *t, size_t len)
{
    wio_boot_table tab;
    const char *why = wio_boot_parse_table(t, len, e->npb, &tab);
    if (why)
        return wio_fail(WAITIO_ERR_PROTO, "address table from the master: %s", why);
    if (tab.nprocs[e->cfg.pbid] != e->cfg.local_size) {
        wio_boot_table_free(&tab);
        return wio_fail(WAITIO_ERR_PROTO, "address table disagrees with our PB size");
    }
    e->nprocs = tab.nprocs;
    e->pb_offset = tab.pb_offset;
    e->table = tab.procs;
    e->nprocs_total = tab.total;
    e->my_id = e->pb_offset[e->cfg.pbid] + (uint32_t)e->cfg.local_rank;
    return 0;
}

/* Registers block b with the master (or, on the master, collects everyone) and returns the
 * encoded address table. */
static int dir_register(wio_engine *e, double deadline, double timeout, const boot_block *b,
                        uint8_t **table, size_t *table_len);

/* Start-up through the shared directory: file mode without a master to reach over the network
 * (the original's WaitIO-File on systems whose nodes share only storage). */
static int boot_through_directory(const wio_engine *e)
{
    return e->cfg.comm_type == WIO_COMM_FILE && !e->cfg.master_set && !e->cfg.rendezvous[0];
}

static int register_block(wio_engine *e, double deadline, double timeout, const boot_block *b,
                          uint8_t **table, size_t *table_len)
{
    if (boot_through_directory(e))
        return dir_register(e, deadline, timeout, b, table, table_len);
    int is_master = e->cfg.pbid == 0 && b->first == 0;
    wio_addr master = {0};
    int rc, waiting = 0;
    if ((!e->cfg.rendezvous[0] || !is_master) && (rc = master_address(e, &master, &waiting)))
        return rc;
    if (is_master)
        return master_run(e, deadline, timeout, b, &master, table, table_len);
    if (waiting)
        memset(&master, 0, sizeof master);
    return client_run(e, deadline, timeout, &master, b, table, table_len);
}

int wio_boot_self_address(wio_engine *e)
{
    int is_master = e->cfg.pbid == 0 && e->cfg.local_rank == 0;
    wio_addr master = {0}, self;
    int rc, waiting = 0;
    if (!e->cfg.job && (!e->cfg.rendezvous[0] || !is_master) && (rc = master_address(e, &master, &waiting)))
        return rc;
    /* In file mode a process may start before the file exists: it advertises the address that
     * routes to the master once known, the host's first interface meanwhile. */
    if ((rc = advertised_address(e, (master.family && !waiting) ? &master : NULL, &self)))
        return rc;
    self.port = 0; /* the tcp transport's listener fills it in */
    e->self.addr = self;
    e->self.host_id = host_identity();
    /* test hook (boot_shm.sh): processes of this host that act as another host's, so that one
     * machine tests the way a table reaches the processes of other hosts (their leader) */
    const char *fake = wio_env("WAITIO_TEST_HOST_ID");
    if (fake && *fake)
        e->self.host_id = strtoull(fake, NULL, 16);
    return 0;
}

/* With an MPI adapter, PB rank 0 gathers the PB's entries: the fixed parts (whose extension
 * lengths tell it the longest extension, which it broadcasts), then, when some process has an
 * extension, every extension padded to the longest one — the adapter's gather takes one size
 * for all. It returns the PB's encoded entries in rank order (rank 0: *entries, *len, malloc'd).
 * Every process takes part in every collective whatever failed, so that none is left waiting. */
static int adapter_gather_entries(const wio_engine *e, const waitio_adapter_ops *a, uint8_t **entries,
                                  size_t *len)
{
    int root = e->cfg.local_rank == 0, rc = 0;
    size_t n = (size_t)e->cfg.local_size;
    uint8_t mine[ENTRY_LEN + WIO_PROC_EXT_MAX];
    entry_encode(&e->self, mine);
    uint8_t *fixed = root ? malloc(n * ENTRY_LEN) : NULL;
    if (root && !fixed)
        rc = wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    if (a->gather_bytes(a->ctx, mine, ENTRY_LEN, fixed, 0) != 0 && !rc)
        rc = wio_fail(WAITIO_ERR_SYS, "MPI adapter: gather of the address entries failed");
    uint32_t longest = 0;
    for (size_t i = 0; root && !rc && i < n; i++) {
        uint32_t l = wio_get_le16(fixed + i * ENTRY_LEN + ENTRY_EXT_LEN_AT);
        longest = l > longest ? l : longest;
    }
    uint8_t *ext = root && !rc && longest ? malloc(n * longest) : NULL;
    if (root && !rc && longest && !ext)
        rc = wio_fail(WAITIO_ERR_NOMEM, "out of memory");
    uint8_t lbuf[4];
    wio_put_le32(lbuf, rc ? 0 : longest); /* 0 after a failure at the root: no second gather */
    if (a->bcast(a->ctx, lbuf, sizeof lbuf, 0) != 0 && !rc)
        rc = wio_fail(WAITIO_ERR_SYS, "MPI adapter: broadcast of the extensions' length failed");
    longest = wio_get_le32(lbuf);
    if (longest > WIO_PROC_EXT_MAX && !rc)
        rc = wio_fail(WAITIO_ERR_PROTO, "MPI adapter: an extension of %u bytes announced", (unsigned)longest);
    if (longest && longest <= WIO_PROC_EXT_MAX) { /* the root has ext: it announced longest */
        uint8_t pad[WIO_PROC_EXT_MAX] = {0};
        memcpy(pad, mine + ENTRY_LEN, e->self.ext_len);
        if (a->gather_bytes(a->ctx, pad, longest, ext, 0) != 0 && !rc)
            rc = wio_fail(WAITIO_ERR_SYS, "MPI adapter: gather of the address extensions failed");
    }
    uint8_t *out = NULL;
    size_t at = 0;
    if (root && !rc) { /* fixed part || extension, rank by rank */
        size_t total = n * ENTRY_LEN;
        for (size_t i = 0; i < n; i++)
            total += wio_get_le16(fixed + i * ENTRY_LEN + ENTRY_EXT_LEN_AT);
        if (!(out = malloc(total)))
            rc = wio_fail(WAITIO_ERR_NOMEM, "out of memory");
        for (size_t i = 0; out && i < n; i++) {
            size_t l = wio_get_le16(fixed + i * ENTRY_LEN + ENTRY_EXT_LEN_AT);
            memcpy(out + at, fixed + i * ENTRY_LEN, ENTRY_LEN);
            if (l) /* l <= longest, and ext is there when longest > 0 */
                memcpy(out + at + ENTRY_LEN, ext + i * longest, l);
            at += ENTRY_LEN + l;
        }
    }
    free(fixed);
    free(ext);
    *entries = out;
    *len = at;
    return rc;
}

/* With an MPI adapter: rank 0 gathers the PB's entries with MPI, registers the whole PB, and
 * broadcasts the outcome (code, message, table) with MPI. One connection per PB to the master. */
static int boot_through_adapter(wio_engine *e, const waitio_adapter_ops *a, double deadline,
                                double timeout, uint8_t **table, size_t *table_len)
{
    int root = e->cfg.local_rank == 0;
    uint8_t *all = NULL;
    size_t all_len = 0;
    int rc = adapter_gather_entries(e, a, &all, &all_len);
    if (root && !rc) {
        boot_block b = {0, e->cfg.local_size, all, all_len};
        rc = register_block(e, deadline, timeout, &b, table, table_len);
    }
    free(all);
    /* outcome: [code, table length], then the message or the table */
    uint64_t head[2] = {(uint64_t)rc, root && !rc ? *table_len : 0};
    char msg[1024] = "";
    if (root && rc)
        snprintf(msg, sizeof msg, "%s", waitio_error_message());
    int (*bcast_wait)(void *, void *, size_t, int) = a->bcast_idle ? a->bcast_idle : a->bcast;
    if (bcast_wait(a->ctx, head, sizeof head, 0) != 0)
        return wio_fail(WAITIO_ERR_SYS, "MPI adapter: broadcast of the start-up outcome failed");
    if (head[0]) {
        if (a->bcast(a->ctx, msg, sizeof msg, 0) != 0)
            return wio_fail(WAITIO_ERR_SYS, "MPI adapter: broadcast failed");
        msg[sizeof msg - 1] = '\0';
        return root ? (int)head[0] : wio_fail((int)head[0], "%s", msg);
    }
    if (!root) {
        if (head[1] > WIO_TABLE_MAX || !(*table = malloc(head[1] ? head[1] : 1)))
            return wio_fail(WAITIO_ERR_NOMEM, "cannot hold the address table");
        *table_len = head[1];
    }
    if (a->bcast(a->ctx, *table, *table_len, 0) != 0)
        return wio_fail(WAITIO_ERR_SYS, "MPI adapter: broadcast of the address table failed");
    return 0;
}

/* The rendezvous's connections live in a stream context of their own, on the engine's poller,
 * for the duration of the start-up. */
static int boot_streams_open(wio_engine *e)
{
    wio_stream_params sp = {
        .key = &e->key, .poller = e->poller, .connect_timeout = e->cfg.connect_timeout,
        .handshake_timeout = e->cfg.handshake_timeout, .max_handshakes = e->cfg.max_handshakes,
        .max_conns = wio_config_max_conns(&e->cfg), /* the master's port is capped the same */
    };
    wio_stream_ctx *ctx;
    int rc = wio_stream_ctx_create(&ctx, &sp);
    if (!rc)
        e->boot_streams = ctx;
    return rc;
}

int wio_boot_run(wio_engine *e, double timeout)
{
    double deadline = wio_now() + timeout;
    e->npb = e->cfg.npb;
    int rc = boot_streams_open(e);
    if (rc)
        return rc;
    rc = boot_run(e, deadline, timeout);
    wio_stream_ctx_destroy(boot_ctx(e));
    e->boot_streams = NULL;
    return rc;
}

/* Test hook WAITIO_TEST_PROC_EXT="hex[,hex...]": when no transport gave our entry an
 * extension, PB rank r takes the (r mod count)-th value's bytes as its extension, and once the
 * table is adopted every process logs (info) a digest of all processes' extensions, so that a
 * test sees each process's bytes reach every other through each start-up path
 * (tests/scripts/boot_ext.sh). Honoured in every build: it changes nothing but the bytes an
 * entry carries, which only a transport that set its own extension would read (and then the
 * hook is ignored), and it lets the tests run the library as built. */
#define TEST_EXT_VAR "WAITIO_TEST_PROC_EXT"

static int hexval(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static int test_ext_hook(wio_engine *e)
{
    static uint8_t bytes[WIO_PROC_EXT_MAX];
    const char *v = wio_env(TEST_EXT_VAR);
    if (!v || e->self.ext_len)
        return 0;
    size_t count = 1;
    for (const char *c = v; *c; c++)
        count += *c == ',';
    const char *item = v;
    for (size_t skip = (size_t)e->cfg.local_rank % count; skip; skip--)
        item = strchr(item, ',') + 1;
    size_t digits = strcspn(item, ",");
    if (digits % 2)
        return wio_fail(WAITIO_ERR_ENV, "%s: an odd number of hex digits", TEST_EXT_VAR);
    if (digits / 2 > WIO_PROC_EXT_MAX)
        return wio_fail(WAITIO_ERR_ENV, "%s: an extension of %zu bytes exceeds WIO_PROC_EXT_MAX (%u bytes)",
                        TEST_EXT_VAR, digits / 2, WIO_PROC_EXT_MAX);
    for (size_t i = 0; i < digits / 2; i++) {
        int hi = hexval(item[2 * i]), lo = hexval(item[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return wio_fail(WAITIO_ERR_ENV, "%s: not hex digits", TEST_EXT_VAR);
        bytes[i] = (uint8_t)(hi << 4 | lo);
    }
    e->self.ext = digits ? bytes : NULL;
    e->self.ext_len = (uint16_t)(digits / 2);
    return 0;
}

/* The hook's report: SHA-256 over every process's le32 id, le16 extension length and bytes,
 * in process order. */
static void test_ext_report(const wio_engine *e)
{
    if (!wio_env(TEST_EXT_VAR))
        return;
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    int ok = md && EVP_DigestInit_ex(md, EVP_sha256(), NULL);
    for (uint32_t i = 0; ok && i < e->nprocs_total; i++) {
        uint8_t head[6];
        wio_put_le32(head, i);
        wio_put_le16(head + 4, e->table[i].ext_len);
        ok = EVP_DigestUpdate(md, head, sizeof head) &&
             (!e->table[i].ext_len || EVP_DigestUpdate(md, e->table[i].ext, e->table[i].ext_len));
    }
    uint8_t out[EVP_MAX_MD_SIZE];
    unsigned len = 0;
    ok = ok && EVP_DigestFinal_ex(md, out, &len);
    EVP_MD_CTX_free(md);
    char hex[2 * EVP_MAX_MD_SIZE + 1] = "";
    for (unsigned i = 0; ok && i < len; i++)
        snprintf(hex + 2 * i, 3, "%02x", out[i]);
    wio_info("%s: process %u sees the extensions of %u processes: sha256 %s", TEST_EXT_VAR,
             (unsigned)e->my_id, (unsigned)e->nprocs_total, ok ? hex : "(digest failed)");
}

/* Our entry's extension must fit the table: refused here, before anything is sent. */
static int self_ext_check(const wio_engine *e)
{
    if (e->self.ext_len > WIO_PROC_EXT_MAX || (e->self.ext_len && !e->self.ext))
        return wio_fail(WAITIO_ERR_ENV, "this process's address-table extension of %u bytes is over "
                        "the %u bytes start-up carries (WIO_PROC_EXT_MAX)", (unsigned)e->self.ext_len,
                        WIO_PROC_EXT_MAX);
    return 0;
}

static int boot_run(wio_engine *e, double deadline, double timeout)
{
    int rc;
    uint8_t *table = NULL;
    size_t table_len = 0;
    const waitio_adapter_ops *a = wio_adapter();
    int pb_adapter = a && a->size == e->cfg.local_size && a->rank == e->cfg.local_rank;
    e->self.flags = e->cfg.trace_dir[0] ? WIO_PROC_TRACE : 0;
    if (pb_adapter)
        e->self.flags |= WIO_PROC_ADAPTER | (a->allreduce ? WIO_PROC_ALLREDUCE : 0) |
                         (a->ibcast && a->test && a->wait ? WIO_PROC_IBCAST : 0);
    e->self.coll_sig = coll_settings_sig();
    if ((rc = test_ext_hook(e)) || (rc = self_ext_check(e)))
        return rc;
    uint8_t mine[ENTRY_LEN + WIO_PROC_EXT_MAX];
    entry_encode(&e->self, mine);
    if (e->cfg.job) { /* one-job MPMD launch: no master, the table comes over MPI */
        rc = wio_boot_job(e, mine, entry_size(&e->self), timeout, &table, &table_len);
    } else if (pb_adapter && e->cfg.local_size > 1) {
        wio_info("start-up through the MPI adapter (%s)", a->name ? a->name : "?");
        rc = boot_through_adapter(e, a, deadline, timeout, &table, &table_len);
    } else {
        boot_block b = {e->cfg.local_rank, 1, mine, entry_size(&e->self)};
        rc = register_block(e, deadline, timeout, &b, &table, &table_len);
    }
    if (!rc)
        rc = boot_adopt_table(e, table, table_len);
    free(table);
    if (!rc)
        test_ext_report(e);
    return rc;
}
