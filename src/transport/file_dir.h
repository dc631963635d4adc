/*
 * file_dir.h — the shared directory of file mode (SPEC §6): where an instance's files live
 * ($WAITIO_SCRATCH_DIR/.waitio-file-<ID>/), private directories, authenticated records
 * published atomically (write a temporary file made by mkstemp, then rename), and removal of
 * what a crashed run left. Used by the file transport (file.c) and by start-up through the
 * directory (boot/boot_file.c). docs/protocol.md, "File transport", has the layout.
 */
#ifndef WIO_FILE_DIR_H
#define WIO_FILE_DIR_H

#include <stddef.h>
#include <stdint.h>
#include "core/auth.h"
#include "core/common.h"

#define WIO_FILE_PATH_MAX 2400

/* The instance directory: WAITIO_JOB_ID / COUPLER_JOB_ID, else an id derived from the key and
 * the master's address. Created 0700 if missing; refused unless it is a directory of ours that
 * nobody else can write. */
int wio_file_instance_dir(const wio_config *cfg, const wio_key *key, char *out, size_t cap);
/* mkdir 0700 (an existing one must be ours and private). */
int wio_file_mkdir_private(const char *path);
/* Removes a directory and what is in it (two levels: streams of an inbox); quiet. */
void wio_file_rm_tree(const char *path);
/* The key of the file transport's MACs, derived from the instance key. */
void wio_file_key(const wio_key *key, uint8_t out[WIO_PROOF_LEN]);

/* Writes dir/name atomically (mkstemp in dir, write, optional fsync, rename). */
int wio_file_publish(const char *dir, const char *name, const void *data, size_t len,
                     const uint8_t key[WIO_PROOF_LEN], int do_fsync);
/* Reads dir/name: 0 with *data (malloc'd, *len bytes), 1 if absent, -1 if it is not a valid
 * record of this instance (*why says why). At most max bytes of data are accepted. */
int wio_file_read_record(const char *dir, const char *name, size_t max, const uint8_t key[WIO_PROOF_LEN],
                         uint8_t **data, size_t *len, const char **why);

#endif
