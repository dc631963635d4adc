#!/usr/bin/env bash
# sec_data_window.sh — issue 25 item 1: the data window (waitio_win_create_data, OpenSHMEM's
# symmetric global data) exposes the executable's own .data/.bss and nothing else. Before the fix
# it ran from the page-rounded end of PT_GNU_RELRO to the end of the writable segment, .got.plt
# included: a key holder of another uid read the target's `puts` GOT slot (the target's libc
# address), wrote `system` there and a command into a global, and the target's next puts(global)
# ran the command as the target's user.
#
# Two PEs of tests/progs/shmem_sec_data, one per PB, over tcp (frames: every access is served,
# and checked, by the target): PE 0, the target, runs as root; PE 1, the attacker, as nobody
# (setpriv) with its library's origin checks off (WAITIO_RMA_TEST_NO_ORIGIN_CHECKS=1, as a
# modified copy would run), so that only the target's own checks protect it. Required:
#   - the window is exactly .data start .. .bss end of the executable (readelf);
#   - the attacker's reads and writes of the puts GOT slot(s), of the copy-relocated stdout and
#     past the window's end are refused at the origin with WAITIO_ERR_BOUNDS;
#   - the target's slots and stdout are unchanged, its puts still prints, and the attacker's
#     command never runs (no marker file);
#   - legitimate writes of a .data and a .bss global arrive byte for byte (checked by both);
#   - OpenSHMEM does not call the slot a symmetric address (shmem_addr_accessible = 0).
# Without root (or setpriv) both run as the caller's uid, over tcp all the same.
# timeout: 90
set -uo pipefail
source "$(dirname "$0")/lib.sh"
t_require_progs shmem_sec_data
prog="$TEST_PROGS/shmem_sec_data"
as_other=()
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  as_other=(setpriv --reuid=65534 --regid=65534 --clear-groups)
  chmod 711 "$T_DIR"
  t_log "attacker runs as uid 65534 (nobody), the target as root"
else
  t_log "not root or no setpriv: the attacker runs as this uid (the target's checks are what is tested)"
fi
pwned="$T_DIR/pwned"
command="echo PWNED-BY-THE-ATTACKER > $pwned"

# the window the fix must give: .data start .. .bss end of the executable
if command -v readelf >/dev/null; then
  # "[Nr] Name Type Address Off Size ...": the address and size of .data and of .bss, in hex
  read -r da _ < <(readelf -SW "$prog" | awk '{ for (i = 1; i <= NF; i++) if ($i == ".data") print $(i + 2), $(i + 4) }')
  read -r ba bs < <(readelf -SW "$prog" | awk '{ for (i = 1; i <= NF; i++) if ($i == ".bss") print $(i + 2), $(i + 4) }')
  dstart=$((16#$da)) bend=$((16#$ba + 16#$bs))
  want=$((bend - dstart))
  t_log "executable: .data starts at $(printf %#x "$dstart"), .bss ends at $(printf %#x "$bend"): $want bytes"
  ncopy=$(readelf -rW "$prog" | grep -c '_COPY ')
  t_log "copy relocations in the executable: $ncopy ($(readelf -rW "$prog" | awk '/_COPY / { printf "%s ", $5 }'))"
fi

t_instance 2
export WAITIO_TRANSPORTS=tcp WAITIO_SINGLE_COPY=0 WAITIO_LOG=warn
t_start target 60 env WAITIO_PBID=0 "$prog" target "$command"
t_start attacker 60 "${as_other[@]}" env WAITIO_PBID=1 WAITIO_RMA_TEST_NO_ORIGIN_CHECKS=1 "$prog" attacker "$command"
t_wait attacker
t_wait target
t_show attacker
t_show target
if [ -e "$pwned" ]; then
  t_fail "the attacker's command ran in the target: $(cat "$pwned") (written by uid $(stat -c %u "$pwned"))"
fi
out=$(t_out attacker)
if grep -qE "read of the target's puts GOT slot [0-9]+ .*: OK" "$out"; then
  t_fail "the attacker read the target's puts GOT slot: $(grep -m1 -E 'GOT slot [0-9]+ .*: OK' "$out")"
fi
grep -qE "^attacker: PE 1 of 2; .* [1-9][0-9]* puts GOT slot" "$out" || t_fail "the attacker found no puts GOT slot to attack"
t_reject attacker "GOT slot [0-9]+ .*: OK" "a GOT read accepted"
t_reject attacker "write of .* into that slot: .*OK\)" "a GOT write accepted"
t_expect attacker "read of the target's puts GOT slot 0 .*: WAITIO_ERR_BOUNDS" "the slot's read refused at the origin"
t_expect attacker "write of .* into that slot: OK \(flush: WAITIO_ERR_BOUNDS\)" "the slot's write refused by the target, reported at the flush"
t_expect attacker "copy-relocated stdout .*: WAITIO_ERR_BOUNDS" "the C library's stdout is not exposed"
t_expect attacker "byte after the target's window: WAITIO_ERR_BOUNDS"
t_expect attacker "write of message \(\.data\): OK"
t_expect attacker "write of scratch \(\.bss, 4096 bytes\): OK"
t_expect attacker "read back of message and scratch: identical"
t_expect attacker "shmem_addr_accessible\(puts GOT slot 0, PE 0\) = 0" "OpenSHMEM: the slot is not symmetric"
t_expect attacker "shmem_addr_accessible\(message, PE 0\) = 1"
t_expect attacker "shmem_getmem of message from PE 0: identical"
t_expect target "scratch \(\.bss\): 0 of 4096 bytes differ"
t_expect target "message \(\.data\) is the attacker's"
t_reject target "CHANGED"
t_expect target "^echo PWNED-BY-THE-ATTACKER" "the target's puts prints the message (and runs nothing)"
[ "$(t_rc attacker)" = 0 ] || t_fail "the attacker exited with status $(t_rc attacker)"
[ "$(t_rc target)" = 0 ] || t_fail "the target exited with status $(t_rc target)"
t_expect target "^target ok"
t_expect attacker "^attacker ok"
if [ -n "${want:-}" ]; then
  got=$(sed -n 's/^target: PE 0 of 2; data window: \([0-9]*\) bytes.*/\1/p' "$(t_out target)")
  [ "$got" = "$want" ] || t_fail "the data window has $got bytes; .data start to .bss end is $want"
  t_log "data window: $got bytes = .data + .bss of the executable"
fi
t_pass "GOT, stdout and past-the-end refused by the target; .data/.bss written byte for byte"
