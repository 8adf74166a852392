"""Unit tests of the anchor tasks (companion.core.anchor_tasks: definitions, splits, their errors) and of the
chapter-12 (both parts) and chapter-13 experiment helpers built on them."""

import pytest
import torch

from companion.core import anchor_tasks, attention
from companion.experiments import ch12_anchors as anchors
from companion.experiments import ch12b_composite as composite
from companion.experiments import ch13_complexity as complexity


def test_identity_target_is_the_token_after_the_anchor():
    task = anchor_tasks.identity_task(200, 100, seed=0)
    for data in (task.train, task.tests["test"]):
        rows = torch.arange(len(data))
        assert (data.x[rows, data.key_pos - 1] == 3).all()
        assert (data.x[rows, data.key_pos] == data.y).all()
        assert ((data.x == 3).sum(1) == 1).all()  # exactly one anchor
        assert (data.key_pos <= 7).all()  # the last token is noise
    assert task.vocab_size == 101 and task.seq_len == 9


def test_mod_residue_split_separates_position_key_pairs():
    task = anchor_tasks.identity_task(2000, 500, seed=1)
    train, test = task.train, task.tests["test"]
    assert ((train.y % 9) != (train.key_pos % 9)).all()
    assert ((test.y % 9) == (test.key_pos % 9)).all()
    train_pairs = set(zip(train.key_pos.tolist(), train.y.tolist()))
    test_pairs = set(zip(test.key_pos.tolist(), test.y.tolist()))
    assert not train_pairs & test_pairs
    assert set(test.y.tolist()) <= set(train.y.tolist())  # every test key is a key somewhere in training


def test_key_range_split_and_determinism():
    task = anchor_tasks.identity_task(300, 100, split="key_range", split_at=80, seed=2)
    assert task.train.y.max() < 80 and task.tests["test"].y.min() >= 80
    again = anchor_tasks.identity_task(300, 100, split="key_range", split_at=80, seed=2)
    assert torch.equal(task.train.x, again.train.x)
    other = anchor_tasks.identity_task(300, 100, split="key_range", split_at=80, seed=3)
    assert not torch.equal(task.train.x, other.train.x)


def test_reading_comprehension_answers_the_asked_anchor():
    task = anchor_tasks.reading_task(300, 100, seed=0)
    x, y = task.train.x, task.train.y
    asked = x[:, -1]
    k = (x[:, 0:-1:2] == asked[:, None]).float().argmax(1)
    assert torch.equal(x[torch.arange(len(x)), 2 * k + 1], y)
    assert all(len(set(row[0:-1:2].tolist())) == 4 for row in x)  # distinct anchors


def test_statistical_output_type1_and_type2():
    t1 = anchor_tasks.statistical_task(500, 50, kind=1, seed=0)
    base = t1.train.x[torch.arange(500), t1.train.key_pos]
    shifted = t1.train.y - base
    assert set(shifted.tolist()) == {0, 1} and float(shifted.float().mean()) == pytest.approx(0.2)
    assert torch.equal(t1.train.x[0], t1.train.x[4]) and t1.train.y[4] == t1.train.y[0] + 1
    t2 = anchor_tasks.statistical_task(2000, 50, kind=2, seed=0)
    frac = float((t2.train.y - t2.train.x[torch.arange(2000), t2.train.key_pos]).float().mean())
    assert 0.15 < frac < 0.25


def test_composite_task_book_example_and_splits():
    task = anchor_tasks.composite_task(400, 200, 200, seed=0, residue_mod=4)
    for name, data in (("train", task.train), ("ID", task.tests["ID"]), ("OOD", task.tests["OOD"])):
        rows = torch.arange(len(data))
        x, p = data.x, data.key_pos
        shift = sum(torch.tensor([0, 5, 1, -2, -8])[x[rows, p + j]] for j in (1, 2))
        assert torch.equal((x[rows, p] + shift) % 100, data.y), name
        pairs = set(map(tuple, data.anchors.tolist()))
        assert ({(3, 4), (4, 3)} & pairs == set()) == (name != "OOD")
    assert ((task.train.x[torch.arange(400), task.train.key_pos] % 4) != task.train.key_pos % 4).all()
    assert (23 + 5 + 1) % 100 == 29  # the book's example (23, a, b, …) ↦ 29 with a, b = +5, +1


