"""The experiments of chapter 15 (神经网络求解微分方程), built on :mod:`companion.core.pde`.

* the book's problems: Newton's toy (15.1), the Poisson problems of §15.2–15.4 and 图15.1;
* the ``run_*`` functions, cached on disk: the Newton toy of §15.1 (polynomial vs network), PINN vs
  Deep Ritz, the frequency contrast of a network and Jacobi (图15.1) with the hybrid network → Jacobi
  solver, and the multiscale DNN of §15.5.1;
* the chapter's claims (:mod:`companion.kit.claims`): each ``ClaimSpec`` beside its ``check_*`` function,
  which the notebook, the robustness run and the negative controls (``tests/test_controls_ch15.py``) call;
* :func:`make_explorer`, the chapter's instructor panel.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike
import torch
from torch import Tensor, nn

from companion.kit.bounds import OPTIONAL_SEED, Bounds, integer, whole
from companion.kit.cache import cached
from companion.kit.exercises import feedback
from companion.kit.seeds import active_seed, generator, numpy_rng
from companion.kit.claims import ClaimSpec, Verdict, compare, identity, is_never, threshold
from companion.core.classical import fd_solution, iterate, jacobi, jacobi_eigenvalues, mode_errors
from companion.core.nets import MLP, MscaleDNN
from companion.core.pde import (NEG_LAPLACIAN, Field, Points, Problem, fit, fit_wan, grid_points, newton_operator,
                  pinn_loss, ritz_loss, sample_points, sine_poisson, values, wan_loss)
from companion.core.spectral import first_step_below
from companion.core.train import History, on_device

METHODS = ("pinn", "ritz")
SAMPLINGS = ("grid", "random")

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

    zero = lambda t: torch.zeros(t.shape[0], dtype=t.dtype, device=t.device)  # noqa: E731
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

    def zero(x: Tensor) -> Tensor:
        return torch.zeros(x.shape[0], dtype=x.dtype, device=x.device)

    return Problem(NEG_LAPLACIAN, source, ((-1.0, 1.0),), boundary=zero, exact=exact, name=f"(15.18), k={k_high:g}")


def book_modes(k_high: float = 24.0) -> tuple[int, int, int]:
    """DST modes j that carry sin 4x, sin 8x and sin(k x) of (15.18) on the grid of (−1, 1).

    sin(jπ(x+1)/2) has angular frequency jπ/2, so sin(kx) sits near j = 2k/π; the solution is odd,
    so only even j appear: j = 2, 6, 16 for k = 4, 8, 24.
    """
    return tuple(int(2 * round(k / math.pi)) for k in (4.0, 8.0, k_high))  # type: ignore[return-value]


def field_on_grid(fn: Field, x: np.ndarray) -> np.ndarray:
    """A field of a problem evaluated in float64 at the points x (N, d), as a NumPy array (N,)."""
    with torch.no_grad():
        return fn(torch.as_tensor(x, dtype=torch.float64)).reshape(-1).numpy()


def max_error(model: nn.Module, problem: Problem, x: Tensor) -> float:
    """‖u_θ − u‖_∞ on the points x (the book's error measure of 图15.1(d))."""
    with torch.no_grad():
        return float((values(model, x) - problem.evaluate(problem.exact, x)).abs().max())


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
        return values(model, x).numpy(), problem.evaluate(problem.exact, x).numpy()


@cached
def run_newton(method: str, m: float = 1.0, horizon: float = 2.0, n_points: int = 64, steps: int = 2000,
               lr: float = 1e-2, width: int = 32, seed: int = 0) -> SolveResult:
    """Solve (15.1) by least squares (15.2) with the initial data as soft penalties (the end of §15.1).

    ``method`` = "polynomial" (the degree-4 ansatz, L-BFGS with unit steps: the loss is quadratic in
    its five coefficients; ``lr`` is ignored) or "net" (a tanh network of ``width``, Adam at ``lr``).  Collocation points are random in [0, T].
    """
    problem = newton_problem(m, horizon)
    gen = generator(seed)
    if method == "polynomial":
        model: nn.Module = Polynomial(4)
        optimizer, lr = "lbfgs", 1.0                       # a quadratic loss: quasi-Newton steps of length 1
    elif method == "net":
        model = tanh_net(1, width, 2, generator=gen)
        optimizer = "adam"
    else:
        raise ValueError(f"unknown method {method!r}; choose 'polynomial' or 'net'")
    points = sample_points(problem, n_points, n_initial=1, generator=gen)
    with on_device(model) as device:                   # drawn on the CPU, solved on the settings' device
        points = points.to(device)
        history = fit(model, lambda: pinn_loss(model, problem, points), steps=steps, lr=lr, optimizer=optimizer,
                      record_every=max(1, steps // 50))
    x = torch.linspace(0.0, horizon, 401)[:, None]
    solution, exact = _evaluate(model, problem, x)
    extra = {"coefficients": model.coef.detach().numpy().copy()} if method == "polynomial" else {}
    return SolveResult(method, x.numpy(), exact, solution, history, extra)


NEWTON = ClaimSpec("ch15.newton-least-squares", "§15.1",
                   "the polynomial ansatz and the small network both solve Newton's law with max error below 1e-2 "
                   "on [0, 2]")


def check_newton(polynomial: SolveResult, network: SolveResult) -> Verdict:
    """§15.1: both least-squares solutions of (15.1) have max error < 1e-2 on the evaluation grid."""
    return NEWTON.judge(threshold("polynomial max error", polynomial.max_error, "<", 1e-2),
                        threshold("network max error", network.max_error, "<", 1e-2))


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
    gen = generator(seed)
    if sampling not in SAMPLINGS:
        raise ValueError(f"unknown sampling {sampling!r}; choose one of {', '.join(SAMPLINGS)}")
    model = tanh_net(dim, width, depth, generator=gen)
    grid = grid_points(problem, n_grid)

    with on_device(model) as device:       # points drawn on the CPU (from the seed's generator), solved on the device
        grid_on_device = grid.to(device)

        def draw() -> Points:
            if sampling == "grid":
                return grid_on_device
            return sample_points(problem, len(grid.interior), len(grid.boundary), generator=gen).to(device)

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


POISSON = ClaimSpec("ch15.pinn-ritz-poisson", "(15.4), (15.12)",
                    "a PINN and a Deep Ritz network both reach max error below 0.08 (under 7% of max|u|)")


def check_pinn_ritz(pinn: SolveResult, ritz: SolveResult) -> Verdict:
    """(15.4), (15.12): the PINN and the Deep Ritz solutions both have max error < 0.08."""
    return POISSON.judge(threshold("PINN max error", pinn.max_error, "<", 0.08),
                         threshold("Deep Ritz max error", ritz.max_error, "<", 0.08))


# ----------------------------------------------------------------------------------------------
# (15.13)–(15.16): the book's WAN loss is unbounded in the test function
# ----------------------------------------------------------------------------------------------
class ScaledField(nn.Module):
    """A network's output times a constant c — or, with ``squash``, tanh(c·φ): a test function bounded by 1."""

    def __init__(self, net: nn.Module, c: float, squash: bool = False) -> None:
        super().__init__()
        self.net, self.c, self.squash = net, float(c), squash

    def forward(self, x: Tensor) -> Tensor:
        y = self.c * self.net(x)
        return torch.tanh(y) if self.squash else y


@dataclass
class WanScaling:
    """The WAN loss of one (u_θ, φ_η) pair with φ scaled by each c: the book's (15.15) and the normalised one."""

    scales: np.ndarray       # (C,) the factors c
    book: np.ndarray         # (C,) r(cφ)², the book's loss (15.15)
    normalised: np.ndarray   # (C,) r(cφ)² / ‖cφ‖², the companion's loss
    squash: bool             # the test functions were tanh(cφ) instead of cφ


@cached
def wan_scaling(scales: Sequence[float] = (1.0, 10.0, 100.0), width: int = 20, depth: int = 2, n_grid: int = 128,
                squash: bool = False, seed: int = 0) -> WanScaling:
    """Evaluate both WAN losses of a random u_θ against cφ_η (or tanh(cφ_η) with ``squash``) for each c.

    The problem is −u″ = π² sin πx on (−1, 1) (exact u = sin πx); u_θ and φ_η are random tanh nets of
    the given size (seeded), so u_θ has a residual for the test function to detect.
    """
    if not scales or min(scales) <= 0:
        raise ValueError(f"scales must be positive factors, got {tuple(scales)}")
    problem = sine_poisson(1, freqs=(1.0,), amps=(1.0,))
    points = grid_points(problem, n_grid)
    gen = generator(seed)
    u_net, phi_net = tanh_net(1, width, depth, generator=gen), tanh_net(1, width, depth, generator=gen)
    book, normalised = [], []
    for c in scales:
        phi = ScaledField(phi_net, c, squash)
        book.append(float(wan_loss(u_net, phi, problem, points, normalise=False).detach()))
        normalised.append(float(wan_loss(u_net, phi, problem, points, normalise=True).detach()))
    return WanScaling(np.asarray(scales, dtype=float), np.asarray(book), np.asarray(normalised), squash)


WAN_SCALING = ClaimSpec("ch15.wan-loss-scaling", "(15.15)",
                        "the book's WAN loss grows like c² when the test function is scaled by c (unbounded max "
                        "over η); the normalised loss is unchanged", kind="identity")


def check_wan_scaling(result: WanScaling) -> Verdict:
    """(15.15): L_book(cφ) = c² L_book(φ) and L_norm(cφ) = L_norm(φ) for every c, to a relative 1e-3.

    A zero loss at c = 1 (no residual to detect) gives NaN deviations: the condition fails.
    """
    c = result.scales / result.scales[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        book_dev = float(np.max(np.abs(result.book / (c ** 2 * result.book[0]) - 1)))
        norm_dev = float(np.max(np.abs(result.normalised / result.normalised[0] - 1)))
    book_dev = math.nan if not math.isfinite(book_dev) else book_dev
    norm_dev = math.nan if not math.isfinite(norm_dev) else norm_dev
    return WAN_SCALING.judge(identity("book: max|L(cφ)/(c²L(φ)) − 1|", book_dev, 1e-3),
                             identity("normalised: max|L(cφ)/L(φ) − 1|", norm_dev, 1e-3),
                             book=result.book, normalised=result.normalised)


@dataclass
class WanRun:
    """The adversarial game (15.16) on −u″ = π² sin πx: the history of :func:`companion.core.pde.fit_wan`
    (``"weak"``, ``"bc"``, ``"phi_norm"``) and u_θ's max error on the grid afterwards."""

    normalise: bool
    history: History
    max_error: float


@cached
def run_wan(normalise: bool, steps: int = 300, lr_u: float = 3e-3, lr_phi: float = 1e-2, record_every: int = 25,
            width: int = 20, depth: int = 2, n_grid: int = 128, seed: int = 0) -> WanRun:
    """Train u_θ and φ_η (tanh nets of the given size, seeded) by alternating Adam steps on the book's loss
    (15.15) (``normalise=False``) or the normalised one, on the grid of −u″ = π² sin πx."""
    problem = sine_poisson(1, freqs=(1.0,), amps=(1.0,))
    points = grid_points(problem, n_grid)
    gen = generator(seed)
    u_net, phi_net = tanh_net(1, width, depth, generator=gen), tanh_net(1, width, depth, generator=gen)
    with on_device(u_net) as device, on_device(phi_net):
        history = fit_wan(u_net, phi_net, problem, points.to(device), steps=steps, lr_u=lr_u, lr_phi=lr_phi,
                          normalise=normalise, record_every=record_every)
    return WanRun(normalise, history, max_error(u_net, problem, points.interior))


# ----------------------------------------------------------------------------------------------
# 图15.1: the network fits low modes first, Jacobi high modes first; the hybrid solver
# ----------------------------------------------------------------------------------------------
@dataclass
class ModeTrajectory:
    """A solver's per-mode error Δ_F(j) along its run on (15.18): what 图15.1(b, c) plot.

    ``counts`` (T,) are training steps or sweeps, ``errors`` (T, len(modes)) the DST-I errors of the
    iterates against ``reference``: ``"exact"`` (u_ref) or ``"fd"`` (the finite-difference solution).
    """

    solver: str
    counts: np.ndarray
    errors: np.ndarray
    modes: tuple[int, ...]
    n: int
    reference: str = "exact"

    def first_below(self, level: float) -> np.ndarray:
        """The first recorded count with Δ_F(j) < level, per mode; NaN where it never happened."""
        return first_step_below(self.errors, self.counts, level)


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
    random_mode_errors: np.ndarray     # (S,  len(modes)) Jacobi from the seeded random guess, against u_ref
    seconds_per_sweep: float       # CPU seconds of one Jacobi sweep (the run from zero, averaged)
    steps: int                     # the network's training steps (seconds_net is their CPU time)

    @property
    def n(self) -> int:
        return len(self.x) - 1

    @property
    def net_trajectory(self) -> ModeTrajectory:
        return ModeTrajectory("network (Deep Ritz)", self.net_steps, self.net_mode_errors, self.modes, self.n)

    @property
    def jacobi_trajectory(self) -> ModeTrajectory:
        return ModeTrajectory("Jacobi", self.jacobi_iterations, self.jacobi_mode_errors, self.modes, self.n)

    @property
    def jacobi_fd_trajectory(self) -> ModeTrajectory:
        return ModeTrajectory("Jacobi", self.jacobi_iterations, self.jacobi_fd_mode_errors, self.modes, self.n, "fd")

    @property
    def jacobi_random_trajectory(self) -> ModeTrajectory:
        """Jacobi from the seeded random initial guess (图15.1(c) as a run that depends on the seed)."""
        return ModeTrajectory("Jacobi (random start)", self.jacobi_iterations, self.random_mode_errors, self.modes,
                              self.n)

    @property
    def seconds_per_step(self) -> float:
        """CPU seconds of one training step of the network (its whole training time over its steps)."""
        return self.seconds_net / max(self.steps, 1)

    def net_seconds(self, step: int | np.ndarray) -> np.ndarray:
        """CPU seconds the network has trained after ``step`` steps: the run time of 图15.1(d)'s green stars."""
        return np.asarray(step, dtype=float) * self.seconds_per_step

    def jacobi_seconds(self, sweeps: int | np.ndarray) -> np.ndarray:
        """CPU seconds of ``sweeps`` Jacobi sweeps on this grid."""
        return np.asarray(sweeps, dtype=float) * self.seconds_per_sweep


def _log_counts(last: int, count: int) -> np.ndarray:
    return np.unique(np.concatenate([[0], np.geomspace(1, max(last, 1), count).astype(int), [last]]))


@cached
def run_frequency_contrast(k_high: float = 24.0, n: int = 1000, width: int = 100, depth: int = 3, steps: int = 2000,
                           lr: float = 1e-3, final_lr: float | None = None, beta: float = 2000.0, record_every: int = 50,
                           jacobi_iterations: int = 100_000, switch_steps: tuple[int, ...] = (500, 2000),
                           hybrid_iterations: int = 2000, n_train: int | None = None, start_std: float = 0.5,
                           seed: int = 0) -> ContrastResult:
    """The experiment of 图15.1 on (15.18): a Deep Ritz net (15.19), Jacobi from zero, and the hybrid.

    The net is trained full batch with the grid Ritz loss (15.19) (β_book = 1000 there is ``beta`` = 2000
    here, see :func:`ritz_loss`) on the ``n_train`` + 1 points of a uniform grid (default: the solver's
    n + 1, the book's 1001); the loss is a quadrature of the Ritz energy, so a coarser training grid changes
    only its accuracy, O(h²).  The net's output on the solver's grid is recorded every ``record_every``
    steps.  For each M in ``switch_steps`` the hybrid starts Jacobi from the net's output at step M
    (boundary values reset to the data).  Jacobi also runs from a seeded random initial guess: interior
    values i.i.d. N(0, ``start_std``²) (boundary values the data), every grid mode excited at once.
    The CPU time of the net's training and of a Jacobi sweep are measured (``time.process_time``), so
    that 图15.1(d) can be drawn against run time, as the book does.
    """
    if not start_std >= 0:
        raise ValueError(f"start_std must be ≥ 0, got {start_std}")
    bad = [m for m in switch_steps if m % record_every or not 0 <= m <= steps]
    if bad:
        raise ValueError(f"switch_steps {bad} must be recorded steps: multiples of record_every={record_every} "
                         f"in [0, {steps}]")
    problem = book_poisson(k_high)
    modes = book_modes(k_high)
    points = grid_points(problem, n if n_train is None else n_train)
    x = np.linspace(-1.0, 1.0, n + 1)
    xt = torch.as_tensor(x, dtype=torch.float32)[:, None]
    exact, g = field_on_grid(problem.exact, x[:, None]), field_on_grid(problem.source, x[:, None])
    h = 2.0 / n
    fd = fd_solution(g, h)

    start = time.process_time()
    model = tanh_net(1, width, depth, generator=generator(seed))

    with on_device(model) as device:
        points, xt = points.to(device), xt.to(device)

        def grid_output(net: nn.Module, _step: int) -> dict[str, np.ndarray]:
            with torch.no_grad():
                return {"u": values(net, xt).double().cpu().numpy()}

        history = fit(model, lambda: ritz_loss(model, problem, points, beta=beta), steps=steps, lr=lr,
                      final_lr=final_lr, record_every=record_every, probe=grid_output)
    seconds_net = time.process_time() - start
    outputs = history["u"]                                         # (T, n+1)

    start = time.process_time()
    counts = np.union1d(_log_counts(jacobi_iterations, 80),   # the hybrid's sweep count and ten times it too
                        [r for r in (hybrid_iterations, 10 * hybrid_iterations) if r <= jacobi_iterations])
    run = jacobi(np.zeros(n + 1), g, h, jacobi_iterations, record_at=counts)
    seconds_per_sweep = (time.process_time() - start) / max(jacobi_iterations, 1)
    guess = np.zeros(n + 1)
    guess[1:-1] = start_std * numpy_rng(seed, stream=1).standard_normal(n - 1)
    random_run = jacobi(guess, g, h, jacobi_iterations, record_at=counts)
    hybrid_counts = _log_counts(hybrid_iterations, 40)
    hybrid = {}
    for m in switch_steps:
        u0 = outputs[history.at(m)].copy()
        u0[0] = u0[-1] = 0.0
        snaps = jacobi(u0, g, h, hybrid_iterations, record_at=hybrid_counts)["u"]
        hybrid[int(m)] = np.abs(snaps - exact).max(axis=1)
    seconds_jacobi = time.process_time() - start

    return ContrastResult(
        x, exact, fd, modes, history.steps, outputs, mode_errors(outputs, exact, modes),
        np.abs(outputs - exact).max(axis=1), run.steps, mode_errors(run["u"], exact, modes),
        mode_errors(run["u"], fd, modes), np.abs(run["u"] - exact).max(axis=1), hybrid_counts, hybrid,
        seconds_net, seconds_jacobi, mode_errors(random_run["u"], exact, modes), seconds_per_sweep, steps)


def classical_run(method: str = "jacobi", k_high: float = 24.0, n: int = 1000, iterations: int = 1000,
                  reference: str = "exact", points: int = 40) -> ModeTrajectory:
    """Jacobi or Gauss–Seidel sweeps on (15.18) from zero: Δ_F(j) of the book's modes at log-spaced counts.

    ``reference`` = ``"exact"`` (against u_ref, as 图15.1(c)) or ``"fd"`` (against the finite-difference
    solution the iteration converges to, where Jacobi's error in mode j is exactly |cos(jπ/n)|^t).
    """
    if reference not in ("exact", "fd"):
        raise ValueError(f"unknown reference {reference!r}; choose 'exact' or 'fd'")
    problem, modes = book_poisson(k_high), book_modes(k_high)
    x = np.linspace(-1.0, 1.0, n + 1)[:, None]
    g = field_on_grid(problem.source, x)
    target = field_on_grid(problem.exact, x) if reference == "exact" else fd_solution(g, 2.0 / n)
    run = iterate(np.zeros(n + 1), g, 2.0 / n, iterations, method=method, record_at=_log_counts(iterations, points))
    name = {"jacobi": "Jacobi", "gauss-seidel": "Gauss–Seidel"}[method]
    return ModeTrajectory(name, run.steps, mode_errors(run["u"], target, modes), modes, n, reference)


NET_LOW_FIRST = ClaimSpec("ch15.net-low-first", "图15.1(b)",
                          "the network fits the low mode j=2 (Delta_F < 0.1) while the high mode j=16 is still "
                          "unfitted (Delta_F > 0.9)")


def check_net_low_first(trajectory: ModeTrajectory) -> Verdict:
    """图15.1(b): at the first recorded step with Δ_F(lowest mode) < 0.1, Δ_F(highest mode) is still > 0.9.

    A low mode that is never fitted within the run fails (the book's network does fit it).
    """
    lo, hi = trajectory.modes[0], trajectory.modes[-1]
    t_low = float(trajectory.first_below(0.1)[0])
    high_then = math.nan if is_never(t_low) else float(trajectory.errors[np.searchsorted(trajectory.counts, t_low), -1])
    return NET_LOW_FIRST.judge(threshold(f"Δ_F(j={hi}) when Δ_F(j={lo}) < 0.1", high_then, ">", 0.9),
                               step_low_fitted=t_low, last_count=int(trajectory.counts[-1]),
                               final_errors=trajectory.errors[-1], solver=trajectory.solver)


JACOBI_HIGH_FIRST = ClaimSpec("ch15.jacobi-high-first", "图15.1(c)",
                              "Jacobi from a random initial guess fits the high mode first: Delta_F(j) falls below "
                              "0.5 and below half its initial value for j=16 before j=6, for j=6 before j=2, and at "
                              "least 10 times sooner for j=16 than for j=2")


def check_jacobi_high_first(trajectory: ModeTrajectory) -> Verdict:
    """图15.1(c): let t_j be the first count at which Δ_F(j) < 0.5 and Δ_F(j) ≤ ½ Δ_F(j) at the run's start; then
    t_16 < t_6 < t_2, with t_2 ≥ 10 t_16.

    Both levels are needed with a random initial guess: its error differs from mode to mode, so a mode may start
    below 0.5 by chance (it must then still halve), or far above 1 (it must then come down to 0.5, the level at
    which half of the mode is fitted).  A mode that never gets there within the run gives NaN: its condition fails.
    """
    start = trajectory.errors[0]
    fitted = (trajectory.errors < 0.5) & (trajectory.errors <= 0.5 * start)
    t_lo, t_mid, t_hi = (float(t) for t in first_step_below(np.where(fitted, 0.0, 1.0), trajectory.counts, 0.5))
    lo, mid, hi = trajectory.modes
    ratio = math.nan if is_never(t_lo) or is_never(t_hi) or t_hi <= 0 else t_lo / t_hi
    return JACOBI_HIGH_FIRST.judge(compare(f"t(j={hi})", t_hi, "<", f"t(j={mid})", t_mid),
                                   compare(f"t(j={mid})", t_mid, "<", f"t(j={lo})", t_lo),
                                   threshold(f"t(j={lo})/t(j={hi})", ratio, ">=", 10.0),
                                   initial_errors=start, solver=trajectory.solver)


JACOBI_FACTOR = ClaimSpec("ch15.jacobi-mode-factor", "习题3",
                          "Jacobi's per-mode error against the finite-difference solution equals |cos(j pi/n)|^t "
                          "(to 1e-6)", kind="identity")


def check_jacobi_mode_factor(trajectory: ModeTrajectory) -> Verdict:
    """习题3: Δ_F(j) against the FD solution after t sweeps from zero is |cos(jπ/n)|^t, to 1e-6 at every count."""
    if trajectory.reference != "fd":
        raise ValueError("the per-mode factor holds against the finite-difference solution: pass a trajectory "
                         f"with reference='fd', not {trajectory.reference!r}")
    mu_t = np.abs(jacobi_eigenvalues(trajectory.n, trajectory.modes)) ** trajectory.counts[:, None]
    gap = float(np.abs(trajectory.errors - mu_t).max())
    return JACOBI_FACTOR.judge(identity("max_t,j |Δ_F − |cos(jπ/n)|^t|", gap, 1e-6), solver=trajectory.solver)


HYBRID = ClaimSpec("ch15.hybrid-beats-jacobi", "图15.1(d)",
                   "counted in Jacobi sweeps (the network's training not counted): after the trained network and R "
                   "sweeps the error is below half that of R sweeps from zero, and Jacobi from zero still has a larger "
                   "error after 10 R sweeps")


def check_hybrid(result: ContrastResult, switch_step: int | None = None) -> Verdict:
    """图15.1(d): hybrid (network at switch step M, then R sweeps) vs Jacobi from zero after R and 10 R sweeps.

    M is ``switch_step``, by default the last of the run's switch steps.  Jacobi from zero's max error
    after 10 R sweeps is NaN (the condition fails) if the run is shorter.  The number of sweeps from zero
    that match the hybrid is reported (NaN: not within the run).
    """
    m = max(result.hybrid_max_error) if switch_step is None else int(switch_step)
    if m not in result.hybrid_max_error:
        raise ValueError(f"no hybrid started at step {m}; the run has {sorted(result.hybrid_max_error)}")
    hybrid = float(result.hybrid_max_error[m][-1])
    r = int(result.hybrid_iterations[-1])

    def zero_after(count: int) -> float:
        hit = np.nonzero(result.jacobi_iterations == count)[0]
        return float(result.jacobi_max_error[hit[0]]) if len(hit) else math.nan

    reached = np.nonzero(result.jacobi_max_error <= hybrid)[0]
    matched = float(result.jacobi_iterations[reached[0]]) if len(reached) else math.nan
    return HYBRID.judge(compare("hybrid error", hybrid, "<", "½ Jacobi-from-zero error at R", 0.5 * zero_after(r)),
                        compare("hybrid error", hybrid, "<", "Jacobi-from-zero error at 10R", zero_after(10 * r)),
                        M=m, R=r, sweeps_from_zero_to_match=matched,
                        network_alone=float(result.net_max_error[list(result.net_steps).index(m)]))


HYBRID_TIME = ClaimSpec("ch15.hybrid-run-time", "图15.1(d)",
                        "counting the network's training time, the hybrid (network for M steps, then R Jacobi "
                        "sweeps) reaches its final max error in less CPU time than Jacobi from zero, for some M",
                        kind="exploration")


def hybrid_times(result: ContrastResult) -> dict[int, tuple[float, float, float]]:
    """图15.1(d) against run time: per switch step M, (hybrid CPU s, Jacobi-from-zero CPU s to match, matched sweeps).

    The hybrid's time is the network's M training steps plus its R sweeps; Jacobi from zero's is the sweeps it
    takes to reach the hybrid's final max error, NaN ("never") where it does not within the run.
    """
    r = int(result.hybrid_iterations[-1])
    times = {}
    for m, errors in result.hybrid_max_error.items():
        reached = np.nonzero(result.jacobi_max_error <= errors[-1])[0]
        sweeps = float(result.jacobi_iterations[reached[0]]) if len(reached) else math.nan
        times[m] = (float(result.net_seconds(m) + result.jacobi_seconds(r)), float(result.jacobi_seconds(sweeps)),
                    sweeps)
    return times


def check_hybrid_time(result: ContrastResult) -> Verdict:
    """图15.1(d), the book's run-time axis: for the best switch step M > 0, Jacobi from zero needs more CPU time to
    reach the hybrid's final max error than the hybrid (training included) took.

    The ratio (Jacobi's time over the hybrid's) is NaN for an M whose error Jacobi from zero does not reach
    within the run; NaN for every M fails the condition.  Reported: the sweeps one training step costs, and the
    CPU time a sweep would have to cost for the best M to tie.
    """
    times = {m: t for m, t in hybrid_times(result).items() if m > 0}     # M = 0 trains nothing: no hybrid
    if not times:
        raise ValueError(f"no hybrid with M > 0 training steps; the run has {sorted(result.hybrid_max_error)}")
    ratios = {m: (jac / hyb if hyb > 0 and not is_never(jac) else math.nan) for m, (hyb, jac, _) in times.items()}
    finite = {m: q for m, q in ratios.items() if math.isfinite(q)}
    best = max(finite, key=finite.get) if finite else max(times)
    hyb, jac, sweeps = times[best]
    r = int(result.hybrid_iterations[-1])
    tie = (math.nan if is_never(sweeps) or sweeps <= r
           else float(result.net_seconds(best)) / (sweeps - r))        # seconds per sweep at which both take as long
    return HYBRID_TIME.judge(threshold("Jacobi-from-zero time / hybrid time", finite.get(best, math.nan), ">", 1.0),
                             M=best, hybrid_cpu_s=hyb, jacobi_cpu_s=jac, sweeps_per_training_step=
                             result.seconds_per_step / result.seconds_per_sweep, sweep_cpu_s=result.seconds_per_sweep,
                             sweep_cpu_s_to_tie=tie)


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

    The multiscale net (:class:`companion.core.nets.MscaleDNN`, first-layer neurons scaled by
    ``scales``) uses a compactly supported activation (``"srelu"``) or ``"sin"``.  The DST error of
    every sine of the solution (mode j = 2ω on the grid of (−1, 1)) is recorded during training in
    ``history["mode_errors"]`` (T, len(freqs)).
    """
    if kind not in MSCALE_KINDS:
        raise ValueError(f"unknown kind {kind!r}; choose one of {', '.join(MSCALE_KINDS)}")
    problem = sine_poisson(1, freqs, amps)
    modes = [int(round(2 * w)) for w in freqs]
    if kind == "plain":
        model: nn.Module = tanh_net(1, width, depth, generator=generator(seed))
    else:
        model = MscaleDNN(1, width, depth, scales=scales, act=act, generator=generator(seed))
    points = grid_points(problem, n_grid)
    x = np.linspace(-1.0, 1.0, n_grid + 1)
    xt = torch.as_tensor(x, dtype=torch.float32)[:, None]
    exact = field_on_grid(problem.exact, x[:, None])

    with on_device(model) as device:
        points, xt_on_device = points.to(device), xt.to(device)

        def probe(net: nn.Module, _step: int) -> dict[str, np.ndarray]:
            with torch.no_grad():
                u = values(net, xt_on_device).double().cpu().numpy()
            return {"mode_errors": mode_errors(u, exact, modes), "max_error": np.abs(u - exact).max()}

        history = fit(model, lambda: ritz_loss(model, problem, points, beta=beta), steps=steps, lr=lr,
                      record_every=record_every, probe=probe)
    solution, _ = _evaluate(model, problem, xt)
    return SolveResult(kind, x[:, None], exact, solution, history, {"modes": tuple(modes)})


MSCALE = ClaimSpec("ch15.mscale-high-frequency", "§15.5.1",
                   "the multiscale DNN fits most of the high-frequency component (Delta_F < 0.6) while the plain "
                   "network of the same width has not started on it (Delta_F > 0.9)")


def check_mscale(plain: SolveResult, mscale: SolveResult) -> Verdict:
    """§15.5.1: at the end of training Δ_F of the highest sine is < 0.6 for the MscaleDNN and > 0.9 for the plain net."""
    high_plain = float(plain.history["mode_errors"][-1, -1])
    high_mscale = float(mscale.history["mode_errors"][-1, -1])
    j = mscale.extra["modes"][-1]
    return MSCALE.judge(threshold(f"MscaleDNN Δ_F(j={j})", high_mscale, "<", 0.6),
                        threshold(f"plain Δ_F(j={j})", high_plain, ">", 0.9))


# ----------------------------------------------------------------------------------------------
# The explorer
# ----------------------------------------------------------------------------------------------
EXPLORER_METHODS = ("pinn", "ritz", "jacobi", "hybrid")


@dataclass
class SolverRun:
    """One explorer solve of (15.18) on the grid ``x`` (n+1,): the exact and computed solutions, the max
    error, and the DST error Δ_F(j) of the ``modes`` of sin 4x, sin 8x, sin kx along the run —
    ``counts`` (T,) net steps then Jacobi sweeps, ``mode_errors`` (T, 3)."""

    method: str
    x: np.ndarray
    exact: np.ndarray
    solution: np.ndarray
    max_error: float
    modes: tuple[int, int, int]
    counts: np.ndarray
    mode_errors: np.ndarray


#: The bounds of :func:`explore_solver`'s numbers: k a whole number of the explorer's slider range (its modes then lie
#: on the grid of the default n = 200); documented maxima for the sizes and counts, which keep a solve within
#: seconds to a minute and the grid within memory.
SOLVER_BOUNDS = Bounds(k_high=whole(4, 48), width=integer(1, 1000), steps=integer(1, 20_000),
                       iterations=integer(1, 100_000), n=integer(2, 10_000), seed=OPTIONAL_SEED)


@cached
def explore_solver(k_high: float = 24.0, method: str = "ritz", width: int = 50, steps: int = 600,
                   iterations: int = 1000, n: int = 200, seed: int | None = None) -> SolverRun:
    """One solve of (15.18) with frequency ``k_high`` on an n-interval grid, for the explorer.

    ``method``: a PINN or Deep Ritz net trained ``steps`` Adam steps (lr 2e-3, depth 2), Jacobi from
    zero for ``iterations`` sweeps, or the hybrid (Ritz net, then Jacobi from its output).  ``seed``
    (the net's initialisation) defaults to the active seed.  A number outside :data:`SOLVER_BOUNDS` raises a
    ValueError naming it.
    """
    if method not in EXPLORER_METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {', '.join(EXPLORER_METHODS)}")
    SOLVER_BOUNDS.check(k_high=k_high, width=width, steps=steps, iterations=iterations, n=n, seed=seed)
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
        model = tanh_net(1, width, 2, generator=generator(active_seed() if seed is None else seed))
        loss_name = "pinn" if method == "pinn" else "ritz"
        with on_device(model) as device:
            points, xt = grid_points(problem, n).to(device), xt.to(device)

            def loss() -> dict[str, Tensor]:
                if loss_name == "ritz":
                    return ritz_loss(model, problem, points, beta=2000.0)
                terms = pinn_loss(model, problem, points)
                terms["total"] = terms["pde"] + 1000.0 * terms["bc"]
                return terms

            def grid_output(net: nn.Module, _step: int) -> dict[str, np.ndarray]:
                with torch.no_grad():
                    return {"u": values(net, xt).double().cpu().numpy()}

            history = fit(model, loss, steps=steps, lr=2e-3, record_every=max(1, steps // 25), probe=grid_output)
        counts, trace = history.steps, history["u"]
    if method in ("jacobi", "hybrid"):
        start = trace[-1].copy()
        start[0] = start[-1] = 0.0
        sweeps = jacobi(start, g, h, iterations, record_at=_log_counts(iterations, 30))
        if method == "jacobi":
            counts, trace = sweeps.steps, sweeps["u"]
        else:
            counts = np.concatenate([counts, sweeps.steps[1:] + counts[-1]])
            trace = np.concatenate([trace, sweeps["u"][1:]])
    solution = trace[-1]
    return SolverRun(method, x, exact, solution, float(np.abs(solution - exact).max()), modes, counts,
                     mode_errors(trace, exact, modes))


def draw_explorer(result: SolverRun, fig) -> None:
    """Solution vs exact, the pointwise error, and Δ_F(j) of the three modes along the run."""
    ax1, ax2, ax3 = fig.subplots(1, 3)
    ax1.plot(result.x, result.exact, "--", color="0.35", label="exact")
    ax1.plot(result.x, result.solution, label=result.method)
    ax1.set_title(f"solution (max error {result.max_error:.3g})")
    ax1.set_xlabel("x")
    ax1.legend()
    ax2.semilogy(result.x, np.abs(result.solution - result.exact) + 1e-12)
    ax2.set_title("|u - u_ref|")
    ax2.set_xlabel("x")
    for j, curve in zip(result.modes, result.mode_errors.T):
        ax3.plot(np.maximum(result.counts, 1), curve, label=f"j={j}")
    ax3.set_xscale("log")
    ax3.set_ylim(0, 1.2)
    label = {"jacobi": "Jacobi iteration", "hybrid": "net step, then Jacobi iteration"}
    ax3.set_xlabel(label.get(result.method, "training step"))
    ax3.set_title("per-mode error Delta_F(j)")
    ax3.legend()


def make_explorer():
    """The chapter's panel: the equation's high frequency, the method, width, steps, Jacobi iterations; the
    networks start from the active seed."""
    from companion.kit import widgets as w

    controls = {
        "k_high": w.float_slider(24.0, 4.0, 48.0, 4.0, "high frequency k in g"),
        "method": w.dropdown("ritz", EXPLORER_METHODS, "method"),
        "width": w.int_slider(50, 10, 200, "width", step=10),
        "steps": w.int_slider(600, 50, 3000, "net steps", step=50),
        "iterations": w.log_slider(1000, 10, 100_000, "Jacobi iterations"),
    }
    seed = active_seed()

    def compute(k_high: float, method: str, width: int, steps: int, iterations: float) -> SolverRun:
        return explore_solver(k_high, method, int(width), int(steps), int(round(iterations)), seed=seed)

    return w.Explorer("Solving -u'' = g (15.18): network vs Jacobi", controls, compute, draw_explorer,
                      figsize=(11.5, 3.3))



# ----------------------------------------------------------------------------------------------
# Exercises 习题 2 and 3
# ----------------------------------------------------------------------------------------------
def check_fd_matrix(answer: ArrayLike | None, n: int = 6) -> bool:
    """习题2: the matrix A of the finite-difference system A u = h² g for the n − 1 interior unknowns."""
    truth = 2 * np.eye(n - 1) - np.eye(n - 1, k=1) - np.eye(n - 1, k=-1)
    return feedback("习题2", answer, lambda a: np.asarray(a, float).shape == truth.shape
                    and np.allclose(np.asarray(a, float), truth),
                    f"multiply the scheme by h²; the answer is ({n - 1}×{n - 1}), symmetric and tridiagonal")


def check_jacobi_eigenvalues(answer: Callable[[int, int], float] | None, n: int = 50) -> bool:
    """习题3: a function (j, n) ↦ the eigenvalue of the Jacobi iteration matrix for the mode sin(jπi/n)."""
    iteration = 0.5 * (np.eye(n - 1, k=1) + np.eye(n - 1, k=-1))
    i = np.arange(1, n)

    def ok(fn: Callable[[int, int], float]) -> bool:
        return all(np.allclose(iteration @ np.sin(j * np.pi * i / n), fn(j, n) * np.sin(j * np.pi * i / n))
                   for j in (1, 7, n // 2, n - 3))

    return feedback("习题3", answer, ok, "apply ½(v_{i−1} + v_{i+1}) to v_i = sin(jπi/n) and use "
                    "sin(a − b) + sin(a + b) = 2 sin a cos b")
