"""The book site: stage ``book/`` and the committed chapter notebooks, then build them with Jupyter Book.

The chapters live in ``chapters/`` (outside the book's folder), so a build first *stages* a
source folder: the hand-written pages of ``book/`` (landing page, glossary, configuration, the
local Sphinx extension), a copy of every executed ``chapters/chNN_*.ipynb`` that exists, and
these generated files:

* ``_toc.yml`` — the landing page, one page per chapter in the book's order, the claims page
  and the glossary;
* ``_chapter_map.md`` — the table notebook ↔ book chapter ↔ figures (from :mod:`companion.tools.catalog`),
  included by the landing page;
* ``coverage.md`` — every figure and table of chapters 4–15 with its status (from the catalog);
* ``claims.md`` — every claim the committed notebooks checked, read from their outputs
  (the ``✔ CLAIM HOLDS [figure] text`` lines that :func:`companion.kit.claims.show` prints);
* in each chapter page, the explorer's widget output (empty without a kernel) replaced by its kernel-free
  version, sliders over the pictures that ``python -m companion precompute`` committed under ``explorers/``;
* after each exercise of a chapter page, its worked solution (:mod:`companion.solutions`) in a toggle;
* ``robustness.md`` — the committed robustness report (``robustness/report.json``): every claim's
  pass count over seeds and its margins, each chapter's pass count, and a mark on the chapters whose
  code changed since the report was made (stale).

The notebooks are shown with their committed outputs; nothing is executed at build time::

    python -m companion book            # → book/_build/html/index.html
"""

from __future__ import annotations

import html
import importlib.util
import json
import math
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import nbformat
import yaml

from companion.kit import grids, i18n
from companion.kit.claims import (EXPLORATION, EXPLORATION_MARK, IDENTITY, IDENTITY_FAIL_MARK, IDENTITY_PASS_MARK,
                                   PASS_MARK, VERDICT_LINE, localize_verdict_line)
from companion.kit.exercises import localize_feedback_line
from companion.kit.i18n import tr
from companion.tools import catalog, fidelity, launch, precompute, worked

BOOK_DIR = catalog.ROOT / "book"
#: The editions: English at the site's root, Chinese under ``zh/`` (hand-written pages in ``book/zh/``).
EDITIONS = {"en": "", "zh": "zh"}
_NOTEBOOK_NAME = re.compile(r"^ch\d\d[a-z]?_\w+\.ipynb$")  # ch12b_…: a later part of chapter 12


@dataclass(frozen=True)
class ClaimRecord:
    """One claim as a committed notebook printed it."""

    chapter: str
    figure: str
    text: str
    holds: bool
    exploration: bool = False
    identity: bool = False  # a check of the mathematics (✔ IDENTITY HOLDS), not a reproduced phenomenon


def chapter_notebooks(chapters_dir: Path | None = None) -> list[Path]:
    """The executed chapter notebooks that exist (in ``chapters/`` by default), in the book's order.

    Notebooks the catalog knows come in its order (the papers' notebook, ``icl_papers``, after chapter 15); any other
    ``chNN_*.ipynb`` follows by name.
    """
    chapters_dir = catalog.CHAPTERS_DIR if chapters_dir is None else chapters_dir
    slugs = {c.slug for c in catalog.CHAPTERS}
    found = {p.stem: p for p in chapters_dir.glob("*.ipynb") if _NOTEBOOK_NAME.match(p.name) or p.stem in slugs}
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
                match = VERDICT_LINE.match(line)
                if match:
                    mark = match["mark"]
                    records.append(ClaimRecord(notebook.stem, match["figure"], match["text"],
                                               mark in (PASS_MARK, IDENTITY_PASS_MARK), mark == EXPLORATION_MARK,
                                               mark in (IDENTITY_PASS_MARK, IDENTITY_FAIL_MARK)))
    return records


def edition_title(notebook: Path, language: str = "en") -> str:
    """The page title of ``notebook`` in ``language``'s edition."""
    nb = nbformat.read(notebook, as_version=4)
    localize_markdown(nb, notebook.stem, language)
    return markdown_title(nb, notebook.name)


def notebook_title(notebook: Path) -> str:
    """The text of the first level-1 heading of ``notebook`` (its page title)."""
    return markdown_title(nbformat.read(notebook, as_version=4), notebook.name)


def markdown_title(nb: nbformat.NotebookNode, name: str) -> str:
    """The text of the first level-1 heading of ``nb``."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    raise ValueError(f"{name} has no level-1 heading ('# Title'): the book needs one per chapter page")


def toc_yaml(chapter_pages: list[str], language: str = "en") -> str:
    """The ``_toc.yml`` of the site: landing page, chapters (in order), coverage, claims, robustness, glossary."""
    lines = ["format: jb-book", "root: intro", "parts:"]
    if chapter_pages:
        lines += [f"  - caption: {tr('Chapters', language)}", "    chapters:"] + [f"      - file: {p}" for p in chapter_pages]
    lines += [f"  - caption: {tr('Reference', language)}", "    chapters:", "      - file: coverage", "      - file: claims",
              "      - file: robustness",
              "      - file: glossary"]
    return "\n".join(lines) + "\n"


def chapter_map_markdown(built: list[str], language: str = "en") -> str:
    """The chapter map of the landing page: the catalog's, each notebook linked when its page is ``built``."""
    table = fidelity.chapter_map_markdown(language, coverage_link="coverage.md")
    for slug in built:
        table = table.replace(f"| `{slug}` |", f"| [`{slug}`]({slug}.ipynb) |")
    return table + "\n"


