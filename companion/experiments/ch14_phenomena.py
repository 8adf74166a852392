"""Chapter 14 (更多现象): in-context linear regression (上下文学习的线性回归) and the learners it is compared with (Akyürek et al. 2022).

A task draws w ~ N(0, I_d), inputs x_i, x_q ~ N(0, I_d) and labels y_i = ⟨w, x_i⟩ + ε_i, ε_i ~ N(0, σ²).
A prompt is the token sequence (x_1; y_1), …, (x_k; y_k), (x_q; 0) in R^{d+1} (Dherin et al.'s layout); a
transformer trained on many tasks reads it and predicts y_q at the last position.

Baselines, each a weight estimate ŵ(D) from the k context pairs D = (X, y), prediction ⟨ŵ, x_q⟩:

* one gradient-descent step from 0: ŵ = η Xᵀy (the step of L(w) = ½‖Xw − y‖²), η fitted per k;
* ridge: ŵ = (XᵀX + λI)⁻¹ Xᵀy;  OLS: ŵ = X⁺ y (minimum norm);  the zero predictor (MSE = d + σ²).

Metrics (Akyürek et al. §4): SPD(A₁, A₂) = E[(A₁(D)(x′) − A₂(D)(x′))²], the squared prediction difference,
and ILWD(A₁, A₂) = E‖ŵ_{A₁} − ŵ_{A₂}‖², the implicit linear weight difference, where the transformer's ŵ is
the least-squares fit of its predictions on probe inputs x′ with the context D held fixed.

Also here: Theorem 2.2's identities checked on random and trained blocks (the algebra is
:mod:`companion.core.icl`), the ΔW sequence and the fine-tuning comparison of Dherin et al. on the trained
learner, the in-context pattern classification of Li et al. (ICML 2024), the chapter's claims, explorer and
exercise checker.  Every training loop runs on the engine (:func:`companion.core.train.run`).

The book's other phenomena of chapter 14 (更多现象), each on a CPU-sized analogue (section "More phenomena" below):

* grokking (顿悟, §14.5, 图14.6): modular division, a two-layer ReLU net, full-batch AdamW, with and without
  weight decay (:mod:`companion.core.modular`, :mod:`companion.core.classify`);
* lottery tickets (幸运彩票, §14.6, 图14.7): iterative magnitude pruning with rewinding on a digits MLP, against
  the same masks randomly re-initialised (:mod:`companion.core.pruning`);
* double descent (§14.7, 图14.8): a width sweep of minimum-norm random-features models on digits with label
  noise (:mod:`companion.core.random_features`), and a width sweep of trained two-layer ReLU
  networks on digits with and without label noise, all widths one masked ensemble (:mod:`companion.core.pruning`);
* mode connectivity (§14.9, 图14.9): two digits MLPs from different initialisations joined by a trained
  quadratic Bézier curve, against the straight line (:mod:`companion.core.connectivity`).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import torch
from torch import Tensor

from companion.core import classify, connectivity, icl, modular, pruning, random_features
from companion.core.data import Digits, digits
from companion.core.nets import BatchedMLP
from companion.core.spectral import relative_error
from companion.core.train import History, descend, on_device, run
from companion.core.transformer import Transformer, TransformerConfig
from companion.kit.bounds import SEED, Bounds, integer, real
from companion.kit.cache import cached
from companion.kit.claims import REVALIDATION_SEEDS, ClaimSpec, Verdict, compare as compare_values, identity, threshold
from companion.kit.config import settings
from companion.kit.seeds import active_seed, generator, numpy_rng

BASELINES = ("gd1", "ridge", "ols", "zero")


@dataclass
class Tasks:
    """A batch of B regression tasks with k context pairs: xs (B, k, d), ys (B, k), xq (B, d), yq (B,), w (B, d)."""

    xs: Tensor
    ys: Tensor
    xq: Tensor
    yq: Tensor
    w: Tensor

    @property
    def k(self) -> int:
        return self.xs.shape[1]

    def tokens(self, k: int | None = None, xq: Tensor | None = None) -> Tensor:
        """The prompt (x_1; y_1) … (x_k; y_k) (x_q; 0) (B, k+1, d+1), using the first ``k`` pairs."""
        k = self.k if k is None else k
        if not 0 <= k <= self.k:
            raise ValueError(f"k must lie in [0, {self.k}], got {k}")
        xq = self.xq if xq is None else xq
        pairs = torch.cat([self.xs[:, :k], self.ys[:, :k, None]], -1)  # (B, k, d+1)
        query = torch.cat([xq, torch.zeros_like(xq[:, :1])], -1)[:, None]  # (B, 1, d+1)
        return torch.cat([pairs, query], 1)

    def to(self, device: torch.device) -> Tasks:
        """The same tasks on ``device``."""
        return Tasks(*(v.to(device) for v in (self.xs, self.ys, self.xq, self.yq, self.w)))


def sample_tasks(n_tasks: int, k: int, d: int, noise: float = 0.0, *, generator: torch.Generator,
                 dtype: torch.dtype = torch.float32, w: Tensor | None = None) -> Tasks:
    """B = ``n_tasks`` tasks with ``k`` context pairs each (see the module docstring), drawn from ``generator``.

    ``w`` (B, d), if given, replaces the drawn task vectors; they are drawn all the same, so that the inputs
    and the noise are the same draws with and without it."""
    if n_tasks < 1 or k < 0 or d < 1:
        raise ValueError(f"need n_tasks ≥ 1, k ≥ 0, d ≥ 1; got n_tasks={n_tasks}, k={k}, d={d}")
    if not noise >= 0:
        raise ValueError(f"noise must be ≥ 0, got {noise}")
    if w is not None and tuple(w.shape) != (n_tasks, d):
        raise ValueError(f"w must have the shape {(n_tasks, d)}, got {tuple(w.shape)}")

    def randn(*shape: int) -> Tensor:
        return torch.randn(*shape, generator=generator, dtype=dtype)

    drawn, xs, xq = randn(n_tasks, d), randn(n_tasks, k, d), randn(n_tasks, d)
    w = drawn if w is None else w.to(dtype)
    ys = torch.einsum("bkd,bd->bk", xs, w) + noise * randn(n_tasks, k)
    yq = (xq * w).sum(-1) + noise * randn(n_tasks)
    return Tasks(xs, ys, xq, yq, w)


# ------------------------------------------------------------------------------------------ baselines
def gd_weights(xs: Tensor, ys: Tensor, eta: float) -> Tensor:
    """One GD step from w = 0 on ½‖Xw − y‖²: ŵ = η Xᵀy, (B, d)."""
    return eta * torch.einsum("bkd,bk->bd", xs, ys)


def ridge_weights(xs: Tensor, ys: Tensor, lam: float) -> Tensor:
    """ŵ = (XᵀX + λI)⁻¹ Xᵀy, (B, d)."""
    if not lam > 0:
        raise ValueError(f"ridge λ must be > 0, got {lam}")
    d = xs.shape[-1]
    gram = xs.transpose(1, 2) @ xs + lam * torch.eye(d, dtype=xs.dtype)
    return torch.linalg.solve(gram, torch.einsum("bkd,bk->bd", xs, ys))


def ols_weights(xs: Tensor, ys: Tensor) -> Tensor:
    """The minimum-norm least-squares ŵ = X⁺ y, (B, d) (the interpolant when k < d)."""
    return (torch.linalg.pinv(xs) @ ys[..., None])[..., 0]


def fit_gd_eta(k: int, d: int, noise: float = 0.0, n_tasks: int = 4096, *, generator: torch.Generator) -> float:
    """The step size η that makes one GD step the best predictor at context length k: the closed-form least
    squares η = Σ a·y_q / Σ a² over ``n_tasks`` tasks, a = ⟨Xᵀy, x_q⟩ (no iteration)."""
    if k < 1:
        raise ValueError(f"fitting η needs k ≥ 1, got {k}")
    t = sample_tasks(n_tasks, k, d, noise, generator=generator, dtype=torch.float64)
    a = (gd_weights(t.xs, t.ys, 1.0) * t.xq).sum(-1)
    return float((a * t.yq).sum() / (a * a).sum())


def baseline_weights(name: str, tasks: Tasks, *, eta: float = 0.0, lam: float = 0.1, k: int | None = None) -> Tensor:
    """ŵ (B, d) of baseline ``name`` from the first ``k`` context pairs."""
    k = tasks.k if k is None else k
    xs, ys = tasks.xs[:, :k], tasks.ys[:, :k]
    if name == "gd1":
        return gd_weights(xs, ys, eta)
    if name == "ridge":
        return ridge_weights(xs, ys, lam)
    if name == "ols":
        return ols_weights(xs, ys)
    if name == "zero":
        return torch.zeros_like(tasks.w)
    raise ValueError(f"unknown baseline {name!r}; choose one of {', '.join(BASELINES)}")


def spd(pred_a: Tensor, pred_b: Tensor) -> float:
    """Squared prediction difference E[(A₁(D)(x′) − A₂(D)(x′))²]."""
    return float(((pred_a - pred_b) ** 2).mean())


def ilwd(w_a: Tensor, w_b: Tensor) -> float:
    """Implicit linear weight difference E‖ŵ_{A₁} − ŵ_{A₂}‖²."""
    return float(((w_a - w_b) ** 2).sum(-1).mean())


# --------------------------------------------------------------------------------- the in-context learner
@dataclass(frozen=True)
class ICLConfig:
    """The in-context learner and its training (defaults: the calibrated quick setting)."""

    d: int = 4              # dimension of the inputs x_i (the task is y = wᵀx, w ∈ R^d)
    k_max: int = 16         # most examples (x_i, y_i) in one prompt, before the query
    noise: float = 0.0      # std of the label noise
    d_model: int = 32       # transformer width, d_ff its MLP width, n_layers its depth
    n_layers: int = 2
    d_ff: int = 128
    norm: str = "none"      # "none" or a layer norm (see TransformerConfig.norm)
    steps: int = 2000       # Adam steps on fresh prompts, ``batch`` prompts each, learning rate ``lr``
    batch: int = 128
    lr: float = 2e-3
    seed: int = 0
    n_pretrain_tasks: int = 0  # 0: a fresh task w per prompt; M ≥ 1: the tasks of a fixed pool of M (train_icl)

    def transformer(self) -> TransformerConfig:
        """Single-head softmax attention without a causal mask, GELU MLPs, readout of size 1."""
        return TransformerConfig(vocab_size=None, d_input=self.d + 1, max_len=self.k_max + 1, d_model=self.d_model,
                                 n_layers=self.n_layers, n_heads=1, d_ff=self.d_ff, d_out=1, norm=self.norm,
                                 causal=False, activation="gelu")


def predict(model: Transformer, tokens: Tensor) -> Tensor:
    """The model's prediction at the query (the last position), (B,)."""
    return model(tokens)[:, -1, 0]


