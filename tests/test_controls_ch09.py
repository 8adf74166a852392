"""Negative controls of chapter 9's claims: each claim's own check on a small real run where the
phenomenon is absent fails, and (where cheap) the same small setting with the phenomenon present passes."""

import pytest
import torch

from companion.core.data import digits as load_digits
from companion.experiments import ch09_embedding as E


@pytest.fixture(scope="module")
def three_tanh():
    _, xa, y = E.three_tanh_target()
    narrow = E.best_fits(xa, y, 1, restarts=4, seed=0)[0]
    out = E.two_layer(torch.as_tensor(narrow.a), torch.as_tensor(narrow.w), xa).numpy()
    return xa, y, narrow, out


def _plateau_runs(three_tanh, init_std, seed=3):
    xa, y, narrow, out = three_tanh
    runs = E.run_widths(xa, y, (3, 10), 2, init_std=init_std, lr=0.1, steps=1500, record_every=10, seed=seed,
                        progress=False)
    return runs, {m: E.plateau_match(r, narrow.loss, out, xa) for m, r in runs.items()}


@pytest.mark.contrast("large initialisation, std 0.5 (图9.1 uses small)")
def test_control_ch09_width_plateau(three_tanh):
    """Large init (std 0.5): the nets cross L1* without stalling there as a condensed width-1 net."""
    _, match = _plateau_runs(three_tanh, 0.5)
    v = E.check_width_plateau(match)
    assert not v.passed, v.measured_line()


def test_width_plateau_positive_twin(three_tanh):
    _, match = _plateau_runs(three_tanh, 1e-3)
    v = E.check_width_plateau(match)
    assert v.passed, v.measured_line()


def test_control_ch09_split_identities(three_tanh):
    """A near-split whose copy's input weights moved by 1e-6 is not an embedding: the identities fail."""
    xa, y, _, _ = three_tanh
    errors = E.split_identity_errors(xa, y, 5, jitter=1e-6)
    v = E.check_split_identities(errors)
    assert not v.passed, v.measured_line()
    exact = E.split_identity_errors(xa, y, 5)
    assert E.check_split_identities(exact).passed


def test_control_ch09_split_hessian():
    """Splitting a point that is not critical (L-BFGS stopped after 3 iterations, no polish) fails."""
    _, xsa, ys = E.sine_task()
    rough = E.best_fits(xsa, ys, 2, restarts=1, seed=3, max_iter=3, polish=0)[0]
    chains = {alpha: E.split_spectra(rough, xsa, ys, ks=(1, 2, 3), alpha=alpha) for alpha in (0.5, -0.5)}
    v = E.check_split_hessian(chains)
    assert not v.passed, v.measured_line()


def test_split_hessian_positive_twin():
    _, xsa, ys = E.sine_task()
    fit, _ = E.strict_minimum(xsa, ys, 2, seed=3)
    chains = {alpha: E.split_spectra(fit, xsa, ys, ks=(1, 2, 3), alpha=alpha) for alpha in (0.5, -0.5)}
    v = E.check_split_hessian(chains)
    assert v.passed, v.measured_line()


@pytest.fixture(scope="module")
def digits():
    return load_digits(1000, None, seed=2)


def _compress(digits, init_std, steps, seed):
    return E.compress(digits, width=400, init_std=init_std, steps=steps, lr=1.0, seed=seed)


@pytest.fixture(scope="module")
def merge_control(digits):
    return _compress(digits, 1e-2, 200, 99)


@pytest.mark.contrast("larger initialisation, std 1e-2, non-condensing (图9.8)")
def test_control_ch09_merge_compression(digits, merge_control):
    """The net in the condensed slot trained from the larger init N(0, 10⁻⁴) (seed 98, as the twin): its neurons do
    not gather, so merging keeps nearly every significant neuron and the width shrinks far less than 4×."""
    spread = _compress(digits, 1e-2, 200, 98)
    v = E.check_merge(spread, merge_control)
    assert not v.passed, v.measured_line()
    assert not v.conditions[4].passed  # width / merged width < 4
    assert spread.merge_factor < 1.2


def test_merge_compression_positive_twin(digits, merge_control):
    v = E.check_merge(_compress(digits, 1e-6, 200, 98), merge_control)
    assert v.passed, v.measured_line()


def _path(init_std):
    """图9.4 as in the chapter (width 100, Adam lr 1e-3, 6000 steps) from init std ``init_std``."""
    return E.learning_path(100, init_std=init_std, lr=1e-3, optimizer="adam", steps=6000, record_every=20,
                           seed=3, restarts=4, progress=False)


@pytest.mark.contrast("large initialisation, std 0.5")
def test_control_ch09_learning_path():
    """Large init (std 0.5): the wide net goes straight for the target and never sits at the width-1 optimum."""
    v = E.check_learning_path(_path(0.5))
    assert not v.passed, v.measured_line()


def test_learning_path_positive_twin():
    v = E.check_learning_path(_path(1e-3))
    assert v.passed, v.measured_line()
