"""Keep the Chinese edition in step with the English source: what each chapter must translate, and a check.

A chapter's translatable English (see :mod:`companion.kit.i18n`) is

* every markdown cell of ``chapters/<slug>.py``;
* every string literal passed as the reader-facing text of one of :data:`TEXT_ARGUMENTS` in the chapter's own
  modules — ``companion/experiments/chNN_*.py``, ``companion/solutions/chNN.py`` — and in the chapter's code
  cells: claim sentences, explorer titles and control labels, exercise hints and worked solutions.

``python -m companion translate --check`` lists, per chapter, the cells and texts without a translation, the
translations whose English no longer exists (the English changed after it was translated), entries still marked
``todo`` and "translations" that hold no Chinese or are the English itself; ``--update`` rewrites a chapter's
file keeping every translation that still matches, adding the missing ones as ``todo`` entries that hold the
English, and moving the unmatched ones to the end (``orphan = true``) for a translator to reuse and delete.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from companion.kit import i18n
from companion.tools import catalog

PACKAGE_DIR = catalog.ROOT / "companion"

#: Call name → (position, keyword) of the argument that holds reader-facing English.
TEXT_ARGUMENTS: dict[str, tuple[int, str]] = {
    "ClaimSpec": (2, "text"),
    "Explorer": (0, "title"),
    "float_slider": (4, "description"),
    "log_slider": (3, "description"),
    "int_slider": (3, "description"),
    "dropdown": (2, "description"),
    "checkbox": (1, "description"),
    "text": (1, "description"),
    "feedback": (3, "hint"),
    "Solution": (1, "text"),
    "tr": (0, "english"),
}
#: Translation files that are not a chapter's: the kit's and the site's own words, and the figure catalog.
COMMON, CATALOG, FIGURES = "common", "catalog", i18n.FIGURES
COMMON_DIRS = ("kit", "tools")


@dataclass(frozen=True)
class Source:
    """One piece of translatable English: a markdown cell or a text, where it was found."""

    kind: str  # "cells" or "texts"
    english: str
    where: str

    @property
    def key(self) -> str:
        return i18n.english_key(self.english)


def chapter_modules(slug: str) -> list[Path]:
    """The chapter's own modules: its experiment module(s) and its solutions, by the chapter number (the papers'
    notebook: the experiment module of its own name)."""
    book = re.fullmatch(r"ch\d\d[a-z]?_\w+", slug) is not None   # a chapter (or part) of the book, listed or not
    number = slug.partition("_")[0] if book else slug  # ch12, ch12b
    found = sorted((PACKAGE_DIR / "experiments").glob(f"{number}_*.py" if book else f"{number}.py"))
    solutions = PACKAGE_DIR / "solutions" / f"{number}.py"
    return found + ([solutions] if solutions.exists() else [])


def _call_name(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def code_texts(code: str, where: str) -> Iterator[Source]:
    """The string literals of ``code`` passed as the text argument of a :data:`TEXT_ARGUMENTS` call."""
    for node in ast.walk(ast.parse(code)):
        if not isinstance(node, ast.Call) or _call_name(node) not in TEXT_ARGUMENTS:
            continue
        position, keyword = TEXT_ARGUMENTS[_call_name(node)]
        arg = node.args[position] if len(node.args) > position else \
            next((k.value for k in node.keywords if k.arg == keyword), None)
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value.strip():
            yield Source("texts", arg.value, f"{where}:{node.lineno}")


def _common_sources() -> list[Source]:
    """The kit's and the tools' words: the verdict marks and every text they pass to ``tr`` or show."""
    from companion.kit.claims import (EXPLORATION_MARK, FAIL_MARK, IDENTITY_FAIL_MARK, IDENTITY_PASS_MARK, PASS_MARK,
                                      SMOKE_MARK)
    from companion.tools.fidelity import FIDELITY_WORDS, PAPER_WORDS, REASONS, STALE_NOTE

    found = [Source("texts", mark, "companion/kit/claims.py")
             for mark in (PASS_MARK, FAIL_MARK, EXPLORATION_MARK, SMOKE_MARK, IDENTITY_PASS_MARK, IDENTITY_FAIL_MARK)]
    found += [Source("texts", words, "companion/tools/fidelity.py FIDELITY_WORDS") for words in FIDELITY_WORDS.values()]
    found += [Source("texts", reason, "companion/tools/fidelity.py REASONS") for reason in (*REASONS, STALE_NOTE)]
    found += [Source("texts", words, "companion/tools/fidelity.py PAPER_WORDS") for words in PAPER_WORDS.values()]
    modules = [m for d in COMMON_DIRS for m in sorted((PACKAGE_DIR / d).glob("*.py"))]
    modules.append(PACKAGE_DIR / "solutions" / "__init__.py")
    for module in modules:
        found += code_texts(module.read_text(encoding="utf-8"), str(module.relative_to(catalog.ROOT)))
    return found


def _catalog_sources() -> list[Source]:
    """The catalog's caption, note and ``unchecked`` line of every figure and table, and the result and note of every
    paper result of ``papers.csv`` (the coverage page)."""
    from companion.tools.fidelity import read_papers

    return [Source("texts", text, f"figures.csv {f.id}") for f in catalog.FIGURES
            for text in (f.caption, f.note, f.unchecked) if text.strip()] + \
        [Source("texts", text, f"papers.csv {r.paper}") for r in read_papers() for text in (r.result, r.note)
         if text.strip()]


def names() -> list[str]:
    """Every translation file's name: the chapters', then ``common``, ``catalog`` and ``figures``."""
    return [c.slug for c in catalog.CHAPTERS] + [COMMON, CATALOG, FIGURES]


def figure_word_problems(language: str = "zh") -> list[str]:
    """What is wrong with the phrase table of the words inside figures (``figures.toml``, written by hand: which
    phrases it needs shows when a figure is drawn — :class:`~companion.kit.i18n.MissingFigureWords`): a translation
    may be a symbol ("lam" = "λ") but may not keep English words other than names (``NEUTRAL_WORDS``)."""
    i18n.figure_words.cache_clear()
    table = i18n.figure_words(language)
    if not table:
        return [f"{FIGURES}: no phrase table at {i18n.translation_path(FIGURES, language)}"]
    return [f"{FIGURES}: the translation of {english!r} keeps English words: {zh!r}"
            for english, zh in table.items() if i18n.english_phrases(zh)]


def sources(slug: str) -> list[Source]:
    """Everything chapter ``slug`` (or ``common``, ``catalog``) must translate, in reading order (cells, then
    texts), without repeats."""
    from companion.tools.runner import load_source

    if slug in (COMMON, CATALOG):
        return _unique(_common_sources() if slug == COMMON else _catalog_sources())
    nb = load_source(catalog.CHAPTERS_DIR / f"{slug}.py")
    found = [Source("cells", c.source, f"{slug}.py cell {i}") for i, c in enumerate(nb.cells)
             if c.cell_type == "markdown" and c.source.strip()]
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            found += code_texts(cell.source, f"{slug}.py cell {i}")
    for module in chapter_modules(slug):
        found += code_texts(module.read_text(encoding="utf-8"), str(module.relative_to(catalog.ROOT)))
    return _unique(found)


def _unique(found: list[Source]) -> list[Source]:
    seen: set[tuple[str, str]] = set()
    unique = []
    for s in found:
        if (s.kind, s.key) not in seen:
            seen.add((s.kind, s.key))
            unique.append(s)
    return unique


def problems(slug: str, language: str = "zh") -> list[str]:
    """What is wrong with chapter ``slug``'s translation (empty when it is complete and in step)."""
    if slug == FIGURES:
        return figure_word_problems(language)
    translation = i18n.load(slug, language)
    wanted = sources(slug)
    found = []
    for s in wanted:
        entry = getattr(translation, s.kind).get(s.key)
        if entry is None:
            found.append(f"{slug}: no translation of {s.kind[:-1]} {s.key} ({s.where}): {s.english.strip()[:70]!r}")
        elif entry.todo:
            found.append(f"{slug}: {s.kind[:-1]} {s.key} ({s.where}) is still marked todo")
        elif not i18n.has_chinese(entry.zh):
            found.append(f"{slug}: the translation of {s.kind[:-1]} {s.key} ({s.where}) holds no Chinese")
        elif entry.zh.strip() == s.english.strip():
            found.append(f"{slug}: the translation of {s.kind[:-1]} {s.key} ({s.where}) is the English text")
        elif s.kind == "texts" and entry.en is not None and entry.en.strip() != s.english.strip():
            found.append(f"{slug}: text {s.key} records other English than the code's")
    keys = {(s.kind, s.key) for s in wanted}
    for kind in ("cells", "texts"):
        for key in getattr(translation, kind):
            if (kind, key) not in keys:
                found.append(f"{slug}: {kind[:-1]} {key} translates English that no longer exists "
                             "(it changed after the translation was written, or was removed)")
    return found


