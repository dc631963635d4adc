#!/usr/bin/env bash
# bench_smoke.sh — waitio-bench's WaitIO modes still run end to end, with tiny sizes and few
# iterations: pairs with 1 PB of 4 processes and with 2 PBs of 2 (every pair at once), streaming
# and ping-pong between 2 PBs; each must exit 0 and print one CSV row per size (the benchmark
# checks the bytes itself and exits non-zero on a wrong one). An instance that cannot be paired
# (1 PB of 3 processes) must be refused with exit status 2 and a message. The MPI twin
# (bench/mpi_bench.c, which bench/compare builds) is built with Open MPI and MPICH as compare
# builds it and runs ping-pong and pairs, so that the comparison cannot rot unnoticed. With UCX in
# the build and ucx_perftest installed, compare's ucx rows (WaitIO over UCX sm, ucx_perftest) too.
# timeout: 180
set -uo pipefail
source "$(dirname "$0")/lib.sh"
B=$WAITIO_BUILD_DIR/bench/waitio-bench
[ -x "$B" ] || t_fail "$B is missing (cmake --build $WAITIO_BUILD_DIR)"
opts=(--csv --sizes 8,4K,256K --iters 20 --warmup 2 --time-limit 20)

# expect_rows NAME BENCHMARK PAIRS: a CSV row for each size, with that pair count
expect_rows() {
  local size
  t_expect "$1" '^benchmark,bytes,iterations,pairs,half_rtt_us,max_half_rtt_us,mb_per_s$' "CSV header"
  for size in 8 4096 262144; do
    t_expect "$1" "^$2,$size,[0-9]+,$3,[0-9.]*,[0-9.]*,[0-9.]+\$" "row of $size bytes"
  done
}

t_run_job pairs1 25 -- "$B" pairs --procs 4 "${opts[@]}"
expect_rows pairs1 waitio-pairs 2
t_run_job pairs2 25 -- "$B" pairs --procs 2 "${opts[@]}" : -- "$B" pairs --procs 2 "${opts[@]}"
expect_rows pairs2 waitio-pairs 2
t_run_job stream 25 -- "$B" stream "${opts[@]}" --window 4 : -- "$B" stream "${opts[@]}" --window 4
expect_rows stream waitio-stream 1
t_run_job pingpong 25 -- "$B" pingpong "${opts[@]}" : -- "$B" pingpong "${opts[@]}"
expect_rows pingpong waitio-pingpong 1

rc=0
t_job odd 25 -- "$B" pairs --procs 3 "${opts[@]}" || rc=$?
[ "$rc" = 2 ] || { t_show odd; t_fail "pairs with 1 PB of 3 processes exited $rc, expected 2"; }
t_expect odd 'run as 1 PB of an even number of processes' "the refusal's reason"
# the MPI twin, with the flags bench/compare uses; a plain MPI job, not a WaitIO instance
run_plain() { # run_plain NAME SECS CMD...
  local name=$1 rc=0
  t_start "$@"
  t_wait "$name" || rc=$?
  [ "$rc" = 0 ] || { t_show "$name"; t_fail "$name exited $rc"; }
}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
src=$(cd "$(dirname "$0")/../.." && pwd)/bench/mpi_bench.c
for mpi in openmpi mpich; do
  exe=$T_DIR/mpi_bench.$mpi
  mpicc.$mpi -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror "$src" -o "$exe" >"$T_DIR/cc.$mpi" 2>&1 \
    || { cat "$T_DIR/cc.$mpi"; t_fail "bench/mpi_bench.c does not build with mpicc.$mpi"; }
  launch=(mpirun.$mpi -np)
  [ $mpi = openmpi ] && launch=(mpirun.openmpi --oversubscribe -np)
  run_plain "twin_pp_$mpi" 30 "${launch[@]}" 2 "$exe" pingpong "${opts[@]}"
  expect_rows "twin_pp_$mpi" pingpong 1
  run_plain "twin_pairs_$mpi" 30 "${launch[@]}" 4 "$exe" pairs --pairing half "${opts[@]}"
  expect_rows "twin_pairs_$mpi" pairs 2
done

# bench/compare, a small part of it
fake=$T_DIR/build
mkdir -p "$fake/bench" "$fake/tools" "$T_DIR/stubs"
ln -s "$B" "$fake/bench/waitio-bench"
ln -s "$WAITIO_BUILD_DIR/tools/waitiorun" "$fake/tools/waitiorun"
for tool in apt-get sudo; do
  printf '#!/bin/sh\necho "%s $*" >>"%s/installer-calls"\n' "$tool" "$T_DIR" >"$T_DIR/stubs/$tool"
  chmod +x "$T_DIR/stubs/$tool"
done
docs_sum=$(cat "$WAITIO_SOURCE_DIR/docs/performance.md" "$WAITIO_SOURCE_DIR/docs/img/"*.png 2>/dev/null | md5sum)
t_start compare 80 env PATH="$T_DIR/stubs:$PATH" "$WAITIO_SOURCE_DIR/bench/compare" "$fake" -r 2 --sizes 8,4K \
  --iter-scale 0.05 --configs waitio-shm,waitio-tcp,raw-tcp,waitio-shm-1pb --goal-rounds 2
t_wait compare || { t_show compare; t_fail "bench/compare failed"; }
[ -e "$T_DIR/installer-calls" ] && t_fail "bench/compare tried to install: $(cat "$T_DIR/installer-calls")"
[ "$(cat "$WAITIO_SOURCE_DIR/docs/performance.md" "$WAITIO_SOURCE_DIR/docs/img/"*.png 2>/dev/null | md5sum)" = "$docs_sum" ] \
  || t_fail "bench/compare without --docs changed docs/"
