#!/usr/bin/env bash
# shmem_pshmem.sh — the OpenSHMEM profiling interface (OpenSHMEM 1.5 section 10, pshmem.h):
#  - the generated files (include/pshmem.h, src/shmem/pshmem_rename.h, src/shmem/pshmem_wrap.c)
#    are what tools/gen-pshmem.py gives for today's include/shmem.h (a routine added without
#    regenerating fails here);
#  - every shmem_ routine that libwaitio_shmem.so exports has its pshmem_ twin, the shmem_ one weak;
#  - a tool (tests/progs/shmem_pshmem_tool.c) that defines shmem_putmem, shmem_long_atomic_fetch_add
#    and shmem_barrier_all and forwards to pshmem_ sees exactly the program's calls (not the
#    library's internal ones) while the data still moves — on 2 PEs as one PB, on 3 PEs as two PBs
#    over tcp, and linked with the static libraries.
# timeout: 90
set -uo pipefail
source "$(dirname "$0")/lib.sh"
B=$WAITIO_BUILD_DIR S=$WAITIO_SOURCE_DIR
t_require_progs shmem_pshmem_tool
python3 "$S/tools/gen-pshmem.py" --check || t_fail "the generated profiling files are stale"

lib=$B/src/libwaitio_shmem.so
nm -D --defined-only "$lib" | awk '{print $2, $3}' >"$T_DIR/syms" || t_fail "nm on $lib"
missing=$(awk '$1 ~ /^[TW]$/ && $2 ~ /^shmem_/ {print $2}' "$T_DIR/syms" | while read -r f; do
  grep -q " p$f\$" "$T_DIR/syms" || echo "p$f"; done | head -20)
[ -z "$missing" ] || t_fail "exported without a pshmem_ twin: $missing"
strong=$(awk '$1 == "T" && $2 ~ /^shmem_/ {print $2}' "$T_DIR/syms" | head -5)
[ -z "$strong" ] || t_fail "shmem_ routines must be weak (a tool's definition wins): $strong"
n=$(grep -c ' pshmem_' "$T_DIR/syms")
t_log "$n pshmem_ routines exported"

run=$B/tools/waitio-oshrun
t_run_job one-pb 60 -- "$run" -np 2 "$TEST_PROGS/shmem_pshmem_tool"
t_expect one-pb "^shmem_pshmem_tool ok: 2 PEs" "the verdict"
t_run_job tcp-2pb 60 WAITIO_TRANSPORTS=tcp -- "$run" -np 2 "$TEST_PROGS/shmem_pshmem_tool" : -- "$run" -np 1 "$TEST_PROGS/shmem_pshmem_tool"
t_expect tcp-2pb "^shmem_pshmem_tool ok: 3 PEs" "the verdict"
if ! t_sanitized; then
  WAITIO_OSHCC_STATIC=1 "$B/tools/waitio-oshcc" -std=c11 -O2 "$S/tests/progs/shmem_pshmem_tool.c" \
    -o "$T_DIR/tool.static" || t_fail "static-library build of the tool"
  t_run_job static 60 -- "$run" -np 2 "$T_DIR/tool.static"
  t_expect static "^shmem_pshmem_tool ok: 2 PEs" "the verdict"
fi
t_pass "$n pshmem_ names; a tool's shmem_ routines win, shared and static, and see only the program's calls"
