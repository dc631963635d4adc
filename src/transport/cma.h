/*
 * cma.h — single copy between processes of one host (Linux cross-memory attach,
 * process_vm_readv): the receiver of a large message reads it straight out of the sender's
 * buffer instead of both sides copying it through a ring. Which process may be read is the shm
 * transport's decision (shm.c: the pid the kernel reports for the peer's local socket, and only
 * between processes of the same effective uid); see docs/protocol.md, "Single copy".
 */
#ifndef WIO_CMA_H
#define WIO_CMA_H

#include <stddef.h>
#include <stdint.h>

/* 1 if this build can read other processes' memory at all (Linux); the kernel may still refuse. */
int wio_cma_supported(void);
/* 1 if this process runs as root or holds CAP_SYS_PTRACE: it could read processes it should
 * not, so single copy is only used when explicitly asked for. */
int wio_cma_privileged(void);
/* Copies n bytes at addr of process pid into dst. Returns 0 or an errno value (a partial copy
 * is an error: dst then holds garbage and the caller falls back to another path). */
int wio_cma_read(int32_t pid, uint64_t addr, void *dst, size_t n);
/* Copies n bytes from src to addr of process pid (process_vm_writev), for one-sided puts
 * (src/rma). Returns 0 or an errno value; a partial copy is an error. */
int wio_cma_write(int32_t pid, uint64_t addr, const void *src, size_t n);

#endif
