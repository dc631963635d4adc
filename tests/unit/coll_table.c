/* coll_table.c — unit test of the collective tables and the model (src/mpi/coll_tune.c): a good
 * table parses and ranks each size class by the nearest measured size; garbage is refused with
 * file:line and the reason (long lines, bad numbers, unknown operations and paths, missing or
 * repeated fields, sizes out of order, a bad header); shapes match only exactly; a file is read
 * from disk; the model ranks by its costs (a slow PB MPI sends small collectives flat, a slow
 * link between the PBs keeps them hierarchical). */
#define WIO_LOG_SUBSYS WIO_SUB_COLL
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "mpi/coll_tune.h"

static const char good[] =
    "# written by waitio-tune: a comment of many words, more than sixteen of them, which only data lines may not have\r\n"
    "waitio-coll-table 1 npb=2 ppb=4 host=one mpi=Open_MPI-4.1\n"
    "\n"
    "allreduce 8 flat=10.5 hier=7.25 paired=5\n"
    "allreduce 65536 flat=100 hier=300 paired=150 segmented=120\n"
    "  bcast\t1048576 flat=900 pipeline=400 hier=500\n"
    "barrier 0 flat=4 hier=3\n";

static wio_coll_table t;

static int parse(const char *text, char *why, size_t cap)
{
    return wio_coll_table_parse(text, strlen(text), "t.tbl", &t, why, cap);
}

static void check_bad(const char *text, const char *reason)
{
    char why[320] = "";
    int rc = parse(text, why, sizeof why);
    CHECK(rc == -1);
    if (rc != -1 || !strstr(why, reason))
        fprintf(stderr, "table %.60s...: got '%s' (rc %d), wanted '%s'\n", text, why, rc, reason);
    CHECK(strstr(why, reason) != NULL);
}

#define HDR "waitio-coll-table 1 npb=2 ppb=4 host=one\n"

static void test_good(void)
{
    char why[320] = "";
    int rc = parse(good, why, sizeof why);
    if (rc)
        fprintf(stderr, "good table refused: %s\n", why);
    REQUIRE(rc == 0);
    CHECK(t.shape.npb == 2 && t.shape.ppb == 4 && t.shape.one_host == 1);
    CHECK(!strcmp(t.mpi, "Open_MPI-4.1"));
    CHECK(t.nsizes[WIO_COLL_OP_ALLREDUCE] == 2 && t.nsizes[WIO_COLL_OP_BCAST] == 1);
    CHECK(t.nsizes[WIO_COLL_OP_REDUCE] == 0 && t.nsizes[WIO_COLL_OP_BARRIER] == 1);
    CHECK(t.bytes[WIO_COLL_OP_ALLREDUCE][1] == 65536);
    CHECK(t.usec[WIO_COLL_OP_ALLREDUCE][0][WIO_COLL_PATH_HIER_] == 7.25);
    CHECK(t.usec[WIO_COLL_OP_ALLREDUCE][0][WIO_COLL_PATH_SEGMENTED_] == 0);

    wio_coll_order o;
    memset(&o, 0, sizeof o);
    wio_coll_table_order(&t, &o);
    CHECK(o.from_table[WIO_COLL_OP_ALLREDUCE] && o.from_table[WIO_COLL_OP_BCAST] && !o.from_table[WIO_COLL_OP_REDUCE]);
    unsigned all = (1u << WIO_COLL_PATH_COUNT_) - 1, flat_hier = 3;
    /* 8 B and anything nearer 8 than 64 KiB on a log scale: paired; nearer 64 KiB: flat */
    CHECK(wio_coll_order_pick(&o, WIO_COLL_OP_ALLREDUCE, 8, all) == WIO_COLL_PATH_PAIRED_);
    CHECK(wio_coll_order_pick(&o, WIO_COLL_OP_ALLREDUCE, 512, all) == WIO_COLL_PATH_PAIRED_);
    CHECK(wio_coll_order_pick(&o, WIO_COLL_OP_ALLREDUCE, 8, flat_hier) == WIO_COLL_PATH_HIER_);
    CHECK(wio_coll_order_pick(&o, WIO_COLL_OP_ALLREDUCE, 8192, all) == WIO_COLL_PATH_FLAT_);
    CHECK(wio_coll_order_pick(&o, WIO_COLL_OP_ALLREDUCE, 1u << 30, all) == WIO_COLL_PATH_FLAT_);
    /* unmeasured paths come last: segmented is never taken at 8 B while flat is allowed */
    CHECK(wio_coll_order_pick(&o, WIO_COLL_OP_ALLREDUCE, 8, 1u | 1u << WIO_COLL_PATH_SEGMENTED_) == WIO_COLL_PATH_FLAT_);
    CHECK(wio_coll_order_pick(&o, WIO_COLL_OP_BCAST, 8, all) == WIO_COLL_PATH_PIPELINE_);
    CHECK(wio_coll_order_pick(&o, WIO_COLL_OP_BCAST, 8, flat_hier) == WIO_COLL_PATH_HIER_);
    CHECK(wio_coll_order_pick(&o, WIO_COLL_OP_BARRIER, 0, all) == WIO_COLL_PATH_HIER_);

    wio_coll_shape same = {2, 4, 1}, other_host = {2, 4, 0}, other_ppb = {2, 8, 1}, uneven = {2, 0, 1};
    CHECK(wio_coll_table_matches(&t, &same));
    CHECK(!wio_coll_table_matches(&t, &other_host));
    CHECK(!wio_coll_table_matches(&t, &other_ppb));
    CHECK(!wio_coll_table_matches(&t, &uneven));
}

