/*
 * mpi_ext.c — test of the conversion layer's Sendrecv(_replace), Probe/Iprobe/Get_count/
 * Get_elements, Waitany/Waitsome/Testany/Testall/Testsome, Comm_split/dup/create_group/free with
 * groups, and Ibcast/Iallreduce/Ibarrier, against the same routines of a real MPI.
 *
 * One program, two modes, the same sequence of calls with the same arguments:
 *   mpi_ext wio SEED OUT   — a WaitIO process (every PB its own MPI job): the WAITIO_MPI_ routines
 *                            on the universe;
 *   mpi_ext ref SEED OUT   — one MPI job of as many processes as the universe: MPI's routines on
 *                            MPI_COMM_WORLD.
 * Counts, tags, roots, split colors and keys come from SEED (the same in every process); data
 * from (SEED, rank, element). Each process writes everything it received or computed — every
 * buffer byte as hex, every status (source, tag, byte count), new ranks and sizes, completion
 * indices, WAITIO_MPI_UNDEFINED results — as labelled lines to OUT, with MPI's own constants
 * (MPI_ANY_SOURCE, MPI_UNDEFINED, ...) written as the layer's values; the test script compares
 * the files of the two runs byte for byte (tests/scripts/mpi_ext.sh).
 * Completion order is not deterministic, so the completion calls record per request index, and
 * the sets they completed.
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "waitio_mpi.h"

static int ref;            /* 1: real MPI on MPI_COMM_WORLD; 0: the WaitIO layer on the universe */
static int me, n;
static uint64_t seed;
static FILE *out;
static WAITIO_MPI_Comm U;
/* statuses not looked at (MPI_STATUSES_IGNORE trips GCC's -Wstringop-overflow with MPICH) */
static MPI_Status ignored[64];

#define DIE(...) do { fprintf(stderr, "mpi_ext[%s rank %d]: ", ref ? "ref" : "wio", me); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)
#define W(call) do { int rc_ = (call); if (rc_) DIE("%s: %s (%s)", #call, waitio_strerror(rc_), \
    waitio_error_message()); } while (0)
#define M(call) do { int rc_ = (call); if (rc_ != MPI_SUCCESS) DIE("%s: MPI error %d", #call, rc_); } while (0)

/* ---- the shared random sequence and data ---- */

static uint64_t next_u64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t shared_state;
static int pick(int lo, int hi) { return lo + (int)(next_u64(&shared_state) % (uint64_t)(hi - lo + 1)); }

static int val(int rank, int i, int salt)
{
    uint64_t s = seed ^ ((uint64_t)rank << 40) ^ ((uint64_t)salt << 20) ^ (uint64_t)i;
    return (int)(next_u64(&s) % 100000);
}

static void fill_int(int *b, int count, int rank, int salt)
{
    for (int i = 0; i < count; i++)
        b[i] = val(rank, i, salt);
}

/* ---- the record ---- */

static void rec(const char *label, const void *buf, size_t bytes)
{
    fprintf(out, "%s [%zu]:", label, bytes);
    for (size_t i = 0; i < bytes; i++)
        fprintf(out, "%02x", ((const unsigned char *)buf)[i]);
    fputc('\n', out);
}

static void recf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(out, fmt, ap);
    va_end(ap);
    fputc('\n', out);
}

static int undef(int v) { return ref && v == MPI_UNDEFINED ? WAITIO_MPI_UNDEFINED : v; }

/* A status as (source, tag, bytes), MPI's wildcards as the layer's values. */
static void rec_status(const char *label, const void *st)
{
    int src, tag, bytes;
    if (ref) {
        const MPI_Status *s = st;
        src = s->MPI_SOURCE == MPI_ANY_SOURCE ? WAITIO_MPI_ANY_SOURCE : s->MPI_SOURCE;
        tag = s->MPI_TAG == MPI_ANY_TAG ? WAITIO_MPI_ANY_TAG : s->MPI_TAG;
        M(MPI_Get_count(s, MPI_BYTE, &bytes));
    } else {
        const int *s = st;
        src = s[WAITIO_MPI_SOURCE];
        tag = s[WAITIO_MPI_TAG];
        bytes = s[WAITIO_MPI_COUNT];
    }
    recf("%s status: source %d tag %d bytes %d", label, src, tag, bytes);
}

/* a status of either kind */
typedef union xstatus {
    MPI_Status m;
    int w[WAITIO_STATUS_SIZE];
} xstatus;

