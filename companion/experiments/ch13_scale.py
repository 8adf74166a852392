"""Chapter 13's scale curve: where the phases of 图13.5/13.6 and the condensation of 图13.10 stand as the model, its
training and its data grow from the notebook's quick size towards the book's.

The book's phases come from GPT-2-sized models (the authors' runs: d_model 400, 810 000 training sequences, 210
epochs at a peak learning rate of 2·10⁻⁴); the notebook's quick profile trains d_model 32 on 20 000 sequences for
1000–1500 steps.  Each :class:`ScalePoint` of :data:`POINTS` trains the chapter's 2-layer, 1-head model on the same
composite task (:func:`~companion.experiments.ch13_complexity.run_composition`: one batched, cached run per point)
over 图13.5's γ sweep at λ = 0.01 and two strongly controlled settings at λ = 0.1, on three data seeds, and reads from
every member what the figures state: training, ID and OOD accuracy (图13.5, 13.6), the commutativity on the unseen
pairs (图13.6's green triangles: < 0.7) and the condensation of the first-layer query neurons W^{Q(1)} (图13.10: share
grouped by cosine > 0.7, mean |cos|).

The measured curve is committed (``measured/ch13_scale_curve.json``, :func:`read_curve`): about 70 CPU-minutes
(35 minutes on two cores).  ``python -m companion.experiments.ch13_scale --seed 110`` measures it again (the data seeds
3·seed … 3·seed + 2, as the notebook's ``COMPANION_SEED``); every point is cached as it finishes, so an interrupted
measurement resumes where it stopped.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from matplotlib.lines import Line2D

from companion.core.attention import condensation, grouped_share
from companion.core.transformer import Transformer
from companion.experiments.ch13_complexity import STRONG_CONTROL, CompositionRun, run_composition

CURVE_FILE = Path(__file__).with_name("measured") / "ch13_scale_curve.json"
SWEEP_GAMMAS = (0.2, 0.5, 0.8, 1.1, 1.4)  # 图13.5's axis at λ = 0.01 (the book: 0.1–0.8; ours is shifted, section 2)
SWEEP_LAMBDA = 0.01  # the book's λ of 图13.5
CONTROLLED = ((1.1, 0.1), STRONG_CONTROL)  # two strongly controlled settings (λ = 0.1) beside the sweep
GOOD = 0.9  # the book's line between good and poor ID generalisation (图13.6: hatched where ID < 90 %)
POOR_COMMUTATIVITY = 0.7  # 图13.6's green triangles: commutativity < 70 %


@dataclass(frozen=True)
class ScalePoint:
    """One size of the curve: model width, training steps, peak learning rate and training sequences (batch 128,
    2 layers, 1 head, d_ff = 4·d_model, as the notebook's runs)."""

    d_model: int
    steps: int
    lr: float
    n_train: int

    @property
    def label(self) -> str:
        return f"d{self.d_model}, {self.steps} steps, {self.n_train // 1000}k seq."


POINTS = (  # model and steps grow along the first four (20 000 sequences), and again with four times the data
    ScalePoint(32, 1500, 1e-2, 20000),  # the notebook's contrast run (quick profile)
    ScalePoint(48, 2000, 5e-3, 20000),
    ScalePoint(64, 3000, 3e-3, 20000),  # the notebook's full profile
    ScalePoint(128, 4000, 2e-3, 20000),
    ScalePoint(32, 1500, 1e-2, 80000),
    ScalePoint(64, 3000, 3e-3, 80000),
    ScalePoint(128, 4000, 2e-3, 80000),
)


def cells() -> list[tuple[float, float]]:
    """The (γ, λ) of every point: 图13.5's sweep at λ = 0.01, then the strongly controlled settings."""
    return [(g, SWEEP_LAMBDA) for g in SWEEP_GAMMAS] + list(CONTROLLED)


def measure_point(point: ScalePoint, data_seeds: Sequence[int]) -> list[dict]:
    """Train (or read from the cache) the point's batched run and return one row per member: its setting and what
    图13.5/13.6/13.10 read (accuracies, commutativity, W^{Q(1)} condensation)."""
    run = run_composition([(g, l, s) for s in data_seeds for g, l in cells()], n_train=point.n_train, n_test=1000,
                          d_model=point.d_model, n_layers=2, steps=point.steps, lr=point.lr, batch_size=128,
                          record_every=max(point.steps // 5, 1))
    model = run.model()
    return [{**asdict(point), **member_row(run, model, k), "cpu_seconds_of_point": round(run.seconds)}
            for k in range(len(run.settings))]


def member_row(run: CompositionRun, model: Transformer, k: int) -> dict:
    """Member ``k`` of ``run`` (``model`` is ``run.model()``): its setting and what 图13.5/13.6/13.10 read — training,
    ID and OOD accuracy, commutativity on the unseen pairs, and the share of its W^{Q(1)} neurons grouped (cosine > 0.7
    with another) and their mean |cos|."""
    g, l, s = run.settings[k]
    w_q = model.member_weight("w_q", k, layer=0).numpy()
    return {"gamma": g, "lam": l, "data_seed": s,
            **{split: round(float(run.accuracy[split][-1, k]), 4) for split in ("train", "ID", "OOD")},
            "commutativity": round(float(run.commutativity[k]), 4),
            "grouped": round(grouped_share(w_q), 4), "mean_abs_cos": round(condensation(w_q), 4)}


def measure_curve(seed: int, points: Sequence[ScalePoint] = POINTS) -> list[dict]:
    """Every point of the curve on the data seeds 3·``seed`` … 3·``seed`` + 2, smallest first (each point cached)."""
    rows = []
    for n, point in enumerate(points, 1):
        print(f"point {n}/{len(points)}: {point.label}", flush=True)
        rows += measure_point(point, (3 * seed, 3 * seed + 1, 3 * seed + 2))
    return rows


def read_curve(path: Path = CURVE_FILE) -> list[dict]:
    """The committed scale curve: one row per (point, γ, λ, data seed)."""
    return json.loads(path.read_text())["rows"]


def summary(rows: Sequence[dict]) -> list[dict]:
    """Per point and (γ, λ): the means over the data seeds, the training − ID accuracy of the means ("memorised"),
    the range of the OOD accuracy, and the book's phase of the mean (1: poor ID, ID < 0.9; 2: good ID, OOD < 0.5; 3: good ID and OOD ≥ 0.5)."""
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        groups[ScalePoint(r["d_model"], r["steps"], r["lr"], r["n_train"]), r["gamma"], r["lam"]].append(r)
    out = []
    for point, g, l in sorted(groups, key=lambda key: (key[0].n_train, key[0].d_model, key[2], key[1])):
        group = groups[point, g, l]
        mean = {m: float(np.mean([r[m] for r in group]))
                for m in ("train", "ID", "OOD", "commutativity", "grouped", "mean_abs_cos")}
        phase = 1 if mean["ID"] < GOOD else (3 if mean["OOD"] >= 0.5 else 2)
        out.append({"point": point, "gamma": g, "lam": l, **mean, "memorised": mean["train"] - mean["ID"],
                    "phase": phase, "OOD_range": (min(r["OOD"] for r in group), max(r["OOD"] for r in group))})
    return out


def plot_curve(axes: Sequence, rows: Sequence[dict]) -> None:
    """One 图13.5-style panel per point on ``axes`` (matplotlib Axes, one per point of ``rows``, in :func:`summary`'s
    order): the mean ID (blue) and OOD (red, the band its range over the data seeds) accuracy over γ at λ = 0.01, the
    strongly controlled settings' OOD accuracy at λ = 0.1 (hollow diamonds), the book's phase of each γ under the
    axis, and a green triangle over every setting whose commutativity is below 0.7 (图13.6's mark)."""
    table = summary(rows)
    points = list(dict.fromkeys(s["point"] for s in table))
    for ax, point in zip(axes, points):
        sweep = [s for s in table if s["point"] == point and s["lam"] == SWEEP_LAMBDA]
        controlled = [s for s in table if s["point"] == point and s["lam"] != SWEEP_LAMBDA]
        g = [s["gamma"] for s in sweep]
        ax.plot(g, [s["ID"] for s in sweep], "o-", color="#1f77b4", label="ID, λ = 0.01")
        ax.plot(g, [s["OOD"] for s in sweep], "s-", color="#d62728", label="OOD, λ = 0.01")
        ax.fill_between(g, [s["OOD_range"][0] for s in sweep], [s["OOD_range"][1] for s in sweep], color="#d62728",
                        alpha=0.15, lw=0)
        ax.plot([s["gamma"] for s in controlled], [s["OOD"] for s in controlled], "D", mfc="none", color="#d62728",
                label="OOD, λ = 0.1")
        poor = [s for s in sweep + controlled if s["commutativity"] < POOR_COMMUTATIVITY]
        ax.plot([s["gamma"] + (0.04 if s["lam"] != SWEEP_LAMBDA else 0) for s in poor], [1.06] * len(poor), "^",
                color="#2ca02c", label="commutativity < 0.7")
        for s in sweep:
            ax.text(s["gamma"], -0.12, str(s["phase"]), ha="center", va="center", fontsize=8, color="0.3")
        ax.set(title=point.label, xlabel="γ (phase below)", ylim=(-0.2, 1.12), xticks=SWEEP_GAMMAS)
    axes[0].set_ylabel("accuracy")
    axes[0].figure.legend(*axes[0].get_legend_handles_labels(), loc="lower right", fontsize=7,
                          title=f"means of {len({r['data_seed'] for r in rows})} seeds", title_fontsize=7)


TREND_SETTINGS = {(1.4, SWEEP_LAMBDA): "#d62728", STRONG_CONTROL: "#9467bd", (0.8, SWEEP_LAMBDA): "0.45",
                  (0.2, SWEEP_LAMBDA): "#8c564b"}  # the phase-3 side, strong control, phase 2, phase 1: their colours


def plot_trends(axes: Sequence, rows: Sequence[dict]) -> None:
    """The curve itself on three ``axes``, against d_model (solid: 20 000 training sequences, dashed: 80 000), means
    over the data seeds: the OOD accuracy of γ = 1.4 at λ = 0.01 (the phase-3 side), of strong control and of the
    phase-2 γ = 0.8 (图13.5's levels); the training − ID accuracy of the phase-1 γ = 0.2 (what it memorises); the
    share of W^{Q(1)} neurons grouped at γ = 1.4 and in phase 1 (图13.10)."""
    table = summary(rows)
    widths = sorted({s["point"].d_model for s in table})
    panels = (("OOD", "OOD accuracy", list(TREND_SETTINGS)[:3], (-0.03, 1.03)),
              ("memorised", "phase 1: training − ID accuracy", [(0.2, SWEEP_LAMBDA)], (-0.03, 0.5)),
              ("grouped", "grouped share of W_Q(1) neurons", [(1.4, SWEEP_LAMBDA), (0.2, SWEEP_LAMBDA)],
               (-0.03, 1.03)))
    styles = {20000: "-", 80000: "--"}
    for ax, (measure, ylabel, settings, ylim) in zip(axes, panels):
        for cell in settings:
            for n_train, style in styles.items():
                line = sorted((s["point"].d_model, s[measure]) for s in table if (s["gamma"], s["lam"]) == cell and s["point"].n_train == n_train)
                if line:
                    ax.plot(*zip(*line), style, marker="o", color=TREND_SETTINGS[cell])
        handles = [Line2D([], [], color=TREND_SETTINGS[c], marker="o", label=f"γ = {c[0]}, λ = {c[1]}")
                   for c in settings]
        handles += [Line2D([], [], color="0.3", ls=style, label=f"{n // 1000}k seq.") for n, style in styles.items()]
        ax.legend(handles=handles, fontsize=6)
        ax.set(xscale="log", xlabel="d_model", ylabel=ylabel, ylim=ylim)
        ax.set_xticks(widths, [str(d) for d in widths])
        ax.minorticks_off()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m companion.experiments.ch13_scale",
                                     description="measure chapter 13's scale curve and write it to the committed file")
    parser.add_argument("--seed", type=int, default=110, help="data seeds 3·seed … 3·seed + 2 (default 110)")
    parser.add_argument("--out", type=Path, default=CURVE_FILE, help="where to write the curve (JSON)")
    args = parser.parse_args(argv)
    if args.seed < 0:
        print(f"--seed must be a non-negative integer, got {args.seed}", file=sys.stderr)
        return 2
    rows = measure_curve(args.seed)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"seed": args.seed, "data_seeds": [3 * args.seed + i for i in range(3)],
                                    "rows": rows}, indent=1) + "\n")
    print(f"wrote {len(rows)} rows to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
