#!/usr/bin/env bash
# sec_tmp_symlink.sh — issue 11 item 6: files WaitIO writes must never follow a symlink planted
# at a temporary path. Another user of a shared directory plants symlinks to a file outside
# (here: "precious", with known content) at every temporary name WaitIO used to write, for the
# next 1000 process ids: <rendezvous>.tmp.<pid>, <waitio-serv file>.tmp.<host>.<pid>, and
# ~/.waitio/key.tmp.<pid>. Then: a 2-PB job starts up through WAITIO_RENDEZVOUS in that
# directory; waitio-serv -d publishes a host there and -c reads it back; a first start-up with
# no key creates ~/.waitio/key. Before the fix the rendezvous file and waitio-serv wrote through
# the symlink (O_CREAT|O_TRUNC: "precious" overwritten) and the key creation failed on it. Now
# temporary files come from mkstemp and are renamed into place: "precious" is untouched, every
# flow works, and the key file is private to its user.
# timeout: 60
set -uo pipefail
source "$(dirname "$0")/lib.sh"
t_require_progs core_ring init_probe
serv=$WAITIO_BUILD_DIR/tools/waitio-serv
[ -x "$serv" ] || t_fail "waitio-serv is not built"
shared=$T_DIR/shared
home=$T_DIR/home
mkdir -p "$shared" "$home/.waitio" "$T_DIR/outside"
chmod 700 "$home/.waitio"
precious=$T_DIR/outside/precious
echo "precious content $RANDOM" >"$precious"
sum0=$(sha256sum <"$precious")
first=$(($(cat /proc/sys/kernel/ns_last_pid 2>/dev/null || echo 1000) + 1))
python3 - "$precious" "$shared" "$home/.waitio" "$(hostname)" "$first" <<'PY'
import os, sys
target, shared, keydir, host, first = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
for pid in range(first, first + 1000):
    for path in (f"{shared}/inst.rdv.tmp.{pid}", f"{shared}/host.tmp.{host}.{pid}", f"{keydir}/key.tmp.{pid}"):
        os.symlink(target, path)
PY
t_log "planted $(find "$T_DIR" -type l | wc -l) symlinks to $precious (pids $first..$((first + 999)))"

# 1. start-up through a rendezvous file in the shared directory
key=test-$(od -An -tx8 -N16 /dev/urandom | tr -d ' \n')
for pb in 0 1; do
  t_start "rdv$pb" 40 env -u WAITIO_MASTER_PORT -u WAITIO_MASTER_HOST WAITIO_NPB=2 WAITIO_PBID=$pb \
    WAITIO_KEY="$key" WAITIO_RENDEZVOUS="$shared/inst.rdv" "$TEST_PROGS/core_ring" 3 30
done
# 2. waitio-serv publishes a host there
WAITIO_SERV_FILE=$shared/host "$serv" -d -m node-$RANDOM >"$T_DIR/serv-d.out" 2>&1 || t_fail "waitio-serv -d failed: $(cat "$T_DIR/serv-d.out")"
published=$(WAITIO_SERV_FILE=$shared/host "$serv" -c -t 5) || t_fail "waitio-serv -c found nothing"
# 3. the first start-up without a key creates ~/.waitio/key
t_start keyinit 30 env -u WAITIO_KEY -u WAITIO_KEY_FILE HOME="$home" WAITIO_NPB=1 \
  WAITIO_MASTER_HOST=127.0.0.1 WAITIO_MASTER_PORT="$(t_free_port)" "$TEST_PROGS/init_probe" \
  --label keyinit --timeout 10 --alarm 20
bad=()
for n in rdv0 rdv1 keyinit; do t_wait "$n" || bad+=("$n:$(t_rc "$n")"); done
sum1=$(sha256sum <"$precious")
[ "$sum0" = "$sum1" ] || t_fail "the file outside was overwritten through a planted symlink: $(head -c 200 "$precious")"
[ ${#bad[@]} -eq 0 ] || t_fail "failed (name:exit status): ${bad[*]}"
t_expect rdv0 '^core_ring ok: 2 processes, 3 rounds' "start-up through the rendezvous file"
case $published in node-*) ;; *) t_fail "waitio-serv -c printed '$published'" ;; esac
[ -f "$shared/host" ] && [ ! -L "$shared/host" ] || t_fail "waitio-serv did not write a regular file"
t_expect keyinit '^init_probe\[keyinit\]: ok' "the key file was created"
[ -f "$home/.waitio/key" ] && [ ! -L "$home/.waitio/key" ] || t_fail "no regular key file was created"
mode=$(stat -c %a "$home/.waitio/key")
[ "$mode" = 600 ] || t_fail "the key file has mode $mode"
left=$(find "$shared" "$home/.waitio" -type f ! -name host ! -name key | wc -l)
[ "$left" -eq 0 ] || t_fail "$left temporary files were left behind"
t_pass "symlinks at every predictable temporary path: $precious untouched; rendezvous, waitio-serv and key creation all worked"
