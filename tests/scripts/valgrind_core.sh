#!/usr/bin/env bash
# valgrind_core.sh — multi-process runs under valgrind memcheck: a 3-PB ring of 30 rounds (eager and
# rendezvous sizes, 5 processes), every process under valgrind
# with --error-exitcode; any invalid access, uninitialised use or definite leak fails the test.
# timeout: 300
set -euo pipefail
command -v valgrind >/dev/null || { echo "SKIP: valgrind is not installed"; exit 0; }
source "$(dirname "$0")/pbs.inc"
VG=(valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite
    --show-leak-kinds=definite --track-fds=no)
pbs_instance 3
pbs_start 0 250 env WAITIO_PB_RANK=0 WAITIO_PB_SIZE=1 "${VG[@]}" "$TEST_PROGS/core_ring" 30 120
for pb in 1 2; do
  for r in 0 1; do
    WAITIO_PBID=$pb WAITIO_PB_RANK=$r WAITIO_PB_SIZE=2 setsid timeout 250 "${VG[@]}" \
      "$TEST_PROGS/core_ring" 30 120 >"$PBS_DIR/pb$pb.$r" 2>&1 &
    PBS_PIDS+=($!)
  done
done
pbs_wait || { echo "FAIL: errors under valgrind (exit status 99 = memcheck errors)"; exit 1; }
pbs_expect 0 "core_ring ok: 5 processes, 30 rounds"
grep -q "==[0-9]*==" "$PBS_DIR"/pb* && { echo "FAIL: valgrind reported something"; exit 1; }
echo PASS
