#!/usr/bin/env bash
# install_prefix.sh — the installed tree works from any prefix without LD_LIBRARY_PATH. The build
# is installed as the README says (cmake --install BUILD --prefix P) into two prefixes, and the
# second one is then moved elsewhere. For both:
#   - readelf: every installed program has RUNPATH $ORIGIN/../lib, every library (libwaitio,
#     libwaitio_shmem, the MPI adapters) has a SONAME and RUNPATH $ORIGIN; nothing installed names
#     the build tree; the installed waitio-oshcc / waitio-oshrun build and run an OpenSHMEM program;
#   - the installed waitio-info, waitiorun and waitio-bench run (a 2-PB ping-pong whose bytes the
#     benchmark checks);
#   - user programs compiled with the user guide's link lines (pkg-config plus rpath): the plain
#     exchange test program with `waitio`, and the MPICH build of it with `waitio-adapter-mpich`,
#     coupled through the installed waitiorun (the MPICH PB starts up through the adapter).
# LD_LIBRARY_PATH is unset throughout.
# timeout: 120
set -uo pipefail
source "$(dirname "$0")/lib.sh"
unset LD_LIBRARY_PATH LIBRARY_PATH PKG_CONFIG_PATH
command -v readelf >/dev/null || t_fail "readelf (binutils) is missing"
command -v pkg-config >/dev/null || t_fail "pkg-config is missing (scripts/install-deps.sh --test)"
build_dir=$(cd "$WAITIO_BUILD_DIR" && pwd -P)

install_to() { # install_to PREFIX
  cmake --install "$WAITIO_BUILD_DIR" --prefix "$1" >"$T_DIR/install.log" 2>&1 \
    || { cat "$T_DIR/install.log"; t_fail "cmake --install --prefix $1 failed"; }
}
install_to "$T_DIR/a"
install_to "$T_DIR/b"
mkdir -p "$T_DIR/elsewhere"
mv "$T_DIR/b" "$T_DIR/elsewhere/moved"

