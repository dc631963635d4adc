/* fuzz_register.c — libFuzzer harness of the start-up parsers: REGISTER payloads and address
 * TABLEs (first byte picks which, and the PB count for tables). */
#include <stdlib.h>
#include "boot/boot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if (data[0] & 1) {
        wio_boot_reg r;
        if (!wio_boot_parse_register(data + 1, size - 1, &r)) {
            if (r.k < 1 || r.first + r.k > r.size || r.pb >= r.npb)
                abort();
            free(r.entries);
        }
    } else {
        wio_boot_table t;
        int npb = 1 + (data[0] >> 1);
        if (!wio_boot_parse_table(data + 1, size - 1, npb, &t)) {
            uint64_t sum = 0;
            for (int p = 0; p < npb; p++)
                sum += (uint64_t)t.nprocs[p];
            if (sum != t.total)
                abort();
            wio_boot_table_free(&t);
        }
    }
    return 0;
}
