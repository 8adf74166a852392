"""How faithfully each figure of the book is reproduced, computed — never typed.

The catalog (:mod:`companion.tools.catalog`, ``figures.csv``) names, per figure, the phenomenon claims meant to test
its central statement (column ``claims``) and says in one line what of that statement no claim checks (column
``unchecked``).  This module turns that, the claims declared in the code, the robustness reports and the negative
controls of ``tests/`` into one computed **fidelity** per figure or table:

* ``faithful`` — nothing of the central statement is left unchecked, and at least one named claim is a
  *phenomenon* claim (:mod:`companion.kit.claims`) that meets the standard on its validation seeds in the quick
  profile's robustness report (``robustness/report.json``: ≥ 19 of 20 seeds, median margin above the thin line) and
  has a negative control from the book's contrast (a ``test_control_…`` test marked ``@pytest.mark.contrast(…)``:
  a real run of the setting the book contrasts it with);
* ``faithful-full`` — the same, but the claim meets the standard only in the full profile's report
  (``robustness/report-full.json``, its seeds named); counted separately;
* ``partial`` — a named claim exists, but part of the statement is unchecked, or no named claim meets the standard
  or has a control from the book's contrast (``why`` says which);
* ``drawn`` — drawn in a notebook (possibly with an exploration's verdict), no claim tests it;
* ``missing`` — fits a CPU, not reproduced yet; ``gpu`` — needs a GPU or data not available offline;
* ``illustrative`` — a schematic, definition or table of closed-form values: nothing to rerun.

A figure the book prints twice (:data:`SAME_FIGURE`) is listed under both numbers but counted once.
``python -m companion coverage --json`` prints :func:`fidelities` as JSON; README and the site's coverage page show
:func:`counts`.
"""

from __future__ import annotations

import ast
import json
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from companion.kit.claims import PHENOMENON, declared_claims
from companion.kit.i18n import tr
from companion.tools import catalog, timing

FIDELITIES = ("faithful", "faithful-full", "partial", "drawn", "missing", "gpu", "illustrative")
#: The book prints Liu et al.'s MscaleDNN figure twice (图5.3 in §5, 图15.2 in §15.5.1): one figure, counted once.
SAME_FIGURE = {"图15.2": "图5.3"}
TESTS_DIR = catalog.ROOT / "tests"
#: Why a figure is not (fully) faithful: English templates of :attr:`FigureFidelity.reasons` (translated like the
#: kit's own words).
NOT_YET = "fits a CPU; not reproduced yet"
NO_CLAIM = "drawn; no phenomenon claim tests it"
NOT_PHENOMENON = "`{claim}` is not a phenomenon claim ({kind})"
NO_CONTRAST = "`{claim}`: its negative control is not a run of the setting the book contrasts"
BELOW = "`{claim}`: below the standard in the quick profile ({count})"
BELOW_FULL = "`{claim}`: judged at the full profile only, and below the standard there ({count}, median margin {median})"
NOT_RUN_FULL = "`{claim}`: judged at the full profile only, on seeds {seeds}, which have not run yet"
AWAITING_FULL = ("`{claim}`: judged at the full profile only, where seeds {seeds} have not run yet ({passed} of {ran} "
                 "passed so far)")
FULL_ONLY = "meets the standard only at the full profile ({seeds} seeds)"
NOT_MEASURED = "`{claim}`: in neither robustness report yet (not measured since it was added)"
REASONS = (NOT_YET, NO_CLAIM, NOT_PHENOMENON, NO_CONTRAST, BELOW, BELOW_FULL, NOT_RUN_FULL, AWAITING_FULL, FULL_ONLY,
           NOT_MEASURED)
#: The coverage page's note on a figure whose claims' robustness rows were made before their chapter's latest code.
STALE_NOTE = "(robustness counts made before the chapter's latest code change: awaiting a new run)"
REPORTS = {"quick": catalog.ROOT / "robustness" / "report.json", "full": catalog.ROOT / "robustness" / "report-full.json"}


