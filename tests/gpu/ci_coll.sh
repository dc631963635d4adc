#!/usr/bin/env bash
# ci_coll.sh — the conversion layer's collectives (bcast, reduce, allreduce in and out of place,
# gather, allgather, scatter, alltoall) and a send/recv ring on device buffers, with the CUDA
# driver's test double (tests/gpu/fake_cuda.c): 3 processes in 2 PBs (1 + 2), every element of
# every result checked by tests/gpu/gpu_coll.
# timeout: 60
set -uo pipefail
source "$WAITIO_SOURCE_DIR/tests/scripts/lib.sh"
source "$WAITIO_SOURCE_DIR/tests/gpu/gpu_lib.sh"
t_require_progs gpu_coll
gpu_run_3 gpu_coll 50
t_pass
