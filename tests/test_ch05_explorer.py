"""The chapter-5 explorer (plain net, MscaleDNN, Fourier features) driven from Python."""

import numpy as np
import pytest

from companion.experiments.ch05_multiscale import check_nyquist_fraction, check_stretch, make_explorer


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
