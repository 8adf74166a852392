"""K independent two-layer networks trained as one batched computation (book ch. 7–8).

Each member k is the network of (7.4),

    f_k(x) = (1/α_k) Σ_{j=1}^{m_k} a_{kj} σ(w_{kj}ᵀ x̃),    x̃ = (x, 1) when ``bias=True``,

with a_{kj} ~ N(0, β1_k²) and w_{kj} ~ N(0, β2_k² I) (7.5), trained on R_S = (1/2n) Σ (f − y)² (7.6).
Parameters carry a leading ensemble dimension — ``a`` (K, m), ``w`` (K, m, d̃) — so a grid over
(γ, γ′), init scales, activations' parameters or seeds costs one batched matrix product per
step instead of K Python-level ones.  Members may differ in width (a (K, m) mask zeroes the
padding neurons; their gradients are exactly zero), in β1, β2, α, learning rate, dropout keep
probability and stopping threshold.

:func:`train_ensemble` runs full-batch gradient descent (or Adam) on all members at once with:

* per-member step sizes, fixed or **Hessian-adaptive**, lr_k = c/‖∇²R_S‖₂ re-estimated every
  ``lr_every`` steps by a few power-iteration Hessian-vector products (the Hessian is
  block-diagonal across members, so one batched HVP serves all K);
* per-member stopping: a member whose risk falls below its threshold is frozen and removed from
  the batch, so the remaining members run faster;
* optional dropout on the hidden layer with the book's keep probability p (§8.4.1);
* recorded risk every ``record_every`` steps and parameter snapshots at chosen steps.

:class:`TwoLayerNet` is the same network as an ordinary single module; the benchmark trains K of
them in a Python loop to measure what batching buys, and the tests check both agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import Tensor, nn

from companion.core.nets import activation

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
            gen = torch.Generator().manual_seed(seed * 100_003 + j)
            a[j, :width] = torch.randn(width, generator=gen, dtype=dtype) * self.beta1[j]
            w[j, :width] = torch.randn(width, d, generator=gen, dtype=dtype) * self.beta2[j]
        self.a = nn.Parameter(a)  # (K, m)
        self.w = nn.Parameter(w)  # (K, m, d̃)
        self.register_buffer("a0", a.clone())
        self.register_buffer("w0", w.clone())

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

    def member(self, k: int) -> "TwoLayerNet":
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


@dataclass
class EnsembleHistory:
    """What :func:`train_ensemble` recorded; arrays indexed (recorded step, member).

    ``risk`` (T, K) is R_S at the recorded ``steps``; after a member stops its last value is
    repeated.  ``stopped_at`` (K,) is the step at which each member met its threshold, or −1.
    ``lr`` (T, K) is the step size in use.  ``snapshots[step] = (a, w)`` with a (K, m), w (K, m, d̃).
    """

    steps: np.ndarray
    risk: np.ndarray
    lr: np.ndarray
    stopped_at: np.ndarray
    snapshots: dict[int, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)

    @property
    def converged(self) -> np.ndarray:
        return self.stopped_at >= 0


def _risk(model: TwoLayerEnsemble, a: Tensor, w: Tensor, alpha: Tensor, mask: Tensor, xt: Tensor, y: Tensor,
          keep: Tensor | None = None, generator: torch.Generator | None = None) -> Tensor:
    """R_S (7.6) per member for the sub-batch (a, w); with ``keep`` a dropout mask (1+η) is drawn."""
    hidden = model.act(torch.matmul(xt, w.transpose(1, 2)))  # (K', N, m)
    if keep is not None:
        p = keep.reshape(-1, 1, 1)
        draw = torch.rand(hidden.shape, generator=generator, dtype=hidden.dtype)
        hidden = hidden * (draw < p) / p  # (1 + η) ⊙ h, §8.4.1
    out = _output(hidden, a * mask, alpha)  # (K', N)
    return 0.5 * ((out - y) ** 2).mean(dim=1)


def top_hessian_norm(loss_sum, params: Sequence[Tensor], *, iters: int = 8,
                     generator: torch.Generator | None = None) -> Tensor:
    """‖∇²R_S‖₂ of every member by ``iters`` power-iteration Hessian-vector products, shape (K,).

    ``loss_sum`` is the SUM of the members' risks as a function of ``params`` (each with a leading
    member dimension); members share no parameter, so the Hessian is block-diagonal and one
    batched HVP v ↦ ∇(∇R·v) applies every member's block at once.  Vectors are normalised per member.
    """
    if iters < 1:
        raise ValueError(f"iters must be ≥ 1, got {iters}")
    params = [p.detach().requires_grad_(True) for p in params]
    grads = torch.autograd.grad(loss_sum(*params), params, create_graph=True)
    v = [torch.randn(p.shape, generator=generator, dtype=p.dtype) for p in params]

    def member_norm(vs: Sequence[Tensor]) -> Tensor:
        return torch.sqrt(sum((t.flatten(1) ** 2).sum(dim=1) for t in vs))  # (K,)

    norm = member_norm(v)
    for _ in range(iters):
        v = [t / norm.clamp_min(1e-300).reshape(-1, *[1] * (t.ndim - 1)) for t in v]
        hv = torch.autograd.grad(grads, params, grad_outputs=v, retain_graph=True)
        norm = member_norm(hv)
        v = [t.detach() for t in hv]
    return norm.detach()


def train_ensemble(model: TwoLayerEnsemble, x: Tensor, y: Tensor, *, steps: int,
                   lr: float | Sequence[float] | Tensor | str = "hessian", optimizer: str = "gd",
                   lr_factor: float = 0.5, lr_every: int = 100, power_iters: int = 8,
                   stop_below: float | Sequence[float] | Tensor | None = None,
                   keep: float | Sequence[float] | Tensor | None = None, record_every: int = 100,
                   snapshot_steps: Sequence[int] = (), seed: int = 0) -> EnsembleHistory:
    """Train every member of ``model`` on (x, y) by full-batch GD (or Adam) on R_S (7.6), in place.

    Args:
        x, y: training inputs (N, d) and targets (N,) shared by all members.
        steps: the maximum number of steps.
        lr: a step size (scalar or one per member), or ``"hessian"`` for lr_k = lr_factor/‖∇²R_S‖₂
            re-estimated every ``lr_every`` steps with ``power_iters`` HVPs (GD only).
        optimizer: ``"gd"`` (the book's gradient flow, discretised) or ``"adam"`` (element-wise, so
            still independent per member).
        stop_below: per-member thresholds on R_S; a member stops (is frozen) once its recorded
            risk is below its threshold.  Checked at each record.
        keep: dropout keep probability p per member (1 = no dropout), §8.4.1.
        record_every: record R_S (without dropout) every so many steps.
        snapshot_steps: steps at which (a, w) of all members are stored.
        seed: seeds the dropout masks and the power-iteration start vectors.
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
    if len(x) != y.numel():
        raise ValueError(f"x has {len(x)} samples but y has {y.numel()} values")

    xt = augment(x.to(dtype), model.bias)  # (N, d̃)
    yt = y.to(dtype).reshape(1, -1)  # (1, N)
    gen = torch.Generator().manual_seed(seed)
    idx = torch.arange(k)  # members still training
    a = model.a.detach().clone()
    w = model.w.detach().clone()
    state = {"m_a": torch.zeros_like(a), "v_a": torch.zeros_like(a), "m_w": torch.zeros_like(w),
             "v_w": torch.zeros_like(w)} if optimizer == "adam" else {}
    stopped_at = np.full(k, -1)
    rows_steps, rows_risk, rows_lr = [], [], []
    last_risk = torch.full((k,), float("nan"), dtype=dtype)
    snapshots: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    snap = set(int(s) for s in snapshot_steps)

    def select(rows: Tensor) -> dict[str, Tensor | None]:
        """Per-member constants of the members still training (refreshed when the batch shrinks)."""
        return {"alpha": model.alpha[rows], "mask": model.mask[rows],
                "keep": None if keep_t is None else keep_t[rows],
                "lr_a": rate[rows].reshape(-1, 1), "lr_w": rate[rows].reshape(-1, 1, 1)}

    sub = select(idx)

    def sub_risk(a_: Tensor, w_: Tensor, with_dropout: bool) -> Tensor:
        kp = sub["keep"] if with_dropout else None
        return _risk(model, a_, w_, sub["alpha"], sub["mask"], xt, yt, kp, gen)

    for step in range(steps + 1):
        if step in snap:
            a_full, w_full = model.a.detach().clone(), model.w.detach().clone()
            a_full[idx], w_full[idx] = a, w
            snapshots[step] = (a_full.numpy().copy(), w_full.numpy().copy())
        if adaptive and step % lr_every == 0 and step < steps:
            norm = top_hessian_norm(lambda a_, w_: sub_risk(a_, w_, False).sum(), [a, w], iters=power_iters,
                                    generator=gen)
            rate[idx] = lr_factor / norm.clamp_min(1e-30)
            sub = select(idx)
        if step % record_every == 0 or step == steps:
            with torch.no_grad():
                last_risk[idx] = sub_risk(a, w, False)
            rows_steps.append(step)
            rows_risk.append(last_risk.numpy().copy())
            rows_lr.append(rate.numpy().copy())
            if threshold is not None:
                done = last_risk[idx] < threshold[idx]
                if bool(done.any()):
                    with torch.no_grad():
                        model.a[idx[done]] = a[done]
                        model.w[idx[done]] = w[done]
                    stopped_at[idx[done].numpy()] = step
                    keep_rows = ~done
                    idx, a, w = idx[keep_rows], a[keep_rows], w[keep_rows]
                    state = {name: s[keep_rows] for name, s in state.items()}
                    sub = select(idx)
                    if len(idx) == 0:
                        break
        if step == steps:
            break
        a_, w_ = a.requires_grad_(True), w.requires_grad_(True)
        ga, gw = torch.autograd.grad(sub_risk(a_, w_, True).sum(), [a_, w_])
        a, w = a_.detach(), w_.detach()
        with torch.no_grad():
            if optimizer == "gd":
                a.sub_(sub["lr_a"] * ga)  # in place: the graph of this step is already discarded
                w.sub_(sub["lr_w"] * gw)
            else:
                a = _adam(a, ga, state, "a", sub["lr_a"], step + 1)
                w = _adam(w, gw, state, "w", sub["lr_w"], step + 1)
    with torch.no_grad():
        model.a[idx], model.w[idx] = a, w
    return EnsembleHistory(steps=np.asarray(rows_steps), risk=np.stack(rows_risk), lr=np.stack(rows_lr),
                           stopped_at=stopped_at, snapshots=snapshots)


