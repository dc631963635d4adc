#!/usr/bin/env bash
# mpi_bcast_kill.sh — the pipelined hierarchical broadcast when its root dies
# (tests/progs/mpi_bcast_kill.c): PB 0 is one Open MPI process, the root, which SIGKILLs itself
# after a barrier; PB 1 (MPICH, 3 processes) broadcasts 1.5 MiB from it in segments. Its head
# must fail with WAITIO_ERR_PEER and its other processes must fail too (the head still posts
# every segment's MPI_Ibcast, then the PB agrees on the head's outcome): no hang, no success
# with data that never came. Then the same with PB 1 under Open MPI and the root under MPICH,
# and a small allreduce on WaitIO's default path whose rank 0 is dead (every survivor fails).
# timeout: 120
set -uo pipefail
source "$(dirname "$0")/lib.sh"
t_require_progs mpi_bcast_kill.ompi mpi_bcast_kill.mpich

# run_case NAME ROOT_FLAVOR OTHER_FLAVOR [allreduce]
run_case() {
  local name=$1 rootf=$2 otherf=$3 what=${4:-} launcher r
  t_instance 2
  if [ "$what" = allreduce ]; then unset WAITIO_COLL_HIER WAITIO_COLL_PIPELINE
  else export WAITIO_COLL_HIER=1 WAITIO_COLL_PIPELINE=1; fi
  for pb in 0 1; do
    local flavor=$rootf np=1
    [ "$pb" = 1 ] && flavor=$otherf np=3
    if [ "$flavor" = ompi ]; then launcher=(mpirun.openmpi --oversubscribe -np "$np")
    else launcher=(mpirun.mpich -np "$np"); fi
    t_start "$name.pb$pb" 60 env WAITIO_PBID=$pb "${launcher[@]}" "$TEST_PROGS/mpi_bcast_kill.$flavor" $what
  done
  t_wait "$name.pb1"
  t_wait "$name.pb0"
  t_expect_rc "$name.pb1" 0
  [ "$(grep -c '^bcast_kill PB 1 rank' "$(t_out "$name.pb1")")" = 3 ] ||
    t_fail "$name: not every process of PB 1 reported"
  t_expect "$name.pb1" '^bcast_kill PB 1 rank 0: WAITIO_ERR_PEER .*PB 0 rank 0' "the head saw the root fail, and says who"
  t_reject "$name.pb1" '^bcast_kill PB 1 rank [0-9]: WAITIO_SUCCESS' "no process may succeed"
  t_log "$name: $(grep '^bcast_kill' "$(t_out "$name.pb1")" | tr '\n' ' ')"
}
run_case ompi_root ompi mpich
run_case mpich_root mpich ompi
# a small allreduce on the default path (one round on one host) without a dead rank: every
# survivor needs its operand, so every survivor must fail with WAITIO_ERR_PEER naming it
run_case allreduce ompi mpich allreduce
[ "$(grep -c '^bcast_kill PB 1 rank [0-9]: WAITIO_ERR_PEER .*PB 0 rank 0' "$(t_out allreduce.pb1)")" = 3 ] ||
  t_fail "allreduce: not every survivor failed with WAITIO_ERR_PEER naming the dead rank"
t_pass "every survivor failed, none hung (broadcast from a dead root, allreduce without a dead rank)"
