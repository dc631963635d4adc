#!/usr/bin/env bash
# mpmd_job.sh — one-job MPMD launch (SPEC §4, docs/mpi-layer.md): `mpiexec -np 2 ./A : -np 1 ./B
# : -np 1 python3 c.py` with no WAITIO_* variable makes each application a PB, starting up
# through MPI (no master: the log must show the MPI start-up and no rendezvous master) with a key
# generated for the job (HOME is empty and must stay so: no per-user key file is used). Data
# between every pair is checked byte by byte, collectives and PB groups too (tests/progs/
# mpi_job.c, tests/python/pb_job.py). Open MPI: 2 + 1 (MPI initialised by the adapter) + a
# Python PB through mpi4py; MPICH: 2 + 1 (by the adapter) + 1. Then an adapter linked into a
# program of the other MPI must refuse at start-up, naming both MPIs (both directions).
# timeout: 150
set -uo pipefail
source "$(dirname "$0")/lib.sh"
t_require_progs mpi_job.ompi mpi_job.mpich
unset WAITIO_INIT_TIMEOUT
mkdir -p "$T_DIR/home"
job_env=(env HOME="$T_DIR/home" WAITIO_LOG=info)

# -- the Python PB: the binding built for the Python that has mpi4py (Debian's, Open MPI) ----
PY=${WAITIO_TEST_MPI4PY_PYTHON:-/usr/bin/python3}
python_pb=()
if t_sanitized; then
  t_log "sanitizer build: the Python PB (an uninstrumented interpreter) runs in the plain build's run of this test"
elif ! "$PY" -c 'import mpi4py' 2>/dev/null; then
  t_fail "$PY has no mpi4py (scripts/install-deps.sh installs python3-mpi4py)"
else
  suffix=$("$PY" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
  pyinc=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
  mkdir -p "$T_DIR/py/waitio"
  cp "$WAITIO_SOURCE_DIR"/python/waitio/*.py "$T_DIR/py/waitio/"
  # the library's sources as setup.py takes them: no ucx transport, no adapter link helper
  srcs=$(cd "$WAITIO_SOURCE_DIR" && ls src/core/*.c src/boot/*.c src/transport/*.c src/coll/*.c src/mpi/*.c src/gpu/*.c \
         src/rma/*.c | grep -v -e '/ucx' -e 'compat_adapter_ref')
  (cd "$WAITIO_SOURCE_DIR" && ${CC:-cc} -shared -fPIC -O1 -std=c11 -D_GNU_SOURCE -Iinclude -Isrc -I"$pyinc" \
     python/waitio/_core.c $srcs \
     -lcrypto -ldl -o "$T_DIR/py/waitio/_core$suffix") >"$T_DIR/pybuild.log" 2>&1 \
    || { cat "$T_DIR/pybuild.log"; t_fail "the binding does not build for $PY"; }
  python_pb=(: -np 1 -x PYTHONPATH="$T_DIR/py" -x LD_LIBRARY_PATH="$WAITIO_BUILD_DIR/adapters"
             "$PY" "$WAITIO_SOURCE_DIR/tests/python/pb_job.py")
fi

check_job() { # NAME PROCESSES PBS
  local name=$1 n=$2 npb=$3
  t_expect_rc "$name" 0
  # (mpiexec may join two processes' lines: count matches, not lines)
  [ "$(grep -oE "(mpi_job|pb_job) PB [0-9]+ rank [0-9]+: ok \($n processes, $npb PBs" "$(t_out "$name")" | wc -l)" = "$n" ] \
    || t_fail "$name: not all $n processes reported ok"
  [ "$(grep -o 'start-up through MPI (one-job launch' "$(t_out "$name")" | wc -l)" = "$n" ] \
    || t_fail "$name: not every process started up through MPI"
  t_reject "$name" 'rendezvous master listening' "a one-job launch has no master"
  [ -z "$(ls -A "$T_DIR/home")" ] || t_fail "$name: something was written to HOME: $(ls -A "$T_DIR/home")"
}

n=4; npb=3
[ ${#python_pb[@]} = 0 ] && { n=3; npb=2; }
t_start ompi 90 "${job_env[@]}" mpirun.openmpi --oversubscribe -np 2 "$TEST_PROGS/mpi_job.ompi" \
  : -np 1 "$TEST_PROGS/mpi_job.ompi" --no-mpi "${python_pb[@]}"
t_wait ompi
check_job ompi $n $npb
[ ${#python_pb[@]} = 0 ] || t_expect ompi 'pb_job PB 2 rank 0: ok'
t_show ompi
t_log "ok: Open MPI, one job of $npb applications ($n processes)$([ ${#python_pb[@]} = 0 ] || echo ', the last one Python through mpi4py')"

t_start mpich 90 "${job_env[@]}" mpirun.mpich -np 2 "$TEST_PROGS/mpi_job.mpich" \
  : -np 1 "$TEST_PROGS/mpi_job.mpich" --no-mpi : -np 1 "$TEST_PROGS/mpi_job.mpich"
t_wait mpich
check_job mpich 4 3
t_expect mpich 'PB 1 rank 0: ok .*MPI initialised by the adapter'
t_log "ok: MPICH, one job of 3 applications (4 processes)"

# -- an adapter built for the other MPI refuses, naming both ---------------------------------
B=$WAITIO_BUILD_DIR
mismatch() { # NAME WRAPPER ADAPTER LAUNCHER EXPECT-REGEX
  "$2" -std=c11 -I"$WAITIO_SOURCE_DIR/include" $(t_sanitize_flags) "$WAITIO_SOURCE_DIR/tests/progs/mpi_job.c" \
    -o "$T_DIR/$1" -L"$B/adapters" -Wl,-rpath,"$B/adapters" -Wl,--no-as-needed -l"$3" -Wl,--as-needed \
    -L"$B/src" -Wl,-rpath,"$B/src" -lwaitio >"$T_DIR/$1.build" 2>&1 || { cat "$T_DIR/$1.build"; t_fail "$1 does not build"; }
  t_start "$1" 30 env WAITIO_NPB=1 $4 -np 1 "$T_DIR/$1"
  t_wait "$1"
  [ "$(t_rc "$1")" != 0 ] || t_fail "$1 ran with the wrong adapter"
  t_expect "$1" "$5"
  t_reject "$1" 'Segmentation|signal 11'
}
mismatch ompi_with_mpich mpicc.openmpi waitio_adapter_mpich mpirun.openmpi \
  'adapter libwaitio_adapter_mpich.so[.0-9]* was built for MPICH [0-9.]+, but this program runs Open MPI v'
mismatch mpich_with_ompi mpicc.mpich waitio_adapter_openmpi mpirun.mpich \
  'adapter libwaitio_adapter_openmpi.so[.0-9]* was built for Open MPI [0-9.]+, but this program runs MPICH'
t_log "ok: a mismatched adapter refuses at start-up, naming both MPIs (Open MPI program + MPICH adapter, and the reverse)"
t_pass
