"""Chapter 13's scale curve read figure by figure: the same runs as the curve's, every member measured, each figure's
statement read from the right phases (exchanging them makes it fail), the committed measurement complete, a bad seed
one line."""

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
    assert figures.figure_statements(rows)[0]["phases"] == {"γ 0.2": 1, "γ 0.5": 2, "weak": 2, "strong": 3}
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
    assert not statements([member(g, l, s, **v) for s in (0, 1, 2) for (g, l), v in merged.items()])["图13.8 clusters"]


def test_committed_measurement_has_every_point_setting_and_seed_and_a_full_table():
    rows = figures.read_figures()
    for p in scale.POINTS:
        mine = [r for r in rows if (r["d_model"], r["steps"], r["lr"], r["n_train"]) == (p.d_model, p.steps, p.lr,
                                                                                        p.n_train)]
        assert sorted({(r["gamma"], r["lam"]) for r in mine}) == sorted(scale.cells())
        assert len(mine) == 3 * len(scale.cells())
    assert all(math.isfinite(r[m]) for r in rows for m in figures.MEASURES + ("ID", "OOD", "grouped"))
    table = figures.markdown_table(rows).splitlines()
    assert len(table) == 2 + 5 + 1 and all(p.label in table[0] for p in scale.POINTS)
    assert all(line.count("✔") + line.count("✘") == len(scale.POINTS) for line in table[2:-1])


def test_negative_seed_is_one_line(capsys):
    assert figures.main(["--seed", "-1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--seed" in err and "-1" in err