outs=("$fake"/compare/*/performance.md)
[ ${#outs[@]} = 1 ] && [ -f "${outs[0]}" ] || t_fail "no performance.md under $fake/compare/"
cout=$(dirname "${outs[0]}")
t_expect compare "wrote $cout/performance.md" "the scratch directory named"
grep -q 'min–max' "$cout/performance.md" || t_fail "performance.md does not say how the spread is shown"
if [ ! -s "$cout/img/latency.png" ] || [ ! -s "$cout/img/bandwidth.png" ]; then
  grep -q 'install-deps.sh --bench' "$cout/performance.md" || t_fail "no plots and no note on what to install"
fi
n=$(ls "$cout"/data/*.csv | grep -vc summary.csv)
[ "$n" = 18 ] || t_fail "expected 18 kept CSVs (pingpong, stream: 3 configs; pairs: 1; 2 runs; goal-tcp: 2 configs, 2 rounds), found $n"
awk -F, 'NR > 1 { rows++; if ($4 != 2) bad = bad " runs=" $4;
                  for (i = 5; i <= 11; i += 3) if ($i != "" && !($(i+1) <= $i && $i <= $(i+2))) bad = bad " " $2 "/" $3 }
         END { if (rows != 18 || bad != "") { print "rows " rows ", bad:" bad; exit 1 } }' "$cout/data/summary.csv" \
  || t_fail "summary.csv: not 18 rows of 2 runs with min <= median <= max"
# the goals measured in paired rounds: the tcp group ran (both its configurations selected), the
# shared-memory ones did not (Open MPI and raw shm not selected) and say so
grep -qE '^\| TCP 8 B half round trip ≤ 1\.1x raw TCP \| 8 B \| [0-9.]+ µs \| [0-9.]+ µs \| [0-9.]+ \([0-9.]+–[0-9.]+\) \| [0-2]/2 \| (yes|\*\*no\*\*) \|$' \
  "$cout/performance.md" || t_fail "performance.md has no paired-round row for the tcp 8 B goal"
grep -q '^| streaming message rate ≥ 1.0x Open MPI | | | | not measured' "$cout/performance.md" \
  || t_fail "performance.md does not say the streaming goal was not measured"
# the ucx rows (a build with UCX and ucx_perftest installed): WaitIO over UCX's shared memory and
# ucx_perftest tag_lat with the same UCX_TLS, 8 B only, a few iterations, no goal rounds
ucx_note=""
if grep -q '^UCX_FOUND:INTERNAL=1' "$WAITIO_BUILD_DIR/CMakeCache.txt" 2>/dev/null && command -v ucx_perftest >/dev/null; then
  t_start compare_ucx 40 "$WAITIO_SOURCE_DIR/bench/compare" "$fake" -r 1 --sizes 8 --iter-scale 0.005 \
    --configs waitio-ucx-sm,ucx-perftest-sm --goal-rounds 0 --out "$T_DIR/ucx-out"
  t_wait compare_ucx || { t_show compare_ucx; t_fail "bench/compare with the ucx rows failed"; }
  grep -qE '^\| 8 B \| [0-9.]+ \| [0-9.]+ \|$' "$T_DIR/ucx-out/performance.md" \
    || t_fail "performance.md has no 8 B half round trip for WaitIO ucx (sm) and ucx_perftest (sm)"
  grep -q 'WaitIO ucx (sm) / ucx_perftest (sm)' "$T_DIR/ucx-out/performance.md" \
    || t_fail "performance.md has no WaitIO ucx / ucx_perftest ratio"
  ucx_note="; compare's ucx rows ran"
fi

# bench/run-collectives.sh, tiny: 2 PBs of 2 against one job of 4, one run; every operation and
# size must have its row, with auto, hierarchical and flat measured in the one WaitIO job
cbuild=$T_DIR/cbuild
mkdir -p "$cbuild/bench"
ln -s "$WAITIO_BUILD_DIR/src" "$cbuild/src"
ln -s "$WAITIO_BUILD_DIR/adapters" "$cbuild/adapters"
# a sanitizer build of the library needs its runtime linked into the program (first in the list)
san_flags=
ldd "$WAITIO_BUILD_DIR/src/libwaitio.so" | grep -q libasan && san_flags="-fsanitize=address,undefined"
t_start colls 60 env BENCH_CFLAGS="$san_flags" "$WAITIO_SOURCE_DIR/bench/run-collectives.sh" --modes auto,hier,flat "$cbuild" 2 5 1
t_wait colls || { t_show colls; t_fail "bench/run-collectives.sh failed"; }
rows=$(grep -cE '^\| (bcast|reduce|allreduce) \| [0-9]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| (hier|flat) \|$' "$T_DIR/colls.out")
[ "$rows" = 21 ] || { t_show colls; t_fail "run-collectives.sh printed $rows of 21 rows"; }
for mode in mpi auto hier flat; do
  [ "$(grep -c "^1,$mode," "$cbuild/bench/collectives.csv")" = 21 ] || t_fail "collectives.csv lacks mode $mode"
done
t_pass "pairs (1 PB, 2 PBs), stream and ping-pong ran; an odd PB is refused; the MPI twin ran with Open MPI and MPICH; compare wrote a scratch directory with CSVs, spread and paired goal rounds; run-collectives ran every mode$ucx_note"
