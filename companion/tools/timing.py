"""The notebooks' quick-profile times, measured quietly: what the README and the landing page say of them.

``benchmarks/reproduce_timing.py`` runs every chapter's quick profile (seed 0, empty results cache) one at a time on a
machine doing nothing else, and records each one's wall and CPU seconds in ``benchmarks/reproduce_timing.json`` with
the machine, the date and the commit (:func:`write_quiet_times`).  The chapter map (README and landing page,
:func:`companion.tools.fidelity.chapter_map_markdown`) shows those times beside each notebook and each notebook's
budget (:attr:`companion.tools.catalog.Chapter.budget`: 60 s; chapters 12–14 and the papers 120 s); no prose states
a time of its own.  The robustness sweep's times are not used: its chapters run two at a time.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from companion.kit.i18n import tr
from companion.tools import catalog

#: Where the benchmark writes the times and the chapter map reads them.
QUIET_TIMES = catalog.ROOT / "benchmarks" / "reproduce_timing.json"


@dataclass(frozen=True)
class QuietTimes:
    """One quiet measurement: per notebook slug its wall seconds (kernel start included), CPU seconds and the commit
    it ran at (a notebook measured again after a change has its own)."""

    wall: dict[str, float]
    cpu: dict[str, float]
    measured_at: str
    commit: str
    machine: str
    torch: str
    commits: dict[str, str] = field(default_factory=dict)

    def remeasured(self) -> dict[str, list[str]]:
        """The notebooks measured at another commit than :attr:`commit`, by commit."""
        out: dict[str, list[str]] = {}
        for slug, commit in self.commits.items():
            if commit != self.commit:
                out.setdefault(commit, []).append(slug)
        return out


def write_quiet_times(per_chapter: dict[str, tuple[float, float]], path: Path = QUIET_TIMES) -> Path:
    """Record ``per_chapter`` (slug → (wall s, CPU s)) with the machine, the date, the commit and torch's version.  When
    only some notebooks were measured, the others keep their recorded times (and commits) — on the same machine only."""
    import torch

    from companion.tools.robustness import git_commit, machine_words

    commit, machine = git_commit(), machine_words()
    old = json.loads(path.read_text(encoding="utf-8")) if path.exists() else None
    chapters = {}
    if old is not None and set(per_chapter) < {c.slug for c in catalog.available()}:
        if old["machine"] != machine or old["torch"] != torch.__version__:
            raise ValueError(f"the recorded times were measured on {old['machine']} with torch {old['torch']}: measure "
                             "every notebook here (python benchmarks/reproduce_timing.py --cold-only)")
        chapters = {slug: {"commit": old["commit"], **c} for slug, c in old["chapters"].items()}
        commit_all, date = old["commit"], old["measured_at"]
    else:
        commit_all, date = commit, time.strftime("%Y-%m-%d")
    for slug, (wall, cpu) in per_chapter.items():
        chapters[slug] = {"wall_s": round(wall, 1), "cpu_s": round(cpu, 1), "commit": commit}
    for c in chapters.values():
        if c["commit"] == commit_all:
            del c["commit"]  # the measurement's own commit is said once
    data = {"measured_at": date, "commit": commit_all, "machine": machine, "torch": torch.__version__,
            "profile": "quick", "seed": 0, "chapters": chapters}
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def read_quiet_times(path: Path = QUIET_TIMES) -> QuietTimes | None:
    """The recorded measurement, or None when there is none yet."""
    if not path.exists():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    chapters = data["chapters"]
    return QuietTimes({s: float(c["wall_s"]) for s, c in chapters.items()},
                      {s: float(c["cpu_s"]) for s, c in chapters.items()},
                      data["measured_at"], data["commit"], data["machine"], data["torch"],
                      {s: c.get("commit", data["commit"]) for s, c in chapters.items()})


def time_cell(slug: str, times: QuietTimes | None, language: str = "en") -> str:
    """The chapter map's cell for one notebook: its quiet time, flagged when over its budget; "—" if unmeasured."""
    if times is None or slug not in times.wall:
        return "—"
    seconds, budget = times.wall[slug], catalog.find(slug).budget
    cell = f"{seconds:.0f} s"
    return cell if seconds < budget else cell + " " + tr("(over its {budget} s budget)", language).format(budget=budget)


def times_sentence(times: QuietTimes | None, language: str = "en") -> str:
    """The sentence under the chapter map saying how the times were measured and how many fit their budget."""
    if times is None:
        return tr("The notebooks' times have not been measured yet (`python benchmarks/reproduce_timing.py`).", language)
    slugs = [c.slug for c in catalog.available() if c.slug in times.wall]
    within = sum(times.wall[s] < catalog.find(s).budget for s in slugs)
    again = "".join(tr(" {notebooks} measured again at commit `{commit}`.", language).format(
        notebooks=", ".join(f"`{s}`" for s in notebooks), commit=commit) for commit, notebooks in times.remeasured().items())
    return tr("**Times**: each notebook's quick profile run alone (seed 0, empty cache, its kernel's start included) on a "
              "machine doing nothing else — {machine}, torch {torch}, {date}, commit `{commit}` — measured by "
              "`python benchmarks/reproduce_timing.py`; {within} of {total} notebooks run within their budget (60 s; "
              "chapters 12–14 and the papers 120 s).", language).format(
        machine=times.machine, torch=times.torch, date=times.measured_at, commit=times.commit, within=within,
        total=len(slugs)) + again
