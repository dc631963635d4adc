/* frame_codec.c — unit test of the frame header encoder/decoder: round trips, byte order on the
 * wire, and rejection of bad magic, version, type and oversize payload lengths. */
#include <string.h>
#include "check.h"
#include "core/frame.h"

static void test_roundtrip(void)
{
    wio_frame_hdr h = {.type = WIO_FT_EAGER, .flags = 0x1234, .seq = 0xdeadbeef, .credit = 77,
                       .gid = 5, .src = 9, .tag = 0x0102030405060708ull, .len = 1000,
                       .id = 0xffffffff00000001ull, .aux = 42};
    uint8_t wire[WIO_FRAME_HDR_SIZE];
    wio_frame_encode(&h, wire);
    /* fixed little-endian layout */
    CHECK(wire[0] == 'W' && wire[1] == 'T' && wire[2] == 'I' && wire[3] == 'O');
    CHECK(wire[4] == WIO_PROTO_VERSION && wire[5] == WIO_FT_EAGER);
    CHECK(wire[8] == 0xef && wire[11] == 0xde);
    CHECK(wire[24] == 0x08 && wire[31] == 0x01);
    wio_frame_hdr d;
    const char *why = NULL;
    CHECK(wio_frame_decode(wire, &d, &why) == 0);
    CHECK(d.type == h.type && d.flags == h.flags && d.seq == h.seq && d.credit == h.credit);
    CHECK(d.gid == h.gid && d.src == h.src && d.tag == h.tag && d.len == h.len);
    CHECK(d.id == h.id && d.aux == h.aux);
}

/* An EAGER frame without flags, id or aux, with a tag below 2^32 and of at most 65535 bytes takes
 * the 24-byte form; anything else the full one. */
static void test_short_form(void)
{
    wio_frame_hdr h = {.type = WIO_FT_EAGER, .seq = 0x01020304, .credit = 4096, .gid = 0xa0b0c0d0,
                       .src = 3, .tag = 0x88776655u, .len = WIO_FRAME_SHORT_MAX};
    uint8_t wire[WIO_FRAME_HDR_SIZE];
    CHECK(wio_frame_encode(&h, wire) == WIO_FRAME_SHORT_SIZE);
    CHECK(wire[0] == WIO_FRAME_SHORT_MARK && wire[1] == 0);
    CHECK(wio_frame_hdr_len(wire[0]) == WIO_FRAME_SHORT_SIZE);
    CHECK(wire[2] == 0xff && wire[3] == 0xff && wire[4] == 0x04 && wire[20] == 0x55 && wire[23] == 0x88);
    wio_frame_hdr d;
    const char *why = NULL;
    CHECK(wio_frame_decode(wire, &d, &why) == 0);
    CHECK(d.type == WIO_FT_EAGER && d.flags == 0 && d.seq == h.seq && d.credit == h.credit);
    CHECK(d.gid == h.gid && d.src == h.src && d.tag == h.tag && d.len == h.len && d.id == 0 && d.aux == 0);
    wire[1] = 1;
    CHECK(wio_frame_decode(wire, &d, &why) != 0 && why);
    /* one field the short form lacks, or one too large for it: the full form */
    wio_frame_hdr full[] = {h, h, h, h, h, h};
    full[0].len = WIO_FRAME_SHORT_MAX + 1;
    full[1].flags = WIO_FF_CMA;
    full[2].id = 1;
    full[3].aux = 1;
    full[4].type = WIO_FT_DATA;
    full[5].tag = (uint64_t)UINT32_MAX + 1;
    for (size_t i = 0; i < sizeof full / sizeof full[0]; i++) {
        CHECK(wio_frame_encode(&full[i], wire) == WIO_FRAME_HDR_SIZE);
        CHECK(wire[0] == 'W' && wio_frame_hdr_len(wire[0]) == WIO_FRAME_HDR_SIZE);
        CHECK(wio_frame_decode(wire, &d, &why) == 0 && d.len == full[i].len && d.flags == full[i].flags &&
              d.id == full[i].id && d.aux == full[i].aux && d.type == full[i].type && d.tag == full[i].tag);
    }
}

