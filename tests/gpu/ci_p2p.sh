#!/usr/bin/env bash
# ci_p2p.sh — two-sided messages from and to device memory without a GPU: the processes load the
# CUDA driver's test double (tests/gpu/fake_cuda.c, WAITIO_TEST_FAKE_CUDA), whose device pointers
# crash on any CPU access, and tests/gpu/gpu_p2p checks every byte (sizes 0 B - 8 MiB, random):
#  1. one host (shm): device->device (large messages through CUDA IPC: the receiver must report
#     IPC copies at finalize), device->host, host->device;
#  2. over tcp only: the same kinds, staged through host memory (no IPC copy);
#  3. a killed peer whose device memory the other holds mapped through CUDA IPC: the survivor's
#     receive fails with a peer error, it closes the mapping and finalizes;
#  4. no driver with the forced-device test hook: sends and receives fail with WAITIO_ERR_DEVICE.
# With WAITIO_TEST_GPU_REAL=1 (tests/gpu/run.sh on a GPU machine) the processes use the real driver
# (libcuda.so.1) and case 4 is skipped.
# timeout: 90
set -uo pipefail
source "$WAITIO_SOURCE_DIR/tests/scripts/lib.sh"
source "$WAITIO_SOURCE_DIR/tests/gpu/gpu_lib.sh"
t_require_progs gpu_p2p
gpu_driver
seed=${WAITIO_TEST_SEED:-$RANDOM}
t_log "seed $seed"

# pair NAME SECS ENV... -- ARGS...: ranks 0 and 1 as 2 PBs of one process each
pair() {
  local name=$1 secs=$2 envs=() n
  shift 2
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  t_instance 2
  for n in 0 1; do
    t_start "$name.$n" "$secs" env WAITIO_PBID=$n "${driver[@]}" "${envs[@]}" \
      "$TEST_PROGS/gpu_p2p" --seed "$seed" "$@"
  done
}
must_pass() {
  local n
  for n in "$@"; do t_wait "$n" || { t_show_all; t_fail "$n failed (exit $(t_rc "$n"))"; }; done
}
ipc_copies() { sed -n 's/.*device messages: \([0-9]*\) received through CUDA IPC.*/\1/p' "$(t_out "$1")" | head -1; }

pair shm 60 WAITIO_LOG=core=debug,gpu=info -- --kinds dd,dh,hd --rounds 16
must_pass shm.0 shm.1
t_expect shm.0 '^gpu_p2p ok: rank 0' "one host: rank 0's verdict"
c0=$(ipc_copies shm.0) c1=$(ipc_copies shm.1)
t_log "one host: messages received through CUDA IPC: ${c0:-0} and ${c1:-0}"
[ "${c0:-0}" -gt 0 ] && [ "${c1:-0}" -gt 0 ] || t_fail "one host: no device message went through CUDA IPC"

pair tcp 60 WAITIO_TRANSPORTS=tcp WAITIO_LOG=core=debug -- --kinds dd,hd --rounds 10
must_pass tcp.0 tcp.1
c0=$(ipc_copies tcp.0)
[ "${c0:-0}" = 0 ] || t_fail "over tcp: $c0 messages went through CUDA IPC"
grep -q 'sent staged through host memory' "$(t_out tcp.0)" || t_fail "over tcp: no staged device message"

pair die 40 WAITIO_LOG=gpu=info -- --die --max 3000000
t_wait die.0
[ "$(t_rc die.0)" = 137 ] || { t_show_all; t_fail "the dying rank ended with $(t_rc die.0), not SIGKILL"; }
must_pass die.1
t_expect die.1 'saw the peer.s death' "the survivor's receive"
t_expect die.1 'closed 1 CUDA IPC mapping' "the survivor closes the dead peer's mapping"

[ "${WAITIO_TEST_GPU_REAL:-0}" = 1 ] && t_pass "(the no-driver case skipped: real GPU)"
t_instance 2
for n in 0 1; do
  t_start "nodrv.$n" 30 env WAITIO_PBID=$n WAITIO_CUDA_LIBRARY=/nonexistent/libcuda.so.1 \
    WAITIO_TEST_GPU_FORCE_DEVICE=1 WAITIO_LOG=off "$TEST_PROGS/gpu_p2p" --no-device
done
must_pass nodrv.0 nodrv.1
t_expect nodrv.0 '^gpu_p2p ok' "no driver: rank 0"
t_pass
