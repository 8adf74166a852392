"""Claims: a sentence of the book turned into measured comparisons that can fail.

A claim has a stable **id** (``"ch04.fp-order"``: chapter, then a short name), the book figure it
reproduces and its sentence.  It is declared once, in the chapter's experiment module, beside the
function that checks it::

    FP_ORDER = ClaimSpec("ch04.fp-order", "图4.7", "equal-amplitude frequencies converge in the order 1, 3, 5")

    def check_fp_order(result: FPResult) -> Verdict:
        t1, t3, t5 = np.median(result.first, axis=0)
        return FP_ORDER.judge(compare("t1", t1, "<", "t3", t3),
                              compare("t3", t3, "<", "t5", t5),
                              threshold("t5/t1", t5 / t1, ">=", 5.0))

The notebook's claim cell, the robustness run and the negative-control test all call that function.
A notebook cell shows the verdict with :func:`show`; it prints a stable verdict line (no run-dependent
numbers: nbval compares it with the committed notebook) and a ``measured:`` line (masked by nbval's
sanitiser) with every condition's values and the claim's margin.  A failing claim prints a red ✘ line
and the notebook **goes on**: CI still fails, because nbval compares the ✘ line with the committed ✔
line, and ``reproduce``/``robustness`` exit non-zero.

**Conditions.** Each condition compares one measured value with a threshold (:func:`threshold`), two
measured values with each other (:func:`compare`), an error with a tolerance (:func:`identity`) or a
count with a bound (:func:`count`).

**Never-happened values.** A measured value may be ``NaN`` meaning "this never happened" (a peak that
never converged, see :func:`companion.core.spectral.first_step_below`).  A condition with such a value does
not pass and has no margin (``-inf``) unless it names, with ``never=``, the verdict the book's sentence
implies for it: ``compare("t3", t3, "<", "t5", t5, never="fail")`` is the default.  No ``inf`` is ever
compared as a number.

**Margin.** How far a condition is from flipping, as a number that is positive when it passes:

* ``rel`` — a threshold ``b ≠ 0``: the slack as a fraction of the threshold, ``(v − b)/|b|`` for ``>``;
  a comparison ``a < b`` of two measured values: the slack as a fraction of the larger magnitude,
  ``(b − a)/max(|a|, |b|)``.  An identity ``err ≤ tol`` is a threshold: ``1 − err/tol`` (the measured
  line also shows the tolerance ratio ``tol/err``).
* ``sd`` — a threshold of 0, or any condition given a ``spread`` (the quantity's standard deviation
  over seeds or members, measured): the slack in units of that spread.
* ``count`` — a count against a bound: the distance in counts (``bound − count`` for ``≤``).

**Kinds.** Every claim declares what it is (``ClaimSpec(..., kind=...)``):

* ``phenomenon`` (the default) — an empirical statement of the book (or of the paper its label names) that a run
  could contradict; only these count as reproductions (a figure's coverage, the robustness pass rates);
* ``identity`` — a numerical check of a theorem, formula or identity that holds by construction when the code is
  right (a rank formula, the splitting identities, (8.5)).  It prints ``✔ IDENTITY HOLDS`` (``✘ IDENTITY FAILS``, a
  bug, fails the run like a failed claim): it verifies the mathematics, it does not reproduce a phenomenon, and it
  counts in no figure's coverage and in no pass rate.  Its negative control is a perturbed input;
* ``exploration`` — a phenomenon that does not reproduce robustly at CPU scale: it prints ``◇ EXPLORATION (not a
  claim)`` with its numbers and this run's outcome, counts in no verdict, and the robustness report states its
  pass rate.

In a smoke run (:func:`companion.kit.config.pick_steps`: the full profile's code paths with a few steps) a claim
is still evaluated, but its numbers mean nothing: it prints ``◇ SMOKE (not judged)``, its log record says
``"smoke": true``, and it counts as neither a pass nor a failure.

The claim's margin is its tightest condition's, tightness being the margin over its unit's
**thin line**: ``rel`` 0.05 (5 %), ``sd`` 0.5 spreads, ``count`` 1 count.  A passing claim whose margin
lies below the thin line passes *thinly* — a flip is one unlucky seed away; the robustness report
requires each claim's median margin over seeds to clear its thin line.
"""

