#!/usr/bin/env bash
# sec_rma_flood.sh — issue 25 item 6 (one-sided part): a key holder must not grow a target's
# memory without bound by sending requests whose replies it never reads. The target
# (tests/progs/sec_rma_target flood, PB 0) shares a 64 MiB window with the key holder
# (tests/scripts/wio_attack.py rma-flood, PB 1) and 1 MiB with a well-behaved member (PB 2).
# The key holder sends, without ever reading:
#  - rpc: 1,000,000 zero-argument calls (of a handler the target does not have: each is answered
#    with an error). Before the fix calls were not counted at all: the target grew by ~260 MB
#    (1.04 GB for 4 M). Now the calls and replies it holds for one origin count against the cap
#    of 65,536 entries: the connection is dropped, logged, growth stays below 100 MB;
#  - get: 5,000 GETs of the whole window (WAITIO_RMA_MAX_QUEUED=64M at the target). Before, the
#    cap counted replies (65,536), not bytes: each 64 MiB reply's 256 queued pieces cost ~52 KB,
#    the target grew by ~260 MB (1.05 GB for 20,000). Now the bytes count: dropped at 64 MiB.
# Either way the target keeps running and then serves the member (a 1 MiB get, checked).
# timeout: 150
set -uo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/sec.inc"
t_require_progs sec_rma_target
proto=$(t_proto)
limit_kb=$((100 * 1024))
# sanitizer builds: larger allocations and ASan's quarantine of freed blocks
t_sanitized && limit_kb=$((400 * 1024))

# run_case KIND COUNT [VAR=VAL...]
run_case() {
  local kind=$1 count=$2
  shift 2
  t_instance 3
  local go="$T_DIR/$kind.go"
  t_start "$kind.target" 120 env WAITIO_PBID=0 WAITIO_LOG=warn WAITIO_TRANSPORTS=tcp "$@" \
    "$TEST_PROGS/sec_rma_target" target flood 64
  t_start "$kind.member" 120 env WAITIO_PBID=2 WAITIO_LOG=warn WAITIO_TRANSPORTS=tcp \
    "$TEST_PROGS/sec_rma_target" member "$go"
  for ((i = 0; i < 100; i++)); do
    ss -ltnH | awk '{ print $4 }' | grep -q ":$WAITIO_MASTER_PORT\$" && break
    sleep 0.05
  done
  t_start "$kind.attacker" 100 python3 "$T_ATTACK" --proto "$proto" rma-flood \
    --master-port "$WAITIO_MASTER_PORT" --npb 3 --kind "$kind" --count "$count" --hold 3
  # the attacker floods 2 s after joining: the target's size is taken before
  t_wait_line "$kind.target" "^ready" 30 || t_fail "$kind: the target did not start"
  local pid base peak
  pid=$(t_prog_pid "$kind.target" sec_rma_target) || t_fail "$kind: no target process"
  base=$(t_rss_kb "$pid" VmRSS)
  grep -q "^sent " "$(t_out "$kind.attacker")" && t_fail "$kind: the flood began before the target was measured"
  t_wait_line "$kind.attacker" "^connection: " 90 || t_fail "$kind: the attacker did not finish"
  peak=$(t_rss_kb "$pid" VmHWM)
  t_wait "$kind.attacker"
  touch "$go"
  t_wait "$kind.member"
  t_wait "$kind.target"
  t_show "$kind.attacker"
  t_show "$kind.target"
  t_show "$kind.member"
  GROWTH_KB=$((peak - base))
  t_log "$kind: target VmRSS $base KiB before the flood, peak $peak KiB: grew by $((GROWTH_KB / 1024)) MiB"
  [ "$(t_rc "$kind.attacker")" = 0 ] || t_fail "$kind: the attacker did not run to the end"
  ((GROWTH_KB < limit_kb)) || t_fail "$kind: the target grew by $((GROWTH_KB / 1024)) MiB (limit $((limit_kb / 1024)))"
  t_expect "$kind.target" "exceeded the one-sided queue limit" "$kind: the flooding origin is dropped, logged"
  t_expect "$kind.attacker" "^connection: closed" "$kind: the target closed the flooding connection"
  t_expect "$kind.target" "^served the member" "$kind: the target still serves the member"
  t_expect "$kind.member" "^member ok" "$kind: the member read the target's window"
  [ "$(t_rc "$kind.target")" = 0 ] || t_fail "$kind: the target failed (exit $(t_rc "$kind.target"))"
}

run_case rpc 1000000
run_case get 5000 WAITIO_RMA_MAX_QUEUED=64M
t_pass "call and GET floods: the origin is dropped, the target stays bounded and serves the member"
