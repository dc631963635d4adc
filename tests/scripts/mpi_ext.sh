#!/usr/bin/env bash
# mpi_ext.sh — the conversion layer's Sendrecv(_replace), probes, Get_count/Get_elements,
# Waitany/Waitsome/Testany/Testall/Testsome, Comm_split/dup/create_group/free with groups, and
# Ibcast/Iallreduce/Ibarrier (tests/progs/mpi_ext.c) across an Open MPI PB and an MPICH PB (2
# processes each), compared byte for byte with the same calls of MPI itself in one Open MPI job
# of 4: every buffer, status, new rank and size, completion index and WAITIO_MPI_UNDEFINED result.
# Random counts, tags, roots and split keys (a new seed each run, printed). The WaitIO job runs
# twice: collectives on the split communicators hierarchical wherever possible
# (WAITIO_COLL_HIER=1: each PB's part through its MPI) and flat (=0). Then the Fortran module
# forms and some _f forms (tests/progs/fortran_mod_ext.f90) over 2 PBs and 2 MPIs, values checked.
# timeout: 120
set -uo pipefail
source "$(dirname "$0")/lib.sh"
t_require_progs mpi_ext.ompi mpi_ext.mpich
seed=${MPI_EXT_SEED:-$(od -An -tu4 -N4 /dev/urandom | tr -d ' ')}
t_log "seed $seed (MPI_EXT_SEED=$seed reruns this case)"

t_start ref 60 mpirun.openmpi --oversubscribe -np 4 "$TEST_PROGS/mpi_ext.ompi" ref "$seed" "$T_DIR/ref"
t_wait ref
[ "$(t_rc ref)" = 0 ] || { t_show ref; t_fail "the reference MPI job failed"; }

compare() { # RUN: every process's record equals the reference's
  local i
  for i in 0 1 2 3; do
    [ -s "$T_DIR/$1.$i" ] || t_fail "$1: no record of universe rank $i"
    if ! cmp -s "$T_DIR/ref.$i" "$T_DIR/$1.$i"; then
      diff "$T_DIR/ref.$i" "$T_DIR/$1.$i" | cut -c1-300 | head -20
      t_fail "$1: universe rank $i differs from MPI's rank $i (lines above: < MPI, > WaitIO)"
    fi
  done
  t_log "ok: $1 equals MPI byte for byte ($(cat "$T_DIR"/ref.? | wc -c) bytes of records)"
}

for hier in 1 0; do
  t_run_job "wio_hier$hier" 60 WAITIO_COLL_HIER=$hier \
    -- mpirun.openmpi --oversubscribe -np 2 "$TEST_PROGS/mpi_ext.ompi" wio "$seed" "$T_DIR/wio_hier$hier" : \
    -- mpirun.mpich -np 2 "$TEST_PROGS/mpi_ext.mpich" wio "$seed" "$T_DIR/wio_hier$hier"
  compare "wio_hier$hier"
done

if [ -x "$TEST_PROGS/fortran_mod_ext.ompi" ] && [ -x "$TEST_PROGS/fortran_mod_ext.mpich" ]; then
  t_run_job fortran 60 -- mpirun.openmpi --oversubscribe -np 2 "$TEST_PROGS/fortran_mod_ext.ompi" : \
    -- mpirun.mpich -np 1 "$TEST_PROGS/fortran_mod_ext.mpich"
  [ "$(grep -c 'fortran_mod_ext rank [0-2]: errors 0 (3 processes)' "$(t_out fortran)")" = 3 ] \
    || t_fail "not every Fortran process reported errors 0"
  t_log "ok: the Fortran module and _f forms, 3 processes over 2 PBs and 2 MPIs"
else
  t_fail "tests/progs/fortran_mod_ext is not built (no GNU Fortran module?)"
fi
t_pass