/* ---- point-to-point ---- */

static void test_sendrecv(void)
{
    int c = pick(1, 700), stag = pick(0, 30000), to = (me + 1) % n, from = (me + n - 1) % n;
    int *s = malloc(sizeof(int) * (size_t)c), *r = calloc((size_t)c + 5, sizeof(int));
    fill_int(s, c, me, 1);
    xstatus st;
    /* the receive side allows more than comes (count + 5) */
    if (ref)
        M(MPI_Sendrecv(s, c, MPI_INT, to, stag, r, c + 5, MPI_INT, from, MPI_ANY_TAG,
                       MPI_COMM_WORLD, &st.m));
    else
        W(WAITIO_MPI_Sendrecv(s, c, WAITIO_MPI_INT, to, stag, r, c + 5, WAITIO_MPI_INT, from,
                              WAITIO_MPI_ANY_TAG, U, st.w));
    rec("sendrecv data", r, sizeof(int) * (size_t)(c + 5));
    rec_status("sendrecv", &st);
    /* with oneself */
    int c2 = pick(1, 50), t2 = pick(0, 100);
    memset(r, 0, sizeof(int) * (size_t)c);
    if (ref)
        M(MPI_Sendrecv(s, c2, MPI_INT, me, t2, r, c2, MPI_INT, me, t2, MPI_COMM_WORLD, &st.m));
    else
        W(WAITIO_MPI_Sendrecv(s, c2, WAITIO_MPI_INT, me, t2, r, c2, WAITIO_MPI_INT, me, t2, U, st.w));
    rec("sendrecv self data", r, sizeof(int) * (size_t)c2);
    rec_status("sendrecv self", &st);
    free(s);
    free(r);
}

static void test_sendrecv_replace(void)
{
    int c = pick(1, 500), stag = pick(0, 30000), to = (me + n - 1) % n, from = (me + 1) % n;
    double *b = malloc(sizeof(double) * (size_t)c);
    for (int i = 0; i < c; i++)
        b[i] = val(me, i, 2) * 0.5;
    xstatus st;
    if (ref)
        M(MPI_Sendrecv_replace(b, c, MPI_DOUBLE, to, stag, from, stag, MPI_COMM_WORLD, &st.m));
    else
        W(WAITIO_MPI_Sendrecv_replace(b, c, WAITIO_MPI_DOUBLE, to, stag, from, stag, U, st.w));
    rec("sendrecv_replace data", b, sizeof(double) * (size_t)c);
    rec_status("sendrecv_replace", &st);
    free(b);
}

/* Rank r sends to r+1 a message it then finds by probing before receiving it. */
static void test_probe(void)
{
    int c = pick(1, 900), tag = pick(30001, 32000), to = (me + 1) % n, from = (me + n - 1) % n;
    int *s = malloc(sizeof(int) * (size_t)c), *r = calloc((size_t)c, sizeof(int));
    fill_int(s, c, me, 3);
    MPI_Request mr;
    WAITIO_MPI_Request wr;
    if (ref)
        M(MPI_Isend(s, c, MPI_INT, to, tag, MPI_COMM_WORLD, &mr));
    else
        W(WAITIO_MPI_Isend(s, c, WAITIO_MPI_INT, to, tag, U, &wr));
    xstatus st;
    int flag = 0, polls = 0;
    while (!flag) { /* Iprobe with a source wildcard until it is there */
        if (ref)
            M(MPI_Iprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &st.m));
        else
            W(WAITIO_MPI_Iprobe(WAITIO_MPI_ANY_SOURCE, tag, U, &flag, st.w));
        if (++polls > 20000000)
            DIE("iprobe never saw the message");
    }
    rec_status("iprobe", &st);
    int cnt_int, cnt_dbl, el_int, el_short;
    if (ref) {
        M(MPI_Get_count(&st.m, MPI_INT, &cnt_int));
        M(MPI_Get_count(&st.m, MPI_DOUBLE, &cnt_dbl));
        M(MPI_Get_elements(&st.m, MPI_INT, &el_int));
        M(MPI_Get_elements(&st.m, MPI_SHORT, &el_short));
    } else {
        W(WAITIO_MPI_Get_count(st.w, WAITIO_MPI_INT, &cnt_int));
        W(WAITIO_MPI_Get_count(st.w, WAITIO_MPI_DOUBLE, &cnt_dbl));
        W(WAITIO_MPI_Get_elements(st.w, WAITIO_MPI_INT, &el_int));
        W(WAITIO_MPI_Get_elements(st.w, WAITIO_MPI_SHORT, &el_short));
    }
    recf("get_count int %d double %d get_elements int %d short %d", cnt_int, undef(cnt_dbl),
         el_int, el_short);
    /* a blocking probe of the named source, any tag: the same message (still not received) */
    if (ref)
        M(MPI_Probe(from, MPI_ANY_TAG, MPI_COMM_WORLD, &st.m));
    else
        W(WAITIO_MPI_Probe(from, WAITIO_MPI_ANY_TAG, U, st.w));
    rec_status("probe", &st);
    if (ref) {
        M(MPI_Recv(r, c, MPI_INT, from, tag, MPI_COMM_WORLD, &st.m));
        M(MPI_Wait(&mr, MPI_STATUS_IGNORE));
    } else {
        W(WAITIO_MPI_Recv(r, c, WAITIO_MPI_INT, from, tag, U));
        W(WAITIO_MPI_Wait(&wr, WAITIO_MPI_STATUS_IGNORE));
    }
    rec("probed message data", r, sizeof(int) * (size_t)c);
    /* nothing more is there: Iprobe says no */
    if (ref)
        M(MPI_Iprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &st.m));
    else
        W(WAITIO_MPI_Iprobe(WAITIO_MPI_ANY_SOURCE, tag, U, &flag, st.w));
    recf("iprobe after receive: flag %d", flag);
    free(s);
    free(r);
}

