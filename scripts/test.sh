#!/usr/bin/env bash
# test.sh — the whole test suite from a fresh clone: installs missing dependencies, builds
# (Release with -Werror), and runs every test with ctest (unit tests and the multi-process
# tests, each bounded in time). Usage: scripts/test.sh [extra ctest args]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/install-deps.sh
build=${WAITIO_BUILD:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)"
cd "$build"
# The multi-process tests oversubscribe two cores heavily: run them one at a time.
ctest --output-on-failure --timeout 300 "$@"
