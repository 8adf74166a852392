"""The kernel-free explorers of the book site in a real browser (both editions): every control changes the picture
or is disabled with a note saying when it applies.

The site is built once per session (:func:`browser_support.built_site`) and opened in headless Chromium.  Pictures
are compared by the SHA-256 of their bytes, fetched by the page itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from browser_support import PageLog, chromium_browser, site_url  # noqa: F401 - site_url is a fixture

from companion.kit.i18n import tr
from companion.tools import precompute, site

#: The controls found doing nothing at some settings (issue #43): control, the other control, a value of it where
#: the control does nothing, and one where it does.
KNOWN_INERT = {"ch05_multiscale_networks": ("sigma", "kind", "mscale", "fourier"),
               "ch15_pinns": ("width", "method", "jacobi", "pinn")}

#: The state of the page's explorer: per control its name, index, number of values, whether it is disabled, the
#: text of its label (note included), the other control's indices where it applies; and the SHA-256 of the picture shown.
STATE_SCRIPT = r"""async root => {
  const image = root.querySelector('img.companion-explorer-figure');
  const bytes = await (await fetch(image.src)).arrayBuffer();
  const hash = [...new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))]
    .map(b => b.toString(16).padStart(2, '0')).join('');
  const controls = [...root.querySelectorAll('[data-control]')].map(c => ({
    name: c.dataset.control, index: Number(c.value), disabled: c.disabled,
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
    explorer.locator(f"[data-control='{name}']").evaluate(
        "(c, v) => { c.value = String(v); c.dispatchEvent(new Event('input')); }", index)


@pytest.mark.parametrize("language", site.EDITIONS)
@pytest.mark.parametrize("page", sorted(precompute.EXPLORERS))
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

