"""What ``reproduce`` leaves behind: figures named after the book, and a report page that shows them.

:func:`save_figures` writes every figure an executed chapter drew under the name of the book figure it
reproduces — the 图/表 numbers in the heading of the section that drew it (``图12.14`` → ``fig12.14.png``,
``表11.1`` → ``tab11.1.png``, ASCII so that any file system and URL takes them), with ``-2``, ``-3`` … for
further figures of the same section.  :func:`write_index` writes ``index.html``: per chapter, each claim with
its verdict, measured values and margin beside the figure it checks, then the chapter's other figures, and
the run's profile, seed, versions and times.  The page is self-contained (no script, no network).
"""

from __future__ import annotations

import base64
import html
import platform
import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

import nbformat

from companion.kit.i18n import tr
from companion.tools import catalog

#: A book figure or table: 图8.1, 表11.1, or in English Figure 8.1, Fig. 8.1, Table 7.1 (a panel "(a)" may follow).
BOOK_ITEM = re.compile(r"(?:(?P<zh>[图表])\s?|(?P<en>Figure|Fig\.|Table)\s?)(?P<chapter>\d+)\.(?P<number>\d+)(?:\([a-z]\))?")
#: What may follow a book item and continue it: a range (图8.1–8.4) or a list (图12.9, 12.8; 图13.5/13.6; 图9.1 and
#: 图9.2), its next number with or without its own 图/表.
_MORE_ITEMS = re.compile(r"\s*(?:(?P<range>[–—~-]|至|to)|[,，、/]|and|和)\s*"
                         r"(?:(?P<zh>[图表])\s?|(?P<en>Figure|Fig\.|Table)\s?)?(?P<chapter>\d+)\.(?P<number>\d+)(?:\([a-z]\))?")
ASCII_KIND = {"图": "fig", "表": "tab"}
_ENGLISH_KIND = {"Figure": "图", "Fig.": "图", "Table": "表"}


class ChapterResult(Protocol):
    """What the report needs of a chapter run (:class:`companion.tools.runner.ChapterRun`, which imports this
    module)."""

    slug: str
    seconds: float
    claims: list[Any]
    figures: list[SavedFigure]
    error: str | None
    notebook: Path | None
    stopped: str | None

    @property
    def ok(self) -> bool: ...

    @property
    def not_run(self) -> list[str]: ...

    identities: tuple[str, ...]


@dataclass(frozen=True)
class ClaimCounts:
    """A set of runs' verdicts counted: phenomenon claims that hold of those stated (a chapter that did not finish
    counts the claims it never reached as not run), and, apart, the identities (not reproductions)."""

    passed: int
    claims: int
    not_run: int
    identities_held: int
    identities: int


def count_claims(runs: Sequence[ChapterResult]) -> ClaimCounts:
    """The counts of :class:`ClaimCounts` for ``runs``."""
    not_run = sum(len(r.not_run) for r in runs)
    not_run_identities = sum(cid in r.identities for r in runs for cid in r.not_run)
    identities = [c for r in runs for c in r.claims if c.judged and c.identity]
    return ClaimCounts(passed=sum(c.passed and c.reproduces for r in runs for c in r.claims),
                       claims=sum(c.reproduces for r in runs for c in r.claims) + not_run - not_run_identities,
                       not_run=not_run, identities_held=sum(c.passed for c in identities),
                       identities=len(identities) + not_run_identities)


def identities_clause(counts: ClaimCounts, language: str = "en") -> str:
    """"; 15/15 identities hold (…)", or nothing where the runs state no identity."""
    if not counts.identities:
        return ""
    return "; " + tr("{held}/{identities} identities hold (checks of the mathematics, not counted as claims)",
                     language).format(held=counts.identities_held, identities=counts.identities)


@dataclass(frozen=True)
class SavedFigure:
    """One PNG output of an executed chapter: where it was written and the book figures it reproduces."""

    path: Path
    book_items: tuple[str, ...]  # e.g. ("图13.7", "图13.8"); empty where the section names none
    cell: int
    #: the items every heading above it names ("## 4. … (图9.3, 图9.7)" over "### 图9.7 …"), its own included
    enclosing: tuple[str, ...] = ()
    #: which of the notebook's top sections (level-1 or level-2 headings, counted from 0) drew it
    section: int = 0


def _kind(match: re.Match, default: str) -> str:
    return match["zh"] or _ENGLISH_KIND.get(match["en"] or "", default)


