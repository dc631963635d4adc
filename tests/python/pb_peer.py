"""Python PB of the cross-language test (see tests/progs/mpi_pypeer.c): the last universe rank.
Echoes every C rank's array doubled (NumPy, zero-copy), joins the Allreduce and roots a Bcast."""
import sys

import numpy as np

import waitio

with waitio.session(timeout=60):
    world = waitio.universe()
    me, n = world.rank, world.size
    assert me == n - 1, f"the Python PB must be last, got rank {me} of {n}"
    reqs = []
    bufs = {}
    for r in range(n - 1):
        bufs[r] = np.empty(1000 + 37 * r, dtype=np.float64)
        reqs.append(world.Irecv(bufs[r], source=r, tag=100 + r))
    waitio.waitall(reqs)
    for r, a in bufs.items():
        expect = r * 1e6 + np.arange(a.size, dtype=np.float64)
        if not np.array_equal(a, expect):
            sys.exit(f"pb_peer: wrong data from rank {r}")
        a *= 2
    waitio.waitall([world.Isend(a, r, 200 + r) for r, a in bufs.items()])
    total = np.zeros(1, dtype=np.int64)
    world.Allreduce(np.array([me], dtype=np.int64), total, waitio.SUM)
    assert total[0] == n * (n - 1) // 2, total
    b = np.arange(64, dtype=np.int32) * 7
    world.Bcast(b, root=me)
    print(f"pb_peer ok: echoed {n - 1} C ranks, allreduce {total[0]}")
