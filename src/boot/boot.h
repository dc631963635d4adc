/*
 * boot.h — the start-up messages' parsers, separated from the rendezvous logic so that they can
 * be fuzzed on their own (tests/fuzz). Every field is checked before use.
 */
#ifndef WIO_BOOT_H
#define WIO_BOOT_H

#include <stddef.h>
#include <stdint.h>
#include "core/engine.h"

#define WIO_BOOT_ENTRY_LEN WIO_TABLE_ENTRY_LEN /* docs/protocol.md, "Start-up": one process's entry */
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

/* boot_job.c: the one-job MPMD launch (the MPI job is the instance). */
/* With the adapter's job layout and no instance variable: c->job = 1, PBs from MPI. */
int wio_job_configure(wio_config *c);
/* The instance key of a one-job launch: WAITIO_KEY/WAITIO_KEY_FILE if set, else fresh from
 * MPI rank 0 (OpenSSL RAND), broadcast over MPI. */
int wio_job_key(wio_key *k, double timeout);
/* Gathers every process's encoded entry over MPI and returns the encoded table. */
int wio_boot_job(wio_engine *e, const uint8_t mine[WIO_BOOT_ENTRY_LEN], double timeout,
                 uint8_t **table, size_t *table_len);
/* Once per process, on PB rank 0: a single-PB instance nobody asked for says how to launch. */
void wio_job_notice(const wio_config *c);

#endif
