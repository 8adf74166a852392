"""Chapter 13's scale curve read figure by figure: the same runs as the curve's, every member measured, each figure's
statement read from the right phases (exchanging them makes it fail), the committed measurement complete, a bad seed
one line."""

import json
import math

import numpy as np
import pytest

from companion.experiments import ch13_scale as scale
from companion.experiments import ch13_scale_figures as figures
from companion.experiments.ch13_complexity import STRONG_CONTROL, WEAK_CONTROL


class Called(Exception):
    """Raised by the recording stand-in of run_composition once it has the call."""


def recorder(calls: list):
    """A stand-in of run_composition that appends its arguments to ``calls`` and raises :class:`Called`."""
    def record(*args, **kwargs):
        calls.append((args, kwargs))
        raise Called
    return record


def test_point_run_trains_exactly_the_curves_run(monkeypatch):
    calls = []
    record = recorder(calls)
    monkeypatch.setattr(scale, "run_composition", record)
    monkeypatch.setattr(figures, "run_composition", record)
    point = scale.POINTS[2]
    for measure in (scale.measure_point, figures.point_run):
        with pytest.raises(Called):
            measure(point, (3, 4, 5))
    assert calls[0] == calls[1]  # the same arguments: the same cached run


def test_every_member_of_a_tiny_point_is_measured():
    rows = figures.measure_point_figures(scale.ScalePoint(8, 3, 1e-2, 200), (0, 1))
    assert {(r["gamma"], r["lam"], r["data_seed"]) for r in rows} == {(g, l, s) for s in (0, 1)
                                                                        for g, l in scale.cells()}
    assert all(math.isfinite(r[m]) for r in rows for m in figures.MEASURES + ("ID", "OOD", "grouped"))


def member(gamma, lam, seed, **values):
    """A row of a made-up point with the measures of a phase-1-like model, overridden by ``values``."""
    base = dict(d_model=8, steps=10, lr=0.01, n_train=100, gamma=gamma, lam=lam, data_seed=seed, train=0.6, ID=0.3,
                OOD=0.0, commutativity=0.5, grouped=0.0, mean_abs_cos=0.1, merge_cd_dc=1.0, map_clusters=0.2,
                blocks_within=0.0, blocks_across=0.0, embedding_order=1.0, embedding_variance=0.2, steps_3_4=0.05,
                steps_1_2=0.05)
    return {**base, **values}


#: Per chapter cell, the measures of a point where every figure's statement holds as the book draws it.
BOOK_LIKE = {
    (0.2, 0.01): {},  # phase 1: poor ID, no clusters, no condensation, no order
    (0.5, 0.01): dict(train=1.0, ID=0.95, OOD=0.1, commutativity=0.5, merge_cd_dc=0.9, map_clusters=0.9,
                      grouped=0.1, mean_abs_cos=0.2),  # phase 2, not commutative, keeps (c, d) and (d, c) apart
    WEAK_CONTROL: dict(train=1.0, ID=1.0, OOD=0.1, commutativity=0.9, merge_cd_dc=0.3, map_clusters=0.9,
                       grouped=0.2, mean_abs_cos=0.3, blocks_within=0.1),  # phase 2: slight condensation
    (1.1, 0.01): dict(train=1.0, ID=1.0, OOD=0.6),
    (1.4, 0.01): dict(train=1.0, ID=1.0, OOD=0.7, embedding_order=6.0, steps_3_4=0.5, steps_1_2=0.1),
    (1.1, 0.1): dict(train=1.0, ID=1.0, OOD=0.7),
    STRONG_CONTROL: dict(train=1.0, ID=1.0, OOD=0.8, commutativity=1.0, merge_cd_dc=0.1, map_clusters=0.9,
                         grouped=0.9, mean_abs_cos=0.6, blocks_within=0.5, blocks_across=0.05,
                         embedding_order=8.0, steps_3_4=0.5, steps_1_2=0.1),  # phase 3, in steps of 3 and 4
}


def statements(rows):
    return {s["figure"]: s["holds"] for s in figures.figure_statements(rows)}


