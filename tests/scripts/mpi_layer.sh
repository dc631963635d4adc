#!/usr/bin/env bash
# mpi_layer.sh — the conversion layer and collectives across an Open MPI PB (2 ranks) and an
# MPICH PB (3 ranks), each program linked with its own MPI's adapter: every function against
# the PB's real MPI, universe results against computed values, hierarchical vs flat; then again
# with PBs of 2 and 2 (hierarchical allreduce between processes of the same local rank).
# timeout: 360
set -euo pipefail
dir=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill -9 -- "-$p" 2>/dev/null || kill -9 "$p" 2>/dev/null || true; done; rm -rf "$dir"; }
trap cleanup EXIT
port=$(python3 "$(dirname "$0")/free_port.py")
export WAITIO_KEY=layer-$(od -An -tx8 -N16 /dev/urandom | tr -d ' \n') WAITIO_NPB=2 WAITIO_MASTER_PORT=$port WAITIO_MASTER_HOST=127.0.0.1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
count=${MPI_LAYER_COUNT:-1048576}
WAITIO_PBID=0 setsid timeout 220 mpirun.openmpi --oversubscribe -np 2 "$TEST_PROGS/mpi_layer.ompi" "$count" >"$dir/pb0" 2>&1 &
pids+=($!)
WAITIO_PBID=1 setsid timeout 220 mpirun.mpich -np 3 "$TEST_PROGS/mpi_layer.mpich" "$count" >"$dir/pb1" 2>&1 &
pids+=($!)
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done
pids=()
cat "$dir/pb0" "$dir/pb1"
[ $status -eq 0 ] || { echo "FAIL: a PB failed"; exit 1; }
grep -q "mpi_layer PB 0: ok (5 universe processes" "$dir/pb0" || { echo "FAIL: PB 0 did not report ok"; exit 1; }
grep -q "mpi_layer PB 1: ok (5 universe processes" "$dir/pb1" || { echo "FAIL: PB 1 did not report ok"; exit 1; }
# PBs of equal size: hierarchical allreduce pairs the processes of the same local rank
port=$(python3 "$(dirname "$0")/free_port.py")
export WAITIO_MASTER_PORT=$port
WAITIO_PBID=0 setsid timeout 150 mpirun.openmpi --oversubscribe -np 2 "$TEST_PROGS/mpi_layer.ompi" 4096 >"$dir/eq0" 2>&1 &
pids+=($!)
WAITIO_PBID=1 setsid timeout 150 mpirun.mpich -np 2 "$TEST_PROGS/mpi_layer.mpich" 4096 >"$dir/eq1" 2>&1 &
pids+=($!)
for p in "${pids[@]}"; do wait "$p" || status=1; done
pids=()
cat "$dir/eq0" "$dir/eq1"
[ $status -eq 0 ] || { echo "FAIL: a PB of the equal-size run failed"; exit 1; }
grep -q "mpi_layer PB 0: ok (4 universe processes" "$dir/eq0" || { echo "FAIL: equal-size PB 0 did not report ok"; exit 1; }
echo PASS
