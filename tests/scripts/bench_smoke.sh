#!/usr/bin/env bash
# bench_smoke.sh — waitio-bench's WaitIO modes still run end to end, with tiny sizes and few
# iterations: pairs with 1 PB of 4 processes and with 2 PBs of 2 (every pair at once), streaming
# and ping-pong between 2 PBs; each must exit 0 and print one CSV row per size (the benchmark
# checks the bytes itself and exits non-zero on a wrong one). An instance that cannot be paired
# (1 PB of 3 processes) must be refused with exit status 2 and a message.
# timeout: 60
set -uo pipefail
source "$(dirname "$0")/lib.sh"
B=$WAITIO_BUILD_DIR/bench/waitio-bench
[ -x "$B" ] || t_fail "$B is missing (cmake --build $WAITIO_BUILD_DIR)"
opts=(--csv --sizes 8,4K,256K --iters 20 --warmup 2 --time-limit 20)

# expect_rows NAME BENCHMARK PAIRS: a CSV row for each size, with that pair count
expect_rows() {
  local size
  t_expect "$1" '^benchmark,bytes,iterations,pairs,half_rtt_us,max_half_rtt_us,mb_per_s$' "CSV header"
  for size in 8 4096 262144; do
    t_expect "$1" "^$2,$size,[0-9]+,$3,[0-9.]*,[0-9.]*,[0-9.]+\$" "row of $size bytes"
  done
}

t_run_job pairs1 25 -- "$B" pairs --procs 4 "${opts[@]}"
expect_rows pairs1 waitio-pairs 2
t_run_job pairs2 25 -- "$B" pairs --procs 2 "${opts[@]}" : -- "$B" pairs --procs 2 "${opts[@]}"
expect_rows pairs2 waitio-pairs 2
t_run_job stream 25 -- "$B" stream "${opts[@]}" --window 4 : -- "$B" stream "${opts[@]}" --window 4
expect_rows stream waitio-stream 1
t_run_job pingpong 25 -- "$B" pingpong "${opts[@]}" : -- "$B" pingpong "${opts[@]}"
expect_rows pingpong waitio-pingpong 1

rc=0
t_job odd 25 -- "$B" pairs --procs 3 "${opts[@]}" || rc=$?
[ "$rc" = 2 ] || { t_show odd; t_fail "pairs with 1 PB of 3 processes exited $rc, expected 2"; }
t_expect odd 'run as 1 PB of an even number of processes' "the refusal's reason"
t_pass "pairs (1 PB, 2 PBs), stream and ping-pong ran; an odd PB is refused"
