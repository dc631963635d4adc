#!/usr/bin/env bash
# compare-shm.sh — two processes on this host, ping-pong half round trip and bandwidth over
# 8 B .. 8 MiB, in one run: WaitIO between 2 PBs through shared memory (default transports) and
# over TCP (WAITIO_TRANSPORTS=tcp), Open MPI within one job (its shared memory), MPICH within one
# job, and raw TCP over loopback. Medians of R runs, configurations alternating so that drift
# hits all alike. Prints a Markdown table of half-RTT (µs) and ratios.
# Usage: bench/compare-shm.sh [BUILD_DIR] [-r RUNS] [--sizes LIST]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
runs=3
sizes=8,1K,64K,1M,8M
while [ $# -gt 0 ]; do
  case $1 in
    -r) runs=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    *) build=$(cd "$1" && pwd); shift ;;
  esac
done
B=$build/bench/waitio-bench W=$build/tools/waitiorun
for f in "$B" "$W"; do [ -x "$f" ] || { echo "compare-shm.sh: $f missing; build first" >&2; exit 1; }; done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpicc.openmpi -O2 "$root/bench/mpi_pingpong.c" -o "$tmp/pp.ompi"
mpicc.mpich -O2 "$root/bench/mpi_pingpong.c" -o "$tmp/pp.mpich"
for ((run = 1; run <= runs; run++)); do
  "$W" -q -t 120 -- "$B" pingpong --csv --sizes "$sizes" : -- "$B" pingpong --csv --sizes "$sizes" \
    | sed 's/^waitio-pingpong,/waitio-shm,/' >"$tmp/waitio-shm.$run"
  WAITIO_TRANSPORTS=tcp "$W" -q -t 120 -- "$B" pingpong --csv --sizes "$sizes" : -- "$B" pingpong --csv --sizes "$sizes" \
    | sed 's/^waitio-pingpong,/waitio-tcp,/' >"$tmp/waitio-tcp.$run"
  timeout 120 mpirun.openmpi --oversubscribe -np 2 "$tmp/pp.ompi" openmpi "$sizes" >"$tmp/openmpi.$run"
  timeout 120 mpirun.mpich -np 2 "$tmp/pp.mpich" mpich "$sizes" >"$tmp/mpich.$run"
  timeout 120 "$B" raw-pingpong --csv --sizes "$sizes" | sed 's/^raw-pingpong,/raw-tcp,/' >"$tmp/raw-tcp.$run"
done
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, Linux $(uname -r); ping-pong between 2 processes of this host; medians of $runs runs"
cat "$tmp"/*.[0-9]* | grep -v '^benchmark' | python3 -c '
import sys, statistics
from collections import defaultdict
t = defaultdict(list)
for line in sys.stdin:
    name, size, iters, us, mbs = line.strip().split(",")
    t[(name, int(size))].append(float(us))
names = ["waitio-shm", "openmpi", "mpich", "waitio-tcp", "raw-tcp"]
sizes = sorted({s for _, s in t})
med = {k: statistics.median(v) for k, v in t.items()}
print("| bytes | " + " | ".join(n + " µs" for n in names) + " | shm/Open MPI | shm/MPICH | shm/WaitIO-tcp | WaitIO-tcp/raw |")
print("|---:" * (len(names) + 5) + "|")
for s in sizes:
    m = [med[(n, s)] for n in names]
    print("| %d | " % s + " | ".join("%.2f" % x for x in m) +
          " | %.2f | %.2f | %.2f | %.2f |" % (m[0] / m[1], m[0] / m[2], m[0] / m[3], m[3] / m[4]))
'
