"""The book site in a real browser: every page shows its title, its figures and its math, without errors.

The site is built once per session (warnings are errors), served on 127.0.0.1 and opened in
headless Debian Chromium; a page that fails leaves a full-page screenshot under pytest's tmp dir
(``screenshots/site``): taking one of every page would cost about 3 s a page.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from browser_support import PageLog, chromium_browser, site_url  # noqa: F401 - site_url is a fixture

from companion.kit import grids
from companion.kit.i18n import tr
from companion.tools import precompute, site

NOTEBOOKS = site.chapter_notebooks()
INLINE_MATH = re.compile(r"\$[^$\n]+\$")  # $…$ or $$…$$ in a markdown cell: MyST renders it as math
PAGES = ["intro", *(p.stem for p in NOTEBOOKS), "coverage", "claims", "robustness", "glossary"]


@pytest.fixture(scope="module")
def browser(site_url: str) -> Iterator[Any]:
    with chromium_browser() as browser:
        yield browser


def _heading(markdown: Path) -> str:
    return next(line[2:].strip() for line in markdown.read_text(encoding="utf-8").splitlines() if line.startswith("# "))


def _expected(page: str, language: str = "en") -> tuple[str, int, bool]:
    """The page's title in ``language``'s edition, how many figures its notebook drew, and whether its text has math."""
    if page not in {p.stem for p in NOTEBOOKS}:
        pages = site.BOOK_DIR / site.EDITIONS[language]
        titles = {"intro": _heading(pages / "intro.md"), "glossary": _heading(pages / "glossary.md"),
                  "claims": tr("Claims checked by the notebooks", language),
                  "coverage": tr("Coverage: every figure of chapters 4–15", language),
                  "robustness": tr("Robustness over seeds", language)}
        return titles[page], 0, page == "glossary"
    path = next(p for p in NOTEBOOKS if p.stem == page)
    nb = nbformat.read(path, as_version=4)
    outputs = [out.get("data", {}) for cell in nb.cells for out in cell.get("outputs", [])]
    # PNG figures, plus the <img> of an HTML animation player (ch11) when no PNG stands in for it
    figures = sum(1 if "image/png" in data else str(data.get("text/html", "")).count("<img") for data in outputs)
    figures += grids.read_grid(page) is not None  # the kernel-free explorer's picture
    has_math = any(cell.cell_type == "markdown" and INLINE_MATH.search(cell.source) for cell in nb.cells)
    return site.edition_title(path, language), figures, has_math


def _check_page(tab: Any, page: str, language: str) -> None:
    title, n_figures, has_math = _expected(page, language)
    assert tab.locator("main h1").first.inner_text().rstrip("#¶ \n") == title
    assert tab.title().startswith(title)

    images = tab.locator("main .cell_output img")
    assert images.count() == n_figures, f"{page}: {images.count()} figures shown, the notebook has {n_figures}"
    for i in range(n_figures):
        images.nth(i).scroll_into_view_if_needed()
        size = images.nth(i).evaluate("img => [img.complete, img.naturalWidth, img.getBoundingClientRect().width]")
        assert size[0] and size[1] > 0 and size[2] > 0, f"{page}: figure {i} did not load ({size})"

    n_math = tab.locator("main .math").count()
    assert n_math > 0 or not has_math, f"{page}: its notebook has math but the page shows none"
    if n_math:
        tab.wait_for_function("window.MathJax && MathJax.startup && MathJax.startup.promise")
        tab.evaluate("MathJax.startup.promise")  # resolves once the page is typeset
        untypeset = tab.locator("main .math:not(:has(mjx-container))")
        assert untypeset.count() == 0, f"{page}: math not rendered: {untypeset.first.inner_text()}"
        assert tab.locator("main mjx-merror").count() == 0, f"{page}: MathJax reports a TeX error"

    # code and printed outputs wrap at the page width (book/_static/companion.css): nothing scrolls sideways
    wide = tab.evaluate("""() => [...document.querySelectorAll('main pre')]
        .filter(pre => pre.scrollWidth > pre.clientWidth + 1).map(pre => pre.innerText.slice(0, 80))""")
    assert not wide, f"{page}: {len(wide)} code or output blocks run off the page's width, e.g. {wide[0]!r}"
    assert "NBVAL_" not in tab.locator("main").inner_text(), f"{page}: shows nbval's test markers"
    raw = tab.evaluate(RAW_TEX_SCRIPT)
    assert not raw, f"{page}: TeX left unrendered (closed toggles included), e.g. {raw[:3]}"


#: The page's text outside math, code and outputs — worked solutions in closed toggles included — and in it any
#: ``$`` or TeX command a reader would see raw (MyST leaves ``$$…$$`` inside a sentence untypeset).
RAW_TEX_SCRIPT = r"""() => {
  const copy = document.querySelector('main').cloneNode(true);
  copy.querySelectorAll('.math, mjx-container, pre, code, script, style').forEach(e => e.remove());
  const text = copy.textContent, found = [];
  const raw = /\$|\\(frac|dfrac|tfrac|begin|end|mathrm|mathbf|big|Big|int|sum|qquad|quad|\(|\)|\[|\])/g;
  for (let m; (m = raw.exec(text)) !== null && found.length < 5;)
    found.push(text.slice(Math.max(0, m.index - 30), m.index + 30).replace(/\s+/g, ' '));
  return found;
}"""


def _url(site_url: str, page: str, language: str) -> str:
    folder = site.EDITIONS[language]
    return f"{site_url}/{folder + '/' if folder else ''}{page}.html"


@pytest.mark.parametrize("language", site.EDITIONS)
@pytest.mark.parametrize("page", PAGES)
def test_page_renders_title_figures_and_math(page: str, language: str, site_url: str, browser: Any,
                                              tmp_path_factory: pytest.TempPathFactory) -> None:
    tab = browser.new_page(viewport={"width": 1280, "height": 900})
    log = PageLog(tab)
    tab.goto(_url(site_url, page, language), wait_until="load")
    try:
        _check_page(tab, page, language)
        switch = tab.locator(".companion-language-switch a")  # to the same page of the other edition
        assert switch.count() == 1 and switch.get_attribute("href").endswith(f"{page}.html")
        assert not log.errors, f"{page}: " + "\n".join(log.errors)
    except AssertionError:
        shots = tmp_path_factory.getbasetemp() / "screenshots" / "site"
        shots.mkdir(parents=True, exist_ok=True)
        tab.screenshot(path=str(shots / f"{language}-{page}.png"), full_page=True)
        raise
    finally:
        tab.close()


# Every chapter's explorer in the English edition; the Chinese edition's explorers run the same script over the same
# pictures with Chinese labels, so one of them stands for all (its pages are all opened by the test above).
@pytest.mark.parametrize("page, language", [*((page, "en") for page in sorted(precompute.EXPLORERS)),
                                            ("ch07_phase_diagram", "zh")])
def test_the_kernel_free_explorer_changes_its_figure_when_a_control_moves(page: str, language: str, site_url: str,
                                                                          browser: Any) -> None:
    tab = browser.new_page(viewport={"width": 1280, "height": 900})
    log = PageLog(tab)
    tab.goto(_url(site_url, page, language), wait_until="load")
    explorer = tab.locator(".companion-explorer")
    assert explorer.count() == 1, f"{page}: {explorer.count()} kernel-free explorers"
    assert tab.locator("script[type='application/vnd.jupyter.widget-view+json']").count() == 0  # no empty widget
    image = explorer.locator("img.companion-explorer-figure")
    image.scroll_into_view_if_needed()
    before = image.get_attribute("src")
    assert before.endswith(".png") and image.evaluate("img => img.complete && img.naturalWidth > 0")
    for control in explorer.locator("[data-control]").all():  # move each control to another value in turn
        n = control.evaluate("c => c.tagName === 'SELECT' ? c.options.length : Number(c.max) + 1")
        current = int(control.input_value())
        control.evaluate("(c, v) => { c.value = String(v); c.dispatchEvent(new Event('input')); }", (current + 1) % n)
        after = image.get_attribute("src")
        assert after != before, f"{page}: moving {control.get_attribute('data-control')} left the figure as it was"
        tab.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=image.element_handle())
        before = after
    assert "JupyterLab" in explorer.inner_text()  # says how to get the live version
    tab.close()
    assert not log.errors, f"{page}: " + "\n".join(log.errors)


#: Terms of the book our Chinese pages use, each with the chapter page that introduces it (the glossary's and
#: ``book/zh/search_words.txt``'s words: Sphinx's Chinese search must index each whole, not cut into pieces).
SEARCH_TERMS = {
    "频率原则": "ch04_frequency_principle", "谱偏差": "ch04_frequency_principle",
    "多尺度神经网络": "ch05_multiscale_networks", "相图": "ch07_phase_diagram", "线性区域": "ch07_phase_diagram",
    "凝聚区域": "ch07_phase_diagram", "临界区域": "ch07_phase_diagram", "凝聚": "ch08_condensation",
    "初始凝聚": "ch08_condensation", "嵌入原则": "ch09_embedding_principle", "宽度相似性": "ch09_embedding_principle",
    "临界点": "ch09_embedding_principle", "乐观估计": "ch10_optimistic_estimate", "模型秩": "ch10_optimistic_estimate",
    "乐观样本量": "ch10_optimistic_estimate", "平坦性": "ch11_flatness", "稳定边缘": "ch11_flatness",
    "锐度": "ch11_flatness", "渐进锐化": "ch11_flatness", "锚函数": "ch12_anchor_functions",
    "阅读理解": "ch12_anchor_functions", "任务泛化": "ch12b_composite_tasks", "复杂度控制": "ch13_complexity_control",
    "初始化率": "ch13_complexity_control", "顿悟": "ch14_more_phenomena", "双下降": "ch14_more_phenomena",
    "上下文学习": "ch14_more_phenomena", "彩票假设": "ch14_more_phenomena", "隐式梯度下降": "ch14_more_phenomena",
    "雅可比迭代": "ch15_pinns", "物理驱动的神经网络": "ch15_pinns",
}


def test_the_chinese_search_finds_each_terms_chapter(site_url: str, browser: Any,
                                                     tmp_path_factory: pytest.TempPathFactory) -> None:
    """Each term, searched on the Chinese edition's search page with Sphinx's own search code, finds its chapter,
    and no other chapter page ranks above it; one search is also typed the reader's way (``search.html?q=…``)."""
    tab = browser.new_page(viewport={"width": 1280, "height": 900})
    log = PageLog(tab)
    tab.goto(f"{site_url}/zh/search.html", wait_until="load")
    tab.wait_for_function("typeof Search !== 'undefined' && Search._index !== null")
    missed = {}
    for term, chapter in SEARCH_TERMS.items():
        results = tab.evaluate("q => Search._performSearch(...Search._parseQuery(q)).map(r => [r[0], r[4]])", term)
        scores = {}
        for page, score in results:
            scores[page] = max(score, scores.get(page, score))
        chapters = {p: s for p, s in scores.items() if re.match(r"ch\d\d[a-z]?_", p)}
        if chapter not in chapters or chapters[chapter] < max(chapters.values()):
            missed[term] = (chapter, sorted(chapters.items(), key=lambda kv: -kv[1])[:4])
    assert not missed, f"the Chinese search misses {len(missed)} of {len(SEARCH_TERMS)} terms' chapters: {missed}"

    tab.goto(f"{site_url}/zh/search.html?q=凝聚", wait_until="load")
    found = tab.locator("#search-results a[href*='ch08_condensation.html']").first
    found.wait_for(timeout=20_000)
    shots = tmp_path_factory.getbasetemp() / "screenshots" / "site"
    shots.mkdir(parents=True, exist_ok=True)
    tab.screenshot(path=str(shots / "zh-search.png"))
    tab.close()
    assert not log.errors, "\n".join(log.errors)


