#!/usr/bin/env bash
# mpi_types.sh — derived datatypes, user-defined operations, IN_PLACE forms and Allgatherv,
# Alltoallv, Reduce_scatter(_block), Scan, Exscan of the conversion layer, across an Open MPI PB
# (2 ranks) and an MPICH PB (3 ranks): every result checked byte for byte against each PB's MPI
# (tests/progs/mpi_types.c: its datatype engine and reductions for the universe, the same MPI
# routine on its own processes); then the Fortran module's and _f forms
# (tests/progs/fortran_mod_types.f90) with an Open MPI PB of 2 and an MPICH PB of 1.
# timeout: 120
set -uo pipefail
source "$(dirname "$0")/lib.sh"
t_require_progs mpi_types.ompi mpi_types.mpich fortran_mod_types.ompi fortran_mod_types.mpich
cases=${MPI_TYPES_CASES:-2}
t_run_job c 90 -- mpirun.openmpi --oversubscribe -np 2 "$TEST_PROGS/mpi_types.ompi" "$cases" : \
  -- mpirun.mpich -np 3 "$TEST_PROGS/mpi_types.mpich" "$cases"
for pb in 0 1; do
  t_expect c "mpi_types PB $pb: ok \\(5 universe processes" "PB $pb's verdict"
done
t_log "ok: C, every routine on derived types, user operations, in place; $cases cases each"
t_run_job f 60 -- mpirun.openmpi --oversubscribe -np 2 "$TEST_PROGS/fortran_mod_types.ompi" : \
  -- mpirun.mpich -np 1 "$TEST_PROGS/fortran_mod_types.mpich"
[ "$(grep -c 'fortran_mod_types PB [01] rank [01]: errors 0 (3 processes)' "$(t_out f)")" = 3 ] \
  || t_fail "not every Fortran process reported errors 0"
t_log "ok: Fortran module and _f forms"
t_pass
