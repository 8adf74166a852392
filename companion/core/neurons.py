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
  eigenvalue of the direction Gram (1/m) Σ ŵ_k ŵ_kᵀ (one line ⇔ ≈ 1), and kink counts of a
  piecewise-linear output;
* the dropout regulariser R₁ (8.5) and a Monte-Carlo estimate of the dropout risk, whose mean is
  R_S + R₁ (§8.4.3).  The book's p is the KEEP probability.

Every function accepts tensors or arrays and works on one network; the leading dimensions of
``a`` (…, m) and ``w`` (…, m, d) may carry an ensemble where noted.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor

from companion.kit.claims import ClaimSpec, Verdict, compare, count, identity, threshold

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
    rng = np.random.default_rng(seed)
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


def plot_polar(ax, w: ArrayLike, a: ArrayLike, *, dead: np.ndarray | None = None, title: str = "") -> None:
    """图8.2–8.3: neurons on a polar axis, angle = orientation, radius = log₁₀ A (dead neurons grey)."""
    amp, ang = amplitude(a, w), orientation(w)
    radius = np.log10(np.maximum(amp, 1e-300))
    dead = np.zeros(amp.shape, bool) if dead is None else dead
    ax.plot(ang[~dead], radius[~dead], "o", color="#d62728", ms=2.5)
    ax.plot(ang[dead], radius[dead], "o", color="0.6", ms=2.5)
    ax.set_title(title, fontsize=9)


def plot_cosine_heatmap(ax, u: ArrayLike, title: str = "") -> None:
    """§8.1.2: cosine-similarity matrix (8.4) of the rows of u, ordered by its leading eigenvector."""
    d_sorted, _ = sorted_cosine_matrix(u)
    ax.imshow(d_sorted, cmap="RdBu_r", vmin=-1, vmax=1, interpolation="nearest")
    ax.set_xticks([])
    ax.set_yticks([])
    ax.grid(False)
    ax.set_title(title)


# ----------------------------------------------------------------------------------------------
# Experiments of chapter 8 (the notebook, the explorer and the tests call these)


def target_8_2(x: Tensor) -> Tensor:
    """The target (8.2): −ReLU(x) + ReLU(2(x+0.3)) − ReLU(1.5(x−0.4)) + ReLU(0.5(x−0.8))."""
    r = torch.relu
    return -r(x) + r(2 * (x + 0.3)) - r(1.5 * (x - 0.4)) + r(0.5 * (x - 0.8))


def dead_neurons(w: ArrayLike, x: ArrayLike) -> np.ndarray:
    """ReLU neurons inactive on every training input (w_kᵀx̃_i ≤ 0 ∀i): they get no gradient. w (m, 2), x (n,)."""
    w, x = _np(w), _np(x).ravel()
    pre = np.outer(x, w[:, 0]) + w[:, 1]  # (n, m)
    return (pre <= 0).all(axis=0)


