#!/usr/bin/env bash
# shmem_spec_examples_2pb_2pes.sh — the OpenSHMEM 1.5 specification's examples, as our own checked
# programs (tests/progs/shmem_spec_*.c), on 2 PEs as two separately launched PBs (1 + 1), over tcp.
# The layouts and programs: shmem_spec_examples.inc.
# timeout: 120
set -uo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/shmem_spec_examples.inc"
spec_layout 1+1
