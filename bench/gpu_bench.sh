#!/usr/bin/env bash
# gpu_bench.sh BUILD_DIR [waitio-gpu-bench options...] — issue 31's two-sided GPU goals:
# waitio-gpu-bench (bench/gpu_bench.c) as 2 PBs of one process each on this host, first with the
# default transports (shm: the ipc, lat and dh cases), then with WAITIO_TRANSPORTS=tcp (the
# staged case: pipelined, then with WAITIO_GPU_PIPELINE_DEPTH=0, staged whole). Prints the "gpu_bench:" lines; exits non-zero when a run fails (a goal not met
# is printed, not a failure). Uses libcuda.so.1, or WAITIO_CUDA_LIBRARY when set (the test
# double: figures meaningless). About 10-20 s on a GPU machine.
set -uo pipefail
build=${1:?usage: gpu_bench.sh BUILD_DIR [options]}
shift
bench=$build/bench/waitio-gpu-bench
[ -x "$bench" ] || { echo "gpu_bench: $bench is not built (target gpu_bench)" >&2; exit 2; }
export WAITIO_KEY="gpu-bench-$$-$RANDOM$RANDOM-0123456789abcdef" WAITIO_NPB=2 WAITIO_MASTER_HOST=127.0.0.1
unset WAITIO_PB_RANK WAITIO_PB_SIZE
rc=0
run() { # run LABEL ENV... -- ARGS...
  local label=$1 envs=() pids=() out
  shift
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  export WAITIO_MASTER_PORT=$((20000 + RANDOM % 20000))
  out=$(mktemp)
  for pb in 0 1; do
    env WAITIO_PBID=$pb "${envs[@]}" timeout -k 3 120 "$bench" "$@" >"$out.$pb" 2>&1 &
    pids+=($!)
  done
  for i in 0 1; do wait "${pids[$i]}" || { echo "gpu_bench: $label: PB $i failed:" >&2; cat "$out.$i" >&2; rc=1; }; done
  grep -h '^gpu_bench:' "$out.0" "$out.1"
  rm -f "$out" "$out.0" "$out.1"
}
run "one host" -- --cases ipc,lat,dh "$@"
run "tcp" WAITIO_TRANSPORTS=tcp -- --cases staged "$@"
# the same staged whole (no pipeline: copy, then wire, then copy), to see what pipelining hides
run "tcp, whole" WAITIO_TRANSPORTS=tcp WAITIO_GPU_PIPELINE_DEPTH=0 -- --cases staged "$@"
exit $rc