/* ---- completions: receives from every other rank (K per rank), one inactive request ---- */

#define K 2
enum { C_WAITANY, C_WAITSOME, C_TESTANY, C_TESTALL, C_TESTSOME, C_N };
static const char *const cname[C_N] = {"waitany", "waitsome", "testany", "testall", "testsome"};

static void test_completion(int kind)
{
    int nr = (n - 1) * K + 1, tagbase = pick(0, 20000), counts[64];
    MPI_Request mreq[64], msend[64];
    WAITIO_MPI_Request wreq[64], wsend[64];
    int *rb[64], *sb[64];
    xstatus st[64];
    memset(wreq, 0, sizeof wreq); /* index 0 stays inactive (MPI_REQUEST_NULL) */
    mreq[0] = MPI_REQUEST_NULL;
    int k = 1, ns = 0;
    for (int j = 0; j < n; j++)
        for (int q = 0; q < K; q++) {
            if (j == me)
                continue;
            /* the count of messages from j to me, the same on both sides */
            uint64_t cs = seed ^ ((uint64_t)(j * 64 + me) << 8) ^ (uint64_t)(q + 16 * kind);
            int c = 1 + (int)(next_u64(&cs) % 400), tag = tagbase + j * K + q;
            counts[k] = c;
            rb[k] = calloc((size_t)c, sizeof(int));
            if (ref)
                M(MPI_Irecv(rb[k], c, MPI_INT, j, tag, MPI_COMM_WORLD, &mreq[k]));
            else
                W(WAITIO_MPI_Irecv(rb[k], c, WAITIO_MPI_INT, j, tag, U, &wreq[k]));
            k++;
        }
    for (int j = 0; j < n; j++)
        for (int q = 0; q < K; q++) {
            if (j == me)
                continue;
            uint64_t cs = seed ^ ((uint64_t)(me * 64 + j) << 8) ^ (uint64_t)(q + 16 * kind);
            int c = 1 + (int)(next_u64(&cs) % 400), tag = tagbase + me * K + q;
            sb[ns] = malloc(sizeof(int) * (size_t)c);
            fill_int(sb[ns], c, me, 100 + j * K + q);
            if (ref)
                M(MPI_Isend(sb[ns], c, MPI_INT, j, tag, MPI_COMM_WORLD, &msend[ns]));
            else
                W(WAITIO_MPI_Isend(sb[ns], c, WAITIO_MPI_INT, j, tag, U, &wsend[ns]));
            ns++;
        }
    int done[64] = {0}, finals[4] = {0};
    xstatus last;
    for (;;) {
        int idx = -1, flag = 0, outc = 0, ids[64];
        xstatus tmp[64];
        switch (kind) {
        case C_WAITANY:
            if (ref) M(MPI_Waitany(nr, mreq, &idx, &tmp[0].m));
            else W(WAITIO_MPI_Waitany(nr, wreq, &idx, tmp[0].w));
            idx = undef(idx);
            if (idx == WAITIO_MPI_UNDEFINED) {
                last = tmp[0];
                goto finished;
            }
            st[idx] = tmp[0];
            done[idx]++;
            break;
        case C_TESTANY:
            if (ref) M(MPI_Testany(nr, mreq, &idx, &flag, &tmp[0].m));
            else W(WAITIO_MPI_Testany(nr, wreq, &idx, &flag, tmp[0].w));
            idx = undef(idx);
            if (flag && idx == WAITIO_MPI_UNDEFINED) {
                last = tmp[0];
                goto finished;
            }
            if (flag) {
                st[idx] = tmp[0];
                done[idx]++;
            } else if (idx != WAITIO_MPI_UNDEFINED) {
                DIE("testany: no flag but index %d", idx);
            }
            break;
        case C_TESTALL: {
            xstatus all[64];
            if (ref) {
                MPI_Status ms[64];
                M(MPI_Testall(nr, mreq, &flag, ms));
                for (int i = 0; i < nr; i++)
                    all[i].m = ms[i];
            } else {
                int ws[64 * WAITIO_STATUS_SIZE];
                W(WAITIO_MPI_Testall(nr, wreq, &flag, ws));
                for (int i = 0; i < nr; i++)
                    memcpy(all[i].w, ws + WAITIO_STATUS_SIZE * i, sizeof all[i].w);
            }
            if (!flag)
                break;
            for (int i = 0; i < nr; i++) {
                st[i] = all[i];
                done[i]++;
            }
            /* again: every request is inactive now, so complete at once with empty statuses */
            if (ref) M(MPI_Testall(nr, mreq, &finals[0], ignored));
            else W(WAITIO_MPI_Testall(nr, wreq, &finals[0], WAITIO_MPI_STATUSES_IGNORE));
            last = all[0]; /* the inactive request's: empty */
            goto finished;
        }
        case C_WAITSOME:
        case C_TESTSOME:
            if (ref) {
                MPI_Status ms[64];
                if (kind == C_WAITSOME) M(MPI_Waitsome(nr, mreq, &outc, ids, ms));
                else M(MPI_Testsome(nr, mreq, &outc, ids, ms));
                for (int i = 0; i < nr; i++)
                    tmp[i].m = ms[i];
            } else {
                int ws[64 * WAITIO_STATUS_SIZE];
                if (kind == C_WAITSOME) W(WAITIO_MPI_Waitsome(nr, wreq, &outc, ids, ws));
                else W(WAITIO_MPI_Testsome(nr, wreq, &outc, ids, ws));
                for (int i = 0; i < nr; i++)
                    memcpy(tmp[i].w, ws + WAITIO_STATUS_SIZE * i, sizeof tmp[i].w);
            }
            outc = undef(outc);
            if (outc == WAITIO_MPI_UNDEFINED)
                goto finished;
            for (int i = 0; i < outc; i++) {
                st[ids[i]] = tmp[i];
                done[ids[i]]++;
            }
            break;
        }
    }
finished:
    for (int i = 1; i < nr; i++) {
        char label[64];
        snprintf(label, sizeof label, "%s request %d (completed %d times)", cname[kind], i, done[i]);
        rec(label, rb[i], sizeof(int) * (size_t)counts[i]);
        rec_status(label, &st[i]);
        free(rb[i]);
    }
    recf("%s: inactive request completed %d times", cname[kind], done[0]);
    if (kind != C_WAITSOME && kind != C_TESTSOME)
        rec_status("all inactive", &last);
    if (kind == C_TESTALL)
        recf("testall over inactive requests: flag %d", finals[0]);
    if (ref)
        M(MPI_Waitall(ns, msend, ignored));
    else
        W(WAITIO_MPI_Waitall(ns, wsend, WAITIO_MPI_STATUSES_IGNORE));
    for (int i = 0; i < ns; i++)
        free(sb[i]);
}