@dataclass
class Trained:
    """A trained learner and its training curve: ``history["train_loss"]`` is the mean mini-batch loss over
    each window of ``record_every`` steps, recorded at the window's end (``history.steps``)."""

    model: Transformer
    history: History


def fit_on_fresh_batches(model: Transformer, batch_loss: Callable[[torch.device], Tensor], *, steps: int, lr: float,
                         cosine: bool = False, record_every: int = 50, desc: str = "training") -> Trained:
    """Adam (with a cosine-annealed rate if ``cosine``) on ``batch_loss(device)``, a loss on a fresh batch of tasks
    drawn at each call; the engine records the mean of the mini-batch losses since the previous record.

    The model trains on the settings' device (:func:`~companion.core.train.on_device`; back on the CPU after);
    ``batch_loss`` draws its tasks on the CPU, from its generator, and moves them to ``device``, so a seed draws the
    same tasks on every device.  The losses stay on the device until a record reads them (no copy per step)."""
    if steps < 0 or record_every < 1:
        raise ValueError(f"need steps ≥ 0 and record_every ≥ 1, got {steps}, {record_every}")
    with on_device(model) as device:
        optimizer = torch.optim.Adam(model.parameters(), lr=lr)
        schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, steps) if cosine else None
        window: list[Tensor] = []

        def loss() -> Tensor:
            value = batch_loss(device)
            window.append(value.detach())
            return value

        def record(step: int) -> dict[str, float]:
            # each float32 loss exactly as a float64, averaged by NumPy (nan: no step yet, steps = 0)
            mean = float(np.mean(torch.stack(window).cpu().numpy().astype(np.float64))) if window else float("nan")
            window.clear()
            return {"train_loss": mean}

        history = run(descend(optimizer, loss, schedule=schedule), steps=steps, record=record,
                      record_at=sorted({*range(record_every, steps + 1, record_every), steps}), desc=desc)
    return Trained(model.eval(), history)


@cached
def train_icl(config: ICLConfig, record_every: int = 50) -> Trained:
    """Train a transformer on fresh tasks each step (Adam, cosine lr), context length k ~ U{1..k_max} per step;
    the squared error of the prediction at the query is the loss.

    With ``config.n_pretrain_tasks`` = M ≥ 1 every prompt's task is one of M task vectors drawn once (stream 5 of
    the seed; which one, per prompt, too): the inputs are fresh, the tasks are not.  With M = 1 the labels of the
    context say nothing the network cannot store in its weights — it has nothing to learn in context, only the
    one task to retrieve (the control of ``ch14.dw-learns``).  M = 0 (the default) draws nothing from stream 5."""
    if config.steps < 1 or config.batch < 1:
        raise ValueError(f"steps and batch must be ≥ 1, got {config.steps}, {config.batch}")
    if config.n_pretrain_tasks < 0:
        raise ValueError(f"n_pretrain_tasks must be ≥ 0, got {config.n_pretrain_tasks}")
    gen = generator(config.seed)
    model = Transformer(config.transformer(), generator=gen)
    pool_gen = generator(config.seed, 5)
    pool = torch.randn(config.n_pretrain_tasks, config.d, generator=pool_gen) if config.n_pretrain_tasks else None

    def batch_loss(device: torch.device) -> Tensor:
        k = int(torch.randint(1, config.k_max + 1, (1,), generator=gen))
        w = None if pool is None else pool[torch.randint(len(pool), (config.batch,), generator=pool_gen)]
        t = sample_tasks(config.batch, k, config.d, config.noise, generator=gen, w=w)
        return ((predict(model, t.tokens().to(device)) - t.yq.to(device)) ** 2).mean()

    return fit_on_fresh_batches(model, batch_loss, steps=config.steps, lr=config.lr, cosine=True,
                                record_every=record_every, desc="in-context learner")


def random_init(config: ICLConfig) -> Transformer:
    """The untrained model with the same initialisation as :func:`train_icl` (the control)."""
    return Transformer(config.transformer(), generator=generator(config.seed)).eval()


@dataclass
class Comparison:
    """MSE of the learner and the baselines per context length, and SPD / ILWD between them."""

    ks: np.ndarray
    mse: dict[str, np.ndarray]
    spd: dict[str, np.ndarray]
    ilwd: dict[str, np.ndarray]
    eta: np.ndarray


@torch.no_grad()
@cached
def compare(model: Transformer, config: ICLConfig, ks: list[int] | None = None, n_tasks: int = 512,
            n_probes: int = 16, lam: float = 0.1, noise: float | None = None, seed: int = 1) -> Comparison:
    """Evaluate the trained learner against the baselines on fresh tasks at each context length k.

    SPD is measured on the tasks' queries; ILWD fits the learner's ŵ from ``n_probes`` probe queries per
    context (needs n_probes ≥ d; ``n_probes=0`` skips ILWD, leaving ``ilwd`` empty, for a large
    evaluation of MSE and SPD only).  ``noise`` defaults to the training noise.
    """
    ks = list(range(1, config.k_max + 1)) if ks is None else [int(k) for k in ks]
    if any(not 1 <= k <= config.k_max for k in ks):
        raise ValueError(f"context lengths must lie in [1, {config.k_max}], got {ks}")
    if n_probes and n_probes < config.d:
        raise ValueError(f"n_probes must be 0 or ≥ d={config.d} to fit ŵ, got {n_probes}")
    noise = config.noise if noise is None else noise
    gen = generator(seed)
    mse = {n: [] for n in ("icl", *BASELINES)}
    spds = {n: [] for n in BASELINES}
    ilwds = {n: [] for n in BASELINES}
    etas = []
    for k in ks:
        eta = fit_gd_eta(k, config.d, noise, generator=gen)
        etas.append(eta)
        t = sample_tasks(n_tasks, k, config.d, noise, generator=gen)
        preds = {"icl": predict(model, t.tokens())}
        weights = {n: baseline_weights(n, t, eta=eta, lam=lam) for n in BASELINES}
        for n, w in weights.items():
            preds[n] = (w * t.xq).sum(-1)
        for n, p in preds.items():
            mse[n].append(float(((p - t.yq) ** 2).mean()))
        for n in BASELINES:
            spds[n].append(spd(preds["icl"], preds[n]))
        if n_probes:
            probes = torch.randn(n_tasks, n_probes, config.d, generator=gen)  # x′ (B, P, d)
            w_icl = learner_weights(model, t, probes)
            for n in BASELINES:
                ilwds[n].append(ilwd(w_icl, weights[n]))
    return Comparison(np.asarray(ks), {n: np.asarray(v) for n, v in mse.items()},
                      {n: np.asarray(v) for n, v in spds.items()},
                      {n: np.asarray(v) for n, v in ilwds.items()} if n_probes else {}, np.asarray(etas))


def learner_weights(model: Transformer, tasks: Tasks, probes: Tensor) -> Tensor:
    """ŵ_ICL (B, d): the least-squares linear fit of the learner's predictions on probes (B, P, d), context fixed."""
    B, P, d = probes.shape
    tokens = torch.cat([tasks.tokens(xq=probes[:, p]) for p in range(P)], 0)  # (P·B, k+1, d+1)
    preds = predict(model, tokens).reshape(P, B).T  # (B, P)
    return torch.linalg.lstsq(probes, preds[..., None]).solution[..., 0]


# ------------------------------------------------------------------------------- ΔW along the context
@torch.no_grad()
def delta_w_path(model: Transformer, tasks: Tasks, block: int = 0) -> icl.ImplicitGD:
    """The implicit GD sequence of one block over the prefixes of each task's context (positions embedded).

    The block's input is the embedded prompt; the query-only input embeds (x_q; 0) at position 0.
    """
    blocks = icl.contextual_blocks(model)
    if not 0 <= block < len(blocks):
        raise ValueError(f"block must lie in [0, {len(blocks)}), got {block}")
    h = icl.embed(model, tasks.tokens())
    for b in blocks[:block]:
        h = b(h)
    return icl.implicit_gd(blocks[block], h)


@dataclass
class FineTuning:
    """Test loss against the number of examples i (``history.steps``), by fine-tuning W₁ one example at a time
    (series ``"finetune"``) vs by ΔW(C_i) (series ``"delta_w"``); ``zero`` is the zero predictor's loss on the
    same test queries."""

    history: History
    zero: float