def test_swap_anchors_exchanges_the_pair():
    data = anchor_tasks.composite_task(10, 10, 10, seed=0).tests["OOD"]
    swapped = anchor_tasks.swap_anchors(data)
    rows = torch.arange(10)
    assert torch.equal(swapped.x[rows, data.key_pos + 1], data.x[rows, data.key_pos + 2])
    assert torch.equal(anchor_tasks.swap_anchors(swapped).x, data.x)


@pytest.mark.parametrize("call, word", [
    (lambda: anchor_tasks.identity_task(10, 10, anchor=30), "overlap"),
    (lambda: anchor_tasks.identity_task(10, 10, split="random"), "split"),
    (lambda: anchor_tasks.identity_task(10, 10, lo=20, hi=24), "no test key"),
    (lambda: anchor_tasks.identity_task(0, 10), "n_train"),
    (lambda: anchor_tasks.identity_task(10, 10, split="key_range", split_at=200), "split_at"),
    (lambda: anchor_tasks.composite_task(10, 10, 10, held_out=((5, 6),)), "held_out"),
    (lambda: anchor_tasks.composite_task(10, 10, 10, modulus=50), "modulus"),
    (lambda: anchor_tasks.statistical_task(10, 10, kind=3), "kind"),
    (lambda: anchor_tasks.statistical_task(10, 10, p_shift=0.3), "p_shift"),
    (lambda: anchor_tasks.reading_task(10, 10, n_pairs=9), "n_pairs"),
    (lambda: anchors.make_task("poetry", 10, 10), "unknown task"),
])
def test_bad_arguments_raise(call, word):
    with pytest.raises(ValueError, match=word):
        call()


def test_check_overlap_verdicts(capsys):
    assert anchors.check_overlap(set(), set()) is None
    assert anchors.check_overlap({(1, 20), (2, 30)}, {(1, 20), (3, 40)}) == 0.5
    assert "✘" in capsys.readouterr().out
    with pytest.raises(ValueError, match="tuples"):
        anchors.check_overlap({1, 2}, {3})


def test_median_member_of_picks_the_lower_middle_member_and_keeps_ties_in_order():
    assert anchor_tasks.median_member_of([4, 7, 9], [0.9, 0.1, 0.5]) == 9
    assert anchor_tasks.median_member_of([4, 7, 9, 11], [0.4, 0.1, 0.3, 0.2]) == 11  # lower middle of an even count
    assert anchor_tasks.median_member_of([4, 7, 9], [0.5, 0.5, 0.5]) == 7
    with pytest.raises(ValueError, match="one value per member"):
        anchor_tasks.median_member_of([1, 2], [0.5])


@pytest.mark.parametrize("seed", [2, 3])
def test_identity_run_generalises_and_broadcasts_on_other_seeds(seed):
    run = anchors.run_anchor_tasks(("identity",), n_train=2000, n_test=500, d_model=32, steps=400, record_every=100,
                                   seed=seed)
    assert run.accuracy["test"][0, 0] < 0.1 < 0.95 <= run.accuracy["test"][-1, 0]  # learned, from chance
    broadcast = anchors.check_broadcast(run)
    assert broadcast.passed, broadcast.measured_line()


def test_rank_correlation_gives_tied_values_their_average_rank():
    # γ repeats once per λ: ties share rank 1.5 and 3.5, so a perfect order of the other variable scores 0.894
    assert complexity.rank_correlation([0.2, 0.2, 0.5, 0.5], [1, 2, 3, 4]) == pytest.approx(4 / (2 * 5**0.5))
    assert complexity.rank_correlation([1, 2, 3, 4], [10, 30, 20, 40]) == pytest.approx(0.8)


def test_grid_measure_averages_members_of_a_cell():
    run = complexity.run_composition([(1.4, 0.1, 0), (1.4, 0.1, 1), (0.2, 0.1, 0)], n_train=500, n_test=100,
                                  d_model=16, steps=1, record_every=1)
    model = run.model()
    by_hand = [attention.condensation(model.member_weight("w_q", k, layer=0).numpy()) for k in range(3)]
    cond = complexity.grid_measure(run, "wq_condensation")
    assert cond == pytest.approx({(1.4, 0.1): (by_hand[0] + by_hand[1]) / 2, (0.2, 0.1): by_hand[2]})
    with pytest.raises(ValueError, match="measure"):
        complexity.grid_measure(run, "sharpness")


