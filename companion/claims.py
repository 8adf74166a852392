"""Claim checks: a sentence of the book turned into an assertion that can fail.

A claim cell of a chapter ends with one call::

    claim("图4.7", "the k=1 peak converges before k=3, which converges before k=5",
          passed=t[0] < t[1] < t[2] and t[2] >= 5 * t[0], t1=t[0], t3=t[1], t5=t[2])

which prints a stable verdict line (no run-dependent numbers: nbval compares it with the
committed notebook) and a ``measured:`` line with the numbers (masked by the nbval sanitiser),
appends a record to the claims log when ``COMPANION_CLAIMS_LOG`` names a file (the
``reproduce`` command builds its report from it), and raises :class:`ClaimFailed` if the
check did not pass — so a notebook in which a phenomenon is no longer reproduced fails its run.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

PASS_MARK, FAIL_MARK = "✔ CLAIM HOLDS", "✘ CLAIM FAILS"


class ClaimFailed(AssertionError):
    """A phenomenon the book describes was not reproduced by this run."""


@dataclass
class Claim:
    figure: str
    text: str
    passed: bool
    measured: dict[str, Any] = field(default_factory=dict)
    chapter: str = ""

    def verdict(self) -> str:
        return f"{PASS_MARK if self.passed else FAIL_MARK} [{self.figure}] {self.text}"

    def measured_line(self) -> str:
        return "  measured: " + (", ".join(f"{k}={format_value(v)}" for k, v in self.measured.items()) or "-")


def format_value(value: Any) -> str:
    """Numbers with 4 significant digits, sequences element-wise, anything else with str()."""
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.4g}"
    if isinstance(value, (list, tuple, np.ndarray)):
        return "[" + ", ".join(format_value(v) for v in np.asarray(value).ravel().tolist()) + "]"
    return str(value)


def _jsonable(value: Any) -> Any:
    if isinstance(value, (np.generic,)):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and not np.isfinite(value):
        return str(value)
    return value


def claim(figure: str, text: str, *, passed: bool | np.bool_, **measured: Any) -> None:
    """Print the verdict of a claim, log it, and raise :class:`ClaimFailed` if it did not pass.

    Returns nothing, so a claim on a cell's last line adds no run-dependent repr to the cell's output.

    Args:
        figure: the book figure or equation the claim is about, e.g. ``"图4.7"``.
        text: the claim as a sentence, without run-dependent numbers.
        passed: the outcome of the check (a bool).
        measured: the numbers the check looked at; printed on a separate, unchecked line.
    """
    if not isinstance(passed, (bool, np.bool_)):
        raise TypeError(f"passed must be a bool, got {type(passed).__name__}: compute the check explicitly")
    result = Claim(figure=figure, text=text, passed=bool(passed), measured=measured,
                   chapter=os.environ.get("COMPANION_CHAPTER", ""))
    print(result.verdict())
    print(result.measured_line())
    log = os.environ.get("COMPANION_CLAIMS_LOG")
    if log:
        record = asdict(result)
        record["measured"] = {k: _jsonable(v) for k, v in measured.items()}
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    if not result.passed:
        raise ClaimFailed(f"{result.verdict()}\n{result.measured_line()}")


def read_log(path: str | os.PathLike) -> list[Claim]:
    """Claims recorded in a claims log (one JSON object a line)."""
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as fh:
        return [Claim(**json.loads(line)) for line in fh if line.strip()]
