"""Running a chapter elsewhere: the book site's launch buttons (Binder, Colab, a JupyterHub) and the cell that installs
the companion where a notebook is opened without it.

**The one setting.** ``repository.url`` in ``book/_config.yml`` (Jupyter Book's own key) names the repository the
site was built from, e.g. ``https://github.com/OWNER/REPO``; ``python -m companion book --repository URL`` sets it for
one build.  Empty (the default: the project has no public address yet), the site shows no repository link and no
launch button.  Set, every page gets a link to the repository, and every chapter page a launch menu: Binder and Colab,
and a JupyterHub (nbgitpuller) when ``launch_buttons.jupyterhub_url`` (``--jupyterhub URL``) names one.

**Where the buttons point.** The site's chapter pages are staged copies of ``chapters/chNN_*.ipynb``
(:mod:`companion.tools.site`), not files of the repository.  The theme (sphinx-book-theme) builds each launch link as
``<repository>/<branch>/<path_to_book>/<page>.ipynb``; with ``path_to_book: chapters`` that is the chapter's committed
notebook, whose name the page keeps.  (The edit button, which would read ``path_to_book`` as the book's folder, stays
off.)

**The install cell.** Binder builds its image from ``binder/`` (README command 1's install: the CPU build of torch,
then the companion); a JupyterHub (nbgitpuller) and Colab open the notebook in a Python that may lack the package.
Every chapter's first code cell, tagged :data:`INSTALL_TAG`, installs it there and does nothing where it is installed
(locally, in CI, on Binder): :func:`install_cell`.  Opened inside a clone of the repository (a JupyterHub's
nbgitpuller puts one in the reader's home) it installs that clone; elsewhere (Colab) it installs from the repository's
address, which the cell carries: ``python -m companion launch --repository URL`` writes that address into
``book/_config.yml`` and into every chapter's cell (:func:`write_install_cells`), so that the one setting and the
notebooks Colab opens agree.  The robustness digest leaves that cell out
(:func:`companion.tools.robustness.chapter_code`): it cannot change a result; the site does not show it.
"""

from __future__ import annotations

import re
from typing import Any

import nbformat

#: The tag of a chapter's install cell (jupytext percent: ``# %% tags=["launch-install"]``).
INSTALL_TAG = "launch-install"

#: The text of the install cell; ``{repository}`` is the repository's address (``repository.url``; empty: none yet).
INSTALL_CELL = '''\
# Opened without the companion (Colab, a JupyterHub): install it.  Where it is installed (locally, CI, Binder): nothing.
import importlib, importlib.util, pathlib, subprocess, sys
REPOSITORY = "{repository}"  # written by `python -m companion launch --repository URL`
if importlib.util.find_spec("companion") is None:
    pip = [sys.executable, "-m", "pip", "install", "-q"]
    if importlib.util.find_spec("torch") is None:  # the CPU build: PyPI's Linux torch is the CUDA one (~2.7 GB)
        subprocess.run([*pip, "--extra-index-url", "https://download.pytorch.org/whl/cpu", "torch"], check=True)
    here = pathlib.Path.cwd().resolve()
    clone = next((p for p in (here, *here.parents) if (p / "companion" / "__init__.py").is_file()), None)
    if clone is None and not REPOSITORY:
        raise SystemExit("The companion is not installed and this notebook names no repository to install it from: "
                         "run `pip install -e .` in a clone of the repository.")
    subprocess.run([*pip, "-e", str(clone)] if clone else [*pip, f"git+{{REPOSITORY}}"], check=True)
    importlib.invalidate_caches()'''

#: A repository the launch buttons can use: Colab and the theme's Binder links know GitHub's addresses only.
GITHUB_REPOSITORY = re.compile(r"https://github\.com/[A-Za-z0-9][\w.-]*/[\w.-]+")
#: The launch services' settings in ``launch_buttons`` (their addresses; an empty one shows no button).
LAUNCH_SERVICES = ("binderhub_url", "colab_url", "jupyterhub_url")


def install_cell(repository: str = "") -> str:
    """The install cell's source for ``repository`` (its address, ``https://github.com/OWNER/REPO``; empty: none)."""
    return INSTALL_CELL.format(repository=check_repository(repository) if repository else "")


def is_install_cell(cell: Any) -> bool:
    """Whether ``cell`` (of a notebook or of a jupytext source) is a chapter's install cell."""
    return cell.cell_type == "code" and INSTALL_TAG in cell.get("metadata", {}).get("tags", [])


def drop_install_cells(nb: nbformat.NotebookNode) -> None:
    """Remove ``nb``'s install cell: on the site it would only say how the notebook installs itself elsewhere."""
    nb.cells = [cell for cell in nb.cells if not is_install_cell(cell)]


def check_repository(url: str) -> str:
    """``url`` without a trailing slash or ``.git``, or a ValueError naming it when it is not a GitHub repository."""
    url = url.strip().removesuffix("/").removesuffix(".git")
    if not GITHUB_REPOSITORY.fullmatch(url):
        raise ValueError(f"--repository {url!r} is not a GitHub repository's address (https://github.com/OWNER/REPO): "
                         "Colab and Binder's launch links know GitHub's addresses only")
    return url


