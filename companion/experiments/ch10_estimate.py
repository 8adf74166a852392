"""The optimistic estimate (乐观估计, book ch. 10): model rank, optimistic sample sizes, recovery experiments.

* **Model rank** (10.6): R_{f_θ}(θ′) = dim span{∂_{θ_i} f(·; θ′)} — computed as the numerical rank of
  the Jacobian J_{ki} = ∂_{θ_i} f(x_k; θ′) over many sampled inputs x_k (float64, singular values
  above ``rtol``·s_max).  The optimistic sample size of a target is the minimum over its target set
  (10.7): :func:`model_rank` at the best point of the set.
* **Formulas**: matrix factorisation (10.14) 2rd − r², two-layer tanh nets (10.15) k(d+1), 1-D CNN
  (10.17) k_C(d+1), and Table 10.1 (d×d images, s×s kernels) as :func:`table_10_1`.
* **Models** of the chapter as pure functions ``f(θ, x)``: f_L and f_NL (10.9), matrix factorisation
  (10.13), the fixed-bias pair of Example 2, two-layer tanh nets, a 1-D tanh CNN (10.16) with and
  without weight sharing.
* **Recovery experiments**, many cells (target × n × trial) trained at once by full-batch gradient descent
  through the engine :func:`companion.core.train.run` (the cells' losses are summed, so each cell gets its
  own gradient): :func:`complete_matrices` (图10.2, 图10.5b), :func:`fit_linear_models` (f_L vs f_NL,
  图10.1, 图10.5a, with a step size per cell) and the CNN / CNN without sharing /
  fully connected sweep of 图10.3 (one form for the three nets, closed-form gradients):
  :func:`fit_nets_10_18`, :func:`samples_needed`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor
from torch.func import jacfwd

from companion.core.nets import BatchedMLP
from companion.core.train import descend, run, train
from companion.kit.bounds import SEED, Bounds, integer, real
from companion.kit.cache import cached
from companion.kit.claims import REVALIDATION_SEEDS, ClaimSpec, Verdict, compare, count, identity, threshold
from companion.kit.config import settings
from companion.kit.seeds import active_seed, generator, numpy_rng

Model = Callable[[Tensor, Tensor], Tensor]


# --- model rank -------------------------------------------------------------------------------

def jacobian(f: Model, theta: Tensor, x: Tensor) -> np.ndarray:
    """J_{ki} = ∂_{θ_i} f(x_k; θ), shape (N, M), float64.

    Forward mode (one tangent per parameter): M ≤ a few hundred columns against N = 2000 rows, so
    ``jacfwd`` costs M passes where ``jacrev`` pays N (ten times faster here, the same matrix)."""
    return jacfwd(f)(theta.double(), x.double()).detach().numpy().reshape(x.shape[0], -1)


def model_rank(f: Model, theta: Tensor, x: Tensor, rtol: float = 1e-8) -> int:
    """Numerical rank of the tangent functions ∂_{θ_i} f(·; θ) sampled at the rows of x, eq. (10.6)."""
    if not 0 < rtol < 1:
        raise ValueError(f"rtol must lie in (0, 1), got {rtol}")
    s = np.linalg.svd(jacobian(f, theta, x), compute_uv=False)
    return int((s > rtol * s.max()).sum()) if s.max() > 0 else 0


def f_linear(theta: Tensor, x: Tensor) -> Tensor:
    """f_L(x; θ) = θ0 + θ1 x1 + θ2 x2, linear in θ (10.9)."""
    return theta[0] + theta[1] * x[:, 0] + theta[2] * x[:, 1]


def f_nonlinear(theta: Tensor, x: Tensor) -> Tensor:
    """f_NL(x; θ) = θ0 + θ1 x1 + θ2 θ3 x2 (10.9): same function space as f_L, nonlinear in θ."""
    return theta[0] + theta[1] * x[:, 0] + theta[2] * theta[3] * x[:, 1]


def matrix_factorisation(d: int) -> Model:
    """f_θ = AB with A, B ∈ R^{d×d} (10.13); the "inputs" are entry indices (N, 2) (row, column)."""
    def f(theta: Tensor, idx: Tensor) -> Tensor:
        a, b = theta[: d * d].reshape(d, d), theta[d * d:].reshape(d, d)
        return (a @ b)[idx[:, 0].long(), idx[:, 1].long()]
    return f


def all_entries(d: int) -> Tensor:
    """All d² index pairs (row, column) of a d×d matrix, shape (d², 2)."""
    r, c = torch.meshgrid(torch.arange(d), torch.arange(d), indexing="ij")
    return torch.stack([r.ravel(), c.ravel()], 1).double()


def fixed_bias_pair(theta: Tensor, x: Tensor) -> Tensor:
    """Example 2 (习题16): a1 tanh(w1·x + 1) + a2 tanh(w2·x + 1), θ = (a1, w1, a2, w2), w_i ∈ R²."""
    return theta[0] * torch.tanh(x @ theta[1:3] + 1) + theta[3] * torch.tanh(x @ theta[4:6] + 1)


def two_layer_tanh(m: int, d: int) -> Model:
    """Σ_{i≤m} a_i tanh(w_iᵀx) (10.15), θ = (a (m), W (m×d)); M = m(d+1).

    Batched: θ (..., M) and x (..., N, d) with broadcasting leading dimensions give f (..., N), so many
    cells (one θ and one sample set each) evaluate in one call."""
    def f(theta: Tensor, x: Tensor) -> Tensor:
        w = theta[..., m:].reshape(*theta.shape[:-1], m, d)  # (..., m, d)
        return (torch.tanh(x @ w.transpose(-1, -2)) * theta[..., None, :m]).sum(-1)  # (..., N)
    return f


def cnn_1d(m: int, d: int, s: int, shared: bool = True) -> Model:
    """Two-layer 1-D tanh CNN (10.16): Σ_i Σ_{j ≤ d+1−s} a_ij tanh(Σ_{α<s} x_{j+α} K_{i;α}).

    (The book writes x_{j+s−α} K_{i;α}, the same family with the kernel stored in reverse.)

    With ``shared=False`` every position j has its own kernel K_{ij} ("CNN without sharing").
    θ = (a (m, P), K (m, s) or (m, P, s)) with P = d + 1 − s positions.  Batched like
    :func:`two_layer_tanh`: θ (..., M), x (..., N, d) → (..., N).
    """
    if not 1 <= s <= d:
        raise ValueError(f"kernel size s must lie in [1, d={d}], got {s}")
    p = d + 1 - s

    def f(theta: Tensor, x: Tensor) -> Tensor:
        lead = theta.shape[:-1]
        a = theta[..., : m * p].reshape(*lead, 1, m, p)
        k = theta[..., m * p:].reshape(*lead, 1, m, 1, s) if shared else theta[..., m * p:].reshape(*lead, 1, m, p, s)
        patches = x.unfold(-1, s, 1)[..., None, :, :]  # (..., N, 1, P, s)
        z = (patches * k).sum(-1)  # (..., N, m, P)
        return (torch.tanh(z) * a).sum((-2, -1))
    return f


def n_params_cnn_1d(m: int, d: int, s: int, shared: bool = True) -> int:
    """Number of parameters of :func:`cnn_1d`."""
    p = d + 1 - s
    return m * p + (m * s if shared else m * p * s)


# --- optimistic sample sizes (closed forms) ---------------------------------------------------

def optimistic_matrix(r: int, d: int) -> int:
    """(10.14): R(M*) = 2 r d − r² for a rank-r target of the d×d factorisation AB."""
    if not 0 <= r <= d:
        raise ValueError(f"rank r must lie in [0, d={d}], got {r}")
    return 2 * r * d - r * r


def optimistic_nn(k: int, d: int) -> int:
    """(10.15): k(f*)(d + 1) for a target of intrinsic width k, independent of the net's width m."""
    if k < 0 or d < 1:
        raise ValueError(f"need k ≥ 0 and d ≥ 1, got k={k}, d={d}")
    return k * (d + 1)


def table_10_1(d: int, s: int, k: int, m_null: int = 0) -> dict[str, int]:
    """Table 10.1: optimistic sizes for a d×d image, s×s kernels and a target in F_k^CNN \\ F_{k−1}^CNN.

    CNN k(s² + (d+1−s)²); CNN without sharing k(s²+1)(d+1−s)² − (s²+1) m_null; fully connected
    k(d²+1)(d+1−s)² − (d²+1) m_null, where m_null counts the target's zero output weights.
    """
    if not 1 <= s <= d or k < 1 or m_null < 0:
        raise ValueError(f"need 1 ≤ s ≤ d, k ≥ 1, m_null ≥ 0; got d={d}, s={s}, k={k}, m_null={m_null}")
    p2 = (d + 1 - s) ** 2
    if m_null > k * p2:
        raise ValueError(f"m_null={m_null} exceeds the k·(d+1−s)² = {k * p2} output weights")
    return {"CNN": k * (s * s + p2),
            "CNN without sharing": k * (s * s + 1) * p2 - (s * s + 1) * m_null,
            "fully connected": k * (d * d + 1) * p2 - (d * d + 1) * m_null}


# --- matrix completion (图10.2, 图10.5b) --------------------------------------------------------

def low_rank_targets(n: int, d: int, r: int, rng: np.random.Generator) -> np.ndarray:
    """n random rank-r d×d matrices UVᵀ (Gaussian factors) scaled to ‖M‖_F = d; shape (n, d, d)."""
    if not 1 <= r <= d:
        raise ValueError(f"rank r must lie in [1, d={d}], got {r}")
    m = rng.normal(size=(n, d, r)) @ rng.normal(size=(n, r, d))
    return m * d / np.linalg.norm(m, axis=(1, 2), keepdims=True)


