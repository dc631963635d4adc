/*
 * cma.h — single-copy transfers between processes of one host: the receiver of a large message
 * reads it straight out of the sender's buffer (Linux cross-memory attach, process_vm_readv),
 * instead of both sides copying it through a shared-memory ring. See docs/protocol.md,
 * "Single copy".
 */
#ifndef WIO_CMA_H
#define WIO_CMA_H

#include <stddef.h>
#include <stdint.h>

/* What a sender puts into an RTS frame so that the receiver can read the message itself. The
 * full form names the sender's pid and where the sender keeps the connection's probe token
 * (a value both ends derive from their handshake, never sent); once the receiver has proven
 * and pinned that pid (the sender saw a CTS with flag CMA), only the address follows. */
typedef struct wio_cma_desc {
    int full;             /* 1: pid and probe_addr are present; 0: the address alone */
    uint64_t pid;         /* the sender's process id, as the sender sees it */
    uint64_t addr;        /* the message's first byte in the sender's address space */
    uint64_t probe_addr;  /* where the sender keeps the connection's probe token */
} wio_cma_desc;

#define WIO_CMA_DESC_FULL 24
#define WIO_CMA_DESC_SHORT 8

/* 1 if this build can read other processes' memory at all (Linux); the kernel may still refuse. */
int wio_cma_supported(void);
/* 1 if this process may read any process's memory (root, or CAP_SYS_PTRACE in its effective
 * set): WAITIO_SINGLE_COPY=auto is then off, since a peer's descriptor could name anyone. */
int wio_cma_privileged(void);
/* Encodes d (full or short); returns the length (WIO_CMA_DESC_FULL or WIO_CMA_DESC_SHORT). */
size_t wio_cma_encode(const wio_cma_desc *d, uint8_t out[WIO_CMA_DESC_FULL]);
/* Decodes a descriptor of len bytes; -1 if len is neither form. */
int wio_cma_decode(const uint8_t *in, size_t len, wio_cma_desc *d);
/* 0 if pid runs as our effective user (its real, effective and saved uids all equal ours), or
 * an errno value: EPERM when it does not, ESRCH when it is gone. *uid gets its effective uid. */
int wio_cma_same_user(uint64_t pid, unsigned *uid);
/* Copies n bytes at addr of process pid into dst, reading in the same call the 8 bytes at
 * probe_addr, which must equal token (else ESTALE: pid no longer names the process proven).
 * n == 0 checks the probe alone. Returns 0 or an errno value (a partial copy is an error: dst
 * then holds garbage and the caller falls back to another path). */
int wio_cma_read(uint64_t pid, uint64_t probe_addr, uint64_t token, uint64_t addr, void *dst, size_t n);

#endif
