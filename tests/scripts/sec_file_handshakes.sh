#!/usr/bin/env bash
# sec_file_handshakes.sh — issue 25 item 3: stream directories planted in a process's inbox
# (by anyone who can write there; no key needed) each start a handshake. Before the fix every
# one was accepted at once: 3,000 planted directories made 3,000 concurrent handshakes and grew
# the process by about 28 MB. Now a file stream counts against WAITIO_MAX_HANDSHAKES (default
# 64) like a TCP accept: the rest wait in the inbox, the one idle the longest is dropped (and its
# directory removed) to make room, and memory stays bounded.
# A 2-PB job of tests/progs/idle: PB 0 waits in waitio_wait for PB 1, which sleeps 6 s. While
# PB 0 waits, 3,000 directories c1-<random nonce> are planted in its inbox; PB 0's resident
# size is sampled for 4 s, and its debug log says how many connections were open or in their
# handshake at each accept. Fails when PB 0 grows by more than 4 MB, when more than the cap (plus
# the job's own connection) were in their handshake at once, or when the job does not complete.
# timeout: 90
set -uo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/sec.inc"
t_require_progs idle
n_planted=${SEC_FILE_PLANTED:-3000}
cap=64
limit_kb=4096
san=()
if t_sanitized; then
  # AddressSanitizer keeps freed memory in quarantine, and its allocations are larger
  san=(ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0")
  limit_kb=$((3 * limit_kb))
fi
scratch=$T_DIR/scratch
mkdir -p "$scratch"
chmod 700 "$scratch"
job=hs-$$
common=(WAITIO_COMM_TYPE=file WAITIO_SCRATCH_DIR="$scratch" WAITIO_JOB_ID=$job WAITIO_NPB=2
        WAITIO_KEY="$(t_random_key)" WAITIO_LOG=debug WAITIO_MAX_HANDSHAKES=$cap)
for pb in 0 1; do
  t_start "pb$pb" 60 env "${common[@]}" "${san[@]}" WAITIO_PBID=$pb "$TEST_PROGS/idle" --sleep 6 --max-cores 100 --alarm 50
done
pid=$(t_prog_pid pb0 idle) || t_fail "PB 0 did not start"
inbox=$scratch/.waitio-file-$job/in-0.0
for ((i = 0; i < 200; i++)); do [ -d "$inbox" ] && break; sleep 0.05; done
sleep 1 # start-up done, PB 0 waiting
rss0=$(t_rss_kb "$pid" VmRSS)
python3 - "$inbox" "$n_planted" <<'PY'
import os, sys
inbox, n = sys.argv[1], int(sys.argv[2])
for _ in range(n):
    os.mkdir(os.path.join(inbox, "c1-" + os.urandom(8).hex()), 0o700)
PY
t_log "planted $n_planted stream directories in PB 0's inbox (RSS $rss0 KiB)"
rss_max=$rss0
for ((i = 0; i < 40; i++)); do
  r=$(t_rss_kb "$pid" VmRSS)
  [ "${r:-0}" -gt "$rss_max" ] && rss_max=$r
  sleep 0.1
done
left=$(ls "$inbox" 2>/dev/null | grep -c '^c1-' || true)
bad=()
for n in pb0 pb1; do t_wait "$n" || bad+=("$n:$(t_rc "$n")"); done
growth=$((rss_max - rss0))
accepted=$(grep -c 'file transport: accepted c1-' "$T_DIR/pb0.out")
most=$(sed -n 's/.*file transport: accepted c1-.* (\([0-9]*\) connections open or in their handshake).*/\1/p' "$T_DIR/pb0.out" | sort -n | tail -1)
t_log "PB 0: RSS $rss0 -> max $rss_max KiB (+$growth KiB); $accepted planted streams accepted, at most ${most:-?} connections open or in their handshake at once; $left planted directories still there after 4 s"
[ ${#bad[@]} -eq 0 ] || t_fail "the job failed (name:exit status): ${bad[*]}"
[ "$growth" -le "$limit_kb" ] || t_fail "PB 0 grew by $growth KiB for $n_planted planted stream directories (at most $cap handshakes should be in memory)"
[ "$accepted" -gt 0 ] || t_fail "PB 0 never logged an accepted stream (WAITIO_LOG=debug)"
[ "${most:-0}" -le $((cap + 2)) ] || t_fail "$most connections were open or in their handshake at once (cap $cap)"
t_pass "$n_planted planted streams: +$growth KiB, at most $most connections open or in their handshake at once (cap $cap)"
