/* boot_entries.c — unit test of the start-up parsers with address-table extensions
 * (src/boot/boot.c, docs/protocol.md "Start-up"): REGISTER and TABLE payloads whose entries
 * carry extensions of 0..WIO_PROC_EXT_MAX bytes parse back byte for byte; an extension over the
 * maximum, one or a fixed part running past the payload, nonzero reserved bytes, trailing
 * garbage and too many entries are refused; a PB's entries split into REGISTER blocks by bytes
 * (long extensions) or by count (none); the master's roster rebuilds the table from blocks that
 * arrived out of order, and refuses a block whose extensions would take the table past
 * WIO_TABLE_MAX. */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "boot/boot.h"

#define FIXED WIO_BOOT_ENTRY_LEN

/* Appends an entry (tcp on 127.0.0.1:port, shm token) with an extension of ext_len bytes whose
 * contents depend on seed; returns the new length. */
static size_t put_entry(uint8_t *buf, size_t at, uint16_t port, uint16_t ext_len, uint8_t seed)
{
    uint8_t *p = buf + at;
    memset(p, 0, FIXED);
    p[0] = 4;
    wio_put_le16(p + 2, port);
    p[4] = 127, p[7] = 1;
    wio_put_le64(p + 20, 0x1234);
    p[28] = WIO_TP_TCP | WIO_TP_SHM;
    wio_put_le64(p + 32, 0x5678);
    wio_put_le16(p + WIO_BOOT_ENTRY_EXT_AT, ext_len);
    for (size_t i = 0; i < ext_len; i++)
        p[FIXED + i] = (uint8_t)(seed * 31 + i * 7);
    return at + FIXED + ext_len;
}

static int ext_matches(const wio_proc *p, uint16_t ext_len, uint8_t seed)
{
    if (p->ext_len != ext_len || (ext_len == 0) != (p->ext == NULL))
        return 0;
    for (size_t i = 0; i < ext_len; i++)
        if (p->ext[i] != (uint8_t)(seed * 31 + i * 7))
            return 0;
    return 1;
}

static size_t put_reg_hdr(uint8_t *buf, uint32_t npb, uint32_t pb, uint32_t first, uint32_t size)
{
    wio_put_le32(buf, npb);
    wio_put_le32(buf + 4, pb);
    wio_put_le32(buf + 8, first);
    wio_put_le32(buf + 12, size);
    return WIO_BOOT_REGISTER_HDR;
}

static const char *parse_reg(const uint8_t *buf, size_t len, wio_boot_reg *r)
{
    const char *why = wio_boot_parse_register(buf, len, r);
    CHECK((why == NULL) == (r->entries != NULL));
    return why;
}