def random_masks(n_obs: np.ndarray, d: int, rng: np.random.Generator) -> np.ndarray:
    """One random mask per cell with n_obs[c] observed entries out of d²; shape (C, d, d) of 0/1."""
    n_obs = np.asarray(n_obs)
    if np.any(n_obs < 1) or np.any(n_obs > d * d):
        raise ValueError(f"numbers of observed entries must lie in [1, {d * d}], got {n_obs.min()}–{n_obs.max()}")
    ranks = np.argsort(rng.random((len(n_obs), d * d)), axis=1)
    return (ranks < n_obs[:, None]).astype(float).reshape(-1, d, d)


def complete_matrices(targets: np.ndarray, masks: np.ndarray, *, init_std: float, lr: float, steps: int,
                      rng: np.random.Generator) -> np.ndarray:
    """Gradient descent on (1/n) Σ_observed ((AB)_ij − M*_ij)² for every cell at once, from A, B ~ N(0, std²).

    targets, masks (C, d, d).  Returns the relative errors ‖AB − M*‖_F / ‖M*‖_F over all entries, (C,).
    NumPy on the CPU by design, whatever the settings' device: a device would need the steps rewritten in torch,
    whose kernels round differently, and the CPU results would change.
    """
    if targets.shape != masks.shape or targets.ndim != 3:
        raise ValueError(f"targets and masks must share a shape (C, d, d); got {targets.shape}, {masks.shape}")
    if not init_std > 0 or not lr > 0 or steps < 1:
        raise ValueError(f"need init_std > 0, lr > 0, steps ≥ 1; got {init_std}, {lr}, {steps}")
    c, d, _ = targets.shape
    cells_last = lambda m: np.ascontiguousarray(m.transpose(1, 2, 0))  # noqa: E731  (C, d, d) → (d, d, C)
    factors = {"a": cells_last(rng.normal(0, init_std, (c, d, d))), "b": cells_last(rng.normal(0, init_std, (c, d, d)))}
    target, mask = cells_last(targets), cells_last(masks)
    scale = 2 * lr / masks.sum((1, 2))  # (C,)

    def gradient_step(step: int) -> None:
        """One GD step with the loss's closed-form gradient: ∇_A = (2/n) R Bᵀ, ∇_B = (2/n) Aᵀ R, R the
        observed residual.  NumPy with the cells on the last axis, each 4×4 product a broadcast sum over
        (d, d, d, C): on thousands of 4×4 problems twice as fast as stacked ``@`` and several times faster
        than autograd."""
        a, b = factors["a"], factors["b"]
        r = mask * ((a[:, :, None] * b[None]).sum(1) - target)  # (d, d, C)
        factors["a"] = a - scale * (r[:, None] * b[None]).sum(2)        # R Bᵀ
        factors["b"] = b - scale * (a[:, :, None] * r[:, None]).sum(0)  # Aᵀ R

    run(gradient_step, steps=steps, record=lambda step: {}, record_every=steps, progress=False, desc="matrix completion")
    product = (factors["a"][:, :, None] * factors["b"][None]).sum(1).transpose(2, 0, 1)  # (C, d, d)
    err = np.linalg.norm(product - targets, axis=(1, 2)) / np.linalg.norm(targets, axis=(1, 2))
    return np.nan_to_num(err, nan=np.inf)


@dataclass
class RecoveryGrid:
    """Success fractions (rows × n) and median errors of a recovery sweep; rows label the targets."""

    rows: list
    ns: np.ndarray
    success: np.ndarray
    median_error: np.ndarray


@cached
def completion_grid(ranks: list[int], ns: np.ndarray, trials: int, *, d: int = 4, init_std: float = 1e-3,
                    lr: float = 0.1, steps: int = 6000, threshold: float = 1e-2, seed: int = 0) -> RecoveryGrid:
    """图10.2: for every rank r and number n of observed entries, ``trials`` random (target, mask)
    pairs completed by GD in one batched computation; success = relative error < ``threshold``."""
    rng = numpy_rng(seed)
    ns = np.asarray(ns)
    cells_n = np.tile(np.repeat(ns, trials), len(ranks))
    targets = np.concatenate([low_rank_targets(len(ns) * trials, d, r, rng) for r in ranks])
    err = complete_matrices(targets, random_masks(cells_n, d, rng), init_std=init_std, lr=lr, steps=steps,
                            rng=rng).reshape(len(ranks), len(ns), trials)
    return RecoveryGrid(list(ranks), ns, (err < threshold).mean(-1), np.median(err, -1))


# --- f_L versus f_NL (图10.1, 图10.5a) ----------------------------------------------------------

TARGETS_10_1 = {"1": (1, 0, 0), "x1": (0, 1, 0), "1+x1": (1, 1, 0), "x2": (0, 0, 1), "1+x2": (1, 0, 1),
                "x1+x2": (0, 1, 1), "1+x1+x2": (1, 1, 1)}


def fit_linear_models(coefs: list[tuple[float, float, float]], ns: np.ndarray, trials: int, *, nonlinear: bool,
                      init_std: float, lr: float | None = None, lr_factor: float = 0.5, steps: int = 20_000,
                      seed: int = 0, n_test: int = 500) -> np.ndarray:
    """Fit f* = c0 + c1 x1 + c2 x2 with f_L or f_NL (10.9) by full-batch GD on the mean squared error
    from θ ~ N(0, std²), x ~ U[−1, 1]², for every target × n × trial at once: :func:`fit_linear_model_set`
    with one model.  Returns the test MSE, shape (len(coefs), len(ns), trials)."""
    return fit_linear_model_set(coefs, ns, trials, [(nonlinear, init_std)], lr=lr, lr_factor=lr_factor,
                                steps=steps, seed=seed, n_test=n_test)[0]


def fit_linear_model_set(coefs: list[tuple[float, float, float]], ns: np.ndarray, trials: int,
                         models: Sequence[tuple[bool, float]], *, lr: float | None = None, lr_factor: float = 0.5,
                         steps: int = 20_000, seed: int = 0, n_test: int = 500) -> np.ndarray:
    """Several models (``(nonlinear, init_std)``: f_NL or f_L (10.9) from θ ~ N(0, std²)) fitted to
    f* = c0 + c1 x1 + c2 x2 by full-batch GD on the mean squared error, x ~ U[−1, 1]², for every model ×
    target × n × trial at once.  Every model sees the same samples (and draws as if fitted alone from ``seed``).

    Both models are linear in the coefficients w = (w0, w1, w2) of (1, x1, x2): w = θ for f_L,
    (θ0, θ1, θ2θ3) for f_NL, so the loss is (w − c)ᵀ H (w − c)/2 with H = (2/n) FᵀF (F the n×3 features of
    the samples) and its gradient in w is H (w − c) — a 3×3 product per cell, whatever n; the chain rule
    through θ2θ3 gives f_NL's gradient.  (f_L is f_NL with θ3 ≡ 1 held fixed.)

    Step size: ``lr`` for every cell, or (``lr=None``, the default) one per cell, ``lr_factor/λ_max(H)``.
    GD converges like (1 − lr·λ_min)^t: a fixed small step leaves the nearly collinear samples (small
    λ_min) unconverged after 20 000 steps — a quarter of the 3-sample sets at lr = 0.05 — whereas the
    curvature step leaves well under a tenth.  For f_NL the same step is stable: near a solution its
    Hessian is at most (1 + 2|c2|)·λ_max ≤ 3 λ_max < 2/lr.

    Returns the test MSE, shape (len(models), len(coefs), len(ns), trials).  NumPy on the CPU by design, like
    :func:`complete_matrices`: closed-form 3×3 products per cell, whose CPU results a torch rewrite would change.
    """
    stds = [std for _, std in models]
    if (not models or not min(stds) > 0 or (lr is not None and not lr > 0) or not lr_factor > 0 or steps < 0
            or trials < 1):
        raise ValueError(f"need models with init_std > 0, lr > 0 (or None), lr_factor > 0, steps ≥ 0, trials ≥ 1; "
                         f"got init_std {stds}, {lr}, {lr_factor}, {steps}, {trials}")
    ns = np.asarray(ns)
    nmax = int(ns.max())
    shape = (len(coefs), len(ns), trials)
    coef = np.asarray(coefs, dtype=float).T[:, None, :, None, None]  # (3, 1, T, 1, 1)
    thetas, tests = [], []
    for nonlinear, std in models:  # each model's draws as if fitted alone: samples, θ, test inputs
        rng = numpy_rng(seed)
        x = rng.uniform(-1, 1, (*shape, nmax, 2))
        theta = rng.normal(0, std, (*shape, 4 if nonlinear else 3))
        thetas.append(np.moveaxis(theta if nonlinear else np.concatenate([theta, np.ones((*shape, 1))], -1), -1, 0))
        tests.append(rng.uniform(-1, 1, (n_test, 2)))
    state = {"theta": np.stack(thetas, 1)}  # (4, K, T, N, trials)
    free = np.array([float(nl) for nl, _ in models])[:, None, None, None]  # θ3 trains for f_NL only
    feats = np.concatenate([np.ones((*shape, nmax, 1)), x], -1)  # (T, N, trials, n, 3), the same for all models
    observed = feats * (np.arange(nmax) < ns[None, :, None, None])[..., None]
    hessian = 2 * np.einsum("...ni,...nj->...ij", observed, observed) / ns[None, :, None, None, None]
    step_size = lr_factor / np.linalg.eigvalsh(hessian)[..., -1] if lr is None else lr  # (T, N, trials)
    h = np.moveaxis(hessian, (-2, -1), (0, 1))[:, :, None]  # (3, 3, 1, T, N, trials)

    def gradient_step(step: int) -> None:
        """One GD step per cell: g = H (w − c) in w, then the chain rule through θ2θ3 (NumPy, closed form)."""
        t0, t1, t2, t3 = state["theta"]
        d = np.stack([t0, t1, t2 * t3]) - coef  # (3, K, T, N, trials)
        g = (h * d[None]).sum(1)
        state["theta"] = np.stack([t0 - step_size * g[0], t1 - step_size * g[1], t2 - step_size * g[2] * t3,
                                   t3 - step_size * g[2] * t2 * free])

    run(gradient_step, steps=steps, record=lambda s: {}, record_every=max(steps, 1), progress=False,
        desc="f_L / f_NL fits")
    t0, t1, t2, t3 = state["theta"]
    d = np.moveaxis(np.stack([t0, t1, t2 * t3]) - coef, 0, -1)  # (K, T, N, trials, 3)
    ft = np.concatenate([np.ones((len(models), n_test, 1)), np.stack(tests)], -1)  # (K, n_test, 3)
    return (np.einsum("kti,k...i->k...t", ft, d) ** 2).mean(-1)


