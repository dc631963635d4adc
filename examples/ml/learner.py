"""The learner PB of the ML-coupling example: receives the simulation's state every step
(NumPy, zero-copy), fits a small model that predicts the next state, and sends the prediction
back for the simulation's solver to start from.

The model: u_next = a*u + b*u_prev + c*u_prev2 + d, with the four coefficients fitted by least
squares (NumPy) on every grid point of the recent history. PyTorch is used instead when it is
installed and WAITIO_ML_TORCH=1 (same model, trained by gradient descent on CPU tensors).
"""
import os
import sys

import numpy as np

import waitio

N = 512
HISTORY = 12


def fit_numpy(states):
    """Least-squares fit of the 4 coefficients on the last HISTORY transitions."""
    rows, targets = [], []
    for k in range(3, len(states)):
        u, u1, u2, nxt = states[k - 1], states[k - 2], states[k - 3], states[k]
        rows.append(np.stack([u, u1, u2, np.ones_like(u)], axis=1))
        targets.append(nxt)
    coef, *_ = np.linalg.lstsq(np.concatenate(rows), np.concatenate(targets), rcond=None)
    return coef


def fit_torch(states):
    import torch
    x = torch.tensor(np.concatenate([np.stack([states[k - 1], states[k - 2], states[k - 3],
                                               np.ones(N)], axis=1) for k in range(3, len(states))]))
    y = torch.tensor(np.concatenate([states[k] for k in range(3, len(states))]))
    w = torch.zeros(4, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.LBFGS([w], max_iter=50)

    def closure():
        opt.zero_grad()
        loss = ((x @ w - y) ** 2).mean()
        loss.backward()
        return loss
    opt.step(closure)
    return w.detach().numpy()


def main():
    use_torch = os.environ.get("WAITIO_ML_TORCH") == "1"
    if use_torch:
        try:
            import torch  # noqa: F401
        except ImportError:
            use_torch = False
    with waitio.session(timeout=60):
        world = waitio.universe()
        states = []
        coef = None
        state = np.empty(N)
        while True:
            src, tag, nbytes = world.Recv(state, source=0)
            if tag == 3:
                break
            states.append(state.copy())
            states = states[-(HISTORY + 3):]
            if len(states) >= 5:
                coef = (fit_torch if use_torch else fit_numpy)(states)
                u, u1, u2 = states[-1], states[-2], states[-3]
                prediction = coef[0] * u + coef[1] * u1 + coef[2] * u2 + coef[3]
            else:
                prediction = states[-1]     # nothing learned yet: the usual guess
            world.Send(np.ascontiguousarray(prediction), 0, 2)
        print(f"learner ({'PyTorch' if use_torch else 'NumPy'}): trained on {len(states)} recent "
              f"states; last model u' = {coef[0]:.3f} u + {coef[1]:.3f} u_-1 + {coef[2]:.3f} u_-2 "
              f"+ {coef[3]:.2e}" if coef is not None else "learner: no model")
    return 0


if __name__ == "__main__":
    sys.exit(main())
