#!/usr/bin/env bash
# run-collectives.sh — collective timings in one run (seed 001, Table 10 style): one Open MPI job
# of 2*P processes vs 2 PBs of P processes (Open MPI) coupled through WaitIO, with WaitIO's own
# choice per call (auto) and every path forced in turn (hier, flat, paired, segmented, pipeline:
# docs/mpi-layer.md, "Collective paths"). R runs; in each, the MPI job and one WaitIO job that
# measures every mode in turn at every size (the jobs alternate which goes first). Prints a
# Markdown table of medians (min-max) and the ratios the goals are about: auto / one MPI job (of
# the medians, and the median of each run's own ratio), and auto / the best of WaitIO's own paths
# (the median of each run's auto over that run's fastest path).
# Usage: bench/run-collectives.sh [options] [build-dir] [P=4] [iterations=50] [runs=3]
# Options:
#   --cpu-set         bind each PB's mpirun to cores of its own (PB 0: 0..P-1, PB 1: P..2P-1)
#                     and the one MPI job to 0..2P-1 (mpirun --cpu-set: Open MPI 4.1 binds each
#                     process to the whole set); without it the jobs float and Open MPI yields
#                     while it waits (shared cores)
#   --env VAR=VALUE   also set VAR in the WaitIO jobs (e.g. WAITIO_COLL_TABLE=site.table);
#                     may be repeated
#   --modes LIST      the WaitIO modes (default auto,hier,flat,paired,segmented,pipeline)
# Environment: MPIRUN, MPICC (default mpirun.openmpi / mpicc.openmpi where they exist, else
# mpirun / mpicc); runs as root too (OMPI_ALLOW_RUN_AS_ROOT*). Writes BUILD/bench/collectives.csv
# (run,mode,op,bytes,usec).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
bind=0
modes=auto,hier,flat,paired,segmented,pipeline
extra_env=()
while [ $# -gt 0 ]; do
  case $1 in
    --cpu-set) bind=1; shift ;;
    --env) [[ ${2:-} == *=* ]] || { echo "run-collectives.sh: --env needs VAR=VALUE" >&2; exit 2; }
           extra_env+=("$2"); shift 2 ;;
    --modes) modes=${2:?--modes needs a list}; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    --*) echo "run-collectives.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
build=$(cd "${1:-$root/build}" && pwd)
P=${2:-4}
iters=${3:-50}
runs=${4:-3}
out=$build/bench
mkdir -p "$out"
pick() { command -v "$1" >/dev/null 2>&1 && echo "$1" || echo "$2"; }
MPIRUN=${MPIRUN:-$(pick mpirun.openmpi mpirun)}
MPICC=${MPICC:-$(pick mpicc.openmpi mpicc)}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Open MPI's top session directory (TMPDIR/ompi.<node>.<uid>) is removed by the last job to end
# while another may be creating its own in it ("mkdir ... File exists", orte_init fails: seen
# with two mpiruns started together). A subdirectory of ours keeps it from ever being empty.
mkdir -p "${TMPDIR:-/tmp}/ompi.$(uname -n | cut -d. -f1).$(id -u)/waitio-keep"
if ((bind)); then
  # a core per process: each job on its own set, no oversubscription, no yielding (--cpu-set is
  # itself the binding: Open MPI refuses another --bind-to policy beside it)
  pb_opts() { echo "--cpu-set $(($1 * P))-$(($1 * P + P - 1))"; }
  mpi_opts="--cpu-set 0-$((2 * P - 1))"
else
  # The PBs share the cores: let Open MPI yield while it waits (every mode alike), or its
  # spinning starves the WaitIO heads (see docs/tuning.md, "Oversubscribed nodes")
  export OMPI_MCA_mpi_yield_when_idle=${OMPI_MCA_mpi_yield_when_idle:-1}
  pb_opts() { echo "--oversubscribe"; }
  mpi_opts="--oversubscribe"
fi
unset WAITIO_COLL_HIER WAITIO_COLL_ALG WAITIO_COLL_PIPELINE
# BENCH_CFLAGS: extra compiler flags, e.g. the sanitizers of a sanitizer build of the library
# shellcheck disable=SC2086
"$MPICC" -std=c11 -D_GNU_SOURCE -O2 -Wall -Werror ${BENCH_CFLAGS:-} -I"$root/include" "$here/coll_bench.c" \
  -o "$out/waitio-bench-coll" -L"$build/adapters" -Wl,-rpath,"$build/adapters" -Wl,--no-as-needed \
  -lwaitio_adapter_openmpi -Wl,--as-needed -L"$build/src" -Wl,-rpath,"$build/src" -lwaitio
