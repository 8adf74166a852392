"""Chapter 5's three-scale elliptic problem (5.7)–(5.9) and the SD²DNN pieces, on sizes small enough for a unit test."""

import math

import numpy as np
import pytest
import torch

from companion.core.nets import SD2DNN
from companion.core.pde import divergence_operator, grid_points, manufactured_poisson, ritz_loss
from companion.experiments.ch05_multiscale import (SD2_SCALES, SD2Result, WeightedSD2DNN, check_sd2dnn,
                                                   elliptic_coefficient, elliptic_parts, elliptic_source,
                                                   multiscale_elliptic, orthogonality_penalty, run_sd2dnn)
from companion.kit.seeds import generator


def test_the_closed_form_source_is_minus_the_flux_derivative_of_the_exact_solution():
    x = torch.linspace(0.0, 1.0, 513, dtype=torch.float64)[:, None]
    exact = lambda p: sum(elliptic_parts(p[:, 0]))  # noqa: E731
    auto = manufactured_poisson(exact, ((0.0, 1.0),), operator=divergence_operator(
        lambda p: elliptic_coefficient(p[:, 0])))
    assert torch.allclose(auto.source(x), elliptic_source(x[:, 0]), rtol=1e-9, atol=1e-6)
    problem = multiscale_elliptic()
    assert abs(float(problem.exact(torch.tensor([[1.0]], dtype=torch.float64)))) < 1e-12     # u(1) = 0
    with pytest.raises(ValueError, match="whole numbers"):
        multiscale_elliptic((0.3, 0.01))


def test_the_ritz_energy_uses_the_coefficient_and_is_smallest_at_the_exact_solution():
    problem = multiscale_elliptic()
    points = grid_points(problem, 2000)

    class Fixed(torch.nn.Module):
        def __init__(self, fn):
            super().__init__()
            self.fn = fn

        def forward(self, x):
            return self.fn(x)[:, None]

    exact = Fixed(lambda x: sum(elliptic_parts(x[:, 0])))
    smooth = Fixed(lambda x: x[:, 0] - x[:, 0] ** 2)                   # only the O(1) scale
    e_exact = float(ritz_loss(exact, problem, points)["energy"])
    e_smooth = float(ritz_loss(smooth, problem, points)["energy"])
    assert e_exact < e_smooth
    # the energy at the minimiser is −½∫ A u′² (= −½∫ f u): compare with the quadrature of that
    x = np.linspace(0, 1, 200_001)
    du = 1 - 2 * x + 0.5 * np.cos(20 * math.pi * x) + 0.5 * np.cos(200 * math.pi * x)
    assert math.isclose(e_exact, -0.5 * np.trapezoid(elliptic_coefficient(x) * du ** 2, x), rel_tol=1e-2)


def test_sd2dnn_sums_its_parts_and_the_penalty_sees_overlap():
    net = SD2DNN(1, 8, 2, ((1.0,), (10.0, 20.0)), generator=generator(0))
    x = torch.linspace(0, 1, 50)[:, None]
    parts = net.parts(x)
    assert parts.shape == (2, 50, 1) and torch.allclose(net(x), parts.sum(0))
    weighted = WeightedSD2DNN(net, (1.0, 0.1))
    assert torch.allclose(weighted.parts(x), parts * torch.tensor([1.0, 0.1])[:, None, None])   # α_i u_i
    assert torch.allclose(weighted(x), weighted.parts(x).sum(0))
    with pytest.raises(ValueError, match="contributions"):
        WeightedSD2DNN(net, (1.0,))
    w = torch.full((50,), 1 / 50)
    same = torch.stack([torch.sin(x[:, 0]), torch.sin(x[:, 0])])
    orth = torch.stack([torch.sin(2 * math.pi * x[:, 0]), torch.cos(2 * math.pi * x[:, 0])])
    assert orthogonality_penalty(same, w) > 0.01 and orthogonality_penalty(orth, w) < 1e-10


def test_the_sd2dnn_trains_on_the_settings_device(monkeypatch):
    """图5.5's SD²DNN: the grid, the probe's points and the coefficient A(x) where the network trains, here the meta
    device (tests/device_support.py): a tensor left on the CPU fails, as it would on a GPU."""
    from companion.core import pde
    from companion.experiments import ch05_multiscale
    from device_support import MetaReadsAsZeros, OneDevicePerCall, on_meta, steps_only

    records = []
    monkeypatch.setattr(ch05_multiscale, "on_device", on_meta)
    monkeypatch.setattr(pde, "run", steps_only(records))
    with OneDevicePerCall(), MetaReadsAsZeros():
        res = run_sd2dnn.__wrapped__(width=32, steps=4, n_grid=200, record_every=2, seed=0)
    assert len(records) == 1 and {"energy", "bc", "orth", "parts"} <= set(records[0])
    assert res.history_parts.shape == (1, 3, 201) and not res.history_parts.any()  # zeros read from the meta device


def test_a_short_sd2dnn_run_records_every_part():
    res = run_sd2dnn.__wrapped__(width=32, steps=20, n_grid=200, record_every=10, seed=0)
    assert res.history_parts.shape == (3, 3, 201) and res.targets.shape == (3, 201)
    assert np.allclose(res.targets.sum(0), res.exact) and res.part_errors().shape == (3,)
    assert res.scale_shares((1, 10, 100)).shape == (3, 3)
    assert np.isfinite(res.loss).all()


