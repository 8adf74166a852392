"""Chapter 13's scale curve, figure by figure: what 图13.5, 13.8, 13.9, 13.10 and 13.12 state, read at every point
of the curve — and at the book's training length.

:mod:`companion.experiments.ch13_scale` trains the chapter's task at seven sizes, from the quick profile's (d_model 32,
20 000 sequences) to d_model 128 on 80 000 sequences, over 图13.5's γ sweep at λ = 0.01 and two strongly controlled
settings, three data seeds each, and reads the phases (图13.5/13.6) and the condensation of W^{Q(1)} (图13.10).
This module reads the same trained models (the same cached runs: :func:`point_run` trains exactly as
:func:`~companion.experiments.ch13_scale.measure_point` does) for the mechanism figures of §13.4–§13.5, with the
chapter's own measures (:mod:`companion.experiments.ch13_complexity`):

* 图13.8 — with the key masked (图13.7A), how far apart the unseen pairs (c, d) and (d, c) lie
  (:func:`~companion.experiments.ch13_complexity.pair_merge_ratio`) and how well the outputs sort into one cluster per
  composite map (:func:`~companion.experiments.ch13_complexity.map_cluster_accuracy`);
* 图13.9 — with the second anchor masked (图13.7B), how alike the outputs of inputs sharing g(x; a1) are
  (:func:`~companion.experiments.ch13_complexity.first_anchor_blocks`);
* 图13.12 — how ordered the embeddings of the numbers 20–99 are (the random / 5-NN value gap,
  :func:`~companion.core.anchor_tasks.embedding_order`) and their top-2 PCA variance share.

:func:`figure_statements` then says, per point, whether each figure's statement holds there, with the bounds of the
chapter's claims and explorations on the means over the data seeds, the book's phases read from the cells a
:class:`PhaseReading` names — :data:`CHAPTER_CELLS`, as the chapter's claims read them (phase 1 γ = 0.2 at λ = 0.01,
phase 2 weak control (γ 0.8, λ 0.01), phase 3 strong control (γ 1.4, λ 0.1)), or :data:`SWEEP_CELLS`, as 图13.5
itself does (one γ sweep at the book's λ = 0.01: γ 0.2, 0.5 and 1.4; the book reads its phase 2 at γ 0.5 too) — and
the phase of each cell's means at the point (:func:`~companion.experiments.ch13_scale.summary`) is shown beside.

The curve trains 1500–4000 steps (5–10 epochs); the authors train 210.  :data:`LONG_POINTS` trains the quick size
for the book's 210 epochs (32 800 steps, at a peak learning rate that makes the run's summed learning rate the
authors'), :data:`HALF_LENGTH` for 105 (16 400 steps, the same summed learning rate), the same cells, read the same
way.

At :data:`HALF_LENGTH` the chapter's notebook judges three claims at its full profile, on 图13.5's sweep alone
(:func:`run_book_length`, :func:`book_length_rows`, :func:`cell_means`): ``ch13.sweep-condensation`` (图13.10,
:func:`check_sweep_condensation`), ``ch13.sweep-embeddings`` (图13.12 with its steps of 3 and 4,
:func:`check_sweep_embeddings`, :func:`neighbour_steps`) and the exploration ``ch13.one-sweep`` (图13.5,
:func:`check_one_sweep`).  :func:`figure_statements` reads the same checks at every point of the curve.

The measurements are committed (``measured/ch13_scale_figures.json``, :func:`read_figures`;
``measured/ch13_long_training.json``, :func:`read_long`; ``measured/ch13_half_training.json``, :func:`read_half`);
``python -m companion.experiments.ch13_scale_figures --seed 110 --flush-denormal`` measures the curve again (about
70 CPU-minutes with an empty cache; the curve's own runs are read from the cache when it holds them), ``… --points
long --seed 120 121 122 123 --flush-denormal`` the long training (about 18 CPU-minutes a seed), ``… --points half
--seed 120 121 122 123 124 --flush-denormal`` the half length (about 11).  The curve's file was made on an Intel
Xeon (2026-12-06), the curve on another machine (2026-12-01): training the same point there gives other single
models — each cell's means agree within the spread of its data seeds — so the file carries the curve's measures of
its own models beside the figures' (the phases it reads are its own).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from companion.core.anchor_tasks import embedding_order
from companion.core.attention import explained_variance
from companion.experiments.ch13_complexity import (MAP_CLUSTERS_AT_LEAST, ORDER_RATIO, PHASE_ONE_GROUPED_BELOW,
                                                   PHASE_THREE_GROUPED_GAIN, SLIGHT_COS_GAIN, STRONG_CONTROL,
                                                   WEAK_CONTROL, CompositionRun, condensation_conditions,
                                                   first_anchor_blocks, first_anchor_probe, first_step_values,
                                                   key_masked_outputs, key_masked_probe, map_cluster_accuracy,
                                                   pair_merge_ratio, run_composition, second_anchor_masked)
from companion.experiments.ch13_scale import (POINTS, SWEEP_LAMBDA, ScalePoint, cells, measure_point, member_row,
                                              summary)
from companion.kit.claims import ClaimSpec, Verdict, compare, threshold

FIGURES_FILE = Path(__file__).with_name("measured") / "ch13_scale_figures.json"
LONG_FILE = Path(__file__).with_name("measured") / "ch13_long_training.json"
HALF_FILE = Path(__file__).with_name("measured") / "ch13_half_training.json"
#: The book's training length, 210 epochs, at the quick size: 20 000 sequences at batch 128 is 156¼ steps an epoch.
#: Its peak learning rate makes the summed learning rate of the run the authors' (their config: AdamW warmed up from
#: 10⁻⁵ to 2·10⁻⁴ over 10 epochs, cosine to 10⁻⁵ over 200, 370 batches of 2048 an epoch — 77 700 steps; Σ lr ≈ 8.2
#: there and here; the quick size's 1500 steps at 10⁻²: 7.5).
LONG_POINTS = (ScalePoint(32, 32800, 5e-4, 20000),)
#: Half the book's training length, 105 epochs, at the same summed learning rate: the notebook's full profile trains
#: 图13.5's sweep there (:func:`run_book_length`) and judges the claims below on it.
HALF_LENGTH = ScalePoint(32, 16400, 1e-3, 20000)
PHASE_ONE = (0.2, SWEEP_LAMBDA)  # the chapter's phase-1 cell (图13.5's largest initialisation)
LARGER_INIT_PHASE_TWO = (0.5, SWEEP_LAMBDA)  # 图13.6/13.8's phase-2 model at a larger initialisation
SMALL_INIT_SWEEP = (STRONG_CONTROL[0], SWEEP_LAMBDA)  # the sweep's smallest initialisation: its phase-3 side
MEMORISED_AT_LEAST, MEMORY_OOD_BELOW = 0.2, 0.2  # ch13.phase-one: training − ID accuracy at least, OOD below
FIT_ID, REASONS_AT = 0.9, 0.5  # 图13.6's good ID accuracy; the OOD accuracy of phase 3 (ch13_scale.summary's phases)
MERGED_AT_MOST = 0.5  # ch13.symmetric-merge: (c, d) and (d, c) one cluster; ch13.phase-two-contrast: apart above it
POOR_COMMUTATIVITY = 0.7  # 图13.6's green triangles
BLOCKS_GAIN = 0.25  # ch13.first-anchor-blocks: within − across, and strong − weak within, at least this
NEIGHBOURS = 4  # 图13.12's arrows: the steps to a number's nearest neighbours in embedding space
BOOK_STEPS, VALUE_STEPS = (3, 4), (1, 2)  # the book's steps of the phase-3 order (3 and 4), and the values' own order
BOOK_STEPS_AT_LEAST = 0.3  # ch13.sweep-embeddings: share of the neighbours 3 or 4 away in value (chance: about 0.05)
EMBEDDING_MEASURES = ("embedding_order", "embedding_variance", "steps_3_4", "steps_1_2")
MEASURES = ("merge_cd_dc", "map_clusters", "blocks_within", "blocks_across") + EMBEDDING_MEASURES
Cell = tuple[float, float]


@dataclass(frozen=True)
class PhaseReading:
    """Which (γ, λ) cell of a point stands for each of the book's phases when its figures are read: ``one``, ``two``
    (图13.8's clusters, the contrast of 图13.9, 13.10 and 13.12), ``larger_two`` (图13.6/13.8: phase 2 at a larger
    initialisation, poorly commutative, (c, d) and (d, c) apart) and ``three`` (图13.8–13.10 read the first; 图13.12
    the least ordered of them)."""

    name: str
    one: Cell
    two: Cell
    larger_two: Cell
    three: tuple[Cell, ...]


#: The chapter's cells, as its claims read them: phase 2 weak control, phase 3 strong control (and γ 1.4 at λ 0.01).
CHAPTER_CELLS = PhaseReading("the chapter's cells", PHASE_ONE, WEAK_CONTROL, LARGER_INIT_PHASE_TWO,
                             (STRONG_CONTROL, SMALL_INIT_SWEEP))
#: 图13.5's own reading: one γ sweep at λ = 0.01, the largest initialisation, γ 0.5 and the smallest (γ 1.4).
SWEEP_CELLS = PhaseReading("图13.5's sweep at λ = 0.01", PHASE_ONE, LARGER_INIT_PHASE_TWO, LARGER_INIT_PHASE_TWO,
                           (SMALL_INIT_SWEEP,))
READINGS = {"chapter": CHAPTER_CELLS, "sweep": SWEEP_CELLS}


#: 图13.5's sweep read with phases 2 and 3 exchanged (γ 1.4 read as phase 2, γ 0.5 as phase 3): the contrast the book
#: draws between its phases 2 and 3, which ch13.one-sweep's reading must fail (tests/test_controls_ch13.py).
EXCHANGED_CELLS = PhaseReading("phases 2 and 3 exchanged", PHASE_ONE, SMALL_INIT_SWEEP, SMALL_INIT_SWEEP,
                               (LARGER_INIT_PHASE_TWO,))
#: Phase 1 read as phase 3 (and γ 1.4 as phase 1): the negative control of the condensation and embedding claims.
PHASE_ONE_AS_THREE = PhaseReading("phase 1 read as phase 3", SMALL_INIT_SWEEP, LARGER_INIT_PHASE_TWO,
                                  LARGER_INIT_PHASE_TWO, (PHASE_ONE,))
Means = dict[Cell, dict[str, float]]
FIGURE_ORDER = ("图13.5", "图13.8 clusters", "图13.8 symmetric pairs", "图13.9", "图13.10", "图13.12")


def neighbour_steps(numbers: np.ndarray, k: int = NEIGHBOURS) -> dict[str, float]:
    """图13.12's arrows: for every number (the rows of ``numbers``, the embeddings of consecutive values), the share of
    its ``k`` nearest neighbours in embedding space (Euclidean) that lie 3 or 4 away in value (``steps_3_4``: the
    book's phase-3 order, "以 3 和 4 为间隔") and 1 or 2 away (``steps_1_2``: the order of the values themselves).
    An embedding blind to order gives about 4/79 ≈ 0.05 for each (80 numbers)."""
    e = np.asarray(numbers, dtype=float)
    dist = ((e[:, None] - e[None]) ** 2).sum(-1)
    np.fill_diagonal(dist, np.inf)
    nearest = np.argsort(dist, axis=1)[:, :k]
    gaps = np.abs(np.arange(len(e))[:, None] - nearest)
    return {"steps_3_4": float(np.isin(gaps, BOOK_STEPS).mean()), "steps_1_2": float(np.isin(gaps, VALUE_STEPS).mean())}


def embedding_measures(numbers: np.ndarray) -> dict[str, float]:
    """What 图13.12 reads from the embeddings of the numbers 20–99 (``numbers``, one row each, in order): the random /
    5-NN value gap (:func:`~companion.core.anchor_tasks.embedding_order`), the top-2 PCA variance share and
    :func:`neighbour_steps` — each rounded to 4 decimals."""
    values = {"embedding_order": embedding_order(numbers), "embedding_variance": explained_variance(numbers),
              **neighbour_steps(numbers)}
    return {m: round(values[m], 4) for m in EMBEDDING_MEASURES}


# ------------------------------------------------------------------------------ claims at the book's training length
ONE_SWEEP = ClaimSpec("ch13.one-sweep", "图13.5",
                      "图13.5's three phases in one γ sweep at the book's λ = 0.01, trained for half the book's length "
                      "(105 epochs): the largest initialisation (γ = 0.2) relies on memory — it answers its training "
                      "sequences at least 0.2 more often than new ones of the same anchor pairs, ID < 0.9, OOD < 0.2 "
                      "(phase 1); γ = 0.5 fits ID (≥ 0.9) but not the unseen pairs (OOD < 0.5, phase 2); the smallest "
                      "(γ = 1.4: our γ axis is shifted) fits ID and solves the unseen pairs (OOD ≥ 0.5, phase 3); "
                      "means over the data seeds", kind="exploration")
SWEEP_CONDENSATION = ClaimSpec("ch13.sweep-condensation", "图13.10",
                               "图13.10 as the book draws it, from 图13.5's one sweep at λ = 0.01 trained for half the "
                               "book's length: the first-layer query neurons of phase 1 (γ = 0.2) keep independent "
                               "directions (under 10 % grouped), phase 2's (γ = 0.5) condense slightly (mean |cos| at "
                               "least 0.05 above phase 1's), phase 3's (γ = 1.4) gather into groups (at least half "
                               "grouped, mean |cos| ≥ 0.3, a grouped share at least 0.2 above phase 2's); means over "
                               "the data seeds")
SWEEP_EMBEDDINGS = ClaimSpec("ch13.sweep-embeddings", "图13.12",
                             "图13.12 as the book draws it, from 图13.5's one sweep at λ = 0.01 trained for half the "
                             "book's length: phase 3's (γ = 1.4) number embeddings are ordered (a number's 5 nearest "
                             "neighbours ≥ 3 times closer in value than random numbers) — not in the order of the "
                             "values but in steps of 3 and 4: at least 30 % of each number's 4 nearest neighbours lie "
                             "3 or 4 away in value (chance about 5 %), more than lie 1 or 2 away — and phase 1's "
                             "(γ = 0.2) and phase 2's (γ = 0.5) show no such order (ratio < 3); means over the data "
                             "seeds")


def cell_means(rows: Sequence[dict]) -> Means:
    """Per (γ, λ) of ``rows`` (members of one point): the mean over its data seeds of each measure the rows have."""
    groups: dict[Cell, list[dict]] = defaultdict(list)
    for r in rows:
        groups[r["gamma"], r["lam"]].append(r)
    numeric = [m for m, v in rows[0].items() if isinstance(v, float) and m not in ("gamma", "lam", "lr")]
    return {c: {m: float(np.mean([r[m] for r in group])) for m in numeric} for c, group in groups.items()}


def _phases(means: Means, reading: PhaseReading) -> tuple[dict[str, float], dict[str, float], dict[str, float]]:
    """The means of ``reading``'s phase-1, phase-2 and (first) phase-3 cells; a cell ``means`` lacks is named."""
    cells_read = (reading.one, reading.two, reading.three[0])
    if missing := [c for c in cells_read if c not in means]:
        raise ValueError(f"{reading.name}: no members of the cells {missing}; the run has {sorted(means)}")
    return means[reading.one], means[reading.two], means[reading.three[0]]


def check_one_sweep(means: Means, reading: PhaseReading = SWEEP_CELLS) -> Verdict:
    """图13.5 (§13.3): one γ sweep at λ = 0.01 passes through the three phases — phase 1 memorises (差 ID 和差 OOD
    泛化, 模型主要依赖记忆: training − ID accuracy ≥ 0.2, ID < 0.9 — 图13.6's line of poor ID — and OOD < 0.2, the
    bounds of ``ch13.phase-one``), phase 2 fits ID (≥ 0.9) but not the unseen pairs (OOD < 0.5), phase 3 both (OOD ≥
    0.5) — on ``means`` (:func:`cell_means`) of ``reading``'s cells.  The negative control reads the sweep with phases
    2 and 3 exchanged (:data:`EXCHANGED_CELLS`)."""
    one, two, three = _phases(means, reading)
    return ONE_SWEEP.judge(
        threshold("training − ID accuracy, phase 1", one["train"] - one["ID"], ">=", MEMORISED_AT_LEAST),
        threshold("ID accuracy, phase 1", one["ID"], "<", FIT_ID),
        threshold("OOD accuracy, phase 1", one["OOD"], "<", MEMORY_OOD_BELOW),
        threshold("ID accuracy, phase 2", two["ID"], ">=", FIT_ID),
        threshold("OOD accuracy, phase 2", two["OOD"], "<", REASONS_AT),
        threshold("ID accuracy, phase 3", three["ID"], ">=", FIT_ID),
        threshold("OOD accuracy, phase 3", three["OOD"], ">=", REASONS_AT),
        cells={"phase 1": _cell_name(reading.one), "phase 2": _cell_name(reading.two),
               "phase 3": _cell_name(reading.three[0])},
        training_accuracy=[round(p["train"], 3) for p in (one, two, three)])


def check_sweep_condensation(means: Means, reading: PhaseReading = SWEEP_CELLS) -> Verdict:
    """图13.10 (§13.5.1: "在阶段 1，输入权重没有表现出显著的凝聚 … 在阶段 2，我们观察到轻微的凝聚 … 在阶段 3，输入权重强烈地
    聚集到少数几个孤立的方向上") on ``means`` of ``reading``'s cells, with the bounds of ``ch13.wq-condensation``: phase 1
    under :data:`~companion.experiments.ch13_complexity.PHASE_ONE_GROUPED_BELOW` grouped, phase 2's mean |cos| at least
    :data:`~companion.experiments.ch13_complexity.SLIGHT_COS_GAIN` above it, phase 3 condensed
    (:func:`~companion.experiments.ch13_complexity.condensation_conditions`) with a grouped share at least
    :data:`~companion.experiments.ch13_complexity.PHASE_THREE_GROUPED_GAIN` above phase 2's.  The negative control
    reads phase 1 as phase 3 (:data:`PHASE_ONE_AS_THREE`)."""
    one, two, three = _phases(means, reading)
    return SWEEP_CONDENSATION.judge(
        *condensation_conditions(three["grouped"], three["mean_abs_cos"], "phase 3"),
        threshold("grouped neurons, phase 1", one["grouped"], "<", PHASE_ONE_GROUPED_BELOW),
        threshold("mean |cos|, phase 2 − phase 1", two["mean_abs_cos"] - one["mean_abs_cos"], ">=", SLIGHT_COS_GAIN),
        threshold("grouped neurons, phase 3 − phase 2", three["grouped"] - two["grouped"], ">=",
                  PHASE_THREE_GROUPED_GAIN),
        mean_cos_by_phase=[round(p["mean_abs_cos"], 2) for p in (one, two, three)],
        grouped_by_phase=[round(p["grouped"], 2) for p in (one, two, three)])


def check_sweep_embeddings(means: Means, reading: PhaseReading = SWEEP_CELLS) -> Verdict:
    """图13.12 (§13.5.2: in phases 1 and 2 "嵌入向量没有表现出任何清晰的结构", in phase 3 "以有序和规则的方式排列", an order
    "并非对应 token 的简单数值大小关系" but in steps of 3 and 4) on ``means`` of ``reading``'s cells: phase 3's random /
    5-NN value gap ≥ :data:`~companion.experiments.ch13_complexity.ORDER_RATIO` (chapter 12's bound, 图12.7), at least
    :data:`BOOK_STEPS_AT_LEAST` of its numbers' nearest neighbours 3 or 4 away in value and more than 1 or 2 away
    (:func:`neighbour_steps`); phases 1 and 2 below the order bound.  The negative control reads phase 1 as phase 3
    (:data:`PHASE_ONE_AS_THREE`)."""
    one, two, three = _phases(means, reading)
    return SWEEP_EMBEDDINGS.judge(
        threshold("random / 5-NN value gap, phase 3", three["embedding_order"], ">=", ORDER_RATIO),
        threshold("neighbours 3 or 4 away, phase 3", three["steps_3_4"], ">=", BOOK_STEPS_AT_LEAST),
        compare("steps of 3 or 4, phase 3", three["steps_3_4"], ">", "steps of 1 or 2", three["steps_1_2"]),
        threshold("random / 5-NN value gap, phase 1", one["embedding_order"], "<", ORDER_RATIO),
        threshold("random / 5-NN value gap, phase 2", two["embedding_order"], "<", ORDER_RATIO),
        neighbours_3_or_4_by_phase=[round(p["steps_3_4"], 2) for p in (one, two, three)])


def run_book_length(data_seeds: Sequence[int], *, steps: int = HALF_LENGTH.steps,
                    reading: PhaseReading = SWEEP_CELLS) -> CompositionRun:
    """图13.5's sweep (``reading``'s phase cells: γ 0.2, 0.5, 1.4 at λ = 0.01) at :data:`HALF_LENGTH` — the quick
    size (d_model 32, 20 000 training sequences, batch 128) for 105 epochs at 10⁻³ — on every data seed, one batched,
    cached run; ``steps`` fewer for a smoke run (the learning-rate schedule follows them)."""
    sweep = dict.fromkeys((reading.one, reading.two, *reading.three))
    return run_composition([(g, l, s) for s in data_seeds for g, l in sweep], n_train=HALF_LENGTH.n_train,
                           n_test=1000, d_model=HALF_LENGTH.d_model, n_layers=2, steps=steps, lr=HALF_LENGTH.lr,
                           batch_size=128, record_every=max(steps // 8, 1))


def book_length_rows(run: CompositionRun) -> list[dict]:
    """One row per member of ``run`` (:func:`run_book_length`): its accuracies, commutativity and W^{Q(1)}
    condensation (:func:`~companion.experiments.ch13_scale.member_row`) and :func:`embedding_measures` of its numbers
    20–99."""
    model = run.model()
    return [{**member_row(run, model, k), **embedding_measures(model.member_weight("w_em", k)[20:100].numpy())}
            for k in range(len(run.settings))]


BOOK_LENGTH_PANELS = (  # (title, y label, ((measure, label, colour, marker), …), y limits, bound or None)
    ("Fig. 13.5: accuracy", "accuracy", (("train", "training", "0.45", "^"), ("ID", "ID", "#1f77b4", "o"),
                                      ("OOD", "OOD", "#d62728", "s")), (-0.03, 1.03), None),
    ("Fig. 13.10: W_Q(1) neurons", "share / mean |cos|", (("grouped", "grouped (cos > 0.7)", "#9467bd", "o"),
                                                        ("mean_abs_cos", "mean |cos|", "#8c564b", "s")),
     (-0.03, 1.03), None),
    ("Fig. 13.12: order of the embeddings", "random / 5-NN value gap",
     (("embedding_order", "value gap ratio", "#2ca02c", "o"),), None, ORDER_RATIO),
    ("Fig. 13.12: steps between neighbours", "share of neighbours", (("steps_3_4", "steps of 3 or 4", "#17becf", "o"),
                                                             ("steps_1_2", "steps of 1 or 2", "#bcbd22", "s")),
     (-0.03, 1.03), None),
)


def plot_book_length(axes: Sequence, rows: Sequence[dict], reading: PhaseReading = SWEEP_CELLS) -> None:
    """图13.5, 13.10 and 13.12 at the book's training length on four ``axes`` (:data:`BOOK_LENGTH_PANELS`): for each
    phase cell of ``reading`` (x axis), the mean over the data seeds (line) and each data seed (dots) of the
    accuracies, the condensation of W^{Q(1)}, the embeddings' value-gap ratio (dashed: the order bound 3) and the
    shares of nearest neighbours 3 or 4 and 1 or 2 away in value."""
    phase_cells = (reading.one, reading.two, reading.three[0])
    by_cell = {c: [r for r in rows if (r["gamma"], r["lam"]) == c] for c in phase_cells}
    x = np.arange(len(phase_cells))
    for ax, (title, ylabel, series, ylim, bound) in zip(axes, BOOK_LENGTH_PANELS):
        for n, (measure, label, colour, marker) in enumerate(series):
            offset = (n - (len(series) - 1) / 2) * 0.08
            for i, c in enumerate(phase_cells):
                values = [r[measure] for r in by_cell[c]]
                ax.plot([i + offset] * len(values), values, marker, color=colour, alpha=0.35, ms=4)
            ax.plot(x + offset, [np.mean([r[measure] for r in by_cell[c]]) for c in phase_cells], "-" + marker,
                    color=colour, label=label)
        if bound is not None:
            ax.axhline(bound, ls="--", color="0.5", lw=1)
        ax.set_xticks(x, [f"phase {i}\n{_cell_name(c)}" for i, c in enumerate(phase_cells, 1)])
        ax.set(title=title, ylabel=ylabel, **({"ylim": ylim} if ylim else {}))
        ax.legend(fontsize=7)


def point_run(point: ScalePoint, data_seeds: Sequence[int]) -> CompositionRun:
    """The point's batched run, trained (or read from the cache) exactly as
    :func:`~companion.experiments.ch13_scale.measure_point` trains it."""
    return run_composition([(g, l, s) for s in data_seeds for g, l in cells()], n_train=point.n_train, n_test=1000,
                           d_model=point.d_model, n_layers=2, steps=point.steps, lr=point.lr, batch_size=128,
                           record_every=max(point.steps // 5, 1))


def measure_point_figures(point: ScalePoint, data_seeds: Sequence[int]) -> list[dict]:
    """One row per member of the point's run: the curve's row (:func:`~companion.experiments.ch13_scale.measure_point`:
    accuracies, commutativity, W^{Q(1)} condensation) and :data:`MEASURES`, each member on the probes of its own data
    seed (50 sequences per anchor pair with the key masked; 8 values of g(x; a1) × 4 first anchors × 4 copies with
    the second anchor masked)."""
    run = point_run(point, data_seeds)
    base = {(r["gamma"], r["lam"], r["data_seed"]): r for r in measure_point(point, data_seeds)}
    model = run.model()
    rows = []
    for s in sorted(set(data_seeds)):
        key_probe = key_masked_probe(run.data(s))
        key_out, pairs = key_masked_outputs(run, key_probe), key_probe.anchors.numpy()
        step_probe = first_anchor_probe(s)
        step_out = second_anchor_masked(run, step_probe)
        g1, a1 = first_step_values(step_probe), step_probe.anchors[:, 0].numpy()
        for k in [k for k, (_, _, seed) in enumerate(run.settings) if seed == s]:
            numbers = model.member_weight("w_em", k)[20:100].numpy()  # (80, d): the tokens 20–99
            within, across = first_anchor_blocks(step_out[k], g1, a1)
            rows.append({**base[run.settings[k]],
                         "merge_cd_dc": round(pair_merge_ratio(key_out[k], pairs), 4),
                         "map_clusters": round(map_cluster_accuracy(key_out[k], pairs), 4),
                         "blocks_within": round(within, 4), "blocks_across": round(across, 4),
                         **embedding_measures(numbers)})
    return rows


def measure_figures(seed: int, points: Sequence[ScalePoint] = POINTS) -> list[dict]:
    """Every point on the data seeds 3·``seed`` … 3·``seed`` + 2 (the curve's), smallest first."""
    rows = []
    for n, point in enumerate(points, 1):
        print(f"point {n}/{len(points)}: {point.label}", flush=True)
        rows += measure_point_figures(point, (3 * seed, 3 * seed + 1, 3 * seed + 2))
    return rows


def read_figures(path: Path = FIGURES_FILE) -> list[dict]:
    """The committed measurement: one row per (point, γ, λ, data seed)."""
    return json.loads(path.read_text())["rows"]


def _means(rows: Sequence[dict]) -> dict[ScalePoint, dict[tuple[float, float], dict[str, float]]]:
    """Per point and (γ, λ): the mean over the data seeds of every measure of :data:`MEASURES` and the curve's."""
    groups: dict[ScalePoint, dict[tuple[float, float], list[dict]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        groups[ScalePoint(r["d_model"], r["steps"], r["lr"], r["n_train"])][r["gamma"], r["lam"]].append(r)
    names = MEASURES + ("train", "ID", "OOD", "commutativity", "grouped", "mean_abs_cos")
    return {p: {c: {m: float(np.mean([r[m] for r in group])) for m in names} for c, group in by_cell.items()}
            for p, by_cell in groups.items()}


def figure_statements(rows: Sequence[dict], reading: PhaseReading = CHAPTER_CELLS) -> list[dict]:
    """Per point (in :func:`~companion.experiments.ch13_scale.summary`'s order) and figure, the figure's statement on
    the means over the data seeds, with the phases taken from ``reading``'s cells: ``holds`` and the values it reads
    (``values``), with each of those cells' phase of the means.

    * 图13.5, 图13.10 and 图13.12: the claims the notebook judges at the book's training length
      (:func:`check_one_sweep`, :func:`check_sweep_condensation`, :func:`check_sweep_embeddings`), read here with
      ``reading``'s cells at every point;
    * 图13.8 (clusters, left against middle panel): phase 2's outputs sort into one cluster per composite map
      (≥ :data:`~companion.experiments.ch13_complexity.MAP_CLUSTERS_AT_LEAST`), phase 1's do not;
    * 图13.8 (symmetric pairs, middle against right panel): the larger-initialisation phase-2 model is not
      commutative (< 0.7) and keeps (c, d) and (d, c) apart (merge ratio > 0.5); phase 3 merges them (≤ 0.5);
    * 图13.9: phase 3's outputs sharing g(x; a1) are alike (within − across ≥ 0.25) and by ≥ 0.25 more alike than
      phase 2's.
    """
    means, table = _means(rows), summary(rows)
    phases = {(s["point"], s["gamma"], s["lam"]): s["phase"] for s in table}
    out = []
    for point in dict.fromkeys(s["point"] for s in table):
        m = means[point]
        one, two, larger, three = (m[reading.one], m[reading.two], m[reading.larger_two], m[reading.three[0]])
        read_cells = dict.fromkeys((reading.one, reading.larger_two, reading.two, *reading.three))
        cell_phases = {_cell_name(c): phases[(point, *c)] for c in read_cells}
        statements = {figure: (v.passed, {c.lhs: c.value for c in v.conditions}
                               | {c.rhs: c.bound for c in v.conditions if c.kind == "compare"})
                      for figure, v in (("图13.5", check_one_sweep(m, reading)),
                                        ("图13.10", check_sweep_condensation(m, reading)),
                                        ("图13.12", check_sweep_embeddings(m, reading)))}
        statements |= {
            "图13.8 clusters": (two["map_clusters"] >= MAP_CLUSTERS_AT_LEAST > one["map_clusters"],
                               {"phase 2": two["map_clusters"], "phase 1": one["map_clusters"]}),
            "图13.8 symmetric pairs": (larger["commutativity"] < POOR_COMMUTATIVITY
                                       and larger["merge_cd_dc"] > MERGED_AT_MOST >= three["merge_cd_dc"],
                                       {"larger-init phase 2 commutativity": larger["commutativity"],
                                        "its merge": larger["merge_cd_dc"], "phase 3 merge": three["merge_cd_dc"]}),
            "图13.9": (three["blocks_within"] - three["blocks_across"] >= BLOCKS_GAIN
                      and three["blocks_within"] - two["blocks_within"] >= BLOCKS_GAIN,
                      {"phase 3 within − across": three["blocks_within"] - three["blocks_across"],
                       "within 3 − 2": three["blocks_within"] - two["blocks_within"]}),
        }
        for figure in FIGURE_ORDER:
            holds, values = statements[figure]
            out.append({"point": point, "figure": figure, "holds": bool(holds),
                        "values": {k: round(float(v), 3) for k, v in values.items()}, "phases": cell_phases})
    return out


def _cell_name(cell: Cell) -> str:
    """"weak", "strong", or "γ 0.5" for a cell of the λ = 0.01 sweep ("γ 1.1, λ 0.1" otherwise)."""
    names = {WEAK_CONTROL: "weak", STRONG_CONTROL: "strong"}
    return names.get(cell, f"γ {cell[0]:g}" if cell[1] == SWEEP_LAMBDA else f"γ {cell[0]:g}, λ {cell[1]:g}")


def markdown_table(rows: Sequence[dict], reading: PhaseReading = CHAPTER_CELLS) -> str:
    """:func:`figure_statements` as a table: one row per figure (the values it reads named after it), one column per
    point (✔/✘ and the values), and a last row with the phase of the means of each cell ``reading`` reads."""
    statements = figure_statements(rows, reading)
    points = list(dict.fromkeys(s["point"] for s in statements))
    figures = list(dict.fromkeys(s["figure"] for s in statements))
    cell = {(s["point"], s["figure"]): s for s in statements}
    lines = ["| figure | " + " | ".join(p.label for p in points) + " |", "|---|" + "---|" * len(points)]
    for f in figures:
        read = " / ".join(cell[points[0], f]["values"])
        lines.append(f"| {f} ({read}) | " + " | ".join(
            ("✔ " if cell[p, f]["holds"] else "✘ ") + ", ".join(f"{v:g}" for v in cell[p, f]["values"].values())
            for p in points) + " |")
    names = ", ".join(cell[points[0], figures[0]]["phases"])
    lines.append(f"| phases ({names}) | " + " | ".join(
        ", ".join(str(v) for v in cell[p, figures[0]]["phases"].values()) for p in points) + " |")
    return "\n".join(lines)


def by_seed(rows: Sequence[dict]) -> dict[int, list[dict]]:
    """``rows`` of several ``--seed`` values, split by seed (the data seeds of seed s are 3s, 3s + 1, 3s + 2)."""
    out: dict[int, list[dict]] = defaultdict(list)
    for r in rows:
        out[r["data_seed"] // 3].append(r)
    return dict(sorted(out.items()))


def read_long(path: Path = LONG_FILE) -> list[dict]:
    """The committed measurement of :data:`LONG_POINTS`: one row per (γ, λ, data seed) of each seed it names."""
    return read_figures(path)


def read_half(path: Path = HALF_FILE) -> list[dict]:
    """The committed measurement of :data:`HALF_LENGTH` on the design seeds of the notebook's book-length claims."""
    return read_figures(path)


POINT_SETS = {"curve": (POINTS, FIGURES_FILE), "long": (LONG_POINTS, LONG_FILE), "half": ((HALF_LENGTH,), HALF_FILE)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m companion.experiments.ch13_scale_figures",
                                     description="read 图13.5, 13.8, 13.9, 13.10 and 13.12 at every point of chapter "
                                                 "13's scale curve (or at the book's training length) and write it to "
                                                 "the committed file")
    parser.add_argument("--seed", type=int, nargs="+", default=[110],
                        help="data seeds 3·seed … 3·seed + 2, for each seed given (default 110)")
    parser.add_argument("--points", choices=tuple(POINT_SETS), default="curve",
                        help="the scale curve's seven sizes (default), the quick size trained for the book's 210 "
                             "epochs (long: LONG_POINTS) or for half of them (half: HALF_LENGTH, the notebook's "
                             "book-length claims)")
    parser.add_argument("--out", type=Path, default=None,
                        help="where to write the measurement (JSON; default: " +
                             ", ".join(f"{name} {file.name}" for name, (_, file) in POINT_SETS.items()) +
                             ", beside this module)")
    parser.add_argument("--flush-denormal", action="store_true",
                        help="flush subnormal floats to zero while training (torch.set_flush_denormal): on an Intel "
                             "Xeon a d_model-128 point slowed from 0.4 to 1.6 s a step by step 900 without it; the "
                             "numbers do not move (d_model 32: every member the same with and without); the file "
                             "records the choice")
    args = parser.parse_args(argv)
    if min(args.seed) < 0:
        print(f"--seed must be non-negative integers, got {min(args.seed)}", file=sys.stderr)
        return 2
    if args.flush_denormal and not torch.set_flush_denormal(True):
        print("--flush-denormal: this CPU cannot flush subnormal floats (torch needs SSE3)", file=sys.stderr)
        return 2
    points, out = POINT_SETS[args.points][0], args.out or POINT_SETS[args.points][1]
    rows = [r for seed in args.seed for r in measure_figures(seed, points)]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"seeds": args.seed, "data_seeds": [3 * s + i for s in args.seed for i in range(3)],
                               "points": args.points, "flush_denormal": args.flush_denormal, "rows": rows},
                              indent=1) + "\n")
    for seed, mine in by_seed(rows).items():
        for reading in READINGS.values():
            print(f"\nseed {seed}, {reading.name}:\n" + markdown_table(mine, reading))
    print(f"wrote {len(rows)} rows to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