def configure(config: dict, repository: str | None = None, jupyterhub: str | None = None) -> dict:
    """The book's configuration (``book/_config.yml``, parsed) with its launch settings made whole: ``repository``
    and ``jupyterhub`` (when given) replace the file's ``repository.url`` and ``launch_buttons.jupyterhub_url``.
    Without a repository the launch services' addresses are dropped and the repository link is off: no button
    appears (the theme would fail on a launch service without a repository)."""
    config = {**config, "repository": dict(config.get("repository") or {}),
              "launch_buttons": dict(config.get("launch_buttons") or {}), "html": dict(config.get("html") or {})}
    url = (repository if repository is not None else config["repository"].get("url")) or ""
    launch = config["launch_buttons"]
    if jupyterhub is not None:
        launch["jupyterhub_url"] = jupyterhub.strip().removesuffix("/")
    if url:
        config["repository"]["url"] = check_repository(url)
    else:
        config["repository"].pop("url", None)
        for service in LAUNCH_SERVICES:
            launch.pop(service, None)
    config["html"]["use_repository_button"] = bool(url)
    return config


def launch_markdown(settings: dict, language: str = "en") -> str:
    """The landing page's paragraph on running a chapter online (``_launch.md``, included by ``intro.md``): where the
    launch buttons are and the repository's address; empty without a repository (the site then promises nothing)."""
    from companion.kit.i18n import tr

    url = (settings.get("repository") or {}).get("url")
    if not url:
        return ""
    services = ["Binder", "Colab"] + (["JupyterHub"] if settings["launch_buttons"].get("jupyterhub_url") else [])
    listed = ("、".join(services[:-1]) + " 或 " if language == "zh" else ", ".join(services[:-1]) + " or ") + services[-1]
    return tr("**In a browser, without installing anything:** the launch button (the rocket at the top of each chapter "
              "page) opens that chapter's notebook on {services}; its first cell installs the companion where it is "
              "missing. The repository: <{url}>.", language).format(services=listed, url=url) + "\n"


def cell_repository(source: str) -> str:
    """The address an install cell's source names (``REPOSITORY = "…"``; empty when it names none)."""
    found = re.search(r'^REPOSITORY = "([^"]*)"', source, re.MULTILINE)
    return found.group(1) if found else ""


def _with_cell_in_source(text: str, cell: str) -> str:
    """A jupytext percent source with its install cell set to ``cell``: replaced where it has one, otherwise inserted
    before its first code cell."""
    marker = re.compile(r"^# %%(.*)$", re.MULTILINE)
    block = f'# %% tags=["{INSTALL_TAG}"]\n{cell}\n\n'
    cells = list(marker.finditer(text))
    for here, after in zip(cells, [*cells[1:], None]):
        if INSTALL_TAG in here.group(1):
            return text[:here.start()] + block + (text[after.start():] if after else "")
    first_code = next((m for m in cells if not m.group(1).strip().startswith("[")), None)
    if first_code is None:
        raise ValueError("the source has no code cell to put the install cell before")
    return text[:first_code.start()] + block + text[first_code.start():]


def _with_cell_in_notebook(nb: nbformat.NotebookNode, cell: str) -> nbformat.NotebookNode:
    """``nb`` with its install cell set to ``cell``, as ``python -m companion sync`` would leave it: inserted before the
    first code cell with the first execution count (the others move up by one, as a run that executed it too would
    number them), no output (where the companion is installed it runs nothing)."""
    from companion.tools.runner import stable_cell_ids

    existing = [c for c in nb.cells if is_install_cell(c)]
    if existing:
        existing[0].source = cell
    else:
        new = nbformat.v4.new_code_cell(cell, metadata={"tags": [INSTALL_TAG]}, execution_count=1)
        for c in nb.cells:
            if c.cell_type == "code" and c.get("execution_count"):
                c.execution_count += 1
        at = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code")
        nb.cells.insert(at, new)
    return stable_cell_ids(nb)


def write_install_cells(sources: list, repository: str = "") -> list:
    """Give every chapter (its jupytext ``sources`` and their paired, executed ``.ipynb``) the install cell of
    ``repository``; returns the files that changed.  The notebooks are edited, not run again: the cell prints
    nothing where the companion is installed, and the chapter's other cells and outputs stay as they are."""
    cell = install_cell(repository)
    changed = []
    for source in sources:
        text = source.read_text(encoding="utf-8")
        new_text = _with_cell_in_source(text, cell)
        if new_text != text:
            source.write_text(new_text, encoding="utf-8")
            changed.append(source)
        notebook = source.with_suffix(".ipynb")
        nb = nbformat.read(notebook, as_version=4)
        if [c.source for c in nb.cells if is_install_cell(c)] != [cell]:
            nbformat.write(_with_cell_in_notebook(nb, cell), notebook)
            changed.append(notebook)
    return changed


def set_repository(config_file: Any, repository: str = "", jupyterhub: str | None = None) -> None:
    """Write ``repository`` (checked: :func:`check_repository`; empty: none) and, when given, ``jupyterhub`` into the
    book's configuration file as ``repository.url`` and ``launch_buttons.jupyterhub_url``, keeping its comments."""
    text = config_file.read_text(encoding="utf-8")
    url = check_repository(repository) if repository else ""
    text, found = re.subn(r'^(repository:\n(?:  .*\n|\s*#.*\n)*?  url: )"[^"\n]*"', rf'\g<1>"{url}"', text,
                          count=1, flags=re.MULTILINE)
    if not found:
        raise ValueError(f"{config_file} has no repository.url line to set")
    if jupyterhub is not None:
        hub = jupyterhub.strip().removesuffix("/")
        text, found = re.subn(r'^(  jupyterhub_url: )"[^"\n]*"', rf'\g<1>"{hub}"', text, count=1, flags=re.MULTILINE)
        if not found:
            raise ValueError(f"{config_file} has no launch_buttons.jupyterhub_url line to set")
    config_file.write_text(text, encoding="utf-8")


def cells_repositories(sources: list) -> set:
    """The addresses the install cells of the chapters' jupytext ``sources`` name (``""``: none)."""
    from companion.tools.runner import load_source

    return {cell_repository(c.source) for source in sources for c in load_source(source).cells if is_install_cell(c)}
