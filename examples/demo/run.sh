#!/usr/bin/env bash
# run.sh — builds and runs the coupled demo: the simulation (sim.c, built with Open MPI's mpicc,
# 2 ranks under mpirun.openmpi) and the analysis (analysis.c, built with MPICH's mpicc, 3 ranks
# under mpirun.mpich), started together by waitiorun and coupled through WaitIO.
# Usage: examples/demo/run.sh [BUILD_DIR] [--steps N] [--timeout S]
#   BUILD_DIR must hold a built WaitIO (src/libwaitio.so, tools/waitiorun). Exits non-zero if
#   building or any PB fails, or the run exceeds the timeout (default 120 s).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$root/build
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
  build=$1
  shift
fi
build=$(cd "$build" && pwd)
steps=12 limit=120
while [ $# -gt 0 ]; do
  case $1 in
    --steps) steps=$2; shift 2 ;;
    --timeout) limit=$2; shift 2 ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
for f in "$build/src/libwaitio.so" "$build/tools/waitiorun"; do
  [ -e "$f" ] || { echo "run.sh: $f is missing; build WaitIO first" >&2; exit 1; }
done
out=$build/examples/demo
mkdir -p "$out"

cflags=(-std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -I"$root/include")
libs=(-L"$build/src" -Wl,-rpath,"$build/src" -lwaitio -lm)
if grep -q "^WAITIO_SANITIZE:BOOL=ON" "$build/CMakeCache.txt" 2>/dev/null; then
  cflags+=(-fsanitize=address,undefined -fno-omit-frame-pointer)   # match a sanitizer build
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}               # MPI libraries leak at exit
fi

echo "== building: sim with $(command -v mpicc.openmpi), analysis with $(command -v mpicc.mpich)"
mpicc.openmpi "${cflags[@]}" "$here/sim.c" "$here/coupling.c" -o "$out/sim" "${libs[@]}"
mpicc.mpich "${cflags[@]}" "$here/analysis.c" "$here/coupling.c" -o "$out/analysis" "${libs[@]}"

# Open MPI refuses root without these; 5 ranks (+ 2 launchers) share the cores, so Open MPI
# must yield while it waits or it starves the other PB (docs/tuning.md, "Oversubscribed nodes").
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Open MPI's top session directory is removed by the last job to end while another may be
# creating its own in it (two mpiruns started together: "mkdir ... File exists"): keep it non-empty
mkdir -p "${TMPDIR:-/tmp}/ompi.$(uname -n | cut -d. -f1).$(id -u)/waitio-keep"
export OMPI_MCA_mpi_yield_when_idle=${OMPI_MCA_mpi_yield_when_idle:-1}

echo "== running: waitiorun -- mpirun.openmpi -np 2 sim : -- mpirun.mpich -np 3 analysis"
start=$(date +%s%N)
status=0
"$build/tools/waitiorun" -t "$limit" \
  -- mpirun.openmpi --oversubscribe -np 2 "$out/sim" --steps "$steps" \
  : -- mpirun.mpich -np 3 "$out/analysis" || status=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
if [ $status -ne 0 ]; then
  echo "coupled demo: FAILED (exit status $status after $ms ms)" >&2
  exit $status
fi
echo "coupled demo: OK ($steps steps, Open MPI PB <-> MPICH PB through WaitIO, $ms ms)"
