/*
 * auth.c — owns the instance key (where it comes from, file permission checks, first-use
 * creation) and the keyed proofs exchanged in every connection's handshake. All cryptography
 * is OpenSSL's; nothing here is hand-written crypto.
 */
#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "auth.h"
#include "common.h"
#include "frame.h"
#include "settings.h"

int wio_random_bytes(uint8_t *buf, size_t len)
{
    if (RAND_bytes(buf, (int)len) != 1)
        return wio_fail(WAITIO_ERR_SYS, "OpenSSL RAND_bytes failed");
    return 0;
}

static void trim_trailing_space(wio_key *k)
{
    while (k->len > 0 && (k->bytes[k->len - 1] == '\n' || k->bytes[k->len - 1] == '\r' ||
                          k->bytes[k->len - 1] == ' ' || k->bytes[k->len - 1] == '\t'))
        k->len--;
}

static int check_key_length(const wio_key *k, const char *what)
{
    if (k->len >= WIO_KEY_MIN)
        return 0;
    return wio_fail(WAITIO_ERR_KEY,
                    "%s holds a key of %zu bytes; at least %d are required (a short key can be "
                    "guessed offline from one recorded handshake): use e.g. 64 hex digits from "
                    "'openssl rand -hex 32'", what, k->len, WIO_KEY_MIN);
}

/* Reads a key file, refusing files that another user owns or that others can read or write
 * (as SSH does). */
static int read_key_file(wio_key *k, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return wio_fail(WAITIO_ERR_KEY, "cannot open key file %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return wio_fail(WAITIO_ERR_KEY, "key file %s is not a regular file", path);
    }
    if (st.st_uid != geteuid()) {
        close(fd);
        return wio_fail(WAITIO_ERR_KEY, "key file %s belongs to uid %u, not to this process's "
                        "user (uid %u): another user could know or change the key", path,
                        (unsigned)st.st_uid, (unsigned)geteuid());
    }
    if (st.st_mode & (S_IRWXG | S_IRWXO)) {
        close(fd);
        return wio_fail(WAITIO_ERR_KEY,
                        "key file %s is accessible by other users (mode %03o); run chmod 600 %s",
                        path, (unsigned)(st.st_mode & 0777), path);
    }
    ssize_t n = read(fd, k->bytes, sizeof k->bytes);
    close(fd);
    if (n < 0)
        return wio_fail(WAITIO_ERR_KEY, "cannot read key file %s: %s", path, strerror(errno));
    k->len = (size_t)n;
    trim_trailing_space(k);
    if (k->len == 0)
        return wio_fail(WAITIO_ERR_KEY, "key file %s is empty", path);
    char what[4200];
    snprintf(what, sizeof what, "key file %s", path);
    int rc = check_key_length(k, what);
    if (rc)
        return rc;
    snprintf(k->source, sizeof k->source, "file %s", path);
    return 0;
}

/* ~/.waitio holds the key: another user who could write there could replace it. */
static int check_key_dir(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) != 0)
        return wio_fail(WAITIO_ERR_KEY, "cannot use %s: %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return wio_fail(WAITIO_ERR_KEY, "%s is not a directory", dir);
    if (st.st_uid != geteuid())
        return wio_fail(WAITIO_ERR_KEY, "%s belongs to uid %u, not to this process's user (uid %u)",
                        dir, (unsigned)st.st_uid, (unsigned)geteuid());
    if (st.st_mode & (S_IWGRP | S_IWOTH))
        return wio_fail(WAITIO_ERR_KEY, "%s is writable by other users (mode %03o), who could "
                        "replace the key; run chmod 700 %s", dir, (unsigned)(st.st_mode & 0777), dir);
    return 0;
}

/* Creates ~/.waitio/key atomically: write a private temporary file with an unpredictable name
 * (mkstemp: O_EXCL, so a planted symlink is never followed), then link() it into place so
 * that concurrent first users all end up reading the same complete key. */
