"""Experiments of the frequency principle (频率原则), book chapters 4–6.

Each ``run_*`` function is one of the book's experiments, returns a small result dataclass, and
is cached on disk (:mod:`companion.kit.cache`), so the notebook, the explorer and the tests share one
implementation:

* :func:`run_fprinciple` — fit Σ A_j sin(k_j x) on [−π, π) and track Δ_F(k) (图4.2, 4.7, 6.2–6.4), or the
  periodic three-level step round(sin x) over several periods (图4.3, 4.6); members of a
  :class:`~companion.core.nets.BatchedMLP` may differ in init std and activation width.
* :func:`run_image` — a grey image as a function of pixel coordinates, trained on odd columns
  (图4.4, 4.11).
* :func:`run_early_stopping` — noisy samples of sin x (图4.12).
* :func:`run_parity` — the parity function on {−1, 1}^d (图4.13(b), eq. 4.4).
* :func:`run_multiscale` — plain net vs multiscale DNN (5.2) vs Fourier features (5.11), chapter 5.

The claims of chapters 4–6 (``check_*`` against their :class:`~companion.kit.claims.ClaimSpec`), the
instructor's explorer (:func:`make_explorer`: change the target's frequencies and amplitudes, the
initialisation std, the activation and its width a, the width, the learning rate, ASI and the loss, and
watch the output, its spectrum and the Δ_F(k) heat map of 图4.7 change) and the checks of the chapter's
exercises live here too.
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

from companion.kit.cache import cached
from companion.kit.claims import ClaimSpec, Condition, Verdict, compare, threshold
from companion.kit import widgets as w
from companion.kit.exercises import feedback
from companion.kit.plots import PALETTE, plot_delta_f, plot_fit
from companion.kit.seeds import active_seed, generator, numpy_rng
from companion.core.nets import ACTIVATIONS, BatchedMLP, FourierFeatureNet, MemberASI, MscaleDNN
from companion.core.spectral import delta_f, dft, first_step_below, fourier_part, psnr, uniform_grid
from companion.core.train import LOSSES, train


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


def _per_member(value: float | Sequence[float], members: int, name: str) -> list[float]:
    values = [float(value)] * members if isinstance(value, (int, float)) else [float(v) for v in value]
    if len(values) != members:
        raise ValueError(f"{name} has {len(values)} values but there are {members} members")
    return values


def _tensor(a: np.ndarray) -> Tensor:
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

    @property
    def bins(self) -> tuple[int, ...]:
        """The DFT bins of the tracked frequencies on the sampling grid: periods·k for each k in ``ks``."""
        return tuple(self.periods * k for k in self.ks)

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
    half = config.periods * math.pi
    x = uniform_grid(config.n_train, -half, half)
    x_test = uniform_grid(config.n_test, -half, half)
    f, f_test = config.target_values(x), config.target_values(x_test)
    width = config.hidden[0]
    std = width ** -0.5 if config.init_std is None else config.init_std
    stds = _per_member(std, config.members, "init_std")
    a = torch.tensor(_per_member(config.a, config.members, "a"))
    mixed = not isinstance(config.asi, bool)
    model: nn.Module = BatchedMLP([1, *config.hidden, 1], config.members, config.act, init_std=torch.tensor(stds),
                                  a=a, asi=False if mixed else config.asi, generator=generator(seed))
    if mixed:
        model = MemberASI(model, config.asi)
    X, Y = _tensor(x)[:, None], _tensor(f)[:, None]
    dy = _tensor(sum_of_sines_derivative(x, config.ks, config.amps))[:, None] if config.loss == "mse+grad" else None
    grid = torch.cat([X, _tensor(x_test)[:, None]])
    hist = train(model, X, Y, steps=config.steps, lr=config.lr, optimizer=config.optimizer, loss=config.loss,
                 dy=dy, record_every=config.record_every, x_eval=grid, keep_outputs=True, desc="F-principle")
    out = hist.outputs[..., 0]  # (T, K, n + n_test)
    n = config.n_train
    return FPResult(config, x, f, x_test, f_test, hist.steps, hist.train_loss, out[..., :n], out[..., n:])


# ----------------------------------------------------------------------------------------------
# Nets of several sizes interpolate smoothly: 图4.1
# ----------------------------------------------------------------------------------------------
@dataclass
class SizesResult:
    """图4.1: one tanh net per hidden-layer list in ``sizes``, each fitted to the same ``n_train`` samples of
    sin x; ``out_test`` (S, n_test) is each net's final output on a dense grid spanning the samples."""

    sizes: tuple[tuple[int, ...], ...]
    init_std: float | None
    x_train: np.ndarray    # (n,)
    f_train: np.ndarray    # (n,)
    x_test: np.ndarray     # (n_test,)
    f_test: np.ndarray     # (n_test,)
    out_train: np.ndarray  # (S, n)
    out_test: np.ndarray   # (S, n_test)

    def train_rms(self) -> np.ndarray:
        """(S,) root-mean-square error at the training samples."""
        return np.sqrt(((self.out_train - self.f_train) ** 2).mean(-1))

    def variation_ratio(self) -> np.ndarray:
        """(S,) total variation of each fit over that of sin x on the same grid (1: no extra wiggles)."""
        return np.abs(np.diff(self.out_test, axis=-1)).sum(-1) / np.abs(np.diff(self.f_test)).sum()