/* ---- communicators ---- */

typedef struct xcomm {
    MPI_Comm m;
    WAITIO_MPI_Comm w;
} xcomm;

static int is_null(const xcomm *c) { return ref ? c->m == MPI_COMM_NULL : c->w == WAITIO_MPI_COMM_NULL; }

/* Collectives and a ring exchange on c; records everything. */
static void exercise(const char *name, xcomm *c)
{
    int r, s;
    if (ref) {
        M(MPI_Comm_rank(c->m, &r));
        M(MPI_Comm_size(c->m, &s));
    } else {
        W(WAITIO_MPI_Comm_rank(c->w, &r));
        W(WAITIO_MPI_Comm_size(c->w, &s));
    }
    recf("%s: rank %d size %d", name, r, s);
    /* counts and roots from the seed and the name: the same in every member (not from the shared
     * sequence, which the processes outside this communicator do not draw from now) */
    uint64_t h = seed;
    for (const char *p = name; *p; p++)
        h = h * 131 + (unsigned char)*p;
    int cnt = 1 + (int)(next_u64(&h) % 3000), root = (int)(next_u64(&h) % (uint64_t)s);
    int rroot = (int)(next_u64(&h) % (uint64_t)s);
    int *a = malloc(sizeof(int) * (size_t)cnt), *b = calloc((size_t)cnt, sizeof(int));
    fill_int(a, cnt, me, 7);
    char label[96];
    if (ref) M(MPI_Allreduce(a, b, cnt, MPI_INT, MPI_SUM, c->m));
    else W(WAITIO_MPI_Allreduce(a, b, cnt, WAITIO_MPI_INT, WAITIO_MPI_SUM, c->w));
    snprintf(label, sizeof label, "%s allreduce", name);
    rec(label, b, sizeof(int) * (size_t)cnt);
    memset(b, 0, sizeof(int) * (size_t)cnt);
    if (ref) M(MPI_Reduce(a, b, cnt, MPI_INT, MPI_MAX, rroot, c->m));
    else W(WAITIO_MPI_Reduce(a, b, cnt, WAITIO_MPI_INT, WAITIO_MPI_MAX, rroot, c->w));
    snprintf(label, sizeof label, "%s reduce to %d", name, rroot);
    rec(label, b, sizeof(int) * (size_t)cnt);
    if (r != root)
        memset(a, 0, sizeof(int) * (size_t)cnt);
    if (ref) M(MPI_Bcast(a, cnt, MPI_INT, root, c->m));
    else W(WAITIO_MPI_Bcast(a, cnt, WAITIO_MPI_INT, root, c->w));
    snprintf(label, sizeof label, "%s bcast from %d", name, root);
    rec(label, a, sizeof(int) * (size_t)cnt);
    if (ref) M(MPI_Barrier(c->m));
    else W(WAITIO_MPI_Barrier(c->w));
    /* a ring in the communicator's own ranks */
    int x = val(me, 0, 9), y = -1;
    xstatus st;
    if (ref) M(MPI_Sendrecv(&x, 1, MPI_INT, (r + 1) % s, 5, &y, 1, MPI_INT, (r + s - 1) % s, 5, c->m, &st.m));
    else W(WAITIO_MPI_Sendrecv(&x, 1, WAITIO_MPI_INT, (r + 1) % s, 5, &y, 1, WAITIO_MPI_INT, (r + s - 1) % s, 5, c->w, st.w));
    recf("%s ring: got %d", name, y);
    rec_status(label, &st);
    free(a);
    free(b);
}

