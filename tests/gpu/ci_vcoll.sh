#!/usr/bin/env bash
# ci_vcoll.sh — the conversion layer's v-collectives, reduce_scatter(_block), scan, exscan (each
# also in place) and non-blocking collectives on device buffers mixed with host buffers across
# ranks, with the CUDA driver's test double (tests/gpu/fake_cuda.c): 3 processes in 2 PBs
# (1 + 2), random block sizes and gaps, every byte checked by tests/gpu/gpu_vcoll.
# timeout: 90
set -uo pipefail
source "$WAITIO_SOURCE_DIR/tests/scripts/lib.sh"
source "$WAITIO_SOURCE_DIR/tests/gpu/gpu_lib.sh"
t_require_progs gpu_vcoll
gpu_run_3 gpu_vcoll 80
t_pass
