"""The GPU learner of the ML-coupling example (run.sh ... gpu): the same model as learner.py,
u_next = a*u + b*u_prev + c*u_prev2 + d, but the simulation's state is received straight into a
CUDA tensor (WaitIO takes any __cuda_array_interface__ / DLPack array as a buffer: no host copy
in this program), the history stays on the GPU, the four coefficients are fitted there (normal
equations, PyTorch) and the prediction is sent back from a CUDA tensor.

Usage: learner_gpu.py [--device auto|cuda|fake|host]
  cuda  PyTorch on the GPU (auto picks it when torch.cuda.is_available());
  fake  the test suite's CUDA test double (WAITIO_CUDA_LIBRARY=.../libwaitio_fakecuda.so):
        device arrays of tests/python/gpu_arrays.py as the buffers (that device computes
        nothing, so the fit reads the history back to the host) — how CI runs this program;
  host  NumPy arrays, as learner.py (auto falls back to it, saying why, without a GPU).
"""
import argparse
import os
import sys

import numpy as np

import waitio

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from learner import HISTORY, N, fit_numpy  # noqa: E402


class TorchCuda:
    """State, history and model on the GPU (PyTorch)."""

    def __init__(self):
        import torch
        self.torch = torch
        self.state = torch.empty(N, dtype=torch.float64, device="cuda")  # WaitIO receives into it
        self.history = []
        self.coef = None
        self.name = f"PyTorch on {torch.cuda.get_device_name(0)}"

    def keep(self):
        self.history = (self.history + [self.state.clone()])[-(HISTORY + 3):]  # device-to-device

    def predict(self):
        t, h = self.torch, self.history
        if len(h) < 5:
            return h[-1]  # nothing learned yet: the usual guess
        ones = t.ones(N, dtype=t.float64, device="cuda")
        x = t.cat([t.stack([h[k - 1], h[k - 2], h[k - 3], ones], dim=1) for k in range(3, len(h))])
        y = t.cat(h[3:])
        a = x.T @ x
        a += 1e-12 * a.diagonal().sum() * t.eye(4, dtype=t.float64, device="cuda")  # a ridge of nothing
        w = t.linalg.solve(a, x.T @ y)
        self.coef = w
        return (w[0] * h[-1] + w[1] * h[-2] + w[2] * h[-3] + w[3]).contiguous()

    def coefficients(self):
        return None if self.coef is None else self.coef.cpu().numpy()


class HostModel:
    """NumPy buffers and fit (learner.py's), for host memory or the fake device."""

    def __init__(self):
        self.state = np.empty(N)
        self.history = []
        self.coef = None
        self.name = "NumPy in host memory (no GPU)"

    def host_state(self):
        return self.state.copy()

    def keep(self):
        self.history = (self.history + [self.host_state()])[-(HISTORY + 3):]

    def host_prediction(self):
        h = self.history
        if len(h) < 5:
            return h[-1]
        self.coef = fit_numpy(h)
        return self.coef[0] * h[-1] + self.coef[1] * h[-2] + self.coef[2] * h[-3] + self.coef[3]

    def predict(self):
        return np.ascontiguousarray(self.host_prediction())

    def coefficients(self):
        return self.coef


class FakeDevice(HostModel):
    """Buffers in the CUDA test double's device memory (CPU access would crash: WaitIO moves
    them through the driver); the fit itself on the host, read back through the driver."""

    def __init__(self):
        super().__init__()
        sys.path.insert(0, os.path.join(here, "..", "..", "tests", "python"))
        from gpu_arrays import DeviceArray, Driver
        drv = Driver()
        self.state = DeviceArray(drv, [N], "<f8")
        self.out = DeviceArray(drv, [N], "<f8")
        self.name = f"the fake CUDA device ({os.path.basename(drv.path)})"

    def host_state(self):
        return np.frombuffer(self.state.read(), dtype=np.float64).copy()

    def predict(self):
        return self.out.write(np.ascontiguousarray(self.host_prediction(), dtype=np.float64).tobytes())


def pick(device):
    """The backend for --device; auto: CUDA when PyTorch sees a GPU, else host memory."""
    if device == "fake":
        return FakeDevice()
    if device == "host":
        return HostModel()
    try:
        import torch
        why = None if torch.cuda.is_available() else "PyTorch sees no CUDA device"
    except ImportError:
        why = "PyTorch is not installed"
    if why is None:
        return TorchCuda()
    if device == "cuda":
        raise SystemExit(f"learner_gpu: --device cuda, but {why}")
    print(f"learner_gpu: {why}: falling back to host memory", flush=True)
    return HostModel()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", choices=("auto", "cuda", "fake", "host"), default="auto")
    model = pick(ap.parse_args().device)
    steps = 0
    with waitio.session(timeout=60):
        world = waitio.universe()
        while True:
            src, tag, nbytes = world.Recv(model.state, source=0)  # into the device buffer
            if tag == 3:
                break
            model.keep()
            world.Send(model.predict(), 0, 2)                       # from the device buffer
            steps += 1
    c = model.coefficients()
    print(f"learner (GPU variant, {model.name}): {steps} states received and {steps} predictions sent "
          f"in place; " + (f"last model u' = {c[0]:.3f} u + {c[1]:.3f} u_-1 + {c[2]:.3f} u_-2 + {c[3]:.2e}"
                           if c is not None else "no model"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