def claims_markdown(notebooks: list[Path], language: str = "en") -> str:
    """The claims page: one table per chapter listing each claim and the figure it reproduces."""
    claims = {notebook: read_claims(notebook) for notebook in notebooks}
    total = sum(not (r.exploration or r.identity) for records in claims.values() for r in records)
    identities = sum(r.identity for records in claims.values() for r in records)
    explorations = sum(r.exploration for records in claims.values() for r in records)
    parts = ["# " + tr("Claims checked by the notebooks", language), "",
             tr("Every claim below is a sentence of the book turned into measured comparisons that fail when the "
                "phenomenon is absent (each has a negative control in the tests). The notebooks check them each time they "
                "run; how often each holds over seeds 0–19 is on the [robustness page](robustness.md). This page lists the "
                "verdicts printed in the committed notebooks (seed 0): {claims} claims and {explorations} explorations (a "
                "phenomenon that does not reproduce robustly at CPU scale, shown with its pass rate instead of a verdict) "
                "in {notebooks} notebooks.", language).format(claims=total, explorations=explorations,
                                                             notebooks=len(notebooks)), ""]
    if identities:
        parts[-1:-1] = [tr("Besides these, {identities} identities check a theorem or formula that holds by construction "
                           "when the code is right (marked ✔ identity): they verify the mathematics and are not counted "
                           "as reproduced phenomena.", language).format(identities=identities)]
    for notebook, records in claims.items():
        parts += [f"## [{catalog.table_cell(edition_title(notebook, language))}]({notebook.name})", ""]
        if not records:
            parts += [tr("This notebook checks no claim yet.", language), ""]
            continue
        parts += [f"| {tr('Figure', language)} | {tr('Claim', language)} | {tr('Verdict', language)} |",
                  "| --- | --- | --- |"]
        parts += [f"| {_breakable(catalog.table_cell(r.figure))} | {catalog.table_cell(tr(r.text, language))} | "
                  f"{verdict_words(r, language)} |" for r in records]
        parts.append("")
    if not notebooks:
        parts += [tr("No chapter notebook has been committed yet.", language), ""]
    page = "\n".join(parts)
    return page if language == "en" else join_chinese_lines(page)  # two sentences on two lines: one paragraph


def _breakable(cell: str) -> str:
    """A table cell that may break after each "/" (a zero-width space): "(10.14)/(10.15)/(10.17)" would otherwise widen
    its column past the page's (book/_static/companion.css)."""
    return cell.replace("/", "/\u200b")


def verdict_words(record: ClaimRecord, language: str = "en") -> str:
    """A claim's verdict and kind in a few words, as the claims page and the slides show it: "✔ holds",
    "✘ fails", "◇ exploration", "✔ identity" or "✘ identity fails"."""
    if record.exploration:
        return tr("◇ exploration", language)
    if record.identity:
        return tr("✔ identity", language) if record.holds else tr("✘ identity fails", language)
    return tr("✔ holds", language) if record.holds else tr("✘ fails", language)


