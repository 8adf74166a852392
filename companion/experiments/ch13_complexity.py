"""Chapter 13, complexity control (复杂度控制): the composite task over γ and λ, the claims, the explorer.

The composite anchor function (12.5) in the key-first form of §13.2 (:func:`composition_data`, built on
:func:`companion.core.anchor_tasks.composite_task`) is trained for every (γ, λ, data seed) as one member
of one batched ensemble (:func:`run_composition`): γ is the initialisation rate (every weight
~ N(0, (d_in^{−γ})²), §13.2.3), λ the AdamW weight decay (§13.2.6).  The ``check_…`` functions state
图13.5/13.6 (phases, the weak/strong contrast), §13.3 (commutativity), 图13.10 (condensation of W^{Q(1)})
and 图13.12 (ordered number embeddings) as claims; the measures are :mod:`companion.core.attention`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import spearmanr

from companion.core.anchor_tasks import TaskData, TrainedMembers, composite_task, train_on_tasks
from companion.core.attention import commutativity, condensation, explained_variance, sorted_neuron_cosine
from companion.core.transformer import Transformer
from companion.kit.cache import cached
from companion.kit.claims import ClaimSpec, Verdict, compare, threshold
from companion.kit.seeds import active_seed

# ------------------------------------------------------------------------------ runs
@dataclass
class CompositionRun(TrainedMembers):
    """Result of :func:`run_composition` (a picklable record): one member per (γ, λ, seed) setting; its
    ``history`` has the series "train/ID/OOD accuracy" (R, K), read as ``accuracy["train"|"ID"|"OOD"]``."""

    settings: tuple[tuple[float, float, int], ...]  # (γ, λ, data seed) of each member
    commutativity: np.ndarray  # (K,) on the OOD pairs
    n_train: int = 20000
    n_test: int = 1000

    def model(self) -> Transformer:
        """The trained ensemble; member k has the setting ``settings[k]``."""
        model = Transformer(self.cfg, n_members=len(self.settings), gamma=[s[0] for s in self.settings])
        model.load_state_dict(self.state)
        return model.eval()

    def data(self, seed: int) -> TaskData:
        """The composite-task data of one seed (regenerated)."""
        return composition_data(self.n_train, self.n_test, seed)

    def members(self, gamma: float, lam: float) -> list[int]:
        """Indices of the members trained with (γ, λ), over all seeds."""
        found = [k for k, (g, l, _) in enumerate(self.settings) if abs(g - gamma) < 1e-9 and abs(l - lam) < 1e-9]
        if not found:
            raise ValueError(f"no member with gamma={gamma}, lambda={lam}; settings are {self.settings}")
        return found

    def final(self, split: str, gamma: float, lam: float) -> float:
        """Final accuracy on ``split`` ("train", "ID", "OOD") averaged over the seeds of (γ, λ)."""
        return float(self.accuracy[split][-1, self.members(gamma, lam)].mean())


def composition_data(n_train: int, n_test: int, seed: int) -> TaskData:
    """The composite task of §13.2 at CPU scale: sequence length 6, key position 0–3, residues mod 4."""
    return composite_task(n_train, n_test, n_test, seq_len=6, residue_mod=4, seed=seed)


def _run_composition(settings: tuple[tuple[float, float, int], ...], n_train: int, n_test: int, d_model: int,
                     n_layers: int, steps: int, lr: float, batch_size: int, record_every: int) -> CompositionRun:
    if not settings:
        raise ValueError("give at least one (gamma, lambda, seed) setting")
    by_seed = {s: composition_data(n_train, n_test, s) for s in sorted({s for _, _, s in settings})}
    data = [by_seed[s] for _, _, s in settings]
    model, history = train_on_tasks(data, gamma=[g for g, _, _ in settings], weight_decay=[l for _, l, _ in settings],
                                    d_model=d_model, n_layers=n_layers, n_heads=1, steps=steps, lr=lr,
                                    batch_size=batch_size, record_every=record_every, n_eval=n_test,
                                    seed=1_000 + settings[0][2], desc="composite task")
    comm = np.array([commutativity(model, d.tests["OOD"])[k] for k, d in enumerate(data)])
    return CompositionRun(history, model.cfg, model.state_dict(), tuple(settings), comm, n_train, n_test)


def run_composition(settings: Sequence[tuple[float, float, int]], *, n_train: int = 20000, n_test: int = 1000,
                    d_model: int = 32, n_layers: int = 2, steps: int = 1000, lr: float = 1e-2,
                    batch_size: int = 128, record_every: int = 100) -> CompositionRun:
    """Train the composite task for every (γ, λ, seed) in ``settings`` as one batched ensemble (cached).

    γ is the initialisation rate (std = d_in^{−γ}), λ the AdamW weight decay; each seed has its own data.
    """
    settings = tuple((float(g), float(l), int(s)) for g, l, s in settings)
    return cached(_run_composition)(settings, n_train, n_test, d_model, n_layers, steps, lr, batch_size,
                                    record_every)


# ------------------------------------------------------------------------------ claims
WEAK_CONTROL, STRONG_CONTROL = (0.8, 0.01), (1.4, 0.1)  # (γ, λ) of weak / strong complexity control
PHASE_ONE = ClaimSpec("ch13.phase-one", "图13.5",
                      "phase 1, at this scale slow fitting: with a large initialisation (γ = 0.2, λ = 0.01) the model "
                      "has fit neither its training set nor the ID test (both < 0.7) within 1000 steps, and it lags "
                      "behind γ = 0.8 on its training set")
COMPLEXITY_CONTROL = ClaimSpec("ch13.complexity-control", "图13.5/13.6",
                               "complexity control decides the solution: with weak control (γ = 0.8, λ = 0.01) the "
                               "model fits ID (≥ 0.95) but not the unseen pairs, and strong control (γ = 1.4, λ = 0.1) "
                               "raises the OOD accuracy by at least 0.3 (means over the data seeds)")
REASONING_LEVEL = ClaimSpec("ch13.reasoning-level", "图13.5/13.6",
                            "strong complexity control (γ = 1.4, λ = 0.1) solves most unseen pairs: mean OOD accuracy "
                            "≥ 0.5 over the data seeds", exploration=True)
COMMUTATIVITY = ClaimSpec("ch13.commutativity", "§13.3",
                          "with weak control (γ = 0.8, λ = 0.01) the model fits ID (≥ 0.95) and answers (c, d) and "
                          "(d, c) alike on ≥ 80% of the unseen sequences, far more often (by ≥ 0.5) than it answers "
                          "them correctly (means over the data seeds)")
WQ_CONDENSATION = ClaimSpec("ch13.wq-condensation", "图13.10",
                            "condensation of the first-layer query neurons grows with γ: rank correlation ≥ 0.7 over "
                            "the γ × λ grid, and γ = 1.4 at least twice as condensed as γ = 0.2 (both λ)")
EMBEDDING_ORDER = ClaimSpec("ch13.embedding-order", "图13.12",
                            "the number embeddings become low-dimensional as γ grows: the rank correlation between γ "
                            "and the top-2 PCA variance is ≥ 0.7 over the γ × λ grid")
EMBEDDING_CONTRAST = ClaimSpec("ch13.embedding-contrast", "图13.12",
                               "the top-2 PCA variance of the number embeddings at γ = 1.4 is at least twice that at "
                               "γ = 0.5 (mean over both λ)", exploration=True)


def rank_correlation(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman's ρ with tied values given their average rank (γ repeats once per λ in the grid)."""
    return float(spearmanr(np.asarray(a, dtype=float), np.asarray(b, dtype=float)).statistic)


