"""The chapter-14 explorer recomputes when its controls move, and refuses out-of-range values."""

import numpy as np
import pytest

from companion.experiments import ch14_phenomena as icl_tasks


@pytest.fixture(scope="module")
def explorer():
    return icl_tasks.make_explorer(steps=60)


def test_context_length_moves_delta_w_which_stays_rank_one(explorer):
    short = explorer.set(k=1)
    dW1, line1 = short["dW"].copy(), short["preds"]["ols"].copy()
    long = explorer.set(k=16)
    assert long["k"] == 16 and 16 in long["ks"]
    assert not np.allclose(long["dW"], dW1)
    assert long["sv"][1] < 1e-4 * long["sv"][0]
    # OLS with 16 examples is exact along the line, with one example it is not
    assert np.allclose(long["preds"]["ols"], long["truth"], atol=1e-3)
    assert not np.allclose(line1, short["truth"], atol=1e-2)


def test_depth_and_noise_retrain_the_learner(explorer):
    base = explorer.set(k=4, depth=2, noise=0.0)
    deeper = explorer.set(depth=1)
    assert not np.allclose(deeper["mse"]["icl"], base["mse"]["icl"])
    assert np.allclose(deeper["mse"]["ols"], base["mse"]["ols"])  # baselines do not depend on the model
    noisy = explorer.set(noise=1.0)
    assert noisy["mse"]["ols"][-1] > base["mse"]["ols"][-1] + 0.5  # label noise floors least squares


def test_out_of_range_values_raise(explorer):
    with pytest.raises(ValueError, match="k=17"):
        explorer.set(k=17)
    with pytest.raises(ValueError, match="depth"):
        explorer.set(depth=4)
    with pytest.raises(ValueError, match="unknown control"):
        explorer.set(width=3)


# The reliability review (2026-11, section 4): every numeric argument of the explorer's compute functions is finite,
# of the right type (a bool is not an int) and within a bound; a bad one is one ValueError naming it and what is
# allowed, raised before any training.
@pytest.mark.parametrize("kwargs, message", [
    (dict(k=True), r"k=True must be an integer"),
    (dict(k=4.0), r"k=4.0 must be an integer"),
    (dict(k="4"), r"k='4' must be an integer: allowed values lie in \[1, 16\]"),
    (dict(noise=float("nan")), r"noise=nan is out of range: allowed values lie in \[0, 1\]"),
    (dict(depth=0), r"depth=0 is out of range"),
    (dict(n_tasks=10 ** 9), r"n_tasks=1000000000 is out of range"),
])
def test_explore_rejects_bad_numbers(kwargs, message):
    with pytest.raises(ValueError, match=message):
        icl_tasks.explore(**(dict(k=4, noise=0.0, depth=2, model=None, seed=0) | kwargs))


@pytest.mark.parametrize("kwargs, message", [
    (dict(noise=float("inf")), r"noise=inf is out of range"),
    (dict(depth=2.5), r"depth=2.5 must be an integer"),
    (dict(steps=0), r"steps=0 is out of range"),
])
def test_adapt_learner_rejects_bad_numbers(kwargs, message):
    with pytest.raises(ValueError, match=message):
        icl_tasks.adapt_learner(None, **(dict(noise=0.0, depth=2, steps=10, seed=0) | kwargs))


def test_explorer_base_rejects_bad_numbers():
    with pytest.raises(ValueError, match="steps=-1 is out of range"):
        icl_tasks.explorer_base.__wrapped__(-1, 0)
