"""Initial condensation (初始凝聚, book §8.3, 图8.9–8.11) and the activation's multiplicity.

From a small initialisation the parameters start next to the saddle θ = 0, and in the first
stage of training (the initial loss plateau, 图8.9) the input weights of a layer line up on a few
directions.  Zhou et al. (NeurIPS 2022) show that the number of directions is at most 2p, where the
**multiplicity** p (重数) of σ is the order of its first nonzero derivative at 0: σ^{(k)}(0) = 0 for
1 ≤ k < p and σ^{(p)}(0) ≠ 0 — p = 1 for tanh, sigmoid and softplus (one line: ±ŵ), p = 2 for x·tanh x,
p = 3 for x²·tanh x.

Three experiments:

* :func:`run_initial_condensation` — the book's 5-50-1 setting of 图8.10 (float64, Adam 1e-3, 100
  steps): the p = 1 activations give one line;
* :func:`run_multiplicity` — a 1-D version in float32 in which every activation, x²·tanh included,
  moves within a few hundred Adam steps: the orientations Ω_k = atan2(b_k, w_k) of the neurons
  carrying the amplitude fall into at most 2p clusters;
* :func:`run_residual_condensation` — 图8.11: a residual net h_{l+1} = σ_l(W_l h_l + b_l) + h_l
  with a different activation in each of its five residual layers.

:func:`lines_needed` counts the lines a set of input weights lies on without clustering: the
number of eigenvalues of the direction Gram (1/m) Σ ŵ_kŵ_kᵀ that together hold a given share of its
trace (1 for one line, whatever the signs).
"""

from __future__ import annotations

import numpy as np
import torch

from companion.kit.claims import ClaimSpec, Verdict, compare, threshold
from companion.core.neurons import (MAX_CLUSTER_WIDTH, alignment_eigenvalue, amplitude, angle_gaps, cluster_widths,
                           count_angle_clusters, direction_gram_eigenvalues, orientation)
from companion.core.nets import activation

#: Activations of §8.3 by multiplicity p (σ^{(k)}(0) = 0 for k < p, 图8.10).
MULTIPLICITY = {"tanh": 1, "sigmoid": 1, "softplus": 1, "xtanh": 2, "x2tanh": 3}

#: Initial standard deviation of the 1-D experiment.  x²·tanh gets 10⁻³: at 10⁻⁴ its loss is
#: unchanged after 150 Adam steps (its first-order signal scales like std³), so its initial stage
#: would last far longer than the others'.
MULTIPLICITY_INIT_STD = {"tanh": 1e-4, "sigmoid": 1e-4, "softplus": 1e-4, "xtanh": 1e-4, "x2tanh": 1e-3}

#: Adam learning rate of the 5-D experiment (图8.10) per activation.  The book uses 10⁻³, 8·10⁻⁴ and
#: 2.5·10⁻⁴ for its panels; we give the p = 1 activations the smallest, so that epoch 100 lies inside
#: the initial stage on every data seed (at 10⁻³ the tanh line has begun to split by epoch 100 on 5 of
#: 20 data seeds, softplus on 4: top eigenvalue 0.81–0.99).
INITIAL_LR = {"tanh": 2.5e-4, "sigmoid": 2.5e-4, "softplus": 2.5e-4, "xtanh": 1e-3, "x2tanh": 1e-3}

#: Angular gap (radians) that splits orientation clusters in the 1-D multiplicity experiment.
MULTIPLICITY_GAP = 0.3

#: Layer activations and the epochs of the panels of 图8.11 (hidden layers 1 to 5).
RESIDUAL_LAYERS = (("x2tanh", 1000), ("xtanh", 900), ("sigmoid", 900), ("tanh", 1400), ("softplus", 1400))


def _check_activation(act: str) -> None:
    if act not in MULTIPLICITY:
        raise ValueError(f"unknown activation {act!r}; choose one of {', '.join(MULTIPLICITY)}")


def lines_needed(w: np.ndarray, share: float = 0.95) -> int:
    """Number of lines the rows of ``w`` (m, d) lie on: eigenvalues of the direction Gram, largest
    first (:func:`~companion.core.neurons.direction_gram_eigenvalues`), needed to reach ``share`` of
    their sum (which is 1)."""
    if not 0 < share <= 1:
        raise ValueError(f"share must lie in (0, 1], got {share}")
    return int(np.searchsorted(np.cumsum(direction_gram_eigenvalues(w)), share - 1e-9) + 1)


