"""Kernel-free explorers: each chapter's explorer sampled on a grid, for the book site.

A chapter's explorer (:class:`companion.kit.widgets.Explorer`) needs a running kernel.  For readers of the
site without one, ``python -m companion precompute [ch04 …]`` builds the explorer as its notebook does
(quick profile, seed 0, one torch thread: :func:`pinned_settings`, whatever the environment says), sets it to every point of the grid in :data:`EXPLORERS`, and
writes into ``explorers/<notebook>/``:

* one PNG per grid point, drawn by the explorer's own ``draw`` function (nothing is drawn twice) at :data:`DPI`,
  twice the density it is shown at, and
* ``grid.json``: the controls and their grid values, the defaults, and per point its values, its file and a
  *fingerprint* of the computed result (:func:`fingerprint`: a few summary numbers of every array in it); and
  ``applies``: for a control that changes nothing at some settings of the others (every one of its values gives
  the same picture there, as the Fourier σ of ch05 for a model without Fourier features), the values of the other
  control at which it does (:func:`when_controls_apply`) — the site disables it elsewhere, with a note.

The site build (:mod:`companion.tools.site`) replaces the empty widget output of the explorer's cell by
sliders and menus over the grid that swap the pictures in the browser (``book/_static/explorer.js``): no
kernel, no network, nothing trained at build time.  The grid files are committed.  ``grid.json`` records the
digest of the code that made (or last checked) every point: the explorer's module and every ``companion`` module
it reaches (:func:`companion.kit.cache.code_digest`).  A test fails when that code has changed since, until
``python -m companion precompute --check chNN`` computes and draws every point again, writes anew the points
whose fingerprint or picture moved and records the new digest; another test recomputes a point chosen at random, so a grid that
no longer matches the code is caught even where the digest is silent (another torch, another machine).
An interrupted ``precompute`` resumes: finished points are kept (each is written whole, picture first), and
``grid.json`` is rewritten after every point.
"""

from __future__ import annotations

import hashlib
import importlib
import io
import itertools
import json
import os
import tempfile
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from unittest.mock import patch
from typing import Any

import numpy as np

from companion.kit.cache import code_digest
from companion.kit.grids import GRID_DIR, fingerprint, point_key, same_fingerprint
from companion.tools import catalog
from companion.tools.robustness import machine_words

#: The pictures are shown at this many CSS pixels per inch of the figure (a picture of a 11-inch-wide figure is 880 CSS
#: pixels wide) ...
DISPLAY_DPI = 80
#: ... and drawn at twice as many pixels, sharp on a high-density screen, on a projector and when enlarged (``grid.json``
#: records it: the site shows a picture at its width × DISPLAY_DPI / dpi).
DPI = 2 * DISPLAY_DPI


@dataclass(frozen=True)
class ExplorerSpec:
    """How a chapter's notebook builds its explorer, and the grid of values the site offers.

    ``factory`` is "module:function"; ``kwargs`` are the arguments the notebook passes in the quick profile
    (seed 0); ``grid`` maps control names to the values precomputed (the other controls keep their defaults).
    """

    factory: str
    grid: Mapping[str, Sequence[Any]]
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    def build(self) -> Any:
        module, name = self.factory.split(":")
        return getattr(importlib.import_module(module), name)(**self.kwargs)

    def code(self) -> str | None:
        """The digest of the code that computes and draws the pictures: the factory's module and every
        ``companion`` module it reaches (:func:`companion.kit.cache.code_digest`)."""
        return code_digest(self.factory.split(":")[0])

    def points(self) -> list[tuple[tuple[int, ...], dict[str, Any]]]:
        """Every combination of the grid values with its indices, in a fixed order (the first control varies
        slowest)."""
        names = list(self.grid)
        return [(index, {n: self.grid[n][i] for n, i in zip(names, index)})
                for index in itertools.product(*(range(len(self.grid[n])) for n in names))]


