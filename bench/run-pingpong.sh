#!/usr/bin/env bash
# run-pingpong.sh — WaitIO ping-pong and streaming between two PBs (through waitiorun) beside the
# same loops over a raw 127.0.0.1 TCP socket (waitio-bench raw-*), run back to back; prints one
# Markdown table of figures and WaitIO/raw ratios. Builds nothing: give it a built build dir.
#
# Usage: bench/run-pingpong.sh [BUILD_DIR] [-r RUNS] [-o CSV_DIR] [--no-stream] [waitio-bench options]
#   BUILD_DIR      default: ../build next to this script
#   -r RUNS        repeat the WaitIO/raw pair RUNS times (alternating) and print medians, plus the
#                  range of the per-run latency ratios (default 1)
#   -o CSV_DIR     keep every run's CSV there (waitio-pingpong.N.csv, raw-pingpong.N.csv, ...)
#   --no-stream    ping-pong only
#   other options go to both waitio-bench runs: --min/--max/--sizes/--factor/--iters/--warmup/
#   --window; --block and --chunk B go to the raw runs only (receiver blocks instead of polling;
#   sender sends at most B bytes per send() call instead of the whole message)
# WaitIO runs over TCP (WAITIO_TRANSPORTS=tcp unless set), so that both sides cross the same
# kernel path; bench/compare puts WaitIO's shared memory beside MPI.
# Each WaitIO or raw run is stopped after 600 s. Exits non-zero if any run fails (a data-verification
# failure or a timeout included).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$here/../build
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
  build=$1
  shift
fi
build=$(cd "$build" && pwd)
limit=600 runs=1 csvdir="" kinds="pingpong stream" bench_opts=() raw_opts=() raw_how="receiver polls" raw_chunk=""
while [ $# -gt 0 ]; do
  case $1 in
    -r) runs=$2; shift 2 ;;
    -o) csvdir=$2; shift 2 ;;
    --no-stream) kinds=pingpong; shift ;;
    --block) raw_opts+=(--block); raw_how="receiver blocks"; shift ;;
    --chunk) raw_opts+=(--chunk "$2"); raw_chunk=" in send() calls of at most $2 B"; shift 2 ;;
    --csv) shift ;;
    --*) bench_opts+=("$1" "$2"); shift 2 ;;
    *) echo "run-pingpong.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
B=$build/bench/waitio-bench
W=$build/tools/waitiorun
for f in "$B" "$W"; do
  [ -x "$f" ] || { echo "run-pingpong.sh: $f is missing; build the project first" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export WAITIO_TRANSPORTS=${WAITIO_TRANSPORTS:-tcp}

for ((run = 1; run <= runs; run++)); do
  for kind in $kinds; do
    "$W" -q -t "$limit" -- "$B" "$kind" --csv "${bench_opts[@]}" : -- "$B" "$kind" --csv "${bench_opts[@]}" \
      >"$tmp/waitio-$kind.$run.csv"
    timeout "$limit" "$B" "raw-$kind" --csv "${bench_opts[@]}" "${raw_opts[@]}" >"$tmp/raw-$kind.$run.csv"
  done
done
if [ -n "$csvdir" ]; then
  mkdir -p "$csvdir"
  cp "$tmp"/*.csv "$csvdir"/
fi

echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -n), $(nproc) cores, Linux $(uname -r);" \
  "WaitIO: 2 PBs x 1 process, WAITIO_TRANSPORTS=$WAITIO_TRANSPORTS; raw: the same loop on one 127.0.0.1 socket" \
  "($raw_how; sender sends whole messages$raw_chunk)"
[ "$runs" -gt 1 ] && echo "# medians of $runs runs (WaitIO and raw alternating)"
python3 - "$tmp" "$runs" "$kinds" <<'PY'
import csv, os, statistics, sys

tmp, runs, kinds = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()

def load(name, column):
    """{bytes: [value of `column` in each run]}"""
    out = {}
    for run in range(1, runs + 1):
        with open(os.path.join(tmp, f"{name}.{run}.csv")) as f:
            for row in csv.DictReader(f):
                out.setdefault(int(row["bytes"]), []).append(float(row[column]))
    return out

def mbs(v):
    return f"{v:.2f}" if v < 10 else f"{v:.0f}"

med = statistics.median
wl, rl = load("waitio-pingpong", "half_rtt_us"), load("raw-pingpong", "half_rtt_us")
wb, rb = load("waitio-pingpong", "mb_per_s"), load("raw-pingpong", "mb_per_s")
extra = " latency ratio range |" if runs > 1 else ""
print("| bytes | WaitIO half-RTT µs | raw TCP µs | ratio | WaitIO MB/s | raw MB/s | ratio |" + extra)
print("|---:|---:|---:|---:|---:|---:|---:|" + ("---:|" if runs > 1 else ""))
for b in sorted(set(wl) & set(rl)):
    row = (f"| {b} | {med(wl[b]):.2f} | {med(rl[b]):.2f} | {med(wl[b]) / med(rl[b]):.2f} "
           f"| {mbs(med(wb[b]))} | {mbs(med(rb[b]))} | {med(wb[b]) / med(rb[b]):.2f} |")
    if runs > 1:
        ratios = [w / r for w, r in zip(wl[b], rl[b])]
        row += f" {min(ratios):.2f}–{max(ratios):.2f} |"
    print(row)
if "stream" in kinds:
    ws, rs = load("waitio-stream", "mb_per_s"), load("raw-stream", "mb_per_s")
    print()
    print("| bytes | WaitIO stream MB/s | raw TCP stream MB/s | ratio |")
    print("|---:|---:|---:|---:|")
    for b in sorted(set(ws) & set(rs)):
        print(f"| {b} | {mbs(med(ws[b]))} | {mbs(med(rs[b]))} | {med(ws[b]) / med(rs[b]):.2f} |")
PY
