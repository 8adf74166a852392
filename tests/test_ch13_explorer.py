"""The chapter-13 explorer: γ, λ and depth recompute ID/OOD curves and the W_Q condensation; bad values raise."""

import numpy as np
import pytest

from companion.core import attention
from companion.experiments import ch13_complexity as complexity


@pytest.fixture(scope="module")
def explorer():
    ex = complexity.make_explorer(seed=0)
    ex.set(steps=200)
    return ex


def test_gamma_changes_initial_scale_and_condensation(explorer):
    big_gamma = explorer.result
    assert big_gamma["steps"][-1] == 200 and big_gamma["cosine"].shape == (32, 32)
    run = complexity.run_composition([(1.4, 0.1, 0)], n_layers=2, steps=200, record_every=20,
                                     **complexity.EXPLORER_RUN)  # the explorer's run
    model, ood = run.model(), run.data(0).tests["OOD"]
    assert big_gamma["commutativity"] == pytest.approx(float(attention.commutativity(model, ood)[0]))
    assert big_gamma["condensation"] == pytest.approx(
        attention.condensation(model.member_weight("w_q", 0, layer=0).numpy()))
    assert np.allclose(np.sort(big_gamma["cosine"].ravel()),
                       np.sort(attention.neuron_cosine(model.member_weight("w_q", 0, layer=0).numpy()).ravel()))
    small_gamma = explorer.set(gamma=0.2)
    assert small_gamma["condensation"] < big_gamma["condensation"]  # small γ = large init: less condensed
    assert not np.allclose(small_gamma["ID"], big_gamma["ID"])
    deeper = explorer.set(depth=1, lam=0.01)
    assert deeper["cosine"].shape == (32, 32) and deeper["ID"].shape == deeper["steps"].shape


def test_bad_values_raise(explorer):
    with pytest.raises(ValueError, match="gamma"):
        explorer.set(gamma=3.0)
    with pytest.raises(ValueError, match="lam"):
        explorer.set(lam=10.0)


# The reliability review (2026-11, section 4): every numeric argument of the explorer's compute functions is finite,
# of the right type (a bool is not an int) and within a bound; a bad one is one ValueError naming it and what is
# allowed, raised before any training.
@pytest.mark.parametrize("kwargs, message", [
    (dict(gamma=float("nan")), r"gamma=nan is out of range: allowed values lie in \[0.1, 1.6\]"),
    (dict(lam=float("inf")), r"lam=inf is out of range"),
    (dict(depth=True), r"depth=True must be an integer"),
    (dict(steps=10 ** 9), r"steps=1000000000 is out of range"),
    (dict(seed=-1), r"seed=-1 is out of range"),
])
def test_explorer_run_rejects_bad_numbers(kwargs, message):
    with pytest.raises(ValueError, match=message):
        complexity._explore_composition(**(dict(gamma=1.4, lam=0.1, depth=2, steps=100, seed=0) | kwargs))


def test_make_explorer_rejects_a_bad_seed():
    with pytest.raises(ValueError, match="seed=-1 is out of range"):
        complexity.make_explorer(seed=-1)