from __future__ import annotations

import ast
import json
import math
import os
import re
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np

from companion.kit.config import settings
from companion.kit.i18n import tr

PASS_MARK, FAIL_MARK, EXPLORATION_MARK = "✔ CLAIM HOLDS", "✘ CLAIM FAILS", "◇ EXPLORATION (not a claim)"
IDENTITY_PASS_MARK, IDENTITY_FAIL_MARK = "✔ IDENTITY HOLDS", "✘ IDENTITY FAILS"  # a kind="identity" claim
PHENOMENON, IDENTITY, EXPLORATION = "phenomenon", "identity", "exploration"
KINDS = (PHENOMENON, IDENTITY, EXPLORATION)
SMOKE_MARK = "◇ SMOKE (not judged)"  # every claim of a smoke run (see the module docstring)
RED, GREEN, RESET = "\033[31m", "\033[32m", "\033[0m"
OPERATORS = ("<", "<=", ">", ">=")
NEVER_VERDICTS = ("fail", "pass")
Unit = Literal["rel", "sd", "count"]
THIN_LINE: dict[str, float] = {"rel": 0.05, "sd": 0.5, "count": 1.0}
#: A verdict line as :func:`show` prints it in English (a failing one in red): mark, figure, sentence.
VERDICT_LINE = re.compile(rf"^(?P<red>\x1b\[\d+m)?(?P<mark>{re.escape(PASS_MARK)}|{re.escape(FAIL_MARK)}|"
                          rf"{re.escape(EXPLORATION_MARK)}|{re.escape(IDENTITY_PASS_MARK)}|{re.escape(IDENTITY_FAIL_MARK)}) \[(?P<figure>[^\]]+)\] (?P<text>.+?)(?P<reset>\x1b\[0m)?\s*$")


def is_never(value: Any) -> bool:
    """Whether ``value`` means "never happened" (NaN; ``None`` too)."""
    return value is None or (isinstance(value, (float, np.floating)) and math.isnan(value))


def _number(name: str, value: Any) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"condition {name!r}: a measured value must be a number, got {value!r}")
    value = float(value)
    if math.isinf(value):
        raise ValueError(f"condition {name!r}: the value is infinite; a value that never happened is NaN, "
                         "and a condition on it says with never= what that means")
    return value


@dataclass(frozen=True)
class Condition:
    """``lhs op rhs`` where ``value`` is measured and ``bound`` is a threshold or a second measured value."""

    lhs: str
    value: float
    op: str
    rhs: str
    bound: float
    kind: Literal["threshold", "compare", "identity", "count"]
    spread: float | None = None
    never: str = "fail"

    def __post_init__(self) -> None:
        if self.op not in OPERATORS:
            raise ValueError(f"unknown operator {self.op!r}; choose one of {', '.join(OPERATORS)}")
        if self.never not in NEVER_VERDICTS:
            raise ValueError(f"never={self.never!r}; choose one of {', '.join(NEVER_VERDICTS)}")
        if self.spread is not None and not self.spread > 0:
            raise ValueError(f"condition {self.lhs!r}: spread must be positive, got {self.spread}")
        if self.kind in ("threshold", "identity") and self.bound == 0 and self.spread is None:
            raise ValueError(f"condition {self.lhs!r} compares with 0: give the quantity's spread "
                             "(its standard deviation over seeds or members, measured) as spread=")

    @property
    def never_happened(self) -> bool:
        return is_never(self.value) or is_never(self.bound)

    @property
    def slack(self) -> float:
        """Signed distance from flipping, in the quantity's own units (positive: the condition holds)."""
        return self.value - self.bound if self.op in (">", ">=") else self.bound - self.value

    @property
    def passed(self) -> bool:
        if self.never_happened:
            return self.never == "pass"
        strict = self.op in ("<", ">")
        return self.slack > 0 if strict else self.slack >= 0

    @property
    def unit(self) -> Unit:
        if self.kind == "count":
            return "count"
        if self.spread is not None or (self.kind != "compare" and self.bound == 0):
            return "sd"
        return "rel"

    @property
    def margin(self) -> float:
        """The slack in the unit of :attr:`unit` (see the module docstring); ``±inf`` for a never value."""
        if self.never_happened:
            return math.inf if self.passed else -math.inf
        unit = self.unit
        if unit == "count":
            return self.slack
        if unit == "sd":
            return self.slack / self.spread  # type: ignore[operator]  # set whenever the unit is sd
        scale = abs(self.bound) if self.kind != "compare" else max(abs(self.value), abs(self.bound))
        return self.slack / scale if scale > 0 else (0.0 if self.slack == 0 else math.copysign(math.inf, self.slack))

    @property
    def tightness(self) -> float:
        """The margin over its unit's thin line: comparable across units (< 1: thin, < 0: failed)."""
        return self.margin / THIN_LINE[self.unit]

    def describe(self) -> str:
        value = "never" if is_never(self.value) else format_value(self.value)
        bound = "never" if is_never(self.bound) else format_value(self.bound)
        left = f"{self.lhs}={value}"
        right = f"{self.rhs}={bound}" if self.kind == "compare" else bound
        extra = ""
        if self.kind == "identity" and not self.never_happened:
            extra = f" (tol/err={format_value(self.bound / self.value) if self.value else 'inf'})"
        return f"{left} {self.op} {right}{extra}"


