"""A PDF of the whole book, per edition: ``python -m companion book --pdf``.

Each edition of the built site (:mod:`companion.tools.site`) is printed page by page in headless Chromium
(:mod:`companion.tools.chromium`, the browser the tests use; offline, served from ``127.0.0.1``), in the book's reading
order — from the landing page along each page's ``<link rel="next">``, the order of the table of contents — with every
worked solution's toggle open and the math typeset; the pages' PDFs are joined with pypdf into
``OUT/_build/pdf/companion-en.pdf`` and ``companion-zh.pdf``, one bookmark per page.  A page prints as the theme's
print style lays it out (no sidebars); each explorer shows the picture of its starting point.
"""

from __future__ import annotations

import importlib.util
import io
import re
from pathlib import Path
from typing import Any

from companion.tools import chromium, site

#: Open every toggle (the worked solutions are sphinx-design dropdowns: ``<details>``); wait for the math and pictures.
PREPARE = """async () => {
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
  await Promise.all([...document.images].map(img => img.complete ? null :
      new Promise(done => { img.addEventListener('load', done); img.addEventListener('error', done); })));
}"""
#: The page's title as its heading shows it (without the heading's "#" link).
TITLE = "() => { const h = document.querySelector('main h1'); return h ? h.innerText.replace(/[#¶\\s]+$/, '') : document.title; }"
MARGIN = {"top": "14mm", "bottom": "14mm", "left": "12mm", "right": "12mm"}


def _first_page(edition: Path) -> str:
    """The landing page of a built edition: where its ``index.html`` redirects (Jupyter Book's root page)."""
    index = (edition / "index.html").read_text(encoding="utf-8")
    redirect = re.search(r"""http-equiv=["']?refresh["']?\s+content=["'][^"']*url=([^"'\s>]+)""", index, re.I)
    return redirect[1] if redirect else "index.html"


def print_edition(browser: Any, base_url: str, edition: Path, folder: str, out: Path) -> Path:
    """Print the edition built in ``edition`` (served at ``base_url/folder``) page by page into one PDF, ``out``."""
    from pypdf import PdfReader, PdfWriter

    writer, tab = PdfWriter(), browser.new_page()
    url, seen = f"{base_url}/{folder}{_first_page(edition)}", set()
    while url and url not in seen:
        seen.add(url)
        tab.goto(url, wait_until="load")
        tab.evaluate(PREPARE)
        pages = PdfReader(io.BytesIO(tab.pdf(format="A4", print_background=True, margin=MARGIN)))
        start = len(writer.pages)
        writer.append(pages)
        writer.add_outline_item(title=tab.evaluate(TITLE), page_number=start)
        url = tab.evaluate("() => { const next = document.querySelector('link[rel=next]'); return next && next.href; }")
    tab.close()
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("wb") as stream:
        writer.write(stream)
    return out


def book_pdfs(html: Path, out: Path) -> list[Path]:
    """Print both editions of the site built in ``html`` (the English at its root, the others in their folders,
    :data:`site.EDITIONS`) to ``out/companion-<language>.pdf``; return the PDFs' paths."""
    problem = chromium.missing()
    if problem:
        raise RuntimeError(f"the PDF is printed by headless Chromium: {problem[0]} is not installed ({problem[1]})")
    if importlib.util.find_spec("pypdf") is None:
        raise RuntimeError("the PDF's pages are joined with pypdf: pip install -e '.[dev]'")
    from playwright.sync_api import sync_playwright

    written = []
    with chromium.serve(html) as base_url, sync_playwright() as playwright:
        browser = chromium.launch(playwright)
        try:
            for language, folder in site.EDITIONS.items():
                prefix = f"{folder}/" if folder else ""
                written.append(print_edition(browser, base_url, html / folder, prefix,
                                             out / f"companion-{language}.pdf"))
        finally:
            browser.close()
    return written
