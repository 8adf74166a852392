"""Neural networks that solve differential equations (神经网络求解微分方程, book chapter 15).

A problem is a small declarative object, :class:`Problem`: the operator 𝒩, the source f, a box
domain Ω, and its boundary and initial data (15.3).  The losses that make a network u_θ solve it
are built with autograd:

* :func:`pinn_loss` — least squares / PINN (最小二乘法, 物理驱动的神经网络), eqs. (15.4)–(15.8):
  mean squared residual of the equation, the initial data, the boundary data and optional
  observations;
* :func:`ritz_loss` — Deep Ritz (变分方法), eqs. (15.11)–(15.12) and their grid form (15.19):
  E(u) = ∫ ½|∇u|² − f u plus a boundary penalty; only first derivatives are needed;
* :func:`wan_loss` — the weak adversarial network (弱对抗网络, WAN), eqs. (15.13)–(15.16).
  **The book's loss (15.15) is unbounded** in the test function: replacing φ by cφ multiplies it by
  c², so max_η in (15.16) is +∞.  As in the original WAN paper (Zang et al. 2020) we use test
  functions that vanish on ∂Ω (φ = cutoff(x)·φ_η(x), needed for (15.14) to hold) and divide by
  ‖φ‖²_{L²}; the result is scale invariant and bounded by ‖−Δu − f‖²_{L²} (Cauchy–Schwarz).

:func:`fit` and :func:`fit_wan` train a solver; the ``run_*`` functions are the chapter's
experiments (the Newton toy of §15.1, PINN vs Deep Ritz, the frequency contrast with Jacobi of
图15.1 and the hybrid network → Jacobi solver, the multiscale DNN of §15.5.1), cached on disk.
:func:`make_explorer` builds the chapter's instructor panel.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import Tensor, nn
from tqdm.auto import tqdm

from .cache import cached
from .classical import fd_solution, jacobi, mode_errors
from .frequency import MscaleDNN
from .nets import MLP
from .train import History, progress_enabled

Field = Callable[[Tensor], Tensor]   # (N, d) -> (N,)
METHODS = ("pinn", "ritz")
SAMPLINGS = ("grid", "random")
_PROBE_POINTS = 64


# ----------------------------------------------------------------------------------------------
# Derivatives by autograd
# ----------------------------------------------------------------------------------------------
def gradient(u: Tensor, x: Tensor) -> Tensor:
    """∇u at every point: u (N,) computed from x (N, d) that requires grad → (N, d), differentiable."""
    (grad,) = torch.autograd.grad(u.sum(), x, create_graph=True)
    return grad


def partial(u: Tensor, x: Tensor, axis: int, order: int = 1) -> Tensor:
    """∂^order u / ∂x_axis^order, shape (N,)."""
    for _ in range(order):
        u = gradient(u, x)[:, axis]
    return u


def neg_laplacian(u: Tensor, x: Tensor) -> Tensor:
    """−Δu = −Σ_k ∂²u/∂x_k², shape (N,)."""
    grad = gradient(u, x)
    return -sum(gradient(grad[:, k], x)[:, k] for k in range(x.shape[1]))


@dataclass(frozen=True)
class Operator:
    """A differential operator 𝒩 of (15.3), applied as ``apply(u, x)`` with u (N,) computed from x (N, d).

    ``energy_form`` marks −Δ: it has the Ritz energy (15.11) and the weak form (15.14).
    """

    name: str
    apply: Callable[[Tensor, Tensor], Tensor]
    energy_form: bool = False


NEG_LAPLACIAN = Operator("−Δu", neg_laplacian, energy_form=True)


def newton_operator(m: float) -> Operator:
    """m d²s/dt², Newton's second law (15.1) for a mass m in one dimension (time is x[:, 0])."""
    if not m > 0:
        raise ValueError(f"the mass m must be positive, got {m}")
    return Operator(f"{m:g}·s″", lambda u, x: m * partial(u, x, 0, order=2))


