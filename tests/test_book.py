"""The book site: staging (toc, chapter map, claims page) and a warning-free Jupyter Book build."""

from __future__ import annotations

import html as html_lib
import importlib.util
import json
import re
import shutil
import time
from pathlib import Path

import nbformat
import pytest
from PIL import Image
import yaml
from browser_support import built_site, require_jupyter_book

from companion.kit import i18n
from companion.tools import catalog
from companion.tools import site
from companion.kit.claims import EXPLORATION_MARK, FAIL_MARK, PASS_MARK


def _notebook(path: Path, title: str | None, outputs: list[str]) -> Path:
    """A small executed-looking notebook: a title cell and one code cell printing ``outputs``."""
    nb = nbformat.v4.new_notebook()
    if title is not None:
        nb.cells.append(nbformat.v4.new_markdown_cell(f"# {title}\n\nSome text with $x^2$."))
    code = nbformat.v4.new_code_cell("print('...')")
    code.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text) for text in outputs]
    nb.cells.append(code)
    nbformat.write(nb, path)
    return path


def _words(text: str) -> str:
    """``text`` as its words only (tags, markup and HTML escapes do not matter)."""
    return " ".join(re.findall(r"\w+", html_lib.unescape(text)))


def test_read_claims_parses_verdict_lines(tmp_path: Path) -> None:
    nb = _notebook(tmp_path / "ch04_frequency_principle.ipynb", "Chapter 4", [
        f"{PASS_MARK} [图4.7] the k=1 peak converges before k=3\n  measured: t1=3, t3=9\n",
        "training 100 steps\n",
        f"\x1b[31m{FAIL_MARK} [§5 MscaleDNN] the scaled net converges faster\x1b[0m\n",
        f"{EXPLORATION_MARK} [图8.16] residual nets condense layer by layer\n",
    ])
    claims = site.read_claims(nb)
    assert [(c.figure, c.text, c.holds, c.exploration) for c in claims] == [
        ("图4.7", "the k=1 peak converges before k=3", True, False),
        ("§5 MscaleDNN", "the scaled net converges faster", False, False),
        ("图8.16", "residual nets condense layer by layer", False, True)]
    assert {c.chapter for c in claims} == {"ch04_frequency_principle"}


def test_notebook_title_is_the_first_level_one_heading(tmp_path: Path) -> None:
    assert site.notebook_title(_notebook(tmp_path / "ch07_a.ipynb", "Chapter 7: phases", [])) == "Chapter 7: phases"
    with pytest.raises(ValueError, match="ch08_b.ipynb has no level-1 heading"):
        site.notebook_title(_notebook(tmp_path / "ch08_b.ipynb", None, []))


def test_chapter_notebooks_follow_the_books_order(tmp_path: Path) -> None:
    for name in ("ch99_extra", "ch07_phase_diagram", "ch04_frequency_principle", "scratch"):
        _notebook(tmp_path / f"{name}.ipynb", name, [])
    assert [p.stem for p in site.chapter_notebooks(tmp_path)] == [
        "ch04_frequency_principle", "ch07_phase_diagram", "ch99_extra"]


def test_toc_lists_chapters_then_reference_pages() -> None:
    toc = site.toc_yaml(["ch04_frequency_principle", "ch07_phase_diagram"])
    assert toc.index("file: ch04_frequency_principle") < toc.index("file: ch07_phase_diagram") < toc.index(
        "file: coverage") < toc.index("file: claims") < toc.index("file: glossary")
    assert "caption: Chapters" not in site.toc_yaml([])


def test_chapter_map_links_built_chapters_only() -> None:
    table = site.chapter_map_markdown(["ch04_frequency_principle"])
    rows = [r for r in table.strip().splitlines()[2:] if r.startswith("| `") or r.startswith("| [")]
    assert len(rows) == len(catalog.CHAPTERS)
    assert "[`ch04_frequency_principle`](ch04_frequency_principle.ipynb)" in rows[0] and "图4.7" in rows[0]
    assert rows[-2].startswith("| `ch15_pinns` |") and "神经网络求解微分方程" in rows[-2]
    assert rows[-1].startswith("| `icl_papers` | papers, not the book:")  # after chapter 15, no book figures
    assert "[coverage page](coverage.md)" in table


