/*
 * tcp_int.h — what the TCP transport's files share, and nobody else sees: the connection,
 * listener and transport structs, the connection states, and the few functions one file calls
 * in another. tcp_cm.c sets connections up (listeners, accept and its caps, the handshake state
 * machine, deadlines and retries); tcp.c moves the bytes of open connections (send queue,
 * framing, parser, poll); addr.c converts addresses.
 */
#ifndef WIO_TCP_INT_H
#define WIO_TCP_INT_H

#include <sys/socket.h>
#include "transport/tcp.h"
#include "transport/shm.h"
#include "core/list.h"

/* ---- data path (tcp.c) ---- */
#define RBUF_SIZE (64u << 10)
/* One buffered read takes at most this much: enough to batch many small frames per system
 * call, small enough that a large payload's head is not copied twice (measured: 256 KiB reads
 * made 64-256 KiB eager messages 1.4-1.7x slower than raw TCP). */
#define RECV_BATCH (16u << 10)
#define DIRECT_READ_MIN (4u << 10) /* payload remainder read straight into its destination */
#define MAX_EVENTS 64
/* While polling shared-memory rings, epoll_wait runs every EPOLL_EVERY polls when some socket
 * carries data, and every EPOLL_EVERY_SHM_ONLY polls when all open connections move their data
 * through shared memory (the sockets then carry only connects, doorbells for sleepers and EOF).
 * An epoll_wait costs ~10 ring checks on a VM; at 32 it took ~12% of an 8-byte round trip. */
#define EPOLL_EVERY 32
#define EPOLL_EVERY_SHM_ONLY 1024
/* Handshake deadlines are checked at most every 50 ms, the clock read only every
 * DEADLINE_CLOCK_EVERY epoll_waits while polling. */
#define DEADLINE_CHECK_PERIOD 0.05
#define DEADLINE_CLOCK_EVERY 16

/* ---- handshake (tcp_cm.c, docs/protocol.md) ---- */
#define HELLO_LEN (WIO_NONCE_LEN + 16)                /* nonce, ids, limits */
#define ACK_LEN (WIO_NONCE_LEN + WIO_PROOF_LEN + 12)  /* nonce, proof, id, limits */
/* What both proofs cover: HELLO flags (le16) and payload, HELLO_ACK's nonce and fields. */
#define TRANSCRIPT_LEN (2 + HELLO_LEN + WIO_NONCE_LEN + 12)
#define HS_FRAME_MAX (WIO_FRAME_HDR_SIZE + WIO_HANDSHAKE_MAX)

enum obj_kind { OBJ_LISTENER = 1, OBJ_CONN = 2 };

enum conn_state {
    CS_CONNECTING,  /* connector: TCP connect in progress */
    CS_WAIT_ACK,    /* connector: HELLO sent */
    CS_WAIT_ACCEPT, /* connector: AUTH sent; waiting for ACCEPT */
    CS_WAIT_OFFER,  /* connector: ACCEPT(SHM) received; waiting for SHM_OFFER */
    CS_RETRY,       /* connector: dropped in its handshake; reconnects at retry_at (no socket) */
    CS_WAIT_HELLO,  /* acceptor: waiting for HELLO (unauthenticated) */
    CS_WAIT_AUTH,   /* acceptor: HELLO_ACK sent (unauthenticated) */
    CS_REJECTING,   /* acceptor: ACCEPT(REJECT or NACK) being written, then close */
    CS_WAIT_READY,  /* acceptor: SHM_OFFER sent; waiting for SHM_READY */
    CS_OPEN,
    CS_SHUTDOWN,    /* we sent our last frame and half-closed; waiting for the peer's EOF */
    CS_CLOSED,
};

enum rx_state { RX_HEADER, RX_PAYLOAD };

struct wio_tcp_listener {
    int kind;
    int fd;
    int armed;             /* accepting (wio_tcp_listener_arm) */
    int in_epoll;          /* registered now: not paused */
    int paused_full;       /* paused because the handshake table is full */
    double resume_at;      /* paused: when to register again */
    double backoff;        /* current pause after running out of descriptors */
    const wio_conn_handler *handler;
    void *ctx;
    wio_tcp *tcp;
    wio_list link;         /* wio_tcp.listeners */
};