class PolyakStep(torch.optim.Optimizer):
    """Per-member Polyak steps: θ_b ← θ_b − lr · ℓ_b / ‖∇_{θ_b} ℓ_b‖² · ∇_{θ_b} ℓ_b (optimum value 0).

    Every parameter has the member axis first (one row per task); member b's squared gradient norm is summed
    over all parameters, and a member with a zero gradient does not move.  The loss sets ``losses`` (the
    per-member values ℓ_b, detached) each time it is evaluated, before :func:`~companion.core.train.descend`
    steps.  On the absolute error ℓ_b = |f_b − y_b| this is the normalised LMS (Kaczmarz) step
    θ_b ← θ_b − lr · e_b ∇f_b / ‖∇f_b‖², e_b = f_b − y_b: to first order it shrinks the error by 1 − lr.
    """

    def __init__(self, params, lr: float) -> None:
        super().__init__(params, {"lr": lr})
        self.losses: Tensor | None = None

    @torch.no_grad()
    def step(self, closure: None = None) -> None:
        if self.losses is None:
            raise RuntimeError("PolyakStep needs the per-member losses: set optimizer.losses in the loss")
        params = [p for group in self.param_groups for p in group["params"] if p.grad is not None]
        norm2 = sum((p.grad * p.grad).flatten(1).sum(1) for p in params)  # ‖∇_{θ_b} ℓ_b‖², (B,)
        size = torch.where(norm2 > 0, self.losses / torch.where(norm2 > 0, norm2, 1.0), 0.0)
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p -= (group["lr"] * size).reshape(-1, *[1] * (p.ndim - 1)) * p.grad
        self.losses = None


@cached
def finetune_vs_delta_w(model: Transformer, config: ICLConfig, n_tasks: int = 64, n_test: int = 32,
                        lr: float = 0.5, seed: int = 2, shuffle_labels: bool = False) -> FineTuning:
    """Dherin et al.'s comparison (§4.3): for new tasks w_test, (a) fine-tuning the MLP first-layer weights W₁
    of every block one example (x_i; 0) → y_i at a time, in context order, the model seeing the query alone;
    (b) the ΔW test loss, the query-only pass with every block patched by ΔW(C_i) (Thm 2.2), which equals the
    prediction with the first i examples in context.  Both are measured on ``n_test`` test queries per task;
    i runs from 0 to k_max: the engine takes k_max steps, one per example, and records at every step.

    The step is *normalised* like the implicit one (h = 1/‖A(x)‖²): on example i, per task,
    W₁ ← W₁ − lr · e_i ∇_{W₁} f(x_i) / ‖∇_{W₁} f(x_i)‖², e_i = f(x_i) − y_i (:class:`PolyakStep` on |e_i|), so
    that, to first order, the example's error shrinks by the factor 1 − lr whatever the scale of the model's
    activations.  With a fixed rate (the paper's 0.01) the effective step lr · ‖∇f‖² of this model reaches
    5–10 on some examples — past the stability limit 1 of a squared loss —, the error changes sign and grows,
    and since two blocks are tuned at once (the second block's input moves with the first block's W₁) the
    curvature grows with the weights: the run diverges to inf and the test loss becomes NaN on some seeds.

    ``shuffle_labels`` gives each task the context labels of another task (a negative control: the examples
    then say nothing about the task the test queries come from).

    The fine-tuning and the test run on the settings' device (:func:`~companion.core.train.on_device`; the model
    back on the CPU after): the tasks and test queries are drawn on the CPU and moved there.
    """
    if not 0 < lr <= 1:
        raise ValueError(f"the normalised step lr must lie in (0, 1], got {lr}")
    gen = generator(seed)
    t = sample_tasks(n_tasks, config.k_max, config.d, config.noise, generator=gen)
    x_test = torch.randn(n_tasks, n_test, config.d, generator=gen)  # (B, Q, d)
    y_test = torch.einsum("bqd,bd->bq", x_test, t.w)
    if shuffle_labels:
        t = Tasks(t.xs, t.ys.roll(1, 0), t.xq, t.yq, t.w)
    zero = float((y_test ** 2).mean())
    H, D = config.d_ff, config.d_model
    with on_device(model) as device:
        t, x_test, y_test = t.to(device), x_test.to(device), y_test.to(device)
        blocks = icl.contextual_blocks(model)  # views of the weights where they now are

        def query_only(xq: Tensor, deltas: list[Tensor]) -> Tensor:  # xq (B, d) -> (B,)
            hq = icl.embed(model, torch.cat([xq, torch.zeros_like(xq[:, :1])], -1)[:, None])
            ups = [icl.Update(dw, torch.zeros(xq.shape[0], D, device=device)) for dw in deltas]
            return icl.readout(model, icl.patched_stack_output(blocks, hq, ups))[:, 0]

        # W₁ − W₁⁽⁰⁾ per task and block
        deltas = [torch.zeros(n_tasks, H, D, device=device, requires_grad=True) for _ in blocks]
        optimizer = PolyakStep(deltas, lr=lr)
        example = 0

        def example_error() -> Tensor:  # |f(x_i) − y_i| (B,): each task's output depends on its own ΔW₁ only
            error = (query_only(t.xs[:, example], deltas) - t.ys[:, example]).abs()
            optimizer.losses = error.detach()
            return error
        step_on_example = descend(optimizer, example_error)

        def update(i: int) -> None:
            nonlocal example
            example = i
            step_on_example(i)

        @torch.no_grad()
        def record(i: int) -> dict[str, Tensor]:  # float64 losses, read by the engine
            tuned = torch.stack([query_only(x_test[:, q], deltas) for q in range(n_test)], 1)
            in_context = torch.stack([predict(model, t.tokens(k=i, xq=x_test[:, q])) for q in range(n_test)], 1)
            return {"finetune": ((tuned - y_test) ** 2).mean().double(),
                    "delta_w": ((in_context - y_test) ** 2).mean().double()}

        history = run(update, steps=config.k_max, record=record, record_every=1, progress=False)
    return FineTuning(history, zero)


def increment_decay(increments: np.ndarray) -> float:
    """Mean of the last 3 increments over the mean of the first 3: < 1 when the implicit updates shrink."""
    increments = np.asarray(increments, dtype=float)
    if increments.shape[0] < 6:
        raise ValueError(f"the decay needs at least 6 increments, got {increments.shape[0]}")
    return float(increments[-3:].mean() / increments[:3].mean())


def mean_increment(path: icl.ImplicitGD) -> np.ndarray:
    """Mean over tasks of ‖(ΔW)_{i+1} − (ΔW)_i‖_F, i = 0 … n−1 (the first entry is ΔW(C_1) itself)."""
    return path.increments().mean(0).numpy()


def singular_values(dW: Tensor) -> np.ndarray:
    """Singular values of one ΔW (H, D), largest first."""
    return torch.linalg.svdvals(dW).numpy()




# ---------------------------------------------------------------------------- Theorem 2.2, checked
def random_identity_checks(seed: int, *, dim: int = 8, hidden: int = 32, n_prompts: int = 64,
                           n_tokens: int = 12, scale: float = 1.0) -> dict[str, icl.Verification]:
    """:func:`~companion.core.icl.verify` on a 2-block stack of random blocks of each kind (2 heads, float64),
    with ``n_prompts`` random prompts of ``n_tokens`` tokens (the last the query), all drawn from ``seed``."""
    gen = generator(seed)
    checks = {}
    for kind in icl.KINDS:
        blocks = [icl.ContextualBlock(dim=dim, hidden=hidden, heads=2, kind=kind, generator=gen) for _ in range(2)]
        prompts = torch.randn(n_prompts, n_tokens, dim, dtype=torch.float64, generator=gen)
        checks[kind] = icl.verify(blocks, prompts, scale=scale)
    return checks


@torch.no_grad()
@cached
def trained_identity_checks(model: Transformer, tasks: Tasks, scale: float = 1.0) -> dict[str, icl.Verification]:
    """:func:`~companion.core.icl.verify` on every block of ``model`` (a copy in float32 and in float64) on the
    prompts of ``tasks``, the query alone embedded at position 0; also the relative error of the model's
    prediction from the patched query-only pass against its prediction with the prompt."""
    checks = {}
    for dtype in (torch.float32, torch.float64):
        m = copy.deepcopy(model).to(dtype)
        tokens = tasks.tokens().to(dtype)
        h_full, h_query = icl.embed(m, tokens), icl.embed(m, tokens[:, -1:])
        v = icl.verify(icl.contextual_blocks(m), h_full, h_query, scale=scale)
        _, _, q = icl.patch_stack(icl.contextual_blocks(m), h_full, h_query)
        v.errors["prediction: patched query-only vs prompt"] = relative_error(icl.readout(m, q)[:, 0],
                                                                             predict(m, tokens))
        checks[str(dtype)] = v
    return checks


# ------------------------------------------------------------------------------------------- claims
IDENTITY_TOL = {torch.float32: 1e-5, torch.float64: 1e-12}
RANK_ONE_EPS = 1000  # σ₂/σ₁ below 1000 machine epsilons: rank 1 to rounding (the rank tolerance of verify)

IDENTITY_RANDOM = ClaimSpec(
    "ch14.identity-random", "Dherin et al. 2025, Thm 2.2",
    "on random plain / skip / pre-LN blocks every ΔW identity holds to float64 precision (relative error "
    "< 1e-12) and every ΔW has rank 1 (σ₂/σ₁ < 1000 ε)", kind="identity")
IDENTITY_TRAINED = ClaimSpec(
    "ch14.identity-trained", "Dherin et al. 2025, Thm 2.2",
    "on the trained transformer the prompt equals a rank-1 patch of every block: relative error < 1e-5 in "
    "float32 and < 1e-12 in float64, σ₂/σ₁ of every ΔW < 1000 ε", kind="identity")


def _identity_conditions(checks: dict[str, icl.Verification]) -> list:
    conditions = []
    for name, v in checks.items():
        conditions.append(identity(f"worst error ({name})", v.worst(), IDENTITY_TOL[v.dtype]))
        conditions.append(identity(f"worst σ₂/σ₁ ({name})", v.worst_sv_ratio(),
                                   RANK_ONE_EPS * torch.finfo(v.dtype).eps))
    return conditions