def test_claims_page_counts_and_lists_every_claim(tmp_path: Path) -> None:
    a = _notebook(tmp_path / "ch04_frequency_principle.ipynb", "Chapter 4", [f"{PASS_MARK} [图4.2] low | then high\n"])
    b = _notebook(tmp_path / "ch07_phase_diagram.ipynb", "Chapter 7", [])
    page = site.claims_markdown([a, b])
    assert "1 claims and 0 explorations" in page and "in 2 notebooks." in page
    assert "| 图4.2 | low \\| then high | ✔ holds |" in page
    assert "## [Chapter 7](ch07_phase_diagram.ipynb)" in page and "checks no claim yet" in page


REPORT = {
    "profile": "quick", "seeds": list(range(20)), "jobs": 2, "wall_seconds": 600.0, "torch": "2.13.0",
    "machine": "x86_64, 2 cores", "made_at": "2026-11-23T15:00:00+00:00",
    "chapters": {"ch04_frequency_principle": {"digest": "0", "commit": "abc", "passed": 19, "runs": 20,
                                              "meets_standard": True,
                                              "seeds": {str(s): {"seconds": 30.0} for s in range(20)}},
                 "ch07_phase_diagram": {"digest": "1", "commit": "abc", "passed": 15, "runs": 20,
                                        "meets_standard": False,
                                        "seeds": {str(s): {"seconds": 20.0} for s in range(20)}}},
    "claims": {"ch04.fp-order": {"chapter": "ch04_frequency_principle", "figure": "图4.7", "exploration": False,
                                 "passed": 19, "runs": 20, "meets_standard": True,
                                 "min_margin": {"margin": -0.1, "unit": "rel"},
                                 "median_margin": {"margin": 0.4, "unit": "rel"}},
               "ch07.sw-sign": {"chapter": "ch07_phase_diagram", "figure": "图7.4", "exploration": False,
                                "passed": 15, "runs": 20, "meets_standard": False,
                                "min_margin": None, "median_margin": {"margin": 2.0, "unit": "sd"}}},
}


def test_robustness_page_lists_pass_counts_margins_and_marks_stale_chapters() -> None:
    page = site.robustness_markdown(REPORT, stale=["ch07_phase_diagram"])
    assert "| `ch04.fp-order` | 图4.7 | 19/20 | -0.1 rel | +0.4 rel | 0–19 | ✔ |" in page
    assert "| `ch07.sw-sign` | 图7.4 | 15/20 | never | +2 sd | 0–19 | stale |" in page
    assert "| [ch04_frequency_principle](ch04_frequency_principle.ipynb) | 19/20 | 30 | `abc` | ✔ meets" in page
    assert "`ch07_phase_diagram` changed since this report was made" in page
    import copy
    further = copy.deepcopy(REPORT)  # the count on the other seeds the chapter ran: in-sample or further seeds
    further["claims"]["ch04.fp-order"]["other_seeds"] = {"passed": 15, "runs": 20}
    further["claims"]["ch07.sw-sign"] |= {"other_seeds": {"passed": 20, "runs": 20},
                                          "validation_seeds": list(range(500, 520))}
    page = site.robustness_markdown(further, stale=[])
    assert "| 0–19 · other seeds 15/20 | ✔ |" in page and "| 500–519 · in-sample 20/20 |" in page
    fresh = site.robustness_markdown(REPORT, stale=[])
    assert "✘ below" in fresh and "changed since" not in fresh
    assert "No robustness report" in site.robustness_markdown(None, [])
    import copy
    restamped = copy.deepcopy(REPORT)
    restamped["chapters"]["ch04_frequency_principle"]["restamped"] = {"at": "now", "seeds": [0, 1], "commit": "def"}
    assert "✔ meets the standard · carried over, seeds 0, 1 rerun" in site.robustness_markdown(restamped, stale=[])
    # a chapter that judged no claim on any seed (explorations only) passes nothing: no ✔, no pass count
    explorations = copy.deepcopy(REPORT)
    for run in explorations["chapters"]["ch04_frequency_principle"]["seeds"].values():
        run["claims"] = 0
    page = site.robustness_markdown(explorations, stale=[])
    assert "| [ch04_frequency_principle](ch04_frequency_principle.ipynb) | — | 30 | `abc` | no claim to judge" in page


