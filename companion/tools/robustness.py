"""The robustness report: every chapter on many seeds, every claim's pass count and margin.

``python -m companion robustness --seeds 0-19 [--chapters ch04,ch07] [--jobs N]`` executes each
chapter notebook (quick profile) once per seed, exactly as ``reproduce`` does, and collects every
claim's verdict and margin (see :mod:`companion.kit.claims`).  The chapters × seeds runs are
:mod:`joblib` tasks (``--jobs`` local processes; a ``joblib.parallel_config(backend="dask")``
block spreads the same call over a Dask cluster), each cached on disk under a digest of the
chapter's code cells and of the package modules it imports: an interrupted sweep resumes where it
stopped, and a run is never cached unless it finished (a timeout or Ctrl-C leaves nothing behind).

The report (``robustness/report.json``) holds, per chapter, the digest and the commit it was made
at, the seconds and any error of each seed, and per claim the verdict and margin on each seed with
the pass count and the minimum and median margin.  The standard (DEVELOPERS.md): every claim holds
on at least 19 of 20 seeds and each chapter as a whole (all its claims on one seed) on at least 18
of 20, and a claim's median margin clears its thin line.  The book site shows the report and marks
the chapters whose digest changed since it was made.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import platform
import statistics
import subprocess
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
from companion.kit.cache import SWEEPS, memory, module_file, reachable_modules
from companion.kit.claims import THIN_LINE
from companion.kit.config import ConfigError
from companion.tools.runner import load_source, run_chapter

REPORT_DIR = catalog.ROOT / "robustness"
CLAIM_SHARE, CHAPTER_SHARE = 19 / 20, 18 / 20


def parse_seeds(text: str) -> list[int]:
    """``"0-19"``, ``"3"`` or ``"0,2,5-7"`` → a sorted list of distinct non-negative seeds."""
    seeds: set[int] = set()
    for part in str(text).split(","):
        part = part.strip()
        try:
            if "-" in part:
                lo, hi = (int(v) for v in part.split("-", 1))
                if lo > hi:
                    raise ValueError
                seeds.update(range(lo, hi + 1))
            else:
                seeds.add(int(part))
        except ValueError:
            raise ConfigError(f"bad seed range {part!r} in --seeds {text!r}: write e.g. 0-19 or 0,2,5-7") from None
    if not seeds or min(seeds) < 0:
        raise ConfigError(f"--seeds {text!r} must name non-negative integers, e.g. 0-19")
    return sorted(seeds)


def chapter_code(source: Path) -> bytes:
    """The code cells of a chapter's jupytext source, in order: what a run executes.  Its markdown is left out,
    so that rewording the text (or stating a measured pass rate) does not make a sweep's results stale."""
    cells = load_source(source).cells
    return "\n\0".join(c.source for c in cells if c.cell_type == "code").encode()


def chapter_digest(chapter: catalog.Chapter) -> str:
    """A hash of the chapter's code cells and of every package module it imports, directly or not."""
    digest = hashlib.sha256(chapter_code(chapter.source))
    for name in reachable_modules(chapter.source):
        digest.update(name.encode() + b"\0" + module_file(name).read_bytes())
    return digest.hexdigest()[:16]


def _run_one(source: str, seed: int, profile: str, digest: str, timeout: int, threads: str) -> dict[str, Any]:
    """One chapter on one seed: its claims, seconds and error (cached by the caller under ``digest``).

    A notebook that raised is a result (its error is recorded and cached: the same code fails the same
    way); a timeout, a dead kernel or Ctrl-C propagates, so nothing is cached for it.
    """
    extra = {"COMPANION_THREADS": threads} if threads else {}
    run = run_chapter(Path(source), None, profile=profile, seed=seed, timeout=timeout, extra_env=extra)
    if run.error and run.error.startswith("KeyboardInterrupt"):
        raise KeyboardInterrupt(f"{Path(source).stem} seed {seed} was interrupted")  # never cached
    return {"chapter": Path(source).stem, "seed": seed, "digest": digest, "seconds": run.seconds,
            "error": run.error, "claims": [asdict(c) for c in run.claims]}


