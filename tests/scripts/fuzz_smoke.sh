#!/usr/bin/env bash
# fuzz_smoke.sh — builds the libFuzzer harnesses (frame decoder, start-up parsers, a whole
# accepted connection from a stranger through the handshake, an authenticated connection whose
# frames reach the engine, and the file transport's segment and record files) and runs each for
# WAITIO_FUZZ_SECONDS (default 12: the five share the minute the three had) from the seed corpus,
# one harness per core at a time.
# A crash, leak or sanitizer report fails the test; the reproducer is kept
# in the build directory. Longer runs by hand: tests/fuzz/build.sh DIR, then DIR/fuzz_NAME CORPUS.
# timeout: 300
set -euo pipefail
secs=${WAITIO_FUZZ_SECONDS:-12}
out=$WAITIO_BUILD_DIR/fuzz
if ! echo 'int LLVMFuzzerTestOneInput(const char*d,long n){(void)d;(void)n;return 0;}' |
     clang -x c -fsanitize=fuzzer - -o /tmp/wio-fuzz-probe.$$ 2>/dev/null; then
  echo "SKIP: clang with libFuzzer is not installed (scripts/install-deps.sh installs it)"; exit 0
fi
rm -f /tmp/wio-fuzz-probe.$$
bash "$WAITIO_SOURCE_DIR/tests/fuzz/build.sh" "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# fuzz_one H: one harness for $secs from its seed corpus; 0 when it found nothing
fuzz_one() {
  local h=$1 log=$out/fuzz_$1.log
  cp -r "$WAITIO_SOURCE_DIR/tests/fuzz/corpus/$h" "$work/$h"
  (cd "$out" && ./fuzz_$h -max_total_time="$secs" -max_len=4096 -print_final_stats=1 \
     -artifact_prefix="$out/crash-$h-" "$work/$h" >"$log" 2>&1)
}
# The harnesses are single-threaded: as many run at once as there are cores (ctest gives this
# test the whole machine, tests/CMakeLists.txt), each for its full time on a core of its own.
harnesses=(frame register handshake session segment)
declare -A pid=()
status=0
for ((i = 0; i < ${#harnesses[@]}; i += $(nproc))); do
  for h in "${harnesses[@]:i:$(nproc)}"; do fuzz_one "$h" & pid[$h]=$!; done
  for h in "${harnesses[@]:i:$(nproc)}"; do
    log=$out/fuzz_$h.log
    if wait "${pid[$h]}"; then
      echo "fuzz_$h: $(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | awk '{print $2}') executions, no crash"
    else
      echo "FAIL: fuzz_$h found a crash:"; tail -30 "$log"; status=1
    fi
  done
done
exit $status
