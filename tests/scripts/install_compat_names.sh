#!/usr/bin/env bash
# install_compat_names.sh — the original WaitIO's build names (docs/user-guide.md, "The original's
# build names"): `cmake --install` into a fresh prefix creates, for the default
# WAITIO_COMPAT_PLATFORMS (intel, a64fx), libwaitio_<p>.so/.a, libwaitio_mpi_<p>.so (a linker
# script bringing the default MPI adapter) and bin/waitio-serv-<p>; the installed
# waitio-compat-names adds a site's own name (mysite=mpich) and refuses an adapter that is not
# installed. Then the original's way end to end: tests/progs/mpi_exchange.c linked with nothing
# but `-L<prefix>/lib -lwaitio_intel -lwaitio_mpi_intel` (the default MPI's adapter: Open MPI here) and
# `-lwaitio_mysite -lwaitio_mpi_mysite` (MPICH) — under Debian's default --as-needed, the adapter
# must still be NEEDED — the master host published with waitio-serv-intel -d and read back in
# the other job with waitio-serv-mysite -c, two separately started PBs coupled through
# WAITIO_MASTER_HOST/PORT, WAITIO_PBID, WAITIO_NPB (2 processes each, so that each starts up
# through its MPI adapter);
# every byte is checked by the program.
# timeout: 60
set -uo pipefail
source "$(dirname "$0")/lib.sh"
unset LD_LIBRARY_PATH LIBRARY_PATH WAITIO_SERV_FILE WAITIO_RENDEZVOUS
p=$T_DIR/prefix
cmake --install "$WAITIO_BUILD_DIR" --prefix "$p" >"$T_DIR/install.log" 2>&1 \
  || { cat "$T_DIR/install.log"; t_fail "cmake --install --prefix $p failed"; }
grep -q 'WAITIO_COMPAT_PLATFORMS:STRING=intel;a64fx$' "$WAITIO_BUILD_DIR/CMakeCache.txt" \
  || t_fail "this test expects the default WAITIO_COMPAT_PLATFORMS (intel;a64fx)"
for plat in intel a64fx; do
  for f in lib/libwaitio_$plat.so lib/libwaitio_$plat.a lib/libwaitio_mpi_$plat.so bin/waitio-serv-$plat; do
    [ -e "$p/$f" ] || t_fail "cmake --install did not create $f"
  done
done
# a bare platform name gets the first adapter of the build (here: the default MPI's)
cache=$WAITIO_BUILD_DIR/CMakeCache.txt
first=$(sed -n 's/^WAITIO_ADAPTER_NAMES:INTERNAL=\([^;]*\).*/\1/p' "$cache")
first_cc=$(sed -n "s/^WAITIO_ADAPTER_${first}_CC:INTERNAL=//p" "$cache")
[ -n "$first" ] && [ -x "$first_cc" ] || t_fail "no MPI adapter in this build (WAITIO_ADAPTER_NAMES)"
grep -q "^INPUT(waitio_compat_adapter_ref.o libwaitio_adapter_$first.so.0 libwaitio.so.0)\$" \
  "$p/lib/libwaitio_mpi_intel.so" || t_fail "libwaitio_mpi_intel.so does not bring the $first adapter: $(cat "$p/lib/libwaitio_mpi_intel.so")"

# a site's own name, and a refused one
"$p/bin/waitio-compat-names" mysite=mpich >"$T_DIR/names.log" 2>&1 || { cat "$T_DIR/names.log"; t_fail "waitio-compat-names mysite=mpich failed"; }
[ -L "$p/bin/waitio-serv-mysite" ] && [ -e "$p/lib/libwaitio_mpi_mysite.so" ] || t_fail "waitio-compat-names created no mysite names"
rc=0; "$p/bin/waitio-compat-names" bogus=nosuch >"$T_DIR/bogus.log" 2>&1 || rc=$?
[ $rc = 1 ] || t_fail "waitio-compat-names with an adapter that is not installed exited $rc, expected 1"
grep -q "no MPI adapter 'nosuch'" "$T_DIR/bogus.log" || t_fail "no clear message for an unknown adapter: $(cat "$T_DIR/bogus.log")"
[ ! -e "$p/lib/libwaitio_bogus.so" ] || t_fail "a refused name was installed anyway"
t_log "ok: names for intel, a64fx (install) and mysite (waitio-compat-names); unknown adapter refused"

