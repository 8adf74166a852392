"""The package's five layers point only down, and no module imports itself back (docs/architecture.md).

kit → (nothing of the package);  core → kit;  experiments → core, kit (never another chapter's module);
solutions → experiments, core, kit;  tools → anything.  Every ``import`` counts, including those inside functions.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "companion"
ALLOWED = {"kit": {"kit"}, "core": {"kit", "core"}, "experiments": {"kit", "core"},
           "solutions": {"kit", "core", "experiments", "solutions"},
           "tools": {"kit", "core", "experiments", "solutions", "tools"}}

#: The one notebook that is not a book chapter builds on one: the papers behind §14.3 reuse chapter 14's
#: in-context-learning tasks, baselines and learner (Akyürek et al., Dherin et al. §4.3) rather than a second copy.
#: Debt: what they share belongs in core (moving it changes ch14's digest, so it waits for a ch14 sweep).
#: Chapter 13's scale curve is the same chapter's task at other sizes: it trains through ch13_complexity's
#: run_composition (its cache and its model), so that every point trains exactly as the notebook's runs do.
#: Its figure-by-figure reading (ch13_scale_figures) reads the curve's runs with the chapter's own measures.
#: Chapter 13's second part (ch13b_prediction) rewires the same task: it names its anchor pairs and members as the
#: first part does.
BUILDS_ON = {"companion.experiments.icl_papers": {"companion.experiments.ch14_phenomena"},
             "companion.experiments.ch13_scale": {"companion.experiments.ch13_complexity"},
             "companion.experiments.ch13b_prediction": {"companion.experiments.ch13_complexity"},
             "companion.experiments.ch13_scale_figures": {"companion.experiments.ch13_scale",
                                                          "companion.experiments.ch13_complexity"}}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """Dotted companion modules imported by ``path`` (``from companion.core import nets`` → companion.core.nets)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path.name}: write absolute imports (companion.…), not relative ones"
            if node.module and node.module.split(".")[0] == "companion":
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    found.add(full if full in MODULES else node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "companion")
    return found


FILES = sorted(PACKAGE.rglob("*.py"))
MODULES = {module_name(p) for p in FILES}
GRAPH = {module_name(p): imports_of(p) for p in FILES}


def layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in ALLOWED else None


def test_every_module_lives_in_one_of_the_five_layers() -> None:
    loose = [m for m in MODULES if layer(m) is None and m not in ("companion", "companion.__main__")]
    assert not loose, f"modules outside kit/core/experiments/solutions/tools: {loose}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if layer(m)))
def test_imports_point_down(module: str) -> None:
    own = layer(module)
    bad = sorted(t for t in GRAPH[module] if layer(t) not in ALLOWED[own] and t not in BUILDS_ON.get(module, ()))
    assert not bad, f"{module} ({own}) may import only {sorted(ALLOWED[own])}; it imports {bad}"
    if own == "experiments":
        others = sorted(t for t in GRAPH[module] if layer(t) == "experiments" and t != module
                        and t not in BUILDS_ON.get(module, ()))
        assert not others, f"{module} imports another chapter's module {others}: move what they share to core"


def test_no_import_cycle() -> None:
    state: dict[str, int] = {}

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for t in GRAPH.get(m, ()):
            if t == m or t not in GRAPH:
                continue
            if state.get(t) == 1:
                raise AssertionError("import cycle: " + " → ".join(path[path.index(t):] + [t]) if t in path
                                     else f"import cycle through {t}")
            if t not in state:
                visit(t, path + [t])
        state[m] = 2

    for m in sorted(GRAPH):
        if m not in state:
            visit(m, [m])


def test_the_check_sees_a_violation(tmp_path: Path) -> None:
    """Negative control: a kit module importing core is caught by the same walk."""
    bad = tmp_path / "bad.py"
    bad.write_text("from companion.core import nets\n")
    assert layer(next(iter(imports_of(bad)))) == "core"
