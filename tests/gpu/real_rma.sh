#!/usr/bin/env bash
# real_rma.sh — one-sided device-to-device figures on a GPU machine (tests/gpu/run.sh): rank 0
# puts and gets 64 MiB and 8 B between its device memory and rank 1's device window part, 9 rounds
# each (medians; the data checked), on one host through CUDA IPC and over tcp through frames.
# Skipped (exit 77) unless WAITIO_TEST_GPU_REAL=1; with the fake driver it runs by hand for debugging
# (WAITIO_TEST_GPU_REAL=1 WAITIO_CUDA_LIBRARY=.../libwaitio_fakecuda.so).
# timeout: 60
set -uo pipefail
if [ "${WAITIO_TEST_GPU_REAL:-0}" != 1 ]; then echo "real_rma: skip (not on a GPU machine: WAITIO_TEST_GPU_REAL is not 1)"; exit 77; fi
source "$(dirname "$0")/../scripts/lib.sh"
t_require_progs gpu_rma
run=$WAITIO_BUILD_DIR/tools/waitio-oshrun
R=$TEST_PROGS/gpu_rma
for size in 67108864 8; do
  t_run_job "ipc-$size" 25 -- "$run" -np 2 "$R" --bench "$size"
  t_expect "ipc-$size" "^gpu_rma bench: $size B" "the figures"
  t_run_job "tcp-$size" 25 WAITIO_TRANSPORTS=tcp -- "$run" -np 1 "$R" --bench "$size" : -- "$run" -np 1 "$R" --bench "$size"
  t_expect "tcp-$size" "^gpu_rma bench: $size B" "the figures"
done
for n in ipc-67108864 ipc-8 tcp-67108864 tcp-8; do echo "real_rma: ${n%%-*}: $(grep -h '^gpu_rma bench:' "$(t_out "$n")")"; done
t_pass "one-sided device->device through CUDA IPC and over tcp"