E = "companion.experiments."
EXPLORERS: dict[str, ExplorerSpec] = {
    "ch04_frequency_principle": ExplorerSpec(
        E + "ch04_frequency:make_explorer",
        {"ks": ["1, 3, 5", "1, 5, 9", "2, 8, 14"], "depth": [1, 2, 4], "lr": [1e-3, 5e-3, 2e-2]}),
    "ch05_multiscale_networks": ExplorerSpec(
        E + "ch05_multiscale:make_explorer",
        {"kind": ["plain", "mscale", "fourier"], "sigma": [1.0, 10.0, 100.0], "steps": [200, 500, 1500]}),
    "ch06_frequency_mechanism": ExplorerSpec(
        E + "ch06_mechanism:make_explorer",
        {"init_std": [0.03, 0.1, 0.3, 1.0, 3.0], "act": ["tanh", "relu", "ricker"], "loss": ["mse", "mse+grad"]}),
    "ch07_phase_diagram": ExplorerSpec(
        E + "ch07_phase:make_explorer",
        {"gamma": [0.5, 1.0, 1.5, 2.0, 2.5], "gamma_prime": [-0.5, 0.0, 0.5, 1.0]}, {"seed": 0}),
    "ch08_condensation": ExplorerSpec(
        E + "ch08_condensation:make_explorer",
        {"init_std": [1e-4, 1e-3, 1e-2, 1e-1, 1.0], "act": ["relu", "tanh", "xtanh"], "t": [0.0, 150.0, 300.0, 600.0]},
        {"seed": 0, "steps": 12_000}),
    "ch09_embedding_principle": ExplorerSpec(
        E + "ch09_embedding:make_explorer",
        {"init_std": [1e-4, 1e-3, 1e-2, 1e-1], "width": [2, 10, 50], "alpha": [-0.5, 0.5, 1.5]}, {"seed": 0}),
    "ch10_optimistic_estimate": ExplorerSpec(
        E + "ch10_estimate:make_explorer",
        {"init_std": [1e-6, 1e-3, 1e-1, 1.0], "rank": [1, 2, 3]}, {"seed": 0}),
    "ch11_flatness": ExplorerSpec(
        E + "ch11_flatness:make_explorer",
        {"eta": [0.05, 0.1, 0.25, 0.5], "batch_size": [8, 32, 128], "keep": [1.0, 0.7]}, {"seed": 0}),
    "ch12_anchor_functions": ExplorerSpec(
        E + "ch12_anchors:make_explorer",
        {"task": ["identity", "reading", "statistical"], "depth": [1, 2, 4], "steps": [200, 500, 1000]},
        {"seed": 0}),
    "ch12b_composite_tasks": ExplorerSpec(
        E + "ch12b_composite:make_explorer",
        {"split": ["anchor", "key_range"], "weight_decay": [0.01, 0.1, 0.4, 1.0], "steps": [300, 600, 1000]}, {"seed": 0}),
    "ch13_complexity_control": ExplorerSpec(
        E + "ch13_complexity:make_explorer",
        {"gamma": [0.2, 0.5, 0.8, 1.1, 1.4], "lam": [0.001, 0.01, 0.1], "steps": [100, 1000]}, {"seed": 0}),
    "ch14_more_phenomena": ExplorerSpec(
        E + "ch14_phenomena:make_explorer",
        {"k": [1, 2, 4, 8, 16], "noise": [0.0, 0.5, 1.0], "depth": [1, 2]}, {"steps": 600, "seed": 0}),
    "ch15_pinns": ExplorerSpec(
        E + "ch15_pinns:make_explorer",
        {"method": ["pinn", "ritz", "jacobi", "hybrid"], "k_high": [8.0, 24.0, 48.0], "width": [20, 50, 200]}),
}


def spec_for(name: str) -> tuple[str, ExplorerSpec]:
    """The notebook slug and explorer spec of a chapter name or prefix ("ch04")."""
    slug = catalog.find(name).slug
    if slug not in EXPLORERS:
        raise ValueError(f"{slug} has no kernel-free explorer; these do: {', '.join(EXPLORERS)}")
    return slug, EXPLORERS[slug]


