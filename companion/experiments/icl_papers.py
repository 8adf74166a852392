"""The in-context-learning papers behind §14.3 (上下文学习): Boix-Adserà et al., "When can transformers reason with
abstract symbols?" (ICLR 2024, arXiv 2310.09753), and Li et al., "How do nonlinear transformers learn and generalize in
in-context learning?" (ICML 2024, arXiv 2402.15607; its section below, from :class:`PatternICLConfig` on).

**Template tasks** (their §1, 图2).  A template is a string of wildcards with a label: the *variable-assignment* task
``α=1;β=-1;print(α) → +1`` / ``print(β) → −1`` of their 图2 reduces, once the fixed tokens are dropped, to the two
templates ``αβα → +1`` and ``αββ → −1``; the *same/different* task is ``αα → +1``, ``αβ → −1``.  A sample fills the
wildcards with distinct symbols.  Training symbols come from one alphabet, test symbols from a disjoint alphabet the
model never sees in training (their "held-out symbols"): the test accuracy is out-of-distribution (OOD) by
construction.  Chance is 1/2.

* A transformer's OOD accuracy rises with the number n of training samples (their 图2c); a fully connected network
  (MLP on the concatenated one-hot tokens) fits its training set at every n but stays at chance on unseen symbols
  (their Appendix I: the rows of its first layer that read an unseen symbol never receive a gradient).
* Observation 1.2: adding a trainable a·I to every head's W_K W_Qᵀ (so that the attention scores gain a·XXᵀ, the
  incidence matrix of the symbols) reaches the same OOD accuracy with about ten times fewer samples.

**Copying** (their §4, Theorems 4.1–4.2, 图5).  One attention layer, no residual stream, embedding and unembedding
tied: the input is one symbol α, the label is α.  Trained on n symbols and tested on unseen ones, the network's
OOD accuracy falls as the embedding dimension d_emb grows (Theorem 4.1: at d_emb → ∞ the test loss does not move);
replacing each head's W_V W_Oᵀ by W_V W_Oᵀ + b·I, b trainable, lets it copy unseen symbols (Theorem 4.2).

The transformer is :class:`companion.core.transformer.Transformer` with the two reparametrisations added
(:class:`SymbolTransformer`); every run trains through the package's one engine (``fit_last_token`` and
:func:`companion.core.train.train`), many models as one batched computation (members = sample sizes × variants).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor, nn

from companion.core.nets import BatchedMLP
from companion.core.train import descend, run, train
from companion.core.transformer import Transformer, TransformerConfig, fit_last_token, last_token_accuracy
from companion.kit.claims import ClaimSpec, Verdict, threshold
from companion.kit.seeds import generator, numpy_rng

#: Template tasks: wildcard strings (indices of distinct symbols) and their labels (class 1 ↔ +1, class 0 ↔ −1).
TASKS: dict[str, tuple[tuple[tuple[int, ...], int], ...]] = {
    "same/different": (((0, 0), 1), ((0, 1), 0)),                # αα → +1, αβ → −1
    "variable assignment": (((0, 1, 0), 1), ((0, 1, 1), 0)),     # α=1;β=-1;print(α) → +1, … print(β) → −1
}


class SymbolTransformer(Transformer):
    """:class:`Transformer` with Boix-Adserà et al.'s two one-parameter-per-head reparametrisations.

    * ``kq_identity`` (Observation 1.2): each head's W_Q W_Kᵀ becomes W_Q W_Kᵀ + a·I, a trainable (one scalar per head
      and layer, starting at 0): the scores gain a·x_i·x_j/√d_k, the token incidence XXᵀ.
    * ``vo_identity`` (Theorem 4.2): each head's value-output map W_V W^attn becomes W_V W^attn + b·I (b trainable,
      from 0): the head adds b·Σ_j attn_ij x_j to its output.
    * ``attention_only`` (the copying network of their §4): one attention layer, no residual stream, no LayerNorm and
      no MLP, no position vector, readout tied to the token table: logits = Attn(X) W^emᵀ.

    ``kq_identity``/``vo_identity`` may be a bool per member (an ensemble of plain and reparametrised models); a
    member whose flag is off keeps its a (or b) at 0 because the flag multiplies it.
    """

    def __init__(self, cfg: TransformerConfig, n_members: int | None = None, gamma: float = 0.5,
                 generator: torch.Generator | None = None, *, kq_identity=False, vo_identity=False,
                 attention_only: bool = False, identity_init: float = 0.0) -> None:
        super().__init__(cfg, n_members, gamma, generator)
        K, H, L = self.n_members, cfg.n_heads, cfg.n_layers
        self.register_buffer("kq_on", torch.as_tensor(kq_identity, dtype=torch.float32).expand(K).clone())
        self.register_buffer("vo_on", torch.as_tensor(vo_identity, dtype=torch.float32).expand(K).clone())
        self.a = nn.Parameter(torch.full((K, L, H), float(identity_init)))  # member axis first (MemberAdamW)
        self.b = nn.Parameter(torch.full((K, L, H), float(identity_init)))
        self.attention_only = attention_only
        if attention_only and (L != 1 or cfg.vocab_size is None):
            raise ValueError("the copying network has one attention layer over a token table")
        if attention_only:  # their §4 network reads the token embeddings alone: no position vector
            with torch.no_grad():
                self.x_pos.zero_()
            self.x_pos.requires_grad_(False)

    def attention(self, layer: nn.Module, x: Tensor, B: int, T: int, keep: Tensor | None,
                  last_only: bool = False) -> tuple[Tensor, Tensor]:
        """(13.4)–(13.5) with + a·XXᵀ in the scores and + b·(attn X) in the output, per head (no ``attn_keep``)."""
        if keep is not None:
            raise ValueError("SymbolTransformer does not mask attention weights (attn_keep)")
        K, H, dk = x.shape[0], self.cfg.n_heads, self.cfg.d_k
        depth = next(i for i, m in enumerate(self.layers) if m is layer)
        a = (self.a[:, depth] * self.kq_on[:, None])[:, None, :, None, None]  # (K, 1, H, 1, 1)
        b = (self.b[:, depth] * self.vo_on[:, None])[:, None, :, None, None]

        def heads(inputs: Tensor, w: Tensor, n: int) -> Tensor:
            return torch.bmm(inputs, w).reshape(K, B, n, H, dk).transpose(2, 3)  # (K, B, H, n, d_k)

        rows = 1 if last_only else T
        xs = x.reshape(K, B, T, -1)
        queries = xs[:, :, -1:] if last_only else xs  # (K, B, T', d)
        q = heads(queries.reshape(K, B * rows, -1), layer.w_q, rows)
        k, v = heads(x, layer.w_k, T), heads(x, layer.w_v, T)
        incidence = (queries @ xs.transpose(-1, -2))[:, :, None]  # (K, B, 1, T', T): x_i·x_j
        scores = (q @ k.transpose(-1, -2) + a * incidence) / math.sqrt(dk)
        if self.cfg.causal and not last_only:
            future = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)
            scores = scores.masked_fill(future, float("-inf"))
        attn = scores.softmax(dim=-1)  # (K, B, H, T', T)
        out = (attn @ v).transpose(2, 3).reshape(K, B * rows, H * dk)
        skip = ((b * attn).sum(2) @ xs).reshape(K, B * rows, -1)  # Σ_h b_h attn_h X
        return torch.bmm(out, layer.w_attn) + skip, attn

    def forward(self, x: Tensor, **kwargs):
        if not self.attention_only:
            return super().forward(x, **kwargs)
        x = self.with_member_axis(x)
        K, B, T = x.shape[:3]
        last = kwargs.get("last_only", False)
        h, _ = self.attention(self.layers[0], self.embed(x), B, T, None, last)
        logits = torch.bmm(h, self.w_em.transpose(1, 2)).reshape(K, B, 1 if last else T, -1)  # tied readout
        return logits if self.ensemble else logits[0]


# ----------------------------------------------------------------------------------------------- template tasks
@dataclass(frozen=True)
class TemplateConfig:
    """One template-task experiment: the task, the alphabets, the sample sizes n and the models.

    ``n_symbols`` training symbols, ``n_test_symbols`` held-out ones (token ids after the training alphabet).
    """

    task: str = "variable assignment"
    sizes: tuple[int, ...] = (32, 64, 256, 2048)
    n_symbols: int = 256
    n_test_symbols: int = 64
    d_model: int = 32
    n_heads: int = 2
    n_layers: int = 1
    d_ff: int = 64
    steps: int = 800
    lr: float = 3e-3
    batch: int = 64
    mlp_width: int = 128
    mlp_steps: int = 300
    n_test: int = 512
    a_init: float = 1.0
    seed: int = 0


def template_samples(task: str, n: int, symbols: np.ndarray, rng: np.random.Generator) -> tuple[Tensor, Tensor]:
    """n samples of ``task``: a template drawn uniformly, its wildcards filled with distinct symbols of ``symbols``."""
    templates = TASKS[task]
    which = rng.integers(len(templates), size=n)
    width = max(max(t) for t, _ in templates) + 1
    fill = np.stack([rng.choice(symbols, size=width, replace=False) for _ in range(n)])  # (n, wildcards)
    seqs = np.stack([fill[i, list(templates[w][0])] for i, w in enumerate(which)])
    labels = np.array([templates[w][1] for w in which])
    return torch.as_tensor(seqs, dtype=torch.long), torch.as_tensor(labels, dtype=torch.long)


@dataclass
class TemplateResult:
    """OOD (unseen-symbol) and training accuracy per sample size: ``ood[variant]`` (len(sizes),)."""

    sizes: tuple[int, ...]
    ood: dict[str, np.ndarray]
    train: dict[str, np.ndarray]


def run_template(config: TemplateConfig, variants: tuple[str, ...] = ("transformer", "transformer + a·I", "MLP"),
                 progress: bool = False) -> TemplateResult:
    """Train every variant at every sample size on one seed; the transformers as one batched ensemble."""
    rng = numpy_rng(config.seed)
    train_alphabet = np.arange(config.n_symbols)
    test_alphabet = config.n_symbols + np.arange(config.n_test_symbols)
    sizes, n_max = tuple(config.sizes), max(config.sizes)
    data = [template_samples(config.task, n, train_alphabet, rng) for n in sizes]
    x_test, y_test = template_samples(config.task, config.n_test, test_alphabet, rng)
    vocab = config.n_symbols + config.n_test_symbols
    T = x_test.shape[1]
    ood: dict[str, np.ndarray] = {}
    fit: dict[str, np.ndarray] = {}
    kinds = [v for v in variants if v.startswith("transformer")]
    if kinds:
        # members: (variant, size); each member's n samples tiled to n_max rows (uniform mini-batches over its n)
        xs = torch.stack([d[0][torch.arange(n_max) % len(d[0])] for _ in kinds for d in data])
        ys = torch.stack([d[1][torch.arange(n_max) % len(d[1])] for _ in kinds for d in data])
        kq = [v.endswith("a·I") for v in kinds for _ in sizes]
        cfg = TransformerConfig(vocab_size=vocab, max_len=T, d_model=config.d_model, n_layers=config.n_layers,
                                n_heads=config.n_heads, d_ff=config.d_ff, d_out=2, norm="pre", causal=False)
        model = SymbolTransformer(cfg, n_members=len(xs), generator=generator(config.seed, 1), kq_identity=kq,
                                  identity_init=config.a_init)
        fit_last_token(model, xs, ys, steps=config.steps, lr=config.lr, batch_size=config.batch,
                       generator=generator(config.seed, 2), progress=progress, record_every=config.steps,
                       desc="template tasks: transformers")
        acc_ood = last_token_accuracy(model, x_test, y_test).reshape(len(kinds), len(sizes))
        acc_fit = last_token_accuracy(model, xs, ys).reshape(len(kinds), len(sizes))  # tiled: its n samples alike
        for i, v in enumerate(kinds):
            ood[v], fit[v] = acc_ood[i], acc_fit[i]
    if "MLP" in variants:
        ood["MLP"], fit["MLP"] = _run_mlp(config, data, (x_test, y_test), vocab)
    return TemplateResult(sizes, ood, fit)


def _one_hot(x: Tensor, vocab: int) -> Tensor:
    return torch.nn.functional.one_hot(x, vocab).float().reshape(len(x), -1)  # (N, T·V): concatenated one-hots


def _run_mlp(config: TemplateConfig, data, test, vocab: int) -> tuple[np.ndarray, np.ndarray]:
    """Appendix I's fully connected network: one-hot tokens concatenated, regression onto ±1, Adam, full batch."""
    ood, fit = [], []
    for i, (x, y) in enumerate(data):
        net = BatchedMLP([x.shape[1] * vocab, config.mlp_width, 1], n_members=1, act="relu",
                         init_std=1 / math.sqrt(config.mlp_width), generator=generator(config.seed, 3 + i))
        target = (2.0 * y - 1)[None, :, None]
        train(net, _one_hot(x, vocab), target, steps=config.mlp_steps, lr=1e-3, record_every=config.mlp_steps,
              progress=False)
        with torch.no_grad():
            fit.append(float(((net(_one_hot(x, vocab))[0, :, 0] > 0).long() == y).float().mean()))
            ood.append(float(((net(_one_hot(test[0], vocab))[0, :, 0] > 0).long() == test[1]).float().mean()))
    return np.array(ood), np.array(fit)


