"""The kernel-free explorers of the book site in a real browser (both editions): every control changes the picture
or is disabled with a note saying when it applies; sliders run through their values in ascending order, their readouts
in the picture's units; explorer pictures are drawn at twice the pixels they are shown at; and the text of every figure
of every page (explorer pictures included) is at least 9 px tall at a 1280 px window.

The site is built once per session (:func:`browser_support.built_site`) and opened in headless Chromium.  Pictures
are compared by the SHA-256 of their bytes, fetched by the page itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from browser_support import PageLog, chromium_browser, site_url  # noqa: F401 - site_url is a fixture

from companion.kit import grids
from companion.kit.i18n import tr
from companion.tools import precompute, site

#: The controls found doing nothing at some settings (issue #43): control, the other control, a value of it where
#: the control does nothing, and one where it does.
KNOWN_INERT = {"ch05_multiscale_networks": ("sigma", "kind", "mscale", "fourier"),
               "ch15_pinns": ("width", "method", "jacobi", "pinn")}

#: The state of the page's explorer: per control its name, index (into the grid's values), number of values, whether it is disabled, the
#: text of its label (note included), the other control's indices where it applies; and the SHA-256 of the picture shown.
STATE_SCRIPT = r"""async root => {
  const image = root.querySelector('img.companion-explorer-figure');
  const bytes = await (await fetch(image.src)).arrayBuffer();
  const hash = [...new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))]
    .map(b => b.toString(16).padStart(2, '0')).join('');
  const controls = [...root.querySelectorAll('[data-control]')].map(c => ({
    name: c.dataset.control, disabled: c.disabled,
    index: c.dataset.order ? JSON.parse(c.dataset.order)[Number(c.value)] : Number(c.value),
    n: c.tagName === 'SELECT' ? c.options.length : Number(c.max) + 1, label: c.closest('label').innerText,
    applies: c.dataset.applies ? JSON.parse(c.dataset.applies) : {}}));
  return {controls, picture: hash};
}"""


@pytest.fixture(scope="module")
def browser(site_url: str) -> Iterator[Any]:
    with chromium_browser() as browser:
        yield browser


def _url(site_url: str, page: str, language: str) -> str:
    folder = site.EDITIONS[language]
    return f"{site_url}/{folder + '/' if folder else ''}{page}.html"


def _move(explorer: Any, name: str, index: int) -> None:
    """Set control ``name`` to the grid's value ``index`` as a reader would (a slider's position is its rank)."""
    explorer.locator(f"[data-control='{name}']").evaluate("""(c, v) => {
      c.value = String(c.dataset.order ? JSON.parse(c.dataset.order).indexOf(v) : v);
      c.dispatchEvent(new Event('input')); }""", index)


#: Every explorer in the English edition; in the Chinese one (the same grids and script, its own words) the pages with
#: a control that is disabled somewhere, where the note's wording is what differs.  Both editions in full took ~100 s.
EDITION_PAGES = [(page, "en") for page in sorted(precompute.EXPLORERS)] + \
    [(page, language) for page in sorted(KNOWN_INERT) for language in site.EDITIONS if language != "en"]


@pytest.mark.parametrize(("page", "language"), EDITION_PAGES)
def test_every_explorer_control_changes_the_picture_or_is_disabled_saying_when_it_applies(
        page: str, language: str, site_url: str, browser: Any) -> None:
    """ch05's Fourier σ changed nothing unless model = fourier (the page starts at mscale), ch15's width nothing for
    method = jacobi.  Each control, moved through every value (with the other controls where it applies), changes the
    picture at every move; a control is disabled exactly where the grid says it changes nothing, and its label then
    says when it applies."""
    tab = browser.new_page(viewport={"width": 1280, "height": 900})
    log = PageLog(tab)
    tab.goto(_url(site_url, page, language), wait_until="load")
    explorer = tab.locator(".companion-explorer")
    root = explorer.element_handle()
    start = tab.evaluate(STATE_SCRIPT, root)
    controls = {c["name"]: c for c in start["controls"]}
    if page in KNOWN_INERT:  # disabled, with its note, where it changes nothing; enabled where it does
        name, other, idle, active = KNOWN_INERT[page]
        values = precompute.EXPLORERS[page].grid[other]
        _move(explorer, other, list(values).index(idle))
        state = {c["name"]: c for c in tab.evaluate(STATE_SCRIPT, root)["controls"]}
        note = tr("applies when {condition}", language).split("{")[0].strip()
        assert state[name]["disabled"] and note in state[name]["label"], f"{page}: {name} at {other} = {idle}: {state[name]}"
        _move(explorer, other, list(values).index(active))
        assert not tab.evaluate(STATE_SCRIPT, root)["controls"][list(controls).index(name)]["disabled"]
        _move(explorer, other, controls[other]["index"])
    unchanged = []
    for name, control in controls.items():
        for other, allowed in control["applies"].items():  # where it applies
            _move(explorer, other, allowed[0])
        pictures = []
        for index in range(control["n"]):
            _move(explorer, name, index)
            state = tab.evaluate(STATE_SCRIPT, root)
            assert not state["controls"][list(controls).index(name)]["disabled"]
            pictures.append(state["picture"])
        unchanged += [f"{name}: {i - 1} → {i}" for i in range(1, len(pictures)) if pictures[i] == pictures[i - 1]]
        for other, c in controls.items():  # back to the page's start
            _move(explorer, other, c["index"])
    disabled = {c["name"] for c in tab.evaluate(STATE_SCRIPT, root)["controls"] if c["disabled"]}
    expected = {KNOWN_INERT[page][0]} if page == "ch05_multiscale_networks" else set()  # the page starts at mscale
    tab.close()
    assert not unchanged, f"{page}: moves that left the picture as it was: {unchanged}"
    assert disabled == expected, f"{page}: disabled at the start: {disabled}"
    assert not log.errors, f"{page}: " + "\n".join(log.errors)



@pytest.mark.parametrize("language", site.EDITIONS)
def test_every_explorer_slider_runs_through_its_values_in_ascending_order(language: str, site_url: str,
                                                                           browser: Any) -> None:
    """ch11's keep probability ran 1 → 0.7 from left to right: on every explorer page each slider's readout, read at
    each position from left to right, is the grid's values in ascending order."""
    tab = browser.new_page(viewport={"width": 1280, "height": 900})
    wrong = {}
    for page, spec in sorted(precompute.EXPLORERS.items()):
        tab.goto(_url(site_url, page, language), wait_until="load")
        for slider in tab.locator(".companion-explorer input[type='range']").all():
            name = slider.get_attribute("data-control")
            shown = []
            for position in range(int(slider.get_attribute("max")) + 1):
                slider.evaluate("(c, v) => { c.value = String(v); c.dispatchEvent(new Event('input')); }", position)
                shown.append(float(tab.locator(f".companion-explorer output[data-for='{name}']").inner_text()))
            if shown != sorted(float(v) for v in spec.grid[name]):
                wrong[f"{page} {name}"] = shown
    tab.close()
    assert not wrong, f"sliders not in ascending order of their values: {wrong}"


