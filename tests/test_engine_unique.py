"""One training engine and one way in for randomness, checked on the package's source (docs/architecture.md).

* ``backward()`` and ``optimizer.step()`` run in one place, :func:`companion.core.train.descend`;
* ``History`` is the one record type: no other class named ``*History``;
* no package function seeds or draws from torch's, NumPy's or Python's global random state.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import torch

from companion.core.train import History, run

PACKAGE = Path(__file__).resolve().parents[1] / "companion"
SOURCES = {p.relative_to(PACKAGE.parent).as_posix(): p.read_text(encoding="utf-8") for p in sorted(PACKAGE.rglob("*.py"))}
ENGINE = "companion/core/train.py"


def calls(pattern: str) -> dict[str, int]:
    found = {path: len(re.findall(pattern, text)) for path, text in SOURCES.items()}
    return {path: n for path, n in found.items() if n}


def test_backward_and_optimiser_steps_run_only_in_the_engine() -> None:
    assert calls(r"\.backward\(") == {ENGINE: 1}
    assert set(calls(r"\b(?:opt|optimizer|optimiser|optim)\w*\.step\(")) == {ENGINE}


def test_one_history_type() -> None:
    classes = {(path, node.name) for path, text in SOURCES.items() for node in ast.walk(ast.parse(text))
               if isinstance(node, ast.ClassDef) and node.name.endswith("History")}
    assert classes == {(ENGINE, "History")}


GLOBAL_RNG = (r"torch\.manual_seed\(|torch\.seed\(|np\.random\.seed\(|(?<![\w.])random\.seed\("
              r"|np\.random\.(?:rand|randn|randint|normal|uniform|choice|permutation|shuffle)\("
              r"|torch\.cuda\.manual_seed")


def test_no_package_function_touches_the_global_rng() -> None:
    assert calls(GLOBAL_RNG) == {}


def test_the_checks_see_what_they_look_for() -> None:
    """Negative control: the same patterns find a loop of one's own and a global seeding."""
    loop = "opt.zero_grad()\nloss.backward()\nopt.step()\ntorch.manual_seed(0)\nnp.random.permutation(5)\n"
    assert len(re.findall(r"\.backward\(", loop)) == 1
    assert len(re.findall(GLOBAL_RNG, loop)) == 2


def test_a_run_does_not_move_the_global_rng() -> None:
    before = torch.random.get_rng_state().clone(), np.random.get_state()[1].copy()
    gen = torch.Generator().manual_seed(0)
    hist = run(lambda step: torch.randn(3, generator=gen), steps=5, record=lambda s: {"s": s}, progress=False)
    assert isinstance(hist, History)
    assert torch.equal(torch.random.get_rng_state(), before[0]) and np.array_equal(np.random.get_state()[1], before[1])
