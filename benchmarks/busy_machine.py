"""ch12b's and ch13's heaviest cells on a quiet machine and beside two busy processes, with the default settings.

A chapter's batched transformers borrow a second core (:func:`companion.kit.config.batched_threads`).  Torch's
OpenMP threads used to *spin* at every barrier, so when another program held a core each small parallel operation
waited for a descheduled thread: on 2 cores beside two busy processes ch12 took 2393 s instead of 80 s, and ch13
hit the 900 s cell timeout.  Since then :func:`~companion.kit.config.batched_threads` lends the second
thread only while a core is free (:class:`~companion.kit.config.ThreadLender`).  This script measures what a
reader gets:

* each chapter's notebook is cut after its heaviest cell (the two-anchor run of ch12b, chapter 12's second part,
  ch12's before the split; ch13's phase diagram) and executed in a plain Jupyter kernel, started as JupyterLab
  starts one: the kernel's environment has no ``OMP_WAIT_POLICY`` and no ``COMPANION_THREADS``, so the thread policy
  is the notebook's own default; the results cache is off;
* once alone (quiet), once with two ``while True: pass`` processes beside it (busy), and the heaviest cell's
  seconds are read from the notebook's execution timestamps.

Fair sharing of 2 cores among 3 busy programs would make a one-thread cell 1.5× slower; the target is ≤ 3×.
``--code DIR`` runs the kernels on another checkout of the package (e.g. an older commit, for a before/after
comparison in one session).  It takes 5–10 minutes on 2 cores; nothing else should run meanwhile.

``--reproduce`` measures README's first command instead: ``python -m companion reproduce`` (every chapter, an empty
results cache each time, default settings) alone and beside two busy processes; the target is ≤ 2.5× (about 25
minutes on 2 cores).

Run: ``python benchmarks/busy_machine.py [--code DIR] [ch12b ch13]`` or ``python benchmarks/busy_machine.py --reproduce``
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import jupytext
import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
#: Each chapter's heaviest cell, named by a call it makes (the first code cell that contains it).
HEAVIEST = {"ch12b": ("ch12b_composite_tasks", "anchors.run_composite("),
            "ch13": ("ch13_complexity_control", "complexity.run_composition(")}
#: What a kernel started by JupyterLab does not have: set here, these would hide what the notebook sets itself.
NOT_INHERITED = ("OMP_WAIT_POLICY", "COMPANION_THREADS", "COMPANION_CACHE", "PYTHONPATH")


def cut_notebook(slug: str, marker: str) -> tuple[nbformat.NotebookNode, int]:
    """The chapter's notebook up to and including its first code cell containing ``marker``, and that cell's index."""
    nb = jupytext.read(ROOT / "chapters" / f"{slug}.py")
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and marker in cell.source:
            nb.cells = nb.cells[:index + 1]
            return nb, index
    raise SystemExit(f"{slug}: no code cell contains {marker!r}")


def cell_seconds(cell: nbformat.NotebookNode) -> float:
    """Seconds between a cell's execution request and its reply (nbclient's timing metadata)."""
    timing = cell.metadata["execution"]
    start, end = (dt.datetime.fromisoformat(timing[k].replace("Z", "+00:00"))
                  for k in ("iopub.execute_input", "shell.execute_reply"))
    return (end - start).total_seconds()


def kernel_environment(code: Path) -> dict[str, str]:
    """A JupyterLab-like kernel environment: this one without :data:`NOT_INHERITED`, importing ``code``'s package."""
    env = {k: v for k, v in os.environ.items() if k not in NOT_INHERITED}
    env.update(PYTHONPATH=str(code), COMPANION_CACHE="off", COMPANION_PROGRESS="0", MPLBACKEND="Agg")
    return env


def heaviest_cell_seconds(chapter: str, code: Path) -> float:
    """Execute ``chapter``'s notebook up to its heaviest cell in a fresh kernel; that cell's seconds."""
    slug, marker = HEAVIEST[chapter]
    nb, index = cut_notebook(slug, marker)
    before = dict(os.environ)
    os.environ.clear()
    os.environ.update(kernel_environment(code))  # nbclient's kernel inherits this process's environment
    try:
        NotebookClient(nb, kernel_name="python3", timeout=3600,
                       resources={"metadata": {"path": str(ROOT / "chapters")}}).execute()
    finally:
        os.environ.clear()
        os.environ.update(before)
    return cell_seconds(nb.cells[index])


@contextmanager
def busy_processes(count: int) -> Iterator[None]:
    """``count`` processes that keep a core busy each for as long as the block runs."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def reproduce_seconds() -> tuple[float, int]:
    """Wall seconds and exit status of ``python -m companion reproduce`` with an empty results cache."""
    with tempfile.TemporaryDirectory() as scratch:
        env = {k: v for k, v in os.environ.items() if k not in NOT_INHERITED}
        env["COMPANION_CACHE"] = str(Path(scratch) / "cache")
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "companion", "reproduce", "--out", str(Path(scratch) / "out")],
                              cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        seconds = time.perf_counter() - start
    summary = [line for line in done.stdout.splitlines() if "claims hold" in line]
    print(f"  {summary[-1].strip() if summary else done.stdout[-300:]}", flush=True)
    return seconds, done.returncode


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chapters", nargs="*", metavar="chapter", help=f"of {', '.join(HEAVIEST)} (default: both)")
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout whose package the kernels import")
    parser.add_argument("--reproduce", action="store_true", help="time README's first command instead")
    args = parser.parse_args(argv)
    if args.reproduce:
        quiet, quiet_rc = reproduce_seconds()
        print(f"reproduce, quiet: {quiet:7.1f} s (exit {quiet_rc})", flush=True)
        with busy_processes(2):
            busy, busy_rc = reproduce_seconds()
        print(f"reproduce beside two busy processes: {busy:7.1f} s (exit {busy_rc}) = {busy / quiet:.2f}× quiet "
              "(target ≤ 2.5×)")
        return
    print(f"{os.cpu_count()} cores; kernels import {args.code.resolve()}; default settings, no results cache")
    unknown = sorted(set(args.chapters) - set(HEAVIEST))
    if unknown:
        parser.error(f"no heaviest cell is known for {', '.join(unknown)}: choose from {', '.join(HEAVIEST)}")
    for chapter in args.chapters or sorted(HEAVIEST):
        quiet = heaviest_cell_seconds(chapter, args.code)
        with busy_processes(2):
            busy = heaviest_cell_seconds(chapter, args.code)
        print(f"{chapter} heaviest cell: quiet {quiet:6.1f} s, beside two busy processes {busy:6.1f} s "
              f"= {busy / quiet:.2f}× (target ≤ 3×; fair sharing 1.5×)", flush=True)


if __name__ == "__main__":
    main()
