"""The chapter-13 explorer: γ, λ and depth recompute ID/OOD curves and the W_Q condensation; bad values raise."""

import numpy as np
import pytest

from companion import anchors


@pytest.fixture(scope="module")
def explorer():
    ex = anchors.make_composition_explorer(seed=0)
    ex.set(steps=200)
    return ex


def test_gamma_changes_initial_scale_and_condensation(explorer):
    big_gamma = explorer.result
    assert big_gamma["steps"][-1] == 200 and big_gamma["cosine"].shape == (32, 32)
    assert 0.0 <= big_gamma["commutativity"] <= 1.0
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
