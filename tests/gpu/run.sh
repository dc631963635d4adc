#!/usr/bin/env bash
# run.sh — the GPU tests and benchmark of issue 31 in one script, for a machine with an NVIDIA GPU
# (bench/run-device.sh calls it there, under a 240 s limit, on 16 cores):
#   1. builds what the tests need in BUILD_DIR (configures it first if it has no CMakeCache.txt;
#      `cmake --build -j<cores>` of the targets below: a no-op when BUILD_DIR is already built);
#   2. runs every tests/gpu/ci_*.sh (the CI tests, here with the real driver: WAITIO_TEST_GPU_REAL=1)
#      and every tests/gpu/real_*.sh (real-GPU-only tests: PyTorch/CuPy peers, the GPU example,
#      large sizes...), each under its "# timeout: N" (default 60 s) with WAITIO_CUDA_LIBRARY
#      unset (libcuda.so.1), printing "PASS|FAIL|SKIP <name> (<s> s)" and a failure's log tail;
#      a script exits 0 (pass), 77 (skip: e.g. no PyTorch) or anything else (fail);
#   3. prints "run.sh: N passed, M failed, K skipped" (tests not started within the time budget,
#      WAITIO_TEST_GPU_RUN_BUDGET s from the end of the build, default 150, count as failed);
#   4. runs the GPU benchmark (bench/gpu_bench.sh BUILD_DIR $WAITIO_TEST_GPU_BENCH_ARGS; with --fake
#      a short run, --rounds 3 --iters 200, on the test double: its figures mean nothing) and
#      prints its table; then the per-test lines and the summary line again.
# Exit status 0 only when no test failed and the benchmark ran (or does not exist).
#
# Usage: tests/gpu/run.sh [--fake] [BUILD_DIR]
#   --fake     here, without a GPU: the CUDA driver's test double (tests/gpu/fake_cuda.c) instead
#              (WAITIO_TEST_GPU_REAL unset, WAITIO_TEST_FAKE_CUDA set), to debug this script and the tests
#   BUILD_DIR  default: <source>/build-gpu
# Scripts name the CMake targets they need beyond the libraries in a "# targets: a b" line.
# Logs: $WAITIO_TEST_GPU_LOG_DIR (default a fresh directory under /tmp, printed).
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
fake=0
build=""
for a in "$@"; do
  case $a in
    --fake) fake=1 ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "run.sh: unknown option $a" >&2; exit 2 ;;
    *) build=$a ;;
  esac