static void test_register(void)
{
    static uint8_t buf[WIO_REGISTER_MAX + 64];
    wio_boot_reg r;
    /* three entries: none, a few bytes, the largest extension */
    size_t n = put_reg_hdr(buf, 2, 1, 4, 8);
    n = put_entry(buf, n, 4000, 0, 1);
    n = put_entry(buf, n, 4001, 5, 2);
    n = put_entry(buf, n, 4002, WIO_PROC_EXT_MAX, 3);
    CHECK(parse_reg(buf, n, &r) == NULL);
    CHECK(r.k == 3 && r.first == 4 && r.size == 8 && r.pb == 1 && r.npb == 2);
    CHECK(r.k == 3 && ext_matches(&r.entries[0], 0, 1) && ext_matches(&r.entries[1], 5, 2) &&
          ext_matches(&r.entries[2], WIO_PROC_EXT_MAX, 3));
    CHECK(r.k == 3 && r.entries[2].addr.port == 4002);
    free(r.entries);
    /* trailing garbage: 1 byte, and a fixed part's worth minus one */
    CHECK(parse_reg(buf, n + 1, &r) != NULL);
    CHECK(parse_reg(buf, n + FIXED - 1, &r) != NULL);
    /* truncated: the last extension cut short, and the last fixed part cut short */
    CHECK(parse_reg(buf, n - 1, &r) != NULL);
    size_t two = put_entry(buf, put_reg_hdr(buf, 2, 1, 4, 8), 4000, 0, 1);
    two = put_entry(buf, two, 4001, 5, 2);
    CHECK(parse_reg(buf, two - 5 - 10, &r) != NULL);
    /* an extension of WIO_PROC_EXT_MAX + 1 bytes, all of them present */
    n = put_entry(buf, put_reg_hdr(buf, 1, 0, 0, 1), 4000, WIO_PROC_EXT_MAX + 1, 4);
    CHECK(parse_reg(buf, n, &r) != NULL);
    /* an extension length that runs past the payload (the largest one, 10 bytes present) */
    n = put_entry(buf, put_reg_hdr(buf, 1, 0, 0, 1), 4000, 10, 4);
    wio_put_le16(buf + WIO_BOOT_REGISTER_HDR + WIO_BOOT_ENTRY_EXT_AT, 0xffff);
    CHECK(parse_reg(buf, n, &r) != NULL);
    wio_put_le16(buf + WIO_BOOT_REGISTER_HDR + WIO_BOOT_ENTRY_EXT_AT, 11);
    CHECK(parse_reg(buf, n, &r) != NULL);
    wio_put_le16(buf + WIO_BOOT_REGISTER_HDR + WIO_BOOT_ENTRY_EXT_AT, 9); /* 1 byte left over */
    CHECK(parse_reg(buf, n, &r) != NULL);
    wio_put_le16(buf + WIO_BOOT_REGISTER_HDR + WIO_BOOT_ENTRY_EXT_AT, 10);
    CHECK(parse_reg(buf, n, &r) == NULL);
    free(r.entries);
    /* reserved bytes must be zero */
    buf[WIO_BOOT_REGISTER_HDR + WIO_BOOT_ENTRY_EXT_AT + 3] = 1;
    CHECK(parse_reg(buf, n, &r) != NULL);
    /* more entries than the PB has ranks after first */
    n = put_reg_hdr(buf, 1, 0, 6, 8);
    for (int i = 0; i < 3; i++)
        n = put_entry(buf, n, (uint16_t)(4000 + i), 1, 5);
    CHECK(parse_reg(buf, n, &r) != NULL);
    /* more than WIO_REGISTER_BLOCK entries, within WIO_REGISTER_MAX bytes */
    n = put_reg_hdr(buf, 1, 0, 0, 1 << 20);
    for (unsigned i = 0; i <= WIO_REGISTER_BLOCK; i++)
        n = put_entry(buf, n, 4000, 0, 0);
    CHECK(n <= WIO_REGISTER_MAX && parse_reg(buf, n, &r) != NULL);
    CHECK(parse_reg(buf, n - FIXED, &r) == NULL && r.k == (int)WIO_REGISTER_BLOCK);
    free(r.entries);
    /* over WIO_REGISTER_MAX bytes */
    n = put_reg_hdr(buf, 1, 0, 0, 1 << 20);
    while (n <= WIO_REGISTER_MAX - FIXED - WIO_PROC_EXT_MAX)
        n = put_entry(buf, n, 4000, WIO_PROC_EXT_MAX, 6);
    n = put_entry(buf, n, 4000, (uint16_t)(WIO_REGISTER_MAX + 1 - n - FIXED), 6);
    CHECK(n == WIO_REGISTER_MAX + 1 && parse_reg(buf, n, &r) != NULL);
    /* only the header */
    CHECK(parse_reg(buf, WIO_BOOT_REGISTER_HDR, &r) != NULL);
}

static size_t put_table(uint8_t *buf, const uint32_t *sizes, int npb, const uint16_t *ext_lens)
{
    wio_put_le32(buf, (uint32_t)npb);
    uint32_t total = 0;
    for (int p = 0; p < npb; p++) {
        wio_put_le32(buf + 4 + 4 * p, sizes[p]);
        total += sizes[p];
    }
    size_t n = 4 + 4 * (size_t)npb;
    for (uint32_t i = 0; i < total; i++)
        n = put_entry(buf, n, (uint16_t)(5000 + i), ext_lens[i], (uint8_t)i);
    return n;
}

