"""The frequency principle in the authors' own demo setting (issue #18): how long until every peak has converged.

n = 600 points on [−10, 10), a 1-200-200-200-100-1 tanh network with init std 200^−1/2, full-batch Adam at
learning rate 1e−4, target sin x + sin 3x + sin 5x — on this grid its peaks are the DFT bins 3, 10 and 16
(:class:`companion.core.fprinciple.FPConfig` with ``half_width=10``).  Trains ``EPOCHS`` epochs, recording
Δ_F(k) (图4.7) every ``RECORD`` epochs — and again with twice as many, up to 8×, while a peak has not yet stayed
below 0.1 over the last half of the run — and prints per peak the first epoch with Δ_F < 0.1 and the epoch from
which it stays below 0.1, then the ms per epoch (recording included) and the total seconds.  The frequency
principle predicts the order bin 3, then 10, then 16.

Run: ``python benchmarks/fp_book_setting.py [EPOCHS]`` (default 5 000; or ``python -m companion bench``).
"""

from __future__ import annotations

import os
import sys
import time
from unittest.mock import patch

import numpy as np

from companion.kit.config import settings
from companion.core.fprinciple import FPConfig, run_fprinciple

RECORD = 100
BOOK = FPConfig(ks=(1, 3, 5), amps=(1.0, 1.0, 1.0), n_train=600, n_test=1000, hidden=(200, 200, 200, 100),
                act="tanh", init_std=200 ** -0.5, optimizer="adam", lr=1e-4, record_every=RECORD, half_width=10.0)


def stays_below(deltas: np.ndarray, steps: np.ndarray, level: float = 0.1) -> list[float]:
    """Per peak, the first recorded step from which Δ_F stays below ``level`` to the end (NaN: it does not)."""
    found = []
    for column in deltas.T:
        above = np.flatnonzero(column >= level)
        last = above[-1] + 1 if above.size else 0
        found.append(float(steps[last]) if last < len(steps) else float("nan"))
    return found


def main(epochs: int) -> None:
    print(settings().describe())
    for _ in range(4):
        config = FPConfig(**{**BOOK.__dict__, "steps": epochs})
        with patch.dict(os.environ, {"COMPANION_CACHE": "off"}):  # a timing: never read a stored run
            start = time.perf_counter()
            result = run_fprinciple(config, 0)
            seconds = time.perf_counter() - start
        deltas = result.deltas[:, 0]  # (T, 3), the one member
        stay = stays_below(deltas, result.steps)
        if not np.isnan(stay).any() and max(stay) <= epochs / 2:
            break
        epochs *= 2
    print(f"authors' setting: n={config.n_train} on [−{config.half:g}, {config.half:g}), 1-200-200-200-100-1 tanh, "
          f"Adam {config.lr:g}, {epochs} epochs; peaks k = 1, 3, 5 in DFT bins {config.bins}")
    for k, b, first, steady, last in zip(config.ks, config.bins, result.first[0], stay, deltas[-1]):
        fmt = lambda v: "never" if np.isnan(v) else f"{v:.0f}"  # noqa: E731
        print(f"  bin {b:2d} (k={k}): first below 0.1 at epoch {fmt(first):>6}, stays below from {fmt(steady):>6}"
              f"   (final Δ_F {last:.3f})")
    print(f"{seconds / epochs * 1e3:.1f} ms per epoch (recording every {RECORD} included), {seconds:.0f} s in all"
          + ("" if not np.isnan(stay).any() else f"; not every peak has settled within {epochs} epochs"))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5_000)
