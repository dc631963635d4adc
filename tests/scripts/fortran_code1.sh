#!/usr/bin/env bash
# fortran_code1.sh — seed 000's Code-1 listing compiled as printed (fixed form, implicit REAL*8,
# include 'mpif.h' then 'waitio_mpif.h', undeclared WAITIO_SOLVER_COMM) as PB 0 with Open MPI,
# sending (time, source) to the heads of an MPICH PB and an Open MPI PB. The receivers check 5
# pairs each and finalize; Code-1 must then leave its endless loop through "goto 100".
# timeout: 90
set -euo pipefail
source "$(dirname "$0")/pbs.inc"
pbs_instance 3
work=$PBS_DIR/code1
mkdir -p "$work"
printf '1000 1.0 0.05 100.0\n' >"$work/s1.dat"
cd "$work"
pbs_start 0 60 mpirun.openmpi --oversubscribe -np 1 "$TEST_PROGS/fortran_code1.ompi"
cd - >/dev/null
pbs_start 1 60 mpirun.mpich -np 2 "$TEST_PROGS/fortran_code1_receiver.mpich" 5
pbs_start 2 60 mpirun.openmpi --oversubscribe -np 2 "$TEST_PROGS/fortran_code1_receiver.ompi" 5
start=$(date +%s)
pbs_wait || { echo "FAIL: a PB failed"; exit 1; }
elapsed=$(( $(date +%s) - start ))
pbs_expect 1 "receiver (PB head 1): 5 pairs from Code-1 checked"
pbs_expect 2 "receiver (PB head 2): 5 pairs from Code-1 checked"
pbs_expect 0 "##Code-1: a receiver finished; stopping"
[ "$(wc -l <"$work/s1.out")" -ge 5 ] || { echo "FAIL: s1.out has fewer than 5 lines"; exit 1; }
# Code-1 must notice the finalized receivers at its next send, not after a finalize timeout
[ "$elapsed" -lt 5 ] || { echo "FAIL: took ${elapsed} s to stop"; exit 1; }
echo "PASS (${elapsed} s)"
