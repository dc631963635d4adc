#!/usr/bin/env bash
# launcher_orphans.sh — no process outlives waitiorun (SPEC §3), even ones that left their PB's
# process group or session: a setsid'd grandchild ignoring SIGTERM (on SIGTERM to waitiorun and on
# a PB failure), a double-forked daemon left behind by PBs that all exit 0, a chain of escaped
# processes several levels deep, and a PB that keeps forking.
# timeout: 40
set -uo pipefail
source "$(dirname "$0")/lib.sh"
W=$WAITIO_BUILD_DIR/tools/waitiorun
[ -x "$W" ] || t_fail "$W is not built"
tag=wiolaunchorph$$x$RANDOM

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
    ps -eo pid,ppid,pgid,sid,args | grep "$tag" | grep -v grep
    t_fail "processes left behind after $1"
  fi
}
wait_proc() { # PATTERN SECS: until a process matches
  local i
  for ((i = 0; i < $2 * 20; i++)); do pgrep -f "$1" >/dev/null && return 0; sleep 0.05; done
  return 1
}
# escaping PB: starts a grandchild in its own session that ignores SIGTERM, then sleeps
cat >"$T_DIR/escape.sh" <<EOS
setsid bash -c "trap '' TERM HUP INT; exec -a $tag-escaped sleep 100" </dev/null >/dev/null 2>&1 &
exec -a $tag-pb sleep 100
EOS

# 1. SIGTERM to waitiorun
timeout -k 2 20 "$W" -q --grace 1 -- bash "$T_DIR/escape.sh" : -- bash -c "exec -a $tag-plain sleep 100" &
wpid=$!
wio=$(waitiorun_pid "$wpid") || t_fail "waitiorun (under timeout, pid $wpid) not found"
wait_proc "$tag-escaped" 10 || t_fail "the escaping grandchild did not start"
[ "$(ps -o sid= -p "$(pgrep -f "$tag-escaped")" | tr -d ' ')" != "$(ps -o sid= -p "$wio" | tr -d ' ')" ] \
  || t_fail "the grandchild did not leave the session"
kill -TERM "$wio"
rc=0
wait "$wpid" || rc=$?
[ $rc = 143 ] || t_fail "status $rc after SIGTERM, expected 143"
no_leftovers "SIGTERM to waitiorun"
t_log "ok: SIGTERM -> 143, setsid'd grandchild ignoring SIGTERM killed"

# 2. a PB fails while the other has an escaped grandchild
rc=0
timeout -k 2 20 "$W" -q --grace 1 -- bash "$T_DIR/escape.sh" : -- sh -c 'sleep 0.5; exit 3' \
  >"$T_DIR/fail.log" 2>&1 || rc=$?
[ $rc = 3 ] || { cat "$T_DIR/fail.log"; t_fail "status $rc, expected 3"; }
no_leftovers "a failing PB"
t_log "ok: PB failure -> 3, escaped grandchild killed"

# 3. PBs all exit 0 but leave a double-forked daemon behind
rc=0
timeout -k 2 20 "$W" -q -- bash -c "(setsid bash -c 'exec -a $tag-daemon sleep 100' </dev/null >/dev/null 2>&1 &); exit 0" \
  : -- sleep 0.5 >"$T_DIR/daemon.log" 2>&1 || rc=$?
[ $rc = 0 ] || { cat "$T_DIR/daemon.log"; t_fail "status $rc, expected 0"; }
no_leftovers "PBs leaving a daemon behind"
t_log "ok: daemon left behind by a successful PB killed at the end"

# 4. a chain of escaped processes, each in its own session, several levels deep
cat >"$T_DIR/chain.sh" <<EOS
level=\$1
if [ "\$level" -lt 4 ]; then
  setsid bash "$T_DIR/chain.sh" \$((level + 1)) </dev/null >/dev/null 2>&1 &
fi
trap '' TERM
exec -a $tag-chain\$level sleep 100
EOS
timeout -k 2 20 "$W" -q --grace 0.5 -- bash "$T_DIR/chain.sh" 0 : -- sh -c 'sleep 1; exit 1' >/dev/null 2>&1
rc=$?
[ $rc = 1 ] || t_fail "chain: status $rc, expected 1"
no_leftovers "a chain of escaped processes"
t_log "ok: a 5-level chain of escaped processes killed"

# 5. a PB that keeps forking short-lived children while being stopped
rc=0
timeout -k 2 20 "$W" -q --grace 0.5 -- bash -c "trap '' TERM; while :; do (exec -a $tag-spawn sleep 5 &); sleep 0.01; done" \
  : -- sh -c 'sleep 0.5; exit 2' >/dev/null 2>&1 || rc=$?
[ $rc = 2 ] || t_fail "forking PB: status $rc, expected 2"
no_leftovers "a PB that keeps forking"
t_log "ok: a PB forking continuously is stopped with all its children"
t_pass
