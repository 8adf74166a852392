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


def test_an_explorer_run_trains_on_the_settings_device(monkeypatch):
    """The explorer's run keeps its model and sequences on the settings' device, here the meta device
    (tests/device_support.py): a mini-batch index or a sequence left on the CPU fails, as it would on a GPU."""
    from types import SimpleNamespace

    from device_support import META, MetaReadsAsZeros, OneDevicePerCall

    monkeypatch.setattr(anchors, "settings", lambda: SimpleNamespace(device=META))
    with OneDevicePerCall(), MetaReadsAsZeros():
        run = anchors._ExplorerRun("identity", 1, 1, seed=0)
        run.advance(2)
    assert {p.device.type for p in run.model.parameters()} == {"meta"}
    assert sorted(run.accuracy) == [0, 2] and [m.shape for m in run.maps[2]] == [run.maps[0][0].shape]


# The reliability review (2026-11, section 4): every numeric argument of the explorer's compute functions is finite,
# of the right type (a bool is not an int) and within a bound; a bad one is one ValueError naming it and what is
# allowed, raised before any training.
@pytest.mark.parametrize("kwargs, message", [
    (dict(depth=10 ** 6), r"depth=1000000 is out of range: allowed values lie in \[1, 4\]"),
    (dict(depth=2.0), r"depth=2.0 must be an integer"),
    (dict(heads=0), r"heads=0 is out of range"),
    (dict(steps=10 ** 9), r"steps=1000000000 is out of range: allowed values lie in \[1, 1000\]"),
])
def test_compute_rejects_bad_numbers(explorer, kwargs, message):
    with pytest.raises(ValueError, match=message):
        explorer.compute(**(explorer.values() | kwargs))


def test_make_explorer_rejects_a_bad_seed():
    with pytest.raises(ValueError, match="seed=-1 is out of range"):
        anchors.make_explorer(seed=-1)
