"""The chapter-7 explorer retrains when γ, γ′, m move, and refuses out-of-range values."""

import numpy as np
import pytest

from companion.experiments import ch07_phase as phase


@pytest.fixture(scope="module")
def explorer():
    return phase.make_explorer(seed=0)


def test_moving_gamma_changes_regime_and_fit(explorer):
    lin = explorer.set(gamma=0.5, gamma_prime=0.0, m=400)
    out_lin, rd_lin = lin.output.copy(), lin.rd
    assert lin.regime == "linear" and lin.converged
    cond = explorer.set(gamma=1.75)
    assert cond.regime == "condensed" and cond.converged
    assert not np.allclose(cond.output, out_lin)
    assert cond.rd > 10 * rd_lin


def test_width_changes_the_net(explorer):
    res = explorer.set(gamma=0.5, gamma_prime=0.0, m=200)
    assert res.a.shape == (200,) and res.m == 200 and res.converged
    fitted = np.interp(res.x, res.grid, res.output)  # the trained net passes through the 4 points
    assert np.abs(fitted - res.y).max() < 0.02
    wide = explorer.set(m=1600)
    assert wide.a.shape == (1600,) and not np.allclose(wide.output, res.output)


def test_out_of_range_values_raise(explorer):
    with pytest.raises(ValueError, match="gamma=3"):
        explorer.set(gamma=3.0)
    with pytest.raises(ValueError, match="m=50"):
        explorer.set(m=50)


# The reliability review (2026-11, section 4): every numeric argument of the explorer's compute functions is finite,
# of the right type (a bool is not an int) and within a bound; a bad one is one ValueError naming it and what is
# allowed, raised before any training.
@pytest.mark.parametrize("args, kwargs, message", [
    ((1.0, -float("inf"), 100), {}, r"gamma_prime=-inf is out of range: allowed values lie in \[-1, 1.5\]"),       # 4.11
    ((float("inf"), 0.0, 100), {}, r"gamma=inf is out of range: allowed values lie in \[0, 2.5\]"),               # 4.11
    ((1.0, 0.0, 10 ** 9), {}, r"m=1000000000 is out of range: allowed values lie in \[2, 2000\]"),         # 4.12
    (("1", 0.0, 100), {}, r"gamma='1' must be a number"),                                                # 4.12
    ((50.0, 0.0, 100), {}, r"gamma=50.0 is out of range"),                                              # 4.12
    ((1.0, 0.0, 100.5), {}, r"m=100.5 must be an integer"),
    ((1.0, 0.0, True), {}, r"m=True must be an integer"),
    ((1.0, 0.0, 100), dict(max_steps=0), r"max_steps=0 is out of range"),
    ((1.0, 0.0, 100), dict(seed=1.5), r"seed=1.5 must be an integer"),
])
def test_explore_point_rejects_bad_numbers(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        phase.explore_point(*args, **kwargs)


def test_make_explorer_rejects_bad_settings():
    with pytest.raises(ValueError, match="max_steps=-5 is out of range"):
        phase.make_explorer(seed=0, max_steps=-5)