#: A word of Latin letters (three or more): an English word, a code name or a symbol's name.
_LATIN_WORD = re.compile(r"[A-Za-z]{3,}")


@pytest.mark.parametrize("page", sorted(precompute.EXPLORERS))
def test_the_chinese_explorers_pictures_and_toggles_speak_chinese(page: str, site_url: str, browser: Any) -> None:
    """On a Chinese chapter page the explorer's picture is described (alt text) in the words its controls show, never
    in the English edition's, whatever the controls are set to; the worked solutions' toggles read 解答 (练习 N /
    开放问题 / 习题N).  The picture itself may hold English (figures stay bilingual by design)."""
    tab = browser.new_page(viewport={"width": 1280, "height": 900})
    log = PageLog(tab)
    tab.goto(_url(site_url, page, "zh"), wait_until="load")
    explorer = tab.locator(".companion-explorer")
    image = explorer.locator("img.companion-explorer-figure")
    shown = explorer.locator("p b").inner_text() + " " + explorer.locator(".companion-explorer-controls").inner_text()
    words = set(_LATIN_WORD.findall(shown))  # what the reader sees beside the picture: labels, menus, readouts
    controls = explorer.locator("[data-control]").all()
    for control in [None, *controls]:  # as loaded, then each control moved to another value
        if control is not None:
            n = control.evaluate("c => c.tagName === 'SELECT' ? c.options.length : Number(c.max) + 1")
            control.evaluate("(c, v) => { c.value = String(v); c.dispatchEvent(new Event('input')); }",
                             (int(control.input_value()) + 1) % n)
        alt = image.get_attribute("alt")
        assert alt.startswith(explorer.locator("p b").inner_text()), f"{page}: alt text {alt!r} lacks the title"
        english = set(_LATIN_WORD.findall(alt)) - words
        assert not english, f"{page}: the picture's alt text {alt!r} holds English words {sorted(english)}"
    summaries = [s.strip() for s in tab.locator("main details summary").all_inner_texts()]
    solutions = [s for s in summaries if "解答" in s or "Solution" in s]
    notebook = nbformat.read(next(p for p in NOTEBOOKS if p.stem == page), as_version=4)
    worked = sum(len(site._WORKED_LINE.findall(c.source)) for c in notebook.cells if c.cell_type == "markdown")
    assert len(solutions) == worked, f"{page}: {len(solutions)} worked solution toggles, its notebook has {worked}"
    wrong = [s for s in solutions if not re.fullmatch(r"解答 \((练习 \d+|开放问题|习题[\d, /]+)\)", s)]
    assert not wrong, f"{page}: toggles not in Chinese: {wrong}"
    tab.close()
    assert not log.errors, f"{page}: " + "\n".join(log.errors)


