#!/usr/bin/env bash
# launcher_serv.sh — waitio-serv, the original job scripts' rendezvous helper (SPEC §3), with a
# private HOME: -d -m HOST publishes (file mode 0600 in a 0700 ~/.waitio, no temporary file left,
# returns at once), -c prints exactly the host, -c waits for a host published later, -c -P prints
# the port published with WAITIO_MASTER_PORT, -x removes it, -c times out with exit 1 and a
# message; WAITIO_SERV_FILE and WAITIO_RENDEZVOUS choose the location; the job-script pattern
# (export WAITIO_MASTER_HOST=`waitio-serv -c`) works; usage errors exit 2.
# timeout: 30
set -uo pipefail
source "$(dirname "$0")/lib.sh"
S=$WAITIO_BUILD_DIR/tools/waitio-serv
[ -x "$S" ] || t_fail "$S is not built"
export HOME=$T_DIR/home
mkdir -p "$HOME"
unset WAITIO_SERV_FILE

# 1. publish, look up, remove
start=$(t_now)
"$S" -d -m node17.example || t_fail "-d -m exited $?"
took=$(t_since "$start")
awk -v t="$took" 'BEGIN { exit !(t < 1) }' || t_fail "-d took $took s (it must return at once)"
f=$HOME/.waitio/master_host
[ -f "$f" ] || t_fail "nothing published at $f"
[ "$(stat -c %a "$f")" = 600 ] || t_fail "$f has mode $(stat -c %a "$f"), expected 600"
[ "$(stat -c %a "$HOME/.waitio")" = 700 ] || t_fail "~/.waitio has mode $(stat -c %a "$HOME/.waitio"), expected 700"
[ "$(ls -A "$HOME/.waitio")" = master_host ] || t_fail "stray files in ~/.waitio: $(ls -A "$HOME/.waitio")"
out=$("$S" -c -t 2) || t_fail "-c exited $?"
[ "$out" = node17.example ] || t_fail "-c printed '$out', expected 'node17.example'"
rc=0; "$S" -c -P -t 1 >/dev/null 2>"$T_DIR/noport.err" || rc=$?
[ $rc = 1 ] || t_fail "-c -P without a published port exited $rc, expected 1"
"$S" -x || t_fail "-x exited $?"
[ ! -e "$f" ] || t_fail "-x left $f"
"$S" -x || t_fail "-x with nothing published exited $?"
t_log "ok: -d publishes (0600, at once), -c prints the host, -x removes it"

# 2. -c times out
start=$(t_now)
rc=0
"$S" -c -t 0.5 >"$T_DIR/to.out" 2>"$T_DIR/to.err" || rc=$?
took=$(t_since "$start")
[ $rc = 1 ] || t_fail "-c -t 0.5 with nothing published exited $rc, expected 1"
[ ! -s "$T_DIR/to.out" ] || t_fail "-c printed '$(cat "$T_DIR/to.out")' on timeout"
grep -q "no master host published" "$T_DIR/to.err" || t_fail "no timeout message: '$(cat "$T_DIR/to.err")'"
awk -v t="$took" 'BEGIN { exit !(t >= 0.45 && t < 2) }' || t_fail "-c -t 0.5 returned after $took s"
t_log "ok: -c -t 0.5 times out with exit 1 and a message ($took s)"

# 3. the job-script pattern: PB 1's job waits for PB 0's job, which publishes later
(
  export WAITIO_MASTER_HOST
  WAITIO_MASTER_HOST=$(timeout 10 "$S" -c -t 5) || exit 1
  echo "$WAITIO_MASTER_HOST" >"$T_DIR/pb1.host"
) &
pb1=$!
sleep 0.7
(
  export WAITIO_MASTER_HOST=late-host.example WAITIO_MASTER_PORT=31415
  timeout 10 "$S" -d -m $WAITIO_MASTER_HOST
) || t_fail "PB 0's job could not publish"
wait $pb1 || t_fail "PB 1's job did not get the host"
[ "$(cat "$T_DIR/pb1.host")" = late-host.example ] || t_fail "PB 1's job got '$(cat "$T_DIR/pb1.host")'"
[ "$("$S" -c -P -t 1)" = 31415 ] || t_fail "-c -P did not print the published port"
[ "$("$S" -c -t 1)" = late-host.example ] || t_fail "-c printed more than the host"
"$S" -d -m newer-host
[ "$("$S" -c -t 1)" = newer-host ] || t_fail "a second -d did not replace the host"
"$S" -x
t_log "ok: 'export WAITIO_MASTER_HOST=\`waitio-serv -c\`' waits for PB 0's job"

# 4. other locations
WAITIO_SERV_FILE=$T_DIR/shared.host "$S" -d -m other || t_fail "-d with WAITIO_SERV_FILE failed"
[ "$(cat "$T_DIR/shared.host")" = other ] || t_fail "WAITIO_SERV_FILE not written"
[ "$(WAITIO_SERV_FILE=$T_DIR/shared.host "$S" -c -t 1)" = other ] || t_fail "WAITIO_SERV_FILE not read"
WAITIO_RENDEZVOUS=$T_DIR/run.rdv "$S" -d -m rdvhost || t_fail "-d with WAITIO_RENDEZVOUS failed"
[ -f "$T_DIR/run.rdv.host" ] || t_fail "WAITIO_RENDEZVOUS: nothing at \$WAITIO_RENDEZVOUS.host"
[ "$(WAITIO_RENDEZVOUS=$T_DIR/run.rdv "$S" -c -t 1)" = rdvhost ] || t_fail "WAITIO_RENDEZVOUS.host not read"
WAITIO_RENDEZVOUS=$T_DIR/run.rdv "$S" -x
[ ! -e "$T_DIR/run.rdv.host" ] || t_fail "-x did not remove \$WAITIO_RENDEZVOUS.host"
[ ! -e "$HOME/.waitio/master_host" ] || t_fail "something was written to ~/.waitio"
t_log "ok: WAITIO_SERV_FILE and WAITIO_RENDEZVOUS.host"

# 5. usage
for args in "" "-d" "-d -m" "-c -t x" "-d -c -m h" "-q" "-d -m 'a b'"; do
  rc=0
  eval "\"\$S\" $args" >/dev/null 2>"$T_DIR/usage.err" || rc=$?
  [ $rc = 2 ] || t_fail "'waitio-serv $args' exited $rc, expected 2"
  [ -s "$T_DIR/usage.err" ] || t_fail "'waitio-serv $args' gave no message"
done
"$S" -h | grep -q "waitio-serv -c" || t_fail "-h prints no usage"
t_log "ok: usage errors exit 2"
t_pass
