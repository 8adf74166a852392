"""Datasets that ship with the installed packages (no download): scikit-learn's 8×8 digits.

The book's MNIST experiments run offline on the 1,797 bundled 8×8 digit images (d = 64).  One loader
serves every chapter; a chapter adds what its model needs (a bias coordinate, one-hot targets, a scalar
regression target) from the returned :class:`Digits`.
"""

from __future__ import annotations

import functools
import importlib.util
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from companion.kit.seeds import numpy_rng

N_DIGITS = 1797


@dataclass
class Digits:
    """Inputs x (n, 64) and labels (n,) 0–9 for training; the same for the test split (possibly empty)."""

    x: Tensor
    labels: Tensor
    x_test: Tensor
    labels_test: Tensor

    def one_hot(self, test: bool = False) -> Tensor:
        """One-hot targets (n, 10) of the training (or test) labels, in the inputs' dtype."""
        labels = self.labels_test if test else self.labels
        return torch.nn.functional.one_hot(labels, 10).to(self.x.dtype)


@functools.lru_cache(maxsize=1)
def bundled_digits() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's 1797 digits, images (1797, 64) with pixels 0–16 and labels (1797,): what
    ``sklearn.datasets.load_digits(return_X_y=True)`` returns, read from the file it reads without importing
    scikit-learn (≈ 2.5 s of every chapter's start that uses the digits; a test checks both agree)."""
    spec = importlib.util.find_spec("sklearn")
    folders = [] if spec is None else list(spec.submodule_search_locations or [])
    path = next((Path(f) / "datasets" / "data" / "digits.csv.gz" for f in folders
                 if (Path(f) / "datasets" / "data" / "digits.csv.gz").exists()), None)
    if path is None:  # another layout of scikit-learn: ask it
        from sklearn.datasets import load_digits

        return load_digits(return_X_y=True)
    table = np.loadtxt(path, delimiter=",")
    return table[:, :-1], table[:, -1].astype(int)


def digits(n_train: int, n_test: int | None = 0, *, seed: int | None = None, standardise: bool = False,
           dtype: torch.dtype = torch.float32) -> Digits:
    """The bundled digits, split into ``n_train`` training and ``n_test`` test images.

    Args:
        n_train, n_test: sizes of the two splits (``n_test=None``: every remaining image).
        seed: ``None`` takes the images in the file's order; an integer takes them in the order of a
            random permutation drawn from that seed.
        standardise: ``False`` scales pixels to [0, 1] (÷16); ``True`` standardises each pixel with the
            training split's mean and standard deviation (constant pixels stay 0).
    """
    rest = N_DIGITS - n_train
    n_test = rest if n_test is None else n_test
    if not 1 <= n_train <= N_DIGITS or not 0 <= n_test <= rest:
        raise ValueError(f"need 1 ≤ n_train ≤ {N_DIGITS} and 0 ≤ n_test ≤ {N_DIGITS} − n_train; "
                         f"got n_train={n_train}, n_test={n_test}")
    images, labels = bundled_digits()
    order = np.arange(N_DIGITS) if seed is None else numpy_rng(seed).permutation(N_DIGITS)
    x = torch.as_tensor(images[order], dtype=dtype)
    y = torch.as_tensor(labels[order])
    if standardise:
        mean, std = x[:n_train].mean(0), x[:n_train].std(0)
        x = (x - mean) / torch.where(std > 0, std, torch.ones_like(std))
    else:
        x = x / 16.0
    train, test = slice(0, n_train), slice(n_train, n_train + n_test)
    return Digits(x[train], y[train], x[test], y[test])
