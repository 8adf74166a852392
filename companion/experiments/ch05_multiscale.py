"""Designing networks for high frequencies (基于频率原则设计高效神经网络), book chapter 5.

The frequency principle makes a plain network slow on high frequencies; chapter 5 stretches the input so that
high frequencies become low ones, (5.1) F[f(a·)](ξ) = (1/|a|) f̂(ξ/a):

* :func:`run_multiscale` — a 1-D regression of a low, a middle and a high frequency with a plain sReLU network,
  a multiscale DNN (MscaleDNN, (5.2)) or Fourier features (5.11) (the networks of :mod:`companion.core.nets`),
  recording Δ_F(k) of each component (§5.2, 图5.7, §5.3);
* :func:`run_sd2dnn` — the subspace-decomposition network SD²DNN (§5.1.2) on the three-scale elliptic
  equation (5.7)–(5.9), solved by the Ritz energy (:func:`companion.core.pde.ritz_loss`) plus the
  orthogonality penalty L_orth and a boundary penalty, (5.10); each sub-module's output is kept (图5.5);
* :func:`run_poisson_2d` — the book's 2-D Poisson problem (5.4)–(5.6), μ = 7π (图5.3 = 图15.2), by Deep Ritz with a
  MscaleDNN (scales 1…A, (5.3)) or the same network with the single scale 1 (a normal network of the same size).

The chapter's claims (``check_*`` beside their :class:`~companion.kit.claims.ClaimSpec`), its explorer
(:func:`make_explorer`: the model, the number of scales, the Fourier scale, the width and the steps of the
1-D regression) and the checks of its exercises live here too.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from matplotlib.figure import Figure
from torch import Tensor, nn

from companion.kit import widgets as w
from companion.kit.bounds import OPTIONAL_SEED, Bounds, integer, real
from companion.kit.cache import cached
from companion.kit.claims import REVALIDATION_SEEDS, ClaimSpec, Verdict, compare, threshold
from companion.kit.exercises import feedback
from companion.kit.plots import plot_delta_f_curves
from companion.kit.seeds import active_seed, generator
from companion.core.fprinciple import as_tensor
from companion.core.nets import SD2DNN, FourierFeatureNet, MscaleDNN
from companion.core.pde import Points, Problem, divergence_operator, fit, grid_points, ritz_loss, sine_poisson
from companion.core.spectral import delta_f, dft, first_step_below, uniform_grid
from companion.core.train import on_device, train


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
    X = as_tensor(x)[:, None]
    hist = train(model, X, as_tensor(f)[:, None], steps=steps, lr=lr, record_every=record_every, x_eval=X,
                 keep_outputs=True, desc=kind)
    deltas = delta_f(hist.outputs[..., 0], f, ks)                          # (T, len(ks))
    with torch.no_grad():
        out_test = model(as_tensor(x_test)[:, None])[:, 0].numpy()
    return MultiscaleResult(kind, tuple(ks), hist.steps, deltas, first_step_below(deltas, hist.steps),
                            x_test, f_test, out_test, float(hist.train_loss[-1]),
                            float(((out_test - f_test) ** 2).mean()))




# ----------------------------------------------------------------------------------------------
# SD²DNN on the three-scale elliptic equation (5.7)–(5.9): 图5.5
# ----------------------------------------------------------------------------------------------
def elliptic_parts(x: np.ndarray | Tensor, eps: tuple[float, float] = (0.1, 0.01)) -> list:
    """The three scales of the exact solution (5.9): x − x², (ε₁/4π) sin(2πx/ε₁), (ε₂/4π) sin(2πx/ε₂)."""
    sin = torch.sin if isinstance(x, Tensor) else np.sin
    return [x - x * x] + [e / (4 * math.pi) * sin(2 * math.pi * x / e) for e in eps]


def elliptic_coefficient(x: np.ndarray | Tensor, eps: tuple[float, float] = (0.1, 0.01)) -> np.ndarray | Tensor:
    """A(x) = (2 + cos(2πx/ε₁))(2 + cos(2πx/ε₂)), (5.8): three scales O(1), O(ε₁), O(ε₂)."""
    cos = torch.cos if isinstance(x, Tensor) else np.cos
    return (2 + cos(2 * math.pi * x / eps[0])) * (2 + cos(2 * math.pi * x / eps[1]))


def elliptic_source(x: Tensor, eps: tuple[float, float] = (0.1, 0.01)) -> Tensor:
    """f = −(A u′)′ for A of (5.8) and u of (5.9) — the book does not write it out:
    f = −(A′u′ + A u″) with u′ = 1 − 2x + ½cos(2πx/ε₁) + ½cos(2πx/ε₂), u″ = −2 − (π/ε₁) sin(2πx/ε₁) − (π/ε₂) sin(2πx/ε₂),
    A′ = −(2π/ε₁) sin(2πx/ε₁)(2 + cos(2πx/ε₂)) − (2π/ε₂) sin(2πx/ε₂)(2 + cos(2πx/ε₁))."""
    k1, k2 = (2 * math.pi / e for e in eps)
    c1, c2, s1, s2 = torch.cos(k1 * x), torch.cos(k2 * x), torch.sin(k1 * x), torch.sin(k2 * x)
    a = (2 + c1) * (2 + c2)
    da = -k1 * s1 * (2 + c2) - k2 * s2 * (2 + c1)
    du = 1 - 2 * x + 0.5 * c1 + 0.5 * c2
    d2u = -2 - 0.5 * k1 * s1 - 0.5 * k2 * s2
    return -(da * du + a * d2u)


def multiscale_elliptic(eps: tuple[float, float] = (0.1, 0.01)) -> Problem:
    """−(A(x)u′)′ = f on [0, 1], u(0) = u(1) = 0, (5.7)–(5.8), with the exact solution (5.9) and f of
    :func:`elliptic_source` ((5.9) does vanish at both ends, because 1/ε₁ and 1/ε₂ are whole numbers)."""
    if not (0 < eps[1] < eps[0] < 1) or any(abs(1 / e - round(1 / e)) > 1e-9 for e in eps):
        raise ValueError(f"need 1 > ε₁ > ε₂ > 0 with 1/ε₁, 1/ε₂ whole numbers (so that u(1) = 0); got {eps}")
    exact = lambda x: sum(elliptic_parts(x[:, 0], eps))  # noqa: E731
    operator = divergence_operator(lambda x: elliptic_coefficient(x[:, 0], eps))
    return Problem(operator, lambda x: elliptic_source(x[:, 0], eps), ((0.0, 1.0),), boundary=exact, exact=exact,
                   name=f"three-scale elliptic (5.7), ε = {eps}")


@dataclass
class SD2Result:
    """图5.5: the SD²DNN's sub-module outputs ``parts`` (P, n) on the grid ``x`` beside the exact solution's
    scales ``targets`` (P, n), recorded at ``steps`` (``history_parts`` (T, P, n))."""

    scale_groups: tuple[tuple[float, ...], ...]
    x: np.ndarray              # (n,)
    exact: np.ndarray          # (n,)
    targets: np.ndarray        # (P, n) x − x², the ε₁ part, the ε₂ part
    steps: np.ndarray          # (T,)
    loss: np.ndarray           # (T,)
    history_parts: np.ndarray  # (T, P, n)

    @property
    def parts(self) -> np.ndarray:
        """(P, n) the sub-modules' final outputs."""
        return self.history_parts[-1]

    @property
    def solution(self) -> np.ndarray:
        """(n,) the network's solution u = Σ_i u_i."""
        return self.parts.sum(0)

    def relative_error(self) -> float:
        """‖u_θ − u‖ / ‖u‖ on the grid."""
        return float(np.linalg.norm(self.solution - self.exact) / np.linalg.norm(self.exact))

    def part_errors(self) -> np.ndarray:
        """(P,) ‖u_i − (its scale of u)‖ / ‖its scale of u‖: how well each sub-module took its own scale."""
        return np.linalg.norm(self.parts - self.targets, axis=1) / np.linalg.norm(self.targets, axis=1)

    def spectra(self) -> tuple[np.ndarray, np.ndarray]:
        """图5.5's read-off: the one-sided DFT (:func:`~companion.core.spectral.dft`, complex) of the exact solution
        (n_grid//2 + 1,) and of each sub-module's output (P, n_grid//2 + 1) on the grid's ``n_grid`` intervals.

        The sub-modules' outputs need not vanish at x = 0, 1 (only their sum is held there), and an end jump of the
        periodic extension would add a 1/k tail to every coefficient; so each part first loses the straight line
        through its two end values, u_i − (u_i(0)(1 − x) + u_i(1)x).  The lines sum to the line through the sum's
        end values, ≈ 0, so the parts still add up to the network's solution."""
        x = self.x
        detrended = self.parts - (self.parts[:, :1] * (1 - x) + self.parts[:, -1:] * x)
        return dft(self.exact[:-1]), dft(detrended[:, :-1])

    def scale_shares(self, ks: Sequence[int]) -> np.ndarray:
        """(P, len(ks)) share of sub-module i in the exact solution's Fourier coefficient at frequency ``ks[j]``:
        Re(û_i(k) conj û(k)) / |û(k)|² — the part of û(k) that u_i carries (the shares of all sub-modules add up to
        û_θ(k)/û(k), ≈ 1 where the sum is right)."""
        exact, parts = self.spectra()
        ks = list(ks)
        return (parts[:, ks] * exact[ks].conj()).real / np.abs(exact[ks]) ** 2


