#!/usr/bin/env bash
# shmem_p2p_heap.sh — OpenSHMEM 1.5 point-to-point synchronisation and symmetric heap edges
# (tests/progs/shmem_p2p.c, shmem_heap.c; each checks its results on every PE and prints
# "<name> ok: N PEs"):
#   p2p   the fairness of the _any forms (a series of calls returns every ready index with no
#         mask; the specification's shmem_test_any example), the _vector test forms, _some with
#         masks, every point-to-point type, the deprecated long-only shmem_wait / wait_until
#   heap  shmem_align at 8 KiB, 64 KiB, 2 MiB and alignments that cannot be met,
#         malloc_with_hints, calloc / realloc edges, the deprecated heap and atomic names
# each on 2 and 4 PEs as one PB (shared memory) and as two separately launched PBs over tcp; the
# heap also with a heap size that is not a power of two (5M, rounded to 6 MiB: the parts of the
# shared segment are 6 MiB apart, and 2 MiB alignment must still hold on every PE).
# timeout: 120
set -uo pipefail
source "$(dirname "$0")/lib.sh"
progs=(p2p heap)
for p in "${progs[@]}"; do t_require_progs "shmem_$p"; done

# case_all NAME LAYOUT [VAR=VAL...]: LAYOUT like "4" (one PB) or "2+2" (two PBs)
case_all() {
  local name=$1 layout=$2 p
  shift 2
  for p in "${progs[@]}"; do
    [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $p "* ]] && continue
    t_oshmem_job "$name-$p" 60 "$layout" "$TEST_PROGS/shmem_$p" "$@"
    t_expect "$name-$p" "^shmem_$p ok: $T_PES PEs" "the verdict"
  done
}
case_all shm-2 2
case_all shm-4 4
case_all tcp-2 1+1 WAITIO_TRANSPORTS=tcp
case_all tcp-4 2+2 WAITIO_TRANSPORTS=tcp
ONLY=heap case_all heap-5M 4 SHMEM_SYMMETRIC_SIZE=5M
t_pass "p2p and heap on 2 and 4 PEs, one PB (shm) and two PBs (tcp); the heap at 5M on 4 PEs"
