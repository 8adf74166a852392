"""Local Sphinx extension of the companion's book: drop the inline scripts Sphinx 7 emits twice.

Sphinx 7 adds some inline ``<script>`` bodies (e.g. sphinx-thebe's ``THEBE_JS_URL`` declaration) to
a page twice, once with the file name ``None`` and once with ``''``, and the browser then logs
"Identifier … has already been declared".  Sphinx 8 fixed this (sphinx-doc/sphinx#13402) but
Jupyter Book 1.x pins Sphinx 7, so this extension keeps only the first of identical script entries
of each page.
"""

from __future__ import annotations

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


def setup(app: Any) -> dict[str, Any]:
    app.connect("html-page-context", drop_duplicate_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