class WeightedSD2DNN(nn.Module):
    """An :class:`~companion.core.nets.SD2DNN` whose sub-modules' outputs are weighed by contribution factors α_i,
    u = Σ_i α_i u_i: Li et al.'s code gives the oscillating modules the size of their scale (α = 1, ε₁, ε₂), so that
    a module's net must grow 1/α_i times to carry a part of a given height.  :meth:`parts` returns the weighted
    outputs α_i u_i (P, N, 1), which sum to the solution."""

    def __init__(self, net: SD2DNN, contributions: Sequence[float]) -> None:
        super().__init__()
        alphas = [float(a) for a in contributions]
        if len(alphas) != len(net.subnets) or not all(a > 0 for a in alphas):
            raise ValueError(f"contributions must be {len(net.subnets)} positive numbers, got {contributions}")
        self.net = net
        self.register_buffer("alpha", torch.tensor(alphas).reshape(-1, 1, 1))

    def parts(self, x: Tensor) -> Tensor:  # (N, d_in) -> (P, N, 1)
        return self.alpha.to(x.dtype) * self.net.parts(x)

    def forward(self, x: Tensor) -> Tensor:  # (N, d_in) -> (N, 1)
        return self.parts(x).sum(0)


def orthogonality_penalty(parts: Tensor, weights: Tensor) -> Tensor:
    """L_orth of (5.10): Σ_{i<j} ⟨u_i, u_j⟩², with ⟨u, v⟩ = ∫ u v dx by the quadrature ``weights``; parts (P, N)."""
    gram = (parts * weights) @ parts.T                                   # (P, P)
    return torch.triu(gram, diagonal=1).pow(2).sum()