def run_initial_condensation(act: str, *, n_members: int = 3, steps: int = 100, lr: float | None = None,
                             init_std: float = 50.0 ** -4, seed: int = 0) -> dict:
    """图8.9–8.10: the book's 5-50-1 setting — n = 80 points x ~ U[−4, 2]⁵, target Σ_k 3.5 sin(5x_k + 1),
    every parameter ~ N(0, init_std²) (the book: 50⁻⁴), Adam with ``lr`` (default :data:`INITIAL_LR`) —
    in float64 (in float32 the p ≥ 2 activations do not move at all).  Returns the members' input
    weights w (K, 50, 6) and output weights a (K, 50) after ``steps`` and the loss ratio."""
    from companion.core.ensemble import TwoLayerEnsemble, train_ensemble

    _check_activation(act)
    lr = INITIAL_LR[act] if lr is None else lr
    if steps < 1 or not lr > 0 or not init_std > 0:
        raise ValueError(f"need steps ≥ 1, lr > 0, init_std > 0; got steps={steps}, lr={lr}, init_std={init_std}")
    gen = torch.Generator().manual_seed(seed)
    x = torch.rand(80, 5, generator=gen, dtype=torch.float64) * 6 - 4
    y = (3.5 * torch.sin(5 * x + 1)).sum(dim=1)
    net = TwoLayerEnsemble(5, 50, beta1=init_std, beta2=init_std, alpha=1.0, act=act, n_members=n_members,
                           dtype=torch.float64, seed=seed)
    hist = train_ensemble(net, x, y, steps=steps, lr=lr, optimizer="adam", record_every=steps, seed=seed)
    return {"w": net.w.detach().numpy(), "a": net.a.detach().numpy(), "loss_ratio": hist.risk[-1] / hist.risk[0]}


def end_of_first_descent(ratio: np.ndarray, *, drop: float = 0.1, stall: float = 0.005, window: int = 2) -> int:
    """Index of the record at which a loss curve ``ratio`` = R_S(t)/R_S(0) (recorded at equal
    intervals) ends its first descent: the loss has fallen by ``drop``, or — after falling by at least
    1% — it stalls, falling by less than ``stall`` (of R_S(0)) over the last ``window`` records.
    Returns the last index if neither happens."""
    ratio = np.asarray(ratio, dtype=float)
    for i in range(window, len(ratio)):
        stalled = ratio[i] < 0.99 and ratio[i - window] - ratio[i] < stall
        if ratio[i] <= 1 - drop or stalled:
            return i
    return len(ratio) - 1


