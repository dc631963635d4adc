#!/usr/bin/env bash
# sec_rma_free.sh — issue 25 item 4: no transfer uses a window's memory once waitio_win_free has
# returned. The target (tests/progs/sec_rma_target, PB 0) exposes 64 MiB of its memory, every
# byte 'A', as a window shared with a key holder (tests/scripts/wio_attack.py rma-free, PB 1)
# and a plain member (PB 2, the root of the free's barrier, so that the target's part of the
# barrier sends nothing to the key holder), and frees it at once; the moment the free returns it
# writes 'Z' over the memory, as a program reusing it would. The key holder starts a GET of the
# whole window, takes its part in the free's barrier, and reads the reply only later:
#  - reads after 1.5 s: the free must wait for the reply (it returns after >= 1 s) and no byte of
#    the reply may be a 'Z' (before the fix the free returned at once and ~63 MB of the reply
#    was the 'Z's written after it); a PUT of 1 MiB whose second half comes only then must not
#    land after the free (before: 512 KiB written into the freed memory); a GET and a PUT naming
#    the freed window are then answered with errors and write nothing;
#  - never reads (WAITIO_PEER_TIMEOUT=2): the free drops the holder after 2 s without progress
#    (logged) and returns; still no 'Z' leaves.
# timeout: 90
set -uo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/sec.inc"
t_require_progs sec_rma_target
proto=$(t_proto)

# run_case NAME DELAY [VAR=VAL...]: the target (with the variables) and the key holder
run_case() {
  local name=$1 delay=$2
  shift 2
  t_instance 3
  t_start "$name.target" 60 env WAITIO_PBID=0 WAITIO_LOG=warn WAITIO_TRANSPORTS=tcp "$@" \
    "$TEST_PROGS/sec_rma_target" target free 64
  t_start "$name.member" 60 env WAITIO_PBID=2 WAITIO_LOG=error WAITIO_TRANSPORTS=tcp \
    "$TEST_PROGS/sec_rma_target" member-free
  for ((i = 0; i < 100; i++)); do
    ss -ltnH | awk '{ print $4 }' | grep -q ":$WAITIO_MASTER_PORT\$" && break
    sleep 0.05
  done
  t_start "$name.attacker" 60 python3 "$T_ATTACK" --proto "$proto" rma-free \
    --master-port "$WAITIO_MASTER_PORT" --delay "$delay"
  t_wait "$name.attacker"
  t_wait "$name.target"
  t_wait "$name.member"
  t_show "$name.attacker"
  t_show "$name.target"
  t_show "$name.member"
  t_expect "$name.attacker" "^reply bytes written after the free: 0$" \
    "$name: the reply carried what the target wrote into the memory after freeing it"
  t_expect "$name.target" "^bytes written after the free: 0$" "$name: the freed memory was written"
  [ "$(t_rc "$name.target")" = 0 ] || t_fail "$name: the target failed (exit $(t_rc "$name.target"))"
}

run_case reads 1.5
t_expect reads.attacker "^reply bytes: 67108864 of 67108864$" "the whole reply arrives"
t_expect reads.attacker "^get on the freed window: error [1-9]" "a GET on the freed window is refused"
t_expect reads.attacker "^put on the freed window: error [1-9]" "a PUT on the freed window is refused"
waited=$(sed -n 's/^freed after \([0-9.]*\) s.*/\1/p' "$(t_out reads.target)")
awk -v w="${waited:-0}" 'BEGIN { exit !(w >= 1.0) }' ||
  t_fail "the free returned after ${waited:-?} s, before the reply (read from 1.5 s on) was written"
t_log "free returned after $waited s, once the reply was written"

run_case stalls 8 WAITIO_PEER_TIMEOUT=2
t_expect stalls.target "moved none of its transfers on the window's memory" "the stalled holder is dropped, logged"
waited=$(sed -n 's/^freed after \([0-9.]*\) s.*/\1/p' "$(t_out stalls.target)")
awk -v w="${waited:-99}" 'BEGIN { exit !(w >= 1.5 && w < 7) }' ||
  t_fail "the free against a holder that never reads returned after ${waited:-?} s (expected ~2 s)"
t_log "free against a stalled holder returned after $waited s"
t_pass "free waits for the transfers on the window (or drops a stalled holder); nothing after it"
