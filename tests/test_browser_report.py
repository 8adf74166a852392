"""The reproduction report page (``reproduced/index.html``) in a real browser: claims, verdicts, figures inline.

A tiny chapter written for the test is run through the same runner as ``reproduce``; its page is served on
127.0.0.1 and opened in headless Debian Chromium with the network blocked.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from types import SimpleNamespace

import nbformat
import pytest
from browser_support import PageLog, launch, require_chromium, serve

from companion.tools import reproduction, runner, site


@contextmanager
def report_page(tmp_path, name: str, text: str):
    """Run the chapter ``text`` (saved as ``name``.py) through the runner, write its report page and open it in
    Chromium: yields (the run, the page, its console log); the browser is closed afterwards."""
    require_chromium()
    from playwright.sync_api import sync_playwright

    source = tmp_path / f"{name}.py"
    source.write_text(text)
    out = tmp_path / "reproduced"
    run = runner.run_chapter(source, out, seed=0)
    reproduction.write_index([run], out, "quick", 0)
    with serve(out) as url, sync_playwright() as playwright:
        browser = launch(playwright)
        page = browser.new_page()
        log = PageLog(page)
        page.goto(f"{url}/index.html")
        try:
            yield run, page, log
        finally:
            browser.close()

CHAPTER = '''# %% [markdown]
# ## 1. Two lines (图3.2)

# %%
import matplotlib.pyplot as plt
from companion.kit.claims import ClaimSpec, compare, show
plt.plot([0, 1], [0, 1]); plt.show()

# %%
# NBVAL_CHECK_OUTPUT
show(ClaimSpec("ch95.holds", "图3.2", "one is less than two").judge(compare("one", 1, "<", "two", 2)))
show(ClaimSpec("ch95.fails", "图3.2", "two is less than one").judge(compare("two", 2, "<", "one", 1)))
'''


def test_the_report_page_shows_each_claim_with_its_verdict_and_figure(tmp_path):
    with report_page(tmp_path, "ch95_report", CHAPTER) as (_, page, log):
        assert page.locator("#summary").inner_text() == "1 of 2 claims hold; 0 of 1 chapters ran clean."
        holds = page.locator("[data-claim='ch95.holds']")
        assert holds.locator("b").inner_text() == "holds" and "one = 1 < two = 2" in holds.inner_text()
        assert page.locator("[data-claim='ch95.fails'] b").inner_text() == "FAILS"
        image = holds.locator("img")
        assert image.count() == 1 and image.get_attribute("src") == "ch95_report/fig3.2.png"
        assert image.evaluate("img => img.complete && img.naturalWidth > 100")  # the PNG loaded
        assert "torch" in page.locator("#run").inner_text()
        page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
    assert log.errors == []


RANGES = '''# %% [markdown]
# ## 1. A process in three figures (图3.1–3.3)

# %%
import matplotlib.pyplot as plt
from companion.kit.claims import ClaimSpec, compare, show
plt.plot([0, 1], [0, 1]); plt.show()

# %%
show(ClaimSpec("ch94.middle", "图3.2", "the middle figure of a range").judge(compare("one", 1, "<", "two", 2)))

# %% [markdown]
# ## 2. A list (图3.5, 3.6, 表3.1)

# %%
plt.plot([0, 1], [1, 0]); plt.show()
show(ClaimSpec("ch94.listed", "图3.6", "a figure listed without its 图").judge(compare("one", 1, "<", "two", 2)))
show(ClaimSpec("ch94.table", "表3.1", "a table listed after figures").judge(compare("one", 1, "<", "two", 2)))
'''


def test_a_claim_sits_beside_the_figure_it_names_in_a_range_or_a_list(tmp_path):
    """A section headed "(图3.1–3.3)" draws 图3.2 too, and "(图3.5, 3.6, 表3.1)" draws 图3.6 and 表3.1: a claim on any
    of them shows that section's figure (the report once read such headings as their first figure alone)."""
    with report_page(tmp_path, "ch94_ranges", RANGES) as (run, page, log):
        assert [f.path.name for f in run.figures] == ["fig3.1_3.2_3.3.png", "fig3.5_3.6_tab3.1.png"]
        for claim, figure in (("ch94.middle", "fig3.1_3.2_3.3.png"), ("ch94.listed", "fig3.5_3.6_tab3.1.png"),
                              ("ch94.table", "fig3.5_3.6_tab3.1.png")):
            image = page.locator(f"[data-claim='{claim}'] img")
            assert image.count() == 1, f"{claim}: {image.count()} figures beside it"
            assert image.get_attribute("src") == f"ch94_ranges/{figure}"
            assert image.evaluate("img => img.complete && img.naturalWidth > 100")
    assert log.errors == []


