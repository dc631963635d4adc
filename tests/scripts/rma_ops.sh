#!/usr/bin/env bash
# rma_ops.sh — the one-sided C API (waitio_rma.h) between every pair of processes, all bytes and
# totals checked by tests/progs/rma_ops.c (heap/user/data windows, put/get in every form, atomics
# with exact totals, signals, remote calls, strided, wait_until, refused accesses):
#   2 processes as one PB                          (default transports: heap through memory)
#   3 processes as two PBs (2 + 1) over tcp        (every operation as frames)
#   5 processes as three PBs (2 + 2 + 1)           (default transports)
#   3 processes, the target's own checks           (WAITIO_RMA_TEST_NO_ORIGIN_CHECKS=1, and
#                                                   WAITIO_RMA_DIRECT=0: frames over shm rings;
#                                                   WAITIO_PROGRESS_THREAD=0: served in calls only)
#   3 processes with WAITIO_SINGLE_COPY=1          (user and data windows by process_vm_*)
#   2 processes as two PBs over files              (WAITIO_TRANSPORTS=file)
# With WAITIO_TEST_TRANSPORTS=ucx (mp.rma_ops.ucx) only: 2 processes over ucx, RDMA checked.
# PBs are started with waitio-oshrun inside waitiorun (t_job).
# timeout: 150
set -uo pipefail
source "$(dirname "$0")/lib.sh"
t_require_progs rma_ops
run=$WAITIO_BUILD_DIR/tools/waitio-oshrun
[ -x "$run" ] || t_fail "$run is missing"
P=$TEST_PROGS/rma_ops
seed=${WAITIO_TEST_SEED:-$RANDOM}
t_log "seed $seed"
args=(--seed "$seed" --alarm 50)

check() { # check NAME NPROCS: the verdict line
  t_expect "$1" "^rma_ops ok: $2 processes, phases ABCDEFGHIJ" "verdict of group rank 0"
}
# paths NAME: "mapped copy frames" summed over the processes (their finalize lines, WAITIO_LOG=debug)
paths() {
  sed -n 's/.*one-sided: \([0-9]*\) operations on mapped memory, \([0-9]*\) by single copy, \([0-9]*\) as frames.*/\1 \2 \3/p' \
    "$(t_out "$1")" | awk '{m += $1; c += $2; f += $3; n++} END {print m + 0, c + 0, f + 0, n + 0}'
}
if [ "${WAITIO_TEST_TRANSPORTS:-}" = ucx ]; then
  # mp.rma_ops.ucx: 2 processes over UCX (UCX_TLS from the test's environment), the heap and user
  # windows' puts, gets and atomics over UCX's RMA (rdma.c), and every phase: E and J (remote
  # calls with 200 kB arguments and replies, as frames) stalled in an earlier session, before one
  # active message was capped at one UCX fragment (ucx.c, UCX_AM_MAX); they pass since.
  t_run_job ucx 60 WAITIO_LOG=debug -- "$run" -np 2 "$P" "${args[@]}" --phases ABCDEFGHIJ --expect-nprocs 2
  t_expect ucx "^rma_ops ok: 2 processes, phases ABCDEFGHIJ" "verdict of group rank 0"
  rdma=$(sed -n 's/.*one-sided: .* as frames, \([0-9]*\) over RDMA.*/\1/p' "$(t_out ucx)" | awk '{s += $1} END {print s + 0}')
  t_log "ucx: $rdma operations over RDMA"
  [ "$rdma" -gt 200 ] || t_fail "ucx: expected the heap's puts, gets and atomics over RDMA ($rdma)"
  t_pass "2 processes over ucx, phases ABCDEFGHIJ, $rdma operations over RDMA"
fi
t_run_job one-pb 60 -- "$run" -np 2 "$P" "${args[@]}" --expect-nprocs 2
check one-pb 2
t_run_job tcp-2pb 60 WAITIO_TRANSPORTS=tcp WAITIO_LOG=debug -- "$run" -np 2 "$P" "${args[@]}" : -- "$run" -np 1 "$P" "${args[@]}"
check tcp-2pb 3
read -r m c f n <<<"$(paths tcp-2pb)"
t_log "tcp: $m operations on mapped memory (each on itself), $c by single copy, $f as frames ($n processes)"
[ "$n" = 3 ] && [ "$c" = 0 ] && [ "$f" -gt 1000 ] || t_fail "tcp: expected frames only (mapped $m, copy $c, frames $f)"
t_run_job five-3pb 80 -- "$run" -np 2 "$P" "${args[@]}" : -- "$run" -np 2 "$P" "${args[@]}" : \
  -- "$run" -np 1 "$P" "${args[@]}" --expect-nprocs 5
check five-3pb 5
t_run_job target-checks 60 WAITIO_RMA_TEST_NO_ORIGIN_CHECKS=1 WAITIO_RMA_DIRECT=0 WAITIO_PROGRESS_THREAD=0 WAITIO_LOG=info \
  -- "$run" -np 3 "$P" "${args[@]}"
check target-checks 3
t_expect target-checks "reporting a refused operation .*one-sided access outside" "the target logs what it refused"
t_run_job single-copy 60 WAITIO_SINGLE_COPY=1 WAITIO_LOG=debug -- "$run" -np 3 "$P" "${args[@]}"
check single-copy 3
read -r m c f n <<<"$(paths single-copy)"
t_log "single copy: $m operations on mapped memory, $c by single copy (the user and data windows' puts and gets: 4 per process), $f as frames (calls, atomics)"
[ "$m" -gt 1000 ] && [ "$c" -ge 12 ] || t_fail "single copy: expected mapped heap and single copy (mapped $m, copy $c)"
if [ -z "${WAITIO_TEST_TRANSPORTS:-}" ]; then
  mkdir -p "$T_DIR/scratch"
  t_run_job files 80 WAITIO_TRANSPORTS=file WAITIO_SCRATCH_DIR="$T_DIR/scratch" \
    -- "$run" -np 1 "$P" "${args[@]}" : -- "$run" -np 1 "$P" "${args[@]}"
  check files 2
fi
t_pass "1, 2 and 3 PBs; shm, tcp, file; target checks; single copy"
