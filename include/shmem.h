/*
 * shmem.h — WaitIO's OpenSHMEM layer (libwaitio_shmem): OpenSHMEM 1.5 on WaitIO's
 * one-sided API (waitio_rma.h). Every process of the WaitIO instance is a PE, numbered by its
 * universe rank (PB 0's processes first), so separately launched programs — plain processes,
 * Open MPI or MPICH jobs, Python — share one symmetric space. Build with `waitio-oshcc`, run
 * with `waitio-oshrun -np N prog` (one PB of N processes) or `waitiorun -- progA : -- progB`.
 *
 * The symmetric heap (shmem_malloc & co.) is a WaitIO heap window of SHMEM_SYMMETRIC_SIZE bytes
 * per PE (default 64 MiB; K, M, G suffixes); on a host its PEs' parts share one memory segment,
 * so shmem_ptr gives usable pointers and RMA and atomics between them are loads, stores and CPU
 * atomics. Global and static variables of the executable (the symmetric data segment) are
 * remotely accessible between PEs running the same executable. docs/one-sided.md lists what is
 * implemented; errors that the interface cannot return are reported on stderr and the PE exits
 * with status 1 (the launcher then stops the others).
 *
 * Contexts (shmem_ctx_*): each tracks what it has in flight through WaitIO, so its quiet
 * completes its own operations (docs/one-sided.md, "Contexts"). Every routine also exists as
 * pshmem_<name> (pshmem.h, the profiling interface); a tool's own definition of a shmem_ name
 * takes its place (aliases in the shared library, weak in the static one). After adding a
 * routine here, run tools/gen-pshmem.py.
 */
#ifndef WAITIO_SHMEM_H
#define WAITIO_SHMEM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define WAITIO_SHMEM_API __attribute__((visibility("default")))
#else
#define WAITIO_SHMEM_API
#endif

#define SHMEM_MAJOR_VERSION 1
#define SHMEM_MINOR_VERSION 5
#define _SHMEM_MAJOR_VERSION SHMEM_MAJOR_VERSION
#define _SHMEM_MINOR_VERSION SHMEM_MINOR_VERSION
#define SHMEM_MAX_NAME_LEN 256
#define _SHMEM_MAX_NAME_LEN SHMEM_MAX_NAME_LEN
#define SHMEM_VENDOR_STRING "WaitIO OpenSHMEM layer"
#define _SHMEM_VENDOR_STRING SHMEM_VENDOR_STRING

#define SHMEM_THREAD_SINGLE 0
#define SHMEM_THREAD_FUNNELED 1
#define SHMEM_THREAD_SERIALIZED 2
#define SHMEM_THREAD_MULTIPLE 3

#define SHMEM_CMP_EQ 1
#define SHMEM_CMP_NE 2
#define SHMEM_CMP_GT 3
#define SHMEM_CMP_GE 4
#define SHMEM_CMP_LT 5
#define SHMEM_CMP_LE 6
#define _SHMEM_CMP_EQ SHMEM_CMP_EQ
#define _SHMEM_CMP_NE SHMEM_CMP_NE
#define _SHMEM_CMP_GT SHMEM_CMP_GT
#define _SHMEM_CMP_GE SHMEM_CMP_GE
#define _SHMEM_CMP_LT SHMEM_CMP_LT
#define _SHMEM_CMP_LE SHMEM_CMP_LE

#define SHMEM_SIGNAL_SET 0
#define SHMEM_SIGNAL_ADD 1

/* Teams: the world, the PEs sharing memory with this one (shmem_ptr works between them), and
 * teams split from them. The predefined handles are the addresses of the library's objects. */
typedef struct waitio_shmem_team *shmem_team_t;
extern WAITIO_SHMEM_API struct waitio_shmem_team waitio_shmem_team_world, waitio_shmem_team_shared;
#define SHMEM_TEAM_WORLD (&waitio_shmem_team_world)
#define SHMEM_TEAM_SHARED (&waitio_shmem_team_shared)
#define SHMEM_TEAM_INVALID ((shmem_team_t)0)
/* A team's configuration; config_mask bits say which fields a call reads or fills. */
typedef struct {
    int num_contexts;          /* contexts the team expects to create (a hint; default 0) */
} shmem_team_config_t;
#define SHMEM_TEAM_NUM_CONTEXTS (1L << 0)

/* Contexts: independent streams of RMA, atomics and ordering (fence/quiet apply per context). */
typedef struct waitio_shmem_ctx *shmem_ctx_t;
extern WAITIO_SHMEM_API struct waitio_shmem_ctx waitio_shmem_ctx_default;
#define SHMEM_CTX_DEFAULT (&waitio_shmem_ctx_default)
#define SHMEM_CTX_INVALID ((shmem_ctx_t)0)
#define SHMEM_CTX_SERIALIZED (1L << 0)
#define SHMEM_CTX_PRIVATE (1L << 1)
#define SHMEM_CTX_NOSTORE (1L << 2)

/* ---- set-up and queries ------------------------------------------------------------------- */

WAITIO_SHMEM_API void shmem_init(void);
WAITIO_SHMEM_API int shmem_init_thread(int requested, int *provided);
WAITIO_SHMEM_API void shmem_query_thread(int *provided);
WAITIO_SHMEM_API void shmem_finalize(void);
WAITIO_SHMEM_API void shmem_global_exit(int status);
WAITIO_SHMEM_API int shmem_my_pe(void);
WAITIO_SHMEM_API int shmem_n_pes(void);
WAITIO_SHMEM_API int shmem_pe_accessible(int pe);
WAITIO_SHMEM_API int shmem_addr_accessible(const void *addr, int pe);
WAITIO_SHMEM_API void *shmem_ptr(const void *dest, int pe);
WAITIO_SHMEM_API void shmem_info_get_version(int *major, int *minor);
WAITIO_SHMEM_API void shmem_info_get_name(char *name);
WAITIO_SHMEM_API int shmem_team_my_pe(shmem_team_t team);
WAITIO_SHMEM_API int shmem_team_n_pes(shmem_team_t team);
WAITIO_SHMEM_API int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team);
/* Team management (collective over the parent; each new team has a WaitIO group of its own,
 * docs/one-sided.md). Non-members get SHMEM_TEAM_INVALID; an invalid triplet returns nonzero. */
WAITIO_SHMEM_API int shmem_team_split_strided(shmem_team_t parent_team, int start, int stride, int size,
                                              const shmem_team_config_t *config, long config_mask,
                                              shmem_team_t *new_team);
WAITIO_SHMEM_API int shmem_team_split_2d(shmem_team_t parent_team, int xrange,
                                         const shmem_team_config_t *xaxis_config, long xaxis_mask,
                                         shmem_team_t *xaxis_team, const shmem_team_config_t *yaxis_config,
                                         long yaxis_mask, shmem_team_t *yaxis_team);
WAITIO_SHMEM_API int shmem_team_get_config(shmem_team_t team, long config_mask, shmem_team_config_t *config);
WAITIO_SHMEM_API void shmem_team_destroy(shmem_team_t team);
/* SHMEM 1.x spellings */
WAITIO_SHMEM_API void start_pes(int npes);
WAITIO_SHMEM_API int _my_pe(void);
WAITIO_SHMEM_API int _num_pes(void);
WAITIO_SHMEM_API int shmem_num_pes(void);

/* ---- symmetric heap ----------------------------------------------------------------------- */

WAITIO_SHMEM_API void *shmem_malloc(size_t size);
WAITIO_SHMEM_API void *shmem_calloc(size_t count, size_t size);
WAITIO_SHMEM_API void *shmem_align(size_t alignment, size_t size);
WAITIO_SHMEM_API void *shmem_realloc(void *ptr, size_t size);
WAITIO_SHMEM_API void shmem_free(void *ptr);
/* Hints to shmem_malloc_with_hints (advisory: every block of the heap serves remote atomics and
 * signals equally well here, so a hinted block is an ordinary one). */
#define SHMEM_MALLOC_ATOMICS_REMOTE (1L << 0)
#define SHMEM_MALLOC_SIGNAL_REMOTE (1L << 1)
/* WaitIO's extension (not advisory): the block is GPU memory, from the device symmetric heap
 * (WAITIO_SHMEM_DEVICE_SIZE per PE, made at the first such allocation; every PE needs a CUDA
 * device, else every PE exits with a message). RMA and atomics on it, with host or device
 * buffers, work as on the host heap; shmem_ptr gives the device address on this PE, NULL for
 * others. WAITIO_SHMEM_HEAP=device makes every allocation such a block (docs/one-sided.md). */
#define SHMEMX_MALLOC_DEVICE (1L << 16)
WAITIO_SHMEM_API void *shmem_malloc_with_hints(size_t size, long hints);
/* Size 0 (or a NULL pointer to shmem_free): no action, no barrier, NULL. shmem_align meets any
 * power of two up to the heap's alignment (at least 2 MiB, or the heap size when smaller; the
 * default 64 MiB heap: 64 MiB); a larger or invalid one gives NULL on every PE, with a message. */
/* deprecated (1.2) spellings */
WAITIO_SHMEM_API void *shmalloc(size_t size);
WAITIO_SHMEM_API void shfree(void *ptr);
WAITIO_SHMEM_API void *shrealloc(void *ptr, size_t size);
WAITIO_SHMEM_API void *shmemalign(size_t alignment, size_t size);

/* ---- memory ordering and synchronisation -------------------------------------------------- */

WAITIO_SHMEM_API void shmem_quiet(void);
WAITIO_SHMEM_API void shmem_fence(void);
WAITIO_SHMEM_API void shmem_ctx_quiet(shmem_ctx_t ctx);
WAITIO_SHMEM_API void shmem_ctx_fence(shmem_ctx_t ctx);

/* ---- contexts: 0 on success; *ctx = SHMEM_CTX_INVALID and nonzero when none was created ------ */

