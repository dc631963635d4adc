#!/usr/bin/env bash
# run-pingpong.sh — WaitIO ping-pong and streaming between two PBs beside the same loops over a
# raw loopback TCP socket, run back to back; prints one table of figures and ratios.
# Usage: bench/run-pingpong.sh [build-dir] [extra waitio-bench options, e.g. --max 1M]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../build}" && pwd)
shift || true
B=$build/bench/waitio-bench
W=$build/tools/waitiorun
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for kind in pingpong stream; do
  "$W" -q -t 600 -- "$B" $kind --csv "$@" : -- "$B" $kind --csv "$@" >"$tmp/waitio-$kind.csv"
  "$B" raw-$kind --csv "$@" >"$tmp/raw-$kind.csv"
done
python3 - "$tmp" <<'PY'
import csv, sys, os
d = sys.argv[1]
def load(name):
    rows = {}
    for r in csv.DictReader(open(os.path.join(d, name))):
        rows[int(r["bytes"])] = r
    return rows
w, r = load("waitio-pingpong.csv"), load("raw-pingpong.csv")
print("| bytes | WaitIO half-RTT µs | raw TCP µs | ratio | WaitIO MB/s | raw MB/s | ratio |")
print("|---:|---:|---:|---:|---:|---:|---:|")
for b in sorted(w):
    if b in r:
        wl, rl = float(w[b]["half_rtt_us"]), float(r[b]["half_rtt_us"])
        wb, rb = float(w[b]["mb_per_s"]), float(r[b]["mb_per_s"])
        print(f"| {b} | {wl:.2f} | {rl:.2f} | {wl/rl:.2f} | {wb:.0f} | {rb:.0f} | {wb/rb:.2f} |")
ws, rs = load("waitio-stream.csv"), load("raw-stream.csv")
print()
print("| bytes | WaitIO stream MB/s | raw TCP stream MB/s | ratio |")
print("|---:|---:|---:|---:|")
for b in sorted(ws):
    if b in rs:
        a, c = float(ws[b]["mb_per_s"]), float(rs[b]["mb_per_s"])
        print(f"| {b} | {a:.0f} | {c:.0f} | {a/c:.2f} |")
PY
