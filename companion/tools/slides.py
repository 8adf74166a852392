"""Lecture slides of a chapter: ``python -m companion slides ch10`` writes an offline reveal.js deck.

The deck is made from the committed, executed notebook — nothing runs — in one folder that works from a USB stick
or a lecture-hall laptop without a network:

* a title slide (the chapter's page title);
* one slide per figure the notebook drew for a book figure (图/表 numbers in its section's heading, read as the
  reproduction report reads them, :func:`companion.tools.reproduction.save_figures`), the picture and, under it,
  the verdict of each claim shown beside that figure on the report page (:func:`~companion.tools.reproduction.
  claim_figures`): ✔/✘/◇ with its kind, the sentence, and its robustness over seeds from the committed report;
* where the chapter has a kernel-free explorer, a slide holding it, working: the site's explorer
  (:func:`companion.tools.site.add_static_explorers`, ``book/_static/explorer.js``) over the precomputed
  pictures, in the notebook's order.

reveal.js is copied next to ``index.html`` (``reveal/``), never fetched: it comes from the installed
``sphinx-revealjs`` package (Apache-2.0), which ships reveal.js's built files (MIT, its LICENSE copied with them).
Keys: → / ← or space move between slides; a focused slider takes the arrow keys itself.
"""

from __future__ import annotations

import html
import importlib.resources
import importlib.util
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import nbformat

from companion.kit.i18n import read_language, tr
from companion.tools import catalog, reproduction, site

EXPLORER_JS = site.BOOK_DIR / "_static" / "explorer.js"
#: reveal.js's built files inside the installed sphinx-revealjs package.
REVEAL_PACKAGE, REVEAL_FOLDER = "sphinx_revealjs", ("_static", "revealjs")

STYLE = """.reveal h2, .reveal h3 { text-transform: none; }
.reveal .slides section { text-align: left; }
.reveal section.companion-title { text-align: center; padding-top: 200px; }
.reveal section.companion-title h2 { font-size: 1.8em; }
.reveal .companion-figure-slide img { display: block; margin: 0 auto; width: 100%; max-height: 520px; object-fit: contain; }
.reveal .companion-claims { list-style: none; margin: 0.4em 0 0 0; font-size: 0.55em; }
.reveal .companion-claims li { margin: 0.2em 0; }
.reveal .companion-claims small { display: block; color: #555; font-size: 0.8em; }
.reveal .companion-claims .fails { color: #b00020; }
.reveal .companion-claims .exploration { color: #7a5b00; }
.reveal .companion-explorer { font-size: 0.55em; }
.reveal .companion-explorer img.companion-explorer-figure { display: block; margin: 0.3em auto; width: 100%;
  max-height: 480px; object-fit: contain; }
.reveal .companion-explorer-note { font-size: 0.6em; color: #555; }
.reveal .companion-explorer input[type=range] { width: 12em; }
"""


@dataclass(frozen=True)
class Slide:
    """One slide of the deck, at the notebook cell that drew it (the slides follow the notebook's order)."""

    cell: int
    html: str


def reveal_files() -> Path:
    """The folder of reveal.js's built files (``dist/``, ``LICENSE``) in the installed sphinx-revealjs."""
    if importlib.util.find_spec(REVEAL_PACKAGE) is None:
        raise RuntimeError("the slides need reveal.js, shipped by sphinx-revealjs: pip install -e '.[dev]'")
    folder = Path(str(importlib.resources.files(REVEAL_PACKAGE).joinpath(*REVEAL_FOLDER)))
    if not (folder / "dist" / "reveal.js").exists():
        raise RuntimeError(f"sphinx-revealjs holds no reveal.js at {folder}: reinstall it")
    return folder


def reveal_version(folder: Path | None = None) -> str:
    """The version of the shipped reveal.js, read from its file's banner ("5.2.0")."""
    head = ((folder or reveal_files()) / "dist" / "reveal.js").read_text(encoding="utf-8")[:200]
    found = re.search(r"reveal\.js (\d+\.\d+\.\d+)", head)
    return found[1] if found else "unknown"


def copy_reveal(deck: Path) -> Path:
    """Copy reveal.js (its built script, styles, white theme with its fonts, licence) to ``deck/reveal``."""
    source, target = reveal_files(), deck / "reveal"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(source / "dist", target, ignore=shutil.ignore_patterns("*.map", "*.esm.js"))
    shutil.copy2(source / "LICENSE", target / "LICENSE")
    return target


def _headings(nb: nbformat.NotebookNode) -> list[str]:
    """For each cell, the text of the latest heading at or above it (its section's title, without the #s)."""
    current, per_cell = "", []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                heading = re.match(r"\s*#+\s+(.*)", line)
                if heading:
                    current = heading[1].strip()
        per_cell.append(current)
    return per_cell


def _claim_html(claim: site.ClaimRecord, report_entry: dict | None, stale: bool, language: str) -> str:
    words = site.verdict_words(claim, language)
    kind = "exploration" if claim.exploration else ("holds" if claim.holds else "fails")
    robustness = ""
    if report_entry is not None:
        robustness = f"<small>{html.escape(site.robustness_line(report_entry, stale, language).strip().lstrip('↳ '))}</small>"
    return (f'<li class="{kind}"><b>{html.escape(words)}</b> [{html.escape(claim.figure)}] '
            f"{html.escape(tr(claim.text, language))}{robustness}</li>")


