#!/usr/bin/env bash
# sec_idle_flood.sh — issue 11 item 2: hundreds of idle keyless connections against processes
# with few descriptors. A 2-PB job (PB 0: one process; PB 1: two victims run with ulimit -n 64)
# exchanges all-to-all; the victims wait inside WaitIO for PB 0, which starts late and pauses
# between rounds, so they poll all along while each takes 400 connections that never send a
# byte (reopened as soon as the victim closes them) for 8 s:
#  - victim A runs with the defaults: the handshake table (WAITIO_MAX_HANDSHAKES, counted
#    against WAITIO_MAX_CONNECTIONS) drops the idle ones, oldest first;
#  - victim B lifts both caps (1000): it reaches its descriptor limit, and only the handling of
#    that limit (accept no more than ulimit -n less a slack kept for the program, then drop the
#    handshake idle the longest or pause the listener; at EMFILE the reserve descriptor) protects it.
# Before the fix a victim spun at ~90% CPU writing millions of "accept failed" lines and its
# own connect failed with "Too many open files". Now the job succeeds, each victim stays under
# 30% CPU over 4 s of the attack (utime + stime from /proc/PID/stat, sampled while it runs) and
# writes under 100 lines.
# timeout: 90
set -uo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/sec.inc"
t_require_progs core_alltoall
t_instance 2
prog=$TEST_PROGS/core_alltoall
t_start pb0 60 env WAITIO_PBID=0 WAITIO_PB_RANK=0 WAITIO_PB_SIZE=1 WAITIO_LOG=warn "$prog" 16 0 300 1500
t_start victimA 60 bash -c "ulimit -n 64; exec env WAITIO_PBID=1 WAITIO_PB_RANK=0 WAITIO_PB_SIZE=2 \
  WAITIO_LOG=warn '$prog' 16"
t_start victimB 60 bash -c "ulimit -n 64; exec env WAITIO_PBID=1 WAITIO_PB_RANK=1 WAITIO_PB_SIZE=2 \
  WAITIO_LOG=warn WAITIO_MAX_CONNECTIONS=1000 WAITIO_MAX_HANDSHAKES=1000 '$prog' 16"
pa=$(t_prog_pid victimA core_alltoall) || t_fail "victim A did not start"
pb=$(t_prog_pid victimB core_alltoall) || t_fail "victim B did not start"
for ((i = 0; i < 60; i++)); do
  porta=$(t_listen_ports "$pa"); portb=$(t_listen_ports "$pb")
  [ -n "$porta" ] && [ -n "$portb" ] && break
  sleep 0.1
done
[ -n "$porta" ] && [ -n "$portb" ] || t_fail "the victims' data ports did not appear"
t_log "victim A (defaults) pid $pa port $porta; victim B (caps lifted) pid $pb port $portb"
t_start attackA 20 python3 "$T_ATTACK" --proto "$(t_proto)" idle-flood --port "$porta" --count 400 --secs 8
t_start attackB 20 python3 "$T_ATTACK" --proto "$(t_proto)" idle-flood --port "$portb" --count 400 --secs 8
sleep 1
# CPU (utime + stime) of each victim, sampled every 0.25 s for 4 s while it runs
hz=$(getconf CLK_TCK)
measure() { # PID -> "percent seconds"
  local pid=$1 t0 c0 c=0 t=0 i
  t0=$(t_now); c0=$(t_cpu_ticks "$pid")
  for ((i = 0; i < 16; i++)); do
    sleep 0.25
    [ -d "/proc/$pid" ] || break
    c=$(t_cpu_ticks "$pid"); t=$(t_since "$t0")
  done
  awk -v a="$c0" -v b="$c" -v hz="$hz" -v dt="$t" 'BEGIN { if (dt < 2) print "999 " dt; else printf "%.1f %.1f\n", 100 * (b - a) / hz / dt, dt }'
}
measure "$pa" >"$T_DIR/cpu_a" &
measure "$pb" >"$T_DIR/cpu_b"
wait $!
read -r cpu_a dt_a <"$T_DIR/cpu_a"; read -r cpu_b dt_b <"$T_DIR/cpu_b"
t_log "CPU under the attack: victim A ${cpu_a}% (over ${dt_a} s), victim B ${cpu_b}% (over ${dt_b} s)"
bad=()
for n in pb0 victimA victimB attackA attackB; do t_wait "$n" || bad+=("$n:$(t_rc "$n")"); done
lines_a=$(wc -l <"$(t_out victimA)"); lines_b=$(wc -l <"$(t_out victimB)")
t_log "log lines: victim A $lines_a, victim B $lines_b"
for n in attackA attackB; do t_log "$n: $(tr '\n' ' ' <"$(t_out "$n")")"; done
for n in victimA victimB; do
  if [ "$(wc -c <"$(t_out "$n")")" -gt 100000 ]; then
    head -c 2000 "$(t_out "$n")" >"$T_DIR/$n.head"; mv "$T_DIR/$n.head" "$(t_out "$n")"
    echo "[... output of $n cut after 2000 bytes ...]" >>"$(t_out "$n")"
  fi
done
[ ${#bad[@]} -eq 0 ] || t_fail "failed (name:exit status): ${bad[*]}"
[ "$(cat "$T_DIR"/pb0.out "$T_DIR"/victim?.out | grep -c 'core_alltoall rank .*: 16 rounds with 2 peers ok')" -eq 3 ] ||
  t_fail "not every process finished its exchanges"
for v in A B; do
  cpu=cpu_${v,,}; cpu=${!cpu}; lines=lines_${v,,}; lines=${!lines}
  awk -v c="$cpu" 'BEGIN { exit !(c < 30) }' || t_fail "victim $v used ${cpu}% CPU under the attack (999: it exited within 2 s)"
  [ "$lines" -lt 100 ] || t_fail "victim $v wrote $lines log lines"
done
closed=$(sed -n 's/^closed by the target: //p' "$(t_out attackA)")
[ "${closed:-0}" -gt 0 ] || t_fail "victim A never closed an idle connection"
grep -q "pausing accepts" "$(t_out victimB)" || t_fail "victim B never reached its descriptor limit (that path was not exercised)"
t_pass "victims at ${cpu_a}% and ${cpu_b}% CPU, $lines_a and $lines_b log lines; the job succeeded"
