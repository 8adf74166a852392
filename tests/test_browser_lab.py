"""Every chapter's explorer in a real JupyterLab, driven by headless Chromium like a student would.

A ``jupyter lab`` server runs on 127.0.0.1 with a token, in a temporary root, with its home, config and
data folders under pytest's tmp dir.  One notebook holds an import cell and one cell per chapter with an
explorer (:data:`companion.tools.precompute.EXPLORERS`, which builds each explorer as its notebook does); it is
opened once, in one kernel, as a student would open a notebook with several panels.  Each chapter's test runs
its cell, moves a slider with the keyboard and checks that the explorer's plot is redrawn, that no "Error
displaying widget" appears and that the browser console shows no new error; for ch07 it also moves onto a
value of the committed grid and checks that the precomputed picture is shown.  A screenshot of each is kept.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from browser_support import PageLog, chromium_browser, free_port, isolated_env, require_chromium

from companion.tools import precompute

EXPLORER_NOTEBOOKS = tuple(sorted(precompute.EXPLORERS))
TOKEN = "companion-browser-test"
KERNEL_IDLE = re.compile(r"ipykernel\) \| Idle")
LAB_SETTINGS = {  # no network look-ups, and every cell kept in the page (no virtual scrolling)
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
}


def explorers_notebook(folder: Path) -> Path:
    """A notebook whose cell 0 imports the explorers and whose cell i + 1 builds and shows the i-th of
    :data:`EXPLORER_NOTEBOOKS` exactly as :data:`precompute.EXPLORERS` does."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("from companion.tools.precompute import EXPLORERS")]
    nb.cells += [nbformat.v4.new_code_cell(f"explorer = EXPLORERS[{slug!r}].build()\nexplorer")
                 for slug in EXPLORER_NOTEBOOKS]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = folder / "explorers.ipynb"
    nbformat.write(nb, path)
    return path


def _wait_for_server(url: str, process: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"jupyter lab exited with status {process.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/api/status?token={TOKEN}", timeout=5) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"jupyter lab did not answer on {url} within {timeout:.0f} s")


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A running JupyterLab (base URL) and its root folder, holding the explorers' notebook."""
    require_chromium()
    base = tmp_path_factory.mktemp("jupyterlab")
    root = base / "root"
    root.mkdir()
    explorers_notebook(root)
    env = isolated_env(base / "home")
    env.pop("MPLBACKEND", None)  # conftest's Agg would leave the kernel without the inline backend: no plots
    for name, values in LAB_SETTINGS.items():
        path = Path(env["JUPYTER_CONFIG_DIR"]) / "lab" / "user-settings" / f"{name}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values), encoding="utf-8")
    port = free_port()
    log = (base / "jupyterlab.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ip=127.0.0.1", f"--port={port}",
         f"--ServerApp.token={TOKEN}", f"--ServerApp.root_dir={root}", "--ServerApp.port_retries=0",
         "--LabApp.news_url="],
        cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_for_server(url, process)
        yield url, root
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


@pytest.fixture(scope="module")
def browser(lab: tuple[str, Path]) -> Iterator[Any]:
    with chromium_browser() as browser:
        yield browser


def _run_cell(tab: Any, index: int, timeout_ms: float) -> Any:
    """Run notebook cell ``index`` (click its prompt, Control+Enter) and wait until it has finished.

    The prompt reads "[*]" while the cell runs and "[n]" once it is done (outputs were cleared before).
    """
    cell = tab.locator(".jp-Notebook .jp-Cell").nth(index)
    prompt = cell.locator(".jp-InputPrompt")
    prompt.scroll_into_view_if_needed()
    prompt.click()
    tab.keyboard.press("Control+Enter")
    tab.wait_for_function("el => /\\[\\d+\\]/.test(el.textContent)", arg=prompt.element_handle(), timeout=timeout_ms)
    return cell


@pytest.fixture(scope="module")
def notebook_tab(browser: Any, lab: tuple[str, Path]) -> Iterator[tuple[Any, PageLog]]:
    """The explorers' notebook, open in its own workspace with its kernel started and the import cell run."""
    url, root = lab
    tab = browser.new_page(viewport={"width": 1400, "height": 1000})
    log = PageLog(tab)
    tab.goto(f"{url}/lab/workspaces/explorers/tree/explorers.ipynb?reset&token={TOKEN}")
    # The execution indicator reads "idle" while the kernel is still starting; the status bar does not.
    tab.locator(".jp-StatusBar-TextItem", has_text=KERNEL_IDLE).wait_for(timeout=120_000)
    _run_cell(tab, 0, timeout_ms=180_000)
    yield tab, log
    tab.close()


def _show_explorer(tab: Any, slug: str) -> tuple[Any, Any]:
    """Run ``slug``'s cell of the explorers' notebook; its cell and its first slider (the plot is drawn)."""
    cell = _run_cell(tab, 1 + EXPLORER_NOTEBOOKS.index(slug), timeout_ms=180_000)
    slider = cell.locator(".jp-OutputArea-output .widget-slider").first
    slider.wait_for(timeout=60_000)
    cell.locator(".jp-OutputArea-output img").first.wait_for(timeout=120_000)
    return cell, slider


def _wait_for_new_plot(tab: Any, cell: Any, before: str | None) -> None:
    tab.wait_for_function(
        "([el, old]) => { const img = el.querySelector('.jp-OutputArea-output img');"
        " return img !== null && img.getAttribute('src') !== old; }",
        arg=[cell.element_handle(), before], timeout=120_000)


def _screenshot(tab: Any, cell: Any, tmp_path_factory: pytest.TempPathFactory, name: str) -> None:
    shots = tmp_path_factory.getbasetemp() / "screenshots" / "lab"
    shots.mkdir(parents=True, exist_ok=True)
    cell.scroll_into_view_if_needed()
    tab.screenshot(path=str(shots / f"{name}.png"))


@pytest.mark.parametrize("slug", EXPLORER_NOTEBOOKS)
def test_explorer_slider_redraws_its_plot(slug: str, notebook_tab: tuple[Any, PageLog],
                                          tmp_path_factory: pytest.TempPathFactory) -> None:
    """One key press on the first slider redraws the plot.  For ch07, four more take γ from its default 1.75
    to 2.0, a value of the committed grid: the last shows the committed picture at once, and says so."""
    tab, log = notebook_tab
    errors_before = len(log.errors)
    cell, slider = _show_explorer(tab, slug)
    handle = slider.locator(".noUi-handle").first
    at_max = handle.get_attribute("aria-valuenow") == handle.get_attribute("aria-valuemax")
    handle.focus()
    for _ in range(5 if slug == "ch07_phase_diagram" else 1):
        before = cell.locator(".jp-OutputArea-output img").first.get_attribute("src")
        tab.keyboard.press("ArrowLeft" if at_max else "ArrowRight")
        _wait_for_new_plot(tab, cell, before)
    if slug == "ch07_phase_diagram":
        cell.locator(".jp-OutputArea-output", has_text="precomputed picture (seed 0, quick profile)").first.wait_for(
            timeout=60_000)
    _screenshot(tab, cell, tmp_path_factory, slug)
    assert "Error displaying widget" not in cell.inner_text()
    assert not log.errors[errors_before:], f"{slug}: " + "\n".join(log.errors[errors_before:])
