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
