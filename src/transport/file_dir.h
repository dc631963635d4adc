/*
 * file_dir.h — the shared directory of file mode (SPEC §6): where an instance's files live
 * ($WAITIO_SCRATCH_DIR/.waitio-file-<ID>/), private directories, authenticated records
 * published atomically (write a temporary file, then rename), and removal of what a crashed run
 * left. Used by the file transport (file.c) and by start-up through the directory
 * (boot/boot.c). docs/transports.md, "file", has the layout.
 *
 * Everything below the instance directory is reached relative to a descriptor of it, opened
 * once (O_DIRECTORY|O_NOFOLLOW) and checked to be ours and private: a path rebuilt from strings
 * at each use would follow whatever another user of a shared scratch directory renamed into its
 * place meanwhile (issue 25 item 3). Nothing here follows a symbolic link, and no file is read
 * before it is known to be a regular file (a FIFO would block its reader in open or read).
 */
#ifndef WIO_FILE_DIR_H
#define WIO_FILE_DIR_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "core/auth.h"
#include "core/common.h"

#define WIO_FILE_PATH_MAX 2400

/* The instance directory: WAITIO_JOB_ID / COUPLER_JOB_ID, else an id derived from the key and
 * the master's address. The scratch directory must not be writable by others unless it has the
 * sticky bit (or WAITIO_FILE_UNSAFE_DIR=1); the instance directory is created 0700 if missing
 * and opened without following a link: it must be a directory of ours nobody else can write.
 * *fd (O_DIRECTORY, close-on-exec) is the caller's; out gets the path, for messages only. */
int wio_file_instance_open(const wio_config *cfg, const wio_key *key, char *out, size_t cap, int *fd);
/* name in directory dirfd, created 0700 if `create` and missing, opened O_DIRECTORY|O_NOFOLLOW:
 * 0 with *fd when it is a directory of ours that nobody else can write; 1 when it is absent
 * (and not created); else an error (errno kept: ENOTDIR/ELOOP for a file or a link). */
int wio_file_subdir_at(int dirfd, const char *name, int create, int *fd);
/* Removes name in dirfd: a file or link is unlinked (never followed); a real directory is
 * emptied (recursively, each level opened O_NOFOLLOW relative to its parent, at most 8 deep)
 * and removed. Quiet. */
void wio_file_rm_tree_at(int dirfd, const char *name);
/* Removes what is in directory dirfd (not the directory itself), as wio_file_rm_tree_at. */
void wio_file_clear_at(int dirfd);
/* Opens rel ("name" or "dir/name") below dirfd without following a symbolic link at any
 * component and without leaving dirfd (openat2 RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS where the
 * kernel has it, else component by component with O_NOFOLLOW); O_NOFOLLOW|O_CLOEXEC are added
 * to flags. Returns the descriptor, or -1 with errno. */
int wio_file_open_beneath(int dirfd, const char *rel, int flags, mode_t mode);
/* Opens rel (as wio_file_open_beneath) for reading without following a link and without blocking (a FIFO or a
 * device opens at once and is refused): 0 with *fd when it is a regular file, 1 when absent,
 * -1 with *why otherwise. *size gets its size. */
int wio_file_open_regular(int dirfd, const char *name, int *fd, uint64_t *size, const char **why);
/* Creates a fresh temporary file prefix+6 random characters in dirfd (O_EXCL|O_NOFOLLOW, 0600);
 * name (at least strlen(prefix)+7 bytes) gets its name. Returns the descriptor or -1. */
int wio_file_create_tmp(int dirfd, const char *prefix, char *name, size_t cap);
/* The key of the file transport's MACs, derived from the instance key. */
void wio_file_key(const wio_key *key, uint8_t out[WIO_PROOF_LEN]);

/* Writes name in dirfd atomically (a temporary file, write, optional fsync, rename). */
/* write(2) / pread(2) of all n bytes, EINTR retried; -1 with errno on failure or short end */
int wio_file_write_all(int fd, const void *p, size_t n);
int wio_file_read_full(int fd, void *buf, size_t n, off_t off);

int wio_file_publish_at(int dirfd, const char *name, const void *data, size_t len,
                        const uint8_t key[WIO_PROOF_LEN], int do_fsync);
/* Reads name in dirfd: 0 with *data (malloc'd, *len bytes), 1 if absent, -1 if it is not a
 * valid record of this instance (*why says why). At most max bytes of data are accepted; what
 * is allocated is never more than the file holds, and the MAC is checked over the very bytes
 * returned. */
int wio_file_read_record_at(int dirfd, const char *name, size_t max, const uint8_t key[WIO_PROOF_LEN],
                            uint8_t **data, size_t *len, const char **why);

#endif
