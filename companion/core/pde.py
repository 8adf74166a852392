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

:func:`fit` and :func:`fit_wan` train a solver through the package's one engine (:mod:`companion.core.train`),
where its networks and points are: the chapter's experiments (:mod:`companion.experiments.ch15_pinns`) draw them on
the CPU and move both to the settings' device (:func:`companion.core.train.on_device`, :meth:`Points.to`); a field of
a :class:`Problem` computes on the device of the points it is given.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor, nn
from companion.core.train import History, descend, make_optimizer, run
from companion.kit.seeds import generator

Field = Callable[[Tensor], Tensor]   # (N, d) -> (N,)
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

    ``energy_form`` marks −div(A∇u) (−Δ when A = 1): it has the Ritz energy ∫ ½ A|∇u|² − f u (15.11) and the
    weak form (15.14).  ``coefficient`` is A, a field (N, d) → (N,); ``None`` means A = 1.
    """

    name: str
    apply: Callable[[Tensor, Tensor], Tensor]
    energy_form: bool = False
    coefficient: Field | None = None


NEG_LAPLACIAN = Operator("−Δu", neg_laplacian, energy_form=True)


def divergence_operator(coefficient: Field, name: str = "−div(A∇u)") -> Operator:
    """−div(A(x)∇u) for a scalar coefficient field A (the multiscale elliptic equation (5.7) of §5.1.2)."""
    def apply(u: Tensor, x: Tensor) -> Tensor:
        flux = coefficient(x).reshape(-1, 1) * gradient(u, x)          # (N, d)
        return -sum(gradient(flux[:, k], x)[:, k] for k in range(x.shape[1]))
    return Operator(name, apply, energy_form=True, coefficient=coefficient)


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
        probe = self.random_points(_PROBE_POINTS, generator(0))
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


def manufactured_poisson(exact: Field, domain: Sequence[tuple[float, float]], name: str = "",
                         operator: Operator = NEG_LAPLACIAN) -> Problem:
    """𝒩u = f with f := 𝒩(exact) computed by autograd and u = exact on ∂Ω (a manufactured solution); 𝒩 is −Δ
    unless ``operator`` says otherwise (e.g. :func:`divergence_operator`)."""
    def source(x: Tensor) -> Tensor:
        with torch.enable_grad():
            x = x.detach().requires_grad_(True)
            return operator.apply(exact(x).reshape(-1), x).detach()
    return Problem(operator, source, tuple(domain), boundary=exact, exact=exact, name=name)


# ----------------------------------------------------------------------------------------------
# Collocation points
# ----------------------------------------------------------------------------------------------
@dataclass
class Points:
    """Where the losses are evaluated.

    interior (N, d) with quadrature weights (N,); boundary (N_b, d) on the faces of the spatial axes, with
    ``boundary_weights`` (N_b,) their share of the integrals over Ω (None: no share, as for Monte Carlo points);
    initial (N_0, d) on t = t_0; optional observations ``data`` = (x_m (M, d), û_m (M,)) for L_data (15.8).
    All the weights together sum to |Ω| (Monte Carlo: |Ω|/N inside; grid: the trapezoid rule, :func:`grid_points`).
    """

    interior: Tensor
    weights: Tensor
    boundary: Tensor
    initial: Tensor
    data: tuple[Tensor, Tensor] | None = None
    boundary_weights: Tensor | None = None

    def quadrature(self) -> tuple[Tensor, Tensor]:
        """Nodes (N_q, d) and weights (N_q,) of the integrals over Ω (:func:`ritz_loss`, :func:`wan_loss`): the
        interior points, then the boundary points that carry a share."""
        if self.boundary_weights is None:
            return self.interior, self.weights
        return torch.cat([self.interior, self.boundary]), torch.cat([self.weights, self.boundary_weights])

    def to(self, device: torch.device | str) -> Points:
        """The same points on ``device`` (drawn on the CPU, where a seed gives the same points on every machine,
        then moved to where the solver trains)."""
        data = None if self.data is None else (self.data[0].to(device), self.data[1].to(device))
        shares = None if self.boundary_weights is None else self.boundary_weights.to(device)
        return Points(self.interior.to(device), self.weights.to(device), self.boundary.to(device),
                      self.initial.to(device), data, shares)


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
    """The uniform grid x_i = lo + i·h, i = 0 … n per axis (steady problems), weighted by the trapezoid rule: an
    interior node h^d, a node on ∂Ω h^d halved once per face it lies on; the nodes on ∂Ω are also the boundary points.

    (15.19) sums the interior nodes i = 1 … n−1 with weight h and leaves out the end nodes' h/2: a first-order
    error, small in 1-D at the book's n = 1000, but the same rule in 2-D leaves a strip of width h/2 along ∂Ω out of
    the energy (4 % of Ω at n = 48; the full profile's 2-D Deep Ritz then misses its 0.08 bound). With the end nodes
    the weights sum to |Ω| and the rule is second order.
    """
    if problem.time_axis is not None:
        raise ValueError("grid_points is for steady problems (time_axis=None)")
    if n < 2:
        raise ValueError(f"need n ≥ 2 grid intervals, got {n}")
    axes = [torch.linspace(lo, hi, n + 1) for lo, hi in problem.domain]
    nodes = torch.stack(torch.meshgrid(*axes, indexing="ij"), -1).reshape(-1, problem.dim)   # ((n+1)^d, d)
    share = torch.ones(len(nodes))  # of the cell volume h^d: halved once per face a node lies on
    for k, (lo, hi) in enumerate(problem.domain):
        share[(nodes[:, k] == lo) | (nodes[:, k] == hi)] /= 2
    on_edge = share < 1
    h = float(np.prod([(hi - lo) / n for lo, hi in problem.domain]))
    interior = nodes[~on_edge]
    return Points(interior, torch.full((len(interior),), h), nodes[on_edge], torch.empty(0, problem.dim),
                  boundary_weights=h * share[on_edge])


# ----------------------------------------------------------------------------------------------
# Losses
# ----------------------------------------------------------------------------------------------
def values(model: nn.Module, x: Tensor) -> Tensor:
    """The network's solution u_θ at points x (N, d), as a vector (N,)."""
    return model(x).reshape(-1)          # (N, 1) -> (N,)


def pinn_loss(model: nn.Module, problem: Problem, points: Points) -> dict[str, Tensor]:
    """Least-squares (PINN) loss (15.4) = L_PDE (15.5) + L_IC (15.6) + L_BC (15.7) + L_data (15.8).

    Each term is a mean squared residual; L_IC averages over the given initial derivatives.
    Returns the terms and their sum under ``"total"``.
    """
    x = points.interior.detach().requires_grad_(True)
    residual = problem.operator.apply(values(model, x), x) - problem.evaluate(problem.source, points.interior)
    terms = {"pde": (residual ** 2).mean()}
    if problem.time_axis is not None:
        x0 = points.initial.detach().requires_grad_(True)
        u0 = values(model, x0)
        terms["ic"] = sum(((partial(u0, x0, problem.time_axis, k) if k else u0)
                           - problem.evaluate(f, points.initial)).pow(2).mean()
                          for k, f in enumerate(problem.initial)) / len(problem.initial)
    if len(points.boundary):
        terms["bc"] = boundary_penalty(model, problem, points)
    if points.data is not None:
        xd, ud = points.data
        terms["data"] = (values(model, xd) - ud.reshape(-1)).pow(2).mean()
    terms["total"] = sum(terms.values())
    return terms


def _require_energy_form(problem: Problem, method: str) -> None:
    if not problem.operator.energy_form or problem.time_axis is not None:
        raise ValueError(f"{method} needs a steady problem −div(A∇u) = f (−Δu = f); got operator {problem.operator.name!r}"
                         f"{' with a time axis' if problem.time_axis is not None else ''}")


def ritz_loss(model: nn.Module, problem: Problem, points: Points, beta: float = 1.0) -> dict[str, Tensor]:
    """Deep Ritz loss (15.12): E(u_θ) + β·(1/N_BC) Σ |u_θ(x_k) − g(x_k)|², E of (15.11) by quadrature.

    E(u) ≈ Σ_i w_i (½|∇u(x_i)|² − f(x_i) u(x_i)) over the points' quadrature (:meth:`Points.quadrature`); on the
    grid this is (15.19) with its end nodes added at weight h/2 (:func:`grid_points`), and (15.19)'s penalty
    β_book (u(x_0)² + u(x_n)²) is a sum over the two end points, i.e. β = 2 β_book here.
    For −div(A∇u) = f (an operator with a ``coefficient``) the energy is Σ_i w_i (½A(x_i)|∇u(x_i)|² − f u).
    """
    _require_energy_form(problem, "the Ritz energy")
    if not beta >= 0:
        raise ValueError(f"beta must be ≥ 0, got {beta}")
    nodes, w = points.quadrature()
    x = nodes.detach().requires_grad_(True)
    u = values(model, x)
    stiffness = gradient(u, x).pow(2).sum(1)
    if problem.operator.coefficient is not None:
        stiffness = problem.evaluate(problem.operator.coefficient, nodes) * stiffness
    density = 0.5 * stiffness - problem.evaluate(problem.source, nodes) * u
    terms = {"energy": (w * density).sum(), "bc": boundary_penalty(model, problem, points)}
    terms["total"] = terms["energy"] + beta * terms["bc"]
    return terms


def cutoff(problem: Problem, x: Tensor) -> Tensor:
    """Π_k (x_k − lo_k)(hi_k − x_k) / ((hi_k − lo_k)/2)²: zero on ∂Ω, one at the centre; shape (N,)."""
    out = torch.ones(x.shape[0], dtype=x.dtype, device=x.device)
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
    nodes, w = points.quadrature()
    x = nodes.detach().requires_grad_(True)
    u = values(u_model, x)
    phi = cutoff(problem, x) * values(phi_model, x)
    f = problem.evaluate(problem.source, nodes)
    flux = (gradient(u, x) * gradient(phi, x)).sum(1)
    if problem.operator.coefficient is not None:                       # ∫ A ∇u·∇φ for −div(A∇u)
        flux = problem.evaluate(problem.operator.coefficient, nodes) * flux
    r = (w * (flux - f * phi)).sum()
    return r ** 2 / (w * phi ** 2).sum() if normalise else r ** 2


def boundary_penalty(model: nn.Module, problem: Problem, points: Points) -> Tensor:
    """(1/N_BC) Σ |u(x_k) − g(x_k)|², the boundary term L_BC (15.7)."""
    return (values(model, points.boundary) - problem.evaluate(problem.boundary, points.boundary)).pow(2).mean()


# ----------------------------------------------------------------------------------------------
# Training
# ----------------------------------------------------------------------------------------------
def fit(model: nn.Module, loss_fn: Callable[[], dict[str, Tensor]], *, steps: int, lr: float,
        optimizer: str = "adam", record_every: int = 100, final_lr: float | None = None,
        probe: Callable[[nn.Module, int], dict[str, float | np.ndarray]] | None = None,
        desc: str = "solver") -> History:
    """Minimise ``loss_fn()["total"]`` over ``model``'s parameters with the engine (:func:`~companion.core.train.run`).

    The history has the total loss as ``train_loss`` and every other term of ``loss_fn()`` and every
    value of ``probe(model, step)`` as a series (``history["pde"]``, ``history["u"]`` …), recorded
    every ``record_every`` steps, before the step of that index.  ``final_lr`` decays the learning
    rate geometrically from ``lr`` to ``final_lr`` over the run (default: constant).
    """
    if steps < 0 or record_every < 1 or not lr > 0:
        raise ValueError(f"need steps ≥ 0, record_every ≥ 1, lr > 0; got {steps}, {record_every}, {lr}")
    opt = make_optimizer(optimizer, model.parameters(), lr)
    if final_lr is not None and not 0 < final_lr <= lr:
        raise ValueError(f"final_lr must lie in (0, lr = {lr}], got {final_lr}")
    decay = 1.0 if final_lr is None or steps == 0 else (final_lr / lr) ** (1.0 / steps)
    schedule = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: decay ** step)

    def record(step: int) -> dict[str, object]:
        terms = {k: float(v.detach()) for k, v in loss_fn().items()}
        row = {"train_loss": terms.pop("total"), **terms}
        if probe is not None:
            row.update(probe(model, step))
        return row

    return run(descend(opt, lambda: loss_fn()["total"], schedule=schedule), steps=steps, record=record,
               record_every=record_every, desc=desc)