#: 图5.5's three sub-modules' scales: the low module's 0.5, 1, …, 15 (Li et al.'s public code for this example gives its
#: "normal" module these low frequencies; with the scale 1 alone its sine neurons sin(wx + b), |w| ≤ 1, are nearly
#: straight on [0, 1] and it never takes x − x²); the middle module's 60, 70, …, 100 and the high module's 400, 500, …,
#: 1000, each band bounded away from the one below and reaching its own wave's angular frequency 2π/ε (≈ 63, ≈ 628).
#: Fixed on design seeds 100–111, 12/12 (the bands 20–100 and 200–1000 let the middle module take x − x²; the middle
#: bands 30–70 or 40–100 let the high module take the ε₁ wave on 2 of 8 or 2 of 10 design seeds).
SD2_SCALES = (tuple(0.5 * s for s in range(1, 31)), tuple(float(s) for s in range(60, 101, 10)),
              tuple(float(s) for s in range(400, 1001, 100)))
#: Li et al.'s contribution factors (their code): u = u_low + ε₁ u_middle + ε₂ u_high, each oscillating module's output
#: weighed by the size of its scale, ε = (0.1, 0.01) of (5.9).
SD2_CONTRIBUTIONS = (1.0, 0.1, 0.01)


@cached
def run_sd2dnn(scale_groups: tuple[tuple[float, ...], ...] = SD2_SCALES, width: int = 32, depth: int = 2,
               n_grid: int = 1000, steps: int = 600, lr: float = 2e-3, beta: float = 1000.0, gamma: float = 1e4,
               eps: tuple[float, float] = (0.1, 0.01), record_every: int = 100, seed: int = 0,
               contributions: tuple[float, ...] | None = SD2_CONTRIBUTIONS) -> SD2Result:
    """Solve (5.7) with an SD²DNN: Ritz energy on the uniform grid of ``n_grid`` intervals + γ·L_orth +
    β·(boundary penalty), (5.10); Adam.  One sub-module per scale group (:class:`~companion.core.nets.SD2DNN`,
    sine activations), its output weighed by its ``contributions`` factor (:class:`WeightedSD2DNN`; None: all 1)."""
    problem = multiscale_elliptic(eps)
    points = grid_points(problem, n_grid)
    model: nn.Module = SD2DNN(1, width, depth, scale_groups, act="sin", generator=generator(seed))
    if contributions is not None:
        model = WeightedSD2DNN(model, contributions)
    x = np.linspace(0.0, 1.0, n_grid + 1)
    with on_device(model) as device:       # the grid and the network made on the CPU, trained on the settings' device
        points, xt = points.to(device), as_tensor(x)[:, None].to(device)

        def loss() -> dict[str, Tensor]:
            terms = ritz_loss(model, problem, points, beta=beta)
            parts = model.parts(points.interior)[..., 0]                   # (P, N)
            terms["orth"] = orthogonality_penalty(parts, points.weights)
            terms["total"] = terms["total"] + gamma * terms["orth"]
            return terms

        def probe(net: nn.Module, _step: int) -> dict[str, np.ndarray]:
            with torch.no_grad():
                return {"parts": net.parts(xt)[..., 0].cpu().numpy()}

        history = fit(model, loss, steps=steps, lr=lr, record_every=record_every, probe=probe, desc="SD²DNN")
    targets = np.stack(elliptic_parts(x, eps))
    return SD2Result(tuple(tuple(g) for g in scale_groups), x, targets.sum(0), targets, history.steps,
                     history.train_loss, history["parts"])