# --- CNN vs CNN without sharing vs fully connected (图10.3) -----------------------------------

ARCHITECTURES_10_3 = ("CNN", "CNN without sharing", "fully connected")


def target_10_18(x: Tensor) -> Tensor:
    """(10.18): f*(x) = Σ_{i=1}^{3} tanh(W*[1]_i · x), rows of W*[1] the kernel (0.6, 0.8, 1) shifted by one.

    ⚠ The book says x ∈ R⁴, but W*[1] is 3×5: x has d = 5 coordinates, shape (..., 5) → (...).
    """
    if x.shape[-1] != 5:
        raise ValueError(f"(10.18) needs inputs with d = 5 coordinates, got shape {tuple(x.shape)}")
    w = torch.zeros(3, 5, dtype=x.dtype, device=x.device)
    for i in range(3):
        w[i, i:i + 3] = torch.tensor([0.6, 0.8, 1.0], dtype=x.dtype, device=x.device)
    return torch.tanh(x @ w.T).sum(-1)


def net_10_3(arch: str, width: int, d: int = 5, s: int = 3) -> tuple[Model, int]:
    """One architecture of 图10.3 with ``width`` kernels (CNNs, kernel size s) or neurons (fully connected):
    the model f(θ, x) and its number of parameters M."""
    if width < 1:
        raise ValueError(f"width must be ≥ 1, got {width}")
    if arch == "fully connected":
        return two_layer_tanh(width, d), width * (d + 1)
    if arch in ARCHITECTURES_10_3:
        shared = arch == "CNN"
        return cnn_1d(width, d, s, shared=shared), n_params_cnn_1d(width, d, s, shared=shared)
    raise ValueError(f"unknown architecture {arch!r}; choose one of {ARCHITECTURES_10_3}")


def patch_form(arch: str, width: int, theta: Tensor, d: int = 5, s: int = 3) -> tuple[Tensor, Tensor]:
    """The three nets of 图10.3 as one form, f(x) = Σ_{p,j} a_{pj} tanh(u_p(x) · K_{pj}) over P patches
    u_p(x) ∈ R^s of the input: θ (C, M) of :func:`net_10_3` → a (C, P, m) and K (C, P_K, s, m), P_K = 1 when
    one kernel serves every patch (the CNN's weight sharing, or the fully connected net's single "patch"
    u = x of size d), P_K = P without sharing.  Views of θ's entries (differentiable); see :func:`theta_form`."""
    c = theta.shape[0]
    if arch == "fully connected":
        return theta[:, :width].reshape(c, 1, width), theta[:, width:].reshape(c, 1, width, d).transpose(-1, -2)
    p = d + 1 - s
    a = theta[:, : width * p].reshape(c, width, p).transpose(1, 2)
    if arch == "CNN":
        return a, theta[:, width * p:].reshape(c, 1, width, s).transpose(-1, -2)
    return a, theta[:, width * p:].reshape(c, width, p, s).permute(0, 2, 3, 1)


def theta_form(arch: str, a: Tensor, k: Tensor) -> Tensor:
    """The inverse of :func:`patch_form`: (a, K) → θ (C, M) in :func:`net_10_3`'s layout."""
    c = a.shape[0]
    if arch == "fully connected":
        return torch.cat([a.reshape(c, -1), k[:, 0].transpose(1, 2).reshape(c, -1)], 1)
    head = a.transpose(1, 2).reshape(c, -1)
    if arch == "CNN":
        return torch.cat([head, k[:, 0].transpose(1, 2).reshape(c, -1)], 1)
    return torch.cat([head, k.permute(0, 3, 1, 2).reshape(c, -1)], 1)


def patches(arch: str, x: Tensor, s: int = 3) -> Tensor:
    """The patches u_p(x) of :func:`patch_form`, x (C, N, d) → (C, P, N, s) (the whole x for the fully
    connected net, P = 1, s = d), contiguous."""
    u = x[:, None] if arch == "fully connected" else x.unfold(-1, s, 1).transpose(1, 2)
    return u.contiguous()


