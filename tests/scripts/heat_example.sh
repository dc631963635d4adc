#!/usr/bin/env bash
# heat_example.sh — the heat-coupling example end to end: Code-1 (Fortran, Open MPI), Code-2
# (MPICH, 3 ranks) and Code-3 (Open MPI, 2 ranks) coupled through WaitIO must produce exactly
# the numbers of the original file-coupled run.
# timeout: 240
set -euo pipefail
bash "$WAITIO_SOURCE_DIR/examples/heat/run.sh" "$WAITIO_BUILD_DIR"
