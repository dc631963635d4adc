/*
 * frame.h — the one wire-frame encoder/decoder of WaitIO.
 *
 * Every message on a stream transport is a little-endian header followed by `len` payload
 * bytes. The header has one of two forms, told apart by its first byte: the full 56-byte one
 * (magic "WTIO", any frame), and the 24-byte short one (WIO_FRAME_SHORT_MARK) that the encoder
 * picks by itself for every EAGER frame without flags, id or aux, with a tag below 2^32 and of
 * at most 65535 payload bytes: the message path's common frame, so that a message of up to 32
 * bytes and its header fit in one cache line of a shared-memory ring. The decoder validates
 * magic (or mark), version (or the reserved byte), type and the per-type payload bound before
 * anything else looks at the header.
 */
#ifndef WIO_FRAME_H
#define WIO_FRAME_H

#include <stddef.h>
#include <stdint.h>

#define WIO_FRAME_MAGIC 0x4f495457u /* "WTIO" in little-endian byte order */
/* 2: authentication before the owner sees a connection (ACCEPT); 3: the short EAGER header;
 * 4: start-up table entries carry a transport extension (WIO_TABLE_ENTRY_LEN + ext bytes) */
#define WIO_PROTO_VERSION 4
#define WIO_FRAME_HDR_SIZE 56   /* the full header, and the most any header takes */
#define WIO_FRAME_SHORT_SIZE 24 /* the short EAGER header */
#define WIO_FRAME_SHORT_MARK 0xa7u /* its first byte (protocol 3's); the full header's is 'W' */
#define WIO_FRAME_SHORT_MAX 65535u /* the largest payload a short header describes */

enum wio_frame_type {
    WIO_FT_HELLO = 1,     /* connector -> acceptor: nonce, ids, limits */
    WIO_FT_HELLO_ACK = 2, /* acceptor -> connector: nonce, proof, limits */
    WIO_FT_AUTH = 3,      /* connector -> acceptor: proof */
    WIO_FT_EAGER = 4,     /* matched message with its data inline */
    WIO_FT_RTS = 5,       /* rendezvous request: id = send request, aux = total length */
    WIO_FT_CTS = 6,       /* clear to send: id = send request, aux = receive request */
    WIO_FT_DATA = 7,      /* rendezvous chunk: id = receive request, aux = offset */
    WIO_FT_CREDIT = 8,    /* returns eager credit only (header.credit) */
    WIO_FT_BYE = 9,       /* sender finalizes: no more frames follow */
    WIO_FT_REGISTER = 10, /* start-up: a process registers with the master */
    WIO_FT_TABLE = 11,    /* start-up: the master sends the address table */
    WIO_FT_ERROR = 12,    /* start-up: the master reports a failure (text payload) */
    WIO_FT_IDLE_CLOSE = 13, /* close this idle connection (flags: none = request, ACK, NACK) */
    WIO_FT_SHM_OFFER = 14,  /* acceptor -> connector after AUTH: shared-memory segment (or none) */
    WIO_FT_SHM_READY = 15,  /* connector -> acceptor: attached (ACK) or not (NACK) */
    WIO_FT_ACCEPT = 16,     /* acceptor -> connector after AUTH: the verdict (flags: REJECT, NACK) */
    WIO_FT_RMA = 17,        /* one-sided request (src/rma/am.c): tag = operation, gid = window */
    WIO_FT_RMA_REPLY = 18,  /* one-sided reply: id = the origin's request, aux = offset */
    /* start-up, one table per host (boot.c, docs/protocol.md "Start-up"): */
    WIO_FT_TABLE_REF = 19,     /* master -> process: the table is in segment (payload below);
                                * a host's leader -> master: it made that segment */
    WIO_FT_TABLE_FETCH = 20,   /* process -> master: the segment could not be opened, send TABLE */
    WIO_FT_TABLE_RELEASE = 21, /* master -> a host's leader: its host has the table, remove it */
    WIO_FT_MAX_
};