static void test_table(void)
{
    static uint8_t buf[8 * (WIO_BOOT_ENTRY_LEN + WIO_PROC_EXT_MAX) + 64];
    const uint32_t sizes[2] = {2, 3};
    const uint16_t lens[5] = {0, WIO_PROC_EXT_MAX, 17, 0, 1};
    size_t n = put_table(buf, sizes, 2, lens);
    wio_boot_table t;
    CHECK(wio_boot_parse_table(buf, n, 2, &t) == NULL);
    CHECK(t.total == 5 && t.nprocs[0] == 2 && t.nprocs[1] == 3 && t.pb_offset[1] == 2);
    for (uint32_t i = 0; i < t.total; i++)
        CHECK(ext_matches(&t.procs[i], lens[i], (uint8_t)i) && t.procs[i].addr.port == 5000 + i);
    wio_boot_table_free(&t);
    CHECK(wio_boot_parse_table(buf, n + 1, 2, &t) != NULL);   /* trailing garbage */
    CHECK(wio_boot_parse_table(buf, n - 1, 2, &t) != NULL);   /* last extension truncated */
    CHECK(wio_boot_parse_table(buf, n - 1 - FIXED, 2, &t) != NULL); /* last entry cut */
    CHECK(wio_boot_parse_table(buf, n, 1, &t) != NULL);       /* NPB disagrees */
    /* one entry fewer than the sizes say, its bytes made up by a longer extension */
    const uint32_t fewer[2] = {2, 2};
    const uint16_t lens4[4] = {0, WIO_PROC_EXT_MAX, 17 + FIXED, 0};
    size_t m = put_table(buf, fewer, 2, lens4);
    wio_put_le32(buf + 8, 3);
    CHECK(wio_boot_parse_table(buf, m, 2, &t) != NULL);
    /* the second entry's extension over the maximum */
    const uint16_t over[5] = {0, WIO_PROC_EXT_MAX + 1, 17, 0, 0};
    n = put_table(buf, sizes, 2, over);
    CHECK(wio_boot_parse_table(buf, n, 2, &t) != NULL);
}

/* Blocks registered out of order, with extensions, come back in rank order, bytes intact. */
static void test_roster(void)
{
    wio_boot_roster r;
    REQUIRE(wio_boot_roster_init(&r, 2, 100) == 0);
    static uint8_t buf[4 * (WIO_BOOT_ENTRY_LEN + WIO_PROC_EXT_MAX) + 64];
    struct { int pb, first, size, k; uint16_t lens[2]; } blocks[] = {
        {1, 1, 3, 2, {WIO_PROC_EXT_MAX, 3}}, {0, 1, 2, 1, {9, 0}}, {1, 0, 3, 1, {0, 0}}, {0, 0, 2, 1, {1, 0}},
    };
    for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++) {
        size_t n = put_reg_hdr(buf, 2, (uint32_t)blocks[b].pb, (uint32_t)blocks[b].first, (uint32_t)blocks[b].size);
        for (int i = 0; i < blocks[b].k; i++) /* seed: the process id it will have */
            n = put_entry(buf, n, 6000, blocks[b].lens[i], (uint8_t)(blocks[b].pb * 2 + blocks[b].first + i));
        wio_boot_reg reg;
        REQUIRE(wio_boot_parse_register(buf, n, &reg) == NULL);
        CHECK(wio_boot_roster_add(&r, reg.pb, reg.first, reg.size, reg.k, reg.entries) == NULL);
        memset(buf, 0xee, n); /* the roster holds copies, not the caller's bytes */
        free(reg.entries);
    }
    CHECK(r.complete == 2);
    size_t len = 0;
    const char *why = NULL;
    uint8_t *t = wio_boot_roster_table(&r, &len, &why);
    REQUIRE(t != NULL);
    wio_boot_table tab;
    REQUIRE(wio_boot_parse_table(t, len, 2, &tab) == NULL);
    const uint16_t want[5] = {1, 9, 0, WIO_PROC_EXT_MAX, 3};
    CHECK(tab.total == 5);
    for (uint32_t i = 0; i < tab.total; i++)
        CHECK(ext_matches(&tab.procs[i], want[i], (uint8_t)i));
    wio_boot_table_free(&tab);
    free(t);
    wio_boot_roster_free(&r);
}

/* The most processes a table can describe leave room for about 127 of the largest extensions:
 * the block that would take the table past WIO_TABLE_MAX is refused, and nothing of it kept. */