def robustness_markdown(report: dict | None, stale: list[str], language: str = "en") -> str:
    """The robustness page: the committed 20-seed report, per claim and per chapter, stale rows marked."""
    from companion.tools.robustness import claim_kind  # robustness imports the runner: not at start-up
    parts = ["# " + tr("Robustness over seeds", language), "",
             tr("A claim counts as reproduced only if it holds on at least 19 of 20 seeds (0–19) in the quick profile, "
                "each chapter as a whole (all its claims on one seed) on at least 18 of 20, with a median margin above "
                "the thin line. The **margin** is how far a claim's tightest condition is from flipping: `rel` is the "
                "slack as a fraction of the threshold (or of the larger of two compared values), `sd` the slack in "
                "units of the quantity's measured spread, `count` the distance in counts. A margin below 0.05 rel, "
                "0.5 sd or 1 count is *thin*. Made with `python -m companion robustness --seeds 0-19`; after a change "
                "meant not to move any claim, `--restamp --seeds 0,1` reruns the changed chapters on those seeds and "
                "carries a chapter's rows over only where every verdict and margin came out exactly as in the report.",
                language), ""]
    if not report:
        return "\n".join(parts + [tr("No robustness report has been committed yet (`robustness/report.json`).",
                                     language), ""])
    wall = report.get("wall_seconds")
    made = tr("Profile `{profile}`, seeds {first}–{last}, torch {torch}, {machine}, made {made}.", language).format(
        profile=report["profile"], first=report["seeds"][0], last=report["seeds"][-1], torch=report["torch"],
        machine=report["machine"], made=report["made_at"])
    if wall:
        made += " " + tr("{minutes:.0f} min wall with {jobs} jobs.", language).format(minutes=wall / 60,
                                                                                 jobs=report["jobs"])
    parts += [made, ""]
    if stale:
        parts += [":::{warning}", tr("The code of {chapters} changed since this report was made: its rows below are "
                                     "**stale** until the report is made again.", language).format(
            chapters=", ".join(f"`{s}`" for s in stale)), ":::", ""]
    parts += ["## " + tr("Chapters", language), "",
              f"| {tr('Chapter', language)} | {tr('Whole chapter passes', language)} | {tr('Median s/run', language)} | "
              f"{tr('Commit', language)} | {tr('Status', language)} |", "| --- | --- | --- | --- | --- |"]
    for slug, ch in report["chapters"].items():
        secs = sorted(run["seconds"] for run in ch["seeds"].values())
        claimless = _explorations_only(ch)
        if slug in stale:
            status = tr("stale", language)
        elif not ch.get("complete", True):
            status = tr("incomplete: {runs} of {seeds} seeds run", language).format(
                runs=ch["runs"], seeds=len(ch.get("validation_seeds") or report["seeds"]))
        elif claimless:
            status = tr("no claim to judge", language)
        else:
            status = tr("✔ meets the standard", language) if ch["meets_standard"] else tr("✘ below", language)
            if ch.get("restamped"):
                seeds = ", ".join(str(s) for s in ch["restamped"]["seeds"])
                status += " · " + tr("carried over, seeds {seeds} rerun", language).format(seeds=seeds)
        passes = "—" if claimless else f"{ch['passed']}/{ch['runs']}"
        parts.append(f"| [{slug}]({slug}.ipynb) | {passes} | {secs[len(secs) // 2]:.0f} | "
                     f"`{ch['commit']}` | {status} |")
    parts += ["", "## " + tr("Claims", language), "",
              f"| {tr('Claim', language)} | {tr('Figure', language)} | {tr('Passes', language)} | "
              f"{tr('Min margin', language)} | {tr('Median margin', language)} | {tr('Validation seeds', language)} | "
              f"{tr('Status', language)} |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for cid, c in report["claims"].items():
        if c["chapter"] in stale:
            status = tr("stale", language)
        elif not c.get("complete", report["chapters"][c["chapter"]].get("complete", True)):
            status = tr("incomplete", language)
        elif c["exploration"]:
            status = tr("◇ exploration", language)
        elif claim_kind(c) == IDENTITY:
            status = tr("✔ identity (not a reproduction)", language) if c["meets_standard"] else tr("✘ identity fails", language)
        else:
            status = "✔" if c["meets_standard"] else tr("✘ below", language)
        parts.append(f"| `{cid}` | {_breakable(catalog.table_cell(c['figure']))} | {c['passed']}/{c['runs']} | {fidelity.margin_text(c.get('min_margin'))} "
                     f"| {fidelity.margin_text(c.get('median_margin'))} | {_validation_cell(c, language)} | {status} |")
    return "\n".join(parts) + "\n"


def full_profile_markdown(report: dict | None, stale: list[str], language: str = "en") -> str:
    """The robustness page's section on the full profile (the book's scale): its own report,
    ``robustness/report-full.json``, made in device windows or on the CPU; a claim holds there only on every measured
    seed."""
    parts = ["## " + tr("The full profile (the book's scale)", language), "",
             tr("The full profile runs the book's sizes (the repository's `docs/full-profile.md`). Its report, "
                "`robustness/report-full.json`, is kept apart from the quick one and made in device windows (or on "
                "the CPU, for the chapters whose full profile fits one; the machine is named below): "
                "`python -m companion robustness --profile full --seeds 0-4 --missing --budget 780` runs what the "
                "report lacks, writes each run as it finishes, and windows on other machines are joined with "
                "`--merge`. A claim counts as holding at the full profile only if it holds on every seed measured "
                "(at least five; for a claim changed after its results on seeds 0–19 were seen, five of the fresh "
                "seeds 500–519), with its median margin above the thin line; the coverage page marks a figure whose claim meets that "
                "standard here, and not in the quick profile, as faithful at the full profile.", language), ""]
    if not report:
        return "\n".join(parts + [tr("No full-profile report has been committed yet: on a 2-core CPU most chapters' "
                                     "full profile takes hours, and no GPU window has run it since the report "
                                     "existed (the one measurement so far, on seed 0, is in `docs/full-profile.md`).",
                                     language), ""])
    from companion.tools.robustness import run_on_text, seed_text, unjudged_seeds

    def shown(seeds) -> str:  # "0–4, 500, 501": a long list wraps instead of widening the table
        return seed_text(seeds).replace("-", "–").replace(",", ", ")

    parts += [tr("Seeds {seeds}, torch {torch}, {machine}, made {made}.", language).format(
        seeds=shown(report["seeds"]), torch=report["torch"], machine=report["machine"],
        made=report["made_at"]), ""]
    parts += [f"| {tr('Chapter', language)} | {tr('Seeds measured', language)} | {tr('Run on', language)} "
              f"| {tr('Whole chapter passes', language)} | {tr('s/run: median (range)', language)} "
              f"| {tr('Status', language)} |",
              "| --- | --- | --- | --- | --- | --- |"]
    for slug, ch in report["chapters"].items():
        secs = sorted(run["seconds"] for run in ch["seeds"].values())
        claimless = _explorations_only(ch)
        status = (tr("stale", language) if slug in stale else
                  tr("no claim to judge", language) if claimless else
                  tr("✔ holds on every measured seed", language) if ch["passed"] == ch["runs"] else
                  tr("✘ fails on {n} of {runs} seeds", language).format(n=ch["runs"] - ch["passed"], runs=ch["runs"]))
        waiting = [c for c in report["claims"].values()
                   if not c.get("complete", True) and c["chapter"] == slug and not c["exploration"]]
        if waiting and slug not in stale:  # judged on seeds it has not run (500–504 for a claim changed after 0–19)
            seeds = sorted(set().union(*(unjudged_seeds(c, report) for c in waiting)))
            words = (tr("not judged yet: {n} of its claims, on seed {seeds} still to run", language) if len(seeds) == 1
                     else tr("not judged yet: {n} of its claims, on seeds {seeds} still to run", language))
            status += " · " + words.format(n=len(waiting), seeds=shown(seeds))
        passes = "—" if claimless else f"{ch['passed']}/{ch['runs']}"
        parts.append(f"| [{slug}]({slug}.ipynb) | {shown(ch['seeds'])} | "
                     f"{run_on_text(ch['seeds']).replace(',', ', ')} | {passes} | {secs[len(secs) // 2]:.0f} "
                     f"({secs[0]:.0f}–{secs[-1]:.0f}) | {status} |")
    parts += ["", tr("The seconds are those of the sweep that made each result. A run whose trained models were "
                     "already in the results cache (the same computation judged again, e.g. after a claim was added) "
                     "takes seconds where computing them took up to hours; the computed times are in "
                     "`docs/full-profile.md`.", language)]
    failing = []  # counted on every seed measured (a claim holds at the full profile only if it holds on all)
    for cid, c in report["claims"].items():
        runs = list(c["seeds"].values())
        held = sum(bool(r and r["passed"]) for r in runs)
        thin = held == len(runs) and c.get("meets_standard") is False and c.get("complete", True)
        if not c["exploration"] and (held < len(runs) or thin):
            worst = min(runs, key=lambda r: (r["passed"], -math.inf if r["margin"] is None else r["margin"]))
            failing.append(f"| `{cid}` | {_breakable(catalog.table_cell(c['figure']))} | {held}/{len(runs)}"
                           f"{' ' + tr('(thin: median margin below the thin line)', language) if thin else ''} | "
                           f"{fidelity.margin_text({'margin': worst['margin'], 'unit': worst['unit']})} |")
    if failing:
        parts += ["", tr("Claims that fail on some measured seed, or hold on every one only thinly:", language), "",
                  f"| {tr('Claim', language)} | {tr('Figure', language)} | {tr('Passes', language)} | "
                  f"{tr('Worst margin', language)} |", "| --- | --- | --- | --- |", *failing]
    return "\n".join(parts) + "\n"


def _explorations_only(chapter: dict) -> bool:
    """Whether a report's chapter judged no claim on any seed (all it states are explorations, as chapter 13's second
    part): its runs "pass" with nothing to fail, so the pages say so instead of a ✔."""
    return all(run.get("claims") == 0 for run in chapter["seeds"].values())


def _validation_cell(claim: dict, language: str) -> str:
    """The seeds that validate a claim, e.g. ``0–19``, and its pass count on the other seeds its chapter ran: for one
    changed after its 0–19 results were seen (validated on ``500–519``) those are marked in-sample; for the others
    they are further seeds, shown as such (ch12.working-memory: 0–19 · other seeds 15/20)."""
    from companion.tools.robustness import seed_text

    seeds = seed_text(claim.get("validation_seeds") or range(20))
    extra = claim.get("other_seeds")
    if not extra or not extra.get("runs"):
        return seeds.replace("-", "–")
    words = tr("in-sample {passed}/{runs}", language) if seeds != "0-19" else tr("other seeds {passed}/{runs}", language)
    return seeds.replace("-", "–") + " · " + words.format(**extra)


def robustness_file(profile: str = "quick") -> Path:
    """The committed robustness report of ``profile`` (``robustness/report.json`` or ``report-full.json``)."""
    from companion.tools import robustness

    return robustness.report_path(robustness.REPORT_DIR, profile)


def read_robustness(path: Path | None = None) -> tuple[dict | None, list[str]]:
    """The committed robustness report (default: the quick profile's, :func:`robustness_file`), or None, and the
    chapters that changed since it was made."""
    from companion.tools import robustness

    path = robustness_file() if path is None else path
    if not path.exists():
        return None, []
    report = json.loads(path.read_text(encoding="utf-8"))
    return report, robustness.stale_chapters(report)


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
#: The landing page's section with the commands that open a chapter in JupyterLab (its label in book/intro.md, in
#: both editions), and the launch buttons' paragraph when the site has a repository: where an explorer's note points.
RUN_IT_YOURSELF = "intro.html#run-it-yourself"


def _ascending(values: list) -> list:
    """A control's values as its slider runs through them: numbers ascending, words in the grid's order."""
    numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
    return sorted(values) if numeric else list(values)


def applies_when(grid: dict, name: str, language: str = "en") -> tuple[dict[str, list[int]], str]:
    """Where control ``name`` of a grid changes the picture (:func:`companion.kit.grids.applies_when`): the other
    control's value indices at which it does, and the note saying so in ``language``; empty for a control that
    always does."""
    condition, note = grids.applies_when(grid, name, language)
    return {other: [i for i, v in enumerate(grid["controls"][other]["values"]) if v in allowed]
            for other, allowed in condition.items()}, note


def explorer_html(grid: dict, base: str, language: str = "en", width: int | None = None) -> str:
    """The kernel-free explorer of a precomputed grid (:mod:`companion.tools.precompute`): a menu (words) or a
    slider (numbers, ascending left to right) per gridded control, disabled where it changes nothing (with a note
    saying when it applies: :func:`applies_when`), the picture of the chosen point (``width`` pixels wide, shown at
    the density of :data:`companion.tools.precompute.DISPLAY_DPI`), and what was precomputed."""
    start = [int(i) for i in grid["start"].split(",")]
    rows = []
    for (raw_name, control), index in zip(grid["controls"].items(), start):
        name = html.escape(raw_name, quote=True)  # from the committed grid.json: escaped like every other value
        values, label = control["values"], html.escape(tr(control["label"], language))
        condition, applies_note = applies_when(grid, raw_name, language)
        applies = f' data-applies="{html.escape(json.dumps(condition), quote=True)}"' if condition else ""
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            # the slider runs through the values in ascending order, whatever their order in the grid (ch11's keep
            # probability is gridded 1, 0.7): its position p stands for the grid's value data-order[p]
            order = sorted(range(len(values)), key=lambda i: values[i])
            ordered = f' data-order="{json.dumps(order)}"' if order != list(range(len(values))) else ""
            widget = (f'<input type="range" data-control="{name}" min="0" max="{len(values) - 1}" step="1" '
                      f'value="{order.index(index)}" aria-label="{label}"{ordered}{applies}> '
                      f'<output data-for="{name}"></output>')
        else:
            options = "".join(f'<option value="{i}"{" selected" if i == index else ""}>{html.escape(str(v))}</option>'
                              for i, v in enumerate(values))
            widget = f'<select data-control="{name}" aria-label="{label}"{applies}>{options}</select>'
        aside = f' <small class="companion-explorer-applies">({html.escape(applies_note)})</small>' if applies_note else ""
        rows.append(f'<label style="display:inline-block;margin:0 1.5em 0.3em 0">{label} {widget}{aside}</label>')
    fixed = [f"{html.escape(n)} = {html.escape(grids.value_text(v))}" for n, v in grid["defaults"].items()
             if n not in grid["controls"]]
    listed = "; ".join(f"{html.escape(tr(c['label'], language))} ∈ "
                       f"{{{', '.join(html.escape(grids.value_text(v)) for v in _ascending(c['values']))}}}"
                       for c in grid["controls"].values())
    others = tr("; the other controls at {values}", language).format(values=", ".join(fixed)) if fixed else ""
    note = ("<p class='companion-explorer-note'>" + tr(
        "Precomputed without a kernel ({runs} runs, seed 0, quick profile): {listed}{others}. For any other value, "
        "<a href=\"{run}\">open this notebook in JupyterLab</a>: its live explorer retrains as you move a control "
        "(<code>python -m companion precompute</code> remakes these pictures).", language).format(
        runs=len(grid["points"]), listed=listed, others=others, run=RUN_IT_YOURSELF) + "</p>")
    # the picture's alt text is made from these by book/_static/explorer.js: in the edition's words, like the labels
    controls = {n: {**c, "label": tr(c["label"], language)} for n, c in grid["controls"].items()}
    data = json.dumps({"title": tr(grid["title"], language), "controls": controls,
                       "points": [{"key": p["key"], "file": p["file"]} for p in grid["points"]]},
                      ensure_ascii=False).replace("</", "<\\/")  # no "</script>" inside the script
    density = precompute.DISPLAY_DPI / grid.get("dpi", precompute.DISPLAY_DPI)  # an older grid: drawn at 80 dpi
    shown_width = f' width="{round(width * density)}"' if width else ""
    return (f'<div class="companion-explorer" data-base="{html.escape(base)}"><p><b>'
            f'{html.escape(tr(grid["title"], language))}</b></p><div class="companion-explorer-controls">{"".join(rows)}</div>'
            f'<img class="companion-explorer-figure" src="" alt=""{shown_width} style="max-width:100%;height:auto">{note}'
            f'<script type="application/json">{data}</script></div>')


def live_only_note(language: str = "en") -> str:
    """What a page shows where a panel needs a kernel."""
    return ("<p class='companion-explorer-note'>" + tr(
        "This panel runs in a live kernel only: <a href=\"{run}\">open the notebook in JupyterLab</a> and run it to "
        "move its controls.", language).format(run=RUN_IT_YOURSELF) + "</p>")


def add_static_explorers(nb: nbformat.NotebookNode, slug: str, source: Path, grid_root: Path | None = None,
                         language: str = "en") -> int:
    """Replace the widget outputs of ``nb`` (empty without a kernel) by the chapter's kernel-free explorer — the
    first such output, with its pictures copied under ``source/_static/explorers/<slug>`` — or, for further
    panels or a chapter without a grid, by a note that the panel needs a kernel.  Returns how many explorers
    were placed."""

    grid = grids.read_grid(slug, grid_root)
    placed = 0
    for cell in nb.cells:
        outputs = cell.get("outputs", [])
        if not any(WIDGET_VIEW in out.get("data", {}) for out in outputs):
            continue
        if grid is not None and not placed:
            target = source / "_static" / "explorers" / slug
            target.mkdir(parents=True, exist_ok=True)
            for point in grid["points"]:
                shutil.copy2((grids.GRID_DIR if grid_root is None else grid_root) / slug / point["file"], target)
            from PIL import Image

            with Image.open(target / grid["points"][0]["file"]) as picture:  # every point's is as wide
                width = picture.width
            content = explorer_html(grid, f"_static/explorers/{slug}", language, width)
            placed += 1
        else:
            content = live_only_note(language)
        cell["outputs"] = [nbformat.v4.new_output("display_data", data={"text/html": content})]
    return placed


#: The line of an exercise pointing to its worked solution (defined with the solutions' results).
_WORKED_LINE = worked.WORKED_LINE


def solution_label(label: str, language: str = "en") -> str:
    """A worked solution's label in ``language``: the book's 习题N as is, "Exercise N" and "Open questions" translated."""
    exercise = re.fullmatch(r"Exercise (\d+)", label)
    if exercise:
        return tr("Exercise {n}", language).format(n=exercise[1])
    return tr("Open questions", language) if label == "Open questions" else label


def solution_output_markdown(slug: str, label: str, language: str = "en", source: Path | None = None) -> str:
    """What worked solution ``label`` of notebook ``slug`` printed and drew when its code ran once
    (:mod:`companion.tools.worked`), as Markdown: text in fenced blocks, figures as images copied under
    ``source/_static/solutions/<slug>/`` (left out without a ``source``); "" when it has no output."""
    data = worked.read_results(slug)
    kept = (data or {}).get("results", {}).get(label)
    if not kept or not kept["outputs"]:
        return ""
    parts = [f"**{tr('Its output', language)}** ({tr('computed once with the quick profile, seed 0', language)}):"]
    for out in kept["outputs"]:
        if "png" not in out:
            parts.append("```text\n" + out["text"].rstrip("\n") + "\n```")
        elif source is not None:
            target = source / "_static" / "solutions" / slug / out["png"]
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(worked.RESULTS_DIR / slug / out["png"], target)
            parts.append(f"![{tr('a figure the worked solution draws', language)}](_static/solutions/{slug}/{out['png']})")
    return "\n\n:::{container} companion-solution-output\n" + "\n\n".join(parts) + "\n:::\n"


def add_solution_toggles(nb: nbformat.NotebookNode, slug: str, language: str = "en", source: Path | None = None) -> int:
    """After each exercise's "Worked solution: run … solution(N)" line, fold in the worked solution itself
    (:mod:`companion.solutions`) as a "Solution" toggle, its code followed by the output it gave when run once
    (:func:`solution_output_markdown`; its figures copied under ``source``); returns how many were added.  A line
    naming an exercise that has no solution is an error (the site would promise a toggle it does not have)."""
    added = 0
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue

        def toggle(match: re.Match) -> str:
            nonlocal added
            solution = worked.solution_named(match)
            added += 1
            text = solution.markdown(language)
            return (f"{match[0]}\n\n::::{{dropdown}} {tr('Solution', language)} "
                    f"({solution_label(solution.label, language)})\n"
                    f"{text if language == 'en' else join_chinese_lines(text)}"
                    f"{solution_output_markdown(slug, solution.label, language, source)}\n::::\n")

        cell.source = _WORKED_LINE.sub(toggle, cell.source)
    return added


#: Chinese characters and the marks a Chinese text sets without spaces: full-width punctuation, “ ” ‘ ’, — and ….
_CJK_CHAR = r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef\u2014\u2018\u2019\u201c\u201d\u2026]"
#: A line break (with the next line's indentation: a list item's continuation) between two such characters, or
#: before emphasis that opens on a Chinese character (on a mark it could no longer open): Chromium shows it as a
#: space ("输出 与该最优解", "。 **不做**").  A list item, a heading or a table row never starts with one, so no
#: block is joined to the line above.
_CJK_LINE_BREAK = re.compile(rf"(?<={_CJK_CHAR})\n[ \t]*(?=\*{{0,2}}[\u3400-\u9fff]|{_CJK_CHAR})")
_FENCED_CODE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)