@cached
def run_sizes(sizes: Sequence[Sequence[int]] = ((20,), (100, 100), (100,) * 7), *, n_train: int = 10,
              n_test: int = 1000, init_std: float | None = None, optimizer: str = "lbfgs", lr: float = 1.0,
              steps: int = 200, seed: int = 0, progress: bool = True) -> SizesResult:
    """Fit ``n_train`` evenly spaced samples of sin x on [−π, π] with one tanh net per entry of ``sizes``
    (hidden widths), full batch; ``init_std=None`` draws each net's weights with std m^{−1/2}, m its first
    hidden width (the authors' choice).  The nets are drawn one after the other from one seeded generator.

    The default optimiser is L-BFGS: on ten points it trains every size to convergence in a few seconds,
    where full-batch Adam (the book's) leaves the small and the deep nets short of fitting on some seeds
    within a CPU budget (measured: training RMS error up to 0.14 after 5000 steps at lr 1e-3)."""
    sizes = tuple(tuple(int(m) for m in size) for size in sizes)
    if not sizes or any(not size or min(size) < 1 for size in sizes):
        raise ValueError(f"give at least one non-empty list of positive hidden widths; got {sizes}")
    if n_train < 2 or n_test < 2:
        raise ValueError(f"need n_train ≥ 2 and n_test ≥ 2; got {n_train}, {n_test}")
    x = np.linspace(-math.pi, math.pi, n_train)
    x_test = np.linspace(-math.pi, math.pi, n_test)
    g = generator(seed)
    X, Y, grid = _tensor(x)[:, None], _tensor(np.sin(x))[:, None], _tensor(x_test)[:, None]
    out_train, out_test = [], []
    for size in sizes:
        std = size[0] ** -0.5 if init_std is None else init_std
        model = BatchedMLP([1, *size, 1], 1, "tanh", init_std=std, generator=g)
        train(model, X, Y, steps=steps, lr=lr, optimizer=optimizer, record_every=steps, progress=progress,
              desc=f"sizes {size}")
        with torch.no_grad():
            out_train.append(model(X)[0, :, 0].numpy())
            out_test.append(model(grid)[0, :, 0].numpy())
    return SizesResult(sizes, init_std, x, np.sin(x), x_test, np.sin(x_test), np.stack(out_train),
                       np.stack(out_test))


# ----------------------------------------------------------------------------------------------
# An image as a function of pixel coordinates: 图4.4, 4.11
# ----------------------------------------------------------------------------------------------
def grey_image(shape: tuple[int, int] = (32, 48)) -> np.ndarray:
    """scikit-image's bundled cat photograph (chelsea), grey, resized to ``shape``, values in [0, 1]."""
    from skimage import color, data, transform

    if min(shape) < 4:
        raise ValueError(f"image shape must be at least 4×4, got {shape}")
    return transform.resize(color.rgb2gray(data.chelsea()), shape, anti_aliasing=True)


@dataclass
class ImageResult:
    image: np.ndarray        # (H, W)
    init_stds: tuple[float, ...]
    steps: np.ndarray        # (T,)
    snapshots: np.ndarray    # (T, K, H, W) network output on every pixel
    psnr_train: np.ndarray   # (T, K) on odd columns (training pixels)
    psnr_test: np.ndarray    # (T, K) on even columns (never seen)

    @property
    def baseline_psnr(self) -> float:
        """PSNR on the unseen columns of the best constant guess (the training columns' mean grey)."""
        return psnr(np.full_like(self.image[:, 0::2], self.image[:, 1::2].mean()), self.image[:, 0::2])


@cached
def run_image(shape: tuple[int, int], init_stds: tuple[float, ...], hidden: tuple[int, ...], steps: int,
              lr: float, record_every: int, seed: int) -> ImageResult:
    """Fit the grey value at (row, column) from the odd columns only (图4.4), one member per init std."""
    image = grey_image(shape)
    height, width = shape
    rows, cols = np.meshgrid(np.arange(height), np.arange(width), indexing="ij")
    coords = np.stack([rows, cols], -1).reshape(-1, 2) / max(height, width) * 2.0 - 1.0   # (H·W, 2) in [−1, 1]
    values = image.reshape(-1, 1)
    train_mask = (cols % 2 == 1).reshape(-1)                       # odd columns (1-based: even)
    model = BatchedMLP([2, *hidden, 1], len(init_stds), "tanh", init_std=torch.tensor(init_stds),
                       generator=generator(seed))
    hist = train(model, _tensor(coords[train_mask]), _tensor(values[train_mask]), steps=steps, lr=lr,
                 record_every=record_every, x_eval=_tensor(coords), keep_outputs=True, desc="image")
    snaps = hist.outputs[..., 0].reshape(len(hist.steps), len(init_stds), height, width)
    train_cols, test_cols = snaps[..., 1::2], snaps[..., 0::2]
    p_train = np.array([[psnr(s, image[:, 1::2]) for s in t] for t in train_cols])
    p_test = np.array([[psnr(s, image[:, 0::2]) for s in t] for t in test_cols])
    return ImageResult(image, tuple(init_stds), hist.steps, snaps, p_train, p_test)


# ----------------------------------------------------------------------------------------------
# Early stopping on noisy data: 图4.12
# ----------------------------------------------------------------------------------------------
@dataclass
class EarlyStopResult:
    x_train: np.ndarray     # (n,)
    y_train: np.ndarray     # (n,) noisy labels
    x_test: np.ndarray      # (n_test,)
    f_test: np.ndarray      # (n_test,) clean target sin x
    steps: np.ndarray       # (T,)
    train_loss: np.ndarray  # (T, K)
    test_loss: np.ndarray   # (T, K) MSE against the clean target on a dense grid
    out_test: np.ndarray    # (T, K, n_test)


