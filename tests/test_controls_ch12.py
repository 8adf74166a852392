"""Negative controls of chapter 12's claims: each claim's own check on a small real run without the phenomenon.

Two small real runs: all four tasks untrained (1 step: no attention pattern, no fit), and the two identity
members (mod-residue and key-range split) trained for 400 steps.  Where the phenomenon is present the
same check passes (positive twins), so the checks discriminate.
"""

import pytest

from companion.experiments import ch12_anchors as anchors


@pytest.fixture(scope="module")
def untrained():
    return anchors.run_anchor_tasks(anchors.TASKS, n_train=500, n_test=200, d_model=16, steps=1, record_every=1,
                                    seed=0)


@pytest.fixture(scope="module")
def identity():
    return anchors.run_anchor_tasks(("identity", "identity_key_range"), n_train=2000, n_test=500, d_model=32,
                                    steps=400, record_every=100, seed=1)


def test_control_ch12_mod_residue(untrained, identity):
    for v in (anchors.check_mod_residue(untrained),  # no training
              anchors.check_mod_residue(identity, task="identity_key_range")):  # test keys never keys in training
        assert not v.passed, v.measured_line()
    twin = anchors.check_mod_residue(identity)
    assert twin.passed, twin.measured_line()


def test_control_ch12_key_range(identity):
    # The mod-residue member saw every number as a key somewhere: it answers its unseen (position, key)
    # pairs, so the key-range failure is absent and the check must fail.
    v = anchors.check_key_range(identity, task="identity")
    assert not v.passed, v.measured_line()
    twin = anchors.check_key_range(identity)
    assert twin.passed, twin.measured_line()


def test_control_ch12_shift(untrained, identity):
    v = anchors.check_shift(untrained)  # an untrained layer 1 attends almost uniformly
    assert not v.passed, v.measured_line()
    twin = anchors.check_shift(identity)
    assert twin.passed, twin.measured_line()


def test_control_ch12_broadcast(untrained, identity):
    v = anchors.check_broadcast(untrained)
    assert not v.passed, v.measured_line()
    twin = anchors.check_broadcast(identity)
    assert twin.passed, twin.measured_line()


def test_control_ch12_reading(untrained):
    v = anchors.check_reading(untrained)
    assert not v.passed, v.measured_line()


def test_control_ch12_statistical(untrained, identity):
    v = anchors.check_statistical(untrained)  # no training: no fit, no 0.8/0.2 softmax
    assert not v.passed, v.measured_line()
    # Unambiguous labels (the identity member): the softmax puts nearly everything on x, far above 8 × p(x+1).
    v = anchors.check_statistical(identity, task="identity")
    assert not v.passed, v.measured_line()