def _toml_string(text: str, multiline: bool) -> str:
    if multiline and "'''" not in text and all(c in "\n\t" or c >= " " for c in text):
        return "'''\n" + text.strip("\n") + "\n'''"
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a valid TOML basic string


def _entry_toml(kind: str, key: str, zh: str, english: str | None, todo: bool, orphan: bool = False) -> str:
    lines = [f"[{kind}.{key}]"]
    if kind == "texts" and english is not None:
        lines.append(f"en = {_toml_string(english, False)}")
    lines.append(f"zh = {_toml_string(zh, kind == 'cells' or chr(10) in zh)}")
    if todo:
        lines.append("todo = true")
    if orphan:
        lines.append("orphan = true")
    return "\n".join(lines)


def update(slug: str, language: str = "zh") -> Path:
    """Rewrite chapter ``slug``'s translation file in reading order: matching translations kept, missing ones added
    as ``todo`` entries holding the English, unmatched ones moved to the end with ``orphan = true``."""
    if slug == FIGURES:
        raise ValueError(f"{FIGURES}.toml is a phrase table written by hand: translate --update does not write it")
    translation = i18n.load(slug, language)
    wanted = sources(slug)
    what = {COMMON: "the kit's and the site's own words", CATALOG: "the figure catalog (companion/tools/figures.csv)"}
    blocks = [f"# 中文版 of {what.get(slug, f'chapters/{slug}.py and its modules')} (companion.kit.i18n explains the "
              "format).\n"
              "# `python -m companion translate --check` names what is missing or out of date."]
    for s in wanted:
        entry = getattr(translation, s.kind).get(s.key)
        if entry is None:
            blocks.append(_entry_toml(s.kind, s.key, s.english.strip(), s.english, todo=True))
        else:
            blocks.append(_entry_toml(s.kind, s.key, entry.zh, s.english, entry.todo))
    keys = {(s.kind, s.key) for s in wanted}
    for kind in ("cells", "texts"):
        for key, entry in getattr(translation, kind).items():
            if (kind, key) not in keys:
                blocks.append(_entry_toml(kind, key, entry.zh, entry.en, entry.todo, orphan=True))
    path = translation.path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n\n".join(blocks) + "\n", encoding="utf-8")
    i18n.load.cache_clear()
    return path