# ----------------------------------------------------------------------------------------------- copying
@dataclass(frozen=True)
class CopyConfig:
    """The copying task of their §4: input one symbol α, label α; ``n_symbols`` seen in training, ``n_test_symbols``
    never seen; one attention layer (``n_heads`` heads), tied embeddings, one plain and one b·I model per embedding
    dimension, trained by full-batch gradient descent (learning rate ``lr``) for ``steps`` steps from b = 0: the
    early training that Theorems 4.1–4.2 are about."""

    dims: tuple[int, ...] = (16, 64, 256, 1024)
    n_symbols: int = 32
    n_test_symbols: int = 32
    n_heads: int = 2
    steps: int = 20
    lr: float = 0.5
    seed: int = 0


@dataclass
class CopyResult:
    """Per variant, (len(dims),) arrays: how much the cross-entropy on the training symbols and on unseen symbols fell
    during the run, and their ratio ``transfer`` = test drop / train drop (Theorem 4.1: → 0 as d_emb → ∞)."""

    dims: tuple[int, ...]
    train_drop: dict[str, np.ndarray]
    test_drop: dict[str, np.ndarray]

    @property
    def transfer(self) -> dict[str, np.ndarray]:
        return {v: self.test_drop[v] / self.train_drop[v] for v in self.train_drop}


