#!/usr/bin/env bash
# mp_idle_wait.sh — waiting costs no CPU (SPEC §5: on oversubscribed nodes WaitIO must yield
# instead of starving the peer it waits for). An MPI PB of 4 processes (MPICH, then Open MPI)
# starts; the other PB (a plain process) starts 4 s later, so the MPI PB waits ~4 s in
# waitio_init; after start-up the plain process sleeps 3 s before sending to everyone, so all
# wait ~3 s in waitio_wait. Universe rank 0 gathers each process's CPU time (getrusage) and
# fails if a PB kept more than 0.3 cores busy on average while waiting (see mpi_idle.c).
# timeout: 60
set -uo pipefail
source "$(dirname "$0")/lib.sh"
t_require_progs mpi_idle.mpich mpi_idle.ompi idle
late=(bash -c "sleep 4; exec \"$TEST_PROGS/idle\" --sleep 3 --alarm 30")
fails=()
t_job mpich 30 -- mpirun.mpich -np 4 "$TEST_PROGS/mpi_idle.mpich" --alarm 30 : -- "${late[@]}" ||
  fails+=("mpich (exit status $(t_rc mpich))")
t_show mpich
t_job ompi 30 -- mpirun.openmpi --oversubscribe -np 4 "$TEST_PROGS/mpi_idle.ompi" --alarm 30 : -- "${late[@]}" ||
  fails+=("ompi (exit status $(t_rc ompi))")
t_show ompi
[ ${#fails[@]} -eq 0 ] || t_fail "busy waiting: ${fails[*]} (see the 'idle PB' lines above)"
t_expect mpich 'mpi_idle ok'
t_expect ompi 'mpi_idle ok'
t_pass