#: Every table of the page's content column that a reader would see cut off: wider than the column and not inside a box
#: of its own that scrolls sideways (``overflow-x: auto`` or ``scroll``), fits the column and is no taller than the
#: window (a taller box keeps its scroll bar below the screen: the table looks cut at the column's edge).
TABLE_OVERFLOW_SCRIPT = r"""() => {
  const column = document.querySelector('main article') || document.querySelector('main');
  const right = column.getBoundingClientRect().right - parseFloat(getComputedStyle(column).paddingRight) + 1;
  const width = Math.round(right - 1 - column.getBoundingClientRect().left - parseFloat(getComputedStyle(column).paddingLeft));
  const cut = [];
  for (const table of column.querySelectorAll('table')) {
    const box = table.getBoundingClientRect();
    if (box.right <= right) continue;
    let scroller = null;
    for (let e = table.parentElement; e && e !== column.parentElement; e = e.parentElement)
      if (['auto', 'scroll'].includes(getComputedStyle(e).overflowX)) { scroller = e; break; }
    const ok = scroller && scroller.getBoundingClientRect().right <= right
      && scroller.getBoundingClientRect().height <= window.innerHeight;
    if (!ok)
      cut.push(`${Math.round(box.width)} px wide, ${Math.round(box.height)} px tall table in a `
               + `${width} px column: `
               + table.innerText.slice(0, 30).replace(/\s+/g, ' '));
  }
  return cut;
}"""


