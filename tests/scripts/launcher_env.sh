#!/usr/bin/env bash
# launcher_env.sh — waitiorun gives every PB its instance variables (SPEC §3): WAITIO_PBID,
# WAITIO_NPB, WAITIO_MASTER_HOST, WAITIO_MASTER_PORT (a free port, or -p) and a fresh 64-hex-digit
# WAITIO_KEY shared by all PBs (or the caller's WAITIO_KEY); other variables (WAITIO_LOG) pass
# through; -H/-p are honoured; usage errors exit 2, --help/--version exit 0; an unrunnable
# command exits 127 and stops the PBs already started.
# timeout: 40
set -uo pipefail
source "$(dirname "$0")/lib.sh"
W=$WAITIO_BUILD_DIR/tools/waitiorun
[ -x "$W" ] || t_fail "$W is not built"
tag=wiolaunchenv$$x$RANDOM

# run_w NAME SECS ARGS...: waitiorun ARGS under a deadline; sets RC; output in $T_DIR/NAME.log
run_w() {
  local name=$1 secs=$2
  shift 2
  RC=0
  timeout -k 2 "$secs" "$W" "$@" >"$T_DIR/$name.log" 2>&1 </dev/null || RC=$?
}
fail() { [ -n "${1:-}" ] && [ -f "$T_DIR/$1.log" ] && { echo "--- $1.log:"; cat "$T_DIR/$1.log"; }; t_fail "$2"; }
no_leftovers() {
  if pgrep -f "$tag" >/dev/null; then
    ps -eo pid,ppid,pgid,args | grep "$tag" | grep -v grep
    t_fail "processes left behind after $1"
  fi
}

# 1. three plain PBs
report='echo "$WAITIO_PBID $WAITIO_NPB $WAITIO_MASTER_HOST $WAITIO_MASTER_PORT $WAITIO_KEY ${WAITIO_LOG:-unset} ${WAITIO_RENDEZVOUS:-unset}"'
WAITIO_LOG=debug WAITIO_RENDEZVOUS=$T_DIR/stale.rdv run_w vars 20 -q \
  -- sh -c "$report > $T_DIR/pb0" : -- sh -c "$report > $T_DIR/pb1" : sh -c "$report > $T_DIR/pb2"
[ $RC = 0 ] || fail vars "all-succeeding run exited with status $RC"
[ -s "$T_DIR/vars.log" ] && fail vars "-q run printed something"
read -r pb npb host port key log rdv <"$T_DIR/pb0"
[ "$pb $npb $host" = "0 3 127.0.0.1" ] || fail vars "PB 0 saw PBID/NPB/HOST '$pb $npb $host'"
[[ $port =~ ^[0-9]+$ ]] && [ "$port" -gt 0 ] && [ "$port" -lt 65536 ] || fail vars "bad port '$port'"
[[ $key =~ ^[0-9a-f]{64}$ ]] || fail vars "generated key '$key' is not 64 hex digits"
[ "$log" = debug ] || fail vars "WAITIO_LOG not passed through (saw '$log')"
[ "$rdv" = unset ] || fail vars "WAITIO_RENDEZVOUS should be cleared under waitiorun (saw '$rdv')"
for i in 1 2; do
  [ "$(cat "$T_DIR/pb$i")" = "$i 3 127.0.0.1 $port $key debug unset" ] \
    || fail vars "PB $i saw '$(cat "$T_DIR/pb$i")', expected '$i 3 127.0.0.1 $port $key debug unset'"
done
t_log "ok: 3 plain PBs saw PBID 0..2, NPB 3, host, port $port and one fresh key"

run_w vars2 20 -q -- sh -c "$report > $T_DIR/again"
read -r _ _ _ _ key2 _ <"$T_DIR/again"
[ "$key2" != "$key" ] || fail vars2 "two runs got the same key"
WAITIO_KEY=caller-key run_w key 20 -q -- sh -c '[ "$WAITIO_KEY" = caller-key ]' : -- sh -c '[ "$WAITIO_KEY" = caller-key ]'
[ $RC = 0 ] || fail key "the caller's WAITIO_KEY did not reach every PB (status $RC)"
t_log "ok: every run gets a new key; a WAITIO_KEY from the caller passes through"

# 2. -H / -p, also in --opt=value form
run_w hostport 20 -q -H localhost --port=34567 -- sh -c 'echo "$WAITIO_MASTER_HOST $WAITIO_MASTER_PORT" > '"$T_DIR/hp"
[ $RC = 0 ] && [ "$(cat "$T_DIR/hp")" = "localhost 34567" ] || fail hostport "-H/-p: status $RC, PB saw '$(cat "$T_DIR/hp" 2>/dev/null)'"
t_log "ok: -H and --port= honoured"

# 3. usage
for args in "" "./prog" "-- a :" "-- a : : -- b" "-t" "-t abc -- true" "-p 70000 -- true" "--bogus -- true"; do
  # shellcheck disable=SC2086
  run_w usage 10 $args
  [ $RC = 2 ] || fail usage "'waitiorun $args' exited $RC, expected 2 (usage error)"
  [ -s "$T_DIR/usage.log" ] || fail usage "'waitiorun $args' gave no message"
done
run_w help 10 --help
[ $RC = 0 ] && grep -q "usage: waitiorun" "$T_DIR/help.log" || fail help "--help: status $RC"
run_w version 10 --version
[ $RC = 0 ] && grep -q "^waitiorun (WaitIO) " "$T_DIR/version.log" || fail version "--version: status $RC"
t_log "ok: usage errors exit 2 with a message; --help, --version"

# 4. a command that cannot be run: exit 127, the PB already started is stopped
start=$(t_now)
run_w norun 20 -q -- bash -c "exec -a $tag-started sleep 100" : -- /nonexistent/waitio-prog
took=$(t_since "$start")
[ $RC = 127 ] || fail norun "unrunnable command: status $RC, expected 127"
grep -q "PB 1: cannot run '/nonexistent/waitio-prog'" "$T_DIR/norun.log" || fail norun "no 'cannot run' message"
awk -v t="$took" 'BEGIN { exit !(t < 5) }' || fail norun "took $took s"
no_leftovers "an unrunnable command"
t_log "ok: unrunnable command -> 127 in $took s, nothing left"
t_pass
