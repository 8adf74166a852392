"""The notebooks' quick-profile times, measured quietly: what the README and the landing page say of them.

``benchmarks/reproduce_timing.py`` runs every chapter's quick profile (seed 0, empty results cache) one at a time on a
machine doing nothing else, and records each one's wall and CPU seconds in ``benchmarks/reproduce_timing.json`` with
the machine, the date and the commit (:func:`write_quiet_times`).  The chapter map (README and landing page,
:func:`companion.tools.fidelity.chapter_map_markdown`) shows those times beside each notebook and each notebook's
budget (:attr:`companion.tools.catalog.Chapter.budget`: 60 s; chapters 12–14 and the papers 120 s); no prose states
a time of its own.  The robustness sweep's times are not used: its chapters run two at a time.

The same kind of machine does not always run at the same speed (the 2-core machines here have run the same notebooks
1.3–2× slower on some days than on others), so each notebook's entry also records how long a fixed reference
computation took just before it (:func:`reference_seconds`): times measured on different days compare as ratios to
it, and re-measuring only some notebooks is refused when the machine's speed has moved (:data:`SPEED_TOLERANCE`).
"""

from __future__ import annotations

import json
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

from companion.kit.i18n import tr
from companion.tools import catalog

#: Where the benchmark writes the times and the chapter map reads them.
QUIET_TIMES = catalog.ROOT / "benchmarks" / "reproduce_timing.json"

#: How far the reference computation's time may move (as a ratio) before a partial re-measurement is refused.
SPEED_TOLERANCE = 1.2


def reference_seconds(repeats: int = 3) -> float:
    """Seconds one core takes for a fixed computation, the median of ``repeats``: a 1-256-256-1 tanh network trained
    by full-batch Adam for 300 steps on 1 000 points (2–2½ s on the 2-core machines here on 2026-12-02).

    Its step is the engine's :func:`companion.core.train.descend` (the package's one place for ``backward`` and the
    optimiser's step), which is the same two torch calls as a hand-written loop; nothing else of the companion runs,
    so that it measures the machine and not the code: the same number on two days means the same speed."""
    import torch

    from companion.core.train import descend

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        times = []
        for _ in range(repeats):
            generator = torch.Generator().manual_seed(0)
            x = torch.linspace(-1, 1, 1000).unsqueeze(1)
            y = torch.sin(5 * x)
            net = torch.nn.Sequential(torch.nn.Linear(1, 256), torch.nn.Tanh(), torch.nn.Linear(256, 256),
                                      torch.nn.Tanh(), torch.nn.Linear(256, 1))
            with torch.no_grad():
                for parameter in net.parameters():
                    parameter.copy_(torch.randn(parameter.shape, generator=generator) * 0.1)
            step = descend(torch.optim.Adam(net.parameters(), lr=1e-3), lambda: ((net(x) - y) ** 2).mean())
            start = time.perf_counter()
            for index in range(300):
                step(index)
            times.append(time.perf_counter() - start)
        return statistics.median(times)
    finally:
        torch.set_num_threads(threads)


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
    reference: dict[str, float] = field(default_factory=dict)

    def reference_median(self) -> float | None:
        """The median over the notebooks of the reference computation's seconds (:func:`reference_seconds`) measured
        just before each one; None for a measurement made before it was recorded."""
        return statistics.median(self.reference.values()) if self.reference else None

    def remeasured(self) -> dict[str, list[str]]:
        """The notebooks measured at another commit than :attr:`commit`, by commit."""
        out: dict[str, list[str]] = {}
        for slug, commit in self.commits.items():
            if commit != self.commit:
                out.setdefault(commit, []).append(slug)
        return out


def write_quiet_times(per_chapter: dict[str, tuple[float, float]], path: Path = QUIET_TIMES,
                      reference: dict[str, float] | None = None) -> Path:
    """Record ``per_chapter`` (slug → (wall s, CPU s)) with the machine, the date, the commit, torch's version and, per
    notebook, ``reference`` (slug → :func:`reference_seconds` just before it).  When only some notebooks were
    measured, the others keep their recorded times (and commits) — on the same machine only, running at the same
    speed: the new references' median within :data:`SPEED_TOLERANCE` of the recorded one."""
    import torch

    from companion.tools.robustness import git_commit, machine_words

    commit, machine = git_commit(), machine_words()
    old = json.loads(path.read_text(encoding="utf-8")) if path.exists() else None
    chapters = {}
    if old is not None and set(per_chapter) < {c.slug for c in catalog.available()}:
        if old["machine"] != machine or old["torch"] != torch.__version__:
            raise ValueError(f"the recorded times were measured on {old['machine']} with torch {old['torch']}: measure "
                             "every notebook here (python benchmarks/reproduce_timing.py --cold-only)")
        recorded = [c["reference_s"] for c in old["chapters"].values() if "reference_s" in c]
        if reference and len(recorded) < len(old["chapters"]):
            raise ValueError("the recorded times do not say the machine's speed (no reference computation): measure "
                             "every notebook (python benchmarks/reproduce_timing.py --cold-only)")
        if reference:
            then, now = statistics.median(recorded), statistics.median(reference.values())
            if max(now / then, then / now) > SPEED_TOLERANCE:
                raise ValueError(f"this machine runs at another speed than when the recorded times were measured "
                                 f"(reference computation {now:.2f} s now, {then:.2f} s then): measure every notebook "
                                 "(python benchmarks/reproduce_timing.py --cold-only)")
        chapters = {slug: {"commit": old["commit"], **c} for slug, c in old["chapters"].items()}
        commit_all, date = old["commit"], old["measured_at"]
    else:
        commit_all, date = commit, time.strftime("%Y-%m-%d")
    for slug, (wall, cpu) in per_chapter.items():
        chapters[slug] = {"wall_s": round(wall, 1), "cpu_s": round(cpu, 1), "commit": commit}
        if reference and slug in reference:
            chapters[slug]["reference_s"] = round(reference[slug], 3)
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
                      {s: c.get("commit", data["commit"]) for s, c in chapters.items()},
                      {s: float(c["reference_s"]) for s, c in chapters.items() if "reference_s" in c})


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
        total=len(slugs)) + again + speed_sentence(times, language)


def speed_sentence(times: QuietTimes, language: str = "en") -> str:
    """What the reference computation (:func:`reference_seconds`) took while the notebooks were measured: the
    machine's speed then, to compare another machine's (or day's) times with, as a ratio."""
    median = times.reference_median()
    if median is None:
        return ""
    return tr(" The machine's speed then: a fixed reference computation on one core "
              "(`companion.tools.timing.reference_seconds`) took {median:.2f} s (median over the notebooks; "
              "{low:.2f}–{high:.2f} s); a machine on which it takes twice as long runs the notebooks about twice as "
              "long.", language).format(median=median, low=min(times.reference.values()),
                                        high=max(times.reference.values()))
