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

# one NAME LAYOUT [VAR=VAL...]: LAYOUT "4" (one PB) or "2+2" (two PBs)
one() {
  local name=$1 layout=$2
  shift 2
  t_oshmem_job "$name" 60 "$layout" "$TEST_PROGS/shmem_ctx" "$@"
  t_expect "$name" "^shmem_ctx ok: $T_PES PEs" "the verdict"
  t_reject "$name" "not run" "the thread cases ran"
}
one shm-2 2
one shm-4 4
one tcp-2 1+1 WAITIO_TRANSPORTS=tcp
one tcp-4 2+2 WAITIO_TRANSPORTS=tcp
one frames-2 2 WAITIO_RMA_DIRECT=0 WAITIO_PROGRESS_THREAD=0
t_pass "contexts on 2 and 4 PEs: one PB (shm), two PBs (tcp), frames only"