# ----------------------------------------------------------------------------------------------
# The 2-D Poisson problem of 图5.3 / 图15.2: μ = 7π, Deep Ritz, MscaleDNN vs a normal network
# ----------------------------------------------------------------------------------------------
MSCALE_2D_KINDS = ("plain", "mscale")
MU_BOOK = 7 * math.pi      # (5.4)–(5.5), (15.20)–(15.21)


#: The holes of 图5.3's porous domain (Liu et al. 2020), read off the book's figure (the authors' picture
#: ``code/fig source/A5/A5_3_a.png``; the text gives no sizes): three discs (centre, radius) and one ellipse
#: (centre, semi-axes). Ω = [−1, 1]² minus their closures covers 55 % of the square.
POROUS_DISCS = (((0.6, 0.6), 0.3), ((0.3, -0.3), 0.6), ((-0.6, -0.6), 0.3))
POROUS_ELLIPSE = ((-0.5, 0.5), (0.25, 0.125))


def in_holes(x: Tensor) -> Tensor:
    """Whether the points x (N, 2) lie in a hole of the porous domain (closed holes), shape (N,)."""
    hole = torch.zeros(len(x), dtype=torch.bool)
    for (cx, cy), r in POROUS_DISCS:
        hole |= (x[:, 0] - cx) ** 2 + (x[:, 1] - cy) ** 2 <= r ** 2
    (cx, cy), (a, b) = POROUS_ELLIPSE
    return hole | (((x[:, 0] - cx) / a) ** 2 + ((x[:, 1] - cy) / b) ** 2 <= 1)


