/* fuzz_frame.c — libFuzzer harness of the frame header decoder: anything either decodes to a
 * header within its type's bounds that re-encodes to the same bytes, or is rejected. */
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
    wio_frame_encode(&h, again);
    if (memcmp(again, data, WIO_FRAME_HDR_SIZE) != 0)
        abort();
    if (h.type == WIO_FT_EAGER && h.len > WIO_EAGER_HARD_MAX)
        abort();
    return 0;
}
