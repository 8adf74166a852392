"""The robustness report: every chapter on many seeds, every claim's pass count and margin.

``python -m companion robustness --seeds 0-19 [--chapters ch04,ch07] [--jobs N]`` executes each
chapter notebook (quick profile) once per seed, exactly as ``reproduce`` does, and collects every
claim's verdict and margin (see :mod:`companion.kit.claims`).  The chapters × seeds runs are
:mod:`joblib` tasks (``--jobs`` local processes; a ``joblib.parallel_config(backend="dask")``
block spreads the same call over a Dask cluster), each cached on disk under a digest of the
chapter's code cells and of the package modules it imports: an interrupted sweep resumes where it
stopped, and a run is never cached unless it finished (a timeout or Ctrl-C leaves nothing behind).

The report (``robustness/report.json``) holds, per chapter, the digest and the commit it was made
at, the seconds, any error and the place (machine, device, torch: :func:`run_place`) of each seed, and per
claim the verdict and margin on each seed with the pass count and the minimum and median margin.  The
standard (DEVELOPERS.md): every claim holds on at least 19 of 20 of **its validation seeds** and each chapter
as a whole (all its claims on one seed) on at least 18 of 20, and a claim's median margin clears its thin line.
A claim's validation seeds are declared beside it (``ClaimSpec(validation_seeds=…)``, recorded with each
verdict): seeds 0–19, or, for a claim changed after its results on 0–19 were seen, seeds 500–519
(``--seeds 500-519``); the report keeps a claim's results on its other seeds too, counted apart
(``other_seeds``: in-sample for such a claim).  The book site shows the report and marks
the chapters whose digest changed since it was made.

A sweep **merges** into the report already in ``--out`` (:func:`merge`), never replaces it: per chapter and seed,
the new results join the old ones of the same code (digest), and the report's seeds are the union.  A chapter whose
code changed is replaced by its new results only when they cover every seed the report has for it; a report of
another profile, or a changed chapter run on fewer seeds, is refused (before anything runs) with one line — give
``--out`` another folder.  Every report read (``--out``'s, ``--merge``'s) is checked against the report's schema
(:func:`report_problem`): a file that is not one is named, with what is wrong.  ``report.json`` is written
atomically (a temporary file moved over it), so a killed run leaves the old report or the new one.

Each profile has its own report (:func:`report_path`): ``--profile full`` (the book's scale, issue #40) merges into
``robustness/report-full.json`` and never into the quick one.  For a device window of fixed length, ``--budget
SECONDS`` starts no run after that long and writes the report after every finished run, and ``--missing`` runs only
the chapter × seed runs the report lacks for the current code; windows on different machines are joined with
``--merge`` (``benchmarks/full_profile_window.sh`` runs one window's share end to end).
"""

from __future__ import annotations

import hashlib
import inspect
import json
import math
import os
import platform
import statistics
import subprocess
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from unittest.mock import patch

import joblib
from tqdm.auto import tqdm

from companion.tools import catalog
from companion.kit.cache import SWEEPS, CachedFunction, module_file, reachable_modules
from companion.kit.claims import EXPLORATION, IDENTITY, KINDS, PHENOMENON, THIN_LINE, VALIDATION_SEEDS
from companion.kit.config import PROFILES, ConfigError, pick_device
from companion.tools.launch import INSTALL_TAG, is_install_cell
from companion.tools.runner import ChapterRun, CompanionNotImportable, KernelDied, load_source, run_chapter

REPORT_DIR = catalog.ROOT / "robustness"
#: The full profile's report judges a claim on at least this many of its validation seeds, and it holds there only
#: on every one (issue #40: "≥ 5 seeds", "only if it holds on every measured seed"; CLAIM_SHARE of 5 is 5).
FULL_PROFILE_SEEDS = 5
USUAL_SEEDS = frozenset(map(str, VALIDATION_SEEDS))  # 0–19 as a report's keys
CLAIM_SHARE, CHAPTER_SHARE = 19 / 20, 18 / 20
#: The most seeds one ``--seeds`` may name, and the bound every seed lies below (as :func:`read_seed` requires).
MAX_SEEDS, SEED_LIMIT = 10_000, 2**32


def report_path(out: Path, profile: str = "quick") -> Path:
    """The report of ``profile`` in the folder ``out``: ``report.json`` for the quick profile, ``report-full.json``
    for the full one (the book's scale, :doc:`docs/full-profile`), so that the two never merge into one another."""
    if profile not in PROFILES:
        raise ConfigError(f"profile must be one of {', '.join(PROFILES)}, got {profile!r}")
    return Path(out) / ("report.json" if profile == "quick" else f"report-{profile}.json")


def parse_seeds(text: str) -> list[int]:
    """``"0-19"``, ``"3"`` or ``"0,2,5-7"`` → a sorted list of distinct seeds in [0, 2**32), at most
    :data:`MAX_SEEDS` of them (checked before any range is spelled out)."""
    seeds: set[int] = set()
    for part in str(text).split(","):
        part = part.strip()
        try:
            lo, hi = (int(v) for v in part.split("-", 1)) if "-" in part else (int(part), int(part))
            if lo > hi:
                raise ValueError
        except ValueError:
            raise ConfigError(f"bad seed range {part!r} in --seeds {text!r}: write e.g. 0-19 or 0,2,5-7") from None
        if lo < 0 or hi >= SEED_LIMIT:
            raise ConfigError(f"seeds lie in [0, 2**32): {part!r} in --seeds does not")
        if hi - lo + 1 + len(seeds) > MAX_SEEDS:
            raise ConfigError(f"--seeds names more than {MAX_SEEDS} seeds ({part!r}): sweep fewer at a time")
        seeds.update(range(lo, hi + 1))
    if not seeds:
        raise ConfigError(f"--seeds {text!r} must name non-negative integers, e.g. 0-19")
    return sorted(seeds)


