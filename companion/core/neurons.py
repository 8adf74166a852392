"""Neuron features and measures of condensation (凝聚) for two-layer networks (book ch. 7–8).

A two-layer network f(x) = (1/α) Σ_k a_k σ(w_kᵀx) (bias folded into w_k by appending 1 to x)
is described neuron by neuron:

* amplitude A_k = |a_k|·‖w_k‖₂ and direction ŵ_k = w_k/‖w_k‖₂ (§7.2.1, §8.1.1); for 1-D input
  with bias w_k = (w_k, b_k) and the direction is the orientation Ω_k = atan2(b_k, w_k) ∈ [−π, π);
  in high dimension the projection I_ŵ = ŵ·p with p = 𝟏/√d (§7.3.3);
* the relative distance RD(θ_w(t)) = ‖θ_w(t) − θ_w(0)‖₂ / ‖θ_w(0)‖₂ of the input weights (7.3);
* the cosine-similarity matrix D(u, v) = uᵀv / (‖u‖‖v‖) (8.4), with neurons ordered by the
  leading eigenvector of D (the heat maps of §8.1.2);
* cluster counts: how many orientations carry most of the amplitude (angular gaps), the top
  eigenvalue of the direction Gram (1/m) Σ ŵ_k ŵ_kᵀ (one line ⇔ ≈ 1) and its participation ratio (the
  effective number of directions, in any dimension), and kink counts of a piecewise-linear output;
* the dropout regulariser R₁ (8.5) and a Monte-Carlo estimate of the dropout risk, whose mean is
  R_S + R₁ (§8.4.3).  The book's p is the KEEP probability.

Every function accepts tensors or arrays and works on one network; the leading dimensions of
``a`` (…, m) and ``w`` (…, m, d) may carry an ensemble where noted.
"""

from __future__ import annotations

import math

import numpy as np
from torch import Tensor

from companion.kit.seeds import numpy_rng

ArrayLike = np.ndarray | Tensor


def _np(x: ArrayLike) -> np.ndarray:
    return x.detach().cpu().numpy() if isinstance(x, Tensor) else np.asarray(x)


def _check_neurons(a: np.ndarray, w: np.ndarray) -> None:
    if w.ndim < 2 or a.shape != w.shape[:-1]:
        raise ValueError(f"a must have shape (..., m) and w shape (..., m, d) with matching m; "
                         f"got a {a.shape}, w {w.shape}")


def amplitude(a: ArrayLike, w: ArrayLike) -> np.ndarray:
    """A_k = |a_k|·‖w_k‖₂ for output weights a (…, m) and input weights w (…, m, d)."""
    a, w = _np(a), _np(w)
    _check_neurons(a, w)
    return np.abs(a) * np.linalg.norm(w, axis=-1)


def orientation(w: ArrayLike) -> np.ndarray:
    """Orientation Ω_k = atan2(b_k, w_k) ∈ [−π, π) of 1-D-input neurons w = (w_k, b_k), shape (…, m, 2)."""
    w = _np(w)
    if w.shape[-1] != 2:
        raise ValueError(f"orientation needs 1-D input with bias, i.e. w of shape (..., m, 2); got {w.shape}")
    angle = np.arctan2(w[..., 1], w[..., 0])
    return np.where(angle >= math.pi, angle - 2 * math.pi, angle)


def projection(w: ArrayLike, p: ArrayLike | None = None) -> np.ndarray:
    """I_ŵ = ŵ·p, the projection of each unit direction on p (default 𝟏/√d), §7.3.3; w (…, m, d)."""
    w = _np(w)
    d = w.shape[-1]
    p = np.full(d, 1 / math.sqrt(d)) if p is None else _np(p).astype(float)
    if p.shape != (d,):
        raise ValueError(f"p must have shape ({d},) to match w's last dimension; got {p.shape}")
    unit = w / np.maximum(np.linalg.norm(w, axis=-1, keepdims=True), 1e-300)
    return unit @ p


