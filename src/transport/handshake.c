/*
 * handshake.c — the authenticated handshake of every stream connection (docs/protocol.md,
 * "Connection handshake"): HELLO / HELLO_ACK / AUTH / ACCEPT, the HMAC proofs over both sides'
 * nonces, and the rule that nothing of a connection reaches its owner before the peer proved
 * the instance key: the owner's `incoming` runs only after AUTH checks out, and its verdict
 * (accept, or the simultaneous-connect tie-break) travels back in ACCEPT, before which the
 * connector writes nothing but handshake frames. This file and stream.c's listeners are the
 * scope of the handshake fuzzers (tests/fuzz).
 *
 *   connector                                   acceptor
 *     HELLO(nonce_c, my_id, target_id, limits) ->
 *                                              <- HELLO_ACK(nonce_a, proof_a, acceptor_id, limits)
 *     verify proof_a; AUTH(proof_c)            ->
 *                                                 verify proof_c; ask the owner
 *                                              <- ACCEPT (flag REJECT: use the other connection)
 *     (transport steps, e.g. shm's SHM_OFFER / SHM_READY, then open)
 */
#define WIO_LOG_SUBSYS WIO_SUB_NET /* this file logs as "net" (WAITIO_LOG=net=LEVEL) */
#include <string.h>
#include "transport/stream.h"
#include "core/common.h"

#define HELLO_LEN WIO_HS_HELLO_LEN
#define ACK_LEN (WIO_NONCE_LEN + WIO_PROOF_LEN + 12)
#define ACK_FIELDS (2 + HELLO_LEN) /* where HELLO_ACK's nonce and fields start in the transcript */

_Static_assert(ACK_LEN <= WIO_HANDSHAKE_MAX, "handshake payloads fit hs_payload");
_Static_assert(WIO_HS_TRANSCRIPT_LEN <= WIO_AUTH_TRANSCRIPT_MAX, "the transcript fits the MAC input");

static const wio_key *key_of(const wio_stream *s) { return wio_stream_ctx_params(s->ctx)->key; }

static void proof(const wio_stream *s, int label, uint8_t out[WIO_PROOF_LEN])
{
    wio_auth_mac(key_of(s), label, s->transcript, WIO_HS_TRANSCRIPT_LEN, out);
}

/* HELLO: a fresh nonce, who we are, whom we want, our limits; it opens the transcript. */
void wio_hs_send_hello(wio_stream *s)
{
    const wio_stream_params *p = wio_stream_ctx_params(s->ctx);
    uint8_t *q = s->hs_payload;
    if (wio_random_bytes(q, WIO_NONCE_LEN) != 0) {
        wio_stream_fail(s, WAITIO_ERR_SYS, "no random nonce", 0);
        return;
    }
    wio_put_le32(q + WIO_NONCE_LEN, s->my_id);
    wio_put_le32(q + WIO_NONCE_LEN + 4, s->peer_id);
    wio_put_le32(q + WIO_NONCE_LEN + 8, p->eager_limit);
    wio_put_le32(q + WIO_NONCE_LEN + 12, p->eager_credit);
    uint16_t flags = (s->purpose & WIO_TPC_BULK) ? WIO_FF_BULK : 0;
    wio_put_le16(s->transcript, flags);
    memcpy(s->transcript + 2, q, HELLO_LEN);
    s->state = WIO_SS_WAIT_ACK;
    wio_stream_send_handshake(s, WIO_FT_HELLO, flags, HELLO_LEN);
}

/* Acceptor: the connector says who it is (unproven) and whom it wants. Nothing is decided
 * here but whether the HELLO is well-formed and for us; the owner is not told. */
