"""Modular arithmetic tables, the algorithmic data sets of the grokking experiments (Power et al. 2022; 图14.6).

An operation ∘ on Z_p (p prime) gives the table of every equation a ∘ b = c; the book's figure uses
modular division, c = a · b⁻¹ mod p with b ≠ 0 (b⁻¹ = b^{p−2} by Fermat's little theorem).  A random
fraction of the equations is the training set and the rest the test set; a network sees a and b as two
one-hot vectors side by side, (N, 2p), and predicts c among p classes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from companion.kit.seeds import numpy_rng

OPERATIONS = ("div", "add", "sub", "mul")


def is_prime(p: int) -> bool:
    """Whether ``p`` is a prime number (trial division; p is small here)."""
    return p >= 2 and all(p % q for q in range(2, int(p ** 0.5) + 1))


def table(p: int, op: str = "div") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every equation a ∘ b = c mod p, as three integer arrays (a, b, c); division skips b = 0."""
    if not is_prime(p):
        raise ValueError(f"p must be a prime, got {p}")
    a, b = (g.ravel() for g in np.meshgrid(np.arange(p), np.arange(p), indexing="ij"))
    if op == "div":
        keep = b != 0
        a, b = a[keep], b[keep]
        c = a * np.array([pow(int(v), p - 2, p) for v in b]) % p
    elif op == "add":
        c = (a + b) % p
    elif op == "sub":
        c = (a - b) % p
    elif op == "mul":
        c = a * b % p
    else:
        raise ValueError(f"unknown operation {op!r}; choose one of {', '.join(OPERATIONS)}")
    return a, b, c


@dataclass
class ModularData:
    """One-hot inputs [e_a, e_b] (N, 2p) and answers c (N,) of the training and the test equations."""

    p: int
    x: Tensor
    labels: Tensor
    x_test: Tensor
    labels_test: Tensor


def modular_data(p: int, op: str = "div", train_fraction: float = 0.5, *, seed: int,
                 dtype: torch.dtype = torch.float32) -> ModularData:
    """The table of ``op`` mod ``p`` split at random (from ``seed``) into a training fraction and the test rest."""
    if not 0 < train_fraction < 1:
        raise ValueError(f"train_fraction must lie in (0, 1), got {train_fraction}")
    a, b, c = table(p, op)
    order = numpy_rng(seed).permutation(len(c))
    n_train = int(round(train_fraction * len(c)))
    eye = torch.eye(p, dtype=dtype)
    x = torch.cat([eye[torch.as_tensor(a)], eye[torch.as_tensor(b)]], 1)  # (N, 2p)
    y = torch.as_tensor(c)
    tr, te = torch.as_tensor(order[:n_train]), torch.as_tensor(order[n_train:])
    return ModularData(p, x[tr], y[tr], x[te], y[te])
