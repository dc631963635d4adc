#!/usr/bin/env bash
# test.sh — the whole test suite from a fresh clone: installs missing dependencies, builds with
# -Werror, runs every test with ctest (unit tests and the multi-process tests, each bounded in
# time), then builds again with AddressSanitizer + UndefinedBehaviorSanitizer and runs the suite
# once more. Usage: scripts/test.sh [--quick] [extra ctest args]   (--quick: skip the sanitizer pass)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
quick=0
if [ "${1:-}" = "--quick" ]; then quick=1; shift; fi
bash scripts/install-deps.sh --test
build=${WAITIO_BUILD:-build}
jobs=$(nproc)

echo "== build ($build)"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$jobs"
echo "== tests"
# The multi-process tests oversubscribe two cores heavily: ctest runs them one at a time.
(cd "$build" && ctest --output-on-failure --timeout 300 "$@")

[ $quick -eq 1 ] && exit 0
san=${build}-sanitize
echo "== build with ASan + UBSan ($san)"
cmake -S . -B "$san" -DCMAKE_BUILD_TYPE=Debug -DWAITIO_SANITIZE=ON >/dev/null
cmake --build "$san" -j"$jobs"
echo "== tests under ASan + UBSan"
cd "$san"
# WaitIO's own programs are checked for leaks too; MPI programs are not (MPI libraries leak at
# exit in ways that are theirs, not ours).
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --output-on-failure --timeout 300 -R "^unit\.|^mp\.core_" "$@"
# Left to the normal pass: packaging checks (the Python sdist, the dependency installer), which
# build nothing of ours under the sanitizers, and the CPU-time and speed probes (idle waiting,
# the benchmarks' smoke run), whose code paths the other tests run under the sanitizers too.
ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --output-on-failure --timeout 300 \
  -E "^unit\.|^mp\.core_|fuzz_smoke|python_sdist|install_deps|mp_idle_wait|bench_smoke" "$@"
