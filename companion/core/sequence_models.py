"""Baselines for next-token tasks: an LSTM and a fully connected net, as batched ensembles (图12.6).

Chapter 12 compares the transformer with an LSTM and a fully connected network (FNN) on the identity task
(§12.6.1, 图12.6).  Both models here have the interface of :class:`companion.core.transformer.Transformer`
that :func:`companion.core.transformer.fit_last_token` relies on, so all three architectures train through
the same engine with the same optimiser, schedule and loss:

* ``model(x, last_only=True)`` maps tokens ([K,] B, T) to logits ([K,] B, T', V) (T' = 1 with ``last_only``);
* every parameter carries a leading member axis K (``n_members``), so a grid of data sizes or seeds trains
  as one batched computation; ``ensemble`` says whether that axis is kept in the outputs;
* ``cfg.vocab_size`` is the size of the token table (and of the readout).

:class:`LSTM` — a token table, one LSTM layer (Hochreiter & Schmidhuber 1997; the gates i, f, g, o of
``torch.nn.LSTM``), a linear readout of the hidden state at each position:

    (i, f, g, o) = σ, σ, tanh, σ (x_t W_ih + h_{t−1} W_hh + b),  c_t = f ⊙ c_{t−1} + i ⊙ g,  h_t = o ⊙ tanh(c_t)

:class:`FNN` — the tokens' embeddings concatenated into one vector of length T·d (the net sees the whole
sequence at once, with no weight shared across positions), then ``depth`` ReLU layers and a readout; it only
predicts the last position (its outputs always have T' = 1).

Weights are drawn as in the transformer: N(0, (d_in^{−γ})²) with γ = 0.5 by default (token tables: d_in =
d_model), biases 0 (the LSTM's forget-gate bias 1, a common choice that keeps early memory).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from companion.core.transformer import Transformer, TransformerConfig
from companion.kit.seeds import generator as seeded_generator

ARCHITECTURES = ("transformer", "lstm", "fnn")


@dataclass(frozen=True)
class SequenceConfig:
    """Shape of a baseline: vocabulary, longest sequence, embedding width, hidden width and (FNN) depth."""

    vocab_size: int = 101
    max_len: int = 9
    d_model: int = 32
    hidden: int = 64
    depth: int = 2

    def __post_init__(self) -> None:
        for name in ("vocab_size", "max_len", "d_model", "hidden", "depth"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be ≥ 1, got {getattr(self, name)}")


class _Batched(nn.Module):
    """Shared plumbing: member axis, initialisation N(0, (d_in^{−γ})²), input checks."""

    def __init__(self, cfg: SequenceConfig, n_members: int | None, gamma: float,
                 generator: torch.Generator | None) -> None:
        super().__init__()
        if n_members is not None and n_members < 1:
            raise ValueError(f"n_members must be ≥ 1 or None, got {n_members}")
        if not gamma >= 0:
            raise ValueError(f"initialisation rate gamma must be ≥ 0, got {gamma}")
        self.cfg, self.ensemble = cfg, n_members is not None
        self.n_members, self.gamma = int(n_members or 1), float(gamma)
        self._g = generator if generator is not None else seeded_generator(0)

    def weight(self, d_in: int, d_out: int, fan: int | None = None) -> nn.Parameter:
        std = float(fan or d_in) ** (-self.gamma)
        return nn.Parameter(torch.randn(self.n_members, d_in, d_out, generator=self._g) * std)

    def zeros(self, *shape: int) -> nn.Parameter:
        return nn.Parameter(torch.zeros(self.n_members, *shape))

    def with_member_axis(self, x: Tensor) -> Tensor:
        """(B, T) → (K, B, T); a per-member batch (K, B, T) passes through."""
        if x.dtype not in (torch.int64, torch.int32):
            raise ValueError(f"token inputs must be integer tensors, got dtype {x.dtype}")
        if x.ndim == 2:
            x = x.unsqueeze(0).expand(self.n_members, *x.shape)
        if x.ndim != 3 or x.shape[0] != self.n_members:
            raise ValueError(f"input must have shape (B, T) or ({self.n_members}, B, T); got {tuple(x.shape)}")
        if x.shape[2] > self.cfg.max_len:
            raise ValueError(f"sequence length {x.shape[2]} exceeds max_len={self.cfg.max_len}")
        return x

    def embed(self, x: Tensor) -> Tensor:
        """Token table lookup per member, as one-hot tokens times W^em (12.2): (K, B, T) → (K, B, T, d)."""
        K, B, T = x.shape
        one_hot = F.one_hot(x.reshape(K, B * T), self.cfg.vocab_size).to(self.w_em.dtype)  # (K, B·T, V)
        return torch.bmm(one_hot, self.w_em).reshape(K, B, T, -1)

    def readout(self, h: Tensor) -> Tensor:
        """(K, B, T, h) → logits, without the member axis for a single model."""
        K, B, T, _ = h.shape
        logits = torch.baddbmm(self.b_out, h.reshape(K, B * T, -1), self.w_out).reshape(K, B, T, -1)
        return logits if self.ensemble else logits[0]

    def n_parameters(self) -> int:
        """Parameters of one member."""
        return sum(p[0].numel() for p in self.parameters())


class LSTM(_Batched):
    """K one-layer LSTMs with a token table and a per-position readout (see the module docstring)."""

    def __init__(self, cfg: SequenceConfig, n_members: int | None = None, gamma: float = 0.5,
                 generator: torch.Generator | None = None) -> None:
        super().__init__(cfg, n_members, gamma, generator)
        d, h = cfg.d_model, cfg.hidden
        self.w_em = self.weight(cfg.vocab_size, d, fan=d)  # (K, V, d)
        self.w_ih, self.w_hh = self.weight(d, 4 * h), self.weight(h, 4 * h)  # gates i, f, g, o
        bias = torch.zeros(self.n_members, 1, 4 * h)
        bias[..., h:2 * h] = 1.0  # forget gate
        self.b = nn.Parameter(bias)
        self.w_out, self.b_out = self.weight(h, cfg.vocab_size), self.zeros(1, cfg.vocab_size)

    def forward(self, x: Tensor, *, last_only: bool = False) -> Tensor:
        """Logits ([K,] B, T, V), or ([K,] B, 1, V) for the last position only."""
        x = self.with_member_axis(x)
        K, B, T = x.shape
        e = self.embed(x)  # (K, B, T, d)
        pre = torch.baddbmm(self.b, e.reshape(K, B * T, -1), self.w_ih).reshape(K, B, T, -1)  # (K, B, T, 4h)
        h = c = torch.zeros(K, B, self.cfg.hidden, device=x.device)
        out = []
        for t in range(T):
            i, f, g, o = (pre[:, :, t] + torch.bmm(h, self.w_hh)).chunk(4, dim=-1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)  # (K, B, h)
            out.append(h)
        hs = h[:, :, None] if last_only else torch.stack(out, dim=2)  # (K, B, T', h)
        return self.readout(hs)


class FNN(_Batched):
    """K fully connected nets on the concatenated embeddings of the whole sequence (last position only)."""

    def __init__(self, cfg: SequenceConfig, n_members: int | None = None, gamma: float = 0.5,
                 generator: torch.Generator | None = None) -> None:
        super().__init__(cfg, n_members, gamma, generator)
        d, h = cfg.d_model, cfg.hidden
        self.w_em = self.weight(cfg.vocab_size, d, fan=d)
        widths = [cfg.max_len * d] + [h] * cfg.depth
        self.ws = nn.ParameterList([self.weight(a, b) for a, b in zip(widths[:-1], widths[1:])])
        self.bs = nn.ParameterList([self.zeros(1, b) for b in widths[1:]])
        self.w_out, self.b_out = self.weight(h, cfg.vocab_size), self.zeros(1, cfg.vocab_size)

    def forward(self, x: Tensor, *, last_only: bool = True) -> Tensor:
        """Logits ([K,] B, 1, V) of the last position (the net predicts nothing else); ``last_only`` is ignored."""
        x = self.with_member_axis(x)
        K, B, T = x.shape
        if T != self.cfg.max_len:
            raise ValueError(f"the FNN reads whole sequences of length {self.cfg.max_len}, got {T}")
        z = self.embed(x).reshape(K, B, -1)  # (K, B, T·d)
        for w, b in zip(self.ws, self.bs):
            z = torch.relu(torch.baddbmm(b, z, w))  # (K, B, h)
        return self.readout(z[:, :, None])


def make_model(arch: str, *, vocab_size: int, max_len: int, d_model: int, n_members: int,
               gamma: float | Sequence[float] = 0.5, generator: torch.Generator, n_layers: int = 2,
               n_heads: int = 1, hidden: int | None = None) -> nn.Module:
    """One of :data:`ARCHITECTURES` as an ensemble of ``n_members``: the transformer of
    :mod:`companion.core.transformer` (post-LN, d_ff = 4·d_model), or an :class:`LSTM` (hidden 2·d_model
    unless given) or an :class:`FNN` (``n_layers`` hidden layers of width 8·d_model unless given)."""
    if arch == "transformer":
        cfg = TransformerConfig(vocab_size=vocab_size, max_len=max_len, d_model=d_model, n_layers=n_layers,
                                n_heads=n_heads, d_ff=4 * d_model)
        return Transformer(cfg, n_members=n_members, gamma=gamma, generator=generator)
    if isinstance(gamma, Sequence):
        raise ValueError(f"the {arch} baseline takes one initialisation rate, got {gamma}")
    if arch == "lstm":
        cfg = SequenceConfig(vocab_size, max_len, d_model, hidden or 2 * d_model, 1)
        return LSTM(cfg, n_members=n_members, gamma=float(gamma), generator=generator)
    if arch == "fnn":
        cfg = SequenceConfig(vocab_size, max_len, d_model, hidden or 8 * d_model, n_layers)
        return FNN(cfg, n_members=n_members, gamma=float(gamma), generator=generator)
    raise ValueError(f"unknown architecture {arch!r}; choose one of {', '.join(ARCHITECTURES)}")
