#!/usr/bin/env bash
# mp_exchange.sh — point-to-point across two PBs of different MPI implementations: mpi_exchange
# built with Open MPI (mpirun.openmpi -np 2) and with MPICH (mpirun.mpich -np 3), a universe of
# 5 processes. Every pair, across and within PBs, exchanges the fixed sizes 0 .. 8 MiB with
# distinct tags, ordered streams with one tag, wildcard receives, truncated receives (small and
# > 1 MiB) and random sizes/tags; every byte is checked at the receiver (see mpi_exchange.c).
# Runs: default transports; one run per entry of EXCHANGE_TRANSPORTS (default "shm tcp"; each
# entry becomes WAITIO_TRANSPORTS); and MPICH as PB 0
# (the master) with tiny eager limit, chunk size and eager credit, so that every message size
# crosses the protocol boundaries (eager/rendezvous, many chunks, credit exhaustion).
# Reproduce a failing random phase with EXCHANGE_SEED=<seed printed in the output>.
# timeout: 150
set -uo pipefail
source "$(dirname "$0")/lib.sh"
t_require_progs mpi_exchange.ompi mpi_exchange.mpich
args=(--alarm 50 --op-timeout 40)
[ -n "${EXCHANGE_SEED:-}" ] && args+=(--seed "$EXCHANGE_SEED")
ompi=(mpirun.openmpi --oversubscribe -np 2 "$TEST_PROGS/mpi_exchange.ompi")
mpich=(mpirun.mpich -np 3 "$TEST_PROGS/mpi_exchange.mpich")

t_run_job default 60 -- "${ompi[@]}" "${args[@]}" --expect-nprocs 2,3 : \
  -- "${mpich[@]}" "${args[@]}" --expect-nprocs 2,3
t_expect default 'mpi_exchange ok: 5 processes, 2 PBs, phases ABCDE' "universe rank 0's verdict"

# one run per explicit transport list
for tr in ${EXCHANGE_TRANSPORTS:-shm tcp}; do
  name="transports-${tr//[^a-z0-9]/_}"
  t_run_job "$name" 60 WAITIO_TRANSPORTS="$tr" -- "${ompi[@]}" "${args[@]}" --expect-nprocs 2,3 : \
    -- "${mpich[@]}" "${args[@]}" --expect-nprocs 2,3
  t_expect "$name" "WAITIO_TRANSPORTS=$tr"
  t_expect "$name" 'mpi_exchange ok: 5 processes, 2 PBs, phases ABCDE'
done

t_run_job tuned 60 WAITIO_EAGER_LIMIT=128 WAITIO_CHUNK_SIZE=4096 WAITIO_EAGER_CREDIT=1024 \
  -- "${mpich[@]}" "${args[@]}" --expect-nprocs 3,2 --max-size 4194304 --rounds 2 : \
  -- "${ompi[@]}" "${args[@]}" --expect-nprocs 3,2 --max-size 4194304 --rounds 2
t_expect tuned 'mpi_exchange ok: 5 processes, 2 PBs, phases ABCDE'
t_pass "default, transports ${EXCHANGE_TRANSPORTS:-shm tcp}, tuned with MPICH as master"
