#!/usr/bin/env bash
# core_garbage_master.sh — hostile input at start-up: while the master waits for PB 1, connections
# to its port send random bytes, a truncated header, a header with a wrong magic, a HELLO with an
# oversized length, and a silent connection. Each is closed with a logged reason; the job then
# completes with every byte checked.
# timeout: 60
set -euo pipefail
prog=$TEST_PROGS/core_ring
dir=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done; rm -rf "$dir"; }
trap cleanup EXIT
port=$(python3 "$(dirname "$0")/free_port.py")
export WAITIO_KEY=garbage-$(od -An -tx8 -N16 /dev/urandom | tr -d ' \n') WAITIO_NPB=2 WAITIO_MASTER_PORT=$port WAITIO_MASTER_HOST=127.0.0.1
WAITIO_LOG=warn WAITIO_PBID=0 timeout 50 "$prog" 5 40 >"$dir/pb0" 2>&1 &
pids+=($!)
python3 - "$port" <<'PY'
import os, socket, struct, sys, time
port = int(sys.argv[1])
def conn():
    for _ in range(100):
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=2)
        except OSError:
            time.sleep(0.05)
    raise SystemExit("master never listened")
def hdr(magic=0x4f495457, version=2, ftype=1, seq=0, length=48):
    return struct.pack("<IBBHIIIIQQQQ", magic, version, ftype, 0, seq, 0, 0, 0, 0, length, 0, 0)
payloads = [os.urandom(4096), hdr()[:20], hdr(magic=0xdeadbeef), hdr(length=1 << 40),
            hdr(version=9), hdr(ftype=4, length=10) + b"x" * 10, hdr(seq=5)]
socks = []
for p in payloads:
    s = conn(); s.sendall(p); socks.append(s)
silent = conn()   # slow-loris: says nothing
time.sleep(0.5)
closed = 0
for s in socks:
    try:
        s.settimeout(3)
        if s.recv(1) == b"":
            closed += 1
    except (ConnectionResetError, socket.timeout):
        closed += 1 if not isinstance(sys.exc_info()[1], socket.timeout) else 0
print(f"garbage connections closed by the master: {closed} of {len(socks) - 1} (truncated one waits)")
if closed < len(socks) - 1:
    raise SystemExit("master kept a garbage connection open")
PY
WAITIO_PBID=1 timeout 50 "$prog" 5 40 >"$dir/pb1" 2>&1 &
pids+=($!)
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done
pids=()
cat "$dir/pb0" "$dir/pb1"
[ $status -eq 0 ] || { echo "FAIL: the job failed"; exit 1; }
grep -q "core_ring ok: 2 processes" "$dir/pb0" || { echo "FAIL: no success line"; exit 1; }
n=$(grep -c "closing connection" "$dir/pb0" || true)
[ "$n" -ge 6 ] || { echo "FAIL: expected >= 6 logged rejections, saw $n"; exit 1; }
echo "PASS"
