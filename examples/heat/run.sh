#!/usr/bin/env bash
# run.sh — the heat-coupling example (seed 000's Code-1/2/3), run twice on the same input:
#   1. coupled through WaitIO, all three codes at once, each with a different MPI:
#        Code-1 (Fortran, 1 process, Open MPI), Code-2 (C, 3 ranks, MPICH),
#        Code-3 (C, 2 ranks, Open MPI)
#   2. coupled through files (s1.out, s2.out), the way the codes were written originally;
# then compares Code-2's and Code-3's per-step results digit for digit.
# Usage: examples/heat/run.sh [build-dir]     (the project must be built there already)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
out=$build/examples/heat
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Open MPI's top session directory is removed by the last job to end while another may be
# creating its own in it (two mpiruns started together: "mkdir ... File exists"): keep it non-empty
mkdir -p "${TMPDIR:-/tmp}/ompi.$(uname -n | cut -d. -f1).$(id -u)/waitio-keep"
inc="-I$root/include"
lib="-L$build/src -Wl,-rpath,$build/src -lwaitio"
ad="-L$build/adapters -Wl,-rpath,$build/adapters -Wl,--no-as-needed"
if grep -q "^WAITIO_SANITIZE:BOOL=ON" "$build/CMakeCache.txt" 2>/dev/null; then
  san="-fsanitize=address,undefined -fno-omit-frame-pointer"   # match a sanitizer build
  inc="$inc $san"
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}         # MPI libraries leak at exit
fi

echo "== building the three codes"
mpif90.openmpi -O2 -fallow-argument-mismatch ${san:-} -I$root/include "$here/code1_waitio.f" -o "$out/code1_waitio" \
  $ad -lwaitio_adapter_openmpi -Wl,--as-needed $lib
mpif90.openmpi -O2 "$here/code1_file.f" -o "$out/code1_file"
mpicc.mpich -std=c11 -D_GNU_SOURCE -O2 -Wall -Werror $inc "$here/heat.c" -o "$out/heat.mpich" -lm \
  $ad -lwaitio_adapter_mpich -Wl,--as-needed $lib
mpicc.openmpi -std=c11 -D_GNU_SOURCE -O2 -Wall -Werror $inc "$here/heat.c" -o "$out/heat.ompi" -lm \
  $ad -lwaitio_adapter_openmpi -Wl,--as-needed $lib

steps=$(awk '{ printf "%d", $2 / $3 + 0.5 }' "$here/s1.dat")
code2=(mpirun.mpich -np 3 "$out/heat.mpich" --code 2 --steps "$steps")
code3=(mpirun.openmpi --oversubscribe -np 2 "$out/heat.ompi" --code 3 --steps "$steps")

run_dir() { rm -rf "$1" && mkdir -p "$1" && cp "$here/s1.dat" "$1/"; }

echo "== 1. WaitIO coupling: Code-1 | Code-2 | Code-3 running together"
run_dir "$out/waitio"
cd "$out/waitio"
start=$(date +%s%N)
if [ -x "$build/tools/waitiorun" ]; then
  timeout 120 "$build/tools/waitiorun" -- mpirun.openmpi --oversubscribe -np 1 "$out/code1_waitio" \
    : -- "${code2[@]}" --coupling waitio : -- "${code3[@]}" --coupling waitio
else
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  export WAITIO_NPB=3 WAITIO_MASTER_HOST=127.0.0.1 WAITIO_MASTER_PORT=$port
  export WAITIO_KEY=heat-$(od -An -tx8 -N16 /dev/urandom | tr -d ' \n')
  pids=()
  WAITIO_PBID=0 timeout 120 mpirun.openmpi --oversubscribe -np 1 "$out/code1_waitio" & pids+=($!)
  WAITIO_PBID=1 timeout 120 "${code2[@]}" --coupling waitio & pids+=($!)
  WAITIO_PBID=2 timeout 120 "${code3[@]}" --coupling waitio & pids+=($!)
  for p in "${pids[@]}"; do wait "$p"; done
fi
echo "   took $(( ($(date +%s%N) - start) / 1000000 )) ms"

echo "== 2. file coupling: the same codes exchanging s1.out and s2.out"
run_dir "$out/file"
cd "$out/file"
start=$(date +%s%N)
pids=()
timeout 120 mpirun.openmpi --oversubscribe -np 1 "$out/code1_file" & pids+=($!)
timeout 120 "${code2[@]}" --coupling file & pids+=($!)
timeout 120 "${code3[@]}" --coupling file & pids+=($!)
for p in "${pids[@]}"; do wait "$p"; done
echo "   took $(( ($(date +%s%N) - start) / 1000000 )) ms"

echo "== comparing the results"
status=0
for f in t2.lst t3.lst s1.out; do
  if cmp -s "$out/waitio/$f" "$out/file/$f"; then
    echo "   $f: identical ($(wc -l <"$out/waitio/$f") lines)"
  else
    echo "   $f: DIFFERENT"; diff "$out/waitio/$f" "$out/file/$f" | head -5; status=1
  fi
done
echo "   last step of Code-3 (step, time, source, Tmax, Tsum): $(tail -1 "$out/waitio/t3.lst")"
[ $status -eq 0 ] && echo "heat coupling: WaitIO and file coupling give identical numbers"
exit $status
