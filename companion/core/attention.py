"""Looking inside a trained :class:`~companion.core.transformer.Transformer`: attention, masks, neurons (§12.7, §13.4).

* Attention operations of 图12.15: :func:`shift_score` (a position attends to its predecessor —
  移位, the key absorbs the anchor; :func:`anchor_top_ratio` says by how much the anchor wins) and
  :func:`broadcast_score` (the last position attends to the key — 广播, the answer travels to the
  output position).
* Masking after the softmax (图13.7): :func:`position_keep_mask` removes the attention paid to
  chosen positions in every layer; :func:`masked_last_outputs` returns the outputs of the last
  position under such a mask (for the PCA of 图13.8 and the cosine matrix of 图13.9).
* Condensation of the first-layer query weights (图13.10): :func:`neuron_cosine` is the cosine
  similarity (8.4) between the input-weight vectors of the neurons of W^{Q(1)} (the columns of W, through
  :func:`companion.core.neurons.cosine_similarity_matrix`), :func:`sorted_neuron_cosine` the same with
  aligned neurons grouped; :func:`condensation` is its mean absolute off-diagonal value (1 = all neurons
  aligned, ≈ 0 = random directions), :func:`grouped_share` the share of neurons that 图13.11 puts in a group
  (cosine > 0.7 with another neuron).
* PCA (图13.8, 图13.12): :func:`pca` projects rows on the leading principal components and
  :func:`explained_variance` gives their share of the variance (an ordered, nearly 1-D embedding
  of the numbers has a large share in two components).
* :func:`commutativity` — the fraction of sequences whose prediction does not change when the two
  anchors are swapped, f(x; c, d) = f(x; d, c) (§13.3).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from companion.core.anchor_tasks import AnchorData, swap_anchors
from companion.core.neurons import cosine_similarity_matrix, sorted_cosine_matrix
from companion.core.transformer import Transformer, last_token_logits


@torch.no_grad()
def attention_maps(model: Transformer, x: Tensor) -> list[np.ndarray]:
    """Attention of every layer on tokens ``x`` (N, T): a list of ([K,] N, H, T, T) arrays."""
    _, maps = model(x, return_attention=True)
    return [m.numpy() for m in maps]


def _gather(attn: np.ndarray, query: np.ndarray, key: np.ndarray) -> np.ndarray:
    """attn ([K,] N, H, T, T) → the weights attn[…, n, :, query[n], key[n]], shape ([K,] N, H)."""
    a = attn if attn.ndim == 5 else attn[None]
    n = np.arange(a.shape[1])
    out = np.transpose(a[:, n, :, query, key], (1, 0, 2))  # advanced indices first: (N, K, H) → (K, N, H)
    return out if attn.ndim == 5 else out[0]


def _check_positions(attn: np.ndarray, *positions: np.ndarray) -> None:
    if attn.ndim < 4:
        raise ValueError(f"attention must have shape ([K,] N, H, T, T), got {attn.shape}")
    T, N = attn.shape[-1], attn.shape[-4]
    for p in positions:
        if p.shape != (N,) or p.min() < 0 or p.max() >= T:
            raise ValueError(f"positions must be {N} integers in [0, {T}); got shape {p.shape}, "
                             f"range [{p.min()}, {p.max()}]")


def shift_score(attn: np.ndarray, key_pos: Tensor | np.ndarray) -> np.ndarray:
    """Mean weight with which the key position attends to the position before it (the anchor).

    ``attn`` is one layer's map ([K,] N, H, T, T); the best head counts.  Returns ([K],) values in [0, 1].
    """
    key_pos = np.asarray(key_pos)
    _check_positions(attn, key_pos, key_pos - 1)
    return _gather(attn, key_pos, key_pos - 1).mean(-2).max(-1)


def shift_contrast(attn: np.ndarray, key_pos: Tensor | np.ndarray) -> np.ndarray:
    """How much more the key attends to the anchor (i−1) than to any other earlier token (not itself).

    Ratio of the mean weight key→anchor to the mean weight key→j over earlier positions j < i−1,
    sequences with the key at position ≥ 2; best head.  A uniform causal map scores 1.  ([K],)
    """
    key_pos = np.asarray(key_pos)
    _check_positions(attn, key_pos, key_pos - 1)
    a = attn if attn.ndim == 5 else attn[None]
    rows = np.flatnonzero(key_pos >= 2)
    if rows.size == 0:
        raise ValueError("shift_contrast needs sequences whose key is at position ≥ 2")
    p = key_pos[rows]
    anchor = a[:, rows, :, p, p - 1]  # (N', K, H)
    T = a.shape[-1]
    before = np.arange(T)[None, :] < (p - 1)[:, None]  # (N', T) positions j < i−1
    at_key = a[:, rows, :, p, :]  # (N', K, H, T)
    others = (at_key * before[:, None, None, :]).sum(-1) / before.sum(1)[:, None, None]
    ratio = anchor.mean(0) / np.maximum(others.mean(0), 1e-12)  # (K, H)
    best = ratio.max(-1)
    return best if attn.ndim == 5 else best[0]


def _key_rows(attn: np.ndarray, key_pos: Tensor | np.ndarray, name: str) -> list[tuple[int, np.ndarray]]:
    """For each key position p ≥ 2: the key's mean attention row over its earlier tokens, (p, (K, H, p))."""
    key_pos = np.asarray(key_pos)
    _check_positions(attn, key_pos, key_pos - 1)
    a = attn if attn.ndim == 5 else attn[None]
    positions = [int(p) for p in np.unique(key_pos) if p >= 2]
    if not positions:
        raise ValueError(f"{name} needs sequences whose key is at position ≥ 2")
    return [(p, a[:, key_pos == p][:, :, :, p, :p].mean(1)) for p in positions]