def _copy_loss(model: SymbolTransformer, x: Tensor) -> Tensor:
    """Cross-entropy of copying each symbol of x (N, 1), one value per member (K,)."""
    logits = model(x, last_only=True)[:, :, -1]  # (K, N, V)
    return torch.nn.functional.cross_entropy(logits.transpose(1, 2), x[:, 0].expand(len(logits), -1),
                                             reduction="none").mean(1)


def run_copy(config: CopyConfig, variants: tuple[str, ...] = ("transformer", "transformer + b·I"),
             progress: bool = False) -> CopyResult:
    """Train the copying network at every embedding dimension, plain and with b·I (one ensemble per d), by gradient
    descent through the engine; record the training and test (unseen-symbol) losses at the start and the end."""
    vocab = config.n_symbols + config.n_test_symbols
    x_train = torch.arange(config.n_symbols)[:, None]
    x_test = (config.n_symbols + torch.arange(config.n_test_symbols))[:, None]
    drops = {v: (np.zeros(len(config.dims)), np.zeros(len(config.dims))) for v in variants}
    vo = [v.endswith("b·I") for v in variants]
    for i, d in enumerate(config.dims):
        cfg = TransformerConfig(vocab_size=vocab, max_len=1, d_model=d, n_layers=1, n_heads=config.n_heads, d_ff=0,
                                norm="none", causal=False)
        model = SymbolTransformer(cfg, n_members=len(variants), generator=generator(config.seed, 10 + i),
                                  vo_identity=vo, attention_only=True)
        params = [p for p in model.parameters() if p.requires_grad]

        def record(step: int) -> dict[str, Tensor]:
            with torch.no_grad():
                return {"train": _copy_loss(model, x_train), "test": _copy_loss(model, x_test)}

        h = run(descend(torch.optim.SGD(params, lr=config.lr), lambda: _copy_loss(model, x_train)),
                steps=config.steps, record=record, record_every=config.steps, progress=progress,
                desc=f"copying, d_emb = {d}")
        for j, v in enumerate(variants):
            drops[v][0][i] = h["train"][0, j] - h["train"][-1, j]
            drops[v][1][i] = h["test"][0, j] - h["test"][-1, j]
    return CopyResult(tuple(config.dims), {v: a for v, (a, _) in drops.items()}, {v: b for v, (_, b) in drops.items()})


