"""Chapter 8, condensation (凝聚): the experiments, claims and explorer of the notebook.

The measures (amplitude, orientation, cosine similarity (8.4), cluster counts, the dropout regulariser
(8.5)) live in :mod:`companion.core.neurons`; every run returns a result dataclass; the two-layer nets train as batched ensembles through
:func:`companion.core.ensemble.train_ensemble`, every loop through the engine :mod:`companion.core.train`.

* the condensation process (图8.1–8.4): :func:`run_condensation` on the target (8.2), :func:`first_plateau`,
  the claims on the stalls of the loss (:func:`stall_witness`, 图8.2), one orientation mid-plateau (图8.3),
  the output's distance from one neuron's ramp (:func:`ramp_distance`, 图8.4) and dead neurons;
* dropout (§8.4, 图8.12–8.16): :func:`run_dropout_relu`, :func:`run_tanh_dropout` (with 图8.14's small
  initialisation in the same ensemble), :func:`run_dropout_sample_size` (one ensemble, a data set per member);
* the explorer (:func:`make_explorer`);
* initial condensation and the activation's multiplicity (初始凝聚, §8.3, 图8.9–8.11), below.

From a small initialisation the parameters start next to the saddle θ = 0, and in the first
stage of training (the initial loss plateau, 图8.9) the input weights of a layer line up on a few
directions.  Zhou et al. (NeurIPS 2022) show that the number of directions is at most 2p, where the
**multiplicity** p (重数) of σ is the order of its first nonzero derivative at 0: σ^{(k)}(0) = 0 for
1 ≤ k < p and σ^{(p)}(0) ≠ 0 — p = 1 for tanh, sigmoid and softplus (one line: ±ŵ), p = 2 for x·tanh x,
p = 3 for x²·tanh x.

The experiments:

* :func:`run_initial_condensation` — the book's 5-50-1 setting of 图8.10 (float64, Adam 1e-3, 100
  steps): the p = 1 activations give one line;
* :func:`run_activation_lines` — 图8.10(a)–(c) in the same 5-D setting from std 50⁻² (where x²·tanh moves too):
  tanh, x·tanh and x²·tanh (σ_p(z) = z^{p−1} tanh z, :func:`tanh_power`) as one ensemble; the lines are
  counted by single linkage of the lines arccos |D(u, v)| (:func:`line_link_angles`, :func:`count_lines`);
* :func:`run_multiplicity` — a 1-D version in float32 in which every activation, x²·tanh included,
  moves within a few hundred Adam steps: the orientations Ω_k = atan2(b_k, w_k) of the neurons
  carrying the amplitude fall into at most 2p clusters;
* :func:`run_line_blocks` — 图8.10(a)–(c) as 15 nets per activation, each on its own draw of the data, its lines
  read as the blocks of the heat map (:func:`line_groups`, :func:`count_blocks`: groups of ≥ 10% of the neurons);
* :func:`run_residual_condensation` — 图8.11: a residual net h_{l+1} = σ_l(W_l h_l + b_l) + h_l
  with a different activation in each of its five residual layers; every layer condenses
  (:func:`check_residual_condensation`, in effective numbers of lines, the participation ratio of
  :func:`~companion.core.neurons.effective_direction_count`).

At the end of the module, 图8.6's CPU analogue: :func:`run_residual_cnn`, a small residual CNN
(:class:`BatchedResidualCNN`) trained on RGB photograph patches from the default initialisation, whose last layer
condenses and whose first layer does not (:func:`check_resnet_last_not_first`), read through
:func:`cosine_participation`.

:func:`lines_needed` counts the lines a set of input weights lies on without clustering: the
number of eigenvalues of the direction Gram (1/m) Σ ŵ_kŵ_kᵀ that together hold a given share of its
trace (1 for one line, whatever the signs).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields

import numpy as np
import torch
from scipy.sparse.csgraph import connected_components
from torch import Tensor

from companion.core.classify import accuracy, cross_entropy
from companion.core.data import digits
from companion.core.ensemble import TwoLayerEnsemble, hessian_norms, train_ensemble
from companion.core.nets import BatchedConvNet, BatchedMLP, activation
from companion.core.neurons import (
    MAX_CLUSTER_WIDTH,
    ArrayLike,
    _np,
    alignment_eigenvalue,
    amplitude,
    angle_gaps,
    cluster_widths,
    cosine_similarity_matrix,
    count_angle_clusters,
    direction_gram_eigenvalues,
    dropout_regulariser,
    effective_direction_count,
    leading_eigenvector_order,
    dropout_risk_monte_carlo,
    occupied_fraction,
    orientation,
    plot_feature_scatter,
)
from companion.core.train import History, descend, make_optimizer, on_device, run
from companion.kit.bounds import SEED, Bounds, integer, real
from companion.kit.cache import cached
from companion.kit.config import settings
from companion.kit.claims import REVALIDATION_SEEDS, ClaimSpec, Verdict, compare, count, identity, threshold
from companion.kit.seeds import active_seed, generator, numpy_rng


# ----------------------------------------------------------------------------------------------
# Data: RGB patches of scikit-image's photographs, the stand-in for CIFAR-10 of 图8.6
# ----------------------------------------------------------------------------------------------

#: scikit-image's bundled colour photographs used by :func:`photo_patches`, one class each (a person, a cup of
#: coffee, a cat, a rocket).
PHOTOGRAPHS = ("astronaut", "coffee", "chelsea", "rocket")


@dataclass
class Patches:
    """RGB patches (n, 3, s, s) and the index (n,) of the photograph each comes from (:data:`PHOTOGRAPHS`), for
    training and for the test split."""

    x: Tensor
    labels: Tensor
    x_test: Tensor
    labels_test: Tensor


@functools.lru_cache(maxsize=4)
def _photo_patch_pool(size: int, resolution: int, stride: int) -> tuple[np.ndarray, np.ndarray]:
    """Every ``size``×``size`` patch at ``stride`` of each photograph resized to ``resolution`` pixels a side (RGB
    in [0, 1], anti-aliased): patches (n, 3, size, size) and labels (n,)."""
    from skimage import data, transform

    patches, labels = [], []
    for label, name in enumerate(PHOTOGRAPHS):
        image = transform.resize(getattr(data, name)(), (resolution, resolution), anti_aliasing=True)
        corners = range(0, resolution - size + 1, stride)
        cut = np.stack([image[i:i + size, j:j + size] for i in corners for j in corners])
        patches.append(cut.transpose(0, 3, 1, 2))
        labels.append(np.full(len(cut), label))
    return np.concatenate(patches), np.concatenate(labels)


def photo_patches(n_train: int, n_test: int = 0, *, seed: int, size: int = 8, resolution: int = 96, stride: int = 4,
                  dtype: torch.dtype = torch.float32) -> Patches:
    """A small natural-image classification task standing in for CIFAR-10: RGB patches of the photographs
    :data:`PHOTOGRAPHS`, each resized to ``resolution``² pixels and cut into ``size``×``size`` patches every
    ``stride`` pixels (96, 8 and 4: 529 patches a photograph, 2,116 in all), the label saying which photograph
    a patch comes from.  ``n_train`` and ``n_test`` patches are drawn without replacement in the order of a random
    permutation from ``seed``; each colour channel is standardised with the training split's mean and standard
    deviation (as CIFAR images are normalised per channel)."""
    if not (1 <= size <= resolution and stride >= 1):
        raise ValueError(f"need 1 ≤ size ≤ resolution and stride ≥ 1; got size={size}, resolution={resolution}, "
                         f"stride={stride}")
    pool, pool_labels = _photo_patch_pool(size, resolution, stride)
    if not 1 <= n_train <= len(pool) or not 0 <= n_test <= len(pool) - n_train:
        raise ValueError(f"need 1 ≤ n_train ≤ {len(pool)} and 0 ≤ n_test ≤ {len(pool)} − n_train; "
                         f"got n_train={n_train}, n_test={n_test}")
    order = numpy_rng(seed).permutation(len(pool))[:n_train + n_test]
    x, labels = pool[order], pool_labels[order]
    mean = x[:n_train].mean(axis=(0, 2, 3), keepdims=True)
    std = x[:n_train].std(axis=(0, 2, 3), keepdims=True)
    x = torch.as_tensor((x - mean) / np.where(std > 0, std, 1.0), dtype=dtype)
    y = torch.as_tensor(labels)
    return Patches(x[:n_train], y[:n_train], x[n_train:], y[n_train:])

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
#: Those epochs alone, one per hidden layer: when :func:`run_residual_condensation` looks at each layer by default.
RESIDUAL_EPOCHS = tuple(epoch for _, epoch in RESIDUAL_LAYERS)


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


@dataclass
class InitialCondensation:
    """图8.10 after the initial stage: input weights w (K, m, d̃), output weights a (K, m), R_S(t)/R_S(0) (K,);
    the recorded steps (T,) and risks R_S (T, K) (图8.9)."""

    w: np.ndarray
    a: np.ndarray
    loss_ratio: np.ndarray
    steps: np.ndarray | None = None
    risk: np.ndarray | None = None


@cached
def run_initial_condensation(act: str, *, n_members: int = 3, steps: int = 100, lr: float | None = None,
                             init_std: float = 50.0 ** -4, record_every: int | None = None,
                             seed: int = 0) -> InitialCondensation:
    """图8.9–8.10: the book's 5-50-1 setting — n = 80 points x ~ U[−4, 2]⁵, target Σ_k 3.5 sin(5x_k + 1),
    every parameter ~ N(0, init_std²) (the book: 50⁻⁴), Adam with ``lr`` (default :data:`INITIAL_LR`) —
    in float64 (in float32 the p ≥ 2 activations do not move at all).  Returns the members' input
    weights w (K, 50, 6) and output weights a (K, 50) after ``steps``, the loss ratio, and R_S (T, K) recorded
    every ``record_every`` steps (default: at the first and the last step only; the curve of 图8.9)."""
    _check_activation(act)
    lr = INITIAL_LR[act] if lr is None else lr
    if steps < 1 or not lr > 0 or not init_std > 0:
        raise ValueError(f"need steps ≥ 1, lr > 0, init_std > 0; got steps={steps}, lr={lr}, init_std={init_std}")
    x, y = book_data_8_10(seed)
    net = TwoLayerEnsemble(5, 50, beta1=init_std, beta2=init_std, alpha=1.0, act=act, n_members=n_members,
                           dtype=torch.float64, seed=seed)
    hist = train_ensemble(net, x, y, steps=steps, lr=lr, optimizer="adam", record_every=record_every or steps,
                          seed=seed, desc=f"initial condensation, {act}")
    risk = hist["risk"]
    return InitialCondensation(w=net.w.detach().numpy(), a=net.a.detach().numpy(), loss_ratio=risk[-1] / risk[0],
                               steps=hist.steps, risk=risk)


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


@dataclass
class MultiplicityRun:
    """Each member at the end of its initial stage: a (K, m), w (K, m, 2), orientations Ω (K, m), cluster
    counts (K,), the stopping steps (K,) and R_S(stop)/R_S(0) (K,)."""

    a: np.ndarray
    w: np.ndarray
    angles: np.ndarray
    clusters: np.ndarray
    steps: np.ndarray
    loss_ratio: np.ndarray


@cached
def run_multiplicity(act: str, *, n_members: int = 4, max_steps: int = 400, n: int = 40, width: int = 50,
                     init_std: float | None = None, seed: int = 0) -> MultiplicityRun:
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
    _check_activation(act)
    if n < 2 or width < 1 or max_steps < 30 or n_members < 1:
        raise ValueError(f"need n ≥ 2, width ≥ 1, max_steps ≥ 30, n_members ≥ 1; got n={n}, width={width}, "
                         f"max_steps={max_steps}, n_members={n_members}")
    gen = generator(seed)
    x = torch.rand(n, 1, generator=gen) * 2 - 1
    y = torch.sin(3 * x[:, 0] + 1)
    std = MULTIPLICITY_INIT_STD[act] if init_std is None else init_std
    if not std > 0:
        raise ValueError(f"init_std must be positive, got {init_std}")
    net = TwoLayerEnsemble(1, width, beta1=std, beta2=std, alpha=1.0, act=act, n_members=n_members, seed=seed)
    checks = np.arange(0, max_steps + 1, 10)
    hist = train_ensemble(net, x, y, steps=max_steps, lr=1e-3, optimizer="adam", record_every=10,
                          snapshot_steps=checks, seed=seed, desc=f"multiplicity, {act}")
    rows = np.searchsorted(hist.steps, checks)  # the records at ``checks``
    ratio = hist["risk"][rows] / hist["risk"][0]  # (records, K)
    members = np.arange(n_members)
    stop = [end_of_first_descent(ratio[:, k]) for k in members]
    a = np.stack([hist["a"][rows[i], k] for k, i in zip(members, stop)])
    w = np.stack([hist["w"][rows[i], k] for k, i in zip(members, stop)])
    angles = orientation(w)  # (K, m)
    clusters = np.array([count_angle_clusters(angles[k], amplitude(a[k], w[k]), gap=MULTIPLICITY_GAP)
                         for k in members])
    return MultiplicityRun(a=a, w=w, angles=angles, clusters=clusters, steps=checks[stop],
                           loss_ratio=ratio[stop, members])


P1_ONE_LINE = ClaimSpec("ch08.p1-one-line", "图8.10",
                        "with p = 1 activations (tanh, sigmoid, softplus) the input weights condense onto one line",
                        validation_seeds=REVALIDATION_SEEDS)

#: "One line": the top eigenvalue λ₁ of the direction Gram is at least 0.99, i.e. at most 1% of its
#: trace lies off the line.
ONE_LINE_OFF_SHARE = 0.01


def check_p1_one_line(initial: dict[str, InitialCondensation]) -> Verdict:
    """图8.10 on {activation: :func:`run_initial_condensation` result}: for each p = 1 activation, in its
    worst net, the share of the direction Gram's trace off its top line, 1 − λ₁, is ≤ 1% (λ₁ ≥ 0.99)."""
    p1 = [act for act, p in MULTIPLICITY.items() if p == 1]
    missing = [act for act in p1 if act not in initial]
    if missing:
        raise ValueError(f"the p = 1 claim needs runs of {', '.join(p1)}; missing {', '.join(missing)}")
    worst = {act: min(alignment_eigenvalue(w) for w in initial[act].w) for act in p1}
    return P1_ONE_LINE.judge(*(threshold(f"{act}: 1 − λ₁ (worst net)", 1 - lam, "<=", ONE_LINE_OFF_SHARE)
                               for act, lam in worst.items()),
                             **{f"lambda1_{act}": lam for act, lam in worst.items()})


MULTIPLICITY_BOUND = ClaimSpec(
    "ch08.multiplicity-bound", "图8.10",
    "initial condensation uses at most 2p orientations (p = multiplicity) in every net, and the "
    "p ≥ 2 activations use more of them than the p = 1 ones (mean over nets)")


def check_multiplicity_bound(runs: dict[str, MultiplicityRun], *, gap: float = MULTIPLICITY_GAP) -> Verdict:
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
        members = range(len(r.angles))
        amps = [amplitude(r.a[k], r.w[k]) for k in members]
        gaps = [angle_gaps(r.angles[k], amps[k]) for k in members]
        worst = max(float(g[2 * p]) if len(g) > 2 * p else 0.0 for g in gaps)
        conditions.append(threshold(f"{act}: (2p+1)-th largest orientation gap (worst net) [rad]", worst, "<=", gap))
        widest[act] = max(float(cluster_widths(r.angles[k], amps[k], gap=gap)[0]) for k in members)
    worst_act = max(widest, key=widest.get)
    conditions.append(threshold(f"widest cluster (worst net, {worst_act}) [rad]", widest[worst_act], "<=",
                                MAX_CLUSTER_WIDTH))
    p1 = np.concatenate([r.clusters for act, r in runs.items() if MULTIPLICITY[act] == 1])
    p23 = np.concatenate([r.clusters for act, r in runs.items() if MULTIPLICITY[act] >= 2])
    conditions.append(compare("mean clusters p = 1", float(p1.mean()), "<", "mean clusters p ≥ 2", float(p23.mean())))
    return MULTIPLICITY_BOUND.judge(*conditions, **{f"clusters_{act}": r.clusters for act, r in runs.items()})


# --- 图8.10: the number of lines follows the multiplicity (the book's 5-D setting) --------------------

#: The activations of 图8.10(a)–(c) as σ_p(z) = z^{p−1}·tanh z: tanh (p = 1), x·tanh (p = 2), x²·tanh (p = 3).
TANH_POWERS = ("tanh", "xtanh", "x2tanh")

#: Initial standard deviation of every parameter in :func:`run_activation_lines`: 50⁻² (the variance
#: 50⁻⁴).  At the std 50⁻⁴ of :func:`run_initial_condensation` the x²·tanh gradients (∝ std³ ≈ 10⁻²⁰)
#: lie far below Adam's ε = 10⁻⁸ and its nets do not move in 100 epochs.
ACTIVATION_LINES_STD = 50.0 ** -2

#: Angle (radians) between two lines below which single linkage joins them into one (|cos| ≥ cos 0.3 ≈ 0.955).
LINE_GAP = 0.3


def book_data_8_10(seed: int, dtype: torch.dtype = torch.float64) -> tuple[Tensor, Tensor]:
    """The data of 图8.10: n = 80 points x ~ U[−4, 2]⁵ and the target Σ_k 3.5 sin(5x_k + 1), drawn from ``seed``."""
    x = torch.rand(80, 5, generator=generator(seed), dtype=dtype) * 6 - 4
    return x, (3.5 * torch.sin(5 * x + 1)).sum(dim=1)