def anchor_is_top(attn: np.ndarray, key_pos: Tensor | np.ndarray) -> np.ndarray:
    """Share of key positions i ≥ 2 at which the anchor (i−1) gets the largest mean weight among the
    tokens before the key (best head); 1 means a (possibly soft) shift at every position.  ([K],)"""
    tops = np.stack([(row.argmax(-1) == p - 1).any(-1) for p, row in _key_rows(attn, key_pos, "anchor_is_top")])
    share = tops.mean(0)  # (P, K) → (K,)
    return share if attn.ndim == 5 else share[0]


def anchor_top_ratio(attn: np.ndarray, key_pos: Tensor | np.ndarray) -> np.ndarray:
    """How clearly the anchor is the key's most attended earlier token, at the worst key position.

    For each key position i ≥ 2 and head: the mean weight key → anchor (i−1) divided by the largest mean
    weight key → j over the other earlier tokens j < i−1; best head; the minimum over positions.  It
    exceeds 1 exactly when :func:`anchor_is_top` is 1 (the anchor wins at every position), and says by how
    much.  ([K],)
    """
    ratios = [(row[..., p - 1] / np.maximum(row[..., :p - 1].max(-1), 1e-12)).max(-1)  # best head, (K,)
              for p, row in _key_rows(attn, key_pos, "anchor_top_ratio")]
    worst = np.stack(ratios).min(0)  # (K,)
    return worst if attn.ndim == 5 else worst[0]


def broadcast_score(attn: np.ndarray, key_pos: Tensor | np.ndarray) -> np.ndarray:
    """Mean weight with which the last position attends to the key position (best head), ([K],)."""
    key_pos = np.asarray(key_pos)
    last = np.full_like(key_pos, attn.shape[-1] - 1)
    _check_positions(attn, key_pos, last)
    return _gather(attn, last, key_pos).mean(-2).max(-1)


def previous_token_score(attn: np.ndarray) -> np.ndarray:
    """Mean weight of i → i−1 over all positions i ≥ 1 (a pure shift map scores 1), ([K],)."""
    T = attn.shape[-1]
    sub = attn[..., np.arange(1, T), np.arange(T - 1)]  # (…, N, H, T−1)
    return sub.mean(axis=(-1, -3)).max(-1)


