"""The chapter-10 explorer recomputes when its controls move and rejects out-of-range values."""

import pytest

from companion.experiments import ch10_estimate as S


def test_rank_and_init_change_result():
    ex = S.make_explorer(seed=0, steps=1500)
    r1 = ex.set(rank=1, trials=5)
    assert r1["optimistic"] == 7 and r1["success"][:6].max() == 0
    r3 = ex.set(rank=3)
    assert r3["optimistic"] == 15 and r3["success"][:13].max() == 0
    big = ex.set(rank=1, init_std=1.0)
    assert (big["error"] != r1["error"]).any()
    with pytest.raises(ValueError, match="out of range"):
        ex.set(rank=5)


def test_architecture_control_trains_the_fig_10_3_nets():
    ex = S.make_explorer(seed=0, steps=300, net_steps=300)
    cnn = ex.set(model="CNN", trials=4, init_std=1e-6)
    assert cnn["optimistic"] == 6 and cnn["success"].shape == (10,)
    fc = ex.set(model="fully connected")
    assert fc["optimistic"] == 18 and (fc["error"] != cnn["error"]).any()
    with pytest.raises(ValueError, match="not allowed"):
        ex.set(model="transformer")


# The reliability review (2026-11, section 4): every numeric argument of the explorer's compute functions is finite,
# of the right type (a bool is not an int) and within a bound; a bad one is one ValueError naming it and what is
# allowed, raised before any training.
@pytest.mark.parametrize("kwargs, message", [
    (dict(steps=0), r"steps=0 is out of range"),
    (dict(net_steps=1.5), r"net_steps=1.5 must be an integer"),
    (dict(seed=-1), r"seed=-1 is out of range"),
])
def test_make_explorer_rejects_bad_settings(kwargs, message):
    with pytest.raises(ValueError, match=message):
        S.make_explorer(**(dict(seed=0) | kwargs))
