#!/usr/bin/env bash
# run-device.sh — everything measured on a lent 16-core GPU node in one go (issues 29 and 31):
# builds the library there, then (each part bounded in time, a failure of one does not stop the
# others) the collective paths of 2 PBs x 8 Open MPI processes, each PB on its own 8 cores, against
# one Open MPI job of 16 (with a table waitio-tune writes first); plain-process start-up at
# 2 x 4,000; and the GPU tests and benchmark (tests/gpu/run.sh). Logs go to $OUT (or ./device-out).
# Usage: bench/run-device.sh [parts=build,coll,scale,gpu]
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/device-out}
mkdir -p "$out"
parts=${1:-build,gpu,coll,scale}
b=/tmp/waitio-build
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 MPIRUN=${MPIRUN:-mpirun} MPICC=${MPICC:-mpicc}
export PYTHONUNBUFFERED=1
t0=$(date +%s)
stamp() { echo "=== $(($(date +%s) - t0)) s: $*"; }
want() { [[ ",$parts," == *",$1,"* ]]; }
summary=()

stamp "machine"
{ uname -a; nproc; free -g | head -2; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  mpirun --version | head -1; cmake --version | head -1; gcc --version | head -1
  python3 -c 'import torch, cupy; print("torch", torch.__version__, "cuda", torch.cuda.is_available(), "cupy", cupy.__version__)'
} 2>&1 | tee "$out/machine.txt"

if want build; then
  stamp "build"
  ssl=()
  if [ ! -e /usr/include/openssl/evp.h ] && [ -d "$root/.devdeps/include" ]; then
    # the image has libcrypto.so.3 but maybe not its headers: the carried ones (OpenSSL 3.0)
    lib=$(ls /usr/lib/x86_64-linux-gnu/libcrypto.so.3 /usr/lib64/libcrypto.so.3 2>/dev/null | head -1)
    ssl=(-DOPENSSL_INCLUDE_DIR="$root/.devdeps/include" -DOPENSSL_CRYPTO_LIBRARY="$lib")
    mkdir -p "$root/.devdeps/lib" && ln -sf "$lib" "$root/.devdeps/lib/libcrypto.so"
    export CFLAGS="-I$root/.devdeps/include" LDFLAGS="-L$root/.devdeps/lib" # the Python binding's build
    echo "OpenSSL headers carried (none installed here)"
  fi
  if cmake -S "$root" -B "$b" -DCMAKE_BUILD_TYPE=Release -DWAITIO_MPI_COMPILERS="$MPICC" "${ssl[@]}" \
       >"$out/build.log" 2>&1 && cmake --build "$b" -j16 >>"$out/build.log" 2>&1; then
    summary+=("build: ok")
  else
    summary+=("build: FAILED (build.log)"); tail -40 "$out/build.log"
  fi
fi

if want coll; then
  stamp "collectives 2 x 8, each PB on its own 8 cores, vs one Open MPI job of 16"
  mkdir -p /tmp/tune
  timeout 100 "$b/tools/waitio-tune" -n 2 -p 8 --cpu-sets 0-7:8-15 --mpirun mpirun --mpicc "$MPICC" \
    --adapter openmpi --workdir /tmp/tune -o "$out/coll-2x8.tbl" >"$out/tune.log" 2>&1 &&
    summary+=("waitio-tune: ok") || summary+=("waitio-tune: FAILED (tune.log)")
  cat "$out/coll-2x8.tbl" 2>/dev/null
  WAITIO_LOG=coll=info timeout 40 "$b/tools/waitio-tune" -n 2 -p 8 --cpu-sets 0-7:8-15 --mpirun mpirun \
    --bench /tmp/tune/waitio-bench-coll --model >"$out/model.log" 2>&1 || summary+=("model: FAILED (model.log)")
  grep -E "model|agreed|paths for" "$out/model.log" | sort | uniq | head -30
  table=()
  [ -s "$out/coll-2x8.tbl" ] && table=(--env WAITIO_COLL_TABLE="$out/coll-2x8.tbl")
  timeout 150 "$root/bench/run-collectives.sh" --cpu-set "${table[@]}" "$b" 8 100 3 >"$out/coll-table.log" 2>&1
  rc=$?; tail -45 "$out/coll-table.log"
  [ $rc = 0 ] && summary+=("collectives with the table: ok") || summary+=("collectives with the table: FAILED rc $rc (coll-table.log)")
  timeout 70 "$root/bench/run-collectives.sh" --cpu-set --env WAITIO_COLL_TABLE=none --modes auto "$b" 8 100 2 >"$out/coll-model.log" 2>&1
  rc=$?; tail -30 "$out/coll-model.log"
  [ $rc = 0 ] && summary+=("collectives with the model: ok") || summary+=("collectives with the model: FAILED rc $rc (coll-model.log)")