static void comm_free(xcomm *c)
{
    if (ref)
        M(MPI_Comm_free(&c->m));
    else
        W(WAITIO_MPI_Comm_free(&c->w));
    if (!is_null(c))
        DIE("comm_free left a communicator");
}

static void test_comms(void)
{
    xcomm a, b, d;
    /* split by parity with keys from the sequence (ties broken by rank) */
    int keys[64];
    for (int i = 0; i < n; i++)
        keys[i] = pick(0, 3);
    if (ref) M(MPI_Comm_split(MPI_COMM_WORLD, me % 2, keys[me], &a.m));
    else W(WAITIO_MPI_Comm_split(U, me % 2, keys[me], &a.w));
    exercise("split parity", &a);
    /* all but the last rank (several members per PB: the parts of the hierarchical path) */
    int color = me < n - 1 ? 3 : (ref ? MPI_UNDEFINED : WAITIO_MPI_UNDEFINED);
    if (ref) M(MPI_Comm_split(MPI_COMM_WORLD, color, n - me, &b.m));
    else W(WAITIO_MPI_Comm_split(U, color, n - me, &b.w));
    recf("split undefined color: null %d", is_null(&b));
    if (!is_null(&b)) {
        exercise("split all-but-last", &b);
        /* a split of a split */
        xcomm bb;
        int r;
        if (ref) {
            M(MPI_Comm_rank(b.m, &r));
            M(MPI_Comm_split(b.m, r / 2, -r, &bb.m));
        } else {
            W(WAITIO_MPI_Comm_rank(b.w, &r));
            W(WAITIO_MPI_Comm_split(b.w, r / 2, -r, &bb.w));
        }
        exercise("split of split", &bb);
        comm_free(&bb);
        comm_free(&b);
    }
    if (ref) M(MPI_Comm_dup(MPI_COMM_WORLD, &d.m));
    else W(WAITIO_MPI_Comm_dup(U, &d.w));
    exercise("dup", &d);
    comm_free(&d);
    comm_free(&a);
    /* groups: every rank but one, in an order from the sequence */
    int ranks[64], left = pick(0, n - 1), m = 0;
    for (int i = n - 1; i >= 0; i--)
        if (i != left)
            ranks[m++] = i;
    for (int i = m - 1; i > 0; i--) { /* shuffle */
        int j = pick(0, i), t = ranks[i];
        ranks[i] = ranks[j];
        ranks[j] = t;
    }
    int tag = pick(0, 1000), gsize, grank, wgsize, wgrank;
    xcomm cg = {MPI_COMM_NULL, WAITIO_MPI_COMM_NULL};
    if (ref) {
        MPI_Group wg, g;
        M(MPI_Comm_group(MPI_COMM_WORLD, &wg));
        M(MPI_Group_size(wg, &wgsize));
        M(MPI_Group_rank(wg, &wgrank));
        M(MPI_Group_incl(wg, m, ranks, &g));
        M(MPI_Group_size(g, &gsize));
        M(MPI_Group_rank(g, &grank));
        if (grank != MPI_UNDEFINED)
            M(MPI_Comm_create_group(MPI_COMM_WORLD, g, tag, &cg.m));
        M(MPI_Group_free(&g));
        M(MPI_Group_free(&wg));
        if (g != MPI_GROUP_NULL)
            DIE("group_free left a group");
    } else {
        WAITIO_MPI_Group wg, g;
        W(WAITIO_MPI_Comm_group(U, &wg));
        W(WAITIO_MPI_Group_size(wg, &wgsize));
        W(WAITIO_MPI_Group_rank(wg, &wgrank));
        W(WAITIO_MPI_Group_incl(wg, m, ranks, &g));
        W(WAITIO_MPI_Group_size(g, &gsize));
        W(WAITIO_MPI_Group_rank(g, &grank));
        if (grank != WAITIO_MPI_UNDEFINED)
            W(WAITIO_MPI_Comm_create_group(U, g, tag, &cg.w));
        W(WAITIO_MPI_Group_free(&g));
        W(WAITIO_MPI_Group_free(&wg));
        if (g != WAITIO_MPI_GROUP_NULL)
            DIE("group_free left a group");
    }
    recf("groups: world %d/%d, incl %d/%d", wgrank, wgsize, undef(grank), gsize);
    if (!is_null(&cg)) {
        exercise("create_group", &cg);
        comm_free(&cg);
    }
}

