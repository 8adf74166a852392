"""Headless execution of chapter notebooks and the claims report.

:func:`run_chapter` reads a chapter's jupytext source, executes it in a fresh kernel with the
requested profile and seed (and, for a smoke run, ``COMPANION_SMOKE=1``), writes the executed notebook
and every figure it drew (PNG, named after the book figure it reproduces) to an output folder, and collects
the claims the notebook checked.  :func:`format_report` prints the table the ``reproduce`` command ends with:
chapter, claim, verdict, measured numbers, seconds.
"""

from __future__ import annotations

import os
import tempfile
import time
import unicodedata
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jupytext
import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError
from tqdm.auto import tqdm
from traitlets.config import Config

from companion.kit.claims import LoggedClaim, read_log
from companion.kit.config import ConfigError, read_profile, read_seed, read_smoke
from companion.kit.i18n import read_language, tr
from companion.tools.reproduction import SavedFigure, save_figures


@dataclass
class ChapterRun:
    slug: str
    seconds: float
    claims: list[LoggedClaim] = field(default_factory=list)
    figures: list[SavedFigure] = field(default_factory=list)
    error: str | None = None
    notebook: Path | None = None

    @property
    def ok(self) -> bool:
        """The notebook ran to its end and every claim (explorations and a smoke run's claims aside) held."""
        return self.error is None and all(c.passed for c in self.claims if c.judged)


def load_source(path: Path) -> nbformat.NotebookNode:
    """A chapter's jupytext percent source as a notebook (outputs empty)."""
    return jupytext.read(path)


def execute(nb: nbformat.NotebookNode, cwd: Path, env: dict[str, str], timeout: int = 600) -> None:
    """Execute ``nb`` in place in a fresh python3 kernel whose environment includes ``env``.

    The kernel talks to us over local IPC sockets in a private temporary folder, not over TCP on the loopback
    interface (which ipykernel warns about, unencrypted, for every chapter).
    """
    # The kernel gets its own environment (this process's is left alone, so several chapters can start at once).
    env = {**os.environ, "MPLBACKEND": "module://matplotlib_inline.backend_inline", **env}  # figures as PNG outputs
    with tempfile.TemporaryDirectory(prefix="companion-kernel-") as sockets:
        ipc = Config({"KernelManager": {"transport": "ipc", "ip": str(Path(sockets) / "kernel")}})
        NotebookClient(nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(cwd)}},
                       config=ipc).execute(env=env)


def _error_output(nb: nbformat.NotebookNode) -> str | None:
    """The first error a cell showed without failing: raised while its output was shown (a figure that could not
    be drawn, in the kernel's post-execute hook), which nbclient does not report."""
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                return f"{out.get('ename')}: {str(out.get('evalue', '')).strip()[:120]} (cell {i}, showing its output)"
    return None


def run_chapter(source: Path, out_dir: Path | None, profile: str = "quick", seed: int = 0, timeout: int = 600,
                extra_env: dict[str, str] | None = None, language: str = "en", smoke: bool = False) -> ChapterRun:
    """Execute one chapter source headless and collect its claims.

    ``smoke`` cuts the full profile's step counts to a few recording intervals
    (:func:`~companion.kit.config.pick_steps`) and leaves its claims unjudged; it needs ``profile="full"``.

    With an ``out_dir``, the executed notebook goes to ``out_dir/<slug>.ipynb`` and its figures to ``out_dir/<slug>/``,
    named after the book figures they reproduce (:func:`~companion.tools.reproduction.save_figures`);
    with ``None`` nothing is written (the robustness sweep keeps only the claims).
    """
    profile, seed = read_profile(profile), read_seed(seed)
    smoke = read_smoke(profile, smoke)
    slug = source.stem
    nb = load_source(source)
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "claims.jsonl"
        env = {"COMPANION_PROFILE": profile, "COMPANION_SEED": str(seed), "COMPANION_CLAIMS_LOG": str(log),
               "COMPANION_CHAPTER": slug, "COMPANION_PROGRESS": "0", "COMPANION_LANG": read_language(language),
               "COMPANION_SMOKE": "1" if smoke else "0", **(extra_env or {})}
        start = time.perf_counter()
        error = None
        try:
            execute(nb, source.parent, env, timeout=timeout)
        except CellExecutionError as exc:
            error = f"{exc.ename}: {exc.evalue.strip().splitlines()[0] if exc.evalue.strip() else ''}"
        except CellTimeoutError:
            error = f"a cell ran longer than the {timeout} s allowed (--timeout)"
        error = error or _error_output(nb)
        seconds = time.perf_counter() - start
        claims = read_log(log)
    if out_dir is None:
        return ChapterRun(slug, seconds, claims, [], error, None)
    out_dir.mkdir(parents=True, exist_ok=True)
    notebook = out_dir / f"{slug}.ipynb"
    nbformat.write(nb, notebook)
    figures = save_figures(nb, out_dir / slug, slug)
    return ChapterRun(slug, seconds, claims, figures, error, notebook)


def read_jobs(value: str | int) -> int:
    """``--jobs``: a positive integer, or a ConfigError naming the bad value."""
    try:
        jobs = int(str(value).strip())
    except ValueError:
        raise ConfigError(f"--jobs must be a positive integer, got {value!r}") from None
    if jobs < 1:
        raise ConfigError(f"--jobs must be a positive integer, got {jobs}")
    return jobs


