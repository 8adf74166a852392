"""Chapter 13's scale curve: the committed measurement covers every point, the book's phases are read as defined,
a point is measured from one batched run, and a bad seed is one line."""

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from companion.experiments import ch13_scale as scale  # noqa: E402

MEASURES = ("train", "ID", "OOD", "commutativity", "grouped", "mean_abs_cos")


def test_committed_curve_has_every_point_setting_and_seed():
    rows = scale.read_curve()
    found = {(r["d_model"], r["steps"], r["lr"], r["n_train"]) for r in rows}
    assert found == {(p.d_model, p.steps, p.lr, p.n_train) for p in scale.POINTS}
    for p in scale.POINTS:
        mine = [r for r in rows if (r["d_model"], r["steps"], r["n_train"]) == (p.d_model, p.steps, p.n_train)]
        assert sorted({(r["gamma"], r["lam"]) for r in mine}) == sorted(scale.cells())
        assert len(mine) == 3 * len(scale.cells())  # three data seeds
    assert all(math.isfinite(r[m]) and 0 <= r[m] <= 1 for r in rows for m in MEASURES)


def row(gamma, lam, seed, train, id_acc, ood):
    point = dict(d_model=8, steps=10, lr=0.01, n_train=100)
    return {**point, "gamma": gamma, "lam": lam, "data_seed": seed, "train": train, "ID": id_acc, "OOD": ood,
            "commutativity": 0.9, "grouped": 0.5, "mean_abs_cos": 0.3}


def test_summary_reads_the_books_phases_from_the_means():
    rows = [row(0.2, 0.01, s, 0.6, 0.3, 0.0) for s in (0, 1, 2)]  # poor ID: phase 1
    rows += [row(0.8, 0.01, s, 1.0, 1.0, ood) for s, ood in zip((0, 1, 2), (0.0, 0.1, 0.2))]  # good ID, poor OOD: 2
    rows += [row(1.4, 0.01, s, 1.0, 0.95, ood) for s, ood in zip((0, 1, 2), (0.4, 0.6, 0.8))]  # good ID and OOD: 3
    table = {s["gamma"]: s for s in scale.summary(rows)}
    assert [table[g]["phase"] for g in (0.2, 0.8, 1.4)] == [1, 2, 3]
    assert table[1.4]["OOD"] == pytest.approx(0.6) and table[1.4]["OOD_range"] == (0.4, 0.8)
    rows[-1]["ID"] = 0.5  # one poor seed pulls the mean ID under 0.9: phase 1
    assert {s["gamma"]: s for s in scale.summary(rows)}[1.4]["phase"] == 1


def test_measure_point_trains_every_setting_and_seed_of_a_tiny_point():
    rows = scale.measure_point(scale.ScalePoint(8, 3, 1e-2, 200), (0, 1))
    assert len(rows) == 2 * len(scale.cells())
    assert {(r["gamma"], r["lam"], r["data_seed"]) for r in rows} == {(g, l, s) for s in (0, 1)
                                                                        for g, l in scale.cells()}
    assert all(math.isfinite(r[m]) for r in rows for m in MEASURES)


def test_plot_draws_one_panel_per_point():
    rows = scale.read_curve()
    fig, axes = plt.subplots(1, len(scale.POINTS))
    scale.plot_curve(list(axes), rows)
    assert all(ax.get_title() for ax in axes) and len({ax.get_title() for ax in axes}) == len(scale.POINTS)
    plt.close(fig)


def test_negative_seed_is_one_line(capsys):
    assert scale.main(["--seed", "-1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--seed" in err and "-1" in err
