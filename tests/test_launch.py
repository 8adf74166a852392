"""Launching a chapter elsewhere (companion/tools/launch.py): the site's launch buttons open each chapter's committed
notebook, the install cell is a no-op where the companion is installed and leaves the robustness digest alone, and
an explorer's "open this notebook in JupyterLab" leads to the commands that do it.

The launch links are checked offline: a book of tiny notebooks named like the real chapters is built with a fake
repository and JupyterHub, and every link's target must be a file of this repository.
"""

from __future__ import annotations

import html as html_lib
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import parse_qs, urlsplit

import nbformat
import pytest
import yaml
from browser_support import PageLog, built_site, chromium_browser, require_jupyter_book, serve

from companion.tools import catalog, launch as launching, robustness, site

REPOSITORY, BRANCH, HUB = "https://github.com/example/dl-phenomena-companion", "main", "https://hub.example.edu"
NOTEBOOKS = site.chapter_notebooks()
SERVICES = {"Binder", "Colab", "JupyterHub"}


def repository_path(url: str) -> tuple[str, str]:
    """The launch service a link opens and the repository file it opens there (``chapters/ch04_….ipynb``); each
    service's own spelling of the repository and branch is checked on the way."""
    parts = urlsplit(url)
    query = parse_qs(parts.query)
    owner_repo = REPOSITORY.removeprefix("https://github.com/")
    if parts.netloc == "mybinder.org":
        assert parts.path == f"/v2/gh/{owner_repo}/{BRANCH}", url
        return "Binder", query["urlpath"][0].removeprefix("lab/tree/")
    if parts.netloc == "colab.research.google.com":
        prefix = f"/github/{owner_repo}/blob/{BRANCH}/"
        assert parts.path.startswith(prefix), url
        return "Colab", parts.path.removeprefix(prefix)
    if url.startswith(HUB):  # nbgitpuller clones the repository into a folder named after it
        assert query["repo"] == [REPOSITORY] and query["branch"] == [BRANCH], url
        return "JupyterHub", query["urlpath"][0].removeprefix(f"lab/tree/{owner_repo.split('/')[1]}/")
    raise AssertionError(f"a link to an unknown service: {url}")


def launch_links(page: str) -> list[str]:
    """The addresses in a built page's launch menu."""
    menu = page.split('class="dropdown dropdown-launch-buttons"', 1)
    if len(menu) == 1:
        return []
    return [html_lib.unescape(h) for h in re.findall(r'href="([^"]+)"', menu[1].split("</ul>", 1)[0])]


def tiny_chapters(folder: Path) -> Path:
    """A notebook per real chapter (same name), each a title, its install cell and one code cell."""
    folder.mkdir(parents=True, exist_ok=True)
    for notebook in NOTEBOOKS:
        nb = nbformat.v4.new_notebook()
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        install = nbformat.v4.new_code_cell(launching.install_cell(REPOSITORY))
        install.metadata["tags"] = [launching.INSTALL_TAG]
        nb.cells = [nbformat.v4.new_markdown_cell(f"# {site.notebook_title(notebook)}\n\nText."), install,
                    nbformat.v4.new_code_cell("x = 1")]
        nbformat.write(nb, folder / notebook.name)
    return folder


