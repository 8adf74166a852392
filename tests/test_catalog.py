"""The catalog is the one record of the book's figures: it agrees with the committed notebooks and the README."""

from __future__ import annotations

from dataclasses import replace

import jupytext
import pytest

from companion.tools import catalog, fidelity, site


def committed_verdicts() -> list[site.ClaimRecord]:
    return [r for notebook in site.chapter_notebooks() for r in site.read_claims(notebook)]


def test_every_figure_and_table_of_chapters_4_to_15_is_listed_once() -> None:
    ids = [f.id for f in catalog.FIGURES]
    assert len(ids) == len(set(ids)) == 123
    assert catalog.book_chapters() == list(range(4, 16))
    assert all(f.note for f in catalog.FIGURES if f.status == catalog.GPU), "a GPU figure says why"


def test_catalog_agrees_with_the_committed_notebooks() -> None:
    assert catalog.discrepancies(committed_verdicts()) == []


def test_a_claimed_figure_without_its_verdict_is_caught() -> None:
    verdicts = committed_verdicts()
    dropped = [v for v in verdicts if "图4.7" not in catalog.figures_named(v.figure)]
    assert any("图4.7 is listed as claimed" in p for p in catalog.discrepancies(dropped))
    failing = [replace(v, holds=False) if "图4.7" in catalog.figures_named(v.figure) else v for v in verdicts]
    assert any("图4.7 is listed as claimed" in p for p in catalog.discrepancies(failing))


def test_an_identity_does_not_make_a_figure_claimed() -> None:
    """An identity checks the mathematics, not the figure's phenomenon: 图4.7 checked only by identities is not
    claimed, and an identity may name a figure of any status (表7.1, illustrative)."""
    verdicts = committed_verdicts()
    as_identities = [replace(v, identity=True) if "图4.7" in catalog.figures_named(v.figure) else v for v in verdicts]
    assert any("图4.7 is listed as claimed" in p for p in catalog.discrepancies(as_identities))
    table = next(v for v in verdicts if v.figure == "表7.1")
    assert table.identity and table.holds and catalog.figure("表7.1").status == catalog.ILLUS


def test_a_verdict_on_a_figure_the_catalog_does_not_claim_is_caught() -> None:
    # a computational figure without a claim (图8.11, the last one ``shown``, became a claim: ``gpu`` ones remain)
    unrecorded = next(f for f in catalog.FIGURES if f.status in (catalog.MISSING, catalog.SHOWN, catalog.GPU))
    extra = committed_verdicts() + [site.ClaimRecord(unrecorded.chapter.slug, unrecorded.id, "a claim", True)]
    assert any(f"on {unrecorded.id}, which the catalog lists as" in p for p in catalog.discrepancies(extra))
    stray = committed_verdicts() + [site.ClaimRecord("ch07_phase_diagram", "图4.7", "a claim", True)]
    assert any("which the catalog places in ch04_frequency_principle" in p for p in catalog.discrepancies(stray))


@pytest.mark.parametrize(("label", "named"), [("图13.5/13.6", {"图13.5", "图13.6"}), ("图15.1(b)", {"图15.1"}),
                                              ("图10.5a", {"图10.5"}), ("表7.1", {"表7.1"}), ("§5.2", set()),
                                              ("图4.3, 4.6", {"图4.3", "图4.6"})])
def test_figures_named_by_a_claim_label(label: str, named: set[str]) -> None:
    assert catalog.figures_named(label) == named


def test_readme_chapter_map_is_the_generated_one() -> None:
    readme = fidelity.README.read_text(encoding="utf-8")
    assert fidelity.readme_map(readme) == fidelity.chapter_map_markdown().strip(), (
        "the README's chapter map is out of date: run `python -m companion coverage --write-readme`")


@pytest.mark.parametrize("chapter", catalog.available(), ids=lambda c: c.slug)
def test_notebook_title_follows_the_one_pattern(chapter: catalog.Chapter) -> None:
    first = jupytext.read(chapter.source).cells[0].source.splitlines()[0]
    assert first == f"# {chapter.heading}"


def test_coverage_counts_computational_cpu_figures_only() -> None:
    items = fidelity.fidelities()
    assert len(items) == 123 and sum(i.kind == catalog.COMP for i in items) == 90
    total = fidelity.counts(items)
    distinct_cpu = [f for f in catalog.FIGURES if f.cpu_feasible and f.id not in fidelity.SAME_FIGURE]
    assert total.cpu_feasible == len(distinct_cpu)  # a figure printed twice counts once
    page = fidelity.coverage_markdown()
    assert all(f"| {f.id} |" in page for f in catalog.FIGURES)
    assert f"**{total.faithful} of those {total.cpu_feasible}" in page
    assert f"**{total.faithful} of the {total.cpu_feasible} computational" in fidelity.chapter_map_markdown()


def test_unknown_figures_and_statuses_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown status 'done'"):
        catalog.Figure("图4.1", "ch04", catalog.COMP, "done", "x")
    with pytest.raises(ValueError, match="must read 图N.M"):
        catalog.Figure("Fig 4.1", "ch04", catalog.COMP, catalog.CLAIM, "x")
    with pytest.raises(ValueError, match="unknown figure '图3.1'"):
        catalog.figure("图3.1")
