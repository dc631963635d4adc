/*
 * cma.c — single-copy reads from another process of this host (Linux process_vm_readv), and
 * whether this process is privileged enough that single copy must not be automatic.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>
#include "transport/cma.h"

#define CAP_SYS_PTRACE_BIT 19 /* linux/capability.h */

int wio_cma_supported(void)
{
#ifdef __linux__
    return 1;
#else
    return 0;
#endif
}

int wio_cma_privileged(void)
{
    if (geteuid() == 0)
        return 1;
    FILE *f = fopen("/proc/self/status", "re");
    if (!f)
        return 0;
    char line[256];
    unsigned long long caps = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "CapEff: %llx", &caps) == 1)
            break;
    fclose(f);
    return (caps >> CAP_SYS_PTRACE_BIT) & 1;
}

#ifdef __linux__
int wio_cma_read(int32_t pid, uint64_t addr, void *dst, size_t n)
{
    if (pid <= 0 || addr > UINTPTR_MAX || n > UINTPTR_MAX - addr)
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

int wio_cma_write(int32_t pid, uint64_t addr, const void *src, size_t n)
{
    if (pid <= 0 || addr > UINTPTR_MAX || n > UINTPTR_MAX - addr)
        return EFAULT;
    size_t done = 0;
    while (done < n) {
        struct iovec local = {(uint8_t *)(uintptr_t)src + done, n - done};
        struct iovec remote = {(void *)(uintptr_t)(addr + done), n - done};
        ssize_t k = process_vm_writev((pid_t)pid, &local, 1, &remote, 1, 0);
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
int wio_cma_write(int32_t pid, uint64_t addr, const void *src, size_t n)
{
    (void)pid;
    (void)addr;
    (void)src;
    (void)n;
    return ENOSYS;
}

int wio_cma_read(int32_t pid, uint64_t addr, void *dst, size_t n)
{
    (void)pid;
    (void)addr;
    (void)dst;
    (void)n;
    return ENOSYS;
}
#endif