@pytest.fixture(scope="module")
def launch_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Both editions of a book of tiny chapters, built (strict) with a repository and a JupyterHub."""
    require_jupyter_book()
    base = tmp_path_factory.mktemp("launch")
    return site.build(base / "out", chapters_dir=tiny_chapters(base / "chapters"), repository=REPOSITORY + "/",
                      jupyterhub=HUB)


def test_every_launch_link_opens_its_chapters_committed_notebook(launch_site: Path) -> None:
    """Each chapter page of both editions launches on Binder, Colab and the JupyterHub the repository's own
    ``chapters/<page>.ipynb`` (the page itself is a staged copy that is not in the repository); Binder finds its
    environment in ``binder/``; every page links to the repository; the site does not show the install cell."""
    for folder in ("", "zh/"):
        for notebook in NOTEBOOKS:
            page = (launch_site / f"{folder}{notebook.stem}.html").read_text(encoding="utf-8")
            targets = dict(repository_path(url) for url in launch_links(page))
            assert set(targets) == SERVICES, f"{folder}{notebook.stem}: {sorted(targets)}"
            for service, path in targets.items():
                assert path == f"chapters/{notebook.name}", (folder, service, path)
                assert (catalog.ROOT / path).is_file(), f"{service} would open {path}, which is not in the repository"
            assert "find_spec" not in page, f"{folder}{notebook.stem} shows the install cell"
        for name in ("intro", "glossary", "claims"):
            page = (launch_site / f"{folder}{name}.html").read_text(encoding="utf-8")
            assert f'href="{REPOSITORY}"' in page, f"{folder}{name}.html has no link to the repository"
            assert not launch_links(page), f"{folder}{name}.html is no notebook: no launch menu"
    assert (catalog.ROOT / "binder" / "environment.yml").is_file() and (catalog.ROOT / "binder" / "postBuild").is_file()
    landing = (launch_site / "zh" / "intro.html").read_text(encoding="utf-8")
    assert "Binder、Colab 或 JupyterHub" in landing and "在浏览器中运行" in landing
    assert "Binder, Colab or JupyterHub" in (launch_site / "intro.html").read_text(encoding="utf-8")


def test_without_a_repository_the_site_shows_no_launch_button_and_no_repository_link(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """The default (``repository.url`` empty: no public address yet): no button, no link, no promise of one."""
    assert yaml.safe_load((site.BOOK_DIR / "_config.yml").read_text(encoding="utf-8"))["repository"]["url"] == ""
    html = built_site(tmp_path_factory)
    for page in ["intro", *(p.stem for p in NOTEBOOKS)]:
        text = (html / f"{page}.html").read_text(encoding="utf-8")
        assert not launch_links(text) and "github.com" not in text and "mybinder" not in text, page
    assert "rocket" not in (html / "intro.html").read_text(encoding="utf-8")


def test_the_launch_settings_follow_the_one_repository_setting() -> None:
    config = yaml.safe_load((site.BOOK_DIR / "_config.yml").read_text(encoding="utf-8"))
    empty = launching.configure(config)
    assert not empty["html"]["use_repository_button"] and "url" not in empty["repository"]
    assert not set(launching.LAUNCH_SERVICES) & set(empty["launch_buttons"])
    given = launching.configure(config, REPOSITORY + ".git", HUB + "/")
    assert given["repository"] == {"url": REPOSITORY, "branch": "main", "path_to_book": "chapters"}
    assert given["html"]["use_repository_button"] and given["launch_buttons"]["jupyterhub_url"] == HUB
    assert given["launch_buttons"]["binderhub_url"] and given["launch_buttons"]["colab_url"]
    in_file = launching.configure({**config, "repository": {**config["repository"], "url": REPOSITORY}})
    assert in_file["html"]["use_repository_button"]  # the config's own setting works without --repository
    with pytest.raises(ValueError, match="gitlab.com/x/y"):
        launching.configure(config, "https://gitlab.com/x/y")


def _install_cell_runs(monkeypatch: pytest.MonkeyPatch, installed: bool, folder: Path = catalog.ROOT / "chapters",
                       repository: str = REPOSITORY, torch: bool = True) -> list[list[str]]:
    """Run the install cell's code in ``folder`` with pip replaced by a recorder and the companion (and torch) made to
    look missing; return the commands it would have run."""
    import importlib.util
    import subprocess

    calls: list[list[str]] = []
    monkeypatch.setattr(subprocess, "run", lambda command, **kw: calls.append(command))
    monkeypatch.chdir(folder)
    missing = set() if installed else {"companion"} | (set() if torch else {"torch"})
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name in missing else real(name, *a))
    exec(compile(launching.install_cell(repository), "install-cell", "exec"), {})
    return calls


def test_the_install_cell_installs_the_companion_only_where_it_is_missing(monkeypatch: pytest.MonkeyPatch,
                                                                         tmp_path: Path) -> None:
    """Installed (locally, in CI, on Binder): nothing.  Missing in a clone (a JupyterHub's nbgitpuller opens
    ``chapters/`` of one): that clone.  Missing elsewhere (Colab): the repository the cell names, or one clear line
    when it names none.  Torch missing too: its CPU build first."""
    pip = [sys.executable, "-m", "pip", "install", "-q"]
    assert _install_cell_runs(monkeypatch, installed=True) == []
    assert _install_cell_runs(monkeypatch, installed=True, repository="") == []
    assert _install_cell_runs(monkeypatch, installed=False) == [[*pip, "-e", str(catalog.ROOT.resolve())]]
    assert _install_cell_runs(monkeypatch, installed=False, folder=tmp_path) == [[*pip, f"git+{REPOSITORY}"]]
    assert _install_cell_runs(monkeypatch, installed=False, folder=tmp_path, torch=False) == [
        [*pip, "--extra-index-url", "https://download.pytorch.org/whl/cpu", "torch"], [*pip, f"git+{REPOSITORY}"]]
    with pytest.raises(SystemExit, match=r"names no repository .* `pip install -e \.` in a clone"):
        _install_cell_runs(monkeypatch, installed=False, folder=tmp_path, repository="")


TINY = '''# %% [markdown]
# # Chapter 97 — Tiny

# %%{tags}
{install}

# %%
x = 1
'''


def test_the_install_cell_is_left_out_of_the_chapter_digest(tmp_path: Path) -> None:
    """It cannot change a result: adding it (or a new repository address) keeps a sweep's cached runs; the same code
    in an untagged cell is code like any other."""
    source = tmp_path / "ch97_tiny.py"

    def digest(text: str) -> str:
        source.write_text(text)
        return robustness.chapter_digest(SimpleNamespace(source=source))  # the digest reads only the source

    without = digest("# %% [markdown]\n# # Chapter 97 — Tiny\n\n# %%\nx = 1\n")
    tagged = ' tags=["launch-install"]'
    cell = launching.install_cell(REPOSITORY)
    assert digest(TINY.format(tags=tagged, install=cell)) == without
    assert digest(TINY.format(tags=tagged, install=launching.install_cell(REPOSITORY + "-fork"))) == without
    assert digest(TINY.format(tags="", install=cell)) != without


def test_every_chapters_install_cell_names_the_configurations_repository() -> None:
    """Each chapter's first code cell, in its .py and its .ipynb, is ``launch.install_cell`` of the address in
    ``book/_config.yml`` (empty: none yet), as ``python -m companion launch`` writes it."""
    from companion.tools.runner import load_source

    url = yaml.safe_load((site.BOOK_DIR / "_config.yml").read_text(encoding="utf-8"))["repository"]["url"]
    for source in catalog.sources():
        for nb in (load_source(source), nbformat.read(source.with_suffix(".ipynb"), as_version=4)):
            code = [c for c in nb.cells if c.cell_type == "code"]
            assert launching.is_install_cell(code[0]) and code[0].source == launching.install_cell(url), (
                f"{source.stem}: run `python -m companion launch`")
            assert not any(launching.is_install_cell(c) for c in code[1:]), source.stem
            assert not code[0].get("outputs"), f"{source.stem}: the install cell printed something"


def test_the_launch_command_writes_the_one_setting_into_the_config_and_every_install_cell(tmp_path: Path) -> None:
    """``python -m companion launch --repository URL`` on copies of the configuration and of two chapters: the
    address lands in ``repository.url`` (comments kept) and in both files of each chapter, run again it changes
    nothing, and a chapter without the cell gets it before its first code cell, the notebook's counts moved up."""
    import shutil

    config = tmp_path / "_config.yml"
    shutil.copy(site.BOOK_DIR / "_config.yml", config)
    sources = []
    for source in catalog.sources()[:2]:
        for suffix in (".py", ".ipynb"):
            shutil.copy(source.with_suffix(suffix), tmp_path / source.with_suffix(suffix).name)
        sources.append(tmp_path / source.name)
    before = config.read_text(encoding="utf-8")
    launching.set_repository(config, REPOSITORY + ".git", HUB + "/")
    after = yaml.safe_load(config.read_text(encoding="utf-8"))
    assert after["repository"]["url"] == REPOSITORY and after["launch_buttons"]["jupyterhub_url"] == HUB
    assert [l for l in config.read_text(encoding="utf-8").splitlines() if l.lstrip().startswith("#")] == \
        [l for l in before.splitlines() if l.lstrip().startswith("#")]
    assert sorted(launching.write_install_cells(sources, REPOSITORY)) == sorted(
        p.with_suffix(s) for p in sources for s in (".py", ".ipynb"))
    assert launching.write_install_cells(sources, REPOSITORY) == []
    for source in sources:
        cells = [c for c in nbformat.read(source.with_suffix(".ipynb"), as_version=4).cells if c.cell_type == "code"]
        assert launching.cell_repository(cells[0].source) == REPOSITORY and launching.is_install_cell(cells[0])
        assert [c.source for c in load_cells(source)][:1] == [launching.install_cell(REPOSITORY)]
    bare = sources[0].with_suffix(".ipynb")  # a notebook without the cell, as before this command existed
    nb = nbformat.read(bare, as_version=4)
    launching.drop_install_cells(nb)
    counts = [c.execution_count for c in nb.cells if c.cell_type == "code"]
    nbformat.write(nb, bare)
    launching.write_install_cells(sources[:1], REPOSITORY)
    code = [c for c in nbformat.read(bare, as_version=4).cells if c.cell_type == "code"]
    assert [c.execution_count for c in code] == [1] + [n + 1 for n in counts]
    with pytest.raises(ValueError, match="gitlab"):
        launching.set_repository(config, "https://gitlab.com/x/y")


