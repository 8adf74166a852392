"""In-context learning as an implicit weight update ΔW (book §14.3; Dherin et al. 2025, "Learning without training").

A *contextual layer* (上下文层) A maps a query token x alone to A(x) and the query preceded by a context C to
A(C, x), both in the same space; the *context vector* is ΔA(C) = A(C, x) − A(x).  A *contextual block*
T_W = M_W ∘ A stacks a network M_W(z) = f_θ(W z + b) on top, W its first dense layer.  Theorem 2.2 of the paper:
for any part Y ⊂ C,

    T_W(C, x) = T_{W + ΔW(Y)}(C∖Y, x),   ΔW(Y) = (W ΔA(Y)) A(C∖Y, x)ᵀ / ‖A(C∖Y, x)‖²,          (Thm 2.2)

with ΔA(Y) = A(C, x) − A(C∖Y, x).  Proof in one line: (W + ΔW) A(C∖Y, x) = W A(C, x).  ΔW has rank 1.

Three block layouts are handled (``kind``), each with the update that makes the identity exact:

* ``"plain"`` — out = W₂ σ(W₁ A + b₁) + b₂, the paper's block: ΔW₁ as above;
* ``"skip"`` — z = h + Attn(h), out = z + W₂ σ(W₁ z + b₁) + b₂: ΔW₁ = W₁ (z_C − z_x) z_xᵀ / ‖z_x‖² and the
  output bias moves by Δb₂ = z_C − z_x (the residual stream's "steering vector");
* ``"preln"`` — z = h + Attn(LN₁ h), u = LN₂ z, out = z + MLP(u): ΔW₁ = W₁ (u_C − u_x) u_xᵀ / ‖u_x‖²,
  Δb₂ = z_C − z_x.

Any module with the methods ``mixer`` (h ↦ z at every position), ``mlp_input`` (z ↦ u), the attributes
``fc1``/``fc2`` (``nn.Linear``-like: ``weight`` (H, D), callable), ``act`` and ``kind`` is a contextual block
here: :class:`ContextualBlock` (a random block for the theorem) and the blocks of a trained
:class:`companion.core.transformer.Transformer` through :func:`contextual_blocks`.

The token-by-token view (Proposition 3.1, "implicit gradient descent", 隐式梯度下降): with prefixes
C_i = [c₁ … c_i], W_i = W_{i−1} − h ∇_W L_i(W_{i−1}) with h = 1/‖A(x)‖² and the linear loss
L_i(W) = tr(Δ_iᵀ W), Δ_i = W (A(C_{i−1}, x) − A(C_i, x)) A(x)ᵀ.  The sum telescopes, so W_i = W + ΔW(C_i).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import math

import torch
from torch import Tensor, nn
from torch.nn.utils import skip_init

from companion.core.spectral import relative_error

KINDS = ("plain", "skip", "preln")
_ACTS: dict[str, Callable[[Tensor], Tensor]] = {"gelu": nn.functional.gelu, "relu": torch.relu, "tanh": torch.tanh}


def check_kind(kind: str) -> str:
    if kind not in KINDS:
        raise ValueError(f"unknown block kind {kind!r}; choose one of {', '.join(KINDS)}")
    return kind


class ContextualBlock(nn.Module):
    """A transformer block read as a contextual block T_W = M_W ∘ A (paper §2), for checking Theorem 2.2.

    Multi-head softmax self-attention (causal by default, so the query — the last token — sees the whole
    context) followed by the MLP W₂ σ(W₁ · + b₁) + b₂; ``kind`` chooses the residual / LayerNorm layout.
    ``recency`` > 0 adds an ALiBi-style score bias −recency · (t − s) of position t on an earlier position s
    (Press et al. 2022): attention then favours the newest tokens instead of averaging over all of them
    (the control of the ΔW-increment decay).
    """

    def __init__(self, dim: int = 8, hidden: int = 32, heads: int = 2, kind: str = "skip", act: str = "gelu",
                 causal: bool = True, dtype: torch.dtype = torch.float64, *,
                 generator: torch.Generator, recency: float = 0.0) -> None:
        super().__init__()
        self.kind = check_kind(kind)
        if act not in _ACTS:
            raise ValueError(f"unknown activation {act!r}; choose one of {', '.join(_ACTS)}")
        if dim % heads:
            raise ValueError(f"dim={dim} must be divisible by heads={heads}")
        if not recency >= 0:
            raise ValueError(f"recency must be ≥ 0, got {recency}")
        self.act, self.causal, self.recency = _ACTS[act], causal, float(recency)
        # built without torch's own initialisation (which draws from the global RNG); every parameter is then
        # drawn from ``generator``: random, O(1) values (LayerNorm gains too, so that LN is not the identity)
        self.attn = skip_init(nn.MultiheadAttention, dim, heads, batch_first=True, dtype=dtype)
        self.ln1 = skip_init(nn.LayerNorm, dim, dtype=dtype) if kind == "preln" else nn.Identity()
        self.ln2 = skip_init(nn.LayerNorm, dim, dtype=dtype) if kind == "preln" else nn.Identity()
        self.fc1 = skip_init(nn.Linear, dim, hidden, dtype=dtype)
        self.fc2 = skip_init(nn.Linear, hidden, dim, dtype=dtype)
        with torch.no_grad():
            for p in self.parameters():
                fan_in = p.shape[-1] if p.ndim == 2 else 1
                p.copy_(torch.randn(p.shape, generator=generator, dtype=dtype) / fan_in ** 0.5)

    def mixer(self, h: Tensor) -> Tensor:
        """The contextual layer at every position: A(h) (plain) or the residual stream z (skip, pre-LN)."""
        T = h.shape[1]
        mask = torch.ones(T, T, dtype=torch.bool, device=h.device).triu(1) if self.causal else None
        if self.recency:
            pos = torch.arange(T, dtype=h.dtype, device=h.device)
            bias = -self.recency * (pos[:, None] - pos[None, :]).abs()
            mask = bias if mask is None else bias.masked_fill(mask, -math.inf)
        q = self.ln1(h)
        a = self.attn(q, q, q, attn_mask=mask, need_weights=False)[0]  # (B, T, D)
        return a if self.kind == "plain" else h + a

    def mlp_input(self, z: Tensor) -> Tensor:
        return self.ln2(z)

    def forward(self, h: Tensor) -> Tensor:  # (B, T, D) -> (B, T, D)
        z = self.mixer(h)
        m = self.fc2(self.act(self.fc1(self.mlp_input(z))))
        return m if self.kind == "plain" else z + m


@dataclass
class Update:
    """An implicit update of a block: ΔW₁ (B, H, D) of the MLP's first layer and Δb₂ (B, D) of its output bias."""

    dW: Tensor
    db2: Tensor

    def rank(self, rtol: float = 1e-8) -> Tensor:
        """Numerical rank of each ΔW₁ (B,): singular values above ``rtol`` × the largest."""
        s = torch.linalg.svdvals(self.dW)  # (B, min(H, D))
        return (s > rtol * s[:, :1]).sum(-1)

    def sv_ratio(self) -> Tensor:
        """σ₂/σ₁ of each ΔW₁ (B,): 0 for an exact rank-1 matrix, rounding level when it is rank 1 numerically."""
        s = torch.linalg.svdvals(self.dW)
        return s[:, 1] / s[:, 0].clamp_min(torch.finfo(s.dtype).tiny)