def grid_measure(run: CompositionRun, measure: str) -> dict[tuple[float, float], float]:
    """Per (γ, λ) cell of ``run``, the mean over its members of ``measure``:

    ``"wq_condensation"`` — mean |cos| between the first-layer query neurons (图13.10);
    ``"embedding_variance"`` — the top-2 PCA variance share of the number-token embeddings 20–99 (图13.12).
    """
    model = run.model()
    fns = {"wq_condensation": lambda k: condensation(model.member_weight("w_q", k, layer=0).numpy()),
           "embedding_variance": lambda k: explained_variance(model.member_weight("w_em", k)[20:100].numpy())}
    if measure not in fns:
        raise ValueError(f"unknown measure {measure!r}; choose one of {', '.join(fns)}")
    cells = list(dict.fromkeys((g, l) for g, l, _ in run.settings))
    return {c: float(np.mean([fns[measure](k) for k in run.members(*c)])) for c in cells}


def _over_lambda(values: dict[tuple[float, float], float], gamma: float) -> float:
    found = [v for (g, _), v in values.items() if abs(g - gamma) < 1e-9]
    if not found:
        raise ValueError(f"no cell with gamma={gamma}; cells are {sorted(values)}")
    return float(np.mean(found))


def check_phase_one(run: CompositionRun, large: tuple[float, float] = (0.2, 0.01),
                    reference: tuple[float, float] = (0.8, 0.01)) -> Verdict:
    """图13.5, phase 1 as it appears at CPU scale: the large-initialisation model has not fit its training
    set within the budget (train and ID < 0.7), and fits it more slowly than γ = 0.8."""
    train, id_acc, ref = run.final("train", *large), run.final("ID", *large), run.final("train", *reference)
    return PHASE_ONE.judge(threshold("train accuracy, γ=0.2", train, "<", 0.7),
                           threshold("ID accuracy, γ=0.2", id_acc, "<", 0.7),
                           compare("train accuracy, γ=0.2", train, "<", "train accuracy, γ=0.8", ref),
                           OOD_accuracy=run.final("OOD", *large))