def hole_boundary(spacing: float) -> Tensor:
    """Points on the holes' boundaries, equally spaced in angle, about ``spacing`` apart along each curve, (M, 2)."""
    (ex, ey), (a, b) = POROUS_ELLIPSE
    curves = [(cx, cy, r, r) for (cx, cy), r in POROUS_DISCS] + [(ex, ey, a, b)]
    out = []
    for cx, cy, rx, ry in curves:
        perimeter = math.pi * (3 * (rx + ry) - math.sqrt((3 * rx + ry) * (rx + 3 * ry)))   # Ramanujan
        t = torch.arange(max(8, round(perimeter / spacing))) * (2 * math.pi / max(8, round(perimeter / spacing)))
        out.append(torch.stack([cx + rx * torch.cos(t), cy + ry * torch.sin(t)], 1))
    return torch.cat(out)


def porous_points(problem: Problem, n: int) -> Points:
    """The grid of :func:`companion.core.pde.grid_points` on the porous domain: the nodes that fall in a hole leave
    the energy's quadrature (a node next to a hole keeps its full weight h², a first-order error at the holes'
    edges), and the holes' boundaries, sampled at the grid's spacing h, join the outer square's nodes in the
    boundary term L_bd of (5.6) (with no share of the energy integral)."""
    square = grid_points(problem, n)
    keep = ~in_holes(square.interior)
    rim = hole_boundary(2.0 / n)
    shares = torch.cat([square.boundary_weights, torch.zeros(len(rim))])
    return Points(square.interior[keep], square.weights[keep], torch.cat([square.boundary, rim]),
                  square.initial, boundary_weights=shares)


@dataclass
class Poisson2DResult:
    """One Deep Ritz solve of (5.4)–(5.6): the network's solution ``solution`` (n, n) and the exact one ``exact``
    (n, n) on the evaluation grid ``axis`` × ``axis`` (off the training grid), ``inside`` (n, n) the nodes in the
    domain (outside the holes; all of them on the plain square), and along training (``steps`` (T,)) the relative
    L² error ``rel_error`` (T,) and ``coefficient`` (T,), the network's coefficient on the exact solution's one
    Fourier mode sin μx₁ sin μx₂ (1 when the oscillation is caught with its full amplitude), both over the domain."""

    kind: str
    scales: tuple[float, ...]
    axis: np.ndarray          # (n,)
    exact: np.ndarray         # (n, n)
    solution: np.ndarray      # (n, n)
    inside: np.ndarray        # (n, n) bool
    steps: np.ndarray         # (T,)
    loss: np.ndarray          # (T,)
    rel_error: np.ndarray     # (T,)
    coefficient: np.ndarray   # (T,)

    def on_domain(self, field: np.ndarray) -> np.ma.MaskedArray:
        """``field`` (n, n) on the evaluation grid with the holes masked out, transposed for ``imshow`` (x₁ across,
        x₂ up, with ``origin="lower"``)."""
        return np.ma.masked_where(~self.inside, field).T

    @property
    def final_error(self) -> float:
        """‖u_θ − u‖ / ‖u‖ on the evaluation grid's nodes in the domain at the end of training."""
        return float(self.rel_error[-1])

    @property
    def final_coefficient(self) -> float:
        """c = ⟨u_θ, u⟩ / ⟨u, u⟩ over the domain at the end of training: the share of the μ-mode recovered."""
        return float(self.coefficient[-1])

    @property
    def delta_mu(self) -> float:
        """Δ_F at the frequency μ of the solution: |c − 1|, c the network's coefficient on sin μx₁ sin μx₂."""
        return float(abs(self.coefficient[-1] - 1.0))


