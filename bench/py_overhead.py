"""Per-call overhead of the Python binding: PB 0 posts isend+wait of 8 bytes N times while PB 1
receives them (irecv+wait). Prints the sender's time per isend+wait; compare with
bench/send_loop.c (the same loop in C) through bench/run-py-overhead.sh."""
import sys
import time

import numpy as np

import waitio

N = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
with waitio.session(30):
    w = waitio.universe()
    buf = np.zeros(1, dtype=np.float64)
    isend, irecv = w.Isend, w.Irecv
    if w.rank == 0:
        for _ in range(1000):
            isend(buf, 1, 1).wait()
        t0 = time.perf_counter()
        for _ in range(N):
            isend(buf, 1, 1).wait()
        dt = time.perf_counter() - t0
        irecv(buf, 1, 2).wait()
        print(f"python isend+wait 8 B: {dt / N * 1e9:.0f} ns per call")
    else:
        for _ in range(N + 1000):
            irecv(buf, 0, 1).wait()
        isend(buf, 0, 2).wait()
