"""The chapter-6 explorer (the three factors of the frequency principle) driven from Python."""

import math

import numpy as np
import pytest

from companion.experiments.ch06_mechanism import (activation_spectrum, check_gradient_weight, check_tanh_spectrum,
                                                  make_explorer)


@pytest.fixture(scope="module")
def explorer():
    return make_explorer()


def test_first_update_is_quick_and_shows_the_order(explorer):
    assert explorer.error is None and explorer.seconds > 0
    final = explorer.result.deltas[-1, 0]                 # Δ_F(k) for k = 1, 3, 5 after the default 800 steps
    assert final[0] < final[1] < final[2]
    assert final[0] < 0.1 <= final[2]


def test_large_init_puts_energy_above_nyquist(explorer):
    small = explorer.set(init_std=0.05, steps=300).high_frequency_energy()[0]
    large = explorer.set(init_std=3.0).high_frequency_energy()[0]
    assert large > 3 * small   # the explorer runs at the active seed: deterministic


def test_asi_makes_the_initial_output_zero(explorer):
    result = explorer.set(asi=True, act="ricker", a=0.3, init_std=0.5, steps=100)
    assert np.all(result.out_test[0] == 0)


def test_derivative_loss_speeds_up_the_high_frequency(explorer):
    plain = explorer.set(asi=False, act="tanh", init_std=0.1, loss="mse", steps=800)
    grad = explorer.set(loss="mse+grad")
    assert grad.deltas[-1, 0, 2] < plain.deltas[-1, 0, 2]          # k = 5 closer with the derivative term


def test_bad_values_are_rejected_with_a_clear_message(explorer):
    with pytest.raises(ValueError, match=r"init_std=50.0 is out of range: allowed values lie in \[0.01, 3\]"):
        explorer.set(init_std=50.0)
    with pytest.raises(ValueError, match="act='gelu' is not allowed"):
        explorer.set(act="gelu")
    with pytest.raises(ValueError, match="loss='huber' is not allowed"):
        explorer.set(loss="huber")


def test_activation_spectra():
    xi = np.array([1.0, 5.0, 20.0])
    tanh = activation_spectrum("tanh", xi, w=1.0)
    assert np.allclose(tanh, math.pi / np.sinh(math.pi * xi / 2))                      # (6.5), modulus
    steep = activation_spectrum("tanh", xi, w=100.0)                # almost a step: decays only like 1/ξ here
    assert steep[2] / steep[1] > 0.2 and tanh[2] / tanh[1] < 1e-8
    grid = np.linspace(0.5, 40, 400)
    for a in (0.3, 0.1):                                         # the Ricker spectrum peaks near √2 / a
        peak = grid[np.argmax(activation_spectrum("ricker", grid, a=a))]
        assert abs(peak - math.sqrt(2) / a) < 0.2
    with pytest.raises(ValueError, match="unknown activation"):
        activation_spectrum("relu", xi)
    with pytest.raises(ValueError, match="positive frequencies"):
        activation_spectrum("tanh", np.array([0.0]))


def test_exercise_checks_accept_right_and_reject_wrong_answers(capsys):
    assert check_gradient_weight(lambda k: 1 + k**2) and not check_gradient_weight(lambda k: k**2)
    assert check_tanh_spectrum(lambda xi, w: math.pi / (abs(w) * math.sinh(math.pi * xi / (2 * abs(w)))))
    assert not check_tanh_spectrum(lambda xi, w: math.exp(-math.pi * xi / (2 * w)))
    assert not check_tanh_spectrum(None)
    assert "not answered yet" in capsys.readouterr().out


# The reliability review (2026-11, 4.4): the panel's text fields (the same parse as chapter 4's) take finite numbers
# within the field's range only; a rejected set leaves the controls as they were.
@pytest.mark.parametrize("values, message", [
    (dict(amps="nan, 1, 1"), r"amplitudes='nan, 1, 1': nan is out of range: allowed values lie in \[-100, 100\]"),
    (dict(amps="1, inf, 1"), r"inf is out of range"),
    (dict(amps="1e308, 1e308, 1e308"), r"1e\+308 is out of range"),
    (dict(ks="1e9, 3, 5"), r"frequencies='1e9, 3, 5': 1e\+09 is out of range: allowed values lie in \[1, 63\]"),
    (dict(ks=5), r"ks=5 must be text"),
    (dict(init_std=True), r"init_std=True must be a number"),
    (dict(width=True), r"width=True must be an integer"),
])
def test_bad_text_and_numbers_raise_one_clear_error(explorer, values, message):
    before = explorer.values()
    with pytest.raises(ValueError, match=message):
        explorer.set(**values)
    assert explorer.values() == before
