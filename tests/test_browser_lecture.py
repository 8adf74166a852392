"""The site's lecture view in a real browser: its button hides the sidebars and widens the page and its explorer, the
choice holds on the next page, and the Chinese edition labels it in Chinese (the site built once per session)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from browser_support import PageLog, chromium_browser, site_url  # noqa: F401 - site_url is a fixture

from companion.kit.i18n import tr

CHAPTER, OTHER = "ch10_optimistic_estimate", "ch04_frequency_principle"
SIDEBARS = (".bd-sidebar-primary", ".bd-sidebar-secondary")


@pytest.fixture(scope="module")
def browser(site_url: str) -> Iterator[Any]:
    with chromium_browser() as browser:
        yield browser


def _widths(tab: Any) -> dict[str, float]:
    """The explorer picture's and the article's shown widths, and each sidebar's (0 when hidden)."""
    return tab.evaluate("""sidebars => {
      const width = e => e ? e.getBoundingClientRect().width : 0;
      const found = {explorer: width(document.querySelector('.companion-explorer img')),
                     article: width(document.querySelector('main article'))};
      for (const s of sidebars) found[s] = width(document.querySelector(s));
      return found;
    }""", list(SIDEBARS))


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_lecture_view_hides_the_sidebars_widens_the_explorer_and_is_remembered(
        language: str, site_url: str, browser: Any, tmp_path_factory: pytest.TempPathFactory) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})  # its own storage: starts in the plain view
    tab = context.new_page()
    log = PageLog(tab)
    base = f"{site_url}/{'zh/' if language == 'zh' else ''}"
    tab.goto(f"{base}{CHAPTER}.html", wait_until="load")
    button = tab.locator(".companion-lecture-toggle")
    assert button.count() == 1 and button.inner_text().strip() == tr("Lecture view", language)
    plain = _widths(tab)
    assert all(plain[s] > 100 for s in SIDEBARS), f"the plain view shows both sidebars: {plain}"

    button.click()
    lecture = _widths(tab)
    assert button.get_attribute("aria-pressed") == "true"
    assert all(lecture[s] == 0 for s in SIDEBARS), f"the lecture view still shows a sidebar: {lecture}"
    assert lecture["explorer"] > 1.3 * plain["explorer"], f"the explorer is not wider: {plain} → {lecture}"
    assert lecture["article"] > 1.3 * plain["article"], f"the page is not wider: {plain} → {lecture}"
    shots = tmp_path_factory.getbasetemp() / "screenshots" / "lecture"
    shots.mkdir(parents=True, exist_ok=True)
    tab.locator(".companion-explorer").scroll_into_view_if_needed()
    tab.screenshot(path=str(shots / f"{language}-{CHAPTER}.png"))

    tab.goto(f"{base}{OTHER}.html", wait_until="load")  # the next page opens in the lecture view too
    assert all(_widths(tab)[s] == 0 for s in SIDEBARS), "the lecture view was forgotten on the next page"
    tab.locator(".companion-lecture-toggle").click()  # and the button turns it off again
    assert all(_widths(tab)[s] > 100 for s in SIDEBARS)
    context.close()
    assert not log.errors, "\n".join(log.errors)
