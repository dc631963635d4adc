#!/usr/bin/env bash
# mp_groups.sh — groups across three PBs: mpi_groups built with Open MPI (mpirun.openmpi -np 2),
# with MPICH (mpirun.mpich -np 3) and a plain process (groups, the non-MPI build). Filter-function
# and rank-list groups, PB order from order[] (e.g. {2,1,0} puts PB 1 first), sizes, ranks,
# WAITIO_UNDEFINED for non-members, waitio_group_member, messages inside every group with one
# tag for all (sender identity checked from the payload), ANY_SOURCE in groups, error returns,
# gid reuse after waitio_group_free, waitio_get_nprocs / pb_size / pb_rank / local_rank / local_size.
# Also run with the plain process as PB 0 (the master) and PB sizes 1,2,3.
# timeout: 90
set -uo pipefail
source "$(dirname "$0")/lib.sh"
t_require_progs mpi_groups.ompi mpi_groups.mpich groups

t_run_job groups 40 -- mpirun.openmpi --oversubscribe -np 2 "$TEST_PROGS/mpi_groups.ompi" --sizes 2,3,1 --alarm 35 : \
  -- mpirun.mpich -np 3 "$TEST_PROGS/mpi_groups.mpich" --sizes 2,3,1 --alarm 35 : \
  -- "$TEST_PROGS/groups" --sizes 2,3,1 --alarm 35
n=$(grep -cE '(mpi_)?groups PB [0-9]+ rank [0-9]+: ok' "$(t_out groups)")
[ "$n" = 6 ] || t_fail "expected 6 processes to report ok, $n did"

t_run_job reordered 40 -- "$TEST_PROGS/groups" --sizes 1,2,3 --alarm 35 : \
  -- mpirun.mpich -np 2 "$TEST_PROGS/mpi_groups.mpich" --sizes 1,2,3 --alarm 35 : \
  -- mpirun.openmpi --oversubscribe -np 3 "$TEST_PROGS/mpi_groups.ompi" --sizes 1,2,3 --alarm 35
n=$(grep -cE '(mpi_)?groups PB [0-9]+ rank [0-9]+: ok' "$(t_out reordered)")
[ "$n" = 6 ] || t_fail "reordered: expected 6 processes to report ok, $n did"
t_pass
