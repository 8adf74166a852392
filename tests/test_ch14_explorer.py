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
