#!/usr/bin/env bash
# run-py-overhead.sh — Python binding overhead: the same isend+wait loop of 8-byte messages
# from Python and from C, back to back in one run. Usage: bench/run-py-overhead.sh [build] [N]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
n=${2:-200000}
cc -std=c11 -D_GNU_SOURCE -O2 -I"$root/include" "$here/send_loop.c" -o "$build/send_loop" \
  -L"$build/src" -Wl,-rpath,"$build/src" -lwaitio
run() {
  local port
  port=$(python3 "$here/../tests/scripts/free_port.py")
  export WAITIO_NPB=2 WAITIO_MASTER_HOST=127.0.0.1 WAITIO_MASTER_PORT=$port WAITIO_KEY=ovh-$(od -An -tx8 -N16 /dev/urandom | tr -d ' \n')
  WAITIO_PBID=1 timeout 120 "$@" >/dev/null & local pid=$!
  WAITIO_PBID=0 timeout 120 "$@"
  wait $pid
}
c=$(run "$build/send_loop" "$n")
py=$(run python3 "$here/py_overhead.py" "$n")
echo "$c"
echo "$py"
cns=$(echo "$c" | sed -n 's/.*: \([0-9]*\) ns.*/\1/p')
pns=$(echo "$py" | sed -n 's/.*: \([0-9]*\) ns.*/\1/p')
echo "Python adds $((pns - cns)) ns per isend+wait (goal: < 1000 ns)"
