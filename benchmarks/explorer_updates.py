"""How long a reader waits when moving each chapter's explorer in a kernel, on and off the precomputed grid.

For every explorer of :data:`companion.tools.precompute.EXPLORERS`, built as its notebook builds it (quick
profile, seed 0, this process's thread count) with an empty results cache, prints the seconds of:

* ``build``: the first, live computation at the explorer's defaults (it also checks that the committed grid
  was made by this code: :class:`companion.kit.grids.GridPictures`);
* ``on grid 1st / 2nd``: two moves to other points of the committed grid (served from its pictures);
* ``off grid 1st / 2nd``: two moves to a value between grid values, every other control back at its default
  (computed live; the cache is cold for both).

Targets (issue #17): on the grid < 1 s, off the grid < 2 s.  Wall-clock seconds (``time.perf_counter``).

Run: ``python benchmarks/explorer_updates.py [ch04 …]`` (or ``python -m companion bench``).
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import sys
import tempfile
from typing import Any
from unittest.mock import patch

from companion.kit import config
from companion.tools import catalog, precompute


def between(control: Any, lo: float, hi: float) -> float | None:
    """A value of ``control`` strictly between two grid values (geometric for a log slider), or None."""
    if hasattr(control, "base"):  # FloatLogSlider: its positions are base ** (min + k·step)
        exponent = round((math.log10(lo) + math.log10(hi)) / 2 / control.step) * control.step
        value = control.base ** exponent
    elif hasattr(control, "step") and hasattr(control, "min"):
        value = control.min + round(((lo + hi) / 2 - control.min) / control.step) * control.step
    else:
        return None
    return value if lo < value < hi and not math.isclose(value, lo) and not math.isclose(value, hi) else None


def off_grid(explorer: Any, spec: precompute.ExplorerSpec, which: int,
             defaults: dict[str, Any]) -> dict[str, Any] | None:
    """Controls at a point off the grid: one numeric control between two of its grid values (the ``which``-th
    gap counted from the end), the others at their ``defaults`` (where the explorer opened)."""
    for name, values in spec.grid.items():
        numbers = sorted(v for v in values if isinstance(v, (int, float)))
        gaps = list(zip(numbers, numbers[1:]))
        for lo, hi in reversed(gaps[: len(gaps) - which] if which < len(gaps) else []):
            value = between(explorer.controls[name], lo, hi)
            if value is not None:
                return {**defaults, name: type(values[0])(value)}
    return None


def changed(values: dict[str, Any] | None, defaults: dict[str, Any]) -> dict[str, Any] | None:
    """The controls of ``values`` that differ from ``defaults``."""
    return None if values is None else {k: v for k, v in values.items() if defaults.get(k) != v}


def main(names: list[str]) -> None:
    print(config.settings().describe())
    print(f"{'explorer':26} {'build':>6} {'on grid 1st':>12} {'2nd':>6} {'off grid 1st':>13} {'2nd':>6}  grid")
    for slug in [catalog.find(n).slug for n in names] or list(precompute.EXPLORERS):
        spec = precompute.EXPLORERS[slug]
        quiet = contextlib.redirect_stdout(io.StringIO())  # outside a kernel the pictures would print as text
        with tempfile.TemporaryDirectory() as cache, patch.dict(os.environ, {"COMPANION_CACHE": cache}), quiet:
            explorer = spec.build()
            build = explorer.seconds
            defaults = explorer.values()
            points = [values for _, values in spec.points() if values != {n: explorer.values()[n] for n in values}]
            on = [explorer.move(**points[-1]), explorer.move(**points[len(points) // 2])]
            served = explorer.pictures is not None and explorer.result is None
            off, moves = [], [off_grid(explorer, spec, which, defaults) for which in (0, 1)]
            for values in moves:
                off.append(explorer.move(**values) if values else float("nan"))
        print(f"{slug:26} {build:6.2f} {on[0]:12.2f} {on[1]:6.2f} {off[0]:13.2f} {off[1]:6.2f}  "
              f"{'pictures' if served else 'not used: computed live'}; off grid at {[changed(m, defaults) for m in moves]}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
