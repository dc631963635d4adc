#!/usr/bin/env bash
# boot_shm.sh — the address table through one shared-memory segment per host (boot_shm.c,
# docs/protocol.md "Start-up"), with 2 PBs of 12 plain processes (8 under ASan) (bench/scale_plain.c: each
# inits, exchanges a checked 4 KiB message with the same rank of the other PB, finalizes):
# (a) one host: the master writes the segment, the 23 others read it (the master's debug log
#     says so), nothing is left in /dev/shm;
# (b) PB 1 announces another host (test hook WAITIO_TEST_HOST_ID): PB 1 rank 0 is that host's
#     leader, makes its segment, the other 11 read it, RELEASE removes it;
# (c) WAITIO_BOOT_TABLE_SHM=0: every process gets its own TABLE, as before;
# (d) a segment whose bytes do not match the digest (test hook WAITIO_TEST_BOOT_SHM_CORRUPT on
#     the master; then on PB 1's leader): every reader fails start-up cleanly with a message
#     naming the digest (exit status 1, no signal), nothing is left in /dev/shm.
# timeout: 90
set -uo pipefail
source "$(dirname "$0")/lib.sh"
prog=$WAITIO_BUILD_DIR/bench/waitio-scale-plain
[ -x "$prog" ] || t_fail "missing $prog"
n=12
t_sanitized && n=8   # the same cases, fewer processes under ASan
ulimit -n 4096 2>/dev/null || true
since=$T_DIR/since
touch "$since"

# segments of this user's table naming ("-t<random>") created since the test began whose creator
# (the pid in the name) is gone: left behind
leftovers() {
  local f pid
  for f in $(find /dev/shm -maxdepth 1 -name "waitio-$(id -u)-*-t*" -newer "$since" 2>/dev/null); do
    pid=$(basename "$f" | cut -d- -f3)
    kill -0 "$pid" 2>/dev/null || echo "$f"
  done
}

# run NAME [VAR=VAL...]: 2 PBs of $n through the launcher; output in $T_DIR/NAME.out
run() {
  local name=$1
  shift
  t_instance 2
  t_start "$name" 60 env "$@" "$prog" launch "$n" 40
  t_wait "$name"
}

t_log "(a) one host: the master's segment"
run one WAITIO_LOG=warn,boot=debug || { t_show one; t_fail "(a) failed"; }
t_expect one "N=$n procs=$((2 * n)) .* failed=0"
t_expect one "table of [0-9]+ bytes to $((2 * n - 1)) processes on 1 hosts"
grep -q "get the table each" "$(t_out one)" && { t_show one; t_fail "(a) fell back to copies"; }
[ -z "$(leftovers)" ] || t_fail "(a) left behind: $(leftovers)"

t_log "(b) PB 1 as another host: its leader's segment"
run other WAITIO_LOG=warn,boot=debug SCALE_PB1_ENV=WAITIO_TEST_HOST_ID=5ca1ab1e || { t_show other; t_fail "(b) failed"; }
t_expect other "N=$n procs=$((2 * n)) .* failed=0"
t_expect other "table of [0-9]+ bytes to $((2 * n - 1)) processes on 2 hosts"
grep -q "get the table each" "$(t_out other)" && { t_show other; t_fail "(b) fell back to copies"; }
[ -z "$(leftovers)" ] || t_fail "(b) left behind: $(leftovers)"

t_log "(c) WAITIO_BOOT_TABLE_SHM=0: a copy each"
run copies WAITIO_BOOT_TABLE_SHM=0 || { t_show copies; t_fail "(c) failed"; }
t_expect copies "N=$n procs=$((2 * n)) .* failed=0"

t_log "(d) a segment that does not match its digest"
run corrupt SCALE_INIT_ONLY=1 WAITIO_TEST_BOOT_SHM_CORRUPT=1
rc=$(t_rc corrupt)
[ "$rc" = 1 ] || { t_show corrupt; t_fail "(d) the launcher exited $rc, expected 1 (some workers fail)"; }
t_expect corrupt "failed=$((2 * n - 1))"   # all but the master
[ "$(grep -c 'does not match the SHA-256 digest' "$(t_out corrupt)")" = $((2 * n - 1)) ] ||
  { t_show corrupt; t_fail "(d) not every reader named the digest"; }
t_reject corrupt "Sanitizer|core dumped|Segmentation"
[ -z "$(leftovers)" ] || t_fail "(d) left behind: $(leftovers)"

t_log "(d2) PB 1's leader writes a spoiled segment"
run corrupt2 SCALE_INIT_ONLY=1 "SCALE_PB1_ENV=WAITIO_TEST_HOST_ID=5ca1ab1e WAITIO_TEST_BOOT_SHM_CORRUPT=1"
[ "$(grep -c 'does not match the SHA-256 digest' "$(t_out corrupt2)")" = $((n - 1)) ] ||
  { t_show corrupt2; t_fail "(d2) PB 1's readers did not all name the digest"; }
t_expect corrupt2 "failed=$((n - 1))"
t_reject corrupt2 "Sanitizer|core dumped|Segmentation"
[ -z "$(leftovers)" ] || t_fail "(d2) left behind: $(leftovers)"
t_pass
