"""Mode connectivity (Garipov et al. 2018; the book's 图14.9): paths in parameter space between two trained nets.

Parameters are dicts ``{"weights.l": (K, m_l, m_{l+1}), "biases.l": (K, 1, m_{l+1})}`` with a leading member
axis, the layout of :class:`~companion.core.nets.BatchedMLP`.  Two solutions w₁, w₂ are joined by

* the straight line φ(t) = (1 − t) w₁ + t w₂, and
* the quadratic Bézier curve φ_θ(t) = (1 − t)² w₁ + 2t(1 − t) θ + t² w₂, whose bend θ is trained so that
  the loss is low *along the whole curve*: minimise E_{t ~ U[0, 1]} L(φ_θ(t)) (Garipov et al., eq. 4).

A batch of J points φ(t₁) … φ(t_J) is evaluated as one batched computation (:func:`mlp_outputs`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import torch
from torch import Tensor, nn

from companion.core.classify import cross_entropy
from companion.core.train import History, descend, on_device, run

Params = Mapping[str, Tensor]


def member(model: nn.Module, k: int) -> dict[str, Tensor]:
    """Member ``k`` of a batched network's parameters (a detached copy, member axis of size 1)."""
    return {name: p[k:k + 1].detach().clone() for name, p in model.named_parameters()}


def line(w1: Params, w2: Params, t: Tensor) -> dict[str, Tensor]:
    """Points (1 − t) w₁ + t w₂ for t (J,): tensors (J, …) from endpoints with a member axis of size 1."""
    return {n: w1[n] + t.reshape(-1, *[1] * (w1[n].ndim - 1)) * (w2[n] - w1[n]) for n in w1}


def bezier(w1: Params, theta: Params, w2: Params, t: Tensor) -> dict[str, Tensor]:
    """Points (1 − t)² w₁ + 2t(1 − t) θ + t² w₂ of the quadratic Bézier curve for t (J,)."""
    out = {}
    for n in w1:
        s = t.reshape(-1, *[1] * (w1[n].ndim - 1))
        out[n] = (1 - s) ** 2 * w1[n] + 2 * s * (1 - s) * theta[n] + s ** 2 * w2[n]
    return out


def mlp_outputs(points: Params, x: Tensor, act: Callable[[Tensor], Tensor] = torch.relu) -> Tensor:
    """The outputs (J, N, C) of the J fully connected networks ``points`` (BatchedMLP layout) on x (N, d)."""
    n_layers = sum(name.startswith("weights.") for name in points)
    h = x.expand(points["weights.0"].shape[0], *x.shape)
    for l in range(n_layers):
        h = torch.baddbmm(points[f"biases.{l}"], h, points[f"weights.{l}"])  # (J, N, m_{l+1})
        if l < n_layers - 1:
            h = act(h)
    return h


def train_bend(w1: Params, w2: Params, x: Tensor, labels: Tensor, *, steps: int, lr: float, n_points: int = 8,
               act: Callable[[Tensor], Tensor] = torch.relu, generator: torch.Generator,
               record_every: int = 50, progress: bool = True) -> tuple[dict[str, Tensor], History]:
    """Train the bend θ of the Bézier curve from w₁ to w₂, started at the midpoint (w₁ + w₂)/2, with Adam on the
    mean cross-entropy at ``n_points`` stratified random t ∈ [0, 1] per step (t drawn from ``generator``).

    Returns θ and the history of that training loss; ``steps=0`` leaves the straight line.  The bend trains on
    the settings' device (:func:`~companion.core.train.on_device`; θ comes back on the CPU), with the endpoints
    and the data moved there and the t drawn on the CPU and moved; the loss stays there until a record reads it."""
    names = list(w1)
    bend = nn.ParameterList((w1[n] + w2[n]).detach() / 2 for n in names)  # a module, for on_device
    with on_device(bend) as device:
        theta = dict(zip(names, bend))
        w1, w2 = ({n: p.to(device) for n, p in w.items()} for w in (w1, w2))
        x, labels = x.to(device), labels.to(device)

        def curve_loss() -> Tensor:
            t = ((torch.arange(n_points) + torch.rand(n_points, generator=generator)) / n_points).to(device)
            return cross_entropy(mlp_outputs(bezier(w1, theta, w2, t), x, act), labels).mean()

        last: list[Tensor] = []

        def loss() -> Tensor:
            value = curve_loss()
            last[:] = [value.detach()]
            return value

        optimizer = torch.optim.Adam(theta.values(), lr=lr)
        history = run(descend(optimizer, loss), steps=steps,
                      record=lambda step: {"train_loss": float(last[0]) if last else float("nan")},
                      record_every=record_every, progress=progress, desc="Bézier bend")
    return {n: p.detach() for n, p in zip(names, bend)}, history


def path_metrics(points: Params, x: Tensor, labels: Tensor,
                 act: Callable[[Tensor], Tensor] = torch.relu) -> tuple[Tensor, Tensor]:
    """Cross-entropy and accuracy (J,) of the J networks ``points`` on (x, labels)."""
    with torch.no_grad():
        out = mlp_outputs(points, x, act)
    return cross_entropy(out, labels), (out.argmax(-1) == labels).double().mean(-1)
