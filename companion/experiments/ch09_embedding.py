"""The embedding principle (嵌入原则, book ch. 9): critical embeddings, plateaus and compression.

Two-layer networks follow the book's (9.1) with the bias folded into the input weights:
f_θ(x) = Σ_j a_j σ(w_jᵀx̃), x̃ = (x, 1), output weights ``a`` of shape (m, c) (c outputs) and
input weights ``w`` of shape (m, d+1) — the convention of :mod:`companion.core.neurons`.

* **One-step splitting embedding** T^α_s (图9.3; formalised in Zhang et al. 2021):
  (a_1..a_m; w_1..w_m) ↦ (a_1, …, α a_s, …, a_m, (1−α) a_s; w_1, …, w_m, w_s).  It is linear
  in θ, keeps the output function for every x and every α ∈ R, and maps critical points to
  critical points: ∇_{w′_s}R = α∇_{w_s}R, ∇_{w′_{m+1}}R = (1−α)∇_{w_s}R and
  ∂_{a′_s}R = ∂_{a′_{m+1}}R = ∂_{a_s}R.  :func:`split_neuron`, :func:`split_k` (k copies,
  a composition of one-step splits) and :func:`split_mlp` (deep nets: duplicate row s of
  W^{[l]}, b^{[l]}, split column s of W^{[l+1]}).
* :func:`train_batch` — full-batch GD on many two-layer nets at once (a leading member dimension, widths
  padded to the widest with zero neurons) through the engine :func:`companion.core.train.run`, for
  图9.1/9.2 and 图9.5 (``optimizer="adam"``, all widths one ensemble: :func:`spectrum_runs` on :func:`ladder_target`),
  :func:`loss_spectrum`, :func:`line_share` and
  :func:`brightest_line` (图9.5).
* :func:`best_fits` — many-restart L-BFGS (+ Newton polish) for critical points of narrow nets.
* :func:`group_neurons` / :func:`merge_groups` — compress a condensed wide net into a narrow
  one (图9.8), the inverse of splitting; :func:`compress` runs the chapter's experiment and
  measures what merging contributes beyond pruning, for a condensed run and a control run.
* The chapter's claims (:class:`companion.kit.claims.ClaimSpec`) and their checks: :func:`check_width_plateau`,
  :func:`check_loss_spectrum`, :func:`check_split_identities`, :func:`check_split_hessian`, :func:`check_embedded_saddle` (图9.7(a) on
  :func:`sine_task`, 图9.7(b) on :func:`iris_task`; :func:`stability_matrix` says why a split opens a descent
  direction) and :func:`check_merge`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from scipy.optimize import minimize
from torch import Tensor

from companion.core import neurons as condensation
from companion.core import landscape
from companion.kit.bounds import SEED, Bounds, integer, real
from companion.kit.cache import cached
from companion.kit.claims import (REVALIDATION_SEEDS, VALIDATION_SEEDS, ClaimSpec, Verdict, compare, count,
                                  identity, threshold)
from companion.core.nets import MLP
from companion.core.data import Digits
from companion.core.spectral import delta_f, first_step_below
from companion.core.train import History, descend, run
from companion.kit.config import settings
from companion.kit.seeds import active_seed, generator, numpy_rng

ACTS = ("tanh", "relu")


def _check_act(act: str) -> None:
    if act not in ACTS:
        raise ValueError(f"unknown activation {act!r}; choose one of {', '.join(ACTS)}")


def _sigma(z: Tensor, act: str) -> Tensor:
    """σ(z): tanh or ReLU."""
    return torch.tanh(z) if act == "tanh" else torch.relu(z)


def augment(x: Tensor | np.ndarray) -> Tensor:
    """x̃ = (x, 1): append a constant input so that w_jᵀx̃ = w_j x + b_j; (N,) or (N, d) → (N, d+1)."""
    x = torch.as_tensor(x)
    x = x[:, None] if x.ndim == 1 else x
    return torch.cat([x, torch.ones(x.shape[0], 1, dtype=x.dtype)], dim=1)


def two_layer(a: Tensor, w: Tensor, x_aug: Tensor, act: str = "tanh") -> Tensor:
    """f_θ(x) = Σ_j a_j σ(w_jᵀx̃), eq. (9.1); a (…, m, c), w (…, m, d+1), x̃ (N, d+1) → (…, N, c)."""
    _check_act(act)
    h = _sigma(w @ x_aug.T, act)  # (…, m, N)
    return h.transpose(-1, -2) @ a


def _check_two_layer(a: Tensor, w: Tensor, s: int) -> None:
    if a.ndim != 2 or w.ndim != 2 or a.shape[0] != w.shape[0]:
        raise ValueError(f"need a (m, c) and w (m, d+1) with the same m; got {tuple(a.shape)}, {tuple(w.shape)}")
    if not 0 <= s < a.shape[0]:
        raise ValueError(f"neuron index s={s} out of range [0, {a.shape[0] - 1}]")


def split_neuron(a: Tensor, w: Tensor, s: int, alpha: float) -> tuple[Tensor, Tensor]:
    """The one-step splitting embedding T^α_s: neuron s keeps α a_s, a new last neuron gets (1−α) a_s
    and the same input weights w_s.  Any real α (also outside [0, 1]); returns (a′ (m+1, c), w′)."""
    _check_two_layer(a, w, s)
    a_new = torch.cat([a, (1 - alpha) * a[s:s + 1]])
    a_new[s] = alpha * a[s]
    return a_new, torch.cat([w, w[s:s + 1]])


def split_k(a: Tensor, w: Tensor, s: int, k: int, shares: Sequence[float] | None = None) -> tuple[Tensor, Tensor]:
    """Split neuron s into k copies with output weights c_i a_s, Σ c_i = 1 (default c_i = 1/k).

    Equal to a composition of k−1 one-step splits T^α_s (图9.7 splits one neuron into k copies
    of output a/k); neuron s keeps c_{k−1} a_s and the new neurons m … m+k−2 hold c_0 … c_{k−2}.
    """
    if k < 1:
        raise ValueError(f"k must be ≥ 1, got {k}")
    c = np.full(k, 1.0 / k) if shares is None else np.asarray(shares, dtype=float)
    if c.shape != (k,) or abs(c.sum() - 1) > 1e-12:
        raise ValueError(f"shares must be {k} numbers summing to 1, got {shares}")
    _check_two_layer(a, w, s)
    shares_t = torch.as_tensor(c, dtype=a.dtype)[:, None]
    a_new = torch.cat([a, shares_t[:-1] * a[s:s + 1]])  # new neurons m … m+k−2 hold c_0 … c_{k−2}
    a_new[s] = shares_t[-1, 0] * a[s]
    return a_new, torch.cat([w, w[s:s + 1].expand(k - 1, -1)])


def split_mlp(net: MLP, layer: int, s: int, alpha: float) -> MLP:
    """Deep one-step splitting: in hidden layer ``layer`` (1-based, 1 … L−1) duplicate neuron s.

    Row s of W^{[l]} and entry s of b^{[l]} are copied to a new last row; column s of W^{[l+1]}
    is split into α (kept) and 1 − α (new last column).  The output function is unchanged.
    """
    n_hidden = len(net.widths) - 2
    if not 1 <= layer <= n_hidden:
        raise ValueError(f"layer must lie in [1, {n_hidden}] (hidden layers), got {layer}")
    if not 0 <= s < net.widths[layer]:
        raise ValueError(f"neuron index s={s} out of range [0, {net.widths[layer] - 1}]")
    widths = list(net.widths)
    widths[layer] += 1
    new = MLP(widths, act=net.act, init_std=0.0).to(net.layers[0].weight.dtype)
    with torch.no_grad():
        for i, (old, lin) in enumerate(zip(net.layers, new.layers)):
            wt, b = old.weight.clone(), old.bias.clone()  # (out, in), (out,)
            if i == layer - 1:
                wt, b = torch.cat([wt, wt[s:s + 1]]), torch.cat([b, b[s:s + 1]])
            if i == layer:
                col = wt[:, s:s + 1]
                wt = torch.cat([wt, (1 - alpha) * col], dim=1)
                wt[:, s] = alpha * col[:, 0]
            lin.weight.copy_(wt)
            lin.bias.copy_(b)
    return new


# --- a flat-vector view for Hessians (companion.core.landscape) -----------------------------------

def pack(a: Tensor, w: Tensor) -> Tensor:
    """θ = (a.ravel(), w.ravel()), shape (m(c + d + 1),)."""
    return torch.cat([a.reshape(-1), w.reshape(-1)])


def unpack(theta: Tensor, m: int, c: int, d1: int) -> tuple[Tensor, Tensor]:
    """Inverse of :func:`pack` for m neurons, c outputs and d+1 input weights."""
    if theta.shape != (m * (c + d1),):
        raise ValueError(f"θ must have shape ({m * (c + d1)},) for m={m}, c={c}, d+1={d1}; got {tuple(theta.shape)}")
    return theta[: m * c].reshape(m, c), theta[m * c:].reshape(m, d1)


def half_mse_loss(x_aug: Tensor, y: Tensor, m: int, act: str = "tanh"):
    """R(θ) = (1/2N) Σ_i ‖f_θ(x_i) − y_i‖² as a function of the packed vector θ (for landscape.*)."""
    c, d1 = y.shape[1], x_aug.shape[1]

    def risk(theta: Tensor) -> Tensor:
        a, w = unpack(theta, m, c, d1)
        return 0.5 * ((two_layer(a, w, x_aug.to(theta.dtype), act) - y.to(theta.dtype)) ** 2).sum(-1).mean()

    return risk


# --- batched full-batch gradient descent ------------------------------------------------------

@dataclass
class BatchRun:
    """Result of :func:`train_batch`: K members of ``widths`` (K,), padded to M = max width, and the
    :class:`~companion.core.train.History` of the run, recorded every ``record_every`` steps: series
    ``loss`` (T, K), ``a`` (T, K, M, c) and ``w`` (T, K, M, d+1) at the steps ``history.steps`` (T,)."""

    widths: np.ndarray
    history: History

    @property
    def steps(self) -> np.ndarray:
        return self.history.steps

    @property
    def losses(self) -> np.ndarray:
        return self.history["loss"]

    @property
    def a(self) -> np.ndarray:
        return self.history["a"]

    @property
    def w(self) -> np.ndarray:
        return self.history["w"]

    @property
    def mask(self) -> np.ndarray:
        """(K, M): True for the neurons a member has, False for its padding."""
        return np.arange(self.a.shape[2])[None, :] < self.widths[:, None]


def init_batch(widths: Sequence[int], n_seeds: int, d1: int, c: int, init_std: float,
               gen: torch.Generator, dtype: torch.dtype = torch.float64) -> tuple[Tensor, Tensor, np.ndarray]:
    """K = len(widths)·n_seeds members, all parameters N(0, init_std²), padded with zero neurons to the
    widest; returns a (K, M, c), w (K, M, d+1) and the members' widths (K,)."""
    if not init_std > 0:
        raise ValueError(f"init_std must be positive, got {init_std}")
    if n_seeds < 1 or any(int(m) < 1 for m in widths):
        raise ValueError(f"need n_seeds ≥ 1 and widths ≥ 1; got n_seeds={n_seeds}, widths={list(widths)}")
    per = np.repeat(np.asarray(widths, dtype=int), n_seeds)
    k, m = len(per), int(per.max())
    mask = torch.as_tensor(np.arange(m)[None, :] < per[:, None], dtype=dtype)[..., None]  # (K, M, 1)
    a = torch.randn(k, m, c, generator=gen, dtype=dtype) * init_std * mask
    w = torch.randn(k, m, d1, generator=gen, dtype=dtype) * init_std * mask
    return a, w, per


