#!/usr/bin/env bash
# core_rendezvous_file.sh — start-up through a rendezvous file on a (shared) file system, with
# the other PB started before the master: 2 PBs x 3 processes, no MPI, a checked ring exchange.
# timeout: 60
set -euo pipefail
prog=$TEST_PROGS/core_ring
dir=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done; rm -rf "$dir"; }
trap cleanup EXIT
export WAITIO_KEY=rdv-$(od -An -tx8 -N16 /dev/urandom | tr -d ' \n') WAITIO_NPB=2 WAITIO_RENDEZVOUS=$dir/instance.rdv
unset WAITIO_MASTER_PORT WAITIO_MASTER_HOST
for rank in 0 1 2; do
  WAITIO_PBID=1 WAITIO_PB_RANK=$rank WAITIO_PB_SIZE=3 timeout 50 "$prog" 10 40 >"$dir/pb1.$rank" 2>&1 &
  pids+=($!)
done
sleep 1   # PB 1 waits for the file
for rank in 0 1 2; do
  WAITIO_PBID=0 WAITIO_PB_RANK=$rank WAITIO_PB_SIZE=3 timeout 50 "$prog" 10 40 >"$dir/pb0.$rank" 2>&1 &
  pids+=($!)
done
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done
pids=()
cat "$dir"/pb* 
[ $status -eq 0 ] || { echo "FAIL: a process failed"; exit 1; }
grep -q "core_ring ok: 6 processes" "$dir/pb0.0" || { echo "FAIL: no success line"; exit 1; }
[ ! -e "$WAITIO_RENDEZVOUS" ] || { echo "FAIL: rendezvous file left behind"; exit 1; }
echo "PASS"
