"""The record of every figure and table of the book's chapters 4–15, and the chapter map.

This module and its table ``figures.csv`` are the single record of what the companion reproduces: for each of the 123 figures and
tables of chapters 4–15 its **kind** (computational: the result of an experiment that can be rerun;
illustrative: a schematic, a definition or a table of closed-form values), its **status** and the
notebook where it is reproduced. The README's chapter map, the site's coverage page and
``python -m companion coverage`` are generated from it, and ``tests/test_catalog.py`` checks it against
the committed notebooks: a figure listed as claimed has a passing ✔ verdict line there, and every
verdict that names a figure is recorded here.

Status of a figure:

* ``claim`` — a claim labelled with the figure (``[图4.7]``, or one of its ``evidence`` labels) checks
  its central phenomenon; its note says where the setting is a CPU-sized analogue or panels are missing;
* ``exploration`` — drawn with an exploration verdict: not robust at CPU scale, pass rate on the
  robustness page;
* ``shown`` — drawn (in full or in part, see the note) without a claim;
* ``missing`` — fits a CPU but is not reproduced yet;
* ``gpu`` — needs a GPU, or data or weights that cannot be had offline (the note says which);
* ``illustrative`` — not computational; nothing to rerun.

An illustrative figure whose formulas an identity checks (the splitting identities of 图9.3) stays ``illustrative``:
coverage counts computational figures only.

A claim *names* a figure when its label holds the figure's id (``图13.5/13.6`` names both) or is one of the
figure's ``evidence`` labels (extra labels, separated by ``;``). Two more columns say how far the claims go; they are
filled for the ``claim`` and ``exploration`` rows and empty for the others:

* ``claims`` — the ids (separated by ``;``) of the phenomenon claims that name the figure and are meant to test its
  central statement: what the figure itself shows, per the book. Not listed: a claim that only shares the label
  but tests an easier side statement, an identity claim (a check of mathematics, not of a phenomenon) and an
  exploration;
* ``unchecked`` — empty when those claims test the central statement in full (a CPU-sized analogue counts:
  smaller nets, 8×8 digits for MNIST); otherwise one sentence saying what of it no listed claim checks. A row
  without listed claims always has one.

图5.3 and 图15.2 are the same image printed twice and are filled alike.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from companion.kit.i18n import tr

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS_DIR = ROOT / "chapters"

COMP, ILLUS = "computational", "illustrative"
CLAIM, EXPLORATION, SHOWN, MISSING, GPU = "claim", "exploration", "shown", "missing", "gpu"
STATUSES = (CLAIM, EXPLORATION, SHOWN, MISSING, GPU, ILLUS)


#: ``Chapter.book`` of a notebook that follows research papers rather than a chapter of the book (``icl_papers``).
PAPERS = "papers"


@dataclass(frozen=True)
class Chapter:
    """One notebook of ``chapters/`` and the book chapter(s) it follows — or, with ``book=PAPERS``, the papers.

    ``seconds``: how long its quick profile runs with an empty cache on one torch thread beside another chapter
    (``reproduce --jobs 2`` on the 2-core CI machine); it only orders parallel runs (:func:`longest_first`).
    ``claim_prefix``: what its claim ids start with (``ch04`` for ``ch04_frequency_principle``: its :attr:`short` name
    unless given; a papers notebook gives its own, e.g. ``chicl``).  A chapter of the book split along its sections
    has one notebook per part, the later parts lettered: ``ch12b_composite_tasks`` (short name and prefix ``ch12b``)
    is chapter 12's second part.
    """

    slug: str
    book: str
    title: str
    title_zh: str
    seconds: int
    prefix: str = ""

    @property
    def budget(self) -> int:
        """The most seconds its quick profile may take on 2 CPU cores: 60, or 120 for chapters 12–14 and the papers."""
        return 120 if not self.is_book or self.book in ("12", "13", "14") else 60

    @property
    def is_book(self) -> bool:
        """Whether the notebook follows a chapter of the book (its figures are the catalog's); False for papers."""
        return self.book != PAPERS

    @property
    def claim_prefix(self) -> str:
        return self.prefix or self.short

    @property
    def short(self) -> str:
        """The short name: ``ch04`` for a chapter of the book, ``ch12b`` for a later part of one (the slug up to its
        first ``_``; also its experiment modules' and solutions' prefix), the whole slug for the papers' notebook (its
        experiment module is ``companion/experiments/<slug>.py``)."""
        return self.slug.partition("_")[0] if self.is_book else self.slug

    @property
    def heading(self) -> str:
        """The notebook's title line, also used by the site and the README: one pattern for all."""
        if not self.is_book:
            return f"Papers — {self.title} ({self.title_zh})"
        return f"Chapter {self.book} — {self.title} ({self.title_zh})"

    @property
    def source(self) -> Path:
        return CHAPTERS_DIR / f"{self.slug}.py"

    @property
    def notebook(self) -> Path:
        return CHAPTERS_DIR / f"{self.slug}.ipynb"

    @property
    def available(self) -> bool:
        return self.source.exists()

    @property
    def figures(self) -> tuple[Figure, ...]:
        """The book's figures and tables this notebook is the home of, in the book's order."""
        return tuple(f for f in FIGURES if f.chapter == self)

    @property
    def claimed(self) -> tuple[str, ...]:
        """The ids of the figures this notebook checks with a claim."""
        return tuple(f.id for f in self.figures if f.status == CLAIM)


CHAPTERS: tuple[Chapter, ...] = (
    Chapter("ch04_frequency_principle", "4", "The frequency principle", "频率原则", 32),
    Chapter("ch05_multiscale_networks", "5", "Designing networks for high frequencies", "基于频率原则设计高效神经网络", 16),
    Chapter("ch06_frequency_mechanism", "6", "The mechanism of the frequency principle", "频率原则的机制分析", 19),
    Chapter("ch07_phase_diagram", "7", "The phase diagram of two-layer ReLU networks", "相图分析", 23),
    Chapter("ch08_condensation", "8", "Condensation", "凝聚现象", 38),
    Chapter("ch09_embedding_principle", "9", "The embedding principle of the loss landscape", "损失景观的嵌入原则", 18),
    Chapter("ch10_optimistic_estimate", "10", "The optimistic estimate of sample size", "乐观估计", 26),
    Chapter("ch11_flatness", "11", "Flatness of solutions and the Edge of Stability", "解的平坦性", 29),
    Chapter("ch12_anchor_functions", "12", "Anchor functions: a laboratory for language models", "锚函数", 70),
    Chapter("ch12b_composite_tasks", "12", "Anchor functions, part two: composition, synonyms and many anchors",
            "锚函数（二）：复合任务、近义词与多锚点", 75),
    Chapter("ch13_complexity_control", "13", "Complexity control and reasoning", "复杂度控制对语言模型推理能力的影响", 94),
    Chapter("ch13b_real_tasks_and_prediction", "13", "Complexity control, part two: real tasks and the chapter's "
            "prediction", "复杂度控制（二）：现实任务上的验证与机制预测", 40),
    Chapter("ch14_more_phenomena", "14", "More phenomena: grokking, lottery tickets, double descent, mode "
            "connectivity, and in-context learning as an implicit ΔW", "深度神经网络的更多现象", 59),
    Chapter("ch15_pinns", "15", "Neural networks for differential equations", "神经网络求解微分方程", 32),
    Chapter("icl_papers", PAPERS, "In-context learning: the papers behind §14.3", "上下文学习：§14.3 背后的论文",
            35, prefix="chicl"),
)


def find(name: str) -> Chapter:
    """The chapter whose slug or short name is ``name``, or whose slug starts with it (``ch04`` finds
    ``ch04_frequency_principle``, ``ch12`` the first part of chapter 12 and ``ch12b`` its second)."""
    exact = [c for c in CHAPTERS if c.slug == name] or [c for c in CHAPTERS if c.short == name]
    matches = exact or [c for c in CHAPTERS if name and c.slug.startswith(name)]
    if len(matches) > 1:
        raise ValueError(f"ambiguous chapter {name!r}: {', '.join(c.slug for c in matches)} all start with it; "
                         "give more of the name")
    if not matches:
        raise ValueError(f"unknown chapter {name!r}; choose one of {', '.join(c.slug for c in CHAPTERS)}")
    return matches[0]


def longest_first(chapters: Sequence[Chapter]) -> list[Chapter]:
    """``chapters`` with the longest-running first (ties in book order): run side by side in this order, the long ones
    overlap each other and the short ones fill the end, instead of one long chapter running alone at the end."""
    return sorted(chapters, key=lambda chapter: -chapter.seconds)


def available() -> list[Chapter]:
    """Chapters whose notebook source exists, in book order (the papers' notebook after the book's)."""
    return [c for c in CHAPTERS if c.available]


def sources() -> list[Path]:
    """The jupytext sources of every notebook of ``chapters/`` the catalog lists and that exists (the book's chapters,
    then the papers'): what the notebook tests iterate over, instead of globbing ``ch*.py``."""
    return [c.source for c in available()]


def by_claim_prefix(claim_id: str) -> Chapter | None:
    """The notebook whose claims have the prefix of ``claim_id`` (``"ch04.fp-order"`` → ch04_frequency_principle)."""
    prefix = claim_id.partition(".")[0]
    return next((c for c in CHAPTERS if c.claim_prefix == prefix), None)


@dataclass(frozen=True)
class Figure:
    """One figure or table of the book: where the companion stands on it."""

    id: str
    notebook: str
    kind: str
    status: str
    caption: str
    note: str = ""
    evidence: tuple[str, ...] = ()
    #: the phenomenon claims meant to test the figure's central statement (:mod:`companion.tools.fidelity`)
    claims: tuple[str, ...] = ()
    #: one line: what of the central statement no claim checks ("" where nothing is left unchecked)
    unchecked: str = ""

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[图表]\d+\.\d+", self.id):
            raise ValueError(f"figure id {self.id!r} must read 图N.M or 表N.M")
        if self.kind not in (COMP, ILLUS):
            raise ValueError(f"{self.id}: unknown kind {self.kind!r}; choose {COMP} or {ILLUS}")
        if self.status not in STATUSES:
            raise ValueError(f"{self.id}: unknown status {self.status!r}; choose one of {', '.join(STATUSES)}")
        if (self.kind == ILLUS) != (self.status == ILLUS) and self.status != CLAIM:
            raise ValueError(f"{self.id}: an illustrative figure has status {ILLUS} (or {CLAIM}), a computational one never {ILLUS}")

    @property
    def book_chapter(self) -> int:
        return int(self.id[1:].split(".")[0])

    @property
    def chapter(self) -> Chapter:
        return find(self.notebook)

    @property
    def cpu_feasible(self) -> bool:
        """Computational and runnable on a CPU with offline data."""
        return self.kind == COMP and self.status != GPU

    def named_by(self, label: str) -> bool:
        """Whether a claim labelled ``label`` (the text inside a verdict's brackets) is about this figure."""
        return self.id in figures_named(label) or label in self.evidence


_FIGURE_REF = re.compile(r"([图表])\s*(\d+\.\d+)((?:\s*[/,、]\s*\d+\.\d+)*)")


def figures_named(label: str) -> set[str]:
    """The figure ids a claim label names: ``"图13.5/13.6"`` → {图13.5, 图13.6}; ``"图15.1(b)"`` → {图15.1}."""
    named: set[str] = set()
    for prefix, first, rest in _FIGURE_REF.findall(label):
        named.add(prefix + first)
        named.update(prefix + n for n in re.findall(r"\d+\.\d+", rest))
    return named


FIGURES_FILE = Path(__file__).with_name("figures.csv")


def read_figures(path: Path = FIGURES_FILE) -> tuple[Figure, ...]:
    """The figure table: one row a figure, columns ``figure, notebook, kind, status, caption, note, evidence, claims,
    unchecked`` (``evidence``: extra claim labels that name the figure, separated by ``;``; ``claims``: the ids of the
    phenomenon claims meant to test its central statement, separated by ``;``; ``unchecked``: one line on what of that
    statement no claim checks); lines starting ``#`` are comments."""
    with path.open(encoding="utf-8", newline="") as fh:
        rows = csv.DictReader(line for line in fh if not line.startswith("#"))
        return tuple(Figure(r["figure"], r["notebook"], r["kind"], r["status"], r["caption"], r["note"],
                            tuple(e for e in r["evidence"].split(";") if e),
                            tuple(c for c in (r.get("claims") or "").split(";") if c), r.get("unchecked") or "")
                     for r in rows)


FIGURES: tuple[Figure, ...] = read_figures()


def figure(figure_id: str) -> Figure:
    """The catalog entry of ``figure_id`` (``"图4.7"``)."""
    for f in FIGURES:
        if f.id == figure_id:
            return f
    raise ValueError(f"unknown figure {figure_id!r}: the catalog lists 图/表 4.1–15.2")


def book_chapters() -> list[int]:
    return sorted({f.book_chapter for f in FIGURES})


def table_cell(text: str) -> str:
    """Text safe inside a Markdown table cell (the README's, the site's)."""
    return text.replace("|", "\\|").replace("\n", " ")


class PrintedVerdict(Protocol):
    """A verdict line as a committed notebook printed it (``site.ClaimRecord``): notebook, label, outcome."""

    chapter: str
    figure: str
    holds: bool
    exploration: bool
    identity: bool


def discrepancies(verdicts: Sequence[PrintedVerdict]) -> list[str]:
    """Where the catalog and the notebooks' verdicts disagree (an empty list: they agree).

    * a figure listed as ``claim`` needs a passing phenomenon claim (neither an exploration nor an identity) in its
      notebook that names it;
    * a figure listed as ``exploration`` needs an exploration verdict there;
    * every verdict that names a figure must name one of the catalog, in the notebook the catalog gives,
      with a status that admits it (``claim`` for a ✔ or ✘ verdict; ``claim`` or ``exploration`` for ◇; any status
      for an identity, which checks the mathematics, not the figure's phenomenon).
    """
    problems: list[str] = []
    for f in FIGURES:
        mine = [v for v in verdicts if v.chapter == f.chapter.slug and f.named_by(v.figure)]
        if f.status == CLAIM and not any(v.holds and not (v.exploration or v.identity) for v in mine):
            problems.append(f"{f.id} is listed as claimed, but {f.chapter.slug} prints no passing claim naming it")
        if f.status == EXPLORATION and not any(v.exploration for v in mine):
            problems.append(f"{f.id} is listed as an exploration, but {f.chapter.slug} prints none naming it")
    known = {f.id: f for f in FIGURES}
    for v in verdicts:
        for fid in sorted(figures_named(v.figure)):
            f = known.get(fid)
            allowed = STATUSES if v.identity else (CLAIM, EXPLORATION) if v.exploration else (CLAIM,)
            if f is None:
                problems.append(f"{v.chapter} prints a verdict on {fid}, which the catalog does not list")
            elif f.chapter.slug != v.chapter:
                problems.append(f"{v.chapter} prints a verdict on {fid}, which the catalog places in {f.chapter.slug}")
            elif f.status not in allowed:
                problems.append(f"{v.chapter} prints a{'n exploration' if v.exploration else ' claim'} on {fid}, "
                                f"which the catalog lists as {f.status}")
    return problems