def threshold(name: str, value: Any, op: str, bound: float, *, spread: float | None = None,
              never: str = "fail") -> Condition:
    """A measured value against a fixed threshold, e.g. ``threshold("S_w(γ=0.5)", sw, "<", 0, spread=sd)``."""
    v = float("nan") if is_never(value) else _number(name, value)
    return Condition(name, v, op, "", _number(f"{name} bound", bound), "threshold", spread, never)


def compare(lhs: str, a: Any, op: str, rhs: str, b: Any, *, spread: float | None = None,
            never: str = "fail") -> Condition:
    """Two measured values against each other, e.g. ``compare("t1", t1, "<", "t3", t3)``."""
    av = float("nan") if is_never(a) else _number(lhs, a)
    bv = float("nan") if is_never(b) else _number(rhs, b)
    return Condition(lhs, av, op, rhs, bv, "compare", spread, never)


def identity(name: str, error: Any, tol: float) -> Condition:
    """An identity that holds up to rounding: ``error ≤ tol`` (a relative error against a tolerance)."""
    return Condition(name, _number(name, error), "<=", "", _number(f"{name} tolerance", tol), "identity")


def count(name: str, value: Any, op: str, bound: int) -> Condition:
    """A count against a bound, e.g. ``count("directions", n, "<=", 2 * p)``; the margin is in counts."""
    v = _number(name, value)
    if v != round(v):
        raise ValueError(f"condition {name!r}: a count must be a whole number, got {value!r}")
    return Condition(name, v, op, "", _number(f"{name} bound", bound), "count")


#: The seeds that validate a claim unless it says otherwise (DEVELOPERS.md: seeds ≥ 100 design, 0–19 validate).
VALIDATION_SEEDS: tuple[int, ...] = tuple(range(20))
#: Where a claim changed after its results on 0–19 were seen is validated once more (and only there).
REVALIDATION_SEEDS: tuple[int, ...] = tuple(range(500, 520))


class _Kinded:
    """What a claim's ``kind`` says, for :class:`ClaimSpec` and :class:`Verdict` alike."""

    kind: str

    @property
    def exploration(self) -> bool:
        return self.kind == EXPLORATION

    @property
    def identity(self) -> bool:
        return self.kind == IDENTITY


