/*
 * ucx.h — the ucx transport (ucx.c: connections and two-sided frames over UCX's UCP layer;
 * ucx_rma.c: one-sided operations over UCP's RMA and atomics). Only those files and the
 * transport table see this header; the engine sees the transport through its row
 * (wio_transport_ucx) like any other.
 */
#ifndef WIO_UCX_H
#define WIO_UCX_H

#include <stddef.h>
#include "transport/transport.h"

extern const wio_transport_ops wio_transport_ucx;

/* waitio-info: UCX's version and the devices and transports UCX reports on this host. */
void wio_ucx_describe(char *buf, size_t cap);

#ifdef WIO_UCX_INTERNAL
#include "transport/ucx_sym.h" /* UCX's headers; its functions through the dlopen'ed table */
#include "core/poller.h"
#include "transport/stream.h"

typedef struct ucx_tp ucx_tp;
typedef struct ucx_conn ucx_conn;

/* What has arrived on a connection and was not read yet: an active message's data, kept where
 * UCX put it (`release` set: given back with ucp_am_data_release) or copied (`copy`). */
typedef struct ucx_rx {
    struct ucx_rx *next;
    const uint8_t *data;
    size_t len;
    uint32_t seq;
    int eof;                  /* the sender's end of stream (no data) */
    int small;                /* room for UCX_RX_SMALL bytes: recycled (ucx.c rx_free) */
    void *release;
    uint8_t copy[];
} ucx_rx;

struct ucx_conn {
    ucx_tp *t;
    wio_stream *s;            /* NULL for an accepted connection until the dispatcher makes it */
    uint32_t id;              /* ours: the peer addresses its messages to it */
    uint32_t peer_conn;       /* the peer's id for this connection (0 until its first message) */
    uint32_t peer_id;         /* connector: the process we called; acceptor: the one HELLO names */
    int initiator;
    ucp_ep_h ep;              /* ours to the peer process, shared by its connections (ep_create) */
    ucx_rx *rx_head, *rx_tail;
    ucx_rx *ooo;              /* arrived ahead of rx_seq, in seq order */
    size_t ooo_bytes;
    uint32_t rx_seq, tx_seq;  /* the next chunk expected / sent */
    size_t rx_off;            /* into rx_head */
    size_t rx_bytes;          /* queued, not yet read */
    int eof;                  /* the peer's end of stream arrived (after all its data) */
    int failed;               /* UCX reported the endpoint failed, or the peer's process exited */
    uint32_t peer_pid;        /* the table's (connector) or its messages' (acceptor): watched (pidfd) on this host */
    int watched;
    int eof_sent;             /* our end of stream went out (shutdown, or release) */
    wio_poll_fd pidfd;
    char fail_why[96];
    size_t tx_inflight;      /* bytes in sends UCX has not completed */
    int want_write;
    int queued;               /* on the dispatcher's list */
    unsigned read_round;      /* the dispatcher's round that last read it (ucxscale) */
    int rdv_mode;             /* how its large messages go (ucx.c rdv_mode_for), 0 until the first */
    struct ucx_push *push;    /* ours offered through UCX's rendezvous, until the CTS (rdv_finish) */
    unsigned npush;
    struct ucx_held *held;    /* the peer's announced, waiting for rdv_get */
    unsigned nheld;
    uint32_t held_gone;       /* the peer's offers up to this token were dropped here (held_gone_set) */
    int held_gone_set;
    int push_lost;            /* an offer of ours failed in UCX: the dispatcher tells the peer */
    int dead;                 /* destroyed: freed after the poller's round (t->grave) */
    ucx_conn *next_ready;
};

