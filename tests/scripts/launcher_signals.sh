#!/usr/bin/env bash
# launcher_signals.sh — SIGTERM, SIGINT and SIGHUP sent to waitiorun reach every PB (each PB
# records the signal it got), waitiorun exits 128+N, and no process of the instance survives;
# PBs that ignore the signal are killed after --grace. If waitiorun itself is SIGKILLed, its PBs
# get SIGTERM (parent-death signal).
# timeout: 40
set -uo pipefail
source "$(dirname "$0")/lib.sh"
W=$WAITIO_BUILD_DIR/tools/waitiorun
[ -x "$W" ] || t_fail "$W is not built"
tag=wiolaunchsig$$x$RANDOM

# waitiorun_pid WRAPPER_PID: the pid of waitiorun started by `timeout` (signals go to it directly)
waitiorun_pid() {
  local i p
  for ((i = 0; i < 100; i++)); do
    p=$(pgrep -P "$1" -x waitiorun) && { echo "$p"; return 0; }
    sleep 0.05
  done
  return 1
}
no_leftovers() {
  if pgrep -f "$tag" >/dev/null; then
    ps -eo pid,ppid,pgid,args | grep "$tag" | grep -v grep
    t_fail "processes left behind after $1"
  fi
}
# pb_script NAME: a PB that records the first signal it gets in $T_DIR/NAME.sig, then exits
pb_script() {
  cat >"$T_DIR/$1.sh" <<EOS
for s in TERM INT HUP; do trap "echo \$s > $T_DIR/$1.sig; kill \\\$! 2>/dev/null; exit 1" \$s; done
echo up > $T_DIR/$1.up
sleep 100 & wait
EOS
}
# wait_file PATH SECS: until PATH has content (the shell creates it before its echo writes it)
wait_file() {
  local i
  for ((i = 0; i < $2 * 20; i++)); do [ -s "$1" ] && return 0; sleep 0.05; done
  return 1
}

for sig in TERM INT HUP; do
  rm -f "$T_DIR"/*.sig "$T_DIR"/*.up
  pb_script a; pb_script b
  timeout -k 2 20 "$W" -q --grace 1 -- bash -c "exec -a $tag-a bash $T_DIR/a.sh" \
    : -- bash -c "exec -a $tag-b bash $T_DIR/b.sh" >"$T_DIR/sig.log" 2>&1 &
  wpid=$!
  wio=$(waitiorun_pid "$wpid") || t_fail "waitiorun (under timeout, pid $wpid) not found"
  wait_file "$T_DIR/a.up" 10 && wait_file "$T_DIR/b.up" 10 || t_fail "PBs did not start"
  start=$(t_now)
  kill -s "$sig" "$wio"
  rc=0
  wait "$wpid" || rc=$?
  took=$(t_since "$start")
  want=$((128 + $(kill -l "$sig")))
  [ $rc = $want ] || { cat "$T_DIR/sig.log"; t_fail "after SIG$sig waitiorun exited $rc, expected $want"; }
  for pb in a b; do
    [ "$(cat "$T_DIR/$pb.sig" 2>/dev/null)" = "$sig" ] \
      || t_fail "PB $pb did not get SIG$sig (recorded '$(cat "$T_DIR/$pb.sig" 2>/dev/null)')"
  done
  awk -v t="$took" 'BEGIN { exit !(t < 3) }' || t_fail "SIG$sig: took $took s"
  no_leftovers "SIG$sig"
  t_log "ok: SIG$sig forwarded to both PBs, status $rc in $took s"
done

# PBs ignoring SIGTERM: killed after the grace period
timeout -k 2 20 "$W" -q --grace 1 -- bash -c "trap '' TERM; exec -a $tag-deaf sleep 100" \
  : -- bash -c "exec -a $tag-plain sleep 100" &
wpid=$!
wio=$(waitiorun_pid "$wpid") || t_fail "waitiorun (under timeout, pid $wpid) not found"
sleep 0.5
start=$(t_now)
kill -TERM "$wio"
rc=0
wait "$wpid" || rc=$?
took=$(t_since "$start")
[ $rc = 143 ] || t_fail "status $rc, expected 143"
awk -v t="$took" 'BEGIN { exit !(t >= 0.9 && t < 4) }' || t_fail "deaf PB stopped after $took s (grace 1 s)"
no_leftovers "SIGTERM with a PB ignoring it"
t_log "ok: a PB ignoring SIGTERM is killed after the grace period ($took s)"

# waitiorun SIGKILLed: its PBs get SIGTERM
rm -f "$T_DIR"/*.sig "$T_DIR"/*.up
pb_script orphan
timeout -k 2 20 "$W" -q -- bash -c "exec -a $tag-orphan bash $T_DIR/orphan.sh" &
wpid=$!
wio=$(waitiorun_pid "$wpid") || t_fail "waitiorun (under timeout, pid $wpid) not found"
wait_file "$T_DIR/orphan.up" 10 || t_fail "PB did not start"
kill -KILL "$wio"
{ wait "$wpid"; } 2>/dev/null
wait_file "$T_DIR/orphan.sig" 5 || t_fail "PB got no signal when waitiorun was SIGKILLed"
[ "$(cat "$T_DIR/orphan.sig")" = TERM ] || t_fail "PB got SIG$(cat "$T_DIR/orphan.sig"), expected SIGTERM"
sleep 0.3
no_leftovers "waitiorun SIGKILLed"
t_log "ok: SIGKILLed waitiorun -> its PB got SIGTERM"
t_pass