@pytest.mark.parametrize("text, items", [
    ("## 1. The condensation process (图8.1–8.4)", ("图8.1", "图8.2", "图8.3", "图8.4")),
    ("(图8.9–8.11)", ("图8.9", "图8.10", "图8.11")),
    ("(图12.9, 12.8, 12.11)", ("图12.9", "图12.8", "图12.11")),
    ("图13.5/13.6", ("图13.5", "图13.6")), ("(图13.7, 图13.8)", ("图13.7", "图13.8")),
    ("## 3. Table 7.1 — where", ("表7.1",)), ("图7.5(a) and 图7.6", ("图7.5", "图7.6")),
    ("图4.7 at 0.51×, 2.5 px", ("图4.7",)), ("图4.7, 0.51×", ("图4.7",)), ("§12.5.1, (11.10)", ()),
])
def test_book_items_reads_ranges_and_lists_whole(text, items):
    assert reproduction.book_items(text) == items


def test_every_claim_naming_a_figure_sits_beside_one_on_the_committed_notebooks(tmp_path):
    """The reproduction page of the committed notebooks (their figures and verdicts, as ``reproduce`` would save them):
    every claim that names a book figure or table shows a figure, the one drawn under that name where there is one."""
    runs, missing, misplaced = [], [], []
    for notebook in site.chapter_notebooks():
        nb = nbformat.read(notebook, as_version=4)
        figures = reproduction.save_figures(nb, tmp_path / notebook.stem, notebook.stem)
        claims = [SimpleNamespace(id=f"{notebook.stem}.{i}", figure=r.figure, text=r.text, passed=r.holds,
                                  exploration=r.exploration, identity=r.identity, smoke=False, thin=False, margin=None,
                                  unit="", conditions=[], measured={}, judged=not r.exploration,
                                  reproduces=not (r.exploration or r.identity))
                  for i, r in enumerate(site.read_claims(notebook))]
        nbformat.write(nb, tmp_path / notebook.name)  # the executed notebook beside its figures, as ``reproduce`` does
        runs.append(SimpleNamespace(slug=notebook.stem, seconds=0.0, claims=claims, figures=figures, error=None,
                                    notebook=tmp_path / notebook.name, stopped=None, ok=True, not_run=[], identities=()))
    page = reproduction.write_index(runs, tmp_path, "quick", 0).read_text(encoding="utf-8")
    blocks = dict(re.findall(r"<div class='claim' data-claim='([^']+)'>(.*?)</div>", page, re.S))
    for run in runs:
        drawn = {item for f in run.figures for item in f.book_items}
        for claim in run.claims:
            named = reproduction.book_items(claim.figure)
            shown = re.findall(r'<img src="[^"]+" alt="([^"]*)"', blocks[claim.id])
            if named and not shown:
                missing.append(f"{claim.figure} {claim.text[:40]}")
            elif set(named) & drawn and not any(set(named) & set(alt.split(", ")) for alt in shown):
                misplaced.append(f"{claim.figure} beside {shown}")
    assert not missing, f"{len(missing)} claims name a figure but show none: {missing}"
    assert not misplaced, f"{len(misplaced)} claims sit beside another figure than the one they name: {misplaced}"


def test_the_page_log_forgives_an_abandoned_picture_load_and_nothing_else(tmp_path):
    """An explorer's picture whose ``src`` changes before it loaded is a request Chromium aborts (net::ERR_ABORTED):
    that made the zh explorer test fail once in CI (ch07, picture 013) although nothing was wrong.  Aborted picture
    loads are forgiven; an aborted script and a missing picture (HTTP 404) are still errors."""
    require_chromium()
    from playwright.sync_api import sync_playwright

    (tmp_path / "index.html").write_text('<img src="gone.png"><img src="missing.png"><script src="gone.js"></script>')
    with serve(tmp_path) as url, sync_playwright() as playwright:
        browser = launch(playwright)
        page = browser.new_page()
        log = PageLog(page)
        page.route("**/gone.*", lambda route: route.abort("aborted"))
        page.goto(f"{url}/index.html", wait_until="load")
        page.wait_for_timeout(200)
        browser.close()
    assert not any("gone.png" in e for e in log.errors), log.errors
    assert any("gone.js" in e and "ERR_ABORTED" in e for e in log.errors), log.errors
    assert any("HTTP 404" in e and "missing.png" in e for e in log.errors), log.errors