def relative_distance(w_t: ArrayLike, w_0: ArrayLike) -> np.ndarray | float:
    """RD(θ_w(t)) = ‖θ_w(t) − θ_w(0)‖₂ / ‖θ_w(0)‖₂, eq. (7.3), over the last two dims (…, m, d).

    Returns a float for one network, an array for an ensemble (…,).  Neurons that are all-zero
    in both (masked padding of a narrower member) do not change the value.
    """
    w_t, w_0 = _np(w_t), _np(w_0)
    if w_t.shape != w_0.shape or w_t.ndim < 2:
        raise ValueError(f"w_t and w_0 must share a shape (..., m, d); got {w_t.shape} and {w_0.shape}")
    num = np.linalg.norm((w_t - w_0).reshape(*w_t.shape[:-2], -1), axis=-1)
    den = np.linalg.norm(w_0.reshape(*w_0.shape[:-2], -1), axis=-1)
    rd = num / den
    return float(rd) if rd.ndim == 0 else rd


def cosine_similarity_matrix(u: ArrayLike) -> np.ndarray:
    """D(u_i, u_j) = u_iᵀu_j / (‖u_i‖‖u_j‖), eq. (8.4), for the rows of u (m, d) → (m, m)."""
    u = _np(u).astype(float)
    if u.ndim != 2:
        raise ValueError(f"u must be a matrix (m, d) of neuron vectors; got shape {u.shape}")
    unit = u / np.maximum(np.linalg.norm(u, axis=1, keepdims=True), 1e-300)
    return np.clip(unit @ unit.T, -1.0, 1.0)


def leading_eigenvector_order(d_matrix: ArrayLike) -> np.ndarray:
    """Indices that sort neurons by their entry of D's leading eigenvector (heat maps of §8.1.2)."""
    d_matrix = _np(d_matrix)
    if d_matrix.ndim != 2 or d_matrix.shape[0] != d_matrix.shape[1]:
        raise ValueError(f"expected a square similarity matrix; got shape {d_matrix.shape}")
    _, vectors = np.linalg.eigh((d_matrix + d_matrix.T) / 2)
    return np.argsort(vectors[:, -1], kind="stable")


