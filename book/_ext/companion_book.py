"""Local Sphinx extension of the companion's book: the language switch and lecture view's button, and no inline
script twice.

**Language switch.** The site has two editions built from one run (``companion.tools.site``): English at the root,
Chinese under ``zh/``, with the same page names.  Each page gets a link to the same page of the other edition at its
top; the staged ``_config.yml`` sets ``companion_switch`` (the other edition's folder relative to this one, and the
link's words).  Beside it, a button that turns the lecture view on and off (``book/_static/lecture.js``: no sidebars,
the page and its explorer as wide as the window, remembered across pages); ``companion_lecture`` holds its words.

**Duplicate scripts.**
Sphinx 7 adds some inline ``<script>`` bodies (e.g. sphinx-thebe's ``THEBE_JS_URL`` declaration) to
a page twice, once with the file name ``None`` and once with ``''``, and the browser then logs
"Identifier … has already been declared".  Sphinx 8 fixed this (sphinx-doc/sphinx#13402) but
Jupyter Book 1.x pins Sphinx 7, so this extension keeps only the first of identical script entries
of each page.
"""

from __future__ import annotations

import html
from typing import Any


def _script_key(script: Any) -> tuple:
    """What makes two script entries the same tag (an inline script's file name is None or '')."""
    attributes = getattr(script, "attributes", {}) or {}
    filename = getattr(script, "filename", script) or ""
    return (str(filename), tuple(sorted((k, str(v)) for k, v in attributes.items())))


def drop_duplicate_scripts(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    """``html-page-context`` handler: keep the first of identical script entries."""
    scripts = context.get("script_files")
    if not scripts:
        return
    seen: set[tuple] = set()
    unique = []
    for script in scripts:
        key = _script_key(script)
        if key not in seen:
            seen.add(key)
            unique.append(script)
    context["script_files"] = unique


def add_language_switch(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    """``html-page-context`` handler: above the page's body, the lecture view's button (``companion_lecture``: its
    words in this edition; ``_static/lecture.js`` makes it work) and a link to ``pagename`` in the other edition."""
    switch, lecture = app.config.companion_switch, app.config.companion_lecture
    if not (switch or lecture) or "body" not in context:
        return
    button = link = ""
    if lecture:
        button = (f'<button type="button" class="companion-lecture-toggle" aria-pressed="false" '
                  f'title="{html.escape(lecture["title"], quote=True)}">{html.escape(lecture["label"])}</button> ')
    if switch:
        link = (f'<a href="{switch["href"]}{pagename}.html" hreflang="{"zh" if switch["label"] == "中文版" else "en"}">'
                f'{switch["label"]}</a>')
    context["body"] = (f'<p class="companion-language-switch" style="text-align:right;margin:0">{button}{link}</p>'
                       + context["body"])


def setup(app: Any) -> dict[str, Any]:
    app.add_config_value("companion_switch", None, "html")
    app.add_config_value("companion_lecture", None, "html")
    app.connect("html-page-context", drop_duplicate_scripts, priority=900)
    app.connect("html-page-context", add_language_switch)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