static int decode_fails(const uint8_t *wire)
{
    wio_frame_hdr d;
    const char *why = NULL;
    int rc = wio_frame_decode(wire, &d, &why);
    return rc != 0 && why != NULL;
}

static void test_rejects(void)
{
    wio_frame_hdr h = {.type = WIO_FT_RTS};
    uint8_t wire[WIO_FRAME_HDR_SIZE], bad[WIO_FRAME_HDR_SIZE];
    wio_frame_encode(&h, wire);
    memcpy(bad, wire, sizeof bad);
    bad[0] ^= 1;
    CHECK(decode_fails(bad));
    memcpy(bad, wire, sizeof bad);
    bad[4] = WIO_PROTO_VERSION + 1;
    CHECK(decode_fails(bad));
    memcpy(bad, wire, sizeof bad);
    bad[5] = 0;
    CHECK(decode_fails(bad));
    bad[5] = WIO_FT_MAX_;
    CHECK(decode_fails(bad));
    /* control frames carry no payload; an RTS at most the single-copy descriptor */
    h.type = WIO_FT_CTS;
    h.len = 1;
    wio_frame_encode(&h, bad);
    CHECK(decode_fails(bad));
    h.type = WIO_FT_RTS;
    h.len = WIO_RTS_PAYLOAD_MAX;
    wio_frame_encode(&h, bad);
    CHECK(!decode_fails(bad));
    h.len = WIO_RTS_PAYLOAD_MAX + 1;
    wio_frame_encode(&h, bad);
    CHECK(decode_fails(bad));
    /* per-type bounds */
    h.type = WIO_FT_HELLO;
    h.len = WIO_HANDSHAKE_MAX + 1;
    wio_frame_encode(&h, bad);
    CHECK(decode_fails(bad));
    h.type = WIO_FT_EAGER;
    h.len = WIO_EAGER_HARD_MAX;
    wio_frame_encode(&h, bad);
    CHECK(!decode_fails(bad));
    h.len = (uint64_t)WIO_EAGER_HARD_MAX + 1;
    wio_frame_encode(&h, bad);
    CHECK(decode_fails(bad));
    h.type = WIO_FT_DATA;
    h.len = ~0ull;
    wio_frame_encode(&h, bad);
    CHECK(decode_fails(bad));
    h.type = WIO_FT_TABLE;
    h.len = (uint64_t)WIO_TABLE_MAX + 1;
    wio_frame_encode(&h, bad);
    CHECK(decode_fails(bad));
}

/* Every single-byte corruption of a valid header either decodes to a header within its bounds
 * or is rejected: the decoder never accepts an out-of-bounds length. */
static void test_corruptions(void)
{
    wio_frame_hdr h = {.type = WIO_FT_DATA, .len = 4096, .seq = 3};
    uint8_t wire[WIO_FRAME_HDR_SIZE];
    wio_frame_encode(&h, wire);
    for (int pos = 0; pos < WIO_FRAME_HDR_SIZE; pos++)
        for (int v = 0; v < 256; v += 17) {
            uint8_t bad[WIO_FRAME_HDR_SIZE];
            memcpy(bad, wire, sizeof bad);
            bad[pos] = (uint8_t)v;
            wio_frame_hdr d;
            const char *why;
            if (wio_frame_decode(bad, &d, &why) == 0)
                CHECK(d.type > 0 && d.type < WIO_FT_MAX_ &&
                      (d.type != WIO_FT_DATA || d.len <= WIO_CHUNK_HARD_MAX));
        }
}

int main(void)
{
    test_roundtrip();
    test_short_form();
    test_rejects();
    test_corruptions();
    return check_report("frame_codec");
}
