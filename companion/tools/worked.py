"""Worked solutions with their results: each solution's code run once where a student runs it, its output kept.

A worked solution (:mod:`companion.solutions`) ends with Python code a student runs in the chapter's notebook, after
the exercise's own cells.  ``python -m companion solutions [chNN …]`` runs that code once, in exactly that place: the
chapter's notebook executes (quick profile, seed 0, like the committed notebook) with each solution's code as a cell
right after its exercise's cells (:func:`with_solution_cells`), and what the cell prints and draws is written to
``solution_results/<notebook>/``:

* ``results.json``: per solution label, the digest of its code and its outputs in order — ``{"text": …}`` for what it
  printed or returned, ``{"png": file}`` for a figure — with the digests of the code that made them; and
* one PNG per figure.

The book site shows each solution's output under its code, in its "Solution" toggle
(:func:`companion.tools.site.add_solution_toggles`).  Kept fresh like the explorers' pictures: ``results.json`` records
the chapter's digest (its code cells and every ``companion`` module they reach,
:func:`companion.tools.robustness.chapter_digest`) and the solutions module's (:func:`companion.kit.cache.code_digest`);
a test fails when either moved, or a solution's code changed, until this command runs again.  Nothing is written
when a solution's cell raises: that is a bug in the solution, named with its label.
"""

from __future__ import annotations

import ast
import base64
import hashlib
import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbclient.exceptions import CellExecutionError

from companion import solutions
from companion.kit.cache import code_digest
from companion.tools import catalog

#: Where the results are committed, one folder per notebook.
RESULTS_DIR = catalog.ROOT / "solution_results"

#: The line of an exercise that points to its worked solution; the site folds the solution in after it.
WORKED_LINE = re.compile(r"^(?P<indent>\s*)(?:Worked solution: run |完整解答：运行 )`from companion\.solutions\."
                         r"(?P<module>ch\d\d[a-z]?) import solution; solution\((?P<arg>[^)]+)\)`.*$", re.MULTILINE)


@dataclass(frozen=True)
class Output:
    """One output of a solution's cell: ``text`` (printed or returned) or ``png`` (a figure's file name)."""

    text: str = ""
    png: str = ""


def code_hash(code: str) -> str:
    return hashlib.sha256(code.strip().encode()).hexdigest()[:12]


def solution_named(match: re.Match) -> solutions.Solution:
    """The worked solution a :data:`WORKED_LINE` names (``ValueError`` when its chapter has no such exercise)."""
    return solutions.find(solutions.for_chapter(match["module"]), ast.literal_eval(match["arg"]))


def worked_solutions(nb: nbformat.NotebookNode) -> list[tuple[int, solutions.Solution]]:
    """The worked solutions ``nb``'s markdown points to (:data:`WORKED_LINE`), with the index of the cell that does."""
    return [(index, solution_named(match)) for index, cell in enumerate(nb.cells) if cell.cell_type == "markdown"
            for match in WORKED_LINE.finditer(cell.source)]


def with_solution_cells(nb: nbformat.NotebookNode) -> tuple[nbformat.NotebookNode, dict[str, str]]:
    """``nb`` with each worked solution's code as a code cell after its exercise's cells (before the next markdown
    cell), and the inserted cells' ids → solution labels.  Solutions without code get no cell."""
    out = nbformat.from_dict(json.loads(json.dumps(nb)))
    placed: dict[str, str] = {}
    for index, solution in reversed(worked_solutions(nb)):
        if not solution.code.strip():
            continue
        after = next((j for j in range(index + 1, len(out.cells)) if out.cells[j].cell_type == "markdown"),
                     len(out.cells))
        cell = nbformat.v4.new_code_cell(solution.code.strip())
        cell.id = f"worked-{code_hash(solution.label)}"
        out.cells.insert(after, cell)
        placed[cell.id] = solution.label
    return out, placed


