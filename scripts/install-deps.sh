#!/usr/bin/env bash
# install-deps.sh — installs, only when missing, what one use of WaitIO needs on Debian/Ubuntu
# (apt). Safe to run repeatedly; needs root (or sudo) only when something is missing.
#
# Usage: scripts/install-deps.sh [--build] [--demo] [--test] [--bench]   (several may be given)
#   --build  (the default) building and installing the library and its MPI adapters: a C
#            compiler, make, CMake, pkg-config, OpenSSL's libcrypto headers, Open MPI and MPICH,
#            UCX's headers (libucx-dev: the optional ucx transport is built when pkg-config finds it)
#   --demo   --build plus what scripts/demo.sh runs: gfortran (the heat example's Code-1), Python 3
#   --test   --demo plus what scripts/test.sh needs: clang with libFuzzer (tests/fuzz), valgrind,
#            iproute2 (network namespaces), Python headers, pip and venv (the Python binding's
#            tests build it), ucx-utils (ucx_perftest: the bench smoke test's ucx rows), Slurm
#            and munge (slurmctld, slurmd, slurm-client, munge: the Slurm jobs test)
#   --bench  --build plus what bench/compare needs: its plots (Debian's python3-matplotlib) and
#            the ucx rows' baseline, ucx_perftest (ucx-utils)
# Package names are looked up in the distribution's archive where they vary between releases
# (libFuzzer ships in libclang-rt-N-dev on Debian 12, in libclang-common-N-dev before; N is the
# installed clang's version).
set -euo pipefail
build=0 demo=0 test=0 bench=0
[ $# -eq 0 ] && build=1
for arg in "$@"; do
  case $arg in
    --build) build=1 ;;
    --demo) build=1 demo=1 ;;
    --test) build=1 demo=1 test=1 ;;
    --bench) build=1 bench=1 ;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install-deps: unknown option $arg (see --help)" >&2; exit 2 ;;
  esac
done

have_cmd() { command -v "$1" >/dev/null 2>&1; }
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }
need=()
# want CMD PACKAGE: PACKAGE when CMD is not on PATH
want() { have_cmd "$1" || need+=("$2"); }

if [ $build = 1 ]; then
  want gcc gcc; want make make; want cmake cmake; want pkg-config pkg-config
  want mpicc.openmpi libopenmpi-dev; want mpirun.openmpi openmpi-bin
  want mpicc.mpich libmpich-dev; want mpirun.mpich mpich
  have_pkg libssl-dev || need+=(libssl-dev)
  have_pkg libucx-dev || need+=(libucx-dev)
fi
if [ $demo = 1 ]; then
  want gfortran gfortran; want python3 python3; want ps procps; want timeout coreutils
fi
if [ $test = 1 ]; then
  want clang clang; want valgrind valgrind; want ip iproute2; want readelf binutils
  python3 -m pip --version >/dev/null 2>&1 || need+=(python3-pip)
  python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || need+=(python3-venv)
  # Python.h, which `pip install .` compiles the binding against (a pyenv Python has its own)
  python3 -c 'import os, sysconfig; raise SystemExit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
    >/dev/null 2>&1 || need+=(python3-dev)
  # the one-job MPMD test's Python PB joins MPI start-up through mpi4py (Debian's: Open MPI), in
  # the system Python, for which the binding is then built too
  /usr/bin/python3 -c 'import mpi4py' >/dev/null 2>&1 || need+=(python3-mpi4py)
  compgen -G '/usr/include/python3*/Python.h' >/dev/null || need+=(python3-dev)
  # the Slurm test (tests/scripts/slurm_jobs.sh) runs its own slurmctld, slurmd and munged
  want slurmctld slurmctld; want slurmd slurmd; want srun slurm-client; want munged munge
fi
# bench/compare draws its plots with the distribution's matplotlib (/usr/bin/python3)
if [ $bench = 1 ] && ! have_pkg python3-matplotlib; then need+=(python3-matplotlib); fi
# ucx_perftest: bench/compare's baseline for the ucx rows (and the bench smoke test's)
if [ $bench = 1 ] || [ $test = 1 ]; then want ucx_perftest ucx-utils; fi

SUDO=""
updated=0
apt_update() {
  [ $updated = 1 ] && return
  if [ "$(id -u)" -ne 0 ]; then
    have_cmd sudo || { echo "install-deps: need root or sudo to install: ${need[*]:-packages}" >&2; exit 1; }
    SUDO=sudo
  fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  updated=1
}
apt_install() {
  apt_update
  echo "install-deps: installing $*"
  $SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

if [ ${#need[@]} -gt 0 ]; then
  apt_install "${need[@]}"
fi

# libFuzzer for tests/fuzz: the package that holds it for the installed clang's version
have_libfuzzer() {
  echo 'int LLVMFuzzerTestOneInput(const char*d,long n){(void)d;(void)n;return 0;}' |
    clang -x c -fsanitize=fuzzer - -o /dev/null >/dev/null 2>&1
}
if [ $test = 1 ] && have_cmd clang && ! have_libfuzzer; then
  v=$(clang -dumpversion | cut -d. -f1)
  apt_update
  pkg=""
  for cand in "libclang-rt-$v-dev" "libclang-common-$v-dev"; do
    if apt-cache show "$cand" >/dev/null 2>&1; then pkg=$cand; break; fi
  done
  if [ -n "$pkg" ]; then
    apt_install "$pkg"
  else
    echo "install-deps: no package with libFuzzer for clang $v found; the fuzz smoke test will be skipped" >&2
  fi
fi
exit 0
