"""Negative controls of chapter 13's claims: each claim's own check on a small real run without the phenomenon.

Two small real runs of the whole γ × λ grid (d_model 16, 4000 training sequences, one data seed):
untrained (1 step) — no model has fitted anything and small initialisation alone has not condensed
anything — and trained for 250 steps, early in the fit.  The claims' checks must fail where the
phenomenon is absent and, where cheap, pass on the twin where it is present.
"""

import numpy as np
import pytest
import torch

from companion.experiments import ch13_complexity as complexity

GRID = [(g, l, 0) for g in (0.2, 0.5, 0.8, 1.1, 1.4) for l in (0.01, 0.1)]
SMALL = dict(n_train=4000, n_test=300, d_model=16, n_layers=2, batch_size=64, lr=1e-2)


@pytest.fixture(scope="module")
def untrained():
    return complexity.run_composition(GRID, steps=1, record_every=1, **SMALL)


@pytest.fixture(scope="module")
def early():
    return complexity.run_composition(GRID, steps=250, record_every=250, **SMALL)


@pytest.mark.contrast("γ = 0.8 (small init) in the phase-1 slot (图13.5)")
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


def test_control_ch13_symmetric_merge(untrained):
    # Untrained models have learned no pair map: with the key masked, (c, d) and (d, c) are no closer to each
    # other than unrelated pairs are (merge ratio about 1 under either control).
    v = complexity.check_symmetric_merge(untrained)
    assert not v.passed, v.measured_line()
    assert all(c.value > 0.5 for c in v.conditions), v.measured_line()


def test_pair_merge_ratio_reads_the_geometry():
    pairs = np.array(complexity.ALL_PAIRS).repeat(3, axis=0)  # 3 points per ordered pair
    shift = np.array([complexity.BOOK_SHIFTS[a] + complexity.BOOK_SHIFTS[b] for a, b in pairs], dtype=float)
    by_shift = np.stack([shift, np.zeros_like(shift)], 1)  # outputs that depend on the composite shift only
    assert complexity.pair_merge_ratio(by_shift, pairs) == pytest.approx(0.0)
    by_order = by_shift + np.stack([np.zeros_like(shift), 50.0 * (pairs[:, 0] > pairs[:, 1])], 1)
    assert complexity.pair_merge_ratio(by_order, pairs) > 1  # (c, d) and (d, c) far apart: no merge


def test_control_ch13_first_anchor_blocks(untrained):
    # Untrained models have computed no g(x; a1): no block of equal first steps under either control.
    v = complexity.check_first_anchor_blocks(untrained)
    assert not v.passed, v.measured_line()


@pytest.fixture(scope="module")
def depth_runs():
    common = dict(gammas=(0.3, 0.6, 0.9, 1.2), depths=(2,), seed=0, n_train=4000, n_test=300, d_model=16)
    return (complexity.run_depth_condensation(**common, steps=1),
            complexity.run_depth_condensation(**common, steps=300))


def test_control_ch13_wq_depth(depth_runs):
    untrained, trained = depth_runs
    v = complexity.check_wq_depth(untrained)  # initialisation alone: no condensation at any γ
    assert not v.passed, v.measured_line()
    twin = complexity.check_wq_depth(trained)  # the notebook's setting at depth 2: condensation grows with γ
    assert twin.passed, twin.measured_line()


def test_control_ch13_fit_speed_and_pair_speed():
    # Two large initialisations in the two roles, on a run too short to fit anything: every model's training
    # error stays near 1 whatever the complexity, so neither the slowdown of 图13.17 nor the slow pairs of
    # 图13.19 appear.
    run = complexity.run_fit_speed(((0.5, 0.01), (0.5, 0.01)), depths=(1,), complexities=(0, 1), replicas=1,
                                   n_train=512, steps=20, record_every=10)
    assert run.pair_accuracy.shape == (3, 4, 16)
    assert run.mean_error(run.members(0)) == pytest.approx(1 - run.accuracy[:, run.members(0)].mean())
    v = complexity.check_fit_speed(run)
    assert not v.passed and min(v.measured["error_small"]) > 0.9, v.measured_line()
    v = complexity.check_pair_speed(run)
    assert not v.passed, v.measured_line()


def test_rewired_data_breaks_only_the_chosen_groups():
    base, broken = complexity.rewired_data(640, 0, seed=1), complexity.rewired_data(640, 1, seed=1)
    assert (base.train.x == broken.train.x).all()
    pairs = [tuple(p) for p in base.train.anchors.tolist()]
    changed = {p for p, a, b in zip(pairs, base.train.y.tolist(), broken.train.y.tolist()) if a != b}
    assert changed == {(1, 2), (2, 1)}
    assert len(base.tests["ab"]) == 32 and (base.tests["ab"].anchors == torch.tensor([1, 2])).all()
