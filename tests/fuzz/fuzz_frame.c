/* fuzz_frame.c — libFuzzer harness of the frame header decoder: anything either decodes to a
 * header within its type's bounds that re-encodes to the same header (the same bytes when the
 * encoder picks the same form; a full header the short form could carry re-encodes short), or
 * is rejected. */
#include <stdlib.h>
#include <string.h>
#include "core/frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < WIO_FRAME_HDR_SIZE)
        return 0;
    wio_frame_hdr h;
    const char *why = NULL;
    if (wio_frame_decode(data, &h, &why) != 0)
        return why ? 0 : (abort(), 0);
    uint8_t again[WIO_FRAME_HDR_SIZE];
    size_t len = wio_frame_encode(&h, again);
    if (len == wio_frame_hdr_len(data[0]) && memcmp(again, data, len) != 0)
        abort();
    wio_frame_hdr d;
    if (wio_frame_decode(again, &d, &why) != 0 || d.type != h.type || d.flags != h.flags || d.seq != h.seq ||
        d.credit != h.credit || d.gid != h.gid || d.src != h.src || d.tag != h.tag || d.len != h.len ||
        d.id != h.id || d.aux != h.aux)
        abort();
    if (h.type == WIO_FT_EAGER && h.len > WIO_EAGER_HARD_MAX)
        abort();
    return 0;
}