def join_chinese_lines(text: str) -> str:
    """``text`` (markdown) with :data:`_CJK_LINE_BREAK`'s line breaks removed, its fenced code blocks left alone."""
    parts, at = [], 0
    for block in _FENCED_CODE.finditer(text):
        parts += [_CJK_LINE_BREAK.sub("", text[at:block.start()]), block[0]]
        at = block.end()
    return "".join(parts) + _CJK_LINE_BREAK.sub("", text[at:])


def localize_markdown(nb: nbformat.NotebookNode, slug: str, language: str) -> int:
    """Swap ``nb``'s markdown cells for their translation into ``language`` (:mod:`companion.kit.i18n`); a cell without
    one keeps its English (``python -m companion translate --check`` names it).  Returns how many were swapped."""
    if language == "en":
        return 0
    swapped = 0
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            translated = i18n.translate_cell(cell.source, slug, language)
            if translated is not None:
                cell.source, swapped = join_chinese_lines(translated), swapped + 1
    return swapped


def localize_outputs(nb: nbformat.NotebookNode, language: str) -> None:
    """Print the verdict lines and exercise feedback of ``nb``'s outputs in ``language`` — the same run's outcome,
    the other edition's words; measured numbers and every other output stay as they are."""
    if language == "en":
        return

    def localize(text: str) -> str:
        return "\n".join(localize_feedback_line(localize_verdict_line(line, language), language)
                         for line in text.split("\n"))

    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                output["text"] = localize("".join(output["text"]) if isinstance(output["text"], list) else output["text"])
            elif "text/plain" in output.get("data", {}):
                text = output["data"]["text/plain"]
                output["data"]["text/plain"] = localize("".join(text) if isinstance(text, list) else text)


