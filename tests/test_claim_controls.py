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


def test_every_claim_cell_shows_a_declared_claim() -> None:
    """Claim cells call ``show(check_…(…))``: no notebook builds a verdict of its own."""
    for source in catalog.sources():
        cells = source.read_text(encoding="utf-8").split("# %%")
        checked = [c for c in cells if c.lstrip("\n").startswith("# NBVAL_CHECK_OUTPUT")]
        assert checked, f"{source.name} checks no claim"
        for cell in checked:
            body = [line for line in cell.strip().splitlines()[1:] if line.strip() and not line.startswith("#")]
            assert body and body[0].startswith("show(") and "judge(" not in cell, \
                f"{source.name}: a claim cell must only show a package check, got {body[:2]}"


def test_claim_ids_name_their_chapter() -> None:
    """A claim id starts with its notebook's prefix (``ch04.``; the papers' notebook: ``chicl.``)."""
    prefixes = {c.claim_prefix for c in catalog.available()}
    for cid in declared_claims():
        assert cid.split(".")[0] in prefixes, f"claim id {cid!r} names no notebook of chapters/"
        assert catalog.by_claim_prefix(cid) is not None