@cached
def run_early_stopping(n: int, noise: float, hidden: tuple[int, ...], steps: int, lr: float, members: int,
                       record_every: int, seed: int) -> EarlyStopResult:
    """Fit sin x + noise·N(0, 1) sampled at n random points of [−10, 10] (图4.12)."""
    rng = numpy_rng(seed)
    x = np.sort(rng.uniform(-10, 10, n))
    y = np.sin(x) + noise * rng.standard_normal(n)
    x_test = np.linspace(-10, 10, 1000)
    f_test = np.sin(x_test)
    model = BatchedMLP([1, *hidden, 1], members, "tanh", init_std=hidden[0] ** -0.5, generator=generator(seed))
    hist = train(model, _tensor(x)[:, None], _tensor(y)[:, None], steps=steps, lr=lr,
                 record_every=record_every, x_eval=_tensor(x_test)[:, None], y_eval=_tensor(f_test)[:, None],
                 keep_outputs=True, desc="early stopping")
    return EarlyStopResult(x, y, x_test, f_test, hist.steps, hist.train_loss, hist.eval_loss,
                           hist.outputs[..., 0])


# ----------------------------------------------------------------------------------------------
# Parity: 图4.13(b), eq. (4.4)
# ----------------------------------------------------------------------------------------------
def parity_data(d: int) -> tuple[np.ndarray, np.ndarray]:
    """All 2^d points of {−1, 1}^d and the parity f(x) = Π_j x_j."""
    if not 1 <= d <= 16:
        raise ValueError(f"parity dimension d must lie in [1, 16], got {d}")
    x = np.array(np.meshgrid(*[[-1.0, 1.0]] * d, indexing="ij")).reshape(d, -1).T
    return x, x.prod(axis=1)


@dataclass
class ParityResult:
    x: np.ndarray           # (2^d, d)
    y: np.ndarray           # (2^d,)
    train_idx: np.ndarray   # (n_train,)
    output: np.ndarray      # (K, 2^d) final network output on every point
    train_acc: np.ndarray   # (K,)
    test_acc: np.ndarray    # (K,)


@cached
def run_parity(d: int, n_train: int, hidden: tuple[int, ...], init_std: float, steps: int, lr: float,
               members: int, seed: int) -> ParityResult:
    """Train on ``n_train`` of the 2^d parity points and test on the rest (图4.13(b))."""
    x, y = parity_data(d)
    if not 1 <= n_train < len(y):
        raise ValueError(f"n_train must lie in [1, {len(y)}), got {n_train}")
    idx = numpy_rng(seed).permutation(len(y))
    train_idx, test_idx = idx[:n_train], idx[n_train:]
    model = BatchedMLP([d, *hidden, 1], members, "tanh", init_std=init_std, generator=generator(seed))
    train(model, _tensor(x[train_idx]), _tensor(y[train_idx])[:, None], steps=steps, lr=lr,
          record_every=steps, desc="parity")
    with torch.no_grad():
        out = model(_tensor(x))[..., 0].numpy()  # (K, 2^d)
    correct = np.sign(out) == y
    return ParityResult(x, y, train_idx, out, correct[:, train_idx].mean(1), correct[:, test_idx].mean(1))


# ----------------------------------------------------------------------------------------------
# Chapter 5: multiscale DNN (5.2) and Fourier features (5.11), the networks of companion.core.nets
# ----------------------------------------------------------------------------------------------
MULTISCALE_MODELS = ("plain", "mscale", "fourier")


@dataclass
class MultiscaleResult:
    kind: str
    ks: tuple[int, ...]
    steps: np.ndarray      # (T,)
    deltas: np.ndarray     # (T, len(ks)) Δ_F on the training grid
    first: np.ndarray      # (len(ks),)
    x_test: np.ndarray
    f_test: np.ndarray
    out_test: np.ndarray   # (n_test,) final
    train_mse: float
    test_mse: float


def multiscale_target(x: np.ndarray, ks: Sequence[int] = (1, 10, 25),
                      amps: Sequence[float] = (1.0, 0.5, 0.25)) -> np.ndarray:
    """sin 2πx + ½ sin(2π·10x) + ¼ sin(2π·25x) on [0, 1): a low, a middle and a high frequency."""
    return sum(a * np.sin(2 * math.pi * k * x) for k, a in zip(ks, amps))


