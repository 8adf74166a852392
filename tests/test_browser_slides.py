"""Lecture slides (``python -m companion slides``) in a real browser: the deck of one small chapter (ch10: four
figures and an explorer of 12 pictures) is written, served on 127.0.0.1 and driven with the keyboard.

Writing the deck takes about 8 s of CPU (it reads the committed notebook; nothing runs), the browser part about 5 s.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from browser_support import PageLog, chromium_browser, serve

from companion.__main__ import main
from companion.kit import grids
from companion.tools import catalog, reproduction, site, slides

CHAPTER = catalog.find("ch10")


def _book_figures(notebook: Path) -> int:
    """How many figures the notebook drew under a book figure's name (its section's heading names 图/表 numbers)."""
    nb = nbformat.read(notebook, as_version=4)
    return sum(bool(items) and "image/png" in out.get("data", {})
               for cell, items in zip(nb.cells, reproduction.section_items(nb)) for out in cell.get("outputs", []))


@pytest.fixture(scope="module")
def deck(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("slides") / CHAPTER.slug
    assert main(["slides", "ch10", "--out", str(folder)]) == 0
    return folder


def test_the_deck_ships_revealjs_and_loads_nothing_from_elsewhere(deck: Path) -> None:
    page = (deck / "index.html").read_text(encoding="utf-8")
    assert (deck / "reveal" / "reveal.js").is_file() and (deck / "reveal" / "LICENSE").is_file()
    assert slides.reveal_version() in (deck / "reveal" / "reveal.js").read_text(encoding="utf-8")[:200]
    remote = re.findall(r'(?:src|href)="((?:https?:)?//[^"]+)"', page)
    assert not remote, f"the deck loads {remote}: it must work offline"
    for link in re.findall(r'(?:src|href)="([^"#]+)"', page):
        assert (deck / link).is_file(), f"the deck links {link}, which it does not hold"
    assert page.count('class="companion-figure-slide"') == _book_figures(CHAPTER.notebook)
    assert page.count('class="companion-explorer"') == (grids.read_grid(CHAPTER.slug) is not None)
    for claim in site.read_claims(CHAPTER.notebook):  # every claim's verdict stands under a figure …
        if reproduction.book_items(claim.figure):
            assert f"[{html.escape(claim.figure)}] {html.escape(claim.text)}" in page, claim
    assert "✔ holds" in page and "◇ exploration" in page
    # each claim's robustness line: its count over the seeds, or, while the report predates the chapter's code, that
    assert re.search(r"robustness: (holds on \d+ of \d+ seeds|the report predates this chapter(?:'|&#x27;)s code)", page)
    assert site.edition_title(CHAPTER.notebook) in page


def test_the_chinese_deck_speaks_chinese(tmp_path: Path) -> None:
    page = slides.write_deck("ch10", tmp_path / "zh", "zh").read_text(encoding="utf-8")
    assert site.edition_title(CHAPTER.notebook, "zh") in page and 'lang="zh-CN"' in page
    assert "✔ 成立" in page and "✔ holds" not in page and "Lecture slides" not in page


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium_browser() as browser:
        yield browser


def test_the_keyboard_moves_through_the_slides_and_the_explorer_works_inside_one(
        deck: Path, browser: Any, tmp_path_factory: pytest.TempPathFactory) -> None:
    shots = tmp_path_factory.getbasetemp() / "screenshots" / "slides"
    shots.mkdir(parents=True, exist_ok=True)
    with serve(deck) as url:
        tab = browser.new_page(viewport={"width": 1280, "height": 800})
        log = PageLog(tab)
        tab.goto(f"{url}/index.html", wait_until="load")
        tab.wait_for_function("window.Reveal && Reveal.isReady()")
        total = tab.evaluate("Reveal.getTotalSlides()")
        assert total == 1 + _book_figures(CHAPTER.notebook) + 1  # title, the figures, the explorer
        assert tab.evaluate("Reveal.getIndices().h") == 0
        for index in range(1, total):
            tab.keyboard.press("ArrowRight")
            tab.wait_for_function("i => Reveal.getIndices().h === i", arg=index)
            current = tab.locator(".reveal .slides > section.present")
            for image in current.locator("img").all():
                assert image.evaluate("img => img.complete && img.naturalWidth > 0"), f"slide {index}: a broken picture"
            if current.locator(".companion-explorer").count():
                break
        else:
            pytest.fail("no slide holds the explorer")
        tab.wait_for_timeout(900)  # the slide's transition
        tab.screenshot(path=str(shots / "explorer-slide.png"))
        image = current.locator("img.companion-explorer-figure")
        slider = current.locator("input[type=range]").first
        before, start = image.get_attribute("src"), int(slider.input_value())
        slider.focus()  # a focused slider takes the arrow keys: the deck stays on this slide
        tab.keyboard.press("ArrowRight" if start < int(slider.get_attribute("max")) else "ArrowLeft")
        assert int(slider.input_value()) != start
        assert image.get_attribute("src") != before, "moving the explorer's slider left its picture as it was"
        tab.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=image.element_handle())
        assert tab.evaluate("Reveal.getIndices().h") == index
        tab.screenshot(path=str(shots / "explorer-slide-moved.png"))
        tab.close()
    assert not log.errors, "\n".join(log.errors)