def fit_wan(u_model: nn.Module, phi_model: nn.Module, problem: Problem, points: Points, *, steps: int,
            lr_u: float = 1e-3, lr_phi: float = 1e-3, beta: float = 100.0, normalise: bool = True,
            record_every: int = 50) -> History:
    """min_θ max_η (15.16) by alternating Adam steps: η ascends the weak loss, θ descends weak + β·L_BC.

    One update of the engine is two :func:`~companion.core.train.descend` steps, the adversary's first
    (Adam with ``maximize=True``).  Records the weak loss (``train_loss`` and ``history["weak"]``), the
    boundary term ``"bc"`` and ``"phi_norm"`` = ‖φ‖_{L²} (which the book's unnormalised loss drives to
    infinity).
    """
    if steps < 1 or record_every < 1:
        raise ValueError(f"need steps ≥ 1 and record_every ≥ 1, got {steps}, {record_every}")

    def weak() -> Tensor:
        return wan_loss(u_model, phi_model, problem, points, normalise=normalise)

    ascend_phi = descend(torch.optim.Adam(phi_model.parameters(), lr=lr_phi, maximize=True), weak)
    descend_u = descend(torch.optim.Adam(u_model.parameters(), lr=lr_u),
                        lambda: weak() + beta * boundary_penalty(u_model, problem, points))

    def update(step: int) -> None:
        ascend_phi(step)
        descend_u(step)

    def record(step: int) -> dict[str, float]:
        loss = float(weak().detach())
        with torch.no_grad():
            nodes, w = points.quadrature()
            norm = float((w * (cutoff(problem, nodes) * values(phi_model, nodes)) ** 2).sum().sqrt())
            bc = float(boundary_penalty(u_model, problem, points))
        return {"train_loss": loss, "weak": loss, "bc": bc, "phi_norm": norm}

    return run(update, steps=steps, record=record, record_every=record_every, desc="WAN")


