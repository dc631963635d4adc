"""Two Python PBs for the binding's threading and signal tests. Usage: pb_threads.py MODE
  gil     PB 1's main thread waits in Recv for a reply that PB 0 sends 1 s after it got a ping;
          the ping is sent by a second thread of PB 1 *while* the main thread is blocked (so
          WaitIO calls from another thread get through), and a third thread counts. The
          counter thread's samples must cover the blocked Recv (the GIL was released).
  sigint  PB 1 blocks in Recv for a message that never comes; the test sends it SIGINT, which
          must raise KeyboardInterrupt in Recv; PB 1 then tells PB 0 and both exit 0.
"""
import sys
import threading
import time

import waitio


def gil(world):
    if world.rank == 0:
        ping = bytearray(4)
        world.Recv(ping, source=1, tag=1)
        assert ping == b"ping", ping
        time.sleep(1.0)
        world.Send(b"pong" * 256, dest=1, tag=2)
        print("gil ok on rank 0")
        return
    samples = []  # (time, count) every 2000 increments
    stop = threading.Event()

    def count():
        n = 0
        while not stop.is_set():
            n += 1
            if n % 2000 == 0:
                samples.append((time.monotonic(), n))

    def send_ping():
        time.sleep(0.2)
        world.Send(b"ping", dest=0, tag=1)  # while the main thread waits in Recv

    counter = threading.Thread(target=count)
    pinger = threading.Thread(target=send_ping)
    counter.start()
    time.sleep(0.05)
    pinger.start()
    reply = bytearray(1024)
    t0 = time.monotonic()
    src, tag, nbytes = world.Recv(reply, source=0, tag=2)
    t1 = time.monotonic()
    stop.set()
    counter.join()
    pinger.join()
    assert (src, tag, nbytes) == (0, 2, 1024) and reply == b"pong" * 256
    inside = [t for t, _ in samples if t0 + 0.1 < t < t1 - 0.1]
    covered = (max(inside) - min(inside)) / (t1 - t0 - 0.2) if len(inside) > 1 else 0.0
    counted = sum(1 for t, _ in samples if t0 < t < t1) * 2000
    print(f"Recv blocked {t1 - t0:.2f} s; the counter thread counted {counted} meanwhile, "
          f"its samples cover {100 * covered:.0f}% of the wait")
    if t1 - t0 < 0.9:
        raise SystemExit(f"Recv returned after {t1 - t0:.2f} s, before the reply was sent")
    if covered < 0.5:
        raise SystemExit("the counter thread did not run while Recv was blocked: GIL held?")
    print("gil ok on rank 1")


def sigint(world):
    if world.rank == 0:
        note = bytearray(11)
        world.Recv(note, source=1, tag=3)
        print(f"rank 0 told: {note.decode()}")
        return
    buf = bytearray(8)
    print("waiting", flush=True)
    t0 = time.monotonic()
    try:
        world.Recv(buf, source=0, tag=99)
        raise SystemExit("Recv returned without a message")
    except KeyboardInterrupt:
        print(f"KeyboardInterrupt after {time.monotonic() - t0:.2f} s", flush=True)
    world.Send(b"interrupted", dest=0, tag=3)
    print("sigint ok on rank 1")


def main():
    mode = sys.argv[1]
    with waitio.session(timeout=30):
        world = waitio.universe()
        {"gil": gil, "sigint": sigint}[mode](world)


if __name__ == "__main__":
    main()
