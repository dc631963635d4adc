#!/usr/bin/env bash
# mp_manual.sh — a 2-PB instance launched by hand, without waitiorun and without MPI: plain
# processes (tests/progs/exchange, the non-MPI build of mpi_exchange.c) given WAITIO_PBID,
# WAITIO_NPB, WAITIO_MASTER_HOST=127.0.0.1, WAITIO_MASTER_PORT, WAITIO_KEY and their PB-local
# rank/size through WAITIO_PB_RANK/WAITIO_PB_SIZE. PB 0 has 2 processes, PB 1 has 3. PB 1's
# processes start first and PB 0 (whose rank 0 is the master) half a second later, so the
# others must retry until the master listens. Every phase of the exchange test runs, all
# bytes checked. PB 1 is given WAITIO_COLL_HIER=0 and PB 0 nothing: each PB's first process
# must warn that the other PB's collective settings differ (its other processes stay quiet).
# timeout: 60
set -uo pipefail
source "$(dirname "$0")/lib.sh"
t_require_progs exchange
port=$(t_free_port)
key=$(t_random_key)
common=(WAITIO_NPB=2 WAITIO_MASTER_HOST=127.0.0.1 WAITIO_MASTER_PORT=$port WAITIO_KEY=$key)
args=(--alarm 40 --op-timeout 30 --expect-nprocs 2,3 --init-timeout 20)
t_log "port $port; PB 1 (3 processes) first, then PB 0 (2 processes)"
for r in 0 1 2; do
  t_start "pb1.r$r" 45 env "${common[@]}" WAITIO_PBID=1 WAITIO_PB_RANK=$r WAITIO_PB_SIZE=3 WAITIO_COLL_HIER=0 \
    "$TEST_PROGS/exchange" "${args[@]}"
done
sleep 0.5
for r in 0 1; do
  t_start "pb0.r$r" 45 env "${common[@]}" WAITIO_PBID=0 WAITIO_PB_RANK=$r WAITIO_PB_SIZE=2 \
    "$TEST_PROGS/exchange" "${args[@]}"
done
bad=()
for name in pb0.r0 pb0.r1 pb1.r0 pb1.r1 pb1.r2; do
  t_wait "$name" || bad+=("$name:$(t_rc "$name")")
done
t_show_all
[ ${#bad[@]} -eq 0 ] || t_fail "processes failed (name:exit status): ${bad[*]}"
t_expect pb0.r0 '^exchange ok: 5 processes, 2 PBs, phases ABCDE' "universe rank 0's verdict"
t_expect pb0.r0 'collective settings \(WAITIO_COLL_\*\) of PB 1 rank 0 differ' "PB 0's head names PB 1"
t_expect pb1.r0 'collective settings \(WAITIO_COLL_\*\) of PB 0 rank 0 differ' "PB 1's head names PB 0"
t_reject pb0.r1 'collective settings' "only a PB's first process warns"
t_reject pb1.r2 'collective settings' "only a PB's first process warns"
t_pass
