"""The whole book as a PDF per edition (``python -m companion book --pdf``), printed from the site the browser tests
build once per session.

Cost: no build of its own; printing both editions (36 pages of the site, about 640 A4 pages) takes Chromium about
2–4 minutes on a 2-core machine — the chapter pages' figures are most of it.
"""

from __future__ import annotations

import re
import time
import unicodedata
from pathlib import Path

import pytest
from browser_support import built_site, require_chromium

from companion import solutions
from companion.tools import site


def _plain(text: str) -> str:
    """Text as compared here: ligatures (ﬀ) spelled out, no white space (a title may wrap anywhere in the PDF)."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


def _first_code_lines(slug: str, language: str) -> dict[str, str]:
    """Per worked solution of chapter ``slug`` with code, its first line of code: printed only where its toggle was
    opened."""
    found = {}
    for key, worked in solutions.for_chapter(slug).items():
        code = re.findall(r"```[^\n]*\n(.*?)```", worked.markdown(language), re.S)
        lines = [line for block in code for line in block.splitlines()
                 if line.strip() and not line.lstrip().startswith("#")]
        if lines:
            found[str(key)] = lines[0]
    return found


@pytest.fixture(scope="module")
def pdfs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    require_chromium()
    pytest.importorskip("pypdf", reason="the PDF's pages are joined with pypdf: pip install -e '.[dev]'")
    from companion.tools.pdf import book_pdfs

    html = built_site(tmp_path_factory)
    start = time.perf_counter()
    printed = book_pdfs(html, tmp_path_factory.mktemp("pdf"))
    print(f"book PDFs: {time.perf_counter() - start:.0f} s")
    return {path.stem.rsplit("-", 1)[-1]: path for path in printed}


@pytest.mark.parametrize("language", site.EDITIONS)
def test_the_books_pdf_holds_every_chapter_with_its_solutions_open(language: str, pdfs: dict[str, Path]) -> None:
    """Every chapter's title opens its part of the PDF (a bookmark a page of the site, in the book's order), and one
    chapter's part holds the code of each of its worked solutions (their toggles printed open).  Only those pages'
    text is read: pypdf takes about 0.2 s a page."""
    from pypdf import PdfReader

    assert pdfs[language].name == f"companion-{language}.pdf"
    reader = PdfReader(pdfs[language])
    notebooks = site.chapter_notebooks()
    assert 5 * len(notebooks) <= len(reader.pages) <= 60 * len(notebooks), f"{len(reader.pages)} pages"
    starts = [(item.title, reader.get_destination_page_number(item)) for item in reader.outline]
    titles = [site.edition_title(notebook, language) for notebook in notebooks]
    assert [title for title, _ in starts if title in titles] == titles, f"bookmarks: {starts}"
    first_page = {title: page for title, page in starts}
    missing = [title for title in titles if _plain(title) not in _plain(reader.pages[first_page[title]].extract_text())]
    assert not missing, f"the {language} PDF's text lacks the chapter titles {missing}"

    ends = dict(zip((title for title, _ in starts), [page for _, page in starts[1:]] + [len(reader.pages)]))
    with_solutions = [(ends[title] - first_page[title], notebook.stem, title)
                      for notebook, title in zip(notebooks, titles) if notebook.stem in solutions.CHAPTERS]
    _, slug, title = min(with_solutions)  # the shortest chapter that has worked solutions
    text = _plain(" ".join(reader.pages[n].extract_text() for n in range(first_page[title], ends[title])))
    closed = {key: line for key, line in _first_code_lines(slug, language).items() if _plain(line) not in text}
    assert _first_code_lines(slug, language) and not closed, \
        f"{slug}: worked solutions printed closed (their code is missing): {closed}"
