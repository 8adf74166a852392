"""Kernel-free explorers: the grid sampler, its resumption, the committed grids and their freshness."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass

import numpy as np
import pytest
import torch

from companion.kit import config
from companion.kit.cache import code_digest
from companion.kit import widgets as w
from companion.kit import grids
from companion.tools import precompute
from companion.tools.robustness import machine_words

CALLS: list[dict] = []


@dataclass
class Curve:
    x: np.ndarray
    y: torch.Tensor
    label: str


def make_tiny(scale: float = 1.0) -> w.Explorer:
    """A two-control explorer whose compute counts its calls (cheap: no training)."""
    def compute(a: float, kind: str) -> dict:
        CALLS.append({"a": a, "kind": kind})
        x = np.linspace(0, 1, 50)
        y = torch.tensor(np.sin(a * x) if kind == "sin" else np.cos(a * x)) * scale
        return {"curve": Curve(x, y, kind), "peak": float(y.abs().max()), "nan": np.array([np.nan, 1.0])}

    def draw(result: dict, fig) -> None:
        ax = fig.add_subplot()
        ax.plot(result["curve"].x, result["curve"].y.numpy())

    return w.Explorer("tiny", {"a": w.float_slider(1.0, 0.5, 8.0, 0.5, "frequency a"),
                               "kind": w.dropdown("sin", ("sin", "cos"), "kind")}, compute, draw, figsize=(3, 2))


TINY = precompute.ExplorerSpec("test_precompute:make_tiny", {"a": [1.0, 2.0, 4.0], "kind": ["sin", "cos"]})


@pytest.fixture
def tiny_spec(monkeypatch):
    monkeypatch.setitem(precompute.EXPLORERS, "ch04_frequency_principle", TINY)
    CALLS.clear()


def test_fingerprint_reads_every_array_in_a_fixed_order():
    result = make_tiny().set(a=2.0, kind="cos")
    fp = grids.fingerprint(result)
    # curve.x (mean, mean |.|, non-finite), curve.y, nan-array, peak
    assert len(fp) == 12 and fp[2] == 0.0 and fp[8] == 1.0  # one NaN counted
    assert fp[0] == pytest.approx(0.5) and fp[-3] == pytest.approx(1.0)
    assert grids.same_fingerprint(fp, grids.fingerprint(make_tiny().set(a=2.0, kind="cos")))
    other = grids.fingerprint(make_tiny(scale=1.01).set(a=2.0, kind="cos"))
    assert not grids.same_fingerprint(fp, other)  # a 1 % change in the result is caught


def test_precompute_writes_every_point_and_resumes(tiny_spec, tmp_path, monkeypatch):
    index = precompute.precompute("ch04", out=tmp_path, progress=False)
    grid = json.loads(index.read_text())
    assert grid["complete"] and len(grid["points"]) == 6 and grid["start"] == "0,0"
    assert [p["key"] for p in grid["points"]] == ["0,0", "0,1", "1,0", "1,1", "2,0", "2,1"]
    assert grid["points"][3]["values"] == {"a": 2.0, "kind": "cos"}
    folder = tmp_path / "ch04_frequency_principle"
    assert all((folder / p["file"]).read_bytes()[:4] == b"\x89PNG" for p in grid["points"])
    assert len(CALLS) == 2 + 6  # the explorer's default (one thread, a notebook's threads), then each point once
    assert len(grid["default_fingerprints"]) == 1  # no batched computation here: both thread counts agree
    assert grid["applies"] == {}  # both controls change the picture everywhere
    (folder / grid["points"][4]["file"]).unlink()  # as if interrupted while writing that point
    CALLS.clear()
    precompute.precompute("ch04", out=tmp_path, progress=False)
    assert CALLS == [{"a": 1.0, "kind": "sin"}] * 2 + [{"a": 4.0, "kind": "sin"}]  # defaults + the missing point
    assert json.loads(index.read_text())["points"] == grid["points"]
    monkeypatch.setitem(precompute.EXPLORERS, "ch04_frequency_principle",
                        precompute.ExplorerSpec(TINY.factory, {"a": [1.0, 2.0, 3.0], "kind": ["sin", "cos"]}))
    CALLS.clear()
    precompute.precompute("ch04", out=tmp_path, progress=False)  # a grid value changed: only its points computed
    assert CALLS == [{"a": 1.0, "kind": "sin"}] * 2 + [{"a": 3.0, "kind": "sin"}, {"a": 3.0, "kind": "cos"}]
    assert json.loads(index.read_text())["points"][4]["values"] == {"a": 3.0, "kind": "sin"}


def test_check_recomputes_every_point_draws_anew_only_what_moved_and_records_the_code(tiny_spec, tmp_path,
                                                                                       monkeypatch):
    index = precompute.precompute("ch04", out=tmp_path, progress=False)
    folder = tmp_path / "ch04_frequency_principle"
    grid = json.loads(index.read_text())
    assert grid["code"] == code_digest("test_precompute")
    pictures = {p["file"]: (folder / p["file"]).read_bytes() for p in grid["points"]}
    grid["code"] = "other code"  # as if a module the explorer reaches had changed since
    index.write_text(json.dumps(grid))
    precompute.precompute("ch04", out=tmp_path, progress=False)  # a plain run keeps the points and vouches for none
    assert json.loads(index.read_text())["code"] is None
    (folder / "000.png").write_bytes(b"a stale picture")  # as if the drawing code had changed, not the result
    written = {f: (folder / f).stat().st_mtime_ns for f in pictures}
    CALLS.clear()
    precompute.precompute("ch04", out=tmp_path, progress=False, check=True)
    assert len(CALLS) == 2 + 6  # every point computed again
    checked = json.loads(index.read_text())
    assert checked["code"] == code_digest("test_precompute") and checked["points"] == grid["points"]
    assert {f: (folder / f).read_bytes() for f in pictures} == pictures  # the stale picture is drawn anew …
    assert all((folder / f).stat().st_mtime_ns == written[f] for f in pictures if f != "000.png")  # … alone
    monkeypatch.setitem(precompute.EXPLORERS, "ch04_frequency_principle",
                        precompute.ExplorerSpec(TINY.factory, TINY.grid, {"scale": 2.0}))  # the code's result moved
    precompute.precompute("ch04", out=tmp_path, progress=False, check=True)
    moved = json.loads(index.read_text())
    assert all(not grids.same_fingerprint(a["fingerprint"], b["fingerprint"])
               for a, b in zip(moved["points"], grid["points"]))
    assert (folder / "000.png").read_bytes() != pictures["000.png"]


def test_a_live_explorer_shows_the_committed_picture_on_the_grid_and_computes_off_it(tiny_spec, tmp_path,
                                                                                     monkeypatch):
    precompute.precompute("ch04", out=tmp_path, progress=False)
    monkeypatch.setattr(grids, "GRID_DIR", tmp_path)
    explorer = make_tiny()
    assert explorer.pictures is not None
    CALLS.clear()
    explorer.move(a=4.0, kind="cos")  # on the grid: the committed picture, nothing computed
    assert CALLS == [] and explorer.result is None and "precomputed picture (seed 0" in explorer.status.value
    assert explorer.pictures.picture(explorer.values()).name == "005.png"
    explorer.move(a=3.0)  # off the grid: computed
    assert CALLS == [{"a": 3.0, "kind": "cos"}] and explorer.result["peak"] > 0
    assert explorer.set(a=4.0)["curve"].label == "cos" and len(CALLS) == 2  # set() always computes
    with pytest.raises(ValueError, match="out of range"):
        explorer.move(a=99.0)
    assert make_tiny(scale=1.01).pictures is None  # a grid made by other code (another first result) is not used
    monkeypatch.setattr(grids, "GRID_DIR", tmp_path / "elsewhere")
    assert make_tiny().pictures is None


def test_precompute_refuses_unknown_names_and_controls(tiny_spec, monkeypatch, tmp_path):
    with pytest.raises(ValueError, match="unknown chapter"):
        precompute.spec_for("ch99")
    monkeypatch.setitem(precompute.EXPLORERS, "ch04_frequency_principle",
                        precompute.ExplorerSpec("test_precompute:make_tiny", {"b": [1, 2]}))
    with pytest.raises(ValueError, match=r"names no control \['b'\]"):
        precompute.precompute("ch04", out=tmp_path, progress=False)
    monkeypatch.setitem(precompute.EXPLORERS, "ch04_frequency_principle",
                        precompute.ExplorerSpec("test_precompute:make_tiny", {"a": [1.0, 99.0]}))
    with pytest.raises(ValueError, match="out of range"):
        precompute.precompute("ch04", out=tmp_path, progress=False)


def _toy_grid(folder, picture) -> dict:
    """A grid of controls model ∈ {plain, fourier}, sigma ∈ {1, 10}, steps ∈ {1, 2} whose pictures are
    ``picture(model, sigma, steps)``, written into ``folder``."""
    controls = {"model": ["plain", "fourier"], "sigma": [1, 10], "steps": [1, 2]}
    points = []
    for i, (index, values) in enumerate(precompute.ExplorerSpec("x:y", controls).points()):
        (folder / f"{i:03d}.png").write_bytes(picture(**values).encode())
        points.append({"key": grids.point_key(index), "values": values, "file": f"{i:03d}.png"})
    return {"chapter": "toy", "controls": {n: {"label": n, "values": v} for n, v in controls.items()}, "points": points}


def test_when_controls_apply_names_the_other_control_that_makes_a_control_change_the_picture(tmp_path):
    grid = _toy_grid(tmp_path, lambda model, sigma, steps: f"{model} {sigma if model == 'fourier' else ''} {steps}")
    assert precompute.when_controls_apply(grid, tmp_path) == {"sigma": {"model": ["fourier"]}}
    grid = _toy_grid(tmp_path, lambda model, sigma, steps: f"{model} {sigma} {steps}")
    assert precompute.when_controls_apply(grid, tmp_path) == {}
    # inert only where two other controls take one value each: no one control says when it applies
    grid = _toy_grid(tmp_path, lambda model, sigma, steps: f"{model} {sigma if (model, steps) != ('plain', 1) else ''}")
    with pytest.raises(ValueError, match="sigma changes no picture"):
        precompute.when_controls_apply(grid, tmp_path)


@pytest.mark.parametrize("slug", sorted(precompute.EXPLORERS))
def test_every_committed_grid_records_where_its_controls_change_the_picture(slug):
    """ch05's Fourier σ draws the same picture unless model = fourier, ch15's width for method = jacobi: every grid
    records where each of its controls applies, as its pictures show, and the site disables it elsewhere."""
    grid = grids.read_grid(slug)
    assert grid["applies"] == precompute.when_controls_apply(grid, grids.GRID_DIR / slug)


@pytest.mark.parametrize("slug", sorted(precompute.EXPLORERS))
def test_the_committed_grid_is_complete_small_and_fine_enough(slug):
    grid = grids.read_grid(slug)
    assert grid is not None, f"no explorers/{slug}/grid.json: run `python -m companion precompute {slug}`"
    spec = precompute.EXPLORERS[slug]
    assert grid["complete"] and [p["key"] for p in grid["points"]] == [grids.point_key(i) for i, _ in spec.points()]
    assert {n: c["values"] for n, c in grid["controls"].items()} == {n: list(v) for n, v in spec.grid.items()}
    sizes = [(grids.GRID_DIR / slug / p["file"]).stat().st_size for p in grid["points"]]
    assert sum(sizes) < 5e6, f"{slug}: {sum(sizes) / 1e6:.1f} MB of pictures"
    # several values for at least two controls: the phenomenon can be seen to change
    assert sum(len(c["values"]) >= 3 for c in grid["controls"].values()) >= 2


@pytest.mark.parametrize("slug", sorted(precompute.EXPLORERS))
def test_every_committed_grid_was_made_or_checked_by_the_current_code(slug):
    grid = grids.read_grid(slug)
    assert grid is not None and grid.get("code") == precompute.EXPLORERS[slug].code(), \
        f"{slug}: the explorer's code (its module or a companion module it imports) changed since its grid was " \
        f"made; run `python -m companion precompute --check {slug}`"


@pytest.mark.parametrize("slug", sorted(precompute.EXPLORERS))
def test_a_random_grid_point_recomputes_to_its_committed_fingerprint(slug):
    grid = grids.read_grid(slug)
    if grid is None:
        pytest.fail(f"no committed grid for {slug}")
    here = machine_words()
    if grid.get("machine") != here:  # a run of many steps rounds differently on another processor (§ grids made)
        pytest.skip(f"{slug}'s grid was made on {grid.get('machine')}, this is {here}: training rounds differently "
                    "there by more than a fingerprint's 1e-3; the code-digest test above still guards the grid")
    point = random.Random().choice(grid["points"])  # a different point each run: any stale point can be caught
    with precompute.pinned_settings():  # the settings precompute used, whatever this process's environment
        result = precompute.EXPLORERS[slug].build().set(**point["values"])
    assert grids.same_fingerprint(grids.fingerprint(result), point["fingerprint"]), \
        f"{slug} at {point['values']}: the committed picture no longer matches the code; run " \
        f"`python -m companion precompute {slug}`"


def test_pinned_settings_fix_one_thread_and_restore_the_environment(monkeypatch):
    monkeypatch.delenv("COMPANION_THREADS", raising=False)
    monkeypatch.setenv("COMPANION_SEED", "7")
    with precompute.pinned_settings():
        assert config.settings().threads == 1 and torch.get_num_threads() == 1 and config.settings().seed == 0
        with config.batched_threads() as lender:  # not a second core: it would round differently from the grid
            lender.looked -= config.ThreadLender.INTERVAL
            assert lender.limit == lender.update() == 1 and lender.watch is None
    assert "COMPANION_THREADS" not in __import__("os").environ and config.settings().seed == 7