# ----------------------------------------------------------------------------------------------
# The problem
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Problem:
    """𝒩(u) = f in Ω (15.3), Ω the box Π_k [lo_k, hi_k], with boundary and initial data.

    Args:
        operator: 𝒩, e.g. :data:`NEG_LAPLACIAN`.
        source: f, a field (N, d) → (N,).
        domain: ((lo_1, hi_1), …, (lo_d, hi_d)).
        boundary: g of the Dirichlet condition u = g on the boundary faces (15.7, 15.10); required
            on every face except those of the time axis.
        initial: (u_0, ∂_t u_0, …) at t = lo of the time axis (15.6); required when ``time_axis`` is set.
        time_axis: the coordinate that is time, or ``None`` for a steady problem.
        exact: the exact solution when known (for errors only).

    Bad definitions raise a ValueError at construction: an empty or inverted domain, a missing
    boundary or initial condition, a field that does not accept (N, d) inputs or does not return N
    finite values.
    """

    operator: Operator
    source: Field
    domain: tuple[tuple[float, float], ...]
    boundary: Field | None = None
    initial: tuple[Field, ...] = ()
    time_axis: int | None = None
    exact: Field | None = None
    name: str = ""

    def __post_init__(self) -> None:
        domain = tuple((float(lo), float(hi)) for lo, hi in self.domain)
        if not domain or any(not (math.isfinite(lo) and math.isfinite(hi) and lo < hi) for lo, hi in domain):
            raise ValueError(f"domain must be a non-empty list of finite intervals (lo, hi) with lo < hi; "
                             f"got {self.domain}")
        object.__setattr__(self, "domain", domain)
        object.__setattr__(self, "initial", tuple(self.initial))
        if self.time_axis is not None and not 0 <= self.time_axis < self.dim:
            raise ValueError(f"time_axis must be None or in [0, {self.dim - 1}], got {self.time_axis}")
        if self.time_axis is None and self.initial:
            raise ValueError("initial data given but no time_axis: say which coordinate is time")
        if self.time_axis is not None and not self.initial:
            raise ValueError("a time-dependent problem needs initial data: initial=(u0, …)")
        if self.spatial_axes and self.boundary is None:
            raise ValueError(f"missing boundary data: the faces of axes {self.spatial_axes} need boundary=g")
        probe = self.random_points(_PROBE_POINTS, torch.Generator().manual_seed(0))
        named = [("source", self.source), ("boundary", self.boundary), ("exact", self.exact),
                 *((f"initial[{k}]", f) for k, f in enumerate(self.initial))]
        for name, fn in named:
            if fn is not None:
                self._check_field(name, fn, probe)

    def _check_field(self, name: str, fn: Field, x: Tensor) -> None:
        try:
            with torch.no_grad():
                values = fn(x)
        except (IndexError, RuntimeError, TypeError) as exc:
            raise ValueError(f"{name} cannot be evaluated on points of shape (N, {self.dim}) of this "
                             f"{self.dim}-D domain: {exc}") from None
        values = torch.as_tensor(values)
        if values.shape not in ((x.shape[0],), (x.shape[0], 1)):
            raise ValueError(f"{name} must map (N, {self.dim}) points to N values; it returned shape "
                             f"{tuple(values.shape)} for N = {x.shape[0]}")
        if not torch.isfinite(values).all():
            raise ValueError(f"{name} returned non-finite values inside the domain")

    @property
    def dim(self) -> int:
        return len(self.domain)

    @property
    def spatial_axes(self) -> list[int]:
        return [k for k in range(self.dim) if k != self.time_axis]

    @property
    def volume(self) -> float:
        return float(np.prod([hi - lo for lo, hi in self.domain]))

    def random_points(self, n: int, generator: torch.Generator | None = None) -> Tensor:
        """n points uniform in Ω, shape (n, d)."""
        lo = torch.tensor([a for a, _ in self.domain])
        hi = torch.tensor([b for _, b in self.domain])
        return lo + (hi - lo) * torch.rand(n, self.dim, generator=generator)

    def evaluate(self, fn: Field | None, x: Tensor) -> Tensor:
        """A field of the problem at x, shape (N,)."""
        if fn is None:
            raise ValueError(f"this problem ({self.name or 'unnamed'}) does not define that field")
        return torch.as_tensor(fn(x)).reshape(-1)


def manufactured_poisson(exact: Field, domain: Sequence[tuple[float, float]], name: str = "") -> Problem:
    """−Δu = f with f := −Δ(exact) computed by autograd and u = exact on ∂Ω (a manufactured solution)."""
    def source(x: Tensor) -> Tensor:
        with torch.enable_grad():
            x = x.detach().requires_grad_(True)
            return neg_laplacian(exact(x).reshape(-1), x).detach()
    return Problem(NEG_LAPLACIAN, source, tuple(domain), boundary=exact, exact=exact, name=name)


# ----------------------------------------------------------------------------------------------
# Collocation points
# ----------------------------------------------------------------------------------------------
@dataclass
class Points:
    """Where the losses are evaluated.

    interior (N, d) with quadrature weights (N,) summing to |Ω| (Monte Carlo: |Ω|/N; grid: h^d);
    boundary (N_b, d) on the faces of the spatial axes; initial (N_0, d) on t = t_0;
    optional observations ``data`` = (x_m (M, d), û_m (M,)) for L_data (15.8).
    """

    interior: Tensor
    weights: Tensor
    boundary: Tensor
    initial: Tensor
    data: tuple[Tensor, Tensor] | None = None


