#!/usr/bin/env bash
# run-exec-startup.sh — what one plain process costs to start (issue 29, docs/scale.md "process
# start"): perf stat over many exec's of three tiny programs, each against one or more builds of
# libwaitio, in alternating rounds (a loaded machine drifts; compare within a round):
#   empty    int main(){return 0;}, not linked with libwaitio (the exec itself)
#   linked   the same program linked with libwaitio (loading the library and what it needs)
#   init     waitio_init + waitio_finalize of a 1-process instance (default transports)
# Prints per round, library and program: CPU ms per process (task-clock) and wall ms per process,
# then the load average. Takes ~1 minute with the defaults.
#
#   bench/run-exec-startup.sh LIBDIR [LIBDIR...]     e.g. bench/run-exec-startup.sh old/src build/src
#   EXECS=200 ROUNDS=3 (defaults)
set -uo pipefail
[ $# -gt 0 ] || { echo "usage: $0 LIBDIR [LIBDIR...] (directories holding libwaitio.so.0)"; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
execs=${EXECS:-200} rounds=${ROUNDS:-3}
command -v perf >/dev/null || { echo "needs perf (linux-tools)"; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'int main(void) { return 0; }\n' >"$work/empty.c"
printf '#include <waitio.h>\nint main(void) { return waitio_init(10) || waitio_finalize() ? 1 : 0; }\n' >"$work/init.c"
cc -O2 "$work/empty.c" -o "$work/empty" || exit 1
cc -O2 "$work/empty.c" -o "$work/linked" -L"$1" -Wl,--no-as-needed -lwaitio || exit 1
cc -O2 -I"$here/../include" "$work/init.c" -o "$work/init" -L"$1" -lwaitio || exit 1
unset WAITIO_TRANSPORTS WAITIO_COMM_TYPE WAITIO_PBID
export WAITIO_NPB=1 WAITIO_PB_RANK=0 WAITIO_PB_SIZE=1 WAITIO_MASTER_HOST=127.0.0.1 WAITIO_LOG=off
export WAITIO_MASTER_PORT=$(python3 "$here/../tests/scripts/free_port.py" 2>/dev/null || echo $((15000 + RANDOM % 15000)))
export WAITIO_KEY=exec-$(od -An -tx8 -N16 /dev/urandom | tr -d ' \n')
for dir in "$@"; do
  LD_LIBRARY_PATH=$dir "$work/init" || { echo "$dir: waitio_init/finalize failed"; exit 1; }
done
echo "# $(uname -n), $(nproc) cores; $execs exec's per cell; ms per process: CPU (task-clock) / wall"
printf '%-6s %-40s %16s %16s %16s\n' round libdir empty linked init
for r in $(seq "$rounds"); do
  for dir in "$@"; do
    row=()
    for prog in empty linked init; do
      out=$(LD_LIBRARY_PATH=$dir perf stat -x, -r "$execs" -e task-clock "$work/$prog" 2>&1 >/dev/null)
      cpu=$(awk -F, '/task-clock/ {printf "%.2f", $1}' <<<"$out")
      t0=$(date +%s.%N)
      for _ in $(seq "$execs"); do LD_LIBRARY_PATH=$dir "$work/$prog"; done
      wall=$(awk -v a="$t0" -v b="$(date +%s.%N)" -v n="$execs" 'BEGIN { printf "%.2f", (b - a) * 1000 / n }')
      row+=("$cpu / $wall")
    done
    printf '%-6s %-40s %16s %16s %16s\n' "$r" "$dir" "${row[@]}"
  done
done
echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg)"
