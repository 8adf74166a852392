"""The phase diagram (相图) of two-layer ReLU networks, book ch. 7, eqs. (7.4)–(7.13).

For f = (1/α) Σ_k a_k σ(w_kᵀx) with a ~ N(0, β1²), w ~ N(0, β2² I) the dynamics depend on the
initialisation only through

    κ = β1β2/α  (7.9, energy scale),   κ′ = β1/β2  (7.9, dynamics scale),
    γ = lim −log κ / log m,            γ′ = lim −log κ′ / log m          (7.12),

and the regime is read from how the relative distance RD(θ_w*) (7.3) scales with the width:
S_w = lim log RD / log m (7.13): S_w < 0 linear, S_w > 0 condensed, RD ~ O(1) critical.
The theoretical boundary (Luo et al., JMLR 2021; not written out in the book) is

    linear ⇔ γ < 1 or γ′ > γ − 1;   condensed ⇔ γ > 1 and γ′ < γ − 1;
    critical on {γ = 1, γ′ ≤ 0} ∪ {γ′ = γ − 1, γ′ ≥ 0}.

This module maps (γ, γ′, m) to (β1, β2, α) with β2 = 1, runs the grid of 图7.5(a) on
:mod:`companion.core.ensemble` (one batched ensemble per width), fits S_w, reads the neurons' features
across the diagram (图7.3, 图7.6) and their degree of condensation along the width at a condensed, a critical and
a linear point (图7.6: sharpening, constancy) and, on the 8×8 digits standing in for MNIST, their effective number of
directions and projections I_ŵ (图7.5(b), 图7.7), places the initialisations of 表7.1 on the diagram and
grades exercises 17 and 19.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from companion.core.data import digits
from companion.core.ensemble import TwoLayerEnsemble, stopped_at, train_ensemble
from companion.core.neurons import (
    amplitude,
    count_angle_clusters,
    count_kinks,
    effective_direction_count,
    occupied_fraction,
    orientation,
    plot_feature_scatter,
    projection,
)
from companion.kit.bounds import SEED, Bounds, integer, real
from companion.kit.cache import cached
from companion.kit.claims import ClaimSpec, Condition, Verdict, compare, count, identity, threshold
from companion.kit.seeds import active_seed

REGIMES = ("linear", "critical", "condensed")


def scales(gamma: float, gamma_prime: float, m: int) -> tuple[float, float, float]:
    """(β1, β2, α) realising κ = m^{−γ}, κ′ = m^{−γ′} exactly at width m, with β2 = 1."""
    if m < 2:
        raise ValueError(f"width m must be ≥ 2 for log m > 0, got {m}")
    beta2 = 1.0
    beta1 = m ** (-gamma_prime) * beta2
    alpha = beta1 * beta2 * m ** gamma
    return beta1, beta2, alpha


def finite_gammas(alpha: float, beta1: float, beta2: float, m: int) -> tuple[float, float]:
    """γ = −log κ / log m and γ′ = −log κ′ / log m at one finite width m (7.12 without the limit)."""
    kappa, kappa_p = beta1 * beta2 / alpha, beta1 / beta2
    return -math.log(kappa) / math.log(m), -math.log(kappa_p) / math.log(m)


ScaleFn = Callable[[float, float], float]  # (m, d) -> value


def limit_gammas(alpha: ScaleFn, beta1: ScaleFn, beta2: ScaleFn, d: int = 1,
                 m_pair: tuple[float, float] = (1e12, 1e24)) -> tuple[float, float]:
    """γ, γ′ of an initialisation given as functions of (m, d), by the log-log slope at huge m.

    Taking the slope between two huge widths removes constant factors (e.g. √2 in He's init),
    which is what the limit in (7.12) does.
    """
    logs = []
    for m in m_pair:
        b1, b2, al = beta1(m, d), beta2(m, d), alpha(m, d)
        logs.append((math.log(b1 * b2 / al), math.log(b1 / b2)))
    dlogm = math.log(m_pair[1]) - math.log(m_pair[0])
    return -(logs[1][0] - logs[0][0]) / dlogm, -(logs[1][1] - logs[0][1]) / dlogm


#: 表7.1: (α, β1, β2) of common initialisations as functions of the width m and input dim d.
INITIALISATIONS: dict[str, tuple[ScaleFn, ScaleFn, ScaleFn]] = {
    "LeCun": (lambda m, d: 1.0, lambda m, d: math.sqrt(1 / m), lambda m, d: math.sqrt(1 / d)),
    "He": (lambda m, d: 1.0, lambda m, d: math.sqrt(2 / m), lambda m, d: math.sqrt(2 / d)),
    "Xavier": (lambda m, d: 1.0, lambda m, d: math.sqrt(2 / (m + 1)), lambda m, d: math.sqrt(2 / (m + d))),
    "NTK": (lambda m, d: math.sqrt(m), lambda m, d: 1.0, lambda m, d: 1.0),
    "mean-field": (lambda m, d: m, lambda m, d: 1.0, lambda m, d: 1.0),
}
#: The (γ, γ′) the book's table lists for them.
BOOK_TABLE = {"LeCun": (0.5, 0.5), "He": (0.5, 0.5), "Xavier": (1.0, 0.0), "NTK": (0.5, 0.0), "mean-field": (1.0, 0.0)}


def critical_gamma(gamma_prime: float | np.ndarray) -> float | np.ndarray:
    """The γ of the linear/condensed boundary at a given γ′: max(1, 1 + γ′)."""
    return np.maximum(1.0, 1.0 + np.asarray(gamma_prime, dtype=float))


def regime(gamma: float, gamma_prime: float, tol: float = 1e-9) -> str:
    """'linear', 'critical' or 'condensed' for the point (γ, γ′) of the theoretical phase diagram."""
    gap = gamma - float(critical_gamma(gamma_prime))
    if abs(gap) <= tol:
        return "critical"
    return "condensed" if gap > 0 else "linear"


def placements(d: int = 1, m_pair: tuple[float, float] = (1e12, 1e24)) -> dict[str, tuple[float, float, str]]:
    """表7.1: every initialisation's (γ, γ′) and its regime (slopes between the widths ``m_pair``)."""
    out = {}
    for name, (alpha, beta1, beta2) in INITIALISATIONS.items():
        g, gp = limit_gammas(alpha, beta1, beta2, d, m_pair)
        g, gp = round(g, 6) + 0.0, round(gp, 6) + 0.0  # + 0.0 turns −0.0 into 0.0
        out[name] = (g, gp, regime(g, gp))
    return out


def fit_slope(widths: Sequence[float], values: Sequence[float]) -> float:
    """Least-squares slope of log(values) against log(widths): the S_w estimate of (7.13)."""
    widths, values = np.asarray(widths, dtype=float), np.asarray(values, dtype=float)
    if widths.shape != values.shape or widths.size < 2:
        raise ValueError(f"need ≥ 2 widths and as many values; got {widths.shape} and {values.shape}")
    if np.any(values <= 0) or np.any(widths <= 0):
        raise ValueError("widths and values must be positive to take logs")
    return float(np.polyfit(np.log(widths), np.log(values), 1)[0])


def four_points(dtype: torch.dtype = torch.float64) -> tuple[torch.Tensor, torch.Tensor]:
    """The 4 data points of 图7.1 (from the authors' script): x = linspace(−1, 1, 4),
    y = 0.2 ReLU(x − 1/3) + 0.2 ReLU(−x − 1/3).  Returns x (4, 1), y (4,)."""
    x = torch.linspace(-1, 1, 4, dtype=dtype)
    y = 0.2 * torch.relu(x - 1 / 3) + 0.2 * torch.relu(-x - 1 / 3)
    return x.reshape(-1, 1), y


def digits_points(n: int = 100, seed: int = 0, dtype: torch.dtype = torch.float64) -> tuple[torch.Tensor, torch.Tensor]:
    """The offline stand-in for 图7.5(b)/7.7's MNIST: ``n`` images of the bundled 8×8 digits
    (:func:`companion.core.data.digits`, a permutation drawn from ``seed``), pixels scaled to [0, 1] (d = 64),
    and the label 0–9 as the scalar target (MSE regression, as in the book).  Returns x (n, 64), y (n,)."""
    data = digits(n, 0, seed=seed, dtype=dtype)
    return data.x, data.labels.to(dtype)


@dataclass
class PhaseRun:
    """Trained nets over a (γ, γ′) grid × widths × seeds.  Arrays are indexed [γ, γ′, width, seed].

    ``rd`` is RD(θ_w*) (7.3), ``converged`` whether R_S reached the stopping threshold,
    ``steps`` the steps used; ``nets[j]`` is the ensemble of width ``widths[j]`` whose member
    (i·len(gamma_primes) + i′)·n_seeds + s is the cell (γ_i, γ′_i′) with seed s.
    """

    gammas: np.ndarray
    gamma_primes: np.ndarray
    widths: np.ndarray
    rd: np.ndarray
    converged: np.ndarray
    steps: np.ndarray
    nets: list[TwoLayerEnsemble]

    def sw(self) -> np.ndarray:
        """S_w (7.13) of every cell: the slope of log RD (geometric mean over seeds) against log m, (G, G′)."""
        rd = self.mean_rd()
        out = np.empty(rd.shape[:2])
        for i in range(out.shape[0]):
            for j in range(out.shape[1]):
                out[i, j] = fit_slope(self.widths, rd[i, j])
        return out

    def mean_rd(self) -> np.ndarray:
        """RD averaged over seeds (geometrically, as S_w is a log-log slope), shape (G, G′, W)."""
        return np.exp(np.log(self.rd).mean(axis=-1))

    def net(self, gamma: float, gamma_prime: float, width: int, seed: int = 0) -> tuple[TwoLayerEnsemble, int]:
        """The ensemble holding the cell and the member index in it."""
        i, j, w = (_index(self.gammas, gamma, "gamma"), _index(self.gamma_primes, gamma_prime, "gamma_prime"),
                   _index(self.widths, width, "width"))
        n_seeds = self.rd.shape[-1]
        if not 0 <= seed < n_seeds:
            raise ValueError(f"seed index must lie in [0, {n_seeds}), got {seed}")
        return self.nets[w], (i * len(self.gamma_primes) + j) * n_seeds + seed


def _index(values: np.ndarray, value: float, name: str) -> int:
    hits = np.flatnonzero(np.isclose(values, value))
    if len(hits) != 1:
        raise ValueError(f"{name}={value} is not on the grid; available: {values.tolist()}")
    return int(hits[0])


@dataclass
class WidthRun:
    """The nets of one width of :func:`run_phase`: the trained ensemble and, per member, RD(θ_w*) (7.3), whether
    R_S reached the stopping threshold and the steps it took (``max_steps`` when it did not)."""

    rd: np.ndarray
    converged: np.ndarray
    steps: np.ndarray
    net: TwoLayerEnsemble


@cached
def train_width(gammas: Sequence[float], gamma_primes: Sequence[float], width: int, index: int, *, x: torch.Tensor,
                y: torch.Tensor, max_steps: int, threshold: float, seed: int, n_seeds: int, record_every: int,
                dtype: torch.dtype, power_iters: int) -> WidthRun:
    """One width of :func:`run_phase` (its ``index``-th), cached on its own: a run over several widths that is
    stopped (a closed laptop, the end of a session or of a device window) resumes at the first width not finished —
    chapter 7's full profile spends hours on its widest digits' nets alone."""
    cells = [(g, gp) for g in np.asarray(gammas, dtype=float) for gp in np.asarray(gamma_primes, dtype=float)
             for _ in range(n_seeds)]
    b1, b2, al = zip(*(scales(g, gp, width) for g, gp in cells))
    net = TwoLayerEnsemble(x.shape[1], width, beta1=b1, beta2=b2, alpha=al, dtype=dtype, seed=seed * 7919 + index)
    hist = train_ensemble(net, x, y, steps=max_steps, lr="hessian", stop_below=threshold, power_iters=power_iters,
                          record_every=record_every, seed=seed, desc=f"phase diagram, m = {width}")
    stops = stopped_at(hist)
    return WidthRun(rd=net.relative_distance().astype(float), converged=stops >= 0,
                    steps=np.where(stops >= 0, stops, max_steps).astype(int), net=net)


def run_phase(gammas: Sequence[float], gamma_primes: Sequence[float], widths: Sequence[int], *,
              x: torch.Tensor | None = None, y: torch.Tensor | None = None, max_steps: int = 20_000,
              rel_tol: float = 1e-4, seed: int = 0, n_seeds: int = 1, record_every: int = 100,
              dtype: torch.dtype = torch.float64, power_iters: int = 8) -> PhaseRun:
    """Train every (γ, γ′) cell at every width to R_S < rel_tol·½·mean(y²) (GD, Hessian-adaptive lr).

    All cells (× ``n_seeds`` initialisations) of one width form one :class:`TwoLayerEnsemble`
    (``dtype``: float64 by default, which the four points need: far in the linear regime their weights move
    too little for float32), trained and cached width by width (:func:`train_width`); a member stops as soon as it
    has fitted the data, so the slow condensed cells do not hold up the others.  rel_tol = 1e-4 gives the same S_w
    as 1e-8 (to ±0.02 on the 4-point data) in a fifth of the steps: RD is settled long before the last digits of the
    fit.  ``power_iters``: the Hessian-vector products of each step-size estimate
    (:func:`~companion.core.ensemble.train_ensemble`).
    """
    gammas, gamma_primes = np.asarray(gammas, dtype=float), np.asarray(gamma_primes, dtype=float)
    widths = np.asarray(widths, dtype=int)
    if n_seeds < 1:
        raise ValueError(f"n_seeds must be ≥ 1, got {n_seeds}")
    if gammas.size < 1 or gamma_primes.size < 1 or widths.size < 1 or widths.min() < 2:
        raise ValueError(f"need non-empty grids and widths ≥ 2; got {gammas}, {gamma_primes}, {widths}")
    if x is None or y is None:
        x, y = four_points()
    threshold = rel_tol * 0.5 * float((y.double() ** 2).mean())
    shape = (len(gammas), len(gamma_primes), n_seeds)
    runs = [train_width(gammas.tolist(), gamma_primes.tolist(), int(m), j, x=x, y=y, max_steps=max_steps,
                        threshold=threshold, seed=seed, n_seeds=n_seeds, record_every=record_every, dtype=dtype,
                        power_iters=power_iters) for j, m in enumerate(widths)]
    return PhaseRun(gammas, gamma_primes, widths, rd=np.stack([r.rd.reshape(shape) for r in runs], axis=2),
                    converged=np.stack([r.converged.reshape(shape) for r in runs], axis=2),
                    steps=np.stack([r.steps.reshape(shape) for r in runs], axis=2), nets=[r.net for r in runs])


def sign_agreement(gammas: np.ndarray, gamma_primes: np.ndarray, sw: np.ndarray,
                   margin: float) -> tuple[np.ndarray, np.ndarray]:
    """Cells farther than ``margin`` (in γ) from the boundary, and whether sign(S_w) matches theory there.

    Returns (far, agrees), boolean arrays of shape (G, G′): theory says S_w < 0 left of the
    boundary (linear) and S_w > 0 right of it (condensed).
    """
    g, gp = np.meshgrid(gammas, gamma_primes, indexing="ij")
    gap = g - critical_gamma(gp)
    far = np.abs(gap) > margin
    agrees = np.where(gap > 0, sw > 0, sw < 0)
    return far, agrees


def check_exercise17(answers: Mapping[str, tuple[float, float]]) -> bool:
    """习题17: (γ, γ′) of He and Xavier initialisations; prints a verdict per answer."""
    truth = placements()
    ok = True
    for name in ("He", "Xavier"):
        if name not in answers:
            raise ValueError(f"answers must give (gamma, gamma_prime) for {name!r}; got keys {sorted(answers)}")
        g, gp = answers[name]
        right = math.isclose(g, truth[name][0], abs_tol=1e-6) and math.isclose(gp, truth[name][1], abs_tol=1e-6)
        ok &= right
        print(f"{name}: (γ, γ′) = ({g}, {gp}) — {'correct' if right else 'not quite: recompute κ and κ′ as m → ∞'}")
    return ok


#: 习题19: the three (α, β1, β2) settings as functions of m.
EXERCISE19 = {
    "i": (lambda m, d: 1.0, lambda m, d: 1.0, lambda m, d: 1.0),
    "ii": (lambda m, d: m ** 2, lambda m, d: 1.0, lambda m, d: 1.0),
    "iii": (lambda m, d: 1.0, lambda m, d: 1.0, lambda m, d: 1 / m),
}


def check_exercise19(answers: Mapping[str, str]) -> bool:
    """习题19: the regime ('linear', 'critical' or 'condensed') of settings (i), (ii), (iii)."""
    ok = True
    for case, fns in EXERCISE19.items():
        if case not in answers:
            raise ValueError(f"answers must name a regime for case {case!r}; got keys {sorted(answers)}")
        if answers[case] not in REGIMES:
            raise ValueError(f"answer {answers[case]!r} for case {case!r} is not one of {REGIMES}")
        g, gp = limit_gammas(*fns)
        truth = regime(round(g, 6), round(gp, 6))
        right = answers[case] == truth
        ok &= right
        print(f"({case}) {answers[case]} — {'correct' if right else f'not quite: locate (γ, γ′) = ({g + 0.0:.3g}, {gp + 0.0:.3g})'}")
    return ok


def plot_diagram(ax, *, gp_range: tuple[float, float] = (-1.0, 1.5), points: Mapping[str, tuple[float, float]] | None = None,
                 labels: bool = True) -> None:
    """The theoretical phase diagram in the (γ, γ′) plane (γ horizontal) with the critical line."""
    gp = np.linspace(*gp_range, 200)
    ax.plot(critical_gamma(gp), gp, "k-", lw=1.5, label="critical line")
    if labels:
        ax.text(0.3, gp_range[1] - 0.3, "linear", fontsize=9)
        ax.text(critical_gamma(gp_range[0]) + 0.5, gp_range[0] + 0.2, "condensed", fontsize=9)
    for name, (g, gpp) in (points or {}).items():
        ax.plot(g, gpp, "o", ms=5)
        ax.annotate(name, (g, gpp), textcoords="offset points", xytext=(4, 4), fontsize=8)
    ax.set_xlabel("γ")
    ax.set_ylabel("γ′")


@dataclass
class PointFit:
    """One net of (7.4) at (γ, γ′, m) trained on the 4 points: the data x, y (4,), its output on ``grid``
    (601,), final and initial a (m,), w (m, 2), RD (7.3), whether it fitted, and the theoretical regime."""

    gamma: float
    gamma_prime: float
    m: int
    regime: str
    x: np.ndarray
    y: np.ndarray
    grid: np.ndarray
    output: np.ndarray
    a: np.ndarray
    w: np.ndarray
    a0: np.ndarray
    w0: np.ndarray
    rd: float
    converged: bool


#: The bounds of :func:`explore_point`'s numbers: the explorer's (γ, γ′) sliders, the diagram's window; widths from
#: 2 (log m > 0) to the slider's 2000; at most 100 000 GD steps.
POINT_BOUNDS = Bounds(gamma=real(0.0, 2.5), gamma_prime=real(-1.0, 1.5), m=integer(2, 2000), seed=SEED,
                      max_steps=integer(1, 100_000))


def explore_point(gamma: float, gamma_prime: float, m: int, seed: int = 0, max_steps: int = 20_000) -> PointFit:
    """Train one net of (7.4) at (γ, γ′, m) on the 4 points of 图7.1; its fit, features, RD and regime.  A number
    outside :data:`POINT_BOUNDS` raises a ValueError naming it."""
    POINT_BOUNDS.check(gamma=gamma, gamma_prime=gamma_prime, m=m, seed=seed, max_steps=max_steps)
    x, y = four_points()
    b1, b2, al = scales(gamma, gamma_prime, m)
    net = TwoLayerEnsemble(1, m, beta1=b1, beta2=b2, alpha=al, n_members=1, dtype=torch.float64, seed=seed)
    hist = train_ensemble(net, x, y, steps=max_steps, stop_below=1e-4 * 0.5 * float((y ** 2).mean()), seed=seed,
                          progress=False)
    grid = torch.linspace(-1.2, 1.2, 601, dtype=torch.float64).reshape(-1, 1)
    with torch.no_grad():
        out = net(grid)[0].numpy()
    return PointFit(gamma=gamma, gamma_prime=gamma_prime, m=m, regime=regime(gamma, gamma_prime),
                    x=x.numpy().ravel(), y=y.numpy(), grid=grid.numpy().ravel(), output=out,
                    a=net.a.detach()[0].numpy(), w=net.w.detach()[0].numpy(), a0=net.a0[0].numpy(),
                    w0=net.w0[0].numpy(), rd=float(net.relative_distance()[0]),
                    converged=bool(stopped_at(hist)[0] >= 0))


def make_explorer(seed: int | None = None, max_steps: int = 20_000):
    """Sliders γ, γ′, m → where the point lies on the diagram, the fitted curve, the feature scatter;
    the nets start from ``seed`` (default: the active seed)."""
    from companion.kit import widgets

    seed = active_seed() if seed is None else seed
    POINT_BOUNDS.check(seed=seed, max_steps=max_steps)

    def draw(result: PointFit, fig) -> None:
        axes = fig.subplots(1, 3)
        plot_diagram(axes[0], points={result.regime: (result.gamma, result.gamma_prime)})
        axes[0].set_title("where (γ, γ′) lies")
        axes[1].plot(result.grid, result.output, color="#d62728")
        axes[1].plot(result.x, result.y, "*", color="#1f77b4", ms=9)
        axes[1].set_title(f"fit, RD = {result.rd:.3g}" + ("" if result.converged else " (not converged)"))
        plot_feature_scatter(axes[2], result.a, result.w, a0=result.a0, w0=result.w0, title="neurons")

    controls = {"gamma": widgets.float_slider(1.75, 0.0, 2.5, 0.05, "γ"),
                "gamma_prime": widgets.float_slider(0.0, -1.0, 1.5, 0.05, "γ′"),
                "m": widgets.int_slider(1000, 100, 2000, "width m", step=100)}
    return widgets.Explorer("Phase diagram (ch. 7)", controls,
                            lambda gamma, gamma_prime, m: explore_point(gamma, gamma_prime, m, seed, max_steps),
                            draw)


# --- the chapter's claims ---------------------------------------------------------------------

@dataclass
class RegimeFeatures:
    """图7.1/图7.3 at one width: per γ (at γ′ = ``gamma_prime``) the kinks of the learned function on
    [−1, 1], and the orientation clusters and occupied angular fraction of the amplitude-carrying neurons
    (first seed of the run).  The smallest γ of the run is the linear side, the largest the condensed."""

    gammas: tuple
    gamma_prime: float
    width: int
    grid: np.ndarray
    fits: dict
    kinks: dict
    clusters: dict
    occupied: dict

    @property
    def extremes(self) -> tuple[float, float]:
        """(linear γ, condensed γ): the smallest and the largest γ of the run."""
        return min(self.gammas), max(self.gammas)


def regime_features(run: PhaseRun, width: int, gamma_prime: float = 0.0, n_grid: int = 2401) -> RegimeFeatures:
    """Fits on a grid of [−1.2, 1.2] and the features of 图7.1/图7.3 for every γ of ``run`` at ``width``."""
    grid = torch.linspace(-1.2, 1.2, n_grid, dtype=torch.float64).reshape(-1, 1)
    inside = (grid.abs() <= 1).ravel().numpy()
    fits, kinks, clusters, occupied = {}, {}, {}, {}
    for g in run.gammas.tolist():
        net, k = run.net(g, gamma_prime, width)
        with torch.no_grad():
            fits[g] = net.member(k)(grid).numpy()  # this member only (the ensemble's K outputs cost K times more)
        kinks[g] = count_kinks(grid.numpy().ravel()[inside], fits[g][inside])
        a, w = net.a.detach()[k].numpy(), net.w.detach()[k].numpy()
        amp, ang = amplitude(a, w), orientation(w)
        clusters[g], occupied[g] = count_angle_clusters(ang, amp), occupied_fraction(ang, amp)
    return RegimeFeatures(tuple(run.gammas.tolist()), gamma_prime, int(width), grid.numpy().ravel(), fits, kinks,
                          clusters, occupied)


KINKS = ClaimSpec("ch07.kinks", "图7.1",
                  "the condensed-regime fit is piecewise linear with at most 4 kinks; the linear-regime fit has over 50")


def check_kinks(feat: RegimeFeatures) -> Verdict:
    """Kinks are whole numbers: "at most 4" is written as < 5 (the margin is then the counts to flipping)."""
    lin, con = feat.extremes
    return KINKS.judge(count(f"kinks γ={con:g}", feat.kinks[con], "<", 5),
                       count(f"kinks γ={lin:g}", feat.kinks[lin], ">", 50),
                       kinks={f"γ={g:g}": k for g, k in feat.kinks.items()}, width=feat.width)


CONDENSED_ORIENTATIONS = ClaimSpec("ch07.condensed-orientations", "图7.3",
                                   "condensed regime: the amplitude-carrying neurons sit on at most 2 orientations; "
                                   "linear regime: they stay spread over the circle")


def check_condensed_orientations(feat: RegimeFeatures) -> Verdict:
    lin, con = feat.extremes
    return CONDENSED_ORIENTATIONS.judge(
        count(f"orientation clusters γ={con:g}", feat.clusters[con], "<", 3),
        threshold(f"occupied fraction γ={con:g}", feat.occupied[con], "<", 0.2),
        threshold(f"occupied fraction γ={lin:g}", feat.occupied[lin], ">", 0.8),
        clusters_linear=feat.clusters[lin])


SW_SIGNS = ClaimSpec("ch07.sw-signs", "图7.4",
                     "S_w < 0 at γ = 0.5, S_w ≈ 0 at γ = 1 and S_w > 0 at γ = 1.75 (γ′ = 0)")


def _sw_conditions(run: PhaseRun) -> tuple[list[Condition], dict]:
    """S_w of the run's first γ′ column at γ = 0.5, 1, 1.75 against −0.3 (<), 0.1 (|·| <) and 0.2 (>): the
    conditions of 图7.4's claim (the paper: −0.506, 0.007, 0.372), and what the measured line shows."""
    sw = run.sw()[:, 0]
    at = {g: float(sw[_index(run.gammas, g, "gamma")]) for g in (0.5, 1.0, 1.75)}
    gp = float(run.gamma_primes[0])
    return ([threshold(f"S_w(γ=0.5, γ′={gp:g})", at[0.5], "<", -0.3),
             threshold(f"|S_w(γ=1, γ′={gp:g})|", abs(at[1.0]), "<", 0.1),
             threshold(f"S_w(γ=1.75, γ′={gp:g})", at[1.75], ">", 0.2)],
            dict(sw=list(at.values()), seeds=run.rd.shape[-1], widths=run.widths))


def check_sw_signs(run: PhaseRun) -> Verdict:
    """S_w of the run's first γ′ column at γ = 0.5, 1, 1.75: < −0.3, |·| < 0.1, > 0.2 (the paper: −0.506,
    0.007, 0.372)."""
    conditions, info = _sw_conditions(run)
    return SW_SIGNS.judge(*conditions, **info)


def boundary_cells(run: PhaseRun) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """S_w of every cell, the cells farther than half a grid step (in γ) from the boundary, and whether
    the sign of S_w agrees with the theory there."""
    sw = run.sw()
    spacing = float(np.min(np.diff(run.gammas))) if len(run.gammas) > 1 else 1.0
    far, agrees = sign_agreement(run.gammas, run.gamma_primes, sw, margin=spacing / 2 + 1e-9)
    return sw, far, agrees


def _cells(run: PhaseRun | GridFeatures, mask: np.ndarray) -> list[str]:
    return [f"({run.gammas[i]:g}, {run.gamma_primes[j]:g})" for i, j in zip(*np.nonzero(mask))]


PHASE_DIAGRAM = ClaimSpec("ch07.phase-diagram", "图7.5",
                          "the sign of the measured S_w agrees with the theoretical boundary on every cell not "
                          "adjacent to it")


def check_phase_diagram(run: PhaseRun, min_far: int = 10) -> Verdict:
    """Counts: cells far from the boundary (≥ ``min_far``), far cells whose sign disagrees (0) and nets that
    did not fit the data (0).  The adjacent cells are listed, with those of the wrong sign (not checked
    here: :func:`check_phase_adjacent` is their exploration)."""
    sw, far, agrees = boundary_cells(run)
    return PHASE_DIAGRAM.judge(count("cells not adjacent to the boundary", int(far.sum()), ">=", min_far),
                               count("of them with the wrong sign", int((far & ~agrees).sum()), "<", 1),
                               count("nets that did not fit", int((~run.converged).sum()), "<", 1),
                               adjacent_wrong_sign=_cells(run, ~far & ~agrees) or "none")


PHASE_ADJACENT = ClaimSpec("ch07.phase-adjacent", "图7.5",
                           "the sign of S_w agrees with the theory also on the cells adjacent to the boundary",
                           kind="exploration")


def check_phase_adjacent(run: PhaseRun) -> Verdict:
    """Exploration: at m ≤ 2000 the cells next to the line do not follow the m → ∞ theory reliably."""
    sw, far, agrees = boundary_cells(run)
    near = ~far
    return PHASE_ADJACENT.judge(count("adjacent cells with the wrong sign", int((near & ~agrees).sum()), "<", 1),
                                adjacent=int(near.sum()), wrong=_cells(run, near & ~agrees) or "none",
                                their_sw=[round(float(v), 3) for v in sw[near & ~agrees]])


TABLE_7_1 = ClaimSpec("ch07.table-7-1", "表7.1",
                      "the (γ, γ′) computed from each initialisation's (α, β1, β2) match the book's table",
                      kind="identity")

#: (γ, γ′) are log-log slopes of exact power laws (rounded to 6 decimals by :func:`placements`):
#: any deviation above 1e-6 is a wrong slope, not rounding.
TABLE_TOL = 1e-6


def check_table_7_1(placed: Mapping[str, tuple[float, float, str]]) -> Verdict:
    err = max(max(abs(placed[n][0] - g), abs(placed[n][1] - gp)) for n, (g, gp) in BOOK_TABLE.items())
    return TABLE_7_1.judge(identity("max |(γ, γ′) − book|", err, TABLE_TOL),
                           placed={n: placed[n][:2] for n in BOOK_TABLE})


# --- 图7.6: the neurons' (orientation, amplitude) pattern across the diagram -------------------------

@dataclass
class GridFeatures:
    """图7.6 on a :class:`PhaseRun` of the four points: for every cell (γ, γ′), width and seed the
    fraction of 36 angular bins occupied by the neurons that carry 90% of the amplitude
    (:func:`~companion.core.neurons.occupied_fraction`), shape (G, G′, W, S); the theoretical regime of
    each cell (G, G′) and whether it lies farther than half a grid step from the boundary (G, G′)."""

    gammas: np.ndarray
    gamma_primes: np.ndarray
    widths: np.ndarray
    occupied: np.ndarray
    regimes: np.ndarray
    far: np.ndarray

    def cell_occupied(self, width: int | None = None) -> np.ndarray:
        """Median over seeds of the occupied fraction at ``width`` (default: the largest), (G, G′)."""
        j = len(self.widths) - 1 if width is None else _index(self.widths, width, "width")
        return np.median(self.occupied[:, :, j], axis=-1)


def grid_features(run: PhaseRun, *, mass: float = 0.9, bins: int = 36) -> GridFeatures:
    """Orientation Ω_k = atan2(b_k, w_k) and amplitude A_k = |a_k|‖w_k‖ of every trained net of ``run``
    (1-D input: w_k ∈ R²), summarised as the occupied fraction of ``bins`` angular bins among the neurons
    carrying ``mass`` of Σ A_k (图7.6).  No training: the nets of the phase-diagram run are reused."""
    if run.nets[0].w.shape[-1] != 2:
        raise ValueError("图7.6's orientations need 1-D input with bias (w of shape (K, m, 2)); this run has "
                         f"w of shape {tuple(run.nets[0].w.shape)}")
    g, gp, n_w, n_s = len(run.gammas), len(run.gamma_primes), len(run.widths), run.rd.shape[-1]
    occupied = np.empty((g, gp, n_w, n_s))
    for j, net in enumerate(run.nets):
        a, w = net.a.detach().numpy(), net.w.detach().numpy()  # (K, m), (K, m, 2)
        for k in range(net.n_members):
            i, rest = divmod(k, gp * n_s)
            i2, s = divmod(rest, n_s)
            occupied[i, i2, j, s] = occupied_fraction(orientation(w[k]), amplitude(a[k], w[k]), mass=mass,
                                                      bins=bins)
    _, far, _ = boundary_cells(run)
    regimes = np.array([[regime(float(x), float(y)) for y in run.gamma_primes] for x in run.gammas])
    return GridFeatures(run.gammas, run.gamma_primes, run.widths, occupied, regimes, far)


def plot_grid_features(fig, run: PhaseRun, widths: Sequence[int] | None = None,
                       colors: Sequence[str] = ("#1f77b4", "#d62728", "#e6b800")) -> np.ndarray:
    """图7.6: one small panel per cell (γ to the right, γ′ upwards) with the (orientation, A/max A) scatter of
    the first seed at each of ``widths`` (default: smallest, a middle one, largest), in ``colors``; panels
    of condensed cells framed blue, critical ones grey.  Returns the axes (G′, G), top row = largest γ′."""
    if widths is None:
        ws = run.widths.tolist()
        widths = sorted({ws[0], ws[len(ws) // 2], ws[-1]})
    axes = fig.subplots(len(run.gamma_primes), len(run.gammas), sharex=True, sharey=True, squeeze=False)
    for i, g in enumerate(run.gammas):
        for j, gp in enumerate(run.gamma_primes):
            ax = axes[len(run.gamma_primes) - 1 - j, i]
            for m, color in zip(widths, colors):
                net, k = run.net(float(g), float(gp), int(m))
                a, w = net.a.detach()[k].numpy(), net.w.detach()[k].numpy()
                amp = amplitude(a, w)
                ax.plot(orientation(w), amp / amp.max(), ".", ms=1.5, color=color, label=f"m = {m}")
            where = regime(float(g), float(gp))
            frame = {"condensed": "#1f77b4", "critical": "0.5", "linear": "0.85"}[where]
            for spine in ax.spines.values():
                spine.set_visible(True)
                spine.set_edgecolor(frame)
                spine.set_linewidth(2 if where == "condensed" else 1)
            ax.set_xlim(-math.pi, math.pi)
            ax.set_ylim(0, 1.05)
            ax.set_xticks([])
            ax.set_yticks([])
            ax.grid(False)
            if j == 0:
                ax.set_xlabel(f"γ = {g:g}", fontsize=8)
            if i == 0:
                ax.set_ylabel(f"γ′ = {gp:g}", fontsize=8)
    return axes


GRID_CONDENSATION = ClaimSpec(
    "ch07.grid-condensation", "图7.6",
    "right of the boundary the amplitude-carrying neurons gather on a few orientations, left of it they stay "
    "spread over the circle (every cell not adjacent to the boundary, largest width)")

#: "A few orientations": at most a quarter of the circle's 36 bins; "spread": at least three quarters.
GRID_FEW, GRID_SPREAD = 0.25, 0.75


def check_grid_condensation(feat: GridFeatures) -> Verdict:
    """图7.6 on :func:`grid_features`: at the largest width, each cell's occupied fraction (median over its
    seeds) is < :data:`GRID_FEW` in every condensed cell not adjacent to the boundary (the worst one is
    checked) and > :data:`GRID_SPREAD` in every such linear cell.  A run without such cells on one side
    has no value there ("never": the claim fails)."""
    occ = feat.cell_occupied()
    condensed, linear = feat.far & (feat.regimes == "condensed"), feat.far & (feat.regimes == "linear")
    worst_c = float(occ[condensed].max()) if condensed.any() else float("nan")
    worst_l = float(occ[linear].min()) if linear.any() else float("nan")
    smallest = np.median(feat.occupied[:, :, 0], axis=-1)
    return GRID_CONDENSATION.judge(
        threshold("occupied fraction, worst condensed cell", worst_c, "<", GRID_FEW),
        threshold("occupied fraction, worst linear cell", worst_l, ">", GRID_SPREAD),
        condensed_cells=int(condensed.sum()), linear_cells=int(linear.sum()), width=int(feat.widths[-1]),
        condensed_mean_by_width={int(m): round(float(np.median(feat.occupied[:, :, j], axis=-1)[condensed].mean()), 3)
                                 for j, m in enumerate(feat.widths)} if condensed.any() else "none",
        linear_mean_smallest_width=round(float(smallest[linear].mean()), 3) if linear.any() else "none")


GRID_SHARPENING = ClaimSpec(
    "ch07.grid-sharpening", "图7.6",
    "condensation sharpens as the width m grows: in the condensed cells next to the boundary the mean occupied "
    "fraction is lower at the largest width (2000) than at the smallest (250) — held on 12 of the seeds 0–19 "
    "(the far condensed cells fill 2 of 36 bins at every width, nothing left to sharpen)",
    kind="exploration")


def check_grid_sharpening(feat: GridFeatures) -> Verdict:
    """Exploration, 图7.6's width trend on :func:`grid_features`: the occupied fraction (median over a cell's seeds),
    averaged over the condensed cells adjacent to the boundary, is lower at the largest width than at the smallest.
    The far condensed cells are left out: at every width of the quick grid their amplitude-carrying neurons already
    fill the two bins of the two orientations (2/36 = 0.056), so they cannot sharpen further.  A grid with no
    condensed cell within half a step of the boundary (the full profile's: its cells lie on the critical lines or a
    whole step from them) has nothing to measure: the values are "never" and the exploration fails."""
    med = np.median(feat.occupied, axis=-1)  # (G, G′, W)
    near = (feat.regimes == "condensed") & ~feat.far
    first, last = (float(med[near][:, j].mean()) if near.any() else float("nan") for j in (0, -1))
    return GRID_SHARPENING.judge(
        compare(f"occupied fraction, adjacent condensed cells, m={feat.widths[-1]}", last, "<",
                f"m={feat.widths[0]}", first),
        per_cell={c: [round(float(v), 3) for v in med[i, j][[0, -1]]] for c, (i, j) in
                  zip(_cells(feat, near), zip(*np.nonzero(near)))} or "no adjacent condensed cell")


# --- 图7.6 along the width: sharpening in the condensed regime, constancy on the critical line ----------------

#: Half-width of an orientation window: ±5°, one of the 36 bins of :func:`~companion.core.neurons.occupied_fraction`.
PEAK_HALF_WIDTH = math.pi / 36
#: The condensed fit of the four points has two kinks (ReLU(x − 1/3), ReLU(−x − 1/3)): two orientations.
PEAKS = 2
#: A block whose whole amplitude lies in the windows reads logit(1 − 1e-6) ≈ 13.8, the measurement's ceiling.
SHARE_CLIP = 1e-6


def peak_share(angles: np.ndarray, amp: np.ndarray, *, peaks: int = PEAKS, half: float = PEAK_HALF_WIDTH) -> float:
    """Share of Σ_k A_k carried by the neurons within ±``half`` of the ``peaks`` heaviest orientations (图7.6's scatter
    read as a number): the window centred on a neuron's orientation that holds the most amplitude, then, among
    the neurons it does not cover, the next heaviest window, and so on.  1 when every amplitude-carrying
    neuron sits on ``peaks`` orientations; ≈ peaks·2·half/2π for orientations spread uniformly (plus the excess the
    greedy choice finds in a finite sample)."""
    angles, amp = np.mod(np.asarray(angles, dtype=float).ravel(), 2 * math.pi), np.asarray(amp, dtype=float).ravel()
    if angles.shape != amp.shape or angles.size == 0 or amp.sum() <= 0:
        raise ValueError(f"need as many amplitudes as angles (> 0 of them, total amplitude > 0); got {angles.shape}, "
                         f"{amp.shape}")
    order = np.argsort(angles)
    a, p = angles[order], amp[order] / amp.sum()
    doubled = np.concatenate([a, a + 2 * math.pi])  # windows that wrap around 2π
    lo = np.searchsorted(doubled, a - half + 2 * math.pi)
    hi = np.searchsorted(doubled, a + half + 2 * math.pi, side="right")
    covered, share = np.zeros(a.size, dtype=bool), 0.0
    for _ in range(peaks):
        free = np.where(covered, 0.0, p)
        cum = np.concatenate([[0.0], np.cumsum(np.concatenate([free, free]))])
        mass = cum[hi] - cum[lo]
        i = int(np.argmax(mass))
        share += float(mass[i])
        covered |= np.abs((a - a[i] + math.pi) % (2 * math.pi) - math.pi) <= half
    return share


def condensation_degree(angles: np.ndarray, amp: np.ndarray, block: int, **window) -> float:
    """The degree of condensation of one net: the log-odds log(s/(1 − s)) of its :func:`peak_share` s, averaged over
    consecutive blocks of ``block`` neurons (the last incomplete block left out).

    Nets of different widths are compared at the same number of neurons: the greedy windows find some excess in
    any finite sample, more in a small one, so a width-m net measured whole would look less condensed as m grows
    even where its distribution does not change.  The neurons are drawn i.i.d., so consecutive blocks are random
    subsets; the log-odds read a share of 0.98 → 0.995 (condensed) and one of 0.15 → 0.13 (spread) on one scale."""
    angles, amp = np.asarray(angles, dtype=float).ravel(), np.asarray(amp, dtype=float).ravel()
    if block < 1 or angles.size < block:
        raise ValueError(f"block must lie in [1, {angles.size}] (the number of neurons), got {block}")
    out = []
    for start in range(0, angles.size - block + 1, block):
        s = float(np.clip(peak_share(angles[start:start + block], amp[start:start + block], **window),
                          SHARE_CLIP, 1 - SHARE_CLIP))
        out.append(math.log(s / (1 - s)))
    return float(np.mean(out))


#: The three points read by :func:`width_trend`: the paper's condensed, critical (the mean-field point α = m,
#: β1 = β2 = 1 of the book's 表7.1) and linear points of 图7.4.
TREND_POINTS = {"condensed": (1.75, 0.0), "critical": (1.0, 0.0), "linear": (0.5, 0.0)}


@dataclass
class WidthTrend:
    """图7.6 along the width at three points of the diagram: ``degree[role]`` is the :func:`condensation_degree`
    of every trained net at (γ, γ′) = ``points[role]``, shape (W, S) (widths × initialisations), each measured in
    blocks of ``block`` neurons."""

    points: dict
    widths: np.ndarray
    block: int
    degree: dict

    def median(self, role: str) -> np.ndarray:
        """Median over the initialisations of the degree at every width, (W,)."""
        return np.median(self.degree[role], axis=-1)

    def slope(self, role: str) -> float:
        """Least-squares slope of :meth:`median` against log₂ m: the change of the degree per doubling of the width."""
        return float(np.polyfit(np.log2(self.widths), self.median(role), 1)[0])


def width_trend(run: PhaseRun, *, points: Mapping[str, tuple[float, float]] | None = None,
                block: int | None = None) -> WidthTrend:
    """The :class:`WidthTrend` of the nets of ``run`` (four-point data) at ``points`` (default :data:`TREND_POINTS`),
    every width and initialisation of the run, in blocks of ``block`` neurons (default: the smallest width).  No
    training: the notebook passes the nets of 图7.4 (γ′ = 0, γ = 0.5, 1, 1.75, 8 initialisations per width)."""
    points = dict(TREND_POINTS if points is None else points)
    if run.nets[0].w.shape[-1] != 2:
        raise ValueError(f"图7.6's orientations need 1-D input with bias; this run has w of shape "
                         f"{tuple(run.nets[0].w.shape)}")
    block = int(run.widths.min()) if block is None else int(block)
    n_seeds = run.rd.shape[-1]
    degree = {}
    for role, (g, gp) in points.items():
        values = np.empty((len(run.widths), n_seeds))
        for j, m in enumerate(run.widths.tolist()):
            net, k0 = run.net(g, gp, m)
            a, w = net.a.detach().numpy(), net.w.detach().numpy()
            for s in range(n_seeds):
                values[j, s] = condensation_degree(orientation(w[k0 + s]), amplitude(a[k0 + s], w[k0 + s]), block)
        degree[role] = values
    return WidthTrend(points, run.widths, block, degree)


#: "Grows" / "stays the same": more / less than 0.1 of log-odds per doubling of m (over 250 → 4000, four
#: doublings, a change of the peak share's odds by a factor e^0.4 ≈ 1.5).  Set on the design seeds 100–103, where
#: the condensed point rose by 0.35–0.37 per doubling and the critical and linear ones moved by at most 0.03.
TREND_SLOPE = 0.1

WIDTH_SHARPENING = ClaimSpec(
    "ch07.width-sharpening", "图7.6",
    "in the condensed regime ((γ, γ′) = (1.75, 0)) condensation sharpens as the width m grows: the degree of "
    "condensation rises by more than 0.1 per doubling of m")

WIDTH_CRITICAL = ClaimSpec(
    "ch07.width-critical", "图7.6",
    "on the critical line (the mean-field point (γ, γ′) = (1, 0)) the degree of condensation stays the same as the "
    "width m grows: it changes by less than 0.1 per doubling of m")


def _trend_info(trend: WidthTrend) -> dict:
    return dict(widths=trend.widths, block=trend.block,
                median_by_width={role: [round(float(v), 2) for v in trend.median(role)] for role in trend.points},
                slopes={role: round(trend.slope(role), 3) for role in trend.points})


def check_width_sharpening(trend: WidthTrend) -> Verdict:
    """图7.6, right of the boundary: the slope of the condensed point's degree (median over initialisations) against
    log₂ m exceeds :data:`TREND_SLOPE`.  The measured line shows every point's medians and slopes."""
    g, gp = trend.points["condensed"]
    return WIDTH_SHARPENING.judge(
        threshold(f"degree per doubling of m, (γ, γ′) = ({g:g}, {gp:g})", trend.slope("condensed"), ">", TREND_SLOPE),
        **_trend_info(trend))


def check_width_critical(trend: WidthTrend) -> Verdict:
    """图7.6, on the critical line: |slope| of the critical point's degree against log₂ m below :data:`TREND_SLOPE`."""
    g, gp = trend.points["critical"]
    return WIDTH_CRITICAL.judge(
        threshold(f"|degree per doubling of m|, (γ, γ′) = ({g:g}, {gp:g})", abs(trend.slope("critical")), "<",
                  TREND_SLOPE),
        **_trend_info(trend))


WIDTH_CRITICAL_SLANTED = ClaimSpec(
    "ch07.width-critical-slanted", "图7.6",
    "on the slanted branch of the critical line (γ′ = γ − 1, at (γ, γ′) = (1.5, 0.5)) the degree of condensation "
    "stays the same as the width m grows: it changes by less than 0.1 per doubling of m")

#: The point of the slanted branch γ′ = γ − 1 of the critical line read by :func:`check_width_critical_slanted`.
SLANTED_POINT = (1.5, 0.5)


def check_width_critical_slanted(trend: WidthTrend) -> Verdict:
    """图7.6 on the critical line's other branch: :func:`check_width_critical`'s condition on a :class:`WidthTrend` whose
    "critical" point is :data:`SLANTED_POINT` (a run of its own: the nets of 图7.4 all have γ′ = 0)."""
    g, gp = trend.points["critical"]
    return WIDTH_CRITICAL_SLANTED.judge(
        threshold(f"|degree per doubling of m|, (γ, γ′) = ({g:g}, {gp:g})", abs(trend.slope("critical")), "<",
                  TREND_SLOPE),
        **_trend_info(trend))


def plot_width_trend(axes: Sequence, run: PhaseRun, trend: WidthTrend, widths: Sequence[int] | None = None,
                     colors: Sequence[str] = ("#1f77b4", "#d62728", "#e6b800")) -> None:
    """图7.6 at three points, one panel each (linear, critical, condensed): the (orientation, A/max A) scatter of the
    first initialisation at each of ``widths`` (default: smallest, a middle one, largest) in ``colors``, the
    :func:`condensation_degree` (median over the initialisations) in the legend."""
    if widths is None:
        ws = run.widths.tolist()
        widths = sorted({ws[0], ws[len(ws) // 2], ws[-1]})
    roles = [r for r in ("linear", "critical", "condensed") if r in trend.points]
    if len(axes) != len(roles):
        raise ValueError(f"need one axis per point ({len(roles)}), got {len(axes)}")
    for ax, role in zip(axes, roles):
        g, gp = trend.points[role]
        med = dict(zip(trend.widths.tolist(), trend.median(role)))
        for m, color in zip(widths, colors):
            net, k = run.net(g, gp, int(m))
            a, w = net.a.detach()[k].numpy(), net.w.detach()[k].numpy()
            amp = amplitude(a, w)
            ax.plot(orientation(w), amp / amp.max(), ".", ms=2, color=color,
                    label=f"m = {m}, condensation degree {med[int(m)]:+.2f}")
        ax.set(xlim=(-math.pi, math.pi), ylim=(0, 1.05), xlabel="orientation", ylabel="A / max A",
               title=f"{role} (γ = {g:g}, γ′ = {gp:g})")
        ax.legend(fontsize=6, loc="upper right", markerscale=4, handletextpad=0.2)


# --- 图7.5(b) and 图7.7: the same diagram on real images (the bundled 8×8 digits) -----------------------

DIGITS_SW = ClaimSpec("ch07.digits-sw", "图7.5",
                      "on real images too (8×8 digits, d = 64): S_w < 0 at γ = 0.5, S_w ≈ 0 at γ = 1 and S_w > 0 at "
                      "γ = 1.75 (γ′ = 0), the signs of the four-point data")


def check_digits_sw(run: PhaseRun) -> Verdict:
    """图7.5(b) on :func:`digits_points`: the conditions of :func:`check_sw_signs` (same thresholds) on a run
    whose inputs are images; the measured line adds the input dimension and the steps the nets took."""
    conditions, info = _sw_conditions(run)
    return DIGITS_SW.judge(*conditions, **info, d=int(run.nets[0].d_in), most_steps=int(run.steps.max()))


@dataclass
class DirectionFeatures:
    """图7.7 on a :class:`PhaseRun` in any input dimension d (w_k ∈ R^{d+1}, bias folded in): per γ (at
    γ′ = ``gamma_prime``, first initialisation) and width, arrays (G, W) of

    * ``n_eff`` — the effective number of directions (:func:`~companion.core.neurons.effective_direction_count`)
      of the amplitude-weighted direction Gram Σ_k A_k ŵ_kŵ_kᵀ / Σ_k A_k after training, ``n_eff_init`` the same
      at initialisation: ≈ d+1 for directions spread at random, 1 for one line;
    * ``projection_spread`` — the amplitude-weighted standard deviation of I_ŵ = ŵ·p, p = 𝟏/√(d+1) (§7.3.3),
      the quantity the book plots; random directions give ≈ 1/√(d+1).
    """

    gammas: np.ndarray
    gamma_prime: float
    widths: np.ndarray
    dim: int
    n_eff: np.ndarray
    n_eff_init: np.ndarray
    projection_spread: np.ndarray

    @property
    def extremes(self) -> tuple[float, float]:
        """(linear γ, condensed γ): the smallest and the largest γ of the run."""
        return float(min(self.gammas)), float(max(self.gammas))


def direction_features(run: PhaseRun, gamma_prime: float = 0.0) -> DirectionFeatures:
    """The features of 图7.7 (:class:`DirectionFeatures`) of every γ and width of ``run`` at ``gamma_prime``.
    No training: the nets of the run are read."""
    shape = (len(run.gammas), len(run.widths))
    n_eff, n_eff0, spread = np.empty(shape), np.empty(shape), np.empty(shape)
    for i, g in enumerate(run.gammas.tolist()):
        for j, m in enumerate(run.widths.tolist()):
            net, k = run.net(g, gamma_prime, m)
            a, w = net.a.detach()[k, :m].numpy(), net.w.detach()[k, :m].numpy()  # (m,), (m, d+1)
            amp = amplitude(a, w)
            n_eff[i, j] = effective_direction_count(w, amp)
            w0 = net.w0[k, :m].numpy()
            n_eff0[i, j] = effective_direction_count(w0, amplitude(net.a0[k, :m].numpy(), w0))
            proj = projection(w)
            centre = np.average(proj, weights=amp)
            spread[i, j] = math.sqrt(np.average((proj - centre) ** 2, weights=amp))
    return DirectionFeatures(run.gammas, float(gamma_prime), run.widths, int(run.nets[0].w.shape[-1]), n_eff, n_eff0,
                             spread)


DIGITS_CONDENSATION = ClaimSpec(
    "ch07.digits-condensation", "图7.7",
    "on the digits, the condensed-regime net's amplitude-carrying neurons gather on a few directions (an "
    "effective number of at most 3 of the d+1 = 65), more sharply at the largest width than at the smallest; "
    "the linear-regime net's stay spread (more than (d+1)/2)")

#: "A few directions": an effective number of at most 3 lines; "spread": more than half of the d+1 that
#: directions drawn at random fill.
FEW_DIRECTIONS = 3.0


def check_digits_condensation(feat: DirectionFeatures) -> Verdict:
    """图7.7 on :func:`direction_features`: at the largest width N_eff of the largest γ ≤ :data:`FEW_DIRECTIONS`
    and N_eff of the smallest γ > (d+1)/2; and the largest γ's N_eff smaller at the largest width than at the
    smallest (the book: condensation sharpens as m grows).  The measured line adds the condensed net's N_eff at
    every width and at initialisation, and the spread of I_ŵ of every γ in units of the random-direction value
    1/√(d+1)."""
    lin, con = feat.extremes
    i_l, i_c = _index(feat.gammas, lin, "gamma"), _index(feat.gammas, con, "gamma")
    unit = 1 / math.sqrt(feat.dim)
    return DIGITS_CONDENSATION.judge(
        threshold(f"N_eff γ={con:g}", float(feat.n_eff[i_c, -1]), "<=", FEW_DIRECTIONS),
        compare(f"N_eff γ={con:g}, m={feat.widths[-1]}", float(feat.n_eff[i_c, -1]), "<",
                f"N_eff γ={con:g}, m={feat.widths[0]}", float(feat.n_eff[i_c, 0])),
        threshold(f"N_eff γ={lin:g}", float(feat.n_eff[i_l, -1]), ">", feat.dim / 2),
        width=int(feat.widths[-1]), dim=feat.dim,
        n_eff_condensed_by_width={int(m): round(float(v), 2) for m, v in zip(feat.widths, feat.n_eff[i_c])},
        n_eff_condensed_at_init=round(float(feat.n_eff_init[i_c, -1]), 1),
        I_spread_over_random={f"γ={g:g}": round(float(v / unit), 2) for g, v in
                              zip(feat.gammas.tolist(), feat.projection_spread[:, -1])})


def plot_projection_panels(axes: Sequence, run: PhaseRun, gamma_prime: float = 0.0,
                           widths: Sequence[int] | None = None,
                           colors: Sequence[str] = ("#1f77b4", "#d62728", "#e6b800")) -> None:
    """图7.7: one panel per γ of ``run`` (at ``gamma_prime``) with every neuron's (I_ŵ, A_k / max A) at each of
    ``widths`` (default: smallest, a middle one, largest), in ``colors`` (the book's blue, red, yellow)."""
    if widths is None:
        ws = run.widths.tolist()
        widths = sorted({ws[0], ws[len(ws) // 2], ws[-1]})
    if len(axes) != len(run.gammas):
        raise ValueError(f"need one axis per γ ({len(run.gammas)}), got {len(axes)}")
    for ax, g in zip(axes, run.gammas.tolist()):
        for m, color in zip(widths, colors):
            net, k = run.net(g, gamma_prime, int(m))
            a, w = net.a.detach()[k, :m].numpy(), net.w.detach()[k, :m].numpy()
            amp = amplitude(a, w)
            ax.plot(projection(w), amp / amp.max(), ".", ms=2, color=color, label=f"m = {m}")
        ax.set(xlabel="I_ŵ = ŵ·p", ylabel="A / max A", title=f"γ = {g:g} ({regime(g, gamma_prime)})", ylim=(0, 1.05))