def test_the_robustness_page_shows_the_full_profile_apart_counting_every_measured_seed() -> None:
    assert "No full-profile report has been committed yet" in site.full_profile_markdown(None, [])
    full = {"profile": "full", "seeds": [0, 1, 2], "torch": "2.13", "machine": "H200", "made_at": "now",
            "chapters": {"ch04_frequency_principle": {"seeds": {s: {"seconds": 90.0, "device": "CPU" if s < "2" else
                                                                    "NVIDIA H200"} for s in "012"},
                                                      "passed": 2, "runs": 3},
                         "ch07_phase_diagram": {"seeds": {s: {"seconds": 40.0} for s in "012"},
                                                "passed": 3, "runs": 3}},
            "claims": {"ch04.fp-order": {"figure": "图4.7", "exploration": False, "seeds": {
                "0": {"passed": True, "margin": 0.3, "unit": "rel"}, "1": {"passed": False, "margin": -0.2, "unit": "rel"},
                "2": {"passed": True, "margin": 0.1, "unit": "rel"}}},
                "ch07.sw-sign": {"figure": "图7.4", "exploration": False,
                                 "seeds": {s: {"passed": True, "margin": 1.0, "unit": "sd"} for s in "012"}},
                "ch07.thin": {"figure": "图7.5", "exploration": False, "meets_standard": False, "complete": True,
                              "seeds": {s: {"passed": True, "margin": 0.0, "unit": "rel"} for s in "012"}}}}
    page = site.full_profile_markdown(full, stale=["ch07_phase_diagram"])
    assert "Seeds 0–2, torch 2.13, H200" in page
    assert ("| [ch04_frequency_principle](ch04_frequency_principle.ipynb) | 0–2 | CPU 0, 1 · NVIDIA H200 2 | 2/3 | "
            "90 (90–90) | ✘ fails on 1 of 3 seeds |") in page
    assert "| 0–2 | — | 3/3 | 40 (40–40) | stale |" in page
    assert "not judged yet" not in page
    assert "results cache" in page  # the seconds of a run judged again from the cache are said to be such
    assert "| `ch04.fp-order` | 图4.7 | 2/3 | -0.2 rel |" in page and "ch07.sw-sign" not in page
    assert "| `ch07.thin` | 图7.5 | 3/3 (thin: median margin below the thin line) | +0 rel |" in page  # holds, thinly
    assert "full 配置（书中的规模）" in site.full_profile_markdown(None, [], "zh")
    # a claim changed after its seeds 0-19 were seen waits for fresh seeds: the chapter's status names them
    full["claims"]["ch04.redone"] = {"chapter": "ch04_frequency_principle", "figure": "图4.3", "exploration": False,
                                     "complete": False, "validation_seeds": list(range(500, 520)),
                                     "seeds": {s: {"passed": True, "margin": 0.5, "unit": "rel"} for s in "012"}}
    page = site.full_profile_markdown(full, stale=["ch07_phase_diagram"])
    assert ("| ✘ fails on 1 of 3 seeds · not judged yet: 1 of its claims, on seeds 500–504 still to run |") in page
    assert "尚未判定" in site.full_profile_markdown(full, [], "zh")
    full["seeds"] += [500, 501, 502, 503]  # one fresh seed left: said in the singular
    full["chapters"]["ch04_frequency_principle"]["seeds"].update({s: {"seconds": 90.0}
                                                                 for s in ("500", "501", "502", "503")})
    assert "not judged yet: 1 of its claims, on seed 504 still to run |" in site.full_profile_markdown(full, [])
    # explorations only (chapter 13's second part): nothing to hold, so neither a ✔ nor a pass count; the range of
    # the seconds shows a run judged again from the cache beside computed ones
    full["chapters"]["ch07_phase_diagram"]["seeds"] = {"0": {"seconds": 5.0, "claims": 0},
                                                       "1": {"seconds": 8000.0, "claims": 0},
                                                       "2": {"seconds": 8400.0, "claims": 0}}
    page = site.full_profile_markdown(full, stale=[])
    assert "| 0–2 | — | — | 8000 (5–8400) | no claim to judge |" in page


