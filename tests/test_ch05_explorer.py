"""The chapter-5 explorer (plain net, MscaleDNN, Fourier features) driven from Python."""

import numpy as np
import pytest

from companion.experiments.ch05_multiscale import check_nyquist_fraction, check_stretch, make_explorer
from companion.experiments import ch05_multiscale as ch05


@pytest.fixture(scope="module")
def explorer():
    return make_explorer()


def test_first_update_is_quick(explorer):
    assert explorer.error is None and explorer.seconds > 0
    result = explorer.result
    assert result.kind == "mscale" and result.deltas.shape[1] == 3
    assert result.deltas[-1, 0] < 0.1                         # the low frequency is fitted


def test_the_model_and_its_scales_change_the_fit(explorer):
    mscale = explorer.set(kind="mscale", n_scales=16, steps=500)
    plain = explorer.set(kind="plain")
    assert plain.kind == "plain" and mscale.deltas[:, 1].min() < plain.deltas[:, 1].min()   # k = 10: mscale ahead
    fourier = explorer.set(kind="fourier", sigma=10.0, steps=300)
    assert fourier.deltas[-1].max() < 0.1                      # Fourier features: every component within 300 steps


def test_bad_values_are_rejected_with_a_clear_message(explorer):
    with pytest.raises(ValueError, match=r"sigma=1000.0 is out of range: allowed values lie in \[1, 200\]"):
        explorer.set(sigma=1000.0)
    with pytest.raises(ValueError, match="kind='relu' is not allowed"):
        explorer.set(kind="relu")
    with pytest.raises(ValueError, match="n_scales=64 exceeds width=16"):
        explorer.set(kind="mscale", n_scales=64, width=16)


def test_exercise_checks(capsys):
    assert check_stretch(25) and not check_stretch(1 / 25) and not check_stretch(None)
    assert check_nyquist_fraction(0.317) and not check_nyquist_fraction(0.5)
    assert "not answered yet" in capsys.readouterr().out


# The reliability review (2026-11, section 4): every numeric argument of the explorer's compute functions is finite,
# of the right type (a bool is not an int) and within a bound; a bad one is one ValueError naming it and what is
# allowed, raised before any training.
@pytest.mark.parametrize("args, message", [
    (("fourier", 4, float("nan"), 16, 100), r"sigma=nan is out of range: allowed values lie in \[1, 200\]"),        # 4.13
    (("fourier", 4, float("inf"), 16, 100), r"sigma=inf is out of range"),                                         # 4.13
    (("mscale", 4, float("nan"), 16, 100), r"sigma=nan is out of range"),                                          # 4.14
    (("fourier", 4, 10.0, 16.5, 100), r"width=16.5 must be an integer"),                                   # 4.16
    (("fourier", 4, 10.0, -16, 100), r"width=-16 is out of range: allowed values lie in \[1, 512\]"),      # 4.15
    (("mscale", 0, 10.0, 16, 100), r"n_scales=0 is out of range"),
    (("mscale", True, 10.0, 16, 100), r"n_scales=True must be an integer"),
    (("plain", 1, 10.0, 16, 10 ** 9), r"steps=1000000000 is out of range"),
    (("plain", 1, 10.0, 16, 100.0), r"steps=100.0 must be an integer"),
    (("plain", 1, 10.0, 10 ** 9, 100), r"width=1000000000 is out of range"),
])
def test_explore_rejects_bad_numbers(args, message):
    with pytest.raises(ValueError, match=message):
        ch05.explore(*args, seed=0)


def test_explore_rejects_a_bad_seed():
    with pytest.raises(ValueError, match="seed=-1 is out of range"):
        ch05.explore("plain", 1, 10.0, 16, 100, seed=-1)


def test_in_jupyterlab_the_fourier_sigma_is_disabled_unless_the_model_has_fourier_features(explorer):
    """Issue #43: a control that changes nothing is disabled, with the note the site shows (from the grid's applies)."""
    explorer.set(kind="mscale")
    assert explorer.controls["sigma"].disabled and "applies when model = fourier" in explorer.notes.value
    explorer.set(kind="fourier", steps=200)
    assert not explorer.controls["sigma"].disabled and explorer.notes.value == ""
    explorer.set(kind="plain")
    assert explorer.controls["sigma"].disabled