WAITIO_SHMEM_API int shmem_ctx_create(long options, shmem_ctx_t *ctx);
WAITIO_SHMEM_API int shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t *ctx);
WAITIO_SHMEM_API void shmem_ctx_destroy(shmem_ctx_t ctx);
WAITIO_SHMEM_API int shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t *team);
WAITIO_SHMEM_API void shmem_barrier_all(void);
WAITIO_SHMEM_API void shmem_sync_all(void);
WAITIO_SHMEM_API int shmem_team_sync(shmem_team_t team);

/* ---- RMA on bytes and sized elements ------------------------------------------------------- */

WAITIO_SHMEM_API void shmem_putmem(void *dest, const void *source, size_t nelems, int pe);
WAITIO_SHMEM_API void shmem_getmem(void *dest, const void *source, size_t nelems, int pe);
WAITIO_SHMEM_API void shmem_putmem_nbi(void *dest, const void *source, size_t nelems, int pe);
WAITIO_SHMEM_API void shmem_getmem_nbi(void *dest, const void *source, size_t nelems, int pe);
WAITIO_SHMEM_API void shmem_putmem_signal(void *dest, const void *source, size_t nelems, uint64_t *sig_addr,
                                          uint64_t signal, int sig_op, int pe);
WAITIO_SHMEM_API void shmem_putmem_signal_nbi(void *dest, const void *source, size_t nelems,
                                              uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);
WAITIO_SHMEM_API void shmem_ctx_putmem(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe);
WAITIO_SHMEM_API void shmem_ctx_getmem(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe);
WAITIO_SHMEM_API void shmem_ctx_putmem_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe);
WAITIO_SHMEM_API void shmem_ctx_getmem_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe);
WAITIO_SHMEM_API void shmem_ctx_putmem_signal(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems,
                                              uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);
WAITIO_SHMEM_API void shmem_ctx_putmem_signal_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems,
                                                  uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);
WAITIO_SHMEM_API uint64_t shmem_signal_fetch(const uint64_t *sig_addr);
WAITIO_SHMEM_API uint64_t shmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value);
WAITIO_SHMEM_API int shmem_broadcastmem(shmem_team_t team, void *dest, const void *source, size_t nelems, int PE_root);
WAITIO_SHMEM_API int shmem_collectmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
WAITIO_SHMEM_API int shmem_fcollectmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
WAITIO_SHMEM_API int shmem_alltoallmem(shmem_team_t team, void *dest, const void *source, size_t nelems);

#define WAITIO_SHMEM_SIZES(X) X(8, 1) X(16, 2) X(32, 4) X(64, 8) X(128, 16)
#define WAITIO_SHMEM_DECL_SIZE(BITS, BYTES)                                                              \
    WAITIO_SHMEM_API void shmem_put##BITS(void *dest, const void *source, size_t nelems, int pe);        \
    WAITIO_SHMEM_API void shmem_get##BITS(void *dest, const void *source, size_t nelems, int pe);        \
    WAITIO_SHMEM_API void shmem_put##BITS##_nbi(void *dest, const void *source, size_t nelems, int pe);  \
    WAITIO_SHMEM_API void shmem_get##BITS##_nbi(void *dest, const void *source, size_t nelems, int pe);  \
    WAITIO_SHMEM_API void shmem_iput##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, \
                                           size_t nelems, int pe);                                     \
    WAITIO_SHMEM_API void shmem_iget##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, \
                                           size_t nelems, int pe);                                     \
    WAITIO_SHMEM_API void shmem_put##BITS##_signal(void *dest, const void *source, size_t nelems,       \
                                                   uint64_t *sig_addr, uint64_t signal, int sig_op, int pe); \
    WAITIO_SHMEM_API void shmem_put##BITS##_signal_nbi(void *dest, const void *source, size_t nelems,   \
                                                       uint64_t *sig_addr, uint64_t signal, int sig_op, \
                                                       int pe);                                         \
    WAITIO_SHMEM_API void shmem_ctx_put##BITS(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, \
                                              int pe);                                                  \
    WAITIO_SHMEM_API void shmem_ctx_get##BITS(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, \
                                              int pe);                                                  \
    WAITIO_SHMEM_API void shmem_ctx_put##BITS##_nbi(shmem_ctx_t ctx, void *dest, const void *source,    \
                                                    size_t nelems, int pe);                             \
    WAITIO_SHMEM_API void shmem_ctx_get##BITS##_nbi(shmem_ctx_t ctx, void *dest, const void *source,    \
                                                    size_t nelems, int pe);                             \
    WAITIO_SHMEM_API void shmem_ctx_iput##BITS(shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst, \
                                               ptrdiff_t sst, size_t nelems, int pe);                   \
    WAITIO_SHMEM_API void shmem_ctx_iget##BITS(shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst, \
                                               ptrdiff_t sst, size_t nelems, int pe);                   \
    WAITIO_SHMEM_API void shmem_ctx_put##BITS##_signal(shmem_ctx_t ctx, void *dest, const void *source, \
                                                       size_t nelems, uint64_t *sig_addr, uint64_t signal, \
                                                       int sig_op, int pe);                             \
    WAITIO_SHMEM_API void shmem_ctx_put##BITS##_signal_nbi(shmem_ctx_t ctx, void *dest, const void *source, \
                                                           size_t nelems, uint64_t *sig_addr,           \
                                                           uint64_t signal, int sig_op, int pe);
WAITIO_SHMEM_SIZES(WAITIO_SHMEM_DECL_SIZE)

/* ---- typed RMA, signals and collectives (OpenSHMEM's standard RMA types) -------------------- */

#define WAITIO_SHMEM_RMA_TYPES(X)                                                                       \
    X(float, float) X(double, double) X(long double, longdouble) X(char, char) X(signed char, schar)    \
    X(short, short) X(int, int) X(long, long) X(long long, longlong) X(unsigned char, uchar)            \
    X(unsigned short, ushort) X(unsigned int, uint) X(unsigned long, ulong)                             \
    X(unsigned long long, ulonglong) X(int8_t, int8) X(int16_t, int16) X(int32_t, int32)                \
    X(int64_t, int64) X(uint8_t, uint8) X(uint16_t, uint16) X(uint32_t, uint32) X(uint64_t, uint64)     \
    X(size_t, size) X(ptrdiff_t, ptrdiff)

#define WAITIO_SHMEM_DECL_RMA(T, N)                                                                     \
    WAITIO_SHMEM_API void shmem_##N##_put(T *dest, const T *source, size_t nelems, int pe);             \
    WAITIO_SHMEM_API void shmem_##N##_get(T *dest, const T *source, size_t nelems, int pe);             \
    WAITIO_SHMEM_API void shmem_##N##_put_nbi(T *dest, const T *source, size_t nelems, int pe);         \
    WAITIO_SHMEM_API void shmem_##N##_get_nbi(T *dest, const T *source, size_t nelems, int pe);         \
    WAITIO_SHMEM_API void shmem_##N##_p(T *dest, T value, int pe);                                      \
    WAITIO_SHMEM_API T shmem_##N##_g(const T *source, int pe);                                          \
    WAITIO_SHMEM_API void shmem_##N##_iput(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst,      \
                                           size_t nelems, int pe);                                      \
    WAITIO_SHMEM_API void shmem_##N##_iget(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst,      \
                                           size_t nelems, int pe);                                      \
    WAITIO_SHMEM_API void shmem_##N##_put_signal(T *dest, const T *source, size_t nelems,               \
                                                 uint64_t *sig_addr, uint64_t signal, int sig_op, int pe); \
    WAITIO_SHMEM_API void shmem_##N##_put_signal_nbi(T *dest, const T *source, size_t nelems,           \
                                                     uint64_t *sig_addr, uint64_t signal, int sig_op,   \
                                                     int pe);                                           \
    WAITIO_SHMEM_API int shmem_##N##_broadcast(shmem_team_t team, T *dest, const T *source,             \
                                               size_t nelems, int PE_root);                            \
    WAITIO_SHMEM_API int shmem_##N##_collect(shmem_team_t team, T *dest, const T *source, size_t nelems); \
    WAITIO_SHMEM_API int shmem_##N##_fcollect(shmem_team_t team, T *dest, const T *source, size_t nelems); \
    WAITIO_SHMEM_API int shmem_##N##_alltoall(shmem_team_t team, T *dest, const T *source, size_t nelems);
WAITIO_SHMEM_RMA_TYPES(WAITIO_SHMEM_DECL_RMA)

/* The same RMA on a context (OpenSHMEM 1.5 section 9.5): PE numbers are the context team's. */
#define WAITIO_SHMEM_DECL_CTX_RMA(T, N)                                                                 \
    WAITIO_SHMEM_API void shmem_ctx_##N##_put(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, int pe); \
    WAITIO_SHMEM_API void shmem_ctx_##N##_get(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, int pe); \
    WAITIO_SHMEM_API void shmem_ctx_##N##_put_nbi(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, \
                                                  int pe);                                              \
    WAITIO_SHMEM_API void shmem_ctx_##N##_get_nbi(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, \
                                                  int pe);                                              \
    WAITIO_SHMEM_API void shmem_ctx_##N##_p(shmem_ctx_t ctx, T *dest, T value, int pe);                 \
    WAITIO_SHMEM_API T shmem_ctx_##N##_g(shmem_ctx_t ctx, const T *source, int pe);                     \
    WAITIO_SHMEM_API void shmem_ctx_##N##_iput(shmem_ctx_t ctx, T *dest, const T *source, ptrdiff_t dst, \
                                               ptrdiff_t sst, size_t nelems, int pe);                   \
    WAITIO_SHMEM_API void shmem_ctx_##N##_iget(shmem_ctx_t ctx, T *dest, const T *source, ptrdiff_t dst, \
                                               ptrdiff_t sst, size_t nelems, int pe);                   \
    WAITIO_SHMEM_API void shmem_ctx_##N##_put_signal(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, \
                                                     uint64_t *sig_addr, uint64_t signal, int sig_op, int pe); \
    WAITIO_SHMEM_API void shmem_ctx_##N##_put_signal_nbi(shmem_ctx_t ctx, T *dest, const T *source,     \
                                                         size_t nelems, uint64_t *sig_addr, uint64_t signal, \
                                                         int sig_op, int pe);
