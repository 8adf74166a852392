"""The chapter-12 explorer: controls recompute accuracy curves and attention maps; bad values raise."""

import numpy as np
import pytest

from companion.experiments import ch12_anchors as anchors


@pytest.fixture(scope="module")
def explorer():
    ex = anchors.make_explorer(seed=0)
    ex.set(steps=100)
    return ex


def test_changing_task_and_depth_recomputes(explorer):
    first = explorer.result
    assert first["name"] == "identity" and len(first["maps"]) == 2
    assert first["steps"][-1] == 100 and first["train"].shape == first["steps"].shape
    second = explorer.set(task="reading", depth=1)
    assert second["name"] == "reading" and len(second["maps"]) == 1
    assert second["maps"][0].shape == (9, 9)
    assert np.allclose(second["maps"][0].sum(-1), 1.0, atol=1e-4)
    third = explorer.set(task="identity", depth=2, split="key_range", steps=200)
    assert third["name"] == "identity_key_range" and third["steps"][-1] == 200


def test_bad_values_raise(explorer):
    with pytest.raises(ValueError, match="depth"):
        explorer.set(depth=9)
    with pytest.raises(ValueError, match="heads"):
        explorer.set(heads=3)
    with pytest.raises(ValueError, match="key_range"):
        explorer.set(task="reading", split="key_range")
