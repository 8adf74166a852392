"""Feedback for the exercises (习题) that the chapters turn into cells.

An exercise cell ends with a check that prints one line: ``✔ correct`` or ``✘ not yet`` with a
hint.  Unanswered exercises (the cell still holds ``None``) print the hint and do not raise, so a
notebook with open exercises still runs from top to bottom.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def feedback(exercise: str, answer: Any, is_correct: Callable[[Any], bool], hint: str) -> bool:
    """Print the verdict on ``answer`` for ``exercise`` and return whether it is correct."""
    if answer is None:
        print(f"[{exercise}] not answered yet — hint: {hint}")
        return False
    try:
        ok = bool(is_correct(answer))
    except Exception as exc:  # a student's half-written function: show the error as feedback
        print(f"[{exercise}] ✘ your answer raised {type(exc).__name__}: {exc} — hint: {hint}")
        return False
    print(f"[{exercise}] ✔ correct" if ok else f"[{exercise}] ✘ not yet — hint: {hint}")
    return ok
