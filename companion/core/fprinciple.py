"""The frequency principle (频率原则) as an experiment: fit a 1-D target and watch Δ_F(k) (book chapters 4 and 6).

A deep network trained by gradient descent fits its target from low to high frequency.  This module holds
the one experiment that chapters 4 (the phenomenon) and 6 (its mechanism) both run, and the measures their
claims share:

* :func:`run_fprinciple` — train the members of a :class:`~companion.core.nets.BatchedMLP` on
  Σ A_j sin(k_j x) sampled on [−π, π), or on the periodic three-level step round(sin x) over whole periods,
  recording the output on the training grid and a dense test grid; members may differ in init std,
  activation width and ASI.  The result records Δ_F(k) = |ĥ_k − f̂_k| / |f̂_k| at the tracked peaks (the
  book's relative error, 图4.7; :func:`companion.core.spectral.delta_f`) and the first step at which each
  peak falls below 0.1.
* :func:`median_step`, :func:`order_conditions`, :func:`spread_ratio` — "converges in the order 1, 3, 5"
  and "no order: all peaks within a factor 2 of each other" as conditions with margins
  (:mod:`companion.kit.claims`); a peak that never converged is "never", not a number.
* :func:`fitting_time`, :func:`time_spread` — each peak's integrated error ∫ Δ_F(k, t) dt (its fitting time)
  and their max/min: "no frequency order" read from the whole Δ_F curves rather than from one crossing;
  :func:`plot_fitting_times` draws them.
* :func:`fit_target` and :func:`draw_fit` — one network on a chosen target, the compute and draw
  functions of the chapters' explorers; :func:`plot_spectrum` draws |f̂_k| and |ĥ_k|.

The losses are (6.2) ``"mse"`` and (6.3) ``"mse+grad"`` of :func:`companion.core.train.train`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from torch import Tensor, nn

from companion.kit.bounds import OPTIONAL_SEED, Bound, Bounds, check_numbers, integer, real, whole
from companion.kit.cache import cached
from companion.kit.claims import Condition, compare
from companion.kit.plots import PALETTE, plot_delta_f, plot_fit
from companion.kit.seeds import active_seed, generator
from companion.core.nets import ACTIVATIONS, BatchedMLP, MemberASI
from companion.core.spectral import delta_f, dft, first_step_below, uniform_grid
from companion.core.train import LOSSES, OPTIMIZERS, train


def sum_of_sines(x: np.ndarray, ks: Sequence[float], amps: Sequence[float]) -> np.ndarray:
    """f(x) = Σ_j A_j sin(k_j x)."""
    return sum(a * np.sin(k * x) for k, a in zip(ks, amps))


def three_level_step(x: np.ndarray) -> np.ndarray:
    """f(x) = round(sin x): the 2π-periodic step function with the three values −1, 0, 1 of 图4.3.

    Its Fourier series has only the odd harmonics that are not multiples of 3 (1, 5, 7, 11, 13, …), with
    amplitudes (2√3/π)/k, so the peaks of its spectrum fall with frequency (图4.6).
    """
    return np.round(np.sin(x))


def sum_of_sines_derivative(x: np.ndarray, ks: Sequence[float], amps: Sequence[float]) -> np.ndarray:
    """f′(x) = Σ_j A_j k_j cos(k_j x) — the target gradient in the loss (6.3)."""
    return sum(a * k * np.cos(k * x) for k, a in zip(ks, amps))


def per_member(value: float | Sequence[float], members: int, name: str) -> list[float]:
    """One value per member: a scalar repeated, or a sequence of exactly ``members`` values."""
    values = [float(value)] * members if isinstance(value, (int, float)) else [float(v) for v in value]
    if len(values) != members:
        raise ValueError(f"{name} has {len(values)} values but there are {members} members")
    return values


def as_tensor(a: np.ndarray) -> Tensor:
    """A float32 tensor of an array."""
    return torch.as_tensor(np.asarray(a), dtype=torch.float32)


# ----------------------------------------------------------------------------------------------
# 1-D fits of a sum of sines or of a step function: 图4.2, 4.3, 4.6, 4.7, 4.9, 4.10, 6.2, 6.3, 6.4
# ----------------------------------------------------------------------------------------------
TARGETS = ("sines", "step")


@dataclass(frozen=True)
class FPConfig:
    """One batched fit of Σ A_j sin(k_j x) sampled at ``n_train`` points of [−π, π).

    ``init_std`` and ``a`` (Ricker width / sin rate) take one value, or one per member;
    ``init_std=None`` means m^{−1/2} with m the first hidden width (the authors' choice).  ``asi`` is one
    flag for all members or one per member (:class:`~companion.core.nets.MemberASI`).

    ``target="step"`` fits :func:`three_level_step` instead (图4.3); then ``ks`` names the harmonics whose
    peaks are tracked and ``amps`` is not used.  ``periods`` widens the domain to [−periods·π, periods·π),
    whole periods of the target, so harmonic k lands exactly in DFT bin periods·k (:attr:`bins`).
    ``half_width`` sets any other domain [−half_width, half_width) instead — the authors' demo samples
    [−10, 10) — and frequency k is then tracked in the nearest DFT bin, round(k·half_width/π).

    The output is recorded at step 0, every ``record_every`` steps and at the end, and in addition at **every** step
    up to ``fine_until``: a run whose peaks converge within a few dozen steps (a narrow Ricker activation, a large
    initialisation) needs that early stretch step by step, or its first-convergence steps — and the ratio of
    :func:`spread_ratio` — are set by the recording grid rather than measured (:attr:`record_steps`).
    """

    ks: tuple[int, ...] = (1, 3, 5)
    amps: tuple[float, ...] = (1.0, 1.0, 1.0)
    n_train: int = 128
    n_test: int = 1000
    hidden: tuple[int, ...] = (100, 100)
    act: str = "tanh"
    a: float | tuple[float, ...] = 1.0
    init_std: float | tuple[float, ...] | None = None
    asi: bool | tuple[bool, ...] = False
    loss: str = "mse"
    optimizer: str = "adam"
    lr: float = 1e-3
    steps: int = 2000
    record_every: int = 10
    members: int = 1
    target: str = "sines"
    periods: int = 1
    half_width: float | None = None
    fine_until: int = 0

    @property
    def record_steps(self) -> list[int]:
        """The recorded steps: 0 … ``fine_until`` one by one, then every ``record_every`` steps, and the last step."""
        fine = range(min(self.fine_until, self.steps) + 1)
        return sorted({*fine, *range(0, self.steps, self.record_every), self.steps})

    @property
    def half(self) -> float:
        """Half the length of the sampling domain [−half, half)."""
        return self.periods * math.pi if self.half_width is None else float(self.half_width)

    @property
    def bins(self) -> tuple[int, ...]:
        """The DFT bins of the tracked frequencies on the sampling grid: periods·k for each k in ``ks`` (or the
        nearest bin, round(k·half_width/π), on a domain of another length)."""
        if self.half_width is None:
            return tuple(self.periods * k for k in self.ks)
        return tuple(round(k * self.half_width / math.pi) for k in self.ks)

    def target_values(self, x: np.ndarray) -> np.ndarray:
        """The target function at ``x``."""
        return three_level_step(x) if self.target == "step" else sum_of_sines(x, self.ks, self.amps)

    def validate(self) -> None:
        if self.target not in TARGETS:
            raise ValueError(f"unknown target {self.target!r}; choose one of {', '.join(TARGETS)}")
        if not self.ks or (self.target == "sines" and len(self.ks) != len(self.amps)):
            raise ValueError(f"ks {self.ks} and amps {self.amps} must be non-empty and of equal length")
        if self.periods < 1:
            raise ValueError(f"periods must be a whole number ≥ 1, got {self.periods}")
        if self.half_width is not None and (not self.half_width > 0 or self.periods != 1):
            raise ValueError(f"half_width must be positive and replaces periods (leave periods=1); got "
                             f"half_width={self.half_width}, periods={self.periods}")
        if self.target == "step" and self.loss != "mse":
            raise ValueError("the step target has no derivative at its jumps: use loss='mse'")
        if any(k < 1 for k in self.ks) or max(self.bins) >= self.n_train // 2:
            raise ValueError(f"frequencies must lie in [1, n_train/2) = [1, {self.n_train // 2}) once multiplied "
                             f"by periods={self.periods}; got {self.ks}")
        if self.act not in ACTIVATIONS:
            raise ValueError(f"unknown activation {self.act!r}; choose one of {', '.join(ACTIVATIONS)}")
        if self.loss not in LOSSES:
            raise ValueError(f"unknown loss {self.loss!r}; choose one of {', '.join(LOSSES)}")
        if not isinstance(self.asi, bool) and len(self.asi) != self.members:
            raise ValueError(f"asi has {len(self.asi)} flags but there are {self.members} members")
        if self.members < 1 or self.steps < 1 or self.n_train < 4:
            raise ValueError(f"members, steps must be ≥ 1 and n_train ≥ 4; got {self.members}, {self.steps}, "
                             f"{self.n_train}")
        if self.record_every < 1 or self.fine_until < 0:
            raise ValueError(f"record_every must be ≥ 1 and fine_until ≥ 0; got {self.record_every}, "
                             f"{self.fine_until}")


@dataclass
class FPResult:
    config: FPConfig
    x_train: np.ndarray             # (n,)
    f_train: np.ndarray             # (n,)
    x_test: np.ndarray              # (n_test,)
    f_test: np.ndarray              # (n_test,)
    steps: np.ndarray               # (T,)
    train_loss: np.ndarray          # (T, K)
    out_train: np.ndarray           # (T, K, n)
    out_test: np.ndarray            # (T, K, n_test)
    deltas: np.ndarray = field(init=False)   # (T, K, len(ks)) — Δ_F(k) on the training grid
    first: np.ndarray = field(init=False)    # (K, len(ks)) — first step with Δ_F(k) < 0.1

    def __post_init__(self) -> None:
        self.deltas = delta_f(self.out_train, self.f_train, self.config.bins)
        self.first = first_step_below(self.deltas, self.steps, 0.1)

    @property
    def test_mse(self) -> np.ndarray:
        """(K,) final mean squared error on the dense test grid."""
        return ((self.out_test[-1] - self.f_test) ** 2).mean(-1)

    def high_frequency_energy(self) -> np.ndarray:
        """(K,) share of the final output's spectral energy above the training grid's Nyquist frequency."""
        power = np.abs(dft(self.out_test[-1])) ** 2
        nyquist = self.config.n_train // 2          # in DFT bins of the domain, whatever its number of periods
        return power[:, nyquist + 1:].sum(-1) / power[:, 1:].sum(-1)


@cached
def run_fprinciple(config: FPConfig, seed: int) -> FPResult:
    """Train ``config.members`` networks at once on the config's target and record Δ_F(k) (图4.3, 4.6, 4.7)."""
    config.validate()
    half = config.half
    x = uniform_grid(config.n_train, -half, half)
    x_test = uniform_grid(config.n_test, -half, half)
    f, f_test = config.target_values(x), config.target_values(x_test)
    width = config.hidden[0]
    std = width ** -0.5 if config.init_std is None else config.init_std
    stds = per_member(std, config.members, "init_std")
    a = torch.tensor(per_member(config.a, config.members, "a"))
    mixed = not isinstance(config.asi, bool)
    model: nn.Module = BatchedMLP([1, *config.hidden, 1], config.members, config.act, init_std=torch.tensor(stds),
                                  a=a, asi=False if mixed else config.asi, generator=generator(seed))
    if mixed:
        model = MemberASI(model, config.asi)
    X, Y = as_tensor(x)[:, None], as_tensor(f)[:, None]
    dy = as_tensor(sum_of_sines_derivative(x, config.ks, config.amps))[:, None] if config.loss == "mse+grad" else None
    grid = torch.cat([X, as_tensor(x_test)[:, None]])
    hist = train(model, X, Y, steps=config.steps, lr=config.lr, optimizer=config.optimizer, loss=config.loss,
                 dy=dy, record_at=config.record_steps, x_eval=grid, keep_outputs=True, desc="F-principle")
    out = hist.outputs[..., 0]  # (T, K, n + n_test)
    n = config.n_train
    return FPResult(config, x, f, x_test, f_test, hist.steps, hist.train_loss, out[..., :n], out[..., n:])


# ----------------------------------------------------------------------------------------------
# Measures the claims share: first-convergence steps, their order, their spread
# ----------------------------------------------------------------------------------------------
def median_step(first: np.ndarray) -> np.ndarray:
    """Median over members (axis 0) of first-convergence steps, a peak that never converged (NaN) counting as
    later than every step: the median is NaN ("never") only when at least half of the members never converged.
    """
    first = np.atleast_2d(np.asarray(first, dtype=float))
    ordered = np.sort(np.where(np.isnan(first), np.inf, first), axis=0)   # never → last
    n = len(ordered)
    median = ordered[(n - 1) // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2
    return np.where(np.isinf(median), np.nan, median)


def midway_step(result: FPResult, peak: int = 1) -> int:
    """Half the earliest step at which ``peak`` converged in any member (half the run if it never did)."""
    column = result.first[:, peak]
    done = column[~np.isnan(column)]
    return int(done.min()) // 2 if done.size else int(result.steps[-1]) // 2


def nearest_index(steps: np.ndarray, step: float) -> int:
    """Index of the recorded step closest to ``step``."""
    return int(np.argmin(np.abs(np.asarray(steps) - step)))


def order_conditions(t: np.ndarray, label: str = "") -> list[Condition]:
    """t1 < t3 < t5 for three first-convergence steps; a peak that never converged fails the order."""
    t1, t3, t5 = (float(v) for v in t)
    return [compare(f"t1{label}", t1, "<", f"t3{label}", t3), compare(f"t3{label}", t3, "<", f"t5{label}", t5)]


def spread_ratio(t: np.ndarray, steps: np.ndarray | None = None) -> float:
    """max/min of first-convergence steps: "no frequency order" is a ratio ≤ 2 (图4.9, 图6.2).

    The ratio is NaN — "never" or "not measured", a value that fails a condition (:mod:`companion.kit.claims`) —
    when any peak never converged, or when the earliest one had converged at step 0, before any training: a run
    whose peaks are fitted from the start shows neither an order nor its absence.

    With the recorded ``steps`` the ratio is the largest one the records allow: a peak first seen below the
    threshold at recorded step t converged at some step after the previous record t⁻, so the denominator is the
    earliest peak's t⁻ + 1.  Recorded at every step (t⁻ + 1 = t) that is the measured ratio; on a coarse grid it
    is an upper bound, so a peak converged somewhere inside the first interval cannot pass "≤ 2" by the grid alone
    (10 steps apart, peaks seen at 10, 10, 20 give 20, not 2).
    """
    t = np.asarray(t, dtype=float)
    if np.isnan(t).any() or t.min() <= 0:
        return float("nan")
    earliest = t.min()
    if steps is not None:
        steps = np.asarray(steps, dtype=float)
        before = steps[steps < earliest]
        earliest = before.max() + 1.0 if before.size else earliest
    return float(t.max() / earliest)


def fitting_time(result: FPResult) -> np.ndarray:
    """(K, len(ks)) the integrated error τ_k = ∫₀ᵀ min(Δ_F(k, t), 1) dt of each member and tracked peak, in steps.

    The area under a curve of 图4.7's relative error Δ_F(k) (clipped at 1, "not fitted at all", so that a large
    initial output counts as missing rather than as many times missing), by the trapezoid rule over the recorded
    steps: for an error that falls like e^{−t/τ} it is τ, the peak's fitting time.  Unlike the first step below a
    level it reads the whole curve, so peaks fitted within a few steps of each other are compared by their curves
    and not by one crossing a step or two apart (图4.9, 图4.10, 图6.2, 图6.3).  Record the early steps one by one
    (``FPConfig.fine_until``) where the peaks converge within a few dozen steps."""
    return np.trapezoid(np.minimum(result.deltas, 1.0), result.steps.astype(float), axis=0)


def time_spread(tau: np.ndarray) -> float:
    """max/min of one member's fitting times τ_k (:func:`fitting_time`): near 1 when every frequency is fitted at
    the same pace ("no frequency order"), ≫ 1 when the high ones wait for the low ones.  NaN (a failing value)
    when a time is not a positive finite number."""
    tau = np.asarray(tau, dtype=float)
    if not np.isfinite(tau).all() or tau.min() <= 0:
        return float("nan")
    return float(tau.max() / tau.min())


def plot_fitting_times(ax: Axes, result: FPResult, members: Sequence[int], names: Sequence[str], *,
                       title: str = "fitting times τ_k") -> None:
    """The fitting time τ_k (:func:`fitting_time`) of each tracked frequency k, one line per chosen member, on a log
    scale: a flat line is "no frequency order", a steep rise the frequency principle (图4.9, 4.10, 6.2, 6.3)."""
    tau = fitting_time(result)
    for m, name in zip(members, names):
        ax.semilogy(result.config.ks, tau[m], "o-", label=name)
    ax.set(xlabel="frequency k", ylabel="τ_k (steps)", title=title, xticks=list(result.config.ks))
    ax.legend()


def plot_spectrum(ax: Axes, target: np.ndarray, output: np.ndarray | None = None, *, k_max: int = 12,
                  title: str = "spectrum", periods: int = 1) -> None:
    """|f̂_k| of the target and |ĥ_k| of the output for k = 0 … k_max (uniform-grid samples).

    With samples of ``periods`` periods of a 2π-periodic function, DFT bin b is frequency b/periods: the axis
    shows that frequency, and k_max is in its units."""
    bins = np.arange(k_max * periods + 1)
    ks = bins / periods
    ax.plot(ks, np.abs(dft(target))[bins], "o--" if periods == 1 else "--", color="0.35", ms=3, label="target |f̂_k|")
    if output is not None:
        ax.plot(ks, np.abs(dft(output))[bins], "s-" if periods == 1 else "-", color=PALETTE[1], ms=3,
                label="network |ĥ_k|")
    ax.set_xlabel("frequency k")
    ax.set_title(title)
    ax.legend()


# ----------------------------------------------------------------------------------------------
# One network on a chosen target: the chapters' explorers
# ----------------------------------------------------------------------------------------------
#: fit_target's grid: 128 points of [−π, π), so a frequency lies in [1, 63] (below the Nyquist bin 64).
FIT_POINTS = 128
#: The bounds of :func:`fit_target`'s arguments: the sliders of the chapter-4 and chapter-6 explorers that call it
#: (their union); the frequencies below the grid's Nyquist bin, amplitudes within ±100.
FIT_BOUNDS = Bounds(ks=whole(1, FIT_POINTS // 2 - 1), amps=real(-100.0, 100.0), width=integer(1, 256),
                    depth=integer(1, 4), init_std=real(0.01, 3.0, optional=True), a=real(0.05, 3.0),
                    lr=real(1e-4, 0.1), steps=integer(1, 4000), seed=OPTIONAL_SEED)


def parse_numbers(text: str, name: str, cast: Callable[[str], float] = float, bound: Bound | None = None) -> tuple:
    """'1, 3, 5' → (1, 3, 5); a ValueError names the field and the bad text (and a number out of ``bound``:
    by default finite, within ±10⁶, whole where ``cast`` is int).  See :func:`companion.kit.bounds.check_numbers`."""
    if bound is None:
        bound = (whole if cast is int else real)(-1e6, 1e6)
    return check_numbers(text, name, bound)


def fit_target(ks: str, amps: str, *, width: int = 64, depth: int = 2, init_std: float | None = None,
               act: str = "tanh", a: float = 1.0, asi: bool = False, loss: str = "mse", optimizer: str = "adam",
               lr: float = 2e-3, steps: int = 800, seed: int | None = None) -> FPResult:
    """One network 1-width-…-width-1 (``depth`` hidden layers) fitted to Σ A_j sin(k_j x) at 128 points of
    [−π, π), the frequencies and amplitudes given as text ('1, 3, 5'); cached.  ``seed`` defaults to the active
    seed (:func:`companion.kit.seeds.active_seed`).  A bad value raises a ValueError that names it: each number
    must lie within :data:`FIT_BOUNDS`, and a run whose output or loss is not finite (diverged) is an error,
    not a result."""
    k_values = parse_numbers(ks, "frequencies", int, FIT_BOUNDS["ks"])
    amp_values = parse_numbers(amps, "amplitudes", float, FIT_BOUNDS["amps"])
    if len(amp_values) != len(k_values):
        raise ValueError(f"give one amplitude per frequency: {len(k_values)} frequencies, {len(amp_values)} amplitudes")
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"unknown optimizer {optimizer!r}; choose one of {', '.join(OPTIMIZERS)}")
    if not isinstance(asi, bool):
        raise ValueError(f"asi={asi!r} must be True or False")
    FIT_BOUNDS.check(width=width, depth=depth, init_std=init_std, a=a, lr=lr, steps=steps, seed=seed)
    config = FPConfig(ks=k_values, amps=amp_values, n_train=FIT_POINTS, n_test=512, hidden=(width,) * depth, act=act,
                      a=a, init_std=init_std, asi=asi, loss=loss, optimizer=optimizer, lr=lr, steps=steps,
                      record_every=max(steps // 100, 1))
    result = run_fprinciple(config, active_seed() if seed is None else seed)
    if not all(np.isfinite(v).all() for v in (result.train_loss, result.out_train, result.out_test)):
        raise ValueError(f"training diverged (the loss or the output is not finite) with optimizer={optimizer!r}, "
                         f"lr={lr:g}: lower the learning rate")
    return result


def draw_fit(result: FPResult, fig: Figure) -> None:
    """The explorers' figure: the final fit, its spectrum and the Δ_F(k) heat map of 图4.7 (member 0)."""
    ax1, ax2, ax3 = fig.subplots(1, 3)
    plot_fit(ax1, result.x_test, result.f_test, result.out_test[-1, 0], x_train=result.x_train,
             y_train=result.f_train, title=f"after {result.steps[-1]} steps")
    plot_spectrum(ax2, result.f_train, result.out_train[-1, 0], k_max=max(result.config.ks) + 4)
    plot_delta_f(ax3, result.steps, result.deltas[:, 0], result.config.ks)