def run_sweep(chapters: Sequence[catalog.Chapter], seeds: Sequence[int], *, jobs: int = 1,
              profile: str = "quick", timeout: int = 900, progress: bool = True,
              cached_only: bool = False) -> list[dict[str, Any]]:
    """Every chapter × seed, through joblib and the on-disk cache, handed out longest chapter first
    (:func:`~companion.tools.catalog.longest_first`); results in (chapter, seed) order.

    The thread count is part of each run's cache key on purpose: another count can change floating-point
    sums, so a run at another count is another measurement (``--jobs`` > 1 runs one thread each unless
    ``COMPANION_THREADS`` says otherwise).  ``jobs=-1``: as many at once as the joblib backend has workers
    (a Dask cluster: :func:`companion.kit.cache.parallel_backend`).

    With ``cached_only`` nothing runs: the result holds the runs the cache has for the current code
    (e.g. to report on a sweep that was stopped before its end).
    """
    threads = os.environ.get("COMPANION_THREADS", "").strip() or ("1" if jobs != 1 else "")
    cached = memory(SWEEPS).cache(_run_one)
    tasks = [(str(ch.source), seed, profile, chapter_digest(ch), timeout, threads)
             for ch in catalog.longest_first(chapters) for seed in seeds]
    if cached_only:
        tasks = [task for task in tasks if cached.check_call_in_cache(*task)]
    bar = tqdm(total=len(tasks), desc="chapters × seeds", disable=not progress)
    done: dict[tuple[str, int], dict[str, Any]] = {}
    try:
        parallel = joblib.Parallel(n_jobs=jobs, return_as="generator_unordered")
        for item in parallel(joblib.delayed(cached)(*task) for task in tasks):
            done[(item["chapter"], item["seed"])] = item
            bar.set_postfix_str(f"{item['chapter'][:4]} seed {item['seed']}", refresh=False)
            bar.update(1)
    finally:
        bar.close()
    keys = [(Path(ch.source).stem, seed) for ch in chapters for seed in seeds]
    return [done[key] for key in keys if key in done]  # all of them, unless ``cached_only`` left some out


def _git_commit() -> str:
    try:
        head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=catalog.ROOT, capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "companion", "chapters"], cwd=catalog.ROOT,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+uncommitted" if dirty else "")


def _tightness(claim: dict[str, Any]) -> float:
    if claim["margin"] is None:
        return math.inf if claim["passed"] else -math.inf
    return claim["margin"] / THIN_LINE[claim["unit"]]


def summarise(items: Iterable[dict[str, Any]], seeds: Sequence[int], *, wall_seconds: float | None, jobs: int,
              profile: str) -> dict[str, Any]:
    """The report for one sweep (see the module docstring for its fields)."""
    import torch

    made_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    chapters: dict[str, dict[str, Any]] = {}
    claims: dict[str, dict[str, Any]] = {}
    for item in items:
        ch = chapters.setdefault(item["chapter"], {"digest": item["digest"], "commit": _git_commit(),
                                                   "made_at": made_at, "seeds": {}})
        ids = [c["id"] for c in item["claims"] if not c["exploration"]]
        ok = item["error"] is None and all(c["passed"] for c in item["claims"] if not c["exploration"])
        ch["seeds"][str(item["seed"])] = {"seconds": round(item["seconds"], 1), "error": item["error"], "ok": ok,
                                          "claims": len(ids)}
        for c in item["claims"]:
            entry = claims.setdefault(c["id"], {"chapter": item["chapter"], "figure": c["figure"], "text": c["text"],
                                                "exploration": c["exploration"], "seeds": {}})
            entry["seeds"][str(item["seed"])] = {"passed": c["passed"], "margin": c["margin"], "unit": c["unit"],
                                                 "thin": c["thin"], "tightest": c["tightest"]}
    for slug, ch in chapters.items():
        ch["passed"] = sum(run["ok"] for run in ch["seeds"].values())
        ch["runs"] = len(ch["seeds"])
        ch["complete"] = ch["runs"] == len(seeds)
        ch["meets_standard"] = ch["complete"] and ch["passed"] >= math.ceil(CHAPTER_SHARE * ch["runs"] - 1e-9)
    for entry in claims.values():
        ran = chapters[entry["chapter"]]
        _claim_stats(entry, sorted(ran["seeds"], key=int))
        entry["meets_standard"] = entry["meets_standard"] and ran["complete"]
    return {"profile": profile, "seeds": list(seeds), "jobs": jobs,
            "wall_seconds": None if wall_seconds is None else round(wall_seconds, 1),
            "torch": torch.__version__, "machine": f"{platform.machine()}, {os.cpu_count()} cores",
            "made_at": made_at, "chapters": chapters, "claims": claims}