def load_cells(source: Path) -> list[Any]:
    """The code cells of a jupytext source."""
    from companion.tools.runner import load_source

    return [c for c in load_source(source).cells if c.cell_type == "code"]


@pytest.fixture(scope="module")
def browser(launch_site: Path) -> Iterator[Any]:
    with chromium_browser() as browser:
        yield browser


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_reader_opens_the_launch_menu_and_the_explorers_commands(language: str, launch_site: Path, browser: Any,
                                                                  tmp_path_factory: pytest.TempPathFactory) -> None:
    """In Chromium: a chapter page's rocket opens a menu of Binder, JupyterHub and Colab; on the real site, an
    explorer's "open this notebook in JupyterLab" leads to the landing page's section with the install command
    and ``jupyter lab chapters/``."""
    shots = tmp_path_factory.mktemp("screenshots-launch")
    folder = "zh/" if language == "zh" else ""
    with serve(launch_site) as url:
        tab = browser.new_page(viewport={"width": 1280, "height": 800})
        log = PageLog(tab)
        tab.goto(f"{url}/{folder}{NOTEBOOKS[0].stem}.html")
        tab.locator(".dropdown-launch-buttons button").click()
        items = tab.locator(".dropdown-launch-buttons .dropdown-menu a")
        items.first.wait_for(state="visible")
        assert {items.nth(i).inner_text().strip() for i in range(items.count())} == SERVICES
        tab.screenshot(path=str(shots / f"launch-menu-{language}.png"))
        assert not log.errors, log.errors
        tab.close()
    with serve(built_site(tmp_path_factory)) as url:
        tab = browser.new_page(viewport={"width": 1280, "height": 800})
        log = PageLog(tab)
        tab.goto(f"{url}/{folder}{NOTEBOOKS[0].stem}.html")
        tab.locator(".companion-explorer-note a").first.click()
        tab.wait_for_url(re.compile(r"intro\.html#run-it-yourself$"))
        section = tab.locator("section#run-it-yourself")
        assert "jupyter lab chapters/" in section.inner_text()
        assert "--extra-index-url https://download.pytorch.org/whl/cpu" in section.inner_text()
        assert section.evaluate("s => s.getBoundingClientRect().top") < 200  # scrolled to it
        tab.screenshot(path=str(shots / f"run-it-yourself-{language}.png"))
        assert not log.errors, log.errors
        tab.close()