static void test_roster_table_bound(void)
{
    wio_boot_roster r;
    REQUIRE(wio_boot_roster_init(&r, 1, WIO_PROCS_MAX) == 0);
    uint8_t *ext = calloc(1, WIO_PROC_EXT_MAX);
    REQUIRE(ext != NULL);
    wio_proc p = {.addr = {.family = 4, .port = 1}, .transports = WIO_TP_TCP, .ext = ext,
                  .ext_len = WIO_PROC_EXT_MAX};
    size_t room = WIO_TABLE_MAX - (4 + 4 + (size_t)WIO_BOOT_ENTRY_LEN * WIO_PROCS_MAX);
    int first = 0;
    while (wio_boot_roster_add(&r, 0, first, (int)WIO_PROCS_MAX, 1, &p) == NULL)
        first++;
    CHECK((size_t)first == room / WIO_PROC_EXT_MAX);
    CHECK(r.count[0] == first && r.ext_bytes == (uint64_t)first * WIO_PROC_EXT_MAX);
    p.ext_len = 0; /* entries without an extension still fit */
    CHECK(wio_boot_roster_add(&r, 0, first, (int)WIO_PROCS_MAX, 1, &p) == NULL);
    free(ext);
    wio_boot_roster_free(&r);
}

/* A PB's entries split into REGISTER blocks (what a PB rank 0 with the MPI adapter sends): by
 * bytes when the extensions are long, by count when there are none; every block parses, the
 * blocks tile the ranks, and the roster's table has every extension back. */
static void split_case(int n, uint16_t ext_len, size_t want_blocks)
{
    uint8_t *entries = malloc((size_t)n * (WIO_BOOT_ENTRY_LEN + ext_len)), *ext = malloc(ext_len + 1u);
    REQUIRE(entries && ext);
    size_t len = 0;
    for (int i = 0; i < n; i++) {
        for (size_t j = 0; j < ext_len; j++)
            ext[j] = (uint8_t)((uint8_t)i * 31 + j * 7);
        wio_proc p = {.addr = {.family = 4, .port = (uint16_t)(1000 + i)}, .transports = WIO_TP_TCP,
                      .ext = ext, .ext_len = ext_len};
        len += wio_boot_entry_encode(&p, entries + len);
    }
    uint8_t *regs = NULL;
    size_t regs_len = 0, *lens = NULL, nblocks = 0;
    REQUIRE(wio_boot_encode_blocks(1, 0, n + 3, 3, entries, len, n, &regs, &regs_len, &lens, &nblocks) == 0);
    CHECK(nblocks == want_blocks && regs_len == len + nblocks * WIO_BOOT_REGISTER_HDR);
    wio_boot_roster r;
    REQUIRE(wio_boot_roster_init(&r, 1, 1u << 20) == 0);
    wio_proc rest[3] = {{.addr = {.family = 4, .port = 9}, .transports = WIO_TP_TCP}};
    rest[1] = rest[2] = rest[0];
    CHECK(wio_boot_roster_add(&r, 0, 0, n + 3, 3, rest) == NULL); /* ranks 0..2 */
    const uint8_t *q = regs;
    int next = 3;
    for (size_t b = 0; b < nblocks; q += lens[b++]) {
        wio_boot_reg reg;
        CHECK(lens[b] <= WIO_REGISTER_MAX);
        REQUIRE(wio_boot_parse_register(q, lens[b], &reg) == NULL);
        CHECK(reg.first == next && reg.size == n + 3 && reg.k <= (int)WIO_REGISTER_BLOCK);
        next += reg.k;
        CHECK(wio_boot_roster_add(&r, reg.pb, reg.first, reg.size, reg.k, reg.entries) == NULL);
        free(reg.entries);
    }
    CHECK(next == n + 3 && r.complete == 1);
    size_t tlen = 0;
    const char *why = NULL;
    uint8_t *t = wio_boot_roster_table(&r, &tlen, &why);
    wio_boot_table tab;
    REQUIRE(t && wio_boot_parse_table(t, tlen, 1, &tab) == NULL);
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += !ext_matches(&tab.procs[3 + i], ext_len, (uint8_t)i) || tab.procs[3 + i].addr.port != 1000 + i;
    CHECK(tab.total == (uint32_t)n + 3 && bad == 0 && tab.procs[0].ext_len == 0);
    wio_boot_table_free(&tab);
    free(t);
    wio_boot_roster_free(&r);
    free(regs);
    free(lens);
    free(entries);
    free(ext);
}

static void test_split(void)
{
    /* 256 KiB blocks hold 125 entries with the largest extension: 300 -> 125 + 125 + 50 */
    split_case(300, WIO_PROC_EXT_MAX, 3);
    /* without extensions the count ends blocks: 5000 -> 2048 + 2048 + 904 */
    split_case(5000, 0, 3);
    split_case(1, 0, 1);
}

int main(void)
{
    test_split();
    test_register();
    test_table();
    test_roster();
    test_roster_table_bound();
    return check_report("boot_entries");
}
