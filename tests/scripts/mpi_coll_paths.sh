#!/usr/bin/env bash
# mpi_coll_paths.sh — every path of the universe's collectives forced in turn (flat,
# hierarchical, paired, segmented, pipelined, then chosen: waitio_coll_set_path), with
# tests/progs/mpi_layer.c's "paths" mode: allreduce of every datatype and op at random counts
# (0, 1, counts the PB sizes do not divide, about 1 MiB), broadcasts of 0 B to 1.1 MiB (the
# pipeline's segments), reduces, all from random roots, every element against values the
# program computes itself. Run 1: 2 PBs of 3 (Open MPI, MPICH): every path possible. Run 2:
# 3 PBs (Open MPI 2, MPICH 2, Open MPI 1): the paired and segmented allreduce are impossible
# and must fall back to the hierarchical one. The library's debug lines (WAITIO_LOG=mpi=debug)
# show which path each call took. A seed drawn here picks the sizes (printed; set
# MPI_COLL_PATHS_SEED to repeat a run).
# timeout: 200
source "$(dirname "$0")/lib.sh"
t_require_progs mpi_layer.ompi mpi_layer.mpich
seed=${MPI_COLL_PATHS_SEED:-$(od -An -tu4 -N4 /dev/urandom | tr -d ' ')}
t_log "seed $seed (MPI_COLL_PATHS_SEED=$seed repeats this run)"
export WAITIO_LOG=mpi=debug
# 6 processes on the cores of a CI machine: Open MPI yields while it waits
export OMPI_MCA_mpi_yield_when_idle=1
# start_pb NAME PBID FLAVOR NP: one PB, the program built for FLAVOR (ompi, mpich) under its mpirun
start_pb() {
  local launcher=(mpirun.openmpi --oversubscribe)
  [ "$3" = mpich ] && launcher=(mpirun.mpich)
  t_start "$1" 90 env WAITIO_PBID="$2" "${launcher[@]}" -np "$4" "$TEST_PROGS/mpi_layer.$3" paths "$seed"
}

# run_pbs TOTAL FLAVOR:NP...: one instance of these PBs; waits for all, checks each said ok
run_pbs() {
  local total=$1 pb=0 spec
  shift
  t_instance $#
  for spec in "$@"; do
    start_pb "$T_RUN.pb$pb" $pb "${spec%:*}" "${spec#*:}"
    pb=$((pb + 1))
  done
  for ((pb = 0; pb < $#; pb++)); do
    t_expect_rc "$T_RUN.pb$pb" 0
    t_expect "$T_RUN.pb$pb" "mpi_layer PB $pb: ok \($total universe processes" "PB $pb's checks"
  done
}

path_taken() { cat "$T_DIR/$T_RUN".pb*.out | grep -cE "$1" || true; }

T_RUN=two
run_pbs 6 ompi:3 mpich:3
for p in flat hier paired segmented; do
  [ "$(path_taken "allreduce of [0-9]+ bytes: path $p \(forced")" -gt 0 ] || t_fail "2 PBs: no allreduce took the forced path $p"
done
for p in flat hier pipeline; do
  [ "$(path_taken "bcast of [0-9]+ bytes: path $p \(forced")" -gt 0 ] || t_fail "2 PBs: no bcast took the forced path $p"
done
[ "$(path_taken "path [a-z]+ \(chosen")" -gt 0 ] || t_fail "2 PBs: no collective was chosen (auto)"
# a pipeline forced on a message below its range, or on a reduce, is the hierarchical path
[ "$(path_taken "(bcast of ([0-9]|[0-9]{2,4}) bytes|reduce of [0-9]+ bytes): path pipeline")" -eq 0 ] ||
  t_fail "2 PBs: a small bcast or a reduce took the pipeline"
t_log "2 PBs of 3: every path forced and checked"

T_RUN=three
run_pbs 5 ompi:2 mpich:2 ompi:1
[ "$(path_taken "path (paired|segmented)")" -eq 0 ] || t_fail "3 PBs: a paired or segmented allreduce ran (impossible: not a power of two of PBs)"
[ "$(path_taken "allreduce of [0-9]+ bytes: path hier \(forced; possible 0x3\)")" -gt 0 ] ||
  t_fail "3 PBs: the forced allreduce paths did not fall back to the hierarchical one"
[ "$(path_taken "bcast of [0-9]+ bytes: path pipeline \(forced")" -gt 0 ] || t_fail "3 PBs: no bcast took the forced pipeline"
t_log "3 PBs: the impossible paths fell back, the others checked"
t_pass
