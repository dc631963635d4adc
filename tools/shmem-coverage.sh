#!/usr/bin/env bash
# shmem-coverage.sh — how much of OpenSHMEM 1.5's C API libwaitio_shmem provides, per section of
# the specification, from the list of every 1.5 routine name (tests/data/openshmem-1.5-names.tsv,
# made by tools/openshmem-names.py). A name counts as present when it is a defined global function
# of both the shared and the static library: the shared one must export it (nm -D) and the static
# one must hold it too, or a program linked with WAITIO_OSHCC_STATIC=1 would not link.
#
#   tools/shmem-coverage.sh [--build DIR] [--names FILE] [--table | --missing | --pshmem]
#
#   --table    (default) a Markdown table: section | routines in 1.5 | present | missing
#   --missing  the missing names, grouped by section; exit status 1 when one is missing
#   --pshmem   the same as --missing for the profiling names (pshmem_<name>; pstart_pes,
#              p_my_pe, p_num_pes, pshmalloc, pshfree, pshmemalign, pshrealloc for the names
#              without the shmem_ prefix), as OpenSHMEM 1.5 section 10 asks
# DIR is the build directory (default $WAITIO_BUILD_DIR, else ./build of the source tree).
set -euo pipefail
src=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
build=${WAITIO_BUILD_DIR:-$src/build}
names=$src/tests/data/openshmem-1.5-names.tsv
mode=table
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=$2; shift 2 ;;
    --names) names=$2; shift 2 ;;
    --table|--missing|--pshmem) mode=${1#--}; shift ;;
    *) echo "usage: $0 [--build DIR] [--names FILE] [--table|--missing|--pshmem]" >&2; exit 2 ;;
  esac
done
so=$build/src/libwaitio_shmem.so
ar=$build/src/libwaitio_shmem.a
for f in "$so" "$ar" "$names"; do
  [ -e "$f" ] || { echo "$0: $f is missing" >&2; exit 2; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/shmem-coverage.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# defined global functions (T), weak ones (W: the profiling interface's shmem_ wrappers) and
# indirect ones (i); a symbol defined in several archive members counts once
syms() { awk 'NF >= 3 && ($2 == "T" || $2 == "W" || $2 == "i") { print $3 }' | sort -u; }
nm -D --defined-only "$so" | syms >"$tmp/so"
nm -g --defined-only "$ar" 2>/dev/null | syms >"$tmp/ar"
comm -12 "$tmp/so" "$tmp/ar" >"$tmp/both"

# the names to look for, as "symbol<TAB>section"
if [ "$mode" = pshmem ]; then
  # every profiling name is the routine's name with a p in front
  awk -F'\t' '{ print "p" $1 "\t" $2 }' "$names" >"$tmp/want"
else
  cp "$names" "$tmp/want"
fi
# symbol<TAB>section<TAB>1|0
awk -F'\t' 'NR == FNR { have[$1] = 1; next } { print $1 "\t" $2 "\t" ($1 in have ? 1 : 0) }' \
  "$tmp/both" "$tmp/want" >"$tmp/result"

case $mode in
  table)
    echo "| Section of OpenSHMEM 1.5 | Routines in 1.5 | Present | Missing |"
    echo "| --- | ---: | ---: | ---: |"
    awk -F'\t' '{ if (!($2 in n)) order[++k] = $2; n[$2]++; p[$2] += $3; tn++; tp += $3 }
      END { for (i = 1; i <= k; i++) { s = order[i]
              printf "| %s | %d | %d | %d |\n", s, n[s], p[s], n[s] - p[s] }
            printf "| **All** | **%d** | **%d** | **%d** |\n", tn, tp, tn - tp }' "$tmp/result"
    ;;
  missing|pshmem)
    awk -F'\t' '$3 == 0 { if (!($2 in m)) order[++k] = $2; m[$2] = m[$2] " " $1; c[$2]++; t++ }
      END { for (i = 1; i <= k; i++) { s = order[i]; printf "%s: %d missing:%s\n", s, c[s], m[s] }
            printf "%d of %d names missing\n", t, NR; exit(t > 0) }' "$tmp/result"
    ;;
esac
