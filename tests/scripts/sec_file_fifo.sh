#!/usr/bin/env bash
# sec_file_fifo.sh — issue 25 item 3: a FIFO planted where file mode expects a file must not
# block a process (open(2) of a FIFO for reading waits for a writer: before the fix a PB sat in
# open() for as long as the attacker liked — 40 s when the issue was filed — and forever here,
# since nobody ever opens the FIFO for writing). Two places, each with a bound well under that:
#   1. a stream in PB 0's inbox, claiming to come from process 1, whose segment 0 is a FIFO,
#      planted while the job runs (PB 0 keeps making progress meanwhile); PB 0 must report it
#      within 10 s and the job must still finalize within 10 s after that;
#   2. the start-up record boot/master planted as a FIFO before PB 1 starts (PB 1 reads it first,
#      PB 0, the master, starts 1 s later); start-up must complete within 15 s.
# Files are now opened O_NONBLOCK|O_NOFOLLOW and refused unless fstat says they are regular.
# timeout: 60
set -uo pipefail
source "$(dirname "$0")/lib.sh"
t_require_progs init_probe
scratch=$T_DIR/scratch
mkdir -p "$scratch"
chmod 700 "$scratch"
key=$(t_random_key)
common=(WAITIO_COMM_TYPE=file WAITIO_SCRATCH_DIR="$scratch" WAITIO_NPB=2 WAITIO_KEY="$key" WAITIO_LOG=warn)
# waits for NAME to exit within SECS; prints the seconds it took after T0
bounded() {
  local name=$1 secs=$2 t0=$3 end
  end=$(awk -v a="$(date +%s.%N)" -v s="$secs" 'BEGIN { printf "%.3f", a + s }')
  while t_running "$name"; do
    awk -v e="$end" -v n="$(date +%s.%N)" 'BEGIN { exit !(n > e) }' && return 1
    sleep 0.05
  done
  t_since "$t0"
}

# 1. a FIFO as a segment
job=fifo-seg-$$
for pb in 0 1; do
  t_start "seg$pb" 45 env "${common[@]}" WAITIO_JOB_ID=$job WAITIO_PBID=$pb "$TEST_PROGS/init_probe" \
    --label "seg$pb" --timeout 20 --exchange --hold-progress "$T_DIR/go" --alarm 40
done
for pb in 0 1; do t_wait_line "seg$pb" 'holding' 30 || t_fail "PB $pb did not start up and exchange"; done
stage=$T_DIR/stage
mkdir -p "$stage/c1-00000000f1f0f1f0"
chmod 700 "$stage/c1-00000000f1f0f1f0"
mkfifo "$stage/c1-00000000f1f0f1f0/0000000000000000"
mv "$stage/c1-00000000f1f0f1f0" "$scratch/.waitio-file-$job/in-0.0/"
# finalize alone need not look at the inbox again, so the rejection is awaited while PB 0 polls
t_wait_line seg0 'c1-00000000f1f0f1f0: segment 0 rejected: not a regular file' 10 ||
  t_fail "PB 0 did not reject the FIFO within 10 s (blocked in open(2)?)"
t0=$(t_now)
touch "$T_DIR/go"
took=$(bounded seg0 10 "$t0") || t_fail "PB 0 was still blocked 10 s after it resumed (the FIFO planted as a segment)"
t_log "PB 0 finalized ${took} s after it resumed"
t_wait seg0 || t_fail "PB 0 failed"
t_wait seg1 || t_fail "PB 1 failed"
t_expect seg0 'ring exchange among 2 processes ok' "the job must complete"
t_expect seg0 'c1-00000000f1f0f1f0: segment 0 rejected: not a regular file' "the FIFO was not rejected"

# 2. a FIFO as the start-up record "master"
job=fifo-boot-$$
mkdir -p "$scratch/.waitio-file-$job/boot"
chmod 700 "$scratch/.waitio-file-$job" "$scratch/.waitio-file-$job/boot"
mkfifo "$scratch/.waitio-file-$job/boot/master"
t0=$(t_now)
t_start boot1 45 env "${common[@]}" WAITIO_JOB_ID=$job WAITIO_PBID=1 "$TEST_PROGS/init_probe" \
  --label boot1 --timeout 20 --exchange --alarm 40
sleep 1
t_start boot0 45 env "${common[@]}" WAITIO_JOB_ID=$job WAITIO_PBID=0 "$TEST_PROGS/init_probe" \
  --label boot0 --timeout 20 --exchange --alarm 40
took2=$(bounded boot1 15 "$t0") || t_fail "PB 1 was still blocked 15 s after it started (the FIFO planted as boot/master)"
t_wait boot1 || t_fail "PB 1 failed"
t_wait boot0 || t_fail "PB 0 failed"
t_expect boot1 'ring exchange among 2 processes ok' "the job must complete"
t_expect boot1 'master ignored: not a regular file' "the FIFO was not reported"
t_pass "a FIFO as a segment: finalize took ${took} s; as boot/master: start-up and exchange took ${took2} s"
