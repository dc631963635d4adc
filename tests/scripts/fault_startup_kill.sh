#!/usr/bin/env bash
# fault_startup_kill.sh — SIGKILL during start-up. (a) One process of PB 1 is killed before it
# registers: the others' waitio_init fails within its 4 s timeout with a message naming PB 1.
# (b) The master (PB 0 rank 0) is killed while the others wait for the table: they fail within
# their timeout naming the master. (c) Through waitiorun: a PB killed during start-up makes
# waitiorun stop the rest and exit non-zero, leaving nothing behind.
# timeout: 120
set -euo pipefail
source "$(dirname "$0")/pbs.inc"
ring=$TEST_PROGS/core_ring
fail() { echo "FAIL: $*"; exit 1; }

echo "== (a) a PB 1 process killed before registering"
pbs_instance 2
start=$(date +%s%N)
pbs_start 0 30 env WAITIO_PB_RANK=0 WAITIO_PB_SIZE=1 "$ring" 3 4
WAITIO_PBID=1 WAITIO_PB_RANK=0 WAITIO_PB_SIZE=2 setsid timeout 30 "$ring" 3 4 >"$PBS_DIR/pb1.0" 2>&1 &
PBS_PIDS+=($!)
WAITIO_PBID=1 WAITIO_PB_RANK=1 WAITIO_PB_SIZE=2 setsid bash -c "sleep 30; exec $ring 3 4" >"$PBS_DIR/pb1.1" 2>&1 &
victim=$!
sleep 0.5
kill -9 -- -$victim
pbs_wait && fail "start-up succeeded without PB 1 rank 1"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
grep -q "PB 1 (1 of 2 processes registered)" "$PBS_DIR/pb0" || fail "the master did not name PB 1"
grep -q "timed out" "$PBS_DIR/pb1.0" || fail "PB 1 rank 0 did not time out"
[ $ms -lt 9000 ] || fail "took $ms ms"
echo "ok: failed in $ms ms naming PB 1"

echo "== (b) the master killed while the others wait"
pbs_instance 2
start=$(date +%s%N)
pbs_start 0 30 env WAITIO_PB_RANK=0 WAITIO_PB_SIZE=2 "$ring" 3 4
master=${PBS_PIDS[0]}
WAITIO_PBID=1 setsid timeout 30 "$ring" 3 4 >"$PBS_DIR/pb1" 2>&1 &
PBS_PIDS+=($!)
sleep 0.7
kill -9 -- -$master
pbs_wait && fail "start-up succeeded without the master"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
grep -q "master" "$PBS_DIR/pb1" || fail "PB 1 did not name the master"
[ $ms -lt 9000 ] || fail "took $ms ms"
echo "ok: PB 1 failed in $ms ms naming the master"

echo "== (c) through waitiorun"
# the job's processes carry a marker of this run in their environment: a test running beside
# this one (ctest -j) may run core_ring too, and its processes are not ours left behind
marker=fault-startup-kill-$$-$RANDOM
set +e
start=$(date +%s%N)
timeout 60 env FAULT_STARTUP_KILL_RUN="$marker" "$WAITIO_BUILD_DIR/tools/waitiorun" --grace 1 -- "$ring" 3 10 \
  : -- bash -c "$ring 3 10 & sleep 0.3; kill -9 \$!; exit 137"
rc=$?
set -e
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ $rc = 137 ] || fail "waitiorun exited $rc, expected 137"
[ $ms -lt 5000 ] || fail "waitiorun took $ms ms to stop the rest"
sleep 0.3
left=$(grep -lsz "^FAULT_STARTUP_KILL_RUN=$marker\$" /proc/[0-9]*/environ || true)
[ -z "$left" ] || fail "processes left behind: $(echo "$left" | cut -d/ -f3 | xargs -r ps -o pid,args -p)"
echo "ok: waitiorun stopped everything in $ms ms with status 137"
echo PASS
