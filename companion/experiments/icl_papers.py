"""The in-context-learning papers behind §14.3 (上下文学习): Boix-Adserà et al., "When can transformers reason with
abstract symbols?" (ICLR 2024, arXiv 2310.09753), and Li et al., "How do nonlinear transformers learn and generalize in
in-context learning?" (ICML 2024, arXiv 2402.15607; its section below, from :class:`PatternICLConfig` on), Akyürek et
al., "What learning algorithm is in-context learning?" (ICLR 2023; from :class:`LinearAttentionICL` on) and Dherin et
al.'s §4.3 fine-tuning comparison (:func:`check_dherin_similar`, on chapter 14's run).

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

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor, nn

from companion.core import icl
from companion.core.nets import BatchedMLP
from companion.core.train import descend, run, train
from companion.core.transformer import Transformer, TransformerConfig, fit_last_token, last_token_accuracy
from companion.kit.claims import ClaimSpec, Verdict, compare as compare_values, identity, threshold
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
    #: Training samples per member (their N): each member's SGD batches are drawn, with replacement, from a fixed
    #: set of that many prompts instead of fresh ones (``None``: fresh prompts every step, N unbounded).
    pools: tuple[int, ...] | None = None


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
                    gen: torch.Generator, bernoulli: bool = False) -> tuple[Tensor, Tensor]:
    """``n`` prompts per member: tokens (K, n, l+1, d+1) and the query's label (K, n).

    ``tasks`` (K, T, 2) indexes rows of ``relevant`` (M, d); ``alpha`` (K,) the fraction of the ``context`` examples
    sharing the query's relevant pattern (exactly round(α·l) of them, at random places; with ``bernoulli`` each
    example shares it with probability α, independently — the prompts of the prompt-length test, where a short
    prompt may hold none); irrelevant patterns are the last ``n_irrelevant`` basis vectors of R^d."""
    K, M, d = tasks.shape[0], relevant.shape[0], relevant.shape[1]
    pair = torch.gather(tasks, 1, torch.randint(tasks.shape[1], (K, n, 1), generator=gen).expand(-1, -1, 2))
    minus = torch.randint(2, (K, n), generator=gen)  # 0: the query carries the task's + pattern, 1: its − pattern
    q_pat = torch.gather(pair, 2, minus[..., None])[..., 0]
    if bernoulli:
        same = torch.rand(K, n, context, generator=gen) < alpha[:, None, None]
    else:
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

    if config.pools is not None:
        if len(config.pools) != K or min(config.pools) < 1:
            raise ValueError(f"pools={config.pools!r}: one size ≥ 1 per variant ({K} variants)")
        pool_p, pool_y = pattern_prompts(tasks, alpha, max(config.pools), config.context, relevant,
                                         config.n_irrelevant, generator(config.seed, 27))
        sizes = torch.tensor(config.pools, dtype=torch.float64)

    def loss() -> Tensor:
        if config.pools is None:
            p, y = pattern_prompts(tasks, alpha, config.batch, config.context, relevant, config.n_irrelevant,
                                   data_gen)
        else:  # member k's batch: prompts drawn from the first N_k of its fixed set
            idx = (torch.rand(K, config.batch, generator=data_gen, dtype=torch.float64) * sizes[:, None]).long()
            p = torch.gather(pool_p, 1, idx[..., None, None].expand(-1, -1, *pool_p.shape[2:]))
            y = torch.gather(pool_y, 1, idx)
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


@torch.no_grad()
def pattern_length_accuracy(result: PatternICLRun, member: int, lengths: tuple[int, ...],
                            alphas: tuple[float, ...], seed: int | None = None) -> np.ndarray:
    """Accuracy (len(alphas), len(lengths)) of ``member`` on unseen tasks with testing prompts of each length l_ts,
    every context example sharing the query's relevant pattern with probability α' (their α', Thm 3.3's testing
    prompts), independently: a short prompt at a small α' often holds no example that tells the query's label."""
    cfg = result.config
    M, d = cfg.n_relevant, cfg.n_relevant + cfg.n_irrelevant
    test = unseen_tasks(pattern_training_tasks(cfg.variants[member][0], M), M)[None]
    gen = generator(cfg.seed if seed is None else seed, 26)
    f = _one_member(result.model, member)
    out = np.zeros((len(alphas), len(lengths)))
    for i, a in enumerate(alphas):
        for j, length in enumerate(lengths):
            p, y = pattern_prompts(test, torch.tensor([a]), cfg.n_test, length, torch.eye(d)[:M], cfg.n_irrelevant,
                                   gen, bernoulli=True)
            out[i, j] = float((torch.sign(f(p)[0]) == y).float().mean())
    return out


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


# ---------------------------------------------------------------- Li et al.: the prompt length needed falls as α grows
# Their Theorem 3.3 asks for testing prompts of length l_ts ≳ 1/α' (α': the fraction of the testing prompt's examples
# that share the query's relevant pattern), and their GPT-2 figure shows the context length needed for a given
# accuracy shrinking as α' grows.  Here (assumed: the summary does not give their sampling) every testing example
# shares the query's pattern with probability α', independently (:func:`pattern_length_accuracy`), so that a short
# prompt at a small α' often holds no example that tells the query's label; the trained main member (α = 0.3, l = 20
# in training) is tested on unseen tasks at every length of :data:`LI_LENGTHS` and α' of :data:`LI_TEST_ALPHAS`.
#: The testing prompt lengths l_ts and fractions α' of the prompt-length test.
LI_LENGTHS: tuple[int, ...] = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32)
LI_TEST_ALPHAS: tuple[float, ...] = (0.2, 0.3, 0.5)
#: The accuracy level whose prompt length is compared (the level of ``chicl.li-alpha``), and the least ratio of the
#: lengths needed at α' = 0.2 and 0.5: 1/α scaling predicts 2.5; on design seeds 100–109 it was 2.7–4 (lengths 8–12
#: against 3), fixed at 2 before validation.
LI_LENGTH_LEVEL, LI_LENGTH_RATIO = 0.9, 2.0

LI_LENGTH = ClaimSpec(
    "chicl.li-prompt-length", "Li et al. Thm 3.3",
    "a larger fraction α' of testing examples sharing the query's relevant pattern needs a shorter prompt: the "
    "shortest testing prompt at which the trained transformer classifies unseen tasks with accuracy ≥ 0.9 shrinks "
    "from α' = 0.2 to 0.3 to 0.5, at α' = 0.2 at least twice as long as at α' = 0.5")


def prompt_length_needed(accuracy: np.ndarray, lengths: tuple[int, ...] = LI_LENGTHS,
                         level: float = LI_LENGTH_LEVEL) -> np.ndarray:
    """The shortest length of ``lengths`` whose accuracy reaches ``level``, per row of ``accuracy``; NaN: never."""
    return np.array([next((float(n) for n, a in zip(lengths, row) if a >= level), np.nan) for row in accuracy])


def check_li_prompt_length(accuracy: np.ndarray, alphas: tuple[float, ...] = LI_TEST_ALPHAS,
                           lengths: tuple[int, ...] = LI_LENGTHS) -> Verdict:
    """[Li et al. Thm 3.3]: from :func:`pattern_length_accuracy` (rows: α' = 0.2, 0.3, 0.5), the prompt length needed
    for accuracy ``LI_LENGTH_LEVEL`` falls as α' grows, by a factor ≥ ``LI_LENGTH_RATIO`` from α' = 0.2 to 0.5.

    Its negative control is the paper's α contrast: the member trained at α = 0.1, which the step budget does not
    teach to read the context — it reaches the level at no length."""
    need = prompt_length_needed(accuracy, lengths)
    low, mid, high = (f"length needed, α' = {a:g}" for a in alphas)
    return LI_LENGTH.judge(
        compare_values(high, need[2], "<", mid, need[1]),
        compare_values(mid, need[1], "<", low, need[0]),
        threshold(f"length needed, α' = {alphas[0]:g} / α' = {alphas[2]:g}", need[0] / need[2], ">=",
                  LI_LENGTH_RATIO),
        needed=list(need), lengths=list(lengths), alphas=list(alphas))


# ------------------------------------------------------- Li et al.: the training samples needed fall as α grows
# Their Theorem 3.3 also bounds the number N of training prompts needed: N ≳ 1/α (up to the other factors).  Here
# (:func:`run_li_samples`) one batched run trains a member per (α, N) of :data:`LI_SAMPLE_ALPHAS` ×
# :data:`LI_SAMPLE_SIZES` on a fixed set of N prompts (SGD batches drawn from it with replacement, ``PatternICLConfig.pools``), the same
# 300 steps for all, and tests each on fresh prompts of the 48 unseen tasks at its own α.  At this size the step
# budget, not the sample count, limits learning at α = 0.2 (its accuracy goes up and down with N), so the check
# holds only on some seeds: an exploration.
#: The training-set sizes N and fractions α of the sample-count run.
LI_SAMPLE_SIZES: tuple[int, ...] = (8, 16, 32, 64, 128, 256)
LI_SAMPLE_ALPHAS: tuple[float, ...] = (0.2, 0.5)
#: The accuracy level whose training-set size is compared (that of ``chicl.li-alpha``) and the least ratio of the sizes
#: needed at α = 0.2 and 0.5 (1/α scaling predicts 2.5); fixed on design seeds 100–104 (held on 3 of 5: sizes needed
#: 32–256 or never at α = 0.2 against 32–64 at α = 0.5); on seeds 0–19 it held on 16 of 20.
LI_SAMPLE_LEVEL, LI_SAMPLE_RATIO = 0.9, 2.0

LI_SAMPLES = ClaimSpec(
    "chicl.li-samples", "Li et al. Thm 3.3",
    "a larger fraction α needs fewer training samples: the smallest fixed training set (N prompts, 300 SGD steps) "
    "from which the transformer classifies unseen tasks with accuracy ≥ 0.9 is at α = 0.2 at least twice as large "
    "as at α = 0.5 (held on 16 of the 20 validation seeds: an exploration; steps, not samples, limit learning at "
    "this size)", kind="exploration")


@dataclass
class SampleCountResult:
    """Unseen-task accuracy after training on N prompts: ``accuracy`` (len(alphas), len(sizes))."""

    sizes: tuple[int, ...]
    alphas: tuple[float, ...]
    accuracy: np.ndarray


def run_li_samples(seed: int, sizes: tuple[int, ...] = LI_SAMPLE_SIZES, alphas: tuple[float, ...] = LI_SAMPLE_ALPHAS,
                   steps: int = 300, n_test: int = 500) -> SampleCountResult:
    """[Li et al. Thm 3.3, N ≳ 1/α]: one member per (α, N), trained as one batch on a fixed set of N prompts of the
    8 Condition-3.2 tasks (:class:`PatternICLConfig` otherwise), tested on fresh prompts of the unseen tasks."""
    variants = tuple(("cover", a) for a in alphas for _ in sizes)
    config = PatternICLConfig(variants=variants, pools=tuple(n for _ in alphas for n in sizes), steps=steps,
                              record_every=steps, n_test=n_test, seed=seed)
    run_ = train_pattern_icl(config)
    return SampleCountResult(tuple(sizes), tuple(alphas), run_.accuracy[-1].reshape(len(alphas), len(sizes)))


def check_li_samples(result: SampleCountResult) -> Verdict:
    """[Li et al. Thm 3.3]: the smallest N reaching ``LI_SAMPLE_LEVEL`` at α = ``alphas[0]`` is ≥ ``LI_SAMPLE_RATIO``
    times that at α = ``alphas[-1]`` (a size never reaching it counts as twice the largest size)."""
    big = 2.0 * max(result.sizes)
    need = np.nan_to_num(prompt_length_needed(result.accuracy, result.sizes, LI_SAMPLE_LEVEL), nan=big)
    low, high = result.alphas[0], result.alphas[-1]
    return LI_SAMPLES.judge(threshold(f"N needed, α = {low:g} / α = {high:g}", need[0] / need[-1], ">=",
                                      LI_SAMPLE_RATIO),
                            needed=list(need), sizes=list(result.sizes), alphas=list(result.alphas))


# =============================================================================================================
# Akyürek et al., "What learning algorithm is in-context learning? Investigations with linear models" (ICLR 2023,
# arXiv 2211.15661): in-context linear regression, the data and baselines of chapter 14 (imported, not repeated:
# :func:`~companion.experiments.ch14_phenomena.sample_tasks`, ``gd_weights``, ``ols_weights``, ``fit_gd_eta``,
# ``spd``).  A task draws w ~ N(0, I_d), x_i, x_q ~ N(0, I_d), y_i = wᵀx_i; a prompt is the tokens z_i = (x_i; y_i),
# i = 1…k, and the query z_q = (x_q; 0) in R^{d+1}.
#
# **Construction (their §3, Theorem 1: one step of gradient descent as transformer weights).**  Their proof composes
# read–arithmetic–write operators over a few standard layers; here the same statement is built as the weights of one
# *linear self-attention* layer (线性自注意力; the construction von Oswald et al. 2023 give for it):
#     z_j ← z_j + (1/k) Σ_{i≤k} (z_iᵀ W_KQ z_j) W_PV z_i,   for every token j (context and query), keys = context only,
# with W_KQ = [[I_d, 0], [0, 0]] (score x_iᵀx_j) and W_PV = −η e_{d+1} e_{d+1}ᵀ (value −η y_i into the label slot),
# read out as ŷ_q = −(last coordinate of z_q).  If the label slots hold the residuals r_i = y_i − w_lᵀx_i, the layer
# turns them into y_i − w_{l+1}ᵀx_i with w_{l+1} = w_l + (η/k) Xᵀ(y − Xw_l): one gradient step of size η on the
# in-context loss L(w) = (1/2k)‖Xw − y‖²; the query's slot holds −w_lᵀx_q.  One layer from w_0 = 0 predicts w_1ᵀx_q,
# w_1 = (η/k) Xᵀy; L such layers predict after L steps.
#
# **Trained learners and depth (their §4, Fig. 3).**  The same linear-attention architecture with trainable W_KQ,
# W_PV per layer (all (d+1)×(d+1)), depth 1, 2, 4, trained on fresh prompts; its predictions are compared with one
# GD step (η fitted as in chapter 14) and with least squares by their squared prediction difference SPD.
# =============================================================================================================
from companion.experiments import ch14_phenomena as regression  # noqa: E402  (chapter 14's tasks and baselines)


class LinearAttentionICL(nn.Module):
    """K members of a stack of ``n_layers`` linear self-attention layers (no MLP, no normalisation) on prompts
    (B, k+1, d+1); member m uses its first ``depths[m]`` layers (the others are skipped), so learners of several
    depths train as one batched computation.  Prediction: minus the query's last coordinate after the stack."""

    def __init__(self, d: int, depths: tuple[int, ...], init: float = 0.0,
                 generator: torch.Generator | None = None, sparse: bool = False) -> None:
        super().__init__()
        K, L, D = len(depths), max(depths), d + 1
        self.depths = tuple(int(x) for x in depths)
        self.w_kq = nn.Parameter(init * torch.randn(K, L, D, D, generator=generator))
        self.w_pv = nn.Parameter(init * torch.randn(K, L, D, D, generator=generator))
        self.register_buffer("active", torch.tensor([[float(l < x) for l in range(L)] for x in self.depths]))
        # sparse: only the blocks the construction uses are free (W_KQ's x-block, W_PV's label entry)
        kq, pv = torch.ones(D, D), torch.ones(D, D)
        if sparse:
            kq[d], kq[:, d], pv[:] = 0.0, 0.0, 0.0
            pv[d, d] = 1.0
        self.register_buffer("kq_mask", kq)
        self.register_buffer("pv_mask", pv)

    def forward(self, tokens: Tensor) -> Tensor:
        """Predictions (K, B) for prompts (B, k+1, d+1) (the same prompts for every member) or (K, B, k+1, d+1)."""
        z = tokens.expand(len(self.depths), *tokens.shape) if tokens.dim() == 3 else tokens
        k = z.shape[2] - 1
        for layer in range(self.w_kq.shape[1]):
            ctx = z[:, :, :-1]
            w_kq, w_pv = self.w_kq[:, None, layer] * self.kq_mask, self.w_pv[:, None, layer] * self.pv_mask
            scores = (ctx @ w_kq) @ z.transpose(-1, -2) / k  # (K, B, k, T): z_iᵀ W_KQ z_j / k
            step = scores.transpose(-1, -2) @ (ctx @ w_pv.transpose(-1, -2))  # (K, B, T, D): Σ_i … W_PV z_i
            z = z + self.active[:, layer, None, None, None] * step
        return -z[:, :, -1, -1]


def gd_construction(d: int, eta: float, n_layers: int = 1, dtype: torch.dtype = torch.float64) -> LinearAttentionICL:
    """The weights of the construction above: ``n_layers`` layers, each one gradient step of size ``eta``."""
    model = LinearAttentionICL(d, (n_layers,)).to(dtype)
    with torch.no_grad():
        model.w_kq[:, :, :d, :d] = torch.eye(d, dtype=dtype)
        model.w_pv[:, :, d, d] = -eta
    return model


def gd_predictions(tasks: regression.Tasks, eta: float, n_steps: int) -> Tensor:
    """w_Lᵀx_q after ``n_steps`` gradient steps of size ``eta`` on (1/2k)‖Xw − y‖² from w_0 = 0 (chapter 14's
    ``gd_weights(X, r, η/k)`` is the step (η/k) Xᵀr on the residuals r = y − Xw)."""
    w = torch.zeros_like(tasks.w)
    for _ in range(n_steps):
        w = w + regression.gd_weights(tasks.xs, tasks.ys - torch.einsum("bkd,bd->bk", tasks.xs, w), eta / tasks.k)
    return (w * tasks.xq).sum(-1)


@dataclass
class ConstructionCheck:
    """The construction's predictions against gradient descent's on random prompts, per number of layers L:
    ``error[L]`` = max |ŷ_layer − ŷ_GD| / max |ŷ_GD| (float64), with the weights built for step ``eta_weights``
    and gradient descent run at ``eta``."""

    eta: float
    eta_weights: float
    error: dict[int, float]


@torch.no_grad()
def check_construction(seed: int, d: int = 4, k: int = 8, n_prompts: int = 256, layers: tuple[int, ...] = (1, 4),
                       eta: float = 0.5, eta_weights: float | None = None) -> ConstructionCheck:
    """Build the construction and compare it with gradient descent on ``n_prompts`` random prompts (float64).
    ``eta_weights`` (default ``eta``) is the step written into the weights: a wrong one is the negative control."""
    eta_w = eta if eta_weights is None else eta_weights
    t = regression.sample_tasks(n_prompts, k, d, generator=generator(seed, 30), dtype=torch.float64)
    error = {}
    for n in layers:
        layer = gd_construction(d, eta_w, n)(t.tokens())[0]
        gd = gd_predictions(t, eta, n)
        error[n] = float((layer - gd).abs().max() / gd.abs().max())
    return ConstructionCheck(eta, eta_w, error)


@dataclass(frozen=True)
class DepthConfig:
    """Trained linear-attention learners of several depths on in-context linear regression (noiseless, k fixed).

    ``sparse`` (the default) frees only the blocks the construction uses — W_KQ's x-block and W_PV's label entry —
    so that a depth-L learner is L steps of learned preconditioned gradient descent; with full matrices the depth-4
    learner did not train at this budget (its loss stayed at one GD step's, or diverged)."""

    depths: tuple[int, ...] = (1, 2, 4)
    d: int = 4
    k: int = 8
    steps: int = 600
    batch: int = 64
    lr: float = 1e-2
    init: float = 0.05
    sparse: bool = True
    n_test: int = 2048
    noise: float = 0.0
    seed: int = 0


@dataclass
class DepthResult:
    """SPD of each member's predictions to one GD step (``spd_gd``), to least squares (``spd_ols``) and its MSE
    (``mse``), all (K,), on ``config.n_test`` fresh prompts; ``eta`` the fitted one-step rate; ``loss`` (T, K)."""

    config: DepthConfig
    spd_gd: np.ndarray
    spd_ols: np.ndarray
    mse: np.ndarray
    mse_gd: float
    eta: float
    loss: np.ndarray
    model: LinearAttentionICL | None = None


def train_depths(config: DepthConfig, progress: bool = False) -> DepthResult:
    """Train every depth (one member each, its own initialisation) by Adam on fresh prompts through the engine,
    then measure SPD(learner, GD1) and SPD(learner, OLS) (chapter 14's ``spd``) on fresh test prompts.

    ``config.noise`` is the label noise σ of the training and test prompts, y_i = wᵀx_i + σε_i (w ~ N(0, I): τ = 1);
    the noise is drawn at σ = 0 too, so the noiseless run's draws do not depend on this option."""
    d, k = config.d, config.k
    model = LinearAttentionICL(d, config.depths, config.init, generator(config.seed, 31), config.sparse)
    data = generator(config.seed, 32)

    def loss() -> Tensor:
        t = regression.sample_tasks(config.batch, k, d, config.noise, generator=data)
        return ((model(t.tokens()) - t.yq) ** 2).mean(-1)

    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
    warmup = max(1, config.steps // 10)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min((step + 1) / warmup, 0.5 * (
        1 + math.cos(math.pi * (step - warmup) / max(1, config.steps - warmup)))))  # warm-up, then cosine to 0
    h = run(descend(optimizer, loss, schedule=schedule), steps=config.steps,
            record=lambda step: {"loss": loss().detach()}, record_every=max(1, config.steps // 10),
            progress=progress, desc="Akyürek et al.: linear attention")
    test_gen = generator(config.seed, 33)
    eta = regression.fit_gd_eta(k, d, config.noise, generator=test_gen)
    t = regression.sample_tasks(config.n_test, k, d, config.noise, generator=test_gen)
    with torch.no_grad():
        pred = model(t.tokens())
    gd = (regression.gd_weights(t.xs, t.ys, eta) * t.xq).sum(-1)
    ols = (regression.ols_weights(t.xs, t.ys) * t.xq).sum(-1)
    return DepthResult(config, np.array([regression.spd(p, gd) for p in pred]),
                       np.array([regression.spd(p, ols) for p in pred]),
                       np.array([float(((p - t.yq) ** 2).mean()) for p in pred]), float(((gd - t.yq) ** 2).mean()),
                       eta, np.asarray(h["loss"]), model)



@torch.no_grad()
def sherman_morrison_ridge(xs: Tensor, ys: Tensor, lam: float, lam_start: float | None = None) -> Tensor:
    """Ridge weights (B, d) by one Sherman–Morrison update per example — the update each layer of Akyürek et al.'s
    Theorem 2 construction computes: A_0⁻¹ = I/λ, b_0 = 0; for example i, u = A_{i−1}⁻¹x_i,
    A_i⁻¹ = A_{i−1}⁻¹ − u uᵀ/(1 + x_iᵀu), b_i = b_{i−1} + y_i x_i; ŵ = A_k⁻¹ b_k = (XᵀX + λI)⁻¹Xᵀy.
    ``lam_start`` (default ``lam``) is the λ of A_0: a wrong one is the negative control."""
    B, k, d = xs.shape
    inv = torch.eye(d, dtype=xs.dtype).expand(B, d, d) / (lam if lam_start is None else lam_start)
    b = torch.zeros(B, d, dtype=xs.dtype)
    for i in range(k):
        x = xs[:, i]
        u = (inv @ x[..., None])[..., 0]
        inv = inv - u[:, :, None] * u[:, None, :] / (1 + (x * u).sum(-1))[:, None, None]
        b = b + ys[:, i, None] * x
    return (inv @ b[..., None])[..., 0]


@torch.no_grad()
def check_sherman_morrison(seed: int, d: int = 4, k: int = 8, n_prompts: int = 256, lam: float = 0.1,
                           lam_start: float | None = None) -> float:
    """max |ŵ_SM − ŵ_ridge| / max |ŵ_ridge| on random prompts (float64), ŵ_ridge from chapter 14's ``ridge_weights``."""
    t = regression.sample_tasks(n_prompts, k, d, generator=generator(seed, 34), dtype=torch.float64)
    ridge = regression.ridge_weights(t.xs, t.ys, lam)
    return float((sherman_morrison_ridge(t.xs, t.ys, lam, lam_start) - ridge).abs().max() / ridge.abs().max())

#: Akyürek et al.'s claims.
AKYUREK_GD_LAYER = ClaimSpec(
    "chicl.akyurek-gd-layer", "Akyürek Thm 1",
    "one linear self-attention layer with the constructed weights (score x_iᵀx_q, value −η y_i) predicts exactly what "
    "one gradient step of size η on the in-context least-squares loss predicts, w₁ᵀx_q, on random prompts (relative "
    "error ≤ 1e-12 in float64), and L such layers what L steps predict (L = 4)", kind="identity")


AKYUREK_RIDGE = ClaimSpec(
    "chicl.akyurek-sherman-morrison", "Akyürek Thm 2",
    "one Sherman–Morrison update per example — what each layer of their ridge construction computes — ends at the "
    "ridge solution (XᵀX + λI)⁻¹Xᵀy on random prompts (relative error ≤ 1e-10 in float64); the updates are checked as "
    "a recursion, not built as transformer weights", kind="identity")


def check_gd_layer(check: ConstructionCheck, tol: float = 1e-12) -> Verdict:
    """[Akyürek Thm 1]: the constructed layers' predictions equal gradient descent's up to rounding.

    An identity; its negative control is a wrong step size written into the weights (``eta_weights`` ≠ ``eta``)."""
    return AKYUREK_GD_LAYER.judge(*(identity(f"relative error, {n} layer(s) vs {n} GD step(s)", e, tol)
                                    for n, e in check.error.items()), eta=check.eta, eta_weights=check.eta_weights)


AKYUREK_DEPTH = ClaimSpec(
    "chicl.akyurek-depth", "Akyürek Fig. 3",
    "as trained linear-attention learners get deeper they move from one gradient step towards least squares: at depth "
    "1 the learner sits on one GD step (SPD to GD1 < 0.05 × SPD to OLS); at depths 2 and 4 its SPD to GD1 is ≥ 10× "
    "depth 1's, and its SPD to OLS falls from depth 1 to 2 to 4")


def check_akyurek_depth(result: DepthResult) -> Verdict:
    """[Akyürek Fig. 3]: depth 1 ≈ one GD step; deeper members leave GD1 and approach least squares.

    ``result.config.depths`` is read as (shallow, middle, deep).  Its negative control is the paper's contrast, depth 1
    throughout (``DepthConfig(depths=(1, 1, 1))``): the learners stay on one GD step."""
    (a, b, c), g, o = result.config.depths, result.spd_gd, result.spd_ols
    return AKYUREK_DEPTH.judge(
        compare_values(f"SPD(GD1), depth {a}", g[0], "<", f"0.05·SPD(OLS), depth {a}", 0.05 * o[0]),
        compare_values(f"SPD(GD1), depth {b}", g[1], ">=", f"10·SPD(GD1), depth {a}", 10 * g[0]),
        compare_values(f"SPD(GD1), depth {c}", g[2], ">=", f"10·SPD(GD1), depth {a}", 10 * g[0]),
        compare_values(f"SPD(OLS), depth {b}", o[1], "<", f"SPD(OLS), depth {a}", o[0]),
        compare_values(f"SPD(OLS), depth {c}", o[2], "<", f"SPD(OLS), depth {b}", o[1]),
        spd_gd=list(np.round(g, 4)), spd_ols=list(np.round(o, 4)), depths=list(result.config.depths))


# -------------------------------------------------------------------------------- Akyürek et al.: noise and Bayes
# Their §4 also trains learners on noisy prompts, y_i = wᵀx_i + ε_i with ε_i ~ N(0, σ²) and w ~ N(0, τ²I): the
# predictor of least mean squared error (the Bayes estimator) is then ridge regression with λ = σ²/τ², and the
# learners' predictions sit nearest that ridge (their §4); larger learners approach its risk.  Here: the learners
# of :class:`DepthConfig` trained once more with σ > 0 (τ = 1), compared with the noiseless ones by their SPD to
# least squares and to ridge regression of several λ.
@dataclass
class RidgeFit:
    """A trained learner set on fresh test prompts of label noise ``noise`` (σ; τ = 1): ``spd_ridge[j]`` (K,) the
    members' SPD to ridge regression with λ = ``lams[j]`` (λ = 0: least squares), ``mse`` (K,) their mean squared
    error against y_q, ``mse_ridge[j]`` each ridge's own (at λ = σ²/τ² the Bayes risk)."""

    noise: float
    lams: tuple[float, ...]
    spd_ridge: np.ndarray  # (len(lams), K)
    mse: np.ndarray
    mse_ridge: np.ndarray

    def spd(self, lam: float) -> np.ndarray:
        """The members' SPD (K,) to ridge regression with λ = ``lam`` (0: least squares)."""
        return self.spd_ridge[self.lams.index(lam)]

    @property
    def bayes_risk(self) -> float:
        """The ridge's error at the Bayes λ = σ²/τ² (τ = 1) on these prompts."""
        return float(self.mse_ridge[self.lams.index(self.noise ** 2)])


@torch.no_grad()
def fit_ridge(result: DepthResult, noise: float, lams: tuple[float, ...], n_test: int,
              generator: torch.Generator) -> RidgeFit:
    """Compare the trained members of ``result`` with least squares (λ = 0) and ridge regression of every λ in ``lams``
    (chapter 14's ``ols_weights``, ``ridge_weights``) on ``n_test`` fresh prompts with label noise σ = ``noise``."""
    t = regression.sample_tasks(n_test, result.config.k, result.config.d, noise, generator=generator)
    pred = result.model(t.tokens())  # (K, B)
    base = [((regression.ols_weights(t.xs, t.ys) if lam == 0 else regression.ridge_weights(t.xs, t.ys, lam))
             * t.xq).sum(-1) for lam in lams]
    return RidgeFit(noise, tuple(lams), np.array([[regression.spd(p, b) for p in pred] for b in base]),
                    np.array([float(((p - t.yq) ** 2).mean()) for p in pred]),
                    np.array([float(((b - t.yq) ** 2).mean()) for b in base]))


@dataclass
class NoiseResult:
    """The noise experiment: ``noisy`` the learners trained with label noise σ = ``noise`` (their ``DepthResult``),
    ``on_noisy`` them on noisy prompts; ``clean_on_clean`` the noiseless learners on noiseless prompts and
    ``clean_on_noisy`` on noisy ones, all against the same λ grid (λ = σ² the Bayes one)."""

    noise: float
    noisy: DepthResult
    on_noisy: RidgeFit
    clean_on_clean: RidgeFit
    clean_on_noisy: RidgeFit


#: The λ grid the learners are compared with, in units of σ² (τ = 1): least squares, then ridge from σ²/64 to 16σ².
RIDGE_LAMS: tuple[float, ...] = (0.0, 1 / 64, 1 / 16, 1 / 4, 1.0, 4.0, 16.0)


def run_noise(clean: DepthResult, noise: float = 2.0, train_noise: float | None = None,
              n_test: int = 8192) -> NoiseResult:
    """Train the learners of ``clean.config`` on prompts with label noise ``train_noise`` (default ``noise``), then
    compare both learner sets with least squares and ridge (:data:`RIDGE_LAMS` × σ²) on fresh prompts.

    ``clean`` is the noiseless run of :func:`train_depths` (reused, as in their §4 the noiseless learners are);
    ``train_noise = 0`` — learners trained without noise in the place of the noisy ones — is the negative control."""
    sigma = noise if train_noise is None else train_noise
    noisy = train_depths(dataclasses.replace(clean.config, noise=sigma))
    lams = tuple(lam * noise ** 2 for lam in RIDGE_LAMS)
    seed = clean.config.seed
    return NoiseResult(noise, noisy, fit_ridge(noisy, noise, lams, n_test, generator(seed, 35)),
                       fit_ridge(clean, 0.0, lams, n_test, generator(seed, 36)),
                       fit_ridge(clean, noise, lams, n_test, generator(seed, 35)))


#: The deepest learner's excess risk over the Bayes risk must stay below this fraction of the Bayes risk and this
#: fraction of the shallowest learner's (both fixed on design seeds 100–119 before validation).
BAYES_EXCESS, BAYES_SHRINK = 0.05, 0.25

AKYUREK_NOISE = ClaimSpec(
    "chicl.akyurek-noise-ridge", "Akyürek §4",
    "with label noise σ² = 4 in the prompts (w ~ N(0, I), τ² = 1) the deepest trained learner's predictions sit "
    "nearest ridge regression with the Bayes λ* = σ²/τ² = 4: nearer it than ridge with λ*/4 or 4λ* and than least "
    "squares (SPD); the same learners trained on noiseless prompts sit, on noiseless prompts, nearer the smaller λ*/4 "
    "than λ*")


def check_akyurek_noise(result: NoiseResult) -> Verdict:
    """[Akyürek §4]: trained on noisy prompts, the deepest learner follows the Bayes ridge λ* = σ²/τ² (τ = 1)
    more closely than its neighbours on the λ grid (λ*/4, 4λ*) and least squares; trained on noiseless prompts, it
    follows a smaller λ (λ*/4) more closely than λ*.

    Its negative control is the paper's contrast, the other noise level: learners trained without noise in the place
    of the noisy ones (``run_noise(clean, train_noise=0)``); on the noisy prompts they stay nearest λ*/4."""
    lam = result.noise ** 2
    noisy, clean = result.on_noisy, result.clean_on_clean
    near = noisy.spd(lam)[-1]
    return AKYUREK_NOISE.judge(
        compare_values("SPD(ridge λ*), noisy learner", near, "<", "SPD(ridge λ*/4), noisy learner",
                       noisy.spd(lam / 4)[-1]),
        compare_values("SPD(ridge λ*), noisy learner", near, "<", "SPD(ridge 4λ*), noisy learner",
                       noisy.spd(4 * lam)[-1]),
        compare_values("SPD(ridge λ*), noisy learner", near, "<", "SPD(OLS), noisy learner", noisy.spd(0.0)[-1]),
        compare_values("SPD(ridge λ*/4), noiseless learner", clean.spd(lam / 4)[-1], "<",
                       "SPD(ridge λ*), noiseless learner", clean.spd(lam)[-1]),
        lam=lam, lams=list(noisy.lams), spd_noisy=list(np.round(noisy.spd_ridge[:, -1], 4)),
        spd_noiseless=list(np.round(clean.spd_ridge[:, -1], 4)))


AKYUREK_BAYES = ClaimSpec(
    "chicl.akyurek-bayes", "Akyürek §4",
    "on noisy prompts (σ² = 4, τ² = 1) the trained learners' excess risk over the Bayes estimator (ridge, λ = σ²/τ²) "
    "shrinks as they get deeper, from depth 1 to 2 to 4; the deepest's is below a quarter of depth 1's and below 5% of "
    "the Bayes risk")


def check_akyurek_bayes(result: NoiseResult) -> Verdict:
    """[Akyürek §4]: deeper learners approach the Bayes risk: the excess MSE over the Bayes ridge falls with depth
    (the depths read as shallow, middle, deep), the deepest's below ``BAYES_SHRINK`` × the shallowest's and below
    ``BAYES_EXCESS`` × the Bayes risk.

    Its negative control is the smallest learner throughout (``DepthConfig(depths=(1, 1, 1))``): it stays far."""
    fit = result.on_noisy
    a, b, c = result.noisy.config.depths
    excess, bayes = fit.mse - fit.bayes_risk, fit.bayes_risk
    return AKYUREK_BAYES.judge(
        compare_values(f"excess risk, depth {b}", excess[1], "<", f"excess risk, depth {a}", excess[0]),
        compare_values(f"excess risk, depth {c}", excess[2], "<", f"excess risk, depth {b}", excess[1]),
        compare_values(f"excess risk, depth {c}", excess[2], "<", f"{BAYES_SHRINK}·excess risk, depth {a}",
                       BAYES_SHRINK * excess[0]),
        threshold(f"excess risk / Bayes risk, depth {c}", excess[2] / bayes, "<", BAYES_EXCESS),
        excess=list(np.round(excess, 4)), bayes_risk=round(bayes, 4), depths=[a, b, c])


# =============================================================================================================
# Dherin et al., "Learning without training" (2025), §4.3: explicit fine-tuning against the implicit update ΔW(C_i).
# The run is chapter 14's (imported: :func:`~companion.experiments.ch14_phenomena.train_icl`,
# ``finetune_vs_delta_w``); here the paper's "the two learning processes minimize the loss in similar ways" is
# quantified: the two test-loss curves ℓ_ft(i), ℓ_ΔW(i), i = 1…k_max (both start at the same ℓ(0), the query alone)
# stay within a factor F of each other at every i, F fixed on the design seeds before validation.
# =============================================================================================================
DHERIN_SIMILAR = ClaimSpec(
    "chicl.dherin-finetune-similar", "Dherin et al. §4.3",
    "fine-tuning W₁ one example at a time and the implicit update ΔW(C_i) lower the test loss on new tasks in similar "
    "ways: both end below half the loss with no example, and at every number of examples i the two losses stay "
    "within a factor 4.5 of each other (F, fixed on design seeds)")


def finetune_gap(result: regression.FineTuning) -> float:
    """max over i ≥ 1 of |log(ℓ_ft(i) / ℓ_ΔW(i))|: how far apart, as a factor, the two test-loss curves get."""
    ft, dw = result.history["finetune"][1:], result.history["delta_w"][1:]
    return float(np.abs(np.log(ft / dw)).max())


#: The factor F: the largest factor between the two curves on design seeds 100–103 (e^1.254 = 3.50, seed 101), × 1.25,
#: rounded up to a half — fixed before any validation seed was run.
FINETUNE_FACTOR = 4.5


def check_dherin_similar(result: regression.FineTuning, factor: float = FINETUNE_FACTOR) -> Verdict:
    """[Dherin et al. §4.3]: fine-tuning and ΔW(C_i) both halve the test loss by the last example, and their curves
    stay within ``factor`` of each other at every i ≥ 1.

    Its negative control is the paper's contrast of learning with retrieval: chapter 14's network pre-trained on one
    task (``ICLConfig(n_pretrain_tasks=1)``), whose ΔW(C_i) does not learn the new tasks while fine-tuning does."""
    ft, dw = result.history["finetune"], result.history["delta_w"]
    return DHERIN_SIMILAR.judge(
        compare_values("fine-tuning loss (i = end)", ft[-1], "<", "0.5·loss (i = 0)", 0.5 * ft[0]),
        compare_values("ΔW loss (i = end)", dw[-1], "<", "0.5·loss (i = 0)", 0.5 * dw[0]),
        threshold("largest factor between the curves", math.exp(finetune_gap(result)), "<=", factor),
        finetune=list(np.round(ft, 3)), delta_w=list(np.round(dw, 3)))



def check_sherman_morrison_ridge(error: float, tol: float = 1e-10) -> Verdict:
    """[Akyürek Thm 2]: the per-example Sherman–Morrison recursion equals ridge regression up to rounding.

    An identity; its negative control starts the recursion from a wrong λ (``lam_start``)."""
    return AKYUREK_RIDGE.judge(identity("relative error, Sherman–Morrison vs ridge", error, tol))


# =============================================================================================================
# Akyürek et al. §5, Fig. 4: probing the learner's hidden states for the quantities the algorithms compute.
# Their probes read, from each layer's hidden states of a trained in-context learner, the moment Xᵀy and the
# least-squares weights w_OLS; the accuracy is best in late layers, and their dashed lines — the best accuracy on a
# control task with a fixed weight vector w = 1 — lie below.  Here (assumed, see the notebook): chapter 14's learner
# (:func:`~companion.experiments.ch14_phenomena.train_icl`, two softmax blocks) is probed at the query token after
# its embedding and after each block, by a one-hidden-layer MLP probe (their probes are nonlinear) trained on
# 4096 prompts and scored by R² on 1024 others; its control is the same architecture and budget trained on prompts
# whose w is one fixed vector (``ICLConfig(n_pretrain_tasks=1)``: drawn once, not the all-ones vector), probed on the
# same prompts for the same targets.
# =============================================================================================================
PROBE_TARGETS = ("Xᵀy", "w_OLS")


@dataclass(frozen=True)
class ProbeConfig:
    """The probing run: prompts of ``k`` examples (k ≥ d: noiseless, so w_OLS = w; on design seeds 100–107 k = 8 separated the learners
    more than k = 16, where seed 107's trained learner fell below the fixed-w one), ``n_train`` of them to fit each
    probe and ``n_test`` others to score it; each probe is an MLP d_model → ``hidden`` → d (ReLU), full-batch Adam at
    ``lr`` for ``steps`` steps on standardised features and targets."""

    k: int = 8
    n_train: int = 4096
    n_test: int = 1024
    hidden: int = 64
    steps: int = 300
    lr: float = 1e-2
    seed: int = 0


@dataclass
class ProbeResult:
    """``r2[learner][target]`` (L+1,): the probe's test R² at the query token after the embedding (layer 0) and after
    each of the L blocks, for each learner (``"trained"``, ``"fixed w"``) and target (:data:`PROBE_TARGETS`)."""

    config: ProbeConfig
    r2: dict[str, dict[str, np.ndarray]]

    @property
    def layers(self) -> np.ndarray:
        return np.arange(len(next(iter(next(iter(self.r2.values())).values()))))


@torch.no_grad()
def query_states(model: Transformer, tokens: Tensor) -> Tensor:
    """The hidden state at the query token (the last position) after the embedding and after each block,
    (L+1, B, d_model), through chapter 14's block views (:func:`companion.core.icl.contextual_blocks`)."""
    h = icl.embed(model, tokens)
    states = [h[:, -1]]
    for block in icl.contextual_blocks(model):
        h = block(h)
        states.append(h[:, -1])
    return torch.stack(states)


def probe_targets(tasks: regression.Tasks) -> dict[str, Tensor]:
    """The probed quantities of each prompt (B, d): the moment Xᵀy and the least-squares weights w_OLS = X⁺y."""
    return {"Xᵀy": torch.einsum("bkd,bk->bd", tasks.xs, tasks.ys), "w_OLS": regression.ols_weights(tasks.xs, tasks.ys)}


def _standardise(train: Tensor, test: Tensor) -> tuple[Tensor, Tensor]:
    """Both sets (K, N, ·) centred and scaled by the training set's mean and standard deviation, per member."""
    mean, std = train.mean(1, keepdim=True), train.std(1, keepdim=True).clamp_min(1e-8)
    return (train - mean) / std, (test - mean) / std


def fit_probes(features: Tensor, targets: Tensor, config: ProbeConfig) -> np.ndarray:
    """Fit K MLP probes as one batched computation (:class:`companion.core.nets.BatchedMLP`): member m maps
    ``features[m]`` (N, D) to ``targets[m]`` (N, d), the first ``config.n_train`` rows training it, the rest scoring
    it.  Returns each probe's test R² = 1 − Σ‖pred − t‖² / Σ‖t − t̄‖² (all target coordinates pooled), (K,)."""
    n = config.n_train
    x_train, x_test = _standardise(features[:, :n], features[:, n:])
    y_train, y_test = _standardise(targets[:, :n], targets[:, n:])
    K, D, d = features.shape[0], features.shape[-1], targets.shape[-1]
    probe = BatchedMLP((D, config.hidden, d), K, act="relu", init_std=D ** -0.5,
                       generator=generator(config.seed, 41))
    optimizer = torch.optim.Adam(probe.parameters(), lr=config.lr)
    run(descend(optimizer, lambda: ((probe(x_train) - y_train) ** 2).mean((1, 2))), steps=config.steps,
        record=lambda step: {}, record_at=[config.steps], progress=False, desc="probes")
    with torch.no_grad():
        residual = ((probe(x_test) - y_test) ** 2).sum((1, 2))
    return (1 - residual / ((y_test - y_test.mean(1, keepdim=True)) ** 2).sum((1, 2))).numpy()


def run_probe(learners: dict[str, Transformer], d: int, config: ProbeConfig) -> ProbeResult:
    """Probe every learner's query-token states, layer by layer, for every target of :data:`PROBE_TARGETS` on the
    same ``n_train + n_test`` fresh noiseless prompts of ``config.k`` examples (stream 40 of ``config.seed``); all the
    probes (learners × layers × targets) train as one batch."""
    t = regression.sample_tasks(config.n_train + config.n_test, config.k, d, generator=generator(config.seed, 40))
    tokens, targets = t.tokens(), probe_targets(t)
    states = {name: query_states(model, tokens) for name, model in learners.items()}
    keys = [(name, target, layer) for name, s in states.items() for target in PROBE_TARGETS for layer in range(len(s))]
    r2 = fit_probes(torch.stack([states[n][l] for n, _, l in keys]), torch.stack([targets[t] for _, t, _ in keys]),
                    config)
    out: dict[str, dict[str, np.ndarray]] = {name: {} for name in learners}
    for name in learners:
        for target in PROBE_TARGETS:
            out[name][target] = np.array([v for (n, tg, _), v in zip(keys, r2) if n == name and tg == target])
    return ProbeResult(config, out)


#: The trained learner's probe must read w_OLS from its last block with R² ≥ PROBE_R2, at least PROBE_GAP above the
#: fixed-w learner's best layer — both fixed on design seeds 100–107 before validation: there the last-block R² was
#: 0.34–0.73 and its lead over the fixed-w learner's best 0.044–0.50 (k = 8); PROBE_GAP is about half the smallest lead,
#: PROBE_R2 the smallest R² less a quarter, rounded down (0.3 would have been within 0.04 of seed 107's).  Validated
#: once on seeds 0–19 (quick profile): 20/20, margin min +0.070, median +0.309 (R² 0.34–0.76, lead 0.047–0.40).
PROBE_R2, PROBE_GAP = 0.25, 0.02

AKYUREK_PROBE = ClaimSpec(
    "chicl.akyurek-probe", "Akyürek Fig. 4",
    "an MLP probe reads the least-squares weights w_OLS from the trained learner's query-token state best after its "
    "last block (better than after the embedding or the first block), with R² ≥ 0.25, and at least 0.02 above its best "
    "R² on any layer of the same architecture trained on prompts with one fixed weight vector (the paper's control "
    "task)")  # the numbers are PROBE_R2, PROBE_GAP


def check_akyurek_probe(result: ProbeResult, learner: str = "trained", control: str = "fixed w",
                        target: str = "w_OLS") -> Verdict:
    """[Akyürek Fig. 4]: the probe of ``target`` on ``learner``'s states is best at the last layer, reaches ``PROBE_R2``
    there and beats the ``control`` learner's best layer by ``PROBE_GAP``.

    Its negative control is the paper's control task in the learner's place (``learner="fixed w"``): a learner trained on
    one fixed w does not encode w_OLS that well (its absolute R² fails, and trivially the margin over itself)."""
    r2, ref = result.r2[learner][target], result.r2[control][target]
    last = len(r2) - 1
    return AKYUREK_PROBE.judge(
        *(compare_values(f"R²({target}), {learner}, block {last}", r2[-1], ">", f"R²({target}), {learner}, "
                         + ("embedding" if layer == 0 else f"block {layer}"), r2[layer]) for layer in range(last)),
        threshold(f"R²({target}), {learner}, block {last}", r2[-1], ">=", PROBE_R2),
        compare_values(f"R²({target}), {learner}, block {last}", r2[-1], ">=",
                       f"best R²({target}), {control} + {PROBE_GAP:g}", ref.max() + PROBE_GAP),
        **{f"r2_{name}_{t}".replace(" ", "_"): list(np.round(v, 3)) for name, d in result.r2.items()
           for t, v in d.items()})


# -------------------------------------------------------------------------- Akyürek et al.: wider learners (§4)
# Their abstract: trained in-context learners converge to the Bayes estimator "for large widths and depths".  The depth
# direction is ``chicl.akyurek-bayes`` (the linear-attention learners, which have no width to grow).  The width
# direction here uses chapter 14's softmax learner (:func:`~companion.experiments.ch14_phenomena.train_icl`: two blocks,
# d = 4, prompts of k = 1…16 noiseless examples, 2000 Adam steps), at fixed depth 2 and widths d_model = 8, 16, 32
# (MLP width 4·d_model; 32 is the learner of Dherin et al.'s section, reused).  On noiseless prompts with w ~ N(0, I)
# the Bayes estimator is the posterior mean of w, the minimum-norm least-squares X⁺y (exact from k = d on): its error
# is 0 from k = 4 and (d − k)/d·… below.  A learner's **excess risk** is its test MSE minus that estimator's on the
# same prompts, averaged over k = 1…16.
@dataclass(frozen=True)
class WidthConfig:
    """The width experiment: chapter 14's learner of ``base`` at each d_model of ``widths`` (MLP 4·d_model), scored on
    ``n_test`` fresh noiseless prompts per context length k = 1…``base.k_max`` (stream 37 of ``seed``)."""

    widths: tuple[int, ...] = (8, 16, 32)
    n_test: int = 512
    seed: int = 0


@dataclass
class WidthResult:
    """``excess[i, k−1]``: learner i's test MSE minus the Bayes estimator's at context length k; ``bayes[k−1]`` that
    estimator's own MSE; ``widths`` the learners' d_model (the order the check reads)."""

    widths: tuple[int, ...]
    excess: np.ndarray
    bayes: np.ndarray

    @property
    def mean_excess(self) -> np.ndarray:
        """Each learner's excess risk averaged over k = 1…k_max, (len(widths),)."""
        return self.excess.mean(1)


def width_learner(base: regression.ICLConfig, width: int) -> Transformer:
    """Chapter 14's learner of ``base`` at width d_model = ``width`` (MLP 4·width), trained (cached) by ``train_icl``."""
    return regression.train_icl(dataclasses.replace(base, d_model=width, d_ff=4 * width)).model


@torch.no_grad()
def bayes_excess(learners: list[Transformer], d: int, k_max: int, n_test: int, seed: int
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The learners' excess MSE over the minimum-norm least-squares predictor (the Bayes estimator of noiseless prompts,
    w ~ N(0, I)) at every k = 1…k_max, (len(learners), k_max), on the same fresh prompts; and that predictor's MSE."""
    gen = generator(seed, 37)
    excess, bayes = np.zeros((len(learners), k_max)), np.zeros(k_max)
    for k in range(1, k_max + 1):
        t = regression.sample_tasks(n_test, k, d, generator=gen)
        bayes[k - 1] = float(((regression.ols_weights(t.xs, t.ys) * t.xq).sum(-1) - t.yq).pow(2).mean())
        for i, model in enumerate(learners):
            excess[i, k - 1] = float((regression.predict(model, t.tokens()) - t.yq).pow(2).mean()) - bayes[k - 1]
    return excess, bayes


def run_width(base: regression.ICLConfig, config: WidthConfig,
              trained: dict[int, Transformer] | None = None) -> WidthResult:
    """Train (or take from ``trained``, by width) chapter 14's learner at every width of ``config`` and measure each
    one's excess risk over the Bayes estimator (:func:`bayes_excess`)."""
    trained = trained or {}
    learners = [trained[w] if w in trained else width_learner(base, w) for w in config.widths]
    excess, bayes = bayes_excess(learners, base.d, base.k_max, config.n_test, config.seed)
    return WidthResult(tuple(config.widths), excess, bayes)


#: The widest learner's mean excess risk must stay below this fraction of the narrowest's: on design seeds 100–105 the
#: ratio was 0.29–0.57 (width 16's to width 8's 0.43–0.85); fixed at 0.7 before validation.
WIDTH_SHRINK = 0.7

AKYUREK_WIDTH = ClaimSpec(
    "chicl.akyurek-width", "Akyürek §4",
    "at fixed depth (two softmax blocks), wider in-context learners come closer to the Bayes estimator on noiseless "
    "prompts: the excess risk over minimum-norm least squares, averaged over k = 1…16, is smaller at width 16 than at "
    "width 8, and at width 32 below 0.7 × width 8's")


def check_akyurek_width(result: WidthResult) -> Verdict:
    """[Akyürek §4]: the mean excess risk over the Bayes estimator falls from the narrowest learner (``widths[0]``)
    to the middle one and, by a factor ``WIDTH_SHRINK``, to the widest; the widest against the middle one is measured,
    not judged (its lead was 9–33% on the design seeds).

    Its negative control is the paper's contrast, narrow learners throughout: three width-8 learners (three seeds)
    in the places of widths 8, 16, 32 — their excess does not fall."""
    e, (a, b, c) = result.mean_excess, result.widths
    return AKYUREK_WIDTH.judge(
        compare_values(f"mean excess risk, width {b}", e[1], "<", f"mean excess risk, width {a}", e[0]),
        compare_values(f"mean excess risk, width {c}", e[2], "<", f"{WIDTH_SHRINK}·mean excess risk, width {a}",
                       WIDTH_SHRINK * e[0]),
        mean_excess=list(np.round(e, 4)), widths=list(result.widths),
        excess_k16=list(np.round(result.excess[:, -1], 4)))