def _check_seq(h: Tensor, block: nn.Module, name: str) -> None:
    dim = block.fc1.in_features
    if h.ndim != 3 or h.shape[-1] != dim or h.shape[1] < 1:
        raise ValueError(f"{name} must have shape (B, T ≥ 1, {dim}); got {tuple(h.shape)}")


def query_state(block: nn.Module, h: Tensor) -> tuple[Tensor, Tensor]:
    """(z, u) at the query, i.e. the last position of ``h`` (B, T, D): the contextual vector and the MLP input."""
    _check_seq(h, block, "h")
    z = block.mixer(h)[:, -1]  # (B, D)
    return z, block.mlp_input(z)


def implicit_update(block: nn.Module, h_full: Tensor, h_reduced: Tensor) -> Update:
    """Theorem 2.2: the update that turns the block on ``h_reduced`` = [C∖Y, x] into the block on ``h_full`` = [C, x].

    ΔW₁ = W₁ (u_C − u_red) u_redᵀ / ‖u_red‖²;  Δb₂ = z_C − z_red for blocks with a residual stream, 0 for
    ``plain`` ones.  Both sequences end with the query token.
    """
    _check_seq(h_full, block, "h_full")
    z_c, u_c = query_state(block, h_full)
    z_r, u_r = query_state(block, h_reduced)
    w1 = block.fc1.weight  # (H, D)
    dW = torch.einsum("bh,bd->bhd", (u_c - u_r) @ w1.T, u_r) / (u_r * u_r).sum(-1)[:, None, None]  # (B, H, D)
    db2 = torch.zeros_like(z_c) if block.kind == "plain" else z_c - z_r
    return Update(dW, db2)


