"""Two editions from one code source: the English text of the companion and its Chinese (中文) translation.

Every text a reader sees is written once, in English: the markdown cells of ``chapters/chNN_*.py`` and the
sentences the code prints or shows (claim sentences, explorer titles and control labels, exercise hints, worked
solutions).  Its Chinese lives beside the code in ``companion/translations/zh/``, one TOML file per chapter plus
``common.toml`` for the kit's own words, **keyed by a hash of the English** (:func:`english_key`)::

    [cells.3f2a9c1b0d4e]            # the markdown cell whose English hashes to 3f2a9c1b0d4e
    zh = '''
    # 第 4 章 频率原则
    '''

    [texts.9a8b7c6d5e4f]            # a sentence the code prints
    en = "equal-amplitude frequencies converge in the order 1, 3, 5"
    zh = "等幅的频率按 1、3、5 的顺序收敛"

When the English changes its key changes, so the old translation no longer matches anything and the new text has
none: ``python -m companion translate --check`` (and its test) names both.  A fresh entry written by
``translate --update`` holds the English and ``todo = true`` until somebody translates it.

:func:`tr` is how code shows a text: the English itself in the English edition, its translation in the Chinese
one (``COMPANION_LANG=zh``); a text without a translation falls back to its English.  Notebook markdown is swapped
in when the Chinese edition of a page is built (:func:`translate_cells`), from the same executed run.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from companion.kit.config import LANGUAGES, LanguageError, read_language

__all__ = ["LANGUAGES", "LanguageError", "read_language", "english_key", "has_chinese", "load", "tr", "translate_cell"]

TRANSLATIONS_DIR = Path(__file__).resolve().parent.parent / "translations"
COMMON = "common"
_CJK = re.compile(r"[\u3400-\u9fff]")


def english_key(text: str) -> str:
    """The key of an English text: the first 12 hex digits of the SHA-256 of the text without outer whitespace."""
    return hashlib.sha256(text.strip().encode("utf-8")).hexdigest()[:12]


def has_chinese(text: str) -> bool:
    return bool(_CJK.search(text))


@dataclass(frozen=True)
class Entry:
    """One translation: the Chinese, the English it was made from (texts only) and whether it is still to do."""

    zh: str
    en: str | None = None
    todo: bool = False


@dataclass
class Translation:
    """One translation file: markdown cells and texts, each by the key of its English."""

    path: Path
    cells: dict[str, Entry] = field(default_factory=dict)
    texts: dict[str, Entry] = field(default_factory=dict)


def translation_path(name: str, language: str = "zh") -> Path:
    """The translation file of chapter ``name`` (its slug) or of ``common``."""
    return TRANSLATIONS_DIR / language / f"{name}.toml"


def _entries(table: dict, path: Path, kind: str) -> dict[str, Entry]:
    entries = {}
    for key, item in table.items():
        if not isinstance(item, dict) or not isinstance(item.get("zh"), str):
            raise ValueError(f"{path.name}: [{kind}.{key}] needs a string zh = ...")
        entries[key] = Entry(item["zh"].strip("\n"), item.get("en"), bool(item.get("todo", False)))
    return entries


@lru_cache(maxsize=None)
def load(name: str, language: str = "zh") -> Translation:
    """The translation file of ``name`` (empty if there is none)."""
    path = translation_path(name, language)
    if not path.exists():
        return Translation(path)
    with path.open("rb") as fh:
        data = tomllib.load(fh)
    return Translation(path, _entries(data.get("cells", {}), path, "cells"), _entries(data.get("texts", {}), path, "texts"))


@lru_cache(maxsize=None)
def _all_texts(language: str) -> dict[str, str]:
    """Every translated text of ``language``, from all its files, by key (entries still to do left out)."""
    found: dict[str, str] = {}
    folder = TRANSLATIONS_DIR / language
    for path in sorted(folder.glob("*.toml")) if folder.exists() else ():
        found.update({k: e.zh for k, e in load(path.stem, language).texts.items() if not e.todo})
    return found


def tr(english: str, language: str | None = None) -> str:
    """``english`` in ``language`` (default: ``COMPANION_LANG``); the English itself where no translation exists."""
    language = read_language(language)
    if language == "en" or not english.strip():
        return english
    return _all_texts(language).get(english_key(english), english)


def translate_cell(english: str, slug: str, language: str = "zh") -> str | None:
    """The translation of one markdown cell of chapter ``slug``, or None."""
    entry = load(slug, language).cells.get(english_key(english))
    return None if entry is None or entry.todo else entry.zh
