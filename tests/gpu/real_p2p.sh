#!/usr/bin/env bash
# real_p2p.sh — on a GPU machine only (WAITIO_TEST_GPU_REAL=1, tests/gpu/run.sh; else exit 77 = skip):
# tests/gpu/gpu_p2p with sizes up to 64 MiB (the edges 0 B .. 8 MiB, then random, and 64 MiB
# itself), every kind pair (device/host each side), every byte checked: on one host (shm, large
# device messages through CUDA IPC) and over tcp only (staged through host memory).
# timeout: 60
set -uo pipefail
[ "${WAITIO_TEST_GPU_REAL:-0}" = 1 ] || { echo "real_p2p: skip (not on a GPU machine: WAITIO_TEST_GPU_REAL is not 1)"; exit 77; }
source "$WAITIO_SOURCE_DIR/tests/scripts/lib.sh"
t_require_progs gpu_p2p
seed=${WAITIO_TEST_SEED:-$RANDOM}
t_log "seed $seed"
for tp in shm,tcp tcp; do
  t_instance 2
  for n in 0 1; do
    t_start "$tp.$n" 50 env WAITIO_PBID=$n WAITIO_TRANSPORTS=$tp WAITIO_LOG=core=debug \
      "$TEST_PROGS/gpu_p2p" --seed "$seed" --kinds dd,dh,hd,hh --rounds 16 --max $((64 << 20))
  done
  for n in "$tp.0" "$tp.1"; do t_wait "$n" || { t_show_all; t_fail "$n failed (exit $(t_rc "$n"))"; }; done
  t_expect "$tp.0" '^gpu_p2p ok' "$tp: rank 0"
  t_log "$tp: $(grep -h 'exchanges checked\|device messages' "$(t_out "$tp.0")" | tr '\n' ' ')"
done
t_pass
