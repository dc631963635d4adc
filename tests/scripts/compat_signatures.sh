#!/usr/bin/env bash
# compat_signatures.sh — the original WaitIO's own signatures (issue 28, docs/mpi-layer.md "The
# original's signatures"), across two separately launched PBs, an Open MPI PB of 2 and an MPICH
# PB of 1:
#   - C (tests/progs/compat_signatures.c): waitio_mpi_gather/allgather with the original's short
#     lists and their `_f` forms, WAITIO_MPI_Gather/Allgather (and _f) with MPI's full lists, random
#     counts, every byte checked; waitio_finalize_f with its argument in read-only memory;
#   - Fortran: the Open MPI PB runs compat_signatures_f.f90 (include 'waitio_mpif.h', external
#     calls), the MPICH PB fortran_mod_compat.f90 (use waitio), the same calls in the same order,
#     each ending with `call waitio_finalize_f(1000)` (a literal: writing through it crashed).
# timeout: 60
set -uo pipefail
source "$(dirname "$0")/lib.sh"
t_require_progs compat_signatures compat_signatures_f.ompi fortran_mod_compat.mpich
seed=$((RANDOM * 32768 + RANDOM))
t_log "seed $seed"

t_run_job c 40 -- mpirun.openmpi --oversubscribe -np 2 "$TEST_PROGS/compat_signatures" "$seed" \
  : -- mpirun.mpich -np 1 "$TEST_PROGS/compat_signatures" "$seed"
[ "$(grep -c '^compat_signatures [0-2]: ok (3 processes' "$(t_out c)")" = 3 ] \
  || t_fail "C: not every process reported ok"
t_reject c 'waitio_finalize_f:' "a finalize failure"

t_run_job fortran 40 -- mpirun.openmpi --oversubscribe -np 2 "$TEST_PROGS/compat_signatures_f.ompi" \
  : -- mpirun.mpich -np 1 "$TEST_PROGS/fortran_mod_compat.mpich"
[ "$(grep -c '^compat_signatures_f [01]: errors 0, processes 3' "$(t_out fortran)")" = 2 ] \
  || t_fail "Fortran (waitio_mpif.h): not both Open MPI processes reported errors 0"
t_expect fortran '^fortran_mod_compat 2: errors 0, processes 3' "the module program's verdict"
t_reject fortran 'waitio_finalize_f:' "a finalize failure"
t_pass "original short gather/allgather lists (C, _f, waitio_mpif.h, module) and MPI's full lists, bytes checked; waitio_finalize_f(1000) with a literal"
