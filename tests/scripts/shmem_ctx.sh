#!/usr/bin/env bash
# shmem_ctx.sh — OpenSHMEM 1.5 contexts (tests/progs/shmem_ctx.c: every RMA, signal and atomic
# family on the default, serialized, private and nostore contexts with checked values, fetching
# _nbi atomics in flight together, a context's quiet completing its own operations, team
# contexts, zero-length operations with NULL pointers, SHMEM_CTX_INVALID, threads on private
# contexts and on the shared default one) on 2 and 4 PEs as one PB (the heap mapped, globals
# through WaitIO), as two separately launched PBs over tcp, and with WAITIO_RMA_DIRECT=0 (every
# operation as frames, served only inside OpenSHMEM calls).
# timeout: 90
set -uo pipefail
source "$(dirname "$0")/lib.sh"
t_require_progs shmem_ctx
run=$WAITIO_BUILD_DIR/tools/waitio-oshrun

# one NAME TOTAL-PES VAR=VAL... -- PB-SIZES...
one() {
  local name=$1 total=$2 job=() first=1 k
  shift 2
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  for k in "$@"; do
    [ $first = 1 ] || job+=(:)
    job+=(-- "$run" -np "$k" "$TEST_PROGS/shmem_ctx")
    first=0
  done
  t_run_job "$name" 60 "${envs[@]}" "${job[@]}"
  t_expect "$name" "^shmem_ctx ok: $total PEs" "the verdict"
  t_reject "$name" "not run" "the thread cases ran"
}
one shm-2 2 -- 2
one shm-4 4 -- 4
one tcp-2 2 WAITIO_TRANSPORTS=tcp -- 1 1
one tcp-4 4 WAITIO_TRANSPORTS=tcp -- 2 2
one frames-2 2 WAITIO_RMA_DIRECT=0 WAITIO_PROGRESS_THREAD=0 -- 2
t_pass "contexts on 2 and 4 PEs: one PB (shm), two PBs (tcp), frames only"
