#!/usr/bin/env bash
# shmem_threads.sh — SHMEM_THREAD_MULTIPLE (tests/progs/shmem_threads.c: 4 threads per PE doing
# puts, gets, fetch_adds and waits on other PEs at once, a barrier and a loop of blocking gets in
# one thread while another must issue the put the other PEs wait for):
#   2 PEs as one PB (heap through shared memory, globals through WaitIO);
#   3 PEs as one PB with WAITIO_RMA_DIRECT=0 and no progress thread (everything as frames over
#     the rings, progressed only by the threads' own calls);
#   2 PEs as two separately launched PBs over tcp; 3 PEs as two PBs over tcp with the progress
#     thread forced on.
# timeout: 120
set -uo pipefail
source "$(dirname "$0")/lib.sh"
t_require_progs shmem_threads
run=$WAITIO_BUILD_DIR/tools/waitio-oshrun
prog=$TEST_PROGS/shmem_threads

t_run_job one-pb 60 -- "$run" -np 2 "$prog"
t_expect one-pb "^shmem_threads ok: 2 PEs" "the verdict"
t_run_job frames 60 WAITIO_RMA_DIRECT=0 WAITIO_PROGRESS_THREAD=0 -- "$run" -np 3 "$prog"
t_expect frames "^shmem_threads ok: 3 PEs" "the verdict"
t_run_job tcp2 60 WAITIO_TRANSPORTS=tcp -- "$run" -np 1 "$prog" : -- "$run" -np 1 "$prog"
t_expect tcp2 "^shmem_threads ok: 2 PEs" "the verdict"
t_run_job tcp3 60 WAITIO_TRANSPORTS=tcp WAITIO_PROGRESS_THREAD=1 -- "$run" -np 2 "$prog" : -- "$run" -np 1 "$prog"
t_expect tcp3 "^shmem_threads ok: 3 PEs" "the verdict"
t_pass "2 PEs one PB; 3 PEs frames only, no progress thread; tcp 1+1 and 2+1 PBs (progress thread on)"