def chapter_code(source: Path) -> bytes:
    """The code cells of a chapter's jupytext source, in order: what a run executes.  Its markdown is left out,
    so that rewording the text (or stating a measured pass rate) does not make a sweep's results stale; so is its
    install cell (tagged ``launch-install``, :mod:`companion.tools.launch`), a no-op where the companion is installed
    that cannot change a result."""
    cells = load_source(source).cells
    return "\n\0".join(c.source for c in cells if c.cell_type == "code" and not is_install_cell(c)).encode()


def chapter_digest(chapter: catalog.Chapter) -> str:
    """A hash of the chapter's code cells and of every package module it imports, directly or not."""
    digest = hashlib.sha256(chapter_code(chapter.source))
    for name in reachable_modules(chapter.source):
        digest.update(name.encode() + b"\0" + module_file(name).read_bytes())
    return digest.hexdigest()[:16]


def _not_installed(run: ChapterRun) -> bool:
    """Whether ``run`` stopped because its kernel had no companion: it could not import it, or the chapter's install
    cell (which runs only then) raised — e.g. its ``pip install -e`` failed while another kernel's was installing."""
    return bool(run.error) and (run.error.startswith("ModuleNotFoundError: No module named 'companion")
                                or INSTALL_TAG in run.stopped_in)


def _run_one(source: str, seed: int, profile: str, digest: str, timeout: int, threads: str) -> dict[str, Any]:
    """One chapter on one seed: its claims, seconds and error (cached by the caller under ``digest``).

    A notebook that raised is a result (its error is recorded and cached: the same code fails the same
    way); a timeout, a dead kernel, a kernel that cannot import the companion or Ctrl-C propagates, so nothing is
    cached for it.
    """
    extra = {"COMPANION_THREADS": threads} if threads else {}
    run = run_chapter(Path(source), None, profile=profile, seed=seed, timeout=timeout, extra_env=extra)
    if run.error and run.error.startswith("KeyboardInterrupt"):
        raise KeyboardInterrupt(f"{Path(source).stem} seed {seed} was interrupted")  # never cached
    if run.stopped == "kernel died":  # killed from outside (the OOM killer): not what the code does, never cached
        raise KernelDied(f"{Path(source).stem} seed {seed}: {run.error}; run the sweep again to resume")
    if _not_installed(run):  # the install, not the code
        raise CompanionNotImportable(f"{Path(source).stem} seed {seed}: the kernel cannot import the companion "
                                     f"({run.error}); install it (`pip install -e .` in the repository) and run the "
                                     "sweep again")
    return {"chapter": Path(source).stem, "seed": seed, "digest": digest, "seconds": run.seconds,
            "error": run.error, "claims": [asdict(c) for c in run.claims]}


