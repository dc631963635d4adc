#!/usr/bin/env bash
# ucx_rdv.sh — large messages over the ucx transport moved in place (ucx.c rdv_pack/rdv_get):
# tests/progs/exchange (the plain build of mpi_exchange.c: fixed sizes 0 .. 8 MiB around the
# protocol thresholds, ordering, truncation, random sizes 0 .. 3 MiB; every byte checked at the
# receiver), 2 PBs of 1 process, eager limit 4 KiB so that nearly every message is a rendezvous:
#   tcp:     UCX's tcp; WAITIO_UCX_RDV=auto takes UCX's own rendezvous (push) there: the offers
#            must be counted ("UCX rendezvous: N offered") and none lost;
#   sm:      UCX's shared memory (cma); auto takes the receiver's get there: no offer;
#   sm_push: shared memory with WAITIO_UCX_RDV=push forced;
#   tcp_get: UCX's tcp with WAITIO_UCX_RDV=get forced (UCX's software get);
#   lost:    UCX's tcp with an endpoint per connection (WAITIO_TEST_UCX_EP_PER_CONN: what this
#            transport did before, which UCX pairs wrongly after the simultaneous connect these
#            2 processes make): UCX cancels the offers, the sender must say so (PUSH_LOST) and the
#            receiver fall back to DATA frames at once (the job stays far from rdv_get's 5 s wait
#            per message), the connection then using get.
# The processes' finalize lines (WAITIO_LOG=debug) must count messages read in place: a
# rendezvous that silently fell back to DATA frames fails the test.
# timeout: 150
set -uo pipefail
source "$(dirname "$0")/lib.sh"
if ! grep -q '^UCX_FOUND:INTERNAL=1' "$WAITIO_BUILD_DIR/CMakeCache.txt" 2>/dev/null; then
  t_pass "built without UCX: no ucx transport to test"
fi
t_require_progs exchange
args=(--alarm 40 --op-timeout 30 --expect-nprocs 1,1 --phases ABDE --rounds 3)
[ -n "${EXCHANGE_SEED:-}" ] && args+=(--seed "$EXCHANGE_SEED")
job=(-- "$TEST_PROGS/exchange" "${args[@]}" : -- "$TEST_PROGS/exchange" "${args[@]}")
common=(WAITIO_TRANSPORTS=ucx WAITIO_LOG=debug WAITIO_EAGER_LIMIT=4096)

# in_place NAME: messages read in place, summed over the processes' finalize lines
in_place() {
  sed -n 's/.*finalize: [0-9]* frames in, [0-9]* out; \([0-9]*\) messages .* read by single copy.*/\1/p' \
    "$(t_out "$1")" | awk '{c += $1} END {print c + 0}'
}

# stat NAME FIELD: a figure of the ucx transport's finalize line, summed over the processes
stat() {
  local re
  case $2 in
    offered) re='.*UCX rendezvous: \([0-9]*\) offered.*' ;;
    lost) re='.*UCX rendezvous: [0-9]* offered (\([0-9]*\) lost by UCX).*' ;;
    announced) re='.*), \([0-9]*\) announced to us.*' ;;
  esac
  sed -n "s/$re/\1/p" "$(t_out "$1")" | awk '{c += $1} END {print c + 0}'
}

declare -A got secs
for run in tcp sm sm_push tcp_get lost; do
  case $run in
    tcp) envs=("${common[@]}" UCX_TLS=tcp UCX_NET_DEVICES=lo) ;;
    sm) envs=("${common[@]}" UCX_TLS=sm,self) ;;
    sm_push) envs=("${common[@]}" UCX_TLS=sm,self WAITIO_UCX_RDV=push) ;;
    tcp_get) envs=("${common[@]}" UCX_TLS=tcp UCX_NET_DEVICES=lo WAITIO_UCX_RDV=get) ;;
    lost) envs=("${common[@]}" UCX_TLS=tcp UCX_NET_DEVICES=lo WAITIO_TEST_UCX_EP_PER_CONN=1) ;;
  esac
  start=$SECONDS
  t_run_job "$run" 45 "${envs[@]}" "${job[@]}"
  secs[$run]=$((SECONDS - start))
  t_expect "$run" 'exchange ok: 2 processes, 2 PBs, phases ABDE' "the verdict"
  got[$run]=$(in_place "$run")
  offered=$(stat "$run" offered) lost=$(stat "$run" lost) announced=$(stat "$run" announced)
  t_log "$run: ${got[$run]} messages read in place; UCX rendezvous: $offered offered, $lost lost, $announced announced; ${secs[$run]} s"
  [ "${got[$run]}" -ge 20 ] || t_fail "$run: expected the rendezvous messages read in place, got ${got[$run]}"
  case $run in
    tcp|sm_push)
      [ "$offered" -ge 20 ] || t_fail "$run: expected UCX's rendezvous (push) for the large messages, $offered offered"
      [ "$lost" = 0 ] || t_fail "$run: UCX lost $lost of the offers"
      [ "$announced" = "$offered" ] || t_fail "$run: $offered offered but $announced announced" ;;
    sm|tcp_get)
      [ "$offered" = 0 ] || t_fail "$run: expected the receiver's get, but $offered offers went by UCX's rendezvous" ;;
    lost)
      [ "$lost" -ge 1 ] || t_fail "lost: expected UCX to cancel offers on wrongly paired endpoints, $lost lost"
      ! grep -q 'was not announced within' "$(t_out "$run")" ||
        t_fail "lost: a receiver waited for an announcement that never came: $(grep -m1 'was not announced within' "$(t_out "$run")")" ;;
  esac
done
t_pass "every byte checked; read in place: tcp ${got[tcp]} (push), sm ${got[sm]} (get), sm_push ${got[sm_push]}, tcp_get ${got[tcp_get]}, lost ${got[lost]} (PUSH_LOST, then get)"