static int handle_hello(wio_stream *s, const wio_frame_hdr *h)
{
    if (h->len != HELLO_LEN || (h->flags & ~WIO_FF_BULK))
        return -1;
    const wio_stream_params *p = wio_stream_ctx_params(s->ctx);
    const uint8_t *q = s->rx_small;
    uint32_t claimed = wio_get_le32(q + WIO_NONCE_LEN);
    uint32_t target = wio_get_le32(q + WIO_NONCE_LEN + 4);
    if (target != s->my_id) {
        wio_stream_fail(s, WAITIO_ERR_PROTO, "HELLO addressed to another process (stale address?)", 0);
        return 1;
    }
    s->peer_id = claimed; /* a claim until AUTH proves it */
    s->hello.id = claimed;
    s->hello.eager_limit = wio_get_le32(q + WIO_NONCE_LEN + 8);
    s->hello.eager_credit = wio_get_le32(q + WIO_NONCE_LEN + 12);
    s->purpose = (h->flags & WIO_FF_BULK) ? WIO_TPC_BULK : 0;
    wio_put_le16(s->transcript, h->flags);
    memcpy(s->transcript + 2, q, HELLO_LEN);
    uint8_t *fields = s->transcript + ACK_FIELDS;
    if (wio_random_bytes(fields, WIO_NONCE_LEN) != 0) {
        wio_stream_fail(s, WAITIO_ERR_SYS, "no random nonce", 0);
        return 1;
    }
    wio_put_le32(fields + WIO_NONCE_LEN, s->my_id);
    wio_put_le32(fields + WIO_NONCE_LEN + 4, p->eager_limit);
    wio_put_le32(fields + WIO_NONCE_LEN + 8, p->eager_credit);
    uint8_t *a = s->hs_payload;
    memcpy(a, fields, WIO_NONCE_LEN);
    proof(s, WIO_AUTH_ACCEPTOR, a + WIO_NONCE_LEN);
    memcpy(a + WIO_NONCE_LEN + WIO_PROOF_LEN, fields + WIO_NONCE_LEN, 12);
    s->state = WIO_SS_WAIT_AUTH;
    wio_stream_send_handshake(s, WIO_FT_HELLO_ACK, 0, ACK_LEN);
    return s->state == WIO_SS_CLOSED;
}

/* Connector: the acceptor proved the key over the whole exchange; prove it back and wait for
 * the verdict. */
static int handle_ack(wio_stream *s, const wio_frame_hdr *h)
{
    if (h->len != ACK_LEN || h->flags != 0)
        return -1;
    const uint8_t *q = s->rx_small;
    uint8_t *fields = s->transcript + ACK_FIELDS, expect[WIO_PROOF_LEN];
    memcpy(fields, q, WIO_NONCE_LEN);
    memcpy(fields + WIO_NONCE_LEN, q + WIO_NONCE_LEN + WIO_PROOF_LEN, 12);
    uint32_t acceptor = wio_get_le32(fields + WIO_NONCE_LEN);
    proof(s, WIO_AUTH_ACCEPTOR, expect);
    if (!wio_auth_proof_equal(expect, q + WIO_NONCE_LEN) || acceptor != s->peer_id) {
        wio_stream_fail(s, WAITIO_ERR_AUTH, "peer failed authentication (different WAITIO_KEY?)", 0);
        return 1;
    }
    s->authenticated = 1;
    s->hello.id = acceptor;
    s->hello.eager_limit = wio_get_le32(fields + WIO_NONCE_LEN + 4);
    s->hello.eager_credit = wio_get_le32(fields + WIO_NONCE_LEN + 8);
    if (wio_stream_promote(s) != 0) {
        wio_stream_fail(s, WAITIO_ERR_NOMEM, "out of memory for the connection's buffer", 0);
        return 1;
    }
    proof(s, WIO_AUTH_CONNECTOR, s->hs_payload);
    s->state = WIO_SS_WAIT_ACCEPT;
    wio_stream_send_handshake(s, WIO_FT_AUTH, 0, WIO_PROOF_LEN);
    return s->state == WIO_SS_CLOSED;
}

/* Acceptor: the connector proved the key. Only now does the owner hear of the connection. */
static int handle_auth(wio_stream *s, const wio_frame_hdr *h)
{
    if (h->len != WIO_PROOF_LEN)
        return -1;
    uint8_t expect[WIO_PROOF_LEN];
    proof(s, WIO_AUTH_CONNECTOR, expect);
    if (!wio_auth_proof_equal(expect, s->rx_small)) {
        wio_stream_fail(s, WAITIO_ERR_AUTH, "authentication failed: peer does not know the instance key", 0);
        return 1;
    }
    s->authenticated = 1;
    if (wio_stream_promote(s) != 0) {
        wio_stream_fail(s, WAITIO_ERR_NOMEM, "out of memory for the connection's buffer", 0);
        return 1;
    }
    void *user = NULL;
    WIO_ASSERT(s->user == NULL && !s->initiator); /* the owner hears of it here first */
    int verdict = s->handler->incoming
                      ? s->handler->incoming(s->hctx, s->tp_conn, s->peer_id, s->purpose, &user)
                      : WIO_TP_REFUSE;
    if (s->state == WIO_SS_CLOSED)
        return 1;
    switch (verdict) {
    case WIO_TP_ACCEPT:
        s->user = user;
        wio_stream_send_handshake(s, WIO_FT_ACCEPT, 0, 0);
        if (s->state == WIO_SS_CLOSED)
            return 1;
        if (s->kind->accepted && s->kind->accepted(s))
            return s->state == WIO_SS_CLOSED;
        wio_stream_open(s);
        return s->state == WIO_SS_CLOSED;
    case WIO_TP_REJECT: /* our own connection wins; closed once ACCEPT(REJECT) is written */
        s->state = WIO_SS_REJECTING;
        wio_stream_send_handshake(s, WIO_FT_ACCEPT, WIO_FF_REJECT, 0);
        return s->state == WIO_SS_CLOSED;
    case WIO_TP_DUPLICATE: /* usually a simultaneous-connect loser that raced its own close */
        wio_info("refusing connection %s: process %u is already connected (connect race)", s->desc,
                 (unsigned)s->peer_id);
        break;
    default: /* e.g. a peer that finalized meanwhile: the connector hears NACK and copes */
        wio_info("refusing connection %s: process %u is not a peer this process can accept now",
                 s->desc, (unsigned)s->peer_id);
        break;
    }
    /* refused: the connector hears why (ACCEPT with NACK) before the connection closes */
    s->state = WIO_SS_REJECTING;
    wio_stream_send_handshake(s, WIO_FT_ACCEPT, WIO_FF_NACK, 0);
    return s->state == WIO_SS_CLOSED;
}

