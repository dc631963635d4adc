/*
 * shmem.h — WaitIO's OpenSHMEM layer (libwaitio_shmem): an OpenSHMEM 1.5 subset on WaitIO's
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
 * Not implemented: contexts (shmem_ctx_*), team creation (split), the deprecated active-set
 * collectives and pSync arrays, complex-typed reductions.
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
WAITIO_SHMEM_API void *shmalloc(size_t size);
WAITIO_SHMEM_API void shfree(void *ptr);

/* ---- memory ordering and synchronisation -------------------------------------------------- */

WAITIO_SHMEM_API void shmem_quiet(void);
WAITIO_SHMEM_API void shmem_fence(void);
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
                                           size_t nelems, int pe);
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
    WAITIO_SHMEM_API void shmem_##N##_wait(T *ivar, T cmp_value);
WAITIO_SHMEM_P2P_TYPES(WAITIO_SHMEM_DECL_P2P)

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

/* ---- distributed locks -------------------------------------------------------------------- */

WAITIO_SHMEM_API void shmem_set_lock(long *lock);
WAITIO_SHMEM_API void shmem_clear_lock(long *lock);
WAITIO_SHMEM_API int shmem_test_lock(long *lock);

/* ---- C11 generic interfaces (the standard types; the fixed-width ones are typedefs of them) -- */

#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && !defined(__cplusplus)

