"""Negative controls of chapter 7's claims: each check, run on a small real run where the phenomenon is
absent (a linear-regime net in the condensed slot, γ′ that puts every γ on the linear side, no training,
finite widths instead of the limit), must fail; the positive twins pass."""

import dataclasses

import numpy as np
import pytest
import torch

from companion.experiments import ch07_phase as phase

FOUR = dict(seed=1)


@pytest.fixture(scope="module")
def linear_only():
    return phase.run_phase([0.5, 0.75], [0.0], [400], **FOUR)  # both γ < 1: no condensed net


@pytest.fixture(scope="module")
def linear_and_condensed():
    return phase.run_phase([0.5, 1.75], [0.0], [400], **FOUR)


@pytest.mark.contrast("linear-regime γ=0.75 in the condensed slot (图7.1)")
def test_control_ch07_kinks(linear_only, linear_and_condensed):
    v = phase.check_kinks(phase.regime_features(linear_only, 400))
    assert not v.passed, v.measured_line()
    twin = phase.check_kinks(phase.regime_features(linear_and_condensed, 400))
    assert twin.passed, twin.measured_line()


@pytest.mark.contrast("linear-regime γ=0.75 in the condensed slot (图7.3)")
def test_control_ch07_condensed_orientations(linear_only, linear_and_condensed):
    v = phase.check_condensed_orientations(phase.regime_features(linear_only, 400))
    assert not v.passed, v.measured_line()
    twin = phase.check_condensed_orientations(phase.regime_features(linear_and_condensed, 400))
    assert twin.passed, twin.measured_line()


@pytest.mark.contrast("γ′=1, which puts γ=1.75 in the linear regime (图7.5)")
def test_control_ch07_sw_signs():
    # γ′ = 1 puts γ = 1.75 on the linear side (γ′ > γ − 1): S_w no longer turns positive
    run = phase.run_phase([0.5, 1.0, 1.75], [1.0], [200, 400], seed=1)
    v = phase.check_sw_signs(run)
    assert not v.passed, v.measured_line()
    assert run.sw()[2, 0] < 0.2


GRID_CELLS = dict(gammas=[0.25, 1.75, 2.25], gamma_primes=[-0.5, 0.0], widths=[100, 200], seed=1)


@pytest.fixture(scope="module")
def grid_trained():
    return phase.run_phase(**GRID_CELLS)


@pytest.fixture(scope="module")
def grid_linear():
    """The same γ trained at γ′ + 2 = 1.5, 2, where the boundary γ = 1 + γ′ lies at 2.5, 3: every net is in the
    linear regime (图7.5(a)'s left side), then judged in the cells of γ′ = −0.5, 0, whose γ = 1.75, 2.25 are
    condensed: the linear regime in the condensed cells, as the other controls put γ = 0.75 in the condensed slot."""
    run = phase.run_phase(**{**GRID_CELLS, "gamma_primes": [1.5, 2.0]})
    assert (run.gammas[:, None] < phase.critical_gamma(run.gamma_primes)[None]).all()  # every cell linear
    return dataclasses.replace(run, gamma_primes=np.asarray(GRID_CELLS["gamma_primes"], dtype=float))


@pytest.mark.contrast("linear-regime nets (γ′ + 2) in the condensed cells (图7.5(a))")
def test_control_ch07_phase_diagram(grid_linear, grid_trained):
    # fitted linear-regime nets: RD(θ_w*) shrinks with m in every cell, so S_w < 0 where the theory says > 0
    v = phase.check_phase_diagram(grid_linear, min_far=4)
    assert not v.passed, v.measured_line()
    assert not v.conditions[1].passed and v.conditions[2].passed  # wrong signs, not unfitted nets
    twin = phase.check_phase_diagram(grid_trained, min_far=4)
    assert twin.passed, twin.measured_line()


def test_phase_diagram_needs_fitted_nets():
    # 20 GD steps: nothing has fitted the data, and the "nets that did not fit" count says so
    v = phase.check_phase_diagram(phase.run_phase(**GRID_CELLS, max_steps=20), min_far=4)
    assert not v.conditions[2].passed, v.measured_line()


@pytest.mark.contrast("linear-regime nets (γ′ + 2) in the condensed cells (图7.6)")
def test_control_ch07_grid_condensation(grid_linear, grid_trained):
    # linear-regime neurons barely move from where they were drawn: spread over the circle, not gathered
    v = phase.check_grid_condensation(phase.grid_features(grid_linear))
    assert not v.passed, v.measured_line()
    assert not v.conditions[0].passed  # the condensed side is what fails
    twin = phase.check_grid_condensation(phase.grid_features(grid_trained))
    assert twin.passed, twin.measured_line()


def test_control_ch07_table_7_1():
    finite = phase.placements(m_pair=(2.0, 4.0))  # slopes at m = 2…4, not the limit: Xavier's m + 1 still counts
    v = phase.check_table_7_1(finite)
    assert not v.passed, v.measured_line()
    assert phase.check_table_7_1(phase.placements()).passed


# 图7.5(b) and 图7.7 on the digits: float32 as in the notebook, a tuning seed (101), small widths
DIGITS = dict(max_steps=300, seed=101, dtype=torch.float32)


