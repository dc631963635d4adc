#!/usr/bin/env bash
# demo.sh — the main job: installs what is missing, builds WaitIO, then
#   1. couples three programs built with different MPIs through WaitIO (seed 000's heat example:
#      Code-1 in Fortran on Open MPI, Code-2 on 3 MPICH ranks, Code-3 on 2 Open MPI ranks),
#      printing what they exchange, and checks the result against the original file coupling;
#   2. measures latency and bandwidth between two PBs, beside raw TCP in the same run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/install-deps.sh
build=${WAITIO_BUILD:-build}
echo "== building WaitIO"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
echo
echo "== 1. three coupled programs, three builds, two MPI implementations"
bash examples/heat/run.sh "$build"
echo
echo "== 2. latency and bandwidth between two PBs over TCP (WaitIO vs raw TCP, same run)"
bash bench/run-pingpong.sh "$build" --min 8 --max 8M 2>&1 | awk 'NR<=2 || /stream|^\|---/ || /^\| (8|1024|65536|1048576|8388608) \|/' | uniq
