#!/usr/bin/env bash
# run-collectives.sh — collective timings in one run (seed 001, Table 10 style): one Open MPI job
# of 2*P processes vs 2 PBs of P processes (Open MPI) coupled through WaitIO, with WaitIO's own
# choice per call (auto), forced hierarchical and forced flat. R runs; in each, the MPI job and
# one WaitIO job that measures the three modes in turn at every size (the jobs alternate which
# goes first). Prints a Markdown table of medians (min-max) and the ratios the goals are about:
# auto / one MPI job (of the medians, and the median of each run's own ratio), and auto / the
# better of flat and hierarchical.
# Usage: bench/run-collectives.sh [build-dir] [P=4] [iterations=50] [runs=3]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
P=${2:-4}
iters=${3:-50}
runs=${4:-3}
out=$build/bench
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Open MPI's top session directory (TMPDIR/ompi.<node>.<uid>) is removed by the last job to end
# while another may be creating its own in it ("mkdir ... File exists", orte_init fails: seen
# with two mpiruns started together). A subdirectory of ours keeps it from ever being empty.
mkdir -p "${TMPDIR:-/tmp}/ompi.$(uname -n | cut -d. -f1).$(id -u)/waitio-keep"
# The PBs share the cores: let Open MPI yield while it waits (every mode alike), or its spinning
# starves the WaitIO heads (see docs/tuning.md, "Oversubscribed nodes")
export OMPI_MCA_mpi_yield_when_idle=${OMPI_MCA_mpi_yield_when_idle:-1}
unset WAITIO_COLL_HIER WAITIO_COLL_ALG
# BENCH_CFLAGS: extra compiler flags, e.g. the sanitizers of a sanitizer build of the library
# shellcheck disable=SC2086
mpicc.openmpi -std=c11 -D_GNU_SOURCE -O2 -Wall -Werror ${BENCH_CFLAGS:-} -I"$root/include" "$here/coll_bench.c" \
  -o "$out/waitio-bench-coll" -L"$build/adapters" -Wl,-rpath,"$build/adapters" -Wl,--no-as-needed \
  -lwaitio_adapter_openmpi -Wl,--as-needed -L"$build/src" -Wl,-rpath,"$build/src" -lwaitio
csv=$out/collectives.csv
: >"$csv"
# One run: the MPI job and one WaitIO job that measures auto, hierarchical and flat in turn at
# every operation and size (same conditions for the three); the two jobs alternate which goes
# first. Each line gets the run number, so the report can take each run's own ratio.
mpi_job() {
  timeout 300 mpirun.openmpi --oversubscribe -np $((2 * P)) "$out/waitio-bench-coll" mpi 1048576 "$iters" | sed "s/^/$r,/" >>"$csv"
}
waitio_job() {
  local port pid
  port=$(python3 "$here/../tests/scripts/free_port.py")
  export WAITIO_NPB=2 WAITIO_MASTER_HOST=127.0.0.1 WAITIO_MASTER_PORT=$port WAITIO_KEY=bench-$(od -An -tx8 -N16 /dev/urandom | tr -d ' \n')
  WAITIO_PBID=0 timeout 300 mpirun.openmpi --oversubscribe -np "$P" "$out/waitio-bench-coll" auto,hier,flat 1048576 "$iters" >"$out/pb0.csv" &
  pid=$!
  WAITIO_PBID=1 timeout 300 mpirun.openmpi --oversubscribe -np "$P" "$out/waitio-bench-coll" auto,hier,flat 1048576 "$iters" >/dev/null
  wait $pid # PB 0's exit status (set -e stops the run if it failed)
  sed "s/^/$r,/" "$out/pb0.csv" >>"$csv"
}
for ((r = 1; r <= runs; r++)); do
  if ((r % 2)); then mpi_job; waitio_job; else waitio_job; mpi_job; fi
done
python3 - "$csv" "$P" <<'PY'
import csv, statistics, sys
rows, per_run = {}, {}
for run, mode, op, size, us in csv.reader(open(sys.argv[1])):
    rows.setdefault((mode, op, int(size)), []).append(float(us))
    per_run[(run, mode, op, int(size))] = float(us)
p = int(sys.argv[2])
def cell(v):
    m = statistics.median(v)
    return f"{m:.1f}" if len(v) < 2 or min(v) == max(v) else f"{m:.1f} ({min(v):.1f}–{max(v):.1f})"
def run_ratios(op, size):
    r = [per_run[(run, "auto", op, size)] / per_run[(run, "mpi", op, size)]
         for (run, mode, o, s) in per_run if mode == "mpi" and o == op and s == size
         and (run, "auto", op, size) in per_run]
    if len(r) < 2:
        return f"{r[0]:.2f}" if r else "-"
    return f"{statistics.median(r):.2f} ({min(r):.2f}–{max(r):.2f})"
print(f"| op | bytes | one MPI job ({2*p} procs) µs | WaitIO auto (2x{p}) µs | hierarchical µs | flat µs "
      f"| auto / MPI | auto / MPI, per run | auto / best of flat, hier |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for (mode, op, size) in sorted(k for k in rows if k[0] == "mpi"):
    vals = [rows.get((m, op, size)) for m in ("mpi", "auto", "hier", "flat")]
    if any(v is None for v in vals):
        continue
    m, a, h, f = (statistics.median(v) for v in vals)
    print(f"| {op} | {size} | {cell(vals[0])} | {cell(vals[1])} | {cell(vals[2])} | {cell(vals[3])} "
          f"| {a/m:.2f} | {run_ratios(op, size)} | {a/min(h, f):.2f} |")
PY
