#!/usr/bin/env bash
# mp_peer_exit.sh — a peer dies while others have requests pending with it (SPEC §10): pending
# receives from it and sends to it (8 MiB rendezvous ones among them) complete with
# WAITIO_ERR_PEER or WAITIO_ERR_PEER_FINALIZED within 10 s, nothing hangs, the survivors still
# talk to each other, finalize and exit 0. Launched by hand (waitiorun would stop the job when a
# PB dies): PB 0 has 1 process, PB 1 has 2; tests/progs/peer_exit does the checks.
#   exit         PB 1 rank 0 calls _exit without waitio_finalize
#   kill         PB 1 rank 0 is killed with SIGKILL by this script
#   finalize     PB 1 rank 0 calls waitio_finalize with the requests pending
#                (they must complete with WAITIO_ERR_PEER_FINALIZED)
#   midsend      PB 1 rank 0 dies in the middle of a 64 MiB send to PB 0
#   kill-master  PB 0 rank 0 (the start-up master) is killed; PB 1's two processes carry on
#   no-warmup    PB 1 rank 1 exits right after waitio_init, before any connection to it exists
# timeout: 120
set -uo pipefail
source "$(dirname "$0")/lib.sh"
t_require_progs peer_exit

run_case() { # NAME MODE VICTIM(PB:RANK) VICTIM_STATUS [extra args]
  local name=$1 mode=$2 victim=$3 vstatus=$4
  shift 4
  local port key pb r n vname
  port=$(t_free_port)
  key=$(t_random_key)
  vname="$name.pb${victim%:*}.r${victim#*:}"
  t_log "case $name: mode $mode, victim PB $victim"
  for pb in 0 1; do
    n=$((pb == 0 ? 1 : 2))
    for ((r = 0; r < n; r++)); do
      t_start "$name.pb$pb.r$r" 40 env WAITIO_NPB=2 WAITIO_PBID=$pb WAITIO_PB_RANK=$r \
        WAITIO_PB_SIZE=$n WAITIO_MASTER_HOST=127.0.0.1 WAITIO_MASTER_PORT=$port WAITIO_KEY=$key \
        "$TEST_PROGS/peer_exit" --mode "$mode" --victim "$victim" --alarm 35 "$@"
    done
  done
  if [ "$mode" = kill ]; then
    t_wait_line "$vname" '^READY pid=[0-9]+' 25 || t_fail "case $name: the victim never got ready"
    local vpid
    vpid=$(sed -n 's/^READY pid=\([0-9]*\).*/\1/p' "$(t_out "$vname")")
    t_log "case $name: kill -9 $vpid (the victim)"
    kill -9 "$vpid"
  fi
  local bad=() p
  for pb in 0 1; do
    n=$((pb == 0 ? 1 : 2))
    for ((r = 0; r < n; r++)); do
      p="$name.pb$pb.r$r"
      t_wait "$p"
      if [ "$p" = "$vname" ]; then
        [ "$(t_rc "$p")" = "$vstatus" ] || bad+=("victim $p: exit status $(t_rc "$p"), expected $vstatus")
      else
        [ "$(t_rc "$p")" = 0 ] || bad+=("survivor $p: exit status $(t_rc "$p")")
        grep -q "^peer_exit survivor ok (mode $mode)" "$(t_out "$p")" || bad+=("survivor $p: no ok line")
      fi
    done
  done
  for pb in 0 1; do
    n=$((pb == 0 ? 1 : 2))
    for ((r = 0; r < n; r++)); do t_show "$name.pb$pb.r$r"; done
  done
  [ ${#bad[@]} -eq 0 ] || t_fail "case $name: ${bad[*]}"
}

run_case exit exit 1:0 3
run_case kill kill 1:0 137
run_case finalize finalize 1:0 0
run_case midsend midsend 1:0 3
run_case kill-master kill 0:0 137
run_case no-warmup exit 1:1 3 --no-warmup
t_pass "6 cases"
