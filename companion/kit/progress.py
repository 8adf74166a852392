"""Progress bars: shown in notebooks and terminals, silent under CI (``CI``) or ``COMPANION_PROGRESS=0``."""

from __future__ import annotations

import os

from tqdm.auto import tqdm


def progress_enabled(requested: bool = True) -> bool:
    """Progress bars are shown unless disabled by argument, ``CI`` or ``COMPANION_PROGRESS=0``."""
    if not requested or os.environ.get("CI"):
        return False
    return os.environ.get("COMPANION_PROGRESS", "1") not in ("0", "false", "no")


def progress_bar(total: int, desc: str, requested: bool = True) -> tqdm:
    """A tqdm bar over ``total`` steps that leaves no trace when it closes."""
    return tqdm(total=total, desc=desc, disable=not progress_enabled(requested), mininterval=0.5, leave=False)
