/* fuzz_register.c — libFuzzer harness of the start-up parsers and of the master's roster:
 * REGISTER payloads, address TABLEs (entries of a 44-byte fixed part and an extension of up to
 * WIO_PROC_EXT_MAX bytes), and sequences of registrations fed to a roster the way the master
 * does (first byte picks which: odd and (b & 3) == 3 the roster, other odd bytes one REGISTER,
 * even bytes a table with 1 + b / 2 PBs). A parsed entry's extension lies within the parser's
 * own allocation (ASan sees any read past it) and is never longer than WIO_PROC_EXT_MAX.
 * Roster input: byte 1 picks the PB count (1 + (b & 3)), bytes 2..3 the limit (1 + le16, so
 * that claims beyond it are tried), then records of le16 length + a REGISTER payload. Checked:
 * the PBs' claims together never pass the limit, no PB counts more ranks than its size, what
 * the roster holds stays within a bit per admitted rank plus twice the bytes received (a claim
 * costs nothing until its ranks arrive), and a complete roster's table parses back whole. */
#include <stdlib.h>
#include <string.h>
#include "boot/boot.h"

/* The extensions' bytes together, each read whole (ASan checks every byte is the parser's). */
static uint64_t ext_sum(const wio_proc *p, size_t n)
{
    uint64_t sum = 0;
    volatile uint8_t sink = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i].ext_len > WIO_PROC_EXT_MAX || (p[i].ext_len && !p[i].ext))
            abort();
        for (size_t j = 0; j < p[i].ext_len; j++)
            sink ^= p[i].ext[j];
        sum += p[i].ext_len;
    }
    (void)sink;
    return sum;
}

static void fuzz_roster(const uint8_t *data, size_t size)
{
    if (size < 4)
        return;
    int npb = 1 + (data[1] & 3);
    uint32_t max_procs = 1u + (uint32_t)(data[2] | data[3] << 8);
    wio_boot_roster r;
    if (wio_boot_roster_init(&r, npb, max_procs) != 0)
        return;
    size_t at = 4, received = 0;
    while (at + 2 <= size) {
        size_t len = (size_t)(data[at] | data[at + 1] << 8);
        at += 2;
        if (len > size - at)
            len = size - at;
        wio_boot_reg reg;
        if (!wio_boot_parse_register(data + at, len, &reg)) {
            received += len;
            if (reg.npb == npb)
                (void)wio_boot_roster_add(&r, reg.pb, reg.first, reg.size, reg.k, reg.entries);
            free(reg.entries);
        }
        at += len;
        if (r.claimed > max_procs)
            abort();
        for (int p = 0; p < npb; p++)
            if (r.count[p] > (r.size[p] < 0 ? 0 : r.size[p]))
                abort();
        if (r.held > (max_procs + 7) / 8 + (size_t)npb + 2 * received)
            abort();
    }
    if (r.complete == npb) {
        size_t tlen = 0;
        const char *why = NULL;
        uint8_t *t = wio_boot_roster_table(&r, &tlen, &why);
        wio_boot_table tab;
        if (!t || wio_boot_parse_table(t, tlen, npb, &tab) != NULL || tab.total != r.claimed)
            abort();
        if (ext_sum(tab.procs, tab.total) != r.ext_bytes)
            abort();
        wio_boot_table_free(&tab);
        free(t);
    }
    wio_boot_roster_free(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if ((data[0] & 3) == 3) {
        fuzz_roster(data, size);
    } else if (data[0] & 1) {
        wio_boot_reg r;
        if (!wio_boot_parse_register(data + 1, size - 1, &r)) {
            if (r.k < 1 || r.first + r.k > r.size || r.pb >= r.npb || r.k > (int)WIO_REGISTER_BLOCK ||
                ext_sum(r.entries, (size_t)r.k) + (uint64_t)r.k * WIO_BOOT_ENTRY_LEN + WIO_BOOT_REGISTER_HDR != size - 1)
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
            if (sum != t.total || ext_sum(t.procs, t.total) + (uint64_t)t.total * WIO_BOOT_ENTRY_LEN +
                                      4 + 4 * (uint64_t)npb != size - 1)
                abort();
            wio_boot_table_free(&t);
        }
    }
    return 0;
}