dyn() { readelf -d "$1" 2>/dev/null; }
runpath() { dyn "$1" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p'; }
check_tree() { # check_tree PREFIX
  local p=$1 f rp n=0
  for f in "$p"/bin/*; do
    cmp -s -n 4 "$f" <(printf '\177ELF') || continue # scripts: waitio-oshcc, waitio-oshrun
    dyn "$f" | grep -q '(RPATH)' && t_fail "$f has a DT_RPATH (want DT_RUNPATH)"
    rp=$(runpath "$f")
    [ "$rp" = '$ORIGIN/../lib' ] || t_fail "$f: RUNPATH is '$rp', expected \$ORIGIN/../lib"
    n=$((n + 1))
  done
  [ $n -ge 4 ] || t_fail "$p/bin holds $n programs, expected waitio-bench, waitio-info, waitiorun, waitio-serv"
  [ -x "$p/bin/waitio-bench" ] && [ -x "$p/bin/waitiorun" ] && [ -x "$p/bin/waitio-info" ] \
    || t_fail "$p/bin lacks a program: $(ls "$p/bin")"
  n=0
  for f in "$p"/lib/libwaitio.so.*.* "$p"/lib/libwaitio_shmem.so.*.* "$p"/lib/libwaitio_adapter_*.so.*.*; do
    [ -e "$f" ] || continue
    local base soname
    base=$(basename "$f")
    soname=$(dyn "$f" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
    [ -n "$soname" ] || t_fail "$f has no SONAME"
    [[ $base == "$soname".* ]] || t_fail "$f: SONAME $soname does not match the file name"
    [ -L "$p/lib/$soname" ] || t_fail "$p/lib/$soname (the SONAME link) is missing"
    rp=$(runpath "$f")
    [ "$rp" = '$ORIGIN' ] || t_fail "$f: RUNPATH is '$rp', expected \$ORIGIN"
    n=$((n + 1))
  done
  [ -e "$p/lib/libwaitio_adapter_mpich.so.0" ] || t_fail "$p/lib lacks the MPICH adapter"
  [ -e "$p/lib/libwaitio_adapter_openmpi.so.0" ] || t_fail "$p/lib lacks the Open MPI adapter"
  for f in "$p"/bin/* "$p"/lib/*.so.*.*; do
    dyn "$f" | grep -qF "$build_dir" && t_fail "$f's dynamic section names the build tree $build_dir"
  done
  t_log "$p: $n libraries with SONAME and RUNPATH \$ORIGIN, programs with \$ORIGIN/../lib"
}

# run_tree PREFIX NAME: the installed tools, then two user programs built with the documented lines
run_tree() {
  local p=$1 name=$2 rc=0
  t_start "$name-info" 10 "$p/bin/waitio-info"
  t_wait "$name-info" || { t_show "$name-info"; t_fail "installed waitio-info ($p) failed"; }
  t_expect "$name-info" 'WaitIO [0-9]+\.[0-9]+' "the version line"
  t_start "$name-version" 10 "$p/bin/waitiorun" --version
  t_wait "$name-version" || { t_show "$name-version"; t_fail "installed waitiorun --version failed"; }
  # the installed waitio-bench, launched by the installed waitiorun: 2 PBs, bytes checked
  t_start "$name-bench" 40 "$p/bin/waitiorun" -t 35 -- "$p/bin/waitio-bench" pingpong --csv \
    --sizes 8,64K --iters 20 --warmup 2 : -- "$p/bin/waitio-bench" pingpong --csv --sizes 8,64K \
    --iters 20 --warmup 2
  t_wait "$name-bench" || { t_show "$name-bench"; t_fail "installed waitio-bench via waitiorun ($p) failed"; }
  t_expect "$name-bench" '^waitio-pingpong,65536,' "a checked 64 KiB ping-pong row"

  # the user guide's link lines: pkg-config plus an rpath to the library directory
  export PKG_CONFIG_PATH=$p/lib/pkgconfig
  local libdir
  libdir=$(pkg-config --variable=libdir waitio) || t_fail "pkg-config does not find waitio in $p"
  # shellcheck disable=SC2046
  cc -std=c11 -D_GNU_SOURCE -I"$WAITIO_SOURCE_DIR/tests/progs" "$WAITIO_SOURCE_DIR/tests/progs/exchange.c" \
    -o "$T_DIR/$name-exchange" $(pkg-config --cflags --libs waitio) -Wl,-rpath,"$libdir" \
    >"$T_DIR/$name-cc.log" 2>&1 || { cat "$T_DIR/$name-cc.log"; t_fail "cc with pkg-config waitio ($p) failed"; }
  # shellcheck disable=SC2046
  mpicc.mpich -std=c11 -D_GNU_SOURCE -I"$WAITIO_SOURCE_DIR/tests/progs" "$WAITIO_SOURCE_DIR/tests/progs/mpi_exchange.c" \
    -o "$T_DIR/$name-mpi_exchange" $(pkg-config --cflags --libs waitio-adapter-mpich) -Wl,-rpath,"$libdir" \
    >"$T_DIR/$name-mpicc.log" 2>&1 || { cat "$T_DIR/$name-mpicc.log"; t_fail "mpicc.mpich with pkg-config waitio-adapter-mpich ($p) failed"; }
  unset PKG_CONFIG_PATH
  dyn "$T_DIR/$name-mpi_exchange" | grep -q 'NEEDED.*libwaitio_adapter_mpich.so.0' \
    || t_fail "the MPICH program does not link the adapter (pkg-config's --no-as-needed bracket)"
  t_start "$name-couple" 60 env WAITIO_LOG=info "$p/bin/waitiorun" -t 55 \
    -- mpirun.mpich -np 2 "$T_DIR/$name-mpi_exchange" --phases AB --max-size 65536 --alarm 50 --expect-nprocs 2,1 \
    : -- "$T_DIR/$name-exchange" --phases AB --max-size 65536 --alarm 50 --expect-nprocs 2,1
  t_wait "$name-couple" || rc=$?
  [ "$rc" = 0 ] || { t_show "$name-couple"; t_fail "the user programs built against $p failed (exit $rc)"; }
  t_expect "$name-couple" 'mpi_exchange ok: 3 processes, 2 PBs' "universe rank 0's verdict"
  t_expect "$name-couple" 'start-up through the MPI adapter \(MPICH' "the MPICH PB used its adapter"
  # the installed OpenSHMEM wrapper and launcher find their prefix from where they are (moved too)
  "$p/bin/waitio-oshcc" -std=c11 -O2 "$WAITIO_SOURCE_DIR/tests/osh/data_segment.c" -o "$T_DIR/$name-osh" \
    >"$T_DIR/$name-oshcc.log" 2>&1 || { cat "$T_DIR/$name-oshcc.log"; t_fail "the installed waitio-oshcc ($p) failed"; }
  t_start "$name-osh" 40 "$p/bin/waitio-oshrun" -t 35 -np 2 "$T_DIR/$name-osh"
  t_wait "$name-osh" || { t_show "$name-osh"; t_fail "the installed waitio-oshrun ($p) failed"; }
  t_expect "$name-osh" '^data_segment ok: 2 PEs'
  t_log "$p: waitio-info, waitiorun, waitio-bench, two user programs and an OpenSHMEM program ran"
}

check_tree "$T_DIR/a"
check_tree "$T_DIR/elsewhere/moved"
run_tree "$T_DIR/a" a
run_tree "$T_DIR/elsewhere/moved" moved
t_pass "two prefixes, one moved: RUNPATH/SONAME right, installed tools and user programs ran without LD_LIBRARY_PATH"
