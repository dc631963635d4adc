#!/usr/bin/env bash
# sec_win_sizes.sh — issue 25 item 5: window creation with sizes that overflow (SIZE_MAX - 4094,
# SIZE_MAX, PTRDIFF_MAX - 100, a user part that wraps around the address space) fails with
# WAITIO_ERR_ARG on every member, also when only one member asks for it, within a second and
# without a hang; normal windows work afterwards (tests/progs/rma_win_sizes.c). Before the fix
# waitio_win_allocate(g, SIZE_MAX - 4094) returned a window of base NULL and size SIZE_MAX, through
# which every member read any address of the others.
#   2 processes as two PBs          (default transports: one shared heap segment for both)
#   2 processes as two PBs over tcp (a private part each, served through frames)
#   3 processes as one PB
# timeout: 90
set -uo pipefail
source "$(dirname "$0")/lib.sh"
t_require_progs rma_win_sizes
P=$TEST_PROGS/rma_win_sizes

check() { # check NAME NPROCS
  local name=$1 np=$2 c k
  t_expect "$name" "^rma_win_sizes ok: $np processes" "verdict of rank 0"
  for c in A B C D E F; do
    k=$(grep -cE "case $c: waitio_win_(allocate|create)\(.*\) = WAITIO_ERR_ARG" "$(t_out "$name")")
    [ "$k" = "$np" ] || t_fail "$name: case $c: $k of $np processes got WAITIO_ERR_ARG"
  done
  t_reject "$name" "\) = OK" "a window with an overflowing size was created"
  t_log "$name: all $np processes got WAITIO_ERR_ARG in cases A-F; slowest call: $(sed -n 's/.*= WAITIO_ERR_ARG (\([0-9.]*\) s)/\1/p' "$(t_out "$name")" | sort -n | tail -1) s"
}
t_run_job two-pb 60 -- "$P" : -- "$P"
check two-pb 2
t_run_job two-pb-tcp 60 WAITIO_TRANSPORTS=tcp -- "$P" : -- "$P"
check two-pb-tcp 2
run=$WAITIO_BUILD_DIR/tools/waitio-oshrun
[ -x "$run" ] || t_fail "$run is missing"
t_run_job one-pb 60 -- "$run" -np 3 "$P"
check one-pb 3
t_pass "overflowing sizes refused with WAITIO_ERR_ARG everywhere; normal windows intact"