@dataclass(frozen=True)
class FigureFidelity:
    """One figure's computed fidelity, the claims it rests on and why it is not (fully) faithful."""

    figure: str
    chapter: int
    kind: str
    fidelity: str
    claims: tuple[str, ...]
    #: why it is not (fully) faithful: (English template, its values), each template translatable
    reasons: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = ()
    same_as: str | None = None
    #: whether a named claim's chapter changed since the quick report was made (its counts predate the code)
    stale: bool = False

    def why_in(self, language: str = "en") -> str:
        """The reasons as one line in ``language``."""
        return "; ".join(tr(template, language).format(**dict(values)) for template, values in self.reasons)

    @property
    def why(self) -> str:
        return self.why_in("en")

    def record(self) -> dict[str, Any]:
        record = {"figure": self.figure, "chapter": self.chapter, "kind": self.kind, "fidelity": self.fidelity,
                  "claims": list(self.claims), "why": self.why}
        record["report_stale"] = self.stale
        return record | ({"same_as": self.same_as} if self.same_as else {})


@lru_cache(maxsize=1)
def declarations(root: Path = catalog.ROOT) -> dict[str, tuple[str, str]]:
    """Every claim declared in ``companion/experiments`` and ``chapters``: id → (label, kind)."""
    found: dict[str, tuple[str, str]] = {}
    sources = [*(root / "companion" / "experiments").glob("*.py"), *(root / "chapters").glob("*.py")]
    for path in sorted(p for p in sources if p.name != "__init__.py"):
        for cid, label, kind in declared_claims(ast.parse(path.read_text(encoding="utf-8"))):
            found.setdefault(cid, (label, kind))
    return found


def control_name(claim_id: str) -> str:
    """The name of claim ``claim_id``'s negative-control test: ``test_control_`` and the id, non-alphanumerics as _."""
    return "test_control_" + re.sub(r"[^0-9A-Za-z]+", "_", claim_id)


