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
import warnings
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


# ------------------------------------------------------------------------------ words inside figures
# A figure is drawn once, by the one executed run that both editions show, so its words are given in both
# languages: "step · 步数", or a title over its Chinese.  The Chinese is made phrase by phrase from
# ``translations/zh/figures.toml`` ([words] "english phrase" = "中文"); symbols, numbers, $math$, identifiers
# (mod_residue, W_Q) and the names in NEUTRAL_WORDS are the same in both languages and left as they are.
FIGURES = "figures"
NEUTRAL_WORDS = frozenset(  # names, functions and abbreviations written the same way in a Chinese text
    "ReLU sReLU relu tanh xtanh sigmoid softplus softmax GELU sin cos exp log ln atan max min sup inf arg argmax std "
    "var mod id tr cond rank GD SGD GLD Adam AdamW MSE DFT DST FFT NTK ICL ASI SD PINN PINNs DRM Ritz Jacobi MLP CNN "
    "DNN FNN RNN LSTM MscaleDNN Mscale LoRA ResNet NN dB PSNR MNIST t-SNE Bézier Hessian Lipschitz Fourier Gaussian "
    "Laplace Ricker He Xavier LeCun Transformer transformer dropout token tokens ms alpha beta gamma delta eta "
    "lambda sigma theta mu phi ax round".split())
_MATH = re.compile(r"\$[^$]*\$")
_IDENTIFIER = re.compile(r"[^\W_]*_[\w{}^]+")  # mod_residue, W_Q, Δ_F, f_θ: code names and subscripts
_WORD = r"[A-Za-zÀ-ÿ]+(?:['’-][A-Za-zÀ-ÿ]+)*"
_PHRASE = re.compile(rf"{_WORD}(?: +{_WORD})*")
_CJK_GAP = re.compile(r"(?<=[\u3400-\u9fff\u3000-\u303f\uff00-\uffef]) +(?=[\u3400-\u9fff\u3000-\u303f\uff00-\uffef])")
_FIGURE_NUMBER = re.compile(r"图\.\s*(?=\d)")  # "Fig. 4.3" → "图. 4.3" → "图4.3"
SHORT_LABEL = 26  # label and translation on one line ("step · 步数") up to this many characters, else two lines


class MissingFigureWords(UserWarning):
    """A text drawn in a figure has English words that ``figures.toml`` does not translate."""


@lru_cache(maxsize=None)
def figure_words(language: str = "zh") -> dict[str, str]:
    """The phrase table of ``figures.toml``: lower-case English phrase → translation."""
    path = translation_path(FIGURES, language)
    if not path.exists():
        return {}
    with path.open("rb") as fh:
        words = tomllib.load(fh).get("words", {})
    return {english.lower(): chinese for english, chinese in words.items()}


_NEUTRAL = frozenset(w.lower() for w in NEUTRAL_WORDS)


def _is_neutral(word: str) -> bool:
    return len(word) == 1 or word.lower() in _NEUTRAL


def _translate_phrase(phrase: str, table: dict[str, str]) -> tuple[str, list[str]]:
    """``phrase`` (English words separated by spaces) in the table's language, longest known phrase first; and the
    words nobody translated."""
    words, out, missing, i = phrase.split(), [], [], 0
    while i < len(words):
        for j in range(len(words), i, -1):
            found = table.get(" ".join(words[i:j]).lower())
            if found is not None:
                out.append(found)
                i = j
                break
        else:
            out.append(words[i])
            if not _is_neutral(words[i]):
                missing.append(words[i])
            i += 1
    return " ".join(out), missing


def english_phrases(text: str) -> list[str]:
    """The runs of English words in ``text`` that a translation has to cover (no math, identifiers, names; a text
    that is one word of two letters is a symbol too: a tick label "ab" names a pair of anchors)."""
    if re.fullmatch(r"\s*[A-Za-z]{1,2}\s*", text):
        return []
    plain = _IDENTIFIER.sub(" ", _MATH.sub(" ", text))
    return [p for p in _PHRASE.findall(plain) if not all(_is_neutral(w) for w in p.split())]


def translate_figure_text(text: str, language: str = "zh") -> tuple[str | None, list[str]]:
    """The translation of a figure's text phrase by phrase, or None when it has no words to translate (or already
    holds Chinese); and the English phrases that ``figures.toml`` does not cover (then the translation is None).""" 
    if has_chinese(text) or not english_phrases(text):
        return None, []
    table, missing = figure_words(language), []
    kept: list[str] = []

    def protect(match: re.Match) -> str:  # math and identifiers pass through untouched
        kept.append(match.group(0))
        return f"\x00{len(kept) - 1}\x00"

    def swap(match: re.Match) -> str:
        translated, unknown = _translate_phrase(match.group(0), table)
        if unknown:
            missing.append(match.group(0))
        return translated

    masked = _IDENTIFIER.sub(protect, _MATH.sub(protect, text))
    translated = _PHRASE.sub(swap, masked)
    translated = re.sub("\x00(\\d+)\x00", lambda m: kept[int(m.group(1))], translated)
    if missing:
        return None, missing
    return _CJK_GAP.sub("", _FIGURE_NUMBER.sub("图", translated)), []


def bilingual(text: str, *, two_lines: bool = False, language: str = "zh") -> str:
    """``text`` with its translation: ``"step · 步数"``, or the English over the Chinese when ``two_lines`` (titles,
    tick labels) or when the pair is longer than :data:`SHORT_LABEL`.  Neutral text and text that already holds
    Chinese are returned as they are; a text with words missing from ``figures.toml`` too, with a
    :class:`MissingFigureWords` warning naming them."""
    translated, missing = translate_figure_text(text, language)
    if missing:
        warnings.warn(f"figure text {text!r}: no Chinese for {' | '.join(dict.fromkeys(missing))} "
                      f"(add them to companion/translations/{language}/{FIGURES}.toml)", MissingFigureWords, stacklevel=2)
    if translated is None or translated == text:
        return text
    if two_lines or "\n" in text or len(text) + len(translated) > SHORT_LABEL:
        return f"{text}\n{translated}"
    return f"{text} · {translated}"
