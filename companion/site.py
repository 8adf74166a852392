"""The book site: stage ``book/`` and the committed chapter notebooks, then build them with Jupyter Book.

The chapters live in ``chapters/`` (outside the book's folder), so a build first *stages* a
source folder: the hand-written pages of ``book/`` (landing page, glossary, configuration, the
local Sphinx extension), a copy of every executed ``chapters/chNN_*.ipynb`` that exists, and
three generated files:

* ``_toc.yml`` — the landing page, one page per chapter in the book's order, the claims page
  and the glossary;
* ``_chapter_map.md`` — the table notebook ↔ book chapter ↔ figures (from :mod:`companion.catalog`),
  included by the landing page;
* ``claims.md`` — every claim the committed notebooks checked, read from their outputs
  (the ``✔ CLAIM HOLDS [figure] text`` lines that :func:`companion.claims.claim` prints).

The notebooks are shown with their committed outputs; nothing is executed at build time::

    python -m companion book            # → book/_build/html/index.html
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

from . import catalog
from .claims import FAIL_MARK, PASS_MARK

BOOK_DIR = catalog.ROOT / "book"
_CLAIM_LINE = re.compile(rf"^(?P<mark>{re.escape(PASS_MARK)}|{re.escape(FAIL_MARK)}) "
                         r"\[(?P<figure>[^\]]+)\] (?P<text>.+?)\s*$")
_NOTEBOOK_NAME = re.compile(r"^ch\d\d_\w+\.ipynb$")


@dataclass(frozen=True)
class ClaimRecord:
    """One claim as a committed notebook printed it."""

    chapter: str
    figure: str
    text: str
    holds: bool


def chapter_notebooks(chapters_dir: Path | None = None) -> list[Path]:
    """The executed chapter notebooks that exist (in ``chapters/`` by default), in the book's order.

    Notebooks the catalog knows come in its order; any other ``chNN_*.ipynb`` follows by name.
    """
    chapters_dir = catalog.CHAPTERS_DIR if chapters_dir is None else chapters_dir
    found = {p.stem: p for p in chapters_dir.glob("ch*.ipynb") if _NOTEBOOK_NAME.match(p.name)}
    known = [found.pop(c.slug) for c in catalog.CHAPTERS if c.slug in found]
    return known + [found[name] for name in sorted(found)]


def _output_text(output: nbformat.NotebookNode) -> str:
    if output.get("output_type") == "stream":
        text = output.get("text", "")
    else:
        text = output.get("data", {}).get("text/plain", "")
    return "".join(text) if isinstance(text, list) else text


def read_claims(notebook: Path) -> list[ClaimRecord]:
    """The claims printed in ``notebook``'s committed outputs, in cell order."""
    nb = nbformat.read(notebook, as_version=4)
    records = []
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            for line in _output_text(output).splitlines():
                match = _CLAIM_LINE.match(line)
                if match:
                    records.append(ClaimRecord(notebook.stem, match["figure"], match["text"],
                                               match["mark"] == PASS_MARK))
    return records


