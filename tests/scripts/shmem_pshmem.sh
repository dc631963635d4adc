#!/usr/bin/env bash
# shmem_pshmem.sh — the OpenSHMEM profiling interface (OpenSHMEM 1.5 section 10, pshmem.h):
#  - the generated files (include/pshmem.h, src/shmem/pshmem_rename.h, pshmem_wrap.c, pshmem_alias.ld)
#    are what tools/gen-pshmem.py gives for today's include/shmem.h (a routine added without
#    regenerating fails here);
#  - every shmem_ routine of libwaitio_shmem.so is an alias of its pshmem_ twin, every one of
#    libwaitio_shmem.a weak;
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

# the shared library: every exported shmem_ routine is an alias of its pshmem_ twin (same address)
lib=$B/src/libwaitio_shmem.so
nm -D --defined-only "$lib" | awk '$2 ~ /^[TW]$/ {print $3, $1}' | sort >"$T_DIR/syms" || t_fail "nm on $lib"
bad=$(awk '{a[$1] = $2} END {for (s in a) if (s ~ /^shmem_/ && a["p" s] != a[s]) print s}' "$T_DIR/syms" | head -20)
[ -z "$bad" ] || t_fail "in $lib, not at the address of their pshmem_ twin: $bad"
n=$(grep -c '^pshmem_' "$T_DIR/syms")
# the static library: every shmem_ routine weak (a tool's definition wins in a static link)
nm --defined-only "$B/src/libwaitio_shmem.a" 2>/dev/null | awk '$2 ~ /^[TW]$/ && $3 ~ /^shmem_/ {print $2, $3}' >"$T_DIR/ssyms"
strong=$(awk '$1 == "T" {print $2}' "$T_DIR/ssyms" | head -5)
[ -z "$strong" ] || t_fail "in libwaitio_shmem.a, shmem_ routines must be weak: $strong"
[ "$(wc -l <"$T_DIR/ssyms")" -ge "$n" ] || t_fail "libwaitio_shmem.a has $(wc -l <"$T_DIR/ssyms") shmem_ routines, the shared library $n"
t_log "$n pshmem_ routines exported; the shmem_ ones aliases (shared) and weak (static)"

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
