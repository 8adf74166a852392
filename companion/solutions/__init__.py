"""Worked solutions for the exercises (习题) of the chapter notebooks.

One module per chapter that has an exercise section (``companion.solutions.ch04`` … ``ch15``; chapter 10's
notebook has none).  Each module holds ``SOLUTIONS``, a dict label → :class:`Solution` in the order of the
notebook, and ``solution(label)``, which shows the worked solution in the notebook and returns the answer::

    from companion.solutions.ch04 import solution
    solution(18)          # shows the reasoning for 习题18 and returns 5

**Labels.**  A solution's ``label`` is the exercise's label as the notebook prints it in bold, reduced to the
exercise number(s): ``**习题18 (aliasing, 频率混叠).**`` → ``"习题18"``, ``**习题6 / (4.4).**`` → ``"习题6"``,
``**(5.1), 习题2.**`` → ``"习题2"``, ``**习题7, 8 (and 习题13 of chapter 4).**`` → ``"习题7, 8"``,
``**习题4 / 5 (…).**`` → ``"习题4 / 5"``, ``**Exercise 4 (§12.9).**`` → ``"Exercise 4"``; an open-questions
paragraph (``**Open questions** (习题7, 10, …)``) is ``"Open questions"``.  Where a notebook numbers its
exercises without the word — ``**1.**`` in chapter 14, a plain list ``1.`` in chapter 13 — the label is
``"Exercise 1"``; chapter 9's single exercise, titled ``## Exercise (习题 20)``, is ``"习题20"``.

An ``int`` passed to ``solution`` means 习题N or Exercise N: the solution whose label carries that number, else
the one whose ``covers`` lists it (the 习题 answered inside an open-questions paragraph, or the book's number of
a chapter-14 exercise).

**Answers.**  ``Solution.answer`` returns what the notebook's check expects.  It takes the notebook objects that
check needs (``answer(es)`` for chapter 4's early-stopping exercise); ``solution(label)`` calls it when it needs
none and otherwise returns the function itself, to be called with those objects.  Open questions have no answer.
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from companion.kit.i18n import tr

#: Chapter slug (the notebook's file name) → module of its solutions, for every chapter with exercises.
CHAPTERS: dict[str, str] = {
    "ch04_frequency_principle": "companion.solutions.ch04",
    "ch05_multiscale_networks": "companion.solutions.ch05",
    "ch06_frequency_mechanism": "companion.solutions.ch06",
    "ch07_phase_diagram": "companion.solutions.ch07",
    "ch08_condensation": "companion.solutions.ch08",
    "ch09_embedding_principle": "companion.solutions.ch09",
    "ch11_flatness": "companion.solutions.ch11",
    "ch12_anchor_functions": "companion.solutions.ch12",
    "ch13_complexity_control": "companion.solutions.ch13",
    "ch14_more_phenomena": "companion.solutions.ch14",
    "ch15_pinns": "companion.solutions.ch15",
}

_NUMBER_LIST = re.compile(r"(?:习题|Exercise)\s*(\d+(?:\s*(?:,|/)\s*\d+)*)")


@dataclass(frozen=True)
class Solution:
    """The worked solution of one exercise.

    Attributes:
        label: the exercise's label as printed in bold in the notebook (see the module docstring for the rule).
        text: the worked solution in Markdown, step by step.
        code: a Python snippet a student can run in the notebook ("" if none).
        answer: returns the value the notebook's check expects, given the notebook objects the check needs;
            ``None`` for open questions.
        covers: further exercise numbers this solution answers (the 习题 of an open-questions paragraph).
    """

    label: str
    text: str
    code: str = ""
    answer: Callable[..., Any] | None = None
    covers: tuple[int, ...] = ()

    @property
    def numbers(self) -> tuple[int, ...]:
        """The exercise numbers in the label ("习题7, 8" → (7, 8); "Open questions" → ())."""
        match = _NUMBER_LIST.search(self.label)
        return tuple(int(n) for n in re.findall(r"\d+", match.group(1))) if match else ()

    def markdown(self, language: str | None = None) -> str:
        """The text (in ``language``, default ``COMPANION_LANG``) with its display math in blocks of their own
        (:func:`display_math_blocks`), followed by the code (if any) as a fenced Python block."""
        body = display_math_blocks(tr(self.text, language).strip())
        if self.code.strip():
            body += "\n\n```python\n" + self.code.strip() + "\n```"
        return body

    def answer_needs_arguments(self) -> bool:
        """Whether ``answer`` needs notebook objects (a parameter without a default)."""
        if self.answer is None:
            return False
        params = inspect.signature(self.answer).parameters.values()
        return any(p.default is inspect.Parameter.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD,
                                                                       p.KEYWORD_ONLY) for p in params)


_DISPLAY_MATH = re.compile(r"\$\$(?P<tex>.+?)\$\$", re.DOTALL)
_LIST_ITEM = re.compile(r"^(?P<marker>\s*(?:\d+[.)]|[-*+])\s+)")


def display_math_blocks(text: str) -> str:
    """``text`` (Markdown) with each ``$$…$$`` written as a display-math block of its own lines, blank lines around it,
    indented like the paragraph or list item it sits in.

    Jupyter's Markdown renders ``$$…$$`` inside a sentence, but MyST (the book site) does not: there the TeX stayed
    raw, and a wrapped line of it starting with ``+`` became a bullet.  The text before the math and after it stay
    in the same list item."""
    out: list[str] = []
    last = 0
    for match in _DISPLAY_MATH.finditer(text):
        line_start = text.rfind("\n", 0, match.start()) + 1
        line = text[line_start:match.start()]
        item = _LIST_ITEM.match(line)
        indent = " " * len(item["marker"]) if item else line[:len(line) - len(line.lstrip())]
        before = text[last:match.start()].rstrip()
        tex = "\n".join(indent + row.strip() for row in match["tex"].strip().splitlines())
        out.append(f"{before}\n\n{indent}$$\n{tex}\n{indent}$$\n\n")
        rest = text[match.end():]
        skip = len(rest) - len(rest.lstrip(" \t"))
        last = match.end() + skip
        if rest[skip:skip + 1] == "\n":  # the math ended its line: the next line keeps its own indentation
            last += 1
        elif rest[skip:].strip():  # text after the math on its line continues the paragraph, indented like it
            out.append(indent)
    out.append(text[last:])
    return "".join(out).strip()


def collect(*solutions: Solution) -> dict[str, Solution]:
    """The dict label → solution, in the given (notebook) order; labels must be unique."""
    out: dict[str, Solution] = {}
    for s in solutions:
        if s.label in out:
            raise ValueError(f"duplicate solution label {s.label!r}")
        out[s.label] = s
    return out


def _chapter_slug(slug_or_prefix: str) -> str:
    raw = str(slug_or_prefix).strip().lower()
    if raw.isdigit():
        raw = f"ch{int(raw):02d}"
    for slug in CHAPTERS:
        prefix = slug[:4]
        if raw and (slug.startswith(raw) and len(raw) >= 4 or raw == prefix or raw.startswith(prefix + "_")):
            return slug
    raise ValueError(f"unknown chapter {slug_or_prefix!r}: chapters with exercises are "
                     f"{', '.join(CHAPTERS)} (a prefix such as 'ch04' will do)")


def for_chapter(slug_or_prefix: str) -> dict[str, Solution]:
    """The solutions of one chapter, label → :class:`Solution`, in the order of its notebook.

    ``slug_or_prefix`` is the notebook's name ("ch04_frequency_principle"), its prefix ("ch04"), the chapter
    number ("4") or the experiment module's name ("ch04_frequency").  Raises ``ValueError`` naming the chapters
    with exercises otherwise.
    """
    module = importlib.import_module(CHAPTERS[_chapter_slug(slug_or_prefix)])
    return dict(module.SOLUTIONS)


def find(solutions: dict[str, Solution], label: str | int) -> Solution:
    """The solution for ``label`` (a label string, or an int meaning 习题N / Exercise N); ``ValueError`` otherwise."""
    if isinstance(label, bool) or not isinstance(label, (str, int)):
        raise ValueError(f"label must be a string such as {next(iter(solutions))!r} or an exercise number; "
                         f"got {label!r}")
    if isinstance(label, int):
        for group in ((s for s in solutions.values() if label in s.numbers),
                      (s for s in solutions.values() if label in s.covers)):
            hit = next(group, None)
            if hit is not None:
                return hit
    else:
        key = label.strip()
        if key in solutions:
            return solutions[key]
        squeezed = {re.sub(r"\s+", "", k).lower(): s for k, s in solutions.items()}
        hit = squeezed.get(re.sub(r"\s+", "", key).lower())
        if hit is not None:
            return hit
    numbers = sorted({n for s in solutions.values() for n in (*s.numbers, *s.covers)})
    raise ValueError(f"no exercise {label!r} in this chapter; its labels are {', '.join(map(repr, solutions))} "
                     f"(or an exercise number: {', '.join(map(str, numbers))})")


def _in_ipython() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency of the notebooks
        return False
    return get_ipython() is not None


def show(solutions: dict[str, Solution], label: str | int, chapter: str = "") -> Any:
    """Display the worked solution for ``label`` and return its answer.

    In IPython the solution is displayed as Markdown, elsewhere printed.  Returns ``answer()`` when the answer
    needs no notebook object, the answer function itself when it does (call it with them), ``None`` for an
    open question.
    """
    sol = find(solutions, label)
    title = f"### {tr('Worked solution')} — {chapter + ' ' if chapter else ''}{sol.label}\n\n"
    text = title + sol.markdown()
    if _in_ipython():
        from IPython.display import Markdown, display
        display(Markdown(text))
    else:
        print(text)
    if sol.answer is None:
        return None
    return sol.answer if sol.answer_needs_arguments() else sol.answer()
