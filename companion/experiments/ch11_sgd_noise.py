"""The structure of SGD noise (ch. 11.3, 随机梯度下降噪音): covariance, alignment with the Hessian,
Feng–Tu directional flatness and isotropic Langevin noise of matched size.

SGD is GD plus noise, θ_{t+1} = θ_t − η∇L(θ_t) + η ε_t with ε_t ~ N(0, Σ_sgd) (11.4).  For a batch of
B samples drawn from n (with replacement, the usual approximation),

    Σ_sgd = (1/B) [ (1/n) Σ_i g_i g_iᵀ − ḡ ḡᵀ ],   g_i = ∇ℓ_i(θ),  ḡ = ∇L(θ),

kept here as a factor C (n × D) with Σ = CᵀC, rows (g_i − ḡ)/√(nB): Σ itself (D × D) is never formed.

* Alignment (Zhu et al. 2018): Tr(HΣ) = Σ_i c_iᵀ H c_i (n Hessian-vector products) against
  Tr(H)Tr(Σ)/D, the value for an isotropic noise of the same total variance, and against
  Tr(HΠ)Tr(Σ)/r, the value for a noise of the same size spread evenly over the r directions the
  gradient noise can take at all (Π: projector on the span of the centred per-sample gradients).
  Those directions are sharp whatever the noise does there (they lie in the Jacobian's row space, where
  the Hessian's Gauss–Newton part lives), so only the second comparison measures how the noise is
  distributed *among* them.
* Directional flatness (Feng & Tu 2021, (11.2)–(11.3)): along the i-th eigenvector p_i of Σ
  (variance σ_i²), F_i = θ_i^r − θ_i^l where L(θ + δp_i) first reaches e·L₀ on each side; the book
  reports σ_i² ∝ F_i^{−ψ} with ψ ≈ 4 (11.6).
* Gradient Langevin dynamics (GLD, (11.5)): ε_t ~ N(0, σ_t² I) with σ_t² = Tr(Σ_sgd)/D, the
  "GLD dynamic" row of 表11.2 — same noise magnitude as SGD, no structure.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from scipy.stats import spearmanr
from torch import Tensor, nn
from torch.func import functional_call, grad, vmap

from companion.core import landscape
from companion.kit.claims import ClaimSpec, Verdict, compare, threshold
from companion.experiments.ch11_flatness import NoiseHook, full_loss, loss_fn


def per_sample_gradients(model: nn.Module, x: Tensor, y: Tensor, loss: str = "mse") -> Tensor:
    """∇ℓ_i(θ) for every training sample, shape (n, D), by vmap over torch.func.grad (eval mode)."""
    model.eval()
    theta, unflatten = landscape.flatten_params(model)
    fn = loss_fn(loss)

    def one(th: Tensor, xi: Tensor, yi: Tensor) -> Tensor:
        return fn(functional_call(model, unflatten(th), (xi[None],)), yi[None])

    return vmap(grad(one), in_dims=(None, 0, 0))(theta, x, y)


def noise_factor(grads: Tensor, batch_size: int) -> Tensor:
    """C (n, D) with CᵀC = Σ_sgd = (1/B)[(1/n)Σ g_i g_iᵀ − ḡḡᵀ] for batches of ``batch_size``."""
    n = grads.shape[0]
    if not 1 <= batch_size <= n:
        raise ValueError(f"batch_size must lie in [1, {n}], got {batch_size}")
    return (grads - grads.mean(0)) / np.sqrt(n * batch_size)


@dataclass
class Alignment:
    """Tr(HΣ) against its isotropic counterpart Tr(H)Tr(Σ)/D and against the same-size noise spread evenly
    over the span of the gradient noise, Tr(HΠ)Tr(Σ)/rank."""

    tr_h_sigma: float
    tr_h: float
    tr_sigma: float
    dim: int
    tr_h_span: float
    rank: int

    @property
    def isotropic(self) -> float:
        return self.tr_h * self.tr_sigma / self.dim

    @property
    def ratio(self) -> float:
        return self.tr_h_sigma / self.isotropic

    @property
    def span_uniform(self) -> float:
        return self.tr_h_span * self.tr_sigma / self.rank

    @property
    def span_ratio(self) -> float:
        return self.tr_h_sigma / self.span_uniform


def noise_alignment(model: nn.Module, x: Tensor, y: Tensor, batch_size: int, loss: str = "mse",
                    n_probes: int = 30, generator: torch.Generator | None = None,
                    factor: Tensor | None = None) -> Alignment:
    """Tr(HΣ), Tr(H) (Hutchinson, ``n_probes`` vectors), Tr(Σ) and Tr(HΠ) at the model's parameters, for
    Σ = CᵀC with C the SGD noise factor of ``batch_size`` (or a given ``factor`` (m, D), e.g. isotropic
    noise from :func:`isotropic_factor`)."""
    if factor is None:    # centred in float64, so that the span has rank n − 1 up to float64 rounding
        c64 = noise_factor(per_sample_gradients(model, x, y, loss).double(), batch_size)  # (n, D)
    else:
        c64 = factor.double()
    c = c64.to(x.dtype)
    f = full_loss(model, x, y, loss)
    theta, _ = landscape.flatten_params(model)
    hvps = vmap(lambda v: landscape.hvp(f, theta, v))
    tr_h_sigma = float((hvps(c) * c).sum())
    _, s, vh = torch.linalg.svd(c64, full_matrices=False)
    q = vh[: int((s > s[0] * 1e-6).sum())].to(x.dtype)                  # (r, D) orthonormal basis of the span
    tr_h_span = float((hvps(q) * q).sum())
    tr_h = landscape.hutchinson_trace(f, theta, n_samples=n_probes, generator=generator)
    return Alignment(tr_h_sigma, tr_h, float((c * c).sum()), theta.numel(), tr_h_span, q.shape[0])


NOISE_ALIGNMENT = ClaimSpec("ch11.noise-alignment", "§11.3.1",
                            "SGD noise is aligned with the Hessian: Tr(H Sigma) exceeds Tr(H) Tr(Sigma) / D more than "
                            "10-fold, and exceeds the value for the same noise spread evenly over its own directions")


def check_noise_alignment(align: Alignment) -> Verdict:
    """§11.3.1: Tr(HΣ) > 10 × the isotropic value Tr(H)Tr(Σ)/D (the book's ≫), and Tr(HΣ) above the baseline
    noise of equal size spread evenly over the span of the gradient noise, Tr(HΠ)Tr(Σ)/r."""
    return NOISE_ALIGNMENT.judge(
        threshold("Tr(H Sigma) / [Tr(H) Tr(Sigma)/D]", align.ratio, ">", 10.0),
        compare("Tr(H Sigma)", align.tr_h_sigma, ">", "Tr(H Pi) Tr(Sigma)/rank", align.span_uniform),
        span_ratio=align.span_ratio, rank=align.rank, dim=align.dim)


def noise_directions(model: nn.Module, x: Tensor, y: Tensor, batch_size: int, k: int,
                     loss: str = "mse", factor: Tensor | None = None) -> tuple[np.ndarray, Tensor]:
    """The top-``k`` eigenvalues σ_i² of Σ = CᵀC (k,) and eigenvectors p_i as rows (k, D), from the SVD of C,
    the SGD noise factor (or a given ``factor``)."""
    c = (noise_factor(per_sample_gradients(model, x, y, loss), batch_size) if factor is None else factor).double()
    if not 1 <= k <= min(c.shape):
        raise ValueError(f"k must lie in [1, {min(c.shape)}], got {k}")
    _, s, vh = torch.linalg.svd(c, full_matrices=False)
    return (s[:k] ** 2).numpy(), vh[:k].to(x.dtype)


def directional_flatness(model: nn.Module, directions: Tensor, x: Tensor, y: Tensor, loss: str = "mse",
                         factor: float = float(np.e), bisections: int = 30) -> np.ndarray:
    """F_i = θ_i^r − θ_i^l (11.3) for unit directions (k, D): the nearest δ on each side where
    L(θ + δp_i) = factor·L₀, found by doubling then bisection, all 2k searches in one vmapped pass."""
    if not factor > 1:
        raise ValueError(f"factor must exceed 1, got {factor}")
    f = full_loss(model, x, y, loss)
    theta, _ = landscape.flatten_params(model)
    if directions.ndim != 2 or directions.shape[1] != theta.numel():
        raise ValueError(f"directions must have shape (k, {theta.numel()}), got {tuple(directions.shape)}")
    dirs = torch.cat([directions, -directions])                           # (2k, D): right then left
    with torch.no_grad():
        target = factor * float(f(theta))
        loss_at = vmap(lambda d, t: f(theta + t * d))
        lo, hi = torch.zeros(len(dirs)), torch.full((len(dirs),), 1e-3)
        for _ in range(60):                                               # bracket: L(θ + hi·p) ≥ target
            below = loss_at(dirs, hi) < target
            if not below.any():
                break
            lo, hi = torch.where(below, hi, lo), torch.where(below, 2 * hi, hi)
        for _ in range(bisections):
            mid = 0.5 * (lo + hi)
            below = loss_at(dirs, mid) < target
            lo, hi = torch.where(below, mid, lo), torch.where(below, hi, mid)
    width = 0.5 * (lo + hi)
    k = directions.shape[0]
    return (width[:k] + width[k:]).numpy()


@dataclass
class FengTu:
    """Noise variances σ_i² and flatness F_i along the top noise directions, with the log-log slope
    of σ² against F (the book: ≈ −ψ = −4) and Spearman's rank correlation."""

    variances: np.ndarray
    flatness: np.ndarray
    slope: float
    spearman: float


def feng_tu(model: nn.Module, x: Tensor, y: Tensor, batch_size: int, k: int = 40, loss: str = "mse",
            factor: Tensor | None = None) -> FengTu:
    """σ_i² and F_i along the top-k eigen-directions of Σ_sgd (or of a given noise ``factor``) at the model's
    parameters (图11.5)."""
    variances, directions = noise_directions(model, x, y, batch_size, k, loss, factor)
    flat = directional_flatness(model, directions, x, y, loss)
    slope = float(np.polyfit(np.log(flat), np.log(variances), 1)[0])
    return FengTu(variances, flat, slope, float(spearmanr(flat, variances)[0]))


FENG_TU = ClaimSpec("ch11.feng-tu", "(11.6)",
                    "the noise variance falls with the directional flatness: log-log slope below -1 and Spearman "
                    "rho below -0.6")


def check_feng_tu(ft: FengTu) -> Verdict:
    """(11.6), 图11.5: σ_i² against F_i has log-log slope < −1 and Spearman ρ < −0.6 (book: slope ≈ −4)."""
    return FENG_TU.judge(threshold("log-log slope", ft.slope, "<", -1.0),
                         threshold("Spearman rho", ft.spearman, "<", -0.6), k=len(ft.variances))


def isotropic_factor(model: nn.Module, x: Tensor, y: Tensor, batch_size: int, m: int | None = None,
                     loss: str = "mse", generator: torch.Generator | None = None) -> Tensor:
    """A factor C (m, D) of isotropic noise of the SGD noise's size: rows ε_k/√m with ε_k drawn by the GLD
    hook of :func:`isotropic_noise`, so that E[CᵀC] = (Tr(Σ_sgd)/D)·I (m = n by default)."""
    hook = isotropic_noise(x, y, batch_size, refresh_every=10**9, loss=loss, generator=generator)
    m = x.shape[0] if m is None else m
    return torch.stack([hook(model, k) for k in range(m)]) / np.sqrt(m)


def isotropic_noise(x: Tensor, y: Tensor, batch_size: int, *, refresh_every: int = 20, loss: str = "mse",
                    generator: torch.Generator | None = None) -> NoiseHook:
    """A noise hook for :func:`companion.experiments.ch11_flatness.train_tracked`: ε_t ~ N(0, σ_t² I) with
    σ_t² = Tr(Σ_sgd)/D re-estimated every ``refresh_every`` steps (GLD dynamic, (11.5), 表11.2)."""
    if refresh_every < 1:
        raise ValueError(f"refresh_every must be ≥ 1, got {refresh_every}")
    state = {"sigma": 0.0}

    def hook(model: nn.Module, step: int) -> Tensor:
        if step % refresh_every == 0:
            c = noise_factor(per_sample_gradients(model, x, y, loss), batch_size)
            state["sigma"] = float((c * c).sum() / c.shape[1]) ** 0.5
            model.train()
        d = sum(p.numel() for p in model.parameters())
        return state["sigma"] * torch.randn(d, generator=generator)

    return hook