@cached
def run_multiscale(kind: str, width: int, steps: int, lr: float, n_train: int, record_every: int, seed: int,
                   scales: tuple[float, ...] = (1.0,), sigma: float = 10.0,
                   ks: tuple[int, ...] = (1, 10, 25)) -> MultiscaleResult:
    """Fit :func:`multiscale_target` with a plain sReLU net, a MscaleDNN with ``scales``, or Fourier
    features of scale ``sigma``."""
    if kind not in MULTISCALE_MODELS:
        raise ValueError(f"unknown model kind {kind!r}; choose one of {', '.join(MULTISCALE_MODELS)}")
    init = generator(seed)
    if kind == "plain":
        model: nn.Module = MscaleDNN(1, width, 2, scales=[1.0], act="srelu", generator=init)
    elif kind == "mscale":
        model = MscaleDNN(1, width, 2, scales=scales, act="srelu", generator=init)
    else:
        model = FourierFeatureNet(1, 100, sigma, width, 2, generator=init)
    x = uniform_grid(n_train, 0.0, 1.0)
    x_test = uniform_grid(4 * n_train + 7, 0.0, 1.0)          # off the training grid
    f, f_test = multiscale_target(x, ks), multiscale_target(x_test, ks)
    X = _tensor(x)[:, None]
    hist = train(model, X, _tensor(f)[:, None], steps=steps, lr=lr, record_every=record_every, x_eval=X,
                 keep_outputs=True, desc=kind)
    deltas = delta_f(hist.outputs[..., 0], f, ks)                          # (T, len(ks))
    with torch.no_grad():
        out_test = model(_tensor(x_test)[:, None])[:, 0].numpy()
    return MultiscaleResult(kind, tuple(ks), hist.steps, deltas, first_step_below(deltas, hist.steps),
                            x_test, f_test, out_test, float(hist.train_loss[-1]),
                            float(((out_test - f_test) ** 2).mean()))


# ----------------------------------------------------------------------------------------------
# Claims of chapters 4–6: each a sentence of the book as measured conditions (companion.kit.claims)
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


def _order_conditions(t: np.ndarray, label: str = "") -> list[Condition]:
    """t1 < t3 < t5 for three first-convergence steps; a peak that never converged fails the order."""
    t1, t3, t5 = (float(v) for v in t)
    return [compare(f"t1{label}", t1, "<", f"t3{label}", t3), compare(f"t3{label}", t3, "<", f"t5{label}", t5)]


def _spread_ratio(t: np.ndarray) -> float:
    """max/min of first-convergence steps (NaN, "never", when any peak never converged)."""
    t = np.asarray(t, dtype=float)
    if np.isnan(t).any():
        return float("nan")
    return float(t.max() / max(t.min(), 1.0))


FP_ORDER = ClaimSpec("ch04.fp-order", "图4.7",
                     "equal-amplitude frequencies converge in the order k=1, then 3, then 5, with k=5 at least five "
                     "times later than k=1 (median over members)")
RICKER_ORDER = ClaimSpec("ch04.ricker-order", "图6.3", "with Ricker a=0.3 the frequencies converge in the order 1, 3, 5")
RICKER_NO_ORDER = ClaimSpec("ch04.ricker-no-order", "图4.9",
                            "with Ricker a=0.1 there is no frequency order (all peaks converge within a factor 2 of "
                            "each other) and the test error is more than twice that of a=0.3")
RICKER_NO_ASI = ClaimSpec("ch04.ricker-no-asi", "图4.9", "the same holds without ASI: no frequency order at a=0.1, and "
                          "a test error more than twice that of a=0.3 with ASI")
SIN_RATE = ClaimSpec("ch04.sin-rate", "图4.10",
                     "with σ=sin(ax), a=10 loses the frequency order (with ASI all peaks converge within a factor 2 "
                     "of each other) and generalises worse: with or without ASI its test error is more than twice "
                     "that of a=1", exploration=True)   # quick profile: the order condition fails on about 1 seed in 3
SMALL_INIT_ORDER = ClaimSpec("ch04.small-init-order", "图6.2", "small initialisation keeps the order 1, 3, 5")
LARGE_INIT_NO_ORDER = ClaimSpec("ch04.large-init-no-order", "图6.2",
                                "large initialisation breaks the order: all three peaks converge within a factor 2 "
                                "of each other")
LARGE_INIT_HIGH_FREQ = ClaimSpec("ch04.large-init-high-freq", "图6.2",
                                 "large initialisation leaves over 10 times more of the output's energy above the "
                                 "data's Nyquist frequency and a test error over 10 times larger")
GRAD_LOSS = ClaimSpec("ch04.grad-loss-speedup", "图6.4",
                      "with the derivative term the k=5 component converges in less than half the steps "
                      "(median over members)")
IMAGE_SMALL = ClaimSpec("ch04.image-small-init", "图4.4",
                        "small initialisation learns the picture and generalises to the unseen columns (PSNR there "
                        "at least 2 dB above the constant-grey baseline, and within 3 dB of the training columns)")
IMAGE_LARGE = ClaimSpec("ch04.image-large-init", "图4.11",
                        "large initialisation does not (PSNR on the unseen columns over 10 dB below the training "
                        "columns)")
EARLY_STOP = ClaimSpec("ch04.early-stopping", "图4.12",
                       "the test loss is U-shaped: its minimum comes in the first half of training and the final test "
                       "loss is at least 1.5 times the minimum (test loss averaged over members)")
PARITY = ClaimSpec("ch04.parity-chance", "图4.13(b)",
                   "the network fits every training point of parity (every training error below 1, so every sign "
                   "right) but does no better than chance on unseen points (test accuracy at most 0.6)")
MSCALE = ClaimSpec("ch04.mscale-k10", "§5.2",
                   "the MscaleDNN fits the k=10 component (Δ_F < 0.1), which the plain network of the same width "
                   "never does, and ends closer at k=25 too")
STEP_ORDER = ClaimSpec("ch04.step-order", "图4.6",
                       "the step function's spectral peaks converge from low to high frequency: harmonic 1, then 5, "
                       "then 7, and harmonic 7 at least five times later than harmonic 1 (median over members)")
STEP_OUTLINE = ClaimSpec("ch04.step-outline", "图4.3",
                         "the network draws a sine-like outline first: a tenth of the way through training its output "
                         "is closer to the fundamental sine than to the steps, and at the end it is closer to the "
                         "steps than to that sine (every member)")
