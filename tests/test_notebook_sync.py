"""Each chapter's jupytext source (.py, the reviewed text) and its executed notebook (.ipynb) hold the same cells."""

import copy
import json
from pathlib import Path

import jupytext
import nbformat
import pytest

from companion.tools import catalog
from companion.tools.runner import stable_cell_ids

CHAPTERS = Path(__file__).resolve().parent.parent / "chapters"
SOURCES = catalog.sources()  # the book's chapters and the papers' notebook (icl_papers)


def test_there_are_chapters():
    assert SOURCES, "no chapter sources found in chapters/"


def test_every_notebook_source_is_in_the_catalog():
    """A notebook source in chapters/ that the catalog does not list would escape these tests (and the site)."""
    assert sorted(CHAPTERS.glob("*.py")) == sorted(SOURCES)


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


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_committed_notebook_has_the_cell_ids_sync_gives(source):
    """Ids made from the cells, not jupytext's random ones (which made every sync rewrite every cell)."""
    stored = nbformat.read(source.with_suffix(".ipynb"), as_version=4)
    ids = [c.id for c in stored.cells]
    assert ids == [c.id for c in stable_cell_ids(stored).cells], (
        f"{source.with_suffix('.ipynb').name} has other cell ids: run `python -m companion sync {source.stem}`")


def test_a_changed_cell_changes_its_own_id_only():
    nb = jupytext.read(SOURCES[0])
    before = [c.id for c in stable_cell_ids(nb).cells]
    assert len(set(before)) == len(before) and all(0 < len(i) <= 64 for i in before)
    assert before == [c.id for c in stable_cell_ids(jupytext.read(SOURCES[0])).cells], "the same cells, the same ids"
    nb.cells[3].source += "\n# one more line"
    nb.cells.append(copy.deepcopy(nb.cells[1]))  # a repeated cell gets an id of its own
    after = [c.id for c in stable_cell_ids(nb).cells]
    assert [i for i, (a, b) in enumerate(zip(before, after)) if a != b] == [3]
    assert after[-1] == after[1] + "-2"
    nbformat.validate(nb)


def test_a_text_only_sync_keeps_the_committed_outputs_and_refuses_a_code_change(tmp_path):
    from companion.kit.config import ConfigError
    from companion.tools.runner import sync_text

    source = tmp_path / "ch97_text.py"
    source.write_text("# %% [markdown]\n# Old words.\n\n# %%\nprint(1 + 1)\n", encoding="utf-8")
    nb = stable_cell_ids(jupytext.read(source))
    nb.cells[1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="2\n")]
    nb.cells[1].execution_count = 1
    nbformat.write(nb, source.with_suffix(".ipynb"))
    source.write_text(source.read_text(encoding="utf-8").replace("Old words.", "New words."), encoding="utf-8")
    synced = nbformat.read(sync_text(source), as_version=4)
    assert synced.cells[0].source == "New words." and synced.cells[1].outputs[0]["text"] == "2\n"
    assert synced.cells[0].id == stable_cell_ids(jupytext.read(source)).cells[0].id  # as a full sync would name it
    source.write_text(source.read_text(encoding="utf-8").replace("1 + 1", "1 + 2"), encoding="utf-8")
    with pytest.raises(ConfigError, match="code cell 1 changed"):
        sync_text(source)