def patched_output(block: nn.Module, h: Tensor, update: Update | None = None, db1: Tensor | None = None) -> Tensor:
    """T_{W+ΔW}(h) at the query (B, D): the block with its MLP weights patched by ``update`` (per task).

    ``db1`` (B, H) instead moves the first bias: the paper's bias form T_W(C, x) = T_{W, b + WΔA}(x).
    """
    z, u = query_state(block, h)
    pre = block.fc1(u)  # (B, H)
    if update is not None:
        pre = pre + torch.einsum("bhd,bd->bh", update.dW, u)
    if db1 is not None:
        pre = pre + db1
    out = block.fc2(block.act(pre))
    if update is not None:
        out = out + update.db2
    return out if block.kind == "plain" else z + out


def block_output(block: nn.Module, h: Tensor) -> Tensor:
    """T_W(h) at the query (B, D), the unpatched block on the whole sequence."""
    _check_seq(h, block, "h")
    return block(h)[:, -1]


def patch_stack(blocks: Sequence[nn.Module], h_full: Tensor,
                h_query: Tensor | None = None) -> tuple[list[Update], Tensor, Tensor]:
    """Patch every block of a stack with the update of the full-context activations entering it.

    ``h_full`` (B, T, D) is the input of the first block, context then query; ``h_query`` (B, 1, D) the
    input of the query alone (default: the last token of ``h_full``; it differs when positions are embedded).
    Returns the updates, the query's state after the stack with context, and after the query-only pass
    through the patched blocks (the patches keep the query's state equal to the full-context one).
    """
    updates, h = [], h_full
    q = h_full[:, -1:] if h_query is None else h_query
    for block in blocks:
        update = implicit_update(block, h, q)
        updates.append(update)
        q = patched_output(block, q, update)[:, None]  # (B, 1, D), query only
        h = block(h)
    return updates, h[:, -1], q[:, 0]


def patched_stack_output(blocks: Sequence[nn.Module], h_query: Tensor, updates: Sequence[Update]) -> Tensor:
    """The query-only pass (B, D) through ``blocks`` with per-task ``updates`` (one per block)."""
    if len(updates) != len(blocks):
        raise ValueError(f"got {len(updates)} updates for {len(blocks)} blocks")
    q = h_query
    for block, update in zip(blocks, updates):
        q = patched_output(block, q, update)[:, None]
    return q[:, 0]


@dataclass
class ImplicitGD:
    """The implicit learning dynamics over context prefixes C_0 = ∅, C_1, …, C_n (paper Prop. 3.1).

    dW: (B, n+1, H, D) the cumulative updates ΔW(C_i); steps: (B, n, H, D) the gradient steps −h ∇L_i;
    with_context / patched: (B, n+1, D) T_W(C_i, x) and T_{W_i}(x) at the query.
    """

    dW: Tensor
    steps: Tensor
    with_context: Tensor
    patched: Tensor

    def increments(self) -> Tensor:
        """‖ΔW(C_{i+1}) − ΔW(C_i)‖_F per task (B, n): the size of the update that token i+1 causes."""
        return torch.linalg.matrix_norm(self.dW[:, 1:] - self.dW[:, :-1])


def implicit_gd(block: nn.Module, h_full: Tensor) -> ImplicitGD:
    """Run the implicit gradient descent W_i = W_{i−1} − h ∇_W L_i(W_{i−1}) over the prefixes of ``h_full``.

    h = 1/‖u_x‖², L_i(W) = tr(Δ_iᵀ W), Δ_i = W₁ (u_{i−1} − u_i) u_xᵀ (the original W₁), u_i the MLP input at
    the query with context prefix C_i; the steps are summed explicitly (not taken from the closed form), so
    ``patched`` checks the telescoping W_i = W + ΔW(C_i) as well as Theorem 2.2.
    """
    _check_seq(h_full, block, "h_full")
    n = h_full.shape[1] - 1
    query = h_full[:, -1:]
    states = [query_state(block, torch.cat([h_full[:, :i], query], 1)) for i in range(n + 1)]
    z = torch.stack([s[0] for s in states], 1)  # (B, n+1, D)
    u = torch.stack([s[1] for s in states], 1)
    u_x = u[:, 0]
    step_size = 1.0 / (u_x * u_x).sum(-1)  # h, (B,)
    w1 = block.fc1.weight
    grads = torch.einsum("bih,bd->bihd", (u[:, :-1] - u[:, 1:]) @ w1.T, u_x)  # ∇_W L_i = Δ_i, (B, n, H, D)
    steps = -step_size[:, None, None, None] * grads
    dW = torch.cat([torch.zeros_like(steps[:, :1]), steps.cumsum(1)], 1)  # W_i − W, (B, n+1, H, D)
    db2 = torch.zeros_like(z) if block.kind == "plain" else z - z[:, :1]
    with_context = torch.stack([block_output(block, torch.cat([h_full[:, :i], query], 1)) for i in range(n + 1)], 1)
    patched = torch.stack([patched_output(block, query, Update(dW[:, i], db2[:, i])) for i in range(n + 1)], 1)
    return ImplicitGD(dW, steps, with_context, patched)


