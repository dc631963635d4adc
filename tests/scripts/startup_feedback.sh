#!/usr/bin/env bash
# startup_feedback.sh — what start-up says (issue 15), all at once on separate instances:
#  master:  NPB=2, PB 0 alone (timeout 7) says after 5 s (a notice, shown at any level but off)
#           what it waits for, and a
#           PB 1 with another key leaves its mark: the timeout message counts the connection that
#           failed authentication;
#  client:  PB 1 alone says (by default) which master it waits for (and why it is not there);
#  serv:    `waitio-serv -c` says what it waits for after 5 s, on stderr, by default;
#  notice:  a process with no instance variable says once that it runs as a single PB and how to
#           launch, and not with WAITIO_NPB=1;
#  config:  errors name the variable: an unresolvable WAITIO_MASTER_HOST, an unknown WAITIO_LOG,
#           an empty WAITIO_NPB.
# timeout: 60
set -uo pipefail
source "$(dirname "$0")/lib.sh"
t_require_progs init_probe
probe=$TEST_PROGS/init_probe
serv=$WAITIO_BUILD_DIR/tools/waitio-serv
port=$(t_free_port); key=$(t_random_key)
inst=(WAITIO_NPB=2 WAITIO_MASTER_HOST=127.0.0.1 WAITIO_MASTER_PORT=$port WAITIO_KEY=$key WAITIO_LOG=info)
t_start master 20 env "${inst[@]}" WAITIO_PBID=0 "$probe" --label master --timeout 7 --expect TIMEOUT \
  --msg 'PB 1' --msg '1 connection to the master failed authentication'
sleep 0.5
t_start intruder 20 env "${inst[@]}" WAITIO_KEY=another-key-0123456789abcdef WAITIO_PBID=1 "$probe" --label intruder --expect AUTH
cport=$(t_free_port)
t_start client 20 env WAITIO_NPB=2 WAITIO_PBID=1 WAITIO_MASTER_HOST=127.0.0.1 WAITIO_MASTER_PORT=$cport \
  WAITIO_KEY=$key "$probe" --label client --timeout 7 --expect TIMEOUT
t_start serv 20 env WAITIO_SERV_FILE="$T_DIR/nothing" "$serv" -c -t 6
t_start notice 20 env "$probe" --label notice --exchange
# its own port: "notice" (which may set no instance variable) listens on the default one meanwhile
t_start deliberate 20 env WAITIO_NPB=1 WAITIO_MASTER_PORT="$(t_free_port)" "$probe" --label deliberate --exchange
t_start host 20 env WAITIO_NPB=2 WAITIO_PBID=1 WAITIO_MASTER_HOST=no-such-host.invalid "$probe" \
  --label host --expect ENV --msg "WAITIO_MASTER_HOST='no-such-host.invalid': cannot resolve host"
t_start log 20 env WAITIO_LOG=verbose "$probe" --label log --expect ENV --msg "WAITIO_LOG='verbose': 'verbose' is not a level"
t_start empty 20 env WAITIO_NPB= "$probe" --label empty --expect ENV --msg 'WAITIO_NPB is set but empty'
for p in master intruder client notice deliberate host log empty; do t_expect_rc $p 0; done
t_expect_rc serv 1

t_expect master "waitio\[PB 0 rank 0 \+[0-9.]+s boot\] NOTICE: rendezvous master: waiting for PB 1 \(none of its processes registered\); 5 s of 7 s"
t_expect master 'start-up timed out after 7 s waiting for PB 1 .*1 connection to the master failed authentication'
t_expect client "boot\] NOTICE: waiting for the master \(PB 0 rank 0\) at 127.0.0.1:$cport: .*; 5 s of 7 s"
t_expect serv "waitio-serv: NOTICE: waiting for PB 0's job to publish the master host in $T_DIR/nothing.*; 5 s of 6 s"
[ "$(grep -c 'single-PB instance' "$(t_out notice)")" = 1 ] || t_fail "the notice was not said exactly once"
t_expect notice 'no instance variables .*waitiorun.*mpiexec.*WAITIO_NPB=1'
t_reject deliberate 'single-PB instance' "WAITIO_NPB=1 is a deliberate single PB"
t_log "ok: master and client report after 5 s, waitio-serv -c too; the auth failure is counted; the notice; variables named"
t_pass
