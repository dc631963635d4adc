#!/usr/bin/env bash
# sec_master_claim.sh — issue 25 item 6 (master): REGISTER frames from a key holder that claim
# PBs far larger than what they send. Before the fix the start-up master allocated and touched
# an entry for every claimed rank at a PB's first registration: one frame claiming 2^24
# processes cost it 786 MB. Now a claim is checked against WAITIO_MAX_PROCS (default 2^20, all
# PBs together) before anything is allocated, and what the master holds grows with the ranks
# that actually arrive (a bit per claimed rank, and each block's entries).
#  (A) an instance of 3 PBs: one frame claiming 2^24 processes, one claiming rank 2^24-1 of 2^24,
#      and two connections claiming 2^23 each (PBs 1 and 2): each is refused with an ERROR and a
#      logged reason, the master's peak memory (VmHWM) grows by less than 32 MiB, and then the
#      real PBs 1 and 2 start and the job completes;
#  (B) a claim the limit admits (PB 1 of 1,000,000 processes) registered sparsely, one entry
#      every 2048 ranks (489 frames), then a claim for PB 2 that would pass the limit: the master
#      grows by less than 32 MiB (before: 48 MB), the second claim is refused, the real PB 1 is
#      told clearly that its size differs, and the master ends with a start-up timeout naming
#      what it waited for (no crash, no OOM).
# The attacker holds the instance key (it runs as the test's uid: the uid changes nothing here).
# timeout: 150
set -uo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/sec.inc"
t_require_progs core_ring
limit_kb=$((32 * 1024))
san=()
if t_sanitized; then
  # AddressSanitizer keeps freed memory in quarantine: VmHWM would measure that
  san=(ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0")
fi

# start_master NAME SECS INIT_TIMEOUT: PB 0's master (core_ring), listening; sets $pm
start_master() {
  t_start "$1" "$2" env "${san[@]}" WAITIO_PBID=0 WAITIO_LOG=warn "$TEST_PROGS/core_ring" 3 "$3"
  pm=$(t_prog_pid "$1" core_ring) || t_fail "the master did not start"
  local i
  for ((i = 0; i < 200; i++)); do
    t_listen_ports "$pm" | grep -qx "$WAITIO_MASTER_PORT" && break
    sleep 0.05
  done
  t_listen_ports "$pm" | grep -qx "$WAITIO_MASTER_PORT" || t_fail "the master does not listen on $WAITIO_MASTER_PORT"
  sleep 0.2
}

# claim LABEL ARGS...: runs the attack client, then checks the master's memory
claim() {
  local label=$1 out
  shift
  out=$T_DIR/claim-$label.out
  local hwm0 hwm1
  hwm0=$(t_rss_kb "$pm" VmHWM)
  t_attack register-claim --master-port "$WAITIO_MASTER_PORT" --npb "$WAITIO_NPB" "$@" >"$out" 2>&1 ||
    t_fail "attack client ($label) failed: $(cat "$out")"
  sleep 0.3
  hwm1=$(t_rss_kb "$pm" VmHWM)
  sed "s/^/  [$label] /" "$out"
  local growth=$((hwm1 - hwm0))
  t_log "$label: master VmHWM $hwm0 -> $hwm1 KiB (+$growth KiB), VmRSS now $(t_rss_kb "$pm" VmRSS) KiB"
  [ "$growth" -lt "$limit_kb" ] || t_fail "$label: the master's peak memory grew by $growth KiB (limit $limit_kb)"
  growths+=("$label +${growth} KiB")
}
growths=()

# ---- (A) claims over the limit: refused, cheap, and the job still starts ----
t_instance 3
start_master pb0 90 60
claim huge --claim 1,0,16777216
claim huge-rank --claim 2,16777215,16777216
claim many-pbs --claim 1,0,8388608 --claim 2,0,8388608
for f in huge huge-rank many-pbs; do
  n=$(grep -c ': refused: ' "$T_DIR/claim-$f.out")
  want=$([ $f = many-pbs ] && echo 2 || echo 1)
  [ "$n" = "$want" ] || t_fail "$f: $n of $want claims refused by the master"
done
grep -q 'refused: .*WAITIO_MAX_PROCS' "$T_DIR/claim-huge.out" ||
  t_fail "the refusal does not name WAITIO_MAX_PROCS: $(cat "$T_DIR/claim-huge.out")"
t_running pb0 || t_fail "the master did not survive the claims"
logged=$(grep -c 'refusing a registration' "$(t_out pb0)")
[ "$logged" -ge 4 ] || t_fail "the master logged $logged refusals, expected 4"
t_start pb1 60 env WAITIO_PBID=1 "$TEST_PROGS/core_ring" 3 60
t_start pb2 60 env WAITIO_PBID=2 "$TEST_PROGS/core_ring" 3 60
bad=()
for n in pb0 pb1 pb2; do t_wait "$n" || bad+=("$n:$(t_rc "$n")"); done
[ ${#bad[@]} -eq 0 ] || t_fail "the job failed after the refused claims (name:exit status): ${bad[*]}"
t_expect pb0 '^core_ring ok: 3 processes, 3 rounds'

# ---- (B) a claim the limit admits, registered sparsely; a second one over the limit ----
t_instance 3
start_master bpb0 60 15
claim sparse --sparse 1,1000000,2048 --hold 0
claim over --claim 2,0,100000
grep -q 'claim 2,0,100000: refused: ' "$T_DIR/claim-over.out" ||
  t_fail "a claim taking the instance over WAITIO_MAX_PROCS was not refused"
t_start bpb1 30 env WAITIO_PBID=1 "$TEST_PROGS/core_ring" 3 20
t_expect_rc bpb1 1
t_expect bpb1 'PB size differs' "the real PB 1 must be told why it was refused"
t_expect_rc bpb0 1
t_expect bpb0 'start-up timed out .*PB 1 \(489 of 1000000 processes registered\)'
t_reject bpb0 'AddressSanitizer|Segmentation|out of memory'
t_pass "master peak memory: ${growths[*]}; refused claims logged; the job then started"
