#!/usr/bin/env bash
# file_garbage.sh — foreign and garbage files in the shared directory are rejected with a
# logged reason, never parsed as data, and the job carries on: a 2-PB job in file mode starts up
# through the directory while its start-up records are garbage (PB 1 starts first and finds a
# garbage "master" record), then runs a checked ring exchange while files are dropped into PB
# 0's inbox: a stray file, a directory with a foreign name, a stream claiming to come from
# process 1 whose first segment is random bytes, one whose segment is well formed but carries a
# wrong MAC (written without the key), and a garbage heartbeat.
# timeout: 90
set -uo pipefail
source "$(dirname "$0")/lib.sh"
t_require_progs core_ring
shared=$T_DIR/shared
job=garbage-$$
dir=$shared/.waitio-file-$job
mkdir -p "$dir/boot" "$dir/hb"
chmod 700 "$dir" "$dir/boot" "$dir/hb"
head -c 300 /dev/urandom >"$dir/boot/master"
head -c 100 /dev/urandom >"$dir/boot/table"
common=(WAITIO_COMM_TYPE=file WAITIO_SCRATCH_DIR="$shared" WAITIO_JOB_ID=$job WAITIO_NPB=2
        WAITIO_KEY="$(t_random_key)" WAITIO_LOG=info WAITIO_PEER_TIMEOUT=10)
t_start pb1 60 env "${common[@]}" WAITIO_PBID=1 "$TEST_PROGS/core_ring" 80 30 25
sleep 0.5
t_start pb0 60 env "${common[@]}" WAITIO_PBID=0 "$TEST_PROGS/core_ring" 80 30 25
t_wait_line pb0 'initialised' 30 || true
sleep 0.3
inbox=$dir/in-0.0
[ -d "$inbox" ] || { t_show_all; t_fail "PB 0's inbox does not exist"; }
head -c 64 /dev/urandom >"$inbox/junk"
# the forged streams are written aside and moved in whole (rename), as a writer publishes: a
# reader that found a half-written file would rightly reject it as truncated, not for the
# reason each case is here to show (seen under load)
stage=$T_DIR/stage
mkdir -p "$stage/c1-00000000deadbeef" "$stage/c1-00000000cafebabe" "$inbox/c9-zz"
head -c 4096 /dev/urandom >"$stage/c1-00000000deadbeef/0000000000000000"
python3 - "$stage/c1-00000000cafebabe/0000000000000000" <<'PY'
import os, struct, sys
payload = os.urandom(200)
hdr = struct.pack("<QHHIQQQQ", 0x32304745534f4957, 2, 0, 0, 0xcafebabe, 0, len(payload), 0)
open(sys.argv[1], "wb").write(hdr + payload + os.urandom(32))
PY
mv "$stage/c1-00000000deadbeef" "$stage/c1-00000000cafebabe" "$inbox/"
head -c 50 /dev/urandom >"$dir/hb/7.7"
bad=()
for n in pb0 pb1; do t_wait "$n" || bad+=("$n:$(t_rc "$n")"); done
[ ${#bad[@]} -eq 0 ] || { t_show_all; t_fail "the job failed (name:exit status): ${bad[*]}"; }
t_expect pb0 '^core_ring ok: 2 processes, 80 rounds' "the job must complete"
t_expect pb1 "master ignored: not a WaitIO record" "the garbage start-up record was not reported"
t_expect pb0 "ignoring .*/junk: not a stream" "the stray file was not reported"
t_expect pb0 "ignoring .*/c9-zz: not a stream" "the foreign directory was not reported"
t_expect pb0 "c1-00000000deadbeef: segment 0 rejected: not a WaitIO segment" "the random segment was not rejected"
t_expect pb0 "c1-00000000cafebabe: segment 0 rejected: its MAC does not match" "the forged segment was not rejected"
grep -h "rejected\|ignor" "$T_DIR"/pb*.out | sed 's/^/  /'
t_pass
