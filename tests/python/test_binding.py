"""pytest for the Python binding: Python PBs coupled with each other and with C PBs built with
Open MPI and MPICH. Every test launches separate processes (bounded in time, killed on exit)."""
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.environ.get("WAITIO_BUILD_DIR", os.path.join(HERE, "..", "..", "build"))
PROGS = os.environ.get("TEST_PROGS", os.path.join(BUILD, "tests", "progs"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
    r = subprocess.run([sys.executable, "-m", "waitio.info"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and "WaitIO" in r.stdout, r


def test_single_process_instance_and_errors():
    code = (
        "import numpy as np, waitio\n"
        "with waitio.session(5):\n"
        "    w = waitio.universe()\n"
        "    assert (w.rank, w.size, waitio.pb_size(), waitio.get_nprocs()) == (0, 1, 1, [1])\n"
        "    try:\n"
        "        w.Isend(np.zeros(3), 5, 1)\n"
        "    except waitio.Error as e:\n"
        "        assert e.code == 14, e\n"
        "    else:\n"
        "        raise SystemExit('rank out of range accepted')\n"
        "print('single ok')\n")
    env = instance_env(1)
    env["WAITIO_PBID"] = "0"
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and "single ok" in r.stdout, r.stdout + r.stderr
