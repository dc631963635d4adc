/*
 * file_dir.c — the shared directory of file mode: the instance directory, private directories,
 * authenticated records published by rename, and removal of leftovers (file_dir.h).
 *
 * What is assumed of the file system (docs/user-guide.md, "File mode"): POSIX close-to-open
 * consistency, as NFS and Lustre give — a file renamed into place after its writer closed it is
 * seen whole by a reader that opens it afterwards — and an atomic rename within a directory.
 *
 * What is assumed of the other users of the scratch directory: nothing. Every operation below
 * the instance directory goes through a descriptor (openat, mkdirat, unlinkat, renameat), links
 * are never followed, and files are opened non-blocking and checked to be regular before a byte
 * is read (docs/reliability.md, "Threat model").
 */
#define WIO_LOG_SUBSYS WIO_SUB_FILE /* this file logs as "file" (WAITIO_LOG=file=LEVEL) */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "transport/file_dir.h"
#include "core/frame.h"

#define RM_DEPTH_MAX 8 /* instance/in-x.y/stream/segment is 3: deeper is not ours to descend */

static int private_dir_ok(const struct stat *st)
{
    return S_ISDIR(st->st_mode) && st->st_uid == geteuid() && !(st->st_mode & 0022);
}

static int not_private(const char *what, const struct stat *st)
{
    return wio_fail(WAITIO_ERR_ENV, "%s must be a directory of this user that nobody else can "
                    "write (mode %03o, owner %u)", what, (unsigned)(st->st_mode & 0777), (unsigned)st->st_uid);
}

int wio_file_subdir_at(int dirfd, const char *name, int create, int *fd)
{
    *fd = -1;
    if (create && mkdirat(dirfd, name, 0700) != 0 && errno != EEXIST)
        return -1;
    int d = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (d < 0)
        return errno == ENOENT && !create ? 1 : -1;
    struct stat st;
    if (fstat(d, &st) != 0 || !private_dir_ok(&st)) {
        close(d);
        errno = EPERM;
        return -1;
    }
    *fd = d;
    return 0;
}

static void hex(const uint8_t *b, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        snprintf(out + 2 * i, 3, "%02x", b[i]);
}

/* Who else may rename entries of the scratch directory (and so swap our instance directory
 * for theirs): its owner, and with write permission but no sticky bit, its group or everyone. */
static const char *scratch_unsafe(const struct stat *st)
{
    if (st->st_uid != geteuid() && st->st_uid != 0)
        return "belongs to another user";
    if ((st->st_mode & 0022) && !(st->st_mode & S_ISVTX))
        return (st->st_mode & 0002) ? "is writable by everyone without the sticky bit"
                                    : "is writable by its group without the sticky bit";
    return NULL;
}

static int instance_id(const wio_config *cfg, const wio_key *key, char id[130])
{
    if (cfg->job_id[0]) {
        snprintf(id, 130, "%s", cfg->job_id);
        return 0;
    }
    /* the same for every process of one instance: its key and its master's address */
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    uint8_t d[EVP_MAX_MD_SIZE];
    unsigned int dl = 0;
    char where[4400];
    snprintf(where, sizeof where, "%s:%d:%s", cfg->master_host, cfg->master_port, cfg->rendezvous);
    if (!md || !EVP_DigestInit_ex(md, EVP_sha256(), NULL) || !EVP_DigestUpdate(md, key->bytes, key->len) ||
        !EVP_DigestUpdate(md, where, strlen(where)) || !EVP_DigestFinal_ex(md, d, &dl)) {
        EVP_MD_CTX_free(md);
        return wio_fail(WAITIO_ERR_SYS, "OpenSSL SHA-256 failed");
    }
    EVP_MD_CTX_free(md);
    hex(d, 8, id);
    return 0;
}

