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


NUMBER_WORDS = {"three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}


def _readme_commands() -> list[str]:
    return [c.strip() for c in re.findall(r"```(?:bash|sh)?\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)]


def test_readme_command_1_installs_the_cpu_build_of_torch_before_the_companion():
    """PyPI's Linux torch is the CUDA build (~2.7 GB of NVIDIA packages): command 1 takes the CPU build from PyTorch's
    CPU index first, at the version CI tests; Binder's postBuild and the site's landing page install the same way."""
    command = next(c for c in _readme_commands() if "companion reproduce" in c)
    torch_step, install, run = command.split(" && ")
    assert torch_step == ("python3 -m pip install --no-deps --extra-index-url https://download.pytorch.org/whl/cpu "
                          "-c .ci/constraints.txt torch")
    assert install == "python3 -m pip install -c .ci/constraints.txt -e ." and run == "python3 -m companion reproduce"
    for other in ("binder/postBuild", "book/intro.md", "book/zh/intro.md"):
        assert f"{torch_step} && {install}" in (ROOT / other).read_text(encoding="utf-8"), other


def test_readme_pyproject_and_the_environments_agree_on_python():
    """requires-python's floor is the README's, and both conda environments (root's, Binder's) pick a Python in it."""
    floor = re.fullmatch(r">=\s*3\.(\d+)", tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
                         ["requires-python"].strip())
    assert floor, "requires-python should be a floor, >=3.N"
    readme = re.search(r"^Python 3\.(\d+) or newer", (ROOT / "README.md").read_text(), flags=re.M)
    assert readme and readme[1] == floor[1], "README's Python differs from pyproject's requires-python"
    for env in ("environment.yml", "binder/environment.yml"):
        pinned = re.search(r"^\s+- python=3\.(\d+)", (ROOT / env).read_text(), flags=re.M)
        assert pinned and int(pinned[1]) >= int(floor[1]), env


def test_the_docs_count_the_packages_layers():
    packages = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    layers = len([p for p in packages if p != "companion"])  # kit, core, experiments, solutions, tools
    for doc in ("README.md", "CONTRIBUTING.md", "docs/architecture.md"):
        counts = re.findall(r"\b(three|four|five|six|seven) layers\b", (ROOT / doc).read_text(encoding="utf-8"))
        assert counts and {NUMBER_WORDS[c] for c in counts} == {layers}, f"{doc} says {counts}, the package has {layers}"
