"""Classical iterative solvers of the 1-D Poisson problem and their per-mode error (book §15.5, 图15.1).

The finite-difference (有限差分) scheme of −u″ = g on (a, b) with u(a) = α, u(b) = β on the grid
x_i = a + i·h, i = 0 … n, h = (b − a)/n, is (习题 2)

    (−u_{i−1} + 2u_i − u_{i+1}) / h² = g_i,   i = 1 … n−1,

a symmetric tridiagonal system A u = h² g (A = tridiag(−1, 2, −1)).

* :func:`jacobi` — 雅可比迭代 u_i ← ½(u_{i−1} + u_{i+1} + h² g_i).  Its iteration matrix
  ½ tridiag(1, 0, 1) has eigenvectors v_j = (sin(jπi/n))_i (the DST-I modes) with eigenvalues
  μ_j = cos(jπ/n) (习题 3), so the error in mode j is multiplied by μ_j every step: fast for the
  middle of the grid spectrum, slow (μ_j ≈ 1 − (jπ/n)²/2) for the low modes.
* :func:`gauss_seidel` — 高斯-赛德尔 (lexicographic): the new values are used as soon as they
  exist; for this matrix its spectral radius is cos²(π/n), one Gauss–Seidel step ≈ two Jacobi steps.
* :func:`dst_coefficients` / :func:`mode_errors` — the coefficients in the DST-I basis and the
  per-mode relative error Δ_F(j) = |ĥ_j − û_j| / |û_j| (the book's Δ_F of 图15.1(b, c)).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.fft
import scipy.linalg
from numpy.typing import ArrayLike

from companion.core.train import History, run

ORDERINGS = ("jacobi", "gauss-seidel")


def _grid_values(values: ArrayLike, name: str) -> np.ndarray:
    values = np.asarray(values, dtype=float)
    if values.ndim < 1 or values.shape[-1] < 3:
        raise ValueError(f"{name} must hold the values at the n + 1 ≥ 3 grid points x_0 … x_n along its last "
                         f"axis; got shape {values.shape}")
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{name} contains non-finite values")
    return values


def fd_solution(g: ArrayLike, h: float, left: float = 0.0, right: float = 0.0) -> np.ndarray:
    """Exact solution of the finite-difference system A u = h² g with u_0 = left, u_n = right, shape (n+1,)."""
    g = _grid_values(g, "g")
    if not h > 0:
        raise ValueError(f"grid spacing h must be positive, got {h}")
    m = g.shape[-1] - 2                                    # interior unknowns
    rhs = h * h * g[1:-1].copy()
    rhs[0] += left
    rhs[-1] += right
    bands = np.zeros((3, m))
    bands[0, 1:], bands[1], bands[2, :-1] = -1.0, 2.0, -1.0
    return np.concatenate([[left], scipy.linalg.solve_banded((1, 1), bands, rhs), [right]])


def iterate(u0: ArrayLike, g: ArrayLike, h: float, iterations: int, *, method: str = "jacobi",
            record_at: Sequence[int] | None = None) -> History:
    """Run ``iterations`` Jacobi or Gauss–Seidel sweeps of −u″ = g from ``u0`` (boundary values kept).

    The sweeps are the update of the package's engine (:func:`companion.core.train.run`), an update
    without a gradient.  Returns its :class:`~companion.core.train.History`: ``steps`` are the sweep
    counts recorded and ``history["u"]`` (T, n+1) the iterates there.

    Args:
        u0: the initial guess on the n + 1 grid points; u0[0] and u0[-1] are the Dirichlet data.
        g: the source on the same grid.
        method: ``"jacobi"`` (u_i ← ½(u_{i−1} + u_{i+1} + h² g_i), all at once) or
            ``"gauss-seidel"`` (the same, left to right, using the values just updated).
        record_at: sweep counts at which to keep a copy (default: the start and the end).
    """
    u = _grid_values(u0, "u0").copy()
    g = _grid_values(g, "g")
    if u.shape != g.shape or u.ndim != 1:
        raise ValueError(f"u0 and g must be 1-D and of one shape; got {u.shape} and {g.shape}")
    if method not in ORDERINGS:
        raise ValueError(f"unknown method {method!r}; choose one of {', '.join(ORDERINGS)}")
    if not h > 0:
        raise ValueError(f"grid spacing h must be positive, got {h}")
    if iterations < 0:
        raise ValueError(f"iterations must be ≥ 0, got {iterations}")
    hg = h * h * g[1:-1]
    lower = np.zeros((2, len(hg)))                         # Gauss–Seidel: (D − L) u_new = U u_old + h² g
    lower[0], lower[1, :-1] = 2.0, -1.0

    def jacobi_sweep(_step: int) -> None:
        u[1:-1] = 0.5 * (u[:-2] + u[2:] + hg)              # right side is evaluated before the assignment

    def gauss_seidel_sweep(_step: int) -> None:
        rhs = hg.copy()
        rhs[:-1] += u[2:-1]
        rhs[-1] += u[-1]
        rhs[0] += u[0]
        u[1:-1] = scipy.linalg.solve_banded((1, 0), lower, rhs)

    sweep = jacobi_sweep if method == "jacobi" else gauss_seidel_sweep
    return run(sweep, steps=iterations, record=lambda _step: {"u": u.copy()},
               record_at=[0, iterations] if record_at is None else record_at, desc=method)


def jacobi(u0: ArrayLike, g: ArrayLike, h: float, iterations: int,
           record_at: Sequence[int] | None = None) -> History:
    """Jacobi iteration for −u″ = g (see :func:`iterate`)."""
    return iterate(u0, g, h, iterations, method="jacobi", record_at=record_at)


def gauss_seidel(u0: ArrayLike, g: ArrayLike, h: float, iterations: int,
                 record_at: Sequence[int] | None = None) -> History:
    """Lexicographic Gauss–Seidel iteration for −u″ = g (see :func:`iterate`)."""
    return iterate(u0, g, h, iterations, method="gauss-seidel", record_at=record_at)


def jacobi_eigenvalues(n: int, modes: ArrayLike) -> np.ndarray:
    """μ_j = cos(jπ/n): the factor by which Jacobi multiplies the error in DST mode j (习题 3)."""
    modes = np.asarray(modes, dtype=int)
    if n < 2 or np.any((modes < 1) | (modes > n - 1)):
        raise ValueError(f"modes must lie in [1, n−1] = [1, {n - 1}]; got {modes.tolist()}")
    return np.cos(modes * np.pi / n)


def dst_coefficients(values: ArrayLike) -> np.ndarray:
    """Coefficients c_j, j = 1 … n−1, of the interior values in the basis sin(jπi/n) (DST-I).

    ``values`` holds the n + 1 grid values along its last axis (the boundary values are ignored:
    the expansion is that of the interior vector, exact since the n − 1 sines are a basis).
    v_i = Σ_j c_j sin(jπi/n)  ⇔  c_j = (2/n) Σ_i v_i sin(jπi/n).  Returns shape (…, n−1), index j−1.
    """
    values = _grid_values(values, "values")
    n = values.shape[-1] - 1
    return scipy.fft.dst(values[..., 1:-1], type=1, axis=-1) / n


def mode_errors(h: ArrayLike, reference: ArrayLike, modes: ArrayLike) -> np.ndarray:
    """Δ_F(j) = |ĥ_j − û_j| / |û_j| in the DST-I basis for each j in ``modes``; shape (…, len(modes))."""
    modes = np.asarray(modes, dtype=int)
    ref = dst_coefficients(reference)
    n = ref.shape[-1] + 1
    if np.any((modes < 1) | (modes > n - 1)):
        raise ValueError(f"modes must lie in [1, n−1] = [1, {n - 1}]; got {modes.tolist()}")
    ref_j = ref[..., modes - 1]
    if np.any(np.abs(ref_j) < 1e-12):
        raise ValueError(f"the reference has no content at some of modes {modes.tolist()}: Δ_F is undefined")
    return np.abs(dst_coefficients(h)[..., modes - 1] - ref_j) / np.abs(ref_j)
