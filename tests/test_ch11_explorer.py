"""The chapter-11 explorers recompute when their controls move, and refuse out-of-range values."""

import numpy as np
import pytest
import torch

from companion.experiments import ch11_flatness as fl
from companion.kit.seeds import generator


@pytest.fixture(scope="module")
def explorer():
    return fl.make_explorer(seed=0)


def test_learning_rate_moves_the_edge(explorer):
    base = explorer.set(eta=0.25, batch_size=fl.EXPLORER_SAMPLES, keep=1.0, width=64)
    assert base.eta == pytest.approx(0.25)
    assert abs(np.median(base.tail()) / 8.0 - 1) < 0.15          # at the edge 2/eta = 8
    big = explorer.set(eta=0.5)
    assert np.median(big.tail()) < 0.7 * np.median(base.tail())  # a larger step, a flatter edge
    assert abs(np.median(big.tail()) / 4.0 - 1) < 0.15


def test_batch_size_keep_and_width_retrain(explorer):
    gd = explorer.set(eta=0.25, batch_size=fl.EXPLORER_SAMPLES, keep=1.0, width=64)
    sgd = explorer.set(batch_size=8)
    assert np.median(sgd.tail()) < np.median(gd.tail())
    assert len(sgd.loss) < len(gd.loss)                        # mini-batch runs record the loss every 5 steps
    drop = explorer.set(batch_size=fl.EXPLORER_SAMPLES, keep=0.5)
    assert not np.allclose(drop.sharpness, gd.sharpness)
    narrow = explorer.set(keep=1.0, width=16)
    assert not np.allclose(narrow.loss, gd.loss)


def test_out_of_range_values_raise(explorer):
    with pytest.raises(ValueError, match="eta=2"):
        explorer.set(eta=2.0)
    with pytest.raises(ValueError, match="batch_size=7"):
        explorer.set(batch_size=7)
    with pytest.raises(ValueError, match="keep=0.2"):
        explorer.set(keep=0.2)
    with pytest.raises(ValueError, match="unknown control"):
        explorer.set(depth=3)


def test_rescaling_explorer():
    x = torch.linspace(-1, 1, 20)[:, None]
    net = fl.DropoutMLP([1, 30, 1], "relu", generator=generator(0))
    ex = fl.rescaling_explorer(net, x, fl.dropout_target(x), cs=(0.5, 1.0, 2.0))
    one = ex.set(c=1.0)
    other = ex.set(c=4.0)
    assert other.output_change[0] < 1e-4 and abs(other.sharpness[0] / one.sharpness[0] - 1) > 0.1
    with pytest.raises(ValueError, match="c=20"):
        ex.set(c=20.0)


# The reliability review (2026-11, section 4): every numeric argument of the explorer's compute functions is finite,
# of the right type (a bool is not an int) and within a bound; a bad one is one ValueError naming it and what is
# allowed, raised before any training.
@pytest.mark.parametrize("kwargs, message", [
    (dict(eta=float("nan")), r"eta=nan is out of range: allowed values lie in \[0.02, 0.6\]"),                    # 4.19
    (dict(eta=float("inf")), r"eta=inf is out of range"),                                                          # 4.19
    (dict(batch_size=0), r"batch_size=0 is out of range: allowed values lie in \[1, 128\]"),               # 4.20
    (dict(batch_size=-8), r"batch_size=-8 is out of range"),                                               # 4.20
    (dict(batch_size=8.0), r"batch_size=8.0 must be an integer"),
    (dict(width=-3), r"width=-3 is out of range: allowed values lie in \[1, 512\]"),                       # 4.22
    (dict(width=True), r"width=True must be an integer"),
    (dict(keep=float("nan")), r"keep=nan is out of range"),                                                        # 4.21
    (dict(steps=10 ** 9), r"steps=1000000000 is out of range"),
    (dict(seed=-1), r"seed=-1 is out of range"),
])
def test_explore_training_rejects_bad_numbers(kwargs, message):
    with pytest.raises(ValueError, match=message):
        fl.explore_training.__wrapped__(**kwargs)