def test_a_chapter_page_shows_each_claims_robustness_under_its_verdict(tmp_path: Path) -> None:
    nb = nbformat.read(_notebook(tmp_path / "ch04_x.ipynb", "T", [
        f"{PASS_MARK} [图4.7] low frequencies converge first\n  measured: …\n",
        f"{PASS_MARK} [图4.9] a claim the report does not know\n"]), as_version=4)
    report = {"claims": {"ch04.fp-order": {"chapter": "ch04_x", "figure": "图4.7", "exploration": False,
                                           "text": "low frequencies converge first", "kind": "identity",
                                           "validation_seeds": list(range(500, 520)), "passed": 19, "runs": 20,
                                           "complete": True}}}
    assert site.annotate_claims(nb, report, [], "en") == 1
    lines = nb.cells[1].outputs[0]["text"].splitlines()
    assert lines[1] == ("  ↳ robustness: holds on 19 of 20 seeds (500–519); an identity: it verifies the mathematics, it "
                        "reproduces no phenomenon") and lines[2].startswith("  measured")
    assert "↳" not in nb.cells[1].outputs[1]["text"]
    # the count on the chapter's other seeds is shown beside it (ch12.working-memory: 20/20 on 0–19, 15/20 on 500–519)
    report["claims"]["ch04.fp-order"]["other_seeds"] = {"passed": 15, "runs": 20}
    nb = nbformat.read(tmp_path / "ch04_x.ipynb", as_version=4)
    site.annotate_claims(nb, report, [], "en")
    assert nb.cells[1].outputs[0]["text"].splitlines()[1].startswith(
        "  ↳ robustness: holds on 19 of 20 seeds (500–519); on its chapter's other seeds 15 of 20; an identity")
    nb = nbformat.read(tmp_path / "ch04_x.ipynb", as_version=4)
    site.annotate_claims(nb, report, ["ch04_x"], "zh")
    assert nb.cells[1].outputs[0]["text"].splitlines()[1].startswith("  ↳ 稳健性：报告早于本章当前的代码")


def test_stage_writes_a_complete_source_folder(tmp_path: Path) -> None:
    chapters = tmp_path / "chapters"
    chapters.mkdir()
    _notebook(chapters / "ch04_frequency_principle.ipynb", "Chapter 4", [f"{PASS_MARK} [图4.2] a claim\n"])
    source = tmp_path / "src"
    notebooks = site.stage(source, chapters_dir=chapters)
    assert [p.name for p in notebooks] == ["ch04_frequency_principle.ipynb"]
    for name in ("_config.yml", "_toc.yml", "intro.md", "glossary.md", "claims.md", "robustness.md", "_chapter_map.md",
                 "coverage.md",
                 "_ext/companion_book.py", "ch04_frequency_principle.ipynb"):
        assert (source / name).is_file(), name
    assert "[图4.2] a claim" not in (source / "claims.md").read_text(encoding="utf-8")  # reformatted as a table
    assert "| 图4.2 | a claim | ✔ holds |" in (source / "claims.md").read_text(encoding="utf-8")


