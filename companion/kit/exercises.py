"""Feedback for the exercises (习题) that the chapters turn into cells.

An exercise cell ends with a check that prints one line: ``✔ correct`` or ``✘ not yet`` with a
hint.  Unanswered exercises (the cell still holds ``None``) print the hint and do not raise, so a
notebook with open exercises still runs from top to bottom.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from companion.kit.i18n import tr


#: The English phrases of :func:`feedback`'s lines.
PHRASES = ("not answered yet — hint:", "✘ not yet — hint:", "✔ correct")
_FEEDBACK_LINE = re.compile(r"^(?P<exercise>\[[^\]]+\]) (?P<phrase>" + "|".join(map(re.escape, PHRASES)) +
                            r")(?: (?P<hint>.*))?$")


def localize_feedback_line(line: str, language: str) -> str:
    """An English feedback line as :func:`feedback` prints it, in ``language``; any other line unchanged."""
    match = _FEEDBACK_LINE.match(line)
    if match is None:
        return line
    hint = f" {tr(match['hint'], language)}" if match["hint"] else ""
    return f"{match['exercise']} {tr(match['phrase'], language)}{hint}"


def feedback(exercise: str, answer: Any, is_correct: Callable[[Any], bool], hint: str) -> bool:
    """Print the verdict on ``answer`` for ``exercise`` and return whether it is correct."""
    hint = tr(hint)
    if answer is None:
        print(f"[{exercise}] {tr('not answered yet — hint:')} {hint}")
        return False
    try:
        ok = bool(is_correct(answer))
    except Exception as exc:  # a student's half-written function: show the error as feedback
        print(f"[{exercise}] ✘ {tr('your answer raised')} {type(exc).__name__}: {exc} — {tr('hint:')} {hint}")
        return False
    print(f"[{exercise}] {tr('✔ correct')}" if ok else f"[{exercise}] {tr('✘ not yet — hint:')} {hint}")
    return ok