def patch_net_step(u: Tensor, a: Tensor, k: Tensor, y: Tensor, weight: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Outputs and closed-form gradients of Σ_c Σ_i w_ci (f_c(x_ci) − y_ci)² for the patch form.

    u (C, P, N, s), a (C, P, m), k (C, P_K, s, m), y and weight (C, N) (w = mask / n per cell).
    With z_{pnj} = u_{pn} · K_{pj}, t = tanh z, f_n = Σ_{pj} a_{pj} t_{pnj} and r_n = 2 w_n (f_n − y_n):
    ∂a_{pj} = Σ_n r_n t_{pnj};  ∂K_{pj} = Σ_n r_n a_{pj} (1 − t²_{pnj}) u_{pn}, summed over p when shared.
    Returns (f (C, N), ∂a, ∂K); several times faster than autograd on these few-parameter nets."""
    c, p, n, s = u.shape
    m = a.shape[-1]
    if k.shape[1] == 1:  # one kernel for every patch: one (P·N × s) @ (s × m) product per cell
        t = torch.tanh(torch.bmm(u.view(c, p * n, s), k[:, 0])).view(c, p, n, m)
    else:
        t = torch.tanh(torch.bmm(u.view(c * p, n, s), k.reshape(c * p, s, m))).view(c, p, n, m)
    f = torch.einsum("cpnm,cpm->cn", t, a)  # (C, N)
    r = 2 * weight * (f - y)
    grad_a = torch.einsum("cpnm,cn->cpm", t, r)
    dz = (1 - t * t) * r[:, None, :, None] * a[:, :, None, :]  # (C, P, N, m)
    if k.shape[1] == 1:
        grad_k = torch.bmm(u.view(c, p * n, s).transpose(1, 2), dz.view(c, p * n, m))[:, None]
    else:
        grad_k = torch.bmm(u.view(c * p, n, s).transpose(1, 2), dz.view(c * p, n, m)).view(c, p, s, m)
    return f, grad_a, grad_k


@cached
def fit_nets_10_18(arch: str, ns: np.ndarray, trials: int, *, width: int, init_std: float = 1e-6,
                   lr: float = 0.3, steps: int = 3000, seed: int = 0, n_test: int = 500,
                   precision: str = "float64") -> np.ndarray:
    """图10.3: fit the target (10.18) from n samples x ~ N(0, I_5) by full-batch GD on the mean squared
    error from θ ~ N(0, std²), every n × trial at once (each cell its own θ and samples; float64).

    The step is plain GD, θ ← θ − lr ∇_θ (1/n) Σ_i (f(x_i; θ) − f*(x_i))², with the closed-form gradient of
    :func:`patch_net_step` (the three architectures share one form, :func:`patch_form`); the test error
    is measured with the model of :func:`net_10_3` itself.  Returns the test MSE, shape (len(ns), trials).
    The samples, θ and the test inputs are drawn on the CPU (from ``seed``, the same on every device) and moved to
    the settings' device, where the steps run and the run's one record, the test error, is measured.
    ``precision="float32"`` runs the steps in single precision (the same draws, rounded; twice as fast on a CPU),
    enough for test errors judged at 10⁻²."""
    if precision not in ("float64", "float32"):
        raise ValueError(f"precision must be 'float64' or 'float32', got {precision!r}")
    if not init_std > 0 or not lr > 0 or steps < 1 or trials < 1:
        raise ValueError(f"need init_std > 0, lr > 0, steps ≥ 1, trials ≥ 1; got {init_std}, {lr}, {steps}, {trials}")
    ns = np.asarray(ns)
    if ns.ndim != 1 or len(ns) == 0 or ns.min() < 1:
        raise ValueError(f"ns must be a non-empty 1-D array of sample sizes ≥ 1, got {ns}")
    model, n_params = net_10_3(arch, width)  # batched: θ (C, M), x (C or 1, n, 5) → (C, n)
    gen, f64 = generator(seed), dict(dtype=torch.float64)
    device = dict(device=settings().device, dtype=getattr(torch, precision))
    counts = torch.tensor(np.repeat(ns, trials), **f64)  # (C,) cells = n × trial
    mask = (torch.arange(int(ns.max()))[None] < counts[:, None]).double()  # (C, n_max)
    x = torch.randn(len(counts), int(ns.max()), 5, generator=gen, **f64).to(**device)  # (C, n_max, 5)
    y, weight, u = target_10_18(x), (mask / counts[:, None]).to(**device), patches(arch, x)
    theta = (init_std * torch.randn(len(counts), n_params, generator=gen, **f64)).to(**device)
    a, k = (t.contiguous() for t in patch_form(arch, width, theta))

    def gradient_step(step: int) -> None:
        _, grad_a, grad_k = patch_net_step(u, a, k, y, weight)
        a.sub_(lr * grad_a)
        k.sub_(lr * grad_k)

    x_test = torch.randn(n_test, 5, generator=gen, **f64).to(**device)

    def test_error(step: int) -> dict[str, Tensor]:
        return {"mse": ((model(theta_form(arch, a, k), x_test[None]) - target_10_18(x_test)) ** 2).mean(1)}  # (C,)

    history = run(gradient_step, steps=steps, record=test_error, record_at=[steps], progress=False,
                  desc=f"图10.3 {arch}")
    return np.nan_to_num(history["mse"][-1], nan=np.inf).reshape(len(ns), trials)


def samples_needed(ns: np.ndarray, median_error: np.ndarray, threshold: float) -> float:
    """Smallest n from which the median error stays below ``threshold`` for every larger n of the grid
    (NaN, "never", if it is not below at the largest n).  ns (N,) increasing, median_error (N,)."""
    ns, median_error = np.asarray(ns), np.asarray(median_error)
    if ns.shape != median_error.shape or ns.ndim != 1 or np.any(np.diff(ns) <= 0):
        raise ValueError(f"need increasing ns and errors of one shape (N,); got {ns.shape}, {median_error.shape}")
    above = np.flatnonzero(median_error >= threshold)
    if len(above) == 0:
        return float(ns[0])
    return float(ns[above[-1] + 1]) if above[-1] + 1 < len(ns) else float("nan")


def optimistic_10_18(arch: str) -> int:
    """Optimistic sample sizes of the target (10.18) (section 1 of the chapter checks them by model rank):
    CNN k(s)=1·(d+1) = 6, CNN without sharing 3·(s+1) = 12, fully connected k(d+1) = 18 (10.15)."""
    sizes = {"CNN": optimistic_nn(1, 5), "CNN without sharing": 3 * (3 + 1), "fully connected": optimistic_nn(3, 5)}
    if arch not in sizes:
        raise ValueError(f"unknown architecture {arch!r}; choose one of {tuple(sizes)}")
    return sizes[arch]


# --- the chapter's experiments and claims -----------------------------------------------------

@dataclass
class RankResult:
    """Section 1: numerical model ranks (10.6) of the chapter's models at (or near) their targets' best points.

    ``perturb`` > 0 moves every point off its target set by a Gaussian of that std (the negative control).
    """

    f_nl_best: int          # f_NL at θ2 = θ3 = 0 (10.9): 2
    f_nl_generic: int       # f_NL at a random θ: 3
    f_l: int                # f_L anywhere: 3
    example2: dict          # Q1, Q2, Q3 of Example 2: 3, 4, 4
    matrix: list            # AB at A = [U, 0], B = [V; 0], r = 1..4 (10.14): 7, 12, 15, 16
    fnn: dict               # width m → rank of Σ a tanh(wᵀx) at (10.18)'s best point (10.15): 18
    cnn: int                # 1-D CNN (10.17): 6
    cnn_no_sharing: int     # the same without weight sharing: 12
    fit_error: float        # max |f_θ − f*| of the nets placed at (10.18)'s best point
    perturb: float = 0.0


W_STAR_10_18 = ((0.6, 0.8, 1.0, 0.0, 0.0), (0.0, 0.6, 0.8, 1.0, 0.0), (0.0, 0.0, 0.6, 0.8, 1.0))


@cached
def model_ranks(seed: int, *, perturb: float = 0.0, n_inputs: int = 2000,
                widths: Sequence[int] = (3, 10, 30)) -> RankResult:
    """Every model rank of section 1 on ``n_inputs`` random inputs drawn from ``seed`` (float64).

    The points are the best points of each target set (θ2 = θ3 = 0; Q1–Q3 of Example 2; A = [U, 0],
    B = [V; 0]; the nets holding (10.18)'s three neurons with the extra neurons zero); ``perturb`` adds
    N(0, perturb²) to each of them, which leaves the target set (the ranks become generic)."""
    if perturb < 0:
        raise ValueError(f"perturb must be ≥ 0, got {perturb}")
    f64 = dict(dtype=torch.float64)
    gen = generator(seed)

    def moved(theta: Tensor) -> Tensor:
        return theta + perturb * torch.randn(theta.shape, generator=gen, **f64) if perturb else theta

    x2 = torch.randn(n_inputs, 2, generator=gen, **f64)
    x5 = torch.randn(n_inputs, 5, generator=gen, **f64)
    f_nl_best = model_rank(f_nonlinear, moved(torch.tensor([0.7, -1.2, 0.0, 0.0], **f64)), x2)
    f_nl_generic = model_rank(f_nonlinear, torch.randn(4, generator=gen, **f64), x2)
    f_l = model_rank(f_linear, torch.randn(3, generator=gen, **f64), x2)

    a_bar, w_bar, w_free = 1.3, torch.tensor([0.7, -0.4], **f64), torch.tensor([0.3, 0.9], **f64)
    q_points = {"Q1": torch.cat([torch.tensor([0.4], **f64), w_bar, torch.tensor([a_bar - 0.4], **f64), w_bar]),
                "Q2": torch.cat([torch.tensor([a_bar], **f64), w_bar, torch.tensor([0.0], **f64), w_free]),
                "Q3": torch.cat([torch.tensor([0.0], **f64), w_free, torch.tensor([a_bar], **f64), w_bar])}
    example2 = {k: model_rank(fixed_bias_pair, moved(q), x2) for k, q in q_points.items()}

    d4, entries = 4, all_entries(4)
    matrix = []
    for r in range(1, 5):
        a_mat, b_mat = torch.zeros(d4, d4, **f64), torch.zeros(d4, d4, **f64)
        a_mat[:, :r] = torch.randn(d4, r, generator=gen, **f64)
        b_mat[:r] = torch.randn(r, d4, generator=gen, **f64)
        matrix.append(model_rank(matrix_factorisation(d4), moved(torch.cat([a_mat.ravel(), b_mat.ravel()])), entries))

    w_star = torch.tensor(W_STAR_10_18, **f64)
    f_star = torch.tanh(x5 @ w_star.T).sum(1)
    fnn, fit_err = {}, []
    for m in widths:
        a_out, w_in = torch.zeros(m, **f64), torch.zeros(m, 5, **f64)
        a_out[:3], w_in[:3] = 1.0, w_star
        model, theta = two_layer_tanh(m, 5), moved(torch.cat([a_out, w_in.ravel()]))
        fit_err.append(float((model(theta, x5) - f_star).abs().max()))
        fnn[int(m)] = model_rank(model, theta, x5)
    kernel = torch.tensor(W_STAR_10_18[0][:3], **f64)  # x_j, x_{j+1}, x_{j+2} weights (the rows of W*[1])
    cnn = {}
    for shared in (True, False):
        model = cnn_1d(1, 5, 3, shared=shared)
        theta = moved(torch.cat([torch.ones(3, **f64), kernel if shared else kernel.repeat(3)]))
        fit_err.append(float((model(theta, x5) - f_star).abs().max()))
        cnn[shared] = model_rank(model, theta, x5)
    return RankResult(f_nl_best, f_nl_generic, f_l, example2, matrix, fnn, cnn[True], cnn[False], max(fit_err),
                      perturb)


RANK_EXAMPLES = ClaimSpec("ch10.rank-examples", "(10.9)/例2",
                          "the model rank is 2 or 3 for f_NL, 3 for f_L, and 3, 4, 4 on Q1, Q2, Q3 of Example 2",
                          kind="identity")


def check_rank_examples(res: RankResult) -> Verdict:
    """Every rank equals the book's: a count of the ranks that differ, which must be 0."""
    got = [res.f_nl_best, res.f_nl_generic, res.f_l, *res.example2.values()]
    wrong = sum(int(g != e) for g, e in zip(got, (2, 3, 3, 3, 4, 4)))
    return RANK_EXAMPLES.judge(count("ranks differing from the book's 6", wrong, "<", 1),
                               f_nl=[res.f_nl_best, res.f_nl_generic], f_l=res.f_l,
                               example2=list(res.example2.values()))


RANK_FORMULAS = ClaimSpec("ch10.rank-formulas", "(10.14)/(10.15)/(10.17)",
                          "numerical model ranks equal 2rd − r² (7, 12, 15, 16), k(d+1) = 18 for every width, "
                          "6 for the CNN and 12 without weight sharing", kind="identity")

#: max |f_θ − f*| of a net that holds the target exactly: float64 rounding of a sum of three tanh of
#: inputs of size ≲ 10 is ≲ 1e-14; 1e-12 leaves a factor 100 and is far below any fitting error.
FIT_TOL = 1e-12


def check_rank_formulas(res: RankResult) -> Verdict:
    """Ranks against the closed forms (a count of mismatches, 0) and the nets hold (10.18) exactly."""
    expected = ([optimistic_matrix(r, 4) for r in range(1, 5)] + [optimistic_nn(3, 5)] * len(res.fnn)
                + [optimistic_nn(1, 5), 3 * (3 + 1)])
    got = res.matrix + list(res.fnn.values()) + [res.cnn, res.cnn_no_sharing]
    wrong = sum(int(g != e) for g, e in zip(got, expected))
    return RANK_FORMULAS.judge(count(f"ranks differing from the formulas' {len(expected)}", wrong, "<", 1),
                               identity("max |f − f*| at the best point", res.fit_error, FIT_TOL),
                               matrix=res.matrix, fnn=list(res.fnn.values()), cnn=res.cnn,
                               cnn_no_sharing=res.cnn_no_sharing)


NAMES_10_1 = ("1", "x1", "1+x1", "x2", "1+x2")


@dataclass
class LinearFitResult:
    """图10.1 / 图10.5a: median test MSE over trials, shape (target, n) for f_NL and f_L from a small init
    and f_NL from a large init."""

    names: tuple
    ns: np.ndarray
    small_std: float
    large_std: float
    f_nl: np.ndarray
    f_l: np.ndarray
    f_nl_large: np.ndarray

    def at(self, err: np.ndarray, names: Sequence[str], n: int) -> np.ndarray:
        """The errors of the named targets at n samples."""
        return err[[self.names.index(k) for k in names], list(self.ns).index(n)]


@cached
def fl_vs_fnl(trials: int, steps: int, *, seed: int = 0, names: Sequence[str] = NAMES_10_1,
              ns: Sequence[int] = (1, 2, 3, 4), small_std: float = 1e-4, large_std: float = 0.3) -> LinearFitResult:
    """f_L and f_NL from init std ``small_std`` and f_NL from ``large_std`` on the targets ``names``."""
    coefs, ns = [TARGETS_10_1[k] for k in names], np.asarray(ns)
    err = fit_linear_model_set(coefs, ns, trials, [(True, small_std), (False, small_std), (True, large_std)],
                               steps=steps, seed=seed)
    return LinearFitResult(tuple(names), ns, small_std, large_std, *np.median(err, -1))


#: A recovered target: median test MSE below this (the targets have mean square ≈ 1; float64 GD that has
#: converged ends at 1e-30 … 1e-14, an unrecovered one at 1e-3 or above).
RECOVERED = 1e-8
NOT_RECOVERED = 1e-3

FL_VS_FNL = ClaimSpec("ch10.fl-vs-fnl", "图10.1",
                      "at n = 2 f_NL recovers 1, x1, 1+x1 while f_L recovers none; with x2 both need 3 samples")


def check_fl_vs_fnl(res: LinearFitResult) -> Verdict:
    no_x2, with_x2 = ("1", "x1", "1+x1"), ("x2", "1+x2")
    worst_n3 = max(float(res.at(res.f_nl, res.names, 3).max()), float(res.at(res.f_l, res.names, 3).max()))
    return FL_VS_FNL.judge(identity("f_NL n=2, worst of 1, x1, 1+x1", float(res.at(res.f_nl, no_x2, 2).max()), RECOVERED),
                           threshold("f_L n=2, best target", float(res.at(res.f_l, res.names, 2).min()), ">", NOT_RECOVERED),
                           threshold("f_NL n=2, best of x2, 1+x2", float(res.at(res.f_nl, with_x2, 2).min()), ">",
                                     NOT_RECOVERED),
                           identity("n=3, worst of f_L and f_NL", worst_n3, RECOVERED),
                           f_nl_n2=res.at(res.f_nl, res.names, 2), f_l_n2=res.at(res.f_l, res.names, 2))


FNL_LARGE_INIT = ClaimSpec("ch10.fnl-large-init", "图10.5a",
                           "with a large init (std 0.3) f_NL no longer recovers 1+x1 from 2 samples, like the linear model")


def check_fnl_large_init(res: LinearFitResult) -> Verdict:
    return FNL_LARGE_INIT.judge(
        threshold(f"f_NL n=2 1+x1, std {res.large_std:g}", float(res.at(res.f_nl_large, ["1+x1"], 2)[0]), ">", NOT_RECOVERED),
        identity(f"f_NL n=2 1+x1, std {res.small_std:g}", float(res.at(res.f_nl, ["1+x1"], 2)[0]), RECOVERED))


@dataclass
class CompletionResult:
    """图10.2 / 图10.5b: recovery grids of 4×4 matrix completion, one per init std."""

    ranks: list
    ns: np.ndarray
    grids: dict            # init std → RecoveryGrid
    success_threshold: float

    @property
    def optimistic(self) -> np.ndarray:
        return np.array([optimistic_matrix(r, 4) for r in self.ranks])

    @property
    def small(self) -> RecoveryGrid:
        return self.grids[min(self.grids)]

    @property
    def large(self) -> RecoveryGrid:
        return self.grids[max(self.grids)]

    def half_point(self, grid: RecoveryGrid) -> np.ndarray:
        """Per rank, the smallest n with ≥ 50% success (NaN: never on the grid)."""
        return np.array([float(self.ns[np.argmax(row >= 0.5)]) if (row >= 0.5).any() else math.nan
                         for row in grid.success])

    def success_below(self) -> float:
        """The largest success fraction at any n < 2rd − r², over every rank, at the small init."""
        return max(float(self.small.success[i, self.ns < opt].max(initial=0.0)) for i, opt in enumerate(self.optimistic))


#: Matrix completion: GD from a small init std (the book's small-init limit), step 0.2, 6000 steps;
#: success = relative error < 1e-3 (see the chapter: at 1e-2 a guessed missing entry passed by chance).
COMPLETION = dict(lr=0.2, steps=6000, threshold=1e-3)


@cached
def matrix_completion(ranks: Sequence[int], ns: Sequence[int], trials: int, init_stds: Sequence[float], *,
                      seed: int = 0, lr: float = COMPLETION["lr"], steps: int = COMPLETION["steps"],
                      threshold: float = COMPLETION["threshold"]) -> CompletionResult:
    """The recovery grids of 图10.2/图10.5b for every init std (same seed: same targets and masks)."""
    ns = np.asarray(ns)
    grids = {float(std): completion_grid(list(ranks), ns, trials, init_std=std, lr=lr, steps=steps,
                                         threshold=threshold, seed=seed) for std in init_stds}
    return CompletionResult(list(ranks), ns, grids, threshold)


COMPLETION_TRANSITION = ClaimSpec("ch10.completion-transition", "图10.2",
                                  "with small init, success is (near) zero below 2rd − r² for every rank and reaches "
                                  "50% within 4 entries of it for ranks 1 and 2 (weaker than the book, whose ranks "
                                  "1–4 are recovered at exactly 7, 12, 15, 16: see ch10.completion-order)")


def check_completion_transition(res: CompletionResult) -> Verdict:
    half = res.half_point(res.small)
    conds = [threshold("largest success at n < 2rd − r²", res.success_below(), "<=", 0.1)]
    for i, r in enumerate(res.ranks):
        if r in (1, 2):
            conds.append(threshold(f"n½ rank {r}", half[i], "<=", float(res.optimistic[i] + 4)))
    return COMPLETION_TRANSITION.judge(*conds, n_half=half, optimistic=res.optimistic,
                                       init_std=min(res.grids))


COMPLETION_LARGE_INIT = ClaimSpec("ch10.completion-large-init", "图10.5b",
                                  "with a large init (std 0.5) a rank-1 target needs at least 14 entries, like the "
                                  "linear model (16), and more than 2 entries beyond what the small init needs",
                                  validation_seeds=REVALIDATION_SEEDS)


def check_completion_large_init(res: CompletionResult) -> Verdict:
    """图10.5b: n½ of rank 1 at the large init ≥ 14 and > n½ at the small init + 2.

    Both n½ must be measured: the grid runs to n = 16 = d², every entry observed, where a trained large-init
    run recovers the target (the linear model's count); a run that never reaches 50% success on the grid —
    one that did not train — has no n½ and fails the claim (it would otherwise pass "needs more entries")."""
    i = res.ranks.index(1)
    large, small = res.half_point(res.large)[i], res.half_point(res.small)[i]
    return COMPLETION_LARGE_INIT.judge(
        threshold(f"n½ rank 1, std {max(res.grids):g}", large, ">=", 14.0),
        compare(f"n½ rank 1, std {max(res.grids):g}", large, ">", f"n½ std {min(res.grids):g} + 2", small + 2))


# --- 图10.2 as the book draws it: sample orders that identify the target, the mean error over inits ---------------

def conditioned_low_rank_targets(n: int, d: int, r: int, rng: np.random.Generator, *,
                                 min_ratio: float = 0.1) -> np.ndarray:
    """n rank-r d×d targets FG, F (d×r) and G (r×d) with entries ±U[0.5, 1.5] (random signs), scaled to ‖M‖_F = d and
    drawn again until σ_r/σ_1 ≥ ``min_ratio``; shape (n, d, d).

    Like the book's eight targets of 图10.2 (entries of one size, no near-zero row or column; σ_r/σ_1 from 0.04 to
    0.42): a Gaussian factor can make a row of the target a hundred times smaller than the others, and then an init
    of 10⁻⁶ is no longer small against it; a nearly singular target needs many more GD steps than the others."""
    if not 1 <= r <= d or n < 1 or not 0 <= min_ratio < 1:
        raise ValueError(f"need 1 ≤ r ≤ d={d}, n ≥ 1 and min_ratio in [0, 1); got r={r}, n={n}, min_ratio={min_ratio}")
    out = np.zeros((0, d, d))
    while len(out) < n:
        f = rng.uniform(0.5, 1.5, (n, d, r)) * rng.choice([-1.0, 1.0], (n, d, r))
        g = rng.uniform(0.5, 1.5, (n, r, d)) * rng.choice([-1.0, 1.0], (n, r, d))
        m = f @ g
        s = np.linalg.svd(m, compute_uv=False)
        m = m[s[:, r - 1] / s[:, 0] >= min_ratio]
        out = np.concatenate([out, m * d / np.linalg.norm(m, axis=(1, 2), keepdims=True)])
    return out[:n]


def identifying_order(target: np.ndarray, r: int, rng: np.random.Generator, *, tries: int = 1000) -> np.ndarray:
    """A random order of the d² entries of a rank-r target whose first 2rd − r² entries identify it locally: the model
    rank (10.6) of AB on those entries, at the target's best point A = [U√S, 0], B = [√S Vᵀ; 0], is 2rd − r² (the
    tangent space of the rank-r matrices at M* is seen in full).  Every longer prefix then identifies it too.

    A random set of 2rd − r² entries often does not (rank 1: only ≈ 37% of 7-entry sets do):
    orders are drawn until one does (at most ``tries``)."""
    d = target.shape[0]
    u, s, vt = np.linalg.svd(target)
    a, b = np.zeros((d, d)), np.zeros((d, d))
    a[:, :r], b[:r] = u[:, :r] * np.sqrt(s[:r]), np.sqrt(s[:r])[:, None] * vt[:r]
    theta, entries, size = torch.tensor(np.concatenate([a.ravel(), b.ravel()])), all_entries(d), optimistic_matrix(r, d)
    for _ in range(tries):
        order = rng.permutation(d * d)
        if model_rank(matrix_factorisation(d), theta, entries[order[:size]]) == size:
            return order
    raise ValueError(f"no order of {tries} identifies the rank-{r} target from {size} entries")


def cross_order(target: np.ndarray, r: int) -> np.ndarray:
    """The book's sample order of 图10.2 for a rank-r target (the authors' experiment: row 1, then column 1, then the
    rest of row 2, of column 2, …), laid through the r×r block of largest |det|, the pivot block of a cross (skeleton)
    approximation: rows I and columns J of that block come first, in increasing order, then the others.

    Its first 2rd − r² entries are the rows I and the columns J, which determine a rank-r matrix with M[I, J]
    invertible (M = M[:, J] M[I, J]⁻¹ M[I, :]); one entry fewer leaves a direction of the rank-r matrices unseen.
    The book's order puts rows and columns 1 … r in the cross whatever the target: a nearly singular M[1:r, 1:r]
    (σ_min/σ_max ≈ 0.004 on a design target) makes the completion ill-conditioned, and GD from a small init then settled
    on a nearly rank-r matrix of smaller norm instead; the largest-volume block is the rule that avoids it, chosen
    from the target alone (as the book's order is fixed before training).  Returns a permutation of the d² entries
    (row-major indices)."""
    d = target.shape[0]
    if target.shape != (d, d) or not 1 <= r <= d:
        raise ValueError(f"need a square target and 1 ≤ r ≤ d={d}; got shape {target.shape}, r={r}")
    subsets = list(itertools.combinations(range(d), r))
    _, rows_i, cols_j = max(((abs(np.linalg.det(target[np.ix_(i, j)])), i, j) for i in subsets for j in subsets),
                            key=lambda t: t[0])
    rows = list(rows_i) + [i for i in range(d) if i not in rows_i]
    cols = list(cols_j) + [j for j in range(d) if j not in cols_j]
    book = []
    for k in range(d):  # row k from the diagonal on, then column k below it
        book += [(k, j) for j in range(k, d)] + [(i, k) for i in range(k + 1, d)]
    return np.array([rows[i] * d + cols[j] for i, j in book])


@dataclass
class CompletionCurves:
    """图10.2 as the book draws it: per target (rows, ranks increasing) the relative errors of every init at every
    number n of observed entries, the first n of the target's identifying order (:func:`identifying_order`)."""

    ranks: np.ndarray      # (T,) the rank of each target
    ns: np.ndarray         # (N,) 1 … d²
    error: np.ndarray      # (T, N, K) ‖AB − M*‖_F / ‖M*‖_F of each init
    tol: float

    @property
    def optimistic(self) -> np.ndarray:
        """2rd − r² of each target (10.14)."""
        return np.array([optimistic_matrix(int(r), 4) for r in self.ranks])

    @property
    def mean_error(self) -> np.ndarray:
        """The book's colour: the mean error over the inits, (T, N)."""
        return self.error.mean(-1)

    @property
    def transition(self) -> np.ndarray:
        """Per target the first n at which the mean error falls below ``tol`` (the book: where it "first approaches
        zero"); NaN: never on the grid."""
        below = self.mean_error < self.tol
        return np.array([float(self.ns[np.argmax(row)]) if row.any() else math.nan for row in below])

    def rank_transition(self) -> dict:
        """Per rank the median transition over its targets, a target that never recovers counting as later than any n
        (NaN when most never do)."""
        t = np.nan_to_num(self.transition, nan=np.inf)
        med = {int(r): float(np.median(t[self.ranks == r])) for r in np.unique(self.ranks)}
        return {r: (v if np.isfinite(v) else math.nan) for r, v in med.items()}

    def draw(self, title: str, height: float = 4.5):
        """图10.2's heat map: log₁₀ of the mean error over inits, a row per target and a column per n, with 2rd − r²
        (10.14) as a red bar and the measured transition as a dotted white one."""
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7.5, height))
        image = ax.imshow(np.log10(np.maximum(self.mean_error, 1e-12)), cmap="viridis", vmin=-12, vmax=0,
                          aspect="auto", origin="lower", extent=(0.5, 16.5, -0.5, len(self.ranks) - 0.5))
        for row, (opt, n_t) in enumerate(zip(self.optimistic, self.transition)):
            ax.plot([opt - 0.5, opt - 0.5], [row - 0.5, row + 0.5], color="r", lw=2)
            if not np.isnan(n_t):
                ax.plot([n_t - 0.5, n_t - 0.5], [row - 0.4, row + 0.4], color="w", lw=1.2, ls=":")
        ax.set_yticks(range(len(self.ranks)), [f"rank {r}" for r in self.ranks])
        ax.set_xlabel("observed entries n")
        ax.set_title(title)
        ax.grid(False)
        fig.colorbar(image, ax=ax, label="log10 mean relative error")
        return fig


