"""Random-features regression: a two-layer network whose first layer is frozen at its random initialisation.

f(x) = aᵀ σ(W x + b) with W (m, d), b (m,) drawn once and only the output weights a (m, C) fitted by least
squares on one-hot targets.  With m < n features the fit is the least-squares solution; from m ≥ n on it
interpolates, and the fit is the **minimum-norm** interpolant — the solution gradient descent from a = 0
converges to (Belkin et al. 2019 use random Fourier features on MNIST the same way).  A ridge λ > 0 gives
(ΦᵀΦ + λI)⁻¹ΦᵀY instead.  One SVD of the feature matrix Φ (n, m) gives both: a = V diag(s/(s² + λ)) Uᵀ Y
(singular values below ``rcond``·s_max dropped when λ = 0).

:func:`fit_random_features` fits D independent feature draws at once (a batched SVD).
"""

from __future__ import annotations

import torch
from torch import Tensor


def draw_features(d_in: int, m: int, n_draws: int, *, generator: torch.Generator,
                  dtype: torch.dtype = torch.float64) -> tuple[Tensor, Tensor]:
    """First-layer weights W (D, d, m) ~ N(0, 1/d) and biases b (D, 1, m) ~ N(0, 1) of D = ``n_draws`` draws."""
    W = torch.randn(n_draws, d_in, m, generator=generator, dtype=dtype) / d_in ** 0.5
    b = torch.randn(n_draws, 1, m, generator=generator, dtype=dtype)
    return W, b


def features(x: Tensor, W: Tensor, b: Tensor) -> Tensor:
    """ReLU features σ(x W + b): x (n, d) → (D, n, m)."""
    return torch.relu(x.to(W.dtype) @ W + b)


def fit_random_features(x: Tensor, y: Tensor, W: Tensor, b: Tensor, ridge: float = 0.0,
                        rcond: float = 1e-10) -> Tensor:
    """Output weights a (D, m, C) fitting y (n, C) from the features of x; minimum-norm when ``ridge`` = 0."""
    if ridge < 0:
        raise ValueError(f"ridge must be ≥ 0, got {ridge}")
    phi = features(x, W, b)  # (D, n, m)
    U, s, Vh = torch.linalg.svd(phi, full_matrices=False)  # (D, n, r), (D, r), (D, r, m)
    if ridge > 0:
        gain = s / (s * s + ridge)
    else:
        keep = s > rcond * s[:, :1]
        gain = torch.where(keep, 1.0 / torch.where(keep, s, torch.ones_like(s)), torch.zeros_like(s))
    return Vh.transpose(1, 2) @ (gain[..., None] * (U.transpose(1, 2) @ y.to(W.dtype)))


def predict(x: Tensor, W: Tensor, b: Tensor, a: Tensor) -> Tensor:
    """The D models' outputs (D, n, C) on x (n, d)."""
    return features(x, W, b) @ a
