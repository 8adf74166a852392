"""Classification with batched ensembles: cross-entropy, accuracy and a full-batch training front end.

:func:`train_classifiers` trains the K members of a :class:`~companion.core.nets.BatchedMLP` on one labelled
data set at once, through the engine (:func:`companion.core.train.run` + :func:`~companion.core.train.descend`):
full-batch Adam on the summed per-member cross-entropies, with an optional **decoupled weight decay per
member** (AdamW's θ ← θ − lr·λ_k·θ, applied after each Adam step, so that members with different λ_k share
one batched computation) and an optional ``after_step`` hook (e.g. re-applying pruning masks).  It records
the training and test loss and accuracy of every member: series ``train_acc``, ``test_acc``, ``train_loss``,
``test_loss``, each (T, K).  The members train on the settings' device (:func:`companion.core.train.on_device`),
and come back to the CPU after.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch
from torch import Tensor, nn

from companion.core.train import History, descend, on_device, run


def cross_entropy(logits: Tensor, labels: Tensor) -> Tensor:
    """Mean cross-entropy per member: logits (K, N, C), labels (N,) or (K, N) → (K,)."""
    K, N, C = logits.shape
    labels = labels.expand(K, N)
    return nn.functional.cross_entropy(logits.reshape(K * N, C), labels.reshape(-1),
                                       reduction="none").reshape(K, N).mean(1)


def accuracy(logits: Tensor, labels: Tensor) -> Tensor:
    """Fraction of correct argmax predictions per member: logits (K, N, C), labels (N,) or (K, N) → (K,)."""
    return (logits.argmax(-1) == labels).float().mean(-1)


def train_classifiers(model: nn.Module, x: Tensor, labels: Tensor, *, steps: int, lr: float,
                      x_test: Tensor | None = None, labels_test: Tensor | None = None,
                      weight_decay: float | Sequence[float] = 0.0, betas: tuple[float, float] = (0.9, 0.999),
                      record_every: int = 10, after_step: Callable[[], None] | None = None,
                      progress: bool = True, desc: str = "training") -> History:
    """Full-batch Adam on the cross-entropy of every member of ``model`` (outputs (K, N, C)); see the module doc.

    Args:
        weight_decay: one λ for all members or one per member (decoupled, as in AdamW).
        after_step: called (without gradient) after every update, with the model on the settings' device.
    """
    if steps < 0 or not lr > 0:
        raise ValueError(f"need steps ≥ 0 and lr > 0, got steps={steps}, lr={lr}")
    first = next(model.parameters())
    n_members = first.shape[0]
    decay = torch.as_tensor(weight_decay, dtype=first.dtype).reshape(-1)
    if decay.numel() == 1:
        decay = decay.expand(n_members)
    if decay.shape != (n_members,) or (decay < 0).any():
        raise ValueError(f"weight_decay must be ≥ 0, one value or one per member ({n_members}); got {weight_decay}")
    decaying = bool((decay > 0).any())
    with on_device(model) as device:
        x, labels = x.to(device), labels.to(device)
        x_test, labels_test = (None if t is None else t.to(device) for t in (x_test, labels_test))
        params = list(model.parameters())  # as they are on the device
        shrink = [(1 - lr * decay).reshape(-1, *([1] * (p.ndim - 1))).to(device) for p in params]
        optimizer = torch.optim.Adam(params, lr=lr, betas=betas)
        adam = descend(optimizer, lambda: cross_entropy(model(x), labels))

        def update(step: int) -> None:
            adam(step)
            with torch.no_grad():
                if decaying:
                    for p, s in zip(params, shrink):
                        p.mul_(s)
                if after_step is not None:
                    after_step()

        def record(step: int) -> dict[str, Tensor]:
            with torch.no_grad():
                out = model(x)
                row = {"train_loss": cross_entropy(out, labels), "train_acc": accuracy(out, labels)}
                if x_test is not None and labels_test is not None:
                    out = model(x_test)
                    row |= {"test_loss": cross_entropy(out, labels_test), "test_acc": accuracy(out, labels_test)}
            return row

        return run(update, steps=steps, record=record, record_every=record_every, progress=progress, desc=desc)


def first_step(steps: np.ndarray, values: np.ndarray, level: float) -> float:
    """The first recorded step at which ``values`` (T,) reaches ``level`` (≥); NaN if it never does."""
    hit = np.flatnonzero(np.asarray(values) >= level)
    return float(steps[hit[0]]) if hit.size else float("nan")
