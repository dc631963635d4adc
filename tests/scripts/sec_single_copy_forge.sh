#!/usr/bin/env bash
# sec_single_copy_forge.sh — issue 11 item 5: a key holder's forged single-copy descriptors
# must not make a root receiver read another process's memory into a message. The victim is a
# root process (PB 0, tests/progs/sec_echo, WAITIO_SINGLE_COPY=1) that echoes every message it
# receives from PB 1. PB 1 is an attacker that knows the key (tests/scripts/wio_attack.py
# forge-cma): it joins the job offering the shm transport (a local socket) and tcp, and sends
# rendezvous requests whose descriptors name (1) its own buffer, (2) the address of a secret
# held by another root process. A receiver reads in place only through the shm transport and
# only from the process the kernel reports at the other end of that socket (SO_PEERCRED), of
# its own uid (docs/reliability.md). Two attackers:
#  - as root (the victim's uid): the victim connects over shm; (1) is read in place, which
#    shows the path is live; (2) is read from the attacker's own pid, never the secret's;
#  - as nobody (setpriv): its socket is in nobody's directory, which a root victim never looks
#    in: the victim falls back to tcp, which never reads in place.
# Before the fix the second descriptor was read from the secret process: the root-only secret
# came back in the echo. Needs root (skipped otherwise).
# timeout: 90
set -uo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/sec.inc"
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
  echo "SKIP: needs root (a root receiver is the victim) and setpriv"; exit 0
fi
t_require_progs sec_echo
proto=$(t_proto)
t_log "wire protocol of the build under test: version $proto"
marker="ROOT-ONLY-SECRET-$RANDOM$RANDOM"
# the attack client must be readable by nobody
chmod 711 "$T_DIR"
mkdir -m 755 "$T_DIR/pub"
cp "$T_ATTACK" "$T_DIR/pub/wio_attack.py"
chmod 644 "$T_DIR/pub/wio_attack.py"
t_start secret 60 /usr/bin/python3 -c "
import ctypes, os, sys, time
buf = ctypes.create_string_buffer(b'$marker' * 256)
print(os.getpid(), hex(ctypes.addressof(buf)), flush=True)
time.sleep(60)"
t_wait_line secret '^[0-9]+ 0x' 5 || t_fail "the secret process did not start"
read -r spid saddr <"$(t_out secret)"
t_log "secret process: pid $spid, secret at $saddr"

# run_case NAME [PREFIX...]: the victim and an attacker run with PREFIX (e.g. setpriv ...)
run_case() {
  local name=$1
  shift
  t_instance 2
  t_start "$name.victim" 40 env WAITIO_PBID=0 WAITIO_SINGLE_COPY=1 WAITIO_LOG=warn \
    WAITIO_TRANSPORTS=shm,tcp "$TEST_PROGS/sec_echo" 2 4096
  for ((i = 0; i < 100; i++)); do
    ss -ltnH | awk '{ print $4 }' | grep -q ":$WAITIO_MASTER_PORT\$" && break
    sleep 0.05
  done
  t_start "$name.attacker" 40 "$@" /usr/bin/python3 "$T_DIR/pub/wio_attack.py" --proto "$proto" \
    forge-cma --master-port "$WAITIO_MASTER_PORT" --secret-pid "$spid" --secret-addr "$saddr" \
    --secret-marker "$marker"
  t_wait "$name.attacker"
  t_wait "$name.victim"
  t_show "$name.attacker"
  t_show "$name.victim"
  [ "$(t_rc "$name.attacker")" = 0 ] || t_fail "$name: the attacker did not run to the end"
  if grep -q "CONTAINS THE SECRET" "$(t_out "$name.attacker")"; then
    t_fail "$name: the victim read the secret process's memory into a message"
  fi
  grep -q "^secret echoed back: 0 of" "$(t_out "$name.attacker")" || t_fail "$name: no verdict from the attacker"
  [ "$(t_rc "$name.victim")" = 0 ] || t_fail "$name: the victim failed"
  t_expect "$name.victim" "^sec_echo ok"
}

run_case root
t_expect root.attacker "connected over shm" "a root victim connects to a root attacker over shm"
t_expect root.attacker "case own buffer: read in place: yes" "the peer of the socket, same user, is read in place"
run_case nobody setpriv --reuid=65534 --regid=65534 --clear-groups
t_expect nobody.attacker "connected over tcp" "another user's socket is never found: tcp"
t_expect nobody.attacker "case own buffer: read in place: no" "another user's process is never read"
t_pass "forged descriptors from a root and from a nobody key holder: no byte of the secret delivered"
