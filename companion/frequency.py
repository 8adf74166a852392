"""Experiments of the frequency principle (频率原则), book chapters 4–6.

Each ``run_*`` function is one of the book's experiments, returns a small result dataclass, and
is cached on disk (:mod:`companion.cache`), so the notebook, the explorer and the tests share one
implementation:

* :func:`run_fprinciple` — fit Σ A_j sin(k_j x) on [−π, π) and track Δ_F(k) (图4.2, 4.7, 6.2–6.4);
  members of a :class:`~companion.nets.BatchedMLP` may differ in init std and activation width.
* :func:`run_image` — a grey image as a function of pixel coordinates, trained on odd columns
  (图4.4, 4.11).
* :func:`run_early_stopping` — noisy samples of sin x (图4.12).
* :func:`run_parity` — the parity function on {−1, 1}^d (图4.13(b), eq. 4.4).
* :func:`run_multiscale` — plain net vs multiscale DNN (5.2) vs Fourier features (5.11), chapter 5.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import Tensor, nn

from .cache import cached
from .nets import ACTIVATIONS, BatchedMLP, activation
from .spectral import delta_f, dft, first_step_below, psnr, uniform_grid
from .train import LOSSES, train


def sum_of_sines(x: np.ndarray, ks: Sequence[float], amps: Sequence[float]) -> np.ndarray:
    """f(x) = Σ_j A_j sin(k_j x)."""
    return sum(a * np.sin(k * x) for k, a in zip(ks, amps))


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
# 1-D fits of a sum of sines: 图4.2, 4.7, 6.2, 6.3, 6.4
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FPConfig:
    """One batched fit of Σ A_j sin(k_j x) sampled at ``n_train`` points of [−π, π).

    ``init_std`` and ``a`` (Ricker width / sin rate) take one value, or one per member;
    ``init_std=None`` means m^{−1/2} with m the first hidden width (the authors' choice).
    """

    ks: tuple[int, ...] = (1, 3, 5)
    amps: tuple[float, ...] = (1.0, 1.0, 1.0)
    n_train: int = 128
    n_test: int = 1000
    hidden: tuple[int, ...] = (100, 100)
    act: str = "tanh"
    a: float | tuple[float, ...] = 1.0
    init_std: float | tuple[float, ...] | None = None
    asi: bool = False
    loss: str = "mse"
    optimizer: str = "adam"
    lr: float = 1e-3
    steps: int = 2000
    record_every: int = 10
    members: int = 1

    def validate(self) -> None:
        if len(self.ks) != len(self.amps) or not self.ks:
            raise ValueError(f"ks {self.ks} and amps {self.amps} must be non-empty and of equal length")
        if any(k < 1 for k in self.ks) or max(self.ks) >= self.n_train // 2:
            raise ValueError(f"frequencies must lie in [1, n_train/2) = [1, {self.n_train // 2}); got {self.ks}")
        if self.act not in ACTIVATIONS:
            raise ValueError(f"unknown activation {self.act!r}; choose one of {', '.join(ACTIVATIONS)}")
        if self.loss not in LOSSES:
            raise ValueError(f"unknown loss {self.loss!r}; choose one of {', '.join(LOSSES)}")
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
        self.deltas = delta_f(self.out_train, self.f_train, self.config.ks)
        self.first = first_step_below(self.deltas, self.steps, 0.1)

    @property
    def test_mse(self) -> np.ndarray:
        """(K,) final mean squared error on the dense test grid."""
        return ((self.out_test[-1] - self.f_test) ** 2).mean(-1)

    def high_frequency_energy(self) -> np.ndarray:
        """(K,) share of the final output's spectral energy above the training grid's Nyquist frequency."""
        power = np.abs(dft(self.out_test[-1])) ** 2
        nyquist = self.config.n_train // 2
        return power[:, nyquist + 1:].sum(-1) / power[:, 1:].sum(-1)


@cached
def run_fprinciple(config: FPConfig, seed: int) -> FPResult:
    """Train ``config.members`` networks at once on Σ A_j sin(k_j x) and record Δ_F(k) (图4.7)."""
    config.validate()
    torch.manual_seed(seed)
    x = uniform_grid(config.n_train)
    x_test = uniform_grid(config.n_test)
    f, f_test = sum_of_sines(x, config.ks, config.amps), sum_of_sines(x_test, config.ks, config.amps)
    width = config.hidden[0]
    std = width ** -0.5 if config.init_std is None else config.init_std
    stds = _per_member(std, config.members, "init_std")
    a = torch.tensor(_per_member(config.a, config.members, "a"))
    model = BatchedMLP([1, *config.hidden, 1], config.members, config.act, init_std=torch.tensor(stds), a=a,
                       asi=config.asi, generator=torch.Generator().manual_seed(seed))
    X, Y = _tensor(x)[:, None], _tensor(f)[:, None]
    dy = _tensor(sum_of_sines_derivative(x, config.ks, config.amps))[:, None] if config.loss == "mse+grad" else None
    grid = torch.cat([X, _tensor(x_test)[:, None]])
    hist = train(model, X, Y, steps=config.steps, lr=config.lr, optimizer=config.optimizer, loss=config.loss,
                 dy=dy, record_every=config.record_every, x_eval=grid, keep_outputs=True, desc="F-principle")
    out = hist.outputs[..., 0]  # (T, K, n + n_test)
    n = config.n_train
    return FPResult(config, x, f, x_test, f_test, hist.steps, hist.train_loss, out[..., :n], out[..., n:])


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
    h, w = shape
    rows, cols = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    coords = np.stack([rows, cols], -1).reshape(-1, 2) / max(h, w) * 2.0 - 1.0   # (H·W, 2) in [−1, 1]
    values = image.reshape(-1, 1)
    train_mask = (cols % 2 == 1).reshape(-1)                       # odd columns (1-based: even)
    torch.manual_seed(seed)
    model = BatchedMLP([2, *hidden, 1], len(init_stds), "tanh", init_std=torch.tensor(init_stds),
                       generator=torch.Generator().manual_seed(seed))
    hist = train(model, _tensor(coords[train_mask]), _tensor(values[train_mask]), steps=steps, lr=lr,
                 record_every=record_every, x_eval=_tensor(coords), keep_outputs=True, desc="image")
    snaps = hist.outputs[..., 0].reshape(len(hist.steps), len(init_stds), h, w)
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
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(-10, 10, n))
    y = np.sin(x) + noise * rng.standard_normal(n)
    x_test = np.linspace(-10, 10, 1000)
    f_test = np.sin(x_test)
    torch.manual_seed(seed)
    model = BatchedMLP([1, *hidden, 1], members, "tanh", init_std=hidden[0] ** -0.5,
                       generator=torch.Generator().manual_seed(seed))
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
    rng = np.random.default_rng(seed)
    idx = rng.permutation(len(y))
    train_idx, test_idx = idx[:n_train], idx[n_train:]
    torch.manual_seed(seed)
    model = BatchedMLP([d, *hidden, 1], members, "tanh", init_std=init_std,
                       generator=torch.Generator().manual_seed(seed))
    train(model, _tensor(x[train_idx]), _tensor(y[train_idx])[:, None], steps=steps, lr=lr,
          record_every=steps, desc="parity")
    with torch.no_grad():
        out = model(_tensor(x))[..., 0].numpy()  # (K, 2^d)
    correct = np.sign(out) == y
    return ParityResult(x, y, train_idx, out, correct[:, train_idx].mean(1), correct[:, test_idx].mean(1))


# ----------------------------------------------------------------------------------------------
# Chapter 5: multiscale DNN (5.2) and Fourier features (5.11)
# ----------------------------------------------------------------------------------------------
class MscaleDNN(nn.Module):
    """Multiscale DNN (5.2): the first hidden layer is split into parts, part i sees the input × scale_i.

    Stretching the input by a maps frequency ξ of the target to ξ/a for that part (5.1), so high
    frequencies become low ones that the network learns fast.  Use a compactly supported
    activation such as sReLU (or sin): ReLU is positively homogeneous, so scaling its input only
    rescales its output and the trick does nothing.
    """

    def __init__(self, d_in: int, width: int, depth: int, scales: Sequence[float], act: str = "srelu",
                 init_std: float | None = None) -> None:
        super().__init__()
        if width < len(scales):
            raise ValueError(f"width {width} must be at least the number of scales {len(scales)}")
        parts = np.array_split(np.arange(width), len(scales))
        self.register_buffer("scale", torch.cat([torch.full((len(p),), float(s)) for s, p in zip(scales, parts)]))
        self.act = activation(act)
        self.first = nn.Linear(d_in, width)
        self.hidden = nn.ModuleList(nn.Linear(width, width) for _ in range(depth - 1))
        self.out = nn.Linear(width, 1)
        if init_std is not None:
            for p in self.parameters():
                nn.init.normal_(p, std=init_std)

    def forward(self, x: Tensor) -> Tensor:  # (N, d_in) -> (N, 1)
        h = self.act(self.first(x) * self.scale)          # σ(K ⊙ (W x + b)): each neuron's own scale
        for layer in self.hidden:
            h = self.act(layer(h))
        return self.out(h)


class FourierFeatureNet(nn.Module):
    """γ(v) = [cos(2π Bv), sin(2π Bv)] with B ~ N(0, σ²) fixed (5.11), followed by an MLP."""

    def __init__(self, d_in: int, n_features: int, sigma: float, width: int, depth: int,
                 generator: torch.Generator | None = None) -> None:
        super().__init__()
        self.register_buffer("B", torch.randn(n_features, d_in, generator=generator) * sigma)
        layers: list[nn.Module] = []
        sizes = [2 * n_features] + [width] * depth
        for i, o in zip(sizes[:-1], sizes[1:]):
            layers += [nn.Linear(i, o), nn.Tanh()]
        self.mlp = nn.Sequential(*layers, nn.Linear(width, 1))

    def forward(self, x: Tensor) -> Tensor:
        z = 2 * math.pi * x @ self.B.T                     # (N, n_features)
        return self.mlp(torch.cat([torch.cos(z), torch.sin(z)], dim=-1))


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
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    if kind == "plain":
        model: nn.Module = MscaleDNN(1, width, 2, scales=[1.0], act="srelu")
    elif kind == "mscale":
        model = MscaleDNN(1, width, 2, scales=scales, act="srelu")
    else:
        model = FourierFeatureNet(1, 100, sigma, width, 2, generator=gen)
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