WAITIO_SHMEM_RMA_TYPES(WAITIO_SHMEM_DECL_CTX_RMA)

/* ---- atomics ------------------------------------------------------------------------------ */

#define WAITIO_SHMEM_AMO_TYPES(X)                                                                       \
    X(int, int) X(long, long) X(long long, longlong) X(unsigned int, uint) X(unsigned long, ulong)      \
    X(unsigned long long, ulonglong) X(int32_t, int32) X(int64_t, int64) X(uint32_t, uint32)            \
    X(uint64_t, uint64) X(size_t, size) X(ptrdiff_t, ptrdiff)
#define WAITIO_SHMEM_EXT_AMO_TYPES(X) WAITIO_SHMEM_AMO_TYPES(X) X(float, float) X(double, double)
#define WAITIO_SHMEM_BITWISE_AMO_TYPES(X)                                                               \
    X(unsigned int, uint) X(unsigned long, ulong) X(unsigned long long, ulonglong) X(int32_t, int32)    \
    X(int64_t, int64) X(uint32_t, uint32) X(uint64_t, uint64)

#define WAITIO_SHMEM_DECL_EXT_AMO(T, N)                                                                 \
    WAITIO_SHMEM_API T shmem_##N##_atomic_fetch(const T *source, int pe);                               \
    WAITIO_SHMEM_API void shmem_##N##_atomic_set(T *dest, T value, int pe);                             \
    WAITIO_SHMEM_API T shmem_##N##_atomic_swap(T *dest, T value, int pe);                               \
    WAITIO_SHMEM_API void shmem_##N##_atomic_fetch_nbi(T *fetch, const T *source, int pe);              \
    WAITIO_SHMEM_API void shmem_##N##_atomic_swap_nbi(T *fetch, T *dest, T value, int pe);
#define WAITIO_SHMEM_DECL_AMO(T, N)                                                                     \
    WAITIO_SHMEM_API T shmem_##N##_atomic_compare_swap(T *dest, T cond, T value, int pe);               \
    WAITIO_SHMEM_API T shmem_##N##_atomic_fetch_inc(T *dest, int pe);                                   \
    WAITIO_SHMEM_API void shmem_##N##_atomic_inc(T *dest, int pe);                                      \
    WAITIO_SHMEM_API T shmem_##N##_atomic_fetch_add(T *dest, T value, int pe);                          \
    WAITIO_SHMEM_API void shmem_##N##_atomic_add(T *dest, T value, int pe);                             \
    WAITIO_SHMEM_API void shmem_##N##_atomic_compare_swap_nbi(T *fetch, T *dest, T cond, T value, int pe); \
    WAITIO_SHMEM_API void shmem_##N##_atomic_fetch_inc_nbi(T *fetch, T *dest, int pe);                  \
    WAITIO_SHMEM_API void shmem_##N##_atomic_fetch_add_nbi(T *fetch, T *dest, T value, int pe);
#define WAITIO_SHMEM_DECL_BITWISE_AMO(T, N)                                                             \
    WAITIO_SHMEM_API T shmem_##N##_atomic_fetch_and(T *dest, T value, int pe);                          \
    WAITIO_SHMEM_API void shmem_##N##_atomic_and(T *dest, T value, int pe);                             \
    WAITIO_SHMEM_API T shmem_##N##_atomic_fetch_or(T *dest, T value, int pe);                           \
    WAITIO_SHMEM_API void shmem_##N##_atomic_or(T *dest, T value, int pe);                              \
    WAITIO_SHMEM_API T shmem_##N##_atomic_fetch_xor(T *dest, T value, int pe);                          \
    WAITIO_SHMEM_API void shmem_##N##_atomic_xor(T *dest, T value, int pe);                             \
    WAITIO_SHMEM_API void shmem_##N##_atomic_fetch_and_nbi(T *fetch, T *dest, T value, int pe);         \
    WAITIO_SHMEM_API void shmem_##N##_atomic_fetch_or_nbi(T *fetch, T *dest, T value, int pe);          \
    WAITIO_SHMEM_API void shmem_##N##_atomic_fetch_xor_nbi(T *fetch, T *dest, T value, int pe);
WAITIO_SHMEM_EXT_AMO_TYPES(WAITIO_SHMEM_DECL_EXT_AMO)
WAITIO_SHMEM_AMO_TYPES(WAITIO_SHMEM_DECL_AMO)
WAITIO_SHMEM_BITWISE_AMO_TYPES(WAITIO_SHMEM_DECL_BITWISE_AMO)

/* The same atomics on a context. The fetching _nbi forms never block: *fetch holds the old value
 * after the context's quiet (or earlier). */
#define WAITIO_SHMEM_DECL_CTX_EXT_AMO(T, N)                                                             \
    WAITIO_SHMEM_API T shmem_ctx_##N##_atomic_fetch(shmem_ctx_t ctx, const T *source, int pe);          \
    WAITIO_SHMEM_API void shmem_ctx_##N##_atomic_set(shmem_ctx_t ctx, T *dest, T value, int pe);        \
    WAITIO_SHMEM_API T shmem_ctx_##N##_atomic_swap(shmem_ctx_t ctx, T *dest, T value, int pe);          \
    WAITIO_SHMEM_API void shmem_ctx_##N##_atomic_fetch_nbi(shmem_ctx_t ctx, T *fetch, const T *source, int pe); \
    WAITIO_SHMEM_API void shmem_ctx_##N##_atomic_swap_nbi(shmem_ctx_t ctx, T *fetch, T *dest, T value, int pe);
#define WAITIO_SHMEM_DECL_CTX_AMO(T, N)                                                                 \
    WAITIO_SHMEM_API T shmem_ctx_##N##_atomic_compare_swap(shmem_ctx_t ctx, T *dest, T cond, T value, int pe); \
    WAITIO_SHMEM_API T shmem_ctx_##N##_atomic_fetch_inc(shmem_ctx_t ctx, T *dest, int pe);              \
    WAITIO_SHMEM_API void shmem_ctx_##N##_atomic_inc(shmem_ctx_t ctx, T *dest, int pe);                 \
    WAITIO_SHMEM_API T shmem_ctx_##N##_atomic_fetch_add(shmem_ctx_t ctx, T *dest, T value, int pe);     \
    WAITIO_SHMEM_API void shmem_ctx_##N##_atomic_add(shmem_ctx_t ctx, T *dest, T value, int pe);        \
    WAITIO_SHMEM_API void shmem_ctx_##N##_atomic_compare_swap_nbi(shmem_ctx_t ctx, T *fetch, T *dest, T cond, \
                                                                  T value, int pe);                     \
    WAITIO_SHMEM_API void shmem_ctx_##N##_atomic_fetch_inc_nbi(shmem_ctx_t ctx, T *fetch, T *dest, int pe); \
    WAITIO_SHMEM_API void shmem_ctx_##N##_atomic_fetch_add_nbi(shmem_ctx_t ctx, T *fetch, T *dest, T value, \
                                                               int pe);
#define WAITIO_SHMEM_DECL_CTX_BITWISE_AMO(T, N)                                                         \
    WAITIO_SHMEM_API T shmem_ctx_##N##_atomic_fetch_and(shmem_ctx_t ctx, T *dest, T value, int pe);     \
    WAITIO_SHMEM_API void shmem_ctx_##N##_atomic_and(shmem_ctx_t ctx, T *dest, T value, int pe);        \
    WAITIO_SHMEM_API T shmem_ctx_##N##_atomic_fetch_or(shmem_ctx_t ctx, T *dest, T value, int pe);      \
    WAITIO_SHMEM_API void shmem_ctx_##N##_atomic_or(shmem_ctx_t ctx, T *dest, T value, int pe);         \
    WAITIO_SHMEM_API T shmem_ctx_##N##_atomic_fetch_xor(shmem_ctx_t ctx, T *dest, T value, int pe);     \
    WAITIO_SHMEM_API void shmem_ctx_##N##_atomic_xor(shmem_ctx_t ctx, T *dest, T value, int pe);        \
    WAITIO_SHMEM_API void shmem_ctx_##N##_atomic_fetch_and_nbi(shmem_ctx_t ctx, T *fetch, T *dest, T value, int pe); \
    WAITIO_SHMEM_API void shmem_ctx_##N##_atomic_fetch_or_nbi(shmem_ctx_t ctx, T *fetch, T *dest, T value, int pe); \
    WAITIO_SHMEM_API void shmem_ctx_##N##_atomic_fetch_xor_nbi(shmem_ctx_t ctx, T *fetch, T *dest, T value, int pe);
WAITIO_SHMEM_EXT_AMO_TYPES(WAITIO_SHMEM_DECL_CTX_EXT_AMO)
WAITIO_SHMEM_AMO_TYPES(WAITIO_SHMEM_DECL_CTX_AMO)
WAITIO_SHMEM_BITWISE_AMO_TYPES(WAITIO_SHMEM_DECL_CTX_BITWISE_AMO)

/* ---- point-to-point synchronisation -------------------------------------------------------- */

#define WAITIO_SHMEM_P2P_TYPES(X)                                                                       \
    X(short, short) X(int, int) X(long, long) X(long long, longlong) X(unsigned short, ushort)          \
    X(unsigned int, uint) X(unsigned long, ulong) X(unsigned long long, ulonglong) X(int32_t, int32)    \
    X(int64_t, int64) X(uint32_t, uint32) X(uint64_t, uint64) X(size_t, size) X(ptrdiff_t, ptrdiff)

