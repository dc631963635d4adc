/*
 * deprecated.c — the names OpenSHMEM 1.5 deprecates but still requires (its annex "Deprecated
 * API"), each mapped onto the routine that replaced it: the 1.3 atomics (shmem_long_fadd & co.),
 * the long-only shmem_wait / shmem_wait_until, the SHMEM_CACHE routines (nothing to do on a
 * cache-coherent machine); and shmem_pcontrol, the profiling control of 1.5. The deprecated heap
 * names (shmalloc, shfree, shrealloc, shmemalign) are with the heap in shmem.c.
 */
#include <stdatomic.h>
#include "shmem/shmem_internal.h"

/* ---- the 1.3 atomics (deprecated in 1.4) --------------------------------------------------- */

#define DEF_DEP_EXT_AMO(T, N)                                                                           \
    T shmem_##N##_fetch(const T *source, int pe) { return shmem_##N##_atomic_fetch(source, pe); }       \
    void shmem_##N##_set(T *dest, T value, int pe) { shmem_##N##_atomic_set(dest, value, pe); }         \
    T shmem_##N##_swap(T *dest, T value, int pe) { return shmem_##N##_atomic_swap(dest, value, pe); }
WAITIO_SHMEM_EXT_AMO_TYPES(DEF_DEP_EXT_AMO)

#define DEF_DEP_AMO(T, N)                                                                               \
    T shmem_##N##_cswap(T *dest, T cond, T value, int pe)                                               \
    {                                                                                                   \
        return shmem_##N##_atomic_compare_swap(dest, cond, value, pe);                                  \
    }                                                                                                   \
    T shmem_##N##_finc(T *dest, int pe) { return shmem_##N##_atomic_fetch_inc(dest, pe); }              \
    void shmem_##N##_inc(T *dest, int pe) { shmem_##N##_atomic_inc(dest, pe); }                         \
    T shmem_##N##_fadd(T *dest, T value, int pe) { return shmem_##N##_atomic_fetch_add(dest, value, pe); } \
    void shmem_##N##_add(T *dest, T value, int pe) { shmem_##N##_atomic_add(dest, value, pe); }
WAITIO_SHMEM_AMO_TYPES(DEF_DEP_AMO)

/* ---- long-only point-to-point synchronisation (deprecated in 1.4) --------------------------- */

/* The C11 generic macros of shmem.h carry these names: the parentheses keep a function-like
 * macro from expanding (and let an object-like rename, to pshmem_wait, apply). */
void (shmem_wait)(long *ivar, long cmp_value)
{
    shmem_long_wait_until(ivar, SHMEM_CMP_NE, cmp_value);
}

void (shmem_wait_until)(long *ivar, int cmp, long cmp_value)
{
    shmem_long_wait_until(ivar, cmp, cmp_value);
}

/* ---- SHMEM_CACHE (deprecated in 1.3) -------------------------------------------------------
 * For machines whose caches were not coherent with remote writes. WaitIO's PEs share memory
 * through coherent caches, or receive remote writes through the kernel or their own stores, so
 * there is no stale line to invalidate and no cache to flush: the specification lets these do
 * nothing. */

void shmem_clear_cache_inv(void) {}
void shmem_set_cache_inv(void) {}
void shmem_udcflush(void) {}

void shmem_clear_cache_line_inv(void *dest)
{
    (void)dest;
}

void shmem_set_cache_line_inv(void *dest)
{
    (void)dest;
}

void shmem_udcflush_line(void *dest)
{
    (void)dest;
}

/* ---- profiling control ---------------------------------------------------------------------- */

/* The level a tool asked for: 1 (profiling on) until a call says otherwise. The library has no
 * profiling of its own; a tool interposing shmem_pcontrol reads its arguments itself. */
static atomic_int pcontrol_level = 1;

void shmem_pcontrol(const int level, ...)
{
    atomic_store(&pcontrol_level, level);
}