def notebook_title(notebook: Path) -> str:
    """The text of the first level-1 heading of ``notebook`` (its page title)."""
    nb = nbformat.read(notebook, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    raise ValueError(f"{notebook.name} has no level-1 heading ('# Title'): the book needs one per chapter page")


def toc_yaml(chapter_pages: list[str]) -> str:
    """The ``_toc.yml`` of the site: landing page, chapters (in order), claims, glossary."""
    lines = ["format: jb-book", "root: intro", "parts:"]
    if chapter_pages:
        lines += ["  - caption: Chapters", "    chapters:"] + [f"      - file: {p}" for p in chapter_pages]
    lines += ["  - caption: Reference", "    chapters:", "      - file: claims", "      - file: glossary"]
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def chapter_map_markdown(built: list[str]) -> str:
    """The chapter map as a Markdown table: every catalog chapter, linked when its page is ``built``."""
    rows = ["| Notebook | Book chapter | Topic | Figures reproduced |", "| --- | --- | --- | --- |"]
    for ch in catalog.CHAPTERS:
        name = f"[`{ch.slug}`]({ch.slug}.ipynb)" if ch.slug in built else f"`{ch.slug}` (planned)"
        rows.append(f"| {name} | {ch.book} | {_cell(ch.title)} ({ch.title_zh}) | {_cell(', '.join(ch.figures))} |")
    return "\n".join(rows) + "\n"


def claims_markdown(notebooks: list[Path]) -> str:
    """The claims page: one table per chapter listing each claim and the figure it reproduces."""
    claims = {notebook: read_claims(notebook) for notebook in notebooks}
    total = sum(len(records) for records in claims.values())
    parts = ["# Claims checked by the notebooks", "",
             "Every claim below is a sentence of the book turned into a check that fails when the phenomenon "
             "is absent. The notebooks check them each time they run, in the quick profile and for any seed; "
             f"this page lists the verdicts printed in the committed notebooks (seed 0): {total} claims in "
             f"{len(notebooks)} notebooks.", ""]
    for notebook, records in claims.items():
        parts += [f"## [{_cell(notebook_title(notebook))}]({notebook.name})", ""]
        if not records:
            parts += ["This notebook checks no claim yet.", ""]
            continue
        parts += ["| Figure | Claim | Verdict |", "| --- | --- | --- |"]
        parts += [f"| {_cell(r.figure)} | {_cell(r.text)} | {'✔ holds' if r.holds else '✘ fails'} |"
                  for r in records]
        parts.append("")
    if not notebooks:
        parts += ["No chapter notebook has been committed yet.", ""]
    return "\n".join(parts)


def stage(source: Path, book_dir: Path = BOOK_DIR, chapters_dir: Path | None = None) -> list[Path]:
    """Write the book's source folder ``source`` (emptied first); return the chapter notebooks it holds."""
    if source.exists():
        shutil.rmtree(source)
    shutil.copytree(book_dir, source, ignore=shutil.ignore_patterns("_build", "__pycache__", ".*"))
    notebooks = chapter_notebooks(chapters_dir)
    for notebook in notebooks:
        notebook_title(notebook)  # fail early, with the notebook's name, if a page would have no title
        shutil.copy2(notebook, source / notebook.name)
    pages = [p.stem for p in notebooks]
    (source / "_toc.yml").write_text(toc_yaml(pages), encoding="utf-8")
    (source / "_chapter_map.md").write_text(chapter_map_markdown(pages), encoding="utf-8")
    (source / "claims.md").write_text(claims_markdown(notebooks), encoding="utf-8")
    return notebooks


def build(out: Path = BOOK_DIR, chapters_dir: Path | None = None, strict: bool = True) -> Path:
    """Stage and build the site under ``out/_build``; return the folder holding ``index.html``.

    With ``strict`` every Sphinx warning is an error (the build must be warning-free).
    Raises RuntimeError with Jupyter Book's output if the build fails.
    """
    if importlib.util.find_spec("jupyter_book") is None:
        raise RuntimeError("Jupyter Book 1.x is not installed: pip install -e '.[dev]' (it brings jupyter-book<2)")
    out = Path(out).resolve()
    source, html = out / "_build" / "src", out / "_build" / "html"
    stage(source, chapters_dir=chapters_dir)
    if html.exists():
        shutil.rmtree(html)  # no page of a removed chapter survives
    command = [sys.executable, "-c", "from jupyter_book.cli.main import main; main()",
               "build", str(source), "--path-output", str(out), "--all", "-q"]
    if strict:
        command += ["-W", "--keep-going"]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0 or not (html / "index.html").exists():
        raise RuntimeError(f"the book build failed (exit {done.returncode}):\n{done.stdout}\n{done.stderr}")
    return html
