#!/usr/bin/env bash
# shmem_mpi.sh — one OpenSHMEM job over separately launched MPI jobs of different implementations:
# tests/osh/mpi_shmem_hybrid.c built with waitio-oshcc over mpicc.openmpi and over mpicc.mpich,
# run as an Open MPI PB (2 processes) and an MPICH PB (3 processes) through waitiorun: MPI
# collectives inside each PB, OpenSHMEM RMA/atomics/signals/collectives across the 5 PEs; globals
# symmetric within a PB only (another executable). Default transports and tcp.
# timeout: 150
set -uo pipefail
source "$(dirname "$0")/lib.sh"
command -v mpicc.openmpi >/dev/null && command -v mpicc.mpich >/dev/null || t_fail "mpicc.openmpi and mpicc.mpich are needed"
oshcc=$WAITIO_BUILD_DIR/tools/waitio-oshcc
src=$WAITIO_SOURCE_DIR/tests/osh/mpi_shmem_hybrid.c
san=$(t_sanitize_flags)
for m in openmpi mpich; do
  # shellcheck disable=SC2086
  WAITIO_OSHCC_CC=mpicc.$m "$oshcc" -std=c11 -O2 -Wall -Wextra -Werror $san "$src" -o "$T_DIR/hybrid.$m" \
    >"$T_DIR/build.$m.log" 2>&1 || { cat "$T_DIR/build.$m.log"; t_fail "building the hybrid program with mpicc.$m"; }
done
ompi=(mpirun.openmpi --oversubscribe -np 2 "$T_DIR/hybrid.openmpi")
mpich=(mpirun.mpich -np 3 "$T_DIR/hybrid.mpich")
t_run_job mixed 80 -- "${ompi[@]}" : -- "${mpich[@]}"
t_expect mixed "^hybrid ok: 5 PEs"
t_run_job mixed-tcp 80 WAITIO_TRANSPORTS=tcp -- "${mpich[@]}" : -- "${ompi[@]}"
t_expect mixed-tcp "^hybrid ok: 5 PEs"
t_pass "an Open MPI PB and an MPICH PB in one OpenSHMEM job"
