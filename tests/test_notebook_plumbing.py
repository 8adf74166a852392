"""Notebooks hold no plumbing: a chapter defines no function or class of its own, except the stubs of its
exercises (习题), where the student is asked to write one (docs/architecture.md, "Anatomy of a chapter")."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from companion.tools import catalog

CHAPTERS = catalog.sources()  # the book's chapters and the papers' notebook


def definitions_outside_exercises(source: str) -> list[str]:
    """Names of functions/classes defined in code cells not preceded by a markdown cell about an exercise."""
    found, last_markdown = [], ""
    for cell in re.split(r"^# %%", source, flags=re.M)[1:]:
        if cell.startswith(" [markdown]"):
            last_markdown = cell
            continue
        tree = ast.parse(cell.partition("\n")[2])  # the rest of the "# %%" line is the cell's header (e.g. its tags)
        names = [n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
        if names and "习题" not in last_markdown:
            found += names
    return found


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_no_function_or_class_outside_the_exercises(chapter: Path) -> None:
    assert definitions_outside_exercises(chapter.read_text(encoding="utf-8")) == []


def test_the_check_finds_a_helper_in_a_story_cell() -> None:
    story = "# %% [markdown]\n# ## 图4.7\n\n# %%\ndef helper():\n    pass\n\n# %% [markdown]\n# **习题1.**\n\n# %%\ndef answer():\n    return None\n"
    assert definitions_outside_exercises(story) == ["helper"]


def test_nbval_kernels_talk_over_private_ipc_sockets() -> None:
    """Two kernels started at once by the two xdist workers could be handed the same TCP port (jupyter_client picks
    a free port, releases it, then the kernel binds it): the loser died before replying to kernel_info and every
    cell of its notebook errored.  conftest.py gives nbval's kernels IPC sockets in a folder of their own."""
    import os

    from nbval import kernel as nbval_kernel

    first, second = nbval_kernel.KernelManager(kernel_name="python3"), nbval_kernel.KernelManager(kernel_name="python3")
    assert first.transport == second.transport == "ipc"
    session = os.environ["COMPANION_TEST_SESSION"]
    assert first.ip != second.ip and all(Path(km.ip).parent.parent == Path(session) / "kernels" for km in (first, second))
    km, kc = nbval_kernel.start_new_kernel(kernel_name="python3")
    try:
        assert km.transport == "ipc" and kc.execute_interactive("x = 1").get("content", {}).get("status") == "ok"
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_a_test_session_leaves_no_temporary_folder_behind(tmp_path) -> None:
    """Each pytest run left about 100 MB of companion-cache-* folders in the temporary directory (conftest.py made
    one per process and never removed them)."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    env = {k: v for k, v in os.environ.items() if k not in ("COMPANION_CACHE", "COMPANION_TEST_SESSION")}
    env["TMPDIR"] = str(tmp_path)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "2", "-p", "no:cacheprovider",
                           "tests/test_notebook_plumbing.py", "-k", "no_function_or_class and ch04"],
                          cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("companion-")] == []