@dataclass
class Verdict(_Kinded):
    """The outcome of one claim on one run: its conditions, whether all hold, and the margin."""

    id: str
    figure: str
    text: str
    conditions: list[Condition]
    measured: dict[str, Any] = field(default_factory=dict)
    kind: str = PHENOMENON
    validation_seeds: tuple[int, ...] = VALIDATION_SEEDS

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.conditions)

    @property
    def tightest(self) -> Condition:
        return min(self.conditions, key=lambda c: c.tightness)

    @property
    def margin(self) -> float:
        """The tightest condition's margin, in its own unit (see the module docstring)."""
        return self.tightest.margin

    @property
    def thin(self) -> bool:
        """Passed, but with the tightest condition below its unit's thin line."""
        return self.passed and self.tightest.tightness < 1

    def verdict_line(self, language: str | None = None) -> str:
        """``✔ CLAIM HOLDS [图4.7] sentence`` (or ✘ / ◇ / ✔ IDENTITY HOLDS …), in ``language`` (default ``COMPANION_LANG``)."""
        if self.identity:
            mark = IDENTITY_PASS_MARK if self.passed else IDENTITY_FAIL_MARK
        else:
            mark = EXPLORATION_MARK if self.exploration else PASS_MARK if self.passed else FAIL_MARK
        return verdict_line(mark, self.figure, self.text, language)

    def measured_line(self) -> str:
        tight = self.tightest
        margin = "never" if math.isinf(tight.margin) else f"{tight.margin:+.3g} {tight.unit}"
        parts = [c.describe() + ("" if c.passed else " ✘") for c in self.conditions]
        parts += [f"{k}={format_value(v)}" for k, v in self.measured.items()]
        ran = f" | this run: {'holds' if self.passed else 'does not hold'}" if self.exploration else ""
        return f"  measured: {'; '.join(parts)} | margin {margin} ({tight.lhs}){ran}"

    def record(self, chapter: str = "") -> dict[str, Any]:
        """A JSON-ready record (for the claims log and the robustness report)."""
        margin = self.margin
        return {"id": self.id, "figure": self.figure, "text": self.text, "chapter": chapter,
                "kind": self.kind, "exploration": self.exploration, "validation_seeds": list(self.validation_seeds),
                "passed": self.passed, "margin": None if math.isinf(margin) else margin,
                "unit": self.tightest.unit, "thin": self.thin, "tightest": self.tightest.lhs,
                "conditions": [{**asdict(c), "passed": c.passed, "unit": c.unit,
                                "margin": None if math.isinf(c.margin) else c.margin,
                                "value": None if is_never(c.value) else c.value,
                                "bound": None if is_never(c.bound) else c.bound} for c in self.conditions],
                "measured": {k: _jsonable(v) for k, v in self.measured.items()}}


@dataclass(frozen=True)
class ClaimSpec(_Kinded):
    """A claim's identity: its id, its source (a book figure, or the paper it comes from), the sentence, its kind
    (:data:`KINDS`, see the module docstring) and the seeds that validate it.  Declared once, beside its check.

    ``validation_seeds`` is :data:`VALIDATION_SEEDS` (0–19) for a claim designed on seeds ≥ 100; a claim changed after
    its results on 0–19 were seen says ``validation_seeds=REVALIDATION_SEEDS`` (500–519): the robustness report judges
    it there, and shows its 0–19 results as in-sample."""

    id: str
    figure: str
    text: str
    kind: str = PHENOMENON
    validation_seeds: tuple[int, ...] = VALIDATION_SEEDS
    registry: ClassVar[dict[str, ClaimSpec]] = {}

    def __post_init__(self) -> None:
        chapter, _, name = self.id.partition(".")
        if not (chapter.startswith("ch") and name):
            raise ValueError(f"claim id {self.id!r} must read 'chNN.short-name'")
        if self.kind not in KINDS:
            raise ValueError(f"claim {self.id}: kind={self.kind!r}; choose one of {', '.join(KINDS)}")
        seeds = tuple(self.validation_seeds)
        if len(seeds) < 20 or len(set(seeds)) != len(seeds) or not all(
                isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seeds):
            raise ValueError(f"claim {self.id}: validation_seeds={self.validation_seeds!r}; give at least 20 distinct "
                             "seeds ≥ 0, e.g. REVALIDATION_SEEDS (500–519)")
        object.__setattr__(self, "validation_seeds", seeds)
        known = ClaimSpec.registry.get(self.id)
        if known is not None and known != self:
            raise ValueError(f"claim id {self.id!r} is declared twice with different texts")
        ClaimSpec.registry[self.id] = self

    def judge(self, *conditions: Condition, **measured: Any) -> Verdict:
        """This claim's verdict on one run: every condition must hold; ``measured`` adds context numbers."""
        if not conditions:
            raise ValueError(f"claim {self.id}: a claim needs at least one condition")
        return Verdict(self.id, self.figure, self.text, list(conditions), measured, self.kind, self.validation_seeds)