@pytest.mark.parametrize("direction", ["forward", "backward"])
def test_recitation_answers_the_other_member_of_the_pair(direction):
    task = anchor_tasks.recitation_task(300, 100, direction=direction, seed=0)
    for data, test in ((task.train, False), (task.tests["test"], True)):
        rows, p = torch.arange(len(data)), data.key_pos
        m_pos = p if direction == "forward" else p - 2  # position of m (anchor at m_pos + 1, n at m_pos + 2)
        assert (data.x[rows, m_pos + 1] == 3).all() and ((data.x == 3).sum(1) == 1).all()
        assert torch.equal(data.x[rows, p], data.y)
        query_pos = m_pos + 2 if direction == "forward" else m_pos  # forward asks with n, backward with m
        assert torch.equal(data.x[:, -1], data.x[rows, query_pos])
        assert (((data.y % 9) == (p % 9)) == test).all()  # mod-residue split on the answer


def test_recitation_both_mixes_the_patterns_and_tests_each():
    # The book's data (§12.6.7): one set holding both patterns, about half each; one test set per direction.
    task = anchor_tasks.recitation_task(2000, 100, direction="both", seed=0)
    data, rows = task.train, torch.arange(2000)
    forward = data.key_pos == torch.where(data.x == 3)[1] - 1  # the answer is m, just before the anchor
    assert 900 < int(forward.sum()) < 1100
    assert torch.equal(data.x[rows, data.key_pos], data.y)
    query = torch.where(forward, data.key_pos + 2, data.key_pos - 2)  # forward asks with n, backward with m
    assert torch.equal(data.x[:, -1], data.x[rows, query])
    assert set(task.tests) == {"forward", "backward"}
    for direction, test in task.tests.items():
        anchor_pos = torch.where(test.x == 3)[1]
        assert torch.equal(test.key_pos, anchor_pos - 1 if direction == "forward" else anchor_pos + 1)
        assert ((test.y % 9) == (test.key_pos % 9)).all()  # mod-residue split: test answers on their residue


def test_multi_anchor_adds_the_anchor_and_splits_by_anchor():
    task = anchor_tasks.multi_anchor_task(2000, 500, seed=0)
    assert task.vocab_size == 110
    for data, test in ((task.train, False), (task.tests["test"], True)):
        rows, a = torch.arange(len(data)), data.anchors[:, 0]
        key = data.x[rows, data.key_pos]
        assert torch.equal(data.x[rows, data.key_pos - 1], a) and torch.equal(data.y, key + a)
        held = (key >= 12 + 8 * a) & (key <= 19 + 8 * a)
        assert bool(held.all()) if test else not bool(held.any())
    assert set(task.tests["test"].anchors[:, 0].tolist()) == set(range(1, 11))


def test_multi_anchor_key_range_split_holds_out_the_same_keys_for_every_anchor():
    task = anchor_tasks.multi_anchor_task(2000, 500, split="key_range", split_at=80, seed=0)
    for data, test in ((task.train, False), (task.tests["test"], True)):
        rows, a = torch.arange(len(data)), data.anchors[:, 0]
        key = data.x[rows, data.key_pos]
        assert torch.equal(data.y, key + a) and bool(((key >= 80) == test).all())
    anchor = anchor_tasks.multi_anchor_task(2000, 500, seed=0)  # the book's split: draws unchanged by the option
    assert torch.equal(anchor.train.x, anchor_tasks.multi_anchor_task(2000, 500, split="anchor", seed=0).train.x)
    ood = anchor_tasks.multi_anchor_id_ood_task(300, 100, 100, split="key_range", seq_len=6, seed=1)
    assert bool((ood.tests["ID"].y - ood.tests["ID"].anchors[:, 0] < 80).all())


def test_classification_returns_the_anchor_of_the_nearest_number():
    task = anchor_tasks.classification_task(300, 100, seed=0)
    for data, test in ((task.train, False), (task.tests["test"], True)):
        x = data.x
        dist = (x[:, 0:-1:2] - x[:, -1:]).abs()
        k = dist.argmin(1)
        assert ((dist == dist.min(1, keepdim=True).values).sum(1) == 1).all()  # unique nearest
        assert torch.equal(x[torch.arange(len(x)), 2 * k + 1], data.y) and torch.equal(2 * k, data.key_pos)
        nearest = x[torch.arange(len(x)), 2 * k]
        assert (((nearest % 9) == (data.key_pos % 9)) == test).all()


def test_repeat_to_cycles_rows():
    data = anchor_tasks.identity_task(3, 3, seed=0).train
    big = anchor_tasks.repeat_to(data, 7)
    assert len(big) == 7 and torch.equal(big.x[3:6], data.x) and torch.equal(big.y[6], data.y[0])