# ----------------------------------------------------------------------------------------------- claims
#: The labels name the paper and its figure or theorem: never a figure of the book.
TRANSFORMER_OOD = ClaimSpec(
    "chicl.boix-transformer-ood", "Boix-Adserà Fig. 2",
    "on symbols never seen in training, a transformer's accuracy on the variable-assignment task rises with the number "
    "of training samples: by ≥ 0.2 from the smallest to the largest n, to ≥ 0.8")
MLP_CHANCE = ClaimSpec(
    "chicl.boix-mlp-chance", "Boix-Adserà App. I",
    "a fully connected network fits its training set at every n (accuracy ≥ 0.95) yet stays at chance on unseen "
    "symbols (accuracy ≤ 0.65 at every n)")
KQ_IDENTITY = ClaimSpec(
    "chicl.boix-kq-identity", "Boix-Adserà Obs. 1.2",
    "with a trainable a·I added to every head's W_K W_Qᵀ, 8× fewer training samples suffice: at n = 256 the "
    "transformer reaches the accuracy ≥ 0.85 on unseen symbols that the plain transformer reaches at n = 2048")


def check_transformer_ood(result: TemplateResult, variant: str = "transformer") -> Verdict:
    """[Boix-Adserà Fig. 2]: the OOD accuracy of ``variant`` rises with n, to a clear success at the largest n.

    Its negative control is the paper's own contrast, the fully connected network (``variant="MLP"``)."""
    acc = result.ood[variant]
    return TRANSFORMER_OOD.judge(
        threshold(f"acc(n={result.sizes[-1]}) − acc(n={result.sizes[0]})", acc[-1] - acc[0], ">=", 0.2),
        threshold(f"acc(n={result.sizes[-1]})", acc[-1], ">=", 0.8),
        accuracy=acc, sizes=list(result.sizes), variant=variant)


def check_mlp_chance(result: TemplateResult, variant: str = "MLP") -> Verdict:
    """[Boix-Adserà App. I]: ``variant`` fits every training set but its OOD accuracy stays near 1/2 at every n.

    Its negative control is the transformer (``variant="transformer"``), which leaves chance as n grows."""
    ood, fit = result.ood[variant], result.train[variant]
    return MLP_CHANCE.judge(threshold("min training accuracy", fit.min(), ">=", 0.95),
                            threshold("max OOD accuracy", ood.max(), "<=", 0.65),
                            ood=ood, train=fit, sizes=list(result.sizes), variant=variant)


