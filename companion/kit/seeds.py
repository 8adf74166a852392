"""The one way randomness enters the package: an integer seed, turned into generators by one helper.

Package functions take ``seed: int`` (or a generator made here) and draw only from their own
generators; none of them seeds or draws from torch's or NumPy's global random state, so a run depends
on its seed alone, whatever ran before it.  Independent streams of one seed are numbered
(``stream``), e.g. one for the data and one for the initialisation::

    data_rng = numpy_rng(seed)            # the same draws as np.random.default_rng(seed)
    init = generator(seed, stream=1)      # an independent torch stream
"""

from __future__ import annotations

import numpy as np
import torch

STREAM_STRIDE = 1_000_003   # stream s of seed n is seeded n + s·STREAM_STRIDE: streams never meet for n < STRIDE


def _check(seed: int, stream: int) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be an integer ≥ 0, got {seed!r}")
    if isinstance(stream, bool) or not isinstance(stream, (int, np.integer)) or stream < 0:
        raise ValueError(f"stream must be an integer ≥ 0, got {stream!r}")
    return int(seed) + int(stream) * STREAM_STRIDE


def generator(seed: int, stream: int = 0) -> torch.Generator:
    """A CPU torch generator for stream ``stream`` of ``seed`` (stream 0: ``manual_seed(seed)``)."""
    return torch.Generator().manual_seed(_check(seed, stream))


def numpy_rng(seed: int, stream: int = 0) -> np.random.Generator:
    """A NumPy generator for stream ``stream`` of ``seed`` (stream 0: ``default_rng(seed)``)."""
    return np.random.default_rng(_check(seed, stream))


def active_seed() -> int:
    """The seed of this run (``COMPANION_SEED``, default 0): what notebooks and explorers start from."""
    from companion.kit.config import settings

    return settings().seed