def check_identity_random(checks: dict[str, icl.Verification]) -> Verdict:
    """Theorem 2.2 on random blocks: every identity of :func:`~companion.core.icl.verify` to 1e-12 (float64), every ΔW rank 1."""
    return IDENTITY_RANDOM.judge(*_identity_conditions(checks),
                                 max_rank=max(max(v.ranks.values()) for v in checks.values()))


def check_identity_trained(checks: dict[str, icl.Verification]) -> Verdict:
    """Theorem 2.2 on the trained model's blocks: 1e-5 in float32 and 1e-12 in float64, every ΔW rank 1."""
    return IDENTITY_TRAINED.judge(*_identity_conditions(checks),
                                  max_rank=max(max(v.ranks.values()) for v in checks.values()))


BEATS_GD1 = ClaimSpec(
    "ch14.beats-gd1", "Akyürek et al. 2023",
    "with 16 examples in context the learner beats the best single GD step (MSE < 0.75×) and is far below "
    "the zero predictor (MSE < 0.2·d)")
ERROR_FALLS = ClaimSpec(
    "ch14.error-falls", "Akyürek et al. 2023",
    "the learner's error falls as the prompt grows (k = 2, 4, 8, 16) and ends below the zero predictor's")
CLOSER_TO_GD1 = ClaimSpec(
    "ch14.closer-to-gd1", "Akyürek et al. 2023",
    "at k = d the learner's predictions are closer to one GD step than to OLS (SPD(ICL, GD1) < 0.5 × "
    "SPD(ICL, OLS)) and than to the zero predictor (SPD(ICL, GD1) < SPD(ICL, 0))")
DW_DECAY = ClaimSpec(
    "ch14.dw-decay", "Dherin et al. 2025, §4.2",
    "the ΔW increments of the trained block shrink as tokens are consumed (last 3 < 0.3 × first 3) — and so "
    "do those of the untrained control, so the decay alone is not learning", kind="identity")
DW_LEARNS = ClaimSpec(
    "ch14.dw-learns", "Dherin et al. 2025, §4.2",
    "the untrained control's ΔW(C_i) never beats the zero predictor on new queries, while the trained "
    "one's beats it and halves the test error")
FINETUNE = ClaimSpec(
    "ch14.finetune", "Dherin et al. 2025, §4.3",
    "both fine-tuning W₁ example by example and the implicit ΔW(C_i) lower the test error on new queries "
    "(mean over the last 4 i < 0.8 × the error with no example, and below the zero predictor's)")
PATTERN_ATTENTION = ClaimSpec(
    "ch14.pattern-attention", "Li et al. 2024",
    "the trained one-block transformer classifies new tasks in context (error rate ≤ 0.05) with ≥ 80% of the "
    "query's attention on examples sharing its relevant pattern")


def _at(comparison: Comparison, k: int) -> int:
    ks = [int(v) for v in comparison.ks]
    if k not in ks:
        raise ValueError(f"the comparison has no context length {k} (it has {ks})")
    return ks.index(k)


def check_beats_gd1(comparison: Comparison, d: int, k: int = 16) -> Verdict:
    """At context length ``k``: MSE(ICL) < 0.75 × MSE(best one-step GD) and < 0.2·d (the zero predictor's ≈ d)."""
    i = _at(comparison, k)
    icl_mse, gd_mse = comparison.mse["icl"][i], comparison.mse["gd1"][i]
    return BEATS_GD1.judge(compare_values(f"MSE_ICL(k={k})", icl_mse, "<", f"0.75·MSE_GD1(k={k})", 0.75 * gd_mse),
                           threshold(f"MSE_ICL(k={k})", icl_mse, "<", 0.2 * d),
                           mse_gd1=gd_mse, mse_ridge=comparison.mse["ridge"][i])


def check_error_falls(comparison: Comparison, ks: tuple[int, ...] = (2, 4, 8, 16)) -> Verdict:
    """MSE(ICL) strictly falls along ``ks`` and, at the longest prompt, is below the zero predictor's MSE.

    The last condition keeps a learner that merely shrinks its outputs as the prompt grows (softmax
    averaging over more tokens does that to an untrained network) from passing."""
    mse = [comparison.mse["icl"][_at(comparison, k)] for k in ks]
    conditions = [compare_values(f"MSE(k={b})", mse[j + 1], "<", f"MSE(k={a})", mse[j])
                  for j, (a, b) in enumerate(zip(ks, ks[1:]))]
    zero = comparison.mse["zero"][_at(comparison, ks[-1])]
    conditions.append(compare_values(f"MSE(k={ks[-1]})", mse[-1], "<", "zero predictor", zero))
    return ERROR_FALLS.judge(*conditions)


def check_closer_to_gd1(comparison: Comparison, d: int) -> Verdict:
    """At k = d: SPD(ICL, GD1) < 0.5 × SPD(ICL, OLS) and SPD(ICL, GD1) < SPD(ICL, zero).

    In the noiseless case OLS is exact from k = d on, so SPD(ICL, OLS) is the learner's own error and the
    first condition alone would hold for any learner that barely moves (the zero predictor itself has
    SPD(0, GD1) ≈ 0.4 × SPD(0, OLS)); the second asks that the learner's predictions track one GD step
    more closely than they sit at zero."""
    i = _at(comparison, d)
    s = {n: comparison.spd[n][i] for n in BASELINES}
    return CLOSER_TO_GD1.judge(compare_values("SPD(ICL,GD1)", s["gd1"], "<", "0.5·SPD(ICL,OLS)", 0.5 * s["ols"]),
                               compare_values("SPD(ICL,GD1)", s["gd1"], "<", "SPD(ICL,0)", s["zero"]),
                               spd_ridge=s["ridge"], ratio_ols=s["gd1"] / s["ols"])


def check_dw_decay(incr_trained: np.ndarray, incr_random: np.ndarray) -> Verdict:
    """Both the trained and the untrained block's mean ΔW increments: last 3 < 0.3 × first 3."""
    return DW_DECAY.judge(threshold("decay (trained)", increment_decay(incr_trained), "<", 0.3),
                          threshold("decay (untrained)", increment_decay(incr_random), "<", 0.3))


def check_dw_learns(trained: FineTuning, untrained: FineTuning) -> Verdict:
    """The untrained ΔW(C_i) test MSE stays above the zero predictor's at every i; the trained one's ends
    below the zero predictor's and below half its value with no example.  (Halving alone is not enough: a
    network whose outputs are large with no context and shrink as softmax averages over more tokens also
    "halves" its error, see the negative control.)"""
    best = float(untrained.history["delta_w"].min())
    end = float(trained.history["delta_w"][-1])
    return DW_LEARNS.judge(compare_values("untrained best ΔW MSE", best, ">", "zero predictor", untrained.zero),
                           compare_values("trained ΔW MSE(i=end)", end, "<", "zero predictor", trained.zero),
                           compare_values("trained ΔW MSE(i=end)", end, "<", "0.5·MSE(i=0)",
                                          0.5 * trained.history["delta_w"][0]))


def check_finetune(result: FineTuning) -> Verdict:
    """Fine-tuning and ΔW: mean test MSE over the last 4 i < 0.8 × the MSE with no example, and below the
    zero predictor's (a network that starts far above it lowers its error just by shrinking its outputs)."""
    finetune, delta_w = result.history["finetune"], result.history["delta_w"]
    late_ft, late_dw = float(finetune[-4:].mean()), float(delta_w[-4:].mean())
    return FINETUNE.judge(compare_values("fine-tuning MSE (last 4)", late_ft, "<", "0.8·MSE(i=0)", 0.8 * finetune[0]),
                          compare_values("ΔW MSE (last 4)", late_dw, "<", "0.8·MSE(i=0)", 0.8 * delta_w[0]),
                          compare_values("fine-tuning MSE (last 4)", late_ft, "<", "zero predictor", result.zero),
                          compare_values("ΔW MSE (last 4)", late_dw, "<", "zero predictor", result.zero))


def check_pattern_attention(accuracy: float, mass: float, uniform: float) -> Verdict:
    """In-context classification error rate ≤ 0.05 (accuracy ≥ 0.95) and attention mass on same-pattern
    examples ≥ 0.8.  The error rate, not the accuracy, carries the margin: accuracy ≥ 0.95 can never clear
    the 5 % thin line since accuracy ≤ 1."""
    return PATTERN_ATTENTION.judge(threshold("error rate", 1.0 - accuracy, "<=", 0.05),
                                   threshold("same-pattern mass", mass, ">=", 0.8), accuracy=accuracy,
                                   uniform=uniform)


# ------------------------------------------------------------- pattern classification (Li et al., ICML 2024)
@dataclass
class PatternTasks:
    """Prompts of in-context binary classification: tokens (B, N+1, 2P+1), the query's label y (B,) and every
    token's relevant pattern (B, N+1).  Inputs are x = μ_j + κ ν_r with orthonormal relevant patterns μ_j
    (e₁ … e_P) and irrelevant ones ν_r (e_{P+1} … e_{2P}), κ ~ U[0.5, 1]; a task labels each μ_j ±1 at random."""

    tokens: Tensor
    y: Tensor
    pattern: Tensor