def test_each_figure_holds_on_a_book_like_point_and_reads_the_right_phases():
    rows = [member(g, l, s, **v) for s in (0, 1, 2) for (g, l), v in BOOK_LIKE.items()]
    assert all(statements(rows).values()), statements(rows)
    assert figures.figure_statements(rows)[0]["phases"] == {"γ 0.2": 1, "γ 0.5": 2, "weak": 2, "strong": 3, "γ 1.4": 3}
    # weak and strong control exchanged: the blocks, the condensation order and the ordered embeddings must fail
    swapped = {**BOOK_LIKE, WEAK_CONTROL: BOOK_LIKE[STRONG_CONTROL], STRONG_CONTROL: BOOK_LIKE[WEAK_CONTROL]}
    held = statements([member(g, l, s, **v) for s in (0, 1, 2) for (g, l), v in swapped.items()])
    assert not (held["图13.9"] or held["图13.10"] or held["图13.12"])
    # the larger-initialisation phase-2 model commutative and merging, as strong control: 图13.8's middle panel is gone
    commutative = {**BOOK_LIKE, (0.5, 0.01): {**BOOK_LIKE[(0.5, 0.01)], "commutativity": 0.9, "merge_cd_dc": 0.2}}
    rows_c = [member(g, l, s, **v) for s in (0, 1, 2) for (g, l), v in commutative.items()]
    assert not statements(rows_c)["图13.8 symmetric pairs"]
    # phase 1 given phase 2's clusters: 图13.8's left panel no longer differs from the middle one
    merged = {**BOOK_LIKE, (0.2, 0.01): BOOK_LIKE[WEAK_CONTROL]}
    held = statements([member(g, l, s, **v) for s in (0, 1, 2) for (g, l), v in merged.items()])
    assert not (held["图13.8 clusters"] or held["图13.5"])  # and phase 1 no longer memorises: no three phases


def test_the_sweep_reading_takes_its_phases_from_the_sweep_at_the_books_lambda():
    """图13.5's reading: phase 2 is γ 0.5 and phase 3 γ 1.4, both at λ = 0.01; the chapter's weak and strong control
    play no part (given the opposite phases, nothing changes), and exchanging γ 0.5 with γ 1.4 fails."""
    sweep_like = {**BOOK_LIKE, (0.5, 0.01): {**BOOK_LIKE[(0.5, 0.01)], "blocks_within": 0.1},
                  (1.4, 0.01): {**BOOK_LIKE[STRONG_CONTROL], "OOD": 0.7}}

    def held(cells):
        rows = [member(g, l, s, **v) for s in (0, 1, 2) for (g, l), v in cells.items()]
        return {s["figure"]: s["holds"] for s in figures.figure_statements(rows, figures.SWEEP_CELLS)}

    assert all(held(sweep_like).values()), held(sweep_like)
    assert figures.figure_statements([member(g, l, 0, **v) for (g, l), v in sweep_like.items()],
                                     figures.SWEEP_CELLS)[0]["phases"] == {"γ 0.2": 1, "γ 0.5": 2, "γ 1.4": 3}
    controls_swapped = {**sweep_like, WEAK_CONTROL: sweep_like[STRONG_CONTROL],
                        STRONG_CONTROL: sweep_like[WEAK_CONTROL]}
    assert held(controls_swapped) == held(sweep_like)
    swapped = {**sweep_like, (0.5, 0.01): sweep_like[(1.4, 0.01)], (1.4, 0.01): sweep_like[(0.5, 0.01)]}
    assert not any(held(swapped)[f] for f in ("图13.5", "图13.9", "图13.10", "图13.12"))


@pytest.mark.parametrize("name, epochs", [("long", 210), ("half", 105)])
def test_committed_training_length_measurements(name, epochs):
    """The quick size trained for the book's 210 epochs (and for half of them, the notebook's book-length claims), on
    the design seeds each file names, every cell on each."""
    (point,), file = figures.POINT_SETS[name]
    data = json.loads(file.read_text())
    rows = figures.read_long(file) if name == "long" else figures.read_half(file)
    assert round(point.steps * 128 / point.n_train) == epochs and data["points"] == name
    assert all((r["d_model"], r["steps"], r["lr"], r["n_train"]) == (point.d_model, point.steps, point.lr,
                                                                     point.n_train) for r in rows)
    per_seed = figures.by_seed(rows)
    assert sorted(per_seed) == sorted(data["seeds"]) and min(data["seeds"]) >= 100  # design seeds only
    for mine in per_seed.values():
        assert sorted((r["gamma"], r["lam"]) for r in mine) == sorted(scale.cells() * 3)
        for reading in figures.READINGS.values():
            assert len(figures.markdown_table(mine, reading).splitlines()) == 2 + 6 + 1


