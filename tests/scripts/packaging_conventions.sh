#!/usr/bin/env bash
# packaging_conventions.sh — the build and the tools follow the usual conventions (issue 30, 6):
#   1. a user's configure (a second build tree, configured once, the tests' settings left out):
#      -DBUILD_TESTING=OFF makes no test and no test program; without WAITIO_WERROR no compile
#      command has -Werror (compile_commands.json); a given CMAKE_INSTALL_RPATH is what the
#      installed programs and libraries get (cmake_install.cmake); the MPI adapters come from
#      find_package(MPI) alone (Debian's mpicc.mpich is not picked up from PATH), and
#      WAITIO_MPI_SCAN_PATH=ON (a reconfigure) adds it; one tiny target is built (waitio-serv);
#   2. one version everywhere: include/waitio_version.h (where it is written) = CMake's project
#      version (waitioConfigVersion.cmake) = waitio.pc =
#      the CMake package = setup.py's version = CHANGELOG.md's latest = every tool's --version;
#   3. every tool: --help (usage on stdout, exit 0), --version (exit 0), an unknown option
#      (usage on stderr, nothing on stdout, exit 2); waitio-oshcc passes unknown options to the
#      compiler, as compiler wrappers do, so only its --help and --version are checked;
#   4. `cmake --install` puts a man page for every tool (man1) and the C API (man3: waitio.3, waitio_rma.3, waitio_mpi.3 and a
#      page per function), made from their sources, into the prefix; each tool's page names every
#      long option its --help prints; the Fortran module is reachable with the usual flags:
#      `pkg-config --variable=fmoddir waitio` and waitio-fortran.pc compile a `use waitio` program.
# timeout: 150
set -uo pipefail
source "$(dirname "$0")/lib.sh"
S=$WAITIO_SOURCE_DIR
B=$WAITIO_BUILD_DIR
unset PKG_CONFIG_PATH

version=$(sed -nE 's/^#define WAITIO_VERSION_STRING "([0-9]+\.[0-9]+\.[0-9]+)"$/\1/p' "$S/include/waitio_version.h")
[ -n "$version" ] || t_fail "no WAITIO_VERSION_STRING \"X.Y.Z\" in include/waitio_version.h"
t_log "project version $version"

# ---- 1. a user's configure, in the background while the checks of the built tree run ----
U=$T_DIR/user
t_start user-configure 120 cmake -S "$S" -B "$U" -DBUILD_TESTING=OFF -DWAITIO_UCX=OFF -DWAITIO_LTO=OFF \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DCMAKE_INSTALL_RPATH=/opt/site/lib

# ---- 3. the tools of the built tree ----
tools=(waitiorun waitio-serv waitio-info waitio-trace waitio-oshrun waitio-compat-names waitio-oshcc
       waitio-bench waitio-rma-bench)
tool_path() { case $1 in *-bench) echo "$B/bench/$1" ;; *) echo "$B/tools/$1" ;; esac; }
for t in "${tools[@]}"; do
  exe=$(tool_path "$t")
  [ -x "$exe" ] || t_fail "$exe is missing (cmake --build $B)"
  "$exe" --help >"$T_DIR/$t.help" 2>"$T_DIR/$t.help.err"
  rc=$?
  [ $rc = 0 ] || t_fail "$t --help: exit status $rc, expected 0 ($(head -3 "$T_DIR/$t.help.err"))"
  grep -qi 'usage' "$T_DIR/$t.help" || t_fail "$t --help: no usage on stdout"
  [ -s "$T_DIR/$t.help.err" ] && t_fail "$t --help wrote to stderr: $(head -3 "$T_DIR/$t.help.err")"
  "$exe" --version >"$T_DIR/$t.version" 2>&1
  rc=$?
  [ $rc = 0 ] || t_fail "$t --version: exit status $rc, expected 0 ($(head -3 "$T_DIR/$t.version"))"
  grep -q "^$t (WaitIO) $version\$" "$T_DIR/$t.version" \
    || t_fail "$t --version printed '$(head -1 "$T_DIR/$t.version")', expected '$t (WaitIO) $version'"
  [ "$t" = waitio-oshcc ] && continue # other options are the compiler's
  "$exe" --no-such-option >"$T_DIR/$t.bad" 2>"$T_DIR/$t.bad.err"
  rc=$?
  [ $rc = 2 ] || t_fail "$t --no-such-option: exit status $rc, expected 2"
  [ -s "$T_DIR/$t.bad" ] && t_fail "$t --no-such-option wrote to stdout: $(head -3 "$T_DIR/$t.bad")"
  grep -qi 'usage' "$T_DIR/$t.bad.err" || t_fail "$t --no-such-option: no usage on stderr"
done
t_log "${#tools[@]} tools: --help, --version $version, unknown option -> usage on stderr, exit 2"

