#!/usr/bin/env bash
# fortran_module.sh — the Fortran module `use waitio` (src/mpi/waitio_module.f90): the program
# fortran_mod_exchange (buffers of many types and ranks through every routine, built without
# -fallow-argument-mismatch) runs as an Open MPI PB of 2 and an MPICH PB of 1; then the explicit
# interfaces must turn mistakes into compile errors: a call without ierr and a REAL communicator
# fail to compile with the module, while the same call through include 'waitio_mpif.h' compiles
# (the check is the module's).
# timeout: 90
set -uo pipefail
source "$(dirname "$0")/lib.sh"
t_require_progs fortran_mod_exchange.ompi fortran_mod_exchange.mpich
t_run_job exchange 60 -- mpirun.openmpi --oversubscribe -np 2 "$TEST_PROGS/fortran_mod_exchange.ompi" : \
  -- mpirun.mpich -np 1 "$TEST_PROGS/fortran_mod_exchange.mpich"
[ "$(grep -c 'fortran_mod_exchange PB [01] rank [01]: errors 0 (3 processes)' "$(t_out exchange)")" = 3 ] \
  || t_fail "not every process reported errors 0"
t_log "ok: use waitio, 3 processes over 2 PBs and 2 MPIs, every routine, values checked"

moddir=$(ls -d "$WAITIO_BUILD_DIR"/fortran/GNU-* 2>/dev/null | head -1)
[ -f "$moddir/waitio.mod" ] || t_fail "no waitio.mod under $WAITIO_BUILD_DIR/fortran"
fc=${FC:-gfortran}
compile() { # NAME SOURCE-TEXT: compiles (no link) with the module; returns the compiler's status
  printf '%s\n' "$2" >"$T_DIR/$1.f90"
  "$fc" -c -I"$moddir" -I"$WAITIO_SOURCE_DIR/include" "$T_DIR/$1.f90" -o "$T_DIR/$1.o" -J"$T_DIR" >"$T_DIR/$1.log" 2>&1
}
compile ok 'program p
  use waitio
  implicit none
  integer :: comm, ierr
  call WAITIO_CREATE_UNIVERSE(comm, ierr)
  call WAITIO_MPI_Barrier(comm, ierr)
end program p' || { cat "$T_DIR/ok.log"; t_fail "a correct program does not compile with the module"; }
if compile no_ierr 'program p
  use waitio
  implicit none
  integer :: comm, ierr
  call WAITIO_CREATE_UNIVERSE(comm, ierr)
  call WAITIO_MPI_Barrier(comm)
end program p'; then t_fail "a call without ierr compiled with the module"; fi
grep -qi 'missing actual argument' "$T_DIR/no_ierr.log" || { cat "$T_DIR/no_ierr.log"; t_fail "no 'missing actual argument' error"; }
if compile real_comm 'program p
  use waitio
  implicit none
  integer :: ierr
  real(8) :: comm
  call WAITIO_CREATE_UNIVERSE(comm, ierr)
end program p'; then t_fail "a REAL*8 communicator compiled with the module"; fi
printf '%s\n' '      program p' "      include 'waitio_mpif.h'" '      call WAITIO_MPI_Barrier(icomm)' \
  '      end' >"$T_DIR/legacy.f"
"$fc" -c -I"$WAITIO_SOURCE_DIR/include" "$T_DIR/legacy.f" -o "$T_DIR/legacy.o" >"$T_DIR/legacy.log" 2>&1 \
  || { cat "$T_DIR/legacy.log"; t_fail "the include form no longer compiles"; }
t_log "ok: missing ierr and a REAL communicator are compile errors with the module; the include form is unchanged"
t_pass
