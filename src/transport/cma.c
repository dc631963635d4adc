/*
 * cma.c — single-copy reads from another process of this host (Linux process_vm_readv). Owns
 * the descriptor a sender advertises, the checks that a descriptor's pid really is the sender
 * (the probe token, which only the two ends of the connection can compute, at the address the
 * sender names) and runs as our own user, and whether this process is privileged enough that
 * single copy must not be on by default. Policy (pinning a peer's pid) is the engine's.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>
#include "transport/cma.h"
#include "core/frame.h"

#define CAP_SYS_PTRACE_BIT 19

int wio_cma_supported(void)
{
#ifdef __linux__
    return 1;
#else
    return 0;
#endif
}

/* The effective capability set, from /proc/self/status ("CapEff:\t<hex>"). */
static int read_cap_eff(uint64_t *out)
{
    FILE *f = fopen("/proc/self/status", "re");
    if (!f)
        return -1;
    char line[256];
    int rc = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "CapEff: %llx", (unsigned long long *)out) == 1) {
            rc = 0;
            break;
        }
    fclose(f);
    return rc;
}

int wio_cma_privileged(void)
{
    uint64_t caps = 0;
    if (geteuid() == 0)
        return 1;
    return read_cap_eff(&caps) == 0 && (caps >> CAP_SYS_PTRACE_BIT) & 1;
}

size_t wio_cma_encode(const wio_cma_desc *d, uint8_t out[WIO_CMA_DESC_FULL])
{
    if (!d->full) {
        wio_put_le64(out, d->addr);
        return WIO_CMA_DESC_SHORT;
    }
    wio_put_le64(out, d->pid);
    wio_put_le64(out + 8, d->addr);
    wio_put_le64(out + 16, d->probe_addr);
    return WIO_CMA_DESC_FULL;
}

int wio_cma_decode(const uint8_t *in, size_t len, wio_cma_desc *d)
{
    memset(d, 0, sizeof *d);
    if (len == WIO_CMA_DESC_SHORT) {
        d->addr = wio_get_le64(in);
        return 0;
    }
    if (len != WIO_CMA_DESC_FULL)
        return -1;
    d->full = 1;
    d->pid = wio_get_le64(in);
    d->addr = wio_get_le64(in + 8);
    d->probe_addr = wio_get_le64(in + 16);
    return 0;
}

int wio_cma_same_user(uint64_t pid, unsigned *uid)
{
    char path[64], line[256];
    if (pid == 0 || pid > (uint64_t)INT32_MAX)
        return ESRCH;
    snprintf(path, sizeof path, "/proc/%llu/status", (unsigned long long)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return ESRCH;
    unsigned real = 0, eff = 0, saved = 0;
    int found = 0;
    while (!found && fgets(line, sizeof line, f))
        found = sscanf(line, "Uid: %u %u %u", &real, &eff, &saved) == 3;
    fclose(f);
    if (!found)
        return ESRCH;
    *uid = eff;
    unsigned me = (unsigned)geteuid();
    return real == me && eff == me && saved == me ? 0 : EPERM;
}

#ifdef __linux__
int wio_cma_read(uint64_t pid, uint64_t probe_addr, uint64_t token, uint64_t addr, void *dst, size_t n)
{
    if (pid == 0 || pid > (uint64_t)INT32_MAX || probe_addr > UINTPTR_MAX - 8 ||
        addr > UINTPTR_MAX || n > UINTPTR_MAX - addr)
        return EFAULT;
    uint64_t seen = 0;
    size_t done = 0, total = n + sizeof seen;
    while (done < total) {
        /* the probe first, in the same call as (the start of) the data */
        struct iovec local[2], remote[2];
        int cnt = 0;
        if (done < sizeof seen) {
            local[cnt] = (struct iovec){(uint8_t *)&seen + done, sizeof seen - done};
            remote[cnt++] = (struct iovec){(void *)(uintptr_t)(probe_addr + done), sizeof seen - done};
        }
        size_t data_done = done > sizeof seen ? done - sizeof seen : 0;
        if (data_done < n) {
            local[cnt] = (struct iovec){(uint8_t *)dst + data_done, n - data_done};
            remote[cnt++] = (struct iovec){(void *)(uintptr_t)(addr + data_done), n - data_done};
        }
        ssize_t k = process_vm_readv((pid_t)pid, local, (unsigned long)cnt, remote, (unsigned long)cnt, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return errno;
        if (k == 0)
            return EFAULT;
        done += (size_t)k;
    }
    return seen == token && token != 0 ? 0 : ESTALE;
}
#else
int wio_cma_read(uint64_t pid, uint64_t probe_addr, uint64_t token, uint64_t addr, void *dst, size_t n)
{
    (void)pid; (void)probe_addr; (void)token; (void)addr; (void)dst; (void)n;
    return ENOSYS;
}
#endif