def _outputs(cell: nbformat.NotebookNode, label: str, folder: Path, stem: str) -> list[Output]:
    """A solution cell's outputs as a reader sees them: its figures written to ``folder`` as ``<stem>-N.png``, and what
    it printed or returned between two figures as one text (stderr, warnings, is left out)."""
    outputs: list[Output] = []

    def add_text(text: str) -> None:
        if outputs and not outputs[-1].png:
            outputs[-1] = Output(text=outputs[-1].text + text)
        else:
            outputs.append(Output(text=text))

    for out in cell.get("outputs", []):
        kind = out.get("output_type")
        if kind == "error":  # nbclient raises before this; kept for a kernel that only shows it
            raise RuntimeError(f"the worked solution {label!r} raised {out.get('ename')}: {out.get('evalue')}")
        if kind == "stream" and out.get("name") == "stdout":
            add_text(out["text"])
        elif kind in ("execute_result", "display_data"):
            data = out.get("data", {})
            if "image/png" in data:
                name = f"{stem}-{sum(bool(o.png) for o in outputs) + 1}.png"
                (folder / name).write_bytes(base64.b64decode(data["image/png"]))
                outputs.append(Output(png=name))
            elif "text/plain" in data:
                add_text(data["text/plain"] + "\n")
    return outputs


def digests(chapter: catalog.Chapter) -> dict[str, str]:
    """The digests the results of ``chapter`` depend on: its notebook's code and its solutions' module."""
    from companion.tools.robustness import chapter_digest

    return {"chapter_digest": chapter_digest(chapter),
            "solutions_digest": code_digest(solutions.CHAPTERS[chapter.slug]) or ""}


def compute(name: str, root: Path = RESULTS_DIR, timeout: int = 1200) -> Path:
    """Run chapter ``name``'s notebook with its worked solutions' code and write their outputs (module docstring)."""
    from companion.tools.runner import execute, load_source

    chapter = catalog.find(name)
    if chapter.slug not in solutions.CHAPTERS:
        raise ValueError(f"{chapter.slug} has no worked solutions; chapters with them: {', '.join(solutions.CHAPTERS)}")
    nb, placed = with_solution_cells(load_source(chapter.source))
    env = {"COMPANION_PROFILE": "quick", "COMPANION_SEED": "0", "COMPANION_CHAPTER": chapter.slug,
           "COMPANION_PROGRESS": "0", "COMPANION_LANG": "en", "COMPANION_SMOKE": "0"}
    try:
        execute(nb, chapter.source.parent, env, timeout=timeout)
    except CellExecutionError as exc:
        cell = next((c for c in nb.cells if c.get("outputs") and any(o.get("output_type") == "error"
                                                                        for o in c.outputs)), None)
        where = placed.get(cell.id, "the notebook's own cell") if cell is not None else "a cell"
        raise RuntimeError(f"{chapter.slug}: {where} raised {exc.ename}: {exc.evalue.strip()[:200]}") from None
    folder = root / chapter.slug
    staging = root / f".{chapter.slug}.new"
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    results = {}
    codes = {s.label: s for s in solutions.for_chapter(chapter.slug).values()}
    for number, cell in enumerate(c for c in nb.cells if c.get("id") in placed):
        label = placed[cell.id]
        outputs = _outputs(cell, label, staging, f"{number + 1:02d}")
        results[label] = {"code": code_hash(codes[label].code),
                          "outputs": [{"png": o.png} if o.png else {"text": o.text} for o in outputs]}
    data = {"chapter": chapter.slug, "profile": "quick", "seed": 0, **digests(chapter), "results": results}
    (staging / "results.json").write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    if folder.exists():
        shutil.rmtree(folder)
    staging.rename(folder)  # whole or not at all: an interrupted run leaves the old results in place
    return folder


def read_results(slug: str, root: Path = RESULTS_DIR) -> dict | None:
    path = root / slug / "results.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def stale_reason(slug: str, root: Path = RESULTS_DIR) -> str:
    """Why chapter ``slug``'s committed results no longer match its code ("" when they do)."""
    data = read_results(slug, root)
    if data is None:
        return "no results yet"
    now = digests(catalog.find(slug))
    if data.get("chapter_digest") != now["chapter_digest"]:
        return "the chapter's code (its code cells or a companion module they reach) changed since"
    if data.get("solutions_digest") != now["solutions_digest"]:
        return "its solutions' module changed since"
    for solution in solutions.for_chapter(slug).values():
        if not solution.code.strip():
            continue
        kept = data["results"].get(solution.label)
        if kept is None or kept["code"] != code_hash(solution.code):
            return f"the code of {solution.label} changed since"
    return ""


def stale_chapters(names: list[str] | None = None, root: Path = RESULTS_DIR) -> list[str]:
    slugs = [catalog.find(n).slug for n in names] if names else list(solutions.CHAPTERS)
    return [s for s in slugs if stale_reason(s, root)]
