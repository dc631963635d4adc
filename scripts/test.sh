#!/usr/bin/env bash
# test.sh — the whole test suite from a fresh clone: installs missing dependencies, builds with
# -Werror, runs every test with ctest (unit tests and the multi-process tests, each bounded in
# time), then builds again with AddressSanitizer + UndefinedBehaviorSanitizer and runs the suite
# once more. Usage: scripts/test.sh [--quick] [extra ctest args]   (--quick: skip the sanitizer pass)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
quick=0
if [ "${1:-}" = "--quick" ]; then quick=1; shift; fi
bash scripts/install-deps.sh --test
build=${WAITIO_BUILD:-build}
jobs=$(nproc)

# Development and CI settings, which a user's build does not get by default: warnings are errors,
# and the adapters of both Debian MPIs the suite runs (.ompi and .mpich programs) are built.
dev_opts=(-DWAITIO_WERROR=ON "-DWAITIO_MPI_COMPILERS=mpicc.openmpi;mpicc.mpich")

echo "== build ($build)"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${dev_opts[@]}" >/dev/null
cmake --build "$build" -j"$jobs"
echo "== tests"
# Open MPI's top session directory is removed by the last job to end while a concurrent one may
# be creating its own in it (see tests/scripts/lib.sh): kept non-empty from the start, for the
# tests that run mpirun without lib.sh too, now that two tests run at once.
mkdir -p "${TMPDIR:-/tmp}/ompi.$(uname -n | cut -d. -f1).$(id -u)/waitio-keep"
# One test per core at a time: most multi-process tests mostly wait (timeouts, killed peers);
# the CPU-heavy, timing- and CPU-time-sensitive ones and those sharing the Python binding's build
# are kept apart by their ctest properties (end of tests/CMakeLists.txt).
(cd "$build" && ctest --output-on-failure --timeout 300 -j"$jobs" "$@")

[ $quick -eq 1 ] && exit 0
san=${build}-sanitize
echo "== build with ASan + UBSan ($san)"
cmake -S . -B "$san" -DCMAKE_BUILD_TYPE=Debug -DWAITIO_SANITIZE=ON "${dev_opts[@]}" >/dev/null
cmake --build "$san" -j"$jobs"
echo "== tests under ASan + UBSan"
cd "$san"
# WaitIO's own programs are checked for leaks too; MPI programs are not (MPI libraries leak at
# exit in ways that are theirs, not ours). The core tests over UCX's shared memory, and the 1 GiB
# flood over UCX, repeat under the sanitizers what their .ucx runs check (CI time).
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --output-on-failure --timeout 300 -j"$jobs" -R "^unit\.|^mp\.core_" -E "\.ucx_shm$|^mp\.core_flood\.ucx$" "$@"
# Left to the normal pass: packaging checks (the Python sdist, the dependency installer, the build
# conventions: a user's configure, --help/--version, man pages), which build nothing of ours under
# the sanitizers (the launchers' option parsing runs under them in the launcher tests), and the CPU-time and speed probes (idle waiting,
# the benchmarks' smoke run), whose code paths the other tests run under the sanitizers too;
# and the Python pickle and futures tests, whose PBs are all Python processes with a binding
# setup.py builds without the sanitizers: nothing of the sanitizer build runs in them but
# waitiorun, which the launcher tests run under the sanitizers (they would repeat the normal pass).
# And, so that the whole run stays well under the 30 minutes CI allows on 2 cores, what repeats
# code paths other tests run under the sanitizers: the two-sided tests' runs over each other
# transport (mp_*.tcp/.file/.ucx/.ucx_shm; the core tests above run every transport), the
# examples, the docs' snippets, the Fortran and compatibility-name builds, the OpenSHMEM spec
# examples (shmem_suite covers the routines), the Python binding (built by setup.py without the
# sanitizers) and the Slurm jobs (the launcher's start-up paths run in the launcher tests).
ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --output-on-failure --timeout 300 -j"$jobs" \
  -E "^unit\.|^mp\.core_|^mp\.mp_.*\.(tcp|file|ucx|ucx_shm)$|fuzz_smoke|python_|packaging_conventions|install_|mp_idle_wait|bench_smoke|sec_python_pickle|_example|docs_snippets|slurm_jobs|mpmd_job|fortran_|compat_|shmem_spec_examples" "$@"
