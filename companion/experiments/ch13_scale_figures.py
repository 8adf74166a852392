"""Chapter 13's scale curve, figure by figure: what 图13.8, 13.9, 13.10 and 13.12 state, read at every point of the
curve.

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
chapter's claims and explorations on the means over the data seeds; the book's phases are the chapter's cells —
phase 1 γ = 0.2 at λ = 0.01, phase 2 weak control (γ 0.8, λ 0.01), phase 3 strong control (γ 1.4, λ 0.1) — and
the phase of each cell's means at the point (:func:`~companion.experiments.ch13_scale.summary`) is shown beside.

The measurement is committed (``measured/ch13_scale_figures.json``, :func:`read_figures`); ``python -m
companion.experiments.ch13_scale_figures --seed 110 --flush-denormal`` measures it again (about 70 CPU-minutes with an
empty cache; the curve's own runs are read from the cache when it holds them).  It was made on an Intel Xeon
(2026-12-06), the curve on another machine (2026-12-01): training the same point there gives other single models —
each cell's means agree within the spread of its data seeds — so the file carries the curve's measures of its own
models beside the figures' (the phases it reads are its own).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Sequence
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
PHASE_ONE = (0.2, SWEEP_LAMBDA)  # the chapter's phase-1 cell (图13.5's largest initialisation)
LARGER_INIT_PHASE_TWO = (0.5, SWEEP_LAMBDA)  # 图13.6/13.8's phase-2 model at a larger initialisation
MERGED_AT_MOST = 0.5  # ch13.symmetric-merge: (c, d) and (d, c) one cluster; ch13.phase-two-contrast: apart above it
POOR_COMMUTATIVITY = 0.7  # 图13.6's green triangles
BLOCKS_GAIN = 0.25  # ch13.first-anchor-blocks: within − across, and strong − weak within, at least this
MEASURES = ("merge_cd_dc", "map_clusters", "blocks_within", "blocks_across", "embedding_order", "embedding_variance")


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


def figure_statements(rows: Sequence[dict]) -> list[dict]:
    """Per point (in :func:`~companion.experiments.ch13_scale.summary`'s order) and figure, the figure's statement on
    the means over the data seeds: ``holds`` and the values it reads (``values``), with each chapter cell's phase.

    * 图13.8 (clusters, left against middle panel): phase 2's outputs sort into one cluster per composite map
      (≥ :data:`~companion.experiments.ch13_complexity.MAP_CLUSTERS_AT_LEAST`), phase 1's do not;
    * 图13.8 (symmetric pairs, middle against right panel): the larger-initialisation phase-2 model (γ 0.5) is
      not commutative (< 0.7) and keeps (c, d) and (d, c) apart (merge ratio > 0.5); strong control merges them
      (≤ 0.5);
    * 图13.9: strong control's outputs sharing g(x; a1) are alike (within − across ≥ 0.25) and by ≥ 0.25 more alike
      than weak control's;
    * 图13.10: phase 1 uncondensed (< 10 % grouped), phase 2 slightly (mean |cos| ≥ 0.05 above phase 1), phase 3
      strongly (grouped share ≥ 0.2 above phase 2);
    * 图13.12: phase 3's number embeddings ordered (random / 5-NN value gap ≥ 3 at γ 1.4 with λ 0.01 and 0.1), phase
      1's and phase 2's not (< 3).
    """
    means, table = _means(rows), summary(rows)
    phases = {(s["point"], s["gamma"], s["lam"]): s["phase"] for s in table}
    out = []
    for point in dict.fromkeys(s["point"] for s in table):
        m = means[point]
        one, two, three, larger = m[PHASE_ONE], m[WEAK_CONTROL], m[STRONG_CONTROL], m[LARGER_INIT_PHASE_TWO]
        high = m[(STRONG_CONTROL[0], SWEEP_LAMBDA)]
        cell_phases = {name: phases[(point, *cell)] for name, cell in
                       (("γ 0.2", PHASE_ONE), ("γ 0.5", LARGER_INIT_PHASE_TWO), ("weak", WEAK_CONTROL),
                        ("strong", STRONG_CONTROL))}
        statements = {
            "图13.8 clusters": (two["map_clusters"] >= MAP_CLUSTERS_AT_LEAST > one["map_clusters"],
                               {"phase 2": two["map_clusters"], "phase 1": one["map_clusters"]}),
            "图13.8 symmetric pairs": (larger["commutativity"] < POOR_COMMUTATIVITY
                                       and larger["merge_cd_dc"] > MERGED_AT_MOST >= three["merge_cd_dc"],
                                       {"γ 0.5 commutativity": larger["commutativity"],
                                        "γ 0.5 merge": larger["merge_cd_dc"], "strong merge": three["merge_cd_dc"]}),
            "图13.9": (three["blocks_within"] - three["blocks_across"] >= BLOCKS_GAIN
                      and three["blocks_within"] - two["blocks_within"] >= BLOCKS_GAIN,
                      {"strong within − across": three["blocks_within"] - three["blocks_across"],
                       "within strong − weak": three["blocks_within"] - two["blocks_within"]}),
            "图13.10": (one["grouped"] < PHASE_ONE_GROUPED_BELOW
                       and two["mean_abs_cos"] - one["mean_abs_cos"] >= SLIGHT_COS_GAIN
                       and three["grouped"] - two["grouped"] >= PHASE_THREE_GROUPED_GAIN,
                       {"phase 1 grouped": one["grouped"], "cos 2 − 1": two["mean_abs_cos"] - one["mean_abs_cos"],
                        "grouped 3 − 2": three["grouped"] - two["grouped"]}),
            "图13.12": (min(high["embedding_order"], three["embedding_order"]) >= ORDER_RATIO
                       > max(one["embedding_order"], two["embedding_order"]),
                       {"phase 3 (γ 1.4, λ 0.01 / 0.1)": min(high["embedding_order"], three["embedding_order"]),
                        "phase 1": one["embedding_order"], "phase 2": two["embedding_order"]}),
        }
        for figure, (holds, values) in statements.items():
            out.append({"point": point, "figure": figure, "holds": bool(holds),
                        "values": {k: round(v, 3) for k, v in values.items()}, "phases": cell_phases})
    return out


def markdown_table(rows: Sequence[dict]) -> str:
    """:func:`figure_statements` as a table: one row per figure (the values it reads named after it), one column per
    point (✔/✘ and the values), and a last row with the phase of each chapter cell's means at the point."""
    statements = figure_statements(rows)
    points = list(dict.fromkeys(s["point"] for s in statements))
    figures = list(dict.fromkeys(s["figure"] for s in statements))
    cell = {(s["point"], s["figure"]): s for s in statements}
    lines = ["| figure | " + " | ".join(p.label for p in points) + " |", "|---|" + "---|" * len(points)]
    for f in figures:
        read = " / ".join(cell[points[0], f]["values"])
        lines.append(f"| {f} ({read}) | " + " | ".join(
            ("✔ " if cell[p, f]["holds"] else "✘ ") + ", ".join(f"{v:g}" for v in cell[p, f]["values"].values())
            for p in points) + " |")
    lines.append("| phases (γ 0.2, γ 0.5, weak, strong) | " + " | ".join(
        ", ".join(str(v) for v in cell[p, figures[0]]["phases"].values()) for p in points) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m companion.experiments.ch13_scale_figures",
                                     description="read 图13.8, 13.9, 13.10 and 13.12 at every point of chapter 13's "
                                                 "scale curve and write it to the committed file")
    parser.add_argument("--seed", type=int, default=110, help="data seeds 3·seed … 3·seed + 2 (default 110)")
    parser.add_argument("--out", type=Path, default=FIGURES_FILE, help="where to write the measurement (JSON)")
    parser.add_argument("--flush-denormal", action="store_true",
                        help="flush subnormal floats to zero while training (torch.set_flush_denormal): on an Intel "
                             "Xeon a d_model-128 point slowed from 0.4 to 1.6 s a step by step 900 without it; the "
                             "numbers do not move (d_model 32: every member the same with and without); the file "
                             "records the choice")
    args = parser.parse_args(argv)
    if args.seed < 0:
        print(f"--seed must be a non-negative integer, got {args.seed}", file=sys.stderr)
        return 2
    if args.flush_denormal and not torch.set_flush_denormal(True):
        print("--flush-denormal: this CPU cannot flush subnormal floats (torch needs SSE3)", file=sys.stderr)
        return 2
    rows = measure_figures(args.seed)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"seed": args.seed, "data_seeds": [3 * args.seed + i for i in range(3)],
                                    "flush_denormal": args.flush_denormal, "rows": rows}, indent=1) + "\n")
    print(markdown_table(rows))
    print(f"wrote {len(rows)} rows to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
