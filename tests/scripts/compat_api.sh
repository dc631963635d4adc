#!/usr/bin/env bash
# compat_api.sh — source compatibility with programs written for the original WaitIO (SPEC §4,
# §8): tests/progs/compat_api.c includes only waitio_mpi.h (fprintf, exit, uint64_t come from
# waitio.h), uses the library's truef or defines its own, makes PB groups, and moves data with
# the `_f` entry points from C. It is linked four ways — library truef / own truef x shared /
# static libwaitio — and the four binaries run as two 2-PB instances (one PB of each under an
# MPI launcher). Then the Fortran program calls the `_f` entry points as the original's
# modules do (Open MPI PB of 2 + MPICH PB of 1).
# timeout: 150
set -uo pipefail
source "$(dirname "$0")/lib.sh"
src=$WAITIO_SOURCE_DIR/tests/progs/compat_api.c
lib=$WAITIO_BUILD_DIR/src
cc=${CC:-cc}
flags=(-std=c11 -O1 -Wall -Wextra -Werror -I"$WAITIO_SOURCE_DIR/include" $(t_sanitize_flags))
build() { # build NAME [cc flags...] -- link flags...
  local name=$1; shift
  local cf=() lf=()
  while [ "$1" != -- ]; do cf+=("$1"); shift; done; shift
  lf=("$@")
  "$cc" "${flags[@]}" "${cf[@]}" "$src" -o "$T_DIR/$name" "${lf[@]}" >"$T_DIR/$name.build" 2>&1 \
    || { cat "$T_DIR/$name.build"; t_fail "$name does not build"; }
}
shared=(-L"$lib" -Wl,-rpath,"$lib" -lwaitio)
static=("$lib/libwaitio.a" -lcrypto -lpthread)
# a library built with the ucx transport needs UCX's libraries too (waitio.pc's Libs.private)
if nm "$lib/libwaitio.a" 2>/dev/null | grep " U ucp_" >/dev/null; then
  static+=($(pkg-config --libs ucx))
fi
build lib_shared -- "${shared[@]}"
build lib_static -- "${static[@]}"
build own_shared -DOWN_TRUEF -- "${shared[@]}"
build own_static -DOWN_TRUEF -- "${static[@]}"
# the static programs carry exactly one truef: the library's, or their own
for v in lib_static own_static; do
  n=$(nm "$T_DIR/$v" | grep -c ' T truef$')
  [ "$n" = 1 ] || t_fail "$v defines truef $n times"
done
t_log "ok: compat_api.c builds against waitio_mpi.h alone, with the library's truef and with its own, shared and static"

t_run_job shared_static 60 -- mpirun.openmpi --oversubscribe -np 2 "$T_DIR/lib_shared" : -- "$T_DIR/own_static"
t_run_job static_shared 60 -- "$T_DIR/lib_static" : -- mpirun.mpich -np 2 "$T_DIR/own_shared"
for j in shared_static static_shared; do
  [ "$(grep -c ': ok (3 processes' "$(t_out $j)")" = 3 ] || t_fail "$j: not every process reported ok"
done
t_expect shared_static 'PB 0 rank 1: ok .*truef: library'
t_expect shared_static 'PB 1 rank 0: ok .*truef: own'
t_expect static_shared 'PB 1 rank 1: ok .*truef: own'

t_require_progs fortran_f_entry.ompi fortran_f_entry.mpich
t_run_job fortran 60 -- mpirun.openmpi --oversubscribe -np 2 "$TEST_PROGS/fortran_f_entry.ompi" : \
  -- mpirun.mpich -np 1 "$TEST_PROGS/fortran_f_entry.mpich"
[ "$(grep -c 'fortran_f_entry PB .*: errors 0, PB size [12], universe 3' "$(t_out fortran)")" = 3 ] \
  || t_fail "the Fortran _f program did not report errors 0 on all 3 processes"
t_pass "truef/pbgroup/_f entry points: 4 link variants and Fortran, data checked"
