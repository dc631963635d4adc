#!/usr/bin/env bash
# core_fd_cap.sh — descriptors stay capped: 33 processes (2 PBs of 16 and 17, plain programs),
# all-to-all exchanges in 3 rounds with WAITIO_MAX_CONNECTIONS=8: idle connections are closed and
# reopened as needed, every message arrives intact and in order, and no process holds more than
# the cap plus its few fixed descriptors.
# timeout: 240
set -euo pipefail
source "$(dirname "$0")/pbs.inc"
pbs_instance 2
export WAITIO_MAX_CONNECTIONS=8
base=$(ls /proc/self/fd | wc -l)
limit=$((8 + 7 + 8))   # the cap; 7 fixed (stdio, epoll, listener, ...); a few mid-close
for pb in 0 1; do
  n=$((16 + pb))
  for ((r = 0; r < n; r++)); do
    WAITIO_PBID=$pb WAITIO_PB_RANK=$r WAITIO_PB_SIZE=$n setsid timeout 220 \
      "$TEST_PROGS/core_alltoall" 3 $limit >"$PBS_DIR/pb$pb.$r" 2>&1 &
    PBS_PIDS+=($!)
  done
done
status=0
pbs_wait >"$PBS_DIR/all.log" 2>&1 || status=1
grep -h "core_alltoall" "$PBS_DIR"/pb* | sort | head -40
if [ $status != 0 ]; then
  # Once one process fails, the others lose it in turn ("has exited"): the warnings that are not
  # such echoes name the first failure (set WAITIO_LOG=debug for the connections' histories).
  echo "FAIL: a process failed; warnings other than losing a process that had exited:"
  grep -H "WARN\|ERROR" $(grep -L "rounds with 32 peers ok" "$PBS_DIR"/pb*) | grep -v "has exited" |
    sed "s|^$PBS_DIR/||" | head -40
  exit 1
fi
ok=$(cat "$PBS_DIR"/pb* | grep -c "rounds with 32 peers ok")
[ "$ok" = 33 ] || { echo "FAIL: $ok of 33 processes reported success"; exit 1; }
echo "peak descriptors per process: $(cat "$PBS_DIR"/pb* | sed -n 's/.*at most \([0-9]*\) descriptors.*/\1/p' | sort -n | uniq -c | tr '\n' ' ')"
echo PASS