def sample_pattern_tasks(n_tasks: int, n_context: int = 16, n_patterns: int = 4, *,
                         generator: torch.Generator) -> PatternTasks:
    """``n_tasks`` prompts of ``n_context`` examples and a query over ``n_patterns`` relevant patterns."""
    if n_tasks < 1 or n_context < 1 or n_patterns < 2:
        raise ValueError(f"need n_tasks ≥ 1, n_context ≥ 1, n_patterns ≥ 2; got {n_tasks}, {n_context}, {n_patterns}")
    P, T = n_patterns, n_context + 1
    basis = torch.eye(2 * P)
    labels = 1.0 - 2.0 * torch.randint(0, 2, (n_tasks, P), generator=generator).float()  # the task
    relevant = torch.randint(0, P, (n_tasks, T), generator=generator)
    irrelevant = torch.randint(P, 2 * P, (n_tasks, T), generator=generator)
    kappa = 0.5 + 0.5 * torch.rand(n_tasks, T, 1, generator=generator)
    x = basis[relevant] + kappa * basis[irrelevant]  # (B, T, 2P)
    y = torch.gather(labels, 1, relevant)  # (B, T)
    tokens = torch.cat([x, y[..., None]], -1)
    tokens[:, -1, -1] = 0.0  # the query's label is hidden
    return PatternTasks(tokens, y[:, -1], relevant)


@cached
def train_pattern_learner(steps: int = 600, n_context: int = 16, n_patterns: int = 4, seed: int = 0) -> Trained:
    """One block, one head of softmax attention + ReLU MLP (residual, no LayerNorm), hinge loss, Adam, 128
    fresh tasks per step."""
    gen = generator(seed)
    cfg = TransformerConfig(vocab_size=None, d_input=2 * n_patterns + 1, max_len=n_context + 1, d_model=16,
                            n_layers=1, n_heads=1, d_ff=64, d_out=1, norm="none", causal=False, activation="relu")
    model = Transformer(cfg, generator=gen)

    def hinge_loss(device: torch.device) -> Tensor:
        t = sample_pattern_tasks(128, n_context, n_patterns, generator=gen)
        return torch.relu(1 - t.y.to(device) * predict(model, t.tokens.to(device))).mean()

    return fit_on_fresh_batches(model, hinge_loss, steps=steps, lr=2e-3, desc="pattern classifier")


@torch.no_grad()
def attention_on_same_pattern(model: Transformer, tasks: PatternTasks) -> tuple[float, float, float]:
    """(accuracy, mean attention mass of the query on context examples sharing its relevant pattern, the
    fraction of such examples — the mass uniform attention would give)."""
    out, maps = model(tasks.tokens, return_attention=True)
    accuracy = float((torch.sign(out[:, -1, 0]) == tasks.y).float().mean())
    weights = maps[0][:, 0, -1, :-1]  # (B, N): the query's row, context columns
    same = (tasks.pattern[:, :-1] == tasks.pattern[:, -1:]).float()
    mass = (weights * same).sum(-1) / weights.sum(-1)
    return accuracy, float(mass.mean()), float(same.mean())


# ------------------------------------------------------------------------------------------- explorer
BASE_NOISE, BASE_DEPTH = 0.0, 2  # the explorer's base learner: its default noise and depth
ADAPT_SHARE = 8  # an adaptation takes 1/8 of the base's steps (75 for the quick profile's 600)


#: The bounds of the explorer's functions (:func:`explorer_base`, :func:`adapt_learner`, :func:`explore`): its sliders
#: for k (1 to the learners' k_max = 16), σ and the depth; up to 20 000 training steps and 4096 test tasks.
EXPLORER_BOUNDS = Bounds(k=integer(1, ICLConfig.k_max), noise=real(0.0, 1.0), depth=integer(1, 3),
                         steps=integer(1, 20_000), seed=SEED, n_tasks=integer(1, 4096))


@cached
def explorer_base(steps: int, seed: int) -> Transformer:
    """The explorer's base learner, at its defaults σ = 0 and 2 blocks: :func:`train_icl` with ``steps`` steps
    (the notebook's 600 quick, 3000 full; the chapter's main learner takes 2000), cached."""
    EXPLORER_BOUNDS.check(steps=steps, seed=seed)
    return train_icl(ICLConfig(noise=BASE_NOISE, n_layers=BASE_DEPTH, steps=steps, seed=seed)).model


def adapt_learner(base: Transformer, noise: float, depth: int, *, steps: int, seed: int) -> Transformer:
    """The base learner adapted to label noise σ = ``noise`` and ``depth`` blocks in ``steps`` Adam steps.

    Blocks beyond the base's are appended as the identity (their attention output W^attn and MLP output W₂, b₂
    zero, the rest drawn from ``seed``), so the adapted learner starts as the base; blocks beyond ``depth`` are
    dropped (the readout then reads an earlier block and must adapt).  Then :func:`train_icl`'s training on
    tasks at σ, with 64 prompts per step at rate 1e-3, warmed up over the first tenth of the steps (the base's
    Adam state is not kept) and cosine-annealed; the last block is computed for the query only (``last_only``:
    the same loss with less work).  A number outside :data:`EXPLORER_BOUNDS` raises a ValueError naming it.
    """
    EXPLORER_BOUNDS.check(noise=noise, depth=depth, steps=steps, seed=seed)
    config = ICLConfig(noise=float(noise), n_layers=int(depth), steps=steps, batch=64, lr=1e-3, seed=seed)
    gen = generator(seed + 1)
    model = Transformer(config.transformer(), generator=gen)
    state = model.state_dict()
    state.update({name: value for name, value in base.state_dict().items() if name in state})
    for block in range(base.cfg.n_layers, config.n_layers):
        for name in ("w_attn", "w2", "b2"):
            state[f"layers.{block}.{name}"].zero_()
    model.load_state_dict(state)
    warmup = max(1, steps // 10)

    def rate(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, steps - warmup)))

    with on_device(model) as device:  # as in fit_on_fresh_batches: tasks drawn on the CPU, trained on the device
        optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)

        def batch_loss() -> Tensor:
            k = int(torch.randint(1, config.k_max + 1, (1,), generator=gen))
            t = sample_tasks(config.batch, k, config.d, config.noise, generator=gen)
            return ((model(t.tokens().to(device), last_only=True)[:, -1, 0] - t.yq.to(device)) ** 2).mean()

        schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, rate)
        run(descend(optimizer, batch_loss, schedule=schedule), steps=steps, record=lambda step: {},
            record_at=[steps], progress=False)
    return model.eval()


def explore(k: int, noise: float, depth: int, *, model: Transformer, seed: int, n_tasks: int = 256) -> dict:
    """The explorer's data for the learner ``model`` of ``depth`` blocks at label noise ``noise``: its MSE
    against the baselines over context lengths (no ILWD: it is not drawn), one task's predictions along a
    line of queries, and that task's ΔW of block 0 at context length ``k`` with its singular values.  A number
    outside :data:`EXPLORER_BOUNDS` raises a ValueError naming it."""
    EXPLORER_BOUNDS.check(k=k, noise=noise, depth=depth, seed=seed, n_tasks=n_tasks)
    config = ICLConfig(noise=float(noise), n_layers=int(depth))
    ks = sorted({1, 2, 4, 8, 12, 16, int(k)})
    lam = max(noise ** 2, 0.1)
    comp = compare(model, config, ks=ks, n_tasks=n_tasks, n_probes=0, lam=lam)
    task = sample_tasks(1, k, config.d, noise, generator=generator(seed + 7))
    direction = task.w[0] / task.w[0].norm()
    s = torch.linspace(-3, 3, 25)
    line = s[:, None] * direction  # (S, d), queries along ŵ's direction
    many = Tasks(task.xs.expand(len(s), -1, -1), task.ys.expand(len(s), -1), line, line @ task.w[0],
                 task.w.expand(len(s), -1))
    eta = float(comp.eta[ks.index(int(k))])  # the one-step GD rate compare fitted at this k
    with torch.no_grad():
        preds = {"transformer": predict(model, many.tokens())}
        for name in ("gd1", "ridge", "ols"):
            preds[name] = (baseline_weights(name, many, eta=eta, lam=lam) * line).sum(-1)
        path = delta_w_path(model, task)
    dW = path.dW[0, -1]  # (H, D), ΔW(C) of block 0
    return {"k": k, "ks": comp.ks, "mse": comp.mse, "s": s.numpy(), "truth": many.yq.numpy(),
            "preds": {n: p.numpy() for n, p in preds.items()}, "dW": dW.numpy(), "sv": singular_values(dW)}


def draw_explorer(result: dict, fig) -> None:
    """MSE vs k (with the chosen k marked), predictions along a line, ΔW as an image, its singular values."""
    from companion.kit.plots import PALETTE
    axes = fig.subplots(1, 4)
    for i, (name, values) in enumerate(result["mse"].items()):
        axes[0].plot(result["ks"], values, "o-", ms=3, color=PALETTE[i], label=name)
    axes[0].axvline(result["k"], color="0.6", ls=":")
    axes[0].set(xlabel="context length k", ylabel="MSE", yscale="symlog", title="prediction error")
    axes[0].legend()
    axes[1].plot(result["s"], result["truth"], "--", color="0.3", label="truth")
    for i, (name, p) in enumerate(result["preds"].items()):
        axes[1].plot(result["s"], p, color=PALETTE[i], label=name)
    axes[1].set(xlabel="query x = s·w/|w|", title=f"one task, k={result['k']}")
    axes[1].legend()
    lim = float(np.abs(result["dW"]).max())
    axes[2].imshow(result["dW"], aspect="auto", cmap="RdBu_r", vmin=-lim, vmax=lim, interpolation="nearest")
    axes[2].set(xlabel="input dim D", ylabel="hidden unit", title="ΔW(C) of block 0")
    axes[2].grid(False)
    axes[3].semilogy(np.arange(1, len(result["sv"]) + 1), result["sv"] + 1e-20, "o", ms=3)
    axes[3].set(xlabel="index", title="singular values of ΔW")


