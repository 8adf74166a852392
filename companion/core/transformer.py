"""A tiny decoder-only transformer, readable in one sitting, with the book's initialisation rate γ.

The model follows §13.2.6 (equations (13.3)–(13.6)) and §3 of the book:

    X^(1)  = X^in W^em + X^pos                                  (13.3)  token table, or a linear
                                                                        embedding of continuous inputs
    Q, K, V = X W^Q, X W^K, X W^V                               (13.4)  per head, no biases
    Attn    = softmax(Q Kᵀ / √d_k)   (causal mask)              (13.5)
    X^ao    = LN(X + (Attn V) W^attn)                           (13.6)  post-LN ("post")
    X^next  = LN(MLP(X^ao) + X^ao),  MLP(x) = ReLU(x W¹ + b¹) W² + b²
    logits  = X^(L+1) W^out + b^out

``norm="pre"`` gives the pre-LN variant of 图3.23 (X + Attn(LN X), X + MLP(LN X), a final LN
before the readout) and ``norm="none"`` drops LayerNorm (useful for in-context regression).
``d_ff=0`` removes the MLPs (an attention-only model, as the simplified model of 图12.16).

**Initialisation rate γ** (§13.2.3, 图13.5 caption): every weight matrix W ∈ R^{d_in×d_out},
embeddings included, is drawn from N(0, (d_in^{−γ})²); larger γ means a smaller initialisation.
For a token table W^em (vocabulary × d_model) and the position table X^pos, d_in is taken as
d_model (the fan of the torch weight's second axis, as in the authors' code); biases start at 0 and
LayerNorm at (gain 1, shift 0).  PyTorch's default ``kaiming_uniform`` is close to γ = 0.5.

**Ensembles.** ``Transformer(cfg, n_members=K)`` holds K independent models of one shape as
tensors with a leading member axis, so that a grid of (γ, λ, seed) runs trains as one batched
computation; ``gamma`` may give one rate per member.  With ``n_members=None`` (the default) the
model is a single network and shapes carry no member axis.  :class:`MemberAdamW` is AdamW with
one decoupled weight-decay coefficient λ_k per member (for K = 1 it *is* ``torch.optim.AdamW``);
:func:`fit_last_token` trains with it through the package's one engine (:mod:`companion.core.train`).

Attention maps: ``model(x, return_attention=True)`` returns ``(logits, maps)`` with one map per
layer of shape ([K,] B, H, T, T).  ``attn_keep`` multiplies the attention weights *after* the
softmax (no renormalisation), the masking experiment of 图13.7: 1 keeps a weight, 0 removes it.

Shapes: T ≤ ``cfg.max_len`` positions, B sequences, d = ``d_model``, H heads of size d_k = d/H.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.optim.lr_scheduler import LambdaLR

from companion.core.train import History, descend, on_device, run
from companion.kit.config import batched_threads
from companion.kit.seeds import generator as seeded_generator

NORMS = ("post", "pre", "none")
SCHEDULES = ("constant", "warmup_cosine")
ACTIVATIONS = ("relu", "gelu")


@dataclass(frozen=True)
class TransformerConfig:
    """Shape of the model.

    Args:
        vocab_size: size of the token table; ``None`` for continuous inputs (then set ``d_input``).
        d_input: dimension of continuous inputs, embedded by a linear map R^{d_input} → R^{d_model}.
        max_len: number of learned positions (the longest sequence).
        d_model, n_layers, n_heads: width, depth and heads (d_model must be divisible by n_heads).
        d_ff: hidden width of the MLP of each block; 0 removes the MLPs.
        d_out: readout size; default ``vocab_size``.
        norm: ``"post"`` (book, §12.8/§13.2.6), ``"pre"`` or ``"none"``.
        causal: apply the causal mask (decoder-only); ``False`` lets every position see all.
        activation: MLP non-linearity, ``"relu"`` (book) or ``"gelu"``.
    """

    vocab_size: int | None = 101
    d_input: int | None = None
    max_len: int = 9
    d_model: int = 64
    n_layers: int = 2
    n_heads: int = 1
    d_ff: int = 256
    d_out: int | None = None
    norm: str = "post"
    causal: bool = True
    activation: str = "relu"

    def __post_init__(self) -> None:
        if (self.vocab_size is None) == (self.d_input is None):
            raise ValueError(f"give exactly one of vocab_size (tokens) and d_input (continuous inputs); "
                             f"got vocab_size={self.vocab_size}, d_input={self.d_input}")
        for name in ("max_len", "d_model", "n_layers", "n_heads"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be ≥ 1, got {getattr(self, name)}")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model={self.d_model} is not divisible by n_heads={self.n_heads}")
        if self.d_ff < 0:
            raise ValueError(f"d_ff must be ≥ 0 (0 = no MLP), got {self.d_ff}")
        if self.norm not in NORMS:
            raise ValueError(f"unknown norm {self.norm!r}; choose one of {', '.join(NORMS)}")
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"unknown activation {self.activation!r}; choose one of {', '.join(ACTIVATIONS)}")
        if self.d_out is None and self.vocab_size is None:
            raise ValueError("continuous inputs need an explicit d_out (the readout size)")

    @property
    def d_k(self) -> int:
        return self.d_model // self.n_heads

    @property
    def n_outputs(self) -> int:
        return int(self.d_out if self.d_out is not None else self.vocab_size)


def _gammas(gamma: float | Sequence[float] | Tensor, n_members: int) -> Tensor:
    g = torch.as_tensor(gamma, dtype=torch.float32).reshape(-1)
    if g.numel() == 1:
        g = g.expand(n_members)
    if g.numel() != n_members:
        raise ValueError(f"gamma must be one value or one per member ({n_members}); got {g.numel()} values")
    if not bool(torch.isfinite(g).all()) or bool((g < 0).any()):
        raise ValueError(f"initialisation rate gamma must be finite and ≥ 0, got {g.tolist()}")
    return g.clone()


class Transformer(nn.Module):
    """K (or one) decoder-only transformers; see the module docstring for equations and shapes.

    Every weight ``W`` is stored as (K, d_in, d_out) and used as ``x @ W``, so ``W[k]`` is the
    book's W of member k (rows = input dimensions).  Parameter names follow the book:
    ``w_em``/``w_in`` (embedding), ``x_pos``, ``w_q``/``w_k``/``w_v``/``w_attn`` (per layer,
    in ``self.layers[l]``), ``w1``/``b1``/``w2``/``b2`` (MLP), ``w_out``/``b_out`` (readout).
    The weights are drawn from ``generator`` (default: seed 0 of :func:`companion.kit.seeds.generator`,
    for a model whose weights are loaded afterwards); torch's global random state is never used.
    """

    def __init__(self, cfg: TransformerConfig, n_members: int | None = None,
                 gamma: float | Sequence[float] | Tensor = 0.5, generator: torch.Generator | None = None) -> None:
        super().__init__()
        if n_members is not None and n_members < 1:
            raise ValueError(f"n_members must be ≥ 1 or None, got {n_members}")
        self.cfg, self.ensemble = cfg, n_members is not None
        self.n_members = K = int(n_members or 1)
        self.gamma = _gammas(gamma, K)  # (K,)
        if generator is None:  # never torch's global RNG: a model built only to load weights into
            generator = seeded_generator(0)
        d, dff = cfg.d_model, cfg.d_ff

        def weight(d_in: int, d_out: int, fan: int | None = None) -> nn.Parameter:
            std = float(fan or d_in) ** (-self.gamma)  # (K,) std = d_in^{-γ_k}
            return nn.Parameter(torch.randn(K, d_in, d_out, generator=generator) * std[:, None, None])

        def zeros(*shape: int) -> nn.Parameter:
            return nn.Parameter(torch.zeros(K, *shape))

        def ones(*shape: int) -> nn.Parameter:
            return nn.Parameter(torch.ones(K, *shape))

        if cfg.vocab_size is not None:
            self.w_em = weight(cfg.vocab_size, d, fan=d)  # token table (K, V, d)
        else:
            self.w_in = weight(int(cfg.d_input), d)  # continuous inputs (K, d_input, d)
        self.x_pos = weight(cfg.max_len, d, fan=d)  # (K, max_len, d)
        self.layers = nn.ModuleList()
        for _ in range(cfg.n_layers):
            layer = nn.Module()
            layer.w_q, layer.w_k, layer.w_v, layer.w_attn = (weight(d, d) for _ in range(4))
            if dff:
                layer.w1, layer.b1, layer.w2, layer.b2 = weight(d, dff), zeros(1, dff), weight(dff, d), zeros(1, d)
            if cfg.norm != "none":
                layer.ln1_g, layer.ln1_b, layer.ln2_g, layer.ln2_b = ones(1, d), zeros(1, d), ones(1, d), zeros(1, d)
            self.layers.append(layer)
        if cfg.norm == "pre":
            self.lnf_g, self.lnf_b = ones(1, d), zeros(1, d)
        self.w_out, self.b_out = weight(d, cfg.n_outputs), zeros(1, cfg.n_outputs)

    def to_record(self) -> dict:
        """This model as data for the results cache (:mod:`companion.kit.cache`): its configuration, γ, weights and
        mode; :meth:`from_record` rebuilds it bit for bit."""
        return {"cfg": self.cfg, "n_members": self.n_members if self.ensemble else None, "gamma": self.gamma,
                "state": dict(self.state_dict()), "training": self.training}

    @classmethod
    def from_record(cls, record: dict) -> Transformer:
        model = cls(record["cfg"], n_members=record["n_members"], gamma=record["gamma"])
        model.load_state_dict(record["state"])
        model.gamma = record["gamma"]
        return model.train(record["training"])

    # ----------------------------------------------------------------------------------- pieces
    @staticmethod
    def layer_norm(x: Tensor, g: Tensor, b: Tensor) -> Tensor:
        """LayerNorm over the feature axis with a per-member gain and shift; x: (K, N, d)."""
        return F.layer_norm(x, x.shape[-1:]) * g + b

    def embed(self, x: Tensor) -> Tensor:
        """Tokens (K, B, T) or inputs (K, B, T, d_input) → X^(1) (K, B·T, d), eq. (13.3)."""
        K, B, T = x.shape[:3]
        if self.cfg.vocab_size is not None:
            rows = x.reshape(K, B * T) + self.cfg.vocab_size * torch.arange(K, device=x.device)[:, None]
            em = self.w_em.reshape(K * self.cfg.vocab_size, -1)[rows]  # (K, B·T, d)
        else:
            em = torch.bmm(x.reshape(K, B * T, -1), self.w_in)
        return (em.reshape(K, B, T, -1) + self.x_pos[:, None, :T]).reshape(K, B * T, -1)

    def attention(self, layer: nn.Module, x: Tensor, B: int, T: int, keep: Tensor | None,
                   last_only: bool = False) -> tuple[Tensor, Tensor]:
        """Multi-head attention (13.4)–(13.5) and W^attn; x: (K, B·T, d) → ((K, B·T', d), (K, B, H, T', T)).

        T' = T, or T' = 1 with ``last_only`` (only the last position asks a query: keys and values
        still come from every position, so its output is exactly the full computation's last row).
        """
        K, H, dk = x.shape[0], self.cfg.n_heads, self.cfg.d_k

        def heads(inputs: Tensor, w: Tensor, n: int) -> Tensor:
            return torch.bmm(inputs, w).reshape(K, B, n, H, dk).transpose(2, 3)  # (K, B, H, n, d_k)

        rows = 1 if last_only else T
        queries = x.reshape(K, B, T, -1)[:, :, -1] if last_only else x  # (K, B·T', d)
        q, k, v = heads(queries, layer.w_q, rows), heads(x, layer.w_k, T), heads(x, layer.w_v, T)
        scores = q @ k.transpose(-1, -2) / math.sqrt(dk)  # (K, B, H, T', T)
        if self.cfg.causal and not last_only:  # the last query may see every position
            future = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)
            scores = scores.masked_fill(future, float("-inf"))
        attn = scores.softmax(dim=-1)
        if keep is not None:  # masking after the softmax (图13.7), no renormalisation
            attn = attn * (keep[..., -1:, :] if last_only and keep.shape[-2] == T else keep)
        out = (attn @ v).transpose(2, 3).reshape(K, B * rows, H * dk)  # heads concatenated
        return torch.bmm(out, layer.w_attn), attn

    def _mlp(self, layer: nn.Module, x: Tensor) -> Tensor:
        act = torch.relu if self.cfg.activation == "relu" else F.gelu
        return torch.baddbmm(layer.b2, act(torch.baddbmm(layer.b1, x, layer.w1)), layer.w2)

    def _keep_masks(self, attn_keep: Tensor | Sequence[Tensor | None] | None) -> list[Tensor | None]:
        if attn_keep is None or isinstance(attn_keep, Tensor):
            return [attn_keep] * self.cfg.n_layers
        masks = list(attn_keep)
        if len(masks) != self.cfg.n_layers:
            raise ValueError(f"attn_keep lists {len(masks)} masks but the model has {self.cfg.n_layers} layers")
        return masks

    # ----------------------------------------------------------------------------------- forward
    def forward(self, x: Tensor, *, return_attention: bool = False,
                attn_keep: Tensor | Sequence[Tensor | None] | None = None,
                return_hidden: bool = False, last_only: bool = False) -> Tensor | tuple:
        """Logits for every position.

        Args:
            x: tokens (B, T) (long) or continuous inputs (B, T, d_input); an ensemble also accepts
               a per-member batch (K, B, T[, d_input]); a shared batch is broadcast to all members.
            return_attention: also return the list of attention maps, one per layer,
               each ([K,] B, H, T, T) (rows: query position, columns: key position).
            attn_keep: multiplies the attention weights after the softmax; a tensor broadcastable to
               ([K,] B, H, T, T) applied in every layer, or one such tensor (or None) per layer.
            return_hidden: also return the last hidden states X^(L+1), ([K,] B, T, d).
            last_only: compute the final layer for the last position only (all that the last-token
               loss needs; about 40% less work for two layers); outputs then have T = 1 and the final
               layer's attention map has one query row.
        Returns:
            logits ([K,] B, T, d_out), then the attention maps and/or the hidden states if asked.
        """
        x = self.with_member_axis(x)
        K, B, T = x.shape[:3]
        if T > self.cfg.max_len:
            raise ValueError(f"sequence length {T} exceeds max_len={self.cfg.max_len}")
        keeps = self._keep_masks(attn_keep)
        if not self.ensemble:
            keeps = [None if m is None else m.unsqueeze(0) for m in keeps]  # add the member axis
        h, maps = self.embed(x), []  # (K, B·T, d)
        pre, post = self.cfg.norm == "pre", self.cfg.norm == "post"
        for depth, (layer, keep) in enumerate(zip(self.layers, keeps)):
            last = last_only and depth == self.cfg.n_layers - 1
            x_in = self.layer_norm(h, layer.ln1_g, layer.ln1_b) if pre else h
            a, attn = self.attention(layer, x_in, B, T, keep, last)
            maps.append(attn)
            if last:  # from here on only the last position is carried
                h, T = h.reshape(K, B, T, -1)[:, :, -1], 1
            h = self.layer_norm(h + a, layer.ln1_g, layer.ln1_b) if post else h + a  # X^ao, (13.6)
            if self.cfg.d_ff:
                m = self._mlp(layer, self.layer_norm(h, layer.ln2_g, layer.ln2_b) if pre else h)
                h = self.layer_norm(h + m, layer.ln2_g, layer.ln2_b) if post else h + m  # X^do
        if pre:
            h = self.layer_norm(h, self.lnf_g, self.lnf_b)
        logits = torch.baddbmm(self.b_out, h, self.w_out).reshape(K, B, T, -1)  # (K, B, T, d_out)
        hidden = h.reshape(K, B, T, -1)
        if not self.ensemble:
            logits, hidden, maps = logits[0], hidden[0], [m[0] for m in maps]
        extra = ([maps] if return_attention else []) + ([hidden] if return_hidden else [])
        return (logits, *extra) if extra else logits

    def with_member_axis(self, x: Tensor) -> Tensor:
        """Validate inputs and give them the member axis: (B, T[, d_input]) → (K, B, T[, d_input])."""
        token = self.cfg.vocab_size is not None
        base = 2 if token else 3  # ndim of an unbatched-over-members input
        if token and x.dtype not in (torch.int64, torch.int32):
            raise ValueError(f"token inputs must be integer tensors, got dtype {x.dtype}")
        if not token and x.shape[-1] != self.cfg.d_input:
            raise ValueError(f"continuous inputs must end with d_input={self.cfg.d_input}, got shape {tuple(x.shape)}")
        if x.ndim == base:
            return x.unsqueeze(0).expand(self.n_members, *x.shape)
        if x.ndim == base + 1 and self.ensemble and x.shape[0] == self.n_members:
            return x
        raise ValueError(f"input must have shape (B, T{'' if token else ', d_input'})"
                         f"{f' or ({self.n_members}, B, T, …)' if self.ensemble else ''}; got {tuple(x.shape)}")

    # ----------------------------------------------------------------------------------- helpers
    def member_weight(self, name: str, member: int = 0, layer: int | None = None) -> Tensor:
        """The book's matrix ``name`` (e.g. ``"w_q"``, ``"w_em"``) of one member, detached (d_in, d_out)."""
        owner = self if layer is None else self.layers[layer]
        if not hasattr(owner, name):
            raise ValueError(f"no parameter {name!r}{'' if layer is None else f' in layer {layer}'}")
        if not 0 <= member < self.n_members:
            raise ValueError(f"member must lie in [0, {self.n_members}), got {member}")
        return getattr(owner, name)[member].detach()

    def n_parameters(self) -> int:
        """Parameters of one member."""
        return sum(p[0].numel() for p in self.parameters())


class MemberAdamW(torch.optim.Adam):
    """AdamW (Loshchilov & Hutter) with one decoupled weight decay λ_k per ensemble member.

    Before each Adam step every parameter is shrunk, θ_k ← (1 − lr·λ_k) θ_k, exactly as
    ``torch.optim.AdamW`` does with a single λ; the member axis is the leading axis of every
    parameter of a :class:`Transformer`.  With ``max_grad_norm`` each member's gradient is first clipped
    to that norm (its own norm over all its parameters, as ``clip_grad_norm_`` does for one model).  The book's "Adam with weight decay" (§13.2.6) is this
    optimiser; λ is the book's weight-decay coefficient.
    """

    def __init__(self, params, lr: float, weight_decay: float | Sequence[float] | Tensor,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 max_grad_norm: float | None = None) -> None:
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=0.0)
        self.member_decay = torch.as_tensor(weight_decay, dtype=torch.float32).reshape(-1)
        if bool((self.member_decay < 0).any()):
            raise ValueError(f"weight_decay must be ≥ 0, got {self.member_decay.tolist()}")
        if max_grad_norm is not None and not max_grad_norm > 0:
            raise ValueError(f"max_grad_norm must be positive or None, got {max_grad_norm}")
        self.max_grad_norm = max_grad_norm

    @torch.no_grad()
    def clip_per_member(self) -> None:
        """Scale each member's gradient (over all parameters) to norm ≤ ``max_grad_norm``; members stay independent."""
        params = [p for group in self.param_groups for p in group["params"] if p.grad is not None]
        if self.max_grad_norm is None or not params:
            return
        sq = sum(p.grad.pow(2).reshape(p.shape[0], -1).sum(1) for p in params)  # (K,)
        scale = (self.max_grad_norm / (sq.sqrt() + 1e-6)).clamp(max=1.0)
        for p in params:
            p.grad.mul_(scale.reshape(-1, *[1] * (p.ndim - 1)))

    @torch.no_grad()
    def step(self, closure=None):  # type: ignore[override]
        """Evaluate ``closure`` (if given), clip each member's gradient, decay, then one Adam step."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        self.clip_per_member()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if self.member_decay.device != p.device:  # moved once, not copied every step (a sync on a GPU)
                    self.member_decay = self.member_decay.to(p.device)
                lam = self.member_decay
                if lam.numel() not in (1, p.shape[0]):
                    raise ValueError(f"weight_decay has {lam.numel()} values but parameters have {p.shape[0]} members")
                p.mul_(1 - group["lr"] * lam.reshape(-1, *[1] * (p.ndim - 1)))
        super().step()
        return loss


# --------------------------------------------------------------------------------------- training
def lr_factor(step: int, steps: int, schedule: str = "warmup_cosine", warmup: float = 0.1,
              floor: float = 0.0) -> float:
    """Learning-rate multiplier at ``step``: constant, or linear warm-up over the first ``warmup``
    fraction of the steps from ``floor`` to 1, then a cosine back to ``floor`` (§12.8 uses
    2e-5 → 2e-4 → 2e-5, i.e. ``floor=0.1``)."""
    if schedule not in SCHEDULES:
        raise ValueError(f"unknown schedule {schedule!r}; choose one of {', '.join(SCHEDULES)}")
    if schedule == "constant":
        return 1.0
    n_warm = max(1, int(round(warmup * steps)))
    if step < n_warm:
        return floor + (1 - floor) * step / n_warm
    t = (step - n_warm) / max(1, steps - n_warm)
    return floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * min(t, 1.0)))


def last_token_loss(logits: Tensor, y: Tensor) -> Tensor:
    """Cross-entropy of the last position (§12.8.2), one mean per member: logits (K, B, T, V), y (K, B)."""
    last = logits[:, :, -1]  # (K, B, V)
    return F.cross_entropy(last.reshape(-1, last.shape[-1]), y.reshape(-1), reduction="none").reshape(y.shape).mean(1)


def _per_member(model: Transformer, x: Tensor, y: Tensor) -> tuple[Tensor, Tensor]:
    """Give data a member axis: shared (N, T[, d]) and (N,) become (K, N, T[, d]) and (K, N) views."""
    base = 2 if model.cfg.vocab_size is not None else 3
    if x.ndim == base:
        x, y = x.expand(model.n_members, *x.shape), y.expand(model.n_members, *y.shape)
    if x.ndim != base + 1 or x.shape[0] != model.n_members or y.shape != x.shape[:2]:
        raise ValueError(f"data must be shared, x (N, T) with y (N,), or per member, x ({model.n_members}, N, T) "
                         f"with y ({model.n_members}, N); got x {tuple(x.shape)}, y {tuple(y.shape)}")
    return x, y


def _call(model: Transformer, x: Tensor, **kwargs):
    """Run ``model`` on per-member data (K, N, T) whether or not it is an ensemble."""
    return model(x if model.ensemble else x[0], **kwargs)


@torch.no_grad()
def last_token_logits(model: Transformer, x: Tensor, chunk: int = 2048, **kwargs) -> Tensor:
    """Last-position logits (K, N, V) for shared (N, T) or per-member (K, N, T) inputs.

    ``kwargs`` go to the model (e.g. ``attn_keep`` for the masking experiment of 图13.7).
    """
    base = 2 if model.cfg.vocab_size is not None else 3
    if x.ndim == base:
        x = x.expand(model.n_members, *x.shape)
    parts = []
    for i in range(0, x.shape[1], chunk):
        out = _call(model, x[:, i:i + chunk], last_only=True, **kwargs)
        parts.append((out if model.ensemble else out[None])[:, :, -1])
    return torch.cat(parts, dim=1)


@torch.no_grad()
def last_token_accuracy(model: Transformer, x: Tensor, y: Tensor, chunk: int = 2048) -> np.ndarray:
    """Fraction of sequences whose last-position argmax equals ``y``; one value per member (K,)."""
    x, y = _per_member(model, x, y)
    return (last_token_logits(model, x, chunk).argmax(-1) == y).float().mean(1).cpu().numpy()


def fit_last_token(model: Transformer, x: Tensor, y: Tensor, *, steps: int, lr: float,
                   weight_decay: float | Sequence[float] = 0.0, batch_size: int = 100,
                   schedule: str = "warmup_cosine", warmup: float = 0.1, lr_floor: float = 0.0,
                   clip: float | None = 1.0, record_every: int = 100,
                   evals: Mapping[str, tuple[Tensor, Tensor]] | None = None,
                   generator: torch.Generator, progress: bool = True, desc: str = "training") -> History:
    """Train on next-token classification of the last position (§12.8.2) with :class:`MemberAdamW`.

    Data are shared, x (N, T) and y (N,), or per member, x (K, N, T) and y (K, N) (each member its
    own task or split).  Each member draws its own mini-batches (with replacement, from ``generator``);
    ``weight_decay`` is λ, one value or one per member; ``clip`` bounds each member's gradient norm; the
    learning rate follows :func:`lr_factor`.  The steps run through :func:`companion.core.train.run`
    (under :func:`~companion.kit.config.batched_threads`, a second core while one is free), on the settings'
    device (:func:`~companion.core.train.on_device`).

    Returns the :class:`~companion.core.train.History` recorded at step 0, every ``record_every`` steps
    and at the end, each series (R, K): ``train_loss`` (the last mini-batch's loss, NaN before the first
    step), ``"<name> accuracy"`` for every set of ``evals`` (name → (x, y)), and ``"cpu_seconds"`` (process
    time since the start).
    """
    if steps < 1 or record_every < 1:
        raise ValueError(f"steps and record_every must be ≥ 1, got steps={steps}, record_every={record_every}")
    if not lr > 0:
        raise ValueError(f"learning rate must be positive, got {lr}")
    x, y = _per_member(model, x, y)  # (K, N, T[, d]), (K, N)
    if not 1 <= batch_size <= x.shape[1]:
        raise ValueError(f"batch_size must lie in [1, {x.shape[1]}], got {batch_size}")
    lr_factor(0, steps, schedule)  # validates the schedule name
    optimizer = MemberAdamW(model.parameters(), lr=lr, weight_decay=weight_decay, max_grad_norm=clip)
    warm_cosine = LambdaLR(optimizer, lambda step: lr_factor(step, steps, schedule, warmup, lr_floor))
    K, evals = model.n_members, dict(evals or {})
    members = torch.arange(K)[:, None]
    latest = {"loss": torch.full((K,), float("nan"))}

    def batch_loss() -> Tensor:  # (K,) cross-entropy of each member's own mini-batch
        lender.update()  # a second core only while one is free (kit.config.batched_threads)
        idx = torch.randint(x.shape[1], (K, batch_size), generator=generator)  # (K, B)
        logits = _call(model, x[members, idx], last_only=True)
        latest["loss"] = loss = last_token_loss(logits if model.ensemble else logits[None], y[members, idx])
        return loss

    start = time.process_time()

    def record(step: int) -> dict[str, np.ndarray | Tensor]:
        row = {"train_loss": latest["loss"],
               **{f"{name} accuracy": last_token_accuracy(model, xe, ye) for name, (xe, ye) in evals.items()}}
        row["cpu_seconds"] = np.full(K, time.process_time() - start)
        return row

    with batched_threads() as lender, on_device(model) as device:  # batched steps: big enough for a second core
        x, y = x.to(device), y.to(device)
        evals = {name: (xe.to(device), ye.to(device)) for name, (xe, ye) in evals.items()}
        return run(descend(optimizer, batch_loss, schedule=warm_cosine), steps=steps, record=record,
                   record_every=record_every, progress=progress, desc=desc)