#define WAITIO_SHMEM_G14(F, X)                                                                          \
    _Generic((X), float *: shmem_float_##F, double *: shmem_double_##F,                                 \
             long double *: shmem_longdouble_##F, char *: shmem_char_##F, signed char *: shmem_schar_##F, \
             short *: shmem_short_##F, int *: shmem_int_##F, long *: shmem_long_##F,                    \
             long long *: shmem_longlong_##F, unsigned char *: shmem_uchar_##F,                         \
             unsigned short *: shmem_ushort_##F, unsigned int *: shmem_uint_##F,                        \
             unsigned long *: shmem_ulong_##F, unsigned long long *: shmem_ulonglong_##F)
#define WAITIO_SHMEM_G14C(F, X)                                                                         \
    _Generic((X), const float *: shmem_float_##F, const double *: shmem_double_##F,                     \
             const long double *: shmem_longdouble_##F, const char *: shmem_char_##F,                   \
             const signed char *: shmem_schar_##F, const short *: shmem_short_##F,                      \
             const int *: shmem_int_##F, const long *: shmem_long_##F,                                  \
             const long long *: shmem_longlong_##F, const unsigned char *: shmem_uchar_##F,             \
             const unsigned short *: shmem_ushort_##F, const unsigned int *: shmem_uint_##F,            \
             const unsigned long *: shmem_ulong_##F, const unsigned long long *: shmem_ulonglong_##F,   \
             float *: shmem_float_##F, double *: shmem_double_##F,                                      \
             long double *: shmem_longdouble_##F, char *: shmem_char_##F, signed char *: shmem_schar_##F, \
             short *: shmem_short_##F, int *: shmem_int_##F, long *: shmem_long_##F,                    \
             long long *: shmem_longlong_##F, unsigned char *: shmem_uchar_##F,                         \
             unsigned short *: shmem_ushort_##F, unsigned int *: shmem_uint_##F,                        \
             unsigned long *: shmem_ulong_##F, unsigned long long *: shmem_ulonglong_##F)
#define WAITIO_SHMEM_GAMO(F, X)                                                                         \
    _Generic((X), int *: shmem_int_##F, long *: shmem_long_##F, long long *: shmem_longlong_##F,        \
             unsigned int *: shmem_uint_##F, unsigned long *: shmem_ulong_##F,                          \
             unsigned long long *: shmem_ulonglong_##F)
#define WAITIO_SHMEM_GEXT(F, X)                                                                         \
    _Generic((X), int *: shmem_int_##F, long *: shmem_long_##F, long long *: shmem_longlong_##F,        \
             unsigned int *: shmem_uint_##F, unsigned long *: shmem_ulong_##F,                          \
             unsigned long long *: shmem_ulonglong_##F, float *: shmem_float_##F, double *: shmem_double_##F)
#define WAITIO_SHMEM_GEXTC(F, X)                                                                        \
    _Generic((X), const int *: shmem_int_##F, const long *: shmem_long_##F,                             \
             const long long *: shmem_longlong_##F, const unsigned int *: shmem_uint_##F,               \
             const unsigned long *: shmem_ulong_##F, const unsigned long long *: shmem_ulonglong_##F,   \
             const float *: shmem_float_##F, const double *: shmem_double_##F, int *: shmem_int_##F,    \
             long *: shmem_long_##F, long long *: shmem_longlong_##F, unsigned int *: shmem_uint_##F,   \
             unsigned long *: shmem_ulong_##F, unsigned long long *: shmem_ulonglong_##F,               \
             float *: shmem_float_##F, double *: shmem_double_##F)
#define WAITIO_SHMEM_GBIT(F, X)                                                                         \
    _Generic((X), unsigned int *: shmem_uint_##F, unsigned long *: shmem_ulong_##F,                     \
             unsigned long long *: shmem_ulonglong_##F, int *: shmem_int32_##F, long *: shmem_int64_##F)
#define WAITIO_SHMEM_GP2P(F, X)                                                                         \
    _Generic((X), short *: shmem_short_##F, int *: shmem_int_##F, long *: shmem_long_##F,               \
             long long *: shmem_longlong_##F, unsigned short *: shmem_ushort_##F,                       \
             unsigned int *: shmem_uint_##F, unsigned long *: shmem_ulong_##F,                          \
             unsigned long long *: shmem_ulonglong_##F)

#define shmem_put(dest, source, nelems, pe) WAITIO_SHMEM_G14(put, dest)(dest, source, nelems, pe)
#define shmem_get(dest, source, nelems, pe) WAITIO_SHMEM_G14(get, dest)(dest, source, nelems, pe)
#define shmem_put_nbi(dest, source, nelems, pe) WAITIO_SHMEM_G14(put_nbi, dest)(dest, source, nelems, pe)
#define shmem_get_nbi(dest, source, nelems, pe) WAITIO_SHMEM_G14(get_nbi, dest)(dest, source, nelems, pe)
#define shmem_p(dest, value, pe) WAITIO_SHMEM_G14(p, dest)(dest, value, pe)
#define shmem_g(source, pe) WAITIO_SHMEM_G14C(g, source)(source, pe)
#define shmem_iput(dest, source, dst, sst, nelems, pe) WAITIO_SHMEM_G14(iput, dest)(dest, source, dst, sst, nelems, pe)
#define shmem_iget(dest, source, dst, sst, nelems, pe) WAITIO_SHMEM_G14(iget, dest)(dest, source, dst, sst, nelems, pe)
#define shmem_put_signal(dest, source, nelems, sig_addr, signal, sig_op, pe) \
    WAITIO_SHMEM_G14(put_signal, dest)(dest, source, nelems, sig_addr, signal, sig_op, pe)
#define shmem_put_signal_nbi(dest, source, nelems, sig_addr, signal, sig_op, pe) \
    WAITIO_SHMEM_G14(put_signal_nbi, dest)(dest, source, nelems, sig_addr, signal, sig_op, pe)
#define shmem_broadcast(team, dest, source, nelems, root) WAITIO_SHMEM_G14(broadcast, dest)(team, dest, source, nelems, root)
#define shmem_collect(team, dest, source, nelems) WAITIO_SHMEM_G14(collect, dest)(team, dest, source, nelems)
#define shmem_fcollect(team, dest, source, nelems) WAITIO_SHMEM_G14(fcollect, dest)(team, dest, source, nelems)
#define shmem_alltoall(team, dest, source, nelems) WAITIO_SHMEM_G14(alltoall, dest)(team, dest, source, nelems)

#define shmem_atomic_fetch(source, pe) WAITIO_SHMEM_GEXTC(atomic_fetch, source)(source, pe)
#define shmem_atomic_set(dest, value, pe) WAITIO_SHMEM_GEXT(atomic_set, dest)(dest, value, pe)
#define shmem_atomic_swap(dest, value, pe) WAITIO_SHMEM_GEXT(atomic_swap, dest)(dest, value, pe)
#define shmem_atomic_compare_swap(dest, cond, value, pe) WAITIO_SHMEM_GAMO(atomic_compare_swap, dest)(dest, cond, value, pe)
#define shmem_atomic_fetch_inc(dest, pe) WAITIO_SHMEM_GAMO(atomic_fetch_inc, dest)(dest, pe)
#define shmem_atomic_inc(dest, pe) WAITIO_SHMEM_GAMO(atomic_inc, dest)(dest, pe)
#define shmem_atomic_fetch_add(dest, value, pe) WAITIO_SHMEM_GAMO(atomic_fetch_add, dest)(dest, value, pe)
#define shmem_atomic_add(dest, value, pe) WAITIO_SHMEM_GAMO(atomic_add, dest)(dest, value, pe)
#define shmem_atomic_fetch_and(dest, value, pe) WAITIO_SHMEM_GBIT(atomic_fetch_and, dest)(dest, value, pe)
#define shmem_atomic_and(dest, value, pe) WAITIO_SHMEM_GBIT(atomic_and, dest)(dest, value, pe)
#define shmem_atomic_fetch_or(dest, value, pe) WAITIO_SHMEM_GBIT(atomic_fetch_or, dest)(dest, value, pe)
#define shmem_atomic_or(dest, value, pe) WAITIO_SHMEM_GBIT(atomic_or, dest)(dest, value, pe)
#define shmem_atomic_fetch_xor(dest, value, pe) WAITIO_SHMEM_GBIT(atomic_fetch_xor, dest)(dest, value, pe)
#define shmem_atomic_xor(dest, value, pe) WAITIO_SHMEM_GBIT(atomic_xor, dest)(dest, value, pe)

#define shmem_wait_until(ivar, cmp, value) WAITIO_SHMEM_GP2P(wait_until, ivar)(ivar, cmp, value)
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
#define shmem_wait(ivar, value) WAITIO_SHMEM_GP2P(wait, ivar)(ivar, value)

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
#define shmem_sum_reduce(team, dest, source, n) WAITIO_SHMEM_GRED(sum, dest)(team, dest, source, n)
#define shmem_prod_reduce(team, dest, source, n) WAITIO_SHMEM_GRED(prod, dest)(team, dest, source, n)

#endif /* C11 */

#ifdef __cplusplus
}
#endif
#endif /* WAITIO_SHMEM_H */
