#!/usr/bin/env bash
# mp_scale.sh — 2 PBs of 32 processes each (Open MPI and MPICH), 64 processes oversubscribed on
# the test machine's cores: start-up, a ring of checked messages in both directions around the
# 64-process universe, finalize. Prints the start-up time (max over processes of the time in
# waitio_init, gathered at universe rank 0 through WaitIO messages) as startup_seconds=...
# Override the size with SCALE_NP=<processes per PB>.
# timeout: 180
set -uo pipefail
source "$(dirname "$0")/lib.sh"
t_require_progs mpi_scale.ompi mpi_scale.mpich
np=${SCALE_NP:-32}
t_run_job scale 165 -- mpirun.openmpi --oversubscribe -np "$np" "$TEST_PROGS/mpi_scale.ompi" \
    --expect-procs $((2 * np)) --alarm 160 : \
  -- mpirun.mpich -np "$np" "$TEST_PROGS/mpi_scale.mpich" --expect-procs $((2 * np)) --alarm 160
t_expect scale "mpi_scale ok: $((2 * np)) processes in 2 PBs"
t_expect scale 'startup_seconds=[0-9.]+'
grep -E 'startup_seconds=|startup_mean' "$(t_out scale)"
t_pass "$(grep -oE 'startup_seconds=[0-9.]+' "$(t_out scale)")"