def run_multiplicity(act: str, *, n_members: int = 4, max_steps: int = 400, n: int = 40, width: int = 50,
                     init_std: float | None = None, seed: int = 0) -> dict:
    """1-D initial condensation: n points x ~ U[−1, 1], target sin(3x + 1), f = Σ_k a_k σ(w_k x + b_k)
    with m = ``width`` neurons, every parameter ~ N(0, std²) (``init_std``, default
    :data:`MULTIPLICITY_INIT_STD`), Adam lr
    1e-3 in float32, looked at per member at the end of its initial stage.

    The initial stage is the first descent of the loss from the saddle θ ≈ 0 (图8.9); it ends, for each
    member, at :func:`end_of_first_descent` of its loss recorded every 10 steps (a 10% drop, or a stall
    after a smaller drop — tanh nets often stall at a plateau above 0.9·R_S(0), and on that plateau the
    line they formed begins to split).  Members that do neither stop at ``max_steps``.

    Returns each member's a (K, m) and w (K, m, 2) at its stopping step, the orientations Ω (K, m),
    the stopping steps, the loss ratio R_S(stop)/R_S(0) and the number of orientation clusters:
    neurons carrying 90% of the amplitude, split at angular gaps > :data:`MULTIPLICITY_GAP` rad.
    """
    from companion.core.ensemble import TwoLayerEnsemble, train_ensemble

    _check_activation(act)
    if n < 2 or width < 1 or max_steps < 30 or n_members < 1:
        raise ValueError(f"need n ≥ 2, width ≥ 1, max_steps ≥ 30, n_members ≥ 1; got n={n}, width={width}, "
                         f"max_steps={max_steps}, n_members={n_members}")
    gen = torch.Generator().manual_seed(seed)
    x = torch.rand(n, 1, generator=gen) * 2 - 1
    y = torch.sin(3 * x[:, 0] + 1)
    std = MULTIPLICITY_INIT_STD[act] if init_std is None else init_std
    if not std > 0:
        raise ValueError(f"init_std must be positive, got {init_std}")
    net = TwoLayerEnsemble(1, width, beta1=std, beta2=std, alpha=1.0, act=act, n_members=n_members, seed=seed)
    checks = np.arange(0, max_steps + 1, 10)
    hist = train_ensemble(net, x, y, steps=max_steps, lr=1e-3, optimizer="adam", record_every=10,
                          snapshot_steps=checks, seed=seed)
    ratio = hist.risk / hist.risk[0]  # (records, K), recorded at ``checks``
    members = np.arange(n_members)
    stop = [end_of_first_descent(ratio[:, k]) for k in members]
    a = np.stack([hist.snapshots[checks[i]][0][k] for k, i in zip(members, stop)])
    w = np.stack([hist.snapshots[checks[i]][1][k] for k, i in zip(members, stop)])
    angles = orientation(w)  # (K, m)
    clusters = np.array([count_angle_clusters(angles[k], amplitude(a[k], w[k]), gap=MULTIPLICITY_GAP)
                         for k in members])
    return {"a": a, "w": w, "angles": angles, "clusters": clusters, "steps": checks[stop],
            "loss_ratio": ratio[stop, members]}


P1_ONE_LINE = ClaimSpec("ch08.p1-one-line", "图8.10",
                        "with p = 1 activations (tanh, sigmoid, softplus) the input weights condense onto one line")

#: "One line": the top eigenvalue λ₁ of the direction Gram is at least 0.99, i.e. at most 1% of its
#: trace lies off the line.
ONE_LINE_OFF_SHARE = 0.01


def check_p1_one_line(initial: dict[str, dict]) -> Verdict:
    """图8.10 on {activation: :func:`run_initial_condensation` result}: for each p = 1 activation, in its
    worst net, the share of the direction Gram's trace off its top line, 1 − λ₁, is ≤ 1% (λ₁ ≥ 0.99)."""
    p1 = [act for act, p in MULTIPLICITY.items() if p == 1]
    missing = [act for act in p1 if act not in initial]
    if missing:
        raise ValueError(f"the p = 1 claim needs runs of {', '.join(p1)}; missing {', '.join(missing)}")
    worst = {act: min(alignment_eigenvalue(w) for w in initial[act]["w"]) for act in p1}
    return P1_ONE_LINE.judge(*(threshold(f"{act}: 1 − λ₁ (worst net)", 1 - lam, "<=", ONE_LINE_OFF_SHARE)
                               for act, lam in worst.items()),
                             **{f"lambda1_{act}": lam for act, lam in worst.items()})


MULTIPLICITY_BOUND = ClaimSpec(
    "ch08.multiplicity-bound", "图8.10",
    "initial condensation uses at most 2p orientations (p = multiplicity) in every net, and the "
    "p ≥ 2 activations use more of them than the p = 1 ones (mean over nets)")


