"""pyproject.toml and environment.yml list the same packages; CI installs the CPU build of torch."""

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONDA_NAMES = {"pytorch": "torch"}


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[; ]", requirement.strip(), maxsplit=1)[0].lower()


def test_pyproject_and_environment_yml_agree():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = {_name(r) for r in project["dependencies"]}
    wanted |= {_name(r) for extra in project["optional-dependencies"].values() for r in extra}
    text = (ROOT / "environment.yml").read_text()
    block = text.split("dependencies:", 1)[1]
    conda = set()
    for line in block.splitlines():
        match = re.match(r"\s+- ([A-Za-z][A-Za-z0-9_.-]*)", line)
        if match and match.group(1) not in ("python", "pip"):
            conda.add(CONDA_NAMES.get(match.group(1).lower(), match.group(1).lower()))
    assert wanted == conda


def test_ci_runs_the_readme_test_command_with_the_cpu_torch_constraint():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    commands = re.findall(r"```(?:bash|sh)?\n(.*?)```", readme, flags=re.S)
    test_command = next(c.strip() for c in commands if "pytest" in c)
    assert test_command in ci
    assert "-c .ci/constraints.txt" in test_command
    assert re.search(r"^torch==\d", (ROOT / ".ci" / "constraints.txt").read_text(), flags=re.M)
