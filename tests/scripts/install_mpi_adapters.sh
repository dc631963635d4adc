#!/usr/bin/env bash
# install_mpi_adapters.sh — MPI adapters are found as CMake projects find MPI, and installed for
# downstream CMake projects:
#   1. a cluster-like PATH where a plain `mpicc` and `mpiexec` (here symlinks to MPICH's, as
#      `module load` would put first) is the only MPI wrapper looked for (WAITIO_MPI_COMPILER_NAMES empty,
#      WAITIO_MPI_COMPILERS unset): configuring WaitIO must find it through find_package(MPI),
#      say so, name the adapter after the MPI (mpich) and build it with a SONAME;
#      WAITIO_MPI_COMPILERS=NAME=WRAPPER names an extra adapter;
#   2. a downstream CMake project (find_package(waitio), find_package(MPI), target
#      waitio::adapter_mpich) against the installed tree builds the exchange test program, and two
#      PBs of it (MPICH, 2 + 1 ranks) couple through the installed waitiorun, the PBs starting up
#      through the adapter.
# timeout: 240
set -uo pipefail
source "$(dirname "$0")/lib.sh"
unset LD_LIBRARY_PATH
command -v mpicc.mpich >/dev/null || t_fail "mpicc.mpich is missing (scripts/install-deps.sh --test)"

# ---- 1. a plain mpicc first on PATH ----
mkdir -p "$T_DIR/modules/bin"
ln -s "$(command -v mpicc.mpich)" "$T_DIR/modules/bin/mpicc"
ln -s "$(command -v mpiexec.mpich)" "$T_DIR/modules/bin/mpiexec"
cfg=(-S "$WAITIO_SOURCE_DIR" -DCMAKE_BUILD_TYPE=Debug -DWAITIO_BUILD_TESTS=OFF -DWAITIO_MPI_COMPILER_NAMES=)
t_start configure 90 env PATH="$T_DIR/modules/bin:$PATH" cmake "${cfg[@]}" -B "$T_DIR/build"
t_wait configure || { t_show configure; t_fail "configuring with a plain mpicc on PATH failed"; }
t_expect configure "WaitIO: MPI adapter 'mpich' \(mpich [0-9.]+\) with $T_DIR/modules/bin/mpicc -> .*mpicc\.mpich \[find_package\(MPI\)\]" \
  "the plain mpicc found by find_package(MPI), named after its vendor"
t_expect configure "WaitIO: MPI adapters: mpich$" "the summary"
t_start build 150 env PATH="$T_DIR/modules/bin:$PATH" cmake --build "$T_DIR/build" -j2 --target mpi_adapters
t_wait build || { t_show build; t_fail "building the adapter of the plain mpicc failed"; }
lib=$T_DIR/build/adapters/libwaitio_adapter_mpich.so.0
[ -e "$lib" ] || t_fail "no $lib after the build"
readelf -d "$lib" | grep -q 'SONAME.*\[libwaitio_adapter_mpich.so.0\]' || t_fail "$lib has no SONAME"
readelf -d "$lib" | grep -q 'NEEDED.*libmpich' || t_fail "$lib is not linked with MPICH"
t_log "plain mpicc: adapter 'mpich' configured and built"
# an extra, user-named wrapper; reconfiguring the same tree
t_start reconfigure 60 env PATH="$T_DIR/modules/bin:$PATH" cmake "${cfg[@]}" -B "$T_DIR/build" \
  "-DWAITIO_MPI_COMPILERS=site=$(command -v mpicc.openmpi)"
t_wait reconfigure || { t_show reconfigure; t_fail "configuring with WAITIO_MPI_COMPILERS failed"; }
t_expect reconfigure "WaitIO: MPI adapter 'site' \(openmpi [0-9.]+\) with .*mpicc.openmpi.* \[WAITIO_MPI_COMPILERS\]"
t_expect reconfigure "WaitIO: MPI adapters: site, mpich$"

# ---- 2. a downstream CMake project against the installed tree ----
prefix=$T_DIR/prefix
cmake --install "$WAITIO_BUILD_DIR" --prefix "$prefix" >"$T_DIR/install.log" 2>&1 \
  || { cat "$T_DIR/install.log"; t_fail "cmake --install failed"; }
mkdir -p "$T_DIR/app"
cat >"$T_DIR/app/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.16)
project(coupled C)
find_package(waitio REQUIRED)
find_package(MPI REQUIRED COMPONENTS C)
message(STATUS "adapters: \${waitio_ADAPTERS}; mpich built with \${waitio_ADAPTER_mpich_MPI_C_COMPILER}")
add_executable(sim $WAITIO_SOURCE_DIR/tests/progs/mpi_exchange.c)
target_include_directories(sim PRIVATE $WAITIO_SOURCE_DIR/tests/progs)
target_compile_definitions(sim PRIVATE _GNU_SOURCE)
set_target_properties(sim PROPERTIES C_STANDARD 11)
target_link_libraries(sim PRIVATE MPI::MPI_C waitio::adapter_mpich)
EOF
t_start app-configure 60 cmake -S "$T_DIR/app" -B "$T_DIR/app/build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DMPI_C_COMPILER="$(command -v mpicc.mpich)"
t_wait app-configure || { t_show app-configure; t_fail "the downstream project does not configure"; }
t_expect app-configure 'adapters: .*mpich.*; mpich built with .*mpicc'
t_start app-build 60 cmake --build "$T_DIR/app/build"
t_wait app-build || { t_show app-build; t_fail "the downstream project does not build"; }
readelf -d "$T_DIR/app/build/sim" | grep -q 'NEEDED.*libwaitio_adapter_mpich.so.0' \
  || t_fail "sim does not link the adapter"
sim=$T_DIR/app/build/sim
t_start couple 60 env WAITIO_LOG=info "$prefix/bin/waitiorun" -t 55 \
  -- mpirun.mpich -np 2 "$sim" --phases AB --max-size 65536 --alarm 50 --expect-nprocs 2,2 \
  : -- mpirun.mpich -np 2 "$sim" --phases AB --max-size 65536 --alarm 50 --expect-nprocs 2,2
t_wait couple || { t_show couple; t_fail "the downstream program failed"; }
t_expect couple 'mpi_exchange ok: 4 processes, 2 PBs' "universe rank 0's verdict"
t_expect couple 'start-up through the MPI adapter \(MPICH' "the PBs started up through the adapter"
t_pass "a plain mpicc gives an adapter named after its MPI; waitio::adapter_mpich builds and runs downstream"
