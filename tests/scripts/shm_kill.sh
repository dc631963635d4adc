#!/usr/bin/env bash
# shm_kill.sh — a PB is SIGKILLed while two others stream to it through shared memory
# (WAITIO_TRANSPORTS=shm): the senders get WAITIO_ERR_PEER, finalize and exit 0, nothing hangs,
# and no shared-memory segment of any of the three processes is left in /dev/shm; the victim's
# local socket and liveness lock are removed by the next process that opens the shm transport.
# timeout: 90
set -euo pipefail
source "$(dirname "$0")/pbs.inc"
pbs_instance 3
export WAITIO_TRANSPORTS=shm WAITIO_LOG=debug
seed=${WAITIO_TEST_SEED:-$RANDOM}
echo "seed $seed"
for pb in 0 1 2; do pbs_start $pb 70 "$TEST_PROGS/core_stream_victim" "$seed"; done
victim=""
for _ in $(seq 1 300); do
  victim=$(sed -n 's/^READY pid=\([0-9]*\).*/\1/p' "$PBS_DIR/pb0" 2>/dev/null || true)
  [ -n "$victim" ] && break
  sleep 0.1
done
[ -n "$victim" ] || { cat "$PBS_DIR"/pb*; echo "FAIL: the receiver never got a message"; exit 1; }
sleep 0.5
lockfile=$(for f in /proc/"$victim"/fd/*; do readlink "$f"; done 2>/dev/null | grep -E '/waitio-[0-9]+/[0-9a-f]{16}\.lock$' || true)
[ -n "$lockfile" ] || { echo "FAIL: the receiver holds no liveness lock of the shm transport"; exit 1; }
sockfile=${lockfile%.lock}.sock
[ -S "$sockfile" ] || { echo "FAIL: no socket $sockfile beside the lock"; exit 1; }
echo "kill -9 $victim (the receiver, PB 0)"
kill -9 "$victim"
pids=$(pgrep -f "core_stream_victim $seed" | tr '\n' ' ' || true)
status=0
pbs_wait > "$PBS_DIR/all.log" 2>&1 || status=1
grep -h "core_stream_victim\|shm id" "$PBS_DIR"/pb* | sort | uniq -c | sort -rn | head -20
for pb in 1 2; do
  pbs_expect $pb "then connection to the peer lost"
  pbs_expect $pb "process $pb done"
  grep -q "open (.* shm id" "$PBS_DIR/pb$pb" || { echo "FAIL: PB $pb did not use shared memory"; exit 1; }
done
left=$(ls /dev/shm 2>/dev/null | grep -E "^waitio-[0-9]+-($(echo "$victim $pids" | tr ' ' '\n' | grep . | paste -sd'|'))-" || true)
[ -z "$left" ] || { echo "FAIL: shared-memory segments left behind: $left"; exit 1; }
# (another WaitIO process of this user starting meanwhile may have swept it already)
swept_before=1
[ -e "$sockfile" ] && swept_before=0
pbs_instance 1
WAITIO_LOG=debug WAITIO_PBID=0 WAITIO_PB_RANK=0 WAITIO_PB_SIZE=1 timeout 20 "$TEST_PROGS/init_probe" --label sweep >"$PBS_DIR/sweep" 2>&1 ||
  { cat "$PBS_DIR/sweep"; echo "FAIL: a fresh process did not start"; exit 1; }
[ ! -e "$sockfile" ] && [ ! -e "$lockfile" ] ||
  { echo "FAIL: the next process left the dead socket $sockfile / $lockfile in place"; exit 1; }
# the socket was there after the kill and is gone now, so the sweep ran; usually in the fresh
# process, but a WaitIO process of another test (ctest -j) may get there between the two checks
if [ $swept_before = 0 ] && ! grep -q "removed the socket $sockfile" "$PBS_DIR/sweep"; then
  echo "NOTE: another WaitIO process of this user swept $sockfile before the fresh one did"
fi
echo PASS
