#!/usr/bin/env bash
# ci_vcoll.sh — the conversion layer's v-collectives, reduce_scatter(_block), scan, exscan (each
# also in place) and non-blocking collectives on device buffers mixed with host buffers across
# ranks, with the CUDA driver's test double (tests/gpu/fake_cuda.c): 3 processes in 2 PBs
# (1 + 2), random block sizes and gaps, every byte checked by tests/gpu/gpu_vcoll.
# timeout: 90
set -uo pipefail
source "$WAITIO_SOURCE_DIR/tests/scripts/lib.sh"
t_require_progs gpu_vcoll
if [ "${WAITIO_TEST_GPU_REAL:-0}" = 1 ]; then # tests/gpu/run.sh on a GPU machine: the real driver
  driver=()
else
  : "${WAITIO_TEST_FAKE_CUDA:=$WAITIO_BUILD_DIR/tests/libwaitio_fakecuda.so}"
  [ -f "$WAITIO_TEST_FAKE_CUDA" ] || t_fail "no fake driver at $WAITIO_TEST_FAKE_CUDA"
  driver=(WAITIO_CUDA_LIBRARY="$WAITIO_TEST_FAKE_CUDA")
fi
t_instance 2
t_start pb0 80 env WAITIO_PBID=0 WAITIO_PB_RANK=0 WAITIO_PB_SIZE=1 "${driver[@]}" \
  "$TEST_PROGS/gpu_vcoll"
for r in 0 1; do
  t_start "pb1.$r" 80 env WAITIO_PBID=1 WAITIO_PB_RANK=$r WAITIO_PB_SIZE=2 "${driver[@]}" \
    "$TEST_PROGS/gpu_vcoll"
done
for n in pb0 pb1.0 pb1.1; do t_wait "$n" || { t_show_all; t_fail "$n failed (exit $(t_rc "$n"))"; }; done
t_expect pb0 '^gpu_vcoll ok: rank 0 of 3' "rank 0's verdict"
t_pass
