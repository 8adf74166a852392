"""Negative controls of chapter 13's claims: each claim's own check on a small real run without the phenomenon.

Two small real runs of the whole γ × λ grid (d_model 16, 4000 training sequences, one data seed):
untrained (1 step) — no model has fitted anything and small initialisation alone has not condensed
anything — and trained for 250 steps, early in the fit.  The claims' checks must fail where the
phenomenon is absent and, where cheap, pass on the twin where it is present.
"""

import pytest

from companion.experiments import ch13_complexity as complexity

GRID = [(g, l, 0) for g in (0.2, 0.5, 0.8, 1.1, 1.4) for l in (0.01, 0.1)]
SMALL = dict(n_train=4000, n_test=300, d_model=16, n_layers=2, batch_size=64, lr=1e-2)


@pytest.fixture(scope="module")
def untrained():
    return complexity.run_composition(GRID, steps=1, record_every=1, **SMALL)


@pytest.fixture(scope="module")
def early():
    return complexity.run_composition(GRID, steps=250, record_every=250, **SMALL)


def test_control_ch13_phase_one(early):
    # The phenomenon is a large initialisation lagging behind: with γ = 0.8 in the role of the "large"
    # initialisation (against the smaller γ = 1.4) nothing lags, and the check must fail.
    v = complexity.check_phase_one(early, large=(0.8, 0.01), reference=(1.4, 0.01))
    assert not v.passed, v.measured_line()
    twin = complexity.check_phase_one(early)  # the real large initialisation γ = 0.2 does lag behind γ = 0.8
    assert twin.passed, twin.measured_line()


def test_control_ch13_complexity_control(untrained, early):
    for run in (untrained, early):  # weak control has not fitted ID: no contrast of solutions to speak of
        v = complexity.check_complexity_control(run)
        assert not v.passed, v.measured_line()


def test_control_ch13_commutativity(untrained):
    v = complexity.check_commutativity(untrained)  # an untrained model has learned no symmetric pair map
    assert not v.passed, v.measured_line()


def test_control_ch13_wq_condensation(untrained, early):
    v = complexity.check_wq_condensation(untrained)  # small initialisation alone, without training, does not condense
    assert not v.passed, v.measured_line()
    assert v.measured["cos_14"] == pytest.approx(v.measured["cos_02"], rel=0.3)
    twin = complexity.check_wq_condensation(early)  # 250 steps suffice for the small-initialisation neurons to align
    assert twin.passed, twin.measured_line()


def test_control_ch13_embedding_order(untrained):
    v = complexity.check_embedding_order(untrained)  # untrained embeddings are random at every γ
    assert not v.passed, v.measured_line()