def test_embedding_order_is_one_for_shuffled_and_large_for_ordered_embeddings():
    line = torch.arange(80, dtype=torch.float32)[:, None].numpy()
    assert anchor_tasks.embedding_order(line) > 10
    shuffled = torch.randperm(80, generator=torch.Generator().manual_seed(0)).float()[:, None].numpy()
    assert 0.5 < anchor_tasks.embedding_order(shuffled) < 2
    assert anchors.embedding_order is anchor_tasks.embedding_order  # one mechanism for 图12.7 and 图13.12


@pytest.mark.parametrize("call, word", [
    (lambda: anchor_tasks.recitation_task(10, 10, direction="sideways"), "direction"),
    (lambda: anchor_tasks.multi_anchor_task(10, 10, anchors=(11,)), "anchor"),
    (lambda: anchor_tasks.multi_anchor_task(10, 10, split="position"), "split"),
    (lambda: anchor_tasks.multi_anchor_task(10, 10, split="key_range", split_at=20), "split_at"),
    (lambda: anchor_tasks.classification_task(10, 10, n_pairs=9), "n_pairs"),
    (lambda: anchor_tasks.repeat_to(anchor_tasks.identity_task(3, 3).train, 0), "n ≥ 1"),
])
def test_bad_arguments_of_the_new_tasks_raise(call, word):
    with pytest.raises(ValueError, match=word):
        call()


def test_working_memory_composes_the_two_anchors_across_a_gap():
    task = anchor_tasks.working_memory_task(400, 200, seed=0)
    shifts = torch.tensor([0, 0, 1, 0, -2])  # f_1 = x, f_2 = x + 1, f_3 = x, f_4 = x − 2
    for data, test in ((task.train, False), (task.tests["test"], True)):
        rows, p = torch.arange(len(data)), data.key_pos
        a1, a2 = data.anchors[:, 0], data.anchors[:, 1]
        assert torch.equal(data.x[rows, p + 1], a1) and set(a1.tolist()) <= {1, 2} and set(a2.tolist()) <= {3, 4}
        second = (data.x == a2[:, None]).float().argmax(1)
        assert (second >= p + 3).all() and (second <= 7).all()  # at least one irrelevant token between
        assert torch.equal(data.y, data.x[rows, p] + shifts[a1] + shifts[a2])
        assert (((data.x[rows, p] % 9) == (p % 9)) == test).all()


def test_working_memory_key_range_split_keeps_the_test_keys_out_of_training():
    task = anchor_tasks.working_memory_task(400, 200, split="key_range", split_at=80, seed=0)
    train, test = task.train, task.tests["test"]
    rows = torch.arange(len(train))
    assert int(train.x[rows, train.key_pos].max()) < 80  # the key-range split of 图12.4
    assert int(test.x[torch.arange(len(test)), test.key_pos].min()) >= 80
    default = anchor_tasks.working_memory_task(400, 200, seed=0)  # the book's mod-residue split, as before
    assert torch.equal(default.train.x, anchor_tasks.working_memory_task(400, 200, split="mod_residue", seed=0).train.x)
    with pytest.raises(ValueError, match="unknown split"):
        anchor_tasks.working_memory_task(10, 10, split="by_anchor")


@pytest.mark.parametrize("augment", [True, False])
def test_synonym_task_pairs_counts_and_splits(augment):
    task = anchor_tasks.synonym_task(2000, 300, 300, augment=augment, residue_mod=4, seed=0)
    shift = torch.zeros(10, dtype=torch.long)
    for a, s in anchor_tasks.SYNONYM_SHIFTS.items():
        shift[a] = s
    trained = set(anchor_tasks.SYNONYM_PAIRS) | (set(anchor_tasks.SYNONYM_EXTRA_PAIRS) if augment else set())
    for name, data in (("train", task.train), ("ID", task.tests["ID"]), ("OOD", task.tests["OOD"])):
        rows, p = torch.arange(len(data)), data.key_pos
        x = data.x
        assert torch.equal(x[rows, p + 1], data.anchors[:, 0]) and torch.equal(x[rows, p + 2], data.anchors[:, 1])
        assert torch.equal((x[rows, p] + shift[data.anchors[:, 0]] + shift[data.anchors[:, 1]]) % 100, data.y)
        pairs = set(map(tuple, data.anchors.tolist()))
        assert pairs == (set(anchor_tasks.SYNONYM_HELD_OUT) if name == "OOD" else trained), name
        if name != "OOD":  # mod-residue split (m = 4) on the key and its position
            assert (((x[rows, p] % 4) == (p % 4)) == (name == "ID")).all(), name
    with_nine = (task.train.anchors == 9).any(1)
    assert int(with_nine.sum()) == (400 if augment else pytest.approx(800, abs=120))
    assert ((task.train.anchors == 3).any(1).sum() > 0) == augment
    assert task.tests["OOD"].y.tolist() == ((task.tests["OOD"].x[torch.arange(300), task.tests["OOD"].key_pos] - 10)
                                            % 100).tolist()  # (4, 9) and (9, 4) both map x to x − 10