csv=$out/collectives.csv
: >"$csv"
# One run: the MPI job and one WaitIO job that measures every mode in turn at every operation
# and size (same conditions for all); the two jobs alternate which goes first. Each line gets
# the run number, so the report can take each run's own ratio.
mpi_job() {
  # shellcheck disable=SC2086
  timeout 300 "$MPIRUN" $mpi_opts -np $((2 * P)) "$out/waitio-bench-coll" mpi 1048576 "$iters" | sed "s/^/$r,/" >>"$csv"
}
waitio_job() {
  local port pid
  port=$(python3 "$here/../tests/scripts/free_port.py")
  export WAITIO_NPB=2 WAITIO_MASTER_HOST=127.0.0.1 WAITIO_MASTER_PORT=$port WAITIO_KEY=bench-$(od -An -tx8 -N16 /dev/urandom | tr -d ' \n')
  # shellcheck disable=SC2046
  env WAITIO_PBID=0 "${extra_env[@]}" timeout 300 "$MPIRUN" $(pb_opts 0) -np "$P" "$out/waitio-bench-coll" "$modes" 1048576 "$iters" >"$out/pb0.csv" &
  pid=$!
  # shellcheck disable=SC2046
  env WAITIO_PBID=1 "${extra_env[@]}" timeout 300 "$MPIRUN" $(pb_opts 1) -np "$P" "$out/waitio-bench-coll" "$modes" 1048576 "$iters" >/dev/null
  wait $pid # PB 0's exit status (set -e stops the run if it failed)
  sed "s/^/$r,/" "$out/pb0.csv" >>"$csv"
}
for ((r = 1; r <= runs; r++)); do
  if ((r % 2)); then mpi_job; waitio_job; else waitio_job; mpi_job; fi
done
python3 - "$csv" "$P" "$modes" <<'PY'
import csv, statistics, sys
rows, per_run = {}, {}
for run, mode, op, size, us in csv.reader(open(sys.argv[1])):
    rows.setdefault((mode, op, int(size)), []).append(float(us))
    per_run[(run, mode, op, int(size))] = float(us)
p = int(sys.argv[2])
paths = [m for m in sys.argv[3].split(",") if m not in ("auto", "mpi")]
runs = sorted({k[0] for k in per_run})
def cell(v):
    if v is None:
        return "-"
    m = statistics.median(v)
    return f"{m:.1f}" if len(v) < 2 or min(v) == max(v) else f"{m:.1f} ({min(v):.1f}–{max(v):.1f})"
def spread(r):
    if not r:
        return "-"
    if len(r) < 2:
        return f"{r[0]:.2f}"
    return f"{statistics.median(r):.2f} ({min(r):.2f}–{max(r):.2f})"
def vs_mpi(op, size):
    return spread([per_run[(run, "auto", op, size)] / per_run[(run, "mpi", op, size)] for run in runs
                   if (run, "auto", op, size) in per_run and (run, "mpi", op, size) in per_run])
def vs_best(op, size):
    r = []
    for run in runs:
        own = [per_run[(run, m, op, size)] for m in paths if (run, m, op, size) in per_run]
        if own and (run, "auto", op, size) in per_run:
            r.append(per_run[(run, "auto", op, size)] / min(own))
    return spread(r)
def best_path(op, size):
    med = {m: statistics.median(rows[(m, op, size)]) for m in paths if (m, op, size) in rows}
    return min(med, key=med.get) if med else "-"
print(f"| op | bytes | one MPI job ({2*p} procs) µs | WaitIO auto (2x{p}) µs | "
      + " | ".join(f"{m} µs" for m in paths)
      + " | auto / MPI | auto / MPI, per run | auto / best own path, per run | best path |")
print("|---|---:|---:|---:|" + "---:|" * len(paths) + "---:|---:|---:|---|")
for (mode, op, size) in sorted(k for k in rows if k[0] == "mpi"):
    if (("auto", op, size)) not in rows:
        continue
    m, a = statistics.median(rows[("mpi", op, size)]), statistics.median(rows[("auto", op, size)])
    print(f"| {op} | {size} | {cell(rows[('mpi', op, size)])} | {cell(rows[('auto', op, size)])} | "
          + " | ".join(cell(rows.get((x, op, size))) for x in paths)
          + f" | {a/m:.2f} | {vs_mpi(op, size)} | {vs_best(op, size)} | {best_path(op, size)} |")
PY
