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
