#!/usr/bin/env bash
# sec_keyless_hello.sh — issue 11 item 1: a client without the key must not be able to break a
# running job by claiming to be one of its processes. A 2-PB job (2 + 2 processes, all-to-all,
# starting its exchanges 2.5 s after start-up so that the connections open while the attack
# runs) is attacked for 5 s: keyless HELLOs claiming every process id, at every process's
# listening port, again and again (about 50 per round). Before the fix the first such HELLO
# bound the connection to the claimed peer and its close failed that peer for good ("lost
# process N", WAITIO_ERR_PEER). Now every attacker connection ends in its own handshake (logged:
# authentication not completed) and the job's exchanges all succeed, every byte checked. Each
# listener is also checked to be bound to the advertised address (item 4), not 0.0.0.0.
# timeout: 90
set -uo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/sec.inc"
t_require_progs core_alltoall
proto=$(t_proto)
t_log "wire protocol of the build under test: version $proto"
t_instance 2
for pb in 0 1; do
  for r in 0 1; do
    t_start "pb$pb.r$r" 60 env WAITIO_PBID=$pb WAITIO_PB_RANK=$r WAITIO_PB_SIZE=2 WAITIO_LOG=warn \
      "$TEST_PROGS/core_alltoall" 8 0 250 2500
  done
done
pids=()
for n in pb0.r0 pb0.r1 pb1.r0 pb1.r1; do pids+=("$(t_prog_pid "$n" core_alltoall)") || t_fail "$n did not start"; done
# every process listens on its data port once start-up is done (the master's port closes)
ports=""
for ((i = 0; i < 60; i++)); do
  ports=$(t_listen_ports "${pids[@]}")
  [ "$(echo "$ports" | grep -c .)" -eq 4 ] && ! echo "$ports" | grep -qx "$WAITIO_MASTER_PORT" && break
  sleep 0.1
done
t_log "data ports: $(echo $ports)"
[ "$(echo "$ports" | grep -c .)" -eq 4 ] || t_fail "expected 4 data ports, found: $(echo $ports)"
# item 4: each listens on the address it advertises (the one routing to the 127.0.0.1 master)
pat=""; for p in "${pids[@]}"; do pat+="pid=$p,|"; done
addrs=$(ss -ltnpH | grep -E "${pat%|}" | awk '{ print $4 }' | sort -u)
t_log "bound: $(echo $addrs)"
t_attack hello-storm --ids 4 --secs 5 $ports >"$T_DIR/attack.out" 2>&1 || t_fail "attack client failed: $(cat "$T_DIR/attack.out")"
cat "$T_DIR/attack.out"
bad=()
for n in pb0.r0 pb0.r1 pb1.r0 pb1.r1; do t_wait "$n" || bad+=("$n:$(t_rc "$n")"); done
[ ${#bad[@]} -eq 0 ] || t_fail "the job failed under the attack (name:exit status): ${bad[*]}"
ok=$(cat "$T_DIR"/pb*.out | grep -c "core_alltoall rank .*: 8 rounds with 3 peers ok")
[ "$ok" -eq 4 ] || t_fail "$ok of 4 processes finished their exchanges"
if cat "$T_DIR"/pb*.out | grep -q "lost process"; then t_fail "a process lost a peer to the attack"; fi
sent=$(sed -n 's/^keyless HELLOs sent: //p' "$T_DIR/attack.out")
acked=$(sed -n 's/^answered with HELLO_ACK: //p' "$T_DIR/attack.out")
[ "${acked:-0}" -gt 0 ] || t_fail "no HELLO reached its target (the attack did not run)"
logged=$(cat "$T_DIR"/pb*.out | grep -c "authentication not completed\|closing connection")
t_log "attack: $sent keyless HELLOs, $acked reached their target; $logged rejections logged"
[ "$logged" -gt 0 ] || t_fail "no rejection was logged"
if echo "$addrs" | grep -qvE '^127\.0\.0\.1:'; then t_fail "a listener is bound beyond the advertised 127.0.0.1: $(echo $addrs)"; fi
t_pass "$sent keyless HELLOs claiming every process: the job's 4 x 8 all-to-all rounds all succeeded"