def half_mse_per_member(a: Tensor, w: Tensor, x_aug: Tensor, y: Tensor, act: str = "tanh") -> Tensor:
    """R_k = (1/2N) Σ_i ‖f_k(x_i) − y_i‖² for every member k of a (K, M, c), w (K, M, d+1) → (K,)."""
    r = two_layer(a, w, x_aug, act) - y  # (K, N, c)
    return 0.5 * (r * r).sum((-2, -1)) / x_aug.shape[0]


def train_batch(x_aug: Tensor, y: Tensor, a: Tensor, w: Tensor, widths: np.ndarray, *, lr: float, steps: int,
                act: str = "tanh", record_every: int = 100, progress: bool = True, optimizer: str = "gd") -> BatchRun:
    """Full-batch gradient descent with step ``lr`` on R_k = (1/2N) Σ‖f_k − y‖² for every member at once
    (``optimizer="adam"``: full-batch Adam with step ``lr`` on the same closed-form gradient, for 图9.5).

    x̃ (N, d+1), y (N, c), a (K, M, c), w (K, M, d+1) (left unchanged).  The members' risks are summed, so
    each gets its own gradient; a padded neuron (a_j = 0, w_j = 0) has zero gradient (σ(0) = 0 for tanh and
    ReLU), so it stays zero.  Records the losses and the parameters every ``record_every`` steps.  The steps run
    on the settings' device (a GPU in the full profile); the records come back as NumPy arrays.
    """
    _check_act(act)
    if not lr > 0 or steps < 1 or record_every < 1:
        raise ValueError(f"need lr > 0, steps ≥ 1, record_every ≥ 1; got {lr}, {steps}, {record_every}")
    if optimizer not in ("gd", "adam"):
        raise ValueError(f"unknown optimizer {optimizer!r}; choose 'gd' or 'adam'")
    device = settings().device
    a, w, n = a.to(device).clone(), w.to(device).clone(), x_aug.shape[0]
    x_aug, y = x_aug.to(device), y.to(device)
    adam = torch.optim.Adam([a, w], lr=lr) if optimizer == "adam" else None

    def gradient_step(step: int) -> None:
        """One step with R_k's closed-form gradient, ∇_a = (1/N) σ(w x̃ᵀ) r and ∇_w = (1/N) (a rᵀ ⊙ σ′) x̃
        (r = f − y): on these small padded batches it is about 3× faster than autograd.  Adam reads it as the
        parameters' ``.grad``; its update is elementwise, so the members stay independent, and a padded neuron
        (zero gradient, zero moments) stays zero."""
        z = w @ x_aug.T  # (K, M, N)
        h = _sigma(z, act)
        dh = 1 - h * h if act == "tanh" else (z > 0).to(z.dtype)
        r = h.transpose(1, 2) @ a - y  # (K, N, c)
        grad_w = ((a @ r.transpose(1, 2)) * dh / n) @ x_aug  # (K, M, d+1)
        grad_a = h @ r / n  # (K, M, c)
        if adam is None:
            a.sub_(lr * grad_a)
            w.sub_(lr * grad_w)
        else:
            a.grad, w.grad = grad_a, grad_w
            adam.step()

    def record(step: int) -> dict[str, Tensor]:
        return {"loss": half_mse_per_member(a, w, x_aug, y, act), "a": a, "w": w}

    history = run(gradient_step, steps=steps, record=record, record_every=record_every, progress=progress,
                  desc=f"GD, {len(widths)} nets")
    return BatchRun(np.asarray(widths), history)