def sine_poisson(dim: int = 1, freqs: Sequence[float] = (1.0, 4.0), amps: Sequence[float] = (1.0, 0.2)) -> Problem:
    """−Δu = f on (−1, 1)^d with exact u = Σ_a A_a Π_k sin(ω_a π x_k), u = exact on ∂Ω.

    Each product of sines is an eigenfunction of −Δ: f = Σ_a A_a d(ω_a π)² Π_k sin(ω_a π x_k), in closed form
    (the losses evaluate f at every step; :func:`companion.core.pde.manufactured_poisson` would differentiate u
    twice by autograd each time — tests/test_pde.py checks that the two agree)."""
    if dim not in (1, 2, 3):
        raise ValueError(f"dim must be 1, 2 or 3, got {dim}")
    if len(freqs) != len(amps) or not freqs:
        raise ValueError(f"freqs {tuple(freqs)} and amps {tuple(amps)} must be non-empty and of equal length")

    def exact(x: Tensor) -> Tensor:
        return sum(a * torch.prod(torch.sin(w * math.pi * x), dim=1) for w, a in zip(freqs, amps))

    def source(x: Tensor) -> Tensor:
        return sum(a * dim * (w * math.pi) ** 2 * torch.prod(torch.sin(w * math.pi * x), dim=1)
                   for w, a in zip(freqs, amps))

    return Problem(NEG_LAPLACIAN, source, ((-1.0, 1.0),) * dim, boundary=exact, exact=exact,
                   name=f"sines {tuple(freqs)} in {dim}-D")