@lru_cache(maxsize=1)
def contrast_controls(tests: Path = TESTS_DIR) -> dict[str, str]:
    """The negative controls marked ``@pytest.mark.contrast("<setting>")`` in ``tests/test_controls_*.py`` (a chapter's
    ``test_controls_chNN.py``, the papers' ``test_controls_icl_papers.py``): test name → the contrasting setting."""
    found: dict[str, str] = {}
    for path in sorted(tests.glob("test_controls_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef):
                continue
            for decorator in node.decorator_list:
                if isinstance(decorator, ast.Call) and ast.unparse(decorator.func) == "pytest.mark.contrast" \
                        and decorator.args and isinstance(decorator.args[0], ast.Constant):
                    found[node.name] = str(decorator.args[0].value)
    return found


def read_report(profile: str) -> dict[str, Any] | None:
    """The committed robustness report of ``profile`` (None where there is none)."""
    path = REPORTS[profile]
    if not path.exists():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def _standing(cid: str, report: dict[str, Any] | None) -> tuple[bool, str]:
    """Whether claim ``cid`` meets the standard in ``report``, and its pass count as words."""
    entry = (report or {}).get("claims", {}).get(cid)
    if entry is None:
        return False, "not in the report"
    return bool(entry.get("meets_standard")), f"{entry.get('passed')}/{entry.get('runs')}"


def margin_text(stat: dict[str, Any] | None) -> str:
    """A report's margin (``{"margin": …, "unit": …}``) as words, ``+0.11 rel``; ``never`` where there is none."""
    if not stat or stat.get("margin") is None:
        return "never"
    return f"{stat['margin']:+.3g} {stat['unit']}"


def stale_report_chapters(report: dict[str, Any] | None) -> frozenset[str]:
    """The chapters of ``report`` whose code changed since it was made (their counts predate the code)."""
    from companion.tools.robustness import stale_chapters  # imports the runner: only when asked

    return frozenset(stale_chapters(report)) if report else frozenset()


def _below_full(cid: str, report: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Why claim ``cid``, judged only in the full profile's ``report``, does not meet the standard there: the seeds it
    still waits for, where its chapter has not run them all (:func:`companion.tools.robustness.unjudged_seeds`), else
    its pass count and median margin."""
    entry = report["claims"][cid]
    if entry.get("complete") is False:
        from companion.tools.robustness import seed_text, unjudged_seeds  # imports the runner: only when asked

        seeds, ran = seed_text(unjudged_seeds(entry, report)), entry.get("runs", 0)
        if not ran:
            return NOT_RUN_FULL, {"claim": cid, "seeds": seeds}
        return AWAITING_FULL, {"claim": cid, "seeds": seeds, "passed": entry.get("passed", 0), "ran": ran}
    _, count = _standing(cid, report)
    return BELOW_FULL, {"claim": cid, "count": count, "median": margin_text(entry.get("median_margin"))}


def figure_fidelity(f: catalog.Figure, reports: dict[str, dict[str, Any] | None] | None = None,
                    claims: dict[str, tuple[str, str]] | None = None,
                    controls: dict[str, str] | None = None, stale: frozenset[str] = frozenset()) -> FigureFidelity:
    """The computed fidelity of figure ``f`` (see the module docstring); ``stale``: the chapters whose quick-report
    rows predate their code (:func:`stale_report_chapters`), flagged on the figures whose claims they hold."""
    reports = {p: read_report(p) for p in REPORTS} if reports is None else reports
    claims = declarations() if claims is None else claims
    controls = contrast_controls() if controls is None else controls
    same_as = SAME_FIGURE.get(f.id)
    quick_claims = (reports.get("quick") or {}).get("claims", {})
    is_stale = any(quick_claims.get(cid, {}).get("chapter") in stale for cid in f.claims)

    def made(fidelity: str, *reasons: tuple[str, dict[str, Any]], named: tuple[str, ...] = ()) -> FigureFidelity:
        return FigureFidelity(f.id, f.book_chapter, f.kind, fidelity, named,
                              tuple((template, tuple(values.items())) for template, values in reasons), same_as,
                              is_stale)

    if f.kind == catalog.ILLUS:
        return made("illustrative")
    if f.status == catalog.GPU:
        return made("gpu", (f.note, {}))
    if f.status == catalog.MISSING:
        return made("missing", (f.note or NOT_YET, {}))
    named = tuple(f.claims)
    if not named:
        return made("drawn" if f.status != catalog.CLAIM else "partial",
                    (f.unchecked or NO_CLAIM, {}))
    problems: list[tuple[str, dict[str, Any]]] = []
    quick, full = [], []
    for cid in named:
        kind = claims.get(cid, ("", "not declared"))[1]
        if kind != PHENOMENON:
            problems.append((NOT_PHENOMENON, {"claim": cid, "kind": kind}))
            continue
        ok_quick, quick_count = _standing(cid, reports.get("quick"))
        ok_full, _ = _standing(cid, reports.get("full"))
        if control_name(cid) not in controls:
            problems.append((NO_CONTRAST,
                             {"claim": cid}))
        elif ok_quick:
            quick.append(cid)
        elif ok_full:
            full.append(cid)
        elif cid not in (reports.get("quick") or {}).get("claims", {}) and \
                cid in (reports.get("full") or {}).get("claims", {}):  # a claim the quick profile does not judge
            problems.append(_below_full(cid, reports["full"]))
        elif not any(cid in (reports.get(p) or {}).get("claims", {}) for p in REPORTS):
            problems.append((NOT_MEASURED, {"claim": cid}))
        else:
            problems.append((BELOW,
                             {"claim": cid, "count": quick_count}))
    if f.unchecked:
        return made("partial", (f.unchecked, {}), *problems, named=named)
    if quick:
        return made("faithful", named=named)
    if full:
        seeds = max(reports["full"]["claims"][cid]["runs"] for cid in full)
        return made("faithful-full", (FULL_ONLY, {"seeds": seeds}), named=named)
    return made("partial", *problems, named=named)


def fidelities(*, check_stale: bool = False) -> list[FigureFidelity]:
    """Every figure and table of the catalog with its computed fidelity, in the book's order; with ``check_stale``,
    each flagged where its claims' report rows predate their chapter's code (hashing every chapter's code)."""
    reports = {p: read_report(p) for p in REPORTS}
    stale = stale_report_chapters(reports["quick"]) if check_stale else frozenset()
    return [figure_fidelity(f, reports, stale=stale) for f in catalog.FIGURES]


@dataclass(frozen=True)
class FidelityCounts:
    """Distinct figures (a figure printed twice counted once) by fidelity, and the CPU-feasible ones."""

    by_fidelity: dict[str, int]
    cpu_feasible: int

    @property
    def faithful(self) -> int:
        return self.by_fidelity.get("faithful", 0)

    @property
    def percent(self) -> float:
        """The headline: quick-profile faithful figures as a share of the CPU-feasible ones."""
        return 100.0 * self.faithful / self.cpu_feasible if self.cpu_feasible else 100.0


def counts(items: list[FigureFidelity] | None = None) -> FidelityCounts:
    """:class:`FidelityCounts` of ``items`` (default: every figure)."""
    items = fidelities() if items is None else items
    distinct = [i for i in items if i.same_as is None]
    by = Counter(i.fidelity for i in distinct)
    cpu = sum(by[k] for k in ("faithful", "faithful-full", "partial", "drawn", "missing"))
    return FidelityCounts({k: by.get(k, 0) for k in FIDELITIES}, cpu)


def chapter_map_markdown(language: str = "en", coverage_link: str = "") -> str:
    """The table notebook ↔ book chapter ↔ figures reproduced faithfully, partially or drawn (README and the site's
    landing page), in ``language``, from the computed fidelities (:mod:`companion.tools.fidelity`); the words "coverage
    page" link to ``coverage_link`` if given."""
    items = fidelities()
    by_figure = {i.figure: i for i in items}
    times = timing.read_quiet_times()
    rows = [f"| {tr('notebook', language)} | {tr('book chapter', language)} | {tr('faithful', language)} "
            f"| {tr('partial', language)} | {tr('drawn', language)} | {tr('quick run', language)} |",
            "|---|---|---|---|---|---|"]
    for ch in catalog.CHAPTERS:
        def listed(*fidelities: str) -> str:
            full_only = f" ({tr('at the full profile', language)})"
            return ", ".join(f.id + (full_only if by_figure[f.id].fidelity == "faithful-full" else "")
                             for f in ch.figures if by_figure[f.id].fidelity in fidelities) or "—"
        title = f"{ch.title_zh} ({catalog.table_cell(ch.title)})" if language == "en" else ch.title_zh
        if not ch.is_book:  # the papers' notebook: its results are in the coverage page's papers table, not figures
            rows.append(f"| `{ch.slug}` | {tr('papers, not the book', language)}: {title} | — | — | — "
                        f"| {timing.time_cell(ch.slug, times, language)} |")
            continue
        rows.append(f"| `{ch.slug}` | {ch.book} {title} | {listed('faithful', 'faithful-full')} | {listed('partial')} "
                    f"| {listed('drawn')} | {timing.time_cell(ch.slug, times, language)} |")
    total = counts(items)
    n = total.by_fidelity
    rows += ["", tr("**{faithful} of the {cpu} computational figures and tables that fit a CPU ({percent:.0f} %) are reproduced "
                    "faithfully**: a phenomenon claim tests what the figure shows, holds on at least 19 of 20 seeds and has a "
                    "negative control from the book's own contrast (computed by `python -m companion coverage --json`). "
                    "{full} more faithful only at the full profile, {partial} partially (the {coverage_page} says what is "
                    "not checked), {drawn} are drawn without such a claim and {missing} are not reproduced yet; a figure the "
                    "book prints twice counts once.", language).format(
        faithful=total.faithful, cpu=total.cpu_feasible, percent=total.percent, full=n["faithful-full"],
        partial=n["partial"], drawn=n["drawn"], missing=n["missing"],
        coverage_page=f"[{tr('coverage page', language)}]({coverage_link})" if coverage_link else
        tr("coverage page", language)), "", timing.times_sentence(times, language)]
    return "\n".join(rows)


FIDELITY_WORDS = {"faithful": "✔ faithful", "faithful-full": "✔ faithful at the full profile", "partial": "◐ partial",
                  "drawn": "drawn, no claim", "missing": "not yet", "gpu": "needs a GPU / offline-unavailable data",
                  "illustrative": "illustrative"}


def coverage_markdown(language: str = "en") -> str:
    """The site's coverage page, in ``language``: every figure and table of chapters 4–15, its computed fidelity
    (:mod:`companion.tools.fidelity`), the claims it rests on and what is not checked."""
    items = fidelities(check_stale=True)
    by_figure = {i.figure: i for i in items}
    total, n = counts(items), counts(items).by_fidelity
    parts = ["# " + tr("Coverage: every figure of chapters 4–15", language), "",
             tr("The book's chapters 4–15 hold {items} figures and tables ({distinct} distinct: one figure is printed twice); "
                "{cpu} distinct ones are computational and fit a CPU with offline data. **{faithful} of those {cpu} "
                "({percent:.0f} %) are reproduced faithfully**: a phenomenon claim tests the figure's central statement, "
                "nothing of that statement is left unchecked, the claim holds on at least 19 of 20 seeds (the robustness "
                "page) and its negative control runs the setting the book contrasts it with. {full} more faithful only "
                "at the full profile, {partial} partial (the last column says what is not checked), {drawn} are drawn "
                "without such a claim and {missing} are not reproduced yet. The status is computed from the catalog "
                "(`companion/tools/figures.csv`), the claims in the code, the robustness reports and the controls in "
                "`tests/`: `python -m companion coverage --json`.", language).format(
                 items=len(items), distinct=sum(i.same_as is None for i in items), cpu=total.cpu_feasible,
                 faithful=total.faithful, percent=total.percent, full=n["faithful-full"], partial=n["partial"],
                 drawn=n["drawn"], missing=n["missing"]),
             "", f"| {tr('book chapter', language)} | {tr('fit a CPU', language)} | {tr('faithful', language)} | "
                 f"{tr('partial', language)} | {tr('drawn', language)} | {tr('missing', language)} | % |",
             "|---|---|---|---|---|---|---|"]
    for chapter in catalog.book_chapters():
        c = counts([i for i in items if i.chapter == chapter])
        parts.append(f"| {chapter} | {c.cpu_feasible} | {c.faithful} | {c.by_fidelity['partial']} | "
                     f"{c.by_fidelity['drawn']} | {c.by_fidelity['missing']} | {c.percent:.0f} |")
    parts.append(f"| **{tr('all', language)}** | {total.cpu_feasible} | {total.faithful} | {n['partial']} | {n['drawn']} | "
                 f"{n['missing']} | {total.percent:.0f} |")
    for chapter in catalog.book_chapters():
        parts += ["", "## " + tr("Chapter {n}", language).format(n=chapter), "",
                  f"| {tr('figure', language)} | {tr('what it shows', language)} | {tr('fidelity', language)} | "
                  f"{tr('notebook and claims', language)} | {tr('note', language)} |",
                  "|---|---|---|---|---|"]
        for f in catalog.FIGURES:
            if f.book_chapter == chapter:
                item = by_figure[f.id]
                status = tr(FIDELITY_WORDS[item.fidelity], language) + (
                    " " + tr("(= {figure})", language).format(figure=item.same_as) if item.same_as else "")
                why = item.why_in(language) if item.fidelity in ("partial", "faithful-full", "drawn") else ""
                lead = sentence(tr(f.note, language), language) if why else tr(f.note, language)
                note = " ".join(part for part in (lead, f"*{tr('Not yet faithful:', language)}* {why}" if why else "",
                                                  tr(STALE_NOTE, language) if item.stale else "") if part)
                where = " ".join([f"`{f.notebook}`", *(f"`{c}`" for c in item.claims)])
                parts.append(f"| {f.id} | {catalog.table_cell(tr(f.caption, language))} | {status} | {where} | "
                             f"{catalog.table_cell(note)} |")
    return "\n".join(parts) + "\n\n" + papers_markdown(language)


def sentence(note: str, language: str = "en") -> str:
    """``note`` closed as a sentence (a full stop, "。" in Chinese) when it is one — it has a space and no closing mark —
    so that what follows it in a coverage cell ("*Not yet faithful:* …") starts a sentence of its own; a bare
    pointer such as "§3" or "见 §3" (no space in English, under 8 characters in either language) stays as it is."""
    if not note or note[-1] in ".!?。！？" or (" " not in note and language == "en") or len(note) < 8:
        return note
    return note + ("。" if language == "zh" else ".")


PAPERS_FILE = Path(__file__).with_name("papers.csv")
#: A paper result's status on the coverage page (computed like a figure's fidelity, from its claims).
PAPER_WORDS = {"reproduced": "✔ reproduced", "claimed": "◐ claimed, not yet at the standard", "exploration": "◇ exploration",
               "missing": "not yet"}


@dataclass(frozen=True)
class PaperResult:
    """One headline result of a paper (``papers.csv``), the claims that test it and its computed status."""

    paper: str
    result: str
    claims: tuple[str, ...]
    note: str
    status: str = "missing"
    counts: tuple[str, ...] = ()  # per claim: its pass count in the quick report ("19/20"; shown), or why it has none


def read_papers(path: Path = PAPERS_FILE) -> list[PaperResult]:
    """The papers' results as ``papers.csv`` lists them (no status computed)."""
    import csv

    with path.open(encoding="utf-8", newline="") as fh:
        rows = csv.DictReader(line for line in fh if not line.startswith("#"))
        return [PaperResult(r["paper"], r["result"], tuple(c for c in (r["claims"] or "").split(";") if c),
                            r["note"] or "") for r in rows]


def paper_results(reports: dict[str, dict[str, Any] | None] | None = None,
                  claims: dict[str, tuple[str, str]] | None = None,
                  controls: dict[str, str] | None = None) -> list[PaperResult]:
    """Every paper result with its status: ``reproduced`` when each of its claims is a phenomenon claim that meets the
    standard in the quick robustness report and has a negative control from the paper's contrast; ``exploration`` when
    one is an exploration; ``claimed`` when it has claims that do not (yet) meet that; ``missing`` without claims."""
    reports = {p: read_report(p) for p in REPORTS} if reports is None else reports
    claims = declarations() if claims is None else claims
    controls = contrast_controls() if controls is None else controls
    out = []
    for r in read_papers():
        standing = [_standing(cid, reports.get("quick")) for cid in r.claims]
        kinds = [claims.get(cid, ("", "not declared"))[1] for cid in r.claims]
        if not r.claims or any(cid not in claims for cid in r.claims):  # a claim not declared (yet) tests nothing
            status = "missing"
        elif "exploration" in kinds:
            status = "exploration"
        elif all(k == PHENOMENON and ok and control_name(cid) in controls
                 for cid, k, (ok, _) in zip(r.claims, kinds, standing)):
            status = "reproduced"
        else:
            status = "claimed"
        out.append(PaperResult(r.paper, r.result, r.claims, r.note, status, tuple(words for _, words in standing)))
    return out


def papers_markdown(language: str = "en") -> str:
    """The coverage page's table of the papers' results (paper → result → claim → status): apart from the book's
    figures, and counted in none of their numbers."""
    parts = ["## " + tr("Papers: in-context learning (§14.3)", language), "",
             tr("Results of research papers the companion reproduces in `icl_papers`, each claim labelled with its paper "
                "and figure or theorem. They are not the book's figures and count in none of the numbers above; the status "
                "is computed from the claims, the quick robustness report and the controls, like a figure's fidelity.",
                language), "",
             f"| {tr('paper', language)} | {tr('result', language)} | {tr('claim', language)} | "
             f"{tr('status', language)} | {tr('note', language)} |", "|---|---|---|---|---|"]
    for r in paper_results():
        claims = " ".join(f"`{c}`" + (f" ({n})" if n[:1].isdigit() else "") for c, n in zip(r.claims, r.counts))
        parts.append(f"| {r.paper} | {catalog.table_cell(tr(r.result, language))} | {claims or '—'} | "
                     f"{tr(PAPER_WORDS[r.status], language)} | {catalog.table_cell(tr(r.note, language)) if r.note else ''} |")
    return "\n".join(parts) + "\n"


README = catalog.ROOT / "README.md"
MAP_START, MAP_END = "<!-- chapter-map:start (generated by `python -m companion coverage --write-readme`) -->", \
    "<!-- chapter-map:end -->"


def readme_map(text: str) -> str:
    """The generated chapter map inside ``text`` (the README), between its markers."""
    try:
        start = text.index(MAP_START) + len(MAP_START)
        return text[start:text.index(MAP_END, start)].strip()
    except ValueError:
        raise ValueError(f"the README has no chapter map between {MAP_START!r} and {MAP_END!r}") from None


def write_readme_map(readme: Path = README) -> Path:
    """Replace the README's chapter map with :func:`chapter_map_markdown`."""
    text = readme.read_text(encoding="utf-8")
    readme_map(text)  # fails, naming the markers, when they are missing
    start = text.index(MAP_START) + len(MAP_START)
    end = text.index(MAP_END, start)
    readme.write_text(text[:start] + "\n" + chapter_map_markdown() + "\n" + text[end:], encoding="utf-8")
    return readme