# ---- 4. installed man pages, and the Fortran module through pkg-config ----
P=$T_DIR/prefix
cmake --install "$B" --prefix "$P" >"$T_DIR/install.log" 2>&1 \
  || { cat "$T_DIR/install.log"; t_fail "cmake --install --prefix $P failed"; }
for t in "${tools[@]}"; do
  page=$P/share/man/man1/$t.1
  [ -s "$page" ] || t_fail "cmake --install did not install $page"
  grep -q "^\.TH \"$(echo "$t" | tr a-z A-Z)\" \"1\" \"\" \"WaitIO $version\"" "$page" \
    || t_fail "$page: no .TH line with version $version"
  # the page's text (troff's \- is a plain -) names each long option of --help
  sed 's/\\-/-/g; s/\\f[BIR]//g' "$page" >"$T_DIR/$t.man.txt"
  for opt in $(grep -oE -- '--[a-z][a-z-]+' "$T_DIR/$t.help" | sort -u); do
    grep -q -- "$opt" "$T_DIR/$t.man.txt" || t_fail "man page $t.1 does not name $opt (which $t --help prints)"
  done
done
n=0
pages=()
for hdr in waitio waitio_rma waitio_mpi; do
  api=$P/share/man/man3/$hdr.3
  pages+=("$api")
  [ -s "$api" ] || t_fail "cmake --install did not install $api"
  k=0
  for fn in $(sed -nE 's/^WAITIO_API [^(]*[ *]((waitio|WAITIO)_[A-Za-z_]+)\(.*/\1/p' "$S/include/$hdr.h"); do
    grep -q "$fn" "$api" || t_fail "$hdr.3 does not describe $fn (declared in $hdr.h)"
    grep -qx ".so man3/$hdr.3" "$P/share/man/man3/$fn.3" 2>/dev/null || t_fail "no man page $fn.3 (-> $hdr.3)"
    k=$((k + 1))
  done
  [ $k -ge 20 ] || t_fail "only $k functions found in $hdr.h (the pattern no longer matches?)"
  n=$((n + k))