def _split(parts: np.ndarray, x: np.ndarray) -> SD2Result:
    targets = np.stack(elliptic_parts(x))
    return SD2Result(SD2_SCALES, x, targets.sum(0), targets, np.array([0]), np.array([0.0]), parts[None])


def test_the_parts_are_read_off_as_the_spectra_of_fig_5_5_whatever_their_end_values():
    """图5.5 draws each sub-module's spectrum: parts equal to the three terms of (5.9) plus straight lines that cancel
    in the sum (the sub-modules' end values are free, only the sum is held at 0) still carry their own peaks — each
    a share 1 at its own frequency (k = 1, 10, 100) and ≈ 0 at the others — and the check passes.  The check before
    this read-off compared the parts with the terms in x and failed such a split (relative errors of the two
    oscillating parts ≫ 0.5)."""
    x = np.linspace(0.0, 1.0, 1001)
    targets = np.stack(elliptic_parts(x))
    line = 0.3 - 0.5 * x
    split = _split(targets + np.stack([line, -2 * line, line]), x)
    shares = split.scale_shares((1, 10, 100))
    assert np.allclose(np.diag(shares), 1.0, atol=0.02)
    assert np.abs(shares[1:, 0]).max() < 0.02 and abs(shares[0, 1]) < 0.15 and np.abs(shares[:2, 2]).max() < 0.02
    assert check_sd2dnn(split).passed


def test_a_smooth_part_taken_by_the_middle_module_fails_the_check():
    """The split measured at CPU scale: the low module ≈ 0, the middle one holding x − x² and the ε₁ term."""
    x = np.linspace(0.0, 1.0, 1001)
    low, mid, high = elliptic_parts(x)
    v = check_sd2dnn(_split(np.stack([0 * x, low + mid, high]), x))
    assert not v.passed and v.conditions[0].passed and not v.conditions[1].passed


def test_the_2d_poisson_run_of_fig_5_3_measures_its_errors_on_the_exact_solution():
    from companion.experiments.ch05_multiscale import MU_BOOK, run_poisson_2d

    with pytest.raises(ValueError, match="unknown kind"):
        run_poisson_2d("fourier", steps=1)
    run = run_poisson_2d("mscale", width=20, depth=2, n_scales=4, n_grid=16, steps=6, record_every=3, n_eval=21,
                         seed=0)
    x1, x2 = np.meshgrid(run.axis, run.axis, indexing="ij")
    assert np.allclose(run.exact, np.sin(MU_BOOK * x1) * np.sin(MU_BOOK * x2), atol=1e-5)     # (5.5), μ = 7π
    assert run.scales == (1.0, 2.0, 3.0, 4.0) and run.solution.shape == (21, 21)
    assert list(run.steps) == [0, 3, 6] and np.isfinite(run.rel_error).all()
    inside = run.inside                                          # the errors are over the porous domain only
    assert 0.4 < inside.mean() < 0.7 and not inside[run.axis.searchsorted(0.3), run.axis.searchsorted(-0.3)]
    u, exact = run.solution[inside], run.exact[inside]
    rel = np.linalg.norm(u - exact) / np.linalg.norm(exact)
    assert run.final_error == pytest.approx(rel, rel=1e-4)
    coefficient = (u * exact).sum() / (exact ** 2).sum()
    assert run.final_coefficient == pytest.approx(coefficient, abs=1e-5)
    assert run.delta_mu == pytest.approx(abs(coefficient - 1), abs=1e-5)
    assert run_poisson_2d("plain", width=20, depth=2, n_grid=16, steps=1, n_eval=21, seed=0).scales == (1.0,)


def test_the_porous_domain_of_fig_5_3_leaves_the_holes_out_of_the_energy_and_puts_their_rims_in_the_boundary():
    import math

    from companion.core.pde import grid_points, sine_poisson
    from companion.experiments.ch05_multiscale import POROUS_DISCS, POROUS_ELLIPSE, in_holes, porous_points

    problem = sine_poisson(2, freqs=(7.0,), amps=(1.0,))
    square, points = grid_points(problem, 60), porous_points(problem, 60)
    assert not in_holes(points.interior).any() and len(points.interior) < 0.6 * len(square.interior)
    holes = sum(math.pi * r ** 2 for _, r in POROUS_DISCS) + math.pi * POROUS_ELLIPSE[1][0] * POROUS_ELLIPSE[1][1]
    _, w = points.quadrature()
    assert float(w.sum()) == pytest.approx(4.0 - holes, rel=0.03)      # the energy integrates over Ω = square − holes
    rim = points.boundary[len(square.boundary):]
    (cx, cy), r = POROUS_DISCS[1]
    on_big_disc = ((rim[:, 0] - cx) ** 2 + (rim[:, 1] - cy) ** 2 - r ** 2).abs() < 1e-5
    assert int(on_big_disc.sum()) == round(2 * math.pi * r / (2 / 60))  # the rim at the grid's spacing
    assert (points.boundary_weights[len(square.boundary):] == 0).all()