/* ---- non-blocking collectives ---- */

static void test_icoll(void)
{
    int cnt = pick(1, 2000), root = pick(0, n - 1), dcnt = pick(1, 700);
    int *bc = calloc((size_t)cnt, sizeof(int)), *s = malloc(sizeof(int) * (size_t)cnt);
    int *sum = calloc((size_t)cnt, sizeof(int)), *inplace = malloc(sizeof(int) * (size_t)cnt);
    double *dv = malloc(sizeof(double) * (size_t)dcnt), *dmax = calloc((size_t)dcnt, sizeof(double));
    if (me == root)
        fill_int(bc, cnt, me, 11);
    fill_int(s, cnt, me, 12);
    fill_int(inplace, cnt, me, 13);
    for (int i = 0; i < dcnt; i++)
        dv[i] = val(me, i, 14) / 8.0;
    MPI_Request mr[4];
    WAITIO_MPI_Request wr[4];
    if (ref) {
        M(MPI_Ibcast(bc, cnt, MPI_INT, root, MPI_COMM_WORLD, &mr[0]));
        M(MPI_Iallreduce(s, sum, cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &mr[1]));
        M(MPI_Ibarrier(MPI_COMM_WORLD, &mr[2]));
        M(MPI_Iallreduce(MPI_IN_PLACE, inplace, cnt, MPI_INT, MPI_BXOR, MPI_COMM_WORLD, &mr[3]));
    } else {
        W(WAITIO_MPI_Ibcast(bc, cnt, WAITIO_MPI_INT, root, U, &wr[0]));
        W(WAITIO_MPI_Iallreduce(s, sum, cnt, WAITIO_MPI_INT, WAITIO_MPI_SUM, U, &wr[1]));
        W(WAITIO_MPI_Ibarrier(U, &wr[2]));
        W(WAITIO_MPI_Iallreduce(WAITIO_MPI_IN_PLACE, inplace, cnt, WAITIO_MPI_INT, WAITIO_MPI_BXOR,
                                U, &wr[3]));
    }
    /* completed three ways: Test in a loop, Wait, Waitall */
    int flag = 0;
    while (!flag) {
        if (ref) M(MPI_Test(&mr[1], &flag, MPI_STATUS_IGNORE));
        else W(WAITIO_MPI_Test(&wr[1], &flag, WAITIO_MPI_STATUS_IGNORE));
    }
    if (ref) {
        M(MPI_Wait(&mr[0], MPI_STATUS_IGNORE));
        M(MPI_Waitall(2, &mr[2], ignored));
    } else {
        W(WAITIO_MPI_Wait(&wr[0], WAITIO_MPI_STATUS_IGNORE));
        W(WAITIO_MPI_Waitall(2, &wr[2], WAITIO_MPI_STATUSES_IGNORE));
    }
    rec("ibcast", bc, sizeof(int) * (size_t)cnt);
    rec("iallreduce sum", sum, sizeof(int) * (size_t)cnt);
    rec("iallreduce in place bxor", inplace, sizeof(int) * (size_t)cnt);
    /* one more, completed by Waitany beside an Ibarrier */
    if (ref) {
        M(MPI_Iallreduce(dv, dmax, dcnt, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, &mr[0]));
        M(MPI_Ibarrier(MPI_COMM_WORLD, &mr[1]));
    } else {
        W(WAITIO_MPI_Iallreduce(dv, dmax, dcnt, WAITIO_MPI_DOUBLE, WAITIO_MPI_MAX, U, &wr[0]));
        W(WAITIO_MPI_Ibarrier(U, &wr[1]));
    }
    int seen = 0;
    for (int i = 0; i < 3; i++) {
        int idx = -1;
        if (ref) M(MPI_Waitany(2, mr, &idx, MPI_STATUS_IGNORE));
        else W(WAITIO_MPI_Waitany(2, wr, &idx, WAITIO_MPI_STATUS_IGNORE));
        idx = undef(idx);
        if (idx != WAITIO_MPI_UNDEFINED)
            seen |= 1 << idx;
    }
    recf("waitany over icolls: completed mask %d", seen);
    rec("iallreduce max double", dmax, sizeof(double) * (size_t)dcnt);
    free(bc);
    free(s);
    free(sum);
    free(inplace);
    free(dv);
    free(dmax);
}