SIZES_SMOOTH = ClaimSpec("ch04.sizes-smooth", "图4.1",
                         "nets of several sizes all join the samples of sin x smoothly: each fits them (RMS error "
                         "< 0.02) and adds no wiggles between them (total variation ≤ 1.2 × that of sin x)")
OUTLINE_PLATEAU = ClaimSpec("ch04.outline-plateau", "图4.2",
                            "fitting sin x + sin 5x, the network first draws sin x alone and its error stalls "
                            "there: some recorded output lies within 0.35 (relative to sin 5x) of sin x, the relative "
                            "error stays within 15% of the sin 5x level 1/√2 for at least 15% of the run, and it "
                            "ends below 0.1 (every member)",
                            exploration=True)  # quick profile: 16/20 seeds; a member may not finish sin 5x in 2000 steps
FOURIER_FEATURES = ClaimSpec("ch04.fourier-features", "图5.7",
                             "Fourier features capture the high frequency that the plain network misses: with them "
                             "every component ends with Δ_F < 0.1, without them Δ_F(25) stays at or above 0.1, and "
                             "the test error is lower with them")
FOURIER = ClaimSpec("ch04.fourier-overfit", "§5.3", "Fourier features with σ=100 overfit: test error over 100 times "
                                                     "that of σ=10")


def check_fp_order(fp: FPResult) -> Verdict:
    """图4.7 on a fit of sin x + sin 3x + sin 5x: median first-convergence steps t1 < t3 < t5 and t5/t1 ≥ 5.

    t1 is floored at the first recorded step after 0 (the resolution of the measurement).
    """
    t1, t3, t5 = median_step(fp.first)
    ratio = t5 / max(t1, float(fp.steps[1])) if not (np.isnan(t1) or np.isnan(t5)) else float("nan")
    return FP_ORDER.judge(*_order_conditions((t1, t3, t5)), threshold("t5/t1", ratio, ">=", 5.0),
                          first_per_member=fp.first)


def check_step_order(step: FPResult) -> Verdict:
    """图4.6 on a fit of the three-level step (harmonics 1, 5, 7 tracked): median first-convergence steps
    t1 < t5 < t7 and t7/t1 ≥ 5 (t1 floored at the first recorded step after 0, the measurement's resolution)."""
    t1, t5, t7 = median_step(step.first)
    ratio = t7 / max(t1, float(step.steps[1])) if not (np.isnan(t1) or np.isnan(t7)) else float("nan")
    return STEP_ORDER.judge(compare("t1", t1, "<", "t5", t5), compare("t5", t5, "<", "t7", t7),
                            threshold("t7/t1", ratio, ">=", 5.0), first_per_member=step.first)


def outline_distances(step: FPResult) -> tuple[np.ndarray, np.ndarray]:
    """Root-mean-square distances of each member's output on the training grid from the target's fundamental
    sine and from the target itself, at every recorded step of a step fit (图4.3): two arrays of shape (T, K)."""
    sine = fourier_part(step.f_train, [step.config.bins[0]])                       # (n,) b₁ sin x
    to_sine = np.sqrt(((step.out_train - sine) ** 2).mean(-1))
    to_steps = np.sqrt(((step.out_train - step.f_train) ** 2).mean(-1))
    return to_sine, to_steps


def check_step_outline(step: FPResult) -> Verdict:
    """图4.3: at the recorded step nearest a tenth of the run (the book's snapshot at step 1000 of 10 000) every
    member's output is closer to the fundamental sine than to the steps (largest ratio < 1), and at the last step
    closer to the steps than to the sine (largest ratio < 1)."""
    to_sine, to_steps = outline_distances(step)
    i = nearest_index(step.steps, step.steps[-1] / 10)
    early, late = to_sine[i] / to_steps[i], to_steps[-1] / to_sine[-1]
    return STEP_OUTLINE.judge(threshold(f"max (to sine)/(to steps) at step {step.steps[i]}", float(early.max()), "<",
                                        1.0),
                              threshold("max (to steps)/(to sine) at the end", float(late.max()), "<", 1.0),
                              early_ratio=early, end_ratio=late)


def check_sizes_smooth(fits: SizesResult) -> Verdict:
    """图4.1 on :func:`run_sizes`: the worst net's training RMS error < 0.02 and its total variation ≤ 1.2 ×
    that of sin x on the same grid (an interpolant that wiggles between the samples adds variation)."""
    return SIZES_SMOOTH.judge(threshold("max training RMS error", float(fits.train_rms().max()), "<", 0.02),
                              threshold("max total variation / that of sin x", float(fits.variation_ratio().max()),
                                        "<=", 1.2),
                              sizes=[f"{len(s)}×{s[0]}" for s in fits.sizes])


@dataclass(frozen=True)
class PlateauMeasures:
    """Per-member measures of the outline stage of a fit of sin x + sin 5x (图4.2), on the training grid.

    ``to_outline`` is min_t ‖f_θ(t) − sin x‖ / ‖sin 5x‖ (0: the output is exactly the low-frequency part);
    ``plateau_share`` the share of recorded steps at which the relative error ‖f_θ(t) − f‖ / ‖f‖ lies within
    15 % of 1/√2, the error of drawing sin x alone (the loss stalls there: 损失停滞); ``final_error`` the relative
    error at the end; ``outline_index`` the recorded index at which the output is nearest sin x.  Each has
    shape (K,); ``relative_error`` (T, K) is the whole curve and ``level`` the plateau's level 1/√2.
    """

    to_outline: np.ndarray
    outline_index: np.ndarray
    plateau_share: np.ndarray
    final_error: np.ndarray
    relative_error: np.ndarray
    level: float


