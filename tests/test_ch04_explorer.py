"""The chapter-4 explorer driven from Python, as an instructor's clicks would drive it."""

import numpy as np
import pytest

from companion.core.fprinciple import parse_numbers
from companion.experiments.ch04_frequency import (check_alias, check_asi, check_parity_spectrum, check_stopping_step,
                                                  make_explorer)


@pytest.fixture(scope="module")
def explorer():
    return make_explorer()


def test_first_update_is_quick_and_shows_the_order(explorer):
    assert explorer.error is None and explorer.seconds > 0
    final = explorer.result.deltas[-1, 0]                 # Δ_F(k) for k = 1, 3, 5 after the default 400 steps
    assert final[0] < final[1] < final[2]                 # low frequencies fitted first …
    assert final[0] < 0.1 <= final[2]                     # … k=1 converged, k=5 not yet
    assert not np.isnan(explorer.result.first[0, 0])


def test_changing_frequencies_recomputes_the_heatmap(explorer):
    result = explorer.set(ks="2, 7", amps="1, 0.5", steps=300)
    assert result.config.ks == (2, 7)
    assert result.deltas.shape[-1] == 2
    assert np.isclose(np.abs(np.fft.rfft(result.f_train))[7] / len(result.f_train), 0.25)


def test_depth_and_optimiser_change_the_network(explorer):
    deep = explorer.set(ks="1, 3, 5", amps="1, 1, 1", depth=3, steps=200)
    assert deep.config.hidden == (64, 64, 64)
    sgd = explorer.set(optimizer="sgd", lr=1e-2)
    assert sgd.config.optimizer == "sgd" and not np.allclose(sgd.out_train[-1], deep.out_train[-1])
    # plain gradient descent at this rate has not fitted even k = 1 after 200 steps; Adam had
    assert sgd.deltas[-1, 0, 0] > deep.deltas[-1, 0, 0]


def test_bad_values_are_rejected_with_a_clear_message(explorer):
    with pytest.raises(ValueError, match=r"depth=9 is out of range: allowed values lie in \[1, 4\]"):
        explorer.set(depth=9)
    with pytest.raises(ValueError, match="optimizer='lbfgs' is not allowed"):
        explorer.set(optimizer="lbfgs")
    with pytest.raises(ValueError, match="frequencies must lie in"):
        explorer.set(ks="1, 90", amps="1, 1")
    with pytest.raises(ValueError, match="one amplitude per frequency"):
        explorer.set(ks="1, 3", amps="1")
    with pytest.raises(ValueError, match="comma-separated"):
        parse_numbers("1, x", "frequencies", int)


def test_exercise_checks_accept_right_and_reject_wrong_answers(capsys):
    assert check_alias(5) and not check_alias(11) and not check_alias(None)
    assert check_asi(np.zeros(3)) and not check_asi(np.ones(3))
    assert "not answered yet" in capsys.readouterr().out


def test_parity_and_stopping_checks():
    assert check_parity_spectrum(lambda k: (-1j) ** 3 * np.prod(np.sin(2 * np.pi * k)))
    assert not check_parity_spectrum(lambda k: np.prod(np.sin(2 * np.pi * k)))
    steps, test_loss = np.array([0, 10, 20, 30]), np.array([1.0, 0.2, 0.25, 0.5])
    assert check_stopping_step(20, steps, test_loss) and not check_stopping_step(30, steps, test_loss)