def test_the_condensation_explorers_time_slider_reads_t_as_its_picture_does(site_url: str, browser: Any) -> None:
    """ch08's "snapshot" slider read 0–40 while its picture says t = 0…600: it reads the training time t = η·step."""
    tab = browser.new_page(viewport={"width": 1280, "height": 900})
    tab.goto(_url(site_url, "ch08_condensation", "en"), wait_until="load")
    slider = tab.locator(".companion-explorer input[data-control='t']")
    assert "time t" in slider.locator("xpath=..").inner_text()
    readouts = []
    for position in range(int(slider.get_attribute("max")) + 1):
        slider.evaluate("(c, v) => { c.value = String(v); c.dispatchEvent(new Event('input')); }", position)
        readouts.append(tab.locator(".companion-explorer output[data-for='t']").inner_text())
    assert readouts == ["0", "150", "300", "600"]
    assert tab.locator("img.companion-explorer-figure").get_attribute("alt").endswith("time t = 600")
    tab.close()


@pytest.mark.parametrize("page", sorted(precompute.EXPLORERS))
def test_an_explorers_picture_has_twice_the_pixels_it_is_shown_with(page: str, site_url: str, browser: Any) -> None:
    """The explorer pictures were drawn at 80 dpi, shown at their pixel size (axis text about 8–9 px): each has at least
    twice as many pixels across as the CSS pixels it is shown in, at a laptop's and at a phone's width."""
    for width in (1280, 390):
        tab = browser.new_page(viewport={"width": width, "height": 900})
        tab.goto(_url(site_url, page, "en"), wait_until="load")
        image = tab.locator("img.companion-explorer-figure")
        tab.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=image.element_handle())
        natural, shown = image.evaluate("img => [img.naturalWidth, img.getBoundingClientRect().width]")
        tab.close()
        assert natural >= 2 * shown, f"{page} at {width} px: {natural} px drawn, shown {shown:.0f} px wide"


