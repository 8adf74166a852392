"""Negative controls of chapter 12's claims: each claim's own check on a small real run without the phenomenon.

Small real runs: all four tasks untrained (1 step: no attention pattern, no fit), the two identity members
(mod-residue and key-range split) trained for 400 steps, the two-anchor tasks stopped after 60 steps, and the
task grid untrained.  Where the phenomenon is present the
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


@pytest.mark.contrast("key-range split instead of the mod-residue split (图12.4)")
def test_control_ch12_mod_residue(untrained, identity):
    for v in (anchors.check_mod_residue(untrained),  # no training
              anchors.check_mod_residue(identity, task="identity_key_range")):  # test keys never keys in training
        assert not v.passed, v.measured_line()
    twin = anchors.check_mod_residue(identity)
    assert twin.passed, twin.measured_line()


@pytest.mark.contrast("mod-residue split instead of the key-range split (§12.5.1)")
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


@pytest.mark.contrast("unambiguous labels: the trained identity task (图12.13)")
def test_control_ch12_statistical(untrained, identity):
    v = anchors.check_statistical(untrained)  # no training: no fit, no 0.8/0.2 softmax
    assert not v.passed, v.measured_line()
    # Unambiguous labels (the identity member): the softmax puts nearly everything on x, far above 8 × p(x+1).
    v = anchors.check_statistical(identity, task="identity")
    assert not v.passed, v.measured_line()


# ---------------------------------------------------------------- 图12.6, 图12.9, 图12.10, 图12.13 (type 2)
@pytest.fixture(scope="module")
def untrained_grid():
    return anchors.run_task_grid((("forward", 200), ("backward", 200), ("statistical_2", 200), ("working_memory", 200)),
                                 n_test=200, d_model=16, steps=1, record_every=1, seed=0)


def test_control_ch12_transformer_vs_fnn():
    # Too few sequences and steps: the transformer never reaches 0.9 either, so it shows no advantage.
    few = anchors.run_sample_efficiency((50, 100), n_test=200, d_model=16, steps=60, seed=0)
    v = anchors.check_sample_efficiency(few)
    assert not v.passed, v.measured_line()


SMALL_MEMBERS = (("composite", ((4, 4),)), ("synonym", 2000), ("synonym_original", 2000), ("multi_anchor", 2000))


@pytest.fixture(scope="module")
def early_composite():
    # Stopped early (60 steps): no two-anchor task is learnt yet, no embedding has moved far from its start.
    return anchors.run_composite(SMALL_MEMBERS, n_train=2000, n_test=200, steps=60, record_every=20, seed=0)


def test_control_ch12_task_harder(early_composite):
    # Data generalisation has not happened yet, so nothing is "harder" than it.
    v = anchors.check_task_harder(early_composite)
    assert not v.passed, v.measured_line()


def test_control_ch12_per_position(early_composite):
    v = anchors.check_per_position(early_composite)  # no answer anywhere yet
    assert not v.passed, v.measured_line()


def test_control_ch12_working_memory(untrained_grid):
    v = anchors.check_working_memory(untrained_grid)
    assert not v.passed, v.measured_line()


@pytest.mark.contrast("unambiguous labels: the trained identity task (图12.13(b))")
def test_control_ch12_statistical_type2(untrained_grid, identity):
    v = anchors.check_statistical_2(untrained_grid)  # untrained: no fit, no 80/20 answers
    assert not v.passed, v.measured_line()
    # Unambiguous labels (the identity member, trained): it answers x, almost never x + 1.
    v = anchors.check_statistical_2(anchors_grid_of(identity), task="identity")
    assert not v.passed, v.measured_line()


def anchors_grid_of(run):
    """The identity member of a TaskRun as a TaskGrid (same weights), for the grid checks."""
    return anchors.TaskGrid(run.history, run.cfg, run.state, tuple((t, run.n_train) for t in run.tasks), run.seed,
                            run.n_test)


def test_control_ch12_synonym(early_composite):
    # Not trained long enough to learn anything: the synonym member does not answer (4, 9), (9, 4) either.
    v = anchors.check_synonym(early_composite)
    assert not v.passed, v.measured_line()


def test_control_ch12_multi_anchor(early_composite):
    v = anchors.check_multi_anchor(early_composite)
    assert not v.passed, v.measured_line()


def test_control_ch12_embedding_order(early_composite):
    # 60 steps leave the number embeddings near their random start: no order.
    v = anchors.check_embedding_order(early_composite)
    assert not v.passed, v.measured_line()
    k = early_composite.member("multi_anchor")
    before = anchors.number_embeddings(early_composite, k, model=early_composite.initial_model())
    assert anchors.embedding_order(before) < 1.5  # the untrained embeddings themselves are blind to order
