#!/usr/bin/env bash
# shmem_names.sh — is every C routine of OpenSHMEM 1.5 there? Three checks, no process started:
#   1. every name of tests/data/openshmem-1.5-names.tsv (all 1.5 C routine names, typed, sized,
#      context and deprecated forms, made by tools/openshmem-names.py, which must still make
#      exactly that file) is a defined global function of libwaitio_shmem.so (exported) and of
#      libwaitio_shmem.a; the missing ones are printed by section of the specification and fail
#      the test;
#   2. the profiling interface (1.5 section 10): every routine's pshmem_<name> too (pstart_pes,
#      p_my_pe, ... for the bare names), in both libraries;
#   3. shmem_names.c calls every C11 type-generic routine of 1.5 (openshmem-names.py --generics)
#      with several types, with and without a context; it compiles with -std=c11 -Werror and
#      links against the library.
# timeout: 120
set -uo pipefail
source "$(dirname "$0")/lib.sh"
cov=$WAITIO_SOURCE_DIR/tools/shmem-coverage.sh
lib=$WAITIO_BUILD_DIR/src/libwaitio_shmem
for f in "$lib.so" "$lib.a" "$WAITIO_BUILD_DIR/tools/waitio-oshcc"; do
  [ -e "$f" ] || t_fail "$f is missing (cmake --build $WAITIO_BUILD_DIR)"
done
fails=()

# 1. the routine names (the committed list first: it must be what the generator makes)
python3 "$WAITIO_SOURCE_DIR/tools/openshmem-names.py" |
  cmp -s - "$WAITIO_SOURCE_DIR/tests/data/openshmem-1.5-names.tsv" ||
  fails+=("tests/data/openshmem-1.5-names.tsv differs from what tools/openshmem-names.py makes")
bash "$cov" --build "$WAITIO_BUILD_DIR" --table
if ! bash "$cov" --build "$WAITIO_BUILD_DIR" --missing >"$T_DIR/missing.txt"; then
  cat "$T_DIR/missing.txt"
  fails+=("$(tail -1 "$T_DIR/missing.txt") of OpenSHMEM 1.5")
else
  t_log "all $(wc -l <"$WAITIO_SOURCE_DIR/tests/data/openshmem-1.5-names.tsv") routine names of OpenSHMEM 1.5 are defined in $lib.so and .a"
fi

# 2. the profiling names: every routine's pshmem_<name> too
if bash "$cov" --build "$WAITIO_BUILD_DIR" --pshmem >"$T_DIR/pmissing.txt"; then
  t_log "every routine also has its pshmem_ profiling name"
else
  cat "$T_DIR/pmissing.txt"
  fails+=("profiling names: $(tail -1 "$T_DIR/pmissing.txt")")
fi

# 3. the C11 generic selections. First: shmem_names.c calls each generic of the list
#    (openshmem-names.py --generics); its macros paste names, so look after preprocessing with
#    an empty shmem.h (the generics stay calls). Then compile and link (the program is not run).
mkdir -p "$T_DIR/stub" && : >"$T_DIR/stub/shmem.h"
cc -std=c11 -E -P -I"$T_DIR/stub" "$(dirname "$0")/shmem_names.c" |
  grep -oE '\bshmem_[a-z_]+ ?\(' | tr -d '( ' | sort -u >"$T_DIR/called.txt"
python3 "$WAITIO_SOURCE_DIR/tools/openshmem-names.py" --generics | cut -f1 | sort >"$T_DIR/generics.txt"
uncalled=$(comm -23 "$T_DIR/generics.txt" "$T_DIR/called.txt" | tr '\n' ' ')
[ -z "$uncalled" ] || fails+=("shmem_names.c does not call the C11 generics $uncalled")
[ -s "$T_DIR/generics.txt" ] || fails+=("openshmem-names.py --generics printed nothing")
cc=("$WAITIO_BUILD_DIR/tools/waitio-oshcc" -std=c11 -Wall -Wextra -Werror)
read -ra san <<<"$(t_sanitize_flags)"
if ! "${cc[@]}" "${san[@]}" -c "$(dirname "$0")/shmem_names.c" -o "$T_DIR/shmem_names.o" \
    >"$T_DIR/cc.txt" 2>&1; then
  grep -E 'error' "$T_DIR/cc.txt" | sed -E 's/^.*shmem_names\.c:[0-9]+:[0-9]+: //' | sort |
    uniq -c | sort -rn | head -60
  fails+=("the C11 generic calls of shmem_names.c do not compile ($(grep -c 'error' "$T_DIR/cc.txt") error lines)")
elif ! "${cc[@]}" "${san[@]}" "$T_DIR/shmem_names.o" -o "$T_DIR/shmem_names" >"$T_DIR/ld.txt" 2>&1; then
  grep -oE "undefined reference to .[A-Za-z0-9_]+" "$T_DIR/ld.txt" | sed -E 's/.* .//' | sort -u \
    >"$T_DIR/undef.txt"
  echo "routines the C11 generics select that the library lacks: $(tr '\n' ' ' <"$T_DIR/undef.txt")"
  [ -s "$T_DIR/undef.txt" ] || cat "$T_DIR/ld.txt"
  fails+=("the C11 generic calls of shmem_names.c do not link ($(wc -l <"$T_DIR/undef.txt") routines undefined)")
else
  t_log "every C11 generic routine of OpenSHMEM 1.5 compiles and links with its types, context forms included"
fi

[ ${#fails[@]} -eq 0 ] || t_fail "$(printf '%s; ' "${fails[@]}")"
t_pass "OpenSHMEM 1.5 C API complete"