def check_complexity_control(contrast: CompositionRun, weak: tuple[float, float] = WEAK_CONTROL,
                             strong: tuple[float, float] = STRONG_CONTROL) -> Verdict:
    """图13.5/13.6: weak control fits ID (error ≤ 0.05); strong control's mean OOD exceeds weak's by ≥ 0.3."""
    id_weak, ood_weak = contrast.final("ID", *weak), contrast.final("OOD", *weak)
    ood_strong = contrast.final("OOD", *strong)
    return COMPLEXITY_CONTROL.judge(threshold("ID error, weak", 1 - id_weak, "<=", 0.05),
                                    threshold("OOD strong − OOD weak", ood_strong - ood_weak, ">=", 0.3),
                                    ood_weak=ood_weak, ood_strong=ood_strong, id_strong=contrast.final("ID", *strong))


def check_reasoning_level(contrast: CompositionRun, strong: tuple[float, float] = STRONG_CONTROL) -> Verdict:
    """Exploration: the level strong control reaches, mean OOD ≥ 0.5 (single runs vary 0.2–0.9)."""
    ood = contrast.accuracy["OOD"][-1, contrast.members(*strong)]
    return REASONING_LEVEL.judge(threshold("mean OOD accuracy, strong", float(ood.mean()), ">=", 0.5),
                                 single_runs=np.round(ood, 2))


def check_commutativity(contrast: CompositionRun, weak: tuple[float, float] = WEAK_CONTROL) -> Verdict:
    """§13.3: weak control fits ID and answers (c, d), (d, c) alike (≥ 0.8), by ≥ 0.5 more often than right."""
    id_weak, ood_weak = contrast.final("ID", *weak), contrast.final("OOD", *weak)
    comm = float(contrast.commutativity[contrast.members(*weak)].mean())
    return COMMUTATIVITY.judge(threshold("ID error, weak", 1 - id_weak, "<=", 0.05),
                               threshold("commutativity", comm, ">=", 0.8),
                               threshold("commutativity − OOD accuracy", comm - ood_weak, ">=", 0.5),
                               ood_accuracy=ood_weak)


