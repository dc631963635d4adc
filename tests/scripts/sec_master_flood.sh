#!/usr/bin/env bash
# sec_master_flood.sh — issue 11 item 3: thousands of keyless HELLOs at the start-up master.
# PB 0's master waits for PB 1 while a client sends it 20,000 HELLOs without the key (64 at a
# time; each waits for the master's answer, so every one was processed, then is reset). Before
# the fix the master kept ~4 KB per HELLO until start-up ended (20,000 HELLOs: 5 MB -> 91 MB).
# Now nothing is allocated for a connection before it authenticates (and a connection that
# registers nothing is forgotten when it closes): the master's peak resident memory (VmHWM)
# may grow by at most 8 MiB, its log stays short (rate-limited, with counts), and PB 1 then
# starts and the job completes, every byte checked.
# timeout: 120
set -uo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/sec.inc"
t_require_progs core_ring
t_instance 2
count=${WAITIO_TEST_FLOOD:-20000}
san=()
if grep -q "^WAITIO_SANITIZE:BOOL=ON" "$WAITIO_BUILD_DIR/CMakeCache.txt" 2>/dev/null; then
  # AddressSanitizer keeps freed memory in quarantine (256 MiB): resident memory would measure
  # that, not what the master holds
  san=(ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0")
fi
t_start pb0 90 env "${san[@]}" WAITIO_PBID=0 WAITIO_LOG=warn "$TEST_PROGS/core_ring" 5 60
pm=$(t_prog_pid pb0 core_ring) || t_fail "the master did not start"
for ((i = 0; i < 100; i++)); do
  t_listen_ports "$pm" | grep -qx "$WAITIO_MASTER_PORT" && break
  sleep 0.05
done
t_listen_ports "$pm" | grep -qx "$WAITIO_MASTER_PORT" || t_fail "the master does not listen on $WAITIO_MASTER_PORT"
sleep 0.2
rss0=$(t_rss_kb "$pm" VmRSS); hwm0=$(t_rss_kb "$pm" VmHWM); c0=$(t_cpu_ticks "$pm"); t0=$(t_now)
t_attack hello-flood --port "$WAITIO_MASTER_PORT" --count "$count" >"$T_DIR/attack.out" 2>&1 ||
  t_fail "attack client failed: $(cat "$T_DIR/attack.out")"
sleep 0.5
dt=$(t_since "$t0")
rss1=$(t_rss_kb "$pm" VmRSS); hwm1=$(t_rss_kb "$pm" VmHWM); c1=$(t_cpu_ticks "$pm")
cat "$T_DIR/attack.out"
t_running pb0 || t_fail "the master did not survive the flood"
cpu=$(awk -v a="$c0" -v b="$c1" -v hz="$(getconf CLK_TCK)" -v dt="$dt" 'BEGIN { printf "%.0f", 100 * (b - a) / hz / dt }')
t_log "master memory: VmRSS $rss0 -> $rss1 KiB, VmHWM $hwm0 -> $hwm1 KiB; CPU ${cpu}% over ${dt} s"
t_start pb1 60 env WAITIO_PBID=1 "$TEST_PROGS/core_ring" 5 60
bad=()
for n in pb0 pb1; do t_wait "$n" || bad+=("$n:$(t_rc "$n")"); done
[ ${#bad[@]} -eq 0 ] || t_fail "the job failed after the flood (name:exit status): ${bad[*]}"
t_expect pb0 '^core_ring ok: 2 processes, 5 rounds'
answered=$(sed -n 's/^answered: //p' "$T_DIR/attack.out")
[ "${answered:-0}" -ge $((count * 9 / 10)) ] || t_fail "the master answered only ${answered:-0} of $count HELLOs (the flood did not reach it)"
lines=$(wc -l <"$(t_out pb0)")
suppressed=$(grep -o '\[[0-9]* similar messages suppressed\]' "$(t_out pb0)" | tr -dc '0-9\n' |
  awk '{ s += $1 } END { print s + 0 }')
t_log "master log: $lines lines (and $suppressed similar messages counted, not written)"
growth=$((hwm1 - hwm0))
[ "$growth" -le 8192 ] || t_fail "the master's peak memory grew by $growth KiB under $count keyless HELLOs"
[ "$lines" -lt 200 ] || t_fail "the master wrote $lines log lines"
t_pass "$answered keyless HELLOs: master VmHWM +$growth KiB, $lines log lines; the job then succeeded"