@dataclass
class Verification:
    """Relative errors ‖patched − with context‖ / ‖with context‖ of each identity (Frobenius norms over the
    whole batch), ΔW's ranks and its largest σ₂/σ₁ (how far each ΔW is from rank 1), for prompts of ``dtype``."""

    errors: dict[str, float]
    ranks: dict[str, int]
    sv_ratios: dict[str, float] = None  # type: ignore[assignment]
    dtype: torch.dtype = torch.float64

    def worst(self) -> float:
        return max(self.errors.values())

    def worst_sv_ratio(self) -> float:
        return max(self.sv_ratios.values())


def _scaled(update: Update, scale: float) -> Update:
    return update if scale == 1.0 else Update(scale * update.dW, update.db2)


@torch.no_grad()
def verify(blocks: Sequence[nn.Module], h_full: Tensor, h_query: Tensor | None = None,
           scale: float = 1.0) -> Verification:
    """Check every identity of the module docstring on a stack of blocks and prompts ``h_full`` (B, T, D).

    ``h_query`` (B, 1, D) is the first block's input for the query alone (default: h_full's last token).
    Per block l (on the activations entering it): T_W(C, x) = T_{W+ΔW(C)}(x).  On block 0 also: the partial
    context Y = the first half of C, the bias form, and the implicit GD sequence (every prefix, and
    W_n − W = ΔW(C)).  Finally the query-only pass through all patched blocks.  Ranks use a tolerance of
    1000 machine epsilons relative to the largest singular value.  ``scale`` ≠ 1 multiplies every ΔW of the
    per-block checks (ΔW(C), ΔW(Y), bias form) by it: a perturbed identity, for negative controls.
    """
    rtol = 1000 * torch.finfo(h_full.dtype).eps
    errors, ranks, ratios = {}, {}, {}
    h, q0 = h_full, h_full[:, -1:] if h_query is None else h_query
    for l, block in enumerate(blocks):
        q = h[:, -1:] if l or h_query is None else h_query
        update = _scaled(implicit_update(block, h, q), scale)
        target = block_output(block, h)
        errors[f"block {l}: ΔW(C)"] = relative_error(patched_output(block, q, update), target)
        ranks[f"block {l}: ΔW(C)"] = int(update.rank(rtol).max())
        ratios[f"block {l}: ΔW(C)"] = float(update.sv_ratio().max())
        if l == 0:
            n = h.shape[1] - 1
            reduced = torch.cat([h[:, n // 2:-1], q], 1)  # C∖Y with Y the first half
            partial = _scaled(implicit_update(block, h, reduced), scale)
            errors["block 0: ΔW(Y), Y = first half of C"] = relative_error(patched_output(block, reduced, partial),
                                                                          target)
            ranks["block 0: ΔW(Y), Y = first half of C"] = int(partial.rank(rtol).max())
            ratios["block 0: ΔW(Y), Y = first half of C"] = float(partial.sv_ratio().max())
            db1 = torch.einsum("bhd,bd->bh", update.dW, query_state(block, q)[1])  # Δb₁ = W ΔA
            bias = patched_output(block, q, Update(torch.zeros_like(update.dW), update.db2), db1=db1)
            errors["block 0: bias form b + WΔA"] = relative_error(bias, target)
            path = implicit_gd(block, h)  # the query alone is h's last token here
            errors["block 0: implicit GD, every prefix"] = relative_error(path.patched, path.with_context)
            errors["block 0: implicit GD, W_n − W = ΔW(C)"] = relative_error(
                path.dW[:, -1], implicit_update(block, h, h[:, -1:]).dW)
            ranks["block 0: implicit GD, every prefix"] = max(
                int(Update(path.dW[:, i], path.patched[:, i]).rank(rtol).max()) for i in range(1, n + 1))
            ratios["block 0: implicit GD, every prefix"] = max(
                float(Update(path.dW[:, i], path.patched[:, i]).sv_ratio().max()) for i in range(1, n + 1))
        h = block(h)
    _, full, patched = patch_stack(blocks, h_full, q0)
    errors["all blocks patched, query only"] = relative_error(patched, full)
    return Verification(errors, ranks, ratios, h_full.dtype)


# ---------------------------------------------------------------------------- blocks of a trained Transformer
class _Dense:
    """x ↦ x W + b with one member's weight W (d_in, d_out); ``weight`` is Wᵀ (d_out, d_in), as in nn.Linear."""

    def __init__(self, w: Tensor, b: Tensor) -> None:
        self.w, self.b = w, b  # (d_in, d_out), (1, d_out)
        self.in_features = w.shape[0]

    @property
    def weight(self) -> Tensor:
        return self.w.T

    def __call__(self, x: Tensor) -> Tensor:
        return x @ self.w + self.b[0]


class TransformerBlockView:
    """Block ``index`` of a single-member :class:`~companion.core.transformer.Transformer` as a contextual block.

    Norm ``"none"`` reads as kind ``"skip"`` (z = h + Attn h) and norm ``"pre"`` as ``"preln"``
    (z = h + Attn(LN₁ h), u = LN₂ z); the MLP's W₁ of the paper is the transformer's ``w1`` transposed.
    """

    def __init__(self, model: nn.Module, index: int) -> None:
        cfg = model.cfg
        if model.n_members != 1:
            raise ValueError(f"contextual blocks need a single-member model, got n_members={model.n_members}")
        if cfg.norm not in ("none", "pre") or cfg.d_ff == 0:
            raise ValueError(f"ΔW needs MLP blocks with norm 'none' or 'pre'; got norm={cfg.norm!r}, d_ff={cfg.d_ff}")
        if not 0 <= index < cfg.n_layers:
            raise ValueError(f"block index must lie in [0, {cfg.n_layers}), got {index}")
        self.model, self.layer = model, model.layers[index]
        self.kind = "preln" if cfg.norm == "pre" else "skip"
        self.act = torch.relu if cfg.activation == "relu" else nn.functional.gelu
        self.fc1 = _Dense(self.layer.w1[0], self.layer.b1[0])
        self.fc2 = _Dense(self.layer.w2[0], self.layer.b2[0])

    def mixer(self, h: Tensor) -> Tensor:  # (B, T, D) -> (B, T, D)
        B, T, D = h.shape
        x = h.reshape(1, B * T, D)
        if self.kind == "preln":
            x_in = self.model.layer_norm(x, self.layer.ln1_g, self.layer.ln1_b)
            a = self.model.attention(self.layer, x_in, B, T, None)[0]
        else:
            a = self.model.attention(self.layer, x, B, T, None)[0]
        return (x + a).reshape(B, T, D)

    def mlp_input(self, z: Tensor) -> Tensor:
        if self.kind == "skip":
            return z
        return self.model.layer_norm(z.reshape(1, -1, z.shape[-1]), self.layer.ln2_g, self.layer.ln2_b).reshape(z.shape)

    def __call__(self, h: Tensor) -> Tensor:
        z = self.mixer(h)
        return z + self.fc2(self.act(self.fc1(self.mlp_input(z))))


def contextual_blocks(model: nn.Module) -> list[TransformerBlockView]:
    """Every block of a single-member Transformer as a contextual block."""
    return [TransformerBlockView(model, i) for i in range(model.cfg.n_layers)]


def embed(model: nn.Module, inputs: Tensor) -> Tensor:
    """The transformer's input to its first block, X^(1) (B, T, D), for continuous inputs (B, T, d_input)."""
    B, T = inputs.shape[:2]
    return model.embed(model.with_member_axis(inputs)).reshape(B, T, -1)


def readout(model: nn.Module, h: Tensor) -> Tensor:
    """The transformer's output (…, d_out) from its last hidden state h (…, D) (final LN for pre-LN)."""
    if model.cfg.norm == "pre":
        h = model.layer_norm(h.reshape(1, -1, h.shape[-1]), model.lnf_g, model.lnf_b).reshape(h.shape)
    return h @ model.w_out[0] + model.b_out[0, 0]