def tanh_power(p: Tensor) -> Callable[[Tensor], Tensor]:
    """Per-member activation σ_p(z) = z^{p−1}·tanh z for multiplicities ``p`` (K,) ∈ {1, 2, 3, …}, on
    pre-activations (K, N, m): tanh, x·tanh, x²·tanh side by side in one ensemble (σ_p^{(k)}(0) = 0 for k < p,
    σ_p^{(p)}(0) ≠ 0).  The powers are products of z and 1, so no 0⁰ enters a gradient."""
    p = torch.as_tensor(p).reshape(-1, 1, 1)
    if bool((p < 1).any()):
        raise ValueError(f"multiplicities must be ≥ 1; got {p.ravel().tolist()}")

    def act(z: Tensor) -> Tensor:
        on = p.to(z.device)
        out = torch.tanh(z)
        for j in range(1, int(p.max())):
            out = out * torch.where(on > j, z, torch.ones_like(z))
        return out

    return act


@dataclass
class ActivationLines:
    """图8.10(a)–(c) at epoch ``steps``: per activation of ``acts`` (A,) and net (K), input weights w (A, K, m, 6)
    (bias last), output weights a (A, K, m), R_S(end)/R_S(0) (A, K); every parameter's initial std."""

    acts: tuple[str, ...]
    w: np.ndarray
    a: np.ndarray
    loss_ratio: np.ndarray
    init_std: float
    steps: int

    def heights(self, i: int, k: int) -> np.ndarray:
        """:func:`line_link_angles` of net k of activation i."""
        return line_link_angles(self.w[i, k])

    def lines(self, gap: float = LINE_GAP) -> np.ndarray:
        """:func:`count_lines` of every net, (A, K)."""
        return np.array([[count_lines(wk, gap) for wk in wa] for wa in self.w])


@cached
def run_activation_lines(*, acts: tuple[str, ...] = TANH_POWERS, n_members: int = 3, steps: int = 100,
                         init_std: float = ACTIVATION_LINES_STD, seed: int = 0) -> ActivationLines:
    """图8.10(a)–(c): the book's 5-50-1 setting (:func:`book_data_8_10`; every parameter ~ N(0, ``init_std``²),
    full-batch Adam at the book's learning rate of each panel, :data:`INITIAL_LR`: 10⁻³ for x·tanh and x²·tanh,
    2.5·10⁻⁴ for tanh) for ``steps`` epochs, in float64.  The ``n_members`` nets of every activation train as ONE
    ensemble (member i·K + k: activation i, net k) with the per-member activation :func:`tanh_power`."""
    for act in acts:
        _check_activation(act)
        if act not in TANH_POWERS:
            raise ValueError(f"图8.10's tanh family is {', '.join(TANH_POWERS)}; got {act!r}")
    if steps < 1 or n_members < 1 or not init_std > 0:
        raise ValueError(f"need steps ≥ 1, n_members ≥ 1, init_std > 0; got steps={steps}, n_members={n_members}, "
                         f"init_std={init_std}")
    x, y = book_data_8_10(seed)
    n_acts = len(acts)
    p = torch.tensor([MULTIPLICITY[act] for act in acts]).repeat_interleave(n_members)
    net = TwoLayerEnsemble(5, 50, beta1=init_std, beta2=init_std, alpha=1.0, act="tanh",
                           n_members=n_acts * n_members, dtype=torch.float64, seed=seed)
    net.act = tanh_power(p)
    lr = [INITIAL_LR[act] for act in acts for _ in range(n_members)]
    hist = train_ensemble(net, x, y, steps=steps, lr=lr, optimizer="adam", record_every=steps, seed=seed,
                          desc="图8.10, tanh powers")
    risk = hist["risk"]
    shape = (n_acts, n_members)
    return ActivationLines(acts=tuple(acts), w=net.w.detach().numpy().reshape(*shape, 50, 6),
                           a=net.a.detach().numpy().reshape(*shape, 50),
                           loss_ratio=(risk[-1] / risk[0]).reshape(shape), init_std=float(init_std), steps=steps)


def line_link_angles(w: ArrayLike) -> np.ndarray:
    """Single linkage of the lines of the rows of ``w`` (m, d): the m − 1 link angles, largest first.

    The angle between the lines of u and v is arccos |D(u, v)| (8.4) ∈ [0, π/2] (ŵ and −ŵ lie on one line);
    single linkage joins the two nearest groups again and again, and its link angles are the edges of the
    minimum spanning tree of these angles.  Cut at an angle g, the rows fall into 1 + #{links > g} lines:
    they lie on exactly L lines when the L-th largest link is ≤ g (no (L+1)-th line splits off) and the
    (L−1)-th is > g (L − 1 splits happen)."""
    w = _np(w).astype(float)
    if w.ndim != 2 or len(w) < 2:
        raise ValueError(f"w must be a matrix (m, d) with m ≥ 2; got shape {w.shape}")
    unit = w / np.maximum(np.linalg.norm(w, axis=1, keepdims=True), 1e-300)
    angle = np.arccos(np.clip(np.abs(unit @ unit.T), 0.0, 1.0))
    inside = np.zeros(len(w), dtype=bool)
    inside[0] = True
    nearest = angle[0].copy()  # Prim: the angle from the tree to every row outside it
    links = []
    for _ in range(len(w) - 1):
        j = int(np.argmin(np.where(inside, np.inf, nearest)))
        links.append(nearest[j])
        inside[j] = True
        nearest = np.minimum(nearest, angle[j])
    return np.sort(np.array(links))[::-1]


def count_lines(w: ArrayLike, gap: float = LINE_GAP) -> int:
    """Number of lines the rows of ``w`` (m, d) condense on: single-linkage groups of lines joined below
    ``gap`` radians (:func:`line_link_angles`)."""
    return 1 + int((line_link_angles(w) > gap).sum())


ACTIVATION_LINES = ClaimSpec(
    "ch08.activation-lines", "图8.10",
    "at epoch 100 from a small initialisation the number of lines the input weights condense on depends on the "
    "activation: tanh nets lie on one line, x·tanh and x²·tanh nets on more than one but at most 10 (of 50 "
    "neurons), every net counted by single linkage of lines at 0.3 rad (exploration: held on 18 of seeds 0–19; "
    "on one of the others two x·tanh nets used 12 lines, on the other an x²·tanh net 11)", kind="exploration")

#: "Few lines": at most this many (random directions of 50 neurons in R⁶ lie on about 48 at 0.3 rad).
FEW_LINES = 10


def check_activation_lines(result: ActivationLines, *, gap: float = LINE_GAP) -> Verdict:
    """图8.10(a)–(c) on :func:`run_activation_lines`, in link angles (:func:`line_link_angles`): tanh (p = 1) — the
    largest link is ≤ ``gap`` in its worst net (one line); x·tanh and x²·tanh (p ≥ 2) — the largest link is
    > ``gap`` in their closest net (more than one line) and the :data:`FEW_LINES`-th largest is ≤ ``gap`` in their
    worst net (at most :data:`FEW_LINES` lines: condensed)."""
    conditions = []
    for i, act in enumerate(result.acts):
        links = np.array([result.heights(i, k) for k in range(result.w.shape[1])])  # (K, m − 1)
        if MULTIPLICITY[act] == 1:
            conditions.append(threshold(f"{act}: largest link (worst net) [rad]", float(links[:, 0].max()), "<=", gap))
        else:
            conditions.append(threshold(f"{act}: largest link (closest net) [rad]", float(links[:, 0].min()), ">", gap))
            conditions.append(threshold(f"{act}: link {FEW_LINES} (worst net) [rad]",
                                        float(links[:, FEW_LINES - 1].max()), "<=", gap))
    return ACTIVATION_LINES.judge(*conditions, **{f"lines_{act}": n for act, n in zip(result.acts, result.lines(gap))})


ACTIVATION_LINE_COUNTS = ClaimSpec(
    "ch08.activation-line-counts", "图8.10",
    "at epoch 100 from a small initialisation the input weights of tanh, x·tanh and x²·tanh nets lie on exactly "
    "1, 2 and 3 lines (the multiplicity p), in every net (exploration: held on 0 of seeds 0–19; tanh nets lie on "
    "one line, but x·tanh nets use 2–12 lines, on exactly 2 in 1 of 60 nets, and x²·tanh nets 3–11, on exactly 3 "
    "in 2 of 60)", kind="exploration")


def check_activation_line_counts(result: ActivationLines, *, gap: float = LINE_GAP) -> Verdict:
    """Exploration (图8.10(a)–(c), the book's counts): for each activation of multiplicity p, the p-th largest
    link angle (:func:`line_link_angles`) is ≤ ``gap`` in its worst net (no (p+1)-th line) and, for p ≥ 2, the
    (p−1)-th largest is > ``gap`` in its closest net (p lines, not fewer): exactly p lines in every net."""
    conditions = []
    for i, act in enumerate(result.acts):
        p = MULTIPLICITY[act]
        links = np.array([result.heights(i, k) for k in range(result.w.shape[1])])
        conditions.append(threshold(f"{act} (p = {p}): link {p} (worst net) [rad]", float(links[:, p - 1].max()),
                                    "<=", gap))
        if p >= 2:
            conditions.append(threshold(f"{act} (p = {p}): link {p - 1} (closest net) [rad]",
                                        float(links[:, p - 2].min()), ">", gap))
    return ACTIVATION_LINE_COUNTS.judge(*conditions,
                                        **{f"lines_{act}": n for act, n in zip(result.acts, result.lines(gap))})


@dataclass
class ResidualCondensation:
    """图8.11: per residual layer its input weights with the bias appended, (K, m, m + 1), at the epoch of
    its panel, and the final loss ratio (K,)."""

    weights: list[np.ndarray]
    loss_ratio: np.ndarray

    def effective_lines(self) -> np.ndarray:
        """:func:`~companion.core.neurons.effective_direction_count` of every layer's input weights per net, (L, K)."""
        return np.array([[effective_direction_count(wk) for wk in w] for w in self.weights])

    def lines(self, share: float = 0.95) -> np.ndarray:
        """:func:`lines_needed` of every layer's input weights per net, (L, K)."""
        return np.array([[lines_needed(wk, share) for wk in w] for w in self.weights])

    def blocks(self) -> np.ndarray:
        """:func:`count_blocks` of every layer's input weights per net (the heat map's lines), (L, K)."""
        return np.array([[count_blocks(wk) for wk in w] for w in self.weights])


@cached
def run_residual_condensation(*, n_members: int = 4, seed: int = 0, lr: float = 4e-5, std: float = 0.01,
                              width: int = 18, d: int = 3, n: int = 80,
                              epochs: tuple[int, ...] = RESIDUAL_EPOCHS,
                              own_data: bool = False) -> ResidualCondensation:
    """图8.11: a residual net with a different activation per layer, trained by Adam from N(0, std²).

    Data: n points x ~ U[−4, 2]^d, target Σ_k 4 sin(12 x_k + 1) (the book: n = 80, d = 3, m = 18,
    var = 0.01², lr = 4·10⁻⁵).  Network: h_0 = W_in x + b_in (R^d → R^m), then for the five layers of
    :data:`RESIDUAL_LAYERS` h_{l+1} = σ_l(W_l h_l + b_l) + h_l, then f = w_outᵀ h_5 + b_out — our reading
    of the book's "six-layer" net (an input map, five residual layers).  Loss ½·mean (f − y)².

    Returns, for each residual layer, its input weights with the bias appended, (K, m, m + 1), at its epoch
    in ``epochs`` (default: the epoch of its panel in the book, :data:`RESIDUAL_EPOCHS`; the run trains until
    the last of them), and the final loss ratio.  Drawn on the CPU, trained on the settings' device.  With
    ``own_data`` net k fits its own draw of the data (stream k + 1 of ``seed``, as in :func:`run_line_blocks`), so
    that the nets are independent samples of a layer's line count; otherwise all nets share one draw.
    """
    if n_members < 1 or not lr > 0 or not std > 0:
        raise ValueError(f"need n_members ≥ 1, lr > 0, std > 0; got {n_members}, {lr}, {std}")
    epochs = [int(epoch) for epoch in epochs]
    if len(epochs) != len(RESIDUAL_LAYERS) or min(epochs) < 1:
        raise ValueError(f"need one epoch ≥ 1 per residual layer ({len(RESIDUAL_LAYERS)}); got {epochs}")
    gen, device = generator(seed), settings().device
    x = torch.rand(n, d, generator=gen) * 6 - 4
    if own_data:  # net k fits its own draw (stream k + 1 of ``seed``), (K, n, d)
        x = torch.stack([torch.rand(n, d, generator=generator(seed, k + 1)) * 6 - 4 for k in range(n_members)])
    y = (4 * torch.sin(12 * x + 1)).sum(dim=-1)
    x, y = x.to(device), y.to(device)

    def param(*shape: int) -> torch.Tensor:
        return (torch.randn(n_members, *shape, generator=gen) * std).to(device).requires_grad_()

    w_in, b_in = param(d, width), param(1, width)
    layers = [(activation(act), param(width, width), param(1, width)) for act, _ in RESIDUAL_LAYERS]
    w_out, b_out = param(width, 1), param(1, 1)
    params = [w_in, b_in, *(p for _, w, b in layers for p in (w, b)), w_out, b_out]
    xs = x if own_data else x.expand(n_members, *x.shape)

    def loss() -> torch.Tensor:  # ½·mean (f − y)² per member, (K,)
        h = torch.baddbmm(b_in, xs, w_in)
        for sigma, w, b in layers:
            h = sigma(torch.baddbmm(b, h, w)) + h
        return 0.5 * (torch.baddbmm(b_out, h, w_out)[..., 0] - y).pow(2).mean(1)

    def record(step: int) -> dict[str, torch.Tensor]:  # every layer's (K, m, m + 1) weights, rows = neurons
        with torch.no_grad():
            row = {"loss": loss()}
        row.update({f"layer{i}": torch.cat([w, b], dim=1).transpose(1, 2) for i, (_, w, b) in enumerate(layers)})
        return row

    hist = run(descend(torch.optim.Adam(params, lr=lr), loss), steps=max(epochs), record=record,
               record_at=[0, *epochs], desc="residual condensation")
    return ResidualCondensation(weights=[hist[f"layer{i}"][hist.at(epoch)] for i, epoch in enumerate(epochs)],
                                loss_ratio=hist["loss"][-1] / hist["loss"][0])


RESIDUAL_CONDENSATION = ClaimSpec(
    "ch08.residual-condensation", "图8.11",
    "from the small initialisation N(0, 0.01²) every one of the five residual layers has condensed at the epoch "
    "of its panel: its input weights lie on a few lines (an effective number of at most 4.5 in the median net, "
    "where random weights give about 9.5)")

#: "A few lines": the participation ratio of the direction Gram (:func:`~companion.core.neurons.
#: effective_direction_count`) at most this; 18 random input weights in R¹⁹ give about 9.5 (at t = 0 and from the
#: usual scale, std 1/√18, which hardly turns them in 1400 epochs).
RESIDUAL_FEW_LINES = 4.5


def check_residual_condensation(result: ResidualCondensation) -> Verdict:
    """图8.11 on :func:`run_residual_condensation`: in each residual layer the median over nets of the effective
    number of lines of its input weights (bias appended) is ≤ :data:`RESIDUAL_FEW_LINES`."""
    med = np.median(result.effective_lines(), axis=1)
    return RESIDUAL_CONDENSATION.judge(
        *(threshold(f"layer {i + 1} ({act}): effective lines (median net)", float(med[i]), "<=", RESIDUAL_FEW_LINES)
          for i, (act, _) in enumerate(RESIDUAL_LAYERS)),
        lines95=result.lines())


RESIDUAL_LINE_COUNTS = ClaimSpec(
    "ch08.residual-line-counts", "图8.11",
    "the five residual layers condense on exactly the book's 3, 2, 1, 1 and 1 lines (the multiplicity p of each "
    "layer's activation), counted as the eigenvalues of the direction Gram that hold 95% of its trace, in the "
    "median net", kind="exploration")


def check_residual_line_counts(result: ResidualCondensation) -> Verdict:
    """Exploration (图8.11, the book's counts): per layer, the median over nets of :func:`lines_needed` equals the
    multiplicity p of its activation (:data:`MULTIPLICITY`: 3, 2, 1, 1, 1)."""
    med = np.median(result.lines(), axis=1)
    conditions = []
    for i, (act, _) in enumerate(RESIDUAL_LAYERS):
        p = MULTIPLICITY[act]
        conditions.append(count(f"layer {i + 1} ({act}): lines (median net)", int(round(med[i])), "<=", p))
        if p > 1:
            conditions.append(count(f"layer {i + 1} ({act}): lines (median net)", int(round(med[i])), ">=", p))
    return RESIDUAL_LINE_COUNTS.judge(*conditions, lines95=result.lines())


# --- the condensation process and dropout (图8.1–8.4, 图8.12–8.16) ---------------------------------

def plot_polar(ax, w: ArrayLike, a: ArrayLike, *, dead: np.ndarray | None = None, title: str = "") -> None:
    """图8.2–8.3: neurons on a polar axis, angle = orientation, radius = log₁₀ A (dead neurons grey)."""
    amp, ang = amplitude(a, w), orientation(w)
    radius = np.log10(np.maximum(amp, 1e-300))
    dead = np.zeros(amp.shape, bool) if dead is None else dead
    ax.plot(ang[~dead], radius[~dead], "o", color="#d62728", ms=2.5)
    ax.plot(ang[dead], radius[dead], "o", color="0.6", ms=2.5)
    ax.set_title(title, fontsize=9)