def test_committed_measurement_has_every_point_setting_and_seed_and_a_full_table():
    rows = figures.read_figures()
    for p in scale.POINTS:
        mine = [r for r in rows if (r["d_model"], r["steps"], r["lr"], r["n_train"]) == (p.d_model, p.steps, p.lr,
                                                                                        p.n_train)]
        assert sorted({(r["gamma"], r["lam"]) for r in mine}) == sorted(scale.cells())
        assert len(mine) == 3 * len(scale.cells())
    assert all(math.isfinite(r[m]) for r in rows for m in figures.MEASURES + ("ID", "OOD", "grouped"))
    table = figures.markdown_table(rows).splitlines()
    assert len(table) == 2 + 6 + 1 and all(p.label in table[0] for p in scale.POINTS)
    assert all(line.count("✔") + line.count("✘") == len(scale.POINTS) for line in table[2:-1])


def test_negative_seed_is_one_line(capsys):
    assert figures.main(["--seed", "-1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--seed" in err and "-1" in err


def test_neighbour_steps_read_the_books_arrows():
    values = np.arange(80)
    in_order = values[:, None].astype(float)  # a line in the values' order: the 4 nearest are 1 and 2 away
    assert figures.neighbour_steps(in_order)["steps_1_2"] > 0.95
    three_lines = np.stack([(values % 3) * 1000.0, values], axis=1)  # neighbours 3 and 6 away: half of them 3 away
    steps = figures.neighbour_steps(three_lines)
    assert steps["steps_1_2"] == 0 and 0.45 < steps["steps_3_4"] <= 0.5
    blind = np.random.default_rng(0).normal(size=(80, 16))  # no order: about 4/79 each
    assert all(0.01 < v < 0.12 for v in figures.neighbour_steps(blind).values())


def test_book_length_claims_hold_on_a_book_like_sweep_and_read_its_cells():
    rows = [member(g, l, s, **v) for s in (0, 1, 2) for (g, l), v in BOOK_LIKE.items()]
    sweep_like = figures.cell_means([{**r, **BOOK_LIKE[1.4, 0.01]} if (r["gamma"], r["lam"]) == (1.4, 0.01) else r
                                     for r in rows])
    sweep_like[1.4, 0.01] |= {k: sweep_like[STRONG_CONTROL][k] for k in ("grouped", "mean_abs_cos")}
    checks = (figures.check_one_sweep, figures.check_sweep_condensation, figures.check_sweep_embeddings)
    assert all(check(sweep_like).passed for check in checks)
    # phase 1 read as phase 3 (the condensation and embedding claims' control), phases 2 and 3 exchanged (图13.5's)
    assert not figures.check_sweep_condensation(sweep_like, figures.PHASE_ONE_AS_THREE).passed
    assert not figures.check_sweep_embeddings(sweep_like, figures.PHASE_ONE_AS_THREE).passed
    assert not figures.check_one_sweep(sweep_like, figures.EXCHANGED_CELLS).passed
    # the phase-3 order in the values' own steps, not the book's 3 and 4: 图13.12's claim fails on that alone
    by_value = {**sweep_like, (1.4, 0.01): {**sweep_like[1.4, 0.01], "steps_3_4": 0.3, "steps_1_2": 0.6}}
    v = figures.check_sweep_embeddings(by_value)
    assert [c.lhs for c in v.conditions if not c.passed] == ["steps of 3 or 4, phase 3"]
    with pytest.raises(ValueError, match="no members"):
        figures.check_one_sweep({c: m for c, m in sweep_like.items() if c != (0.5, 0.01)})


def test_run_book_length_trains_the_sweep_at_the_half_length(monkeypatch):
    calls = []
    monkeypatch.setattr(figures, "run_composition", recorder(calls))
    with pytest.raises(Called):
        figures.run_book_length((0, 1))
    (settings,), kwargs = calls[0]
    assert settings == [(g, 0.01, s) for s in (0, 1) for g in (0.2, 0.5, 1.4)]
    point = figures.HALF_LENGTH
    assert (kwargs["d_model"], kwargs["steps"], kwargs["lr"], kwargs["n_train"], kwargs["batch_size"]) == \
        (point.d_model, point.steps, point.lr, point.n_train, 128)
    assert round(point.steps * 128 / point.n_train) == 105  # half the book's 210 epochs
    # the same summed learning rate as the book's length (LONG_POINTS): steps × peak learning rate
    assert math.isclose(point.steps * point.lr, figures.LONG_POINTS[0].steps * figures.LONG_POINTS[0].lr)


def test_book_length_rows_measure_every_member():
    run = figures.run_book_length((0,), steps=3)
    rows = figures.book_length_rows(run)
    assert [(r["gamma"], r["lam"], r["data_seed"]) for r in rows] == [(0.2, 0.01, 0), (0.5, 0.01, 0), (1.4, 0.01, 0)]
    measures = figures.EMBEDDING_MEASURES + ("train", "ID", "OOD", "grouped")
    assert all(math.isfinite(r[m]) for r in rows for m in measures)
