#!/usr/bin/env bash
# ucx_rdv.sh — large messages over the ucx transport read in place (ucx.c rdv_pack/rdv_get: the
# receiver's ucp_get_nbx from the sender's registered buffer straight into the user's buffer):
# tests/progs/exchange (the plain build of mpi_exchange.c: fixed sizes 0 .. 8 MiB around the
# protocol thresholds, ordering, truncation, random sizes 0 .. 3 MiB; every byte checked at the
# receiver), 2 PBs of 1 process, eager limit 4 KiB so that nearly every message is a rendezvous,
# over UCX's tcp (its get is UCX's software emulation) and over UCX's shared memory (cma). The
# processes' finalize lines (WAITIO_LOG=debug) must count messages read in place on both: a
# rendezvous that silently fell back to DATA frames fails the test.
# timeout: 90
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

declare -A got
for tls in tcp sm; do
  envs=("${common[@]}" UCX_TLS=tcp UCX_NET_DEVICES=lo)
  [ "$tls" = sm ] && envs=("${common[@]}" UCX_TLS=sm,self)
  t_run_job "$tls" 45 "${envs[@]}" "${job[@]}"
  t_expect "$tls" 'exchange ok: 2 processes, 2 PBs, phases ABDE' "the verdict"
  got[$tls]=$(in_place "$tls")
  t_log "$tls: ${got[$tls]} messages read in place"
  [ "${got[$tls]}" -ge 20 ] || t_fail "$tls: expected the rendezvous messages read in place, got ${got[$tls]}"
done
t_pass "every byte checked; read in place: tcp ${got[tcp]}, sm ${got[sm]}"
