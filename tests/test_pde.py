"""Unit tests of companion.core.pde (problems, PINN / Ritz / WAN losses) and companion.core.classical (Jacobi, DST)."""

import math

import numpy as np
import pytest
import torch
from torch import nn

from companion.core import classical
from companion.core import pde
from companion.experiments import ch15_pinns as pde_experiments


class FieldModel(nn.Module):
    """A fixed function as a 'network' (N, d) -> (N, 1), with a trainable scale c (starts at 1)."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn
        self.c = nn.Parameter(torch.ones(()))

    def forward(self, x):
        return (self.c * self.fn(x)).reshape(-1, 1)


def sin2d(x):
    return torch.sin(math.pi * x[:, 0]) * torch.sin(math.pi * x[:, 1])


# ---------------------------------------------------------------- problems and their validation
def test_problem_rejects_bad_definitions():
    zero = lambda x: torch.zeros(x.shape[0])  # noqa: E731
    with pytest.raises(ValueError, match="boundary"):
        pde.Problem(pde.NEG_LAPLACIAN, zero, ((-1, 1),))
    with pytest.raises(ValueError, match="cannot be evaluated"):
        pde.Problem(pde.NEG_LAPLACIAN, lambda x: x[:, 1], ((-1, 1),), boundary=zero)
    with pytest.raises(ValueError, match="non-finite"):
        pde.Problem(pde.NEG_LAPLACIAN, lambda x: 1 / x[:, 0] * math.inf, ((-1, 1),), boundary=zero)
    with pytest.raises(ValueError, match="N values"):
        pde.Problem(pde.NEG_LAPLACIAN, lambda x: torch.zeros(x.shape[0], 3), ((-1, 1),), boundary=zero)
    with pytest.raises(ValueError, match="lo < hi"):
        pde.Problem(pde.NEG_LAPLACIAN, zero, ((1, -1),), boundary=zero)
    with pytest.raises(ValueError, match="time_axis"):
        pde.Problem(pde.NEG_LAPLACIAN, zero, ((0, 1),), boundary=zero, initial=(zero,))
    with pytest.raises(ValueError, match="initial data"):
        pde.Problem(pde.newton_operator(1.0), zero, ((0, 1),), time_axis=0)
    with pytest.raises(ValueError, match="mass"):
        pde.newton_operator(0.0)


def test_neg_laplacian_and_manufactured_source():
    x = torch.rand(50, 2, dtype=torch.float64).requires_grad_(True)
    lap = pde.neg_laplacian(sin2d(x), x)
    assert torch.allclose(lap, 2 * math.pi ** 2 * sin2d(x), atol=1e-10)
    # the autograd source of the book problem equals its explicit g
    book = pde_experiments.book_poisson(24.0)
    made = pde.manufactured_poisson(book.exact, book.domain)
    pts = torch.linspace(-1, 1, 101, dtype=torch.float64)[:, None]
    assert torch.allclose(made.evaluate(made.source, pts), book.evaluate(book.source, pts), atol=1e-8)
    # the exact solution vanishes on the boundary
    assert book.evaluate(book.exact, torch.tensor([[-1.0], [1.0]])).abs().max() < 1e-6
    # the closed-form source of the sine problems equals −Δu by autograd, in 1-D and 2-D
    for dim, freqs, amps in ((1, (1.0, 10.0), (1.0, 0.1)), (2, (1.0, 2.0), (1.0, 0.25))):
        sines = pde_experiments.sine_poisson(dim, freqs, amps)
        made = pde.manufactured_poisson(sines.exact, sines.domain)
        pts = torch.rand(64, dim, dtype=torch.float64) * 2 - 1
        assert torch.allclose(made.evaluate(made.source, pts), sines.evaluate(sines.source, pts), rtol=1e-9, atol=1e-9)


def test_points():
    problem = pde_experiments.sine_poisson(2)
    pts = pde.sample_points(problem, 100, 40, generator=torch.Generator().manual_seed(0))
    assert pts.interior.shape == (100, 2) and pts.boundary.shape == (40, 2)
    assert math.isclose(float(pts.weights.sum()), problem.volume, rel_tol=1e-6)
    assert bool(((pts.boundary.abs() == 1.0).any(dim=1)).all())
    grid = pde.grid_points(problem, 10)
    assert grid.interior.shape == (81, 2) and grid.boundary.shape == (121 - 81, 2)
    nodes, weights = grid.quadrature()
    assert nodes.shape == (121, 2) and math.isclose(float(weights.sum()), problem.volume, rel_tol=1e-6)
    assert math.isclose(float(grid.weights.sum()), 81 * 0.2 ** 2, rel_tol=1e-6)  # the rest sits on ∂Ω
    assert pts.quadrature()[0] is pts.interior  # Monte Carlo boundary points carry no share
    with pytest.raises(ValueError, match="n_boundary"):
        pde.sample_points(problem, 10, 0)
    assert pde_experiments.book_modes(24.0) == (2, 6, 16)


# ---------------------------------------------------------------- losses
def test_pinn_loss_vanishes_at_the_exact_solution():
    problem = pde_experiments.sine_poisson(2, freqs=(1.0,), amps=(1.0,))
    pts = pde.sample_points(problem, 200, 50, generator=torch.Generator().manual_seed(1))
    terms = pde.pinn_loss(FieldModel(problem.exact), problem, pts)
    assert float(terms["total"].detach()) < 1e-8
    wrong = pde.pinn_loss(FieldModel(lambda x: 1.1 * problem.exact(x)), problem, pts)
    assert float(wrong["pde"].detach()) > 1e-2
    newton = pde_experiments.newton_problem(2.0)
    p0 = pde.sample_points(newton, 64, n_initial=1)
    ode = pde.pinn_loss(FieldModel(newton.exact), newton, p0)
    assert float(ode["total"]) < 1e-8 and set(ode) == {"pde", "ic", "total"}


def test_the_grid_integrates_over_the_whole_square_to_second_order():
    """The trapezoid weights of grid_points: halving h quarters the error of ∫ over (−1, 1)² (the interior nodes alone
    would leave out a strip of width h/2 along the boundary: an error that only halves)."""
    problem = pde_experiments.sine_poisson(2)
    exact = (2 * math.sin(1.0)) ** 2  # ∫∫ cos x₁ cos x₂ over (−1, 1)²
    errors = []
    for n in (8, 16):
        nodes, w = pde.grid_points(problem, n).quadrature()
        errors.append(abs(float((w * torch.cos(nodes[:, 0]) * torch.cos(nodes[:, 1])).sum()) - exact))
    assert errors[1] < errors[0] / 3.5 and errors[1] < 0.01  # the interior nodes alone: 0.23 off at n = 16


def test_ritz_energy_is_minimal_at_the_solution():
    problem = pde_experiments.sine_poisson(1, freqs=(1.0,), amps=(1.0,))
    grid = pde.grid_points(problem, 400)
    model = FieldModel(problem.exact)
    energies = []
    for c in (0.8, 1.0, 1.2):
        with torch.no_grad():
            model.c.fill_(c)
        energies.append(float(pde.ritz_loss(model, problem, grid)["energy"]))
    assert energies[1] < energies[0] and energies[1] < energies[2]
    # E(u) = −½∫|u′|² = −π²/2; (15.19)'s interior sum alone, without the end nodes' h/2, is off by about h = 0.005
    assert math.isclose(energies[1], -0.5 * math.pi ** 2, rel_tol=1e-4)
    with pytest.raises(ValueError, match="steady problem"):
        pde.ritz_loss(model, pde_experiments.newton_problem(), grid)


def test_wan_loss_is_bounded_only_when_normalised():
    problem = pde_experiments.sine_poisson(1, freqs=(1.0,), amps=(1.0,))
    pts = pde.grid_points(problem, 200)
    u = FieldModel(lambda x: 0.5 * problem.exact(x))         # not the solution: a residual to detect
    phi = FieldModel(lambda x: torch.sin(math.pi * x[:, 0]) + 0.3)
    base = [float(pde.wan_loss(u, phi, problem, pts, normalise=n)) for n in (True, False)]
    with torch.no_grad():
        phi.c.fill_(10.0)
    scaled = [float(pde.wan_loss(u, phi, problem, pts, normalise=n)) for n in (True, False)]
    assert base[0] > 1e-3
    assert math.isclose(scaled[0], base[0], rel_tol=1e-4)    # normalised: invariant under φ → cφ
    assert math.isclose(scaled[1], 100 * base[1], rel_tol=1e-4)   # the book's (15.15): grows like c²
    exact = FieldModel(problem.exact)
    assert float(pde.wan_loss(exact, phi, problem, pts)) < 1e-5
    assert float(pde.cutoff(problem, torch.tensor([[-1.0], [0.0], [1.0]])).abs().sum()) == 1.0


def test_fit_and_newton_polynomial():
    result = pde_experiments.run_newton.__wrapped__("polynomial", steps=10)
    assert result.max_error < 1e-2
    assert abs(result.extra["coefficients"][0]) < 1e-3 and abs(result.extra["coefficients"][1]) < 1e-3
    with pytest.raises(ValueError, match="optimizer"):
        pde.fit(nn.Linear(1, 1), lambda: {"total": torch.zeros(())}, steps=1, lr=1e-3, optimizer="rmsprop")
    with pytest.raises(ValueError, match="method"):
        pde_experiments.run_newton.__wrapped__("spline")


def test_explore_solver_runs_each_method():
    n = 64
    jac = pde_experiments.explore_solver(method="jacobi", iterations=200, n=n)
    g = pde_experiments.field_on_grid(pde_experiments.book_poisson(24.0).source, jac.x[:, None])
    fd = classical.fd_solution(g, 2 / n)
    # Jacobi from zero: every mode starts fully wrong, the solution is exactly 200 sweeps of classical.jacobi
    assert jac.counts[0] == 0 and jac.counts[-1] == 200
    assert np.allclose(jac.mode_errors[0], 1.0)
    assert np.allclose(jac.solution, classical.jacobi(np.zeros(n + 1), g, 2 / n, 200)["u"][-1])
    assert jac.mode_errors[-1, 2] < 0.5 * jac.mode_errors[-1, 0]          # high mode first
    # the hybrid is the Ritz net of the same seed, then Jacobi from its output (boundary values reset)
    net = pde_experiments.explore_solver(method="ritz", steps=50, width=10, n=n, seed=3)
    hyb = pde_experiments.explore_solver(method="hybrid", steps=50, iterations=100, width=10, n=n, seed=3)
    assert hyb.counts[-1] == 150 and np.array_equal(hyb.counts[:len(net.counts)], net.counts)
    start = net.solution.copy()
    start[0] = start[-1] = 0.0
    assert np.allclose(hyb.solution, classical.jacobi(start, g, 2 / n, 100)["u"][-1])
    # Jacobi contracts the error against the FD solution in the 2-norm (symmetric iteration, |μ_j| < 1)
    assert np.linalg.norm(hyb.solution - fd) < np.linalg.norm(start - fd)
    pinn = pde_experiments.explore_solver(method="pinn", steps=50, width=10, n=n, seed=3)
    assert not np.allclose(pinn.solution, net.solution)                 # a different loss, a different fit
    with pytest.raises(ValueError, match="method"):
        pde_experiments.explore_solver(method="multigrid")


@pytest.mark.parametrize("seed", [1, 2])
def test_newton_network_and_wan_scaling_on_other_seeds(seed):
    net = pde_experiments.run_newton.__wrapped__("net", steps=1000, lr=3e-3, width=32, n_points=256, seed=seed)
    assert net.max_error < 1e-2
    untrained = pde_experiments.run_newton.__wrapped__("net", steps=0, width=32, seed=seed)
    assert untrained.max_error > 10 * net.max_error
    wan = pde_experiments.wan_scaling(seed=seed)
    assert np.allclose(wan.book, wan.scales ** 2 * wan.book[0], rtol=1e-3) and wan.book[0] > 1e-6
    assert np.allclose(wan.normalised, wan.normalised[0], rtol=1e-3)
    squashed = pde_experiments.wan_scaling(seed=seed, squash=True)
    assert squashed.book[-1] < 0.1 * wan.book[-1]                             # a bounded test function


def test_classical_run_trajectories():
    jac = pde_experiments.classical_run("jacobi", n=100, iterations=400, reference="fd")
    mu_t = np.abs(classical.jacobi_eigenvalues(100, jac.modes)) ** jac.counts[:, None]
    assert np.allclose(jac.errors, mu_t, atol=1e-9)
    first = jac.first_below(0.5)
    assert first[2] < first[1] and np.isnan(pde_experiments.classical_run("jacobi", n=100, iterations=5)
                                            .first_below(0.01)).all()
    gs = pde_experiments.classical_run("gauss-seidel", n=100, iterations=400, reference="fd")
    assert gs.solver == "Gauss–Seidel" and (gs.errors[-1, :2] < jac.errors[-1, :2]).all()   # GS ≈ two Jacobi sweeps
    with pytest.raises(ValueError, match="reference"):
        pde_experiments.classical_run(reference="u")


# ---------------------------------------------------------------- classical solvers
def test_fd_solution_is_exact_for_quadratics():
    x = np.linspace(-1, 1, 51)
    u = classical.fd_solution(np.full(51, 2.0), 2 / 50)                  # −u″ = 2, u(±1) = 0 → u = 1 − x²
    assert np.allclose(u, 1 - x ** 2, atol=1e-12)


def test_jacobi_multiplies_each_mode_by_cos():
    n, modes = 64, np.array([2, 6, 20])     # the solution is odd: only even modes
    x = np.linspace(-1, 1, n + 1)
    g = np.sin(3 * x) + 5 * np.sin(11 * x)
    fd = classical.fd_solution(g, 2 / n)
    run = classical.jacobi(np.zeros(n + 1), g, 2 / n, 300, record_at=[0, 10, 100, 300])
    predicted = np.abs(classical.jacobi_eigenvalues(n, modes)) ** run.steps[:, None]
    assert np.allclose(classical.mode_errors(run["u"], fd, modes), predicted, atol=1e-9)
    gs = classical.gauss_seidel(np.zeros(n + 1), g, 2 / n, 300)
    assert np.abs(gs["u"][-1] - fd).max() < np.abs(run["u"][-1] - fd).max()   # GS ≈ two Jacobi steps per sweep
    with pytest.raises(ValueError, match="method"):
        classical.iterate(np.zeros(n + 1), g, 2 / n, 3, method="sor")
    with pytest.raises(ValueError, match="record_at"):
        classical.jacobi(np.zeros(n + 1), g, 2 / n, 3, record_at=[5])


def test_dst_coefficients_recover_sines():
    n = 32
    i = np.arange(n + 1)
    v = 0.7 * np.sin(3 * np.pi * i / n) - 0.2 * np.sin(10 * np.pi * i / n)
    c = classical.dst_coefficients(v)
    expected = np.zeros(n - 1)
    expected[[2, 9]] = [0.7, -0.2]
    assert np.allclose(c, expected, atol=1e-12)
    with pytest.raises(ValueError, match="no content"):
        classical.mode_errors(v, v, [4])
    with pytest.raises(ValueError, match="modes"):
        classical.jacobi_eigenvalues(n, [n])


def test_runs_reject_unknown_options():
    with pytest.raises(ValueError, match="method"):
        pde_experiments.run_poisson.__wrapped__("galerkin")
    with pytest.raises(ValueError, match="sampling"):
        pde_experiments.run_poisson.__wrapped__("ritz", sampling="sobol", steps=1)
    with pytest.raises(ValueError, match="kind"):
        pde_experiments.run_mscale_poisson.__wrapped__("wide")
    with pytest.raises(ValueError, match="switch_steps"):
        pde_experiments.run_frequency_contrast.__wrapped__(steps=100, record_every=50, switch_steps=(70,))
    with pytest.raises(ValueError, match="start_std"):
        pde_experiments.run_frequency_contrast.__wrapped__(start_std=-0.5)
    with pytest.raises(ValueError, match="k_high"):
        pde_experiments.book_poisson(0.5)


def test_solvers_run_on_the_engine_and_record_named_series():
    wan = pde_experiments.run_wan(normalise=True, steps=4, record_every=2, seed=0)
    assert list(wan.history.steps) == [0, 2, 4] and {"weak", "bc", "phi_norm"} <= set(wan.history.series)
    assert np.allclose(wan.history.train_loss, wan.history["weak"]) and np.all(wan.history["phi_norm"] > 0)
    newton = pde_experiments.run_newton.__wrapped__("net", steps=6, width=8, seed=0)
    assert list(newton.history.steps) == [0, 1, 2, 3, 4, 5, 6] and {"pde", "ic"} <= set(newton.history.series)
    assert np.allclose(newton.history.train_loss, newton.history["pde"] + newton.history["ic"], rtol=1e-5)


def test_the_solvers_train_on_the_settings_device(monkeypatch):
    """Every solver of the chapter (PINN, Deep Ritz, WAN, the Newton toy, 图15.1's net, the MscaleDNN, the explorer's)
    trains with its networks and points on the settings' device, here the meta device (tests/device_support.py): a
    point set, a probe's grid or a field's constant left on the CPU fails, as it would on a GPU.  (The polynomial of
    §15.1 takes the same path with L-BFGS, whose line search reads numbers that meta tensors do not have.)"""
    from device_support import MetaReadsAsZeros, OneDevicePerCall, on_meta, steps_only

    records = []
    monkeypatch.setattr(pde_experiments, "on_device", on_meta)
    monkeypatch.setattr(pde, "run", steps_only(records))
    with OneDevicePerCall(), MetaReadsAsZeros(), np.errstate(invalid="ignore", divide="ignore"):
        pde_experiments.run_newton.__wrapped__("net", steps=4, width=8)
        for method, sampling in (("pinn", "grid"), ("ritz", "random")):
            pde_experiments.run_poisson.__wrapped__(method, n_grid=8, steps=4, width=8, sampling=sampling)
        pde_experiments.run_wan.__wrapped__(True, steps=4, record_every=2, width=8, n_grid=8)
        pde_experiments.run_frequency_contrast.__wrapped__(n=40, width=8, steps=4, record_every=2,
                                                          jacobi_iterations=10, switch_steps=(2,), hybrid_iterations=4)
        pde_experiments.run_mscale_poisson.__wrapped__("mscale", width=8, n_grid=32, steps=4, record_every=2)
        pde_experiments.explore_solver.__wrapped__(method="pinn", width=8, steps=4, n=40, seed=0)
    assert len(records) == 7 and all(row for row in records)
    assert {"pde", "ic"} <= set(records[0]) and {"u"} <= set(records[4]) and {"mode_errors"} <= set(records[5])


def test_exercise_checks_of_fd_matrix_and_jacobi_eigenvalues():
    n = 6
    assert pde_experiments.check_fd_matrix(2 * np.eye(n - 1) - np.eye(n - 1, k=1) - np.eye(n - 1, k=-1))
    assert not pde_experiments.check_fd_matrix(np.eye(n - 1))
    assert pde_experiments.check_jacobi_eigenvalues(lambda j, n: np.cos(j * np.pi / n))
    assert not pde_experiments.check_jacobi_eigenvalues(lambda j, n: np.sin(j * np.pi / n))