struct ucx_tp {
    ucp_context_h context;
    ucp_worker_h worker;
    ucp_address_t *address;
    size_t address_len;
    uint8_t *ext;             /* our table extension: [pid, 4 bytes LE][worker address] */
    wio_stream_ctx *ctx;
    wio_poller *poller;
    wio_poll_fd efd;
    wio_poll_source src;
    const wio_tp_handler *handler;
    void *hctx;
    const wio_proc *table;
    uint32_t nprocs, self_id;
    uint32_t pid;
    int started;
    int in_progress;          /* inside ucp_worker_progress: UCX forbids re-entering it */
    uint32_t unborn, max_unborn; /* accepted connections whose stream the dispatcher has not made */
    ucx_conn **conns;         /* by id's index */
    uint32_t nconn_slots;
    uint32_t generation;
    ucx_conn *ready;          /* connections with something for the dispatcher */
    ucx_conn *ready_tail;
    unsigned long delivered;  /* connections the dispatcher served since prepare_sleep looked */
    unsigned round;           /* the dispatcher's rounds (ucxscale) */
    int efd_fd;
    int efd_off;              /* the event descriptor left the poller (efd_ready: spurious) */
    unsigned spurious, timed_rounds;
    ucx_conn *grave;          /* destroyed connections, freed after the poller's round */
    ucx_rx *rx_pool;          /* recycled small receive records */
    unsigned rx_pooled;
    void **closing;           /* endpoint-close requests still in flight */
    size_t nclosing, closing_cap;
    unsigned long dropped;    /* messages for no connection of ours, or malformed */
    unsigned long frames_in, frames_out, copies_out, reordered;
    struct ucx_reg_cache *rcache;
    struct ucx_peer_ep *peer_eps; /* by process id (ucx.c ep_create), allocated at first use */
    int ep_per_conn;          /* WAITIO_TEST_UCX_EP_PER_CONN (ucx.c ep_create) */
    int rdv_setting;          /* WAITIO_UCX_RDV: 0 auto, else UCX_RDV_GET or UCX_RDV_PUSH */
    uint32_t push_token;      /* the last offer's number: unique among this process's offers */
    ucp_mem_h probe_mh;       /* memory UCX allocated, whose key tells whether an endpoint maps */
    void *probe_rkey;         /* peers' memory (rdv_mode_for); probe_state 1 made, -1 failed */
    uint64_t probe_addr;
    int probe_state;
    unsigned long pushes_out, pushes_lost, pushes_in, pushes_dropped;
    int push_lost;            /* some connection has push_lost set */
};

/* ucx_rma.c: the registration cache (rendezvous sources and one-sided windows). */
struct ucx_reg_cache;
int wio_ucx_rcache_create(ucx_tp *t, size_t max_entries, struct ucx_reg_cache **out);
void wio_ucx_rcache_destroy(struct ucx_reg_cache *rc);
/* A registration covering [addr, addr+len): its packed remote key (valid while the entry lives,
 * i.e. until the next call that may evict). 0, or -1 (not registrable). */
int wio_ucx_rcache_get(struct ucx_reg_cache *rc, const void *addr, size_t len, const void **rkey,
                       size_t *rkey_len);
/* Progresses the worker until req completes; never from inside a UCX callback. */
ucs_status_t wio_ucx_wait(ucx_tp *t, void *req);
/* The same for a request on c's endpoint: if c's peer dies meanwhile (an endpoint to this host
 * cannot report it), the endpoint is closed by force and req completes with an error. */
ucs_status_t wio_ucx_wait_conn(ucx_conn *c, void *req);

/* ucx_rma.c: the row's rdma_* ops (transport.h, "one-sided over RDMA"). */
int wio_ucx_rdma_reg(void *tp, void *addr, size_t len, unsigned flags, void **reg, uint8_t *key, size_t cap,
                     size_t *key_len);
void wio_ucx_rdma_dereg(void *tp, void *reg);
int wio_ucx_rdma_rkey(void *conn, const uint8_t *key, size_t key_len, void **rkey);
void wio_ucx_rdma_rkey_free(void *tp, void *rkey);
int wio_ucx_rdma_post(void *conn, wio_rdma_op *op);
int wio_ucx_rdma_flush(void *conn, void (*done)(void *arg, int err), void *arg);
int wio_ucx_rdma_fence(void *tp);
/* Atomics through UCX are atomic with the CPU's own (UCX_ATOMIC_MODE unset or cpu). */
int wio_ucx_rma_amo_ok(void);
#endif

#endif
