#!/usr/bin/env bash
# file_hybrid.sh — WAITIO_COMM_TYPE=hybrid (the original's WaitIO-Hybrid): messages below the
# threshold travel over the fastest reachable transport, the data of messages at or above it
# through files, in order with everything else (the rendezvous request still goes on the main
# connection). With the original's misspelled WAITIO_HYBRID_THRESHOULD=65536, every phase of the
# exchange test passes (every byte checked), and the counters each process prints at finalize
# show both paths used: rendezvous data on the main connection (64 KiB - 1 and below: eager or
# small rendezvous) and on the bulk one (the larger sizes). Then the same with
# WAITIO_TRANSPORTS=tcp set as well: it wins, and no file is used. waitio-info shows the choice.
# timeout: 150
set -uo pipefail
source "$(dirname "$0")/lib.sh"
t_require_progs exchange
shared=$T_DIR/shared
mkdir -p "$shared"
seed=${WAITIO_TEST_SEED:-$RANDOM}
args=(--alarm 100 --op-timeout 90 --init-timeout 30 --phases ABCDE --seed "$seed")

run() { # run NAME VAR=VAL...: 2 PBs (1 + 1 process)
  local name=$1
  shift
  t_instance 2
  for pb in 0 1; do
    t_start "$name.pb$pb" 120 env WAITIO_COMM_TYPE=hybrid WAITIO_HYBRID_THRESHOULD=65536 WAITIO_EAGER_LIMIT=16K \
      WAITIO_SCRATCH_DIR="$shared" WAITIO_LOG=debug "$@" WAITIO_PBID=$pb WAITIO_PB_RANK=0 WAITIO_PB_SIZE=1 \
      "$TEST_PROGS/exchange" "${args[@]}"
  done
  local bad=()
  for pb in 0 1; do t_wait "$name.pb$pb" || bad+=("$name.pb$pb:$(t_rc "$name.pb$pb")"); done
  [ ${#bad[@]} -eq 0 ] || { t_show_all; t_fail "processes failed (name:exit status): ${bad[*]}"; }
  t_expect "$name.pb0" '^exchange ok: 2 processes, 2 PBs, phases ABCDE' "$name: universe rank 0's verdict"
}
counts() { # counts NAME: "main bulk" rendezvous data sends of both processes together
  cat "$T_DIR/$1".pb*.out | sed -n 's/.*rendezvous data sent: \([0-9]*\) on the main connection, \([0-9]*\) on the bulk one.*/\1 \2/p' |
    awk '{m += $1; b += $2} END {print m + 0, b + 0}'
}

info=$(env WAITIO_COMM_TYPE=hybrid WAITIO_HYBRID_THRESHOULD=65536 WAITIO_SCRATCH_DIR="$shared" \
       "$WAITIO_BUILD_DIR/tools/waitio-info" | grep -E "COMM_TYPE|THRESHOLD")
echo "$info" | sed 's/^/  waitio-info: /'
# (shm,ucx,tcp when built with UCX: UCX between hosts)
echo "$info" | grep -Eq "WAITIO_COMM_TYPE=hybrid -> transports shm,(ucx,)?tcp, and file for large messages' data" &&
  echo "$info" | grep -q "WAITIO_HYBRID_THRESHOLD=65536" || t_fail "waitio-info does not show the hybrid choice"

err=$(env -u WAITIO_SCRATCH_DIR WAITIO_COMM_TYPE=file "$WAITIO_BUILD_DIR/tools/waitio-info" 2>&1 >/dev/null || true)
echo "$err" | grep -q "WAITIO_COMM_TYPE=file needs WAITIO_SCRATCH_DIR" || t_fail "no clear error without WAITIO_SCRATCH_DIR: $err"
err=$(env WAITIO_COMM_TYPE=files "$WAITIO_BUILD_DIR/tools/waitio-info" 2>&1 >/dev/null || true)
echo "$err" | grep -q "WAITIO_COMM_TYPE='files' is not socket, file, hybrid or verbs" || t_fail "no clear error for a bad WAITIO_COMM_TYPE: $err"

run hybrid
read -r main bulk <<<"$(counts hybrid)"
t_log "hybrid: rendezvous data on the main connection: $main, through files: $bulk"
[ "$main" -gt 0 ] && [ "$bulk" -gt 0 ] || { t_show_all; t_fail "hybrid: expected both paths used (main $main, bulk $bulk)"; }
grep -q "bulk connection to process [0-9]* open (file " "$T_DIR"/hybrid.pb*.out || t_fail "hybrid: no bulk file connection"
grep -q "connection to process [0-9]* open (shm\|connection to process [0-9]* open (tcp\|connection to process [0-9]* open (.* shm" \
  "$T_DIR"/hybrid.pb*.out || t_fail "hybrid: the main connection did not use a socket transport"

run explicit WAITIO_TRANSPORTS=tcp
read -r main bulk <<<"$(counts explicit)"
t_log "WAITIO_TRANSPORTS=tcp as well: main $main, through files: $bulk"
[ "$bulk" -eq 0 ] || t_fail "WAITIO_TRANSPORTS did not win over WAITIO_COMM_TYPE=hybrid"
t_pass "seed $seed"
