#!/usr/bin/env bash
# build.sh — builds the libFuzzer harnesses (clang, -fsanitize=fuzzer,address,undefined) from the
# library's sources into DIR: the library is compiled once (an archive), then linked into each
# harness.
# Usage: tests/fuzz/build.sh DIR
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$1
mkdir -p "$out/obj"
rm -f "$out"/obj/*.o # every object is rebuilt: none of a source that is gone may be linked
common="-std=c11 -D_GNU_SOURCE -g -O1 -fno-sanitize-recover=undefined -I$root/include -I$root/src"
# without the ucx transport (as a build without UCX): the harnesses need neither it nor its library
ls "$root"/src/core/*.c "$root"/src/boot/*.c "$root"/src/transport/*.c "$root"/src/coll/*.c "$root"/src/mpi/*.c "$root"/src/rma/*.c "$root"/src/gpu/*.c |
  grep -v '/src/transport/ucx[^/]*\.c$' |
  xargs -P "$(nproc)" -I{} sh -c 'o="$1/obj/$(echo "$2" | tr / _).o"; clang $3 -fsanitize=fuzzer-no-link,address,undefined -c "$2" -o "$o"' _ "$out" {} "$common"
# an archive, as the static library: a harness links only the objects it needs (not, e.g., code
# that refers to an MPI adapter's symbols)
rm -f "$out/libwio.a"
ar rcs "$out/libwio.a" "$out"/obj/*.o
for h in frame register handshake session segment; do
  clang $common -fsanitize=fuzzer,address,undefined "$root/tests/fuzz/fuzz_$h.c" "$out/libwio.a" -o "$out/fuzz_$h" -lcrypto -ldl
done