fi

if want scale; then
  stamp "plain-process start-up, 2 PBs of N"
  SCALE_TIMEOUT=60 timeout 130 "$root/bench/run-scale.sh" "$b" 1000 4000 >"$out/scale.log" 2>&1
  rc=$?; tail -20 "$out/scale.log"
  [ $rc = 0 ] && summary+=("scale: ok") || summary+=("scale: FAILED rc $rc (scale.log)")
fi

if want gpu; then
  stamp "GPU tests and benchmark"
  WAITIO_TEST_GPU_LOG_DIR=$out/gpu-logs timeout 230 "$root/tests/gpu/run.sh" "$b" >"$out/gpu.log" 2>&1
  rc=$?; tail -70 "$out/gpu.log"
  (cd "$out" && tar czf gpu-logs.tgz gpu-logs 2>/dev/null && rm -rf gpu-logs)
  echo "8 B latency again with a longer spin before blocking (WAITIO_SPIN_US=5000):"
  WAITIO_SPIN_US=5000 timeout 60 "$root/bench/gpu_bench.sh" "$b" --cases lat 2>&1 | grep "gpu_bench"
  [ $rc = 0 ] && summary+=("gpu: ok") || summary+=("gpu: FAILED rc $rc (gpu.log)")
fi

if want mpistart; then
  stamp "waitio_init's share of MPI start-up, 2 PBs of P Open MPI processes"
  timeout 150 "$root/bench/run-mpi-startup.sh" "$b" 16 64 128 2>&1 | tee "$out/mpistart.log"
  [ "${PIPESTATUS[0]}" = 0 ] && summary+=("mpistart: ok") || summary+=("mpistart: FAILED")
fi

if want collmodel; then
  stamp "collectives 2 x 8 with the start-up model alone"
  timeout 70 "$root/bench/run-collectives.sh" --cpu-set --env WAITIO_COLL_TABLE=none --env WAITIO_LOG=coll=info \
    --modes auto "$b" 8 100 2 >"$out/coll-model.log" 2>&1
  rc=$?; grep -h "paths for\|model:" "$out/coll-model.log" | sort -u | head; tail -24 "$out/coll-model.log"
  [ $rc = 0 ] && summary+=("collectives with the model: ok") || summary+=("collectives with the model: FAILED rc $rc (coll-model.log)")
fi

if want mps; then
  # Two processes that take turns on one GPU pay a switch of GPU context at each turn; the
  # Multi-Process Service shares one context between them
  stamp "8 B device latency under CUDA MPS"
  if command -v nvidia-cuda-mps-control >/dev/null; then
    export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
    mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
    nvidia-cuda-mps-control -d && sleep 1
    timeout 60 "$root/bench/gpu_bench.sh" "$b" --cases lat 2>&1 | grep "gpu_bench" | head -4
    echo quit | nvidia-cuda-mps-control
    summary+=("mps: ran")
  else
    echo "no nvidia-cuda-mps-control here"; summary+=("mps: not available")
  fi
fi

stamp "done"
printf '%s\n' "${summary[@]}" | tee "$out/summary.txt"