def run_condensation(*, width: int = 100, init_std: float = 1e-3, act: str = "relu", keep: float = 1.0,
                     n: int = 50, steps: int = 16_000, lr: float = 0.05, n_snapshots: int = 65,
                     seed: int = 0) -> dict:
    """图8.1–8.4: fit (8.2) on n points of [−1, 1] with f = Σ a_k σ(w_k x + b_k), all parameters
    ~ N(0, init_std²), full-batch GD; returns the loss history, ``n_snapshots`` evenly spaced
    parameter snapshots and the outputs on a fine grid at those snapshots."""
    from companion.core.ensemble import TwoLayerEnsemble, train_ensemble

    if not 1 <= width <= 5000 or not init_std > 0 or n < 2 or n_snapshots < 2:
        raise ValueError(f"need 1 ≤ width ≤ 5000, init_std > 0, n ≥ 2, n_snapshots ≥ 2; got width={width}, "
                         f"init_std={init_std}, n={n}, n_snapshots={n_snapshots}")
    x = torch.linspace(-1, 1, n).reshape(-1, 1)
    y = target_8_2(x).ravel()
    net = TwoLayerEnsemble(1, width, beta1=init_std, beta2=init_std, alpha=1.0, act=act, n_members=1, seed=seed)
    snaps = np.unique(np.linspace(0, steps, n_snapshots).astype(int))
    hist = train_ensemble(net, x, y, steps=steps, lr=lr, keep=keep if keep < 1 else None,
                          record_every=max(1, steps // 400), snapshot_steps=snaps, seed=seed)
    grid = torch.linspace(-1, 1, 401).reshape(-1, 1)
    a_s = np.stack([hist.snapshots[s][0][0] for s in snaps])  # (S, m)
    w_s = np.stack([hist.snapshots[s][1][0] for s in snaps])  # (S, m, 2)
    xg = torch.cat([grid, torch.ones_like(grid)], dim=1).numpy()  # (G, 2)
    outputs = np.stack([net.act(torch.as_tensor(xg @ w.T)).numpy() @ a for a, w in zip(a_s, w_s)])  # (S, G)
    return {"x": x.numpy().ravel(), "y": y.numpy(), "grid": grid.numpy().ravel(),
            "target": target_8_2(grid).numpy().ravel(), "steps": hist.steps, "loss": hist.risk[:, 0],
            "snap_steps": snaps, "a": a_s, "w": w_s, "outputs": outputs,
            "dead": dead_neurons(w_s[0], x) if act == "relu" else np.zeros(width, bool)}


def first_plateau(steps: np.ndarray, loss: np.ndarray, *, drop: float = 0.5, flat: float = 0.95,
                  window: float = 0.05) -> tuple[int, int]:
    """(start, end) steps of the first loss plateau (损失停滞) after the initial drop.

    start: the first recorded step, once the loss is below ``drop``·L(0), from which the loss stays
    above ``flat`` times its value for a ``window`` fraction of the run; end: the first later step
    at which the loss has fallen below ``flat``·L(start).  Raises if there is no such plateau.
    """
    steps, loss = np.asarray(steps), np.asarray(loss)
    width = max(1, int(window * len(loss)))
    below = np.flatnonzero(loss < drop * loss[0])
    if len(below) == 0:
        raise ValueError(f"the loss never fell below {drop}·L(0): no plateau to find (train longer)")
    for i in range(below[0], len(loss) - width):
        if loss[i + width] >= flat * loss[i]:
            after = np.flatnonzero(loss[i:] < flat * loss[i])
            if len(after) == 0:
                raise ValueError("the loss never left its first plateau: train longer")
            return int(steps[i]), int(steps[i + after[0]])
    raise ValueError("the loss never flattened after its first drop: no plateau found")


def target_8_13(x: Tensor) -> Tensor:
    """The target of 图8.13 and 图8.16: tanh(x − 6) + tanh(x + 6), a two-neuron tanh teacher."""
    return torch.tanh(x - 6) + torch.tanh(x + 6)


def total_variation(y: ArrayLike) -> np.ndarray | float:
    """Total variation Σ_i |y_{i+1} − y_i| of curves sampled on a grid, over the last axis (…, G).

    For a fine grid this approximates ∫|f′|; an oscillating fit of the same data has a larger one.
    Returns a float for one curve, an array (…,) for several.
    """
    y = _np(y).astype(float)
    if y.ndim < 1 or y.shape[-1] < 2:
        raise ValueError(f"need curves sampled at ≥ 2 grid points, shape (..., G); got {y.shape}")
    tv = np.abs(np.diff(y, axis=-1)).sum(axis=-1)
    return float(tv) if tv.ndim == 0 else tv


def run_dropout_fit(x: Tensor, y: Tensor, *, keeps: tuple[float, ...] = (1.0, 0.9), trials: int = 1,
                    width: int = 500, act: str = "tanh", steps: int = 5_000, lr: float = 1e-3,
                    grid: Tensor | None = None, seed: int = 0) -> dict:
    """Fit (x, y) with two-layer nets in the linear regime (a, w ~ N(0, 1), α = √m, γ = ½), one member per
    (trial, keep probability p), all trained by Adam as one ensemble (图8.12–8.13, 图8.16).

    Members are ordered trial-major: member t·len(keeps) + j has keep probability ``keeps[j]``.
    Returns the members' keep probabilities (K,), outputs on ``grid`` (K, G), final and initial
    parameters a (K, m), w (K, m, 2), RD (7.3) (K,), and the recorded training risk R_S (T, K).
    """
    from companion.core.ensemble import TwoLayerEnsemble, train_ensemble

    if not keeps or any(not 0 < p <= 1 for p in keeps):
        raise ValueError(f"keep probabilities p must lie in (0, 1]; got {keeps}")
    if trials < 1 or not 1 <= width <= 5000 or steps < 1:
        raise ValueError(f"need trials ≥ 1, 1 ≤ width ≤ 5000, steps ≥ 1; got trials={trials}, width={width}, "
                         f"steps={steps}")
    keep = torch.tensor(list(keeps) * trials)  # (K,)
    net = TwoLayerEnsemble(x.shape[1], width, beta1=1.0, beta2=1.0, alpha=width ** 0.5, act=act,
                           n_members=len(keep), seed=seed)
    hist = train_ensemble(net, x, y, steps=steps, lr=lr, optimizer="adam", keep=keep,
                          record_every=max(1, steps // 100), seed=seed)
    grid = x if grid is None else grid
    with torch.no_grad():
        outputs = net(grid).numpy()  # (K, G)
    return {"keep": keep.numpy(), "outputs": outputs, "a": net.a.detach().numpy(), "w": net.w.detach().numpy(),
            "a0": net.a0.numpy(), "w0": net.w0.numpy(), "rd": net.relative_distance(), "steps": hist.steps,
            "risk": hist.risk}


def run_dropout_sample_size(sizes: tuple[int, ...], *, keeps: tuple[float, ...] = (1.0, 0.9), trials: int = 2,
                            width: int = 200, steps: int = 3_000, seed: int = 0) -> np.ndarray:
    """图8.16: test error ½⟨(f − f*)²⟩ on [−10, 10] of students fitted to n evenly spaced samples of the
    two-neuron teacher f* = :func:`target_8_13`, for each n in ``sizes``; mean over ``trials`` random
    initialisations.  Returns an array (len(sizes), len(keeps)).  One ensemble per n (the data differ)."""
    if not sizes or min(sizes) < 1:
        raise ValueError(f"sample sizes must be positive; got {sizes}")
    grid = torch.linspace(-10, 10, 401).reshape(-1, 1)
    truth = target_8_13(grid).ravel().numpy()
    errors = np.empty((len(sizes), len(keeps)))
    for i, n in enumerate(sizes):
        x = torch.linspace(-10, 10, n).reshape(-1, 1)  # (n, 1)
        fit = run_dropout_fit(x, target_8_13(x).ravel(), keeps=keeps, trials=trials, width=width, steps=steps,
                              grid=grid, seed=seed)
        err = 0.5 * ((fit["outputs"] - truth) ** 2).mean(axis=1)  # (K,)
        errors[i] = err.reshape(trials, len(keeps)).mean(axis=0)
    return errors


#: Angular gap (radians) that splits orientation clusters in the 图8.3 claim (count_angle_clusters' default).
PROCESS_GAP = 0.1


def snapshot_index(proc: dict, step: int) -> int:
    """Index of the snapshot of :func:`run_condensation` nearest to ``step``."""
    return int(np.argmin(np.abs(np.asarray(proc["snap_steps"]) - step)))


def gaps_at(proc: dict, step: int, *, mass: float = 0.9) -> np.ndarray:
    """:func:`angle_gaps` of the amplitude-carrying neurons at the snapshot nearest to ``step``."""
    i = snapshot_index(proc, step)
    return angle_gaps(orientation(proc["w"][i]), amplitude(proc["a"][i], proc["w"][i]), mass=mass)


def clusters_at(proc: dict, step: int, *, gap: float = PROCESS_GAP) -> int:
    """:func:`count_angle_clusters` of the amplitude-carrying neurons at the snapshot nearest to ``step``."""
    i = snapshot_index(proc, step)
    return count_angle_clusters(orientation(proc["w"][i]), amplitude(proc["a"][i], proc["w"][i]), gap=gap)


def _gap(gaps: np.ndarray, k: int) -> float:
    """The (k+1)-th largest gap, 0 if there are not that many neurons."""
    return float(gaps[k]) if len(gaps) > k else 0.0


PLATEAU_CONDENSATION = ClaimSpec(
    "ch08.plateau-one-orientation", "图8.3",
    "one orientation cluster in the middle of the first plateau, at least 3 at the end of training")


def check_plateau_condensation(proc: dict, *, gap: float = PROCESS_GAP) -> Verdict:
    """图8.3 on a :func:`run_condensation` result, in terms of the gaps between the orientations of the
    neurons carrying 90% of the amplitude (split at ``gap``, as :func:`count_angle_clusters` does).

    Mid-plateau one cluster ⇔ the second-largest gap ≤ ``gap`` (nothing splits the neurons) and their
    run is at most :data:`MAX_CLUSTER_WIDTH` wide (not a ring or an arc spread round the circle); at
    the end ≥ 3 clusters ⇔ the third-largest gap > ``gap``.  No first plateau (e.g. a large
    initialisation) is a "never": the claim fails.
    """
    try:
        start, end = first_plateau(proc["steps"], proc["loss"])
    except ValueError:
        start = end = None
    final = int(proc["snap_steps"][-1])
    g_end = gaps_at(proc, final)
    if start is None:
        width = g2 = float("nan")
        mid_clusters = "no plateau"
    else:
        mid = (start + end) // 2
        g2 = _gap(gaps_at(proc, mid), 1)
        i = snapshot_index(proc, mid)
        width = float(cluster_widths(orientation(proc["w"][i]), amplitude(proc["a"][i], proc["w"][i]), gap=gap)[0])
        mid_clusters = clusters_at(proc, mid, gap=gap)
    return PLATEAU_CONDENSATION.judge(
        threshold("2nd-largest orientation gap mid-plateau [rad]", g2, "<=", gap),
        threshold("widest cluster mid-plateau [rad]", width, "<=", MAX_CLUSTER_WIDTH),
        threshold("3rd-largest orientation gap at the end [rad]", _gap(g_end, 2), ">", gap),
        plateau="none" if start is None else (start, end), clusters_mid_plateau=mid_clusters,
        clusters_final=clusters_at(proc, final, gap=gap))


DEAD_NEURONS = ClaimSpec("ch08.dead-neurons-still", "图8.3", "dead ReLU neurons never move while the live ones do")


def neuron_moves(proc: dict) -> np.ndarray:
    """How far each neuron travelled from the first to the last snapshot: max |Δw| over (w, b) + |Δa|, (m,)."""
    return np.abs(proc["w"][-1] - proc["w"][0]).max(axis=1) + np.abs(proc["a"][-1] - proc["a"][0])


def check_dead_neurons(proc: dict) -> Verdict:
    """习题19 / 图8.3: the neurons whose pre-activation w_k x_i + b_k is ≤ 0 at every training input at
    initialisation (:func:`dead_neurons`) have not moved at all by the last snapshot (relative to a live
    neuron's typical move: ≤ 10⁻⁶), and every other neuron has moved farther than any of them."""
    dead = dead_neurons(proc["w"][0], proc["x"])
    moves = neuron_moves(proc)
    live = moves[~dead]
    typical = float(np.median(live)) if live.size else float("nan")
    worst_dead = float(moves[dead].max()) if dead.any() else float("nan")
    ratio = worst_dead / typical if dead.any() and typical > 0 else float("nan")
    return DEAD_NEURONS.judge(
        count("dead neurons", int(dead.sum()), ">=", 1),
        threshold("largest move of a dead neuron / median move of a live one", ratio, "<=", 1e-6),
        compare("smallest move of a live neuron", float(live.min()) if live.size else float("nan"), ">",
                "largest move of a dead neuron", worst_dead),
        live_neurons=int(live.size))


def run_dropout_relu(*, width: int = 500, keep: float = 0.9, steps: int = 20_000, lr: float = 1e-3,
                     n_masks: int = 40_000, seed: int = 0) -> dict:
    """图8.12 and (8.5): the target ½ReLU(−x − ⅓) + ½ReLU(x − ⅓) on 8 points of [−1, 1], two-layer ReLU
    nets in the linear regime (a, w ~ N(0, 1), α = √m), Adam; member 0 without dropout (p = 1), member 1
    with keep probability ``keep``, trained side by side as one ensemble.

    Returns the ensemble ``net`` and its history ``hist``, the data, RD (7.3) per member, the cluster
    count and occupied fraction of the neurons carrying half the amplitude per member, and for the
    dropout member (in float64) R_S, R₁ (8.5) and the Monte-Carlo mean and standard error of R_S^drop
    over ``n_masks`` masks.
    """
    from companion.core.ensemble import TwoLayerEnsemble, train_ensemble

    if not 0 < keep <= 1 or steps < 1 or not 1 <= width <= 5000:
        raise ValueError(f"need 0 < keep ≤ 1, steps ≥ 1, 1 ≤ width ≤ 5000; got keep={keep}, steps={steps}, "
                         f"width={width}")
    x = torch.linspace(-1, 1, 8).reshape(-1, 1)
    y = (0.5 * torch.relu(-x - 1 / 3) + 0.5 * torch.relu(x - 1 / 3)).ravel()
    net = TwoLayerEnsemble(1, width, beta1=1.0, beta2=1.0, alpha=width ** 0.5, n_members=2, seed=seed)
    hist = train_ensemble(net, x, y, steps=steps, lr=lr, optimizer="adam", keep=[1.0, keep],
                          record_every=max(1, steps // 40), seed=seed)
    a, w = net.a.detach().numpy(), net.w.detach().numpy()
    clusters, occupied = [], []
    for k in range(2):
        amp, ang = amplitude(a[k], w[k]), orientation(w[k])
        clusters.append(count_angle_clusters(ang, amp, mass=0.5))
        occupied.append(occupied_fraction(ang, amp, mass=0.5))
    a_eff = (net.a.detach()[1] / net.alpha[1]).double().numpy()
    hidden = net.hidden(x)[1].detach().double().numpy()  # (n, m)
    r_s = 0.5 * float(np.mean((hidden @ a_eff - y.double().numpy()) ** 2))
    r_1 = dropout_regulariser(a_eff, hidden, keep)
    mc_mean, mc_se = dropout_risk_monte_carlo(a_eff, hidden, y.numpy(), keep, n_masks=n_masks, seed=seed)
    return {"net": net, "hist": hist, "x": x, "y": y, "keep": keep, "rd": net.relative_distance(),
            "clusters": np.array(clusters), "occupied": np.array(occupied), "a_eff": a_eff, "hidden": hidden,
            "r_s": r_s, "r_1": r_1, "mc_mean": mc_mean, "mc_se": mc_se}


DROPOUT_RISK = ClaimSpec("ch08.dropout-risk-identity", "(8.5)",
                         "the Monte-Carlo mean of the dropout risk equals R_S + R_1 within 3 standard errors")


def check_dropout_risk(result: dict) -> Verdict:
    """(8.5) on a :func:`run_dropout_relu` result: |mean R_S^drop − (R_S + R₁)| ≤ 3 standard errors."""
    err = abs(result["mc_mean"] - (result["r_s"] + result["r_1"]))
    return DROPOUT_RISK.judge(identity("|MC mean − (R_S + R_1)|", err, 3 * result["mc_se"]),
                              z=(result["mc_mean"] - result["r_s"] - result["r_1"]) / result["mc_se"],
                              r_s=result["r_s"], r_1=result["r_1"])


DROPOUT_CONDENSES = ClaimSpec(
    "ch08.dropout-condenses", "图8.12",
    "from a linear-regime initialisation, dropout moves the input weights at least 5 times farther (RD) "
    "and gathers the largest neurons on a few orientations, while without dropout they stay spread")


def check_dropout_condenses(result: dict) -> Verdict:
    """图8.12 on a :func:`run_dropout_relu` result: RD(p) > 5·RD(1); the neurons carrying half the
    amplitude occupy < 50% of 36 angular bins with dropout and > 80% without."""
    rd, occ = result["rd"], result["occupied"]
    return DROPOUT_CONDENSES.judge(
        compare("RD with dropout", float(rd[1]), ">", "5 × RD without", 5 * float(rd[0])),
        threshold("occupied fraction with dropout", float(occ[1]), "<", 0.5),
        threshold("occupied fraction without dropout", float(occ[0]), ">", 0.8),
        clusters_dropout=int(result["clusters"][1]), clusters_no_dropout=int(result["clusters"][0]))


def run_tanh_dropout(*, keep: float = 0.9, trials: int = 3, width: int = 500, steps: int = 5_000,
                     seed: int = 0) -> dict:
    """图8.13: f(x) = tanh(x − 6) + tanh(x + 6) on 10 evenly spaced points of [−10, 10], two-layer tanh nets
    in the linear regime, p = 1 and p = ``keep`` for ``trials`` initialisations, one ensemble
    (:func:`run_dropout_fit`).  Returns that fit plus the total variation of each member's output on
    2001 grid points (trials, 2), the target's, the mean final R_S per p (2,) and R_S of the zero function."""
    x = torch.linspace(-10, 10, 10).reshape(-1, 1)
    y = target_8_13(x).ravel()
    grid = torch.linspace(-10, 10, 2001).reshape(-1, 1)
    fit = run_dropout_fit(x, y, keeps=(1.0, keep), trials=trials, width=width, steps=steps, grid=grid, seed=seed)
    return {**fit, "x": x, "y": y, "grid": grid, "trials": trials,
            "tv": total_variation(fit["outputs"]).reshape(trials, 2),
            "tv_target": total_variation(target_8_13(grid).ravel()),
            "final_risk": fit["risk"][-1].reshape(trials, 2).mean(axis=0),
            "zero_risk": 0.5 * float((y ** 2).mean())}


DROPOUT_SIMPLER_FIT = ClaimSpec(
    "ch08.dropout-simpler-fit", "图8.13",
    "with dropout the tanh nets' mean output total variation is at least twice as close to the target's "
    "as without, while both fit the data (mean R_S below 2% of the zero function's)")


def check_dropout_simpler_fit(result: dict) -> Verdict:
    """图8.13 on a :func:`run_tanh_dropout` result: |TV̄(p) − TV*| < ½|TV̄(1) − TV*| (means over the
    initialisations), and the larger mean final R_S < 2% of the zero function's."""
    tv = result["tv"].mean(axis=0)
    excess = np.abs(tv - result["tv_target"])
    risk = result["final_risk"] / result["zero_risk"]
    return DROPOUT_SIMPLER_FIT.judge(
        compare("|TV − TV*| with dropout", float(excess[1]), "<", "½|TV − TV*| without", 0.5 * float(excess[0])),
        threshold("larger mean R_S / R_S(zero function)", float(risk.max()), "<", 0.02),
        tv_target=result["tv_target"], tv_no_dropout=tv[0], tv_dropout=tv[1])


def make_explorer(seed: int = 0, steps: int = 8_000):
    """Init std, activation, keep probability p, width, snapshot scrubber → polar scatter, output, loss."""
    from functools import lru_cache

    from companion.kit import widgets

    @lru_cache(maxsize=8)
    def train(init_std: float, act: str, keep: float, width: int) -> dict:
        return run_condensation(width=width, init_std=init_std, act=act, keep=keep, steps=steps, n_snapshots=41,
                                seed=seed)

    def compute(init_std: float, act: str, keep: float, width: int, snapshot: int) -> dict:
        result = dict(train(init_std, act, keep, width))
        result["index"] = min(snapshot, len(result["snap_steps"]) - 1)
        i = result["index"]
        amp, ang = amplitude(result["a"][i], result["w"][i]), orientation(result["w"][i])
        result["clusters"] = count_angle_clusters(ang, amp)
        return result

    def draw(result: dict, fig) -> None:
        i = result["index"]
        ax0 = fig.add_subplot(1, 3, 1, projection="polar")
        plot_polar(ax0, result["w"][i], result["a"][i], dead=result["dead"],
                   title=f"step {result['snap_steps'][i]}: {result['clusters']} clusters")
        ax1 = fig.add_subplot(1, 3, 2)
        ax1.plot(result["grid"], result["target"], "--", color="0.4")
        ax1.plot(result["grid"], result["outputs"][i], color="#d62728")
        ax1.plot(result["x"], result["y"], ".", color="#1f77b4")
        ax1.set_title("output")
        ax2 = fig.add_subplot(1, 3, 3)
        ax2.semilogy(result["steps"], result["loss"])
        ax2.axvline(result["snap_steps"][i], color="0.5", ls=":")
        ax2.set_title("loss R_S")
        ax2.set_xlabel("step")

    controls = {"init_std": widgets.log_slider(1e-3, 1e-5, 1.0, "init std"),
                "act": widgets.dropdown("relu", ("relu", "tanh", "sigmoid", "softplus", "xtanh", "x2tanh"),
                                        "activation"),
                "keep": widgets.float_slider(1.0, 0.5, 1.0, 0.05, "keep prob p"),
                "width": widgets.int_slider(100, 10, 500, "width m", step=10),
                "snapshot": widgets.int_slider(40, 0, 40, "snapshot")}
    return widgets.Explorer("Condensation (ch. 8)", controls, compute, draw)