def _claim_stats(entry: dict[str, Any], seeds: list[str]) -> None:
    """Pass count over the ``seeds`` its chapter ran (a seed without this claim's verdict counts as failed),
    and the margin's minimum and median over them."""
    runs = [entry["seeds"].get(s) for s in seeds]
    entry["runs"] = len(seeds)
    entry["passed"] = sum(bool(r and r["passed"]) for r in runs)
    present = sorted((r for r in runs if r is not None), key=_tightness)
    if present:
        low, mid = present[0], present[(len(present) - 1) // 2]
        entry["min_margin"] = {"margin": low["margin"], "unit": low["unit"], "tightness": _finite(_tightness(low))}
        entry["median_margin"] = {"margin": mid["margin"], "unit": mid["unit"], "tightness": _finite(_tightness(mid))}
    median_clears_thin_line = bool(present) and _tightness(present[(len(present) - 1) // 2]) >= 1
    entry["meets_standard"] = entry["passed"] >= math.ceil(CLAIM_SHARE * len(seeds) - 1e-9) and median_clears_thin_line


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def merge(old: dict[str, Any] | None, new: dict[str, Any]) -> dict[str, Any]:
    """``new`` with the chapters of ``old`` that ``new`` did not rerun (same seeds and profile only)."""
    if not old or old.get("seeds") != new["seeds"] or old.get("profile") != new["profile"]:
        return new
    merged = dict(new)
    merged["jobs"] = max(old.get("jobs") or 1, new.get("jobs") or 1)
    merged["chapters"] = {**{k: v for k, v in old["chapters"].items() if k not in new["chapters"]}, **new["chapters"]}
    merged["claims"] = {**{k: v for k, v in old["claims"].items() if v["chapter"] not in new["chapters"]},
                        **new["claims"]}
    order = [c.slug for c in catalog.CHAPTERS]
    merged["chapters"] = dict(sorted(merged["chapters"].items(), key=lambda kv: order.index(kv[0])
                                     if kv[0] in order else len(order)))
    merged["claims"] = dict(sorted(merged["claims"].items(), key=lambda kv: (
        order.index(kv[1]["chapter"]) if kv[1]["chapter"] in order else len(order))))
    merged["wall_seconds"] = None   # several sweeps: their times are per chapter
    return merged


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
            timeout: int = 900, progress: bool = True) -> dict[str, list[str]]:
    """Carry the report over a change meant not to touch any claim (a refactor, a presentation module).

    Each chapter of ``chapters`` whose digest changed since the report was made runs again on ``seeds`` (a sample
    of the report's seeds, with one torch thread like the sweep).  If every claim's verdict and margin equal the
    report's on every one of them (``math.isclose`` at 1e-9: the same code gives the same floating-point numbers
    on the same machine), the report's numbers still describe the code, and its digest moves to the current one,
    with a ``restamped`` record (when, which seeds, which commit).  Otherwise the chapter stays stale and needs its
    full sweep.  Returns the differences per chapter (an empty list: restamped).
    """
    target = Path(out) / "report.json"
    if not target.exists():
        raise ConfigError(f"no robustness report at {str(target)!r} to restamp")
    report = json.loads(target.read_text(encoding="utf-8"))
    missing = [s for s in seeds if s not in report["seeds"]]
    if missing:
        raise ConfigError(f"seeds {missing} are not in the report (it has {report['seeds'][0]}–{report['seeds'][-1]})")
    stale = set(stale_chapters(report))
    todo = [ch for ch in chapters if ch.slug in stale]
    with patch.dict(os.environ, {"COMPANION_THREADS": os.environ.get("COMPANION_THREADS", "").strip() or "1"}):
        items = run_sweep(todo, seeds, jobs=jobs, profile=report["profile"], timeout=timeout, progress=progress)
    differences: dict[str, list[str]] = {ch.slug: [] for ch in todo}
    for item in items:
        old = {cid: c["seeds"].get(str(item["seed"])) for cid, c in report["claims"].items()
               if c["chapter"] == item["chapter"]}
        new = {c["id"]: c for c in item["claims"]}
        for cid in sorted(set(old) | set(new)):
            was, now = old.get(cid), new.get(cid)
            if was is None or now is None or was["passed"] != now["passed"] or not _same_margin(was["margin"],
                                                                                                now["margin"]):
                differences[item["chapter"]].append(
                    f"seed {item['seed']} {cid}: report {_describe(was)}, now {_describe(now)}")
        if item["error"] != report["chapters"][item["chapter"]]["seeds"][str(item["seed"])]["error"]:
            differences[item["chapter"]].append(f"seed {item['seed']}: error {item['error']!r}")
    made_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    for slug, found in differences.items():
        if not found:
            chapter = report["chapters"][slug]
            chapter["digest"] = items[[i["chapter"] for i in items].index(slug)]["digest"]
            chapter["restamped"] = {"at": made_at, "seeds": list(seeds), "commit": _git_commit()}
    target.write_text(json.dumps(report, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return differences


def _same_margin(a: float | None, b: float | None) -> bool:
    return (a is None) == (b is None) and (a is None or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12))


def _describe(claim: dict[str, Any] | None) -> str:
    if claim is None:
        return "no verdict"
    margin = "no margin" if claim["margin"] is None else f"margin {claim['margin']!r}"
    return f"{'passed' if claim['passed'] else 'failed'}, {margin}"


def merge_reports(paths: Sequence[Path], out: Path = REPORT_DIR) -> dict[str, Any]:
    """Merge the reports in ``paths`` (folders or files, e.g. one per machine or per chapter) into ``out``.

    Chapters whose digest still matches the code are stamped with the current commit when the
    package and the chapters have no uncommitted change, so the committed report names the commit
    at which its numbers hold.
    """
    target = Path(out) / "report.json"
    report = json.loads(target.read_text(encoding="utf-8")) if target.exists() else None
    for path in paths:
        path = Path(path)
        file = path / "report.json" if path.is_dir() else path
        if not file.exists():
            raise ConfigError(f"no robustness report at {str(file)!r}")
        new = json.loads(file.read_text(encoding="utf-8"))
        if report is not None and (report["seeds"] != new["seeds"] or report["profile"] != new["profile"]):
            raise ConfigError(f"{str(file)!r} has seeds {new['seeds']} ({new['profile']}), the others "
                              f"{report['seeds']} ({report['profile']}): merge reports of the same sweep")
        report = merge(report, new)
    if report is None:
        raise ConfigError("nothing to merge: name one or more report folders")
    commit = _git_commit()
    stale = set(stale_chapters(report))
    for slug, ch in report["chapters"].items():
        if slug not in stale and not commit.endswith("+uncommitted"):
            ch["commit"] = commit
    Path(out).mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(report, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return report


def format_summary(report: dict[str, Any]) -> str:
    """A terminal table: one row per claim (pass count, min and median margin), then one per chapter."""
    lines = [f"{'claim':34} {'figure':12} {'passed':>8} {'min margin':>14} {'median margin':>14}  standard"]
    for cid, c in report["claims"].items():
        def fmt(stat: dict[str, Any] | None) -> str:
            if not stat or stat["margin"] is None:
                return "never"
            return f"{stat['margin']:+.3g} {stat['unit']}"
        complete = report["chapters"][c["chapter"]].get("complete", True)
        mark = "explore" if c["exploration"] else ("ok" if c["meets_standard"] else
                                                     "BELOW" if complete else "incomplete")
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
    """Every claim (explorations aside) and every chapter meets the standard."""
    return (all(c["meets_standard"] for c in report["claims"].values() if not c["exploration"])
            and all(ch["meets_standard"] for ch in report["chapters"].values()))


def robustness(chapters: Sequence[catalog.Chapter], seeds: Sequence[int], *, jobs: int = 1,
               out: Path = REPORT_DIR, profile: str = "quick", timeout: int = 900,
               progress: bool = True, cached_only: bool = False) -> dict[str, Any]:
    """Run the sweep (or, with ``cached_only``, collect what the cache has), merge it into ``out/report.json``."""
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise ConfigError(f"cannot write the report to {str(out)!r}: {exc.strerror or exc}") from None
    start = time.perf_counter()
    items = run_sweep(chapters, seeds, jobs=jobs, profile=profile, timeout=timeout, progress=progress,
                      cached_only=cached_only)
    wall = None if cached_only else time.perf_counter() - start
    report = summarise(items, seeds, wall_seconds=wall, jobs=jobs, profile=profile)
    path = out / "report.json"
    old = json.loads(path.read_text(encoding="utf-8")) if path.exists() else None
    report = merge(old, report)
    path.write_text(json.dumps(report, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return report
