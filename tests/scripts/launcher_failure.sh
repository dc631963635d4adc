#!/usr/bin/env bash
# launcher_failure.sh — waitiorun stops the instance when a PB fails (SPEC §3): a PB exiting 7
# makes it print "PB i (...) exited with status 7; stopping the others", stop the other PB (a
# sleep 100) at once and exit 7; a PB killed by SIGKILL gives 137; a PB ignoring SIGTERM is killed
# after --grace; PBs that all succeed (at different times) give 0 only after the slowest;
# --timeout gives 124. Nothing started by the test survives any of these.
# timeout: 50
set -uo pipefail
source "$(dirname "$0")/lib.sh"
W=$WAITIO_BUILD_DIR/tools/waitiorun
[ -x "$W" ] || t_fail "$W is not built"
tag=wiolaunchfail$$x$RANDOM

run_w() {
  local name=$1 secs=$2 start
  shift 2
  RC=0
  start=$(t_now)
  timeout -k 2 "$secs" "$W" "$@" >"$T_DIR/$name.log" 2>&1 </dev/null || RC=$?
  TOOK=$(t_since "$start")
}
fail() { [ -f "$T_DIR/$1.log" ] && { echo "--- $1.log:"; cat "$T_DIR/$1.log"; }; t_fail "$2"; }
no_leftovers() {
  if pgrep -f "$tag" >/dev/null; then
    ps -eo pid,ppid,pgid,args | grep "$tag" | grep -v grep
    t_fail "processes left behind after $1"
  fi
}
faster_than() { awk -v t="$TOOK" -v m="$1" 'BEGIN { exit !(t < m) }'; }
slower_than() { awk -v t="$TOOK" -v m="$1" 'BEGIN { exit !(t >= m) }'; }

# 1. a PB exits 7
run_w exit7 20 --grace 1 -- bash -c "exec -a $tag-sleeper sleep 100" : -- sh -c 'sleep 0.3; exit 7'
[ $RC = 7 ] || fail exit7 "status $RC, expected 7"
faster_than 3 || fail exit7 "took $TOOK s to stop the others"
grep -q "waitiorun: PB 1 (sh -c 'sleep 0.3; exit 7') exited with status 7; stopping the others" \
  "$T_DIR/exit7.log" || fail exit7 "no/incorrect failure message"
no_leftovers "a PB exiting 7"
t_log "ok: PB exiting 7 -> status 7 in $TOOK s, the other PB stopped"

# 2. -q keeps the failure message; a PB killed by a signal gives 128+N
run_w kill9 20 -q -- bash -c "exec -a $tag-sleeper2 sleep 100" : -- sh -c 'kill -9 $$'
[ $RC = 137 ] || fail kill9 "status $RC, expected 137"
grep -q "PB 1 .* killed by signal 9" "$T_DIR/kill9.log" || fail kill9 "no failure message with -q"
no_leftovers "a PB killed by SIGKILL"
t_log "ok: PB killed by SIGKILL -> 137 in $TOOK s"

# 3. a PB that ignores SIGTERM is killed after the grace period
run_w stubborn 20 -q --grace 1.5 -- bash -c "trap '' TERM; exec -a $tag-stubborn sleep 100" : -- sh -c 'sleep 0.3; exit 1'
[ $RC = 1 ] || fail stubborn "status $RC, expected 1"
slower_than 1.7 || fail stubborn "stopped after $TOOK s, before 0.3 s + the 1.5 s grace period"
faster_than 5.3 || fail stubborn "took $TOOK s"
no_leftovers "a PB ignoring SIGTERM"
t_log "ok: PB ignoring SIGTERM killed after the grace period ($TOOK s)"

# 4. all succeed, at different times: 0, after the slowest
run_w allok 20 -q -- sleep 0.1 : -- sleep 1 : -- true
[ $RC = 0 ] || fail allok "status $RC, expected 0"
slower_than 0.9 || fail allok "returned after $TOOK s, before the slowest PB ended"
t_log "ok: all PBs succeed -> 0 after the slowest ($TOOK s)"

# 5. --timeout
run_w timeout 20 -q -t 1 --grace 1 -- bash -c "exec -a $tag-slow sleep 100" : -- bash -c "exec -a $tag-slow2 sleep 100"
[ $RC = 124 ] || fail timeout "status $RC, expected 124"
slower_than 0.9 && faster_than 4 || fail timeout "stopped after $TOOK s with -t 1"
grep -q "timeout after 1 s" "$T_DIR/timeout.log" || fail timeout "no timeout message"
no_leftovers "--timeout"
t_log "ok: -t 1 -> 124 after $TOOK s"
t_pass
