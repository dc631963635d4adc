/*
 * auth.h — the instance key and the challenge-response proofs (HMAC-SHA256, OpenSSL libcrypto).
 */
#ifndef WIO_AUTH_H
#define WIO_AUTH_H

#include <stddef.h>
#include <stdint.h>

#define WIO_NONCE_LEN 32
#define WIO_PROOF_LEN 32
#define WIO_KEY_MAX 4096
#define WIO_KEY_MIN 16   /* shorter keys are refused: they can be guessed offline from one handshake */

typedef struct wio_key {
    uint8_t bytes[WIO_KEY_MAX];
    size_t len;
    char source[300]; /* where the key came from, for messages */
} wio_key;

/* WAITIO_KEY, else WAITIO_KEY_FILE, else ~/.waitio/key (created with mode 0600). A key file must
 * belong to the effective user and be private to it, ~/.waitio must not be writable by others,
 * and a key must have at least WIO_KEY_MIN bytes. */
int wio_key_load(wio_key *k);
int wio_random_bytes(uint8_t *buf, size_t len);

/* What a keyed hash is for: each use has its own 8-byte label, so that no value made for one
 * purpose is valid for another (a proof cannot be reflected, a derived token is no proof). */
enum wio_auth_label {
    WIO_AUTH_ACCEPTOR = 0,  /* "wio-acc": the acceptor's proof in HELLO_ACK */
    WIO_AUTH_CONNECTOR = 1, /* "wio-con": the connector's proof in AUTH */
    WIO_AUTH_CMA = 2,       /* "wio-cma": the connection's single-copy probe token */
};
/* out = HMAC-SHA256(key, label || transcript). The handshake's transcript is the HELLO's flags
 * and payload and the HELLO_ACK's nonce and fields (docs/protocol.md), so a proof covers both
 * nonces, both process ids and everything either side announced. */
#define WIO_AUTH_TRANSCRIPT_MAX 128
void wio_auth_mac(const wio_key *k, int label, const uint8_t *transcript, size_t len,
                  uint8_t out[WIO_PROOF_LEN]);
/* Constant-time comparison; returns 1 when equal. */
int wio_auth_proof_equal(const uint8_t a[WIO_PROOF_LEN], const uint8_t b[WIO_PROOF_LEN]);

/* A key for one purpose: HMAC-SHA256(instance key, label), so that MACs made for one purpose
 * (file segments) are never valid as another (handshake proofs). */
void wio_auth_derive(const wio_key *k, const char *label, uint8_t out[WIO_PROOF_LEN]);

/* Incremental HMAC-SHA256 (OpenSSL EVP_MAC) over data that arrives in pieces. */
typedef struct wio_mac wio_mac;
int wio_mac_new(wio_mac **out, const uint8_t key[WIO_PROOF_LEN]);
int wio_mac_restart(wio_mac *m);
void wio_mac_update(wio_mac *m, const void *data, size_t len);
int wio_mac_final(wio_mac *m, uint8_t out[WIO_PROOF_LEN]);
void wio_mac_free(wio_mac *m);

#endif
