"""Every claim has a negative control, and every chapter claim is declared in the package.

A negative control is a test named ``test_control_<claim id, non-alphanumerics as _>`` in a
``tests/test_controls_chNN.py`` file (the papers' notebook: ``tests/test_controls_icl_papers.py``): it runs the claim's own check function on a small *real run*
where the phenomenon is absent (large initialisation, shuffled labels, no training …) and asserts
that the check fails.  This test finds every declared claim id and every control, and fails for an
id without one.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import companion
from companion.kit.claims import ClaimSpec
from companion.tools import catalog
from companion.tools.fidelity import control_name

TESTS = Path(__file__).resolve().parent
CHAPTERS = TESTS.parent / "chapters"


def declared_claims() -> dict[str, ClaimSpec]:
    """Every ClaimSpec the package declares (importing each module registers its claims)."""
    for module in pkgutil.walk_packages(companion.__path__, "companion."):
        importlib.import_module(module.name)
    return {cid: spec for cid, spec in ClaimSpec.registry.items() if not cid.startswith("ch9")}  # ch9x: test fixtures


def control_tests() -> set[str]:
    names: set[str] = set()
    for path in TESTS.glob("test_controls_*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names.update(node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef))
    return names


def test_every_claim_has_a_negative_control() -> None:
    claims = declared_claims()
    assert len(claims) >= 10, f"only {len(claims)} claims declared"
    have = control_tests()
    missing = sorted(cid for cid, spec in claims.items() if not spec.exploration and control_name(cid) not in have)
    assert not missing, f"claims without a negative control ({len(missing)}): {', '.join(missing)}"


def call_name(node: ast.AST) -> str | None:
    """The name a statement calls when it is one bare call (``show(…)`` → "show"), else None."""
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        return getattr(node.value.func, "id", getattr(node.value.func, "attr", None))
    return None


def shows_a_package_check(statement: ast.stmt) -> bool:
    """``show(check_…(…))``, or the same judged at one profile only: ``if pick(…): show(…)`` with an ``else`` that
    only prints why nothing is judged here (the claim is the package's; the notebook chooses where it is read)."""
    if call_name(statement) == "show":
        return True
    return (isinstance(statement, ast.If) and isinstance(statement.test, ast.Call)
            and getattr(statement.test.func, "id", None) == "pick"
            and [call_name(s) for s in statement.body] == ["show"]
            and bool(statement.orelse) and all(call_name(s) == "print" for s in statement.orelse))


def test_every_claim_cell_shows_a_declared_claim() -> None:
    """Claim cells call ``show(check_…(…))`` (or gate it on the profile): no notebook builds a verdict of its own."""
    for source in catalog.sources():
        cells = source.read_text(encoding="utf-8").split("# %%")
        checked = [c for c in cells if c.lstrip("\n").startswith("# NBVAL_CHECK_OUTPUT")]
        assert checked, f"{source.name} checks no claim"
        for cell in checked:
            body = ast.parse(cell).body
            assert body and shows_a_package_check(body[0]) and "judge(" not in cell, \
                f"{source.name}: a claim cell must only show a package check, got {ast.unparse(body[0])[:120] if body else ''!r}"


def test_claim_ids_name_their_chapter() -> None:
    """A claim id starts with its notebook's prefix (``ch04.``; the papers' notebook: ``chicl.``)."""
    prefixes = {c.claim_prefix for c in catalog.available()}
    for cid in declared_claims():
        assert cid.split(".")[0] in prefixes, f"claim id {cid!r} names no notebook of chapters/"
        assert catalog.by_claim_prefix(cid) is not None


def test_a_claim_cell_that_builds_its_own_verdict_is_refused() -> None:
    passes = ["show(check(run))", "if pick(quick=False, full=True):\n    show(check(run))\nelse:\n    print('full only')"]
    refused = ["print(run.loss < 0.1)", "if pick(quick=False, full=True):\n    show(check(run))",
               "if run.loss < 0.1:\n    show(check(run))\nelse:\n    print('no')",
               "if pick(quick=False, full=True):\n    show(check(run))\nelse:\n    print(run.loss < 0.1)\n    x = 1"]
    assert [shows_a_package_check(ast.parse(c).body[0]) for c in passes] == [True, True]
    assert [shows_a_package_check(ast.parse(c).body[0]) for c in refused] == [False] * 4