def book_items(text: str) -> tuple[str, ...]:
    """The 图/表 numbers in ``text``, in order, each once, ranges and lists read whole: "…(图13.7, 图13.8)" →
    ("图13.7", "图13.8"); "(图8.1–8.4)" → ("图8.1", "图8.2", "图8.3", "图8.4"); "(图12.9, 12.8)" → ("图12.9", "图12.8");
    "图13.5/13.6" → ("图13.5", "图13.6"); "Table 7.1" → ("表7.1",).

    A number without its own 图/表 continues the list only within the same chapter ("图4.7, 0.51×" names 图4.7 alone;
    "图12.14–13.2" names 图12.14), and a range is filled in only within one chapter and kind."""
    found = []
    for match in BOOK_ITEM.finditer(text):
        kind, chapter, number = _kind(match, "图"), match["chapter"], int(match["number"])
        found.append(f"{kind}{chapter}.{number}")
        more = _MORE_ITEMS.match(text, match.end())
        while more and (more["zh"] or more["en"] or more["chapter"] == chapter):
            next_kind, next_chapter, next_number = _kind(more, kind), more["chapter"], int(more["number"])
            if more["range"] and (next_kind, next_chapter) == (kind, chapter) and number < next_number:
                found += [f"{kind}{chapter}.{n}" for n in range(number + 1, next_number + 1)]
            else:
                found.append(f"{next_kind}{next_chapter}.{next_number}")
            kind, chapter, number = next_kind, next_chapter, next_number
            more = _MORE_ITEMS.match(text, more.end())
    return tuple(dict.fromkeys(found))


def file_stem(items: tuple[str, ...], slug: str, cell: int) -> str:
    """ASCII file name for a figure of the book items ``items`` ("fig13.7_13.8"), else "<slug>-cell07"."""
    if not items:
        return f"{slug}-cell{cell:02d}"
    first_kind = ASCII_KIND[items[0][0]]
    return first_kind + "_".join(item[1:] if ASCII_KIND[item[0]] == first_kind else ASCII_KIND[item[0]] + item[1:]
                                 for item in items)


def section_items(nb: nbformat.NotebookNode) -> list[tuple[str, ...]]:
    """For each cell, the book items of the section it belongs to: those named in the latest heading, or —
    where that heading names none — those the section's text mentions first."""
    current: tuple[str, ...] = ()
    from_heading = False
    per_cell = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            headings = [line for line in cell.source.splitlines() if line.lstrip().startswith("#")]
            if headings:
                current = book_items("\n".join(headings))
                from_heading = bool(current)
            if not from_heading:
                current = tuple(dict.fromkeys(current + book_items(cell.source)))
        per_cell.append(current)
    return per_cell


def section_context(nb: nbformat.NotebookNode) -> list[tuple[tuple[str, ...], int]]:
    """For each cell, the book items all the headings above it name (a "## …" heading and the "### …" inside it) and
    the index of its top section (the level-1 or level-2 headings seen so far, less one)."""
    stack: list[tuple[int, tuple[str, ...]]] = []
    top = -1
    per_cell = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                heading = re.match(r"\s*(#+)\s", line)
                if heading:
                    level = len(heading[1])
                    stack = [(lv, items) for lv, items in stack if lv < level] + [(level, book_items(line))]
                    top += level <= 2
        per_cell.append((tuple(dict.fromkeys(i for _, items in stack for i in items)), max(top, 0)))
    return per_cell


def claim_cells(nb: nbformat.NotebookNode) -> dict[tuple[str, str], int]:
    """The cell that printed each verdict line of the executed ``nb``, by its (figure, sentence) as printed."""
    from companion.kit.claims import VERDICT_LINE

    cells: dict[tuple[str, str], int] = {}
    for c, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            text = output.get("text", "") if output.get("output_type") == "stream" else ""
            for line in ("".join(text) if isinstance(text, list) else text).splitlines():
                match = VERDICT_LINE.match(line)
                if match:
                    cells.setdefault((match["figure"], match["text"]), c)
    return cells


def save_figures(nb: nbformat.NotebookNode, folder: Path, slug: str) -> list[SavedFigure]:
    """Write every PNG output of the executed ``nb`` into ``folder``, named by :func:`file_stem`."""
    folder.mkdir(parents=True, exist_ok=True)
    saved: list[SavedFigure] = []
    used: dict[str, int] = {}
    for c, (cell, items, (enclosing, section)) in enumerate(zip(nb.cells, section_items(nb), section_context(nb))):
        for output in cell.get("outputs", []):
            png = output.get("data", {}).get("image/png")
            if not png:
                continue
            stem = file_stem(items, slug, c)
            used[stem] = used.get(stem, 0) + 1
            path = folder / (f"{stem}.png" if used[stem] == 1 else f"{stem}-{used[stem]}.png")
            path.write_bytes(base64.b64decode(png))
            saved.append(SavedFigure(path, items, c, tuple(dict.fromkeys(enclosing + items)), section))
    return saved


