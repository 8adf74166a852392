"""Bounds on the numbers a reader or a caller gives an experiment: one check, one message.

Every explorer control and every public compute function that an explorer wraps checks its numeric arguments
here, before any work, so that a bad value is one ``ValueError`` naming the parameter, the value and what is
allowed — never a NaN result, a torch error or an 8 GB allocation::

    SOLVER = Bounds(k_high=whole(4, 48), width=integer(1, 1000), steps=integer(1, 100_000))

    def explore_solver(k_high, width, steps):
        SOLVER.check(k_high=k_high, width=width, steps=steps)   # one line
        ...

The rule: a number is finite, of the right type (a bool is not a number; :func:`integer` takes an ``int`` only,
:func:`whole` also a float with no fractional part, as a float slider gives), and within [lo, hi].  The message of
a value outside is ``"name=value is out of range: allowed values lie in [lo, hi]"``, the one the explorers'
sliders give (:func:`companion.kit.widgets.validate_control` checks a slider's value with :func:`check_number`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

#: Relative slack at either end of a range, for values read back from a log slider (10 ** log10(x) ≠ x).
SLACK = 1e-9


@dataclass(frozen=True)
class Bound:
    """The allowed values of one number: ``kind`` ``"real"`` (any finite number), ``"integer"`` (an int) or
    ``"whole"`` (an int or a float with no fractional part) in [lo, hi]; ``optional``: None is allowed too."""

    lo: float
    hi: float
    kind: str = "real"
    optional: bool = False

    def __post_init__(self) -> None:
        if self.kind not in ("real", "integer", "whole") or not self.lo <= self.hi:
            raise ValueError(f"a bound needs a kind real/integer/whole and lo ≤ hi; got {self}")

    def check(self, name: str, value: Any) -> None:
        if value is None and self.optional:
            return
        check_number(name, value, self.lo, self.hi, kind=self.kind)


def real(lo: float, hi: float, *, optional: bool = False) -> Bound:
    """A finite number in [lo, hi] (an int or a float)."""
    return Bound(lo, hi, "real", optional)


def integer(lo: int, hi: int, *, optional: bool = False) -> Bound:
    """An ``int`` in [lo, hi] (a numpy integer too; not a bool, not a float)."""
    return Bound(lo, hi, "integer", optional)


def whole(lo: int, hi: int, *, optional: bool = False) -> Bound:
    """A whole number in [lo, hi]: an int, or a float with no fractional part (24.0, as a float slider gives)."""
    return Bound(lo, hi, "whole", optional)


#: A seed: :func:`companion.kit.seeds.generator` takes an integer ≥ 0; ``OPTIONAL_SEED``: or None (the active seed).
SEED = integer(0, 2 ** 32 - 1)
OPTIONAL_SEED = integer(0, 2 ** 32 - 1, optional=True)


def _range(lo: float, hi: float) -> str:
    return f"[{lo:g}, {hi:g}]"


def check_number(name: str, value: Any, lo: float, hi: float, *, kind: str = "real") -> None:
    """Raise a ValueError naming ``name``, ``value`` and the allowed range unless ``value`` is a finite number of
    the ``kind`` (``"real"``, ``"integer"``, ``"whole"``; see :class:`Bound`) in [lo, hi]."""
    if isinstance(value, bool) or not isinstance(value, Real):
        what = "an integer" if kind == "integer" else "a whole number" if kind == "whole" else "a number"
        raise ValueError(f"{name}={value!r} must be {what}: allowed values lie in {_range(lo, hi)}")
    if kind == "integer" and not isinstance(value, Integral):
        raise ValueError(f"{name}={value!r} must be an integer (an int): allowed values are the integers in "
                         f"{_range(lo, hi)}")
    if not (math.isfinite(value) and lo - SLACK * abs(lo) <= value <= hi + SLACK * abs(hi)):
        raise ValueError(f"{name}={value!r} is out of range: allowed values lie in {_range(lo, hi)}")
    if kind == "whole" and value != round(value):
        raise ValueError(f"{name}={value!r} must be a whole number: allowed values are the whole numbers in "
                         f"{_range(lo, hi)}")


class Bounds:
    """The bounds of a function's numeric arguments, by name; :meth:`check` checks them all in one call."""

    def __init__(self, **bounds: Bound) -> None:
        self.bounds = bounds

    def __getitem__(self, name: str) -> Bound:
        return self.bounds[name]

    def check(self, **values: Any) -> None:
        """Check each value against the bound of its name (a name without a bound is a programming error)."""
        for name, value in values.items():
            self.bounds[name].check(name, value)


def check_numbers(text: str, name: str, bound: Bound) -> tuple:
    """A comma-separated list of numbers typed into a text field ('1, 3, 5'; ';' separates too) → a tuple, each
    number checked against ``bound`` (ints for a whole or integer bound).  A ValueError names the field, the text
    and, for a number out of range or not whole, that number and the allowed range."""
    if not isinstance(text, str):
        raise ValueError(f"{name}={text!r} must be text: a comma-separated list of numbers, e.g. '1, 3, 5'")
    try:
        numbers = [float(part) for part in text.replace(";", ",").split(",") if part.strip()]
    except ValueError:
        raise ValueError(f"{name}={text!r} must be a comma-separated list of numbers, e.g. '1, 3, 5'") from None
    if not numbers:
        raise ValueError(f"{name} is empty: give at least one number")
    for number in numbers:
        if not (math.isfinite(number) and bound.lo <= number <= bound.hi):
            raise ValueError(f"{name}={text!r}: {number:g} is out of range: allowed values lie in "
                             f"{_range(bound.lo, bound.hi)}")
        if bound.kind != "real" and number != round(number):
            raise ValueError(f"{name}={text!r}: {number:g} is not a whole number: allowed values are the whole "
                             f"numbers in {_range(bound.lo, bound.hi)}")
    return tuple(int(n) for n in numbers) if bound.kind != "real" else tuple(numbers)
