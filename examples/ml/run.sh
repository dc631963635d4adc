#!/usr/bin/env bash
# run.sh — the simulation + machine-learning coupling: a C/MPI heat simulation (Open MPI, 2
# ranks) streams its state to a Python learner over WaitIO and starts each implicit solve from
# the learner's prediction. Needs the project built and the Python binding installed
# (pip install . at the repository root). Usage: examples/ml/run.sh [build-dir] [steps] [learner [ARGS]]
# learner: cpu (learner.py, default) or gpu (learner_gpu.py ARGS: the state received into and the
# prediction sent from CUDA tensors; e.g. "gpu --device fake", see learner_gpu.py)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
steps=${2:-40}
case ${3:-cpu} in
  cpu) learner=("$here/learner.py") ;;
  gpu) learner=("$here/learner_gpu.py" "${@:4}") ;;
  *) echo "run.sh: learner must be cpu or gpu, not '$3'" >&2; exit 2 ;;
esac
out=$build/examples/ml
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Open MPI's top session directory is removed by the last job to end while another may be
# creating its own in it (two mpiruns started together: "mkdir ... File exists"): keep it non-empty
mkdir -p "${TMPDIR:-/tmp}/ompi.$(uname -n | cut -d. -f1).$(id -u)/waitio-keep"
python3 -c "import waitio, numpy" 2>/dev/null || { echo "run.sh: install the binding first: pip install $root" >&2; exit 1; }
san=""
if grep -q "^WAITIO_SANITIZE:BOOL=ON" "$build/CMakeCache.txt" 2>/dev/null; then
  san="-fsanitize=address,undefined -fno-omit-frame-pointer"   # match a sanitizer build
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
fi
# Open MPI: its Debian names where both MPIs are installed, else the plain ones
mpicc=$(command -v mpicc.openmpi || command -v mpicc) mpirun=$(command -v mpirun.openmpi || command -v mpirun)
"$mpicc" -std=c11 -D_GNU_SOURCE -O2 -Wall -Werror $san -I"$root/include" "$here/sim.c" -o "$out/sim" -lm \
  -L"$build/src" -Wl,-rpath,"$build/src" -lwaitio
if [ -x "$build/tools/waitiorun" ]; then
  timeout 120 "$build/tools/waitiorun" -- "$mpirun" --oversubscribe -np 2 "$out/sim" "$steps" \
    : -- python3 "${learner[@]}"
else
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  export WAITIO_NPB=2 WAITIO_MASTER_HOST=127.0.0.1 WAITIO_MASTER_PORT=$port WAITIO_KEY=ml-$(od -An -tx8 -N16 /dev/urandom | tr -d ' \n')
  WAITIO_PBID=0 timeout 120 "$mpirun" --oversubscribe -np 2 "$out/sim" "$steps" & pid=$!
  WAITIO_PBID=1 timeout 120 python3 "${learner[@]}"
  wait $pid
fi
