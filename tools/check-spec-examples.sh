#!/usr/bin/env bash
# check-spec-examples.sh — builds the OpenSHMEM specification's C examples exactly as they are
# (the .c files of a directory, never edited) with WaitIO's waitio-oshcc and runs each in four
# layouts, as a new OpenSHMEM user would try them:
#
#   2 PEs as one PB        waitio-oshrun -np 2 ./ex
#   4 PEs as one PB        waitio-oshrun -np 4 ./ex
#   2 PEs as two PBs       waitiorun -- waitio-oshrun -np 1 ./ex : -- waitio-oshrun -np 1 ./ex
#   4 PEs as two PBs       the same with -np 2 (2 + 2)
# (the two-PB layouts are separately launched PBs coupled by waitiorun, over tcp)
#
# and prints a Markdown table (example, builds?, the four layouts: pass / fail / timeout / n/a)
# with a summary. The examples are not part of WaitIO (they stay outside the tree); the unit
# tests written from them are tests/progs/shmem_spec_*.c.
#
#   tools/check-spec-examples.sh [-b BUILD_DIR] [-t SECONDS] [-o TABLE.md] [-w WORKDIR] DIR
#
# A run passes when its exit status is the expected one (0; 1 for shmem_global_exit_example.c,
# which calls shmem_global_exit(EXIT_FAILURE) because its input.txt is absent), nothing was
# written to stderr, and stdout has no "ERROR"/"FAIL" (the examples' own checks print those).
# Files without a main() (fragments the specification shows, e.g. a profiling wrapper) are only
# compiled (-c); their runs are n/a. OpenMP examples (#pragma omp / omp.h) get -fopenmp.
# An example that addresses more PEs than a layout has (shmem_fence/quiet_example use PE 2,
# shmem_team_split_2D exits unless it has 12) is n/a there.
# Every run is bounded (-t, default 20 s; a hang is "timeout") and runs in a scratch directory.
# Exit status: 0 when every example built and every run passed, 1 otherwise.
set -uo pipefail
here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
build=${WAITIO_BUILD_DIR:-$here/../build}
secs=20 table="" work=""
while [ $# -gt 0 ]; do
  case $1 in
    -b) build=$2; shift 2 ;;
    -t) secs=$2; shift 2 ;;
    -o) table=$2; shift 2 ;;
    -w) work=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "check-spec-examples: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ $# -eq 1 ] && [ -d "$1" ] || { echo "usage: $0 [-b BUILD_DIR] [-t SECONDS] [-o TABLE.md] [-w WORKDIR] DIR" >&2; exit 2; }
src=$(cd "$1" && pwd)
build=$(cd "$build" 2>/dev/null && pwd) || { echo "check-spec-examples: no build directory" >&2; exit 2; }
oshcc=$build/tools/waitio-oshcc oshrun=$build/tools/waitio-oshrun wrun=$build/tools/waitiorun
for t in "$oshcc" "$oshrun" "$wrun"; do
  [ -x "$t" ] || { echo "check-spec-examples: $t is not built" >&2; exit 2; }
done
if [ -z "$work" ]; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/spec-examples.XXXXXX")
  trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"
# nothing of a surrounding instance may leak into the runs
unset WAITIO_PBID WAITIO_NPB WAITIO_MASTER_HOST WAITIO_MASTER_PORT WAITIO_KEY WAITIO_KEY_FILE \
      WAITIO_RENDEZVOUS WAITIO_PB_RANK WAITIO_PB_SIZE WAITIO_TRANSPORTS

# the PEs an example needs (it addresses PE 2, or builds a 3x4 grid); fewer: the run is n/a
min_pes() {
  case $1 in
    shmem_fence_example|shmem_quiet_example) echo 3 ;;
    shmem_team_split_2D) echo 12 ;;
    *) echo 1 ;;
  esac
}

expected_rc() {
  case $1 in
    shmem_global_exit_example) echo 1 ;;
    *) echo 0 ;;
  esac
}

