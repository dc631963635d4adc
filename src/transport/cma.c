/*
 * cma.c — single-copy reads from another process of this host (Linux process_vm_readv). Owns
 * the descriptor a sender advertises and the per-process probe value that lets a receiver check
 * that the advertised pid really is the sender: two processes can share a boot id and /dev/shm
 * yet live in different pid namespaces, where the same number names someone else.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>
#include "transport/cma.h"
#include "core/auth.h"
#include "core/frame.h"

static volatile uint64_t probe_value; /* random, set once; read by peers through the kernel */

int wio_cma_supported(void)
{
#ifdef __linux__
    return 1;
#else
    return 0;
#endif
}

static uint64_t my_probe_value(void)
{
    if (probe_value == 0) {
        uint64_t v = 0;
        if (wio_random_bytes((uint8_t *)&v, sizeof v) != 0 || v == 0)
            v = ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)&v ^ 0x9e3779b97f4a7c15ull;
        probe_value = v;
    }
    return probe_value;
}

void wio_cma_describe(const void *buf, wio_cma_desc *d)
{
    d->pid = (uint64_t)getpid();
    d->addr = (uint64_t)(uintptr_t)buf;
    d->probe_value = my_probe_value();
    d->probe_addr = (uint64_t)(uintptr_t)&probe_value;
}

void wio_cma_encode(const wio_cma_desc *d, uint8_t out[WIO_CMA_DESC_LEN])
{
    wio_put_le64(out, d->pid);
    wio_put_le64(out + 8, d->addr);
    wio_put_le64(out + 16, d->probe_addr);
    wio_put_le64(out + 24, d->probe_value);
}

void wio_cma_decode(const uint8_t in[WIO_CMA_DESC_LEN], wio_cma_desc *d)
{
    d->pid = wio_get_le64(in);
    d->addr = wio_get_le64(in + 8);
    d->probe_addr = wio_get_le64(in + 16);
    d->probe_value = wio_get_le64(in + 24);
}

#ifdef __linux__
static int read_remote(uint64_t pid, uint64_t addr, void *dst, size_t n)
{
    if (pid == 0 || pid > (uint64_t)INT32_MAX || addr > UINTPTR_MAX || n > UINTPTR_MAX - addr)
        return EFAULT;
    size_t done = 0;
    while (done < n) {
        struct iovec local = {(uint8_t *)dst + done, n - done};
        struct iovec remote = {(void *)(uintptr_t)(addr + done), n - done};
        ssize_t k = process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return errno;
        if (k == 0)
            return EFAULT;
        done += (size_t)k;
    }
    return 0;
}
#else
static int read_remote(uint64_t pid, uint64_t addr, void *dst, size_t n)
{
    (void)pid;
    (void)addr;
    (void)dst;
    (void)n;
    return ENOSYS;
}
#endif

int wio_cma_verify(const wio_cma_desc *d)
{
    uint64_t seen = 0;
    int rc = read_remote(d->pid, d->probe_addr, &seen, sizeof seen);
    if (rc)
        return rc;
    return seen == d->probe_value && seen != 0 ? 0 : ESTALE;
}

int wio_cma_read(const wio_cma_desc *d, void *dst, size_t n)
{
    return read_remote(d->pid, d->addr, dst, n);
}
