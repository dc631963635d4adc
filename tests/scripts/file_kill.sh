#!/usr/bin/env bash
# file_kill.sh — a reader that dies in file mode is noticed in bounded time, never a hang: two
# PBs stream to PB 0 through files with a small budget (WAITIO_MAXFILE_SIZE_PER_PROC=256K, so
# the writers soon wait for it to consume); PB 0 is SIGKILLed. Both writers' requests fail with
# WAITIO_ERR_PEER within 12 s although WAITIO_PEER_TIMEOUT is 30 (its heartbeat stopped and it
# ran on this host under a pid that is gone), they finalize and exit 0. Killed writers and
# other exits are mp_peer_exit.file's cases.
# timeout: 120
set -uo pipefail
source "$(dirname "$0")/lib.sh"
t_require_progs core_stream_victim
shared=$T_DIR/shared
mkdir -p "$shared"
seed=${WAITIO_TEST_SEED:-$RANDOM}
t_instance 3
common=(WAITIO_TRANSPORTS=file WAITIO_SCRATCH_DIR="$shared" WAITIO_MAXFILE_SIZE_PER_PROC=256K
        WAITIO_LOG=info WAITIO_PEER_TIMEOUT=30)
for pb in 0 1 2; do
  t_start "pb$pb" 70 env "${common[@]}" WAITIO_PBID=$pb "$TEST_PROGS/core_stream_victim" "$seed"
done
t_wait_line pb0 '^READY pid=' 40 || { t_show_all; t_fail "the receiver never got a message"; }
victim=$(sed -n 's/^READY pid=\([0-9]*\).*/\1/p' "$(t_out pb0)")
sleep 0.5
t0=$(t_now)
t_log "kill -9 $victim (the reader, PB 0)"
kill -9 "$victim"
bad=()
for pb in 1 2; do t_wait "pb$pb" || bad+=("pb$pb:$(t_rc "pb$pb")"); done
dt=$(t_since "$t0")
t_log "both writers done $dt s after the kill"
[ ${#bad[@]} -eq 0 ] || { t_show_all; t_fail "writers failed (name:exit status): ${bad[*]}"; }
for pb in 1 2; do
  t_expect "pb$pb" "then connection to the peer lost" "PB $pb: the failure"
  t_expect "pb$pb" "process $pb done" "PB $pb: finalize"
done
awk -v d="$dt" 'BEGIN { exit !(d < 12) }' || t_fail "the writers took $dt s to notice (bound: 12 s)"
grep -h "has exited\|no heartbeat" "$T_DIR"/pb1.out "$T_DIR"/pb2.out | head -2
t_pass "seed $seed"
