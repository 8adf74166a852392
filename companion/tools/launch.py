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
A chapter's first code cell, tagged :data:`INSTALL_TAG`, installs it there, and does nothing where it is installed
(locally, in CI, on Binder): :func:`install_cell`.  The robustness digest leaves that cell out
(:func:`companion.tools.robustness.chapter_code`): it cannot change a result; the site does not show it.
"""

from __future__ import annotations

import re
from typing import Any

import nbformat

#: The tag of a chapter's install cell (jupytext percent: ``# %% tags=["launch-install"]``).
INSTALL_TAG = "launch-install"

#: The text of the install cell; ``{repository}`` is the repository's address (``repository.url``).
INSTALL_CELL = '''\
# Colab or a JupyterHub without the companion: install it from its repository (a no-op where it is installed)
import importlib, importlib.util, subprocess, sys
if importlib.util.find_spec("companion") is None:
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "git+{repository}"], check=True)
    importlib.invalidate_caches()'''

#: A repository the launch buttons can use: Colab and the theme's Binder links know GitHub's addresses only.
GITHUB_REPOSITORY = re.compile(r"https://github\.com/[A-Za-z0-9][\w.-]*/[\w.-]+")
#: The launch services' settings in ``launch_buttons`` (their addresses; an empty one shows no button).
LAUNCH_SERVICES = ("binderhub_url", "colab_url", "jupyterhub_url")


def install_cell(repository: str) -> str:
    """The install cell's source for ``repository`` (its address: ``https://github.com/OWNER/REPO``)."""
    return INSTALL_CELL.format(repository=check_repository(repository))


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
    return tr("**In a browser, without installing anything:** the launch button (the rocket at the top of each chapter "
              "page) opens that chapter's notebook on {services}; its first cell installs the companion where it is "
              "missing. The repository: <{url}>.", language).format(services=", ".join(services), url=url) + "\n"
