#!/usr/bin/env bash
# demo.sh — the main job: installs what is missing, builds WaitIO, then
#   1. couples three programs built with different MPIs through WaitIO (seed 000's heat example:
#      Code-1 in Fortran on Open MPI, Code-2 on 3 MPICH ranks, Code-3 on 2 Open MPI ranks),
#      printing what they exchange, and checks the result against the original file coupling;
#   2. couples both ways a simulation (Open MPI, 2 ranks) and an analysis (MPICH, 3 ranks): the
#      field goes out in checksummed pieces every step, statistics and a control value come back,
#      and the PB heads measure WaitIO latency (8 B) and bandwidth (8 MiB) (examples/demo);
#      then runs it again traced (WAITIO_TRACE) and prints waitio-trace's summary of the run (who
#      waited how long on whom, traffic between the PBs; trace.json for Perfetto and, with
#      matplotlib, PNGs in build/examples/demo/trace);
#   3. measures latency and bandwidth between two PBs beside raw TCP in the same run (medians of
#      3 alternating runs).
# Every step is bounded in time; exits non-zero if anything fails. Works as root on a fresh
# Debian 12 clone. Build directory: $WAITIO_BUILD, default ./build.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/install-deps.sh --demo
build=${WAITIO_BUILD:-build}
echo "== building WaitIO ($build)"
# the examples run programs of both Debian MPIs: their two adapters
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DWAITIO_MPI_COMPILERS=mpicc.openmpi;mpicc.mpich" >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
echo
echo "== 1. three coupled programs, three builds, two MPI implementations"
bash examples/heat/run.sh "$build"
echo
echo "== 2. two-way coupling: simulation (Open MPI) <-> analysis (MPICH)"
bash examples/demo/run.sh "$build" --timeout 120
echo
echo "== 2b. the same run traced (WAITIO_TRACE), merged by waitio-trace into one timeline"
trace=$build/examples/demo/trace
rm -rf "$trace"
WAITIO_TRACE=$trace bash examples/demo/run.sh "$build" --timeout 120 >/dev/null
# waitio-trace runs under the Python that starts it: one with matplotlib draws the plots too
plot=() py=python3
for p in python3 /usr/bin/python3; do
  if "$p" -c "import matplotlib" 2>/dev/null; then plot=(--plot) py=$p; break; fi
done
"$py" tools/waitio-trace "$trace" "${plot[@]}"
echo
echo "== 3. latency and bandwidth between two PBs over TCP (WaitIO vs raw TCP, same run)"
bash bench/run-pingpong.sh "$build" -r 3 --sizes 8,1K,64K,1M,8M
echo
echo "demo: all steps passed"
