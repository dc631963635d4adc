#!/usr/bin/env bash
# docs_snippets.sh — every ```c and ```fortran block of docs/*.md and README.md compiles, and every
# whole program runs (GUIDE: "every code snippet in docs/ compiles (and runs, if it is a whole
# program)"). tests/scripts/docs_snippets.py extracts the blocks.
#
# THE CONVENTION: put an HTML comment on the line(s) right above each ```c / ```fortran fence
# (blank lines between are fine); a block without one fails this test.
#   <!-- snippet: program [pbs=N] [mpi=openmpi|mpich] [np=P] [form=fixed] -->
#       A whole program: compiled, linked with libwaitio, and run; it must exit 0. pbs=N (default
#       1) runs it as N PBs through the test helpers (t_job); each PB is one process, or with
#       mpi=... P processes (np=P, default 1) under that MPI's mpirun, the program then built with
#       that MPI's compiler wrapper and linked with its MPI adapter. A program run with pbs=1 gets
#       WAITIO_NPB=1. Fortran programs are built with mpifort (mpi=..., default openmpi), so
#       include 'mpif.h' works, and see the module `use waitio`.
#   <!-- snippet: program shmem=N -->
#       An OpenSHMEM program: built with waitio-oshcc and run with waitio-oshrun -np N.
#   <!-- snippet: fragment [form=fixed] [prelude: DECLARATIONS] -->
#       Statements, compiled (not run) inside a function (C: after #include "waitio_mpi.h", which
#       brings in waitio.h; warnings are errors, except unused and uninitialised variables) or a
#       program (Fortran; its include/use lines first). The prelude declares what the fragment
#       uses without showing it (C: statements separated as in C; Fortran: separated by ';').
#       form=fixed: fixed-form Fortran, where a line past column 72 is an error.
#   <!-- snippet: skip because REASON -->   not compiled; the reason is required.
# timeout: 120
set -uo pipefail
source "$(dirname "$0")/lib.sh"
S=$WAITIO_SOURCE_DIR B=$WAITIO_BUILD_DIR
san=$(t_sanitize_flags)
moddir=$(ls -d "$B"/fortran/GNU-* 2>/dev/null | head -1)
python3 "$S/tests/scripts/docs_snippets.py" "$T_DIR" "$S"/docs/*.md "$S/README.md" >"$T_DIR/manifest" \
  || t_fail "the extractor failed"
link() { # MPI-or-empty: link flags for libwaitio (and the MPI's adapter)
  local a=()
  [ -n "$1" ] && a+=(-L"$B/adapters" -Wl,-rpath,"$B/adapters" -Wl,--no-as-needed -lwaitio_adapter_"$1" -Wl,--as-needed)
  echo "${a[*]} -L$B/src -Wl,-rpath,$B/src -lwaitio"
}
count=0 ran=0
while IFS=$'\t' read -r file lang kind opts where; do
  count=$((count + 1))
  case $kind in
    unmarked) t_fail "$where: a \`\`\`$lang block without a <!-- snippet: program|fragment|skip ... --> marker (see this test's header)" ;;
    skip-without-reason) t_fail "$where: 'snippet: skip' needs 'because REASON'" ;;
    skip) t_log "skip $where"; continue ;;
  esac
  declare -A o=([pbs]=1 [mpi]= [np]=1 [form]=free [shmem]=)
  [ "$opts" = - ] || for kv in $opts; do o[${kv%%=*}]=${kv#*=}; done
  src=$T_DIR/$file exe=$T_DIR/${file%.*}
  mpi=${o[mpi]}
  if [ "$lang" = c ]; then
    cc=${CC:-cc}
    [ -n "$mpi" ] && cc=mpicc.$mpi
    cflags=(-std=c11 -Wall -Wextra -Werror -I"$S/include" $san)
  else
    cc=mpifort.${mpi:-openmpi}
    cflags=(-Wall -Werror=line-truncation -I"$S/include" ${moddir:+-I"$moddir"} -J"$T_DIR" $san)
    [ "${o[form]}" = fixed ] && cflags+=(-ffixed-form -ffixed-line-length-72)
  fi
  if [ "$kind" = fragment ]; then
    [ "$lang" = c ] && cflags+=(-Wno-unused -Wno-uninitialized -Wno-maybe-uninitialized -Wno-unused-parameter)
    "$cc" "${cflags[@]}" -c "$src" -o "$exe.o" >"$exe.log" 2>&1 \
      || { cat -n "$src"; cat "$exe.log"; t_fail "$where: the fragment does not compile"; }
    t_log "ok: $where (fragment) compiles"
    continue
  fi
  if [ -n "${o[shmem]}" ]; then # OpenSHMEM: the wrapper, the launcher
    "$B/tools/waitio-oshcc" "${cflags[@]}" "$src" -o "$exe" >"$exe.log" 2>&1 \
      || { cat -n "$src"; cat "$exe.log"; t_fail "$where: the OpenSHMEM program does not build"; }
    t_start "run$file" 60 "$B/tools/waitio-oshrun" -np "${o[shmem]}" "$exe"
    t_expect_rc "run$file" 0
    ran=$((ran + 1))
    t_log "ok: $where (OpenSHMEM program, ${o[shmem]} PEs) builds and runs"
    unset o
    continue
  fi
  # shellcheck disable=SC2046
  "$cc" "${cflags[@]}" "$src" -o "$exe" $(link "$mpi") >"$exe.log" 2>&1 \
    || { cat -n "$src"; cat "$exe.log"; t_fail "$where: the program does not build"; }
  pb=("$exe")
  if [ -n "$mpi" ]; then
    if [ "$mpi" = openmpi ]; then pb=(mpirun.openmpi --oversubscribe -np "${o[np]}" "$exe"); else pb=(mpirun.mpich -np "${o[np]}" "$exe"); fi
  fi
  job=(--)
  for ((i = 0; i < o[pbs]; i++)); do
    [ $i -gt 0 ] && job+=(: --)
    job+=("${pb[@]}")
  done
  if [ "${o[pbs]}" = 1 ]; then
    t_start "run$file" 60 env WAITIO_NPB=1 "${pb[@]}"
    t_expect_rc "run$file" 0
  else
    t_run_job "run$file" 60 "${job[@]}"
  fi
  ran=$((ran + 1))
  t_log "ok: $where (program, ${o[pbs]} PB(s)) builds and runs"
  unset o
done <"$T_DIR/manifest"
[ "$count" -gt 0 ] || t_fail "no snippet found in docs/"
t_pass "$count snippets, $ran programs run"
