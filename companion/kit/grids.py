"""Precomputed explorer grids: where they live, how a result is fingerprinted, how a point is found.

``python -m companion precompute`` (:mod:`companion.tools.precompute`) samples each chapter's
:class:`~companion.kit.widgets.Explorer` on a grid of control values and commits, per chapter, one picture per
point and ``explorers/<notebook>/grid.json``.  Two readers use them: the book site (sliders over the pictures,
no kernel) and a live explorer in a kernel, which shows the committed picture instead of recomputing when its
controls sit on the grid — after checking that its own first result has a fingerprint the grid recorded for
the defaults (computed with one thread, and with a notebook's default threads where those round differently),
i.e. that the grid was made by this code, with this seed and profile.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

GRID_DIR = Path(__file__).resolve().parents[2] / "explorers"
FINGERPRINT_SIZE = 64  # summary numbers kept per result


def _leaves(value: Any, depth: int = 0) -> Iterator[np.ndarray]:
    """The numeric arrays inside a result, in a fixed order (mappings by key, dataclasses by field)."""
    if depth > 6 or value is None or isinstance(value, (str, bytes, bool)):
        return
    if isinstance(value, (int, float, np.number)):
        yield np.asarray([float(value)])
    elif isinstance(value, np.ndarray) and value.dtype.kind in "fiu":
        yield value.astype(np.float64).ravel()
    elif type(value).__module__.startswith("torch") and hasattr(value, "detach") and hasattr(value, "numpy"):
        if not value.dtype.is_complex and str(value.dtype) != "torch.bool":
            yield value.detach().double().cpu().numpy().ravel()
    elif isinstance(value, Mapping):
        for key in sorted(value, key=str):
            yield from _leaves(value[key], depth + 1)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from _leaves(getattr(value, f.name), depth + 1)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _leaves(item, depth + 1)


def fingerprint(result: Any) -> list[float]:
    """Summary numbers of an explorer's result: per numeric array (in a fixed order) its mean and mean absolute
    value over the finite entries and its count of non-finite ones; the first :data:`FINGERPRINT_SIZE`."""
    numbers: list[float] = []
    for leaf in _leaves(result):
        finite = leaf[np.isfinite(leaf)]
        numbers += [float(finite.mean()) if finite.size else 0.0, float(np.abs(finite).mean()) if finite.size else 0.0,
                    float(leaf.size - finite.size)]
        if len(numbers) >= FINGERPRINT_SIZE:
            break
    return [round(v, 10) for v in numbers[:FINGERPRINT_SIZE]]


def same_fingerprint(a: Sequence[float], b: Sequence[float], rtol: float = 1e-3) -> bool:
    """Whether two fingerprints agree (each number within ``rtol`` of the larger magnitude, or 1e-9)."""
    return len(a) == len(b) and all(math.isclose(x, y, rel_tol=rtol, abs_tol=1e-9) for x, y in zip(a, b))


def point_key(index: Sequence[int]) -> str:
    """The key of a grid point: its value indices, "2,0,1" (the page's script builds the same)."""
    return ",".join(str(i) for i in index)


def read_grid(slug: str, folder: Path | None = None) -> dict | None:
    """The committed ``grid.json`` of a chapter's explorer, or None."""
    path = (GRID_DIR if folder is None else folder) / slug / "grid.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def grid_titled(title: str, root: Path | None = None) -> dict | None:
    """The committed, complete grid of the explorer called ``title`` (whatever seed or code made it), or None."""
    root = GRID_DIR if root is None else root
    for path in sorted(root.glob("*/grid.json")) if root.exists() else ():
        grid = json.loads(path.read_text(encoding="utf-8"))
        if grid.get("title") == title and grid.get("complete"):
            return grid
    return None


def value_text(value: Any) -> str:
    """A control value as the explorers print it: floats in ``%g`` (0.001, 1e-05), anything else as is."""
    return f"{value:g}" if isinstance(value, float) else str(value)


def applies_when(grid: Mapping[str, Any], name: str, language: str | None = None) -> tuple[dict[str, list[Any]], str]:
    """Where control ``name`` of an explorer changes its picture, as the grid records it (``grid["applies"]``: found
    from the committed pictures by :func:`companion.tools.precompute.when_controls_apply`): the other control and its
    values at which it does, ``{"kind": ["fourier"]}``, and the note saying so in ``language`` ("applies when
    model = fourier"); ``({}, "")`` for a control that always does."""
    from companion.kit.i18n import tr

    condition = grid.get("applies", {}).get(name, {})
    if not condition:
        return {}, ""
    (other, allowed), = condition.items()
    shown = ", ".join(value_text(v) for v in allowed)
    words = f"{tr(grid['controls'][other]['label'], language)} " + (f"= {shown}" if len(allowed) == 1 else f"∈ {{{shown}}}")
    return {other: list(allowed)}, tr("applies when {condition}", language).format(condition=words)


def same_value(a: Any, b: Any) -> bool:
    """Control values compared as a slider holds them: numbers to 1e-6 (a log slider's 10^-3 is 0.001)."""
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) | isinstance(b, bool):
        return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-12)
    return a == b


class GridPictures:
    """The committed pictures of one explorer, looked up by control values (see the module docstring)."""

    def __init__(self, folder: Path, grid: dict) -> None:
        self.folder, self.grid = folder, grid
        self.names = list(grid["controls"])

    @classmethod
    def matching(cls, title: str, defaults: Mapping[str, Any], result: Any,
                 root: Path | None = None) -> GridPictures | None:
        """The grid made for the explorer called ``title`` whose defaults and default result are these; or None
        (no grid, or one made by other code, another seed or another profile)."""
        root = GRID_DIR if root is None else root
        for path in sorted(root.glob("*/grid.json")) if root.exists() else ():
            grid = json.loads(path.read_text(encoding="utf-8"))
            if grid.get("title") != title or not grid.get("complete"):
                continue
            same_defaults = set(grid["defaults"]) == set(defaults) and all(
                same_value(grid["defaults"][n], v) for n, v in defaults.items())
            first = fingerprint(result)
            if same_defaults and any(same_fingerprint(first, known) for known in grid.get("default_fingerprints", [])):
                return cls(path.parent, grid)
        return None

    def picture(self, values: Mapping[str, Any]) -> Path | None:
        """The picture for ``values``: every grid control on one of its grid values, the others at their defaults."""
        for name, value in values.items():
            if name not in self.grid["controls"] and not same_value(value, self.grid["defaults"].get(name)):
                return None
        for point in self.grid["points"]:
            if all(same_value(point["values"][n], values[n]) for n in self.names):
                return self.folder / point["file"]
        return None
