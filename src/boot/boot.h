/*
 * boot.h — the start-up messages' parsers, separated from the rendezvous logic so that they can
 * be fuzzed on their own (tests/fuzz). Every field is checked before use.
 */
#ifndef WIO_BOOT_H
#define WIO_BOOT_H

#include <stddef.h>
#include <stdint.h>
#include "core/engine.h"

#define WIO_BOOT_ENTRY_LEN 40 /* docs/protocol.md, "Start-up": one process's table entry */
#define WIO_BOOT_REGISTER_HDR 16 /* npb, pbid, first rank, PB size; then one entry per rank */

typedef struct wio_boot_reg {
    int npb, pb, first, size, k;   /* k consecutive ranks first..first+k-1 of PB pb (of size) */
    wio_proc *entries;             /* k decoded entries (malloc'd) */
} wio_boot_reg;

/* Parses a REGISTER payload; returns NULL, or a static reason it is malformed. */
const char *wio_boot_parse_register(const uint8_t *p, size_t len, wio_boot_reg *out);

typedef struct wio_boot_table {
    int *nprocs;          /* per PB */
    uint32_t *pb_offset;  /* first process id of each PB */
    uint32_t total;
    wio_proc *procs;      /* indexed by process id */
} wio_boot_table;

/* Parses a TABLE payload for an instance of npb PBs; returns NULL or why it is malformed.
 * On success the caller owns the three arrays. */
const char *wio_boot_parse_table(const uint8_t *t, size_t len, int npb, wio_boot_table *out);
void wio_boot_table_free(wio_boot_table *t);

#endif
