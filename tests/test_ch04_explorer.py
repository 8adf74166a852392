"""The chapter-4 explorer driven from Python, as an instructor's clicks would drive it."""

import numpy as np
import pytest

from companion.experiments.ch04_frequency import (check_alias, check_asi, check_gradient_weight, check_parity_spectrum,
                                         check_stopping_step, make_explorer, parse_numbers)


@pytest.fixture(scope="module")
def explorer():
    return make_explorer()


def test_first_update_is_quick_and_shows_the_order(explorer):
    assert explorer.error is None and explorer.seconds > 0
    final = explorer.result.deltas[-1, 0]                 # Δ_F(k) for k = 1, 3, 5 after the default 800 steps
    assert final[0] < final[1] < final[2]                 # low frequencies fitted first …
    assert final[0] < 0.1 <= final[2]                     # … k=1 converged, k=5 not yet
    assert not np.isnan(explorer.result.first[0, 0])


def test_changing_frequencies_recomputes_the_heatmap(explorer):
    result = explorer.set(ks="2, 7", amps="1, 0.5", steps=300)
    assert result.config.ks == (2, 7)
    assert result.deltas.shape[-1] == 2
    assert np.isclose(np.abs(np.fft.rfft(result.f_train))[7] / len(result.f_train), 0.25)


def test_large_init_puts_energy_above_nyquist(explorer):
    small = explorer.set(ks="1, 3, 5", amps="1, 1, 1", init_std=0.05, steps=300).high_frequency_energy()[0]
    large = explorer.set(init_std=3.0).high_frequency_energy()[0]
    assert large > 3 * small   # the explorer runs at the active seed: deterministic


def test_asi_makes_the_initial_output_zero(explorer):
    result = explorer.set(asi=True, act="ricker", a=0.3, init_std=0.5, steps=100)
    assert np.all(result.out_test[0] == 0)


def test_bad_values_are_rejected_with_a_clear_message(explorer):
    with pytest.raises(ValueError, match=r"init_std=50.0 is out of range: allowed values lie in \[0.01, 3\]"):
        explorer.set(init_std=50.0)
    with pytest.raises(ValueError, match="act='gelu' is not allowed"):
        explorer.set(act="gelu")
    with pytest.raises(ValueError, match="frequencies must lie in"):
        explorer.set(ks="1, 90", amps="1, 1")
    with pytest.raises(ValueError, match="one amplitude per frequency"):
        explorer.set(ks="1, 3", amps="1")
    with pytest.raises(ValueError, match="comma-separated"):
        parse_numbers("1, x", "frequencies", int)


def test_exercise_checks_accept_right_and_reject_wrong_answers(capsys):
    assert check_alias(5) and not check_alias(11) and not check_alias(None)
    assert check_gradient_weight(lambda k: 1 + k**2) and not check_gradient_weight(lambda k: k**2)
    assert check_asi(np.zeros(3)) and not check_asi(np.ones(3))
    assert "not answered yet" in capsys.readouterr().out


def test_parity_and_stopping_checks():
    assert check_parity_spectrum(lambda k: (-1j) ** 3 * np.prod(np.sin(2 * np.pi * k)))
    assert not check_parity_spectrum(lambda k: np.prod(np.sin(2 * np.pi * k)))
    steps, test_loss = np.array([0, 10, 20, 30]), np.array([1.0, 0.2, 0.25, 0.5])
    assert check_stopping_step(20, steps, test_loss) and not check_stopping_step(30, steps, test_loss)
