#!/usr/bin/env bash
# core_park.sh — parking (src/core/poller.h): a connection spun on wait after wait leaves the
# epoll set and must lose nothing — a ping-pong of random sizes and tags with every byte
# checked, a wait that has to block, polling without a wait, and (second run) the peer killed
# mid ping-pong: the survivor's receive must fail with a peer error, not hang. Over tcp, PB 0
# logs at debug level and must say its connection was parked (other transports have nothing
# to park; the same exchanges must pass).
# timeout: 90
set -euo pipefail
source "$(dirname "$0")/pbs.inc"
log0=()
[ "${WAITIO_TEST_TRANSPORTS:-}" = tcp ] && log0=(env WAITIO_LOG=debug)
pbs_instance 2
pbs_start 0 60 "${log0[@]}" "$TEST_PROGS/core_park" --rounds 3000
pbs_start 1 60 "$TEST_PROGS/core_park" --rounds 3000
pbs_wait || { echo "FAIL: the ping-pong, blocking or polling exchange failed"; exit 1; }
pbs_expect 0 "core_park ok: 6000 round trips"
if [ ${#log0[@]} -gt 0 ]; then
  pbs_expect 0 "parked (read directly"
fi
pbs_instance 2
pbs_start 0 60 "$TEST_PROGS/core_park" --rounds 1000 --kill
pbs_start 1 60 "$TEST_PROGS/core_park" --rounds 1000 --kill
pbs_wait || true # PB 1 was killed: PB 0's line below is what counts
pbs_expect 0 "core_park ok: peer loss seen"
echo PASS
