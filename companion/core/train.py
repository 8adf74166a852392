"""The one training engine: every loop in the package that steps an optimiser over a loss runs here.

A run is two things the engine does not know the inside of:

* an **update** — ``update(step)`` performs one step.  The usual one is :func:`descend`, one optimiser
  step on a loss; it is the only place in the package that calls ``backward()`` and ``optimizer.step()``.
  Unusual schemes are updates built from it: the alternating min–max of the weak-adversarial network
  (15.15) is two :func:`descend` calls, a Hessian-adaptive step size changes the optimiser's learning rate
  before descending, an iterative linear solver (Jacobi) is an update with no gradient at all;
* a **record** — ``record(step)`` returns the named quantities to keep at that step (losses, outputs
  on an evaluation grid, spectra, snapshots of parameters …).

:func:`run` calls ``record`` at step 0, every ``record_every`` steps (or at the steps ``record_at``) and at
the end, stops early when ``stop(latest record)`` says so, shows a tqdm bar (silent under CI), hands the memory the
steps freed back to the operating system about once a second (:mod:`companion.kit.memory`: without it a
40 000-step run grew to 12 GB), and lets Ctrl-C propagate, so a truncated run is never returned, never cached.
What it returns is a :class:`History`, the one record type of the package: the recorded steps and one array per
named series.

:func:`train` is the supervised front end used by most chapters: the mean-squared loss (6.2) or the loss
with a gradient term (6.3), full batch or mini-batch, Adam or plain gradient descent, on a single network
or on a batched ensemble whose members are trained at once (their losses are summed; members share no
parameter, so each gets its own gradient).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn

from companion.kit import memory
from companion.kit.config import settings
from companion.kit.progress import progress_bar

LOSSES = ("mse", "mse+grad")
OPTIMIZERS = ("adam", "sgd", "lbfgs")
Update = Callable[[int], Any]
Record = Callable[[int], dict[str, Any]]


@dataclass
class History:
    """What a run recorded: ``steps`` (T,) and one array per named series, each with T rows.

    The series every supervised run has are attributes — ``train_loss`` ((T,) for one network, (T, K)
    for K members), ``eval_loss`` and ``outputs`` ((T, [K,] N_eval, d_out)) when an evaluation set was
    given; anything else a record returned (sharpness, mode errors, parameter snapshots …) is in
    ``series`` and reads as ``history["name"]``.
    """

    steps: np.ndarray
    train_loss: np.ndarray | None = None
    eval_loss: np.ndarray | None = None
    outputs: np.ndarray | None = None
    series: dict[str, np.ndarray] = field(default_factory=dict)

    FIELDS = ("train_loss", "eval_loss", "outputs")

    def __getitem__(self, name: str) -> np.ndarray:
        if name in self.FIELDS and getattr(self, name) is not None:
            return getattr(self, name)
        if name not in self.series:
            known = [f for f in self.FIELDS if getattr(self, f) is not None] + sorted(self.series)
            raise KeyError(f"this history recorded no series {name!r}; it has {', '.join(known) or 'none'}")
        return self.series[name]

    def __contains__(self, name: str) -> bool:
        return (name in self.FIELDS and getattr(self, name) is not None) or name in self.series

    def at(self, step: int) -> int:
        """Index of the recorded step closest to ``step``."""
        return int(np.argmin(np.abs(self.steps - step)))

    @classmethod
    def from_rows(cls, steps: Sequence[int], rows: Sequence[dict[str, Any]]) -> History:
        """Stack per-step records (dicts of scalars or arrays) into one series per name."""
        names = list(dict.fromkeys(k for row in rows for k in row))
        missing = [k for k in names if any(k not in row for row in rows)]
        if missing:
            raise ValueError(f"series {missing} were not recorded at every recorded step")
        stacked = {k: np.stack([np.asarray(row[k]) for row in rows]) for k in names}
        fields = {k: stacked.pop(k) for k in cls.FIELDS if k in stacked}
        return cls(steps=np.asarray(steps), series=stacked, **fields)


def _as_numpy(value: Any) -> Any:
    if isinstance(value, Tensor):
        return value.detach().cpu().numpy().copy()
    return value


def run(update: Update, *, steps: int, record: Record, record_every: int = 10,
        record_at: Sequence[int] | None = None, stop: Callable[[dict[str, Any]], bool] | None = None,
        progress: bool = True, desc: str = "training") -> History:
    """Call ``update(step)`` for step = 0 … steps−1 and ``record`` at the recording steps; see the module doc.

    Args:
        update: performs one step (e.g. :func:`descend`); its return value is ignored.
        steps: number of updates (≥ 0; 0 records the initial state only).
        record: ``record(step)`` → dict of named values (tensors are detached and copied to NumPy).
        record_every: record at step 0, every ``record_every`` steps and at the last step.
        record_at: record exactly at these steps instead (sorted, within [0, steps]).
        stop: called with the latest record; returning True ends the run after that record.
    """
    if steps < 0 or record_every < 1:
        raise ValueError(f"steps must be ≥ 0 and record_every ≥ 1, got steps={steps}, record_every={record_every}")
    if record_at is not None:
        wanted = sorted({int(s) for s in record_at})
        if not wanted or wanted[0] < 0 or wanted[-1] > steps:
            raise ValueError(f"record_at must name steps within [0, {steps}], got {list(record_at)}")
        is_record_step: Callable[[int], bool] = set(wanted).__contains__
    else:
        is_record_step = lambda step: step % record_every == 0 or step == steps  # noqa: E731
    recorded_steps: list[int] = []
    rows: list[dict[str, Any]] = []
    bar = progress_bar(steps, desc, progress)
    release = memory.MemoryReleaser(memory.RELEASE_EVERY_SECONDS)
    try:
        for step in range(steps + 1):
            if is_record_step(step):
                row = {k: _as_numpy(v) for k, v in record(step).items()}
                recorded_steps.append(step)
                rows.append(row)
                if stop is not None and stop(row):
                    break
            if step == steps:
                break
            update(step)
            release()
            bar.update(1)
    finally:        # Ctrl-C propagates: a truncated history is never returned, so never cached as complete
        bar.close()
    return History.from_rows(recorded_steps, rows)


class ManualOptimizer:
    """Base of the package's own update rules (a step size per ensemble member, …) for :func:`descend`.

    It holds what :func:`descend` and the rule need — ``param_groups`` and a per-parameter ``state`` — and
    none of ``torch.optim.Optimizer``'s machinery: no profiler hooks around every step and no import of
    ``torch._dynamo`` on construction, which together cost a 16 000-step ensemble run about 40 % of its
    time (measured on the ch08 condensation run: 10.3 → 6 CPU-seconds).  Subclasses implement :meth:`step`,
    reading each parameter's ``.grad``.
    """

    def __init__(self, params: Sequence[Tensor]) -> None:
        self.param_groups: list[dict[str, Any]] = [{"params": list(params)}]
        self.state: dict[Tensor, dict[str, Tensor]] = {}

    def step(self) -> None:
        raise NotImplementedError


Optimizer = torch.optim.Optimizer | ManualOptimizer


def descend(optimizer: Optimizer, loss: Callable[[], Tensor], *,
            schedule: torch.optim.lr_scheduler.LRScheduler | None = None,
            clear: Callable[[], None] | None = None) -> Update:
    """An update: one step of ``optimizer`` on ``loss()`` (summed when it has one value per member).

    The only place in the package where ``backward()`` and ``optimizer.step()`` run.  Optimisers that
    re-evaluate the loss (L-BFGS) get the closure they need.  Gradients are cleared by setting them to
    ``None`` (what ``zero_grad(set_to_none=True)`` does, without its per-call profiler record), or by ``clear()``
    where gradients are views into one buffer that must be zeroed in place.
    """
    params = [p for group in optimizer.param_groups for p in group["params"]]

    def closure() -> Tensor:
        if clear is not None:
            clear()
        for p in params if clear is None else ():
            p.grad = None
        value = loss().sum()
        value.backward()
        return value

    def update(step: int) -> None:
        if isinstance(optimizer, torch.optim.LBFGS):
            optimizer.step(closure)
        else:
            closure()
            optimizer.step()
        if schedule is not None:
            schedule.step()

    return update


@contextmanager
def on_device(model: nn.Module) -> Iterator[torch.device]:
    """Train ``model`` on the settings' device (a GPU in the full profile when there is one; the CPU otherwise),
    yielding that device for the data, and hand the model back where it was, on the CPU where it was drawn — so
    a seed gives the same initialisation on every machine and whatever reads the model afterwards needs no
    device of its own."""
    device, home = settings().device, next(model.parameters()).device
    model.to(device)
    try:
        yield device
    finally:
        model.to(home)


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


def make_optimizer(name: str, params, lr: float, **options: Any) -> torch.optim.Optimizer:
    """``"adam"``, ``"sgd"`` (plain gradient descent) or ``"lbfgs"`` over ``params``.

    One L-BFGS step is up to 20 quasi-Newton iterations with a strong-Wolfe line search (the PDE solvers'
    polishing optimiser); :func:`descend` hands it the closure it needs.
    """
    if name == "adam":
        return torch.optim.Adam(params, lr=lr, **options)
    if name == "sgd":
        return torch.optim.SGD(params, lr=lr, **options)
    if name == "lbfgs":
        return torch.optim.LBFGS(params, lr=lr, **({"max_iter": 20, "history_size": 50,
                                                      "line_search_fn": "strong_wolfe"} | options))
    raise ValueError(f"unknown optimizer {name!r}; choose one of {', '.join(OPTIMIZERS)}")


def train(model: nn.Module, x: Tensor, y: Tensor, *, steps: int, lr: float, optimizer: str = "adam",
          loss: str = "mse", dy: Tensor | None = None, batch_size: int | None = None,
          record_every: int = 10, record_at: Sequence[int] | None = None, x_eval: Tensor | None = None,
          y_eval: Tensor | None = None, keep_outputs: bool = False,
          probe: Callable[[nn.Module, int], dict[str, Any]] | None = None,
          stop_below: float | None = None, generator: torch.Generator | None = None,
          progress: bool = True, desc: str = "training") -> History:
    """Train ``model`` on (x, y) through :func:`run` and return its :class:`History`.

    Args:
        x, y: training inputs (N, d_in) and targets (N, d_out).
        steps: number of optimiser steps (epochs when full-batch).
        loss: ``"mse"`` — (6.2); ``"mse+grad"`` — (6.3), needs the target gradient ``dy`` (N, d_in).
        batch_size: ``None`` for full-batch, otherwise samples drawn without replacement each step
            (from ``generator``).
        record_every: record diagnostics at step 0, every ``record_every`` steps and at the end.
        record_at: record exactly at these steps instead (see :func:`run`).
        x_eval, y_eval: an evaluation set; its loss is recorded, and with ``keep_outputs`` the
            model's output on ``x_eval`` too (e.g. a fine grid for spectra and snapshots).
        probe: called as ``probe(model, step)`` at each record; its dict values become series.
        stop_below: stop once every member's full training loss is below this value.

    The run takes place on the settings' device (:func:`on_device`); a ``probe`` gets the model there.
    """
    if steps < 1:
        raise ValueError(f"steps must be ≥ 1, got {steps}")
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

    def objective(xb: Tensor, yb: Tensor, dyb: Tensor | None) -> Tensor:
        per_member = mse_per_member(model(xb), yb)
        if loss == "mse+grad":
            per_member = per_member + _gradient_term(model, xb, dyb)
        return per_member

    def batch_loss() -> Tensor:
        if batch_size is None:
            return objective(x, y, dy)
        idx = torch.randperm(x.shape[0], generator=generator)[:batch_size]
        return objective(x[idx], y[..., idx, :], None if dy is None else dy[idx])

    def record(step: int) -> dict[str, Any]:
        row: dict[str, Any] = {"train_loss": objective(x, y, dy).detach()}
        if x_eval is not None:
            with torch.no_grad():
                out = model(x_eval)
            if y_eval is not None:
                row["eval_loss"] = mse_per_member(out, y_eval)
            if keep_outputs:
                row["outputs"] = out
        if probe is not None:
            row.update(probe(model, step))
        return row

    stop = None if stop_below is None else (lambda row: bool(np.all(row["train_loss"] < stop_below)))
    with on_device(model) as device:
        x, y = x.to(device), y.to(device)
        dy, x_eval, y_eval = (None if t is None else t.to(device) for t in (dy, x_eval, y_eval))
        return run(descend(make_optimizer(optimizer, model.parameters(), lr), batch_loss), steps=steps,
                   record=record, record_every=record_every, record_at=record_at, stop=stop, progress=progress,
                   desc=desc)
