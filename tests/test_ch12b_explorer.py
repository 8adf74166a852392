"""The explorer of chapter 12's second part: split and weight decay recompute the multi-anchor curves; bad values
raise."""

import pytest

from companion.experiments import ch12b_composite as composite


@pytest.fixture(scope="module")
def explorer():
    ex = composite.make_explorer(seed=0)
    ex.set(steps=100)
    return ex


def test_changing_split_and_weight_decay_recomputes(explorer):
    first = explorer.result
    assert first["split"] == "anchor" and first["weight_decay"] == 0.01
    assert first["steps"][-1] == 100 and first["train"].shape == first["OOD"].shape == first["steps"].shape
    assert sorted(first["per_anchor"]) == list(range(1, 11))
    second = explorer.set(split="key_range", weight_decay=0.4)
    assert second["split"] == "key_range" and second["weight_decay"] == 0.4
    assert not (second["OOD"] == first["OOD"]).all() or not (second["train"] == first["train"]).all()


@pytest.mark.parametrize("kwargs, message", [
    (dict(weight_decay=float("nan")), r"weight_decay=nan"),
    (dict(weight_decay=5.0), r"weight_decay=5.0 is out of range"),
    (dict(steps=10 ** 6), r"steps=1000000 is out of range: allowed values lie in \[100, 1500\]"),
    (dict(steps=200.0), r"steps=200.0 must be an integer"),
    (dict(split="random"), r"split='random'; choose one of anchor, key_range"),
])
def test_compute_rejects_bad_values(explorer, kwargs, message):
    with pytest.raises(ValueError, match=message):
        explorer.compute(**(explorer.values() | kwargs))


def test_make_explorer_rejects_a_bad_seed():
    with pytest.raises(ValueError, match="seed=-1 is out of range"):
        composite.make_explorer(seed=-1)
