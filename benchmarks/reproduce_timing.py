"""Wall time of ``reproduce``: cold, warm (second run, same seed) and ``--jobs 2`` (cold), measured in one run.

Each run executes every chapter (quick profile, seed 0) into its own temporary output folder through
:func:`companion.tools.runner.run_chapters`, as ``python -m companion reproduce [--jobs N]`` does:

1. cold, one chapter at a time, with an empty results cache;
2. warm: the same again, reading that cache (the target: ≤ 20 % of the cold time);
3. cold with ``--jobs 2`` (each kernel one torch thread, the longest chapters first) and another empty cache
   (target on 2 cores: ≤ 0.6× the cold sequential time).

Each line also gives the CPU seconds the run used (this process and the chapters' kernels): side by side, the
chapters do the same work as one at a time, so more CPU seconds there is time lost to the two cores slowing
each other down (shared memory bandwidth and cache).  The last line divides the parallel run's CPU seconds by the
cores: the wall time of that work packed with no idle core, a floor no ordering of the chapters can go below.

The cold pass runs the chapters one by one and records each one's wall and CPU seconds in
``benchmarks/reproduce_timing.json`` (:mod:`companion.tools.timing`), each with the seconds a fixed reference
computation took just before it (the machine's speed then, :func:`companion.tools.timing.reference_seconds`), when it
measured every chapter and none raised (named chapters: their entries, each with its commit; the others are kept): the README's chapter map and the
site's landing page state the notebooks' times from that file, nothing else.

It takes about three times a ``reproduce`` (15–20 minutes on 2 cores); nothing else should run meanwhile.
Run: ``python benchmarks/reproduce_timing.py [--cold-only] [ch04 ch07 …]`` (default: every chapter, all three passes;
``--cold-only`` stops after the first, about 13 minutes).
"""

from __future__ import annotations

import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from unittest.mock import patch

from companion.tools import catalog, timing
from companion.tools.runner import run_chapters


def cpu_seconds() -> float:
    """User + system seconds of this process and of its children that have ended (the chapters' kernels)."""
    own, kernels = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kernels.ru_utime + kernels.ru_stime


def timed(chapters: list, cache: Path, jobs: int) -> tuple[float, float, bool]:
    """Wall and CPU seconds of one reproduction of ``chapters`` with results cache ``cache``, and whether every
    chapter ran."""
    with tempfile.TemporaryDirectory() as out, patch.dict(os.environ, {"COMPANION_CACHE": str(cache)}):
        start, cpu = time.perf_counter(), cpu_seconds()
        runs = run_chapters(chapters, Path(out), profile="quick", seed=0, jobs=jobs, progress=False)
        return time.perf_counter() - start, cpu_seconds() - cpu, all(r.error is None for r in runs)


def main(names: list[str], cold_only: bool = False) -> None:
    chapters = [catalog.find(n) for n in names] if names else catalog.available()
    print(f"{len(chapters)} chapters, quick profile, seed 0, {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as first, tempfile.TemporaryDirectory() as second:
        per_chapter: dict[str, tuple[float, float]] = {}
        reference: dict[str, float] = {}
        ok1 = True
        for chapter in chapters:  # one at a time: each chapter's own time (its kernel's start included)
            reference[chapter.slug] = timing.reference_seconds()  # the machine's speed just before it
            wall, cpu, ok = timed([chapter], Path(first), jobs=1)
            per_chapter[chapter.slug], ok1 = (wall, cpu), ok1 and ok
            print(f"  {chapter.slug:28s} {wall:6.1f} s  ({cpu:.0f} CPU s; reference {reference[chapter.slug]:.2f} s)"
                  f"{'' if ok else '  RAISED'}", flush=True)
        cold, cold_cpu = sum(w for w, _ in per_chapter.values()), sum(c for _, c in per_chapter.values())
        print(f"cold, one at a time : {cold:7.1f} s  ({cold_cpu:.0f} CPU s)", flush=True)
        if ok1:  # a few chapters named: their entries are replaced, the others' kept
            print(f"wrote {timing.write_quiet_times(per_chapter, reference=reference)}", flush=True)
        elif not ok1:
            print("not recorded: a notebook raised", flush=True)
        if cold_only:
            return
        warm, warm_cpu, ok2 = timed(chapters, Path(first), jobs=1)
        print(f"warm, one at a time : {warm:7.1f} s  ({warm_cpu:.0f} CPU s) = {warm / cold:.0%} of cold "
              "(target ≤ 20 %)", flush=True)
        parallel, parallel_cpu, ok3 = timed(chapters, Path(second), jobs=2)
        print(f"cold, --jobs 2      : {parallel:7.1f} s  ({parallel_cpu:.0f} CPU s) = {parallel / cold:.2f}× cold "
              "(target ≤ 0.6×)")
        cores = os.cpu_count() or 1
        print(f"  its CPU seconds on {cores} cores with no gap: {parallel_cpu / cores:7.1f} s = "
              f"{parallel_cpu / cores / cold:.2f}× cold (no order of the chapters does better)")
    if not (ok1 and ok2 and ok3):
        print("note: a notebook raised in at least one run")


if __name__ == "__main__":
    arguments = sys.argv[1:]
    if {"-h", "--help"} & set(arguments):
        print("usage: python benchmarks/reproduce_timing.py [--cold-only] [chapter …]  (e.g. ch04 ch11; default: all)")
        sys.exit(0)
    try:
        main([a for a in arguments if a != "--cold-only"], cold_only="--cold-only" in arguments)
    except ValueError as exc:  # an unknown chapter or option: one line naming it and what is allowed
        print(f"reproduce_timing: {exc}", file=sys.stderr)
        sys.exit(2)