def plateau_measures(fit: FPResult) -> PlateauMeasures:
    """The measures of :class:`PlateauMeasures` for a two-frequency fit (``ks=(1, k_high)``, equal amplitudes)."""
    if len(fit.config.ks) != 2:
        raise ValueError(f"the outline stage needs a two-frequency target (k_low, k_high); got ks={fit.config.ks}")
    low = fourier_part(fit.f_train, [fit.config.bins[0]])               # the sin x component on the grid
    high = fit.f_train - low
    rms = lambda a: np.sqrt((a ** 2).mean(-1))  # noqa: E731
    distance = rms(fit.out_train - low) / rms(high)                     # (T, K)
    error = rms(fit.out_train - fit.f_train) / rms(fit.f_train)         # (T, K)
    level = rms(high) / rms(fit.f_train)                                # 1/√2 for equal amplitudes
    plateau_share = (np.abs(error / level - 1.0) <= 0.15).mean(0)
    return PlateauMeasures(distance.min(0), distance.argmin(0), plateau_share, error[-1], error, float(level))


def check_outline_plateau(fit: FPResult) -> Verdict:
    """图4.2 on a fit of sin x + sin 5x: every member passes through the outline sin x (distance ≤ 0.35 of
    ‖sin 5x‖), its error stalls at the sin 5x level for ≥ 15 % of the run, and the fit ends with error < 0.1."""
    m = plateau_measures(fit)
    return OUTLINE_PLATEAU.judge(threshold("max over members of min_t ‖f − sin x‖/‖sin 5x‖", float(m.to_outline.max()),
                                           "<=", 0.35),
                                 threshold("min over members of the plateau share", float(m.plateau_share.min()),
                                           ">=", 0.15),
                                 threshold("max over members of the final relative error", float(m.final_error.max()),
                                           "<", 0.1),
                                 to_outline=m.to_outline, plateau_share=m.plateau_share, final_error=m.final_error)


def check_ricker_order(ricker: FPResult) -> Verdict:
    """图6.3: member 0 (Ricker a = 0.3, ASI) converges in the order 1, 3, 5."""
    return RICKER_ORDER.judge(*_order_conditions(ricker.first[0], "(a=0.3)"))


def check_ricker_no_order(ricker: FPResult) -> Verdict:
    """图4.9: member 1 (Ricker a = 0.1) has max/min of its first steps ≤ 2 and over twice member 0's test MSE."""
    mse = ricker.test_mse
    return RICKER_NO_ORDER.judge(threshold("max/min t(a=0.1)", _spread_ratio(ricker.first[1]), "<=", 2.0),
                                 compare("test MSE(a=0.1)", mse[1], ">", "2×test MSE(a=0.3)", 2 * mse[0]),
                                 t_a01=ricker.first[1])


def check_ricker_no_asi(ricker: FPResult) -> Verdict:
    """图4.9 first row: member 2 (Ricker a = 0.1, no ASI) has max/min of its first steps ≤ 2 and over twice
    member 0's (a = 0.3, ASI) test MSE — the conditions of :func:`check_ricker_no_order`, without ASI."""
    mse = ricker.test_mse
    return RICKER_NO_ASI.judge(threshold("max/min t(a=0.1, no ASI)", _spread_ratio(ricker.first[2]), "<=", 2.0),
                               compare("test MSE(a=0.1, no ASI)", mse[2], ">", "2×test MSE(a=0.3)", 2 * mse[0]),
                               t_a01_no_asi=ricker.first[2])


def check_sin_rate(sin: FPResult) -> Verdict:
    """图4.10 with members (a=10 no ASI, a=10 ASI, a=1 ASI): member 1's first steps have max/min ≤ 2 (a peak
    that never converged fails), and members 0 and 1 each have over twice member 2's test MSE."""
    mse = sin.test_mse
    return SIN_RATE.judge(threshold("max/min t(a=10, ASI)", _spread_ratio(sin.first[1]), "<=", 2.0),
                          compare("test MSE(a=10, ASI)", mse[1], ">", "2×test MSE(a=1)", 2 * mse[2]),
                          compare("test MSE(a=10, no ASI)", mse[0], ">", "2×test MSE(a=1)", 2 * mse[2]),
                          first_per_member=sin.first)


def check_small_init_order(init: FPResult) -> Verdict:
    """图6.2: member 0 (small init std) converges in the order 1, 3, 5."""
    return SMALL_INIT_ORDER.judge(*_order_conditions(init.first[0], "(small)"))


def check_large_init_no_order(init: FPResult) -> Verdict:
    """图6.2: member 1 (large init std) converges with max/min of its first steps ≤ 2 (never converged: fails)."""
    return LARGE_INIT_NO_ORDER.judge(threshold("max/min t(large)", _spread_ratio(init.first[1]), "<=", 2.0),
                                     t_large=init.first[1], t_small=init.first[0])


def check_large_init_high_freq(init: FPResult) -> Verdict:
    """图6.2: member 1 (large init) has > 10× member 0's energy above the training Nyquist and > 10× its test MSE."""
    energy, mse = init.high_frequency_energy(), init.test_mse
    return LARGE_INIT_HIGH_FREQ.judge(
        compare("energy above Nyquist(large)", energy[1], ">", "10×(small)", 10 * energy[0]),
        compare("test MSE(large)", mse[1], ">", "10×(small)", 10 * mse[0]))


