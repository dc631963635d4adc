"""Python side of the tracing test (tests/progs/mpi_trace_job.c has the schedule, which this follows
exactly): sends and receives its part of every round with NumPy buffers, checks every byte, joins
the Allreduce every 5th round, and prints what it sent to every PB."""
import sys

import numpy as np

import waitio

M = (1 << 64) - 1
MAXSIZE = 300000


def mix(x):
    x = (x + 0x9E3779B97F4A7C15) & M
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M
    return x ^ (x >> 31)


def schedule(seed, rnd, sender, n):
    r = mix((seed * 1000003 + rnd * 1009 + sender) & M)
    return (sender + 1 + r % (n - 1)) % n, (r >> 20) % MAXSIZE, 1000 + (r >> 40) % 50


def pattern(size, rnd, sender):
    return ((np.arange(size, dtype=np.uint64) * 31 + rnd * 7 + sender) % 256).astype(np.uint8)


def main():
    seed, rounds = int(sys.argv[1]), int(sys.argv[2])
    with waitio.session(timeout=60):
        world = waitio.universe()
        me, n = world.rank, world.size
        pb_of = [world.member(r)[0] for r in range(n)]
        npb = max(pb_of) + 1
        mypb = pb_of[me]
        msgs, nbytes = [0] * npb, [0] * npb
        for rnd in range(rounds):
            reqs, bufs = [], {}
            for s in range(n):
                dest, size, tag = schedule(seed, rnd, s, n)
                if dest == me and s != me:
                    bufs[s] = np.empty(size, dtype=np.uint8)
                    reqs.append(world.Irecv(bufs[s], source=s, tag=tag))
            dest, size, tag = schedule(seed, rnd, me, n)
            out = pattern(size, rnd, me)
            reqs.append(world.Isend(out, dest, tag))
            msgs[pb_of[dest]] += 1
            nbytes[pb_of[dest]] += size
            waitio.waitall(reqs)
            for s, buf in bufs.items():
                if not np.array_equal(buf, pattern(buf.size, rnd, s)):
                    sys.exit(f"trace_job.py: round {rnd}: wrong data from rank {s}")
            if rnd % 5 == 4:
                total = np.zeros(1, dtype=np.int64)
                world.Allreduce(np.array([rnd + me], dtype=np.int64), total, waitio.SUM)
                if total[0] != rnd * n + n * (n - 1) // 2:
                    sys.exit(f"trace_job.py: round {rnd}: allreduce gave {total[0]}")
        for pb in range(npb):
            print(f"trace_job sent: PB {mypb} -> PB {pb}: {msgs[pb]} messages {nbytes[pb]} bytes", flush=True)


main()
