/*
 * shmem_names.c — calls every C11 type-generic routine of OpenSHMEM 1.5 with several types each,
 * with and without a context where 1.5 has both forms. tests/scripts/shmem_names.sh compiles it
 * with -std=c11 -Werror and links it against libwaitio_shmem: a generic that shmem.h lacks, a
 * type its selection does not handle, or a typed routine it selects that the library does not
 * define fails the build. It is never run (what the routines do is tested by the shmem_* test
 * programs); exercise() is only reachable from main so that the linker must resolve every call.
 */
#include <shmem.h>
#include <stddef.h>
#include <stdint.h>

typedef signed char schar;
typedef unsigned char uchar;
typedef unsigned int uint;
typedef unsigned long ulong;
typedef long long llong;
typedef unsigned long long ullong;
typedef long double ldouble;
typedef double _Complex cdouble;
typedef float _Complex cfloat;

/* the types each family is called with (a few of each table's, of every kind) */
#define RMA_TYPES(X) X(char) X(schar) X(short) X(int) X(llong) X(ulong) X(float) X(double) \
  X(ldouble) X(int8_t) X(uint64_t) X(size_t) X(ptrdiff_t)
#define AMO_STD_TYPES(X) X(int) X(llong) X(ulong) X(uint32_t) X(int64_t) X(size_t) X(ptrdiff_t)
#define AMO_EXT_TYPES(X) AMO_STD_TYPES(X) X(float) X(double)
#define AMO_BIT_TYPES(X) X(uint) X(ullong) X(int32_t) X(uint64_t)
#define AMO_OLD3_TYPES(X) X(int) X(long) X(llong)
#define AMO_OLD5_TYPES(X) AMO_OLD3_TYPES(X) X(float) X(double)
#define P2P_TYPES(X) X(int) X(long) X(ullong) X(int64_t) X(size_t) X(ptrdiff_t)
#define RED_BIT_TYPES(X) X(uchar) X(uint) X(uint64_t) X(size_t)
#define RED_MINMAX_TYPES(X) X(char) X(short) X(llong) X(int16_t) X(double) X(ldouble)
#define RED_ARITH_TYPES(X) RED_MINMAX_TYPES(X) X(cdouble) X(cfloat)
#define ALL_TYPES(X) X(char) X(schar) X(uchar) X(short) X(int) X(uint) X(long) X(ulong) \
  X(llong) X(ullong) X(float) X(double) X(ldouble) X(int8_t) X(int16_t) X(int32_t) \
  X(int64_t) X(uint32_t) X(uint64_t) X(size_t) X(ptrdiff_t) X(cdouble) X(cfloat)

/* external (not static): some families use only part of each type's arrays */
#define DECLARE(T) T d_##T[8], s_##T[8], f_##T[8];
ALL_TYPES(DECLARE)
uint64_t sig;
size_t idx[8];
int status[8];

