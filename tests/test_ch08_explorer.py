"""The chapter-8 explorer retrains when its controls move, scrubs through training time, and refuses bad values."""

import numpy as np
import pytest

from companion.experiments import ch08_condensation as ch08


@pytest.fixture(scope="module")
def explorer():
    return ch08.make_explorer(seed=0, steps=1500)


def test_the_time_slider_moves_through_training_in_the_pictures_time_t(explorer):
    """The slider read 0–40 (the snapshot's number) while the picture says t = 0…600: it reads the time t = η·step
    of the chapter's run (75 for its 1500 steps at η = 0.05) and shows the snapshot nearest to it."""
    assert explorer.controls["t"].max == pytest.approx(75.0) and explorer.controls["t"].step == pytest.approx(75 / 40)
    first = explorer.set(t=0.0, init_std=1e-3, width=50)
    assert first.index == 0
    out0 = first.outputs[first.index].copy()
    middle = explorer.set(t=37.5)
    assert middle.lr * middle.snap_steps[middle.index] == pytest.approx(37.5, rel=0.05)
    last = explorer.set(t=75.0)
    assert last.index == 40 and last.lr * last.snap_steps[40] == pytest.approx(75.0)
    assert not np.allclose(last.outputs[40], out0)


def test_init_scale_controls_condensation(explorer):
    small = explorer.set(init_std=1e-3, t=75.0, width=50)
    big = explorer.set(init_std=1.0)
    assert small.clusters < big.clusters


def test_keep_and_activation_retrain(explorer):
    base = explorer.set(init_std=0.1, keep=1.0, act="relu", width=50)
    out = base.outputs[-1].copy()
    dead = ch08.dead_neurons(base.w[0], base.x)  # inactive at every training input at init
    assert base.dead.tolist() == dead.tolist() and 0 < dead.sum() < 50
    assert np.all(ch08.neuron_moves(base)[dead] == 0) and np.all(ch08.neuron_moves(base)[~dead] > 0)
    dropped = explorer.set(keep=0.6)
    assert not np.allclose(dropped.outputs[-1], out)
    tanh = explorer.set(act="tanh", keep=1.0)
    assert not tanh.dead.any()  # tanh has no dead zone ...
    inactive = ch08.dead_neurons(tanh.w[0], tanh.x)  # ... so neurons on the negative side still move
    assert inactive.any() and np.all(ch08.neuron_moves(tanh)[inactive] > 0)


def test_out_of_range_values_raise(explorer):
    with pytest.raises(ValueError, match="keep=0.3"):
        explorer.set(keep=0.3)
    with pytest.raises(ValueError, match="act='gelu'"):
        explorer.set(act="gelu")


def test_explorer_starts_from_a_given_run_without_training_it_again():
    proc = ch08.run_condensation(width=100, init_std=1e-3, steps=300, seed=0, progress=False)
    panel = ch08.make_explorer(seed=0, steps=300, initial=proc)
    assert panel.result.outputs is proc.outputs  # the default controls show the given run itself
    assert panel.set(t=3 * 15 / 40).index == 3  # t = η·step: snapshot 3 of 40 over 300 steps at η = 0.05
    with pytest.raises(ValueError, match="41 snapshots"):
        ch08.make_explorer(seed=0, steps=600, initial=proc)


# The reliability review (2026-11, section 4): every numeric argument of the explorer's compute functions is finite,
# of the right type (a bool is not an int) and within a bound; a bad one is one ValueError naming it and what is
# allowed, raised before any training.
@pytest.mark.parametrize("kwargs, message", [
    (dict(width=10 ** 6), r"width=1000000 is out of range: allowed values lie in \[10, 500\]"),
    (dict(width=50.5), r"width=50.5 must be an integer"),
    (dict(init_std=float("nan")), r"init_std=nan is out of range"),
    (dict(keep=0.0), r"keep=0.0 is out of range"),
    (dict(steps=-1), r"steps=-1 is out of range"),
    (dict(seed=True), r"seed=True must be an integer"),
])
def test_explorer_run_rejects_bad_numbers(kwargs, message):
    settings = dict(width=100, init_std=1e-3, act="relu", keep=1.0, steps=100, seed=0) | kwargs
    with pytest.raises(ValueError, match=message):
        ch08.run_explorer_condensation(**settings)


def test_make_explorer_rejects_bad_settings():
    with pytest.raises(ValueError, match="steps=0 is out of range"):
        ch08.make_explorer(seed=0, steps=0)
