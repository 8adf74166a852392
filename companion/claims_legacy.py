"""Migration shim for the old boolean claims: deleted once every chapter declares :class:`ClaimSpec` checks."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from .claims import ClaimSpec, show, threshold

_COUNT: dict[str, int] = {}


def claim(figure: str, text: str, *, passed: bool | np.bool_, **measured: Any) -> None:
    """An old ``claim(figure, text, passed=...)`` call, shown as a one-condition verdict (never raises)."""
    chapter = os.environ.get("COMPANION_CHAPTER", "ch00")[:4] or "ch00"
    n = _COUNT[figure] = _COUNT.get(figure, 0) + 1
    spec = ClaimSpec(f"{chapter}.legacy-{figure}-{n}", figure, text)
    show(spec.judge(threshold("passed", float(bool(passed)), ">=", 1.0), **measured))
