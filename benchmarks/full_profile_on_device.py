"""The full profile on a GPU (issue #18, item 3), as one script: the smoke of every chapter, then the real full profile
of as many chapters as a time budget allows, slowest first, with the seconds of each.

1. ``--profile full --smoke`` of every chapter (:func:`companion.tools.runner.chapter_run`, what
   ``python -m companion reproduce --profile full --smoke`` runs): every full-profile code path on the device, step
   counts cut to a few recording intervals.
2. The full profile, slowest chapter first — slowest by the smoke's seconds on this device, which run the full
   profile's shapes and widths (with ``--no-smoke``, step 1 is skipped and the chapters slowest in the quick profile
   go first: for chapters whose smoke has already run there).

Both steps run ``--side-by-side N`` chapters at a time (default 1, so that each chapter's seconds are its own; with
more, each kernel gets cores // N torch threads and the chapters share the GPU, so that a budget too short for the
slowest chapter alone still sees the others through).  The two steps share ``--budget``: a run still going when it
ends is stopped (its kernel killed) and recorded as cut off, and nothing after it starts.

Each chapter's setup cell prints the settings (``device=cuda``): the table says which device every run used.  The
results cache starts empty (every run computes); the executed notebooks, their figures and ``device_runs.json`` go
to ``--out``; the table (Markdown, for the issue's note) is printed row by row.  On a CPU it runs too (the smoke in
about two minutes on 2 cores); the full profile there takes hours.

Run: ``python benchmarks/full_profile_on_device.py [--budget SECONDS] [--side-by-side N] [--no-smoke] [--out DIR]
[ch04 ch07 …]`` (default: every chapter, a budget of 540 s for both steps together, one at a time,
``device_runs/``).  Rows are printed and written to the JSON as they come, so a run stopped from outside keeps what
it measured.  ``docs/full-profile.md`` records what it measured on an H200.

On a GPU machine whose Python has torch, NumPy, SciPy, matplotlib, scikit-learn and scikit-image but not the Jupyter
stack, and no internet: download the stack's wheels where pip works (18–20 MB; here for that machine's Python 3.12)
and drop those it already has::

    python3 -m pip download --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
        -d .whl ipykernel jupyter_client nbclient nbformat jupytext ipywidgets
    rm .whl/{attrs,packaging,psutil,pygments,python_dateutil,pyyaml,typing_extensions,markdown_it_py,mdurl}-*

then, on that machine, from the repository's root::

    python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
    PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 python3 benchmarks/full_profile_on_device.py --budget 480 \
        --side-by-side 12

(checked on a CPU in a virtual environment holding only the packages above and the wheels: every chapter's smoke
ran, its kernel importing the stack from ``/tmp/site``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Callable
from unittest.mock import patch

import torch

from companion.tools import catalog
from companion.tools.runner import ChapterRun, chapter_run, in_own_loop, threads_side_by_side

CELL_TIMEOUT = 3600  # seconds a cell may run (the budget, not this, is what stops a long full run)


def device_of(run: ChapterRun) -> str:
    """The device a chapter's setup cell reported (``device=cuda``), or ``?`` if its notebook does not say."""
    found = re.search(r"device=(\w+)", run.notebook.read_text(encoding="utf-8")) if run.notebook else None
    return found.group(1) if found else "?"


def run_side_by_side(chapters: list[catalog.Chapter], out: Path, *, smoke: bool, seconds_left: float,
                     side_by_side: int, record: Callable[[catalog.Chapter, ChapterRun | None, float], None]) -> None:
    """The full profile of ``chapters`` (seed 0; ``smoke``: step counts cut), ``side_by_side`` at a time in the order
    given, each kernel with cores // side_by_side torch threads when more than one runs (unless
    ``COMPANION_THREADS`` says); ``record(chapter, run, seconds)`` as each ends, its seconds counted from its
    kernel's start.  Whatever still runs after ``seconds_left`` is cancelled (its kernel killed) and recorded with
    ``run=None``, like those not yet started."""
    env = threads_side_by_side(side_by_side)
    started: dict[str, float] = {}
    budget_spent = asyncio.Event()  # set before the runs still going are cancelled: they are then recorded as cut off

    async def one(chapter: catalog.Chapter, turn: asyncio.Semaphore) -> None:
        async with turn:
            started[chapter.slug] = time.perf_counter()
            try:
                run = await chapter_run(chapter.source, out, profile="full", seed=0, timeout=CELL_TIMEOUT,
                                        extra_env=env, language="en", smoke=smoke)
            except Exception as exc:  # its kernel would not start, say: a row that says so, and the others go on
                if budget_spent.is_set():  # a cancelled cell surfaces as a dead kernel
                    raise
                run = ChapterRun(chapter.slug, 0.0, [], [], f"{type(exc).__name__}: {exc}", None)
        if not budget_spent.is_set():
            record(chapter, run, time.perf_counter() - started[chapter.slug])

    async def bounded() -> None:
        turn = asyncio.Semaphore(side_by_side)  # serves its waiters in order: the order given is the start order
        tasks = {chapter.slug: asyncio.ensure_future(one(chapter, turn)) for chapter in chapters}
        _, running = await asyncio.wait(tasks.values(), timeout=seconds_left)
        now = time.perf_counter()  # the cut-off runs ran until here
        budget_spent.set()
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        for chapter in chapters:
            if tasks[chapter.slug] in running:
                record(chapter, None, now - started.get(chapter.slug, now))

    in_own_loop(bounded)


