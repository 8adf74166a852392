"""Chapter 13, part two: complexity control beyond anchor functions (§13.6) and the chapter's prediction (§13.7).

图13.14(C) trains a + b from scratch with a held-out square of operands, for a large initialisation with a small weight
decay and a small initialisation with a large one (:func:`run_addition`, :func:`check_addition`): each (γ, λ) is one
member of one batched ensemble of the chapter's 2-layer, 1-head decoder, γ the initialisation rate (every weight
~ N(0, (d_in^{−γ})²), §13.2.3) and λ the AdamW weight decay (§13.2.6).

图13.17 and 图13.19 (§13.7) train composite data (§13.2, :mod:`companion.experiments.ch13_complexity`) whose first
k symmetric anchor groups break the composition rule (:func:`rewired_data`: reasoning complexity k) and measure how
fast each setting fits its training data, overall and per anchor pair (:func:`run_fit_speed`;
:meth:`FitSpeedRun.mean_error`, the area above the training-accuracy curve: no step budget caps it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from companion.core.anchor_tasks import BOOK_SHIFTS, AnchorData, TaskData, TrainedMembers, addition_task, train_on_tasks
from companion.core.transformer import last_token_logits
from companion.experiments.ch13_complexity import ALL_PAIRS, members_with, pair_name
from companion.kit.cache import cached
from companion.kit.claims import REVALIDATION_SEEDS, ClaimSpec, Verdict, compare, threshold
from companion.kit.seeds import numpy_rng


# ------------------------------------------------------------------------------ 图13.14(C): addition from scratch
ADDITION_WEAK, ADDITION_STRONG = (0.3, 0.01), (1.0, 0.5)  # (γ, λ): large init, small decay / small init, large decay


@dataclass
class AdditionRun(TrainedMembers):
    """Result of :func:`run_addition` (a picklable record): one member per (γ, λ), all on the same data (the
    task of :func:`~companion.core.anchor_tasks.addition_task` for ``top``, ``held`` and ``seed``); its ``history``
    has "train/OOD accuracy" (R, K): the first 1000 training pairs and the whole held-out square."""

    settings: tuple[tuple[float, float], ...]  # (γ, λ) of each member
    top: int = 99
    held: tuple[int, int] = (40, 60)

    def member(self, gamma: float, lam: float) -> int:
        """Index of the member trained with (γ, λ)."""
        return members_with(self.settings, gamma, lam)[0]

    def final(self, split: str, gamma: float, lam: float) -> float:
        """Final accuracy on ``split`` ("train" or "OOD") of the member (γ, λ)."""
        return float(self.accuracy[split][-1, self.member(gamma, lam)])

    def sums(self) -> np.ndarray:
        """The answer of every member to every pair: (K, top + 1, top + 1), entry [k, a, b] (图13.14(C)'s maps)."""
        a, b = torch.meshgrid(torch.arange(self.top + 1), torch.arange(self.top + 1), indexing="ij")
        logits = last_token_logits(self.model(), torch.stack([a.ravel(), b.ravel()], 1))
        return logits.argmax(-1).reshape(-1, self.top + 1, self.top + 1).numpy()


def _run_addition(settings: tuple[tuple[float, float], ...], seed: int, top: int, held: tuple[int, int],
                  d_model: int, steps: int, lr: float, batch_size: int, record_every: int) -> AdditionRun:
    data = addition_task(top=top, held=held, seed=seed)
    model, history = train_on_tasks([data] * len(settings), gamma=[g for g, _ in settings],
                                    weight_decay=[l for _, l in settings], d_model=d_model, n_layers=2, n_heads=1,
                                    steps=steps, lr=lr, batch_size=batch_size, record_every=record_every, n_eval=1000,
                                    seed=2_000 + seed, desc="addition")
    return AdditionRun(history, model.cfg, model.state_dict(), settings, top, held)


def run_addition(settings: Sequence[tuple[float, float]] = (ADDITION_WEAK, ADDITION_STRONG), *, seed: int = 0,
                 top: int = 99, held: tuple[int, int] = (40, 60), d_model: int = 64, steps: int = 4000,
                 lr: float = 2e-2, batch_size: int = 256, record_every: int = 400) -> AdditionRun:
    """图13.14(C) from scratch: a 2-layer, 1-head decoder per (γ, λ) learns a + b on every pair outside the
    held-out square (one batched ensemble, cached).  γ is the initialisation rate (std = d_in^{−γ}), λ the AdamW
    weight decay; ``seed`` shuffles the training pairs and draws the initialisations and batches."""
    if not settings:
        raise ValueError("give at least one (gamma, lambda) setting")
    settings = tuple((float(g), float(l)) for g, l in settings)
    return cached(_run_addition)(settings, int(seed), int(top), (int(held[0]), int(held[1])), d_model, steps, lr,
                                 batch_size, record_every)


# Designed on seeds 110–131 (this pair on 120–131: the small-initialisation model's OOD accuracy 0.87–1.00 on 120–130
# and 0.24 on 131, a result read only after the settings were fixed), it held on 16 of 20 seeds of 0–19 and of
# 500–519: that model stays below 0.8 on one seed in five (0.10–0.76), so the claim is an exploration.
ADDITION_LEVEL, ADDITION_GAP = 0.8, 0.3
ADDITION = ClaimSpec("ch13b.addition", "图13.14(C)",
                     "a + b learned from scratch (numbers 0–99 as tokens, every pair with a, b ∈ [40, 60] held "
                     "out): a small initialisation with a large weight decay (γ = 1.0, λ = 0.5) learns the rule — "
                     "it answers ≥ 80 % of the held-out square — while a large initialisation with a small weight "
                     "decay (γ = 0.3, λ = 0.01) fits its training pairs (≥ 0.9) but answers the square at least 0.3 "
                     "less often", kind="exploration", validation_seeds=REVALIDATION_SEEDS)


def check_addition(run: AdditionRun, strong: tuple[float, float] = ADDITION_STRONG,
                   weak: tuple[float, float] = ADDITION_WEAK) -> Verdict:
    """图13.14(C): the small-initialisation, large-decay model generalises to the held-out square (OOD ≥ 0.8); the
    large-initialisation, small-decay model fits its training pairs (≥ 0.9) and is ≥ 0.3 worse on the square.
    An exploration: 16/20 on seeds 0–19 and on 500–519."""
    ood_strong, ood_weak = run.final("OOD", *strong), run.final("OOD", *weak)
    return ADDITION.judge(threshold("OOD accuracy, small init", ood_strong, ">=", ADDITION_LEVEL),
                          threshold("train accuracy, large init", run.final("train", *weak), ">=", 0.9),
                          threshold("OOD small init − OOD large init", ood_strong - ood_weak, ">=", ADDITION_GAP),
                          ood_large_init=ood_weak, train_small_init=run.final("train", *strong))


# ------------------------------------------------------------------------------ 图13.17, 图13.19: §13.7
REWIRE_ORDER = ((1, 2), (3, 4), (1, 3), (2, 4), (1, 4), (2, 3))  # symmetric groups, broken in this order
# the j-th broken group maps x ↦ x + shift(ai) + shift(aj) + REWIRE_OFFSETS[j], in both orders: one offset per group
REWIRE_OFFSETS = (30, 55, 15, 70, 40, 85)


def pair_shifts(complexity: int) -> dict[tuple[int, int], int]:
    """The shift of each ordered anchor pair when ``complexity`` symmetric groups break the composition rule.

    Reasoning complexity (推理复杂度, §13.7) is the number of such groups: the j-th group of :data:`REWIRE_ORDER`,
    for j < ``complexity``, has f(x; ai, aj) = f(x; aj, ai) = x + shift(ai) + shift(aj) + REWIRE_OFFSETS[j]
    ≠ g(g(x; ai); aj); every other pair keeps the composite g(g(x; ai); aj) = x + shift(ai) + shift(aj).

    Each group has its own offset, so that k broken groups are k exceptions to memorise.  With one offset for
    every group (+30, the design until 2026-12-04), the four groups broken at k = 4 — {a, b}, {c, d}, {a, c},
    {b, d} — are exactly the pairs that cross the partition {a, d} | {b, c}: one rule ("+30 across") covers them,
    and at the full profile the small initialisation fitted k = 4 as fast as k = 0.
    """
    if not 0 <= complexity <= len(REWIRE_ORDER):
        raise ValueError(f"complexity must lie in [0, {len(REWIRE_ORDER)}] (symmetric groups), got {complexity}")
    offset = {frozenset(p): REWIRE_OFFSETS[j] for j, p in enumerate(REWIRE_ORDER[:complexity])}
    return {p: BOOK_SHIFTS[p[0]] + BOOK_SHIFTS[p[1]] + offset.get(frozenset(p), 0) for p in ALL_PAIRS}


def rewired_data(n_train: int, complexity: int, seed: int, replica: int = 0, n_per_pair: int = 32,
                 seq_len: int = 6) -> TaskData:
    """Composite data of reasoning complexity ``complexity`` (§13.7): all 16 pairs, keys and noise in 20–99.

    The first 16·``n_per_pair`` training sequences hold ``n_per_pair`` of each pair: they are also the test sets
    named by the pair ("ab", …), so that the accuracy per pair on its own training data can be recorded (图13.19).
    Equal (seed, replica) give the same sequences at every complexity; only the targets of broken pairs differ.
    """
    if n_train < 16 * n_per_pair:
        raise ValueError(f"n_train must be ≥ 16·n_per_pair = {16 * n_per_pair}, got {n_train}")
    table = pair_shifts(complexity)
    rng = numpy_rng(seed, stream=100 + replica)
    which = rng.integers(0, len(ALL_PAIRS), size=n_train)
    which[:16 * n_per_pair] = np.repeat(np.arange(len(ALL_PAIRS)), n_per_pair)
    pairs = np.asarray(ALL_PAIRS)[which]  # (N, 2)
    keys = rng.integers(20, 100, size=n_train)
    key_pos = rng.integers(0, seq_len - 2, size=n_train)
    x = rng.integers(20, 100, size=(n_train, seq_len))
    rows = np.arange(n_train)
    x[rows, key_pos], x[rows, key_pos + 1], x[rows, key_pos + 2] = keys, pairs[:, 0], pairs[:, 1]
    y = (keys + np.array([table[tuple(p)] for p in pairs.tolist()])) % 100
    as_long = lambda a: torch.as_tensor(np.ascontiguousarray(a), dtype=torch.long)  # noqa: E731
    train = AnchorData(as_long(x), as_long(y), as_long(key_pos), as_long(pairs))
    first = np.arange(n_train) < 16 * n_per_pair
    tests = {pair_name(p): train.subset(first & (which == i)) for i, p in enumerate(ALL_PAIRS)}
    return TaskData(f"composite, reasoning complexity {complexity}", train, tests, vocab_size=100, seq_len=seq_len)


@dataclass
class FitSpeedRun:
    """Result of :func:`run_fit_speed`: one member per (init, depth, complexity, replica) setting."""

    inits: tuple[tuple[float, float], ...]  # (γ, λ) of each initialisation, large first
    settings: tuple[tuple[int, int, int, int], ...]  # (init index, depth, complexity, replica) per member
    steps: np.ndarray  # (R,) recorded steps
    pair_accuracy: np.ndarray  # (R, M, 16) accuracy of each member on its training data of each pair
    budget: int  # steps trained
    seconds: float  # CPU seconds of all the training runs

    @property
    def accuracy(self) -> np.ndarray:
        """Training accuracy with every pair weighted alike, (R, M)."""
        return self.pair_accuracy.mean(-1)

    def members(self, init: int | None = None, depth: int | None = None, complexity: int | None = None) -> list[int]:
        """Indices of the members with the given init index, depth and complexity (None: any)."""
        want = (init, depth, complexity)
        found = [m for m, s in enumerate(self.settings) if all(w is None or w == v for w, v in zip(want, s))]
        if not found:
            raise ValueError(f"no member with init={init}, depth={depth}, complexity={complexity}")
        return found

    def mean_error(self, members: Sequence[int], per_pair: bool = False) -> np.ndarray:
        """The training error 1 − accuracy averaged over the recorded steps (equally spaced), i.e. the area above
        the training-accuracy curve as a fraction of the budget, then over ``members``: a scalar, or (16,) per pair.

        A stand-in for the time to fit that never saturates: a curve that rises to 1 at step T has a mean error of
        about T/budget, and a slower curve a larger one whether or not it fits within the budget (no "never").
        """
        acc = self.pair_accuracy if per_pair else self.accuracy  # (R, M, 16) or (R, M)
        return (1 - acc[:, list(members)]).mean(axis=(0, 1))


def _fit_speed_depth(inits: tuple[tuple[float, float], ...], depth: int, complexities: tuple[int, ...],
                     replicas: int, seed: int, n_train: int, d_model: int, steps: int, lr: float, batch_size: int,
                     record_every: int) -> dict:
    """One depth of :func:`run_fit_speed`: every (init, complexity, replica) at ``depth`` as one batched ensemble.
    Returns the recorded steps, the per-pair training accuracy (R, K, 16) and the CPU seconds."""
    cells = [(i, k, r) for i in range(len(inits)) for k in complexities for r in range(replicas)]
    data = {(k, r): rewired_data(n_train, k, seed, r) for k in complexities for r in range(replicas)}
    _, history = train_on_tasks([data[(k, r)] for _, k, r in cells], gamma=[inits[i][0] for i, _, _ in cells],
                                weight_decay=[inits[i][1] for i, _, _ in cells], d_model=d_model, n_layers=depth,
                                n_heads=1, steps=steps, lr=lr, batch_size=batch_size, record_every=record_every,
                                n_eval=16, seed=3_000 + 10 * seed + depth, desc=f"fit speed, depth {depth}")
    return dict(steps=np.asarray(history.steps),
                pair_accuracy=np.stack([history[f"{pair_name(p)} accuracy"] for p in ALL_PAIRS], -1),
                seconds=float(history["cpu_seconds"][-1, 0]))


def _run_fit_speed(inits: tuple[tuple[float, float], ...], depths: tuple[int, ...], complexities: tuple[int, ...],
                   replicas: int, seed: int, n_train: int, d_model: int, steps: int, lr: float, batch_size: int,
                   record_every: int) -> FitSpeedRun:
    if not inits or not depths or not complexities or replicas < 1:
        raise ValueError("give at least one init, depth, complexity and replica")
    cells = [(i, k, r) for i in range(len(inits)) for k in complexities for r in range(replicas)]
    # each depth is cached on its own, so a long run (the full profile: hours on a CPU) resumes between depths
    parts = [cached(_fit_speed_depth)(inits, depth, complexities, replicas, seed, n_train, d_model, steps, lr,
                                      batch_size, record_every) for depth in depths]
    settings = tuple((i, depth, k, r) for depth in depths for i, k, r in cells)
    return FitSpeedRun(tuple(inits), settings, parts[-1]["steps"],
                       np.concatenate([part["pair_accuracy"] for part in parts], 1), steps,
                       sum(part["seconds"] for part in parts))


def run_fit_speed(inits: Sequence[tuple[float, float]], *, depths: Sequence[int] = (1, 2),
                  complexities: Sequence[int] = (0, 1, 3), replicas: int = 1, seed: int = 0, n_train: int = 1536,
                  d_model: int = 16, steps: int = 1500, lr: float = 1e-2, batch_size: int = 64,
                  record_every: int = 25) -> FitSpeedRun:
    """Train every (init, depth, complexity, replica) on :func:`rewired_data` and record the accuracy per pair
    on its training data; one batched ensemble per depth, each cached as it finishes (a stopped run resumes at
    the depth it was training).  ``inits`` lists (γ, λ), large init first."""
    inits = tuple((float(g), float(l)) for g, l in inits)
    return _run_fit_speed(inits, tuple(int(d) for d in depths), tuple(int(k) for k in complexities), int(replicas),
                          int(seed), n_train, d_model, steps, lr, batch_size, record_every)


FIT_SPEED = ClaimSpec("ch13b.fit-speed", "图13.17",
                      "the chapter's prediction: the small-initialisation model (γ = 1.4, λ = 0.1) fits data of larger "
                      "reasoning complexity more slowly (mean training error over the run ≥ 1.25× from the lowest to "
                      "the highest complexity), while the large-initialisation model's (γ = 0.5, λ = 0.01) changes by "
                      "less than half as much (means over depths and replicas)", kind="exploration")
PAIR_SPEED = ClaimSpec("ch13b.pair-speed", "图13.19",
                       "with one broken symmetric group (a, b)/(b, a), the small-initialisation model fits the pairs "
                       "(a, b), (b, a), (a, a), (b, b) more slowly than the other twelve: their mean training error over "
                       "the run is ≥ 1.25× that of the others (means over depths and replicas)", kind="exploration")


def check_fit_speed(run: FitSpeedRun, large: int = 0, small: int = 1) -> Verdict:
    """图13.17: mean training error over the run (:meth:`FitSpeedRun.mean_error`, a time to fit without a cap) at
    the highest over the lowest complexity: the small-init ratio r_S ≥ 1.25, and |r_L − 1| < (r_S − 1)/2."""
    ks = sorted({s[2] for s in run.settings})
    e_s0, e_sk = (float(run.mean_error(run.members(small, complexity=k))) for k in (ks[0], ks[-1]))
    e_l0, e_lk = (float(run.mean_error(run.members(large, complexity=k))) for k in (ks[0], ks[-1]))
    r_s, r_l = e_sk / e_s0, e_lk / e_l0
    return FIT_SPEED.judge(threshold(f"small init: error(k={ks[-1]}) / error(k={ks[0]})", r_s, ">=", 1.25),
                           compare("large init: |ratio − 1|", abs(r_l - 1), "<", "(small-init ratio − 1)/2",
                                   (r_s - 1) / 2),
                           error_small=[e_s0, e_sk], error_large=[e_l0, e_lk])


HIGHLIGHTED_PAIRS = ((1, 2), (2, 1), (1, 1), (2, 2))  # 图13.19's red pairs when the group {a, b} is broken


def check_pair_speed(run: FitSpeedRun, init: int = 1, complexity: int = 1) -> Verdict:
    """图13.19: with {a, b} broken (complexity 1), the small-init model's mean training error over the run on the
    pairs (a,b), (b,a), (a,a), (b,b) over that on the other twelve pairs ≥ 1.25."""
    per_pair = run.mean_error(run.members(init, complexity=complexity), per_pair=True)  # (16,)
    red = np.array([p in HIGHLIGHTED_PAIRS for p in ALL_PAIRS])
    ratio = float(per_pair[red].mean() / per_pair[~red].mean())
    return PAIR_SPEED.judge(threshold("mean error: highlighted / other pairs", ratio, ">=", 1.25),
                            highlighted=float(per_pair[red].mean()), others=float(per_pair[~red].mean()))