#define WAITIO_SHMEM_DECL_P2P(T, N)                                                                     \
    WAITIO_SHMEM_API void shmem_##N##_wait_until(T *ivar, int cmp, T cmp_value);                        \
    WAITIO_SHMEM_API void shmem_##N##_wait_until_all(T *ivars, size_t nelems, const int *status, int cmp, \
                                                     T cmp_value);                                      \
    WAITIO_SHMEM_API size_t shmem_##N##_wait_until_any(T *ivars, size_t nelems, const int *status,      \
                                                       int cmp, T cmp_value);                           \
    WAITIO_SHMEM_API size_t shmem_##N##_wait_until_some(T *ivars, size_t nelems, size_t *indices,       \
                                                        const int *status, int cmp, T cmp_value);       \
    WAITIO_SHMEM_API void shmem_##N##_wait_until_all_vector(T *ivars, size_t nelems, const int *status, \
                                                            int cmp, T *cmp_values);                    \
    WAITIO_SHMEM_API size_t shmem_##N##_wait_until_any_vector(T *ivars, size_t nelems, const int *status, \
                                                              int cmp, T *cmp_values);                  \
    WAITIO_SHMEM_API size_t shmem_##N##_wait_until_some_vector(T *ivars, size_t nelems, size_t *indices, \
                                                               const int *status, int cmp, T *cmp_values); \
    WAITIO_SHMEM_API int shmem_##N##_test(T *ivar, int cmp, T cmp_value);                               \
    WAITIO_SHMEM_API int shmem_##N##_test_all(T *ivars, size_t nelems, const int *status, int cmp,      \
                                              T cmp_value);                                             \
    WAITIO_SHMEM_API size_t shmem_##N##_test_any(T *ivars, size_t nelems, const int *status, int cmp,   \
                                                 T cmp_value);                                          \
    WAITIO_SHMEM_API size_t shmem_##N##_test_some(T *ivars, size_t nelems, size_t *indices,             \
                                                  const int *status, int cmp, T cmp_value);             \
    WAITIO_SHMEM_API int shmem_##N##_test_all_vector(T *ivars, size_t nelems, const int *status, int cmp, \
                                                     T *cmp_values);                                    \
    WAITIO_SHMEM_API size_t shmem_##N##_test_any_vector(T *ivars, size_t nelems, const int *status,     \
                                                        int cmp, T *cmp_values);                        \
    WAITIO_SHMEM_API size_t shmem_##N##_test_some_vector(T *ivars, size_t nelems, size_t *indices,      \
                                                         const int *status, int cmp, T *cmp_values);    \
    WAITIO_SHMEM_API void shmem_##N##_wait(T *ivar, T cmp_value);
WAITIO_SHMEM_P2P_TYPES(WAITIO_SHMEM_DECL_P2P)
/* The _any forms are fair (OpenSHMEM 1.5): an index that stays ready is returned by a series of
 * calls on the array even when the caller does not mask it (each call's scan starts after the
 * index the previous one returned). Deprecated (1.4) long-only spellings; in C11 the generic
 * macros below take their names. */
WAITIO_SHMEM_API void shmem_wait(long *ivar, long cmp_value);
WAITIO_SHMEM_API void shmem_wait_until(long *ivar, int cmp, long cmp_value);

/* ---- reductions --------------------------------------------------------------------------- */

#define WAITIO_SHMEM_BITWISE_RED_TYPES(X)                                                               \
    X(unsigned char, uchar) X(unsigned short, ushort) X(unsigned int, uint) X(unsigned long, ulong)     \
    X(unsigned long long, ulonglong) X(int8_t, int8) X(int16_t, int16) X(int32_t, int32)                \
    X(int64_t, int64) X(uint8_t, uint8) X(uint16_t, uint16) X(uint32_t, uint32) X(uint64_t, uint64)     \
    X(size_t, size)
#define WAITIO_SHMEM_ARITH_RED_TYPES(X)                                                                 \
    X(char, char) X(signed char, schar) X(short, short) X(int, int) X(long, long) X(long long, longlong) \
    X(ptrdiff_t, ptrdiff) X(unsigned char, uchar) X(unsigned short, ushort) X(unsigned int, uint)       \
    X(unsigned long, ulong) X(unsigned long long, ulonglong) X(int8_t, int8) X(int16_t, int16)          \
    X(int32_t, int32) X(int64_t, int64) X(uint8_t, uint8) X(uint16_t, uint16) X(uint32_t, uint32)       \
    X(uint64_t, uint64) X(size_t, size) X(float, float) X(double, double) X(long double, longdouble)
#define WAITIO_SHMEM_DECL_RED(T, N, OP)                                                                 \
    WAITIO_SHMEM_API int shmem_##N##_##OP##_reduce(shmem_team_t team, T *dest, const T *source, size_t nreduce);
#define WAITIO_SHMEM_DECL_BITWISE_RED(T, N)                                                             \
    WAITIO_SHMEM_DECL_RED(T, N, and) WAITIO_SHMEM_DECL_RED(T, N, or) WAITIO_SHMEM_DECL_RED(T, N, xor)
#define WAITIO_SHMEM_DECL_ARITH_RED(T, N)                                                               \
    WAITIO_SHMEM_DECL_RED(T, N, max) WAITIO_SHMEM_DECL_RED(T, N, min)                                  \
    WAITIO_SHMEM_DECL_RED(T, N, sum) WAITIO_SHMEM_DECL_RED(T, N, prod)
WAITIO_SHMEM_BITWISE_RED_TYPES(WAITIO_SHMEM_DECL_BITWISE_RED)
WAITIO_SHMEM_ARITH_RED_TYPES(WAITIO_SHMEM_DECL_ARITH_RED)

/* Reductions on complex numbers (sum and product only), not declared for C++ nor where the
 * compiler has no complex types. */
#if !defined(__cplusplus) && !defined(__STDC_NO_COMPLEX__)
#define WAITIO_SHMEM_COMPLEX_RED_TYPES(X) X(float _Complex, complexf) X(double _Complex, complexd)
#define WAITIO_SHMEM_DECL_COMPLEX_RED(T, N) WAITIO_SHMEM_DECL_RED(T, N, sum) WAITIO_SHMEM_DECL_RED(T, N, prod)
WAITIO_SHMEM_COMPLEX_RED_TYPES(WAITIO_SHMEM_DECL_COMPLEX_RED)
#endif

/* ---- strided all-to-all: block j of source (element k at source[(j * nelems + k) * sst]) goes to
 * PE j, into block i of its dest (dest[(i * nelems + k) * dst]) for the sender's team PE i ------ */

WAITIO_SHMEM_API int shmem_alltoallsmem(shmem_team_t team, void *dest, const void *source, ptrdiff_t dst,
                                        ptrdiff_t sst, size_t nelems);
#define WAITIO_SHMEM_DECL_ALLTOALLS(T, N)                                                               \
    WAITIO_SHMEM_API int shmem_##N##_alltoalls(shmem_team_t team, T *dest, const T *source, ptrdiff_t dst, \
                                               ptrdiff_t sst, size_t nelems);
WAITIO_SHMEM_RMA_TYPES(WAITIO_SHMEM_DECL_ALLTOALLS)

/* ---- deprecated active-set collectives (OpenSHMEM 1.5 keeps them) ----------------------------
 * The active set is PEs PE_start + i * 2^logPE_stride, i < PE_size. This implementation runs
 * them on a WaitIO group made at the set's first use; pSync is not used (it keeps
 * SHMEM_SYNC_VALUE) and pWrk neither, so any size of them is enough. */

#define SHMEM_SYNC_VALUE 0L
#define SHMEM_SYNC_SIZE 4
#define SHMEM_BCAST_SYNC_SIZE 4
#define SHMEM_BARRIER_SYNC_SIZE 4
#define SHMEM_REDUCE_SYNC_SIZE 4
#define SHMEM_COLLECT_SYNC_SIZE 4
#define SHMEM_ALLTOALL_SYNC_SIZE 4
#define SHMEM_ALLTOALLS_SYNC_SIZE 4
#define SHMEM_REDUCE_MIN_WRKDATA_SIZE 1
#define _SHMEM_SYNC_VALUE SHMEM_SYNC_VALUE
#define _SHMEM_SYNC_SIZE SHMEM_SYNC_SIZE
#define _SHMEM_BCAST_SYNC_SIZE SHMEM_BCAST_SYNC_SIZE
#define _SHMEM_BARRIER_SYNC_SIZE SHMEM_BARRIER_SYNC_SIZE
#define _SHMEM_REDUCE_SYNC_SIZE SHMEM_REDUCE_SYNC_SIZE
#define _SHMEM_COLLECT_SYNC_SIZE SHMEM_COLLECT_SYNC_SIZE
#define _SHMEM_ALLTOALL_SYNC_SIZE SHMEM_ALLTOALL_SYNC_SIZE
#define _SHMEM_ALLTOALLS_SYNC_SIZE SHMEM_ALLTOALLS_SYNC_SIZE
#define _SHMEM_REDUCE_MIN_WRKDATA_SIZE SHMEM_REDUCE_MIN_WRKDATA_SIZE

WAITIO_SHMEM_API void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long *pSync);
WAITIO_SHMEM_API void shmem_sync(int PE_start, int logPE_stride, int PE_size, long *pSync);
#define WAITIO_SHMEM_DECL_ACTIVE(BITS)                                                                  \
    WAITIO_SHMEM_API void shmem_broadcast##BITS(void *dest, const void *source, size_t nelems, int PE_root, \
                                                int PE_start, int logPE_stride, int PE_size, long *pSync); \
    WAITIO_SHMEM_API void shmem_collect##BITS(void *dest, const void *source, size_t nelems, int PE_start, \
                                              int logPE_stride, int PE_size, long *pSync);              \
    WAITIO_SHMEM_API void shmem_fcollect##BITS(void *dest, const void *source, size_t nelems, int PE_start, \
                                               int logPE_stride, int PE_size, long *pSync);             \
    WAITIO_SHMEM_API void shmem_alltoall##BITS(void *dest, const void *source, size_t nelems, int PE_start, \
                                               int logPE_stride, int PE_size, long *pSync);             \
    WAITIO_SHMEM_API void shmem_alltoalls##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, \
                                                size_t nelems, int PE_start, int logPE_stride, int PE_size, \
                                                long *pSync);