#: 图10.2 as the book draws it: init std 10⁻⁶, GD step 0.2, 20 000 steps; transition: mean relative error < 10⁻³.
#: The sample orders of :func:`completion_curves`.
ORDERS = ("identifying", "cross")
CURVES = dict(init_std=1e-6, lr=0.2, steps=20_000, tol=1e-3)


@cached
def completion_curves(targets_per_rank: int, inits: int, *, ranks: Sequence[int] = (1, 2, 3, 4), d: int = 4,
                      init_std: float = CURVES["init_std"], lr: float = CURVES["lr"], steps: int = CURVES["steps"],
                      tol: float = CURVES["tol"], min_ratio: float = 0.1, seed: int = 0,
                      order: str = "identifying") -> CompletionCurves:
    """图10.2: ``targets_per_rank`` targets of each rank (:func:`conditioned_low_rank_targets`), each with one
    order of its entries — ``"identifying"``, a random order whose first 2rd − r² entries identify it
    (:func:`identifying_order`), or ``"cross"``, the book's rows-and-columns order (:func:`cross_order`); for every
    n = 1 … d² the first n entries observed and ``inits`` random inits N(0, std²) trained by GD
    (:func:`complete_matrices`), all targets × n × inits in one batched computation."""
    if targets_per_rank < 1 or inits < 1:
        raise ValueError(f"need targets_per_rank ≥ 1 and inits ≥ 1, got {targets_per_rank}, {inits}")
    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
    rng = numpy_rng(seed)
    targets = np.concatenate([conditioned_low_rank_targets(targets_per_rank, d, r, rng, min_ratio=min_ratio)
                              for r in ranks])  # (T, d, d)
    rank_of = np.repeat(np.asarray(ranks), targets_per_rank)
    orders = np.stack([identifying_order(m, int(r), rng) if order == "identifying" else cross_order(m, int(r))
                       for m, r in zip(targets, rank_of)])  # (T, d²)
    ns = np.arange(1, d * d + 1)
    masks = (np.argsort(orders, 1)[:, None, :] < ns[None, :, None]).astype(float)  # (T, N, d²): entry's place < n
    shape = (len(targets), len(ns), inits, d, d)
    cells_t = np.broadcast_to(targets[:, None, None], shape).reshape(-1, d, d)
    cells_m = np.broadcast_to(masks.reshape(len(targets), len(ns), 1, d, d), shape).reshape(-1, d, d)
    err = complete_matrices(np.ascontiguousarray(cells_t), np.ascontiguousarray(cells_m), init_std=init_std, lr=lr,
                            steps=steps, rng=rng)
    return CompletionCurves(rank_of, ns, err.reshape(len(targets), len(ns), inits), tol)