def _adam(p: Tensor, g: Tensor, state: dict[str, Tensor], name: str, lr: Tensor, t: int,
          b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8) -> Tensor:
    """One Adam update (Kingma & Ba) with a per-member learning rate; updates ``state`` in place."""
    m, v = state[f"m_{name}"], state[f"v_{name}"]
    m.mul_(b1).add_(g, alpha=1 - b1)
    v.mul_(b2).addcmul_(g, g, value=1 - b2)
    m_hat, v_hat = m / (1 - b1 ** t), v / (1 - b2 ** t)
    return p - lr * m_hat / (v_hat.sqrt() + eps)


def train_single(net: TwoLayerNet, x: Tensor, y: Tensor, *, steps: int, lr: float) -> list[float]:
    """Plain full-batch GD on one :class:`TwoLayerNet` with torch.optim.SGD (the loop baseline)."""
    if steps < 1 or not lr > 0:
        raise ValueError(f"need steps ≥ 1 and lr > 0; got {steps}, {lr}")
    opt = torch.optim.SGD(net.parameters(), lr=lr)
    risks = []
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        r = net.risk(x, y)
        r.backward()
        opt.step()
        risks.append(float(r.detach()))
    return risks


def step_flops(n_members: int, n: int, width: int, d: int) -> float:
    """Floating-point operations of one GD step (forward + backward ≈ 3 × forward) of the ensemble."""
    forward = 2 * n * width * d + 2 * n * width  # x̃ wᵀ, then h a
    return 3.0 * forward * n_members


__all__ = ["TwoLayerEnsemble", "TwoLayerNet", "EnsembleHistory", "train_ensemble", "train_single",
           "top_hessian_norm", "augment", "step_flops", "OPTIMIZERS"]