def _faces(problem: Problem, n: int, generator: torch.Generator | None) -> Tensor:
    """n points uniform on the faces x_k = lo_k or hi_k of the spatial axes, chosen ∝ face area."""
    axes = problem.spatial_axes
    if not axes:
        return torch.empty(0, problem.dim)
    lengths = np.array([hi - lo for lo, hi in problem.domain])
    areas = np.array([lengths.prod() / lengths[k] for k in axes for _ in (0, 1)])
    face = torch.multinomial(torch.tensor(areas / areas.sum()), n, replacement=True, generator=generator)
    x = problem.random_points(n, generator)
    for f in range(len(areas)):
        k, side = axes[f // 2], f % 2
        x[face == f, k] = problem.domain[k][side]
    return x


def sample_points(problem: Problem, n_interior: int, n_boundary: int = 0, n_initial: int = 0, *,
                  generator: torch.Generator | None = None) -> Points:
    """Monte Carlo collocation points: uniform in Ω, on the boundary faces and on t = t_0."""
    if n_interior < 1 or n_boundary < 0 or n_initial < 0:
        raise ValueError(f"need n_interior ≥ 1 and n_boundary, n_initial ≥ 0; got {n_interior}, {n_boundary}, "
                         f"{n_initial}")
    if problem.spatial_axes and n_boundary < 1:
        raise ValueError("this problem has boundary faces: n_boundary must be ≥ 1")
    if problem.time_axis is not None and n_initial < 1:
        raise ValueError("this problem has initial data: n_initial must be ≥ 1")
    interior = problem.random_points(n_interior, generator)
    initial = problem.random_points(n_initial, generator)
    if problem.time_axis is not None:
        initial[:, problem.time_axis] = problem.domain[problem.time_axis][0]
    return Points(interior, torch.full((n_interior,), problem.volume / n_interior),
                  _faces(problem, n_boundary, generator), initial)


def grid_points(problem: Problem, n: int) -> Points:
    """The uniform grid x_i = lo + i·h, i = 0 … n per axis (steady problems): interior nodes with
    weight h^d, as in (15.19), and every node on ∂Ω as boundary points."""
    if problem.time_axis is not None:
        raise ValueError("grid_points is for steady problems (time_axis=None)")
    if n < 2:
        raise ValueError(f"need n ≥ 2 grid intervals, got {n}")
    axes = [torch.linspace(lo, hi, n + 1) for lo, hi in problem.domain]
    nodes = torch.stack(torch.meshgrid(*axes, indexing="ij"), -1).reshape(-1, problem.dim)   # ((n+1)^d, d)
    on_edge = torch.zeros(len(nodes), dtype=torch.bool)
    for k, (lo, hi) in enumerate(problem.domain):
        on_edge |= (nodes[:, k] == lo) | (nodes[:, k] == hi)
    h = np.prod([(hi - lo) / n for lo, hi in problem.domain])
    interior = nodes[~on_edge]
    return Points(interior, torch.full((len(interior),), float(h)), nodes[on_edge], torch.empty(0, problem.dim))


# ----------------------------------------------------------------------------------------------
# Losses
# ----------------------------------------------------------------------------------------------
def _u(model: nn.Module, x: Tensor) -> Tensor:
    return model(x).reshape(-1)          # (N, 1) -> (N,)


def pinn_loss(model: nn.Module, problem: Problem, points: Points) -> dict[str, Tensor]:
    """Least-squares (PINN) loss (15.4) = L_PDE (15.5) + L_IC (15.6) + L_BC (15.7) + L_data (15.8).

    Each term is a mean squared residual; L_IC averages over the given initial derivatives.
    Returns the terms and their sum under ``"total"``.
    """
    x = points.interior.detach().requires_grad_(True)
    residual = problem.operator.apply(_u(model, x), x) - problem.evaluate(problem.source, points.interior)
    terms = {"pde": (residual ** 2).mean()}
    if problem.time_axis is not None:
        x0 = points.initial.detach().requires_grad_(True)
        u0 = _u(model, x0)
        terms["ic"] = sum(((partial(u0, x0, problem.time_axis, k) if k else u0)
                           - problem.evaluate(f, points.initial)).pow(2).mean()
                          for k, f in enumerate(problem.initial)) / len(problem.initial)
    if len(points.boundary):
        terms["bc"] = boundary_penalty(model, problem, points)
    if points.data is not None:
        xd, ud = points.data
        terms["data"] = (_u(model, xd) - ud.reshape(-1)).pow(2).mean()
    terms["total"] = sum(terms.values())
    return terms


def _require_energy_form(problem: Problem, method: str) -> None:
    if not problem.operator.energy_form or problem.time_axis is not None:
        raise ValueError(f"{method} needs a steady problem −Δu = f; got operator {problem.operator.name!r}"
                         f"{' with a time axis' if problem.time_axis is not None else ''}")


def ritz_loss(model: nn.Module, problem: Problem, points: Points, beta: float = 1.0) -> dict[str, Tensor]:
    """Deep Ritz loss (15.12): E(u_θ) + β·(1/N_BC) Σ |u_θ(x_k) − g(x_k)|², E of (15.11) by quadrature.

    E(u) ≈ Σ_i w_i (½|∇u(x_i)|² − f(x_i) u(x_i)); with grid weights w_i = h this is (15.19), whose
    penalty β_book (u(x_0)² + u(x_n)²) is a sum over the two end points, i.e. β = 2 β_book here.
    """
    _require_energy_form(problem, "the Ritz energy")
    if not beta >= 0:
        raise ValueError(f"beta must be ≥ 0, got {beta}")
    x = points.interior.detach().requires_grad_(True)
    u = _u(model, x)
    density = 0.5 * gradient(u, x).pow(2).sum(1) - problem.evaluate(problem.source, points.interior) * u
    terms = {"energy": (points.weights * density).sum(), "bc": boundary_penalty(model, problem, points)}
    terms["total"] = terms["energy"] + beta * terms["bc"]
    return terms


def cutoff(problem: Problem, x: Tensor) -> Tensor:
    """Π_k (x_k − lo_k)(hi_k − x_k) / ((hi_k − lo_k)/2)²: zero on ∂Ω, one at the centre; shape (N,)."""
    out = torch.ones(x.shape[0], dtype=x.dtype)
    for k, (lo, hi) in enumerate(problem.domain):
        out = out * (x[:, k] - lo) * (hi - x[:, k]) / ((hi - lo) / 2) ** 2
    return out


def wan_loss(u_model: nn.Module, phi_model: nn.Module, problem: Problem, points: Points, *,
             normalise: bool = True) -> Tensor:
    """Weak-form residual of (15.14) tested against φ = cutoff·φ_η (WAN, (15.15)).

    r(φ) = ∫ ∇u_θ·∇φ − ∫ f φ (quadrature with the points' weights).  Returns r(φ)² / ‖φ‖²_{L²}
    when ``normalise`` (bounded, invariant under φ → cφ), else the book's r(φ)² (unbounded in η).
    The boundary condition of u_θ is not in this term; add a penalty as in :func:`ritz_loss`.
    """
    _require_energy_form(problem, "the weak form")
    x = points.interior.detach().requires_grad_(True)
    u = _u(u_model, x)
    phi = cutoff(problem, x) * _u(phi_model, x)
    f = problem.evaluate(problem.source, points.interior)
    w = points.weights
    r = (w * ((gradient(u, x) * gradient(phi, x)).sum(1) - f * phi)).sum()
    return r ** 2 / (w * phi ** 2).sum() if normalise else r ** 2


def boundary_penalty(model: nn.Module, problem: Problem, points: Points) -> Tensor:
    """(1/N_BC) Σ |u(x_k) − g(x_k)|², the boundary term L_BC (15.7)."""
    return (_u(model, points.boundary) - problem.evaluate(problem.boundary, points.boundary)).pow(2).mean()


# ----------------------------------------------------------------------------------------------
# Training
# ----------------------------------------------------------------------------------------------
OPTIMIZERS = ("adam", "lbfgs")


def fit(model: nn.Module, loss_fn: Callable[[], dict[str, Tensor]], *, steps: int, lr: float,
        optimizer: str = "adam", record_every: int = 100, final_lr: float | None = None,
        probe: Callable[[nn.Module, int], dict[str, float | np.ndarray]] | None = None) -> History:
    """Minimise ``loss_fn()["total"]`` over ``model``'s parameters; record every ``record_every`` steps.

    The recorded history has the total loss as ``train_loss`` and every term and probe value in
    ``probes`` (one row per record, taken before the step of that index).  With ``"lbfgs"`` one step is
    up to 20 L-BFGS iterations with a strong-Wolfe line search.  ``final_lr`` decays the learning rate
    geometrically from ``lr`` to ``final_lr`` over the run (default: constant).
    """
    if steps < 0 or record_every < 1 or not lr > 0:
        raise ValueError(f"need steps ≥ 0, record_every ≥ 1, lr > 0; got {steps}, {record_every}, {lr}")
    if optimizer == "adam":
        opt: torch.optim.Optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    elif optimizer == "lbfgs":
        opt = torch.optim.LBFGS(model.parameters(), lr=lr, max_iter=20, history_size=50,
                                line_search_fn="strong_wolfe")
    else:
        raise ValueError(f"unknown optimizer {optimizer!r}; choose one of {', '.join(OPTIMIZERS)}")
    if final_lr is not None and not 0 < final_lr <= lr:
        raise ValueError(f"final_lr must lie in (0, lr = {lr}], got {final_lr}")
    decay = 1.0 if final_lr is None or steps == 0 else (final_lr / lr) ** (1.0 / steps)
    schedule = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: decay ** step)
    rows: dict[str, list] = {}
    recorded, totals = [], []
    bar = tqdm(total=steps, desc="solver", disable=not progress_enabled(), mininterval=0.5, leave=False)

    def closure() -> Tensor:
        opt.zero_grad(set_to_none=True)
        total = loss_fn()["total"]
        total.backward()
        return total

    for step in range(steps + 1):
        if step % record_every == 0 or step == steps:
            terms = loss_fn()
            recorded.append(step)
            totals.append(float(terms["total"].detach()))
            values = {k: float(v.detach()) for k, v in terms.items() if k != "total"}
            if probe is not None:
                values.update(probe(model, step))
            for key, value in values.items():
                rows.setdefault(key, []).append(np.asarray(value))
        if step == steps:
            break
        opt.step(closure)
        schedule.step()
        bar.update(1)
    bar.close()
    return History(np.asarray(recorded), np.asarray(totals), probes={k: np.stack(v) for k, v in rows.items()})


