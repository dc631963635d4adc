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

typedef struct wio_key {
    uint8_t bytes[WIO_KEY_MAX];
    size_t len;
    char source[300]; /* where the key came from, for messages */
} wio_key;

/* WAITIO_KEY, else WAITIO_KEY_FILE, else ~/.waitio/key (created with mode 0600). */
int wio_key_load(wio_key *k);
int wio_random_bytes(uint8_t *buf, size_t len);

enum wio_proof_role { WIO_PROOF_ACCEPTOR = 0, WIO_PROOF_CONNECTOR = 1 };
/* proof = HMAC(key, role label || nonce_c || nonce_a || le32 connector_id || le32 acceptor_id) */
void wio_auth_proof(const wio_key *k, int role, const uint8_t nonce_c[WIO_NONCE_LEN],
                    const uint8_t nonce_a[WIO_NONCE_LEN], uint32_t connector_id,
                    uint32_t acceptor_id, uint8_t out[WIO_PROOF_LEN]);
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