def plot_cosine_heatmap(ax, u: ArrayLike, title: str = "") -> None:
    """§8.1.2: cosine-similarity matrix (8.4) of the rows of u, ordered by its leading eigenvector."""
    plot_cosine_map(ax, cosine_similarity_matrix(u), title, fontsize=None)


def plot_cosine_map(ax, d_matrix: np.ndarray, title: str, *, fontsize: float | None = 8) -> None:
    """A heat map of §8.1.2: the cosine matrix D (8.4) of a layer's kernels or outputs, its neurons sorted by D's
    leading eigenvector so that condensed groups show as blocks (red: parallel, blue: opposite)."""
    order = leading_eigenvector_order(d_matrix)
    ax.imshow(d_matrix[np.ix_(order, order)], cmap="RdBu_r", vmin=-1, vmax=1, interpolation="nearest")
    ax.set(xticks=[], yticks=[])
    ax.grid(False)
    ax.set_title(title, fontsize=fontsize)





def target_8_2(x: Tensor) -> Tensor:
    """The target (8.2): −ReLU(x) + ReLU(2(x+0.3)) − ReLU(1.5(x−0.4)) + ReLU(0.5(x−0.8))."""
    r = torch.relu
    return -r(x) + r(2 * (x + 0.3)) - r(1.5 * (x - 0.4)) + r(0.5 * (x - 0.8))


def dead_neurons(w: ArrayLike, x: ArrayLike) -> np.ndarray:
    """ReLU neurons inactive on every training input (w_kᵀx̃_i ≤ 0 ∀i): they get no gradient. w (m, 2), x (n,)."""
    w, x = _np(w), _np(x).ravel()
    pre = np.outer(x, w[:, 0]) + w[:, 1]  # (n, m)
    return (pre <= 0).all(axis=0)


@dataclass
class CondensationProcess:
    """图8.1–8.4: data x, y (n,), the target on ``grid`` (G,), the loss R_S at ``steps`` (T,), and at the
    snapshot steps ``snap_steps`` (S,) the parameters a (S, m), w (S, m, 2) and outputs on the grid (S, G);
    ``dead`` (m,) marks the ReLU neurons inactive at every training input at initialisation."""

    x: np.ndarray
    y: np.ndarray
    grid: np.ndarray
    target: np.ndarray
    steps: np.ndarray
    loss: np.ndarray
    snap_steps: np.ndarray
    a: np.ndarray
    w: np.ndarray
    outputs: np.ndarray
    dead: np.ndarray


