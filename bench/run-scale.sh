#!/usr/bin/env bash
# run-scale.sh — start-up of plain processes (no MPI) at scale: for each N, 2 PBs of N processes
# on this host, each init, one checked 4 KiB exchange with the same rank of the other PB,
# finalize (bench/scale_plain.c). Prints per N: the launcher's spawning time (spawn_s), the wall
# time from the moment every process is there (they wait on a gate, loaded) to the last exit
# (wall_s) and from the first spawn (total_s), the slowest and the median waitio_init, the
# master's (PB 0 rank 0) maximum RSS and the median process's maximum RSS (both from wait4), and
# the workers' CPU time per process.
#
#   bench/run-scale.sh [BUILD_DIR] N_PER_PB...      e.g. bench/run-scale.sh build 250 1000
#
# BUILD_DIR (default: build) must hold a configured tree; waitio-scale-plain is built in it if
# missing. Raises the open-files limit (the master holds one connection per process during
# start-up) and checks the process limit. Each N is bounded by SCALE_TIMEOUT (default 120 s).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=build
if [ $# -gt 0 ] && [ -d "$1" ]; then build=$1; shift; fi
[ $# -gt 0 ] || set -- 250 1000
prog=$build/bench/waitio-scale-plain
if [ ! -x "$prog" ]; then
  cmake --build "$build" --target waitio-scale-plain -j"$(nproc)" >/dev/null || { echo "build of waitio-scale-plain failed"; exit 1; }
fi
timeout_s=${SCALE_TIMEOUT:-120}
max=0; for n in "$@"; do [ "$n" -gt "$max" ] && max=$n; done
need=$((2 * max + 256))
hard=$(ulimit -Hn)
if [ "$hard" != unlimited ] && [ "$hard" -lt "$need" ]; then
  echo "warning: the open-files hard limit $hard is below the $need the master needs" >&2
  ulimit -n "$hard"
else
  ulimit -n $((need > 65536 ? need : 65536)) 2>/dev/null || ulimit -n "$hard"
fi
ulimit -u unlimited 2>/dev/null || true
pidmax=$(cat /proc/sys/kernel/pid_max 2>/dev/null || echo 32768)
[ "$pidmax" -gt $((2 * max + 1000)) ] || echo "warning: kernel.pid_max=$pidmax is low for $((2 * max)) processes" >&2
unset WAITIO_PBID WAITIO_PB_RANK WAITIO_PB_SIZE WAITIO_RENDEZVOUS WAITIO_TRANSPORTS
export WAITIO_LOG=${WAITIO_LOG:-off}  # no progress notices from thousands of processes (failures: the program says)
export WAITIO_NPB=2 WAITIO_MASTER_HOST=127.0.0.1
# Every worker starts at once (the launcher's gate): on a machine with far fewer cores than
# processes, partners finish start-up seconds apart, and a connection to a partner still in
# start-up waits unaccepted; the default 5 s handshake limit would fail such pairs.
export WAITIO_HANDSHAKE_TIMEOUT=${WAITIO_HANDSHAKE_TIMEOUT:-60}
echo "# $(uname -n), $(nproc) cores, $(git -C "$here/.." rev-parse --short HEAD 2>/dev/null || echo '?'), build $build"
status=0
for n in "$@"; do
  export WAITIO_MASTER_PORT=$(python3 "$here/../tests/scripts/free_port.py" 2>/dev/null || echo $((15000 + RANDOM % 15000)))
  export WAITIO_KEY=scale-$(od -An -tx8 -N16 /dev/urandom | tr -d ' \n')
  timeout -k 5 "$timeout_s" "$prog" launch "$n" "$((timeout_s > 10 ? timeout_s - 5 : timeout_s))" || status=1
done
exit $status
