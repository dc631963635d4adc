#!/usr/bin/env bash
# real_python.sh — (a real GPU only: tests/gpu/run.sh runs it) the Python binding's device arrays
# (docs/python.md, "GPU arrays") with the real CUDA driver:
#   1. tests/python/pb_gpu.py "all" (what tests/scripts/python_gpu.sh runs in CI with the fake
#      driver), two PBs on this host: __cuda_array_interface__ and DLPack arrays of cuMemAlloc'ed
#      memory, device<->device (CUDA IPC) / device<->host, 0 B..4 MiB, every byte checked,
#      collectives, errors;
#   2. tests/python/gpu_torch_cupy.py: a PyTorch PB and a CuPy PB, device<->device 0 B..64 MiB
#      both ways, device<->host-memory PB 8 MiB, a side-stream kernel's output sent at once,
#      DLPack-only arrays, Allreduce/Bcast on device arrays; every byte checked on the GPU;
#   3. the ML example's GPU learner (examples/ml/run.sh ... gpu --device cuda): PyTorch on the
#      GPU receiving the C/MPI simulation's state into CUDA tensors; its guess must save
#      solver iterations.
# Exit 0 pass, 77 skip (no GPU, PyTorch, CuPy or NumPy; or run without WAITIO_TEST_GPU_REAL=1), else
# fail. The binding is built from the tree first (setup.py build, all cores; no downloads).
# timeout: 150
set -uo pipefail
source "$(dirname "$0")/../scripts/lib.sh"
py=python3
skip() { echo "SKIP: real_python: $*"; exit 77; }
[ "${WAITIO_TEST_GPU_REAL:-}" = 1 ] || skip "needs a real GPU (WAITIO_TEST_GPU_REAL=1, as tests/gpu/run.sh sets it)"
why=$("$py" - <<'PY' 2>&1
import importlib
for m in ("numpy", "torch", "cupy"):
    try:
        importlib.import_module(m)
    except Exception as e:  # noqa: BLE001
        raise SystemExit(f"{m} cannot be imported ({type(e).__name__}: {e})")
import torch
if not torch.cuda.is_available():
    raise SystemExit("PyTorch sees no CUDA device")
PY
) || skip "$why"
T_PYJOBS=$(nproc 2>/dev/null || echo 4)
if [ ! -e /usr/include/openssl/evp.h ] && [ -d "$WAITIO_SOURCE_DIR/.devdeps/include" ]; then
  # as tests/gpu/run.sh: OpenSSL's headers carried where the image lacks libssl-dev (then
  # libcrypto.so, the link-time name, is missing too: a link to the run-time library)
  mkdir -p "$T_DIR/lib"
  crypto=$(ls /usr/lib/x86_64-linux-gnu/libcrypto.so.3 /usr/lib64/libcrypto.so.3 2>/dev/null | head -1)
  [ -n "$crypto" ] && ln -sf "$crypto" "$T_DIR/lib/libcrypto.so"
  export CFLAGS="-I$WAITIO_SOURCE_DIR/.devdeps/include${CFLAGS:+ $CFLAGS}" LDFLAGS="-L$T_DIR/lib${LDFLAGS:+ $LDFLAGS}"
fi
t_python_binding "$py" python-gpu
t_log "binding built ($(t_elapsed) s)"

prog=$WAITIO_SOURCE_DIR/tests/python/pb_gpu.py
t_run_job pb_gpu 60 -- "$py" "$prog" all : -- "$py" "$prog" all
for r in 0 1; do
  t_expect pb_gpu "^pb_gpu ok: rank $r of 2: two-sided 15937593 bytes received and checked .*DLPack v1\+legacy \(4 deleter calls\), CPU DLPack; Allreduce/Reduce/Bcast/Allgather on device; errors; one-sided" \
    "rank $r's verdict (pb_gpu, real driver)"
done
t_log "pb_gpu with the real driver: passed ($(t_elapsed) s)"

prog=$WAITIO_SOURCE_DIR/tests/python/gpu_torch_cupy.py
t_run_job torch_cupy 90 -- "$py" "$prog" : -- "$py" "$prog"
t_expect torch_cupy "^gpu_torch_cupy ok: rank 0 \(PyTorch" "the PyTorch PB's verdict"
t_expect torch_cupy "^gpu_torch_cupy ok: rank 1 \(CuPy" "the CuPy PB's verdict"
t_log "PyTorch <-> CuPy: passed ($(t_elapsed) s)"

t_start ml 90 bash "$WAITIO_SOURCE_DIR/examples/ml/run.sh" "$WAITIO_BUILD_DIR" 40 gpu --device cuda
t_wait ml || { t_show ml; t_fail "the ML example's GPU learner failed (exit status $(t_rc ml))"; }
t_show ml
t_expect ml "^learner \(GPU variant, PyTorch on .*\): 40 states received and 40 predictions sent in place; last model" \
  "the GPU learner's report"
pct=$(sed -n 's/.*, \([0-9]*\)% fewer.*/\1/p' "$(t_out ml)")
[ -n "$pct" ] && [ "$pct" -gt 0 ] || t_fail "the learner's prediction from CUDA tensors saved no iterations"
t_pass "device arrays with the real driver (pb_gpu), PyTorch<->CuPy peers every byte checked, the GPU learner saved ${pct}% of the solver's iterations"
