#!/usr/bin/env bash
# build.sh — builds the libFuzzer harnesses (clang, -fsanitize=fuzzer,address,undefined) from the
# library's sources into DIR. Usage: tests/fuzz/build.sh DIR
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$1
mkdir -p "$out"
srcs=$(ls "$root"/src/core/*.c "$root"/src/boot/*.c "$root"/src/transport/*.c "$root"/src/coll/*.c "$root"/src/mpi/*.c "$root"/src/rma/*.c)
flags="-std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -I$root/include -I$root/src"
for h in frame register handshake segment; do
  clang $flags "$root/tests/fuzz/fuzz_$h.c" $srcs -o "$out/fuzz_$h" -lcrypto
done
