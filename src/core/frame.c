/* frame.c — encodes and validates the frame headers, full and short (see frame.h,
 * docs/protocol.md). */
#include <string.h>
#include "frame.h"

static int frame_fits_short(const wio_frame_hdr *h)
{
    return h->type == WIO_FT_EAGER && h->flags == 0 && h->id == 0 && h->aux == 0 && h->len <= WIO_FRAME_SHORT_MAX &&
           h->tag <= UINT32_MAX;
}

/* The short EAGER header: mark (which is also the protocol version's), a reserved zero byte,
 * le16 len, le32 seq, credit, gid, src, tag. */
static void frame_encode_short(const wio_frame_hdr *h, uint8_t *out)
{
    out[0] = WIO_FRAME_SHORT_MARK;
    out[1] = 0;
    wio_put_le16(out + 2, (uint16_t)h->len);
    wio_put_le32(out + 4, h->seq);
    wio_put_le32(out + 8, h->credit);
    wio_put_le32(out + 12, h->gid);
    wio_put_le32(out + 16, h->src);
    wio_put_le32(out + 20, (uint32_t)h->tag);
}

static int frame_decode_short(const uint8_t *in, wio_frame_hdr *h, const char **why)
{
    if (in[1] != 0) {
        *why = "nonzero reserved byte in a short header";
        return -1;
    }
    *h = (wio_frame_hdr){.type = WIO_FT_EAGER, .len = wio_get_le16(in + 2), .seq = wio_get_le32(in + 4),
                         .credit = wio_get_le32(in + 8), .gid = wio_get_le32(in + 12),
                         .src = wio_get_le32(in + 16), .tag = wio_get_le32(in + 20)};
    return 0;
}

size_t wio_frame_encoded_size(const wio_frame_hdr *h)
{
    return frame_fits_short(h) ? WIO_FRAME_SHORT_SIZE : WIO_FRAME_HDR_SIZE;
}

size_t wio_frame_encode(const wio_frame_hdr *h, uint8_t out[WIO_FRAME_HDR_SIZE])
{
    if (frame_fits_short(h)) {
        frame_encode_short(h, out);
        return WIO_FRAME_SHORT_SIZE;
    }
    wio_put_le32(out + 0, WIO_FRAME_MAGIC);
    out[4] = WIO_PROTO_VERSION;
    out[5] = h->type;
    wio_put_le16(out + 6, h->flags);
    wio_put_le32(out + 8, h->seq);
    wio_put_le32(out + 12, h->credit);
    wio_put_le32(out + 16, h->gid);
    wio_put_le32(out + 20, h->src);
    wio_put_le64(out + 24, h->tag);
    wio_put_le64(out + 32, h->len);
    wio_put_le64(out + 40, h->id);
    wio_put_le64(out + 48, h->aux);
    return WIO_FRAME_HDR_SIZE;
}

static uint64_t payload_bound(unsigned type)
{
    switch (type) {
    case WIO_FT_HELLO:
    case WIO_FT_HELLO_ACK:
    case WIO_FT_AUTH:
    case WIO_FT_SHM_OFFER:
    case WIO_FT_SHM_READY: return WIO_HANDSHAKE_MAX;
    case WIO_FT_EAGER: return WIO_EAGER_HARD_MAX;
    case WIO_FT_DATA: return WIO_CHUNK_HARD_MAX;
    case WIO_FT_REGISTER: return WIO_REGISTER_MAX;
    case WIO_FT_TABLE: return WIO_TABLE_MAX;
    case WIO_FT_ERROR: return WIO_ERROR_TEXT_MAX;
    case WIO_FT_TABLE_REF: return WIO_TABLE_REF_MAX;
    case WIO_FT_RTS: return WIO_RTS_PAYLOAD_MAX;
    case WIO_FT_RMA:
    case WIO_FT_RMA_REPLY: return WIO_RMA_PAYLOAD_MAX;
    default: return 0; /* CTS, CREDIT, BYE, IDLE_CLOSE, ACCEPT, TABLE_FETCH, TABLE_RELEASE: none */
    }
}

int wio_frame_decode(const uint8_t *in, wio_frame_hdr *h, const char **why)
{
    if (in[0] == WIO_FRAME_SHORT_MARK)
        return frame_decode_short(in, h, why);
    if (wio_get_le32(in) != WIO_FRAME_MAGIC) {
        *why = "bad magic number";
        return -1;
    }
    if (in[4] != WIO_PROTO_VERSION) {
        *why = "unsupported protocol version";
        return -1;
    }
    h->type = in[5];
    if (h->type == 0 || h->type >= WIO_FT_MAX_) {
        *why = "unknown frame type";
        return -1;
    }
    h->flags = wio_get_le16(in + 6);
    h->seq = wio_get_le32(in + 8);
    h->credit = wio_get_le32(in + 12);
    h->gid = wio_get_le32(in + 16);
    h->src = wio_get_le32(in + 20);
    h->tag = wio_get_le64(in + 24);
    h->len = wio_get_le64(in + 32);
    h->id = wio_get_le64(in + 40);
    h->aux = wio_get_le64(in + 48);
    if (h->len > payload_bound(h->type)) {
        *why = "payload length exceeds the bound for its frame type";
        return -1;
    }
    return 0;
}

const char *wio_frame_type_name(unsigned type)
{
    static const char *const names[WIO_FT_MAX_] = {
        "?", "HELLO", "HELLO_ACK", "AUTH", "EAGER", "RTS", "CTS",
        "DATA", "CREDIT", "BYE", "REGISTER", "TABLE", "ERROR", "IDLE_CLOSE", "SHM_OFFER", "SHM_READY",
        "ACCEPT", "RMA", "RMA_REPLY", "TABLE_REF", "TABLE_FETCH", "TABLE_RELEASE",
    };
    return type < WIO_FT_MAX_ ? names[type] : "?";
}

void wio_seg_encode(const wio_seg_hdr *h, uint8_t out[WIO_SEG_HDR_SIZE])
{
    memset(out, 0, WIO_SEG_HDR_SIZE);
    wio_put_le64(out, WIO_SEG_MAGIC);
    wio_put_le16(out + 8, WIO_SEG_VERSION);
    wio_put_le16(out + 10, h->flags);
    wio_put_le64(out + 16, h->stream);
    wio_put_le64(out + 24, h->seq);
    wio_put_le64(out + 32, h->len);
}

int wio_seg_decode(const uint8_t in[WIO_SEG_HDR_SIZE], uint64_t max_len, wio_seg_hdr *h, const char **why)
{
    if (wio_get_le64(in) != WIO_SEG_MAGIC) {
        *why = "not a WaitIO segment (bad magic number)";
        return -1;
    }
    if (wio_get_le16(in + 8) != WIO_SEG_VERSION) {
        *why = "unsupported segment version";
        return -1;
    }
    h->flags = wio_get_le16(in + 10);
    h->stream = wio_get_le64(in + 16);
    h->seq = wio_get_le64(in + 24);
    h->len = wio_get_le64(in + 32);
    if ((h->flags & ~WIO_SEG_FIN) != 0 || wio_get_le32(in + 12) != 0 || wio_get_le64(in + 40) != 0) {
        *why = "unknown flags or nonzero reserved fields";
        return -1;
    }
    if (h->len > max_len) {
        *why = "segment longer than any writer may make it";
        return -1;
    }
    return 0;
}
