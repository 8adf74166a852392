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
authors'), the same cells, read the same way.

The measurements are committed (``measured/ch13_scale_figures.json``, :func:`read_figures`;
``measured/ch13_long_training.json``, :func:`read_long`); ``python -m companion.experiments.ch13_scale_figures
--seed 110 --flush-denormal`` measures the curve again (about 70 CPU-minutes with an empty cache; the curve's own
runs are read from the cache when it holds them), ``… --points long --seed 120 121 122 123 --flush-denormal`` the
long training (about 18 CPU-minutes a seed).  The curve's file was made on an Intel Xeon (2026-12-06), the curve on
another machine (2026-12-01): training the same point there gives other single models — each cell's means agree
within the spread of its data seeds — so the file carries the curve's measures of its own models beside the
figures' (the phases it reads are its own).
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
                                                   WEAK_CONTROL, CompositionRun, first_anchor_blocks,
                                                   first_anchor_probe, first_step_values, key_masked_outputs,
                                                   key_masked_probe, map_cluster_accuracy, pair_merge_ratio,
                                                   run_composition, second_anchor_masked)
from companion.experiments.ch13_scale import POINTS, SWEEP_LAMBDA, ScalePoint, cells, measure_point, summary

FIGURES_FILE = Path(__file__).with_name("measured") / "ch13_scale_figures.json"
LONG_FILE = Path(__file__).with_name("measured") / "ch13_long_training.json"
#: The book's training length, 210 epochs, at the quick size: 20 000 sequences at batch 128 is 156¼ steps an epoch.
#: Its peak learning rate makes the summed learning rate of the run the authors' (their config: AdamW warmed up from
#: 10⁻⁵ to 2·10⁻⁴ over 10 epochs, cosine to 10⁻⁵ over 200, 370 batches of 2048 an epoch — 77 700 steps; Σ lr ≈ 8.2
#: there and here; the quick size's 1500 steps at 10⁻²: 7.5).
LONG_POINTS = (ScalePoint(32, 32800, 5e-4, 20000),)
PHASE_ONE = (0.2, SWEEP_LAMBDA)  # the chapter's phase-1 cell (图13.5's largest initialisation)
LARGER_INIT_PHASE_TWO = (0.5, SWEEP_LAMBDA)  # 图13.6/13.8's phase-2 model at a larger initialisation
SMALL_INIT_SWEEP = (STRONG_CONTROL[0], SWEEP_LAMBDA)  # the sweep's smallest initialisation: its phase-3 side
MEMORISED_AT_LEAST, MEMORY_OOD_BELOW = 0.2, 0.2  # ch13.phase-one: training − ID accuracy at least, OOD below
FIT_ID, REASONS_AT = 0.9, 0.5  # 图13.6's good ID accuracy; the OOD accuracy of phase 3 (ch13_scale.summary's phases)
MERGED_AT_MOST = 0.5  # ch13.symmetric-merge: (c, d) and (d, c) one cluster; ch13.phase-two-contrast: apart above it
POOR_COMMUTATIVITY = 0.7  # 图13.6's green triangles
BLOCKS_GAIN = 0.25  # ch13.first-anchor-blocks: within − across, and strong − weak within, at least this
MEASURES = ("merge_cd_dc", "map_clusters", "blocks_within", "blocks_across", "embedding_order", "embedding_variance")
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
                         "embedding_order": round(embedding_order(numbers), 4),
                         "embedding_variance": round(explained_variance(numbers), 4)})
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

    * 图13.5: one γ sweep, three phases — phase 1 memorises (training − ID accuracy ≥ 0.2, ID < 0.9, OOD < 0.2, the
      bounds of ``ch13.phase-one``), phase 2 fits ID (≥ 0.9) but not the unseen pairs (OOD < 0.5), phase 3 both;
    * 图13.8 (clusters, left against middle panel): phase 2's outputs sort into one cluster per composite map
      (≥ :data:`~companion.experiments.ch13_complexity.MAP_CLUSTERS_AT_LEAST`), phase 1's do not;
    * 图13.8 (symmetric pairs, middle against right panel): the larger-initialisation phase-2 model is not
      commutative (< 0.7) and keeps (c, d) and (d, c) apart (merge ratio > 0.5); phase 3 merges them (≤ 0.5);
    * 图13.9: phase 3's outputs sharing g(x; a1) are alike (within − across ≥ 0.25) and by ≥ 0.25 more alike than
      phase 2's;
    * 图13.10: phase 1 uncondensed (< 10 % grouped), phase 2 slightly (mean |cos| ≥ 0.05 above phase 1), phase 3
      strongly (grouped share ≥ 0.2 above phase 2);
    * 图13.12: phase 3's number embeddings ordered (random / 5-NN value gap ≥ 3 in each of its cells), phase 1's and
      phase 2's not (< 3).
    """
    means, table = _means(rows), summary(rows)
    phases = {(s["point"], s["gamma"], s["lam"]): s["phase"] for s in table}
    out = []
    for point in dict.fromkeys(s["point"] for s in table):
        m = means[point]
        one, two, larger, three = (m[reading.one], m[reading.two], m[reading.larger_two], m[reading.three[0]])
        order_three = min(m[c]["embedding_order"] for c in reading.three)
        read_cells = dict.fromkeys((reading.one, reading.larger_two, reading.two, *reading.three))
        cell_phases = {_cell_name(c): phases[(point, *c)] for c in read_cells}
        statements = {
            "图13.5": (one["train"] - one["ID"] >= MEMORISED_AT_LEAST and one["ID"] < FIT_ID
                      and one["OOD"] < MEMORY_OOD_BELOW and two["ID"] >= FIT_ID and two["OOD"] < REASONS_AT
                      and three["ID"] >= FIT_ID and three["OOD"] >= REASONS_AT,
                      {"phase 1 train − ID": one["train"] - one["ID"], "phase 1 ID": one["ID"], "phase 2 ID": two["ID"],
                       "phase 2 OOD": two["OOD"], "phase 3 ID": three["ID"], "phase 3 OOD": three["OOD"]}),
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
            "图13.10": (one["grouped"] < PHASE_ONE_GROUPED_BELOW
                       and two["mean_abs_cos"] - one["mean_abs_cos"] >= SLIGHT_COS_GAIN
                       and three["grouped"] - two["grouped"] >= PHASE_THREE_GROUPED_GAIN,
                       {"phase 1 grouped": one["grouped"], "cos 2 − 1": two["mean_abs_cos"] - one["mean_abs_cos"],
                        "grouped 3 − 2": three["grouped"] - two["grouped"]}),
            "图13.12": (order_three >= ORDER_RATIO > max(one["embedding_order"], two["embedding_order"]),
                       {"phase 3": order_three, "phase 1": one["embedding_order"], "phase 2": two["embedding_order"]}),
        }
        for figure, (holds, values) in statements.items():
            out.append({"point": point, "figure": figure, "holds": bool(holds),
                        "values": {k: round(v, 3) for k, v in values.items()}, "phases": cell_phases})
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m companion.experiments.ch13_scale_figures",
                                     description="read 图13.5, 13.8, 13.9, 13.10 and 13.12 at every point of chapter "
                                                 "13's scale curve (or at the book's training length) and write it to "
                                                 "the committed file")
    parser.add_argument("--seed", type=int, nargs="+", default=[110],
                        help="data seeds 3·seed … 3·seed + 2, for each seed given (default 110)")
    parser.add_argument("--points", choices=("curve", "long"), default="curve",
                        help="the scale curve's seven sizes (default), or the quick size trained for the book's 210 "
                             "epochs (LONG_POINTS)")
    parser.add_argument("--out", type=Path, default=None,
                        help=f"where to write the measurement (JSON; default {FIGURES_FILE.name}, with --points long "
                             f"{LONG_FILE.name}, beside this module)")
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
    points, out = (POINTS, args.out or FIGURES_FILE) if args.points == "curve" else (LONG_POINTS, args.out or LONG_FILE)
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