def test_multi_anchor_id_ood_keeps_the_training_set_and_adds_fresh_trained_combinations():
    plain = anchor_tasks.multi_anchor_task(500, 200, seq_len=6, seed=3)
    task = anchor_tasks.multi_anchor_id_ood_task(500, 150, 200, seq_len=6, seed=3)
    assert torch.equal(task.train.x, plain.train.x) and torch.equal(task.tests["OOD"].x, plain.tests["test"].x)
    fresh = task.tests["ID"]
    rows, a = torch.arange(len(fresh)), fresh.anchors[:, 0]
    key = fresh.x[rows, fresh.key_pos]
    assert len(fresh) == 150 and torch.equal(fresh.y, key + a)
    assert not bool(((key >= 12 + 8 * a) & (key <= 19 + 8 * a)).any())  # trained combinations only
    assert not torch.equal(fresh.x, task.train.x[:150])


@pytest.mark.parametrize("call, word", [
    (lambda: anchor_tasks.synonym_task(300, 10, 10, n_per_nine_pair=100), "n_per_nine_pair"),
    (lambda: anchor_tasks.synonym_task(10, 10, 10, modulus=50), "modulus"),
    (lambda: anchor_tasks.multi_anchor_id_ood_task(10, 0, 10), "n_id"),
    (lambda: composite.composite_member_task(("poem", 10), 10, 10, 0), "kind"),
])
def test_bad_arguments_of_the_two_anchor_tasks_raise(call, word):
    with pytest.raises(ValueError, match=word):
        call()


def test_composite_run_members_and_median_member():
    members = (("composite", ((4, 4),)), ("synonym", 600), ("synonym_original", 600), ("multi_anchor", 600),
               ("multi_anchor", 600), ("multi_anchor", 600), ("multi_anchor", 300))
    run = composite.run_composite(members, n_train=600, n_test=50, d_model=16, steps=1, lr=1e-9, record_every=1,
                                seed=4)
    assert run.member("synonym") == 1 and run.member(("multi_anchor", 600)) == 3 and run.member("composite") == 0
    assert run.member(5) == 5
    with pytest.raises(ValueError, match="out of range"):
        run.member(7)
    assert set(run.accuracy) == {"train", "ID", "OOD"} and run.accuracy["OOD"].shape == (2, 7)
    # the median of the three identical largest specs (different initialisations) by final OOD accuracy; the
    # smaller multi-anchor member does not take part
    ood = run.accuracy["OOD"][-1]
    assert run.median_member("multi_anchor") in (3, 4, 5)
    assert sorted(ood[3:6]).index(ood[run.median_member("multi_anchor")]) == 1 or len(set(ood[3:6])) < 3
    assert run.median_member("synonym") == 1  # a single net is its own median
    with pytest.raises(ValueError, match="no 'synonym' member"):
        composite.run_composite((("composite", ((4, 4),)),), n_train=100, n_test=20, d_model=16, steps=1,
                              record_every=1).member("synonym")
    with pytest.raises(ValueError, match="gamma"):
        composite.run_composite(members, gamma=(0.5, 0.5), steps=1)
    for bad in (0, 2.5, True):
        with pytest.raises(ValueError, match="n_layers"):
            composite.run_composite(members, n_layers=bad, steps=1)


