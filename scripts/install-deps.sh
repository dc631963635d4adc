#!/usr/bin/env bash
# install-deps.sh — installs what building and testing WaitIO needs on Debian/Ubuntu, only when
# missing: a C compiler, CMake, OpenSSL's libcrypto headers, Open MPI and MPICH side by side,
# gfortran, and the tools the tests use. Safe to run repeatedly; needs root (or sudo) to install.
# Usage: install-deps.sh [--bench]   (--bench: also what bench/compare needs for its plots)
set -euo pipefail
bench=0
[ "${1:-}" = "--bench" ] && bench=1

need=()
have_cmd() { command -v "$1" >/dev/null 2>&1; }
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }

for pair in gcc:gcc make:make cmake:cmake pkg-config:pkg-config mpicc.openmpi:libopenmpi-dev \
            mpirun.openmpi:openmpi-bin mpicc.mpich:libmpich-dev mpirun.mpich:mpich \
            gfortran:gfortran python3:python3 ip:iproute2 ps:procps timeout:coreutils \
            clang:clang valgrind:valgrind; do
  cmd=${pair%%:*} pkg=${pair#*:}
  have_cmd "$cmd" || need+=("$pkg")
done
have_pkg libssl-dev || need+=(libssl-dev)
have_pkg libclang-rt-14-dev || need+=(libclang-rt-14-dev)   # libFuzzer for tests/fuzz
python3 -m pip --version >/dev/null 2>&1 || need+=(python3-pip)
# the one-job MPMD test's Python PB joins MPI start-up through mpi4py (Debian's: Open MPI)
/usr/bin/python3 -c 'import mpi4py' >/dev/null 2>&1 || need+=(python3-mpi4py)
compgen -G '/usr/include/python3*/Python.h' >/dev/null || need+=(python3-dev)  # to build the binding for it
# bench/compare draws its plots with the distribution's matplotlib (/usr/bin/python3)
if [ $bench = 1 ] && ! have_pkg python3-matplotlib; then need+=(python3-matplotlib); fi

if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
echo "install-deps: installing ${need[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  have_cmd sudo || { echo "install-deps: need root or sudo to install: ${need[*]}" >&2; exit 1; }
  SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
