"""The chapter-4 explorer driven from Python, as an instructor's clicks would drive it."""

import numpy as np
import pytest

from companion.core.fprinciple import fit_target, parse_numbers
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
    with pytest.raises(ValueError, match=r"frequencies='1, 90': 90 is out of range: allowed values lie in \[1, 63\]"):
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


# The reliability review (2026-11, section 4): every bad value is one ValueError naming it and what is allowed,
# raised before any training (so these are fast), and a rejected set leaves the explorer as it was.
@pytest.mark.parametrize("values, message", [
    (dict(amps="nan, 1, 1"), r"amplitudes='nan, 1, 1': nan is out of range: allowed values lie in \[-100, 100\]"),   # 4.4
    (dict(amps="inf, 1, 1"), r"amplitudes='inf, 1, 1': inf is out of range"),                                # 4.4
    (dict(amps="1e308, 1e308, 1e308"), r"1e\+308 is out of range: allowed values lie in \[-100, 100\]"),     # 4.4
    (dict(amps="1, -1e3, 1"), r"-1000 is out of range"),
    (dict(ks="1e9, 3, 5"), r"frequencies='1e9, 3, 5': 1e\+09 is out of range: allowed values lie in \[1, 63\]"),  # 4.2
    (dict(ks="nan, 3, 5"), r"frequencies='nan, 3, 5': nan is out of range"),
    (dict(ks="1.5, 3, 5"), r"1.5 is not a whole number"),
    (dict(ks=5), r"ks=5 must be text"),                                                                      # 4.3
    (dict(amps=None), r"amps=None must be text"),
    (dict(depth=True), r"depth=True must be an integer"),
    (dict(width=64.5), r"width=64.5 must be an integer"),
    (dict(depth=1.0), r"depth=1.0 must be an integer"),
])
def test_bad_text_and_numbers_raise_one_clear_error(explorer, values, message):
    before = explorer.values()
    with pytest.raises(ValueError, match=message):
        explorer.set(**values)
    assert explorer.values() == before


def test_a_rejected_set_rolls_the_controls_back(explorer):
    """4.6: a set rejected by the compute function (two frequencies, three amplitudes) used to leave ks='1, 2'
    behind, so every later set(amps=…) failed; now the controls, the result and the error are those of before."""
    explorer.set(ks="1, 3, 5", amps="1, 1, 1", depth=2, optimizer="adam", lr=5e-3, steps=100)
    before, result = explorer.values(), explorer.result
    with pytest.raises(ValueError, match="one amplitude per frequency"):
        explorer.set(ks="1, 2", steps=200)
    assert explorer.values() == before and explorer.result is result and explorer.error is None
    assert explorer.set(amps="1, 0.5, 1").config.amps == (1.0, 0.5, 1.0)


@pytest.mark.parametrize("kwargs, message", [
    (dict(lr=1e6), r"lr=1000000.0 is out of range: allowed values lie in \[0.0001, 0.1\]"),             # 4.8
    (dict(lr=float("nan")), r"lr=nan is out of range"),
    (dict(width=10 ** 9), r"width=1000000000 is out of range"),
    (dict(width=16.0), r"width=16.0 must be an integer"),
    (dict(depth=True), r"depth=True must be an integer"),
    (dict(steps=10 ** 9), r"steps=1000000000 is out of range"),
    (dict(steps="100"), r"steps='100' must be an integer"),
    (dict(init_std=float("inf")), r"init_std=inf is out of range"),
    (dict(a=-1.0), r"a=-1.0 is out of range"),
    (dict(seed=-1), r"seed=-1 is out of range"),
    (dict(asi="yes"), r"asi='yes' must be True or False"),
])
def test_fit_target_bounds_every_number(kwargs, message):
    with pytest.raises(ValueError, match=message):
        fit_target("1, 3, 5", "1, 1, 1", **kwargs)


def test_fit_target_reports_a_diverged_run_instead_of_returning_nan():
    """4.8: a run whose loss blows up (plain SGD at the largest rate on a large target) is an error, not NaNs."""
    with pytest.raises(ValueError, match="training diverged.*lr=0.1"):
        fit_target("1, 3, 5", "100, 100, 100", optimizer="sgd", lr=0.1, steps=300)