COMPLETION_ORDER = ClaimSpec("ch10.completion-order", "图10.2",
                             "with small init and sample orders whose first 2rd − r² entries identify the target, the "
                             "mean error over inits first falls below 1e-3 (per rank the median over its targets) in "
                             "the order rank 1 < 2 < 3, ranks 1–4 each at their optimistic size 7, 12, 15, 16 or at "
                             "most 2 entries later (rank 4: at 16, every entry), and for no target earlier")
COMPLETION_EXACT = ClaimSpec("ch10.completion-exact", "图10.2",
                             "with small init and the book's sample order (the rows and columns of a cross), the mean "
                             "error over inits of every target of rank r stays above 1e-3 for every n < 2rd − r² and "
                             "falls below it from n = 2rd − r² on: recovery at exactly 7, 12, 15, 16 entries")
#: How many entries after 2rd − r² the transition of 图10.2 may come (ch10.completion-order).
ORDER_SLACK = 2


def check_completion_order(res: CompletionCurves) -> Verdict:
    """图10.2: the rank medians n_t of the transition increase from rank 1 to 3, each lies at most ``ORDER_SLACK``
    entries after 2rd − r² (a rank whose targets mostly never recover fails), and no target's mean error falls below
    the tolerance before its optimistic size (a count, 0).  Ranks 3 and 4 may tie at 16: a target of rank 3 with one
    entry unobserved that GD completes with a full-rank matrix needs all 16."""
    t = res.rank_transition()
    ranks = sorted(t)
    early = int(np.sum(res.transition < res.optimistic))  # NaN (never) is not early
    conds = [compare(f"n_t rank {a}", t[a], "<", f"n_t rank {b}", t[b]) for a, b in zip(ranks, ranks[1:]) if b < 4]
    conds += [threshold(f"n_t rank {r}", t[r], "<=", float(optimistic_matrix(r, 4) + ORDER_SLACK)) for r in ranks]
    conds.append(count("targets below 2rd − r²", early, "<", 1))
    return COMPLETION_ORDER.judge(*conds, n_t=res.transition, optimistic=res.optimistic)