def _figures_beside(claim: site.ClaimRecord, figures: list[reproduction.SavedFigure],
                    section: int | None) -> list[reproduction.SavedFigure]:
    """The figures a claim's verdict goes under: the report page's (:func:`reproduction.claim_figures`), narrowed,
    for a claim naming one book item drawn in several sections (图10.5a and 图10.5b are both read as 图10.5), to those
    of the section that printed its verdict."""
    found = reproduction.claim_figures(claim, figures, section)
    own = [f for f in found if f.section == section]
    single = len(reproduction.book_items(claim.figure)) == 1
    return own if single and own and len({f.section for f in found}) > 1 else found


def figure_slides(notebook: Path, nb: nbformat.NotebookNode, deck: Path, language: str) -> list[Slide]:
    """A slide per figure of ``nb`` drawn for a book figure (or shown beside a claim), its pictures written to
    ``deck/figures`` under the book's names, each with the verdicts of the claims shown beside it."""
    figures = reproduction.save_figures(nb, deck / "figures", notebook.stem)
    claims = site.read_claims(notebook)
    sections = reproduction.claim_sections(notebook)
    report, stale = site.read_robustness()
    entries = site.report_claims(report)
    beside: dict[Path, list[str]] = {f.path: [] for f in figures}
    for claim in claims:
        for figure in _figures_beside(claim, figures, sections.get((claim.figure, claim.text))):
            entry = entries.get((claim.figure, claim.text))
            beside[figure.path].append(_claim_html(claim, entry, notebook.stem in stale, language))
    headings = _headings(nb)
    slides = []
    for figure in figures:
        if not (figure.book_items or beside[figure.path]):
            continue
        title = headings[figure.cell] or ", ".join(figure.book_items)
        rel = figure.path.relative_to(deck).as_posix()
        items = html.escape(", ".join(figure.book_items), quote=True)
        claims_list = f'<ul class="companion-claims">{"".join(beside[figure.path])}</ul>' if beside[figure.path] else ""
        slides.append(Slide(figure.cell, f'<section class="companion-figure-slide" data-figure="{items}">'
                                         f"<h3>{html.escape(title)}</h3>"
                                         f'<img src="{html.escape(rel, quote=True)}" alt="{items}">{claims_list}</section>'))
    return slides


def explorer_slides(nb: nbformat.NotebookNode) -> list[Slide]:
    """A slide per kernel-free explorer that :func:`site.add_static_explorers` placed in ``nb``."""
    slides = []
    for c, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            content = output.get("data", {}).get("text/html", "")
            if 'class="companion-explorer"' in content:
                slides.append(Slide(c, f'<section class="companion-explorer-slide">{content}</section>'))
    return slides


def write_deck(chapter: str, out: Path | None = None, language: str | None = None) -> Path:
    """Write the deck of ``chapter`` (a slug or its prefix, e.g. ``ch10``) in ``language`` to ``out`` (default
    ``slides/<slug>`` for English, ``slides/<slug>-zh`` for Chinese); return its ``index.html``."""
    language = read_language(language)
    ch = catalog.find(chapter)
    notebook = ch.notebook
    if not notebook.exists():
        raise ValueError(f"{ch.slug} has no executed notebook ({notebook}) to make slides from")
    deck = Path(out) if out is not None else Path("slides") / (ch.slug + ("" if language == "en" else f"-{language}"))
    for generated in ("figures", "_static"):
        if (deck / generated).exists():
            shutil.rmtree(deck / generated)  # no picture of an earlier deck survives
    deck.mkdir(parents=True, exist_ok=True)
    copy_reveal(deck)
    shutil.copy2(EXPLORER_JS, deck / "explorer.js")

    nb = nbformat.read(notebook, as_version=4)
    site.localize_markdown(nb, ch.slug, language)
    title = site.markdown_title(nb, notebook.name)
    site.add_static_explorers(nb, ch.slug, deck, language=language)  # its pictures go to deck/_static/explorers
    body = sorted(figure_slides(notebook, nb, deck, language) + explorer_slides(nb), key=lambda s: s.cell)
    subtitle = tr("Lecture slides of the interactive companion: each figure as the committed notebook drew it, with "
                  "its claims' verdicts; the explorer works without a kernel.", language)
    first = (f'<section class="companion-title"><h2>{html.escape(title)}</h2>'
             f'<p style="font-size:0.6em">{html.escape(subtitle)}</p></section>')
    index = deck / "index.html"
    index.write_text(_page(title, [first, *(s.html for s in body)], language), encoding="utf-8")
    return index


def _page(title: str, sections: list[str], language: str) -> str:
    slides = "\n".join(sections)
    return f"""<!doctype html>
<html lang="{'zh-CN' if language == 'zh' else 'en'}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>{html.escape(title)}</title>
<link rel="stylesheet" href="reveal/reset.css">
<link rel="stylesheet" href="reveal/reveal.css">
<link rel="stylesheet" href="reveal/theme/white.css">
<style>{STYLE}</style>
</head>
<body>
<div class="reveal"><div class="slides">
{slides}
</div></div>
<script src="reveal/reveal.js"></script>
<script src="explorer.js"></script>
<script>Reveal.initialize({{hash: true, width: 1280, height: 800, margin: 0.03, slideNumber: "c/t", center: false}});</script>
</body>
</html>
"""
