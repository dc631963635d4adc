#!/usr/bin/env python3
"""free_port.py — a TCP port free on 127.0.0.1, drawn below the kernel's ephemeral range.

A port the kernel picks for bind(0) lies in the ephemeral range, where any process's outgoing
connection may take it as its source port before the test's master binds it ("Address already
in use"). Tests and benchmarks share this one helper: run it to print a port
(tests/scripts/lib.sh t_free_port), or import pick() (tests/python/test_binding.py).
"""
import random
import socket


def pick():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    for _ in range(64):
        port = random.randrange(15000, max(low, 16001))
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    print(pick())
