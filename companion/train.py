"""Training loops that record a history every ``record_every`` steps.

One function, :func:`train`, covers the book's experiments: full-batch or mini-batch, Adam or
plain gradient descent, the mean-squared loss (6.2) or the loss with a gradient term (6.3), a
single network or a :class:`~companion.nets.BatchedMLP` whose members are trained at once
(their losses are summed; members share no parameter, so each gets its own gradient).

Diagnostics are taken every ``record_every`` steps, not every step: the training loss, the loss
on an evaluation set, the network's output on an evaluation grid, and anything a ``probe``
callback returns.  A tqdm progress bar shows the run in notebooks; it is silent under CI
(environment variable ``CI``) or when ``COMPANION_PROGRESS=0``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn
from tqdm.auto import tqdm

LOSSES = ("mse", "mse+grad")
OPTIMIZERS = ("adam", "sgd")


def progress_enabled(requested: bool = True) -> bool:
    """Progress bars are shown unless disabled by argument, ``CI`` or ``COMPANION_PROGRESS=0``."""
    if not requested or os.environ.get("CI"):
        return False
    return os.environ.get("COMPANION_PROGRESS", "1") not in ("0", "false", "no")


@dataclass
class History:
    """What :func:`train` recorded.  Arrays have one row per recorded step.

    ``train_loss``/``eval_loss`` have shape (T,) for a single network and (T, K) for K members;
    ``outputs`` has shape (T, [K,] N_eval, d_out) when an evaluation grid was given.
    """

    steps: np.ndarray
    train_loss: np.ndarray
    eval_loss: np.ndarray | None = None
    outputs: np.ndarray | None = None
    probes: dict[str, np.ndarray] = field(default_factory=dict)

    def at(self, step: int) -> int:
        """Index of the recorded step closest to ``step``."""
        return int(np.argmin(np.abs(self.steps - step)))


def mse_per_member(out: Tensor, y: Tensor) -> Tensor:
    """Mean squared error (6.2) over samples and outputs; one value per member for (K, N, d) outputs."""
    err = (out - y) ** 2
    return err.mean(dim=(-2, -1)) if err.ndim == 3 else err.mean()


def _gradient_term(model: nn.Module, x: Tensor, dy: Tensor) -> Tensor:
    """Mean squared error of the input-gradient, the extra term of the loss (6.3)."""
    n_members = getattr(model, "n_members", None)
    if n_members is not None:          # one copy of x per member, so each gets its own ∇_x f_k
        x = x.detach().expand(n_members, *x.shape).clone()
    x = x.detach().requires_grad_(True)
    out = model(x)
    (grad,) = torch.autograd.grad(out.sum(), x, create_graph=True)  # ([K,] N, d_in)
    return mse_per_member(grad, dy)


def _make_optimizer(name: str, params, lr: float) -> torch.optim.Optimizer:
    if name == "adam":
        return torch.optim.Adam(params, lr=lr)
    if name == "sgd":
        return torch.optim.SGD(params, lr=lr)
    raise ValueError(f"unknown optimizer {name!r}; choose one of {', '.join(OPTIMIZERS)}")


def train(model: nn.Module, x: Tensor, y: Tensor, *, steps: int, lr: float, optimizer: str = "adam",
          loss: str = "mse", dy: Tensor | None = None, batch_size: int | None = None,
          record_every: int = 10, x_eval: Tensor | None = None, y_eval: Tensor | None = None,
          keep_outputs: bool = False, probe: Callable[[nn.Module, int], dict[str, Any]] | None = None,
          stop_below: float | None = None, generator: torch.Generator | None = None,
          progress: bool = True, desc: str = "training") -> History:
    """Train ``model`` on (x, y) and return its :class:`History`.

    Args:
        x, y: training inputs (N, d_in) and targets (N, d_out).
        steps: number of optimiser steps (epochs when full-batch).
        loss: ``"mse"`` — (6.2); ``"mse+grad"`` — (6.3), needs the target gradient ``dy`` (N, d_in).
        batch_size: ``None`` for full-batch, otherwise samples drawn without replacement each step.
        record_every: record diagnostics at step 0, every ``record_every`` steps and at the end.
        x_eval, y_eval: an evaluation set; its loss is recorded, and with ``keep_outputs`` the
            model's output on ``x_eval`` too (e.g. a fine grid for spectra and snapshots).
        probe: called as ``probe(model, step)`` at each record; its dict values become arrays.
        stop_below: stop once every member's training loss is below this value.
    """
    if steps < 1 or record_every < 1:
        raise ValueError(f"steps and record_every must be ≥ 1, got steps={steps}, record_every={record_every}")
    if not lr > 0:
        raise ValueError(f"learning rate must be positive, got {lr}")
    if loss not in LOSSES:
        raise ValueError(f"unknown loss {loss!r}; choose one of {', '.join(LOSSES)}")
    if loss == "mse+grad" and (dy is None or dy.shape != x.shape):
        raise ValueError("loss 'mse+grad' needs the target gradient dy with the shape of x "
                         f"{tuple(x.shape)}; got {None if dy is None else tuple(dy.shape)}")
    if x.shape[0] != y.shape[-2]:
        raise ValueError(f"x has {x.shape[0]} samples but y has {y.shape[-2]}")
    if batch_size is not None and not 1 <= batch_size <= x.shape[0]:
        raise ValueError(f"batch_size must lie in [1, {x.shape[0]}], got {batch_size}")

    opt = _make_optimizer(optimizer, model.parameters(), lr)
    rows: dict[str, list] = {"steps": [], "train": [], "eval": [], "out": []}
    probes: dict[str, list] = {}

    def record(step: int, train_loss: Tensor) -> None:
        rows["steps"].append(step)
        rows["train"].append(train_loss.detach().cpu().numpy().copy())
        if x_eval is not None:
            with torch.no_grad():
                out = model(x_eval)
            if y_eval is not None:
                rows["eval"].append(mse_per_member(out, y_eval).cpu().numpy().copy())
            if keep_outputs:
                rows["out"].append(out.cpu().numpy().copy())
        if probe is not None:
            for key, value in probe(model, step).items():
                probes.setdefault(key, []).append(np.asarray(value))

    bar = tqdm(total=steps, desc=desc, disable=not progress_enabled(progress), mininterval=0.5, leave=False)
    try:
        for step in range(steps + 1):
            if batch_size is None:
                xb, yb, dyb = x, y, dy
            else:
                idx = torch.randperm(x.shape[0], generator=generator)[:batch_size]
                xb, yb, dyb = x[idx], y[..., idx, :], None if dy is None else dy[idx]
            per_member = mse_per_member(model(xb), yb)
            if loss == "mse+grad":
                per_member = per_member + _gradient_term(model, xb, dyb)
            if step % record_every == 0 or step == steps:
                full = per_member if batch_size is None else mse_per_member(model(x), y).detach()
                record(step, full)
                if stop_below is not None and bool((full < stop_below).all()):
                    break
            if step == steps:
                break
            opt.zero_grad(set_to_none=True)
            per_member.sum().backward()
            opt.step()
            bar.update(1)
    finally:        # Ctrl-C propagates: a truncated history is never returned, so never cached as complete
        bar.close()

    return History(
        steps=np.asarray(rows["steps"]),
        train_loss=np.stack(rows["train"]),
        eval_loss=np.stack(rows["eval"]) if rows["eval"] else None,
        outputs=np.stack(rows["out"]) if rows["out"] else None,
        probes={k: np.stack(v) for k, v in probes.items()},
    )
