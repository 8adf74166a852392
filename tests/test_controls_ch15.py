"""Negative controls of chapter 15's claims (see tests/test_claim_controls.py).

Each control runs the claim's own check on a small *real* run in which the phenomenon is absent (no training, a
high-frequency solution, a bounded test function, the other solver's trajectory, Gauss–Seidel instead of Jacobi,
plain Jacobi or a hybrid started from the untrained network, a "multiscale" net with a single scale) and asserts
that the check fails; a positive twin on the same small setting, with the phenomenon present, passes.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from companion.core.classical import jacobi
from companion.experiments import ch15_pinns as pe
from companion.experiments.ch15_pinns import (check_hybrid, check_hybrid_time, check_jacobi_high_first,
                                       check_jacobi_mode_factor, check_mscale, check_net_low_first, check_newton,
                                       check_pinn_ritz, check_wan_scaling)

SEED = 1


# §15.1 -----------------------------------------------------------------------------------------------------------
def newton_runs(steps_poly, steps_net):
    cfg = dict(m=1.0, horizon=2.0, n_points=256, seed=SEED)
    return (pe.run_newton.__wrapped__("polynomial", steps=steps_poly, **cfg),
            pe.run_newton.__wrapped__("net", steps=steps_net, lr=3e-3, width=32, **cfg))


def test_control_ch15_newton_least_squares():
    # not a contrast control: §15.1 sets up one least-squares problem (15.2), minimised "by gradient descent and
    # the like", with no other optimiser or setting it contrasts; the control is the untrained ansatz
    v = check_newton(*newton_runs(0, 0))                 # no training: the ansatz stays at its initial value
    assert not v.passed, v.measured_line()


def test_newton_positive_twin():
    v = check_newton(*newton_runs(10, 1000))             # the notebook's setting
    assert v.passed, v.measured_line()


# (15.4), (15.12) ---------------------------------------------------------------------------------------------------
def poisson_runs(steps_pinn, steps_ritz, freqs=(1.0, 2.0)):
    cfg = dict(dim=1, freqs=freqs, amps=(1.0, 0.25), width=40, depth=3, n_grid=128, seed=SEED)
    return (pe.run_poisson.__wrapped__("pinn", steps=steps_pinn, lr=5e-3, final_lr=5e-4, **cfg),
            pe.run_poisson.__wrapped__("ritz", steps=steps_ritz, lr=3e-3, **cfg))


@pytest.mark.contrast("a high-frequency solution, sin 10πx instead of sin 2πx (§15.5)")
def test_control_ch15_pinn_ritz_poisson():
    # the same nets and budget; a solution whose second component oscillates at 10π: §15.5's plain networks learn
    # high frequencies slowly (the frequency principle), and neither solver gets its max error below 0.08
    v = check_pinn_ritz(*poisson_runs(800, 1500, freqs=(1.0, 10.0)))
    assert not v.passed, v.measured_line()
    assert not v.conditions[0].passed and not v.conditions[1].passed


def test_pinn_ritz_positive_twin():
    v = check_pinn_ritz(*poisson_runs(800, 1500))        # the notebook's setting
    assert v.passed, v.measured_line()


# (15.15) -----------------------------------------------------------------------------------------------------------
def test_control_ch15_wan_loss_scaling():
    v = check_wan_scaling(pe.wan_scaling(squash=True, seed=SEED))   # tanh(cφ): a bounded test function
    assert not v.passed, v.measured_line()


def test_wan_scaling_positive_twin():
    v = check_wan_scaling(pe.wan_scaling(seed=SEED))
    assert v.passed, v.measured_line()


# 图15.1 ------------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def small_contrast():
    """图15.1 on a 100-interval grid: a small Ritz net (1500 steps), Jacobi from zero and from a random guess, hybrids
    from steps 0 and 1500."""
    return pe.run_frequency_contrast.__wrapped__(k_high=24.0, n=100, width=64, depth=3, steps=1500, lr=3e-3,
                                                 beta=2000.0, record_every=20, jacobi_iterations=5000,
                                                 switch_steps=(0, 1500), hybrid_iterations=20, seed=SEED)


@pytest.mark.contrast("Jacobi iteration in the network's slot (图15.1(c))")
def test_control_ch15_net_low_first(small_contrast):
    for jacobi_run in (small_contrast.jacobi_random_trajectory, small_contrast.jacobi_trajectory):
        v = check_net_low_first(jacobi_run)          # Jacobi, from a random guess or zero: j=16 long fitted when j=2 is
        assert not v.passed, v.measured_line()


def test_net_low_first_positive_twin(small_contrast):
    v = check_net_low_first(small_contrast.net_trajectory)
    assert v.passed, v.measured_line()


@pytest.mark.contrast("the network in Jacobi's slot (图15.1(b))")
def test_control_ch15_jacobi_high_first(small_contrast):
    v = check_jacobi_high_first(small_contrast.net_trajectory)   # the network: low modes first, j=16 never fitted
    assert not v.passed, v.measured_line()


def test_jacobi_high_first_positive_twin(small_contrast):
    for jacobi_run in (small_contrast.jacobi_random_trajectory, small_contrast.jacobi_trajectory):
        v = check_jacobi_high_first(jacobi_run)                  # from the seeded random guess, and from zero
        assert v.passed, v.measured_line()
    assert not np.allclose(small_contrast.random_mode_errors[0], 1.0)   # the random guess is not zero


def test_hybrid_run_time_counts_the_training(small_contrast):
    # the exploration ch15.hybrid-run-time (no control needed): the hybrid's time holds the network's M steps, and at
    # this size Jacobi from zero is faster (one training step costs hundreds of sweeps)
    times = pe.hybrid_times(small_contrast)
    assert times[1500][0] >= small_contrast.net_seconds(1500) > 0
    assert not check_hybrid_time(small_contrast).passed


def test_control_ch15_jacobi_mode_factor():
    gs = pe.classical_run("gauss-seidel", n=100, iterations=500, reference="fd")   # factor ≠ cos(jπ/n)
    v = check_jacobi_mode_factor(gs)
    assert not v.passed, v.measured_line()


def test_jacobi_mode_factor_positive_twin():
    v = check_jacobi_mode_factor(pe.classical_run("jacobi", n=100, iterations=500, reference="fd"))
    assert v.passed, v.measured_line()
    with pytest.raises(ValueError, match="finite-difference"):
        check_jacobi_mode_factor(pe.classical_run("jacobi", n=100, iterations=5))


@pytest.mark.contrast("plain Jacobi from zero, and the hybrid with M = 0 (图15.1(d))")
def test_control_ch15_hybrid_beats_jacobi(small_contrast):
    # plain Jacobi on its own, run for real, in the hybrid's place: R sweeps from zero instead of from the network
    sc = small_contrast
    g = pe.field_on_grid(pe.book_poisson(24.0).source, sc.x[:, None])
    r = int(sc.hybrid_iterations[-1])
    sweeps = jacobi(np.zeros(sc.n + 1), g, 2.0 / sc.n, r, record_at=sc.hybrid_iterations)
    errors = np.abs(sweeps["u"] - sc.exact).max(axis=1)
    plain = dataclasses.replace(sc, hybrid_max_error={max(sc.hybrid_max_error): errors})
    v = check_hybrid(plain)
    assert not v.passed, v.measured_line()
    # the book's "M too small": Jacobi started from the network at step 0, before it has fitted the low modes
    v = check_hybrid(sc, switch_step=0)
    assert not v.passed, v.measured_line()


def test_hybrid_positive_twin(small_contrast):
    v = check_hybrid(small_contrast)                    # started from the network after 1500 steps
    assert v.passed, v.measured_line()


# §15.5.1 ---------------------------------------------------------------------------------------------------------
def mscale_run(kind, **changes):
    cfg = dict(freqs=(1.0, 10.0), amps=(1.0, 0.1), width=60, depth=2, n_grid=128, steps=300, lr=1e-3,
               record_every=50, seed=SEED)
    return pe.run_mscale_poisson.__wrapped__(kind, **(cfg | changes))


@pytest.fixture(scope="module")
def plain_small():
    return mscale_run("plain")


@pytest.mark.contrast("single-scale network (scale 1) instead of MscaleDNN")
def test_control_ch15_mscale_high_frequency(plain_small):
    single = mscale_run("mscale", scales=(1,), act="srelu")    # a "multiscale" net with the single scale 1
    v = check_mscale(plain_small, single)
    assert not v.passed, v.measured_line()


def test_mscale_positive_twin(plain_small):
    v = check_mscale(plain_small, mscale_run("mscale", scales=(1, 2, 4, 8, 16, 32), act="srelu"))
    assert v.passed, v.measured_line()
