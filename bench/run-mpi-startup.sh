#!/usr/bin/env bash
# run-mpi-startup.sh — waitio_init's share of an MPI program's start-up (issue 29): for each P,
# 2 PBs of P Open MPI processes (tests/progs/mpi_scale, one ring round) started together, each
# PB's mpirun bound to its own half of the cores; prints per P the slowest MPI_Init, the slowest
# waitio_init, their ratio, and what WaitIO adds after the last process left MPI_Init (the slowest
# waitio_init includes waiting for the other PB's MPI_Init: the two jobs never start together). Usage: bench/run-mpi-startup.sh [BUILD] P...   (default 16 64 128)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$here/../build
if [ $# -gt 0 ] && [ -d "$1" ]; then build=$1; shift; fi
[ $# -gt 0 ] || set -- 16 64 128
prog=$build/tests/progs/mpi_scale.ompi
[ -x "$prog" ] || { echo "run-mpi-startup: $prog is not built" >&2; exit 2; }
MPIRUN=${MPIRUN:-$(command -v mpirun.openmpi || echo mpirun)}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cores=$(nproc)
half=$((cores / 2))
bind0=() bind1=()
if [ "$half" -ge 2 ]; then
  bind0=(--cpu-set "0-$((half - 1))") bind1=(--cpu-set "$half-$((cores - 1))")
fi
rc=0
printf '%-6s %-16s %-18s %-11s %-26s %s\n' procs mpi_init_max_s waitio_init_max_s waitio/mpi after_last_mpi_init_s added/mpi
for p in "$@"; do
  out=$(mktemp)
  export WAITIO_NPB=2 WAITIO_MASTER_HOST=127.0.0.1 WAITIO_MASTER_PORT=$((20000 + RANDOM % 20000))
  export WAITIO_KEY=startup-$(od -An -tx8 -N16 /dev/urandom | tr -d ' \n')
  WAITIO_PBID=0 timeout 90 "$MPIRUN" --oversubscribe "${bind0[@]}" -np "$p" "$prog" --rounds 1 >"$out" 2>&1 &
  pid=$!
  WAITIO_PBID=1 timeout 90 "$MPIRUN" --oversubscribe "${bind1[@]}" -np "$p" "$prog" --rounds 1 >/dev/null 2>&1
  rc1=$?
  wait "$pid"
  rc0=$?
  mpi=$(sed -n 's/^mpi_init_seconds=\([0-9.]*\).*/\1/p' "$out")
  wio=$(sed -n 's/^startup_seconds=\([0-9.]*\).*/\1/p' "$out")
  add=$(sed -n 's/^after_last_mpi_init_seconds=\([-0-9.]*\).*/\1/p' "$out")
  if [ "$rc0" != 0 ] || [ "$rc1" != 0 ] || [ -z "$mpi" ] || [ -z "$wio" ]; then
    echo "2x$p: FAILED (PB 0 status $rc0, PB 1 status $rc1)"; tail -5 "$out"; rc=1
  else
    printf '%-6s %-16s %-18s %-11.3f %-26s %.3f\n' "2x$p" "$mpi" "$wio" "$(awk -v a="$wio" -v b="$mpi" 'BEGIN { print (b > 0 ? a / b : 0) }')" \
      "$add" "$(awk -v a="$add" -v b="$mpi" 'BEGIN { print (b > 0 ? a / b : 0) }')"
  fi
  rm -f "$out"
done
exit $rc
