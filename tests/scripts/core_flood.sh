#!/usr/bin/env bash
# core_flood.sh — a sender floods 1 GiB (16384 x 64 KiB) at a receiver that posts nothing for
# 4 s: the receiver's memory must stay under the cap (credit flow control holds the rest back
# at the sender), then every message arrives, in order, every byte checked.
# timeout: 180
set -euo pipefail
source "$(dirname "$0")/pbs.inc"
pbs_instance 2
pbs_start 0 170 "$TEST_PROGS/core_flood" 16384 65536 4 24
pbs_start 1 170 "$TEST_PROGS/core_flood" 16384 65536 4 24
pbs_wait || { echo "FAIL: the flood test failed"; exit 1; }
pbs_expect 1 "core_flood ok: 16384 messages"
echo PASS