static int create_user_key(const char *dir, const char *path)
{
    char tmp[4400];
    snprintf(tmp, sizeof tmp, "%s.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0)
        return wio_fail(WAITIO_ERR_KEY, "cannot create a temporary key file in %s: %s", dir,
                        strerror(errno));
    uint8_t raw[32];
    char hex[65];
    int rc = wio_random_bytes(raw, sizeof raw);
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(hex + 2 * i, 3, "%02x", raw[i]);
    hex[64] = '\n';
    if (rc == 0 && (fchmod(fd, 0600) != 0 || write(fd, hex, 65) != 65 || fsync(fd) != 0))
        rc = wio_fail(WAITIO_ERR_KEY, "cannot write %s: %s", tmp, strerror(errno));
    close(fd);
    if (rc == 0 && link(tmp, path) != 0 && errno != EEXIST)
        rc = wio_fail(WAITIO_ERR_KEY, "cannot create key file %s: %s", path, strerror(errno));
    unlink(tmp);
    return rc;
}

int wio_key_load(wio_key *k)
{
    memset(k, 0, sizeof *k);
    const char *v = wio_env("WAITIO_KEY");
    if (v && *v) {
        k->len = strlen(v);
        if (k->len > sizeof k->bytes)
            return wio_fail(WAITIO_ERR_KEY, "WAITIO_KEY is longer than %d bytes", WIO_KEY_MAX);
        memcpy(k->bytes, v, k->len);
        snprintf(k->source, sizeof k->source, "WAITIO_KEY");
        return check_key_length(k, "WAITIO_KEY");
    }
    v = wio_env("WAITIO_KEY_FILE");
    if (v && *v)
        return read_key_file(k, v);
    const char *home = getenv("HOME");
    if (!home || !*home)
        return wio_fail(WAITIO_ERR_KEY, "no WAITIO_KEY, WAITIO_KEY_FILE or HOME to find a key");
    char dir[4096], path[4200];
    snprintf(dir, sizeof dir, "%s/.waitio", home);
    snprintf(path, sizeof path, "%s/key", dir);
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        return wio_fail(WAITIO_ERR_KEY, "cannot create %s: %s", dir, strerror(errno));
    int rc = check_key_dir(dir);
    if (rc)
        return rc;
    if (access(path, F_OK) != 0 && (rc = create_user_key(dir, path)))
        return rc;
    return read_key_file(k, path);
}

void wio_auth_mac(const wio_key *k, int label, const uint8_t *transcript, size_t len,
                  uint8_t out[WIO_PROOF_LEN])
{
    static const char labels[3][8] = {"wio-acc", "wio-con", "wio-cma"};
    uint8_t msg[8 + WIO_AUTH_TRANSCRIPT_MAX];
    unsigned int outlen = WIO_PROOF_LEN;
    memset(out, 0, WIO_PROOF_LEN); /* on any failure: cannot match a real proof */
    if (label < 0 || label > 2 || len > WIO_AUTH_TRANSCRIPT_MAX)
        return;
    memcpy(msg, labels[label], 8);
    memcpy(msg + 8, transcript, len);
    if (!HMAC(EVP_sha256(), k->bytes, (int)k->len, msg, 8 + len, out, &outlen) ||
        outlen != WIO_PROOF_LEN)
        memset(out, 0, WIO_PROOF_LEN);
}

int wio_auth_proof_equal(const uint8_t a[WIO_PROOF_LEN], const uint8_t b[WIO_PROOF_LEN])
{
    return CRYPTO_memcmp(a, b, WIO_PROOF_LEN) == 0;
}

void wio_auth_derive(const wio_key *k, const char *label, uint8_t out[WIO_PROOF_LEN])
{
    unsigned int outlen = WIO_PROOF_LEN;
    if (!HMAC(EVP_sha256(), k->bytes, (int)k->len, (const uint8_t *)label, strlen(label), out, &outlen))
        RAND_bytes(out, WIO_PROOF_LEN); /* a key nobody knows: every MAC check fails */
}

struct wio_mac {
    EVP_MAC *mac;
    EVP_MAC_CTX *ctx;
    uint8_t key[WIO_PROOF_LEN];
};

int wio_mac_restart(wio_mac *m)
{
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)"SHA256", 0),
        OSSL_PARAM_construct_end(),
    };
    return EVP_MAC_init(m->ctx, m->key, sizeof m->key, params) == 1 ? 0 : -1;
}

int wio_mac_new(wio_mac **out, const uint8_t key[WIO_PROOF_LEN])
{
    wio_mac *m = calloc(1, sizeof *m);
    if (!m)
        return wio_fail(WAITIO_ERR_NOMEM, "out of memory for a MAC");
    memcpy(m->key, key, sizeof m->key);
    m->mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    m->ctx = m->mac ? EVP_MAC_CTX_new(m->mac) : NULL;
    if (!m->ctx || wio_mac_restart(m) != 0) {
        wio_mac_free(m);
        return wio_fail(WAITIO_ERR_SYS, "OpenSSL cannot make an HMAC-SHA256");
    }
    *out = m;
    return 0;
}

void wio_mac_update(wio_mac *m, const void *data, size_t len)
{
    if (len)
        (void)EVP_MAC_update(m->ctx, data, len); /* a failure shows as a wrong MAC at the end */
}

int wio_mac_final(wio_mac *m, uint8_t out[WIO_PROOF_LEN])
{
    size_t n = 0;
    if (EVP_MAC_final(m->ctx, out, &n, WIO_PROOF_LEN) != 1 || n != WIO_PROOF_LEN) {
        memset(out, 0, WIO_PROOF_LEN);
        return -1;
    }
    return 0;
}

void wio_mac_free(wio_mac *m)
{
    if (!m)
        return;
    EVP_MAC_CTX_free(m->ctx);
    EVP_MAC_free(m->mac);
    OPENSSL_cleanse(m->key, sizeof m->key);
    free(m);
}
