#!/usr/bin/env bash
# shm_single_copy.sh — the single-copy rendezvous (a receiver reads a large message straight
# out of the sender's buffer with process_vm_readv) moves every byte right, and is refused
# safely where it must be:
#  1. 2 PBs (plain processes, 1 + 2) with WAITIO_SINGLE_COPY=1: every phase of the exchange
#     test (sizes to 8 MiB, order with late-posted receives, wildcards, truncation, random
#     sizes and tags, all bytes checked); each process must report messages read by single
#     copy at finalize.
#  2. the same with each process of PB 1 in a pid namespace of its own (unshare --pid): the
#     kernel reports no pid for a peer outside one's namespace (SO_PEERCRED), so those processes
#     must turn single copy off and log why, and the data must still arrive through the ring,
#     intact; PB 0, in the parent namespace, sees the right pids and may read in place.
#  3. WAITIO_SINGLE_COPY=0: no message read by single copy.
# timeout: 150
set -uo pipefail
source "$(dirname "$0")/lib.sh"
t_require_progs exchange
args=(--alarm 60 --op-timeout 50 --init-timeout 20 --phases ABCDE)
seed=${WAITIO_TEST_SEED:-$RANDOM}
t_log "seed $seed"

# run_case NAME SINGLE_COPY PB1_PREFIX...: 2 PBs, PB 0 one process, PB 1 two
run_case() {
  local name=$1 sc=$2
  shift 2
  t_instance 2
  local common=(WAITIO_SINGLE_COPY=$sc WAITIO_LOG=debug WAITIO_TRANSPORTS=shm,tcp)
  t_start "$name.pb0" 80 env "${common[@]}" WAITIO_PBID=0 WAITIO_PB_RANK=0 WAITIO_PB_SIZE=1 \
    "$TEST_PROGS/exchange" "${args[@]}" --seed "$seed"
  for r in 0 1; do
    t_start "$name.pb1.r$r" 80 "$@" env "${common[@]}" WAITIO_PBID=1 WAITIO_PB_RANK=$r WAITIO_PB_SIZE=2 \
      "$TEST_PROGS/exchange" "${args[@]}" --seed "$seed"
  done
  local bad=() n
  for n in "$name.pb0" "$name.pb1.r0" "$name.pb1.r1"; do t_wait "$n" || bad+=("$n:$(t_rc "$n")"); done
  [ ${#bad[@]} -eq 0 ] || { t_show_all; t_fail "$name: processes failed (name:exit status): ${bad[*]}"; }
  t_expect "$name.pb0" '^exchange ok: 3 processes, 2 PBs, phases ABCDE' "$name: universe rank 0's verdict"
}

# copies NAME: messages read by single copy, per process, from the finalize debug line
copies() {
  local n
  for n in "$1.pb0" "$1.pb1.r0" "$1.pb1.r1"; do
    sed -n 's/.*finalize: .* out; \([0-9]*\) messages .*read by single copy.*/\1/p' "$(t_out "$n")" | head -1
  done | paste -sd' '
}

run_case on 1
c=$(copies on)
t_log "single copy on: messages read in place per process: $c"
for x in $c; do [ "$x" -gt 0 ] || t_fail "single copy on: a process read no message in place ($c)"; done
[ "$(echo "$c" | wc -w)" -eq 3 ] || t_fail "single copy on: finalize lines missing ($c)"

if unshare --pid --fork true 2>/dev/null; then
  run_case pidns 1 unshare --pid --fork
  c=$(copies pidns)
  t_log "PB 1 in its own pid namespace: messages read in place per process: $c"
  read -r in_parent in_child0 in_child1 <<<"$c"
  [ "$in_child0" = 0 ] && [ "$in_child1" = 0 ] ||
    t_fail "pid namespace: a process read in place from a peer whose pid it cannot see ($c)"
  for r in 0 1; do
    grep -q "single copy from process .* unavailable (its pid is not visible" "$(t_out pidns.pb1.r$r)" ||
      t_fail "pid namespace: PB 1 rank $r did not log why single copy was turned off"
  done
  t_log "PB 0, in the parent namespace, read $in_parent messages in place (the kernel names the right pids)"
  grep -l "open (.* shm id" "$T_DIR"/pidns.*.out >/dev/null || t_fail "pid namespace: shared memory was not used"
else
  t_log "SKIP the pid-namespace case: unshare --pid is not permitted here"
fi

run_case off 0
c=$(copies off)
t_log "single copy off: messages read in place per process: $c"
for x in $c; do [ "$x" -eq 0 ] || t_fail "single copy off: $x messages read in place ($c)"; done
grep -h "single copy" "$T_DIR"/pidns.*.out | sort | uniq -c; t_pass