def fit_wan(u_model: nn.Module, phi_model: nn.Module, problem: Problem, points: Points, *, steps: int,
            lr_u: float = 1e-3, lr_phi: float = 1e-3, beta: float = 100.0, normalise: bool = True,
            record_every: int = 50) -> History:
    """min_θ max_η (15.16) by alternating Adam steps: η ascends the weak loss, θ descends weak + β·L_BC.

    Records the weak loss, the boundary term and ‖φ‖_{L²} (which the book's unnormalised loss
    drives to infinity).
    """
    if steps < 1 or record_every < 1:
        raise ValueError(f"need steps ≥ 1 and record_every ≥ 1, got {steps}, {record_every}")
    opt_u = torch.optim.Adam(u_model.parameters(), lr=lr_u)
    opt_phi = torch.optim.Adam(phi_model.parameters(), lr=lr_phi, maximize=True)
    rows: dict[str, list] = {"weak": [], "bc": [], "phi_norm": []}
    recorded = []
    for step in range(steps + 1):
        weak = wan_loss(u_model, phi_model, problem, points, normalise=normalise)
        if step % record_every == 0 or step == steps:
            with torch.no_grad():
                phi = cutoff(problem, points.interior) * _u(phi_model, points.interior)
                norm = float((points.weights * phi ** 2).sum().sqrt())
            recorded.append(step)
            rows["weak"].append(float(weak.detach()))
            rows["bc"].append(float(boundary_penalty(u_model, problem, points).detach()))
            rows["phi_norm"].append(norm)
        if step == steps:
            break
        opt_phi.zero_grad(set_to_none=True)
        weak.backward()
        opt_phi.step()
        opt_u.zero_grad(set_to_none=True)
        total = wan_loss(u_model, phi_model, problem, points, normalise=normalise) \
            + beta * boundary_penalty(u_model, problem, points)
        total.backward()
        opt_u.step()
    return History(np.asarray(recorded), np.asarray(rows["weak"]),
                   probes={k: np.asarray(v) for k, v in rows.items()})


# ----------------------------------------------------------------------------------------------
# The chapter's problems
# ----------------------------------------------------------------------------------------------
def newton_problem(m: float = 1.0, horizon: float = 2.0) -> Problem:
    """m s″ = sin t + t on [0, T], s(0) = s′(0) = 0 (15.1); exact s = (t + t³/6 − sin t)/m."""
    if not horizon > 0:
        raise ValueError(f"the horizon T must be positive, got {horizon}")

    def exact(t: Tensor) -> Tensor:
        t = t[:, 0]
        return (t + t ** 3 / 6 - torch.sin(t)) / m

    zero = lambda t: torch.zeros(t.shape[0], dtype=t.dtype)  # noqa: E731
    return Problem(newton_operator(m), lambda t: torch.sin(t[:, 0]) + t[:, 0], ((0.0, horizon),),
                   initial=(zero, zero), time_axis=0, exact=exact, name="Newton (15.1)")