def check_kq_identity(result: TemplateResult, variant: str = "transformer + a·I", reference: str = "transformer",
                      fewer: int = 8, level: float = 0.85) -> Verdict:
    """[Boix-Adserà Obs. 1.2]: ``variant`` at n_max/``fewer`` reaches ``level``, which ``reference`` reaches at n_max.

    Its negative control is the plain transformer at the same sample size (``variant="transformer"``)."""
    small = result.sizes.index(result.sizes[-1] // fewer)
    return KQ_IDENTITY.judge(
        threshold(f"{variant} acc(n={result.sizes[small]})", result.ood[variant][small], ">=", level),
        threshold(f"{reference} acc(n={result.sizes[-1]})", result.ood[reference][-1], ">=", level),
        **{variant: result.ood[variant], reference: result.ood[reference]}, sizes=list(result.sizes))


COPY_WIDTH = ClaimSpec(
    "chicl.boix-copy-width", "Boix-Adserà Thm 4.1",
    "early in training the copying network's loss on unseen symbols falls less and less as d_emb grows: its drop, "
    "relative to the training loss's drop, is at d_emb = 1024 ≤ 1/4 of that at d_emb = 16 and ≤ 0.05")
COPY_VO = ClaimSpec(
    "chicl.boix-copy-vo-identity", "Boix-Adserà Thm 4.2",
    "with a trainable b·I added to every head's W_V W_Oᵀ the loss on unseen symbols falls with the training loss at "
    "every d_emb: its relative drop stays ≥ 0.5 up to d_emb = 1024")


def check_copy_width(result: CopyResult, variant: str = "transformer") -> Verdict:
    """[Boix-Adserà Thm 4.1]: ``variant``'s transfer (test drop / train drop) vanishes as d_emb grows.

    Its negative control is the paper's fix, the b·I network (``variant="transformer + b·I"``)."""
    t = result.transfer[variant]
    return COPY_WIDTH.judge(
        threshold("min training-loss drop", result.train_drop[variant].min(), ">=", 0.5),
        threshold(f"transfer(d={result.dims[-1]}) / transfer(d={result.dims[0]})", t[-1] / t[0], "<=", 0.25),
        threshold(f"transfer(d={result.dims[-1]})", t[-1], "<=", 0.05),
        transfer=t, dims=list(result.dims), variant=variant)


def check_copy_vo_identity(result: CopyResult, variant: str = "transformer + b·I") -> Verdict:
    """[Boix-Adserà Thm 4.2]: with b·I the transfer stays of order one at every d_emb.

    Its negative control is the plain network of Theorem 4.1 (``variant="transformer"``)."""
    t = result.transfer[variant]
    return COPY_VO.judge(
        threshold("min training-loss drop", result.train_drop[variant].min(), ">=", 0.5),
        threshold("min transfer over d_emb", t.min(), ">=", 0.5),
        transfer=t, dims=list(result.dims), variant=variant)


# =============================================================================================================
# Li et al., "How do nonlinear transformers learn and generalize in in-context learning?" (ICML 2024, arXiv
# 2402.15607): in-context binary classification over orthonormal patterns with a one-layer, one-head transformer
# whose softmax attention feeds a ReLU MLP with no residual connection.
#
# **Data** (their §3.2).  M₁ in-domain-relevant (IDR) patterns μ_1…μ_M₁ and M₂ in-domain-irrelevant (IDI) patterns
# ν_1…ν_M₂, orthonormal (here the standard basis of R^{M₁+M₂}); an input is x = μ_j + κ ν_k, κ ~ U[−1/2, 1/2].  A
# task f = (a, b) labels inputs whose relevant pattern is μ_a by +1 and μ_b by −1: M₁(M₁−1) tasks.  A prompt of
# task f holds l context examples (x_i, y_i) and a query x_q whose pattern is μ_a or μ_b; a fraction α of the
# context examples share the query's relevant pattern (their α).  Assumed (the seed summary does not say what the
# other examples are): every other example carries one of the other M₁ − 1 relevant patterns, uniformly — the
# task's second pattern with its label, any other pattern with a random label — so that only same-pattern examples
# tell the query's label (with the task's other pattern alone, "the opposite of the majority label" would solve
# every prompt at α < 1/2 without looking at the patterns).  A token is p_i = (x_i, y_i); the query's label is 0.
#
# **Model** (their (2)).  F(P) = Σ_i a_i ReLU(W_O Σ_j W_V p_j softmax_j(p_jᵀ W_Kᵀ W_Q p_q)), the sum over the
# context examples, a_i = ±1/m fixed (half each), hinge loss max(0, 1 − y F), stochastic gradient descent.
# =============================================================================================================
@dataclass(frozen=True)
class PatternICLConfig:
    """One batched run of Li et al.'s setting: members = training variants (task set, α), each with its own
    initialisation, trained by SGD on fresh prompts of its training tasks.

    ``variants`` names each member by (task set, α): task set ``"cover"`` satisfies their Condition 3.2 (the cycle
    (μ_j → +1, μ_{j+1} → −1), j = 1…M₁: every relevant pattern appears with both labels, M₁ of the M₁(M₁−1) tasks);
    ``"one-sided"`` has as many tasks but every pattern always on one side (μ_1…μ_{M₁/2} always +1), violating it.
    ``w_o_scale`` multiplies W_O's initial standard deviation 1/√m_a (small: neurons that training does not use keep
    small norms, their Theorem 3.7's premise; assumed, the summary gives no initialisation).
    """

    variants: tuple[tuple[str, float], ...] = (("cover", 0.3), ("one-sided", 0.3), ("cover", 0.1), ("cover", 0.2),
                                               ("cover", 0.5))
    n_relevant: int = 8        # M₁
    n_irrelevant: int = 8      # M₂
    context: int = 20          # l
    m_a: int = 32              # rows of W_V
    m_b: int = 32              # rows of W_K, W_Q
    m: int = 64                # MLP neurons (rows of W_O)
    w_o_scale: float = 0.1
    steps: int = 300
    lr: float = 0.5
    batch: int = 64
    record_every: int = 25
    n_test: int = 1000
    seed: int = 0


def pattern_training_tasks(kind: str, n_relevant: int) -> Tensor:
    """The training tasks (T, 2) as (pattern labelled +1, pattern labelled −1): ``"cover"`` meets Condition 3.2,
    ``"one-sided"`` (as many tasks, every pattern on one side only) does not."""
    M = n_relevant
    if kind == "cover":
        return torch.tensor([(j, (j + 1) % M) for j in range(M)])
    if kind == "one-sided":
        half = M // 2
        return torch.tensor([(j % half, half + (j + j // half) % half) for j in range(M)])
    raise ValueError(f"unknown task set {kind!r}: 'cover' or 'one-sided'")


def unseen_tasks(train: Tensor, n_relevant: int) -> Tensor:
    """Every task (a, b), a ≠ b, not among ``train``: the tasks the in-domain test uses."""
    seen = {tuple(t) for t in train.tolist()}
    return torch.tensor([(a, b) for a in range(n_relevant) for b in range(n_relevant) if a != b and (a, b) not in seen])


def pattern_prompts(tasks: Tensor, alpha: Tensor, n: int, context: int, relevant: Tensor, n_irrelevant: int,
                    gen: torch.Generator) -> tuple[Tensor, Tensor]:
    """``n`` prompts per member: tokens (K, n, l+1, d+1) and the query's label (K, n).

    ``tasks`` (K, T, 2) indexes rows of ``relevant`` (M, d); ``alpha`` (K,) the fraction of the ``context`` examples
    sharing the query's relevant pattern (exactly round(α·l) of them, at random places); irrelevant patterns are
    the last ``n_irrelevant`` basis vectors of R^d."""
    K, M, d = tasks.shape[0], relevant.shape[0], relevant.shape[1]
    pair = torch.gather(tasks, 1, torch.randint(tasks.shape[1], (K, n, 1), generator=gen).expand(-1, -1, 2))
    minus = torch.randint(2, (K, n), generator=gen)  # 0: the query carries the task's + pattern, 1: its − pattern
    q_pat = torch.gather(pair, 2, minus[..., None])[..., 0]
    n_same = torch.round(alpha * context).long()  # (K,)
    same = torch.rand(K, n, context, generator=gen).argsort(-1) < n_same[:, None, None]
    other = torch.randint(M - 1, (K, n, context), generator=gen)
    other = other + (other >= q_pat[..., None]).long()  # any pattern but the query's
    pat = torch.where(same, q_pat[..., None], other)
    random_label = 1.0 - 2.0 * torch.randint(2, (K, n, context), generator=gen).float()
    y_ctx = torch.where(pat == pair[..., :1], 1.0, torch.where(pat == pair[..., 1:], -1.0, random_label))
    y_q = 1.0 - 2.0 * minus.float()
    pat = torch.cat([pat, q_pat[..., None]], -1)
    kappa = torch.rand(K, n, context + 1, 1, generator=gen) - 0.5
    irr = d - n_irrelevant + torch.randint(n_irrelevant, (K, n, context + 1), generator=gen)
    x = relevant[pat] + kappa * torch.eye(d)[irr]
    y = torch.cat([y_ctx, torch.zeros(K, n, 1)], -1)
    return torch.cat([x, y[..., None]], -1), y_q


class PatternTransformer(nn.Module):
    """Li et al.'s one-layer, one-head transformer, K members: F(P) = aᵀ ReLU(W_O Σ_j W_V p_j attn_j), attn =
    softmax over the context of p_jᵀ W_Kᵀ W_Q p_q; a = ±1/m fixed; no residual connection, no normalisation.
    ``keep`` (K, m) multiplies the MLP neurons' outputs (pruning: 0 removes a neuron)."""

    def __init__(self, n_members: int, d_token: int, m_a: int, m_b: int, m: int, w_o_scale: float,
                 generator: torch.Generator) -> None:
        super().__init__()
        def draw(*shape: int) -> Tensor:
            return torch.randn(n_members, *shape, generator=generator)
        self.w_q = nn.Parameter(draw(m_b, d_token) / math.sqrt(d_token))
        self.w_k = nn.Parameter(draw(m_b, d_token) / math.sqrt(d_token))
        self.w_v = nn.Parameter(draw(m_a, d_token) / math.sqrt(d_token))
        self.w_o = nn.Parameter(w_o_scale * draw(m, m_a) / math.sqrt(m_a))
        a = torch.full((m,), 1.0 / m)
        a[m // 2:] *= -1
        self.register_buffer("a", a)

    def forward(self, p: Tensor, keep: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """Outputs F (K, B) and the query's attention over the context (K, B, l)."""
        context, query = p[:, :, :-1], p[:, :, -1]
        scores = torch.einsum("kbld,kmd,kme,kbe->kbl", context, self.w_k, self.w_q, query)
        attn = scores.softmax(-1)
        mixed = torch.einsum("kbl,kbld->kbd", attn, context)
        h = torch.relu(torch.einsum("kbd,kad,kma->kbm", mixed, self.w_v, self.w_o))
        if keep is not None:
            h = h * keep[:, None, :]
        return h @ self.a, attn

    def neuron_norms(self) -> Tensor:
        """‖row i of W_O‖ per neuron (K, m): the magnitudes their pruning ranks."""
        return self.w_o.detach().norm(dim=-1)


@dataclass
class PatternICLRun:
    """A trained :class:`PatternTransformer` ensemble and its test accuracy on unseen tasks over training
    (``steps``, ``accuracy`` (T, K): each member on prompts of its own α)."""

    config: PatternICLConfig
    model: PatternTransformer
    steps: np.ndarray
    accuracy: np.ndarray

    def member(self, kind: str, alpha: float) -> int:
        return self.config.variants.index((kind, alpha))


def hinge(out: Tensor, y: Tensor) -> Tensor:
    """Their loss max(0, 1 − y F), averaged over prompts: one value per member (K,)."""
    return torch.relu(1 - y * out).mean(-1)


def train_pattern_icl(config: PatternICLConfig, progress: bool = False) -> PatternICLRun:
    """Train every variant as one batched computation through the engine (SGD, fresh prompts each step)."""
    M, d = config.n_relevant, config.n_relevant + config.n_irrelevant
    relevant = torch.eye(d)[:M]
    train_sets = [pattern_training_tasks(kind, M) for kind, _ in config.variants]
    tasks = torch.stack(train_sets)
    test = torch.stack([unseen_tasks(t, M) for t in train_sets])  # same count for both task sets
    alpha = torch.tensor([a for _, a in config.variants])
    K = len(config.variants)
    model = PatternTransformer(K, d + 1, config.m_a, config.m_b, config.m, config.w_o_scale,
                               generator(config.seed, 20))
    data_gen, test_gen = generator(config.seed, 21), generator(config.seed, 22)
    x_test, y_test = pattern_prompts(test, alpha, config.n_test, config.context, relevant, config.n_irrelevant,
                                     test_gen)

    def loss() -> Tensor:
        p, y = pattern_prompts(tasks, alpha, config.batch, config.context, relevant, config.n_irrelevant, data_gen)
        return hinge(model(p)[0], y)

    def record(step: int) -> dict[str, Tensor]:
        with torch.no_grad():
            return {"accuracy": (torch.sign(model(x_test)[0]) == y_test).float().mean(-1)}

    h = run(descend(torch.optim.SGD(model.parameters(), lr=config.lr), loss), steps=config.steps, record=record,
            record_every=config.record_every, progress=progress, desc="Li et al.: pattern ICL")
    return PatternICLRun(config, model, np.asarray(h.steps), np.asarray(h["accuracy"]))


def odr_patterns(n_relevant: int, d: int, total: float, gen: torch.Generator) -> Tensor:
    """Out-of-domain-relevant patterns (M₁/2, d): μ'_a = total·(c_a μ_{2a} + (1 − c_a) μ_{2a+1}), c_a ~ U[0.2, 0.8] —
    combinations of two in-domain patterns each (disjoint pairs, so the μ'_a stay orthogonal) whose coefficients
    sum to ``total`` (their Condition on the ODR patterns: a sum ≥ 1)."""
    c = 0.2 + 0.6 * torch.rand(n_relevant // 2, generator=gen)
    out = torch.zeros(n_relevant // 2, d)
    idx = torch.arange(n_relevant // 2)
    out[idx, 2 * idx], out[idx, 2 * idx + 1] = total * c, total * (1 - c)
    return out


@torch.no_grad()
def pattern_ood_accuracy(result: PatternICLRun, member: int, totals: tuple[float, ...] = (0.5, 0.8, 1.0, 1.5),
                         seed: int | None = None) -> np.ndarray:
    """Accuracy of ``member`` on every task over ODR patterns whose coefficients sum to each of ``totals`` (the
    same coefficient shapes c_a for every total), prompts at the member's α; irrelevant patterns as in training."""
    cfg = result.config
    d = cfg.n_relevant + cfg.n_irrelevant
    gen = generator(cfg.seed if seed is None else seed, 23)
    shape = odr_patterns(cfg.n_relevant, d, 1.0, gen)
    n_odr = len(shape)
    tasks = torch.tensor([(a, b) for a in range(n_odr) for b in range(n_odr) if a != b])[None]
    alpha = torch.tensor([cfg.variants[member][1]])
    out = []
    for total in totals:
        p, y = pattern_prompts(tasks, alpha, cfg.n_test, cfg.context, total * shape, cfg.n_irrelevant, gen)
        f = _one_member(result.model, member)(p)[0]
        out.append(float((torch.sign(f) == y).float().mean()))
    return np.array(out)


def _one_member(model: PatternTransformer, member: int):
    """``model``'s member as a one-member function of prompts (1, B, l+1, d+1), with optional ``keep`` (1, m)."""
    def f(p: Tensor, keep: Tensor | None = None) -> tuple[Tensor, Tensor]:
        context, query = p[:, :, :-1], p[:, :, -1]
        w_q, w_k, w_v, w_o = (w[member:member + 1] for w in (model.w_q, model.w_k, model.w_v, model.w_o))
        scores = torch.einsum("kbld,kmd,kme,kbe->kbl", context, w_k, w_q, query)
        attn = scores.softmax(-1)
        h = torch.relu(torch.einsum("kbl,kbld,kad,kma->kbm", attn, context, w_v, w_o))
        if keep is not None:
            h = h * keep[:, None, :]
        return h @ model.a, attn
    return f


@dataclass
class PruningResult:
    """Test hinge loss and accuracy on unseen tasks after removing a fraction of the MLP neurons, the smallest
    (by ‖W_O row‖) or the largest first: ``loss[order]`` (len(rates),); ``norms`` the sorted neuron norms."""

    rates: tuple[float, ...]
    loss: dict[str, np.ndarray]
    accuracy: dict[str, np.ndarray]
    norms: np.ndarray


@torch.no_grad()
def prune_pattern_mlp(result: PatternICLRun, member: int, rates: tuple[float, ...] = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5),
                      seed: int | None = None) -> PruningResult:
    """Magnitude-based pruning of ``member``'s MLP neurons at each rate (their Theorem 3.7), on fresh prompts of
    unseen tasks at the member's α."""
    cfg = result.config
    M, d = cfg.n_relevant, cfg.n_relevant + cfg.n_irrelevant
    kind, alpha = cfg.variants[member]
    test = unseen_tasks(pattern_training_tasks(kind, M), M)[None]
    gen = generator(cfg.seed if seed is None else seed, 24)
    p, y = pattern_prompts(test, torch.tensor([alpha]), cfg.n_test, cfg.context, torch.eye(d)[:M], cfg.n_irrelevant,
                           gen)
    norms = result.model.neuron_norms()[member]
    order = norms.argsort()
    f = _one_member(result.model, member)
    loss = {"smallest": [], "largest": []}
    acc = {"smallest": [], "largest": []}
    for rate in rates:
        n = int(round(rate * len(norms)))
        for name, idx in (("smallest", order[:n]), ("largest", order[len(order) - n:])):
            keep = torch.ones(1, len(norms))
            keep[0, idx] = 0.0
            out = f(p, keep)[0]
            loss[name].append(float(hinge(out, y)[0]))
            acc[name].append(float((torch.sign(out) == y).float().mean()))
    return PruningResult(tuple(rates), {k: np.array(v) for k, v in loss.items()},
                         {k: np.array(v) for k, v in acc.items()}, norms[order].numpy())


#: Li et al.'s claims; every check reads one :func:`train_pattern_icl` run (and, for OOD and pruning, its main member).
LI_UNSEEN = ClaimSpec(
    "chicl.li-unseen-tasks", "Li et al. Thm 3.3",
    "trained on 8 of the 56 tasks, chosen to cover every relevant pattern with both labels (their Condition 3.2), "
    "the one-layer transformer classifies prompts of the 48 unseen tasks in context with accuracy ≥ 0.95")
LI_ALPHA = ClaimSpec(
    "chicl.li-alpha", "Li et al. Thm 3.3",
    "a larger fraction α of context examples sharing the query's relevant pattern needs fewer training steps: after "
    "100 SGD steps the unseen-task accuracy is ≥ 0.9 at α = 0.5 and exceeds that at α = 0.2 by ≥ 0.2")
LI_OOD = ClaimSpec(
    "chicl.li-ood", "Li et al. Thm 3.6",
    "out of domain, on tasks over new relevant patterns that combine two in-domain ones with coefficients summing "
    "to 1 or 1.5, the trained transformer still classifies in context with accuracy ≥ 0.95")
LI_PRUNING = ClaimSpec(
    "chicl.li-pruning", "Li et al. Thm 3.7",
    "removing the 20% of MLP neurons with the smallest ‖W_O row‖ raises the test hinge loss on unseen tasks by "
    "≤ 0.05 (held on 17 of the 20 validation seeds: an exploration)", kind="exploration")


def check_li_unseen(result: PatternICLRun, kind: str = "cover") -> Verdict:
    """[Li et al. Thm 3.3]: the member trained on task set ``kind`` (α = 0.3) classifies unseen tasks in context.

    Its negative control is their Condition 3.2 violated: the ``"one-sided"`` task set, as many tasks, in the same
    run (``kind="one-sided"``)."""
    acc = result.accuracy[-1, result.member(kind, 0.3)]
    return LI_UNSEEN.judge(threshold("unseen-task accuracy", acc, ">=", 0.95), task_set=kind,
                           steps=int(result.steps[-1]))


def check_li_alpha(result: PatternICLRun, high: float = 0.5, low: float = 0.2, budget: int = 100) -> Verdict:
    """[Li et al. Thm 3.3]: at a fixed budget of ``budget`` steps, α = ``high`` reaches 0.9 and beats α = ``low``.

    Its negative control is α below the range where the run learns in that budget (``high=0.2, low=0.1``)."""
    i = list(result.steps).index(budget)
    a_high = result.accuracy[i, result.member("cover", high)]
    a_low = result.accuracy[i, result.member("cover", low)]
    return LI_ALPHA.judge(threshold(f"acc(α={high}, {budget} steps)", a_high, ">=", 0.9),
                          threshold(f"acc(α={high}) − acc(α={low})", a_high - a_low, ">=", 0.2))


def check_li_ood(totals: tuple[float, ...], accuracy: np.ndarray, judged: tuple[float, ...] = (1.0, 1.5)) -> Verdict:
    """[Li et al. Thm 3.6]: accuracy ≥ 0.95 at every coefficient sum in ``judged`` (from :func:`pattern_ood_accuracy`).

    Its negative control is the paper's own contrast, a coefficient sum below 1 (``judged=(0.5,)``)."""
    acc = [accuracy[list(totals).index(t)] for t in judged]
    return LI_OOD.judge(threshold(f"min accuracy at coefficient sums {list(judged)}", min(acc), ">=", 0.95),
                        accuracy=list(np.round(accuracy, 3)), totals=list(totals))


def check_li_pruning(pruning: PruningResult, order: str = "smallest", rate: float = 0.2) -> Verdict:
    """[Li et al. Thm 3.7]: pruning ``rate`` of the neurons, ``order`` first, costs ≤ 0.05 of test hinge loss.

    An exploration (17/20 on seeds 0–19); the paper's contrast, pruning the largest neurons first
    (``order="largest"``), fails it on every seed."""
    i = pruning.rates.index(rate)
    rise = pruning.loss[order][i] - pruning.loss[order][0]
    return LI_PRUNING.judge(threshold(f"hinge-loss rise, {order} {rate:.0%} pruned", rise, "<=", 0.05),
                            pruned=order, loss=list(np.round(pruning.loss[order], 3)))