# the original's link lines: only -L changes
src=$WAITIO_SOURCE_DIR/tests/progs/mpi_exchange.c
inc=(-std=c11 -D_GNU_SOURCE -I"$WAITIO_SOURCE_DIR/tests/progs" -I"$p/include")
"$first_cc" "${inc[@]}" "$src" -o "$T_DIR/app_intel" -L"$p/lib" -lwaitio_intel -lwaitio_mpi_intel \
  >"$T_DIR/cc1.log" 2>&1 || { cat "$T_DIR/cc1.log"; t_fail "$first_cc ... -lwaitio_intel -lwaitio_mpi_intel failed"; }
mpicc.mpich "${inc[@]}" "$src" -o "$T_DIR/app_mysite" -L"$p/lib" -lwaitio_mysite -lwaitio_mpi_mysite \
  >"$T_DIR/cc2.log" 2>&1 || { cat "$T_DIR/cc2.log"; t_fail "mpicc.mpich ... -lwaitio_mysite -lwaitio_mpi_mysite failed"; }
readelf -d "$T_DIR/app_intel" | grep -q "NEEDED.*libwaitio_adapter_$first.so.0" \
  || t_fail "-lwaitio_mpi_intel did not keep the $first adapter (--as-needed)"
readelf -d "$T_DIR/app_mysite" | grep -q 'NEEDED.*libwaitio_adapter_mpich.so.0' \
  || t_fail "-lwaitio_mpi_mysite did not keep the MPICH adapter (--as-needed)"

# the original's start: waitio-serv-<platform> publishes the master host, PBs started apart
export WAITIO_SERV_FILE=$T_DIR/master.host LD_LIBRARY_PATH=$p/lib
"$p/bin/waitio-serv-intel" -d -m 127.0.0.1 || t_fail "waitio-serv-intel -d failed"
host=$("$p/bin/waitio-serv-mysite" -c -t 5) || t_fail "waitio-serv-mysite -c failed"
[ "$host" = 127.0.0.1 ] || t_fail "waitio-serv-mysite -c printed '$host'"
t_instance 2
export WAITIO_MASTER_HOST=$host WAITIO_LOG=info
args=(--phases AB --max-size 65536 --alarm 35 --expect-nprocs 2,2)
case $first in
  openmpi) run0=(mpirun.openmpi --oversubscribe) first_shown="Open MPI" ;;
  mpich) run0=(mpirun.mpich) first_shown=MPICH ;;
  *) t_fail "the first adapter is '$first': this test launches Open MPI or MPICH programs only" ;;
esac
t_start pb0 40 env WAITIO_PBID=0 "${run0[@]}" -np 2 "$T_DIR/app_intel" "${args[@]}"
t_start pb1 40 env WAITIO_PBID=1 mpirun.mpich -np 2 "$T_DIR/app_mysite" "${args[@]}"
rc0=0; rc1=0
t_wait pb1 || rc1=$?
t_wait pb0 || rc0=$?
[ $rc0 = 0 ] && [ $rc1 = 0 ] || { t_show pb0; t_show pb1; t_fail "the PBs failed (exit $rc0, $rc1)"; }
t_expect pb0 'mpi_exchange ok: 4 processes, 2 PBs' "universe rank 0's verdict"
t_expect pb0 "start-up through the MPI adapter \\($first_shown" "the $first PB used its adapter"
t_expect pb1 'start-up through the MPI adapter \(MPICH' "the MPICH PB used its adapter"
"$p/bin/waitio-serv-intel" -x
t_pass "original link lines (-lwaitio_<p> -lwaitio_mpi_<p>) and waitio-serv-<p> against an installed prefix: 2 PBs coupled, adapters in use"
