#!/usr/bin/env bash
# hostile_ports.sh — while a 3-PB job runs (a checked ring exchange, eager and rendezvous sizes),
# a client opens connections to every port the job listens on (the master's and every process's)
# and sends garbage, truncated headers, wrong magic/version/sequence, oversized lengths, data
# before authentication, a handshake with a wrong key, a replayed HELLO and a slow-loris partial
# header. Each must be closed by its target with a logged reason; the job must finish with every
# byte correct; no process may keep descriptors of the hostile connections.
# timeout: 180
set -euo pipefail
source "$(dirname "$0")/pbs.inc"
pbs_instance 3
export WAITIO_LOG=info WAITIO_HANDSHAKE_TIMEOUT=3 CORE_RING_REPORT_FDS=1
# 400 rounds 50 ms apart: the job runs at least 20 s, well past the attack (hostile_client.py
# attacks the ports at once: about two handshake timeouts of 3 s after the 1.5 s start-up)
pbs_start 0 150 env WAITIO_PB_RANK=0 WAITIO_PB_SIZE=1 "$TEST_PROGS/core_ring" 400 60 50
for pb in 1 2; do
  for r in 0 1; do
    WAITIO_PBID=$pb WAITIO_PB_RANK=$r WAITIO_PB_SIZE=2 setsid timeout 150 "$TEST_PROGS/core_ring" 400 60 50 \
      >"$PBS_DIR/pb$pb.$r" 2>&1 &
    PBS_PIDS+=($!)
  done
done
sleep 1.5   # everyone past start-up: only the data listeners remain
pids=$(for p in "${PBS_PIDS[@]}"; do pgrep -g "$(ps -o pgid= -p "$p" | tr -d ' ')" -f core_ring || true; done | sort -u)
python3 "$(dirname "$0")/hostile_client.py" $pids | tee "$PBS_DIR/attack"
pbs_wait || { echo "FAIL: the job failed under attack"; exit 1; }
pbs_expect 0 "core_ring ok: 5 processes, 400 rounds"
grep -q " 0 rejected\|STILL OPEN" "$PBS_DIR/attack" && { echo "FAIL: a hostile connection stayed open"; exit 1; }
logged=$(cat "$PBS_DIR"/pb* | grep -c -E "closing connection|authentication not completed|did not complete in time" || true)
tried=$(sed -n 's/hostile connections: \([0-9]*\) tried.*/\1/p' "$PBS_DIR/attack")
echo "rejections logged by the job: $logged (hostile connections: $tried)"
[ "$logged" -ge "$tried" ] || { echo "FAIL: only $logged of $tried rejections logged"; exit 1; }
# every process holds the same small number of descriptors at the end: none leaked
fds=$(cat "$PBS_DIR"/pb* | sed -n 's/.*: \([0-9]*\) open descriptors.*/\1/p' | sort -n | uniq)
echo "descriptors per process before finalize: $(echo $fds)"
max=$(echo "$fds" | tail -1)
[ "$max" -le 13 ] || { echo "FAIL: a process holds $max descriptors (leak?)"; exit 1; }
echo PASS
