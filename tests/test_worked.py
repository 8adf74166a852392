"""Worked solutions shown with their results (issue #43, item 2): each solution's code was run once in its notebook
(:mod:`companion.tools.worked`), its outputs are committed beside the code that made them, and the site shows them."""

from __future__ import annotations

import json
import shutil

import nbformat
import pytest

from companion import solutions
from companion.tools import catalog, site, worked
from companion.tools.runner import load_source

WITH_CODE = [slug for slug in solutions.CHAPTERS if any(s.code.strip() for s in solutions.for_chapter(slug).values())]


def test_each_solutions_code_is_placed_after_its_exercises_cells() -> None:
    nb = load_source(catalog.find("ch09").source)
    placed_nb, placed = worked.with_solution_cells(nb)
    assert list(placed.values()) == ["习题20"]
    index = next(i for i, c in enumerate(placed_nb.cells) if c.get("id") in placed)
    assert "x20a, y20 =" in placed_nb.cells[index - 1].source        # after the exercise's own code …
    assert placed_nb.cells[index + 1].cell_type == "markdown"         # … and before the text that follows it
    assert len(placed_nb.cells) == len(nb.cells) + 1 and placed_nb.cells[index].source.startswith(
        solutions.for_chapter("ch09")["习题20"].code.strip()[:30])


@pytest.mark.parametrize("slug", WITH_CODE)
def test_every_worked_solution_with_code_has_its_output_made_by_the_current_code(slug) -> None:
    reason = worked.stale_reason(slug)
    assert not reason, f"{slug}: {reason}; run `python -m companion solutions {slug[:4]}`"
    data = worked.read_results(slug)
    for solution in solutions.for_chapter(slug).values():
        if solution.code.strip():
            outputs = data["results"][solution.label]["outputs"]
            assert outputs, f"{slug} {solution.label}: its code printed and drew nothing to show"
            for out in outputs:
                assert out.get("text", "").strip() or (worked.RESULTS_DIR / slug / out.get("png", "-")).is_file(), out


def test_a_changed_solution_or_chapter_makes_the_results_stale(tmp_path, monkeypatch) -> None:
    slug = "ch07_phase_diagram"
    shutil.copytree(worked.RESULTS_DIR / slug, tmp_path / slug)
    assert worked.stale_reason(slug, tmp_path) == ""
    data = json.loads((tmp_path / slug / "results.json").read_text(encoding="utf-8"))
    label = next(iter(data["results"]))
    data["results"][label]["code"] = "0" * 12
    (tmp_path / slug / "results.json").write_text(json.dumps(data), encoding="utf-8")
    assert worked.stale_reason(slug, tmp_path) == f"the code of {label} changed since"
    data["chapter_digest"] = "0" * 16
    (tmp_path / slug / "results.json").write_text(json.dumps(data), encoding="utf-8")
    assert "the chapter's code" in worked.stale_reason(slug, tmp_path)
    assert worked.stale_reason("ch04_frequency_principle", tmp_path) == "no results yet"


def test_the_site_shows_each_solution_with_its_output_and_figures(tmp_path) -> None:
    slug = "ch04_frequency_principle"
    nb = nbformat.read(catalog.find(slug).notebook, as_version=4)
    site.add_solution_toggles(nb, slug, "en", tmp_path)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    data = worked.read_results(slug)
    shown = text.count(":::{container} companion-solution-output")
    assert shown == sum(bool(r["outputs"]) for r in data["results"].values()) >= 4
    pictures = [o["png"] for r in data["results"].values() for o in r["outputs"] if "png" in o]
    for png in pictures:
        assert (tmp_path / "_static" / "solutions" / slug / png).is_file() and f"solutions/{slug}/{png})" in text
    zh = nbformat.read(catalog.find(slug).notebook, as_version=4)
    site.add_solution_toggles(zh, slug, "zh", tmp_path)
    assert "**输出**" in "\n".join(c.source for c in zh.cells if c.cell_type == "markdown")