/* Header flags. */
#define WIO_FF_REJECT 0x0001u /* ACCEPT: simultaneous connect lost, use the other one */
#define WIO_FF_TRUNC 0x0002u  /* CTS: receiver's buffer is too short, no data will be sent */
#define WIO_FF_TIMEOUT 0x0004u /* ERROR: the failure is a start-up timeout */
#define WIO_FF_ACK 0x0008u     /* IDLE_CLOSE: agreed, nothing more follows from me */
#define WIO_FF_NACK 0x0010u    /* IDLE_CLOSE: not idle here, keep it; SHM_READY: not attached; ACCEPT: refused */
#define WIO_FF_SHM 0x0020u     /* (unused since the shm transport has its own socket) */
#define WIO_FF_CMA 0x0040u     /* RTS: a direct-read descriptor follows; CTS: the data was read */
#define WIO_FF_BULK 0x0080u    /* HELLO: a bulk connection (rendezvous DATA only, WIO_TPC_BULK) */
#define WIO_FF_PUBLISH 0x0100u /* TABLE: write it to a shared-memory segment for this host and
                                * answer with TABLE_REF (the host's leader, boot.c) */

/* Hard payload bounds, independent of tuning (tuned limits are checked by the engine). */
#define WIO_HANDSHAKE_MAX 256u
/* A table entry (boot.c): one process's addresses for every transport, a 44-byte fixed part
 * (its last 4 bytes: le16 extension length, 2 reserved zero bytes) followed by that many bytes
 * of transport extension (at most WIO_PROC_EXT_MAX, transport.h: the ucx worker address). */
#define WIO_TABLE_ENTRY_LEN 44u
#define WIO_TABLE_EXT_MAX 2048u /* = WIO_PROC_EXT_MAX (transport.h), checked there */
/* A process registers its PB's ranks in blocks of at most WIO_REGISTER_BLOCK table entries and
 * at most WIO_REGISTER_MAX bytes (a 16-byte header, then the entries): a PB of any size, with
 * extensions of any accepted length, registers in several frames, and the master never holds
 * more than one block per connection (docs/protocol.md, "Start-up"). The byte bound, not
 * block x (entry + largest extension) = 4.3 MB, keeps that per-connection memory near what it
 * was before extensions (81,936 bytes); one entry with the largest extension always fits. */
#define WIO_REGISTER_BLOCK 2048u
#define WIO_REGISTER_MAX (256u << 10)
#define WIO_ERROR_TEXT_MAX 4096u
#define WIO_TABLE_MAX (256u << 20)
/* TABLE_REF's payload: le64 table length, the table's SHA-256 (32 bytes), then the segment's
 * name (1..WIO_TABLE_SHM_NAME_MAX bytes, no NUL: "/waitio-<uid>-<pid>-n<pid ns>-t<random>",
 * shm_ring.c's naming, so that the leftover sweep knows it). TABLE_FETCH, TABLE_RELEASE: none. */
#define WIO_TABLE_SHM_NAME_MAX 63u
#define WIO_TABLE_REF_MAX (8u + 32u + WIO_TABLE_SHM_NAME_MAX)
/* The most processes one address table can describe (its 4-byte PB count and the sizes of up to
 * 2^16 PBs aside): the ceiling of WAITIO_MAX_PROCS, which bounds an instance (boot.c). */
#define WIO_PROCS_MAX ((WIO_TABLE_MAX - 4u - 4u * 65536u) / WIO_TABLE_ENTRY_LEN)
#define WIO_PROCS_DEFAULT (1u << 20)
#define WIO_EAGER_HARD_MAX (16u << 20)
#define WIO_CHUNK_HARD_MAX (64u << 20)
/* RTS: a direct-read descriptor: a transport's (shm: 16 B, ucx: at most 24 B) or a CUDA IPC
 * descriptor of a device buffer (WIO_GPU_DESC_LEN: mark byte, 64-byte handle, le64 offset, le64
 * length, le64 buffer id), told apart by their lengths (docs/protocol.md, "GPU memory") */
#define WIO_RTS_PAYLOAD_MAX 96u
#define WIO_GPU_DESC_LEN 89u
#define WIO_GPU_DESC_MARK 0xc7u
#define WIO_RMA_PAYLOAD_MAX (64u << 20) /* RMA, RMA_REPLY: one piece of a put / get / call */

typedef struct wio_frame_hdr {
    uint8_t type;
    uint16_t flags;
    uint32_t seq;    /* per connection and direction, starts at 0 */
    uint32_t credit; /* eager credit bytes returned to the frame's receiver */
    uint32_t gid;    /* group id (messages) */
    uint32_t src;    /* sender's rank in the group (messages); sender's process id (HELLO) */
    uint64_t tag;
    uint64_t len;    /* payload bytes that follow the header */
    uint64_t id;
    uint64_t aux;
} wio_frame_hdr;

/* Frames of the connection handshake (before the connection is open). */
static inline int wio_frame_is_handshake(unsigned type)
{
    return type <= 3 /* HELLO, HELLO_ACK, AUTH */ || (type >= WIO_FT_SHM_OFFER && type <= WIO_FT_ACCEPT);
}

/* Encodes h in the shortest form that carries it; returns the header's length (24 or 56). */
size_t wio_frame_encode(const wio_frame_hdr *h, uint8_t out[WIO_FRAME_HDR_SIZE]);
/* The size wio_frame_encode will give h's header: WIO_FRAME_SHORT_SIZE or WIO_FRAME_HDR_SIZE. */
size_t wio_frame_encoded_size(const wio_frame_hdr *h);
/* The length of the header whose first byte is `first` (what a parser must hold to decode it). */
static inline size_t wio_frame_hdr_len(uint8_t first)
{
    return first == WIO_FRAME_SHORT_MARK ? WIO_FRAME_SHORT_SIZE : WIO_FRAME_HDR_SIZE;
}
/* Decodes the header at in, which holds at least wio_frame_hdr_len(in[0]) bytes. Returns 0, or
 * -1 with *why set to a static reason when the header is invalid. */
int wio_frame_decode(const uint8_t *in, wio_frame_hdr *h, const char **why);
const char *wio_frame_type_name(unsigned type);

/* ---- file transport segments (transport/file.c, docs/protocol.md "File transport") ----
 * A segment file holds a run of one stream's bytes: a 48-byte header, the payload, and an
 * HMAC-SHA256 (with the instance's file key) over binding || payload || header, the binding
 * being the stream's direction, writer and reader (file.h). Its name is its sequence number (16
 * hex digits); a writer publishes it complete, by rename. Version 2: the MAC binds the direction. */
#define WIO_SEG_MAGIC 0x32304745534f4957ull /* "WIOSEG02" in little-endian byte order */
#define WIO_SEG_VERSION 2
#define WIO_SEG_HDR_SIZE 48
#define WIO_SEG_MAC_SIZE 32
#define WIO_SEG_FIN 0x0001u    /* the writer's last segment: the stream ends after it */

typedef struct wio_seg_hdr {
    uint16_t flags;
    uint64_t stream;           /* the connection's nonce (in its directory's name too) */
    uint64_t seq;              /* 0, 1, 2, ... per stream */
    uint64_t len;              /* payload bytes */
} wio_seg_hdr;

void wio_seg_encode(const wio_seg_hdr *h, uint8_t out[WIO_SEG_HDR_SIZE]);
/* Returns 0, or -1 with *why set when the header is malformed or its length exceeds max_len. */
int wio_seg_decode(const uint8_t in[WIO_SEG_HDR_SIZE], uint64_t max_len, wio_seg_hdr *h, const char **why);

/* ---- records: small files of the file transport and of start-up through a directory ----
 * magic "WIOREC01", le64 length, the data, HMAC-SHA256 over name || length || data (so that a
 * record cannot be passed off under another name). */
#define WIO_REC_MAGIC 0x31304345524f4957ull /* "WIOREC01" */
#define WIO_REC_HDR_SIZE 16

/* Little-endian helpers shared by every payload codec. */
static inline void wio_put_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}
static inline void wio_put_le16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline void wio_put_le64(uint8_t *p, uint64_t v)
{
    wio_put_le32(p, (uint32_t)v);
    wio_put_le32(p + 4, (uint32_t)(v >> 32));
}
static inline uint16_t wio_get_le16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t wio_get_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline uint64_t wio_get_le64(const uint8_t *p)
{
    return (uint64_t)wio_get_le32(p) | ((uint64_t)wio_get_le32(p + 4) << 32);
}

#endif
