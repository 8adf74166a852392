"""Batched ensemble vs a Python loop of ordinary modules: the same K = 64 two-layer nets (m = 1000), on the
4 data points of 图7.1 (the phase diagram's workload).

Trains the nets once as one :class:`companion.core.ensemble.TwoLayerEnsemble` and once as 64
:class:`companion.core.ensemble.TwoLayerNet` modules with torch.optim.SGD in a loop, from the same
initial parameters, and prints: seconds per step of each, the speed ratio, the largest
difference between the two sets of final outputs, and the ensemble's achieved FLOP/s next to a
plain large matrix product's FLOP/s on this machine. Times are CPU seconds of this process
(time.process_time, one torch thread), so other load on a shared machine does not distort them.

Then a problem of the full profile's size, where matrix products dominate: K = 16 members of a
1-256-256-256-1 tanh :class:`companion.core.nets.BatchedMLP` on n = 256 points, trained by the package's
engine (:func:`companion.core.train.train`, full-batch Adam), and the fraction of the plain matrix
product's FLOP/s it achieves on the same threads (target ≥ 30 %; no loop ratio applies there: a loop of
such nets is already efficient).

Run: ``python benchmarks/ensemble.py`` (or ``python -m companion bench``).
"""

from __future__ import annotations

import time

import torch

from companion.kit.config import settings
from companion.kit.seeds import generator
from companion.core.ensemble import TwoLayerEnsemble, step_flops, train_ensemble, train_single
from companion.core.nets import BatchedMLP
from companion.core.train import train
from companion.experiments.ch07_phase import four_points

K, WIDTH, STEPS, LR = 64, 1000, 300, 0.05
FULL_K, FULL_N, FULL_WIDTHS, FULL_STEPS = 16, 256, (1, 256, 256, 256, 1), 60
DTYPE = torch.float32  # the ensemble is memory-bound: float32 halves its traffic (ch. 7 uses float64)


def matmul_flops(size: int = 1024, repeats: int = 5) -> float:
    """FLOP/s of a plain (size × size) @ (size × size) product in DTYPE."""
    a, b = torch.randn(size, size, dtype=DTYPE), torch.randn(size, size, dtype=DTYPE)
    a @ b
    start = time.process_time()
    for _ in range(repeats):
        a @ b
    return 2 * size ** 3 * repeats / (time.process_time() - start)


def main() -> None:
    print(settings().describe())
    x, y = four_points(DTYPE)  # the 4 points of 图7.1, the workload of the phase diagram
    ens = TwoLayerEnsemble(1, WIDTH, beta1=1.0, beta2=1.0, alpha=WIDTH ** 0.5, n_members=K, dtype=DTYPE, seed=0)
    nets = [ens.member(k) for k in range(K)]

    start = time.process_time()
    train_ensemble(ens, x, y, steps=STEPS, lr=LR, record_every=STEPS)
    batched = (time.process_time() - start) / STEPS

    start = time.process_time()
    for net in nets:
        train_single(net, x, y, steps=STEPS, lr=LR)
    looped = (time.process_time() - start) / STEPS

    with torch.no_grad():
        diff = max(float((ens(x)[k] - net(x)).abs().max()) for k, net in enumerate(nets))
    flops = step_flops(K, len(x), WIDTH, 2)
    print(f"K={K} nets, m={WIDTH}, n={len(x)}, {STEPS} GD steps, {DTYPE}")
    print(f"batched : {batched * 1e3:8.2f} ms/step   {flops / batched / 1e9:6.2f} GFLOP/s achieved")
    print(f"loop    : {looped * 1e3:8.2f} ms/step   {flops / looped / 1e9:6.2f} GFLOP/s achieved")
    print(f"speed ratio loop/batched = {looped / batched:.1f}x   max |output difference| = {diff:.2e}")
    plain = matmul_flops()
    print(f"plain 1024x1024 matmul   : {plain / 1e9:6.2f} GFLOP/s on the same threads")
    full_profile_sized(plain)


def full_profile_sized(plain: float) -> None:
    """The full-profile-sized problem of the module docstring: achieved FLOP/s as a fraction of ``plain``."""
    model = BatchedMLP(FULL_WIDTHS, FULL_K, "tanh", init_std=FULL_WIDTHS[1] ** -0.5, generator=generator(0))
    x = torch.linspace(-3.0, 3.0, FULL_N)[:, None]
    y = torch.sin(x) + torch.sin(3 * x)
    train(model, x, y, steps=5, lr=1e-3, record_every=5, progress=False)  # warm-up
    start = time.process_time()
    train(model, x, y, steps=FULL_STEPS, lr=1e-3, record_every=FULL_STEPS, progress=False)
    per_step = (time.process_time() - start) / FULL_STEPS
    forward = sum(2 * FULL_K * FULL_N * i * o for i, o in zip(FULL_WIDTHS[:-1], FULL_WIDTHS[1:]))
    achieved = 3 * forward / per_step  # forward + backward ≈ 3 × forward
    print(f"full-profile size: K={FULL_K} nets {'-'.join(map(str, FULL_WIDTHS))} tanh, n={FULL_N}, Adam, "
          f"{FULL_STEPS} steps")
    print(f"batched : {per_step * 1e3:8.2f} ms/step   {achieved / 1e9:6.2f} GFLOP/s achieved = "
          f"{achieved / plain:.0%} of the plain matmul (target ≥ 30 %)")


if __name__ == "__main__":
    main()
