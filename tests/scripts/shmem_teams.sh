#!/usr/bin/env bash
# shmem_teams.sh — OpenSHMEM 1.5 teams and the collectives on any team: shmem_teams (splits of
# every shape, translation, configuration, destruction) and shmem_coll_teams (every collective and
# reduction on the world, shared, split and 2-D teams; the deprecated active-set forms), each on 2
# and 4 PEs as one PB (default transports: SHMEM_TEAM_SHARED is every PE) and as two separately
# launched PBs over tcp (1+1 and 2+2: teams span the PBs, the shared team is a PB's part or less).
# Each program checks every element on every PE and prints "<name> ok: N PEs".
# timeout: 120
set -uo pipefail
source "$(dirname "$0")/lib.sh"
progs=(teams coll_teams)
for p in "${progs[@]}"; do t_require_progs "shmem_$p"; done
run=$WAITIO_BUILD_DIR/tools/waitio-oshrun

# case NAME LAYOUT [VAR=VAL...]: LAYOUT "4" (one PB) or "2+2" (two PBs)
case_all() {
  local name=$1 layout=$2 p
  shift 2
  for p in "${progs[@]}"; do
    t_oshmem_job "$name-$p" 60 "$layout" "$TEST_PROGS/shmem_$p" "$@"
    t_expect "$name-$p" "^shmem_$p ok: $T_PES PEs" "the verdict"
  done
}
case_all shm-2 2
case_all shm-4 4
case_all tcp-1+1 1+1 WAITIO_TRANSPORTS=tcp
case_all tcp-2+2 2+2 WAITIO_TRANSPORTS=tcp
# a PE outside an active set calling its collective exits with a message (so does the job)
t_job outsider 30 -- "$run" -np 2 "$TEST_PROGS/shmem_coll_teams" outsider && t_fail "the outsider's job succeeded"
t_show outsider
t_expect outsider "PE 1 is not in the active set" "the outsider's message"
t_reject outsider "call returned" "the outsider's call returned"
t_pass "2 programs on 2 and 4 PEs, one PB and two PBs over tcp; a PE outside an active set"
