#!/usr/bin/env bash
# fortran_exchange.sh — Fortran through waitio_mpif.h across MPIs: the fixed-form program
# (implicit REAL*8, undeclared communicator) with an Open MPI PB of 2 and an MPICH PB of 3,
# then the free-form program (communicator in a module) with an MPICH PB and an Open MPI PB.
# timeout: 120
set -euo pipefail
source "$(dirname "$0")/pbs.inc"
pbs_instance 2
pbs_start 0 60 mpirun.openmpi --oversubscribe -np 2 "$TEST_PROGS/fortran_exchange.ompi"
pbs_start 1 60 mpirun.mpich -np 3 "$TEST_PROGS/fortran_exchange.mpich"
pbs_wait || { echo "FAIL: fixed-form job failed"; exit 1; }
pbs_expect 0 "fortran_exchange (fixed form): 5 processes in 2 PBs, errors 0"
pbs_instance 2
pbs_start 0 60 mpirun.mpich -np 2 "$TEST_PROGS/fortran_exchange_free.mpich"
pbs_start 1 60 mpirun.openmpi --oversubscribe -np 2 "$TEST_PROGS/fortran_exchange_free.ompi"
pbs_wait || { echo "FAIL: free-form job failed"; exit 1; }
pbs_expect 0 "fortran_exchange (free form): 4 processes, errors 0"
echo PASS
