"""The reproduction report page (``reproduced/index.html``) in a real browser: claims, verdicts, figures inline.

A tiny chapter written for the test is run through the same runner as ``reproduce``; its page is served on
127.0.0.1 and opened in headless Debian Chromium with the network blocked.
"""

from __future__ import annotations

from browser_support import PageLog, launch, require_chromium, serve

from companion.tools import reproduction, runner

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
    require_chromium()
    from playwright.sync_api import sync_playwright

    source = tmp_path / "ch95_report.py"
    source.write_text(CHAPTER)
    out = tmp_path / "reproduced"
    run = runner.run_chapter(source, out, seed=0)
    reproduction.write_index([run], out, "quick", 0)
    with serve(out) as url, sync_playwright() as playwright:
        browser = launch(playwright)
        page = browser.new_page()
        log = PageLog(page)
        page.goto(f"{url}/index.html")
        assert page.locator("#summary").inner_text() == "1 of 2 claims hold; 0 of 1 chapters ran clean."
        holds = page.locator("[data-claim='ch95.holds']")
        assert holds.locator("b").inner_text() == "holds" and "one = 1 < two = 2" in holds.inner_text()
        assert page.locator("[data-claim='ch95.fails'] b").inner_text() == "FAILS"
        image = holds.locator("img")
        assert image.count() == 1 and image.get_attribute("src") == "ch95_report/fig3.2.png"
        assert image.evaluate("img => img.complete && img.naturalWidth > 100")  # the PNG loaded
        assert "torch" in page.locator("#run").inner_text()
        page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
        browser.close()
    assert log.errors == []