def check_wq_condensation(run: CompositionRun) -> Verdict:
    """图13.10: Spearman ρ(γ, mean |cos| of W_Q(1) neurons) ≥ 0.7 over the grid; γ = 1.4 ≥ 2 × γ = 0.2."""
    cond = grid_measure(run, "wq_condensation")
    rho = rank_correlation([g for g, _ in cond], list(cond.values()))
    low, high = _over_lambda(cond, 0.2), _over_lambda(cond, 1.4)
    return WQ_CONDENSATION.judge(threshold("Spearman ρ(γ, |cos|)", rho, ">=", 0.7),
                                 threshold("|cos|(γ=1.4) / |cos|(γ=0.2)", high / low, ">=", 2.0),
                                 cos_02=low, cos_14=high)


def check_embedding_order(run: CompositionRun) -> Verdict:
    """图13.12: Spearman ρ(γ, top-2 PCA variance of the number embeddings) ≥ 0.7 over the grid."""
    var = grid_measure(run, "embedding_variance")
    rho = rank_correlation([g for g, _ in var], list(var.values()))
    return EMBEDDING_ORDER.judge(threshold("Spearman ρ(γ, top-2 variance)", rho, ">=", 0.7),
                                 variance_05=_over_lambda(var, 0.5), variance_14=_over_lambda(var, 1.4))


def check_embedding_contrast(run: CompositionRun) -> Verdict:
    """Exploration (图13.12): top-2 PCA variance at γ = 1.4 ≥ 2 × that at γ = 0.5 (mean over λ)."""
    var = grid_measure(run, "embedding_variance")
    low, high = _over_lambda(var, 0.5), _over_lambda(var, 1.4)
    return EMBEDDING_CONTRAST.judge(threshold("variance(γ=1.4) / variance(γ=0.5)", high / low, ">=", 2.0),
                                    variance_05=low, variance_14=high)


# ------------------------------------------------------------------------------ explorer
def _explore_composition(gamma: float, lam: float, depth: int, steps: int, seed: int) -> dict:
    run = run_composition([(gamma, lam, seed)], n_layers=depth, steps=steps, record_every=max(10, steps // 10))
    w_q = run.model().member_weight("w_q", 0, layer=0).numpy()
    return {"steps": run.steps, "ID": run.accuracy["ID"][:, 0], "OOD": run.accuracy["OOD"][:, 0],
            "commutativity": float(run.commutativity[0]), "condensation": condensation(w_q),
            "cosine": sorted_neuron_cosine(w_q)}


def make_explorer(seed: int | None = None):
    """Explorer for chapter 13: γ, λ, depth → ID/OOD accuracy, commutativity and W^{Q(1)} condensation.

    Trains from data seed ``seed`` (default: the active seed, ``COMPANION_SEED``).
    """
    from companion.kit import widgets as W

    seed = active_seed() if seed is None else seed

    def draw(result: dict, fig) -> None:
        ax1, ax2 = fig.subplots(1, 2)
        ax1.plot(result["steps"], result["ID"], label="ID")
        ax1.plot(result["steps"], result["OOD"], "--", label="OOD (unseen pairs)")
        ax1.set(xlabel="step", ylabel="accuracy", ylim=(-0.03, 1.03),
                title=f"commutativity on OOD pairs {result['commutativity']:.2f}")
        ax1.legend()
        ax2.imshow(result["cosine"], cmap="RdBu_r", vmin=-1, vmax=1)
        ax2.set(title=f"cos of W_Q(1) neurons, mean |cos| {result['condensation']:.2f}", xlabel="neuron",
                ylabel="neuron")
        ax2.grid(False)

    controls = {"gamma": W.float_slider(1.4, 0.1, 1.6, 0.1, "init rate γ"),
                "lam": W.log_slider(0.1, 0.001, 1.0, "weight decay λ"),
                "depth": W.int_slider(2, 1, 4, "layers"),
                "steps": W.int_slider(600, 200, 1500, "steps", step=100)}
    return W.Explorer("Complexity control on the composite task", controls,
                      lambda **v: _explore_composition(seed=seed, **v), draw, figsize=(10.0, 3.6))