def test_per_position_outputs_of_each_net_and_the_examples_of_the_median_net():
    """图12.8's readout: one set of shares per composite net (its median judged by the claim), and the examples come
    from the net whose share of f_a1(f_a1(x)) at the first anchor is the median, with the model's outputs at every
    position."""
    run = composite.run_composite((("composite", ((4, 4),)),) * 3, n_train=300, n_test=40, d_model=16, steps=2,
                                  record_every=1, seed=1, n_layers=3)
    assert run.cfg.n_layers == 3
    by_net = composite.per_position_by_net(run)
    assert all(len(v) == 3 and ((0 <= v) & (v <= 1)).all() for v in by_net.values())
    net, examples = composite.example_outputs(run, n=2)
    at_a1 = by_net["f_a1 f_a1(x) at a1"]
    assert sorted(at_a1)[1] == at_a1[net]
    assert len(examples) == 2 and all(len(tokens) == len(outputs) == 6 for tokens, outputs, _ in examples)
    v = composite.check_per_position(run)
    assert v.measured["nets"] == 3 and v.measured["layers"] == 3


def test_identity_twins_are_independent_nets_whose_median_the_claims_judge():
    """IDENTITY_TWINS: the same data as the first run's identity member, other weights (stream 1 of the seed); the
    checks of §12.5.1 and 图12.15 take the median over all three nets, and stream 0 is the default draw."""
    kw = dict(n_train=200, n_test=100, d_model=8, steps=2, record_every=1, seed=3)
    run = anchors.run_anchor_tasks(("identity",), **kw)
    assert all(torch.equal(a, b) for a, b in zip(run.state.values(),
                                                  anchors.run_anchor_tasks(("identity",), stream=0, **kw)
                                                  .state.values()))
    twins = anchors.run_anchor_tasks(anchors.IDENTITY_TWINS, stream=1, **kw)
    assert torch.equal(twins.data("identity").train.x, run.data("identity").train.x)
    first = lambda r: next(iter(r.state.values()))[0]  # noqa: E731  member 0's first tensor
    assert not torch.equal(first(run), first(twins))
    for check in (anchors.check_mod_residue, anchors.check_shift, anchors.check_broadcast):
        assert check(run, more=twins).measured["nets"] == 3 and check(run).measured["nets"] == 1
    accs = sorted([float(run.accuracy["test"][-1, 0]), *map(float, twins.accuracy["test"][-1])])
    assert anchors.check_mod_residue(run, more=twins).measured["test_accuracy"] == pytest.approx(accs[1])


def test_convergence_of_a_sample_efficiency_member():
    """图12.6: a member converged when its training accuracy is ≥ 0.99 from half-way on and its test accuracy moved
    by ≤ 0.02 over the last quarter; members: fitted late, still generalising, converged, fitted but drifting."""
    import numpy as np
    steps = np.array([0, 125, 250, 375, 500])
    train = np.array([[0.0, 0.0, 0.0, 0.0], [0.5, 0.9, 0.9, 1.0], [0.98, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0],
                      [1.0, 1.0, 1.0, 1.0]])
    test = np.array([[0.0] * 4, [0.1] * 4, [0.5] * 4, [0.6, 0.6, 0.9, 0.5], [0.6, 0.7, 0.91, 0.53]])
    assert anchors.converged_members(steps, train, test).tolist() == [False, False, True, False]
    with pytest.raises(ValueError, match="half-way"):
        anchors.converged_members(np.array([0, 500]), train[[0, -1]], test[[0, -1]])
    with pytest.raises(ValueError, match="steps"):
        anchors.run_sample_efficiency((50,), steps=3)


def test_an_lstm_that_did_not_converge_at_n_star_is_a_never():
    """check_lstm_gap judges converged members only: the LSTM below 0.9 at the transformer's n* passes only when that
    LSTM member converged; a transformer member that did not converge cannot be n*."""
    import numpy as np
    arrays = lambda *v: {arch: np.array(x) for arch, x in zip(("transformer", "lstm", "fnn"), v)}  # noqa: E731
    run = anchors.SampleEfficiency(
        (500, 1000), train=arrays([1.0, 1.0], [1.0, 0.9], [1.0, 1.0]), test=arrays([0.1, 0.95], [0.5, 0.8], [0.0, 0.0]),
        params={}, seconds={}, converged=arrays([True, True], [True, True], [True, True]), steps=np.arange(5),
        train_curve={}, test_curve={})
    assert anchors.check_lstm_gap(run).passed and anchors.check_sample_efficiency(run).passed
    run.converged["lstm"] = np.array([True, False])
    v = anchors.check_lstm_gap(run)
    assert not v.passed and np.isnan(v.conditions[0].value)
    run.converged["transformer"] = np.array([True, False])
    assert np.isnan(anchors.check_lstm_gap(run).measured["n_star_transformer"])
    assert not anchors.check_sample_efficiency(run).passed