def row(step: str, run: ChapterRun | None, chapter: catalog.Chapter, seconds: float) -> dict:
    """One line of the table: a run's seconds, device and verdicts (each claim's in the JSON), or its cut-off."""
    if run is None:
        return {"step": step, "chapter": chapter.slug, "seconds": round(seconds, 1), "cut_off": True}
    judged = [c for c in run.claims if c.judged]
    return {"step": step, "chapter": chapter.slug, "seconds": round(seconds, 1), "cut_off": False,
            "device": device_of(run), "error": run.error, "claims": len(run.claims),
            "held": sum(c.passed for c in judged), "judged": len(judged),
            "verdicts": [{"id": c.id, "passed": c.passed, "judged": c.judged, "tightest": c.tightest}
                         for c in run.claims]}


def markdown(r: dict) -> str:
    """A row of the table as a line of Markdown."""
    if r["cut_off"]:
        seconds = f"> {r['seconds']:.0f} (cut off by the budget)" if r["seconds"] else "not started (budget spent)"
        return f"| {r['step']} | {r['chapter']} | {seconds} | | | |"
    verdicts = f"{r['held']}/{r['judged']}" if r["judged"] else f"{r['claims']} shown (smoke)"
    return f"| {r['step']} | {r['chapter']} | {r['seconds']:.1f} | {r['device']} | {verdicts} | {r['error'] or ''} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chapters", nargs="*", help="chapter slugs or prefixes (default: every chapter)")
    parser.add_argument("--budget", type=float, default=540.0, help="seconds for the smoke and the full runs together")
    parser.add_argument("--side-by-side", type=int, default=1,
                        help="chapters run at a time, each with cores // N torch threads (default 1: each its own "
                             "seconds)")
    parser.add_argument("--no-smoke", action="store_true",
                        help="skip the smoke: the full runs only, the longest quick-profile chapters first")
    parser.add_argument("--out", type=Path, default=Path("device_runs"), help="folder for notebooks, figures, JSON")
    args = parser.parse_args()
    if args.side_by_side < 1:
        parser.error(f"--side-by-side must be a positive integer, got {args.side_by_side}")
    chapters = [catalog.find(name) for name in args.chapters] if args.chapters else catalog.available()
    args.out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    name = torch.cuda.get_device_name() if torch.cuda.is_available() else "no GPU: the CPU"
    print(f"torch {torch.__version__}, {name}; {len(chapters)} chapters, budget {args.budget:.0f} s", flush=True)
    rows: list[dict] = []

    def record(line: dict) -> None:  # written as it comes: a run stopped from outside keeps what it measured
        rows.append(line)
        (args.out / "device_runs.json").write_text(json.dumps({"torch": torch.__version__, "device": name,
                                                               "rows": rows}, indent=1))
        print(markdown(line), flush=True)

    def step(kind: str, chosen: list[catalog.Chapter], side_by_side: int) -> None:
        """Run ``chosen`` within what is left of the budget and record each as it ends."""
        left = args.budget - (time.perf_counter() - start)
        if chosen and left > 0:
            run_side_by_side(chosen, args.out / kind, smoke=kind == "smoke", seconds_left=left,
                             side_by_side=side_by_side,
                             record=lambda chapter, run, seconds: record(row(kind, run, chapter, seconds)))

    print("| step | chapter | seconds | device | claims held / judged | error |\n|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="companion-cache-") as cache, \
            patch.dict(os.environ, {"COMPANION_CACHE": cache}):  # an empty cache: timings of runs, not of reads
        if args.no_smoke:
            step("full", catalog.longest_first(chapters), args.side_by_side)
        else:
            step("smoke", chapters, args.side_by_side)
            smoke_seconds = {r["chapter"]: r["seconds"] for r in rows if not r["cut_off"]}
            step("full", sorted((c for c in chapters if c.slug in smoke_seconds), key=lambda c: -smoke_seconds[c.slug]),
                 args.side_by_side)
    print(f"\n{time.perf_counter() - start:.0f} s in all")


if __name__ == "__main__":
    main()
