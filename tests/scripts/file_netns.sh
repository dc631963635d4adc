#!/usr/bin/env bash
# file_netns.sh — coupling where no network path exists (SPEC §6, the seed's systems that share
# only storage): PB 0 and PB 1 run in two network namespaces created here with no link between
# them, each with nothing but its own loopback. WAITIO_COMM_TYPE=file and no WAITIO_MASTER_HOST:
# start-up goes through the shared directory, and every phase of the exchange test (sizes 0 B ..
# 8 MiB, beyond WAITIO_MAXFILE_SIZE_PER_PROC=1 MiB; order; wildcards; truncation; random sizes
# and tags; every byte checked) passes through segment files. The job's files are checked too:
# private modes, nothing of the run's streams left behind.
# timeout: 150
set -uo pipefail
source "$(dirname "$0")/lib.sh"
t_require_progs exchange
if [ "$(id -u)" != 0 ] || ! ip netns add wio-probe-$$ 2>/dev/null; then
  echo "SKIP: creating network namespaces needs root"; exit 0
fi
ip netns del wio-probe-$$
a=wiofa$$ b=wiofb$$
cleanup_ns() { ip netns del $a 2>/dev/null || true; ip netns del $b 2>/dev/null || true; }
trap 'cleanup_ns; t_cleanup' EXIT
ip netns add $a
ip netns add $b
ip -n $a link set lo up
ip -n $b link set lo up
shared=$T_DIR/shared
mkdir -p "$shared"
seed=${WAITIO_TEST_SEED:-$RANDOM}
common=(WAITIO_COMM_TYPE=file WAITIO_SCRATCH_DIR="$shared" WAITIO_JOB_ID=netns-$$ WAITIO_NPB=2
        WAITIO_KEY="$(t_random_key)" WAITIO_MAXFILE_SIZE_PER_PROC=1M WAITIO_LOG=debug WAITIO_PEER_TIMEOUT=10)
args=(--alarm 100 --op-timeout 90 --init-timeout 30 --phases ABCDE --seed "$seed")
t_start pb0 120 ip netns exec $a env "${common[@]}" WAITIO_PBID=0 WAITIO_PB_RANK=0 WAITIO_PB_SIZE=1 \
  "$TEST_PROGS/exchange" "${args[@]}"
for r in 0 1; do
  t_start "pb1.r$r" 120 ip netns exec $b env "${common[@]}" WAITIO_PBID=1 WAITIO_PB_RANK=$r WAITIO_PB_SIZE=2 \
    "$TEST_PROGS/exchange" "${args[@]}"
done
bad=()
for n in pb0 pb1.r0 pb1.r1; do t_wait "$n" || bad+=("$n:$(t_rc "$n")"); done
[ ${#bad[@]} -eq 0 ] || { t_show_all; t_fail "processes failed (name:exit status): ${bad[*]}"; }
t_expect pb0 '^exchange ok: 3 processes, 2 PBs, phases ABCDE' "universe rank 0's verdict"
t_expect pb0 'start-up through the directory' "start-up did not go through the directory"
# every data connection was a file connection (there is no other way between the namespaces)
opened=$(cat "$T_DIR"/pb*.out | grep -c "connection to process [0-9]* open (file " || true)
others=$(cat "$T_DIR"/pb*.out | grep "connection to process [0-9]* open (" | grep -vc "open (file " || true)
t_log "file connections opened: $opened, others: $others"
[ "$opened" -ge 3 ] && [ "$others" -eq 0 ] || t_fail "expected every connection through files"
dir=$shared/.waitio-file-netns-$$
bad_modes=$(find "$dir" \( -type d ! -perm 700 \) -o \( -type f ! -perm 600 \) | head -5)
[ -z "$bad_modes" ] || t_fail "files of the job are not private: $bad_modes"
left=$(find "$dir" -path "*/in-*" | head -5)
[ -z "$left" ] || t_fail "streams left behind after finalize: $left"
seg=$(cat "$T_DIR"/pb*.out | sed -n 's/.*finalize: file: \([0-9]*\) segments.*/\1/p' | paste -sd+ | bc)
t_log "segments written in all: $seg"
t_pass "seed $seed"
