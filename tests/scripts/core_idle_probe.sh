#!/usr/bin/env bash
# core_idle_probe.sh — with WAITIO_MAX_CONNECTIONS=1, a peer killed after its idle connection was
# closed still fails the receive waiting on it (the waiting side probes it) instead of hanging.
# timeout: 60
set -euo pipefail
source "$(dirname "$0")/pbs.inc"
pbs_instance 3
export WAITIO_MAX_CONNECTIONS=1 WAITIO_LOG=${WAITIO_LOG:-}
for pb in 0 1 2; do pbs_start $pb 40 "$TEST_PROGS/core_idle_probe"; done
status=0
pbs_wait || status=1
# PB 1 kills itself on purpose: only PB 0 and PB 2 must succeed
pbs_expect 1 "idle connection closed, dying"
pbs_expect 0 "receive from the dead PB 1 failed after"
pbs_expect 0 "PB 0 done"
pbs_expect 2 "PB 2 done"
echo PASS
