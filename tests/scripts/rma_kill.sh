#!/usr/bin/env bash
# rma_kill.sh — a member killed while the others read from it (tests/progs/rma_kill.c): every
# survivor's one-sided operations on it fail with WAITIO_ERR_PEER within 10 s (none hangs), later
# ones at once, and the survivors keep working with each other; the fire-and-forget call the
# victim sent right before SIGKILL still runs on every survivor. Processes are started by hand
# (waitio-oshrun would stop them all), over: the default transports (frames over shm rings or
# its progress thread serving while the victim computes), tcp, and shm with WAITIO_RMA_DIRECT=0.
# timeout: 120
set -uo pipefail
source "$(dirname "$0")/lib.sh"
t_require_progs rma_kill

# run_case NAME NPROCS VICTIM [VAR=VAL...]
run_case() {
  local name=$1 np=$2 victim=$3 r
  shift 3
  t_instance 1
  for ((r = 0; r < np; r++)); do
    t_start "$name.$r" 50 env "$@" WAITIO_PBID=0 WAITIO_PB_RANK=$r WAITIO_PB_SIZE=$np \
      "$TEST_PROGS/rma_kill" --victim "$victim" --limit 10
  done
  for ((r = 0; r < np; r++)); do
    if [ "$r" = "$victim" ]; then
      t_expect_rc "$name.$r" 137
      continue
    fi
    t_expect_rc "$name.$r" 0
    t_expect "$name.$r" "^rma_kill ok: $r saw WAITIO_ERR_PEER" "survivor $r's verdict"
    t_log "$name: $(grep '^rma_kill ok' "$(t_out "$name.$r")")"
  done
}
run_case default 3 2
run_case tcp 3 0 WAITIO_TRANSPORTS=tcp
run_case frames 4 1 WAITIO_RMA_DIRECT=0 WAITIO_PROGRESS_THREAD=0
t_pass "survivors failed in bounded time and kept working"