def test_widget_outputs_become_the_kernel_free_explorer_or_a_note(tmp_path: Path) -> None:
    grids = tmp_path / "explorers"
    (grids / "ch96_demo").mkdir(parents=True)
    points = [{"key": f"{i},{j}", "file": f"{2 * i + j:03d}.png", "values": {}} for i in range(3) for j in range(2)]
    for p in points:
        Image.new("RGB", (16, 8), "white").save(grids / "ch96_demo" / p["file"])  # a real PNG: its width is read
    grid = {"title": "Demo </script> explorer", "start": "1,0", "defaults": {"a": 2.0, "kind": "sin", "n": 5},
            "controls": {"a": {"label": "rate a", "values": [1.0, 2.0, 4.0]},
                         "kind": {"label": "kind", "values": ["sin", "cos"]}}, "points": points}
    (grids / "ch96_demo" / "grid.json").write_text(json.dumps(grid))
    nb = nbformat.v4.new_notebook()
    for _ in range(2):
        cell = nbformat.v4.new_code_cell("explorer")
        cell.outputs = [nbformat.v4.new_output("display_data", data={
            site.WIDGET_VIEW: {"model_id": "abc", "version_major": 2, "version_minor": 0}, "text/plain": "VBox()"})]
        nb.cells.append(cell)
    source = tmp_path / "src"
    assert site.add_static_explorers(nb, "ch96_demo", source, grids) == 1
    first, second = (c.outputs[0]["data"]["text/html"] for c in nb.cells)
    assert all(site.WIDGET_VIEW not in c.outputs[0]["data"] for c in nb.cells)
    assert 'type="range" data-control="a"' in first and 'value="1"' in first  # starts at the grid's "start"
    assert '<option value="0" selected>sin</option>' in first and "rate a ∈ {1, 2, 4}" in first
    assert "the other controls at n = 5" in first and "JupyterLab" in first
    assert "</script> explorer" not in first.split("application/json")[1]  # the JSON cannot close its script
    assert sorted(p.name for p in (source / "_static" / "explorers" / "ch96_demo").iterdir()) == \
        sorted(p["file"] for p in points)
    assert second == site.live_only_note()  # a second panel of the chapter: live only, said so
    assert site.add_static_explorers(nb, "ch95_none", source, grids) == 0  # no grid: nothing placed


def test_the_site_drops_nbvals_markers_and_keeps_the_code() -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("# NBVAL_CHECK_OUTPUT\nshow(check(run))  # a claim\n"),
                nbformat.v4.new_markdown_cell("# NBVAL_CHECK_OUTPUT is what nbval reads")]
    site.drop_test_markers(nb)
    assert [c.source for c in nb.cells] == ["show(check(run))  # a claim\n", "# NBVAL_CHECK_OUTPUT is what nbval reads"]


def test_local_extension_drops_duplicate_inline_scripts() -> None:
    """Sphinx 7 lists one inline script under the file names None and ''; the extension keeps one."""
    javascript = pytest.importorskip("sphinx.builders.html._assets")._JavaScript
    spec = importlib.util.spec_from_file_location("companion_book", site.BOOK_DIR / "_ext" / "companion_book.py")
    extension = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(extension)
    thebe = 'const THEBE_JS_URL = "x"'
    scripts = [javascript("doctools.js"), javascript(None, body=thebe), javascript("copybutton.js"),
               javascript("", body=thebe), javascript("", body="let other = 1")]
    context = {"script_files": scripts}
    extension.drop_duplicate_scripts(None, "intro", "page.html", context, None)
    assert context["script_files"] == [scripts[0], scripts[1], scripts[2], scripts[4]]


def test_a_warning_fails_the_build(tmp_path: Path) -> None:
    """The build is strict: a chapter with a broken cross-reference makes it fail, naming the problem."""
    require_jupyter_book()
    chapters = tmp_path / "chapters"
    chapters.mkdir()
    nb = _notebook(chapters / "ch04_frequency_principle.ipynb", "Chapter 4", [])
    broken = nbformat.read(nb, as_version=4)
    broken.cells.append(nbformat.v4.new_markdown_cell("See {ref}`no-such-label`."))
    nbformat.write(broken, nb)
    with pytest.raises(RuntimeError, match="no-such-label"):
        site.build(tmp_path / "out", chapters_dir=chapters)


def test_book_builds_without_warnings_and_holds_every_page(tmp_path_factory: pytest.TempPathFactory) -> None:
    start = time.perf_counter()
    html = built_site(tmp_path_factory)  # strict: any Sphinx warning fails the build
    print(f"book build: {time.perf_counter() - start:.1f} s")
    notebooks = site.chapter_notebooks()
    for page in ["index", "intro", "coverage", "claims", "glossary", *(p.stem for p in notebooks)]:
        assert (html / f"{page}.html").is_file(), f"{page}.html was not built"
    coverage_page = (html / "coverage.html").read_text(encoding="utf-8")
    assert all(f.id in coverage_page for f in catalog.FIGURES), "the coverage page misses a figure"
    claims_page = _words(re.sub(r"<[^>]+>", " ", (html / "claims.html").read_text(encoding="utf-8")))
    for notebook in notebooks:
        for record in site.read_claims(notebook):
            assert _words(record.text) in claims_page, f"the claims page misses {record}"
    landing = (html / "intro.html").read_text(encoding="utf-8")
    for chapter in catalog.CHAPTERS:  # the chapter map lists every chapter, linking the built ones
        assert chapter.slug in landing, f"the chapter map misses {chapter.slug}"
    for notebook in notebooks:
        assert f'href="{notebook.stem}.html"' in landing, f"the landing page does not link {notebook.stem}"
    assert "频率原则" in (html / "glossary.html").read_text(encoding="utf-8")
    for page in html.glob("*.html"):
        remote = re.findall(r'<(?:script|link)[^>]+(?:src|href)="(https?://[^"]+)"', page.read_text(encoding="utf-8"))
        assert not remote, f"{page.name} loads {remote}: the site must work offline"