WAITIO_SHMEM_DECL_ACTIVE(32)
WAITIO_SHMEM_DECL_ACTIVE(64)

/* shmem_TYPE_OP_to_all: and, or, xor on the integers; max, min also on the reals; sum, prod also
 * on the complex types */
#define WAITIO_SHMEM_DECL_TO_ALL(T, N, OP)                                                              \
    WAITIO_SHMEM_API void shmem_##N##_##OP##_to_all(T *dest, const T *source, int nreduce, int PE_start, \
                                                    int logPE_stride, int PE_size, T *pWrk, long *pSync);
#define WAITIO_SHMEM_TO_ALL_INT_TYPES(X) X(short, short) X(int, int) X(long, long) X(long long, longlong)
#define WAITIO_SHMEM_TO_ALL_REAL_TYPES(X) X(float, float) X(double, double) X(long double, longdouble)
#define WAITIO_SHMEM_DECL_TO_ALL_BIT(T, N)                                                              \
    WAITIO_SHMEM_DECL_TO_ALL(T, N, and) WAITIO_SHMEM_DECL_TO_ALL(T, N, or) WAITIO_SHMEM_DECL_TO_ALL(T, N, xor)
#define WAITIO_SHMEM_DECL_TO_ALL_ARITH(T, N)                                                            \
    WAITIO_SHMEM_DECL_TO_ALL(T, N, max) WAITIO_SHMEM_DECL_TO_ALL(T, N, min)                            \
    WAITIO_SHMEM_DECL_TO_ALL(T, N, sum) WAITIO_SHMEM_DECL_TO_ALL(T, N, prod)
WAITIO_SHMEM_TO_ALL_INT_TYPES(WAITIO_SHMEM_DECL_TO_ALL_BIT)
WAITIO_SHMEM_TO_ALL_INT_TYPES(WAITIO_SHMEM_DECL_TO_ALL_ARITH)
WAITIO_SHMEM_TO_ALL_REAL_TYPES(WAITIO_SHMEM_DECL_TO_ALL_ARITH)
#if !defined(__cplusplus) && !defined(__STDC_NO_COMPLEX__)
#define WAITIO_SHMEM_DECL_TO_ALL_COMPLEX(T, N) WAITIO_SHMEM_DECL_TO_ALL(T, N, sum) WAITIO_SHMEM_DECL_TO_ALL(T, N, prod)
WAITIO_SHMEM_COMPLEX_RED_TYPES(WAITIO_SHMEM_DECL_TO_ALL_COMPLEX)
#endif

/* ---- distributed locks -------------------------------------------------------------------- */

WAITIO_SHMEM_API void shmem_set_lock(long *lock);
WAITIO_SHMEM_API void shmem_clear_lock(long *lock);
WAITIO_SHMEM_API int shmem_test_lock(long *lock);

/* ---- deprecated names still in OpenSHMEM 1.5, and shmem_pcontrol (deprecated.c) ------------ */

/* the 1.3 atomics, deprecated in 1.4: each is its shmem_TYPENAME_atomic_* routine */
#define WAITIO_SHMEM_DECL_DEP_EXT_AMO(T, N)                                                             \
    WAITIO_SHMEM_API T shmem_##N##_fetch(const T *source, int pe);                                      \
    WAITIO_SHMEM_API void shmem_##N##_set(T *dest, T value, int pe);                                    \
    WAITIO_SHMEM_API T shmem_##N##_swap(T *dest, T value, int pe);
#define WAITIO_SHMEM_DECL_DEP_AMO(T, N)                                                                 \
    WAITIO_SHMEM_API T shmem_##N##_cswap(T *dest, T cond, T value, int pe);                             \
    WAITIO_SHMEM_API T shmem_##N##_finc(T *dest, int pe);                                               \
    WAITIO_SHMEM_API void shmem_##N##_inc(T *dest, int pe);                                             \
    WAITIO_SHMEM_API T shmem_##N##_fadd(T *dest, T value, int pe);                                      \
    WAITIO_SHMEM_API void shmem_##N##_add(T *dest, T value, int pe);
WAITIO_SHMEM_EXT_AMO_TYPES(WAITIO_SHMEM_DECL_DEP_EXT_AMO)
WAITIO_SHMEM_AMO_TYPES(WAITIO_SHMEM_DECL_DEP_AMO)

/* SHMEM_CACHE (deprecated in 1.3): for machines without coherent caches; on the cache-coherent
 * machines WaitIO runs on there is nothing to invalidate or flush, so these do nothing. */
WAITIO_SHMEM_API void shmem_clear_cache_inv(void);
WAITIO_SHMEM_API void shmem_set_cache_inv(void);
WAITIO_SHMEM_API void shmem_clear_cache_line_inv(void *dest);
WAITIO_SHMEM_API void shmem_set_cache_line_inv(void *dest);
WAITIO_SHMEM_API void shmem_udcflush(void);
WAITIO_SHMEM_API void shmem_udcflush_line(void *dest);

/* Profiling control (1.5): level 0 off, 1 on (the default), 2 full, other values are the tool's.
 * The library records the level for a profiling tool that interposes pshmem_pcontrol. */
WAITIO_SHMEM_API void shmem_pcontrol(const int level, ...);

/* _SHMEM_* constants (deprecated in 1.3) for the pSync ones; the others are with their modern names */
#define _SHMEM_SYNC_VALUE SHMEM_SYNC_VALUE
#define _SHMEM_BARRIER_SYNC_SIZE SHMEM_BARRIER_SYNC_SIZE
#define _SHMEM_BCAST_SYNC_SIZE SHMEM_BCAST_SYNC_SIZE
#define _SHMEM_COLLECT_SYNC_SIZE SHMEM_COLLECT_SYNC_SIZE
#define _SHMEM_REDUCE_SYNC_SIZE SHMEM_REDUCE_SYNC_SIZE
#define _SHMEM_REDUCE_MIN_WRKDATA_SIZE SHMEM_REDUCE_MIN_WRKDATA_SIZE

/* ---- C11 generic interfaces (the standard types; the fixed-width ones are typedefs of them) -- */

/* WAITIO_SHMEM_NO_GENERICS: the library's own pshmem_wrap.c, which defines the functions whose
 * names some generics share */
#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && !defined(__cplusplus) && \
    !defined(WAITIO_SHMEM_NO_GENERICS)

/* The type tables of the generics, once: WAITIO_SHMEM_T*(P, F, X) selects P##TYPENAME_##F, with P
 * shmem_ for the plain routines (WAITIO_SHMEM_G*) and shmem_ctx_ for the context ones (_CG*). */