@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("language", site.EDITIONS)
def test_no_table_is_cut_off_at_a_laptops_or_a_phones_width(width: int, language: str, site_url: str,
                                                            browser: Any) -> None:
    """The robustness tables were 733 and 862 px wide in a 688 px column at 1280 px, their scroll bar below the
    screen: every table must fit the column or scroll sideways in a box of its own that the window holds whole."""
    tab = browser.new_page(viewport={"width": width, "height": 900})
    cut = {}
    for page in PAGES:
        tab.goto(_url(site_url, page, language), wait_until="load")
        found = tab.evaluate(TABLE_OVERFLOW_SCRIPT)
        if found:
            cut[page] = found
    tab.close()
    assert not cut, f"tables cut off at {width} px: {cut}"


@pytest.mark.parametrize("language", site.EDITIONS)
def test_a_figure_and_an_explorers_picture_enlarge_on_a_click(language: str, site_url: str, browser: Any) -> None:
    """图4.7 was shown at half its drawn size (tick labels about 5 px) and no figure could be enlarged: a click on a
    figure, or on the explorer's picture, shows it over the page far larger, and a click or Escape closes it."""
    tab = browser.new_page(viewport={"width": 1280, "height": 900})
    tab.goto(_url(site_url, "ch04_frequency_principle", language), wait_until="load")
    for selector in ("main .cell_output img", "main img.companion-explorer-figure"):
        picture = tab.locator(selector).first
        picture.scroll_into_view_if_needed()
        shown = picture.evaluate("img => img.getBoundingClientRect().width")
        assert picture.get_attribute("title") == {"en": "Click to enlarge", "zh": "点击放大"}[language]
        picture.click()
        enlarged = tab.locator(".companion-enlarged img")
        assert enlarged.count() == 1, f"{selector}: a click enlarged nothing"
        assert enlarged.get_attribute("src") == picture.evaluate("img => img.currentSrc || img.src")
        width = enlarged.evaluate("img => img.getBoundingClientRect().width")
        # 1.5× larger, or the window's width for a figure already shown over the right margin (book/_static/widen.js)
        assert width >= min(1.5 * shown, 0.95 * 1280), f"{selector}: enlarged to {width:.0f} px from {shown:.0f} px"
        tab.keyboard.press("Escape") if selector.endswith("figure") else tab.locator(".companion-enlarged").click()
        assert tab.locator(".companion-enlarged").count() == 0, f"{selector}: the enlarged picture did not close"
    tab.close()