@cached
def run_poisson_2d(kind: str, width: int = 100, depth: int = 3, n_scales: int = 20, n_grid: int = 60,
                   steps: int = 700, lr: float = 1e-2, final_lr: float | None = None, beta: float = 1000.0,
                   n_eval: int = 141, porous: bool = True,
                   record_every: int = 50, seed: int = 0) -> Poisson2DResult:
    """Solve −Δu = f in Ω, f = 2μ² sin μx₁ sin μx₂, μ = 7π, u = sin μx₁ sin μx₂ on ∂Ω (5.4)–(5.5) by Deep Ritz
    (5.6): the energy ∫ ½|∇u|² − f u by the trapezoid rule on the uniform grid of ``n_grid`` intervals per axis plus
    β·(mean squared boundary misfit) (:func:`companion.core.pde.ritz_loss`), Adam at ``lr`` (decaying geometrically
    to ``final_lr`` if given). Ω is 图5.3's porous domain, the square [−1, 1]² with the holes :data:`POROUS_DISCS`
    and :data:`POROUS_ELLIPSE` (:func:`porous_points`), or with ``porous=False`` the plain square.

    ``kind="mscale"``: a MscaleDNN (5.2) with the scales 1, 2, …, ``n_scales`` (5.3); ``kind="plain"``: the same
    network with the single scale 1, i.e. a normal fully connected network of the same size and activation (sReLU).
    Errors are measured on the nodes in Ω of an ``n_eval`` × ``n_eval`` grid that mostly lie between the training
    nodes.
    """
    if kind not in MSCALE_2D_KINDS:
        raise ValueError(f"unknown kind {kind!r}; choose one of {', '.join(MSCALE_2D_KINDS)}")

    problem = sine_poisson(2, freqs=(MU_BOOK / math.pi,), amps=(1.0,))
    scales = (1.0,) if kind == "plain" else tuple(float(s) for s in range(1, n_scales + 1))
    model = MscaleDNN(2, width, depth, scales=scales, act="srelu", generator=generator(seed))
    points = porous_points(problem, n_grid) if porous else grid_points(problem, n_grid)
    axis = np.linspace(-1.0, 1.0, n_eval)
    grid = torch.stack(torch.meshgrid(*[as_tensor(axis)] * 2, indexing="ij"), -1).reshape(-1, 2)
    inside = ~in_holes(grid) if porous else torch.ones(len(grid), dtype=torch.bool)
    exact = problem.evaluate(problem.exact, grid)
    exact_in = exact[inside]
    with on_device(model) as device:        # the grid and the network made on the CPU, trained on the settings' device
        points, grid_on_device = points.to(device), grid.to(device)

        def probe(net: nn.Module, _step: int) -> dict[str, float]:
            with torch.no_grad():
                u = net(grid_on_device)[:, 0].cpu()[inside]
            return {"rel_error": float((u - exact_in).norm() / exact_in.norm()),
                    "coefficient": float((u * exact_in).sum() / (exact_in * exact_in).sum())}

        history = fit(model, lambda: ritz_loss(model, problem, points, beta=beta), steps=steps, lr=lr,
                      final_lr=final_lr, record_every=record_every, probe=probe, desc=f"Deep Ritz, {kind}")
        with torch.no_grad():
            solution = model(grid_on_device)[:, 0].cpu().numpy()
    shape = (n_eval, n_eval)
    return Poisson2DResult(kind, scales, axis, exact.numpy().reshape(shape), solution.reshape(shape),
                           inside.numpy().reshape(shape), history.steps, history.train_loss, history["rel_error"],
                           history["coefficient"])


# ----------------------------------------------------------------------------------------------
# Claims of chapter 5: each a sentence of the book as measured conditions (companion.kit.claims)
# ----------------------------------------------------------------------------------------------
MSCALE = ClaimSpec("ch05.mscale-k10", "§5.2",
                   "the MscaleDNN fits the k=10 component (Δ_F < 0.1), which the plain network of the same width "
                   "never does, and ends closer at k=25 too")
FOURIER_FEATURES = ClaimSpec("ch05.fourier-features", "图5.7",
                             "Fourier features capture the high frequency that the plain network misses: with them "
                             "every component ends with Δ_F < 0.1, without them Δ_F(25) stays at or above 0.1, and "
                             "the test error is lower with them")
FOURIER = ClaimSpec("ch05.fourier-overfit", "Tancik et al. 2020",
                    "Fourier features with σ=100 overfit: test error over 100 times that of σ=10")