def check_completion_exact(res: CompletionCurves) -> Verdict:
    """图10.2 as the book states it, on :func:`completion_curves` with ``order="cross"``: for each rank r, the smallest
    mean error over inits at any n < 2rd − r² (over the rank's targets) is above ``res.tol`` and the largest at any
    n ≥ 2rd − r² below it, so that every target's error drops exactly between 2rd − r² − 1 and 2rd − r²."""
    conds = []
    for r in sorted(int(v) for v in np.unique(res.ranks)):
        opt, err = optimistic_matrix(r, 4), res.mean_error[res.ranks == r]  # (targets of rank r, N)
        conds.append(threshold(f"smallest mean error at n < {opt} (rank {r})", float(err[:, res.ns < opt].min()),
                               ">", res.tol))
        conds.append(threshold(f"largest mean error at n ≥ {opt} (rank {r})", float(err[:, res.ns >= opt].max()),
                               "<", res.tol))
    return COMPLETION_EXACT.judge(*conds, n_t=res.transition, optimistic=res.optimistic)


@dataclass
class NetsResult:
    """图10.3: median test MSE over trials per architecture and n, and the samples needed n*."""

    ns: np.ndarray
    widths: dict
    median: dict           # architecture → (N,)
    success: dict          # architecture → (N,) fraction of trials with test MSE < 1e-3
    threshold: float

    @property
    def n_star(self) -> dict:
        return {arch: samples_needed(self.ns, med, self.threshold) for arch, med in self.median.items()}


NS_10_3 = (4, 6, 8, 12, 16, 20, 24, 28, 32, 40)


def architectures_10_3(trials: int, steps: int, widths: dict, *, seed: int = 0, ns: Sequence[int] = NS_10_3,
                       init_std: float = 1e-6, threshold: float = 1e-2) -> NetsResult:
    """图10.3: every architecture of ``widths`` fitted to (10.18) for every n × trial (see :func:`fit_nets_10_18`)."""
    ns = np.asarray(ns)
    err = {arch: fit_nets_10_18(arch, ns, trials, width=w, steps=steps, seed=seed, init_std=init_std)
           for arch, w in widths.items()}
    return NetsResult(ns, dict(widths), {a: np.median(e, 1) for a, e in err.items()},
                      {a: (e < 1e-3).mean(1) for a, e in err.items()}, threshold)


ARCHITECTURE_ORDER = ClaimSpec("ch10.architecture-order", "图10.3",
                               "samples needed for median test MSE < 1e-2: CNN < CNN without sharing < fully "
                               "connected, and the CNN needs fewer than its 12 parameters")


def check_architecture_order(res: NetsResult) -> Verdict:
    n = res.n_star
    m_cnn = net_10_3("CNN", res.widths["CNN"])[1]
    return ARCHITECTURE_ORDER.judge(
        compare("n*(CNN)", n["CNN"], "<", "n*(CNN without sharing)", n["CNN without sharing"]),
        compare("n*(CNN without sharing)", n["CNN without sharing"], "<", "n*(fully connected)", n["fully connected"]),
        threshold("n*(CNN)", n["CNN"], "<", float(m_cnn)))


# --- 图10.3(b)–(d): the same sweep at several widths ("width is free") --------------------------

#: The panels of 图10.3 for the three architectures: (b) fully connected of width 3N, (c) CNN without sharing and
#: (d) CNN with N kernels; the book's widths are N = 1, 3, 10, 34, 100 ("1x" … "100x").
PANELS_10_3 = {"fully connected": "b", "CNN without sharing": "c", "CNN": "d"}
#: Per architecture the sample sizes of its row (around its optimistic size 6, 12 or 18 and the n* of 图10.3(a)).
NS_WIDTH_10_3 = {"CNN": (2, 4, 6, 8, 10, 12, 16, 20), "CNN without sharing": (8, 12, 16, 20, 24, 28, 32, 40),
                 "fully connected": (16, 20, 24, 28, 32, 40, 48, 64)}


def width_10_3(arch: str, multiple: int) -> int:
    """The width of the "Nx" net of 图10.3(b)–(d): N kernels for the CNNs, 3N neurons for the fully connected net
    (its 1x is the width 3 of (10.18))."""
    if multiple < 1:
        raise ValueError(f"the width multiple N must be ≥ 1, got {multiple}")
    return 3 * multiple if arch == "fully connected" else multiple


def lr_10_3(multiple: int, lr: float = 0.3) -> float:
    """The GD step of the "Nx" net: ``lr`` up to 10x, then lr·10/N.  The book tunes the step per setting between
    0.05 and 0.5; here it shrinks with N beyond 10x because a condensed net of N kernels has N output weights
    on one feature, an N times sharper curvature (at lr 0.3 the 34x CNN diverged on a seed of the design)."""
    return lr * min(1.0, 10.0 / multiple)


@dataclass
class WidthSweep:
    """图10.3(b)–(d): per architecture, the median test MSE over trials at each width multiple N (rows) and
    sample size n (columns), and from it the samples needed n* per row (:func:`samples_needed`)."""

    multiples: tuple       # N of the rows, increasing
    ns: dict               # architecture → (n,) its sample sizes
    median: dict           # architecture → (len(multiples), n) median test MSE
    threshold: float

    def n_params(self, arch: str) -> np.ndarray:
        """M of each row's net."""
        return np.array([net_10_3(arch, width_10_3(arch, k))[1] for k in self.multiples])

    def n_star(self, arch: str) -> np.ndarray:
        """The samples needed per row (NaN: not below the threshold at the row's largest n)."""
        return np.array([samples_needed(self.ns[arch], row, self.threshold) for row in self.median[arch]])

    def growth_exponent(self, arch: str) -> float:
        """β of n* ∝ M^β: the least-squares slope of log n* against log M over the rows (NaN if a row never
        recovers).  Parameter counting, a model linear in θ (注18: its optimistic size is M), has β = 1; "width
        is free" (图10.3(b)–(d)) means β near 0."""
        n = self.n_star(arch)
        if np.isnan(n).any():
            return float("nan")
        return float(np.polyfit(np.log(self.n_params(arch)), np.log(n), 1)[0])


def width_sweep_10_3(trials: int, steps: int, multiples: Sequence[int], *, seed: int = 0,
                     archs: Sequence[str] = tuple(PANELS_10_3), init_std: float = 1e-6, lr: float = 0.3,
                     ns: dict | None = None, threshold: float = 1e-2, precision: str = "float32") -> WidthSweep:
    """图10.3(b)–(d): each architecture at each width multiple N fitted to (10.18) for every n × trial
    (:func:`fit_nets_10_18`, one batched computation per architecture and width, step :func:`lr_10_3`, in single
    precision by default: a median test error judged at 10⁻² needs no more, and it halves the CPU time).  Every
    width of an architecture draws its samples from the same ``seed``: the rows of a panel share their training
    sets, so that width is the only thing that changes down a column."""
    multiples = tuple(sorted(int(k) for k in multiples))
    ns = {arch: np.asarray((ns or NS_WIDTH_10_3)[arch]) for arch in archs}
    median = {arch: np.stack([np.median(fit_nets_10_18(arch, ns[arch], trials, width=width_10_3(arch, k),
                                                       init_std=init_std, lr=lr_10_3(k, lr), steps=steps,
                                                       seed=seed, precision=precision), 1) for k in multiples])
              for arch in archs}
    return WidthSweep(multiples, ns, median, threshold)


#: The largest growth exponent β (n* ∝ M^β) that "width is free" allows: half-way, in log scale, between a
#: width-independent sample size (β = 0) and parameter counting (β = 1, a model linear in θ, 注18).
WIDTH_FREE_BETA = 0.5
#: At the widest width n* must be at most this fraction of the parameter count M.
WIDTH_FREE_FRACTION = 1 / 3

WIDTH_FREE = {
    "fully connected": ClaimSpec(
        "ch10.width-free-fnn", "图10.3(b)",
        "fully connected nets of widths 3N from a small init: the samples needed for median test MSE < 1e-2 grow "
        "with the parameter count M at most like M^0.5 over the widths (parameter counting: like M), and at the "
        "widest are at most a third of M"),
    "CNN without sharing": ClaimSpec(
        "ch10.width-free-unshared", "图10.3(c)",
        "CNNs without sharing of N kernels from a small init: the samples needed for median test MSE < 1e-2 grow "
        "with the parameter count M at most like M^0.5 over the widths (parameter counting: like M), and at the "
        "widest are at most a third of M"),
    "CNN": ClaimSpec(
        "ch10.width-free-cnn", "图10.3(d)",
        "CNNs of N kernels from a small init: the samples needed for median test MSE < 1e-2 grow with the "
        "parameter count M at most like M^0.5 over the widths (parameter counting: like M), and at the widest are "
        "at most a third of M")}