@pytest.mark.parametrize("page", ["ch04_frequency_principle", "ch14_more_phenomena"])
def test_each_worked_solution_shows_the_output_of_its_code(page: str, site_url: str, browser: Any) -> None:
    """Issue #43: a worked solution's toggle, opened, shows its code and then what that code printed when it ran once in
    the notebook (:mod:`companion.tools.worked`), its first line as kept."""
    from companion import solutions
    from companion.tools import worked

    kept = worked.read_results(page)["results"]
    tab = browser.new_page(viewport={"width": 1280, "height": 900})
    log = PageLog(tab)
    tab.goto(_url(site_url, page, "en"), wait_until="load")
    toggles = tab.locator("main details.sd-dropdown")
    shown = 0
    for i in range(toggles.count()):
        toggle = toggles.nth(i)
        label = re.search(r"\((.+)\)\s*$", toggle.locator("summary").inner_text().strip())[1]
        solution = solutions.find(solutions.for_chapter(page), label)
        toggle.locator("summary").click()
        output = toggle.locator(".companion-solution-output")
        if not solution.code.strip():
            assert output.count() == 0, f"{page} {label}: an output without code"
            continue
        assert output.is_visible(), f"{page} {label}: its code's output is not shown"
        first = next(o["text"] for o in kept[solution.label]["outputs"] if "text" in o).strip().splitlines()[0]
        assert first.strip() in output.inner_text(), f"{page} {label}: {first!r} not in {output.inner_text()[:200]!r}"
        box, code = output.bounding_box(), toggle.locator("pre").first.bounding_box()
        assert box["y"] > code["y"], f"{page} {label}: the output is not below the code"
        shown += 1
    assert shown == sum(bool(s.code.strip()) for s in solutions.for_chapter(page).values()) >= 5
    tab.close()
    assert not log.errors, f"{page}: " + "\n".join(log.errors)
