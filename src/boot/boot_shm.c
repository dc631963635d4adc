/*
 * boot_shm.c — the address table in one shared-memory segment per host (docs/protocol.md,
 * "Start-up"; docs/scale.md). Instead of N copies of the table from the master, the processes
 * of a host read it from a segment that the master (its own host) or one process of the host
 * wrote once, told by a short TABLE_REF: the segment's name, the table's length and SHA-256. The
 * segment is created exclusively (O_EXCL, mode 0600) under a name with 64 random bits and the
 * shm naming of shm_ring.c (uid, creator pid, pid namespace), so the leftover sweep removes it
 * if its creator dies; a reader checks owner, mode and size, copies the bytes and verifies the
 * digest over the copy before anything parses them.
 */
#define WIO_LOG_SUBSYS WIO_SUB_BOOT
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/common.h"
#include "core/auth.h"
#include "core/frame.h"
#include "core/settings.h"
#include "boot/boot.h"
#include "transport/shm_ring.h"

_Static_assert(WIO_BOOT_DIGEST_LEN == 32, "TABLE_REF carries a SHA-256");

int wio_boot_table_digest(const uint8_t *t, size_t len, uint8_t out[WIO_BOOT_DIGEST_LEN])
{
    unsigned n = 0;
    return EVP_Digest(t, len, out, &n, EVP_sha256(), NULL) && n == WIO_BOOT_DIGEST_LEN ? 0 : -1;
}

size_t wio_boot_ref_encode(const wio_boot_ref *r, uint8_t *out)
{
    size_t n = strlen(r->name);
    wio_put_le64(out, r->table_len);
    memcpy(out + 8, r->digest, WIO_BOOT_DIGEST_LEN);
    memcpy(out + 8 + WIO_BOOT_DIGEST_LEN, r->name, n);
    return 8 + WIO_BOOT_DIGEST_LEN + n;
}

/* "/waitio-<uid>-": what every segment name of this user begins with (shm_ring.c's stem). */
static size_t user_prefix(char *buf, size_t cap)
{
    wio_shm_name_stem(buf, cap);
    const char *dash = strchr(buf + 1, '-');      /* after "waitio" */
    dash = dash ? strchr(dash + 1, '-') : NULL;   /* after the uid */
    if (!dash)
        return 0;
    buf[dash + 1 - buf] = '\0';
    return (size_t)(dash + 1 - buf);
}

const char *wio_boot_parse_ref(const uint8_t *p, size_t len, wio_boot_ref *out)
{
    memset(out, 0, sizeof *out);
    if (len <= 8 + WIO_BOOT_DIGEST_LEN || len > WIO_TABLE_REF_MAX)
        return "table reference has an impossible length";
    out->table_len = wio_get_le64(p);
    if (out->table_len < 8 || out->table_len > WIO_TABLE_MAX)
        return "table reference announces an impossible table length";
    memcpy(out->digest, p + 8, WIO_BOOT_DIGEST_LEN);
    size_t n = len - 8 - WIO_BOOT_DIGEST_LEN; /* 1..WIO_TABLE_SHM_NAME_MAX */
    memcpy(out->name, p + 8 + WIO_BOOT_DIGEST_LEN, n);
    out->name[n] = '\0';
    char prefix[64];
    size_t pl = user_prefix(prefix, sizeof prefix);
    if (!pl || n <= pl || strncmp(out->name, prefix, pl) != 0)
        return "table reference names a segment that is not one of ours";
    for (size_t i = pl; i < n; i++) {
        char c = out->name[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-'))
            return "table reference names a segment with characters our names never have";
    }
    return NULL;
}

/* Writes all of buf to fd. */
static int write_all(int fd, const uint8_t *buf, size_t len)
{
    while (len) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

int wio_boot_shm_publish(const uint8_t *t, size_t len, const uint8_t digest[WIO_BOOT_DIGEST_LEN],
                         wio_boot_ref *out)
{
    uint8_t rnd[8];
    char stem[48];
    if (wio_random_bytes(rnd, sizeof rnd) != 0)
        return WAITIO_ERR_SYS;
    wio_shm_name_stem(stem, sizeof stem);
    int n = snprintf(out->name, sizeof out->name, "%st%016llx", stem,
                     (unsigned long long)wio_get_le64(rnd));
    if (n < 0 || (size_t)n > WIO_TABLE_SHM_NAME_MAX)
        return wio_fail(WAITIO_ERR_SYS, "shared-memory name for the address table too long");
    /* writes, not a mapping: a full /dev/shm fails here (ENOSPC), never with SIGBUS later */
    int fd = shm_open(out->name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return wio_fail(WAITIO_ERR_SYS, "shm_open(%s): %s", out->name, strerror(errno));
    int ok = write_all(fd, t, len) == 0;
    int err = errno;
    /* test hook (boot_shm.sh): a segment whose bytes no longer match the digest it is sent with */
    const char *corrupt = wio_env("WAITIO_TEST_BOOT_SHM_CORRUPT");
    if (ok && corrupt && strcmp(corrupt, "1") == 0) {
        uint8_t last = (uint8_t)(t[len - 1] ^ 0x5a);
        ok = pwrite(fd, &last, 1, (off_t)len - 1) == 1;
        err = errno;
    }
    close(fd);
    if (!ok) {
        shm_unlink(out->name);
        return wio_fail(WAITIO_ERR_SYS, "cannot write the address table to %s: %s", out->name, strerror(err));
    }
    out->table_len = len;
    memcpy(out->digest, digest, WIO_BOOT_DIGEST_LEN);
    return 0;
}

void wio_boot_shm_unlink(const char *name)
{
    if (name[0] && shm_unlink(name) != 0 && errno != ENOENT)
        wio_debug("shm_unlink(%s): %s", name, strerror(errno));
}

int wio_boot_shm_take(const wio_boot_ref *r, uint8_t **table)
{
    *table = NULL;
    int fd = shm_open(r->name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW, 0);
    if (fd < 0) {
        /* another IPC namespace on the same host id, or /dev/shm not shared: fetch instead */
        wio_debug("address table segment %s: %s; asking the master for the table", r->name, strerror(errno));
        return 1;
    }
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
        rc = wio_fail(WAITIO_ERR_PROTO, "address table segment %s is not a private segment of this "
                      "user (owner or mode)", r->name);
    else if ((uint64_t)st.st_size != r->table_len)
        rc = wio_fail(WAITIO_ERR_PROTO, "address table segment %s holds %lld bytes, the master "
                      "announced %llu", r->name, (long long)st.st_size, (unsigned long long)r->table_len);
    uint8_t *copy = rc ? NULL : malloc((size_t)r->table_len);
    if (!rc && !copy)
        rc = wio_fail(WAITIO_ERR_NOMEM, "out of memory for the address table");
    for (size_t at = 0; !rc && at < r->table_len;) { /* a copy: the digest covers what we parse */
        ssize_t n = pread(fd, copy + at, (size_t)r->table_len - at, (off_t)at);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            rc = wio_fail(WAITIO_ERR_PROTO, "address table segment %s: short read", r->name);
        else
            at += (size_t)n;
    }
    close(fd);
    uint8_t md[WIO_BOOT_DIGEST_LEN];
    if (!rc && (wio_boot_table_digest(copy, (size_t)r->table_len, md) != 0 ||
                memcmp(md, r->digest, sizeof md) != 0))
        rc = wio_fail(WAITIO_ERR_PROTO, "the address table in shared-memory segment %s does not match "
                      "the SHA-256 digest the master sent: start-up refused", r->name);
    if (rc) {
        free(copy);
        return rc;
    }
    *table = copy;
    return 0;
}