#: nbval's cell markers (``# NBVAL_CHECK_OUTPUT``): instructions to the tests, not code a reader of the site needs.
_TEST_MARKER = re.compile(r"^# NBVAL_[A-Z_]+\n?", re.MULTILINE)


def drop_test_markers(nb: nbformat.NotebookNode) -> None:
    """Remove the lines that only mark a code cell for nbval (the notebooks keep them: the tests read them)."""
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.source = _TEST_MARKER.sub("", cell.source)


def robustness_line(entry: dict, stale: bool, language: str) -> str:
    """The line shown under a claim's verdict on its chapter page: its kind (an identity or exploration says so) and
    its pass count on its validation seeds in the committed robustness report, with its count on the other seeds its
    chapter ran (or that the report is older than the chapter's code)."""
    from companion.tools.robustness import claim_kind, seed_text

    kind = claim_kind(entry)
    seeds = seed_text(entry.get("validation_seeds") or range(20)).replace("-", "–")
    if stale:
        counts = tr("robustness: the report predates this chapter's code", language)
    elif not entry.get("complete", True):
        counts = tr("robustness: seeds {seeds} not all run yet", language).format(seeds=seeds)
    else:
        counts = tr("robustness: holds on {passed} of {runs} seeds ({seeds})", language).format(
            passed=entry["passed"], runs=entry["runs"], seeds=seeds)
        others = entry.get("other_seeds")
        if others and others.get("runs"):  # the seeds its chapter also ran: shown, never hidden behind the count
            counts += "; " + tr("on its chapter's other seeds {passed} of {runs}", language).format(**others)
    words = {IDENTITY: tr("an identity: it verifies the mathematics, it reproduces no phenomenon", language),
             EXPLORATION: tr("an exploration: its rate, not a verdict", language)}
    return "  ↳ " + "; ".join([counts, *([words[kind]] if kind in words else [])])


