/*
 * boot.h — the start-up messages' parsers, separated from the rendezvous logic so that they can
 * be fuzzed on their own (tests/fuzz). Every field is checked before use.
 */
#ifndef WIO_BOOT_H
#define WIO_BOOT_H

#include <stddef.h>
#include <stdint.h>
#include "core/engine.h"
#include "core/frame.h"

#define WIO_BOOT_ENTRY_LEN WIO_TABLE_ENTRY_LEN /* docs/protocol.md, "Start-up": an entry's fixed part */
#define WIO_BOOT_ENTRY_EXT_AT 40 /* where the fixed part holds its extension's le16 length */
#define WIO_BOOT_REGISTER_HDR 16 /* npb, pbid, first rank, PB size; then one entry per rank */

/* Writes p's entry (fixed part, then its extension of at most WIO_PROC_EXT_MAX bytes) at out;
 * returns its length. */
size_t wio_boot_entry_encode(const wio_proc *p, uint8_t *out);

/* Splits k encoded entries (entries_len bytes; ranks first_rank.. of PB pbid of pb_size, in an
 * instance of npb PBs) into REGISTER payloads of at most WIO_REGISTER_BLOCK entries and
 * WIO_REGISTER_MAX bytes, back to back in *out (out_len bytes); *lens (malloc'd) gets each
 * one's length, *nblocks how many. 0, or WAITIO_ERR_NOMEM. */
int wio_boot_encode_blocks(int npb, int pbid, int pb_size, int first_rank, const uint8_t *entries,
                           size_t entries_len, int k, uint8_t **out, size_t *out_len, size_t **lens,
                           size_t *nblocks);

typedef struct wio_boot_reg {
    int npb, pb, first, size, k;   /* k consecutive ranks first..first+k-1 of PB pb (of size) */
    wio_proc *entries;             /* k decoded entries (malloc'd, their extensions after them) */
} wio_boot_reg;

/* Parses a REGISTER payload; returns NULL, or a static reason it is malformed. */
const char *wio_boot_parse_register(const uint8_t *p, size_t len, wio_boot_reg *out);

typedef struct wio_boot_table {
    int *nprocs;          /* per PB */
    uint32_t *pb_offset;  /* first process id of each PB */
    uint32_t total;
    wio_proc *procs;      /* indexed by process id; one allocation with their extensions */
} wio_boot_table;

/* Parses a TABLE payload for an instance of npb PBs; returns NULL or why it is malformed.
 * On success the caller owns the three arrays. */
const char *wio_boot_parse_table(const uint8_t *t, size_t len, int npb, wio_boot_table *out);
void wio_boot_table_free(wio_boot_table *t);

/* The master's record of the registrations. A REGISTER only claims its PB's size: what is held
 * for a PB grows with the ranks that actually arrived (a bit per rank of the claimed size, and
 * each block's entries as it came), never with the claim, and the claims of all PBs together
 * must fit max_procs (WAITIO_MAX_PROCS, at most what one address table can carry). */
typedef struct wio_boot_block {
    struct wio_boot_block *next;
    int first, k;                  /* ranks first..first+k-1 */
    wio_proc entries[];            /* then their extensions, which they point to */
} wio_boot_block;

typedef struct wio_boot_roster {
    int npb;
    uint32_t max_procs;
    uint64_t claimed;              /* the sizes of the PBs that registered, together */
    int *size;                     /* per PB: -1 until its first registration */
    int *count;                    /* per PB: ranks registered */
    uint8_t **seen;                /* per PB: a bit per rank, set once it registered */
    wio_boot_block **blocks;       /* per PB: what arrived, newest first */
    int complete;                  /* PBs all of whose ranks registered */
    uint64_t ext_bytes;            /* the entries' extensions, together (the table's bound) */
    size_t held;                   /* bytes allocated for the PBs' bits and blocks */
} wio_boot_roster;

/* 0, or WAITIO_ERR_NOMEM. */
int wio_boot_roster_init(wio_boot_roster *r, int npb, uint32_t max_procs);
/* Records ranks first..first+k-1 of PB pb of the given size; returns NULL, or why the block
 * is refused (then nothing of it is recorded). */
const char *wio_boot_roster_add(wio_boot_roster *r, int pb, int first, int size, int k,
                                const wio_proc *entries);
/* Once every PB is complete: the encoded address table (malloc'd), or NULL with *why set. */
uint8_t *wio_boot_roster_table(const wio_boot_roster *r, size_t *len, const char **why);
void wio_boot_roster_free(wio_boot_roster *r);

/* boot_shm.c: the table in one shared-memory segment per host (TABLE_REF, frame.h). */
#define WIO_BOOT_DIGEST_LEN 32
typedef struct wio_boot_ref {
    uint64_t table_len;
    uint8_t digest[WIO_BOOT_DIGEST_LEN];        /* SHA-256 of the table */
    char name[WIO_TABLE_SHM_NAME_MAX + 1];      /* the segment, NUL-terminated */
} wio_boot_ref;
/* SHA-256 of the table: 0, or -1. */
int wio_boot_table_digest(const uint8_t *t, size_t len, uint8_t out[WIO_BOOT_DIGEST_LEN]);
/* TABLE_REF's payload (at most WIO_TABLE_REF_MAX bytes at out); returns its length. */
size_t wio_boot_ref_encode(const wio_boot_ref *r, uint8_t *out);
/* Parses a TABLE_REF payload; NULL, or why it is malformed (the name must be one of this
 * user's segment names). */
const char *wio_boot_parse_ref(const uint8_t *p, size_t len, wio_boot_ref *out);
/* Creates a fresh segment (O_EXCL, 0600, unpredictable name) holding the len bytes at t; *out
 * names it. 0, or an error (nothing left behind). */
int wio_boot_shm_publish(const uint8_t *t, size_t len, const uint8_t digest[WIO_BOOT_DIGEST_LEN],
                         wio_boot_ref *out);
/* The table r names, copied out and checked against r's digest: 0 with *table (malloc'd), 1
 * when the segment cannot be opened here (ask the master for the TABLE instead), or an error
 * with its message (a segment of the wrong owner, mode, size or digest). */
int wio_boot_shm_take(const wio_boot_ref *r, uint8_t **table);
void wio_boot_shm_unlink(const char *name);

/* boot_job.c: the one-job MPMD launch (the MPI job is the instance). */
/* With the adapter's job layout and no instance variable: c->job = 1, PBs from MPI. */
int wio_job_configure(wio_config *c);
/* The instance key of a one-job launch: WAITIO_KEY/WAITIO_KEY_FILE if set, else fresh from
 * MPI rank 0 (OpenSSL RAND), broadcast over MPI. */
int wio_job_key(wio_key *k, double timeout);
/* Gathers every process's encoded entry (mine: ours, fixed part and extension) over MPI and
 * returns the encoded table. */
int wio_boot_job(wio_engine *e, const uint8_t *mine, size_t mine_len, double timeout,
                 uint8_t **table, size_t *table_len);
/* Once per process, on PB rank 0: a single-PB instance nobody asked for says how to launch. */
void wio_job_notice(const wio_config *c);

#endif
