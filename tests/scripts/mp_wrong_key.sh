#!/usr/bin/env bash
# mp_wrong_key.sh — authentication (SPEC §10), by hand with plain processes:
#  - a 2-PB job (PB 0: 1 process, PB 1: 2 processes, tests/progs/exchange) runs with key K;
#  - before the real PB 1 starts, intruders claiming to be PB 1 rank 0 contact the master: one
#    with another WAITIO_KEY, one with WAITIO_KEY_FILE naming a file (mode 0600) holding another
#    key. Each must get WAITIO_ERR_AUTH from waitio_init within 8 s (not a time-out);
#  - the master logs the rejections (WAITIO_LOG=warn) and keeps waiting; the real PB 1 then
#    starts and the whole exchange test passes (the intruders were not registered as PB 1);
#  - single-process key-file checks: a key file readable by others is refused with
#    WAITIO_ERR_KEY and a message saying so; a missing key file gives WAITIO_ERR_KEY.
# timeout: 60
set -uo pipefail
source "$(dirname "$0")/lib.sh"
t_require_progs exchange init_probe
probe=$TEST_PROGS/init_probe
port=$(t_free_port)
key=$(t_random_key)
inst=(WAITIO_NPB=2 WAITIO_MASTER_HOST=127.0.0.1 WAITIO_MASTER_PORT=$port)
xargs=(--alarm 40 --op-timeout 30 --expect-nprocs 1,2 --init-timeout 30)

t_start pb0 45 env "${inst[@]}" WAITIO_KEY="$key" WAITIO_PBID=0 WAITIO_LOG=warn \
  "$TEST_PROGS/exchange" "${xargs[@]}"

t_start intruder-key 20 env "${inst[@]}" WAITIO_KEY="not-$key" WAITIO_PBID=1 WAITIO_PB_RANK=0 \
  WAITIO_PB_SIZE=2 "$probe" --label intruder-key --timeout 10 --expect AUTH --max-secs 8 --alarm 15
t_wait intruder-key

umask 077
echo "some-other-key-$RANDOM$RANDOM" >"$T_DIR/other.key"
t_start intruder-keyfile 20 env "${inst[@]}" WAITIO_KEY_FILE="$T_DIR/other.key" WAITIO_PBID=1 \
  WAITIO_PB_RANK=0 WAITIO_PB_SIZE=2 HOME="$T_DIR" "$probe" --label intruder-keyfile --timeout 10 \
  --expect AUTH --max-secs 8 --alarm 15
t_wait intruder-keyfile

t_running pb0 || t_fail "PB 0 (the master) did not survive the intruders"
for r in 0 1; do
  t_start "pb1.r$r" 45 env "${inst[@]}" WAITIO_KEY="$key" WAITIO_PBID=1 WAITIO_PB_RANK=$r \
    WAITIO_PB_SIZE=2 "$TEST_PROGS/exchange" "${xargs[@]}"
done

# key files: readable by others (refused), missing
echo "k-$RANDOM" >"$T_DIR/open.key"
chmod 0644 "$T_DIR/open.key"
t_start keyfile-open 20 env WAITIO_NPB=1 WAITIO_KEY_FILE="$T_DIR/open.key" HOME="$T_DIR" "$probe" \
  --label keyfile-open --timeout 5 --expect KEY --max-secs 4 --msg 'readable|permission|mode' \
  --alarm 15
t_start keyfile-missing 20 env WAITIO_NPB=1 WAITIO_KEY_FILE="$T_DIR/does-not-exist.key" \
  HOME="$T_DIR" "$probe" --label keyfile-missing --timeout 5 --expect KEY --max-secs 4 \
  --msg 'does-not-exist.key' --alarm 15

bad=()
for n in intruder-key intruder-keyfile pb0 pb1.r0 pb1.r1 keyfile-open keyfile-missing; do
  t_wait "$n" || bad+=("$n:$(t_rc "$n")")
done
t_show_all
[ ${#bad[@]} -eq 0 ] || t_fail "failed (name:exit status): ${bad[*]}"
t_expect intruder-key '^init_probe\[intruder-key\]: waitio_init returned WAITIO_ERR_AUTH'
t_expect intruder-keyfile '^init_probe\[intruder-keyfile\]: waitio_init returned WAITIO_ERR_AUTH'
t_expect pb0 '^exchange ok: 3 processes, 2 PBs' "the real job must complete"
n=$(grep -ciE 'warn.*auth' "$(t_out pb0)")
[ "$n" -ge 2 ] || t_fail "the master (WAITIO_LOG=warn) logged $n authentication warnings, expected one per intruder (2)"
t_expect keyfile-open '^init_probe\[keyfile-open\]: ok'
t_expect keyfile-missing '^init_probe\[keyfile-missing\]: ok'
t_pass
