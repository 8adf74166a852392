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


# The reliability review (2026-11, section 4): every numeric argument of the explorer's compute functions is finite,
# of the right type (a bool is not an int) and within a bound; a bad one is one ValueError naming it and what is
# allowed, raised before any training.
@pytest.mark.parametrize("kwargs, message", [
    (dict(width=0), r"width=0 is out of range: allowed values lie in \[1, 1000\]"),                         # 4.18
    (dict(n=10 ** 9), r"n=1000000000 is out of range: allowed values lie in \[2, 10000\]"),                 # 4.18
    (dict(k_high="24"), r"k_high='24' must be a whole number"),                                          # 4.18
    (dict(k_high=24.5), r"k_high=24.5 must be a whole number: allowed values are the whole numbers in \[4, 48\]"),  # 4.18
    (dict(k_high=float("nan")), r"k_high=nan is out of range"),                                                   # 4.17
    (dict(width=10.0), r"width=10.0 must be an integer"),
    (dict(steps=True), r"steps=True must be an integer"),
    (dict(iterations=10 ** 9), r"iterations=1000000000 is out of range"),
    (dict(seed=-3), r"seed=-3 is out of range"),
])
def test_explore_solver_rejects_bad_numbers(kwargs, message):
    with pytest.raises(ValueError, match=message):
        pde_experiments.explore_solver.__wrapped__(**kwargs)


def test_explore_solver_takes_a_whole_float_frequency():
    run = pde_experiments.explore_solver.__wrapped__(k_high=24.0, method="jacobi", iterations=10, n=64)
    assert run.modes[-1] == 16