def declared_claims(tree: ast.AST) -> list[tuple[str, str, str]]:
    """``(id, label, kind)`` of each ``ClaimSpec("id", "label", …)`` written in parsed source ``tree`` with a literal id
    (the label where it is a literal, else ""; the kind: its ``kind=`` keyword, ``phenomenon`` where it has none) —
    read from the code, nothing imported or run."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "ClaimSpec" \
                and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            label = node.args[1].value if len(node.args) > 1 and isinstance(node.args[1], ast.Constant) else ""
            kinds = [k.value.value for k in node.keywords if k.arg == "kind" and isinstance(k.value, ast.Constant)]
            found.append((node.args[0].value, str(label), kinds[0] if kinds else PHENOMENON))
    return found


def verdict_line(mark: str, figure: str, text: str, language: str | None = None) -> str:
    """One verdict line: the mark (one of the marks above) and the sentence in ``language``; the figure as is."""
    return f"{tr(mark, language)} [{figure}] {tr(text, language)}"


def localize_verdict_line(line: str, language: str) -> str:
    """An English verdict line (:data:`VERDICT_LINE`) printed in ``language``; any other line unchanged."""
    match = VERDICT_LINE.match(line)
    if match is None:
        return line
    return (match["red"] or "") + verdict_line(match["mark"], match["figure"], match["text"], language) + \
        (match["reset"] or "")


def show(verdict: Verdict) -> None:
    """Print a claim's verdict (✔ or a red ✘; ◇ in a smoke run) and its measured line, and log it; never raise.

    Returns nothing, so a claim on a cell's last line adds no run-dependent repr to the cell's output.
    """
    smoke = settings().smoke
    if smoke:
        print(verdict_line(SMOKE_MARK, verdict.figure, verdict.text))
    else:
        line = verdict.verdict_line()
        print(line if verdict.passed or verdict.exploration else f"{RED}{line}{RESET}")
    print(verdict.measured_line())
    log = os.environ.get("COMPANION_CLAIMS_LOG")
    if log:
        record = verdict.record(os.environ.get("COMPANION_CHAPTER", "")) | ({"smoke": True} if smoke else {})
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")


def format_value(value: Any) -> str:
    """Numbers with 4 significant digits, sequences element-wise, anything else with str()."""
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return "never" if math.isnan(value) else f"{float(value):.4g}"
    if isinstance(value, (list, tuple, np.ndarray)):
        return "[" + ", ".join(format_value(v) for v in np.asarray(value).ravel().tolist()) + "]"
    return str(value)


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, np.ndarray):
        return [_jsonable(v) for v in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else str(value)
    return value


@dataclass
class LoggedClaim:
    """A claim as the claims log recorded it."""

    id: str
    figure: str
    text: str
    chapter: str
    exploration: bool
    passed: bool
    margin: float | None
    unit: str
    thin: bool
    tightest: str
    conditions: list[dict[str, Any]]
    measured: dict[str, Any]
    smoke: bool = False  # logged by a smoke run: evaluated, not judged (absent from older logs)
    kind: str = PHENOMENON  # absent from older logs: a phenomenon, or an exploration where ``exploration`` says so
    validation_seeds: list[int] = field(default_factory=lambda: list(VALIDATION_SEEDS))  # absent from older logs

    def __post_init__(self) -> None:
        if self.exploration:
            self.kind = EXPLORATION

    @property
    def identity(self) -> bool:
        return self.kind == IDENTITY

    @property
    def judged(self) -> bool:
        """Whether the claim counts in a verdict (a failed one fails the run): neither an exploration nor a smoke
        run's.  Identities are judged: one that fails is a bug."""
        return not (self.exploration or self.smoke)

    @property
    def reproduces(self) -> bool:
        """Whether it counts as a reproduced phenomenon: judged and of kind ``phenomenon``."""
        return self.judged and self.kind == PHENOMENON


def read_log(path: str | os.PathLike) -> list[LoggedClaim]:
    """Claims recorded in a claims log (one JSON object a line)."""
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as fh:
        return [LoggedClaim(**json.loads(line)) for line in fh if line.strip()]