def report_claims(report: dict | None) -> dict[tuple[str, str], dict]:
    """The claims of a robustness ``report`` by the (figure, sentence) their verdict lines print."""
    return {(c["figure"], c["text"]): c for c in (report or {}).get("claims", {}).values()}


def annotate_claims(nb: nbformat.NotebookNode, report: dict | None, stale: Sequence[str], language: str) -> int:
    """Under each verdict line of ``nb``'s outputs, its :func:`robustness_line` from ``report`` (the claim found by
    its figure and sentence; a verdict the report does not know is left alone).  Returns how many were annotated."""
    if not report:
        return 0
    by_words = report_claims(report)
    added = 0

    def annotate(text: str) -> str:
        nonlocal added
        lines = []
        for line in text.split("\n"):
            lines.append(line)
            match = VERDICT_LINE.match(line)
            entry = by_words.get((match["figure"], match["text"])) if match else None
            if entry is not None:
                lines.append(robustness_line(entry, entry["chapter"] in stale, language))
                added += 1
        return "\n".join(lines)

    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                output["text"] = annotate("".join(output["text"]) if isinstance(output["text"], list) else output["text"])
    return added


def edition_notebook(notebook: Path, source: Path, language: str,
                     robustness: tuple[dict | None, Sequence[str]] = (None, ())) -> nbformat.NotebookNode:
    """The chapter page of ``language``'s edition: the committed notebook (its code and outputs as executed once),
    each claim's robustness under its verdict (``robustness``: the report and its stale chapters), its words in
    ``language``, the kernel-free explorer and the worked solutions folded in, nbval's markers dropped."""
    nb = nbformat.read(notebook, as_version=4)
    localize_markdown(nb, notebook.stem, language)
    annotate_claims(nb, *robustness, language)
    localize_outputs(nb, language)
    drop_test_markers(nb)
    launch.drop_install_cells(nb)
    markdown_title(nb, notebook.name)  # fail early, with the notebook's name, if a page would have no title
    add_static_explorers(nb, notebook.stem, source, language=language)
    add_solution_toggles(nb, notebook.stem, language, source)
    return nb