def make_explorer(steps: int = 600, seed: int | None = None):
    """Context length, noise and depth → the learner against the baselines, and ΔW (rank 1); the learners
    start from ``seed`` (default: the active seed).

    Smaller than training a learner per (σ, depth) from scratch, as the chapter trains its own
    (:func:`train_icl`), so that a move off the precomputed grid takes under a second of CPU instead of 7–11:
    one base learner at the defaults (σ = 0, 2 blocks, ``steps`` steps of 128 prompts, trained when the
    explorer is built) serves every setting, and any other (σ, depth) is the base adapted in ``steps // 8``
    steps of 64 prompts (:func:`adapt_learner`).  That is enough for its error curve to settle where a learner
    trained from scratch at that setting ends: near one GD step's with 2 or 3 blocks, above it with one.  The
    explorer keeps every learner it has made, so moving k alone trains nothing."""
    from companion.kit import widgets as w
    seed = active_seed() if seed is None else seed
    base = explorer_base(steps, seed)

    @lru_cache(maxsize=None)
    def learner(noise: float, depth: int) -> Transformer:
        if (noise, depth) == (BASE_NOISE, BASE_DEPTH):
            return base
        return adapt_learner(base, noise, depth, steps=max(1, steps // ADAPT_SHARE), seed=seed)

    controls = {"k": w.int_slider(4, 1, 16, "context length k"),
                "noise": w.float_slider(BASE_NOISE, 0.0, 1.0, 0.25, "label noise σ"),
                "depth": w.int_slider(BASE_DEPTH, 1, 3, "blocks")}
    return w.Explorer("In-context regression: learner vs baselines, and its ΔW", controls,
                      lambda **v: explore(**v, model=learner(v["noise"], v["depth"]), seed=seed), draw_explorer,
                      figsize=(13.0, 3.2))


# ------------------------------------------------------------------------------------------- exercise
def check_min_norm_update(fn: Callable[[Tensor, Tensor, Tensor], Tensor], seed: int = 0) -> bool:
    """习题: ``fn(W, dA, a_x)`` must return the ΔW of least Frobenius norm with (W + ΔW) a_x = W (a_x + dA).

    W (H, D), dA and a_x (D,) are random float64 tensors.  Prints a verdict and returns whether it holds.
    """
    gen = generator(seed)
    W = torch.randn(6, 4, dtype=torch.float64, generator=gen)
    dA, a_x = torch.randn(4, dtype=torch.float64, generator=gen), torch.randn(4, dtype=torch.float64, generator=gen)
    dW = torch.as_tensor(fn(W, dA, a_x), dtype=torch.float64)
    if dW.shape != W.shape:
        print(f"✘ ΔW must have the shape of W {tuple(W.shape)}, got {tuple(dW.shape)}")
        return False
    exact = bool(torch.allclose(dW @ a_x, W @ dA, atol=1e-10))
    least = bool(abs(float(torch.linalg.matrix_norm(dW)) - float((W @ dA).norm() / a_x.norm())) < 1e-10)
    if exact and least:
        print("✔ correct: ΔW a_x = W ΔA, and no smaller ΔW does it (it is rank 1)")
    elif exact:
        print("~ ΔW reproduces the context's effect but is not the smallest such matrix: try an outer product")
    else:
        print("✘ not yet: (W + ΔW) A(x) should equal W A(C, x)")
    return exact and least


# ================================================================ more phenomena (§14.5–14.9)
# ------------------------------------------------------------------------------------ grokking (图14.6)
@dataclass(frozen=True)
class GrokConfig:
    """Grokking (顿悟) on a modular-arithmetic table (Power et al. 2022, the book's 图14.6).

    A two-layer ReLU network [e_a, e_b] (2p) → ``width`` → p logits, full-batch Adam with decoupled weight
    decay (AdamW); each entry of ``weight_decay`` is one member, all members start from the *same*
    initialisation and see the same split, so they differ only by λ.  ``init_scale`` multiplies the
    standard initialisation (std 1/√fan_in per layer)."""

    p: int = 31
    op: str = "div"
    train_fraction: float = 0.6
    width: int = 128
    init_scale: float = 1.0
    steps: int = 2500
    lr: float = 1e-2
    weight_decay: tuple[float, ...] = (0.5, 0.0)
    record_every: int = 10
    seed: int = 0


@dataclass
class GrokResult:
    """``history``: series train_acc, test_acc, train_loss, test_loss, each (T, K), one column per weight decay."""

    config: GrokConfig
    history: History


@cached
def run_grokking(config: GrokConfig) -> GrokResult:
    """Train the members of ``config`` on its modular table; the split comes from stream 0 of the seed, the
    (shared) initialisation from stream 1."""
    data = modular.modular_data(config.p, config.op, config.train_fraction, seed=config.seed)
    K, widths = len(config.weight_decay), [2 * config.p, config.width, config.p]
    stds = [config.init_scale / math.sqrt(2), config.init_scale / math.sqrt(config.width)]  # one-hot: two 1s
    model = BatchedMLP(widths, K, act="relu", init_std=torch.tensor([stds] * K), generator=generator(config.seed, 1))
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(p[:1].expand_as(p))  # every member starts from member 0's initialisation
    history = classify.train_classifiers(model, data.x, data.labels, x_test=data.x_test, labels_test=data.labels_test,
                                         steps=config.steps, lr=config.lr, weight_decay=config.weight_decay,
                                         betas=(0.9, 0.98), record_every=config.record_every, desc="grokking")
    return GrokResult(config, history)


GROKKING = ClaimSpec(
    "ch14.grokking", "图14.6",
    "with weight decay, test accuracy rises long after training accuracy saturates: the first step with "
    "test accuracy ≥ 0.9 is ≥ 10× the first step with training accuracy ≥ 0.99, and the final test error ≤ 0.05 "
    "(one decade; the book's figure shows about two)")


def grokking_steps(result: GrokResult, member: int = 0) -> tuple[float, float]:
    """(first step with training accuracy ≥ 0.99, first step with test accuracy ≥ 0.9) of one member; NaN: never."""
    h = result.history
    return (classify.first_step(h.steps, h["train_acc"][:, member], 0.99),
            classify.first_step(h.steps, h["test_acc"][:, member], 0.9))


def check_grokking(result: GrokResult, member: int = 0) -> Verdict:
    """t_test(0.9) ≥ 10 × t_train(0.99) and final test error ≤ 0.05, for ``member`` (the one with weight decay).

    The book's figure (Power et al., log step axis) shows about two decades between the two curves; at CPU
    scale the claim asks for one decade.  A curve that never reaches its level fails."""
    t_train, t_test = grokking_steps(result, member)
    ratio = t_test / max(t_train, 1.0) if not (math.isnan(t_train) or math.isnan(t_test)) else float("nan")
    final_error = 1.0 - float(result.history["test_acc"][-1, member])
    return GROKKING.judge(threshold("t_test(0.9)/t_train(0.99)", ratio, ">=", 10.0),
                          threshold("final test error", final_error, "<=", 0.05),
                          t_train=t_train, t_test=t_test)


# ------------------------------------------------------------------------------ lottery tickets (图14.7)
@dataclass(frozen=True)
class LotteryConfig:
    """Iterative magnitude pruning with rewinding (Frankle & Carbin 2019; the book's 图14.7, LeNet-300-100 on
    MNIST) on a ReLU MLP 64 → ``hidden`` → 10 over the digits.  Each round trains the current subnetworks
    ``steps`` full-batch Adam steps, removes ``prune_rate`` of the remaining weights of each hidden layer (half
    that rate in the output layer, as Frankle & Carbin do) by magnitude and **rewinds** the rest to their
    initial values.  ``tickets`` independent initialisations are pruned side by side, each with its own mask;
    beside each, a control member trains the *same* mask from a fresh random initialisation at every round.
    ``criterion="random"`` prunes at random instead of by magnitude (a negative control)."""

    n_train: int = 500
    hidden: tuple[int, ...] = (100, 100)
    rounds: int = 6
    prune_rate: float = 0.5
    criterion: str = "magnitude"
    steps: int = 150
    lr: float = 3e-3
    record_every: int = 20
    tickets: int = 3
    seed: int = 0


@dataclass
class LotteryResult:
    """Per round r and ticket k: the fraction of weights left ``remaining`` (R+1,), the final test accuracy of
    the rewound ticket ``ticket`` (R+1, K) and of its randomly re-initialised control ``reinit`` (R+1, K);
    ``curves`` (R+1, T, 2) the test accuracy at ``steps`` (T,) of tickets and controls, averaged over k."""

    config: LotteryConfig
    remaining: np.ndarray
    ticket: np.ndarray
    reinit: np.ndarray
    steps: np.ndarray
    curves: np.ndarray


@cached
def run_lottery(config: LotteryConfig) -> LotteryResult:
    """Rounds of train → prune → rewind, all in one batched computation of 2K members: members 0…K−1 are
    the tickets (initialisations from stream 1 of the seed), members K…2K−1 their controls (a fresh
    initialisation from stream 2 + r in round r, trained with the mask of ticket k)."""
    if config.criterion not in ("magnitude", "random"):
        raise ValueError(f"criterion must be 'magnitude' or 'random', got {config.criterion!r}")
    if config.tickets < 1:
        raise ValueError(f"tickets must be ≥ 1, got {config.tickets}")
    data = digits(config.n_train, None, seed=config.seed, standardise=True)
    widths = [64, *config.hidden, 10]
    K = config.tickets
    stds = torch.tensor([[math.sqrt(2 / w) for w in widths[:-1]]] * 2 * K)

    def init(stream: int) -> BatchedMLP:
        return BatchedMLP(widths, 2 * K, act="relu", init_std=stds, generator=generator(config.seed, stream))

    model = init(1)
    theta0 = [p.detach().clone() for p in model.parameters()]
    masks = [torch.ones_like(w) for w in model.weights]
    rates = [config.prune_rate] * (len(widths) - 2) + [config.prune_rate / 2]
    coin = generator(config.seed, 0)  # random pruning only
    left, ticket, reinit, curves = [], [], [], []
    for r in range(config.rounds + 1):
        fresh = list(init(2 + r).parameters())
        with torch.no_grad():
            for p, p0, f in zip(model.parameters(), theta0, fresh):
                p.copy_(torch.cat([p0[:K], f[K:]]))  # tickets rewind, controls start afresh
            pruning.apply_masks(model.weights, masks)
        history = classify.train_classifiers(
            model, data.x, data.labels, x_test=data.x_test, labels_test=data.labels_test, steps=config.steps,
            lr=config.lr, record_every=config.record_every, progress=False,
            after_step=lambda: pruning.apply_masks(model.weights, masks))
        acc = history["test_acc"]  # (T, 2K)
        left.append(pruning.remaining(masks))
        ticket.append(acc[-1, :K])
        reinit.append(acc[-1, K:])
        curves.append(np.stack([acc[:, :K].mean(1), acc[:, K:].mean(1)], axis=1))
        scores = [w[:K].abs() if config.criterion == "magnitude" else torch.rand(w[:K].shape, generator=coin)
                  for w in model.weights]
        ticket_masks = [pruning.prune_smallest(s, m[:K], rate) for s, m, rate in zip(scores, masks, rates)]
        masks = [torch.cat([m, m]) for m in ticket_masks]
    return LotteryResult(config, np.asarray(left), np.asarray(ticket), np.asarray(reinit), history.steps,
                         np.stack(curves))


LOTTERY = ClaimSpec(
    "ch14.lottery", "图14.7",
    "iterative magnitude pruning with rewinding finds subnetworks with ≤ 20% of the weights that test as well "
    "as their dense networks (mean error ≤ dense + 0.01); pruned much further, the tickets degrade, and the "
    "same masks randomly re-initialised do much worse (mean test error ≥ 1.5× the tickets')",
    validation_seeds=REVALIDATION_SEEDS)


def check_lottery(result: LotteryResult) -> Verdict:
    """Mean over tickets k of (best error of ticket k at ≤ 20 % remaining − its dense error) ≤ 0.01; at the
    sparsest round the tickets' mean error is above the mean best one, and the re-initialised controls' mean
    error ≥ 1.5 × the tickets'."""
    err_ticket, err_reinit = 1 - result.ticket, 1 - result.reinit  # (R+1, K)
    sparse = result.remaining <= 0.2
    if not sparse.any():
        raise ValueError("no round reaches 20 % of the weights: add rounds")
    best = err_ticket[sparse].min(axis=0)  # (K,)
    sparsest_ticket, sparsest_reinit = float(err_ticket[-1].mean()), float(err_reinit[-1].mean())
    return LOTTERY.judge(
        threshold("mean(best ticket error(≤20%) − dense error)", float((best - err_ticket[0]).mean()), "<=", 0.01),
        compare_values("ticket error(sparsest)", sparsest_ticket, ">", "best ticket error", float(best.mean())),
        threshold("re-init / ticket error (sparsest)", sparsest_reinit / max(sparsest_ticket, 1e-12), ">=", 1.5),
        remaining_sparsest=float(result.remaining[-1]))


# ------------------------------------------------------------------------------ double descent (图14.8)
@dataclass(frozen=True)
class DoubleDescentConfig:
    """A width sweep of random-features models (a two-layer ReLU net with its first layer frozen, output
    weights fitted to minimum norm; :mod:`companion.core.random_features`) on the bundled digits with a
    fraction ``label_noise`` of the training labels replaced by random ones (the book's figure: ResNet-18 on
    CIFAR with label noise).  Each width is averaged over ``n_draws`` feature draws."""

    n_train: int = 200
    n_test: int = 1000
    label_noise: float = 0.2
    widths: tuple[int, ...] = (10, 20, 40, 60, 80, 100, 130, 160, 180, 200, 220, 250, 300, 400, 600, 1000, 2000)
    n_draws: int = 5
    ridge: float = 0.0
    seed: int = 0


@dataclass
class DoubleDescentResult:
    """Per width (W,): mean test / train classification error and test MSE over the feature draws."""

    config: DoubleDescentConfig
    widths: np.ndarray
    test_error: np.ndarray
    train_error: np.ndarray
    test_mse: np.ndarray


def noisy_digits(n_train: int, n_test: int, label_noise: float, *, seed: int) -> Digits:
    """Digits (standardised pixels) split by ``seed``, with a fraction ``label_noise`` of the training labels
    replaced by a different label drawn at random (stream 1 of the seed)."""
    if not 0 <= label_noise <= 1:
        raise ValueError(f"label_noise must lie in [0, 1], got {label_noise}")
    data = digits(n_train, n_test, seed=seed, standardise=True)
    rng = numpy_rng(seed, 1)
    flip = rng.permutation(n_train)[:int(round(label_noise * n_train))]
    labels = data.labels.clone()
    labels[flip] = torch.as_tensor((labels[flip].numpy() + rng.integers(1, 10, len(flip))) % 10)
    return Digits(data.x, labels, data.x_test, data.labels_test)


@cached
def run_double_descent(config: DoubleDescentConfig) -> DoubleDescentResult:
    """Fit every width of the sweep (closed form, no training loop) and measure the errors.

    The data and the features are drawn on the CPU (the same for a seed on every machine) and moved to the settings'
    device, where the batched SVDs of the fits run."""
    data = noisy_digits(config.n_train, config.n_test, config.label_noise, seed=config.seed)
    device = settings().device
    x, x_test, labels, labels_test = (t.to(device) for t in (data.x, data.x_test, data.labels, data.labels_test))
    y, y_test = data.one_hot().double().to(device), data.one_hot(test=True).double().to(device)
    gen = generator(config.seed, 2)
    test_error, train_error, test_mse = [], [], []
    for m in config.widths:
        W, b = (t.to(device) for t in random_features.draw_features(x.shape[1], m, config.n_draws, generator=gen))
        a = random_features.fit_random_features(x, y, W, b, ridge=config.ridge)
        out_test, out_train = random_features.predict(x_test, W, b, a), random_features.predict(x, W, b, a)
        test_error.append(float((out_test.argmax(-1) != labels_test).double().mean()))
        train_error.append(float((out_train.argmax(-1) != labels).double().mean()))
        test_mse.append(float(((out_test - y_test) ** 2).sum(-1).mean()))
    return DoubleDescentResult(config, np.asarray(config.widths), np.asarray(test_error), np.asarray(train_error),
                               np.asarray(test_mse))


DOUBLE_DESCENT = ClaimSpec(
    "ch14.double-descent", "图14.8",
    "with label noise, the test error first falls, then rises to a peak near the interpolation threshold "
    "(width n, between n/2 and 2n), then falls again as the model grows")


def check_double_descent(result: DoubleDescentResult) -> Verdict:
    """First falls: err(smallest width) > the least error over widths ≤ n/2; then rises: the largest error
    over the wider models (the peak) > that least error; peak width within [n/2, 2n]; then falls: err(largest
    width) < the peak."""
    n, widths, err = result.config.n_train, result.widths, result.test_error
    left = widths <= n / 2
    if not left.any() or left.all():
        raise ValueError(f"the sweep needs widths on both sides of n/2 = {n / 2}")
    best_left = float(err[left].min())
    peak_at = int(np.argmax(np.where(left, -np.inf, err)))
    peak, m_peak = float(err[peak_at]), float(widths[peak_at])
    return DOUBLE_DESCENT.judge(compare_values("err(smallest)", float(err[0]), ">", "min err(m≤n/2)", best_left),
                                compare_values("peak err(m>n/2)", peak, ">", "min err(m≤n/2)", best_left),
                                threshold("m_peak/n", m_peak / n, ">=", 0.5),
                                threshold("m_peak/n", m_peak / n, "<=", 2.0),
                                compare_values("err(largest)", float(err[-1]), "<", "peak err", peak),
                                m_peak=m_peak)


# --------------------------------------------------------------------------- mode connectivity (图14.9)
@dataclass(frozen=True)
class ConnectivityConfig:
    """Two ReLU MLPs 64 → ``width`` → ``width`` → 10 on the digits, from two independent initialisations
    (trained together as a batched pair, full-batch Adam, cross-entropy), then the bend of the Bézier curve
    joining them (:func:`companion.core.connectivity.train_bend`).  The book's figure: ResNet-164 on
    CIFAR-100."""

    n_train: int = 1000
    width: int = 64
    depth: int = 2
    steps: int = 400
    lr: float = 3e-3
    bend_steps: int = 200
    bend_lr: float = 1e-2
    n_points: int = 4
    n_eval: int = 41
    seed: int = 0


@dataclass
class ConnectivityResult:
    """Loss and accuracy along the straight line and the trained curve at ``t`` (J,): training cross-entropy
    and test accuracy; ``bend`` is the curve's training history."""

    config: ConnectivityConfig
    t: np.ndarray
    line_loss: np.ndarray
    curve_loss: np.ndarray
    line_acc: np.ndarray
    curve_acc: np.ndarray
    bend: History


@cached
def run_connectivity(config: ConnectivityConfig) -> ConnectivityResult:
    """Train the two endpoints (stream 1 of the seed), then the bend (stream 2), both on the settings' device;
    evaluate both paths (on the CPU)."""
    data = digits(config.n_train, None, seed=config.seed, standardise=True)
    widths = [64] + [config.width] * config.depth + [10]
    stds = [math.sqrt(2 / w) for w in widths[:-1]]  # He initialisation of every layer (biases alike)
    model = BatchedMLP(widths, 2, act="relu", init_std=torch.tensor([stds] * 2), generator=generator(config.seed, 1))
    classify.train_classifiers(model, data.x, data.labels, steps=config.steps, lr=config.lr,
                               record_every=config.steps, progress=True, desc="two endpoints")
    w1, w2 = connectivity.member(model, 0), connectivity.member(model, 1)
    theta, bend = connectivity.train_bend(w1, w2, data.x, data.labels, steps=config.bend_steps, lr=config.bend_lr,
                                          n_points=config.n_points, generator=generator(config.seed, 2))
    t = torch.linspace(0, 1, config.n_eval)
    line_loss, _ = connectivity.path_metrics(connectivity.line(w1, w2, t), data.x, data.labels)
    curve_loss, _ = connectivity.path_metrics(connectivity.bezier(w1, theta, w2, t), data.x, data.labels)
    _, line_acc = connectivity.path_metrics(connectivity.line(w1, w2, t), data.x_test, data.labels_test)
    _, curve_acc = connectivity.path_metrics(connectivity.bezier(w1, theta, w2, t), data.x_test, data.labels_test)
    return ConnectivityResult(config, t.numpy(), line_loss.numpy(), curve_loss.numpy(), line_acc.numpy(),
                              curve_acc.numpy(), bend)


MODE_CONNECTIVITY = ClaimSpec(
    "ch14.mode-connectivity", "图14.9",
    "two independently trained networks are joined by a curve along which the training loss stays low and the "
    "test accuracy stays close to the endpoints' (drop ≤ 0.02), while the straight line between them has a "
    "much higher loss barrier (≥ 5× the curve's)")


def barrier(loss: np.ndarray) -> float:
    """Highest loss along a path above the mean of its two endpoints' losses."""
    return float(np.max(loss) - (loss[0] + loss[-1]) / 2)


def check_connectivity(result: ConnectivityResult) -> Verdict:
    """Curve barrier < 0.2 × line barrier (training loss); the curve's lowest test accuracy is at most 0.02
    below the endpoints' mean."""
    ends = (result.curve_acc[0] + result.curve_acc[-1]) / 2
    drop_curve = float(ends - result.curve_acc.min())
    drop_line = float(ends - result.line_acc.min())
    b_line, b_curve = barrier(result.line_loss), barrier(result.curve_loss)
    return MODE_CONNECTIVITY.judge(compare_values("curve barrier", b_curve, "<", "0.2·line barrier", 0.2 * b_line),
                                   threshold("curve test-accuracy drop", drop_curve, "<=", 0.02),
                                   line_barrier=b_line, line_accuracy_drop=drop_line)


# ------------------------------------------------------------- double descent in trained networks (图14.8)
@dataclass(frozen=True)
class TrainedDoubleDescentConfig:
    """A width sweep of two-layer ReLU networks 64 → m → 10 with **both layers trained** (Nakkiran et al. 2021,
    the book's 图14.8, ResNet-18 of growing width on CIFAR, shrunk to the bundled digits): full-batch Adam on the
    cross-entropy for ``steps`` steps on ``n_train`` digits whose training labels are corrupted at each rate of
    ``label_noise`` (the same images and test split for every rate; :func:`noisy_digits`).  Every (noise, width)
    pair is one member of one batched ensemble: a narrower member is the widest network with its extra hidden
    units masked off (:func:`companion.core.pruning.width_masks`).  Initialisation: He (std √(2/64)) for the
    first layer, std 1/√m for the output layer of a width-m member."""

    n_train: int = 800
    n_test: int | None = None
    label_noise: tuple[float, ...] = (0.0, 0.2)
    widths: tuple[int, ...] = (2, 4, 6, 8, 12, 16, 24, 32, 48, 64)
    steps: int = 1000
    lr: float = 1e-2
    record_every: int = 100
    seed: int = 0


@dataclass
class TrainedDoubleDescentResult:
    """Errors of every member at the recorded ``steps`` (T,): ``test_error`` and ``train_error`` (the latter on
    the member's own, possibly corrupted, labels), each (T, L, W) for the L noise rates and W widths."""

    config: TrainedDoubleDescentConfig
    widths: np.ndarray
    label_noise: np.ndarray
    steps: np.ndarray
    test_error: np.ndarray
    train_error: np.ndarray


@cached
def run_trained_double_descent(config: TrainedDoubleDescentConfig) -> TrainedDoubleDescentResult:
    """Train every (noise, width) member of ``config`` as one ensemble (initialisation from stream 3 of the seed)
    through :func:`companion.core.classify.train_classifiers`, the width masks re-applied after every step."""
    if not config.label_noise or len(config.widths) < 3 or sorted(set(config.widths)) != list(config.widths):
        raise ValueError(f"need at least one noise rate and ≥ 3 increasing widths; got label_noise="
                         f"{config.label_noise}, widths={config.widths}")
    sets = [noisy_digits(config.n_train, config.n_test, p, seed=config.seed) for p in config.label_noise]
    L, W, H = len(config.label_noise), len(config.widths), max(config.widths)
    hidden = [m for _ in config.label_noise for m in config.widths]  # member k = (noise k // W, width k % W)
    labels = torch.stack([d.labels for d in sets for _ in config.widths])  # (K, n): each member its own labels
    stds = torch.tensor([[math.sqrt(2 / 64), 1 / math.sqrt(m)] for m in hidden])
    model = BatchedMLP([64, H, 10], L * W, act="relu", init_std=stds, generator=generator(config.seed, 3))
    masks = pruning.width_masks(model.widths, hidden)
    with torch.no_grad():
        pruning.apply_masks(model.weights, masks)
    history = classify.train_classifiers(
        model, sets[0].x, labels, x_test=sets[0].x_test, labels_test=sets[0].labels_test, steps=config.steps,
        lr=config.lr, record_every=config.record_every, desc="width sweep",
        after_step=lambda: pruning.apply_masks(model.weights, masks))
    T = len(history.steps)
    return TrainedDoubleDescentResult(config, np.asarray(config.widths), np.asarray(config.label_noise),
                                      history.steps, 1 - history["test_acc"].reshape(T, L, W),
                                      1 - history["train_acc"].reshape(T, L, W))


FIT_LEVEL = 0.01  # a width "fits" its training set when its final training error is ≤ 1 %


def interpolation_width(result: TrainedDoubleDescentResult, arm: int = -1) -> float:
    """The interpolation threshold of noise arm ``arm``: the narrowest width whose final training error (on its
    own labels) is ≤ :data:`FIT_LEVEL`; NaN when no width of the sweep fits."""
    fits = np.flatnonzero(result.train_error[-1, arm] <= FIT_LEVEL)
    return float(result.widths[fits[0]]) if fits.size else float("nan")


def error_bump(err: np.ndarray) -> tuple[float, int]:
    """The height of the highest bump of a test-error curve over increasing widths, and where it is: the largest
    err[j] − max(min err[:j], err[−1]) over the inner widths j, i.e. how far the curve rises above the best
    narrower model and above the widest one; 0 when the curve has no bump (it only falls)."""
    err = np.asarray(err, dtype=float)
    if err.ndim != 1 or len(err) < 3:
        raise ValueError(f"need a curve over ≥ 3 widths, got shape {err.shape}")
    heights = [err[j] - max(err[:j].min(), err[-1]) for j in range(1, len(err) - 1)]
    j = int(np.argmax(heights))
    return max(float(heights[j]), 0.0), j + 1


TRAINED_DD_PEAK = ClaimSpec(
    "ch14.trained-double-descent", "图14.8",
    "with 20% label noise, the test error of trained two-layer networks first falls, then peaks near the "
    "interpolation threshold (the narrowest width that fits the noisy training set; peak width within a factor 2 "
    "of it), at least 0.05 above both the best narrower network and the widest one")
TRAINED_DD_CLEAN = ClaimSpec(
    "ch14.trained-double-descent-clean", "图14.8",
    "without label noise, the same sweep's peak is barely visible: its highest bump is at most a quarter of the "
    "noisy sweep's and at most 0.02 in test error")


def check_trained_double_descent(result: TrainedDoubleDescentResult) -> Verdict:
    """On the noisiest arm: err(narrowest) > the least error below the peak (first descent); the bump
    (:func:`error_bump`) ≥ 0.05; the peak width m_peak within [m*/2, 2m*] of the interpolation width m*
    (:func:`interpolation_width`; NaN, never fitted, fails)."""
    err = result.test_error[-1, -1]
    height, j = error_bump(err)
    m_peak, m_fit = float(result.widths[j]), interpolation_width(result, -1)
    ratio = m_peak / m_fit if not math.isnan(m_fit) else float("nan")
    return TRAINED_DD_PEAK.judge(
        compare_values("err(narrowest)", float(err[0]), ">", "min err(narrower than peak)", float(err[:j].min())),
        threshold("peak bump", height, ">=", 0.05),
        threshold("m_peak/m*", ratio, ">=", 0.5), threshold("m_peak/m*", ratio, "<=", 2.0),
        label_noise=float(result.label_noise[-1]), m_peak=m_peak, m_fit=m_fit)


def check_trained_double_descent_clean(result: TrainedDoubleDescentResult) -> Verdict:
    """The least noisy arm's bump ≤ 0.25 × the noisiest arm's bump and ≤ 0.02 (a single-arm run compares the
    arm with itself, and fails)."""
    clean, _ = error_bump(result.test_error[-1, 0])
    noisy, _ = error_bump(result.test_error[-1, -1])
    return TRAINED_DD_CLEAN.judge(compare_values("bump(clean)", clean, "<=", "0.25·bump(noisy)", 0.25 * noisy),
                                  threshold("bump(clean)", clean, "<=", 0.02),
                                  label_noise=(float(result.label_noise[0]), float(result.label_noise[-1])))