def check_grad_loss(grad: FPResult, plain: FPResult) -> Verdict:
    """图6.4: median first step of k=5 (last frequency) with L_grad is below half of that with L_nongrad."""
    t5_grad, t5_plain = median_step(grad.first)[-1], median_step(plain.first)[-1]
    return GRAD_LOSS.judge(compare("t5(L_grad)", t5_grad, "<", "t5(L_nongrad)/2", t5_plain / 2))


def check_image_small(img: ImageResult) -> Verdict:
    """图4.4: member 0 (small init) is ≥ 2 dB above the constant-grey baseline on unseen columns and its
    train/unseen PSNR gap is below 3 dB."""
    gain = img.psnr_test[-1, 0] - img.baseline_psnr
    gap = img.psnr_train[-1, 0] - img.psnr_test[-1, 0]
    return IMAGE_SMALL.judge(threshold("PSNR unseen(small) − baseline dB", gain, ">", 2.0),
                             threshold("PSNR gap(small) dB", gap, "<", 3.0),
                             psnr_unseen_small=img.psnr_test[-1, 0], baseline=img.baseline_psnr)


def check_image_large(img: ImageResult) -> Verdict:
    """图4.11: member 1 (large init) has a train/unseen PSNR gap above 10 dB."""
    gap = img.psnr_train[-1, 1] - img.psnr_test[-1, 1]
    return IMAGE_LARGE.judge(threshold("PSNR gap(large) dB", gap, ">", 10.0), psnr_unseen_large=img.psnr_test[-1, 1])


def check_early_stopping(es: EarlyStopResult) -> Verdict:
    """图4.12: the member-averaged test-loss curve (the book's one curve) has its minimum in the first half of
    training, and its final value exceeds 1.5 times that minimum.  Each member's own numbers are reported."""
    curve = es.test_loss.mean(axis=1)                                   # (T,)
    best = float(es.steps[curve.argmin()])
    ratio = float(curve[-1] / curve.min())
    return EARLY_STOP.judge(threshold("test-minimum step", best, "<", float(es.steps[-1]) / 2),
                            threshold("final/min test loss", ratio, ">", 1.5),
                            member_best_steps=es.steps[es.test_loss.argmin(axis=0)],
                            member_final_over_min=es.test_loss[-1] / es.test_loss.min(axis=0))


def check_parity(par: ParityResult) -> Verdict:
    """图4.13(b): the largest training error |f(x) − y| over members is below 1 (so every training sign is right)
    and the best member's test accuracy is at most 0.6."""
    train_error = float(np.abs(par.output[:, par.train_idx] - par.y[par.train_idx]).max())
    return PARITY.judge(threshold("max training |f−y|", train_error, "<", 1.0),
                        threshold("max test accuracy", float(par.test_acc.max()), "<=", 0.6),
                        train_acc=par.train_acc, test_acc=par.test_acc)


def check_mscale(plain: MultiscaleResult, mscale: MultiscaleResult) -> Verdict:
    """§5.2: the MscaleDNN's Δ_F(10) falls below 0.1 at some recorded step, the plain net's never does, and the
    MscaleDNN's final Δ_F(25) is below the plain net's."""
    return MSCALE.judge(threshold("min Δ_F(10) MscaleDNN", float(mscale.deltas[:, 1].min()), "<", 0.1),
                        threshold("min Δ_F(10) plain", float(plain.deltas[:, 1].min()), ">=", 0.1),
                        compare("final Δ_F(25) MscaleDNN", mscale.deltas[-1, 2], "<", "plain", plain.deltas[-1, 2]))


def check_fourier_features(plain: MultiscaleResult, fourier: MultiscaleResult) -> Verdict:
    """图5.7 as a 1-D comparison: the Fourier-feature net's final Δ_F is below 0.1 at every tracked k, the plain
    net's final Δ_F at the highest k is at least 0.1, and the Fourier-feature net's off-grid test MSE is the lower."""
    return FOURIER_FEATURES.judge(
        threshold("max final Δ_F with Fourier features", float(fourier.deltas[-1].max()), "<", 0.1),
        threshold(f"final Δ_F({plain.ks[-1]}) plain", float(plain.deltas[-1, -1]), ">=", 0.1),
        compare("test MSE with Fourier features", fourier.test_mse, "<", "plain", plain.test_mse))


def check_fourier(sigma10: MultiscaleResult, sigma100: MultiscaleResult) -> Verdict:
    """§5.3: the off-grid test MSE of Fourier features with σ = 100 exceeds 100× that with σ = 10."""
    return FOURIER.judge(compare("test MSE(σ=100)", sigma100.test_mse, ">", "100×test MSE(σ=10)",
                                 100 * sigma10.test_mse))


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
# The explorer
# ----------------------------------------------------------------------------------------------
def parse_numbers(text: str, name: str, cast: Callable[[str], float] = float) -> tuple:
    """'1, 3, 5' → (1, 3, 5); a ValueError names the field and the bad text."""
    try:
        values = tuple(cast(part) for part in text.replace(";", ",").split(",") if part.strip())
    except ValueError:
        raise ValueError(f"{name}={text!r} must be a comma-separated list of numbers, e.g. '1, 3, 5'") from None
    if not values:
        raise ValueError(f"{name} is empty: give at least one number")
    return values