struct wio_conn {
    int kind;
    int fd;
    int state;
    int initiator;
    wio_tcp *tcp;
    const wio_conn_handler *handler;
    void *ctx;
    void *user;               /* the owner's object; NULL on an accepted connection until the
                               * owner took it in `incoming` (after AUTH) */
    uint32_t my_id, peer_id;
    wio_peer_hello hello;     /* what the peer announced */
    char desc[80];
    /* sending */
    wio_list sendq;
    uint32_t tx_seq;
    int epollout;
    int shutdown_pending;
    /* receiving, once open */
    uint32_t rx_seq;
    uint8_t *rbuf;            /* RBUF_SIZE bytes, allocated when the connection opens */
    size_t rstart, rend;
    int rx_state;
    wio_frame_hdr rx_hdr;
    uint8_t *rx_dest;         /* NULL: discard */
    size_t rx_got;
    wio_list link;            /* all connections / zombies */
    /* shared memory */
    int shm_wanted;           /* both sides want it (HELLO flag, then ACCEPT flag) */
    int shm_active;           /* the byte stream moves through c->shm */
    wio_shm_seg *shm;
    wio_list shm_link;        /* wio_tcp.shm_conns */
    /* handshake (tcp_cm.c): a fixed part of the struct, nothing allocated before AUTH */
    double deadline;          /* the handshake (or its current step) must finish before this */
    wio_send_item hs_item;    /* handshake frames */
    uint8_t hs_payload[ACK_LEN];
    uint8_t hs_buf[HS_FRAME_MAX]; /* the handshake frame being received */
    size_t hs_got;
    wio_frame_hdr hs_hdr;
    uint8_t transcript[TRANSCRIPT_LEN];
    wio_list hs_link;         /* wio_tcp.handshakes, while accepted and not authenticated */
    int hs_listed;
    double hs_active;         /* when it last received a byte (least recently active dropped first) */
    wio_addr addr;            /* connector: where to (re)connect */
    int attempts;             /* connector: reconnects after being dropped in the handshake */
    double retry_at;
};

/* A token bucket for log lines that strangers can cause: `burst` lines at once, then `rate`
 * per second; what is dropped is counted and reported with the next line. */
typedef struct wio_loglimit {
    double tokens, last;
    unsigned long suppressed;
} wio_loglimit;

struct wio_tcp {
    int epfd;
    wio_tcp_params params;
    uint32_t self_id;
    wio_list conns;
    wio_list zombies;          /* closed, freed at the end of wio_tcp_poll */
    wio_list shm_conns;        /* open connections whose data moves through shared memory */
    wio_conn **shm_snapshot;   /* iterated copy of shm_conns (callbacks may close some) */
    size_t shm_snapshot_len;
    int shm_snapshot_valid;    /* cleared when shm_conns changes; rebuilt before freeing zombies */
    size_t shm_snapshot_cap;
    size_t nconns;             /* connections in `conns` (open or in their handshake) */
    unsigned polls_since_epoll;
    unsigned epolls_since_clock;
    double next_deadline_check;
    int deadline_due;          /* a connection failed synchronously: check at the next poll */
    /* connection management (tcp_cm.c) */
    wio_list listeners;
    wio_list handshakes;       /* accepted, not authenticated; least recently active first */
    size_t nhandshakes;
    int npaused;               /* listeners taken out of epoll for now */
    int reserve_fd;            /* kept open so that a descriptor is there when they run out */
    wio_loglimit hs_log;       /* closes of unauthenticated connections */
    unsigned long auth_failures; /* accepted, answered with HELLO_ACK, closed without a valid AUTH */
    wio_loglimit accept_log;   /* accept failures */
};

/* tcp.c */
int wio_tcp_conn_flush(wio_conn *c);  /* 0, or -1 when the connection failed */
int wio_tcp_conn_update_events(wio_conn *c, int want_out);
/* Closes the connection and tells its owner why (if it has one). */
void wio_tcp_conn_fail(wio_conn *c, int err, const char *why, int rejected);

/* tcp_cm.c */
void wio_tcp_cm_init(wio_tcp *t);
void wio_tcp_cm_fini(wio_tcp *t);
void wio_tcp_accept_ready(wio_tcp_listener *l);
void wio_tcp_hs_readable(wio_conn *c);       /* a connection in its handshake is readable */
void wio_tcp_conn_connected(wio_conn *c);    /* a connector's socket became writable */
void wio_tcp_check_deadlines(wio_tcp *t, double now);
void wio_tcp_hs_unlist(wio_conn *c);         /* leaves the unauthenticated table */
/* conn_fail of a connector dropped in its handshake: 1 if it will reconnect instead */
int wio_tcp_retry_instead(wio_conn *c, int err, const char *why);
/* Logs why an unowned (unauthenticated or refused) connection closes, rate-limited. */
void wio_tcp_hs_log_close(wio_conn *c, int err, const char *why);

/* addr.c */
socklen_t wio_addr_to_sockaddr(const wio_addr *a, struct sockaddr_storage *ss);
int wio_addr_from_sockaddr(const struct sockaddr *sa, wio_addr *out);

#endif