class SweepRuns(CachedFunction):
    """:func:`_run_one` with its results in the cache under what decides them: the chapter's file name, seed,
    profile, digest and thread count.  Not the timeout, which only decides whether a run finishes (an unfinished
    run is never cached), and not the folder the chapter was run from: a run of the same code (the same digest) in a
    git worktree or another clone is the same measurement, so ``--cached-only`` finds it."""

    def entry(self, location: Path, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Path:
        bound = inspect.signature(self.func).bind(*args, **kwargs)
        bound.apply_defaults()
        key = dict(bound.arguments)
        del key["timeout"]
        key["source"] = Path(key["source"]).name
        return location / self.space / self.func.__qualname__ / joblib.hash(list(key.items()))


def sweep_runs() -> SweepRuns:
    """The cached :func:`_run_one` of a sweep."""
    return SweepRuns(_run_one, SWEEPS)


def sweep_threads(jobs: int, profile: str) -> str:
    """``COMPANION_THREADS`` for each run of a sweep ('': the profile's own default, :func:`~companion.kit.config.read_threads`).

    The caller's ``COMPANION_THREADS`` wins.  Otherwise each run gets one thread wherever runs share the CPU's cores:
    with ``--jobs`` > 1, and in the full profile on a machine without CUDA even with ``--jobs 1``, whose default
    there would be every core.  A run on several threads beside another busy program waits, at the end of each
    parallel operation, for a descheduled partner: two full-profile sweeps started apart with ``--jobs 1`` on a 2-core
    CPU (2026-12-07) took 69 minutes over 图8.13's three-layer nets, which one thread trains in 6–12.  A lone sweep on
    an idle machine thus leaves a core unused; ``--jobs 2`` uses it (``docs/full-profile.md``).  The quick profile
    keeps its default of one thread, which lends a second to a batched computation while a core is free
    (:func:`~companion.kit.config.batched_threads`).
    """
    explicit = os.environ.get("COMPANION_THREADS", "").strip()
    if explicit:
        return explicit
    shares_cpu = jobs != 1 or (profile == "full" and pick_device(profile).type == "cpu")
    return "1" if shares_cpu else ""


def run_sweep(chapters: Sequence[catalog.Chapter], seeds: Sequence[int], *, jobs: int = 1,
              profile: str = "quick", timeout: int = 900, progress: bool = True,
              cached_only: bool = False, budget: float | None = None,
              skip: Iterable[tuple[str, int]] = (), on_result: Any = None) -> list[dict[str, Any]]:
    """Every chapter × seed, through joblib and the on-disk cache, handed out longest chapter first
    (:func:`~companion.tools.catalog.longest_first`); results in (chapter, seed) order.

    The thread count is part of each run's cache key (:class:`SweepRuns`) on purpose: another count can change
    floating-point sums, so a run at another count is another measurement (:func:`sweep_threads` chooses it).
    ``jobs=-1``: as many at once as the joblib backend has workers
    (a Dask cluster: :func:`companion.kit.cache.parallel_backend`).

    With ``cached_only`` nothing runs: the result holds the runs the cache has for the current code
    (e.g. to report on a sweep that was stopped before its end).  ``skip`` names (chapter slug, seed) pairs not to
    run (those a report already holds).  With ``budget`` (seconds) no run starts once that much time has passed
    since the call (the runs under way finish): one device window's share.  ``on_result(item, done)`` is called
    after each finished run with the results so far, so that a caller can write them as they come.
    """
    threads = sweep_threads(jobs, profile)
    cached = sweep_runs()
    skipped = {(slug, int(seed)) for slug, seed in skip}
    tasks = [(str(ch.source), seed, profile, chapter_digest(ch), timeout, threads)
             for ch in catalog.longest_first(chapters) for seed in seeds if (ch.slug, seed) not in skipped]
    if cached_only:
        tasks = [task for task in tasks if cached.check_call_in_cache(*task)]
    start = time.perf_counter()

    def within_budget():  # consumed lazily by joblib, one task per free worker when a budget is set
        for task in tasks:
            if budget is not None and time.perf_counter() - start >= budget:
                return
            yield joblib.delayed(cached)(*task)

    bar = tqdm(total=len(tasks), desc="chapters × seeds", disable=not progress)
    done: dict[tuple[str, int], dict[str, Any]] = {}
    try:
        parallel = joblib.Parallel(n_jobs=jobs, return_as="generator_unordered",
                                   pre_dispatch="n_jobs" if budget is not None else "2*n_jobs")
        for item in parallel(within_budget()):
            done[(item["chapter"], item["seed"])] = item
            bar.set_postfix_str(f"{item['chapter'].partition('_')[0]} seed {item['seed']}", refresh=False)
            bar.update(1)
            if on_result is not None:
                on_result(item, list(done.values()))
    finally:
        bar.close()
    keys = [(Path(ch.source).stem, seed) for ch in chapters for seed in seeds]
    return [done[key] for key in keys if key in done]  # all of them, unless ``cached_only``, ``skip`` or ``budget``


def git_commit() -> str:
    """The checked-out commit (12 hex digits), with "+uncommitted" when companion/ or chapters/ differ from it."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=catalog.ROOT, capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "companion", "chapters"], cwd=catalog.ROOT,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+uncommitted" if dirty else "")


def machine_words() -> str:
    """The machine in a few words, e.g. ``x86_64, 2 cores, Intel(R) Xeon(R) Processor, AVX512``: the processor and
    the instruction set torch's kernels use, since another set can change the last bits of a sum and, through
    training, a margin (a restamp compares margins exactly)."""
    import torch

    model = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            model = next((line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")), "")
    except OSError:
        pass
    parts = [platform.machine(), f"{os.cpu_count()} cores", model or platform.processor(),
             torch.backends.cpu.get_cpu_capability()]
    return ", ".join(p for p in parts if p)


def device_words() -> str:
    """The device the chapters' tensors go to on this machine: the GPU's name where torch sees one (a chapter's settings
    put its work there), else ``CPU``."""
    import torch

    return torch.cuda.get_device_name(0) if torch.cuda.is_available() else "CPU"


def run_place() -> dict[str, str]:
    """Where a run is made, recorded with each seed of a report: ``machine`` (:func:`machine_words`), ``device``
    (:func:`device_words`) and ``torch`` — a merged report joins runs made on different machines, a GPU window's and
    a CPU's, and a reader must see which is which."""
    import torch

    return {"machine": machine_words(), "device": device_words(), "torch": torch.__version__}


def run_on_text(runs: dict[str, dict[str, Any]], fallback: str = "—") -> str:
    """The devices a chapter's seeds ran on, each with its seeds when there are several, e.g. ``CPU`` or
    ``CPU 0–3 · NVIDIA H200 4`` (a run made before the device was recorded: ``fallback``)."""
    by_device: dict[str, list[str]] = {}
    for seed, run in runs.items():
        by_device.setdefault(run.get("device") or fallback, []).append(seed)
    if len(by_device) == 1:
        return next(iter(by_device))
    return " · ".join(f"{device} {seed_text(seeds).replace('-', '–')}" for device, seeds in
                      sorted(by_device.items(), key=lambda kv: min(map(int, kv[1]))))


def _joined(old: Any, new: Any) -> Any:
    """Two reports' ``machine`` (or ``torch``) as one: the same, or both joined by `` + `` (each named once)."""
    parts = [p for p in f"{old or ''} + {new or ''}".split(" + ") if p]
    return " + ".join(dict.fromkeys(parts)) or new


def _later(a: str | None, b: str | None) -> str | None:
    """The later of two ``made_at`` stamps (ISO 8601 in UTC, as :func:`summarise` writes them), or the one given."""
    return max((t for t in (a, b) if t), default=None, key=lambda t: datetime.fromisoformat(t))


def _tightness(claim: dict[str, Any]) -> float:
    if claim["margin"] is None:
        return math.inf if claim["passed"] else -math.inf
    return claim["margin"] / THIN_LINE[claim["unit"]]


def summarise(items: Iterable[dict[str, Any]], seeds: Sequence[int], *, wall_seconds: float | None, jobs: int,
              profile: str) -> dict[str, Any]:
    """The report for one sweep (see the module docstring for its fields)."""
    made_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    chapters: dict[str, dict[str, Any]] = {}
    claims: dict[str, dict[str, Any]] = {}
    commit = git_commit()
    place = run_place()
    for item in items:
        ch = chapters.setdefault(item["chapter"], {"digest": item["digest"], "commit": commit,
                                                   "made_at": made_at, "seeds": {}})
        ids = [c["id"] for c in item["claims"] if not c["exploration"]]
        ok = item["error"] is None and all(c["passed"] for c in item["claims"] if not c["exploration"])
        ch["seeds"][str(item["seed"])] = {"seconds": round(item["seconds"], 1), "error": item["error"], "ok": ok,
                                          "claims": len(ids), **place}
        for c in item["claims"]:
            entry = claims.setdefault(c["id"], {"chapter": item["chapter"], "figure": c["figure"], "text": c["text"],
                                                "kind": claim_kind(c), "exploration": c["exploration"],
                                                "validation_seeds": c.get("validation_seeds", list(VALIDATION_SEEDS)),
                                                "seeds": {}})
            entry["seeds"][str(item["seed"])] = {"passed": c["passed"], "margin": c["margin"], "unit": c["unit"],
                                                 "thin": c["thin"], "tightest": c["tightest"]}
    return tally({"profile": profile, "seeds": list(seeds), "jobs": jobs,
                  "wall_seconds": None if wall_seconds is None else round(wall_seconds, 1),
                  "torch": place["torch"], "machine": place["machine"],
                  "made_at": made_at, "chapters": chapters, "claims": claims})


def tally(report: dict[str, Any]) -> dict[str, Any]:
    """(Re)compute the counts of ``report`` from its per-seed results.

    Each claim is judged on **its validation seeds** (``validation_seeds``, recorded with its verdicts), by
    :func:`_claim_stats`: a claim validated on the usual seeds 0–19 on those of them the report holds; a claim changed
    after its 0–19 results were seen on all of 500–519 (until its chapter ran them all it is ``incomplete``) — in the
    full profile's report, which runs a few seeds (issue #40), on those of 500–519 it holds, at least
    :data:`FULL_PROFILE_SEEDS` of them.  Its results on other seeds are kept and counted apart.  A chapter is complete
    when it ran every seed its judged claims (explorations aside) are judged on (a chapter of explorations only: the
    usual seeds the report holds), and meets the standard when it holds as a whole on 18 of 20 of the seeds it ran."""
    held = set(map(str, report["seeds"]))
    full = report.get("profile") == "full"
    judged_on: dict[str, set[str]] = {}
    for entry in report["claims"].values():
        entry.setdefault("validation_seeds", list(VALIDATION_SEEDS))
        if not entry["exploration"]:  # an exploration's rate is shown on the seeds run; it holds no chapter back
            judged_on.setdefault(entry["chapter"], set()).update(_judged_seeds(entry, held, full))
    for slug, ch in report["chapters"].items():
        # A run holds when it raised nothing and every claim of the chapter that is not an exploration *now* passed
        # on it: a claim re-kinded since (by --restamp) no longer holds a seed back, or starts to.
        judged = [e for e in report["claims"].values() if e["chapter"] == slug and not e["exploration"]]
        for seed, run in ch["seeds"].items():
            run["ok"] = run.get("error") is None and all(e["seeds"][seed]["passed"] for e in judged if seed in e["seeds"])
        ch["passed"] = sum(run["ok"] for run in ch["seeds"].values())
        ch["runs"] = len(ch["seeds"])
        needed = judged_on.get(slug) or held & USUAL_SEEDS  # explorations only: the usual seeds
        ch["complete"] = set(ch["seeds"]) >= needed
        ch["meets_standard"] = ch["complete"] and ch["passed"] >= math.ceil(CHAPTER_SHARE * ch["runs"] - 1e-9)
    for entry in report["claims"].values():
        _claim_stats(entry, _judged_seeds(entry, held, full), set(report["chapters"][entry["chapter"]]["seeds"]),
                     FULL_PROFILE_SEEDS if full else 1)
    return report


def _judged_seeds(entry: dict[str, Any], held: set[str], full: bool = False) -> set[str]:
    """The seeds claim ``entry`` is judged on in a report holding seeds ``held``: its validation seeds — the usual
    ones (0–19) as far as the report has them, any others all of them; in the full profile's report (``full``) every
    claim's as far as the report has them."""
    validation = set(map(str, entry["validation_seeds"]))
    return validation & held if full or validation == USUAL_SEEDS else validation


def unjudged_seeds(entry: dict[str, Any], report: dict[str, Any]) -> list[int]:
    """The seeds claim ``entry`` of ``report`` still waits for before it can be judged: of the seeds it is judged on
    (:func:`_judged_seeds`), those its chapter has not run — in the full profile's report, where it is judged on at
    least :data:`FULL_PROFILE_SEEDS`, its first validation seeds up to that many when the report holds fewer."""
    full = report.get("profile") == "full"
    judged = _judged_seeds(entry, set(map(str, report["seeds"])), full)
    if full and len(judged) < FULL_PROFILE_SEEDS:
        more = [s for s in sorted(map(str, entry["validation_seeds"]), key=int) if s not in judged]
        judged |= set(more[:FULL_PROFILE_SEEDS - len(judged)])
    return sorted(map(int, judged - set(report["chapters"][entry["chapter"]]["seeds"])))


def _claim_stats(entry: dict[str, Any], judged: set[str], ran: set[str], at_least: int = 1) -> None:
    """Pass count over the ``judged`` seeds its chapter ``ran`` (a seed run without this claim's verdict counts as
    failed; one not run yet, or fewer than ``at_least`` judged seeds, makes the claim ``incomplete``), the margin's
    minimum and median over them, and apart (``other_seeds``) the pass count on the other seeds its chapter ran — for
    a claim changed after its 0–19 results were seen, those are in-sample."""
    runs = [entry["seeds"].get(s) for s in sorted(judged & ran, key=int)]
    entry["runs"] = len(runs)
    entry["passed"] = sum(bool(r and r["passed"]) for r in runs)
    entry["complete"] = len(judged) >= at_least and judged <= ran
    others = [entry["seeds"].get(s) for s in sorted(ran - judged, key=int)]
    entry["other_seeds"] = {"passed": sum(bool(r and r["passed"]) for r in others), "runs": len(others)} \
        if others else None
    present = sorted((r for r in runs if r is not None), key=_tightness)
    for stale in ("min_margin", "median_margin"):  # a claim with no run left here keeps no old margin
        entry.pop(stale, None)
    if present:
        low, mid = present[0], present[(len(present) - 1) // 2]
        entry["min_margin"] = {"margin": low["margin"], "unit": low["unit"], "tightness": _finite(_tightness(low))}
        entry["median_margin"] = {"margin": mid["margin"], "unit": mid["unit"], "tightness": _finite(_tightness(mid))}
    median_clears_thin_line = bool(present) and _tightness(present[(len(present) - 1) // 2]) >= 1
    entry["meets_standard"] = (entry["complete"] and median_clears_thin_line
                               and entry["passed"] >= math.ceil(CLAIM_SHARE * len(judged) - 1e-9))


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def merge_conflict(old: dict[str, Any] | None, profile: str, runs: dict[str, tuple[str, set[str]]]) -> str | None:
    """Why results of ``profile`` for ``runs`` (chapter → its digest and seeds) cannot merge into the report ``old``
    without losing some of it, or None: another profile, or a chapter whose code changed run on fewer seeds than
    the report has for it."""
    if old is None:
        return None
    if old["profile"] != profile:
        return f"it holds the {old['profile']} profile, this is {profile}"
    for slug, (digest, seeds) in runs.items():
        was = old["chapters"].get(slug)
        if was is not None and was["digest"] != digest and not set(was["seeds"]) <= seeds:
            return (f"{slug}'s code changed since its {len(was['seeds'])} seeds there; results on {len(seeds)} "
                    f"would replace them (run it on seeds {seed_text(was['seeds'])} at least)")
    return None


def seed_text(seeds: Iterable[str | int]) -> str:
    """Seeds as ``--seeds`` takes them, each run of consecutive seeds as a range: ``0-19``, ``0-19,500-519``,
    ``0,2,5``."""
    numbers = sorted(set(map(int, seeds)))
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return ",".join(f"{r[0]}-{r[-1]}" if len(r) > 2 else ",".join(map(str, r)) for r in runs)


def merge(old: dict[str, Any] | None, new: dict[str, Any]) -> dict[str, Any]:
    """``new`` merged into ``old`` (see the module docstring): the seeds are the union; a chapter of the same digest
    gets the new seeds beside its old ones (a seed in both: the new result), a chapter whose digest changed is
    replaced; the chapters and claims ``new`` did not run stay as they were.  The report's and a kept chapter's
    ``made_at`` is the later of the two (merging an older copy of a sweep's folder does not date the report back).  A
    ConfigError (:func:`merge_conflict`) where that would lose results."""
    problem = merge_conflict(old, new["profile"], {slug: (ch["digest"], set(ch["seeds"]))
                                                    for slug, ch in new["chapters"].items()})
    if problem:
        raise ConfigError(problem)
    if old is None:
        return tally(new)
    merged = {**old, **{k: v for k, v in new.items() if k not in ("chapters", "claims")}}
    merged["seeds"] = sorted(set(old["seeds"]) | set(new["seeds"]))
    for key in ("machine", "torch"):  # runs from several machines: each named (each run says its own, run_place)
        merged[key] = _joined(old.get(key), new.get(key))
    merged["jobs"] = max(old.get("jobs") or 1, new.get("jobs") or 1)
    merged["wall_seconds"] = new["wall_seconds"] if not old["chapters"] else None  # several sweeps: times per chapter
    merged["made_at"] = _later(old.get("made_at"), new.get("made_at"))  # merging an older copy keeps the newer date
    chapters, claims = dict(old["chapters"]), dict(old["claims"])
    for slug, ch in new["chapters"].items():
        was = chapters.get(slug)
        same = was is not None and was["digest"] == ch["digest"]
        chapters[slug] = {**(was if same else {}), **ch, "seeds": {**(was["seeds"] if same else {}), **ch["seeds"]}}
        if same:
            chapters[slug]["made_at"] = _later(was.get("made_at"), ch.get("made_at"))
        else:  # the old code's claims go with it
            claims = {cid: c for cid, c in claims.items() if c["chapter"] != slug}
    for cid, claim in new["claims"].items():
        was = claims.get(cid)
        claims[cid] = {**claim, "seeds": {**(was["seeds"] if was else {}), **claim["seeds"]}}
    order = [c.slug for c in catalog.CHAPTERS]
    rank = lambda slug: order.index(slug) if slug in order else len(order)  # noqa: E731
    merged["chapters"] = dict(sorted(chapters.items(), key=lambda kv: rank(kv[0])))
    merged["claims"] = dict(sorted(claims.items(), key=lambda kv: rank(kv[1]["chapter"])))
    return tally(merged)


class _Malformed(ValueError):
    """What is wrong with a report, found by :func:`report_problem`."""


def _need(value: Any, kinds: type | tuple[type, ...], where: str, what: str) -> Any:
    """``value`` if it is one of ``kinds`` (a bool is not a number), else :class:`_Malformed` naming ``where``."""
    numbers = kinds in ((int, float), (int, float, type(None)), int)
    if not isinstance(value, kinds) or (numbers and isinstance(value, bool)):
        raise _Malformed(f"{where} must be {what}, not {type(value).__name__}")
    return value


def _seed_table(value: Any, where: str) -> dict[str, Any]:
    """A dict keyed by seeds written as decimal strings, each value a dict."""
    for seed, run in _need(value, dict, where, "an object keyed by seed").items():
        if not seed.isdigit():
            raise _Malformed(f"{where} has the key {seed!r}, not a seed")
        _need(run, dict, f"{where}[{seed!r}]", "an object")
    return value


def _check_report(data: Any) -> None:
    """Raise :class:`_Malformed` unless ``data`` has the report's shape (module docstring): the fields the merge and
    the summary read, with their types."""
    _need(data, dict, "the report", "a JSON object")
    for key in ("profile", "seeds", "chapters", "claims"):
        if key not in data:
            raise _Malformed(f"it has no {key!r}")
    _need(data["profile"], str, "'profile'", "a string")
    for seed in _need(data["seeds"], list, "'seeds'", "a list"):
        if _need(seed, int, "each seed", "an integer") < 0:
            raise _Malformed(f"'seeds' holds {seed}, not a non-negative integer")
    for slug, ch in _need(data["chapters"], dict, "'chapters'", "an object").items():
        where = f"chapter {slug!r}"
        _need(ch, dict, where, "an object")
        _need(ch.get("digest"), str, f"{where} 'digest'", "a string")
        for seed, run in _seed_table(ch.get("seeds"), f"{where} 'seeds'").items():
            _need(run.get("seconds"), (int, float), f"{where} seed {seed} 'seconds'", "a number")
            _need(run.get("error"), (str, type(None)), f"{where} seed {seed} 'error'", "a string or null")
            _need(run.get("ok"), bool, f"{where} seed {seed} 'ok'", "true or false")
            _need(run.get("claims"), int, f"{where} seed {seed} 'claims'", "an integer")
            for key in ("machine", "device", "torch"):  # recorded since 2026-12-04 (run_place); absent before
                _need(run.get(key, ""), str, f"{where} seed {seed} {key!r}", "a string")
    for cid, claim in _need(data["claims"], dict, "'claims'", "an object").items():
        where = f"claim {cid!r}"
        _need(claim, dict, where, "an object")
        if _need(claim.get("chapter"), str, f"{where} 'chapter'", "a string") not in data["chapters"]:
            raise _Malformed(f"{where} belongs to chapter {claim['chapter']!r}, which the report does not have")
        for key in ("figure", "text"):
            _need(claim.get(key), str, f"{where} {key!r}", "a string")
        _need(claim.get("exploration"), bool, f"{where} 'exploration'", "true or false")
        if "validation_seeds" in claim:
            seeds = _need(claim["validation_seeds"], list, f"{where} 'validation_seeds'", "a list")
            if len(seeds) < 20 or len(set(seeds)) != len(seeds) or not all(
                    isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in seeds):
                raise _Malformed(f"{where} 'validation_seeds' must list at least 20 distinct non-negative integers")
        if "kind" in claim and claim["kind"] not in KINDS:
            raise _Malformed(f"{where} 'kind' must be one of {', '.join(KINDS)}, not {str(claim['kind'])[:40]!r}")
        for seed, run in _seed_table(claim.get("seeds"), f"{where} 'seeds'").items():
            _need(run.get("passed"), bool, f"{where} seed {seed} 'passed'", "true or false")
            _need(run.get("margin"), (int, float, type(None)), f"{where} seed {seed} 'margin'", "a number or null")
            _need(run.get("thin"), bool, f"{where} seed {seed} 'thin'", "true or false")
            if run.get("unit") not in THIN_LINE:
                raise _Malformed(f"{where} seed {seed} 'unit' must be one of {', '.join(THIN_LINE)}")


def report_problem(data: Any) -> str | None:
    """What makes ``data`` (parsed JSON) not a robustness report, in a few words, or None."""
    try:
        _check_report(data)
    except _Malformed as exc:
        return str(exc)
    return None


def read_report(file: Path) -> dict[str, Any] | None:
    """The report in ``file`` (None if there is none): JSON checked by :func:`report_problem`, or a ConfigError
    naming the file and what is wrong with it."""
    file = Path(file)
    if not file.exists():
        return None
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"cannot read the robustness report {str(file)!r}: {exc}") from None
    problem = report_problem(data)
    if problem:
        raise ConfigError(f"{str(file)!r} is not a robustness report: {problem}")
    return data


def write_report(file: Path, report: dict[str, Any]) -> None:
    """Write ``report`` to ``file`` atomically: into a temporary file beside it, then moved over it."""
    file = Path(file)
    text = json.dumps(report, ensure_ascii=False, indent=1) + "\n"
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=file.parent, prefix=f".{file.name}.",
                                     suffix=".tmp", delete=False) as tmp:
        try:
            tmp.write(text)
            tmp.flush()
            os.fsync(tmp.fileno())
        except BaseException:  # the old report stays as it was, and no half-written file stays beside it
            tmp.close()
            os.unlink(tmp.name)
            raise
    try:
        os.replace(tmp.name, file)
    except BaseException:
        os.unlink(tmp.name)
        raise


def stale_chapters(report: dict[str, Any]) -> list[str]:
    """Chapters whose source or imported modules changed since the report was made."""
    stale = []
    for slug, ch in report["chapters"].items():
        try:
            current = chapter_digest(catalog.find(slug))
        except (ValueError, OSError):
            current = None
        if current != ch["digest"]:
            stale.append(slug)
    return stale


def restamp(chapters: Sequence[catalog.Chapter], seeds: Sequence[int], *, out: Path = REPORT_DIR, jobs: int = 1,
            timeout: int = 900, progress: bool = True, profile: str = "quick") -> dict[str, list[str]]:
    """Carry the report over a change meant not to touch any claim (a refactor, a presentation module).

    Each chapter of ``chapters`` whose digest changed since the report was made runs again on ``seeds`` (a sample
    of the report's seeds, with one torch thread like the sweep).  If every claim's verdict and margin equal the
    report's on every one of them (``math.isclose`` at 1e-9: the same code gives the same floating-point numbers
    on the same machine), the report's numbers still describe the code, and its digest moves to the current one,
    with a ``restamped`` record (when, which seeds, which commit), and each claim takes the sentence, label, kind and
    validation seeds the code now gives it.  A claim the code no longer has (in none of the sampled runs) leaves the
    report, named in the record (``removed``): the others' numbers are untouched by its going.  Any other difference
    (a verdict, a margin, an error, a new claim) leaves the chapter stale: it needs its full sweep.  Returns the
    differences per chapter (an empty list: restamped).  ``profile`` names the report (:func:`report_path`).
    """
    target = report_path(out, profile)
    report = read_report(target)
    if report is None:
        raise ConfigError(f"no robustness report at {str(target)!r} to restamp")
    missing = [s for s in seeds if s not in report["seeds"]]
    if missing:
        raise ConfigError(f"seeds {missing} are not in the report (it has {report['seeds'][0]}–{report['seeds'][-1]})")
    stale = set(stale_chapters(report))
    todo = [ch for ch in chapters if ch.slug in stale]
    with patch.dict(os.environ, {"COMPANION_THREADS": os.environ.get("COMPANION_THREADS", "").strip() or "1"}):
        items = run_sweep(todo, seeds, jobs=jobs, profile=report["profile"], timeout=timeout, progress=progress)
    differences: dict[str, list[str]] = {ch.slug: [] for ch in todo}
    ran = {slug: set().union(*({c["id"] for c in i["claims"]} for i in items if i["chapter"] == slug))
           for slug in differences}
    removed = {slug: sorted(cid for cid, c in report["claims"].items() if c["chapter"] == slug and cid not in ids)
               for slug, ids in ran.items()}
    for item in items:
        old = {cid: c["seeds"].get(str(item["seed"])) for cid, c in report["claims"].items()
               if c["chapter"] == item["chapter"] and cid not in removed[item["chapter"]]}
        new = {c["id"]: c for c in item["claims"]}
        for cid in sorted(set(old) | set(new)):
            was, now = old.get(cid), new.get(cid)
            if was is None or now is None or was["passed"] != now["passed"] or not _same_margin(was["margin"],
                                                                                                now["margin"]):
                differences[item["chapter"]].append(
                    f"seed {item['seed']} {cid}: report {_describe(was)}, now {_describe(now)}")
        if item["error"] != report["chapters"][item["chapter"]]["seeds"].get(str(item["seed"]), {}).get("error"):
            differences[item["chapter"]].append(f"seed {item['seed']}: error {item['error']!r}")
    made_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    for slug, found in differences.items():
        if not found:
            chapter = report["chapters"][slug]
            chapter["digest"] = items[[i["chapter"] for i in items].index(slug)]["digest"]
            chapter["restamped"] = {"at": made_at, "seeds": list(seeds), "commit": git_commit(),
                                    **({"removed": removed[slug]} if removed[slug] else {})}
            for cid in removed[slug]:
                del report["claims"][cid]
            for item in items:  # the words the code now gives each claim (sentence, label, kind, seeds)
                for c in item["claims"] if item["chapter"] == slug else ():
                    report["claims"][c["id"]].update(figure=c["figure"], text=c["text"], kind=claim_kind(c),
                                                     exploration=c["exploration"],
                                                     validation_seeds=c.get("validation_seeds",
                                                                            list(VALIDATION_SEEDS)))
    write_report(target, tally(report))
    return differences


def _same_margin(a: float | None, b: float | None) -> bool:
    return (a is None) == (b is None) and (a is None or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12))


def _describe(claim: dict[str, Any] | None) -> str:
    if claim is None:
        return "no verdict"
    margin = "no margin" if claim["margin"] is None else f"margin {claim['margin']!r}"
    return f"{'passed' if claim['passed'] else 'failed'}, {margin}"


def merge_reports(paths: Sequence[Path], out: Path = REPORT_DIR, profile: str = "quick") -> dict[str, Any]:
    """Merge the reports of ``profile`` in ``paths`` (folders, where its file is :func:`report_path`'s, or files: e.g.
    one per machine, per chapter or per device window) into that profile's report in ``out``.

    Each file is checked (:func:`read_report`) and merged by :func:`merge`: a file that is not a report, or one
    that cannot merge without losing results, is refused with its name and nothing is written.  Chapters whose
    digest still matches the code are stamped with the current commit when the package and the chapters have no
    uncommitted change, so the committed report names the commit at which its numbers hold.
    """
    target = report_path(out, profile)
    report = read_report(target)
    for path in paths:
        path = Path(path)
        file = report_path(path, profile) if path.is_dir() else path
        new = read_report(file)
        if new is None:
            raise ConfigError(f"no robustness report at {str(file)!r}")
        try:
            report = merge(report, new)
        except ConfigError as exc:
            raise ConfigError(f"cannot merge {str(file)!r} into the others: {exc}") from None
    if report is None:
        raise ConfigError("nothing to merge: name one or more report folders")
    commit = git_commit()
    stale = set(stale_chapters(report))
    for slug, ch in report["chapters"].items():
        if slug not in stale and not commit.endswith("+uncommitted"):
            ch["commit"] = commit
    Path(out).mkdir(parents=True, exist_ok=True)
    write_report(target, report)
    return report


def claim_kind(claim: dict[str, Any]) -> str:
    """A logged or reported claim's kind (:data:`companion.kit.claims.KINDS`); records made before claims had kinds
    have only ``exploration``."""
    return claim.get("kind") or (EXPLORATION if claim.get("exploration") else PHENOMENON)


def format_summary(report: dict[str, Any]) -> str:
    """A terminal table: one row per claim (pass count, min and median margin), then one per chapter."""
    lines = [f"{'claim':34} {'figure':12} {'passed':>8} {'min margin':>14} {'median margin':>14}  standard"]
    for cid, c in report["claims"].items():
        def fmt(stat: dict[str, Any] | None) -> str:
            if not stat or stat["margin"] is None:
                return "never"
            return f"{stat['margin']:+.3g} {stat['unit']}"
        complete = c.get("complete", report["chapters"][c["chapter"]].get("complete", True))
        mark = "explore" if c["exploration"] else ("ok" if c["meets_standard"] else
                                                     "BELOW" if complete else "incomplete")
        mark += " (identity)" if claim_kind(c) == IDENTITY else ""
        seeds = seed_text(c.get("validation_seeds") or range(20))
        mark += "" if seeds == "0-19" else f" on seeds {seeds}" + (
            f" (in-sample {c['other_seeds']['passed']}/{c['other_seeds']['runs']})" if c.get("other_seeds") else "")
        lines.append(f"{cid:34} {c['figure'][:12]:12} {c['passed']:>4}/{c['runs']:<3} "
                     f"{fmt(c.get('min_margin')):>14} {fmt(c.get('median_margin')):>14}  {mark}")
    lines.append("")
    for slug, ch in report["chapters"].items():
        secs = [run["seconds"] for run in ch["seeds"].values()]
        errors = sorted({run["error"] for run in ch["seeds"].values() if run["error"]})
        status = "ok" if ch["meets_standard"] else "BELOW" if ch.get("complete", True) else "incomplete"
        lines.append(f"{slug:34} whole chapter {ch['passed']:>3}/{ch['runs']:<3} "
                     f"{status}  median {statistics.median(secs):.0f} s/run"
                     + (f"  errors: {'; '.join(errors)[:120]}" if errors else ""))
    return "\n".join(lines)


def meets_standard(report: dict[str, Any]) -> bool:
    """Every claim (explorations aside) and every chapter meets the standard (a report of no chapter does not)."""
    return bool(report["chapters"]) and (all(c["meets_standard"] for c in report["claims"].values() if not c["exploration"])
            and all(ch["meets_standard"] for ch in report["chapters"].values()))


def held_runs(report: dict[str, Any] | None, chapters: Sequence[catalog.Chapter]) -> set[tuple[str, int]]:
    """The (chapter slug, seed) pairs ``report`` holds for the current code of ``chapters`` (``--missing`` skips
    them)."""
    if report is None:
        return set()
    held = set()
    for ch in chapters:
        entry = report["chapters"].get(ch.slug)
        if entry is not None and entry["digest"] == chapter_digest(ch):
            held |= {(ch.slug, int(seed)) for seed in entry["seeds"]}
    return held


def robustness(chapters: Sequence[catalog.Chapter], seeds: Sequence[int], *, jobs: int = 1,
               out: Path = REPORT_DIR, profile: str = "quick", timeout: int = 900,
               progress: bool = True, cached_only: bool = False, budget: float | None = None,
               missing: bool = False) -> dict[str, Any]:
    """Run the sweep (or, with ``cached_only``, collect what the cache has), merge it into the report of ``profile``
    in ``out`` (:func:`report_path`: ``report.json``, or ``report-full.json`` for the full profile).

    Checked before anything runs: ``out`` can be written, the report there (if any) is one, and the results will
    merge into it (:func:`merge_conflict`) — else a ConfigError, and nothing is written.  ``cached_only`` with
    nothing in the cache is an error too (an empty report would say nothing, and "meet" the standard).  With
    ``missing`` only the chapter × seed runs the report lacks for the current code run.  With ``budget`` (seconds)
    no run starts after that long (:func:`run_sweep`), and the report is written after every finished run, so a
    device window that ends early keeps what it measured (a chapter whose code changed since the report joins it
    only once its runs cover the seeds the report has for it; until then they stay in the cache); without it, once
    at the end.
    """
    out = Path(out)
    path = report_path(out, profile)
    if not cached_only:
        _writable(out)
    old = read_report(path)
    planned = {Path(ch.source).stem: (chapter_digest(ch), {str(s) for s in seeds}) for ch in chapters}
    problem = merge_conflict(old, profile, planned)
    if problem:
        raise ConfigError(f"will not merge into {str(path)!r}: {problem}; give --out another folder")
    skip = held_runs(old, chapters) if missing else set()
    start = time.perf_counter()

    def write(items: list[dict[str, Any]], wall: float | None) -> dict[str, Any]:
        # Read the report again: another sweep or a --restamp may have written it while this one ran (hours, maybe);
        # merging into the copy read at the start would silently undo what they wrote.
        now = read_report(path)
        if budget is not None:  # a window's share: a chapter whose code changed joins once it covers the report's seeds
            finished: dict[str, tuple[str, set[str]]] = {}
            for i in items:
                finished.setdefault(i["chapter"], (i["digest"], set()))[1].add(str(i["seed"]))
            ready = {slug for slug, plan in finished.items() if merge_conflict(now, profile, {slug: plan}) is None}
            items = [i for i in items if i["chapter"] in ready]
            if not items:
                return now
        problem = merge_conflict(now, profile, {slug: plan for slug, plan in planned.items()
                                                if any(i["chapter"] == slug for i in items)})
        if problem:
            raise ConfigError(f"will not merge into {str(path)!r}: {problem} (it changed while the sweep ran; the runs "
                              "are cached: run the sweep again to merge them)")
        try:
            report = merge(now, summarise(items, seeds, wall_seconds=wall, jobs=jobs, profile=profile))
        except ConfigError as exc:
            raise ConfigError(f"will not merge into {str(path)!r}: {exc}; give --out another folder") from None
        _writable(out)
        write_report(path, report)
        return report

    as_they_come = None if budget is None else (lambda item, done: write(done, None))
    try:
        items = run_sweep(chapters, seeds, jobs=jobs, profile=profile, timeout=timeout, progress=progress,
                          cached_only=cached_only, budget=budget, skip=skip, on_result=as_they_come)
    except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM
        kept = "the runs finished so far are in the report" if budget is not None else "the report was not written"
        raise type(exc)(f"the sweep stopped before its end; its finished runs are cached (run it again to resume); "
                        f"{kept}") from None
    if not items and old is not None and {(ch.slug, seed) for ch in chapters for seed in seeds} <= skip:
        return old  # --missing: the report holds every run asked for
    if not items:
        raise ConfigError("the cache holds no run of these chapters and seeds for the current code; nothing was "
                          "written (run without --cached-only)" if cached_only else
                          "no run finished within the budget; nothing was written")
    wall = None if cached_only else time.perf_counter() - start
    return write(items, wall)


def _writable(out: Path) -> None:
    """Make the folder ``out`` if needed and check that it can be written, or a ConfigError naming it."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise ConfigError(f"cannot write the report to {str(out)!r}: {exc.strerror or exc}") from None