static void test_garbage(void)
{
    char longline[400];
    memset(longline, 'x', sizeof longline);
    memcpy(longline, HDR "allreduce 8 flat=1 ", strlen(HDR "allreduce 8 flat=1 "));
    memcpy(longline + sizeof longline - 2, "\n", 2);
    check_bad(longline, "t.tbl:2: line longer than 255 characters");
    check_bad("", "no header line");
    check_bad("# only a comment\n", "no header line");
    check_bad(HDR, "no measurements");
    check_bad("allreduce 8 flat=1\n", "t.tbl:1: the first line must be the header");
    check_bad("waitio-coll-table 2 npb=2 ppb=4 host=one\nallreduce 8 flat=1\n", "unsupported table version");
    check_bad("waitio-coll-table 1 npb=0 ppb=4 host=one\n", "npb is not an integer");
    check_bad("waitio-coll-table 1 npb=2x ppb=4 host=one\n", "npb is not an integer");
    check_bad("waitio-coll-table 1 npb=2 ppb=99999999999999999999999 host=one\n", "ppb is not an integer");
    check_bad("waitio-coll-table 1 npb=2 ppb=4 host=two\n", "host is not 'one' or 'several'");
    check_bad("waitio-coll-table 1 npb=2 ppb=4\n", "needs npb=, ppb= and host=");
    check_bad("waitio-coll-table 1 npb=2 npb=3 ppb=4 host=one\n", "unknown or repeated header key");
    check_bad("waitio-coll-table 1 npb=2 ppb=4 host=one colour=red\n", "unknown or repeated header key");
    check_bad("waitio-coll-table 1 npb=2 ppb=4 host=one mpi=a/b\n", "mpi is not a name");
    check_bad(HDR "gather 8 flat=1\n", "t.tbl:2: unknown operation");
    check_bad(HDR "allreduce 8 flat=1 fast=2\n", "unknown path");
    check_bad(HDR "allreduce -8 flat=1\n", "bytes is not an integer");
    check_bad(HDR "allreduce 8K flat=1\n", "bytes is not an integer");
    check_bad(HDR "allreduce 2000000000000 flat=1\n", "bytes is not an integer");
    check_bad(HDR "allreduce 8 flat=abc\n", "not a time in microseconds");
    check_bad(HDR "allreduce 8 flat=0\n", "not a time in microseconds");
    check_bad(HDR "allreduce 8 flat=-1\n", "not a time in microseconds");
    check_bad(HDR "allreduce 8 flat=nan\n", "not a time in microseconds");
    check_bad(HDR "allreduce 8 flat=1e400\n", "not a time in microseconds");
    check_bad(HDR "allreduce 8 flat=1.5us\n", "not a time in microseconds");
    check_bad(HDR "allreduce 8 flat\n", "expected PATH=USEC");
    check_bad(HDR "allreduce 8\n", "expected OP BYTES PATH=USEC");
    check_bad(HDR "allreduce 8 hier=1\n", "every line needs flat=USEC");
    check_bad(HDR "allreduce 8 flat=1 flat=2\n", "path given twice");
    check_bad(HDR "allreduce 64 flat=1\nallreduce 8 flat=1\n", "t.tbl:3: sizes of an operation must ascend");
    check_bad(HDR "allreduce 8 flat=1\nallreduce 8 flat=1\n", "must ascend");
    check_bad(HDR "barrier 8 flat=1\n", "a barrier moves 0 bytes");
    check_bad(HDR "allreduce 8 flat=1 a b c d e f g h i j k l m n o\n", "more than 16 fields");
    static const char nul[] = HDR "allreduce 8 flat=1\0 hier=2\n";
    char why[320] = "";
    CHECK(wio_coll_table_parse(nul, sizeof nul - 1, "t.tbl", &t, why, sizeof why) == -1 && strstr(why, "NUL byte"));
    /* 65 sizes for one operation */
    size_t cap = 80 * 70, n = 0;
    char *many = malloc(cap);
    REQUIRE(many);
    n += (size_t)snprintf(many + n, cap - n, HDR);
    for (int i = 0; i < 65; i++)
        n += (size_t)snprintf(many + n, cap - n, "allreduce %d flat=1\n", i + 1);
    check_bad(many, "more than 64 sizes");
    free(many);
}

