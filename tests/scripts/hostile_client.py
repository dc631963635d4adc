"""Attacks every listening TCP port of the given processes with hostile connections (used by
hostile_ports.sh). Prints one line per attempt and a summary; exits non-zero if a hostile
connection was kept open by its target beyond the expected time."""
import concurrent.futures
import os
import socket
import struct
import subprocess
import sys
import time


def hdr(ftype, length=0, seq=0, magic=0x4F495457, version=2, src=0):
    return struct.pack("<IBBHIIIIQQQQ", magic, version, ftype, 0, seq, 0, 0, src, 0, length, 0, 0)


def ports_of(pids):
    out = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True).stdout
    ports = set()
    for line in out.splitlines():
        if any(f"pid={p}," in line for p in pids):
            ports.add(int(line.split()[3].rsplit(":", 1)[1]))
    return sorted(ports)


def hello(claim_id, target_id):
    body = os.urandom(32) + struct.pack("<IIII", claim_id, target_id, 1 << 16, 1 << 20)
    return hdr(1, len(body), src=claim_id) + body


ATTACKS = {
    "random-bytes": lambda: os.urandom(4096),
    "truncated-header": lambda: hdr(1, 48)[:30],
    "wrong-magic": lambda: hdr(1, 48, magic=0xDEADBEEF) + bytes(48),
    "wrong-version": lambda: hdr(1, 48, version=7) + bytes(48),
    "oversized-length": lambda: hdr(4, 1 << 40),
    "data-before-auth": lambda: hdr(4, 8) + b"payload!",
    "wrong-sequence": lambda: hdr(1, 48, seq=9) + bytes(48),
    "hello-wrong-key": "handshake",
    "replayed-hello": "replay",
    "slow-loris": "slow",
}


def attack(port, name, recorded):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    what = ATTACKS[name]
    try:
        if what == "handshake":
            s.sendall(hello(1, 0))
            ack = s.recv(4096)                       # HELLO_ACK (or closed: wrong target id)
            if ack:
                s.sendall(hdr(3, 32, seq=1) + os.urandom(32))   # a proof made without the key
        elif what == "replay":
            s.sendall(recorded)
        elif what == "slow":
            s.sendall(hdr(1, 48)[:10])
            s.settimeout(15)
        else:
            s.sendall(what())
        s.settimeout(max(s.gettimeout() or 5, 5))
        t0 = time.monotonic()
        while True:
            data = s.recv(4096)
            if not data:
                return True, time.monotonic() - t0
    except (ConnectionResetError, BrokenPipeError):
        return True, 0.0
    except socket.timeout:
        return False, None
    finally:
        s.close()


def main():
    pids = sys.argv[1:]
    ports = []
    for _ in range(100):
        ports = ports_of(pids)
        if ports:
            break
        time.sleep(0.1)
    if not ports:
        sys.exit("hostile_client: no listening ports found")
    recorded = hello(1, 0)
    tried = rejected = 0
    # Every port belongs to another process: the ports are attacked at once, each port's attacks
    # one after another, so that each target still sees one hostile connection at a time (its
    # handshake timeout, not its handshake table, closes the slow ones) and the run takes one
    # port's time (two handshake timeouts), not the sum over the ports.
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(ports)) as pool:
        results = pool.map(lambda port: [(name, attack(port, name, recorded)) for name in ATTACKS], ports)
        for port, outcomes in zip(ports, results):
            for name, (ok, dt) in outcomes:
                tried += 1
                rejected += ok
                print(f"port {port} {name}: {'closed by the target' if ok else 'STILL OPEN'}"
                      + (f" after {dt:.1f} s" if ok and dt else ""), flush=True)
    print(f"hostile connections: {tried} tried on {len(ports)} ports, {rejected} rejected")
    sys.exit(0 if tried == rejected else 1)


if __name__ == "__main__":
    main()