@pytest.fixture(scope="module")
def digits_data():
    return phase.digits_points(n=100, seed=101)


@pytest.mark.contrast("γ′=1, which puts γ=1.75 in the linear regime (图7.5(b))")
def test_control_ch07_digits_sw(digits_data):
    # γ′ = 1 puts γ = 1.75 on the linear side (γ′ > γ − 1): on the digits too S_w no longer turns positive
    x, y = digits_data
    run = phase.run_phase([0.5, 1.0, 1.75], [1.0], [100, 200], x=x, y=y, **DIGITS)
    v = phase.check_digits_sw(run)
    assert not v.passed, v.measured_line()
    assert run.sw()[2, 0] < 0.2
    twin = phase.check_digits_sw(phase.run_phase([0.5, 1.0, 1.75], [0.0], [125, 250, 500, 1000], x=x, y=y, **DIGITS))
    assert twin.passed, twin.measured_line()


@pytest.mark.contrast("linear-regime γ=0.75 in the condensed slot (图7.7)")
def test_control_ch07_digits_condensation(digits_data):
    x, y = digits_data
    # both nets in the linear regime (γ = 0.5 and 0.75 < 1): nothing condenses
    linear_only = phase.run_phase([0.5, 0.75], [0.0], [100, 200], x=x, y=y, **DIGITS)
    v = phase.check_digits_condensation(phase.direction_features(linear_only))
    assert not v.passed, v.measured_line()
    assert not v.conditions[0].passed  # the "condensed" slot is spread
    # the condensed setting stopped after one step: its neurons still point where they were drawn
    one_step = phase.run_phase([0.5, 1.75], [0.0], [100, 200], x=x, y=y, **{**DIGITS, "max_steps": 1})
    v = phase.check_digits_condensation(phase.direction_features(one_step))
    assert not v.passed, v.measured_line()
    assert not v.conditions[0].passed
    twin = phase.check_digits_condensation(phase.direction_features(
        phase.run_phase([0.5, 1.75], [0.0], [100, 200], x=x, y=y, **DIGITS)))
    assert twin.passed, twin.measured_line()


# 图7.6 along the width: the three points of 图7.4 at small widths, 4 initialisations each
@pytest.fixture(scope="module")
def trend_run():
    return phase.run_phase([0.5, 1.0, 1.75], [0.0], [100, 200, 400], seed=1, n_seeds=4)


@pytest.mark.contrast("the linear-regime point γ=0.5 in the condensed slot (图7.6 along the width)")
def test_control_ch07_width_sharpening(trend_run):
    # linear-regime neurons stay where they were drawn: their degree of condensation does not grow with m
    v = phase.check_width_sharpening(phase.width_trend(trend_run, points={**phase.TREND_POINTS,
                                                                          "condensed": (0.5, 0.0)}))
    assert not v.passed, v.measured_line()
    twin = phase.check_width_sharpening(phase.width_trend(trend_run))
    assert twin.passed, twin.measured_line()


@pytest.mark.contrast("the condensed point γ=1.75 in the critical slot (图7.6 along the width)")
def test_control_ch07_width_critical(trend_run):
    # the condensed point sharpens as m grows: "stays the same" must fail there
    v = phase.check_width_critical(phase.width_trend(trend_run, points={**phase.TREND_POINTS,
                                                                        "critical": (1.75, 0.0)}))
    assert not v.passed, v.measured_line()
    twin = phase.check_width_critical(phase.width_trend(trend_run))
    assert twin.passed, twin.measured_line()



@pytest.mark.contrast("the condensed point γ=1.75 in the slanted-branch critical slot (图7.6 along the width)")
def test_control_ch07_width_critical_slanted(trend_run):
    # the condensed point sharpens as m grows: "stays the same" must fail there too
    v = phase.check_width_critical_slanted(phase.width_trend(trend_run, points={"critical": (1.75, 0.0)}))
    assert not v.passed, v.measured_line()
    slanted = phase.run_phase([phase.SLANTED_POINT[0]], [phase.SLANTED_POINT[1]], [100, 200, 400], seed=1, n_seeds=4)
    twin = phase.check_width_critical_slanted(phase.width_trend(slanted, points={"critical": phase.SLANTED_POINT}))
    assert twin.passed, twin.measured_line()

def test_peak_share_and_degree():
    rng = np.random.default_rng(0)
    two = np.concatenate([np.full(50, 0.3), np.full(50, -2.0)])  # every neuron on two orientations
    assert phase.peak_share(two, np.ones(100)) == pytest.approx(1.0)
    spread = rng.uniform(-np.pi, np.pi, 4000)  # uniform: two ±5° windows hold about 2·10/360 of the mass
    assert 0.05 < phase.peak_share(spread, np.ones(4000)) < 0.08
    wrap = np.array([np.pi - 0.01, -np.pi + 0.01, 1.0])  # a window wraps around ±π
    assert phase.peak_share(wrap, np.array([1.0, 1.0, 2.0]), peaks=1) == pytest.approx(0.5)
    assert phase.condensation_degree(two, np.ones(100), 50) == pytest.approx(np.log((1 - 1e-6) / 1e-6))
    with pytest.raises(ValueError, match="block"):
        phase.condensation_degree(two, np.ones(100), 101)