# ------------------------------------------------------------------------------------------ precompute
def _png(draw: Callable[[Any, Any], None], result: Any, figsize: tuple[float, float]) -> bytes:
    """The explorer's figure for ``result`` as an optimised 256-colour PNG."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    from PIL import Image

    fig = plt.figure(figsize=figsize, layout="constrained")
    try:
        draw(result, fig)
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=DPI)
    finally:
        plt.close(fig)
    image = Image.open(io.BytesIO(buffer.getvalue())).convert("RGB").quantize(colors=256)
    out = io.BytesIO()
    image.save(out, format="png", optimize=True)
    return out.getvalue()


def _picture_digests(grid: dict, folder: Path) -> dict[str, str]:
    return {p["key"]: hashlib.sha256((folder / p["file"]).read_bytes()).hexdigest() for p in grid["points"]}


def when_controls_apply(grid: dict, folder: Path) -> dict[str, dict[str, list[Any]]]:
    """Where each control of a grid (``grid.json`` and its pictures in ``folder``) does something: for a control
    that is *inert* at some settings of the others — all its values give byte-identical pictures there — the one
    other control and its values at which it is not, ``{"sigma": {"kind": ["fourier"]}}``; controls that change
    the picture everywhere are left out.  A control whose inert settings are not those of one other control's values
    raises a ValueError naming them (the site could not say when it applies)."""
    names = list(grid["controls"])
    sizes = [len(grid["controls"][n]["values"]) for n in names]
    digest = _picture_digests(grid, folder)
    found: dict[str, dict[str, list[Any]]] = {}
    for c, name in enumerate(names):
        def inert(index: tuple[int, ...]) -> bool:
            return len({digest[point_key(index[:c] + (v,) + index[c + 1:])] for v in range(sizes[c])}) == 1

        dead = {index for index in itertools.product(*(range(n) for n in sizes)) if index[c] == 0 and inert(index)}
        if not dead:
            continue
        for o, other in enumerate(names):
            applies = sorted({index[o] for index in itertools.product(*(range(n) for n in sizes))
                              if index[c] == 0 and index not in dead})
            if o != c and applies and all((index[o] in applies) != (index in dead)
                                          for index in itertools.product(*(range(n) for n in sizes)) if index[c] == 0):
                found[name] = {other: [grid["controls"][other]["values"][i] for i in applies]}
                break
        else:
            settings = [{n: grid["controls"][n]["values"][i] for n, i in zip(names, index) if n != name}
                        for index in sorted(dead)]
            raise ValueError(f"{grid['chapter']}: {name} changes no picture at {settings[:4]} (of {len(settings)}), "
                             f"which no one other control's values single out: change the grid or the explorer")
    return found


def _jsonable(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def nearest_index(values: Sequence[Any], default: Any) -> int:
    """The grid value closest to a control's default (the page's starting point)."""
    if default in values:
        return list(values).index(default)
    if isinstance(default, (int, float)) and all(isinstance(v, (int, float)) for v in values):
        return min(range(len(values)), key=lambda i: abs(values[i] - default))
    return 0


def _write_json(path: Path, data: dict) -> None:
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    os.replace(tmp, path)  # never a half-written grid.json


PINNED = {"COMPANION_PROFILE": "quick", "COMPANION_SEED": "0", "COMPANION_THREADS": "1", "COMPANION_LANG": "en"}


@contextmanager
def pinned_settings(one_thread: bool = True) -> Iterator[None]:
    """The settings every grid point is computed and checked with: quick profile, seed 0, one torch thread —
    also inside the batched computations, which otherwise take a second core and round differently
    (:func:`companion.kit.config.batched_threads`).  With ``one_thread=False``, the thread policy a notebook
    gets by default instead.  Results are cached in a private temporary folder only: the user's cache may hold
    results computed with other threads.  The environment and settings are restored afterwards."""
    import torch

    from companion.kit import config

    threads = torch.get_num_threads()
    with tempfile.TemporaryDirectory() as cache, patch.dict(os.environ, {**PINNED, "COMPANION_CACHE": cache}):
        if not one_thread:
            del os.environ["COMPANION_THREADS"]
        config.reset_settings()
        try:
            config.settings()
            yield
        finally:
            config.reset_settings()
            torch.set_num_threads(threads)


def default_fingerprints(spec: ExplorerSpec, first: Any) -> list[list[float]]:
    """Fingerprints of the explorer's first result (at its defaults): ``first``, computed with one thread, and,
    if it differs, the one a notebook computes with its default threads — either identifies the code, seed
    and profile that made the grid (:class:`companion.kit.grids.GridPictures`)."""
    found = [fingerprint(first)]
    with pinned_settings(one_thread=False):
        other = fingerprint(spec.build().result)
    return found if same_fingerprint(found[0], other) else found + [other]


def precompute(name: str, out: Path | None = None, progress: bool = True, check: bool = False) -> Path:
    """Sample one chapter's explorer on its grid (see the module docstring); return its ``grid.json``.

    Points already in ``grid.json`` are kept as they are, unless ``check``: then each is computed and drawn
    again, and one whose fingerprint or picture moved is written anew (printed as it is found).  The grid records the current code
    digest when every point was computed or checked by the current code, else none (a test then asks for
    ``--check``).
    """
    import torch
    from tqdm.auto import tqdm

    from companion.kit.i18n import MissingFigureWords

    slug, spec = spec_for(name)
    folder = (GRID_DIR if out is None else Path(out)) / slug
    folder.mkdir(parents=True, exist_ok=True)
    with pinned_settings(), warnings.catch_warnings():
        warnings.simplefilter("error", MissingFigureWords)  # a picture of the site has the Chinese of its words
        explorer = spec.build()
        unknown = set(spec.grid) - set(explorer.controls)
        if unknown:
            raise ValueError(f"the grid of {slug} names no control {sorted(unknown)}; it has {sorted(explorer.controls)}")
        controls = {n: {"label": explorer.controls[n].description,
                        "values": [_jsonable(v) for v in values]} for n, values in spec.grid.items()}
        index_path = folder / "grid.json"
        old = json.loads(index_path.read_text(encoding="utf-8")) if index_path.exists() else {}
        points = {point_key(index): {n: _jsonable(v) for n, v in values.items()} for index, values in spec.points()}
        done = {p["key"]: p for p in old.get("points", []) if p["fingerprint"] and (folder / p["file"]).exists()
                and p["values"] == points.get(p["key"])  # a changed grid keeps only the points still on it ...
                and old.get("dpi", DISPLAY_DPI) == DPI}  # ... drawn at the current pixel density
        code = spec.code()
        defaults = {n: _jsonable(v) for n, v in explorer.values().items()}
        data = {"chapter": slug, "title": explorer.title, "seed": 0, "profile": "quick", "torch": torch.__version__,
                "machine": machine_words(),  # training's floating-point sums differ across processors
                "dpi": DPI,
                "code": code if check or not done or old.get("code") == code else None,
                "controls": controls, "defaults": defaults, "default_fingerprints": default_fingerprints(spec, explorer.result),
                "start": point_key([nearest_index(spec.grid[n], defaults[n]) for n in spec.grid]),
                "points": []}
        for i, (key, values) in enumerate(tqdm(points.items(), desc=f"{'check' if check else 'precompute'} {slug}",
                                               disable=not progress)):
            if key in done and not check:
                data["points"].append(done[key])
                continue
            result = explorer.set(**values)  # validated against the controls' ranges
            file = f"{i:03d}.png"
            picture = _png(explorer.draw, result, explorer.figsize)  # the same bytes for the same result and code
            point = {"key": key, "values": values, "file": file, "fingerprint": fingerprint(result)}
            if key in done:  # checking: keep the point, file untouched, if result and picture are as committed
                if same_fingerprint(point["fingerprint"], done[key]["fingerprint"]) and done[key]["file"] == file \
                        and (folder / file).read_bytes() == picture:
                    data["points"].append(done[key])
                    continue
                tqdm.write(f"{slug} at {values}: the result or its picture changed; drawn anew")
            (folder / file).write_bytes(picture)
            data["points"].append(point)
            _write_json(index_path, {**data, "complete": False})
        data["applies"] = when_controls_apply(data, folder)
        _write_json(index_path, {**data, "complete": True})
        return index_path
