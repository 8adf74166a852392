"""The papers' notebook (chapters/icl_papers.py, issue #42) is a notebook of the companion like the chapters — run,
reproduced, executed by nbval, on the site in both editions, its claims on the claims page — but not a chapter of the
book: its claims name papers, never a book figure, and they count in no figure coverage; the coverage page gives them
a table of their own (companion/tools/papers.csv)."""

from __future__ import annotations

import argparse

from companion.kit.claims import PASS_MARK
from companion.tools import catalog, cli, fidelity, site, timing, translate
from companion.tools.runner import expected_claims

PAPERS = catalog.find("icl_papers")


def test_the_papers_notebook_is_listed_after_the_book_chapters() -> None:
    assert not PAPERS.is_book and PAPERS.book == catalog.PAPERS and PAPERS.available
    assert catalog.CHAPTERS[-1] == PAPERS and all(c.is_book for c in catalog.CHAPTERS[:-1])
    assert PAPERS.heading.startswith("Papers — ") and not PAPERS.figures
    assert catalog.sources()[-1] == PAPERS.source


def test_its_claims_have_its_own_prefix_and_the_runner_expects_them() -> None:
    expected = expected_claims(PAPERS.source)
    assert sum(cid.startswith("chicl.boix-") for cid in expected) == 5 and all(cid.startswith("chicl.") for cid in expected)
    assert {"chicl.li-unseen-tasks", "chicl.akyurek-depth", "chicl.dherin-finetune-similar"} <= set(expected)
    assert all(catalog.by_claim_prefix(cid) == PAPERS for cid in expected)
    assert catalog.by_claim_prefix("ch04.fp-order").slug == "ch04_frequency_principle"


def test_the_site_builds_its_page_after_chapter_15() -> None:
    names = [p.stem for p in site.chapter_notebooks()]
    assert names[-2:] == ["ch15_pinns", "icl_papers"]
    records = site.read_claims(PAPERS.notebook)
    papers = ("Boix-Adserà ", "Li et al. ", "Akyürek ", "Dherin et al. ")
    assert len(records) == len(expected_claims(PAPERS.source)) + sum(r.exploration for r in records)
    assert all(r.figure.startswith(papers) and (r.holds or r.exploration) for r in records), records
    assert not any(catalog.figures_named(r.figure) for r in records), "a papers claim must never name a book figure"


def test_its_claims_count_in_no_figure_coverage() -> None:
    named = {cid for f in catalog.FIGURES for cid in f.claims}
    assert not any(cid.startswith("chicl.") for cid in named)
    assert not any(cid.startswith("chicl.") for item in fidelity.fidelities() for cid in item.claims)


def test_the_coverage_page_has_a_papers_table_with_computed_status() -> None:
    rows = fidelity.read_papers()
    declared = fidelity.declarations()
    assert rows and all(cid in declared for r in rows for cid in r.claims)
    for language in ("en", "zh"):
        page = fidelity.coverage_markdown(language)
        table = page[page.index("## " + ("Papers" if language == "en" else "论文")):]
        assert all(f"`{cid}`" in table for r in rows for cid in r.claims)
    report = {"claims": {cid: {"meets_standard": True, "passed": 20, "runs": 20} for r in rows for cid in r.claims}}
    statuses = {r.result: r.status for r in fidelity.paper_results(reports={"quick": report, "full": None})}
    kinds = {r.result: {declared[cid][1] for cid in r.claims} for r in rows}
    expected = {result: "exploration" if "exploration" in k else "reproduced" if k == {"phenomenon"} else "claimed"
                for result, k in kinds.items()}  # an identity verifies mathematics: it reproduces no result
    assert statuses == expected and "reproduced" in statuses.values()
    unswept = {r.result: r.status for r in fidelity.paper_results(reports={"quick": None, "full": None})}
    assert unswept == {result: "exploration" if "exploration" in k else "claimed" for result, k in kinds.items()}


def test_an_undeclared_claim_leaves_a_paper_result_missing(tmp_path, monkeypatch) -> None:
    table = tmp_path / "papers.csv"
    table.write_text("paper,result,claims,note\nX et al.,a result,chicl.nothing-yet,\nY et al.,another,,why not\n",
                     encoding="utf-8")
    real = fidelity.read_papers
    monkeypatch.setattr(fidelity, "read_papers", lambda path=table: real(path))
    assert [r.status for r in fidelity.paper_results(reports={"quick": None, "full": None})] == ["missing", "missing"]


def test_the_chapter_map_shows_it_as_papers_not_a_book_chapter() -> None:
    row = [r for r in fidelity.chapter_map_markdown().splitlines() if r.startswith("| `icl_papers` |")]
    assert len(row) == 1 and row[0].startswith("| `icl_papers` | papers, not the book: 上下文学习：§14.3 背后的论文 "
                                               "(In-context learning: the papers behind §14.3) | — | — | — | ")
    assert row[0].endswith(f"| {timing.time_cell('icl_papers', timing.read_quiet_times())} |")  # its measured time


def test_translation_and_run_folder_know_its_module_and_name() -> None:
    assert [p.name for p in translate.chapter_modules("icl_papers")] == ["icl_papers.py"]
    assert "ch14_phenomena.py" in [p.name for p in translate.chapter_modules("ch14_more_phenomena")]
    args = argparse.Namespace(out=None, command="run", smoke=False, seed=3, profile="quick")
    assert cli.run_folder(args, [PAPERS]).endswith("icl_papers-seed3-quick")


def test_a_papers_verdict_is_no_catalog_discrepancy() -> None:
    record = site.ClaimRecord("icl_papers", "Boix-Adserà Fig. 2", "text", True)
    assert catalog.discrepancies([record]) == catalog.discrepancies([])
    assert PASS_MARK  # the verdict lines are the kit's