#: A term of the glossary's ``{glossary}`` block: an unindented line, the Chinese term before " (English)".
_GLOSSARY_TERM = re.compile(r"^(?P<term>[^\s:`#][^(\n]*?) \(", re.MULTILINE)
_CJK_RUN = re.compile(r"[\u3400-\u9fff][\u3400-\u9fff0-9]*[\u3400-\u9fff]")
#: The hand-written list of the book's further terms a reader may search for (one a line), beside the glossary's.
SEARCH_WORDS = "search_words.txt"


def search_words(pages: Path) -> list[str]:
    """The Chinese words the Chinese edition's search must know whole: every term of ``pages/glossary.md`` (its
    Chinese runs of two or more characters: "Hessian 矩阵" gives 矩阵) and those of ``pages/search_words.txt``.

    Sphinx's Chinese search (``sphinx.search.zh``) cuts the text into words with jieba; a compound jieba's own
    dictionary lacks (频率原则, 嵌入原则, 乐观估计, 平坦性) would be cut into pieces, and a search for the whole term would
    find nothing.  Given these words, jieba's search mode indexes the whole term and its parts."""
    glossary = (pages / "glossary.md").read_text(encoding="utf-8").split("```{glossary}", 1)[-1].split("```", 1)[0]
    words = [w for m in _GLOSSARY_TERM.finditer(glossary) for w in _CJK_RUN.findall(m["term"])]
    extra = pages / SEARCH_WORDS
    if extra.exists():
        words += [line.strip() for line in extra.read_text(encoding="utf-8").splitlines()
                  if line.strip() and not line.startswith("#")]
    return list(dict.fromkeys(words))


