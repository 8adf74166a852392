"""Chapter 13's scale curve read figure by figure: the same runs as the curve's, every member measured, each figure's
statement read from the right phases (exchanging them makes it fail), the committed measurement complete, a bad seed
one line."""

import json
import math

import pytest

from companion.experiments import ch13_scale as scale
from companion.experiments import ch13_scale_figures as figures
from companion.experiments.ch13_complexity import STRONG_CONTROL, WEAK_CONTROL


class Called(Exception):
    """Raised by the recording stand-in of run_composition once it has the call."""


def test_point_run_trains_exactly_the_curves_run(monkeypatch):
    calls = []

    def record(*args, **kwargs):
        calls.append((args, kwargs))
        raise Called

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
                blocks_within=0.0, blocks_across=0.0, embedding_order=1.0, embedding_variance=0.2)
    return {**base, **values}


#: Per chapter cell, the measures of a point where every figure's statement holds as the book draws it.
BOOK_LIKE = {
    (0.2, 0.01): {},  # phase 1: poor ID, no clusters, no condensation, no order
    (0.5, 0.01): dict(train=1.0, ID=0.95, OOD=0.1, commutativity=0.5, merge_cd_dc=0.9, map_clusters=0.9,
                      grouped=0.1, mean_abs_cos=0.2),  # phase 2, not commutative, keeps (c, d) and (d, c) apart
    WEAK_CONTROL: dict(train=1.0, ID=1.0, OOD=0.1, commutativity=0.9, merge_cd_dc=0.3, map_clusters=0.9,
                       grouped=0.2, mean_abs_cos=0.3, blocks_within=0.1),  # phase 2: slight condensation
    (1.1, 0.01): dict(train=1.0, ID=1.0, OOD=0.6),
    (1.4, 0.01): dict(train=1.0, ID=1.0, OOD=0.7, embedding_order=6.0),
    (1.1, 0.1): dict(train=1.0, ID=1.0, OOD=0.7),
    STRONG_CONTROL: dict(train=1.0, ID=1.0, OOD=0.8, commutativity=1.0, merge_cd_dc=0.1, map_clusters=0.9,
                         grouped=0.9, mean_abs_cos=0.6, blocks_within=0.5, blocks_across=0.05,
                         embedding_order=8.0),  # phase 3
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


def test_committed_long_training_measurement():
    """The quick size trained for the book's 210 epochs, on the design seeds it names, every cell on each."""
    data = json.loads(figures.LONG_FILE.read_text())
    rows = figures.read_long()
    (point,) = figures.LONG_POINTS
    assert round(point.steps * 128 / point.n_train) == 210 and data["points"] == "long"  # the book's epochs
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
