#!/usr/bin/env bash
# shm_no_space.sh — /dev/shm too small for a segment (a 1 MiB tmpfs mounted over it in a private
# mount namespace; a connection needs 2 MiB + 4 KiB): creating the segment must fail cleanly
# (its pages are allocated up front, so nothing can die of SIGBUS later), the connections stay on
# the local socket that set them up, and the exchange test (3 processes in 2 PBs, every phase,
# every byte checked) passes.
# timeout: 90
set -uo pipefail
if [ -z "${SHM_NO_SPACE_INNER:-}" ]; then
  if ! unshare --mount --propagation private true 2>/dev/null; then
    echo "SKIP: unshare --mount is not permitted here"
    exit 0
  fi
  exec unshare --mount --propagation private env SHM_NO_SPACE_INNER=1 bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"
t_require_progs exchange
mount -t tmpfs -o size=1m tmpfs /dev/shm || t_fail "cannot mount a small tmpfs on /dev/shm"
t_log "/dev/shm: $(df -h /dev/shm | tail -1)"
t_instance 2
args=(--alarm 60 --op-timeout 50 --init-timeout 20 --phases ABCDE --seed "${WAITIO_TEST_SEED:-$RANDOM}")
common=(WAITIO_LOG=info WAITIO_TRANSPORTS=shm,tcp)
t_start pb0 70 env "${common[@]}" WAITIO_PBID=0 WAITIO_PB_RANK=0 WAITIO_PB_SIZE=1 "$TEST_PROGS/exchange" "${args[@]}"
for r in 0 1; do
  t_start "pb1.r$r" 70 env "${common[@]}" WAITIO_PBID=1 WAITIO_PB_RANK=$r WAITIO_PB_SIZE=2 \
    "$TEST_PROGS/exchange" "${args[@]}"
done
bad=()
for n in pb0 pb1.r0 pb1.r1; do t_wait "$n" || bad+=("$n:$(t_rc "$n")"); done
[ ${#bad[@]} -eq 0 ] || { t_show_all; t_fail "processes failed (name:exit status): ${bad[*]}"; }
t_expect pb0 '^exchange ok: 3 processes, 2 PBs, phases ABCDE' "universe rank 0's verdict"
fallbacks=$(cat "$T_DIR"/*.out | grep -c "no shared memory (cannot allocate a .* /dev/shm: No space left on device); staying on the local socket" || true)
t_log "connections that stayed on the local socket for lack of space: $fallbacks"
[ "$fallbacks" -ge 3 ] || { t_show_all; t_fail "expected the 3 connections to stay on the local socket for lack of space"; }
left=$(ls /dev/shm | grep -c '^waitio-[0-9]*-' || true)
[ "$left" -eq 0 ] || t_fail "$left segments left in /dev/shm"
t_pass "3 connections stayed on the local socket, all bytes right"
