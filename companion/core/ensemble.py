"""K independent two-layer networks trained as one batched computation (book ch. 7–8).

Each member k is the network of (7.4),

    f_k(x) = (1/α_k) Σ_{j=1}^{m_k} a_{kj} σ(w_{kj}ᵀ x̃),    x̃ = (x, 1) when ``bias=True``,

with a_{kj} ~ N(0, β1_k²) and w_{kj} ~ N(0, β2_k² I) (7.5), trained on R_S = (1/2n) Σ (f − y)² (7.6).
Parameters carry a leading ensemble dimension — ``a`` (K, m), ``w`` (K, m, d̃) — so a grid over
(γ, γ′), init scales, activations' parameters or seeds costs one batched matrix product per
step instead of K Python-level ones.  Members may differ in width (a (K, m) mask zeroes the
padding neurons; their gradients are exactly zero), in β1, β2, α, learning rate, dropout keep
probability and stopping threshold.

:func:`train_ensemble` runs full-batch gradient descent (or Adam) on all members at once through the
one training engine (:func:`companion.core.train.run` and :func:`~companion.core.train.descend`) with:

* per-member step sizes (:class:`MemberwiseStep`), fixed or **Hessian-adaptive**, lr_k = c/‖∇²R_S‖₂
  re-estimated every ``lr_every`` steps by a few steps of the package's power iteration
  (:func:`companion.core.landscape.power_iteration`; the Hessian is block-diagonal across members, so one
  batched HVP serves all K);
* per-member stopping: a member whose risk falls below its threshold is frozen and removed from
  the batch, so the remaining members run faster;
* optional dropout on the hidden layer with the book's keep probability p (§8.4.1);
* recorded risk every ``record_every`` steps and parameter snapshots at chosen steps, in one
  :class:`~companion.core.train.History`;
* the computation on the settings' device (a GPU in the full profile, :func:`companion.core.train.on_device`),
  its bookkeeping and random draws on the CPU, so a seed draws the same dropout masks and start vectors on every
  device.

:class:`TwoLayerNet` is the same network as an ordinary single module; the benchmark trains K of
them in a Python loop to measure what batching buys, and the tests check both agree.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import torch
from torch import Tensor, nn

from companion.core.landscape import power_iteration
from companion.core.nets import activation
from companion.core.train import History, ManualOptimizer, descend, on_device, run
from companion.kit.seeds import generator

OPTIMIZERS = ("gd", "adam")


def _per_member(value: float | Sequence[float] | Tensor, k: int, name: str, dtype: torch.dtype) -> Tensor:
    t = torch.as_tensor(value, dtype=dtype).detach().clone()
    if t.ndim == 0:
        t = t.expand(k).clone()
    if t.shape != (k,):
        raise ValueError(f"{name} must be a scalar or have one value per member ({k},); got shape {tuple(t.shape)}")
    return t


def augment(x: Tensor, bias: bool) -> Tensor:
    """x (N, d) → x̃ = (x, 1) of shape (N, d+1) when ``bias`` (the bias folded into w, §7.2.1)."""
    if x.ndim != 2:
        raise ValueError(f"x must have shape (N, d); got {tuple(x.shape)}")
    return torch.cat([x, torch.ones(len(x), 1, dtype=x.dtype, device=x.device)], dim=1) if bias else x


class TwoLayerEnsemble(nn.Module):
    """K two-layer nets f_k(x) = (1/α_k) Σ_j a_kj σ(w_kjᵀ x̃), eq. (7.4), with a leading ensemble dim.

    Args:
        d_in: input dimension d (without the bias coordinate).
        widths: one width m for all members, or one per member (padding neurons are masked).
        beta1, beta2, alpha: init std of a, init std of w, and the output scale α — scalars or
            one value per member.
        act: activation name (see :func:`companion.core.nets.activation`), ReLU by default.
        bias: append a constant 1 to x so that w_k = (w_k, b_k).
        n_members: K, needed only when every other argument is a scalar.
        dtype: ``torch.float32`` or ``torch.float64`` (the phase diagram uses float64).
        seed: member k is initialised from its own generator seeded ``seed * 100_003 + k`` so a
            member's initial weights do not depend on the rest of the batch.
    """

    def __init__(self, d_in: int, widths: int | Sequence[int], *, beta1: float | Sequence[float] | Tensor = 1.0,
                 beta2: float | Sequence[float] | Tensor = 1.0, alpha: float | Sequence[float] | Tensor = 1.0,
                 act: str = "relu", bias: bool = True, n_members: int | None = None,
                 dtype: torch.dtype = torch.float32, seed: int = 0) -> None:
        super().__init__()
        if dtype not in (torch.float32, torch.float64):
            raise ValueError(f"dtype must be torch.float32 or torch.float64, got {dtype}")
        if d_in < 1:
            raise ValueError(f"d_in must be ≥ 1, got {d_in}")
        sizes = [t.numel() for t in map(torch.as_tensor, (beta1, beta2, alpha, widths)) if t.ndim > 0]
        k = n_members if n_members is not None else (sizes[0] if sizes else 1)
        width_list = [int(widths)] * k if isinstance(widths, (int, np.integer)) else [int(m) for m in widths]
        if len(width_list) != k or min(width_list) < 1:
            raise ValueError(f"widths must be a positive int or {k} positive ints; got {widths}")
        self.act_name, self.bias, self.d_in = act, bool(bias), int(d_in)
        self.act = activation(act)
        self.beta1 = _per_member(beta1, k, "beta1", dtype)
        self.beta2 = _per_member(beta2, k, "beta2", dtype)
        self.register_buffer("alpha", _per_member(alpha, k, "alpha", dtype))
        for name, value in (("beta1", self.beta1), ("beta2", self.beta2), ("alpha", self.alpha)):
            if not bool((value > 0).all()):
                raise ValueError(f"{name} must be positive for every member; got {value.tolist()}")
        m, d = max(width_list), self.d_in + int(self.bias)
        self.widths = width_list
        mask = torch.arange(m)[None, :] < torch.tensor(width_list)[:, None]  # (K, m)
        self.register_buffer("mask", mask.to(dtype))
        a = torch.zeros(k, m, dtype=dtype)
        w = torch.zeros(k, m, d, dtype=dtype)
        for j, width in enumerate(width_list):
            gen = generator(seed * 100_003 + j)
            a[j, :width] = torch.randn(width, generator=gen, dtype=dtype) * self.beta1[j]
            w[j, :width] = torch.randn(width, d, generator=gen, dtype=dtype) * self.beta2[j]
        self.a = nn.Parameter(a)  # (K, m)
        self.w = nn.Parameter(w)  # (K, m, d̃)
        self.register_buffer("a0", a.clone())
        self.register_buffer("w0", w.clone())


    def to_record(self) -> dict:
        """This ensemble as data for the results cache (:mod:`companion.kit.cache`): its settings, weights (initial
        ones included) and mode; :meth:`from_record` rebuilds it bit for bit."""
        return {"d_in": self.d_in, "widths": list(self.widths), "beta1": self.beta1, "beta2": self.beta2,
                "act": self.act_name, "bias": self.bias, "state": dict(self.state_dict()), "training": self.training}

    @classmethod
    def from_record(cls, record: dict) -> TwoLayerEnsemble:
        state = record["state"]
        net = cls(record["d_in"], record["widths"], beta1=record["beta1"], beta2=record["beta2"],
                  alpha=state["alpha"], act=record["act"], bias=record["bias"], dtype=state["a"].dtype)
        net.load_state_dict(state)
        net.beta1, net.beta2 = record["beta1"], record["beta2"]
        return net.train(record["training"])
    @property
    def n_members(self) -> int:
        return self.a.shape[0]

    def hidden(self, x: Tensor, w: Tensor | None = None) -> Tensor:
        """σ(w_kjᵀ x̃_i) for every member, sample and neuron: (N, d) → (K, N, m); padding is zero."""
        w = self.w if w is None else w
        pre = torch.matmul(augment(x.to(w.dtype), self.bias), w.transpose(1, 2))  # (K, N, m)
        return self.act(pre)

    def forward(self, x: Tensor) -> Tensor:
        """x (N, d) → outputs (K, N)."""
        return _output(self.hidden(x), self.a * self.mask, self.alpha)

    def risk(self, x: Tensor, y: Tensor) -> Tensor:
        """R_S (7.6) of every member, shape (K,)."""
        return 0.5 * ((self(x) - y.to(self.a.dtype).reshape(1, -1)) ** 2).mean(dim=1)

    def relative_distance(self) -> np.ndarray:
        """RD(θ_w) = ‖θ_w − θ_w(0)‖ / ‖θ_w(0)‖ (7.3) of every member, shape (K,)."""
        num = (self.w.detach() - self.w0).flatten(1).norm(dim=1)
        return (num / self.w0.flatten(1).norm(dim=1)).cpu().numpy()

    def member(self, k: int) -> TwoLayerNet:
        """Member k as an ordinary :class:`TwoLayerNet` with the same parameters (padding dropped)."""
        if not 0 <= k < self.n_members:
            raise ValueError(f"member index must lie in [0, {self.n_members}), got {k}")
        m = self.widths[k]
        return TwoLayerNet(self.a.detach()[k, :m], self.w.detach()[k, :m], alpha=float(self.alpha[k]),
                           act=self.act_name, bias=self.bias)


def _output(hidden: Tensor, a: Tensor, alpha: Tensor) -> Tensor:
    """(1/α_k) Σ_j a_kj h_kij: hidden (K, N, m), a (K, m), alpha (K,) → (K, N)."""
    return torch.bmm(hidden, a.unsqueeze(-1)).squeeze(-1) / alpha.unsqueeze(-1)


class TwoLayerNet(nn.Module):
    """One network of (7.4) as an ordinary module: a (m,), w (m, d̃); the loop baseline of the benchmark."""

    def __init__(self, a: Tensor, w: Tensor, *, alpha: float = 1.0, act: str = "relu", bias: bool = True) -> None:
        super().__init__()
        if a.ndim != 1 or w.ndim != 2 or w.shape[0] != a.shape[0]:
            raise ValueError(f"need shapes a (m,) and w (m, d); got {tuple(a.shape)} and {tuple(w.shape)}")
        self.a, self.w = nn.Parameter(a.clone()), nn.Parameter(w.clone())
        self.alpha, self.bias, self.act = float(alpha), bool(bias), activation(act)

    def forward(self, x: Tensor) -> Tensor:  # (N, d) -> (N,)
        return self.act(augment(x.to(self.w.dtype), self.bias) @ self.w.T) @ self.a / self.alpha

    def risk(self, x: Tensor, y: Tensor) -> Tensor:
        return 0.5 * ((self(x) - y.to(self.a.dtype).reshape(-1)) ** 2).mean()


class MemberwiseStep(ManualOptimizer):
    """Full-batch gradient descent or Adam with one step size per member.

    Every parameter carries the member dimension first; ``member_lr`` (K,) is broadcast over the
    rest, so member k moves by lr_k·∇_k R_S (GD) or by lr_k·m̂_k/(√v̂_k + ε) (Adam, Kingma & Ba —
    element-wise, so members stay independent).  :meth:`keep_members` drops members (rows) from the
    parameters, the Adam moments and the step sizes when they stop training.
    """

    def __init__(self, params: Sequence[Tensor], member_lr: Tensor, method: str = "gd",
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8) -> None:
        if method not in OPTIMIZERS:
            raise ValueError(f"unknown optimizer {method!r}; choose one of {', '.join(OPTIMIZERS)}")
        super().__init__(params)
        self.member_lr, self.method, self.betas, self.eps, self.t = member_lr, method, betas, eps, 0

    @torch.no_grad()
    def step(self) -> None:
        self.t += 1
        params = [p for group in self.param_groups for p in group["params"]]
        if self.method == "gd":
            for p in params:
                p.sub_(self.member_lr.reshape(-1, *[1] * (p.ndim - 1)) * p.grad)  # lr (K, 1, …)
            return
        # Adam on every parameter at once (torch's _foreach kernels: one call per operation, not one per
        # parameter): m ← β₁m + (1−β₁)g, v ← β₂v + (1−β₂)g², θ ← θ − lr_k/(1−β₁ᵗ) · m / (√v/√(1−β₂ᵗ) + ε)
        b1, b2 = self.betas
        for p in params:
            if not self.state.get(p):
                self.state[p] = {"m": torch.zeros_like(p), "v": torch.zeros_like(p)}
        grads = [p.grad for p in params]
        ms, vs = [self.state[p]["m"] for p in params], [self.state[p]["v"] for p in params]
        torch._foreach_lerp_(ms, grads, 1 - b1)
        torch._foreach_mul_(vs, b2)
        torch._foreach_addcmul_(vs, grads, grads, value=1 - b2)
        denom = torch._foreach_sqrt(vs)
        torch._foreach_div_(denom, math.sqrt(1 - b2 ** self.t))
        torch._foreach_add_(denom, self.eps)
        lr = self.member_lr / (1 - b1 ** self.t)  # (K,)
        moves = torch._foreach_mul(ms, [lr.reshape(-1, *[1] * (p.ndim - 1)) for p in params])
        torch._foreach_addcdiv_(params, moves, denom, value=-1)

    def keep_members(self, rows: Tensor) -> None:
        """Keep only the members ``rows`` (a boolean mask or indices) in parameters, moments and step sizes."""
        for group in self.param_groups:
            for p in group["params"]:
                p.data, p.grad = p.data[rows], None
                self.state[p] = {name: s[rows] for name, s in self.state.get(p, {}).items()}
        self.member_lr = self.member_lr[rows]


def _risk(model: TwoLayerEnsemble, a: Tensor, w: Tensor, alpha: Tensor, mask: Tensor, xt: Tensor, y: Tensor,
          keep: Tensor | None = None, generator: torch.Generator | None = None,
          weight: Tensor | None = None) -> Tensor:
    """R_S (7.6) per member for the sub-batch (a, w); with ``keep`` a dropout mask (1+η) is drawn.

    ``xt`` is (N, d̃) shared by the members or (K', N, d̃) one data set per member, ``y`` (1, N) or (K', N);
    ``weight`` (K', N), if given, weighs the samples: R_S = Σ_i ω_i (f − y)² / (2 Σ_i ω_i) (padding: ω = 0).
    """
    hidden = model.act(torch.matmul(xt, w.transpose(1, 2)))  # (K', N, m)
    if keep is not None:
        p = keep.reshape(-1, 1, 1)
        draw = torch.rand(hidden.shape, generator=generator, dtype=hidden.dtype).to(hidden.device)  # CPU stream
        hidden = hidden * (draw < p) / p  # (1 + η) ⊙ h, §8.4.1
    out = _output(hidden, a * mask, alpha)  # (K', N)
    if weight is None:
        return 0.5 * ((out - y) ** 2).mean(dim=1)
    return 0.5 * (weight * (out - y) ** 2).sum(dim=1) / weight.sum(dim=1)


def hessian_norms(loss_sum: Callable[[Tensor, Tensor], Tensor], a: Tensor, w: Tensor, *, iters: int = 8,
                  generator: torch.Generator) -> Tensor:
    """‖∇²R_S‖₂ of every member, shape (K,): ``iters`` steps of :func:`companion.core.landscape.power_iteration`.

    ``loss_sum(a, w)`` is the SUM of the members' risks; members share no parameter, so the Hessian
    is block-diagonal and one batched Hessian-vector product v ↦ ∇(∇R·v) (reverse over reverse, the
    gradient's graph kept between products) applies every member's block at once.  The start vectors
    are drawn from ``generator``, first for a (K, m), then for w (K, m, d̃).
    """
    a, w = a.detach().requires_grad_(True), w.detach().requires_grad_(True)
    grads = torch.autograd.grad(loss_sum(a, w), [a, w], create_graph=True)
    m = a.shape[1]

    def matvec(v: Tensor) -> Tensor:  # (K, m + m·d̃) → (K, m + m·d̃)
        # H v = ∇(∇R·v), through the scalar ∇R·v: the same products, bit for bit, as grad_outputs=v, without
        # torch's first-call import of sympy (≈ 2 CPU-seconds) that a grad_outputs tensor triggers
        gv = (grads[0] * v[:, :m]).sum() + (grads[1] * v[:, m:].reshape(w.shape)).sum()
        ha, hw = torch.autograd.grad(gv, [a, w], retain_graph=True)
        return torch.cat([ha, hw.flatten(1)], dim=1)

    v0 = torch.cat([torch.randn(a.shape, generator=generator, dtype=a.dtype),
                    torch.randn(w.shape, generator=generator, dtype=w.dtype).flatten(1)], dim=1).to(a.device)
    _, norm, _ = power_iteration(matvec, v0, iters=iters)
    return norm.detach()


def train_ensemble(model: TwoLayerEnsemble, x: Tensor, y: Tensor, *, steps: int,
                   lr: float | Sequence[float] | Tensor | str = "hessian", optimizer: str = "gd",
                   lr_factor: float = 0.5, lr_every: int = 100, power_iters: int = 8,
                   stop_below: float | Sequence[float] | Tensor | None = None,
                   keep: float | Sequence[float] | Tensor | None = None, record_every: int = 100,
                   snapshot_steps: Sequence[int] = (), seed: int = 0, progress: bool = True,
                   desc: str = "ensemble", sample_weight: Tensor | None = None) -> History:
    """Train every member of ``model`` on (x, y) by full-batch GD (or Adam) on R_S (7.6), in place.

    The steps run through :func:`companion.core.train.run`; each is :func:`companion.core.train.descend`
    with a :class:`MemberwiseStep`, preceded every ``lr_every`` steps by the Hessian-adaptive step size
    and, after a record, by freezing the members that met their threshold (they leave the batch).

    Args:
        x, y: training inputs (N, d) and targets (N,) shared by all members, or one data set per member,
            x (K, N, d) and y (K, N) (members with fewer samples padded, their padding given weight 0).
        sample_weight: optional weights ω (K, N) of the samples in R_S = Σ_i ω_i (f − y_i)² / (2 Σ_i ω_i);
            ω ≥ 0 with a positive sum per member (0 marks padding).
        steps: the maximum number of steps.
        lr: a step size (scalar or one per member), or ``"hessian"`` for lr_k = lr_factor/‖∇²R_S‖₂
            re-estimated every ``lr_every`` steps with ``power_iters`` HVPs (GD only).
        optimizer: ``"gd"`` (the book's gradient flow, discretised) or ``"adam"``.
        stop_below: per-member thresholds on R_S; a member stops (is frozen) once its recorded
            risk is below its threshold, the run once every member has.  Checked at each record.
        keep: dropout keep probability p per member (1 = no dropout), §8.4.1.
        record_every: record R_S (without dropout) every so many steps.
        snapshot_steps: steps at which (a, w) of all members are recorded too (the run then records at
            these steps besides every ``record_every``, and keeps (a, w) at every record).
        seed: seeds the dropout masks and the power-iteration start vectors (one generator).

    Returns:
        A :class:`~companion.core.train.History` with series ``risk`` (T, K) — R_S, repeated after a
        member stops —, ``lr`` (T, K) — the step size of the steps taken so far (0 before the first
        Hessian estimate) —, ``converged`` (T, K) when ``stop_below`` is given (see :func:`stopped_at`),
        and ``a`` (T, K, m), ``w`` (T, K, m, d̃) when ``snapshot_steps`` is given.
    """
    if steps < 1 or record_every < 1 or lr_every < 1:
        raise ValueError(f"steps, record_every and lr_every must be ≥ 1; got {steps}, {record_every}, {lr_every}")
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"unknown optimizer {optimizer!r}; choose one of {', '.join(OPTIMIZERS)}")
    k, dtype = model.n_members, model.a.dtype
    adaptive = isinstance(lr, str)
    if adaptive and (lr != "hessian" or optimizer != "gd"):
        raise ValueError(f"lr must be a number, one per member, or 'hessian' (with optimizer 'gd'); got {lr!r}")
    if not lr_factor > 0:
        raise ValueError(f"lr_factor must be positive, got {lr_factor}")
    rate = torch.zeros(k, dtype=dtype) if adaptive else _per_member(lr, k, "lr", dtype)
    if not adaptive and not bool((rate > 0).all()):
        raise ValueError(f"learning rates must be positive; got {rate.tolist()}")
    threshold = None if stop_below is None else _per_member(stop_below, k, "stop_below", dtype)
    keep_t = None if keep is None else _per_member(keep, k, "keep", dtype)
    if keep_t is not None and not bool(((keep_t > 0) & (keep_t <= 1)).all()):
        raise ValueError(f"keep probabilities p must lie in (0, 1]; got {keep_t.tolist()}")
    per_member = x.ndim == 3
    if per_member and (x.shape[0] != k or y.shape != x.shape[:2]):
        raise ValueError(f"per-member data need x (K, N, d) and y (K, N) with K = {k}; got x {tuple(x.shape)}, "
                         f"y {tuple(y.shape)}")
    if not per_member and len(x) != y.numel():
        raise ValueError(f"x has {len(x)} samples but y has {y.numel()} values")
    weight = None
    if sample_weight is not None:
        weight = torch.as_tensor(sample_weight, dtype=dtype)
        n = x.shape[-2]
        if weight.shape != (k, n) or bool((weight < 0).any()) or not bool((weight.sum(dim=1) > 0).all()):
            raise ValueError(f"sample_weight must have shape ({k}, {n}), be ≥ 0 and have a positive sum per "
                             f"member; got shape {tuple(weight.shape)}")
    snaps = sorted({int(s) for s in snapshot_steps})
    if snaps and (snaps[0] < 0 or snaps[-1] > steps):
        raise ValueError(f"snapshot_steps must lie within [0, {steps}], got {list(snapshot_steps)}")

    with on_device(model) as device:  # the settings' device (a GPU in the full profile), the model back home after
        return _train_on(device, model, x, y, steps=steps, adaptive=adaptive, rate=rate, optimizer=optimizer,
                         lr_factor=lr_factor, lr_every=lr_every, power_iters=power_iters, threshold=threshold,
                         keep=keep_t, weight=weight, record_every=record_every, snaps=snaps, seed=seed,
                         progress=progress, desc=desc)


def _train_on(device: torch.device, model: TwoLayerEnsemble, x: Tensor, y: Tensor, *, steps: int, adaptive: bool,
              rate: Tensor, optimizer: str, lr_factor: float, lr_every: int, power_iters: int,
              threshold: Tensor | None, keep: Tensor | None, weight: Tensor | None, record_every: int,
              snaps: list[int], seed: int, progress: bool, desc: str) -> History:
    """The run of :func:`train_ensemble` (arguments checked there) with ``model`` on ``device``.

    The computation — data, parameters, Adam's moments, step sizes, dropout masks — lives on ``device``; the
    bookkeeping — which members still train, their recorded risk, their step sizes and thresholds — on the CPU.
    Random draws (dropout masks, the power iteration's start vectors) come from one CPU generator and are moved,
    so a seed draws the same numbers on every device.
    """
    k, dtype = model.n_members, model.a.dtype
    per_member = x.ndim == 3
    if per_member:  # (K, N, d̃), (K, N)
        xt = torch.stack([augment(xk, model.bias) for xk in x.to(dtype)]).to(device)
        yt = y.to(dtype).to(device)
    else:
        xt = augment(x.to(dtype), model.bias).to(device)  # (N, d̃)
        yt = y.to(dtype).reshape(1, -1).to(device)  # (1, N)
    weight = None if weight is None else weight.to(device)
    gen = generator(seed)
    a, w = nn.Parameter(model.a.detach().clone()), nn.Parameter(model.w.detach().clone())  # members still training
    opt = MemberwiseStep([a, w], rate.clone().to(device), optimizer)
    live = {"idx": torch.arange(k)}
    last_risk = torch.full((k,), float("nan"), dtype=dtype)
    converged = torch.zeros(k, dtype=torch.bool)

    def select() -> None:
        """Per-member constants of the members still training (refreshed when the batch shrinks)."""
        idx = live["idx"].to(device)
        live.update(alpha=model.alpha[idx], mask=model.mask[idx], keep=None if keep is None else keep.to(device)[idx],
                    xt=xt[idx] if per_member else xt, yt=yt[idx] if per_member else yt,
                    weight=None if weight is None else weight[idx])

    def risk(a_: Tensor, w_: Tensor, dropout: bool) -> Tensor:
        return _risk(model, a_, w_, live["alpha"], live["mask"], live["xt"], live["yt"],
                     live["keep"] if dropout else None, gen, live["weight"])

    def record(step: int) -> dict[str, Tensor]:
        idx = live["idx"]
        with torch.no_grad():
            last_risk[idx] = risk(a, w, False).cpu()
        row = {"risk": last_risk.clone(), "lr": rate.clone()}
        if threshold is not None:
            converged[idx] |= last_risk[idx] < threshold[idx]
            row["converged"] = converged.clone()
        if snaps:
            a_full, w_full = model.a.detach().clone(), model.w.detach().clone()
            a_full[idx.to(device)], w_full[idx.to(device)] = a.detach(), w.detach()
            row.update(a=a_full, w=w_full)
        return row

    def freeze_converged() -> None:
        """Write the members that met their threshold back into ``model`` and drop them from the batch."""
        idx = live["idx"]
        done = converged[idx]
        if bool(done.any()):
            on = done.to(device)
            with torch.no_grad():
                model.a[idx[done].to(device)], model.w[idx[done].to(device)] = a.detach()[on], w.detach()[on]
            opt.keep_members(~on)
            live["idx"] = idx[~done]
            select()

    descend_once = descend(opt, lambda: risk(a, w, True))

    def update(step: int) -> None:
        if adaptive and step % lr_every == 0:  # before freezing: the estimate covers the batch as recorded
            norm = hessian_norms(lambda a_, w_: risk(a_, w_, False).sum(), a, w, iters=power_iters, generator=gen)
            rate[live["idx"]] = (lr_factor / norm.clamp_min(1e-30)).cpu()
            opt.member_lr = rate[live["idx"]].to(device)
        if threshold is not None:  # only thresholds freeze members
            freeze_converged()
        descend_once(step)

    select()
    record_at = sorted(set(range(0, steps + 1, record_every)) | {steps} | set(snaps)) if snaps else None
    stop = None if threshold is None else (lambda row: bool(row["converged"].all()))
    history = run(update, steps=steps, record=record, record_every=record_every, record_at=record_at, stop=stop,
                  progress=progress, desc=desc)
    with torch.no_grad():
        model.a[live["idx"].to(device)], model.w[live["idx"].to(device)] = a.detach(), w.detach()
    return history


def stopped_at(history: History) -> np.ndarray:
    """The step at which each member met its threshold, or −1 (from the ``converged`` series), shape (K,)."""
    done = history["converged"]  # (T, K)
    return np.where(done.any(axis=0), history.steps[np.argmax(done, axis=0)], -1)


def train_single(net: TwoLayerNet, x: Tensor, y: Tensor, *, steps: int, lr: float) -> History:
    """Plain full-batch GD on one :class:`TwoLayerNet` with torch.optim.SGD (the loop baseline of the
    benchmark); R_S is recorded at the first and the last step only, so the timing is the training's."""
    if steps < 1 or not lr > 0:
        raise ValueError(f"need steps ≥ 1 and lr > 0; got {steps}, {lr}")
    return run(descend(torch.optim.SGD(net.parameters(), lr=lr), lambda: net.risk(x, y)), steps=steps,
               record=lambda step: {"train_loss": net.risk(x, y).detach()}, record_every=steps, progress=False)


def step_flops(n_members: int, n: int, width: int, d: int) -> float:
    """Floating-point operations of one GD step (forward + backward ≈ 3 × forward) of the ensemble."""
    forward = 2 * n * width * d + 2 * n * width  # x̃ wᵀ, then h a
    return 3.0 * forward * n_members


__all__ = ["TwoLayerEnsemble", "TwoLayerNet", "MemberwiseStep", "train_ensemble", "stopped_at", "train_single",
           "hessian_norms", "augment", "step_flops", "OPTIMIZERS"]
