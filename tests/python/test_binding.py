"""pytest for the Python binding: Python PBs coupled with each other and with C PBs built with
Open MPI and MPICH. Every test launches separate processes (bounded in time, killed on exit)."""
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.environ.get("WAITIO_BUILD_DIR", os.path.join(HERE, "..", "..", "build"))
PROGS = os.environ.get("TEST_PROGS", os.path.join(BUILD, "tests", "progs"))


def free_port():
    spec = importlib.util.spec_from_file_location(
        "free_port", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "free_port.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.pick()


def instance_env(npb):
    env = dict(os.environ)
    env.update(WAITIO_NPB=str(npb), WAITIO_MASTER_HOST="127.0.0.1",
               WAITIO_MASTER_PORT=str(free_port()), WAITIO_KEY=os.urandom(16).hex(),
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    for k in ("WAITIO_PB_RANK", "WAITIO_PB_SIZE", "WAITIO_RENDEZVOUS"):
        env.pop(k, None)
    return env


class PBs:
    """Starts PBs in their own sessions; kills every one of them on exit."""

    def __init__(self, npb):
        self.env = instance_env(npb)
        self.procs = []

    def start(self, pbid, cmd):
        env = dict(self.env, WAITIO_PBID=str(pbid))
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, start_new_session=True)
        self.procs.append(p)
        return p

    def wait_all(self, timeout):
        deadline = time.monotonic() + timeout
        outs = []
        for p in self.procs:
            try:
                out, _ = p.communicate(timeout=max(1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self.kill()
                out, _ = p.communicate()
                pytest.fail(f"{p.args} did not finish in {timeout} s:\n{out}")
            outs.append(out)
        return outs

    def kill(self):
        for p in self.procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.kill()
        for p in self.procs:
            p.wait()


def need(path):
    if not os.path.exists(path):
        pytest.skip(f"{path} not built")
    return path


def test_python_with_openmpi_and_mpich_pbs():
    ompi = need(os.path.join(PROGS, "mpi_pypeer.ompi"))
    mpich = need(os.path.join(PROGS, "mpi_pypeer.mpich"))
    with PBs(3) as pbs:
        pbs.start(0, ["mpirun.openmpi", "--oversubscribe", "-np", "2", ompi])
        pbs.start(1, ["mpirun.mpich", "-np", "2", mpich])
        pbs.start(2, [sys.executable, os.path.join(HERE, "pb_peer.py")])
        outs = pbs.wait_all(90)
    for p, out in zip(pbs.procs, outs):
        assert p.returncode == 0, out
    assert outs[0].count("ok") == 2 and outs[1].count("ok") == 2, outs
    assert "pb_peer ok: echoed 4 C ranks, allreduce 10" in outs[2]


def test_objects_collectives_and_bad_buffers():
    script = os.path.join(HERE, "pb_pair.py")
    with PBs(2) as pbs:
        pbs.start(0, [sys.executable, script, "objects"])
        pbs.start(1, [sys.executable, script, "objects"])
        outs = pbs.wait_all(60)
    for p, out in zip(pbs.procs, outs):
        assert p.returncode == 0, out
        assert "objects ok" in out, out


def test_python_pb_killed_mid_transfer():
    script = os.path.join(HERE, "pb_pair.py")
    with PBs(2) as pbs:
        sender = pbs.start(0, [sys.executable, script, "stream"])
        receiver = pbs.start(1, [sys.executable, script, "stream"])
        line = receiver.stdout.readline()
        assert "streaming" in line, line
        time.sleep(0.5)
        t_kill = time.monotonic()
        os.killpg(receiver.pid, signal.SIGKILL)
        out, _ = sender.communicate(timeout=30)
        detected = time.monotonic() - t_kill
    assert sender.returncode == 0, out
    assert "peer lost" in out, out
    assert detected < 10, f"took {detected:.1f} s to notice the dead peer"


def test_module_info_runs():
    import waitio
    r = subprocess.run([sys.executable, "-m", "waitio.info"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and "WaitIO" in r.stdout, r
    # the library's own transports (its table), not a fixed string: file included
    line = next(x for x in r.stdout.splitlines() if x.startswith("transports: "))
    names = [t.split(" (")[0] for t in line[len("transports: "):].split(", ")]
    assert names == waitio._core.build_info()["transports"].split(",") and "file" in names, line


def test_operations_as_mpi4py():
    """waitio.SUM and the others: ints to the buffer collectives, functions of two objects (as
    mpi4py's MPI.SUM) to reduce/allreduce, NumPy arrays element by element."""
    import pickle
    import numpy as np
    import waitio
    assert waitio.SUM == waitio._core.SUM and isinstance(waitio.SUM, int) and repr(waitio.MAX) == "waitio.MAX"
    assert (waitio.SUM(2, 3), waitio.PROD(2, 3), waitio.MAX(2, 3), waitio.MIN(2, 3)) == (5, 6, 3, 2)
    assert (waitio.BAND(6, 3), waitio.BOR(6, 3), waitio.BXOR(6, 3)) == (2, 7, 5)
    assert (waitio.LAND(1, 0), waitio.LOR(0, 2), waitio.LXOR(1, 1), waitio.LXOR(0, 1)) == (0, 2, False, 1)
    assert waitio.SUM("a", "b") == "ab"
    assert np.array_equal(waitio.MAX(np.array([1, 5]), np.array([4, 2])), [4, 5])
    assert pickle.loads(pickle.dumps(waitio.MIN)) is waitio.MIN


def test_single_process_instance_and_errors():
    code = (
        "import numpy as np, waitio\n"
        "with waitio.session(5):\n"
        "    w = waitio.universe()\n"
        "    assert (w.rank, w.size, waitio.pb_size(), waitio.get_nprocs()) == (0, 1, 1, [1])\n"
        "    try:\n"
        "        w.Isend(np.zeros(3), 5, 1)\n"
        "    except ValueError as e:\n"
        "        assert 'out of range' in str(e), e\n"
        "    else:\n"
        "        raise SystemExit('rank out of range accepted')\n"
        "print('single ok')\n")
    env = instance_env(1)
    env["WAITIO_PBID"] = "0"
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and "single ok" in r.stdout, r.stdout + r.stderr


def test_blocked_recv_releases_the_gil_and_lets_other_threads_call_waitio():
    script = os.path.join(HERE, "pb_threads.py")
    with PBs(2) as pbs:
        pbs.start(0, [sys.executable, script, "gil"])
        pbs.start(1, [sys.executable, script, "gil"])
        outs = pbs.wait_all(60)
    for p, out in zip(pbs.procs, outs):
        assert p.returncode == 0, out
    assert "gil ok on rank 0" in outs[0], outs[0]
    assert "gil ok on rank 1" in outs[1], outs[1]


def test_sigint_interrupts_a_blocked_recv():
    script = os.path.join(HERE, "pb_threads.py")
    with PBs(2) as pbs:
        pbs.start(0, [sys.executable, script, "sigint"])
        waiter = pbs.start(1, [sys.executable, script, "sigint"])
        line = waiter.stdout.readline()
        assert "waiting" in line, line
        time.sleep(0.5)  # inside Recv by now
        t_sig = time.monotonic()
        waiter.send_signal(signal.SIGINT)
        outs = pbs.wait_all(30)
        took = time.monotonic() - t_sig
    for p, out in zip(pbs.procs, outs):
        assert p.returncode == 0, out
    assert "KeyboardInterrupt after" in outs[1] and "sigint ok on rank 1" in outs[1], outs[1]
    assert "rank 0 told: interrupted" in outs[0], outs[0]
    assert took < 10, f"took {took:.1f} s"


def run_single(code):
    """Runs CODE in a 1-PB instance (a deliberate single-PB run); returns the CompletedProcess."""
    env = instance_env(1)
    env["WAITIO_PBID"] = "0"
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=30)


def test_argument_errors_like_mpi4py():
    code = (
        "import numpy as np, waitio\n"
        "def expect(exc, words, fn, *args):\n"
        "    try:\n"
        "        fn(*args)\n"
        "    except exc as e:\n"
        "        assert all(w in str(e) for w in words), (exc, str(e))\n"
        "        assert '2147483' not in str(e), str(e)\n"
        "    else:\n"
        "        raise SystemExit(f'{fn.__name__}{args[1:]} accepted')\n"
        "with waitio.session(5):\n"
        "    w = waitio.universe()\n"
        "    buf = bytearray(8)\n"
        "    expect(TypeError, ['buffer', 'str'], w.Isend, 'text', 0, 1)\n"
        "    expect(TypeError, ['buffer', 'int'], w.Irecv, 42, 0, 1)\n"
        "    expect(TypeError, ['tag', 'integer'], w.Isend, buf, 0, 'x')\n"
        "    expect(ValueError, ['tag', 'negative'], w.Isend, buf, 0, -1)\n"
        "    expect(ValueError, ['tag', 'negative'], w.Irecv, buf, 0, -5)\n"
        "    expect(ValueError, ['ANY_TAG'], w.Isend, buf, 0, waitio.ANY_TAG)\n"
        "    expect(ValueError, ['tag'], w.Isend, buf, 0, 2**64)\n"
        "    expect(ValueError, ['dest 5', 'out of range', '1 process'], w.Isend, buf, 5, 1)\n"
        "    expect(ValueError, ['dest -1', 'out of range'], w.Isend, buf, -1, 1)\n"
        "    expect(ValueError, ['dest', 'out of range'], w.Isend, buf, 2**70, 1)\n"
        "    expect(ValueError, ['source 3', 'out of range', 'ANY_SOURCE'], w.Irecv, buf, 3, 1)\n"
        "    expect(ValueError, ['root 2', 'out of range'], w.Bcast, buf, 2)\n"
        "    expect(ValueError, ['root 1'], w.Reduce, np.zeros(2), np.zeros(2), waitio.SUM, 1)\n"
        "    expect(ValueError, ['differ'], w.Allreduce, np.zeros(3), np.zeros(4))\n"
        "    expect((ValueError, BufferError), ['contiguous'], w.Isend, np.zeros((4, 4))[:, 1], 0, 1)\n"
        "    expect((ValueError, BufferError), ['writable'], w.Irecv, b'read-only', 0, 1)\n"
        "    expect(ValueError, ['one entry per PB'], waitio.create_group, 9, [None, None])\n"
        "    expect(ValueError, ['out of range'], waitio.create_group, 9, [[3]])\n"
        "    expect(TypeError, ['Request'], waitio.waitall, [1])\n"
        "    # the request of a valid call still works after all this\n"
        "    r = w.Irecv(bytearray(4), waitio.ANY_SOURCE, 7)\n"
        "    assert not r.test()\n"
        "print('errors ok')\n")
    r = run_single(code)
    assert r.returncode == 0 and "errors ok" in r.stdout, r.stdout + r.stderr


def test_every_public_function_has_a_docstring():
    import inspect
    import waitio
    from waitio import _core
    missing = []
    for modname, mod in (("waitio", waitio), ("waitio._core", _core)):
        for name in dir(mod):
            obj = getattr(mod, name)
            if name.startswith("_") or not (inspect.isroutine(obj) or inspect.isclass(obj)):
                continue
            if not (obj.__doc__ or "").strip():
                missing.append(f"{modname}.{name}")
            if inspect.isclass(obj) and obj.__module__.startswith("waitio"):
                for mname, m in vars(obj).items():
                    if (mname.startswith("_") and mname != "__init__") or not (callable(m) or isinstance(m, property)):
                        continue
                    doc = m.__doc__ if not isinstance(m, property) else m.fget.__doc__ if m.fget else None
                    if mname == "__init__" and not hasattr(m, "__code__"):
                        continue
                    if not (getattr(m, "__doc__", None) or doc or "").strip():
                        missing.append(f"{modname}.{name}.{mname}")
    assert not missing, f"no docstring: {missing}"


def test_one_sided_between_python_and_c():
    """Windows, atomics, signals and remote calls between two Python PBs and a C PB."""
    peer = need(os.path.join(PROGS, "rma_pypeer"))
    script = os.path.join(HERE, "pb_rma.py")
    with PBs(3) as pbs:
        pbs.start(0, [sys.executable, script])
        pbs.start(1, [sys.executable, script])
        pbs.start(2, [peer])
        outs = pbs.wait_all(60)
    for p, out in zip(pbs.procs, outs):
        assert p.returncode == 0, out
    assert "pb_rma ok: rank 0 of 3, replies PPC" in outs[0], outs[0]
    assert "pb_rma ok: rank 1 of 3, replies PPC" in outs[1], outs[1]
    assert "rma_pypeer ok: rank 2 of 3, replies PPC" in outs[2], outs[2]