MSCALE_2D = ClaimSpec("ch05.mscale-2d", "图5.3/15.2",
                      "on the book's porous 2-D Poisson problem with μ = 7π solved by Deep Ritz, the MscaleDNN "
                      "captures the oscillations of the exact solution (relative L2 error below 0.5 off the training "
                      "grid, at least three quarters of the μ-mode sin μx₁ sin μx₂ recovered) while the normal network "
                      "of the same size does not (relative L2 error at least 0.5, less than three quarters of the "
                      "μ-mode)",
                      validation_seeds=REVALIDATION_SEEDS)   # changed (holes, the μ-mode) after 0–19 were seen
SD2_PARTS = ClaimSpec("ch05.sd2dnn-parts", "图5.5",
                      "the SD²DNN solves the three-scale equation (relative error of the sum < 0.1) and each "
                      "sub-module carries its own scale's peak of the solution's spectrum: the low module at least "
                      "half of the coefficient at k = 1, the middle module at k = 1/ε₁ = 10, the high module at "
                      "k = 1/ε₂ = 100")



#: 图5.3's bound on the relative L² error: below it the network's field carries the oscillation sin μx₁ sin μx₂
#: with more than half its norm right (the zero field has error 1; u/2, the right pattern at half the height, 0.5).
MSCALE_2D_BOUND = 0.5
#: 图5.3's bound on the μ-mode: the share c = ⟨u_θ, u⟩/⟨u, u⟩ of the oscillation's amplitude that the network has
#: recovered over the domain. Fixed on design seeds 100–102 (400 steps): the MscaleDNN at 0.86–0.91, the normal
#: network at 0.51–0.60.
MSCALE_2D_MODE = 0.75


def check_mscale_2d(plain: Poisson2DResult, mscale: Poisson2DResult) -> Verdict:
    """图5.3 (= 图15.2) read as its panels are drawn — the exact solution, the normal DNN's and the MscaleDNN's on the
    porous domain: at the end of training the MscaleDNN's relative L² error over the domain (the evaluation grid's
    nodes outside the holes) is below :data:`MSCALE_2D_BOUND` and its coefficient on the solution's μ-mode
    (:attr:`Poisson2DResult.final_coefficient`) at least :data:`MSCALE_2D_MODE`; the normal network's (same size,
    same activation, scale 1 only) error is at least that bound and its coefficient below that share."""
    return MSCALE_2D.judge(threshold("relative L2 error MscaleDNN", mscale.final_error, "<", MSCALE_2D_BOUND),
                           threshold("μ-mode recovered MscaleDNN", mscale.final_coefficient, ">=", MSCALE_2D_MODE),
                           threshold("relative L2 error normal DNN", plain.final_error, ">=", MSCALE_2D_BOUND),
                           threshold("μ-mode recovered normal DNN", plain.final_coefficient, "<", MSCALE_2D_MODE))

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


#: 图5.5's frequencies, one per sub-module: the smooth part's lowest, 1/ε₁ and 1/ε₂ of (5.9) with ε = (0.1, 0.01).
SD2_OWN_FREQUENCIES = (1, 10, 100)


def check_sd2dnn(sd2: SD2Result, ks: Sequence[int] = SD2_OWN_FREQUENCIES) -> Verdict:
    """图5.5, read off as the book's panels are drawn — each sub-module's spectrum against the exact solution's: the
    relative L2 error of the SD²DNN's solution is below 0.1, and sub-module i carries at least half of the exact
    solution's Fourier coefficient at its own frequency ``ks[i]`` (:meth:`SD2Result.scale_shares`: the low module
    at k = 1, the middle one at the ε₁ peak k = 10, the high one at the ε₂ peak k = 100)."""
    shares = sd2.scale_shares(ks)
    own = np.diag(shares)
    names = ("low", "middle", "high")
    return SD2_PARTS.judge(threshold("relative error of u", sd2.relative_error(), "<", 0.1),
                           *(threshold(f"share of the {name} module at k={k}", float(v), ">=", 0.5)
                             for name, k, v in zip(names, ks, own)),
                           shares=np.round(shares, 3))