/* Connector: the acceptor's verdict. */
static int handle_accept(wio_stream *s, const wio_frame_hdr *h)
{
    if (h->len != 0)
        return -1;
    if (h->flags & ~(WIO_FF_REJECT | WIO_FF_NACK))
        return -1;
    if (s->orphaned && (h->flags & (WIO_FF_REJECT | WIO_FF_NACK))) { /* as its owner expected */
        wio_stream_fail(s, WAITIO_ERR_PEER, "rejected, as expected", 0);
        return 1;
    }
    if (h->flags & WIO_FF_NACK) {
        wio_stream_fail(s, WAITIO_ERR_PEER, "the peer refused the connection (it does not expect us, "
                        "or already has a connection from us)", 0);
        return 1;
    }
    if (s->orphaned) {
        /* the peer took it after all (the connection the owner kept was gone by then): the peer
         * has bound it, so the owner takes it back, or the peer sees it close */
        void *user = NULL;
        int verdict = s->handler->incoming
                          ? s->handler->incoming(s->hctx, s->tp_conn, s->peer_id, s->purpose | WIO_TPC_ADOPT, &user)
                          : WIO_TP_REFUSE;
        if (s->state == WIO_SS_CLOSED)
            return 1;
        if (verdict != WIO_TP_ACCEPT) {
            wio_stream_fail(s, WAITIO_ERR_PEER, "accepted by the peer, but no longer wanted here", 0);
            return 1;
        }
        s->user = user;
        s->orphaned = 0;
    }
    if (h->flags & WIO_FF_REJECT) {
        wio_stream_fail(s, WAITIO_ERR_PEER, "simultaneous connect resolved in favour of the peer's", 1);
        return 1;
    }
    if (s->kind->connector_accepted && s->kind->connector_accepted(s)) {
        s->state = WIO_SS_TP_HANDSHAKE;
        return 0;
    }
    wio_stream_open(s);
    return s->state == WIO_SS_CLOSED;
}

int wio_hs_frame(wio_stream *s, const wio_frame_hdr *h)
{
    int rc;
    switch (h->type) {
    case WIO_FT_HELLO: rc = handle_hello(s, h); break;
    case WIO_FT_HELLO_ACK: rc = handle_ack(s, h); break;
    case WIO_FT_AUTH: rc = handle_auth(s, h); break;
    case WIO_FT_ACCEPT: rc = handle_accept(s, h); break;
    default:
        rc = s->kind->handshake_frame ? s->kind->handshake_frame(s, h, s->rx_small) : -1;
        if (rc == 0)
            rc = s->state == WIO_SS_CLOSED;
        break;
    }
    if (rc < 0) {
        wio_stream_fail(s, WAITIO_ERR_PROTO, "malformed handshake frame", 0);
        return 1;
    }
    return rc;
}

/* Which frame types each state accepts: before authentication only the next handshake step. */
int wio_hs_frame_allowed(int state, unsigned type)
{
    switch (state) {
    case WIO_SS_WAIT_HELLO: return type == WIO_FT_HELLO;
    case WIO_SS_WAIT_ACK: return type == WIO_FT_HELLO_ACK;
    case WIO_SS_WAIT_AUTH: return type == WIO_FT_AUTH;
    case WIO_SS_WAIT_ACCEPT: return type == WIO_FT_ACCEPT;
    case WIO_SS_TP_HANDSHAKE: return type == WIO_FT_SHM_OFFER || type == WIO_FT_SHM_READY;
    case WIO_SS_OPEN:
    case WIO_SS_SHUTDOWN: return !wio_frame_is_handshake(type);
    default: return 0;
    }
}