def not_run_reason(runs: list[ChapterResult], language: str = "en") -> str:
    """Which chapters stopped before their end, leaving claims not run, and why: "ch13_complexity_control timed
    out"."""
    words = {"raised": tr("raised", language), "timed out": tr("timed out", language),
             "kernel died": tr("kernel died", language)}
    return ", ".join(f"{r.slug} {words.get(r.stopped or 'raised', r.stopped)}" for r in runs if r.not_run)


def _versions() -> dict[str, str]:
    import numpy
    import torch

    try:
        commit = subprocess.run(["git", "-C", str(catalog.ROOT), "rev-parse", "--short=12", "HEAD"],
                                capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return {"python": platform.python_version(), "torch": torch.__version__, "numpy": numpy.__version__,
            "machine": f"{platform.machine()}, {platform.system()}", "commit": commit or "unknown"}


def _claim_items(figure: str) -> tuple[str, ...]:
    """The book items a claim names: "图13.5/13.6" → ("图13.5", "图13.6"); "图8.1–8.4" → 图8.1 … 图8.4; "§12.5.1" → ()."""
    return book_items(figure)


def claim_figures(claim: Any, figures: Sequence[SavedFigure], section: int | None = None) -> list[SavedFigure]:
    """The figures shown beside ``claim``: those drawn under the name of a book item it names ("图8.3", or any of a
    range "图8.1–8.4"); else those drawn in a section whose headings name it ("## 4. … (图9.3, 图9.7)" over a figure of
    "### 图9.7"); else — it names a book item no figure is drawn under — those of the top section whose cell printed
    its verdict (``section``, of :func:`section_context`).  A claim that names no figure or table (§12.5.1, (11.10))
    gets none."""
    items = set(_claim_items(claim.figure))
    if not items:
        return []
    for found in ([f for f in figures if items & set(f.book_items)], [f for f in figures if items & set(f.enclosing)]):
        if found:
            return found
    return [f for f in figures if f.section == section] if section is not None else []


def _verdict(claim, language: str = "en") -> tuple[str, str]:
    if claim.smoke:
        return tr("smoke (not judged)", language), "explore"
    if claim.exploration:
        return tr("explored", language), "explore"
    if claim.identity:
        return (tr("identity holds", language), "pass") if claim.passed else (tr("identity FAILS", language), "fail")
    if not claim.passed:
        return tr("FAILS", language), "fail"
    return (tr("holds (thin margin)", language) if claim.thin else tr("holds", language)), "pass"


def _condition(c: dict) -> str:
    """One logged condition as "lhs = value op [rhs =] bound"."""
    value, bound = c.get("value"), c.get("bound")
    if not (isinstance(value, (int, float)) and isinstance(bound, (int, float))):
        return f"{c.get('lhs', '?')}: {value}"
    rhs = f"{c['rhs']} = " if c.get("rhs") else ""
    return f"{c['lhs']} = {value:.4g} {c['op']} {rhs}{bound:.4g}"


def _img(figure: SavedFigure, out: Path) -> str:
    rel = figure.path.relative_to(out).as_posix()
    label = ", ".join(figure.book_items) or f"cell {figure.cell}"
    return f'<figure><img src="{html.escape(rel)}" alt="{html.escape(label)}"><figcaption>{html.escape(label)} ' \
           f'— <a href="{html.escape(rel)}">{html.escape(figure.path.name)}</a></figcaption></figure>'


def claim_sections(notebook: Path | None) -> dict[tuple[str, str], int]:
    """The top section (:func:`section_context`) whose cell printed each verdict of the executed ``notebook``, by the
    (figure, sentence) it printed."""
    if notebook is None or not notebook.exists():
        return {}
    nb = nbformat.read(notebook, as_version=4)
    context = section_context(nb)
    return {key: context[c][1] for key, c in claim_cells(nb).items()}


STYLE = """body{font-family:system-ui,"Noto Sans CJK SC",sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}
.pass{color:#17612a}.fail{color:#b00020;font-weight:bold}.explore{color:#7a5b00}
.claim{border-top:1px solid #ddd;padding:.6em 0}figure{display:inline-block;margin:.4em 1em .4em 0}
img{max-width:520px;max-height:360px;border:1px solid #eee}code{font-size:90%}"""


def write_index(runs: list[ChapterResult], out: Path, profile: str, seed: int, language: str = "en") -> Path:
    """Write ``out/index.html``: the reproduction report of ``runs`` (see the module docstring), in ``language``."""
    meta = {tr("profile", language): profile, tr("seed", language): str(seed), **_versions(),
            tr("made", language): datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            tr("notebook time", language): f"{sum(r.seconds for r in runs):.0f} s"}
    counts = count_claims(runs)
    not_run = " " + tr("{not_run} not run ({why}).", language).format(
        not_run=counts.not_run, why=not_run_reason(runs, language)) if counts.not_run else ""
    identities = " " + identities_clause(counts, language)[2:] + "." if counts.identities else ""
    title = html.escape(tr("Reproduction report", language))
    parts = [f"<!doctype html><html lang='{language}'><head><meta charset='utf-8'><title>{title}</title>"
             f"<style>{STYLE}</style></head><body><h1>{title}</h1>",
             "<p id='summary'>" + html.escape(tr("{passed} of {claims} claims hold; {clean} of {chapters} chapters ran "
                                                 "clean.", language).format(passed=counts.passed, claims=counts.claims,
                                                                            clean=sum(r.ok for r in runs),
                                                                            chapters=len(runs)) + not_run + identities) +
             "</p><table id='run'>",
             *(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in meta.items()),
             f"</table><h2>{tr('Chapters', language)}</h2><table id='chapters'><tr><th>{tr('chapter', language)}</th>"
             f"<th>{tr('status', language)}</th><th>{tr('claims', language)}</th><th>{tr('figures', language)}</th>"
             f"<th>{tr('seconds', language)}</th></tr>"]
    for run in runs:
        status = "ok" if run.ok else tr("error: {error}", language).format(error=run.error) if run.error else \
            tr("a claim failed", language)
        slug = html.escape(run.slug, quote=True)
        parts.append(f"<tr><td><a href='#{slug}'>{slug}</a></td><td class='{'pass' if run.ok else 'fail'}'>"
                     f"{html.escape(status)}</td><td>{len(run.claims)}</td><td>{len(run.figures)}</td>"
                     f"<td>{run.seconds:.1f}</td></tr>")
    parts.append("</table>")
    for run in runs:
        shown: set[Path] = set()
        sections = claim_sections(run.notebook)
        notebook = f" — <a href='{html.escape(run.notebook.relative_to(out).as_posix())}'>" \
            f"{tr('executed notebook', language)}</a>" if run.notebook else ""
        parts.append(f"<h2 id='{html.escape(run.slug, quote=True)}'>{html.escape(run.slug)}</h2>"
                     f"<p>{run.seconds:.1f} s{notebook}</p>")
        if run.error:
            parts.append(f"<p class='fail'>{tr('The notebook raised:', language)} {html.escape(run.error)}</p>")
        for claim in run.claims:
            word, css = _verdict(claim, language)
            margin = "never" if claim.margin is None else f"{claim.margin:+.3g} {claim.unit}"
            measured = "; ".join(map(_condition, claim.conditions))
            extra = "; ".join(f"{k} = {v}" for k, v in claim.measured.items())
            section = next((sections[k] for k in ((claim.figure, claim.text), (claim.figure, tr(claim.text, language)))
                            if k in sections), None)  # the notebook printed it in English or in ``language``
            figures = claim_figures(claim, run.figures, section)
            shown.update(f.path for f in figures)
            parts.append(f"<div class='claim' data-claim='{html.escape(claim.id)}'><p><b class='{css}'>{word}</b> "
                         f"<code>{html.escape(claim.id)}</code> [{html.escape(claim.figure)}] "
                         f"{html.escape(tr(claim.text, language))}</p><p>{tr('measured:', language)} "
                         f"{html.escape(measured)}{'; ' + html.escape(extra) if extra else ''}; "
                         f"{tr('margin', language)} {html.escape(margin)}</p>{''.join(_img(f, out) for f in figures)}"
                         "</div>")
        rest = [f for f in run.figures if f.path not in shown]
        if rest:
            parts.append(f"<h3>{tr('Other figures', language)}</h3>" + "".join(_img(f, out) for f in rest))
    parts.append("</body></html>")
    index = out / "index.html"
    index.write_text("\n".join(parts), encoding="utf-8")
    return index