# ----------------------------------------------------------------------------------------------
# The explorer: plain net, MscaleDNN with A scales, Fourier features of scale σ (习题9: is a larger A better?)
# ----------------------------------------------------------------------------------------------
#: The bounds of :func:`explore`'s numbers: the explorer's sliders for A and σ, documented maxima for the sizes.
EXPLORE_BOUNDS = Bounds(n_scales=integer(1, 64), sigma=real(1.0, 200.0), width=integer(1, 512), steps=integer(1, 5000),
                        seed=OPTIONAL_SEED)


def explore(kind: str, n_scales: int, sigma: float, width: int, steps: int, seed: int | None = None) -> MultiscaleResult:
    """One explorer run of :func:`run_multiscale` (cached): the MscaleDNN gets the scales 1, 2, …, ``n_scales``.
    A number outside :data:`EXPLORE_BOUNDS` raises a ValueError naming it."""
    EXPLORE_BOUNDS.check(width=width, n_scales=n_scales, sigma=sigma, steps=steps, seed=seed)
    if n_scales > width:
        raise ValueError(f"n_scales={n_scales} exceeds width={width}: each scale needs at least one neuron")
    return run_multiscale(kind, width=width, steps=steps, lr=2e-3, n_train=200, record_every=max(steps // 50, 1),
                          seed=active_seed() if seed is None else seed,
                          scales=tuple(float(s) for s in range(1, n_scales + 1)), sigma=sigma)


def draw(result: MultiscaleResult, fig: Figure) -> None:
    ax1, ax2 = fig.subplots(1, 2)
    plot_delta_f_curves(ax1, result.steps, result.deltas, result.ks, title=f"{result.kind}: Δ_F(k)")
    ax1.set_ylim(1e-3, 3)
    ax2.plot(result.x_test, result.f_test, "--", color="0.3", lw=1, label="target")
    ax2.plot(result.x_test, result.out_test, lw=0.9, label=f"{result.kind}, test MSE {result.test_mse:.2g}")
    ax2.set(xlim=(0, 0.25), xlabel="x", title="between the training points")
    ax2.legend(fontsize=7)


def make_explorer() -> w.Explorer:
    """The instructor panel of chapter 5, run at the active seed (an update takes a second or two on one core):
    the model (plain sReLU net, MscaleDNN, Fourier features), the number A of scales 1…A, the Fourier scale σ, the
    width and the steps, on the target of §5.2 (k = 1, 10, 25)."""
    controls = {
        "kind": w.dropdown("mscale", MULTISCALE_MODELS, "model"),
        "n_scales": w.int_slider(16, 1, 64, "scales A"),
        "sigma": w.log_slider(10.0, 1.0, 200.0, "Fourier σ"),
        "width": w.int_slider(64, 16, 128, "width", step=16),
        "steps": w.int_slider(500, 100, 1500, "steps", step=100),
    }
    return w.Explorer("Multiscale explorer (§5.2, 图5.7)", controls, explore, draw, figsize=(10.0, 3.2))


# ----------------------------------------------------------------------------------------------
# Exercise checks (习题 of chapter 5)
# ----------------------------------------------------------------------------------------------
def check_stretch(answer: float | None) -> bool:
    """(5.1): by which factor a must the input be stretched, z = a·x, for the component sin(2π·25x) to look like
    sin(2πz), one cycle per unit, to the neurons that see z?"""
    return feedback("stretch", answer, lambda a: np.isclose(float(a), 25.0),
                    "sin(2π·25x) = sin(2π·(25/a)·z) when z = a·x: which a makes 25/a equal to 1?")


def check_nyquist_fraction(answer: float | None, sigma: float = 100.0, nyquist: float = 100.0) -> bool:
    """§5.3: with frequencies b ~ N(0, σ²), which fraction of the Fourier features lies above the Nyquist frequency
    of 200 samples on [0, 1) (|b| > 100 cycles)?  For σ = 100 it is 2(1 − Φ(1)) ≈ 0.317."""
    truth = math.erfc(nyquist / sigma / math.sqrt(2))                   # P(|Z| > t) = 2(1 − Φ(t)) = erfc(t/√2)
    return feedback("Fourier features above Nyquist", answer, lambda a: abs(float(a) - truth) < 0.01,
                    "|b|/σ is the absolute value of a standard normal: P(|Z| > 100/σ) = 2(1 − Φ(100/σ))")
