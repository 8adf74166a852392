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


def _spectrum_run(init_std, seed=7):
    """图9.5's ladder runs as in the chapter (Adam, lr 3·10⁻³, 9000 steps) of widths 2, 8 and 16, 4 runs each."""
    _, xa, y = E.ladder_target()
    return E.spectrum_runs(xa, y, (2, 8, 16), 4, init_std=init_std, lr=3e-3, steps=9000, record_every=20, seed=seed,
                           progress=False)


@pytest.mark.contrast("large initialisation, std 0.5: the linear, non-condensed regime (§9.2.1 starts condensed)")
def test_control_ch09_loss_spectrum():
    """Large init (std 0.5): the wide nets fall through the width-2 line without stalling on it; their spectra
    spread out."""
    v = E.check_loss_spectrum(_spectrum_run(0.5))
    print(v.measured_line())
    assert not v.passed, v.measured_line()


def test_loss_spectrum_positive_twin():
    v = E.check_loss_spectrum(_spectrum_run(1e-4))
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


def _saddle_chain(xa, y, seed):
    """图9.7 as in the chapter: the lowest strict width-2 minimum, its largest-amplitude neuron split into 2, 3 equal
    copies."""
    fit, _ = E.strict_minimum(xa, y, 2, seed=seed)
    return fit, E.split_spectra(fit, xa, y, ks=(1, 2, 3), alpha=None)


def _exact_targets(fit, xa):
    """Targets a width-2 net fits exactly: the outputs of the trained width-2 net itself (zero residual)."""
    return torch.as_tensor(E.predict(fit.a, fit.w, xa, "tanh"))


def _saddle_control(panel):
    """图9.7 on targets the narrow net fits exactly: the residual r = 0, the stability matrix S_s vanishes and the
    trained zero-loss minimum stays a minimum after splitting (only zero eigenvalues are added)."""
    xa, y = E.sine_task()[1:] if panel == "1d" else E.iris_task()
    fit, _ = _saddle_chain(xa, y, 3)
    y_exact = _exact_targets(fit, xa)
    exact, chain = _saddle_chain(xa, y_exact, 1003)
    assert exact.loss < 1e-20
    assert all(c.counts.negative == 0 for c in chain)
    return chain


@pytest.mark.contrast("targets a width-2 net fits exactly (zero residual, a zero-loss global minimum)")
def test_control_ch09_saddle_1d():
    v = E.check_embedded_saddle(_saddle_control("1d"), E.SADDLE_1D)
    assert not v.passed, v.measured_line()


@pytest.mark.contrast("targets a width-2 net fits exactly (zero residual, a zero-loss global minimum)")
def test_control_ch09_saddle_iris():
    v = E.check_embedded_saddle(_saddle_control("iris"), E.SADDLE_IRIS, base_minimum=False)
    assert not v.passed, v.measured_line()


@pytest.mark.parametrize("panel", ["1d", "iris"])
def test_saddle_positive_twin(panel):
    xa, y = E.sine_task()[1:] if panel == "1d" else E.iris_task()
    spec = E.SADDLE_1D if panel == "1d" else E.SADDLE_IRIS
    _, chain = _saddle_chain(xa, y, 3)
    v = E.check_embedded_saddle(chain, spec, base_minimum=panel == "1d")
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
