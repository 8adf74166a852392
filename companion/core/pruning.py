"""Magnitude pruning and weight masks for batched networks (the lottery-ticket experiments, Frankle & Carbin 2019).

A mask is a 0/1 tensor of a weight's shape.  :func:`prune_smallest` removes, in every member separately, the
fraction ``rate`` of a layer's *remaining* weights with the smallest score (ties broken by position): the
magnitude |w| of the trained weights, or random numbers for the random-pruning control.  After r rounds a
fraction (1 − rate)^r is left.  Biases are never pruned.  :func:`apply_masks` sets the pruned weights to
zero in place; re-applied after every optimiser step, it keeps a subnetwork fixed while it trains.
:func:`width_masks` builds the masks that make the members of one two-layer ensemble networks of different widths
(a width sweep trained as one batched computation, the double descent of 图14.8).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor


def prune_smallest(score: Tensor, mask: Tensor, rate: float) -> Tensor:
    """A new mask: ``mask`` (K, …) minus, per member, ``rate`` of its remaining entries with the smallest ``score``
    (|w| for magnitude pruning; random numbers for the random-pruning control).

    Every member must have the same number of remaining entries (members pruned in lockstep)."""
    if not 0 <= rate < 1:
        raise ValueError(f"rate must lie in [0, 1), got {rate}")
    K = score.shape[0]
    alive = mask.reshape(K, -1).sum(1)
    if not torch.all(alive == alive[0]):
        raise ValueError(f"members have different numbers of remaining weights: {alive.tolist()}")
    n_prune = int(round(rate * float(alive[0])))
    flat_mask = mask.reshape(K, -1).clone()
    if n_prune == 0:
        return flat_mask.reshape(mask.shape)
    score = torch.where(flat_mask > 0, score.detach().reshape(K, -1), torch.full_like(flat_mask, float("inf")))
    order = torch.argsort(score, dim=1, stable=True)[:, :n_prune]  # (K, n_prune): the smallest remaining
    flat_mask.scatter_(1, order, 0.0)
    return flat_mask.reshape(mask.shape)


def apply_masks(weights: Sequence[Tensor], masks: Sequence[Tensor]) -> None:
    """Zero the pruned entries of every weight in place (call without gradient tracking); a mask kept on the CPU
    reaches a weight on another device (a GPU) as a copy."""
    for w, m in zip(weights, masks):
        w.mul_(m.to(w.device))


def width_masks(layer_widths: Sequence[int], hidden: Sequence[int]) -> list[Tensor]:
    """Masks of a two-layer :class:`~companion.core.nets.BatchedMLP` [d_in, H, d_out] that leave member k only its
    first ``hidden[k]`` hidden units: member k is then a network of width hidden[k] padded to H (its padding units
    have no input and no output weights; their biases reach nothing).  Shapes (K, d_in, H) and (K, H, d_out)."""
    if len(layer_widths) != 3:
        raise ValueError(f"width masks are for two-layer nets [d_in, H, d_out], got layer widths {list(layer_widths)}")
    d_in, H, d_out = (int(w) for w in layer_widths)
    units = torch.as_tensor(list(hidden))
    if units.ndim != 1 or len(units) == 0 or int(units.min()) < 1 or int(units.max()) > H:
        raise ValueError(f"hidden widths must lie in [1, {H}], one per member; got {list(hidden)}")
    keep = (torch.arange(H)[None, :] < units[:, None]).float()  # (K, H)
    K = len(units)
    return [keep[:, None, :].expand(K, d_in, H).clone(), keep[:, :, None].expand(K, H, d_out).clone()]


def remaining(masks: Sequence[Tensor]) -> float:
    """Fraction of the weights of member 0 that are not pruned."""
    kept = sum(float(m[0].sum()) for m in masks)
    return kept / sum(m[0].numel() for m in masks)