def test_the_chinese_edition_holds_every_page_in_chinese_with_a_switch(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Both editions are built by the one command: every English page has its Chinese counterpart under zh/, in
    Chinese, with the verdicts of the same run, and each page links to the same page of the other edition."""
    html = built_site(tmp_path_factory)
    zh = html / "zh"
    notebooks = site.chapter_notebooks()
    for page in ["index", "intro", "coverage", "claims", "robustness", "glossary", *(p.stem for p in notebooks)]:
        english, chinese = html / f"{page}.html", zh / f"{page}.html"
        assert chinese.is_file(), f"zh/{page}.html was not built"
        text = chinese.read_text(encoding="utf-8")
        if page != "index":  # index.html only redirects to intro.html
            assert 'lang="zh-CN"' in text or "lang=\"zh_CN\"" in text or 'lang="zh"' in text, f"zh/{page}.html: lang"
            assert f'href="../{page}.html"' in text, f"zh/{page}.html has no switch to the English page"
            assert f'href="zh/{page}.html"' in english.read_text(encoding="utf-8"), f"{page}.html has no switch"
            body = re.sub(r"<[^>]+>", " ", text.split('id="main-content"', 1)[-1])
            cjk = sum("\u4e00" <= ch <= "\u9fff" for ch in body)
            assert cjk > 100, f"zh/{page}.html holds only {cjk} Chinese characters"
    for notebook in notebooks:  # the same run's verdicts, in Chinese words
        text = (zh / f"{notebook.stem}.html").read_text(encoding="utf-8")
        for record in site.read_claims(notebook):
            assert html_lib.escape(i18n.tr(record.text, "zh"), quote=False) in text or \
                i18n.tr(record.text, "zh") in html_lib.unescape(text), f"zh/{notebook.stem}: {record.text}"
        assert "CLAIM HOLDS" not in text and "Worked solution: run" not in text, notebook.stem


def test_the_solution_toggles_are_labelled_in_the_editions_language() -> None:
    assert [site.solution_label(label, "zh") for label in ("Exercise 4", "Open questions", "习题5, 10")] == \
        ["练习 4", "开放问题", "习题5, 10"]
    assert site.solution_label("Exercise 4") == "Exercise 4"


def test_the_chinese_edition_gives_its_search_the_books_terms_whole(tmp_path: Path) -> None:
    """Sphinx's Chinese search cuts text with jieba, which would cut 频率原则 or 嵌入原则 into pieces: the zh edition's
    configuration hands it the glossary's terms (and book/zh/search_words.txt's) as a user dictionary."""
    words = site.search_words(site.BOOK_DIR / "zh")
    assert {"频率原则", "嵌入原则", "平坦性", "乐观估计", "凝聚现象", "矩阵", "双下降", "彩票假设"} <= set(words)
    assert all(re.fullmatch(r"[\u3400-\u9fff0-9]+", w) for w in words), words
    for language in site.EDITIONS:
        source = tmp_path / language
        source.mkdir()
        shutil.copy(site.BOOK_DIR / "_config.yml", source)
        if language != "en":
            shutil.copytree(site.BOOK_DIR / site.EDITIONS[language], source, dirs_exist_ok=True)
        site._configure_edition(source, language)
        config = yaml.safe_load((source / "_config.yml").read_text(encoding="utf-8"))["sphinx"]["config"]
        if language == "zh":
            dictionary = Path(config["html_search_options"]["dict"])
            assert dictionary.read_text(encoding="utf-8").split() == words
        else:
            assert "html_search_options" not in config