def test_the_launch_command_sets_the_address_and_refuses_a_bad_one_in_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    """``python -m companion launch`` on a copy of the book's folder and of one chapter: a GitHub address lands in the
    configuration and the chapter's cell; another address is refused with one line (exit status 2), nothing written."""
    import shutil

    from companion.__main__ import main

    book = tmp_path / "book"
    book.mkdir()
    shutil.copy(site.BOOK_DIR / "_config.yml", book / "_config.yml")
    source = catalog.sources()[0]
    for suffix in (".py", ".ipynb"):
        shutil.copy(source.with_suffix(suffix), tmp_path / source.with_suffix(suffix).name)
    monkeypatch.setattr(site, "BOOK_DIR", book)
    monkeypatch.setattr(catalog, "sources", lambda: [tmp_path / source.name])
    before = (book / "_config.yml").read_text(encoding="utf-8")
    assert main(["launch", "--repository", "https://gitlab.com/x/y"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "gitlab.com/x/y" in err and "Traceback" not in err
    assert (book / "_config.yml").read_text(encoding="utf-8") == before
    assert main(["launch", "--repository", REPOSITORY]) == 0
    assert yaml.safe_load((book / "_config.yml").read_text(encoding="utf-8"))["repository"]["url"] == REPOSITORY
    assert launching.cells_repositories([tmp_path / source.name]) == {REPOSITORY}
    assert main(["launch"]) == 0 and capsys.readouterr().out.strip().endswith("nothing changed")