def position_keep_mask(data: AnchorData, offsets: tuple[int, ...] = (0,)) -> Tensor:
    """Keep-mask (N, 1, 1, T) that removes all attention to positions key_pos + offset (图13.7).

    ``offsets=(0,)`` masks the key, ``(2,)`` the second anchor of the composite task.
    """
    N, T = data.x.shape
    keep = torch.ones(N, 1, 1, T)
    for off in offsets:
        pos = data.key_pos + off
        if bool((pos < 0).any() or (pos >= T).any()):
            raise ValueError(f"offset {off} points outside the sequence (length {T})")
        keep[torch.arange(N), 0, 0, pos] = 0.0
    return keep


@torch.no_grad()
def masked_last_outputs(model: Transformer, data: AnchorData, offsets: tuple[int, ...] | None) -> np.ndarray:
    """Last-position outputs (logits) ([K,] N, V) with attention to key_pos + offsets removed after the softmax."""
    keep = None if offsets is None else position_keep_mask(data, offsets)
    out = last_token_logits(model, data.x, chunk=len(data), attn_keep=keep).numpy()
    return out if model.ensemble else out[0]


def _neurons(w: Tensor | np.ndarray) -> np.ndarray:
    """The neurons of ``w`` (d_in, d_out) as rows (d_out, d_in): its columns, the input-weight vectors."""
    w = np.asarray(w, dtype=np.float64)
    if w.ndim != 2:
        raise ValueError(f"w must be a matrix (d_in, d_out), got shape {w.shape}")
    return w.T


def neuron_cosine(w: Tensor | np.ndarray) -> np.ndarray:
    """Cosine similarity (8.4) between the neurons' input-weight vectors of ``w`` (d_in, d_out): (d_out, d_out)."""
    return cosine_similarity_matrix(_neurons(w))


def sorted_neuron_cosine(w: Tensor | np.ndarray) -> np.ndarray:
    """:func:`neuron_cosine` with the neurons ordered by its leading eigenvector: aligned groups as blocks (图13.10)."""
    return sorted_cosine_matrix(_neurons(w))[0]


def condensation(w: Tensor | np.ndarray) -> float:
    """Mean |cos| between distinct neurons of ``w`` (d_in, d_out): 1 when all point one way (凝聚)."""
    c = np.abs(neuron_cosine(w))
    d = c.shape[0]
    return float((c.sum() - np.trace(c)) / (d * (d - 1)))


def grouped_share(w: Tensor | np.ndarray, above: float = 0.7) -> float:
    """Share of the neurons of ``w`` (d_in, d_out) whose cosine with at least one *other* neuron exceeds ``above``:
    the neurons 图13.11 groups (神经元按余弦相似度 > 0.7 分组); 0 for independent random directions in many
    dimensions, 1 when every neuron shares its direction with another."""
    c = neuron_cosine(w)
    np.fill_diagonal(c, -np.inf)
    return float((c.max(axis=1) > above).mean())


def pca(rows: np.ndarray, k: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Project centred ``rows`` (N, d) on their k leading principal components; returns (N, k) and the
    explained-variance ratios (k,)."""
    rows = np.asarray(rows, dtype=np.float64)
    if rows.ndim != 2 or not 1 <= k <= min(rows.shape):
        raise ValueError(f"pca needs a matrix (N, d) and 1 ≤ k ≤ min(N, d); got shape {rows.shape}, k={k}")
    centred = rows - rows.mean(0)
    _, s, vt = np.linalg.svd(centred, full_matrices=False)
    ratio = s**2 / max((s**2).sum(), 1e-300)
    return centred @ vt[:k].T, ratio[:k]


def explained_variance(rows: np.ndarray, k: int = 2) -> float:
    """Share of the variance of ``rows`` (N, d) in its k leading principal components."""
    return float(pca(rows, k)[1].sum())


@torch.no_grad()
def commutativity(model: Transformer, data: AnchorData) -> np.ndarray:
    """Fraction of sequences whose predicted token is unchanged when the two anchors are swapped, ([K],)."""
    a = last_token_logits(model, data.x).argmax(-1)
    b = last_token_logits(model, swap_anchors(data).x).argmax(-1)
    same = (a == b).float().mean(1).numpy()
    return same if model.ensemble else same[0]