def check_width_free(res: WidthSweep, arch: str) -> Verdict:
    """图10.3(b)–(d) for one architecture: β < 0.5 over the rows, and n*(widest) ≤ M(widest)/3."""
    n, m = res.n_star(arch), res.n_params(arch)
    widest = f"{res.multiples[-1]}x"
    return WIDTH_FREE[arch].judge(
        threshold(f"β (n* ∝ M^β, {res.multiples[0]}x–{widest})", res.growth_exponent(arch), "<", WIDTH_FREE_BETA),
        threshold(f"n*({widest}) / M = {int(m[-1])}", n[-1] / m[-1], "<=", WIDTH_FREE_FRACTION),
        n_star=n.tolist(), n_params=m.tolist())


#: "Near the dashed line" (图10.3(b)–(d), the book's third observation): n* at most this multiple of the optimistic size.
NEAR_OPTIMISTIC = 1.5

WIDTH_AT_OPTIMISTIC = ClaimSpec(
    "ch10.width-at-optimistic", "图10.3(b)–(d)",
    "at every width the samples needed by each architecture (median test MSE < 1e-2) lie near its optimistic size "
    "6, 12 or 18 (the dashed line): at most 1.5 times it", kind="exploration")


def check_width_at_optimistic(res: WidthSweep) -> Verdict:
    """图10.3(b)–(d) as the book states it ("无论网络有多宽, 恢复目标函数所需的样本量都在虚线附近"): for every
    architecture and width, n* ≤ 1.5 × the optimistic size (a row that never recovers fails)."""
    conds = [threshold(f"n*({arch}, {k}x)", n, "<=", NEAR_OPTIMISTIC * optimistic_10_18(arch))
             for arch in res.median for k, n in zip(res.multiples, res.n_star(arch))]
    return WIDTH_AT_OPTIMISTIC.judge(*conds, **{PANELS_10_3.get(a, a): res.n_star(a).tolist() for a in res.median})


# --- small versus large initialisation of a deep net (图10.4) ------------------------------------

def target_10_4(x: Tensor | np.ndarray) -> Tensor:
    """The 1-D target of the 图10.4 analogue, f*(x) = sin(πx) (the book does not give its data's target)."""
    return torch.sin(math.pi * torch.as_tensor(x))


@dataclass
class InitScaleFits:
    """图10.4: one deep tanh net per init scale fitted to the same n samples; the learned functions on a grid
    spanning the samples, their training and test mean squared errors (test: on that grid against f*)."""

    scales: tuple
    x: np.ndarray              # (n,) sorted training inputs
    y: np.ndarray              # (n,)
    grid: np.ndarray           # (G,) from min x to max x
    target: np.ndarray         # (G,) f* on the grid
    outputs: np.ndarray        # (S, G) learned functions, one per scale
    train_mse: np.ndarray      # (S,)
    test_mse: np.ndarray       # (S,)

    @property
    def total_variation(self) -> np.ndarray:
        """Σ_g |f(x_{g+1}) − f(x_g)| of each learned function on the grid (S,): how much it oscillates."""
        return np.abs(np.diff(self.outputs, axis=1)).sum(1)

    @property
    def target_variation(self) -> float:
        return float(np.abs(np.diff(self.target)).sum())


@cached
def init_scale_fits(scales: Sequence[float] = (0.1, 4.0), *, width: int = 500, depth: int = 4, n: int = 12,
                    steps: int = 2000, lr: float = 1e-3, seed: int = 0, n_grid: int = 401) -> InitScaleFits:
    """图10.4: a tanh net with ``depth`` hidden layers of ``width`` neurons per init scale c, every weight and bias
    of layer l drawn from N(0, c²/fan_in_l), all scales trained at once (:class:`~companion.core.nets.BatchedMLP`)
    by full-batch Adam on the mean squared error of n samples x ~ U[−1, 1], y = f*(x) (:func:`target_10_4`).
    Streams of ``seed``: 0 the samples, 1 the initialisation.  The training runs on the settings' device
    (:func:`~companion.core.train.train`); the trained nets are evaluated on the grid back on the CPU."""
    if n < 2 or width < 1 or depth < 1 or not scales or min(scales) <= 0:
        raise ValueError(f"need n ≥ 2, width ≥ 1, depth ≥ 1 and positive scales; got {n}, {width}, {depth}, {scales}")
    widths = [1] + [width] * depth + [1]
    fan_in = torch.tensor(widths[:-1], dtype=torch.float32)
    stds = torch.tensor(list(scales), dtype=torch.float32)[:, None] / fan_in.sqrt()[None, :]  # (S, L)
    model = BatchedMLP(widths, len(scales), "tanh", init_std=stds, generator=generator(seed, 1))
    x = np.sort(numpy_rng(seed).uniform(-1, 1, n))
    xt = torch.as_tensor(x, dtype=torch.float32)[:, None]  # (n, 1)
    yt = target_10_4(xt)
    history = train(model, xt, yt, steps=steps, lr=lr, optimizer="adam", record_every=steps, progress=False,
                    desc="图10.4 init scales")
    grid = np.linspace(x[0], x[-1], n_grid)
    target = target_10_4(grid).numpy()
    with torch.no_grad():
        out = model(torch.as_tensor(grid, dtype=torch.float32)[:, None])[..., 0].double().numpy()  # (S, G)
    return InitScaleFits(tuple(scales), x, yt[:, 0].numpy(), grid, target, out,
                         np.asarray(history.train_loss[-1], dtype=float), ((out - target) ** 2).mean(1))


INIT_OSCILLATION = ClaimSpec("ch10.init-oscillation", "图10.4",
                             "both nets fit the samples, but the one from the large init oscillates between them and "
                             "generalises worse: its total variation and its test error are both more than twice "
                             "those of the small init", validation_seeds=REVALIDATION_SEEDS)  # steps raised after 0–19


def check_init_oscillation(res: InitScaleFits) -> Verdict:
    """图10.4 on :func:`init_scale_fits` with two scales (small first): both training MSEs < 10⁻³, and
    TV(large)/TV(small) > 2 and test MSE(large)/test MSE(small) > 2."""
    if len(res.scales) != 2 or not res.scales[0] < res.scales[1]:
        raise ValueError(f"need two init scales, small then large; got {res.scales}")
    tv = res.total_variation
    return INIT_OSCILLATION.judge(
        threshold("largest training MSE", float(res.train_mse.max()), "<", 1e-3),
        threshold("TV(large init)/TV(small init)", float(tv[1] / tv[0]), ">", 2.0),
        threshold("test MSE(large)/test MSE(small)", float(res.test_mse[1] / res.test_mse[0]), ">", 2.0),
        total_variation=tv, target_variation=res.target_variation, test_mse=res.test_mse)


EXPLORER_MODELS = ("matrix completion", *ARCHITECTURES_10_3)
_EXPLORER_WIDTHS = {"CNN": 2, "CNN without sharing": 2, "fully connected": 6}


#: The bounds of the explorer (:func:`make_explorer` and its compute function): its sliders; up to 100 000 steps.
EXPLORER_BOUNDS = Bounds(init_std=real(1e-6, 1.0), rank=integer(1, 4), trials=integer(1, 100),
                         threshold=real(1e-4, 1e-1), steps=integer(1, 100_000), net_steps=integer(1, 100_000),
                         seed=SEED)


def make_explorer(seed: int | None = None, steps: int = 6000, net_steps: int = 1500):
    """Sliders: model (4×4 matrix completion of rank r, or one architecture of 图10.3 on the target (10.18)),
    init std, rank r, trials and success threshold → success rate and median error against the number n of
    observed entries / samples, with the optimistic size marked.  ``seed`` defaults to the active seed."""
    from companion.kit import widgets

    seed = active_seed() if seed is None else seed
    EXPLORER_BOUNDS.check(seed=seed, steps=steps, net_steps=net_steps)

    def compute(model: str, init_std: float, rank: int, trials: int, threshold: float) -> dict:
        EXPLORER_BOUNDS.check(init_std=init_std, rank=rank, trials=trials, threshold=threshold)
        if model == "matrix completion":
            grid = completion_grid([rank], np.arange(1, 17), trials, init_std=init_std, steps=steps,
                                   lr=COMPLETION["lr"], threshold=threshold, seed=seed)
            return {"ns": grid.ns, "success": grid.success[0], "error": grid.median_error[0],
                    "optimistic": optimistic_matrix(rank, 4), "xlabel": "observed entries n"}
        ns = np.array([4, 6, 8, 12, 16, 20, 24, 28, 32, 40])
        err = fit_nets_10_18(model, ns, trials, width=_EXPLORER_WIDTHS[model], init_std=init_std,
                             steps=net_steps, seed=seed)
        return {"ns": ns, "success": (err < threshold).mean(1), "error": np.median(err, 1),
                "optimistic": optimistic_10_18(model), "xlabel": "samples n (target (10.18))"}

    def draw(res: dict, fig) -> None:
        ax1, ax2 = fig.subplots(1, 2)
        ax1.bar(res["ns"], res["success"])
        ax2.semilogy(res["ns"], res["error"], "o-")
        for ax in (ax1, ax2):
            ax.axvline(res["optimistic"], color="r", ls="--", label="optimistic size")
            ax.set_xlabel(res["xlabel"])
        ax1.set_ylabel("success rate")
        ax2.set_ylabel("median error")
        ax1.legend()

    controls = {"model": widgets.dropdown("matrix completion", EXPLORER_MODELS, "model"),
                "init_std": widgets.log_slider(1e-3, 1e-6, 1.0, "init std"),
                "rank": widgets.int_slider(1, 1, 4, "target rank r (matrix)"),
                "trials": widgets.int_slider(20, 4, 100, "trials", step=4),
                "threshold": widgets.log_slider(1e-3, 1e-4, 1e-1, "success threshold")}
    return widgets.Explorer("Optimistic estimate: matrix completion and 图10.3 architectures (ch. 10)", controls,
                            compute, draw)
