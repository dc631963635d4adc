/*
 * file_dir.c — the shared directory of file mode: the instance directory, private directories,
 * authenticated records published by rename, and removal of leftovers (file_dir.h).
 *
 * What is assumed of the file system (docs/user-guide.md, "File mode"): POSIX close-to-open
 * consistency, as NFS and Lustre give — a file renamed into place after its writer closed it is
 * seen whole by a reader that opens it afterwards — and an atomic rename within a directory.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "transport/file_dir.h"
#include "core/frame.h"

int wio_file_mkdir_private(const char *path)
{
    if (mkdir(path, 0700) != 0 && errno != EEXIST)
        return wio_fail(WAITIO_ERR_SYS, "cannot create %s: %s", path, strerror(errno));
    struct stat st;
    if (lstat(path, &st) != 0)
        return wio_fail(WAITIO_ERR_SYS, "cannot inspect %s: %s", path, strerror(errno));
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 0022))
        return wio_fail(WAITIO_ERR_ENV, "%s must be a directory of this user that nobody else can "
                        "write (mode %03o, owner %u)", path, (unsigned)(st.st_mode & 0777),
                        (unsigned)st.st_uid);
    return 0;
}

static void hex(const uint8_t *b, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        snprintf(out + 2 * i, 3, "%02x", b[i]);
}

int wio_file_instance_dir(const wio_config *cfg, const wio_key *key, char *out, size_t cap)
{
    if (!cfg->scratch_dir[0])
        return wio_fail(WAITIO_ERR_ENV, "the file transport needs WAITIO_SCRATCH_DIR, a directory "
                        "all PBs share");
    struct stat st;
    if (stat(cfg->scratch_dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return wio_fail(WAITIO_ERR_ENV, "WAITIO_SCRATCH_DIR='%s' is not a directory", cfg->scratch_dir);
    char id[130];
    if (cfg->job_id[0]) {
        snprintf(id, sizeof id, "%s", cfg->job_id);
    } else {
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
    }
    int n = snprintf(out, cap, "%s/.waitio-file-%s", cfg->scratch_dir, id);
    if (n < 0 || (size_t)n >= cap)
        return wio_fail(WAITIO_ERR_ENV, "WAITIO_SCRATCH_DIR is too long");
    return wio_file_mkdir_private(out);
}

void wio_file_key(const wio_key *key, uint8_t out[WIO_PROOF_LEN])
{
    wio_auth_derive(key, "waitio file transport v1", out);
}

void wio_file_rm_tree(const char *path)
{
    DIR *d = opendir(path);
    if (!d) {
        (void)unlink(path);
        return;
    }
    struct dirent *de;
    char sub[WIO_FILE_PATH_MAX];
    while ((de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        int n = snprintf(sub, sizeof sub, "%s/%s", path, de->d_name);
        if (n < 0 || (size_t)n >= sizeof sub)
            continue;
        if (unlink(sub) != 0 && (errno == EISDIR || errno == EPERM))
            wio_file_rm_tree(sub);
    }
    closedir(d);
    (void)rmdir(path);
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

static int write_all(int fd, const void *p, size_t n)
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

int wio_file_publish(const char *dir, const char *name, const void *data, size_t len,
                     const uint8_t key[WIO_PROOF_LEN], int do_fsync)
{
    char tmp[WIO_FILE_PATH_MAX], path[WIO_FILE_PATH_MAX];
    int n1 = snprintf(tmp, sizeof tmp, "%s/.tmp-XXXXXX", dir);
    int n2 = snprintf(path, sizeof path, "%s/%s", dir, name);
    if (n1 < 0 || n2 < 0 || (size_t)n1 >= sizeof tmp || (size_t)n2 >= sizeof path)
        return wio_fail(WAITIO_ERR_ENV, "path too long in %s", dir);
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0)
        return wio_fail(WAITIO_ERR_SYS, "cannot create a file in %s: %s", dir, strerror(errno));
    uint8_t hdr[WIO_REC_HDR_SIZE], mac[WIO_PROOF_LEN];
    wio_put_le64(hdr, WIO_REC_MAGIC);
    wio_put_le64(hdr + 8, (uint64_t)len);
    record_mac(key, name, hdr, data, len, mac);
    int ok = write_all(fd, hdr, sizeof hdr) == 0 && write_all(fd, data, len) == 0 &&
             write_all(fd, mac, sizeof mac) == 0 && (!do_fsync || fsync(fd) == 0);
    int e = errno;
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        e = ok ? errno : e;
        unlink(tmp);
        return wio_fail(WAITIO_ERR_SYS, "cannot publish %s: %s", path, strerror(e));
    }
    return 0;
}

int wio_file_read_record(const char *dir, const char *name, size_t max, const uint8_t key[WIO_PROOF_LEN],
                         uint8_t **data, size_t *len, const char **why)
{
    char path[WIO_FILE_PATH_MAX];
    int n = snprintf(path, sizeof path, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= sizeof path) {
        *why = "path too long";
        return -1;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        *why = strerror(errno);
        return errno == ENOENT ? 1 : -1;
    }
    struct stat st;
    uint8_t hdr[WIO_REC_HDR_SIZE];
    int rc = -1;
    uint8_t *buf = NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        *why = "not a regular file";
    } else if (pread(fd, hdr, sizeof hdr, 0) != (ssize_t)sizeof hdr || wio_get_le64(hdr) != WIO_REC_MAGIC) {
        *why = "not a WaitIO record";
    } else {
        uint64_t dlen = wio_get_le64(hdr + 8);
        if (dlen > max || (uint64_t)st.st_size != WIO_REC_HDR_SIZE + dlen + WIO_PROOF_LEN) {
            *why = "length does not match (truncated, torn or foreign)";
        } else if (!(buf = malloc(dlen + WIO_PROOF_LEN + 1))) {
            *why = "out of memory";
        } else if (pread(fd, buf, dlen + WIO_PROOF_LEN, WIO_REC_HDR_SIZE) != (ssize_t)(dlen + WIO_PROOF_LEN)) {
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