def book_poisson(k_high: float = 24.0) -> Problem:
    """(15.18): −u″ = g on (−1, 1), u(±1) = 0, g = sin x + 4 sin 4x − 8 sin 8x + 16 sin(k x), k = 24 in the book.

    Exact u = p(x) − p(1)·x with p = sin x + ¼ sin 4x − ⅛ sin 8x + (16/k²) sin kx.
    """
    if not 1 <= k_high <= 200:
        raise ValueError(f"k_high must lie in [1, 200], got {k_high}")

    def p(x: Tensor) -> Tensor:
        return torch.sin(x) + torch.sin(4 * x) / 4 - torch.sin(8 * x) / 8 + 16 / k_high ** 2 * torch.sin(k_high * x)

    def source(x: Tensor) -> Tensor:
        x = x[:, 0]
        return torch.sin(x) + 4 * torch.sin(4 * x) - 8 * torch.sin(8 * x) + 16 * torch.sin(k_high * x)

    def exact(x: Tensor) -> Tensor:
        x = x[:, 0]
        return p(x) - p(torch.ones((), dtype=x.dtype)) * x

    return Problem(NEG_LAPLACIAN, source, ((-1.0, 1.0),), boundary=lambda x: torch.zeros(x.shape[0], dtype=x.dtype),
                   exact=exact, name=f"(15.18), k={k_high:g}")


def book_modes(k_high: float = 24.0) -> tuple[int, int, int]:
    """DST modes j that carry sin 4x, sin 8x and sin(k x) of (15.18) on the grid of (−1, 1).

    sin(jπ(x+1)/2) has angular frequency jπ/2, so sin(kx) sits near j = 2k/π; the solution is odd,
    so only even j appear: j = 2, 6, 16 for k = 4, 8, 24.
    """
    return tuple(int(2 * round(k / math.pi)) for k in (4.0, 8.0, k_high))  # type: ignore[return-value]


def sine_poisson(dim: int = 1, freqs: Sequence[float] = (1.0, 4.0), amps: Sequence[float] = (1.0, 0.2)) -> Problem:
    """−Δu = f on (−1, 1)^d with exact u = Σ_a A_a Π_k sin(ω_a π x_k) (f by autograd, u = exact on ∂Ω)."""
    if dim not in (1, 2, 3):
        raise ValueError(f"dim must be 1, 2 or 3, got {dim}")
    if len(freqs) != len(amps) or not freqs:
        raise ValueError(f"freqs {tuple(freqs)} and amps {tuple(amps)} must be non-empty and of equal length")

    def exact(x: Tensor) -> Tensor:
        return sum(a * torch.prod(torch.sin(w * math.pi * x), dim=1) for w, a in zip(freqs, amps))

    return manufactured_poisson(exact, ((-1.0, 1.0),) * dim, name=f"sines {tuple(freqs)} in {dim}-D")


def field_on_grid(fn: Field, x: np.ndarray) -> np.ndarray:
    """A field of a problem evaluated in float64 at the points x (N, d), as a NumPy array (N,)."""
    with torch.no_grad():
        return fn(torch.as_tensor(x, dtype=torch.float64)).reshape(-1).numpy()


def max_error(model: nn.Module, problem: Problem, x: Tensor) -> float:
    """‖u_θ − u‖_∞ on the points x (the book's error measure of 图15.1(d))."""
    with torch.no_grad():
        return float((_u(model, x) - problem.evaluate(problem.exact, x)).abs().max())


def tanh_net(d_in: int, width: int, depth: int, generator: torch.Generator | None = None) -> MLP:
    """A tanh MLP d_in-width-…-width-1 with weights ~ N(0, 1/fan_in) (Xavier-like) and biases ~ N(0, 1/fan_in)."""
    widths = [d_in] + [width] * depth + [1]
    return MLP(widths, "tanh", init_std=[fan ** -0.5 for fan in widths[:-1]], generator=generator)


# ----------------------------------------------------------------------------------------------
# §15.1: Newton's law by a polynomial ansatz and by a network
# ----------------------------------------------------------------------------------------------
class Polynomial(nn.Module):
    """s(t) = e + a t + b t² + c t³ + d t⁴ … (the ansatz of §15.1), coefficients start at zero."""

    def __init__(self, degree: int = 4) -> None:
        super().__init__()
        if degree < 1:
            raise ValueError(f"degree must be ≥ 1, got {degree}")
        self.coef = nn.Parameter(torch.zeros(degree + 1))

    def forward(self, t: Tensor) -> Tensor:  # (N, 1) -> (N, 1)
        ones = torch.ones_like(t)
        powers = torch.cumprod(torch.cat([ones, t.expand(-1, len(self.coef) - 1)], 1), 1)  # (N, degree+1): 1, t, t², …
        return powers @ self.coef[:, None]


@dataclass
class SolveResult:
    """A trained solver: the evaluation grid, exact and computed solutions on it, the history."""

    method: str
    x: np.ndarray            # (N_eval, d)
    exact: np.ndarray        # (N_eval,)
    solution: np.ndarray     # (N_eval,)
    history: History
    extra: dict = field(default_factory=dict)

    @property
    def max_error(self) -> float:
        return float(np.abs(self.solution - self.exact).max())