def _text_px(language: str) -> dict:
    """The notebooks' figures are drawn at figure.dpi with their text at font.size (tick and axis labels) —
    :func:`companion.kit.plots.use_style` — the explorers' pictures at the dpi their grid.json records."""
    import matplotlib as mpl

    from companion.kit import plots

    with mpl.rc_context():
        plots.use_style()
        return {"notebook": mpl.rcParams["font.size"] * mpl.rcParams["figure.dpi"] / 72,
                "explorer": {slug: mpl.rcParams["font.size"] * (grids.read_grid(slug) or {}).get("dpi", 80) / 72
                             for slug in precompute.EXPLORERS}}


#: Each figure of the page: its pixel width, the width it is shown at, whether it is an explorer's picture, its right edge
#: and how many of its pixels a box around it that does not let it overflow hides (scrolled out of view).
FIGURES_SCRIPT = """() => [...document.querySelectorAll('main .cell_output img')].map(img => {
  const right = img.getBoundingClientRect().right;
  let hidden = 0;
  for (let e = img.parentElement; e && e.tagName !== 'BODY'; e = e.parentElement)
    if (getComputedStyle(e).overflowX !== 'visible') hidden = Math.max(hidden, right - e.getBoundingClientRect().right);
  return {natural: img.naturalWidth, shown: img.getBoundingClientRect().width,
          explorer: img.classList.contains('companion-explorer-figure'), right, hidden};
})"""


@pytest.mark.parametrize("language", site.EDITIONS)
def test_every_figures_text_is_at_least_9_px_at_a_laptops_width(language: str, site_url: str, browser: Any) -> None:
    """图4.7 was shown at 0.51× of its pixels (tick labels about 5 px), figures of ch08 and ch12 near that: at a 1280 px
    window, every figure of every chapter page is shown so that its text — matplotlib's font size in points × the
    figure's dpi / 72, times the shown / drawn width — is at least 9 px, and no figure runs past the window or is cut
    off by the box around it (the explorers' pictures, widened, were: their right 190–230 px scrolled out of view)."""
    sizes = _text_px(language)
    tab = browser.new_page(viewport={"width": 1280, "height": 900})
    small, n = [], 0
    for notebook in site.chapter_notebooks():
        tab.goto(_url(site_url, notebook.stem, language), wait_until="load")
        tab.wait_for_function("[...document.querySelectorAll('main .cell_output img')].every(i => i.complete)")
        tab.wait_for_timeout(100)  # widen.js lays the loaded figures out
        for i, figure in enumerate(tab.evaluate(FIGURES_SCRIPT)):
            n += 1
            px = sizes["explorer"][notebook.stem] if figure["explorer"] else sizes["notebook"]
            text = figure["shown"] / figure["natural"] * px
            if text < 9 or figure["right"] > 1280 or figure["hidden"] > 1:
                small.append(f"{notebook.stem} figure {i}: text {text:.1f} px, {figure['natural']} px drawn, "
                             f"{figure['shown']:.0f} px shown, right edge at {figure['right']:.0f} px, "
                             f"{figure['hidden']:.0f} px hidden by its box")
    tab.close()
    assert n > 90 and not small, f"{len(small)} of {n} figures with text under 9 px, or cut, at 1280 px: {small}"
