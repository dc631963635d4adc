"""NumPy arrays as the binding's buffers, checked with mypy --strict against its stubs
(python_sdist.sh, with NumPy installed): NumPy's own stubs declare the buffer protocol only for
Python 3.12 and later, and the binding's stubs must accept arrays before that too."""
import numpy as np

import waitio


def arrays(world: waitio.Comm) -> float:
    field = np.zeros(1000)
    world.Send(field, dest=0, tag=1)
    req: waitio.Request = world.Irecv(field[10:], source=0, tag=1)
    req.wait()
    counts = np.ones(4, dtype=np.int32)
    total = np.empty(4, dtype=np.int32)
    world.Allreduce(counts, total, waitio.SUM)
    world.Bcast(field, root=0)
    biggest = world.reduce(field, op=waitio.MAX, root=0)
    return float(total.sum()) + (float(biggest.max()) if biggest is not None else 0.0)