@cached
def run_condensation(*, width: int = 100, init_std: float = 1e-3, act: str = "relu", keep: float = 1.0,
                     n: int = 50, steps: int = 12_000, lr: float = 0.05, n_snapshots: int = 41,
                     seed: int = 0, progress: bool = True) -> CondensationProcess:
    """图8.1–8.4: fit (8.2) on n points of [−1, 1] with f = Σ a_k σ(w_k x + b_k), all parameters
    ~ N(0, init_std²), full-batch GD; returns the loss history (every steps/400 steps and at the
    powers of two, so that the first steps are resolved on a logarithmic time axis), ``n_snapshots``
    evenly spaced parameter snapshots and the outputs on a fine grid at those snapshots."""
    if not 1 <= width <= 5000 or not init_std > 0 or n < 2 or n_snapshots < 2 or steps < 1:
        raise ValueError(f"need 1 ≤ width ≤ 5000, init_std > 0, n ≥ 2, n_snapshots ≥ 2, steps ≥ 1; got "
                         f"width={width}, init_std={init_std}, n={n}, n_snapshots={n_snapshots}, steps={steps}")
    x = torch.linspace(-1, 1, n).reshape(-1, 1)
    y = target_8_2(x).ravel()
    net = TwoLayerEnsemble(1, width, beta1=init_std, beta2=init_std, alpha=1.0, act=act, n_members=1, seed=seed)
    snaps = np.unique(np.linspace(0, steps, n_snapshots).astype(int))
    early = 2 ** np.arange(int(np.log2(steps)) + 1)  # 1, 2, 4, … ≤ steps: the loss on a log time axis
    every = max(1, steps // 400)
    hist = train_ensemble(net, x, y, steps=steps, lr=lr, keep=keep if keep < 1 else None, record_every=every,
                          snapshot_steps=np.union1d(snaps, early), seed=seed, progress=progress,
                          desc="condensation")
    grid = torch.linspace(-1, 1, 401).reshape(-1, 1)
    at_snaps = np.isin(hist.steps, snaps)
    a_s, w_s = hist["a"][at_snaps, 0], hist["w"][at_snaps, 0]  # (S, m), (S, m, 2)
    loss_rows = (hist.steps % every == 0) | (hist.steps == steps) | np.isin(hist.steps, early)
    xg = torch.cat([grid, torch.ones_like(grid)], dim=1).numpy()  # (G, 2)
    outputs = np.stack([net.act(torch.as_tensor(xg @ w.T)).numpy() @ a for a, w in zip(a_s, w_s)])  # (S, G)
    return CondensationProcess(x=x.numpy().ravel(), y=y.numpy(), grid=grid.numpy().ravel(),
                               target=target_8_2(grid).numpy().ravel(), steps=hist.steps[loss_rows],
                               loss=hist["risk"][loss_rows, 0], snap_steps=snaps, a=a_s, w=w_s, outputs=outputs,
                               dead=dead_neurons(w_s[0], x) if act == "relu" else np.zeros(width, bool))


def first_plateau(steps: np.ndarray, loss: np.ndarray, *, drop: float = 0.5, flat: float = 0.95,
                  window: float = 0.05) -> tuple[int, int]:
    """(start, end) steps of the first loss plateau (损失停滞) after the initial drop.

    start: the first recorded step, once the loss is below ``drop``·L(0), from which the loss stays
    above ``flat`` times its value for a ``window`` fraction of the run; end: the first later step
    at which the loss has fallen below ``flat``·L(start).  Raises if there is no such plateau.
    """
    steps, loss = np.asarray(steps), np.asarray(loss)
    width = max(1, int(window * len(loss)))
    below = np.flatnonzero(loss < drop * loss[0])
    if len(below) == 0:
        raise ValueError(f"the loss never fell below {drop}·L(0): no plateau to find (train longer)")
    for i in range(below[0], len(loss) - width):
        if loss[i + width] >= flat * loss[i]:
            after = np.flatnonzero(loss[i:] < flat * loss[i])
            if len(after) == 0:
                raise ValueError("the loss never left its first plateau: train longer")
            return int(steps[i]), int(steps[i + after[0]])
    raise ValueError("the loss never flattened after its first drop: no plateau found")


def target_8_13(x: Tensor) -> Tensor:
    """The target of 图8.13 and 图8.16: tanh(x − 6) + tanh(x + 6), a two-neuron tanh teacher."""
    return torch.tanh(x - 6) + torch.tanh(x + 6)


def total_variation(y: ArrayLike) -> np.ndarray | float:
    """Total variation Σ_i |y_{i+1} − y_i| of curves sampled on a grid, over the last axis (…, G).

    For a fine grid this approximates ∫|f′|; an oscillating fit of the same data has a larger one.
    Returns a float for one curve, an array (…,) for several.
    """
    y = _np(y).astype(float)
    if y.ndim < 1 or y.shape[-1] < 2:
        raise ValueError(f"need curves sampled at ≥ 2 grid points, shape (..., G); got {y.shape}")
    tv = np.abs(np.diff(y, axis=-1)).sum(axis=-1)
    return float(tv) if tv.ndim == 0 else tv


@dataclass
class DropoutFit:
    """Members' keep probabilities (K,), outputs on the grid (K, G), final and initial a (K, m), w (K, m, 2),
    RD (7.3) (K,), and the training risk R_S (T, K) at ``steps`` (T,)."""

    keep: np.ndarray
    outputs: np.ndarray
    a: np.ndarray
    w: np.ndarray
    a0: np.ndarray
    w0: np.ndarray
    rd: np.ndarray
    steps: np.ndarray
    risk: np.ndarray


def run_dropout_fit(x: Tensor, y: Tensor, *, keeps: tuple[float, ...] = (1.0, 0.9), trials: int = 1,
                    width: int = 500, act: str = "tanh", steps: int = 5_000, lr: float = 1e-3,
                    grid: Tensor | None = None, small: tuple[float, float] | None = None,
                    shared_init: bool = False, seed: int = 0) -> DropoutFit:
    """Fit (x, y) with two-layer nets in the linear regime (a, w ~ N(0, 1), α = √m, γ = ½), one member per
    (trial, keep probability p), all trained by Adam as one ensemble (图8.12–8.14).  ``small`` = (std, α)
    adds one member per trial without dropout whose parameters are all ~ N(0, std²), output scale α
    (图8.14's small initialisation).  With ``shared_init`` every member of a trial starts from the same
    parameters (the trial's first member's), so that the members differ in p alone (图8.13(d,e)).

    Members are ordered trial-major: member t·J + j has keep probability ``keeps[j]`` (J = len(keeps), or
    J = len(keeps) + 1 with ``small``, whose member is the last of each trial, p = 1).
    Returns the members' keep probabilities (K,), outputs on ``grid`` (K, G), final and initial
    parameters a (K, m), w (K, m, 2), RD (7.3) (K,), and the recorded training risk R_S (T, K).
    """
    if not keeps or any(not 0 < p <= 1 for p in keeps):
        raise ValueError(f"keep probabilities p must lie in (0, 1]; got {keeps}")
    if trials < 1 or not 1 <= width <= 5000 or steps < 1:
        raise ValueError(f"need trials ≥ 1, 1 ≤ width ≤ 5000, steps ≥ 1; got trials={trials}, width={width}, "
                         f"steps={steps}")
    if small is not None and not (small[0] > 0 and small[1] > 0):
        raise ValueError(f"small = (std, α) must be positive; got {small}")
    if small is not None and shared_init:
        raise ValueError("shared_init gives every member of a trial the same start: not with a small initialisation")
    per_trial = list(keeps) + ([1.0] if small else [])
    std = [1.0] * len(keeps) + ([small[0]] if small else [])
    alpha = [width ** 0.5] * len(keeps) + ([small[1]] if small else [])
    keep = torch.tensor(per_trial * trials)  # (K,)
    net = TwoLayerEnsemble(x.shape[1], width, beta1=std * trials, beta2=std * trials, alpha=alpha * trials,
                           act=act, n_members=len(keep), seed=seed)
    if shared_init:
        first = torch.arange(len(keep)) // len(per_trial) * len(per_trial)  # each member's trial's first member
        with torch.no_grad():
            for name in ("a", "w", "a0", "w0"):
                getattr(net, name).copy_(getattr(net, name)[first])
    hist = train_ensemble(net, x, y, steps=steps, lr=lr, optimizer="adam", keep=keep,
                          record_every=max(1, steps // 100), seed=seed, desc="dropout fit")
    grid = x if grid is None else grid
    with torch.no_grad():
        outputs = net(grid).numpy()  # (K, G)
    return DropoutFit(keep=keep.numpy(), outputs=outputs, a=net.a.detach().numpy(), w=net.w.detach().numpy(),
                      a0=net.a0.numpy(), w0=net.w0.numpy(), rd=net.relative_distance(), steps=hist.steps,
                      risk=hist["risk"])


@cached
def run_dropout_sample_size(sizes: tuple[int, ...], *, keeps: tuple[float, ...] = (1.0, 0.9), trials: int = 2,
                            width: int = 200, steps: int = 3_000, lr: float = 1e-3, seed: int = 0) -> np.ndarray:
    """图8.16: test error ½⟨(f − f*)²⟩ on [−10, 10] of students fitted to n evenly spaced samples of the
    two-neuron teacher f* = :func:`target_8_13`, for each n in ``sizes``; mean over ``trials`` random
    initialisations.  Returns an array (len(sizes), len(keeps)).

    All students train as ONE ensemble (Adam at ``lr``, linear regime as in :func:`run_dropout_fit`), each on
    its own data set: member (i, t, j) — size ``sizes[i]``, trial t, keep probability ``keeps[j]`` — sees
    the n_i samples, padded to the largest n with samples of weight 0."""
    if not sizes or min(sizes) < 1:
        raise ValueError(f"sample sizes must be positive; got {sizes}")
    if not keeps or any(not 0 < p <= 1 for p in keeps) or trials < 1 or not 1 <= width <= 5000 or steps < 1:
        raise ValueError(f"need keep probabilities in (0, 1], trials ≥ 1, 1 ≤ width ≤ 5000, steps ≥ 1; got "
                         f"keeps={keeps}, trials={trials}, width={width}, steps={steps}")
    grid = torch.linspace(-10, 10, 401).reshape(-1, 1)
    truth = target_8_13(grid).ravel().numpy()
    n_max, per_size = max(sizes), trials * len(keeps)
    x = torch.zeros(len(sizes) * per_size, n_max, 1)  # (K, N, 1), padding at x = 0 with weight 0
    weight = torch.zeros(len(sizes) * per_size, n_max)  # (K, N)
    for i, n in enumerate(sizes):
        x[i * per_size:(i + 1) * per_size, :n, 0] = torch.linspace(-10, 10, n)
        weight[i * per_size:(i + 1) * per_size, :n] = 1.0
    keep = torch.tensor(list(keeps) * trials * len(sizes))  # (K,)
    net = TwoLayerEnsemble(1, width, beta1=1.0, beta2=1.0, alpha=width ** 0.5, act="tanh", n_members=len(keep),
                           seed=seed)
    train_ensemble(net, x, target_8_13(x[..., 0]), steps=steps, lr=lr, optimizer="adam", keep=keep,
                   record_every=steps, sample_weight=weight, seed=seed, desc="dropout and sample size")
    with torch.no_grad():
        err = 0.5 * ((net(grid).numpy() - truth) ** 2).mean(axis=1)  # (K,)
    return err.reshape(len(sizes), trials, len(keeps)).mean(axis=1)


#: 图8.16's sample sizes just above the teacher's 6 free parameters, where the book finds that dropout already
#: generalises and the students without dropout do not yet.
FEW_SAMPLES = (8, 9)

DROPOUT_SAMPLE_SIZE = ClaimSpec(
    "ch08.dropout-sample-size", "图8.16",
    "just above the teacher's 6 parameters (n = 8 and 9 samples) the students trained with dropout reach a mean "
    "test error below 2% of the zero function's and less than a quarter of the students' without dropout")


def check_dropout_sample_size(err: np.ndarray, sizes: tuple[int, ...]) -> Verdict:
    """图8.16 on a :func:`run_dropout_sample_size` result ``err`` (len(sizes), 2) — columns p = 1 and p < 1 — for
    the sample sizes ``sizes``: the mean test error over n ∈ :data:`FEW_SAMPLES` with dropout is below
    :data:`FIT_SHARE` of the zero function's and below ¼ of the mean without dropout."""
    rows = [list(sizes).index(n) for n in FEW_SAMPLES]
    without, with_dropout = np.asarray(err)[rows].mean(axis=0)
    grid = torch.linspace(-10, 10, 401)
    zero_error = 0.5 * float((target_8_13(grid) ** 2).mean())  # the test error of f = 0
    return DROPOUT_SAMPLE_SIZE.judge(
        threshold("test error with dropout / zero function's", float(with_dropout) / zero_error, "<", FIT_SHARE),
        compare("test error with dropout", float(with_dropout), "<", "¼ × without", 0.25 * float(without)),
        test_error_no_dropout=float(without), zero_function_error=zero_error)


#: Angular gap (radians) that splits orientation clusters in the 图8.3 claim (count_angle_clusters' default).
PROCESS_GAP = 0.1


def snapshot_index(proc: CondensationProcess, step: int) -> int:
    """Index of the snapshot of :func:`run_condensation` nearest to ``step``."""
    return int(np.argmin(np.abs(np.asarray(proc.snap_steps) - step)))


def gaps_at(proc: CondensationProcess, step: int, *, mass: float = 0.9) -> np.ndarray:
    """:func:`angle_gaps` of the amplitude-carrying neurons at the snapshot nearest to ``step``."""
    i = snapshot_index(proc, step)
    return angle_gaps(orientation(proc.w[i]), amplitude(proc.a[i], proc.w[i]), mass=mass)


def clusters_at(proc: CondensationProcess, step: int, *, gap: float = PROCESS_GAP) -> int:
    """:func:`count_angle_clusters` of the amplitude-carrying neurons at the snapshot nearest to ``step``."""
    i = snapshot_index(proc, step)
    return count_angle_clusters(orientation(proc.w[i]), amplitude(proc.a[i], proc.w[i]), gap=gap)


def _gap(gaps: np.ndarray, k: int) -> float:
    """The (k+1)-th largest gap, 0 if there are not that many neurons."""
    return float(gaps[k]) if len(gaps) > k else 0.0


PLATEAU_CONDENSATION = ClaimSpec(
    "ch08.plateau-one-orientation", "图8.3",
    "one orientation cluster in the middle of the first plateau, at least 3 at the end of training")


def check_plateau_condensation(proc: CondensationProcess, *, gap: float = PROCESS_GAP) -> Verdict:
    """图8.3 on a :func:`run_condensation` result, in terms of the gaps between the orientations of the
    neurons carrying 90% of the amplitude (split at ``gap``, as :func:`count_angle_clusters` does).

    Mid-plateau one cluster ⇔ the second-largest gap ≤ ``gap`` (nothing splits the neurons) and their
    run is at most :data:`MAX_CLUSTER_WIDTH` wide (not a ring or an arc spread round the circle); at
    the end ≥ 3 clusters ⇔ the third-largest gap > ``gap``.  No first plateau (e.g. a large
    initialisation) is a "never": the claim fails.
    """
    try:
        start, end = first_plateau(proc.steps, proc.loss)
    except ValueError:
        start = end = None
    final = int(proc.snap_steps[-1])
    g_end = gaps_at(proc, final)
    if start is None:
        width = g2 = float("nan")
        mid_clusters = "no plateau"
    else:
        mid = (start + end) // 2
        g2 = _gap(gaps_at(proc, mid), 1)
        i = snapshot_index(proc, mid)
        width = float(cluster_widths(orientation(proc.w[i]), amplitude(proc.a[i], proc.w[i]), gap=gap)[0])
        mid_clusters = clusters_at(proc, mid, gap=gap)
    return PLATEAU_CONDENSATION.judge(
        threshold("2nd-largest orientation gap mid-plateau [rad]", g2, "<=", gap),
        threshold("widest cluster mid-plateau [rad]", width, "<=", MAX_CLUSTER_WIDTH),
        threshold("3rd-largest orientation gap at the end [rad]", _gap(g_end, 2), ">", gap),
        plateau="none" if start is None else (start, end), clusters_mid_plateau=mid_clusters,
        clusters_final=clusters_at(proc, final, gap=gap))


def ramp_distance(x: ArrayLike, f: ArrayLike, *, kinks: int = 1201) -> float:
    """How far a curve f on the grid x is from the output of ONE ReLU neuron, c·ReLU(±(x − x₀)):
    min over the sign, the kink x₀ (``kinks`` points of [3·min x, 3·max x], so a kink outside the grid — a
    straight line — counts too) and the least-squares height c of ‖f − c·ReLU(±(x − x₀))‖₂ / ‖f‖₂.
    0 for a single ramp; the target (8.2) is 0.27 from one."""
    x, f = _np(x).astype(float).ravel(), _np(f).astype(float).ravel()
    if x.shape != f.shape or len(x) < 3:
        raise ValueError(f"need a curve sampled at ≥ 3 points, x and f of one shape; got {x.shape}, {f.shape}")
    norm = float(f @ f)
    if norm == 0:
        raise ValueError("the curve is identically zero: no relative distance")
    x0 = np.linspace(3 * x.min(), 3 * x.max(), kinks)[:, None]  # (X, 1)
    best = norm
    for sign in (1.0, -1.0):
        ramps = np.maximum(sign * (x[None, :] - x0), 0.0)  # (X, G)
        size = (ramps ** 2).sum(axis=1)
        ok = size > 0
        proj = (ramps[ok] @ f) ** 2 / size[ok]  # what the best height c removes from ‖f‖²
        best = min(best, norm - float(proj.max()))
    return float(np.sqrt(max(best, 0.0) / norm))


PLATEAU_OUTPUTS = ClaimSpec(
    "ch08.plateau-outputs", "图8.4",
    "the outputs follow the condensation: in the middle of the first plateau the fit is one neuron's ramp, "
    "at the end it is as far from any single ramp as half the target (8.2) is",
    validation_seeds=REVALIDATION_SEEDS)

#: "One neuron's ramp": within 5% (relative L2 on [−1, 1]) of the best single ReLU neuron c·ReLU(±(x − x₀)).
RAMP_TOLERANCE = 0.05


def ramp_distance_at(proc: CondensationProcess, step: int) -> float:
    """:func:`ramp_distance` of the output at the snapshot nearest ``step``."""
    return ramp_distance(proc.grid, proc.outputs[snapshot_index(proc, step)])


def check_plateau_outputs(proc: CondensationProcess) -> Verdict:
    """图8.4 on a :func:`run_condensation` result: in the middle of the first plateau the output is within
    :data:`RAMP_TOLERANCE` of one ReLU neuron's output (:func:`ramp_distance`: the condensed net acts as one
    neuron), and at the last snapshot it is at least half as far from any single ramp as the target (8.2)
    is (it has taken on the target's kinks).  No first plateau (e.g. a large initialisation) is a "never":
    the claim fails."""
    try:
        start, end = first_plateau(proc.steps, proc.loss)
        mid = ramp_distance_at(proc, (start + end) // 2)
    except ValueError:
        start = end = None
        mid = float("nan")
    final = ramp_distance_at(proc, int(proc.snap_steps[-1]))
    target = ramp_distance(proc.grid, proc.target)
    return PLATEAU_OUTPUTS.judge(threshold("distance from one ramp, mid-plateau", mid, "<=", RAMP_TOLERANCE),
                                 threshold("distance from one ramp at the end", final, ">=", 0.5 * target),
                                 target_distance=target, plateau="none" if start is None else (start, end))


LOSS_STALLS = ClaimSpec(
    "ch08.loss-stalls", "图8.2",
    "the loss stalls more than once — next to the initialisation and again on a plateau, each stall followed "
    "by a fall to below half its level — while the orientations, spread at t = 0, gather in the second stall")

#: A stall: over one doubling of the training time, [t, 2t], the loss falls by less than 5%.
STALL_FALL = 0.05
#: Spread / gathered: the neurons carrying 90% of the amplitude occupy more than half / less than a quarter
#: of 36 angular bins.
SPREAD_SHARE, GATHERED_SHARE = 0.5, 0.25


def stall_witness(steps: np.ndarray, loss: np.ndarray, *, fall: float = STALL_FALL) -> tuple[int, int] | None:
    """Two stalls t₁ < t₂ (2t₁ ≤ t₂) of a loss curve recorded at ``steps``, with the loss recorded at t and 2t:
    the pair whose tightest condition of :func:`check_loss_stalls` has the largest margin (None if the curve
    has no such pair of records)."""
    level = dict(zip(np.asarray(steps).tolist(), np.asarray(loss, dtype=float).tolist()))
    end = level[int(steps[-1])]
    ts = [t for t in level if t > 0 and 2 * t in level]
    if not ts:
        return None
    ts_arr = np.array(ts)
    q = np.array([1 - level[2 * t] / level[t] for t in ts])  # fall over [t, 2t]
    stall = (fall - q) / fall  # margin of "a stall at t"
    after = np.array([(0.5 - end / level[2 * t]) / 0.5 for t in ts])  # margin of "falls by half after it"
    best, pair = -np.inf, None
    for i, t1 in enumerate(ts):
        later = ts_arr >= 2 * t1
        if not later.any():
            continue
        between = (0.5 - np.array([level[t] for t in ts_arr[later]]) / level[2 * t1]) / 0.5
        margins = np.minimum.reduce([np.full(later.sum(), stall[i]), between, stall[later], after[later]])
        j = int(np.argmax(margins))
        if margins[j] > best:
            best, pair = margins[j], (int(t1), int(ts_arr[later][j]))
    return pair


def check_loss_stalls(proc: CondensationProcess, *, fall: float = STALL_FALL) -> Verdict:
    """图8.2 on a :func:`run_condensation` result (the loss recorded at the powers of two and every
    steps/400 steps).  A stall at t: over one doubling of the training time the loss falls by less than
    ``fall`` (5%), L(2t) > 0.95·L(t) — on a logarithmic time axis a flat stretch.  The claim: there are two
    stalls t₁ and t₂ ≥ 2t₁ with L(t₂) < ½·L(2t₁) (a fall between them) and L(end) < ½·L(2t₂) (a fall after
    the second), the pair chosen with :func:`stall_witness`; the neurons carrying 90% of the amplitude
    occupy more than half of 36 angular bins at t = 0 (图8.2(b): random orientations) and less than a quarter
    at the snapshot nearest the middle √2·t₂ of the second stall.  No such pair is a "never"."""
    pair = stall_witness(proc.steps, proc.loss, fall=fall)
    level = dict(zip(proc.steps.tolist(), proc.loss.tolist()))
    occupied = [occupied_fraction(orientation(w), amplitude(a, w)) for a, w in zip(proc.a, proc.w)]
    if pair is None:
        nan = float("nan")
        q1 = q2 = between = after = gathered = nan
    else:
        t1, t2 = pair
        q1, q2 = 1 - level[2 * t1] / level[t1], 1 - level[2 * t2] / level[t2]
        between, after = level[t2] / level[2 * t1], level[int(proc.steps[-1])] / level[2 * t2]
        gathered = occupied[snapshot_index(proc, int(round(2 ** 0.5 * t2)))]
    return LOSS_STALLS.judge(
        threshold("fall of the loss over [t₁, 2t₁]", q1, "<", fall),
        threshold("L(t₂)/L(2t₁)", between, "<", 0.5),
        threshold("fall of the loss over [t₂, 2t₂]", q2, "<", fall),
        threshold("L(end)/L(2t₂)", after, "<", 0.5),
        threshold("occupied share of 36 orientation bins at t = 0", occupied[0], ">", SPREAD_SHARE),
        threshold("occupied share in the second stall", gathered, "<", GATHERED_SHARE),
        stalls="none" if pair is None else pair)


DEAD_NEURONS = ClaimSpec("ch08.dead-neurons-still", "图8.3", "dead ReLU neurons never move while the live ones do",
                         kind="identity")


def neuron_moves(proc: CondensationProcess) -> np.ndarray:
    """How far each neuron travelled from the first to the last snapshot: max |Δw| over (w, b) + |Δa|, (m,)."""
    return np.abs(proc.w[-1] - proc.w[0]).max(axis=1) + np.abs(proc.a[-1] - proc.a[0])


def check_dead_neurons(proc: CondensationProcess) -> Verdict:
    """习题19 / 图8.3: the neurons whose pre-activation w_k x_i + b_k is ≤ 0 at every training input at
    initialisation (:func:`dead_neurons`) have not moved at all by the last snapshot (relative to a live
    neuron's typical move: ≤ 10⁻⁶), and every other neuron has moved farther than any of them."""
    dead = dead_neurons(proc.w[0], proc.x)
    moves = neuron_moves(proc)
    live = moves[~dead]
    typical = float(np.median(live)) if live.size else float("nan")
    worst_dead = float(moves[dead].max()) if dead.any() else float("nan")
    ratio = worst_dead / typical if dead.any() and typical > 0 else float("nan")
    return DEAD_NEURONS.judge(
        count("dead neurons", int(dead.sum()), ">=", 1),
        threshold("largest move of a dead neuron / median move of a live one", ratio, "<=", 1e-6),
        compare("smallest move of a live neuron", float(live.min()) if live.size else float("nan"), ">",
                "largest move of a dead neuron", worst_dead),
        live_neurons=int(live.size))


@dataclass
class DropoutRelu:
    """图8.12 and (8.5): the trained ensemble (member 0 p = 1, member 1 p = ``keep``) and its history, the
    data, RD (2,), cluster counts and occupied fractions (2,), and for the dropout member in float64 the
    effective output weights a/α (m,), hidden outputs (n, m), R_S, R₁ (8.5) and the Monte-Carlo mean and
    standard error of R_S^drop."""

    net: TwoLayerEnsemble
    hist: History
    x: Tensor
    y: Tensor
    keep: float
    rd: np.ndarray
    clusters: np.ndarray
    occupied: np.ndarray
    a_eff: np.ndarray
    hidden: np.ndarray
    r_s: float
    r_1: float
    mc_mean: float
    mc_se: float


@cached
def run_dropout_relu(*, width: int = 500, keep: float = 0.9, steps: int = 20_000, lr: float = 1e-3,
                     n_masks: int = 40_000, seed: int = 0) -> DropoutRelu:
    """图8.12 and (8.5): the target ½ReLU(−x − ⅓) + ½ReLU(x − ⅓) on 8 points of [−1, 1], two-layer ReLU
    nets in the linear regime (a, w ~ N(0, 1), α = √m), Adam at ``lr`` (the book: 10⁻³); member 0 without
    dropout (p = 1), member 1 with keep probability ``keep``, trained side by side as one ensemble.

    Returns the ensemble ``net`` and its history ``hist``, the data, RD (7.3) per member, the cluster
    count and occupied fraction of the neurons carrying half the amplitude per member, and for the
    dropout member (in float64) R_S, R₁ (8.5) and the Monte-Carlo mean and standard error of R_S^drop
    over ``n_masks`` masks.
    """
    if not 0 < keep <= 1 or steps < 1 or not 1 <= width <= 5000:
        raise ValueError(f"need 0 < keep ≤ 1, steps ≥ 1, 1 ≤ width ≤ 5000; got keep={keep}, steps={steps}, "
                         f"width={width}")
    x = torch.linspace(-1, 1, 8).reshape(-1, 1)
    y = (0.5 * torch.relu(-x - 1 / 3) + 0.5 * torch.relu(x - 1 / 3)).ravel()
    net = TwoLayerEnsemble(1, width, beta1=1.0, beta2=1.0, alpha=width ** 0.5, n_members=2, seed=seed)
    hist = train_ensemble(net, x, y, steps=steps, lr=lr, optimizer="adam", keep=[1.0, keep],
                          record_every=max(1, steps // 40), seed=seed, desc="dropout, ReLU")
    a, w = net.a.detach().numpy(), net.w.detach().numpy()
    clusters, occupied = [], []
    for k in range(2):
        amp, ang = amplitude(a[k], w[k]), orientation(w[k])
        clusters.append(count_angle_clusters(ang, amp, mass=0.5))
        occupied.append(occupied_fraction(ang, amp, mass=0.5))
    a_eff = (net.a.detach()[1] / net.alpha[1]).double().numpy()
    hidden = net.hidden(x)[1].detach().double().numpy()  # (n, m)
    r_s = 0.5 * float(np.mean((hidden @ a_eff - y.double().numpy()) ** 2))
    r_1 = dropout_regulariser(a_eff, hidden, keep)
    mc_mean, mc_se = dropout_risk_monte_carlo(a_eff, hidden, y.numpy(), keep, n_masks=n_masks, seed=seed)
    return DropoutRelu(net=net, hist=hist, x=x, y=y, keep=keep, rd=net.relative_distance(),
                       clusters=np.array(clusters), occupied=np.array(occupied), a_eff=a_eff, hidden=hidden,
                       r_s=r_s, r_1=r_1, mc_mean=mc_mean, mc_se=mc_se)


DROPOUT_RISK = ClaimSpec("ch08.dropout-risk-identity", "(8.5)",
                         "the Monte-Carlo mean of the dropout risk equals R_S + R_1 within 3 standard errors",
                         kind="identity")


def check_dropout_risk(result: DropoutRelu) -> Verdict:
    """(8.5) on a :func:`run_dropout_relu` result: |mean R_S^drop − (R_S + R₁)| ≤ 3 standard errors."""
    err = abs(result.mc_mean - (result.r_s + result.r_1))
    return DROPOUT_RISK.judge(identity("|MC mean − (R_S + R_1)|", err, 3 * result.mc_se),
                              z=(result.mc_mean - result.r_s - result.r_1) / result.mc_se,
                              r_s=result.r_s, r_1=result.r_1)


DROPOUT_CONDENSES = ClaimSpec(
    "ch08.dropout-condenses", "图8.12",
    "from a linear-regime initialisation, dropout moves the input weights at least 5 times farther (RD) "
    "and gathers the largest neurons on a few orientations, while without dropout they stay spread")


def check_dropout_condenses(result: DropoutRelu) -> Verdict:
    """图8.12 on a :func:`run_dropout_relu` result: RD(p) > 5·RD(1); the neurons carrying half the
    amplitude occupy < 50% of 36 angular bins with dropout and > 80% without."""
    rd, occ = result.rd, result.occupied
    return DROPOUT_CONDENSES.judge(
        compare("RD with dropout", float(rd[1]), ">", "5 × RD without", 5 * float(rd[0])),
        threshold("occupied fraction with dropout", float(occ[1]), "<", 0.5),
        threshold("occupied fraction without dropout", float(occ[0]), ">", 0.8),
        clusters_dropout=int(result.clusters[1]), clusters_no_dropout=int(result.clusters[0]))


@dataclass
class TanhDropout(DropoutFit):
    """图8.13–8.14: the :class:`DropoutFit` of, per initialisation (trial-major), three nets — p = 1 and
    p = keep from the linear regime, and the small initialisation without dropout — the data and the grid,
    the total variation of each member's output (trials, 3) and the target's, the mean final R_S of each
    kind (3,), R_S of the zero function, and the small initialisation (std, α)."""

    x: Tensor
    y: Tensor
    grid: Tensor
    trials: int
    tv: np.ndarray
    tv_target: float
    final_risk: np.ndarray
    zero_risk: float
    small: tuple[float, float]


#: 图8.14's small initialisation: every parameter ~ N(0, 10⁻⁶) (std 10⁻³, as in 图8.1–8.4), α = 1 —
#: the condensed regime of chapter 7 (β₁β₂/α = 10⁻⁶ = m^{−γ} with γ ≈ 2.2 > 1 at m = 500).
SMALL_INIT = (1e-3, 1.0)


@cached
def run_tanh_dropout(*, keep: float = 0.9, trials: int = 3, width: int = 500, steps: int = 5_000,
                     small: tuple[float, float] = SMALL_INIT, seed: int = 0) -> TanhDropout:
    """图8.13–8.14: f(x) = tanh(x − 6) + tanh(x + 6) on 10 evenly spaced points of [−10, 10], two-layer tanh
    nets, Adam lr 10⁻³: for each of ``trials`` initialisations p = 1 and p = ``keep`` in the linear regime
    and a net from the small initialisation ``small`` = (std, α) without dropout, one ensemble
    (:func:`run_dropout_fit`).  Returns that fit plus the total variation of each member's output on 2001
    grid points (trials, 3), the target's, the mean final R_S of each kind (3,) and R_S of the zero function."""
    x = torch.linspace(-10, 10, 10).reshape(-1, 1)
    y = target_8_13(x).ravel()
    grid = torch.linspace(-10, 10, 2001).reshape(-1, 1)
    fit = run_dropout_fit(x, y, keeps=(1.0, keep), trials=trials, width=width, steps=steps, grid=grid,
                          small=small, seed=seed)
    return TanhDropout(**{f.name: getattr(fit, f.name) for f in fields(fit)}, x=x, y=y, grid=grid, trials=trials,
                       tv=total_variation(fit.outputs).reshape(trials, 3),
                       tv_target=total_variation(target_8_13(grid).ravel()),
                       final_risk=fit.risk[-1].reshape(trials, 3).mean(axis=0),
                       zero_risk=0.5 * float((y ** 2).mean()), small=tuple(small))


DROPOUT_SIMPLER_FIT = ClaimSpec(
    "ch08.dropout-simpler-fit", "图8.13",
    "with dropout the tanh nets' mean output total variation is at least twice as close to the target's "
    "as without, while both fit the data (mean R_S below 2% of the zero function's)")


def check_dropout_simpler_fit(result: TanhDropout) -> Verdict:
    """图8.13 on a :func:`run_tanh_dropout` result: |TV̄(p) − TV*| < ½|TV̄(1) − TV*| (means over the
    initialisations), and the larger mean final R_S < 2% of the zero function's."""
    tv = result.tv[:, :2].mean(axis=0)  # p = 1, p = keep (linear regime)
    excess = np.abs(tv - result.tv_target)
    risk = result.final_risk[:2] / result.zero_risk
    return DROPOUT_SIMPLER_FIT.judge(
        compare("|TV − TV*| with dropout", float(excess[1]), "<", "½|TV − TV*| without", 0.5 * float(excess[0])),
        threshold("larger mean R_S / R_S(zero function)", float(risk.max()), "<", FIT_SHARE),
        tv_target=result.tv_target, tv_no_dropout=tv[0], tv_dropout=tv[1])


#: "Fits the data": R_S below 2% of the zero function's (图8.13–8.14).
FIT_SHARE = 0.02

DROPOUT_FAST_ROUTE = ClaimSpec(
    "ch08.dropout-fast-route", "图8.14",
    "from the usual initialisation with dropout the training loss falls below 2% of the zero function's at "
    "least 3 times sooner than from a small initialisation without dropout, which stalls on a plateau")


def fit_steps(result: TanhDropout) -> np.ndarray:
    """The first recorded step at which each member's R_S is below :data:`FIT_SHARE` of the zero function's,
    NaN where it never is; (trials, 3): p = 1, p = keep, small initialisation."""
    below = result.risk < FIT_SHARE * result.zero_risk  # (T, K)
    first = np.where(below.any(axis=0), result.steps[np.argmax(below, axis=0)], np.nan)
    return first.reshape(result.trials, 3)


def check_dropout_fast_route(result: TanhDropout, *, factor: float = 3.0) -> Verdict:
    """图8.14 on a :func:`run_tanh_dropout` result: ``factor`` × the slowest dropout net's :func:`fit_steps`
    is below the fastest small-initialisation net's.  A small-init net that never gets there within the run
    has taken more than the run's T steps: its time is bounded below by T (the comparison then holds iff
    ``factor`` × t_dropout < T); a dropout net that never gets there is a "never" (the claim fails)."""
    first = fit_steps(result)
    t_drop = float(np.max(first[:, 1])) if not np.isnan(first[:, 1]).any() else float("nan")
    t_small = np.where(np.isnan(first[:, 2]), float(result.steps[-1]), first[:, 2])
    return DROPOUT_FAST_ROUTE.judge(
        compare(f"{factor:g} × steps with dropout (slowest net)", factor * t_drop, "<",
                "steps from the small init (fastest net; T if never)", float(t_small.min())),
        steps_dropout=first[:, 1], steps_small_init=first[:, 2], steps_no_dropout=first[:, 0],
        small_init_final_risk=result.final_risk[2] / result.zero_risk, run_steps=int(result.steps[-1]))


@dataclass
class TanhFeatures(DropoutFit):
    """图8.13(d,e): the :class:`DropoutFit` of two tanh nets from one linear-regime initialisation, member 0 without
    dropout (p = 1), member 1 with keep probability p; the data, the grid, and per member the fraction of 36
    angular bins occupied by the neurons carrying half the amplitude (at the start and at the end, (2,) each),
    their orientation-cluster count (2,), the final R_S (2,) and R_S of the zero function."""

    x: Tensor
    y: Tensor
    grid: Tensor
    occupied0: np.ndarray
    occupied: np.ndarray
    clusters: np.ndarray
    final_risk: np.ndarray
    zero_risk: float


@cached
def run_tanh_features(*, keep: float = 0.9, width: int = 500, lr: float = 1e-2, steps: int = 6_000,
                      seed: int = 0) -> TanhFeatures:
    """图8.13(d,e): the data of 图8.13 (10 evenly spaced points of f = tanh(x − 6) + tanh(x + 6) on [−10, 10]), two
    two-layer tanh nets from the SAME linear-regime initialisation (a, w ~ N(0, 1), α = √m), trained by Adam at
    ``lr`` side by side (:func:`run_dropout_fit`, ``shared_init``): p = 1 and p = ``keep``.  Returns that fit with
    the features' condensation measured as in 图8.12 (:func:`~companion.core.neurons.occupied_fraction` and
    :func:`~companion.core.neurons.count_angle_clusters` of the neurons carrying half the amplitude A = |a|‖w‖)."""
    x = torch.linspace(-10, 10, 10).reshape(-1, 1)
    y = target_8_13(x).ravel()
    grid = torch.linspace(-10, 10, 2001).reshape(-1, 1)
    fit = run_dropout_fit(x, y, keeps=(1.0, keep), width=width, lr=lr, steps=steps, grid=grid, shared_init=True,
                          seed=seed)
    occupied0, occupied, clusters = [], [], []
    for k in range(2):
        occupied0.append(occupied_fraction(orientation(fit.w0[k]), amplitude(fit.a0[k], fit.w0[k]), mass=0.5))
        amp, ang = amplitude(fit.a[k], fit.w[k]), orientation(fit.w[k])
        occupied.append(occupied_fraction(ang, amp, mass=0.5))
        clusters.append(count_angle_clusters(ang, amp, mass=0.5))
    return TanhFeatures(**{f.name: getattr(fit, f.name) for f in fields(fit)}, x=x, y=y, grid=grid,
                        occupied0=np.array(occupied0), occupied=np.array(occupied), clusters=np.array(clusters),
                        final_risk=fit.risk[-1], zero_risk=0.5 * float((y ** 2).mean()))


DROPOUT_TANH_FEATURES = ClaimSpec(
    "ch08.dropout-tanh-features", "图8.13(d,e)",
    "from one linear-regime initialisation, the tanh net trained with dropout fits the data (R_S below 2% of the "
    "zero function's) and its largest neurons gather on a few orientations (fewer than 50% of 36 angular bins, "
    "less than half the bins of the same net trained without dropout)")


def check_dropout_tanh_features(result: TanhFeatures) -> Verdict:
    """图8.13(d,e) on a :func:`run_tanh_features` result: the neurons carrying half the amplitude of the dropout net
    occupy < 50% of 36 angular bins (图8.12's measure and threshold) and < ½ of the bins of the net without
    dropout, and the dropout net's final R_S < :data:`FIT_SHARE` of the zero function's."""
    occ = result.occupied
    return DROPOUT_TANH_FEATURES.judge(
        threshold("occupied fraction with dropout", float(occ[1]), "<", 0.5),
        compare("occupied fraction with dropout", float(occ[1]), "<", "½ × without", 0.5 * float(occ[0])),
        threshold("R_S with dropout / R_S(zero function)", float(result.final_risk[1] / result.zero_risk), "<",
                  FIT_SHARE),
        occupied_no_dropout=float(occ[0]), occupied_at_start=result.occupied0,
        clusters_no_dropout=int(result.clusters[0]), clusters_dropout=int(result.clusters[1]))


# --- 图8.13, bottom row: the three-layer variant, dropout after both hidden layers -----------------------

@dataclass
class ThreeLayerDropout:
    """图8.13's three-layer tanh nets, per initialisation (trial-major) one with p = 1 and one with p = keep from the
    SAME start: members' keep probabilities (K,), outputs on the grid (K, G), the first layer's input weights
    w = (w_j, b_j) at the end and start (K, m, 2) with each first-layer neuron's outgoing-weight norm ‖W⁽²⁾_j‖ at the
    end and start (K, m), R_S (T, K) at ``steps`` (T,), the data and grid, the total variation of each output
    (trials, 2) and the target's, the occupied fraction of 36 angular bins of the neurons carrying half the
    amplitude A_j = ‖W⁽²⁾_j‖·‖w_j‖ at the start and at the end (trials, 2), their number of orientation clusters
    at the end (trials, 2), the final R_S (trials, 2) and R_S of the zero function."""

    keep: np.ndarray
    outputs: np.ndarray
    w: np.ndarray
    w0: np.ndarray
    out_norm: np.ndarray
    out_norm0: np.ndarray
    steps: np.ndarray
    risk: np.ndarray
    x: Tensor
    y: Tensor
    grid: Tensor
    trials: int
    tv: np.ndarray
    tv_target: float
    occupied0: np.ndarray
    occupied: np.ndarray
    clusters: np.ndarray
    final_risk: np.ndarray
    zero_risk: float


def three_layer_output(net: BatchedMLP, x: Tensor, keep: Tensor | None = None,
                       gen: torch.Generator | None = None) -> Tensor:
    """f(x) = W⁽³⁾·D₂ tanh(W⁽²⁾·D₁ tanh(W⁽¹⁾x + b⁽¹⁾)/√m + b⁽²⁾)/√m + b⁽³⁾ for the members of a [1, m, m, 1]
    :class:`~companion.core.nets.BatchedMLP` with N(0, 1) parameters (the linear regime, NTK scaling as in
    :func:`run_dropout_fit`).  With ``keep`` (K,) the dropout masks D_l = diag(1 + η) of §8.4.1 (η = −1 with
    probability 1 − p, 1/p − 1 otherwise) follow BOTH hidden layers, as in the book's three-layer net of 图8.13;
    their uniforms are drawn from ``gen`` on the CPU.  x: (N, 1); returns (K, N)."""
    h = x.expand(net.n_members, *x.shape)  # (K, N, 1)
    scale = [1.0] + [net.widths[l] ** -0.5 for l in range(1, len(net.widths) - 1)]
    for l, (w, b) in enumerate(zip(net.weights, net.biases)):
        h = torch.baddbmm(b, h, w, alpha=scale[l])  # (K, N, m_{l+1})
        if l == len(net.weights) - 1:
            break
        h = torch.tanh(h)
        if keep is not None:
            p = keep.reshape(-1, 1, 1)
            draw = torch.rand(h.shape, generator=gen, dtype=h.dtype).to(h.device)
            h = h * (draw < p) / p  # (1 + η) ⊙ h
    return h[..., 0]


@cached
def run_three_layer_dropout(*, keep: float = 0.9, trials: int = 3, width: int = 200, lr: float = 1e-2,
                            steps: int = 4_000, seed: int = 0) -> ThreeLayerDropout:
    """图8.13 (the book's three-layer net): the data of 图8.13 (10 evenly spaced points of f = tanh(x − 6) +
    tanh(x + 6) on [−10, 10]); for each of ``trials`` initialisations two three-layer tanh nets (1-m-m-1,
    :func:`three_layer_output`) from the same linear-regime start, p = 1 and p = ``keep`` with dropout after both
    hidden layers, all 2·trials trained by Adam at ``lr`` as one ensemble on the loss ½⟨(f − y)²⟩ through the
    engine (:func:`~companion.core.train.run`).  Features as in the book: the first layer's input weights only,
    each neuron's amplitude A_j = ‖W⁽²⁾_j‖·‖w_j‖ (its outgoing weights' norm in place of |a_j|)."""
    if not 0 < keep <= 1 or trials < 1 or not 2 <= width <= 2000 or steps < 1 or not lr > 0:
        raise ValueError(f"need 0 < keep ≤ 1, trials ≥ 1, 2 ≤ width ≤ 2000, steps ≥ 1, lr > 0; got keep={keep}, "
                         f"trials={trials}, width={width}, steps={steps}, lr={lr}")
    x = torch.linspace(-10, 10, 10).reshape(-1, 1)
    y = target_8_13(x).ravel()
    grid = torch.linspace(-10, 10, 2001).reshape(-1, 1)
    keeps = torch.tensor([1.0, keep] * trials)  # (K,) trial-major
    net = BatchedMLP([1, width, width, 1], 2 * trials, act="tanh", init_std=1.0, generator=generator(seed))
    with torch.no_grad():
        for p in (*net.weights, *net.biases):
            p.copy_(p[torch.arange(2 * trials) // 2 * 2])  # both members of a trial start alike
    first0 = torch.cat([net.biases[0], net.weights[0]], dim=1).transpose(1, 2)[..., [1, 0]].detach().clone()
    norm0 = net.weights[1].detach().norm(dim=2).clone()  # (K, m)
    gen = generator(seed, stream=1)
    opt = make_optimizer("adam", net.parameters(), lr)

    def risk(dropout: bool) -> Tensor:  # R_S per member (K,), with dropout masks or without
        return 0.5 * ((three_layer_output(net, x, keeps if dropout else None, gen) - y) ** 2).mean(dim=1)

    def record(step: int) -> dict[str, Tensor]:
        with torch.no_grad():
            return {"risk": risk(False)}

    hist = run(descend(opt, lambda: risk(True)), steps=steps, record=record, record_every=max(1, steps // 100),
               desc="three-layer dropout")
    with torch.no_grad():
        outputs = three_layer_output(net, grid).numpy()  # (K, G)
    w = torch.cat([net.biases[0], net.weights[0]], dim=1).transpose(1, 2)[..., [1, 0]].detach().numpy()  # (K, m, 2)
    out_norm = net.weights[1].detach().norm(dim=2).numpy()  # (K, m)
    occupied0 = [occupied_fraction(orientation(first0[k]), amplitude(norm0[k], first0[k]), mass=0.5)
                 for k in range(2 * trials)]
    amp, ang = [amplitude(out_norm[k], w[k]) for k in range(2 * trials)], orientation(w)
    occupied = [occupied_fraction(ang[k], amp[k], mass=0.5) for k in range(2 * trials)]
    clusters = [count_angle_clusters(ang[k], amp[k], mass=0.5) for k in range(2 * trials)]
    return ThreeLayerDropout(keep=keeps.numpy(), outputs=outputs, w=w, w0=first0.numpy(), out_norm=out_norm,
                             out_norm0=norm0.numpy(), steps=hist.steps, risk=hist["risk"], x=x, y=y, grid=grid,
                             trials=trials, tv=total_variation(outputs).reshape(trials, 2),
                             tv_target=total_variation(target_8_13(grid).ravel()),
                             occupied0=np.reshape(occupied0, (trials, 2)), occupied=np.reshape(occupied, (trials, 2)),
                             clusters=np.reshape(clusters, (trials, 2)),
                             final_risk=hist["risk"][-1].reshape(trials, 2), zero_risk=0.5 * float((y ** 2).mean()))


THREE_LAYER_SIMPLER_FIT = ClaimSpec(
    "ch08.dropout-three-layer-fit", "图8.13",
    "in the three-layer tanh nets with dropout after both hidden layers, the mean output total variation is at "
    "least twice as close to the target's as without dropout, while both fit the data (mean R_S below 2% of the "
    "zero function's)")


def check_three_layer_simpler_fit(result: ThreeLayerDropout) -> Verdict:
    """图8.13 (three-layer nets) on a :func:`run_three_layer_dropout` result, the test of
    :func:`check_dropout_simpler_fit`: |TV̄(p) − TV*| < ½|TV̄(1) − TV*| (means over the initialisations), and the
    larger mean final R_S < :data:`FIT_SHARE` of the zero function's."""
    tv = result.tv.mean(axis=0)  # p = 1, p = keep
    excess = np.abs(tv - result.tv_target)
    risk = result.final_risk.mean(axis=0) / result.zero_risk
    return THREE_LAYER_SIMPLER_FIT.judge(
        compare("|TV − TV*| with dropout", float(excess[1]), "<", "½|TV − TV*| without", 0.5 * float(excess[0])),
        threshold("larger mean R_S / R_S(zero function)", float(risk.max()), "<", FIT_SHARE),
        tv_target=result.tv_target, tv_no_dropout=tv[0], tv_dropout=tv[1])


THREE_LAYER_FEATURES = ClaimSpec(
    "ch08.dropout-three-layer-features", "图8.13",
    "in the three-layer tanh nets with dropout after both hidden layers, the first layer's neurons carrying half "
    "the amplitude gather on fewer than half as many orientation clusters as those of the same nets trained "
    "without dropout, and occupy fewer than half of the angular bins they occupied at the start, while the "
    "dropout nets fit the data (mean R_S below 2% of the zero function's)")


def check_three_layer_features(result: ThreeLayerDropout) -> Verdict:
    """图8.13's three-layer features on a :func:`run_three_layer_dropout` result (means over the initialisations;
    first layer, neurons carrying half the amplitude A_j = ‖W⁽²⁾_j‖·‖w_j‖): the number of orientation clusters
    (:func:`~companion.core.neurons.count_angle_clusters`) with dropout < ½ × without; the fraction of 36 angular
    bins they occupy (图8.12's measure) < ½ × at the start; the dropout nets' final R_S < :data:`FIT_SHARE` of the
    zero function's."""
    clusters, occupied, occupied0 = (v.mean(axis=0) for v in (result.clusters, result.occupied, result.occupied0))
    return THREE_LAYER_FEATURES.judge(
        compare("clusters with dropout", float(clusters[1]), "<", "½ × without", 0.5 * float(clusters[0])),
        compare("occupied fraction with dropout", float(occupied[1]), "<", "½ × at the start",
                0.5 * float(occupied0[1])),
        threshold("R_S with dropout / R_S(zero function)", float(result.final_risk[:, 1].mean() / result.zero_risk),
                  "<", FIT_SHARE),
        occupied_no_dropout=float(occupied[0]), clusters_each=result.clusters)


@dataclass
class ExplorerFrame(CondensationProcess):
    """What the explorer shows: a :class:`CondensationProcess`, the snapshot ``index`` the scrubber points at,
    the number of orientation clusters there and the run's GD step size ``lr`` (the time axis is t = lr·step)."""

    index: int
    clusters: int
    lr: float


#: The explorer's starting controls: the setting of §8.1 (图8.1–8.4).
EXPLORER_DEFAULTS = {"init_std": 1e-3, "act": "relu", "keep": 1.0, "width": 100}

#: The step size of the chapter's run of 图8.1–8.4 (:func:`run_condensation`'s default), which fixes the
#: training time t = η·steps that the explorer's runs cover.
CHAPTER_LR = 0.05

#: The explorer trains every setting but its starting one in at most this many GD steps (one CPU-second).
EXPLORER_STEPS = 1_200

#: The explorer's largest step size: from a small initialisation the fitted nets sharpen to ‖∇²R_S‖₂ ≈ 2.6
#: by t = 600 (GD is stable below 2/2.6 ≈ 0.77); at η = 0.5 their snapshots, cluster counts and loss follow
#: the chapter's η = 0.05 run at the same time t.
EXPLORER_MAX_LR = 0.5

#: The explorer's step size is at most this over ‖∇²R_S(θ₀)‖₂, ¾ of GD's stability limit 2/‖∇²R_S‖₂.  From a
#: large initialisation the Hessian is large at once (init std 1, m = 100: ReLU 72, x·tanh 143), and the
#: chapter's η = 0.05 catapults there or diverges.
EXPLORER_STABILITY = 1.5



def plot_dropout_fits(axes, run: TanhDropout | ThreeLayerDropout, names: Sequence[str], amplitudes: np.ndarray,
                      amplitudes0: np.ndarray, feature_titles: Sequence[str]) -> None:
    """图8.13's five panels for the first initialisation of ``run``: (a) R_S over the steps of each net named in
    ``names``, (b, c) each net's output against the target and the data, (d, e) each net's first-layer features
    (orientation, amplitude ``amplitudes[k]``; start ``amplitudes0[k]``) titled ``feature_titles[k]``."""
    grid = run.grid.ravel()
    for k, name in enumerate(names):
        axes[0].semilogy(run.steps, run.risk[:, k], label=name)
        axes[1 + k].plot(grid, target_8_13(run.grid).ravel(), "--", color="0.4", label="target")
        axes[1 + k].plot(grid, run.outputs[k], color="#d62728", label="fit")
        axes[1 + k].plot(run.x.ravel(), run.y, "*", ms=7, color="k")
        axes[1 + k].set_title(f"{name}: TV = {run.tv[0, k]:.2f}")
        plot_feature_scatter(axes[3 + k], amplitudes[k], run.w[k], a0=amplitudes0[k], w0=run.w0[k],
                             title=feature_titles[k])
    axes[0].set_title("R_S (no dropout at evaluation)")
    axes[0].set_xlabel("step")
    axes[0].legend()
    axes[1].legend()


def initial_sharpness(*, width: int, init_std: float, act: str, seed: int) -> float:
    """‖∇²R_S‖₂ at the initialisation of :func:`run_condensation` with these arguments (its data, n = 50),
    by :func:`~companion.core.ensemble.hessian_norms`."""
    x = torch.linspace(-1, 1, 50).reshape(-1, 1)
    y = target_8_2(x).ravel()
    net = TwoLayerEnsemble(1, width, beta1=init_std, beta2=init_std, alpha=1.0, act=act, n_members=1, seed=seed)

    def risk_sum(a: Tensor, w: Tensor) -> Tensor:
        out = torch.bmm(net.hidden(x, w), a.unsqueeze(-1)).squeeze(-1)  # (1, n), α = 1
        return 0.5 * (out - y).pow(2).mean(dim=1).sum()

    return float(hessian_norms(risk_sum, net.a, net.w, generator=generator(seed))[0])


#: The bounds of :func:`run_explorer_condensation`'s numbers: the explorer's sliders for the init std, keep
#: probability and width; at most 100 000 steps of the chapter's run (the explorer trains at most
#: :data:`EXPLORER_STEPS` of them).
EXPLORER_BOUNDS = Bounds(width=integer(10, 500), init_std=real(1e-5, 1.0), keep=real(0.5, 1.0),
                         steps=integer(1, 100_000), seed=SEED)


def run_explorer_condensation(*, width: int, init_std: float, act: str, keep: float, steps: int,
                              seed: int) -> tuple[CondensationProcess, float]:
    """The explorer's run of :func:`run_condensation` for a setting and its step size η: it covers the chapter's
    training time t = :data:`CHAPTER_LR`·``steps`` in at most :data:`EXPLORER_STEPS` steps, with η capped by
    :data:`EXPLORER_MAX_LR` and by :data:`EXPLORER_STABILITY`/‖∇²R_S(θ₀)‖₂ (:func:`initial_sharpness`) —
    where a cap binds, the run covers a shorter time η·:data:`EXPLORER_STEPS`.  A number outside
    :data:`EXPLORER_BOUNDS` raises a ValueError naming it."""
    EXPLORER_BOUNDS.check(width=width, init_std=init_std, keep=keep, steps=steps, seed=seed)
    n_steps = min(steps, EXPLORER_STEPS)
    sharpness = initial_sharpness(width=width, init_std=init_std, act=act, seed=seed)
    lr = min(CHAPTER_LR * steps / n_steps, EXPLORER_MAX_LR, EXPLORER_STABILITY / sharpness)
    return run_condensation(width=width, init_std=init_std, act=act, keep=keep, steps=n_steps, lr=lr,
                            n_snapshots=41, seed=seed, progress=False), lr


def make_explorer(seed: int | None = None, steps: int = 8_000, initial: CondensationProcess | None = None):
    """Init std, activation, keep probability p, width, training time t → polar scatter, output, loss over the
    training time t = η·step; the nets start from ``seed`` (default: the active seed).  The time slider reads t
    as the pictures do, from 0 to the chapter's t = η·``steps`` (600) in 40 even steps, and shows the snapshot
    nearest to it; a run that covers a shorter time (below) shows its last snapshot for every later t.

    The starting controls (:data:`EXPLORER_DEFAULTS`) show the chapter's run of 图8.1–8.4: ``initial`` if given
    (:func:`run_condensation` with ``steps`` steps, 41 snapshots and this seed, e.g. the notebook's run), shown
    without training it again, else that run trained here.  Every other setting is smaller than it, so that a
    move takes about a CPU-second instead of seven (quick profile): :func:`run_explorer_condensation` trains
    :data:`EXPLORER_STEPS` GD steps instead of ``steps`` (12 000), at a step size up to 10 times the chapter's
    η = 0.05, which covers the same time t = 600 — the snapshots, cluster counts and loss of the small
    initialisations follow the chapter's run at the same t.  The step size stays below GD's stability limit
    at the initialisation, so from a large one (where the chapter's η catapults the net or diverges: init std 1
    with x·tanh gives NaN) the run covers a shorter time, by which the net has fitted the data without
    condensing; so do sigmoid and softplus at large widths (σ(0) ≠ 0 makes the Hessian grow with m), which
    may then stop before their neurons condense."""
    from functools import lru_cache

    from companion.kit import widgets

    seed = active_seed() if seed is None else seed
    EXPLORER_BOUNDS.check(steps=steps, seed=seed)
    if initial is not None and (int(initial.snap_steps[-1]) != steps or len(initial.snap_steps) != 41):
        raise ValueError(f"initial must be a run of {steps} steps with 41 snapshots; got "
                         f"{int(initial.snap_steps[-1])} steps, {len(initial.snap_steps)} snapshots")

    @lru_cache(maxsize=8)
    def train(init_std: float, act: str, keep: float, width: int) -> tuple[CondensationProcess, float]:
        if dict(init_std=init_std, act=act, keep=keep, width=width) == EXPLORER_DEFAULTS:
            if initial is not None:
                return initial, CHAPTER_LR
            return run_condensation(width=width, init_std=init_std, act=act, keep=keep, steps=steps,
                                    n_snapshots=41, seed=seed, progress=False), CHAPTER_LR
        return run_explorer_condensation(width=width, init_std=init_std, act=act, keep=keep, steps=steps,
                                         seed=seed)

    def compute(init_std: float, act: str, keep: float, width: int, t: float) -> ExplorerFrame:
        proc, lr = train(init_std, act, keep, width)
        i = int(np.argmin(np.abs(lr * np.asarray(proc.snap_steps) - t)))  # the snapshot nearest to time t
        clusters = count_angle_clusters(orientation(proc.w[i]), amplitude(proc.a[i], proc.w[i]))
        return ExplorerFrame(**{f.name: getattr(proc, f.name) for f in fields(proc)}, index=i, clusters=clusters,
                             lr=lr)

    def draw(result: ExplorerFrame, fig) -> None:
        i = result.index
        ax0 = fig.add_subplot(1, 3, 1, projection="polar")
        plot_polar(ax0, result.w[i], result.a[i], dead=result.dead,
                   title=f"t = {result.lr * result.snap_steps[i]:.4g} (step {result.snap_steps[i]}, "
                         f"η = {result.lr:.3g}): {result.clusters} clusters")
        ax1 = fig.add_subplot(1, 3, 2)
        ax1.plot(result.grid, result.target, "--", color="0.4")
        ax1.plot(result.grid, result.outputs[i], color="#d62728")
        ax1.plot(result.x, result.y, ".", color="#1f77b4")
        ax1.set_title("output")
        ax2 = fig.add_subplot(1, 3, 3)
        ax2.semilogy(result.lr * result.steps, result.loss)
        ax2.axvline(result.lr * result.snap_steps[i], color="0.5", ls=":")
        ax2.set_title("loss R_S")
        ax2.set_xlabel("time t = η·step")

    start = EXPLORER_DEFAULTS
    controls = {"init_std": widgets.log_slider(start["init_std"], 1e-5, 1.0, "init std"),
                "act": widgets.dropdown(start["act"], ("relu", "tanh", "sigmoid", "softplus", "xtanh", "x2tanh"),
                                        "activation"),
                "keep": widgets.float_slider(start["keep"], 0.5, 1.0, 0.05, "keep prob p"),
                "width": widgets.int_slider(start["width"], 10, 500, "width m", step=10),
                "t": widgets.float_slider(CHAPTER_LR * steps, 0.0, CHAPTER_LR * steps, CHAPTER_LR * steps / 40,
                                          "time t")}
    return widgets.Explorer("Condensation (ch. 8)", controls, compute, draw)


# --- 图8.5: condensation in a convolutional layer ----------------------------------------------------

def line_share(cosines: np.ndarray) -> float:
    """Top eigenvalue of a cosine-similarity matrix D (C, C) divided by C: the share of the direction Gram
    (1/C) Σ ûûᵀ on its leading line (the two share their nonzero eigenvalues).  1 when every vector lies
    on one line (±û), about 1/d for C ≫ d random directions in R^d."""
    cosines = np.asarray(cosines, dtype=float)
    if cosines.ndim != 2 or cosines.shape[0] != cosines.shape[1]:
        raise ValueError(f"expected a square cosine matrix; got shape {cosines.shape}")
    return float(np.linalg.eigvalsh((cosines + cosines.T) / 2)[-1] / len(cosines))


def line_sides(cosines: np.ndarray) -> tuple[int, int]:
    """How many of the vectors lie on each side of the top line of their cosine matrix D (C, C): the signs of
    D's leading eigenvector (whose entries are proportional to each unit vector's projection on that line), as
    counts (larger side, smaller side).  Two opposite directions (图8.5(e)) fill both sides."""
    cosines = np.asarray(cosines, dtype=float)
    if cosines.ndim != 2 or cosines.shape[0] != cosines.shape[1]:
        raise ValueError(f"expected a square cosine matrix; got shape {cosines.shape}")
    lead = np.linalg.eigh((cosines + cosines.T) / 2)[1][:, -1]
    plus = int((lead > 0).sum())
    return max(plus, len(lead) - plus), min(plus, len(lead) - plus)


def channel_cosines(outputs: ArrayLike) -> np.ndarray:
    """Cosine matrix (8.4) of the channels of a convolution layer's outputs (N, P, C): channel c is the
    vector of its outputs over every image and position (length N·P), as in 图8.5(c, f)."""
    out = _np(outputs).astype(float)
    if out.ndim != 3:
        raise ValueError(f"outputs must have shape (N, P, C); got {out.shape}")
    return cosine_similarity_matrix(out.reshape(-1, out.shape[-1]).T)


@dataclass
class ConvCondensation:
    """图8.5: one-conv-layer CNNs (member 0 small init, member 1 the control at ``control_std`` scale) on the
    digits.  Per member: ``init_std`` (K,) of the conv layer, the step at which the training accuracy first
    reached 100% (``fit_step``, −1 if never), the kernels at initialisation and at that step (K, C, 9),
    the cosine matrices of the kernels (init, fitted) and of the channels' outputs on the training and
    test images at the fitted step (K, C, C); the loss and training accuracy (T, K) at ``steps`` (T,);
    and the test accuracy at the fitted step (K,)."""

    init_std: np.ndarray
    fit_step: np.ndarray
    kernels0: np.ndarray
    kernels: np.ndarray
    kernel_cos0: np.ndarray
    kernel_cos: np.ndarray
    output_cos: np.ndarray
    steps: np.ndarray
    loss: np.ndarray
    accuracy: np.ndarray
    test_accuracy: np.ndarray

    def share(self, which: str) -> np.ndarray:
        """:func:`line_share` per member of ``which`` ∈ {"kernels0", "kernels", "outputs"}, (K,)."""
        mats = {"kernels0": self.kernel_cos0, "kernels": self.kernel_cos, "outputs": self.output_cos}[which]
        return np.array([line_share(m) for m in mats])


def upsampled(x: Tensor, size: int) -> Tensor:
    """Flattened 8×8 digits (N, 64) → (N, size, size) by bilinear interpolation (the digits themselves at 8).
    On MNIST's 28×28 grid a 3×3 kernel sees a smooth piece of a stroke; on the 8×8 digits one pixel is a 4×4
    block of the original scan, and the patches point in many more directions."""
    images = x.reshape(-1, 1, 8, 8)
    if size != 8:
        images = torch.nn.functional.interpolate(images, size=(size, size), mode="bilinear", align_corners=False)
    return images[:, 0]


@cached
def run_cnn_condensation(*, n_train: int = 300, n_test: int = 300, channels: int = 32, small_std: float = 1e-4,
                         control_std: float | None = None, lr: float = 1e-3, steps: int = 1_500,
                         optimizer: str = "adam", record_every: int = 10, image_size: int = 8,
                         seed: int = 0) -> ConvCondensation:
    """图8.5 on the bundled 8×8 digits (:func:`companion.core.data.digits`, standing in for MNIST), interpolated
    to ``image_size``×``image_size`` (:func:`upsampled`; 8: as they are): a
    :class:`~companion.core.nets.BatchedConvNet` with ``channels`` 3×3 tanh kernels and a fully connected
    softmax layer, cross-entropy loss, full-batch Adam, two members trained side by side: every parameter of
    member 0 ~ N(0, ``small_std``²) (the book: N(0, 96⁻⁸)), member 1 the control with LeCun's scale,
    std 1/√fan-in per layer (conv 1/3, fully connected 1/√(P·C), P positions), or ``control_std`` for every
    layer if given.

    Each member is looked at when its training accuracy first reaches 100% (checked every
    ``record_every`` steps; the book trains until then), or at the last step if it never does.  The net trains
    on the settings' device (:func:`~companion.core.train.on_device`); what follows reads its records on the CPU."""
    if n_train < 10 or channels < 2 or steps < record_every or not small_std > 0 or not lr > 0:
        raise ValueError(f"need n_train ≥ 10, channels ≥ 2, steps ≥ record_every, small_std > 0, lr > 0; got "
                         f"n_train={n_train}, channels={channels}, steps={steps}, small_std={small_std}, lr={lr}")
    if image_size < 8:
        raise ValueError(f"image_size must be ≥ 8 (the digits' own size); got {image_size}")
    data = digits(n_train, n_test, seed=seed)
    images, labels = upsampled(data.x, image_size), data.labels
    test_images = upsampled(data.x_test, image_size)
    positions = (image_size - 3 + 1) ** 2
    conv_std = [small_std, 1 / 3 if control_std is None else control_std]
    fc_std = [small_std, (positions * channels) ** -0.5 if control_std is None else control_std]
    net = BatchedConvNet(image_size, channels, 10, 2, kernel=3, act="tanh", conv_std=conv_std, fc_std=fc_std,
                         generator=generator(seed, 1))
    kernels0 = net.kernels.detach().numpy().copy()

    with on_device(net) as device:
        images_on, labels_on = images.to(device), labels.to(device)

        def loss() -> Tensor:  # cross-entropy per member, (K,)
            return cross_entropy(net(images_on), labels_on)  # logits (K, N, 10)

        def record(step: int) -> dict[str, Tensor]:
            with torch.no_grad():
                logits = net(images_on)
                return {"loss": cross_entropy(logits, labels_on), "accuracy": accuracy(logits, labels_on),
                        "kernels": net.kernels.detach().clone(), "bias": net.conv_bias.detach().clone(),
                        "fc": net.fc.detach().clone(), "fc_bias": net.fc_bias.detach().clone()}

        hist = run(descend(make_optimizer(optimizer, net.parameters(), lr), loss), steps=steps, record=record,
                   record_every=record_every, stop=lambda row: bool((row["accuracy"] >= 1).all()),
                   desc="one-conv-layer CNN")
    fitted = hist["accuracy"] >= 1  # (T, K)
    rows = np.where(fitted.any(axis=0), np.argmax(fitted, axis=0), len(hist.steps) - 1)
    both = torch.cat([images, test_images])
    kernels, output_cos, test_acc = [], [], []
    with torch.no_grad():
        for k, r in enumerate(rows):
            u, b = torch.as_tensor(hist["kernels"][r]), torch.as_tensor(hist["bias"][r])
            feats = net.features(both, u, b)[k]  # (N + N_test, P, C)
            output_cos.append(channel_cosines(feats.numpy()))
            kernels.append(u[k].numpy())
            logits = torch.baddbmm(torch.as_tensor(hist["fc_bias"][r])[:, None, :],
                                   net.features(test_images, u, b).flatten(2), torch.as_tensor(hist["fc"][r]))[k]
            test_acc.append(float((logits.argmax(-1) == data.labels_test).float().mean()))
    return ConvCondensation(init_std=np.array(conv_std), fit_step=np.where(fitted.any(axis=0), hist.steps[rows], -1),
                            kernels0=kernels0, kernels=np.stack(kernels),
                            kernel_cos0=np.stack([cosine_similarity_matrix(u) for u in kernels0]),
                            kernel_cos=np.stack([cosine_similarity_matrix(u) for u in kernels]),
                            output_cos=np.stack(output_cos), steps=hist.steps, loss=hist["loss"],
                            accuracy=hist["accuracy"], test_accuracy=np.array(test_acc))


def plot_conv_condensation(axes, result: ConvCondensation) -> None:
    """图8.5's panels for each member of :func:`run_cnn_condensation` (small init, control), four ``axes`` a
    member: (a, d) loss and 1.001 − training accuracy over the steps, (b) the kernels' cosine map (8.4) at t = 0,
    (e) at the fitted step, (f) the channels' outputs' map there, each titled with its :func:`line_share`."""
    for k, name in enumerate(("small init", "control")):
        ax = axes[4 * k]
        ax.semilogy(result.steps, result.loss[:, k], label="loss")
        ax.semilogy(result.steps, 1.001 - result.accuracy[:, k], label="1.001 − train acc.")
        ax.set_title(f"{name}: fitted at step {result.fit_step[k]}", fontsize=9)
        ax.set_xlabel("step")
        ax.legend(fontsize=6)
        for ax, mat, what in zip(axes[4 * k + 1: 4 * k + 4],
                                 (result.kernel_cos0[k], result.kernel_cos[k], result.output_cos[k]),
                                 ("kernels, t = 0", "kernels, fitted", "outputs, fitted")):
            plot_cosine_map(ax, mat, f"{name}: {what}\nshare on top line {line_share(mat):.2f}")


CNN_CONDENSATION = ClaimSpec(
    "ch08.cnn-condensation", "图8.5",
    "from a small initialisation the kernels of a convolution layer, random at first, have condensed when the "
    "training set is fitted — far more than from the usual initialisation, which stays random — and the "
    "layer's outputs are condensed further than its kernels (a relative statement on the 8×8 digits; the book's "
    "one line, two opposite directions, is ch08.cnn-one-line at a finer resolution)")

#: "Random" / "not condensed": more than half of the direction Gram's trace off its top line (C ≫ 9 random
#: 9-d kernels leave about 8/9 off it).  "About one line" (the book's "two opposite directions"): at most a
#: quarter off it.
CNN_OFF_LINE_SPREAD, CNN_OFF_LINE_CONDENSED = 0.5, 0.25
#: "Two opposite directions", not one: each side of the line holds at least an eighth of the C = 32 kernels.
CNN_OPPOSITE_SIDE_MIN = 4


def _cnn_off(result: ConvCondensation) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """off = 1 − :func:`line_share` of the kernels at t = 0, the fitted kernels and outputs (each (K,)), with
    NaN ("never") for a member that never fitted the training set; and whether each member fitted."""
    fitted = result.fit_step >= 0
    never = lambda v: np.where(fitted, v, np.nan)  # noqa: E731
    return (1 - result.share("kernels0"), never(1 - result.share("kernels")), never(1 - result.share("outputs")),
            fitted)


def check_cnn_condensation(result: ConvCondensation) -> Verdict:
    """图8.5 on :func:`run_cnn_condensation`, with off = 1 − :func:`line_share` (the share of the kernels'
    cosine matrix's trace off its top line): small init at t = 0 off > ½ (random); when fitted, the small
    init's kernels are more condensed than the control's (off below), the control's off > ½, and the small
    init's outputs' off is below its kernels'.  A member that never fitted the training set is a "never"."""
    off0, off, off_out, _ = _cnn_off(result)
    return CNN_CONDENSATION.judge(
        threshold("small init: kernels off the top line at t = 0", float(off0[0]), ">", CNN_OFF_LINE_SPREAD),
        compare("small init: kernels off the top line, fitted", float(off[0]), "<", "control's", float(off[1])),
        threshold("control: kernels off the top line, fitted", float(off[1]), ">", CNN_OFF_LINE_SPREAD),
        compare("small init: outputs off the top line", float(off_out[0]), "<", "its kernels'", float(off[0])),
        fit_steps=result.fit_step, test_accuracy=result.test_accuracy)


CNN_ONE_LINE = ClaimSpec(
    "ch08.cnn-one-line", "图8.5",
    "from a small initialisation the kernels of a convolution layer and the layer's outputs have condensed onto "
    "about one line (two opposite directions) when the training set is fitted", validation_seeds=REVALIDATION_SEEDS)


def check_cnn_one_line(result: ConvCondensation, member: int = 0) -> Verdict:
    """图8.5(e, f), the book's "two opposite directions": when ``member`` (0, the small initialisation) has fitted
    the training set, its kernels and its channels' outputs each keep at most :data:`CNN_OFF_LINE_CONDENSED` of
    their direction Gram's trace off the top line (:func:`line_share`), and the line's two opposite directions
    each hold at least :data:`CNN_OPPOSITE_SIDE_MIN` kernels (:func:`line_sides`).  ``member=1``, the LeCun-scale
    net of the same run, is the book's contrast.  A member that never fitted is a "never"."""
    if member not in (0, 1):
        raise ValueError(f"member must be 0 (small init) or 1 (control); got {member}")
    _, off, off_out, _ = _cnn_off(result)
    second = float(np.linalg.eigvalsh(result.kernel_cos[member])[-2] / result.kernel_cos.shape[-1])
    smaller = line_sides(result.kernel_cos[member])[1]  # never fitted: the kernels at the last step
    return CNN_ONE_LINE.judge(
        threshold("kernels off the top line, fitted", float(off[member]), "<=", CNN_OFF_LINE_CONDENSED),
        threshold("outputs off the top line, fitted", float(off_out[member]), "<=", CNN_OFF_LINE_CONDENSED),
        count("kernels on the line's smaller side", smaller, ">=", CNN_OPPOSITE_SIDE_MIN),
        member=member, second_line_share=second)


# --- 图8.9: the initial stage is a loss plateau ------------------------------------------------------

INITIAL_PLATEAU = ClaimSpec(
    "ch08.initial-plateau", "图8.9",
    "from the small initialisation of 图8.10 the loss first stalls near its initial value (the initial stage, "
    "up to about epoch 100) and only then falls")

#: "Stalls": the loss has fallen by at most 10% at the end of the initial stage; "then falls": by the end of
#: the run it is below half of its value there.
STAGE_DROP, LATER_FALL = 0.1, 0.5


def check_initial_plateau(result: InitialCondensation, *, stage: int = 100) -> Verdict:
    """图8.9 on :func:`run_initial_condensation` recorded along the way: in every net (worst one checked)
    1 − R_S(stage)/R_S(0) ≤ :data:`STAGE_DROP` and R_S(end)/R_S(stage) < :data:`LATER_FALL`."""
    if result.steps is None or result.risk is None or result.steps[-1] <= stage:
        raise ValueError(f"图8.9 needs a run recorded past step {stage} (record_every and steps > {stage})")
    i = int(np.argmin(np.abs(result.steps - stage)))
    if result.steps[i] != stage:
        raise ValueError(f"step {stage} was not recorded; recorded steps are every {result.steps[1]}")
    early = 1 - result.risk[i] / result.risk[0]  # (K,)
    later = result.risk[-1] / result.risk[i]
    return INITIAL_PLATEAU.judge(
        threshold(f"fall of the loss by step {stage} (worst net)", float(early.max()), "<=", STAGE_DROP),
        threshold(f"R_S(end)/R_S({stage}) (worst net)", float(later.max()), "<", LATER_FALL),
        end=int(result.steps[-1]), fall_by_stage=early, end_over_stage=later)


# --- 图8.6: a residual CNN from the default initialisation — the last layer condenses, the first does not ---

def cosine_participation(cosines: ArrayLike) -> float:
    """Effective number of lines of C vectors from their cosine matrix D (C, C) (8.4): 1 / mean_ij D_ij².

    The direction Gram (1/C) Σ ûûᵀ and D/C share their nonzero eigenvalues λ_i, and Σ λ_i² = ‖D‖_F² / C², so this
    is the participation ratio 1 / Σ λ_i² of :func:`~companion.core.neurons.effective_direction_count`, read off
    the heat map itself (its mean squared entry): 1 for vectors on one line, L for L orthogonal lines shared
    equally, about C·d/(C + d) for C random directions in R^d.  It needs only the C × C matrix, so it serves the
    channels' outputs too (vectors of N·P entries).  A zero vector (a dead ReLU channel, silent on every image) has
    no direction: :func:`~companion.core.neurons.cosine_similarity_matrix` gives it a row of zeros, diagonal
    included, and it is left out (counted, it would add lines that are not there)."""
    d = _np(cosines).astype(float)
    if d.ndim != 2 or d.shape[0] != d.shape[1] or len(d) == 0:
        raise ValueError(f"expected a square cosine matrix; got shape {d.shape}")
    live = np.diag(d) > 0.5
    if not live.any():
        raise ValueError("every vector of the cosine matrix is zero (no diagonal entry is 1): no direction to count")
    return float(1.0 / np.mean(d[np.ix_(live, live)] ** 2))


class BatchedResidualCNN(torch.nn.Module):
    """K small residual CNNs as one batched computation (grouped convolutions): 图8.6's CPU analogue.

    Member k on an s×s image x with ``in_channels`` colour channels (3 for the RGB patches of
    :func:`photo_patches`, 1 for the grey digits): a first convolution layer
    h_1 = ReLU(W_1 * x + b_1) with C channels, then 2×2 average pooling (to (s/2)² positions, as ResNet halves its
    grid), ``blocks`` residual layers h_{l+1} = ReLU(W_l * h_l + b_l) + h_l (the residual form of §8.3; every
    convolution 3×3, stride 1, zero padding 1), global average pooling and a fully connected layer to ``classes``
    logits.  Every weight and bias starts from PyTorch's default initialisation, U(−s, s) with s = 1/√fan-in
    (fan-in 9·``in_channels`` for the first layer, 9·C after it, C for the last), times ``init_scale`` (1: the
    book's 默认初始化).  ``conv_weights()`` lists each convolution layer's kernels per member, (K, C, C_in·9), a
    row per output channel (the book flattens a kernel over its input channels and its 3×3 positions)."""

    def __init__(self, channels: int = 16, blocks: int = 2, n_members: int = 1, *, init_scale: float = 1.0,
                 in_channels: int = 1, size: int = 8, classes: int = 10,
                 generator: torch.Generator | None = None) -> None:
        super().__init__()
        if (channels < 2 or blocks < 1 or n_members < 1 or not init_scale > 0 or in_channels < 1 or size < 2
                or size % 2 or classes < 2):
            raise ValueError(f"need channels ≥ 2, blocks ≥ 1, n_members ≥ 1, init_scale > 0, in_channels ≥ 1, "
                             f"an even size ≥ 2 and classes ≥ 2; got channels={channels}, blocks={blocks}, "
                             f"n_members={n_members}, init_scale={init_scale}, in_channels={in_channels}, "
                             f"size={size}, classes={classes}")
        self.channels, self.blocks, self.n_members = int(channels), int(blocks), int(n_members)
        self.in_channels, self.size = int(in_channels), int(size)
        k, c = self.n_members, self.channels

        def uniform(fan_in: int, *shape: int) -> torch.nn.Parameter:
            s = init_scale / fan_in ** 0.5
            return torch.nn.Parameter((torch.rand(*shape, generator=generator) * 2 - 1) * s)

        first = 9 * self.in_channels
        self.weights = torch.nn.ParameterList([uniform(first, k * c, self.in_channels, 3, 3)]
                                              + [uniform(9 * c, k * c, c, 3, 3) for _ in range(blocks)])
        self.biases = torch.nn.ParameterList([uniform(first, k * c)] + [uniform(9 * c, k * c) for _ in range(blocks)])
        self.fc = uniform(c, k, c, classes)
        self.fc_bias = uniform(c, k, 1, classes)

    def layer_outputs(self, images: Tensor) -> list[Tensor]:
        """Each convolution layer's outputs ReLU(W_l * h_l + b_l), before the skip is added: (K, N, P, C) each,
        P = s² positions for the first layer, (s/2)² after the pooling."""
        n, k, c, a, s = len(images), self.n_members, self.channels, self.in_channels, self.size
        x = images.reshape(n, 1, a, s, s).to(self.fc.dtype).expand(n, k, a, s, s).reshape(n, k * a, s, s)
        conv = torch.nn.functional.conv2d
        h = torch.relu(conv(x, self.weights[0], self.biases[0], padding=1, groups=k))
        outputs = [h]
        h = torch.nn.functional.avg_pool2d(h, 2)
        for w, b in zip(self.weights[1:], self.biases[1:]):
            z = torch.relu(conv(h, w, b, padding=1, groups=k))
            h = h + z
            outputs.append(z)
        return [z.reshape(n, k, c, -1).permute(1, 0, 3, 2) for z in outputs]

    def forward(self, images: Tensor) -> Tensor:
        """Images (N, in_channels, s, s) or flattened (N, in_channels·s²) → logits (K, N, classes)."""
        # the last residual state averaged over positions: pool(h_1) + Σ_l branch_l, and pooling keeps the mean
        h = sum(o.mean(2) for o in self.layer_outputs(images))  # (K, N, C)
        return torch.baddbmm(self.fc_bias, h, self.fc)

    def conv_weights(self) -> list[Tensor]:
        """Each convolution layer's kernels per member, (K, C, C_in·9), detached."""
        return [w.detach().reshape(self.n_members, self.channels, -1) for w in self.weights]


@dataclass
class ResidualCNNCondensation:
    """图8.6: per convolution layer l (first … last) and member k, :func:`cosine_participation` of the kernels and
    of the outputs at initialisation and after training, (L, K) each; the cosine matrices of the first and last
    layer's kernels and outputs (t = 0 and trained) of member 0, (C, C) each, keyed ``"{first|last}_{kernels|
    outputs}{0|}"``; the recorded steps (T,), training loss and accuracy (T, K), test accuracy (K,)."""

    kernels0: np.ndarray
    kernels: np.ndarray
    outputs0: np.ndarray
    outputs: np.ndarray
    maps: dict[str, np.ndarray]
    steps: np.ndarray
    loss: np.ndarray
    accuracy: np.ndarray
    test_accuracy: np.ndarray


#: The inputs :func:`run_residual_cnn` can train on: RGB photograph patches (the default, for CIFAR-10) or the digits.
RESNET_DATA = ("photos", "digits")


@cached
def run_residual_cnn(*, n_train: int = 150, n_test: int = 150, channels: int = 16, blocks: int = 2,
                     n_members: int = 3, init_scale: float = 1.0, lr: float = 1e-3, steps: int = 250,
                     record_every: int = 25, data: str = "photos", seed: int = 0) -> ResidualCNNCondensation:
    """图8.6's CPU analogue: :class:`BatchedResidualCNN` (``n_members`` nets, the default initialisation times
    ``init_scale``) trained with cross-entropy and full-batch Adam at the book's lr 10⁻³ for ``steps`` steps on
    ``n_train`` inputs standing in for CIFAR-10: ``data="photos"``, 8×8 RGB patches of four photographs labelled by
    the photograph (:func:`photo_patches`, 3×3×3 = 27-dimensional first-layer kernels as in
    ResNet-18 on CIFAR), or ``"digits"``, the bundled 8×8 grey digits standardised per pixel (9-dimensional
    kernels).  The condensation of each convolution layer is read, as in the book, from the cosine matrices (8.4)
    of its kernels (flattened over input channels and positions) and of its channels' outputs on the training and
    test inputs together (each channel's outputs over every input and position as one vector), at initialisation
    and at the end; summarised by :func:`cosine_participation`."""
    if n_train < 10 or n_test < 1 or steps < record_every or record_every < 1 or not lr > 0:
        raise ValueError(f"need n_train ≥ 10, n_test ≥ 1, steps ≥ record_every ≥ 1, lr > 0; got n_train={n_train}, "
                         f"n_test={n_test}, steps={steps}, record_every={record_every}, lr={lr}")
    if data not in RESNET_DATA:
        raise ValueError(f"data must be one of {RESNET_DATA}; got {data!r}")
    if data == "photos":
        inputs = photo_patches(n_train, n_test, seed=seed)
        in_channels, classes = 3, len(PHOTOGRAPHS)
    else:
        inputs = digits(n_train, n_test, seed=seed, standardise=True)
        in_channels, classes = 1, 10
    net = BatchedResidualCNN(channels, blocks, n_members, init_scale=init_scale, in_channels=in_channels,
                             classes=classes, generator=generator(seed, 2))
    both = torch.cat([inputs.x, inputs.x_test])

    def measure() -> tuple[np.ndarray, np.ndarray, list[np.ndarray], list[np.ndarray]]:
        with torch.no_grad():
            outs = [o.reshape(n_members, -1, channels).numpy() for o in net.layer_outputs(both)]
        kern = [cosine_similarity_matrix(wk) for w in net.conv_weights() for wk in w.numpy()]
        out = [cosine_similarity_matrix(ok.T) for o in outs for ok in o]
        shape = (len(outs), n_members)
        return (np.array([cosine_participation(m) for m in kern]).reshape(shape),
                np.array([cosine_participation(m) for m in out]).reshape(shape), kern, out)

    kernels0, outputs0, kern0, out0 = measure()
    with on_device(net) as device:
        x, labels = inputs.x.to(device), inputs.labels.to(device)

        def loss() -> Tensor:
            return cross_entropy(net(x), labels)

        def record(step: int) -> dict[str, Tensor]:
            with torch.no_grad():
                logits = net(x)
                return {"loss": cross_entropy(logits, labels), "accuracy": accuracy(logits, labels)}

        hist = run(descend(make_optimizer("adam", net.parameters(), lr), loss), steps=steps, record=record,
                   record_every=record_every, desc="residual CNN")
    kernels, outputs, kern, out = measure()
    last = (len(kern) // n_members - 1) * n_members  # member 0 of the last layer
    maps = {"first_kernels0": kern0[0], "first_kernels": kern[0], "first_outputs0": out0[0], "first_outputs": out[0],
            "last_kernels0": kern0[last], "last_kernels": kern[last], "last_outputs0": out0[last],
            "last_outputs": out[last]}
    with torch.no_grad():
        test_acc = accuracy(net(inputs.x_test), inputs.labels_test).numpy()
    return ResidualCNNCondensation(kernels0=kernels0, kernels=kernels, outputs0=outputs0, outputs=outputs, maps=maps,
                                   steps=hist.steps, loss=hist["loss"], accuracy=hist["accuracy"],
                                   test_accuracy=test_acc)


RESNET_LAST_NOT_FIRST = ClaimSpec(
    "ch08.resnet-last-not-first", "图8.6",
    "trained from the default initialisation, the last convolution layer of a residual CNN condenses and its first "
    "layer does not: the last layer's kernels and outputs each keep under 65% of their effective number of lines "
    "at initialisation, the first layer's kernels and outputs each keep over 65% (median net)")

#: The one cut between "condensed" and "not condensed", for every layer and for kernels and outputs alike: the
#: effective number of lines (:func:`cosine_participation`) after training over its value at t = 0 in the same
#: layer.  Set on the design seeds 100–109 (photographs), where the last layer's ratios were 0.43–0.56 (kernels) and
#: 0.32–0.48 (outputs) and the first layer's 0.71–0.80 and 0.79–0.93: the middle of both gaps, ≈ 0.635, rounded.
RESNET_CUT = 0.65


def _resnet_ratios(result: ResidualCNNCondensation) -> tuple[np.ndarray, np.ndarray]:
    """Per convolution layer the median over nets of the effective number of lines, trained / t = 0: kernels and
    outputs, (L,) each."""
    return (np.median(result.kernels / result.kernels0, axis=1), np.median(result.outputs / result.outputs0, axis=1))


def check_resnet_last_not_first(result: ResidualCNNCondensation) -> Verdict:
    """图8.6 on :func:`run_residual_cnn`: with r = effective number of lines (:func:`cosine_participation`) trained
    over t = 0, in the median net, the last convolution layer's kernels and outputs have r ≤ :data:`RESNET_CUT`
    (图8.6(g, h) against (c, d): block structure appears) and the first layer's kernels and outputs r ≥
    :data:`RESNET_CUT` (图8.6(e, f) against (a, b): no obvious condensation)."""
    kernels, outputs = _resnet_ratios(result)
    return RESNET_LAST_NOT_FIRST.judge(
        threshold("last layer: kernels' effective lines, trained / t = 0 (median net)", float(kernels[-1]), "<=",
                  RESNET_CUT),
        threshold("last layer: outputs' effective lines, trained / t = 0 (median net)", float(outputs[-1]), "<=",
                  RESNET_CUT),
        threshold("first layer: kernels' effective lines, trained / t = 0 (median net)", float(kernels[0]), ">=",
                  RESNET_CUT),
        threshold("first layer: outputs' effective lines, trained / t = 0 (median net)", float(outputs[0]), ">=",
                  RESNET_CUT),
        train_accuracy=result.accuracy[-1], test_accuracy=result.test_accuracy)


# --- 图8.10(a)–(c) read as the book reads its heat maps: the blocks of condensed neurons ---------------

#: Initial std of every parameter per activation in :func:`run_line_blocks`: the authors' code draws N(0, 50⁻⁸)
#: (std m^−γ, γ = 4) for tanh and x·tanh; x²·tanh, whose first-order signal scales like std³, does not move
#: at that scale within 100 epochs and starts from 10⁻⁴ (the book does not state its panels' initialisation).
BLOCK_STD = {"tanh": 50.0 ** -4, "xtanh": 50.0 ** -4, "x2tanh": 1e-4}

#: A line the heat map shows as a block: a single-linkage group of lines (:data:`LINE_GAP`) holding at least this
#: share of a net's neurons (5 of 50); smaller groups are the stragglers a heat map shows as thin stripes.
BLOCK_SHARE = 0.1


def line_groups(w: ArrayLike, gap: float = LINE_GAP) -> np.ndarray:
    """Sizes of the groups of lines of the rows of ``w`` (m, d), largest first: the rows joined by single linkage
    of the angles arccos |D(u, v)| (8.4) below ``gap`` radians — the connected parts of the graph of those angles
    (the groups :func:`count_lines` counts)."""
    w = _np(w).astype(float)
    if w.ndim != 2 or len(w) < 1:
        raise ValueError(f"w must be a matrix (m, d) with m ≥ 1; got shape {w.shape}")
    unit = w / np.maximum(np.linalg.norm(w, axis=1, keepdims=True), 1e-300)
    near = np.arccos(np.clip(np.abs(unit @ unit.T), 0.0, 1.0)) <= gap
    _, label = connected_components(near, directed=False)
    return np.sort(np.bincount(label))[::-1]


def count_blocks(w: ArrayLike, gap: float = LINE_GAP, share: float = BLOCK_SHARE) -> int:
    """Number of lines the rows of ``w`` (m, d) condense on, read as blocks of the cosine heat map (图8.10): the
    groups of :func:`line_groups` holding at least ``share`` of the rows."""
    if not 0 < share <= 1:
        raise ValueError(f"share must lie in (0, 1], got {share}")
    return int((line_groups(w, gap) >= share * len(_np(w))).sum())


@dataclass
class LineBlocks:
    """图8.10(a)–(c), one data set per net: per activation of ``acts`` (A,) and net (K) the input weights
    w (A, K, m, 6) at epoch ``steps``, their block counts (A, K) (:func:`count_blocks`), the share of neurons in
    blocks (A, K) and R_S(end)/R_S(0) (A, K); every activation's initial std."""

    acts: tuple[str, ...]
    w: np.ndarray
    blocks: np.ndarray
    in_blocks: np.ndarray
    loss_ratio: np.ndarray
    init_std: dict[str, float]
    steps: int

    def share_exact(self) -> np.ndarray:
        """Per activation, the share of its nets on exactly p blocks (p its multiplicity), (A,)."""
        p = np.array([MULTIPLICITY[act] for act in self.acts])[:, None]
        return (self.blocks == p).mean(axis=1)


@cached
def run_line_blocks(*, acts: tuple[str, ...] = TANH_POWERS, n_nets: int = 15, steps: int = 100,
                    init_std: float | dict[str, float] | None = None, seed: int = 0) -> LineBlocks:
    """图8.10(a)–(c) as many nets: net k of every activation fits its own draw of the book's data (n = 80 points
    x ~ U[−4, 2]⁵, target Σ_k 3.5 sin(5x_k + 1), stream k + 1 of ``seed``), the book's 5-50-1 net with every
    parameter ~ N(0, std²) (``init_std``: one std for all, or per activation; default :data:`BLOCK_STD`), full-batch
    Adam at the book's learning rates (:data:`INITIAL_LR`) for ``steps`` epochs (the book: 100), in float64 — all
    A·K nets one ensemble with the per-member activation :func:`tanh_power`.  The lines are counted as the blocks
    of the heat map (:func:`count_blocks`): a net's data set decides how far apart the directions its neurons head
    for are, so one net is one sample of the count, and the claim reads the share of nets on p lines."""
    for act in acts:
        if act not in TANH_POWERS:
            raise ValueError(f"图8.10's tanh family is {', '.join(TANH_POWERS)}; got {act!r}")
    stds = dict(BLOCK_STD) if init_std is None else (
        {act: float(init_std) for act in acts} if np.isscalar(init_std) else dict(init_std))
    if steps < 1 or n_nets < 1 or any(not stds.get(act, 0) > 0 for act in acts):
        raise ValueError(f"need steps ≥ 1, n_nets ≥ 1, a positive init_std per activation; got steps={steps}, "
                         f"n_nets={n_nets}, init_std={init_std}")
    xs = torch.stack([torch.rand(80, 5, generator=generator(seed, k + 1), dtype=torch.float64) * 6 - 4
                      for k in range(n_nets)])  # (K, 80, 5): net k's data, shared by the activations
    ys = (3.5 * torch.sin(5 * xs + 1)).sum(dim=2)
    n_acts = len(acts)
    p = torch.tensor([MULTIPLICITY[act] for act in acts]).repeat_interleave(n_nets)
    std = [stds[act] for act in acts for _ in range(n_nets)]
    net = TwoLayerEnsemble(5, 50, beta1=std, beta2=std, alpha=1.0, act="tanh", n_members=n_acts * n_nets,
                           dtype=torch.float64, seed=seed)
    net.act = tanh_power(p)
    lr = [INITIAL_LR[act] for act in acts for _ in range(n_nets)]
    hist = train_ensemble(net, xs.repeat(n_acts, 1, 1), ys.repeat(n_acts, 1), steps=steps, lr=lr, optimizer="adam",
                          record_every=steps, seed=seed, desc="图8.10, blocks")
    risk = hist["risk"]
    w = net.w.detach().numpy().reshape(n_acts, n_nets, 50, 6)
    groups = [[line_groups(wk) for wk in wa] for wa in w]
    blocks = np.array([[int((g >= BLOCK_SHARE * 50).sum()) for g in ga] for ga in groups])
    in_blocks = np.array([[g[g >= BLOCK_SHARE * 50].sum() / 50 for g in ga] for ga in groups])
    return LineBlocks(acts=tuple(acts), w=w, blocks=blocks, in_blocks=in_blocks,
                      loss_ratio=(risk[-1] / risk[0]).reshape(n_acts, n_nets),
                      init_std={act: stds[act] for act in acts}, steps=steps)


LINE_BLOCKS = ClaimSpec(
    "ch08.activation-line-blocks", "图8.10",
    "at epoch 100 from the small initialisation of the authors' code (std 50⁻⁴), the input weights condense on as "
    "many lines as the activation's multiplicity p, read as blocks of the cosine heat map (a line holding at least "
    "10% of the neurons): the tanh nets (p = 1) on one line, the median x·tanh net (p = 2) on two, each net on its "
    "own draw of the book's data")

#: "The tanh nets lie on one line": at least this share of them on exactly one block (all of the design seeds'
#: nets did); "the median x·tanh net lies on two": more than half of its nets on at most two blocks and more than
#: half on at least two.
TANH_ONE_BLOCK_SHARE = 0.8
MEDIAN_SHARE = 0.5


def check_line_blocks(result: LineBlocks) -> Verdict:
    """图8.10(a)–(c) on :func:`run_line_blocks`, lines counted as blocks (:func:`count_blocks`): the share of tanh nets
    on exactly one block is ≥ :data:`TANH_ONE_BLOCK_SHARE`; the shares of x·tanh nets on ≤ 2 and on ≥ 2 blocks
    are both > :data:`MEDIAN_SHARE` (its median net lies on exactly two lines)."""
    missing = [act for act in ("tanh", "xtanh") if act not in result.acts]
    if missing:
        raise ValueError(f"the claim needs the tanh and x·tanh nets; missing {', '.join(missing)}")
    tanh, xtanh = (result.blocks[result.acts.index(act)] for act in ("tanh", "xtanh"))
    return LINE_BLOCKS.judge(
        threshold("tanh: share of nets on one line", float((tanh == 1).mean()), ">=", TANH_ONE_BLOCK_SHARE),
        threshold("x·tanh: share of nets on ≤ 2 lines", float((xtanh <= 2).mean()), ">", MEDIAN_SHARE),
        threshold("x·tanh: share of nets on ≥ 2 lines", float((xtanh >= 2).mean()), ">", MEDIAN_SHARE),
        **{f"blocks_{act}": np.bincount(b, minlength=6).tolist() for act, b in zip(result.acts, result.blocks)})


LINE_BLOCKS_X2 = ClaimSpec(
    "ch08.x2tanh-three-blocks", "图8.10",
    "x²·tanh nets (p = 3) from std 10⁻⁴ condense on three lines at epoch 100 in the median net, read as blocks of "
    "the heat map (exploration: held on 4 of seeds 0–19 and 3 of 500–519; of the 300 nets of seeds 0–19, 74 lie on "
    "three blocks, 85 on one, 95 on two and 46 on four or more)", kind="exploration")


def check_x2tanh_blocks(result: LineBlocks) -> Verdict:
    """Exploration (图8.10(a), the book's three lines): the shares of x²·tanh nets on ≤ 3 and on ≥ 3 blocks
    (:func:`count_blocks`) are both > :data:`MEDIAN_SHARE`."""
    if "x2tanh" not in result.acts:
        raise ValueError("the x²·tanh exploration needs the x²·tanh nets (acts includes 'x2tanh')")
    b = result.blocks[result.acts.index("x2tanh")]
    return LINE_BLOCKS_X2.judge(
        threshold("x²·tanh: share of nets on ≤ 3 lines", float((b <= 3).mean()), ">", MEDIAN_SHARE),
        threshold("x²·tanh: share of nets on ≥ 3 lines", float((b >= 3).mean()), ">", MEDIAN_SHARE),
        blocks_x2tanh=np.bincount(b, minlength=6).tolist())


# --- 图8.11 read as the book reads its heat maps: the blocks of each residual layer ------------------------

#: Nets of :func:`run_residual_condensation` (``own_data=True``) in 图8.11's block reading, quick profile: each
#: on its own draw of the book's data.
RESIDUAL_BLOCK_NETS = 15

RESIDUAL_LINE_BLOCKS = ClaimSpec(
    "ch08.residual-line-blocks", "图8.11",
    "from N(0, 0.01²), at the epoch of its panel, read as blocks of the cosine heat map (a line holding at least "
    "10% of a layer's 18 neurons) with each net on its own draw of the book's data: the layers whose activation has "
    "multiplicity 1 (sigmoid, tanh, softplus) lie on one line in most nets, and the x·tanh (p = 2) and x²·tanh "
    "(p = 3) layers lie on more than one line more often than they do")


def check_residual_line_blocks(result: ResidualCondensation) -> Verdict:
    """图8.11 on :func:`run_residual_condensation` (``own_data=True``), lines read as heat-map blocks
    (:meth:`ResidualCondensation.blocks`, :func:`count_blocks`): over the nets of the three p = 1 layers together
    (:data:`MULTIPLICITY`), the share on exactly one block is > :data:`MEDIAN_SHARE`; for each p ≥ 2 layer the
    share of its nets on ≥ 2 blocks exceeds that share of the p = 1 layers' nets."""
    blocks = result.blocks()
    if len(blocks) != len(RESIDUAL_LAYERS):
        raise ValueError(f"need the {len(RESIDUAL_LAYERS)} layers of RESIDUAL_LAYERS; got {len(blocks)}")
    p = np.array([MULTIPLICITY[act] for act, _ in RESIDUAL_LAYERS])
    p1 = blocks[p == 1].ravel()
    p1_more = float((p1 >= 2).mean())
    conditions = [threshold("p = 1 layers: share of nets on one line", float((p1 == 1).mean()), ">", MEDIAN_SHARE)]
    for i, (act, _) in enumerate(RESIDUAL_LAYERS):
        if p[i] > 1:
            more = float((blocks[i] >= 2).mean())
            conditions.append(compare(f"layer {i + 1} ({act}): share of nets on ≥ 2 lines", more, ">",
                                      "p = 1 layers: share on ≥ 2 lines", p1_more))
    return RESIDUAL_LINE_BLOCKS.judge(
        *conditions, **{f"blocks_{act}": np.bincount(b, minlength=5).tolist()
                        for (act, _), b in zip(RESIDUAL_LAYERS, blocks)})
