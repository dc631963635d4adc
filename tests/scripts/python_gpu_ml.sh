#!/usr/bin/env bash
# python_gpu_ml.sh — the ML example's GPU learner (examples/ml/learner_gpu.py) coupled with the
# C/MPI simulation, without a GPU: "--device fake" receives the simulation's state into and sends
# the prediction from device arrays of the CUDA test double (tests/gpu/fake_cuda.c: any CPU
# access to them crashes); the learned guess must save solver iterations. Then "--device auto"
# on this machine without PyTorch's CUDA must say why and fall back to host memory.
# timeout: 180
set -uo pipefail
source "$(dirname "$0")/lib.sh"
py=python3
"$py" -c "import numpy" 2>/dev/null || t_fail "NumPy is missing (python3 -m pip install numpy)"
t_python_fake_cuda
fake=$T_FAKE_CUDA
t_python_binding "$py" python-gpu
example=$WAITIO_SOURCE_DIR/examples/ml/run.sh

t_start fake 90 env WAITIO_CUDA_LIBRARY="$fake" bash "$example" "$WAITIO_BUILD_DIR" 40 gpu --device fake
t_wait fake || { t_show fake; t_fail "the example with the fake device failed (exit status $(t_rc fake))"; }
t_show fake
t_expect fake "^learner \(GPU variant, the fake CUDA device \(libwaitio_fakecuda.so\)\): 40 states received and 40 predictions sent in place; last model" \
  "the GPU learner's report"
pct=$(sed -n 's/.*, \([0-9]*\)% fewer.*/\1/p' "$(t_out fake)")
[ -n "$pct" ] && [ "$pct" -gt 0 ] || t_fail "the prediction from device memory saved no iterations"

if "$py" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
  t_log "PyTorch sees a GPU: the fallback is not exercised here"
else
  t_start auto 90 bash "$example" "$WAITIO_BUILD_DIR" 12 gpu
  t_wait auto || { t_show auto; t_fail "the example with --device auto failed (exit status $(t_rc auto))"; }
  t_show auto
  t_expect auto "^learner_gpu: PyTorch (is not installed|sees no CUDA device): falling back to host memory" "the fallback's reason"
  t_expect auto "^learner \(GPU variant, NumPy in host memory \(no GPU\)\): 12 states received" "the fallback learner's report"
fi
t_pass "the GPU learner on the fake device saved ${pct}% of the solver's iterations; without CUDA it falls back to host memory"
