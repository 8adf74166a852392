"""The full profile on a GPU (issue #18, item 3), as one script: the smoke of every chapter, then the real full profile
of as many chapters as a time budget allows, slowest first, with the seconds of each.

1. ``--profile full --smoke`` of every chapter, one at a time (:func:`companion.tools.runner.chapter_run`, what
   ``python -m companion reproduce --profile full --smoke`` runs): every full-profile code path on the device, step
   counts cut to a few recording intervals.
2. The full profile, slowest chapter first — slowest by the smoke's seconds on this device, which run the full
   profile's shapes and widths.

Each run gets whatever is left of ``--budget``; one still running when the budget ends is stopped (its kernel
killed) and recorded as cut off, and nothing after it starts.

Each chapter's setup cell prints the settings (``device=cuda``): the table says which device every run used.  The
results cache starts empty (every run computes); the executed notebooks, their figures and ``device_runs.json`` go
to ``--out``; the table (Markdown, for the issue's note) is printed row by row.  On a CPU it runs too (the smoke in
about two minutes on 2 cores); the full profile there takes hours.

Run: ``python benchmarks/full_profile_on_device.py [--budget SECONDS] [--out DIR] [ch04 ch07 …]`` (default: every
chapter, a budget of 540 s for both steps together, ``device_runs/``).  Rows are printed and written to the JSON as
they come, so a run stopped from outside keeps what it measured.

On a GPU machine whose Python has torch, NumPy, SciPy, matplotlib, scikit-learn and scikit-image but not the Jupyter
stack, and no internet: download the stack's wheels where pip works (18–20 MB; here for that machine's Python 3.12)
and drop those it already has::

    python3 -m pip download --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
        -d .whl ipykernel jupyter_client nbclient nbformat jupytext ipywidgets
    rm .whl/{attrs,packaging,psutil,pygments,python_dateutil,pyyaml,typing_extensions,markdown_it_py,mdurl}-*

then, on that machine, from the repository's root::

    python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
    PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 python3 benchmarks/full_profile_on_device.py --budget 480

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
from unittest.mock import patch

import torch

from companion.tools import catalog
from companion.tools.runner import ChapterRun, chapter_run, in_own_loop

CELL_TIMEOUT = 3600  # seconds a cell may run (the budget, not this, is what stops a long full run)


def device_of(run: ChapterRun) -> str:
    """The device a chapter's setup cell reported (``device=cuda``), or ``?`` if its notebook does not say."""
    found = re.search(r"device=(\w+)", run.notebook.read_text(encoding="utf-8")) if run.notebook else None
    return found.group(1) if found else "?"


def run_within(chapter: catalog.Chapter, out: Path, *, smoke: bool, seconds_left: float) -> ChapterRun | None:
    """The full profile of ``chapter`` (seed 0; ``smoke``: its step counts cut), or None if it was still running after
    ``seconds_left`` (it is then cancelled, which kills its kernel)."""
    async def bounded() -> ChapterRun | None:
        task = asyncio.ensure_future(chapter_run(chapter.source, out, profile="full", seed=0, timeout=CELL_TIMEOUT,
                                                 extra_env=None, language="en", smoke=smoke))
        done, _ = await asyncio.wait({task}, timeout=seconds_left)
        if task in done:
            return task.result()
        task.cancel()  # nbclient reports a cancelled cell as a dead kernel: whatever it raises, the run is cut off
        await asyncio.gather(task, return_exceptions=True)
        return None

    return in_own_loop(bounded)


def row(step: str, run: ChapterRun | None, chapter: catalog.Chapter, seconds: float) -> dict:
    """One line of the table: a run's seconds, device and verdicts, or its cut-off."""
    if run is None:
        return {"step": step, "chapter": chapter.slug, "seconds": round(seconds, 1), "cut_off": True}
    judged = [c for c in run.claims if c.judged]
    return {"step": step, "chapter": chapter.slug, "seconds": round(seconds, 1), "cut_off": False,
            "device": device_of(run), "error": run.error, "claims": len(run.claims),
            "held": sum(c.passed for c in judged), "judged": len(judged)}


def markdown(r: dict) -> str:
    """A row of the table as a line of Markdown."""
    if r["cut_off"]:
        return f"| {r['step']} | {r['chapter']} | > {r['seconds']:.0f} (cut off by the budget) | | | |"
    verdicts = f"{r['held']}/{r['judged']}" if r["judged"] else f"{r['claims']} shown (smoke)"
    return f"| {r['step']} | {r['chapter']} | {r['seconds']:.1f} | {r['device']} | {verdicts} | {r['error'] or ''} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chapters", nargs="*", help="chapter slugs or prefixes (default: every chapter)")
    parser.add_argument("--budget", type=float, default=540.0, help="seconds for the smoke and the full runs together")
    parser.add_argument("--out", type=Path, default=Path("device_runs"), help="folder for notebooks, figures, JSON")
    args = parser.parse_args()
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

    def step(kind: str, chapter: catalog.Chapter) -> bool:
        """Run one chapter within what is left of the budget and record it; False once the budget is spent."""
        left = args.budget - (time.perf_counter() - start)
        if left <= 0:
            return False
        begun = time.perf_counter()
        run = run_within(chapter, args.out / kind, smoke=kind == "smoke", seconds_left=left)
        record(row(kind, run, chapter, time.perf_counter() - begun))
        return run is not None

    print("| step | chapter | seconds | device | claims held / judged | error |\n|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="companion-cache-") as cache, \
            patch.dict(os.environ, {"COMPANION_CACHE": cache}):  # an empty cache: timings of runs, not of reads
        smoked = []
        for chapter in chapters:  # one at a time, so that each smoke's seconds are its own
            if not step("smoke", chapter):
                break
            smoked.append(chapter)
        smoke_seconds = {r["chapter"]: r["seconds"] for r in rows}
        for chapter in sorted(smoked, key=lambda c: -smoke_seconds[c.slug]):
            if not step("full", chapter):
                break
    print(f"\n{time.perf_counter() - start:.0f} s in all")


if __name__ == "__main__":
    main()