done
if command -v man >/dev/null && command -v groff >/dev/null; then
  for page in "$P"/share/man/man1/*.1 "${pages[@]}"; do
    LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" >/dev/null 2>"$T_DIR/man.err" \
      || t_fail "man -l $page failed: $(head -3 "$T_DIR/man.err")"
    [ -s "$T_DIR/man.err" ] && t_fail "man --warnings $page: $(head -3 "$T_DIR/man.err")"
  done
fi
t_log "man pages: ${#tools[@]} tools (man1), waitio.3, waitio_rma.3, waitio_mpi.3 + $n function pages (man3)"

pcv() { PKG_CONFIG_PATH=$P/lib/pkgconfig pkg-config "$@"; }
[ "$(pcv --modversion waitio)" = "$version" ] || t_fail "waitio.pc: version $(pcv --modversion waitio), expected $version"
grep -q "PACKAGE_VERSION \"$version\"" "$P/lib/cmake/waitio/waitioConfigVersion.cmake" \
  || t_fail "waitioConfigVersion.cmake does not say $version"
grep -q "^#define WAITIO_VERSION_STRING \"$version\"" "$P/include/waitio_version.h" \
  || t_fail "installed waitio_version.h does not say $version"
fmoddir=$(pcv --variable=fmoddir waitio)
if [ -n "$fmoddir" ]; then
  [ -s "$fmoddir/waitio.mod" ] || t_fail "fmoddir=$fmoddir has no waitio.mod"
  cat >"$T_DIR/use_waitio.f90" <<'EOF'
program use_waitio
  use waitio
  implicit none
  integer :: univ, ierr
  if (.false.) call WAITIO_CREATE_UNIVERSE(univ, ierr)  ! linked, never run
end program
EOF
  fc=$(command -v gfortran)
  if [ -n "$fc" ] && ! t_sanitized; then # (a sanitized libwaitio needs the sanitizer runtime linked)
    "$fc" "$T_DIR/use_waitio.f90" -o "$T_DIR/use_waitio" $(pcv --cflags --libs waitio-fortran) \
      -Wl,-rpath,"$(pcv --variable=libdir waitio)" -J"$T_DIR" >"$T_DIR/fc.log" 2>&1 \
      || { cat "$T_DIR/fc.log"; t_fail "gfortran with \$(pkg-config --cflags --libs waitio-fortran) cannot build a 'use waitio' program"; }
    t_log "Fortran: fmoddir=$fmoddir; 'use waitio' builds with waitio-fortran.pc"
  fi
  grep -q 'waitio::fortran' "$P/lib/cmake/waitio/waitioConfig.cmake" || t_fail "the CMake package has no waitio::fortran"
fi

# ---- 2. versions outside the installation ----
grep -m1 -E '^## \[[0-9]' "$S/CHANGELOG.md" | grep -q "^## \[$version\]" \
  || t_fail "CHANGELOG.md's latest version is not $version: $(grep -m1 -E '^## \[' "$S/CHANGELOG.md")"
# setup.py reads the same header (run on a copy: setup.py may write build files beside itself)
mkdir -p "$T_DIR/py/include"
cp "$S/setup.py" "$T_DIR/py/" && cp "$S/include/waitio_version.h" "$T_DIR/py/include/"
pyv=$(cd "$T_DIR/py" && python3 setup.py --version 2>"$T_DIR/setup.err" | tail -1)
[ "$pyv" = "$version" ] || t_fail "setup.py --version says '$pyv', expected $version ($(tail -3 "$T_DIR/setup.err"))"
t_log "version $version in waitio_version.h, waitio.pc, the CMake package, setup.py, CHANGELOG.md"

# ---- 1. (continued) the user's tree ----
t_wait user-configure || { t_show user-configure; t_fail "the user's configure failed"; }
[ -s "$U/compile_commands.json" ] || t_fail "no compile_commands.json in the user's tree"
grep -q -- '-Wall' "$U/compile_commands.json" || t_fail "compile_commands.json has no -Wall (not the project's commands?)"
grep -q -- '-Werror' "$U/compile_commands.json" && t_fail "a user's build compiles with -Werror (WAITIO_WERROR is off)"
grep -q 'WAITIO_WERROR:BOOL=OFF' "$U/CMakeCache.txt" || t_fail "WAITIO_WERROR is not OFF by default"
[ -e "$U/tests" ] && t_fail "BUILD_TESTING=OFF configured the tests/ directory"
cmake --build "$U" --target help >"$T_DIR/targets" 2>&1 || t_fail "cmake --build --target help failed"
grep -qE '(^|[ .])(unit_[a-z_]+|test_mpi_progs|exchange)( |$)' "$T_DIR/targets" \
  && t_fail "BUILD_TESTING=OFF still defines test targets: $(grep -E 'unit_|test_mpi_progs' "$T_DIR/targets" | head -3)"
(cd "$U" && ctest -N) >"$T_DIR/ctest-n" 2>&1
grep -q 'Total Tests: 0' "$T_DIR/ctest-n" || t_fail "BUILD_TESTING=OFF: ctest -N lists tests: $(tail -2 "$T_DIR/ctest-n")"
# the given RUNPATH for every installed program and library, our $ORIGIN default nowhere
grep -rhq 'NEW_RPATH "/opt/site/lib"' "$U/tools/cmake_install.cmake" || t_fail "the installed tools do not get CMAKE_INSTALL_RPATH=/opt/site/lib"
grep -rhq 'NEW_RPATH "/opt/site/lib"' "$U/src/cmake_install.cmake" || t_fail "the installed libwaitio does not get CMAKE_INSTALL_RPATH=/opt/site/lib"
grep -rq --include=cmake_install.cmake 'NEW_RPATH "[^"]*ORIGIN' "$U" \
  && t_fail "\$ORIGIN is still installed with a given CMAKE_INSTALL_RPATH"
# MPI adapters: find_package(MPI)'s only, no PATH scan unless asked
t_reject user-configure 'mpicc\.mpich' "configure picked up mpicc.mpich from PATH without WAITIO_MPI_SCAN_PATH"
t_reject user-configure 'WAITIO_MPI_SCAN_PATH|WAITIO_MPI_COMPILER_NAMES' "configure scanned PATH without being asked"
if command -v mpicc.mpich >/dev/null; then
  t_start scan-configure 90 cmake "$U" -DWAITIO_MPI_SCAN_PATH=ON
  t_wait scan-configure || { t_show scan-configure; t_fail "reconfiguring with WAITIO_MPI_SCAN_PATH=ON failed"; }
  t_expect scan-configure "MPI adapter 'mpich' .*mpicc\.mpich \[WAITIO_MPI_SCAN_PATH\]" "WAITIO_MPI_SCAN_PATH=ON finds Debian's mpicc.mpich"
fi
t_start user-build 90 cmake --build "$U" --target waitio-serv
t_wait user-build || { t_show user-build; t_fail "building waitio-serv in the user's tree failed"; }
"$U/tools/waitio-serv" --version | grep -q "^waitio-serv (WaitIO) $version\$" || t_fail "the user's waitio-serv --version"
t_log "user tree: no tests, no -Werror, RUNPATH as given, no PATH scan unless asked"

t_pass "BUILD_TESTING, WAITIO_WERROR, CMAKE_INSTALL_RPATH, MPI scan, version $version, --help/--version of ${#tools[@]} tools, man pages"
