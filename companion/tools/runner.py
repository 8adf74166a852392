"""Headless execution of chapter notebooks and the claims report.

:func:`run_chapter` reads a chapter's jupytext source, executes it in a fresh kernel with the
requested profile and seed (and, for a smoke run, ``COMPANION_SMOKE=1``), writes the executed notebook
and every figure it drew (PNG, named after the book figure it reproduces) to an output folder, and collects
the claims the notebook checked.  :func:`format_report` prints the table the ``reproduce`` command ends with:
chapter, claim, verdict, measured numbers, seconds.

A kernel imports :data:`PRELOAD` (torch, pyplot, ipywidgets: ≈ 4 s) while it starts, before it is given its
notebook.  :func:`run_chapters` starts the kernels of the next ``jobs`` chapters while the current ones run, so
that start-up overlaps with work (a chapter's notebook runs on one torch thread and leaves a core idle).

A chapter that does not finish (a cell raised, ran past ``--timeout``, or its kernel died) is a failed
:class:`ChapterRun` with what ran written out; the claims it never reached count as *not run* in the report's
summary (:func:`expected_claims`).  Ctrl-C (or SIGTERM, which the command line turns into the same) ends the runs
with a :class:`KeyboardInterrupt` naming the chapters that did not finish; their kernels are shut down.

Each kernel's sockets, connection file and claims log live in one private folder ``companion-kernel-<pid>-…`` of
the temporary directory, removed when the run ends; the folders of a process that was killed (SIGKILL) are
removed by the next run (:func:`remove_stale_kernel_dirs`).

The client reads the kernel's replies and outputs through :class:`PolledChannel`, which looks at its socket at least
every :data:`WAKE_UP` seconds: zmq's asyncio integration can miss the wake-up of a message that has arrived, and the
wait then lasts until its timeout — for a cell's reply, the whole ``--timeout``.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import hashlib
import os
import shutil
import tempfile
import threading
import time
import unicodedata
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from queue import Empty
from typing import Any, TypeVar

import jupytext
import nbformat
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.channels import AsyncZMQSocketChannel
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError
from tqdm.auto import tqdm
from traitlets import Type

from companion.kit.cache import absolute_setting, imported_modules, module_file
from companion.kit.claims import IDENTITY, PHENOMENON, LoggedClaim, declared_claims, read_log
from companion.kit.config import ConfigError, read_profile, read_seed, read_smoke, shown
from companion.kit.i18n import read_language, tr
from companion.tools import catalog
from companion.tools.catalog import longest_first
from companion.tools.reproduction import SavedFigure, count_claims, identities_clause, not_run_reason, save_figures

T = TypeVar("T")
#: What every kernel imports while it starts (IPython's ``exec_lines``: no output, no execution count).
PRELOAD = "import companion, torch, matplotlib.pyplot, ipywidgets, companion.kit.claims, companion.kit.plots, companion.kit.widgets"
#: The longest a wait for a kernel's message goes without looking at the socket again (seconds).
WAKE_UP = 1.0
#: The private temporary folders of this process's kernels are named ``companion-kernel-<pid>-…``.
KERNEL_DIR_PREFIX = "companion-kernel-"
#: The longest ``--timeout`` a cell may be given (seconds): a day.
MAX_TIMEOUT = 24 * 3600


class PolledChannel(AsyncZMQSocketChannel):
    """A kernel channel whose wait for a message looks at the socket again at least every :data:`WAKE_UP` seconds.

    zmq's asyncio integration watches an edge-triggered descriptor and can miss the wake-up of a message that has
    arrived (pyzmq #1558, nbclient #312); the message is then read only when the wait times out.  nbclient waits
    for a cell's reply with the whole cell timeout, so one missed wake-up stalled a robustness run for 15 minutes
    (ch10, its last cell, reply read at the 900 s timeout).  Here such a message waits at most :data:`WAKE_UP`.
    """

    async def get_msg(self, timeout: float | None = None) -> dict[str, Any]:  # type: ignore[override]
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                return await super().get_msg(timeout=WAKE_UP if left is None else min(WAKE_UP, left))
            except Empty:
                if left is not None and left <= WAKE_UP:  # the whole timeout has been waited
                    raise


class PolledClient(AsyncKernelClient):
    """The kernel client nbclient gets from :func:`kernel`: replies and outputs through :class:`PolledChannel`."""

    shell_channel_class = Type(PolledChannel)
    iopub_channel_class = Type(PolledChannel)


class NotAResult(RuntimeError):
    """A robustness run that measured the machine, not the code: never cached, the sweep stops."""


class KernelDied(NotAResult):
    """A chapter's kernel died (killed, out of memory)."""


class CompanionNotImportable(NotAResult):
    """A chapter's kernel could not import the companion (an environment without it, or a broken install)."""


@dataclass
class ChapterRun:
    slug: str
    seconds: float
    claims: list[LoggedClaim] = field(default_factory=list)
    figures: list[SavedFigure] = field(default_factory=list)
    error: str | None = None
    notebook: Path | None = None
    #: the ids of the judged claims the chapter states (:func:`expected_claims`), identities included
    expected: tuple[str, ...] = ()
    #: those of them that are identities (kind="identity")
    identities: tuple[str, ...] = ()
    #: why the notebook did not finish: "raised", "timed out" or "kernel died" (None: it finished)
    stopped: str | None = None
    #: the tags of the cell whose error stopped the notebook (empty: none raised, or that cell has no tags) — e.g. a
    #: chapter's install cell (:data:`companion.tools.launch.INSTALL_TAG`)
    stopped_in: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """The notebook ran to its end and every claim (explorations and a smoke run's claims aside) held."""
        return self.error is None and all(c.passed for c in self.claims if c.judged)

    @property
    def not_run(self) -> list[str]:
        """The judged claims a notebook that did not finish never reached (none for a smoke run: none is judged)."""
        if self.error is None or any(c.smoke for c in self.claims):
            return []
        logged = {c.id for c in self.claims}
        return [cid for cid in self.expected if cid not in logged]


def load_source(path: Path) -> nbformat.NotebookNode:
    """A chapter's jupytext percent source as a notebook (outputs empty)."""
    return jupytext.read(path)


def _trees(code: str) -> list[ast.AST]:
    """The syntax trees of the code cells ``code`` (a cell of IPython magics, which is not Python, is left out)."""
    trees = []
    for cell in code.split("\n\0"):
        with contextlib.suppress(SyntaxError):
            trees.append(ast.parse(cell))
    return trees


def expected_claims(source: Path, kinds: tuple[str, ...] = (PHENOMENON, IDENTITY)) -> tuple[str, ...]:
    """The judged claims (``kinds``: explorations aside) chapter ``source`` states: the ``ClaimSpec`` ids of its own
    prefix (``ch13.``) declared in its code cells or in the ``companion.experiments`` modules it imports — read from
    the files, nothing is imported or run."""
    trees = _trees("\n\0".join(c.source for c in load_source(source).cells if c.cell_type == "code"))
    for name in sorted(imported_modules(source)):  # the same reading of imports as the results cache's digests
        if name.startswith("companion.experiments."):
            trees += _trees(module_file(name).read_text(encoding="utf-8"))
    listed = next((c for c in catalog.CHAPTERS if c.slug == source.stem), None)  # icl_papers' claims are chicl.…
    prefix = (listed.claim_prefix if listed else source.stem.split("_")[0]) + "."
    return tuple(dict.fromkeys(cid for tree in trees for cid, _, kind in declared_claims(tree)
                               if cid.startswith(prefix) and kind in kinds))


def _pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (one of another user counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_kernel_dirs(folder: Path | None = None) -> list[Path]:
    """Remove the ``companion-kernel-<pid>-…`` folders of ``folder`` (the temporary directory) whose process is gone
    (killed with SIGKILL, which leaves no time to clean up); returns those removed."""
    removed = []
    for path in Path(folder or tempfile.gettempdir()).glob(f"{KERNEL_DIR_PREFIX}*"):
        pid = path.name[len(KERNEL_DIR_PREFIX):].split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _pid_alive(int(pid)):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def private_dir() -> tempfile.TemporaryDirectory:
    """A temporary folder of this process's kernels, named after its pid (see :func:`remove_stale_kernel_dirs`)."""
    return tempfile.TemporaryDirectory(prefix=f"{KERNEL_DIR_PREFIX}{os.getpid()}-")


#: The longest path of a Unix socket (``sun_path`` holds 108 bytes on Linux, 104 on macOS, with its final NUL).
SOCKET_PATH_MAX = 103


def kernel_transport(folder: Path) -> tuple[str, str]:
    """``(transport, ip)`` for a kernel whose files live in ``folder``: IPC sockets ``folder/kernel-<n>`` where their
    path fits a Unix socket, else TCP on the loopback interface (a long ``TMPDIR``, as pytest's own temporary folders
    under xdist, made zmq fail with "File name too long" and the chapter with it)."""
    ipc = str(folder / "kernel")
    if len(os.fsencode(ipc)) + len("-65535") <= SOCKET_PATH_MAX:
        return "ipc", ipc
    return "tcp", "127.0.0.1"


@contextlib.asynccontextmanager
async def kernel(cwd: Path, env: dict[str, str]) -> AsyncIterator[AsyncKernelManager]:
    """A python3 kernel in ``cwd`` whose environment includes ``env``, importing :data:`PRELOAD` as it starts; shut
    down on leaving the context.

    The kernel talks to us over local IPC sockets in a private temporary folder (:func:`private_dir`), not over TCP
    on the loopback interface (which ipykernel warns about, unencrypted, for every chapter) unless the folder's path is
    too long for a socket (:func:`kernel_transport`); its connection file (with its key) lies there too, so that
    nothing of it outlives the run.
    """
    # The kernel gets its own environment (this process's is left alone, so several chapters can start at once).
    env = {**os.environ, "MPLBACKEND": "module://matplotlib_inline.backend_inline", **env}  # figures as PNG outputs
    env["COMPANION_CACHE"] = absolute_setting(env.get("COMPANION_CACHE", ""))  # the kernel's cwd is chapters/
    remove_stale_kernel_dirs()
    with private_dir() as sockets:
        transport, ip = kernel_transport(Path(sockets))
        manager = AsyncKernelManager(kernel_name="python3", transport=transport, ip=ip,
                                     connection_file=str(Path(sockets) / "kernel.json"),
                                     client_class=f"{__name__}.PolledClient")
        interrupted = False
        try:
            await manager.start_kernel(env=env, cwd=str(cwd), extra_arguments=[
                f"--IPKernelApp.exec_lines={PRELOAD}", "--HistoryManager.hist_file=:memory:"])  # as nbclient does
            yield manager
        except asyncio.CancelledError:
            interrupted = True
            raise
        finally:  # killed at once after an interrupt (if that is cut short, the kernel ends with this process)
            await _stop(manager, now=interrupted)


async def _stop(manager: AsyncKernelManager, now: bool) -> None:
    """Shut the kernel down, unless nbclient already did (after a client that failed to start): killed ``now``, or
    asked to shut down (and killed if it has not ended after jupyter_client's wait).

    Not through ``shutdown_kernel(now=False)``: that first sends the kernel SIGINT, and a kernel still handling a
    late message then logs "[IPKernelApp] ERROR | KeyboardInterrupt caught in kernel." into the reproduce output.
    """
    if not (manager.has_kernel and await manager.is_alive()):
        return
    if now:
        await manager.shutdown_kernel(now=True)
        return
    await manager.request_shutdown()
    await manager.finish_shutdown()
    await manager.cleanup_resources()


async def execute_in(nb: nbformat.NotebookNode, manager: AsyncKernelManager, cwd: Path, timeout: int) -> None:
    """Execute ``nb`` in place in the started kernel of ``manager``."""
    client = NotebookClient(nb, km=manager, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(cwd)}})
    try:
        await client.async_execute()
    finally:
        if client.kc is not None:
            client.kc.stop_channels()


