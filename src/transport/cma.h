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

/* What a sender puts into an RTS frame so that the receiver can read the message itself. */
typedef struct wio_cma_desc {
    uint64_t pid;         /* the sender's process id, as the sender sees it */
    uint64_t addr;        /* the message's first byte in the sender's address space */
    uint64_t probe_addr;  /* where the sender keeps probe_value: the receiver reads it once per */
    uint64_t probe_value; /* peer to prove that pid names the sender (pid namespaces differ) */
} wio_cma_desc;

#define WIO_CMA_DESC_LEN 32

/* 1 if this build can read other processes' memory at all (Linux); the kernel may still refuse. */
int wio_cma_supported(void);
/* Fills d for a message at buf of this process. */
void wio_cma_describe(const void *buf, wio_cma_desc *d);
void wio_cma_encode(const wio_cma_desc *d, uint8_t out[WIO_CMA_DESC_LEN]);
void wio_cma_decode(const uint8_t in[WIO_CMA_DESC_LEN], wio_cma_desc *d);
/* Checks that d's process is the one that wrote d (its probe value is where d says). Returns 0,
 * or an errno value (EPERM, ESRCH, ENOSYS, EFAULT, or ESTALE when the value differs). */
int wio_cma_verify(const wio_cma_desc *d);
/* Copies n bytes at d->addr of d's process into dst. Returns 0 or an errno value (a partial copy
 * is an error: dst then holds garbage and the caller falls back to another path). */
int wio_cma_read(const wio_cma_desc *d, void *dst, size_t n);

#endif