def run_chapters(chapters: Sequence[Any], out_dir: Path, *, profile: str, seed: int, timeout: int = 600,
                 jobs: int = 1, progress: bool = True, language: str = "en", smoke: bool = False) -> list[ChapterRun]:
    """Execute ``chapters`` (catalog entries), ``jobs`` at a time, each kernel with cores // jobs torch threads
    (``COMPANION_THREADS``, unless the environment sets it), behind one progress bar; results in catalog order.

    Each chapter runs in its own kernel process, so the parallel runs share nothing but the results cache
    (whose writes are atomic).  One line per finished chapter says how it went.
    """
    env = {} if jobs == 1 or os.environ.get("COMPANION_THREADS", "").strip() else \
        {"COMPANION_THREADS": str(max(1, (os.cpu_count() or 1) // jobs))}
    bar = tqdm(total=len(chapters), desc=f"chapters ({jobs} at a time)", disable=not progress or not chapters)
    done: dict[str, ChapterRun] = {}

    def one(ch: Any) -> ChapterRun:
        return run_chapter(ch.source, out_dir, profile=profile, seed=seed, timeout=timeout, extra_env=env,
                           language=language, smoke=smoke)

    try:
        with ThreadPoolExecutor(max_workers=jobs) as pool:  # threads only wait: the work is in the kernels
            futures = {pool.submit(one, ch): ch for ch in chapters}
            for future in as_completed(futures):
                run = future.result()
                done[futures[future].slug] = run
                bar.write(f"  {futures[future].slug}: {'ok' if run.ok else 'FAILED'} in {run.seconds:.1f} s, "
                          f"{len(run.claims)} claims, {len(run.figures)} figures → {run.notebook}")
                bar.update(1)
    finally:
        bar.close()
    return [done[ch.slug] for ch in chapters]


def sync_notebook(source: Path, seed: int = 0, timeout: int = 600) -> Path:
    """Rebuild ``source``'s paired .ipynb from the .py and execute it in place (quick profile, ``seed``).

    The committed notebook is what nbval compares against and what the book site shows, so it is
    always produced this way: same profile, same seed, progress bars off, no widget state.
    """
    nb = load_source(source)
    env = {"COMPANION_PROFILE": "quick", "COMPANION_SEED": str(seed), "COMPANION_CHAPTER": source.stem,
           "COMPANION_PROGRESS": "0", "COMPANION_LANG": "en", "COMPANION_SMOKE": "0"}
    execute(nb, source.parent, env, timeout=timeout)
    nb.metadata.pop("widgets", None)
    nb.metadata["jupytext"] = {"formats": "ipynb,py:percent"}
    target = source.with_suffix(".ipynb")
    nbformat.write(nb, target)
    return target


def _width(text: str) -> int:
    """Terminal columns of ``text``: a CJK character takes two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _fit(text: str, width: int) -> str:
    """``text`` cut to ``width`` terminal columns and padded to exactly that many."""
    out, used = [], 0
    for ch in text:
        if used + _width(ch) > width:
            break
        out.append(ch)
        used += _width(ch)
    return "".join(out) + " " * (width - used)


def format_report(runs: list[ChapterRun], language: str = "en") -> str:
    """The claims report, in ``language``: one row per claim (chapter, claim id and sentence, verdict, margin,
    seconds)."""
    header = (tr("chapter", language), tr("claim", language), tr("verdict", language), tr("margin", language),
              tr("seconds", language))
    rows = []
    for run in runs:
        for c in run.claims:
            verdict = tr("smoke (not judged)", language) if c.smoke else \
                tr("explored", language) if c.exploration else \
                (tr("PASS (thin)", language) if c.thin else tr("PASS", language)) if c.passed else tr("FAIL", language)
            margin = tr("never", language) if c.margin is None else f"{c.margin:+.3g} {c.unit}"
            rows.append((run.slug, f"{c.id} [{c.figure}] {tr(c.text, language)}", verdict,
                         f"{tr('margin', language)} {margin}", ""))
        status = "ok" if run.ok else tr("ERROR: {error}", language).format(error=run.error) if run.error else \
            tr("claim failed", language)
        rows.append((run.slug, tr("(notebook: {figures} figures, {claims} claims)", language).format(
            figures=len(run.figures), claims=len(run.claims)), status, "", f"{run.seconds:.1f}"))
    widths = [min(70, max(_width(str(r[i])) for r in [header, *rows])) for i in range(len(header))]

    def fmt(row: tuple) -> str:
        return " | ".join(_fit(str(v), w) for v, w in zip(row, widths))

    lines = [fmt(header), "-+-".join("-" * w for w in widths), *map(fmt, rows)]
    n_claims = sum(c.judged for r in runs for c in r.claims)
    n_pass = sum(c.passed and c.judged for r in runs for c in r.claims)
    lines.append("\n" + tr("{passed}/{claims} claims hold; {clean}/{chapters} chapters ran clean; {seconds:.0f} s in all",
                           language).format(passed=n_pass, claims=n_claims, clean=sum(r.ok for r in runs),
                                            chapters=len(runs), seconds=sum(r.seconds for r in runs)))
    n_smoke = sum(c.smoke for r in runs for c in r.claims)
    if n_smoke:
        lines.append(tr("{smoke} claims of a smoke run evaluated, not judged", language).format(smoke=n_smoke))
    return "\n".join(lines)
