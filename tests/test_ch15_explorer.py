"""The chapter 15 explorer, driven from Python: controls recompute the solve as they should."""

import numpy as np
import pytest

from companion.experiments import ch15_pinns as pde_experiments


@pytest.fixture(scope="module")
def explorer():
    ex = pde_experiments.make_explorer()
    ex.set(method="jacobi", iterations=100)
    return ex


def test_more_jacobi_iterations_reduce_the_high_mode_error_first(explorer):
    few = explorer.set(method="jacobi", iterations=100)
    many = explorer.set(iterations=10_000)
    assert many.counts[-1] == 10_000 and few.counts[-1] == 100
    low, high = many.mode_errors[-1, 0], many.mode_errors[-1, 2]
    assert high < few.mode_errors[-1, 2] and high < low      # Jacobi: high modes converge first
    assert many.max_error < few.max_error


def test_frequency_and_method_controls(explorer):
    before = explorer.set(method="jacobi", k_high=24.0, iterations=100)
    after = explorer.set(k_high=40.0)
    assert after.modes[-1] > before.modes[-1]
    assert not np.allclose(after.exact, before.exact)
    net = explorer.set(method="ritz", steps=50, width=10)
    assert net.method == "ritz" and net.counts[-1] == 50


def test_out_of_range_values_raise(explorer):
    with pytest.raises(ValueError, match="width"):
        explorer.set(width=5)
    with pytest.raises(ValueError, match="method"):
        explorer.set(method="multigrid")
    with pytest.raises(ValueError, match="iterations"):
        explorer.set(iterations=1e7)