def _evaluate(model: nn.Module, problem: Problem, x: Tensor) -> tuple[np.ndarray, np.ndarray]:
    with torch.no_grad():
        return _u(model, x).numpy(), problem.evaluate(problem.exact, x).numpy()


@cached
def run_newton(method: str, m: float = 1.0, horizon: float = 2.0, n_points: int = 64, steps: int = 2000,
               lr: float = 1e-2, width: int = 32, seed: int = 0) -> SolveResult:
    """Solve (15.1) by least squares (15.2) with the initial data as soft penalties (the end of §15.1).

    ``method`` = "polynomial" (the degree-4 ansatz, L-BFGS with unit steps: the loss is quadratic in
    its five coefficients; ``lr`` is ignored) or "net" (a tanh network of ``width``, Adam at ``lr``).  Collocation points are random in [0, T].
    """
    problem = newton_problem(m, horizon)
    gen = torch.Generator().manual_seed(seed)
    if method == "polynomial":
        model: nn.Module = Polynomial(4)
        optimizer, lr = "lbfgs", 1.0                       # a quadratic loss: quasi-Newton steps of length 1
    elif method == "net":
        model = tanh_net(1, width, 2, generator=gen)
        optimizer = "adam"
    else:
        raise ValueError(f"unknown method {method!r}; choose 'polynomial' or 'net'")
    points = sample_points(problem, n_points, n_initial=1, generator=gen)
    history = fit(model, lambda: pinn_loss(model, problem, points), steps=steps, lr=lr, optimizer=optimizer,
                  record_every=max(1, steps // 50))
    x = torch.linspace(0.0, horizon, 401)[:, None]
    solution, exact = _evaluate(model, problem, x)
    extra = {"coefficients": model.coef.detach().numpy().copy()} if method == "polynomial" else {}
    return SolveResult(method, x.numpy(), exact, solution, history, extra)


# ----------------------------------------------------------------------------------------------
# PINN and Deep Ritz on a Poisson problem
# ----------------------------------------------------------------------------------------------
@cached
def run_poisson(method: str, dim: int = 1, freqs: tuple[float, ...] = (1.0, 4.0), amps: tuple[float, ...] = (1.0, 0.2),
                width: int = 40, depth: int = 3, n_grid: int = 128, steps: int = 2000, lr: float = 2e-3,
                final_lr: float | None = None, beta: float = 1000.0, sampling: str = "grid",
                seed: int = 0) -> SolveResult:
    """Solve −Δu = f on (−1, 1)^d (exact u of :func:`sine_poisson`) by PINN (15.4) or Deep Ritz (15.12).

    ``sampling="grid"``: the fixed uniform grid with n_grid intervals per axis (quadrature as in
    (15.19)); ``"random"``: as many Monte Carlo points, redrawn every step.  The boundary term has
    weight ``beta`` in both losses; Adam's learning rate decays from ``lr`` to ``final_lr`` if given.  The max error is measured on a finer uniform grid.
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
    problem = sine_poisson(dim, freqs, amps)
    gen = torch.Generator().manual_seed(seed)
    if sampling not in SAMPLINGS:
        raise ValueError(f"unknown sampling {sampling!r}; choose one of {', '.join(SAMPLINGS)}")
    model = tanh_net(dim, width, depth, generator=gen)
    grid = grid_points(problem, n_grid)

    def draw() -> Points:
        if sampling == "grid":
            return grid
        return sample_points(problem, len(grid.interior), len(grid.boundary), generator=gen)

    def loss() -> dict[str, Tensor]:
        points = draw()
        if method == "pinn":
            terms = pinn_loss(model, problem, points)
            terms["total"] = terms["pde"] + beta * terms["bc"]
        else:
            terms = ritz_loss(model, problem, points, beta=beta)
        return terms

    history = fit(model, loss, steps=steps, lr=lr, final_lr=final_lr, record_every=max(1, steps // 40))
    n_eval = 401 if dim == 1 else 61
    axes = [torch.linspace(-1.0, 1.0, n_eval)] * dim
    x = torch.stack(torch.meshgrid(*axes, indexing="ij"), -1).reshape(-1, dim)
    solution, exact = _evaluate(model, problem, x)
    return SolveResult(method, x.numpy(), exact, solution, history)


# ----------------------------------------------------------------------------------------------
# 图15.1: the network fits low modes first, Jacobi high modes first; the hybrid solver
# ----------------------------------------------------------------------------------------------
@dataclass
class ContrastResult:
    """Everything 图15.1 plots.  Grid x_i = −1 + i·h, i = 0 … n; modes j of the DST-I basis."""

    x: np.ndarray                  # (n+1,)
    exact: np.ndarray              # (n+1,) u_ref of (15.18)
    fd: np.ndarray                 # (n+1,) the finite-difference solution Jacobi converges to
    modes: tuple[int, ...]
    net_steps: np.ndarray          # (T,)
    net_outputs: np.ndarray        # (T, n+1)
    net_mode_errors: np.ndarray    # (T, len(modes)) Δ_F(j) against u_ref
    net_max_error: np.ndarray      # (T,)
    jacobi_iterations: np.ndarray  # (S,)
    jacobi_mode_errors: np.ndarray     # (S, len(modes)) against u_ref
    jacobi_fd_mode_errors: np.ndarray  # (S, len(modes)) against the FD solution (= |cos(jπ/n)|^t)
    jacobi_max_error: np.ndarray   # (S,)
    hybrid_iterations: np.ndarray  # (R,) Jacobi iterations after the switch
    hybrid_max_error: dict[int, np.ndarray]   # switch step M -> (R,) max error
    seconds_net: float
    seconds_jacobi: float

    @property
    def n(self) -> int:
        return len(self.x) - 1


def _log_counts(last: int, count: int) -> np.ndarray:
    return np.unique(np.concatenate([[0], np.geomspace(1, max(last, 1), count).astype(int), [last]]))


@cached
def run_frequency_contrast(k_high: float = 24.0, n: int = 1000, width: int = 100, depth: int = 3, steps: int = 2000,
                           lr: float = 1e-3, final_lr: float | None = None, beta: float = 2000.0, record_every: int = 50,
                           jacobi_iterations: int = 100_000, switch_steps: tuple[int, ...] = (500, 2000),
                           hybrid_iterations: int = 2000, seed: int = 0) -> ContrastResult:
    """The experiment of 图15.1 on (15.18): a Deep Ritz net (15.19), Jacobi from zero, and the hybrid.

    The net is trained full batch on the n + 1 grid points with the grid Ritz loss (15.19)
    (β_book = 1000 there is ``beta`` = 2000 here, see :func:`ritz_loss`); its output on the grid is
    recorded every ``record_every`` steps.  For each M in ``switch_steps`` the hybrid starts Jacobi
    from the net's output at step M (boundary values reset to the data).
    """
    bad = [m for m in switch_steps if m % record_every or not 0 <= m <= steps]
    if bad:
        raise ValueError(f"switch_steps {bad} must be recorded steps: multiples of record_every={record_every} "
                         f"in [0, {steps}]")
    problem = book_poisson(k_high)
    modes = book_modes(k_high)
    points = grid_points(problem, n)
    x = np.linspace(-1.0, 1.0, n + 1)
    xt = torch.as_tensor(x, dtype=torch.float32)[:, None]
    exact, g = field_on_grid(problem.exact, x[:, None]), field_on_grid(problem.source, x[:, None])
    h = 2.0 / n
    fd = fd_solution(g, h)

    start = time.process_time()
    torch.manual_seed(seed)
    model = tanh_net(1, width, depth, generator=torch.Generator().manual_seed(seed))

    def grid_output(net: nn.Module, _step: int) -> dict[str, np.ndarray]:
        with torch.no_grad():
            return {"u": _u(net, xt).double().numpy()}

    history = fit(model, lambda: ritz_loss(model, problem, points, beta=beta), steps=steps, lr=lr,
                  final_lr=final_lr, record_every=record_every, probe=grid_output)
    seconds_net = time.process_time() - start
    outputs = history.probes["u"]                                         # (T, n+1)

    start = time.process_time()
    counts = _log_counts(jacobi_iterations, 80)
    run = jacobi(np.zeros(n + 1), g, h, jacobi_iterations, record_at=counts)
    hybrid_counts = _log_counts(hybrid_iterations, 40)
    hybrid = {}
    for m in switch_steps:
        u0 = outputs[history.at(m)].copy()
        u0[0] = u0[-1] = 0.0
        snaps = jacobi(u0, g, h, hybrid_iterations, record_at=hybrid_counts).values
        hybrid[int(m)] = np.abs(snaps - exact).max(axis=1)
    seconds_jacobi = time.process_time() - start

    return ContrastResult(
        x, exact, fd, modes, history.steps, outputs, mode_errors(outputs, exact, modes),
        np.abs(outputs - exact).max(axis=1), run.iterations, mode_errors(run.values, exact, modes),
        mode_errors(run.values, fd, modes), np.abs(run.values - exact).max(axis=1), hybrid_counts, hybrid,
        seconds_net, seconds_jacobi)


# ----------------------------------------------------------------------------------------------
# §15.5.1: the multiscale DNN on a problem with a high-frequency component
# ----------------------------------------------------------------------------------------------
MSCALE_KINDS = ("plain", "mscale")


@cached
def run_mscale_poisson(kind: str, freqs: tuple[float, ...] = (1.0, 10.0), amps: tuple[float, ...] = (1.0, 0.1),
                       width: int = 100, depth: int = 2, scales: tuple[float, ...] = (1, 2, 4, 8, 16, 32),
                       act: str = "srelu", n_grid: int = 256, steps: int = 1000, lr: float = 1e-3,
                       beta: float = 1000.0, record_every: int = 25, seed: int = 0) -> SolveResult:
    """Deep Ritz on −u″ = f, u = Σ A_a sin(ω_a πx) on (−1, 1), with a plain tanh net or a MscaleDNN (5.2).

    The multiscale net (:class:`companion.frequency.MscaleDNN`, first-layer neurons scaled by
    ``scales``) uses a compactly supported activation (``"srelu"``) or ``"sin"``.  The DST error of
    every sine of the solution (mode j = 2ω on the grid of (−1, 1)) is recorded during training in
    ``history.probes["mode_errors"]`` (T, len(freqs)).
    """
    if kind not in MSCALE_KINDS:
        raise ValueError(f"unknown kind {kind!r}; choose one of {', '.join(MSCALE_KINDS)}")
    problem = sine_poisson(1, freqs, amps)
    modes = [int(round(2 * w)) for w in freqs]
    torch.manual_seed(seed)
    if kind == "plain":
        model: nn.Module = tanh_net(1, width, depth, generator=torch.Generator().manual_seed(seed))
    else:
        model = MscaleDNN(1, width, depth, scales=scales, act=act)
    points = grid_points(problem, n_grid)
    x = np.linspace(-1.0, 1.0, n_grid + 1)
    xt = torch.as_tensor(x, dtype=torch.float32)[:, None]
    exact = field_on_grid(problem.exact, x[:, None])

    def probe(net: nn.Module, _step: int) -> dict[str, np.ndarray]:
        with torch.no_grad():
            u = _u(net, xt).double().numpy()
        return {"mode_errors": mode_errors(u, exact, modes), "max_error": np.abs(u - exact).max()}

    history = fit(model, lambda: ritz_loss(model, problem, points, beta=beta), steps=steps, lr=lr,
                  record_every=record_every, probe=probe)
    solution, _ = _evaluate(model, problem, xt)
    return SolveResult(kind, x[:, None], exact, solution, history, {"modes": tuple(modes)})


# ----------------------------------------------------------------------------------------------
# The explorer
# ----------------------------------------------------------------------------------------------
EXPLORER_METHODS = ("pinn", "ritz", "jacobi", "hybrid")


def explore_solver(k_high: float = 24.0, method: str = "ritz", width: int = 50, steps: int = 600,
                   iterations: int = 1000, n: int = 200, seed: int = 0) -> dict:
    """One solve of (15.18) with frequency ``k_high`` on an n-interval grid, for the explorer.

    ``method``: a PINN or Deep Ritz net trained ``steps`` Adam steps (lr 2e-3, depth 2), Jacobi from
    zero for ``iterations`` sweeps, or the hybrid (Ritz net, then Jacobi from its output).
    Returns the grid, exact and computed solutions, the max error and the DST error Δ_F(j) of the
    modes of sin 4x, sin 8x, sin kx along the run (``counts`` (T,), ``mode_errors`` (T, 3)).
    """
    if method not in EXPLORER_METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {', '.join(EXPLORER_METHODS)}")
    problem = book_poisson(k_high)
    modes = book_modes(k_high)
    if modes[-1] >= n:
        raise ValueError(f"k_high={k_high} puts mode {modes[-1]} beyond the grid's n − 1 = {n - 1}")
    x = np.linspace(-1.0, 1.0, n + 1)
    xt = torch.as_tensor(x, dtype=torch.float32)[:, None]
    exact, g = field_on_grid(problem.exact, x[:, None]), field_on_grid(problem.source, x[:, None])
    h = 2.0 / n
    counts = np.zeros(1, dtype=int)
    trace = np.zeros((1, n + 1))
    if method != "jacobi":
        model = tanh_net(1, width, 2, generator=torch.Generator().manual_seed(seed))
        points = grid_points(problem, n)
        loss_name = "pinn" if method == "pinn" else "ritz"

        def loss() -> dict[str, Tensor]:
            if loss_name == "ritz":
                return ritz_loss(model, problem, points, beta=2000.0)
            terms = pinn_loss(model, problem, points)
            terms["total"] = terms["pde"] + 1000.0 * terms["bc"]
            return terms

        def grid_output(net: nn.Module, _step: int) -> dict[str, np.ndarray]:
            with torch.no_grad():
                return {"u": _u(net, xt).double().numpy()}

        history = fit(model, loss, steps=steps, lr=2e-3, record_every=max(1, steps // 25), probe=grid_output)
        counts, trace = history.steps, history.probes["u"]
    if method in ("jacobi", "hybrid"):
        start = trace[-1].copy()
        start[0] = start[-1] = 0.0
        record = _log_counts(iterations, 30)
        run = jacobi(start, g, h, iterations, record_at=record)
        offset = counts[-1] if method == "hybrid" else 0
        counts = run.iterations + offset if method == "jacobi" else np.concatenate([counts, run.iterations[1:] + offset])
        trace = run.values if method == "jacobi" else np.concatenate([trace, run.values[1:]])
    solution = trace[-1]
    return {"x": x, "exact": exact, "solution": solution, "max_error": float(np.abs(solution - exact).max()),
            "modes": modes, "counts": counts, "mode_errors": mode_errors(trace, exact, modes), "method": method}


def draw_explorer(result: dict, fig) -> None:
    """Solution vs exact, the pointwise error, and Δ_F(j) of the three modes along the run."""
    ax1, ax2, ax3 = fig.subplots(1, 3)
    ax1.plot(result["x"], result["exact"], "--", color="0.35", label="exact")
    ax1.plot(result["x"], result["solution"], label=result["method"])
    ax1.set_title(f"solution (max error {result['max_error']:.3g})")
    ax1.set_xlabel("x")
    ax1.legend()
    ax2.semilogy(result["x"], np.abs(result["solution"] - result["exact"]) + 1e-12)
    ax2.set_title("|u - u_ref|")
    ax2.set_xlabel("x")
    for j, curve in zip(result["modes"], result["mode_errors"].T):
        ax3.plot(np.maximum(result["counts"], 1), curve, label=f"j={j}")
    ax3.set_xscale("log")
    ax3.set_ylim(0, 1.2)
    label = {"jacobi": "Jacobi iteration", "hybrid": "net step, then Jacobi iteration"}
    ax3.set_xlabel(label.get(result["method"], "training step"))
    ax3.set_title("per-mode error Delta_F(j)")
    ax3.legend()


def make_explorer():
    """The chapter's panel: the equation's high frequency, the method, width, steps, Jacobi iterations."""
    from . import widgets as w

    controls = {
        "k_high": w.float_slider(24.0, 4.0, 48.0, 4.0, "high frequency k in g"),
        "method": w.dropdown("ritz", EXPLORER_METHODS, "method"),
        "width": w.int_slider(50, 10, 200, "width", step=10),
        "steps": w.int_slider(600, 50, 3000, "net steps", step=50),
        "iterations": w.log_slider(1000, 10, 100_000, "Jacobi iterations"),
    }

    def compute(k_high: float, method: str, width: int, steps: int, iterations: float) -> dict:
        return explore_solver(k_high, method, int(width), int(steps), int(round(iterations)))

    return w.Explorer("Solving -u'' = g (15.18): network vs Jacobi", controls, compute, draw_explorer,
                      figsize=(11.5, 3.3))
