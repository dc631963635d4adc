#!/usr/bin/env bash
# mpmd_world.sh — MPMD: what MPI_COMM_WORLD means (docs/launcher.md). In a one-job MPMD launch
# with no WAITIO_* variable, MPI_COMM_WORLD inside each program is that program's processes: C
# (tests/progs/mpi_mpmd_world.c), Fortran through mpif.h, `use mpi` and `use mpi_f08`
# (tests/progs/mpmd_world.f90) and Python under mpi4py (tests/python/mpmd_world.py) each check
# size, rank, MPI_Comm_compare with a split and a dup, MPI_APPNUM, the name, an allreduce over the
# world, a send outside it that must fail; then they couple through WaitIO (a ring over the
# universe, every byte checked).
#   Open MPI: C 2 + Fortran 1 + Python 1 (the Python program: plain build only, an uninstrumented
#             interpreter; C 2 + Fortran 1 under the sanitizers)
#   MPICH:    C 1 + Fortran 2 (Debian's mpi4py is Open MPI's)
#   WAITIO_MPMD_WORLD=0 (MPICH, C 1 + Fortran 1): the world is the whole job again
# timeout: 90
set -uo pipefail
source "$(dirname "$0")/lib.sh"
t_require_progs mpi_mpmd_world.ompi mpi_mpmd_world.mpich mpmd_world.ompi mpmd_world.mpich
unset WAITIO_INIT_TIMEOUT WAITIO_MPMD_WORLD
P=$TEST_PROGS

# -- the Python program: the binding for the Python that has mpi4py, linked to this build's
#    libwaitio (the adapter, loaded by `import waitio`, then registers with the same library) --
PY=${WAITIO_TEST_MPI4PY_PYTHON:-/usr/bin/python3}
python_app=()
if t_sanitized; then
  t_log "sanitizer build: the Python program (an uninstrumented interpreter) runs in the plain build's run"
elif ! "$PY" -c 'import mpi4py' 2>/dev/null; then
  t_fail "$PY has no mpi4py (scripts/install-deps.sh installs python3-mpi4py)"
else
  suffix=$("$PY" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
  pyinc=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
  mkdir -p "$T_DIR/py/waitio"
  cp "$WAITIO_SOURCE_DIR"/python/waitio/*.py "$T_DIR/py/waitio/"
  ${CC:-cc} -shared -fPIC -O1 -std=c11 -D_GNU_SOURCE -I"$WAITIO_SOURCE_DIR/include" -I"$WAITIO_SOURCE_DIR/src" \
    -I"$pyinc" "$WAITIO_SOURCE_DIR/python/waitio/_core.c" -o "$T_DIR/py/waitio/_core$suffix" \
    -L"$WAITIO_BUILD_DIR/src" -Wl,-rpath,"$WAITIO_BUILD_DIR/src" -lwaitio >"$T_DIR/pybuild.log" 2>&1 \
    || { cat "$T_DIR/pybuild.log"; t_fail "the binding does not build for $PY"; }
  python_app=(: -np 1 -x PYTHONPATH="$T_DIR/py" -x LD_LIBRARY_PATH="$WAITIO_BUILD_DIR/adapters"
              "$PY" "$WAITIO_SOURCE_DIR/tests/python/mpmd_world.py" --app 2 --layout 2,1,1)
fi

# check NAME PROCESSES WORLD-SIZES...: every process said ok, with the world sizes expected
check() {
  local name=$1 n=$2 got
  shift 2
  t_expect_rc "$name" 0
  got=$(grep -oE 'mpmd_world (C|Fortran|Python) app [0-9]+ rank [0-9]+: ok \(world [0-9]+\)' "$(t_out "$name")" | wc -l)
  [ "$got" = "$n" ] || t_fail "$name: $got of $n processes reported ok"
  t_reject "$name" 'ERROR|FAILED|before the WaitIO MPI adapter'
  local spec
  for spec in "$@"; do # LANG:APP:WORLD
    IFS=: read -r lang app world <<<"$spec"
    t_expect "$name" "mpmd_world $lang app $app rank [0-9]+: ok \\(world $world\\)"
  done
}

if [ ${#python_app[@]} = 0 ]; then
  layout=2,1; n=3; py_spec=()
else
  layout=2,1,1; n=4; py_spec=(Python:2:1)
fi
t_start ompi 60 mpirun.openmpi --oversubscribe -np 2 "$P/mpi_mpmd_world.ompi" --app 0 --layout $layout \
  : -np 1 "$P/mpmd_world.ompi" --app 1 --layout $layout "${python_app[@]}"
t_wait ompi
check ompi $n C:0:2 Fortran:1:1 "${py_spec[@]}"
t_show ompi
t_log "ok: Open MPI, $n processes: MPI_COMM_WORLD is each program's own (C, Fortran mpif.h/use mpi/use mpi_f08$([ ${#python_app[@]} = 0 ] || echo ', Python mpi4py'))"

t_start mpich 60 mpirun.mpich -np 1 "$P/mpi_mpmd_world.mpich" --app 0 --layout 1,2 \
  : -np 2 "$P/mpmd_world.mpich" --app 1 --layout 1,2
t_wait mpich
check mpich 3 C:0:1 Fortran:1:2
t_show mpich
t_log "ok: MPICH, 3 processes: MPI_COMM_WORLD is each program's own (C, Fortran mpif.h/use mpi/use mpi_f08)"

t_start whole 60 env WAITIO_MPMD_WORLD=0 mpirun.mpich -np 1 "$P/mpi_mpmd_world.mpich" --app 0 --layout 1,1 --whole \
  : -np 1 "$P/mpmd_world.mpich" --app 1 --layout 1,1 --whole
t_wait whole
check whole 2 C:0:2 Fortran:1:2
t_show whole
t_log "ok: WAITIO_MPMD_WORLD=0: MPI_COMM_WORLD is the whole job (2 processes) in both programs"
t_pass