int main(int argc, char **argv)
{
    if (argc != 4 || (strcmp(argv[1], "wio") && strcmp(argv[1], "ref")))
        DIE("usage: mpi_ext wio|ref SEED OUT");
    ref = !strcmp(argv[1], "ref");
    seed = strtoull(argv[2], NULL, 0);
    shared_state = seed;
    alarm(60);
    MPI_Init(&argc, &argv);
    if (ref) {
        M(MPI_Comm_rank(MPI_COMM_WORLD, &me));
        M(MPI_Comm_size(MPI_COMM_WORLD, &n));
    } else {
        W(waitio_create_universe(&U));
        W(WAITIO_MPI_Comm_rank(U, &me));
        W(WAITIO_MPI_Comm_size(U, &n));
    }
    if (n < 2 || n > 16)
        DIE("needs 2..16 processes, has %d", n);
    char path[4096];
    snprintf(path, sizeof path, "%s.%d", argv[3], me);
    if (!(out = fopen(path, "w")))
        DIE("cannot write %s", path);
    recf("seed %llu, %d processes", (unsigned long long)seed, n);
    test_sendrecv();
    test_sendrecv_replace();
    test_probe();
    for (int k = 0; k < C_N; k++)
        test_completion(k);
    test_comms();
    test_icoll();
    fclose(out);
    if (!ref)
        W(waitio_finalize());
    MPI_Finalize();
    printf("mpi_ext %s rank %d: done\n", argv[1], me);
    return 0;
}
