#!/usr/bin/env bash
# shmem_oshcc.sh — waitio-oshcc and waitio-oshrun as a user meets them:
#  - the build tree's wrapper: --showme, compile (-c) and link as separate steps, a C11 program
#    using the generic interfaces unchanged;
#  - the symmetric data segment (tests/osh/data_segment.c) as a PIE executable (global addresses
#    differ between processes under ASLR: remote addresses are translated), a non-PIE one
#    (addresses equal), and one linked with the static libraries (WAITIO_OSHCC_STATIC=1); each on
#    3 PEs with frames and with single copy (WAITIO_SINGLE_COPY=1);
#  - an installation (cmake --install into a scratch prefix): the installed wrapper builds a
#    program whose libraries come from the prefix, and the installed waitio-oshrun runs it.
# timeout: 150
set -uo pipefail
source "$(dirname "$0")/lib.sh"
B=$WAITIO_BUILD_DIR S=$WAITIO_SOURCE_DIR
oshcc=$B/tools/waitio-oshcc run=$B/tools/waitio-oshrun
san=$(t_sanitize_flags)
cd "$T_DIR" || t_fail "no scratch directory"

"$oshcc" --showme -O2 x.c -o x >showme.txt || t_fail "--showme failed"
grep -q -- "-lwaitio_shmem" showme.txt && grep -q -- "-I$S/include" showme.txt ||
  t_fail "--showme lacks the include or library flags: $(cat showme.txt)"
# shellcheck disable=SC2086
"$oshcc" -std=c11 -O2 -Wall -Wextra -Werror $san -c "$S/tests/osh/data_segment.c" -o ds.o || t_fail "compile step"
[[ $("$oshcc" --showme -c x.c) == *-lwaitio* ]] && t_fail "-c must not add link flags"
# shellcheck disable=SC2086
"$oshcc" $san ds.o -o ds.pie || t_fail "link step"
# shellcheck disable=SC2086
"$oshcc" -std=c11 -O2 $san -no-pie -fno-pie "$S/tests/osh/data_segment.c" -o ds.nopie || t_fail "non-PIE build"
if ! t_sanitized; then
  WAITIO_OSHCC_STATIC=1 "$oshcc" -std=c11 -O2 "$S/tests/osh/data_segment.c" -o ds.static || t_fail "static-library build"
  deps=$(ldd ds.static) # not piped into grep -q: with pipefail, ldd's SIGPIPE would decide
  [[ $deps == *libwaitio* ]] && t_fail "ds.static still needs a shared libwaitio"
fi
[[ $(readelf -h ds.pie) == *"DYN ("* ]] || t_fail "ds.pie is not a PIE executable"
for b in pie nopie static; do
  [ -x "ds.$b" ] || continue
  for sc in 0 1; do
    t_start "ds.$b.$sc" 40 env WAITIO_SINGLE_COPY=$sc "$run" -np 3 "./ds.$b"
    t_expect_rc "ds.$b.$sc" 0
    t_expect "ds.$b.$sc" "^data_segment ok: 3 PEs"
  done
done
if [ "$(cat /proc/sys/kernel/randomize_va_space 2>/dev/null)" != 0 ]; then
  t_expect ds.pie.0 "global addresses differ" "PIE under ASLR: each process has its globals elsewhere"
fi
t_expect ds.nopie.0 "global addresses equal" "non-PIE: one address for every process"

# an installation, used from its prefix
if ! t_sanitized; then
  cmake --install "$B" --prefix "$T_DIR/prefix" >install.log 2>&1 || { cat install.log; t_fail "cmake --install"; }
  P=$T_DIR/prefix
  [ -x "$P/bin/waitio-oshcc" ] && [ -x "$P/bin/waitio-oshrun" ] && [ -f "$P/include/waitio/shmem.h" ] ||
    t_fail "the installation lacks waitio-oshcc, waitio-oshrun or include/waitio/shmem.h"
  "$P/bin/waitio-oshcc" -std=c11 -O2 "$S/tests/osh/data_segment.c" -o ds.installed || t_fail "installed wrapper"
  deps=$(ldd ds.installed)
  [[ $deps == *"$P/lib/libwaitio_shmem.so"* ]] || t_fail "not linked with the prefix's library: $deps"
  t_start installed 40 "$P/bin/waitio-oshrun" -np 2 ./ds.installed
  t_expect_rc installed 0
  t_expect installed "^data_segment ok: 2 PEs"
fi
t_pass "wrapper from the build tree and an installation; PIE, non-PIE, static"