def _configure_edition(source: Path, language: str, repository: str | None = None, jupyterhub: str | None = None) -> dict:
    """Point the staged ``_config.yml`` at ``language``'s edition: its title, Sphinx's language, the switch to the
    other edition and the lecture view's words (:mod:`book._ext.companion_book`); for the Chinese edition, the words its
    search index must hold whole (:func:`search_words`, a jieba user dictionary: Sphinx's ``html_search_options``); its
    launch settings made whole (:func:`companion.tools.launch.configure`: ``repository`` and ``jupyterhub``, when
    given, replace the file's).  Returns the configuration's launch settings."""
    settings = launch.configure(yaml.safe_load((source / "_config.yml").read_text(encoding="utf-8")), repository,
                                jupyterhub)
    config = yaml.safe_dump(settings, allow_unicode=True, sort_keys=False)
    title = tr("Deep-learning phenomena: an interactive companion", language)
    config = re.sub(r"^title: .*$", f"title: {json.dumps(title, ensure_ascii=False)}", config, count=1, flags=re.M)
    switch = {"href": "zh/", "label": "中文版"} if language == "en" else {"href": "../", "label": "English"}
    lecture = {"label": tr("Lecture view", language),
               "title": tr("Hide the sidebars and widen the page and its explorer, for a projector (click again to undo)",
                           language)}
    sphinx = f"    language: {'zh_CN' if language == 'zh' else 'en'}\n" \
             f"    companion_switch: {json.dumps(switch, ensure_ascii=False)}\n" \
             f"    companion_lecture: {json.dumps(lecture, ensure_ascii=False)}\n"
    if language == "zh":
        if importlib.util.find_spec("jieba") is None:  # without it Sphinx indexes no Chinese word at all
            raise RuntimeError("the Chinese edition's search needs jieba: pip install -e '.[dev]' (it brings jieba)")
        words = source / "_search_words.txt"
        words.write_text("".join(f"{w}\n" for w in search_words(source)), encoding="utf-8")
        sphinx += f"    html_search_options: {json.dumps({'dict': str(words.resolve())})}\n"
    config = config.replace("  config:\n", "  config:\n" + sphinx, 1)
    (source / "_config.yml").write_text(config, encoding="utf-8")
    return {key: settings[key] for key in ("repository", "launch_buttons")}


def stage(source: Path, book_dir: Path = BOOK_DIR, chapters_dir: Path | None = None, language: str = "en",
          repository: str | None = None, jupyterhub: str | None = None) -> list[Path]:
    """Write the source folder of ``language``'s edition of the book to ``source`` (emptied first); return the chapter
    notebooks it holds.  The Chinese edition takes its hand-written pages from ``book/zh/``.  ``repository`` and
    ``jupyterhub`` set the launch buttons' repository and JupyterHub (:mod:`companion.tools.launch`; default: the
    configuration's)."""
    if source.exists():
        shutil.rmtree(source)
    shutil.copytree(book_dir, source, ignore=shutil.ignore_patterns("_build", "__pycache__", ".*", *EDITIONS.values()))
    if language != "en":
        shutil.copytree(book_dir / EDITIONS[language], source, dirs_exist_ok=True)
    launch_settings = _configure_edition(source, language, repository, jupyterhub)
    notebooks = chapter_notebooks(chapters_dir)
    robustness = read_robustness()
    for notebook in notebooks:
        nbformat.write(edition_notebook(notebook, source, language, robustness), source / notebook.name)
    pages = [p.stem for p in notebooks]
    (source / "_toc.yml").write_text(toc_yaml(pages, language), encoding="utf-8")
    (source / "_chapter_map.md").write_text(chapter_map_markdown(pages, language), encoding="utf-8")
    (source / "_launch.md").write_text(launch.launch_markdown(launch_settings, language), encoding="utf-8")
    (source / "claims.md").write_text(claims_markdown(notebooks, language), encoding="utf-8")
    (source / "coverage.md").write_text(fidelity.coverage_markdown(language), encoding="utf-8")
    (source / "robustness.md").write_text(robustness_markdown(*read_robustness(), language) + "\n" + full_profile_markdown(
        *read_robustness(robustness_file("full")), language), encoding="utf-8")
    return notebooks


def _jupyter_book(source: Path, out: Path, strict: bool) -> Path:
    """Build the staged ``source`` with Jupyter Book into ``out/_build/html``; return that folder."""
    html = out / "_build" / "html"
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


def build(out: Path = BOOK_DIR, chapters_dir: Path | None = None, strict: bool = True, repository: str | None = None,
          jupyterhub: str | None = None) -> Path:
    """Stage and build both editions under ``out/_build``; return the folder holding the English ``index.html``
    (the Chinese edition is its ``zh/`` folder).

    With ``strict`` every Sphinx warning is an error (the build must be warning-free).  ``repository`` (a GitHub
    address) and ``jupyterhub`` give the pages a repository link and launch buttons (:mod:`companion.tools.launch`);
    without them, ``book/_config.yml``'s settings hold (empty by default: no buttons).
    Raises RuntimeError with Jupyter Book's output if the build fails.
    """
    if importlib.util.find_spec("jupyter_book") is None:
        raise RuntimeError("Jupyter Book 1.x is not installed: pip install -e '.[dev]' (it brings jupyter-book<2)")
    out = Path(out).resolve()
    stage(out / "_build" / "src", chapters_dir=chapters_dir, repository=repository, jupyterhub=jupyterhub)
    html = _jupyter_book(out / "_build" / "src", out, strict)
    for language, folder in EDITIONS.items():
        if folder:
            edition = out / "_build" / f"edition-{language}"
            stage(edition / "src", chapters_dir=chapters_dir, language=language, repository=repository,
                  jupyterhub=jupyterhub)
            shutil.copytree(_jupyter_book(edition / "src", edition, strict), html / folder)
    return html