def loss_spectrum(losses: np.ndarray, widths: np.ndarray, bins: int = 200,
                  lo: float = -5.0, hi: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """图9.5: for each width, the fraction of (recorded step, seed) pairs whose log₁₀ loss falls in each bin.

    losses (T, K), widths (K,).  Returns (unique widths (W,), bin edges (bins+1,), fractions (W, bins)).
    """
    if losses.ndim != 2 or losses.shape[1] != len(widths):
        raise ValueError(f"losses must be (T, K) with K = len(widths) = {len(widths)}; got {losses.shape}")
    edges = np.linspace(lo, hi, bins + 1)
    uniq = np.unique(widths)
    logs = np.log10(np.maximum(losses, 1e-300))
    frac = np.stack([np.histogram(logs[:, widths == m].ravel(), bins=edges)[0] / logs[:, widths == m].size
                     for m in uniq])
    return uniq, edges, frac


# --- critical points of narrow nets -----------------------------------------------------------

@dataclass
class Fit:
    """A critical point of a width-m net: loss, a (m, c), w (m, d+1), gradient norm ‖∇R‖₂."""

    loss: float
    a: np.ndarray
    w: np.ndarray
    grad_norm: float


def _risk_and_grad(theta: np.ndarray, x_aug: np.ndarray, y: np.ndarray, m: int, act: str) -> tuple[float, np.ndarray]:
    """R(θ) = (1/2N) Σ‖f_θ(x_i) − y_i‖² and its gradient in NumPy (fast for L-BFGS on tiny nets)."""
    n, d1 = x_aug.shape
    c = y.shape[1]
    a, w = theta[: m * c].reshape(m, c), theta[m * c:].reshape(m, d1)
    z = w @ x_aug.T  # (m, N)
    if act == "tanh":
        h = np.tanh(z)
        dh = 1 - h * h
    else:
        h, dh = np.maximum(z, 0), (z > 0).astype(float)
    r = h.T @ a - y  # (N, c)
    ga = h @ r / n
    gw = ((a @ r.T) * dh) @ x_aug / n
    return 0.5 * float((r * r).sum()) / n, np.concatenate([ga.ravel(), gw.ravel()])


def _polish(theta: np.ndarray, args: tuple, iters: int, eps: float = 1e-6) -> np.ndarray:
    """Newton steps θ ← θ − H⁺∇R while ‖∇R‖ decreases (H by central differences of the exact gradient):
    round-off-level gradients at a nondegenerate critical point."""
    gnorm = np.linalg.norm(_risk_and_grad(theta, *args)[1])
    eye = np.eye(theta.size) * eps
    for _ in range(iters):
        g = _risk_and_grad(theta, *args)[1]
        h = np.stack([_risk_and_grad(theta + e, *args)[1] - _risk_and_grad(theta - e, *args)[1] for e in eye]) / (2 * eps)
        trial = theta - np.linalg.lstsq(0.5 * (h + h.T), g, rcond=1e-12)[0]
        trial_norm = np.linalg.norm(_risk_and_grad(trial, *args)[1])
        if not np.isfinite(trial_norm) or trial_norm >= gnorm:
            break
        theta, gnorm = trial, trial_norm
    return theta


@cached
def best_fits(x_aug: Tensor, y: Tensor, m: int, *, restarts: int = 16, act: str = "tanh", scale: float = 1.0,
              seed: int = 0, polish: int = 8, max_iter: int = 400) -> list[Fit]:
    """Critical points of the width-m net by many-restart L-BFGS (float64) + Newton polish, best first.

    Each restart draws θ ~ N(0, scale²).  The distinct critical losses found are the candidates
    for the plateaus of wider nets (Exercise 20 enumerates them for widths 1–3).  Some restarts
    run off to infinity along a valley (e.g. two neurons whose difference mimics a derivative):
    their gradient stays large; :func:`is_strict_minimum` tells the genuine minima.  SciPy and NumPy on the CPU
    by design, whatever the settings' device: the objective has m(c + d + 1) parameters on a few dozen points, and
    L-BFGS would copy θ and the gradient between NumPy and the device at every iteration, which costs more than
    the whole evaluation.
    """
    _check_act(act)
    if m < 1 or restarts < 1:
        raise ValueError(f"need m ≥ 1 and restarts ≥ 1; got m={m}, restarts={restarts}")
    x_aug, y = x_aug.double(), y.double()
    c, d1 = y.shape[1], x_aug.shape[1]
    args = (x_aug.numpy(), y.numpy(), m, act)
    rng = numpy_rng(seed)
    fits = []
    for _ in range(restarts):
        res = minimize(_risk_and_grad, rng.normal(0, scale, m * (c + d1)), args=args, jac=True,
                       method="L-BFGS-B", options={"maxiter": max_iter, "gtol": 1e-10, "ftol": 1e-16})
        theta = _polish(res.x, args, polish)
        loss, g = _risk_and_grad(theta, *args)
        fits.append(Fit(loss, theta[: m * c].reshape(m, c), theta[m * c:].reshape(m, d1), float(np.linalg.norm(g))))
    return sorted(fits, key=lambda f: f.loss)


def is_strict_minimum(fit: Fit, x_aug: Tensor, y: Tensor, act: str = "tanh", *, max_grad: float = 1e-12,
                      max_norm: float = 100.0) -> bool:
    """A genuine, nondegenerate local minimum: ‖∇R‖ ≤ max_grad, ‖θ‖ ≤ max_norm and every Hessian
    eigenvalue above the zero threshold of :func:`companion.core.landscape.zero_threshold`."""
    theta = pack(torch.as_tensor(fit.a), torch.as_tensor(fit.w))
    if fit.grad_norm > max_grad or float(theta.norm()) > max_norm:
        return False
    risk = half_mse_loss(x_aug.double(), y.double(), len(fit.a), act)
    counts = landscape.inertia(landscape.hessian_spectrum(risk, theta), landscape.zero_threshold(risk, theta))
    return counts.negative == 0 and counts.zero == 0


@cached
def strict_minimum(x_aug: Tensor, y: Tensor, m: int, *, batch: int = 8, max_restarts: int = 96, act: str = "tanh",
                   seed: int = 0) -> tuple[Fit, int]:
    """The lowest strict minimum among restarts of :func:`best_fits`, run in batches of ``batch`` until one
    batch contains a strict minimum; returns it and the number of restarts used.  Raises a ValueError if
    none is found within ``max_restarts``."""
    for used in range(batch, max_restarts + 1, batch):
        fits = best_fits(x_aug, y, m, restarts=batch, act=act, seed=seed * 7919 + used)
        strict = [f for f in fits if is_strict_minimum(f, x_aug, y, act)]
        if strict:
            return strict[0], used
    raise ValueError(f"no strict minimum of the width-{m} net in {max_restarts} restarts; raise max_restarts")


def distinct_losses(fits: Sequence[Fit], rel: float = 1e-4) -> np.ndarray:
    """The distinct loss values among ``fits`` (relative tolerance ``rel``), ascending."""
    values: list[float] = []
    for v in sorted(f.loss for f in fits):
        if not values or abs(v - values[-1]) > rel * max(abs(values[-1]), 1e-12):
            values.append(v)
    return np.asarray(values)


# --- compression by merging condensed neurons (图9.8) -----------------------------------------

def group_neurons(a: np.ndarray, w: np.ndarray, *, cos_threshold: float = 0.99,
                  amp_cutoff: float = 1e-2) -> np.ndarray:
    """Label neurons by direction: −1 for insignificant ones (amplitude ‖a_j‖‖w_j‖ below
    ``amp_cutoff``·max), else greedy groups whose members have cosine ≥ ``cos_threshold`` with the
    group's leader (the largest-amplitude neuron not yet grouped).  Returns labels (m,).
    """
    if not -1 <= cos_threshold <= 1:
        raise ValueError(f"cos_threshold must lie in [-1, 1], got {cos_threshold}")
    if not 0 <= amp_cutoff < 1:
        raise ValueError(f"amp_cutoff must lie in [0, 1), got {amp_cutoff}")
    a2 = a.reshape(len(a), -1)
    amp = condensation.amplitude(np.linalg.norm(a2, axis=1), w)
    labels = np.full(len(a), -1)
    significant = amp >= amp_cutoff * amp.max()
    cos = condensation.cosine_similarity_matrix(w)
    group = 0
    for leader in np.argsort(-amp):
        if not significant[leader] or labels[leader] >= 0:
            continue
        members = significant & (labels < 0) & (cos[leader] >= cos_threshold)
        labels[members] = group
        group += 1
    return labels


def merge_groups(a: np.ndarray, w: np.ndarray, labels: np.ndarray, act: str = "relu") -> tuple[np.ndarray, np.ndarray]:
    """One neuron per group: the inverse of splitting.  a (m, c), w (m, d+1) → (g, c), (g, d+1).

    For ReLU (positively homogeneous) a_j σ(w_jᵀx) = a_j‖w_j‖ σ(ŵ_jᵀx), so the group's neuron has
    direction the amplitude-weighted mean of ŵ_j, norm the mean ‖w_j‖ and output weight
    Σ a_j‖w_j‖ / ‖w_g‖.  For tanh it has the a-weighted mean input weight and Σ a_j (exact when
    the members share w, as after splitting).
    """
    _check_act(act)
    if labels.shape != (len(a),):
        raise ValueError(f"labels must have shape ({len(a)},), got {labels.shape}")
    groups = [np.flatnonzero(labels == g) for g in range(labels.max() + 1)]
    a_new, w_new = [], []
    for idx in groups:
        norms = np.linalg.norm(w[idx], axis=1)
        if act == "relu":
            amp = np.linalg.norm(a[idx].reshape(len(idx), -1), axis=1) * norms
            direction = (amp[:, None] * w[idx] / norms[:, None]).sum(0)
            wg = direction / np.linalg.norm(direction) * norms.mean()
            a_new.append((a[idx] * norms.reshape(-1, *[1] * (a.ndim - 1))).sum(0) / np.linalg.norm(wg))
        else:
            weight = np.abs(a[idx].reshape(len(idx), -1)).sum(1)
            wg = (weight[:, None] * w[idx]).sum(0) / weight.sum()
            a_new.append(a[idx].sum(0))
        w_new.append(wg)
    return np.stack(a_new), np.stack(w_new)


# --- experiments of the chapter ---------------------------------------------------------------

def three_tanh_target(n: int = 64, lo: float = -4.0, hi: float = 4.0) -> tuple[Tensor, Tensor, Tensor]:
    """The 1-D task of 图9.1/9.2: x = linspace(lo, hi, n), f*(x) = tanh(2(x+2)) + tanh(2x) + tanh(2(x−2)).

    Returns x (n,), x̃ (n, 2), y (n, 1) in float64.
    """
    if n < 2 or not hi > lo:
        raise ValueError(f"need n ≥ 2 and hi > lo; got n={n}, lo={lo}, hi={hi}")
    x = torch.linspace(lo, hi, n, dtype=torch.float64)
    y = torch.tanh(2 * (x + 2)) + torch.tanh(2 * x) + torch.tanh(2 * (x - 2))
    return x, augment(x), y[:, None]


@cached
def run_widths(x_aug: Tensor, y: Tensor, widths: Sequence[int], n_seeds: int, *, init_std: float, lr: float,
               steps: int, record_every: int, seed: int, act: str = "tanh", optimizer: str = "gd",
               progress: bool = True) -> dict[int, BatchRun]:
    """Train ``n_seeds`` nets of each width by full-batch GD or Adam (:func:`train_batch`), one batched run per
    width; the initialisations of all widths are drawn in turn from one generator of ``seed``."""
    gen = generator(seed)
    runs = {}
    for m in widths:
        a, w, per = init_batch([m], n_seeds, x_aug.shape[1], y.shape[1], init_std, gen, x_aug.dtype)
        runs[int(m)] = train_batch(x_aug, y, a, w, per, lr=lr, steps=steps, act=act, record_every=record_every,
                                   progress=progress, optimizer=optimizer)
    return runs


@dataclass
class PlateauMatch:
    """Per member of a run, at the recorded step whose loss is closest to the narrow critical loss L*:
    the step, the relative loss gap |L/L* − 1|, ‖f − f*_narrow‖∞ on the training inputs, the
    number of significant neurons and the smallest pairwise |cos| between them (1 = condensed)."""

    step: np.ndarray
    gap: np.ndarray
    sup_diff: np.ndarray
    n_significant: np.ndarray
    min_abs_cos: np.ndarray


def plateau_match(batch: BatchRun, loss_star: float, out_star: np.ndarray, x_aug: Tensor, act: str = "tanh",
                  amp_cutoff: float = 1e-2) -> PlateauMatch:
    """Compare each member with a narrow critical point (loss ``loss_star``, output ``out_star`` (N, c))."""
    snap_loss = batch.losses  # (T, K)
    best = np.argmin(np.abs(snap_loss / loss_star - 1), axis=0)  # (K,)
    rows = []
    for k, s in enumerate(best):
        a, w = batch.a[s, k], batch.w[s, k]
        out = two_layer(torch.as_tensor(a), torch.as_tensor(w), x_aug, act).numpy()
        amp = condensation.amplitude(np.linalg.norm(a, axis=1), w)
        sig = amp >= amp_cutoff * amp.max()
        cos = np.abs(condensation.cosine_similarity_matrix(w[sig]))
        rows.append((batch.steps[s], abs(snap_loss[s, k] / loss_star - 1), np.abs(out - out_star).max(),
                     int(sig.sum()), cos.min()))
    cols = list(zip(*rows))
    return PlateauMatch(*(np.asarray(c) for c in cols))


def gradient_identity_error(a: Tensor, w: Tensor, x_aug: Tensor, y: Tensor, s: int, alpha: float,
                            act: str = "tanh", jitter: float = 0.0) -> tuple[float, float]:
    """Check T^α_s at any θ: returns (max |f_{θ′} − f_θ|, max deviation from the gradient identities
    ∂_{a′_s}R = ∂_{a′_{m+1}}R = ∂_{a_s}R, ∇_{w′_s}R = α∇_{w_s}R, ∇_{w′_{m+1}}R = (1−α)∇_{w_s}R and
    unchanged gradients of the other neurons).

    ``jitter`` > 0 adds that much to the copy's input weights: a near-split that is **not** an
    embedding (a negative control: the identities then fail at the size of the jitter)."""
    m, c, d1 = a.shape[0], a.shape[1], w.shape[1]
    a2, w2 = split_neuron(a, w, s, alpha)
    if jitter:
        w2 = w2.clone()
        w2[-1] += jitter
    out_err = float((two_layer(a2, w2, x_aug, act) - two_layer(a, w, x_aug, act)).abs().max())
    ga, gw = unpack(torch.func.grad(half_mse_loss(x_aug, y, m, act))(pack(a, w)), m, c, d1)
    ga2, gw2 = unpack(torch.func.grad(half_mse_loss(x_aug, y, m + 1, act))(pack(a2, w2)), m + 1, c, d1)
    expect_a = torch.cat([ga, ga[s:s + 1]])
    expect_w = torch.cat([gw, (1 - alpha) * gw[s:s + 1]])
    expect_w[s] = alpha * gw[s]
    grad_err = max(float((ga2 - expect_a).abs().max()), float((gw2 - expect_w).abs().max()))
    return out_err, grad_err


@dataclass
class SplitSpectrum:
    """Hessian spectrum of one net in a chain of splits: width m, eigenvalues (ascending), counts
    at the zero threshold, ‖∇R‖₂ and max |f − f_original| on the data."""

    m: int
    eigenvalues: np.ndarray
    counts: landscape.Inertia
    grad_norm: float
    out_diff: float


@cached
def split_spectra(fit: Fit, x_aug: Tensor, y: Tensor, ks: Sequence[int] = (1, 2, 3), *, s: int | None = None,
                  alpha: float | None = 0.5, factor: float = 1e3, floor: float = 1e-11,
                  act: str = "tanh") -> list[SplitSpectrum]:
    """图9.7: split neuron s (default: the largest amplitude) of a critical point into k copies for each
    k in ``ks`` (k = 1: the point itself); shares (α, (1−α)/(k−1), …), or with ``alpha=None`` the book's
    equal shares 1/k.  Float64 Hessians, counted with the threshold max(floor, factor·‖∇R‖) of
    :func:`companion.core.landscape.zero_threshold`."""
    a, w = torch.as_tensor(fit.a, dtype=torch.float64), torch.as_tensor(fit.w, dtype=torch.float64)
    x_aug, y = x_aug.double(), y.double()
    if s is None:
        s = int(np.argmax(condensation.amplitude(np.linalg.norm(fit.a, axis=1), fit.w)))
    base = two_layer(a, w, x_aug, act)
    out = []
    for k in ks:
        shares = None if k == 1 or alpha is None else [alpha] + [(1 - alpha) / (k - 1)] * (k - 1)
        a2, w2 = split_k(a, w, s, k, shares)
        risk = half_mse_loss(x_aug, y, a2.shape[0], act)
        theta = pack(a2, w2)
        eig = landscape.hessian_spectrum(risk, theta)
        thr = landscape.zero_threshold(risk, theta, factor=factor, floor=floor)
        out.append(SplitSpectrum(a2.shape[0], eig, landscape.inertia(eig, thr),
                                 float(landscape.gradient(risk, theta).norm()),
                                 float((two_layer(a2, w2, x_aug, act) - base).abs().max())))
    return out


def sine_task() -> tuple[Tensor, Tensor, Tensor]:
    """The data of 图9.7: x = linspace(−1, 1, 20), y = sin 3x + 0.5 cos 7x; returns x, x̃ (20, 2), y (20, 1)."""
    x = torch.linspace(-1, 1, 20, dtype=torch.float64)
    return x, augment(x), (torch.sin(3 * x) + 0.5 * torch.cos(7 * x))[:, None]


def iris_task() -> tuple[Tensor, Tensor]:
    """The data of 图9.7(b): the 150 Iris flowers (scikit-learn's copy, no download), each of the four features
    standardised, x̃ = (x, 1) (150, 5); targets the one-hot classes minus their mean 1/3 (150, 3), since (9.1)
    has no output bias.  (With uncentred one-hot targets L-BFGS runs off to saturated neurons at infinity.)"""
    from sklearn.datasets import load_iris

    iris = load_iris()
    x = torch.as_tensor((iris.data - iris.data.mean(0)) / iris.data.std(0), dtype=torch.float64)
    return augment(x), torch.eye(3, dtype=torch.float64)[torch.as_tensor(iris.target)] - 1 / 3


def stability_matrix(fit: Fit, x_aug: Tensor, y: Tensor, s: int, act: str = "tanh") -> np.ndarray:
    """S_s = (1/N) Σ_i (a_sᵀ r_i) σ''(w_sᵀx̃_i) x̃_i x̃_iᵀ (r = f − y), the curvature that splitting neuron s opens up
    (Fukumizu & Amari 2000; Zhang et al. 2021b): for one output, moving the copies' input weights apart,
    w_s + (1−α)u and w_s − αu, changes R by ½ α(1−α) uᵀS_s u to second order.  An indefinite S_s makes every split
    with α ∉ {0, 1} a saddle; at α ∈ {0, 1} (a copy with no output weight) only zero eigenvalues are added."""
    if act != "tanh":
        raise ValueError("stability_matrix is written for tanh (σ'' = −2σ(1 − σ²))")
    xa, a, w = x_aug.double().numpy(), np.asarray(fit.a), np.asarray(fit.w)
    h = np.tanh(xa @ w.T)  # (N, m)
    r = h @ a - y.double().numpy()  # (N, c)
    coef = (r @ a[s]) * (-2 * h[:, s] * (1 - h[:, s] ** 2)) / len(xa)
    return (xa.T * coef) @ xa


def plateau_sharpness(fit: Fit, x_aug: Tensor, y: Tensor, widths: Sequence[int], act: str = "tanh") -> np.ndarray:
    """λ_max of the Hessian at the width-m image of a critical point (its largest-amplitude neuron split into
    equal shares), for each m in ``widths``.  Gradient descent with learning rate η can only settle on that
    plateau when λ_max < 2/η (the linear stability of GD): this decides the learning rate of 图9.1/9.2."""
    a, w = torch.as_tensor(fit.a, dtype=torch.float64), torch.as_tensor(fit.w, dtype=torch.float64)
    x_aug, y = x_aug.double(), y.double()
    s = int(np.argmax(condensation.amplitude(np.linalg.norm(fit.a, axis=1), fit.w)))
    out = []
    for m in widths:
        if m < len(a):
            raise ValueError(f"width {m} is narrower than the critical point's {len(a)} neurons")
        a2, w2 = split_k(a, w, s, m - len(a) + 1)
        out.append(float(landscape.hessian_spectrum(half_mse_loss(x_aug, y, m, act), pack(a2, w2)).max()))
    return np.asarray(out)


@cached
def split_identity_errors(x_aug: Tensor, y: Tensor, seed: int, *,
                          alphas: Sequence[float] = (-0.5, 0.3, 1.7), width: int = 3, s: int = 1,
                          act: str = "tanh", jitter: float = 0.0) -> np.ndarray:
    """图9.3: :func:`gradient_identity_error` at a random point N(0, 1) (drawn from ``seed``) of a width-``width``
    net for each α; returns (len(alphas), 2): max output error and max gradient-identity error."""
    gen = generator(seed)
    rows = []
    for alpha in alphas:
        a0 = torch.randn(width, y.shape[1], generator=gen, dtype=torch.float64)
        w0 = torch.randn(width, x_aug.shape[1], generator=gen, dtype=torch.float64)
        rows.append(gradient_identity_error(a0, w0, x_aug.double(), y.double(), s, alpha, act, jitter))
    return np.asarray(rows)


def predict(a: np.ndarray, w: np.ndarray, x_aug: Tensor, act: str = "relu") -> np.ndarray:
    """Outputs (N, c) of the two-layer net (a, w) on x̃ as a NumPy array."""
    return two_layer(torch.as_tensor(a), torch.as_tensor(w).to(torch.as_tensor(a).dtype), x_aug.to(torch.as_tensor(a).dtype),
                     act).numpy()


def half_mse(out: np.ndarray, y: Tensor | np.ndarray) -> float:
    """R = (1/2N) Σ_i ‖f(x_i) − y_i‖²."""
    return float(0.5 * ((out - np.asarray(y)) ** 2).sum(1).mean())


@dataclass
class Compression:
    """One run of 图9.8: the wide net (a, w) after training, its neuron groups (``labels``, −1 = pruned as
    insignificant) and the merged net; training losses of the wide, merged and *pruned-to-the-same-width*
    net (the ``n_groups`` largest-amplitude neurons kept unchanged, the others dropped: what the width
    reduction gives without merging); test-prediction agreement of merged and pruned nets with the wide one."""

    init_std: float
    steps: int
    a: np.ndarray
    w: np.ndarray
    labels: np.ndarray
    a_merged: np.ndarray
    w_merged: np.ndarray
    loss_wide: float
    loss_merged: float
    loss_pruned: float
    agreement: float
    agreement_pruned: float
    accuracy_wide: float
    accuracy_merged: float

    @property
    def width(self) -> int:
        return len(self.a)

    @property
    def n_significant(self) -> int:
        """Neurons kept by the amplitude cutoff (pruning)."""
        return int((self.labels >= 0).sum())

    @property
    def n_groups(self) -> int:
        """Width of the merged net."""
        return len(self.a_merged)

    @property
    def merge_factor(self) -> float:
        """What merging alone removes: significant neurons per merged neuron (1 = nothing merged)."""
        return self.n_significant / self.n_groups

    @property
    def loss_change(self) -> float:
        return abs(self.loss_merged / self.loss_wide - 1)

    @property
    def loss_change_pruned(self) -> float:
        return abs(self.loss_pruned / self.loss_wide - 1)


@cached
def compress(data: Digits, *, width: int, init_std: float, steps: int, lr: float, seed: int,
             cos_threshold: float = 0.95, amp_cutoff: float = 0.02, act: str = "relu") -> Compression:
    """图9.8: train a width-``width`` two-layer net on the digits ``data`` (inputs x̃ = (x, 1), one-hot targets) by
    full-batch GD from N(0, init_std²) drawn from ``seed`` (``steps`` = 0: untrained), prune neurons below
    ``amp_cutoff`` of the largest amplitude, merge groups of cosine ≥ ``cos_threshold`` (:func:`group_neurons`,
    :func:`merge_groups`) and measure what merging keeps against pruning alone.  The training runs on the settings'
    device (:func:`train_batch`); pruning, merging and the measurements are NumPy on the CPU."""
    x_aug, y, x_test, labels_test = augment(data.x), data.one_hot(), augment(data.x_test), data.labels_test.numpy()
    a, w, per = init_batch([width], 1, x_aug.shape[1], y.shape[1], init_std, generator(seed), dtype=x_aug.dtype)
    if steps > 0:
        trained = train_batch(x_aug, y, a, w, per, lr=lr, steps=steps, act=act, record_every=steps, progress=False)
        a_w, w_w = trained.a[-1, 0], trained.w[-1, 0]
    else:
        a_w, w_w = a[0].numpy(), w[0].numpy()
    labels = group_neurons(a_w, w_w, cos_threshold=cos_threshold, amp_cutoff=amp_cutoff)
    a_m, w_m = merge_groups(a_w, w_w, labels, act=act)
    top = np.argsort(-condensation.amplitude(np.linalg.norm(a_w, axis=1), w_w), kind="stable")[:len(a_m)]
    out_wide, out_merged, out_pruned = (predict(a_, w_, x_aug, act) for a_, w_ in ((a_w, w_w), (a_m, w_m), (a_w[top], w_w[top])))
    test_wide, test_merged, test_pruned = (predict(a_, w_, x_test, act).argmax(1)
                                           for a_, w_ in ((a_w, w_w), (a_m, w_m), (a_w[top], w_w[top])))
    return Compression(init_std, steps, a_w, w_w, labels, a_m, w_m, half_mse(out_wide, y), half_mse(out_merged, y),
                       half_mse(out_pruned, y), float((test_merged == test_wide).mean()),
                       float((test_pruned == test_wide).mean()), float((test_wide == labels_test).mean()),
                       float((test_merged == labels_test).mean()))


# --- the learning path of one wide net (图9.4) ---------------------------------------------------

def staircase_target(n: int = 80, lo: float = -10.0, hi: float = 10.0) -> tuple[Tensor, Tensor, Tensor]:
    """The 1-D task of 图9.4 (and 习题20): f*(x) = tanh(x − 7) + tanh(x) + tanh(x + 7) on x = linspace(lo, hi, n).

    Returns x (n,), x̃ (n, 2), y (n, 1) in float64.
    """
    if n < 2 or not hi > lo:
        raise ValueError(f"need n ≥ 2 and hi > lo; got n={n}, lo={lo}, hi={hi}")
    x = torch.linspace(lo, hi, n, dtype=torch.float64)
    y = torch.tanh(x - 7) + torch.tanh(x) + torch.tanh(x + 7)
    return x, augment(x), y[:, None]


def ladder_target(n: int = 80, lo: float = -10.0, hi: float = 10.0) -> tuple[Tensor, Tensor, Tensor]:
    """The 1-D task of our 图9.5: ten tanh steps of geometrically falling heights,
    f*(x) = Σ_{i=0}^{9} 0.75^i tanh(2(x − s_i)), the step positions s_i a fixed shuffle of −9, −7, …, 9 (see
    :data:`LADDER_POSITIONS`).  Each extra neuron can take one more step, so the best loss of a width-m net falls with
    m for every width up to 10 and beyond (the steps overlap): widths 1 … 16 all have distinct critical losses.

    Returns x (n,), x̃ (n, 2), y (n, 1) in float64."""
    if n < 2 or not hi > lo:
        raise ValueError(f"need n ≥ 2 and hi > lo; got n={n}, lo={lo}, hi={hi}")
    x = torch.linspace(lo, hi, n, dtype=torch.float64)
    y = sum(0.75 ** i * torch.tanh(2 * (x - s)) for i, s in enumerate(LADDER_POSITIONS))
    return x, augment(x), y[:, None]


#: The positions s_i of :func:`ladder_target`'s steps, highest step first (a fixed shuffle of −9, −7, …, 9).
LADDER_POSITIONS = (-1.0, 3.0, -5.0, 5.0, -3.0, 1.0, 9.0, -9.0, 7.0, -7.0)


@cached
def spectrum_runs(x_aug: Tensor, y: Tensor, widths: Sequence[int], n_runs: int, *, init_std: float, lr: float,
                  steps: int, record_every: int, seed: int, progress: bool = True) -> BatchRun:
    """图9.5's runs: ``n_runs`` nets of every width in ``widths`` as **one** ensemble (members padded with zero
    neurons to the widest, :func:`init_batch`), every parameter N(0, init_std²) drawn from ``seed``, trained by
    full-batch Adam with step ``lr`` (:func:`train_batch`); the returned run's ``widths`` (K,) say which width each
    member has, as :func:`loss_spectrum` wants."""
    a, w, per = init_batch(widths, n_runs, x_aug.shape[1], y.shape[1], init_std, generator(seed), x_aug.dtype)
    return train_batch(x_aug, y, a, w, per, lr=lr, steps=steps, record_every=record_every, progress=progress,
                       optimizer="adam")


@dataclass
class LearningPath:
    """图9.4: the training path of one wide two-layer net against the width-1 optimum ``narrow`` of the same task.

    ``outputs`` (T, N) and ``losses`` (T,) at the recorded ``steps`` (T,); ``delta`` (T, len(ks)) the relative
    error Δ_F(k) = |ĥ_k − f̂_k| / |f̂_k| of each recorded output at the frequencies ``ks`` (DFT over the N
    sample points, :func:`companion.core.spectral.delta_f`)."""

    width: int
    x: np.ndarray
    y: np.ndarray
    steps: np.ndarray
    losses: np.ndarray
    outputs: np.ndarray
    narrow: Fit
    out_narrow: np.ndarray
    ks: np.ndarray
    delta: np.ndarray

    @property
    def plateau_index(self) -> int:
        """The recorded step whose loss is closest (relatively) to the width-1 optimum's loss L1*."""
        return int(np.argmin(np.abs(self.losses / self.narrow.loss - 1)))

    @property
    def plateau_step(self) -> float:
        return float(self.steps[self.plateau_index])

    @property
    def plateau_gap(self) -> float:
        """|L/L1* − 1| at the plateau step."""
        return float(abs(self.losses[self.plateau_index] / self.narrow.loss - 1))

    @property
    def plateau_sup(self) -> float:
        """max_i |f(x_i) − f1*(x_i)| at the plateau step."""
        return float(np.abs(self.outputs[self.plateau_index] - self.out_narrow).max())

    def first_fitted(self, threshold: float = 0.1) -> np.ndarray:
        """Per frequency of ``ks``, the first recorded step with Δ_F(k) < ``threshold`` (NaN: never)."""
        return first_step_below(self.delta, self.steps, threshold)

    def narrow_delta(self) -> np.ndarray:
        """Δ_F(k) of the width-1 optimum's output itself, per frequency of ``ks``."""
        return delta_f(self.out_narrow, self.y, self.ks)


@cached
def learning_path(width: int = 500, *, init_std: float = 1e-3, lr: float = 0.05, steps: int = 40_000,
                  record_every: int = 100, seed: int = 0, n: int = 80, ks: Sequence[int] = tuple(range(1, 9)),
                  restarts: int = 16, act: str = "tanh", optimizer: str = "gd", progress: bool = True) -> LearningPath:
    """图9.4: train one width-``width`` two-layer net on :func:`staircase_target` by full-batch GD from N(0, init_std²)
    (:func:`train_batch`; ``optimizer="adam"``: full-batch Adam through the engine) and follow its outputs and their spectra; the width-1 optimum comes from
    ``restarts`` L-BFGS restarts (:func:`best_fits`).  Streams of ``seed``: 0 the restarts, 1 the initialisation."""
    x, xa, y = staircase_target(n)
    narrow = best_fits(xa, y, 1, restarts=restarts, act=act, seed=seed)[0]
    out_narrow = predict(narrow.a, narrow.w, xa, act)[:, 0]
    a, w, per = init_batch([width], 1, xa.shape[1], y.shape[1], init_std, generator(seed, 1), xa.dtype)
    if optimizer == "gd":
        run_ = train_batch(xa, y, a, w, per, lr=lr, steps=steps, act=act, record_every=record_every, progress=progress)
        history, a_hist, w_hist = run_.history, run_.a[:, 0], run_.w[:, 0]
    elif optimizer == "adam":
        device = settings().device  # as in train_batch: the steps on the settings' device, the records in NumPy
        a, w, x_on, y_on = a.to(device).requires_grad_(), w.to(device).requires_grad_(), xa.to(device), y.to(device)
        update = descend(torch.optim.Adam([a, w], lr=lr), lambda: half_mse_per_member(a, w, x_on, y_on, act))
        history = run(update, steps=steps, record_every=record_every, progress=progress, desc="图9.4, Adam",
                      record=lambda step: {"loss": half_mse_per_member(a, w, x_on, y_on, act), "a": a, "w": w})
        a_hist, w_hist = history["a"][:, 0], history["w"][:, 0]
    else:
        raise ValueError(f"unknown optimizer {optimizer!r}; choose 'gd' or 'adam'")
    aa, ww = torch.as_tensor(a_hist), torch.as_tensor(w_hist)  # (T, M, 1), (T, M, 2)
    outputs = two_layer(aa, ww, xa, act).numpy()[..., 0]  # (T, N)
    ks = np.asarray(ks)
    y_np = y[:, 0].numpy()
    return LearningPath(width, x.numpy(), y_np, history.steps, history["loss"][:, 0], outputs, narrow, out_narrow, ks,
                        delta_f(outputs, y_np, ks))


# --- the chapter's claims ---------------------------------------------------------------------

WIDTH_PLATEAU = ClaimSpec(
    "ch09.width-plateau", "图9.1/9.2",
    "every net of width ≥ 3 stalls within 1% of the width-1 optimum's loss, with the same output "
    "(‖f − f1*‖∞ < 0.02) and all significant neurons on one line (|cos| > 0.99)")
SPLIT_IDENTITIES = ClaimSpec(
    "ch09.split-identities", "图9.3",
    "splitting keeps the output and obeys the gradient identities exactly, also for α outside [0, 1]", kind="identity")
SPLIT_HESSIAN = ClaimSpec(
    "ch09.split-hessian", "图9.7",
    "splitting a strict minimum keeps output and criticality; negative and zero counts never decrease "
    "and every split adds zero eigenvalues", kind="identity")
MERGE = ClaimSpec(
    "ch09.merge-compression", "图9.8",
    "merging condensed neurons keeps the wide net's test predictions (≥ 97% agree) and training loss (within 10%); "
    "it removes more neurons than the same merge on a non-condensed control run and changes the loss less than "
    "dropping those neurons; with the pruning of low-amplitude neurons the width shrinks ≥ 4× (the book, on MNIST: "
    "400 → 58 neurons, 6.9×, with 98.5 % of predictions kept)")


LOSS_SPECTRUM = ClaimSpec(
    "ch09.loss-spectrum", "图9.5",
    "on the ten-step ladder target (Adam, init std 10⁻⁴, 16 runs of each width 1, 2, 3, 4, 6, 8, 16) the loss "
    "spectrum is discrete, shared and ordered by width: (i) for every width, 3 of the 200 bins of log₁₀ loss hold "
    "≥ 15 % of all (step, run) pairs; (ii) widths 8 and 16 each spend ≥ 8 % of them within one bin of the line where "
    "the width-2 runs end (a width-2 critical point); (iii) the median final loss falls strictly from each width to "
    "the next wider one",
    validation_seeds=VALIDATION_SEEDS + REVALIDATION_SEEDS)

#: 图9.5's widths and runs per width (the book: 100 runs a width), and the claim's bounds: the least share of the
#: (step, run) pairs in a width's :data:`TOP_BINS` brightest bins, the narrow width whose line the wide ones share,
#: the least share of a wide width's pairs within :data:`LINE_HALF_WIDTH` (in log₁₀ loss: one bin) of that line,
#: and the widths that must hold it.
SPECTRUM_WIDTHS = (1, 2, 3, 4, 6, 8, 16)
TOP_BINS, TOP_SHARE = 3, 0.15
LINE_WIDTH, LINE_HALF_WIDTH, LINE_SHARE, LINE_MIN_WIDTH = 2, 0.025, 0.08, 8


def members(batch: BatchRun, width: int) -> BatchRun:
    """The members of one width of a mixed-width :func:`spectrum_runs` ensemble, as a run of their own (losses only)."""
    keep = batch.widths == width
    if not keep.any():
        raise ValueError(f"no member of width {width}; the run has widths {np.unique(batch.widths).tolist()}")
    return BatchRun(batch.widths[keep], History(batch.steps, series={"loss": batch.losses[:, keep]}))


def line_share(batch: BatchRun, width: int, loss: float, half_width: float = LINE_HALF_WIDTH) -> float:
    """The share of one width's (recorded step, run) pairs whose log₁₀ loss lies within ``half_width`` of
    log₁₀ ``loss``: how much of its spectrum sits on that line."""
    logs = np.log10(np.maximum(members(batch, width).losses, 1e-300))
    return float((np.abs(logs - np.log10(loss)) <= half_width).mean())


def check_loss_spectrum(batch: BatchRun) -> Verdict:
    """图9.5 on one :func:`spectrum_runs` ensemble of several widths.

    (i) Discrete lines: for every width, its :data:`TOP_BINS` brightest bins of :func:`loss_spectrum` (200 bins on
    log₁₀ loss ∈ [−5, 0]) hold ≥ :data:`TOP_SHARE` of its (step, run) pairs (a loss falling at a steady pace through
    the 2–3 decades these runs cross would put 3–4 % there).  (ii) Shared lines: every width ≥ :data:`LINE_MIN_WIDTH`
    has ≥ :data:`LINE_SHARE` of its pairs within one bin of the brightest line of width :data:`LINE_WIDTH`
    (:func:`brightest_line`, where those runs end: a narrow net's critical point, embedded in the wide nets'
    landscapes).  (iii) Wider ends lower: the median over runs of the final loss falls strictly from each width to the
    next wider one."""
    uniq, _, frac = loss_spectrum(batch.losses, batch.widths)
    top = np.sort(frac, axis=1)[:, ::-1][:, :TOP_BINS].sum(1)  # (W,)
    line = brightest_line(members(batch, LINE_WIDTH))
    final = [float(np.median(members(batch, int(m)).losses[-1])) for m in uniq]
    conditions = [threshold(f"top-{TOP_BINS} bin share, m={m}", t, ">=", TOP_SHARE) for m, t in zip(uniq, top)]
    conditions += [threshold(f"share within one bin of the m={LINE_WIDTH} line, m={m}",
                             line_share(batch, int(m), line.loss), ">=", LINE_SHARE)
                   for m in uniq if m >= LINE_MIN_WIDTH]
    conditions += [compare(f"median final loss m={m2}", f2, "<", f"m={m1}", f1)
                   for m1, f1, m2, f2 in zip(uniq, final, uniq[1:], final[1:])]
    return LOSS_SPECTRUM.judge(*conditions, line=line.loss, widths=uniq.tolist(),
                               runs=int((batch.widths == uniq[0]).sum()))


SADDLE_1D = ClaimSpec(
    "ch09.saddle-1d", "图9.7(a)",
    "the trained width-2 minimum (‖∇R‖ ≤ 10⁻¹⁰, no negative eigenvalue) becomes a strict saddle when one neuron is "
    "split into k = 2, 3 equal copies: each split adds ≥ 1 negative Hessian eigenvalue (book: 0 → 1 → 2), the most "
    "negative one beyond 10⁻⁶ of the largest")
SADDLE_IRIS = ClaimSpec(
    "ch09.saddle-iris", "图9.7(b)",
    "on Iris, splitting one neuron of the trained width-2 critical point (‖∇R‖ ≤ 10⁻¹⁰) into k = 2, 3 equal copies "
    "adds ≥ 1 negative Hessian eigenvalue at each split (book: 3 → 5 → 7), the most negative one beyond 10⁻⁶ of "
    "the largest: a strict saddle")

#: A strict saddle's most negative eigenvalue must exceed this fraction of the largest one (round-off is ~10⁻¹⁴).
SADDLE_REL_TOL = 1e-6


LEARNING_PATH = ClaimSpec(
    "ch09.learning-path", "图9.4",
    "a wide net first reaches the width-1 optimum (within 1% of its loss, ‖f − f1*‖∞ < 0.02), having fitted the "
    "low frequency but not the high one, and only then fits the target (final loss < 1% of L1*)")

#: The frequencies compared in 图9.4 (DFT over the 80 sample points): the width-1 optimum itself matches the target
#: at k = 1 (Δ_F < 0.1) but not at k = 3, the frequency of the three steps 7 apart on an interval of length 20.
K_LOW, K_HIGH = 1, 3


def check_learning_path(path: LearningPath, k_low: int = K_LOW, k_high: int = K_HIGH,
                        threshold_f: float = 0.1) -> Verdict:
    """图9.4: at the recorded step closest to L1* the loss gap is < 1% and the output within 0.02 of the width-1
    optimum; the frequency k_low was fitted (Δ_F < 0.1) before that step and k_high only after it; the final
    loss is below 1% of L1*.  A frequency never fitted is NaN: the condition fails."""
    first = dict(zip(path.ks.tolist(), path.first_fitted(threshold_f)))
    return LEARNING_PATH.judge(
        threshold("|L/L1* − 1| at the plateau", path.plateau_gap, "<", 0.01),
        threshold("‖f − f1*‖∞ at the plateau", path.plateau_sup, "<", 0.02),
        compare(f"first step Δ_F(k={k_low}) < {threshold_f:g}", first[k_low], "<", "plateau step", path.plateau_step),
        compare("plateau step", path.plateau_step, "<", f"first step Δ_F(k={k_high}) < {threshold_f:g}", first[k_high]),
        threshold("final loss / L1*", float(path.losses[-1] / path.narrow.loss), "<", 0.01),
        width=path.width, loss_narrow=path.narrow.loss)


def check_width_plateau(matches: dict[int, PlateauMatch], min_width: int = 3) -> Verdict:
    """图9.1/9.2 on :func:`plateau_match` results per width: every member of every width ≥ ``min_width``
    has, at its snapshot closest to L1*, a relative loss gap < 1%, ‖f − f1*‖∞ < 0.02 and its significant
    neurons on one line: 1 − min |cos| < 0.01 (the same as |cos| > 0.99, with a readable margin)."""
    sel = [matches[m] for m in sorted(matches) if m >= min_width]
    if not sel:
        raise ValueError(f"no width ≥ {min_width} among {sorted(matches)}")
    gap = max(float(p.gap.max()) for p in sel)
    sup = max(float(p.sup_diff.max()) for p in sel)
    cos_min = min(float(p.min_abs_cos.min()) for p in sel)
    return WIDTH_PLATEAU.judge(
        threshold("max |L/L1* − 1|", gap, "<", 0.01),
        threshold("max ‖f − f1*‖∞", sup, "<", 0.02),
        threshold("max 1 − |cos|", 1 - cos_min, "<", 0.01),
        widths=[m for m in sorted(matches) if m >= min_width], members=sum(len(p.gap) for p in sel))


@dataclass
class SpectrumLine:
    """The brightest line of one width's loss spectrum (图9.5): the fraction of (recorded step, seed) pairs in the
    brightest of :func:`loss_spectrum`'s bins and the median loss of those pairs (finer than the bin's centre)."""

    width: int
    fraction: float
    loss: float


def brightest_line(batch: BatchRun, bins: int = 200, lo: float = -5.0, hi: float = 0.0) -> SpectrumLine:
    """The brightest bin of one width's :func:`loss_spectrum` (all its members and recorded steps)."""
    uniq, edges, frac = loss_spectrum(batch.losses, batch.widths, bins, lo, hi)
    if len(uniq) != 1:
        raise ValueError(f"need a run of one width, got widths {uniq.tolist()}")
    i = int(np.argmax(frac[0]))
    logs = np.log10(np.maximum(batch.losses.ravel(), 1e-300))
    inside = (logs >= edges[i]) & (logs < edges[i + 1])
    return SpectrumLine(int(uniq[0]), float(frac[0, i]), float(np.median(batch.losses.ravel()[inside])))


def spectrum_of(runs: dict[int, BatchRun]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`loss_spectrum` of all members of all runs (widths, bin edges, fractions)."""
    losses = np.concatenate([runs[m].losses for m in sorted(runs)], axis=1)
    return loss_spectrum(losses, np.concatenate([runs[m].widths for m in sorted(runs)]))


def check_split_identities(errors: np.ndarray) -> Verdict:
    """图9.3 on :func:`split_identity_errors` (rows: α; columns: output error, gradient-identity error)."""
    out_err, grad_err = np.max(np.asarray(errors), axis=0)
    return SPLIT_IDENTITIES.judge(identity("max |f′ − f|", out_err, 1e-12),
                                  identity("max gradient-identity error", grad_err, 1e-12),
                                  alphas=len(errors))


def check_split_hessian(chains: dict[float, list[SplitSpectrum]]) -> Verdict:
    """图9.7 on :func:`split_spectra` chains (one per α, each starting with the unsplit point): the point is a
    strict minimum (smallest eigenvalue above the zero threshold), every split keeps the output (1e-12) and
    criticality (‖∇R‖ ≤ 1e-11), no split lowers the negative count, and every split adds a zero eigenvalue:
    after it, the (z+1)-th smallest |λ| (z = the zero count before) lies below the zero threshold."""
    base = next(iter(chains.values()))[0]
    steps = [(c1, c2) for chain in chains.values() for c1, c2 in zip(chain, chain[1:])]
    if not steps:
        raise ValueError("need chains of at least two widths")
    d_neg = min(c2.counts.negative - c1.counts.negative for c1, c2 in steps)
    zero_ratio = max(float(np.sort(np.abs(c2.eigenvalues))[c1.counts.zero] / c2.counts.threshold) for c1, c2 in steps)
    return SPLIT_HESSIAN.judge(
        threshold("λ_min/zero threshold at the minimum", float(base.eigenvalues.min() / base.counts.threshold), ">", 1.0),
        count("least change of the negative count in a split", d_neg, ">=", 0),
        threshold("max |λ|_(z+1)/zero threshold after a split", zero_ratio, "<", 1.0),
        identity("max |f_split − f|", max(c.out_diff for chain in chains.values() for c in chain), 1e-12),
        identity("max ‖∇R‖ after splitting", max(c.grad_norm for chain in chains.values() for c in chain), 1e-11),
        counts={f"{alpha:g}": [c.counts.as_tuple() for c in chain] for alpha, chain in chains.items()})


def check_embedded_saddle(chain: list[SplitSpectrum], spec: ClaimSpec = SADDLE_1D, *,
                          base_minimum: bool = True, max_grad: float = 1e-10,
                          rel_tol: float = SADDLE_REL_TOL) -> Verdict:
    """图9.7 on one :func:`split_spectra` chain with ks = (1, 2, 3) (widths m, m+1, m+2): the trained point is critical
    (‖∇R‖ ≤ ``max_grad``) and, with ``base_minimum`` (panel (a)), has no negative eigenvalue; each split raises the
    number of negative eigenvalues (below −zero threshold) by ≥ 1; after the first split λ_min < −``rel_tol``·λ_max.
    Which part is by construction: that splitting keeps criticality and adds zero eigenvalues (``ch09.split-hessian``);
    whether negative ones appear depends on the trained point (its :func:`stability_matrix`)."""
    if len(chain) != 3:
        raise ValueError(f"need the chain of k = 1, 2, 3 copies, got {len(chain)} spectra")
    neg = [c.counts.negative for c in chain]
    lam = chain[1].eigenvalues
    conditions = [threshold("‖∇R‖ at the trained point", chain[0].grad_norm, "<=", max_grad)]
    if base_minimum:
        conditions.append(count("negative eigenvalues at the trained point", neg[0], "<", 1))
    m = [c.m for c in chain]
    conditions += [count(f"negative eigenvalues added by the split m={m[0]}→{m[1]}", neg[1] - neg[0], ">", 0),
                   count(f"negative eigenvalues added by the split m={m[1]}→{m[2]}", neg[2] - neg[1], ">", 0),
                   threshold(f"−λ_min/λ_max at m={m[1]}", float(-lam.min() / lam.max()), ">", rel_tol)]
    return spec.judge(*conditions, counts=[c.counts.as_tuple() for c in chain])


def check_merge(run: Compression, control: Compression) -> Verdict:
    """图9.8 on a condensed :func:`compress` run and a control run (same procedure, non-condensing init)."""
    return MERGE.judge(
        threshold("test disagreement merged vs wide", 1 - run.agreement, "<=", 0.03),
        threshold("|ΔL/L| merged", run.loss_change, "<", 0.1),
        compare("merge factor significant/groups", run.merge_factor, ">", "control run's merge factor",
                control.merge_factor),
        compare("|ΔL/L| merged", run.loss_change, "<", "|ΔL/L| dropped to the same width", run.loss_change_pruned),
        threshold("width / merged width", run.width / run.n_groups, ">=", 4.0),
        significant=run.n_significant, groups=run.n_groups, control_significant=control.n_significant,
        control_groups=control.n_groups, loss_wide=run.loss_wide, loss_merged=run.loss_merged,
        loss_pruned=run.loss_pruned)


#: The bounds of the explorer (:func:`make_explorer` and its compute function): its sliders; up to 100 000 steps.
EXPLORER_BOUNDS = Bounds(init_std=real(1e-4, 1e-1), width=integer(1, 100), alpha=real(-1.0, 2.0), k=integer(1, 4),
                         zero_factor=real(1.0, 1e6), steps=integer(1, 100_000), seed=SEED)


def make_explorer(seed: int | None = None, steps: int = 3000, narrow: Fit | None = None,
                  critical: Fit | None = None):
    """Sliders: init std and width (a plateau run on the three-tanh task), split α and k and the
    zero-eigenvalue factor (Hessian counts of a split width-2 critical point of 图9.7 on
    :func:`sine_task`).  ``narrow`` (the width-1 optimum of the three-tanh task) and ``critical``
    are computed when not given; ``seed`` defaults to the active seed."""
    from companion.kit import widgets

    seed = active_seed() if seed is None else seed
    EXPLORER_BOUNDS.check(seed=seed, steps=steps)
    x, xa, y = three_tanh_target()
    narrow = narrow or best_fits(xa, y, 1, restarts=4, seed=seed)[0]
    _, xsa, ys = sine_task()
    if critical is None:
        critical = strict_minimum(xsa, ys, 2, seed=seed)[0]

    def compute(init_std: float, width: int, alpha: float, k: int, zero_factor: float) -> dict:
        EXPLORER_BOUNDS.check(init_std=init_std, width=width, alpha=alpha, k=k, zero_factor=zero_factor)
        net = run_widths(xa, y, [width], 1, init_std=init_std, lr=0.1, steps=steps,
                         record_every=max(1, steps // 100), seed=seed, progress=False)[width]
        spectra = split_spectra(critical, xsa, ys, ks=range(1, k + 1), alpha=alpha, factor=zero_factor)
        return {"steps": net.steps, "losses": net.losses[:, 0], "loss_star": narrow.loss, "a": net.a[-1, 0],
                "w": net.w[-1, 0], "spectra": spectra}

    def draw(res: dict, fig) -> None:
        ax1, ax2, ax3 = fig.subplots(1, 3)
        ax1.semilogy(res["steps"], res["losses"], label="training loss")
        ax1.axhline(res["loss_star"], ls="--", color="0.4", label="width-1 optimum")
        ax1.set_xlabel("step")
        ax1.legend()
        amp = condensation.amplitude(np.linalg.norm(res["a"], axis=1), res["w"])
        ax2.scatter(condensation.orientation(res["w"]), amp / amp.max(), s=10)
        ax2.set_xlabel("orientation atan2(b, w)")
        ax2.set_ylabel("amplitude / max")
        for sp in res["spectra"]:
            ax3.semilogy(np.sort(np.abs(sp.eigenvalues)), ".-", label=f"m={sp.m}: {sp.counts.as_tuple()}")
        ax3.axhline(res["spectra"][0].counts.threshold, ls=":", color="0.4")
        ax3.set_title("sorted |λ| (neg, zero, pos)")
        ax3.legend()

    controls = {
        "init_std": widgets.log_slider(1e-3, 1e-4, 1e-1, "init std"),
        "width": widgets.int_slider(10, 1, 100, "width m"),
        "alpha": widgets.float_slider(0.5, -1.0, 2.0, 0.1, "split α"),
        "k": widgets.int_slider(3, 1, 4, "max copies k"),
        "zero_factor": widgets.log_slider(1e3, 1.0, 1e6, "zero threshold / ‖∇R‖"),
    }
    return widgets.Explorer("Embedding principle (ch. 9)", controls, compute, draw)