#define RMA(T)                                                                                  \
  shmem_put(d_##T, s_##T, 1, 0); shmem_put(ctx, d_##T, s_##T, 1, 0);                         \
  shmem_p(d_##T, s_##T[0], 0); shmem_p(ctx, d_##T, s_##T[0], 0);                               \
  shmem_iput(d_##T, s_##T, 2, 2, 2, 0); shmem_iput(ctx, d_##T, s_##T, 2, 2, 2, 0);             \
  shmem_get(d_##T, s_##T, 1, 0); shmem_get(ctx, d_##T, s_##T, 1, 0);                         \
  f_##T[0] = shmem_g(s_##T, 0); f_##T[1] = shmem_g(ctx, s_##T, 0);                            \
  shmem_iget(d_##T, s_##T, 2, 2, 2, 0); shmem_iget(ctx, d_##T, s_##T, 2, 2, 2, 0);             \
  shmem_put_nbi(d_##T, s_##T, 1, 0); shmem_put_nbi(ctx, d_##T, s_##T, 1, 0);                 \
  shmem_get_nbi(d_##T, s_##T, 1, 0); shmem_get_nbi(ctx, d_##T, s_##T, 1, 0);                 \
  shmem_put_signal(d_##T, s_##T, 1, &sig, 1, SHMEM_SIGNAL_SET, 0);                             \
  shmem_put_signal(ctx, d_##T, s_##T, 1, &sig, 1, SHMEM_SIGNAL_ADD, 0);                        \
  shmem_put_signal_nbi(d_##T, s_##T, 1, &sig, 1, SHMEM_SIGNAL_SET, 0);                         \
  shmem_put_signal_nbi(ctx, d_##T, s_##T, 1, &sig, 1, SHMEM_SIGNAL_ADD, 0);

/* fetch, set, swap (extended AMO types) */
#define AMO_EXT(T)                                                                              \
  f_##T[0] = shmem_atomic_fetch(s_##T, 0); f_##T[1] = shmem_atomic_fetch(ctx, s_##T, 0);       \
  shmem_atomic_set(d_##T, s_##T[0], 0); shmem_atomic_set(ctx, d_##T, s_##T[0], 0);             \
  f_##T[0] = shmem_atomic_swap(d_##T, s_##T[0], 0);                                            \
  f_##T[1] = shmem_atomic_swap(ctx, d_##T, s_##T[0], 0);                                       \
  shmem_atomic_fetch_nbi(f_##T, s_##T, 0); shmem_atomic_fetch_nbi(ctx, f_##T, s_##T, 0);       \
  shmem_atomic_swap_nbi(f_##T, d_##T, s_##T[0], 0);                                            \
  shmem_atomic_swap_nbi(ctx, f_##T, d_##T, s_##T[0], 0);

#define AMO_STD(T)                                                                              \
  f_##T[0] = shmem_atomic_compare_swap(d_##T, s_##T[0], s_##T[1], 0);                          \
  f_##T[1] = shmem_atomic_compare_swap(ctx, d_##T, s_##T[0], s_##T[1], 0);                     \
  f_##T[0] = shmem_atomic_fetch_inc(d_##T, 0); f_##T[1] = shmem_atomic_fetch_inc(ctx, d_##T, 0); \
  shmem_atomic_inc(d_##T, 0); shmem_atomic_inc(ctx, d_##T, 0);                                 \
  f_##T[0] = shmem_atomic_fetch_add(d_##T, s_##T[0], 0);                                       \
  f_##T[1] = shmem_atomic_fetch_add(ctx, d_##T, s_##T[0], 0);                                  \
  shmem_atomic_add(d_##T, s_##T[0], 0); shmem_atomic_add(ctx, d_##T, s_##T[0], 0);             \
  shmem_atomic_compare_swap_nbi(f_##T, d_##T, s_##T[0], s_##T[1], 0);                          \
  shmem_atomic_compare_swap_nbi(ctx, f_##T, d_##T, s_##T[0], s_##T[1], 0);                     \
  shmem_atomic_fetch_inc_nbi(f_##T, d_##T, 0); shmem_atomic_fetch_inc_nbi(ctx, f_##T, d_##T, 0); \
  shmem_atomic_fetch_add_nbi(f_##T, d_##T, s_##T[0], 0);                                       \
  shmem_atomic_fetch_add_nbi(ctx, f_##T, d_##T, s_##T[0], 0);

#define AMO_BIT_OP(T, op)                                                                       \
  f_##T[0] = shmem_atomic_fetch_##op(d_##T, s_##T[0], 0);                                      \
  f_##T[1] = shmem_atomic_fetch_##op(ctx, d_##T, s_##T[0], 0);                                 \
  shmem_atomic_##op(d_##T, s_##T[0], 0); shmem_atomic_##op(ctx, d_##T, s_##T[0], 0);           \
  shmem_atomic_fetch_##op##_nbi(f_##T, d_##T, s_##T[0], 0);                                    \
  shmem_atomic_fetch_##op##_nbi(ctx, f_##T, d_##T, s_##T[0], 0);
#define AMO_BIT(T) AMO_BIT_OP(T, and) AMO_BIT_OP(T, or) AMO_BIT_OP(T, xor)

/* the deprecated generic AMO names of 1.3 (no context forms) */
#define AMO_OLD5(T)                                                                             \
  f_##T[0] = shmem_fetch(s_##T, 0); shmem_set(d_##T, s_##T[0], 0);                             \
  f_##T[1] = shmem_swap(d_##T, s_##T[0], 0);
#define AMO_OLD3(T)                                                                             \
  f_##T[0] = shmem_cswap(d_##T, s_##T[0], s_##T[1], 0); f_##T[1] = shmem_finc(d_##T, 0);       \
  shmem_inc(d_##T, 0); f_##T[2] = shmem_fadd(d_##T, s_##T[0], 0); shmem_add(d_##T, s_##T[0], 0);

#define COLL(T)                                                                                 \
  rc |= shmem_alltoall(team, d_##T, s_##T, 1);                                                 \
  rc |= shmem_alltoalls(team, d_##T, s_##T, 2, 2, 1);                                          \
  rc |= shmem_broadcast(team, d_##T, s_##T, 1, 0);                                             \
  rc |= shmem_collect(team, d_##T, s_##T, 1);                                                  \
  rc |= shmem_fcollect(team, d_##T, s_##T, 1);

#define RED_BIT(T)                                                                              \
  rc |= shmem_and_reduce(team, d_##T, s_##T, 1); rc |= shmem_or_reduce(team, d_##T, s_##T, 1); \
  rc |= shmem_xor_reduce(team, d_##T, s_##T, 1);
#define RED_MINMAX(T)                                                                           \
  rc |= shmem_max_reduce(team, d_##T, s_##T, 1); rc |= shmem_min_reduce(team, d_##T, s_##T, 1);
#define RED_ARITH(T)                                                                            \
  rc |= shmem_sum_reduce(team, d_##T, s_##T, 1); rc |= shmem_prod_reduce(team, d_##T, s_##T, 1);

#define P2P_FORMS(T, f)                                                                         \
  shmem_##f##_all(d_##T, 2, status, SHMEM_CMP_EQ, s_##T[0]);                                   \
  n += shmem_##f##_any(d_##T, 2, status, SHMEM_CMP_EQ, s_##T[0]);                              \
  n += shmem_##f##_some(d_##T, 2, idx, status, SHMEM_CMP_EQ, s_##T[0]);                        \
  shmem_##f##_all_vector(d_##T, 2, status, SHMEM_CMP_EQ, s_##T);                               \
  n += shmem_##f##_any_vector(d_##T, 2, NULL, SHMEM_CMP_EQ, s_##T);                            \
  n += shmem_##f##_some_vector(d_##T, 2, idx, NULL, SHMEM_CMP_EQ, s_##T);
#define P2P(T)                                                                                  \
  shmem_wait_until(d_##T, SHMEM_CMP_NE, s_##T[0]); rc |= shmem_test(d_##T, SHMEM_CMP_GE, s_##T[0]); \
  P2P_FORMS(T, wait_until) P2P_FORMS(T, test)

size_t exercise(shmem_ctx_t ctx, shmem_team_t team);
size_t exercise(shmem_ctx_t ctx, shmem_team_t team) {
  int rc = 0;
  size_t n = 0;
  RMA_TYPES(RMA)
  AMO_EXT_TYPES(AMO_EXT)
  AMO_STD_TYPES(AMO_STD)
  AMO_BIT_TYPES(AMO_BIT)
  AMO_OLD5_TYPES(AMO_OLD5)
  AMO_OLD3_TYPES(AMO_OLD3)
  RMA_TYPES(COLL)
  RED_BIT_TYPES(RED_BIT)
  RED_MINMAX_TYPES(RED_MINMAX)
  RED_ARITH_TYPES(RED_ARITH)
  P2P_TYPES(P2P)
  return n + (size_t)rc;
}

int main(int argc, char **argv) {
  (void)argv;
  /* never true when the script runs it (it does not): the calls only have to link */
  if (argc > 1000)
    return (int)exercise(SHMEM_CTX_DEFAULT, SHMEM_TEAM_WORLD);
  return 0;
}
