"""Each chapter's jupytext source (.py, the reviewed text) and its executed notebook (.ipynb) hold the same cells."""

import json
from pathlib import Path

import jupytext
import pytest

CHAPTERS = Path(__file__).resolve().parent.parent / "chapters"
SOURCES = sorted(CHAPTERS.glob("ch*.py"))


def test_there_are_chapters():
    assert SOURCES, "no chapter sources found in chapters/"


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_py_and_ipynb_hold_the_same_cells(source):
    notebook = source.with_suffix(".ipynb")
    assert notebook.exists(), f"{notebook.name} is missing: run `python -m companion sync {source.stem}`"
    expected = [(c.cell_type, c.source.strip()) for c in jupytext.read(source).cells]
    stored = jupytext.read(notebook)
    assert [(c.cell_type, c.source.strip()) for c in stored.cells] == expected, (
        f"{notebook.name} is out of date with {source.name}: run `python -m companion sync {source.stem}`")


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_committed_notebook_is_executed_clean(source):
    doc = json.loads(source.with_suffix(".ipynb").read_text(encoding="utf-8"))
    code = [c for c in doc["cells"] if c["cell_type"] == "code" and "".join(c["source"]).strip()]
    assert all(c.get("execution_count") for c in code), "some code cells were never executed"
    assert not any(o.get("output_type") == "error" for c in code for o in c.get("outputs", []))
    assert "widgets" not in doc.get("metadata", {}), "widget state must not be stored"
    claim_cells = [c for c in code if "".join(c["source"]).startswith("# NBVAL_CHECK_OUTPUT")]
    text = "".join("".join(o.get("text", "")) for c in claim_cells for o in c.get("outputs", []))
    assert "CLAIM FAILS" not in text