def sorted_cosine_matrix(u: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """The cosine-similarity matrix of the rows of u, reordered by its leading eigenvector; and the order."""
    d_matrix = cosine_similarity_matrix(u)
    order = leading_eigenvector_order(d_matrix)
    return d_matrix[np.ix_(order, order)], order


def direction_gram_eigenvalues(w: ArrayLike, weights: ArrayLike | None = None) -> np.ndarray:
    """Eigenvalues, largest first, of the direction Gram Σ_k c_k ŵ_kŵ_kᵀ / Σ c_k (default c_k = 1), w (m, d).

    They sum to 1; ŵ and −ŵ contribute alike, so a set of directions on L lines has L nonzero
    eigenvalues (for lines in general position) and directions spread uniformly have d equal ones.
    """
    w = _np(w).astype(float)
    if w.ndim != 2 or len(w) == 0:
        raise ValueError(f"w must be a non-empty matrix (m, d); got shape {w.shape}")
    c = np.ones(len(w)) if weights is None else _np(weights).astype(float)
    unit = w / np.maximum(np.linalg.norm(w, axis=1, keepdims=True), 1e-300)
    gram = (unit * c[:, None]).T @ unit / c.sum()
    return np.linalg.eigvalsh(gram)[::-1]


def alignment_eigenvalue(w: ArrayLike, weights: ArrayLike | None = None) -> float:
    """Top eigenvalue of the direction Gram (:func:`direction_gram_eigenvalues`).

    It is 1 exactly when all directions lie on one line (ŵ and −ŵ count as the same line), and
    1/d for directions spread uniformly: the "one line" test of initial condensation (§8.3).
    """
    return float(direction_gram_eigenvalues(w, weights)[0])


def effective_direction_count(w: ArrayLike, weights: ArrayLike | None = None) -> float:
    """Effective number of lines the directions ŵ_k occupy: 1 / Σ_i λ_i² over the eigenvalues λ_i of the
    direction Gram (:func:`direction_gram_eigenvalues`, weights c_k, e.g. the amplitudes A_k), w (m, d).

    The participation ratio of the spectrum: L for directions shared equally among L orthogonal lines
    (1 for one line), ≈ d for directions spread uniformly over R^d (a little less for finitely many), so
    "the neurons condense on a few directions" reads "a small count" in any dimension (图7.7).
    """
    lam = direction_gram_eigenvalues(w, weights)
    return float(1.0 / np.sum(lam ** 2))


def carrying_mask(amp: ArrayLike, mass: float = 0.9) -> np.ndarray:
    """Boolean mask of the largest-amplitude neurons that together carry ``mass`` of Σ A_k."""
    amp = _np(amp).astype(float)
    if not 0 < mass <= 1:
        raise ValueError(f"mass must lie in (0, 1], got {mass}")
    order = np.argsort(-amp, kind="stable")
    cumulative = np.cumsum(amp[order]) / max(amp.sum(), 1e-300)
    keep = order[: int(np.searchsorted(cumulative, mass - 1e-12)) + 1]
    mask = np.zeros(amp.shape, dtype=bool)
    mask[keep] = True
    return mask


#: The widest run of orientations that counts as one cluster (a quarter turn): a run of neighbours
#: closer than ``gap`` that spreads wider than this is not one direction, and counts as the number of
#: ``gap``-wide arcs it covers (a ring round the whole circle, or a uniform spread with one gap, gives many).
MAX_CLUSTER_WIDTH = math.pi / 2


def angle_gaps(angles: ArrayLike, amp: ArrayLike | None = None, *, mass: float = 0.9) -> np.ndarray:
    """Gaps (radians, largest first) between neighbouring orientations on the circle, the wrap-around
    from π to −π included, among the neurons carrying ``mass`` of the amplitude (all if ``amp`` is None).

    They sum to 2π.  With the split rule of :func:`count_angle_clusters` "at most k clusters" is
    ``gaps[k] <= gap`` (every cluster no wider than :data:`MAX_CLUSTER_WIDTH`): a condition with a
    continuous margin.  One neuron gives ``[2π]``.
    """
    angles = np.mod(_np(angles).astype(float).ravel(), 2 * math.pi)
    if amp is not None:
        angles = angles[carrying_mask(_np(amp).ravel(), mass)]
    if angles.size == 0:
        return np.zeros(0)
    s = np.sort(angles)
    return np.sort(np.diff(np.concatenate([s, s[:1] + 2 * math.pi])))[::-1]


def _runs(angles: np.ndarray, gap: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sorted angles, the run (cluster) label of each and each run's extent: runs are split at gaps > gap;
    with no such gap every angle is in one run, a ring whose extent is 2π minus its largest gap."""
    s = np.sort(angles)
    gaps = np.diff(np.concatenate([s, s[:1] + 2 * math.pi]))  # gaps[i]: from s[i] to the next one
    cuts = np.flatnonzero(gaps > gap)
    if len(cuts) == 0:
        return s, np.zeros(len(s), dtype=int), np.array([2 * math.pi - gaps.max()])
    # run j runs from cuts[j-1] + 1 to cuts[j]; the one that wraps around joins both ends
    label = np.searchsorted(cuts, np.arange(len(s))) % len(cuts)
    first = np.roll(cuts, 1) + 1  # index of each run's first angle (mod len(s))
    extent = np.mod(s[cuts] - s[first % len(s)], 2 * math.pi)
    return s, label, extent


def cluster_widths(angles: ArrayLike, amp: ArrayLike | None = None, *, mass: float = 0.9,
                   gap: float = 0.1) -> np.ndarray:
    """Angular extent (radians) of each run of neighbouring orientations closer than ``gap`` among the
    neurons carrying ``mass`` of the amplitude, widest first (a ring round the circle: ≈ 2π)."""
    angles = np.mod(_np(angles).astype(float).ravel(), 2 * math.pi)
    if amp is not None:
        angles = angles[carrying_mask(_np(amp).ravel(), mass)]
    if angles.size == 0:
        return np.zeros(0)
    return np.sort(_runs(angles, gap)[2])[::-1]


def count_angle_clusters(angles: ArrayLike, amp: ArrayLike | None = None, *, mass: float = 0.9,
                         gap: float = 0.1, min_share: float = 0.0) -> int:
    """Number of orientation clusters among the neurons carrying ``mass`` of the amplitude.

    Angles (radians, on the circle) of those neurons are sorted and split wherever two
    neighbours are more than ``gap`` apart (the wrap-around from π to −π included).  A condensed
    net gives a few clusters.  A run wider than :data:`MAX_CLUSTER_WIDTH` is not one direction: it
    counts as the ``gap``-wide arcs it occupies, so neurons spread round the circle (with no gap, or
    with one) give many clusters, never one.  With ``min_share`` > 0 (and ``amp`` given) a cluster
    (or arc) counts only if it holds at least that share of the total amplitude Σ A_k.
    """
    angles = np.mod(_np(angles).astype(float).ravel(), 2 * math.pi)
    if not gap > 0:
        raise ValueError(f"gap must be positive, got {gap}")
    if not 0 <= min_share < 1:
        raise ValueError(f"min_share must lie in [0, 1), got {min_share}")
    weights = np.ones_like(angles)
    if amp is not None:
        amp = _np(amp).astype(float).ravel()
        carrying = carrying_mask(amp, mass)
        angles, weights = angles[carrying], amp[carrying] / max(amp.sum(), 1e-300)
    if angles.size == 0:
        return 0
    weights = weights[np.argsort(angles)]
    s, label, extent = _runs(angles, gap)
    n_arcs = int(math.ceil(2 * math.pi / gap))
    wide = extent[label] > MAX_CLUSTER_WIDTH
    arc = np.minimum((s // gap).astype(int), n_arcs - 1)
    key = np.where(wide, len(extent) + arc, label)  # narrow runs keep their label, wide ones split in arcs
    _, index = np.unique(key, return_inverse=True)
    shares = np.bincount(index, weights=weights)
    return int((shares >= min_share).sum()) if amp is not None else len(shares)


def occupied_fraction(angles: ArrayLike, amp: ArrayLike | None = None, *, mass: float = 0.9,
                      bins: int = 36) -> float:
    """Fraction of ``bins`` equal angular bins holding a neuron that carries amplitude (1 ⇒ uniform)."""
    angles = np.mod(_np(angles).astype(float).ravel(), 2 * math.pi)
    if amp is not None:
        angles = angles[carrying_mask(_np(amp).ravel(), mass)]
    hist, _ = np.histogram(angles, bins=bins, range=(0, 2 * math.pi))
    return float((hist > 0).mean())


def count_direction_clusters(w: ArrayLike, amp: ArrayLike | None = None, *, mass: float = 0.9,
                             min_cosine: float = 0.95) -> int:
    """Number of direction clusters in any dimension: single-linkage groups with cosine ≥ min_cosine.

    ŵ and −ŵ are different directions here (a ReLU neuron and its mirror compute different
    functions).  Only neurons carrying ``mass`` of the amplitude (if given) are counted.
    """
    w = _np(w).astype(float)
    if w.ndim != 2:
        raise ValueError(f"w must be a matrix (m, d); got shape {w.shape}")
    if amp is not None:
        w = w[carrying_mask(_np(amp).ravel(), mass)]
    if len(w) == 0:
        return 0
    linked = cosine_similarity_matrix(w) >= min_cosine
    labels = -np.ones(len(w), dtype=int)
    n = 0
    for start in range(len(w)):
        if labels[start] >= 0:
            continue
        stack, labels[start] = [start], n
        while stack:
            i = stack.pop()
            for j in np.flatnonzero(linked[i] & (labels < 0)):
                labels[j] = n
                stack.append(j)
        n += 1
    return n


def count_kinks(x: ArrayLike, y: ArrayLike, *, rel_tol: float = 1e-2) -> int:
    """Number of kinks of a sampled curve: runs of grid points where the slope jumps.

    A jump counts when |Δslope| exceeds ``rel_tol`` times the curve's typical slope
    (max |y| range / x range), so a piecewise-linear fit with two kinks gives 2 and a jagged
    kernel-like fit gives many.  x must be sorted.
    """
    x, y = _np(x).astype(float).ravel(), _np(y).astype(float).ravel()
    if x.shape != y.shape or x.size < 3:
        raise ValueError(f"x and y must be 1-D of the same length ≥ 3; got {x.shape} and {y.shape}")
    if np.any(np.diff(x) <= 0):
        raise ValueError("x must be strictly increasing")
    slope = np.diff(y) / np.diff(x)
    scale = max(np.ptp(y) / np.ptp(x), 1e-12)
    jumps = np.abs(np.diff(slope)) > rel_tol * scale
    starts = jumps & ~np.concatenate([[False], jumps[:-1]])
    return int(starts.sum())


def dropout_regulariser(a: ArrayLike, hidden: ArrayLike, keep: float) -> float:
    """R₁(θ) = (1−p)/(2np) Σ_i Σ_j (a_j h_j(x_i))², eq. (8.5), with p the keep probability.

    a: output weights (m,) (already divided by α if the net has one); hidden: the last hidden
    layer's outputs h_j(x_i), shape (n, m).  With the loss ½(f − y)² of (7.6),
    E_η R_S^drop = R_S + R₁.
    """
    a, hidden = _np(a).astype(float), _np(hidden).astype(float)
    if not 0 < keep <= 1:
        raise ValueError(f"keep probability p must lie in (0, 1], got {keep}")
    if hidden.ndim != 2 or a.shape != (hidden.shape[1],):
        raise ValueError(f"need a (m,) and hidden (n, m); got {a.shape} and {hidden.shape}")
    n = hidden.shape[0]
    return float((1 - keep) / (2 * n * keep) * ((hidden * a) ** 2).sum())


def dropout_risk_monte_carlo(a: ArrayLike, hidden: ArrayLike, y: ArrayLike, keep: float, *,
                             n_masks: int = 20_000, seed: int = 0) -> tuple[float, float]:
    """Mean and standard error of R_S^drop = (1/2n) Σ_i (Σ_j (1+η_j) a_j h_j(x_i) − y_i)² over masks.

    η_j = (1−p)/p with probability p (kept, output scaled by 1/p) and −1 with probability 1−p
    (dropped), one mask per forward pass as in §8.4.1.
    """
    a, hidden, y = _np(a).astype(float), _np(hidden).astype(float), _np(y).astype(float).ravel()
    if not 0 < keep <= 1:
        raise ValueError(f"keep probability p must lie in (0, 1], got {keep}")
    if n_masks < 2:
        raise ValueError(f"n_masks must be ≥ 2, got {n_masks}")
    rng = numpy_rng(seed)
    contributions = hidden * a  # (n, m)
    values = np.empty(n_masks)
    for start in range(0, n_masks, 2048):
        stop = min(start + 2048, n_masks)
        scale = (rng.random((stop - start, a.size)) < keep) / keep  # (B, m): 1 + η
        out = scale @ contributions.T  # (B, n)
        values[start:stop] = 0.5 * ((out - y) ** 2).mean(axis=1)
    return float(values.mean()), float(values.std(ddof=1) / math.sqrt(n_masks))


def plot_feature_scatter(ax, a: ArrayLike, w: ArrayLike, *, a0: ArrayLike | None = None,
                         w0: ArrayLike | None = None, title: str = "") -> None:
    """图7.3: (orientation, amplitude/max) of every neuron, final (red dots) over initial (cyan triangles)."""
    amp, ang = amplitude(a, w), orientation(w)
    top = amp.max()
    if a0 is not None and w0 is not None:
        amp0 = amplitude(a0, w0)
        top = max(top, amp0.max())
        ax.plot(orientation(w0), amp0 / top, "^", color="#17becf", ms=3, alpha=0.6, label="initial")
    ax.plot(ang, amp / top, "o", color="#d62728", ms=2.5, label="final")
    ax.set_xlim(-math.pi, math.pi)
    ax.set_xlabel("orientation atan2(b, w)")
    ax.set_ylabel("amplitude A / max A")
    ax.set_title(title)
    ax.legend(loc="upper right")