# run NAME LAYOUT EXE: prints pass, fail or timeout; logs in $work/NAME.LAYOUT.{out,err}
run() {
  local name=$1 layout=$2 exe=$3 rc dir cmd=()
  dir=$work/$name.$layout.d
  rm -rf "$dir" && mkdir -p "$dir"
  case $layout in
    1pb2) cmd=("$oshrun" -np 2 "$exe") ;;
    1pb4) cmd=("$oshrun" -np 4 "$exe") ;;
    2pb2) cmd=(env WAITIO_TRANSPORTS=tcp "$wrun" -q -- "$oshrun" -np 1 "$exe" : -- "$oshrun" -np 1 "$exe") ;;
    2pb4) cmd=(env WAITIO_TRANSPORTS=tcp "$wrun" -q -- "$oshrun" -np 2 "$exe" : -- "$oshrun" -np 2 "$exe") ;;
  esac
  (cd "$dir" && timeout -k 3 "$secs" "${cmd[@]}" >"$work/$name.$layout.out" 2>"$work/$name.$layout.err" </dev/null)
  rc=$?
  echo "$rc" >"$work/$name.$layout.rc"
  case $rc in
    124|137) echo timeout; return ;;
  esac
  if [ "$rc" = "$(expected_rc "$name")" ] && ! grep -qE 'ERROR|FAIL' "$work/$name.$layout.out" &&
     { [ "$rc" != 0 ] || [ ! -s "$work/$name.$layout.err" ]; }; then
    echo pass
  else
    echo "fail"
  fi
}

layouts=(1pb2 1pb4 2pb2 2pb4)
rows=() nbuilt=0 nfrag=0 nex=0 npass=0 nruns=0 ntimeout=0 nna=0
for f in "$src"/*.c; do
  [ -e "$f" ] || continue
  name=$(basename "$f" .c)
  nex=$((nex + 1))
  flags=(-O2)
  grep -qE '#[[:space:]]*pragma[[:space:]]+omp|<omp\.h>' "$f" && flags+=(-fopenmp)
  if grep -qE '(^|[^_[:alnum:]])main[[:space:]]*\(' "$f"; then
    if "$oshcc" "${flags[@]}" "$f" -o "$work/$name" -lm >"$work/$name.build.log" 2>&1; then
      built=yes
      nbuilt=$((nbuilt + 1))
    else
      built=no
    fi
  else
    if "$oshcc" "${flags[@]}" -c "$f" -o "$work/$name.o" >"$work/$name.build.log" 2>&1; then
      built="yes (-c, no main)"
      nbuilt=$((nbuilt + 1))
    else
      built="no (-c, no main)"
    fi
    nfrag=$((nfrag + 1))
  fi
  row="| $name | $built"
  for l in "${layouts[@]}"; do
    if [ "$built" = yes ] && [ "${l: -1}" -lt "$(min_pes "$name")" ]; then
      v="n/a (needs $(min_pes "$name") PEs)"
      nna=$((nna + 1))
    elif [ "$built" = yes ]; then
      v=$(run "$name" "$l" "$work/$name")
      nruns=$((nruns + 1))
      [ "$v" = pass ] && npass=$((npass + 1))
      [ "$v" = timeout ] && ntimeout=$((ntimeout + 1))
    elif [[ $built == no* && $built != *"no main"* ]]; then
      v="-"
    else
      v="n/a"
    fi
    row+=" | $v"
  done
  rows+=("$row |")
  echo "$row |" >&2
done
programs=$((nex - nfrag))
{
  echo "| example | builds? | 2 PEs 1 PB | 4 PEs 1 PB | 2 PEs 2 PBs | 4 PEs 2 PBs |"
  echo "|---|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
  echo
  echo "Summary: $nex examples ($programs programs, $nfrag fragments without main); $nbuilt build;" \
       "$npass of $((programs * 4 - nna)) runs pass ($nruns runs made, $ntimeout timeouts; $nna n/a: too few PEs)."
} >"$work/table.md"
cat "$work/table.md"
[ -n "$table" ] && cp "$work/table.md" "$table"
[ "$nbuilt" = "$nex" ] && [ "$npass" = "$((programs * 4 - nna))" ]