done
build=${build:-$src/build-gpu}
cores=$(nproc 2>/dev/null || echo 4)
budget=${WAITIO_TEST_GPU_RUN_BUDGET:-150}
t0=$(date +%s)
elapsed() { echo $(($(date +%s) - t0)); }
logs=${WAITIO_TEST_GPU_LOG_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/waitio-gpu-run.XXXXXX")}
mkdir -p "$logs"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
echo "run.sh: source $src, build $build, $cores cores, logs in $logs, mode $([ $fake = 1 ] && echo fake || echo real)"

# ---- 1. build ----------------------------------------------------------------------------
scripts=()
for s in "$src"/tests/gpu/ci_*.sh "$src"/tests/gpu/real_*.sh; do [ -f "$s" ] && scripts+=("$s"); done
targets=(waitio waitio_shmem waitiorun waitio_fakecuda shmem_device)
for s in "$src"/tests/gpu/gpu_*.c; do [ -f "$s" ] && targets+=("$(basename "${s%.c}")"); done
for s in "${scripts[@]}"; do
  read -ra more <<<"$(sed -n 's/^# targets: *//p' "$s" | head -1)"
  targets+=("${more[@]}")
done
if [ ! -f "$build/CMakeCache.txt" ]; then
  ssl=() # as bench/run-device.sh: carried OpenSSL headers where the image lacks them
  if [ ! -e /usr/include/openssl/evp.h ] && [ -d "$src/.devdeps/include" ]; then
    lib=$(ls /usr/lib/x86_64-linux-gnu/libcrypto.so.3 /usr/lib64/libcrypto.so.3 2>/dev/null | head -1)
    ssl=(-DOPENSSL_INCLUDE_DIR="$src/.devdeps/include" -DOPENSSL_CRYPTO_LIBRARY="$lib")
  fi
  echo "run.sh: configuring $build"
  cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release "${ssl[@]}" >"$logs/configure.log" 2>&1 ||
    { tail -30 "$logs/configure.log"; echo "run.sh: FAILED: cmake configure"; exit 1; }
fi
known=$(cmake --build "$build" --target help 2>/dev/null)
have_target() { [ -z "$known" ] || grep -qE "(^| )$1( |$|:)" <<<"$known"; }
[ -f "$src/bench/gpu_bench.c" ] && have_target gpu_bench && targets+=(gpu_bench)
build_list=()
for t in "${targets[@]}"; do
  [ -n "$t" ] || continue
  if have_target "$t"; then build_list+=("$t"); else echo "run.sh: no target $t in $build (skipped)"; fi
done
echo "run.sh: building ${build_list[*]} (-j$cores)"
if ! cmake --build "$build" -j"$cores" --target "${build_list[@]}" >"$logs/build.log" 2>&1; then
  tail -40 "$logs/build.log"
  echo "run.sh: FAILED: the build ($logs/build.log)"
  exit 1
fi
echo "run.sh: built in $(elapsed) s"

# ---- 2. tests ----------------------------------------------------------------------------
export WAITIO_BUILD_DIR=$build WAITIO_SOURCE_DIR=$src TEST_PROGS=$build/tests/progs
unset WAITIO_CUDA_LIBRARY
if [ $fake = 1 ]; then
  unset WAITIO_TEST_GPU_REAL
  export WAITIO_TEST_FAKE_CUDA=$build/tests/libwaitio_fakecuda.so
else
  export WAITIO_TEST_GPU_REAL=1
  unset WAITIO_TEST_FAKE_CUDA
  { nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader ||
      echo "run.sh: nvidia-smi failed (no GPU?)"; } 2>&1 | sed 's/^/run.sh: GPU: /'
fi
passed=0 failed=0 skipped=0
results=()
t_tests=$(date +%s)
for s in "${scripts[@]}"; do
  name=$(basename "${s%.sh}")
  limit=$(sed -n 's/^# timeout: *\([0-9][0-9]*\).*/\1/p' "$s" | head -1)
  limit=${limit:-60}
  if [ $(($(date +%s) - t_tests)) -ge "$budget" ]; then
    line="FAIL $name (not run: the time budget of $budget s was spent)"
    failed=$((failed + 1)); results+=("$line"); echo "$line"; continue
  fi
  start=$(date +%s.%N)
  timeout --kill-after=5 "$limit" bash "$s" >"$logs/$name.log" 2>&1
  rc=$?
  secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  case $rc in
    0) line="PASS $name ($secs s)"; passed=$((passed + 1)) ;;
    77) line="SKIP $name ($secs s): $(grep -m1 -i 'skip' "$logs/$name.log" | cut -c1-150)"; skipped=$((skipped + 1)) ;;
    124|137) line="FAIL $name ($secs s): hit its limit of $limit s"; failed=$((failed + 1)) ;;
    *) line="FAIL $name ($secs s): exit status $rc"; failed=$((failed + 1)) ;;
  esac
  results+=("$line")
  echo "$line"
  if [ "$rc" != 0 ] && [ "$rc" != 77 ]; then
    tail -25 "$logs/$name.log" | sed "s/^/    $name| /"
  fi
done
summary="run.sh: $passed passed, $failed failed, $skipped skipped ($(elapsed) s; logs in $logs)"
echo "$summary"

# ---- 3. benchmark ------------------------------------------------------------------------
bench_rc=0
left=$((230 - $(elapsed))) # bench/run-device.sh gives this script 240 s in all
[ "$left" -gt 120 ] && left=120
[ "$left" -lt 30 ] && [ $fake = 1 ] && left=30
if [ -x "$src/bench/gpu_bench.sh" ]; then
  if [ "$left" -lt 20 ]; then
    echo "run.sh: benchmark not run: only $left s left"
    bench_rc=1
  else
    echo "run.sh: GPU benchmark (limit $left s)"
    bench_env=() bench_args=()
    [ $fake = 1 ] && bench_env=(WAITIO_CUDA_LIBRARY="$WAITIO_TEST_FAKE_CUDA") && bench_args=(--rounds 3 --iters 200)
    # shellcheck disable=SC2086 # the extra arguments are words
    env "${bench_env[@]}" timeout --kill-after=5 "$left" "$src/bench/gpu_bench.sh" "$build" "${bench_args[@]}" \
      ${WAITIO_TEST_GPU_BENCH_ARGS:-} >"$logs/bench.log" 2>&1
    bench_rc=$?
    cat "$logs/bench.log"
    [ $bench_rc = 0 ] || echo "run.sh: the benchmark FAILED (exit status $bench_rc)"
  fi
else
  echo "run.sh: no GPU benchmark (bench/gpu_bench.sh)"
fi
printf '%s\n' "${results[@]}"
if [ $failed = 0 ] && [ $bench_rc = 0 ]; then
  echo "$summary: OK"
  exit 0
fi
echo "$summary: FAILED"
exit 1