def explore(ks: str, amps: str, init_std: float, act: str, a: float, width: int, lr: float, asi: bool,
            loss: str, steps: int, seed: int | None = None) -> FPResult:
    """One explorer run: a single 1-width-width-1 network on the chosen target (cached); ``seed``
    defaults to the active seed (:func:`companion.kit.seeds.active_seed`)."""
    k_values = parse_numbers(ks, "frequencies", int)
    amp_values = parse_numbers(amps, "amplitudes")
    if len(amp_values) != len(k_values):
        raise ValueError(f"give one amplitude per frequency: {len(k_values)} frequencies, {len(amp_values)} amplitudes")
    config = FPConfig(ks=k_values, amps=amp_values, n_train=128, n_test=512, hidden=(width, width), act=act, a=a,
                      init_std=init_std, asi=asi, loss=loss, lr=lr, steps=steps, record_every=max(steps // 100, 1))
    return run_fprinciple(config, active_seed() if seed is None else seed)


def draw(result: FPResult, fig: Figure) -> None:
    ax1, ax2, ax3 = fig.subplots(1, 3)
    plot_fit(ax1, result.x_test, result.f_test, result.out_test[-1, 0], x_train=result.x_train,
             y_train=result.f_train, title=f"after {result.steps[-1]} steps")
    plot_spectrum(ax2, result.f_train, result.out_train[-1, 0], k_max=max(result.config.ks) + 4)
    plot_delta_f(ax3, result.steps, result.deltas[:, 0], result.config.ks)


def make_explorer() -> w.Explorer:
    """The instructor panel of chapter 4 (first update in about a second on one core), run at the active seed."""
    controls = {
        "ks": w.text("1, 3, 5", "frequencies k"),
        "amps": w.text("1, 1, 1", "amplitudes"),
        "init_std": w.log_slider(0.1, 0.01, 3.0, "init std"),
        "act": w.dropdown("tanh", ACTIVATIONS, "activation"),
        "a": w.float_slider(0.3, 0.05, 3.0, 0.05, "a (ricker / sin)"),
        "width": w.int_slider(64, 8, 256, "width", step=8),
        "lr": w.log_slider(2e-3, 1e-4, 3e-2, "learning rate"),
        "asi": w.checkbox(False, "ASI"),
        "loss": w.dropdown("mse", ("mse", "mse+grad"), "loss"),
        "steps": w.int_slider(800, 100, 4000, "steps", step=100),
    }
    return w.Explorer("Frequency principle explorer (图4.7)", controls, explore, draw)


# ----------------------------------------------------------------------------------------------
# Exercise checks (习题 of chapter 4)
# ----------------------------------------------------------------------------------------------
def check_alias(answer: int | None) -> bool:
    """习题18: sin(11x) sampled at 16 points of [−π, π) shows up in which DFT bin k ∈ [0, 8]?"""
    x = uniform_grid(16)
    truth = int(np.argmax(np.abs(dft(np.sin(11 * x)))))
    return feedback("alias", answer, lambda a: int(a) == truth,
                    "16 samples cannot tell k from 16 − k: which k ≤ 8 gives the same samples?")


def check_parity_spectrum(answer: Callable[[np.ndarray], complex] | None, d: int = 3) -> bool:
    """习题6 / (4.4): a function k ↦ the DFT of the parity f(x) = Π x_j on {−1, 1}^d at the vector k."""
    x = np.array(np.meshgrid(*[[-1.0, 1.0]] * d, indexing="ij")).reshape(d, -1).T
    f = x.prod(1)
    ks = numpy_rng(0).uniform(-1, 1, size=(6, d))

    def ok(fn: Callable[[np.ndarray], complex]) -> bool:
        numeric = [np.mean(f * np.exp(-2j * np.pi * x @ k)) for k in ks]
        return np.allclose([complex(fn(k)) for k in ks], numeric, atol=1e-9)

    return feedback("parity spectrum", answer, ok,
                    "write e^{−2πi k·x} = Π_j e^{−2πi k_j x_j} and sum each x_j over {−1, 1}; the book's (4.4)")


def check_gradient_weight(answer: Callable[[float], float] | None) -> bool:
    """习题13: by what factor does L_grad (6.3) weight the error of frequency k, relative to L_nongrad (6.2)?"""
    return feedback("derivative loss", answer,
                    lambda fn: all(np.isclose(float(fn(k)), 1 + k * k) for k in (0, 1, 3, 5, 12.5)),
                    "the derivative of ε·sin(kx) is ε·k·cos(kx): compare the squared errors of both terms")


def check_asi(answer: np.ndarray | None) -> bool:
    """习题8: the output of an ASI network at initialisation, on any input."""
    return feedback("ASI", answer, lambda out: np.asarray(out).size > 0 and np.all(np.asarray(out) == 0),
                    "build companion.core.nets.ASI(MLP(...)) and evaluate it before training")


def check_stopping_step(answer: int | None, steps: np.ndarray, test_loss: np.ndarray) -> bool:
    """习题5: a stopping step chosen without the test set whose test loss is within 1.5× of the best one."""
    best = float(np.min(test_loss))

    def ok(step: int) -> bool:
        return float(test_loss[int(np.argmin(np.abs(steps - int(step))))]) <= 1.5 * best

    return feedback("early stopping", answer, ok,
                    "stop once the low-frequency part is fitted (Δ_F at k=1 small) but before the noise's "
                    "high frequencies are — compare the training output's spectrum with the first peaks")
