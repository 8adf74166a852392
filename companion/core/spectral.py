"""Frequency tools: DFT coefficients, peaks, the relative error Δ_F(k) and high-dimensional spectra.

Conventions.  One-dimensional functions are sampled on the uniform grid
x_j = lo + (hi − lo)·j/n, j = 0 … n−1 (no end point), so that on [−π, π) the function sin(kx)
lands exactly in DFT bin k.  Coefficients are normalised by n, so |ĝ_k| = ½ for sin(kx).

* :func:`fourier_part` keeps chosen DFT bins of a sampled function (its low-frequency outline, say).
* Δ_F(k) = |ĥ_k − f̂_k| / |f̂_k| — the book's relative error of the k-th frequency (图4.7), with
  complex coefficients.  (The authors' scripts compare magnitudes instead, ||ĥ_k| − |f̂_k||;
  the complex form is stricter: a peak with the right height but the wrong phase is not fitted.)
* For high-dimensional inputs two cheap substitutes for a d-dimensional Fourier transform
  (习题15, 图4.13): the *projection method* — a non-uniform DFT along one direction p,
  ĝ_p(k) = (1/N) Σ_j g(x_j) exp(−2πi k p·x_j) — and the *filtering method* — split g into a
  Gaussian-smoothed low-frequency part and the remaining high-frequency part.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike


def uniform_grid(n: int, lo: float = -math.pi, hi: float = math.pi) -> np.ndarray:
    """n equispaced points on [lo, hi) without the end point, shape (n,)."""
    if n < 2 or not hi > lo:
        raise ValueError(f"need n ≥ 2 and hi > lo, got n={n}, lo={lo}, hi={hi}")
    return lo + (hi - lo) * np.arange(n) / n


def dft(values: ArrayLike, axis: int = -1) -> np.ndarray:
    """Normalised one-sided DFT along ``axis``: coefficient k is (1/n) Σ_j g_j e^{−2πi jk/n}."""
    values = np.asarray(values, dtype=float)
    return np.fft.rfft(values, axis=axis) / values.shape[axis]


def fourier_part(values: ArrayLike, bins: ArrayLike) -> np.ndarray:
    """The part of uniformly sampled ``values`` (last axis) made of the DFT bins ``bins`` (and their mirror
    images): the inverse DFT with every other coefficient set to zero.  E.g. the fundamental sine of a
    square wave, the "outline" a network draws first (图4.3)."""
    values = np.asarray(values, dtype=float)
    n = values.shape[-1]
    bins = np.asarray(bins, dtype=int)
    if bins.size and (bins.min() < 0 or bins.max() > n // 2):
        raise ValueError(f"bins must lie in [0, {n // 2}] for {n} samples, got {bins.tolist()}")
    coeffs = np.fft.rfft(values, axis=-1)
    kept = np.zeros_like(coeffs)
    kept[..., bins] = coeffs[..., bins]
    return np.fft.irfft(kept, n=n, axis=-1)


def peaks(values: ArrayLike, min_relative: float = 0.1) -> np.ndarray:
    """Frequencies k ≥ 1 where |ĝ_k| is a local maximum and at least ``min_relative`` of the largest."""
    mag = np.abs(dft(values))
    inner = np.arange(1, len(mag) - 1)
    local = inner[(mag[inner] > mag[inner - 1]) & (mag[inner] >= mag[inner + 1])]
    return local[mag[local] >= min_relative * mag[1:].max()]


def delta_f(h: ArrayLike, f: ArrayLike, ks: ArrayLike) -> np.ndarray:
    """Δ_F(k) = |ĥ_k − f̂_k| / |f̂_k| for each k in ``ks`` (book, 图4.7).

    ``h`` may carry leading dimensions (e.g. (T, n) for T snapshots, or (T, K, n)); the last axis
    is the sample axis.  Returns an array of shape (…, len(ks)).
    """
    ks = np.asarray(ks, dtype=int)
    f_hat = dft(f)[ks]
    if np.any(np.abs(f_hat) < 1e-12):
        raise ValueError(f"the target has no content at some of k={ks.tolist()}: Δ_F is undefined there")
    return np.abs(dft(h)[..., ks] - f_hat) / np.abs(f_hat)


def first_step_below(deltas: ArrayLike, steps: ArrayLike, threshold: float = 0.1) -> np.ndarray:
    """For each column of ``deltas`` (shape (T, …)) the first recorded step with Δ_F < threshold.

    Columns that never get below the threshold return ``NaN`` ("never happened"): not a number that
    satisfies an inequality, so a claim must say what a never-converged peak means for it (see
    :mod:`companion.kit.claims`).
    """
    deltas, steps = np.asarray(deltas), np.asarray(steps, dtype=float)
    below = deltas < threshold
    first = np.where(below.any(axis=0), steps[np.argmax(below, axis=0)], np.nan)
    return first


def projection_spectrum(x: ArrayLike, values: ArrayLike, direction: ArrayLike, ks: ArrayLike) -> np.ndarray:
    """Non-uniform DFT of ``values`` along the unit vector ``direction`` at frequencies ``ks``.

    ĝ_p(k) = (1/N) Σ_j g(x_j) exp(−2πi k p·x_j), x of shape (N, d), values of shape (…, N).
    For x ∈ {−1, 1}^d and p = 𝟏/√d it is the book's parity spectrum (4.4) along the diagonal.
    """
    x, values = np.asarray(x, dtype=float), np.asarray(values, dtype=float)
    p = np.asarray(direction, dtype=float)
    if x.ndim != 2 or p.shape != (x.shape[1],):
        raise ValueError(f"x must be (N, d) and direction (d,); got {x.shape} and {p.shape}")
    if values.shape[-1] != x.shape[0]:
        raise ValueError(f"values has {values.shape[-1]} samples along its last axis, x has {x.shape[0]}")
    phase = np.exp(-2j * np.pi * np.outer(np.asarray(ks, dtype=float), x @ p))  # (K, N)
    return values @ phase.T / x.shape[0]


def gaussian_filter_split(x: ArrayLike, values: ArrayLike, delta: float) -> tuple[np.ndarray, np.ndarray]:
    """Filtering method: low part g_low(x_i) = Σ_j g_j G(x_i−x_j) / Σ_j G(x_i−x_j), G = exp(−|·|²/2δ²).

    Returns (low, high) with high = values − low.  Small δ keeps more frequencies in ``low``.
    """
    x, values = np.asarray(x, dtype=float), np.asarray(values, dtype=float)
    if not delta > 0:
        raise ValueError(f"filter width delta must be positive, got {delta}")
    sq = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)
    kernel = np.exp(-sq / (2 * delta**2))
    kernel /= kernel.sum(axis=1, keepdims=True)
    low = values @ kernel.T
    return low, values - low


def relative_error(h: ArrayLike, f: ArrayLike) -> float:
    """‖h − f‖ / ‖f‖ — used on the low and high parts of the filtering method."""
    h, f = np.asarray(h, dtype=float), np.asarray(f, dtype=float)
    return float(np.linalg.norm(h - f) / np.linalg.norm(f))


def psnr(estimate: ArrayLike, reference: ArrayLike, peak: float = 1.0) -> float:
    """Peak signal-to-noise ratio 10·log₁₀(peak² / MSE) in dB (images with values in [0, peak])."""
    mse = float(np.mean((np.asarray(estimate, float) - np.asarray(reference, float)) ** 2))
    return float("inf") if mse == 0 else 10.0 * math.log10(peak**2 / mse)