def in_own_loop(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run the coroutine ``make()`` to its end in an event loop of its own thread and return its result.

    The loop lives outside the main thread so that nbclient installs no signal handlers of its own: Ctrl-C reaches
    this thread as a KeyboardInterrupt, which cancels the coroutine and is re-raised; the kernels are killed (one whose
    shutdown is cut short exits with this process, as ipykernel does when its parent is gone).
    """
    running: dict[str, Any] = {}  # the loop and the task, once they exist
    outcome: dict[str, Any] = {}
    finished = threading.Event()  # not Thread.join: an interrupted join can leave the thread looking stopped

    async def main() -> T:
        running.update(loop=asyncio.get_running_loop(), task=asyncio.current_task())
        return await make()

    def thread() -> None:
        try:
            outcome["value"] = asyncio.run(main())  # at the end it cancels and awaits any task still pending
        except BaseException as exc:  # handed to the caller's thread below
            outcome["error"] = exc
        finally:
            finished.set()

    threading.Thread(target=thread, name="companion-kernels", daemon=True).start()
    try:
        finished.wait()
    except KeyboardInterrupt:
        if running:
            running["loop"].call_soon_threadsafe(running["task"].cancel)
        finished.wait()
        raise
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def execute(nb: nbformat.NotebookNode, cwd: Path, env: dict[str, str], timeout: int = 600) -> None:
    """Execute ``nb`` in place in a fresh python3 kernel whose environment includes ``env``."""
    async def run() -> None:
        async with kernel(cwd, env) as manager:
            await execute_in(nb, manager, cwd, timeout)

    in_own_loop(run)


def _first_error(nb: nbformat.NotebookNode) -> tuple[int, nbformat.NotebookNode, dict] | None:
    """The first cell of the executed ``nb`` that shows an error: its index, the cell and the error output (None:
    no cell does)."""
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                return i, cell, out
    return None


def _erring_cell_tags(nb: nbformat.NotebookNode) -> tuple[str, ...]:
    """The tags of the first cell of the executed ``nb`` that shows an error (empty: none does)."""
    first = _first_error(nb)
    return () if first is None else tuple(first[1].get("metadata", {}).get("tags", ()))


def _error_output(nb: nbformat.NotebookNode) -> str | None:
    """The first error a cell showed without failing: raised while its output was shown (a figure that could not
    be drawn, in the kernel's post-execute hook), which nbclient does not report."""
    first = _first_error(nb)
    if first is None:
        return None
    i, _, out = first
    return f"{out.get('ename')}: {str(out.get('evalue', '')).strip()[:120]} (cell {i}, showing its output)"


def run_chapter(source: Path, out_dir: Path | None, profile: str = "quick", seed: int = 0, timeout: int = 600,
                extra_env: dict[str, str] | None = None, language: str = "en", smoke: bool = False) -> ChapterRun:
    """Execute one chapter source headless and collect its claims.

    ``smoke`` cuts the full profile's step counts to a few recording intervals
    (:func:`~companion.kit.config.pick_steps`) and leaves its claims unjudged; it needs ``profile="full"``.

    With an ``out_dir``, the executed notebook goes to ``out_dir/<slug>.ipynb`` and its figures to ``out_dir/<slug>/``,
    named after the book figures they reproduce (:func:`~companion.tools.reproduction.save_figures`);
    with ``None`` nothing is written (the robustness sweep keeps only the claims).
    """
    return in_own_loop(lambda: chapter_run(source, out_dir, profile=profile, seed=seed, timeout=timeout,
                                           extra_env=extra_env, language=language, smoke=smoke))


async def chapter_run(source: Path, out_dir: Path | None, *, profile: str, seed: int, timeout: int,
                      extra_env: dict[str, str] | None, language: str, smoke: bool,
                      turn: asyncio.Semaphore | None = None) -> ChapterRun:
    """:func:`run_chapter` as a coroutine: its kernel starts at once, its notebook runs once it holds ``turn``.

    ``seconds`` counts from the start of the notebook's execution (a kernel started ahead is ready sooner).
    """
    profile, seed = read_profile(profile), read_seed(seed)
    smoke = read_smoke(profile, smoke)
    slug = source.stem
    nb = load_source(source)
    with private_dir() as tmp:
        log = Path(tmp) / "claims.jsonl"
        env = {"COMPANION_PROFILE": profile, "COMPANION_SEED": str(seed), "COMPANION_CLAIMS_LOG": str(log),
               "COMPANION_CHAPTER": slug, "COMPANION_PROGRESS": "0", "COMPANION_LANG": read_language(language),
               "COMPANION_SMOKE": "1" if smoke else "0", **(extra_env or {})}
        async with kernel(source.parent, env) as manager, turn or contextlib.nullcontext():
            start = time.perf_counter()
            error, stopped = await _execute_reporting(nb, manager, source.parent, timeout)
            error = error or _error_output(nb)
            seconds = time.perf_counter() - start
        stopped_in = _erring_cell_tags(nb) if error else ()
        claims = read_log(log)
    expected, identities = expected_claims(source), expected_claims(source, (IDENTITY,))
    if out_dir is None:
        return ChapterRun(slug, seconds, claims, [], error, None, expected, identities, stopped, stopped_in)
    out_dir.mkdir(parents=True, exist_ok=True)
    notebook = out_dir / f"{slug}.ipynb"
    nbformat.write(nb, notebook)
    figures = save_figures(nb, out_dir / slug, slug)
    return ChapterRun(slug, seconds, claims, figures, error, notebook, expected, identities, stopped, stopped_in)


async def _execute_reporting(nb: nbformat.NotebookNode, manager: AsyncKernelManager, cwd: Path,
                             timeout: int) -> tuple[str | None, str | None]:
    """Execute ``nb`` like :func:`execute_in`; a notebook that does not finish gives ``(error, why it stopped)``
    instead of an exception: a cell raised, ran past ``timeout``, or the kernel died (killed, out of memory)."""
    try:
        await execute_in(nb, manager, cwd, timeout)
    except CellExecutionError as exc:
        return f"{exc.ename}: {exc.evalue.strip().splitlines()[0] if exc.evalue.strip() else ''}", "raised"
    except CellTimeoutError:
        return f"a cell ran longer than the {timeout} s allowed (--timeout)", "timed out"
    except DeadKernelError:
        if await manager.is_alive():  # nbclient reports a cancelled cell (Ctrl-C) as a dead kernel: it was not
            raise asyncio.CancelledError() from None
        return "kernel died while a cell ran (killed, or out of memory?)", "kernel died"
    except RuntimeError as exc:  # jupyter_client: "Kernel died before replying to kernel_info"
        if "kernel died" not in str(exc).lower():
            raise
        return f"kernel died as it started ({exc})", "kernel died"
    return None, None


def max_jobs() -> int:
    """The most runs ``--jobs`` may ask for at once: four per core (each is a kernel process of its own)."""
    return 4 * (os.cpu_count() or 1)


def read_jobs(value: str | int) -> int:
    """``--jobs``: a positive integer up to :func:`max_jobs`, or a ConfigError naming the bad value."""
    try:
        jobs = int(str(value).strip())
    except ValueError:
        raise ConfigError(f"--jobs must be a positive integer, got {value!r}") from None
    if jobs < 1:
        raise ConfigError(f"--jobs must be a positive integer, got {jobs}")
    if jobs > max_jobs():
        raise ConfigError(f"--jobs must be at most {max_jobs()} (4 per core, {os.cpu_count() or 1} cores), got {jobs}")
    return jobs


def read_timeout(value: str | int) -> int:
    """``--timeout``: whole seconds per cell, 1 to :data:`MAX_TIMEOUT` (nbclient would read 0 or less as *no*
    timeout), or a ConfigError naming the bad value."""
    try:
        seconds = int(str(value).strip())
    except ValueError:
        raise ConfigError(f"--timeout must be a whole number of seconds, got {shown(value)}") from None
    if not 1 <= seconds <= MAX_TIMEOUT:
        raise ConfigError(f"--timeout must lie between 1 and {MAX_TIMEOUT} seconds (a day), got {seconds}")
    return seconds


def read_budget(value: str | int | None) -> float | None:
    """``--budget``: seconds after which no further run starts, a number from 1 to :data:`MAX_TIMEOUT` (None when
    not given), or a ConfigError naming the bad value."""
    if value is None:
        return None
    try:
        seconds = float(str(value).strip())
    except ValueError:
        raise ConfigError(f"--budget must be a number of seconds, got {shown(value)}") from None
    if not 1 <= seconds <= MAX_TIMEOUT:  # also refuses nan and inf
        raise ConfigError(f"--budget must lie between 1 and {MAX_TIMEOUT} seconds (a day), got {shown(value)}")
    return seconds


def threads_side_by_side(jobs: int) -> dict[str, str]:
    """The environment of a kernel running beside ``jobs − 1`` others: cores // jobs torch threads
    (``COMPANION_THREADS``), or nothing when one runs alone or the environment already sets the count."""
    if jobs == 1 or os.environ.get("COMPANION_THREADS", "").strip():
        return {}
    return {"COMPANION_THREADS": str(max(1, (os.cpu_count() or 1) // jobs))}


def run_chapters(chapters: Sequence[Any], out_dir: Path, *, profile: str, seed: int, timeout: int = 600,
                 jobs: int = 1, progress: bool = True, language: str = "en", smoke: bool = False) -> list[ChapterRun]:
    """Execute ``chapters`` (catalog entries), ``jobs`` at a time, each kernel with cores // jobs torch threads
    (``COMPANION_THREADS``, unless the environment sets it), behind one progress bar; results in catalog order.

    One at a time, the chapters run in the order given; side by side, the longest start first
    (:func:`~companion.tools.catalog.longest_first`).  Each chapter runs in its own kernel process, so the parallel
    runs share nothing but the results cache (whose writes are atomic).  One line per finished chapter says how it
    went.
    """
    env = threads_side_by_side(jobs)
    bar = tqdm(total=len(chapters), desc=f"chapters ({jobs} at a time)", disable=not progress or not chapters)

    async def one(ch: Any, turns: asyncio.Semaphore, kernels: asyncio.Semaphore) -> ChapterRun:
        async with kernels:  # at most 2·jobs kernels: those running and the next ones starting up
            run = await chapter_run(ch.source, out_dir, profile=profile, seed=seed, timeout=timeout, extra_env=env,
                                    language=language, smoke=smoke, turn=turns)
        bar.write(f"  {ch.slug}: {'ok' if run.ok else 'FAILED'} in {run.seconds:.1f} s, {len(run.claims)} claims, "
                  f"{len(run.figures)} figures → {run.notebook}")
        bar.update(1)
        return run

    tasks: dict[str, asyncio.Future[ChapterRun]] = {}

    async def every_chapter() -> list[ChapterRun]:
        turns, kernels = asyncio.Semaphore(jobs), asyncio.Semaphore(2 * jobs)  # both serve waiters in order
        order = list(chapters) if jobs == 1 else longest_first(chapters)
        tasks.update((ch.slug, asyncio.ensure_future(one(ch, turns, kernels))) for ch in order)
        try:
            await asyncio.gather(*tasks.values())  # cancelled (Ctrl-C), it cancels every task and waits for them
            return [tasks[ch.slug].result() for ch in chapters]
        except Exception:  # the runner itself failed (a chapter's failure is a ChapterRun): the others stop too
            for task in tasks.values():
                task.cancel()
            await asyncio.gather(*tasks.values(), return_exceptions=True)
            raise

    try:
        return in_own_loop(every_chapter)
    except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM: say which chapters did not finish
        done = [slug for slug, task in tasks.items() if task.done() and not task.cancelled()]
        unfinished = [ch.slug for ch in chapters if ch.slug not in done] or [ch.slug for ch in chapters]
        raise type(exc)(f"{', '.join(unfinished)} {'was' if len(unfinished) == 1 else 'were'} not finished; "
                        + (f"{len(done)} finished chapter(s) are in {out_dir}" if done else "nothing was written")
                        ) from None
    finally:
        bar.close()


def stable_cell_ids(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Give each cell of ``nb`` an id made from its type and source (a repeated cell gets ``-2``, ``-3`` …).

    jupytext gives every cell a random id, so each sync rewrote every cell of the committed notebook; with these, a
    sync that changes one cell changes one id.
    """
    seen: dict[str, int] = {}
    for cell in nb.cells:
        digest = hashlib.sha1(f"{cell.cell_type}\n{cell.source}".encode()).hexdigest()[:12]
        seen[digest] = seen.get(digest, 0) + 1
        cell.id = digest if seen[digest] == 1 else f"{digest}-{seen[digest]}"
    return nb


def sync_text(source: Path) -> Path:
    """Carry a change of ``source``'s markdown (its text) into the paired .ipynb without running it: every code cell
    keeps its committed outputs.  Those outputs were made by :func:`sync_notebook` on some machine, and another
    processor rounds differently (a claim's margin, a figure, even a verdict can move), so a change that touches no
    code should not remake them.  Refused — naming the first such cell — when a code cell differs from the committed
    notebook's: that needs :func:`sync_notebook`."""
    target = source.with_suffix(".ipynb")
    if not target.exists():
        raise ConfigError(f"{target.name} does not exist yet; make it with `python -m companion sync {source.stem}`")
    committed = nbformat.read(target, as_version=4)
    nb = stable_cell_ids(load_source(source))
    old_code = [c for c in committed.cells if c.cell_type == "code"]
    new_code = [c for c in nb.cells if c.cell_type == "code"]
    run_it = f"run `python -m companion sync {source.stem}` to execute it"
    if len(old_code) != len(new_code):
        raise ConfigError(f"{source.name}: {len(new_code)} code cells where the notebook has {len(old_code)}; {run_it}")
    for k, (old, new) in enumerate(zip(old_code, new_code)):
        if old.source != new.source:
            first = new.source.splitlines()[0] if new.source else ""
            raise ConfigError(f"{source.name}: code cell {k + 1} changed ({shown(first)}); {run_it}")
    for old, new in zip(old_code, new_code):
        new.outputs, new.execution_count, new.metadata = old.outputs, old.execution_count, old.metadata
    nb.metadata = committed.metadata
    nbformat.write(nb, target)
    return target


def sync_notebook(source: Path, seed: int = 0, timeout: int = 600) -> Path:
    """Rebuild ``source``'s paired .ipynb from the .py and execute it in place (quick profile, ``seed``).

    The committed notebook is what nbval compares against and what the book site shows, so it is
    always produced this way: same profile, same seed, progress bars off, no widget state, cell ids from the cells
    (:func:`stable_cell_ids`).
    """
    nb = load_source(source)
    env = {"COMPANION_PROFILE": "quick", "COMPANION_SEED": str(seed), "COMPANION_CHAPTER": source.stem,
           "COMPANION_PROGRESS": "0", "COMPANION_LANG": "en", "COMPANION_SMOKE": "0"}
    execute(nb, source.parent, env, timeout=timeout)
    nb.metadata.pop("widgets", None)
    nb.metadata["jupytext"] = {"formats": "ipynb,py:percent"}
    target = source.with_suffix(".ipynb")
    nbformat.write(stable_cell_ids(nb), target)
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


def summary_line(runs: Sequence[Any], language: str = "en") -> str:
    """The report's last line: phenomenon claims that hold out of all the chapters state — those a chapter that did not
    finish never reached count as not run, not as absent — clean chapters and seconds; then, apart, the identities
    (checks of the mathematics, not reproductions: :mod:`companion.kit.claims`)."""
    counts = count_claims(runs)
    values = dict(passed=counts.passed, claims=counts.claims, clean=sum(r.ok for r in runs), chapters=len(runs),
                  seconds=sum(r.seconds for r in runs))
    if not counts.not_run:
        line = tr("{passed}/{claims} claims hold; {clean}/{chapters} chapters ran clean; {seconds:.0f} s in all",
                  language).format(**values)
    else:
        line = tr("{passed}/{claims} claims hold; {not_run} not run ({why}); {clean}/{chapters} chapters ran clean; "
                  "{seconds:.0f} s in all", language).format(not_run=counts.not_run, why=not_run_reason(runs, language),
                                                             **values)
    return line + identities_clause(counts, language)


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
                (tr("identity holds", language) if c.passed else tr("identity FAILS", language)) if c.identity else \
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
    lines.append("\n" + summary_line(runs, language))
    n_smoke = sum(c.smoke for r in runs for c in r.claims)
    if n_smoke:
        lines.append(tr("{smoke} claims of a smoke run evaluated, not judged", language).format(smoke=n_smoke))
    return "\n".join(lines)