def check_multiplicity_bound(runs: dict[str, dict], *, gap: float = MULTIPLICITY_GAP) -> Verdict:
    """图8.10 (1-D version) on {activation: :func:`run_multiplicity` result}.

    "At most 2p clusters" (split at ``gap``) ⇔ the (2p+1)-th largest gap between neighbouring
    orientations of the amplitude-carrying neurons is ≤ ``gap`` and no cluster is wider than
    :data:`~companion.core.neurons.MAX_CLUSTER_WIDTH` (a ring or a spread round the circle, which
    :func:`~companion.core.neurons.count_angle_clusters` counts as many); both are required in every
    net of each activation (worst net).  Then the mean cluster count of the p ≥ 2 nets exceeds that of
    the p = 1 nets.
    """
    conditions, widest = [], {}
    for act, r in runs.items():
        p = MULTIPLICITY[act]
        members = range(len(r["angles"]))
        amps = [amplitude(r["a"][k], r["w"][k]) for k in members]
        gaps = [angle_gaps(r["angles"][k], amps[k]) for k in members]
        worst = max(float(g[2 * p]) if len(g) > 2 * p else 0.0 for g in gaps)
        conditions.append(threshold(f"{act}: (2p+1)-th largest orientation gap (worst net) [rad]", worst, "<=", gap))
        widest[act] = max(float(cluster_widths(r["angles"][k], amps[k], gap=gap)[0]) for k in members)
    worst_act = max(widest, key=widest.get)
    conditions.append(threshold(f"widest cluster (worst net, {worst_act}) [rad]", widest[worst_act], "<=",
                                MAX_CLUSTER_WIDTH))
    p1 = np.concatenate([r["clusters"] for act, r in runs.items() if MULTIPLICITY[act] == 1])
    p23 = np.concatenate([r["clusters"] for act, r in runs.items() if MULTIPLICITY[act] >= 2])
    conditions.append(compare("mean clusters p = 1", float(p1.mean()), "<", "mean clusters p ≥ 2", float(p23.mean())))
    return MULTIPLICITY_BOUND.judge(*conditions, **{f"clusters_{act}": r["clusters"] for act, r in runs.items()})


def run_residual_condensation(*, n_members: int = 4, seed: int = 0, lr: float = 4e-5, std: float = 0.01,
                              width: int = 18, d: int = 3, n: int = 80) -> dict:
    """图8.11: a residual net with a different activation per layer, trained by Adam from N(0, std²).

    Data: n points x ~ U[−4, 2]^d, target Σ_k 4 sin(12 x_k + 1) (the book: n = 80, d = 3, m = 18,
    var = 0.01², lr = 4·10⁻⁵).  Network: h_0 = W_in x + b_in (R^d → R^m), then for the five layers of
    :data:`RESIDUAL_LAYERS` h_{l+1} = σ_l(W_l h_l + b_l) + h_l, then f = w_outᵀ h_5 + b_out — our reading
    of the book's "six-layer" net (an input map, five residual layers).  Loss ½·mean (f − y)².

    Returns, for each residual layer, its input weights with the bias appended, (K, m, m + 1), at the
    epoch of its panel in the book, and the final loss ratio.
    """
    if n_members < 1 or not lr > 0 or not std > 0:
        raise ValueError(f"need n_members ≥ 1, lr > 0, std > 0; got {n_members}, {lr}, {std}")
    gen = torch.Generator().manual_seed(seed)
    x = torch.rand(n, d, generator=gen) * 6 - 4
    y = (4 * torch.sin(12 * x + 1)).sum(dim=1)

    def param(*shape: int) -> torch.Tensor:
        return (torch.randn(n_members, *shape, generator=gen) * std).requires_grad_()

    w_in, b_in = param(d, width), param(1, width)
    layers = [(activation(act), param(width, width), param(1, width)) for act, _ in RESIDUAL_LAYERS]
    w_out, b_out = param(width, 1), param(1, 1)
    params = [w_in, b_in, *(p for _, w, b in layers for p in (w, b)), w_out, b_out]
    opt = torch.optim.Adam(params, lr=lr)
    xs = x.expand(n_members, *x.shape)
    epochs = {epoch for _, epoch in RESIDUAL_LAYERS}
    weights: dict[int, np.ndarray] = {}
    first = last = None
    for step in range(max(epochs) + 1):
        for index, (_, epoch) in enumerate(RESIDUAL_LAYERS):
            if step == epoch:
                _, w, b = layers[index]
                weights[index] = torch.cat([w, b], dim=1).detach().transpose(1, 2).numpy()  # rows = neurons
        h = torch.baddbmm(b_in, xs, w_in)
        for sigma, w, b in layers:
            h = sigma(torch.baddbmm(b, h, w)) + h
        loss = 0.5 * (torch.baddbmm(b_out, h, w_out)[..., 0] - y).pow(2).mean(1)  # (K,)
        first = loss.detach() if first is None else first
        last = loss.detach()
        if step == max(epochs):
            break
        opt.zero_grad()
        loss.sum().backward()
        opt.step()
    return {"weights": [weights[i] for i in range(len(RESIDUAL_LAYERS))],
            "loss_ratio": (last / first).numpy()}