int wio_file_instance_open(const wio_config *cfg, const wio_key *key, char *out, size_t cap, int *fd)
{
    *fd = -1;
    if (!cfg->scratch_dir[0])
        return wio_fail(WAITIO_ERR_ENV, "the file transport needs WAITIO_SCRATCH_DIR, a directory "
                        "all PBs share");
    int sfd = open(cfg->scratch_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    if (sfd < 0 || fstat(sfd, &st) != 0) {
        if (sfd >= 0)
            close(sfd);
        return wio_fail(WAITIO_ERR_ENV, "WAITIO_SCRATCH_DIR='%s' is not a directory", cfg->scratch_dir);
    }
    const char *unsafe = scratch_unsafe(&st);
    if (unsafe && !cfg->file_unsafe_dir) {
        close(sfd);
        return wio_fail(WAITIO_ERR_ENV, "WAITIO_SCRATCH_DIR='%s' %s (mode %04o, owner %u): another user "
                        "could replace the instance directory in it. Use a directory of yours that only you "
                        "can write%s; WAITIO_FILE_UNSAFE_DIR=1 accepts the risk", cfg->scratch_dir, unsafe,
                        (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid,
                        st.st_uid == geteuid() ? ", or set its sticky bit (chmod +t)" : "");
    }
    if (unsafe)
        wio_warn("WAITIO_SCRATCH_DIR='%s' %s; used because WAITIO_FILE_UNSAFE_DIR=1", cfg->scratch_dir, unsafe);
    char id[130], name[160];
    int rc = instance_id(cfg, key, id);
    int n = snprintf(out, cap, "%s/.waitio-file-%s", cfg->scratch_dir, id);
    if (!rc && (n < 0 || (size_t)n >= cap))
        rc = wio_fail(WAITIO_ERR_ENV, "WAITIO_SCRATCH_DIR is too long");
    snprintf(name, sizeof name, ".waitio-file-%s", id);
    if (!rc && wio_file_subdir_at(sfd, name, 1, fd) != 0) {
        int e = errno;
        struct stat ist;
        if (e == EPERM && fstatat(sfd, name, &ist, AT_SYMLINK_NOFOLLOW) == 0)
            rc = not_private(out, &ist);
        else if (e == ELOOP || e == ENOTDIR)
            rc = wio_fail(WAITIO_ERR_ENV, "%s must be a directory of this user, not a link or a file", out);
        else
            rc = wio_fail(WAITIO_ERR_SYS, "cannot create %s: %s", out, strerror(e));
    }
    close(sfd);
    return rc;
}

void wio_file_key(const wio_key *key, uint8_t out[WIO_PROOF_LEN])
{
    wio_auth_derive(key, "waitio file transport v1", out);
}

static void clear_at(int fd, int depth);

static void rm_tree_at(int dirfd, const char *name, int depth)
{
    /* a link or a file goes with unlink, which never follows a link */
    if (unlinkat(dirfd, name, 0) == 0 || (errno != EISDIR && errno != EPERM))
        return;
    if (depth >= RM_DEPTH_MAX)
        return;
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return;
    clear_at(fd, depth + 1);
    close(fd);
    (void)unlinkat(dirfd, name, AT_REMOVEDIR);
}

/* fd is the caller's; the listing uses a descriptor of its own (its own offset). */
static void clear_at(int fd, int depth)
{
    int dup_fd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
    if (!d) {
        if (dup_fd >= 0)
            close(dup_fd);
        return;
    }
    struct dirent *de;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
            rm_tree_at(fd, de->d_name, depth);
    closedir(d);
}

void wio_file_rm_tree_at(int dirfd, const char *name) { rm_tree_at(dirfd, name, 0); }
void wio_file_clear_at(int dirfd) { clear_at(dirfd, 0); }

int wio_file_open_beneath(int dirfd, const char *rel, int flags, mode_t mode)
{
    flags |= O_NOFOLLOW | O_CLOEXEC;
#ifdef SYS_openat2
    static int no_openat2;
    if (!no_openat2) {
        struct open_how how = {.flags = (uint64_t)flags, .mode = (flags & O_CREAT) ? mode : 0,
                               .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
        int fd = (int)syscall(SYS_openat2, dirfd, rel, &how, sizeof how);
        if (fd >= 0 || (errno != ENOSYS && errno != EPERM))
            return fd;
        no_openat2 = 1; /* an old kernel, or a seccomp filter that refuses it */
    }
#endif
    /* one component at a time, none followed if it is a link */
    char comp[256];
    int cur = dirfd;
    for (;;) {
        const char *slash = strchr(rel, '/');
        if (!slash) {
            int fd = openat(cur, rel, flags, mode);
            int e = errno;
            if (cur != dirfd)
                close(cur);
            errno = e;
            return fd;
        }
        size_t n = (size_t)(slash - rel);
        if (n == 0 || n >= sizeof comp || (n == 2 && rel[0] == '.' && rel[1] == '.')) {
            if (cur != dirfd)
                close(cur);
            errno = EXDEV;
            return -1;
        }
        memcpy(comp, rel, n);
        comp[n] = 0;
        int next = openat(cur, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
        int e = errno;
        if (cur != dirfd)
            close(cur);
        if (next < 0) {
            errno = e;
            return -1;
        }
        cur = next;
        rel = slash + 1;
    }
}

int wio_file_open_regular(int dirfd, const char *name, int *fd, uint64_t *size, const char **why)
{
    *fd = wio_file_open_beneath(dirfd, name, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0);
    if (*fd < 0) {
        *why = errno == ELOOP || errno == EXDEV ? "a symbolic link" : strerror(errno);
        return errno == ENOENT ? 1 : -1;
    }
    struct stat st;
    if (fstat(*fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        *why = "not a regular file";
        close(*fd);
        *fd = -1;
        return -1;
    }
    *size = (uint64_t)st.st_size;
    return 0;
}

int wio_file_create_tmp(int dirfd, const char *prefix, char *name, size_t cap)
{
    static const char abc[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    size_t p = strlen(prefix);
    if (cap < p + 7) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (int attempt = 0; attempt < 100; attempt++) {
        uint8_t r[6];
        if (wio_random_bytes(r, sizeof r) != 0)
            return -1;
        memcpy(name, prefix, p);
        for (int i = 0; i < 6; i++)
            name[p + i] = abc[r[i] % (sizeof abc - 1)];
        name[p + 6] = 0;
        int fd = openat(dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    errno = EEXIST;
    return -1;
}

static void record_mac(const uint8_t key[WIO_PROOF_LEN], const char *name, const uint8_t hdr[WIO_REC_HDR_SIZE],
                       const void *data, size_t len, uint8_t out[WIO_PROOF_LEN])
{
    wio_mac *m;
    if (wio_mac_new(&m, key) != 0) {
        memset(out, 0, WIO_PROOF_LEN);
        return;
    }
    wio_mac_update(m, name, strlen(name) + 1);
    wio_mac_update(m, hdr, WIO_REC_HDR_SIZE);
    wio_mac_update(m, data, len);
    wio_mac_final(m, out);
    wio_mac_free(m);
}

int wio_file_write_all(int fd, const void *p, size_t n)
{
    const uint8_t *b = p;
    while (n) {
        ssize_t k = write(fd, b, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        b += k;
        n -= (size_t)k;
    }
    return 0;
}

int wio_file_publish_at(int dirfd, const char *name, const void *data, size_t len,
                        const uint8_t key[WIO_PROOF_LEN], int do_fsync)
{
    char tmp[32];
    int fd = wio_file_create_tmp(dirfd, ".tmp-", tmp, sizeof tmp);
    if (fd < 0)
        return wio_fail(WAITIO_ERR_SYS, "cannot create a file to publish %s: %s", name, strerror(errno));
    uint8_t hdr[WIO_REC_HDR_SIZE], mac[WIO_PROOF_LEN];
    wio_put_le64(hdr, WIO_REC_MAGIC);
    wio_put_le64(hdr + 8, (uint64_t)len);
    record_mac(key, name, hdr, data, len, mac);
    int ok = wio_file_write_all(fd, hdr, sizeof hdr) == 0 && wio_file_write_all(fd, data, len) == 0 &&
             wio_file_write_all(fd, mac, sizeof mac) == 0 && (!do_fsync || fsync(fd) == 0);
    int e = errno;
    ok = close(fd) == 0 && ok;
    if (!ok || renameat(dirfd, tmp, dirfd, name) != 0) {
        e = ok ? errno : e;
        unlinkat(dirfd, tmp, 0);
        return wio_fail(WAITIO_ERR_SYS, "cannot publish %s: %s", name, strerror(e));
    }
    return 0;
}

int wio_file_read_full(int fd, void *buf, size_t n, off_t off)
{
    uint8_t *b = buf;
    while (n) {
        ssize_t k = pread(fd, b, n, off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        b += k;
        n -= (size_t)k;
        off += k;
    }
    return 0;
}

int wio_file_read_record_at(int dirfd, const char *name, size_t max, const uint8_t key[WIO_PROOF_LEN],
                            uint8_t **data, size_t *len, const char **why)
{
    int fd;
    uint64_t size;
    int rc = wio_file_open_regular(dirfd, name, &fd, &size, why);
    if (rc != 0)
        return rc;
    uint8_t hdr[WIO_REC_HDR_SIZE];
    uint8_t *buf = NULL;
    rc = -1;
    if (wio_file_read_full(fd, hdr, sizeof hdr, 0) != 0 || wio_get_le64(hdr) != WIO_REC_MAGIC) {
        *why = "not a WaitIO record";
    } else {
        uint64_t dlen = wio_get_le64(hdr + 8);
        /* what is allocated is what the file holds: never more than its size on disk */
        if (dlen > max || size != WIO_REC_HDR_SIZE + dlen + WIO_PROOF_LEN) {
            *why = "length does not match (truncated, torn or foreign)";
        } else if (!(buf = malloc(dlen + WIO_PROOF_LEN + 1))) {
            *why = "out of memory";
        } else if (wio_file_read_full(fd, buf, dlen + WIO_PROOF_LEN, WIO_REC_HDR_SIZE) != 0) {
            *why = "short read";
        } else {
            uint8_t mac[WIO_PROOF_LEN];
            record_mac(key, name, hdr, buf, dlen, mac);
            if (!wio_auth_proof_equal(mac, buf + dlen)) {
                *why = "MAC does not match (written without the instance key?)";
            } else {
                *data = buf;
                *len = dlen;
                buf = NULL;
                rc = 0;
            }
        }
    }
    free(buf);
    close(fd);
    return rc;
}