#define WAITIO_SHMEM_TG14(P, F, X) \
    _Generic((X), float *: P##float_##F, double *: P##double_##F,                                 \
             long double *: P##longdouble_##F, char *: P##char_##F, signed char *: P##schar_##F, \
             short *: P##short_##F, int *: P##int_##F, long *: P##long_##F,                    \
             long long *: P##longlong_##F, unsigned char *: P##uchar_##F,                         \
             unsigned short *: P##ushort_##F, unsigned int *: P##uint_##F,                        \
             unsigned long *: P##ulong_##F, unsigned long long *: P##ulonglong_##F)
#define WAITIO_SHMEM_G14(F, X) WAITIO_SHMEM_TG14(shmem_, F, X)
#define WAITIO_SHMEM_TG14C(P, F, X) \
    _Generic((X), const float *: P##float_##F, const double *: P##double_##F,                     \
             const long double *: P##longdouble_##F, const char *: P##char_##F,                   \
             const signed char *: P##schar_##F, const short *: P##short_##F,                      \
             const int *: P##int_##F, const long *: P##long_##F,                                  \
             const long long *: P##longlong_##F, const unsigned char *: P##uchar_##F,             \
             const unsigned short *: P##ushort_##F, const unsigned int *: P##uint_##F,            \
             const unsigned long *: P##ulong_##F, const unsigned long long *: P##ulonglong_##F,   \
             float *: P##float_##F, double *: P##double_##F,                                      \
             long double *: P##longdouble_##F, char *: P##char_##F, signed char *: P##schar_##F, \
             short *: P##short_##F, int *: P##int_##F, long *: P##long_##F,                    \
             long long *: P##longlong_##F, unsigned char *: P##uchar_##F,                         \
             unsigned short *: P##ushort_##F, unsigned int *: P##uint_##F,                        \
             unsigned long *: P##ulong_##F, unsigned long long *: P##ulonglong_##F)
#define WAITIO_SHMEM_G14C(F, X) WAITIO_SHMEM_TG14C(shmem_, F, X)
#define WAITIO_SHMEM_TGAMO(P, F, X) \
    _Generic((X), int *: P##int_##F, long *: P##long_##F, long long *: P##longlong_##F,        \
             unsigned int *: P##uint_##F, unsigned long *: P##ulong_##F,                          \
             unsigned long long *: P##ulonglong_##F)
#define WAITIO_SHMEM_GAMO(F, X) WAITIO_SHMEM_TGAMO(shmem_, F, X)
#define WAITIO_SHMEM_TGEXT(P, F, X) \
    _Generic((X), int *: P##int_##F, long *: P##long_##F, long long *: P##longlong_##F,        \
             unsigned int *: P##uint_##F, unsigned long *: P##ulong_##F,                          \
             unsigned long long *: P##ulonglong_##F, float *: P##float_##F, double *: P##double_##F)
#define WAITIO_SHMEM_GEXT(F, X) WAITIO_SHMEM_TGEXT(shmem_, F, X)
#define WAITIO_SHMEM_TGEXTC(P, F, X) \
    _Generic((X), const int *: P##int_##F, const long *: P##long_##F,                             \
             const long long *: P##longlong_##F, const unsigned int *: P##uint_##F,               \
             const unsigned long *: P##ulong_##F, const unsigned long long *: P##ulonglong_##F,   \
             const float *: P##float_##F, const double *: P##double_##F, int *: P##int_##F,    \
             long *: P##long_##F, long long *: P##longlong_##F, unsigned int *: P##uint_##F,   \
             unsigned long *: P##ulong_##F, unsigned long long *: P##ulonglong_##F,               \
             float *: P##float_##F, double *: P##double_##F)
#define WAITIO_SHMEM_GEXTC(F, X) WAITIO_SHMEM_TGEXTC(shmem_, F, X)
#define WAITIO_SHMEM_TGBIT(P, F, X) \
    _Generic((X), unsigned int *: P##uint_##F, unsigned long *: P##ulong_##F,                     \
             unsigned long long *: P##ulonglong_##F, int *: P##int32_##F, long *: P##int64_##F)
#define WAITIO_SHMEM_GBIT(F, X) WAITIO_SHMEM_TGBIT(shmem_, F, X)
#define WAITIO_SHMEM_GP2P(F, X)                                                                         \
    _Generic((X), short *: shmem_short_##F, int *: shmem_int_##F, long *: shmem_long_##F,               \
             long long *: shmem_longlong_##F, unsigned short *: shmem_ushort_##F,                       \
             unsigned int *: shmem_uint_##F, unsigned long *: shmem_ulong_##F,                          \
             unsigned long long *: shmem_ulonglong_##F)

#define WAITIO_SHMEM_CG14(F, X) WAITIO_SHMEM_TG14(shmem_ctx_, F, X)
#define WAITIO_SHMEM_CG14C(F, X) WAITIO_SHMEM_TG14C(shmem_ctx_, F, X)
#define WAITIO_SHMEM_CGAMO(F, X) WAITIO_SHMEM_TGAMO(shmem_ctx_, F, X)
#define WAITIO_SHMEM_CGEXT(F, X) WAITIO_SHMEM_TGEXT(shmem_ctx_, F, X)
#define WAITIO_SHMEM_CGEXTC(F, X) WAITIO_SHMEM_TGEXTC(shmem_ctx_, F, X)
#define WAITIO_SHMEM_CGBIT(F, X) WAITIO_SHMEM_TGBIT(shmem_ctx_, F, X)
/* OpenSHMEM 1.5: each generic RMA, atomic and signal name also takes a context as an extra first
 * argument (shmem_put(ctx, dest, source, nelems, pe)); the number of arguments selects the form. */
#define WAITIO_SHMEM_NARGS_(_1, _2, _3, _4, _5, _6, _7, _8, _9, N, ...) N
#define WAITIO_SHMEM_NARGS(...) WAITIO_SHMEM_NARGS_(__VA_ARGS__, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define WAITIO_SHMEM_CAT_(a, b) a##b
#define WAITIO_SHMEM_CAT(a, b) WAITIO_SHMEM_CAT_(a, b)
#define WAITIO_SHMEM_BY_NARGS(NAME, ...) WAITIO_SHMEM_CAT(NAME, WAITIO_SHMEM_NARGS(__VA_ARGS__))(__VA_ARGS__)

#define shmem_put(...) WAITIO_SHMEM_BY_NARGS(WAITIO_SHMEM_put_, __VA_ARGS__)
#define shmem_get(...) WAITIO_SHMEM_BY_NARGS(WAITIO_SHMEM_get_, __VA_ARGS__)
#define shmem_put_nbi(...) WAITIO_SHMEM_BY_NARGS(WAITIO_SHMEM_put_nbi_, __VA_ARGS__)
#define shmem_get_nbi(...) WAITIO_SHMEM_BY_NARGS(WAITIO_SHMEM_get_nbi_, __VA_ARGS__)
#define shmem_p(...) WAITIO_SHMEM_BY_NARGS(WAITIO_SHMEM_p_, __VA_ARGS__)
#define shmem_g(...) WAITIO_SHMEM_BY_NARGS(WAITIO_SHMEM_g_, __VA_ARGS__)
#define shmem_iput(...) WAITIO_SHMEM_BY_NARGS(WAITIO_SHMEM_iput_, __VA_ARGS__)
#define shmem_iget(...) WAITIO_SHMEM_BY_NARGS(WAITIO_SHMEM_iget_, __VA_ARGS__)
#define shmem_put_signal(...) WAITIO_SHMEM_BY_NARGS(WAITIO_SHMEM_put_signal_, __VA_ARGS__)
#define shmem_put_signal_nbi(...) WAITIO_SHMEM_BY_NARGS(WAITIO_SHMEM_put_signal_nbi_, __VA_ARGS__)
#define WAITIO_SHMEM_put_4(d, s, n, pe) WAITIO_SHMEM_G14(put, d)(d, s, n, pe)
#define WAITIO_SHMEM_put_5(c, d, s, n, pe) WAITIO_SHMEM_CG14(put, d)(c, d, s, n, pe)
#define WAITIO_SHMEM_get_4(d, s, n, pe) WAITIO_SHMEM_G14(get, d)(d, s, n, pe)
#define WAITIO_SHMEM_get_5(c, d, s, n, pe) WAITIO_SHMEM_CG14(get, d)(c, d, s, n, pe)
#define WAITIO_SHMEM_put_nbi_4(d, s, n, pe) WAITIO_SHMEM_G14(put_nbi, d)(d, s, n, pe)
#define WAITIO_SHMEM_put_nbi_5(c, d, s, n, pe) WAITIO_SHMEM_CG14(put_nbi, d)(c, d, s, n, pe)
#define WAITIO_SHMEM_get_nbi_4(d, s, n, pe) WAITIO_SHMEM_G14(get_nbi, d)(d, s, n, pe)
#define WAITIO_SHMEM_get_nbi_5(c, d, s, n, pe) WAITIO_SHMEM_CG14(get_nbi, d)(c, d, s, n, pe)
#define WAITIO_SHMEM_p_3(d, v, pe) WAITIO_SHMEM_G14(p, d)(d, v, pe)
#define WAITIO_SHMEM_p_4(c, d, v, pe) WAITIO_SHMEM_CG14(p, d)(c, d, v, pe)
#define WAITIO_SHMEM_g_2(s, pe) WAITIO_SHMEM_G14C(g, s)(s, pe)
#define WAITIO_SHMEM_g_3(c, s, pe) WAITIO_SHMEM_CG14C(g, s)(c, s, pe)
#define WAITIO_SHMEM_iput_6(d, s, dst, sst, n, pe) WAITIO_SHMEM_G14(iput, d)(d, s, dst, sst, n, pe)
#define WAITIO_SHMEM_iput_7(c, d, s, dst, sst, n, pe) WAITIO_SHMEM_CG14(iput, d)(c, d, s, dst, sst, n, pe)
#define WAITIO_SHMEM_iget_6(d, s, dst, sst, n, pe) WAITIO_SHMEM_G14(iget, d)(d, s, dst, sst, n, pe)
#define WAITIO_SHMEM_iget_7(c, d, s, dst, sst, n, pe) WAITIO_SHMEM_CG14(iget, d)(c, d, s, dst, sst, n, pe)
#define WAITIO_SHMEM_put_signal_7(d, s, n, sa, sv, so, pe) WAITIO_SHMEM_G14(put_signal, d)(d, s, n, sa, sv, so, pe)
#define WAITIO_SHMEM_put_signal_8(c, d, s, n, sa, sv, so, pe) \
    WAITIO_SHMEM_CG14(put_signal, d)(c, d, s, n, sa, sv, so, pe)
#define WAITIO_SHMEM_put_signal_nbi_7(d, s, n, sa, sv, so, pe) \
    WAITIO_SHMEM_G14(put_signal_nbi, d)(d, s, n, sa, sv, so, pe)
#define WAITIO_SHMEM_put_signal_nbi_8(c, d, s, n, sa, sv, so, pe) \
    WAITIO_SHMEM_CG14(put_signal_nbi, d)(c, d, s, n, sa, sv, so, pe)
#define shmem_broadcast(team, dest, source, nelems, root) WAITIO_SHMEM_G14(broadcast, dest)(team, dest, source, nelems, root)
#define shmem_collect(team, dest, source, nelems) WAITIO_SHMEM_G14(collect, dest)(team, dest, source, nelems)
#define shmem_fcollect(team, dest, source, nelems) WAITIO_SHMEM_G14(fcollect, dest)(team, dest, source, nelems)
#define shmem_alltoall(team, dest, source, nelems) WAITIO_SHMEM_G14(alltoall, dest)(team, dest, source, nelems)
#define shmem_alltoalls(team, dest, source, dst, sst, nelems) \
    WAITIO_SHMEM_G14(alltoalls, dest)(team, dest, source, dst, sst, nelems)

#define shmem_atomic_fetch(...) WAITIO_SHMEM_BY_NARGS(WAITIO_SHMEM_atomic_fetch_, __VA_ARGS__)
#define WAITIO_SHMEM_atomic_fetch_2(s, pe) WAITIO_SHMEM_GEXTC(atomic_fetch, s)(s, pe)
#define WAITIO_SHMEM_atomic_fetch_3(c, s, pe) WAITIO_SHMEM_CGEXTC(atomic_fetch, s)(c, s, pe)
#define shmem_atomic_set(...) WAITIO_SHMEM_BY_NARGS(WAITIO_SHMEM_atomic_set_, __VA_ARGS__)
#define WAITIO_SHMEM_atomic_set_3(d, v, pe) WAITIO_SHMEM_GEXT(atomic_set, d)(d, v, pe)
#define WAITIO_SHMEM_atomic_set_4(c, d, v, pe) WAITIO_SHMEM_CGEXT(atomic_set, d)(c, d, v, pe)
#define shmem_atomic_swap(...) WAITIO_SHMEM_BY_NARGS(WAITIO_SHMEM_atomic_swap_, __VA_ARGS__)
#define WAITIO_SHMEM_atomic_swap_3(d, v, pe) WAITIO_SHMEM_GEXT(atomic_swap, d)(d, v, pe)
#define WAITIO_SHMEM_atomic_swap_4(c, d, v, pe) WAITIO_SHMEM_CGEXT(atomic_swap, d)(c, d, v, pe)
#define shmem_atomic_compare_swap(...) WAITIO_SHMEM_BY_NARGS(WAITIO_SHMEM_atomic_compare_swap_, __VA_ARGS__)
#define WAITIO_SHMEM_atomic_compare_swap_4(d, cond, v, pe) WAITIO_SHMEM_GAMO(atomic_compare_swap, d)(d, cond, v, pe)
#define WAITIO_SHMEM_atomic_compare_swap_5(c, d, cond, v, pe) \
    WAITIO_SHMEM_CGAMO(atomic_compare_swap, d)(c, d, cond, v, pe)
#define shmem_atomic_fetch_inc(...) WAITIO_SHMEM_BY_NARGS(WAITIO_SHMEM_atomic_fetch_inc_, __VA_ARGS__)
#define WAITIO_SHMEM_atomic_fetch_inc_2(d, pe) WAITIO_SHMEM_GAMO(atomic_fetch_inc, d)(d, pe)
#define WAITIO_SHMEM_atomic_fetch_inc_3(c, d, pe) WAITIO_SHMEM_CGAMO(atomic_fetch_inc, d)(c, d, pe)
#define shmem_atomic_inc(...) WAITIO_SHMEM_BY_NARGS(WAITIO_SHMEM_atomic_inc_, __VA_ARGS__)
#define WAITIO_SHMEM_atomic_inc_2(d, pe) WAITIO_SHMEM_GAMO(atomic_inc, d)(d, pe)
#define WAITIO_SHMEM_atomic_inc_3(c, d, pe) WAITIO_SHMEM_CGAMO(atomic_inc, d)(c, d, pe)
#define shmem_atomic_fetch_add(...) WAITIO_SHMEM_BY_NARGS(WAITIO_SHMEM_atomic_fetch_add_, __VA_ARGS__)
#define WAITIO_SHMEM_atomic_fetch_add_3(d, v, pe) WAITIO_SHMEM_GAMO(atomic_fetch_add, d)(d, v, pe)
#define WAITIO_SHMEM_atomic_fetch_add_4(c, d, v, pe) WAITIO_SHMEM_CGAMO(atomic_fetch_add, d)(c, d, v, pe)
#define shmem_atomic_add(...) WAITIO_SHMEM_BY_NARGS(WAITIO_SHMEM_atomic_add_, __VA_ARGS__)
#define WAITIO_SHMEM_atomic_add_3(d, v, pe) WAITIO_SHMEM_GAMO(atomic_add, d)(d, v, pe)
#define WAITIO_SHMEM_atomic_add_4(c, d, v, pe) WAITIO_SHMEM_CGAMO(atomic_add, d)(c, d, v, pe)
#define shmem_atomic_fetch_and(...) WAITIO_SHMEM_BY_NARGS(WAITIO_SHMEM_atomic_fetch_and_, __VA_ARGS__)
#define WAITIO_SHMEM_atomic_fetch_and_3(d, v, pe) WAITIO_SHMEM_GBIT(atomic_fetch_and, d)(d, v, pe)
#define WAITIO_SHMEM_atomic_fetch_and_4(c, d, v, pe) WAITIO_SHMEM_CGBIT(atomic_fetch_and, d)(c, d, v, pe)
#define shmem_atomic_and(...) WAITIO_SHMEM_BY_NARGS(WAITIO_SHMEM_atomic_and_, __VA_ARGS__)
#define WAITIO_SHMEM_atomic_and_3(d, v, pe) WAITIO_SHMEM_GBIT(atomic_and, d)(d, v, pe)
#define WAITIO_SHMEM_atomic_and_4(c, d, v, pe) WAITIO_SHMEM_CGBIT(atomic_and, d)(c, d, v, pe)
#define shmem_atomic_fetch_or(...) WAITIO_SHMEM_BY_NARGS(WAITIO_SHMEM_atomic_fetch_or_, __VA_ARGS__)
#define WAITIO_SHMEM_atomic_fetch_or_3(d, v, pe) WAITIO_SHMEM_GBIT(atomic_fetch_or, d)(d, v, pe)
#define WAITIO_SHMEM_atomic_fetch_or_4(c, d, v, pe) WAITIO_SHMEM_CGBIT(atomic_fetch_or, d)(c, d, v, pe)
#define shmem_atomic_or(...) WAITIO_SHMEM_BY_NARGS(WAITIO_SHMEM_atomic_or_, __VA_ARGS__)
#define WAITIO_SHMEM_atomic_or_3(d, v, pe) WAITIO_SHMEM_GBIT(atomic_or, d)(d, v, pe)
#define WAITIO_SHMEM_atomic_or_4(c, d, v, pe) WAITIO_SHMEM_CGBIT(atomic_or, d)(c, d, v, pe)
#define shmem_atomic_fetch_xor(...) WAITIO_SHMEM_BY_NARGS(WAITIO_SHMEM_atomic_fetch_xor_, __VA_ARGS__)
#define WAITIO_SHMEM_atomic_fetch_xor_3(d, v, pe) WAITIO_SHMEM_GBIT(atomic_fetch_xor, d)(d, v, pe)
#define WAITIO_SHMEM_atomic_fetch_xor_4(c, d, v, pe) WAITIO_SHMEM_CGBIT(atomic_fetch_xor, d)(c, d, v, pe)
#define shmem_atomic_xor(...) WAITIO_SHMEM_BY_NARGS(WAITIO_SHMEM_atomic_xor_, __VA_ARGS__)
#define WAITIO_SHMEM_atomic_xor_3(d, v, pe) WAITIO_SHMEM_GBIT(atomic_xor, d)(d, v, pe)
#define WAITIO_SHMEM_atomic_xor_4(c, d, v, pe) WAITIO_SHMEM_CGBIT(atomic_xor, d)(c, d, v, pe)
#define shmem_atomic_fetch_nbi(...) WAITIO_SHMEM_BY_NARGS(WAITIO_SHMEM_atomic_fetch_nbi_, __VA_ARGS__)
#define WAITIO_SHMEM_atomic_fetch_nbi_3(f, s, pe) WAITIO_SHMEM_GEXT(atomic_fetch_nbi, f)(f, s, pe)
#define WAITIO_SHMEM_atomic_fetch_nbi_4(c, f, s, pe) WAITIO_SHMEM_CGEXT(atomic_fetch_nbi, f)(c, f, s, pe)
#define shmem_atomic_swap_nbi(...) WAITIO_SHMEM_BY_NARGS(WAITIO_SHMEM_atomic_swap_nbi_, __VA_ARGS__)
#define WAITIO_SHMEM_atomic_swap_nbi_4(f, d, v, pe) WAITIO_SHMEM_GEXT(atomic_swap_nbi, f)(f, d, v, pe)
#define WAITIO_SHMEM_atomic_swap_nbi_5(c, f, d, v, pe) WAITIO_SHMEM_CGEXT(atomic_swap_nbi, f)(c, f, d, v, pe)
#define shmem_atomic_compare_swap_nbi(...) WAITIO_SHMEM_BY_NARGS(WAITIO_SHMEM_atomic_compare_swap_nbi_, __VA_ARGS__)
#define WAITIO_SHMEM_atomic_compare_swap_nbi_5(f, d, cond, v, pe) WAITIO_SHMEM_GAMO(atomic_compare_swap_nbi, f)(f, d, cond, v, pe)
#define WAITIO_SHMEM_atomic_compare_swap_nbi_6(c, f, d, cond, v, pe) \
    WAITIO_SHMEM_CGAMO(atomic_compare_swap_nbi, f)(c, f, d, cond, v, pe)
#define shmem_atomic_fetch_inc_nbi(...) WAITIO_SHMEM_BY_NARGS(WAITIO_SHMEM_atomic_fetch_inc_nbi_, __VA_ARGS__)
#define WAITIO_SHMEM_atomic_fetch_inc_nbi_3(f, d, pe) WAITIO_SHMEM_GAMO(atomic_fetch_inc_nbi, f)(f, d, pe)
#define WAITIO_SHMEM_atomic_fetch_inc_nbi_4(c, f, d, pe) \
    WAITIO_SHMEM_CGAMO(atomic_fetch_inc_nbi, f)(c, f, d, pe)
#define shmem_atomic_fetch_add_nbi(...) WAITIO_SHMEM_BY_NARGS(WAITIO_SHMEM_atomic_fetch_add_nbi_, __VA_ARGS__)
#define WAITIO_SHMEM_atomic_fetch_add_nbi_4(f, d, v, pe) WAITIO_SHMEM_GAMO(atomic_fetch_add_nbi, f)(f, d, v, pe)
#define WAITIO_SHMEM_atomic_fetch_add_nbi_5(c, f, d, v, pe) \
    WAITIO_SHMEM_CGAMO(atomic_fetch_add_nbi, f)(c, f, d, v, pe)
#define shmem_atomic_fetch_and_nbi(...) WAITIO_SHMEM_BY_NARGS(WAITIO_SHMEM_atomic_fetch_and_nbi_, __VA_ARGS__)
#define WAITIO_SHMEM_atomic_fetch_and_nbi_4(f, d, v, pe) WAITIO_SHMEM_GBIT(atomic_fetch_and_nbi, f)(f, d, v, pe)
#define WAITIO_SHMEM_atomic_fetch_and_nbi_5(c, f, d, v, pe) \
    WAITIO_SHMEM_CGBIT(atomic_fetch_and_nbi, f)(c, f, d, v, pe)
#define shmem_atomic_fetch_or_nbi(...) WAITIO_SHMEM_BY_NARGS(WAITIO_SHMEM_atomic_fetch_or_nbi_, __VA_ARGS__)
#define WAITIO_SHMEM_atomic_fetch_or_nbi_4(f, d, v, pe) WAITIO_SHMEM_GBIT(atomic_fetch_or_nbi, f)(f, d, v, pe)
#define WAITIO_SHMEM_atomic_fetch_or_nbi_5(c, f, d, v, pe) \
    WAITIO_SHMEM_CGBIT(atomic_fetch_or_nbi, f)(c, f, d, v, pe)
#define shmem_atomic_fetch_xor_nbi(...) WAITIO_SHMEM_BY_NARGS(WAITIO_SHMEM_atomic_fetch_xor_nbi_, __VA_ARGS__)
#define WAITIO_SHMEM_atomic_fetch_xor_nbi_4(f, d, v, pe) WAITIO_SHMEM_GBIT(atomic_fetch_xor_nbi, f)(f, d, v, pe)
#define WAITIO_SHMEM_atomic_fetch_xor_nbi_5(c, f, d, v, pe) \
    WAITIO_SHMEM_CGBIT(atomic_fetch_xor_nbi, f)(c, f, d, v, pe)
/* deprecated (1.4) generic atomics */
#define shmem_fetch(source, pe) WAITIO_SHMEM_GEXTC(fetch, source)(source, pe)
#define shmem_set(dest, value, pe) WAITIO_SHMEM_GEXT(set, dest)(dest, value, pe)
#define shmem_swap(dest, value, pe) WAITIO_SHMEM_GEXT(swap, dest)(dest, value, pe)
#define shmem_cswap(dest, cond, value, pe) WAITIO_SHMEM_GAMO(cswap, dest)(dest, cond, value, pe)
#define shmem_finc(dest, pe) WAITIO_SHMEM_GAMO(finc, dest)(dest, pe)
#define shmem_inc(dest, pe) WAITIO_SHMEM_GAMO(inc, dest)(dest, pe)
#define shmem_fadd(dest, value, pe) WAITIO_SHMEM_GAMO(fadd, dest)(dest, value, pe)
#define shmem_add(dest, value, pe) WAITIO_SHMEM_GAMO(add, dest)(dest, value, pe)

/* shmem_wait_until and shmem_wait also name deprecated long-only functions: a source that
 * already renames them (the library's pshmem_ build) keeps its macro */
#ifndef shmem_wait_until
#define shmem_wait_until(ivar, cmp, value) WAITIO_SHMEM_GP2P(wait_until, ivar)(ivar, cmp, value)
#endif
#define shmem_wait_until_all(ivars, n, status, cmp, value) WAITIO_SHMEM_GP2P(wait_until_all, ivars)(ivars, n, status, cmp, value)
#define shmem_wait_until_any(ivars, n, status, cmp, value) WAITIO_SHMEM_GP2P(wait_until_any, ivars)(ivars, n, status, cmp, value)
#define shmem_wait_until_some(ivars, n, idx, status, cmp, value) \
    WAITIO_SHMEM_GP2P(wait_until_some, ivars)(ivars, n, idx, status, cmp, value)
#define shmem_wait_until_all_vector(ivars, n, status, cmp, values) \
    WAITIO_SHMEM_GP2P(wait_until_all_vector, ivars)(ivars, n, status, cmp, values)
#define shmem_wait_until_any_vector(ivars, n, status, cmp, values) \
    WAITIO_SHMEM_GP2P(wait_until_any_vector, ivars)(ivars, n, status, cmp, values)
#define shmem_wait_until_some_vector(ivars, n, idx, status, cmp, values) \
    WAITIO_SHMEM_GP2P(wait_until_some_vector, ivars)(ivars, n, idx, status, cmp, values)
#define shmem_test(ivar, cmp, value) WAITIO_SHMEM_GP2P(test, ivar)(ivar, cmp, value)
#define shmem_test_all(ivars, n, status, cmp, value) WAITIO_SHMEM_GP2P(test_all, ivars)(ivars, n, status, cmp, value)
#define shmem_test_any(ivars, n, status, cmp, value) WAITIO_SHMEM_GP2P(test_any, ivars)(ivars, n, status, cmp, value)
#define shmem_test_some(ivars, n, idx, status, cmp, value) \
    WAITIO_SHMEM_GP2P(test_some, ivars)(ivars, n, idx, status, cmp, value)
#define shmem_test_all_vector(ivars, n, status, cmp, values) \
    WAITIO_SHMEM_GP2P(test_all_vector, ivars)(ivars, n, status, cmp, values)
#define shmem_test_any_vector(ivars, n, status, cmp, values) \
    WAITIO_SHMEM_GP2P(test_any_vector, ivars)(ivars, n, status, cmp, values)
#define shmem_test_some_vector(ivars, n, idx, status, cmp, values) \
    WAITIO_SHMEM_GP2P(test_some_vector, ivars)(ivars, n, idx, status, cmp, values)
#ifndef shmem_wait
#define shmem_wait(ivar, value) WAITIO_SHMEM_GP2P(wait, ivar)(ivar, value)
#endif
/* 1.5's shmem_sync(team) beside the deprecated active-set shmem_sync(PE_start, logPE_stride,
 * PE_size, pSync): told apart by the number of arguments */
#ifndef shmem_sync
#define WAITIO_SHMEM_sync_1(team) shmem_team_sync(team)
#define WAITIO_SHMEM_sync_4(start, logstride, size, psync) (shmem_sync)(start, logstride, size, psync)
#define shmem_sync(...) WAITIO_SHMEM_BY_NARGS(WAITIO_SHMEM_sync_, __VA_ARGS__)
#endif

#define WAITIO_SHMEM_GRED(OP, X)                                                                        \
    _Generic((X), char *: shmem_char_##OP##_reduce, signed char *: shmem_schar_##OP##_reduce,           \
             short *: shmem_short_##OP##_reduce, int *: shmem_int_##OP##_reduce,                        \
             long *: shmem_long_##OP##_reduce, long long *: shmem_longlong_##OP##_reduce,               \
             unsigned char *: shmem_uchar_##OP##_reduce, unsigned short *: shmem_ushort_##OP##_reduce,  \
             unsigned int *: shmem_uint_##OP##_reduce, unsigned long *: shmem_ulong_##OP##_reduce,      \
             unsigned long long *: shmem_ulonglong_##OP##_reduce, float *: shmem_float_##OP##_reduce,   \
             double *: shmem_double_##OP##_reduce, long double *: shmem_longdouble_##OP##_reduce)
#define WAITIO_SHMEM_GBRED(OP, X)                                                                       \
    _Generic((X), unsigned char *: shmem_uchar_##OP##_reduce, unsigned short *: shmem_ushort_##OP##_reduce, \
             unsigned int *: shmem_uint_##OP##_reduce, unsigned long *: shmem_ulong_##OP##_reduce,      \
             unsigned long long *: shmem_ulonglong_##OP##_reduce, signed char *: shmem_int8_##OP##_reduce, \
             short *: shmem_int16_##OP##_reduce, int *: shmem_int32_##OP##_reduce, long *: shmem_int64_##OP##_reduce)
#define shmem_and_reduce(team, dest, source, n) WAITIO_SHMEM_GBRED(and, dest)(team, dest, source, n)
#define shmem_or_reduce(team, dest, source, n) WAITIO_SHMEM_GBRED(or, dest)(team, dest, source, n)
#define shmem_xor_reduce(team, dest, source, n) WAITIO_SHMEM_GBRED(xor, dest)(team, dest, source, n)
#define shmem_max_reduce(team, dest, source, n) WAITIO_SHMEM_GRED(max, dest)(team, dest, source, n)
#define shmem_min_reduce(team, dest, source, n) WAITIO_SHMEM_GRED(min, dest)(team, dest, source, n)
#ifndef __STDC_NO_COMPLEX__
/* sum and prod also take the complex types */
#define WAITIO_SHMEM_GCRED(OP, X)                                                                       \
    _Generic((X), char *: shmem_char_##OP##_reduce, signed char *: shmem_schar_##OP##_reduce,           \
             short *: shmem_short_##OP##_reduce, int *: shmem_int_##OP##_reduce,                        \
             long *: shmem_long_##OP##_reduce, long long *: shmem_longlong_##OP##_reduce,               \
             unsigned char *: shmem_uchar_##OP##_reduce, unsigned short *: shmem_ushort_##OP##_reduce,  \
             unsigned int *: shmem_uint_##OP##_reduce, unsigned long *: shmem_ulong_##OP##_reduce,      \
             unsigned long long *: shmem_ulonglong_##OP##_reduce, float *: shmem_float_##OP##_reduce,   \
             double *: shmem_double_##OP##_reduce, long double *: shmem_longdouble_##OP##_reduce,       \
             float _Complex *: shmem_complexf_##OP##_reduce, double _Complex *: shmem_complexd_##OP##_reduce)
#define shmem_sum_reduce(team, dest, source, n) WAITIO_SHMEM_GCRED(sum, dest)(team, dest, source, n)
#define shmem_prod_reduce(team, dest, source, n) WAITIO_SHMEM_GCRED(prod, dest)(team, dest, source, n)
#else
#define shmem_sum_reduce(team, dest, source, n) WAITIO_SHMEM_GRED(sum, dest)(team, dest, source, n)
#define shmem_prod_reduce(team, dest, source, n) WAITIO_SHMEM_GRED(prod, dest)(team, dest, source, n)
#endif

#endif /* C11 */

#ifdef __cplusplus
}
#endif
#endif /* WAITIO_SHMEM_H */