static void test_file(void)
{
    char path[] = "/tmp/coll_table_XXXXXX", why[320] = "";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    REQUIRE(write(fd, good, strlen(good)) == (ssize_t)strlen(good));
    close(fd);
    CHECK(wio_coll_table_load(path, &t, why, sizeof why) == 0);
    CHECK(t.nsizes[WIO_COLL_OP_ALLREDUCE] == 2);
    unlink(path);
    CHECK(wio_coll_table_load(path, &t, why, sizeof why) == -1 && strstr(why, path));
    CHECK(wio_coll_table_load("/tmp", &t, why, sizeof why) == -1 && strstr(why, "not a regular file"));
}

static void test_model(void)
{
    /* fast shared-memory link, a slow PB MPI: small allreduce flat */
    wio_coll_params p = {.npb = 2, .ppb = 8, .nprocs = 16, .one_host = 1};
    double pb_slow[WIO_COLL_M_COUNT] = {20e-6, 20e-6, 60e-6, 20e-6, 60e-6, 25e-6, 90e-6};
    memcpy(p.pb, pb_slow, sizeof p.pb);
    p.link_small = 0.5e-6;
    p.link_large = 8e-6;
    wio_coll_order o;
    memset(&o, 0, sizeof o);
    wio_coll_model_order(&p, &o);
    unsigned all = (1u << WIO_COLL_PATH_COUNT_) - 1;
    CHECK(wio_coll_order_pick(&o, WIO_COLL_OP_ALLREDUCE, 8, all) == WIO_COLL_PATH_FLAT_);
    CHECK(wio_coll_order_pick(&o, WIO_COLL_OP_BARRIER, 0, all) == WIO_COLL_PATH_FLAT_);
    /* a slow link between the PBs (several hosts), a fast PB MPI: hierarchical variants */
    double pb_fast[WIO_COLL_M_COUNT] = {1e-6, 1e-6, 10e-6, 1e-6, 12e-6, 1.5e-6, 20e-6};
    memcpy(p.pb, pb_fast, sizeof p.pb);
    p.one_host = 0;
    p.link_small = 5e-6;
    p.link_large = 70e-6;
    memset(&o, 0, sizeof o);
    wio_coll_model_order(&p, &o);
    int small = wio_coll_order_pick(&o, WIO_COLL_OP_ALLREDUCE, 8, all);
    CHECK(small == WIO_COLL_PATH_PAIRED_ || small == WIO_COLL_PATH_HIER_);
    CHECK(wio_coll_order_pick(&o, WIO_COLL_OP_ALLREDUCE, 1u << 20, all) == WIO_COLL_PATH_SEGMENTED_);
    CHECK(wio_coll_order_pick(&o, WIO_COLL_OP_BARRIER, 0, all) == WIO_COLL_PATH_HIER_);
    CHECK(wio_coll_order_pick(&o, WIO_COLL_OP_BCAST, 1u << 20, all) == WIO_COLL_PATH_PIPELINE_);
    CHECK(wio_coll_order_pick(&o, WIO_COLL_OP_REDUCE, 1u << 20, all) == WIO_COLL_PATH_HIER_);
    /* the flat bcast and reduce as measured on the instance win over lg N link hops: 2 x 4 on 2
     * cores (this VM: flat 2.5 / 119.5 us bcast, 2.4 / 175.3 us reduce at 8 B / 64 KiB while one
     * link took 5.2 / 14.2 us) rank flat first for small messages and hier for large ones */
    wio_coll_params v = {.npb = 2, .ppb = 4, .nprocs = 8, .one_host = 1, .oversubscribed = 1};
    double pb_vm[WIO_COLL_M_COUNT] = {18.1e-6, 1.8e-6, 35.7e-6, 3.7e-6, 78.8e-6, 23.9e-6, 186.3e-6};
    memcpy(v.pb, pb_vm, sizeof v.pb);
    v.link_small = 5.2e-6;
    v.link_large = 14.2e-6;
    memset(&o, 0, sizeof o);
    wio_coll_model_order(&v, &o);
    CHECK(wio_coll_order_pick(&o, WIO_COLL_OP_REDUCE, 1u << 20, all) == WIO_COLL_PATH_FLAT_); /* lg N hops */
    v.have_flat = 1;
    v.flat_bcast[0] = 2.5e-6, v.flat_bcast[1] = 119.5e-6;
    v.flat_reduce[0] = 2.4e-6, v.flat_reduce[1] = 175.3e-6;
    memset(&o, 0, sizeof o);
    wio_coll_model_order(&v, &o);
    CHECK(wio_coll_order_pick(&o, WIO_COLL_OP_BCAST, 8, all) == WIO_COLL_PATH_FLAT_);
    CHECK(wio_coll_order_pick(&o, WIO_COLL_OP_REDUCE, 8, all) == WIO_COLL_PATH_FLAT_);
    CHECK(wio_coll_order_pick(&o, WIO_COLL_OP_BCAST, 256u << 10, all) == WIO_COLL_PATH_HIER_);
    CHECK(wio_coll_order_pick(&o, WIO_COLL_OP_REDUCE, 1u << 20, all) == WIO_COLL_PATH_HIER_);
    CHECK(fabs(wio_coll_model_cost(&v, WIO_COLL_OP_BCAST, WIO_COLL_PATH_FLAT_, 8) - 2.5e-6) < 1e-12);
    /* paths that do not do an operation cost infinity and come last */
    CHECK(isinf(wio_coll_model_cost(&p, WIO_COLL_OP_REDUCE, WIO_COLL_PATH_PAIRED_, 8)));
    CHECK(wio_coll_model_cost(&p, WIO_COLL_OP_ALLREDUCE, WIO_COLL_PATH_PAIRED_, 8) > 0);
    /* a table's operations keep their ranking */
    memset(&o, 0, sizeof o);
    o.from_table[WIO_COLL_OP_BARRIER] = 1; /* all-zero ranking: flat first */
    wio_coll_model_order(&p, &o);
    CHECK(wio_coll_order_pick(&o, WIO_COLL_OP_BARRIER, 0, all) == WIO_COLL_PATH_FLAT_);
    CHECK(wio_coll_size_class(0) == 0 && wio_coll_size_class(1) == 0 && wio_coll_size_class(8) == 3);
    CHECK(wio_coll_size_class(65535) == 15 && wio_coll_size_class((size_t)-1) == WIO_COLL_CLASSES - 1);
}

int main(void)
{
    test_good();
    test_garbage();
    test_file();
    test_model();
    return check_report("coll_table");
}
