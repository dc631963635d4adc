#!/usr/bin/env bash
# launcher_waitiorun.sh — waitiorun: PBs see their variables (also through mpirun.openmpi and
# mpirun.mpich); a failing PB stops the others quickly and the exit status is the PB's; SIGTERM is
# forwarded; a grandchild that ignores SIGTERM in its own session is killed too; --timeout;
# nothing from the test survives. Also waitio-serv -d/-c/-x with a private HOME.
# timeout: 120
set -euo pipefail
W=$WAITIO_BUILD_DIR/tools/waitiorun
S=$WAITIO_BUILD_DIR/tools/waitio-serv
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tag=wiolaunch$RANDOM$RANDOM
dir=$(mktemp -d)
trap 'pkill -9 -f "$tag" 2>/dev/null || true; rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
no_leftovers() { sleep 0.3; ! pgrep -f "$tag" >/dev/null || { ps -ef | grep "$tag" | grep -v grep; fail "processes left behind ($1)"; }; }

# 1. variables, through plain commands and both MPI launchers
unset WAITIO_KEY
timeout 60 "$W" -q -- sh -c 'echo "$WAITIO_PBID $WAITIO_NPB $WAITIO_MASTER_HOST $WAITIO_MASTER_PORT $WAITIO_KEY" > '"$dir"'/v0' \
  : -- mpirun.openmpi --oversubscribe -np 2 sh -c 'echo "$WAITIO_PBID $WAITIO_NPB $WAITIO_MASTER_PORT $WAITIO_KEY" >> '"$dir"'/v1' \
  : -- mpirun.mpich -np 2 sh -c 'echo "$WAITIO_PBID $WAITIO_NPB $WAITIO_MASTER_PORT $WAITIO_KEY" >> '"$dir"'/v2' \
  || fail "all-succeeding run exited non-zero"
read -r pb npb host port key < "$dir/v0"
[ "$pb $npb $host" = "0 3 127.0.0.1" ] || fail "PB 0 saw '$pb $npb $host'"
[ "${#key}" = 64 ] || fail "generated key has ${#key} characters"
[ "$(sort -u "$dir/v1")" = "1 3 $port $key" ] || fail "Open MPI ranks saw: $(cat "$dir/v1")"
[ "$(sort -u "$dir/v2")" = "2 3 $port $key" ] || fail "MPICH ranks saw: $(cat "$dir/v2")"
[ "$(wc -l < "$dir/v1")" = 2 ] && [ "$(wc -l < "$dir/v2")" = 2 ] || fail "not every MPI rank ran"
WAITIO_KEY=mine timeout 30 "$W" -q -- sh -c '[ "$WAITIO_KEY" = mine ]' || fail "WAITIO_KEY not passed through"
echo "ok: variables reach plain, Open MPI and MPICH PBs"

# 2. a failing PB stops the rest, with the PB's status
start=$(date +%s%N)
set +e
timeout 60 "$W" -q --grace 1 -- sh -c 'sleep 0.2; exit 7' : -- bash -c "exec -a $tag-sleeper sleep 100"
rc=$?
set -e
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ $rc = 7 ] || fail "exit status $rc, expected 7"
[ $ms -lt 5000 ] || fail "took $ms ms to stop"
no_leftovers "failing PB"
echo "ok: PB failure -> status 7 in $ms ms, others stopped"

# 3. SIGTERM to waitiorun reaches every PB; an escaped grandchild ignoring SIGTERM dies too
cat > "$dir/stubborn.sh" <<EOS
trap '' TERM
setsid bash -c 'trap "" TERM; exec -a $tag-escaped sleep 100' &
exec -a $tag-pb sleep 100
EOS
"$W" -q --grace 1 -- bash "$dir/stubborn.sh" : -- bash -c "exec -a $tag-plain sleep 100" &
wpid=$!
sleep 1
pgrep -f "$tag-escaped" >/dev/null || fail "the escaped grandchild did not start"
kill -TERM $wpid
set +e
wait $wpid
rc=$?
set -e
[ $rc = 143 ] || fail "exit status after SIGTERM: $rc, expected 143"
no_leftovers "SIGTERM"
echo "ok: SIGTERM forwarded (status 143), escaped grandchild killed"

# 4. --timeout
set +e
"$W" -q -t 1 --grace 1 -- bash -c "exec -a $tag-slow sleep 100"
rc=$?
set -e
[ $rc = 124 ] || fail "timeout status $rc, expected 124"
no_leftovers "timeout"
echo "ok: --timeout -> 124"

# 5. waitio-serv: publish, look up, remove, time out
export HOME=$dir/home
mkdir -p "$HOME"
"$S" -d -m node17.example
[ "$(stat -c %a "$HOME/.waitio/master_host")" = 600 ] || fail "published file is not private"
[ "$("$S" -c -t 2)" = node17.example ] || fail "waitio-serv -c printed the wrong host"
"$S" -x
set +e
out=$("$S" -c -t 0.5 2>&1)
rc=$?
set -e
[ $rc = 1 ] && echo "$out" | grep -q "no master host published" || fail "waitio-serv -c without a host: rc $rc, '$out'"
( sleep 0.5; "$S" -d -m late-host ) &
[ "$("$S" -c -t 5)" = late-host ] || fail "waitio-serv -c did not wait for the host"
wait
WAITIO_SERV_FILE=$dir/shared.host "$S" -d -m other
[ "$(WAITIO_SERV_FILE=$dir/shared.host "$S" -c -t 1)" = other ] || fail "WAITIO_SERV_FILE not used"
echo "ok: waitio-serv -d/-c/-x"
echo PASS
