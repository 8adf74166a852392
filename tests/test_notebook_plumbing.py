"""Notebooks hold no plumbing: a chapter defines no function or class of its own, except the stubs of its
exercises (习题), where the student is asked to write one (docs/architecture.md, "Anatomy of a chapter")."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

CHAPTERS = sorted((Path(__file__).resolve().parents[1] / "chapters").glob("ch*.py"))


def definitions_outside_exercises(source: str) -> list[str]:
    """Names of functions/classes defined in code cells not preceded by a markdown cell about an exercise."""
    found, last_markdown = [], ""
    for cell in re.split(r"^# %%", source, flags=re.M)[1:]:
        if cell.startswith(" [markdown]"):
            last_markdown = cell
            continue
        tree = ast.parse(cell)
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


def first_import(source: str, names: tuple[str, ...] = ("companion", "torch")) -> str | None:
    """Which of ``names`` the first code cell imports first (the top-level package of each import statement)."""
    cells = [c for c in re.split(r"^# %%", source, flags=re.M)[1:] if not c.startswith(" [markdown]")]
    for node in ast.parse(cells[0]).body:
        modules = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
        for module in modules:
            if module.split(".")[0] in names:
                return module.split(".")[0]
    return None


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_the_setup_cell_imports_companion_before_torch(chapter: Path) -> None:
    """In a kernel JupyterLab starts, ``import companion`` sets OpenMP's passive wait policy, which torch reads once
    when it is imported: imported later, the batched transformers get no second thread (config.batched_threads)."""
    assert first_import(chapter.read_text(encoding="utf-8")) == "companion"


def test_the_import_order_check_sees_torch_first() -> None:
    assert first_import("# %%\nimport numpy as np\nimport torch\nfrom companion.kit import claims\n") == "torch"
    assert first_import("# %%\nimport companion\nimport torch\n") == "companion"
