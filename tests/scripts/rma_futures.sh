#!/usr/bin/env bash
# rma_futures.sh — the futures of waitio_rma.h (tests/progs/rma_futures.c: chains of 1,000 then,
# when_all over put/get/call/atomic, min/max/fp-add atomics with exact totals, non-blocking
# bcast/reduce/barrier, distributed objects, edges (failed sources, timeouts, wrapped requests); every value that crossed processes checked):
#   2 processes as one PB                    (default transports: heap mapped, CPU atomics)
#   3 processes as two PBs (2 + 1) over tcp  (every operation as frames)
#   3 processes as one PB, WAITIO_RMA_DIRECT=0 (frames over shm rings, served by the target)
# and a member killed while the others' futures depend on it (started by hand, as rma_kill.sh):
# every dependent future fails with WAITIO_ERR_PEER within 10 s, over shm and over tcp.
# timeout: 120
set -uo pipefail
source "$(dirname "$0")/lib.sh"
t_require_progs rma_futures
run=$WAITIO_BUILD_DIR/tools/waitio-oshrun
[ -x "$run" ] || t_fail "$run is missing"
P=$TEST_PROGS/rma_futures
args=(--alarm 50)

check() { # check NAME NPROCS
  t_expect "$1" "^rma_futures ok: $2 processes, phases ABCDEF" "verdict of rank 0"
}
t_run_job one-pb 60 -- "$run" -np 2 "$P" "${args[@]}" --expect-nprocs 2
check one-pb 2
t_run_job tcp-2pb 60 WAITIO_TRANSPORTS=tcp -- "$run" -np 2 "$P" "${args[@]}" : -- "$run" -np 1 "$P" "${args[@]}"
check tcp-2pb 3
t_run_job frames 60 WAITIO_RMA_DIRECT=0 -- "$run" -np 3 "$P" "${args[@]}"
check frames 3

# kill_case NAME NPROCS VICTIM [VAR=VAL...]: the victim dies inside the first call made on it, a
# second after it arrived, so every survivor's futures on it are pending then
kill_case() {
  local name=$1 np=$2 victim=$3 r
  shift 3
  t_instance 1
  for ((r = 0; r < np; r++)); do
    t_start "$name.$r" 50 env "$@" WAITIO_PBID=0 WAITIO_PB_RANK=$r WAITIO_PB_SIZE=$np \
      "$P" --kill "$victim" --limit 10 --alarm 45
  done
  for ((r = 0; r < np; r++)); do
    if [ "$r" = "$victim" ]; then
      t_expect_rc "$name.$r" 137
      continue
    fi
    t_expect_rc "$name.$r" 0
    t_expect "$name.$r" "^rma_futures kill ok: $r saw WAITIO_ERR_PEER" "survivor $r's verdict"
    t_log "$name: $(grep '^rma_futures kill ok' "$(t_out "$name.$r")")"
  done
}
kill_case kill-shm 3 2
kill_case kill-tcp 3 1 WAITIO_TRANSPORTS=tcp
t_pass "chains, when_all, new atomics, non-blocking collectives, objects over shm/tcp/frames; futures fail when a peer dies"
